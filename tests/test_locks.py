"""Locks of transactions (rivulet/engine/locks.py, docs/transactions.md): the lock table
itself (modes, order of waiters, deadlocks, timeouts), locking reads and writes in the
Python API, and over MySQL with PyMySQL: ``SELECT ... FOR UPDATE`` then ``UPDATE`` loses no
increment with 16 connections, a deadlock answers 1213 to one transaction (rolled back)
and lets the other go on, a lock wait times out with 1205 after
``innodb_lock_wait_timeout``, ``NOWAIT`` answers 3572, and outside a transaction a locking
read is a plain read."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pymysql
import pytest

import rivulet
from rivulet.engine.locks import IS, IX, LockManager, S, X, row_locks, table_lock
from rivulet.engine.upquery import Upqueries
from rivulet.errors import DeadlockError, LockNowaitError, LockWaitTimeoutError, TransactionError
from rivulet.server.mysql.server import ServerThread

# ......................................................................... the lock table


def row(key: int, mode: str, table: str = "t") -> list:
    return row_locks(table, [(key,)], mode)


def test_shared_locks_share_and_exclusive_ones_wait() -> None:
    locks = LockManager()
    assert locks.acquire("a", row(1, S), 5).done()
    assert locks.acquire("b", row(1, S), 5).done()
    waiting = locks.acquire("c", row(1, X), 5)
    assert not waiting.done()
    assert locks.acquire("d", row(2, X), 5).done()  # another row
    locks.release("a")
    assert not waiting.done()
    locks.release("b")
    assert waiting.result(1) is None
    assert locks.held("c") == {("t", "t"): {IX}, ("r", "t", (1,)): {X}}
    for owner in "cd":
        locks.release(owner)
    assert not locks.active


def test_table_locks_conflict_with_row_locks_through_intentions() -> None:
    locks = LockManager()
    assert locks.acquire("a", row(1, X), 5).done()
    assert locks.acquire("b", [table_lock("t", IS)], 5).done()  # (intentions share)
    whole = locks.acquire("c", [table_lock("t", S)], 5)
    assert not whole.done()
    assert locks.table_busy("T") and not locks.table_busy("u")
    locks.release("a")
    assert whole.result(1) is None
    later = locks.acquire("d", row(7, X), 5)  # IX waits for the table's S
    assert not later.done()
    locks.release("c")
    assert later.result(1) is None


def test_waiters_go_in_order_and_an_upgrade_passes_them() -> None:
    locks = LockManager()
    locks.acquire("a", row(1, S), 5)
    first = locks.acquire("b", row(1, X), 5)
    second = locks.acquire("c", row(1, S), 5)  # behind b's X, though S is compatible with a
    assert not first.done() and not second.done()
    upgrade = locks.acquire("a", row(1, X), 5)  # a holds S: only other holders count
    assert upgrade.result(1) is None
    locks.release("a")
    assert first.result(1) is None and not second.done()
    locks.release("b")
    assert second.result(1) is None


def test_a_cycle_of_waits_fails_the_transaction_closing_it_and_frees_its_locks() -> None:
    locks = LockManager()
    locks.acquire("old", row(1, X), 5)
    locks.acquire("young", row(2, X), 5)
    old_waits = locks.acquire("old", row(2, X), 5)
    assert not old_waits.done()
    young_waits = locks.acquire("young", row(1, X), 5)  # closes the cycle: young is the victim
    with pytest.raises(DeadlockError):
        young_waits.result(1)
    assert old_waits.result(1) is None  # young's locks went at once
    with pytest.raises(DeadlockError):  # until it rolls back
        locks.acquire("young", row(3, X), 5).result(1)
    locks.release("young")
    assert locks.acquire("young", row(3, X), 5).done()
    assert locks.counters["deadlocks"] == 1


def test_the_older_transaction_closing_a_cycle_is_its_victim_among_equals() -> None:
    """InnoDB's rule on a tie (Django's test_implicit_savepoint_rollback): the requester
    that closes the cycle fails, even when it is the older one."""
    locks = LockManager()
    locks.acquire("old", row(1, X), 5)
    locks.acquire("young", row(2, X), 5)
    young_waits = locks.acquire("young", row(1, X), 5)
    old_waits = locks.acquire("old", row(2, X), 5)  # closes the cycle
    with pytest.raises(DeadlockError):
        old_waits.result(1)
    assert young_waits.result(1) is None


def test_the_victim_may_be_a_waiter_other_than_the_one_closing_the_cycle() -> None:
    """A member of the cycle holding fewer locks is the victim, not the requester."""
    locks = LockManager()
    locks.acquire("a", row(1, X) + row(4, X), 5)
    locks.acquire("b", row(2, X) + row(5, X), 5)
    locks.acquire("c", row(3, X), 5)
    b_waits = locks.acquire("b", row(3, X), 5)  # b -> c
    c_waits = locks.acquire("c", row(1, X), 5)  # c -> a
    a_waits = locks.acquire("a", row(2, X), 5)  # a -> b: a cycle; c holds the fewest
    with pytest.raises(DeadlockError):
        c_waits.result(1)
    assert b_waits.result(1) is None  # c's row 3 freed
    assert not a_waits.done()
    locks.release("b")
    assert a_waits.result(1) is None


def test_a_wait_times_out_and_keeps_the_locks_held() -> None:
    locks = LockManager()
    locks.acquire("a", row(1, X), 5)
    locks.acquire("b", row(2, X), 5)
    started = time.monotonic()
    with pytest.raises(LockWaitTimeoutError):
        locks.acquire("b", row(1, X), 0.2).result(5)
    assert 0.15 < time.monotonic() - started < 3
    assert ("r", "t", (2,)) in locks.held("b")
    with pytest.raises(LockNowaitError):
        locks.acquire("b", row(1, S), 5, nowait=True).result(1)
    locks.release("a")
    assert locks.acquire("b", row(1, X), 5).done()


def test_releasing_a_waiter_ends_its_wait_and_release_all_frees_a_process() -> None:
    locks = LockManager()
    locks.acquire(("replica", 1, 1), row(1, X), 5)
    locks.acquire(("replica", 2, 1), row(2, X), 5)
    waiting = locks.acquire(("replica", 1, 2), row(2, X), 5)
    locks.release_all(lambda owner: owner[:2] == ("replica", 1))
    with pytest.raises(TransactionError):
        waiting.result(1)
    assert locks.acquire("x", row(1, X), 5).done()


def test_many_threads_contending_for_rows_keep_the_table_consistent() -> None:
    """Random lock requests from 8 threads: every request ends (granted, or a deadlock's
    victim), and no two owners ever hold conflicting locks at once (a victim's locks go
    when it is chosen, before its thread hears of it: such overlaps are not counted)."""
    import random

    locks = LockManager()
    holding: dict[Any, set[tuple]] = {}
    clashes: list[tuple[Any, Any]] = []
    victims: set[Any] = set()
    guard = threading.Lock()

    def worker(k: int) -> None:
        rng = random.Random(k)
        for n in range(60):
            owner = (k, n)
            for _ in range(rng.randint(1, 3)):
                key = rng.randint(1, 4)
                mode = rng.choice([S, X])
                future = locks.acquire(owner, row(key, mode), 5)
                try:
                    future.result(10)
                except DeadlockError:
                    with guard:
                        victims.add(owner)
                    break
                with guard:
                    for other, held in holding.items():
                        if other != owner and any(
                                k2 == key and (mode == X or m2 == X) for k2, m2 in held):
                            clashes.append((owner, other))
                    holding.setdefault(owner, set()).add((key, mode))
                time.sleep(0.0005)  # (held a moment: the others come to wait)
            with guard:
                holding.pop(owner, None)
            locks.release(owner)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert [c for c in clashes if c[1] not in victims] == []
    assert locks.counters["lock_waits"] > 0
    assert not locks.active


# ......................................................................... the Python API


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path / "db")
    database.execute_script("""
        CREATE TABLE counter (id INT PRIMARY KEY, n INT NOT NULL);
        CREATE TABLE log (what VARCHAR(20));
        INSERT INTO counter VALUES (1, 0), (2, 0);
    """)
    yield database
    database.close()


def in_thread(fn: Any, *args: Any) -> Future[Any]:
    done: Future[Any] = Future()

    def run() -> None:
        try:
            done.set_result(fn(*args))
        except BaseException as exc:
            done.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return done


def test_for_update_locks_the_rows_it_names_and_reads_the_newest_commit(
        db: rivulet.Database) -> None:
    tx = db.transaction()
    assert tx.query("SELECT n FROM counter WHERE id = 1 FOR UPDATE") == [(0,)]
    assert db.locks.held(tx.owner) == {("t", "counter"): {IX}, ("r", "counter", (1,)): {X}}
    other = db.transaction()
    assert other.query("SELECT n FROM counter WHERE id = 2 FOR UPDATE") == [(0,)]
    blocked = in_thread(other.query, "SELECT n FROM counter WHERE id = ? FOR SHARE", (1,))
    time.sleep(0.2)
    assert not blocked.done()
    tx.execute("UPDATE counter SET n = 5 WHERE id = 1")
    tx.commit()
    assert blocked.result(5) == [(5,)]  # the newest commit, not the views'
    other.rollback()
    assert not db.locks.active


def test_a_locking_read_by_key_answers_from_the_rows_it_locked_with_its_own_writes(
        db: rivulet.Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """A locking read naming whole primary keys answers from the rows it locked
    (``View.answer_of_rows``), without computing the view whole: the same rows, filter and
    projection applied, as the same read without the lock, computed whole over the
    transaction's writes."""
    tx = db.transaction()
    tx.execute("INSERT INTO counter VALUES (3, 7), (4, 9)")
    tx.execute("UPDATE counter SET n = 4 WHERE id = 2")
    tx.execute("DELETE FROM counter WHERE id = 4")
    read = "SELECT id, n * 2 AS twice, n > 3 FROM counter WHERE id IN (?, ?, ?, ?, ?) AND n <> 7"
    keys = (2, 3, 1, 9, 4)
    whole = tx.query(read, keys)

    def computed_whole(*args: Any) -> None:
        raise AssertionError("a locking read by key computed the view whole")

    monkeypatch.setattr(Upqueries, "computed", computed_whole)
    locked = tx.query(read + " FOR UPDATE", keys)
    assert sorted(locked) == sorted(whole) == [(1, 0, 0), (2, 8, 1)]
    assert tx.query("SELECT n FROM counter WHERE id = ? FOR SHARE", (3,)) == [(7,)]
    tx.rollback()


