"""IR functions Spark computes natively, exactly as the engine's functions do.

Each translation returns a :class:`Typed` column, or None where Spark's built-in does not
do exactly what the engine's function does for the argument kinds at hand; the expression
compiler (:mod:`rivulet.spark.exprs`) then runs the engine's own function in an Arrow UDF.
Natively compiled are, for instance, ``int + int``, comparisons within one family of kinds,
three-valued AND/OR and ``LIKE`` with a constant pattern; left to the engine are
string-to-number conversion ("'12abc' = 12"), DECIMAL arithmetic at MySQL's scales,
``ROUND``, dates parsed from text, and so on.

Why a module of its own: the table of translations is long and grows one function at a
time, while the compiler that consults it is small. A translation reaches the compiler only
through :class:`Conversions` (MySQL's conversions of a value, and the UDF fallback), so
this module does not import the compiler, which imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pyspark.sql import Column
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet.plan.ir import Expr, Lit
from rivulet.spark.kinds import (
    DATE_KINDS,
    EXACT_KINDS,
    NUMBER_KINDS,
    TEXT_KINDS,
    Typed,
    arith_kind,
    null,
    null_predicate,
    number_kind,
    unified,
)
from rivulet.spark.values import spark_type
from rivulet.values.schema import BOOL, DATE, DATETIME, DECIMAL, FLOAT, INT, STR, Kind
from rivulet.values.strings import lower, upper

_COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")


class Conversions(Protocol):
    """What a translation uses of the expression compiler
    (:class:`rivulet.spark.exprs.ExprCompiler`): MySQL's conversions of a compiled value,
    and a column computed by the engine's own function."""

    def truth(self, t: Typed) -> Column: ...

    def number(self, t: Typed) -> Typed: ...

    def double(self, t: Typed) -> Column: ...

    def convert(self, t: Typed, kind: Kind | None, scale: int = 0) -> Column: ...

    def udf(self, impl: Callable[..., Any], args: Sequence[Column], kind: Kind | None,
            scale: int = 0) -> Column: ...


#: A translation: a Typed, or None to fall back to the engine's function in a UDF.
Native = Callable[[Conversions, list[Typed], Sequence[Expr]], "Typed | None"]


def _family(kind: Kind | None) -> str:
    if kind in EXACT_KINDS:
        return "exact"
    if kind == FLOAT:
        return "float"
    if kind in TEXT_KINDS:
        return "text"
    if kind in DATE_KINDS:
        return "time"
    raise TypeError(f"no comparison family for kind {kind!r}")


def operands(c: Conversions, a: Typed, b: Typed) -> tuple[Column, Column] | None:
    """Two comparison operands converted as ``values.coerce_pair`` converts them, or None
    where the conversion depends on the values (a date against a string or a number)."""
    fa, fb = _family(INT if a.predicate else a.kind), _family(INT if b.predicate else b.kind)
    if fa == fb:
        if fa == "text" and a.kind != b.kind:  # str vs bytes: compare as binary strings
            return a.column.cast(T.BinaryType()), b.column.cast(T.BinaryType())
        if fa == "time" and a.kind != b.kind:  # a DATE is midnight of its day
            return a.column.cast(T.TimestampNTZType()), b.column.cast(T.TimestampNTZType())
        return a.value(), b.value()
    if "time" in (fa, fb):
        return None  # the text or number read as a date, the zero date if it is not one
    if fa == "exact" and fb == "exact":
        return a.value(), b.value()
    return c.double(a), c.double(b)  # number vs string, or float vs exact: as DOUBLEs



def _comparison(fn: str) -> Native:
    def compile_(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
        a, b = args
        if a.kind is None or b.kind is None:
            return null_predicate()
        pair = operands(c, a, b)
        if pair is None:
            return None
        x, y = pair
        column = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
                  "ge": x >= y}[fn]
        return Typed(column, INT, predicate=True)

    return compile_


