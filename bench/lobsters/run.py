"""The Lobsters comparison (the Noria paper's section 8.1, Figure 6): page latency against
offered load for MariaDB and rivulet, each with the baseline and the natural queries.

Data: :func:`bench.lobsters.data.generate` at production scale (9,200 users, 40,000 stories,
120,000 comments, ~640,000 votes; ``--scale 10`` for ten times that). Each system under
test is loaded with it, into a server of its own, before the sweeps begin:

* rivulet: the program and rows are bulk-loaded into a data directory in tmpfs
  (``insert_many``, embedded), then ``rivulet serve`` runs it as a subprocess and the
  clients speak the MySQL protocol to it; the reads' text becomes views on first use.
* MariaDB (Debian package, :class:`bench.mariadb.MariaDB`: loopback, data in tmpfs, the
  thread pool, no log flush at commit), a server of its own per configuration, with the
  secondary indexes the Lobsters application has (:data:`MARIADB_INDEXES`); the natural
  version's internal views are MariaDB views, computed at every read.

Load: several client processes (``--clients``), each with a Poisson arrival schedule at its
share of the offered page rate and a bounded number of connections (``--connections``, the
bound on outstanding pages per process: a partially open loop). A page's latency is its
*sojourn time*, from its scheduled start to its completion, so a system that cannot keep up
shows rising latency instead of hidden queueing; pages still waiting when a phase ends
(plus ``GRACE`` seconds) are counted at the time waited so far (``censored``). Each page
issues its statements one after the other (:mod:`bench.lobsters.pages`), values spliced
into the text by the driver as a Rails application's mysql2 does. The driver is mysqlclient
(libmariadb's C protocol code, like mysql2's), installed by a full run when missing
(``bench.mariadb.ensure_mysqlclient``); PyMySQL where it cannot be had (``--quick`` does not
install it). The clients share the machine with the server under test, and PyMySQL, pure
Python, takes nearly twice their CPU per page (1.8 against 1.0 ms measured): the load a
server sustains then says more about its clients than about it.

The offered load is swept upward (``--rates``) until a configuration collapses at two
loads in a row (p95 over ``COLLAPSE_MS`` or under 80% of the offered pages done). The
configurations' servers are up together, idle but for the one under load, and each load
is run on each of them in turn, in alternating order: the machine's speed drifts (the same
bulk load took 18 to 46 s within half an hour), and configurations compared at one load
then meet it in the same minute. MariaDB with the natural queries comes last, alone: its
statements run on for their 10 s limit after a phase ends.

Before the sweeps, each configuration is warmed up by a closed loop (every connection runs
pages back to back) of the same number of pages, ``--warm-pages`` (60,000), or for at
most ``--warm-seconds`` (200 s) if it is slower: the sweep measures each system in its
steady state, as a site that has been up for a while meets it, after the same history.
rivulet's partial views fill as pages name users and stories, and a process's cost per
page keeps falling for tens of thousands of pages: misses per page from 5.6 over its
first 5,000 pages to 1.2 over pages 25,000-35,000, its engine's CPU per page from 2.6 to
0.5 ms (embedded, measured). A warm-up in seconds would give a faster system more pages
(and a slower one fewer) than another; MariaDB's buffer pool holds the whole data set
from its bulk load on. A load is
*sustained* when at least 95% of its pages complete in the phase with p95 at most
``P95_GOAL_MS`` (100 ms) and no errors. Target: ``natural_vs_mariadb_baseline_ratio``, the
highest load rivulet sustains with the natural queries over MariaDB's with the baseline
queries (goal 2; the paper reports 5 on 16 cores).

Each load is run ``--phases-per-load`` times (2; quick 1) on every configuration, in
alternating order, and its point is the median of each figure over those phases
(:func:`median_point`), every phase kept in the JSON. Answers are checked
(:mod:`bench.lobsters.check`): each client records every ``--check-every``-th page of its
schedule (20; quick 5), the warm-up's too, with every page's writes, and after the phase
(outside its times) those pages' reads are compared with what a MariaDB database of the
configuration's own answers, loaded with the same data and fed the configuration's
writes, in a state the read could have seen (the rule is in that module's docstring). A
mismatch fails the run (exit status 1) and is kept in the JSON (``checks``: the page, the
statement and both answers). The JSON's ``environment`` records the commit, whether the
tree was clean, and the load average at the start and at the end (each phase has its own
at its start).

Run from the repository root: ``python -m bench.lobsters.run`` (full; serialize with
``flock /tmp/rivulet-bench.lock``), ``--quick`` (a tenth of the data, rivulet natural and
MariaDB baseline, three loads).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.common import (
    REPO_DIR,
    busy_warning,
    environment,
    fmt_num,
    load_average,
    logger,
    percentile,
    print_table,
    results_path,
    target,
    write_results,
)
from bench.lobsters.backends import SqlBackend, load_tables
from bench.lobsters.check import Oracle, PageRecord, Recorder, merge_reports
from bench.lobsters.data import Dataset, Sizes, generate
from bench.lobsters.queries import QuerySet, query_set
from bench.lobsters.workload import Workload
from bench.mariadb import MariaDB, ensure_mysqlclient, process_cpu
from bench.mysql_oracle import ORACLE_OPTIONS

PROFILE_ENV = "RIVULET_SERVER_PROFILE"  # rivulet.server.mysql.server: profile the event loop

NAME = "lobsters"
P95_GOAL_MS = 100.0
#: The rivulet server's tuning, as MariaDB's is tuned (bench/mariadb.py): join indexes
#: keep what reads filled (``join_caches="kept"``), since the site's many misses on popular
#: stories and users otherwise each go back to SQLite (about 20% more CPU per page).
RIVULET_OPTIONS = ("--join-caches", "kept")
COLLAPSE_MS = 1_000.0
GRACE = 2.0  # seconds after a phase in which pages already due may still start
#: MariaDB stops a statement after this many seconds (the natural front page would
#: otherwise keep a connection busy long after its phase).
STATEMENT_LIMIT_S = 10
FULL_RATES = (5, 10, 20, 35, 50, 70, 100, 140, 200, 240, 280, 340, 400, 480, 560, 680, 800,
              900, 1000, 1120, 1250)
QUICK_RATES = (5, 20, 60)
CONFIGURATIONS = ("mariadb-baseline", "rivulet-baseline", "rivulet-natural", "mariadb-natural")

#: Secondary indexes of the Lobsters application's schema (what its queries look rows up
#: by), for MariaDB; rivulet keeps the indexes its views need by itself.
MARIADB_INDEXES = (
    "CREATE INDEX users_username ON users (username)",
    "CREATE INDEX stories_short_id ON stories (short_id)",
    "CREATE INDEX stories_user ON stories (user_id)",
    "CREATE INDEX stories_created ON stories (created_at)",
    "CREATE INDEX comments_short_id ON comments (short_id)",
    "CREATE INDEX comments_story ON comments (story_id)",
    "CREATE INDEX comments_user ON comments (user_id)",
    "CREATE INDEX comments_parent ON comments (parent_comment_id)",
    # the recent-comments page (newest visible comments): without it MariaDB drove the join
    # from stories and sorted every comment (3.5 s a page at production scale)
    "CREATE INDEX comments_visible ON comments (is_deleted, is_moderated, id)",
    "CREATE INDEX votes_user_story ON votes (user_id, story_id)",
    "CREATE INDEX votes_user_comment ON votes (user_id, comment_id)",
    "CREATE INDEX votes_story ON votes (story_id)",
    "CREATE INDEX votes_comment ON votes (comment_id)",
    "CREATE INDEX taggings_story ON taggings (story_id)",
    "CREATE INDEX taggings_tag ON taggings (tag_id)",
    "CREATE INDEX hidden_user ON hidden_stories (user_id)",
    "CREATE INDEX saved_user_story ON saved_stories (user_id, story_id)",
    "CREATE INDEX ribbons_story ON read_ribbons (story_id)",
    "CREATE INDEX messages_recipient ON messages (recipient_user_id)",
    "CREATE INDEX invitations_user ON invitations (user_id)",
    "CREATE INDEX moderations_user ON moderations (user_id)",
    "CREATE INDEX tag_filters_user ON tag_filters (user_id)",
)
#: Only the baseline reads its hand-maintained hotness column.
MARIADB_BASELINE_INDEXES = ("CREATE INDEX stories_hotness ON stories (hotness)",)


@dataclass(frozen=True)
class Endpoint:
    """Where a configuration's clients connect, and what they send."""

    config: str
    engine: str  # "rivulet" or "mariadb"
    version: str  # "baseline" or "natural"
    port: int
    database: str
    user: str
    server_pid: int
    driver: str = "pymysql"  # or "mysqlclient" (module MySQLdb)


