"""The crash harness: writers against rivulet, SIGKILL at fault points and at random, restart,
and check that nothing acknowledged is lost or doubled and every view is right.

One *cycle*: start a process that writes (the embedded API in a child process, or ``rivulet
serve`` written to over the MySQL protocol by threads here), let it die at a named fault
point (``RIVULET_FAULTS``, rivulet/faults.py) or kill it at a random moment, then open the
data directory again (a restart: recovery runs) and check it (:func:`verify`):

* every write acknowledged before the kill is present exactly once: ``events`` has no
  primary key, so a batch applied twice would show as duplicate rows; an acknowledged
  ``UPDATE counters SET n = n + 1`` is counted exactly once;
* a write in flight at the kill (sent, not acknowledged) is all there or not at all;
* a transfer between ``accounts`` (a transaction: two UPDATEs and a row of the
  ``transfers`` log, by the embedded API or BEGIN ... COMMIT over MySQL) is there whole once
  its COMMIT returned, whole or not at all if it was in flight, and never if it ended in
  ROLLBACK or was aborted (a deadlock): the total of the balances never changes and each
  balance is its opening one moved by exactly the transfers logged;
* nothing is present that no one wrote;
* every view, the ones the writers added while running included, answers what SQLite
  answers for the view's query over the recovered base tables (read from rivulet's SQLite
  file itself, not through rivulet).

What was written is deterministic (:func:`operation` of cycle, writer and sequence number),
so a writer reports only ``S w seq`` (sent), ``A w seq`` (acknowledged: the COMMIT, or the
ROLLBACK, returned) and ``X w seq`` (a transaction aborted by a deadlock or a conflict:
nothing stored); and ``E ...`` if a reader saw the total of the balances changed (a
transaction's changes reached a view in parts). After each
check the ledger takes the recovered state as the truth for the next cycle, so the cycles
run on one growing database and each restart recovers everything before it.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_DIR = Path(__file__).resolve().parent.parent

GROUPS = 16
WRITERS = 4
#: Writer 0 adds a view (a migration) every this many operations.
VIEW_EVERY = 25
#: Operations per writer and cycle at most (then the writer idles until killed).
MAX_OPS = 600

#: Accounts that transfers move money between, and each one's opening balance.
ACCOUNTS = 8
OPENING = 1_000
#: Share of operations that are transfers (transactions), and of those that end in ROLLBACK.
TRANSFER_SHARE = 0.15
ROLLBACK_SHARE = 0.2

PROGRAM = """
CREATE TABLE events (id INT NOT NULL, writer INT NOT NULL, g INT NOT NULL, v INT NOT NULL);
CREATE TABLE counters (id INT PRIMARY KEY, n INT NOT NULL);
CREATE TABLE accounts (id INT PRIMARY KEY, balance INT NOT NULL);
CREATE TABLE transfers (id INT PRIMARY KEY, src INT NOT NULL, dst INT NOT NULL,
    amount INT NOT NULL);
CREATE TABLE notes (id INT PRIMARY KEY, score INT NOT NULL);
CREATE VIEW per_g AS SELECT g, COUNT(*) AS c, SUM(v) AS s, MIN(id) AS lo, MAX(id) AS hi
    FROM events GROUP BY g;
CREATE VIEW of_g AS SELECT id, v FROM events WHERE g = ?;
CREATE VIEW top_g AS SELECT id, v FROM events WHERE g = ? ORDER BY id DESC LIMIT 5;
CREATE VIEW counts AS SELECT id, n FROM counters WHERE id = ?;
CREATE VIEW joined AS SELECT counters.id, counters.n, COUNT(events.id) AS c
    FROM counters LEFT JOIN events ON counters.id = events.writer GROUP BY counters.id, counters.n;
