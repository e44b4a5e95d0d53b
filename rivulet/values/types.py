"""MySQL's static types: the type of an expression, decided before any row is read.

Why this module exists: MySQL types every expression when it prepares a statement, and the
type decides the values. ``CASE`` with an INT and a VARCHAR branch is a VARCHAR (the INT
comes out as text); ``SUM`` of an INT is a DECIMAL; ``5 / 2`` is a DECIMAL with four
places, 2.5000; a DATE compared with a DATETIME is read as midnight. rivulet's two back ends
(the dataflow engine and the Spark compiler) must follow the same rules, so the rules are
written down here once, over :class:`SqlType`, and the planner
(:mod:`rivulet.plan.expressions`) makes every implicit conversion they imply an explicit
call in the plan, which both back ends then evaluate alike.

DECIMAL places. MySQL distinguishes the places a DECIMAL *shows* (its type's scale, what the
client receives) from the places its values *carry* while they are computed: a division
keeps its quotient to a multiple of nine places (``7 / 3`` carries 2.333333333 and shows
2.3333), so that ``7 / 3 * 3`` is 6.999999999, shown as 7.0000. :class:`SqlType` keeps both
(``scale`` and ``frac``); values of a DECIMAL expression carry exactly ``frac`` places (the
planner pads a branch of a ``CASE`` to them), and are rounded half up to ``scale`` where
MySQL rounds them: when they are returned, grouped, compared with ``=``/``<``..., or turned
into text (:func:`rivulet.values.arithmetic.to_scale`).

ENUM and TIME. An ENUM column's value is its member's text, and its index in numeric
context (``e + 0`` is an integer); what an expression chooses among values (``CASE``,
``COALESCE``, a ``UNION`` column) is text, not an ENUM. A TIME keeps ``scale`` fractional
digits (``TIME(3)``: 3), which decide its number (``t + 0`` is an integer for a TIME(0), a
DECIMAL with those places otherwise) and its text ('01:02:03.500'); TIMEs chosen together
are a TIME, and a TIME with a DATE or DATETIME a DATETIME, which MySQL makes of the TIME on
the current day (the planner refuses that: a view's answer would change with the day).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from rivulet.values.enumerations import EnumValue
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
    Column,
    Kind,
)

#: MySQL's ``div_precision_increment``: a quotient shows 4 more places than its dividend.
DIV_PRECISION_INCREMENT = 4
#: The most places a DECIMAL shows (MariaDB's DECIMAL_MAX_SCALE).
MAX_SCALE = 38
#: MySQL computes DECIMALs in words of nine digits: a quotient carries whole words.
_WORD = 9

EXACT_KINDS = frozenset({INT, BOOL, DECIMAL})
NUMBER_KINDS = frozenset({INT, BOOL, DECIMAL, FLOAT})
TEXT_KINDS = frozenset({STR, BYTES})
#: The kinds of dates (a TIME is no date: see :data:`TEMPORAL_KINDS`).
DATE_KINDS = frozenset({DATE, DATETIME})
TEMPORAL_KINDS = frozenset({DATE, DATETIME, TIME})
#: The most fractional digits a TIME or DATETIME keeps.
MAX_FSP = 6


#: The ``decimals`` of a DOUBLE shown in its shortest form (MySQL's NOT_FIXED_DEC).
NOT_FIXED = 31
#: The most digits of a DECIMAL (MySQL's DECIMAL_MAX_PRECISION).
MAX_PRECISION = 65
#: The integer digits of an integer computed by a function (``LENGTH``: an INT(10)).
_FUNCTION_DIGITS = 10
#: The most integer digits of an integer result (a BIGINT's display width, 21, less its
#: sign).
_INT_RESULT_DIGITS = 20
#: What ``SUM`` adds to its argument's integer digits (MySQL's DECIMAL_LONGLONG_DIGITS).
_SUM_DIGITS = 22
#: The most integer digits ``FLOOR``/``CEIL`` of a DECIMAL may have and still be a BIGINT.
_BIGINT_DIGITS = 18


@dataclass(frozen=True, slots=True)
class SqlType:
    """The static type of an expression: its value kind and, for a DECIMAL, the places it
    shows (``scale``) and the places its values carry (``frac``, at least ``scale``); for a
    TIME or a DATETIME, its fractional digits (``scale`` and ``frac`` alike).
    ``unsigned`` marks an unsigned number, an integer or a DECIMAL (MySQL's UNSIGNED flag:
    a signed and an unsigned integer together make a DECIMAL in a ``CASE``, ``COALESCE``,
    ``UNION``...; a DECIMAL is unsigned when all it is made of is). ``kind`` None: only
    NULL flows here."""

    kind: Kind | None
    scale: int = 0
    frac: int = 0
    unsigned: bool = False
    #: For a DOUBLE, the places its text shows: fixed for one rounded to places
    #: (``ROUND(x, 2)`` shows '1.50', ``FLOOR(x)`` the integer in full) and arithmetic on
    #: it (MySQL's ``decimals``), :data:`NOT_FIXED` for its shortest form.
    decimals: int = NOT_FIXED
    #: For an exact number, the integer digits its type allows (MySQL's precision less its
    #: scale: an INT's 10, a DECIMAL(8, 2)'s 6, ``SUM``'s 22 more than its argument's),
    #: which decide whether ``FLOOR``/``CEIL`` of it is a BIGINT or a DECIMAL. 0: an
    #: integer of a function, whose digits are :data:`_FUNCTION_DIGITS`. Not part of the
    #: type's identity: values of types that differ only here are alike.
    digits: int = field(default=0, compare=False)
    #: For a DOUBLE, whether it is MySQL's FLOAT: single-precision values (a FLOAT column's,
    #: and ``COALESCE``/``CASE``/``MIN``... of such alone), whose text is the shortest that
    #: reads back as the same 4-byte float ('1.1', where the double is 1.100000023841858).
    single: bool = False

    @property
    def rounded(self) -> bool:
        """Whether values carry more places than they show (a quotient, an AVG)."""
        return self.kind == DECIMAL and self.frac != self.scale


NULL = SqlType(None)
INT_TYPE = SqlType(INT)
FLOAT_TYPE = SqlType(FLOAT)
SINGLE_TYPE = SqlType(FLOAT, single=True)
STR_TYPE = SqlType(STR)


def double_type(decimals: int) -> SqlType:
    """A DOUBLE whose text shows ``decimals`` places (from 0; past 30, its shortest form)."""
    return SqlType(FLOAT, decimals=max(0, decimals)) if decimals < NOT_FIXED else FLOAT_TYPE


def shown_places(t: SqlType) -> int:
    """The places a value of type ``t`` brings to a DOUBLE it takes part in (MySQL's
    ``decimals``): none for an integer or an ENUM, a DECIMAL's, a DOUBLE's own, and for text or
    anything else the shortest form's."""
    if t.kind in (INT, BOOL, ENUM):  # (an ENUM's number is its index)
        return 0
    if t.kind == DECIMAL:
        return t.scale
    if t.kind == FLOAT:
        return t.decimals
    return NOT_FIXED


