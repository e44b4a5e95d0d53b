"""Partial state on the Lobsters program (the Noria paper, section 8.4): memory with partial
state on against off, after the same page mix.

The paper runs the natural Lobsters queries at production scale with partial state off
(every stateful operator keeps full state: 789 MB) and on: the operators of unparameterized
views (the front page's stories, say) still keep full state, 73 MB, "Noria's essential
memory requirement for Lobsters [...] 9% of total state"; the rest is partial, filled by
reads and evictable. (Its working set, found by shrinking a memory limit until the p95
latency rises, is 60% of the total at production scale at 2,300 pages/s.)

Here the program is the natural one of ``bench/lobsters/`` (``schema_natural.sql``, its
internal views, each page's read as a view ``q_<name>``) and the data the generator's
(:func:`bench.lobsters.data.generate`, ``Sizes.production(scale)``: at scale 1, the
default of ``bench.lobsters.run``, 9,200 users, 40,000 stories, 120,000 comments, ~640,000
votes). It is bulk-loaded once (``insert_many``) into a data directory in tmpfs, first the
tables alone (a copy of that directory is kept), then the views. Each configuration runs in
a fresh process (``python -m bench.lobsters_memory --worker``) on its own copy, so that its
resident memory is its own:

* ``tables``: the tables-only copy opened, no views and no reads: the interpreter, the
  modules every configuration imports, the page requests, rivulet and SQLite with the base
  tables (which live in SQLite's files; in memory only its page cache). This is the
  baseline subtracted from the others' resident memory. (Not the program opened with
  partial state and no reads: that process holds the program's full, non-partial state,
  which partial state cannot do without; subtracting it would flatter partial state.)
* ``partial``: the program opened with partial state (rivulet's default); its state and
  resident memory right after opening are what it holds before any read (the paper's
  essential state), then the pages run;
* ``full``: the program opened with ``rivulet.open(..., partial=False)`` (every view's
  state whole, built at open), then the same pages.

The pages are one seeded sequence (:class:`bench.lobsters.workload.Workload`, the
production mix of ``PRODUCTION_MIX``: story pages, the front page, user pages, ..., and
under 1% votes, comments and stories posted), generated once and replayed by both
configurations, 60,000 by default: the warm-up of ``bench.lobsters.run``, after which a
process's misses per page have fallen to about one (its popular stories and users filled).
Pages run one after the other, embedded (:class:`~bench.lobsters.backends.RivuletBackend`),
with ``settle()`` after each page that writes so that the pages' answers do not depend on
timing; a CRC-32 over every page's data must be the same for both configurations (else
exit status 1).

Measured in each process after the pages (after ``gc.collect()``): rivulet's accounting of
its state (``stats()["memory_bytes"]``) and the resident set (``VmRSS``; ``VmHWM`` is its
peak). Then, as in ``bench.memory``, the database's resident memory is broken down by
releasing allocator slack (``malloc_trim``) and SQLite's page caches. The state's real size
is measured too (``--no-measure`` skips it): for partial and full, another fresh process
traced by tracemalloc from before ``rivulet.open`` replays the pages, then drops every
state (:func:`bench.memory.drop_state`); the bytes freed are the state, against
``memory_bytes`` (``memory_estimate_error``). Under tracemalloc a page takes about ten
times as long, so these two processes run on a data set and pages of their own, the quick
run's (scale 0.05, 2,000 pages; ``--measure-scale``, ``--measure-pages``), loaded the same
way (``params.measured_on``).

Targets: ``rss_state_fraction``, the resident memory partial state adds over the baseline
process against what full state adds, ``(RSS partial - RSS tables) / (RSS full - RSS
tables)``, at most 0.25; and ``memory_estimate_error`` (the larger of partial and full, at
most 0.15, the goal of ``bench.memory``). The goal of 0.25: rivulet makes the same split as
Noria (full state only where a view has no key to be partial on: the front page's and the
recent page's top-k and what they read), so with no reads its state should be near the
paper's 9% (``essential_fraction``, reported); a page mix then fills only the keys it
reads, and the pages' Zipf skew (s = 1.08 over stories, 0.7 over users) concentrates those
on a fraction of the stories, while the full configuration holds every story's comments,
votes and counts and every user's pages. A quarter leaves room for the working set of
60,000 pages on top of the essential state and for what the resident memory adds to the
state in both (the dataflow graph, SQLite's caches, allocator slack), without accepting a
partial state that fills most of the full one. The paper's 60% working set is a different
measurement (the state below which latency suffers at a high load with eviction on), not
what a fixed page mix leaves in memory.

Run from the repository root: ``python -m bench.lobsters_memory`` (about 10 minutes here;
``bench/results/lobsters_memory.json``) or ``--quick`` (scale 0.05, 2,000 pages, under a
minute; ``lobsters_memory.quick.json``).
"""

