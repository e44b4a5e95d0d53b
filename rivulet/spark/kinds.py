"""The static kind of a compiled expression's values (:class:`Typed`).

Spark needs one type per column, while a Python function may return values of several
types. Every expression compiled for Spark therefore carries the rivulet kind its values
have, derived from the kinds of its arguments by the same rules the engine's functions
follow at run time (``int + int`` is int, ``int / int`` is float, ``FLOOR`` of a float is a
float...): :func:`result_kind` writes the engine's run-time typing down statically.

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
from rivulet.plan.expressions import unify_kinds
from rivulet.plan.ir import Expr, Lit
from rivulet.spark.values import MAX_COMPUTED_SCALE, spark_type
from rivulet.values.schema import BOOL, BYTES, DATE, DATETIME, DECIMAL, FLOAT, INT, STR, Kind

EXACT_KINDS = (INT, BOOL, DECIMAL)
NUMBER_KINDS = (INT, BOOL, DECIMAL, FLOAT)
TEXT_KINDS = (STR, BYTES)
TIME_KINDS = (DATE, DATETIME)


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
    if kind in (INT, BOOL):
        return INT
    if kind in (FLOAT, DECIMAL, None):
        return kind
    if kind in TEXT_KINDS:
        return FLOAT
    if kind == DATE:
        return INT
    if kind == DATETIME:
        return DECIMAL  # YYYYMMDDhhmmss[.ffffff]
    raise TypeError(kind)


def arith_kind(a: Typed, b: Typed) -> tuple[Kind | None, int]:
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
PREDICATES = {"eq", "ne", "lt", "le", "gt", "ge", "null_safe_eq", "and_", "or_", "xor",
               "not_", "like", "not_like", "in_list", "between", "is_null", "is_not_null"}
_UNIFIED = {"COALESCE", "IFNULL"}


def unified(args: Sequence[Typed]) -> tuple[Kind | None, int]:
    kind = unify_kinds([a.kind for a in args])
    scale = max((a.scale for a in args if a.kind == DECIMAL), default=0)
    return kind, scale


def result_kind(fn: str, args: Sequence[Typed], exprs: Sequence[Expr]) -> tuple[Kind | None, int]:
    """The kind (and decimal scale) of the values ``values.<fn>`` returns for arguments
    of these kinds: the engine's run-time typing, written down statically."""
    kinds = [a.kind for a in args]
    if fn in PREDICATES or fn in _INT_FUNCTIONS:
        return INT, 0
    if fn in _TEXT_FUNCTIONS:
        text_args = kinds if fn in _TEXT_ANY_ARG else kinds[:1]
        return (BYTES if BYTES in text_args else STR), 0
    if fn in ("add", "sub", "mod", "MOD"):
        kind, scale = arith_kind(args[0], args[1])
        return kind, _capped(scale, scale)
    if fn == "mul":
        kind, _ = arith_kind(args[0], args[1])
        scale = _num_scale(args[0]) + _num_scale(args[1])
        return kind, _capped(scale, _num_scale(args[0]), _num_scale(args[1]))
    if fn == "div":
        kind, _ = arith_kind(args[0], args[1])
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
        return unified(args)
    if fn == "IF":
        return unified(args[1:])
    if fn == "NULLIF":
        return kinds[0], args[0].scale
    if fn in ("DATE", "cast_date"):
        return DATE, 0
    if fn in ("cast_datetime", "CONVERT_TZ"):
        return DATETIME, 0
    if fn == "cast_float":
        return FLOAT, 0
    if fn == "cast_decimal":
        if len(exprs) == 3 and isinstance(exprs[2], Lit) and type(exprs[2].value) is int:
            return DECIMAL, exprs[2].value  # CAST(x AS DECIMAL(M, D))
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
        return max(0, min(d.value, 30))  # as values.round_: d places, at most 30
    return args[0].scale


def _extreme_kind(args: Sequence[Typed]) -> tuple[Kind | None, int]:
    present = [a for a in args if a.kind is not None]
    kinds = {a.kind for a in present}
    if not kinds:
        return None, 0
    families = {("n" if k in NUMBER_KINDS else "s" if k in TEXT_KINDS else "t") for k in kinds}
    if families == {"n"}:
        if FLOAT in kinds:
            return FLOAT, 0
        if DECIMAL in kinds:
            return unified(present)
        return INT, 0
    if "s" in families and "n" in families:
        return (BYTES if BYTES in kinds else STR), 0
    return unified(present)



__all__ = ["EXACT_KINDS", "NUMBER_KINDS", "PREDICATES", "TEXT_KINDS", "TIME_KINDS", "Typed",
           "arith_kind", "null", "null_predicate", "number_kind", "result_kind", "unified"]
