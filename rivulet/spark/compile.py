"""IR plans to Spark DataFrames, and views computed in full on Spark.

:class:`PlanCompiler` turns every IR node (rivulet/plan/ir.py) into a DataFrame over the
base tables it is given; expressions compile through :mod:`rivulet.spark.exprs`. Columns
are positional in the IR, so every DataFrame names its columns ``c0..cN``: a node's
column ``i`` is ``ci``, whatever the SQL called it.

A view is computed from its plan as rivulet/plan/optimize.py makes it, the plan the
engine's dataflow is built from (:data:`SKIPPED_RULES` names the rules Spark leaves out:
none).

:func:`compute_view` then answers what the engine's view handle answers
(rivulet/engine/views.py): ``lookup(*params)`` for given parameter values, ``scan()`` for all of
them. Reading a view is more than its root relation: the parameters select keys (the
stored values MySQL's ``=`` finds equal to them, as the engine looks them up:
``params.lookup_keys``; NULL matching nothing; a value that may equal several stored values
is read as the view's query with it as a constant, ``plan/bound.py``), an IN list reads
several keys, range parameters filter a column (compared as the engine's filters compare),
a key of an aggregate with no rows still answers the aggregate over no rows
(``COUNT(*) = 0``), and each answer is ordered, de-duplicated and cut to its LIMIT/OFFSET
with hidden columns dropped. All of that happens on Spark; only the
finished rows come back, through Arrow.

Ordering: rows are ordered by ORDER BY (NULLs first ascending, last descending, as
``values.sort_key``/``desc_key``), ties broken by the whole row ascending, exactly as the
engine's top-k operator does (``builder.sort_key_function(tie_break=...)``), so a LIMIT cuts
the same rows. (The engine's read-time sort leaves ties in storage order; this one is
deterministic, which is one of the orders the engine may give.)

The compiler of every IR node and the readers of a computed view share the positional
column names and the ordering rule above, which must agree to the letter with the engine's:
they stay one module on purpose, though it is longer than most.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet import values as F
from rivulet.errors import RivuletError, SqlError, UnsupportedSqlError
from rivulet.plan import ir
from rivulet.plan.bound import bound_plan
from rivulet.plan.optimize import optimize, rules_except
from rivulet.plan.params import (
    any_compared_as_doubles,
    literal_of,
    lookup_keys,
    other_range_bounds,
    range_bounds,
    values_by_param,
)
from rivulet.plan.planner import Catalog
from rivulet.spark.exprs import ExprCompiler, Typed, join_operands
from rivulet.spark.values import (
    arrow_table,
    kind_of_type,
    rows_from_arrow,
    scale_of_type,
    spark_type,
    to_kind,
)
from rivulet.values.matching import Unkeyed
from rivulet.values.schema import DECIMAL, INT

Row = tuple
Tables = Mapping[str, DataFrame]

_REQ = "_req"  # which lookup a row answers
_RN = "_rn"  # a row's position in its answer


def name(i: int) -> str:
    """The Spark name of column ``i``."""
    return f"c{i}"


def names(n: int) -> list[str]:
    return [name(i) for i in range(n)]


# --------------------------------------------------------------------------- nodes


class PlanCompiler:
    """IR nodes to DataFrames over ``tables`` (table name -> DataFrame of its rows, columns
    in table order; names are matched case-insensitively).

    ``overrides`` replaces the DataFrame of chosen nodes (equal IR nodes are one node);
    ``carry`` names extra columns that the nodes above an override pass through untouched
    (used to run one-row chains per lookup). Each node is compiled once per compiler, so a
    sub-plan used twice (a self-join) is one DataFrame lineage.
    """

    def __init__(self, tables: Tables, *, overrides: Mapping[ir.Node, DataFrame] | None = None,
                 carry: Sequence[str] = ()) -> None:
        self.tables = {k.lower(): v for k, v in tables.items()}
        self.overrides = dict(overrides or {})
        self.carry = tuple(carry)
        self._memo: dict[int, tuple[ir.Node, DataFrame]] = {}

    def frame(self, node: ir.Node) -> DataFrame:
        """The DataFrame of ``node``'s rows, columns ``c0..`` (then any carried columns)."""
        hit = self._memo.get(id(node))
        if hit is not None:
            return hit[1]
        df = self.overrides.get(node) if self.overrides else None
        if df is None:
            df = self._compile(node)
        self._memo[id(node)] = (node, df)  # the node is kept so that its id stays unique
        return df

    def _compile(self, node: ir.Node) -> DataFrame:
        method = getattr(self, f"_{type(node).__name__.lower()}", None)
        if method is None:
            raise SqlError(f"no Spark plan for {type(node).__name__}")
        return method(node)

    def _carried(self, df: DataFrame) -> list[str]:
        return [c for c in self.carry if c in df.columns]

    def expressions(self, df: DataFrame, arity: int) -> ExprCompiler:
        return ExprCompiler([df.schema[name(i)] for i in range(arity)])

    # ..................................................................... operators

    def _scan(self, node: ir.Scan) -> DataFrame:
        # An older version of an altered table comes as "table@version" (old_versions).
        df = (self.tables.get(f"{node.table.lower()}@{node.version}")
              or self.tables.get(node.table.lower()))
        if df is None:
            raise SqlError(f"no DataFrame given for table {node.table!r}")
        if len(df.columns) != node.arity:
            raise SqlError(f"the DataFrame of table {node.table!r} has {len(df.columns)} "
                           f"columns, the table has {node.arity}")
        return df.toDF(*names(node.arity))

    def _onerow(self, node: ir.OneRow) -> DataFrame:
        # The one row of no columns of a SELECT without FROM, on the session the tables'
        # frames are on (or the one running: a plan may read no table at all).
        frame = next(iter(self.tables.values()), None)
        spark = frame.sparkSession if frame is not None else SparkSession.getActiveSession()
        if spark is None:
            raise SqlError("no Spark session to compute a SELECT without FROM on")
        return spark.range(1).select()

    def _filter(self, node: ir.Filter) -> DataFrame:
        df = self.frame(node.input)
        return df.where(self.expressions(df, node.arity).predicate(node.predicate))

    def _project(self, node: ir.Project) -> DataFrame:
        df = self.frame(node.input)
        exprs = self.expressions(df, node.input.arity)
        columns = [exprs.value(e).alias(name(i)) for i, e in enumerate(node.exprs)]
        return df.select(*columns, *self._carried(df))

    def _distinct(self, node: ir.Distinct) -> DataFrame:
        return self.frame(node.input).distinct()

    def _union(self, node: ir.Union) -> DataFrame:
        frames = [self.frame(b) for b in node.branches]
        types = [_union_type([f.schema[name(i)].dataType for f in frames])
                 for i in range(node.arity)]
        frames = [f.select(*[SF.col(name(i)).cast(t) if t is not None else SF.col(name(i))
                             for i, t in enumerate(types)], *self._carried(f)) for f in frames]
        return reduce(DataFrame.union, frames)

    def _setop(self, node: ir.SetOp) -> DataFrame:
        """INTERSECT / EXCEPT, ALL or DISTINCT: Spark's own (NULLs equal, as in MySQL)."""
        frames = [self.frame(node.left), self.frame(node.right)]
        if any(self._carried(f) for f in frames):
            raise SqlError(f"{node.op.upper()} over signed rows: no Spark plan")
        types = [_union_type([f.schema[name(i)].dataType for f in frames])
                 for i in range(node.arity)]
        left, right = [f.select(*[SF.col(name(i)).cast(t) if t is not None else SF.col(name(i))
                                  for i, t in enumerate(types)]) for f in frames]
        if node.op == "intersect":
            return left.intersectAll(right) if node.all else left.intersect(right)
        return left.exceptAll(right) if node.all else left.subtract(right)

    def _topk(self, node: ir.TopK) -> DataFrame:
        df = self.frame(node.input)
        order = sort_columns(node.order, node.arity)
        partition = ([SF.col(name(g)) for g in node.group_by]
                     + [SF.col(c) for c in self._carried(df)])
        if not partition and not node.skip:  # one global top-k: TakeOrderedAndProject
            return df.orderBy(*order).limit(node.k)
        window = (Window.partitionBy(*partition) if partition else Window).orderBy(*order)
        ranked = df.withColumn(_RN, SF.row_number().over(window))
        return ranked.where((SF.col(_RN) > node.skip) & (SF.col(_RN) <= node.k)).drop(_RN)

    def _join(self, node: ir.Join) -> DataFrame:
        n = node.left.arity
        left = self.frame(node.left).select(*names(n))
        right = self.frame(node.right).select(
            *[SF.col(name(j)).alias(name(n + j)) for j in range(node.right.arity)])
        exprs = ExprCompiler([*left.schema.fields, *right.schema.fields])
        left, right, lkeys, rkeys = with_join_keys(node, exprs, left, right)
        keys = lkeys + rkeys
        on = join_condition(lkeys, rkeys)
        if node.residual is None:
            return left.join(right, on, node.kind).drop(*keys)
        m = node.right.arity
        residual_exprs = ExprCompiler([*left.schema.fields[:n], *right.schema.fields[:m]])
        residual = residual_exprs.predicate(node.residual)
        if node.kind == "inner":
            return left.join(right, on, "inner").drop(*keys).where(residual)
        if not residual_exprs.uses_python:
            return left.join(right, on & residual, "left").drop(*keys)
        return _left_join_python(left, right, on, residual, keys, n, m)

    def _rangeaggregate(self, node: ir.RangeAggregate) -> DataFrame:
        # (The engine keeps one answer per value of the range parameters: a read of one is
        # computed on Spark as its query with the values as constants, compute_lookups.)
        raise UnsupportedSqlError("unsupported range parameter in an aggregated query on "
                                  "Spark other than read by its values (compute_lookups)")

    def _aggregate(self, node: ir.Aggregate) -> DataFrame:
        refuse_group_concat(node)
        df = self.frame(node.input)
        exprs = self.expressions(df, node.input.arity)
        width = len(node.group_by)
        inputs: list[Column] = []
        outputs: list[Column] = []
        finals: list[Column] = []  # each aggregate's value from the grouped row
        for i, call in enumerate(node.aggs):
            out_name = name(width + i)
            column = node.columns[width + i]
            if call.arg is None:
                outputs.append(SF.count(SF.lit(1)).alias(out_name))
                finals.append(SF.col(out_name))
                continue
            arg, kind, scale = _aggregate_argument(exprs, exprs.compile(ir.Col(call.arg)), call)
            inputs.append(arg.alias(f"_a{i}"))
            c = SF.col(f"_a{i}")
            if call.fn == "avg" and column.kind == DECIMAL:
                # MySQL's exact AVG is SUM / COUNT as ``/`` divides: the engine's division.
                total = SF.sum_distinct(c) if call.distinct else SF.sum(c)
                count = SF.count_distinct(c) if call.distinct else SF.count(c)
                outputs += [total.alias(f"_s{i}"), count.alias(f"_n{i}")]
                finals.append(exprs.udf(F.div, [SF.col(f"_s{i}"), SF.col(f"_n{i}")], DECIMAL,
                                        column.frac).alias(out_name))
                continue
            outputs.append(_aggregate_column(call, c, kind, scale, column).alias(out_name))
            finals.append(SF.col(out_name))
        groups = [SF.col(name(g)).alias(f"_g{j}") for j, g in enumerate(node.group_by)]
        prepared = df.select(*groups, *inputs)
        grouped = prepared.groupBy(*[f"_g{j}" for j in range(width)])
        out = grouped.agg(*outputs) if outputs else grouped.agg(SF.count(SF.lit(1)).alias("_n"))
        return out.select(*[SF.col(f"_g{j}").alias(name(j)) for j in range(width)], *finals)


