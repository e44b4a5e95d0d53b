"""The vote benchmark (Noria paper, section 8.2): stories with their vote count.

One write, inserting a vote; one read, a story with its vote count (``StoriesWithVC``).
Story popularity is Zipf-distributed (s = 1.08) for both votes and reads; user ids are
uniform. Votes are written in batches of 1,000, one durable commit per batch.

Systems, each on its own data directory, with the same durability (SQLite WAL,
``synchronous=NORMAL``) and the same batch size:

* ``rivulet`` -- the program of the paper's Figure 2: ``VoteCount`` (votes grouped by story)
  left-joined to ``stories``, read with ``db.view("StoriesWithVC").lookup(id)``. Writes
  are ``db.table("votes").insert_many(batch)``, timed until ``db.settle()`` returns.
* ``sqlite_natural`` -- SQLite answering the natural ``JOIN ... GROUP BY`` query on every
  read, with an index on ``votes(story_id)``.
* ``sqlite_column`` -- SQLite with a hand-maintained ``stories.vcount`` column, updated in the
  same transaction as each vote insert (Lobsters' approach); reads are a primary-key lookup.
  It has the indexes that application needs: none on ``votes`` (its reads use the column),
  so its writes are as cheap as they are for the application it stands for.

Each system's write phase runs ``--repeat`` times (3 by default) on fresh data, round-robin
over the systems, and the median is reported. Reads are measured on one thread for a fixed
time: with no writes running, while another thread inserts vote batches as fast as it can,
and while it inserts them at a fixed rate (``--writer-rate``, the same for every system;
in CPython the unthrottled case depends on how the GIL happens to be shared between the two
threads, so the paced one is the like-for-like comparison). At the end, the vote count of
1,000 random stories (plus the most popular ones) must agree across all systems and with
the true counts, or the benchmark fails (exit status 1).

Two write-only diagnostics follow: ``sqlite_column_indexed``, the same with an index on
``votes(story_id)`` (which its reads do not need: earlier runs compared with it, which
flattered rivulet's writes), and rivulet with the natural ``LEFT JOIN ... GROUP BY`` view.

Run from the repository root: ``python -m bench.vote`` (100,000 stories, 1,000,000 votes;
``bench/results/vote.json`` and ``vote.png``) or ``python -m bench.vote --quick`` (10,000
stories, 100,000 votes, under a minute; ``vote.quick.json`` and ``vote.quick.png``).
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import rivulet
from bench.common import (
    Timer,
    Zipf,
    bar_chart,
    batches,
    busy_warning,
    counts_of,
    environment,
    fmt_num,
    logger,
    measure_rate,
    print_table,
    results_path,
    sample_latencies,
    target,
    uniform_ints,
    write_results,
)

NAME = "vote"

STORIES_SQL = "CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(255) NOT NULL)"
VOTES_SQL = "CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL)"

#: rivulet's program. The paper's Figure 2 joins stories with a VoteCount view; a LEFT JOIN
#: and IFNULL make stories without votes answer 0 (the natural LEFT JOIN ... GROUP BY form
#: is measured separately as a diagnostic, see ``RIVULET_NATURAL_VIEW``).
RIVULET_VIEWS = {
    "paper": [
        "CREATE VIEW VoteCount AS "
        "SELECT story_id, COUNT(*) AS vcount FROM votes GROUP BY story_id",
        "CREATE VIEW StoriesWithVC AS "
        "SELECT stories.id, stories.title, IFNULL(VoteCount.vcount, 0) AS vcount "
        "FROM stories LEFT JOIN VoteCount ON stories.id = VoteCount.story_id "
        "WHERE stories.id = ?",
    ],
    "natural": [
        "CREATE VIEW StoriesWithVC AS "
        "SELECT stories.id, stories.title, COUNT(votes.user_id) AS vcount "
        "FROM stories LEFT JOIN votes ON stories.id = votes.story_id "
        "WHERE stories.id = ? GROUP BY stories.id",
    ],
}

SQLITE_PRAGMAS = ("journal_mode=WAL", "synchronous=NORMAL", "cache_size=-65536",
                  "temp_store=MEMORY")  # the same as rivulet's storage sets

NATURAL_READ_SQL = (
    "SELECT stories.id, title, COUNT(votes.user_id) FROM stories "
    "LEFT JOIN votes ON stories.id = votes.story_id WHERE stories.id = ? GROUP BY stories.id"
)
COLUMN_READ_SQL = "SELECT id, title, vcount FROM stories WHERE id = ?"

Vote = tuple[int, int]  # (user_id, story_id)


# ......................................................................... systems


class System:
    """What the benchmark does to a system; each one keeps its own data directory."""

    name = ""
    description = ""
    indexes: dict[str, list[str]] = {}
    program: list[str] = []

    def load_stories(self, stories: list[tuple[int, str]]) -> None:
        raise NotImplementedError

    def write(self, batch: Sequence[Vote]) -> None:
        """Insert one batch of votes, durably (returns once committed)."""
        raise NotImplementedError

    def settle(self) -> None:
        """Wait until every written vote is visible to reads."""

    def lookup(self) -> Callable[[int], list[tuple]]:
        """The read call for the measuring thread: story id -> rows."""
        raise NotImplementedError

    def concurrent_writer(self) -> Callable[[Sequence[Vote]], None]:
        """The write call for a thread running beside the readers."""
        return self.write

    def vote_count(self, story_id: int) -> tuple[Any, ...] | None:
        rows = self.lookup()(story_id)
        return rows[0] if len(rows) == 1 else None

    def close(self) -> None:
        pass


class Rivulet(System):
    name = "rivulet"

    def __init__(self, directory: Path, form: str = "paper") -> None:
        self.form = form
        self.description = (
            "rivulet, durability='normal' (SQLite WAL, synchronous=NORMAL); "
            + ("VoteCount view LEFT JOINed to stories (paper Figure 2)" if form == "paper"
               else "natural LEFT JOIN ... GROUP BY view")
        )
        self.indexes = {
            "sqlite": ["stories: id (INTEGER PRIMARY KEY = rowid)",
                       "votes: hidden rowid only (no secondary index)"],
            "in_memory_dataflow": ["dataflow state and reader index maintained by rivulet "
                                   "(group/join keys on story id)"],
        }
        self.program = [STORIES_SQL, VOTES_SQL, *RIVULET_VIEWS[form]]
        self.db = rivulet.open(directory)
        for sql in self.program:
            self.db.execute(sql)
        self.votes = self.db.table("votes")
        self.view = self.db.view("StoriesWithVC")

    def load_stories(self, stories: list[tuple[int, str]]) -> None:
        table = self.db.table("stories")
        for chunk in batches(stories, 10_000):
            table.insert_many(chunk)
        self.db.settle(timeout=None)

    def write(self, batch: Sequence[Vote]) -> None:
        self.votes.insert_many(batch)

    def settle(self) -> None:
        self.db.settle(timeout=None)

    def lookup(self) -> Callable[[int], list[tuple]]:
        return self.view.lookup

    def close(self) -> None:
        self.db.close()


class SqliteBase(System):
    """SQLite with rivulet's durability pragmas; one writer and one reader connection."""

    schema: list[str] = []
    read_sql = ""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / "sqlite.db"
        self.conn = self._connect()
        self.conn.executescript(";\n".join(self.schema))
        self.reader = None  # opened after the load, used by the measuring thread
        self.program = list(self.schema)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        for pragma in SQLITE_PRAGMAS:
            conn.execute(f"PRAGMA {pragma}")
        return conn

    def load_stories(self, stories: list[tuple[int, str]]) -> None:
        conn = self.conn
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO stories (id, title) VALUES (?, ?)", stories)
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
        self.reader = self._connect()

    def lookup(self) -> Callable[[int], list[tuple]]:
        cursor = self.reader.cursor()  # type: ignore[union-attr]
        sql = self.read_sql

        def lookup(story_id: int) -> list[tuple]:
            return cursor.execute(sql, (story_id,)).fetchall()

        return lookup

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()
        self.conn.close()


