"""A view's ``?`` values as its plan numbers them, for every place that reads a view.

The engine's read handles and the Spark executor both turn the values a caller passes
into the plan's parameters; they must agree on how an ``IN (?, ...)`` list of any length
sits among the other parameters, and on what is an error, or the same read would answer
differently on Spark than in memory. It needs nothing but the plan, so it lives here,
below both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rivulet.errors import RivuletError
from rivulet.plan import ir


def values_by_param(plan: ir.ViewPlan, params: Sequence[Any]) -> dict[Any, Any]:
    """Parameter values by position; an IN list's values (any number of them, in place of
    its placeholders) under ``"in"``. Raises RivuletError for a wrong number of values."""
    n = plan.param_count
    if not plan.in_list:
        if len(params) != n:
            raise RivuletError(f"view {plan.name!r} takes {n} parameter(s), got {len(params)}")
        return dict(enumerate(params))
    extra = len(params) - n
    start, size = plan.in_list[0], len(plan.in_list) + extra
    if size < 1:
        raise RivuletError(
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
