"""Transactions over the MySQL protocol: bank transfers, rivulet beside MariaDB (InnoDB).

The workload is the one an application's invariants rest on: money moves between accounts
and the total never changes. ``accounts(id, balance)`` holds ``--accounts`` accounts of
1,000 each. A transfer, as an application writes it with its MySQL driver (PyMySQL,
autocommit off for the transaction)::

    BEGIN
    SELECT id, balance FROM accounts WHERE id IN (a, b) FOR UPDATE
    -- the application checks the balance; too little money: ROLLBACK (a "decline")
    UPDATE accounts SET balance = balance - x WHERE id = a
    UPDATE accounts SET balance = balance + x WHERE id = b
    INSERT INTO transfers (src, dst, amount) VALUES (a, b, x)
    COMMIT

Accounts are drawn uniformly, or Zipf-distributed with ``--zipf`` (hot accounts: lock
waits and deadlocks). A transaction that fails with a deadlock (1213) or a lock wait
timeout (1205) is rolled back by its server and counted as an *abort*; the client goes on
with its next transfer, as an application's retry would.

Each system runs in its own process on loopback with its data in tmpfs: rivulet's MySQL
server (SQLite WAL, ``synchronous=NORMAL``: no flush at commit) and MariaDB with the
options of every benchmark here (``bench.mariadb.MARIADB_OPTIONS``: InnoDB, no log flush
at commit, no binary log), at its default isolation (REPEATABLE READ; rivulet runs READ
COMMITTED, which a locking read makes equivalent for this workload). For each number of
connections in ``--connections`` the systems take turns (interleaved phases, ``--repeat``
rounds, the median round reported): transactions/s, latency percentiles, aborts and
declines, and each server's CPU.

Verification, every system: the balances add up to the initial total, none is negative,
every account's balance is its initial one plus what ``transfers`` says came in minus what
went out, and ``transfers`` holds exactly the transfers whose COMMIT was acknowledged. Any
difference fails the benchmark (exit 1).

Targets: ``transactions_vs_mariadb`` (rivulet's transactions/s over MariaDB's, the lowest
ratio over the connection counts) at least 0.5, and ``write_votes_per_s_vs_before``:
autocommit writes keep their speed. ``bench.vote``'s write phase (rivulet embedded, 1,000
votes per commit) runs here on this checkout and on the commit before transactions
(``--before``, checked out in a temporary git worktree), alternately, ``--vote-repeat``
times each; the ratio of the medians must be at least 0.95.

Run from the repository root: ``python -m bench.transactions`` (``bench/results/
transactions.json`` and ``.png``) or ``--quick`` (under a minute: fewer accounts, shorter
phases, one round, no comparison of vote writes; ``transactions.quick.json``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import mariadb
from bench.common import (
    REPO_DIR,
    Zipf,
    bar_chart,
    busy_warning,
    environment,
    fmt_num,
    load_average,
    logger,
    print_table,
    results_path,
    target,
    uniform_ints,
    write_results,
)
from bench.load_generators import quiesce, run_clients, run_generators
from bench.mariadb import MARIADB_OPTIONS
from bench.server_process import RivuletServerProcess

NAME = "transactions"

INITIAL_BALANCE = 1_000
ACCOUNTS_SQL = "CREATE TABLE accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL)"
TRANSFERS_SQL = ("CREATE TABLE transfers (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
                 "src INT NOT NULL, dst INT NOT NULL, amount INT NOT NULL)")
LOCK = "SELECT id, balance FROM accounts WHERE id IN (%s, %s) FOR UPDATE"
DEBIT = "UPDATE accounts SET balance = balance - %s WHERE id = %s"
CREDIT = "UPDATE accounts SET balance = balance + %s WHERE id = %s"
RECORD = "INSERT INTO transfers (src, dst, amount) VALUES (%s, %s, %s)"
#: The MySQL errors a transaction may end with and an application retries.
DEADLOCK, LOCK_WAIT_TIMEOUT = 1213, 1205
#: The last commit before transactions were built (issue 27): autocommit writes are
#: compared with it.
BEFORE_TRANSACTIONS = "b0f9ef5"


@dataclass(frozen=True)
class Workload:
    accounts: int
    zipf: float  # 0: uniform
    seed: int


@dataclass(frozen=True)
class Target:
    """What a load generator connects to."""

    name: str
    port: int
    database: str


# ......................................................................... rivulet server


def load_rivulet(db: Any, w: Workload) -> None:
    """rivulet's tables and accounts (in the server process: ``RivuletServerProcess``)."""
    db.execute(ACCOUNTS_SQL)
    db.execute(TRANSFERS_SQL)
    db.table("accounts").insert_many((i, INITIAL_BALANCE) for i in range(w.accounts))
    db.settle()


