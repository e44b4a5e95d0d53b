"""Crash safety: SIGKILL at named fault points and at random, a full disk, a damaged file.

The harness is bench/reliability_crash.py (the long mode, >= 50 kill points, is
``python -m bench.reliability``). Here, the fast variant: one database, killed once at every
fault point of the write path, upqueries and migrations and at random moments, embedded and
under ``rivulet serve``; after each kill, a restart must hold every acknowledged write
exactly once and every view must equal SQLite (tests/oracle.py) over the recovered tables.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rivulet
from oracle import assert_same_answer
from rivulet import faults
from rivulet.errors import StorageError

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # bench/ beside tests/
from bench import reliability_crash as crash  # noqa: E402


def oracle_compare(sql: str, params: Any, got: list, lite: sqlite3.Connection, what: str) -> None:
    assert_same_answer(sql, params, got, lite, what=what)


# --------------------------------------------------------------------------- fault points


def test_fault_spec_is_checked() -> None:
    assert faults.parse("upquery:3, commit_before_ack") == {"upquery": 3, "commit_before_ack": 1}
    with pytest.raises(ValueError, match="unknown fault point 'upqery'"):
        faults.parse("upqery")
    with pytest.raises(ValueError, match="must be >= 1"):
        faults.parse("upquery:0")
    with pytest.raises(ValueError, match="bad count"):
        faults.parse("upquery:x")


def test_fault_point_kills_at_the_nth_reach(tmp_path: Path) -> None:
    script = "from rivulet.faults import fault_point\nfor i in range(5):\n" \
             "    print(i, flush=True)\n    fault_point('upquery')\n"
    env = {**os.environ, "RIVULET_FAULTS": "upquery:3", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == -9
    assert done.stdout.split() == ["0", "1", "2"]
    assert "rivulet-fault: upquery 3" in done.stderr
    env.pop("RIVULET_FAULTS")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.split() == ["0", "1", "2", "3", "4"]


def test_every_fault_point_is_placed_in_the_engine() -> None:
    """A fault point the engine never calls would make its crash cycles test nothing."""
    source = "\n".join(p.read_text() for p in (REPO / "rivulet").rglob("*.py")
                       if p.name != "faults.py")
    placed = {name for name in faults.FAULT_POINTS if f'fault_point("{name}")' in source}
    assert set(crash.FAULTS) | {crash.SPARK_FAULT} <= placed


# --------------------------------------------------------------------------- the checker


def test_checker_catches_lost_doubled_and_half_writes(tmp_path: Path) -> None:
    """The check that the crash cycles rely on fails when a write is lost, doubled, or
    half applied, a counter increment is lost, a converted value is wrong, or a transfer
    (a transaction) is lost, half applied, or stored after its ROLLBACK (else a passing
    cycle would prove nothing)."""
    path = tmp_path / "db"
    ledger = crash.new_database(path)
    ops = [crash.operation(1, 1, seq) for seq in range(12)]
    transfers = [crash.operation(1, 2, seq) for seq in range(200)]
    committed = next(op for op in transfers if op.kind == "transfer" and not op.rollback)
    rolled_back = next(op for op in transfers if op.kind == "transfer" and op.rollback)
    with rivulet.open(path, prewarm=False) as db:
        for op in ops + [committed, rolled_back]:
            crash.apply_embedded(db, op)
            ledger.acked.append(op)
    inserts = [op for op in ledger.acked if op.kind == "insert" and len(op.rows) > 1]
    crash.verify(path, ledger, oracle_compare)  # intact: passes, and takes the state in
    assert ledger.transfers == {committed.transfer[0]: committed.transfer}

    def damaged(*statements: tuple[str, tuple]) -> Path:
        copy = tmp_path / f"copy{len(list(tmp_path.iterdir()))}"
        shutil.copytree(path, copy)
        with sqlite3.connect(copy / "rivulet.db") as conn:
            for sql, params in statements:
                conn.execute(sql, params)
        return copy

    def probe(acked: list | None = None, in_flight: list | None = None) -> crash.Ledger:
        return crash.Ledger(ids=set(ledger.ids), counters=dict(ledger.counters),
                            transfers=dict(ledger.transfers), views=set(ledger.views),
                            acked=acked or [], in_flight=in_flight or [])

    def broken(sql: str, params: tuple, match: str, acked: list | None = None,
               in_flight: list | None = None, more: tuple[tuple[str, tuple], ...] = ()) -> None:
        copy = damaged((sql, params), *more)
        with pytest.raises(AssertionError, match=match):
            crash.verify(copy, probe(acked, in_flight), oracle_compare)

    some = inserts[0].rows[0][0]
    broken("DELETE FROM events WHERE id = ?", (some,), "acknowledged rows lost")
    broken("INSERT INTO events SELECT * FROM events WHERE id = ?", (some,), "more than once")
    broken("UPDATE counters SET n = n + 1 WHERE id = 1", (), "counter 1")
    broken("INSERT INTO events VALUES (5, 1, 1, 1)", (), "no one wrote")
    broken("UPDATE notes SET score = score + 1 WHERE id = 5", (), "notes while converting")
    # An in-flight insert of several rows must be all there or not at all.
    in_flight = crash.operation(2, 1, 0)
    while in_flight.kind != "insert" or len(in_flight.rows) < 2:
        in_flight = crash.operation(2, 1, in_flight.seq + 1)
    broken("INSERT INTO events VALUES (?, ?, ?, ?)", in_flight.rows[0], "half applied",
           in_flight=[in_flight])
    # Transfers: all of one or nothing of it, and nothing of a rolled-back one.
    tid, src, dst, amount = committed.transfer
    move = crash.MOVE_SQL
    broken("DELETE FROM transfers WHERE id = ?", (tid,), "committed transfers lost")
    broken(move, (5, src), "add up to 8005, not 8000")
    broken(move, (amount, src), "not the opening ones moved", more=((move, (-amount, dst)),))
    pending = next(op for op in (crash.operation(2, 1, seq) for seq in range(200))
                   if op.kind == "transfer" and not op.rollback)
    _, src, dst, amount = pending.transfer
    whole = ((move, (-amount, src)), (move, (amount, dst)),
             ("INSERT INTO transfers VALUES (?, ?, ?, ?)", pending.transfer))
    broken(*whole[2], "half applied", in_flight=[pending])  # logged, no money moved
    broken(*whole[0], "half applied", in_flight=[pending], more=whole[1:2])  # moved, unlogged
    broken(*whole[0], "transfers no one committed", more=whole[1:])  # not sent at all
    crash.verify(damaged(*whole), probe(in_flight=[pending]), oracle_compare)  # whole: fine
    crash.verify(damaged(), probe(in_flight=[pending]), oracle_compare)  # none of it: fine
    _, src, dst, amount = rolled_back.transfer
    broken(move, (-amount, src), "rolled back or aborted transfers stored", acked=[rolled_back],
           more=((move, (amount, dst)), ("INSERT INTO transfers VALUES (?, ?, ?, ?)",
                                         rolled_back.transfer)))


# --------------------------------------------------------------------------- crash cycles


@pytest.fixture
def crash_db(tmp_path: Path) -> Iterator[tuple[Path, crash.Ledger]]:
    path = tmp_path / "db"
    yield path, crash.new_database(path)


def test_kill_at_every_fault_point_and_at_random(crash_db: tuple[Path, crash.Ledger]) -> None:
    """Embedded writers (four threads, group commit, reads that miss under a 256 KB memory
    limit, a view added every 25 writes, and for the conversion point an ALTER TABLE whose
    3,000 rows convert in the background): killed at each named fault point in turn and at a
    random moment; then ``rivulet serve`` written to over MySQL, killed between commit and
    acknowledgement, inside a transaction's commit and at random. Transfers (transactions,
    some rolled back) run beside the other writes throughout. Each restart recovers
    everything before it."""
    path, ledger = crash_db
    rnd = random.Random(8)
    plan = [("embedded", fault) for fault in crash.FAULTS] + [
        ("embedded", "random"), ("server", "commit_before_ack"),
        ("server", "transaction_apply"), ("server", "random")]
    results = []
    for cycle, (mode, fault) in enumerate(plan, 1):
        result = crash.run_cycle(path, ledger, cycle, mode, fault, rnd=rnd,
                                 compare=oracle_compare)
        assert result.reached, f"cycle {cycle} ({mode}) never reached {fault}"
        if fault == "transaction_apply":  # it died inside a transfer's commit
            assert result.check["transfers_in_flight"] >= 1, f"cycle {cycle} ({mode})"
        results.append(result)
    assert sum(r.acked for r in results) > 100  # the writers did write
    assert sum(r.check["transfers_acked"] for r in results) > 10  # transactions committed
    assert sum(r.check["transfers_undone"] for r in results) > 0  # and rolled back
    assert any(r.in_flight for r in results)  # and kills landed with writes in flight
    assert max(r.check["views"] for r in results) > 6  # migrations made it, and recovered


#: A process moving money between accounts in transactions (each touches two tables),
#: with an autocommit writer beside it if asked (so transactions share groups with other
#: writes), saying which transfers were acknowledged.
TRANSFERS = textwrap.dedent("""
    import random, sys, threading
    import rivulet
    db = rivulet.open(sys.argv[1])
    rng = random.Random(int(sys.argv[2]))
    def chatter():
        for i in range(100_000):
            db.execute("INSERT INTO notes (body) VALUES (?)", [f"note {i}"])
    if sys.argv[3] == "chatter":
        threading.Thread(target=chatter, daemon=True).start()
    for i in range(10_000):
        a, b = rng.sample(range(10), 2)
        amount = rng.randint(1, 50)
        with db.transaction() as tx:
            tx.execute("UPDATE accounts SET balance = balance - ? WHERE id = ?", [amount, a])
            tx.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", [amount, b])
            tx.execute("INSERT INTO transfers (src, dst, amount) VALUES (?, ?, ?)", [a, b, amount])
        # One write of a whole line: print's separate pieces could be cut by the kill
        # when stdout is unbuffered (PYTHONUNBUFFERED), leaving "ack " with no fields.
        sys.stdout.write(f"ack {a} {b} {amount}\\n")
        sys.stdout.flush()
