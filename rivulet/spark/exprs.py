"""IR expressions to Spark columns, with the engine's (MySQL's) semantics.

One expression tree, two executors: the engine evaluates an IR expression with the
functions of :mod:`rivulet.values`; this module turns the same tree into a
Spark ``Column``. Each operator is compiled natively only where Spark's built-in does
exactly what the engine's function does for the argument kinds at hand (``int + int``,
comparisons within one family of kinds, three-valued AND/OR, ``LIKE`` with a constant
pattern...). Everything else runs the engine's own function in an Arrow UDF, so the two
executors cannot drift apart where Spark has no exact equivalent: string-to-number
conversion ("'12abc' = 12"), DECIMAL arithmetic at MySQL's scales, ``ROUND``, dates parsed
from text, and so on.

Static kinds. Spark needs one type per column, while a Python function may return values of
several types. Every compiled expression therefore carries the rivulet kind its values have
(:class:`Typed`), derived from the kinds of its arguments by the same rules the engine's
functions follow at run time (``int + int`` is int, ``int / int`` is float, ``FLOOR`` of a
float is a float...). Where the engine's result kind depends on the *values* (``COALESCE``,
``IF`` and ``CASE`` mixing kinds, e.g. an INT and a VARCHAR), Spark converts every value to
the unified kind, as MySQL does (the engine then returns mixed Python types).

Predicates are Spark booleans (true/false/NULL is SQL's three-valued logic); where a
predicate is used as a value it becomes 1/0/NULL, as MySQL's booleans are.

UDFs are Arrow UDFs (``arrow_udf``): arguments arrive as exact Python values (no pandas
float64 for integers with NULLs) and results leave as typed Arrow arrays. Spark evaluates a
UDF on every row, even under a CASE branch the row does not take, so an engine function
that raises on a value (they should not: MySQL turns bad data into NULL) answers NULL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet import values as F
from rivulet.errors import ParameterError, SqlError
from rivulet.plan.expressions import unify_kinds
from rivulet.plan.ir import Call, Case, Col, Expr, Lit, Param
from rivulet.spark.values import (
    MAX_COMPUTED_SCALE,
    arrow_type,
    kind_of_type,
    scale_of_type,
    spark_type,
    to_kind,
)
from rivulet.values.schema import BOOL, BYTES, DATE, DATETIME, DECIMAL, FLOAT, INT, STR, Kind

_EXACT = (INT, BOOL, DECIMAL)
_NUMBERS = (INT, BOOL, DECIMAL, FLOAT)
_TEXT = (STR, BYTES)
_TIME = (DATE, DATETIME)
_COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")


@dataclass(frozen=True)
class Typed:
    """A compiled expression: its column, the rivulet kind of its values, the decimal
    scale (for ``decimal``), and whether the column is a Spark boolean (a predicate)."""

    column: Column
    kind: Kind | None
    scale: int = 0
    predicate: bool = False

    def value(self) -> Column:
        """The column as SQL values (a predicate as 1/0/NULL)."""
        return self.column.cast(T.LongType()) if self.predicate else self.column


def _null(kind: Kind | None = None, scale: int = 0) -> Typed:
    return Typed(SF.lit(None).cast(spark_type(kind, scale)), kind, scale)


def _null_predicate() -> Typed:
    return Typed(SF.lit(None).cast(T.BooleanType()), INT, predicate=True)


# --------------------------------------------------------------------------- Arrow UDFs


def _call_engine(impl: Callable[..., Any], kind: Kind | None,
                 scale: int) -> Callable[[pa.Array], pa.Array]:
    """A batch function for an Arrow UDF: unpacks the argument struct into Python values,
    calls the engine's ``impl`` on each row, converts results to ``kind``."""
    out_type = arrow_type(kind, scale)

    def call(args: tuple) -> Any:
        try:
            return impl(*args)
        except Exception:  # noqa: BLE001 - see below
            # MySQL never fails on data (a warning and NULL), and the engine's functions
            # promise not to. Where one still raises, the engine fails only if it really
            # evaluates it, while Spark evaluates a UDF on every row, even under a CASE
            # branch not taken: NULL keeps the job alive and the answer MySQL's.
            return None

    def run(packed: pa.Array) -> pa.Array:
        columns = [packed.field(i).to_pylist() for i in range(packed.type.num_fields)]
        out = [to_kind(call(args), kind, scale) for args in zip(*columns)]
        return pa.array(out, type=out_type)

    return run