CREATE VIEW total AS SELECT COUNT(*) AS c, COUNT(DISTINCT writer) AS w FROM events;
CREATE VIEW money AS SELECT COUNT(*) AS n, SUM(balance) AS s FROM accounts;
CREATE VIEW balance_of AS SELECT balance FROM accounts WHERE id = ?;
CREATE VIEW sent AS SELECT src, COUNT(*) AS c, SUM(amount) AS s FROM transfers GROUP BY src;
"""

#: The tables the views read, with their columns: copied from rivulet's SQLite file into
#: the oracle (:func:`_oracle`).
ORACLE_TABLES: dict[str, str] = {
    "events": "id, writer, g, v",
    "counters": "id, n",
    "accounts": "id, balance",
    "transfers": "id, src, dst, amount",
}

#: The program's parameterized views and the parameters each is checked with.
PARAMETERS: dict[str, list[tuple]] = {
    "of_g": [(g,) for g in range(GROUPS)],
    "top_g": [(g,) for g in range(GROUPS)],
    "counts": [(w,) for w in range(WRITERS + 1)],
    "balance_of": [(a,) for a in range(ACCOUNTS)],
}

#: Rows of ``notes``, whose ``score`` an ALTER TABLE turns from INT to VARCHAR and back:
#: converted lazily in chunks of 1,000 rows (the ``schema_conversion_chunk`` fault point).
NOTES = 3_000
#: The writer number of the one ALTER TABLE of a conversion cycle.
ALTERER = 7

#: Fault points a cycle can kill at, with the range of ``n`` (which reach kills).
FAULTS: dict[str, tuple[int, int]] = {
    "commit_before_durable": (1, 40),
    "commit_before_ack": (1, 40),
    # Reached once per table of a committing transfer (accounts, then transfers): an odd
    # count dies with the accounts stored in the group's SQLite transaction, the log not.
    "transaction_apply": (1, 30),
    "propagate": (1, 40),
    "upquery": (1, 15),
    "migration_build": (1, 2),
    "migration_commit": (1, 2),
    "schema_conversion_chunk": (1, 3),
}
SPARK_FAULT = "spark_bootstrap"


# ......................................................................... operations


@dataclass(frozen=True)
class Op:
    """One write: ``insert`` rows into events, ``update`` a counter, ``view`` (CREATE VIEW),
    ``alter`` (toggle the type of ``notes.score`` between INT and VARCHAR), or ``transfer``
    (a transaction moving ``amount`` from account ``src`` to ``dst`` and logging
    ``(id, src, dst, amount)`` in ``transfers``; ended by ROLLBACK if ``rollback``)."""

    writer: int
    seq: int
    kind: str
    rows: tuple[tuple[int, int, int, int], ...] = ()
    view: str = ""
    sql: str = ""
    transfer: tuple[int, int, int, int] = (0, 0, 0, 0)
    rollback: bool = False


def operation(cycle: int, writer: int, seq: int) -> Op:
    """The ``seq``-th write of ``writer`` in ``cycle`` (ids are unique over all of them)."""
    rnd = random.Random((cycle * 64 + writer) * 1_000_003 + seq)
    if writer == ALTERER:
        return Op(writer, seq, "alter")
    if writer == 0 and seq % VIEW_EVERY == VIEW_EVERY - 1:
        name = f"mig_{cycle}_{seq}"
        return Op(writer, seq, "view", view=name,
                  sql=f"SELECT g, COUNT(*) AS c, SUM(v) AS s FROM events "
                      f"WHERE v >= {rnd.randint(0, 90)} GROUP BY g")
    draw = rnd.random()
    if draw < 0.25:
        return Op(writer, seq, "update")
    base = ((cycle * 8 + writer) * 20_000 + seq) * 8
    if draw < 0.25 + TRANSFER_SHARE:
        src, dst = rnd.sample(range(ACCOUNTS), 2)
        return Op(writer, seq, "transfer", transfer=(base, src, dst, rnd.randint(1, 100)),
                  rollback=rnd.random() < ROLLBACK_SHARE)
    rows = tuple((base + j, writer, rnd.randrange(GROUPS), rnd.randint(0, 99))
                 for j in range(rnd.randint(1, 5)))
    return Op(writer, seq, "insert", rows=rows)


def insert_sql(op: Op) -> tuple[str, list[int]]:
    marks = ", ".join("(?, ?, ?, ?)" for _ in op.rows)
    return f"INSERT INTO events VALUES {marks}", [x for row in op.rows for x in row]


UPDATE_SQL = "UPDATE counters SET n = n + 1 WHERE id = ?"
#: The reads of the MySQL writers: the queries of views of_g, top_g and counts, so that
#: they miss as the embedded writer's reads do (a miss of counts passes the ``upquery``
#: fault point, where one of of_g or top_g fills its reader alone).
OF_G_SQL = "SELECT id, v FROM events WHERE g = %s"
TOP_G_SQL = "SELECT id, v FROM events WHERE g = %s ORDER BY id DESC LIMIT 5"
COUNTS_SQL = "SELECT id, n FROM counters WHERE id = %s"
LOCK_SQL = "SELECT id, balance FROM accounts WHERE id IN (?, ?) FOR UPDATE"
MOVE_SQL = "UPDATE accounts SET balance = balance + ? WHERE id = ?"
LOG_SQL = "INSERT INTO transfers VALUES (?, ?, ?, ?)"


def transfer_statements(op: Op) -> list[tuple[str, list[int]]]:
    """The statements of a transfer, between BEGIN and COMMIT (or ROLLBACK): lock both
    accounts, move the money, log it. Accounts are locked and written in the order of their
    ids, so that concurrent transfers do not deadlock."""
    _, src, dst, amount = op.transfer
    lo, hi = sorted((src, dst))
    moves = sorted(((src, -amount), (dst, amount)))
    return ([(LOCK_SQL, [lo, hi])] + [(MOVE_SQL, [delta, account]) for account, delta in moves]
            + [(LOG_SQL, list(op.transfer))])


def note_score(i: int) -> int:
    return i * 7 % 1000


def alter_sql(db: Any) -> str:
    """The ALTER that toggles ``notes.score`` from its current type."""
    from rivulet.values.schema import STR

    text = db.catalog.require_table("notes").columns[1].kind == STR
    return f"ALTER TABLE notes MODIFY score {'INT' if text else 'VARCHAR(12)'} NOT NULL"


# ......................................................................... ledger


@dataclass
class Ledger:
    """What the database must hold: exact after a check, plus this cycle's writes."""

    ids: set[int] = field(default_factory=set)  # events ids present (each exactly once)
    counters: dict[int, int] = field(default_factory=dict)
    transfers: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)  # logged
    views: set[str] = field(default_factory=set)  # views added by writers
    notes_text: bool = False  # notes.score is VARCHAR (after an odd number of ALTERs)
    acked: list[Op] = field(default_factory=list)
    in_flight: list[Op] = field(default_factory=list)
    aborted: list[Op] = field(default_factory=list)  # transactions that ended with an error


