"""TIME values: signed durations from -838:59:59 to 838:59:59, as ``datetime.timedelta``.

Why this module exists: a MySQL TIME is an elapsed time or a time of day (it may be negative
and exceed 24 hours), read from text in several forms ('10:11:12', '1 10:11', '101112',
'-00:30', a datetime's time part) and from numbers (``101112`` is 10:11:12), rounded to the
column's fractional digits and shown as 'HH:MM:SS[.ffffff]'. PyMySQL hands a TIME to Python
as a ``timedelta``, so that is rivulet's value of a TIME too. The parsing and formatting are
written once here, for the write checks (:mod:`rivulet.values.schema`, strict: bad text is
an error), the conversions and functions (lenient: bad text is NULL, too large a value is
clipped to the range, as MySQL does with a warning) and the servers' encodings.

Values are handled as whole microseconds (an ``int``) inside: ``timedelta`` normalizes a
negative duration to negative days plus positive seconds, which is awkward to format.
This module imports nothing of rivulet.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

_MICRO = 1_000_000
#: MySQL's TIME range: -838:59:59 to 838:59:59 (also with fractional digits: .000000).
MAX_MICROS = (838 * 3600 + 59 * 60 + 59) * _MICRO
#: Positive numbers from 8 digits up to the last datetime are read as a datetime
#: (YYYYMMDD, YYMMDDhhmmss, YYYYMMDDhhmmss), as MySQL's number_to_time does.
_DATETIME_NUMBERS = range(10**7, 99991231235959 + 1)
TIME_MAX = _dt.timedelta(microseconds=MAX_MICROS)
#: Where MySQL clips a value beyond the range: 838:59:59 with the largest fraction.
BEYOND_MICROS = MAX_MICROS + _MICRO - 1

#: TIME text (MySQL's str_to_time): an optional sign, then 'D HH[:MM[:SS]]', 'HH:MM[:SS]'
#: or plain digits read as [[H]HMM]SS, then an optional fraction.
_TIME_TEXT = re.compile(
    r"[ \t\n\r\v\f]*(-)?"
    r"(?:(\d+) +(\d+)(?::(\d+)(?::(\d+))?)?"
    r"|(\d+):(\d+)(?::(\d+))?"
    r"|(\d+))"
    r"(?:\.(\d*))?"
)
#: An exponent after a number's digits.
_EXPONENT = re.compile(r"[eE][+-]?\d")
#: ASCII punctuation: MySQL takes any of it between the parts of a date or a time.
PUNCTUATION = r"[!-/:-@\[-`{-~]"
#: Text that is a datetime, which MySQL's str_to_time reads before a time: a date of
#: three numbers between any punctuation, spaces or a 'T', then the hour and, between any
#: punctuation, the minutes, the seconds and a fraction ('2024-01-02 10:11:12', '1-2-3 5'
#: is 05:00:00, '10:11:12 5' is 2010-11-12 05:00:00); or 12 or 14 digits
#: ('20240102101112'). Its time part is the TIME. (A date alone is not: MySQL reads
#: '2020-01-02' as 00:20:20 and ignores the rest.)
_DATED_TIME_TEXT = re.compile(
    r"[ \t\n\r\v\f]*(\d+)" + PUNCTUATION + r"(\d+)" + PUNCTUATION + r"(\d+)(?:[ \t]+|T)(\d+)"
    r"(?:" + PUNCTUATION + r"(\d+)(?:" + PUNCTUATION + r"(\d+)(?:\.(\d*))?)?)?"
    r"|[ \t\n\r\v\f]*(\d{12}|\d{14})(?:\.(\d*))?(?=[ \t\n\r\v\f]*\Z)",
    re.ASCII,
)
#: What may follow a datetime written to a TIME column.
_BLANK_END = re.compile(r"[ \t\n\r\v\f]*\Z")


def micros(t: _dt.timedelta) -> int:
    """A timedelta as whole microseconds (negative for a negative duration)."""
    return (t.days * 86400 + t.seconds) * _MICRO + t.microseconds


def from_micros(n: int) -> _dt.timedelta:
    return _dt.timedelta(microseconds=n)


def _fraction(digits: str | None) -> int:
    """Microseconds of a fraction's digits, rounded half up at the sixth digit."""
    if not digits:
        return 0
    if len(digits) <= 6:
        return int(digits.ljust(6, "0"))
    return int(digits[:6]) + (1 if digits[6] >= "5" else 0)


