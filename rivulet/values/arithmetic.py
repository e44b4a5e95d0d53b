"""Arithmetic: ``+``, ``-``, ``*``, ``/``, ``DIV``, ``%`` and unary minus.

Why this module exists: MySQL's arithmetic picks its result type from its operands (exact
int and DECIMAL arithmetic, DOUBLE as soon as a float or a string is involved), turns
division by zero into NULL and takes the sign of a remainder from the dividend. Those rules
differ from Python's and from SQLite's, so they are spelled out here.
"""

from __future__ import annotations

import datetime as _dt
import math
from decimal import ROUND_HALF_UP, Context, Decimal
from functools import lru_cache
from typing import Any

from rivulet.errors import DivisionByZeroError
from rivulet.values.conversions import MODE, as_float, temporal_to_decimal, to_number
from rivulet.values.types import division_frac

_division_frac = lru_cache(maxsize=256)(division_frac)

#: Decimal arithmetic context. MySQL DECIMAL has at most 65 digits; the extra precision keeps
#: products and quotients of such values exact before they are rounded to a MySQL scale.
_datetime = _dt.datetime
_DEC_CTX = Context(prec=200, rounding=ROUND_HALF_UP)


def _unsigned_zero(d: Decimal) -> Decimal:
    """MySQL's DECIMAL has no negative zero (``-(0.00)``, ``-1 * 0.00`` are 0.00); Python's
    Decimal keeps the sign."""
    return d.copy_abs() if d.is_zero() else d


def _numeric_pair(a: Any, b: Any) -> tuple[Any, Any, bool]:
    """Both operands as numbers; the flag says whether the operation is done in floating
    point (either is a float or a string), otherwise int/Decimal exact arithmetic."""
    a = to_number(a)
    b = to_number(b)
    if type(a) is float or type(b) is float:
        return as_float(a), as_float(b), True
    return a, b, False


def add(a: Any, b: Any) -> int | float | Decimal | None:
    """``a + b``. int+int -> int (no BIGINT overflow check); float or string operand ->
    float; Decimal with int/Decimal -> exact Decimal."""
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a + b
    if a is None or b is None:
        return None
    a, b, floating = _numeric_pair(a, b)
    if floating or (type(a) is int and type(b) is int):
        return a + b
    return _unsigned_zero(_DEC_CTX.add(a, b))


def sub(a: Any, b: Any) -> int | float | Decimal | None:
    """``a - b``; types as for ``add``."""
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a - b
    if a is None or b is None:
        return None
    a, b, floating = _numeric_pair(a, b)
    if floating or (type(a) is int and type(b) is int):
        return a - b
    return _unsigned_zero(_DEC_CTX.subtract(a, b))


def mul(a: Any, b: Any) -> int | float | Decimal | None:
    """``a * b``; types as for ``add``."""
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a * b
    if a is None or b is None:
        return None
    a, b, floating = _numeric_pair(a, b)
    if floating or (type(a) is int and type(b) is int):
        return a * b
    return _unsigned_zero(_DEC_CTX.multiply(a, b))


def div(a: Any, b: Any) -> float | Decimal | None:
    """``a / b``: never integer division. ``x / 0`` is NULL.

    A DOUBLE (or a string) makes the quotient a DOUBLE. Otherwise it is a DECIMAL (``5 / 2``
    is 2.5000), carrying the places MySQL computes it to: whole nine-digit words, truncated
    (:func:`rivulet.values.types.division_frac`), so that ``7 / 3 * 3`` is 6.999999999 and
    shows as 7.0000. Where the value is shown, it is rounded half up to the dividend's
    places plus 4 (:func:`to_scale`, called where the plan says).
    """
    if a is None or b is None:
        return None
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:  # the common case: nine places, no Decimal arithmetic
        if not b:
            division_by_zero()
            return None
        q = abs(a) * _INT_QUOTIENT_SCALE // abs(b)
        return Decimal(f"-{q}E-9" if q and (a < 0) != (b < 0) else f"{q}E-9")
    if ta is float and tb is float:
        if not b:
            division_by_zero()
            return None
        return a / b
    a = to_number(a)
    b = to_number(b)
    if type(a) is float or type(b) is float:
        if not b:
            division_by_zero()
            return None
        try:
            return as_float(a) / as_float(b)
        except OverflowError:  # a quotient beyond the doubles
            return math.inf if (as_float(a) > 0) == (as_float(b) > 0) else -math.inf
    if not b:
        division_by_zero()
        return None
    return _exact_quotient(a, b)


#: An integer divided by an integer carries one word of nine places (division_frac(0, 0)).
_INT_QUOTIENT_SCALE = 10 ** division_frac(0, 0)
assert division_frac(0, 0) == 9


