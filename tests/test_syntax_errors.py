"""Syntax errors are MySQL's: error 1064 (SQLSTATE 42000), in rivulet's words modelled on
MySQL's ("You have an error in your SQL syntax near '...' at line L, column C"), never the
parser's (no class names, no tokens). What sqlglot's mysql dialect reads but MySQL rejects
(``NULLS FIRST``, ``ILIKE``, ``::``, ``LIMIT ALL``, a table named by a string...) is refused
the same way, with the construct named, because rivulet would otherwise answer it, and
differently from MySQL, which answers with an error.

Every refusal is checked against MariaDB, the MySQL oracle: it refuses the statement too
(MySQL 8 refuses the few MariaDB accepts: those are listed apart). Valid MySQL that rivulet
does not run is 1235, not a syntax error. Internal exceptions never escape: the statements
here used to raise TypeError, AttributeError, a Python SyntaxError or a NameError from
sqlglot's executor over the MySQL protocol.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

import rivulet
from rivulet.errors import (
    ArgumentCountError,
    ParameterCountError,
    ParameterError,
    RivuletError,
    SqlSyntaxError,
    UnknownFunctionError,
    UnsupportedSqlError,
    error_code,
)
from rivulet.server.mysql.server import ServerThread

TABLE = "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, s VARCHAR(20))"
ROWS = [(1, None, 5, "x"), (2, 3, None, "y"), (3, 1, 2, "X"), (4, 2, 2, None)]

#: What a message of rivulet's must never show: the parser's classes and tokens.
INTERNALS = ("<class", "Token", "sqlglot", "Traceback", "NoneType", "Step '")


@pytest.fixture
def pair(mysql_pair: Any) -> Any:
    mysql_pair.execute(TABLE)
    mysql_pair.insert_many("t", ROWS)
    mysql_pair.settle()
    return mysql_pair


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path_factory.mktemp("syntax") / "db")
    database.execute(TABLE)
    database.table("t").insert_many(ROWS)
    database.settle()
    yield database
    database.close()


def refused(db: rivulet.Database, sql: str, kind: type[RivuletError] = SqlSyntaxError,
            params: tuple = ()) -> RivuletError:
    """The error ``db`` raises for ``sql``: exactly a ``kind``, with a clean message."""
    with pytest.raises(RivuletError) as caught:
        db.execute(sql, params)
    exc = caught.value
    assert type(exc) is kind, (sql, type(exc), exc)
    assert not any(word in str(exc) for word in INTERNALS), str(exc)
    return exc


def mariadb_refuses(pair: Any, sql: str, code: int = 1064) -> str:
    """MariaDB's message for ``sql``, which it must refuse with ``code``."""
    with pytest.raises(pymysql.err.MySQLError) as caught:
        pair.mariadb(sql)
    assert caught.value.args[0] == code, (sql, caught.value.args)
    return str(caught.value.args[1])


def near(message: str) -> tuple[str, int]:
    """The ``near '...' at line N`` of a MySQL-style syntax error."""
    match = re.search(r"near '(.*)' at line (\d+)", message, re.S)
    assert match is not None, message
    return match.group(1), int(match.group(2))


# --------------------------------------------------------------------------- plain errors

#: Syntax errors where rivulet stops where MySQL does: the same ``near`` text and line.
AS_MYSQL_SAYS = [
    "SELCT 1",
    "SELCT a FROM t",
    "UPDTE t SET a = 1",
    "SELECT 1 * FROM t",
    "SELECT",
    "SELECT FROM t",
    "SELECT FROM DUAL",
    "SELECT id FROM t WHERE id = = 1",
    "SELECT id, FROM t",
    "SELECT (a FROM t",
    "SELECT a) FROM t",
    "SELECT id FROM t WHERE",
    "SELECT id FROM t ORDER BY",
    "SELECT id FROM t GROUP BY a HAVING",
    "SELECT id FROM t WHERE a = 1 AND",
    "INSERT INTO t VALUES (1, 'a'",
    "SELECT 'abc FROM t",
    "SELECT id FROM t /* open",
    "SELECT id\nFROM t\nWHERE id = = 3",
    "SELECT id FROM t ORDER BY a NULLS FIRST",
    "SELECT id FROM t ORDER BY a DESC NULLS LAST",
    "SELECT id FROM t WHERE s ILIKE 'x'",
    "SELECT a::CHAR FROM t",
    "SELECT id FROM t LIMIT -1",
    "SELECT id FROM t LIMIT 1.5",
    "SELECT id FROM t LIMIT '1'",
    "SELECT TOP 1 id FROM t",
    "SELECT [a] FROM t",
    "SELECT id FROM t WHERE s GLOB 'x'",
    "SELECT id FROM \"t\"",
    "SELECT id FROM t AS \"u\"",
    "CREATE TABLE \"x\" (id INT)",
    "SELECT id FROM t WHERE a = ANY (1, 2)",
    "SELECT id FROM t WHERE a = :x",
    "SELECT CAST(a AS BIGINT) FROM t",
    "SELECT CAST(a AS TEXT) FROM t",
]


