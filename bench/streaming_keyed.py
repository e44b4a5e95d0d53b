"""What keyed state costs on the Spark streaming pipeline: views Spark's own operators keep
against views that need ``transformWithState`` processors (issue 9).

The vote workload of ``bench.streaming`` (votes on Zipf-popular articles, s = 1.08) on
``local[2]``, one view at a time in one process (the same SparkSession and JVM):

* ``count`` (Spark's native signed sums): ``SELECT aid, COUNT(*) ... GROUP BY aid``;
* ``max`` (the engine's accumulators in a keyed processor): the same with ``MAX(uid)``;
* ``topk`` (a partition's rows): the three highest voters of an article;
* ``nested`` (an aggregate under a join): articles joined with their vote counts;
* ``left`` (a LEFT join per article, counted above it).

For each view: the seconds its creation takes (a snapshot of every vote so far, read by
the query's first batch, the JVM warm), then votes written at ``--rate`` per second for
``--seconds``, with each LSN's write-to-visible latency (p50/p95) and the seconds the view
needs after the writes stop to catch up. Keys of every view are then checked against
SQLite. The result is each view's figures and their ratio to ``count``'s; no target (the
issue asks for the operators, and this says what they cost).

``python -m bench.streaming_keyed`` (1,000,000 votes on 10,000 articles, 10,000 votes/s
for 20 s; ``bench/results/streaming_keyed.json``) or ``--quick`` (50,000 votes, 2,000/s
for 4 s).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Zipf, busy_warning, environment, logger, percentile, write_results
from bench.streaming import Poller, Writer, open_db

VIEWS = {
    "count": "SELECT aid, COUNT(*) AS votes FROM votes WHERE aid = ? GROUP BY aid",
    "max": "SELECT aid, COUNT(*) AS votes, MAX(uid) AS top FROM votes WHERE aid = ? GROUP BY aid",
    "topk": "SELECT uid, aid FROM votes WHERE aid = ? ORDER BY uid DESC LIMIT 3",
    "nested": ("SELECT a.id, a.title, c.votes FROM articles a JOIN (SELECT aid, COUNT(*) AS votes "
               "FROM votes GROUP BY aid) c ON a.id = c.aid WHERE a.id = ?"),
    "left": ("SELECT a.id, COUNT(v.uid) AS votes FROM articles a LEFT JOIN votes v "
             "ON a.id = v.aid WHERE a.id = ? GROUP BY a.id"),
}
FULL = {"articles": 10_000, "votes": 1_000_000, "rate": 10_000, "seconds": 20.0,
        "checked_keys": 200}
QUICK = {"articles": 2_000, "votes": 50_000, "rate": 2_000, "seconds": 4.0, "checked_keys": 30}
SPARK = {"driver_memory": "4g", "jvm_options": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
         "spark_conf": {"spark.sql.files.maxPartitionBytes": "8m"}}


def load(db: Any, config: dict[str, Any]) -> None:
    db.execute("CREATE TABLE articles (id INT PRIMARY KEY, title VARCHAR(64) NOT NULL)")
    db.execute("CREATE TABLE votes (uid INT NOT NULL, aid INT NOT NULL)")
    db.table("articles").insert_many([(i, f"article {i}") for i in range(config["articles"])])
    zipf, rng = Zipf(config["articles"], 1.08, 5), random.Random(5)
    for start in range(0, config["votes"], 50_000):
        n = min(50_000, config["votes"] - start)
        db.table("votes").insert_many([(rng.randrange(1_000_000), a) for a in zipf.sample(n)])


def mismatches(db: Any, path: Path, name: str, keys: list[int]) -> int:
    """Keys whose rows differ from SQLite's answer to the view's SELECT (the view settled)."""
    lite = sqlite3.connect(path / "rivulet.db")
    try:
        bad = 0
        for key in keys:
            got = sorted(tuple(r) for r in db.view(name).lookup(key))
            expected = sorted(lite.execute(VIEWS[name], (key,)).fetchall())
            bad += got != expected
        return bad
    finally:
        lite.close()


def measure(db: Any, path: Path, name: str, writer: Writer, config: dict[str, Any],
            log: Any) -> dict[str, Any]:
    votes = config["votes"] + writer.rows
    started = time.perf_counter()
    db.execute(f"CREATE VIEW {name} AS {VIEWS[name]}")
    created = time.perf_counter() - started
    log(f"{name}: created over {votes} votes in {created:.1f} s")
    poller = Poller(db, writer.committed)
    first, written = db.lsn, writer.rows
    elapsed = writer.run(config["rate"], config["seconds"])
    written = writer.rows - written
    stopped = time.perf_counter()
    db.settle(timeout=600)
    drain = time.perf_counter() - stopped
    poller.close()
    lags = sorted(v for lsn, v in poller.lags.items() if lsn > first)
    stream = db.pipeline.streams[name]
    keys = random.Random(9).sample(range(config["articles"]), config["checked_keys"])
    result = {
        "votes_at_creation": votes, "create_s": round(created, 2),
        "offered_per_s": config["rate"], "written_per_s": round(written / elapsed),
        "lag_p50_s": round(percentile(lags, 50), 3) if lags else None,
        "lag_p95_s": round(percentile(lags, 95), 3) if lags else None,
        "drain_s": round(drain, 2), "batches": stream.batches,
        "batch_s_mean": round(stream.total_batch_seconds / max(1, stream.batches), 3),
        "mismatches": mismatches(db, path, name, keys),
    }
    log(f"{name}: p50 {result['lag_p50_s']} s, p95 {result['lag_p95_s']} s, drain "
        f"{result['drain_s']} s, {result['mismatches']} mismatches")
    db.execute(f"DROP VIEW {name}")
    return result


def run(config: dict[str, Any], log: Any) -> dict[str, dict[str, Any]]:
    path = Path(tempfile.mkdtemp(prefix="rivulet-stream-keyed-"))
    try:
        db = open_db(path, "local[2]", {**config, **SPARK})
        try:
            load(db, config)
            writer = Writer(db, config["articles"], seed=11)
            measure(db, path, "count", writer, {**config, "seconds": 2.0}, log)  # warm-up
            return {name: measure(db, path, name, writer, config, log) for name in VIEWS}
        finally:
            db.close()
    finally:
        shutil.rmtree(path, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    log = logger()
    load_average = busy_warning(log)
    config = dict(QUICK if args.quick else FULL)
    views = run(config, log)
    base = views["count"]
    ratios = {name: {k: round(v[k] / base[k], 2) if base[k] else None
                     for k in ("create_s", "lag_p50_s", "drain_s")}
              for name, v in views.items() if name != "count"}
    data = {"benchmark": "streaming_keyed", "quick": args.quick, "config": {**config, **SPARK},
            "targets": {}, "views": views, "ratio_to_count": ratios, "sql": VIEWS,
            "load_average_at_start": load_average, "environment": environment()}
    path = write_results("streaming_keyed", data, args.quick)
    log(f"results in {path}")
    bad = {name: v["mismatches"] for name, v in views.items() if v["mismatches"]}
    if bad:
        log(f"MISMATCHES between views and SQLite: {bad}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
