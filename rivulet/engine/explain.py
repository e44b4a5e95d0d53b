"""``EXPLAIN`` of a view: its dataflow nodes and the state each keeps.

Used by ``rivulet explain VIEW`` and by the MySQL server's ``EXPLAIN``.
"""

from __future__ import annotations

from typing import Any

from rivulet.engine.database import Database
from rivulet.errors import RivuletError


def explain(db: Database, view: str) -> str:
    """The dataflow nodes behind ``view``, one per line, parents first, with the state each
    keeps: partial (and on which key) or full (and why it cannot be partial)."""
    built = db.built_view(view)
    if built is None:
        raise RivuletError(f"unknown view {view!r}")
    graph = db.graph
    lines = [f"view {built.plan.name}: {built.plan.sql}"]
    for node in sorted(built.nodes):
        entry = graph.nodes[node]
        parents = ", ".join(f"n{p}" for p in entry.op.parents) or _source(entry.op)
        users = sorted(entry.users, key=str.lower)
        shared = f"  (shared by {len(users)} views: {', '.join(users)})" if len(users) > 1 else ""
        line = f"  n{node}: {entry.op.describe()}  <- {parents}{shared}"
        lines.append(line + "".join(f"\n      {d}" for d in _state_of(entry)))
    return "\n".join(lines)


def _source(op: Any) -> str:
    """What feeds a node without parents: a table's writes, or nothing (the one row of a
    SELECT without FROM)."""
    from rivulet.dataflow.ops.one_row import OneRow

    return "nothing (a constant)" if isinstance(op, OneRow) else "writes"


def _state_of(entry: Any) -> list[str]:
    """What state a node keeps, for ``explain``."""
    from rivulet.dataflow.ops.reader import Reader

    op, out = entry.op, []
    state = op.state if isinstance(op, Reader) else op if op.stateful else None
    if state is not None:
        if state.partial:
            key = state.key_columns if isinstance(op, Reader) else op.partial_columns
            out.append(f"state: partial, keyed by {_columns(key)}" if key else
                       "state: partial, the whole view as one entry, filled by its first read")
        else:
            out.append(f"state: full ({entry.full_reason or 'partial state is off'})")
    for columns, index in entry.arrangements.items():
        kind = "cache (partial)" if index.partial else "full"
        out.append(f"index on {_columns(columns)}: {kind}, for joins")
    for columns in entry.full_indexes:
        out.append(f"index on {_columns(columns)}: full, for upqueries")
    return out


def _columns(columns: tuple[int, ...]) -> str:
    return "(" + ", ".join(f"#{c}" for c in columns) + ")"