@pytest.mark.parametrize("sql", AS_MYSQL_SAYS)
def test_a_syntax_error_is_1064_near_where_mysql_stops(pair: Any, sql: str) -> None:
    exc = refused(pair.db, sql)
    code = error_code(exc)
    assert (code.mysql, code.sqlstate) == (1064, "42000")
    assert str(exc).startswith("You have an error in your SQL syntax near '")
    assert near(str(exc)) == near(mariadb_refuses(pair, sql))
    # the column is where the quoted text starts on that line
    line_text = sql.split("\n")[exc.line - 1]
    assert line_text[exc.col - 1:].startswith(exc.near), (exc.col, exc.near)


def test_the_reported_examples(db: rivulet.Database) -> None:
    """The issue's statements: a typo of a keyword is 1064, not 1235; the parser's words
    ('Required keyword', a class, a token) are gone."""
    assert str(refused(db, "SELCT 1")) == (
        "You have an error in your SQL syntax near 'SELCT 1' at line 1, column 1")
    assert str(refused(db, "SELECT 1 * FROM t")) == (
        "You have an error in your SQL syntax near 'FROM t' at line 1, column 12")
    assert str(refused(db, "SELECT FROM WHERE")).startswith(
        "You have an error in your SQL syntax near 'WHERE' at line 1, column 13")


# --------------------------------------------------------------------------- not MySQL

#: sqlglot reads these, MySQL does not: (statement, words the reason must contain).
NOT_MYSQL = [
    ("SELECT id FROM t ORDER BY b DESC NULLS FIRST", "NULLS FIRST"),
    ("DELETE DELETE", "names no table"),  # (a crash, 'bool' has no 'walk': the SQL fuzzer)
    ("SELECT id FROM t ORDER BY b NULLS LAST LIMIT 2", "NULLS LAST"),
    ("SELECT id FROM t WHERE s ILIKE 'X'", "ILIKE"),
    ("SELECT id FROM t WHERE s NOT ILIKE 'X'", "ILIKE"),
    ("SELECT a::CHAR FROM t", "::"),
    ("SELECT id FROM t WHERE a == 1", "=="),
    ("SELECT id FROM t LIMIT ALL", "LIMIT ALL"),
    ("SELECT id FROM t LIMIT 1 + 1", "LIMIT"),
    ("SELECT id FROM t LIMIT -1", "LIMIT"),
    ("SELECT id FROM t LIMIT 2 OFFSET -1", "OFFSET"),
    ("SELECT id FROM t OFFSET 1", "OFFSET"),
    ("SELECT [a] FROM t", "["),
    ("SELECT ARRAY[1, 2] FROM t", "["),
    ("SELECT id FROM t WHERE a IS DISTINCT FROM b", "DISTINCT FROM"),
    ("SELECT id FROM t WHERE a IS NOT DISTINCT FROM b", "DISTINCT FROM"),
    ("SELECT id FROM t WHERE a BETWEEN SYMMETRIC 2 AND 1", "SYMMETRIC"),
    ("SELECT a FROM t GROUP BY ALL", "GROUP BY ALL"),
    ("SELECT * EXCEPT (a) FROM t", "EXCEPT"),
    ("SELECT * REPLACE (a AS b) FROM t", "REPLACE"),
    ("SELECT id FROM t PIVOT (SUM(a) FOR b IN (1))", "PIVOT"),
    ("SELECT id FROM t TABLESAMPLE (10 PERCENT)", "TABLESAMPLE"),
    ("SELECT id FROM t QUALIFY a = 1", "QUALIFY"),
    ("SELECT id FROM t WHERE s GLOB 'x'", "GLOB"),
    ("SELECT t.id FROM t LEFT SEMI JOIN t u ON t.id = u.id", "SEMI JOIN"),
    ("SELECT id FROM t u(x)", "column names"),
    ("SELECT id FROM \"t\"", "string"),
    ("SELECT id FROM t AS \"u\" WHERE id = 1", "string"),
    ("SELECT id FROM t WHERE a = ANY (1, 2)", "ANY"),
    ("SELECT id FROM t WHERE a IN ()", "IN ()"),
    ("SELECT id FROM t WHERE a NOT IN ()", "IN ()"),
    ("SELECT id FROM t WHERE a = :x", "named parameters"),
    ("SELECT CAST(a AS BIGINT) FROM t", "BIGINT"),
    ("SELECT CAST(s AS TEXT) FROM t", "TEXT"),
    ("SELECT CONVERT(a, BIGINT) FROM t", "BIGINT"),
    ("SELECT POSITION('x', s) FROM t", "POSITION"),
    ("FROM t", "starts with SELECT"),
    ("FROM t -- ' EXISTS DELETE", "starts with SELECT"),
    ("UPDATE t UPDATE", "SET"),
    ("UPDATE t", "SET"),
]

