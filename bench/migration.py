"""The live-migration benchmark (Noria paper, section 8.5): add a view while the program runs.

Program: ``stories`` and ``votes``, and the view ``StoriesWithVC`` (a story and its vote
count by id: ``stories LEFT JOIN (votes grouped by story)``). Data: 200,000 stories and
3,000,000 votes (``--quick``: 20,000 and 300,000), Zipf-popular (s = 1.08), loaded with
``bulk_insert`` into a template directory copied for every configuration.

Each configuration runs ``--seconds`` (30; quick 9) of workload in one process, with the
migration a third of the way in:

* one thread reads ``StoriesWithVC`` by Zipf story id as fast as it can (closed loop);
* one thread writes votes, 200 per commit, at most ``--write-rate`` votes/s (5,000);
* at the migration, one thread runs ``CREATE TABLE ratings`` and ``CREATE VIEW
  StoriesWithRatings`` (a story's score: its vote count plus the sum of its ratings: the
  vote count sub-plan is the old view's, so it is shared), then writes ratings at a tenth of
  the vote rate and reads the new view by Zipf story id at ``--new-read-rate`` reads/s
  (1,000; open loop, so that the old view's reader keeps the same share of the CPU).

Configurations: reuse and partial state on (rivulet's default), reuse off, partial state
off, both off (``rivulet.open(..., reuse=, partial=)``; full state is bootstrapped in
process here, ``spark_bootstrap_rows=None``, so that the four differ in reuse and partial
state only).

Before the clock starts, the old view is read at every key its reader will ask for, so
that the windows compared are steady state, not a view still filling (a run that warmed
only the hottest keys saw its throughput rise 20x during the measurement).

Targets (issue 6), on the default configuration, which runs ``--repeat`` times (3, quick 1; the
median reported, every run and the spread kept): ``transition_ms`` (the two statements of
the migration, at most 100 ms), ``old_view_throughput_ratio`` (old-view reads per second in
the ``--window`` seconds after the migration starts / in the as many seconds before it; at
least 0.8) and ``new_view_p95_ms_after_5s`` (p95 read latency of the new view from 5 s
after the migration on; at most 5 ms). Run from the repository root: ``python -m
bench.migration [--quick]``.
"""

from __future__ import annotations

import argparse
import shutil
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
    percentile,
    print_table,
    results_path,
    target,
    write_results,
)

NAME = "migration"

SCHEMA = """
CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(100) NOT NULL);
CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL);
"""
VOTE_COUNTS = "SELECT story_id, COUNT(*) AS vcount FROM votes GROUP BY story_id"
OLD_VIEW = (
    "CREATE VIEW StoriesWithVC AS SELECT stories.id, stories.title, vc.vcount FROM stories "
    f"LEFT JOIN ({VOTE_COUNTS}) AS vc ON stories.id = vc.story_id WHERE stories.id = ?"
)
MIGRATION = [
    "CREATE TABLE ratings (user_id INT NOT NULL, story_id INT NOT NULL, stars INT NOT NULL)",
    "CREATE VIEW StoriesWithRatings AS SELECT stories.id, stories.title, "
    "COALESCE(vc.vcount, 0) + COALESCE(rc.total, 0) AS score FROM stories "
    f"LEFT JOIN ({VOTE_COUNTS}) AS vc ON stories.id = vc.story_id "
    "LEFT JOIN (SELECT story_id, SUM(stars) AS total FROM ratings GROUP BY story_id) AS rc "
    "ON stories.id = rc.story_id WHERE stories.id = ?",
]
CONFIGS = {
    "reuse+partial": {"reuse": True, "partial": True},
    "no reuse": {"reuse": False, "partial": True},
    "no partial": {"reuse": True, "partial": False},
    "neither": {"reuse": False, "partial": False},
}
BUCKET_S = 0.5


log = logger()


def load_template(directory: Path, stories: int, votes: int, seed: int) -> None:
    zipf = Zipf(stories, 1.08, seed)
    with rivulet.open(directory, spark_bootstrap_rows=None, prewarm=False) as db:
        db.execute_script(SCHEMA)
        db.bulk_insert("stories", [[(i, f"Story {i}") for i in range(stories)]])
        chunk = 500_000
        for lo in range(0, votes, chunk):
            n = min(chunk, votes - lo)
            ids = zipf.sample(n)
            db.bulk_insert("votes", [[(lo + j, int(s)) for j, s in enumerate(ids)]])


class Recorder:
    """Events (start time, duration) of one kind, from one thread."""

    def __init__(self) -> None:
        self.events: list[tuple[float, float]] = []

    def add(self, start: float, seconds: float) -> None:
        self.events.append((start, seconds))