def decimal_type(scale: int, frac: int | None = None, digits: int = 0) -> SqlType:
    """A DECIMAL showing ``scale`` places, carrying ``frac`` (at least ``scale``), with
    ``digits`` integer digits (see :attr:`SqlType.digits`)."""
    scale = min(scale, MAX_SCALE)
    return SqlType(DECIMAL, scale, max(scale, frac if frac is not None else scale),
                   digits=min(digits, MAX_PRECISION - scale))


def int_digits(t: SqlType) -> int:
    """The integer digits of an exact number of type ``t`` (:attr:`SqlType.digits`)."""
    if t.kind == BOOL:
        return 1
    return t.digits or _FUNCTION_DIGITS


def int_type(digits: int, unsigned: bool = False) -> SqlType:
    """An integer result with ``digits`` integer digits (at most a BIGINT's)."""
    return SqlType(INT, unsigned=unsigned, digits=min(digits, _INT_RESULT_DIGITS))


def rounded_to_integer_type(fn: str, t: SqlType) -> SqlType:
    """``FLOOR``/``CEIL`` of an exact number of type ``t`` (MySQL's
    ``Item_func_int_val``): an integer, unless the integer digits it may have pass 18 (a
    DECIMAL's, one more where rounding away from zero can add one: ``CEIL(9.9)`` is 10),
    then a DECIMAL with no places (``CEIL(AVG(bigint_col))``)."""
    digits = int_digits(t)
    if t.kind == DECIMAL and t.scale and (fn != "FLOOR" or not t.unsigned):
        digits += 1
    if t.kind == DECIMAL and digits > _BIGINT_DIGITS:
        return replace(decimal_type(0, digits=digits), unsigned=t.unsigned)
    return int_type(digits, unsigned=t.unsigned)