#: ``SF.arrow_udf``, called as pyspark documents it: the UDF's kind comes from the
#: function's type hints. (pyspark's stubs declare it only with an explicit
#: ``functionType``, which the runtime discourages with a warning.)
_arrow_udf: Callable[..., Any] = SF.arrow_udf


def engine_udf(impl: Callable[..., Any], args: Sequence[Column], kind: Kind | None,
               scale: int = 0) -> Column:
    """A column computing ``impl(*args)`` row by row with the engine's function."""
    udf = _arrow_udf(_call_engine(impl, kind, scale), spark_type(kind, scale))
    return udf(SF.struct(*[a.alias(f"a{i}") for i, a in enumerate(args)]))


def _in_list(v: Any, *items: Any) -> Any:
    return F.in_list(v, items)


def _identity(v: Any) -> Any:
    return v


def _engine_function(fn: str) -> Callable[..., Any]:
    if fn == "in_list":
        return _in_list
    if fn in F.CASTS:
        return F.CASTS[fn]
    impl = F.SCALAR_FUNCTIONS.get(fn)
    if impl is None and fn in F.__all__ and fn == fn.lower():
        impl = getattr(F, fn)
    if impl is None:
        raise SqlError(f"unknown function {fn}()")
    return impl


# --------------------------------------------------------------------------- kinds


def number_kind(kind: Kind | None) -> Kind | None:
    """The kind ``values.to_number`` gives a value of ``kind``."""
    if kind in (INT, BOOL):
        return INT
    if kind in (FLOAT, DECIMAL, None):
        return kind
    if kind in _TEXT:
        return FLOAT
    if kind == DATE:
        return INT
    if kind == DATETIME:
        return DECIMAL  # YYYYMMDDhhmmss[.ffffff]
    raise TypeError(kind)


def _arith_kind(a: Typed, b: Typed) -> tuple[Kind | None, int]:
    ka, kb = number_kind(a.kind), number_kind(b.kind)
    if ka is None or kb is None:
        return ka or kb, max(_num_scale(a), _num_scale(b))
    if FLOAT in (ka, kb):
        return FLOAT, 0
    if ka == INT and kb == INT:
        return INT, 0
    return DECIMAL, max(_num_scale(a), _num_scale(b))


def _num_scale(t: Typed) -> int:
    if t.kind == DECIMAL:
        return t.scale
    if t.kind == DATETIME:
        return 6
    return 0


def _capped(scale: int, *inputs: int) -> int:
    return min(scale, max(MAX_COMPUTED_SCALE, *inputs))


_TEXT_FUNCTIONS = {"CONCAT", "CONCAT_WS", "LOWER", "LCASE", "UPPER", "UCASE", "SUBSTRING",
                   "SUBSTR", "MID", "LEFT", "RIGHT", "TRIM", "LTRIM", "RTRIM", "REPLACE",
                   "REVERSE", "LPAD", "RPAD", "REPEAT"}
_TEXT_ANY_ARG = {"CONCAT", "CONCAT_WS", "REPLACE", "LPAD", "RPAD", "TRIM"}
_INT_FUNCTIONS = {"LENGTH", "OCTET_LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH", "LOCATE",
                  "INSTR", "YEAR", "MONTH", "DAY", "DAYOFMONTH", "HOUR", "MINUTE", "SECOND",
                  "DATEDIFF", "SIGN", "int_div", "cast_int"}
_PREDICATES = {"eq", "ne", "lt", "le", "gt", "ge", "null_safe_eq", "and_", "or_", "xor",
               "not_", "like", "not_like", "in_list", "between", "is_null", "is_not_null"}
_UNIFIED = {"COALESCE", "IFNULL"}


def _unified(args: Sequence[Typed]) -> tuple[Kind | None, int]:
    kind = unify_kinds([a.kind for a in args])
    scale = max((a.scale for a in args if a.kind == DECIMAL), default=0)
    return kind, scale


