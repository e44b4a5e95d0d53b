"""Date functions: ``YEAR``, ``HOUR``, ``DATE``, ``DATEDIFF``, ``UNIX_TIMESTAMP``...

Why this module exists: these functions accept a date, a datetime or a string to be parsed
as one; a string that is not a valid date gives NULL, as in MySQL. The parsing itself is in
:mod:`rivulet.values.conversions`; here are the functions and the time-of-day parsing only
they need.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from decimal import Decimal
from typing import Any

from rivulet.values.conversions import to_temporal

_date = _dt.date
_datetime = _dt.datetime
_MIDNIGHT = _dt.time()

_TIME_RE = re.compile(r"\s*(-?)(\d+):(\d{1,2})(?::(\d{1,2})(?:\.\d*)?)?\s*\Z")


def year(v: Any) -> int | None:
    """``YEAR(v)``."""
    if v is None:
        return None
    t = to_temporal(v)
    return None if t is None else t.year


def month(v: Any) -> int | None:
    """``MONTH(v)``."""
    if v is None:
        return None
    t = to_temporal(v)
    return None if t is None else t.month


def day(v: Any) -> int | None:
    """``DAY(v)`` / ``DAYOFMONTH``."""
    if v is None:
        return None
    t = to_temporal(v)
    return None if t is None else t.day


def _time_part(v: Any, index: int) -> int | None:
    """Hour (0), minute (1) or second (2) of a datetime (a date is midnight) or of a time
    string such as '10:05:03' or '272:59:59', which MySQL's HOUR() also accepts."""
    if v is None:
        return None
    t = to_temporal(v)
    if t is not None:
        if not isinstance(t, _datetime):  # a date
            return 0
        return (t.hour, t.minute, t.second)[index]
    if type(v) is str:
        m = _TIME_RE.match(v)
        if m is not None:
            return int(m.group(index + 2) or 0)
    return None


def hour(v: Any) -> int | None:
    """``HOUR(v)``."""
    return _time_part(v, 0)


def minute(v: Any) -> int | None:
    """``MINUTE(v)``."""
    return _time_part(v, 1)


def second(v: Any) -> int | None:
    """``SECOND(v)``."""
    return _time_part(v, 2)


def date_(v: Any) -> _date | None:
    """``DATE(v)``: the date part of a datetime (or of a date string)."""
    if v is None:
        return None
    t = to_temporal(v)
    if t is None:
        return None
    return t.date() if type(t) is _datetime else t


def datediff(a: Any, b: Any) -> int | None:
    """``DATEDIFF(a, b)``: days from b to a; only the date parts count."""
    if a is None or b is None:
        return None
    a = date_(a)
    b = date_(b)
    if a is None or b is None:
        return None
    return (a - b).days


def unix_timestamp(v: Any) -> int | Decimal | None:
    """``UNIX_TIMESTAMP(v)``: seconds since 1970-01-01 00:00:00, treating the value as UTC
    (rivulet has no session time zone). Dates before the epoch give 0, as in MySQL."""
    if v is None:
        return None
    t = to_temporal(v)
    if t is None:
        return None
    if not isinstance(t, _datetime):  # a date
        t = _datetime.combine(t, _MIDNIGHT)
    secs = calendar.timegm(t.timetuple())
    if secs < 0:
        return 0
    if t.microsecond:
        return Decimal(secs) + Decimal(t.microsecond).scaleb(-6)
    return secs
