"""Date arithmetic by an interval: ``x + INTERVAL n unit``, ``DATE_ADD``, ``DATE_SUB``,
``TIMESTAMPADD`` and ``TIMESTAMPDIFF``.

Why this module exists: MySQL adds months to a date by its calendar (Jan 31 + 1 MONTH is
the last day of February: the day is clamped), days and smaller units by the clock, and
reads the interval's value by its unit (``'1 2:03' DAY_MINUTE`` is a day, two hours and
three minutes). Django writes every DurationField sum as ``col + INTERVAL n MICROSECOND``
and its month and year truncations and differences through these functions, so they are
written once here, as MySQL's ``date_add_interval`` and ``Item_func_timestamp_diff`` do.

The planner (rivulet/plan/expressions.py) hands these functions a DATE or a DATETIME (a
date alone gives a DATETIME where the unit is smaller than a day) and the unit as its
upper-case name; a result outside the years 1 to 9999 is NULL (MySQL: NULL with a warning
outside 0 to 9999, an error in a write; Python's dates have no year 0, so a result in year
0, which MySQL gives by months, is NULL here: docs/sql.md's differences list it).
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from rivulet.errors import DatetimeOverflowError
from rivulet.values.conversions import MODE, to_str, to_temporal
from rivulet.values.times import MAX_MICROS, from_micros
from rivulet.values.times import micros as micros_of

_date = _dt.date
_datetime = _dt.datetime
_MIDNIGHT = _dt.time()
_MICRO = 1_000_000

#: The units whose arithmetic is by the calendar's months (the day clamped to the month).
MONTH_UNITS = frozenset({"MONTH", "QUARTER", "YEAR", "YEAR_MONTH"})
#: The units of a day or more: a DATE plus one of them is a DATE.
DATE_UNITS = MONTH_UNITS | {"DAY", "WEEK"}
#: Units of one number (the others, compound, are read from text by their parts).
SIMPLE_UNITS = frozenset({"MICROSECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH",
                          "QUARTER", "YEAR"})
#: Compound units: the parts their text holds, largest first (MySQL's get_interval_value).
COMPOUND_UNITS: dict[str, tuple[str, ...]] = {
    "YEAR_MONTH": ("YEAR", "MONTH"),
    "DAY_HOUR": ("DAY", "HOUR"),
    "DAY_MINUTE": ("DAY", "HOUR", "MINUTE"),
    "DAY_SECOND": ("DAY", "HOUR", "MINUTE", "SECOND"),
    "HOUR_MINUTE": ("HOUR", "MINUTE"),
    "HOUR_SECOND": ("HOUR", "MINUTE", "SECOND"),
    "MINUTE_SECOND": ("MINUTE", "SECOND"),
    "DAY_MICROSECOND": ("DAY", "HOUR", "MINUTE", "SECOND", "MICROSECOND"),
    "HOUR_MICROSECOND": ("HOUR", "MINUTE", "SECOND", "MICROSECOND"),
    "MINUTE_MICROSECOND": ("MINUTE", "SECOND", "MICROSECOND"),
    "SECOND_MICROSECOND": ("SECOND", "MICROSECOND"),
}
UNITS = SIMPLE_UNITS | frozenset(COMPOUND_UNITS)
#: Units whose result carries microseconds (a DATETIME(6)).
MICROSECOND_UNITS = frozenset(u for u in UNITS if u.endswith("MICROSECOND"))
#: Microseconds in each unit of the clock.
_CLOCK_MICROS = {"MICROSECOND": 1, "SECOND": _MICRO, "MINUTE": 60 * _MICRO,
                 "HOUR": 3600 * _MICRO, "DAY": 86400 * _MICRO, "WEEK": 7 * 86400 * _MICRO}
#: The months in each unit of the calendar.
_MONTHS = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
_DIGITS = re.compile(r"\d+", re.ASCII)
#: An integer as text: the only text read alike as a simple unit's value by MySQL and
#: MariaDB (and alike whether the query wrote it quoted or not).
INTEGER_TEXT = re.compile(r"[ \t]*[+-]?\d+[ \t]*", re.ASCII)


class Interval:
    """An interval read from its value and unit: months (by the calendar) and
    microseconds (by the clock), both signed."""

    __slots__ = ("months", "micros")

    def __init__(self, months: int, micros: int) -> None:
        self.months = months
        self.micros = micros


def _whole(n: Any) -> int | None:
    """A simple unit's value as MySQL's val_int reads it: an integer as it is, a DECIMAL
    rounded half away from zero, a DOUBLE rounded to even, integer text as its number;
    None for anything else (the planner refuses what reaches here otherwise)."""
    if type(n) is int or type(n) is bool:
        return int(n)
    if isinstance(n, Decimal):
        return int(n.to_integral_value(rounding=ROUND_HALF_UP))
    if isinstance(n, float):
        return None if n != n or n in (float("inf"), float("-inf")) else round(n)
    text = to_str(n)
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    if INTEGER_TEXT.fullmatch(text):
        return int(text)
    return None


def read_interval(n: Any, unit: str) -> Interval | None:
    """``INTERVAL n unit``; None if ``n`` is NULL or not a value of the unit."""
    if n is None:
        return None
    if unit in SIMPLE_UNITS:
        count = _whole(n)
        if count is None:
            return None
        if unit in _MONTHS:
            return Interval(count * _MONTHS[unit], 0)
        return Interval(0, count * _CLOCK_MICROS[unit])
    return _compound(n, unit)


def _compound(n: Any, unit: str) -> Interval | None:
    """A compound unit's value: its numbers in order, between any other characters, the
    leftmost parts left out if there are fewer (``'1:2' DAY_SECOND`` is a minute and two
    seconds; no number at all is none of each); a microsecond part written with fewer than
    six digits is a fraction (``'1.5' SECOND_MICROSECOND`` is 1.5 seconds, ``'5'`` half a
    second); a leading '-' negates all."""
    parts = COMPOUND_UNITS[unit]
    text = to_str(n)
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    text = text.lstrip(" \t")
    negative = text.startswith("-")
    found = list(_DIGITS.finditer(text))
    if len(found) > len(parts):  # (more numbers than parts: NULL in MySQL)
        return None
    values = [int(m.group()) for m in found]
    if parts[-1] == "MICROSECOND" and found:  # ('5' SECOND_MICROSECOND is 0.5 seconds)
        digits = found[-1].group()
        if len(digits) < 6:
            values[-1] = int(digits.ljust(6, "0"))
    named = dict(zip(parts[len(parts) - len(values):], values))
    months = named.get("YEAR", 0) * 12 + named.get("MONTH", 0)
    micros = sum(named.get(p, 0) * _CLOCK_MICROS[p] for p in _CLOCK_MICROS if p != "WEEK")
    sign = -1 if negative else 1
    return Interval(sign * months, sign * micros)


def _moment(x: Any) -> _date | None:
    if isinstance(x, _date):
        return x
    return to_temporal(x)


#: The units a TIME moves by (the others make it a DATETIME of the current day).
TIME_UNITS = UNITS - MONTH_UNITS - {"WEEK"}


def shift(x: Any, interval: Interval | None, sign: int,
          unit: str) -> _date | _dt.timedelta | None:
    """The DATE or DATETIME ``x`` moved by ``sign`` times ``interval``: a DATE stays one
    for the units of a day or more, else becomes a DATETIME; None outside the years 1 to
    9999. A TIME (moved by :data:`TIME_UNITS` only) stays a TIME; None past 838:59:59, as
    MySQL 8's check_time_range_quick (MariaDB takes 838:59:59.999999)."""
    if x is None or interval is None:
        return None
    if type(x) is _dt.timedelta:
        total = micros_of(x) + sign * interval.micros
        if abs(total) > MAX_MICROS:
            _overflow("time")
            return None
        return from_micros(total)
    t = _moment(x)
    if t is None:
        return None
    if type(t) is _date and unit not in DATE_UNITS:
        t = _datetime.combine(t, _MIDNIGHT)
    months, micros = sign * interval.months, sign * interval.micros
    if months:
        period = t.year * 12 + t.month - 1 + months
        year, month = divmod(period, 12)
        if not 1 <= year <= 9999:
            _overflow("datetime")
            return None
        last = calendar.monthrange(year, month + 1)[1]
        t = t.replace(year=year, month=month + 1, day=min(t.day, last))
    if micros:
        try:
            t = t + _dt.timedelta(microseconds=micros)
        except OverflowError:
            _overflow("datetime")
            return None
    return t