def run_config(name: str, options: dict[str, Any], template: Path,
               args: argparse.Namespace) -> dict[str, Any]:
    directory = template.parent / f"run-{name.replace(' ', '_').replace('+', '_')}"
    shutil.copytree(template, directory)
    opened = time.perf_counter()
    db = rivulet.open(directory, spark_bootstrap_rows=None, prewarm=False, **options)
    db.execute(OLD_VIEW)
    db.settle()
    setup_s = time.perf_counter() - opened
    old_view = db.view("StoriesWithVC")
    zipf = Zipf(args.stories, 1.08, args.seed + 1)
    keys = [int(k) for k in zipf.sample(200_000)]
    warming = time.perf_counter()
    for k in dict.fromkeys(keys):  # every key the reader asks for: steady state from t0
        old_view.lookup(k)
    db.settle()
    warm_s = time.perf_counter() - warming
    stop = threading.Event()
    old, writes, new, ratings = Recorder(), Recorder(), Recorder(), Recorder()
    migration: dict[str, Any] = {}
    t0 = time.perf_counter()
    at = args.seconds / 3

    def read_old() -> None:
        i = 0
        while not stop.is_set():
            s = time.perf_counter()
            old_view.lookup(keys[i % len(keys)])
            old.add(s - t0, time.perf_counter() - s)
            i += 1

    def write_votes() -> None:
        table, batch, i = db.table("votes"), 200, 0
        period = batch / args.write_rate
        next_at = time.perf_counter()
        while not stop.is_set():
            s = time.perf_counter()
            table.insert_many((i + j, keys[(i + j * 7) % len(keys)]) for j in range(batch))
            writes.add(s - t0, time.perf_counter() - s)
            i += batch
            next_at += period
            time.sleep(max(0.0, next_at - time.perf_counter()))

    def migrate() -> None:
        time.sleep(max(0.0, t0 + at - time.perf_counter()))
        s = time.perf_counter()
        for statement in MIGRATION:
            db.execute(statement)
        migration["start_s"] = s - t0
        migration["transition_ms"] = (time.perf_counter() - s) * 1000
        new_view, table = db.view("StoriesWithRatings"), db.table("ratings")
        period, i = 1 / args.new_read_rate, 0
        next_at = time.perf_counter()
        while not stop.is_set():
            s = time.perf_counter()
            new_view.lookup(keys[(i * 13) % len(keys)])
            new.add(s - t0, time.perf_counter() - s)
            if i % 20 == 0:
                s = time.perf_counter()
                table.insert((i, keys[(i * 3) % len(keys)], i % 5 + 1))
                ratings.add(s - t0, time.perf_counter() - s)
            i += 1
            next_at += period
            time.sleep(max(0.0, next_at - time.perf_counter()))

    threads = [threading.Thread(target=f, daemon=True) for f in (read_old, write_votes, migrate)]
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    db.settle()
    correct = check_new_view(db, keys[:200])
    stats = db.stats()
    db.close()
    shutil.rmtree(directory, ignore_errors=True)
    return summarize(name, options, setup_s, migration, old, writes, new, args) | {
        "warm_s": warm_s, "new_view_correct": correct, "nodes": stats.get("nodes"),
        "memory_bytes": stats["memory_bytes"], "shared_indexes": stats["shared_indexes"]}


def check_new_view(db: rivulet.Database, keys: list[int]) -> bool:
    """The new view against the same query run by SQLite on rivulet's own base tables."""
    import sqlite3

    conn = sqlite3.connect(db.path / "rivulet.db")
    try:
        sql = MIGRATION[1].split(" AS ", 1)[1]
        for k in set(keys):
            want = conn.execute(sql, (k,)).fetchall()
            got = db.view("StoriesWithRatings").lookup(k)
            if sorted(map(tuple, want)) != sorted(map(tuple, got)):
                log(f"new view differs from SQLite for {k}: {got} != {want}")
                return False
    finally:
        conn.close()
    return True


def buckets(events: list[tuple[float, float]], seconds: float) -> list[dict[str, float]]:
    out = []
    n = int(seconds / BUCKET_S) + 1
    per: list[list[float]] = [[] for _ in range(n)]
    for start, dur in events:
        i = int(start / BUCKET_S)
        if 0 <= i < n:
            per[i].append(dur)
    for i, durs in enumerate(per):
        durs.sort()
        out.append({"t": i * BUCKET_S, "per_s": len(durs) / BUCKET_S,
                    "p95_ms": percentile(durs, 95) * 1000 if durs else None})
    return out


def rate(events: list[tuple[float, float]], lo: float, hi: float) -> float:
    return sum(1 for s, _ in events if lo <= s < hi) / max(1e-9, hi - lo)


