"""UNIQUE keys are enforced: a write that would store two rows with the same non-NULL value
of a UNIQUE key is rejected whole (MySQL's error 1062), exactly when SQLite, holding the same
rows under the same keys, rejects it."""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rivulet
from rivulet.errors import ConstraintError, RivuletError, SqlError
from rivulet.server.mysql.server import ServerThread
from rivulet.server.mysql.session import create_table_sql, describe

TABLE = ("CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(20) UNIQUE, a INT, b INT, "
         "UNIQUE KEY pair (a, b))")
VIEW = "CREATE VIEW AllUsers AS SELECT id, email, a, b FROM users"
ORACLE = ("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE, a INT, b INT, "
          "UNIQUE (a, b))")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path / "db")
    database.execute(TABLE)
    database.execute(VIEW)
    yield database
    database.close()


def contents(db: rivulet.Database) -> list[tuple]:
    db.settle()
    return sorted(db.view("AllUsers").lookup())


values = st.one_of(st.none(), st.integers(0, 3))
emails = st.one_of(st.none(), st.sampled_from(["a@x", "b@x", "c@x"]))
rows = st.tuples(st.integers(0, 8), emails, values, values)
statements = st.one_of(
    st.tuples(st.just("INSERT INTO users VALUES " + "(?, ?, ?, ?)"), rows.map(list)),
    st.tuples(st.just("INSERT INTO users VALUES (?, ?, ?, ?), (?, ?, ?, ?)"),
              st.tuples(rows, rows).map(lambda pair: [*pair[0], *pair[1]])),
    st.tuples(st.just("UPDATE users SET email = ? WHERE id = ?"),
              st.tuples(emails, st.integers(0, 8)).map(list)),
    st.tuples(st.just("UPDATE users SET a = ?, b = ? WHERE id = ?"),
              st.tuples(values, values, st.integers(0, 8)).map(list)),
    st.tuples(st.just("DELETE FROM users WHERE id = ?"), st.integers(0, 8).map(lambda i: [i])),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(statements, max_size=20))
def test_writes_are_accepted_exactly_when_sqlite_accepts_them(
        program: list[tuple[str, list[Any]]]) -> None:
    lite = sqlite3.connect(":memory:", isolation_level=None)
    lite.execute(ORACLE)
    with tempfile.TemporaryDirectory() as directory, rivulet.open(directory) as db:
        db.execute(TABLE)
        db.execute(VIEW)
        for sql, params in program:
            try:
                lite.execute(sql, params)
                accepted = True
            except sqlite3.IntegrityError:
                accepted = False
            if accepted:
                db.execute(sql, params)
            else:
                with pytest.raises(ConstraintError):
                    db.execute(sql, params)
        assert contents(db) == sorted(lite.execute("SELECT * FROM users").fetchall())


def test_the_error_names_the_key_and_the_value(db: rivulet.Database) -> None:
    db.execute("INSERT INTO users VALUES (1, 'a@x', 1, 1)")
    with pytest.raises(ConstraintError, match=r"UNIQUE key \(email\) = \('a@x'\)"):
        db.execute("INSERT INTO users VALUES (2, 'b@x', 2, 2), (3, 'a@x', 3, 3)")
    with pytest.raises(ConstraintError, match=r"UNIQUE key \(a, b\) = \(1, 1\)"):
        db.execute("INSERT INTO users VALUES (4, 'd@x', 1, 1)")
    with pytest.raises(ConstraintError, match=r"primary key \(id\) = \(1\)"):
        db.execute("INSERT INTO users VALUES (1, 'e@x', 5, 5)")
    assert contents(db) == [(1, "a@x", 1, 1)]  # nothing of the rejected batches


def test_mysql_clients_get_error_1062(db: rivulet.Database) -> None:
    server = ServerThread(db, port=0)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                               database="rivulet", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("INSERT INTO users VALUES (1, 'a@x', 1, 1)")
            with pytest.raises(pymysql.err.IntegrityError) as info:
                cursor.execute("INSERT INTO users VALUES (2, 'a@x', 2, 2)")
            assert info.value.args[0] == 1062
            cursor.execute("INSERT INTO users VALUES (2, 'b@x', 2, 2)")  # still usable
        conn.close()
    finally:
        server.stop()


