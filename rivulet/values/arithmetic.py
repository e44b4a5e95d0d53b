"""Arithmetic: ``+``, ``-``, ``*``, ``/``, ``DIV``, ``%`` and unary minus.

Why this module exists: MySQL's arithmetic picks its result type from its operands (exact
int and DECIMAL arithmetic, DOUBLE as soon as a float or a string is involved), turns
division by zero into NULL and takes the sign of a remainder from the dividend. Those rules
differ from Python's and from SQLite's, so they are spelled out here.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

from rivulet.values.conversions import as_float, to_number

#: Decimal arithmetic context. MySQL DECIMAL has at most 65 digits; the extra precision keeps
#: products and quotients of such values exact before they are rounded to a MySQL scale.
_DEC_CTX = Context(prec=200, rounding=ROUND_HALF_UP)
#: MySQL's ``div_precision_increment``: ``DECIMAL / DECIMAL`` keeps 4 more decimal places.
_DIV_PRECISION_INCREMENT = 4


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

    MySQL returns DECIMAL for exact operands (``5 / 2`` = 2.5000); rivulet returns float for
    int/int (it compares equal) and, when a Decimal is involved, a Decimal with the dividend's
    scale + 4 decimal places, rounded half up, as MySQL does.
    """
    if a is None or b is None:
        return None
    ta = type(a)
    tb = type(b)
    if not ((ta is int or ta is float) and (tb is int or tb is float)):
        a, b, floating = _numeric_pair(a, b)
        if not b:
            return None
        if not floating and (type(a) is Decimal or type(b) is Decimal):
            exponent = a.as_tuple().exponent if type(a) is Decimal else 0
            assert isinstance(exponent, int)  # a DECIMAL is finite
            scale = -exponent
            q = _DEC_CTX.divide(a, b)
            return _unsigned_zero(q.quantize(
                Decimal(1).scaleb(-(max(scale, 0) + _DIV_PRECISION_INCREMENT)), context=_DEC_CTX))
    elif not b:
        return None
    try:
        return a / b
    except OverflowError:  # huge int / int
        return as_float(a) / as_float(b)


def int_div(a: Any, b: Any) -> int | None:
    """``a DIV b``: integer division truncating toward zero (``-7 DIV 2`` = -3); ``x DIV 0``
    is NULL."""
    if a is None or b is None:
        return None
    if type(a) is not int or type(b) is not int:
        a = to_number(a)
        b = to_number(b)
        if not b:
            return None
        if type(a) is not int or type(b) is not int:
            # MySQL goes through DECIMAL; Decimal(float) is exact, so no double rounding.
            if type(a) is float or type(b) is float:
                if not (math.isfinite(a) and math.isfinite(b)):
                    return None
            exact = _DEC_CTX.divide(Decimal(a), Decimal(b))
            return int(exact)  # int() of a Decimal truncates toward zero
    if not b:
        return None
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def mod(a: Any, b: Any) -> int | float | Decimal | None:
    """``a % b`` / ``MOD(a, b)``: the result has the sign of the dividend (C fmod:
    ``-7 % 3`` = -1, not Python's 2); ``x % 0`` is NULL. int % int -> int."""
    if a is None or b is None:
        return None
    if type(a) is not int or type(b) is not int:
        a, b, floating = _numeric_pair(a, b)
        if not b:
            return None
        if floating:
            return math.fmod(a, b)
        if type(a) is not int or type(b) is not int:
            return _unsigned_zero(_DEC_CTX.remainder(a, b))  # sign of the dividend
    if not b:
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