def result_kind(fn: str, args: Sequence[Typed], exprs: Sequence[Expr]) -> tuple[Kind | None, int]:
    """The kind (and decimal scale) of the values ``values.<fn>`` returns for arguments
    of these kinds: the engine's run-time typing, written down statically."""
    kinds = [a.kind for a in args]
    if fn in _PREDICATES or fn in _INT_FUNCTIONS:
        return INT, 0
    if fn in _TEXT_FUNCTIONS:
        text_args = kinds if fn in _TEXT_ANY_ARG else kinds[:1]
        return (BYTES if BYTES in text_args else STR), 0
    if fn in ("add", "sub", "mod", "MOD"):
        kind, scale = _arith_kind(args[0], args[1])
        return kind, _capped(scale, scale)
    if fn == "mul":
        kind, _ = _arith_kind(args[0], args[1])
        scale = _num_scale(args[0]) + _num_scale(args[1])
        return kind, _capped(scale, _num_scale(args[0]), _num_scale(args[1]))
    if fn == "div":
        kind, _ = _arith_kind(args[0], args[1])
        if kind == DECIMAL:
            return DECIMAL, _capped(_num_scale(args[0]) + 4, _num_scale(args[0]) + 4)
        return FLOAT, 0
    if fn in ("neg", "ABS"):
        return number_kind(kinds[0]), _num_scale(args[0])
    if fn == "ROUND":
        return number_kind(kinds[0]), _round_scale(args, exprs)
    if fn in ("FLOOR", "CEIL", "CEILING"):
        return (FLOAT if number_kind(kinds[0]) == FLOAT else INT), 0
    if fn in ("GREATEST", "LEAST"):
        return _extreme_kind(args)
    if fn in _UNIFIED:
        return _unified(args)
    if fn == "IF":
        return _unified(args[1:])
    if fn == "NULLIF":
        return kinds[0], args[0].scale
    if fn in ("DATE", "cast_date"):
        return DATE, 0
    if fn == "cast_datetime":
        return DATETIME, 0
    if fn == "cast_float":
        return FLOAT, 0
    if fn == "cast_decimal":
        if kinds[0] == DECIMAL:
            return DECIMAL, args[0].scale
        return DECIMAL, 0 if kinds[0] in (INT, BOOL) else MAX_COMPUTED_SCALE
    if fn == "cast_str":
        return (BYTES if kinds[0] == BYTES else STR), 0
    if fn == "UNIX_TIMESTAMP":
        return (INT, 0) if kinds[0] in (DATE, INT, BOOL) else (DECIMAL, 6)
    raise SqlError(f"no result kind known for function {fn}()")


def _round_scale(args: Sequence[Typed], exprs: Sequence[Expr]) -> int:
    if args[0].kind != DECIMAL:
        return 0
    if len(exprs) < 2:
        return 0
    d = exprs[1]
    if isinstance(d, Lit) and type(d.value) is int:
        return max(0, min(args[0].scale, d.value))
    return args[0].scale


def _extreme_kind(args: Sequence[Typed]) -> tuple[Kind | None, int]:
    present = [a for a in args if a.kind is not None]
    kinds = {a.kind for a in present}
    if not kinds:
        return None, 0
    families = {("n" if k in _NUMBERS else "s" if k in _TEXT else "t") for k in kinds}
    if families == {"n"}:
        if FLOAT in kinds:
            return FLOAT, 0
        if DECIMAL in kinds:
            return _unified(present)
        return INT, 0
    if "s" in families and "n" in families:
        return (BYTES if BYTES in kinds else STR), 0
    return _unified(present)


# --------------------------------------------------------------------------- the compiler


