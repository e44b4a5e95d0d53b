"""Logarithms, powers and roots: ``LN``, ``LOG``, ``LOG2``, ``LOG10``, ``EXP``, ``POW``/
``POWER`` and ``SQRT``, all DOUBLEs of their arguments read as DOUBLEs.

Why this module exists: MySQL's answers outside each function's domain are its own and
differ between them. A logarithm of a number not above 0 (or to a base of 1 or not above 0)
is NULL with a warning, which a write statement's strict mode makes MySQL 8's error 3020
(:class:`~rivulet.errors.InvalidLogarithmError`); the square root of a negative number is
NULL without one. A power or exponential past the largest DOUBLE, or that is no number
(``POW(-8, 1/3)``), fails the statement in MySQL (error 1690); a view cannot fail for a
row, so rivulet answers it as its arithmetic answers a DOUBLE past the largest
(``1e308 * 10``): infinity (and NULL for no number, which no row could be kept as). This is
the overflow of the known simplifications (rivulet/values/__init__.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rivulet.errors import InvalidLogarithmError
from rivulet.values.conversions import MODE, as_float, to_number


def _double(v: Any) -> float:
    """A non-NULL argument as the DOUBLE MySQL reads it as (a date as its number)."""
    return as_float(to_number(v))


def _invalid_logarithm() -> None:
    """MySQL's warning for a logarithm outside its domain: an error in a write."""
    if MODE.strict:
        raise InvalidLogarithmError("Invalid argument for logarithm")


def _logarithm(x: Any, of: Callable[[float], float]) -> float | None:
    """``of`` x read as a DOUBLE; NULL (MySQL's warning) for x not above 0."""
    if x is None:
        return None
    v = _double(x)
    if not v > 0:
        _invalid_logarithm()
        return None
    return of(v)


def ln(x: Any) -> float | None:
    """``LN(x)``, also ``LOG(x)``: NULL for x not above 0."""
    return _logarithm(x, math.log)


#: ``LOG``'s second argument when the call has one only.
_ONE_ARGUMENT = object()


def log(b: Any, x: Any = _ONE_ARGUMENT) -> float | None:
    """``LOG(x)`` (the natural logarithm) or ``LOG(b, x)``: the logarithm of x to base b,
    NULL for b or x not above 0 and for b = 1."""
    if x is _ONE_ARGUMENT:
        return ln(b)
    if b is None or x is None:
        return None
    base, v = _double(b), _double(x)
    if not (base > 0 and v > 0) or base == 1:
        _invalid_logarithm()
        return None
    return math.log(v) / math.log(base)


def log2(x: Any) -> float | None:
    """``LOG2(x)``: NULL for x not above 0."""
    return _logarithm(x, math.log2)


def log10(x: Any) -> float | None:
    """``LOG10(x)``: NULL for x not above 0."""
    return _logarithm(x, math.log10)


def exp_(x: Any) -> float | None:
    """``EXP(x)``; past the largest DOUBLE (x above about 709.78), infinity (see the
    module's docstring)."""
    if x is None:
        return None
    try:
        return math.exp(_double(x))
    except OverflowError:
        return math.inf


def pow_(x: Any, y: Any) -> float | None:
    """``POW(x, y)``, ``POWER(x, y)``; past the largest DOUBLE, infinity (``POW(0, -1)``
    too), and NULL for a result that is no number (``POW(-8, 1/3)``): see the module's
    docstring."""
    if x is None or y is None:
        return None
    base, power = _double(x), _double(y)
    try:
        v = math.pow(base, power)
    except OverflowError:
        v = math.inf if base > 0 or power.is_integer() and power % 2 == 0 else math.copysign(
            math.inf, base)
    except (ValueError, ZeroDivisionError):  # 0 to a negative power, or no real number
        if base == 0:
            return math.inf
        return None
    return None if math.isnan(v) else v


def sqrt(x: Any) -> float | None:
    """``SQRT(x)``: NULL (without a warning) for x below 0."""
    if x is None:
        return None
    v = _double(x)
    if v < 0:
        return None
    return math.sqrt(v)
