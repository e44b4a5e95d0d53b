"""Scalar SQL semantics, MySQL flavour: the runtime library that compiled expressions call.

Why this module exists: the meaning of ``'12abc' = 12``, ``5 / 2``, ``-7 % 3`` or
``x IN (1, NULL)`` should be written down once. The dataflow engine's expression compiler
calls these functions, and the Spark compiler's tests use them as the reference, so the two
back ends cannot drift apart. Everything here is a plain module-level function over plain
Python values (docs/design.md, "Data model"): ``int``, ``float``, ``str``, ``bytes``, ``bool``,
``decimal.Decimal``, ``datetime.datetime``, ``datetime.date`` and ``None`` for SQL NULL.

Conventions
-----------
* Every function propagates NULL (returns ``None`` if an argument is ``None``) unless its
  docstring says otherwise (``null_safe_eq``, ``is_null``, ``coalesce``, ``concat_ws``,
  ``and_``/``or_``, ``in_list``, ``if_``...).
* SQL booleans are the ints ``1``/``0`` (MySQL has no boolean type); predicates return
  ``1``, ``0`` or ``None``.
* Errors that MySQL reports as warnings and turns into NULL (division by zero, an
  unparsable date) return ``None``; nothing here raises on bad *data*.
* Strings use a binary collation: comparison, ``LIKE``, ``LOCATE`` and ``REPLACE`` are
  case-sensitive and compare code points, with NO PAD (trailing spaces are significant).
  That is MySQL's ``utf8mb4_0900_bin``; the older ``utf8mb4_bin`` is the same except that it
  ignores trailing spaces in ``=``.

Where MySQL and SQLite differ (SQLite is the test oracle for the common subset), rivulet
follows MySQL:

====================================  ==========================  ==========================
case                                  MySQL (rivulet)             SQLite
====================================  ==========================  ==========================
``5 / 2``                             2.5 (DECIMAL; rivulet:      2 (integer division)
                                      float, which compares
                                      equal)
``5 DIV 2``, ``-7 DIV 2``             2, -3 (truncates)           no ``DIV`` operator
``5.5 % 2``                           1.5 (fmod)                  1.0 (operands cast to int)
``'abc' = 0``, ``'12abc' = 12``       1, 1 (string -> number)     0, 0 (text never equals
                                                                  a number)
``1 = 1.0`` for ints beyond 2**53     compared as doubles         compared exactly
``'a' LIKE 'A'``                      0 here (binary collation;   1 (ASCII case-insensitive)
                                      MySQL's default collation
                                      would say 1)
``LIKE`` escape character             ``\\`` by default           none unless ``ESCAPE``
``LENGTH('é')``                       2 (bytes)                   1 (characters)
``SUBSTR('abc', 0, 2)``               ``''``                      ``'a'``
``CONCAT(1.0e0)``                     ``'1'``                     ``'1.0'`` (``||``)
``ROUND(5)``                          5 (keeps the exact type)    5.0 (always a float)
``GREATEST``/``LEAST``                ``GREATEST``/``LEAST``      multi-argument
                                                                  ``max``/``min``
DATE/DATETIME                         real temporal types         strings
====================================  ==========================  ==========================

Known simplifications, each marked where it lives: integer arithmetic does not overflow
(MySQL raises an error beyond BIGINT); ``int / int`` returns float, not DECIMAL; ``ROUND`` of
a float rounds the shortest decimal form half away from zero (MySQL rounds the binary value
half-to-even, so ``ROUND(2.5e0)`` is 2 there and 3 here); naive datetimes are UTC for
``UNIX_TIMESTAMP``.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import math
import re
from decimal import ROUND_HALF_UP, Context, Decimal
from functools import lru_cache
from typing import Any, Callable

from rivulet.errors import SqlError

__all__ = [
    "FUNCTION_ARITY", "OPERATORS", "SCALAR_FUNCTIONS", "abs_", "add", "and_", "arity_error",
    "between", "ceil", "char_length", "coalesce", "concat", "concat_ws", "date_", "datediff",
    "day", "desc_key", "div", "eq", "floor", "ge", "greatest", "gt", "hour", "if_", "ifnull",
    "in_list", "instr", "int_div", "is_not_null", "is_null", "le", "least", "left", "length",
    "like", "locate", "lower", "lpad", "lt", "ltrim", "minute", "mod", "month", "mul", "ne",
    "neg", "not_", "not_like", "null_safe_eq", "nullif", "or_", "repeat", "replace",
    "reverse", "right", "round_", "rpad", "rtrim", "second", "sign", "sort_key", "sub",
    "substring", "to_number", "to_str", "trim", "truth", "unix_timestamp", "upper", "xor",
    "year",
]

_date = _dt.date
_datetime = _dt.datetime
_MIDNIGHT = _dt.time()

#: Decimal arithmetic context. MySQL DECIMAL has at most 65 digits; the extra precision keeps
#: products and quotients of such values exact before they are rounded to a MySQL scale.
_DEC_CTX = Context(prec=200, rounding=ROUND_HALF_UP)
#: Context for rounding floats through their decimal form (1e308 has 309 digits).
_ROUND_CTX = Context(prec=700, rounding=ROUND_HALF_UP)
#: MySQL's ``div_precision_increment``: ``DECIMAL / DECIMAL`` keeps 4 more decimal places.
_DIV_PRECISION_INCREMENT = 4
#: Results longer than MySQL's default ``max_allowed_packet`` (64 MiB) are NULL, as in MySQL.
_MAX_STRING = 64 * 1024 * 1024
_DBL_MAX = 1.7976931348623157e308


# --------------------------------------------------------------------------------------------
# Conversions
# --------------------------------------------------------------------------------------------

#: The numeric prefix MySQL reads from a string (my_strtod): optional leading whitespace,
#: sign, digits with an optional fraction, an optional exponent. No hex, no inf/nan.
_NUMERIC_PREFIX = re.compile(
    r"[ \t\n\r\v\f]*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
).match


def _text_to_float(s: str | bytes) -> float:
    """Convert a string to a number the way MySQL does in numeric context.

    The longest numeric prefix is used and the rest ignored ('12abc' -> 12.0, ' 3.5x' -> 3.5);
    no numeric prefix gives 0.0 ('abc' -> 0.0). MySQL warns and carries on; so do we, silently.
    """
    if type(s) is bytes:
        s = s.decode("latin-1")
    m = _NUMERIC_PREFIX(s)
    if m is None:
        return 0.0
    x = float(m.group(1))
    if x in (math.inf, -math.inf):  # MySQL saturates at the largest double
        return _DBL_MAX if x > 0 else -_DBL_MAX
    return x


def _int_to_float(x: int) -> float:
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _temporal_to_number(v: _date) -> int | Decimal:
    """DATE -> YYYYMMDD, DATETIME -> YYYYMMDDhhmmss[.ffffff], as MySQL does in numeric context."""
    n = v.year * 10000 + v.month * 100 + v.day
    if type(v) is _datetime:
        n = n * 1000000 + v.hour * 10000 + v.minute * 100 + v.second
        if v.microsecond:
            return Decimal(n) + Decimal(v.microsecond).scaleb(-6)
    return n


def to_number(v: Any) -> int | float | Decimal | None:
    """A value as a number for arithmetic: strings -> float (MySQL uses DOUBLE), bool -> int,
    dates -> YYYYMMDD; numbers unchanged."""
    t = type(v)
    if t is int or t is float or t is Decimal or v is None:
        return v
    if t is bool:
        return int(v)
    if t is str or t is bytes:
        return _text_to_float(v)
    if isinstance(v, _date):
        return _temporal_to_number(v)
    raise TypeError(f"not an SQL value: {v!r}")


def _format_float(x: float) -> str:
    """Format a double as MySQL does (my_gcvt): shortest round-trip digits, in plain notation
    for 1e-15 <= |x| < 1e15 or when there is a fractional part, otherwise ``1.5e20``."""
    if x != x or x in (math.inf, -math.inf):
        return repr(x)  # MySQL has no such values; keep them readable
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0"
    _, digits_t, exp = Decimal(repr(abs(x))).normalize().as_tuple()
    digits = "".join(map(str, digits_t))
    n = len(digits)
    decpt = n + exp  # position of the decimal point relative to the digits
    if decpt >= -14 and (decpt <= 15 or n > decpt):
        if decpt <= 0:
            return f"{sign}0.{'0' * -decpt}{digits}"
        if decpt >= n:
            return sign + digits + "0" * (decpt - n)
        return f"{sign}{digits[:decpt]}.{digits[decpt:]}"
    mantissa = digits[0] + ("." + digits[1:] if n > 1 else "")
    return f"{sign}{mantissa}e{decpt - 1}"


def to_str(v: Any) -> str | bytes | None:
    """A value as MySQL renders it in string context (CONCAT, LIKE, string functions).

    int -> ``str(int)``, bool -> '1'/'0', float -> MySQL's shortest form (``1.0`` -> '1'),
    Decimal -> plain notation (never exponent), DATE -> 'YYYY-MM-DD', DATETIME ->
    'YYYY-MM-DD hh:mm:ss[.ffffff]'. ``bytes`` stay bytes (MySQL binary strings).
    """
    t = type(v)
    if t is str or t is bytes or v is None:
        return v
    if t is int:
        return str(v)
    if t is float:
        return _format_float(v)
    if t is Decimal:
        return format(v, "f")
    if t is bool:
        return "1" if v else "0"
    if t is _datetime:
        return v.isoformat(" ")
    if t is _date:
        return v.isoformat()
    raise TypeError(f"not an SQL value: {v!r}")


def _to_int(v: Any) -> int:
    """A non-NULL value as an integer argument (positions, lengths, counts): MySQL rounds
    non-integers half away from zero."""
    if type(v) is int:
        return v
    v = to_number(v)
    if type(v) is int:
        return v
    if type(v) is float:
        if v != v:
            return 0
        if v in (math.inf, -math.inf):
            return (1 << 63) - 1 if v > 0 else -(1 << 63)
        v = Decimal(v)
    return int(v.to_integral_value(rounding=ROUND_HALF_UP))


_DATE_RE = re.compile(
    r"\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})"
    r"(?:(?:[ T]+)(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,6})\d*)?)?)?\s*\Z"
)
_COMPACT_DATE_RE = re.compile(r"\s*(\d{4})(\d\d)(\d\d)(?:(\d\d)(\d\d)(\d\d))?\s*\Z")
_TIME_RE = re.compile(r"\s*(-?)(\d+):(\d{1,2})(?::(\d{1,2})(?:\.\d*)?)?\s*\Z")


@lru_cache(maxsize=4096)
def _parse_temporal(s: str) -> _date | None:
    """Parse a MySQL date or datetime literal: 'YYYY-MM-DD', 'YYYY-MM-DD hh:mm[:ss[.ffffff]]'
    (also with 'T', '/' or '.' separators and one-digit fields), 'YYYYMMDD[hhmmss]'.
    Returns a date, a datetime, or None if the string is not a valid date."""
    m = _DATE_RE.match(s) or _COMPACT_DATE_RE.match(s)
    if m is None:
        return None
    g = m.groups()
    try:
        if g[3] is None:
            return _date(int(g[0]), int(g[1]), int(g[2]))
        micro = int((g[6] or "").ljust(6, "0")) if len(g) > 6 else 0
        return _datetime(int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]),
                         int(g[5] or 0), micro)
    except ValueError:
        return None


def _to_temporal(v: Any) -> _date | None:
    """A non-NULL value as a date/datetime, or None if it is not one (MySQL: NULL + warning)."""
    if isinstance(v, _date):
        return v
    t = type(v)
    if t is bytes:
        v = v.decode("utf-8", "replace")
    elif t is int:
        v = str(v)
    elif t is not str:
        return None
    return _parse_temporal(v)


def _texts(*vals: str | bytes) -> tuple[Any, ...]:
    """Make text operands one kind: if any is bytes (a binary string), all become bytes."""
    for v in vals:
        if type(v) is bytes:
            return tuple(x.encode("utf-8") if type(x) is str else x for x in vals)
    return vals


# --------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------

_KIND: dict[type, str] = {
    int: "n", bool: "n", Decimal: "n", float: "f", str: "s", bytes: "s",
    _date: "t", _datetime: "t",
}


def _coerce(a: Any, b: Any) -> tuple[Any, Any]:
    """Convert two non-NULL values of different Python types to a mutually comparable pair,
    following MySQL's comparison rules (only reached when ``type(a) is not type(b)``)."""
    ka = _KIND.get(type(a))
    kb = _KIND.get(type(b))
    if ka is None or kb is None:
        raise TypeError(f"cannot compare {a!r} with {b!r}: not SQL values")
    if ka == "t" or kb == "t":
        if ka == kb:  # DATE vs DATETIME: the date is midnight of that day
            return _promote(a, b)
        if ka == "s" or kb == "s":  # temporal vs string: the string is read as a date
            text, other = (a, b) if ka == "s" else (b, a)
            parsed = _to_temporal(text)
            if parsed is None:  # not a date: compare as strings
                if type(text) is bytes:
                    text = text.decode("utf-8", "replace")
                pair = (text, to_str(other))
            else:
                pair = _promote(parsed, other) if type(parsed) is not type(other) else (
                    parsed, other)
            return pair if ka == "s" else (pair[1], pair[0])
        # temporal vs number: the date as the number YYYYMMDD[hhmmss]
        if ka == "t":
            a = _temporal_to_number(a)
        else:
            b = _temporal_to_number(b)
        if type(a) is type(b):
            return a, b
        return _coerce(a, b)
    if ka == "s" and kb == "s":  # str vs bytes: compare as binary strings
        return _texts(a, b)
    if ka == "s" or kb == "s" or ka == "f" or kb == "f":
        # string vs number, or float vs exact number: MySQL compares as doubles
        return _as_float(a), _as_float(b)
    return a, b  # int / bool / Decimal: Python compares them exactly, as MySQL does


