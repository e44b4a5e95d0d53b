"""The PEP 249 connection: code written for sqlite3 runs against rivulet unchanged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import rivulet
from rivulet import dbapi


def exercise(conn, sql_create: list[str]) -> list:
    """The same sqlite3-style code, run against any DB-API connection."""
    cur = conn.cursor()
    for sql in sql_create:
        cur.execute(sql)
    cur.executemany("INSERT INTO items (id, owner, price) VALUES (?, ?, ?)",
                    [(1, "ann", 10), (2, "bob", 20), (3, "ann", 30)])
    conn.commit()
    cur.execute("UPDATE items SET price = price + 1 WHERE owner = ?", ("ann",))
    updated = cur.rowcount
    cur.execute("DELETE FROM items WHERE id = ?", (2,))
    cur.execute("SELECT owner, SUM(price) FROM items WHERE owner = ? GROUP BY owner", ("ann",))
    first = cur.fetchone()
    cur.execute("SELECT id, price FROM items WHERE price > ? ORDER BY price", (0,))
    return [updated, first, cur.fetchall(), [d[0] for d in cur.description]]


def test_same_code_same_answers_as_sqlite3(tmp_path: Path) -> None:
    create = ["CREATE TABLE items (id INT PRIMARY KEY, owner VARCHAR(10), price INT)"]
    expected = exercise(sqlite3.connect(":memory:"), create)
    with rivulet.connect(tmp_path) as conn:
        got = exercise(conn, create)
    assert got == expected


def test_module_globals_follow_pep_249() -> None:
    assert dbapi.apilevel == "2.0"
    assert dbapi.paramstyle == "qmark"
    assert issubclass(dbapi.IntegrityError, dbapi.DatabaseError)
    assert issubclass(dbapi.DatabaseError, dbapi.Error)


def test_errors_map_to_pep_249_classes(tmp_path: Path) -> None:
    with rivulet.connect(tmp_path) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(3) NOT NULL)")
        cur.execute("INSERT INTO t VALUES (1, 'a')")
        with pytest.raises(dbapi.IntegrityError, match="duplicate primary key"):
            cur.execute("INSERT INTO t VALUES (1, 'b')")
        with pytest.raises(dbapi.DataError, match="too long"):
            cur.execute("INSERT INTO t VALUES (2, 'abcd')")
        with pytest.raises(dbapi.ProgrammingError, match="unknown column"):
            cur.execute("SELECT nope FROM t")
        with pytest.raises(dbapi.NotSupportedError, match="RIGHT JOIN"):
            cur.execute("SELECT * FROM t RIGHT JOIN t AS u ON t.id = u.id")
        cur.execute("SELECT id, name FROM t WHERE id = ?", (1,))
        assert cur.fetchall() == [(1, "a")]


def test_reads_see_the_connections_own_writes_without_settle(tmp_path: Path) -> None:
    with rivulet.connect(tmp_path) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT)")
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchone() == (0,)
        for i in range(50):
            cur.execute("INSERT INTO t VALUES (?, ?)", (i, i))
            cur.execute("SELECT COUNT(*) FROM t")
            assert cur.fetchone() == (i + 1,)


def test_closed_connection_and_cursor_refuse_work(tmp_path: Path) -> None:
    conn = rivulet.connect(tmp_path)
    cur = conn.cursor()
    cur.close()
    with pytest.raises(dbapi.InterfaceError):
        cur.execute("SELECT 1")
    conn.close()
    with pytest.raises(dbapi.InterfaceError):
        conn.cursor()
    with pytest.raises(dbapi.InterfaceError):
        conn.rollback()
    with pytest.raises(dbapi.InterfaceError):
        conn.commit()


def test_description_names_kinds_and_nullability(tmp_path: Path) -> None:
    with rivulet.connect(tmp_path) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(9), price DOUBLE NOT NULL)")
        cur.execute("SELECT id, name, price, COUNT(*) AS n FROM t GROUP BY id")
        assert [(d[0], d[1], d[6]) for d in cur.description] == [
            ("id", "int", False), ("name", "str", True), ("price", "float", False),
            ("n", "int", False),
        ]


def test_writes_wait_for_commit_and_rollback_forgets_them(tmp_path: Path) -> None:
    with rivulet.connect(tmp_path) as conn:
        assert conn.autocommit is False  # PEP 249: autocommit is initially off
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT)")
        cur.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
        assert conn.in_transaction
        conn.commit()
        assert not conn.in_transaction
        cur.execute("UPDATE t SET n = n + 1")
        cur.execute("DELETE FROM t WHERE id = 2")
        cur.execute("SELECT id, n FROM t")
        assert cur.fetchall() == [(1, 11)]  # its own writes, before COMMIT
        conn.db.settle()
        assert conn.db.query("SELECT id, n FROM t ORDER BY id") == [(1, 10), (2, 20)]
        conn.rollback()
        cur.execute("SELECT id, n FROM t ORDER BY id")
        assert cur.fetchall() == [(1, 10), (2, 20)]
        cur.execute("INSERT INTO t VALUES (3, 30)")  # committed by leaving the block


def test_closing_with_an_open_transaction_rolls_it_back(tmp_path: Path) -> None:
    conn = rivulet.connect(tmp_path)
    conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    conn.execute("INSERT INTO t VALUES (2)")
    conn.close()
    with pytest.raises(RuntimeError), rivulet.connect(tmp_path) as conn:
        conn.execute("INSERT INTO t VALUES (3)")
        raise RuntimeError("the block fails: its transaction is rolled back")
    with rivulet.connect(tmp_path, autocommit=True) as conn:
        assert conn.execute("SELECT id FROM t").fetchall() == [(1,)]


def test_autocommit_writes_commit_each_and_turning_it_on_commits(tmp_path: Path) -> None:
    with rivulet.connect(tmp_path, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES (1)")
        assert not conn.in_transaction
        conn.rollback()  # nothing to undo
        conn.autocommit = False
        conn.execute("INSERT INTO t VALUES (2)")
        conn.autocommit = True  # commits the open transaction, as sqlite3 does
        conn.execute("BEGIN")  # an explicit transaction, autocommit or not
        conn.execute("INSERT INTO t VALUES (3)")
        conn.execute("SAVEPOINT a")
        conn.execute("INSERT INTO t VALUES (4)")
        conn.execute("ROLLBACK TO SAVEPOINT a")
        conn.execute("COMMIT")
        with pytest.raises(dbapi.ProgrammingError, match="SAVEPOINT a does not exist"):
            conn.execute("ROLLBACK TO a")
    with rivulet.connect(tmp_path) as conn:
        assert sorted(conn.execute("SELECT id FROM t").fetchall()) == [(1,), (2,), (3,)]


def test_a_failed_statement_leaves_the_transaction_as_it_was(tmp_path: Path) -> None:
    with rivulet.connect(tmp_path) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(3) NOT NULL)")
        cur.execute("INSERT INTO t VALUES (1, 'a')")
        with pytest.raises(dbapi.IntegrityError, match="duplicate primary key"):
            cur.execute("INSERT INTO t VALUES (2, 'b'), (1, 'c')")
        with pytest.raises(dbapi.DataError, match="too long"):
            cur.execute("UPDATE t SET name = 'abcd'")
        cur.execute("SELECT id, name FROM t")
        assert cur.fetchall() == [(1, "a")]
        conn.commit()
        cur.execute("SELECT id, name FROM t")
        assert cur.fetchall() == [(1, "a")]