def holds_group_concat(node: ir.Node) -> bool:
    """Whether the plan under ``node`` has a GROUP_CONCAT (see :func:`refuse_group_concat`)."""
    return any(isinstance(n, ir.Aggregate) and any(c.fn == "group_concat" for c in n.aggs)
               for n in ir.walk(node))


def refuse_group_concat(node: ir.Aggregate) -> None:
    """GROUP_CONCAT is kept by the engine only (rivulet/dataflow/ops/aggregate.py): its
    order of tied rows, its cut to ``group_concat_max_len`` bytes and its text of each
    value would each have to agree with the engine's to the letter on Spark. A plan with
    one is refused by name; a bootstrap or a pre-warm then runs in-process."""
    for call in node.aggs:
        if call.fn == "group_concat":
            raise UnsupportedSqlError("unsupported GROUP_CONCAT on Spark: the engine "
                                      "computes it")


def join_condition(lkeys: list[str], rkeys: list[str]) -> Column:
    """The equality of each pair of key columns; TRUE for a join on no key (every left row
    meets every right row)."""
    if not lkeys:
        return SF.lit(True)
    return reduce(lambda p, q: p & q, [SF.col(x) == SF.col(y) for x, y in zip(lkeys, rkeys)])


def with_join_keys(node: ir.Join, exprs: ExprCompiler, left: DataFrame, right: DataFrame,
                   left_prefix: str = "_lk", right_prefix: str = "_rk",
                   ) -> tuple[DataFrame, DataFrame, list[str], list[str]]:
    """Each side with a column per join key (``<prefix><i>``): its key operand, converted
    as MySQL compares the two kinds, so that the join stays an equi-join Spark can hash or
    sort. ``exprs`` compiles over the joined row (left columns, then right ones)."""
    n = node.left.arity
    lkeys, rkeys = [], []
    for i, (a, b) in enumerate(zip(node.left_keys, node.right_keys)):
        x, y = join_operands(exprs, exprs.compile(ir.Col(a)), exprs.compile(ir.Col(n + b)))
        lkeys.append(f"{left_prefix}{i}")
        rkeys.append(f"{right_prefix}{i}")
        left = left.withColumn(lkeys[-1], x)
        right = right.withColumn(rkeys[-1], y)
    return left, right, lkeys, rkeys


