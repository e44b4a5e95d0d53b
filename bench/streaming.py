"""The vote workload on the Spark streaming pipeline (issue 9): in-process vs local[1] vs local[2].

Workload: ``articles`` and ``votes``; the view ``VoteCount`` (votes per article, keyed by
article: ``SELECT aid, COUNT(*) ... WHERE aid = ? GROUP BY aid``); votes go to Zipf-popular
articles (s = 1.08) and are written in large batches (``insert_many``, one durable commit
each, 20 commits per second), so the driver's commit path and the sink are not what is
measured.

Each system runs in its own subprocess (a JVM's master cannot change within a process):

* ``inprocess``: rivulet's own dataflow;
* ``local[1]`` / ``local[2]``: ``pipeline="spark"`` with that master and as many shuffle
  partitions as cores.

Two measurements per system:

1. **Rising write rates.** For each offered rate, a writer thread commits votes at that
   rate for ``--seconds``; a poller records when each LSN becomes visible in the view
   (write-to-visible latency, p50/p95), then the backlog drains (after a warm-up at half
   the first rate, not measured: a cold JVM's first batches compile code). A rate is *sustained*
   when the writer achieved at least 90% of it and the view caught up within 5 s after
   the writer stopped; the first rate not sustained is the last one tried.
2. **Backlog catch-up** (Spark only): one backlog, built before the systems run (the
   schema and the view's stream, then votes committed and shipped while the stream is
   stopped), is caught up by each system three times, in the process that ran its
   rates, in large micro-batches (``maxFilesPerTrigger``: 12M votes each). The first
   pass warms the JVM up for batches of that size; over the other two, votes per second
   of the median batch (Spark's own ``batchDuration``, the sink included) is the
   processing capacity that more cores (a cluster) extend; the ratio local[2] /
   local[1] is the ``local2_vs_local1_ratio`` target. Beside it: the same without the sink's Python
   time, the executors' run, CPU and GC seconds (Spark's status store), and each
   batch's Spark job and sink seconds. The stream was started with two shuffle
   partitions (Spark keeps a query's state partitioning in its checkpoint), so both
   systems run the same plan.

The Spark systems' JVM stops at the C1 compiler and splits files into 8 MB tasks (see
``SPARK_JVM`` for why); both are in the results' ``config``.

Targets (``bench/results/streaming.json``): ``spark_writes_per_s`` (highest sustained rate
on local[2], >= 50,000), ``spark_p50_lag_s`` (p50 write-to-visible at that rate, < 2 s),
``local2_vs_local1_ratio`` (>= 1.4). At the end each system's view is compared with the
vote counts in SQLite (the benchmark fails on a mismatch).

``python -m bench.streaming`` (full: rates 10k-100k/s, 15 s each, a 24M-vote backlog in
batches of 12M; run it
under ``flock /tmp/rivulet-bench.lock``), ``--quick`` (in-process and local[2], one rate, a
small backlog: about a minute, most of it the JVM starting).

``--cluster`` (issue 34): the same workload on a Spark standalone cluster of two workers
on this machine (rivulet.spark.cluster: a master and two worker JVMs, one core and one
executor each, started here and stopped at the end) beside local[2]. ``cluster[2]`` is an
application that takes both workers' executors, ``cluster[1]`` one capped to one core
(``spark.cores.max``: one executor, on one worker); rivulet reaches the executors as the
shipped zip. The data directories are local (every executor of one machine sees them:
the shared directory a cluster of several machines needs is not used). Targets
(``bench/results/streaming_cluster.json``): ``cluster_writes_per_s`` (highest sustained
rate on cluster[2], >= 100,000, goal 200,000), ``cluster_p50_lag_s`` (p50 at that rate,
< 1.0 s, goal 0.5) and ``cluster_2_vs_1_workers`` (catch-up capacity, cluster[2] /
cluster[1], >= 1.6, goal 1.8). ``--cluster --quick``: cluster[2] alone, one rate, no
backlog (about a minute: the cluster's and the application's JVMs starting, most of it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import rivulet
from bench.common import (
    RESULTS_DIR,
    Zipf,
    busy_warning,
    environment,
    fmt_num,
    logger,
    percentile,
    print_table,
    results_path,
    target,
    write_results,
)

SYSTEMS = ("inprocess", "local[1]", "local[2]")
VIEW = "SELECT aid, COUNT(*) AS votes FROM votes WHERE aid = ? GROUP BY aid"
COMMITS_PER_SECOND = 20
SUSTAIN_FRACTION = 0.9
DRAIN_LIMIT_S = 5.0
#: The backlog: ``backlog`` votes in commits of BACKLOG_COMMIT, shipped as files of
#: ``commits_per_file`` commits, read ``files_per_batch`` files per micro-batch (the
#: source's maxFilesPerTrigger). A batch has about half a second of fixed driver-side
#: cost here (listing, planning, the offset and commit logs, the sink) and the executors
#: need about 0.1-0.2 us of CPU per vote, so batches of millions of votes are what it takes
#: for the executors' part to be worth sharing. The catch-up is run three times and the
#: first pass not measured: a batch size new to the JVM makes its JIT compile and its heap
#: grow (with the first two of four 8M-vote batches left out, one run's local[2] still
#: took 2.3 s for its third batch and 1.4 s for its fourth). ``driver_memory`` 4g: with
#: 2g, full collections of the serial collector took up to a second of a batch.
#:
#: ``jvm_options``: the Spark systems' driver JVM (local mode: the executors too) stops at
#: the C1 compiler. Measured here: with both tiers, HotSpot's C2 compiler thread keeps
#: about one CPU-second busy per 12M-vote batch even after three such batches (thousands
#: of Spark methods warming up), which on two cores leaves local[2]'s second task thread
#: no core (1.16x local[1]); stopping at C1 the JIT is done within the first batch and
#: local[2] runs a warm 12M-vote batch in 1.55 s against 1.70 s with both tiers.
#: ``spark_conf`` splits a batch's files into 8 MB tasks, so every core gets several.
SPARK_JVM = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
SPARK_CONF = {"spark.sql.files.maxPartitionBytes": "8m"}
FULL = {"rates": [10_000, 25_000, 50_000, 100_000], "seconds": 15.0, "articles": 10_000,
        "backlog": 24_000_000, "commits_per_file": 4, "files_per_batch": 60,
        "jvm_options": SPARK_JVM, "spark_conf": SPARK_CONF, "driver_memory": "4g"}
QUICK = {"rates": [20_000], "seconds": 6.0, "articles": 2_000,
         "backlog": 400_000, "commits_per_file": 1, "files_per_batch": 4,
         "jvm_options": SPARK_JVM, "spark_conf": SPARK_CONF, "driver_memory": "4g"}
#: ``--cluster``: the rates go on to the 200k/s goal; quick has no backlog (no 2-vs-1).
CLUSTER_FULL = {**FULL, "rates": [*FULL["rates"], 200_000]}
CLUSTER_QUICK = {**QUICK, "backlog": 0}
CLUSTER_SYSTEMS = ("local[2]", "cluster[2]", "cluster[1]")
#: The bench's standalone cluster: two workers of one core; an executor of
#: ``CLUSTER_EXECUTOR_MEMORY`` on each (the driver keeps ``driver_memory``).
CLUSTER_WORKERS = 2
CLUSTER_WORKER_MEMORY = "3g"
CLUSTER_EXECUTOR_MEMORY = "2g"
#: Micro-batch trigger: a batch (about a second of fixed cost here) longer than it is
#: followed at once; it only sets how often an idle query looks for new log files.
TRIGGER = "0.1 seconds"
SHIP_INTERVAL = 0.1
BACKLOG_COMMIT = 50_000


# --------------------------------------------------------------------------- worker


def open_db(path: Path, system: str, config: dict[str, Any],
            max_files: int | None = None) -> rivulet.Database:
    """``max_files``: most log files (shipments) one micro-batch reads (None: all)."""
    if system == "inprocess":
        return rivulet.open(path)
    from rivulet.pipeline.streaming import StreamSettings

    db = rivulet.open(path, pipeline="spark", spark=spark_config(system, config),
                      streaming=StreamSettings(trigger=TRIGGER, ship_interval=SHIP_INTERVAL,
                                               max_files_per_trigger=max_files))
    if system.startswith("cluster["):
        await_executors(db.spark_session(), cores_of(system))
    return db


def cores_of(system: str) -> int:
    """``local[N]`` / ``cluster[N]``: N cores (a cluster's: N one-core executors)."""
    return int(system[system.index("[") + 1:-1])


def spark_config(system: str, config: dict[str, Any]) -> Any:
    """The session of a Spark system. Every system runs two shuffle partitions on a
    cluster too (the backlog's stream was started with two: Spark keeps a query's state
    partitioning in its checkpoint); the cluster's executors get the driver's JVM options
    (local[N] runs its tasks in the driver's JVM)."""
    from rivulet.spark.session import SparkConfig

    extra = {"spark.driver.extraJavaOptions": config["jvm_options"], **config["spark_conf"]}
    if system.startswith("cluster["):
        return SparkConfig(master=config["master_url"], shuffle_partitions=2,
                           driver_memory=config["driver_memory"], extra={
                               **extra, "spark.executor.extraJavaOptions": config["jvm_options"],
                               "spark.driver.host": "127.0.0.1",
                               "spark.driver.bindAddress": "127.0.0.1",
                               "spark.executor.memory": CLUSTER_EXECUTOR_MEMORY,
                               "spark.executor.cores": "1",
                               "spark.cores.max": str(cores_of(system))})
    return SparkConfig(master=system, shuffle_partitions=cores_of(system),
                       driver_memory=config["driver_memory"], extra=extra)


def await_executors(spark: Any, count: int, timeout: float = 180.0) -> None:
    """Until ``count`` executors have registered (the cluster starts them after the
    session), so that no measurement runs on fewer."""
    deadline = time.monotonic() + timeout
    while spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1 < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"fewer than {count} executors registered in {timeout:.0f} s")
        time.sleep(0.2)


