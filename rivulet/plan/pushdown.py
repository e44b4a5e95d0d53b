"""Predicate pushdown: each conjunct of a WHERE clause evaluated as low as its columns allow.

The planner puts a query's WHERE clause in one filter above all of its joins. In a dataflow
that is where it hurts most: every write to one side of a join is matched against the
other side's rows, and all of the matches travel through the joins above before the
filter drops them. In Lobsters' ``replying_comments`` a new read ribbon is joined with
every comment of its story (dozens on a popular one), and each match was joined with the
story and the parent comment before ``comments.created_at > read_ribbons.updated_at``
dropped nearly all of them. Pushed down, that conjunct runs right after the first join,
the conditions on one table run right above its scan, and the joins above see only rows
that can reach the view.

Rules (the classic ones, valid under SQL's three-valued logic because a filter keeps a
row only when its predicate is TRUE, above or below):

* a conjunct reading only one input of an inner join moves into that input;
* under a LEFT join, only conjuncts on the preserved (left) side move down: a condition
  on the right side above the join also removes padded rows, which below it would
  instead produce them;
* through a projection when every column the conjunct reads is a copied column;
* adjacent filters merge; aggregates, DISTINCT, top-k and unions stop the descent.

The pass is deterministic and leaves a plan without such filters unchanged, so equal
sub-plans of different views stay equal and keep sharing operators.
"""

from __future__ import annotations

from dataclasses import replace

from rivulet.plan import ir
from rivulet.plan.prune import remap


def push_filters(plan: ir.ViewPlan) -> ir.ViewPlan:
    """``plan`` with every filter's conjuncts moved as far down as they can go.

    >>> from rivulet.plan.catalog import Catalog
    >>> from rivulet.plan.describe import describe
    >>> catalog = Catalog.from_sql(
    ...     "CREATE TABLE s (id INT PRIMARY KEY, hidden INT)",
    ...     "CREATE TABLE c (id INT PRIMARY KEY, sid INT, at INT)")
    >>> plan = catalog.plan("SELECT c.id FROM c LEFT JOIN s ON s.id = c.sid "
    ...                     "WHERE c.at > 3 AND s.hidden = 0")
    >>> print(describe(plan))
    Project id#0
      Filter (at > 3) AND (hidden = 0)
        Join left on sid = id#3
          Scan c
          Scan s
    >>> print(describe(push_filters(plan)))
    Project id#0
      Filter hidden = 0
        Join left on sid = id#3
          Filter at > 3
            Scan c
          Scan s
    """
    root = _push(plan.root)
    return plan if root is plan.root else replace(plan, root=root)


def _push(node: ir.Node) -> ir.Node:
    if isinstance(node, ir.Filter):
        return _sink(_push(node.input), ir.conjuncts(node.predicate))
    return ir.with_inputs(node, [_push(child) for child in node.inputs()])


def _sink(node: ir.Node, preds: list[ir.Expr]) -> ir.Node:
    """A node equal to ``node`` filtered by all of ``preds``, with each applied as low as
    it can be."""
    if not preds:
        return node
    if isinstance(node, ir.Filter):
        return _sink(node.input, ir.conjuncts(node.predicate) + preds)
    if isinstance(node, ir.Join):
        return _into_join(node, preds)
    if isinstance(node, ir.Project):
        return _through_project(node, preds)
    return _filter(node, preds)


def _into_join(node: ir.Join, preds: list[ir.Expr]) -> ir.Node:
    width = node.left.arity
    left: list[ir.Expr] = []
    right: list[ir.Expr] = []
    stay: list[ir.Expr] = []
    for pred in preds:
        used = ir.columns_used(pred)
        if used and max(used) < width:
            left.append(pred)
        elif used and min(used) >= width and node.kind == "inner":
            right.append(remap(pred, {c: c - width for c in used}))
        else:
            stay.append(pred)
    if not left and not right:
        return _filter(node, preds)
    joined = replace(node, left=_sink(node.left, left), right=_sink(node.right, right))
    return _filter(joined, stay)


def _through_project(node: ir.Project, preds: list[ir.Expr]) -> ir.Node:
    down: list[ir.Expr] = []
    stay: list[ir.Expr] = []
    for pred in preds:
        used = ir.columns_used(pred)
        sources = {c: node.exprs[c] for c in used}
        if all(isinstance(e, ir.Col) for e in sources.values()):
            down.append(remap(pred, {c: e.index for c, e in sources.items()}))  # type: ignore[attr-defined]
        else:
            stay.append(pred)
    if not down:
        return _filter(node, preds)
    return _filter(replace(node, input=_sink(node.input, down)), stay)


def _filter(node: ir.Node, preds: list[ir.Expr]) -> ir.Node:
    return ir.Filter(node, ir.and_all(preds), node.columns) if preds else node