class SqliteNatural(SqliteBase):
    name = "sqlite_natural"
    description = ("SQLite, WAL + synchronous=NORMAL, 1 transaction per batch; reads run the "
                   "natural LEFT JOIN ... GROUP BY query")
    indexes = {"sqlite": ["stories: id (INTEGER PRIMARY KEY = rowid)",
                          "votes: hidden rowid + votes_story_id ON votes(story_id)"]}
    schema = [
        "CREATE TABLE stories (id INTEGER PRIMARY KEY, title TEXT NOT NULL)",
        "CREATE TABLE votes (user_id INTEGER NOT NULL, story_id INTEGER NOT NULL)",
        "CREATE INDEX votes_story_id ON votes (story_id)",
    ]
    read_sql = NATURAL_READ_SQL

    def write(self, batch: Sequence[Vote]) -> None:
        conn = self.conn
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO votes (user_id, story_id) VALUES (?, ?)", batch)
        conn.execute("COMMIT")


class SqliteColumn(SqliteBase):
    name = "sqlite_column"
    description = ("SQLite, WAL + synchronous=NORMAL, 1 transaction per batch; each vote is an "
                   "INSERT plus UPDATE stories SET vcount = vcount + 1; reads by primary key")
    read_sql = COLUMN_READ_SQL

    def __init__(self, directory: Path, *, index: bool = False) -> None:
        self.schema = [
            "CREATE TABLE stories (id INTEGER PRIMARY KEY, title TEXT NOT NULL, "
            "vcount INTEGER NOT NULL DEFAULT 0)",
            "CREATE TABLE votes (user_id INTEGER NOT NULL, story_id INTEGER NOT NULL)",
        ]
        if index:
            self.schema.append("CREATE INDEX votes_story_id ON votes (story_id)")
            self.name = "sqlite_column_indexed"
        self.indexes = {"sqlite": [
            "stories: id (INTEGER PRIMARY KEY = rowid)",
            "votes: hidden rowid" + (" + votes_story_id ON votes(story_id)" if index
                                     else " only (no secondary index)"),
        ]}
        super().__init__(directory)

    def write(self, batch: Sequence[Vote]) -> None:
        conn = self.conn
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO votes (user_id, story_id) VALUES (?, ?)", batch)
        conn.executemany("UPDATE stories SET vcount = vcount + 1 WHERE id = ?",
                         [(story,) for _, story in batch])
        conn.execute("COMMIT")


