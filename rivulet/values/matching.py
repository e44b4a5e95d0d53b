"""Which stored values of a column a compared value finds: what lets a view's reader answer
``col = ?`` by looking one key up, and ``col < ?`` by cutting its sorted rows.

Why this module exists: a reader holds rows under their column's values as stored (an INT
column's ints, a VARCHAR's strings, a DATE's dates), but a parameter must find exactly the
rows MySQL's comparison with the same literal finds (:mod:`rivulet.values.comparison`):
``'01' = 1`` is true (a string and a number compare as doubles), a DATE equals the string
``'2024-1-5'``, an INT never equals ``1.5`` but equals ``'1e3'`` when it is 1000. Converting
the parameter to the column's type as a write does (``'01'`` stays ``'01'``, ``1`` becomes
``'1'``) answers something else. So each value is mapped here to the one stored value it
equals (:func:`equal_key`), to none, or, where several stored values may equal it (every
string that reads as the number 1), to :attr:`Unkeyed.SCAN`: the reader cannot answer by a
key and the caller compares row by row. Likewise a range bound (:func:`range_bound`).

An ENUM column's values are its members (:class:`~rivulet.values.enumerations.EnumValue`,
held and hashed as their text): text finds the member with that text, a number the member
at that position, which only the column's list of members tells (``members``). A TIME
column's values are ``timedelta``: text is read as a TIME (text that is none as 00:00:00),
a number as ``[-]HHMMSS[.ffffff]``, as :mod:`rivulet.values.comparison` compares them.

Every answer is checked against :func:`~rivulet.values.comparison.eq`: should the
comparison rules change, a key that no longer equals its value is not used.
"""

from __future__ import annotations

import datetime as _dt
import enum
import math
from decimal import Decimal
from typing import Any

from rivulet.values.comparison import eq
from rivulet.values.conversions import as_float, to_temporal
from rivulet.values.enumerations import EnumValue, compared_member
from rivulet.values.schema import (
    BOOL,
    BYTES,
    DATE,
    DATETIME,
    DECIMAL,
    ENUM,
    FLOAT,
    INT,
    STR,
    TIME,
    Kind,
)
from rivulet.values.times import compared_micros, from_micros, holds_datetime

_date = _dt.date
_datetime = _dt.datetime
_timedelta = _dt.timedelta
_MIDNIGHT = _dt.time()

#: Integers beyond this magnitude are not all doubles: several of them compare equal to one.
_EXACT_DOUBLE = 2**53


class Unkeyed(enum.Enum):
    """Why a value is not one stored value of a column to look up."""

    #: No value of the column equals it (``int_col = 1.5``, ``= NULL``): no row matches.
    NOTHING = "matches no value of the column"
    #: Several values of the column may equal it (``varchar_col = 1`` finds '1', '01',
    #: '1.0', ' 1'...): compare each row.
    SCAN = "may match several values of the column"


#: Per column kind, the Python types of values that Python's ``==`` and ``hash`` compare
#: with the column's values exactly as MySQL does, for every value: a reader may look such
#: a value up as it is (the read's fast path). Others go through :func:`equal_key` (a float
#: or a Decimal may be a NaN, which no column holds and Python cannot always hash).
EXACT_TYPES: dict[Kind, frozenset[type]] = {
    INT: frozenset({int, bool}),
    BOOL: frozenset({int, bool}),
    DECIMAL: frozenset({int, bool}),
    STR: frozenset({str}),
    BYTES: frozenset({bytes}),
    DATE: frozenset({_date}),
    DATETIME: frozenset({_datetime}),
    ENUM: frozenset({str}),  # a member is held as its text, and text compares as text
    TIME: frozenset({_timedelta}),
}


def equal_key(kind: Kind | None, value: Any, members: tuple[str, ...] = ()) -> Any:
    """The one value of a ``kind`` column that ``value`` equals under MySQL's ``=`` (so the
    rows a reader holds under it are exactly the rows ``col = value`` finds), or an
    :class:`Unkeyed` member: NOTHING (NULL included) or SCAN. ``members``: an ENUM
    column's (without them a number compared with an ENUM is SCAN)."""
    if value is None:
        return Unkeyed.NOTHING
    if type(value) is EnumValue:
        value = str(value)  # a value read from an ENUM column, passed on as its text
    key = _enum_key(members, value) if kind is ENUM else _equal_key(kind, value)
    if isinstance(key, Unkeyed) or eq(key, value) == 1:
        return key
    return Unkeyed.SCAN  # the comparison rules disagree with the conversion: compare rows


