"""Transactions over the MySQL protocol, with real drivers: BEGIN / COMMIT / ROLLBACK,
autocommit off, savepoints, READ ONLY, the server status flags drivers read, a connection
closed in a transaction, and the same script of statements run against MariaDB (InnoDB at
READ COMMITTED) answering the same (docs/transactions.md)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mysql.connector
import pymysql
import pytest
import sqlalchemy as sa

import rivulet
from rivulet.server.mysql.server import ServerThread

#: The server status bits of a transaction: SERVER_STATUS_IN_TRANS, _AUTOCOMMIT and
#: _IN_TRANS_READONLY.
IN_TRANS, AUTOCOMMIT, READ_ONLY = 0x0001, 0x0002, 0x2000
TRANSACTION_BITS = IN_TRANS | AUTOCOMMIT | READ_ONLY


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path / "db")
    database.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT)")
    database.execute("CREATE VIEW by_id AS SELECT id, n FROM t WHERE id = ?")
    yield database
    database.close()


def connect(server: ServerThread, **kwargs: Any) -> pymysql.Connection:
    return pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database="rivulet", **kwargs)


def rows(conn: Any, sql: str, params: Any = None) -> list[tuple]:
    with conn.cursor() as cursor:
        cursor.execute(sql, params)
        return [tuple(r) for r in cursor.fetchall()]


# ......................................................................... the same as MariaDB

#: Two connections' statements, in order: each must succeed or fail (with the same error
#: code) on both servers, leave the same transaction status bits, and read the same rows.
#: (No two transactions write the same row at once: InnoDB would make the second wait.)
SCRIPT = [
    ("a", "SET autocommit = 0"),
    ("a", "SELECT id, n FROM t ORDER BY id"),
    ("a", "INSERT INTO t VALUES (1, 10)"),
    ("a", "SELECT id, n FROM t ORDER BY id"),
    ("b", "SELECT id, n FROM t ORDER BY id"),
    ("a", "SAVEPOINT s1"),
    ("a", "INSERT INTO t VALUES (2, 20)"),
    ("a", "INSERT INTO t VALUES (3, 30), (1, 0)"),
    ("a", "SELECT id, n FROM t ORDER BY id"),
    ("a", "SELECT id, n FROM by_id WHERE id = 2"),
    ("a", "ROLLBACK TO SAVEPOINT s1"),
    ("a", "SELECT id, n FROM t ORDER BY id"),
    ("a", "RELEASE SAVEPOINT s1"),
    ("a", "ROLLBACK TO s1"),
    ("a", "COMMIT"),
    ("b", "SELECT id, n FROM t ORDER BY id"),
    ("b", "BEGIN"),
    ("b", "UPDATE t SET n = n + 1 WHERE id = 1"),
    ("a", "SELECT id, n FROM t ORDER BY id"),
    ("b", "DELETE FROM t WHERE id = 1"),
    ("b", "SELECT id, n FROM t ORDER BY id"),
    ("b", "SELECT COUNT(*), SUM(n) FROM t"),
    ("b", "ROLLBACK"),
    ("b", "SELECT id, n FROM t ORDER BY id"),
    ("a", "INSERT INTO t VALUES (4, 40)"),
    ("a", "CREATE TABLE u (id INT PRIMARY KEY)"),
    ("a", "ROLLBACK"),
    ("b", "SELECT id, n FROM t ORDER BY id"),
    ("b", "START TRANSACTION READ ONLY"),
    ("b", "SELECT id, n FROM t WHERE id = 4"),
    ("b", "INSERT INTO t VALUES (5, 5)"),
    ("b", "COMMIT"),
    ("b", "SET TRANSACTION READ ONLY"),
    ("b", "BEGIN"),
    ("b", "COMMIT"),
    ("b", "BEGIN"),
    ("b", "INSERT INTO t VALUES (5, 50)"),
    ("b", "BEGIN"),
    ("b", "ROLLBACK"),
    ("a", "UPDATE t SET n = n * 2"),
    ("a", "SET autocommit = 1"),
    ("b", "SELECT id, n FROM t ORDER BY id"),
    ("a", "SAVEPOINT x"),
    ("a", "ROLLBACK TO x"),
    ("a", "BEGIN"),
    ("a", "INSERT INTO t VALUES (6, 60)"),
    ("a", "SET autocommit = 1"),
    ("a", "ROLLBACK"),
    ("b", "SELECT id, n FROM t ORDER BY id"),
    ("b", "SET SESSION TRANSACTION READ ONLY"),
    ("b", "BEGIN"),
    ("b", "DELETE FROM t"),
    ("b", "COMMIT"),
    ("b", "BEGIN"),
    ("b", "SET TRANSACTION READ WRITE"),
    ("b", "SET SESSION TRANSACTION READ WRITE"),
    ("b", "ROLLBACK"),
    ("b", "START TRANSACTION READ WRITE"),
    ("b", "DELETE FROM t WHERE id = 6"),
    ("b", "COMMIT"),
]


def run(conns: dict[str, Any], settle: Any = None) -> list[tuple]:
    out = []
    for who, sql in SCRIPT:
        conn = conns[who]
        if settle is not None and sql.startswith("SELECT"):
            settle()  # (rivulet's views follow commits a moment later)
        try:
            with conn.cursor() as cursor:
                cursor.execute(sql)
                result: Any = [tuple(r) for r in cursor.fetchall()]
        except pymysql.MySQLError as exc:
            result = ("error", exc.args[0])
        out.append((who, sql, result, hex(conn.server_status & TRANSACTION_BITS)))
    return out


def test_a_script_of_transactions_answers_as_mariadb_does(
        server: ServerThread, db: rivulet.Database, mariadb_oracle: Any) -> None:
    first = mariadb_oracle.schema()
    name = first.db.decode()
    with first.cursor() as cursor:
        cursor.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT) ENGINE=InnoDB")
        cursor.execute("CREATE VIEW by_id AS SELECT id, n FROM t")
    maria = {"a": first, "b": mariadb_oracle.server.connect(name)}
    for conn in maria.values():
        with conn.cursor() as cursor:
            cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    ours = {"a": connect(server, autocommit=True), "b": connect(server, autocommit=True)}
    expected = run(maria)
    got = run(ours, settle=db.settle)
    for mine, theirs in zip(got, expected):
        assert mine == theirs
    assert any(step[2] == ("error", 1062) for step in got)  # the script does what it says
    assert any(step[3] == hex(TRANSACTION_BITS) for step in got)  # READ ONLY, autocommit on


# ......................................................................... drivers


def test_autocommit_off_holds_writes_until_commit(server: ServerThread,
                                                  db: rivulet.Database) -> None:
    writer = connect(server)  # PyMySQL's default: autocommit off
    reader = connect(server, autocommit=True)
    assert writer.get_autocommit() is False
    with writer.cursor() as cursor:
        cursor.execute("INSERT INTO t VALUES (1, 1), (2, 2)")
        cursor.execute("UPDATE t SET n = n + 10")
    assert rows(writer, "SELECT id, n FROM t ORDER BY id") == [(1, 11), (2, 12)]
    assert rows(writer, "SELECT id, n FROM by_id WHERE id = 2") == [(2, 12)]
    db.settle()
    assert rows(reader, "SELECT id, n FROM t ORDER BY id") == []
    writer.commit()
    db.settle()
    assert rows(reader, "SELECT id, n FROM t ORDER BY id") == [(1, 11), (2, 12)]
    assert rows(reader, "SELECT id, n FROM by_id WHERE id = 1") == [(1, 11)]


def test_a_connection_closed_in_a_transaction_rolls_it_back(server: ServerThread,
                                                            db: rivulet.Database) -> None:
    lsn = db.lsn
    for leave in ("close", "kill"):
        conn = connect(server)
        with conn.cursor() as cursor:
            cursor.execute("BEGIN")
            cursor.execute("INSERT INTO t VALUES (7, 7)")
            cursor.execute("SELECT CONNECTION_ID()")
            ident = cursor.fetchone()[0]
        if leave == "close":
            conn.close()
        else:
            killer = connect(server, autocommit=True)
            with killer.cursor() as cursor:
                cursor.execute(f"KILL {ident}")
            killer.close()
    deadline = time.monotonic() + 5
    while server.server.control and time.monotonic() < deadline:
        time.sleep(0.01)
    other = connect(server, autocommit=True)
    db.settle()
    assert rows(other, "SELECT id FROM t") == []
    assert db.lsn == lsn  # nothing of either was ever stored


def test_prepared_statements_in_a_transaction(server: ServerThread,
                                              db: rivulet.Database) -> None:
    conn = mysql.connector.connect(host="127.0.0.1", port=server.port, user="root",
                                   password="", database="rivulet", use_pure=True)
    cursor = conn.cursor(prepared=True)
    conn.start_transaction()
    assert conn.in_transaction
    cursor.execute("INSERT INTO t VALUES (?, ?)", (1, 5))
    cursor.execute("UPDATE t SET n = n + ? WHERE id = ?", (1, 1))
    cursor.execute("SELECT id, n FROM by_id WHERE id = ?", (1,))
    assert cursor.fetchall() == [(1, 6)]
    conn.rollback()
    assert not conn.in_transaction
    cursor.execute("SELECT id, n FROM t WHERE id = ?", (1,))
    assert cursor.fetchall() == []
    conn.start_transaction()
    cursor.execute("INSERT INTO t VALUES (?, ?)", (2, 7))
    conn.commit()
    db.settle()
    cursor.execute("SELECT id, n FROM t WHERE id = ?", (2,))
    assert cursor.fetchall() == [(2, 7)]
    conn.close()


def test_an_autocommit_write_waits_for_the_transaction_that_wrote_the_row(
        server: ServerThread, db: rivulet.Database) -> None:
    db.execute("INSERT INTO t VALUES (1, 0)")
    first, second = connect(server), connect(server, autocommit=True)
    with first.cursor() as cursor:
        cursor.execute("UPDATE t SET n = n + 1 WHERE id = 1")
    waiting = threading.Thread(target=rows, args=(second, "UPDATE t SET n = n + 100 WHERE id = 1"))
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive()  # on the row's lock, as in InnoDB
    first.commit()
    waiting.join(10)
    db.settle()
    assert rows(first, "SELECT n FROM t WHERE id = 1") == [(101,)]


def test_statements_by_key_in_transactions_wait_for_locks_and_fail_alone(
        server: ServerThread, db: rivulet.Database) -> None:
    """Writes by key and locking reads by primary key run on the server's event loop (the
    fast path): one that must wait for a row's lock answers once the other transaction
    commits, on the row that commit left; a duplicate key fails that statement alone and
    the transaction commits what it wrote before."""
    db.execute("INSERT INTO t VALUES (1, 0), (2, 0)")
    first, second = connect(server), connect(server)
    assert rows(first, "SELECT n FROM t WHERE id = 1 FOR UPDATE") == [(0,)]
    rows(first, "UPDATE t SET n = n + 1 WHERE id = 1")
    outcome: dict[str, Any] = {}

    def update_then_read() -> None:
        rows(second, "UPDATE t SET n = n + 10 WHERE id = 1")
        outcome["read"] = rows(second, "SELECT n FROM t WHERE id = 1 FOR SHARE")

    waiting = threading.Thread(target=update_then_read)
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive()  # on the row's lock, as in InnoDB
    rows(first, "INSERT INTO t VALUES (3, 3)")
    with pytest.raises(pymysql.err.IntegrityError) as duplicate:
        rows(first, "INSERT INTO t VALUES (2, 9)")
    assert duplicate.value.args[0] == 1062
    first.commit()
    waiting.join(10)
    assert outcome["read"] == [(11,)]
    second.commit()
    db.settle()
    assert rows(first, "SELECT id, n FROM t ORDER BY id") == [(1, 11), (2, 0), (3, 3)]


def test_a_lost_update_fails_the_commit_with_mysqls_deadlock_code(
        server: ServerThread, db: rivulet.Database) -> None:
    """An autocommit write that reached the group commit without waiting for the row's
    lock (one on its way when the transaction took it) fails the transaction's COMMIT."""
    db.execute("INSERT INTO t VALUES (1, 0)")
    first = connect(server)
    with first.cursor() as cursor:
        cursor.execute("UPDATE t SET n = n + 1 WHERE id = 1")
    request = db.write_request("UPDATE t SET n = n + 100 WHERE id = 1")
    assert request is not None
    db.submit_many([request])  # (past the locks)
    with pytest.raises(pymysql.err.OperationalError) as failed:
        first.commit()
    assert failed.value.args[0] == 1213
    db.settle()
    assert rows(first, "SELECT n FROM t WHERE id = 1") == [(100,)]
    first.ping()  # (PyMySQL reads the status of OK packets only)
    assert first.server_status & IN_TRANS == 0  # the transaction was rolled back


