"""Comparison: ``=``, ``<>``, ``<``, ``<=>``, ``IS NULL``, ``IN``, ``BETWEEN``.

Why this module exists: comparing values of different types follows MySQL's own rules
(``'12abc' = 12`` is true, a date compared with a string or a number reads it as a date,
a float with an exact number compares as doubles). :func:`coerce_pair` writes those rules
down once; the numeric functions (``GREATEST``/``LEAST``) reuse it.
"""

from __future__ import annotations

import datetime as _dt
from decimal import Decimal
from typing import Any

from rivulet.values.conversions import (
    MODE,
    as_float,
    check_time,
    read_temporal,
    temporal_truncation,
    text_operands,
    text_to_float,
    truncated,
    zero_in_date_key,
)
from rivulet.values.enumerations import EnumValue
from rivulet.values.logic import and_
from rivulet.values.times import compared_micros, from_micros, time_micros

_date = _dt.date
_datetime = _dt.datetime
_timedelta = _dt.timedelta
_MIDNIGHT = _dt.time()
#: MySQL's zero date ('0000-00-00'), what text or a number that is not a date compares as
#: with a date: before every date, equal to none.
ZERO_DATE = _datetime.min

#: How MySQL compares a Python type: n(umber, exact), f(loat), s(tring), t(emporal),
#: d(uration: TIME), e(num: an ENUM column's value).
TYPE_CLASS: dict[type, str] = {
    int: "n", bool: "n", Decimal: "n", float: "f", str: "s", bytes: "s",
    _date: "t", _datetime: "t", _timedelta: "d", EnumValue: "e",
}


def coerce_pair(a: Any, b: Any) -> tuple[Any, Any]:
    """Convert two non-NULL values of different Python types to a mutually comparable pair,
    following MySQL's comparison rules (only reached when ``type(a) is not type(b)``)."""
    ka = TYPE_CLASS.get(type(a))
    kb = TYPE_CLASS.get(type(b))
    if ka is None or kb is None:
        raise TypeError(f"cannot compare {a!r} with {b!r}: not SQL values")
    if ka == "e" or kb == "e":
        # An ENUM value compares with a number by its index, with anything else by its text.
        other = kb if ka == "e" else ka
        if ka == "e":
            a = a.position if other in ("n", "f") else str(a)
        if kb == "e":
            b = b.position if other in ("n", "f") else str(b)
        return (a, b) if type(a) is type(b) else coerce_pair(a, b)
    if ka == "d" or kb == "d":
        return _with_time(a, b, ka, kb)
    if ka == "t" or kb == "t":
        if ka == kb:  # DATE vs DATETIME: the date is midnight of that day
            return _promote(a, b)
        # temporal vs text or number: the other is read as a date (a number as YYYYMMDD,
        # YYMMDD...); one with a zero month or day by its fields (ZeroInDate); one that is
        # not a date is MySQL's zero date, before every date.
        other = b if ka == "t" else a
        parsed = read_temporal(other)
        if MODE.strict:  # a write statement fails where MySQL warns
            problem = temporal_truncation(other, parsed, "Truncated incorrect datetime value")
            if problem is not None:
                truncated(problem, other)
        mine = a if ka == "t" else b
        if parsed is None:
            key = zero_in_date_key(other)
            if key is not None:
                return (mine, ZeroInDate(key)) if ka == "t" else (ZeroInDate(key), mine)
            parsed = ZERO_DATE
        if type(parsed) is not type(mine):
            mine, parsed = _promote(mine, parsed)
        return (mine, parsed) if ka == "t" else (parsed, mine)
    if ka == "s" and kb == "s":  # str vs bytes: compare as binary strings
        return text_operands(a, b)
    # string vs number: MySQL compares as doubles (where the string is not all a number, a
    # write fails, MariaDB naming DECIMAL as the type against an integer, DOUBLE otherwise)
    if ka == "s":
        return text_to_float(a, "DECIMAL" if type(b) is int else "DOUBLE"), as_float(b)
    if kb == "s":
        return as_float(a), text_to_float(b, "DECIMAL" if type(a) is int else "DOUBLE")
    if ka == "f" or kb == "f":  # float vs exact number: as doubles
        return as_float(a), as_float(b)
    return a, b  # int / bool / Decimal: Python compares them exactly, as MySQL does