def _equal_key(kind: Kind | None, value: Any) -> Any:
    t = type(value)
    if kind is INT or kind is BOOL:
        if t is int or t is bool:
            return int(value)
        if t is Decimal:
            if not value.is_finite() or value != value.to_integral_value():
                return Unkeyed.NOTHING
            return int(value)
        if t is float or t is str or t is bytes:  # compared as doubles
            return _integral(as_float(value))
        return Unkeyed.SCAN  # a date compares as the number YYYYMMDD...
    if kind is FLOAT:
        if t in (int, bool, float, Decimal, str, bytes):  # compared as doubles
            f = as_float(value)
            return f if math.isfinite(f) else Unkeyed.NOTHING
        return Unkeyed.SCAN
    if kind is DECIMAL:
        if t is int or t is bool:
            return Decimal(int(value))
        if t is Decimal:
            return value if value.is_finite() else Unkeyed.NOTHING
        return Unkeyed.SCAN  # a float or a string compares as a double: many decimals round
    if kind is STR:
        return value if t is str else Unkeyed.SCAN  # a number compares as a double
    if kind is BYTES:
        if t is bytes:
            return value
        return value.encode("utf-8") if t is str else Unkeyed.SCAN
    if kind is DATE or kind is DATETIME:
        if t is str or t is bytes:
            parsed = to_temporal(value)
            if parsed is None:
                return Unkeyed.SCAN  # not a date: compared as strings
            value, t = parsed, type(parsed)
        if t is _date:
            return value if kind is DATE else _datetime.combine(value, _MIDNIGHT)
        if t is _datetime:
            if kind is DATETIME:
                return value
            # a DATE column's value is midnight of its day
            return value.date() if value.time() == _MIDNIGHT and value.tzinfo is None \
                else Unkeyed.NOTHING
        return Unkeyed.SCAN  # a number compares with the date as YYYYMMDD
    if kind is TIME:
        return _time_key(value)
    return Unkeyed.SCAN


def _enum_key(members: tuple[str, ...], value: Any) -> Any:
    """An ENUM column's key: text compares with a member's text, a number with its
    position (MySQL's index)."""
    t = type(value)
    if t is str:
        return value  # (held as its text: the member of that text, if any, finds it)
    if t is bytes:
        try:
            return value.decode("utf-8")  # compared as binary strings
        except UnicodeDecodeError:
            return Unkeyed.NOTHING  # no member's text is these bytes
    if t in (int, bool, float, Decimal):
        if not members:
            return Unkeyed.SCAN  # (the positions are not known here)
        if not _finite(value):
            return Unkeyed.NOTHING
        found = compared_member(members, value)
        return Unkeyed.NOTHING if found is None else found
    return Unkeyed.SCAN  # a date compares with the member's text read as a date


def _time_key(value: Any) -> Any:
    """A TIME column's key: text or a number read as a TIME compares
    (:func:`~rivulet.values.times.compared_micros`: one that is none is 00:00:00)."""
    t = type(value)
    if t is _timedelta:
        return value
    if (t is str or t is bytes) and holds_datetime(value):
        return Unkeyed.SCAN  # MySQL's WHERE compares it as a datetime: the planner refuses
    if t in (str, bytes, int, bool, float, Decimal):
        return from_micros(compared_micros(value))
    return Unkeyed.SCAN  # a date: refused where the read is computed


def _finite(number: Any) -> bool:
    """Whether a number is neither a NaN nor an infinity (an int always is)."""
    if type(number) is Decimal:
        return number.is_finite()
    return not isinstance(number, float) or math.isfinite(number)


def _integral(f: float) -> Any:
    """The integer a double equals, for an integer column."""
    if not math.isfinite(f) or not f.is_integer():
        return Unkeyed.NOTHING
    if abs(f) >= _EXACT_DOUBLE:
        return Unkeyed.SCAN
    return int(f)


def range_bound(kind: Kind | None, value: Any) -> Any:
    """A non-NULL ``value`` as a bound to cut a ``kind`` column's sorted values by: a value
    that Python's ``<`` places among them exactly where MySQL's comparison with ``value``
    does; or :attr:`Unkeyed.SCAN` where no such value is at hand (the rows are then
    compared one by one)."""
    t = type(value)
    bound: Any = Unkeyed.SCAN
    if kind is INT or kind is BOOL:
        if t is int or t is bool or t is Decimal:
            bound = value  # compared exactly, in Python as in MySQL
        elif t is float or t is str or t is bytes:
            f = as_float(value)  # compared as doubles: exact below 2**53
            if abs(f) < _EXACT_DOUBLE or math.isinf(f):
                bound = f
    elif kind is FLOAT:
        if t in (int, bool, float, Decimal, str, bytes):
            bound = as_float(value)
    elif kind is DECIMAL:
        if t is int or t is bool or t is Decimal:
            bound = value
    elif kind is STR:
        if t is str:
            bound = value
    elif kind is BYTES:
        if t is bytes:
            bound = value
    elif kind is DATE or kind is DATETIME:
        if t is str or t is bytes:
            parsed = to_temporal(value)
            value, t = (parsed, type(parsed)) if parsed is not None else (value, t)
        if t is _date:
            bound = value if kind is DATE else _datetime.combine(value, _MIDNIGHT)
        elif t is _datetime and kind is DATETIME:
            bound = value
    elif kind is ENUM:
        if t is str or t is EnumValue:
            bound = str(value)  # text compares with the members' text, as Python orders them
    elif kind is TIME:
        if t is _timedelta:
            bound = value
        elif t in (str, bytes, int, bool, float, Decimal):
            bound = from_micros(compared_micros(value))
    if isinstance(bound, float) and math.isnan(bound):
        return Unkeyed.SCAN
    return bound
