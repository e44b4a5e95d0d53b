"""``LIMIT ?`` and ``OFFSET ?`` (rivulet/sql/limit_params.py): each read answers what MariaDB
answers for the same values written as literals, through ``db.query``, a transaction, DB-API
and server-side prepared statements, and stays right as rows are written."""

from __future__ import annotations

import random
from typing import Any

import mysql.connector
import pytest
from mysql_oracle import MySQLPair, assert_same_as_mysql

import rivulet
from rivulet import dbapi
from rivulet.errors import ParameterError, UnsupportedSqlError, error_code
from rivulet.server.mysql.server import ServerThread
from rivulet.sql.limit_params import bind_limit

TABLE = "CREATE TABLE posts (id INT PRIMARY KEY, author INT, score INT)"

#: Each read: the statement with ``?`` in its LIMIT/OFFSET, and how MariaDB gets it (the
#: same values written in), for a list of parameters (the keys first, as written).
READS = [
    ("SELECT id, score FROM posts WHERE author = ? ORDER BY score DESC, id LIMIT ?",
     "SELECT id, score FROM posts WHERE author = ? ORDER BY score DESC, id LIMIT {0}", 1),
    ("SELECT id FROM posts WHERE author = ? ORDER BY id LIMIT ?, ?",
     "SELECT id FROM posts WHERE author = ? ORDER BY id LIMIT {0}, {1}", 2),
    ("SELECT id FROM posts WHERE author = ? ORDER BY id LIMIT ? OFFSET ?",
     "SELECT id FROM posts WHERE author = ? ORDER BY id LIMIT {0} OFFSET {1}", 2),
    ("SELECT id, score FROM posts ORDER BY score, id LIMIT 3 OFFSET ?",
     "SELECT id, score FROM posts ORDER BY score, id LIMIT 3 OFFSET {0}", 1),
    ("SELECT author, COUNT(*) AS n FROM posts GROUP BY author ORDER BY n DESC, author LIMIT ?",
     "SELECT author, COUNT(*) AS n FROM posts GROUP BY author ORDER BY n DESC, author "
     "LIMIT {0}", 1),
]


def _literal(template: str, cut: list[int]) -> str:
    return template.format(*cut)


def _check_reads(pair: MySQLPair, rng: random.Random) -> None:
    pair.settle()
    for sql, oracle, n in READS:
        for _ in range(3):
            cut = [rng.randrange(0, 6) for _ in range(n)]
            keys = [rng.randrange(4)] if "author = ?" in sql else []
            got = pair.db.query(sql, keys + cut)
            assert_same_as_mysql(_literal(oracle, cut), keys, got, pair.conn,
                                 what=f"db.query with LIMIT/OFFSET parameters {cut}")


def test_limit_and_offset_parameters_answer_as_their_literals_while_rows_change(
        mysql_pair: MySQLPair) -> None:
    """Each form of the clause, read with several values, then again after inserts,
    updates and deletes: the view of each page size is kept up to date."""
    rng = random.Random(5)
    mysql_pair.execute(TABLE)
    mysql_pair.insert_many("posts", [(i, i % 4, rng.randrange(20)) for i in range(30)])
    _check_reads(mysql_pair, rng)
    for step in range(4):
        mysql_pair.execute("INSERT INTO posts VALUES (?, ?, ?)",
                           [100 + step, rng.randrange(4), rng.randrange(20)])
        mysql_pair.execute("UPDATE posts SET score = ? WHERE id = ?",
                           [rng.randrange(20), rng.randrange(30)])
        mysql_pair.execute("DELETE FROM posts WHERE id = ?", [rng.randrange(30)])
        _check_reads(mysql_pair, rng)


