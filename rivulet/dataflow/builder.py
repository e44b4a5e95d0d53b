"""IR plans to dataflow nodes, reusing every node an identical sub-plan already built.

The IR is frozen and hashable, so a sub-plan *is* its signature: building a view looks up
each IR node, bottom-up, in ``signatures`` and creates only what is new. Two views that
share a join or an aggregate share the operator and its state (design.md, "Live change").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from rivulet.dataflow import functions as F
from rivulet.dataflow.compile import predicate_function, row_function
from rivulet.dataflow.graph import Graph
from rivulet.dataflow.ops.aggregate import Aggregate
from rivulet.dataflow.ops.base import NodeId, Operator
from rivulet.dataflow.ops.distinct import Distinct
from rivulet.dataflow.ops.filter import Filter
from rivulet.dataflow.ops.join import Join
from rivulet.dataflow.ops.project import Project
from rivulet.dataflow.ops.reader import Reader
from rivulet.dataflow.ops.topk import TopK
from rivulet.dataflow.ops.union import Union
from rivulet.plan import ir
from rivulet.state.reader import KeyedReader, RangeReader

Row = tuple


def sort_key_function(order: tuple[ir.SortKey, ...], tie_break: int | None = None) -> Callable[[Row], Any]:
    """A key for ``sorted`` giving MySQL's order (NULLs first ascending, last descending).

    With ``tie_break`` (the row width), rows equal on ``order`` are ordered by all their
    columns, so that a top-k cut is deterministic.
    """
    parts = [(k.column, F.desc_key if k.descending else F.sort_key) for k in order]
    if tie_break is not None:
        parts += [(i, F.sort_key) for i in range(tie_break)]
    if not parts:
        return lambda row: ()
    if len(parts) == 1:
        (col, fn), = parts
        return lambda row: fn(row[col])
    return lambda row: tuple(fn(row[col]) for col, fn in parts)


@dataclass
class BuiltView:
    """A view's place in the graph and what reading it needs."""

    plan: ir.ViewPlan
    root: NodeId
    reader_node: NodeId
    state: KeyedReader | RangeReader
    finish: Callable[[list[Row]], tuple[Row, ...]]
    default_rows: Callable[[Any, bool], list[Row]] | None
    nodes: set[NodeId] = field(default_factory=set)


class Builder:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.signatures: dict[ir.Node, NodeId] = {}

    def build_view(self, plan: ir.ViewPlan) -> BuiltView:
        used: set[NodeId] = set()
        self.graph.begin_migration()
        try:
            root = self._node(plan.root, used)
            finish = finisher(plan)
            if plan.range_column is not None:
                state: KeyedReader | RangeReader = RangeReader(plan.key, plan.range_column)
            else:
                state = KeyedReader(plan.key, finish)
            reader = self.graph.add_node(Reader(root, state, plan.name))
        except BaseException:
            self._collect_garbage()  # nodes this build added serve no view: drop them
            raise
        finally:
            self.graph.end_migration()
        used.add(reader)
        for node in used:
            self.graph.nodes[node].users.add(plan.name)
        return BuiltView(plan, root, reader, state, finish, self._default_rows(plan), used)

    def _default_rows(self, plan: ir.ViewPlan) -> Callable[[Any, bool], list[Row]] | None:
        if not plan.implicit_group:
            return None
        aggregate = plan.root
        while not isinstance(aggregate, ir.Aggregate):
            aggregate = aggregate.inputs()[0]
        groups = self.graph.nodes[self.signatures[aggregate]].op.groups  # type: ignore[attr-defined]
        return default_rows(plan, lambda key: key in groups)

    def drop_view(self, view: BuiltView) -> None:
        for node in view.nodes:
            if node in self.graph.nodes:
                self.graph.nodes[node].users.discard(view.plan.name)
        self._collect_garbage()

    def _collect_garbage(self) -> None:
        removed = set(self.graph.remove_unused())
        for signature, node in list(self.signatures.items()):
            if node in removed:
                del self.signatures[signature]

    # ..................................................................... nodes

    def _node(self, node: ir.Node, used: set[NodeId]) -> NodeId:
        if isinstance(node, ir.Scan):
            # A scan is its table's base node; it adds no node of its own.
            base = self.graph.bases.get(node.table.lower())
            if base is None:
                raise KeyError(f"no base node for table {node.table!r}")
            used.add(base)
            return base
        found = self.signatures.get(node)
        if found is not None and found in self.graph.nodes:
            self._mark(found, used)
            return found
        parents = [self._node(child, used) for child in node.inputs()]
        op = self._operator(node, parents)
        node_id = self.graph.add_node(op)
        self.signatures[node] = node_id
        used.add(node_id)
        return node_id

    def _mark(self, node: NodeId, used: set[NodeId]) -> None:
        """A reused node and everything above it serve one more view."""
        if node in used:
            return
        used.add(node)
        for parent in set(self.graph.nodes[node].op.parents):
            self._mark(parent, used)

    def _operator(self, node: ir.Node, parents: list[NodeId]) -> Operator:
        kinds = [c.kind for c in node.inputs()[0].columns] if node.inputs() else []
        nullable = [c.nullable for c in node.inputs()[0].columns] if node.inputs() else []
        if isinstance(node, ir.Filter):
            return Filter(parents[0], predicate_function(node.predicate, kinds, nullable),
                          _text(node.predicate))
        if isinstance(node, ir.Project):
            return Project(parents[0], row_function(node.exprs, kinds, nullable),
                           ", ".join(_text(e) for e in node.exprs))
        if isinstance(node, ir.Join):
            joined = node.columns
            residual = None
            if node.residual is not None:
                residual = predicate_function(
                    node.residual, [c.kind for c in joined], [c.nullable for c in joined]
                )
            keys = ", ".join(f"#{a} = #{b}" for a, b in zip(node.left_keys, node.right_keys))
            return Join(parents[0], parents[1], node.left_keys, node.right_keys, kind=node.kind,
                        right_arity=node.right.arity, residual=residual, text=keys)
        if isinstance(node, ir.Aggregate):
            return Aggregate(parents[0], node.group_by, node.aggs)
        if isinstance(node, ir.Distinct):
            return Distinct(parents[0])
        if isinstance(node, ir.Union):
            return Union(tuple(parents))
        if isinstance(node, ir.TopK):
            key = sort_key_function(node.order, tie_break=node.arity)
            order = ", ".join(f"#{k.column}{' DESC' if k.descending else ''}" for k in node.order)
            return TopK(parents[0], node.group_by, key, node.k, order)
        raise TypeError(f"no operator for {type(node).__name__}")


