"""View plans as Structured Streaming queries over signed deltas.

Every row of a stream carries its multiplicity in a column ``_s`` (+1 inserted, -1
deleted; more for duplicates). Spark's streaming operators know nothing of retractions,
so the signs are arithmetic, never Spark semantics:

* Filter, Project, Union pass ``_s`` through (``PlanCompiler``'s carried columns).
* An inner join is a stream-stream join without watermark: Spark joins each new row of
  one side with everything the other side holds (its state keeps every row, negative
  ones too), which is exactly the delta rule ``dL x R + L' x dR``; the output's sign is
  the product of the two signs.
* The view's root aggregate, when it only counts, sums and averages, keeps *signed sums*
  per group in Spark's own state (update mode): ``COUNT(*)`` is ``sum(_s)``, ``COUNT(x)``
  sums the signs of non-NULL ``x``, ``SUM(x)`` is ``sum(_s * x)`` (NULL while the group has
  no non-NULL ``x``), ``AVG`` their ratio, and ``_n = sum(_s)`` says whether the group
  still has rows. Update mode then emits each changed group's new totals.
* Everything that needs state surviving deletes (MIN, MAX, the DISTINCT aggregates, an
  aggregate under another operator, top-k, DISTINCT and UNION, LEFT joins) is a keyed
  ``transformWithState`` processor (:mod:`rivulet.pipeline.streaming.keyed`) emitting signed
  deltas; Spark runs any chain of them, with joins and the root aggregate, in one query.

The operators above the root aggregate (a HAVING filter, the final projection) are
applied by the sink to each micro-batch's changed groups (:func:`above_function`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet import values as F
from rivulet.dataflow.compile import predicate_function, row_function
from rivulet.errors import UnsupportedSqlError
from rivulet.pipeline.streaming import keyed as K
from rivulet.plan import ir
from rivulet.spark.compile import (
    PlanCompiler,
    _aggregate_argument,
    name,
    names,
    refuse_group_concat,
    with_join_keys,
)
from rivulet.spark.exprs import ExprCompiler, engine_udf
from rivulet.spark.values import spark_type
from rivulet.values.schema import DECIMAL

Row = tuple

SIGN = "_s"
COUNT = "_n"


@dataclass(frozen=True)
class Shape:
    """How a view's plan splits: the root ``aggregate`` (or None) with the operators above
    it; ``native``: Spark's own aggregate keeps it (signed sums), else a keyed processor."""

    aggregate: ir.Aggregate | None
    above: tuple[ir.Node, ...]  # from the root down to just above the aggregate
    native: bool = True


def shape_of(plan: ir.ViewPlan) -> Shape:
    """Where the view's root aggregate is, and whether Spark's own aggregate can keep it."""
    above: list[ir.Node] = []
    node = plan.root
    while isinstance(node, (ir.Project, ir.Filter)):
        above.append(node)
        node = node.input
    if isinstance(node, ir.Aggregate):
        return Shape(node, tuple(above), native=signed_sums_suffice(node))
    return Shape(None, ())


def signed_sums_suffice(node: ir.Aggregate) -> bool:
    """COUNT, SUM and AVG are kept by signed sums; MIN, MAX and DISTINCT need the values."""
    return all(call.fn in ("count", "sum", "avg") and not call.distinct for call in node.aggs)


