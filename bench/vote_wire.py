"""The vote benchmark over the wire: rivulet's MySQL server beside MariaDB and memcached.

The workload of ``bench.vote`` (stories with their vote count; story popularity Zipf
s = 1.08 for reads and votes alike), run by load generators in separate processes
(``multiprocessing``), each with several connections in a closed loop: every operation is
a read (the story's vote count) or, with probability ``--write-fraction``, a vote. The
load generators speak MySQL through mysqlclient (``MySQLdb``: libmariadb's C protocol code,
as the Lobsters clients do; installed when missing, ``bench.mariadb.ensure_mysqlclient``):
each statement is the text the driver's cursor would send (every value escaped by the
connection and spliced in), sent on the connection itself, as in ``bench.lobsters.run``.
The clients share the machine's two cores with the server under test, and PyMySQL, pure
Python, took about twice the servers' CPU per operation: the throughput then said more
about the clients than about the servers. Systems, each read by the query its application
would send:

* ``rivulet`` -- ``rivulet.server.mysql.server.MySQLServer`` in its own process. Clients send the
  *natural* query (``SELECT ... FROM stories LEFT JOIN votes ... WHERE stories.id = 5
  GROUP BY stories.id``) as text with the id spliced in; rivulet turns the literal into a
  parameter and answers from one view. A vote is one ``INSERT``.
* ``mariadb_column`` -- MariaDB with a hand-maintained ``stories.vcount`` column: a read is a
  primary-key lookup; a vote is ``BEGIN; INSERT; UPDATE stories SET vcount = vcount + 1;
  COMMIT`` (Lobsters' approach).
* ``mariadb_natural`` -- MariaDB answering the natural ``LEFT JOIN ... GROUP BY`` query on
  every read (index on ``votes(story_id)``); a vote is one ``INSERT``.
* ``memcached`` -- what many teams run instead (the Noria paper's Figure 7): memcached
  (Debian's package, ``bench/memcached.py``) as a cache in front of MariaDB with the
  column, through pymemcache. A read gets the count from the cache and, on a miss, reads
  the column from MariaDB and fills the cache; a vote is the column's transaction, then
  a ``delete`` of the story's key. The fill takes a lease first (:class:`CountCache`): a
  plain ``set`` after the read can put back a count that a vote committed in between has
  already invalidated, and that stale count would then be served until the next vote.
  Its server CPU is memcached's and MariaDB's together.

MariaDB (Debian's ``mariadb-server``, installed with apt when missing) runs on loopback
with its data directory in tmpfs (``/dev/shm``), the thread pool, no log flush at commit
(``innodb_flush_log_at_trx_commit=0``), no binary log, a 1 GB buffer pool, and no grant
tables. rivulet's data directory is in tmpfs too (SQLite WAL, ``synchronous=NORMAL``: no
flush at commit either). All are loaded with the same stories and votes before the
measured phases; rivulet's view is filled for every story first (MariaDB's buffer pool
holds the whole data set after the load, so both start warm; the cache starts empty).

Each phase: ``--warmup`` seconds, then ``--seconds`` measured; each round runs every system
back to back, over ``--repeat`` rounds, the order rotated from round to round (no system
always runs first, right after the previous round's MariaDB natural phase). A ratio is the
median of the rounds' own ratios (rivulet's round r over the other system's round r:
systems measured within the same minute or two, under the same outside load), and each
system's figures are its median round; the JSON keeps every round, each with the load
average at its start. Every system's CPU use (the server processes, all their threads)
is reported beside the load generators'. At the end, the vote count of 1,000 random
stories plus the 10 most popular ones, read as each application reads it (through the
cache for ``memcached``), must equal the initial counts plus the votes written, in every
system, or the benchmark fails (exit 1).

Targets (issue 32), all from the same run:

* ``wire_vs_mariadb_column_ratio`` (rivulet's operations/s over MariaDB's with the column)
  >= 1.2, with ``wire_ratio_bound`` beside it: the highest that ratio could be when the
  load generators' own CPU is counted, ``(c_m + s_m) / c_r`` per round (the median
  reported), where ``c_m`` and ``s_m`` are the clients' and MariaDB's CPU per operation
  in MariaDB's phase and ``c_r`` the clients' CPU per operation in rivulet's. Both phases
  run closed loops on the same cores: MariaDB's phase did ``X_m`` operations/s using
  ``U = X_m (c_m + s_m)`` of CPU; given that much CPU, rivulet's clients alone could do
  at most ``U / c_r`` operations/s even if its server cost nothing, which over ``X_m`` is
  the bound. A ratio near its bound says the clients, not the server, set the figure.
* ``server_cpu_per_op_vs_mariadb`` (MariaDB's server CPU per operation with the column
  over rivulet's, per round, the median) >= 1.5 (``stretch_goal`` 2.0).
* ``wire_p95_ms`` (rivulet's 95th percentile operation latency) <= 10, and
  ``wire_vs_mariadb_natural_ratio`` >= 10.
* ``wire_vs_memcached_ratio`` (rivulet's operations/s over memcached+MariaDB's): recorded,
  no goal.

Run from the repository root: ``python -m bench.vote_wire`` (100,000 stories, 1,000,000
votes, three rounds; ``bench/results/vote_wire.json`` and ``.png``), or ``--quick``
(10,000 stories, 100,000 votes, one round, rivulet only unless ``--mariadb``, which adds
every baseline; ``vote_wire.quick.json``).
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing as mp
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import mariadb
from bench.common import (
    Zipf,
    bar_chart,
    busy_warning,
    counts_of,
    environment,
    figure,
    fmt_num,
    latency_summary,
    load_average,
    logger,
    print_table,
    results_path,
    target,
    uniform_ints,
    write_results,
)
from bench.load_generators import quiesce, run_clients, run_generators
from bench.mariadb import MARIADB_OPTIONS, ensure_mysqlclient
from bench.memcached import MEMCACHED_OPTIONS, Memcached
from bench.server_process import RivuletServerProcess

NAME = "vote_wire"

STORIES_SQL = "CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(255) NOT NULL)"
VOTES_SQL = "CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL)"
NATURAL_READ = (
    "SELECT stories.id, stories.title, COUNT(votes.user_id) AS vcount FROM stories "
    "LEFT JOIN votes ON stories.id = votes.story_id WHERE stories.id = %s GROUP BY stories.id"
)
COLUMN_READ = "SELECT id, title, vcount FROM stories WHERE id = %s"
VOTE = "INSERT INTO votes (user_id, story_id) VALUES (%s, %s)"
BUMP = "UPDATE stories SET vcount = vcount + 1 WHERE id = %s"

#: Seconds a cache lease lives: a reader that took one and never filled it (it died) holds
#: the key back from the cache no longer than this.
LEASE_SECONDS = 10


@dataclass(frozen=True)
class Target:
    """What a load generator connects to and sends."""

    name: str
    port: int
    database: str
    read_sql: str
    bump: bool  # a vote also updates the hand-maintained count, in one transaction
    cache_port: int | None = None  # memcached in front of the database (``CountCache``)


@dataclass(frozen=True)
class Workload:
    stories: int
    votes: int
    users: int
    zipf: float
    seed: int
    write_fraction: float


def initial_votes(w: Workload) -> tuple[list[int], list[int]]:
    """The votes loaded before the phases: (user ids, story ids), seeded."""
    return (uniform_ints(0, w.users - 1, w.votes, w.seed + 1),
            Zipf(w.stories, w.zipf, w.seed).sample(w.votes))


# ......................................................................... rivulet server


def load_rivulet(db: Any, w: Workload) -> None:
    """rivulet's tables, the initial votes, and the view filled for every story (in the
    server process: ``RivuletServerProcess``)."""
    db.execute(STORIES_SQL)
    db.execute(VOTES_SQL)
    db.table("stories").insert_many((i, f"story {i}") for i in range(w.stories))
    users, stories = initial_votes(w)
    step = 50_000
    for lo in range(0, w.votes, step):
        db.table("votes").insert_many(zip(users[lo:lo + step], stories[lo:lo + step]))
    db.settle()
    view = db.prepare(NATURAL_READ.replace("%s", "?"))
    for lo in range(0, w.stories, 10_000):  # fill the view for every story (see docstring)
        view.lookup_many(range(lo, min(w.stories, lo + 10_000)))


# ......................................................................... MariaDB


class MariaDB(mariadb.MariaDB):
    """The benchmarks' MariaDB, able to load the vote tables."""

    def load(self, database: str, w: Workload, column: bool) -> None:
        """Tables, stories and the initial votes (LOAD DATA from files in tmpfs)."""
        stories_file, votes_file = self.root / "stories.tsv", self.root / "votes.tsv"
        if not votes_file.exists():
            stories_file.write_text("".join(f"{i}\tstory {i}\n" for i in range(w.stories)))
            users, stories = initial_votes(w)
            votes_file.write_text("".join(f"{u}\t{s}\n" for u, s in zip(users, stories)))
        conn = self.connect(None)
        with conn.cursor() as c:
            c.execute(f"CREATE DATABASE {database}")
            c.execute(f"USE {database}")
            vcount = ", vcount INT NOT NULL DEFAULT 0" if column else ""
            c.execute(f"CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(255) NOT NULL"
                      f"{vcount}) ENGINE=InnoDB")
            c.execute("CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL, "
                      "KEY (story_id)) ENGINE=InnoDB")
            c.execute(f"LOAD DATA INFILE '{stories_file}' INTO TABLE stories (id, title)")
            c.execute(f"LOAD DATA INFILE '{votes_file}' INTO TABLE votes (user_id, story_id)")
            if column:
                c.execute("UPDATE stories JOIN (SELECT story_id, COUNT(*) AS n FROM votes "
                          "GROUP BY story_id) v ON stories.id = v.story_id "
                          "SET stories.vcount = v.n")
            c.execute("ANALYZE TABLE stories, votes")
        conn.close()


