"""IR expressions to Spark columns, with the engine's (MySQL's) semantics.

One expression tree, two executors: the engine evaluates an IR expression with the
functions of :mod:`rivulet.values`; :class:`ExprCompiler` turns the same tree into a
Spark ``Column``. Each function is compiled natively only where Spark's built-in does
exactly what the engine's function does for the argument kinds at hand (the translations
are :mod:`rivulet.spark.natives`). Everything else runs the engine's own function in an
Arrow UDF (here), so the two executors cannot drift apart where Spark has no exact
equivalent: string-to-number conversion ("'12abc' = 12"), DECIMAL arithmetic at MySQL's
scales, ``ROUND``, dates parsed from text, and so on.

Static kinds. Every compiled expression carries the rivulet kind its values have
(:class:`rivulet.spark.kinds.Typed`, typed by the rules of :mod:`rivulet.spark.kinds`).
The planner has written MySQL's implicit conversions into the plan (a ``CASE`` mixing an
INT and a VARCHAR converts the INT branch to text), so both executors see one type per
column.

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
from decimal import Decimal
from typing import Any

import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet import values as F
from rivulet.errors import ParameterError, SqlError
from rivulet.plan.ir import Call, Case, Col, Expr, Lit, Param
from rivulet.spark.kinds import (
    NUMBER_KINDS,
    PREDICATES,
    TEXT_KINDS,
    Typed,
    null,
    number_kind,
    result_kind,
    unified,
)
from rivulet.spark.natives import NATIVE, operands
from rivulet.spark.values import (
    arrow_type,
    kind_of_type,
    scale_of_field,
    spark_type,
    to_kind,
)
from rivulet.values.schema import BOOL, BYTES, DATE, DATETIME, DECIMAL, FLOAT, INT, STR, Kind

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
        try:
            return pa.array(out, type=out_type)
        except OverflowError:  # an integer past Spark's 64 bits (BIGINT UNSIGNED's top half)
            raise SqlError(
                "an integer past 9223372036854775807 (a BIGINT UNSIGNED value, as CAST(-1 AS "
                "UNSIGNED) gives) cannot be computed on Spark, whose integers are 64-bit "
                "signed") from None

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
            return Typed(SF.col(f.name), kind_of_type(f.dataType), scale_of_field(f))
        if isinstance(e, Lit):
            return _literal(e.value)
        if isinstance(e, Case):
            return self._case(e)
        if isinstance(e, Param):
            raise ParameterError("a ? parameter cannot be computed on Spark")
        assert isinstance(e, Call), e
        args = [self.compile(a) for a in e.args]
        native = NATIVE.get(e.fn)
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
            return null()
        column = self.udf(_engine_function(fn), [a.value() for a in args], kind, scale)
        if fn in PREDICATES:
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
        if t.kind in NUMBER_KINDS:
            return t.column != SF.lit(0)
        if t.kind in TEXT_KINDS:
            return self.number(t).column != SF.lit(0.0)
        return SF.when(t.column.isNotNull(), SF.lit(True))  # a date is a nonzero number

    def number(self, t: Typed) -> Typed:
        """``values.to_number``: a value in a numeric context."""
        kind = number_kind(t.kind)
        if t.predicate:
            return Typed(t.value(), INT)
        if t.kind in NUMBER_KINDS or t.kind is None:
            return Typed(t.column, kind, t.scale)
        if t.kind == DATE:
            c = t.column
            n = SF.year(c).cast("long") * 10000 + SF.month(c) * 100 + SF.dayofmonth(c)
            return Typed(n.cast(T.LongType()), INT)
        return Typed(self.udf(F.to_number, [t.column], kind), kind)

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
        kind, scale = unified(values + ([default] if default is not None else []))
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
        return null()
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


def join_operands(c: ExprCompiler, a: Typed, b: Typed) -> tuple[Column, Column]:
    """The two sides of a join key ``a = b``, each converted on its own side, so that the
    join stays an equality of two columns (an equi-join Spark can hash or sort).

    A date against a string compares, in MySQL, with the string read as a date, or as
    strings when it is not one; a non-date string never equals a date's text, so for
    equality reading the string as a datetime (NULL when it is not one) is exact."""
    if a.kind is None or b.kind is None:
        return a.value(), b.value()
    pair = operands(c, a, b)
    if pair is not None:
        return pair

    def as_time(t: Typed) -> Column:
        return (c.udf(F.cast_datetime, [t.column], DATETIME) if t.kind in TEXT_KINDS
                else t.column.cast(T.TimestampNTZType()))

    return as_time(a), as_time(b)


__all__ = ["ExprCompiler", "engine_udf", "join_operands"]