#: Not MySQL 8 either, though MariaDB takes them: only rivulet's answer is checked.
NOT_MYSQL_8 = [
    ("SELECT id FROM t FETCH FIRST 1 ROWS ONLY", "FETCH FIRST"),
    ("SELECT id FROM t OFFSET 1 ROWS", "OFFSET"),
    ("SELECT CAST(a AS INT) FROM t", "INT"),
    ("SELECT CAST(a AS INTEGER) FROM t", "INTEGER"),
    ("SELECT CAST(a AS VARCHAR(3)) FROM t", "VARCHAR"),
]


@pytest.mark.parametrize(("sql", "words"), NOT_MYSQL, ids=[s for s, _ in NOT_MYSQL])
def test_what_sqlglot_reads_but_mysql_rejects_is_a_syntax_error(pair: Any, sql: str,
                                                                words: str) -> None:
    exc = refused(pair.db, sql)
    assert words in str(exc), str(exc)
    mariadb_refuses(pair, sql)


@pytest.mark.parametrize(("sql", "words"), NOT_MYSQL_8, ids=[s for s, _ in NOT_MYSQL_8])
def test_what_mysql_8_rejects_is_a_syntax_error(db: rivulet.Database, sql: str,
                                                words: str) -> None:
    assert words in str(refused(db, sql))


@pytest.mark.parametrize("sql", [
    "SELECT \"abc\" AS z FROM t",
    "SELECT id FROM t WHERE s = \"x\"",
    "SELECT id FROM t WHERE \"a\" = 0",
    "SELECT a AS \"z\", s 'w' FROM t",
    "SELECT id FROM t WHERE s = 'x' 'y'",
    "SELECT 'a''b', 'a\\'b', 'a\\nb' FROM t",
    "SELECT id FROM t WHERE a = 1--1",
    "SELECT id FROM t WHERE id = 1 # a comment",
    "SELECT id FROM t WHERE a = 1 && b = 5 || id = 2",
    "SELECT id FROM t LIMIT 1, 2",
])
def test_mysql_quotes_comments_and_operators_answer_as_mysql(pair: Any, sql: str) -> None:
    """In MySQL's default sql_mode "x" is a string (only a column alias may be one), '--'
    starts a comment only before a space, '&&' is AND and '||' is OR."""
    pair.check_query(sql)


# --------------------------------------------------------------------------- functions


@pytest.mark.parametrize(("sql", "kind", "code"), [
    ("SELECT IFNULL(a) FROM t", ArgumentCountError, 1582),
    ("SELECT LENGTH(s, 1) FROM t", ArgumentCountError, 1582),
    ("SELECT ROUND(a, 1, 2) FROM t", ArgumentCountError, 1582),
    ("SELECT UPPER() FROM t", ArgumentCountError, 1582),
    ("SELECT ABS(a, 2) FROM t", ArgumentCountError, 1582),
    ("SELECT CONCAT() FROM t", ArgumentCountError, 1582),
    ("SELECT no_such_function(a) FROM t", UnknownFunctionError, 1305),
])
def test_a_call_mysql_refuses_is_refused_with_mysqls_code(pair: Any, sql: str,
                                                          kind: type[RivuletError],
                                                          code: int) -> None:
    exc = refused(pair.db, sql, kind)
    assert error_code(exc).mysql == code
    mariadb_refuses(pair, sql, code)