# ......................................................................... the application


def run_sql(conn: Any, sql: str, params: Sequence[Any]) -> tuple[tuple[Any, ...], ...]:
    """One statement over a mysqlclient connection, as its cursor would send it (each value
    escaped by the connection and spliced into the text) but run on the connection itself:
    the cursor's Python bookkeeping is client CPU that the server under test would pay for
    (see ``bench.lobsters.run.WireBackend``). The rows, if any."""
    conn.query(sql.encode() % tuple(map(conn.literal, params)))
    result = conn.store_result()
    return result.fetch_row(0) if result is not None else ()


def connect_mysql(t: Target) -> Any:
    """A mysqlclient connection to ``t`` in autocommit mode."""
    import MySQLdb

    return MySQLdb.connect(host="127.0.0.1", port=t.port, user="bench", database=t.database,
                           autocommit=True)


class CountCache:
    """The cache-aside application of the ``memcached`` system: vote counts in memcached,
    filled from MariaDB's column on a miss, invalidated (``delete``) after each vote.

    A miss takes a *lease* before reading MariaDB, as Facebook's memcache does: ``add`` of
    a token only this reader holds (it fails if another reader holds one, or the count is
    back), then the read, then ``cas`` of the count over the token, which fails if a vote
    deleted the key since. A vote commits before its ``delete``, so a count read after
    the lease was taken and stored by ``cas`` is never older than the last vote whose
    ``delete`` came before the ``cas``; a later ``delete`` removes it. Without the lease
    (a plain ``set`` after the read) a count read just before a vote commits can be put
    back after that vote's ``delete``, and served stale until the story's next vote.
    A reader that finds another's lease reads MariaDB and leaves the cache alone."""

    LEASE = b"lease:"

    def __init__(self, cache: Any, conn: Any, reader: str) -> None:
        self.cache = cache
        self.conn = conn
        self._tokens = (f"{self.LEASE.decode()}{reader}:{n}".encode()
                        for n in itertools.count())
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(story: int) -> str:
        return f"vcount:{story}"

    def read(self, story: int) -> int | None:
        """The story's vote count (None if there is no such story)."""
        key = self.key(story)
        cached = self.cache.get(key)
        if cached is not None and not cached.startswith(self.LEASE):
            self.hits += 1
            return int(cached)
        self.misses += 1
        token = next(self._tokens) if cached is None else None
        leased = token is not None and self.cache.add(key, token, expire=LEASE_SECONDS,
                                                      noreply=False)
        rows = run_sql(self.conn, COLUMN_READ, (story,))
        count = int(rows[0][2]) if rows else None
        if leased and count is not None:
            held, cas_id = self.cache.gets(key)
            if held == token:
                self.cache.cas(key, str(count).encode(), cas_id, noreply=False)
        return count

    def vote(self, user: int, story: int) -> None:
        """The column's transaction, then the key's invalidation (pymemcache's default
        ``noreply``: the application does not wait for it)."""
        vote_in_column(self.conn, user, story)
        self.cache.delete(self.key(story))