def p95_ms(events: list[tuple[float, float]], lo: float, hi: float = float("inf")) -> float | None:
    durs = sorted(d for s, d in events if lo <= s < hi)
    return percentile(durs, 95) * 1000 if durs else None


def summarize(name: str, options: dict[str, Any], setup_s: float, migration: dict[str, Any],
              old: Recorder, writes: Recorder, new: Recorder,
              args: argparse.Namespace) -> dict[str, Any]:
    at = migration.get("start_s", args.seconds / 3)
    window = args.window
    before = rate(old.events, max(0.0, at - window), at)
    during = rate(old.events, at, at + window)
    result = {
        "options": options,
        "setup_s": setup_s,
        "transition_ms": migration.get("transition_ms"),
        "migration_at_s": at,
        "window_s": window,
        "old_reads_per_s_before": before,
        "old_reads_per_s_after": during,
        "old_view_throughput_ratio": during / before if before else None,
        "old_p95_ms_before": p95_ms(old.events, max(0.0, at - window), at),
        "old_p95_ms_after": p95_ms(old.events, at, at + window),
        "votes_per_s_before": 200 * rate(writes.events, max(0.0, at - window), at),
        "votes_per_s_after": 200 * rate(writes.events, at, at + window),
        "new_view_p95_ms_first_second": p95_ms(new.events, at, at + 1),
        "new_view_p95_ms_after_5s": p95_ms(new.events, at + 5),
        "new_reads": len(new.events),
        "timeline": {"old_reads": buckets(old.events, args.seconds),
                     "vote_commits": buckets(writes.events, args.seconds),
                     "new_reads": buckets(new.events, args.seconds)},
    }
    log(f"{name}: transition {fmt_num(result['transition_ms'])} ms; old reads/s "
        f"{fmt_num(before)} before, {fmt_num(during)} after ({window:g} s each) "
        f"(x{fmt_num(result['old_view_throughput_ratio'])}); new view p95 "
        f"{fmt_num(result['new_view_p95_ms_first_second'])} ms at first, "
        f"{fmt_num(result['new_view_p95_ms_after_5s'])} ms after 5 s")
    return result


#: The configuration the targets are stated on (rivulet's defaults), run ``--repeat`` times.
MAIN_CONFIG = "reuse+partial"

