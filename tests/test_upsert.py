"""INSERT IGNORE, INSERT ... ON DUPLICATE KEY UPDATE and REPLACE (rivulet/storage/upsert.py):
affected rows, LAST_INSERT_ID and the rows left, in autocommit and in a transaction,
embedded, over HTTP and over the MySQL protocol against MariaDB; the views that read the
table follow (checked against a recomputation from the table's rows)."""

from __future__ import annotations

import decimal
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
from pymysql.constants import CLIENT

import rivulet
from rivulet.errors import error_code
from rivulet.server.http.app import make_app
from rivulet.server.mysql.server import ServerThread

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette's notice about httpx vs httpx2
    from starlette.testclient import TestClient

TABLE = ("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, u VARCHAR(5) UNIQUE, "
         "v INT NOT NULL DEFAULT 7)")
#: Statements and what MySQL answers (affected rows, the OK packet's insert id), as
#: MariaDB answered them (test_the_same_as_mariadb_over_the_wire checks it again).
SCRIPT: list[tuple[str, int, int]] = [
    ("INSERT INTO t (u, v) VALUES ('a', 1), ('b', 2)", 2, 1),
    ("INSERT IGNORE INTO t (u, v) VALUES ('a', 5)", 0, 0),  # number 3 consumed
    ("INSERT IGNORE INTO t (u, v) VALUES ('a', 5), ('c', 6)", 1, 4),  # 'a' gives 4 to 'c'
    ("INSERT IGNORE INTO t (id, u, v) VALUES (1, 'z', 5)", 0, 0),
    ("INSERT IGNORE INTO t (id, u, v) VALUES (10, 'y', 5)", 1, 10),
    ("INSERT INTO t (u, v) VALUES ('a', 9) ON DUPLICATE KEY UPDATE v = VALUES(v)", 2, 1),
    ("INSERT INTO t (u, v) VALUES ('a', 9) ON DUPLICATE KEY UPDATE v = VALUES(v)", 0, 0),
    ("INSERT INTO t (u, v) VALUES ('d', 9) ON DUPLICATE KEY UPDATE v = VALUES(v)", 1, 13),
    ("INSERT INTO t (u, v) VALUES ('a', 1), ('e', 2), ('e', 3) "
     "ON DUPLICATE KEY UPDATE v = v + VALUES(v)", 5, 14),
    ("INSERT INTO t (id, u, v) VALUES (2, 'q', 1) ON DUPLICATE KEY UPDATE v = v + 1, u = v",
     2, 2),
    ("REPLACE INTO t (id, u, v) VALUES (1, 'a', 100)", 2, 1),
    ("REPLACE INTO t (id, u, v) VALUES (1, 'c', 100)", 3, 1),  # two rows deleted
    ("REPLACE INTO t (u, v) VALUES ('zz', 3)", 1, 17),
    ("REPLACE INTO t (id, u, v) VALUES (50, 'zz', 3)", 2, 50),
    ("REPLACE t SET id = 51, u = 'zz'", 2, 51),  # the last key's clash: updated in place
]
ROWS_AFTER = [(1, "c", 100), (2, "3", 3), (10, "y", 5), (13, "d", 9), (14, "e", 5),
              (51, "zz", 7)]


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path / "db")
    database.execute(TABLE)
    database.execute("CREATE VIEW totals AS SELECT u, SUM(v) AS total, COUNT(*) AS n "
                     "FROM t GROUP BY u")
    database.execute("CREATE VIEW by_u AS SELECT id, v FROM t WHERE u = ?")
    yield database
    database.close()


def check_views(db: rivulet.Database) -> None:
    """The views hold what a recomputation from the table's rows gives."""
    db.settle()
    rows = db.query("SELECT id, u, v FROM t")
    expected: dict[Any, list[int]] = {}
    for _, u, v in rows:
        expected.setdefault(u, []).append(v)
    got = sorted(db.view("totals").lookup(), key=repr)
    assert got == sorted(((u, decimal.Decimal(sum(vs)), len(vs)) for u, vs in expected.items()),
                         key=repr)
    for _, u, _ in rows:
        assert sorted(db.view("by_u").lookup(u)) == sorted(
            (i, v) for i, uu, v in rows if uu == u)


