"""Each operator, driven by random waves of inserts and deletes, equals a recomputation.

The oracle is the operator's definition applied from scratch to the accumulated inputs:
summing the incremental output must give the same multiset after every wave, including
waves that change both inputs of a join at once (self-joins, simultaneous updates).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rivulet.dataflow.builder import sort_key_function
from rivulet.dataflow.graph import Graph
from rivulet.dataflow.ops.aggregate import Aggregate
from rivulet.dataflow.ops.distinct import Distinct
from rivulet.dataflow.ops.join import Join
from rivulet.dataflow.ops.topk import TopK
from rivulet.dataflow.ops.union import Union
from rivulet.plan.ir import AggCall, SortKey

values = st.one_of(st.none(), st.integers(0, 3))
rows2 = st.tuples(values, values)
# A wave: rows to insert into each input and how many existing rows to delete from each.
waves = st.lists(
    st.tuples(st.lists(rows2, max_size=4), st.lists(rows2, max_size=4),
              st.integers(0, 3), st.integers(0, 3)),
    min_size=1, max_size=8,
)


class Harness:
    """Two base tables feeding one operator, with the operator's output kept in a multiset."""

    def __init__(self, make: Callable[[Graph, int, int], Any], partial: bool = False) -> None:
        self.graph = Graph(partial=partial)
        self.tables: dict[str, Counter] = {"l": Counter(), "r": Counter()}
        self.graph.base_rows = lambda t: list(self.tables[t].items())
        self.graph.base_lookup = self.lookup
        self.left = self.graph.add_base("l")
        self.right = self.graph.add_base("r")
        self.node = self.graph.add_node(make(self.graph, self.left, self.right))
        self.output = self.graph.arrangement(self.node, (), full=True)

    def lookup(self, table: str, columns: tuple, keys: list) -> list:
        """Base rows by key, as storage answers a partial arrangement's upquery."""
        wanted = set(keys)
        key_of = ((lambda r: r[columns[0]]) if len(columns) == 1
                  else (lambda r: tuple(r[c] for c in columns)))
        return [(row, n) for row, n in self.tables[table].items() if key_of(row) in wanted]

    def wave(self, inserts_l: list, inserts_r: list, delete_l: int, delete_r: int) -> None:
        writes = {}
        for name, base, inserts, deletes in (("l", self.left, inserts_l, delete_l),
                                             ("r", self.right, inserts_r, delete_r)):
            table = self.tables[name]
            gone = sorted(table.elements(), key=repr)[:deletes]
            deltas = [(row, -1) for row in gone] + [(row, 1) for row in inserts]
            table.subtract(gone)
            table.update(inserts)
            self.tables[name] = +table
            if deltas:
                writes[base] = deltas
        self.graph.propagate(writes)

    def result(self) -> Counter:
        return Counter({row: n for row, n in self.output.all_rows()})


def run(make: Callable[[Graph, int, int], Any], recompute: Callable[[Counter, Counter], Counter],
        plan: list, partial: bool = False) -> None:
    h = Harness(make, partial)
    for wave in plan:
        h.wave(*wave)
        expected = +recompute(h.tables["l"], h.tables["r"])
        assert h.result() == expected, f"after {wave}: {h.result()} != {expected}"


def join_oracle(kind: str, residual: Callable[[tuple], bool] | None = None):
    def recompute(left: Counter, right: Counter) -> Counter:
        out: Counter = Counter()
        for lrow, n in left.items():
            matched = False
            for rrow, m in right.items():
                if (lrow[0] is not None and lrow[0] == rrow[0]
                        and (residual is None or residual(lrow + rrow))):
                    out[lrow + rrow] += n * m
                    matched = True
            if kind == "left" and not matched:
                out[lrow + (None, None)] += n
        return out
    return recompute


PARTIAL = pytest.mark.parametrize("partial", [False, True], ids=["full", "partial"])


def join(kind: str, residual: Any = None,
         self_join: bool = False) -> Callable[[Graph, int, int], Any]:
    return lambda g, a, b: Join(a, a if self_join else b, (0,), (0,), kind=kind, left_arity=2,
                                right_arity=2, residual=residual)


@PARTIAL
@given(plan=waves)
def test_inner_join_equals_recompute(plan: list, partial: bool) -> None:
    run(join("inner"), join_oracle("inner"), plan, partial)


@PARTIAL
@given(plan=waves)
def test_left_join_equals_recompute(plan: list, partial: bool) -> None:
    run(join("left"), join_oracle("left"), plan, partial)


@PARTIAL
@given(plan=waves)
def test_left_join_with_residual_equals_recompute(plan: list, partial: bool) -> None:
    residual = lambda row: row[1] is not None and row[3] is not None and row[1] <= row[3]  # noqa: E731
    run(join("left", residual), join_oracle("left", residual), plan, partial)