def vote_in_column(conn: Any, user: int, story: int) -> None:
    """A vote with the hand-maintained count: the insert and the count's update in one
    transaction."""
    conn.query(b"BEGIN")
    run_sql(conn, VOTE, (user, story))
    run_sql(conn, BUMP, (story,))
    conn.commit()


class Session:
    """One application connection to a system: what it sends for a read and a vote."""

    def __init__(self, t: Target, reader: str) -> None:
        self.target = t
        self.conn = connect_mysql(t)
        self.cache: CountCache | None = None
        if t.cache_port is not None:
            from pymemcache.client.base import Client

            client = Client(("127.0.0.1", t.cache_port), no_delay=True)
            self.cache = CountCache(client, self.conn, reader)

    def read(self, story: int) -> int | None:
        if self.cache is not None:
            return self.cache.read(story)
        rows = run_sql(self.conn, self.target.read_sql, (story,))
        return int(rows[0][2]) if rows else None

    def vote(self, user: int, story: int) -> None:
        if self.cache is not None:
            self.cache.vote(user, story)
        elif self.target.bump:
            vote_in_column(self.conn, user, story)
        else:
            run_sql(self.conn, VOTE, (user, story))

    def close(self) -> None:
        self.conn.close()
        if self.cache is not None:
            self.cache.cache.close()