def time_type(fsp: int) -> SqlType:
    """A TIME with ``fsp`` fractional digits (at most 6)."""
    fsp = max(0, min(fsp, MAX_FSP))
    return SqlType(TIME, fsp, fsp)


#: The places of a DECIMAL column declared without a scale: rivulet keeps such values as
#: written (MySQL would make the column DECIMAL(10, 0)); its type, like the Spark column
#: holding it, says 18.
UNDECLARED_DECIMAL_SCALE = 18


def column_type(column: Column) -> SqlType:
    """The type of a table column (a DECIMAL's declared scale; UNSIGNED integers and
    DECIMALs; a TIME's fractional digits)."""
    unsigned = column.kind in (INT, DECIMAL) and column.bounds is not None \
        and column.bounds[0] >= 0
    if column.kind == DECIMAL:  # (undeclared: DECIMAL(10, 0)'s digits)
        scale = column.scale if column.scale is not None else UNDECLARED_DECIMAL_SCALE
        digits = column.precision - (column.scale or 0) if column.precision else 10
        return replace(decimal_type(scale, digits=digits), unsigned=unsigned)
    if column.kind == TIME:
        return time_type(column.fsp)
    if column.kind == DATETIME and column.fsp:  # DATETIME(fsp), TIMESTAMP(fsp)
        return SqlType(DATETIME, column.fsp, column.fsp)
    if column.kind == INT and column.bounds is not None:  # (BIGINT UNSIGNED: 20 digits)
        wide = "BIGINT" in column.sql_type.upper() and unsigned
        digits = 20 if wide else len(str(max(abs(column.bounds[0]), abs(column.bounds[1]))))
        return SqlType(INT, unsigned=unsigned, digits=digits)
    return SqlType(column.kind, unsigned=unsigned, single=column.single)


def value_type(value: Any) -> SqlType:
    """The type of a constant (a DECIMAL literal shows and carries its written places)."""
    if value is None:
        return NULL
    if type(value) is Decimal:
        exponent = value.as_tuple().exponent
        places = max(0, -exponent) if isinstance(exponent, int) else 0
        return decimal_type(places, digits=max(1, value.adjusted() + 1))
    if type(value) is int:
        return SqlType(INT, digits=len(str(abs(value))))
    if type(value) is _dt.timedelta:
        return time_type(MAX_FSP if value.microseconds else 0)
    kind = _KIND_OF_PYTHON.get(type(value))
    if kind is None:
        raise TypeError(f"not an SQL value: {value!r}")
    return SqlType(kind)


_KIND_OF_PYTHON: dict[type, Kind] = {
    int: INT, bool: INT, float: FLOAT, str: STR, bytes: BYTES, _dt.date: DATE,
    _dt.datetime: DATETIME, EnumValue: STR,  # (an ENUM's value passed on is its text)
}


# --------------------------------------------------------------------------- numbers


def number_type(t: SqlType) -> SqlType:
    """The type of a value in numeric context (``values.to_number``): text is a DOUBLE, a
    DATE the integer YYYYMMDD, a DATETIME YYYYMMDDhhmmss, a TIME [-]HHMMSS (a DECIMAL with
    the fractional digits of a DATETIME(fsp) or TIME(fsp)), an ENUM its member's index, a
    single-precision FLOAT a DOUBLE (``-f`` and ``ABS(f)`` show the double's digits)."""
    if t.kind in (INT, BOOL):
        return SqlType(INT, unsigned=t.unsigned, digits=int_digits(t))
    if t.single:
        return replace(t, single=False)
    if t.kind in (DECIMAL, FLOAT, None):
        return t
    if t.kind in TEMPORAL_KINDS:  # YYYYMMDD, YYYYMMDDhhmmss, HHHMMSS
        digits = {DATE: 8, DATETIME: 14, TIME: 7}[t.kind]
        return decimal_type(t.scale, digits=digits) if t.scale else int_type(digits)
    if t.kind == ENUM:
        return INT_TYPE
    return FLOAT_TYPE


def division_frac(dividend: int, divisor: int) -> int:
    """The places a quotient of exact numbers carries, from the places of its operands
    (MySQL's ``do_div_mod``): each operand is widened to whole nine-digit words, 4 more
    places are wanted beyond what that widening already gave, and the quotient is
    truncated to whole words."""
    w1, w2 = _words(dividend) * _WORD, _words(divisor) * _WORD
    extra = max(0, DIV_PRECISION_INCREMENT - (w1 - dividend) - (w2 - divisor))
    return _words(w1 + w2 + extra) * _WORD