def executor_totals(spark: Any) -> dict[str, float]:
    """Seconds the executors spent in tasks so far (run time, CPU time, JVM GC), from Spark's
    own status store: the work more cores (a cluster) share, apart from the driver's."""
    jvm = spark.sparkContext._jvm
    stages = spark.sparkContext._jsc.sc().statusStore().stageList(
        jvm.java.util.ArrayList(), False, False,
        spark.sparkContext._gateway.new_array(jvm.double, 0), jvm.java.util.ArrayList())
    run = cpu = gc = 0.0
    for i in range(stages.length()):
        stage = stages.apply(i)
        run += stage.executorRunTime() / 1000
        cpu += stage.executorCpuTime() / 1e9
        gc += stage.jvmGcTime() / 1000
    return {"run_s": run, "cpu_s": cpu, "gc_s": gc}


def visible_lsn(db: Any) -> int:
    """The LSN every view reflects."""
    streams = getattr(db, "pipeline", None)
    if streams is None:
        return db.applied_lsn
    return min((s.applied_lsn for s in list(streams.streams.values())), default=db.lsn)


class Writer:
    """Commits votes at ``rate`` rows/s for ``seconds``; records each LSN's commit time."""

    def __init__(self, db: Any, articles: int, seed: int) -> None:
        self.db = db
        self.zipf = Zipf(articles, 1.08, seed)
        self.rng = random.Random(seed)
        self.committed: dict[int, float] = {}
        self.rows = 0

    def run(self, rate: int, seconds: float) -> float:
        table = self.db.table("votes")
        per_commit = max(1, rate // COMMITS_PER_SECOND)
        start = time.perf_counter()
        n = 0
        while True:
            due = start + n / COMMITS_PER_SECOND
            now = time.perf_counter()
            if now - start >= seconds:
                break
            if due > now:
                time.sleep(due - now)
            aids = self.zipf.sample(per_commit)
            table.insert_many([(self.rng.randrange(1_000_000), a) for a in aids])
            self.committed[self.db.lsn] = time.perf_counter()
            self.rows += per_commit
            n += 1
        return time.perf_counter() - start


class Poller:
    """Watches the visible LSN; each LSN's write-to-visible latency."""

    def __init__(self, db: Any, committed: dict[int, float]) -> None:
        self.db, self.committed = db, committed
        self.lags: dict[int, float] = {}
        self.stop = threading.Event()
        self.seen = visible_lsn(db)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            now_lsn = visible_lsn(self.db)
            if now_lsn > self.seen:
                now = time.perf_counter()
                for lsn in range(self.seen + 1, now_lsn + 1):
                    at = self.committed.get(lsn)
                    if at is not None:
                        self.lags[lsn] = now - at
                self.seen = now_lsn
            time.sleep(0.005)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def batch_profile(db: Any, after_batch: int) -> dict[str, Any] | None:
    """Where the micro-batches after ``after_batch`` spent their time: Spark's phases
    (``durationMs``: listing the log, planning, the batch function, the checkpoint's
    offset and commit logs) and, within the batch function, its Spark job and the
    sink's Python."""
    pipeline = getattr(db, "pipeline", None)
    if pipeline is None:
        return None
    stream = next(iter(pipeline.streams.values()))
    progress = [p for p in stream.query.recentProgress if p["batchId"] > after_batch]
    own = [(total, job) for b, total, job in list(stream.recent) if b > after_batch]
    if not progress:
        return None

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 1) if values else 0.0

    return {"batches": len(progress),
            "batch_ms_median": percentile(sorted(p["batchDuration"] for p in progress), 50),
            "phase_ms_mean": {k: mean([p["durationMs"].get(k, 0) for p in progress])
                              for k in ("latestOffset", "getBatch", "walCommit", "queryPlanning",
                                        "addBatch", "commitOffsets")},
            "spark_job_ms_mean": mean([job * 1000 for _, job in own]),
            "sink_python_ms_mean": mean([(total - job) * 1000 for total, job in own])}