# ......................................................................... phases


def write_phase(system: System, vote_batches: list[Sequence[Vote]]) -> dict[str, Any]:
    """Insert every batch in turn (one thread), timed until the system has settled."""
    gc.collect()
    with Timer() as t:
        for batch in vote_batches:
            system.write(batch)
        submitted = t.elapsed()
        system.settle()
    votes = sum(len(b) for b in vote_batches)
    return {
        "votes": votes,
        "batches": len(vote_batches),
        "seconds": t.seconds,
        "votes_per_s": votes / t.seconds,
        "process_cpu_seconds": t.cpu_seconds,
        "acknowledged_seconds": submitted,
        "settle_wait_seconds": t.seconds - submitted,
    }


class ConcurrentWriter:
    """A thread inserting batches from a cyclic stream until stopped; counts what it wrote."""

    def __init__(self, write: Callable[[Sequence[Vote]], None],
                 stream: list[Sequence[Vote]], start: int, rate: float = 0.0) -> None:
        self.write, self.stream, self.next = write, stream, start
        self.rate = rate  # votes/s; 0 = as fast as it can
        self.first = start
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="bench-writer", daemon=True)
        self.seconds = 0.0

    def _run(self) -> None:
        start = time.perf_counter()
        votes = 0
        try:
            while not self.stop.is_set():
                batch = self.stream[self.next % len(self.stream)]
                self.write(batch)
                self.next += 1
                votes += len(batch)
                if self.rate:
                    delay = start + votes / self.rate - time.perf_counter()
                    if delay > 0:
                        self.stop.wait(delay)
        except BaseException as exc:  # reported by the main thread
            self.error = exc
        self.seconds = time.perf_counter() - start

    def __enter__(self) -> ConcurrentWriter:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        if self.error is not None:
            raise RuntimeError(f"the concurrent writer failed: {self.error!r}") from self.error

    def summary(self) -> dict[str, Any]:
        done = self.next - self.first
        votes = sum(len(self.stream[i % len(self.stream)]) for i in range(self.first, self.next))
        return {"batches": done, "votes": votes, "seconds": self.seconds,
                "votes_per_s": votes / self.seconds if self.seconds else 0.0}