def _union_type(types: list[T.DataType]) -> T.DataType | None:
    """The common type of a UNION column whose branches hold exact numbers of different
    scales: DECIMAL(38) with the largest scale (Spark's own widening would drop places
    to stay within 38 digits). Other columns are left to Spark."""
    if all(t == types[0] for t in types):
        return None
    if all(isinstance(t, (T.DecimalType, T.LongType, T.NullType)) for t in types):
        return spark_type(DECIMAL, max(scale_of_type(t) for t in types))
    return None


def _left_join_python(left: DataFrame, right: DataFrame, on: Column, residual: Column,
                      keys: list[str], n: int, m: int) -> DataFrame:
    """A left join whose ON condition runs Python, which Spark cannot evaluate inside an
    outer join: the matched pairs (an inner join, then the condition as a filter), plus
    each left row that kept no match, padded with NULLs. Identical left rows match alike,
    so "kept no match" is an anti-join on the whole row."""
    matched = left.join(right, on, "inner").drop(*keys).where(residual)
    seen = matched.select(*[SF.col(name(i)).alias(f"_m{i}") for i in range(n)]).distinct()
    same = reduce(lambda p, q: p & q,
                  [SF.col(name(i)).eqNullSafe(SF.col(f"_m{i}")) for i in range(n)])
    alone = left.select(*names(n)).join(seen, same, "left_anti")
    pad = [SF.lit(None).cast(right.schema[name(n + j)].dataType).alias(name(n + j))
           for j in range(m)]
    return matched.union(alone.select(*names(n), *pad))


