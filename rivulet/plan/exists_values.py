"""``EXISTS (subquery)`` as a value: under ``OR`` or ``NOT``, in the select list (Django's
``annotate(x=Exists(...))``), in ``HAVING`` or ``ORDER BY``.

A term of WHERE's ``AND`` is a semi-join (rivulet/plan/subqueries.py). Anywhere else an
``EXISTS`` is true or false for each outer row, never NULL, and it is the same value as
``(SELECT COUNT(*) FROM ... WHERE ...) > 0`` over the subquery's FROM and WHERE: the count
of the rows it would return. That is a scalar subquery of one row always (an aggregate
without GROUP BY), which rivulet/plan/scalars.py decorrelates into a grouped count LEFT
JOINed to the outer row, 0 where no group matches. So the rewrite here is all there is to
it, and each form keeps its partial state and its incremental updates.

What the count cannot stand for is refused by name: a subquery with GROUP BY or HAVING
(its rows are groups), with aggregates and no GROUP BY (it has one row always: the EXISTS
is true), with OFFSET or ``LIMIT 0``, a UNION, a WITH. Its ``ORDER BY`` and a ``LIMIT n``
(n >= 1, Django's ``Exists`` writes ``LIMIT 1``) change nothing and go; so does DISTINCT.
"""

from __future__ import annotations

from sqlglot import exp

from rivulet.plan.expressions import is_aggregate
from rivulet.sql.parse import unsupported


def exists_as_counts(node: exp.Expr) -> None:
    """Rewrite, in place, each EXISTS that ``node`` holds (outermost only: a subquery's own
    are planned with it) as its count compared with 0."""
    for found in _outermost_exists(node):
        counted = _count_above_zero(found)
        if isinstance(found.parent, exp.Select) and found.arg_key == "expressions":
            # (a select-list item keeps the name MySQL gives it: its text)
            counted = exp.alias_(counted, found.sql(dialect="mysql"), quoted=True)
        found.replace(counted)


def _outermost_exists(node: exp.Expr) -> list[exp.Exists]:
    out: list[exp.Exists] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, exp.Exists):
            out.append(n)
        elif not isinstance(n, (exp.Select, exp.Subquery)):
            stack.extend(n.iter_expressions())
    return out


def _count_above_zero(found: exp.Exists) -> exp.Expr:
    query = found.this
    while isinstance(query, exp.Subquery):
        query = query.this
    if not isinstance(query, exp.Select):
        raise unsupported(found, "EXISTS of a set operation as a value (under OR or NOT, or "
                          "in an expression)")
    for clause, what in (("group", "GROUP BY"), ("having", "HAVING"), ("with_", "WITH"),
                         ("offset", "OFFSET")):
        if query.args.get(clause) is not None:
            raise unsupported(found, f"EXISTS of a subquery with {what} as a value (under OR "
                              "or NOT, or in an expression)")
    if any(is_aggregate(e) for item in query.expressions for e in item.walk()):
        raise unsupported(found, "EXISTS of an aggregate without GROUP BY as a value (it "
                          "has one row always)")
    limit = query.args.get("limit")
    if limit is not None:
        value = limit.expression
        if not (isinstance(value, exp.Literal) and value.is_int) or int(value.this) == 0:
            raise unsupported(limit, "EXISTS of a subquery with LIMIT 0 or a LIMIT that is no "
                              "number, as a value")
    counted = query.copy()
    for clause in ("limit", "order", "distinct"):
        counted.set(clause, None)
    counted.set("expressions", [exp.Count(this=exp.Star())])
    return exp.Paren(this=exp.GT(this=exp.Subquery(this=counted),
                                 expression=exp.Literal.number(0)))
