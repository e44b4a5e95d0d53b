"""Row constructors compared (``(a, b) = (x, y)``, ``<>``, ``<=>``, ``<``..., ``(a, b) IN
((...), ...)``) against MariaDB: rivulet/sql/rows.py writes each out as the comparisons of
its columns, which must give MySQL's answer, NULLs and mixed types included, through
``db.query`` and through a view kept up to date by writes."""

from __future__ import annotations

import itertools
import random
from decimal import Decimal

import pytest
from mysql_oracle import MySQLPair
from test_mysql_types import check

from rivulet.errors import OperandColumnsError, UnsupportedSqlError

ROWS_TABLE = "CREATE TABLE r (id INT PRIMARY KEY, a INT, b VARCHAR(10), c DECIMAL(6,2))"


def _random_rows(rng: random.Random, ids: range) -> list[tuple]:
    def pick(*values: object) -> object:
        return rng.choice(values)
    return [(i, pick(None, -1, 0, 1, 2, 3), pick(None, "", "x", "1", "2", "1a", "y"),
             pick(None, Decimal("0"), Decimal("1.00"), Decimal("-2.50"), Decimal("2.00")))
            for i in ids]


@pytest.fixture
def rows(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(ROWS_TABLE)
    mysql_pair.insert_many("r", _random_rows(random.Random(7), range(1, 60)))
    return mysql_pair


COMPARISONS = [
    "(a, b) = (1, 'x')", "(a, b) <> (1, 'x')", "(a, b) <=> (NULL, 'x')", "(a, c) = (2, 2)",
    "(a, b) < (2, 'x')", "(a, b) <= (1, '1a')", "(a, b) > (0, 'y')", "(a, c) >= (1, 1)",
    "(b, a) = ('1', 1)", "(b, a) = (1, 1)", "(a, b) = (b, a)", "((a, b), c) = ((1, 'x'), 1)",
    "(a, b) IN ((1, 'x'), (2, 'y'), (3, NULL))", "(a, b) NOT IN ((1, 'x'), (2, '1'))",
    "(a, c) IN ((1, 1.00))", "(a + 1, c) IN ((2, 1), (3, 2))",
    "(1, NULL) IN ((1, 2), (3, 4))", "(a, b, c) = (1, 'x', 1)",
]


@pytest.mark.parametrize("condition", COMPARISONS)
def test_row_comparison_is_mysqls_in_where_and_select(rows: MySQLPair, condition: str) -> None:
    check(rows, f"SELECT id FROM r WHERE {condition}")
    check(rows, f"SELECT id, {condition} AS x FROM r")


def test_row_comparisons_in_a_view_keep_up_with_writes(rows: MySQLPair) -> None:
    sql = ("SELECT id, a, b FROM r WHERE (a, b) IN ((1, 'x'), (2, 'y'), (0, '1')) "
           "OR (a, c) > (2, 1)")
    rows.create_view("kept", sql)
    rng = random.Random(11)
    ids = itertools.count(100)
    for _ in range(8):
        for row in _random_rows(rng, range(next(ids), next(ids))):
            rows.execute("INSERT INTO r VALUES (?, ?, ?, ?)", row)
        rows.execute("UPDATE r SET a = ?, b = ? WHERE (a, b) = (?, ?)",
                     (rng.choice([1, 2, None]), rng.choice(["x", "y"]), rng.choice([0, 1, 2]),
                      rng.choice(["x", "1", "y"])))
        rows.execute("DELETE FROM r WHERE (a, c) = (?, ?)",
                     (rng.choice([-1, 3]), rng.choice([Decimal("0"), Decimal("2.00")])))
        rows.check_view("kept")
        rows.check_query(sql)


def test_a_row_of_parameters_keys_a_view_as_its_columns_would(rows: MySQLPair) -> None:
    rows.create_view("keyed", "SELECT id, c FROM r WHERE (a, b) = (?, ?)")
    for a, b in [(1, "x"), (2, "y"), (0, "1"), (None, "x"), (3, "")]:
        rows.check_view("keyed", a, b)
    check(rows, "SELECT id FROM r WHERE (b, a) = (?, ?) AND c > 0", "x", 1)


def test_rows_of_other_widths_are_mysqls_operand_error(mysql_pair: MySQLPair) -> None:
    db = mysql_pair.db
    for sql in ["SELECT (1, 2) = (1, 2, 3)", "SELECT (1, 2) IN ((1, 2), (1, 2, 3))",
                "SELECT (1, 2) = 1", "SELECT 1 IN ((1, 2))"]:
        with pytest.raises(OperandColumnsError, match="Operand should contain"):
            db.query(sql)


def test_parameters_a_written_out_row_would_repeat_are_refused_by_name(
        mysql_pair: MySQLPair) -> None:
    mysql_pair.execute(ROWS_TABLE)
    db = mysql_pair.db
    with pytest.raises(UnsupportedSqlError, match="row compared with <"):
        db.query("SELECT id FROM r WHERE (a, b) > (?, ?)", [1, "x"])
    with pytest.raises(UnsupportedSqlError, match="row IN a list of several rows"):
        db.query("SELECT id FROM r WHERE (?, b) IN ((1, 'x'), (2, 'y'))", [1])
    with pytest.raises(UnsupportedSqlError, match="row IN a list of several rows"):
        db.query("SELECT id FROM r WHERE (a, b) IN ((?, ?), (?, ?))", [1, "x", 2, "y"])


def test_a_row_list_mixing_classes_in_a_column_is_refused_by_name(rows: MySQLPair) -> None:
    """MariaDB compares a column of a row IN as all its values' aggregate type: ``(2, 'y')
    IN ((1, 1), ('2', 'x'))`` is 1 there, where the rows' equalities make it 0."""
    db = rows.db
    for sql, what in [("(a, b) IN ((1, 1), ('2', 'x'))", "column 1 holds text and numbers"),
                      ("(a, b) IN ((1, 'x'), (a, 'y'))", "column 1 holds a value that is not"),
                      ("(a, b) IN ((1.5, 'x'), (1e0, 'y'))", "exact numbers and DOUBLEs")]:
        with pytest.raises(UnsupportedSqlError, match=what):
            db.query(f"SELECT id FROM r WHERE {sql}")
    check(rows, "SELECT id FROM r WHERE (a, b) IN ((1, 'x'), (NULL, 'y'), (-2, NULL))")


def test_a_row_compared_with_a_subquery_is_refused(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute(ROWS_TABLE)
    for sql in ["SELECT id FROM r WHERE (a, b) = (SELECT 1, 'x')",
                "SELECT id FROM r WHERE (a, b) IN (SELECT a, b FROM r)"]:
        with pytest.raises(UnsupportedSqlError):
            mysql_pair.db.query(sql)
