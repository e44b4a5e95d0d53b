"""View and query parameters answer what MySQL answers for the same values written as
literals (docs/sql.md, "Parameters"); parentheses change nothing.

Each case runs through ``db.query(sql, params)`` and through ``CREATE VIEW`` +
``lookup(*params)``, and is compared with MariaDB running the SQL with the values inlined as
drivers inline them (tests/mysql_oracle.py). A parameter is not a filter in rivulet: it
keys the view's reader, and a read looks its value up there, so each case here is a way a
lookup could answer other rows than the literal's comparison finds: a value of another type
than its column (``varchar_col = 1`` finds '1' and '01'), several bounds on one column,
several equalities on one column, NULLs, parameters on the left.
"""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mysql_oracle import MySQLPair, OverTheWire, assert_same_as_mysql

import rivulet
from rivulet.errors import ParameterError, UnsupportedSqlError

D = decimal.Decimal

#: A table of every column type a parameter is compared with; the values are the ones a
#: wrong conversion trips on (text that reads as 1, dates, decimals that round as doubles).
TYPED = ("CREATE TABLE k (id INT PRIMARY KEY, i BIGINT, d DECIMAL(6,2), f DOUBLE, "
         "s VARCHAR(8), dd DATE, ts DATETIME)")
TYPED_ROWS = [
    (1, 1, D("0.10"), 0.1, "1", dt.date(2024, 1, 5), dt.datetime(2024, 1, 5)),
    (2, 7, D("1.50"), 1.5, "01", dt.date(2024, 1, 6), dt.datetime(2024, 1, 5, 10)),
    (3, 1000, D("2.00"), 2.0, "a", dt.date(2023, 12, 31), dt.datetime(2024, 1, 6)),
    (4, -3, D("0.30"), 0.3, " 1", None, None),
    (5, 0, D("7.00"), 7.0, "1.0", dt.date(2024, 1, 5), dt.datetime(2024, 1, 5, 0, 0, 1)),
    (6, None, None, None, "7abc", dt.date(2024, 2, 1), dt.datetime(2024, 2, 1)),
    (7, 2, D("-1.00"), -1.0, "", dt.date(2024, 1, 4), dt.datetime(2024, 1, 4, 23, 59, 59)),
    (8, 1, D("0.00"), 0.0, "1e0", dt.date(2024, 1, 5), dt.datetime(2024, 1, 5)),
    (9, 7, D("7.00"), 7.0, None, dt.date(2024, 1, 6), dt.datetime(2024, 1, 6)),
]

_names = itertools.count()


def typed(pair: MySQLPair) -> MySQLPair:
    pair.execute(TYPED)
    pair.insert_many("k", TYPED_ROWS)
    return pair


def check(pair: MySQLPair, sql: str, *param_sets: list[Any]) -> None:
    """``sql`` answers as MariaDB does for each list of parameters, through ``db.query``
    and through a view of it."""
    name = f"v{next(_names)}"
    pair.create_view(name, sql)
    for params in param_sets:
        pair.check_query(sql, params)
        pair.check_view(name, *params)


# --------------------------------------------------------------------------- IN and ranges