def _aggregate_argument(exprs: ExprCompiler, arg: Typed,
                        call: ir.AggCall) -> tuple[Column, str | None, int]:
    """The column an aggregate reads: SUM and AVG read numbers (MySQL sums strings as
    doubles); COUNT, MIN and MAX read the values themselves."""
    if arg.kind is None:  # only NULLs: any type aggregates to NULL (COUNT to 0)
        return SF.lit(None).cast(T.LongType()), INT, 0
    if call.fn in ("sum", "avg"):
        number = exprs.number(arg)
        return number.column, number.kind, number.scale
    return arg.value(), arg.kind, arg.scale


def _aggregate_column(call: ir.AggCall, c: Column, kind: str | None, scale: int,
                      out: ir.ColumnInfo) -> Column:
    """The aggregate over ``c`` (values of ``kind``), typed as the plan's ``out`` column
    says (MySQL: SUM of integers is a DECIMAL, AVG of DOUBLEs or text a DOUBLE)."""
    if call.fn == "count":
        return SF.count_distinct(c) if call.distinct else SF.count(c)
    if call.fn in ("min", "max"):
        return SF.min(c) if call.fn == "min" else SF.max(c)
    if call.fn == "sum":
        total = SF.sum_distinct(c) if call.distinct else SF.sum(c)
        if out.kind == DECIMAL:
            return total.cast(spark_type(DECIMAL, max(scale, out.frac)))
        return total.cast(spark_type(out.kind)) if out.kind is not None else total
    if call.fn == "avg":
        mean = SF.sum_distinct(c) / SF.count_distinct(c) if call.distinct else SF.avg(c)
        return mean.cast(T.DoubleType())
    if call.fn in ("var_pop", "var_samp", "stddev_pop", "stddev_samp"):
        raise UnsupportedSqlError(f"unsupported {call.fn.upper()}() on Spark: the engine "
                                  "computes it exactly, Spark's would differ in its last bits")
    raise SqlError(f"unknown aggregate {call.fn}")


def sort_columns(order: Sequence[ir.SortKey], width: int) -> list[Column]:
    """ORDER BY with MySQL's NULL placement, ties broken by the whole row ascending."""
    out = [SF.col(name(k.column)).desc_nulls_last() if k.descending
           else SF.col(name(k.column)).asc_nulls_first() for k in order]
    return out + [SF.col(name(i)).asc_nulls_first() for i in range(width)]


