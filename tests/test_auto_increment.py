"""AUTO_INCREMENT: an INSERT that gives the column NULL, 0 or no value gets the next number,
as MySQL numbers it, and clients learn the number (``last_insert_id``, the OK packet)."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rivulet
from rivulet.errors import RivuletError, SchemaError, SqlError
from rivulet.server.mysql.server import ServerThread

TABLE = "CREATE TABLE posts (id INT PRIMARY KEY AUTO_INCREMENT, title VARCHAR(40), n INT)"
VIEW = "CREATE VIEW AllPosts AS SELECT id, title, n FROM posts"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path / "db")
    database.execute(TABLE)
    database.execute(VIEW)
    yield database
    database.close()


def rows(db: rivulet.Database) -> list[tuple]:
    db.settle()
    return sorted(db.view("AllPosts").lookup())


def test_rows_without_a_value_are_numbered_in_order(db: rivulet.Database) -> None:
    assert db.execute("INSERT INTO posts (title, n) VALUES ('a', 1)") == 1
    assert db.last_insert_id == 1
    db.execute("INSERT INTO posts (title, n) VALUES ('b', 2), ('c', 3)")
    assert db.last_insert_id == 2  # the first of the statement, as MySQL reports it
    db.execute("INSERT INTO posts (id, title) VALUES (10, 'given')")
    assert db.last_insert_id == 10
    db.execute("INSERT INTO posts VALUES (NULL, 'null', 4), (0, 'zero', 5)")
    assert db.last_insert_id == 11
    db.execute("DELETE FROM posts WHERE id = 12")
    db.table("posts").insert({"title": "dict"})  # not reused: 12 was handed out
    assert db.last_insert_id == 13
    assert rows(db) == [(1, "a", 1), (2, "b", 2), (3, "c", 3), (10, "given", None),
                        (11, "null", 4), (13, "dict", None)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.just("insert"), st.lists(st.one_of(st.none(), st.integers(1, 12)),
                                          min_size=1, max_size=3)),
    st.tuples(st.just("delete"), st.integers(1, 20)),
), max_size=25))
def test_numbering_follows_mysql(ops: list[tuple[str, Any]]) -> None:
    """Random inserts (each row NULL or a given id; a clash rejects the statement whole)
    and deletes against a model of MySQL's rule: a NULL row gets one above the largest id
    stored or handed out before (by an insert that committed); a given id above that
    raises it."""
    stored: dict[int, int] = {}
    counter = 0
    with tempfile.TemporaryDirectory() as directory, rivulet.open(directory) as db:
        db.execute(TABLE)
        db.execute(VIEW)
        for step, (kind, arg) in enumerate(ops):
            if kind == "delete":
                db.execute("DELETE FROM posts WHERE id = ?", [arg])
                stored.pop(arg, None)
                continue
            expected, first, high = {}, 0, max([counter, *stored])
            for value in arg:
                if value is None:
                    high += 1
                    value, first = high, first or high
                high = max(high, value)
                expected[value] = expected.get(value, 0) + 1
            clash = any(n > 1 or v in stored for v, n in expected.items())
            sql = "INSERT INTO posts (id, n) VALUES " + ", ".join(["(?, ?)"] * len(arg))
            params = [p for value in arg for p in (value, step)]
            if clash:  # rejected whole: its numbers are handed out again
                with pytest.raises(RivuletError):
                    db.execute(sql, params)
                continue
            db.execute(sql, params)
            counter = high
            stored.update((v, step) for v in expected)
            assert db.last_insert_id == (first or [v for v in arg if v][-1])
        assert rows(db) == sorted((v, None, n) for v, n in stored.items())


def test_numbers_continue_above_rows_that_came_by_every_path(db: rivulet.Database) -> None:
    """Numbering keeps the largest stored value in memory (no SELECT MAX per insert): rows
    given explicit ids by a bulk insert, an autocommit insert and a transaction, and a
    table altered in between, each move the next number above them."""
    def numbered() -> int:
        with db.transaction() as tx:
            tx.execute("INSERT INTO posts (title) VALUES ('t')")
        return tx.last_insert_id

    assert numbered() == 1
    db.table("posts").insert_many([(50, "bulk", 0)])
    assert numbered() == 51
    db.execute("INSERT INTO posts (id, title) VALUES (70, 'given')")
    assert numbered() == 71
    with db.transaction() as tx:
        tx.execute("INSERT INTO posts (id, title) VALUES (90, 'in a transaction')")
    db.execute("INSERT INTO posts (title) VALUES ('autocommit')")
    assert db.last_insert_id == 91
    db.execute("ALTER TABLE posts ADD COLUMN extra INT")
    db.table("posts").insert_many([(120, "after alter", 0, None)])
    assert numbered() == 121
    assert [r[0] for r in rows(db)] == [1, 50, 51, 70, 71, 90, 91, 120, 121]


def test_numbers_are_unique_across_writers_and_continue_after_reopen(tmp_path: Path) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        db.execute(VIEW)
        seen: list[int] = []
        lock = threading.Lock()

        def writer(name: str) -> None:
            for i in range(50):
                db.execute("INSERT INTO posts (title, n) VALUES (?, ?)", [name, i])
                with lock:
                    seen.append(db.last_insert_id)  # this thread's own insert

        threads = [threading.Thread(target=writer, args=(f"w{k}",)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(seen) == list(range(1, 201))
        assert [r[0] for r in rows(db)] == list(range(1, 201))
    with rivulet.open(tmp_path / "db") as db:
        db.execute("INSERT INTO posts (title) VALUES ('after reopening')")
        assert db.last_insert_id == 201


def test_mysql_clients_get_the_number(db: rivulet.Database) -> None:
    server = ServerThread(db, port=0)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                               database="rivulet", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("INSERT INTO posts (title) VALUES ('over the wire')")
            assert cursor.lastrowid == 1
            cursor.execute("INSERT INTO posts (title) VALUES (%s), (%s)", ("x", "y"))
            assert cursor.lastrowid == 2
            cursor.execute("INSERT INTO posts (title, n) VALUES ('again', 1)")
            assert cursor.lastrowid == 4
        conn.close()
    finally:
        server.stop()
    assert [r[:2] for r in rows(db)] == [(1, "over the wire"), (2, "x"), (3, "y"), (4, "again")]


def test_dbapi_cursors_get_the_number(tmp_path: Path) -> None:
    from rivulet import dbapi

    conn = dbapi.connect(str(tmp_path / "db"))
    cursor = conn.cursor()
    cursor.execute(TABLE)
    cursor.execute("INSERT INTO posts (title) VALUES (?)", ["first"])
    assert cursor.lastrowid == 1
    conn.close()


@pytest.mark.parametrize("sql,message", [
    ("CREATE TABLE a (id INT PRIMARY KEY, n INT AUTO_INCREMENT)", "must be part of the primary"),
    ("CREATE TABLE b (id VARCHAR(5) PRIMARY KEY AUTO_INCREMENT)", "must be an integer"),
    ("CREATE TABLE c (id INT AUTO_INCREMENT, k INT AUTO_INCREMENT, PRIMARY KEY (id, k))",
     "more than one AUTO_INCREMENT"),
    ("ALTER TABLE posts ADD COLUMN m INT AUTO_INCREMENT", "AUTO_INCREMENT"),
    ("ALTER TABLE posts MODIFY n INT AUTO_INCREMENT", "must be part of the primary"),
])
def test_declarations_rivulet_cannot_honour_are_refused(db: rivulet.Database, sql: str,
                                                        message: str) -> None:
    with pytest.raises(SqlError, match=message):
        db.execute(sql)


def test_a_number_out_of_the_columns_range_rejects_the_insert(db: rivulet.Database) -> None:
    db.execute("CREATE TABLE tiny (id TINYINT PRIMARY KEY AUTO_INCREMENT, x INT)")
    db.execute("CREATE VIEW TinyRows AS SELECT id, x FROM tiny")
    db.execute("INSERT INTO tiny VALUES (126, 0)")
    with pytest.raises(SchemaError, match="out of range for TINYINT"):
        db.execute("INSERT INTO tiny (x) VALUES (1), (2)")  # 127 fits, 128 does not
    db.execute("INSERT INTO tiny (x) VALUES (3)")
    db.settle()
    assert sorted(db.view("TinyRows").lookup()) == [(126, 0), (127, 3)]