@dataclass(frozen=True)
class Phase:
    """One offered load for one configuration."""

    rate: float  # pages per second over all client processes; 0: a closed loop
    warmup: float
    seconds: float  # a closed loop's limit: it ends sooner when its pages are done
    clients: int
    connections: int  # per client process
    seed: int
    block: int  # first id block of this phase's workloads (one per client process)
    pages: int = 0  # a closed loop's pages, over all client processes
    check_every: int = 0  # record every Nth page of a client for the check (0: none)

    def share(self, index: int) -> int:
        """Client process ``index``'s share of a closed loop's pages."""
        return self.pages // self.clients + (index < self.pages % self.clients)


# ......................................................................... rivulet


def load_rivulet(directory: Path, queries: QuerySet, dataset: Dataset) -> None:
    """The program and every row, written embedded (the bulk load); closed after."""
    import rivulet

    db = rivulet.open(directory, spark_bootstrap_rows=None, prewarm=False)
    try:
        load_tables(db, queries, dataset)
        for statement in queries.view_statements():
            db.execute(statement)
        db.settle(timeout=None)
    finally:
        db.close()


class RivuletServer:
    """``rivulet serve`` on a free port, as a subprocess (its output in ``log``); with
    ``profile``, the server's event loop is profiled (cProfile) into that file."""

    def __init__(self, directory: Path, log: Path, profile: Path | None = None,
                 replicas: int = 0) -> None:
        self.log = log
        self.out = log.open("wb")
        env = {**os.environ, "PYTHONPATH": str(REPO_DIR), "SPARK_LOCAL_IP": "127.0.0.1"}
        if profile is not None:
            env[PROFILE_ENV] = str(profile)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rivulet", "serve", "--data-dir", str(directory),
             "--no-demo", "--no-http", "--mysql-port", "0", *RIVULET_OPTIONS,
             "--replicas", str(replicas)],
            stdout=self.out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
            cwd=REPO_DIR)
        self.port = self._wait_for_port()

    def _wait_for_port(self, timeout: float = 600) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(r"-P (\d+)", self.log.read_text(errors="replace"))
            if found:
                return int(found.group(1))
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"rivulet serve did not start: see {self.log}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, timeout: float = 1800) -> float:
        """Seconds until the server answers a read after a write of this connection.

        ``rivulet serve`` computes full state over a million base rows on Spark at open
        and accepts writes meanwhile, but a connection's reads wait for its own writes to
        be visible (read-your-writes), so a page after a write would wait for Spark: the
        sweep starts once that is over. The probe row is a moderation of no user, which
        no page reads."""
        import pymysql

        t0 = time.monotonic()
        conn = pymysql.connect(host="127.0.0.1", port=self.port, user="root",
                               database="rivulet", autocommit=True)
        with conn.cursor() as cur:
            cur.execute("INSERT INTO moderations (id, moderator_user_id, action, created_at) "
                        "VALUES (2000000000, 1, 'benchmark probe', 0)")
            while True:
                try:
                    cur.execute("SELECT id, username FROM users WHERE id = 1")
                    break
                except pymysql.err.MySQLError:
                    if time.monotonic() - t0 > timeout:
                        raise
        conn.close()
        return time.monotonic() - t0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(300)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()


# ......................................................................... MariaDB


def load_mariadb(server: MariaDB, queries: QuerySet, dataset: Dataset,
                 database: str | None = None) -> str:
    """One database (``lobsters_<version>`` unless named) with the version's program, rows
    and indexes; its name."""
    database = database or f"lobsters_{queries.version}"
    conn = server.connect(None)
    conn.autocommit(False)
    conn.cursor().execute(f"CREATE DATABASE {database}")
    conn.select_db(database)
    backend = SqlBackend(queries, conn, name=database, mark="%s")
    backend.create_program(dataset)
    cur = conn.cursor()
    indexes = MARIADB_INDEXES + (MARIADB_BASELINE_INDEXES if queries.version == "baseline"
                                 else ())
    for statement in indexes:
        cur.execute(statement)
    cur.execute("ANALYZE TABLE " + ", ".join(dataset.tables))
    cur.fetchall()
    conn.commit()
    conn.close()
    return database


