"""Every Spark path of rivulet on a real Spark standalone cluster (issue 34).

The cluster (tests/spark_fixtures.py, ``spark_cluster``) is a master and two workers on
loopback, each worker its own JVM running its own executor and Python workers; the daemons
run without the tests' ``PYTHONPATH``, so an executor finds rivulet only in the zip the
session ships (rivulet/spark/shipping.py), and Spark's files go to a shared directory
(rivulet/spark/storage.py; here a local one, which is what one machine has). The checks
are those of the local-mode tests, whose setup and oracles are reused: the import keeps
what the write path keeps and views equal SQLite afterwards (test_spark_import.py), full
state computed by Spark equals SQLite's answers, before and after more writes and across a
restart (test_spark_bootstrap.py), verify passes an agreeing database and finds corrupted
state (test_spark_verify.py), also as ``rivulet verify --spark-master`` in a process of its
own, and the streaming pipeline keeps a view equal to SQLite while
another is added and dropped, and streams the news example whole, keyed state included
(test_streaming.py). Then the cluster as a deployment meets it: ``rivulet serve
--pipeline spark --spark-master`` in a process of its own, written and read over MySQL;
ALTER TABLE while the streams run; and a worker killed mid-batch, after which nothing is
lost or applied twice (last: it restarts the worker, for whatever runs after).
"""

from __future__ import annotations

import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymysql
import pytest
from pyspark import cloudpickle

import rivulet
import test_spark_import
import test_spark_verify
import test_streaming
from oracle import Pair
from rivulet.spark import SparkConfig
from rivulet.spark.session import session_config
from rivulet.spark.shipping import code_zip
from rivulet.spark.storage import SHARED_DIR_ENV, database_area, stream_area
from spark_fixtures import (  # the ``cluster_spark`` and ``spark_cluster`` fixtures
    cluster_session,  # noqa: F401
    standalone_cluster,  # noqa: F401
)
from test_spark_bootstrap import FULL_VIEWS, TABLES, check_all, load, more_writes, spark_tasks

#: A cluster's start and its first job cost JVMs (the master, two workers, two executors):
#: minutes on a loaded two-core machine, counted against the first test.
pytestmark = [pytest.mark.spark, pytest.mark.timeout(900)]

# The probe below is defined here, where executors cannot import it from: ship it by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def where_rivulet_comes_from(_: Any) -> tuple[str, str, int]:
    """On an executor: the file rivulet is imported from, the Python worker's directory (the
    executor's, under its worker's work directory) and process."""
    import rivulet as shipped

    time.sleep(0.3)  # long enough that both executors take tasks
    return shipped.__file__ or "", os.getcwd(), os.getpid()


def test_executors_import_rivulet_from_the_shipped_zip(cluster_spark: Any,
                                                      spark_cluster: Any) -> None:
    started = time.perf_counter()
    seen = cluster_spark.sparkContext.parallelize(range(8), 8).map(
        where_rivulet_comes_from).collect()
    files = {f for f, _, _ in seen}
    zip_name = code_zip().name  # the driver's code, by content hash
    assert all(f"/{zip_name}/rivulet/__init__.py" in f for f in files), files
    assert not any(f.startswith(str(Path(rivulet.__file__).parent.parent)) for f in files)
    workers = {Path(cwd).relative_to(spark_cluster.log_dir).parts[0] for _, cwd, _ in seen}
    assert workers == {"worker-0", "worker-1"}, seen  # each worker's own executor
    assert len({pid for _, _, pid in seen}) >= 2
    print(f"zip probe: {time.perf_counter() - started:.1f} s")


def cluster_config() -> SparkConfig:
    config = session_config()
    assert config is not None and config.master.startswith("spark://")
    return config


# --------------------------------------------------------------------------- import


def test_import_on_the_cluster(tmp_path: Path, cluster_spark: Any) -> None:
    test_spark_import.test_views_equal_sqlite_after_import(tmp_path, cluster_spark)


