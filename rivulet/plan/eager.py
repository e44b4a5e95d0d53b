"""Eager aggregation: an aggregate over a join, computed on one join side before the join.

``SELECT s.id, s.title, COUNT(v.user_id) FROM s LEFT JOIN v ON s.id = v.story_id GROUP BY
s.id`` planned as written keeps one group per story holding every story column, and, for
upqueries by ``s.id``, an index from ``s.id`` to those groups: the aggregate's state is a
second copy of the stories table. When the groups are the rows of one side (the GROUP BY
holds that side's primary key) and the aggregates read only the other side, the aggregate
can run on the other side alone, grouped by its join key, and be joined afterwards::

    γ[s.*] f(v.x) (s ⟕ v)  =  π[s.*, fix(f)] (s ⟕ γ[v.story_id] f(v.x) (v))

The state is then ``(story_id, count)`` per story with votes; the story columns are read
from the table when needed. ``fix`` gives a story without votes what the original gives
it, the aggregate over one null-extended row: ``COUNT(col)`` 0, ``COUNT(*)`` 1 (a matched
story counts at least one row, so ``COALESCE(count, 1)`` is exact), other aggregates NULL.

When the GROUP BY is made of one side's columns but not its whole primary key, an inner
join still lets decomposable aggregates run in two steps (COUNT as a SUM of counts, SUM,
MIN, MAX), so a join looked up by a key of the other side reads one small row per join key
instead of every row under it::

    γ[g] count(*) (s ⋈ v)  =  γ[g] sum(c) (s ⋈ γ[v.story_id] count(*) AS c (v))

Both rewrites keep the aggregate's output columns and their order, so the rest of the plan
does not change. The pass is deterministic, and ``COUNT(col)`` of a NOT NULL column is
written ``COUNT(*)``, so the pushed aggregates of different views share one operator.

What is not rewritten (the plan is kept as written): a join with a residual ON condition,
a filter between the join and the aggregate, a LEFT JOIN whose aggregates read an
expression rather than a column (its value on the null-extended row would be needed),
join keys of different kinds or of floats (grouping and matching must agree on which
values are equal), DISTINCT aggregates and AVG in the two-step form, an aggregate without
GROUP BY (its one row over no input says COUNT 0, not a SUM of no counts), and a view
keyed by a column that is not the join key (see :func:`push_down`).

The rule (:func:`eager_aggregation`) is the first of rivulet/plan/optimize.py. It needs
the kept side of a per-row rewrite to be a table's ``Scan``, which carries the primary key,
and column pruning puts projections over scans. Predicate pushdown runs after it too, so a
WHERE condition between the join and the aggregate keeps the aggregate as written, as it
did when this rule ran in the planner (pushed below the join first, the condition would let
the rewrite run: exact too, but a change of plans that is not made here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from rivulet.plan import ir
from rivulet.plan.expressions import type_of
from rivulet.plan.prune import remap
from rivulet.values.schema import FLOAT, INT
from rivulet.values.types import number_type

#: The aggregate that combines partial results of each function in the two-step form.
COMBINE = {"count": "sum", "sum": "sum", "min": "min", "max": "max"}


def eager_aggregation(plan: ir.ViewPlan, views: Iterable[ir.ViewPlan] = ()) -> ir.ViewPlan:
    """``plan`` with each aggregate over a join computed below the join where that is
    exact (:func:`push_down`), inner aggregates first.

    The aggregate the reader's key reaches (through top-k, DISTINCT, filters and
    projections; not into a view read in FROM, which is rewritten as it is alone) is
    looked up by those columns; an implicit group's aggregate is kept as written (its
    empty-key row is built from it). ``views``: the program's other views as planned,
    which say which aggregates a view without a key already holds in full.

    >>> from rivulet.plan.catalog import Catalog
    >>> from rivulet.plan.describe import describe
    >>> catalog = Catalog.from_sql(
    ...     "CREATE TABLE s (id INT PRIMARY KEY, title TEXT)",
    ...     "CREATE TABLE v (uid INT NOT NULL, sid INT NOT NULL)")
    >>> plan = catalog.plan("SELECT s.id, s.title, COUNT(v.uid) AS n "
    ...                     "FROM s LEFT JOIN v ON s.id = v.sid GROUP BY s.id")
    >>> print(describe(plan))
    Project id, title, n := count(v.uid)
      Aggregate by id, title: count(uid)
        Project id, title, uid
          Join left on id = sid
            Scan s
            Scan v
    >>> print(describe(eager_aggregation(plan)))
    Project id, title, n := count(v.uid)
      Project id, title, count(v.uid) := COALESCE(count_0, 0)
        Join left on id = sid
          Scan s
          Aggregate by sid: count(*)
            Project sid
              Scan v
    """
    reached = _reached_by_key(plan)
    held = _held_full(views)
    done: dict[int, ir.Node] = {}

    def visit(node: ir.Node) -> ir.Node:
        if id(node) in done:
            return done[id(node)]
        out = ir.with_inputs(node, [visit(child) for child in node.inputs()])
        if isinstance(out, ir.Aggregate):
            keyed = reached[1] if reached is not None and reached[0] is node else None
            if keyed is None or not plan.implicit_group:
                out = push_down(out, keyed or (), held)
        done[id(node)] = out
        return out

    root = visit(plan.root)
    return plan if root is plan.root else replace(plan, root=root)


def _reached_by_key(plan: ir.ViewPlan) -> tuple[ir.Aggregate, tuple[int, ...]] | None:
    """The aggregate the reader's key columns reach unchanged, and which of its output
    columns they are there (its group columns; ``()`` when some are computed values: the
    aggregate is not partial on them either way)."""
    node, columns = plan.root, plan.key
    while columns:
        if isinstance(node, ir.Aggregate):
            width = len(node.group_by)
            return node, columns if all(c < width for c in columns) else ()
        if isinstance(node, (ir.TopK, ir.Distinct, ir.Filter)):
            node = node.input
        elif isinstance(node, ir.Project) and not node.view:
            exprs = [node.exprs[c] for c in columns]
            if not all(isinstance(e, ir.Col) for e in exprs):
                return None
            columns = tuple(e.index for e in exprs if isinstance(e, ir.Col))
            node = node.input
        else:
            return None
    return None


def _held_full(views: Iterable[ir.ViewPlan]) -> Callable[[ir.Aggregate], bool]:
    """Whether a view without a key (whose state is all full) has an aggregate, once this
    rule has run on it (it needs no ``views`` to: no key reaches its aggregates)."""
    keyless = [v for v in views if not v.key and v.range_column is None]
    roots: list[ir.Node] = []

    def held(node: ir.Aggregate) -> bool:
        if keyless and not roots:
            roots.extend(v.root if v.optimized is not None else eager_aggregation(v).root
                         for v in keyless)
        return any(node in ir.walk(root) for root in roots)

    return held


def push_down(agg: ir.Aggregate, keyed: tuple[int, ...] = (),
              held_full: Callable[[ir.Aggregate], bool] = lambda inner: False) -> ir.Node:
    """``agg`` computed below its join where that is exact, else ``agg`` itself; the result
    has ``agg``'s output columns in order.

    ``keyed``: the output columns a reader looks the aggregate up by (its ``?`` columns).
    They must be join keys of the kept side: a lookup by another column reaches the pushed
    aggregate through the join by a different key, which makes it full state (see
    rivulet/plan/keys.py), where the aggregate as written could be partial; unless
    ``held_full`` says another view already keeps that aggregate as full state (then the
    lookup shares it and adds nothing). A scanned table's primary key is its ``Scan``'s."""
    found = _join_below(agg)
    if found is None or not agg.group_by:  # one group over everything: COUNT of none is 0
        return agg
    exprs, join = found
    sides = (True,) if join.kind == "left" else (True, False)
    for kept_left in sides:
        out = _rewrite(agg, exprs, join, kept_left, keyed, held_full)
        if out is not None:
            return out
    return agg


def _join_below(agg: ir.Aggregate) -> tuple[list[ir.Expr], ir.Join] | None:
    """The join the aggregate reads through projections only, with the aggregate's input
    columns as expressions over the join's row."""
    node = agg.input
    exprs: list[ir.Expr] = [ir.Col(i, c.name) for i, c in enumerate(node.columns)]
    while isinstance(node, ir.Project):
        exprs = [substitute(e, node.exprs) for e in exprs]
        node = node.input
    if isinstance(node, ir.Join) and node.residual is None and node.kind in ("inner", "left") \
            and node.left_keys:  # (on no key, the side aggregated first is one group)
        return exprs, node
    return None