def _promote(a: _date, b: _date) -> tuple[_date, _date]:
    if type(a) is _date:
        a = _datetime.combine(a, _MIDNIGHT)
    if type(b) is _date:
        b = _datetime.combine(b, _MIDNIGHT)
    return a, b


def _as_float(v: Any) -> float:
    t = type(v)
    if t is float:
        return v
    if t is str or t is bytes:
        return _text_to_float(v)
    if t is int or t is bool:
        return _int_to_float(v)
    return float(v)


def eq(a: Any, b: Any) -> int | None:
    """``a = b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = _coerce(a, b)
    return 1 if a == b else 0


def ne(a: Any, b: Any) -> int | None:
    """``a <> b`` / ``a != b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = _coerce(a, b)
    return 1 if a != b else 0


def lt(a: Any, b: Any) -> int | None:
    """``a < b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = _coerce(a, b)
    return 1 if a < b else 0


def le(a: Any, b: Any) -> int | None:
    """``a <= b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = _coerce(a, b)
    return 1 if a <= b else 0


def gt(a: Any, b: Any) -> int | None:
    """``a > b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = _coerce(a, b)
    return 1 if a > b else 0


def ge(a: Any, b: Any) -> int | None:
    """``a >= b``."""
    if a is None or b is None:
        return None
    if type(a) is not type(b):
        a, b = _coerce(a, b)
    return 1 if a >= b else 0


def null_safe_eq(a: Any, b: Any) -> int:
    """``a <=> b``: like ``=`` but NULL <=> NULL is 1 and NULL <=> x is 0; never NULL."""
    if a is None:
        return 1 if b is None else 0
    if b is None:
        return 0
    if type(a) is not type(b):
        a, b = _coerce(a, b)
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


# --------------------------------------------------------------------------------------------
# Three-valued logic
# --------------------------------------------------------------------------------------------


def truth(v: Any) -> int | None:
    """The truth value of v in a boolean context: NULL -> None, otherwise 1 if v is nonzero
    as a number (strings are converted: '0.0' and 'abc' are false, '1x' is true)."""
    t = type(v)
    if t is int or t is float or t is bool or t is Decimal:
        return 1 if v else 0
    if v is None:
        return None
    if t is str or t is bytes:
        return 1 if _text_to_float(v) else 0
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


# --------------------------------------------------------------------------------------------
# Arithmetic
# --------------------------------------------------------------------------------------------


def _numeric_pair(a: Any, b: Any) -> tuple[Any, Any, bool]:
    """Both operands as numbers; the flag says whether the operation is done in floating
    point (either is a float or a string), otherwise int/Decimal exact arithmetic."""
    a = to_number(a)
    b = to_number(b)
    if type(a) is float or type(b) is float:
        return _as_float(a), _as_float(b), True
    return a, b, False


def add(a: Any, b: Any) -> int | float | Decimal | None:
    """``a + b``. int+int -> int (no BIGINT overflow check); float or string operand ->
    float; Decimal with int/Decimal -> exact Decimal."""
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a + b
    if a is None or b is None:
        return None
    a, b, floating = _numeric_pair(a, b)
    if floating or (type(a) is int and type(b) is int):
        return a + b
    return _DEC_CTX.add(a, b)


def sub(a: Any, b: Any) -> int | float | Decimal | None:
    """``a - b``; types as for ``add``."""
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a - b
    if a is None or b is None:
        return None
    a, b, floating = _numeric_pair(a, b)
    if floating or (type(a) is int and type(b) is int):
        return a - b
    return _DEC_CTX.subtract(a, b)


def mul(a: Any, b: Any) -> int | float | Decimal | None:
    """``a * b``; types as for ``add``."""
    ta = type(a)
    tb = type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a * b
    if a is None or b is None:
        return None
    a, b, floating = _numeric_pair(a, b)
    if floating or (type(a) is int and type(b) is int):
        return a * b
    return _DEC_CTX.multiply(a, b)


def div(a: Any, b: Any) -> float | Decimal | None:
    """``a / b``: never integer division. ``x / 0`` is NULL.

    MySQL returns DECIMAL for exact operands (``5 / 2`` = 2.5000); rivulet returns float for
    int/int (it compares equal) and, when a Decimal is involved, a Decimal with the dividend's
    scale + 4 decimal places, rounded half up, as MySQL does.
    """
    if a is None or b is None:
        return None
    ta = type(a)
    tb = type(b)
    if not ((ta is int or ta is float) and (tb is int or tb is float)):
        a, b, floating = _numeric_pair(a, b)
        if not b:
            return None
        if not floating and (type(a) is Decimal or type(b) is Decimal):
            scale = -a.as_tuple().exponent if type(a) is Decimal else 0
            q = _DEC_CTX.divide(a, b)
            return q.quantize(Decimal(1).scaleb(-(max(scale, 0) + _DIV_PRECISION_INCREMENT)),
                              context=_DEC_CTX)
    elif not b:
        return None
    try:
        return a / b
    except OverflowError:  # huge int / int
        return _as_float(a) / _as_float(b)


def int_div(a: Any, b: Any) -> int | None:
    """``a DIV b``: integer division truncating toward zero (``-7 DIV 2`` = -3); ``x DIV 0``
    is NULL."""
    if a is None or b is None:
        return None
    if type(a) is not int or type(b) is not int:
        a = to_number(a)
        b = to_number(b)
        if not b:
            return None
        if type(a) is not int or type(b) is not int:
            # MySQL goes through DECIMAL; Decimal(float) is exact, so no double rounding.
            if type(a) is float or type(b) is float:
                if not (math.isfinite(a) and math.isfinite(b)):
                    return None
            q = _DEC_CTX.divide(Decimal(a), Decimal(b))
            return int(q)  # int() of a Decimal truncates toward zero
    if not b:
        return None
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def mod(a: Any, b: Any) -> int | float | Decimal | None:
    """``a % b`` / ``MOD(a, b)``: the result has the sign of the dividend (C fmod:
    ``-7 % 3`` = -1, not Python's 2); ``x % 0`` is NULL. int % int -> int."""
    if a is None or b is None:
        return None
    if type(a) is not int or type(b) is not int:
        a, b, floating = _numeric_pair(a, b)
        if not b:
            return None
        if floating:
            return math.fmod(a, b)
        if type(a) is not int or type(b) is not int:
            return _DEC_CTX.remainder(a, b)  # Decimal remainder: sign of the dividend
    if not b:
        return None
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def neg(a: Any) -> int | float | Decimal | None:
    """``-a``."""
    t = type(a)
    if t is int or t is float:
        return -a
    if a is None:
        return None
    a = to_number(a)
    if type(a) is Decimal:
        return a.copy_negate()  # exact, no context rounding
    return -a


# --------------------------------------------------------------------------------------------
# LIKE
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def _like_matcher(pattern: str, escape: str) -> Callable[[str], Any]:
    """Compile a LIKE pattern to a regex fullmatch: ``%`` any run, ``_`` one character,
    the escape character makes the next character literal (a trailing escape is literal)."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == escape and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "%":
            if not out or out[-1] != ".*":  # runs of % are one wildcard (avoids backtracking)
                out.append(".*")
        elif c == "_":
            out.append(".")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL).fullmatch


def like(s: Any, pattern: Any, escape: Any = "\\") -> int | None:
    """``s LIKE pattern [ESCAPE escape]``, case-sensitive (binary collation).

    Non-string operands are converted to strings (``123 LIKE '12%'`` is 1). A NULL escape
    means the default ``\\``; an empty escape means none. If either operand is a binary
    string the match is byte-wise.
    """
    if s is None or pattern is None:
        return None
    if escape is None:
        escape = "\\"
    if type(s) is not str or type(pattern) is not str or type(escape) is not str:
        s, pattern, escape = _like_operands(s, pattern, escape)
    if len(escape) > 1:
        raise SqlError("Incorrect arguments to ESCAPE: the escape must be one character")
    return 1 if _like_matcher(pattern, escape)(s) is not None else 0


def _like_operands(s: Any, pattern: Any, escape: Any) -> tuple[str, str, str]:
    s, pattern, escape = _texts(to_str(s), to_str(pattern), to_str(escape))
    if type(s) is bytes:  # byte-wise matching: one latin-1 character per byte
        return s.decode("latin-1"), pattern.decode("latin-1"), escape.decode("latin-1")
    return s, pattern, escape


def not_like(s: Any, pattern: Any, escape: Any = "\\") -> int | None:
    """``s NOT LIKE pattern``."""
    r = like(s, pattern, escape)
    return None if r is None else 1 - r


# --------------------------------------------------------------------------------------------
# Control flow
# --------------------------------------------------------------------------------------------


def coalesce(*args: Any) -> Any:
    """``COALESCE(...)``: the first non-NULL argument, or NULL."""
    for a in args:
        if a is not None:
            return a
    return None


def ifnull(a: Any, b: Any) -> Any:
    """``IFNULL(a, b)``: a unless it is NULL."""
    return b if a is None else a


def nullif(a: Any, b: Any) -> Any:
    """``NULLIF(a, b)``: NULL if a = b is true, else a."""
    return None if eq(a, b) == 1 else a


def if_(cond: Any, a: Any, b: Any) -> Any:
    """``IF(cond, a, b)``: a if cond is true; b if it is false or NULL."""
    if type(cond) is int:
        return a if cond else b
    return a if truth(cond) == 1 else b


# --------------------------------------------------------------------------------------------
# String functions
# --------------------------------------------------------------------------------------------


def concat(*args: Any) -> str | bytes | None:
    """``CONCAT(...)``: NULL if any argument is NULL; numbers and dates as ``to_str``; the
    result is bytes if any argument is bytes (a binary string, as in MySQL)."""
    try:
        return "".join(args)  # fast path: all str
    except TypeError:
        pass
    parts = []
    for a in args:
        if a is None:
            return None
        parts.append(to_str(a))
    parts = _texts(*parts)
    return (b"" if parts and type(parts[0]) is bytes else "").join(parts)


def concat_ws(sep: Any, *args: Any) -> str | bytes | None:
    """``CONCAT_WS(sep, ...)``: joins the non-NULL arguments with sep; NULL only if sep is."""
    if sep is None:
        return None
    parts = _texts(to_str(sep), *[to_str(a) for a in args if a is not None])
    return parts[0].join(parts[1:])


def _text(v: Any) -> str | bytes:
    return v if type(v) is str else to_str(v)


def lower(s: Any) -> str | bytes | None:
    """``LOWER(s)`` / ``LCASE``; binary strings are unchanged, as in MySQL."""
    if s is None:
        return None
    s = _text(s)
    return s if type(s) is bytes else s.lower()


def upper(s: Any) -> str | bytes | None:
    """``UPPER(s)`` / ``UCASE``; binary strings are unchanged, as in MySQL."""
    if s is None:
        return None
    s = _text(s)
    return s if type(s) is bytes else s.upper()


def length(s: Any) -> int | None:
    """``LENGTH(s)``: the length in *bytes* of the UTF-8 (utf8mb4) encoding."""
    if s is None:
        return None
    s = _text(s)
    if type(s) is bytes or s.isascii():
        return len(s)
    return len(s.encode("utf-8", "surrogatepass"))


def char_length(s: Any) -> int | None:
    """``CHAR_LENGTH(s)`` / ``CHARACTER_LENGTH``: the length in characters (bytes for a
    binary string)."""
    if s is None:
        return None
    return len(_text(s))


_ABSENT: Any = object()  # marks an argument the SQL call did not pass (distinct from NULL)


def substring(s: Any, pos: Any, count: Any = _ABSENT) -> str | bytes | None:
    """``SUBSTRING(s, pos[, count])`` / ``SUBSTR`` / ``MID``: 1-based; a negative pos counts
    from the end; pos 0, a pos beyond either end, or count <= 0 give ''."""
    if s is None or pos is None or count is None:
        return None
    s = _text(s)
    pos = _to_int(pos)
    n = len(s)
    if pos > 0:
        start = pos - 1
    elif pos < 0 and -pos <= n:
        start = n + pos
    else:
        return s[:0]
    if count is _ABSENT:
        return s[start:]
    count = _to_int(count)
    if count <= 0:
        return s[:0]
    return s[start:start + count]


def left(s: Any, n: Any) -> str | bytes | None:
    """``LEFT(s, n)``: the first n characters ('' if n <= 0)."""
    if s is None or n is None:
        return None
    s = _text(s)
    n = _to_int(n)
    return s[:n] if n > 0 else s[:0]


def right(s: Any, n: Any) -> str | bytes | None:
    """``RIGHT(s, n)``: the last n characters ('' if n <= 0)."""
    if s is None or n is None:
        return None
    s = _text(s)
    n = _to_int(n)
    return s[-n:] if n > 0 else s[:0]


def trim(s: Any, remstr: Any = " ", where: str = "BOTH") -> str | bytes | None:
    """``TRIM([BOTH|LEADING|TRAILING] [remstr] FROM s)``: removes repeated whole copies of
    remstr (default one space; not other whitespace) from the chosen ends."""
    if s is None or remstr is None:
        return None
    s, remstr = _texts(_text(s), _text(remstr))
    if not remstr:
        return s
    k = len(remstr)
    if where != "TRAILING":
        while s.startswith(remstr):
            s = s[k:]
    if where != "LEADING":
        while s.endswith(remstr):
            s = s[:-k]
    return s


def ltrim(s: Any) -> str | bytes | None:
    """``LTRIM(s)``: removes leading spaces (only ' ', as in MySQL)."""
    if s is None:
        return None
    s = _text(s)
    return s.lstrip(b" " if type(s) is bytes else " ")


def rtrim(s: Any) -> str | bytes | None:
    """``RTRIM(s)``: removes trailing spaces (only ' ', as in MySQL)."""
    if s is None:
        return None
    s = _text(s)
    return s.rstrip(b" " if type(s) is bytes else " ")


def replace(s: Any, from_: Any, to: Any) -> str | bytes | None:
    """``REPLACE(s, from, to)``: case-sensitive; an empty from leaves s unchanged."""
    if s is None or from_ is None or to is None:
        return None
    s, from_, to = _texts(_text(s), _text(from_), _text(to))
    if not from_:
        return s
    return s.replace(from_, to)


def reverse(s: Any) -> str | bytes | None:
    """``REVERSE(s)``."""
    if s is None:
        return None
    return _text(s)[::-1]


def locate(substr: Any, s: Any, pos: Any = 1) -> int | None:
    """``LOCATE(substr, s[, pos])``: 1-based position of the first occurrence at or after
    pos, 0 if none (or if pos is out of range); the empty string is found at pos."""
    if substr is None or s is None or pos is None:
        return None
    substr, s = _texts(_text(substr), _text(s))
    pos = _to_int(pos)
    if pos < 1:
        return 0
    return s.find(substr, pos - 1) + 1


def instr(s: Any, substr: Any) -> int | None:
    """``INSTR(s, substr)`` = ``LOCATE(substr, s)`` (note the swapped arguments)."""
    return locate(substr, s)


def _pad(s: Any, n: Any, pad: Any, on_left: bool) -> str | bytes | None:
    if s is None or n is None or pad is None:
        return None
    s, pad = _texts(_text(s), _text(pad))
    n = _to_int(n)
    if n < 0 or n > _MAX_STRING:
        return None
    if len(s) >= n:
        return s[:n]
    if not pad:
        return None
    need = n - len(s)
    fill = (pad * (need // len(pad) + 1))[:need]
    return fill + s if on_left else s + fill


def lpad(s: Any, n: Any, pad: Any) -> str | bytes | None:
    """``LPAD(s, n, pad)``: s left-padded with pad to n characters, or cut to n; NULL if
    n < 0, or if padding is needed and pad is ''."""
    return _pad(s, n, pad, True)


def rpad(s: Any, n: Any, pad: Any) -> str | bytes | None:
    """``RPAD(s, n, pad)``: as ``lpad`` but pads on the right."""
    return _pad(s, n, pad, False)


def repeat(s: Any, n: Any) -> str | bytes | None:
    """``REPEAT(s, n)``: '' if n <= 0; NULL if the result would exceed 64 MiB (MySQL's
    max_allowed_packet default)."""
    if s is None or n is None:
        return None
    s = _text(s)
    n = _to_int(n)
    if n <= 0:
        return s[:0]
    if len(s) * n > _MAX_STRING:
        return None
    return s * n


# --------------------------------------------------------------------------------------------
# Numeric functions
# --------------------------------------------------------------------------------------------


def abs_(x: Any) -> int | float | Decimal | None:
    """``ABS(x)``."""
    if x is None:
        return None
    x = to_number(x)
    return x.copy_abs() if type(x) is Decimal else abs(x)


def _round_int(x: int, d: int) -> int:
    if d >= 0:
        return x
    m = 10 ** -d
    q, r = divmod(abs(x), m)
    if 2 * r >= m:
        q += 1
    return q * m if x >= 0 else -q * m


def round_(x: Any, d: Any = 0) -> int | float | Decimal | None:
    """``ROUND(x[, d])``: half away from zero, keeping x's type (int stays int, Decimal keeps
    at most d decimal places).

    Floats are rounded through their shortest decimal form, also half away from zero
    (``ROUND(2.675e0, 2)`` = 2.68, ``ROUND(2.5e0)`` = 3). MySQL instead rounds the binary
    double half-to-even (2.67 and 2); rivulet prefers the answer the user can see.
    """
    if x is None or d is None:
        return None
    d = min(max(_to_int(d), -1000), 1000)  # beyond this every result is 0 or x itself
    x = to_number(x)
    t = type(x)
    if t is int:
        return _round_int(x, d)
    if t is float:
        if not math.isfinite(x):
            return x
        if d >= 0 and abs(x) >= 2.0**52:  # already an integer
            return x
        dx = Decimal(repr(x))
        if d >= 0 and -dx.as_tuple().exponent <= d:
            return x
        q = dx.quantize(Decimal(1).scaleb(-d), context=_ROUND_CTX)
        return float(q)
    # Decimal
    exp = x.as_tuple().exponent
    if d >= 0:
        if -exp <= d:
            return x
        return x.quantize(Decimal(1).scaleb(-d), context=_ROUND_CTX)
    q = x.quantize(Decimal(1).scaleb(-d), context=_ROUND_CTX)
    return q.quantize(Decimal(1), context=_ROUND_CTX)


def floor(x: Any) -> int | float | None:
    """``FLOOR(x)``: int for exact arguments, float for float and string ones (as MySQL)."""
    if x is None:
        return None
    x = to_number(x)
    if type(x) is float:
        return float(math.floor(x)) if math.isfinite(x) else x
    return math.floor(x)


def ceil(x: Any) -> int | float | None:
    """``CEIL(x)`` / ``CEILING``: types as for ``floor``."""
    if x is None:
        return None
    x = to_number(x)
    if type(x) is float:
        return float(math.ceil(x)) if math.isfinite(x) else x
    return math.ceil(x)


def sign(x: Any) -> int | None:
    """``SIGN(x)``: -1, 0 or 1."""
    if x is None:
        return None
    x = to_number(x)
    return 1 if x > 0 else (-1 if x < 0 else 0)


def _extreme(args: tuple[Any, ...], want: int) -> Any:
    """GREATEST (want=1) / LEAST (want=-1) over non-NULL args, with MySQL's type rules:
    numbers and strings mixed are compared as strings; otherwise pairwise comparison, and a
    float among numbers makes the result float (Decimal likewise)."""
    kinds = {_KIND.get(type(a)) for a in args}
    if None in kinds:
        raise TypeError(f"not SQL values: {args!r}")
    if len(kinds) == 1 and len({type(a) for a in args}) == 1:
        return max(args) if want > 0 else min(args)
    if "s" in kinds and ("n" in kinds or "f" in kinds):
        texts = _texts(*[to_str(a) for a in args])
        return max(texts) if want > 0 else min(texts)
    best = args[0]
    for a in args[1:]:
        x, y = (a, best) if type(a) is type(best) else _coerce(a, best)
        if (x > y) if want > 0 else (x < y):
            best = a
    if kinds <= {"n", "f"}:
        if "f" in kinds:
            return _as_float(best)
        if any(type(a) is Decimal for a in args):
            return Decimal(best)
        return int(best)
    return best


def greatest(*args: Any) -> Any:
    """``GREATEST(...)``: NULL if any argument is NULL."""
    for a in args:
        if a is None:
            return None
    return _extreme(args, 1)


def least(*args: Any) -> Any:
    """``LEAST(...)``: NULL if any argument is NULL."""
    for a in args:
        if a is None:
            return None
    return _extreme(args, -1)


# --------------------------------------------------------------------------------------------
# Date functions (a string argument is parsed; an invalid date gives NULL, as in MySQL)
# --------------------------------------------------------------------------------------------


def year(v: Any) -> int | None:
    """``YEAR(v)``."""
    if v is None:
        return None
    t = _to_temporal(v)
    return None if t is None else t.year


def month(v: Any) -> int | None:
    """``MONTH(v)``."""
    if v is None:
        return None
    t = _to_temporal(v)
    return None if t is None else t.month


def day(v: Any) -> int | None:
    """``DAY(v)`` / ``DAYOFMONTH``."""
    if v is None:
        return None
    t = _to_temporal(v)
    return None if t is None else t.day


def _time_part(v: Any, index: int) -> int | None:
    """Hour (0), minute (1) or second (2) of a datetime (a date is midnight) or of a time
    string such as '10:05:03' or '272:59:59', which MySQL's HOUR() also accepts."""
    if v is None:
        return None
    t = _to_temporal(v)
    if t is not None:
        if type(t) is _date:
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
    t = _to_temporal(v)
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
    t = _to_temporal(v)
    if t is None:
        return None
    if type(t) is _date:
        t = _datetime.combine(t, _MIDNIGHT)
    secs = calendar.timegm(t.timetuple())
    if secs < 0:
        return 0
    if t.microsecond:
        return Decimal(secs) + Decimal(t.microsecond).scaleb(-6)
    return secs