def new_database(path: Path) -> Ledger:
    """The program and one counter per writer, in a fresh data directory."""
    import rivulet

    with rivulet.open(path, prewarm=False) as db:
        db.execute_script(PROGRAM)
        db.table("counters").insert_many([(w, 0) for w in range(WRITERS + 1)])
        db.table("accounts").insert_many([(a, OPENING) for a in range(ACCOUNTS)])
        db.table("notes").insert_many([(i, note_score(i)) for i in range(NOTES)])
    return Ledger(counters={w: 0 for w in range(WRITERS + 1)})


def record(ledger: Ledger, cycle: int, lines: Sequence[str]) -> None:
    """Fold a writer's ``S``/``A``/``X`` report into this cycle's acknowledged, in-flight
    and aborted ops; an ``E`` line (a reader saw a transaction in parts) fails the cycle."""
    seen = [line for line in lines if line.startswith("E ")]
    assert not seen, f"a reader saw the total of the balances change: {seen[:3]}"
    sent: dict[tuple[int, int], str] = {}
    for line in lines:
        parts = line.split()
        if len(parts) == 3 and parts[0] in ("S", "A", "X"):
            key = (int(parts[1]), int(parts[2]))
            if sent.get(key, "S") == "S":
                sent[key] = parts[0]
    for (writer, seq), state in sorted(sent.items()):
        into = {"S": ledger.in_flight, "A": ledger.acked, "X": ledger.aborted}[state]
        into.append(operation(cycle, writer, seq))


# ......................................................................... check


Compare = Callable[[str, Sequence[Any], list, sqlite3.Connection, str], None]