@pytest.mark.parametrize("in_transaction", [False, True])
def test_each_form_counts_numbers_and_leaves_rows_as_mysql(db: rivulet.Database,
                                                           in_transaction: bool) -> None:
    db.view("by_u").lookup("a")  # (a key held by a partial view before the writes)
    tx = db.transaction() if in_transaction else None
    for sql, affected, insert_id in SCRIPT:
        request = db.write_request(sql)
        if tx is None:
            db.submit(request)
        else:
            tx.write(request)
        assert (sql, request.rowcount, request.last_insert_id) == (sql, affected, insert_id)
        if tx is None:
            check_views(db)
    if tx is not None:
        assert sorted(tx.query("SELECT id, u, v FROM t")) == ROWS_AFTER
        assert db.query("SELECT id FROM t") == []  # nothing before COMMIT
        tx.commit()
    db.settle()
    assert sorted(db.query("SELECT id, u, v FROM t")) == ROWS_AFTER
    check_views(db)


def test_client_found_rows_counts_a_row_left_as_it_was(db: rivulet.Database) -> None:
    db.execute("INSERT INTO t (id, u, v) VALUES (1, 'a', 1)")
    same = db.write_request("INSERT INTO t (id, u, v) VALUES (1, 'a', 1), (2, 'b', 2) "
                            "ON DUPLICATE KEY UPDATE v = VALUES(v)")
    db.submit(same)
    assert (same.rowcount, same.found()) == (1, 2)


def test_the_row_alias_and_a_later_row_seeing_an_earlier_one(db: rivulet.Database) -> None:
    assert db.execute("INSERT INTO t (id, u, v) VALUES (1, 'a', 1), (2, 'a', 5) AS new "
                      "ON DUPLICATE KEY UPDATE v = t.v + new.v") == 3
    db.settle()
    assert db.query("SELECT id, u, v FROM t") == [(1, "a", 6)]
    assert db.execute("INSERT INTO t (id, u, v) VALUES (?, ?, ?) AS n(i, w, x) "
                      "ON DUPLICATE KEY UPDATE v = x * 10, u = w", [1, "b", 4]) == 2
    db.settle()
    assert db.query("SELECT id, u, v FROM t") == [(1, "b", 40)]
    check_views(db)


def test_replace_on_the_only_key_counts_one_for_the_same_row(tmp_path: Path) -> None:
    with rivulet.open(tmp_path / "one") as one:
        one.execute("CREATE TABLE k (id INT PRIMARY KEY, v INT)")
        assert one.execute("REPLACE INTO k VALUES (1, 1)") == 1
        assert one.execute("REPLACE INTO k VALUES (1, 1)") == 1  # updated in place: nothing
        assert one.execute("REPLACE INTO k VALUES (1, 2)") == 2
        assert one.query("SELECT id, v FROM k") == [(1, 2)]


def test_a_failing_row_leaves_nothing_of_the_statement(db: rivulet.Database) -> None:
    db.execute("INSERT INTO t (id, u, v) VALUES (1, 'a', 1), (2, 'b', 2)")
    bad = "INSERT INTO t (id, u, v) VALUES (3, 'c', 3), (1, 'x', 0) " \
          "ON DUPLICATE KEY UPDATE u = 'b'"  # row 2's update takes b's key: 1062
    with pytest.raises(rivulet.ConstraintError, match="duplicate"):
        db.execute(bad)
    with db.transaction() as tx:
        with pytest.raises(rivulet.ConstraintError, match="duplicate"):
            tx.execute(bad)
        assert sorted(tx.query("SELECT id, u, v FROM t")) == [(1, "a", 1), (2, "b", 2)]
    db.settle()
    assert sorted(db.query("SELECT id, u, v FROM t")) == [(1, "a", 1), (2, "b", 2)]
    check_views(db)