def read_phase(system: System, keys: list[int], seconds: float, latency_samples: int,
               ) -> dict[str, Any]:
    lookup = system.lookup()
    # Warm up (statement caches, reader answer caches): every key once, so that the phase
    # measures reads of warm state. Writes no longer fill keys nobody read (issue 32), so
    # without it the first read of each key, a miss filled by an upquery, would be timed.
    for k in dict.fromkeys(keys):
        lookup(k)
    gc.collect()
    rate = measure_rate(lookup, keys, seconds)
    latency = sample_latencies(lookup, keys[::-1], samples=latency_samples,
                               max_seconds=max(0.5, seconds / 3))
    return {"lookups": rate["calls"], "seconds": rate["seconds"],
            "lookups_per_s": rate["per_s"], "process_cpu_seconds": rate["process_cpu_seconds"],
            "latency_us": latency}


def read_under_writes_phase(system: System, keys: list[int], seconds: float,
                            latency_samples: int, stream: list[Sequence[Vote]], start: int,
                            rate: float = 0.0) -> tuple[dict[str, Any], int]:
    """Reads while another thread writes; returns the figures and the stream position."""
    lookup = system.lookup()
    writer = ConcurrentWriter(system.concurrent_writer(), stream, start, rate)
    with writer:
        time.sleep(min(0.2, seconds / 10))  # let the writer get going
        rate = measure_rate(lookup, keys, seconds)
        latency = sample_latencies(lookup, keys[::-1], samples=latency_samples,
                                   max_seconds=max(0.5, seconds / 3))
    with Timer() as t:
        system.settle()
    return {
        "lookups": rate["calls"], "seconds": rate["seconds"], "lookups_per_s": rate["per_s"],
        "process_cpu_seconds": rate["process_cpu_seconds"],
        "latency_us": latency, "concurrent_writer": writer.summary(),
        "settle_after_seconds": t.seconds,
    }, writer.next


# ......................................................................... verification


def verify(systems: dict[str, System], truth: list[int], story_ids: list[int],
           titles: dict[int, str]) -> dict[str, Any]:
    """Every system's (id, title, count) for ``story_ids`` against the true counts."""
    mismatches: list[dict[str, Any]] = []
    for sid in story_ids:
        expected = (sid, titles[sid], truth[sid])
        for name, system in systems.items():
            got = system.vote_count(sid)
            if got is None or tuple(got) != expected:
                mismatches.append({"system": name, "story_id": sid,
                                   "expected": list(expected),
                                   "got": None if got is None else list(got)})
    return {"ok": not mismatches, "stories_checked": len(story_ids),
            "systems": sorted(systems), "mismatches": len(mismatches),
            "first_mismatches": mismatches[:20]}


