"""The time functions (``NOW()``, ``CURRENT_TIMESTAMP``, ``CURDATE()``, ``CURTIME()``,
``UTC_TIMESTAMP()``, ``UNIX_TIMESTAMP()``... rivulet/sql/clock.py, rivulet/values/clock.py)
and the columns that read the clock (``DEFAULT CURRENT_TIMESTAMP``, ``ON UPDATE
CURRENT_TIMESTAMP``).

A statement reads the clock once: every time function in it gives the same instant. A read
is answered at its statement (by no view: its answer changes with no write), a write stores
the values the instant gave (so they survive a restart as they were, and no default is
computed again), and a view that would call one is refused by name. Values are checked
against MariaDB (the oracle runs in UTC, as rivulet does) for their types exactly and their
values within a few seconds; through the Python API and the MySQL protocol."""

from __future__ import annotations

import datetime as dt
import time
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import pymysql
import pytest
from mysql_oracle import MySQLPair, column_types

import rivulet
from rivulet.errors import InvalidDefaultError, TooBigPrecisionError, UnsupportedSqlError
from rivulet.server.http.app import make_app
from rivulet.server.mysql.server import ServerThread

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette's notice about httpx vs httpx2
    from starlette.testclient import TestClient

#: How far apart rivulet's and MariaDB's clocks may be read (two statements, one after
#: the other, on a busy machine).
TOLERANCE = dt.timedelta(seconds=5)