def load_mariadb(server: mariadb.MariaDB, database: str, w: Workload) -> None:
    conn = server.connect(None)
    with conn.cursor() as c:
        c.execute(f"CREATE DATABASE {database}")
        c.execute(f"USE {database}")
        c.execute(ACCOUNTS_SQL + " ENGINE=InnoDB")
        c.execute(TRANSFERS_SQL + " ENGINE=InnoDB")
        rows = [(i, INITIAL_BALANCE) for i in range(w.accounts)]
        for lo in range(0, len(rows), 5_000):
            c.executemany("INSERT INTO accounts (id, balance) VALUES (%s, %s)",
                          rows[lo:lo + 5_000])
    conn.close()


# ......................................................................... load generators


def transfers_of(w: Workload, seed: int, n: int) -> list[tuple[int, int, int]]:
    """``n`` transfers (source, destination, amount), seeded; never from an account to
    itself."""
    if w.zipf:
        src = Zipf(w.accounts, w.zipf, seed).sample(n)
        dst = Zipf(w.accounts, w.zipf, seed + 1).sample(n)
    else:
        src = uniform_ints(0, w.accounts - 1, n, seed)
        dst = uniform_ints(0, w.accounts - 1, n, seed + 1)
    amounts = uniform_ints(1, 100, n, seed + 2)
    return [(a, b if b != a else (a + 1) % w.accounts, x) for a, b, x in zip(src, dst, amounts)]


def generator(t: Target, w: Workload, seed: int, threads: int, start_at: float, warmup: float,
              seconds: float, out: Any) -> None:
    """One load-generator process: ``threads`` connections, each running transfers in a
    closed loop."""
    import pymysql

    measure_from, measure_to = start_at + warmup, start_at + warmup + seconds
    results: list[dict[str, Any]] = []
    errors: list[str] = []

    def client(k: int) -> None:
        todo = transfers_of(w, seed * 1000 + k * 3, 20_000)
        latency_ns: list[int] = []
        committed: list[tuple[int, int, int]] = []  # every acknowledged transfer
        counts = {"committed": 0, "declined": 0, "deadlocks": 0, "lock_wait_timeouts": 0}
        try:
            conn = pymysql.connect(host="127.0.0.1", port=t.port, user="bench",
                                   database=t.database, autocommit=True)
            cursor = conn.cursor()
            clock = time.perf_counter_ns
            i = 0
            while time.time() < start_at:
                time.sleep(0.001)
            while True:
                now = time.time()
                if now >= measure_to:
                    break
                src, dst, amount = todo[i % len(todo)]
                i += 1
                measured = now >= measure_from
                t0 = clock()
                try:
                    conn.begin()
                    cursor.execute(LOCK, (src, dst))
                    balances = dict(cursor.fetchall())
                    if balances.get(src, 0) < amount:
                        conn.rollback()
                        outcome = "declined"
                    else:
                        cursor.execute(DEBIT, (amount, src))
                        cursor.execute(CREDIT, (amount, dst))
                        cursor.execute(RECORD, (src, dst, amount))
                        conn.commit()
                        committed.append((src, dst, amount))
                        outcome = "committed"
                except pymysql.err.OperationalError as exc:
                    code = exc.args[0]
                    if code not in (DEADLOCK, LOCK_WAIT_TIMEOUT):
                        raise
                    conn.rollback()  # (the server rolled back already: as a driver would)
                    outcome = "deadlocks" if code == DEADLOCK else "lock_wait_timeouts"
                if measured:
                    counts[outcome] += 1
                    if outcome == "committed":
                        latency_ns.append(clock() - t0)
            conn.close()
        except Exception as exc:
            errors.append(repr(exc))
        results.append({"latency_ns": latency_ns, "committed": committed, "counts": counts})

    cpu_seconds = run_clients(client, threads, measure_from, measure_to)
    out.put({
        "latency_ns": [x for r in results for x in r["latency_ns"]],
        "committed": [x for r in results for x in r["committed"]],
        "counts": {k: sum(r["counts"][k] for r in results) for k in results[0]["counts"]}
        if results else {},
        "cpu_seconds": cpu_seconds,
        "errors": errors[:5],
    })


