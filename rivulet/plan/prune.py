"""Column pruning: base-table rows narrowed, right after their table, to what the plan reads.

Without it a join carries whole rows of both tables, so an UPDATE of a column no view
reads (Lobsters' hand-maintained ``stories.upvotes``) travels through every join and
aggregate above it as a ``-old``/``+new`` pair of rows that differ only in that column.
This pass computes, top-down, which columns of each node the nodes above read, and puts a
projection of exactly those columns over every scan that has more. Such an update then
becomes two equal rows at the projection, which cancel there (``dataflow/ops/project.py``),
and nothing above runs.

The pass is deterministic, so equal sub-plans under equal needs stay equal and views still
share operators. Stateful operators are barriers that keep their shape whatever is read of
them (an aggregate keeps all its groups and aggregates; DISTINCT, top-k and UNION need every
input column), so the sub-plans below them are pruned the same way in every view that
reads them. So is a view read by another view (its select list marked ``Project.view``):
it is pruned as it is alone, whatever the reader uses of it, and the two share every
operator of its sub-plan, so a write's work there is done once. Narrowed to what the reader
uses, it would be a second copy of the view's joins: Lobsters' ``unread_replies`` counts
rows of ``replying_comments``, and each read ribbon's change fanned out over the story's
comments in both. Every column a key, a join key or a predicate uses is kept, so partial
state keeps its keys and upqueries route through the projections as through any other.

It is the last rule of rivulet/plan/optimize.py, because it must see the plan as it will
run: the rules before it add readers of columns (eager aggregation's joins and
projections) and move them (predicate pushdown), and eager aggregation needs the scans
it would hide behind projections.
"""

from __future__ import annotations

from dataclasses import replace

from rivulet.plan import ir

#: A pruned node and, for each of its columns, the column of the original node it holds.
Pruned = tuple[ir.Node, tuple[int, ...]]


def prune(plan: ir.ViewPlan) -> ir.ViewPlan:
    """``plan`` with every scan narrowed to the columns the view depends on. The root
    keeps all its columns (visible, key, range and sort columns), in order.

    >>> from rivulet.plan.catalog import Catalog
    >>> from rivulet.plan.describe import describe
    >>> catalog = Catalog.from_sql(
    ...     "CREATE TABLE s (id INT PRIMARY KEY, author INT, title TEXT, upvotes INT)",
    ...     "CREATE TABLE v (uid INT, sid INT, vote INT)")
    >>> plan = catalog.plan("SELECT s.title, v.uid FROM s JOIN v ON v.sid = s.id "
    ...                     "WHERE s.author = ?")
    >>> print(describe(plan))
    Project title, uid, author
      Join inner on id = sid
        Scan s
        Scan v
    >>> print(describe(prune(plan)))
    Project title, uid, author
      Join inner on id = sid
        Project id, author, title
          Scan s
        Project uid, sid
          Scan v
    """
    root, kept = _prune(plan.root, set(range(plan.root.arity)), top=True)
    assert kept == tuple(range(plan.root.arity)), kept
    return plan if root is plan.root else replace(plan, root=root)


def _prune(node: ir.Node, needed: set[int], top: bool = False) -> Pruned:
    """``node`` narrowed to at least the columns ``needed`` of it."""
    if isinstance(node, ir.Scan):
        return _scan(node, needed)
    if isinstance(node, ir.Filter):
        return _filter(node, needed)
    if isinstance(node, ir.Project):
        if node.view and not top:  # another view, pruned as it is alone
            return _project(node, set(range(node.arity)), True)[0], _identity(node)
        return _project(node, needed, top)
    if isinstance(node, ir.Join):
        return _join(node, needed)
    if isinstance(node, ir.Aggregate):
        return _aggregate(node)
    return _barrier(node)


def _scan(node: ir.Scan, needed: set[int]) -> Pruned:
    if len(needed) >= node.arity:
        return node, _identity(node)
    keep = sorted(needed) or [0]  # COUNT(*) reads no column: rows still need a shape
    exprs = tuple(ir.Col(i, node.columns[i].name) for i in keep)
    return ir.Project(node, exprs, tuple(node.columns[i] for i in keep)), tuple(keep)