#: The time functions in their forms, each beside the name of the Python type MySQL's
#: answer comes as.
EXPRESSIONS = [
    ("NOW()", "datetime"), ("NOW(6)", "datetime"), ("NOW(3)", "datetime"),
    ("CURRENT_TIMESTAMP", "datetime"), ("CURRENT_TIMESTAMP()", "datetime"),
    ("CURRENT_TIMESTAMP(2)", "datetime"), ("LOCALTIME", "datetime"),
    ("LOCALTIME()", "datetime"), ("LOCALTIMESTAMP", "datetime"), ("SYSDATE()", "datetime"),
    ("UTC_TIMESTAMP()", "datetime"), ("UTC_TIMESTAMP", "datetime"), ("CURDATE()", "date"),
    ("CURRENT_DATE", "date"), ("CURRENT_DATE()", "date"), ("UTC_DATE()", "date"),
    ("UTC_DATE", "date"), ("CURTIME()", "timedelta"), ("CURTIME(4)", "timedelta"),
    ("CURRENT_TIME", "timedelta"), ("UTC_TIME()", "timedelta"), ("UNIX_TIMESTAMP()", "int"),
]


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def near(a: Any, b: Any) -> bool:
    """Whether two readings of the clock, of one type, are within :data:`TOLERANCE`."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dt.datetime):
        return abs(a - b) <= TOLERANCE
    if isinstance(a, dt.date):  # (a read across midnight)
        return abs(a - b) <= dt.timedelta(days=1)
    if isinstance(a, dt.timedelta):  # (a time of day: across midnight too)
        return min(abs(a - b), dt.timedelta(days=1) - abs(a - b)) <= TOLERANCE
    if isinstance(a, int):
        return abs(a - b) <= TOLERANCE.total_seconds()
    return bool(a == b)


def assert_near(got: Sequence[Sequence[Any]], expected: Sequence[Sequence[Any]]) -> None:
    assert len(got) == len(expected), (got, expected)
    assert column_types(got) == column_types(expected), (got, expected)
    for mine, theirs in zip(got, expected):
        assert all(near(a, b) for a, b in zip(mine, theirs, strict=True)), (mine, theirs)


@pytest.fixture
def db(tmp_path: Any) -> Iterator[rivulet.Database]:
    with rivulet.open(tmp_path / "db") as database:
        database.execute("CREATE TABLE t (id INT PRIMARY KEY, at DATETIME(6), d DATE)")
        database.execute("INSERT INTO t VALUES (1, '2020-01-01 00:00:00', '2020-01-01'), "
                         "(2, '2099-01-01 00:00:00', '2099-01-01')")
        database.settle()
        yield database


# --------------------------------------------------------------------------- reads


@pytest.mark.parametrize(("expr", "kind"), EXPRESSIONS)
def test_each_time_function_is_mariadbs(mysql_pair: MySQLPair, expr: str, kind: str) -> None:
    """Type exactly MariaDB's (a DATETIME's digits included), value within seconds."""
    sql = f"SELECT {expr} AS x, {expr} = {expr} AS same"
    got = mysql_pair.db.query(sql)
    theirs = mysql_pair.mariadb(sql)
    assert type(got[0][0]).__name__ == kind
    assert_near(got, theirs)
    if "(" in expr and expr.split("(")[1][:1].isdigit():  # (fractional digits asked for)
        digits = int(expr.split("(")[1][0])
        value = got[0][0]
        micros = value.microsecond if isinstance(value, dt.datetime) else value.microseconds
        assert micros % 10 ** (6 - digits) == 0


def test_one_statement_reads_the_clock_once(db: rivulet.Database) -> None:
    """Every time function of a statement gives the same instant (MySQL's rule), in every
    row, and it is the instant the statement ran at."""
    before = utc_now()
    rows = db.query("SELECT NOW(6), CURRENT_TIMESTAMP(6), SYSDATE(6), UTC_TIMESTAMP(6), "
                    "LOCALTIMESTAMP(6), NOW(), CURDATE(), CURTIME(6), UNIX_TIMESTAMP() FROM t")
    after = utc_now()
    assert len(rows) == 2 and rows[0] == rows[1]
    now6, *others, now0, today, clock, unix = rows[0]
    assert before <= now6 <= after
    assert all(o == now6 for o in others)
    assert now0 == now6.replace(microsecond=0)  # (cut, not rounded)
    assert today == now6.date()
    assert clock == now6 - dt.datetime.combine(now6.date(), dt.time())
    assert unix == int((now6 - dt.datetime(1970, 1, 1)).total_seconds())


def test_a_read_is_answered_at_its_statement_not_kept(db: rivulet.Database) -> None:
    """The answer follows the clock with no write: no view keeps it, each read is
    computed at its own instant (with its ? values), and the program gains no view."""
    views = set(db.views())
    adhoc = len(db.program.adhoc)
    sql = "SELECT id, at < NOW(6) AS past, UNIX_TIMESTAMP() AS u FROM t WHERE id = ?"
    first = db.query(sql, [1])
    time.sleep(1.1)
    second = db.query(sql, [1])
    assert first[0][:2] == second[0][:2] == (1, 1)
    assert second[0][2] > first[0][2]
    assert db.query("SELECT id FROM t WHERE at > NOW() ORDER BY id") == [(2,)]
    assert db.execute("SELECT COUNT(*) FROM t WHERE d <= CURDATE()") == [(1,)]
    assert set(db.views()) == views and len(db.program.adhoc) == adhoc


@pytest.mark.parametrize("expr", ["NOW()", "CURRENT_TIMESTAMP", "CURDATE()", "UTC_DATE",
                                  "UNIX_TIMESTAMP()", "CURTIME(3)"])
def test_a_view_that_reads_the_clock_is_refused_by_name(db: rivulet.Database,
                                                        expr: str) -> None:
    """A view is kept up to date by writes; one whose answer changes with the clock alone
    would be stale: refused (1235), naming the function."""
    name = expr.split("(")[0]
    with pytest.raises(UnsupportedSqlError, match=rf"{name}\(\) in a view"):
        db.execute(f"CREATE VIEW v AS SELECT id, {expr} AS x FROM t WHERE id = ?")
    with pytest.raises(UnsupportedSqlError, match=rf"{name}\(\) in a view"):
        db.execute(f"CREATE VIEW w AS SELECT id FROM t WHERE at < {expr}")
    assert "v" not in db.views() and "w" not in db.views()


@pytest.mark.parametrize(("sql", "error"), [
    ("SELECT NOW(7)", TooBigPrecisionError), ("SELECT CURTIME(9)", TooBigPrecisionError),
    ("SELECT NOW(1, 2)", rivulet.SqlError), ("SELECT CURDATE(1)", rivulet.SqlError),
    ("SELECT NOW('3')", rivulet.SqlError),
])
def test_wrong_arguments_are_mysqls_errors(mysql_pair: MySQLPair, sql: str,
                                           error: type[Exception]) -> None:
    with pytest.raises(error):
        mysql_pair.db.query(sql)
    with pytest.raises(pymysql.MySQLError):
        mysql_pair.mariadb(sql)


# --------------------------------------------------------------------------- writes


def test_a_write_stores_its_instant_and_a_restart_keeps_it(tmp_path: Any) -> None:
    """INSERT ... VALUES (NOW()) and UPDATE ... SET c = NOW() store the value of the
    statement's one instant (every row of a statement alike); after a restart the rows
    hold exactly those values: the log holds values, not calls."""
    path = tmp_path / "db"
    with rivulet.open(path) as db:
        db.execute("CREATE TABLE e (id INT PRIMARY KEY, a DATETIME(6), b DATETIME(6), "
                   "d DATE, t TIME(6), u BIGINT, s VARCHAR(40))")
        before = utc_now()
        db.execute("INSERT INTO e VALUES (?, NOW(6), CURRENT_TIMESTAMP(6), CURDATE(), "
                   "CURTIME(6), UNIX_TIMESTAMP(), CONCAT('at ', NOW())), (2, NOW(6), "
                   "SYSDATE(6), UTC_DATE(), UTC_TIME(6), UNIX_TIMESTAMP(), NULL)", [1])
        after = utc_now()
        db.settle()
        inserted = db.query("SELECT * FROM e ORDER BY id")
        a = inserted[0][1]
        assert before <= a <= after
        assert all(r[1] == r[2] == a for r in inserted)
        assert inserted[0][3] == a.date() and inserted[0][5] == int(a.timestamp()) - int(
            dt.datetime(1970, 1, 1, tzinfo=dt.UTC).timestamp() - dt.datetime(
                1970, 1, 1).timestamp())
        assert inserted[0][6] == f"at {a:%Y-%m-%d %H:%M:%S}"
        time.sleep(0.01)
        assert db.execute("UPDATE e SET b = NOW(6) WHERE b <= NOW(6)") == 2
        db.settle()
        updated = db.query("SELECT * FROM e ORDER BY id")
        assert updated[0][2] == updated[1][2] > a
    with rivulet.open(path) as db:
        assert db.query("SELECT * FROM e ORDER BY id") == updated


def test_an_update_with_planned_constants_reads_its_instant(mysql_pair: MySQLPair) -> None:
    """An UPDATE whose WHERE has constants computed once per execution (text compared with
    a BIGINT: rivulet/engine/planned.py) and reads the clock: its instant and those
    constants are distinct values of the statement."""
    pair = mysql_pair
    pair.execute("CREATE TABLE b (id INT PRIMARY KEY, big BIGINT, at DATETIME(6), v INT)")
    pair.execute("INSERT INTO b VALUES (1, 5, '2020-01-01', 0), (2, 6, '2020-01-01', 0)")
    pair.execute("UPDATE b SET at = NOW(6), v = v + 1 WHERE big = '5' AND at < NOW(6)")
    pair.execute("UPDATE b SET v = v + 1 WHERE big = ? AND at < NOW()", ["6"])
    pair.settle()
    sql = "SELECT id, big, at, v FROM b ORDER BY id"
    assert_near(pair.db.query(sql), pair.mariadb(sql))
    assert [r[3] for r in pair.db.query(sql)] == [1, 1]


def test_writes_through_the_mysql_protocol_store_the_time(mysql_pair: MySQLPair) -> None:
    """Text and prepared writes with time functions, and a read of them, over PyMySQL;
    a session time zone other than UTC is refused by name (rivulet's functions give UTC)."""
    mysql_pair.db.execute("CREATE TABLE p (id INT PRIMARY KEY, at DATETIME)")
    server = ServerThread(mysql_pair.db, port=0)
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database="rivulet", autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("INSERT INTO p VALUES (1, NOW())")
            cur.execute("INSERT INTO p VALUES (%s, CURRENT_TIMESTAMP)", (2,))
            cur.execute("SELECT id, at, NOW() FROM p ORDER BY id")
            rows = cur.fetchall()
            assert [r[0] for r in rows] == [1, 2]
            assert all(near(r[1], r[2]) and near(r[2], utc_now()) for r in rows)
            cur.execute("SELECT NOW(3), CURDATE(), UNIX_TIMESTAMP()")
            mine = cur.fetchall()
            described = [(d[0], d[1]) for d in cur.description]
            with mysql_pair.conn.cursor() as theirs:
                theirs.execute("SELECT NOW(3), CURDATE(), UNIX_TIMESTAMP()")
                assert_near(mine, theirs.fetchall())
                assert described == [(d[0], d[1]) for d in theirs.description]
            cur.execute("SET time_zone = '+05:00'")
            with pytest.raises(pymysql.err.NotSupportedError, match="time_zone"):
                cur.execute("SELECT NOW()")
            with pytest.raises(pymysql.err.NotSupportedError, match="time_zone"):
                cur.execute("INSERT INTO p VALUES (3, NOW())")
            cur.execute("SET time_zone = '+00:00'")
            cur.execute("SELECT COUNT(*) FROM p WHERE at <= NOW()")
            assert cur.fetchall() == ((2,),)
    finally:
        conn.close()
        server.stop()


def test_the_http_api_reads_and_writes_the_time(db: rivulet.Database) -> None:
    """POST /sql and POST /transaction: a read of the clock answers with its columns, a
    write stores the time."""
    api = TestClient(make_app(db), raise_server_exceptions=True)
    r = api.post("/sql", json={"sql": "SELECT id, at < NOW() AS past FROM t WHERE id = ?",
                               "params": [1]})
    assert r.status_code == 200, r.text
    assert r.json() == {"columns": ["id", "past"], "rows": [[1, 1]]}
    r = api.post("/transaction", json={"statements": [
        {"sql": "INSERT INTO t VALUES (3, NOW(6), CURDATE())"},
        {"sql": "SELECT COUNT(*) AS n FROM t WHERE d = CURDATE()"}]})
    assert r.status_code == 200, r.text
    assert r.json()["results"][1] == {"columns": ["n"], "rows": [[1]]}


def test_a_transaction_reads_the_clock_with_its_own_writes(db: rivulet.Database) -> None:
    with db.transaction() as tx:
        tx.execute("INSERT INTO t VALUES (3, NOW(6), CURDATE())")
        assert tx.query("SELECT id FROM t WHERE at <= NOW(6) ORDER BY id") == [(1,), (3,)]
        assert tx.execute("SELECT COUNT(*) FROM t WHERE d = CURDATE()") == [(1,)]


def test_what_stays_refused_names_the_time_function(db: rivulet.Database) -> None:
    db.execute("CREATE TABLE u (id INT PRIMARY KEY, at DATETIME)")
    with pytest.raises(UnsupportedSqlError, match=r"NOW\(\) in an UPDATE or DELETE of several"):
        db.execute("UPDATE t JOIN u ON t.id = u.id SET u.at = NOW()")
    with pytest.raises(UnsupportedSqlError, match="CURRENT_TIMESTAMP"):
        db.execute("ALTER TABLE u ADD COLUMN made DATETIME DEFAULT CURRENT_TIMESTAMP")
    with pytest.raises(UnsupportedSqlError, match="NOW"):
        db.execute("CREATE TABLE c (id INT PRIMARY KEY, at DATETIME, CHECK (at < NOW()))")


# --------------------------------------------------------------------------- defaults

DEFAULTS_TABLE = """CREATE TABLE r (id INT PRIMARY KEY, v INT,
    made DATETIME DEFAULT CURRENT_TIMESTAMP,
    made6 DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    stamp TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    touched DATETIME(3) NULL ON UPDATE NOW(3),
    parens DATETIME DEFAULT (NOW()),
    plain DATETIME DEFAULT '2000-01-01 00:00:00')"""


def test_column_defaults_read_the_clock_as_mariadbs_do(mysql_pair: MySQLPair) -> None:
    """``DEFAULT CURRENT_TIMESTAMP`` fills a row that leaves the column out with its
    statement's instant; ``ON UPDATE CURRENT_TIMESTAMP`` is set by an UPDATE that changes
    the row without assigning it; an UPDATE that changes nothing, or assigns the column,
    leaves it. As MariaDB (explicit_defaults_for_timestamp on, as MySQL 8's default)."""
    pair = mysql_pair
    pair.execute(DEFAULTS_TABLE)
    pair.execute("INSERT INTO r (id, v) VALUES (1, 10), (2, 20)")
    pair.execute("INSERT INTO r (id, v, made) VALUES (3, 30, '2001-02-03 04:05:06')")
    pair.db.table("r").insert_many([{"id": 4, "v": 40}])
    with pair.conn.cursor() as cur:
        cur.execute("INSERT INTO r (id, v) VALUES (4, 40)")
    pair.settle()
    sql = "SELECT * FROM r ORDER BY id"
    assert_near(pair.db.query(sql), pair.mariadb(sql))
    rows = pair.db.query(sql)
    assert rows[0][2] == rows[0][3].replace(microsecond=0) == rows[1][2]
    assert rows[0][5] is None and rows[2][2] == dt.datetime(2001, 2, 3, 4, 5, 6)
    time.sleep(1.1)
    pair.execute("UPDATE r SET v = v + 1 WHERE id = 1")
    pair.execute("UPDATE r SET v = v WHERE id = 2")  # (no change: 0 rows, no stamp)
    pair.execute("UPDATE r SET v = 0, stamp = '2010-01-01 00:00:00' WHERE id = 3")
    pair.settle()
    assert_near(pair.db.query(sql), pair.mariadb(sql))
    after = pair.db.query(sql)
    assert after[0][4] > rows[0][4] and after[0][5] is not None
    assert after[1] == rows[1]
    assert after[2][4] == dt.datetime(2010, 1, 1) and after[2][5] is not None


def test_an_upsert_reads_the_clock_as_mariadbs(mysql_pair: MySQLPair) -> None:
    """``ON DUPLICATE KEY UPDATE`` that changes the row sets the ON UPDATE column; one
    listing every column (so no default is taken) runs on a table with clock defaults."""
    pair = mysql_pair
    pair.execute(DEFAULTS_TABLE)
    pair.execute("INSERT INTO r (id, v) VALUES (1, 10)")
    pair.settle()
    before = pair.db.query("SELECT stamp FROM r WHERE id = 1")
    time.sleep(1.1)
    pair.execute("INSERT INTO r (id, v) VALUES (1, 11) ON DUPLICATE KEY UPDATE v = VALUES(v)")
    pair.execute("INSERT INTO r (id, v) VALUES (1, 11) ON DUPLICATE KEY UPDATE v = VALUES(v)")
    every = ("INSERT INTO r VALUES (2, 1, NULL, '2000-01-01', NULL, NULL, NULL, NULL) "
             "ON DUPLICATE KEY UPDATE v = v + 1")
    pair.execute(every)
    pair.execute(every)
    pair.settle()
    sql = "SELECT id, v, made, made6, stamp, touched, parens, plain FROM r ORDER BY id"
    assert_near(pair.db.query(sql), pair.mariadb(sql))
    after = pair.db.query(sql)
    assert after[0][4] > before[0][0] and after[1][4] is not None


def test_a_cascaded_update_leaves_the_on_update_column(mysql_pair: MySQLPair) -> None:
    """A FOREIGN KEY's ON UPDATE CASCADE changes the child's key columns only: its ``ON
    UPDATE CURRENT_TIMESTAMP`` column keeps its time, as in InnoDB (MariaDB here)."""
    pair = mysql_pair
    pair.execute("CREATE TABLE pa (id INT PRIMARY KEY)")
    pair.execute("CREATE TABLE ch (id INT PRIMARY KEY, p INT, ts DATETIME(6) NOT NULL "
                 "DEFAULT '2000-01-01 00:00:00' ON UPDATE CURRENT_TIMESTAMP(6), "
                 "FOREIGN KEY (p) REFERENCES pa (id) ON UPDATE CASCADE)")
    pair.execute("INSERT INTO pa VALUES (1)")
    pair.execute("INSERT INTO ch (id, p) VALUES (1, 1)")
    pair.execute("UPDATE pa SET id = 2")
    pair.check_query("SELECT * FROM ch")
    assert pair.db.query("SELECT p, ts FROM ch") == [(2, dt.datetime(2000, 1, 1))]


def test_alter_column_sets_and_drops_a_clock_default(mysql_pair: MySQLPair) -> None:
    """``ALTER COLUMN c SET DEFAULT CURRENT_TIMESTAMP(3)`` makes the clock the default;
    ``SET DEFAULT 'literal'`` and ``DROP DEFAULT`` replace it (as in MariaDB)."""
    pair = mysql_pair
    pair.execute("CREATE TABLE al (id INT PRIMARY KEY, a DATETIME(3) DEFAULT '2000-01-01')")
    pair.execute("ALTER TABLE al ALTER COLUMN a SET DEFAULT CURRENT_TIMESTAMP(3)")
    pair.execute("INSERT INTO al (id) VALUES (1)")
    pair.execute("ALTER TABLE al ALTER COLUMN a SET DEFAULT '2001-01-01 00:00:00'")
    pair.execute("INSERT INTO al (id) VALUES (2)")
    pair.execute("ALTER TABLE al ALTER COLUMN a DROP DEFAULT")
    pair.execute("INSERT INTO al (id, a) VALUES (3, NULL)")
    pair.settle()
    sql = "SELECT id, a FROM al ORDER BY id"
    assert_near(pair.db.query(sql), pair.mariadb(sql))
    assert pair.db.query(sql)[1:] == [(2, dt.datetime(2001, 1, 1)), (3, None)]


def test_defaults_survive_a_restart_as_stored(tmp_path: Any) -> None:
    """A default's value is stored when the row is written: reopening the database
    computes none again (and SHOW CREATE TABLE's text reads back to the same table)."""
    path = tmp_path / "db"
    with rivulet.open(path) as db:
        db.execute(DEFAULTS_TABLE)
        db.execute("INSERT INTO r (id, v) VALUES (1, 10)")
        db.settle()
        stored = db.query("SELECT * FROM r")
        schema = db.catalog.require_table("r")
    time.sleep(1.1)
    with rivulet.open(path) as db:
        assert db.query("SELECT * FROM r") == stored
        again = db.catalog.require_table("r")
        assert [(c.default_now, c.on_update_now) for c in again.columns] == [
            (c.default_now, c.on_update_now) for c in schema.columns] == [
            (None, None), (None, None), (0, None), (6, None), (0, 0), (None, 3), (0, None),
            (None, None)]


@pytest.mark.parametrize("column", [
    "d DATE DEFAULT CURRENT_TIMESTAMP", "d INT DEFAULT NOW()",
    "d DATETIME(6) DEFAULT CURRENT_TIMESTAMP", "d DATETIME DEFAULT CURRENT_TIMESTAMP(3)",
    "d DATETIME ON UPDATE CURRENT_TIMESTAMP(2)", "d DATETIME DEFAULT CURDATE()",
    "d DATE DEFAULT CURDATE()",
])
def test_a_default_the_column_cannot_take_is_mysqls_1067(db: rivulet.Database,
                                                         column: str) -> None:
    """MySQL 8's rules: the clock is a default of a DATETIME or TIMESTAMP only, with the
    column's own fractional digits."""
    with pytest.raises(InvalidDefaultError, match="Invalid default value|Invalid ON UPDATE"):
        db.execute(f"CREATE TABLE bad (id INT PRIMARY KEY, {column})")


def test_introspection_shows_the_clock_defaults_as_mysql_8(mysql_pair: MySQLPair) -> None:
    """SHOW CREATE TABLE writes them back as MySQL 8 does (SQLAlchemy reflects that text);
    DESCRIBE and information_schema.COLUMNS show ``CURRENT_TIMESTAMP`` as the default and
    ``DEFAULT_GENERATED on update CURRENT_TIMESTAMP`` as the extra (Django reads those)."""
    mysql_pair.db.execute(DEFAULTS_TABLE)
    server = ServerThread(mysql_pair.db, port=0)
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database="rivulet", autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW CREATE TABLE r")
            text = cur.fetchall()[0][1]
            assert "`made` datetime DEFAULT CURRENT_TIMESTAMP," in text
            assert "`made6` datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)," in text
            assert ("DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP," in text
                    and "ON UPDATE CURRENT_TIMESTAMP(3)," in text)
            cur.execute("SELECT COLUMN_NAME, COLUMN_DEFAULT, EXTRA FROM "
                        "information_schema.COLUMNS WHERE TABLE_NAME = 'r' "
                        "ORDER BY ORDINAL_POSITION")
            assert cur.fetchall() == (
                ("id", None, ""), ("v", None, ""), ("made", "CURRENT_TIMESTAMP",
                                                    "DEFAULT_GENERATED"),
                ("made6", "CURRENT_TIMESTAMP(6)", "DEFAULT_GENERATED"),
                ("stamp", "CURRENT_TIMESTAMP",
                 "DEFAULT_GENERATED on update CURRENT_TIMESTAMP"),
                ("touched", None, "on update CURRENT_TIMESTAMP(3)"),
                ("parens", "CURRENT_TIMESTAMP", "DEFAULT_GENERATED"),
                ("plain", "2000-01-01 00:00:00", ""))
            cur.execute("DESCRIBE r")
            described = {row[0]: (row[4], row[5]) for row in cur.fetchall()}
            assert described["stamp"] == ("CURRENT_TIMESTAMP",
                                          "DEFAULT_GENERATED on update CURRENT_TIMESTAMP")
        shown = rivulet.open(mysql_pair.path + "-copy")
        try:  # (the text SHOW CREATE TABLE gives makes the same table)
            shown.execute(text.split(") ENGINE=")[0] + ")")
            assert shown.catalog.require_table("r").columns == \
                mysql_pair.db.catalog.require_table("r").columns
        finally:
            shown.close()
    finally:
        conn.close()
        server.stop()


# --------------------------------------------------------------------------- expressions


def test_a_constant_expression_default_is_mariadbs(mysql_pair: MySQLPair) -> None:
    """``DEFAULT (3 + 5)`` (MySQL 8.0.13's expression defaults, SQLAlchemy's dialect suite
    writes them): a constant, computed once when the table is made, as MySQL and MariaDB
    compute it for each row; shown back as written, with MySQL 8's DEFAULT_GENERATED."""
    pair = mysql_pair
    pair.execute("CREATE TABLE x (id INT PRIMARY KEY, a INT DEFAULT (3 + 5), "
                 "b VARCHAR(10) DEFAULT (CONCAT('a', 'b')), c DECIMAL(5, 2) DEFAULT (1 / 3), "
                 "d INT DEFAULT (5), e DATE DEFAULT ('2020-01-01'))")
    pair.execute("INSERT INTO x (id) VALUES (1)")
    pair.execute("INSERT INTO x (id, a) VALUES (2, 1)")
    assert pair.check_query("SELECT id, a, b, c, d, e FROM x ORDER BY id")[0][1:3] == (8, "ab")
    column = pair.db.catalog.require_table("x").columns[1]
    assert (column.default, column.default_expr) == (8, "3 + 5")


@pytest.mark.parametrize(("column", "words"), [
    ("a INT DEFAULT (id + 1)", "reads a column"),
    ("a DATETIME DEFAULT (NOW() + 1)", "reads the clock"),
    ("a DOUBLE DEFAULT (RAND())", "RAND"),
    ("a DATE DEFAULT (CURDATE())", "reads the clock other than as CURRENT_TIMESTAMP"),
])
def test_an_expression_default_that_is_no_constant_is_refused(db: rivulet.Database,
                                                              column: str, words: str) -> None:
    """MySQL computes an expression default for each row; rivulet computes it once, so
    one whose value could differ from row to row is refused (1235), by name."""
    with pytest.raises(UnsupportedSqlError, match=words):
        db.execute(f"CREATE TABLE y (id INT PRIMARY KEY, {column})")


def test_sqlalchemy_writes_and_reflects_server_defaults(tmp_path: Any) -> None:
    """SQLAlchemy's ``server_default=func.now()``, a ``TIMESTAMP(fsp=6)`` with ``ON UPDATE``
    and an expression default, over the MySQL protocol: created, written (the defaults
    filled, ``func.now()`` in an UPDATE) and reflected as SQLAlchemy reflects MySQL 8."""
    sa = pytest.importorskip("sqlalchemy")
    from sqlalchemy.dialects import mysql

    with rivulet.open(tmp_path / "db") as db:
        server = ServerThread(db, port=0)
        try:
            engine = sa.create_engine(f"mysql+pymysql://root:@127.0.0.1:{server.port}/rivulet")
            metadata = sa.MetaData()
            table = sa.Table(
                "sa_t", metadata,
                sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
                sa.Column("made", sa.DateTime, server_default=sa.func.now()),
                sa.Column("stamp", mysql.TIMESTAMP(fsp=6), server_default=sa.text(
                    "CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)")),
                sa.Column("n", sa.Integer, server_default=sa.text("(3 + 5)")))
            metadata.create_all(engine)
            with engine.begin() as conn:
                conn.execute(table.insert().values(id=1))
                (_, made, stamp, n), = conn.execute(sa.select(table)).all()
                assert near(made, utc_now()) and near(stamp, utc_now()) and n == 8
                time.sleep(0.01)
                conn.execute(table.update().values(n=table.c.n + 1))
                (_, made2, stamp2, n2), = conn.execute(sa.select(table)).all()
                assert (made2, n2) == (made, 9) and stamp2 > stamp
            reflected = {c["name"]: c["default"] for c in sa.inspect(engine).get_columns("sa_t")}
            assert reflected == {"id": None, "made": "CURRENT_TIMESTAMP",
                                 "stamp": "CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)",
                                 "n": "(3 + 5)"}
            engine.dispose()
        finally:
            server.stop()
