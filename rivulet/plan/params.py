"""A view's ``?`` parameters: where they are, and the values a read gives them.

Where: the planner pulls each ``?`` out of the outer WHERE (:func:`extract_parameters`);
it becomes part of the reader's key, not a filter, so that one maintained view answers
every parameter value.

The values: the engine's read handles and the Spark executor both turn the values a caller passes
into the plan's parameters; they must agree on how an ``IN (?, ...)`` list of any length
sits among the other parameters, and on what is an error, or the same read would answer
differently on Spark than in memory. It needs nothing but the plan, so it lives here,
below both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from rivulet.errors import ParameterCountError, ParameterError
from rivulet.plan import ir
from rivulet.plan.scope import FromScope
from rivulet.sql.parse import error_at, unsupported

RANGE_OPS: dict[type, str] = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}
FLIPPED = {">": "<", ">=": "<=", "<": ">", "<=": ">="}



@dataclass
class Parameters:
    """The ``?`` of a view: which column each one keys, in the order they are written."""

    eq: list[tuple[int, int]] = field(default_factory=list)  # (placeholder index, FROM column)
    in_list: tuple[int, list[int]] | None = None  # (FROM column, placeholder indexes)
    range_column: int | None = None
    range_bounds: list[ir.RangeBound] = field(default_factory=list)
    count: int = 0

    def key_columns(self) -> list[int]:
        cols = [c for _, c in self.eq]
        if self.in_list is not None:
            cols.append(self.in_list[0])
        return cols


def extract_parameters(
    where: exp.Expr | None, scope: FromScope
) -> tuple[list[exp.Expr], Parameters]:
    """Split WHERE into plain conjuncts and parameter conjuncts."""
    params = Parameters()
    if where is None:
        return [], params
    if isinstance(where, exp.Where):
        where = where.this
    order = {id(p): i for i, p in enumerate(where.dfs()) if isinstance(p, exp.Placeholder)}
    order = {k: i for i, k in enumerate(order)}
    params.count = len(order)
    plain: list[exp.Expr] = []
    for conjunct in conjuncts(where):
        if not any(isinstance(n, exp.Placeholder) for n in conjunct.walk()):
            plain.append(conjunct)
            continue
        _take_parameter(conjunct, scope, params, order)
    return plain, params


def _take_parameter(
    node: exp.Expr, scope: FromScope, params: Parameters, order: dict[int, int]
) -> None:
    hint = (
        "parameters must appear in the WHERE conjunction as `column = ?`, "
        "`column IN (?, ...)`, `column BETWEEN ? AND ?` or `column <op> ?`"
    )
    if isinstance(node, exp.EQ):
        col, ph = _column_and_placeholder(node.this, node.expression)
        if col is not None:
            params.eq.append((order[id(ph)], scope.resolve(col)))
            return
    elif isinstance(node, exp.In) and isinstance(node.this, exp.Column):
        if node.expressions and all(isinstance(e, exp.Placeholder) for e in node.expressions):
            if params.in_list is not None:
                raise unsupported(node, "second IN (?, ...) parameter list")
            params.in_list = (scope.resolve(node.this), [order[id(e)] for e in node.expressions])
            return
    elif isinstance(node, exp.Between) and isinstance(node.this, exp.Column):
        low, high = node.args["low"], node.args["high"]
        if isinstance(low, exp.Placeholder) and isinstance(high, exp.Placeholder):
            _add_range(node, scope.resolve(node.this), ">=", order[id(low)], params)
            _add_range(node, scope.resolve(node.this), "<=", order[id(high)], params)
            return
    elif type(node) in RANGE_OPS:
        op = RANGE_OPS[type(node)]
        col, ph = _column_and_placeholder(node.this, node.expression)
        if col is not None:
            if col is node.expression:
                op = FLIPPED[op]
            _add_range(node, scope.resolve(col), op, order[id(ph)], params)
            return
    raise error_at(node, f"unsupported use of a parameter in {node.sql(dialect='mysql')!r}: {hint}",
                   ParameterError)


def _column_and_placeholder(a: exp.Expr, b: exp.Expr) -> tuple[exp.Column | None, exp.Expr]:
    if isinstance(a, exp.Column) and isinstance(b, exp.Placeholder):
        return a, b
    if isinstance(b, exp.Column) and isinstance(a, exp.Placeholder):
        return b, a
    return None, a


def _add_range(node: exp.Expr, column: int, op: str, param: int, params: Parameters) -> None:
    if params.range_column not in (None, column):
        raise unsupported(node, "range parameters on two different columns")
    params.range_column = column
    params.range_bounds.append(ir.RangeBound(op, param))


def conjuncts(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    if isinstance(node, exp.Paren) and isinstance(node.this, exp.And):
        return conjuncts(node.this)
    return [node]


def values_by_param(plan: ir.ViewPlan, params: Sequence[Any]) -> dict[Any, Any]:
    """Parameter values by position; an IN list's values (any number of them, in place of
    its placeholders) under ``"in"``. Raises ParameterCountError for a wrong number of
    values."""
    n = plan.param_count
    if not plan.in_list:
        if len(params) != n:
            raise ParameterCountError(
                f"view {plan.name!r} takes {n} parameter(s), got {len(params)}")
        return dict(enumerate(params))
    extra = len(params) - n
    start, size = plan.in_list[0], len(plan.in_list) + extra
    if size < 1:
        raise ParameterCountError(
            f"view {plan.name!r} takes {n - len(plan.in_list)} parameter(s) and at least one "
            f"IN value, got {len(params)} values")
    values: dict[Any, Any] = {}
    for p in range(n):
        if p < start:
            values[p] = params[p]
        elif p >= start + len(plan.in_list):
            values[p] = params[p + extra]
    values["in"] = list(params[start:start + size])
    return values