def test_a_locking_read_naming_no_key_locks_the_table(db: rivulet.Database) -> None:
    tx = db.transaction()
    assert tx.query("SELECT SUM(n) FROM counter WHERE n >= 0 FOR SHARE") == [(0,)]
    assert db.locks.held(tx.owner) == {("t", "counter"): {S}}
    writer = db.transaction()
    blocked = in_thread(writer.execute, "UPDATE counter SET n = 1 WHERE id = 2")
    time.sleep(0.2)
    assert not blocked.done()
    tx.commit()
    assert blocked.result(5) == 1
    writer.commit()


def test_a_deadlock_rolls_back_its_victim_and_the_other_goes_on(db: rivulet.Database) -> None:
    first, second = db.transaction(), db.transaction()
    first.execute("UPDATE counter SET n = 10 WHERE id = 1")
    second.execute("UPDATE counter SET n = 20 WHERE id = 2")
    waiting = in_thread(first.execute, "UPDATE counter SET n = 11 WHERE id = 2")
    time.sleep(0.2)
    with pytest.raises(DeadlockError):  # second is younger: the victim
        second.execute("UPDATE counter SET n = 21 WHERE id = 1")
    assert not second.active
    assert waiting.result(5) == 1
    first.commit()
    db.settle()
    assert db.query("SELECT id, n FROM counter ORDER BY id") == [(1, 10), (2, 11)]