def run_phase(t: Target, server_pid: int, connections: int, w: Workload,
              args: argparse.Namespace, ctx: Any, seed: int) -> dict[str, Any]:
    """``connections`` clients over ``min(2, connections)`` generator processes."""
    processes = min(2, connections)
    parts, server_cpu, wall = run_generators(
        ctx, generator, lambda g, start_at: (t, w, seed * 100 + g, connections // processes,
                                             start_at, args.warmup, args.seconds),
        processes, [server_pid], args.warmup, args.seconds, t.name, timeout=300)
    latencies = sorted(x for part in parts for x in part["latency_ns"])
    counts = {k: sum(part["counts"].get(k, 0) for part in parts)
              for k in ("committed", "declined", "deadlocks", "lock_wait_timeouts")}
    attempted = sum(counts.values())
    return {
        "connections": connections,
        "transactions_per_s": counts["committed"] / args.seconds,
        **counts,
        "aborts": counts["deadlocks"] + counts["lock_wait_timeouts"],
        "abort_rate": (counts["deadlocks"] + counts["lock_wait_timeouts"]) / attempted
        if attempted else 0.0,
        "latency_ms": {f"p{p}": _pct(latencies, p) for p in (50, 95, 99)},
        "server_cores": server_cpu / wall,
        "server_cpu_us_per_transaction": 1e6 * server_cpu / counts["committed"]
        if counts["committed"] else None,
        "clients_cores": sum(part["cpu_seconds"] for part in parts) / args.seconds,
        "committed_transfers": [x for part in parts for x in part["committed"]],
    }


def _pct(ordered: list[int], pct: float) -> float | None:
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))] / 1e6


# ......................................................................... verification


def verify(name: str, conn: Any, w: Workload,
           acknowledged: list[tuple[int, int, int]]) -> list[str]:
    """Every balance is its initial one plus what came in minus what went out, the total is
    unchanged, and ``transfers`` holds the acknowledged transfers, no more, no less."""
    with conn.cursor() as c:
        c.execute("SELECT id, balance FROM accounts")
        balances = {int(i): int(b) for i, b in c.fetchall()}
        c.execute("SELECT src, dst, amount FROM transfers")
        recorded = sorted((int(a), int(b), int(x)) for a, b, x in c.fetchall())
    problems = []
    if recorded != sorted(acknowledged):
        problems.append(f"{name}: transfers holds {len(recorded):,} rows, "
                        f"{len(acknowledged):,} commits were acknowledged")
    expected = dict.fromkeys(range(w.accounts), INITIAL_BALANCE)
    for src, dst, amount in recorded:
        expected[src] -= amount
        expected[dst] += amount
    if len(balances) != w.accounts:
        problems.append(f"{name}: {len(balances):,} accounts, {w.accounts:,} expected")
    total = sum(balances.values())
    if total != w.accounts * INITIAL_BALANCE:
        problems.append(f"{name}: the balances add up to {total:,}, "
                        f"not {w.accounts * INITIAL_BALANCE:,}")
    wrong = [i for i in expected if balances.get(i) != expected[i]]
    if wrong:
        i = wrong[0]
        problems.append(f"{name}: {len(wrong):,} balances disagree with transfers "
                        f"(account {i}: {balances.get(i)}, transfers say {expected[i]})")
    negative = [i for i, b in balances.items() if b < 0]
    if negative:
        problems.append(f"{name}: {len(negative):,} negative balances")
    return problems


