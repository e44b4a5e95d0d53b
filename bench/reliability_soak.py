"""The soak run: ``rivulet serve`` under many MySQL clients for minutes, with a tight memory
limit, Zipf-popular reads, writes, evictions and a new view every minute.

The news example (rivulet/examples/news.sql) is loaded in-process first; the state it keeps
whatever the limit (the full-state aggregate behind the front page and its index by story,
built by the first read) is the floor, and the server runs with ``--memory-limit`` = floor
+ ``headroom`` bytes, far less than the partial views would take if every key were held,
so eviction runs all the time. Clients (threads here, one connection each) read
``StoriesWithVC`` and ``Karma`` by Zipf-popular keys and the front page, and vote; every
``view_every`` seconds one more view is added (a migration under load) and the clients
start reading it too, and the oldest beyond ``live_views`` is dropped (the clients stop
reading it one period before its DROP VIEW, longer than any read may take): the program
stays the same size, so the soak measures state and what a changing program leaves behind.
A program that only grows grows its memory outside the limit, by design: each view's
definition, plan, operators and the statements that read it are the program, not state
(before views were dropped, the full soak's RSS rose with every view it added, by tens of
kilobytes each, and was flat otherwise).

Sampled every second: rivulet's own accounting of its state (``rivulet_memory_bytes`` on
``/metrics``) against the limit, the server's RSS. Per interval: reads and writes per
second, errors, the slowest read (a read that misses waits for its upquery: a stuck
upquery shows here) and the read p99. A minute is *within the limit* when no sample
exceeded the limit and no client saw an error in it.

The limit bounds state, not the process, so the RSS check allows a fixed overhead, stated
in the results and measured after a warm-up (``warmup`` seconds of the same load, not part
of the soak's minutes: every client connected, every statement shape planned, the views of
the program read, the added views' window filled): the server's RSS then less
rivulet's accounted state then (interpreter, code, program, connections and their
sessions, allocator slack), plus the SQLite page
caches the limit does not account, at their most (``page_cache_bytes(limit)`` for each of
the writer's, the readers' and the transactions' connections), and the MySQL server's
budget for encoded replies (``reply_cache_bytes(limit)``, bounded the same way). A minute
is *RSS within the limit* when it is within the limit as above, every RSS sample is at
most limit + overhead, and no read took longer than ``STUCK_SECONDS``. Growth: the largest
RSS of the last interval against that of the interval at the soak's middle (the last 30
minutes of a 60-minute soak).

After the soak, the accounting that the limit enforces is checked against the memory it
stands for (:func:`measure_accounting`): in a fresh process traced from the start
(tracemalloc), the soak's database is opened under the same limit, its read mix replayed
(the added views included), and rivulet's ``memory_bytes`` compared with the bytes the
state really holds (those freed when it is dropped, as ``bench.memory`` measures them):
``memory_estimate_error``, |accounted - traced| / traced.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import REPO_DIR, Zipf, percentile
from rivulet.server.mysql.reply_cache import reply_cache_bytes
from rivulet.storage.sqlite import page_cache_bytes

READ_SHARE = 0.9
#: A read slower than this is a stuck upquery (the server's upquery timeout is 30 s).
STUCK_SECONDS = 10.0
#: SQLite connections with a page cache of their own: the writer's, readers', transactions'.
CACHED_CONNECTIONS = 3


@dataclass
class SoakConfig:
    seconds: float
    clients: int
    stories: int
    votes: int
    headroom: int  # bytes above the floor
    view_every: float  # seconds between added views
    live_views: int  # added views kept: the oldest beyond this many is dropped
    interval: float  # seconds per reported interval
    warmup: float  # seconds of load before the soak's minutes (the overhead is taken then)
    accounting_reads: int  # reads replayed under tracing after the soak


QUICK = SoakConfig(seconds=20, clients=8, stories=5_000, votes=50_000, headroom=512 * 1024,
                   view_every=8, live_views=2, interval=5, warmup=10,
                   accounting_reads=2_000)
LONG = SoakConfig(seconds=3600, clients=16, stories=50_000, votes=500_000, headroom=2 << 20,
                  view_every=60, live_views=5, interval=30, warmup=60,
                  accounting_reads=30_000)


@dataclass
class Offered:
    """The added views the clients read: the migrator swaps the tuple whole, so a client
    picks from one consistent window."""

    names: tuple[str, ...] = ()


@dataclass
class Interval:
    """What the clients saw in one interval (filled by many threads under ``lock``)."""

    reads: int = 0
    writes: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)
    memory: list[int] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)
    error_text: list[str] = field(default_factory=list)


def prepare(path: Path, cfg: SoakConfig) -> int:
    """Load the news example; returns the floor: bytes of state with partial views empty."""
    import rivulet
    from rivulet.cli import load_news_sample, news_program

    shutil.rmtree(path, ignore_errors=True)
    with rivulet.open(path, prewarm=False) as db:
        db.execute_script(news_program())
        load_news_sample(db, stories=cfg.stories, votes=cfg.votes)
    with rivulet.open(path, prewarm=False) as db:  # as the server will start: cold
        db.settle()
        # One read of each view the clients read builds what reads build once and keep (the
        # index of a full-state aggregate by the partial reader's key): part of the floor.
        db.view("StoriesWithVC").lookup(0)
        db.view("Karma").lookup(0)
        db.view("FrontPage").lookup()
        return sum(int(node["memory_bytes"]) for node in db.stats()["per_node"].values()
                   if not node["partial"])


class Server:
    def __init__(self, path: Path, limit: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rivulet", "serve", "--data-dir", str(path), "--no-demo",
             "--mysql-port", "0", "--http-port", "0", "--memory-limit", str(limit)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=str(REPO_DIR),
            env={"PYTHONUNBUFFERED": "1", **_env()})
        text = ""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 300
        while "stop with Ctrl-C" not in text and time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"rivulet serve did not start:\n{text}")
            text += line
        port = re.search(r"-P (\d+)", text)
        http = re.search(r"(http://[\d.]+:\d+)/health", text)
        if port is None or http is None:
            raise RuntimeError(f"rivulet serve did not say where it listens:\n{text}")
        self.port, self.http = int(port.group(1)), http.group(1)
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for _ in self.proc.stdout:
            pass

    def counters(self) -> dict[str, float]:
        """Every unlabelled figure on ``/metrics`` (``rivulet_evictions_total`` ...)."""
        with urllib.request.urlopen(self.http + "/metrics", timeout=30) as response:
            text = response.read().decode()
        return {m.group(1): float(m.group(2))
                for m in re.finditer(r"^(rivulet_\w+) (\S+)$", text, re.M)}

    def memory(self) -> tuple[int, int]:
        """rivulet's accounted state bytes and the process's resident set (bytes)."""
        memory = self.counters().get("rivulet_memory_bytes", -1)
        rss = 0
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
        return int(memory), rss

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(120)


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "RIVULET_FAULTS"}


def run_soak(cfg: SoakConfig, work: Path, log: Callable[[str], None]) -> dict[str, Any]:
    path = work / "soak-db"
    started = time.perf_counter()
    floor = prepare(path, cfg)
    limit = floor + cfg.headroom
    log(f"soak: loaded {cfg.stories:,} stories / {cfg.votes:,} votes in "
        f"{time.perf_counter() - started:.1f} s; state floor {floor / 1e6:.2f} MB, "
        f"limit {limit / 1e6:.2f} MB")
    server = Server(path, limit)
    intervals: list[Interval] = []
    warming = Interval()
    lock = threading.Lock()
    stop = threading.Event()
    added: list[str] = []
    dropped: list[str] = []
    offered = Offered()  # the added views the clients read
    t0 = time.monotonic() + cfg.warmup  # the soak's minutes start after the warm-up

    def current() -> Interval:
        if time.monotonic() < t0:
            return warming
        index = int((time.monotonic() - t0) // cfg.interval)
        while len(intervals) <= index:
            intervals.append(Interval())
        return intervals[index]

    def client(n: int) -> None:
        _client(server.port, n, cfg, stop, lock, current, offered)

    def sampler() -> None:
        while not stop.wait(1.0):
            try:
                memory, rss = server.memory()
            except OSError as exc:
                with lock:
                    current().errors += 1
                    current().error_text.append(f"metrics: {exc!r}")
                continue
            with lock:
                current().memory.append(memory)
                current().rss.append(rss)

    def ddl(sql: str) -> bool:
        import pymysql

        try:
            conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root",
                                   autocommit=True, read_timeout=600)
            with conn.cursor() as cur:
                cur.execute(sql)
            conn.close()
        except pymysql.Error as exc:
            with lock:
                current().errors += 1
                current().error_text.append(f"{sql.split(' AS ')[0]}: {exc!r}")
            return False
        return True

    def migrator() -> None:
        retired: list[tuple[str, float]] = []  # no longer offered, since when
        k = 0
        # The warm-up fills the window of added views (and retires one), so the program
        # is at its steady size when the overhead is taken; then one view a period.
        wait = cfg.warmup / (cfg.live_views + 2)
        while not stop.wait(wait if time.monotonic() < t0 else cfg.view_every):
            k += 1
            name = f"soak_view_{k}"
            # Partial through and through (no join index, no full state): each view adds
            # only state the limit can evict, so the limit stays meaningful as views come.
            sql = (f"CREATE VIEW {name} AS SELECT user_id, story_id, COUNT(*) AS n FROM votes "
                   f"WHERE user_id = ? AND story_id >= {k} GROUP BY user_id, story_id")
            began = time.perf_counter()
            if ddl(sql):
                added.append(name)
                offered.names = (*offered.names, name)
                log(f"soak: added view {name} in {time.perf_counter() - began:.2f} s")
            if len(offered.names) > cfg.live_views:
                retired.append((offered.names[0], time.monotonic()))
                offered.names = offered.names[1:]
            # A read picked a retired view at most a stuck read's time before its DROP.
            while retired and retired[0][1] < time.monotonic() - STUCK_SECONDS:
                name = retired.pop(0)[0]
                if ddl(f"DROP VIEW {name}"):
                    dropped.append(name)

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(cfg.clients)]
    threads += [threading.Thread(target=sampler, daemon=True),
                threading.Thread(target=migrator, daemon=True)]
    for t in threads:
        t.start()
    time.sleep(max(0.0, t0 - time.monotonic()))
    state, rss_warm = server.memory()
    overhead = (rss_warm - state + CACHED_CONNECTIONS * page_cache_bytes(limit)
                + reply_cache_bytes(limit))
    log(f"soak: after a {cfg.warmup:.0f} s warm-up ({warming.errors} errors): RSS "
        f"{rss_warm / 1e6:.1f} MB, state {state / 1e6:.2f} MB; RSS bound "
        f"{(limit + overhead) / 1e6:.1f} MB (limit + {overhead / 1e6:.1f} MB overhead)")
    next_report = cfg.interval
    while (elapsed := time.monotonic() - t0) < cfg.seconds:
        time.sleep(min(1.0, cfg.seconds - elapsed))
        if time.monotonic() - t0 >= next_report and len(intervals) >= 2:
            _log_interval(log, intervals[-2], len(intervals) - 2, cfg, limit)
            next_report += cfg.interval
    stop.set()
    for t in threads:
        t.join(120)
    totals = {k.removeprefix("rivulet_"): v for k, v in server.counters().items()
              if k.endswith("_total")}
    code = server.stop()
    whole = int(cfg.seconds // cfg.interval)
    accounting = accounting_in_subprocess(path, cfg, limit, list(offered.names),
                                          cfg.accounting_reads)
    log(f"soak: accounting after the soak: {accounting['memory_bytes'] / 1e6:.2f} MB "
        f"accounted, {accounting['traced_bytes'] / 1e6:.2f} MB traced (error "
        f"{accounting['memory_estimate_error']:.3f})")
    return summarize(intervals[:whole], cfg, floor, limit, added, dropped, code,
                     rss_warm=rss_warm, overhead=overhead) | {"server": totals,
                                                              "accounting": accounting}


def measure_accounting(path: Path, cfg: SoakConfig, limit: int, views: list[str],
                       reads: int) -> dict[str, Any]:
    """``memory_estimate_error`` on the soak's database (see the module's docstring): run
    in a fresh process (:func:`accounting_in_subprocess`) so that tracing covers every
    block of the state."""
    import gc
    import tracemalloc

    import rivulet
    from bench.memory import traced_state_bytes

    rnd = random.Random(7)
    stories = Zipf(cfg.stories, 1.08, seed=7).sample(reads)
    users = Zipf(max(100, cfg.stories // 5), 1.0, seed=8).sample(reads)
    gc.collect()
    tracemalloc.start()
    try:
        db = rivulet.open(path, memory_limit=limit, prewarm=False)
        try:
            for story, user in zip(stories, users):
                which = rnd.random()
                if which < 0.6:
                    db.view("StoriesWithVC").lookup(story)
                elif which < 0.85:
                    db.view("Karma").lookup(user)
                elif which < 0.9 or not views:
                    db.view("FrontPage").lookup()
                else:
                    db.view(rnd.choice(views)).lookup(user)
            accounted = db.stats()["memory_bytes"]
            traced = traced_state_bytes(db)
        finally:
            db.close()
    finally:
        tracemalloc.stop()
    return {"reads": reads, "memory_bytes": accounted, "traced_bytes": traced,
            "memory_estimate_error": round(abs(accounted - traced) / traced, 4)}


def accounting_in_subprocess(path: Path, cfg: SoakConfig, limit: int, views: list[str],
                             reads: int) -> dict[str, Any]:
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(measure_accounting, (path, cfg, limit, views, reads))


def _client(port: int, n: int, cfg: SoakConfig, stop: threading.Event, lock: threading.Lock,
            current: Callable[[], Interval], offered: Offered) -> None:
    import pymysql

    rnd = random.Random(n)
    stories = Zipf(cfg.stories, 1.08, seed=n)
    users_n = max(100, cfg.stories // 5)
    users = Zipf(users_n, 1.0, seed=1000 + n)
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True,
                           read_timeout=600)
    cur = conn.cursor()
    story_keys: list[int] = []
    user_keys: list[int] = []
    next_story = cfg.stories + n * 1_000_000
    while not stop.is_set():
        if len(story_keys) < 2 or len(user_keys) < 2:
            story_keys, user_keys = stories.sample(500), users.sample(500)
        roll = rnd.random()
        began = time.perf_counter()
        try:
            if roll < READ_SHARE:
                which = rnd.random()
                if which < 0.6:
                    cur.execute("SELECT id, title, vcount FROM StoriesWithVC WHERE id = %s",
                                (story_keys.pop(),))
                elif which < 0.85:
                    cur.execute("SELECT author, karma FROM Karma WHERE author = %s",
                                (user_keys.pop(),))
                elif which < 0.9 or not (views := offered.names):
                    cur.execute("SELECT id, title, vcount FROM FrontPage")
                else:
                    cur.execute(f"SELECT story_id, n FROM {rnd.choice(views)} WHERE user_id = %s",
                                (user_keys.pop(),))
                cur.fetchall()
                kind = "read"
            elif roll < READ_SHARE + 0.095:
                cur.execute("INSERT INTO votes (user_id, story_id) VALUES (%s, %s)",
                            (rnd.randrange(users_n), story_keys.pop()))
                kind = "write"
            else:
                next_story += 1
                cur.execute("INSERT INTO stories VALUES (%s, %s, %s, NULL, '2025-01-01 00:00:00')",
                            (next_story, rnd.randrange(users_n), f"soak {next_story}"))
                kind = "write"
        except pymysql.Error as exc:
            with lock:
                interval = current()
                interval.errors += 1
                if len(interval.error_text) < 5:
                    interval.error_text.append(repr(exc))
            if isinstance(exc, pymysql.OperationalError) and stop.is_set():
                return
            continue
        seconds = time.perf_counter() - began
        with lock:
            interval = current()
            if kind == "read":
                interval.reads += 1
                interval.latencies.append(seconds)
            else:
                interval.writes += 1
    conn.close()


def _log_interval(log: Callable[[str], None], iv: Interval, index: int, cfg: SoakConfig,
                  limit: int) -> None:
    lat = sorted(iv.latencies)
    log(f"soak [{index * cfg.interval:5.0f} s] reads {iv.reads / cfg.interval:7.0f}/s  writes "
        f"{iv.writes / cfg.interval:6.0f}/s  errors {iv.errors}  max read "
        f"{(lat[-1] if lat else 0) * 1e3:7.1f} ms  memory max "
        f"{max(iv.memory, default=0) / 1e6:.2f} / {limit / 1e6:.2f} MB  "
        f"rss {max(iv.rss, default=0) / 1e6:.0f} MB")


def summarize(intervals: list[Interval], cfg: SoakConfig, floor: int, limit: int,
              added: list[str], dropped: list[str], exit_code: int, *, rss_warm: int,
              overhead: int) -> dict[str, Any]:
    rows = []
    for i, iv in enumerate(intervals):
        lat = sorted(iv.latencies)
        rows.append({
            "t_s": round(i * cfg.interval, 1),
            "reads_per_s": round(iv.reads / cfg.interval, 1),
            "writes_per_s": round(iv.writes / cfg.interval, 1),
            "errors": iv.errors,
            "error_samples": iv.error_text[:5],
            "read_p99_ms": round(percentile(lat, 99) * 1e3, 3) if lat else None,
            "read_max_ms": round(lat[-1] * 1e3, 3) if lat else None,
            "memory_max_bytes": max(iv.memory, default=None),
            "memory_samples": len(iv.memory),
            "rss_max_bytes": max(iv.rss, default=None),
        })
    per_minute = max(1, int(round(60 / cfg.interval)))
    minutes = rss_minutes = 0.0
    for start in range(0, len(rows), per_minute):
        chunk = rows[start:start + per_minute]
        ok = all(r["errors"] == 0 and r["memory_samples"] > 0
                 and (r["memory_max_bytes"] or 0) <= limit for r in chunk)
        minutes += ok * len(chunk) * cfg.interval / 60
        rss_ok = ok and all((r["rss_max_bytes"] or 0) <= limit + overhead
                            and (r["read_max_ms"] or 0) <= STUCK_SECONDS * 1e3 for r in chunk)
        rss_minutes += rss_ok * len(chunk) * cfg.interval / 60
    rss_middle = rows[len(rows) // 2]["rss_max_bytes"] if rows else None
    rss_last = rows[-1]["rss_max_bytes"] if rows else None
    ops = [r["reads_per_s"] + r["writes_per_s"] for r in rows[1:]] or [0.0]
    median = sorted(ops)[len(ops) // 2]
    return {
        "config": cfg.__dict__,
        "floor_bytes": floor,
        "limit_bytes": limit,
        "minutes": round(len(rows) * cfg.interval / 60, 2),
        "minutes_within_limit": round(minutes, 2),
        "minutes_rss_within_limit": round(rss_minutes, 2),
        "rss_after_warmup_bytes": rss_warm,
        "rss_overhead_bytes": overhead,
        "rss_bound_bytes": limit + overhead,
        "rss_growth_second_half": (round(rss_last / rss_middle - 1, 4)
                                   if rss_middle and rss_last else None),
        "stuck_reads": sum(1 for r in rows
                           if (r["read_max_ms"] or 0) > STUCK_SECONDS * 1e3),
        "errors": sum(r["errors"] for r in rows),
        "memory_max_bytes": max((r["memory_max_bytes"] or 0 for r in rows), default=0),
        "memory_max_over_limit": round(max((r["memory_max_bytes"] or 0 for r in rows),
                                           default=0) / limit, 4),
        "rss_first_bytes": rows[0]["rss_max_bytes"] if rows else None,
        "rss_last_bytes": rows[-1]["rss_max_bytes"] if rows else None,
        "read_max_ms": max((r["read_max_ms"] or 0 for r in rows), default=0),
        "ops_per_s_median": round(median, 1),
        "ops_per_s_min_over_median": round(min(ops) / median, 3) if median else None,
        "views_added": added,
        "views_dropped": dropped,
        "server_exit_code": exit_code,
        "intervals": rows,
    }
