"""View plans as Structured Streaming queries over signed deltas.

Every row of a stream carries its multiplicity in a column ``_s`` (+1 inserted, -1
deleted; more for duplicates). Spark's streaming operators know nothing of retractions,
so the signs are arithmetic, never Spark semantics:

* Filter, Project, Union pass ``_s`` through (``PlanCompiler``'s carried columns).
* An inner join is a stream-stream join without watermark: Spark joins each new row of
  one side with everything the other side holds (its state keeps every row, negative
  ones too), which is exactly the delta rule ``dL x R + L' x dR``; the output's sign is
  the product of the two signs.
* An aggregate keeps *signed sums* per group in Spark's state (update mode): ``COUNT(*)``
  is ``sum(_s)``, ``COUNT(x)`` sums the signs of non-NULL ``x``, ``SUM(x)`` is
  ``sum(_s * x)`` (NULL while the group has no non-NULL ``x``), ``AVG`` their ratio, and
  ``_n = sum(_s)`` says whether the group still has rows. Update mode then emits each
  changed group's new totals.

The operators above the aggregate (a HAVING filter, the final projection) are applied by
the sink to each micro-batch's changed groups (:func:`above_function`), so the query
itself has one stateful operator, or a join feeding one aggregate, which Spark accepts in
one query.

Not supported (rejected when the view is created, naming the construct): LEFT joins,
MIN/MAX and DISTINCT aggregates, DISTINCT, ORDER BY ... LIMIT inside the plan (top-k),
and an aggregate under a join or under another aggregate. Each needs keyed state that
survives deletes (``transformWithStateInPandas`` holding a multiset per group) or a
second stage reading the first one's deltas: the follow-ups the README lists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet.dataflow.compile import predicate_function, row_function
from rivulet.errors import UnsupportedSqlError
from rivulet.plan import ir
from rivulet.schema import DECIMAL
from rivulet.spark.compile import (
    PlanCompiler,
    _aggregate_argument,
    name,
    names,
)
from rivulet.spark.exprs import ExprCompiler, join_operands
from rivulet.spark.values import DEFAULT_DECIMAL_SCALE, spark_type

Row = tuple

SIGN = "_s"
COUNT = "_n"


class StreamingUnsupported(UnsupportedSqlError):
    """A view the streaming pipeline cannot maintain (the message names the construct)."""


@dataclass(frozen=True)
class Shape:
    """How a view's plan splits: ``aggregate`` (or None) with the operators above it."""

    aggregate: ir.Aggregate | None
    above: tuple[ir.Node, ...]  # from the root down to just above the aggregate


def shape_of(plan: ir.ViewPlan) -> Shape:
    """Check that the streaming pipeline can maintain ``plan``; raise naming what it cannot."""
    above: list[ir.Node] = []
    node = plan.root
    while isinstance(node, (ir.Project, ir.Filter)):
        above.append(node)
        node = node.input
    if isinstance(node, ir.Aggregate):
        _check_aggregate(plan, node)
        _check_stateless(plan, node.input, "under an aggregate")
        return Shape(node, tuple(above))
    _check_stateless(plan, plan.root, "")
    return Shape(None, ())


def _check_aggregate(plan: ir.ViewPlan, node: ir.Aggregate) -> None:
    for call in node.aggs:
        if call.fn in ("min", "max"):
            _reject(plan, f"{call.fn.upper()}() (needs keyed multiset state)")
        if call.distinct:
            _reject(plan, f"{call.fn.upper()}(DISTINCT ...)")


def _check_stateless(plan: ir.ViewPlan, node: ir.Node, where: str) -> None:
    for n in ir.walk(node):
        if isinstance(n, ir.Join) and n.kind != "inner":
            _reject(plan, f"a {n.kind.upper()} JOIN")
        elif isinstance(n, ir.Aggregate):
            _reject(plan, "an aggregate below another operator (a second stage)" if not where
                    else "an aggregate " + where)
        elif isinstance(n, ir.Distinct):
            _reject(plan, "DISTINCT / UNION")
        elif isinstance(n, ir.TopK):
            _reject(plan, "ORDER BY ... LIMIT inside the plan (top-k)")


def _reject(plan: ir.ViewPlan, what: str) -> None:
    raise StreamingUnsupported(
        f"view {plan.name!r}: {what} is not supported by the Spark streaming pipeline "
        "(use the in-process pipeline for this view)")