def same_answer(sql: str, params: Sequence[Any], got: list, lite: sqlite3.Connection,
                what: str) -> None:
    """Rivulet's rows equal SQLite's: as a list with ORDER BY, else as a multiset."""
    expected = lite.execute(sql, tuple(params)).fetchall()
    if "ORDER BY" in sql.upper():
        ok = [tuple(r) for r in got] == expected
    else:
        ok = Counter(map(tuple, got)) == Counter(expected)
    if not ok:
        raise AssertionError(
            f"{what}: rivulet {sorted(got)[:20]} != sqlite {sorted(expected)[:20]}")


def verify(path: Path, ledger: Ledger, compare: Compare = same_answer) -> dict[str, Any]:
    """Open (recover) the database and check it against the ledger and SQLite; then make
    the ledger the recovered state. Raises AssertionError on any loss or wrong view."""
    import rivulet

    started = time.perf_counter()
    with rivulet.open(path, prewarm=False, spark_bootstrap_rows=None) as db:
        recovered_s = time.perf_counter() - started
        db.settle()
        lite = _oracle(path)
        _check_rows(lite, ledger)
        transfers, counts = _check_transfers(lite, ledger)
        views = set(db.views())
        _check_views(db, lite, views, ledger, compare)
        notes_text = _check_notes(db, ledger)
        ledger.ids = {r[0] for r in lite.execute("SELECT id FROM events")}
        ledger.counters = dict(lite.execute("SELECT id, n FROM counters").fetchall())
        ledger.transfers = transfers
        ledger.views = {v for v in views if v.startswith("mig_")}
        ledger.notes_text = notes_text
        ledger.acked, ledger.in_flight, ledger.aborted = [], [], []
        # The recovered database takes writes, and its views follow them.
        probe = 2**31 - 1 - len(ledger.ids)
        db.execute("INSERT INTO events VALUES (?, ?, ?, ?)", [probe, WRITERS, 0, 1])
        db.execute("DELETE FROM events WHERE id = ?", [probe])
        db.settle()
        _check_views(db, _oracle(path), views, ledger, compare)
    return {"recovery_s": round(recovered_s, 3), "rows": len(ledger.ids), "views": len(views)
            } | counts


def _oracle(path: Path) -> sqlite3.Connection:
    """The recovered base tables, read from rivulet's own SQLite file into SQLite."""
    from rivulet.storage.sqlite import DB_FILE

    source = sqlite3.connect(f"file:{path / DB_FILE}?mode=ro", uri=True)
    lite = sqlite3.connect(":memory:")
    for statement in PROGRAM.split(";"):
        words = statement.split()
        if words[:2] == ["CREATE", "TABLE"] and words[2] in ORACLE_TABLES:
            lite.execute(statement)
    for table, columns in ORACLE_TABLES.items():
        marks = ", ".join("?" for _ in columns.split(","))
        lite.executemany(f"INSERT INTO {table} VALUES ({marks})",
                         source.execute(f"SELECT {columns} FROM {table}").fetchall())
    source.close()
    return lite


def _check_rows(lite: sqlite3.Connection, ledger: Ledger) -> None:
    stored = Counter(r[0] for r in lite.execute("SELECT id FROM events"))
    doubled = [i for i, n in stored.items() if n > 1]
    assert not doubled, f"rows stored more than once: {sorted(doubled)[:10]}"
    must = set(ledger.ids)
    for op in ledger.acked:
        must.update(r[0] for r in op.rows)
    lost = must - stored.keys()
    assert not lost, f"acknowledged rows lost: {sorted(lost)[:10]} ({len(lost)} in all)"
    may: set[int] = set()
    for op in ledger.in_flight:
        ids = {r[0] for r in op.rows}
        present = ids & stored.keys()
        assert present in (set(), ids), (
            f"write {op.writer}/{op.seq} half applied: {present} of {ids}")
        may |= ids
    unknown = stored.keys() - must - may
    assert not unknown, f"rows no one wrote: {sorted(unknown)[:10]}"
    stored_rows = {r[0]: r for r in lite.execute("SELECT id, writer, g, v FROM events")}
    for op in ledger.acked + ledger.in_flight:
        for row in op.rows:
            if row[0] in stored_rows:
                assert stored_rows[row[0]] == row, f"row {row[0]} changed: {stored_rows[row[0]]}"
    counters = dict(lite.execute("SELECT id, n FROM counters").fetchall())
    for writer, before in ledger.counters.items():
        acked = sum(1 for op in ledger.acked if op.kind == "update" and op.writer == writer)
        maybe = sum(1 for op in ledger.in_flight if op.kind == "update" and op.writer == writer)
        low, high = before + acked, before + acked + maybe
        assert low <= counters[writer] <= high, (
            f"counter {writer} is {counters[writer]}, acknowledged increments say {low}..{high}")