class SignedCompiler(PlanCompiler):
    """IR to streaming DataFrames of signed rows (columns ``c0..`` and ``_s``).

    ``seed``: a stream of one row, read once by the query's first batch; a global
    aggregate (no GROUP BY) under another operator takes it as a sign-0 delta, so that
    its one row exists before any input does. ``keyed`` says whether the query uses keyed
    processors (which need the RocksDB state store). ``columns``: the names in a table's
    frame of the columns a scan reads (its table version's: rivulet/pipeline/streaming/
    columns.py), None for one the table no longer has (read as NULL); by default
    ``c0..``."""

    def __init__(self, tables: Mapping[str, DataFrame],
                 seed: Callable[[], DataFrame] | None = None,
                 columns: Callable[[ir.Scan], list[str | None]] | None = None) -> None:
        super().__init__(tables, carry=(SIGN,))
        self.seed = seed
        self.columns = columns
        self.keyed = False

    def _scan(self, node: ir.Scan) -> DataFrame:
        df = self.tables[node.table.lower()]
        found = (self.columns(node) if self.columns is not None
                 else [f"c{i}" for i in range(node.arity)])
        return df.select(*[
            SF.lit(None).cast(spark_type(c.kind, c.scale)).alias(f"c{i}") if n is None
            else SF.col(n).alias(f"c{i}")
            for i, (n, c) in enumerate(zip(found, node.columns))], SF.col("sign").alias(SIGN))

    def _setop(self, node: ir.SetOp) -> DataFrame:
        raise UnsupportedSqlError(f"{node.op.upper()} in a streaming pipeline")

    def _join(self, node: ir.Join) -> DataFrame:
        if not node.left_keys:
            raise UnsupportedSqlError("a join with no equality between its two sides (a cross "
                                      "join) in a streaming pipeline: its signed rows are "
                                      "grouped by the join key")
        if node.kind != "inner":
            return self._left_join(node)
        n = node.left.arity
        left = self.frame(node.left).select(*names(n), SF.col(SIGN).alias("_ls"))
        right = self.frame(node.right).select(
            *[SF.col(name(j)).alias(name(n + j)) for j in range(node.right.arity)],
            SF.col(SIGN).alias("_rs"))
        exprs = ExprCompiler([*left.schema.fields[:n], *right.schema.fields[:node.right.arity]])
        left, right, lkeys, rkeys = with_join_keys(node, exprs, left, right)
        on = reduce(lambda p, q: p & q, [SF.col(x) == SF.col(y) for x, y in zip(lkeys, rkeys)])
        joined = left.join(right, on, "inner")
        if node.residual is not None:
            joined = joined.where(exprs.predicate(node.residual))
        return joined.select(*names(n + node.right.arity),
                             (SF.col("_ls") * SF.col("_rs")).alias(SIGN))

    def _left_join(self, node: ir.Join) -> DataFrame:
        """Both sides' signed rows, tagged ``_side``, grouped by the join key."""
        n, m = node.left.arity, node.right.arity
        left = self.frame(node.left)
        right = self.frame(node.right).select(
            *[SF.col(name(j)).alias(name(n + j)) for j in range(m)], SIGN)
        exprs = ExprCompiler([*[left.schema[name(i)] for i in range(n)],
                              *[right.schema[name(n + j)] for j in range(m)]])
        # one key column
        left, right, keys, _ = with_join_keys(node, exprs, left, right, "_k", "_k")
        lcols = [left.schema[name(i)] for i in range(n)]
        rcols = [right.schema[name(n + j)] for j in range(m)]
        sides = [left.select(*keys, SF.lit(0).alias("_side"), *names(n),
                             *[SF.lit(None).cast(f.dataType).alias(f.name) for f in rcols], SIGN),
                 right.select(*keys, SF.lit(1).alias("_side"),
                              *[SF.lit(None).cast(f.dataType).alias(f.name) for f in lcols],
                              *[name(n + j) for j in range(m)], SIGN)]
        tagged = sides[0].unionByName(sides[1])
        processor = K.LeftJoinProcessor(
            [K.Column(f.dataType) for f in lcols], [K.Column(f.dataType) for f in rcols],
            len(keys), node.residual, [c.kind for c in node.columns])
        return self._keyed(tagged.groupBy(*keys), processor, [*lcols, *rcols])

    def _topk(self, node: ir.TopK) -> DataFrame:
        df = self.frame(node.input)
        fields = [df.schema[name(i)] for i in range(node.arity)]
        processor = K.TopKProcessor([K.Column(f.dataType) for f in fields], node.order, node.k,
                                    node.skip)
        return self._keyed(self._grouped(df, node.group_by), processor, fields)

    def _distinct(self, node: ir.Distinct) -> DataFrame:
        df = self.frame(node.input)
        fields = [df.schema[name(i)] for i in range(node.arity)]
        return self._keyed(df.groupBy(*names(node.arity)), K.DistinctProcessor(node.arity), fields)

    def _aggregate(self, node: ir.Aggregate) -> DataFrame:
        return self.keyed_aggregate(node, K.DELTAS)

    def keyed_aggregate(self, node: ir.Aggregate, form: str) -> DataFrame:
        """The aggregate as a keyed processor: signed deltas of its rows (``DELTAS``), or
        each changed group's new row, group and row count (``GROUPS``, at the root)."""
        refuse_group_concat(node)
        df = self.frame(node.input)
        exprs = self.expressions(df, node.input.arity)
        width = len(node.group_by)
        groups = [SF.col(name(g)).alias(f"_g{j}") for j, g in enumerate(node.group_by)]
        inputs: list[Column] = []
        for i, call in enumerate(node.aggs):
            if call.arg is None:
                continue
            arg, _, _ = _aggregate_argument(exprs, exprs.compile(ir.Col(call.arg)), call)
            inputs.append(arg.alias(f"_a{i}"))
        prepared = df.select(*groups, *inputs, SIGN)
        if not groups and self.seed is not None and form == K.DELTAS:
            seed = self.seed().select(*[SF.lit(None).cast(prepared.schema[c].dataType).alias(c)
                                        for c in prepared.columns[:-1]],
                                      SF.lit(0).cast("long").alias(SIGN))
            prepared = prepared.unionByName(seed)
        group_fields = [prepared.schema[f"_g{j}"] for j in range(width)]
        outputs = [T.StructField(name(j), f.dataType) for j, f in enumerate(group_fields)]
        for i, call in enumerate(node.aggs):
            field = prepared.schema[f"_a{i}"] if call.arg is not None else None
            outputs.append(T.StructField(name(width + i),
                                         _aggregate_type(call, field, node.columns[width + i])))
        processor = K.AggregateProcessor(
            node.aggs, [K.Column(f.dataType) for f in group_fields],
            [K.Column(prepared.schema[f"_a{i}"].dataType) if c.arg is not None else None
             for i, c in enumerate(node.aggs)],
            [K.Column(f.dataType) for f in outputs], form)
        grouped = self._grouped(prepared, tuple(range(width)), [f"_g{j}" for j in range(width)])
        if form == K.DELTAS:
            return self._keyed(grouped, processor, outputs)
        extra = [T.StructField(f"_g{j}", f.dataType) for j, f in enumerate(group_fields)]
        return self._keyed(grouped, processor, [*outputs, *extra,
                                                T.StructField(COUNT, T.LongType())], signed=False)

    def _grouped(self, df: DataFrame, columns: tuple[int, ...],
                 labels: list[str] | None = None) -> Any:
        """``df`` grouped by ``columns`` (by one constant for none: one group)."""
        if not columns:
            return df.withColumn("_one", SF.lit(0)).groupBy("_one")
        return df.groupBy(*(labels or [name(c) for c in columns]))

    def _keyed(self, grouped: Any, processor: K.KeyedProcessor, fields: list[T.StructField],
               signed: bool = True) -> DataFrame:
        self.keyed = True
        schema = T.StructType(
            [T.StructField(name(i), f.dataType, True) for i, f in enumerate(fields)] if signed
            else [T.StructField(f.name, f.dataType, True) for f in fields])
        if signed:
            schema = schema.add(SIGN, T.LongType(), True)
        processor.output = schema.names
        return grouped.transformWithState(processor, schema, "Append", "None")

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