class ExprCompiler:
    """Compiles expressions over one input row, whose columns are named ``c0..cN``.

    ``uses_python`` tells whether any compiled expression runs a Python UDF (Spark cannot
    evaluate those inside an outer join's condition, so the join compiler must know).
    """

    def __init__(self, fields: Sequence[T.StructField]) -> None:
        self.fields = list(fields)
        self.uses_python = False

    # ..................................................................... entry points

    def value(self, e: Expr) -> Column:
        return self.compile(e).value()

    def predicate(self, e: Expr) -> Column:
        """A Spark boolean that is true exactly where the engine's filter keeps a row."""
        return self.truth(self.compile(e))

    def compile(self, e: Expr) -> Typed:
        if isinstance(e, Col):
            f = self.fields[e.index]
            return Typed(SF.col(f.name), kind_of_type(f.dataType), scale_of_type(f.dataType))
        if isinstance(e, Lit):
            return _literal(e.value)
        if isinstance(e, Case):
            return self._case(e)
        if isinstance(e, Param):
            raise ParameterError("a ? parameter cannot be computed on Spark")
        assert isinstance(e, Call), e
        args = [self.compile(a) for a in e.args]
        native = _NATIVE.get(e.fn)
        if native is not None:
            out = native(self, args, e.args)
            if out is not None:
                return out
        return self.engine(e.fn, args, e.args)

    # ..................................................................... Python fallback

    def engine(self, fn: str, args: Sequence[Typed], exprs: Sequence[Expr]) -> Typed:
        """``fn`` evaluated by the engine's own function, in an Arrow UDF."""
        kind, scale = result_kind(fn, args, exprs)
        if kind is None:
            return _null()
        column = self.udf(_engine_function(fn), [a.value() for a in args], kind, scale)
        if fn in _PREDICATES:
            return Typed(column.cast(T.BooleanType()), INT, predicate=True)
        return Typed(column, kind, scale)

    def udf(self, impl: Callable[..., Any], args: Sequence[Column], kind: Kind | None,
            scale: int = 0) -> Column:
        self.uses_python = True
        return engine_udf(impl, args, kind, scale)

    # ..................................................................... conversions

    def truth(self, t: Typed) -> Column:
        """``values.truth``: a value in a boolean context."""
        if t.predicate:
            return t.column
        if t.kind is None:
            return SF.lit(None).cast(T.BooleanType())
        if t.kind in _NUMBERS:
            return t.column != SF.lit(0)
        if t.kind in _TEXT:
            return self.number(t).column != SF.lit(0.0)
        return SF.when(t.column.isNotNull(), SF.lit(True))  # a date is a nonzero number

    def number(self, t: Typed) -> Typed:
        """``values.to_number``: a value in a numeric context."""
        kind = number_kind(t.kind)
        if t.predicate:
            return Typed(t.value(), INT)
        if t.kind in _NUMBERS or t.kind is None:
            return Typed(t.column, kind, t.scale)
        if t.kind == DATE:
            c = t.column
            n = SF.year(c).cast("long") * 10000 + SF.month(c) * 100 + SF.dayofmonth(c)
            return Typed(n.cast(T.LongType()), INT)
        scale = 6 if t.kind == DATETIME else 0
        return Typed(self.udf(F.to_number, [t.column], kind, scale), kind, scale)

    def double(self, t: Typed) -> Column:
        """A value as MySQL's DOUBLE comparison operand (``values.as_float``)."""
        n = self.number(t)
        if n.kind == FLOAT:
            return n.column
        return n.column.cast(T.DoubleType())

    def convert(self, t: Typed, kind: Kind | None, scale: int = 0) -> Column:
        """``t``'s values as values of ``kind`` (MySQL's conversion in that context)."""
        if t.kind == kind and (kind != DECIMAL or t.scale == scale):
            return t.value()
        if t.kind is None:
            return SF.lit(None).cast(spark_type(kind, scale))
        if kind is None:
            return t.value()
        source = INT if t.predicate else t.kind
        target = spark_type(kind, scale)
        if kind in (INT, BOOL) and source in (INT, BOOL):
            return t.value()
        if kind == FLOAT and source in (INT, BOOL, FLOAT):
            return t.value().cast(target)
        if kind == DECIMAL and source in (INT, BOOL, DECIMAL):
            return t.value().cast(target)
        if kind == STR and source in (INT, BOOL, STR, DATE):
            return t.value().cast(target)
        if kind == DATETIME and source == DATE:
            return t.column.cast(target)
        if kind == BYTES and source == STR:
            return t.column.cast(target)
        return self.udf(_identity, [t.value()], kind, scale)

    # ..................................................................... CASE

    def _case(self, e: Case) -> Typed:
        values = [self.compile(v) for _, v in e.whens]
        default = self.compile(e.default) if e.default is not None else None
        kind, scale = _unified(values + ([default] if default is not None else []))
        column: Column | None = None
        for (cond, _), value in zip(e.whens, values):
            test = self.predicate(cond)
            branch = self.convert(value, kind, scale)
            column = SF.when(test, branch) if column is None else column.when(test, branch)
        assert column is not None
        if default is not None:
            column = column.otherwise(self.convert(default, kind, scale))
        if kind is None:
            return Typed(column, None)
        return Typed(column.cast(spark_type(kind, scale)), kind, scale)


# --------------------------------------------------------------------------- literals


def _literal(value: Any) -> Typed:
    t = type(value)
    if value is None:
        return _null()
    if t is bool or t is int:
        return Typed(SF.lit(int(value)).cast(T.LongType()), INT)
    if t is float:
        return Typed(SF.lit(value).cast(T.DoubleType()), FLOAT)
    if t is Decimal:
        scale = max(0, -value.as_tuple().exponent) if value.is_finite() else 0
        return Typed(SF.lit(value).cast(spark_type(DECIMAL, scale)), DECIMAL, scale)
    if t is str:
        return Typed(SF.lit(value), STR)
    if t is bytes:
        return Typed(SF.lit(bytearray(value)).cast(T.BinaryType()), BYTES)
    if t is dt.datetime:
        return Typed(SF.lit(value.isoformat(" ")).cast(T.TimestampNTZType()), DATETIME)
    if t is dt.date:
        return Typed(SF.lit(value), DATE)
    raise SqlError(f"cannot compile the constant {value!r} for Spark")


