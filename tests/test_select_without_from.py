"""A SELECT without FROM (``SELECT 1``, ``SELECT FLOOR(1.5)``) and ``SELECT ... FROM DUAL``:
answered by the planner's one-row source (``ir.OneRow``) through the same expressions as
any read, in the Python API, the DB-API and over the MySQL protocol, as MariaDB answers
(values, their types, column names and the wire's result types). Django's first query on
a connection asks one (``CONVERT_TZ(...) IS NOT NULL`` beside session variables)."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest
from mysql_oracle import MySQLPair
from test_mysql_differential import wire_type_mismatch

import rivulet
from rivulet import dbapi
from rivulet.errors import ParameterCountError, UnknownColumnError, UnsupportedSqlError
from rivulet.plan.catalog import Catalog
from rivulet.plan.describe import describe
from rivulet.server.mysql.server import ServerThread

#: Reads MariaDB answers that rivulet answers the same, values and types alike.
QUERIES = [
    "SELECT 1",
    "SELECT 1 FROM DUAL",
    "SELECT 1 FROM DUAL WHERE 1 = 0",
    "SELECT 1 WHERE 1 = 1",
    "SELECT 'x' FROM dual WHERE 'a' < 'b'",
    "SELECT FLOOR(1.5), NULLIF(1, 1), NULLIF(2, 1)",
    "SELECT -1, 'x', NULL, 1.5, 2.50, 1e3",
    "SELECT 5 / 2 AS half, 7 DIV 2 AS whole, 7 % 3 AS rest, 1 = '1abc' AS loose",
    "SELECT CONCAT('a', 1) AS c, LOWER('ABC') AS l, LENGTH('abc') AS n, ABS(-3) AS a",
    "SELECT COUNT(*), SUM(1), AVG(2), MAX('a'), COUNT(NULL)",
    "SELECT COUNT(*) FROM DUAL WHERE 1 = 0",
    "SELECT 1 + 1 AS two FROM DUAL WHERE 2 > 1 GROUP BY 1 HAVING COUNT(*) = 1",
    "SELECT DISTINCT 1",
    "SELECT 1 AS a ORDER BY a LIMIT 1",
    "SELECT 1 AS a LIMIT 0",
    "SELECT 1 AS a UNION SELECT 2 UNION SELECT 1",
    "SELECT 1 AS a UNION ALL SELECT 1",
    "SELECT 99999999999999999999 AS big, -99999999999999999999 AS small",
    "SELECT CASE WHEN 1 > 2 THEN 'yes' ELSE 'no' END AS answer",
    "SELECT CAST('2024-02-03' AS DATE) AS d, CAST('12:30:00' AS TIME) AS t",
    "SELECT CONVERT_TZ('2020-01-01 00:00:00', '+00:00', '-05:30') AS shifted",
    # Without time zone tables (rivulet has none; the oracle is set up without them), a
    # named zone is NULL: Django's probe then says "no time zone support".
    "SELECT CONVERT_TZ('2001-01-01 01:00:00', 'UTC', 'UTC') IS NOT NULL AS tz",
    "SELECT CONVERT_TZ('2001-01-01 01:00:00', 'UTC', 'UTC') AS tz",
]

#: Queries whose result columns' names are their text, the same in both.
NAMED = ["SELECT 1", "SELECT 'x'", "SELECT NULL", "SELECT 1.5", "SELECT FLOOR(1.5)",
         "SELECT COUNT(*)", "SELECT 1 AS one, 'b' AS two", "SELECT 1 FROM DUAL"]


@pytest.mark.parametrize("sql", QUERIES)
def test_embedded_reads_answer_as_mariadb(mysql_pair: MySQLPair, sql: str) -> None:
    mysql_pair.check_query(sql)


@pytest.mark.parametrize("sql", QUERIES)
def test_reads_over_the_wire_answer_as_mariadb_with_its_result_types(
        mysql_pair: MySQLPair, client: Any, sql: str) -> None:
    mine, my_fields = _run(client, sql)
    theirs, their_fields = _run(mysql_pair.conn, sql)
    assert mine == theirs, sql
    if "AS" in sql or sql in NAMED:  # (an expression's own name is rivulet's rendering)
        assert wire_type_mismatch(my_fields, their_fields) is None, (
            sql, wire_type_mismatch(my_fields, their_fields))


@pytest.mark.parametrize("sql", NAMED)
def test_columns_are_named_as_mariadb_names_them(mysql_pair: MySQLPair, client: Any,
                                                 sql: str) -> None:
    with mysql_pair.conn.cursor() as cur:
        cur.execute(sql)
        names = [d[0] for d in cur.description]
    assert list(mysql_pair.db.prepare(sql).columns) == names
    assert [f.name for f in _run(client, sql)[1]] == names


@pytest.mark.parametrize(("sql", "params"), [
    ("SELECT ?", [5]),
    ("SELECT ? + 1 AS n, ? AS s, ? AS d", [1.5, "x", decimal.Decimal("1.25")]),
    ("SELECT ? * 2 AS twice", [decimal.Decimal("1.25")]),
    ("SELECT 1 AS one FROM DUAL WHERE ? = 1", [1]),
    ("SELECT 1 AS one FROM DUAL WHERE ? = 1", [2]),
    ("SELECT COUNT(*) AS n WHERE ?", [0]),
    ("SELECT ? AS a UNION SELECT ?", [1, 2]),
    ("SELECT ? AS nothing", [None]),
])
def test_parameters_are_values(mysql_pair: MySQLPair, sql: str, params: list[Any]) -> None:
    """A ``?`` in a query of no table is a value (no view could key it): each read is
    planned with its values as constants and computed apart, keeping no view."""
    views = len(mysql_pair.db.program.adhoc)
    mysql_pair.check_query(sql, params)
    assert mysql_pair.db.execute(sql, params) == mysql_pair.db.query(sql, params)
    assert len(mysql_pair.db.program.adhoc) == views
    with pytest.raises(ParameterCountError):
        mysql_pair.db.query(sql, [*params, 1])


def test_django_connection_probe_over_the_wire(mysql_pair: MySQLPair, client: Any) -> None:
    """Django's ``mysql_server_data``, as its MySQL backend sends it: session values and
    an expression in one SELECT without FROM. The session's values are put in, the rest
    computed as a read; CONVERT_TZ with a named zone is NULL, as MySQL without time zone
    tables answers."""
    sql = """
        SELECT VERSION(),
               @@sql_mode,
               @@default_storage_engine,
               @@sql_auto_is_null,
               @@lower_case_table_names,
               CONVERT_TZ('2001-01-01 01:00:00', 'UTC', 'UTC') IS NOT NULL
    """
    rows, fields = _run(client, sql)
    theirs, their_fields = _run(mysql_pair.conn, sql)
    (version, mode, engine, auto_is_null, lower_case, tz), = rows
    assert version.startswith("8.0.") and engine == "rivulet"
    assert mode == theirs[0][1]  # MySQL 8's default, which rivulet follows
    assert (auto_is_null, lower_case, tz) == (0, 0, 0) == theirs[0][3:]
    assert [f.name for f in fields] == [f.name for f in their_fields][:5] + [fields[5].name]
    # Asked again (Django asks once per connection): the same, from the cached handler.
    assert _run(client, sql)[0] == rows
    # Other session values beside a computed one, and a mimic-only SELECT as before.
    assert _run(client, "SELECT DATABASE() AS db, 1 + 1 AS two")[0] == [("rivulet", 2)]
    assert _run(client, "SELECT @@version_comment LIMIT 1")[0] == [("rivulet",)]


def test_constant_views_and_views_reading_them(mysql_pair: MySQLPair) -> None:
    """``CREATE VIEW v AS SELECT 1``: a view of one row, readable by name, in another
    view's FROM and joined with a table, kept across a restart."""
    db = mysql_pair.db
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    db.execute("CREATE VIEW c AS SELECT 1 AS one, 'x' AS s")
    db.execute("CREATE VIEW j AS SELECT t.id, c.s FROM t JOIN c ON t.v = c.one")
    mysql_pair.execute("INSERT INTO t VALUES (1, 1), (2, 2), (3, 1)")
    db.settle()
    assert db.view("c").lookup() == [(1, "x")]
    assert sorted(db.view("j").lookup()) == [(1, "x"), (3, "x")]
    assert db.query("SELECT one + 1 FROM c") == [(2,)]
    db.evict()
    assert db.view("c").lookup() == [(1, "x")]
    path = mysql_pair.path
    db.close()
    reopened = rivulet.open(path)
    try:
        assert reopened.view("c").lookup() == [(1, "x")]
        assert sorted(reopened.view("j").lookup()) == [(1, "x"), (3, "x")]
    finally:
        reopened.close()
        mysql_pair.db = rivulet.open(path)  # (the pair closes its own)


