"""Lazy schema changes under load (issue 6, part 3): ALTER TABLE and a split on a big table.

Program: ``stories`` and ``votes (user_id, story_id, ts)``, and the view ``StoriesWithVC``
(a story and its vote count by id). Data: 200,000 stories and 3,000,000 votes (``--quick``:
20,000 and 300,000), loaded with ``bulk_insert``.

Workload (``--seconds``, 30; quick 12): one thread reads ``StoriesWithVC`` by Zipf story id
as fast as it can, one writes votes (200 per commit, at most 5,000 votes/s). A third of the
way in, three schema changes on ``votes``, one after the other:

* ``ALTER TABLE votes ADD COLUMN weight INT NOT NULL DEFAULT 1`` (no row changes);
* ``ALTER TABLE votes MODIFY ts VARCHAR(20)`` (every row converted, lazily: by the
  background thread, by writes, and on the fly for reads);
* ``CREATE TABLE story_votes AS SELECT story_id, COUNT(*) AS n FROM votes GROUP BY
  story_id`` (an aggregation split off, copied lazily by key).

Reported: how long each statement takes to return; how long the background work takes to
finish and its rows per second; reads and writes per second before, while the background
work runs, and after. Baseline, in the same run on the same data: the *eager* way, which
holds writes for the whole time (SQLite rebuilding the table with the column converted,
and SQLite's own CREATE TABLE ... AS SELECT).

Targets (ours, for the issue's "applied at once" and "keeps serving"): ``alter_ms`` (the
MODIFY returns within 100 ms), ``read_throughput_ratio_during_conversion`` (old-view reads
per second while rows are converted / before; at least 0.8).
Run: ``python -m bench.schema_change [--quick]``.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import rivulet
from bench.common import (
    Zipf,
    busy_warning,
    environment,
    fmt_num,
    git_state,
    logger,
    print_table,
    target,
    write_results,
)

NAME = "schema_change"
SCHEMA = """
CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(100) NOT NULL);
CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL, ts INT NOT NULL);
CREATE VIEW StoriesWithVC AS SELECT stories.id, stories.title, vc.vcount FROM stories
  LEFT JOIN (SELECT story_id, COUNT(*) AS vcount FROM votes GROUP BY story_id) AS vc
  ON stories.id = vc.story_id WHERE stories.id = ?
