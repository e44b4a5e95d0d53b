"""``CAST(x AS type)``: one function per value kind cast to, and the :data:`CASTS` table.

Why this module exists: casts are what ALTER TABLE uses to convert a column's values and what
the expression compiler calls for ``CAST``; like every function here they never raise on
data: MySQL turns a bad value into 0 (numbers, with a warning) or NULL (dates).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from rivulet.values.conversions import to_int, to_number, to_temporal
from rivulet.values.enumerations import EnumValue, plain
from rivulet.values.numeric import round_
from rivulet.values.strings import concat
from rivulet.values.times import clipped, from_micros, round_micros, time_micros

_date = _dt.date
_datetime = _dt.datetime
_timedelta = _dt.timedelta

_BIGINT_MAX = 2**63 - 1

#: The integer a string starts with, for CAST AS SIGNED (whitespace skipped, a sign).
_INTEGER_PREFIX = re.compile(r"\s*([+-]?\d+)")
# CAST(x AS type). Like every function here they never raise on data: MySQL turns a bad
# value into 0 (numbers, with a warning) or NULL (dates).


def cast_int(v: Any, integer_prefix: Any = 0) -> int | None:
    """A value as a BIGINT. ``integer_prefix`` (``CAST(s AS SIGNED)``): a string is read up to
    its first character that is not a digit, as MySQL's CAST does ('1e3' is 1); without it
    (ALTER TABLE's conversions) a string is read as a number first ('1e3' is 1000)."""
    if v is None:
        return None
    if isinstance(v, (str, bytes)):  # (an ENUM value too: its index)
        if integer_prefix and type(v) is not EnumValue:
            text = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
            m = _INTEGER_PREFIX.match(text)
            return _saturated(int(m.group(1))) if m else 0
        return _saturated(to_number(v))
    if isinstance(v, _timedelta):
        v = to_number(v)  # [-]HHMMSS, rounded below if it has a fraction
    if isinstance(v, (_date, _datetime)):
        return int(v.strftime("%Y%m%d%H%M%S" if isinstance(v, _datetime) else "%Y%m%d"))
    return _saturated(round_(v)) if isinstance(v, (float, Decimal)) else int(v)


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


def cast_float(v: Any) -> float | None:
    if v is None:
        return None
    # (a date is the number YYYYMMDD[hhmmss], a TIME [-]HHMMSS, as for every number context)
    return (float(to_number(v)) if isinstance(v, (str, bytes, _date, _timedelta))
            else float(v))


def cast_decimal(v: Any, precision: int | None = None, scale: int | None = None
                 ) -> Decimal | None:
    """``CAST(v AS DECIMAL(precision, scale))``: rounded half up to ``scale`` places, and a
    value with too many digits saturates to the type's largest (as MySQL, with a warning
    there). Without a precision (ALTER TABLE's conversions), the value as it is."""
    if v is None:
        return None
    if not isinstance(v, Decimal):
        if isinstance(v, (str, bytes, _date, _timedelta)):
            v = to_number(v)
        v = Decimal(str(v))
    if precision is None or scale is None:
        return v
    d = round_(v, scale)
    assert isinstance(d, Decimal)  # (ROUND of a Decimal is a Decimal)
    largest = Decimal(10) ** (precision - scale) - Decimal(1).scaleb(-scale)
    if abs(d) > largest:
        return largest if d > 0 else -largest
    return d


def cast_str(v: Any) -> str | bytes | None:
    if v is None:
        return None
    return concat(v) if not isinstance(v, str) else plain(v)


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
    a datetime's time part, rounded to ``fsp`` digits and clipped to +-838:59:59."""
    if v is None:
        return None
    micros = time_micros(v, strict=False)
    if micros is None:
        return None
    return from_micros(clipped(round_micros(micros, min(max(to_int(fsp), 0), 6))))


#: CAST(x AS type), by the value kind cast to.
CASTS: dict[str, Callable[[Any], Any]] = {
    "cast_int": cast_int,
    "cast_float": cast_float,
    "cast_decimal": cast_decimal,
    "cast_str": cast_str,
    "cast_date": cast_date,
    "cast_datetime": cast_datetime,
    "cast_time": cast_time,
}