@PARTIAL
@given(plan=waves)
def test_self_join_equals_recompute(plan: list, partial: bool) -> None:
    def recompute(left: Counter, right: Counter) -> Counter:
        return join_oracle("inner")(left, left)
    run(join("inner", self_join=True), recompute, plan, partial)


def aggregate_oracle(left: Counter, right: Counter) -> Counter:
    groups: dict[Any, list] = {}
    for row, n in left.items():
        groups.setdefault(row[0], []).extend([row] * n)
    out: Counter = Counter()
    for key, rows in groups.items():
        present = [r[1] for r in rows if r[1] is not None]
        out[(key, len(rows), len(present), len(set(present)), sum(present) if present else None,
             min(present, default=None), max(present, default=None))] += 1
    return out


@given(waves)
def test_aggregate_equals_recompute(plan: list) -> None:
    aggs = (AggCall("count", None), AggCall("count", 1), AggCall("count", 1, True),
            AggCall("sum", 1), AggCall("min", 1), AggCall("max", 1))
    run(lambda g, a, b: Aggregate(a, (0,), aggs), aggregate_oracle, plan)


#: DOUBLEs of very different sizes: a running float total of them keeps the error of every
#: value added and removed again.
doubles = st.sampled_from([0.1, 0.3333333333333333, 3.0, -2.5, 1e10, 9007199254740992.0,
                           1e-05, 123.456, -0.1])


@given(st.lists(st.tuples(st.booleans(), doubles), max_size=40))
def test_sum_of_doubles_after_deletes_is_the_sum_of_the_doubles_left(
        steps: list[tuple[bool, float]]) -> None:
    """SUM of DOUBLEs is the correctly rounded sum of the values present (AVG that over
    their count), however many larger values were added and removed before: MySQL sums
    afresh."""
    from fractions import Fraction

    from rivulet.dataflow.ops.aggregate import Avg, Sum

    total, mean, present = Sum(), Avg(), Counter[float]()
    for insert, value in steps:
        if not insert and not present[value]:
            continue
        diff = 1 if insert else -1
        present[value] += diff
        total.add(value, diff)
        mean.add(value, diff)
        values = list(present.elements())
        exact = float(sum(map(Fraction, values))) if values else None
        assert total.result() == exact
        assert mean.result() == (None if exact is None else exact / len(values))


def test_a_loaded_double_sum_stays_a_double_when_some_of_its_values_are_removed() -> None:
    """A SUM loaded from another executor's total (Spark's bootstrap) stands for all its
    values: removing one of three DOUBLEs leaves a DOUBLE sum of the other two, not the
    exact total's 0 (the bootstrap differential test found 'eel' summing to 0)."""
    from rivulet.dataflow.ops.aggregate import Avg, Sum

    total, mean = Sum(), Avg()
    for acc in (total, mean):
        acc.load((4.25 + 2.0 + 1.5, 3))
        acc.add(2.0, -1)
    assert total.result() == 5.75
    assert mean.result() == 5.75 / 2


@given(waves)
def test_global_aggregate_has_one_row_even_when_empty(plan: list) -> None:
    def recompute(left: Counter, right: Counter) -> Counter:
        present = [r[1] for r in left.elements() if r[1] is not None]
        return Counter({(sum(left.values()), max(present, default=None)): 1})
    run(lambda g, a, b: Aggregate(a, (), (AggCall("count", None), AggCall("max", 1))),
        recompute, plan)


@given(waves)
def test_distinct_equals_recompute(plan: list) -> None:
    run(lambda g, a, b: Distinct(a, 2), lambda left, right: Counter(set(left)), plan)


@given(waves)
def test_union_all_equals_recompute(plan: list) -> None:
    run(lambda g, a, b: Union((a, b, a)), lambda left, right: left + right + left, plan)


@given(waves, st.integers(1, 3))
def test_topk_per_group_equals_recompute(plan: list, k: int) -> None:
    order = (SortKey(1, descending=True),)
    key = sort_key_function(order, tie_break=2)

    def recompute(left: Counter, right: Counter) -> Counter:
        groups: dict[Any, list] = {}
        for row in left.elements():
            groups.setdefault(row[0], []).append(row)
        return Counter(r for rows in groups.values() for r in sorted(rows, key=key)[:k])

    run(lambda g, a, b: TopK(a, (0,), key, k), recompute, plan)


def test_a_new_join_bootstraps_from_existing_rows() -> None:
    h = Harness(lambda g, a, b: Union((a,)))
    h.wave([(1, 1), (2, 2)], [(1, 5), (1, 6)], 0, 0)
    join = h.graph.add_node(Join(h.left, h.right, (0,), (0,), kind="left", left_arity=2,
                                 right_arity=2))
    rows = Counter(dict(h.graph.arrangement(join, ()).all_rows()))
    assert rows == Counter({(1, 1, 1, 5): 1, (1, 1, 1, 6): 1, (2, 2, None, None): 1})
