"""Which columns of each base table a plan depends on: reads, or keeps in its state.

ALTER TABLE needs it: a column that a view depends on may not be dropped or change its
values under the view, while every other column may. Reading is not all: a join keeps
whole input rows in its indexes, and a later delete must find the row exactly as it was
stored, so every column that reaches a join's input counts. Asked of a plan as built
(narrowed by rivulet/plan/prune.py, whose projection right above each table keeps only
what is read), that is what the view reads. DISTINCT and top-k (which breaks ties by the
row) depend on every column of their input.
"""

from __future__ import annotations

from rivulet.plan import ir


def scan_columns(root: ir.Node) -> dict[tuple[str, int], set[int]]:
    """(table lower-cased, schema version) -> positions of that table version the plan
    depends on."""
    need: dict[int, set[int]] = {id(root): set(range(root.arity))}
    used: dict[tuple[str, int], set[int]] = {}
    for node in reversed(ir.walk(root)):  # readers before their inputs
        wanted = need.pop(id(node), set())
        if isinstance(node, ir.Scan):
            used.setdefault((node.table.lower(), node.version), set()).update(wanted)
            continue
        for child, columns in zip(node.inputs(), _inputs_needed(node, wanted)):
            need.setdefault(id(child), set()).update(columns)
    return used


def _inputs_needed(node: ir.Node, wanted: set[int]) -> list[set[int]]:
    if isinstance(node, ir.Filter):
        return [wanted | ir.columns_used(node.predicate)]
    if isinstance(node, ir.Project):
        return [set().union(*(ir.columns_used(node.exprs[i]) for i in wanted))]
    if isinstance(node, ir.Aggregate):
        return [set(node.group_by).union(*(a.columns() for a in node.aggs))]
    if isinstance(node, ir.Union):
        return [set(wanted) for _ in node.branches]
    # Join (whole rows in its indexes), Distinct and TopK: every column.
    return [set(range(child.arity)) for child in node.inputs()]
