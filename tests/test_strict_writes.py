"""Writes in MySQL's strict mode: a conversion MySQL reports as truncating fails the INSERT
or UPDATE that makes it, and the statement changes nothing; a read makes the same
conversion and answers (MySQL warns).

What MariaDB does (the oracle of ``tests/mysql_oracle.py``, set up with MySQL 8's default
``sql_mode``, STRICT_TRANS_TABLES among it), established statement by statement:

* Text read as a number that is not all a number ('abc', '12x', '', '1e', '0x1', '1 x';
  spaces after it are no truncation) fails an UPDATE with 1292 (SQLSTATE 22007),
  ``Truncated incorrect DOUBLE value: 'abc'`` (DECIMAL where compared with an integer,
  INTEGER in ``CAST(... AS SIGNED)`` and a function's integer argument), wherever the
  UPDATE makes it: its WHERE (``v = 5``, ``IN``, ``BETWEEN``, ``NULLIF``, ``CASE v WHEN``,
  a text as a truth value), its SET (``v + 1``, ``ABS(v)``, ``CAST``). Only the rows the
  UPDATE reads count: by primary key, the rows with those keys; and ``AND``, ``OR``, ``IF``,
  ``IFNULL``, ``COALESCE`` and ``CASE`` evaluate an operand only where they need it.
* Text or a number read as a date that is none fails it likewise (``Truncated incorrect
  datetime value``, ``Incorrect datetime value`` in a function), and so does text read as
  a TIME that is none.
* An INSERT's VALUES are evaluated the same way. A value for a column: text for a numeric
  column that is a number followed by more is 1265 (``Data truncated``), text with no
  number 1366, text for a DATE/DATETIME that is no date 1292, a number out of range 1264.
* A DELETE's WHERE only warns in MariaDB (it deletes); rivulet follows MariaDB (MySQL 8
  would fail that DELETE too).
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

import pymysql
import pytest
from mysql_oracle import MySQLPair, inline_params

import rivulet
from rivulet.errors import TruncatedValueError, error_code
from rivulet.server.mysql.server import ServerThread
from rivulet.values.conversions import MODE, strict_mode, text_to_float, to_temporal

TEXTS = "CREATE TABLE t (id INT PRIMARY KEY, n INT, v VARCHAR(20))"
ROWS = [(1, 0, "abc"), (2, 0, "5"), (3, 0, "12x")]

OK = "ok"


def outcome(pair: MySQLPair, sql: str, params: Sequence[Any] = ()) -> Any:
    """Run a write on both sides: the MySQL error code both fail with, or the rows both
    changed (``(OK, n)``); fails the test where they differ."""
    try:
        with pair.conn.cursor() as cur:
            theirs: Any = (OK, cur.execute(inline_params(sql, params, pair.conn)))
    except pymysql.MySQLError as exc:
        theirs = exc.args[0]
    try:
        mine: Any = (OK, pair.db.execute(sql, list(params)))
    except rivulet.RivuletError as exc:
        mine = error_code(exc).mysql
    assert mine == theirs, f"{sql} {list(params)}: rivulet {mine}, MariaDB {theirs}"
    return mine


def check(pair: MySQLPair, cases: Sequence[tuple[str, Any]]) -> None:
    """Each statement's outcome is the one pinned (MariaDB's), on both sides; then the
    tables read back alike."""
    for sql, expected in cases:
        got = outcome(pair, sql)
        assert got == expected or (expected == OK and got[0] == OK), (sql, got, expected)
    for table in sorted(pair.db.catalog.tables):
        pair.check_query(f"SELECT * FROM {table}")


@pytest.fixture
def texts(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(TEXTS)
    mysql_pair.insert_many("t", ROWS)
    return mysql_pair


# --------------------------------------------------------------------------- UPDATE


def test_an_update_comparing_text_with_a_number_fails_for_the_rows_it_reads(
        texts: MySQLPair) -> None:
    check(texts, [
        ("UPDATE t SET n = 1 WHERE v = 5", 1292),  # 'abc' is no number
        ("UPDATE t SET n = 1 WHERE id = 2 AND v = 5", (OK, 1)),  # reads row 2 only
        ("UPDATE t SET n = 2 WHERE id = 1 AND v = 5", 1292),
        ("UPDATE t SET n = 3 WHERE id = 2 OR v = 5", 1292),
        ("UPDATE t SET n = 4 WHERE id IN (2, 4) AND v = 5", (OK, 1)),
        ("UPDATE t SET n = 4 WHERE id IN (1, 2) AND v = 5", 1292),
        ("UPDATE t SET n = 5 WHERE n = 99 AND v = 5", (OK, 0)),  # AND stops at false
        ("UPDATE t SET n = 5 WHERE v = 5 AND n = 99", 1292),
        ("UPDATE t SET n = 5 WHERE id > 3 AND v = 5", (OK, 0)),
        # Only the rows the conditions on the key select are read, wherever they are.
        ("UPDATE t SET n = 5 WHERE v = 5 AND id > 3", (OK, 0)),
        ("UPDATE t SET n = 5 WHERE v = 5 AND id >= 2", 1292),  # '12x'
        ("UPDATE t SET n = 5 WHERE v = 5 AND (id = 2 OR id = 4)", (OK, 1)),
        ("UPDATE t SET n = 5 WHERE v = 5 AND id BETWEEN 1 AND 2", 1292),
        ("UPDATE t SET n = 5 WHERE id = 3 AND id < 1", (OK, 0)),
        ("UPDATE t SET n = 5 WHERE id = 3 AND id IN ('', 5)", 1292),  # reads 3
        ("UPDATE t SET n = 5 WHERE v = 5 AND id < 'a'", (OK, 0)),  # 'a' is 0: no row
        ("UPDATE t SET n = 5 WHERE id = 2 OR id = 'a'", (OK, 0)),  # reads 2 (and 0)
        # MySQL cannot bound an integer key by 2.5, nor by a mix of numbers and text:
        ("UPDATE t SET n = 5 WHERE v = 5 AND id = 2.5", 1292),  # reads every row
        ("UPDATE t SET n = 5 WHERE v = 5 AND id < 0.5", 1292),
        ("UPDATE t SET n = 5 WHERE id IN (2, 'a')", 1292),
        ("UPDATE t SET n = 5 WHERE v = 5 AND id IN (2.0, 5.0)", (OK, 0)),
        ("UPDATE t SET n = 6 WHERE v = 5e0", 1292),
        ("UPDATE t SET n = 6 WHERE v = 5.5", 1292),
        ("UPDATE t SET n = 6 WHERE v > 5", 1292),
        ("UPDATE t SET n = 6 WHERE n = 'abc'", 1292),  # the text is the literal
        ("UPDATE t SET n = 6 WHERE id = '2x'", 1292),
        ("UPDATE t SET n = 6 WHERE id = 'x'", (OK, 0)),  # no row has key 0: none read
        ("UPDATE t SET n = 7 WHERE v = '5'", (OK, 1)),  # text with text: no conversion
        ("UPDATE t SET n = 8 WHERE v IN (5, 6)", 1292),
        ("UPDATE t SET n = 8 WHERE n IN ('abc', 1)", 1292),
        ("UPDATE t SET n = 8 WHERE v BETWEEN 1 AND 6", 1292),
        ("UPDATE t SET n = 8 WHERE NOT (v = 5)", 1292),
        ("UPDATE t SET n = 8 WHERE NULLIF(v, 5) IS NULL", 1292),
        ("UPDATE t SET n = 8 WHERE CASE v WHEN 5 THEN 1 END", 1292),
        ("UPDATE t SET n = 8 WHERE id = 3 AND v", 1292),  # text as a truth value
        ("UPDATE t SET n = 8 WHERE id = 2 AND v", (OK, 1)),
        ("UPDATE t SET n = 9 WHERE v LIKE 5", (OK, 1)),  # (text context: no conversion)
    ])


def test_an_operand_is_read_even_where_the_other_is_null(mysql_pair: MySQLPair) -> None:
    """MySQL reads the first operand of a comparison before it finds the second NULL (and
    both of ``<=>`` and of arithmetic): 'abc' compared with a NULL number fails the UPDATE."""
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT, v VARCHAR(20), d DATE, "
                       "m INT)")
    mysql_pair.insert_many("t", [(1, None, "abc", None, None), (2, 0, "5", None, 1)])
    check(mysql_pair, [
        ("UPDATE t SET n = 7 WHERE v = m", 1292),
        ("UPDATE t SET n = 7 WHERE m = v", (OK, 0)),  # stops at the NULL m
        ("UPDATE t SET n = 7 WHERE v < m", 1292),
        ("UPDATE t SET n = 7 WHERE v <=> m", 1292),
        ("UPDATE t SET n = 7 WHERE m <=> v", 1292),
        ("UPDATE t SET n = 7 WHERE v IN (m, 7)", 1292),
        ("UPDATE t SET n = 7 WHERE m IN (v, 7)", (OK, 0)),
        ("UPDATE t SET n = 7 WHERE NULLIF(v, m) IS NULL", 1292),
        ("UPDATE t SET n = 7 WHERE NULLIF(m, v) IS NULL", (OK, 1)),
        ("UPDATE t SET n = 7 WHERE CASE v WHEN m THEN 1 END IS NULL", 1292),
        ("UPDATE t SET n = 7 WHERE (m + v) IS NULL", 1292),
        ("UPDATE t SET n = m + v", 1292),
        ("UPDATE t SET n = 8 WHERE v = d", 1292),  # read as a date
        ("UPDATE t SET n = 8 WHERE d = v", (OK, 0)),
        ("UPDATE t SET n = 8 WHERE 5 = d", 1292),
        ("UPDATE t SET n = 8 WHERE d = 5", (OK, 0)),
        ("UPDATE t SET n = 8 WHERE d <=> 5", 1292),
        ("UPDATE t SET n = 8 WHERE 5 IN (d, 6)", 1292),
        ("UPDATE t SET n = 8 WHERE 5 BETWEEN d AND 6", 1292),
        ("UPDATE t SET n = 8 WHERE d BETWEEN 5 AND 6", (OK, 0)),
    ])


def test_constant_conditions_are_decided_before_any_row_is_read(texts: MySQLPair) -> None:
    """MySQL evaluates the conditions of an UPDATE's WHERE that read no column (joined to it
    by AND and OR) while it plans the statement: a truncation there only warns, and an AND
    with a false one reads no row."""
    check(texts, [
        ("UPDATE t SET n = 1 WHERE 1 = 'abc'", (OK, 0)),
        ("UPDATE t SET n = 1 WHERE n > 0 AND 1 = 'abc'", (OK, 0)),
        ("UPDATE t SET n = 2 WHERE n >= 0 OR 'x' > 1", (OK, 3)),
        ("UPDATE t SET n = 3 WHERE v = 5 AND 1 = 0", (OK, 0)),  # no row read: no error
        ("UPDATE t SET n = 3 WHERE v = 5 AND 1 = 1", 1292),
        ("UPDATE t SET n = 3 WHERE ('x' >= 1.5) XOR n > 0", 1292),  # (XOR: per row)
        ("UPDATE t SET n = 3 WHERE n = ABS('12x')", 1292),  # (in a comparison: per row)
    ])
    assert outcome(texts, "UPDATE t SET n = 4 WHERE v = 5 AND ? = 1", [1]) == 1292
    assert outcome(texts, "UPDATE t SET n = 4 WHERE v = 5 AND ? = 1", [0]) == (OK, 0)


def test_an_update_with_parameters_fails_as_its_literals_do(texts: MySQLPair) -> None:
    assert outcome(texts, "UPDATE t SET n = ? WHERE v = ?", [1, 5]) == 1292
    assert outcome(texts, "UPDATE t SET n = ? WHERE id = ? AND v = ?", [1, 2, 5]) == (OK, 1)
    assert outcome(texts, "UPDATE t SET n = ? WHERE id = ?", ["abc", 2]) == 1366
    texts.check_query("SELECT * FROM t")


def test_text_is_all_a_number_when_only_spaces_follow_it(mysql_pair: MySQLPair) -> None:
    texts = ["5 ", " 5", "\t5\n", "5\r", ".5", "5.", "+1", "1e5", "", "  ", "-", ".", "e5",
             "1e", "0x1", "1 x", "1.5.", "1e400", "\u0663", "5\0"]
    mysql_pair.execute(TEXTS)
    mysql_pair.insert_many("t", [(i, 0, s) for i, s in enumerate(texts)])
    failing = []
    for i, text in enumerate(texts):
        if outcome(mysql_pair, f"UPDATE t SET n = n + 1 WHERE id = {i} AND v + 0 = 5") == 1292:
            failing.append(text)
    assert failing == ["", "  ", "-", ".", "e5", "1e", "0x1", "1 x", "1.5.", "1e400",
                       "\u0663", "5\0"]
    mysql_pair.check_query("SELECT * FROM t")


def test_an_update_fails_on_a_truncating_conversion_in_its_set_list(texts: MySQLPair) -> None:
    check(texts, [
        ("UPDATE t SET n = v + 1 WHERE id = 2", (OK, 1)),
        ("UPDATE t SET n = v + 1", 1292),
        ("UPDATE t SET n = ABS(v) WHERE id = 3", 1292),
        ("UPDATE t SET n = ROUND(v) WHERE id = 1", 1292),
        ("UPDATE t SET n = CAST(v AS SIGNED) WHERE id = 3", 1292),
        ("UPDATE t SET n = CAST('1.5' AS SIGNED) WHERE id = 3", 1292),
        ("UPDATE t SET n = CAST(' 12 ' AS SIGNED) WHERE id = 3", (OK, 1)),
        ("UPDATE t SET n = CAST(v AS DECIMAL(5, 2)) WHERE id = 1", 1292),
        ("UPDATE t SET n = CAST(123456 AS DECIMAL(5, 2)) WHERE id = 2", 1264),  # (saturated)
        ("UPDATE t SET n = 7 WHERE CAST(id * 1000 AS DECIMAL(4, 1)) > 0", 1264),
        ("UPDATE t SET n = CAST(999.994 AS DECIMAL(5, 2)) WHERE id = 2", (OK, 1)),
        ("UPDATE t SET n = CAST(v AS DOUBLE) WHERE id = 1", 1292),
        ("UPDATE t SET v = LEFT(v, '1x') WHERE id = 1", 1292),
        ("UPDATE t SET n = v = 0 WHERE id = 1", 1292),
        ("UPDATE t SET n = NULLIF(v, 5) IS NULL", 1292),
        ("UPDATE t SET n = CASE WHEN v = 5 THEN 1 ELSE 0 END", 1292),
        ("UPDATE t SET n = IF(v = 5, 1, 0)", 1292),
        ("UPDATE t SET v = CONCAT(v, 1)", (OK, 3)),  # (text context)
        # An operand MySQL does not evaluate cannot fail the statement.
        ("UPDATE t SET n = IF(1, 7, 'a' + 1) WHERE id = 1", (OK, 1)),
        ("UPDATE t SET n = IFNULL(8, 'a' + 1) WHERE id = 1", (OK, 1)),
        ("UPDATE t SET n = COALESCE(9, 'a' + 1) WHERE id = 1", (OK, 1)),
        ("UPDATE t SET n = CASE WHEN 1 THEN 10 ELSE 'a' + 1 END WHERE id = 1", (OK, 1)),
        ("UPDATE t SET n = (0 AND 'a' + 1) WHERE id = 1", (OK, 1)),
        ("UPDATE t SET n = (1 OR 'a' + 1) WHERE id = 1", (OK, 1)),
        ("UPDATE t SET n = 1 WHERE id = 1 AND NOT (n = 99 AND v = 5)", (OK, 0)),
        ("UPDATE t SET n = IF(0, 7, 'a' + 1) WHERE id = 1", 1292),
    ])


def test_an_update_stores_text_in_a_column_as_mysql_strict_mode_does(texts: MySQLPair) -> None:
    check(texts, [
        ("UPDATE t SET n = 'abc' WHERE id = 2", 1366),
        ("UPDATE t SET n = '' WHERE id = 2", 1366),
        ("UPDATE t SET n = '12abc' WHERE id = 2", 1265),
        ("UPDATE t SET n = v WHERE id = 3", 1265),  # '12x'
        ("UPDATE t SET n = ' 12' WHERE id = 2", (OK, 1)),
        ("UPDATE t SET n = '13 ' WHERE id = 2", (OK, 1)),
        ("UPDATE t SET n = '99999999999' WHERE id = 2", 1264),
        # a fraction or an exponent: rounded half away from zero, as MySQL stores it
        ("UPDATE t SET n = '2.5' WHERE id = 1", (OK, 1)),
        ("UPDATE t SET n = ' -0.5 ' WHERE id = 2", (OK, 1)),
        ("UPDATE t SET n = '1e2' WHERE id = 3", (OK, 1)),
        ("UPDATE t SET n = '-0.01' WHERE id = 3", (OK, 1)),
        ("UPDATE t SET n = '.5e1' WHERE id = 1", (OK, 1)),
        ("UPDATE t SET n = '2147483647.5' WHERE id = 2", 1264),
        ("UPDATE t SET n = '1e999999999' WHERE id = 2", 1264),
        ("UPDATE t SET n = '2.5x' WHERE id = 2", 1265),
        ("INSERT INTO t VALUES (4, '3.5', 'x'), (5, '-2.5e0', 'y')", (OK, 2)),
    ])


def test_date_text_is_read_as_mysql_reads_it_when_stored_and_compared(
        mysql_pair: MySQLPair) -> None:
    """A DATE or DATETIME column takes date text as MySQL reads it anywhere: any
    punctuation between the parts, two-digit years, digits alone, the hour alone after a
    space, a 'T' or a punctuation mark ('2021-02-03.5' is 05:00); text that is not a whole
    date fails (1292). A comparison reads the same text the same way."""
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, d DATE, ts DATETIME(6), "
                       "v VARCHAR(30))")
    check(mysql_pair, [
        ("INSERT INTO w VALUES (1, '2021/02/03', '21-2-3 5', '2021-02-03.5')", (OK, 1)),
        ("INSERT INTO w VALUES (2, '20210203', '20210203101112.5', '2021-02-03 5')", (OK, 1)),
        ("INSERT INTO w VALUES (3, ' 2021-02-03 10:11:12 ', '2021-02-03T4:5', 'x')", (OK, 1)),
        ("INSERT INTO w VALUES (4, '2021-02-03x', '2021-02-03', 'x')", 1292),
        ("INSERT INTO w VALUES (5, '2021-02-30', '2021-02-03', 'x')", 1292),
        ("INSERT INTO w VALUES (6, '2021-02-03', '2021-02-03 04:05:06+01:00', 'x')", 1292),
        ("UPDATE w SET ts = v WHERE id < 3", (OK, 1)),  # (row 1 holds 05:00 already)
    ])
    mysql_pair.check_query("SELECT id, ts = v, d < v, ts > '2021-02-03 4', d = '21.2.3' FROM w")


def test_dates_and_times_read_from_text_in_an_update(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE d (id INT PRIMARY KEY, n INT, v VARCHAR(30), day DATE, "
                       "at DATETIME, tm TIME)")
    mysql_pair.insert_many("d", [
        (1, 0, "abc", dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 10), dt.timedelta(hours=10)),
        (2, 0, "2024-01-03", dt.date(2024, 1, 3), None, None),
    ])
    check(mysql_pair, [
        ("UPDATE d SET n = 1 WHERE day = 'abc'", 1292),
        ("UPDATE d SET n = 1 WHERE day = ''", 1292),
        ("UPDATE d SET n = 1 WHERE day = 20241302", 1292),
        ("UPDATE d SET n = 1 WHERE day > v", 1292),
        ("UPDATE d SET n = 1 WHERE id = 2 AND day = v", (OK, 1)),
        ("UPDATE d SET n = 2 WHERE id = 1 AND day = '2024-01-02x'", 1292),
        ("UPDATE d SET n = 2 WHERE id = 1 AND day = '2024-01-02 '", (OK, 1)),
        ("UPDATE d SET n = 3 WHERE id = 1 AND day = 20240102", (OK, 1)),
        ("UPDATE d SET n = 3 WHERE id = 1 AND at = '2024-01-02 10:00:00x'", 1292),
        ("UPDATE d SET n = 3 WHERE id = 1 AND at = 1.5", 1292),
        ("UPDATE d SET n = YEAR(v) WHERE id = 1", 1292),
        ("UPDATE d SET n = YEAR('2024-01-02x') WHERE id = 1", 1292),
        ("UPDATE d SET n = YEAR(v) WHERE id = 2", (OK, 1)),
        ("UPDATE d SET day = CAST(v AS DATE) WHERE id = 1", 1292),
        ("UPDATE d SET n = DATEDIFF(v, day) WHERE id = 1", 1292),
        ("UPDATE d SET day = v WHERE id = 1", 1292),
        ("UPDATE d SET at = v WHERE id = 2", (OK, 1)),
        ("UPDATE d SET n = 4 WHERE tm = 'abc'", 1292),
        ("UPDATE d SET n = 4 WHERE tm = '10:00:00x'", 1292),
        ("UPDATE d SET n = 4 WHERE tm = '10:00:00 '", (OK, 1)),
        ("UPDATE d SET n = 4 WHERE id = 1 AND tm < 99.99", 1292),  # (no time: 99 seconds)
        ("UPDATE d SET n = 6 WHERE id = 1 AND tm < 100000.5", (OK, 1)),
        ("UPDATE d SET n = 5 WHERE id = 1 AND TIME_TO_SEC(v) > 0", 1292),
        ("UPDATE d SET n = 5 WHERE id = 1 AND HOUR(v) > 0", 1292),
        ("UPDATE d SET n = 5 WHERE id = 1 AND CAST(v AS TIME) IS NULL", 1292),
        ("UPDATE d SET tm = 'abc' WHERE id = 1", 1292),
    ])


# --------------------------------------------------------------------------- INSERT


def test_an_insert_fails_on_a_truncating_conversion_in_its_values(texts: MySQLPair) -> None:
    check(texts, [
        ("INSERT INTO t VALUES (4, 'a' + 1, 'x')", 1292),
        ("INSERT INTO t VALUES (4, 1, 'x' = 1)", 1292),
        ("INSERT INTO t VALUES (4, CAST('1x' AS SIGNED), 'x')", 1292),
        ("INSERT INTO t VALUES (4, 1, CONCAT('x', 1))", (OK, 1)),
    ])


def test_an_insert_stores_values_as_mysql_strict_mode_does(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, n INT, x DECIMAL(5, 2), f DOUBLE, "
                       "day DATE, at DATETIME, s VARCHAR(4))")
    check(mysql_pair, [
        ("INSERT INTO w (id, n) VALUES (1, '12abc')", 1265),
        ("INSERT INTO w (id, n) VALUES (1, 'abc')", 1366),
        ("INSERT INTO w (id, n) VALUES (1, '')", 1366),
        ("INSERT INTO w (id, n) VALUES (1, '  ')", 1366),
        ("INSERT INTO w (id, n) VALUES (1, '-')", 1366),
        ("INSERT INTO w (id, n) VALUES (1, '0x10')", 1265),
        ("INSERT INTO w (id, n) VALUES (1, '1_000')", 1265),
        ("INSERT INTO w (id, n) VALUES (1, '2147483648')", 1264),
        ("INSERT INTO w (id, n) VALUES (1, 1), (2, 'a')", 1366),  # the whole batch refused
        ("INSERT INTO w (id, x) VALUES (1, '1.2x')", 1265),
        ("INSERT INTO w (id, x) VALUES (1, '  ')", 1366),
        ("INSERT INTO w (id, f) VALUES (1, '1.5x')", 1265),
        ("INSERT INTO w (id, f) VALUES (1, 'x')", 1366),
        ("INSERT INTO w (id, day) VALUES (1, 'abc')", 1292),
        ("INSERT INTO w (id, day) VALUES (1, '')", 1292),
        ("INSERT INTO w (id, day) VALUES (1, '2024-01-02x')", 1292),
        ("INSERT INTO w (id, day) VALUES (1, '2024-13-02')", 1292),
        ("INSERT INTO w (id, day) VALUES (1, '0000-00-00')", 1292),
        ("INSERT INTO w (id, at) VALUES (1, '2024-01-02 10:00:00x')", 1292),
        ("INSERT INTO w (id, s) VALUES (1, 'abcde')", 1406),
        ("INSERT INTO w VALUES (1, ' 1 ', '1.5 ', '2.5 ', '2024-01-02 10:00:00', "
         "'2024-01-02 10:00:00', 'ab')", (OK, 1)),
    ])


def test_numbers_written_to_integer_columns_are_rounded_as_mysql_rounds_them(
        mysql_pair: MySQLPair) -> None:
    """A DOUBLE to its even neighbour at a half (2.5e0 is 2), a DECIMAL half away from
    zero (2.5 is 3): no error, in INSERT and UPDATE."""
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, n INT, u INT UNSIGNED)")
    check(mysql_pair, [
        ("INSERT INTO w VALUES (1, 2.5e0, 2.5), (2, 3.5e0, 0.5e0), (3, -2.5e0, 1.5e0)",
         (OK, 3)),
        ("INSERT INTO w VALUES (4, 2147483647.5e0, 0)", 1264),
        ("INSERT INTO w VALUES (4, -2.5, -0.5)", 1264),
        ("INSERT INTO w VALUES (4, 0, -0.01)", 1264),  # a negative DECIMAL, before rounding
        ("INSERT INTO w VALUES (4, 0, -0.01e0)", (OK, 1)),  # a DOUBLE rounded first
        ("UPDATE w SET n = n + 0.5e0, u = u + 0.5", (OK, 4)),
    ])


def test_a_write_dividing_by_zero_fails_with_1365_and_a_read_answers_null(
        mysql_pair: MySQLPair) -> None:
    """MySQL's default ``sql_mode`` (ERROR_FOR_DIVISION_BY_ZERO, strict) fails an INSERT or
    UPDATE that divides by zero with ``/``, ``DIV``, ``%`` or ``MOD``, in its SET or its
    WHERE, for the rows it reads; a NULL operand, a branch not taken and a DELETE's WHERE
    do not; a read answers NULL."""
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, n INT, d DECIMAL(5,2), f DOUBLE)")
    check(mysql_pair, [
        ("INSERT INTO w VALUES (1, 0, 0, 0)", (OK, 1)),
        ("INSERT INTO w VALUES (2, 1/0, 0, 0)", 1365),
        ("INSERT INTO w VALUES (2, 0, 1 DIV 0, 0)", 1365),
        ("INSERT INTO w VALUES (2, 0, 0, MOD(1, 0))", 1365),
        ("INSERT INTO w VALUES (2, 0, 0, 1e0 / 0)", 1365),
        ("INSERT INTO w VALUES (2, 0, 0, 1 % 0.0)", 1365),
        ("UPDATE w SET n = 5 / n", 1365),
        ("UPDATE w SET d = d / 0 WHERE id = 1", 1365),
        ("UPDATE w SET n = 1 WHERE 1 / n IS NULL", 1365),
        ("UPDATE w SET n = 1 WHERE id = 99 AND 1 / n IS NULL", (OK, 0)),
        ("UPDATE w SET n = IF(n = 0, 7, 1 / n)", (OK, 1)),
        ("INSERT INTO w VALUES (3, NULL / 0, 1 / NULL, 0)", (OK, 1)),
        ("DELETE FROM w WHERE 1 / (n - 7) IS NULL", (OK, 2)),  # (NULL n too)
        ("INSERT INTO w VALUES (4, 5, 0, 0)", (OK, 1)),
    ])
    mysql_pair.check_query("SELECT id, 1 / 0, n / 0, n DIV 0, MOD(n, 0) FROM w")


def test_numbers_written_to_text_columns_are_the_text_mysql_shows(
        mysql_pair: MySQLPair) -> None:
    """A DOUBLE in its shortest form (0.0e0 is '0', 1e20 '1e20'), a DECIMAL as written with
    no negative zero, TRUE as '1'."""
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, name VARCHAR(30), t TEXT)")
    check(mysql_pair, [
        ("INSERT INTO w VALUES (1, 0.0e0, 1.50), (2, -0.0e0, -0.00), (3, 1.5e0, 1e2), "
         "(4, 1e20, 100), (5, 100e0, TRUE), (6, 0.1e0, 12345678901234567890.5), "
         "(7, -4.720386770620856e+16, 0.000001)", (OK, 7)),
        ("UPDATE w SET name = 2.5e0 * 2, t = 1.0 * 3 WHERE id < 3", (OK, 2)),
    ])


def test_a_later_assignment_reads_the_value_an_earlier_one_stored(
        mysql_pair: MySQLPair) -> None:
    """``SET x = 59, w = CONCAT(w, x)`` reads x as the column stored it (59.000 in a
    DECIMAL(6,3), 2 in an INT given 2.5e0), not the value before its conversion."""
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, x DECIMAL(6,3), w VARCHAR(40), "
                       "i INT, f DOUBLE)")
    check(mysql_pair, [
        ("INSERT INTO w VALUES (1, 1, 'a', 1, 0.5e0)", (OK, 1)),
        ("UPDATE w SET x = 59, w = CONCAT(w, x)", (OK, 1)),
        ("UPDATE w SET i = 2.5e0, w = CONCAT(w, '-', i)", (OK, 1)),
        ("UPDATE w SET f = 1, x = 1.23456, w = CONCAT(w, '-', f, '-', x * 2)", (OK, 1)),
    ])


# --------------------------------------------------------------------------- DELETE, reads


def test_a_delete_warns_and_deletes_as_mariadb_does(texts: MySQLPair) -> None:
    check(texts, [
        ("DELETE FROM t WHERE id = 1 AND v = 5", (OK, 0)),
        ("DELETE FROM t WHERE id = 3 AND v + 0 = 12", (OK, 1)),
        ("DELETE FROM t WHERE v = 5", (OK, 1)),
    ])


def test_reads_make_the_same_conversions_and_answer(texts: MySQLPair) -> None:
    for sql in ["SELECT id FROM t WHERE v = 5", "SELECT id, v + 1, v = 5, NULLIF(v, 5) FROM t",
                "SELECT id, CAST(v AS SIGNED), YEAR(v), v IN (5, 12) FROM t"]:
        texts.check_query(sql)
    texts.create_view("by_v", "SELECT id FROM t WHERE v = ?")
    texts.check_view("by_v", 12)


# --------------------------------------------------------------------------- rivulet alone


@pytest.fixture
def db() -> Iterator[rivulet.Database]:
    path = tempfile.mkdtemp(prefix="rivulet-strict-")
    database = rivulet.open(path)
    database.execute(TEXTS)
    database.table("t").insert_many(ROWS)
    database.execute("CREATE VIEW ones AS SELECT id FROM t WHERE n = 1")
    database.settle()
    try:
        yield database
    finally:
        database.close()
        shutil.rmtree(path, ignore_errors=True)


def test_a_failed_update_is_1292_with_mysqls_message_and_changes_nothing(
        db: rivulet.Database) -> None:
    with pytest.raises(TruncatedValueError) as caught:
        db.execute("UPDATE t SET n = 1 WHERE v = 5")
    assert str(caught.value) == "Truncated incorrect DECIMAL value: 'abc'"
    code = error_code(caught.value)
    assert (code.mysql, code.sqlstate) == (1292, "22007")
    db.settle()
    assert db.query("SELECT n FROM t") == [(0,), (0,), (0,)]
    assert db.view("ones").lookup() == []
    assert not MODE.strict  # (the mode is the write's only)
    assert db.query("SELECT v + 0 FROM t WHERE id = 1") == [(0.0,)]


def test_an_update_in_a_transaction_is_as_strict_and_the_transaction_goes_on(
        db: rivulet.Database) -> None:
    """Inside a transaction the failed UPDATE undoes itself only, as a failed statement
    does in MySQL; the transaction's other writes commit."""
    with db.transaction() as tx:
        tx.execute("UPDATE t SET n = 2 WHERE id = 2")
        with pytest.raises(TruncatedValueError):
            tx.execute("UPDATE t SET n = 1 WHERE v = 5")
        with pytest.raises(TruncatedValueError):
            tx.execute("UPDATE t SET n = v + 1 WHERE id = 1")
    db.settle()
    assert sorted(db.query("SELECT id, n FROM t")) == [(1, 0), (2, 2), (3, 0)]
    assert not MODE.strict