# ......................................................................... autocommit writes


#: Run in a checkout (``cwd``): bench.vote's rivulet write phase on fresh data, as JSON.
VOTE_WRITES = """
import json, sys, tempfile
from pathlib import Path
sys.path.insert(0, ".")
from bench.common import Zipf, batches, uniform_ints
from bench import vote
stories, votes = 100_000, 1_000_000
users = uniform_ints(0, 9_999, votes, 43)
ids = Zipf(stories, 1.08, 42).sample(votes)
system = vote.Rivulet(Path(tempfile.mkdtemp(prefix="rivulet-vote-", dir="/dev/shm")))
system.load_stories([(i, f"story {i}") for i in range(stories)])
result = vote.write_phase(system, batches(list(zip(users, ids)), 1_000))
system.close()
print(json.dumps({"votes_per_s": result["votes_per_s"]}))
"""


def vote_writes_against(before: str, repeat: int, log: Any) -> dict[str, Any]:
    """``bench.vote``'s rivulet write figure here and at commit ``before``, alternately."""
    tree = Path(tempfile.mkdtemp(prefix="rivulet-before-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), before], cwd=REPO_DIR,
                   check=True, capture_output=True)
    runs: dict[str, list[float]] = {"now": [], "before": []}
    try:
        for rnd in range(repeat):
            for which, cwd in (("now", REPO_DIR), ("before", tree)):
                out = subprocess.run([sys.executable, "-c", VOTE_WRITES], cwd=cwd, check=True,
                                     capture_output=True, text=True).stdout
                runs[which].append(json.loads(out.strip().splitlines()[-1])["votes_per_s"])
                log(f"vote writes, {which} (round {rnd + 1}): "
                    f"{fmt_num(runs[which][-1])} votes/s")
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO_DIR,
                       capture_output=True)
        shutil.rmtree(tree, ignore_errors=True)
    now, then = statistics.median(runs["now"]), statistics.median(runs["before"])
    return {"before_commit": before, "votes_per_s_now": now, "votes_per_s_before": then,
            "ratio": now / then, "runs": runs}