def test_the_plan_is_a_one_row_source() -> None:
    catalog = Catalog.from_sql("CREATE TABLE t (id INT PRIMARY KEY)")
    plan = catalog.plan("SELECT 1 + 1 AS two FROM DUAL WHERE 1 < 2")
    assert describe(plan).splitlines()[-1].strip() == "One row (no FROM)"


def test_the_dbapi_answers_it(tmp_path: Any) -> None:
    with rivulet.connect(tmp_path / "db") as conn:
        cur = conn.cursor()
        cur.execute("SELECT 1 AS one, FLOOR(2.5) AS f FROM DUAL")
        assert cur.fetchall() == [(1, 2)]
        assert [d[0] for d in cur.description] == ["one", "f"]
        cur.execute("SELECT 1 FROM DUAL WHERE 1 = 0")
        assert cur.fetchall() == []
        cur.execute("SELECT ? AS v, ? + 1", ("a", 2))
        assert cur.fetchall() == [("a", 3)]
        assert [(d[0], d[1]) for d in cur.description] == [("v", "str"), ("? + 1", "int")]
        # A date is a DATE, as a prepared statement's parameter is in MySQL (the oracle's
        # driver would send it as text).
        cur.execute("SELECT ? AS day, YEAR(?)", (dt.date(2024, 1, 2),) * 2)
        assert cur.fetchall() == [(dt.date(2024, 1, 2), 2024)]