# ......................................................................... clients


class WireBackend(SqlBackend):
    """A page's statements over one connection (:func:`connect`) in autocommit mode.

    A read ribbon that another client process created between this page's UPDATE and its
    INSERT is a duplicate key: the application's upsert would have updated it, so the
    page goes on (the row is there either way). Each statement's time is added up by
    name in ``timings`` (statements, seconds): where a page's time goes, on any system.

    Over mysqlclient, a statement is what its cursor would send (each value escaped by
    the connection, spliced into the text) but run on the connection itself: the
    cursor's Python bookkeeping cost the clients, which share the machine with the
    server under test, about as much CPU as the protocol did."""

    def __init__(self, queries: QuerySet, connection: Any, *, name: str,
                 timings: dict[str, list[float]], driver: str = "pymysql") -> None:
        super().__init__(queries, connection, name=name, mark="%s")
        self.timings = timings
        self.integrity_error = driver_module(driver).IntegrityError
        self._raw = driver == "mysqlclient"

    def _timed(self, name: str, started: float) -> None:
        entry = self.timings.setdefault(name, [0, 0.0])
        entry[0] += 1
        entry[1] += time.perf_counter() - started

    def _run(self, text: str, params: Sequence[Any]) -> tuple[list[tuple], int]:
        """Rows and the affected-row count of one statement."""
        conn = self.conn
        if not self._raw:
            cur = conn.cursor()
            cur.execute(text, tuple(params))
            return [tuple(r) for r in cur.fetchall()], cur.rowcount
        query = text.encode(conn.encoding)
        if params:
            query %= tuple(map(conn.literal, params))
        conn.query(query)
        result = conn.store_result()
        return (list(result.fetch_row(0)) if result is not None else []), conn.affected_rows()

    def read(self, name: str, params: Sequence[Any] = ()) -> list[tuple]:
        started = time.perf_counter()
        try:
            return self._run(self.read_text(name, params), params)[0]
        finally:
            self._timed(name, started)

    def write(self, name: str, params: Sequence[Any]) -> int:
        started = time.perf_counter()
        try:
            return self._run(self._writes[name], params)[1]
        except self.integrity_error:
            if name != "insert_ribbon":
                raise
            return 0
        finally:
            self._timed(name, started)


def driver_module(driver: str) -> Any:
    """The DB-API module of a client driver name (see the module docstring)."""
    import importlib

    return importlib.import_module("MySQLdb" if driver == "mysqlclient" else "pymysql")


def connect(endpoint: Endpoint) -> Any:
    conn = driver_module(endpoint.driver).connect(
        host="127.0.0.1", port=endpoint.port, user=endpoint.user, database=endpoint.database,
        autocommit=True, charset="utf8mb4")
    if endpoint.engine == "mariadb":
        conn.cursor().execute(f"SET SESSION max_statement_time = {STATEMENT_LIMIT_S}")
    return conn


def arrivals(rate: float, until: float, seed: int) -> list[float]:
    """Poisson arrival offsets (seconds from the phase's start) up to ``until``."""
    rnd = random.Random(seed)
    out, t = [], 0.0
    while rate > 0:
        t += rnd.expovariate(rate)
        if t >= until:
            return out
        out.append(t)
    return out


def client_process(endpoint: Endpoint, phase: Phase, index: int, dataset: Dataset,
                   start_at: float, out: Any) -> None:
    """One load-generator process: its share of the arrivals, ``phase.connections``
    workers (threads, one connection each) that run each page at its scheduled time or
    as soon as one of them is free; at rate 0, each worker runs pages back to back until
    the process's share of ``phase.pages`` is done or the phase's time is up."""
    seed = phase.seed * 100 + index
    workload = Workload(dataset, seed=seed, id_block=phase.block + index)
    span = phase.warmup + phase.seconds
    closed = phase.rate <= 0
    schedule = ([0.0] * phase.share(index) if closed
                else arrivals(phase.rate / phase.clients, span, seed))
    requests = workload.take(len(schedule))
    queries = query_set(endpoint.version)
    stop_at = start_at + span + GRACE
    taken = itertools.count()
    results: list[tuple[int, float, str, bool]] = []  # (arrival, latency, page, ok)
    errors: list[str] = []
    lock = threading.Lock()
    timings: dict[str, list[float]] = {}  # all workers' (their += races are harmless here)
    recorded: list[PageRecord] = []  # for the check, after the phase (bench.lobsters.check)

    def worker() -> None:
        try:
            backend = WireBackend(queries, connect(endpoint), name=endpoint.config,
                                  timings=timings, driver=endpoint.driver)
        except Exception as exc:  # noqa: BLE001 - reported, the phase fails
            errors.append(f"connect: {exc!r}")
            return
        recorder = Recorder(backend, recorded, every=phase.check_every, client=index)
        clock = time.monotonic
        while True:
            i = next(taken)
            if i >= len(schedule):
                break
            due = start_at + schedule[i]
            now = clock()
            if now > stop_at or (closed and now > start_at + span):
                break
            if closed:  # back to back, from the phase's start (not before: the requests
                due = max(now, start_at)  # made for it would run out before its window)
            if due > now:
                time.sleep(due - now)
            ok = True
            try:
                recorder.run(i, requests[i])
            except Exception as exc:  # noqa: BLE001 - counted, the load goes on
                ok = False
                with lock:
                    if len(errors) < 20:
                        errors.append(f"{requests[i].page}: {exc!r}"[:300])
            with lock:
                results.append((i, clock() - due, requests[i].page, ok))
                if closed:
                    schedule[i] = due - start_at
        backend.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(phase.connections)]
    for t in threads:
        t.start()
    time.sleep(max(0.0, start_at + phase.warmup - time.monotonic()))
    cpu0 = time.process_time()
    if closed:  # over when its pages are done (or its time is up)
        for t in threads:
            t.join()
    else:
        time.sleep(max(0.0, start_at + span - time.monotonic()))
    cpu1 = time.process_time()
    for t in threads:
        t.join()
    elapsed = min(span, time.monotonic() - start_at)
    started = {r[0] for r in results}
    out.put({"results": [(schedule[i], lat, page, ok) for i, lat, page, ok in results],
             "missed": [] if closed else [s for i, s in enumerate(schedule)
                                          if i not in started],
             "stopped": stop_at - start_at, "elapsed": elapsed, "timings": timings,
             "cpu_seconds": cpu1 - cpu0, "errors": errors, "pages": recorded})