def old_versions(tables: Tables, layouts: Mapping[str, Mapping[int, tuple[int | None, ...]]],
                 current: Mapping[str, int]) -> dict[str, DataFrame]:
    """``tables`` plus, for every older version of an altered table, its rows as that
    version had them (keyed ``"table@version"``): the newest columns picked by the
    version's layout (rivulet/migrate/alter.py), a dropped one read as NULL."""
    out = dict(tables)
    for name, df in tables.items():
        for version, layout in layouts.get(name.lower(), {}).items():
            if version == current.get(name.lower()):
                continue
            out[f"{name.lower()}@{version}"] = df.select(*[
                SF.lit(None).alias(f"_dropped{i}") if p is None else SF.col(df.columns[p])
                for i, p in enumerate(layout)])
    return out


def compile_plan(node: ir.Node, tables: Tables) -> DataFrame:
    """The rows of ``node`` as a DataFrame (columns ``c0..``), the node as it is given (the
    rules optimize views: give it the root of an :func:`optimized` plan)."""
    return PlanCompiler(tables).frame(node)


#: Rules of rivulet/plan/optimize.py that cannot run on Spark, by name (a backend says what
#: it leaves out, and why). None: each rule gives a plan that Spark computes as the engine
#: does, and Spark computes views from the engine's own plans as built (``verify``, the
#: tests), which went through every rule.
SKIPPED_RULES: frozenset[str] = frozenset()
RULES = rules_except(SKIPPED_RULES)


def optimized(plan: ir.ViewPlan) -> ir.ViewPlan:
    """``plan`` through the optimizer's rules that run on Spark (as it is, if optimized
    already). Without the ``views`` option: which aggregates other views hold in full
    only decides which state the engine keeps; every plan it chooses has the same rows."""
    return optimize(plan, RULES)


# --------------------------------------------------------------------------- reading views


@dataclass(frozen=True)
class _Request:
    """What one ``lookup(*params)`` reads, decided in Python exactly as the view handle
    decides it (rivulet/engine/views.py); Spark then reads every request at once."""

    whole: bool = False  # an unparameterized view: all its rows
    keys: tuple[tuple, ...] = ()  # equality keys (stored values, each once)
    null_keys: tuple[tuple, ...] = ()  # keys that match no row: only an implicit group answers
    range_keys: tuple[tuple, ...] | None = None  # a range view: its equality keys ...
    bounds: tuple[tuple[str, Any], ...] = ()  # ... and (op, value) bounds on its column
    #: ... and those of its other range columns (``ViewPlan.other_ranges``): (root
    #: column, its (op, value) bounds)
    other_bounds: tuple[tuple[int, tuple[tuple[str, Any], ...]], ...] = ()
    #: A read the view's keys cannot answer: the view's query with its values as constants.
    bound: ir.ViewPlan | None = None


def compute_view(plan: ir.ViewPlan, tables: Tables, params: Sequence[Any] | None = None,
                 catalog: Catalog | None = None) -> list[Row]:
    """The view's rows: ``db.view(name).lookup(*params)``, or ``scan()`` when ``params`` is
    None (every key's answer, each ordered and cut; hidden columns dropped). ``catalog``
    (the program's) plans a read whose values no key lookup answers (plan/bound.py).

    Like the other entry points that take a ViewPlan, it computes the plan as
    :func:`optimized` (a plan as built by the engine is that already)."""
    if params is None:
        return scan_view(plan, tables)
    return compute_lookups(plan, tables, [tuple(params)], catalog)[0]


def compute_lookups(plan: ir.ViewPlan, tables: Tables, param_sets: Sequence[Sequence[Any]],
                    catalog: Catalog | None = None) -> list[list[Row]]:
    """``lookup(*params)`` for each parameter tuple, computed in one Spark job (and one
    more for each read no key lookup answers, planned with ``catalog``)."""
    plan = optimized(plan)
    requests = [_request(plan, tuple(p), catalog) for p in param_sets]
    answers: list[list[Row]] = [[] for _ in requests]
    for rid, request in enumerate(requests):
        if request.bound is not None:
            answers[rid] = compute_lookups(request.bound, tables, [()])[0]
    if all(request.bound is not None for request in requests):
        return answers  # (a range aggregate's plan, whose reads are all bound, compiles not)
    compiler = PlanCompiler(tables)
    root = compiler.frame(plan.root)
    parts = _request_parts(plan, root, requests)
    if plan.implicit_group:
        parts += _default_parts(plan, tables, compiler, root, requests)
    if not parts:
        return answers
    raw = reduce(DataFrame.unionByName, parts)
    finished, sort = finish(raw, plan, [_REQ])
    table = _collect(finished, sort)
    req = finished.columns.index(_REQ)
    positions = [finished.columns.index(c) for c in names(plan.visible)]
    for row in table:
        answers[row[req]].append(tuple(row[i] for i in positions))
    return answers


