"""Numeric functions: ``ABS``, ``ROUND``, ``FLOOR``, ``CEIL``, ``SIGN``, ``GREATEST``...

Why this module exists: these functions keep the exact type of their argument where MySQL
does (``ROUND(5)`` is an int, ``ROUND`` of a DECIMAL a DECIMAL), which Python's built-ins
do not; ``GREATEST``/``LEAST`` compare with MySQL's comparison rules.
"""

from __future__ import annotations

import math
from datetime import date as _date
from datetime import datetime as _datetime
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

from rivulet.values.comparison import TYPE_CLASS, coerce_pair
from rivulet.values.conversions import as_float, text_operands, to_int, to_number
from rivulet.values.enumerations import EnumValue, plain

#: Context for rounding floats through their decimal form (1e308 has 309 digits).
_ROUND_CTX = Context(prec=700, rounding=ROUND_HALF_UP)

#: The most decimal places a MySQL DECIMAL has.
_MAX_SCALE = 30


def abs_(x: Any) -> int | float | Decimal | None:
    """``ABS(x)``."""
    if x is None:
        return None
    x = to_number(x)
    return x.copy_abs() if type(x) is Decimal else abs(x)


def _round_int(x: int, d: int) -> int:
    if d >= 0:
        return x
    m = 10 ** -d
    q, r = divmod(abs(x), m)
    if 2 * r >= m:
        q += 1
    return q * m if x >= 0 else -q * m


def round_(x: Any, d: Any = 0) -> int | float | Decimal | None:
    """``ROUND(x[, d])``, keeping x's type (int stays int, a Decimal gets d decimal places):
    exact numbers half away from zero; a DOUBLE as MySQL rounds its binary value, to the
    even integer at a half of ``x * 10**d`` (``ROUND(2.5e0)`` is 2, ``ROUND(1.005e0, 2)``
    is 1.0 as 100.49999999999999 is below the half, ``ROUND(2.675e0, 2)`` 2.68)."""
    if x is None or d is None:
        return None
    d = min(max(to_int(d), -1000), 1000)  # beyond this every result is 0 or x itself
    x = to_number(x)
    t = type(x)
    if t is int:
        return _round_int(x, d)
    if t is float:
        return _round_double(x, d)
    # Decimal: d places exactly (MySQL types ROUND(x, d) of a DECIMAL as DECIMAL(p, d):
    # ROUND(1.00, 3) is 1.000), at most MySQL's 30
    if d >= 0:
        q = x.quantize(Decimal(1).scaleb(-min(d, _MAX_SCALE)), context=_ROUND_CTX)
    else:
        q = x.quantize(Decimal(1).scaleb(-d), context=_ROUND_CTX)
        q = q.quantize(Decimal(1), context=_ROUND_CTX)
    return q.copy_abs() if q.is_zero() else q  # MySQL has no negative zero: ROUND(-0.25) is 0


def _round_double(x: float, d: int) -> float:
    """MySQL's rounding of a DOUBLE: ``rint(x * 10**d) / 10**d`` (``rint(x / 10**-d) *
    10**-d`` for negative ``d``), half to even; ``x`` itself where the product overflows."""
    if not math.isfinite(x):
        return x
    scale = 10.0 ** abs(d) if abs(d) <= 308 else math.inf
    if d < 0:
        return 0.0 if math.isinf(scale) else float(round(x / scale)) * scale
    product = x * scale
    if math.isinf(product):
        return x
    return float(round(product)) / scale


def floor(x: Any) -> int | float | None:
    """``FLOOR(x)``: int for exact arguments, float for float and string ones (as MySQL)."""
    if x is None:
        return None
    x = to_number(x)
    if type(x) is float:
        return float(math.floor(x)) if math.isfinite(x) else x
    return math.floor(x)


def ceil(x: Any) -> int | float | None:
    """``CEIL(x)`` / ``CEILING``: types as for ``floor``."""
    if x is None:
        return None
    x = to_number(x)
    if type(x) is float:
        return float(math.ceil(x)) if math.isfinite(x) else x
    return math.ceil(x)


def sign(x: Any) -> int | None:
    """``SIGN(x)``: -1, 0 or 1."""
    if x is None:
        return None
    x = to_number(x)
    return 1 if x > 0 else (-1 if x < 0 else 0)


def _extreme(args: tuple[Any, ...], want: int) -> Any:
    """GREATEST (want=1) / LEAST (want=-1) over non-NULL args, with MySQL's type rules
    (MariaDB's, :func:`rivulet.values.types.extreme`): numbers and strings mixed compare,
    and come out, as DOUBLEs; otherwise pairwise comparison, and a float among numbers
    makes the result float (Decimal likewise). The planner converts the arguments to that
    type first, so a query sees one type per column. An ENUM column's value counts as its
    text, or as its index among numbers (``GREATEST(e, 1)`` is a DOUBLE, as in MariaDB)."""
    if any(type(a) is EnumValue for a in args):
        numbers = any(TYPE_CLASS.get(type(a)) in ("n", "f") for a in args)
        args = tuple(float(a.position) if numbers and type(a) is EnumValue else plain(a)
                     for a in args)
    kinds = {TYPE_CLASS.get(type(a)) for a in args}
    if None in kinds:
        raise TypeError(f"not SQL values: {args!r}")
    if len(kinds) == 1 and len({type(a) for a in args}) == 1:
        return max(args) if want > 0 else min(args)
    if "t" in kinds and "d" not in kinds:
        return _extreme_date(args, want)
    if "s" in kinds and ("n" in kinds or "f" in kinds):
        doubles = [as_float(a) for a in args]
        return max(doubles) if want > 0 else min(doubles)
    if kinds == {"s"}:
        texts = text_operands(*args)
        return max(texts) if want > 0 else min(texts)
    best = args[0]
    for a in args[1:]:
        x, y = (a, best) if type(a) is type(best) else coerce_pair(a, best)
        if (x > y) if want > 0 else (x < y):
            best = a
    if kinds <= {"n", "f"}:
        if "f" in kinds:
            return as_float(best)
        if any(type(a) is Decimal for a in args):
            return Decimal(best)
        return int(best)
    return best


def _extreme_date(args: tuple[Any, ...], want: int) -> Any:
    """GREATEST/LEAST with a date or datetime among the arguments: each compared as a
    date (text or a number read as one, MySQL's zero date where it is none, before every
    date), and the chosen argument answered as it is (the planner makes it the result's
    date or datetime, NULL where it is no date)."""
    anchor = next(a for a in args if TYPE_CLASS.get(type(a)) == "t")
    keys = [_as_datetime(coerce_pair(anchor, a)[1] if type(a) is not type(anchor) else a)
            for a in args]
    pick = max if want > 0 else min
    return args[pick(range(len(args)), key=keys.__getitem__)]


def _as_datetime(key: Any) -> Any:
    """A date as midnight of its day (a datetime, or a ZeroInDate, as it is)."""
    if type(key) is _date:
        return _datetime(key.year, key.month, key.day)
    return key


def greatest(*args: Any) -> Any:
    """``GREATEST(...)``: NULL if any argument is NULL."""
    for a in args:
        if a is None:
            return None
    return _extreme(args, 1)


def least(*args: Any) -> Any:
    """``LEAST(...)``: NULL if any argument is NULL."""
    for a in args:
        if a is None:
            return None
    return _extreme(args, -1)
