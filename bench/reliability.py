"""Reliability benchmark (issue 8): crash cycles, fuzzing, and a soak under a memory limit.

``python -m bench.reliability`` (full: >= 50 kill points, 60-minute soak; run it under the
bench lock) or ``--quick`` (< 1 minute: a few kill points, a 20 s soak). Writes
``bench/results/reliability[.quick].json`` with these targets:

* ``data_dir_single_writer``: the data-directory scenarios (tests/test_data_dir_lock.py,
  tests/test_commit_failure.py) run by pytest: a second writer beside a server or a program
  is refused naming the holder and the server writes on, a crashed holder's lock is taken
  over, a commit path broken behind a server's back fails it for its supervisor. Goal: every
  scenario passes.
* ``kill_points_survived``: crash cycles (bench/reliability_crash.py) whose restart held
  every acknowledged write exactly once, every transaction (a transfer between accounts,
  committed or rolled back, embedded or BEGIN ... COMMIT over MySQL) all there or not at
  all, and answered every view as SQLite does over the recovered tables. Every named fault
  point in turn (``transaction_apply`` inside a transaction's commit among them), random
  moments, a share of cycles over ``rivulet serve``, and (full run) kills inside a Spark
  bootstrap. Goal: >= 50.
* ``fuzz_inputs_without_failure``: inputs of bench/reliability_fuzz.py (SQL, writes, HTTP
  requests, MySQL packets, and the oracle fuzzer's generated SQL) that got a clear error
  or ran correctly (see :func:`run_fuzz`); met only with no failure at all. Goal: >= 1,000.
* ``fuzz_inputs_checked_against_oracle``: inputs rivulet accepted (embedded, over MySQL,
  over HTTP) whose answer was compared with a private MariaDB set up as MySQL
  (bench/reliability_oracle.py): rows, values and types, affected rows and the tables
  written. Goal: >= 100,000 (quick: 1,000).
* ``fuzz_oracle_mismatches``: the comparisons that found rivulet answering otherwise than
  MySQL (each kept with a repro in the result file, ``fuzz.oracle.examples``), shapes the
  generator avoids by name aside (``fuzz.oracle.avoided_shapes``). Goal: 0.
* ``soak_minutes_within_limit``: minutes of the soak (bench/reliability_soak.py) with no
  client error and rivulet's state never above its memory limit. Goal: every minute.
* ``soak_minutes_rss_within_limit``: minutes that are also within the limit by the process's
  resident memory (at most the limit plus the fixed overhead the soak measures and states)
  with no stuck upquery. Goal: 60 (quick: every minute).
* ``soak_rss_growth_second_half``: how much the server's RSS grew over the soak's second
  half (the last 30 minutes). Goal: at most 0.05.
* ``memory_estimate_error``: rivulet's accounting of its state (what the limit enforces)
  against the bytes the state holds by tracemalloc, on the soak's database after the soak
  with its read mix replayed (``reliability_soak.measure_accounting``). Goal: at most 0.15.

Plus the raw figures: each cycle (fault, acknowledged and in-flight writes, recovery time),
the soak's throughput, memory against the limit, RSS, errors and slowest read per interval,
and a plot of the soak (``reliability.png``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench import reliability_crash as crash
from bench import reliability_soak as soak
from bench.common import (
    REPO_DIR,
    busy_warning,
    environment,
    git_state,
    logger,
    print_table,
    results_path,
    target,
    write_results,
)

NAME = "reliability"
KILL_POINTS = {True: 6, False: 60}
KILL_GOAL = 50
#: The fuzzers' own budget is ~30 s quick, at most ~9 minutes full (the oracle fuzzer stops
#: at its goal: bench.reliability_fuzz.SECONDS and ORACLE_GOALS).
FUZZ_TIMEOUT_S = {True: 180, False: 900}
#: Inputs the fuzzers must check against the oracle (issue 26).
ORACLE_GOAL = {True: 1_000, False: 100_000}


def run_crash(count: int, work: Path, log: Callable[[str], None], *, spark_every: int,
              seed: int = 8) -> dict[str, Any]:
    """``count`` crash cycles on one database; stops at the first failed check (the ledger
    is no longer the truth after one)."""
    path = work / "crash-db"
    ledger = crash.new_database(path)
    rnd = random.Random(seed)
    cycles, failure = [], None
    plan = crash.plan_cycles(count, rnd, spark_every=spark_every)
    for cycle, (mode, fault) in enumerate(plan, 1):
        try:
            result = crash.run_cycle(path, ledger, cycle, mode, fault, rnd=rnd,
                                     timeout=300 if fault == crash.SPARK_FAULT else 60)
        except AssertionError as exc:
            failure = {"cycle": cycle, "mode": mode, "fault": fault, "error": str(exc)[:2000]}
            log(f"crash cycle {cycle} ({mode}, {fault}) FAILED: {exc}")
            break
        cycles.append(result.as_dict())
        log(f"crash cycle {cycle:3d} {mode:8s} {fault:22s} reached={result.reached!s:5s} "
            f"acked={result.acked:4d} in-flight={result.in_flight} "
            f"recovery={result.check['recovery_s']:.2f}s rows={result.check['rows']:,} "
            f"transfers={result.check['transfers']:,} (in flight "
            f"{result.check['transfers_in_flight_stored']}/{result.check['transfers_in_flight']}"
            f" stored, {result.check['transfers_undone']} rolled back)")
    survived = sum(1 for c in cycles if c["reached"])
    by_fault: dict[str, int] = {}
    for c in cycles:
        by_fault[c["fault"]] = by_fault.get(c["fault"], 0) + 1
    return {"cycles_run": len(cycles), "survived": survived, "failure": failure,
            "by_fault": by_fault, "acked_writes": sum(c["acked"] for c in cycles),
            "in_flight_at_kill": sum(c["in_flight"] for c in cycles),
            "transfers_acked": sum(c["transfers_acked"] for c in cycles),
            "transfers_in_flight_at_kill": sum(c["transfers_in_flight"] for c in cycles),
            "transfers_in_flight_stored": sum(c["transfers_in_flight_stored"] for c in cycles),
            "transfers_rolled_back": sum(c["transfers_undone"] for c in cycles),
            "transfers_at_end": cycles[-1]["transfers"] if cycles else 0,
            "rows_at_end": cycles[-1]["rows"] if cycles else 0,
            "views_at_end": cycles[-1]["views"] if cycles else 0,
            "max_recovery_s": max((c["recovery_s"] for c in cycles), default=None),
            "cycles": cycles}


#: The data-directory scenarios (issue 28, item 1) and the failing commit path, as tests.
SINGLE_WRITER_TESTS = ("tests/test_data_dir_lock.py", "tests/test_commit_failure.py")


def run_single_writer(work: Path) -> dict[str, Any]:
    """Run the single-writer scenarios (a second writer beside a server or a program is
    refused naming the holder, the server writes on; a crashed holder's lock is taken over;
    a commit path broken behind the server's back fails it for a restart) through pytest,
    and report each scenario's outcome from its JUnit XML."""
    import xml.etree.ElementTree as ET

    report = work / "single-writer.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         f"--junitxml={report}", *SINGLE_WRITER_TESTS],
        cwd=REPO_DIR, capture_output=True, text=True, timeout=900)
    cases = []
    for case in ET.parse(report).getroot().iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        cases.append({"test": f"{case.get('classname')}::{case.get('name')}",
                      "passed": not failed and case.find("skipped") is None,
                      "seconds": float(case.get("time") or 0)})
    return {"scenarios": len(cases), "passed": sum(c["passed"] for c in cases),
            "exit_code": done.returncode, "output_tail": done.stdout[-1500:], "cases": cases}


