"""How a partial reader of a streamed view should answer a miss (issue 9): from the sink
store, or by a Spark lookup.

A view maintained by the Spark streaming pipeline (``pipeline="spark"``) and keyed by a
parameter has a partial reader; a read of a key it does not hold needs the key's rows as
of the batch the reader has applied. Two ways measured here, on the vote workload of
``bench.streaming`` (votes per article, Zipf 1.08):

* ``sink_store``: what rivulet does (``ViewStream.fill``): the sink store
  (``<data>/stream/sink.db``) holds the whole view at exactly that batch, indexed by
  reader key; a miss is one indexed SQLite read. Timed: single-key misses (``lookup``
  after ``db.evict``), and one ``lookup_many`` of ``--keys`` missing keys.
* ``spark_lookup``: a batched Spark job over a snapshot of the base tables
  (``rivulet.spark.compile.compute_lookups``), for one key and for ``--keys`` keys. The
  snapshot's export is not counted (a real miss would need one taken at the stream's
  batch, or the log replayed onto it: more, not less). The engine's own upquery through
  base tables is not measured: it reads SQLite ahead of the stream's batch, so it would
  need the writes since then taken out again before it could be correct.

``python -m bench.streaming_miss`` (1,000,000 votes on 10,000 articles;
``bench/results/streaming_miss.json``) or ``--quick`` (100,000 votes). The target-free
result: each way's p50/p95 milliseconds and their ratio.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import rivulet
from bench.common import Zipf, busy_warning, environment, logger, percentile, write_results

VIEW = "SELECT aid, COUNT(*) AS votes FROM votes WHERE aid = ? GROUP BY aid"
FULL = {"articles": 10_000, "votes": 1_000_000, "singles": 300, "keys": 100, "spark_rounds": 5}
QUICK = {"articles": 2_000, "votes": 100_000, "singles": 100, "keys": 100, "spark_rounds": 2}


def timed_ms(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"n": len(ordered), "p50_ms": round(percentile(ordered, 50), 3),
            "p95_ms": round(percentile(ordered, 95), 3)}


def run(config: dict[str, Any], log: Any) -> dict[str, Any]:
    from rivulet.spark.compile import compute_lookups
    from rivulet.spark.session import SparkConfig
    from rivulet.spark.snapshot import take_snapshot

    path = Path(tempfile.mkdtemp(prefix="rivulet-stream-miss-"))
    try:
        db = rivulet.open(path, pipeline="spark",
                          spark=SparkConfig(master="local[2]", shuffle_partitions=2))
        db.execute("CREATE TABLE votes (uid INT NOT NULL, aid INT NOT NULL)")
        zipf, rng = Zipf(config["articles"], 1.08, 3), random.Random(3)
        for start in range(0, config["votes"], 50_000):
            n = min(50_000, config["votes"] - start)
            db.table("votes").insert_many([(rng.randrange(100_000), a) for a in zipf.sample(n)])
        db.execute(f"CREATE VIEW VoteCount AS {VIEW}")
        db.settle(timeout=600)
        view = db.view("VoteCount")
        assert view.partial, "the streamed view should have a partial reader"
        keys = list(range(config["articles"]))
        singles = []
        for key in rng.sample(keys, config["singles"]):
            db.evict("VoteCount")
            singles.append(timed_ms(lambda key=key: view.lookup(key)))
        misses = db.stats()["per_view"]["VoteCount"]["misses"]
        assert misses == len(singles), f"{misses} misses for {len(singles)} evicted reads"
        batched = []
        for _ in range(5):
            db.evict("VoteCount")
            batch = rng.sample(keys, config["keys"])
            batched.append(timed_ms(lambda batch=batch: view.lookup_many(batch)))
        log(f"sink store: one key p50 {percentile(sorted(singles), 50):.3f} ms; "
            f"{config['keys']} keys p50 {percentile(sorted(batched), 50):.3f} ms")
        snapshot = take_snapshot(db, path / "lookup-snapshot")
        tables = snapshot.dataframes(db.spark_session())
        plan = db.catalog.views["votecount"]
        spark_one, spark_many = [], []
        for _ in range(config["spark_rounds"]):
            key = rng.choice(keys)
            spark_one.append(timed_ms(lambda key=key: compute_lookups(plan, tables, [(key,)])))
            batch = rng.sample(keys, config["keys"])
            spark_many.append(timed_ms(
                lambda batch=batch: compute_lookups(plan, tables, [(k,) for k in batch])))
        log(f"Spark lookup: one key p50 {percentile(sorted(spark_one), 50):.1f} ms; "
            f"{config['keys']} keys p50 {percentile(sorted(spark_many), 50):.1f} ms")
        db.close()
    finally:
        shutil.rmtree(path, ignore_errors=True)
    ways = {"sink_store": {"one_key": summary(singles), "many_keys": summary(batched)},
            "spark_lookup": {"one_key": summary(spark_one), "many_keys": summary(spark_many)}}
    ways["spark_over_sink_store_p50"] = {
        shape: round(ways["spark_lookup"][shape]["p50_ms"] / ways["sink_store"][shape]["p50_ms"], 1)
        for shape in ("one_key", "many_keys")}
    return ways


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    log = logger()
    load = busy_warning(log)
    config = dict(QUICK if args.quick else FULL)
    results = run(config, log)
    path = write_results("streaming_miss", {
        "benchmark": "streaming_miss", "quick": args.quick, "config": config,
        "targets": {}, "ways": results, "load_average_at_start": load,
        "environment": environment()}, args.quick)
    log(f"results in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