""")


def test_kill_in_a_transactions_commit_leaves_all_or_nothing(tmp_path: Path) -> None:
    """A process committing transfers (two tables per transaction) is killed at each point
    of the commit path: after a restart every acknowledged transfer is there, the one in
    flight is there whole or not at all (each balance is the initial one plus the transfers
    stored, the total never changes), and the views agree with the tables."""
    path = tmp_path / "db"
    with rivulet.open(path) as db:
        db.execute("CREATE TABLE accounts (id INT PRIMARY KEY, balance INT NOT NULL)")
        db.execute("CREATE TABLE transfers (id INT AUTO_INCREMENT PRIMARY KEY, src INT, "
                   "dst INT, amount INT)")
        db.execute("CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY, body TEXT)")
        db.execute("CREATE VIEW total AS SELECT SUM(balance) AS money FROM accounts")
        db.execute("CREATE VIEW balance AS SELECT balance FROM accounts WHERE id = ?")
        db.table("accounts").insert_many([(i, 1000) for i in range(10)])
    acked: list[tuple[int, int, int]] = []
    in_flight = 0
    for cycle, (fault, chatter) in enumerate([
            ("transaction_apply:5", "chatter"), ("commit_before_durable:40", "chatter"),
            ("commit_before_ack:40", "alone"),  # (each group a transfer: one is in flight)
            ("propagate:30", "chatter"), ("transaction_apply:8", "chatter")], 1):
        env = {**os.environ, faults.ENV: fault, "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-c", TRANSFERS, str(path), str(cycle), chatter],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == -9, done.stderr[-2000:]
        assert f"rivulet-fault: {fault.replace(':', ' ')}" in done.stderr
        # A line the kill cut short is not an acknowledgement: that transfer is in flight.
        acked += [tuple(map(int, line.split()[1:]))  # type: ignore[misc]
                  for line in done.stdout.splitlines(keepends=True)
                  if line.startswith("ack ") and line.endswith("\n")]
        with rivulet.open(path) as db:
            db.settle()
            stored = db.query("SELECT src, dst, amount FROM transfers ORDER BY id")
            assert stored[:len(acked)] == acked, f"cycle {cycle}: acknowledged transfers lost"
            assert len(stored) - len(acked) in (0, 1), f"cycle {cycle}: unknown transfers"
            in_flight += len(stored) - len(acked)
            acked = [tuple(row) for row in stored]  # type: ignore[misc]
            expected = dict.fromkeys(range(10), 1000)
            for src, dst, amount in stored:
                expected[src] -= amount
                expected[dst] += amount
            balances = dict(db.query("SELECT id, balance FROM accounts"))
            assert balances == expected, f"cycle {cycle}: a transfer half applied"
            assert db.view("total").lookup() == [(10_000,)]
            assert all(db.view("balance").lookup(i) == [(expected[i],)] for i in range(10))
    assert len(acked) > 20 and in_flight >= 1  # it did commit, and a kill caught one durable


@pytest.mark.spark
@pytest.mark.slow
def test_kill_during_spark_bootstrap(crash_db: tuple[Path, crash.Ledger]) -> None:
    """The writer opens with every full-state node bootstrapped on Spark (a recovery run in
    the background while writes go on) and dies once Spark has computed the state, before
    it is loaded; the restart must still have every acknowledged write."""
    path, ledger = crash_db
    rnd = random.Random(3)
    crash.run_cycle(path, ledger, 1, "embedded", "random", rnd=rnd, compare=oracle_compare)
    result = crash.run_cycle(path, ledger, 2, "embedded", crash.SPARK_FAULT, rnd=rnd,
                             compare=oracle_compare, timeout=300)
    assert result.reached, "the Spark bootstrap never reached its fault point"


# --------------------------------------------------------------------------- full disk

FULL_DISK_WRITER = textwrap.dedent(
    """
    import resource, signal, sys
    import rivulet
    path, limit = sys.argv[1], int(sys.argv[2])
    if limit:  # no small file system to be had: the file size limit stands in for it
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    db = rivulet.open(path, prewarm=False)
    db.execute_script('''CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(2000) NOT NULL);
        CREATE TABLE log (id INT NOT NULL);
        CREATE VIEW total AS SELECT COUNT(*), SUM(id) FROM t;
        CREATE VIEW byid AS SELECT id FROM t WHERE id = ?;''')
    if limit:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    errors = 0
    for i in range(100_000):
        try:
            db.execute("INSERT INTO t VALUES (?, ?)", [i, "x" * 1500])
            print("ACK", i, flush=True)
        except rivulet.RivuletError as exc:
            print("ERR", type(exc).__name__, exc, flush=True)
            errors += 1
            if errors == 5:
                break
    db.settle()
    print("VIEW", db.view("total").lookup(), flush=True)
    db.close()
    print("CLOSED", flush=True)
    """
)


@pytest.fixture(params=["tmpfs", "file-size-limit"])
def small_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A 1.5 MB tmpfs (if this process may mount one: root), or a plain directory and a
    file size limit of 1.5 MB for the writer (SQLite then sees EFBIG instead of ENOSPC)."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = None
    if request.param == "tmpfs":
        if shutil.which("mount") is None or os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1500k", "tmpfs", str(mount)],
                              capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs: {done.stderr!r}")
    if done is not None:
        try:
            yield mount, 0
        finally:
            subprocess.run(["umount", str(mount)], check=False)
    else:
        yield mount, 1_500_000


def test_full_disk_rejects_writes_clearly_and_loses_nothing(small_disk: tuple[Path, int]) -> None:
    mount, limit = small_disk
    path = mount / "db"
    done = subprocess.run([sys.executable, "-c", FULL_DISK_WRITER, str(path), str(limit)],
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    acked = [int(line.split()[1]) for line in lines if line.startswith("ACK")]
    errors = [line for line in lines if line.startswith("ERR")]
    assert len(acked) > 50 and len(errors) == 5
    for line in errors:  # a clear error, naming the directory, for every rejected write
        assert line.startswith("ERR StorageError commit failed"), line
        assert str(path) in line and "full" in line and "nothing of this write was stored" in line
    # (SUM of integers is a DECIMAL, as in MySQL)
    assert f"VIEW [({len(acked)}, Decimal('{sum(acked)}'))]" in lines and "CLOSED" in lines
    if not limit:  # room again: the same directory takes writes
        subprocess.run(["mount", "-o", "remount,size=8m", str(mount)], check=True)
    with rivulet.open(path, prewarm=False) as db:
        db.settle()
        stored = sorted(r[0] for r in db.query("SELECT id FROM t"))
        assert stored == acked  # every acknowledged write, nothing of the rejected ones
        assert db.view("total").lookup() == [(len(acked), sum(acked))]
        db.execute("INSERT INTO t VALUES (?, ?)", [10**6, "after"])
        db.settle()
        assert db.view("byid").lookup(10**6) == [(10**6,)]
        assert db.view("total").lookup() == [(len(acked) + 1, sum(acked) + 10**6)]


# --------------------------------------------------------------------------- damaged file


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("healthy") / "db"
    with rivulet.open(path, prewarm=False) as db:
        db.execute_script("""CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(200), g INT);
            CREATE VIEW per_g AS SELECT g, COUNT(*) AS c, SUM(id) AS s FROM t GROUP BY g;
            CREATE VIEW of_g AS SELECT id, s FROM t WHERE g = ?;""")
        db.table("t").insert_many([(i, "x" * 100, i % 10) for i in range(20_000)])
    return path


def damage(file: Path, how: str) -> None:
    size = file.stat().st_size
    if how == "header":
        with file.open("r+b") as f:
            f.write(b"not a database, not at all")
    elif how == "truncated":
        os.truncate(file, size // 2)
    elif how == "middle":
        with file.open("r+b") as f:
            f.seek(size // 2)
            f.write(random.Random(1).randbytes(8192))


@pytest.mark.parametrize("how", ["header", "truncated", "middle"])
def test_damaged_file_fails_open_clearly_and_is_left_alone(healthy: Path, tmp_path: Path,
                                                           how: str) -> None:
    path = tmp_path / "db"
    shutil.copytree(healthy, path)
    damage(path / "rivulet.db", how)
    before = (path / "rivulet.db").read_bytes()
    with pytest.raises(StorageError, match=r"rivulet\.db' is damaged .*Crash safety and recovery"):
        rivulet.open(path, prewarm=False)
    assert (path / "rivulet.db").read_bytes() == before  # nothing written to it


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 shell")
def test_documented_recovery_path_salvages_the_rows(healthy: Path, tmp_path: Path) -> None:
    """README: dump what SQLite can still read into a new data directory, and open that;
    the views are rebuilt from the salvaged rows and equal SQLite over them."""
    path = tmp_path / "db"
    shutil.copytree(healthy, path)
    damage(path / "rivulet.db", "middle")
    salvaged = tmp_path / "salvaged"
    salvaged.mkdir()
    dump = subprocess.run(["sqlite3", str(path / "rivulet.db"), ".dump"], capture_output=True,
                          text=True, check=True).stdout
    dump = dump.replace("ROLLBACK; -- due to errors", "COMMIT;")
    subprocess.run(["sqlite3", str(salvaged / "rivulet.db")], input=dump, text=True, check=True)
    with rivulet.open(salvaged, prewarm=False) as db:
        db.settle()
        rows = db.query("SELECT id, s, g FROM t")
        assert 0 < len(rows) <= 20_000
        assert set(rows) <= {(i, "x" * 100, i % 10) for i in range(20_000)}
        lite = sqlite3.connect(":memory:")
        lite.execute("CREATE TABLE t (id INT PRIMARY KEY, s TEXT, g INT)")
        lite.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        assert_same_answer("SELECT g, COUNT(*) AS c, SUM(id) AS s FROM t GROUP BY g", (),
                           db.view("per_g").scan(), lite, what="per_g")
        for g in (0, 3, 9):
            assert Counter(db.view("of_g").lookup(g)) == Counter(
                lite.execute("SELECT id, s FROM t WHERE g = ?", (g,)).fetchall())
        db.execute("INSERT INTO t VALUES (?, ?, ?)", [10**6, "new", 3])
        db.settle()
        assert (10**6, "new") in db.view("of_g").lookup(3)