def _places(x: int | Decimal) -> int:
    if type(x) is int:
        return 0
    exponent = x.as_tuple().exponent  # type: ignore[union-attr]
    assert isinstance(exponent, int)  # a DECIMAL is finite
    return max(0, -exponent)


def _exact_quotient(a: int | Decimal, b: int | Decimal) -> Decimal:
    """``a / b`` truncated to the places MySQL's DECIMAL division carries."""
    fa, fb = _places(a), _places(b)
    digits = _division_frac(fa, fb)
    ma = a if isinstance(a, int) else int(a.scaleb(fa, context=_DEC_CTX))
    mb = b if isinstance(b, int) else int(b.scaleb(fb, context=_DEC_CTX))
    q = abs(ma) * 10 ** (digits + fb - fa) // abs(mb)
    if (ma < 0) != (mb < 0):
        q = -q
    return Decimal(q).scaleb(-digits, context=_DEC_CTX)


_QUANTA: dict[int, Decimal] = {}


def to_scale(v: Any, scale: int, shown: int | None = None) -> Decimal | None:
    """An exact number as a DECIMAL with exactly ``scale`` places, rounded half up (or
    padded): a DECIMAL as MySQL shows, groups and compares it (see
    :mod:`rivulet.values.types`), or an integer where the type says DECIMAL. ``shown``,
    the places the plan's type of the result shows, is for the plan only. A DATETIME
    keeps its fractional seconds here (a DATETIME(3)'s number has 3 places)."""
    if v is None:
        return None
    quantum = _QUANTA.get(scale)
    if quantum is None:
        quantum = _QUANTA[scale] = Decimal(1).scaleb(-scale)
    t = type(v)
    if t is not Decimal:
        if t is int:
            v = Decimal(v)
        elif t is _datetime:
            v = Decimal(temporal_to_decimal(v))
        else:
            v = Decimal(to_number(v))
    return _unsigned_zero(v.quantize(quantum, context=_DEC_CTX))


def int_div(a: Any, b: Any) -> int | None:
    """``a DIV b``: integer division truncating toward zero (``-7 DIV 2`` = -3); ``x DIV 0``
    is NULL."""
    if a is None or b is None:
        return None
    if type(a) is not int or type(b) is not int:
        a = to_number(a)
        b = to_number(b)
        if not b:
            division_by_zero()
            return None
        if type(a) is not int or type(b) is not int:
            # MySQL goes through DECIMAL, a DOUBLE as its shortest decimal form (1 DIV
            # -0.1e0 is -10, where the binary value of 0.1 gives -9).
            if type(a) is float or type(b) is float:
                if not (math.isfinite(a) and math.isfinite(b)):
                    return None
                a, b = _shortest_decimal(a), _shortest_decimal(b)
            exact = _DEC_CTX.divide(Decimal(a), Decimal(b))
            return int(exact)  # int() of a Decimal truncates toward zero
    if not b:
        division_by_zero()
        return None
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def division_by_zero() -> None:
    """A division by zero, whose value is NULL: in a write statement (strict mode) MySQL's
    error 1365 instead, as ERROR_FOR_DIVISION_BY_ZERO in its default ``sql_mode`` makes it."""
    if MODE.strict:
        raise DivisionByZeroError("Division by 0")
    return None


def _shortest_decimal(v: Any) -> Any:
    """A DOUBLE as the shortest decimal that reads back as it (``repr``), as MySQL turns
    a DOUBLE into a DECIMAL; other numbers as they are."""
    return Decimal(repr(v)) if type(v) is float else v


def mod(a: Any, b: Any) -> int | float | Decimal | None:
    """``a % b`` / ``MOD(a, b)``: the result has the sign of the dividend (C fmod:
    ``-7 % 3`` = -1, not Python's 2); ``x % 0`` is NULL. int % int -> int."""
    if a is None or b is None:
        return None
    if type(a) is not int or type(b) is not int:
        a, b, floating = _numeric_pair(a, b)
        if not b:
            division_by_zero()
            return None
        if floating:
            return math.fmod(a, b)
        if type(a) is not int or type(b) is not int:
            return _unsigned_zero(_DEC_CTX.remainder(a, b))  # sign of the dividend
    if not b:
        division_by_zero()
        return None
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def neg(a: Any) -> int | float | Decimal | None:
    """``-a``."""
    t = type(a)
    if t is int or t is float:
        return -a
    if a is None:
        return None
    a = to_number(a)
    if type(a) is Decimal:
        return _unsigned_zero(a.copy_negate())  # exact, no context rounding
    return -a