def scan_view(plan: ir.ViewPlan, tables: Tables) -> list[Row]:
    """``db.view(name).scan()``: the rows of every key (NULL keys are never kept)."""
    _refuse_alternatives(plan)
    plan = optimized(plan)
    root = compile_plan(plan.root, tables)
    keys = [name(i) for i in plan.key]
    if keys:
        root = root.where(reduce(lambda p, q: p & q, [SF.col(k).isNotNull() for k in keys]))
    visible = names(plan.visible)
    if plan.range_column is not None:
        # A range view has no keys to cut by: all its rows in the view's order.
        # (a row NULL in another range column answers no read either)
        nulls = [plan.range_column, *(other.column for other in plan.other_ranges)]
        rows = root.where(reduce(lambda p, q: p & q,
                                 [SF.col(name(c)).isNotNull() for c in nulls]))
        # The view's order; without one, the reader's (by key, then by the range column).
        order = plan.order or tuple(ir.SortKey(i) for i in (*plan.key, plan.range_column))
        rows = rows.orderBy(*sort_columns(order, plan.root.arity))
        return rows_from_arrow(rows.select(*visible).toArrow())
    finished, sort = finish(root, plan, keys)
    table = _collect(finished, sort)
    positions = [finished.columns.index(c) for c in visible]
    return [tuple(row[i] for i in positions) for row in table]


def finish(df: DataFrame, plan: ir.ViewPlan, partition: list[str]) -> tuple[DataFrame, list[str]]:
    """Each ``partition`` group's answer as the engine's finisher makes it: ordered,
    de-duplicated on the visible columns (``distinct_on_read``), cut to LIMIT/OFFSET.
    Returns the rows (partition, visible and rank columns) and the columns to sort by."""
    visible = names(plan.visible)
    keep = list(dict.fromkeys(partition + visible))
    sliced = plan.offset > 0 or plan.limit is not None
    if not (plan.order or sliced or plan.distinct_on_read):
        return df.select(*keep), partition
    order = sort_columns(plan.order, plan.root.arity)
    ranked = df.withColumn(_RN, SF.row_number().over(_window(partition).orderBy(*order)))
    if plan.distinct_on_read:
        first = ranked.groupBy(*keep).agg(SF.min(_RN).alias("_first"))
        ranked = first.withColumn(_RN, SF.row_number().over(_window(partition).orderBy("_first")))
    if sliced:
        ranked = ranked.where(SF.col(_RN) > plan.offset)
        if plan.limit is not None:
            ranked = ranked.where(SF.col(_RN) <= plan.offset + plan.limit)
    return ranked.select(*keep, _RN), partition + [_RN]


def _window(partition: list[str]) -> Any:
    return Window.partitionBy(*partition) if partition else Window


def _collect(df: DataFrame, sort: list[str]) -> list[Row]:
    if sort:
        df = df.orderBy(*sort)
    return rows_from_arrow(df.toArrow())


# ..................................................................... requests


def _refuse_alternatives(plan: ir.ViewPlan) -> None:
    """A view of ``a = ? OR b = ?`` (rivulet/plan/alternatives.py) is read by each term's
    key apart, its rows kept by their term: the engine's only, refused by name here."""
    if plan.alternatives is not None:
        raise UnsupportedSqlError(f"unsupported parameters under an OR on different columns "
                                  f"on Spark (view {plan.name!r}): the engine reads each "
                                  f"column's key apart")