@pytest.mark.parametrize(("sql", "code"), [
    ("SELECT u.id FROM t JOIN t u ON t.id = u.a WHERE id = 1", 1052),
    ("SELECT a, COUNT(*) FROM t GROUP BY b", 1055),
    ("SELECT id FROM t WHERE COUNT(*) > 1", 1111),
    ("SELECT COUNT(MAX(a)) FROM t", 1111),
    ("SELECT id FROM t UNION SELECT id, a FROM t", 1222),
])
def test_a_statement_mysql_refuses_has_mysqls_code(pair: Any, sql: str, code: int) -> None:
    """Not syntax errors: MySQL names each of these mistakes with a code of its own."""
    with pytest.raises(RivuletError) as caught:
        pair.db.execute(sql)
    assert error_code(caught.value).mysql == code, (sql, caught.value)
    mariadb_refuses(pair, sql, code)


def test_an_insert_row_of_the_wrong_width_has_mysqls_code(pair: Any) -> None:
    with pytest.raises(RivuletError) as caught:
        pair.db.execute("INSERT INTO t VALUES (9, 1)")
    assert error_code(caught.value).mysql == 1136
    with pytest.raises(pymysql.err.MySQLError, match="1136"):
        pair.conn.cursor().execute("INSERT INTO t VALUES (9, 1)")


@pytest.mark.parametrize("sql", [
    "SELECT IF(a, 1) FROM t",
    "SELECT COUNT(a, b) FROM t",
    "SELECT COUNT() FROM t",
    "SELECT SUBSTRING(s) FROM t",
    "SELECT LEFT(s) FROM t",
])
def test_a_call_mysqls_grammar_refuses_is_a_wrong_argument_count(pair: Any, sql: str) -> None:
    """Functions MySQL's grammar names (IF, COUNT, LEFT, ...) are syntax errors there with
    a wrong number of arguments; rivulet says which function and how many."""
    exc = refused(pair.db, sql, ArgumentCountError)
    assert "Incorrect parameter count" in str(exc)
    mariadb_refuses(pair, sql)


# --------------------------------------------------------------------------- internals


@pytest.mark.parametrize(("sql", "kind"), [
    ("SELECT id FROM t LIMIT ALL", SqlSyntaxError),  # was TypeError
    ("SELECT id FROM t LIMIT 1.5", SqlSyntaxError),  # was ValueError
    ("SELECT id FROM t FETCH FIRST 1 ROWS ONLY", SqlSyntaxError),  # was AttributeError
    ("SELECT id FROM t WHERE a IN ()", SqlSyntaxError),  # was a Python SyntaxError
    ("SELECT COUNT() FROM t", ArgumentCountError),  # was AttributeError
    ("SELECT DATE_ADD(s USING utf8mb4) FROM t", SqlSyntaxError),  # AttributeError in sqlglot
    ("SELECT VALUES() FROM t", SqlSyntaxError),  # AttributeError
    ("SELECT VAR_MAP(a) FROM t", UnknownFunctionError),  # IndexError in sqlglot
    ("SELECT ISNULL() FROM t", UnsupportedSqlError),  # AttributeError
    ("SELECT fn(VALUES()) FROM t", SqlSyntaxError),
])
def test_no_internal_exception_escapes(db: rivulet.Database, sql: str,
                                       kind: type[RivuletError]) -> None:
    for run in (lambda: db.execute(sql), lambda: db.query(sql),
                lambda: db.create_view("v_internal", sql)):
        with pytest.raises(RivuletError) as caught:
            run()
        assert type(caught.value) is kind, (sql, caught.value)
        assert not any(word in str(caught.value) for word in INTERNALS), str(caught.value)
    assert "v_internal" not in db.views()


def test_a_parameter_without_a_value_is_a_parameter_count_error(db: rivulet.Database) -> None:
    """It was a plain RivuletError (MySQL error 1105) naming the ad-hoc view."""
    exc = refused(db, "SELECT id FROM t WHERE a = ?", ParameterCountError)
    assert error_code(exc).mysql == 1210
    refused(db, "SELECT id FROM t WHERE a = ?", ParameterCountError, params=(1, 2))
    db.execute("CREATE VIEW by_a AS SELECT id FROM t WHERE a = ?")
    db.execute("CREATE VIEW all_ids AS SELECT id FROM t")
    db.execute("CREATE VIEW in_s AS SELECT id FROM t WHERE s IN (?, ?)")
    db.settle()
    for read in (lambda: db.view("by_a").lookup(), lambda: db.view("all_ids").lookup(1),
                 lambda: db.view("by_a").lookup_many([(1, 2)])):
        with pytest.raises(ParameterCountError):
            read()
    # a list where the values were meant one by one was a TypeError (unhashable)
    for read in (lambda: db.view("by_a").lookup([1]), lambda: db.view("in_s").lookup(["x"]),
                 lambda: db.view("by_a").lookup_many([{"a": 1}]),
                 lambda: db.execute("SELECT id FROM t WHERE a = ?", [[1]])):
        with pytest.raises(ParameterError, match="one by one"):
            read()
    assert db.view("in_s").lookup("x", "y") == [(1,), (2,)]


