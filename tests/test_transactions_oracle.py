"""Random interleavings of transactions from several connections, checked against a model
(docs/transactions.md).

Hypothesis draws a sequence of steps, each a statement of one of three connections: plain
reads, locking reads, writes (UPDATE, INSERT, DELETE by key), savepoints and rollbacks to
them, COMMIT, ROLLBACK, and a connection killed (closed in its transaction). They run in
that order in one thread: a statement that must wait for a lock is put aside (its
transaction raises ``LockWait`` instead of blocking, as the MySQL server's do) and run again
once its lock is granted; meanwhile the other connections go on. A deadlock's victim is
rolled back.

The model is the serial oracle of READ COMMITTED with locks: the committed state changes
only at a COMMIT, by that transaction's writes, all at once (so every outcome is the
serial order of the commits); a statement sees the committed state as it is when it runs
(once its locks are granted) with its own transaction's writes laid over it. Every read is
checked against the model as it runs, and the committed rows at the end, through the views
and in storage.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from rivulet.engine.transaction import LockWait, Transaction
from rivulet.errors import ConstraintError, DeadlockError, NoSuchSavepointError, TransactionError

KEYS = range(1, 6)
START = {1: 10, 2: 20, 3: 30}
CONNECTIONS = 3


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path_factory.mktemp("oracle") / "db")
    database.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)")
    database.execute("CREATE VIEW everything AS SELECT id, v FROM t")
    yield database
    database.close()


# ......................................................................... steps

ops = st.one_of(
    st.tuples(st.just("read"), st.sampled_from(KEYS)),
    st.tuples(st.just("sum")),
    st.tuples(st.just("locking"), st.sampled_from(KEYS), st.sampled_from(["UPDATE", "SHARE"])),
    st.tuples(st.just("update"), st.sampled_from(KEYS), st.integers(-5, 5)),
    st.tuples(st.just("insert"), st.sampled_from(KEYS), st.integers(0, 99)),
    st.tuples(st.just("delete"), st.sampled_from(KEYS)),
    st.tuples(st.just("savepoint"), st.sampled_from("ab")),
    st.tuples(st.just("rollback_to"), st.sampled_from("ab")),
    st.tuples(st.just("commit")),
    st.tuples(st.just("commit")),
    st.tuples(st.just("rollback")),
    st.tuples(st.just("kill")),
)
steps = st.lists(st.tuples(st.integers(0, CONNECTIONS - 1), ops), min_size=1, max_size=40)


@dataclass
class Connection:
    """One connection: its transaction, the model of its writes and savepoints, and a
    statement put aside until its lock is granted."""

    tx: Transaction | None = None
    own: dict[int, int | None] = field(default_factory=dict)
    savepoints: list[tuple[str, dict[int, int | None]]] = field(default_factory=list)
    waiting: tuple[Any, tuple] | None = None


class Run:
    """The database and the model, driven step by step."""

    def __init__(self, db: rivulet.Database) -> None:
        self.db = db
        self.committed: dict[int, int] = dict(START)
        self.conns = [Connection() for _ in range(CONNECTIONS)]

    # ..................................................................... the model

    def sees(self, conn: Connection, key: int) -> int | None:
        if key in conn.own:
            return conn.own[key]
        return self.committed.get(key)

    def end(self, conn: Connection, commit: bool) -> None:
        if commit:
            for key, value in conn.own.items():
                if value is None:
                    self.committed.pop(key, None)
                else:
                    self.committed[key] = value
        conn.tx, conn.own, conn.savepoints, conn.waiting = None, {}, [], None
        if commit:
            self.db.settle()  # (reads of the views then see the commit)

    # ..................................................................... statements

    def step(self, index: int, op: tuple) -> None:
        conn = self.conns[index]
        if conn.waiting is not None:
            self.resume(conn)
            if conn.waiting is not None:
                if op[0] == "kill":  # closed while it waits: rolled back, its wait ended
                    assert conn.tx is not None
                    conn.tx.rollback()
                    self.end(conn, commit=False)
                return  # (its next statement waits for this one)
        self.run(conn, op)

    def resume(self, conn: Connection) -> None:
        assert conn.waiting is not None
        future = conn.waiting[0]
        if not future.done():
            return
        op = conn.waiting[1]
        conn.waiting = None
        error = future.exception()
        if isinstance(error, DeadlockError):  # its victim: rolled back
            assert conn.tx is not None
            conn.tx.rollback()
            self.end(conn, commit=False)
            return
        assert error is None, error
        self.run(conn, op)

    def run(self, conn: Connection, op: tuple) -> None:
        kind = op[0]
        if kind in ("commit", "rollback", "kill"):
            if conn.tx is not None:
                if kind == "commit":
                    conn.tx.commit()
                else:
                    conn.tx.rollback()
            self.end(conn, commit=kind == "commit")
            return
        if conn.tx is None:
            conn.tx = self.db.transaction()
            conn.tx.defer_lock_waits = True
        tx = conn.tx
        try:
            self.statement(conn, tx, op)
        except LockWait as wait:
            conn.waiting = (wait.future, op)
        except DeadlockError:
            assert not tx.active  # rolled back: the victim
            self.end(conn, commit=False)

    def statement(self, conn: Connection, tx: Transaction, op: tuple) -> None:
        kind = op[0]
        if kind == "read":
            key = op[1]
            got = tx.query("SELECT v FROM t WHERE id = ?", (key,))
            expected = self.sees(conn, key)
            assert got == ([] if expected is None else [(expected,)]), (op, got, expected)
        elif kind == "sum":
            got = tx.query("SELECT COUNT(*), SUM(v) FROM t")
            values = [v for v in (self.sees(conn, k) for k in KEYS) if v is not None]
            assert got[0][0] == len(values) and (got[0][1] or 0) == sum(values), (got, values)
        elif kind == "locking":
            key, mode = op[1], op[2]
            got = tx.query(f"SELECT v FROM t WHERE id = ? FOR {mode}", (key,))
            expected = self.sees(conn, key)
            assert got == ([] if expected is None else [(expected,)]), (op, got, expected)
        elif kind == "update":
            key, delta = op[1], op[2]
            count = tx.execute("UPDATE t SET v = v + ? WHERE id = ?", (delta, key))
            now = self.sees(conn, key)
            assert count == (1 if now is not None and delta else 0), (op, count, now)
            if now is not None:
                conn.own[key] = now + delta
        elif kind == "insert":
            key, value = op[1], op[2]
            if self.sees(conn, key) is not None:
                with pytest.raises(ConstraintError):
                    tx.execute("INSERT INTO t VALUES (?, ?)", (key, value))
            else:
                assert tx.execute("INSERT INTO t VALUES (?, ?)", (key, value)) == 1
                conn.own[key] = value
        elif kind == "delete":
            key = op[1]
            count = tx.execute("DELETE FROM t WHERE id = ?", (key,))
            assert count == (0 if self.sees(conn, key) is None else 1)
            conn.own[key] = None
        elif kind == "savepoint":
            tx.execute(f"SAVEPOINT {op[1]}")
            conn.savepoints = [s for s in conn.savepoints if s[0] != op[1]]
            conn.savepoints.append((op[1], dict(conn.own)))
        elif kind == "rollback_to":
            names = [s[0] for s in conn.savepoints]
            if op[1] not in names:
                with pytest.raises(NoSuchSavepointError):
                    tx.execute(f"ROLLBACK TO SAVEPOINT {op[1]}")
                return
            tx.execute(f"ROLLBACK TO SAVEPOINT {op[1]}")
            at = len(names) - 1 - names[::-1].index(op[1])
            conn.own = dict(conn.savepoints[at][1])
            del conn.savepoints[at + 1:]

    # ..................................................................... the end

    def finish(self) -> None:
        """Commit every open transaction, in turns, until none waits."""
        for _ in range(4 * CONNECTIONS + 4):
            for conn in self.conns:
                if conn.waiting is not None:
                    self.resume(conn)
                if conn.waiting is None:
                    self.run(conn, ("commit",))
            if all(c.tx is None for c in self.conns):
                return
        raise AssertionError("transactions still wait for each other at the end "
                             f"(held: {self.db.locks.active})")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(steps=steps)
def test_interleaved_transactions_answer_as_the_serial_model(
        db: rivulet.Database, steps: list[tuple[int, tuple]]) -> None:
    db.execute("DELETE FROM t")
    for key, value in START.items():
        db.execute("INSERT INTO t VALUES (?, ?)", (key, value))
    db.settle()
    run = Run(db)
    try:
        for index, op in steps:
            run.step(index, op)
        run.finish()
    finally:
        for conn in run.conns:  # (a failed example leaves no lock behind)
            if conn.tx is not None and conn.tx.active:
                conn.tx.rollback()
    assert not db.locks.active
    db.settle()
    expected = sorted(run.committed.items())
    assert sorted(db.view("everything").lookup()) == expected
    with db.transaction() as tx:  # storage itself, through a computed read
        tx.execute("UPDATE t SET v = v WHERE id = 0")
        assert sorted(tx.query("SELECT id, v FROM t")) == expected


def test_a_wait_ended_by_a_closed_connection_is_no_error(tmp_path: Path) -> None:
    """(A case the random steps find rarely.) A connection closed while its statement
    waits for a lock: the wait ends, the holder goes on."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)")
        db.execute("INSERT INTO t VALUES (1, 1)")
        holder, waiter = db.transaction(), db.transaction()
        waiter.defer_lock_waits = True
        holder.execute("UPDATE t SET v = 2 WHERE id = 1")
        with pytest.raises(LockWait) as wait:
            waiter.execute("UPDATE t SET v = 3 WHERE id = 1")
        waiter.rollback()
        with pytest.raises(TransactionError):
            wait.value.future.result(1)
        holder.commit()
        assert not db.locks.active