def test_limit_parameters_in_a_transaction_and_through_dbapi(tmp_path: Any) -> None:
    """A transaction's read sees its own writes under the cut; DB-API passes the values."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        db.table("posts").insert_many([(i, 1, i) for i in range(10)])
        sql = "SELECT id FROM posts WHERE author = ? ORDER BY score DESC, id LIMIT ?"
        with db.transaction() as tx:
            tx.execute("INSERT INTO posts VALUES (50, 1, 99)")
            assert tx.query(sql, [1, 2]) == [(50,), (9,)]
            assert tx.execute(sql, [1, 3]) == [(50,), (9,), (8,)]
            assert tx.query(sql + " FOR UPDATE", [1, 1]) == [(50,)]
    conn = dbapi.connect(tmp_path / "db")
    try:
        cursor = conn.cursor()
        cursor.execute(sql, (1, 2))
        assert cursor.fetchall() == [(50,), (9,)]
    finally:
        conn.close()


@pytest.mark.parametrize("value", [-1, 1.5, "x", True, None])
def test_a_limit_that_is_no_whole_number_is_refused_and_changes_nothing(
        tmp_path: Any, value: Any) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        views = set(db.program.views)
        with pytest.raises(ParameterError) as raised:
            db.query("SELECT id FROM posts ORDER BY id LIMIT ?", [value])
        assert "Incorrect arguments to LIMIT" in str(raised.value)
        assert error_code(raised.value).mysql == 1210
        assert set(db.program.views) == views


def test_a_limit_parameter_below_the_top_level_is_still_refused_by_name(tmp_path: Any) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        with pytest.raises(UnsupportedSqlError, match=r"\?"):
            db.query("SELECT id FROM posts WHERE id IN (SELECT id FROM posts LIMIT ?)", [1])
        with pytest.raises(UnsupportedSqlError, match="LIMIT"):
            db.execute("CREATE VIEW top AS SELECT id FROM posts ORDER BY id LIMIT ?")


def test_bind_limit_reads_the_values_in_the_order_written() -> None:
    assert bind_limit("SELECT a FROM t WHERE b = ? LIMIT ?, ?", [7, 2, 5]) == (
        "SELECT a FROM t WHERE b = ? LIMIT 2, 5", (7,))
    assert bind_limit("SELECT a FROM t LIMIT ? OFFSET ?", [5, 2]) == (
        "SELECT a FROM t LIMIT 5 OFFSET 2", ())
    assert bind_limit("SELECT a FROM t LIMIT 5 OFFSET ? ;", ["3"]) == (
        "SELECT a FROM t LIMIT 5 OFFSET 3 ;", ())
    assert bind_limit("SELECT a FROM t LIMIT 5", []) is None
    assert bind_limit("SELECT a FROM t WHERE s = 'LIMIT ?'", [1]) is None


def test_prepared_statements_over_the_wire_take_limit_parameters(
        mysql_pair: MySQLPair) -> None:
    """mysql-connector's server-side prepared statements send ``LIMIT ?`` as written; each
    EXECUTE answers for its own values (and its columns were described at PREPARE)."""
    mysql_pair.execute(TABLE)
    mysql_pair.insert_many("posts", [(i, i % 3, (i * 7) % 11) for i in range(25)])
    mysql_pair.settle()
    server = ServerThread(mysql_pair.db, port=0)
    conn = mysql.connector.connect(host="127.0.0.1", port=server.port, user="root",
                                   password="", database="rivulet", use_pure=True)
    try:
        cursor = conn.cursor(prepared=True)
        for sql, oracle, n in READS[:3]:
            for cut in ([2] * n, [0] * n, [5, 1][:n], [1, 4][:n]):
                cursor.execute(sql, [1, *cut])
                got = [tuple(r) for r in cursor.fetchall()]
                assert cursor.column_names[0] == "id"
                assert_same_as_mysql(_literal(oracle, cut), [1], got, mysql_pair.conn,
                                     what=f"a prepared statement with {cut}")
        with pytest.raises(mysql.connector.Error) as raised:
            cursor.execute(READS[0][0], [1, -1])
        assert raised.value.errno == 1210
    finally:
        conn.close()
        server.stop()