def _request(plan: ir.ViewPlan, params: tuple, catalog: Catalog | None) -> _Request:
    _refuse_alternatives(plan)
    if plan.bounds_keyed:  # (its bounds are no equality keys: see RangeAggregate)
        if catalog is None:
            raise RivuletError(f"view {plan.name!r}: a range parameter in an aggregated "
                               "query is computed with its values as constants, which "
                               "needs the catalog")
        return _Request(bound=bound_plan(plan, params, catalog))
    if plan.param_count == 0:
        if params:
            raise RivuletError(f"view {plan.name!r} takes no parameters, got {len(params)}")
        return _Request(whole=True)
    values = values_by_param(plan, params)
    asked = lookup_keys(plan, values)
    if isinstance(asked, Unkeyed):
        if catalog is None:
            raise RivuletError(f"view {plan.name!r}: a value of {params!r} may equal several "
                               "stored values of its column: computing it needs the catalog")
        return _Request(bound=bound_plan(plan, params, catalog))
    if plan.range_column is not None:
        if any_compared_as_doubles(plan, values):
            # (``BETWEEN`` of text and a number compares the three as DOUBLEs, which the
            # bounds' separate comparisons do not: the query with the values as constants)
            if catalog is None:
                raise RivuletError(f"view {plan.name!r}: a BETWEEN of {params!r} compares as "
                                   "DOUBLEs: computing it needs the catalog")
            return _Request(bound=bound_plan(plan, params, catalog))
        bounds = tuple(range_bounds(plan, values))
        others = tuple((other.column, tuple((b.op, v) for b, v in zip(other.bounds, given)))
                       for other, given in other_range_bounds(plan, values))
        if any(v is None for _, v in bounds + tuple(b for _, o in others for b in o)):
            return _Request()  # a comparison with NULL is never true
        return _Request(range_keys=tuple(asked), bounds=bounds, other_bounds=others)
    if not asked:  # no row can match: only an implicit group answers (its default row)
        return _Request(null_keys=((None,) * len(plan.key),))
    return _Request(keys=tuple(asked))


def _typed_literal(value: Any, data_type: T.DataType) -> Column:
    value = to_kind(value, kind_of_type(data_type), scale_of_type(data_type))
    if value is None:
        return SF.lit(None).cast(data_type)
    if isinstance(data_type, T.TimestampNTZType):
        return SF.lit(value.isoformat(" ")).cast(data_type)
    if isinstance(data_type, T.BinaryType):
        return SF.lit(bytearray(value)).cast(data_type)
    return SF.lit(value).cast(data_type)


def _request_parts(plan: ir.ViewPlan, root: DataFrame, requests: list[_Request]) -> list[DataFrame]:
    """Root rows answering each request, tagged with the request's number."""
    parts: list[DataFrame] = []
    for rid, req in enumerate(requests):
        if req.whole:
            parts.append(root.withColumn(_REQ, SF.lit(rid)))
        elif req.range_keys:
            parts.append(_range_rows(plan, root, req).withColumn(_REQ, SF.lit(rid)))
    keyed = [(rid, key) for rid, req in enumerate(requests) for key in req.keys]
    if keyed:
        parts.append(_key_rows(plan, root, keyed))
    return parts


#: A range parameter's operator as the function the engine's filters call.
_RANGE_CALLS = {">": "gt", ">=": "ge", "<": "lt", "<=": "le"}


def _range_rows(plan: ir.ViewPlan, root: DataFrame, req: _Request) -> DataFrame:
    """Rows of a range request: one of its equality keys, then every bound (each ``col op
    ?`` is a conjunct of the view's WHERE, compared as the engine's filter of the same
    literal compares)."""
    assert plan.range_column is not None and req.range_keys  # a range view
    tests = [SF.col(name(plan.range_column)).isNotNull()]
    if plan.key:
        types = [root.schema[name(i)].dataType for i in plan.key]
        tests.append(_key_filter(plan.key, types, list(req.range_keys)))
    exprs = ExprCompiler([root.schema[name(i)] for i in range(plan.root.arity)])
    bounded = [(plan.range_column, req.bounds), *req.other_bounds]
    for column, bounds in bounded:
        for op, v in bounds:
            call = ir.Call(_RANGE_CALLS[op], (ir.Col(column), literal_of(v)))
            tests.append(exprs.predicate(call))
    return root.where(reduce(lambda p, q: p & q, tests))


def local_frame(spark: Any, rows: list[Row], schema: T.StructType) -> DataFrame:
    """A small DataFrame of Python rows (through Arrow: Spark makes it a local relation)."""
    return spark.createDataFrame(arrow_table(rows, schema), schema=schema)


#: Up to this many keys, their values are also written into a filter on the root, which
#: Spark pushes down to the base tables' scans.
PUSHDOWN_KEYS = 1024


def _key_rows(plan: ir.ViewPlan, root: DataFrame, keyed: list[tuple[int, tuple]]) -> DataFrame:
    """Root rows of every requested key: a join with the (small) table of keys."""
    types = [root.schema[name(i)].dataType for i in plan.key]
    schema = T.StructType([T.StructField(_REQ, T.LongType(), False)] + [
        T.StructField(f"_k{j}", t) for j, t in enumerate(types)])
    keys = local_frame(root.sparkSession, [(rid, *key) for rid, key in keyed], schema)
    distinct = list(dict.fromkeys(key for _, key in keyed))
    if len(distinct) <= PUSHDOWN_KEYS:
        root = root.where(_key_filter(plan.key, types, distinct))
    on = reduce(lambda p, q: p & q, [SF.col(name(i)) == SF.col(f"_k{j}")
                                     for j, i in enumerate(plan.key)])
    return root.join(keys, on, "inner").select(*names(plan.root.arity), _REQ)