class _Sides:
    """The join seen from the side kept whole (K) and the side aggregated first (A)."""

    def __init__(self, join: ir.Join, kept_left: bool) -> None:
        width = join.left.arity
        self.kind = join.kind
        if kept_left:
            self.kept, self.agg = join.left, join.right
            self.kept_keys, self.agg_keys = join.left_keys, join.right_keys
            self.kept_at, self.agg_at = 0, width
        else:
            self.kept, self.agg = join.right, join.left
            self.kept_keys, self.agg_keys = join.right_keys, join.left_keys
            self.kept_at, self.agg_at = width, 0

    def kept_column(self, e: ir.Expr) -> int | None:
        """The kept side's column ``e`` is, if it is one."""
        if isinstance(e, ir.Col) and 0 <= e.index - self.kept_at < self.kept.arity:
            return e.index - self.kept_at
        return None

    def on_agg_side(self, e: ir.Expr) -> ir.Expr | None:
        """``e`` over the aggregated side's columns, if it reads only those."""
        used = ir.columns_used(e)
        lo, hi = self.agg_at, self.agg_at + self.agg.arity
        if not all(lo <= i < hi for i in used):
            return None
        return remap(e, {i: i - self.agg_at for i in used})

    def keys_comparable(self) -> bool:
        """Grouping by the A key and matching K keys must agree on equal values."""
        for k, a in zip(self.kept_keys, self.agg_keys):
            kind = self.kept.columns[k].kind
            if kind != self.agg.columns[a].kind or kind in (FLOAT, None):
                return False
        return True