# --------------------------------------------------------------------------- natives
# Each returns a Typed, or None to fall back to the engine's function in a UDF.

Native = Callable[[ExprCompiler, list[Typed], Sequence[Expr]], "Typed | None"]


def _family(kind: Kind | None) -> str:
    if kind in _EXACT:
        return "exact"
    if kind == FLOAT:
        return "float"
    if kind in _TEXT:
        return "text"
    if kind in _TIME:
        return "time"
    raise TypeError(f"no comparison family for kind {kind!r}")


def _operands(c: ExprCompiler, a: Typed, b: Typed) -> tuple[Column, Column] | None:
    """Two comparison operands converted as ``values.coerce_pair`` converts them, or None
    where the conversion depends on the values (a date against a string)."""
    fa, fb = _family(INT if a.predicate else a.kind), _family(INT if b.predicate else b.kind)
    if fa == fb:
        if fa == "text" and a.kind != b.kind:  # str vs bytes: compare as binary strings
            return a.column.cast(T.BinaryType()), b.column.cast(T.BinaryType())
        if fa == "time" and a.kind != b.kind:  # a DATE is midnight of its day
            return a.column.cast(T.TimestampNTZType()), b.column.cast(T.TimestampNTZType())
        return a.value(), b.value()
    if "time" in (fa, fb):
        if "text" in (fa, fb):
            return None
        # temporal vs number: the date as the number YYYYMMDD[hhmmss], then compare again
        return _operands(c, c.number(a) if fa == "time" else a, c.number(b) if fb == "time" else b)
    if fa == "exact" and fb == "exact":
        return a.value(), b.value()
    return c.double(a), c.double(b)  # number vs string, or float vs exact: as DOUBLEs


def join_operands(c: ExprCompiler, a: Typed, b: Typed) -> tuple[Column, Column]:
    """The two sides of a join key ``a = b``, each converted on its own side, so that the
    join stays an equality of two columns (an equi-join Spark can hash or sort).

    A date against a string compares, in MySQL, with the string read as a date, or as
    strings when it is not one; a non-date string never equals a date's text, so for
    equality reading the string as a datetime (NULL when it is not one) is exact."""
    if a.kind is None or b.kind is None:
        return a.value(), b.value()
    pair = _operands(c, a, b)
    if pair is not None:
        return pair

    def as_time(t: Typed) -> Column:
        return (c.udf(F.cast_datetime, [t.column], DATETIME) if t.kind in _TEXT
                else t.column.cast(T.TimestampNTZType()))

    return as_time(a), as_time(b)


def _comparison(fn: str) -> Native:
    def compile_(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
        a, b = args
        if a.kind is None or b.kind is None:
            return _null_predicate()
        pair = _operands(c, a, b)
        if pair is None:
            return None
        x, y = pair
        column = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y,
                  "ge": x >= y}[fn]
        return Typed(column, INT, predicate=True)

    return compile_


