"""The MySQL oracle itself (tests/mysql_oracle.py): it starts, it sees MySQL's semantics,
and it catches a wrong answer or a wrong type."""

from __future__ import annotations

import decimal

import pytest
from mysql_oracle import MySQLPair, assert_same_as_mysql, inline_params


def test_the_oracle_answers_with_mysql_semantics(mysql_pair: MySQLPair) -> None:
    # Where SQLite would differ: a string compared with a number is converted.
    assert mysql_pair.mariadb("SELECT '12abc' = 12, 5 / 2, 'a' = 'a '") == [
        (1, decimal.Decimal("2.5000"), 0)]


def test_parameters_are_inlined_as_the_drivers_do(mysql_pair: MySQLPair) -> None:
    conn = mysql_pair.conn
    assert inline_params("SELECT ?, '?', ?", [1, "it's"], conn) == \
        "SELECT 1, '?', 'it\\'s'"
    assert inline_params("SELECT ?", [1.5], conn) == "SELECT 1.5e0"
    with pytest.raises(AssertionError):
        inline_params("SELECT ?", [], conn)


def test_a_wrong_answer_or_type_is_caught(mysql_pair: MySQLPair) -> None:
    conn = mysql_pair.conn
    assert_same_as_mysql("SELECT 5 / 2", (), [(decimal.Decimal("2.5000"),)], conn)
    with pytest.raises(AssertionError, match="disagree"):
        assert_same_as_mysql("SELECT 5 / 2", (), [(decimal.Decimal("2.4000"),)], conn)
    with pytest.raises(AssertionError, match="column 1"):
        assert_same_as_mysql("SELECT 5 / 2", (), [(2.5,)], conn)
    with pytest.raises(AssertionError, match="column 1"):
        assert_same_as_mysql("SELECT 5 / 2", (), [(decimal.Decimal("2.5"),)], conn)


def test_a_statement_must_fail_on_both_sides_or_neither(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
    mysql_pair.execute("INSERT INTO t VALUES (1, 2)")
    mysql_pair.execute("INSERT INTO t VALUES (1, 3)")  # both refuse the duplicate key
    mysql_pair.check_query("SELECT id, a FROM t")