def _rewrite(agg: ir.Aggregate, exprs: list[ir.Expr], join: ir.Join, kept_left: bool,
             keyed: tuple[int, ...],
             held_full: Callable[[ir.Aggregate], bool]) -> ir.Node | None:
    sides = _Sides(join, kept_left)
    group = [sides.kept_column(exprs[i]) for i in agg.group_by]
    if any(g is None for g in group) or not sides.keys_comparable():
        return None
    args: list[ir.Expr | None] = []
    for call in agg.aggs:
        if call.concat is not None:
            return None  # (reads columns beside its argument: left where it is)
        if call.arg is None:
            args.append(None)
            continue
        arg = sides.on_agg_side(exprs[call.arg])
        if arg is None or (sides.kind == "left" and not isinstance(arg, ir.Col)):
            return None
        args.append(arg)
    pk = sides.kept.primary_key if isinstance(sides.kept, ir.Scan) else ()
    per_row = bool(pk) and set(pk) <= set(group)
    if not per_row and not (sides.kind == "inner" and all(_combinable(c, agg) for c in agg.aggs)):
        return None
    inner = _inner_aggregate(agg, sides, args)
    if any(group[k] not in sides.kept_keys for k in keyed) \
            and not held_full(inner):
        return None
    if per_row:
        return _per_row(agg, sides, group, inner)  # type: ignore[arg-type]
    return _two_step(agg, sides, group, inner)  # type: ignore[arg-type]


def _combinable(call: ir.AggCall, agg: ir.Aggregate) -> bool:
    """Whether partial results of ``call`` combine exactly (float sums would round in
    another order)."""
    if call.fn not in COMBINE or call.distinct:
        return False
    if call.fn != "sum":
        return True
    summed = agg.input.columns[call.arg].type  # type: ignore[index]
    return number_type(summed).kind != FLOAT  # DOUBLEs, text summed as DOUBLEs: no


def _per_row(agg: ir.Aggregate, sides: _Sides, group: list[int],
             inner: ir.Aggregate) -> ir.Node:
    """Each group is one kept row: join it to its partner's aggregate, as is."""
    joined = _join(sides, inner)
    at = sides.kept.arity + len(sides.agg_keys)
    out: list[ir.Expr] = [ir.Col(g, sides.kept.columns[g].name) for g in group]
    for j, call in enumerate(agg.aggs):
        value: ir.Expr = ir.Col(at + j, inner.columns[len(sides.agg_keys) + j].name)
        if sides.kind == "left" and call.fn == "count":
            # The unmatched row's aggregate: over one null-extended row.
            empty = 1 if call.arg is None else 0
            value = ir.Call("COALESCE", (value, ir.Lit(empty, INT)))
        out.append(value)
    return ir.Project(joined, tuple(out), agg.columns)


