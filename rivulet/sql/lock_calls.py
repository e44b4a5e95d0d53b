"""``SELECT GET_LOCK('name', 10)``: a statement of named-lock calls, and its arguments.

The named-lock functions (rivulet/engine/named_locks.py) act on the session that calls
them, once per call, so they are not values a view could hold: a SELECT of them is answered
by the session itself, each call in the order written. What is taken is what applications
send: a select list of nothing but such calls (each may be named with ``AS``), without
``FROM`` or with ``FROM DUAL``, their arguments literals or ``?``. A call anywhere else
(inside an expression, beside other values, in a query that reads tables) is refused by
name rather than computed wrong.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from rivulet.errors import ArgumentCountError, ParameterCountError, ParameterError, SqlError
from rivulet.sql.dual import is_dual
from rivulet.sql.parse import DIALECT, unsupported
from rivulet.values.conversions import to_number

#: The Python types a parameter's value may have.
_SCALARS = (int, float, decimal.Decimal, str, bytes, dt.date, dt.timedelta)

#: Each function and the number of arguments it takes.
LOCK_FUNCTIONS = {"GET_LOCK": 2, "RELEASE_LOCK": 1, "IS_FREE_LOCK": 1, "IS_USED_LOCK": 1,
                  "RELEASE_ALL_LOCKS": 0}


@dataclass(frozen=True)
class LockCall:
    """One call: the function, its argument expressions, the column it answers in."""

    function: str
    args: tuple[exp.Expr, ...]
    column: str


@dataclass(frozen=True)
class BoundLockCall:
    """A call with its argument values: the lock's name (None: the call answers NULL, as
    for a NULL or empty name) and, for ``GET_LOCK``, the timeout in seconds (None: NULL)."""

    function: str
    name: str | None
    timeout: float | None = None


def has_lock_call(node: exp.Expr) -> bool:
    """Whether a statement calls a named-lock function anywhere."""
    return any(_function(n) is not None for n in node.walk())


def lock_calls(node: exp.Expr) -> list[LockCall] | None:
    """The calls of a SELECT of named-lock calls; None for a statement with no such call.
    Refuses one that has them elsewhere (1235)."""
    found = [n for n in node.walk() if _function(n) is not None]
    if not found:
        return None
    if not isinstance(node, exp.Select) or any(
            node.args.get(key) for key in node.args if key not in ("expressions", "from_")):
        raise unsupported(found[0], f"{_function(found[0])} outside a SELECT of lock calls")
    from_ = node.args.get("from_")
    if from_ is not None and not is_dual(from_.this):
        raise unsupported(found[0], f"{_function(found[0])} in a query that reads a table")
    calls = []
    for item in node.expressions:
        call = item.this if isinstance(item, exp.Alias) else item
        function = _function(call)
        if function is None:
            inner = next((n for n in item.walk() if _function(n) is not None), None)
            if inner is not None:
                raise unsupported(inner, f"{_function(inner)} inside an expression (select "
                                  "the call alone)")
            raise unsupported(item, "value beside named-lock calls in a SELECT")
        args = tuple(call.expressions if isinstance(call, exp.Anonymous) else
                     call.iter_expressions())
        if len(args) != LOCK_FUNCTIONS[function]:
            raise ArgumentCountError(
                f"Incorrect parameter count in the call to native function '{function}'")
        for arg in args:
            if not _is_constant(arg):
                raise unsupported(arg, f"{function} argument other than a literal or ?")
        column = item.alias if isinstance(item, exp.Alias) else call.sql(dialect=DIALECT)
        calls.append(LockCall(function, args, column))
    return calls


def bind(calls: Sequence[LockCall], params: Sequence[Any]) -> list[BoundLockCall]:
    """The calls with their arguments' values (``?`` takes ``params`` in text order)."""
    values = iter(params)
    count = sum(1 for c in calls for a in c.args for n in a.walk()
                if isinstance(n, exp.Placeholder))
    if count != len(params):
        raise ParameterCountError(f"statement takes {count} parameter(s), got {len(params)}")
    bound = []
    for call in calls:
        args = [_value(a, values) for a in call.args]
        if call.function == "RELEASE_ALL_LOCKS":
            bound.append(BoundLockCall(call.function, None))
            continue
        name = _name(args[0], call.function)
        timeout = None
        if call.function == "GET_LOCK" and args[1] is not None:
            timeout = float(to_number(args[1]))  # (text as MySQL reads it: 'abc' is 0)
        bound.append(BoundLockCall(call.function, name, timeout))
    return bound


def _function(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Anonymous):
        name = node.name.upper()
    elif isinstance(node, exp.Func):
        name = node.sql_name()
    else:
        return None
    return name if name in LOCK_FUNCTIONS else None


def _is_constant(arg: exp.Expr) -> bool:
    if isinstance(arg, exp.Neg):
        arg = arg.this
    return isinstance(arg, (exp.Literal, exp.Null, exp.Placeholder))


def _value(arg: exp.Expr, params: Any) -> Any:
    negative = isinstance(arg, exp.Neg)
    if negative:
        arg = arg.this
    if isinstance(arg, exp.Placeholder):
        value = next(params)
        if value is not None and not isinstance(value, _SCALARS):
            raise ParameterError(f"a parameter value must be a number, string, bytes, date, "
                                 f"datetime, timedelta or None, got a {type(value).__name__}")
    elif isinstance(arg, exp.Null):
        value = None
    elif isinstance(arg, exp.Literal) and arg.is_string:
        value = arg.name
    else:
        value = float(arg.name) if any(c in arg.name for c in ".eE") else int(arg.name)
    return -value if negative and value is not None else value


def _name(value: Any, function: str) -> str | None:
    """A lock's name: a string (MariaDB refuses a number there); NULL or empty: none."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        raise SqlError(f"Illegal parameter data type {type(value).__name__} for operation "
                       f"'{function.lower()}'")
    return value or None

