"""The running dataflow as a Graphviz drawing (``GET /graph``).

The drawing answers the questions an operator asks of a running program: which views
share which operators (a shared node's state serves several views at once, so evicting or
dropping it matters to all of them), and which state is partial (filled on demand by
upqueries, bounded by the memory limit) or full (and why). Node ids match ``rivulet
explain`` (``n3``), so the two can be read side by side.

Marks: base tables are cylinders; views are the reader nodes (rounded, blue); a dashed
border is partial state, a bold border full state, a thin solid one no state; shared nodes
are filled yellow and say by how many views.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rivulet.dataflow.ops.base import Base
from rivulet.dataflow.ops.reader import Reader
from rivulet.plan.ir import is_adhoc

if TYPE_CHECKING:
    from rivulet.dataflow.graph import GraphNode
    from rivulet.engine.database import Database

SHARED_FILL = "#ffe9a8"
VIEW_FILL = "#d7e9ff"
ADHOC_FILL = "#eeeeee"


class GraphvizMissing(RuntimeError):
    """SVG was asked for, but Graphviz's ``dot`` is not installed."""


@dataclass(frozen=True)
class NodeDrawing:
    """What the drawing says about one dataflow node."""

    id: int
    label: str
    shape: str
    style: tuple[str, ...]
    fill: str | None
    penwidth: float
    tooltip: str


def dataflow_dot(db: Database) -> str:
    """The whole dataflow graph of ``db`` in the dot language."""
    with db.graph_lock:  # one consistent picture: no migration or wave half-way
        sql_of = {b.reader_node: b.plan.sql for b in db.built_views()}
        drawings = [_drawing(node, sql_of.get(node.id, "")) for node in db.graph.nodes.values()]
        edges = sorted(
            (parent, node.id)
            for node in db.graph.nodes.values()
            for parent in set(node.op.parents)
        )
    lines = [
        "digraph rivulet {",
        '  graph [rankdir=TB, fontname="Helvetica", label="rivulet dataflow '
        f'(LSN {db.graph.lsn})", labelloc=t];',
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [color="#555555", arrowsize=0.6];',
    ]
    lines += [_node_line(d) for d in drawings]
    lines += [f"  n{a} -> n{b};" for a, b in edges]
    lines += _legend()
    lines.append("}")
    return "\n".join(lines) + "\n"


def _drawing(node: GraphNode, sql: str) -> NodeDrawing:
    op = node.op
    shared = len(node.users) > 1
    state = _state(node)
    lines: list[str]
    if isinstance(op, Base):
        lines, shape, fill = [f"n{node.id}: table {op.table}"], "cylinder", None
    elif isinstance(op, Reader):
        kind = "query" if is_adhoc(op.view) else "view"
        lines = [f"n{node.id}: {kind} {op.view}"]
        shape, fill = "box", ADHOC_FILL if kind == "query" else VIEW_FILL
    else:
        lines, shape, fill = [f"n{node.id}: {op.describe()}"], "box", None
    if state is not None:
        lines.append(state)
    lines += _indexes(node)
    if shared:
        lines.append(f"shared by {len(node.users)} views")
        fill = SHARED_FILL
    style = ["rounded"] if isinstance(op, Reader) else []
    if fill is not None:
        style.append("filled")
    partial = state is not None and state.startswith("partial")
    if partial:
        style.append("dashed")
    tooltip = sql or ", ".join(sorted(node.users))
    return NodeDrawing(node.id, "\n".join(lines), shape, tuple(style), fill,
                       2.0 if state is not None and not partial else 1.0, tooltip)


def _state(node: GraphNode) -> str | None:
    """``partial on (#0)``, ``full (why)``, or None for a node without state."""
    op: Any = node.op
    state = op.state if isinstance(op, Reader) else op if op.stateful else None
    if state is None:
        return None
    if state.partial:
        key = state.key_columns if isinstance(op, Reader) else op.partial_columns
        return f"partial on {_columns(key)}" if key else "partial (whole view, one entry)"
    return f"full ({node.full_reason or 'partial state is off'})"


def _indexes(node: GraphNode) -> list[str]:
    out = [f"join index {_columns(c)}: {'partial' if i.partial else 'full'}"
           for c, i in node.arrangements.items()]
    out += [f"upquery index {_columns(c)}: full" for c in node.full_indexes]
    return out


def _columns(columns: tuple[int, ...]) -> str:
    return "(" + ", ".join(f"#{c}" for c in columns) + ")"


def _node_line(d: NodeDrawing) -> str:
    attrs = [f"label={_quote(d.label)}", f"shape={d.shape}"]
    if d.style:
        attrs.append(f'style="{",".join(d.style)}"')
    if d.fill is not None:
        attrs.append(f'fillcolor="{d.fill}"')
    if d.penwidth != 1.0:
        attrs.append(f"penwidth={d.penwidth}")
    if d.tooltip:
        attrs.append(f"tooltip={_quote(d.tooltip)}")
    return f"  n{d.id} [{', '.join(attrs)}];"


def _legend() -> list[str]:
    return [
        "  subgraph cluster_legend {",
        '    label="legend"; fontsize=9; color="#bbbbbb";',
        '    legend_partial [label="partial state", shape=box, style=dashed, fontsize=9];',
        '    legend_full [label="full state", shape=box, penwidth=2.0, fontsize=9];',
        f'    legend_shared [label="shared by several views", shape=box, style=filled, '
        f'fillcolor="{SHARED_FILL}", fontsize=9];',
        f'    legend_view [label="view (reader)", shape=box, style="rounded,filled", '
        f'fillcolor="{VIEW_FILL}", fontsize=9];',
        "    legend_partial -> legend_full -> legend_shared -> legend_view [style=invis];",
        "  }",
    ]


def _quote(text: str) -> str:
    """A dot string literal: backslashes and quotes escaped, newlines as centred breaks."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\r", "").replace("\n", "\\n") + '"'


def dot_available() -> bool:
    return shutil.which("dot") is not None


def render_svg(dot: str, *, timeout: float = 30.0) -> bytes:
    """``dot`` rendered to SVG by Graphviz (raises :class:`GraphvizMissing` without it)."""
    program = shutil.which("dot")
    if program is None:
        raise GraphvizMissing(
            "SVG needs Graphviz's `dot`, which is not installed (e.g. `apt-get install "
            "graphviz`); GET /graph without format=svg returns the dot text"
        )
    done = subprocess.run([program, "-Tsvg"], input=dot.encode(), capture_output=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"dot failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    return done.stdout