def _filter(node: ir.Filter, needed: set[int]) -> Pruned:
    child, kept = _prune(node.input, needed | ir.columns_used(node.predicate))
    if child is node.input:
        return node, kept
    predicate = remap(node.predicate, _positions(kept))
    return ir.Filter(child, predicate, child.columns), kept


def _project(node: ir.Project, needed: set[int], top: bool) -> Pruned:
    out = list(range(len(node.exprs))) if top else (sorted(needed) or [0][: len(node.exprs)])
    exprs = [node.exprs[i] for i in out]
    child, kept = _prune(node.input, set().union(*(ir.columns_used(e) for e in exprs)))
    positions = _positions(kept)
    new = tuple(remap(e, positions) for e in exprs)
    columns = tuple(node.columns[i] for i in out)
    cols = [e for e in new if isinstance(e, ir.Col)]
    if isinstance(child, ir.Project) and not child.view and len(cols) == len(new):
        # A projection of a projection is one projection (canonical: a view read by another
        # view is not projected twice).
        inner = child.exprs
        child, new = child.input, tuple(_named(inner[e.index], e) for e in cols)
    if not top and _is_identity(new, child):
        return child, tuple(out)
    if child is node.input and new == node.exprs and len(out) == len(node.exprs):
        return node, tuple(out)
    return ir.Project(child, new, columns, node.view), tuple(out)


def _join(node: ir.Join, needed: set[int]) -> Pruned:
    width = node.left.arity
    residual = ir.columns_used(node.residual) if node.residual is not None else set()
    wanted = needed | residual
    left, left_kept = _prune(node.left, {i for i in wanted if i < width} | set(node.left_keys))
    right, right_kept = _prune(
        node.right, {i - width for i in wanted if i >= width} | set(node.right_keys))
    kept = left_kept + tuple(width + i for i in right_kept)
    if left is node.left and right is node.right:
        return node, kept
    left_at, right_at = _positions(left_kept), _positions(right_kept)
    return ir.Join(
        left, right, node.kind,
        tuple(left_at[i] for i in node.left_keys),
        tuple(right_at[i] for i in node.right_keys),
        remap(node.residual, _positions(kept)) if node.residual is not None else None,
        tuple(node.columns[i] for i in kept),
    ), kept


def _aggregate(node: ir.Aggregate) -> Pruned:
    """An aggregate keeps its shape; its input is narrowed to the grouped and aggregated
    columns."""
    needed = set(node.group_by).union(*(a.columns() for a in node.aggs))
    child, kept = _prune(node.input, needed)
    if child is node.input:
        return node, _identity(node)
    at = _positions(kept)
    aggs = tuple(a.moved(at.__getitem__) for a in node.aggs)
    return ir.Aggregate(child, tuple(at[i] for i in node.group_by), aggs,
                        node.columns), _identity(node)


def _barrier(node: ir.Node) -> Pruned:
    """DISTINCT, top-k (ties broken by the whole row) and UNION read every input column;
    below them each input is pruned on its own."""
    inputs = [_prune(child, set(range(child.arity)))[0] for child in node.inputs()]
    return ir.with_inputs(node, inputs), _identity(node)


# --------------------------------------------------------------------------- expressions


def remap(expr: ir.Expr, positions: dict[int, int]) -> ir.Expr:
    """``expr`` with each input column ``Col(i)`` moved to ``positions[i]``."""
    return ir.replace_columns(expr, lambda c: ir.Col(positions[c.index], c.name))


def _named(expr: ir.Expr, outer: ir.Col) -> ir.Expr:
    return ir.Col(expr.index, outer.name or expr.name) if isinstance(expr, ir.Col) else expr


def _positions(kept: tuple[int, ...]) -> dict[int, int]:
    return {old: new for new, old in enumerate(kept)}


def _identity(node: ir.Node) -> tuple[int, ...]:
    return tuple(range(node.arity))


def _is_identity(exprs: tuple[ir.Expr, ...], child: ir.Node) -> bool:
    return len(exprs) == child.arity and all(
        isinstance(e, ir.Col) and e.index == i for i, e in enumerate(exprs))