#: A run's figures kept for every repetition (the median run keeps its whole record).
_RUN_FIGURES = ("transition_ms", "old_view_throughput_ratio", "old_reads_per_s_before",
                "old_reads_per_s_after", "new_view_p95_ms_after_5s")


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median old-view throughput ratio, with every run's figures under
    ``runs`` (a list per figure, in run order) and every run's correctness."""
    ranked = sorted(runs, key=lambda r: r["old_view_throughput_ratio"] or 0.0)
    median = ranked[len(ranked) // 2]
    return median | {
        "runs": {k: [r[k] for r in runs] for k in _RUN_FIGURES},
        "new_view_correct": all(r["new_view_correct"] for r in runs),
    }


def _with_spread(values: list[Any]) -> str:
    """The median of ``values`` with their range when there are several."""
    present = sorted(v for v in values if v is not None)
    if not present:
        return fmt_num(None)
    median = fmt_num(present[len(present) // 2])
    return median if len(present) == 1 else \
        f"{median} ({fmt_num(present[0])}-{fmt_num(present[-1])})"


def plot(results: dict[str, Any], path: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(3, 1, figsize=(10, 10), sharex=True)
    for name, res in results["configs"].items():
        tl = res["timeline"]
        style = "-" if name == "reuse+partial" else "--"
        xs = [b["t"] for b in tl["old_reads"]]
        axes[0].plot(xs, [b["per_s"] for b in tl["old_reads"]], style, label=name)
        axes[1].plot(xs, [b["per_s"] * 200 for b in tl["vote_commits"]], style, label=name)
        axes[2].plot([b["t"] for b in tl["new_reads"]],
                     [b["p95_ms"] for b in tl["new_reads"]], style, label=f"{name}: new view")
        axes[2].plot(xs, [b["p95_ms"] for b in tl["old_reads"]], ":", alpha=0.5,
                     label=f"{name}: old view")
        for ax in axes:
            ax.axvline(res["migration_at_s"], color="gray", linewidth=0.8)
    axes[0].set_ylabel("old view reads/s")
    axes[1].set_ylabel("votes written/s")
    axes[2].set_ylabel("read p95, ms")
    axes[2].set_yscale("log")
    axes[2].axhline(5, color="red", linestyle=":", linewidth=1, label="goal: 5 ms")
    axes[2].set_xlabel(f"seconds ({BUCKET_S} s buckets; the grey line is the migration)")
    for ax in axes:
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    p = results["params"]
    fig.suptitle(f"adding a view while running: {p['stories']:,} stories, {p['votes']:,} votes"
                 + (" (quick)" if results["quick"] else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.migration",
                                description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="a tenth of the data, 9 s per configuration")
    p.add_argument("--stories", type=int)
    p.add_argument("--votes", type=int)
    p.add_argument("--seconds", type=float)
    p.add_argument("--write-rate", type=float, default=5_000, help="votes/s (default 5,000)")
    p.add_argument("--new-read-rate", type=float, default=1_000, help="new-view reads/s")
    p.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated subset")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--window", type=float, default=2.0,
                   help="seconds of old-view reads compared before and after the migration")
    p.add_argument("--repeat", type=int,
                   help="runs of the default configuration, the median reported (3; quick 1)")
    args = p.parse_args(argv)
    args.stories = args.stories or (20_000 if args.quick else 200_000)
    args.votes = args.votes or (300_000 if args.quick else 3_000_000)
    args.seconds = args.seconds or (9.0 if args.quick else 30.0)
    args.repeat = args.repeat or (1 if args.quick else 3)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sys.setswitchinterval(0.0005)  # as rivulet serve does: readers must not starve writers
    load = busy_warning(log)
    parent = Path(tempfile.mkdtemp(prefix="rivulet-bench-migration-"))
    try:
        template = parent / "template"
        started = time.perf_counter()
        load_template(template, args.stories, args.votes, args.seed)
        log(f"loaded {args.stories:,} stories and {args.votes:,} votes in "
            f"{time.perf_counter() - started:.1f} s")
        configs = {}
        for name in args.configs.split(","):
            runs = [run_config(name, CONFIGS[name], template, args)
                    for _ in range(args.repeat if name == MAIN_CONFIG else 1)]
            configs[name] = median_run(runs)
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    main_config = configs.get(MAIN_CONFIG)
    results: dict[str, Any] = {
        "benchmark": NAME, "quick": args.quick,
        "params": {"stories": args.stories, "votes": args.votes, "seconds": args.seconds,
                   "write_rate": args.write_rate, "new_read_rate": args.new_read_rate,
                   "bucket_s": BUCKET_S, "window_s": args.window, "repeat": args.repeat,
                   "old_view": OLD_VIEW, "migration": MIGRATION},
        "configs": configs,
        "environment": {**environment(), "load_average_at_start": load}, "git": git_state(),
    }
    if main_config is not None:
        sharing = main_config["shared_indexes"]
        results["index_sharing"] = {  # issue 6, part 2: shared against private indexes
            **sharing, "bytes_saved": sharing["private_memory_bytes"] - sharing["memory_bytes"]}
        log(f"shared indexes: {sharing['indexes']} read by {sharing['readers']} operators, "
            f"{sharing['memory_bytes']:,} bytes; private ones would take "
            f"{sharing['private_memory_bytes']:,}")
        ratios = main_config["runs"]["old_view_throughput_ratio"]
        log(f"old_view_throughput_ratio: median {fmt_num(main_config['old_view_throughput_ratio'])}"
            f" of {len(ratios)} runs, spread {fmt_num(min(ratios))}-{fmt_num(max(ratios))}")
        results["targets"] = {
            "transition_ms": target(main_config["transition_ms"], 100, at_least=False),
            "old_view_throughput_ratio": target(main_config["old_view_throughput_ratio"], 0.8),
            "new_view_p95_ms_after_5s": target(main_config["new_view_p95_ms_after_5s"], 5,
                                               at_least=False),
        }
    print_table("adding StoriesWithRatings while running",
                ["config", "transition ms", "old reads/s before", "after", "ratio",
                 "new p95 ms (1st s)", "new p95 ms (after 5 s)", "correct"],
                [[n, fmt_num(c["transition_ms"]), fmt_num(c["old_reads_per_s_before"]),
                  fmt_num(c["old_reads_per_s_after"]),
                  _with_spread(c["runs"]["old_view_throughput_ratio"]),
                  fmt_num(c["new_view_p95_ms_first_second"]),
                  fmt_num(c["new_view_p95_ms_after_5s"]), c["new_view_correct"]]
                 for n, c in configs.items()])
    if "targets" in results:
        print_table("targets", ["target", "value", "goal", "met"],
                    [[k, fmt_num(v["value"]), v["goal"], v["met"]]
                     for k, v in results["targets"].items()])
    path = write_results(NAME, results, args.quick)
    figure = plot(results, results_path(NAME, args.quick, "png"))
    log(f"results: {path}" + (f", plot: {figure}" if figure else ""))
    return 0 if all(c["new_view_correct"] for c in configs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