"""
CHANGES = {
    "add_column": "ALTER TABLE votes ADD COLUMN weight INT NOT NULL DEFAULT 1",
    "modify_type": "ALTER TABLE votes MODIFY ts VARCHAR(20)",
    "split": ("CREATE TABLE story_votes AS SELECT story_id, COUNT(*) AS n FROM votes "
              "GROUP BY story_id"),
}
EAGER = {
    "modify_type": [
        "CREATE TABLE votes_new (user_id INTEGER, story_id INTEGER, ts TEXT)",
        "INSERT INTO votes_new SELECT user_id, story_id, CAST(ts AS TEXT) FROM votes",
        "DROP TABLE votes", "ALTER TABLE votes_new RENAME TO votes"],
    "split": ["CREATE TABLE story_votes AS SELECT story_id, COUNT(*) AS n FROM votes "
              "GROUP BY story_id"],
}
log = logger()


def load(directory: Path, stories: int, votes: int) -> None:
    zipf = Zipf(stories, 1.08, seed=7)
    with rivulet.open(directory, spark_bootstrap_rows=None, prewarm=False) as db:
        db.execute_script(SCHEMA)
        db.bulk_insert("stories", [[(i, f"story {i}") for i in range(stories)]])
        chunk = 500_000
        for start in range(0, votes, chunk):
            n = min(chunk, votes - start)
            keys = zipf.sample(n)
            db.bulk_insert("votes", [[(start + i, keys[i], start + i) for i in range(n)]])


def eager_baseline(template: Path, work: Path) -> dict[str, float]:
    """Seconds SQLite takes to make each change eagerly (writes would wait that long)."""
    out = {}
    for name, statements in EAGER.items():
        shutil.copytree(template, work / name)
        conn = sqlite3.connect(work / name / "rivulet.db", isolation_level=None)
        started = time.perf_counter()
        conn.execute("BEGIN")
        for sql in statements:
            conn.execute(sql)
        conn.execute("COMMIT")
        out[name] = time.perf_counter() - started
        conn.close()
        shutil.rmtree(work / name)
    return out


class Rates:
    """Events (completion times) of one thread, counted per 10 ms: a time kept per event
    held the reader's tens of millions of floats (5 GB of RSS in a quick run, 16 GB before
    a full run was stopped), more than the database measured."""

    STEP = 0.01

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}

    def add(self, t: float) -> None:
        k = int(t / self.STEP)
        self.counts[k] = self.counts.get(k, 0) + 1

    def rate(self, lo: float, hi: float) -> float:
        n = sum(c for k, c in self.counts.items() if lo <= k * self.STEP < hi)
        return n / (hi - lo) if hi > lo else 0.0


def run(template: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    directory = work / "db"
    shutil.copytree(template, directory)
    db = rivulet.open(directory, spark_bootstrap_rows=None, prewarm=False)
    view = db.view("StoriesWithVC")
    view.lookup_many(list(range(args.stories)))  # warm: "before" is the steady state
    zipf = Zipf(args.stories, 1.08, seed=11)
    reads, writes = Rates(), Rates()
    stop = threading.Event()
    start = time.perf_counter()
    next_vote = [args.votes + 1]

    keys = zipf.sample(200_000)  # (drawn before the clock starts: reads from the first)

    def reader() -> None:
        i = 0
        while not stop.is_set():
            view.lookup(keys[i % len(keys)])
            reads.add(time.perf_counter() - start)
            i += 1

    def writer() -> None:
        # A handle of the table as it was: rows written through it after the changes are
        # carried to the new columns (weight takes its default, ts is converted).
        table = db.table("votes")
        period = 200 / args.write_rate
        while not stop.is_set():
            began = time.perf_counter()
            first = next_vote[0]
            next_vote[0] += 200
            table.insert_many([(first + i, (first + i) % args.stories, first + i)
                               for i in range(200)])
            writes.add(time.perf_counter() - start)
            time.sleep(max(0.0, period - (time.perf_counter() - began)))

    threads = [threading.Thread(target=reader), threading.Thread(target=writer)]
    for t in threads:
        t.start()
    time.sleep(args.seconds / 3)
    timings: dict[str, Any] = {}
    for name, sql in CHANGES.items():
        began = time.perf_counter()
        db.execute(sql)
        timings[name] = {"statement_ms": (time.perf_counter() - began) * 1000,
                         "at_s": began - start}
        log(f"{name}: returned in {timings[name]['statement_ms']:.1f} ms")
    lazy_started = time.perf_counter() - start
    while db.catalog.table("votes").converting or db.catalog.copies:
        time.sleep(0.05)
    lazy_done = time.perf_counter() - start
    log(f"background conversion and copy finished {lazy_done - lazy_started:.1f} s later")
    time.sleep(max(1.0, args.seconds - lazy_done))
    stop.set()
    for t in threads:
        t.join()
    end = time.perf_counter() - start
    db.settle()
    correct = check(db)
    db.close()
    # The five seconds before the first change, after the threads' first second (a quick
    # run's "before" began with their start-up and read low, flattering the ratio).
    before = (max(1.0, timings["add_column"]["at_s"] - 5), timings["add_column"]["at_s"])
    during = (lazy_started, lazy_done)
    after = (lazy_done, end)
    return {
        "changes": timings,
        "background_s": lazy_done - lazy_started,
        "converted_rows_per_s": (args.votes / (lazy_done - lazy_started)
                                 if lazy_done > lazy_started else None),
        "reads_per_s": {"before": reads.rate(*before), "during": reads.rate(*during),
                        "after": reads.rate(*after)},
        "votes_per_s": {"before": 200 * writes.rate(*before), "during": 200 * writes.rate(*during),
                        "after": 200 * writes.rate(*after)},
        "correct": correct,
    }


def check(db: rivulet.Database) -> bool:
    """The converted column and the split table against SQLite over the stored rows."""
    conn = sqlite3.connect(db.path / "rivulet.db")
    try:
        ts_ok = conn.execute("SELECT COUNT(*) FROM votes WHERE ts IS NULL OR ts != "
                             "CAST(user_id AS TEXT)").fetchone()[0] == 0
        split = dict(conn.execute("SELECT story_id, n FROM story_votes").fetchall())
    finally:
        conn.close()
    sample = list(split.items())[:200]
    split_ok = all(db.query("SELECT n FROM story_votes WHERE story_id = ?", [s]) == [(n,)]
                   for s, n in sample)
    return ts_ok and split_ok and bool(split)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.schema_change",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--stories", type=int)
    parser.add_argument("--votes", type=int)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--write-rate", type=float, default=5000)
    args = parser.parse_args(argv)
    args.stories = args.stories or (20_000 if args.quick else 200_000)
    args.votes = args.votes or (300_000 if args.quick else 3_000_000)
    args.seconds = args.seconds or (12 if args.quick else 30)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sys.setswitchinterval(0.0005)
    load_avg = busy_warning(log)
    work = Path(tempfile.mkdtemp(prefix="rivulet-bench-schema-"))
    try:
        template = work / "template"
        began = time.perf_counter()
        load(template, args.stories, args.votes)
        log(f"loaded {args.stories:,} stories and {args.votes:,} votes "
            f"in {time.perf_counter() - began:.1f} s")
        eager = eager_baseline(template, work)
        log("eager (SQLite, holding writes): "
            + ", ".join(f"{k} {v:.2f} s" for k, v in eager.items()))
        lazy = run(template, work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    modify_ms = lazy["changes"]["modify_type"]["statement_ms"]
    results = {
        "benchmark": NAME, "quick": args.quick,
        "params": {"stories": args.stories, "votes": args.votes, "seconds": args.seconds,
                   "write_rate": args.write_rate, "changes": CHANGES, "eager": EAGER},
        "rivulet_lazy": lazy,
        "sqlite_eager_s": eager,
        "eager_vs_lazy_statement_ratio": {
            k: eager[k] * 1000 / lazy["changes"][k]["statement_ms"] for k in eager},
        "targets": {
            "alter_ms": target(modify_ms, 100, at_least=False),
            "read_throughput_ratio_during_conversion": target(
                lazy["reads_per_s"]["during"] / lazy["reads_per_s"]["before"]
                if lazy["reads_per_s"]["before"] else None, 0.8),
        },
        "environment": {**environment(), "load_average_at_start": load_avg}, "git": git_state(),
    }
    print_table("schema changes on votes while reading and writing",
                ["change", "rivulet returns (ms)", "SQLite eager (ms)"],
                [[k, fmt_num(v["statement_ms"]), fmt_num(eager[k] * 1000) if k in eager else "-"]
                 for k, v in lazy["changes"].items()])
    print_table("throughput", ["", "before", "during background work", "after"],
                [["reads/s", *(fmt_num(lazy["reads_per_s"][p])
                               for p in ("before", "during", "after"))],
                 ["votes/s", *(fmt_num(lazy["votes_per_s"][p])
                               for p in ("before", "during", "after"))]])
    print_table("targets", ["target", "value", "goal", "met"],
                [[k, fmt_num(v["value"]), v["goal"], v["met"]]
                 for k, v in results["targets"].items()])
    path = write_results(NAME, results, args.quick)
    log(f"results: {path} (background work {lazy['background_s']:.1f} s, "
        f"correct: {lazy['correct']})")
    return 0 if lazy["correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