def test_bulk_import_reports_the_rows_that_clash(db: rivulet.Database) -> None:
    db.execute("INSERT INTO users VALUES (1, 'a@x', 1, 1)")
    skipped: list[tuple[int, str]] = []
    db.bulk_insert("users", [[(2, "b@x", 2, 2), (3, "a@x", 3, 3), (4, "b@x", 4, 4)]],
                   duplicate=lambda position, row, reason: skipped.append((position, reason)))
    assert skipped == [
        (1, "duplicate value of UNIQUE key (email) = ('a@x'): already in the table"),
        (2, "duplicate value of UNIQUE key (email) = ('b@x'): given earlier in the import"),
    ]
    assert contents(db) == [(1, "a@x", 1, 1), (2, "b@x", 2, 2)]


def test_keys_follow_renames_and_block_what_would_lose_them(db: rivulet.Database) -> None:
    db.execute("ALTER TABLE users RENAME COLUMN email TO mail")
    db.execute("INSERT INTO users VALUES (1, 'a@x', 1, 1)")
    with pytest.raises(ConstraintError, match=r"\(mail\)"):
        db.execute("INSERT INTO users VALUES (2, 'a@x', 2, 2)")
    for sql, message in [("ALTER TABLE users DROP COLUMN a", "in a UNIQUE key"),
                         ("ALTER TABLE users MODIFY mail INT", "in a UNIQUE key")]:
        with pytest.raises(SqlError, match=message):
            db.execute(sql)
    db.execute("ALTER TABLE users MODIFY mail VARCHAR(40)")  # keeps every value: allowed
    with pytest.raises(ConstraintError):
        db.execute("INSERT INTO users VALUES (3, 'a@x', 3, 3)")


def test_keys_are_shown_and_survive_reopening(tmp_path: Path) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        schema = db.catalog.require_table("users")
        text = create_table_sql(schema)
        assert "UNIQUE KEY `email` (`email`)" in text and "UNIQUE KEY `pair` (`a`,`b`)" in text
        keys = {row[0]: row[3] for row in describe(db.catalog, "users")[0]}
        assert keys == {"id": "PRI", "email": "UNI", "a": "MUL", "b": ""}
        db.execute("INSERT INTO users VALUES (1, 'a@x', 1, 1)")
    with rivulet.open(tmp_path / "db") as db:
        with pytest.raises(ConstraintError):
            db.execute("INSERT INTO users VALUES (2, 'a@x', 2, 2)")


@pytest.mark.parametrize("sql,message", [
    ("CREATE TABLE t (id INT PRIMARY KEY, UNIQUE KEY k (nope))",
     "Key column 'nope' doesn't exist"),
    ("CREATE TABLE t (id INT PRIMARY KEY, a INT, UNIQUE KEY k (a, a))", "twice"),
])
def test_bad_keys_are_refused(db: rivulet.Database, sql: str, message: str) -> None:
    with pytest.raises(RivuletError, match=message):
        db.execute(sql)


def test_a_table_stored_before_keys_were_enforced_gets_its_index_at_open(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        db.execute("INSERT INTO users VALUES (1, 'a@x', 1, 1)")
    stored = sqlite3.connect(tmp_path / "db" / "rivulet.db")
    indexes = [name for (name,) in stored.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '_rivulet_unique%'")]
    assert len(indexes) == 2
    for name in indexes:  # as an older rivulet stored the table
        stored.execute(f'DROP INDEX "{name}"')
    stored.commit()
    with rivulet.open(tmp_path / "db") as db:
        with pytest.raises(ConstraintError):
            db.execute("INSERT INTO users VALUES (2, 'a@x', 2, 2)")
    for name in indexes:
        stored.execute(f'DROP INDEX "{name}"')
    stored.execute("INSERT INTO users VALUES (2, 'a@x', 2, 2)")  # a clash already stored
    stored.commit()
    stored.close()
    with caplog.at_level("WARNING", logger="rivulet"), rivulet.open(tmp_path / "db") as db:
        assert db.execute("SELECT COUNT(*) FROM users") == [(2,)]
    assert any("not enforced" in r.getMessage() for r in caplog.records)