from __future__ import annotations

import argparse
import enum
import gc
import json
import pickle
import shutil
import sys
import tempfile
import time
import tracemalloc
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.common import (
    Timer,
    busy_warning,
    environment,
    fmt_num,
    logger,
    print_table,
    target,
    write_results,
)
from bench.memory import rss_bytes, rss_diagnostics, run_worker, top_nodes, traced_state_bytes

NAME = "lobsters_memory"
VERSION = "natural"
GOALS = {"rss_state_fraction": 0.25, "memory_estimate_error": 0.15}
MODULE = "bench.lobsters_memory"


class Config(enum.Enum):
    """What a worker process opens."""

    TABLES = "tables"  # the tables and rows alone: the baseline
    PARTIAL = "partial"  # the program, partial state on (the default)
    FULL = "full"  # the program, every view's state whole

    @property
    def partial(self) -> bool:
        return self is not Config.FULL


# ......................................................................... loading


def load(parent: Path, scale: float, seed: int, pages: int, log: Callable[[str], None]
         ) -> dict[str, Any]:
    """Generate the data set and the pages; load ``parent/tables`` (tables and rows) and
    ``parent/program`` (a copy of it with the views); the pages go to ``parent/pages.pickle``.
    Returns the facts about them."""
    import rivulet
    from bench.lobsters.backends import create_views, load_tables
    from bench.lobsters.data import Sizes, generate
    from bench.lobsters.queries import query_set
    from bench.lobsters.workload import Workload

    queries = query_set(VERSION)
    parent.mkdir(parents=True, exist_ok=True)
    with Timer() as t_gen:
        dataset = generate(Sizes.production(scale), seed=seed)
        requests = Workload(dataset, seed=seed).take(pages)
    (parent / "pages.pickle").write_bytes(pickle.dumps(requests))
    log(f"generated {dataset.row_count():,} rows and {pages:,} pages in {t_gen.seconds:.1f} s")
    open_args: dict[str, Any] = {"prewarm": False, "spark_bootstrap_rows": None}
    with Timer() as t_tables:
        with rivulet.open(parent / "tables", **open_args) as db:
            load_tables(db, queries, dataset)
            db.settle(timeout=None)
    shutil.copytree(parent / "tables", parent / "program")
    with Timer() as t_views:
        with rivulet.open(parent / "program", **open_args) as db:
            create_views(db, queries)
            db.settle(timeout=None)
    log(f"loaded: tables in {t_tables.seconds:.1f} s, views in {t_views.seconds:.1f} s")
    return {
        "scale": scale, "sizes": asdict(dataset.sizes), "rows": dataset.row_count(),
        "rows_per_table": {name: len(rows) for name, rows in dataset.tables.items()},
        "pages": pages, "pages_per_type": dict(Counter(r.page for r in requests)),
        "pages_writing": sum(r.writes for r in requests),
        "distinct_users_signed_in": len({r.user for r in requests}),
        "distinct_stories_read": len({r.args["short_id"] for r in requests
                                      if r.page == "story"}),
        "load_seconds": {"generate": t_gen.seconds, "tables": t_tables.seconds,
                         "views": t_views.seconds},
        "database_bytes": sum(f.stat().st_size for f in (parent / "tables").rglob("*")
                              if f.is_file()),
    }


# ......................................................................... workers


def run_pages(backend: Any, requests: list[Any], label: str) -> dict[str, Any]:
    """Run ``requests`` in order on ``backend``, settled after each page (not only the
    pages of ``Request.writes``: a story page writes its read ribbon too, and a full
    view read before that write is propagated answers what a partial view, filled from
    the tables, does not). The pages' data go into one CRC-32, the same for every
    configuration."""
    from bench.lobsters.pages import run_page

    crc = 0
    with Timer() as t:
        for i, request in enumerate(requests):
            page = run_page(backend, request)
            backend.settle()
            crc = zlib.crc32(repr(page).encode(), crc)
            if (i + 1) % 10_000 == 0 and t.elapsed() > 30:
                print(f"    [{label}] {i + 1:,}/{len(requests):,} pages, {t.elapsed():.0f} s",
                      file=sys.stderr, flush=True)
    backend.settle()
    return {"pages": len(requests), "seconds": t.seconds, "crc32": crc}