def test_a_lock_wait_times_out_and_the_transaction_goes_on(db: rivulet.Database) -> None:
    holder, waiter = db.transaction(), db.transaction()
    holder.execute("UPDATE counter SET n = 1 WHERE id = 1")
    waiter.lock_timeout = 0.2
    waiter.execute("UPDATE counter SET n = 2 WHERE id = 2")
    with pytest.raises(LockWaitTimeoutError):
        waiter.query("SELECT n FROM counter WHERE id = 1 FOR UPDATE")
    with pytest.raises(LockNowaitError):
        waiter.query("SELECT n FROM counter WHERE id = 1 FOR UPDATE NOWAIT")
    assert waiter.active
    waiter.commit()
    holder.commit()
    db.settle()
    assert db.query("SELECT id, n FROM counter ORDER BY id") == [(1, 1), (2, 2)]


def test_a_write_naming_no_key_locks_the_rows_it_matches(db: rivulet.Database) -> None:
    tx = db.transaction()
    assert tx.execute("UPDATE counter SET n = n + 1 WHERE n = 0") == 2
    assert db.locks.held(tx.owner) == {
        ("t", "counter"): {IX}, ("r", "counter", (1,)): {X}, ("r", "counter", (2,)): {X}}
    tx.execute("INSERT INTO log VALUES ('x')")  # a table without a key: its intention only
    assert db.locks.held(tx.owner)[("t", "log")] == {IX}
    tx.rollback()
    assert not db.locks.active