# ......................................................................... load generators


def generator(t: Target, w: Workload, seed: int, threads: int, start_at: float, warmup: float,
              seconds: float, out: Any) -> None:
    """One load-generator process: ``threads`` connections in a closed loop."""
    measure_from, measure_to = start_at + warmup, start_at + warmup + seconds
    results: list[dict[str, Any]] = []
    errors: list[str] = []

    def client(k: int) -> None:
        n_keys = 50_000
        keys = Zipf(w.stories, w.zipf, seed * 1000 + k).sample(n_keys)
        users = uniform_ints(0, w.users - 1, n_keys, seed * 1000 + k + 1)
        coins = uniform_ints(0, 999_999, n_keys, seed * 1000 + k + 2)
        limit = int(w.write_fraction * 1_000_000)
        read_ns: list[int] = []
        write_ns: list[int] = []
        written: list[int] = []
        session: Session | None = None
        try:
            session = Session(t, f"{seed}.{k}")
            clock = time.perf_counter_ns
            i = 0
            while time.time() < start_at:
                time.sleep(0.001)
            while True:
                now = time.time()
                if now >= measure_to:
                    break
                j = i % n_keys
                i += 1
                story = keys[j]
                t0 = clock()
                if coins[j] < limit:
                    session.vote(users[j], story)
                    written.append(story)
                    if now >= measure_from:
                        write_ns.append(clock() - t0)
                else:
                    count = session.read(story)
                    if now >= measure_from:
                        read_ns.append(clock() - t0)
                    if count is None:
                        errors.append(f"no row for story {story}")
            session.close()
        except Exception as exc:
            errors.append(repr(exc))
        cache = session.cache if session is not None else None
        results.append({"read_ns": read_ns, "write_ns": write_ns, "written": written,
                        "cache_hits": cache.hits if cache else 0,
                        "cache_misses": cache.misses if cache else 0})

    cpu_seconds = run_clients(client, threads, measure_from, measure_to)
    out.put({
        "read_ns": [x for r in results for x in r["read_ns"]],
        "write_ns": [x for r in results for x in r["write_ns"]],
        "written": [x for r in results for x in r["written"]],
        "cache_hits": sum(r["cache_hits"] for r in results),
        "cache_misses": sum(r["cache_misses"] for r in results),
        "cpu_seconds": cpu_seconds,
        "errors": errors[:5],
    })