def test_import_on_the_cluster_accepts_and_rejects_what_writes_do(tmp_path: Path,
                                                                   cluster_spark: Any) -> None:
    with rivulet.open(tmp_path / "data") as db:
        db.execute(test_spark_import.TABLE)
        test_spark_import.test_bad_rows_are_rejected_with_counts_and_samples(
            db, tmp_path, cluster_spark)


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_and_recovery_of_full_state_on_the_cluster(cluster_spark: Any) -> None:
    config = cluster_config()
    with Pair() as pair:
        pair.db.close()
        pair.db = rivulet.open(pair.path, spark=config, spark_bootstrap_rows=0)
        for sql in TABLES:
            pair.execute(sql)
        rng = random.Random(11)
        load(pair, rng, 200)
        pair.settle()
        for name, sql in FULL_VIEWS.items():
            pair.create_view(name, sql)
            assert spark_tasks(pair.db), f"view {name}: nothing was bootstrapped on Spark"
            assert not pair.db.bootstrap_report()["error"]
        check_all(pair)
        more_writes(pair, rng)
        check_all(pair)
        # The snapshot went to the shared directory, not beside the data.
        assert not (Path(pair.path) / "_bootstrap").exists()
        assert database_area(pair.path, config).is_dir()
        pair.db.close()
        pair.db = rivulet.open(pair.path, spark=config, spark_bootstrap_rows=0)
        assert pair.db.core.bootstrap.await_loaded(300)
        report = pair.db.bootstrap_report()
        assert not report["error"], report
        assert {t["executor"] for t in report["tasks"]} == {"spark"}
        check_all(pair)


# --------------------------------------------------------------------------- verify


def test_verify_passes_on_the_cluster(tmp_path: Path, cluster_spark: Any) -> None:
    test_spark_verify.test_an_agreeing_database_passes(tmp_path, cluster_spark)


