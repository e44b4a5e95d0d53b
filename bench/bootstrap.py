"""The bootstrap benchmark (issue 4): full state from 10,000,000 votes, in-process and on
Spark, and a bulk import of 10,000,000 CSV rows through Spark.

The program: ``stories (id, title)``, ``votes (user_id, story_id)`` and two views that keep
full state, as in the news program: ``StoryVotes`` (votes per story: an aggregate with no
key) and ``FrontPage`` (the 30 stories with most votes: a top-k over the same aggregate,
which the two views share). Votes go to 100,000 stories by Zipf (s = 1.08), from 1,000,000
uniform users (``--quick``: 500,000 votes, 10,000 stories).

**Data generation.** The views are created on an empty database, the database is closed,
and the votes are written straight into its SQLite file (``rivulet.db``, table ``votes``
in the layout the storage created) with ``executemany`` in one transaction; rivulet keeps
no other copy of base rows, so the next open bootstraps every view from them. That takes
seconds, where 10,000,000 acknowledged writes through the API would take minutes.

**Bootstrap.** Each executor runs in a fresh subprocess (``--worker``), so that neither
inherits the other's memory or JVM, and opens the same data directory:

* ``in-process``: ``rivulet.open(dir, spark_bootstrap_rows=None)``: the aggregate reads all
  votes from SQLite through the dataflow. ``open`` returns once every full state is built.
* ``spark``: ``rivulet.open(dir, spark_bootstrap_rows=..., spark=SparkConfig(master=
  "local[2]"))`` with no JVM running yet (as after a restart), then ``settle()``. Reported
  apart (``db.bootstrap_report()``): the *JVM start-up* (the session and a small warm-up
  job, which rivulet runs while it exports the snapshot) and the *snapshot* (SQLite backup
  and Parquet export of the base tables). The bootstrap itself: the Spark jobs computing
  the aggregate's state, loading it into the operator, and the top-k, which then
  bootstraps in-process from the aggregate's state in memory (it reads no base rows).

Each executor runs ``--repeat`` times (default 2; ``--quick`` 1), alternating, and the
best run of each is reported (the machine is shared and noisy; every run's time is in the
results too). ``bootstrap_seconds`` of Spark is that sum; rows per second are votes
divided by it. The
end-to-end time (open to views ready: start-up and snapshot included) is reported too,
with its own ratio. Both runs must serve the same ``StoryVotes`` and ``FrontPage``
(checksums; else exit status 1).

**Import.** A CSV file of 10,000,000 rows ``(id, user_id, story_id)`` (``--quick``:
500,000) is imported with ``rivulet.pipeline.importer.import_files`` into ``imported (id INT
PRIMARY KEY, ...)``, an indexed table (its primary key; a partial view keyed by
``story_id`` gives it a second index with ``--import-index``), in the Spark worker after
the bootstrap (the JVM is warm).

Targets: ``spark_vs_inprocess_ratio`` (in-process seconds / Spark bootstrap seconds, at
least 2), ``spark_bootstrap_rows_per_s`` (at least 2,000,000), ``import_rows_per_s`` (at
least 300,000), and end to end ``spark_open_to_ready_vs_inprocess`` (in-process open to
ready / Spark's, JVM start-up and snapshot included: what a user waits for; at least 1).

Run from the repository root: ``python -m bench.bootstrap`` (``bench/results/bootstrap.json``
and ``.png``; serialize full runs with ``flock /tmp/rivulet-bench.lock``) or ``--quick``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    Timer,
    Zipf,
    bar_chart,
    busy_warning,
    environment,
    print_table,
    results_path,
    target,
    uniform_ints,
    write_results,
)

NAME = "bootstrap"
PROGRAM = [
    "CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(255) NOT NULL)",
    "CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL)",
    "CREATE VIEW StoryVotes AS SELECT story_id, COUNT(*) AS votes FROM votes GROUP BY story_id",
    "CREATE VIEW FrontPage AS SELECT story_id, COUNT(*) AS votes FROM votes "
    "GROUP BY story_id ORDER BY votes DESC, story_id LIMIT 30",
    "CREATE TABLE imported (id INT PRIMARY KEY, user_id INT NOT NULL, story_id INT NOT NULL)",
]
IMPORT_INDEX_VIEW = "CREATE VIEW ImportedByStory AS SELECT id FROM imported WHERE story_id = ?"
GOALS = {"spark_vs_inprocess_ratio": 2.0, "spark_bootstrap_rows_per_s": 2_000_000,
         "import_rows_per_s": 300_000, "spark_open_to_ready_vs_inprocess": 1.0}
ANSWER_KEYS = ("story_votes_rows", "story_votes_sum", "story_votes_checksum", "front_page")
#: Rows per executemany call while generating votes (one transaction for all).
CHUNK = 500_000


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# ......................................................................... data


def generate(data_dir: Path, votes: int, stories: int, users: int, seed: int,
             import_index: bool) -> dict[str, float]:
    import rivulet

    with rivulet.open(data_dir, spark_bootstrap_rows=None) as db:
        for statement in PROGRAM + ([IMPORT_INDEX_VIEW] if import_index else []):
            db.execute(statement)
        db.table("stories").insert_many([(i, f"story {i}") for i in range(stories)])
    timings = {}
    with Timer() as t:
        conn = sqlite3.connect(data_dir / "rivulet.db", isolation_level=None)
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("BEGIN")
        zipf = Zipf(stories, 1.08, seed)
        for start in range(0, votes, CHUNK):
            n = min(CHUNK, votes - start)
            rows = zip(uniform_ints(0, users - 1, n, seed + 1 + start), zipf.sample(n))
            conn.executemany("INSERT INTO votes (user_id, story_id) VALUES (?, ?)", rows)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    timings["generate_votes_s"] = t.seconds
    return timings


def write_csv(path: Path, rows: int, stories: int, users: int, seed: int) -> float:
    with Timer() as t, path.open("w") as out:
        out.write("id,user_id,story_id\n")
        for start in range(0, rows, CHUNK):
            n = min(CHUNK, rows - start)
            user = uniform_ints(0, users - 1, n, seed + 7 + start)
            story = uniform_ints(0, stories - 1, n, seed + 9 + start)
            out.write("".join(f"{start + i},{u},{s}\n"
                              for i, (u, s) in enumerate(zip(user, story))))
    return t.seconds


# ......................................................................... workers


def checksum(rows: Sequence[tuple]) -> str:
    return hashlib.sha256(repr(sorted(rows)).encode()).hexdigest()[:16]


def answers(db: Any) -> dict[str, Any]:
    story_votes = db.view("StoryVotes").lookup()
    front = db.view("FrontPage").lookup()
    return {"story_votes_rows": len(story_votes), "story_votes_sum": sum(r[1] for r in story_votes),
            "story_votes_checksum": checksum(story_votes), "front_page": [list(r) for r in front]}


def worker_in_process(data_dir: Path) -> dict[str, Any]:
    import rivulet

    with Timer() as t:
        db = rivulet.open(data_dir, spark_bootstrap_rows=None, prewarm=False)
    out = {"bootstrap_seconds": t.seconds, "end_to_end_seconds": t.seconds,
           "max_rss_mb": max_rss_mb()}
    out.update(answers(db))
    db.close()
    return out


def worker_spark(data_dir: Path, threshold: int, csv_path: Path | None) -> dict[str, Any]:
    import rivulet
    from rivulet.spark import SparkConfig, get_session

    config = SparkConfig(master="local[2]", shuffle_partitions=2, driver_memory="4g")
    with Timer() as opened:  # a cold start: no JVM yet, as after a restart
        db = rivulet.open(data_dir, spark_bootstrap_rows=threshold, spark=config, prewarm=False)
    with Timer() as ready:
        db.settle(timeout=None)
    report = db.bootstrap_report()
    # The bootstrap itself: Spark's jobs, loading their state, and the nodes that then
    # bootstrap in-process from it (the top-k, from the aggregate's state).
    bootstrap = report["spark_s"] + report["load_s"] + report["in_process_s"]
    out: dict[str, Any] = {
        "jvm_startup_seconds": report["session_s"],
        "open_returned_seconds": opened.seconds,
        "snapshot_seconds": report["snapshot_s"],
        "spark_jobs_seconds": report["spark_s"],
        "load_seconds": report["load_s"],
        "in_process_tasks_seconds": report["in_process_s"],
        "bootstrap_seconds": bootstrap,
        "end_to_end_seconds": opened.seconds + ready.seconds,
        "tasks": report["tasks"],
        "error": report["error"],
    }
    out.update(answers(db))
    if csv_path is not None:
        from rivulet.pipeline.importer import import_files

        result = import_files(db, "imported", [str(csv_path)], format="csv", progress=False,
                              spark=get_session(config))
        out["import"] = result.to_dict()
    out["max_rss_mb"] = max_rss_mb()
    db.close()
    return out


def max_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_worker(kind: str, data_dir: Path, args: argparse.Namespace,
               csv_path: Path | None) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.bootstrap", "--worker", kind,
               "--data-dir", str(data_dir), "--threshold", str(args.threshold)]
    if csv_path is not None:
        command += ["--csv", str(csv_path)]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
           "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-5000:])
        raise SystemExit(f"worker {kind} failed (exit status {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ......................................................................... main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.bootstrap", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="500,000 votes and import rows")
    p.add_argument("--votes", type=int, help="default 10,000,000 (quick 500,000)")
    p.add_argument("--stories", type=int, help="default 100,000 (quick 10,000)")
    p.add_argument("--users", type=int, default=1_000_000)
    p.add_argument("--import-rows", type=int, help="CSV rows to import (default = votes; 0: skip)")
    p.add_argument("--import-index", action="store_true",
                   help="also index imported.story_id (a partial view keyed by it)")
    p.add_argument("--threshold", type=int, default=100_000,
                   help="spark_bootstrap_rows of the Spark run (default 100,000)")
    p.add_argument("--repeat", type=int, help="runs of each executor, the best kept "
                   "(default 2; quick 1)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--data-dir", type=Path, help="where to put the data (default: a temp dir)")
    p.add_argument("--worker", choices=["in-process", "spark"], help=argparse.SUPPRESS)
    p.add_argument("--csv", type=Path, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker:
        if args.worker == "in-process":
            out = worker_in_process(args.data_dir)
        else:
            out = worker_spark(args.data_dir, args.threshold, args.csv)
        print(json.dumps(out))
        return 0
    votes = args.votes or (500_000 if args.quick else 10_000_000)
    stories = args.stories or (10_000 if args.quick else 100_000)
    import_rows = votes if args.import_rows is None else args.import_rows
    repeat = args.repeat or (1 if args.quick else 2)
    load = busy_warning(log)
    root = Path(tempfile.mkdtemp(prefix="rivulet-bench-bootstrap-", dir=args.data_dir))
    try:
        data_dir = root / "data"
        log(f"generating {votes:,} votes over {stories:,} stories")
        timings = generate(data_dir, votes, stories, args.users, args.seed, args.import_index)
        log(f"  {timings['generate_votes_s']:.1f} s")
        csv_path = None
        if import_rows:
            csv_path = root / "votes.csv"
            log(f"writing {import_rows:,} CSV rows")
            timings["generate_csv_s"] = write_csv(csv_path, import_rows, stories, args.users,
                                                  args.seed)
        in_process_runs, spark_runs = [], []
        for run in range(repeat):
            log(f"run {run + 1} of {repeat}: bootstrap in-process")
            in_process_runs.append(run_worker("in-process", data_dir, args, None))
            log(f"  {in_process_runs[-1]['bootstrap_seconds']:.1f} s")
            importing = csv_path if run == 0 else None
            log("bootstrap on Spark (local[2])" + (", then import" if importing else ""))
            spark_runs.append(run_worker("spark", data_dir, args, importing))
            last = spark_runs[-1]
            log(f"  {last['bootstrap_seconds']:.1f} s "
                f"(+ snapshot {last['snapshot_seconds']:.1f} s, "
                f"JVM {last['jvm_startup_seconds']:.1f} s)")
        in_process = min(in_process_runs, key=lambda r: r["bootstrap_seconds"])
        spark = dict(min(spark_runs, key=lambda r: r["bootstrap_seconds"]))
        spark["import"] = spark_runs[0].get("import")
        first = in_process_runs[0]
        timings["all_runs_same_answers"] = all(
            r[k] == first[k] for r in in_process_runs + spark_runs for k in ANSWER_KEYS)
        timings["runs"] = {
            "in_process_bootstrap_seconds": [r["bootstrap_seconds"] for r in in_process_runs],
            "spark_bootstrap_seconds": [r["bootstrap_seconds"] for r in spark_runs],
            "spark_end_to_end_seconds": [r["end_to_end_seconds"] for r in spark_runs]}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report(args, votes, stories, import_rows, timings, in_process, spark, load)


def report(args: argparse.Namespace, votes: int, stories: int, import_rows: int,
           timings: dict[str, float], in_process: dict[str, Any], spark: dict[str, Any],
           load: Any) -> int:
    same = timings["all_runs_same_answers"] and all(in_process[k] == spark[k] for k in ANSWER_KEYS)
    ratio = in_process["bootstrap_seconds"] / spark["bootstrap_seconds"]
    e2e_ratio = in_process["end_to_end_seconds"] / spark["end_to_end_seconds"]
    spark_rate = votes / spark["bootstrap_seconds"]
    imported = spark.get("import")
    import_rate = imported["rows_per_second"] if imported else None
    targets = {
        "spark_vs_inprocess_ratio": target(round(ratio, 3), GOALS["spark_vs_inprocess_ratio"]),
        "spark_bootstrap_rows_per_s": target(round(spark_rate),
                                             GOALS["spark_bootstrap_rows_per_s"]),
        "import_rows_per_s": target(round(import_rate) if import_rate else None,
                                    GOALS["import_rows_per_s"]),
        "spark_open_to_ready_vs_inprocess": target(
            round(e2e_ratio, 3), GOALS["spark_open_to_ready_vs_inprocess"]),
    }
    print_table("bootstrap of StoryVotes + FrontPage", ["", "in-process", "Spark local[2]"], [
        ["bootstrap (s)", f"{in_process['bootstrap_seconds']:.2f}",
         f"{spark['bootstrap_seconds']:.2f}"],
        ["rows/s", f"{votes / in_process['bootstrap_seconds']:,.0f}", f"{spark_rate:,.0f}"],
        ["JVM start-up (s, overlaps the snapshot)", "-", f"{spark['jvm_startup_seconds']:.2f}"],
        ["snapshot (s)", "-", f"{spark['snapshot_seconds']:.2f}"],
        ["open to ready (s)", f"{in_process['end_to_end_seconds']:.2f}",
         f"{spark['end_to_end_seconds']:.2f}"],
        ["max RSS (MB)", f"{in_process['max_rss_mb']:.0f}", f"{spark['max_rss_mb']:.0f}"],
    ])
    if imported:
        log(f"import: {imported['rows_imported']:,} rows in {imported['seconds']:.1f} s = "
            f"{import_rate:,.0f} rows/s (Spark {imported['spark_seconds']:.1f} s, "
            f"SQLite {imported['write_seconds']:.1f} s)")
    for name, t in targets.items():
        log(f"target {name}: {t['value']} (goal {t['goal']}): {'met' if t['met'] else 'MISSED'}")
    if not same:
        log("ERROR: the two executors serve different answers")
    data = {
        "benchmark": NAME, "quick": args.quick,
        "config": {"votes": votes, "stories": stories, "users": args.users,
                   "import_rows": import_rows, "import_index": args.import_index,
                   "threshold": args.threshold, "seed": args.seed, "zipf": 1.08,
                   "spark_master": "local[2]"},
        "targets": targets,
        "ratios": {"bootstrap": ratio, "open_to_ready": e2e_ratio},
        "same_answers": same,
        "generation": timings,
        "in_process": in_process,
        "spark": spark,
        "load_average_at_start": load,
        "environment": environment(),
    }
    path = write_results(NAME, data, args.quick)
    log(f"wrote {path}")
    chart = plot(data)
    if chart:
        log(f"wrote {chart}")
    return 0 if same else 1


def plot(data: dict[str, Any]) -> Path | None:
    """The PNG next to the results (``python -c 'import json, bench.bootstrap as b;
    b.plot(json.load(open("bench/results/bootstrap.json")))'`` redraws it)."""
    votes = data["config"]["votes"]
    in_process, spark = data["in_process"], data["spark"]
    imported = spark.get("import")
    return bar_chart(results_path(NAME, data["quick"], "png"), f"bootstrap from {votes:,} votes", [
        {"title": "seconds", "ylabel": "s", "log": False,
         "groups": ["bootstrap", "open to ready"],
         "series": {"in-process": [in_process["bootstrap_seconds"],
                                   in_process["end_to_end_seconds"]],
                    "Spark local[2]": [spark["bootstrap_seconds"], spark["end_to_end_seconds"]]}},
        {"title": "Spark run (*: start-up overlaps the snapshot)", "ylabel": "s", "log": False,
         "groups": ["JVM start*", "snapshot*", "Spark jobs", "load", "top-k"],
         "series": {"Spark": [spark["jvm_startup_seconds"], spark["snapshot_seconds"],
                              spark["spark_jobs_seconds"], spark["load_seconds"],
                              spark["in_process_tasks_seconds"]]}},
        {"title": "rows per second", "ylabel": "rows/s",
         "groups": ["bootstrap", "import"],
         "series": {"in-process": [votes / in_process["bootstrap_seconds"], None],
                    "Spark": [votes / spark["bootstrap_seconds"],
                              imported["rows_per_second"] if imported else None]},
         "goals": [{"value": GOALS["spark_bootstrap_rows_per_s"], "label": "2M rows/s"}]},
    ])


if __name__ == "__main__":
    sys.exit(main())
