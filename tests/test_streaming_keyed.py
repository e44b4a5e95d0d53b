"""The keyed processors of the streaming pipeline (rivulet/pipeline/streaming/keyed.py),
driven without Spark: a fake state handle stands in for Spark's state store, and the
deltas each processor emits, summed over random batches of inserts and deletes, must
equal the operator's answer computed from scratch over the rows so far (the oracle).
The Spark side of the same processors is covered by tests/test_streaming.py."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import Row as SparkRow
from pyspark.sql import types as T

from rivulet.dataflow.builder import sort_key_function
from rivulet.pipeline.streaming import keyed as K
from rivulet.plan import ir


class FakeValue:
    def __init__(self) -> None:
        self.value: tuple | None = None

    def get(self) -> tuple | None:
        return self.value

    def update(self, value: tuple) -> None:
        self.value = value

    def clear(self) -> None:
        self.value = None


class FakeList:
    def __init__(self) -> None:
        self.items: list[tuple] = []

    def get(self) -> Iterator[tuple]:
        return iter(list(self.items))

    def put(self, items: list[tuple]) -> None:
        self.items = list(items)

    def appendList(self, items: list[tuple]) -> None:  # noqa: N802 - Spark's name
        self.items.extend(items)

    def clear(self) -> None:
        self.items = []


class FakeHandle:
    """One key's state: what Spark's handle gives a processor for the key being handled."""

    def __init__(self) -> None:
        self.value, self.list = FakeValue(), FakeList()

    def getValueState(self, name: str, schema: Any) -> FakeValue:  # noqa: N802
        return self.value

    def getListState(self, name: str, schema: Any) -> FakeList:  # noqa: N802
        return self.list


LONG = K.Column(T.LongType())

# Batches of (row, sign) for one partition: rows (a, b), deletes only of rows present.
OPS = st.lists(st.lists(st.tuples(st.booleans(), st.integers(0, 6), st.integers(0, 40)),
                        min_size=1, max_size=30), min_size=1, max_size=12)


def run_batches(processor: K.KeyedProcessor, batches: list[list[tuple[bool, int, int]]],
                apply: Any, make_row: Any = lambda a, b, s: SparkRow(c0=a, c1=b, _s=s)) -> None:
    handle = FakeHandle()
    processor.init(handle)  # type: ignore[arg-type]
    rows: Counter[tuple] = Counter()
    output: Counter[tuple] = Counter()
    for batch in batches:
        deltas = []
        for insert, a, b in batch:
            if insert or rows[(a, b)] <= 0:
                rows[(a, b)] += 1
                deltas.append(make_row(a, b, 1))
            else:
                rows[(a, b)] -= 1
                deltas.append(make_row(a, b, -1))
        for out in processor.handleInputRows((0,), iter(deltas), None):
            *values, sign = out
            output[tuple(values)] += sign
        output = +output
        assert output == apply(+rows), (dict(output), dict(+rows))


@settings(max_examples=200, deadline=None)
@given(batches=OPS, k=st.integers(1, 4), descending=st.booleans(), skip=st.integers(0, 2))
def test_topk_prefix_and_list_give_the_top_k(batches: list, k: int, descending: bool,
                                             skip: int) -> None:
    """The rows ranked ``skip`` to ``k`` (a LIMIT's OFFSET inside another query)."""
    order = (ir.SortKey(1, descending),)
    processor = K.TopKProcessor([LONG, LONG], order, k, skip)
    processor.bound = k + 2  # a small prefix: the list, refills and trims all happen
    processor.compact_after = 0  # and compactions
    processor.output = ["c0", "c1", "_s"]
    key = sort_key_function(order, tie_break=2)

    def top(rows: Counter) -> Counter:
        expanded = sorted(rows.elements(), key=key)[skip:k]
        return Counter(expanded)

    run_batches(processor, batches, top)


@settings(max_examples=100, deadline=None)
@given(batches=OPS)
def test_aggregate_min_max_count_after_deletes(batches: list) -> None:
    aggs = (ir.AggCall("min", 1), ir.AggCall("max", 1), ir.AggCall("count", None))
    processor = K.AggregateProcessor(aggs, [], [LONG, LONG, None], [LONG, LONG, LONG], K.DELTAS)
    processor.output = ["c0", "c1", "c2", "_s"]

    def aggregate(rows: Counter) -> Counter:
        values = list(rows.elements())
        bs = [b for _, b in values]
        return Counter([(min(bs) if bs else None, max(bs) if bs else None, len(values))])

    run_batches(processor, batches, aggregate, lambda a, b, s: SparkRow(_a0=b, _a1=b, _s=s))


# LEFT JOIN under one join key value (or a NULL one): left rows (k, a), right rows (k, b),
# joined (k, a, k, b) when the residual a <= b holds (or always, without residual).
JOIN_OPS = st.lists(st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 5)),
                             min_size=1, max_size=25), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(batches=JOIN_OPS, residual=st.booleans(), null_key=st.booleans(), compact=st.booleans())
def test_left_join_delta_rule_and_padding(batches: list, residual: bool, null_key: bool,
                                          compact: bool) -> None:
    condition = ir.Call("le", (ir.Col(1), ir.Col(3))) if residual else None
    processor = K.LeftJoinProcessor([LONG, LONG], [LONG, LONG], 1, condition, ["int"] * 4)
    processor.compact_after = 0 if compact else 1024
    processor.output = ["c0", "c1", "c2", "c3", "_s"]
    handle = FakeHandle()
    processor.init(handle)  # type: ignore[arg-type]
    key = None if null_key else 7
    rows: tuple[Counter, Counter] = (Counter(), Counter())
    output: Counter = Counter()
    for batch in batches:
        deltas = []
        for is_right, insert, value in batch:
            held = rows[is_right]
            sign = 1 if insert or held[value] <= 0 else -1
            held[value] += sign
            deltas.append(SparkRow(_side=int(is_right), c0=None if is_right else key,
                                   c1=None if is_right else value, c2=key if is_right else None,
                                   c3=value if is_right else None, _s=sign))
        for out in processor.handleInputRows((key,), iter(deltas), None):
            *values, sign = out
            output[tuple(values)] += sign
        output = +output
        expected: Counter = Counter()
        for a, m in (+rows[0]).items():
            matched = [(b, n) for b, n in (+rows[1]).items()
                       if key is not None and (not residual or a <= b)]
            for b, n in matched:
                expected[(key, a, key, b)] += m * n
            if not matched:
                expected[(key, a, None, None)] += m
        assert output == expected, (dict(output), dict(expected))