def test_cli_verify_with_a_spark_master(tmp_path: Path, spark_cluster: Any) -> None:
    """``rivulet verify --spark-master spark://...`` in a process of its own (a driver of its
    own, shared directory from ``RIVULET_SPARK_DIR``). It takes no ``cluster_spark``, so it
    runs before the tests that hold the cluster's cores (a second application would wait)."""
    data = tmp_path / "data"
    with test_spark_verify.make_db(data) as db:
        test_spark_verify.read_some(db)
    shared = tmp_path / "shared"
    env = {**os.environ, SHARED_DIR_ENV: str(shared), "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-m", "rivulet", "verify", "--data-dir", str(data),
                           "--spark-master", spark_cluster.master_url],
                          env=env, capture_output=True, text=True, timeout=800)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all views agree (8 views" in done.stdout, done.stdout
    assert [p.name for p in shared.iterdir()] == [database_area(data, SparkConfig(
        shared_dir=str(shared))).name]  # the snapshot was there (and is gone)


def test_serve_with_a_spark_master(tmp_path: Path, spark_cluster: Any) -> None:
    """``rivulet serve --pipeline spark --spark-master spark://...`` as docs/spark.md says
    (shared directory from ``RIVULET_SPARK_DIR``), in a process of its own: over MySQL,
    tables made, written and read, each read right after the writes equal to SQLite's answer
    (test_streaming.mysql_reads_match_sqlite: ad-hoc SELECTs whose streams start on the
    cluster, ``rivulet_read_your_writes``). Like the CLI's verify it takes no
    ``cluster_spark``: it runs while the cluster's cores are free."""
    shared = tmp_path / "shared"
    env = {**os.environ, SHARED_DIR_ENV: str(shared), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYTHONUNBUFFERED": "1"}
    work = {p.name: set(p.iterdir()) for p in spark_cluster.log_dir.glob("worker-*")
            if p.is_dir()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rivulet", "serve", "--data-dir", str(tmp_path / "data"),
         "--mysql-port", "0", "--no-http", "--no-demo", "--pipeline", "spark",
         "--spark-master", spark_cluster.master_url,
         "--spark-conf", "spark.executor.memory=512m",
         "--spark-conf", "spark.driver.host=127.0.0.1"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        port = _served_port(proc, timeout=300)
        started = time.perf_counter()
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with conn.cursor() as cursor:
            test_streaming.mysql_reads_match_sqlite(cursor, sqlite3.connect(":memory:"))
        conn.close()
        print(f"serve on the cluster: writes and reads {time.perf_counter() - started:.1f} s")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "stopped" in out, out
    # The streams ran in both workers' executors, with their files in the shared directory.
    for name, before in work.items():
        assert set((spark_cluster.log_dir / name).iterdir()) - before, f"no executor on {name}"
    area = stream_area(tmp_path / "data", SparkConfig(shared_dir=str(shared)))
    assert (area / "log").is_dir() and (area / "views").is_dir()


def _served_port(proc: subprocess.Popen[str], timeout: float) -> int:
    """The MySQL port ``rivulet serve`` prints once it serves (its output kept on failure)."""
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "stop with Ctrl-C" in line:
            found = re.search(r"-P (\d+)", "".join(lines))
            assert found is not None, lines
            return int(found.group(1))
    proc.kill()
    raise AssertionError("rivulet serve did not start:\n" + "".join(lines))


def test_verify_finds_corrupted_state_on_the_cluster(tmp_path: Path, cluster_spark: Any) -> None:
    test_spark_verify.test_corrupted_reader_entries_are_reported_with_their_keys(
        tmp_path, cluster_spark)


# --------------------------------------------------------------------------- streaming


def test_streaming_with_a_view_added_and_dropped_on_the_cluster(tmp_path: Path,
                                                                cluster_spark: Any) -> None:
    test_streaming.test_live_view_add_and_drop(cluster_spark, tmp_path)
    # The log, snapshots and checkpoints went to the shared directory; the sink stayed.
    area = stream_area(tmp_path, cluster_config())
    assert (area / "log").is_dir() and (area / "views").is_dir()
    assert not (tmp_path / "stream" / "log").exists()
    assert (tmp_path / "stream" / "sink.db").is_file()


def test_schema_changes_while_streaming_on_the_cluster(tmp_path: Path,
                                                       cluster_spark: Any) -> None:
    """ALTER TABLE (columns added first and last, one renamed, widened, dropped) while the
    streams run on the executors and a writer writes; SQLite's answers after each change
    and after a restart, whose queries are planned on the newest columns
    (test_streaming.schema_changes_keep_streams_equal_sqlite)."""
    with test_streaming.StreamingPair(str(tmp_path / "data"), cluster_spark) as pair:
        test_streaming.schema_changes_keep_streams_equal_sqlite(pair)


def test_news_program_streams_whole_on_the_cluster(tmp_path: Path, cluster_spark: Any) -> None:
    """Keyed state (Python ``transformWithState`` processors: a LEFT JOIN under an
    aggregate, a top-k) runs in the executors' Python workers, from the shipped zip."""
    test_streaming.test_news_program_runs_whole_on_spark(cluster_spark, tmp_path)


# --------------------------------------------------------------------------- failure


def test_worker_killed_mid_batch_loses_and_doubles_nothing(tmp_path: Path, cluster_spark: Any,
                                                           spark_cluster: Any) -> None:
    """Failures while a micro-batch's tasks run: first the executors' Python workers are
    killed (SIGKILL, while Python keyed processors run), then a whole worker dies (SIGKILL
    of its JVM, its executor and their Python workers, as when its machine goes). Spark
    runs the failed or lost tasks again (on the other worker's executor, after the worker
    died), from the state in the checkpoints, and each batch reaches the sink once. The
    views (an aggregate, a stream-stream join, MIN/MAX and COUNT(DISTINCT) in Python keyed
    processors) answer what SQLite answers over the same writes after each failure, and
    again once the worker is back. Last in the module: the cluster is whole again after."""
    names = ["VoteStats", "CatVoters", "VoteRange"]
    applied: list[tuple[str, int]] = []
    killed: list[str] = []
    armed: dict[str, Callable[[], str | None]] = {}
    context = cluster_spark.sparkContext

    def python_workers(worker: str) -> list[int]:
        """The Python processes under a worker (not its JVMs, whose command lines name
        pyspark's jars too)."""
        pids = []
        for pid in spark_cluster.processes(worker):
            try:
                if Path(f"/proc/{pid}/comm").read_text().startswith("python"):
                    pids.append(pid)
            except OSError:
                pass  # ended meanwhile
        return pids

    def kill_python_workers() -> str | None:
        """The executors' Python workers running now (they live while tasks run)."""
        pids = python_workers("worker-0") + python_workers("worker-1")
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return f"{len(pids)} Python workers" if pids else None

    def kill_worker() -> str | None:
        spark_cluster.kill("worker-1")
        return "worker-1"

    def while_tasks_run(kill: Callable[[], str | None]) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if context.statusTracker().getActiveStageIds():
                what = kill()
                if what is not None:
                    killed.append(what)
                    return
            time.sleep(0.005)

    def on_batch(stream: Any, batch_id: int) -> None:
        kill = armed.pop(stream.plan.name, None)
        if kill is not None:
            threading.Thread(target=while_tasks_run, args=(kill,), daemon=True).start()

    with test_streaming.StreamingPair(str(tmp_path / "data"), cluster_spark) as pair:
        rng = random.Random(5)

        def big_write(first: int) -> None:
            pair.insert_many("votes", [(i, rng.randrange(40), rng.randrange(7),
                                        rng.randrange(5)) for i in range(first, first + 20_000)])

        def small_writes(n: int) -> None:
            pair.execute("DELETE FROM votes WHERE aid = ? AND uid < ?", (n % 7, 10))
            pair.execute("UPDATE votes SET w = w + 1 WHERE uid = ?", (n,))
            pair.execute("INSERT INTO articles VALUES (?, ?, ?)", (100 + n, "n", n % 3))

        try:
            for statement in test_streaming.SCHEMA.strip().split(";\n"):
                pair.execute(statement.strip().rstrip(";"))
            pair.insert_many("articles", [(i, "t", i % 3) for i in range(6)])
            pair.insert_many("votes", [(i, i % 4, i % 6, i % 3) for i in range(50)])
            for name in names:
                pair.create_view(name, test_streaming.VIEWS[name][0])
            pair.db.pipeline.hooks["batch_applied"] = lambda stream, batch_id: applied.append(
                (stream.plan.name, batch_id))
            pair.db.pipeline.hooks["batch"] = on_batch
            for step, (view, kill) in enumerate([("VoteRange", kill_python_workers),
                                                 ("VoteStats", kill_worker)]):
                armed[view] = kill
                big_write(1000 + step * 100_000)
                wait_until = time.monotonic() + 120
                while len(killed) <= step:
                    assert time.monotonic() < wait_until, f"no kill: {killed}"
                    time.sleep(0.05)
                for n in range(3):
                    small_writes(step * 3 + n)
                pair.settle()
                test_streaming.check_all(pair, names)
        finally:
            if "worker-1" in killed:
                spark_cluster.restart("worker-1")
        deadline = time.monotonic() + 120
        while context._jsc.sc().getExecutorMemoryStatus().size() - 1 < 2:
            assert time.monotonic() < deadline, "no executor on the restarted worker"
            time.sleep(0.2)
        pair.execute("UPDATE votes SET aid = ? WHERE id < ?", (3, 1100))
        pair.settle()
        test_streaming.check_all(pair, names)
        assert pair.db.pipeline.failure is None
        assert len(applied) == len(set(applied)), "a batch was applied twice"
        restarts = {s.plan.name: s.restarts for s in pair.db.pipeline.streams.values()}
        print(f"killed mid-batch: {killed}; {len(applied)} batches applied once each; "
              f"query restarts {restarts}")