def server_processes(pid: int) -> list[int]:
    """A server process and its children (``rivulet serve --replicas``' replicas)."""
    pids = [pid]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                pids.append(int(stat.parent.name))
        except (OSError, ValueError):  # the process ended
            continue
    return pids


def server_cpu(pids: list[int]) -> float:
    """CPU seconds the server's processes have used so far."""
    total = 0.0
    for pid in pids:
        try:
            total += process_cpu(pid)
        except OSError:
            continue
    return total


def thread_cpu(pids: list[int]) -> tuple[float, float]:
    """CPU seconds of the server processes' main threads (rivulet serve's event loops:
    statements parsed, reads answered, writes committed) and of their other threads
    together (the dataflow's propagation, eviction, Spark's gateway)."""
    main = other = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        tasks = Path(f"/proc/{pid}/task")
        for task in tasks.iterdir() if tasks.exists() else ():
            try:
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # the thread ended
                continue
            seconds = (int(fields[11]) + int(fields[12])) / tick
            if task.name == str(pid):
                main += seconds
            else:
                other += seconds
    return main, other


def run_phase(endpoint: Endpoint, phase: Phase, dataset: Dataset,
              oracle: Oracle | None = None) -> dict[str, Any]:
    """Clients (forked: they share the generated data set) at ``phase.rate``; the
    phase's sojourn times, throughput and CPU use, and, with an ``oracle``, the check of
    the pages the clients recorded (after the phase: not in its times)."""
    load = load_average()
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    start_at = time.monotonic() + 2.0  # connections opened, requests generated (~0.1 s)
    procs = [ctx.Process(target=client_process,
                         args=(endpoint, phase, k, dataset, start_at, out), daemon=True)
             for k in range(phase.clients)]
    for p in procs:
        p.start()
    time.sleep(max(0.0, start_at + phase.warmup - time.monotonic()))
    pids = server_processes(endpoint.server_pid)
    each0, threads0, wall0 = [server_cpu([p]) for p in pids], thread_cpu(pids), time.monotonic()
    timeout = phase.seconds + STATEMENT_LIMIT_S * 3 + 600
    if phase.rate > 0:
        time.sleep(max(0.0, start_at + phase.warmup + phase.seconds - time.monotonic()))
    else:  # a closed loop is over when its pages are done
        parts = [out.get(timeout=timeout) for _ in procs]
    each1, threads1, wall1 = [server_cpu([p]) for p in pids], thread_cpu(pids), time.monotonic()
    cpu0, cpu1 = sum(each0), sum(each1)
    if phase.rate > 0:
        parts = [out.get(timeout=timeout) for _ in procs]
    for p in procs:
        p.join(60)
    wall = wall1 - wall0
    point = summarize_phase(phase, parts, (cpu1 - cpu0) / wall)
    point["server_main_thread_cores"] = (threads1[0] - threads0[0]) / wall
    point["server_other_threads_cores"] = (threads1[1] - threads0[1]) / wall
    if len(pids) > 1:  # the primary first, then its replicas
        point["server_process_cores"] = [(b - a) / wall for a, b in zip(each0, each1)]
    point["load_average"] = load
    if oracle is not None:
        point["check"] = oracle.check([r for part in parts for r in part["pages"]])
    return point


def summarize_phase(phase: Phase, parts: list[dict[str, Any]],
                    server_cores: float) -> dict[str, Any]:
    lo, hi = phase.warmup, phase.warmup + phase.seconds
    # a closed loop's measured time ends with its last client's pages
    seconds = phase.seconds if phase.rate > 0 else max(
        (p.get("elapsed", hi) for p in parts), default=hi) - lo
    latencies: list[float] = []
    by_page: dict[str, list[float]] = {}
    completed = failed = censored = 0
    for part in parts:
        for due, latency, page, ok in part["results"]:
            if not lo <= due < hi:
                continue
            if not ok:
                failed += 1
                continue
            completed += 1
            latencies.append(latency)
            by_page.setdefault(page, []).append(latency)
        for due in part["missed"]:
            if lo <= due < hi:
                censored += 1
                latencies.append(part["stopped"] - due)  # waited at least this long
    latencies.sort()
    offered = len(latencies) + failed
    clients_cpu = sum(p["cpu_seconds"] for p in parts)
    statements: dict[str, list[float]] = {}
    for part in parts:
        for name, (n, total) in part["timings"].items():
            entry = statements.setdefault(name, [0, 0.0])
            entry[0] += n
            entry[1] += total

    def ms(values: list[float], pct: float) -> float | None:
        return percentile(values, pct) * 1000 if values else None

    point = {
        "offered_rate": phase.rate,
        "scheduled": offered,
        "completed": completed,
        "failed": failed,
        "censored": censored,
        "seconds": seconds,
        "achieved_rate": completed / seconds,
        "p50_ms": ms(latencies, 50),
        "p95_ms": ms(latencies, 95),
        "p99_ms": ms(latencies, 99),
        "page_p50_ms": {k: ms(sorted(v), 50) for k, v in sorted(by_page.items())},
        "page_p95_ms": {k: ms(sorted(v), 95) for k, v in sorted(by_page.items())},
        "server_cores": server_cores,
        "clients_cores": clients_cpu / seconds,
        # per statement over the whole phase (warm-up included): count, mean ms, share
        "statements": {name: {"count": n, "mean_ms": 1000 * total / n,
                              "share": total / max(1e-9, sum(t for _, t in statements.values()))}
                       for name, (n, total) in sorted(statements.items(),
                                                      key=lambda kv: -kv[1][1])},
        "errors": [e for p in parts for e in p["errors"]][:5],
    }
    point["sustained"] = bool(
        offered and completed >= 0.95 * offered and not failed
        and point["p95_ms"] is not None and point["p95_ms"] <= P95_GOAL_MS)
    point["collapsed"] = bool(
        not offered or completed < 0.8 * offered
        or (point["p95_ms"] or 0) > COLLAPSE_MS)
    return point