def _aggregate_type(call: ir.AggCall, arg: T.StructField | None,
                    out: ir.ColumnInfo) -> T.DataType:
    """The Spark type of an aggregate's result: the plan's type of its column (MySQL's:
    SUM of integers is a DECIMAL, AVG of exact numbers one carrying a quotient's places)."""
    if call.fn == "count":
        return T.LongType()
    assert arg is not None, f"{call.fn.upper()} without an argument"
    if call.fn in ("min", "max"):
        return arg.dataType
    if out.kind == DECIMAL:
        return spark_type(DECIMAL, out.frac)
    return spark_type(out.kind)


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
        column = node.columns[width + i]
        if call.fn == "sum":
            value = total.cast(spark_type(column.kind, column.frac))
        elif column.kind == DECIMAL:  # an exact AVG: SUM / COUNT as the engine divides
            value = engine_udf(F.div, [total, k], DECIMAL, column.frac)
        else:
            value = (total / k).cast(T.DoubleType())
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


def signed_rows(compiler: SignedCompiler, plan: ir.ViewPlan) -> DataFrame:
    """The streaming DataFrame of a view without root aggregate: root rows and ``_s``."""
    return compiler.frame(plan.root).select(*names(plan.root.arity), SIGN)


def scans(plan: ir.ViewPlan) -> list[ir.Scan]:
    """The base tables a view reads (each Scan node once)."""
    return [n for n in ir.walk(plan.root) if isinstance(n, ir.Scan)]