def test_isolation_levels_other_than_read_committed_are_refused(
        server: ServerThread) -> None:
    conn = connect(server, autocommit=True)
    for level in ("REPEATABLE READ", "SERIALIZABLE", "READ UNCOMMITTED"):
        with pytest.raises(pymysql.err.MySQLError, match="READ COMMITTED only") as refused:
            rows(conn, f"SET SESSION TRANSACTION ISOLATION LEVEL {level}")
        assert refused.value.args[0] == 1231
    with pytest.raises(pymysql.err.MySQLError, match="READ COMMITTED only"):
        rows(conn, "SET transaction_isolation = 'REPEATABLE-READ'")
    rows(conn, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
    assert rows(conn, "SELECT @@transaction_isolation") == [("READ-COMMITTED",)]


def test_sqlalchemy_session_rollback_after_a_failed_flush(server: ServerThread,
                                                          db: rivulet.Database) -> None:
    engine = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:{server.port}/rivulet")
    table = sa.Table("t", sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True),
                     sa.Column("n", sa.Integer))
    with pytest.raises(sa.exc.IntegrityError, match="1062"), engine.begin() as conn:
        conn.execute(table.insert(), [{"id": 1, "n": 1}, {"id": 2, "n": 2}])
        conn.execute(table.insert(), [{"id": 3, "n": 3}, {"id": 1, "n": 9}])
    with engine.begin() as conn:
        conn.execute(table.insert(), [{"id": 4, "n": 4}])
    db.settle()
    with engine.connect() as conn:
        assert conn.execute(sa.select(table.c.id)).all() == [(4,)]
    engine.dispose()