@pytest.mark.parametrize("sql", [
    "INSERT IGNORE INTO t (u, v) VALUES ('toolongvalue', 1)",  # MySQL truncates, warns
    "INSERT IGNORE INTO t (u, v) VALUES ('n', NULL)",  # MySQL stores v = 0, warns
    "INSERT IGNORE INTO t (u, v) VALUES ('n', 'abc')",
    "INSERT IGNORE INTO t (u) VALUES ('a') ON DUPLICATE KEY UPDATE v = 1",
    "INSERT OR REPLACE INTO t (u) VALUES ('a')",
])
def test_what_mysql_adjusts_with_a_warning_is_refused(db: rivulet.Database, sql: str) -> None:
    with pytest.raises(rivulet.SqlError) as refused:
        db.execute(sql)
    assert error_code(refused.value).mysql in (1235, 1064)
    assert db.query("SELECT id FROM t") == []


def test_over_http(db: rivulet.Database) -> None:
    client = TestClient(make_app(db), raise_server_exceptions=True)
    for sql, affected, _ in SCRIPT:
        reply = client.post("/sql", json={"sql": sql})
        assert reply.status_code == 200, reply.text
        assert reply.json()["rowcount"] == affected
    db.settle()
    assert sorted(db.query("SELECT id, u, v FROM t")) == ROWS_AFTER
    check_views(db)


# ......................................................................... against MariaDB


def _run(conn: pymysql.Connection, statements: list[str]) -> list[tuple]:
    """Each statement's affected rows and the OK packet's insert id (``mysql_insert_id()``)
    or its error code, then the rows. (rivulet's server does not answer ``SELECT
    LAST_INSERT_ID()``: drivers read the OK packet's.)"""
    out: list[tuple] = []
    with conn.cursor() as cur:
        for sql in statements:
            try:
                out.append((sql, cur.execute(sql), cur.lastrowid))
            except pymysql.MySQLError as exc:
                out.append((sql, "error", exc.args[0]))
        cur.execute("SELECT id, u, v FROM t ORDER BY id")
        out.append(tuple(tuple(r) for r in cur.fetchall()))
    return out


WIRE_SCRIPT = [sql for sql, _, _ in SCRIPT] + [
    "INSERT INTO t (id, u, v) VALUES (60, 'p', 1), (61, 'p', 2) "
    "ON DUPLICATE KEY UPDATE v = v + 10",
    "INSERT INTO t (id, u, v) VALUES (70, 'q', 1), (2, 'y', 0) "
    "ON DUPLICATE KEY UPDATE u = VALUES(u)",  # 1062: nothing of it stays
    "INSERT IGNORE INTO t (u, v) VALUES ('p', 0), ('r', 1), ('r', 2), ('s', 3)",
    "REPLACE INTO t (id, u, v) VALUES (13, 'e', 1), (13, 'e', 1)",
]


@pytest.mark.parametrize("flags", [0, CLIENT.FOUND_ROWS])
@pytest.mark.parametrize("in_transaction", [False, True])
def test_the_same_as_mariadb_over_the_wire(mariadb_oracle: Any, db: rivulet.Database,
                                           flags: int, in_transaction: bool) -> None:
    oracle = mariadb_oracle.schema()
    with oracle.cursor() as cur:
        cur.execute(TABLE)
    maria = pymysql.connect(host=oracle.host, port=oracle.port, user=oracle.user,
                            password=oracle.password, database=oracle.db,
                            client_flag=flags, autocommit=True)
    server = ServerThread(db, port=0)
    try:
        ours = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                               database="rivulet", client_flag=flags, autocommit=True)
        begin = ["BEGIN"] if in_transaction else []
        statements = begin + WIRE_SCRIPT + (["COMMIT"] if in_transaction else [])
        expected = _run(maria, statements)
        got = _run(ours, statements)
        for mine, theirs in zip(got, expected):
            assert mine == theirs
        assert len(got) == len(expected)
        ours.close()
    finally:
        server.stop()
        maria.close()
        oracle.close()
    check_views(db)