def open_database(spec: dict[str, Any]) -> Any:
    import rivulet

    return rivulet.open(spec["data_dir"], partial=Config(spec["config"]).partial,
                        join_caches=spec["join_caches"], prewarm=False,
                        spark_bootstrap_rows=None)


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    """One configuration in this (fresh) process: open, run the pages (not ``tables``),
    measure state and resident memory."""
    from bench.lobsters.backends import RivuletBackend
    from bench.lobsters.queries import query_set

    config = Config(spec["config"])
    queries = query_set(VERSION)
    requests = pickle.loads(Path(spec["pages"]).read_bytes())  # in every process alike
    modules = len(sys.modules)
    gc.collect()
    before = rss_bytes()
    with Timer() as t_open:
        db = open_database(spec)
        db.settle(timeout=None)
    gc.collect()
    opened = db.stats()
    after_open = rss_bytes()
    out: dict[str, Any] = {
        "config": config.value, "partial": config.partial, "open_seconds": t_open.seconds,
        "memory_bytes_after_open": opened["memory_bytes"], "nodes": opened["nodes"],
        "nodes_holding_state_after_open": sum(
            1 for n in opened["per_node"].values() if n["memory_bytes"]),
        "nodes_partial": sum(1 for n in opened["per_node"].values() if n["partial"]),
    }
    backend = None
    if config is not Config.TABLES:
        backend = RivuletBackend.over(queries, db)
        out["pages"] = run_pages(backend, requests, config.value)
    gc.collect()
    st = db.stats()
    end = rss_bytes()
    out.update({
        "memory_bytes": st["memory_bytes"],
        "rss_bytes": {"before_open": before["rss"], "after_open": after_open["rss"],
                      "after_pages": end["rss"], "peak": end["hwm"]},
        "stats": {k: st[k] for k in ("hits", "misses", "upqueries", "evictions")},
        "top_nodes": top_nodes(st),
        "rss_diagnostics": rss_diagnostics(db, len(sys.modules) - modules),
    })
    (backend or db).close()
    return out


def measure_state(spec: dict[str, Any]) -> dict[str, Any]:
    """The state's real bytes against ``memory_bytes`` in this (fresh) process, traced by
    tracemalloc from before ``rivulet.open``: the bytes :func:`traced_state_bytes` sees
    freed when every state is dropped after the pages."""
    from bench.lobsters.backends import RivuletBackend
    from bench.lobsters.queries import query_set

    requests = pickle.loads(Path(spec["pages"]).read_bytes())
    gc.collect()
    tracemalloc.start()
    try:
        with Timer() as t:
            backend = RivuletBackend.over(query_set(VERSION), open_database(spec))
            try:
                pages = run_pages(backend, requests, f"measure {spec['config']}")
                accounted = backend.db.stats()["memory_bytes"]
                traced = traced_state_bytes(backend.db)
            finally:
                backend.close()
    finally:
        tracemalloc.stop()
    return {"config": spec["config"], "memory_bytes": accounted, "traced_bytes": traced,
            "error": abs(accounted - traced) / traced, "seconds": t.seconds,
            "crc32": pages["crc32"]}


# ......................................................................... results


def database_rss(config: dict[str, Any], baseline: dict[str, Any], at: str = "after_pages"
                 ) -> int:
    """What ``config``'s process holds in resident memory beyond the baseline process."""
    return int(config["rss_bytes"][at] - baseline["rss_bytes"]["after_open"])