def parse_time(text: str, *, strict: bool) -> int | None:
    """Microseconds of a TIME written as ``text``; None if it is not one.

    ``strict`` (a write) wants the whole text to be the time (trailing spaces aside); a
    function or a comparison reads the time at its start and ignores the rest, as MySQL
    does with a warning. Minutes and seconds must be below 60. The range is not checked."""
    dated = _DATED_TIME_TEXT.match(text)
    if dated is not None:
        if strict and _BLANK_END.match(text, dated.end()) is None:
            return None
        return _time_of_datetime_text(dated, strict=strict)
    m = _TIME_TEXT.match(text)
    if m is None:
        return None
    rest = text[m.end():]
    if strict and rest.strip(" \t\n\r\v\f"):
        return None
    sign, days, dh, dm, ds, h, mi, s, digits, frac = m.groups()
    if digits is not None and _EXPONENT.match(rest):
        return None  # a number with an exponent ('1e3', '1.5e1') is no time to MySQL
    if days is not None:
        hours, minutes, seconds = int(days) * 24 + int(dh), int(dm or 0), int(ds or 0)
    elif h is not None:
        hours, minutes, seconds = int(h), int(mi), int(s or 0)
    else:
        number = int(digits)
        hours, minutes, seconds = number // 10000, number // 100 % 100, number % 100
    if minutes > 59 or seconds > 59:
        return None
    total = ((hours * 60 + minutes) * 60 + seconds) * _MICRO + _fraction(frac)
    return -total if sign else total


def _time_of_datetime_text(m: re.Match[str], *, strict: bool) -> int | None:
    g = m.groups()
    if g[0] is not None:
        if len(g[0]) > 4:  # (a year of five digits makes no date: NULL)
            return None
        year, month, day = full_year(g[0]), int(g[1]), int(g[2])
        hour, minute, second = int(g[3]), int(g[4] or 0), int(g[5] or 0)
        frac = g[6]
    else:
        digits = g[7]
        if len(digits) == 12:
            digits = str(full_year(digits[:2])) + digits[2:]
        year, month, day = int(digits[:4]), int(digits[4:6]), int(digits[6:8])
        hour, minute, second = int(digits[8:10]), int(digits[10:12]), int(digits[12:14])
        frac = g[8]
    if strict:  # a write wants a real datetime ('2024-02-30 10:11:12' is refused)
        try:
            _dt.datetime(year, month, day, hour, minute, second)
        except ValueError:
            return None
    elif not _loose_datetime(month, day, hour, minute, second):
        return None
    return ((hour * 60 + minute) * 60 + second) * _MICRO + _fraction(frac)


def full_year(digits: str) -> int:
    """A year written with two digits is 2000-2069 or 1970-1999, as MySQL reads it; one of
    1, 3 or 4 digits is as written."""
    year = int(digits)
    if len(digits) == 2:
        year += 2000 if year < 70 else 1900
    return year


def holds_datetime(text: str | bytes) -> bool:
    """Whether text is a date with a time ('2024-01-02 10:11:12', '20240102101112'), which
    MySQL's ``time_col = 'text'`` in a WHERE or ON compares as a datetime of the current
    day (elsewhere as its time part): the planner refuses that comparison."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return _DATED_TIME_TEXT.match(text) is not None


def _loose_datetime(month: int, day: int, hour: int, minute: int, second: int) -> bool:
    """Whether these fields make a datetime MySQL reads a TIME from outside a write: each
    within its range, the day not checked against the month (2024-02-30 and 2024-00-01
    give their time part)."""
    return month <= 12 and day <= 31 and hour <= 23 and minute <= 59 and second <= 59


def _time_of_datetime_number(n: int) -> int | None:
    """The time part of a positive number read as a datetime (MySQL's
    number_to_datetime): YYYYMMDD (midnight), YYMMDDhhmmss (years 2000-2069 and
    1970-1999) or YYYYMMDDhhmmss. None if it is none of them."""
    if n <= 99991231:
        if n < 10000101:
            return None
        n *= 1_000_000
    elif n < 101000000:
        return None
    elif n <= 691231235959:
        n += 20000000000000
    elif n < 700101000000:
        return None
    elif n <= 991231235959:
        n += 19000000000000
    elif n < 10000101000000:
        return None
    date, time = divmod(n, 1_000_000)
    hour, minute, second = time // 10000, time // 100 % 100, time % 100
    if not _loose_datetime(date // 100 % 100, date % 100, hour, minute, second):
        return None
    return ((hour * 60 + minute) * 60 + second) * _MICRO


def number_to_time(x: int | float | Decimal) -> int | None:
    """Microseconds of a number read as a TIME: ``[-]HHMMSS[.ffffff]`` (``101112`` is
    10:11:12, ``59.5`` is 00:00:59.5); a positive number of 8 to 14 digits is a datetime
    and gives its time part (``20240102`` is 00:00:00). None if it is not a time (minutes
    or seconds past 59, no datetime). The range is not checked: a comparison or a CAST
    clips a larger one (``8390000`` compares above every TIME), a write refuses it."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    exact = Decimal(repr(x)) if isinstance(x, float) else Decimal(x)
    negative = exact < 0
    exact = abs(exact)
    whole = int(exact)
    frac = int((exact - whole).scaleb(6).to_integral_value(rounding=ROUND_HALF_UP))
    if not negative and whole in _DATETIME_NUMBERS:
        time = _time_of_datetime_number(whole)
        return None if time is None else time + frac
    hours, minutes, seconds = whole // 10000, whole // 100 % 100, whole % 100
    if minutes > 59 or seconds > 59:
        return None
    total = ((hours * 60 + minutes) * 60 + seconds) * _MICRO + frac
    return -total if negative else total