def test_outside_a_transaction_a_locking_read_is_a_plain_read(db: rivulet.Database) -> None:
    assert db.query("SELECT n FROM counter WHERE id = 1 FOR UPDATE") == [(0,)]
    assert db.execute("SELECT n FROM counter WHERE id = 2 LOCK IN SHARE MODE") == [(0,)]
    assert not db.locks.active


def test_read_modify_write_under_for_update_loses_no_increment(db: rivulet.Database) -> None:
    def increments() -> None:
        for _ in range(40):
            with db.transaction() as tx:
                (n,), = tx.query("SELECT n FROM counter WHERE id = 1 FOR UPDATE")
                tx.execute("UPDATE counter SET n = ? WHERE id = 1", (n + 1,))

    threads = [threading.Thread(target=increments) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    db.settle()
    assert db.query("SELECT n FROM counter WHERE id = 1") == [(320,)]


# ......................................................................... over MySQL


def connect(server: ServerThread, **kwargs: Any) -> pymysql.Connection:
    return pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database="rivulet", **kwargs)


def one(conn: pymysql.Connection, sql: str, *params: Any) -> Any:
    with conn.cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchone()
        return None if found is None else found[0]


CONNECTIONS = 16
ROUNDS = 25


def test_sixteen_connections_incrementing_one_counter_lose_nothing(
        server: ServerThread, db: rivulet.Database) -> None:
    """Each connection: BEGIN; SELECT n ... FOR UPDATE; UPDATE with n + 1 computed by the
    client; COMMIT, many times: the final count is exact."""
    errors: list[BaseException] = []

    def increments(k: int) -> None:
        conn = connect(server)
        try:
            with conn.cursor() as cursor:
                for _ in range(ROUNDS):
                    cursor.execute("BEGIN")
                    cursor.execute("SELECT n FROM counter WHERE id = 1 FOR UPDATE")
                    (n,) = cursor.fetchone()
                    cursor.execute("UPDATE counter SET n = %s WHERE id = 1", (n + 1,))
                    cursor.execute("COMMIT")
        except BaseException as exc:
            errors.append(exc)
        finally:
            conn.close()

    started = time.monotonic()
    threads = [threading.Thread(target=increments, args=(k,)) for k in range(CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    db.settle()
    assert db.query("SELECT n FROM counter WHERE id = 1") == [(CONNECTIONS * ROUNDS,)]
    assert time.monotonic() - started < 60


def test_over_mysql_a_deadlock_answers_1213_and_rolls_back(
        server: ServerThread, db: rivulet.Database) -> None:
    first, second = connect(server), connect(server)
    one(first, "SELECT n FROM counter WHERE id = 1 FOR UPDATE")  # autocommit off: begins
    one(second, "SELECT n FROM counter WHERE id = 2 FOR UPDATE")
    waiting = in_thread(one, first, "SELECT n FROM counter WHERE id = 2 FOR UPDATE")
    time.sleep(0.2)
    with pytest.raises(pymysql.err.OperationalError) as failed:
        one(second, "UPDATE counter SET n = 9 WHERE id = 1")
    assert failed.value.args[0] == 1213
    second.ping()
    assert second.server_status & 0x0001 == 0  # rolled back
    assert waiting.result(5) == 0
    first.commit()


def test_a_locking_read_with_a_limit_locks_only_the_rows_of_its_keys(
        db: rivulet.Database) -> None:
    """Django's ``select_for_update().get(id=...)`` writes ``LIMIT 21``: the rows of that
    key are locked, not the table (two transactions lock two rows at once)."""
    first, second = db.transaction(), db.transaction()
    sql = "SELECT id, n FROM counter WHERE id = ? LIMIT 21 FOR UPDATE"
    assert first.query(sql, [1]) == [(1, 0)]
    second.lock_timeout = 0.5
    assert second.query(sql, [2]) == [(2, 0)]  # (a table lock would time out here)
    assert ("t", "counter") not in {r for r in db.locks.held(first.owner)
                                    if db.locks.held(first.owner)[r] & {"X", "S"}}
    first.rollback()
    second.rollback()


def test_a_locking_read_of_a_constant_in_list_locks_only_the_rows_it_lists(
        db: rivulet.Database) -> None:
    """``WHERE id IN (1, 3) FOR UPDATE`` (constants: Django's ``filter(id__in=[...])``)
    locks rows 1 and 3, not the table: another transaction locks row 2 meanwhile, and
    waits for row 1; a NULL in the list matches and locks nothing."""
    db.execute("INSERT INTO counter VALUES (3, 0)")
    first, second = db.transaction(), db.transaction()
    assert sorted(first.query("SELECT id FROM counter WHERE id IN (1, 3, NULL) FOR UPDATE")) \
        == [(1,), (3,)]
    held = db.locks.held(first.owner)
    assert held == {("t", "counter"): {IX}, ("r", "counter", (1,)): {X},
                    ("r", "counter", (3,)): {X}}
    second.lock_timeout = 0.3
    assert second.query("SELECT n FROM counter WHERE id IN (2) FOR UPDATE") == [(0,)]
    with pytest.raises(LockWaitTimeoutError):
        second.query("SELECT n FROM counter WHERE id IN (2, 1) FOR UPDATE")
    first.rollback()
    second.rollback()


def test_over_mysql_the_older_transaction_closing_a_deadlock_is_its_victim(
        server: ServerThread, db: rivulet.Database) -> None:
    """Django's test_implicit_savepoint_rollback, as MariaDB answers it: the connection
    whose statement closes the cycle gets 1213, though its transaction began first."""
    older, younger = connect(server), connect(server)
    one(older, "SELECT n FROM counter WHERE id = 1 FOR UPDATE")
    one(younger, "SELECT n FROM counter WHERE id = 2 FOR UPDATE")
    waiting = in_thread(one, younger, "UPDATE counter SET n = 5 WHERE id = 1")
    time.sleep(0.2)
    with pytest.raises(pymysql.err.OperationalError) as failed:
        one(older, "UPDATE counter SET n = 6 WHERE id = 2")
    assert failed.value.args[0] == 1213
    assert waiting.result(5) is None  # (the UPDATE went on once older's locks were gone)
    younger.commit()
    db.settle()
    assert db.query("SELECT n FROM counter WHERE id = 1") == [(5,)]


def test_over_mysql_a_lock_wait_times_out_with_1205_after_the_sessions_timeout(
        server: ServerThread, db: rivulet.Database) -> None:
    holder, waiter = connect(server), connect(server)
    assert one(waiter, "SELECT @@innodb_lock_wait_timeout") == 50
    one(waiter, "SET innodb_lock_wait_timeout = 1")
    one(holder, "UPDATE counter SET n = 1 WHERE id = 1")
    one(waiter, "UPDATE counter SET n = 2 WHERE id = 2")
    started = time.monotonic()
    with pytest.raises(pymysql.err.OperationalError) as failed:
        one(waiter, "SELECT n FROM counter WHERE id = 1 FOR SHARE")
    assert failed.value.args[0] == 1205 and 0.9 < time.monotonic() - started < 5
    with pytest.raises(pymysql.err.OperationalError) as failed:
        one(waiter, "SELECT n FROM counter WHERE id = 1 FOR UPDATE NOWAIT")
    assert failed.value.args[0] == 3572
    waiter.commit()  # the transaction stayed open: its write commits
    holder.rollback()
    db.settle()
    assert db.query("SELECT id, n FROM counter ORDER BY id") == [(1, 0), (2, 2)]


def test_over_mysql_prepared_locking_reads_and_autocommit_ones(
        server: ServerThread, db: rivulet.Database) -> None:
    import mysql.connector

    auto = connect(server, autocommit=True)
    assert one(auto, "SELECT n FROM counter WHERE id = 1 FOR UPDATE") == 0  # a plain read
    assert not db.locks.active
    conn = mysql.connector.connect(host="127.0.0.1", port=server.port, user="root",
                                   password="", database="rivulet")
    cursor = conn.cursor(prepared=True)
    conn.start_transaction()
    cursor.execute("SELECT n FROM counter WHERE id = ? FOR UPDATE", (2,))
    assert cursor.fetchall() == [(0,)]
    assert db.locks.table_busy("counter")  # held until COMMIT
    cursor.execute("UPDATE counter SET n = ? WHERE id = ?", (7, 2))
    conn.commit()
    conn.close()
    assert not db.locks.active
    db.settle()
    assert db.query("SELECT n FROM counter WHERE id = 2") == [(7,)]