def run_fuzz(quick: bool) -> dict[str, Any] | None:
    """The fuzzing figures, if ``bench.reliability_fuzz`` exists and has ``run(quick)``
    (returning at least ``inputs`` and ``failures``), with ``inputs_without_failure`` added:
    the inputs that got their clear error or ran correctly. None otherwise."""
    if importlib.util.find_spec("bench.reliability_fuzz") is None:
        return None
    from bench import reliability_fuzz

    if getattr(reliability_fuzz, "run", None) is None:
        return None
    # In a process of its own, with a time limit: a fuzzer that hangs (a socket that never
    # drains) must not take the crash and soak figures down with it.
    code = ("import json, sys; from bench.reliability_fuzz import run; "
            f"out = run({quick!r}); print('RESULT ' + json.dumps(out, default=str))")
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=str(REPO_DIR), timeout=FUZZ_TIMEOUT_S[quick])
    except subprocess.TimeoutExpired:
        return {"error": f"the fuzzers did not finish within {FUZZ_TIMEOUT_S[quick]} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        return {"error": f"exit code {done.returncode}: {done.stderr[-2000:]}"}
    out = json.loads(lines[-1].removeprefix("RESULT "))
    out.setdefault("inputs_without_failure", out["inputs"] - out["failures"])
    return out


def log_mismatches(fuzz: dict[str, Any] | None, log: Callable[[str], None]) -> None:
    """Each mismatch and failure the oracle checks kept (the result file has them too,
    with their repros)."""
    oracle = (fuzz or {}).get("oracle") or {}
    log(f"fuzz: {oracle.get('checked_against_oracle', 0):,} inputs checked against the "
        f"oracle, {oracle.get('mismatches', 0)} mismatches, {oracle.get('failures', 0)} "
        f"failures, {oracle.get('refusals', 0):,} refusals")
    answered = oracle.get("listed_as_refused_but_answered")
    if answered:  # (checked against the oracle like the rest: the list is behind rivulet)
        log(f"fuzz: listed as refused but answered (take them out of listed_refusals() in "
            f"bench/reliability_fuzz.py): {answered}")
    for example in oracle.get("examples", []):
        log(f"{example['kind']} over {example['front']}:\n{example['report']}\n"
            f"-- repro:\n{example['repro'][-3000:]}")


def plot(path: Path, figures: dict[str, Any]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    rows = figures["intervals"]
    t = [r["t_s"] for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    top.plot(t, [r["reads_per_s"] for r in rows], label="reads/s")
    top.plot(t, [r["writes_per_s"] for r in rows], label="writes/s")
    top.set_ylabel("operations / s")
    top.legend()
    top.set_title(f"soak: {figures['config']['clients']} MySQL clients, a view added every "
                  f"{figures['config']['view_every']:.0f} s (the oldest beyond "
                  f"{figures['config']['live_views']} dropped)")
    bottom.plot(t, [(r["memory_max_bytes"] or 0) / 1e6 for r in rows], label="state (max)")
    bottom.axhline(figures["limit_bytes"] / 1e6, color="red", linestyle="--", label="limit")
    bottom.plot(t, [(r["rss_max_bytes"] or 0) / 1e6 / 10 for r in rows], label="RSS / 10")
    bottom.set_ylabel("MB")
    bottom.set_xlabel("seconds")
    bottom.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="< 1 minute")
    parser.add_argument("--kill-points", type=int, default=None)
    parser.add_argument("--soak-seconds", type=float, default=None)
    parser.add_argument("--skip", choices=["single-writer", "crash", "fuzz", "soak"],
                        action="append", default=[])
    args = parser.parse_args(argv)
    quick = args.quick
    log = logger()
    load = busy_warning(log)
    work = Path(tempfile.mkdtemp(prefix="rivulet-reliability-"))
    out: dict[str, Any] = {"benchmark": NAME, "quick": quick, "environment": environment(),
                           "git": git_state(), "load_average_before": load}
    started = time.perf_counter()
    try:
        if "single-writer" not in args.skip:
            out["single_writer"] = run_single_writer(work)
            log(f"single writer: {out['single_writer']['passed']} of "
                f"{out['single_writer']['scenarios']} scenarios passed")
        if "crash" not in args.skip:
            count = args.kill_points or KILL_POINTS[quick]
            out["crash"] = run_crash(count, work, log, spark_every=0 if quick else 20)
        if "fuzz" not in args.skip:
            try:
                out["fuzz"] = run_fuzz(quick)
            except Exception:  # noqa: BLE001 - the other figures still count
                out["fuzz"] = {"error": traceback.format_exc()[-2000:]}
            log_mismatches(out["fuzz"], log)
        if "soak" not in args.skip:
            cfg = soak.QUICK if quick else soak.LONG
            if args.soak_seconds:
                cfg = soak.SoakConfig(**{**cfg.__dict__, "seconds": args.soak_seconds})
            out["soak"] = soak.run_soak(cfg, work, log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["seconds"] = round(time.perf_counter() - started, 1)
    crash_out, fuzz_out, soak_out = out.get("crash"), out.get("fuzz"), out.get("soak")
    fuzz_target = target((fuzz_out or {}).get("inputs_without_failure"),
                         1000 if not quick else 100)
    fuzz_target["met"] = fuzz_target["met"] and not (fuzz_out or {}).get("failures")
    oracle_out = (fuzz_out or {}).get("oracle") or {}
    single = out.get("single_writer")
    out["targets"] = {
        "data_dir_single_writer": target(
            single["passed"] if single else None, single["scenarios"] if single else 1),
        "kill_points_survived": target(
            crash_out["survived"] if crash_out and not crash_out["failure"] else 0,
            KILL_GOAL if not quick else KILL_POINTS[True]),
        "fuzz_inputs_without_failure": fuzz_target,
        "fuzz_inputs_checked_against_oracle": target(
            oracle_out.get("checked_against_oracle"), ORACLE_GOAL[quick]),
        "fuzz_oracle_mismatches": target(oracle_out.get("mismatches"), 0, at_least=False),
        "soak_minutes_within_limit": target(
            soak_out["minutes_within_limit"] if soak_out else None,
            soak_out["minutes"] if soak_out else 60.0),
        "soak_minutes_rss_within_limit": target(
            soak_out["minutes_rss_within_limit"] if soak_out else None,
            60.0 if not quick else (soak_out["minutes"] if soak_out else 0.0)),
        "soak_rss_growth_second_half": target(
            soak_out["rss_growth_second_half"] if soak_out else None, 0.05, at_least=False),
        "memory_estimate_error": target(
            soak_out["accounting"]["memory_estimate_error"] if soak_out else None, 0.15,
            at_least=False),
    }
    path = write_results(NAME, out, quick)
    if soak_out:
        plot(results_path(NAME, quick, "png"), soak_out)
    print_table("reliability targets", ["target", "value", "goal", "met"],
                [(k, v["value"], v["goal"], v["met"]) for k, v in out["targets"].items()])
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