def time_micros(v: Any, *, strict: bool) -> int | None:
    """Microseconds of any non-NULL value read as a TIME; None if it is not one.

    A datetime gives its time part, a date 00:00:00 (as MySQL stores them in a TIME
    column), a Python ``time`` its own; text as :func:`parse_time`, numbers as
    :func:`number_to_time`. The range is not checked."""
    if isinstance(v, _dt.timedelta):
        return micros(v)
    if isinstance(v, str):
        return parse_time(v, strict=strict)
    if isinstance(v, bytes):
        return parse_time(v.decode("utf-8", "replace"), strict=strict)
    if isinstance(v, (bool, int, float, Decimal)):
        return number_to_time(int(v) if isinstance(v, bool) else v)
    if isinstance(v, _dt.datetime):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * _MICRO + v.microsecond
    if isinstance(v, _dt.date):
        return 0
    if isinstance(v, _dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * _MICRO + v.microsecond
    return None


def compared_micros(v: Any) -> int:
    """Microseconds of a non-NULL value as a TIME compares with it: read as a TIME
    (:func:`time_micros`), 00:00:00 if it is none (MySQL, with a warning), and clipped to
    +-838:59:59.999999 (``'839:00:00'`` equals a TIME(6)'s 838:59:59.999999)."""
    n = time_micros(v, strict=False)
    return 0 if n is None else max(-BEYOND_MICROS, min(BEYOND_MICROS, n))


def round_micros(n: int, fsp: int) -> int:
    """``n`` rounded to ``fsp`` fractional digits, half away from zero (MySQL rounds a
    TIME's fraction to the column's precision)."""
    if fsp >= 6:
        return n
    quantum = 10 ** (6 - fsp)
    q, r = divmod(abs(n), quantum)
    if 2 * r >= quantum:
        q += 1
    return q * quantum if n >= 0 else -q * quantum


def clipped(n: int, fsp: int = 0) -> int:
    """``n`` (already rounded to ``fsp`` fractional digits) clipped to the TIME range
    with that many digits: +-838:59:59 and as many nines as it has digits (MySQL clips a
    computed TIME, with a warning; ``CAST('839:00:00' AS TIME(3))`` is 838:59:59.999)."""
    end = MAX_MICROS + _MICRO - 10 ** (6 - fsp)
    return max(-end, min(end, n))


def format_time(t: _dt.timedelta, fsp: int | None = None) -> str:
    """MySQL's text of a TIME: '[-]HH:MM:SS', with '.ffffff' if it has a fraction, or with
    exactly ``fsp`` fractional digits (a TIME(3) shows '01:02:03.500', a TIME(6)
    '00:00:00.000000'; the value is already rounded to them)."""
    n = micros(t)
    sign = "-" if n < 0 else ""
    seconds, frac = divmod(abs(n), _MICRO)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}"
    if fsp is not None:
        return f"{text}.{frac:06d}"[:len(text) + 1 + fsp] if fsp > 0 else text
    return f"{text}.{frac:06d}" if frac else text


def time_to_number(t: _dt.timedelta) -> int | Decimal:
    """A TIME in numeric context: ``[-]HHMMSS``, a DECIMAL ``HHMMSS.ffffff`` with a
    fraction (``'10:11:12' + 0`` is 101112)."""
    n = micros(t)
    seconds, frac = divmod(abs(n), _MICRO)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    whole = hours * 10000 + minutes * 100 + seconds
    if frac:
        number = Decimal(whole) + Decimal(frac).scaleb(-6)
        return -number if n < 0 else number
    return -whole if n < 0 else whole