def test_what_stays_refused_is_refused_by_name(tmp_path: Any) -> None:
    """A column without a table is unknown (1054); a function rivulet does not have and
    DUAL joined to a table are refused (1235) naming the construct: nothing is computed
    with another engine's semantics."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        with pytest.raises(UnknownColumnError):
            db.query("SELECT a")
        for sql, words in [("SELECT SOUNDEX('x')", "SOUNDEX"),
                           ("SELECT FROM_UNIXTIME(0)", "FROM_UNIXTIME"),
                           ("SELECT ROUND(0x41)", "hexadecimal or bit literal"),
                           ("SELECT 1 FROM DUAL JOIN t ON 1 = t.id", "JOIN")]:
            with pytest.raises(UnsupportedSqlError, match=words):
                db.query(sql)
    with pytest.raises(dbapi.NotSupportedError):
        with rivulet.connect(tmp_path / "db") as conn:
            conn.cursor().execute("SELECT FROM_UNIXTIME(0)")


# --------------------------------------------------------------------------- helpers


@pytest.fixture
def client(mysql_pair: MySQLPair) -> Iterator[Any]:
    server = ServerThread(mysql_pair.db, port=0)
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database="rivulet", autocommit=True)
    try:
        yield conn
    finally:
        conn.close()
        server.stop()


def _run(conn: Any, sql: str) -> tuple[list[tuple], list[Any]]:
    with conn.cursor() as cur:
        cur.execute(sql)
        rows = [tuple(r) for r in cur.fetchall()]
        return rows, list(cur._result.fields)


def test_big_integer_literals_are_decimals() -> None:
    """Past BIGINT UNSIGNED, MySQL reads an integer literal as an exact DECIMAL."""
    catalog = Catalog.from_sql("CREATE TABLE t (id INT PRIMARY KEY)")
    plan = catalog.plan("SELECT 99999999999999999999, 18446744073709551615 FROM t")
    big, unsigned = plan.root.columns[:2]
    assert big.kind == "decimal" and unsigned.kind == "int"


def test_prepared_statements_over_the_wire(mysql_pair: MySQLPair) -> None:
    """A server-side prepared SELECT without FROM is a read like any; one whose ``?`` are
    values (``SELECT ?``) is refused by name there (drivers' client-side parameters are
    literals in the text, answered above)."""
    import mysql.connector

    server = ServerThread(mysql_pair.db, port=0)
    conn = mysql.connector.connect(host="127.0.0.1", port=server.port, user="root",
                                   password="", database="rivulet", use_pure=True,
                                   autocommit=True)
    try:
        cur = conn.cursor(prepared=True)
        cur.execute("SELECT 1 + 1 AS two, FLOOR(2.5) AS f")
        assert cur.fetchall() == [(2, 2)]
        with pytest.raises(mysql.connector.errors.ProgrammingError, match="1235"):
            cur.execute("SELECT ?", (1,))
    finally:
        conn.close()
        server.stop()