# --------------------------------------------------------------------------------------------
# ORDER BY keys
# --------------------------------------------------------------------------------------------

_NULL_FIRST = (0,)
_NULL_LAST = (1,)


def sort_key(v: Any) -> tuple[Any, ...]:
    """Key for ``ORDER BY v ASC``: NULLs first (as MySQL), then values in natural order.

    The key is ``(0,)`` for NULL and ``(1, v)`` otherwise, so comparing two keys never
    compares None with a value, and keys can sit inside a larger tuple. Values of one column
    share one kind (the schema guarantees it); a compiler that mixes DATE and DATETIME or
    strings and numbers in one sort expression must convert them first.
    """
    if v is None:
        return _NULL_FIRST
    return (1, v)


class _Desc:
    """Wraps a value so that it orders in reverse: sorting ascending gives descending order."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    def __lt__(self, other: Any) -> bool:
        if type(other) is not _Desc:
            return NotImplemented
        return other.v < self.v

    def __le__(self, other: Any) -> bool:
        if type(other) is not _Desc:
            return NotImplemented
        return other.v <= self.v

    def __gt__(self, other: Any) -> bool:
        if type(other) is not _Desc:
            return NotImplemented
        return other.v > self.v

    def __ge__(self, other: Any) -> bool:
        if type(other) is not _Desc:
            return NotImplemented
        return other.v >= self.v

    def __eq__(self, other: Any) -> bool:
        if type(other) is not _Desc:
            return NotImplemented
        return self.v == other.v

    def __hash__(self) -> int:
        return hash(self.v)

    def __repr__(self) -> str:
        return f"_Desc({self.v!r})"


def desc_key(v: Any) -> tuple[Any, ...]:
    """Key for ``ORDER BY v DESC``, to be sorted ascending: NULLs last (as MySQL), values in
    reverse order. Numbers are negated (cheap); other values are wrapped in ``_Desc``."""
    if v is None:
        return _NULL_LAST
    t = type(v)
    if t is int or t is float or t is bool:
        return (0, -v)
    if t is Decimal:
        return (0, v.copy_negate())
    return (0, _Desc(v))


# --------------------------------------------------------------------------------------------
# Registries for the expression compiler
# --------------------------------------------------------------------------------------------

#: SQL function names (upper case) to implementations. Optional SQL arguments map onto
#: Python defaults, so the compiler passes exactly the arguments written in the query.
SCALAR_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "CONCAT": concat,
    "CONCAT_WS": concat_ws,
    "LOWER": lower,
    "LCASE": lower,
    "UPPER": upper,
    "UCASE": upper,
    "LENGTH": length,
    "OCTET_LENGTH": length,
    "CHAR_LENGTH": char_length,
    "CHARACTER_LENGTH": char_length,
    "SUBSTRING": substring,
    "SUBSTR": substring,
    "MID": substring,
    "LEFT": left,
    "RIGHT": right,
    "TRIM": trim,
    "LTRIM": ltrim,
    "RTRIM": rtrim,
    "REPLACE": replace,
    "REVERSE": reverse,
    "LOCATE": locate,
    "INSTR": instr,
    "LPAD": lpad,
    "RPAD": rpad,
    "REPEAT": repeat,
    "ABS": abs_,
    "ROUND": round_,
    "FLOOR": floor,
    "CEIL": ceil,
    "CEILING": ceil,
    "SIGN": sign,
    "GREATEST": greatest,
    "LEAST": least,
    "COALESCE": coalesce,
    "IFNULL": ifnull,
    "NULLIF": nullif,
    "IF": if_,
    "YEAR": year,
    "MONTH": month,
    "DAY": day,
    "DAYOFMONTH": day,
    "HOUR": hour,
    "MINUTE": minute,
    "SECOND": second,
    "DATE": date_,
    "DATEDIFF": datediff,
    "UNIX_TIMESTAMP": unix_timestamp,
    "MOD": mod,
}

#: (minimum, maximum) argument counts; maximum None means variadic. TRIM's 3-argument form
#: is ``trim(s, remstr, 'BOTH'|'LEADING'|'TRAILING')`` for the ``TRIM(... FROM s)`` syntax.
FUNCTION_ARITY: dict[str, tuple[int, int | None]] = {
    "CONCAT": (1, None),
    "CONCAT_WS": (2, None),
    "LOWER": (1, 1),
    "LCASE": (1, 1),
    "UPPER": (1, 1),
    "UCASE": (1, 1),
    "LENGTH": (1, 1),
    "OCTET_LENGTH": (1, 1),
    "CHAR_LENGTH": (1, 1),
    "CHARACTER_LENGTH": (1, 1),
    "SUBSTRING": (2, 3),
    "SUBSTR": (2, 3),
    "MID": (3, 3),
    "LEFT": (2, 2),
    "RIGHT": (2, 2),
    "TRIM": (1, 3),
    "LTRIM": (1, 1),
    "RTRIM": (1, 1),
    "REPLACE": (3, 3),
    "REVERSE": (1, 1),
    "LOCATE": (2, 3),
    "INSTR": (2, 2),
    "LPAD": (3, 3),
    "RPAD": (3, 3),
    "REPEAT": (2, 2),
    "ABS": (1, 1),
    "ROUND": (1, 2),
    "FLOOR": (1, 1),
    "CEIL": (1, 1),
    "CEILING": (1, 1),
    "SIGN": (1, 1),
    "GREATEST": (2, None),
    "LEAST": (2, None),
    "COALESCE": (1, None),
    "IFNULL": (2, 2),
    "NULLIF": (2, 2),
    "IF": (3, 3),
    "YEAR": (1, 1),
    "MONTH": (1, 1),
    "DAY": (1, 1),
    "DAYOFMONTH": (1, 1),
    "HOUR": (1, 1),
    "MINUTE": (1, 1),
    "SECOND": (1, 1),
    "DATE": (1, 1),
    "DATEDIFF": (2, 2),
    "UNIX_TIMESTAMP": (1, 1),
    "MOD": (2, 2),
}


def arity_error(name: str, nargs: int) -> str | None:
    """The error message for calling SQL function ``name`` with ``nargs`` arguments, or None
    if the call is fine (or the name unknown: that is the caller's message to give)."""
    bounds = FUNCTION_ARITY.get(name.upper())
    if bounds is None:
        return None
    lo, hi = bounds
    if nargs >= lo and (hi is None or nargs <= hi):
        return None
    if hi is None:
        expected = f"at least {lo}"
    elif lo == hi:
        expected = str(lo)
    else:
        expected = f"{lo} to {hi}"
    plural = "" if expected in ("1", "at least 1") else "s"
    return (f"Incorrect parameter count in the call to native function '{name.upper()}': "
            f"expected {expected} argument{plural}, got {nargs}")


#: SQL operators to implementations (binary unless noted), for the expression compiler.
OPERATORS: dict[str, Callable[..., Any]] = {
    "=": eq,
    "<=>": null_safe_eq,
    "<>": ne,
    "!=": ne,
    "<": lt,
    "<=": le,
    ">": gt,
    ">=": ge,
    "AND": and_,
    "OR": or_,
    "XOR": xor,
    "NOT": not_,  # unary
    "+": add,
    "-": sub,
    "*": mul,
    "/": div,
    "DIV": int_div,
    "%": mod,
    "MOD": mod,
    "NEG": neg,  # unary minus
    "LIKE": like,  # (s, pattern[, escape])
    "NOT LIKE": not_like,
    "IN": in_list,  # (v, tuple_of_values)
    "BETWEEN": between,  # (v, lo, hi)
    "IS NULL": is_null,  # unary
    "IS NOT NULL": is_not_null,  # unary
}


# ---------------------------------------------------------------------------- casts

_BIGINT_MAX = 2**63 - 1
# CAST(x AS type). Like every function here they never raise on data: MySQL turns a bad
# value into 0 (numbers, with a warning) or NULL (dates).


def cast_int(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, (str, bytes)):
        return _saturated(to_number(v))
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
    return float(to_number(v)) if isinstance(v, (str, bytes)) else float(v)


def cast_decimal(v: Any) -> Decimal | None:
    if v is None or isinstance(v, Decimal):
        return v
    if isinstance(v, (str, bytes, _date)):
        v = to_number(v)
    return Decimal(str(v))


def cast_str(v: Any) -> str | None:
    if v is None:
        return None
    return concat(v) if not isinstance(v, str) else v


def cast_date(v: Any) -> _date | None:
    if v is None:
        return None
    t = _to_temporal(v)
    return t.date() if isinstance(t, _datetime) else t


def cast_datetime(v: Any) -> _datetime | None:
    if v is None:
        return None
    t = _to_temporal(v)
    if t is None or isinstance(t, _datetime):
        return t
    return _datetime(t.year, t.month, t.day)


#: CAST(x AS type), by the value kind cast to.
CASTS: dict[str, Callable[[Any], Any]] = {
    "cast_int": cast_int,
    "cast_float": cast_float,
    "cast_decimal": cast_decimal,
    "cast_str": cast_str,
    "cast_date": cast_date,
    "cast_datetime": cast_datetime,
}
