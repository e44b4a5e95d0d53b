"""``CAST(x AS type)``: one function per value kind cast to, and the :data:`CASTS` table.

Why this module exists: casts are what ALTER TABLE uses to convert a column's values and what
the expression compiler calls for ``CAST``; like every function here they never raise on
data in a read: MySQL turns a bad value into 0 (numbers, with a warning) or NULL (dates). A
write statement fails instead, as MySQL's strict mode makes it
(:func:`~rivulet.values.conversions.strict_mode`).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from rivulet.errors import OutOfRangeError
from rivulet.values.arithmetic import to_scale
from rivulet.values.conversions import (
    MODE,
    check_time,
    temporal_to_decimal,
    text_to_decimal,
    to_int,
    to_number,
    to_str,
    to_temporal,
    truncated,
)
from rivulet.values.enumerations import EnumValue, plain
from rivulet.values.json_text import json_number_text
from rivulet.values.numerals import double_text, fixed_double_text
from rivulet.values.numeric import round_
from rivulet.values.schema import FLOAT_MAX, single, single_text
from rivulet.values.strings import concat
from rivulet.values.times import (
    clipped,
    compared_micros,
    format_time,
    from_micros,
    round_micros,
    time_micros,
)

_date = _dt.date
_datetime = _dt.datetime
_timedelta = _dt.timedelta

_BIGINT_MAX = 2**63 - 1

#: The integer a string starts with, for CAST AS SIGNED (whitespace skipped, a sign).
_INTEGER_PREFIX = re.compile(r"\s*([+-]?\d+)", re.ASCII)  # (MySQL's digits are 0-9 only)
# CAST(x AS type). Like every function here they never raise on data in a read: MySQL turns
# a bad value into 0 (numbers, with a warning) or NULL (dates).


def cast_int(v: Any, integer_prefix: Any = 0) -> int | None:
    """A value as a BIGINT. ``integer_prefix`` (``CAST(s AS SIGNED)``): a string is read up to
    its first character that is not a digit, as MySQL's CAST does ('1e3' is 1); without it
    (ALTER TABLE's conversions) a string is read as a number first ('1e3' is 1000)."""
    if v is None:
        return None
    if isinstance(v, (str, bytes)):  # (an ENUM value too: its index)
        if integer_prefix and type(v) is not EnumValue:
            text = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
            m = _integer_prefix(text)
            return _saturated(int(m.group(1))) if m else 0
        return _saturated(to_number(v))
    if isinstance(v, _timedelta):
        v = to_number(v)  # [-]HHMMSS, rounded below if it has a fraction
    if isinstance(v, (_date, _datetime)):
        return int(v.strftime("%Y%m%d%H%M%S" if isinstance(v, _datetime) else "%Y%m%d"))
    return _saturated(round_(v)) if isinstance(v, (float, Decimal)) else int(v)


_UNSIGNED_MAX = 2**64 - 1


def cast_unsigned(v: Any) -> int | None:
    """``CAST(v AS UNSIGNED)``: a BIGINT UNSIGNED. As MariaDB: a negative integer (or
    integer text, read up to its first non-digit) wraps modulo 2**64 (-1 is
    18446744073709551615), a negative DECIMAL or DOUBLE is 0, anything past the largest
    value saturates. An ENUM's value is its index; a TIME its number [-]HHMMSS, which
    MariaDB reads as a DECIMAL (a negative TIME is 0)."""
    if v is None:
        return None
    if type(v) is EnumValue:
        return v.position
    if isinstance(v, _timedelta):
        v = Decimal(to_number(v))
    if isinstance(v, (str, bytes)):
        text = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        m = _integer_prefix(text)
        n = max(int(m.group(1)), -_BIGINT_MAX - 1) if m else 0
    elif isinstance(v, (float, Decimal)):
        if v != v:
            return 0
        r = round_(v)
        assert r is not None
        return int(min(max(r, 0), _UNSIGNED_MAX))
    elif isinstance(v, (_date, _datetime)):
        return cast_int(v)
    else:
        n = max(int(v), -_BIGINT_MAX - 1)
    return min(n, _UNSIGNED_MAX) if n >= 0 else n + _UNSIGNED_MAX + 1


def _integer_prefix(text: str) -> re.Match[str] | None:
    """The integer ``CAST(text AS SIGNED)`` reads; in a write statement, text that is not all
    an integer (spaces aside) fails, as MySQL's strict mode fails it."""
    m = _INTEGER_PREFIX.match(text)
    if MODE.strict and (m is None or text[m.end():].strip(" \t\n\r\v\f")):
        truncated("Truncated incorrect INTEGER value", text)
    return m


def _saturated(x: Any) -> int:
    """A number as a BIGINT the way MySQL's CAST makes one: out-of-range values saturate
    (with a warning there), a NaN reads as 0."""
    if x != x:
        return 0
    if x > _BIGINT_MAX:
        return _BIGINT_MAX
    if x < -_BIGINT_MAX - 1:
        return -_BIGINT_MAX - 1
    return int(x)


def cast_float(v: Any, shown: Any = None) -> float | None:
    """``CAST(v AS DOUBLE)``. ``shown``, the places the plan's type of the result shows
    (a DOUBLE rounded to places, read back from its text), is for the plan only."""
    if v is None:
        return None
    # (a date is the number YYYYMMDD[hhmmss], a TIME [-]HHMMSS, as for every number context)
    return (float(to_number(v)) if isinstance(v, (str, bytes, _date, _timedelta))
            else float(v))


#: Exact arithmetic on DECIMALs of up to 65 digits (the default context keeps 28).
_EXACT = decimal.Context(prec=200)


def _decimal_saturated(d: Decimal, limit: Decimal, precision: int, places: int) -> Decimal:
    """The largest DECIMAL(precision, places) of ``d``'s sign, where ``d`` is past it
    (MySQL warns); a write statement fails instead (strict mode: error 1264)."""
    if MODE.strict:
        raise OutOfRangeError(f"Out of range value: {d} for DECIMAL({precision}, {places})")
    return limit if d > 0 else limit.copy_negate()  # (exact: unary minus rounds to 28 digits)


def cast_decimal(v: Any, precision: int | None = None, scale: int | None = None
                 ) -> Decimal | None:
    """``CAST(v AS DECIMAL(precision, scale))``: rounded half up to ``scale`` places, and
    held to the largest value of ``precision`` digits (MySQL saturates, with a warning).
    Without a precision (rivulet's own conversions) the number is converted exactly."""
    if v is None:
        return None
    if type(v) is EnumValue or isinstance(v, _timedelta):  # its index; [-]HHMMSS[.ffffff]
        d = Decimal(to_number(v))
    elif isinstance(v, (str, bytes)):
        d = text_to_decimal(v)
    elif isinstance(v, Decimal):
        d = v
    elif isinstance(v, _date):  # (a DATETIME with its fractional seconds)
        d = Decimal(temporal_to_decimal(v))
    elif isinstance(v, float):
        if v != v or v in (math.inf, -math.inf):
            return None
        d = Decimal(repr(v))
    else:
        d = Decimal(int(v))
    if precision is None:
        return d
    places = scale or 0
    # (the largest value exactly: 65 digits are past the default context's 28, which made
    # DECIMAL(30, 3)'s 999...999.999 a rounded 1E+27)
    limit = Decimal("9" * (precision - places) + ("." + "9" * places if places else ""))
    if abs(d) >= _EXACT.add(limit, Decimal(5).scaleb(-places - 1)):  # (rounds past it)
        return _decimal_saturated(d, limit, precision, places)
    rounded = to_scale(d, places)
    assert rounded is not None
    if abs(rounded) > limit:  # rounded up past the largest value
        return _decimal_saturated(rounded, limit, precision, places)
    return rounded


def cast_bytes(v: Any) -> bytes | None:
    """``CAST(v AS BINARY)``: the value's text, as bytes (UTF-8)."""
    if v is None:
        return None
    s = to_str(v)
    return s if isinstance(s, bytes) else s.encode("utf-8")


def cast_str(v: Any, fsp: Any = None) -> str | bytes | None:
    """``CAST(v AS CHAR)``: the value's text (an ENUM's member as plain text). ``fsp``: the
    fractional digits of a TIME or DATETIME ``v``'s type, which its text shows exactly
    ('01:02:03.500' for a TIME(3), '2024-01-02 03:04:05.000' for a DATETIME(3)), or the
    places of a DOUBLE rounded to them ('1.50' for ``ROUND(x, 2)``, '100000000000000000000'
    for ``FLOOR(1e20)``, as MySQL prints them: ``numerals.fixed_double_text``)."""
    if v is None:
        return None
    if fsp is not None and type(v) is float and math.isfinite(v):
        return fixed_double_text(v, to_int(fsp))
    if fsp is not None and isinstance(v, _timedelta):
        return format_time(v, to_int(fsp))
    if fsp is not None and isinstance(v, _datetime):
        return datetime_text(v, to_int(fsp))
    return concat(v) if not isinstance(v, str) else plain(v)


def cast_single(v: Any) -> float | None:
    """``CAST(v AS FLOAT)``: MySQL 8's single precision, the nearest 4-byte float (as a
    double), held at the largest one past it (MariaDB: ``CAST(1e300 AS FLOAT)`` is
    3.40282e+38)."""
    f = cast_float(v)
    if f is None:
        return None
    return single(max(-FLOAT_MAX, min(FLOAT_MAX, f)))


def single_str(v: Any) -> str | None:
    """The text of a single-precision FLOAT's value (``CAST(f AS CHAR)``, ``CONCAT(f)``...):
    the shortest that reads back as the same 4-byte float, as MySQL writes a FLOAT ('1.1',
    where the double rivulet computes with is 1.100000023841858)."""
    if v is None:
        return None
    return double_text(single_text(v)) if type(v) is float else to_str(v)


def datetime_text(v: _datetime, digits: int) -> str:
    """A DATETIME's text with exactly ``digits`` fractional digits ('2024-01-02
    03:04:05.120' for a DATETIME(3)), as MySQL shows one."""
    text = v.replace(microsecond=0).isoformat(" ")
    return f"{text}.{v.microsecond:06d}"[:len(text) + 1 + digits] if digits > 0 else text


def cast_date(v: Any) -> _date | None:
    if v is None:
        return None
    t = to_temporal(v)
    return t.date() if isinstance(t, _datetime) else t


def cast_datetime(v: Any) -> _datetime | None:
    if v is None:
        return None
    t = to_temporal(v)
    if t is None or isinstance(t, _datetime):
        return t
    return _datetime(t.year, t.month, t.day)


def cast_time(v: Any, fsp: Any = 0) -> _timedelta | None:
    """``CAST(v AS TIME[(fsp)])``: text and numbers read as a TIME (NULL if they are none),
    a datetime's time part, rounded to ``fsp`` digits and clipped to +-838:59:59 (with
    ``fsp`` nines)."""
    if v is None:
        return None
    micros = time_micros(v, strict=False)
    check_time(v, micros, "Incorrect time value")  # (a write fails, as MySQL's does)
    if micros is None:
        return None
    digits = min(max(to_int(fsp), 0), 6)
    return from_micros(clipped(round_micros(micros, digits), digits))


def compared_time(v: Any) -> _timedelta | None:
    """``v`` as a TIME compares with it (``values.times.compared_micros``: text or a
    number that is no time is 00:00:00): the operands of a BETWEEN that MySQL compares
    as TIMEs (``types.between_as_times``)."""
    return None if v is None else from_micros(compared_micros(v))


#: CAST(x AS type), by the value kind cast to (and the TIME a BETWEEN compares).
CASTS: dict[str, Callable[[Any], Any]] = {
    "cast_int": cast_int,
    "cast_unsigned": cast_unsigned,
    "cast_float": cast_float,
    "cast_decimal": cast_decimal,
    "cast_bytes": cast_bytes,
    "cast_str": cast_str,
    "single_str": single_str,
    "cast_single": cast_single,
    "cast_date": cast_date,
    "cast_datetime": cast_datetime,
    "cast_time": cast_time,
    "compared_time": compared_time,
    "json_number_text": json_number_text,  # (a JSON_EXTRACT result where a number is read)
}