def sweep(endpoints: dict[str, Endpoint], blocks: dict[str, int], dataset: Dataset,
          args: argparse.Namespace, log: Any,
          oracles: dict[str, Oracle] | None = None) -> dict[str, list[dict[str, Any]]]:
    """The offered loads in order, each run ``args.phases_per_load`` times on every
    configuration in turn (in reverse order every other round), until two loads in a row
    collapse a configuration (one could be a hiccup of a shared machine): configurations
    compared at one load meet the machine in the same minute, where sweeping one after
    the other would give each its own (this machine's speed drifts by 2x within half an
    hour). A load's point is the median of its phases (:func:`median_point`); each phase
    is checked against its configuration's oracle, if any, after it has run."""
    points: dict[str, list[dict[str, Any]]] = {config: [] for config in endpoints}
    order = list(endpoints)
    repeats = max(1, getattr(args, "phases_per_load", 1))
    check_every = getattr(args, "check_every", 0) if oracles else 0
    rounds = itertools.count()
    for n, rate in enumerate(args.rates):
        phases: dict[str, list[dict[str, Any]]] = {}
        for repeat in range(repeats):
            k = next(rounds)
            for config in order if k % 2 == 0 else order[::-1]:
                done = points[config]
                if len(done) >= 2 and done[-1]["collapsed"] and done[-2]["collapsed"]:
                    continue
                block = blocks[config] + args.clients * (1 + n * repeats + repeat)
                phase = Phase(rate=rate, warmup=args.warmup, seconds=args.seconds,
                              clients=args.clients, connections=args.connections,
                              seed=args.seed + 1000 * block + n, block=block,
                              check_every=check_every)
                point = run_phase(endpoints[config], phase, dataset,
                                  (oracles or {}).get(config))
                phases.setdefault(config, []).append(point)
                log(f"[{config}] offered {rate:g}/s ({repeat + 1}/{repeats}): done "
                    f"{point['achieved_rate']:.1f}/s, p50 {_ms(point['p50_ms'])}, p95 "
                    f"{_ms(point['p95_ms'])} ms, {point['censored']} unstarted, "
                    f"{point['failed']} failed; server {point['server_cores']:.2f} cores, "
                    f"clients {point['clients_cores']:.2f}"
                    + (f"; errors {point['errors'][:2]}" if point["errors"] else "")
                    + (f"; {_check_text(point['check'])}" if "check" in point else ""))
        for config, runs in phases.items():
            points[config].append(median_point(runs))
    return points


#: A phase's figures of which a point holds the median over its phases.
MEDIAN_FIGURES = ("scheduled", "completed", "failed", "censored", "seconds", "achieved_rate",
                  "p50_ms", "p95_ms", "p99_ms", "server_cores", "clients_cores",
                  "server_main_thread_cores", "server_other_threads_cores")


def median_point(phases: list[dict[str, Any]]) -> dict[str, Any]:
    """One offered load's point: the median over its phases of each figure
    (:data:`MEDIAN_FIGURES`; with two phases, their mean), every phase kept whole under
    ``phases``. Sustained when the median figures meet the bar (at least 95% of the
    offered pages done, p95 at most ``P95_GOAL_MS``) and no phase failed a page; collapsed
    when the median figures collapse. A check's counts are added up over the phases."""
    point: dict[str, Any] = {"offered_rate": phases[0]["offered_rate"]}
    for key in MEDIAN_FIGURES:
        values = [p[key] for p in phases if p.get(key) is not None]
        point[key] = statistics.median(values) if values else None
    point["errors"] = [e for p in phases for e in p.get("errors", [])][:5]
    failed = sum(p.get("failed", 0) for p in phases)
    offered, done, p95 = point["scheduled"] or 0, point["completed"] or 0, point["p95_ms"]
    point["sustained"] = bool(offered and done >= 0.95 * offered and not failed
                              and p95 is not None and p95 <= P95_GOAL_MS)
    point["collapsed"] = bool(not offered or done < 0.8 * offered or (p95 or 0) > COLLAPSE_MS)
    if any("check" in p for p in phases):
        point["check"] = merge_reports([p["check"] for p in phases if "check" in p])
    point["phases"] = phases
    return point


def _check_text(report: dict[str, Any]) -> str:
    text = (f"checked {report['statements']} statements of {report['sampled_pages']} pages: "
            f"{report['mismatch_count']} mismatched ({report['seconds']:.1f} s)")
    if report.get("oracle_diverged"):
        text += f", {report['unchecked']} unchecked ({report['oracle_diverged']})"
    return text


def warm(endpoint: Endpoint, dataset: Dataset, args: argparse.Namespace, block: int,
         log: Any, oracle: Oracle | None = None) -> dict[str, Any]:
    """A phase before the sweep (not part of it): views made and filled for the popular
    keys, buffer pools read, connections' first statements parsed. A closed loop (every
    connection runs pages back to back) rather than a rate: a cold system is slow, and
    an open loop would leave the sweep's first load a backlog. Its length is in pages,
    the same for every configuration (see the module's docstring). Its pages are checked
    like a phase's (the oracle must have its writes in any case)."""
    phase = Phase(rate=0.0, warmup=0.0, seconds=args.warm_seconds,
                  clients=args.clients, connections=args.connections, seed=args.seed + 999,
                  block=block, pages=args.warm_pages,
                  check_every=args.check_every if oracle is not None else 0)
    point = run_phase(endpoint, phase, dataset, oracle)
    log(f"[{endpoint.config}] warm-up, closed loop: {point['completed']:,} pages in "
        f"{point['seconds']:.0f} s ({point['achieved_rate']:.1f} pages/s), "
        f"p50 {_ms(point['p50_ms'])}, p95 {_ms(point['p95_ms'])} ms"
        + (f"; {_check_text(point['check'])}" if "check" in point else ""))
    return point


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


# ......................................................................... results


def best_sustained(points: list[dict[str, Any]]) -> float:
    """The highest offered load sustained (0 if none was)."""
    return max((p["offered_rate"] for p in points if p["sustained"]), default=0.0)


