"""Conversions between SQL values: the bottom of :mod:`rivulet.values`.

Why this module exists: MySQL converts freely between kinds (a string in numeric context is
its numeric prefix, a date in numeric context is ``YYYYMMDD``, a float in string context is
its shortest form), and every other module here leans on those rules. Keeping them in one
place, importing nothing else of rivulet but its errors, lets the other modules import them
one way only. A write statement converts under MySQL's strict mode (:func:`strict_mode`):
where a read carries on with a warning, the write fails.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import math
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, NoReturn, overload

from rivulet.errors import TruncatedValueError
from rivulet.values.datetexts import (
    COMPACT_DATE_RE,
    WHOLE_DATE_RE,
    Parts,
    parse_temporal,
    temporal_of,
    text_parts,
)
from rivulet.values.enumerations import EnumValue
from rivulet.values.numerals import decimal_text, double_text
from rivulet.values.times import format_time, parse_time, time_micros, time_to_number

_date = _dt.date
_datetime = _dt.datetime
_timedelta = _dt.timedelta

_DBL_MAX = 1.7976931348623157e308


# --------------------------------------------------------------------------- strict mode


class _Mode(threading.local):
    """How this thread converts: ``strict`` while it evaluates a write statement."""

    strict = False


#: MySQL's strict mode (its default ``sql_mode`` has STRICT_TRANS_TABLES) fails a write
#: statement whose evaluation makes a conversion MySQL reports as truncating: text read as
#: a number that is not all a number ('abc', '12x', '' in ``v = 5``, ``v + 1``), text or a
#: number read as a date that is none. A read makes the same conversion with a warning, and
#: rivulet carries on silently. The conversions below consult this flag only once they
#: have found such a value, so reads pay nothing for it.
MODE = _Mode()


@contextmanager
def strict_mode() -> Iterator[None]:
    """Evaluate a write statement: within, a truncating conversion raises
    :class:`~rivulet.errors.TruncatedValueError` (MySQL's error 1292)."""
    before = MODE.strict
    MODE.strict = True
    try:
        yield
    finally:
        MODE.strict = before


def truncated(message: str, value: Any) -> NoReturn:
    """Fail a write statement as MySQL's strict mode does: error 1292 with MySQL's message
    (``Truncated incorrect DOUBLE value: 'abc'``)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    elif not isinstance(value, str):
        value = to_str(value)
    raise TruncatedValueError(f"{message}: '{value}'")


#: What MySQL skips around a number or a date in text without a warning that counts.
_SPACE = " \t\n\r\v\f"

#: The numeric prefix MySQL reads from a string (my_strtod): optional leading whitespace,
#: sign, digits with an optional fraction, an optional exponent. No hex, no inf/nan.
_NUMERIC_PREFIX = re.compile(
    r"[ \t\n\r\v\f]*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)", re.ASCII
).match


def text_to_float(s: str | bytes, what: str = "DOUBLE") -> float:
    """Convert a string to a number the way MySQL does in numeric context.

    The longest numeric prefix is used and the rest ignored ('12abc' -> 12.0, ' 3.5x' -> 3.5);
    no numeric prefix gives 0.0 ('abc' -> 0.0). MySQL warns and carries on; so do we, silently,
    except in a write statement (:data:`MODE`), which fails as MySQL's strict mode fails it:
    ``Truncated incorrect DOUBLE value`` (``what`` names the type MySQL converts to: a
    comparison with an integer converts to DECIMAL, a function's integer argument to
    INTEGER). Spaces after the number are no truncation.
    """
    text = s.decode("latin-1") if isinstance(s, bytes) else s
    m = _NUMERIC_PREFIX(text)
    if m is None:
        if MODE.strict:
            truncated(f"Truncated incorrect {what} value", s)
        return 0.0
    if m.end() != len(text) and MODE.strict and text[m.end():].strip(_SPACE):
        truncated(f"Truncated incorrect {what} value", s)
    x = float(m.group(1))
    if x in (math.inf, -math.inf):  # MySQL saturates at the largest double
        if MODE.strict:
            truncated(f"Truncated incorrect {what} value", s)
        return _DBL_MAX if x > 0 else -_DBL_MAX
    return x


def text_to_decimal(s: str | bytes) -> Decimal:
    """A string's numeric prefix as an exact DECIMAL (``CAST('1.25x' AS DECIMAL(5,2))``
    reads 1.25 without going through a double); no prefix reads 0. A write statement fails
    on text that is not all a number, as :func:`text_to_float` says."""
    text = s.decode("latin-1") if isinstance(s, bytes) else s
    m = _NUMERIC_PREFIX(text)
    if m is None or (m.end() != len(text) and text[m.end():].strip(_SPACE)):
        if MODE.strict:
            truncated("Truncated incorrect DECIMAL value", s)
        if m is None:
            return Decimal(0)
    assert m is not None
    return Decimal(m.group(1))


def _int_to_float(x: int) -> float:
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def as_float(v: Any) -> float:
    """A non-NULL value as a MySQL DOUBLE (comparison and floating-point arithmetic)."""
    t = type(v)
    if t is float:
        return v
    if t is str or t is bytes:
        return text_to_float(v)
    if t is int or t is bool:
        return _int_to_float(v)
    if t is EnumValue:
        return float(v.position)
    if t is _timedelta:
        return float(time_to_number(v))
    return float(v)


def temporal_to_number(v: _date) -> int:
    """DATE -> YYYYMMDD, DATETIME -> YYYYMMDDhhmmss, as MySQL does in numeric context. A
    DATETIME column has no fractional seconds in MySQL (DATETIME is DATETIME(0)); those
    rivulet keeps are left out here, so that the number is always an integer."""
    n = v.year * 10000 + v.month * 100 + v.day
    if type(v) is _datetime:
        n = n * 1000000 + v.hour * 10000 + v.minute * 100 + v.second
    return n


def temporal_to_decimal(v: _date) -> int | Decimal:
    """A date as :func:`temporal_to_number`, but a DATETIME with its fractional seconds:
    YYYYMMDDhhmmss.ffffff (the number of a DATETIME(fsp) column, which the planner rounds to
    its places where it asks for it)."""
    n = temporal_to_number(v)
    if type(v) is _datetime and v.microsecond:
        return Decimal(n) + Decimal(v.microsecond).scaleb(-6)
    return n


@overload
def to_number(v: None) -> None: ...
@overload
def to_number(v: str | bytes | int | float | Decimal | _date | _timedelta
              ) -> int | float | Decimal: ...
def to_number(v: Any) -> int | float | Decimal | None:
    """A value as a number for arithmetic: strings -> float (MySQL uses DOUBLE), bool -> int,
    dates -> YYYYMMDD, TIME -> [-]HHMMSS, an ENUM value -> its index; numbers unchanged."""
    t = type(v)
    if t is int or t is float or t is Decimal or v is None:
        return v
    if t is bool:
        return int(v)
    if t is str or t is bytes:
        return text_to_float(v)
    if t is EnumValue:
        return v.position
    if t is _timedelta:
        return time_to_number(v)
    if isinstance(v, _date):
        return temporal_to_number(v)
    raise TypeError(f"not an SQL value: {v!r}")


@overload
def to_str(v: None) -> None: ...
@overload
def to_str(v: str | bytes | int | float | Decimal | _date | _timedelta) -> str | bytes: ...
def to_str(v: Any) -> str | bytes | None:
    """A value as MySQL renders it in string context (CONCAT, LIKE, string functions).

    int -> ``str(int)``, bool -> '1'/'0', float -> MySQL's shortest form (``1.0`` -> '1'),
    Decimal -> plain notation (never exponent), DATE -> 'YYYY-MM-DD', DATETIME ->
    'YYYY-MM-DD hh:mm:ss[.ffffff]', TIME -> '[-]HH:MM:SS[.ffffff]', an ENUM value -> its
    member's text (a plain ``str``). ``bytes`` stay bytes (MySQL binary strings).
    """
    t = type(v)
    if t is str or t is bytes or v is None:
        return v
    if t is int:
        return str(v)
    if t is float:
        return double_text(v)
    if t is Decimal:
        return decimal_text(v)
    if t is bool:
        return "1" if v else "0"
    if t is _datetime:
        return v.isoformat(" ")
    if t is _date:
        return v.isoformat()
    if t is EnumValue:
        return str(v)
    if t is _timedelta:
        return format_time(v)
    raise TypeError(f"not an SQL value: {v!r}")


def to_int(v: Any) -> int:
    """A non-NULL value as an integer argument (positions, lengths, counts): MySQL rounds
    non-integers half away from zero."""
    if type(v) is int:
        return v
    v = text_to_float(v, "INTEGER") if type(v) is str or type(v) is bytes else to_number(v)
    if type(v) is int:
        return v
    if type(v) is float:
        if v != v:
            return 0
        if v in (math.inf, -math.inf):
            return (1 << 63) - 1 if v > 0 else -(1 << 63)
        v = Decimal(v)
    return int(v.to_integral_value(rounding=ROUND_HALF_UP))


#: Years MySQL reads two-digit years from: 70-99 are 1970-1999, 00-69 are 2000-2069.
_YY_PART_YEAR = 70


def number_to_temporal(n: int | float | Decimal) -> _date | None:
    """A number read as a date (MySQL's ``number_to_datetime``): YYYYMMDD, YYMMDD,
    YYYYMMDDhhmmss or YYMMDDhhmmss, a fraction being microseconds of a datetime (and
    ignored after a date); None where that is not a valid date (0, negative numbers, 13th
    months...)."""
    parts = _number_parts(n)
    return None if parts is None else temporal_of(parts)


def _number_parts(n: int | float | Decimal) -> Parts | None:
    """The fields of a number read as a date (see :func:`number_to_temporal`), unchecked;
    None for a number of no date's length."""
    if type(n) is float:
        if not math.isfinite(n):
            return None
        n = Decimal(repr(n))
    whole = int(n)
    micro = 0
    if type(n) is Decimal and n != whole:
        micro = int(((n - whole) * 1000000).to_integral_value())
    if whole <= 0 or whole < 101:
        return None
    timed = True
    if whole > 99999999999999:
        return None  # (past YYYYMMDDhhmmss: MySQL's number_to_datetime reads no date)
    if whole >= 10000101000000:
        pass
    elif whole <= (_YY_PART_YEAR - 1) * 10000 + 1231:
        whole, timed = (whole + 20000000) * 1000000, False
    elif whole < _YY_PART_YEAR * 10000 + 101:
        return None
    elif whole <= 991231:
        whole, timed = (whole + 19000000) * 1000000, False
    elif whole < 10000101:
        return None
    elif whole <= 99991231:
        whole, timed = whole * 1000000, False
    elif whole < 101000000:
        return None
    elif whole <= (_YY_PART_YEAR - 1) * 10000000000 + 1231235959:
        whole += 20000000000000
    elif whole < _YY_PART_YEAR * 10000000000 + 101000000:
        return None
    elif whole <= 991231235959:
        whole += 19000000000000
    day_part, time_part = divmod(whole, 1000000)
    year, md = divmod(day_part, 10000)
    month, day = divmod(md, 100)
    if not timed:  # a fraction of a date-only number is ignored
        return year, month, day, None, 0, 0, 0
    hour, ms = divmod(time_part, 10000)
    minute, second = divmod(ms, 100)
    return year, month, day, hour, minute, second, micro


def _written_parts(v: Any) -> Parts | None:
    """The fields of text or a number read as a date, unchecked (None for other values and
    for what has no date's shape); a number from 0 to 1 is the zero date, as MySQL reads
    it (its whole part 0)."""
    t = type(v)
    if t is int or t is float or t is Decimal:
        return _ZERO_PARTS if 0 <= v < 1 else _number_parts(v)
    if t is str or t is bytes:
        return text_parts(v.decode("utf-8", "replace") if t is bytes else v)
    return None


_ZERO_PARTS: Parts = (0, 0, 0, None, 0, 0, 0)


def _in_range(parts: Parts) -> bool:
    """Whether ``parts`` are a date MySQL's TIME_FUZZY_DATE reading takes: each field in its
    range, a month or day of 0 allowed (and year 0), a day past its month's end not."""
    year, month, day, hour, minute, second, _micro = parts
    if month > 12 or day > 31 or (hour is not None and (hour > 23 or minute > 59
                                                        or second > 59)):
        return False
    # (year 0 is no leap year for MySQL; year 1 has its calendar)
    return not (month and day) or day <= calendar.monthrange(year or 1, month)[1]


def zero_in_date_key(v: Any) -> tuple[int, ...] | None:
    """For text or a number that reads as a date whose month or day is 0 (not the zero
    date: '2024-02-00', 20010000000000, 10000000000 read as 2001-00-00 00:00:00), the
    fields MySQL compares it by, as a tuple (year, month, day, hour, minute, second,
    microsecond); else None. MySQL places such a date between the last moment before it
    and the first after it: a date compared with it compares by these fields."""
    parts = _written_parts(v)
    if parts is None:
        return None
    year, month, day, hour, minute, second, micro = parts
    if month and day or (year, month, day) == (0, 0, 0) or not _in_range(parts):
        return None  # no zero in it, or the zero date
    return year, month, day, hour or 0, minute, second, micro


def date_fields(v: Any) -> Parts | None:
    """The fields of a non-NULL value read as a date by MySQL's date-part functions (YEAR,
    MONTH, DAY, EXTRACT...), or None where MySQL answers NULL. Those read dates "fuzzily":
    a month or day of 0 ('2000-10-00', the number 1000 read as YYMMDD 00-10-00), year 0 and
    the zero date are dates to them (MONTH(1000) is 10, DAY('2000-10-00') is 0), where
    :func:`to_temporal` has no date; a day past its month's end is still none. In a write
    statement (:data:`MODE`) what is no date fails as in :func:`to_temporal`."""
    t = type(v)
    if t is _datetime:
        return v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond
    if t is _date:
        return v.year, v.month, v.day, None, 0, 0, 0
    parts = _written_parts(v)
    if parts is None or not (parts[0] == 0 or parts[1] == 0 or parts[2] == 0) \
            or not _in_range(parts):
        d = to_temporal(v)  # (a valid date, or none: its errors and warnings)
        return None if d is None else date_fields(d)
    if MODE.strict:
        shape = _date.min if parts[3] is None else _datetime.min
        problem = temporal_truncation(v, shape, "Incorrect datetime value")
        if problem is not None:
            truncated(problem, v)
    return parts


def to_temporal(v: Any) -> _date | None:
    """A non-NULL value as a date/datetime, or None if it is not one (MySQL: NULL + warning).
    In a write statement (:data:`MODE`) text or a number that is no date fails, as MySQL's
    strict mode fails it (``Incorrect datetime value: 'abc'``), and so does text with more
    than spaces after its date (``Truncated incorrect date value: '2024-01-02x'``)."""
    if isinstance(v, _date):
        return v
    parsed = read_temporal(v)
    if MODE.strict:
        problem = temporal_truncation(v, parsed, "Incorrect datetime value")
        if problem is not None:
            truncated(problem, v)
    return parsed


def temporal_truncation(v: Any, parsed: _date | None, no_date: str) -> str | None:
    """MySQL's warning for reading ``v`` (text or a number, not a date) as ``parsed`` (None:
    no date): ``no_date`` for no date at all, a truncation for text with more than spaces
    after its date; None where MySQL reads it without a warning that counts."""
    t = type(v)
    if t is _timedelta:
        return None  # (a TIME: the callers refuse or say what it is)
    if parsed is None:
        return no_date
    if t is str or t is bytes or t is EnumValue:
        text = v.decode("utf-8", "replace") if t is bytes else v
        if WHOLE_DATE_RE.match(text) is None and COMPACT_DATE_RE.match(text) is None:
            kind = "datetime" if type(parsed) is _datetime else "date"
            return f"Truncated incorrect {kind} value"
    return None


def check_time(v: Any, micros: int | None, message: str) -> None:
    """In a write statement (:data:`MODE`), fail where reading ``v`` as a TIME gave
    ``micros`` (None: no time) and MySQL warns: text that is no time or goes on after it
    ('abc', '10:00:00x'; spaces aside), a number that is no time. ``message`` is MySQL's
    (``Truncated incorrect time value`` in a comparison)."""
    if not MODE.strict or isinstance(v, (_date, _timedelta)):
        return
    if micros is None:
        truncated(message, v)
    t = type(v)
    if t is str or t is bytes or t is EnumValue:
        text = v.decode("utf-8", "replace") if t is bytes else str(v)
        if parse_time(text, strict=True) is None:
            truncated(message, v)


def strict_number(v: Any, what: str = "DOUBLE") -> Any:
    """``v`` unchanged. The planner of a write wraps an operand MySQL reads as a number in
    this (text compared with a number, an operand of arithmetic), because MySQL converts it
    even where the other operand is NULL and the value functions would not: in a write
    statement (:data:`MODE`), text that is not all a number fails it. ``what`` as in
    :func:`text_to_float`."""
    if MODE.strict and (type(v) is str or type(v) is bytes):
        text_to_float(v, what)
    return v


def planned_number(v: Any) -> Any:
    """A constant compared with a BIGINT column, as MySQL converts it once while it plans a
    write (its ``convert_const_to_int``), where a truncation only warns: text as its number
    (as a comparison would read it), anything else unchanged."""
    if type(v) is str or type(v) is bytes:
        return text_to_float(v)
    return v


def strict_date(v: Any) -> Any:
    """``v`` unchanged; as :func:`strict_number`, for text or a number compared with a date:
    in a write statement, one that is no date (or more than one) fails it."""
    if MODE.strict and v is not None and not isinstance(v, (_date, _timedelta)):
        problem = temporal_truncation(v, read_temporal(v), "Truncated incorrect datetime value")
        if problem is not None:
            truncated(problem, v)
    return v


def strict_time(v: Any) -> Any:
    """``v`` unchanged; as :func:`strict_number`, for text compared with a TIME: in a write
    statement, text that is no time (or more than one) fails it."""
    if MODE.strict and (type(v) is str or type(v) is bytes):
        check_time(v, time_micros(v, strict=False), "Truncated incorrect time value")
    return v


def lenient(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, called outside strict mode (what MySQL evaluates while it plans a write, where
    a truncation only warns)."""
    def call(*args: Any) -> Any:
        before = MODE.strict
        MODE.strict = False
        try:
            return fn(*args)
        finally:
            MODE.strict = before
    return call


def read_temporal(v: Any) -> _date | None:
    """A non-NULL value as a date/datetime, or None if it is not one, never failing (what a
    comparison with a date reads, deciding itself what a write does about it)."""
    if isinstance(v, _date):
        return v
    t = type(v)
    if t is bytes:
        v = v.decode("utf-8", "replace")
    elif t is int or t is float or t is Decimal:
        return number_to_temporal(v)
    elif t is EnumValue:
        v = str(v)
    elif t is not str:
        return None  # (a TIME too: MySQL would read it as a time of the current day)
    return parse_temporal(v)


def text_operands(*vals: str | bytes) -> tuple[Any, ...]:
    """Make text operands one kind: if any is bytes (a binary string), all become bytes."""
    for v in vals:
        if type(v) is bytes:
            return tuple(x.encode("utf-8") if isinstance(x, str) else x for x in vals)
    return vals