def summarize(configs: dict[str, dict[str, Any]], measured: dict[str, dict[str, Any]],
              ) -> dict[str, Any]:
    """The ratios (partial / full) and the verification, from the workers' results."""
    tables, partial, full = (configs[c.value] for c in Config)
    full_rss = database_rss(full, tables)
    crcs = {name: c["pages"]["crc32"] for name, c in configs.items() if "pages" in c}
    measured_crcs = {name: m["crc32"] for name, m in measured.items()}
    return {
        "rss_state_fraction": database_rss(partial, tables) / full_rss,
        "state_fraction": partial["memory_bytes"] / full["memory_bytes"],
        "traced_state_fraction": (measured["partial"]["traced_bytes"]  # (measured_on)
                                  / measured["full"]["traced_bytes"]) if measured else None,
        "essential_fraction": partial["memory_bytes_after_open"]
        / full["memory_bytes_after_open"],
        "essential_rss_fraction": database_rss(partial, tables, "after_open")
        / database_rss(full, tables, "after_open"),
        "rss_over_baseline": {c: database_rss(configs[c], tables)
                              for c in ("partial", "full")},
        "rss_over_baseline_after_open": {c: database_rss(configs[c], tables, "after_open")
                                         for c in ("partial", "full")},
        "memory_estimate_error": max((m["error"] for m in measured.values()), default=None),
        "verification": {"ok": len(set(crcs.values())) == 1
                         and len(set(measured_crcs.values())) <= 1,
                         "page_crc32": crcs, "measured_page_crc32": measured_crcs,
                         "reference": "CRC-32 over every page's data, in order; the "
                                      "tracemalloc runs' pages (measured_on) among themselves"},
    }


def report(results: dict[str, Any]) -> None:
    p, s = results["params"], results["summary"]
    rows = []
    for name, c in results["configs"].items():
        rss, pages = c["rss_bytes"], c.get("pages")
        rows.append([name, fmt_num(c["memory_bytes_after_open"]), fmt_num(c["memory_bytes"]),
                     fmt_num(rss["after_open"]), fmt_num(rss["after_pages"]),
                     fmt_num(s["rss_over_baseline"].get(name)),
                     f"{c['stats']['misses']:,}" if pages else "-",
                     f"{pages['seconds']:.0f}" if pages else "-"])
    print_table(f"Lobsters (natural), scale {p['scale']:g}: {p['rows']:,} rows, "
                f"{p['pages']:,} pages" + (" (quick)" if results["quick"] else ""),
                ["config", "state at open B", "state B", "RSS at open B", "RSS B",
                 "RSS over tables B", "misses", "pages s"], rows)
    measured = results["measured_state"]
    if measured:
        print_table("the state's bytes: accounted against traced (tracemalloc)",
                    ["config", "memory_bytes", "traced", "error"],
                    [[n, fmt_num(m["memory_bytes"]), fmt_num(m["traced_bytes"]),
                      f"{m['error']:.1%}"] for n, m in measured.items()])
    traced = s["traced_state_fraction"]
    print(f"partial / full: by RSS over the baseline {s['rss_state_fraction']:.3f}, by "
          f"state {s['state_fraction']:.3f}"
          + (f", traced {traced:.3f}" if traced is not None else "")
          + f"; before any read (essential state) {s['essential_fraction']:.3f} "
          f"(RSS {s['essential_rss_fraction']:.3f}); pages "
          f"{'match' if s['verification']['ok'] else 'DIFFER'}")
    print_table("targets" + (" (quick run: indicative only)" if results["quick"] else ""),
                ["target", "value", "goal", "met"],
                [[k, f"{t['value']:.3g}" if t["value"] is not None else "-", f"{t['goal']:.3g}",
                  "yes" if t["met"] else "NO"] for k, t in results["targets"].items()])