def _check_transfers(lite: sqlite3.Connection, ledger: Ledger
                     ) -> tuple[dict[int, tuple[int, int, int, int]], dict[str, int]]:
    """All or nothing for transfers: every one whose COMMIT returned is logged, one in
    flight may be, none that rolled back or aborted is, nothing else is, each as written;
    each balance is its opening one moved by exactly the transfers logged (a transfer's
    UPDATEs without its log row, or the reverse, shows), so the total never changes.
    Returns the transfers logged, and counts of this cycle's."""
    stored = {r[0]: r for r in lite.execute("SELECT id, src, dst, amount FROM transfers")}
    balances = dict(lite.execute("SELECT id, balance FROM accounts").fetchall())
    assert sorted(balances) == list(range(ACCOUNTS)), f"accounts lost or added: {balances}"
    total = sum(balances.values())
    assert total == ACCOUNTS * OPENING, (
        f"the balances add up to {total}, not {ACCOUNTS * OPENING}: a transfer half applied")
    expected = dict(ledger.transfers)
    must = set(ledger.transfers)
    may: set[int] = set()
    never: set[int] = set()
    for ops, into in ((ledger.acked, must), (ledger.in_flight, may), (ledger.aborted, never)):
        for op in ops:
            if op.kind == "transfer":
                expected[op.transfer[0]] = op.transfer
                (never if op.rollback else into).add(op.transfer[0])
    lost = must - stored.keys()
    assert not lost, f"committed transfers lost: {sorted(lost)[:10]} ({len(lost)} in all)"
    undone = never & stored.keys()
    assert not undone, f"rolled back or aborted transfers stored: {sorted(undone)[:10]}"
    unknown = stored.keys() - must - may
    assert not unknown, f"transfers no one committed: {sorted(unknown)[:10]}"
    changed = [row for tid, row in stored.items() if expected[tid] != row]
    assert not changed, f"transfers changed: {changed[:5]}"
    moved = dict.fromkeys(range(ACCOUNTS), OPENING)
    for _, src, dst, amount in stored.values():
        moved[src] -= amount
        moved[dst] += amount
    assert balances == moved, (
        f"balances {balances} are not the opening ones moved by the {len(stored)} transfers "
        f"logged ({moved}): a transfer half applied")
    counts = {"transfers": len(stored), "transfers_acked": len(must - set(ledger.transfers)),
              "transfers_in_flight": len(may),
              "transfers_in_flight_stored": len(may & stored.keys()),
              "transfers_undone": len(never)}
    return stored, counts


def _check_notes(db: Any, ledger: Ledger) -> bool:
    """``notes`` after any ALTERs: every row once, every score of the type the acknowledged
    ALTERs say (either, if one was in flight), none half converted; read while rows are
    still being converted (reads convert on the fly) and again once all are. Returns
    whether the scores are text now."""
    toggles = sum(1 for op in ledger.acked if op.kind == "alter")
    text = ledger.notes_text ^ (toggles % 2 == 1)
    allowed = {text} | ({not text} if any(op.kind == "alter" for op in ledger.in_flight) else set())
    as_int = sorted((i, note_score(i)) for i in range(NOTES))
    as_text = sorted((i, str(note_score(i))) for i in range(NOTES))
    for when in ("while converting", "converted"):
        if when == "converted":
            db.finish_conversions()
        rows = sorted(db.query("SELECT id, score FROM notes"))
        kinds = {is_text for is_text, expected in ((False, as_int), (True, as_text))
                 if rows == expected}
        assert kinds & allowed, (
            f"notes {when}: {rows[:5]}... ({len(rows)} rows) is neither all "
            f"{' nor all '.join('text' if k else 'int' for k in sorted(allowed))}")
    return kinds.pop()


