"""``LN``, ``LOG``, ``LOG2``, ``LOG10``, ``EXP``, ``POW``/``POWER`` and ``SQRT``
(rivulet/values/powers.py) against MariaDB: DOUBLE results over negative, zero, NULL,
huge, DECIMAL, date and numeric-text arguments, NULL outside the domain, through
``db.query`` and a view kept up to date by writes; a write taking the logarithm of 0 fails
as MySQL's strict mode fails it."""

from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal

import pytest
from mysql_oracle import MySQLPair
from test_mysql_types import check

from rivulet.errors import InvalidLogarithmError
from rivulet.values.powers import exp_, pow_

POWERS_TABLE = """CREATE TABLE p (id INT PRIMARY KEY, i INT, d DECIMAL(10,3), f DOUBLE,
    s VARCHAR(20), dt DATE)"""

POWERS_ROWS = [
    (1, 8, Decimal("2.500"), 100.0, "100", dt.date(2020, 1, 2)),
    (2, -8, Decimal("-0.125"), -1.5, "-4", dt.date(1999, 12, 31)),
    (3, 0, Decimal("0.000"), 0.0, "0", None),
    (4, None, None, None, None, None),
    (5, 1, Decimal("1.000"), 1e300, "1e3", dt.date(2000, 1, 1)),
    (6, 1000000, Decimal("9999999.999"), 1e-300, "abc", dt.date(1970, 1, 1)),
    (7, 2, Decimal("0.001"), 2.0, " 16x", dt.date(2024, 2, 29)),
]


@pytest.fixture
def powers(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(POWERS_TABLE)
    mysql_pair.insert_many("p", POWERS_ROWS)
    return mysql_pair


@pytest.mark.parametrize("expr", [
    "LN(i)", "LN(d)", "LN(f)", "LN(s)", "LN(dt)", "LOG(i)", "LOG(f)", "LOG(2, i)",
    "LOG(i, 64)", "LOG(d, f)", "LOG(1, i)", "LOG(NULL, i)", "LOG(i, NULL)", "LOG(-2, 8)",
    "LOG2(i)", "LOG2(f)", "LOG2(s)", "LOG10(i)", "LOG10(d)", "LOG10(f)", "LOG10(s)",
    "LOG10(dt)", "EXP(i / 1000000)", "EXP(d / 10000000)", "EXP(-f)", "EXP(s / 1000)", "SQRT(i)",
    "SQRT(d)", "SQRT(f)", "SQRT(s)", "SQRT(dt)", "POW(i, 2)", "POWER(d, 3)", "POW(2, i / 1000000)",
    "POW(f, 0)", "POW(i, -1 * (i <> 0))", "POW(ABS(d), 0.5)", "POW(ABS(s), 0.5)", "POW(-8, 3)",
    "POW(0, 0)", "LN(7 / 3)", "SQRT(i) + 1", "CONCAT(SQRT(i))", "ROUND(LOG10(i), 2)",
    "LN(i) IS NULL", "POW(i, 2) = 64",
])
def test_powers_and_logarithms_are_mysqls(powers: MySQLPair, expr: str) -> None:
    check(powers, f"SELECT id, {expr} AS x FROM p")


def test_powers_in_where_and_a_view_keep_up_with_writes(powers: MySQLPair) -> None:
    sql = ("SELECT id, LOG10(f) AS l, SQRT(d) AS r FROM p "
           "WHERE POW(i, 2) > 10 OR LN(f) < 1 OR SQRT(d) IS NULL")
    powers.create_view("rooted", sql)
    rng = random.Random(5)
    for k in range(10, 30):
        row = (k, rng.choice([None, -3, 0, 1, 2, 5, 1000]),
               rng.choice([None, Decimal("-1.5"), Decimal("0"), Decimal("4.25")]),
               rng.choice([None, -2.0, 0.0, 0.5, 1.0, 3.75, 1e10]))
        powers.execute("INSERT INTO p (id, i, d, f) VALUES (?, ?, ?, ?)", row)
        if k % 5 == 0:
            powers.execute("UPDATE p SET f = SQRT(f) WHERE f > 1")
            powers.execute("DELETE FROM p WHERE LOG2(i) = 1")
        powers.check_view("rooted")
    powers.check_query(sql)


def test_a_write_taking_the_logarithm_of_zero_fails(powers: MySQLPair) -> None:
    """MySQL 8: error 3020 (strict mode; MariaDB: 1365, a division by 0); a read: NULL."""
    powers.execute("UPDATE p SET f = SQRT(-1) WHERE id = 1")  # (NULL, no warning: both write)
    powers.execute("UPDATE p SET f = LN(i) WHERE id = 3")  # (both fail)
    with pytest.raises(InvalidLogarithmError):
        powers.db.execute("UPDATE p SET f = LOG(2, i) WHERE id = 3")
    check(powers, "SELECT id, f FROM p")


def test_past_the_largest_double_is_infinity_where_mysql_fails() -> None:
    """A known simplification (rivulet/values/powers.py): MySQL fails these with error
    1690; a view cannot fail for one row."""
    assert pow_(10, 400) == math.inf and pow_(-10, 401) == -math.inf
    assert exp_(710) == math.inf and pow_(0, -1) == math.inf
    assert pow_(-8, 1 / 3) is None