class SignedCompiler(PlanCompiler):
    """IR to streaming DataFrames of signed rows (columns ``c0..`` and ``_s``)."""

    def __init__(self, tables: Mapping[str, DataFrame]) -> None:
        super().__init__(tables, carry=(SIGN,))

    def _scan(self, node: ir.Scan) -> DataFrame:
        df = self.tables[node.table.lower()]
        return df.select(*[SF.col(f"c{i}") for i in range(node.arity)], SF.col("sign").alias(SIGN))

    def _join(self, node: ir.Join) -> DataFrame:
        n = node.left.arity
        left = self.frame(node.left).select(*names(n), SF.col(SIGN).alias("_ls"))
        right = self.frame(node.right).select(
            *[SF.col(name(j)).alias(name(n + j)) for j in range(node.right.arity)],
            SF.col(SIGN).alias("_rs"))
        exprs = ExprCompiler([*left.schema.fields[:n], *right.schema.fields[:node.right.arity]])
        condition: list[Column] = []
        for i, (a, b) in enumerate(zip(node.left_keys, node.right_keys)):
            x, y = join_operands(exprs, exprs.compile(ir.Col(a)), exprs.compile(ir.Col(n + b)))
            left = left.withColumn(f"_lk{i}", x)
            right = right.withColumn(f"_rk{i}", y)
            condition.append(SF.col(f"_lk{i}") == SF.col(f"_rk{i}"))
        on = reduce(lambda p, q: p & q, condition)
        joined = left.join(right, on, "inner")
        if node.residual is not None:
            joined = joined.where(exprs.predicate(node.residual))
        return joined.select(*names(n + node.right.arity),
                             (SF.col("_ls") * SF.col("_rs")).alias(SIGN))

    def _aggregate(self, node: ir.Aggregate) -> DataFrame:
        raise StreamingUnsupported("an aggregate below another operator")

    def aggregate_state(self, node: ir.Aggregate) -> DataFrame:
        """The streaming aggregate: per group ``_g0..``, signed sums ``_t<i>``/``_k<i>``
        and the row count ``_n``."""
        df = self.frame(node.input)
        exprs = self.expressions(df, node.input.arity)
        sign = SF.col(SIGN)
        sums: list[Column] = [SF.sum(sign).alias(COUNT)]
        for i, call in enumerate(node.aggs):
            if call.arg is None:
                continue
            arg, _, _ = _aggregate_argument(exprs, exprs.compile(ir.Col(call.arg)), call)
            present = SF.when(arg.isNotNull(), sign).otherwise(SF.lit(0))
            sums.append(SF.sum(present).alias(f"_k{i}"))
            if call.fn in ("sum", "avg"):
                sums.append(SF.sum(_signed(arg, sign)).alias(f"_t{i}"))
        groups = [SF.col(name(g)).alias(f"_g{j}") for j, g in enumerate(node.group_by)]
        return df.groupBy(*groups).agg(*sums)


def _signed(arg: Column, sign: Column) -> Column:
    """``arg * sign`` without widening a DECIMAL (Spark would cut its scale to fit 38
    digits): deltas are +1/-1 but for repeated rows."""
    return SF.when(sign == 1, arg).when(sign == -1, -arg).otherwise(arg * sign)


def finished_aggregate(node: ir.Aggregate, state: DataFrame) -> DataFrame:
    """Each changed group's output row (columns ``c0..``) from its signed sums, with the
    group ``_g0..`` and ``_n`` carried along (static: a micro-batch's changed groups)."""
    width = len(node.group_by)
    out: list[Column] = [SF.col(f"_g{j}").alias(name(j)) for j in range(width)]
    for i, call in enumerate(node.aggs):
        target = name(width + i)
        if call.arg is None:
            out.append(SF.col(COUNT).alias(target))
            continue
        k = SF.col(f"_k{i}")
        if call.fn == "count":
            out.append(k.alias(target))
            continue
        total = SF.col(f"_t{i}")
        kind = node.columns[width + i].kind
        if call.fn == "sum":
            value = total if kind != DECIMAL else total.cast(state.schema[f"_t{i}"].dataType)
        else:  # avg
            mean = total / k
            if isinstance(state.schema[f"_t{i}"].dataType, T.DecimalType):
                scale = state.schema[f"_t{i}"].dataType.scale
                value = mean.cast(spark_type(DECIMAL, min(scale + 4, DEFAULT_DECIMAL_SCALE + 4)))
            else:
                value = mean.cast(T.DoubleType())
        out.append(SF.when(k > 0, value).alias(target))
    return state.select(*out, *[f"_g{j}" for j in range(width)], COUNT)


def group_columns(node: ir.Aggregate) -> list[str]:
    return [f"_g{j}" for j in range(len(node.group_by))]


def above_function(shape: Shape) -> Callable[[Row], Row | None]:
    """The operators above the aggregate (HAVING, the final projection) as one Python
    function of an aggregate output row: the root row, or None when filtered out. They
    run in the sink on each batch's changed groups, with the engine's own compiled row
    functions, so the micro-batch is one Spark job (a second one over the same batch
    DataFrame would run the stateful aggregate again)."""
    steps: list[tuple[bool, Callable[[Row], Any]]] = []
    for node in reversed(shape.above):
        kinds = [c.kind for c in node.inputs()[0].columns]
        nullable = [True] * len(kinds)
        if isinstance(node, ir.Project):
            steps.append((True, row_function(node.exprs, kinds, nullable)))
        elif isinstance(node, ir.Filter):
            steps.append((False, predicate_function(node.predicate, kinds, nullable)))

    def apply(row: Row) -> Row | None:
        for project, fn in steps:
            if project:
                row = fn(row)
            elif not fn(row):
                return None
        return row

    return apply


def signed_rows(plan: ir.ViewPlan, tables: Mapping[str, DataFrame]) -> DataFrame:
    """The streaming DataFrame of a view without aggregate: root rows and ``_s``."""
    return SignedCompiler(tables).frame(plan.root).select(*names(plan.root.arity), SIGN)


def scans(plan: ir.ViewPlan) -> list[ir.Scan]:
    """The base tables a view reads (each Scan node once)."""
    return [n for n in ir.walk(plan.root) if isinstance(n, ir.Scan)]