def _check_views(db: Any, lite: sqlite3.Connection, views: set[str], ledger: Ledger,
                 compare: Compare) -> None:
    required = set(ledger.views) | {op.view for op in ledger.acked if op.kind == "view"}
    missing = required - views
    assert not missing, f"acknowledged CREATE VIEW lost: {sorted(missing)}"
    allowed = required | {op.view for op in ledger.in_flight if op.kind == "view"}
    unknown = {v for v in views if v.startswith("mig_")} - allowed
    assert not unknown, f"views no one created: {sorted(unknown)}"
    for name in sorted(views):
        sql = db.catalog.views[name.lower()].sql
        handle = db.view(name)
        for params in PARAMETERS.get(name, [()]):
            compare(sql, params, handle.lookup(*params), lite, f"view {name}{params}")


# ......................................................................... the embedded writer


def child_main(path: str, cycle: int, writers: int, spark: bool, memory_limit: str,
               alter: bool = False) -> None:
    """A writer process on the embedded API: ``writers`` threads, each writing its ops in
    order and reading views between them, reporting ``S``/``A`` lines on stdout; with
    ``alter``, one ALTER TABLE first, whose rows convert in the background meanwhile."""
    import rivulet

    db = rivulet.open(path, prewarm=False, memory_limit=memory_limit,
                      spark_bootstrap_rows=0 if spark else None)
    out = threading.Lock()

    def say(text: str) -> None:
        with out:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def writer(w: int) -> None:
        from rivulet.errors import LockWaitTimeoutError, WriteConflictError

        rnd = random.Random(cycle * 31 + w)
        for seq in range(MAX_OPS):
            op = operation(cycle, w, seq)
            say(f"S {w} {seq}")
            try:
                apply_embedded(db, op)
            except (WriteConflictError, LockWaitTimeoutError) as exc:  # rolled back
                say(f"X {w} {seq}")
                print(f"writer {w} op {seq} aborted: {type(exc).__name__}: {exc}",
                      file=sys.stderr, flush=True)
                continue
            say(f"A {w} {seq}")
            if rnd.random() < 0.5:
                g = rnd.randrange(GROUPS)
                db.view(rnd.choice(("of_g", "top_g"))).lookup(g)
                db.view("counts").lookup(w)
                money = db.view("money").lookup()
                if money and money[0][1] != ACCOUNTS * OPENING:
                    say(f"E {w} {seq} view money: {money}")

    say("READY")
    if alter:
        say(f"S {ALTERER} 0")
        db.execute(alter_sql(db))
        say(f"A {ALTERER} 0")
    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    say("IDLE")
    time.sleep(3600)  # until killed: the harness decides when the cycle ends


def apply_embedded(db: Any, op: Op) -> None:
    if op.kind == "insert":
        db.execute(*insert_sql(op))
    elif op.kind == "update":
        db.execute(UPDATE_SQL, [op.writer])
    elif op.kind == "transfer":
        with db.transaction() as tx:
            for sql, params in transfer_statements(op):
                tx.execute(sql, params)
            if op.rollback:
                tx.rollback()
    else:
        db.execute(f"CREATE VIEW {op.view} AS {op.sql}")


# ......................................................................... cycles


@dataclass
class CycleResult:
    cycle: int
    mode: str  # "embedded" or "server"
    fault: str  # a fault point, or "random"
    reached: bool  # the process died at its fault point (random: killed by us)
    acked: int
    in_flight: int
    seconds: float
    check: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("cycle", "mode", "fault", "reached", "acked",
                                             "in_flight", "seconds")} | self.check