def _null_safe_eq(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    a, b = args
    if a.kind is None:
        return Typed(b.value().isNull(), INT, predicate=True)
    if b.kind is None:
        return Typed(a.value().isNull(), INT, predicate=True)
    pair = operands(c, a, b)
    if pair is None:
        return None
    return Typed(pair[0].eqNullSafe(pair[1]), INT, predicate=True)


def _and(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(c.truth(args[0]) & c.truth(args[1]), INT, predicate=True)


def _or(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(c.truth(args[0]) | c.truth(args[1]), INT, predicate=True)


def _not(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(~c.truth(args[0]), INT, predicate=True)


def _xor(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(c.truth(args[0]) != c.truth(args[1]), INT, predicate=True)


def _is_null(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(args[0].value().isNull(), INT, predicate=True)


def _is_not_null(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(args[0].value().isNotNull(), INT, predicate=True)


def _in(c: Conversions, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    """``v IN (...)`` is the OR of ``v = item``: true if one is; else NULL if v or an item
    is NULL; else false (``values.in_list``)."""
    eq = _comparison("eq")
    out: Column | None = None
    for item in args[1:]:
        test = eq(c, [args[0], item], exprs)
        if test is None:
            return None
        out = test.column if out is None else out | test.column
    assert out is not None  # IN lists at least one value
    return Typed(out, INT, predicate=True)


def _between(c: Conversions, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    ge = _comparison("ge")(c, [args[0], args[1]], exprs)
    le = _comparison("le")(c, [args[0], args[2]], exprs)
    if ge is None or le is None:
        return None
    return Typed(ge.column & le.column, INT, predicate=True)


def like_pattern(pattern: str, escape: str = "\\") -> str:
    """A LIKE pattern as Spark's LIKE reads it, meaning what ``values.like`` means: the
    escape character makes any next character literal and is literal at the end (Spark
    accepts an escape only before ``%``, ``_`` and itself)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if escape and ch == escape:
            literal = pattern[i + 1] if i + 1 < n else ch
            out.append("\\" + literal if literal in "%_\\" else literal)
            i += 2
            continue
        if ch in "%_":
            out.append(ch)
        else:
            out.append("\\" + ch if ch == "\\" else ch)
        i += 1
    return "".join(out)


def _like(c: Conversions, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    if len(exprs) > 2 or args[0].kind != STR or args[0].predicate:
        return None
    pattern = exprs[1]
    if not (isinstance(pattern, Lit) and type(pattern.value) is str):
        return None
    return Typed(args[0].column.like(like_pattern(pattern.value)), INT, predicate=True)


def _not_like(c: Conversions, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    out = _like(c, args, exprs)
    return None if out is None else Typed(~out.column, INT, predicate=True)


def _arith(op: str) -> Native:
    def compile_(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
        kind, _scale = arith_kind(args[0], args[1], op)
        if kind is None:
            return null()
        if kind == DECIMAL:
            return None  # exact DECIMAL arithmetic at MySQL's scales: the engine's function
        if kind == FLOAT:
            x, y = c.double(args[0]), c.double(args[1])
            column = {"add": x + y, "sub": x - y, "mul": x * y, "mod": x % y}[op]
        else:
            x, y = c.number(args[0]).column, c.number(args[1]).column
            column = _checked_integer(op, x, y)
        return Typed(column.cast(spark_type(kind)), kind)

    return compile_


def _checked_integer(op: str, x: Column, y: Column) -> Column:
    """BIGINT arithmetic that answers NULL where the result leaves 64 bits (MySQL raises an
    error there; Spark without ANSI would wrap around silently)."""
    if op == "add":
        return SF.try_add(x, y)
    if op == "sub":
        return SF.try_subtract(x, y)
    if op == "mul":
        return SF.try_multiply(x, y)
    return x % y


def _div(c: Conversions, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    kind, _ = arith_kind(args[0], args[1], "div")
    if kind == DECIMAL:  # exact division, carried to MySQL's places: the engine's function
        return None
    if kind is None:
        return null(FLOAT)
    return Typed(c.double(args[0]) / c.double(args[1]), FLOAT)  # x / 0 is NULL (non-ANSI)


def _int_div(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    a, b = (c.number(x) for x in args)
    if a.kind is None or b.kind is None:
        return null(INT)
    if a.kind != INT or b.kind != INT:
        return None
    return Typed(SF.call_function("div", a.column, b.column).cast(T.LongType()), INT)


def _neg(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    n = c.number(args[0])
    if n.kind is None:
        return null()
    if n.kind == INT:
        return Typed(SF.try_subtract(SF.lit(0).cast(T.LongType()), n.column), INT)
    return Typed(-n.column, n.kind, n.scale)


def _abs(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    a = args[0]
    if a.predicate or a.kind not in NUMBER_KINDS:
        return None
    return Typed(SF.abs(a.column), number_kind(a.kind), a.scale)


def _case_mapping(fn: Callable[[Column], Column], impl: Callable[[Any], Any]) -> Native:
    """UPPER/LOWER: Spark's own for ASCII text; other text goes to the engine's function,
    which maps each character to one as MySQL does (Spark's, like Python's str.upper, makes
    'ß' 'SS')."""
    def compile_(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
        if args[0].kind != STR or args[0].predicate:
            return None
        text = args[0].column
        ascii_only = text.rlike("^[\\x00-\\x7F]*$")
        return Typed(SF.when(ascii_only, fn(text)).otherwise(c.udf(impl, [text], STR)), STR)

    return compile_


def _concat(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    if any(a.kind != STR or a.predicate for a in args):
        return None
    return Typed(SF.concat(*[a.column for a in args]), STR)


def _octet_length(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    if args[0].kind not in TEXT_KINDS or args[0].predicate:
        return None
    return Typed(SF.octet_length(args[0].column).cast(T.LongType()), INT)


def _char_length(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    a = args[0]
    if a.predicate or a.kind not in TEXT_KINDS:
        return None
    length = SF.char_length(a.column) if a.kind == STR else SF.octet_length(a.column)
    return Typed(length.cast(T.LongType()), INT)


def _substring(c: Conversions, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    """Only a positive constant start: Spark reads 0 as 1 and cuts negative starts that
    reach before the string differently from MySQL."""
    if args[0].kind != STR or args[0].predicate:
        return None
    pos = exprs[1]
    if not (isinstance(pos, Lit) and type(pos.value) is int and pos.value > 0):
        return None
    if len(exprs) == 2:
        return Typed(SF.substring(args[0].column, pos.value, 2**31 - 1), STR)
    count = exprs[2]
    if not (isinstance(count, Lit) and type(count.value) is int):
        return None
    return Typed(SF.substring(args[0].column, pos.value, max(count.value, 0)), STR)


def _coalesce(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    kind, scale = unified(args)
    if kind is None:
        return null()
    return Typed(SF.coalesce(*[c.convert(a, kind, scale) for a in args]), kind, scale)


def _if(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    kind, scale = unified(args[1:])
    if kind is None:
        return null()
    column = SF.when(c.truth(args[0]), c.convert(args[1], kind, scale))
    return Typed(column.otherwise(c.convert(args[2], kind, scale)), kind, scale)


def _nullif(c: Conversions, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    equal = _comparison("eq")(c, args, exprs)
    if equal is None:
        return None
    a = args[0]
    if a.kind is None:
        return null()
    return Typed(SF.when(equal.column, SF.lit(None)).otherwise(a.value()), a.kind, a.scale)


def _date_part(fn: Callable[[Column], Column]) -> Native:
    def compile_(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
        if args[0].kind not in DATE_KINDS or args[0].predicate:
            return None
        return Typed(fn(args[0].column).cast(T.LongType()), INT)

    return compile_


def _date(c: Conversions, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    a = args[0]
    if a.predicate or a.kind not in DATE_KINDS:
        return None
    return Typed(a.column.cast(T.DateType()), DATE)


def _cast(kind: Kind, sources: tuple[str, ...]) -> Native:
    """CASTs Spark does exactly like ``values.cast_*`` for these source kinds (not
    ``CAST(x AS DECIMAL(p, s))``, which rounds and saturates: the engine's function)."""

    def compile_(c: Conversions, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
        if kind == FLOAT and len(exprs) == 2 and isinstance(exprs[1], Lit):
            args, exprs = args[:1], exprs[:1]  # (the places the plan's type shows, only)
        if len(args) > 1:
            return None  # CAST(x AS DECIMAL(M, D)): the engine rounds and saturates
        a = args[0]
        source = INT if a.predicate else a.kind
        if source is None:
            return null(kind)
        if source not in sources or len(exprs) > 1:
            return None
        scale = a.scale if kind == DECIMAL and source == DECIMAL else 0
        return Typed(c.convert(a, kind, scale), kind, scale)

    return compile_


def _to_scale(c: Conversions, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    """``values.to_scale``: an exact number at a number of places, rounded half up, as
    Spark's cast between decimals rounds."""
    a, places = args[0], exprs[1]
    if not (isinstance(places, Lit) and type(places.value) is int):
        return None
    if a.kind is None:
        return null(DECIMAL, places.value)
    if a.predicate or a.kind not in (INT, BOOL, DECIMAL):
        return None
    return Typed(a.column.cast(spark_type(DECIMAL, places.value)), DECIMAL, places.value)


NATIVE: dict[str, Native] = {
    **{fn: _comparison(fn) for fn in _COMPARE},
    "null_safe_eq": _null_safe_eq,
    "and_": _and,
    "or_": _or,
    "not_": _not,
    "xor": _xor,
    "is_null": _is_null,
    "is_not_null": _is_not_null,
    "in_list": _in,
    "between": _between,
    "like": _like,
    "not_like": _not_like,
    "add": _arith("add"),
    "sub": _arith("sub"),
    "mul": _arith("mul"),
    "mod": _arith("mod"),
    "MOD": _arith("mod"),
    "div": _div,
    "int_div": _int_div,
    "neg": _neg,
    "ABS": _abs,
    "LOWER": _case_mapping(SF.lower, lower),
    "LCASE": _case_mapping(SF.lower, lower),
    "UPPER": _case_mapping(SF.upper, upper),
    "UCASE": _case_mapping(SF.upper, upper),
    "CONCAT": _concat,
    "LENGTH": _octet_length,
    "OCTET_LENGTH": _octet_length,
    "CHAR_LENGTH": _char_length,
    "CHARACTER_LENGTH": _char_length,
    "SUBSTRING": _substring,
    "SUBSTR": _substring,
    "MID": _substring,
    "COALESCE": _coalesce,
    "IFNULL": _coalesce,
    "IF": _if,
    "NULLIF": _nullif,
    "YEAR": _date_part(SF.year),
    "MONTH": _date_part(SF.month),
    "DAY": _date_part(SF.dayofmonth),
    "DAYOFMONTH": _date_part(SF.dayofmonth),
    "DATE": _date,
    "cast_int": _cast(INT, (INT, BOOL)),
    "cast_float": _cast(FLOAT, (INT, BOOL, FLOAT)),
    "cast_decimal": _cast(DECIMAL, (INT, BOOL, DECIMAL)),
    "cast_str": _cast(STR, (INT, BOOL, STR)),
    "cast_date": _cast(DATE, (DATE,)),
    "cast_datetime": _cast(DATETIME, (DATE, DATETIME)),
    "to_scale": _to_scale,
}


__all__ = ["NATIVE", "Conversions", "Native", "like_pattern", "operands"]
