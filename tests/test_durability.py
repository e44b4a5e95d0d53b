"""Durability: restart, kill -9, LSNs, concurrent writers.

SQLite (in memory) is the oracle: it runs the same statements over the same rows, and every
view must answer what SQLite answers for the view's query text.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import rivulet
from rivulet import ConstraintError, SchemaError, SqlError

REPO = Path(__file__).resolve().parent.parent

TABLES = [
    "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, n INT, g INT)",
    "CREATE TABLE u (id INT PRIMARY KEY, tid INT, score INT)",
]

# (name, query, parameter sets to read it with, ordered?)
VIEWS: list[tuple[str, str, list[tuple], bool]] = [
    ("by_g", "SELECT id, name, n FROM t WHERE g = ?", [(g,) for g in range(6)], False),
    ("per_g", "SELECT g, COUNT(*), SUM(n), MIN(n), MAX(n), COUNT(n) FROM t GROUP BY g", [()],
     False),
    ("count_g", "SELECT COUNT(*) FROM t WHERE g = ?", [(g,) for g in range(7)], False),
    ("joined", "SELECT t.id, t.name, u.score FROM t JOIN u ON t.id = u.tid WHERE u.score > ?",
     [(0,), (50,), (90,)], False),
    ("left_cnt", "SELECT t.id, COUNT(u.id) FROM t LEFT JOIN u ON t.id = u.tid GROUP BY t.id",
     [()], False),
    ("top", "SELECT id, n FROM t WHERE g = ? ORDER BY n DESC, id LIMIT 3",
     [(g,) for g in range(6)], True),
    ("dist", "SELECT DISTINCT g FROM t", [()], False),
    ("total", "SELECT COUNT(*), SUM(n) FROM t", [()], False),
    ("pick", "SELECT id, name FROM t WHERE id IN (?, ?)", [(1, 2), (3, 400), (5, 5)], False),
]


def answers(db: rivulet.Database) -> dict[tuple[str, tuple], Any]:
    out = {}
    for name, _, param_sets, ordered in VIEWS:
        view = db.view(name)
        for params in param_sets:
            rows = view.lookup(*params)
            out[name, params] = rows if ordered else Counter(rows)
    return out


def oracle_answers(oracle: sqlite3.Connection) -> dict[tuple[str, tuple], Any]:
    out = {}
    for name, sql, param_sets, ordered in VIEWS:
        for params in param_sets:
            rows = [tuple(r) for r in oracle.execute(sql, params).fetchall()]
            out[name, params] = rows if ordered else Counter(rows)
    return out


def assert_matches_oracle(db: rivulet.Database, oracle: sqlite3.Connection, when: str) -> None:
    got, want = answers(db), oracle_answers(oracle)
    wrong = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    assert not wrong, f"{when}: views differ from SQLite (got, expected): {wrong}"


def new_oracle() -> sqlite3.Connection:
    oracle = sqlite3.connect(":memory:")
    for ddl in TABLES:
        oracle.execute(ddl)
    return oracle


def random_writes(rnd: random.Random, count: int) -> list[tuple[str, tuple]]:
    """Write statements in the subset where MySQL and SQLite agree."""
    statements: list[tuple[str, tuple]] = []
    t_ids: list[int] = []
    u_next = 1000
    next_id = 1
    for _ in range(count):
        r = rnd.random()
        if r < 0.35 or len(t_ids) < 5:
            k = rnd.randint(1, 5)
            rows = []
            for _ in range(k):
                n = rnd.choice([None, rnd.randint(-5, 100)])
                rows.append((next_id, f"name{next_id % 7}", n, rnd.randint(0, 5)))
                t_ids.append(next_id)
                next_id += 1
            marks = ", ".join("(?, ?, ?, ?)" for _ in rows)
            statements.append((f"INSERT INTO t VALUES {marks}",
                               tuple(v for row in rows for v in row)))
        elif r < 0.55:
            k = rnd.randint(1, 4)
            rows = []
            for _ in range(k):
                rows.append((u_next, rnd.choice(t_ids + [9999]), rnd.randint(0, 100)))
                u_next += 1
            marks = ", ".join("(?, ?, ?)" for _ in rows)
            statements.append((f"INSERT INTO u VALUES {marks}",
                               tuple(v for row in rows for v in row)))
        elif r < 0.65:
            statements.append(("UPDATE t SET n = ?, g = ? WHERE id = ?",
                               (rnd.randint(0, 100), rnd.randint(0, 5), rnd.choice(t_ids))))
        elif r < 0.72:
            statements.append(("UPDATE t SET n = n + 1, name = 'bumped' WHERE g = ?",
                               (rnd.randint(0, 5),)))
        elif r < 0.78:
            statements.append(("UPDATE u SET score = score - 10 WHERE score > ?",
                               (rnd.randint(50, 100),)))
        elif r < 0.88:
            victim = rnd.choice(t_ids)
            statements.append(("DELETE FROM t WHERE id = ?", (victim,)))
        elif r < 0.94:
            statements.append(("DELETE FROM t WHERE n < ? AND g = ?",
                               (rnd.randint(0, 30), rnd.randint(0, 5))))
        else:
            statements.append(("DELETE FROM u WHERE score < ?", (rnd.randint(0, 30),)))
    return statements


def apply_both(db: rivulet.Database, oracle: sqlite3.Connection, sql: str, params: tuple) -> None:
    got = db.execute(sql, params)
    cur = oracle.execute(sql, params)
    if not sql.startswith("UPDATE"):  # MySQL counts changed rows, SQLite matched rows
        assert got == cur.rowcount, (
            f"{sql} {params}: rivulet says {got} rows, SQLite {cur.rowcount}")


def stored_rows(db: rivulet.Database, table: str) -> Counter:
    return Counter(db.query(f"SELECT * FROM {table}"))


def oracle_rows(oracle: sqlite3.Connection, table: str) -> Counter:
    return Counter(tuple(r) for r in oracle.execute(f"SELECT * FROM {table}"))


# --------------------------------------------------------------------------- restart


@pytest.mark.parametrize("durability", ["normal", "full"])
@pytest.mark.parametrize("seed", [1, 2])
def test_restart_views_answer_as_before(tmp_path, seed, durability):
    path = tmp_path / "db"
    oracle = new_oracle()
    rnd = random.Random(seed)
    with rivulet.open(path, durability=durability) as db:
        for ddl in TABLES:
            db.execute(ddl)
        for name, sql, _, _ in VIEWS:
            db.execute(f"CREATE VIEW {name} AS {sql}")
        for sql, params in random_writes(rnd, 120):
            apply_both(db, oracle, sql, params)
        db.settle()
        assert_matches_oracle(db, oracle, "before restart")
        before = answers(db)
        lsn = db.lsn
    for attempt in range(2):  # restart twice: the second start sees a restarted database
        with rivulet.open(path, durability=durability) as db:
            db.settle()
            assert db.lsn == lsn
            assert sorted(db.views()) == sorted(name for name, *_ in VIEWS)
            assert stored_rows(db, "t") == oracle_rows(oracle, "t")
            assert stored_rows(db, "u") == oracle_rows(oracle, "u")
            assert answers(db) == before, f"restart {attempt + 1}: views changed"
            assert_matches_oracle(db, oracle, f"after restart {attempt + 1}")


def test_restart_then_more_writes(tmp_path):
    """Views rebuilt at start-up keep being maintained by writes after the restart."""
    path = tmp_path / "db"
    oracle = new_oracle()
    rnd = random.Random(7)
    writes = random_writes(rnd, 160)
    with rivulet.open(path) as db:
        for ddl in TABLES:
            db.execute(ddl)
        for name, sql, _, _ in VIEWS:
            db.execute(f"CREATE VIEW {name} AS {sql}")
        for sql, params in writes[:80]:
            apply_both(db, oracle, sql, params)
    with rivulet.open(path) as db:
        for sql, params in writes[80:]:
            apply_both(db, oracle, sql, params)
        db.settle()
        assert_matches_oracle(db, oracle, "after restart and more writes")


def test_restart_views_created_after_data(tmp_path):
    """A view created over existing rows (bootstrapped) answers the same after a restart."""
    path = tmp_path / "db"
    oracle = new_oracle()
    with rivulet.open(path) as db:
        for ddl in TABLES:
            db.execute(ddl)
        for sql, params in random_writes(random.Random(11), 100):
            apply_both(db, oracle, sql, params)
        for name, sql, _, _ in VIEWS:
            db.execute(f"CREATE VIEW {name} AS {sql}")
        assert_matches_oracle(db, oracle, "right after CREATE VIEW")
    with rivulet.open(path) as db:
        db.settle()
        assert_matches_oracle(db, oracle, "after restart")


def test_restart_empty_tables(tmp_path):
    path = tmp_path / "db"
    oracle = new_oracle()
    with rivulet.open(path) as db:
        for ddl in TABLES:
            db.execute(ddl)
        for name, sql, _, _ in VIEWS:
            db.execute(f"CREATE VIEW {name} AS {sql}")
    with rivulet.open(path) as db:
        assert_matches_oracle(db, oracle, "after restart, no rows")
        apply_both(db, oracle, "INSERT INTO t VALUES (1, 'a', 5, 1), (2, 'b', NULL, 1)", ())
        db.settle()
        assert_matches_oracle(db, oracle, "after restart and a write")


# --------------------------------------------------------------------------- kill -9

CHILD = textwrap.dedent(
    """
    import random, sys
    import rivulet

    path, seed = sys.argv[1], int(sys.argv[2])

    def size_of(batch):
        return random.Random(seed * 100003 + batch).randint(1, 40)

    db = rivulet.open(path)
    db.execute_script('''
        CREATE TABLE t (id INT PRIMARY KEY, batch INT NOT NULL, v INT);
        CREATE VIEW total AS SELECT COUNT(*) FROM t;
        CREATE VIEW per_batch AS SELECT batch, COUNT(*), SUM(v) FROM t GROUP BY batch;
        CREATE VIEW of_batch AS SELECT id, v FROM t WHERE batch = ?;
    ''')
    print("READY", flush=True)
    acked = 0
    batch = 0
    while True:
        batch += 1
        rows = [(batch * 1000 + i, batch, i) for i in range(size_of(batch))]
        if batch % 2:
            db.table("t").insert_many(rows)
        else:
            marks = ", ".join("(?, ?, ?)" for _ in rows)
            db.execute("INSERT INTO t VALUES " + marks, [x for r in rows for x in r])
        acked += len(rows)
        print("ACK", batch, acked, flush=True)
        if batch % 3 == 0:
            db.execute("UPDATE t SET v = v + 1000 WHERE batch = ?", (batch,))
            print("UPD", batch, flush=True)
    """
)


def size_of(seed: int, batch: int) -> int:
    return random.Random(seed * 100003 + batch).randint(1, 40)


@pytest.mark.parametrize("seed", [3, 4, 5, 6])
def test_sigkill_loses_no_acknowledged_write(tmp_path, seed):
    path = tmp_path / "db"
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    rnd = random.Random(seed)
    kill_after = rnd.randint(3, 60)
    child = subprocess.Popen(
        [sys.executable, str(script), str(path), str(seed)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(tmp_path),
    )
    lines: list[str] = []
    try:
        assert child.stdout is not None
        acks = 0
        deadline = time.monotonic() + 120
        while acks < kill_after:
            line = child.stdout.readline()
            if not line:
                pytest.fail(f"child exited early: {child.wait()} {child.stderr.read()}")
            lines.append(line.split())
            acks += line.startswith("ACK")
            assert time.monotonic() < deadline, "child too slow"
        time.sleep(rnd.random() * 0.05)  # land somewhere in the middle of a write
        os.kill(child.pid, signal.SIGKILL)
        rest, _ = child.communicate(timeout=60)
        # Printed before it died; a last line the kill cut short says nothing for sure.
        lines.extend(line.split() for line in rest.splitlines(keepends=True) if line.endswith("\n"))
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    acked_batches = [int(p[1]) for p in lines if p and p[0] == "ACK"]
    acked_rows = max(int(p[2]) for p in lines if p and p[0] == "ACK")
    updated = {int(p[1]) for p in lines if p and p[0] == "UPD"}
    last = max(acked_batches)
    assert acked_rows == sum(size_of(seed, b) for b in range(1, last + 1))

    with rivulet.open(path) as db:
        db.settle()
        rows = db.query("SELECT * FROM t")
        assert len(rows) == len(set(r[0] for r in rows)), "duplicate primary keys after recovery"
        assert len(rows) >= acked_rows, f"lost acknowledged rows: {len(rows)} < {acked_rows}"
        by_batch: dict[int, list[tuple]] = {}
        for r in rows:
            by_batch.setdefault(r[1], []).append(r)
        present = sorted(by_batch)
        # Batches were written one after another: 1..m, with at most the in-flight one extra.
        assert present == list(range(1, len(present) + 1))
        assert last <= len(present) <= last + 1
        for b, batch_rows in by_batch.items():
            expected_ids = {b * 1000 + i for i in range(size_of(seed, b))}
            assert {r[0] for r in batch_rows} == expected_ids, f"batch {b} is not all-or-nothing"
            bumped = {r[2] >= 1000 for r in batch_rows}
            assert len(bumped) == 1, f"the UPDATE of batch {b} is not all-or-nothing"
            if b in updated:
                assert bumped == {True}, f"acknowledged UPDATE of batch {b} was lost"
            if b % 3:
                assert bumped == {False}
        # Views agree with the recovered base table (SQLite over rivulet's own stored rows).
        oracle = sqlite3.connect(":memory:")
        oracle.execute("CREATE TABLE t (id INT PRIMARY KEY, batch INT NOT NULL, v INT)")
        oracle.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        assert db.view("total").lookup() == oracle.execute("SELECT COUNT(*) FROM t").fetchall()
        assert Counter(db.view("per_batch").scan()) == Counter(
            oracle.execute("SELECT batch, COUNT(*), SUM(v) FROM t GROUP BY batch").fetchall()
        )
        for b in (1, last, last + 1):
            assert Counter(db.view("of_batch").lookup(b)) == Counter(
                oracle.execute("SELECT id, v FROM t WHERE batch = ?", (b,)).fetchall()
            )
        # The recovered database takes writes and keeps its views right.
        lsn = db.lsn
        db.table("t").insert_many([(10**9, 0, 1), (10**9 + 1, 0, 2)])
        assert db.lsn == lsn + 1
        db.settle()
        assert db.view("total").lookup() == [(len(rows) + 2,)]
        assert Counter(db.view("of_batch").lookup(0)) == Counter([(10**9, 1), (10**9 + 1, 2)])


# --------------------------------------------------------------------------- LSN


def test_lsn_counts_committed_batches(tmp_path):
    path = tmp_path / "db"
    with rivulet.open(path) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(3) NOT NULL, n INT)")
        db.execute("CREATE VIEW v AS SELECT COUNT(*) FROM t")
        lsn = db.lsn
        steps = [
            lambda: db.execute("INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)"),
            lambda: db.table("t").insert((4, "d", 4)),
            lambda: db.table("t").insert_many([(5, "e", 5), (6, "f", 6)]),
            lambda: db.execute("UPDATE t SET n = n * 10 WHERE id > ?", (2,)),
            lambda: db.table("t").update("id = ?", [1], name="z"),
            lambda: db.execute("DELETE FROM t WHERE id = 6"),
            lambda: db.table("t").delete("n > ?", [40]),
        ]
        for step in steps:
            step()
            assert db.lsn == lsn + 1, "a committed write batch must take exactly one LSN"
            lsn = db.lsn
        rejected = [
            (lambda: db.execute("INSERT INTO t VALUES (7, 'g', 7), (1, 'dup', 0)"),
             ConstraintError),
            (lambda: db.table("t").insert_many([(8, "h", 8), (8, "h", 8)]), ConstraintError),
            (lambda: db.execute("INSERT INTO t VALUES (9, 'toolong', 1)"), SchemaError),
            (lambda: db.execute("INSERT INTO t VALUES (9, NULL, 1)"), SchemaError),
            (lambda: db.execute("UPDATE t SET id = 2 WHERE id = 1"), ConstraintError),
            (lambda: db.execute("UPDATE t SET name = 'abcdef'"), SchemaError),
            (lambda: db.execute("INSERT INTO t VALUES (9, 'x', 'abc')"), SchemaError),
            (lambda: db.execute("INSERT INTO nosuch VALUES (1)"), SqlError),
        ]
        for step, exc in rejected:
            with pytest.raises(exc):
                step()
            assert db.lsn == lsn, "a rejected batch must not take an LSN"
        db.settle()
        assert db.view("v").lookup() == [(4,)]
        db.execute("INSERT INTO t VALUES (10, 'j', 1)")
        assert db.lsn == lsn + 1
        lsn = db.lsn
    with rivulet.open(path) as db:
        assert db.lsn == lsn, "the LSN must persist across a restart"
        db.execute("INSERT INTO t VALUES (11, 'k', 1)")
        assert db.lsn == lsn + 1
        with pytest.raises(ConstraintError):
            db.execute("INSERT INTO t VALUES (11, 'k', 1)")
        assert db.lsn == lsn + 1
    with rivulet.open(path) as db:
        assert db.lsn == lsn + 1
        db.settle()
        assert db.view("v").lookup() == [(6,)]


def test_lsn_of_concurrent_writers(tmp_path):
    threads, batches, rows_per_batch = 8, 25, 4
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, writer INT NOT NULL, seq INT NOT NULL)")
        db.execute(
            "CREATE VIEW per_writer AS SELECT writer, COUNT(*), SUM(seq) FROM t GROUP BY writer")
        db.execute("CREATE VIEW of_writer AS SELECT id FROM t WHERE writer = ?")
        start = db.lsn
        errors: list[BaseException] = []
        barrier = threading.Barrier(threads)

        def writer(w: int) -> None:
            try:
                barrier.wait()
                for b in range(batches):
                    base = (w * batches + b) * rows_per_batch
                    rows = [(base + i, w, b) for i in range(rows_per_batch)]
                    if b % 2:
                        assert db.table("t").insert_many(rows) == rows_per_batch
                    else:
                        marks = ", ".join("(?, ?, ?)" for _ in rows)
                        n = db.execute(f"INSERT INTO t VALUES {marks}",
                                       [x for r in rows for x in r])
                        assert n == rows_per_batch
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        workers = [threading.Thread(target=writer, args=(w,)) for w in range(threads)]
        for th in workers:
            th.start()
        for th in workers:
            th.join()
        assert not errors, errors
        total = threads * batches * rows_per_batch
        rows = db.query("SELECT * FROM t")
        assert len(rows) == total and len({r[0] for r in rows}) == total
        assert set(rows) == {
            ((w * batches + b) * rows_per_batch + i, w, b)
            for w in range(threads) for b in range(batches) for i in range(rows_per_batch)
        }
        assert 1 <= db.lsn - start <= threads * batches  # group commit may merge batches
        db.settle()
        expected = Counter((w, batches * rows_per_batch, rows_per_batch * sum(range(batches)))
                           for w in range(threads))
        assert Counter(db.view("per_writer").scan()) == expected
        for w in range(threads):
            assert len(db.view("of_writer").lookup(w)) == batches * rows_per_batch


def test_concurrent_writers_same_keys_one_wins(tmp_path):
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, writer INT)")
        db.execute("CREATE VIEW all_t AS SELECT * FROM t")
        barrier = threading.Barrier(8)
        outcome: dict[int, Any] = {}

        def writer(w: int) -> None:
            barrier.wait()
            try:
                outcome[w] = db.table("t").insert_many([(i, w) for i in range(20)])
            except ConstraintError as exc:
                outcome[w] = exc

        workers = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
        for th in workers:
            th.start()
        for th in workers:
            th.join()
        winners = [w for w, o in outcome.items() if o == 20]
        assert len(winners) == 1, outcome
        assert all(isinstance(o, ConstraintError) for w, o in outcome.items() if w not in winners)
        db.settle()
        assert sorted(db.view("all_t").scan()) == [(i, winners[0]) for i in range(20)]


def test_concurrent_read_modify_write_updates(tmp_path):
    """``UPDATE ... SET n = n + 1`` from many threads: none of the increments is lost."""
    threads, times = 8, 30
    path = tmp_path / "db"
    with rivulet.open(path) as db:
        db.execute("CREATE TABLE c (id INT PRIMARY KEY, n INT NOT NULL)")
        db.execute("CREATE VIEW val AS SELECT n FROM c WHERE id = ?")
        db.table("c").insert_many([(i, 0) for i in range(threads + 1)])
        errors: list[BaseException] = []

        def worker(w: int) -> None:
            try:
                for _ in range(times):
                    assert db.execute("UPDATE c SET n = n + 1 WHERE id = ?", (w,)) == 1
                    assert db.execute("UPDATE c SET n = n + 1 WHERE id = ?", (threads,)) == 1
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        workers = [threading.Thread(target=worker, args=(w,)) for w in range(threads)]
        for th in workers:
            th.start()
        for th in workers:
            th.join()
        assert not errors, errors
        db.settle()
        for w in range(threads):
            assert db.view("val").lookup(w) == [(times,)]
        assert db.view("val").lookup(threads) == [(threads * times,)]
    with rivulet.open(path) as db:
        assert sorted(db.query("SELECT id, n FROM c")) == (
            [(w, times) for w in range(threads)] + [(threads, threads * times)]
        )


def test_writes_racing_with_close_commit_or_raise_closed(tmp_path):
    """Each write that races with close() either commits (and survives) or raises
    ClosedError: it never returns without having committed."""
    for trial in range(8):
        path = tmp_path / f"db{trial}"
        db = rivulet.open(path)
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, w INT)")
        acked: list[int] = []
        bad: list[Any] = []
        lock = threading.Lock()

        def writer(w: int) -> None:
            for i in range(2000):
                rid = w * 10000 + i
                try:
                    n = db.table("t").insert((rid, w))
                except rivulet.ClosedError:
                    return
                except BaseException as exc:  # noqa: BLE001
                    with lock:
                        bad.append(exc)
                    return
                with lock:
                    if n == 1:
                        acked.append(rid)
                    else:
                        bad.append(("returned", n, rid))

        workers = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for th in workers:
            th.start()
        time.sleep(0.01 + 0.01 * trial)
        db.close()
        for th in workers:
            th.join()
        assert not bad, f"trial {trial}: writes neither committed nor refused: {bad[:5]}"
        with rivulet.open(path) as again:
            have = {r[0] for r in again.query("SELECT id FROM t")}
        assert set(acked) <= have, f"trial {trial}: acknowledged writes lost"
