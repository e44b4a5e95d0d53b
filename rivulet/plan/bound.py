"""A read of a view that its reader cannot answer by its keys: the view's query planned
again with the read's values as constants.

Why this module exists: a view's reader holds its rows under the stored values of its
parameter columns, and a read looks its values up there (rivulet/plan/params.py,
``lookup_keys``). Most values find exactly one stored value, or none; but some may equal
many (``varchar_col = ?`` with the number 1 finds '1', '01', '1.0' and ' 1', as MySQL
compares a string with a number as doubles; a DECIMAL compared with a float). No key
lookup answers those, yet the same query with the value written as a literal is answered
exactly, as a filter. So such a read is planned here as that query (:func:`bound_plan`),
and computed whole from the base tables by its caller, as MySQL scans a table when an index
cannot serve a comparison: slower, and exactly the literal's answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from rivulet.errors import RivuletError
from rivulet.plan import ir
from rivulet.plan.params import values_by_param
from rivulet.plan.planner import Catalog, Planner
from rivulet.sql.parse import parse_one


def bound_plan(plan: ir.ViewPlan, params: Sequence[Any], catalog: Catalog) -> ir.ViewPlan:
    """The view ``plan``'s query with ``params`` (as a read passes them: any number of
    values in an ``IN (?, ...)`` list's place) as constants: a plan without parameters."""
    values_by_param(plan, params)  # (the number of values checked as a read checks it)
    if not plan.sql:
        raise RivuletError(f"view {plan.name!r} keeps no query text to compute this read")
    query = parse_one(plan.sql)
    select = query
    while isinstance(select, exp.Subquery):
        select = select.this
    where = select.args.get("where") if isinstance(select, exp.Select) else None
    if where is None:
        raise RivuletError(f"view {plan.name!r}: its parameters are not in a WHERE clause")
    marks = _placeholders(where.this)
    if plan.in_list:
        listed = marks[plan.in_list[0]].parent
        assert isinstance(listed, exp.In)  # (how the planner found the list)
        size = len(params) - (plan.param_count - len(plan.in_list))
        listed.set("expressions", [exp.Placeholder() for _ in range(size)])
        marks = _placeholders(where.this)
    if len(marks) != len(params):
        raise RivuletError(f"view {plan.name!r} takes {len(marks)} parameter(s), "
                           f"got {len(params)}")
    bound = {id(mark): value for mark, value in zip(marks, params)}
    return Planner(catalog, bound=bound).plan_view(plan.name, query, plan.sql)


def _placeholders(where: exp.Expr) -> list[exp.Placeholder]:
    """The ``?`` of a WHERE condition in the order the planner numbers them."""
    return [n for n in where.dfs() if isinstance(n, exp.Placeholder)]