# ......................................................................... main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="scale 0.05 and 2,000 pages (writes lobsters_memory.quick.json)")
    p.add_argument("--scale", type=float, help="data size in production Lobsters (default 1)")
    p.add_argument("--pages", type=int, help="pages in the mix (default 60,000; quick 2,000)")
    p.add_argument("--join-caches", choices=("lean", "kept"), default="lean",
                   help="rivulet.open's join_caches for both configurations (default: "
                        "rivulet's default, lean)")
    p.add_argument("--no-measure", action="store_true",
                   help="skip measuring the state with tracemalloc (memory_estimate_error)")
    p.add_argument("--measure-scale", type=float,
                   help="scale of the data set the tracemalloc runs use (default 0.05: under "
                        "tracemalloc a page takes ten times as long)")
    p.add_argument("--measure-pages", type=int,
                   help="pages of the tracemalloc runs (default 2,000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.scale = args.scale or (0.05 if args.quick else 1.0)
    args.pages = args.pages or (2_000 if args.quick else 60_000)
    args.measure_scale = args.measure_scale or min(args.scale, 0.05)
    args.measure_pages = args.measure_pages or min(args.pages, 2_000)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker is not None:
        spec = json.loads(args.worker.read_text())
        result = measure_state(spec) if spec.get("measure") else worker(spec)
        Path(spec["out"]).write_text(json.dumps(result))
        return 0

    started = time.time()
    log = logger()
    load_at_start = busy_warning(log)
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    parent = Path(tempfile.mkdtemp(prefix="rivulet-lobsters-memory-", dir=shm))
    log(f"Lobsters memory ({'quick' if args.quick else 'full'} run): scale {args.scale:g}, "
        f"{args.pages:,} pages; data in {parent}")
    configs: dict[str, dict[str, Any]] = {}
    measured: dict[str, dict[str, Any]] = {}
    try:
        params = load(parent, args.scale, args.seed, args.pages, log)

        def run(config: Config, source: Path, measure: bool = False) -> dict[str, Any]:
            label = f"{'measure_' if measure else ''}{config.value}"
            directory = parent / "runs" / label
            shutil.copytree(source / ("tables" if config is Config.TABLES else "program"),
                            directory)  # each process writes to a copy of its own
            spec = {"name": label, "config": config.value, "data_dir": str(directory),
                    "pages": str(source / "pages.pickle"), "join_caches": args.join_caches,
                    "measure": measure}
            result = run_worker(spec, parent, MODULE)
            shutil.rmtree(directory, ignore_errors=True)
            return result

        for config in Config:
            c = configs[config.value] = run(config, parent)
            log(f"[{config.value}] state {fmt_num(c['memory_bytes_after_open'])}B at open, "
                f"{fmt_num(c['memory_bytes'])}B after the pages; RSS "
                f"{fmt_num(c['rss_bytes']['after_open'])}B at open, "
                f"{fmt_num(c['rss_bytes']['after_pages'])}B after"
                + (f" ({c['pages']['seconds']:.0f} s, {c['stats']['misses']:,} misses)"
                   if "pages" in c else ""))
        if not args.no_measure:
            source = parent
            if (args.measure_scale, args.measure_pages) != (args.scale, args.pages):
                source = parent / "measure"
                params["measured_on"] = load(source, args.measure_scale, args.seed,
                                             args.measure_pages, log)
            for config in (Config.PARTIAL, Config.FULL):
                m = measured[config.value] = run(config, source, measure=True)
                log(f"[{config.value}] traced state {fmt_num(m['traced_bytes'])}B against "
                    f"{fmt_num(m['memory_bytes'])}B accounted (error {m['error']:.1%}; "
                    f"{m['seconds']:.0f} s under tracemalloc)")
    finally:
        shutil.rmtree(parent, ignore_errors=True)

    summary = summarize(configs, measured)
    results: dict[str, Any] = {
        "benchmark": NAME, "quick": args.quick,
        "params": {
            **params, "version": VERSION, "seed": args.seed, "join_caches": args.join_caches,
            "pages_run": "one after the other, embedded (RivuletBackend), settle() after each "
                         "page that writes; the same seeded sequence for every process",
            "rss": "VmRSS of each configuration's own fresh process after gc.collect(); "
                   "rss_state_fraction subtracts the baseline process (the tables and rows "
                   "opened with no views and no reads: interpreter, imports, the page list, "
                   "rivulet and SQLite with the base tables) from partial's and full's RSS "
                   "after the pages",
            "data_dir": "tmpfs; SQLite reads its files (no mmap), so they are not in RSS",
        },
        "configs": configs,
        "measured_state": measured,
        "summary": summary,
    }
    results["targets"] = {
        "rss_state_fraction": target(summary["rss_state_fraction"],
                                     GOALS["rss_state_fraction"], at_least=False),
        "memory_estimate_error": target(summary["memory_estimate_error"],
                                        GOALS["memory_estimate_error"], at_least=False),
    }
    results["targets_note"] = (
        "rss_state_fraction: (RSS partial - RSS tables) / (RSS full - RSS tables) after the "
        "same pages, each configuration in a fresh process; 'tables' is the tables and rows "
        "opened alone, no views, no reads. memory_estimate_error: |memory_bytes - traced| / "
        "traced, the larger of partial and full, each traced by tracemalloc in a fresh "
        "process. essential_fraction (summary): partial / full state right after opening, "
        "before any read (the paper's 9%)."
        + (" Quick run: indicative only." if args.quick else ""))
    results["environment"] = {**environment(), "load_average_at_start": load_at_start}
    results["duration_s"] = time.time() - started
    path = write_results(NAME, results, args.quick)
    report(results)
    log(f"results: {path} ({results['duration_s']:.0f} s)")
    if not summary["verification"]["ok"]:
        print("\nERROR: the configurations' pages differ; see summary.verification",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