# --------------------------------------------------------------------------- reading


def finisher(plan: ir.ViewPlan) -> Callable[[list[Row]], tuple[Row, ...]]:
    """Turns the raw rows under a key into the answer: ordered, cut, hidden columns dropped."""
    visible = plan.visible
    width = plan.root.arity
    order_key = sort_key_function(plan.order) if plan.order else None
    start = plan.offset
    stop = None if plan.limit is None else plan.offset + plan.limit
    sliced = start != 0 or stop is not None
    distinct = plan.distinct_on_read

    def finish(rows: list[Row]) -> tuple[Row, ...]:
        if order_key is not None:
            rows.sort(key=order_key)
        if distinct:
            rows = list(dict.fromkeys(r[:visible] for r in rows))
            if sliced:
                rows = rows[start:stop]
            return tuple(rows)
        if sliced:
            rows = rows[start:stop]
        if visible != width:
            return tuple([r[:visible] for r in rows])
        return tuple(rows)

    return finish


def default_rows(
    plan: ir.ViewPlan, group_exists: Callable[[Any], bool]
) -> Callable[[Any, bool], list[Row]]:
    """For ``SELECT COUNT(*) ... WHERE k = ?``: the one row a key with no input rows answers.

    The parameter columns were made the aggregate's group keys, so an unseen key has no
    group; SQL still answers the aggregate over no rows. That row is computed by running
    the empty group's output up through the operators between the aggregate and the root.
    A key whose group exists but is absent from the reader was removed by HAVING: no row.
    """
    chain: list[ir.Node] = []
    node = plan.root
    while not isinstance(node, ir.Aggregate):
        chain.append(node)
        node = node.inputs()[0]
    aggregate = node
    empty = tuple(0 if a.fn == "count" else None for a in aggregate.aggs)
    steps: list[tuple[str, Callable[[Row], Any]]] = []
    for n in reversed(chain):
        kinds = [c.kind for c in n.inputs()[0].columns]
        nullable = [True] * len(kinds)
        if isinstance(n, ir.Project):
            steps.append(("project", row_function(n.exprs, kinds, nullable)))
        elif isinstance(n, ir.Filter):
            steps.append(("filter", predicate_function(n.predicate, kinds, nullable)))
    single = len(aggregate.group_by) == 1

    def rows_for(key: Any, matches_nothing: bool = False) -> list[Row]:
        if not matches_nothing and group_exists(key):
            return []
        row: Row = ((key,) if single else tuple(key)) + empty
        for step, fn in steps:
            if step == "project":
                row = fn(row)
            elif not fn(row):
                return []
        return [row]

    return rows_for


def _text(e: ir.Expr) -> str:
    if isinstance(e, ir.Col):
        return f"#{e.index}"
    if isinstance(e, ir.Lit):
        return repr(e.value)
    if isinstance(e, ir.Call):
        return f"{e.fn}({', '.join(_text(a) for a in e.args)})"
    return type(e).__name__
