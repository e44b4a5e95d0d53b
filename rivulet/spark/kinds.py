"""The static kind of a compiled expression's values (:class:`Typed`).

Spark needs one type per column. Every expression compiled for Spark therefore carries
the rivulet kind its values have (and, for a DECIMAL, the places they carry), derived from
the kinds of its arguments by the rules the planner types expressions with
(:mod:`rivulet.values.types`, :func:`rivulet.plan.expressions.result_type`: ``int + int``
is int, ``int / int`` a DECIMAL carrying nine places, ``FLOOR`` of a float a float...),
which the engine's values follow at run time.

ENUM and TIME values never reach Spark (:data:`rivulet.spark.values.NOT_ON_SPARK`), so
their typing rules (an ENUM's index, a TIME's fractional digits) are the planner's alone.

Why a module of its own: both the expression compiler (:mod:`rivulet.spark.exprs`) and
the native translations (:mod:`rivulet.spark.natives`) type what they compile by these
rules, and the rules depend on nothing Spark computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet.errors import SqlError
from rivulet.plan.expressions import PREDICATES, result_type
from rivulet.plan.ir import Expr
from rivulet.spark.values import DECIMAL_PRECISION, MAX_COMPUTED_SCALE, spark_type
from rivulet.values.schema import BOOL, BYTES, DATE, DATETIME, DECIMAL, FLOAT, INT, STR, Kind
from rivulet.values.types import SqlType, aggregate, arithmetic_type, number_type

EXACT_KINDS = (INT, BOOL, DECIMAL)
NUMBER_KINDS = (INT, BOOL, DECIMAL, FLOAT)
TEXT_KINDS = (STR, BYTES)
DATE_KINDS = (DATE, DATETIME)


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


def null(kind: Kind | None = None, scale: int = 0) -> Typed:
    return Typed(SF.lit(None).cast(spark_type(kind, scale)), kind, scale)


def null_predicate() -> Typed:
    return Typed(SF.lit(None).cast(T.BooleanType()), INT, predicate=True)


def number_kind(kind: Kind | None) -> Kind | None:
    """The kind ``values.to_number`` gives a value of ``kind``."""
    return number_type(SqlType(kind)).kind


def sql_type(t: Typed) -> SqlType:
    """The static type of a compiled value; Spark keeps the places a DECIMAL carries (its
    column's scale), which is what the typing rules need of an argument."""
    if t.predicate:
        return SqlType(INT)
    return SqlType(t.kind, t.scale, t.scale)


def arith_kind(a: Typed, b: Typed, fn: str = "add") -> tuple[Kind | None, int]:
    t = arithmetic_type(fn, sql_type(a), sql_type(b))
    return t.kind, t.frac


def _capped(scale: int, *inputs: int) -> int:
    return min(scale, max(MAX_COMPUTED_SCALE, *inputs, 0))


def unified(args: Sequence[Typed]) -> tuple[Kind | None, int]:
    t = aggregate([sql_type(a) for a in args])
    return t.kind, t.frac


def result_kind(fn: str, args: Sequence[Typed], exprs: Sequence[Expr]) -> tuple[Kind | None, int]:
    """The kind (and the places a DECIMAL carries) of the values ``values.<fn>`` returns
    for arguments of these kinds: the plan's typing (:func:`rivulet.plan.expressions.
    result_type`), which the engine's values follow."""
    t = result_type(fn, [sql_type(a) for a in args], exprs)
    if t.kind is None and any(a.kind is not None for a in args):
        raise SqlError(f"no result kind known for function {fn}()")
    if t.kind != DECIMAL:
        return t.kind, 0
    if fn in ("cast_decimal", "to_scale"):  # places the query names: kept
        return DECIMAL, min(t.frac, DECIMAL_PRECISION)
    return DECIMAL, _capped(t.frac, *[a.scale for a in args if a.kind == DECIMAL])


__all__ = ["DATE_KINDS", "EXACT_KINDS", "NUMBER_KINDS", "PREDICATES", "TEXT_KINDS", "Typed",
           "arith_kind", "null", "null_predicate", "number_kind", "result_kind", "unified"]
