"""The shared SparkSession of the Spark tests, and how they compare Spark with the engine.

One ``local[2]`` session (two shuffle partitions) serves the whole test session: starting
a JVM costs about ten seconds. It is created through rivulet's own
:func:`rivulet.spark.get_session`, so the tests run with the settings rivulet runs with.
There is no skip: without Java or pyspark these tests fail, because CI must run them.

Comparison (:func:`assert_same_rows`): as tests/oracle.py compares rivulet with SQLite
(numbers within 1e-9, Decimal compared as numbers, multisets where there is no ORDER BY),
plus the order of the sort keys where the view has an ORDER BY.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import rivulet
from oracle import norm_row, same_multiset, same_row, sorted_rows
from rivulet.plan import ir
from rivulet.spark import Snapshot, SparkConfig, get_session, stop_session, take_snapshot

SPARK_CONFIG = SparkConfig(master="local[2]", shuffle_partitions=2, driver_memory="1g")

Row = tuple


@pytest.fixture(scope="session", name="spark")
def spark_session() -> Iterator[Any]:
    """The session-wide SparkSession (import ``spark_session`` to use the ``spark`` fixture)."""
    session = get_session(SPARK_CONFIG)
    yield session
    stop_session()


def spark_tables(db: rivulet.Database, directory: Path, spark: Any) -> tuple[Snapshot, dict]:
    """Settle ``db``, snapshot it into ``directory``, and open the tables on Spark."""
    db.settle()
    snapshot = take_snapshot(db, directory)
    return snapshot, snapshot.dataframes(spark)


def _fmt(rows: Sequence[Sequence[Any]]) -> str:
    return "\n      ".join(repr(tuple(r)) for r in rows) or "(no rows)"


def assert_same_rows(spark_rows: Sequence[Row], engine_rows: Sequence[Row], plan: ir.ViewPlan,
                     what: str = "") -> None:
    """Spark's answer is the engine's, up to the rows a LIMIT/OFFSET may cut among ties.

    Both executors choose a top-k's rows with the same tie-break (the whole row), but
    the engine's read-time sort leaves ties in storage order, so where an answer is cut
    after merging several keys (IN lists, ranges) or by an OFFSET, rows tied at the cut
    may differ. Then: the same number of rows, the same ORDER BY keys position by
    position (when they are visible), and the same rows in every block of ties not at
    the edge of the answer. (Tests check Spark's answer against SQLite too.)"""
    header = f"Spark and the engine disagree{' on ' + what if what else ''} ({plan.sql})"
    detail = f"\n  spark:  {_fmt(spark_rows)}\n  engine: {_fmt(engine_rows)}"
    sliced = plan.limit is not None or plan.offset > 0
    assert len(spark_rows) == len(engine_rows), header + detail
    order = [k.column for k in plan.order]
    if not order or any(c >= plan.visible for c in order):
        if not sliced:
            assert same_multiset(spark_rows, engine_rows), header + detail
        return
    keys = [tuple(norm_row(r)[c] for c in order) for r in spark_rows]
    for i, (r, key) in enumerate(zip(engine_rows, keys)):
        assert same_row(tuple(norm_row(r)[c] for c in order), key), (
            header + f" (ORDER BY keys differ at row {i})" + detail)
    blocks: list[list[int]] = []
    for i, key in enumerate(keys):
        if not blocks or not same_row(keys[blocks[-1][0]], key):
            blocks.append([])
        blocks[-1].append(i)
    for n, block in enumerate(blocks):
        edge = sliced and (n == 0 or n == len(blocks) - 1)
        if not edge:
            assert same_multiset([spark_rows[i] for i in block], [engine_rows[i] for i in block]), (
                header + " (rows with equal ORDER BY keys)" + detail)


def assert_rows_equal(got: Sequence[Row], expected: Sequence[Row], what: str = "") -> None:
    assert same_multiset(got, expected), (
        f"unexpected rows{' for ' + what if what else ''}:\n  got:      {_fmt(sorted_rows(got))}"
        f"\n  expected: {_fmt(sorted_rows(expected))}")