def secondary_figures(configs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Figures beside the target for a machine whose tail latency is set by other work:
    the peak pages/s each configuration completed, and the highest load it kept up with
    (95% of the pages done) at a p95 of at most 500 ms; and rivulet's over MariaDB's."""
    peak = {n: max((p["achieved_rate"] for p in c["points"]), default=0.0)
            for n, c in configs.items()}
    kept = {n: max((p["offered_rate"] for p in c["points"]
                    if p["completed"] >= 0.95 * max(1, p["scheduled"]) and not p["failed"]
                    and p["p95_ms"] is not None and p["p95_ms"] <= 500), default=0.0)
            for n, c in configs.items()}

    def over(values: dict[str, float], a: str, b: str) -> float | None:
        return values[a] / values[b] if values.get(a) and values.get(b) else None

    return {
        "peak_pages_per_s": peak,
        "best_load_at_p95_500ms": kept,
        "ratios": {f"{a}_vs_{b}": {"peak": over(peak, a, b), "p95_500ms": over(kept, a, b)}
                   for a, b in (("rivulet-natural", "mariadb-baseline"),
                                ("rivulet-baseline", "mariadb-baseline"),
                                ("rivulet-natural", "mariadb-natural"))},
    }


def summarize(configs: dict[str, dict[str, Any]], args: argparse.Namespace,
              dataset: Dataset, load_at_start: list[float] | None = None) -> dict[str, Any]:
    """The results file's content; its ``environment`` names the commit and whether the
    tree was clean (:func:`bench.common.environment`) and the load average at the start
    of the run and at its end (now)."""
    best = {name: best_sustained(c["points"]) for name, c in configs.items()}
    checks = {name: c["check"] for name, c in configs.items() if "check" in c}

    def ratio(a: str, b: str) -> float | None:
        if a not in best or b not in best or not best[b]:
            return None
        return best[a] / best[b]

    return {
        "benchmark": NAME,
        "quick": args.quick,
        "params": {
            "scale": args.scale, "sizes": asdict(dataset.sizes),
            "rows": {t: len(r) for t, r in dataset.tables.items()},
            "rates": list(args.rates), "warmup": args.warmup, "seconds": args.seconds,
            "clients": args.clients, "connections_per_client": args.connections,
            "client_driver": args.driver,
            "warm_pages": args.warm_pages, "warm_seconds": args.warm_seconds,
            "warm_up": "closed loop of warm_pages pages, or warm_seconds if slower",
            "p95_goal_ms": P95_GOAL_MS, "collapse_ms": COLLAPSE_MS,
            "sustained": "at least 95% of the offered pages done in the phase, p95 sojourn "
                         f"<= {P95_GOAL_MS:g} ms, no failed page",
            "mariadb_statement_limit_s": STATEMENT_LIMIT_S,
            "rivulet_options": [*RIVULET_OPTIONS, "--replicas", str(args.replicas)],
            "phases_per_load": args.phases_per_load,
            "point": "each figure the median of the load's phases (every phase kept)",
            "check_every": args.check_every,
        },
        "targets": {
            "natural_vs_mariadb_baseline_ratio": target(
                ratio("rivulet-natural", "mariadb-baseline"), 2.0),
            "natural_p95_ms_at_best_load": target(
                _p95_at(configs.get("rivulet-natural"), best.get("rivulet-natural")),
                P95_GOAL_MS, at_least=False),
        },
        "ratios": {
            "rivulet_natural_vs_mariadb_baseline": ratio("rivulet-natural", "mariadb-baseline"),
            "rivulet_baseline_vs_mariadb_baseline": ratio("rivulet-baseline",
                                                          "mariadb-baseline"),
            "rivulet_natural_vs_mariadb_natural": ratio("rivulet-natural", "mariadb-natural"),
            "rivulet_natural_vs_rivulet_baseline": ratio("rivulet-natural", "rivulet-baseline"),
        },
        "best_sustained_pages_per_s": best,
        "answers": {
            "rule": "a sample of every phase's pages (every check_every-th page of each "
                    "client, the warm-up's too) checked against MariaDB's answers over the "
                    "same data and writes (bench/lobsters/check.py); a mismatch fails the run",
            "statements": sum(c["statements"] for c in checks.values()),
            "mismatches": sum(c["mismatch_count"] for c in checks.values()),
            "unchecked": sum(c["unchecked"] for c in checks.values()),
        },
        "checks": checks,
        "secondary": secondary_figures(configs),
        "configurations": configs,
        "environment": {**environment(), "load_average_at_start": load_at_start},
    }


def profile_summary(path: Path, top: int = 40) -> dict[str, Any]:
    """The event loop's profile: total time, and the functions that took most of it by
    their own time and by the time of what they called."""
    import pstats

    stats = pstats.Stats(str(path))
    rows = stats.stats  # type: ignore[attr-defined]

    def name(func: tuple[str, int, str]) -> str:
        file, line, fn = func
        short = file.split("site-packages/")[-1].split("/work/main/")[-1]
        return f"{short}:{line}({fn})"

    def ranked(index: int) -> list[dict[str, Any]]:
        ordered = sorted(rows.items(), key=lambda kv: kv[1][index], reverse=True)[:top]
        return [{"function": name(f), "calls": v[1], "own_s": round(v[2], 3),
                 "cumulative_s": round(v[3], 3)} for f, v in ordered]

    return {"file": str(path), "total_s": round(stats.total_tt, 3),  # type: ignore[attr-defined]
            "by_own_time": ranked(2), "by_cumulative_time": ranked(3)}


def profile_text(summary: dict[str, Any], top: int = 25) -> str:
    lines = [f"{summary['total_s']} s in the event loop; by own time:"]
    lines += [f"  {r['own_s']:8.3f} {r['cumulative_s']:8.3f} {r['calls']:>9} {r['function']}"
              for r in summary["by_own_time"][:top]]
    lines.append("by cumulative time:")
    lines += [f"  {r['own_s']:8.3f} {r['cumulative_s']:8.3f} {r['calls']:>9} {r['function']}"
              for r in summary["by_cumulative_time"][:top]]
    return "\n".join(lines)


def _p95_at(config: dict[str, Any] | None, rate: float | None) -> float | None:
    if not config or not rate:
        return None
    return next(p["p95_ms"] for p in config["points"] if p["offered_rate"] == rate)


def report(results: dict[str, Any]) -> None:
    rows = []
    for name, c in results["configurations"].items():
        for p in c["points"]:
            rows.append([name, f"{p['offered_rate']:g}", f"{p['achieved_rate']:.1f}",
                         _ms(p["p50_ms"]), _ms(p["p95_ms"]), str(p["censored"]),
                         str(p["failed"]), f"{p['server_cores']:.2f}",
                         f"{p['clients_cores']:.2f}", "yes" if p["sustained"] else ""])
    print_table("Lobsters: page sojourn time against offered load",
                ["configuration", "offered/s", "done/s", "p50 ms", "p95 ms", "unstarted",
                 "failed", "server cores", "client cores", "sustained"], rows)
    rows = [[name, str(c["phases"]), str(c["sampled_pages"]), str(c["statements"]),
             str(c["matched_at_start"]), str(c["matched_later"]), str(c["mismatch_count"]),
             str(c["unchecked"])] for name, c in results.get("checks", {}).items()]
    if rows:
        print_table("answers checked against MariaDB (bench/lobsters/check.py)",
                    ["configuration", "phases", "pages", "statements", "at start", "later",
                     "mismatched", "unchecked"], rows)
    rows = [[k, fmt_num(v["value"]), f"{'<=' if v['direction'] == 'at most' else '>='} "
             f"{v['goal']}", "met" if v["met"] else "MISSED"]
            for k, v in results["targets"].items()]
    print_table("targets", ["target", "value", "goal", ""], rows)


def plot(results: dict[str, Any], path: Path) -> Path | None:
    """p50 and p95 sojourn time against offered load, one line per configuration (the
    paper's Figure 6)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, key, title in ((axes[0], "p50_ms", "median"), (axes[1], "p95_ms", "95th percentile")):
        for name, c in results["configurations"].items():
            pts = [(p["offered_rate"], p[key]) for p in c["points"] if p[key] is not None]
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=name)
        ax.axhline(P95_GOAL_MS, color="gray", linestyle="--", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("offered load (pages/s)")
        ax.set_title(f"{title} page latency (sojourn)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ms")
    axes[1].legend()
    fig.suptitle(f"Lobsters, scale {results['params']['scale']:g} "
                 f"({results['params']['sizes']['stories']:,} stories)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ......................................................................... main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.lobsters.run", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small run (about a minute)")
    p.add_argument("--scale", type=float, help="data size in production Lobsters (default 1)")
    p.add_argument("--configs", default=None,
                   help=f"comma-separated subset of {','.join(CONFIGURATIONS)}")
    p.add_argument("--rates", default=None, help="comma-separated offered loads (pages/s)")
    p.add_argument("--seconds", type=float, help="measured seconds per load")
    p.add_argument("--warmup", type=float, help="unmeasured seconds before each load")
    p.add_argument("--warm-pages", type=int,
                   help="pages of the warm-up before a sweep (default 60,000; quick 1,500)")
    p.add_argument("--warm-seconds", type=float,
                   help="the warm-up's time limit (default 200 s; quick 6 s)")
    p.add_argument("--clients", type=int, default=3, help="client processes")
    p.add_argument("--replicas", type=int, default=1,
                   help="replica processes of each rivulet server (rivulet serve --replicas)")
    p.add_argument("--connections", type=int, default=8,
                   help="connections (outstanding pages) per client process")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--phases-per-load", type=int,
                   help="phases run at each load, the point their median (default 2; quick 1)")
    p.add_argument("--check-every", type=int,
                   help="check every Nth page of each client against MariaDB (default 20; "
                        "quick 5; 0: no check, and no oracle server)")
    p.add_argument("--driver", choices=("mysqlclient", "pymysql"),
                   help="the clients' MySQL driver (default: mysqlclient, installed when "
                        "missing; with --quick, mysqlclient if installed, else PyMySQL)")
    p.add_argument("--merge", action="store_true",
                   help="keep the other configurations of the existing results file (re-run "
                        "some configurations of a full run)")
    p.add_argument("--profile", action="store_true",
                   help="profile rivulet's event loop (cProfile; slows it: results go to "
                        "bench/results/lobsters.profile.json, not the figures)")
    p.add_argument("--mariadb-port", type=int, default=33316)
    args = p.parse_args(argv)
    quick = args.quick
    args.scale = args.scale or (0.1 if quick else 1.0)
    args.configs = (args.configs.split(",") if args.configs else
                    ["mariadb-baseline", "rivulet-natural"] if quick else list(CONFIGURATIONS))
    unknown = set(args.configs) - set(CONFIGURATIONS)
    if unknown:
        p.error(f"unknown configuration(s) {sorted(unknown)}; expected {CONFIGURATIONS}")
    args.rates = ([float(r) for r in args.rates.split(",")] if args.rates else
                  list(QUICK_RATES if quick else FULL_RATES))
    args.seconds = args.seconds or (3.0 if quick else 8.0)
    args.warmup = args.warmup if args.warmup is not None else (1.0 if quick else 2.0)
    args.warm_pages = args.warm_pages or (1_500 if quick else 60_000)
    args.warm_seconds = args.warm_seconds or (6.0 if quick else 200.0)
    args.phases_per_load = args.phases_per_load or (1 if quick else 2)
    args.check_every = args.check_every if args.check_every is not None else (5 if quick else 20)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log = logger()
    load_at_start = busy_warning(log)
    if args.driver is None:
        installed = ensure_mysqlclient(log) if not args.quick else _importable("MySQLdb")
        args.driver = "mysqlclient" if installed else "pymysql"
    dataset = generate(Sizes.production(args.scale), seed=args.seed)
    log(f"lobsters: scale {args.scale:g}, {dataset.row_count():,} rows generated; "
        f"configurations {', '.join(args.configs)}; loads {args.rates}; {args.clients} client "
        f"processes x {args.connections} connections")
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    root = Path(tempfile.mkdtemp(prefix="rivulet-lobsters-", dir=shm))
    configs: dict[str, dict[str, Any]] = {}
    phases = len(args.rates) * args.phases_per_load + 1  # the warm-up's and the sweep's
    blocks = {config: 1 + n * args.clients * phases  # one per client process and phase
              for n, config in enumerate(args.configs)}
    together = [c for c in args.configs if c != "mariadb-natural"]
    try:
        with contextlib.ExitStack() as checking:
            if args.check_every or any(c.startswith("mariadb") for c in args.configs):
                MariaDB.ensure_installed(log)
            oracle_server = None
            if args.check_every:
                oracle_server = MariaDB(root / "oracle", args.mariadb_port + 1,
                                        options=ORACLE_SERVER_OPTIONS)
                oracle_server.start()
                checking.callback(oracle_server.stop)
            # MariaDB natural alone, after the others: its statements run on for their
            # 10 s limit after a phase ends, into whatever runs next.
            alone = [["mariadb-natural"]] if "mariadb-natural" in args.configs else []
            for group in [together, *alone] if together else alone:
                with contextlib.ExitStack() as servers:
                    oracles = ({config: open_oracle(oracle_server, config, dataset, servers, log)
                                for config in group} if oracle_server is not None else {})
                    endpoints = {config: start(config, dataset, args, root, servers, configs,
                                               log)
                                 for config in group}
                    run_configs(endpoints, blocks, dataset, args, configs, log, oracles)
        for config in together:
            profile = root / f"{config}.prof"
            if args.profile and profile.exists():
                configs[config]["profile"] = profile_summary(profile)
                log(f"[{config}] event loop profiled: {profile_text(configs[config]['profile'])}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    configs = {k: configs[k] for k in CONFIGURATIONS if k in configs}
    if args.merge:
        previous = json.loads(results_path(NAME, args.quick).read_text())["configurations"]
        configs = {**{k: v for k, v in previous.items() if k not in configs}, **configs}
        configs = {k: configs[k] for k in CONFIGURATIONS if k in configs}
    results = summarize(configs, args, dataset, load_at_start)
    name = f"{NAME}.profile" if args.profile else NAME  # a profiled server is slower
    path = write_results(name, results, args.quick)
    report(results)
    png = plot(results, results_path(name, args.quick, "png"))
    log(f"results: {path}" + (f", {png}" if png else ""))
    answers = results["answers"]
    if answers["mismatches"]:
        for config, check in results["checks"].items():
            for m in check["mismatches"][:3]:
                log(f"[{config}] MISMATCH on page {m['page']}: {m['statement']} "
                    f"{m['params']} ({m['problem']}): answered {m['answer']}, MariaDB "
                    f"{m['mariadb_answers']}")
        log(f"FAILED: {answers['mismatches']} statement(s) answered otherwise than MariaDB "
            "(the JSON's checks list them)")
        return 1
    return 0


#: The oracle's server: the MySQL oracle's settings (``bench.mysql_oracle``: MySQL 8's
#: sql_mode, a binary collation, UTC), with room for the run's data in its buffer pool.
ORACLE_SERVER_OPTIONS = [*ORACLE_OPTIONS, "--innodb-buffer-pool-size=512M"]


def open_oracle(server: MariaDB, config: str, dataset: Dataset,
                closing: contextlib.ExitStack, log: Any) -> Oracle:
    """A database of the oracle's server for ``config``: the baseline program, the data
    set, the application's indexes (:func:`load_mariadb`); dropped when ``closing``
    closes."""
    engine, version = config.split("-")
    t0 = time.perf_counter()
    baseline = query_set("baseline")
    database = load_mariadb(server, baseline, dataset, database=f"check_{engine}_{version}")
    conn = server.connect(database)
    backend = WireBackend(baseline, conn, name=f"oracle-{config}", timings={},
                          driver="pymysql")

    def drop() -> None:
        with contextlib.suppress(Exception):
            conn.cursor().execute(f"DROP DATABASE {database}")
        conn.close()

    closing.callback(drop)
    log(f"oracle: {config}'s database loaded in {time.perf_counter() - t0:.1f} s")
    return Oracle(backend, query_set(version))


def start(config: str, dataset: Dataset, args: argparse.Namespace, root: Path,
          servers: contextlib.ExitStack, configs: dict[str, dict[str, Any]], log: Any) -> Endpoint:
    """Load a configuration's server and start it (stopped when ``servers`` closes); its
    load and start-up times go into ``configs``. Each MariaDB configuration has a server
    of its own, as each ``rivulet serve`` is: no other database's buffer pool or
    background work (InnoDB flushing and purging a million rows just written) shares it.
    (The two MariaDB configurations never run at once: they may share the port.)"""
    engine, version = config.split("-")
    if engine == "mariadb":
        mariadb = MariaDB(root / f"mariadb-{version}", args.mariadb_port)
        mariadb.start()
        servers.callback(mariadb.stop)  # (its data directory removed)
        t0 = time.perf_counter()
        database = load_mariadb(mariadb, query_set(version), dataset)
        log(f"mariadb: {version} loaded in {time.perf_counter() - t0:.1f} s")
        return Endpoint(config, "mariadb", version, mariadb.port, database, "bench",
                        mariadb.pid, args.driver)
    directory = root / f"rivulet-{version}"
    t0 = time.perf_counter()
    load_rivulet(directory, query_set(version), dataset)
    loaded = time.perf_counter() - t0
    profile = root / f"{config}.prof" if args.profile else None
    server = RivuletServer(directory, root / f"rivulet-{version}.log", profile, args.replicas)
    servers.callback(server.stop)
    log(f"rivulet: {version} loaded in {loaded:.1f} s, serving on port {server.port}")
    ready = server.wait_ready()
    log(f"rivulet: {version} ready {ready:.1f} s later (full state loaded)")
    configs[config] = {"load_seconds": loaded, "ready_seconds": ready}
    return Endpoint(config, engine, version, server.port, "rivulet", "root", server.pid,
                    args.driver)


def run_configs(endpoints: dict[str, Endpoint], blocks: dict[str, int], dataset: Dataset,
                args: argparse.Namespace, configs: dict[str, dict[str, Any]], log: Any,
                oracles: dict[str, Oracle]) -> None:
    """Warm every configuration up, then sweep them together (see :func:`sweep`), each
    phase checked against the configuration's oracle (if ``oracles`` has one); each
    one's results go into its entry of ``configs``."""
    warmed = {config: warm(endpoint, dataset, args, blocks[config], log, oracles.get(config))
              for config, endpoint in endpoints.items()}
    points = sweep(endpoints, blocks, dataset, args, log, oracles)
    for config, endpoint in endpoints.items():
        configs[config] = {"engine": endpoint.engine, "version": endpoint.version,
                           "warm_up": warmed[config], "points": points[config],
                           "best_sustained": best_sustained(points[config]),
                           **configs.get(config, {})}
        checks = [p["check"] for p in [warmed[config], *points[config]] if "check" in p]
        if checks:
            configs[config]["check"] = merge_reports(checks)


if __name__ == "__main__":
    raise SystemExit(main())