# ......................................................................... main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.transactions", description=__doc__.split(
        "\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="1,000 accounts, 1 and 4 connections, 3 s phases, one round, no "
                        "comparison of vote writes (writes transactions.quick.json)")
    p.add_argument("--accounts", type=int, help="accounts (default 10,000; quick 1,000)")
    p.add_argument("--zipf", type=float, default=0.0,
                   help="Zipf exponent of the accounts drawn (default 0: uniform)")
    p.add_argument("--connections", type=str, help="comma-separated connection counts "
                   "(default 1,4,16; quick 1,4)")
    p.add_argument("--seconds", type=float, help="measured seconds per phase (10; quick 3)")
    p.add_argument("--warmup", type=float, help="seconds before measuring (2; quick 1)")
    p.add_argument("--repeat", type=int, help="rounds, median reported (3; quick 1)")
    p.add_argument("--before", default=BEFORE_TRANSACTIONS,
                   help="commit whose autocommit vote writes are compared (default: the "
                        "last before transactions)")
    p.add_argument("--vote-repeat", type=int,
                   help="write phases of bench.vote per checkout (5; quick: none)")
    p.add_argument("--mariadb-port", type=int, default=33307)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    quick = args.quick
    args.accounts = args.accounts or (1_000 if quick else 10_000)
    args.connections = [int(n) for n in (args.connections or ("1,4" if quick else "1,4,16"))
                        .split(",")]
    args.seconds = args.seconds or (3.0 if quick else 10.0)
    args.warmup = args.warmup if args.warmup is not None else (1.0 if quick else 2.0)
    args.repeat = args.repeat or (1 if quick else 3)
    args.vote_repeat = args.vote_repeat if args.vote_repeat is not None else (0 if quick else 5)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log = logger()
    load_at_start = busy_warning(log)
    w = Workload(args.accounts, args.zipf, args.seed)
    ctx = mp.get_context("spawn")
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    root = Path(tempfile.mkdtemp(prefix="rivulet-transactions-", dir=shm))
    log(f"transactions: {w.accounts:,} accounts ("
        + (f"Zipf {w.zipf}" if w.zipf else "uniform") + f"), connections {args.connections}, "
        f"{args.seconds:g} s measured per phase, {args.repeat} round(s); data in {root}")
    rivulet_proc: RivuletServerProcess | None = None
    server: mariadb.MariaDB | None = None
    phases: dict[tuple[str, int], list[dict[str, Any]]] = {}
    problems: list[str] = []
    try:
        rivulet_proc = RivuletServerProcess(root / "rivulet", load_rivulet, (w,), ctx)
        mariadb.MariaDB.ensure_installed(log)
        server = mariadb.MariaDB(root / "mariadb", args.mariadb_port)
        server.start()
        load_mariadb(server, "bank", w)
        targets = [(Target("rivulet", rivulet_proc.port, "rivulet"), rivulet_proc.pid),
                   (Target("mariadb", server.port, "bank"), server.pid)]
        pids = [pid for _, pid in targets]
        for rnd in range(args.repeat):
            for connections in args.connections:
                for t, pid in targets:
                    quiesce(pids)
                    r = run_phase(t, pid, connections, w, args, ctx,
                                  seed=args.seed + rnd * 100 + connections)
                    phases.setdefault((t.name, connections), []).append(r)
                    log(f"[{t.name}] {connections} connections, round {rnd + 1}: "
                        f"{fmt_num(r['transactions_per_s'])} transactions/s, p95 "
                        f"{r['latency_ms']['p95'] or 0:.2f} ms, {r['aborts']} aborts, "
                        f"{r['declined']} declined; server {r['server_cores']:.2f} cores")
        rivulet_proc.settle()
        for t, _ in targets:
            acknowledged = [x for (name, _), runs in phases.items() if name == t.name
                            for r in runs for x in r["committed_transfers"]]
            conn = (server.connect("bank") if t.name == "mariadb" else
                    rivulet_connect(t))
            problems += verify(t.name, conn, w, acknowledged)
            conn.close()
        log("verification: " + ("every balance agrees with the acknowledged transfers"
                                if not problems else f"{len(problems)} problems"))
    finally:
        if rivulet_proc is not None:
            rivulet_proc.stop()
        if server is not None:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)

    votes = vote_writes_against(args.before, args.vote_repeat, log) if args.vote_repeat else None
    results = summarize(phases, args, w, problems, votes, load_at_start)
    path = write_results(NAME, results, args.quick)
    report(results)
    plot = plot_results(results, results_path(NAME, args.quick, "png"))
    log(f"results: {path}" + (f", {plot}" if plot else ""))
    for problem in problems[:10]:
        log("PROBLEM " + problem)
    return 1 if problems else 0


def rivulet_connect(t: Target) -> Any:
    """A connection to rivulet that reads its own writes (the verification reads right
    after the last commits)."""
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=t.port, user="bench", database=t.database,
                           autocommit=True)
    with conn.cursor() as c:
        c.execute("SET rivulet_read_your_writes = 1")
    return conn