def test_a_transactions_reads_are_answered_without_filling_the_reply_caches(
        server: ServerThread) -> None:
    """Rows a transaction computes for a read (a locking read; a read of a table it
    wrote) are new tuples each time: encoded for their own reply, never kept in the reply
    caches, which they would fill for nothing (and empty, for the readers whose rows are
    reused); the answers are the rows as the transaction wrote them."""
    conn = connect(server, autocommit=True)
    with conn.cursor() as cursor:
        cursor.executemany("INSERT INTO t VALUES (%s, %s)", [(i, i * 10) for i in range(1, 21)])
    replies = server.server.cache.replies
    before = (replies.used, replies.drops)
    written = {i: i * 10 for i in range(1, 21)}
    for n in range(30):
        a, b = 1 + n % 20, 1 + (n * 7 + 3) % 20
        conn.begin()
        assert sorted(rows(conn, "SELECT id, n FROM t WHERE id IN (%s, %s) FOR UPDATE",
                           (a, b))) == sorted({(a, written[a]), (b, written[b])})
        with conn.cursor() as cursor:
            cursor.execute("UPDATE t SET n = n + %s WHERE id = %s", (n + 1, a))
        written[a] += n + 1
        assert rows(conn, "SELECT id, n FROM t WHERE id = %s", (a,)) == [(a, written[a])]
        conn.commit()
    assert (replies.used, replies.drops) == before
    assert sorted(rows(conn, "SELECT id, n FROM t")) == sorted(written.items())
