"""Date and time functions: ``YEAR``, ``HOUR``, ``MICROSECOND``, ``DATE``, ``DATEDIFF``, ``TIME``,
``TIMEDIFF``, ``ADDTIME``, ``SUBTIME``, ``DAYOFWEEK``, ``TIME_TO_SEC``, ``SEC_TO_TIME``,
``UNIX_TIMESTAMP``, ``CONVERT_TZ``...

Why this module exists: these functions accept a date, a datetime, a TIME or a string to be
parsed as one; a string that is not a valid date (or time) gives NULL, as in MySQL. The
parsing itself is in :mod:`rivulet.values.conversions` (dates) and
:mod:`rivulet.values.times` (TIME); here are the functions.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from decimal import Decimal
from typing import Any

from rivulet.values.conversions import (
    MODE,
    check_time,
    date_fields,
    read_temporal,
    to_number,
    to_str,
    to_temporal,
    truncated,
)
from rivulet.values.times import (
    MAX_MICROS,
    clipped,
    format_time,
    from_micros,
    holds_datetime,
    micros,
    time_micros,
)

_date = _dt.date
_datetime = _dt.datetime
_timedelta = _dt.timedelta
_MIDNIGHT = _dt.time()
_MICRO = 1_000_000

#: A time zone written as an offset from UTC: a sign, hours (any number of digits, none
#: is 0), a colon and minutes, nothing else (MySQL's ``str_to_offset``).
_OFFSET_RE = re.compile(r"([+-])([0-9]*):([0-9]+)", re.ASCII)
#: The widest offsets MySQL 8 takes (since 8.0.19; MariaDB and older MySQL stop at -12:59
#: and +13:00).
MAX_OFFSET = _dt.timedelta(hours=14)
MIN_OFFSET = -_dt.timedelta(hours=13, minutes=59)
#: The TIMESTAMP range: CONVERT_TZ leaves a value whose UTC time falls outside it as it is.
_TIMESTAMP_MIN = _datetime(1970, 1, 1, 0, 0, 1)
_TIMESTAMP_MAX = _datetime(2038, 1, 19, 3, 14, 7)
#: The last second UNIX_TIMESTAMP answers (MySQL 8.0.28 and later, 64-bit platforms).
_UNIX_TIMESTAMP_MAX = calendar.timegm((3001, 1, 18, 23, 59, 59))


def year(v: Any) -> int | None:
    """``YEAR(v)`` (of a date with a zero month or day too: :func:`date_fields`)."""
    if v is None:
        return None
    fields = date_fields(v)
    return None if fields is None else fields[0]


def month(v: Any) -> int | None:
    """``MONTH(v)`` (of a date with a zero month or day too: :func:`date_fields`)."""
    if v is None:
        return None
    fields = date_fields(v)
    return None if fields is None else fields[1]


def day(v: Any) -> int | None:
    """``DAY(v)`` / ``DAYOFMONTH`` (of a date with a zero month or day too: :func:`date_fields`)."""
    if v is None:
        return None
    fields = date_fields(v)
    return None if fields is None else fields[2]


def dayofweek(v: Any) -> int | None:
    """``DAYOFWEEK(v)``: 1 for a Sunday to 7 for a Saturday; NULL for no date (or one with
    a zero month or day)."""
    if v is None:
        return None
    t = to_temporal(v)
    return None if t is None else t.isoweekday() % 7 + 1


def weekday(v: Any) -> int | None:
    """``WEEKDAY(v)``: 0 for a Monday to 6 for a Sunday."""
    if v is None:
        return None
    t = to_temporal(v)
    return None if t is None else t.weekday()


def dayofyear(v: Any) -> int | None:
    """``DAYOFYEAR(v)``: 1 to 366."""
    if v is None:
        return None
    t = to_temporal(v)
    return None if t is None else t.timetuple().tm_yday


def _time_part(v: Any, index: int) -> int | None:
    """Hour (0), minute (1) or second (2) of a datetime (a date is midnight), of a TIME or
    of text or a number read as one, as MySQL's HOUR() reads them ('10:05:03', '272:59:59',
    101112, a datetime's time part; '2024-01-02' is 00:20:24, '20240102' past the range
    838:59:59): a TIME's hours go past 23 and its sign is dropped."""
    if v is None:
        return None
    if isinstance(v, _date):
        if not isinstance(v, _datetime):  # a date
            return 0
        return (v.hour, v.minute, v.second)[index]
    n = time_micros(v, strict=False)
    check_time(v, n, "Incorrect time value")
    if n is None:
        return None
    n = clipped(n, 6)
    seconds = abs(n) // _MICRO
    return (seconds // 3600, seconds // 60 % 60, seconds % 60)[index]


def hour(v: Any) -> int | None:
    """``HOUR(v)``."""
    return _time_part(v, 0)


def minute(v: Any) -> int | None:
    """``MINUTE(v)``."""
    return _time_part(v, 1)


def second(v: Any) -> int | None:
    """``SECOND(v)``."""
    return _time_part(v, 2)


def microsecond(v: Any) -> int | None:
    """``MICROSECOND(v)``: the fraction of a second of a datetime (a date's is 0), of a TIME
    (its sign dropped) or of text or a number read as one, as :func:`hour` reads them."""
    if v is None:
        return None
    if isinstance(v, _date):
        return v.microsecond if isinstance(v, _datetime) else 0
    n = time_micros(v, strict=False)
    check_time(v, n, "Incorrect time value")
    if n is None:
        return None
    return abs(clipped(n, 6)) % _MICRO


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
    (rivulet has no session time zone). Dates outside MySQL 8's range (1970-01-01
    00:00:01 to 3001-01-18 23:59:59.999999 UTC) give 0, as there. (MariaDB answers NULL
    outside 1970 to 2038-01-19 03:14:07.)"""
    if v is None:
        return None
    t = to_temporal(v)
    if t is None:
        return None
    if not isinstance(t, _datetime):  # a date
        t = _datetime.combine(t, _MIDNIGHT)
    secs = calendar.timegm(t.timetuple())
    if secs < 0 or secs > _UNIX_TIMESTAMP_MAX:
        return 0
    if t.microsecond:
        return Decimal(secs) + Decimal(t.microsecond).scaleb(-6)
    return secs


def _time_or_datetime(v: Any) -> _timedelta | _datetime | None:
    """A TIMEDIFF argument: a datetime (a DATE is midnight; text must have a time part, as
    '2020-01-01' reads as a TIME, 00:20:20), else a TIME; None if neither."""
    if type(v) is _timedelta:
        return v
    if type(v) is _date:
        return _datetime.combine(v, _MIDNIGHT)
    t = read_temporal(v) if type(v) is not int else None
    if type(t) is _datetime:
        return t
    n = time_micros(v, strict=False)
    check_time(v, n, "Incorrect time value")
    return None if n is None else from_micros(n)


def time_(v: Any) -> _timedelta | None:
    """``TIME(v)``: the TIME in v (a datetime's time part; text or a number read as a TIME);
    NULL if there is none."""
    if v is None:
        return None
    n = time_micros(v, strict=False)
    check_time(v, n, "Incorrect time value")
    # (text has six fractional digits: TIME('20240102') is 838:59:59.999999)
    return None if n is None else from_micros(clipped(n, 6 if type(v) in (str, bytes) else 0))


def timediff(a: Any, b: Any) -> _timedelta | None:
    """``TIMEDIFF(a, b)``: a - b as a TIME, both TIMEs or both datetimes (else NULL), clipped
    to +-838:59:59."""
    if a is None or b is None:
        return None
    x, y = _time_or_datetime(a), _time_or_datetime(b)
    if isinstance(x, _datetime) and isinstance(y, _datetime):
        return from_micros(clipped(micros(x - y)))
    if isinstance(x, _timedelta) and isinstance(y, _timedelta):
        return from_micros(clipped(micros(x - y)))
    return None  # (a TIME and a datetime, or not a time at all)


def addtime(a: Any, b: Any) -> _timedelta | _datetime | None:
    """``ADDTIME(a, b)``: the TIME or DATETIME ``a`` (the planner refuses others) plus ``b``
    read as a TIME; NULL if ``b`` is none (text holding a date too) or a DATETIME leaves
    the years 1 to 9999. A TIME is not clipped here: the planner casts it to its type."""
    return _shifted(a, b, 1)


def subtime(a: Any, b: Any) -> _timedelta | _datetime | None:
    """``SUBTIME(a, b)``: ``a`` less ``b``, as :func:`addtime`."""
    return _shifted(a, b, -1)


def _shifted(a: Any, b: Any, sign: int) -> _timedelta | _datetime | None:
    if a is None or b is None:
        return None
    if isinstance(b, (str, bytes)) and holds_datetime(b):
        return None
    n = time_micros(b, strict=False)
    check_time(b, n, "Incorrect time value")
    if n is None:
        return None
    if type(a) is _timedelta:
        total = micros(a) + sign * n
        if MODE.strict and abs(total) >= MAX_MICROS + _MICRO:  # (a write fails; a read clips)
            truncated("Truncated incorrect time value", format_time(from_micros(total)))
        return from_micros(total)
    t = a if type(a) is _datetime else to_temporal(a)
    if t is None:
        return None
    moment = t if type(t) is _datetime else _datetime.combine(t, _MIDNIGHT)
    try:
        return moment + sign * from_micros(n)
    except OverflowError:
        return None


def time_to_sec(v: Any) -> int | None:
    """``TIME_TO_SEC(v)``: the TIME's whole seconds, negative for a negative TIME (the
    fraction is dropped, as MySQL 8 does)."""
    if v is None:
        return None
    n = time_micros(v, strict=False)
    check_time(v, n, "Incorrect time value")
    if n is None:
        return None
    seconds = abs(n) // _MICRO
    return -seconds if n < 0 else seconds


def sec_to_time(v: Any) -> _timedelta | None:
    """``SEC_TO_TIME(n)``: n seconds as a TIME, clipped to +-838:59:59."""
    if v is None:
        return None
    n = to_number(v)
    if isinstance(n, float):
        if n != n:
            return None
        n = Decimal(repr(n)) if abs(n) < 1e15 else Decimal(int(n))
    whole = Decimal(n).scaleb(6).to_integral_value(rounding="ROUND_HALF_UP")
    return from_micros(clipped(int(whole)))


def _zone_offset(zone: Any) -> _dt.timedelta | None:
    """The offset from UTC of time zone ``zone``: an offset such as '+05:30', or 'SYSTEM'
    (rivulet's time is UTC). A named zone ('UTC', 'Europe/Paris') is None, as in a MySQL
    server without time zone tables, and so is anything else."""
    text = to_str(zone)
    if type(text) is bytes:
        text = text.decode("utf-8", "replace")
    if text.upper() == "SYSTEM":
        return _dt.timedelta()
    m = _OFFSET_RE.fullmatch(text)
    if m is None:
        return None
    hours, minutes = int(m.group(2) or 0), int(m.group(3))
    if minutes >= 60:
        return None
    offset = _dt.timedelta(hours=hours, minutes=minutes)
    if m.group(1) == "-":
        offset = -offset
    return offset if MIN_OFFSET <= offset <= MAX_OFFSET else None


def convert_tz(v: Any, from_zone: Any, to_zone: Any) -> _datetime | None:
    """``CONVERT_TZ(v, from_zone, to_zone)``: the datetime ``v`` (a date is its midnight)
    read in ``from_zone`` and told in ``to_zone``; NULL for a zone that is not an offset
    or 'SYSTEM' (:func:`_zone_offset`). As in MySQL, a value whose UTC time falls outside
    the TIMESTAMP range (1970-01-01 00:00:01 to 2038-01-19 03:14:07) is returned as it is."""
    if v is None or from_zone is None or to_zone is None:
        return None
    t = to_temporal(v)
    if t is None:
        return None
    if not isinstance(t, _datetime):  # a date
        t = _datetime.combine(t, _MIDNIGHT)
    source, target = _zone_offset(from_zone), _zone_offset(to_zone)
    if source is None or target is None:
        return None
    if source == target:
        return t
    try:
        utc = t - source
    except OverflowError:  # beyond year 1..9999: outside the TIMESTAMP range anyway
        return t
    if not _TIMESTAMP_MIN <= utc.replace(microsecond=0) <= _TIMESTAMP_MAX:
        return t
    return utc + target