def run_cycle(path: Path, ledger: Ledger, cycle: int, mode: str, fault: str, *,
              rnd: random.Random, compare: Compare = same_answer, writers: int = WRITERS,
              memory_limit: str = "256KB", timeout: float = 60.0) -> CycleResult:
    """One kill and restart on ``path``; raises AssertionError if the check fails."""
    started = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "RIVULET_FAULTS"}
    env["PYTHONPATH"] = str(REPO_DIR)
    env["PYTHONUNBUFFERED"] = "1"
    if fault != "random":
        low, high = FAULTS.get(fault, (1, 1))
        env["RIVULET_FAULTS"] = f"{fault}:{rnd.randint(low, high)}"
    kill_after = None if fault != "random" else rnd.uniform(0.2, 2.5)
    if mode == "embedded":
        lines, reached = _run_embedded(path, cycle, env, writers, fault, memory_limit,
                                       kill_after, timeout)
    else:
        lines, reached = _run_server(path, cycle, env, writers, memory_limit, kill_after, timeout)
    record(ledger, cycle, lines)
    acked, in_flight = len(ledger.acked), len(ledger.in_flight)
    check = verify(path, ledger, compare)
    return CycleResult(cycle, mode, fault, reached, acked, in_flight,
                       round(time.perf_counter() - started, 2), check)


class _Process:
    """A child process whose stdout lines are collected by a thread."""

    def __init__(self, argv: list[str], env: dict[str, str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        self._stderr = stderr_path.open("w")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
                                     env=env, cwd=str(REPO_DIR))
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.changed:
                if line.endswith("\n"):  # a line cut short by the kill says nothing for sure
                    self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    def wait_line(self, pattern: str, timeout: float) -> re.Match[str] | None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                for line in self.lines:
                    if found := re.search(pattern, line):
                        return found
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None and not self.reader.is_alive():
                    return None
                self.changed.wait(min(left, 0.2))

    def finish(self, kill_after: float | None, timeout: float) -> bool:
        """Kill after ``kill_after`` s, or wait for the fault point (up to ``timeout``, then
        kill). True if it died the way the cycle meant it to."""
        if kill_after is not None:
            time.sleep(kill_after)
        else:
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        alive = self.proc.poll() is None
        if alive:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.reader.join(10)
        self._stderr.close()
        if kill_after is not None:
            return alive
        return "rivulet-fault:" in self.stderr_path.read_text()

    def stderr(self) -> str:
        return self.stderr_path.read_text()[-3000:]


def _run_embedded(path: Path, cycle: int, env: dict[str, str], writers: int, fault: str,
                  memory_limit: str, kill_after: float | None,
                  timeout: float) -> tuple[list[str], bool]:
    argv = [sys.executable, "-m", "bench.reliability_crash", "child", str(path), str(cycle),
            "--writers", str(writers), "--memory-limit", memory_limit]
    argv += ["--spark"] if fault == SPARK_FAULT else []
    argv += ["--alter"] if fault == "schema_conversion_chunk" else []
    child = _Process(argv, env, path.parent / f"child-{cycle}.err")
    if child.wait_line(r"^READY$", 180) is None:
        child.finish(0, 0)
        raise AssertionError(f"writer did not start: {child.stderr()}")
    reached = child.finish(kill_after, timeout)
    return child.lines, reached


def _run_server(path: Path, cycle: int, env: dict[str, str], writers: int, memory_limit: str,
                kill_after: float | None, timeout: float) -> tuple[list[str], bool]:
    argv = [sys.executable, "-m", "rivulet", "serve", "--data-dir", str(path), "--no-demo",
            "--no-http", "--mysql-port", "0", "--memory-limit", memory_limit]
    server = _Process(argv, env, path.parent / f"server-{cycle}.err")
    found = server.wait_line(r"-P (\d+)", 180)
    if found is None or server.wait_line("stop with Ctrl-C", 30) is None:
        server.finish(0, 0)
        raise AssertionError(f"rivulet serve did not start: {server.stderr()}")
    port = int(found.group(1))
    lines: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def say(text: str) -> None:
        with lock:
            lines.append(text)

    threads = [threading.Thread(target=_mysql_writer, args=(port, cycle, w, say, stop), daemon=True)
               for w in range(writers)]
    for t in threads:
        t.start()
    reached = server.finish(kill_after, timeout)
    stop.set()
    for t in threads:
        t.join(30)
    return lines, reached


def _mysql_writer(port: int, cycle: int, w: int, say: Callable[[str], None],
                  stop: threading.Event) -> None:
    """One client connection writing its ops in order until the server dies."""
    import pymysql

    rnd = random.Random(cycle * 31 + w)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True,
                               read_timeout=60, write_timeout=60)
    except pymysql.Error:
        return
    try:
        with conn.cursor() as cur:
            for seq in range(MAX_OPS):
                if stop.is_set():
                    return
                op = operation(cycle, w, seq)
                say(f"S {w} {seq}")
                if op.kind == "insert":
                    sql, params = insert_sql(op)
                    cur.execute(sql.replace("?", "%s"), params)
                elif op.kind == "update":
                    cur.execute(UPDATE_SQL.replace("?", "%s"), (op.writer,))
                elif op.kind == "transfer":
                    if not _mysql_transfer(cur, op):
                        say(f"X {w} {seq}")
                        continue
                else:
                    cur.execute(f"CREATE VIEW {op.view} AS {op.sql}")
                say(f"A {w} {seq}")
                if rnd.random() < 0.5:  # (the embedded writer's reads: see child_main)
                    cur.execute(rnd.choice((OF_G_SQL, TOP_G_SQL)), (rnd.randrange(GROUPS),))
                    cur.fetchall()
                    cur.execute(COUNTS_SQL, (w,))  # (its misses reach ``upquery``)
                    cur.fetchall()
                    cur.execute("SELECT SUM(balance) FROM accounts")
                    money = cur.fetchall()
                    if money and money[0][0] is not None and money[0][0] != ACCOUNTS * OPENING:
                        say(f"E {w} {seq} SUM(balance): {money}")
    except (pymysql.Error, OSError):
        return  # the server is gone: the last op sent is in flight
    finally:
        try:
            conn.close()
        except Exception:  # noqa: BLE001 - the connection died with the server
            pass