def run_phase(t: Target, server_pids: list[int], w: Workload, args: argparse.Namespace,
              ctx: Any, seed: int) -> dict[str, Any]:
    load = load_average()
    parts, server_cpu, wall = run_generators(
        ctx, generator, lambda g, start_at: (t, w, seed * 100 + g, args.threads, start_at,
                                             args.warmup, args.seconds),
        args.generators, server_pids, args.warmup, args.seconds, t.name, timeout=120)
    reads = [x for part in parts for x in part["read_ns"]]
    writes = [x for part in parts for x in part["write_ns"]]
    seconds = args.seconds
    ops = len(reads) + len(writes)
    client_cpu = sum(part["cpu_seconds"] for part in parts)
    phase = {
        "load_average_at_start": load,
        "ops_per_s": ops / seconds,
        "reads_per_s": len(reads) / seconds,
        "writes_per_s": len(writes) / seconds,
        "latency_us": latency_summary(reads + writes) | {"p95_us": _pct(reads + writes, 95)},
        "read_latency_us": latency_summary(reads) | {"p95_us": _pct(reads, 95)},
        "write_latency_us": latency_summary(writes) | {"p95_us": _pct(writes, 95)},
        "server_cpu_seconds": server_cpu,
        "server_cores": server_cpu / wall,
        "server_cpu_us_per_op": 1e6 * server_cpu / ops if ops else None,
        "clients_cpu_seconds": client_cpu,
        "clients_cores": client_cpu / seconds,
        "clients_cpu_us_per_op": 1e6 * client_cpu / ops if ops else None,
        "written": [x for part in parts for x in part["written"]],
    }
    if t.cache_port is not None:  # over the whole phase, warm-up included
        hits = sum(part["cache_hits"] for part in parts)
        misses = sum(part["cache_misses"] for part in parts)
        phase["cache_hit_ratio"] = hits / (hits + misses) if hits + misses else None
    return phase


def _pct(values: list[int], pct: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))] / 1000


# ......................................................................... verification


def verify(t: Target, truth: list[int], ids: list[int]) -> list[str]:
    """Each story's count read as the application reads it (through the cache where there
    is one) against the true count."""
    problems = []
    session = Session(t, "verify")
    try:
        for story in ids:
            got = session.read(story)
            if got != truth[story]:
                problems.append(f"{t.name}: story {story} has {got} votes, "
                                f"expected {truth[story]}")
    finally:
        session.close()
    return problems


# ......................................................................... main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.vote_wire", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small run (under a minute)")
    p.add_argument("--mariadb", action="store_true",
                   help="include the baselines (MariaDB, memcached) in a --quick run")
    p.add_argument("--stories", type=int)
    p.add_argument("--votes", type=int)
    p.add_argument("--users", type=int, default=10_000)
    p.add_argument("--zipf", type=float, default=1.08)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--write-fraction", type=float, default=0.05,
                   help="share of operations that are votes (default 0.05)")
    p.add_argument("--generators", type=int, default=4, help="load-generator processes")
    p.add_argument("--threads", type=int, default=4, help="connections per generator")
    p.add_argument("--seconds", type=float, help="measured seconds per phase")
    p.add_argument("--warmup", type=float, help="seconds before measuring, per phase")
    p.add_argument("--repeat", type=int, help="rounds over the systems (median reported)")
    p.add_argument("--mariadb-port", type=int, default=33306)
    p.add_argument("--switch-interval", type=float, default=0.0005,
                   help="the rivulet server's GIL switch interval (default: rivulet serve's)")
    args = p.parse_args(argv)
    quick = args.quick
    args.stories = args.stories or (10_000 if quick else 100_000)
    args.votes = args.votes or (100_000 if quick else 1_000_000)
    args.seconds = args.seconds or (4.0 if quick else 20.0)
    args.warmup = args.warmup if args.warmup is not None else (1.0 if quick else 5.0)
    args.repeat = args.repeat or (1 if quick else 3)
    return args