def _two_step(agg: ir.Aggregate, sides: _Sides, group: list[int],
              inner: ir.Aggregate) -> ir.Node:
    """Groups of several kept rows: combine the partner aggregates per group."""
    joined = _join(sides, inner)
    at = sides.kept.arity + len(sides.agg_keys)
    exprs = [ir.Col(g, sides.kept.columns[g].name) for g in group] + [
        ir.Col(at + j, inner.columns[len(sides.agg_keys) + j].name) for j in range(len(agg.aggs))]
    pre = ir.Project(joined, tuple(exprs), tuple(joined.columns[e.index] for e in exprs))
    calls = tuple(ir.AggCall(COMBINE[c.fn], len(group) + j) for j, c in enumerate(agg.aggs))
    return ir.Aggregate(pre, tuple(range(len(group))), calls, agg.columns)


def _inner_aggregate(agg: ir.Aggregate, sides: _Sides, args: list[ir.Expr | None]) -> ir.Aggregate:
    """The aggregates over the A side alone, grouped by its join key (NULL keys, which
    match nothing, filtered out first)."""
    source = sides.agg
    nullable = [k for k in sides.agg_keys if source.columns[k].nullable]
    if nullable:
        checks = [ir.Call("is_not_null", (ir.Col(k, source.columns[k].name),)) for k in nullable]
        predicate = checks[0]
        for check in checks[1:]:
            predicate = ir.Call("and_", (predicate, check))
        source = ir.Filter(source, predicate, source.columns)
    exprs: list[ir.Expr] = [ir.Col(k, source.columns[k].name) for k in sides.agg_keys]
    columns = [source.columns[k] for k in sides.agg_keys]
    calls: list[ir.AggCall] = []
    for call, arg in zip(agg.aggs, args):
        if arg is not None and not call.distinct and call.fn == "count" \
                and isinstance(arg, ir.Col) and not source.columns[arg.index].nullable:
            arg = None  # COUNT of a NOT NULL column is COUNT(*): one shared operator
        if arg is None:
            calls.append(ir.AggCall(call.fn, None, call.distinct))
            continue
        if arg not in exprs[len(sides.agg_keys):]:
            exprs.append(arg)
            columns.append(_column_of(arg, source))
        index = exprs.index(arg, len(sides.agg_keys))
        calls.append(ir.AggCall(call.fn, index, call.distinct))
    width = len(sides.agg_keys)
    pre: ir.Node = ir.Project(source, tuple(exprs), tuple(columns))
    if [getattr(e, "index", None) for e in exprs] == list(range(source.arity)):
        pre = source
    results = agg.columns[len(agg.group_by):]
    out = tuple(columns[:width]) + tuple(
        replace(result, name=f"{c.fn}_{j}", nullable=c.fn != "count")
        for j, (c, result) in enumerate(zip(calls, results)))
    return ir.Aggregate(pre, tuple(range(width)), tuple(calls), out)


def _join(sides: _Sides, inner: ir.Aggregate) -> ir.Join:
    width = len(sides.agg_keys)
    right = tuple(replace(c, nullable=c.nullable or sides.kind == "left")
                  for c in inner.columns)
    return ir.Join(sides.kept, inner, sides.kind, sides.kept_keys, tuple(range(width)), None,
                   sides.kept.columns + right)


def _column_of(e: ir.Expr, node: ir.Node) -> ir.ColumnInfo:
    if isinstance(e, ir.Col):
        return node.columns[e.index]
    return ir.ColumnInfo.of("expr", type_of(e, [c.type for c in node.columns]))


def substitute(expr: ir.Expr, exprs: tuple[ir.Expr, ...]) -> ir.Expr:
    """``expr`` over a projection's input: each ``Col(i)`` replaced by ``exprs[i]``."""
    return ir.replace_columns(expr, lambda c: exprs[c.index])
