"""``STDDEV_POP``, ``STDDEV_SAMP``, ``STDDEV``, ``STD``, ``VAR_POP``, ``VAR_SAMP`` and
``VARIANCE`` (rivulet/dataflow/ops/aggregate.py's ``Variance``) against MariaDB: over
integers, DECIMALs, DOUBLEs and text, NULLs, groups of one row and of none, in
``db.query`` and in views kept up to date by inserts, updates and deletes (a delete takes
away exactly what its insert added: the state is exact sums).

The rule for comparing: rivulet's answer is the exactly rounded variance of the values
read as DOUBLEs; MySQL and MariaDB compute it by Welford's recurrence in DOUBLEs, which
may differ in the last bits. For an exact argument both show four places more than it
has (rounded alike); for a DOUBLE the comparison allows a relative 1e-9, as it does for
every DOUBLE (bench/answers.py)."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from mysql_oracle import MySQLPair
from test_mysql_types import check

from rivulet.errors import UnsupportedSqlError

TABLE = """CREATE TABLE m (id INT PRIMARY KEY, g INT, n INT, x DECIMAL(8,3), f DOUBLE,
    s VARCHAR(20), big BIGINT, d DATE)"""


def _row(rng: random.Random, i: int) -> tuple:
    return (i, rng.choice([1, 2, 3, None]),
            rng.choice([None, 0, 1, -7, 100, 3]),
            rng.choice([None, Decimal("1.500"), Decimal("-2.125"), Decimal("99999.999"),
                        Decimal("0.001")]),
            rng.choice([None, 0.1, 1e10, -3.5, 2.0 / 3.0, 1e-5]),
            rng.choice([None, "1.5", "abc", "12x", "-4"]),
            rng.choice([None, 2**62, -(2**61), 9007199254740993, 1]),
            None)


@pytest.fixture
def measures(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(TABLE)
    rng = random.Random(3)
    mysql_pair.insert_many("m", [_row(rng, i) for i in range(1, 30)])
    return mysql_pair


FUNCTIONS = ["STDDEV_POP", "STDDEV_SAMP", "STDDEV", "STD", "VAR_POP", "VAR_SAMP", "VARIANCE"]


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("arg", ["n", "x", "f", "big", "n * 2 + 1"])
def test_spreads_are_mysqls(measures: MySQLPair, fn: str, arg: str) -> None:
    check(measures, f"SELECT g, {fn}({arg}) AS v, COUNT({arg}) AS c FROM m GROUP BY g")
    check(measures, f"SELECT {fn}({arg}) AS v FROM m")


def test_spreads_of_no_rows_and_of_one(measures: MySQLPair) -> None:
    check(measures, "SELECT VAR_SAMP(n), VAR_POP(n), STDDEV_SAMP(f), STD(f) FROM m "
                    "WHERE id = 1")
    check(measures, "SELECT VAR_SAMP(n), VAR_POP(x), STDDEV_SAMP(f) FROM m WHERE id < 0")
    check(measures, "SELECT g, STD(x) FROM m WHERE x IS NULL GROUP BY g")


def test_spreads_of_text_and_in_expressions(measures: MySQLPair) -> None:
    check(measures, "SELECT g, VAR_POP(s) FROM m GROUP BY g")
    check(measures, "SELECT g, ROUND(STDDEV(n), 2), VARIANCE(n) > 10 FROM m GROUP BY g "
                    "HAVING STDDEV_SAMP(n) IS NOT NULL")


def test_views_of_spreads_keep_up_with_writes(measures: MySQLPair) -> None:
    queries = {
        "by_g": ("SELECT g, STDDEV_POP(n) AS a, VAR_SAMP(x) AS b, STD(f) AS c, "
                 "VARIANCE(big) AS d FROM m GROUP BY g"),
        "all": "SELECT STDDEV_SAMP(n) AS a, VAR_POP(x) AS b, COUNT(*) AS c FROM m",
    }
    for name, sql in queries.items():
        measures.create_view(name, sql)
    rng = random.Random(8)
    for k in range(100, 124):
        measures.execute("INSERT INTO m VALUES (?, ?, ?, ?, ?, ?, ?, ?)", _row(rng, k))
        if k % 3 == 0:
            measures.execute("UPDATE m SET n = n + 5, f = f * 3 WHERE g = 2")
            measures.execute("DELETE FROM m WHERE id % 4 = ?", [k % 4])
        for name in queries:
            measures.check_view(name)
    for sql in queries.values():
        measures.check_query(sql)


def test_a_delete_leaves_exactly_the_spread_of_what_remains(measures: MySQLPair) -> None:
    """1e10 added and taken away again leaves no trace (a running DOUBLE would)."""
    measures.create_view("spread", "SELECT g, VAR_POP(f) AS v FROM m GROUP BY g")
    measures.execute("INSERT INTO m (id, g, f) VALUES (900, 3, 1e15), (901, 3, 1e-3)")
    measures.check_view("spread")
    measures.execute("DELETE FROM m WHERE id IN (900, 901)")
    measures.check_view("spread")


@pytest.mark.parametrize("sql,what", [
    ("SELECT STD(d) FROM m", "STDDEV_POP\\(\\) of a date"),
    ("SELECT VARIANCE(DISTINCT n) FROM m", "VAR_POP\\(DISTINCT"),
])
def test_forms_rivulet_does_not_answer_as_mysql_are_refused(measures: MySQLPair, sql: str,
                                                            what: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=what):
        measures.db.query(sql)
