"""A node's full state computed on Spark: the queries behind a bootstrap or a pre-warm.

What Spark computes is the node's *state*, not its output: for an aggregate, per group
the row count and what each accumulator keeps (count, sum and count, or the multiset of
values for MIN/MAX/DISTINCT: :func:`aggregate_state`); for a distinct, each row with its
multiplicity (:func:`distinct_counts`); for anything else, the input's rows
(:func:`output_rows`). Results come back as Arrow batches, converted to exact Python
values.

Why a module of its own: the bootstrap (:mod:`rivulet.spark.bootstrap`) and the engine's
pre-warming of partial state (rivulet/engine/prewarm.py) both load these states, and they
depend only on a DataFrame and the operator's state layout. pyspark is imported inside
each function: the engine imports the bootstrap at start-up, and a process that never
runs Spark must not pay for loading it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rivulet.dataflow.ops.aggregate import Aggregate
from rivulet.dataflow.ops.base import Batch
from rivulet.plan import ir


def output_rows(df: Any) -> Batch:
    """Every row of ``df`` as an insertion (Arrow to Python, exact values)."""
    from rivulet.spark.values import rows_from_arrow

    return [(row, 1) for row in rows_from_arrow(df.toArrow())]


def distinct_counts(df: Any) -> list[tuple[tuple, int]]:
    """Each distinct row of ``df`` and how many times it occurs."""
    from rivulet.spark.values import rows_from_arrow

    counted = df.groupBy(*df.columns).count()
    width = len(df.columns)
    return [(row[:width], row[width]) for row in rows_from_arrow(counted.toArrow())]


def aggregate_state(df: Any, node: ir.Aggregate, op: Aggregate) -> list[tuple[Any, int, list[Any]]]:
    """The state of ``op`` over ``df`` (its input): per group its key, its row count and
    each accumulator's state in the layout of ``Aggregate.state_kinds``. MIN/MAX/DISTINCT
    keep a multiset of values, computed by a second grouping on (group, value)."""
    from pyspark.sql import functions as SF
    from pyspark.sql import types as T

    from rivulet.spark.compile import name
    from rivulet.spark.values import rows_from_arrow

    groups = [name(c) for c in node.group_by]
    width = len(groups)
    kinds = op.state_kinds()
    if any(kind == "concat" for kind, _ in kinds):
        raise TypeError("GROUP_CONCAT's state is left to the engine")
    columns = [SF.count(SF.lit(1)).alias("_rows")]
    for i, (kind, column) in enumerate(kinds):
        value = SF.col(name(column))
        if kind == "count":
            columns.append(SF.count(value).alias(f"_s{i}"))
        elif kind == "sum":
            data_type = df.schema[name(column)].dataType
            if isinstance(data_type, T.LongType):  # exact: Python ints do not overflow
                total = SF.sum(value.cast(T.DecimalType(38, 0)))
            elif isinstance(data_type, (T.DoubleType, T.DecimalType)):
                total = SF.sum(value)
            else:
                raise TypeError(f"SUM over {data_type.simpleString()} is left to the engine")
            columns += [total.alias(f"_s{i}"), SF.count(value).alias(f"_n{i}")]
    summary = rows_from_arrow(df.groupBy(*groups).agg(*columns).toArrow())
    key_of = _key_maker(width)
    multisets: dict[int, dict[Any, dict[Any, int]]] = {}
    for i, (kind, column) in enumerate(kinds):
        if kind != "values":
            continue
        pairs = (df.where(SF.col(name(column)).isNotNull())
                 .groupBy(*[SF.col(g) for g in groups], SF.col(name(column)).alias("_v")).count())
        by_group: dict[Any, dict[Any, int]] = {}
        for row in rows_from_arrow(pairs.toArrow()):
            by_group.setdefault(key_of(row), {})[row[width]] = row[width + 1]
        multisets[i] = by_group
    out = []
    integer_sums = [kind == "sum" and isinstance(df.schema[name(c)].dataType, T.LongType)
                    for kind, c in kinds]
    for row in summary:
        key = key_of(row)
        position = width + 1
        states: list[Any] = []
        for i, (kind, _) in enumerate(kinds):
            if kind == "count":
                states.append(row[position])
                position += 1
            elif kind == "sum":
                summed = row[position]
                if integer_sums[i] and summed is not None:
                    summed = int(summed)
                states.append((summed, row[position + 1]))
                position += 2
            else:
                states.append(multisets[i].get(key, {}))
        out.append((key, row[width], states))
    return out


def _key_maker(width: int) -> Callable[[tuple], Any]:
    """A group key as the engine keys groups: a scalar for one column, else a tuple."""
    if width == 0:
        return lambda row: ()
    if width == 1:
        return lambda row: row[0]
    return lambda row: tuple(row[:width])


__all__ = ["aggregate_state", "distinct_counts", "output_rows"]