# --------------------------------------------------------------------------- valid MySQL


@pytest.mark.parametrize(("sql", "words"), [
    ("LOAD DATA INFILE '/etc/passwd' INTO TABLE t", "LOAD DATA"),
    ("LOCK TABLES t WRITE", "LOCK"),
    ("SELECT * INTO OUTFILE '/tmp/x' FROM t", "OUTFILE"),
    ("SELECT id FROM t WHERE a = /*! 1 + */ 1", "/*!"),
    ("SELECT SOUNDEX(s) FROM t", "SOUNDEX()"),
    ("SELECT TO_DAYS(s) FROM t", "TO_DAYS()"),
    ("SELECT ISNULL(a) FROM t", "ISNULL()"),
    ("SELECT LAST_DAY(s) FROM t", "LAST_DAY()"),
    ("SELECT QUARTER(s) FROM t", "QUARTER()"),
])
def test_valid_mysql_rivulet_does_not_run_is_unsupported_not_a_syntax_error(
        db: rivulet.Database, sql: str, words: str) -> None:
    """1235, naming the statement or function (``/*! ... */``: MySQL runs the text in the
    comment, which rivulet would skip; ``TO_DAYS`` and ``ISNULL`` were answered by sqlglot's
    readings of them, ``TO_DAYS`` wrongly)."""
    exc = refused(db, sql, UnsupportedSqlError)
    assert words in str(exc), str(exc)
    assert error_code(exc).mysql == 1235


@pytest.mark.parametrize("name", ["STRPOS", "DATE_TRUNC", "IIF", "LEN", "SIGNUM", "CHARINDEX",
                                  "TS_OR_DS_TO_DATE", "NVL", "TO_CHAR"])
def test_other_dialects_functions_do_not_exist(pair: Any, name: str) -> None:
    """sqlglot's table of functions holds other dialects' too: rivulet answered these.
    (MariaDB has Oracle's NVL and TO_CHAR; MySQL has neither.)"""
    sql = f"SELECT {name}(s, a) FROM t"
    exc = refused(pair.db, sql, UnknownFunctionError)
    assert str(exc).startswith(f"FUNCTION {name} does not exist")
    if name not in ("NVL", "TO_CHAR"):
        mariadb_refuses(pair, sql, 1305)


# --------------------------------------------------------------------------- the wire


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[Any]:
    database = rivulet.open(tmp_path / "db")
    database.execute(TABLE)
    database.table("t").insert_many(ROWS)
    database.settle()
    server = ServerThread(database, port=0)
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database="rivulet", autocommit=True)
    try:
        yield conn
    finally:
        conn.close()
        server.stop()
        database.close()


def wire_error(conn: Any, sql: str) -> tuple[int, str]:
    with pytest.raises(pymysql.err.MySQLError) as caught, conn.cursor() as cursor:
        cursor.execute(sql)
    code, message = caught.value.args[0], str(caught.value.args[1])
    assert not any(word in message for word in INTERNALS), message
    return code, message


def wire_rows(conn: Any, sql: str) -> list[tuple]:
    with conn.cursor() as cursor:
        cursor.execute(sql)
        return list(cursor.fetchall())


def test_a_key_beyond_sqlites_integers_reads_no_row(wire: Any) -> None:
    """A literal made a view's parameter reached SQLite's lookup, which cannot bind an
    integer past 64 bits: error 1105 (an OverflowError). MySQL finds no row."""
    assert wire_rows(wire, "SELECT id FROM t WHERE id = 1180591620717411303424") == []
    assert wire_rows(wire, "SELECT id FROM t WHERE id IN (1, -99999999999999999999)") == [(1,)]