def test_the_error_reaches_a_mysql_client_with_its_code(db: rivulet.Database) -> None:
    server = ServerThread(db, port=0)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                               database="rivulet", autocommit=True)
        with conn.cursor() as cur:
            with pytest.raises(pymysql.err.MySQLError) as caught:
                cur.execute("UPDATE t SET n = n + 1 WHERE v > 1")
            assert caught.value.args == (1292, "Truncated incorrect DECIMAL value: 'abc'")
            cur.execute("SELECT id FROM t WHERE v > 1 ORDER BY id")  # a read answers
            assert cur.fetchall() == ((2,), (3,))
            assert cur.execute("UPDATE t SET n = n + 1 WHERE id = 2 AND v > 1") == 1
        conn.close()
    finally:
        server.stop()


def test_conversions_fail_only_in_strict_mode() -> None:
    assert text_to_float("12x") == 12.0
    assert to_temporal("abc") is None
    with strict_mode():
        assert text_to_float(" 12 \t") == 12.0
        with pytest.raises(TruncatedValueError, match="DOUBLE value: '12x'"):
            text_to_float("12x")
        with pytest.raises(TruncatedValueError, match="Incorrect datetime value: 'abc'"):
            to_temporal("abc")
        assert to_temporal("2024-01-02 ") == dt.date(2024, 1, 2)
    assert not MODE.strict
    assert text_to_float("\u0663") == 0.0  # MySQL's digits are 0-9 only
