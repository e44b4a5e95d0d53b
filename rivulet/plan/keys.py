"""Where a key of one node's output comes from in its inputs: the routes of upqueries.

A partial reader keyed by ``story_id`` answers a miss by asking its parent for the rows with
that ``story_id``; the parent asks *its* inputs for the same rows, under whatever column
positions the key has there, down to state that holds them (Noria paper, section 4.2). This
module traces key columns through each kind of IR node, and decides from the trace which
stateful operators may hold partial state.

A stateful operator that drops updates for keys it does not hold (an aggregate, a top-k, a
distinct) may be partial only when every state below it that could hold its rows is keyed
by the *same* values: then evicting a key from it evicts exactly that key below, and no
descendant ever waits for an update it dropped. Where the key changes on the way (a join
looked up by a column that is not its join key), the operators above the change must be full.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rivulet.plan import ir

Columns = tuple[int, ...]


@dataclass(frozen=True)
class Demand:
    """What the nodes below need to provide to one node.

    ``columns``: the columns of this node's output that upqueries will name (``None``: no
    upquery comes this way; the node's whole output is consumed). ``partial``: whether
    stateful operators here may keep only the keys that were asked for. ``reason`` says,
    for ``explain``, why they may not.
    """

    columns: Columns | None
    partial: bool
    reason: str = ""


NONE = Demand(None, False, "its output is consumed whole")


@dataclass(frozen=True)
class JoinRoute:
    """How a join answers an upquery on some of its output columns.

    ``side`` is ``"both"`` when the columns are the join key (both inputs are asked by the
    key), else the one input that holds all the columns, with ``columns`` their positions
    in that input.
    """

    side: Literal["both", "left", "right"]
    columns: Columns


def trace_join(columns: Columns, left_arity: int, left_keys: Columns, right_keys: Columns,
               kind: str) -> JoinRoute | None:
    """The route of an upquery on ``columns`` of a join's output, or ``None`` if the
    columns come from both inputs in a way no single lookup can serve.

    A right join-key column stands for its left counterpart and vice versa: rows that
    match agree on them, and a key with a NULL is never looked up.
    """
    left_of = {left_arity + r: lk for lk, r in zip(left_keys, right_keys)}
    right_of = {lk: r for lk, r in zip(left_keys, right_keys)}
    as_left = [c if c < left_arity else left_of.get(c) for c in columns]
    if None not in as_left:
        cols = tuple(c for c in as_left if c is not None)  # every one of them
        if cols == left_keys:
            return JoinRoute("both", cols)
        return JoinRoute("left", cols)
    as_right = [c - left_arity if c >= left_arity else right_of.get(c) for c in columns]
    if None not in as_right:
        cols = tuple(c for c in as_right if c is not None)  # every one of them
        if cols == right_keys:
            return JoinRoute("both", tuple(left_keys))
        return JoinRoute("right", cols)
    return None


#: Why the input of a range aggregate is held whole: a miss computes the aggregate over
#: the rows on one side of a bound, which no key of the rows below can look up.
RANGE_INPUT_HELD = "a range aggregate reads its input whole (a bound is no key to look up)"


def project_sources(exprs: tuple[ir.Expr, ...]) -> tuple[int | None, ...]:
    """For each output column of a projection, the input column it copies (or ``None``)."""
    return tuple(e.index if isinstance(e, ir.Col) else None for e in exprs)


def trace(node: ir.Node, demand: Demand) -> list[Demand] | str:
    """The demand on each input of ``node``, or why ``demand.columns`` cannot be traced.

    Stateful operators are traced as if partial; the builder decides whether they are.
    """
    cols = demand.columns
    if cols is None:
        return [demand for _ in node.inputs()]
    if isinstance(node, (ir.Filter, ir.Distinct)):
        return [demand]
    if isinstance(node, ir.Union):
        return [demand for _ in node.branches]
    if isinstance(node, ir.SetOp):
        return [demand, demand]
    if isinstance(node, ir.Project):
        sources = project_sources(node.exprs)
        traced = [sources[c] for c in cols]
        if None in traced:
            return f"key column {node.columns[cols[traced.index(None)]].name!r} is computed"
        return [Demand(tuple(c for c in traced if c is not None), demand.partial, demand.reason)]
    if isinstance(node, ir.Join):
        return _trace_join(node, demand)
    if isinstance(node, ir.Aggregate):
        if any(c >= len(node.group_by) for c in cols):
            return "key includes an aggregate value"
        return [Demand(tuple(node.group_by[c] for c in cols), demand.partial, demand.reason)]
    if isinstance(node, ir.TopK):
        if not node.group_by or not set(cols) <= set(node.group_by):
            return "key does not determine whole top-k groups"
        return [demand]
    if isinstance(node, ir.RangeAggregate):
        if cols != node.key_columns:
            return "a range aggregate is keyed by its parameters' values only"
        return [Demand(None, False, RANGE_INPUT_HELD)]
    if isinstance(node, ir.OneRow):
        return []  # a source: nothing below
    raise TypeError(f"cannot trace keys through {type(node).__name__}")


def _trace_join(node: ir.Join, demand: Demand) -> list[Demand] | str:
    route = trace_join(demand.columns or (), node.left.arity, node.left_keys, node.right_keys,
                       node.kind)
    if route is None:
        return "key columns come from both sides of a join"
    if route.side == "both":
        return [Demand(node.left_keys, demand.partial, demand.reason),
                Demand(node.right_keys, demand.partial, demand.reason)]
    # Looked up by other columns, the join still probes each side by its join key when the
    # other side changes: those lookups are keyed differently, so the operators below must
    # hold every key (see the module docstring).
    why = "the join above is read by a key other than its join key"
    if route.side == "left":
        return [Demand(route.columns, False, why), Demand(node.right_keys, False, why)]
    return [Demand(node.left_keys, False, why), Demand(route.columns, False, why)]


def partial_possible(node: ir.Node, columns: Columns) -> str | None:
    """Why a stateful ``node`` cannot keep state partial on ``columns`` (``None``: it can)."""
    if isinstance(node, ir.RangeAggregate) and columns != node.key_columns:
        return "a range aggregate is keyed by its parameters' values only"
    if isinstance(node, ir.Aggregate):
        if not node.group_by:
            return "an aggregate over all rows has no key to be partial on"
        if any(c >= len(node.group_by) for c in columns):
            return "key includes an aggregate value"
    if isinstance(node, ir.SetOp):
        return f"{node.op.upper()} keeps both inputs' counts of every row"
    if isinstance(node, ir.TopK):
        if not node.group_by:
            return "a top-k over all rows needs every row"
        if not set(columns) <= set(node.group_by):
            return "key does not determine whole top-k groups"
    return None


def routable(node: ir.Node, demand: Demand) -> str | None:
    """Why upqueries on ``demand.columns`` cannot reach state below ``node`` (``None``: they
    can). A stateful operator that cannot be partial on the key answers from full state, so
    only stateless operators can block a route."""
    if demand.columns is None or isinstance(node, ir.Scan):
        return None
    stateful = isinstance(node, (ir.Aggregate, ir.RangeAggregate, ir.TopK, ir.Distinct,
                                 ir.SetOp))
    if stateful and partial_possible(node, demand.columns) is not None:
        return None
    traced = trace(node, demand)
    if isinstance(traced, str):
        return None if stateful else traced
    for side, (child, child_demand) in enumerate(zip(node.inputs(), traced)):
        why = routable(child, child_demand)
        if why is not None and not _full_join_side(node, side, child_demand):
            return why
    return None


def _full_join_side(node: ir.Node, side: int, demand: Demand) -> bool:
    """Whether ``demand`` is a join's on one side's own join keys: where no upquery can
    fill that side's index (its keys are computed below), the builder keeps the index full
    (``_full_join_sides``), and the join reads it without asking below."""
    if not isinstance(node, ir.Join):
        return False
    return demand.columns == (node.left_keys if side == 0 else node.right_keys)


def source_columns(node: ir.Node, columns: Columns) -> tuple[ir.Scan, Columns] | None:
    """A base table that upqueries on ``columns`` of ``node`` look up, and its columns
    there (the left one where a join asks both inputs by its key); None when the key
    cannot be traced. What the planner's statistics are read from."""
    while not isinstance(node, ir.Scan):
        if isinstance(node, ir.Join):
            route = trace_join(columns, node.left.arity, node.left_keys, node.right_keys,
                               node.kind)
            if route is None:
                return None
            node = node.right if route.side == "right" else node.left
            columns = route.columns
            continue
        traced = trace(node, Demand(columns, True))
        if isinstance(traced, str) or not traced or traced[0].columns is None:
            return None
        node, columns = node.inputs()[0], traced[0].columns
    return node, columns
