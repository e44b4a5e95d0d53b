"""Three-valued logic: ``AND``, ``OR``, ``NOT``, ``XOR`` and the truth of a value.

Why this module exists: SQL booleans are the ints 1/0 plus NULL for "unknown", and any value
can stand in a boolean context (``WHERE 'abc'`` is false). The rules for combining them are
small but easy to get wrong, and comparison (``BETWEEN``) and control flow (``IF``) need them.
"""

from __future__ import annotations

import datetime as _dt
from decimal import Decimal
from typing import Any

from rivulet.values.conversions import text_to_float
from rivulet.values.enumerations import EnumValue

_date = _dt.date
_timedelta = _dt.timedelta


def truth(v: Any) -> int | None:
    """The truth value of v in a boolean context: NULL -> None, otherwise 1 if v is nonzero
    as a number (strings are converted: '0.0' and 'abc' are false, '1x' is true)."""
    t = type(v)
    if t is int or t is float or t is bool or t is Decimal:
        return 1 if v else 0
    if v is None:
        return None
    if t is str or t is bytes:
        return 1 if text_to_float(v) else 0
    if t is EnumValue:
        return 1 if v.position else 0  # its index: every member is true
    if t is _timedelta:
        return 1 if v else 0  # 00:00:00 is false
    if isinstance(v, _date):
        return 1  # a valid DATE/DATETIME is a nonzero number
    raise TypeError(f"not an SQL value: {v!r}")


def and_(a: Any, b: Any) -> int | None:
    """``a AND b``: 0 if either is false, else NULL if either is NULL, else 1. Both operands
    are evaluated (they are pure, so this equals MySQL's short-circuit result)."""
    if type(a) is not int:
        a = truth(a)
    if type(b) is not int:
        b = truth(b)
    if a == 0 or b == 0:
        return 0
    if a is None or b is None:
        return None
    return 1


def or_(a: Any, b: Any) -> int | None:
    """``a OR b``: 1 if either is true, else NULL if either is NULL, else 0."""
    if type(a) is not int:
        a = truth(a)
    if type(b) is not int:
        b = truth(b)
    if (a is not None and a != 0) or (b is not None and b != 0):
        return 1
    if a is None or b is None:
        return None
    return 0


def not_(a: Any) -> int | None:
    """``NOT a``."""
    if type(a) is not int:
        a = truth(a)
        if a is None:
            return None
    return 0 if a else 1


def xor(a: Any, b: Any) -> int | None:
    """``a XOR b``: NULL if either is NULL."""
    a = truth(a)
    b = truth(b)
    if a is None or b is None:
        return None
    return 1 if a != b else 0