def summarize(phases: dict[tuple[str, int], list[dict[str, Any]]], args: argparse.Namespace,
              w: Workload, problems: list[str], votes: dict[str, Any] | None,
              load_at_start: list[float] | None) -> dict[str, Any]:
    by_connections: dict[int, dict[str, Any]] = {}
    for (name, connections), runs in phases.items():
        med = sorted(runs, key=lambda r: r["transactions_per_s"])[len(runs) // 2]
        by_connections.setdefault(connections, {})[name] = (
            {k: v for k, v in med.items() if k != "committed_transfers"}
            | {"transactions_per_s_rounds": [r["transactions_per_s"] for r in runs]})
    ratios = {n: s["rivulet"]["transactions_per_s"] / s["mariadb"]["transactions_per_s"]
              for n, s in sorted(by_connections.items())
              if s.get("mariadb", {}).get("transactions_per_s")}
    targets = {"transactions_vs_mariadb": target(min(ratios.values()) if ratios else None, 0.5)}
    if votes is not None:
        targets["write_votes_per_s_vs_before"] = target(votes["ratio"], 0.95)
    return {
        "benchmark": NAME,
        "quick": args.quick,
        "params": {**asdict(w), "initial_balance": INITIAL_BALANCE,
                   "connections": args.connections, "seconds": args.seconds,
                   "warmup": args.warmup, "repeat": args.repeat,
                   "figure": "median round by transactions/s",
                   "transaction": ["BEGIN", LOCK, DEBIT, CREDIT, RECORD, "COMMIT"],
                   "driver": "PyMySQL", "mariadb_options": MARIADB_OPTIONS,
                   "mariadb_isolation": "REPEATABLE READ (default)",
                   "rivulet_isolation": "READ COMMITTED"},
        "targets": targets,
        "targets_note": "transactions_vs_mariadb is the lowest ratio over the connection "
                        "counts; write_votes_per_s_vs_before is bench.vote's rivulet write "
                        "phase here over the same at the commit before transactions, medians "
                        "of alternate runs",
        "ratios_by_connections": ratios,
        "by_connections": by_connections,
        "vote_writes": votes,
        "verification": {"ok": not problems, "problems": problems[:20]},
        "environment": environment() | {"load_average_at_start": load_at_start,
                                        "load_average_at_end": load_average()},
    }


def report(results: dict[str, Any]) -> None:
    rows = []
    for n, systems in results["by_connections"].items():
        for name, s in systems.items():
            rows.append([str(n), name, fmt_num(s["transactions_per_s"]),
                         f"{s['latency_ms']['p50'] or 0:.2f}", f"{s['latency_ms']['p95'] or 0:.2f}",
                         str(s["aborts"]), str(s["declined"]), f"{s['server_cores']:.2f}"])
    print_table("bank transfers over the MySQL protocol (median round)",
                ["connections", "system", "transactions/s", "p50 ms", "p95 ms", "aborts",
                 "declined", "server cores"], rows)
    rows = [[k, fmt_num(v["value"]), f"{'<=' if v['direction'] == 'at most' else '>='} {v['goal']}",
             "met" if v["met"] else "MISSED"] for k, v in results["targets"].items()]
    print_table("targets", ["target", "value", "goal", ""], rows)


def plot_results(results: dict[str, Any], path: Path) -> Path | None:
    by = results["by_connections"]
    groups = [f"{n} conn." for n in by]
    names = sorted({name for systems in by.values() for name in systems})
    return bar_chart(path, "bank transfers over the MySQL protocol", [
        {"title": "transactions/s", "ylabel": "transactions/s", "groups": groups,
         "log": False, "series": {name: [by[n][name]["transactions_per_s"] for n in by]
                                  for name in names}},
        {"title": "p95 latency (ms)", "ylabel": "ms", "groups": groups, "log": False,
         "series": {name: [by[n][name]["latency_ms"]["p95"] or 0 for n in by]
                    for name in names}},
    ])


if __name__ == "__main__":
    raise SystemExit(main())