def test_the_mysql_protocol_sends_the_codes(wire: Any) -> None:
    assert wire_error(wire, "SELCT 1") == (
        1064, "You have an error in your SQL syntax near 'SELCT 1' at line 1, column 1")
    assert wire_error(wire, "SELECT 1 * FROM t")[0] == 1064
    assert wire_error(wire, "SELECT id FROM t ORDER BY a NULLS FIRST")[0] == 1064
    assert wire_error(wire, "SELECT fn_x(a) FROM t")[0] == 1305
    assert wire_error(wire, "SELECT IFNULL(a) FROM t")[0] == 1582
    assert wire_error(wire, "SELECT SOUNDEX(s) FROM t")[0] == 1235


def test_a_select_without_from_is_computed_as_mysql_computes_it(wire: Any) -> None:
    """mysql-mimic would answer a SELECT without FROM with sqlglot's Python executor: right
    for a literal, a variable or the session's name, wrong for the rest (``5/2`` a double,
    ``'1abc' = 1`` false, ``0x41`` a number) or a crash (an unknown function was a
    NameError, error 1105). Only the session's values are mimic's; the rest is computed by
    rivulet's planner as MySQL computes it (tests/test_select_without_from.py compares it
    with MariaDB), and what rivulet does not have is refused (1235) by name."""
    assert wire_rows(wire, "SELECT 1") == [(1,)]
    assert wire_rows(wire, "SELECT -1, 'x', NULL") == [(-1, "x", None)]
    assert wire_rows(wire, "SELECT @@version_comment LIMIT 1") == [("rivulet",)]
    assert wire_rows(wire, "SELECT DATABASE(), CURRENT_USER()") == [("rivulet", "root")]
    assert wire_rows(wire, "SELECT 5/2, 1 = '1abc', 1.5, 99999999999999999999") == [
        (decimal.Decimal("2.5000"), 1, decimal.Decimal("1.5"),
         decimal.Decimal("99999999999999999999"))]
    assert wire_rows(wire, "SELECT CONVERT_TZ('2020-01-01 00:00:00', '+00:00', '-05:30')") \
        == [(dt.datetime(2019, 12, 31, 18, 30),)]
    for sql, construct in (("SELECT SOUNDEX('x')", "SOUNDEX"),
                           ("SELECT ROUND(0x41)", "hexadecimal"),
                           ("SELECT FROM_UNIXTIME(0)", "FROM_UNIXTIME")):
        code, message = wire_error(wire, sql)
        assert code == 1235 and construct in message, (sql, code, message)


def test_text_that_ends_inside_a_string_is_refused_at_once(wire: Any) -> None:
    """The server splits a statement's literals off with one regular expression, whose
    string branch took exponential time on a string left open: 30 characters held the
    event loop (and the GIL: every connection, every thread) for minutes."""
    for opening in ("'", '"', "`"):
        sql = f"SELECT id FROM t WHERE s = {opening}" + " abc def" * 200
        started = time.monotonic()
        code, message = wire_error(wire, sql)
        assert code == 1064 and "is not closed" in message, (code, message)
        assert time.monotonic() - started < 5
    assert wire_rows(wire, "SELECT id FROM t WHERE s = 'it''s' OR s = \"y\"") == [(2,)]


def test_sql_modes_that_change_how_sql_reads_are_refused(wire: Any) -> None:
    """Under ANSI_QUOTES "s" is a column; rivulet reads it as a string, as MySQL's default
    sql_mode does, so the mode is refused rather than answered wrongly (SQLAlchemy reads
    @@sql_mode to decide how it quotes names). Modes under which MySQL answers as rivulet
    does, or refuses more, are taken; @@sql_mode says MySQL 8's default, which rivulet
    follows."""
    default = ("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
               "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION")
    assert wire_rows(wire, "SELECT @@sql_mode") == [(default,)]
    for mode in ("ANSI_QUOTES", "ANSI", "PIPES_AS_CONCAT", "NO_BACKSLASH_ESCAPES",
                 "STRICT_TRANS_TABLES,ANSI_QUOTES", "NO_SUCH_MODE"):
        code, message = wire_error(wire, f"SET sql_mode = '{mode}'")
        assert code == 1231 and mode.split(",")[-1] in message, (mode, code, message)
    assert wire_rows(wire, "SELECT @@sql_mode") == [(default,)]
    assert wire_rows(wire, "SELECT \"s\" FROM t WHERE id = 1") == [("s",)]
    for mode in ("TRADITIONAL", "", "strict_trans_tables,only_full_group_by"):
        wire_rows(wire, f"SET sql_mode = '{mode}'")
    assert wire_rows(wire, "SELECT @@sql_mode") == [("STRICT_TRANS_TABLES,ONLY_FULL_GROUP_BY",)]