def _key_filter(columns: Sequence[int], types: list[T.DataType], keys: list[tuple]) -> Column:
    """``columns`` equal to one of ``keys`` (written out, so that Spark pushes it down)."""
    columns = list(columns)
    if len(columns) == 1:
        return SF.col(name(columns[0])).isin([_typed_literal(k[0], types[0]) for k in keys])
    matches = [reduce(lambda p, q: p & q, [SF.col(name(i)) == _typed_literal(v, t)
                                           for i, v, t in zip(columns, key, types)])
               for key in keys]
    return reduce(lambda p, q: p | q, matches)


# ..................................................................... implicit groups


def _implicit_aggregate(plan: ir.ViewPlan) -> tuple[ir.Aggregate, list[int]]:
    """The aggregate an implicit group's keys were made the GROUP BY of, and for each key
    column of the view, the aggregate's group column it shows."""
    positions = list(plan.key)
    node = plan.root
    while not isinstance(node, ir.Aggregate):
        if isinstance(node, ir.Project):
            shown = [e for e in (node.exprs[p] for p in positions) if isinstance(e, ir.Col)]
            if len(shown) != len(positions):
                raise SqlError(f"view {plan.name!r}: a key column is not a group column")
            positions = [e.index for e in shown]
        elif not isinstance(node, (ir.Filter, ir.Distinct, ir.TopK)):
            raise SqlError(f"view {plan.name!r}: no aggregate under its implicit group")
        node = node.inputs()[0]
    return node, positions


def _default_parts(plan: ir.ViewPlan, tables: Tables, compiler: PlanCompiler, root: DataFrame,
                   requests: list[_Request]) -> list[DataFrame]:
    """The row a key with no input rows answers (the aggregate over no rows, then the
    operators above it, HAVING included): for each requested key whose group does not
    exist, and for each key with a NULL (which no row can match)."""
    aggregate, positions = _implicit_aggregate(plan)
    agg = compiler.frame(aggregate)
    width = len(aggregate.group_by)
    group_types = [agg.schema[name(g)].dataType for g in range(width)]
    schema = T.StructType([T.StructField(_REQ, T.LongType(), False)] + [
        T.StructField(name(g), t) for g, t in enumerate(group_types)])

    def group_row(rid: int, key: tuple) -> tuple:
        values: list[Any] = [None] * width
        for value, g in reversed(list(zip(key, positions))):
            values[g] = to_kind(value, kind_of_type(group_types[g]), scale_of_type(group_types[g]))
        return (rid, *values)

    spark = root.sparkSession
    checked = [group_row(rid, k) for rid, req in enumerate(requests) for k in req.keys]
    always = [group_row(rid, k) for rid, req in enumerate(requests) for k in req.null_keys]
    empty: list[DataFrame] = []
    if checked:
        present = agg
        distinct = list(dict.fromkeys(tuple(r[1:]) for r in checked))
        if len(distinct) <= PUSHDOWN_KEYS:
            present = agg.where(_key_filter(range(width), group_types, distinct))
        present = present.select(*[SF.col(name(g)).alias(f"_g{g}") for g in range(width)])
        on = reduce(lambda p, q: p & q, [SF.col(name(g)) == SF.col(f"_g{g}") for g in range(width)])
        empty.append(local_frame(spark, checked, schema).join(present, on, "left_anti"))
    if always:
        empty.append(local_frame(spark, always, schema))
    if not empty:
        return []
    groups = reduce(DataFrame.union, empty)
    values = [SF.lit(0 if call.fn == "count" else None).cast(agg.schema[name(width + i)].dataType)
              .alias(name(width + i)) for i, call in enumerate(aggregate.aggs)]
    defaults = groups.select(*names(width), *values, _REQ)
    chain = PlanCompiler(tables, overrides={aggregate: defaults}, carry=[_REQ]).frame(plan.root)
    return [chain.select(*names(plan.root.arity), _REQ)]


__all__ = ["PlanCompiler", "compile_plan", "compute_lookups", "compute_view", "finish",
           "optimized", "scan_view", "sort_columns"]
