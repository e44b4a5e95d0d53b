"""IR plans to dataflow nodes, reusing every node an identical sub-plan already built.

A view is built from its plan as ``rivulet.plan.optimize.optimize`` makes it, the plan
the Spark compiler runs too.

The IR is frozen and hashable, so a sub-plan *is* its signature: building a view looks up
each IR node, bottom-up, and creates only what is new. Two views that share a join or an
aggregate share the operator and its state (docs/design.md, "Live change").

Building also decides which state is partial (``rivulet.plan.keys``): the view's key is
traced down the plan as a :class:`~rivulet.plan.keys.Demand`; a stateful operator keeps
partial state when the key reaches it unchanged, else full state. A stateful node's
signature includes the key it is partial on; a full copy serves any demand, and is reused
whenever one exists. Base tables get a storage index for every key an upquery reaches them by.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rivulet import values as F
from rivulet.dataflow.compile import predicate_function, row_function
from rivulet.dataflow.graph import Graph
from rivulet.dataflow.ops.aggregate import Aggregate
from rivulet.dataflow.ops.base import Base, NodeId, Operator, StatefulOperator
from rivulet.dataflow.ops.distinct import Distinct
from rivulet.dataflow.ops.filter import Filter
from rivulet.dataflow.ops.join import Join
from rivulet.dataflow.ops.one_row import OneRow
from rivulet.dataflow.ops.project import Project
from rivulet.dataflow.ops.range_aggregate import RangeAggregate
from rivulet.dataflow.ops.reader import Reader
from rivulet.dataflow.ops.setop import SetOp
from rivulet.dataflow.ops.topk import TopK
from rivulet.dataflow.ops.union import Union
from rivulet.plan import ir, keys
from rivulet.plan.expressions import refuse_join_keys
from rivulet.plan.keys import Demand
from rivulet.plan.optimize import optimize
from rivulet.state.reader import KeyedReader, RangeReader
from rivulet.values.schema import ENUM, single_text

Row = tuple
Columns = tuple[int, ...]
STATEFUL = (ir.Aggregate, ir.RangeAggregate, ir.TopK, ir.Distinct, ir.SetOp)
#: Rows a full top-k keeps beyond its k at least, so that deletes seldom empty its prefix.
TOPK_SLACK = 16
#: A reader of ``a = ? AND b = ?`` is keyed by ``a`` alone when ``a``'s base table has at
#: most this many rows per value of it on average, and ``b`` at least
#: :data:`NARROW_MIN_VALUES` distinct values (:meth:`Builder._narrowed`).
NARROW_ROWS_LIMIT = 32.0
NARROW_MIN_VALUES = 16


def in_list_prefix(plan: ir.ViewPlan) -> Columns:
    """The key a partial reader of an ``IN (?, ...)`` view is filled by: its equality
    parameters without the IN column (empty when the list is the only parameter).

    Keyed by every parameter, such a reader holds one entry per (prefix, listed value)
    pair. An application reads those in lists that change from page to page ("which of
    these 25 stories did this user vote on"), so nearly every pair is read once, misses,
    and is filled empty: a user's first page fills 25 holes and the next page 25 others.
    Keyed by the prefix, one upquery fills everything the user has (rows the lists will
    pick from again) and no pair without rows takes an entry. The cost is that a prefix
    with very many rows is held whole (and grouped by IN value, :func:`rows_by`, when
    read after a change).

    None for a range view: its reader is keyed by the whole key (``BuiltView.listed``
    is for keyed readers only), and the demand traced below must be the key the reader
    fills by, or state below would be partial on (and a join routed by) the prefix
    while upqueries come on the whole key."""
    if (not plan.in_list or len(plan.key) < 2 or plan.range_column is not None
            or plan.implicit_group):
        return ()
    return plan.key[:-1]


def narrowed_keys(plan: ir.ViewPlan) -> list[Columns]:
    """The keys a partial reader of a view with several scalar equality parameters (``a
    = ? AND b = ?``) could be filled by instead of its whole key: the key without one of
    its columns. None for other views (an IN view's is :func:`in_list_prefix`; a range or
    an implicit group keeps its key)."""
    key = plan.key
    if (len(key) < 2 or plan.in_list or plan.range_column is not None
            or plan.implicit_group or plan.alternatives is not None):
        return []  # (an OR's alternatives: each read names every key column)
    return [key[:d] + key[d + 1:] for d in range(len(key))]


def sort_key_function(order: tuple[ir.SortKey, ...],
                      tie_break: int | None = None) -> Callable[[Row], Any]:
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
    #: The position in the plan's key of the one column the reader is *not* keyed by
    #: (an IN view's list, :func:`in_list_prefix`, or the column left out by
    #: :meth:`Builder.root_demand`), None when it is keyed by the whole key. Its cached
    #: answer under a key is then the rows by their value in that column (:func:`rows_by`),
    #: and a read keeps the rows of the values it asks for.
    listed: int | None = None

    @property
    def keyed_by_prefix(self) -> bool:
        """Whether the reader is keyed by part of the plan's key (see :attr:`listed`)."""
        return self.listed is not None

    def reader_key(self, key: tuple) -> tuple:
        """A key of the plan's (all its values, in order) as the reader holds it."""
        d = self.listed
        return key if d is None else key[:d] + key[d + 1:]


@dataclass
class _Build:
    """Bookkeeping of one view's build."""

    used: set[NodeId] = field(default_factory=set)
    ids: dict[ir.Node, NodeId] = field(default_factory=dict)


class Builder:
    def __init__(self, graph: Graph, ensure_index: Callable[[str, Columns], None] | None = None,
                 *, reuse: bool = True,
                 value_counts: Callable[[str, tuple[str, ...]], tuple[int, int] | None]
                 | None = None,
                 views: Callable[[], Iterable[ir.ViewPlan]] | None = None) -> None:
        self.graph = graph
        #: Whether a view reuses the operators (and state) other views already built; off
        #: only to measure what sharing saves.
        self.reuse = reuse
        self.signatures: dict[tuple, NodeId] = {}
        #: Creates a storage index on a base table's columns (upqueries look rows up by them).
        self.ensure_index = ensure_index or (lambda table, columns: None)
        #: Statistics: a base table's rows with values in some of its columns, and the
        #: distinct values there (None: not known, as for an empty table).
        self.value_counts = value_counts or (lambda table, columns: None)
        #: The program's views as planned (the optimizer's ``views`` option: which
        #: aggregates views without a key hold in full, see rivulet/plan/eager.py).
        self.views = views or (lambda: ())

    def build_view(self, plan: ir.ViewPlan) -> BuiltView:
        """The view's operators and reader, built from ``plan`` optimized
        (rivulet/plan/optimize.py; a plan optimized already is built as it is). The
        BuiltView keeps the plan as built."""
        plan = optimize(plan, views=self.views())
        build = _Build()
        demand = self.root_demand(plan)
        listed = next((d for d in range(len(plan.key))
                       if plan.key[:d] + plan.key[d + 1:] == demand.columns), None)
        try:
            root, sources = self._node(plan.root, demand, build)
            finish = finisher(plan)
            # A view without an equality key is read whole: its reader is one hole, filled
            # on the first read and evicted as a unit, so a view nobody reads costs nothing.
            partial = demand.partial or (self.graph.partial and not plan.key)
            if plan.range_column is not None:
                state: KeyedReader | RangeReader = RangeReader(
                    plan.key, plan.range_column, partial=partial)
            elif listed is not None:
                # keyed by part of the key: its cached answer under a key is the rows by
                # their value in the rest, which a read picks its values from
                assert demand.columns is not None  # the key but its listed column
                state = KeyedReader(demand.columns, rows_by(plan.key[listed]), partial=partial)
            else:
                state = KeyedReader(plan.key, finish, partial=partial)
            reader = self.graph.add_node(Reader(root, state, plan.name), full_reason=demand.reason)
            for source in sources:
                self.graph.add_dependent(source, reader, state)
        except BaseException:
            self._collect_garbage()  # nodes this build added serve no view: drop them
            raise
        build.used.add(reader)
        for node in build.used:
            self.graph.nodes[node].users.add(plan.name)
        return BuiltView(plan, root, reader, state, finish, self._default_rows(plan, build),
                         build.used, listed if isinstance(state, KeyedReader) else None)

    def root_demand(self, plan: ir.ViewPlan) -> Demand:
        """What the view's reader asks of the plan: its key, partial if the key can be
        traced.

        A partial ``col = ? AND x IN (?, ...)`` view is keyed by its equality parameters
        alone when they can be traced (:func:`in_list_prefix`): its reader holds all the
        rows of ``col = ?`` and a read keeps those whose ``x`` is in the list.

        A view keyed by its range parameters' values (``ViewPlan.bounds_keyed``) is
        partial whatever the graph's setting: those values are infinitely many, and its
        range aggregate holds only those read."""
        if plan.bounds_keyed:
            return Demand(plan.key, True)
        if not self.graph.partial:
            return Demand(None, False, "partial state is off")
        if not plan.key:
            return Demand(None, False, "the view has no equality parameter to key it by")
        prefix = in_list_prefix(plan)
        if prefix and keys.routable(plan.root, Demand(prefix, True)) is None:
            return Demand(prefix, True)
        demand = Demand(plan.key, True)
        why = keys.routable(plan.root, demand)
        if why is not None:
            return Demand(None, False, why)
        return self._narrowed(plan) or demand

    def _narrowed(self, plan: ir.ViewPlan) -> Demand | None:
        """The demand of a reader of ``a = ? AND b = ?`` keyed by ``a`` alone, when the
        statistics say ``a`` has few rows (:data:`NARROW_ROWS_LIMIT` per value at most)
        and ``b`` many values (:data:`NARROW_MIN_VALUES` at least); by the ``a`` with the
        fewest rows.

        Keyed by both, a reader holds one entry per pair. When the pairs an application
        reads rarely repeat while one of the values does ("this user's votes on this
        story's comments": a user reads many stories, a story is read by many users),
        nearly every read misses. Keyed by one of them, a fill reads that value's few rows
        and later pairs with it are hits. Which of the values repeats is not known at plan
        time; the fewest rows per value bounds what a fill costs. A ``b`` of few values (a
        flag, ``is_deleted = 0``) makes few pairs: left in the key, it costs no misses,
        while a read of a narrowed reader filters and orders its rows every time."""
        best: tuple[float, Columns] | None = None
        counted: dict[Columns, tuple[int, int] | None] = {}  # (a pair's columns count twice)
        for prefix in narrowed_keys(plan):
            if keys.routable(plan.root, Demand(prefix, True)) is not None:
                continue
            rest = tuple(c for c in plan.key if c not in prefix)
            if not rest:
                continue  # (the same column twice)
            for columns in (prefix, rest):
                if columns not in counted:
                    counted[columns] = self._counts(plan, columns)
            kept, dropped = counted[prefix], counted[rest]
            if kept is None or dropped is None or dropped[1] < NARROW_MIN_VALUES:
                continue
            rows = kept[0] / kept[1]
            if rows <= NARROW_ROWS_LIMIT and (best is None or rows < best[0]):
                best = (rows, prefix)
        if best is None:
            return None
        return Demand(best[1], True)

    def _counts(self, plan: ir.ViewPlan, columns: Columns) -> tuple[int, int] | None:
        """:attr:`value_counts` of the base table columns that upqueries on ``columns``
        of the view's root look up."""
        source = keys.source_columns(plan.root, columns)
        if source is None:
            return None
        scan, traced = source
        return self.value_counts(scan.table, tuple(scan.columns[c].name for c in traced))

    def _default_rows(self, plan: ir.ViewPlan,
                      build: _Build) -> Callable[[Any, bool], list[Row]] | None:
        if not plan.implicit_group:
            return None
        aggregate = plan.root
        while not isinstance(aggregate, ir.Aggregate):
            aggregate = aggregate.inputs()[0]
        op = self.graph.nodes[build.ids[aggregate]].op
        assert isinstance(op, Aggregate)
        groups = op.groups
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

    def _node(self, node: ir.Node, demand: Demand, build: _Build) -> tuple[NodeId, list[NodeId]]:
        """The graph node for ``node`` under ``demand``, and the partial stateful nodes
        below it whose keys reach it unchanged (its states must be their dependents)."""
        if isinstance(node, ir.Scan):
            return self._scan(node, demand, build), []
        partial_key, why = self._partial_key(node, demand)
        if isinstance(node, STATEFUL) and partial_key is None:
            full = self._existing((node, "full"))
            if full is not None:
                return self._reuse(full, node, build), []
            child_demands = [Demand(None, False, why) for _ in node.inputs()]
        elif isinstance(node, STATEFUL):
            full = self._existing((node, "full"))
            if full is not None:
                return self._reuse(full, node, build), []  # full state serves any key
            child_demands = keys.trace(node, demand)  # type: ignore[assignment]
        else:
            traced = keys.trace(node, demand)
            child_demands = ([keys.NONE for _ in node.inputs()] if isinstance(traced, str)
                             else traced)
            if isinstance(node, ir.Join):
                child_demands = [
                    Demand(d.columns, False, "the join key on this side is computed") if full else d
                    for d, full in zip(child_demands, self._full_join_sides(node))
                ]
        children = [self._node(c, d, build) for c, d in zip(node.inputs(), child_demands)]
        if isinstance(node, ir.Join) and self.graph.partial:
            self._index_route(node.left, node.left_keys)
            self._index_route(node.right, node.right_keys)
        parents = tuple(c for c, _ in children)
        signature = (node, "full") if isinstance(node, STATEFUL) and partial_key is None \
            else (node, parents, partial_key)
        found = self._existing(signature)
        if found is not None:
            node_id = self._reuse(found, node, build)
        else:
            op = self._operator(node, list(parents), partial_key)
            node_id = self.graph.add_node(op, full_reason=why)
            self.signatures[signature] = node_id
            build.used.add(node_id)
            build.ids[node] = node_id
        return node_id, self._register(node, node_id, partial_key, children)

    def _existing(self, signature: tuple) -> NodeId | None:
        """The live node built for ``signature``, if reuse is on."""
        found = self.signatures.get(signature) if self.reuse else None
        return found if found is not None and found in self.graph.nodes else None

    def _index_route(self, node: ir.Node, columns: Columns) -> None:
        """Storage indexes for the upqueries that fill a join's index on ``columns`` of
        ``node``: down to the base tables, or to state that answers them itself."""
        if isinstance(node, ir.Scan):
            self._scan_index(node, columns)
            return
        if isinstance(node, STATEFUL):
            return  # it answers from its own state (or by its own route, if partial)
        traced = keys.trace(node, Demand(columns, False))
        if isinstance(traced, str):
            return  # the index is full (see _full_join_sides): no upquery fills it
        for child, demand in zip(node.inputs(), traced):
            if demand.columns is not None:
                self._index_route(child, demand.columns)

    def _full_join_sides(self, node: ir.Join) -> tuple[bool, bool]:
        """Sides of a join whose index upqueries cannot fill (the key is computed below),
        so it must be complete. A join on no key (every left row meets every right row)
        reads each side whole: its indexes hold every row, under the one empty key."""
        if not self.graph.partial:
            return (False, False)
        if not node.left_keys:
            return (True, True)
        return (
            keys.routable(node.left, Demand(node.left_keys, True)) is not None,
            keys.routable(node.right, Demand(node.right_keys, True)) is not None,
        )

    def _scan(self, node: ir.Scan, demand: Demand, build: _Build) -> NodeId:
        # A scan is its table version's base node; it adds no node of its own.
        base = self.graph.base_node(node.table, node.version)
        if demand.columns is not None:
            self._scan_index(node, demand.columns)
        build.used.add(base)
        return base

    def _scan_index(self, node: ir.Scan, columns: Columns) -> None:
        """A storage index for upqueries on ``columns`` of a scanned table version (whose
        positions storage knows in the newest version). None for no columns: the whole
        table is read."""
        if not columns:
            return
        op = self.graph.nodes[self.graph.base_node(node.table, node.version)].op
        assert isinstance(op, Base)
        self.ensure_index(node.table, op.newest_columns(columns))

    def _partial_key(self, node: ir.Node, demand: Demand) -> tuple[Columns | None, str]:
        """The key a stateful ``node`` keeps partial state on (``None``: full), and why not."""
        if not isinstance(node, STATEFUL):
            return None, ""
        if demand.columns is None or not demand.partial:
            return None, demand.reason or "its output is consumed whole"
        why = keys.partial_possible(node, demand.columns)
        if why is not None:
            return None, why
        return demand.columns, ""

    def _reuse(self, found: NodeId, node: ir.Node, build: _Build) -> NodeId:
        self._mark(found, build.used)
        self._record(node, found, build)
        return found

    def _record(self, node: ir.Node, node_id: NodeId, build: _Build) -> None:
        """Remember which graph node each IR node of a reused sub-plan is."""
        if node in build.ids:
            return
        build.ids[node] = node_id
        for child, parent in zip(node.inputs(), self.graph.nodes[node_id].op.parents):
            self._record(child, parent, build)

    def _register(self, node: ir.Node, node_id: NodeId, partial_key: Columns | None,
                  children: list[tuple[NodeId, list[NodeId]]]) -> list[NodeId]:
        """Make this node's states dependents of the partial nodes above whose keys reach
        them; returns those nodes (and this one, if partial) for the states below."""
        graph = self.graph
        op = graph.nodes[node_id].op
        sources = [s for _, below in children for s in below]
        if isinstance(node, STATEFUL):
            if partial_key is None:
                return []
            assert isinstance(op, StatefulOperator)
            for source in sources:
                graph.add_dependent(source, node_id, op)
            return sources + [node_id]
        if isinstance(node, ir.Join):
            assert isinstance(op, Join)
            (left, left_sources), (right, right_sources) = children
            for source in left_sources:
                graph.add_dependent(source, left, op.left_state)
            for source in right_sources:
                graph.add_dependent(source, right, op.right_state)
        return sources

    def _mark(self, node: NodeId, used: set[NodeId]) -> None:
        """A reused node and everything above it serve one more view."""
        if node in used:
            return
        used.add(node)
        for parent in set(self.graph.nodes[node].op.parents):
            self._mark(parent, used)

    def _operator(self, node: ir.Node, parents: list[NodeId], partial: Columns | None) -> Operator:
        kinds = [c.kind for c in node.inputs()[0].columns] if node.inputs() else []
        nullable = [c.nullable for c in node.inputs()[0].columns] if node.inputs() else []
        if isinstance(node, ir.Filter):
            return Filter(parents[0], predicate_function(node.predicate, kinds, nullable),
                          _text(node.predicate))
        if isinstance(node, ir.Project):
            return Project(parents[0], row_function(node.exprs, kinds, nullable),
                           ", ".join(_text(e) for e in node.exprs),
                           keys.project_sources(node.exprs))
        if isinstance(node, ir.Join):
            joined = node.columns
            refuse_join_keys([(node.left.columns[a].kind, node.right.columns[b].kind)
                              for a, b in zip(node.left_keys, node.right_keys)])
            residual = None
            if node.residual is not None:
                residual = predicate_function(
                    node.residual, [c.kind for c in joined], [c.nullable for c in joined]
                )
            text = ", ".join(f"#{a} = #{b}" for a, b in zip(node.left_keys, node.right_keys))
            return Join(parents[0], parents[1], node.left_keys, node.right_keys, kind=node.kind,
                        left_arity=node.left.arity, right_arity=node.right.arity,
                        residual=residual, text=text, full=self._full_join_sides(node))
        if isinstance(node, ir.Aggregate):
            return Aggregate(parents[0], node.group_by, node.aggs, partial=partial,
                             result_kinds=[c.kind for c in node.columns[len(node.group_by):]])
        if isinstance(node, ir.RangeAggregate):
            if partial != node.key_columns:  # (the planner keys the view by them)
                raise TypeError("a range aggregate is read by its parameters' values only")
            return RangeAggregate(parents[0], node, [c.kind for c in node.columns[
                len(node.group_by):len(node.group_by) + len(node.aggs)]])
        if isinstance(node, ir.Distinct):
            return Distinct(parents[0], node.arity, partial=partial)
        if isinstance(node, ir.Union):
            return Union(tuple(parents))
        if isinstance(node, ir.SetOp):
            return SetOp(parents[0], parents[1], node.arity, node.op, node.all)
        if isinstance(node, ir.OneRow):
            return OneRow()
        if isinstance(node, ir.TopK):
            key = sort_key_function(node.order, tie_break=node.arity)
            order = ", ".join(f"#{k.column}{' DESC' if k.descending else ''}" for k in node.order)
            if partial is not None:  # partial groups are held whole (see ops/topk.py)
                return TopK(parents[0], node.group_by, key, node.k, order, partial=partial,
                            skip=node.skip)
            by_key = bool(node.group_by) and keys.routable(
                node.input, Demand(node.group_by, True)) is None
            if by_key:
                self._index_route(node.input, node.group_by)
            return TopK(parents[0], node.group_by, key, node.k, order,
                        bound=max(2 * node.k, node.k + TOPK_SLACK), refill_by_key=by_key,
                        skip=node.skip)
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

    shown = [(i, str if c.kind == ENUM else single_text)
             for i, c in enumerate(plan.root.columns[:visible])
             if c.kind == ENUM or c.single or (c.column is not None and c.column.single)]
    if not shown:
        return finish

    def as_shown(rows: list[Row]) -> tuple[Row, ...]:
        """The answer as MySQL's driver hands it over: ENUM columns as plain text (only the
        dataflow keeps the member's index), FLOAT columns as MySQL shows a single-precision
        value (0.1, where the dataflow computes with 0.10000000149011612)."""
        out = []
        for row in finish(rows):
            values = list(row)
            for i, show in shown:
                if values[i] is not None:
                    values[i] = show(values[i])
            out.append(tuple(values))
        return tuple(out)

    return as_shown


def rows_by(column: int) -> Callable[[list[Row]], Any]:
    """The answer a reader keyed by an IN view's equality values caches under a key: its
    rows grouped by their value in the IN list's column (a read of a list then costs one
    dict lookup per listed value, not a pass over every row of the key)."""

    def group(rows: list[Row]) -> dict[Any, list[Row]]:
        out: dict[Any, list[Row]] = {}
        for row in rows:
            value = row[column]
            listed = out.get(value)
            if listed is None:
                out[value] = [row]
            else:
                listed.append(row)
        return out

    return group


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