def _words(digits: int) -> int:
    return -(-digits // _WORD)


def arithmetic_type(fn: str, a: SqlType, b: SqlType) -> SqlType:
    """The type of ``a <op> b`` for ``add``, ``sub``, ``mul``, ``div``, ``mod``,
    ``int_div``: DOUBLE as soon as a DOUBLE or a string is involved; an integer for two
    integers (``/`` excepted); otherwise a DECIMAL whose places follow MySQL (``+``, ``-``
    and ``%`` the larger, ``*`` the sum, ``/`` the dividend's plus 4). An integer result is
    UNSIGNED if either operand is (``%``: the dividend), a DECIMAL one if both are (``%``:
    the dividend), as MariaDB flags them (``d * d`` of a DECIMAL UNSIGNED ``d`` is
    UNSIGNED, ``d * 2`` is not)."""
    na, nb = number_type(a), number_type(b)
    if fn == "int_div":  # (unsigned if either operand is: MySQL's Item_func_int_div)
        return int_type(int_digits(na), unsigned=bool(na.unsigned or nb.unsigned))
    if na.kind is None or nb.kind is None:
        known = na if na.kind is not None else nb
        if known.kind is None:
            return NULL
        return arithmetic_type(fn, known, known)
    if FLOAT in (na.kind, nb.kind):  # its places: the operands' most, a quotient's 4 more
        places = max(shown_places(na), shown_places(nb))
        return double_type(places + DIV_PRECISION_INCREMENT if fn == "div" else places)
    da, db = int_digits(na), int_digits(nb)
    # integer digits (MySQL's precision less scale): a quotient's, the dividend's and the
    # divisor's places; a product's, both operands'; a sum's, one more than the wider's
    digits = {"div": da + nb.scale, "mul": da + db, "mod": max(da, db)}.get(fn, max(da, db) + 1)
    both_unsigned = na.unsigned and nb.unsigned
    if fn == "div":
        quotient = decimal_type(na.scale + DIV_PRECISION_INCREMENT,
                                division_frac(na.frac, nb.frac), digits)
        return replace(quotient, unsigned=both_unsigned)
    if na.kind == INT and nb.kind == INT:
        # (% has the dividend's sign, so is unsigned only if the dividend is)
        return int_type(digits, na.unsigned if fn == "mod" else na.unsigned or nb.unsigned)
    if fn == "mul":
        product = decimal_type(na.scale + nb.scale, na.frac + nb.frac, digits)
        return replace(product, unsigned=both_unsigned)
    exact = decimal_type(max(na.scale, nb.scale), max(na.frac, nb.frac), digits)
    # (% has the dividend's sign: MySQL flags a DECIMAL remainder of an unsigned one too)
    return replace(exact, unsigned=na.unsigned if fn == "mod" else both_unsigned)


# --------------------------------------------------------------------------- aggregation


def _merged_numbers(types: list[SqlType], signed_null: bool = False) -> SqlType:
    """Numbers of ``types`` together; ``signed_null``: a NULL was among them, which a
    DECIMAL result counts as signed (see :func:`aggregate`)."""
    kinds = {t.kind for t in types}
    if all(t.single for t in types):
        return SINGLE_TYPE  # (MySQL: FLOAT with FLOAT is a FLOAT, with anything a DOUBLE)
    if FLOAT in kinds:
        return double_type(max(shown_places(t) for t in types))
    signs = {t.unsigned for t in types if t.kind in (INT, BOOL)}
    digits = max(int_digits(t) for t in types)
    if DECIMAL in kinds or len(signs) > 1:
        merged = decimal_type(max(t.scale for t in types), max(t.frac for t in types), digits)
        return replace(merged, unsigned=not signed_null and all(t.unsigned for t in types))
    if kinds == {BOOL}:
        return SqlType(BOOL)
    return int_type(digits, unsigned=signs == {True})


def aggregate(types: Iterable[SqlType], *, null_is_signed: bool = True) -> SqlType:
    """The type of a value that comes from any of ``types``: ``CASE``, ``COALESCE``,
    ``IF``, ``IFNULL`` and the columns of a ``UNION`` (MySQL's type aggregation). Numbers
    widen (INT, DECIMAL, DOUBLE; signed with unsigned integers: DECIMAL); a DATE with a
    DATETIME (or a TIME) is a DATETIME; TIMEs are a TIME with the most fractional digits;
    an ENUM counts as text; anything with text, or temporal with numbers, is text (binary
    if any is binary).

    A DECIMAL is UNSIGNED when every one of ``types`` is: a NULL among them makes it
    signed (MariaDB's ``COALESCE(d, NULL)``, ``CASE ... ELSE NULL``, ``UNION SELECT
    NULL``), unless ``null_is_signed`` is false (``IF``, whose NULL branch takes the other
    branch's type; a ``CASE`` without ``ELSE`` passes no NULL). (Integers keep MySQL's
    rule, which leaves NULL out: tests/mysql_scenarios.py's MARIADB_IS_NOT_MYSQL.)"""
    given = list(types)
    present = [STR_TYPE if t.kind == ENUM else t for t in given if t.kind is not None]
    if not present:
        return NULL
    kinds = {t.kind for t in present}
    if BYTES in kinds:
        return SqlType(BYTES)
    if kinds <= NUMBER_KINDS:
        return _merged_numbers(present, null_is_signed and len(present) < len(given))
    if kinds <= TEMPORAL_KINDS:
        return _merged_temporals(present)
    if len(kinds) == 1:
        return present[0]
    return STR_TYPE


def _merged_temporals(types: list[SqlType]) -> SqlType:
    kinds = {t.kind for t in types}
    if kinds == {TIME}:
        return time_type(max(t.scale for t in types))
    if kinds == {DATE}:
        return SqlType(DATE)
    fsp = max(t.scale for t in types if t.kind == DATETIME) if DATETIME in kinds else 0
    return SqlType(DATETIME, fsp, fsp)


def extreme(types: Iterable[SqlType]) -> SqlType:
    """The type of ``GREATEST``/``LEAST``, which is also the type their arguments are
    compared as (MariaDB): temporal if any argument is temporal (a TIME if the temporal
    ones are TIMEs; its fractional digits are the planner's to decide, as they depend on
    the other arguments' values); text if all are text (an ENUM counts as text); numbers
    mixed with text compare and come out as DOUBLEs; numbers widen as for
    :func:`aggregate`."""
    present = [t for t in types if t.kind is not None]
    if not present:
        return NULL
    kinds = {STR if t.kind == ENUM else t.kind for t in present}
    if kinds & TEMPORAL_KINDS:
        return _merged_temporals([t for t in present if t.kind in TEMPORAL_KINDS])
    if kinds <= TEXT_KINDS:
        return SqlType(BYTES) if BYTES in kinds else STR_TYPE
    if kinds & TEXT_KINDS:  # (text brings its shortest form, an ENUM's index no places)
        return double_type(max(shown_places(t) for t in present))
    return _merged_numbers(present)


def sum_type(t: SqlType) -> SqlType:
    """``SUM``: exact numbers (and dates, as numbers) sum to a DECIMAL with the
    argument's places; DOUBLEs and text to a DOUBLE."""
    n = number_type(t)
    if n.kind is None:
        return NULL
    if n.kind == FLOAT:  # (a DOUBLE rounded to places keeps them: SUM(FLOOR(f)) shows 0)
        return double_type(n.decimals)
    return decimal_type(n.scale, n.frac, int_digits(n) + _SUM_DIGITS)


def avg_type(t: SqlType) -> SqlType:
    """``AVG``: ``SUM`` divided by the count, as ``/`` divides."""
    total = sum_type(t)
    if total.kind == FLOAT:  # four places more, as a quotient (AVG(FLOOR(f)): 3.4242)
        return double_type(total.decimals + DIV_PRECISION_INCREMENT)
    if total.kind != DECIMAL:
        return total  # (its integer digits: the argument's, as MySQL types AVG)
    return replace(arithmetic_type("div", total, INT_TYPE), digits=int_digits(number_type(t)))


def spread_type(t: SqlType) -> SqlType:
    """``VAR_POP``, ``STDDEV_POP`` and the others: a DOUBLE, whose text shows an exact
    number's places and four more (MySQL's ``div_precision_increment``), a DOUBLE's or
    text's in its shortest form."""
    n = number_type(t)
    if n.kind in (INT, BOOL, DECIMAL):
        return double_type(min(shown_places(n) + DIV_PRECISION_INCREMENT, NOT_FIXED - 1))
    return FLOAT_TYPE


def aggregate_result_type(fn: str, arg: SqlType | None) -> SqlType:
    """The type of the aggregate ``fn`` (count, sum, avg, min, max, the spreads) over
    ``arg``."""
    if fn == "count":
        return int_type(_INT_RESULT_DIGITS)
    assert arg is not None  # only COUNT(*) has no argument
    if fn == "sum":
        return sum_type(arg)
    if fn == "avg":
        return avg_type(arg)
    if fn in ("var_pop", "var_samp", "stddev_pop", "stddev_samp"):
        return spread_type(arg)
    return arg


# --------------------------------------------------------------------------- comparison


def comparison_kind(a: Kind | None, b: Kind | None) -> Kind | None:
    """The kind two values of kinds ``a`` and ``b`` are compared as by ``=`` (and so the
    kind a join keys both sides on): ``None`` where Python's own equality of the values
    already is MySQL's (same kinds, exact numbers among themselves); else DOUBLE for a
    number with text or with a DOUBLE, DATETIME for temporal values with each other, with
    text or with numbers, binary text for text with binary text. An ENUM compares with text
    as text (its value is a ``str``) and with a number by its index, as a DOUBLE; a TIME
    with another TIME as it is, and reads anything else as a TIME (the planner refuses a
    join of a TIME with another kind: see :func:`rivulet.plan.expressions.refuse_join_keys`)."""
    if a is None or b is None or a == b:
        return None
    a = STR if a == ENUM else a
    b = STR if b == ENUM else b
    if a == b:
        return None
    if a in EXACT_KINDS and b in EXACT_KINDS:
        return None
    if TIME in (a, b):
        return TIME
    if a in DATE_KINDS or b in DATE_KINDS:
        return DATETIME
    if a in TEXT_KINDS and b in TEXT_KINDS:
        return BYTES
    return FLOAT


def between_as_doubles(kinds: Iterable[Kind | None]) -> bool:
    """Whether ``v BETWEEN lo AND hi`` over values of these kinds compares all three as
    DOUBLEs: MySQL types the three together, so text and a number (with no date among
    them) are all read as numbers, where two separate comparisons would compare the text
    with the text as text (``'a' BETWEEN 'z' AND 3`` is 1: 0 <= 0 <= 3)."""
    present = {k for k in kinds if k is not None}
    return bool(present & TEXT_KINDS) and bool(present & NUMBER_KINDS) and not (
        present & TEMPORAL_KINDS)


def between_as_times(kinds: Iterable[Kind | None]) -> bool:
    """Whether ``v BETWEEN lo AND hi`` over values of these kinds compares all three as
    TIMEs: a TIME among text or numbers (no date) makes MySQL read every operand as a
    TIME, where two separate comparisons would compare the other two as doubles
    (``'00:00:10' BETWEEN tm AND 5`` is 0: 10 seconds are past 00:00:05)."""
    present = {k for k in kinds if k is not None}
    return TIME in present and len(present) > 1 and not present & DATE_KINDS


def between_as_dates(kinds: Iterable[Kind | None]) -> bool:
    """Whether ``v BETWEEN lo AND hi`` over values of these kinds compares all three as
    dates: a DATE or DATETIME among text or numbers (no TIME) makes MySQL read every
    operand as a date, where two separate comparisons would compare the other two with
    each other as text (``'2024-02-29' BETWEEN 'a' AND d`` is 1 for that day: 'a' is the
    zero date)."""
    present = {k for k in kinds if k is not None}
    return bool(present & DATE_KINDS) and bool(present - DATE_KINDS) and TIME not in present


__all__ = [
    "DATE_KINDS", "DIV_PRECISION_INCREMENT", "EXACT_KINDS", "FLOAT_TYPE", "INT_TYPE",
    "NOT_FIXED", "SINGLE_TYPE", "double_type", "shown_places",
    "MAX_FSP", "MAX_SCALE", "NULL", "NUMBER_KINDS", "STR_TYPE", "SqlType", "TEMPORAL_KINDS",
    "TEXT_KINDS", "UNDECLARED_DECIMAL_SCALE", "aggregate", "aggregate_result_type",
    "arithmetic_type", "avg_type", "between_as_dates", "between_as_doubles", "between_as_times",
    "column_type",
    "comparison_kind", "decimal_type", "division_frac", "extreme", "number_type", "sum_type",
    "time_type", "value_type",
]