#: MySQL errors that end a transaction with nothing stored (1213: deadlock or a write
#: conflict at COMMIT, the transaction rolled back; 1205: a lock wait timed out, the
#: transaction rolled back by the writer).
ABORTED = (1213, 1205)


def _mysql_transfer(cur: Any, op: Op) -> bool:
    """A transfer over MySQL: BEGIN, its statements, COMMIT (or ROLLBACK). False if it was
    aborted (nothing stored); a lost connection (the server killed) raises."""
    import pymysql

    cur.execute("BEGIN")
    try:
        for sql, params in transfer_statements(op):
            cur.execute(sql.replace("?", "%s"), params)
            cur.fetchall()
        cur.execute("ROLLBACK" if op.rollback else "COMMIT")
    except pymysql.MySQLError as exc:
        if not exc.args or exc.args[0] not in ABORTED:
            raise
        cur.execute("ROLLBACK")  # (after a deadlock, already rolled back: a no-op)
        return False
    return True


def plan_cycles(count: int, rnd: random.Random, *, server_share: float = 0.3,
                random_share: float = 0.3, spark_every: int = 0) -> list[tuple[str, str]]:
    """(mode, fault) for ``count`` cycles: every named fault point in turn, random kills,
    a share over the MySQL server; a Spark bootstrap kill every ``spark_every`` cycles."""
    names = list(FAULTS)
    out = []
    for i in range(count):
        if spark_every and i % spark_every == spark_every - 1:
            out.append(("embedded", SPARK_FAULT))
            continue
        fault = "random" if rnd.random() < random_share else names[i % len(names)]
        mode = "server" if rnd.random() < server_share else "embedded"
        if fault == "schema_conversion_chunk":
            mode = "embedded"  # the ALTER comes from the embedded writer
        out.append((mode, fault))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    child = sub.add_parser("child", help="(internal) the embedded writer process")
    child.add_argument("path")
    child.add_argument("cycle", type=int)
    child.add_argument("--writers", type=int, default=WRITERS)
    child.add_argument("--spark", action="store_true")
    child.add_argument("--memory-limit", default="256KB")
    child.add_argument("--alter", action="store_true")
    args = parser.parse_args(argv)
    child_main(args.path, args.cycle, args.writers, args.spark, args.memory_limit, args.alter)


if __name__ == "__main__":
    main()