def rotated(items: list[Any], by: int) -> list[Any]:
    """``items`` starting at index ``by`` (modulo their number): round r's order.

    >>> rotated(["a", "b", "c"], 4)
    ['b', 'c', 'a']
    """
    k = by % len(items) if items else 0
    return items[k:] + items[:k]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log = logger()
    began = time.time()
    load_at_start = busy_warning(log)
    w = Workload(args.stories, args.votes, args.users, args.zipf, args.seed, args.write_fraction)
    with_baselines = not args.quick or args.mariadb
    if not ensure_mysqlclient(log):
        log("the load generators need mysqlclient (MySQLdb); see the log above")
        return 2
    ctx = mp.get_context("spawn")
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    root = Path(tempfile.mkdtemp(prefix="rivulet-vote-wire-", dir=shm))
    log(f"vote_wire: {w.stories:,} stories, {w.votes:,} votes, {args.write_fraction:.0%} writes, "
        f"{args.generators} generator processes x {args.threads} connections (mysqlclient), "
        f"{args.seconds:g} s measured per phase, {args.repeat} round(s); data in {root}")
    rivulet_proc: RivuletServerProcess | None = None
    mariadb: MariaDB | None = None
    cache: Memcached | None = None
    phases: dict[str, list[dict[str, Any]]] = {}
    try:
        t0 = time.perf_counter()
        rivulet_proc = RivuletServerProcess(root / "rivulet", load_rivulet, (w,), ctx,
                                            switch_interval=args.switch_interval)
        log(f"rivulet: loaded and filled in {time.perf_counter() - t0:.1f} s, "
            f"port {rivulet_proc.port}")
        targets: list[tuple[Target, list[int]]] = [
            (Target("rivulet", rivulet_proc.port, "rivulet", NATURAL_READ, False),
             [rivulet_proc.pid])]
        if with_baselines:
            MariaDB.ensure_installed(log)
            Memcached.ensure_installed(log)
            mariadb = MariaDB(root / "mariadb", args.mariadb_port)
            t0 = time.perf_counter()
            mariadb.start()
            mariadb.load("col", w, column=True)
            mariadb.load("nat", w, column=False)
            mariadb.load("cached", w, column=True)
            log(f"mariadb: started and loaded in {time.perf_counter() - t0:.1f} s")
            cache = Memcached()
            cache.start()
            log(f"memcached: started on port {cache.port}")
            targets += [
                (Target("mariadb_column", mariadb.port, "col", COLUMN_READ, True),
                 [mariadb.pid]),
                (Target("mariadb_natural", mariadb.port, "nat", NATURAL_READ, False),
                 [mariadb.pid]),
                (Target("memcached", mariadb.port, "cached", COLUMN_READ, True, cache.port),
                 [cache.pid, mariadb.pid])]
        every_pid = sorted({p for _, pids in targets for p in pids})
        for rnd in range(args.repeat):
            for t, pids in rotated(targets, rnd):
                waited = quiesce(every_pid)
                r = run_phase(t, pids, w, args, ctx, seed=rnd * 11 + 1)
                r["round"] = rnd + 1
                r["quiesce_s"] = round(waited, 1)
                phases.setdefault(t.name, []).append(r)
                hit = (f"; cache hits {r['cache_hit_ratio']:.1%}"
                       if r.get("cache_hit_ratio") is not None else "")
                log(f"[{t.name}] round {rnd + 1}: {fmt_num(r['ops_per_s'])} ops/s "
                    f"(p50 {r['latency_us']['p50_us'] / 1000:.2f} ms, p95 "
                    f"{r['latency_us']['p95_us'] / 1000:.2f} ms); server {r['server_cores']:.2f} "
                    f"cores, {r['server_cpu_us_per_op']:.0f} µs/op; clients "
                    f"{r['clients_cores']:.2f} cores, {r['clients_cpu_us_per_op']:.0f} µs/op"
                    f"{hit}")

        # ---- verification: initial counts plus every vote written, in every system
        base = counts_of(initial_votes(w)[1], w.stories)
        ids = sorted(set(uniform_ints(0, w.stories - 1, 1000, args.seed + 9)) | set(range(10)))
        problems: list[str] = []
        rivulet_proc.settle()
        for t, _ in targets:
            truth = list(base)
            for r in phases[t.name]:
                for story in r["written"]:
                    truth[story] += 1
            problems += verify(t, truth, ids)
        log("verification: " + ("every system agrees with the true counts" if not problems
                                else f"{len(problems)} mismatches"))
    finally:
        if rivulet_proc is not None:
            rivulet_proc.stop()
        if cache is not None:
            cache.stop()
        if mariadb is not None:
            mariadb.stop()
        shutil.rmtree(root, ignore_errors=True)

    results = summarize(phases, args, w, problems)
    results["environment"]["load_average_at_start"] = load_at_start
    results["duration_s"] = round(time.time() - began, 1)
    path = write_results(NAME, results, args.quick)
    report(results)
    plot = plot_results(results, results_path(NAME, args.quick, "png"))
    log(f"results: {path}" + (f", {plot}" if plot else ""))
    for problem in problems[:10]:
        log("MISMATCH " + problem)
    return 1 if problems else 0


