"""The shared SparkSession of the Spark tests, and how they compare Spark with the engine.

One ``local[2]`` session (two shuffle partitions) serves the whole test session: starting
a JVM costs about ten seconds. It is created through rivulet's own
:func:`rivulet.spark.get_session`, so the tests run with the settings rivulet runs with.
There is no skip: without Java or pyspark these tests fail, because CI must run them.

Tests that take ``cluster_spark`` run on a real standalone cluster instead (a master and two
workers, each worker one core and its own executor JVM: :mod:`rivulet.spark.cluster`),
started once per test session by ``spark_cluster``, with rivulet shipped to the executors
as a zip and Spark's files in a shared local directory (``CLUSTER_SHARED``). A process has
one SparkContext, so switching to the cluster ends the local session: conftest.py runs
those tests after all others.

Comparison (:func:`assert_same_rows`): as tests/oracle.py compares rivulet with SQLite
(numbers within 1e-9, Decimal compared as numbers, multisets where there is no ORDER BY),
plus the order of the sort keys where the view has an ORDER BY.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import rivulet
from oracle import norm_row, same_multiset, same_row, sorted_rows
from rivulet.plan import ir
from rivulet.spark import Snapshot, SparkConfig, get_session, stop_session, take_snapshot
from rivulet.spark.cluster import ClusterSpec, StandaloneCluster
from rivulet.spark.session import session_config

SPARK_CONFIG = SparkConfig(master="local[2]", shuffle_partitions=2, driver_memory="1g")
#: Two workers of one core and 1 GiB each: one executor (512 MiB) per worker.
CLUSTER_SPEC = ClusterSpec(workers=2, cores=1, memory="1g")

Row = tuple


@pytest.fixture(scope="session", name="spark")
def spark_session() -> Iterator[Any]:
    """The session-wide SparkSession (import ``spark_session`` to use the ``spark`` fixture)."""
    session = get_session(SPARK_CONFIG)
    yield session
    stop_session()


@pytest.fixture(scope="session", name="spark_cluster")
def standalone_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    """A standalone cluster for the test session (import ``standalone_cluster`` to use the
    ``spark_cluster`` fixture); its logs stay in the session's temp dir
    (``spark-cluster*/master.log``, ``worker-N.log``, executors' under ``worker-N/``)."""
    with StandaloneCluster(tmp_path_factory.mktemp("spark-cluster"), CLUSTER_SPEC) as cluster:
        yield cluster


def cluster_config(cluster: StandaloneCluster, shared: Path) -> SparkConfig:
    """The driver's settings for ``cluster``: loopback, an executor of 512 MiB per worker."""
    return SparkConfig(
        master=cluster.master_url, shuffle_partitions=2, driver_memory="1g",
        shared_dir=str(shared),
        extra={"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
               "spark.executor.memory": "512m", "spark.executor.cores": "1",
               "spark.cores.max": str(CLUSTER_SPEC.workers * CLUSTER_SPEC.cores)})


@pytest.fixture(scope="session", name="cluster_spark")
def cluster_session(spark_cluster: StandaloneCluster,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The process's SparkSession, on ``spark_cluster`` (import ``cluster_session`` to use
    the ``cluster_spark`` fixture; the local one, if any, is stopped),
    once an executor runs on every worker."""
    config = cluster_config(spark_cluster, tmp_path_factory.mktemp("spark-shared"))
    if session_config() not in (None, config):
        stop_session()
    session = get_session(config)
    _await_executors(session, CLUSTER_SPEC.workers)
    yield session
    stop_session()


def _await_executors(session: Any, count: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        executors = session.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
        if executors >= count:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{executors} of {count} executors registered after "
                                 f"{timeout:.0f} s (see the cluster's logs)")
        time.sleep(0.2)


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