def test_an_in_list_with_a_range_parameter_reads_every_listed_value(
        mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE r (id INT PRIMARY KEY, p INT, s INT)")
    mysql_pair.insert_many("r", [(1, 1, 4), (2, 2, 4), (3, 2, 9), (4, 3, 1), (5, 1, 0)])
    check(mysql_pair, "SELECT p, s FROM r WHERE p IN (?, ?) AND s >= ?",
          [1, 2, 0], [2, 1, 0], [2, 1, 5], [3, 3, 0], [1, None, 0], [1, 2, None])
    check(mysql_pair, "SELECT DISTINCT s FROM r WHERE p IN (?, ?) AND s BETWEEN ? AND ?",
          [1, 2, 0, 5], [2, 3, 1, 9])
    check(mysql_pair, "SELECT id FROM r WHERE p IN (?, ?, ?) AND s < ? ORDER BY s DESC, id",
          [1, 2, 3, 9], [3, 2, 1, 5])


def test_every_bound_on_a_range_column_applies(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    mysql_pair.insert_many("t", [(i, i, i % 3) for i in range(1, 10)])
    check(mysql_pair, "SELECT id FROM t WHERE a < ? AND a <= ?", [7, 4], [4, 7], [5, 5])
    check(mysql_pair, "SELECT id FROM t WHERE a > ? AND a >= ?", [2, 6], [6, 2], [3, 3])
    check(mysql_pair, "SELECT id FROM t WHERE a > ? AND a BETWEEN ? AND ?",
          [5, 1, 8], [1, 3, 6], [0, 2, 2])
    check(mysql_pair, "SELECT id FROM t WHERE a = ? AND a > ?", [5, 4], [5, 5], [5, None])
    check(mysql_pair, "SELECT id FROM t WHERE b = ? AND a > ? AND a < ? AND a <= ?",
          [1, 0, 9, 6], [2, 1, 5, 9])


def test_between_with_reversed_bounds_is_empty(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
    mysql_pair.insert_many("t", [(i, i) for i in range(1, 6)])
    check(mysql_pair, "SELECT id FROM t WHERE a BETWEEN ? AND ?", [4, 2], [2, 4], [3, 3],
          [None, 4], [2, None])


def test_between_text_and_a_number_compares_all_three_as_doubles(mysql_pair: MySQLPair) -> None:
    """MySQL types BETWEEN's three operands together: text with a number is compared as
    numbers throughout (two separate comparisons would compare text with text as text)."""
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, s TEXT, n INT)")
    mysql_pair.insert_many("t", [(1, "a", 1), (2, "2", 2), (3, "5", 5), (4, "2024-1-2", 3),
                                 (5, None, None)])
    sets = [["z", 3], [1, "z"], [7, "2024-02-29"], ["1", "3"], [1, 3], ["😀 é", 3], [1.5, "5"]]
    check(mysql_pair, "SELECT id FROM t WHERE s BETWEEN ? AND ?", *sets)
    check(mysql_pair, "SELECT id FROM t WHERE n BETWEEN ? AND ?", *sets)
    check(mysql_pair, "SELECT id FROM t WHERE s BETWEEN ? AND ? AND s < ?", ["1", 3, "5"],
          [0, "z", "3"])
    for low, high in [("'z'", "3"), ("1", "'z'"), ("7", "'2024-02-29'"), ("'1'", "3")]:
        mysql_pair.check_query(f"SELECT id FROM t WHERE s BETWEEN {low} AND {high}", ())
        mysql_pair.check_query(f"SELECT id FROM t WHERE s NOT BETWEEN {low} AND {high}", ())


def test_a_parameter_may_stand_on_either_side_of_its_comparison(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(5))")
    mysql_pair.insert_many("t", [(1, 1, "1"), (2, 2, "01"), (3, 3, "x"), (4, None, None)])
    check(mysql_pair, "SELECT id FROM t WHERE ? = a", [2], ["2"], [None])
    check(mysql_pair, "SELECT id FROM t WHERE ? < a", [1], [1.5], ["2"])
    check(mysql_pair, "SELECT id FROM t WHERE ? >= a AND ? <= a", [3, 2], [2, 3])
    check(mysql_pair, "SELECT id FROM t WHERE ? = s", [1], ["1"], [0])


# --------------------------------------------------------------------------- types


def test_a_text_column_compares_with_a_number_parameter_as_doubles(
        mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE c (id INT PRIMARY KEY, c VARCHAR(10))")
    mysql_pair.insert_many("c", [(1, "0"), (2, "1"), (3, "a"), (4, "01"), (5, " 1"),
                                 (6, "1.0"), (7, "1x"), (8, None), (9, "1 ")])
    check(mysql_pair, "SELECT id FROM c WHERE c = ?", [1], [0], [1.0], [D("1")], [1.5], ["1"],
          ["01"], ["1 "], [None], [True])
    check(mysql_pair, "SELECT id FROM c WHERE c IN (?, ?, ?)", [0, 1, 2], ["0", "1", "2"],
          [0, "1", None], [2, 3, 4])
    check(mysql_pair, "SELECT id FROM c WHERE c = ? AND id > ?", [1, 2], ["1", 0])
    check(mysql_pair, "SELECT id FROM c WHERE c > ?", [0], [0.5], ["0"], ["1"])
    check(mysql_pair, "SELECT id FROM c WHERE c BETWEEN ? AND ?", [1, 1], [0, 1], ["0", "1"])


def test_a_text_column_under_an_aggregate_compares_with_a_number_parameter(
        mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE c (id INT PRIMARY KEY, c VARCHAR(10), n INT)")
    mysql_pair.insert_many("c", [(1, "0", 5), (2, "1", 6), (3, "a", 7), (4, "01", 8),
                                 (5, "1", 9)])
    check(mysql_pair, "SELECT count(*), min(n), max(c) FROM c WHERE c = ?",
          [1], ["1"], [0], [2], [None])
    check(mysql_pair, "SELECT c, count(*) FROM c WHERE c = ? GROUP BY c", [1], ["1"], [0])
    check(mysql_pair, "SELECT c, max(n) FROM c WHERE c IN (?, ?) GROUP BY c ORDER BY c LIMIT 2",
          [1, 0], ["1", "0"])


def test_an_int_column_compares_with_string_and_fraction_parameters(
        mysql_pair: MySQLPair) -> None:
    typed(mysql_pair)
    values = [[v] for v in (1, 7, 1.0, 1.5, 7.0, D("7.0"), D("7.5"), "1.5", " 7", "1e3",
                            "7abc", "abc", "0", True, None)]
    check(mysql_pair, "SELECT id FROM k WHERE i = ?", *values)
    check(mysql_pair, "SELECT id FROM k WHERE i > ?", *values)
    check(mysql_pair, "SELECT id FROM k WHERE i IN (?, ?)", [" 7", 1.5], ["1e3", D("1.0")])
    check(mysql_pair, "SELECT count(*), sum(f) FROM k WHERE i = ?", *values)


def test_a_decimal_column_finds_decimal_int_float_and_string_parameters(
        mysql_pair: MySQLPair) -> None:
    typed(mysql_pair)
    values = [[v] for v in (D("1.5"), D("1.50"), D("1.500"), D("1.505"), 7, 0, 0.1, 0.3, 1.5,
                            "0.1", "1.5", " 7", "7.00x", None)]
    check(mysql_pair, "SELECT id FROM k WHERE d = ?", *values)
    check(mysql_pair, "SELECT id FROM k WHERE d >= ?", *values)
    check(mysql_pair, "SELECT id FROM k WHERE d IN (?, ?, ?)", [D("0.1"), 7, 0.3],
          ["1.5", 2, D("-1")])
    check(mysql_pair, "SELECT id, d FROM k WHERE f = ?", [D("0.10")], [0.1], ["0.3"], [7])


def test_a_decimal_without_a_scale_is_found_by_its_value(tmp_path: Any) -> None:
    """A DECIMAL without a scale keeps each value as it came ('1.5', '1.50'): a parameter
    finds every value equal to it, as its literal does. (A declared ``DECIMAL`` is
    DECIMAL(10, 0), as in MySQL; a computed DECIMAL column of a table made by CREATE TABLE
    ... AS SELECT has no scale, and MariaDB cannot be the oracle for it.)"""
    db = rivulet.open(tmp_path / "db")
    try:
        db.execute("CREATE TABLE src (id INT PRIMARY KEY, amount DECIMAL(10, 2), n INT)")
        db.execute("CREATE TABLE u AS SELECT id, amount * 1 AS amount, n FROM src")
        assert db.table("u").schema.columns[1].scale is None
        db.table("u").insert_many([(1, D("1.50"), 1), (2, D("2"), 1), (3, D("1.5"), 2),
                                   (4, D("1E+3"), 2), (5, D("1000.000"), 1)])
        for value, literal in [(D("1.5"), "1.5"), (D("1000"), "1000"), (2, "2"), (1.5, "1.5e0")]:
            got = db.query("SELECT id FROM u WHERE amount = ?", [value])
            assert sorted(got) == sorted(
                db.query(f"SELECT id FROM u WHERE amount = {literal}")), value
            got = db.query("SELECT id FROM u WHERE amount = ? AND n = ?", [value, 1])
            assert sorted(got) == sorted(
                db.query(f"SELECT id FROM u WHERE amount = {literal} AND n = 1")), value
        assert sorted(db.query("SELECT id FROM u WHERE amount = ?", [D("1.5")])) == [(1,), (3,)]
    finally:
        db.close()


def test_a_date_and_a_datetime_column_read_string_and_temporal_parameters(
        mysql_pair: MySQLPair) -> None:
    typed(mysql_pair)
    values = [[v] for v in ("2024-01-05", "2024-1-5", "2024-01-05 00:00:00",
                            "2024-01-05 10:00:00", dt.date(2024, 1, 5),
                            dt.datetime(2024, 1, 5), dt.datetime(2024, 1, 5, 10), None)]
    for column in ("dd", "ts"):
        check(mysql_pair, f"SELECT id FROM k WHERE {column} = ?", *values)
        check(mysql_pair, f"SELECT id FROM k WHERE {column} > ?", *values)
        check(mysql_pair, f"SELECT id FROM k WHERE {column} IN (?, ?)",
              ["2024-1-5", dt.date(2024, 1, 6)], ["2024-01-05 10:00:00", "2024-02-01"])
        check(mysql_pair, f"SELECT count(*) FROM k WHERE {column} = ?", *values)


# --------------------------------------------------------------------------- equalities, NULLs


def test_two_equalities_on_one_column_must_both_hold(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
    mysql_pair.insert_many("t", [(1, 1, 1), (2, 1, 2), (3, 2, 3)])
    pairs = [[1, 1], [1, 2], [2, 2], [1, "1"], [1, 1.5], [1, None]]
    check(mysql_pair, "SELECT max(a), count(*) FROM t WHERE a = ? AND a = ?", *pairs)
    check(mysql_pair, "SELECT id FROM t WHERE a = ? AND a = ?", *pairs)
    check(mysql_pair, "SELECT a, count(*) FROM t WHERE a = ? AND a = ? GROUP BY a", *pairs)
    check(mysql_pair, "SELECT id FROM t WHERE a = ? AND b = ? AND a = ?", [1, 2, 1], [1, 2, 2])
    check(mysql_pair, "SELECT id FROM t WHERE a = ? AND a IN (?, ?)", [1, 1, 2], [1, 2, 3],
          [2, 2, 2])
    check(mysql_pair, "SELECT a, max(b) FROM t WHERE a IN (?, ?) AND a = ? GROUP BY a",
          [1, 2, 1], [1, 2, 3])


def test_null_parameters_match_nothing_and_null_safe_equality_matches_nulls(
        mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(5))")
    mysql_pair.insert_many("t", [(1, 1, "1"), (2, None, "x"), (3, 2, None), (4, None, None)])
    check(mysql_pair, "SELECT id FROM t WHERE a = ?", [None], [1])
    check(mysql_pair, "SELECT count(*), max(id) FROM t WHERE a = ?", [None], [1], [9])
    check(mysql_pair, "SELECT id FROM t WHERE a IN (?, ?)", [None, 1], [None, None], [2, 1])
    check(mysql_pair, "SELECT id FROM t WHERE a > ?", [None])
    check(mysql_pair, "SELECT id FROM t WHERE a <=> ?", [None], [1], ["1"], [1.5])
    check(mysql_pair, "SELECT id FROM t WHERE ? <=> s", [None], ["x"], [1])
    check(mysql_pair, "SELECT count(*) FROM t WHERE a <=> ?", [None], [2], [7])
    check(mysql_pair, "SELECT id FROM t WHERE a <=> ? AND s <=> ?", [None, None], [None, "x"],
          [1, "1"])


def test_parameters_of_views_that_join_and_group(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE a (id INT PRIMARY KEY, name VARCHAR(10), n INT)")
    mysql_pair.execute("CREATE TABLE b (id INT PRIMARY KEY, a_id INT, tag VARCHAR(10), "
                       "price DECIMAL(6,2))")
    mysql_pair.insert_many("a", [(1, "x", 1), (2, "01", 2), (3, "1", 3)])
    mysql_pair.insert_many("b", [(1, 1, "red", D("1.50")), (2, 1, "blue", D("2.00")),
                                 (3, 2, "red", D("0.10")), (4, 3, "1", D("7.00"))])
    check(mysql_pair, "SELECT a.id, b.tag FROM a JOIN b ON a.id = b.a_id WHERE a.name = ?",
          ["x"], [1], ["1"], [None])
    check(mysql_pair, "SELECT a.id, b.tag FROM a JOIN b ON a.id = b.a_id WHERE b.tag = ? "
          "AND a.n >= ?", ["red", 2], [1, 0])
    check(mysql_pair, "SELECT b.tag, count(*), sum(b.price) FROM a JOIN b ON a.id = b.a_id "
          "WHERE a.name = ? GROUP BY b.tag", ["x"], [1], [0])
    check(mysql_pair, "SELECT count(*), sum(b.price) FROM a LEFT JOIN b ON a.id = b.a_id "
          "WHERE b.price = ?", [D("1.5")], [0.1], ["2"], [9])
    check(mysql_pair, "SELECT a_id, max(price) FROM b WHERE a_id IN (?, ?) GROUP BY a_id",
          [1, 3], ["1", "03"])


# --------------------------------------------------------------------------- parentheses


PARENTHESIZED = [
    # (with parentheses, without), parameters
    ("SELECT t1.id, t2.v FROM t1 JOIN t2 ON (t1.id = t2.t1_id)",
     "SELECT t1.id, t2.v FROM t1 JOIN t2 ON t1.id = t2.t1_id", []),
    ("SELECT t1.id FROM t1 WHERE (t1.b = ?)", "SELECT t1.id FROM t1 WHERE t1.b = ?", [2]),
    ("SELECT id FROM t1 WHERE ((b = ?)) AND ((c IN (?, ?)))",
     "SELECT id FROM t1 WHERE b = ? AND c IN (?, ?)", [2, "p", "q"]),
    ("SELECT id FROM t1 WHERE (b = ? AND (c = 'p' OR c = 'q'))",
     "SELECT id FROM t1 WHERE b = ? AND (c = 'p' OR c = 'q')", [2]),
    ("SELECT id FROM t1 WHERE (b) = (?) AND (?) < (id)",
     "SELECT id FROM t1 WHERE b = ? AND ? < id", [2, 1]),
    ("SELECT t1.id, t2.v FROM t1 INNER JOIN t2 ON (t1.id = t2.t1_id AND t1.b = t2.v) "
     "WHERE (t1.c = ?)",
     "SELECT t1.id, t2.v FROM t1 INNER JOIN t2 ON t1.id = t2.t1_id AND t1.b = t2.v "
     "WHERE t1.c = ?", ["p"]),
    ("SELECT t1.id, t2.v FROM ((t1 INNER JOIN t2 ON (t1.id = t2.t1_id))) WHERE (t2.v > ?)",
     "SELECT t1.id, t2.v FROM t1 INNER JOIN t2 ON t1.id = t2.t1_id WHERE t2.v > ?", [1]),
    ("SELECT t1.id, t3.w FROM (t1 LEFT OUTER JOIN t2 ON (t1.id = t2.t1_id)) "
     "INNER JOIN (t3) ON (t3.t1_id = t1.id) WHERE (t1.b BETWEEN ? AND ?)",
     "SELECT t1.id, t3.w FROM t1 LEFT OUTER JOIN t2 ON t1.id = t2.t1_id "
     "INNER JOIN t3 ON t3.t1_id = t1.id WHERE t1.b BETWEEN ? AND ?", [1, 3]),
    ("SELECT (b), count(*) FROM (t1) WHERE (c = ?) GROUP BY (b) HAVING (count(*) > 1)",
     "SELECT b, count(*) FROM t1 WHERE c = ? GROUP BY b HAVING count(*) > 1", ["p"]),
    ("SELECT id FROM t1 WHERE (c = ?) AND ((b = ?) OR ((b) = (?)))",
     "SELECT id FROM t1 WHERE c = ? AND (b = ? OR b = ?)", ["p", 1, 3]),
    ("SELECT id FROM t1 WHERE (id = ?) AND ((b + 1) * 2 = 6 OR c = 'q') AND (NOT (b = 3))",
     "SELECT id FROM t1 WHERE id = ? AND ((b + 1) * 2 = 6 OR c = 'q') AND NOT b = 3", [2]),
]


@pytest.mark.parametrize(("with_parens", "without", "params"), PARENTHESIZED)
def test_parentheses_change_nothing(mysql_pair: MySQLPair, with_parens: str, without: str,
                                    params: list[Any]) -> None:
    mysql_pair.execute("CREATE TABLE t1 (id INT PRIMARY KEY, b INT, c VARCHAR(5))")
    mysql_pair.execute("CREATE TABLE t2 (id INT PRIMARY KEY, t1_id INT, v INT)")
    mysql_pair.execute("CREATE TABLE t3 (id INT PRIMARY KEY, t1_id INT, w INT)")
    mysql_pair.insert_many("t1", [(1, 1, "p"), (2, 2, "p"), (3, 2, "q"), (4, 3, "p")])
    mysql_pair.insert_many("t2", [(1, 1, 1), (2, 2, 2), (3, 2, 5), (4, 9, 9)])
    mysql_pair.insert_many("t3", [(1, 1, 10), (2, 3, 30), (3, 4, 40)])
    check(mysql_pair, with_parens, params)
    check(mysql_pair, without, params)


def test_parentheses_do_not_change_what_is_refused(tmp_path: Any) -> None:
    db = rivulet.open(tmp_path / "db")
    try:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)")
        for sql in ("SELECT id FROM t WHERE a = ? AND (b = ? OR a = ?)",
                    "SELECT id FROM t WHERE (a = ? AND (b = ? OR a = ?))",
                    "SELECT id FROM t WHERE a = ? AND b + 1 = ?",
                    "SELECT id FROM t WHERE (a = ?) AND ((b + 1) = (?))"):
            with pytest.raises(ParameterError, match="unsupported use of a parameter"):
                db.query(sql, [1, 2, 3][:sql.count("?")])
        # A group of joins on the right of a JOIN is refused by name (MySQL takes it).
        with pytest.raises(UnsupportedSqlError, match="parenthesized JOIN"):
            db.query("SELECT t.id FROM t JOIN (t AS u JOIN t AS w ON u.a = w.b) "
                     "ON t.id = u.id")
    finally:
        db.close()


# --------------------------------------------------------------------------- over the wire


def test_literals_and_prepared_values_over_the_wire_compare_as_mysql(
        mysql_pair: MySQLPair) -> None:
    """The MySQL server turns the literals of a text query into parameters (``c = 1``
    becomes ``c = ?`` with the value 1): they must still compare as literals."""
    typed(mysql_pair)
    mysql_pair.settle()
    with OverTheWire(mysql_pair) as wire:
        texts = [
            "SELECT id FROM k WHERE s = 1", "SELECT id FROM k WHERE (s = 1)",
            "SELECT id FROM k WHERE s = '1'", "SELECT id FROM k WHERE s IN (0, 1)",
            "SELECT id FROM k WHERE s > 0", "SELECT id FROM k WHERE i = '1e3'",
            "SELECT id FROM k WHERE i = 7.0", "SELECT id FROM k WHERE i = 1.5",
            "SELECT id FROM k WHERE d = 1.5", "SELECT id FROM k WHERE d = 7",
            "SELECT id FROM k WHERE d = 0.1e0", "SELECT id FROM k WHERE dd = '2024-1-5'",
            "SELECT id FROM k WHERE ts = '2024-01-05'", "SELECT count(*) FROM k WHERE s = 1",
            "SELECT id FROM k WHERE i < 7 AND i <= 1", "SELECT id FROM k WHERE i <=> NULL",
        ]
        for sql in texts * 2:  # (the second time, the shape's view is made already)
            wire.check_text(sql)
        for sql, params in [("SELECT id FROM k WHERE s = %s", [1]),
                            ("SELECT id FROM k WHERE s IN (%s, %s)", [0, "1"]),
                            ("SELECT id FROM k WHERE d = %s", [D("1.5")]),
                            ("SELECT id FROM k WHERE (dd = %s)", [dt.date(2024, 1, 5)])]:
            wire.check_text(sql, params)
        # Server-side prepared statements: the values come typed (an int, a date).
        for sql, params in [("SELECT id FROM k WHERE s = ?", [1]),
                            ("SELECT id FROM k WHERE i = ?", ["1e3"]),
                            ("SELECT id FROM k WHERE dd = ?", [dt.datetime(2024, 1, 5)]),
                            ("SELECT id FROM k WHERE (i < ?) AND (i <= ?)", [7, 1])]:
            wire.check_prepared(sql, params)


# --------------------------------------------------------------------------- generated


COLUMNS = ["i", "d", "f", "s", "dd", "ts"]
NUMBERS = [0, 1, 7, -3, 1000, 1.0, 1.5, 0.1, 0.3, D("1.5"), D("0.10"), D("7"), D("-1.00"),
           True]
TEXTS = ["1", "01", " 7", "1e3", "7abc", "1.5", "abc", "0.1", "", " 1"]
DATES = ["2024-01-05", "2024-1-5", "2024-01-05 00:00:00", "2024-01-05 10:00:00",
         dt.date(2024, 1, 5), dt.date(2024, 1, 6), dt.datetime(2024, 1, 5),
         dt.datetime(2024, 1, 5, 10)]
OPERATORS = ["=", "<", "<=", ">", ">=", "<=>"]


def values_for(column: str) -> st.SearchStrategy[Any]:
    """Values to compare ``column`` with. A date column's values are dates and date texts:
    how MySQL compares a date with a number or a non-date text is another matter (the
    literal's semantics, tests/test_mysql_semantics.py), not the parameter's."""
    pool = DATES if column in ("dd", "ts") else NUMBERS + TEXTS
    return st.one_of(st.sampled_from(pool), st.none())


@st.composite
def comparisons(draw: st.DrawFn) -> tuple[str, list[Any]]:
    """A WHERE over ``k`` with one to three parameter conditions (``col op ?``,
    ``col IN (?, ...)``, ``col BETWEEN ? AND ?``, the parameter on either side)."""
    conditions: list[str] = []
    params: list[Any] = []
    for _ in range(draw(st.integers(1, 3))):
        column = draw(st.sampled_from(COLUMNS))
        shape = draw(st.sampled_from(["op", "op", "flipped", "in", "between"]))
        if shape == "in":
            n = draw(st.integers(1, 3))
            conditions.append(f"{column} IN ({', '.join('?' * n)})")
            params += [draw(values_for(column)) for _ in range(n)]
        elif shape == "between":
            conditions.append(f"{column} BETWEEN ? AND ?")
            params += [draw(values_for(column)), draw(values_for(column))]
        else:
            op = draw(st.sampled_from(OPERATORS))
            conditions.append(f"{column} {op} ?" if shape == "op" else f"? {op} {column}")
            params.append(draw(values_for(column)))
    grouped = draw(st.booleans())
    select = "SELECT count(*), max(id)" if grouped else "SELECT id"
    return f"{select} FROM k WHERE {' AND '.join(conditions)}", params


def literal_sql(sql: str, params: list[Any], conn: Any) -> str:
    """``sql`` with each ``?`` written as the literal a driver writes for its value."""
    parts = sql.split("?")
    return parts[0] + "".join(conn.escape(p) + rest for p, rest in zip(params, parts[1:]))


def test_generated_parameter_comparisons_answer_as_literals_and_as_mysql(
        mysql_pair: MySQLPair) -> None:
    typed(mysql_pair)
    mysql_pair.settle()
    db = mysql_pair.db

    @settings(max_examples=150, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(comparisons())
    def run(case: tuple[str, list[Any]]) -> None:
        sql, params = case
        try:
            got = db.query(sql, params)
        except UnsupportedSqlError:
            return  # two range columns, two IN lists on one column: refused (docs/sql.md)
        as_literals = db.query(literal_sql(sql, params, mysql_pair.conn))
        assert sorted(got, key=repr) == sorted(as_literals, key=repr), (sql, params)
        assert_same_as_mysql(sql, params, got, mysql_pair.conn)

    run()


def test_writes_by_primary_key_find_what_their_literal_finds(mysql_pair: MySQLPair) -> None:
    """An UPDATE or DELETE whose WHERE pins the primary key finds the rows MySQL's ``=``
    finds, not only the key converted to the column's type ('01' = 1 on a VARCHAR key)."""
    pair = mysql_pair
    pair.execute("CREATE TABLE s (k VARCHAR(5) PRIMARY KEY, n INT)")
    pair.insert_many("s", [("1", 1), ("01", 2), (" 1", 3), ("1.0", 4), ("2", 5), ("20", 6)])
    pair.execute("UPDATE s SET n = 10 WHERE k = ?", [2])
    pair.execute("DELETE FROM s WHERE k = 1")
    pair.check_query("SELECT k, n FROM s")
    pair.execute("CREATE TABLE d (k DECIMAL(6,2) PRIMARY KEY, n INT)")
    pair.insert_many("d", [(D("0.50"), 1), (D("1.00"), 2), (D("2.00"), 3)])
    pair.execute("UPDATE d SET n = 9 WHERE k = 0.5")
    pair.execute("UPDATE d SET n = 8 WHERE k = 0.505")
    pair.execute("UPDATE d SET n = 7 WHERE k = ?", ["1"])
    pair.execute("DELETE FROM d WHERE k IN (2, 1.5)")
    pair.check_query("SELECT k, n FROM d")
    pair.execute("CREATE TABLE i (k TINYINT PRIMARY KEY, n INT)")
    pair.insert_many("i", [(1, 1), (2, 2), (3, 3)])
    pair.execute("UPDATE i SET n = 5 WHERE k = 300")
    pair.execute("UPDATE i SET n = 6 WHERE k = '1'")
    pair.execute("DELETE FROM i WHERE k = 2.0")
    pair.execute("DELETE FROM i WHERE k = 3.5")
    pair.check_query("SELECT k, n FROM i")


def test_a_range_parameter_that_is_no_date_is_the_zero_date(mysql_pair: MySQLPair) -> None:
    """Text that is no date, compared with a DATE or DATETIME column, is the zero date in
    MySQL (before every date): a range view reads it so, as the literal does."""
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, b DATE NOT NULL, c DATETIME)")
    mysql_pair.insert_many("t", [(1, dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5)),
                                 (2, dt.date(1999, 12, 31), None)])
    check(mysql_pair, "SELECT id FROM t WHERE b >= ?", ["abc"], [""], [7], ["2000-01-01"])
    check(mysql_pair, "SELECT id FROM t WHERE c < ?", ["x"], [7], ["2024-01-02 03:04:06"])