def median_round(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return sorted(runs, key=lambda r: r["ops_per_s"])[len(runs) // 2]


def paired(ours: list[dict[str, Any]], theirs: list[dict[str, Any]],
           ratio: Any) -> list[float]:
    """``ratio(our round, their round)`` for each round (each round ran both back to
    back)."""
    return [ratio(a, b) for a, b in zip(ours, theirs, strict=True)]


def throughput_ratio(ours: dict[str, Any], theirs: dict[str, Any]) -> float:
    """Our operations/s over theirs."""
    return float(ours["ops_per_s"] / theirs["ops_per_s"])


def server_cpu_ratio(ours: dict[str, Any], theirs: dict[str, Any]) -> float:
    """Their server CPU per operation over ours (above 1: our server costs less)."""
    return float(theirs["server_cpu_us_per_op"] / ours["server_cpu_us_per_op"])


def wire_ratio_bound(ours: dict[str, Any], theirs: dict[str, Any]) -> float:
    """The throughput ratio ours could reach with a server that cost nothing, given the
    CPU their phase used and our clients' CPU per operation: ``(c_m + s_m) / c_r`` (see
    the module docstring)."""
    return float((theirs["clients_cpu_us_per_op"] + theirs["server_cpu_us_per_op"])
                 / ours["clients_cpu_us_per_op"])


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(phases: dict[str, list[dict[str, Any]]], args: argparse.Namespace, w: Workload,
              problems: list[str]) -> dict[str, Any]:
    systems = {}
    for name, runs in phases.items():
        med = median_round(runs)
        systems[name] = {k: v for k, v in med.items() if k != "written"} | {
            "ops_per_s_rounds": [r["ops_per_s"] for r in runs],
            "rounds": [{k: v for k, v in r.items() if k != "written"} for r in runs],
        }
    riv = systems["rivulet"]
    baselines = [n for n in ("mariadb_column", "mariadb_natural", "memcached") if n in phases]
    round_ratios: dict[str, list[float]] = {}
    for name in baselines:
        round_ratios[f"rivulet_vs_{name}"] = paired(phases["rivulet"], phases[name],
                                                    throughput_ratio)
        round_ratios[f"server_cpu_per_op_{name}_vs_rivulet"] = paired(
            phases["rivulet"], phases[name], server_cpu_ratio)
    if "mariadb_column" in phases:
        round_ratios["wire_ratio_bound_vs_mariadb_column"] = paired(
            phases["rivulet"], phases["mariadb_column"], wire_ratio_bound)
    medians = {name: _median(r) for name, r in round_ratios.items()}
    p95_ms = riv["latency_us"]["p95_us"] / 1000
    cpu_target = target(medians.get("server_cpu_per_op_mariadb_column_vs_rivulet"), 1.5)
    return {
        "benchmark": NAME,
        "quick": args.quick,
        "params": {**asdict(w), "generators": args.generators,
                   "threads_per_generator": args.threads,
                   "connections": args.generators * args.threads, "seconds": args.seconds,
                   "warmup": args.warmup, "repeat": args.repeat,
                   "driver": "mysqlclient (statements run on the connection, not a cursor)",
                   "cache_client": "pymemcache",
                   "order": "each round runs every system back to back, the order rotated "
                            "by one system from round to round",
                   "rivulet_switch_interval": args.switch_interval,
                   "figure": "each system's median round by operations/s; a ratio "
                             "the median of the rounds' ratios",
                   "rivulet_read": NATURAL_READ, "mariadb_column_read": COLUMN_READ,
                   "mariadb_natural_read": NATURAL_READ,
                   "memcached_read": "get; on a miss: add (lease), " + COLUMN_READ
                                     + ", gets, cas",
                   "memcached_vote": "the column's transaction, then delete",
                   "mariadb_options": MARIADB_OPTIONS, "memcached_options": MEMCACHED_OPTIONS},
        "targets": {
            "wire_vs_mariadb_column_ratio": target(medians.get("rivulet_vs_mariadb_column"),
                                                   1.2),
            "wire_ratio_bound": figure(medians.get("wire_ratio_bound_vs_mariadb_column")),
            "server_cpu_per_op_vs_mariadb": cpu_target | {"stretch_goal": 2.0},
            "wire_p95_ms": target(p95_ms, 10.0, at_least=False),
            "wire_vs_mariadb_natural_ratio": target(medians.get("rivulet_vs_mariadb_natural"),
                                                    10.0),
            "wire_vs_memcached_ratio": figure(medians.get("rivulet_vs_memcached")),
        },
        "round_ratios": round_ratios,
        "systems": systems,
        "verification": {"ok": not problems, "problems": problems[:20]},
        "environment": environment(),
    }


def report(results: dict[str, Any]) -> None:
    rows = []
    for name, s in results["systems"].items():
        rows.append([name, fmt_num(s["ops_per_s"]), fmt_num(s["reads_per_s"]),
                     fmt_num(s["writes_per_s"]),
                     f"{s['read_latency_us']['p50_us'] / 1000:.2f}",
                     f"{(s['latency_us']['p95_us'] or 0) / 1000:.2f}",
                     f"{s['server_cores']:.2f}", f"{s['server_cpu_us_per_op']:.0f}",
                     f"{s['clients_cores']:.2f}", f"{s['clients_cpu_us_per_op']:.0f}"])
    print_table("vote over the MySQL protocol (median round)",
                ["system", "ops/s", "reads/s", "votes/s", "read p50 ms", "p95 ms",
                 "server cores", "server µs/op", "client cores", "client µs/op"], rows)
    rows = []
    for k, v in results["targets"].items():
        if v["goal"] is None:
            rows.append([k, fmt_num(v["value"]), "(recorded)", ""])
            continue
        rows.append([k, fmt_num(v["value"]),
                     f"{'<=' if v['direction'] == 'at most' else '>='} {v['goal']}",
                     "met" if v["met"] else "MISSED"])
    print_table("targets", ["target", "value", "goal", ""], rows)


def plot_results(results: dict[str, Any], path: Path) -> Path | None:
    systems = results["systems"]
    names = list(systems)
    return bar_chart(path, "vote over the MySQL protocol", [
        {"title": "throughput (operations/s)", "ylabel": "ops/s", "groups": names,
         "series": {"ops/s": [systems[n]["ops_per_s"] for n in names]}},
        {"title": "latency (ms)", "ylabel": "ms", "groups": names,
         "series": {"p50": [systems[n]["latency_us"]["p50_us"] / 1000 for n in names],
                    "p95": [(systems[n]["latency_us"]["p95_us"] or 0) / 1000 for n in names]},
         "goals": [{"value": 10, "label": "p95 goal"}]},
        {"title": "CPU per operation (µs)", "ylabel": "µs", "groups": names,
         "series": {"server": [systems[n]["server_cpu_us_per_op"] for n in names],
                    "load generators": [systems[n]["clients_cpu_us_per_op"] for n in names]}},
    ])


if __name__ == "__main__":
    raise SystemExit(main())