def rate_phase(db: Any, writer: Writer, rate: int, seconds: float,
               log: Callable[[str], None]) -> dict[str, Any]:
    first = db.lsn
    pipeline = getattr(db, "pipeline", None)
    first_batch = next(iter(pipeline.streams.values())).applied_batch if pipeline else 0
    poller = Poller(db, writer.committed)
    rows_before = writer.rows
    elapsed = writer.run(rate, seconds)
    achieved = (writer.rows - rows_before) / elapsed
    last = db.lsn
    stopped = time.perf_counter()
    deadline = stopped + 60
    while visible_lsn(db) < last and time.perf_counter() < deadline:
        time.sleep(0.01)
    drain = time.perf_counter() - stopped
    time.sleep(0.05)
    poller.close()
    lags = sorted(v for k, v in poller.lags.items() if first < k <= last)
    caught_up = visible_lsn(db) >= last
    out = {
        "offered_per_s": rate, "achieved_per_s": round(achieved), "commits": last - first,
        "drain_s": round(drain, 3), "caught_up": caught_up,
        "lag_p50_s": round(percentile(lags, 50), 4) if lags else None,
        "lag_p95_s": round(percentile(lags, 95), 4) if lags else None,
        "lag_max_s": round(lags[-1], 4) if lags else None,
        "sustained": bool(caught_up and achieved >= SUSTAIN_FRACTION * rate
                          and drain <= DRAIN_LIMIT_S),
        "batch_profile": batch_profile(db, first_batch),
    }
    log(f"  {rate:>7,}/s offered: {achieved:,.0f}/s written, p50 {out['lag_p50_s']} s, "
        f"p95 {out['lag_p95_s']} s, drain {drain:.2f} s, sustained {out['sustained']}")
    return out