class ZeroInDate:
    """A date with a zero month or day ('2024-02-00', the number 20240200) as MySQL
    compares it with a date or datetime: by its fields, year first. So it comes after every
    moment before it ('2024-01-31 23:59:59') and before the first day after it
    ('2024-02-01'), and equals no date. Only comparisons make one: no column holds it."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[int, ...]) -> None:
        self.key = key

    @staticmethod
    def _fields(other: Any) -> tuple[int, ...] | None:
        if type(other) is ZeroInDate:
            return other.key
        if isinstance(other, _datetime):
            return (other.year, other.month, other.day, other.hour, other.minute,
                    other.second, other.microsecond)
        if isinstance(other, _date):
            return (other.year, other.month, other.day, 0, 0, 0, 0)
        return None

    def __lt__(self, other: Any) -> bool:
        fields = self._fields(other)
        return NotImplemented if fields is None else self.key < fields

    def __le__(self, other: Any) -> bool:
        fields = self._fields(other)
        return NotImplemented if fields is None else self.key <= fields

    def __gt__(self, other: Any) -> bool:
        fields = self._fields(other)
        return NotImplemented if fields is None else self.key > fields

    def __ge__(self, other: Any) -> bool:
        fields = self._fields(other)
        return NotImplemented if fields is None else self.key >= fields

    def __eq__(self, other: object) -> bool:
        fields = self._fields(other)
        return NotImplemented if fields is None else self.key == fields

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return "ZeroInDate({:04d}-{:02d}-{:02d} {:02d}:{:02d}:{:02d}.{:06d})".format(*self.key)


def _with_time(a: Any, b: Any, ka: str, kb: str) -> tuple[Any, Any]:
    """A TIME compared with another kind: text or a number is read as a TIME (text as a
    datetime's time part, a number as [-]HHMMSS or a datetime; one that is no time counts
    as 00:00:00, as MySQL reads it with a warning). A DATE or DATETIME is refused when the
    query is planned (MySQL would read the TIME as a time of the current day)."""
    other, kt = (b, kb) if ka == "d" else (a, ka)
    if kt not in ("s", "n", "f"):
        raise TypeError(f"cannot compare a TIME with {other!r}: MySQL reads the TIME as a "
                        "time of the current day")
    if MODE.strict:  # (a write fails on text or a number that is no time: 'abc', 99.99)
        check_time(other, time_micros(other, strict=False), "Truncated incorrect time value")
    other = from_micros(compared_micros(other))
    return (a, other) if ka == "d" else (other, b)


def _promote(a: _date, b: _date) -> tuple[_date, _date]:
    if type(a) is _date:
        a = _datetime.combine(a, _MIDNIGHT)
    if type(b) is _date:
        b = _datetime.combine(b, _MIDNIGHT)
    return a, b


def eq(a: Any, b: Any) -> int | None:
    """``a = b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = coerce_pair(a, b)
    return 1 if a == b else 0


def ne(a: Any, b: Any) -> int | None:
    """``a <> b`` / ``a != b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = coerce_pair(a, b)
    return 1 if a != b else 0


def lt(a: Any, b: Any) -> int | None:
    """``a < b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = coerce_pair(a, b)
    return 1 if a < b else 0


def le(a: Any, b: Any) -> int | None:
    """``a <= b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = coerce_pair(a, b)
    return 1 if a <= b else 0


def gt(a: Any, b: Any) -> int | None:
    """``a > b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = coerce_pair(a, b)
    return 1 if a > b else 0


def ge(a: Any, b: Any) -> int | None:
    """``a >= b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = coerce_pair(a, b)
    return 1 if a >= b else 0


def null_safe_eq(a: Any, b: Any) -> int:
    """``a <=> b``: like ``=`` but NULL <=> NULL is 1 and NULL <=> x is 0; never NULL."""
    if a is None:
        return 1 if b is None else 0
    if b is None:
        return 0
    if type(a) is not type(b):
        a, b = coerce_pair(a, b)
    return 1 if a == b else 0


def is_null(v: Any) -> int:
    """``v IS NULL``; never NULL."""
    return 1 if v is None else 0


def is_not_null(v: Any) -> int:
    """``v IS NOT NULL``; never NULL."""
    return 0 if v is None else 1


def in_list(v: Any, values: tuple[Any, ...]) -> int | None:
    """``v IN (values...)``: 1 if some item equals v; otherwise NULL if v or any item is
    NULL (the NULL item might have been equal); otherwise 0."""
    if v is None:
        return None
    tv = type(v)
    saw_null = False
    for x in values:
        if x is None:
            saw_null = True
        elif type(x) is tv:
            if x == v:
                return 1
        elif eq(v, x):
            return 1
    return None if saw_null else 0


def between(v: Any, lo: Any, hi: Any) -> int | None:
    """``v BETWEEN lo AND hi`` = ``v >= lo AND v <= hi`` (so a NULL bound can still give 0)."""
    return and_(ge(v, lo), le(v, hi))


def between_dates(v: Any, lo: Any, hi: Any) -> int | None:
    """``v BETWEEN lo AND hi`` where MySQL compares all three as dates
    (``types.between_as_dates``): a date or datetime among text or numbers makes it read
    each of them as a date, as it reads one compared with a date (see :func:`coerce_pair`:
    one with a zero month or day by its fields, one that is no date as the zero date), so
    ``'2024-02-29' BETWEEN 'a' AND d`` is 1 for that day, where comparing the two texts
    with each other would make it 0."""
    v = _as_date(v)
    if v is None:  # (MySQL stops here: the bounds are not read, nor can they fail a write)
        return None
    lo, hi = _as_date(lo), _as_date(hi)
    return and_(_dates_at_least(v, lo), _dates_at_least(hi, v))


#: What a value read as a date is paired with to read it (any date: only its type counts).
_DATE_ANCHOR = _date(2000, 1, 1)


def _as_date(v: Any) -> Any:
    """``v`` as a date compares: itself if a date or datetime, else what it reads as."""
    if v is None or isinstance(v, _date):
        return v
    return coerce_pair(_DATE_ANCHOR, v)[1]


def _dates_at_least(a: Any, b: Any) -> int | None:
    """``a >= b`` of two values read as dates (a DATE is midnight beside a DATETIME; a
    ZeroInDate compares by its fields with either)."""
    if a is None or b is None:
        return None
    if type(a) is not type(b) and isinstance(a, _date) and isinstance(b, _date):
        a, b = _promote(a, b)
    return 1 if a >= b else 0