# ......................................................................... main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.vote", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="10,000 stories, 100,000 votes, 1 s reads (writes vote.quick.json)")
    p.add_argument("--stories", type=int, help="stories (default 100,000; quick 10,000)")
    p.add_argument("--votes", type=int, help="votes written (default 1,000,000; quick 100,000)")
    p.add_argument("--batch", type=int, default=1000, help="votes per commit (default 1,000)")
    p.add_argument("--repeat", type=int, default=3,
                   help="write phases per system, each on fresh data; the median is reported "
                        "(default 3)")
    p.add_argument("--users", type=int, default=10_000, help="user ids drawn from 0..users-1")
    p.add_argument("--zipf", type=float, default=1.08, help="Zipf exponent s (default 1.08)")
    p.add_argument("--read-seconds", type=float, help="duration of each read phase (3; quick 1)")
    p.add_argument("--writer-rate", type=float, default=10_000,
                   help="votes/s of the writer in the second reads-under-writes phase, the same "
                        "for every system (default 10,000; 0 skips that phase). The first one "
                        "writes as fast as it can.")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--rivulet-form", choices=sorted(RIVULET_VIEWS), default="paper",
                   help="rivulet's StoriesWithVC program (default: paper, VoteCount joined)")
    p.add_argument("--natural-view-votes", type=int, default=None,
                   help="votes for the diagnostic run of rivulet with the natural LEFT JOIN ... "
                        "GROUP BY view (default: all of --votes; 0 skips it)")
    p.add_argument("--no-indexed", action="store_true",
                   help="skip the write-only run of sqlite_column with a votes(story_id) index")
    p.add_argument("--data-dir", type=Path, help="parent of the systems' data directories "
                   "(default: a fresh temporary directory, removed afterwards)")
    p.add_argument("--keep", action="store_true", help="keep the data directories")
    p.add_argument("--no-plot", action="store_true")
    args = p.parse_args(argv)
    args.stories = args.stories or (10_000 if args.quick else 100_000)
    args.votes = args.votes or (100_000 if args.quick else 1_000_000)
    args.read_seconds = args.read_seconds or (1.0 if args.quick else 3.0)
    if args.natural_view_votes is None:
        args.natural_view_votes = args.votes
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.time()
    log = logger()
    parent = args.data_dir or Path(tempfile.mkdtemp(prefix="rivulet-bench-vote-"))
    parent.mkdir(parents=True, exist_ok=True)
    load_at_start = busy_warning(log)

    # ---- workload (not timed)
    n, batch = args.stories, args.batch
    log(f"vote benchmark: {n:,} stories, {args.votes:,} votes in batches of {batch:,}, "
        f"Zipf s={args.zipf}, {'quick' if args.quick else 'full'} run, data in {parent}")
    stories = [(i, f"story {i}") for i in range(n)]
    titles = dict(stories)
    popularity = Zipf(n, args.zipf, args.seed)
    votes: list[Vote] = list(zip(uniform_ints(0, args.users - 1, args.votes, args.seed + 1),
                                 popularity.sample(args.votes)))
    vote_batches = batches(votes, batch)
    extra_n = max(batch, args.votes // 2)  # cycled through by the concurrent writers
    extra = list(zip(uniform_ints(0, args.users - 1, extra_n, args.seed + 2),
                     Zipf(n, args.zipf, args.seed + 3).sample(extra_n)))
    extra_batches = batches(extra, batch)
    read_keys = Zipf(n, args.zipf, args.seed + 4).sample(200_000)
    latency_samples = 20_000 if args.quick else 50_000
    check_ids = sorted(set(uniform_ints(0, n - 1, 1000, args.seed + 5)) | set(range(10)))

    params = {
        "stories": n, "votes": args.votes, "batch_size": batch, "users": args.users,
        "zipf_s": args.zipf, "seed": args.seed,
        "popularity": "story id k has rank k (id 0 most popular), for votes and reads alike",
        "zipf_sampler": popularity.backend,
        "top_story_share": popularity.probability(0),
        "write_repeats": args.repeat,
        "writer_rate": args.writer_rate,
        "write_figure": "median votes/s of the repeats (all runs in write_runs)",
        "read_seconds": args.read_seconds, "read_threads": 1,
        "read_keys": "Zipf-distributed story ids (200,000 drawn, cycled)",
        "latency_samples_max": latency_samples,
        "concurrent_writer": "one thread inserting batches of the same size: unthrottled "
                             "(reads_under_writes)" + (
                                 f", then paced at {args.writer_rate:,.0f} votes/s "
                                 "(reads_under_paced_writes)" if args.writer_rate else ""),
        "durability": "SQLite WAL + synchronous=NORMAL, one transaction per batch (all systems)",
        "sqlite_pragmas": list(SQLITE_PRAGMAS),
        "rivulet_form": args.rivulet_form,
    }

    results: dict[str, Any] = {"benchmark": NAME, "quick": args.quick, "params": params,
                               "systems": {}, "diagnostics": {}}
    systems: dict[str, System] = {}
    positions: dict[str, int] = {}
    try:
        # ---- write phases: every system on a fresh directory, round-robin over the
        # repeats so that a burst of outside load does not fall on one system only; the
        # last round's instances are kept for the read phases and the verification
        makers: list[tuple[str, Callable[[Path], System]]] = [
            ("rivulet", lambda d: Rivulet(d, args.rivulet_form)),
            ("sqlite_column", SqliteColumn),
            ("sqlite_natural", SqliteNatural),
        ]
        write_runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in makers}
        for rnd in range(args.repeat):
            for name, make in makers:
                directory = parent / f"{name}.{rnd}"
                system = make(directory)
                keep = rnd == args.repeat - 1
                try:
                    system.load_stories(stories)
                    w = write_phase(system, vote_batches)
                except BaseException:
                    system.close()
                    raise
                write_runs[name].append(w)
                log(f"[{name}] write run {rnd + 1}/{args.repeat}: {fmt_num(w['votes_per_s'])} "
                    f"votes/s ({w['seconds']:.2f} s, settle wait {w['settle_wait_seconds']:.2f} s)")
                if keep:
                    systems[name] = system
                else:
                    system.close()
                    shutil.rmtree(directory, ignore_errors=True)

        # ---- read phases, on the systems holding the votes
        for name, system in systems.items():
            runs = write_runs[name]
            w = sorted(runs, key=lambda r: r["votes_per_s"])[len(runs) // 2]  # the median run
            r = read_phase(system, read_keys, args.read_seconds, latency_samples)
            log(f"[{name}] idle reads: {fmt_num(r['lookups_per_s'])} lookups/s, "
                f"p50 {r['latency_us'].get('p50_us', 0):.1f} µs")
            rw, position = read_under_writes_phase(
                system, read_keys, args.read_seconds, latency_samples, extra_batches, 0, 0.0)
            log(f"[{name}] reads under writes: {fmt_num(rw['lookups_per_s'])} lookups/s "
                f"(writer {fmt_num(rw['concurrent_writer']['votes_per_s'])} votes/s)")
            paced = None
            if args.writer_rate:
                paced, position = read_under_writes_phase(
                    system, read_keys, args.read_seconds, latency_samples, extra_batches,
                    position, args.writer_rate)
                log(f"[{name}] reads under paced writes: {fmt_num(paced['lookups_per_s'])} "
                    f"lookups/s (writer {fmt_num(paced['concurrent_writer']['votes_per_s'])} "
                    "votes/s)")
            positions[name] = position
            results["systems"][name] = {
                "description": system.description,
                "program": system.program,
                "indexes": system.indexes,
                "votes_per_s": w["votes_per_s"],
                "votes_per_s_runs": [x["votes_per_s"] for x in runs],
                "lookups_per_s": r["lookups_per_s"],
                "lookups_per_s_under_writes": rw["lookups_per_s"],
                "lookup_p50_us": r["latency_us"].get("p50_us"),
                "lookup_p99_us": r["latency_us"].get("p99_us"),
                "lookup_p50_us_under_writes": rw["latency_us"].get("p50_us"),
                "lookup_p99_us_under_writes": rw["latency_us"].get("p99_us"),
                "write": w, "write_runs": runs, "reads_idle": r, "reads_under_writes": rw,
            }
            if paced is not None:
                results["systems"][name].update({
                    "lookups_per_s_under_paced_writes": paced["lookups_per_s"],
                    "lookup_p50_us_under_paced_writes": paced["latency_us"].get("p50_us"),
                    "lookup_p99_us_under_paced_writes": paced["latency_us"].get("p99_us"),
                    "reads_under_paced_writes": paced,
                })

        # ---- diagnostics: write-only variants
        if not args.no_indexed:
            system = SqliteColumn(parent / "indexed", index=True)
            system.load_stories(stories)
            w = write_phase(system, vote_batches)
            log(f"[{system.name}] {fmt_num(w['votes_per_s'])} votes/s (write phase only)")
            results["diagnostics"][system.name] = {
                "description": system.description + " -- with an index on votes(story_id) "
                               "(its reads do not need it); write phase only",
                "indexes": system.indexes, "votes_per_s": w["votes_per_s"], "write": w}
            system.close()
        if args.natural_view_votes:
            results["diagnostics"]["rivulet_natural_view"] = natural_view_diagnostic(
                parent / "natural", args, stories, titles, vote_batches, check_ids, log)

        # ---- verification, after bringing every system to the same votes
        last = max(positions.values())
        for name, system in systems.items():
            for i in range(positions[name], last):
                system.write(extra_batches[i % len(extra_batches)])
            system.settle()
        written_extra = [v for i in range(last) for v in extra_batches[i % len(extra_batches)]]
        truth = counts_of((s for _, s in [*votes, *written_extra]), n)
        log(f"verifying {len(check_ids):,} stories across {', '.join(systems)} "
            f"({len(votes) + len(written_extra):,} votes in all)")
        results["verification"] = verify(systems, truth, check_ids, titles)
    finally:
        for system in systems.values():
            system.close()
        if not args.keep and args.data_dir is None:
            shutil.rmtree(parent, ignore_errors=True)

    # ---- targets, output
    riv, col = results["systems"]["rivulet"], results["systems"]["sqlite_column"]
    results["targets"] = {
        "write_votes_per_s": target(riv["votes_per_s"], 100_000),
        "lookups_per_s": target(riv["lookups_per_s"], 1_000_000),
        "read_speedup_vs_sqlite_column": target(riv["lookups_per_s"] / col["lookups_per_s"], 5.0),
        "write_speedup_vs_sqlite_column": target(riv["votes_per_s"] / col["votes_per_s"], 1.0),
    }
    results["targets_note"] = (
        "Targets are stated at 1,000,000 votes over 100,000 stories"
        + (" (this quick run is smaller: indicative only)." if args.quick else ".")
        + " lookups_per_s and read_speedup use reads with no writes running; votes/s are "
          "durable and timed until settle() returns."
    )
    results["environment"] = {**environment(), "load_average_at_start": load_at_start}
    results["duration_s"] = time.time() - started
    path = write_results(NAME, results, args.quick)
    report(results)
    if not args.no_plot:
        plot = plot_results(results, results_path(NAME, args.quick, "png"))
        if plot:
            log(f"plot: {plot}")
    log(f"results: {path}")
    if not results["verification"]["ok"]:
        v = results["verification"]
        print(f"\nERROR: vote counts disagree for {v['mismatches']} (system, story) pairs; "
              f"first: {v['first_mismatches'][:5]}", file=sys.stderr)
        return 1
    return 0


def natural_view_diagnostic(directory: Path, args: argparse.Namespace,
                            stories: list[tuple[int, str]], titles: dict[int, str],
                            vote_batches: list[Sequence[Vote]], check_ids: list[int],
                            log: Callable[[str], None]) -> dict[str, Any]:
    """Write throughput of rivulet with the natural LEFT JOIN ... GROUP BY view (a prefix of
    the votes), and its counts checked against the truth."""
    n_batches = max(1, args.natural_view_votes // args.batch)
    part = vote_batches[:n_batches]
    system = Rivulet(directory, "natural")
    try:
        system.load_stories(stories)
        w = write_phase(system, part)
        truth = counts_of((s for b in part for _, s in b), len(stories))
        check = verify({"rivulet_natural_view": system}, truth, check_ids, titles)
    finally:
        system.close()
    log(f"[rivulet, natural LEFT JOIN ... GROUP BY view] {fmt_num(w['votes_per_s'])} votes/s "
        f"over the first {w['votes']:,} votes; counts {'ok' if check['ok'] else 'WRONG'}")
    return {"description": system.description + "; write phase only, first "
                           f"{w['votes']:,} votes", "program": system.program,
            "votes_per_s": w["votes_per_s"], "write": w, "verification": check}


def report(results: dict[str, Any]) -> None:
    systems = results["systems"]
    rows = []
    for name, s in systems.items():
        writer = s["reads_under_writes"]["concurrent_writer"]
        runs = s["votes_per_s_runs"]
        spread = f" ({fmt_num(min(runs))}-{fmt_num(max(runs))})" if len(runs) > 1 else ""
        paced = s.get("reads_under_paced_writes")
        rows.append([
            name, fmt_num(s["votes_per_s"]) + spread, fmt_num(s["lookups_per_s"]),
            f"{s['lookup_p50_us']:.1f} / {s['lookup_p99_us']:.1f}",
            f"{fmt_num(s['lookups_per_s_under_writes'])} @ {fmt_num(writer['votes_per_s'])}",
            f"{s['lookup_p50_us_under_writes']:.1f} / {s['lookup_p99_us_under_writes']:.1f}",
            f"{fmt_num(paced['lookups_per_s'])} @ "
            f"{fmt_num(paced['concurrent_writer']['votes_per_s'])}" if paced else "-",
        ])
    for name, d in results["diagnostics"].items():
        rows.append([f"{name} *", fmt_num(d["votes_per_s"]), "", "", "", "", ""])
    p = results["params"]
    print_table(
        f"vote: {p['stories']:,} stories, {p['votes']:,} votes, batches of {p['batch_size']:,}, "
        f"Zipf {p['zipf_s']}{' (quick)' if results['quick'] else ''}",
        ["system", "votes/s (range)" if p["write_repeats"] > 1 else "votes/s", "reads/s idle",
         "p50/p99 µs", "reads/s @ writer votes/s", "p50/p99 µs", "reads/s @ paced writer"],
        rows,
    )
    print("* write phase only (diagnostic); reads/s @ writer votes/s: one thread reading while "
          "another writes")
    print_table(
        "targets" + (" (quick run: indicative only)" if results["quick"] else ""),
        ["target", "value", "goal", "met"],
        [[k, f"{t['value']:.3g}" if t["value"] < 1000 else fmt_num(t["value"]),
          f"{t['goal']:.3g}" if t["goal"] < 1000 else fmt_num(t["goal"]),
          "yes" if t["met"] else "NO"] for k, t in results["targets"].items()],
    )
    v = results["verification"]
    print(f"verification: {'ok' if v['ok'] else 'FAILED'} ({v['stories_checked']} stories x "
          f"{len(v['systems'])} systems, {v['mismatches']} mismatches)")


def plot_results(results: dict[str, Any], path: Path) -> Path | None:
    systems = results["systems"]
    names = list(systems)
    write_groups = names + list(results["diagnostics"])
    write_values = [systems[n]["votes_per_s"] for n in names] + [
        d["votes_per_s"] for d in results["diagnostics"].values()]
    labels = {"rivulet": "rivulet", "sqlite_column": "sqlite\ncolumn",
              "sqlite_natural": "sqlite\nnatural", "rivulet_natural_view": "rivulet\nnatural view",
              "sqlite_column_indexed": "sqlite column\n+ votes index"}
    p = results["params"]
    return bar_chart(
        path,
        f"vote: {p['stories']:,} stories, {p['votes']:,} votes (Zipf {p['zipf_s']}, batches of "
        f"{p['batch_size']:,}){' — quick' if results['quick'] else ''}",
        [
            {"title": "writes (durable, until settled)", "ylabel": "votes/s",
             "groups": [labels.get(g, g) for g in write_groups],
             "series": {"votes/s": write_values}, "log": False,
             "goals": [{"value": 100_000, "label": "goal 100k"}]},
            {"title": "reads (one thread)", "ylabel": "lookups/s",
             "groups": [labels.get(g, g) for g in names],
             "series": {"idle": [systems[n]["lookups_per_s"] for n in names],
                        "under writes (unthrottled)": [systems[n]["lookups_per_s_under_writes"]
                                                       for n in names],
                        **({f"under writes ({fmt_num(p['writer_rate'])} votes/s)": [
                            systems[n].get("lookups_per_s_under_paced_writes") for n in names]}
                           if p.get("writer_rate") else {})},
             "goals": [{"value": 1_000_000, "label": "goal 1M"}]},
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