def check_counts(db: Any, path: Path, articles: int) -> int:
    """Mismatches between the view and SQLite's own counts."""
    db.settle(timeout=600)
    lite = sqlite3.connect(path / "rivulet.db")
    truth = dict(lite.execute("SELECT aid, COUNT(*) FROM votes GROUP BY aid").fetchall())
    lite.close()
    view = db.view("VoteCount")
    bad = 0
    for aid in range(articles):
        rows = view.lookup(aid)
        got = rows[0][1] if rows else 0
        bad += got != truth.get(aid, 0)
    return bad


def create_schema(db: Any, articles: int) -> None:
    db.execute("CREATE TABLE articles (id INT PRIMARY KEY, title VARCHAR(64) NOT NULL)")
    db.execute("CREATE TABLE votes (uid INT NOT NULL, aid INT NOT NULL)")
    db.table("articles").insert_many([(i, f"article {i}") for i in range(articles)])
    db.execute(f"CREATE VIEW VoteCount AS {VIEW}")


def build_backlog(root: Path, config: dict[str, Any], log: Callable[[str], None]) -> None:
    """The backlog every Spark system catches up on, built once: the schema with the
    view's stream started (and stopped), then ``backlog`` votes committed with the stream
    stopped and shipped into the log. ``root/pristine`` keeps it; a catch-up runs on a
    copy at ``root/work``, the path the stream's checkpoint names."""
    from rivulet.pipeline.streaming.log import LogShipper

    work = root / "work"
    db = open_db(work, "local[2]", config)
    create_schema(db, config["articles"])
    db.close()
    started = time.perf_counter()
    db = rivulet.open(work)  # in process: the stream is not running
    zipf, rng = Zipf(config["articles"], 1.08, 7), random.Random(7)
    for _ in range(config["backlog"] // BACKLOG_COMMIT):
        db.table("votes").insert_many([(rng.randrange(1_000_000), a)
                                       for a in zipf.sample(BACKLOG_COMMIT)])
    schemas = dict(db.catalog.tables)
    db.close()
    shipper = LogShipper(work / "rivulet.db", work / "stream" / "log", lambda: schemas,
                         max_lsns=config["commits_per_file"])
    while shipper.ship_once():
        pass
    shipper.stop()
    shutil.copytree(work, root / "pristine")  # copy2: the log's modification times too
    log(f"backlog of {config['backlog']:,} votes written and shipped in "
        f"{time.perf_counter() - started:.0f} s")


def backlog_phase(system: str, config: dict[str, Any],
                  log: Callable[[str], None]) -> dict[str, Any]:
    """The same catch-up three times in this process (whose JVM has run the rates): the
    first pass warms the JVM up for batches of this size (its JIT compiles for them, its
    heap grows); the capacity is the median batch of the other two. A median, because
    one batch in a pass may take a full garbage collection (one measured 12M-vote batch
    of local[2] took 2.2 s with 1.1 s of executor GC, its neighbour 1.7 s)."""
    root = Path(config["backlog_dir"])
    passes = []
    for label in ("warm-up", "measured", "measured"):
        shutil.rmtree(root / "work", ignore_errors=True)
        shutil.copytree(root / "pristine", root / "work")
        passes.append(catch_up(root / "work", system, config))
        out = passes[-1]
        log(f"  {label}: {out['rows']:,} backlogged votes in {out['batches']} batches "
            f"{out['batch_durations_ms']} ms, sink {out['batch_job_and_sink_s']} s; "
            f"executors: {out['executor_run_s']} s run, {out['executor_cpu_s']} s CPU, "
            f"{out['executor_gc_s']} s GC")
    shutil.rmtree(root / "work", ignore_errors=True)
    measured = passes[1:]
    durations = sorted(d / 1000 for p in measured for d in p["batch_durations_ms"])
    without_sink = sorted(d / 1000 - sink for p in measured for d, (_, sink)
                          in zip(p["batch_durations_ms"], p["batch_job_and_sink_s"]))
    rows = measured[0]["rows_per_batch"]
    out = {"rows_per_batch": rows, "batches": len(durations),
           "median_batch_s": round(statistics.median(durations), 3),
           "rows_per_s": round(rows / statistics.median(durations)),
           "rows_per_s_without_sink": round(rows / statistics.median(without_sink)),
           "mismatches": sum(p["mismatches"] for p in passes),
           "passes": passes}
    for key in ("spark_batch_s", "sink_python_s", "executor_run_s", "executor_cpu_s",
                "executor_gc_s"):
        out[key] = round(sum(p[key] for p in measured), 3)
    out["executor_parallelism"] = round(out["executor_run_s"] / out["spark_batch_s"], 2)
    log(f"  capacity: median batch {out['median_batch_s']} s of {rows:,} votes -> "
        f"{fmt_num(out['rows_per_s'])} rows/s ({fmt_num(out['rows_per_s_without_sink'])} "
        f"without the sink's Python)")
    return out


def catch_up(path: Path, system: str, config: dict[str, Any]) -> dict[str, Any]:
    """Open the database at ``path`` and time its stream's catch-up on the log."""
    opened = time.perf_counter()
    db = open_db(path, system, config, max_files=config["files_per_batch"])
    stream = next(iter(db.pipeline.streams.values()))
    spark = db.spark_session()
    executors_before = executor_totals(spark)
    lsn_before = stream.applied_lsn
    db.settle(timeout=900)
    wall = time.perf_counter() - opened
    applied = {b for b, _, _ in stream.recent}
    deadline = time.monotonic() + 60  # progress is posted after the batch commits
    while (not stream.query.recentProgress or stream.query.recentProgress[-1]["batchId"]
           < max(applied)) and time.monotonic() < deadline:
        time.sleep(0.05)
    executors = executor_totals(spark)
    # Rows are the votes committed (each LSN is one commit of BACKLOG_COMMIT votes):
    # Spark's numInputRows is not reliable with foreachBatch. Time is Spark's own
    # duration of the batches (listing, planning, reading, aggregating, the sink).
    rows = (stream.applied_lsn - lsn_before) * BACKLOG_COMMIT
    progress = [p for p in stream.query.recentProgress if p["batchId"] in applied]
    spark_s = sum(p["batchDuration"] for p in progress) / 1000
    # The driver's Python in those batches: the sink's own work (the batch function's
    # time outside its one Spark job), which more cores do not share.
    sink_python_s = sum(total - job for _, total, job in stream.recent)
    executor_run = executors["run_s"] - executors_before["run_s"]
    out = {"rows": rows, "batches": len(applied), "rows_per_batch": round(rows / len(applied)),
           "spark_batch_s": round(spark_s, 3), "wall_s_with_jvm": round(wall, 2),
           "rows_per_s": round(rows / spark_s) if spark_s else None,
           "sink_python_s": round(sink_python_s, 3),
           "rows_per_s_without_sink": (round(rows / (spark_s - sink_python_s))
                                       if spark_s > sink_python_s else None),
           "executor_run_s": round(executor_run, 3),
           "executor_cpu_s": round(executors["cpu_s"] - executors_before["cpu_s"], 3),
           "executor_gc_s": round(executors["gc_s"] - executors_before["gc_s"], 3),
           "executor_parallelism": round(executor_run / spark_s, 2) if spark_s else None,
           "batch_durations_ms": [p["batchDuration"] for p in progress],
           "batch_job_and_sink_s": [(round(job, 3), round(total - job, 3))
                                    for _, total, job in stream.recent],
           "phase_ms": {k: sum(p["durationMs"].get(k, 0) for p in progress)
                        for k in ("latestOffset", "queryPlanning", "getBatch", "addBatch",
                                  "walCommit", "commitOffsets")},
           "mismatches": check_counts(db, path, config["articles"])}
    db.close()
    return out


def worker(system: str, config: dict[str, Any], out_file: Path) -> None:
    log = logger()
    if system == "backlog":
        build_backlog(Path(config["backlog_dir"]), config, log)
        out_file.write_text("{}")
        return
    label = system.replace("[", "").replace("]", "")  # no glob characters in the path
    path = Path(tempfile.mkdtemp(prefix=f"rivulet-stream-bench-{label}-"))
    try:
        started = time.perf_counter()
        db = open_db(path, system, config)
        create_schema(db, config["articles"])
        log(f"{system}: ready after {time.perf_counter() - started:.1f} s")
        writer = Writer(db, config["articles"], seed=1)
        phases: list[dict[str, Any]] = []
        if config["rates"]:
            log(f"{system}: warm-up (not measured)")  # a cold JVM's first batches compile code
            rate_phase(db, writer, config["rates"][0] // 2, config["seconds"] / 2, log)
        for rate in config["rates"]:
            phases.append(rate_phase(db, writer, rate, config["seconds"], log))
            if not phases[-1]["sustained"]:
                break  # higher rates only pile up backlog
        mismatches = check_counts(db, path, config["articles"])
        result: dict[str, Any] = {"system": system, "rates": phases, "mismatches": mismatches}
        if system != "inprocess":
            result["progress"] = db.stream_progress()["streams"]
        db.close()
        if system != "inprocess" and config.get("backlog_dir"):
            result["backlog"] = backlog_phase(system, config, log)
        out_file.write_text(json.dumps(result, default=str))
    finally:
        shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------- driver


@contextlib.contextmanager
def start_cluster(log: Callable[[str], None]) -> Iterator[Any]:
    """The standalone cluster of ``--cluster`` (logs in a temporary directory, kept when
    the run fails)."""
    from rivulet.spark.cluster import ClusterSpec, StandaloneCluster

    logs = Path(tempfile.mkdtemp(prefix="rivulet-stream-cluster-"))
    started = time.perf_counter()
    with StandaloneCluster(logs, ClusterSpec(workers=CLUSTER_WORKERS, cores=1,
                                             memory=CLUSTER_WORKER_MEMORY)) as cluster:
        log(f"standalone cluster {cluster.master_url} ({CLUSTER_WORKERS} workers) up in "
            f"{time.perf_counter() - started:.1f} s; logs in {logs}")
        yield cluster
    shutil.rmtree(logs, ignore_errors=True)


def run_system(system: str, config: dict[str, Any], log: Callable[[str], None]) -> dict[str, Any]:
    out = Path(tempfile.mkstemp(prefix="rivulet-stream-bench-", suffix=".json")[1])
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}
    log(f"running {system} in a subprocess" if system != "backlog"
        else "building the backlog in a subprocess")
    done = subprocess.run([sys.executable, "-m", "bench.streaming", "--worker", system,
                           "--config", json.dumps(config), "--out", str(out)],
                          env=env, cwd=Path(__file__).resolve().parent.parent)
    try:
        if done.returncode != 0:
            raise SystemExit(f"the {system} run failed (exit status {done.returncode})")
        return json.loads(out.read_text())
    finally:
        out.unlink(missing_ok=True)


def best_sustained(result: dict[str, Any]) -> dict[str, Any] | None:
    ok = [p for p in result["rates"] if p["sustained"]]
    return max(ok, key=lambda p: p["offered_per_s"]) if ok else None


def summarize_cluster(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``--cluster``'s targets (module doc)."""
    two, one = results.get("cluster[2]"), results.get("cluster[1]")
    best = best_sustained(two) if two else None
    cap2 = (two or {}).get("backlog", {}).get("rows_per_s")
    cap1 = (one or {}).get("backlog", {}).get("rows_per_s")
    return {
        "cluster_writes_per_s": target(best["achieved_per_s"] if best else 0, 100_000),
        "cluster_p50_lag_s": target(best["lag_p50_s"] if best else None, 1.0, at_least=False),
        "cluster_2_vs_1_workers": target(round(cap2 / cap1, 3) if cap1 and cap2 else None,
                                         1.6),
    }


def summarize(results: dict[str, dict[str, Any]], quick: bool) -> dict[str, Any]:
    rows = []
    for system, result in results.items():
        for p in result["rates"]:
            rows.append([system, f"{p['offered_per_s']:,}", f"{p['achieved_per_s']:,}",
                         fmt_num(p["lag_p50_s"]), fmt_num(p["lag_p95_s"]),
                         fmt_num(p["drain_s"]), "yes" if p["sustained"] else "no"])
    print_table("vote workload: write rate and write-to-visible latency",
                ["system", "offered/s", "written/s", "p50 s", "p95 s", "drain s", "sustained"],
                rows)
    local2, local1 = results.get("local[2]"), results.get("local[1]")
    best = best_sustained(local2) if local2 else None
    cap2 = (local2 or {}).get("backlog", {}).get("rows_per_s")
    cap1 = (local1 or {}).get("backlog", {}).get("rows_per_s")
    return {
        "spark_writes_per_s": target(best["achieved_per_s"] if best else 0, 50_000),
        "spark_p50_lag_s": target(best["lag_p50_s"] if best else None, 2.0, at_least=False),
        "local2_vs_local1_ratio": target(round(cap2 / cap1, 3) if cap1 and cap2 else None, 1.4),
    }


def secondary(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Figures beside the targets: the catch-up ratio without the sink's Python, each
    system's executor seconds, and p50 write-to-visible at 50,000 writes/s."""
    backlog = {s: r.get("backlog") or {} for s, r in results.items()}
    one, two = backlog.get("local[1]") or {}, backlog.get("local[2]") or {}
    out: dict[str, Any] = {}
    if one.get("rows_per_s_without_sink") and two.get("rows_per_s_without_sink"):
        out["local2_vs_local1_ratio_without_sink"] = round(
            two["rows_per_s_without_sink"] / one["rows_per_s_without_sink"], 3)
    for system, b in backlog.items():
        if b:
            out[f"{system}_backlog_executor"] = {k: b.get(k) for k in (
                "executor_run_s", "executor_cpu_s", "executor_parallelism", "spark_batch_s",
                "executor_gc_s", "sink_python_s", "batches", "rows_per_batch",
                "median_batch_s")}
    for system, result in results.items():
        at = [p for p in result["rates"] if p["offered_per_s"] == 50_000]
        if at:
            out[f"{system}_p50_at_50k_s"] = at[0]["lag_p50_s"]
    return out


def plot(results: dict[str, dict[str, Any]], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for system, result in results.items():
        offered = [p["offered_per_s"] for p in result["rates"]]
        left.plot(offered, [p["achieved_per_s"] for p in result["rates"]], marker="o", label=system)
        right.plot(offered, [p["lag_p50_s"] or float("nan") for p in result["rates"]],
                   marker="o", label=f"{system} p50")
        right.plot(offered, [p["lag_p95_s"] or float("nan") for p in result["rates"]],
                   marker="x", linestyle="--", label=f"{system} p95")
    left.set(title="writes/s achieved", xlabel="offered writes/s", ylabel="writes/s")
    right.set(title="write-to-visible latency", xlabel="offered writes/s", ylabel="seconds",
              yscale="log")
    left.legend()
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cluster", action="store_true",
                        help="on a 2-worker Spark standalone cluster started here, beside "
                             "local[2] (see the module doc)")
    parser.add_argument("--systems", default=None,
                        help="comma-separated subset of " + ",".join(SYSTEMS))
    parser.add_argument("--backlog", type=int, default=None, metavar="VOTES",
                        help="votes in the catch-up backlog (0: no catch-up; default: the "
                             "run's own, 400,000 quick, 24M full, none with --cluster --quick)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, json.loads(args.config), Path(args.out))
        return 0
    log = logger()
    load = busy_warning(log)
    if args.cluster:
        config = dict(CLUSTER_QUICK if args.quick else CLUSTER_FULL)
        default = ["cluster[2]"] if args.quick else list(CLUSTER_SYSTEMS)
    else:
        config = dict(QUICK if args.quick else FULL)
        default = ["inprocess", "local[2]"] if args.quick else list(SYSTEMS)
    systems = args.systems.split(",") if args.systems else default
    if args.backlog is not None:
        config["backlog"] = args.backlog
    backlog_dir = None
    with contextlib.ExitStack() as stack:
        if any(s.startswith("cluster[") for s in systems):
            cluster = stack.enter_context(start_cluster(log))
            config["master_url"] = cluster.master_url
        if config["backlog"] and any(s != "inprocess" for s in systems):
            backlog_dir = Path(tempfile.mkdtemp(prefix="rivulet-stream-backlog-"))
            stack.callback(shutil.rmtree, backlog_dir, ignore_errors=True)
            config["backlog_dir"] = str(backlog_dir)
            run_system("backlog", config, log)
        results = {s: run_system(s, config, log) for s in systems}
    config.pop("backlog_dir", None)
    config.pop("master_url", None)
    targets = summarize_cluster(results) if args.cluster else summarize(results, args.quick)
    mismatches = {s: r["mismatches"] + r.get("backlog", {}).get("mismatches", 0)
                  for s, r in results.items()}
    data = {"benchmark": "streaming", "quick": args.quick, "config": config,
            "targets": targets, "secondary": secondary(results), "systems": results,
            "mismatches": mismatches,
            "load_average_at_start": load, "environment": environment()}
    name = "streaming_cluster" if args.cluster else "streaming"
    if args.cluster:
        data["cluster"] = {"workers": CLUSTER_WORKERS, "cores_per_worker": 1,
                           "executor_memory": CLUSTER_EXECUTOR_MEMORY}
    path = write_results(name, data, args.quick)
    plot(results, results_path(name, args.quick, "png"))
    for name, t in targets.items():
        log(f"target {name}: {t['value']} (goal {t['direction']} {t['goal']}): "
            f"{'met' if t['met'] else 'NOT met'}")
    log(f"results in {path.relative_to(RESULTS_DIR.parent.parent)}")
    if any(mismatches.values()):
        log(f"MISMATCHES between the view and SQLite: {mismatches}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