def _null_safe_eq(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    a, b = args
    if a.kind is None:
        return Typed(b.value().isNull(), INT, predicate=True)
    if b.kind is None:
        return Typed(a.value().isNull(), INT, predicate=True)
    pair = _operands(c, a, b)
    if pair is None:
        return None
    return Typed(pair[0].eqNullSafe(pair[1]), INT, predicate=True)


def _and(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(c.truth(args[0]) & c.truth(args[1]), INT, predicate=True)


def _or(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(c.truth(args[0]) | c.truth(args[1]), INT, predicate=True)


def _not(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(~c.truth(args[0]), INT, predicate=True)


def _xor(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(c.truth(args[0]) != c.truth(args[1]), INT, predicate=True)


def _is_null(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(args[0].value().isNull(), INT, predicate=True)


def _is_not_null(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    return Typed(args[0].value().isNotNull(), INT, predicate=True)


def _in(c: ExprCompiler, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
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


def _between(c: ExprCompiler, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
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


def _like(c: ExprCompiler, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    if len(exprs) > 2 or args[0].kind != STR or args[0].predicate:
        return None
    pattern = exprs[1]
    if not (isinstance(pattern, Lit) and type(pattern.value) is str):
        return None
    return Typed(args[0].column.like(like_pattern(pattern.value)), INT, predicate=True)


def _not_like(c: ExprCompiler, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    out = _like(c, args, exprs)
    return None if out is None else Typed(~out.column, INT, predicate=True)


def _arith(op: str) -> Native:
    def compile_(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
        kind, _scale = _arith_kind(args[0], args[1])
        if kind is None:
            return _null()
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


def _div(c: ExprCompiler, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    kind, _ = _arith_kind(args[0], args[1])
    if kind == DECIMAL:
        return None
    if kind is None:
        return _null(FLOAT)
    return Typed(c.double(args[0]) / c.double(args[1]), FLOAT)  # x / 0 is NULL (non-ANSI)


def _int_div(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    a, b = (c.number(x) for x in args)
    if a.kind is None or b.kind is None:
        return _null(INT)
    if a.kind != INT or b.kind != INT:
        return None
    return Typed(SF.call_function("div", a.column, b.column).cast(T.LongType()), INT)


def _neg(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    n = c.number(args[0])
    if n.kind is None:
        return _null()
    if n.kind == INT:
        return Typed(SF.try_subtract(SF.lit(0).cast(T.LongType()), n.column), INT)
    return Typed(-n.column, n.kind, n.scale)


def _abs(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    a = args[0]
    if a.predicate or a.kind not in _NUMBERS:
        return None
    return Typed(SF.abs(a.column), number_kind(a.kind), a.scale)


def _string(fn: Callable[[Column], Column]) -> Native:
    def compile_(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
        if args[0].kind != STR or args[0].predicate:
            return None
        return Typed(fn(args[0].column), STR)

    return compile_


def _concat(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    if any(a.kind != STR or a.predicate for a in args):
        return None
    return Typed(SF.concat(*[a.column for a in args]), STR)


def _octet_length(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    if args[0].kind not in _TEXT or args[0].predicate:
        return None
    return Typed(SF.octet_length(args[0].column).cast(T.LongType()), INT)


def _char_length(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    a = args[0]
    if a.predicate or a.kind not in _TEXT:
        return None
    length = SF.char_length(a.column) if a.kind == STR else SF.octet_length(a.column)
    return Typed(length.cast(T.LongType()), INT)


def _substring(c: ExprCompiler, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
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


def _coalesce(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    kind, scale = _unified(args)
    if kind is None:
        return _null()
    return Typed(SF.coalesce(*[c.convert(a, kind, scale) for a in args]), kind, scale)


def _if(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed:
    kind, scale = _unified(args[1:])
    if kind is None:
        return _null()
    column = SF.when(c.truth(args[0]), c.convert(args[1], kind, scale))
    return Typed(column.otherwise(c.convert(args[2], kind, scale)), kind, scale)


def _nullif(c: ExprCompiler, args: list[Typed], exprs: Sequence[Expr]) -> Typed | None:
    equal = _comparison("eq")(c, args, exprs)
    if equal is None:
        return None
    a = args[0]
    if a.kind is None:
        return _null()
    return Typed(SF.when(equal.column, SF.lit(None)).otherwise(a.value()), a.kind, a.scale)


def _date_part(fn: Callable[[Column], Column]) -> Native:
    def compile_(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
        if args[0].kind not in _TIME or args[0].predicate:
            return None
        return Typed(fn(args[0].column).cast(T.LongType()), INT)

    return compile_


def _date(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
    a = args[0]
    if a.predicate or a.kind not in _TIME:
        return None
    return Typed(a.column.cast(T.DateType()), DATE)


def _cast(kind: Kind, sources: tuple[str, ...]) -> Native:
    """CASTs Spark does exactly like ``values.cast_*`` for these source kinds."""

    def compile_(c: ExprCompiler, args: list[Typed], _exprs: Sequence[Expr]) -> Typed | None:
        a = args[0]
        source = INT if a.predicate else a.kind
        if source is None:
            return _null(kind)
        if source not in sources:
            return None
        scale = a.scale if kind == DECIMAL and source == DECIMAL else 0
        return Typed(c.convert(a, kind, scale), kind, scale)

    return compile_


_NATIVE: dict[str, Native] = {
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
    "LOWER": _string(SF.lower),
    "LCASE": _string(SF.lower),
    "UPPER": _string(SF.upper),
    "UCASE": _string(SF.upper),
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
}

__all__ = ["ExprCompiler", "Typed", "engine_udf", "join_operands", "like_pattern", "number_kind",
           "result_kind"]