def _overflow(field: str) -> None:
    """A date moved past the years (a TIME past its range): NULL in a read, an error in a
    write (strict mode)."""
    if MODE.strict:
        raise DatetimeOverflowError(f"Datetime function: {field} field overflow")


def date_add(x: Any, n: Any, unit: str) -> _date | _dt.timedelta | str | None:
    """``DATE_ADD(x, INTERVAL n unit)``, ``x + INTERVAL n unit``: of text, text
    (:func:`as_text`)."""
    moved = shift(x, read_interval(n, unit), 1, unit)
    return as_text(moved) if isinstance(x, (str, bytes)) else moved


def date_sub(x: Any, n: Any, unit: str) -> _date | _dt.timedelta | str | None:
    """``DATE_SUB(x, INTERVAL n unit)``, ``x - INTERVAL n unit``."""
    moved = shift(x, read_interval(n, unit), -1, unit)
    return as_text(moved) if isinstance(x, (str, bytes)) else moved


def as_text(t: _date | _dt.timedelta | None) -> str | None:
    """The text MySQL 8 answers for text moved by an interval: a date if the text held a
    date and the unit is of days or more, else a datetime, with six fractional digits if
    it has a fraction (MariaDB always shows the six: '2020-01-02 10:00:00.000000')."""
    if t is None:
        return None
    if type(t) is _date:
        return t.isoformat()
    assert isinstance(t, _datetime)
    return t.isoformat(" ", "microseconds" if t.microsecond else "seconds")


def _datetime_of(x: Any) -> _datetime | None:
    t = _moment(x)
    if t is None:
        return None
    return t if type(t) is _datetime else _datetime.combine(t, _MIDNIGHT)


def timestampdiff(unit: str, a: Any, b: Any) -> int | None:
    """``TIMESTAMPDIFF(unit, a, b)``: ``b - a`` in whole units, truncated toward zero; in
    months (and quarters, years) by the calendar: a month is complete when the later
    value's day and time of day reach the earlier's (MySQL's Item_func_timestamp_diff)."""
    if a is None or b is None:
        return None
    start, end = _datetime_of(a), _datetime_of(b)
    if start is None or end is None:
        return None
    sign = -1 if end < start else 1
    if unit in _MONTHS:
        beg, fin = (end, start) if sign < 0 else (start, end)
        months = (fin.year - beg.year) * 12 + fin.month - beg.month
        if (fin.day, fin.time()) < (beg.day, beg.time()):
            months -= 1
        return sign * (months // _MONTHS[unit])
    delta = abs(end - start)
    total = (delta.days * 86400 + delta.seconds) * _MICRO + delta.microseconds
    return sign * (total // _CLOCK_MICROS[unit])
