"""The bit operators ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` and ``BIT_COUNT``
(rivulet/values/bits.py) against MariaDB: BIGINT UNSIGNED results over negative, zero,
huge, NULL, DECIMAL, date and integer-text operands, through ``db.query`` and a view kept
up to date by writes; the operands MySQL 8 and MariaDB read differently are refused."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

import pytest
from mysql_oracle import MySQLPair
from test_mysql_types import check

from rivulet.errors import UnsupportedSqlError
from rivulet.values.bits import to_bits

BITS_TABLE = """CREATE TABLE n (id INT PRIMARY KEY, i BIGINT, u BIGINT UNSIGNED,
    d DECIMAL(12,2), s VARCHAR(20), dt DATE, ts DATETIME, tm TIME, f DOUBLE, b VARBINARY(8))"""

BITS_ROWS = [
    (1, 5, 3, Decimal("1.50"), "7", dt.date(2020, 1, 2), dt.datetime(2020, 1, 2, 3, 4, 5),
     dt.timedelta(hours=1, minutes=2, seconds=3), 1.5, b"\x01"),
    (2, -1, 9223372036854775807, Decimal("-1.50"), "-3", dt.date(1999, 12, 31),
     dt.datetime(1999, 12, 31, 23, 59, 59), -dt.timedelta(hours=838), -2.5, b"ab"),
    (3, 0, 0, Decimal("0.00"), "", None, None, dt.timedelta(0), 0.0, b""),
    (4, None, None, None, None, None, None, None, None, None),
    (5, -9223372036854775808, 4611686018427387904, Decimal("2.49"), "1.9",
     dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, 12, 0), dt.timedelta(seconds=59), 1e19,
     b"7"),
    (6, 9223372036854775807, 1, Decimal("9999999999.99"), "abc", dt.date(2000, 1, 1),
     dt.datetime(2000, 1, 1), dt.timedelta(hours=-1, seconds=1), -1e19, b"\xff"),
    (7, 64, 63, Decimal("-9999999999.99"), " 12x", dt.date(1970, 1, 1),
     dt.datetime(1970, 1, 1, 0, 0, 1), dt.timedelta(hours=838, minutes=59, seconds=59), 3.0,
     b"x"),
]


@pytest.fixture
def bits(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(BITS_TABLE)
    mysql_pair.insert_many("n", BITS_ROWS)
    return mysql_pair


EXPRESSIONS = [
    "i & u", "i | u", "i ^ u", "~i", "~u", "i & 255", "u | -1", "d | 0", "d & i", "~d",
    "i << 1", "i >> 1", "u << 63", "1 << i", "u >> i", "i << -1", "8 >> u", "1 << 64",
    "BIT_COUNT(i)", "BIT_COUNT(u)", "BIT_COUNT(d)", "BIT_COUNT(~i)", "dt | 0", "ts & u",
    "tm | 0", "BIT_COUNT(tm)", "'12' | i", "'-1' & u", "'1.9' | 0", "'1e3' | 0", "' 12x' | 0",
    "NULL | i", "i | NULL", "~NULL", "BIT_COUNT(NULL)", "(7 / 2) | 0", "(7 / 3 * 3) | 0",
    "i & u = 1", "(i & 255) + 1", "1 << -9223372036854775808", "i << 4294967296",
    "CONCAT(~i)", "-9223372036854775809 | 0",
    "18446744073709551615 ^ i", "TRUE | 2",
]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_bit_operators_are_mysqls(bits: MySQLPair, expr: str) -> None:
    check(bits, f"SELECT id, {expr} AS x FROM n")


def test_bit_operators_in_where_and_a_view_keep_up_with_writes(bits: MySQLPair) -> None:
    sql = "SELECT id, i & 6 AS m, BIT_COUNT(u) AS c FROM n WHERE (i | u) & 1 = 1 OR i >> 62 > 0"
    bits.create_view("masked", sql)
    rng = random.Random(3)
    for k in range(10, 40):
        i = rng.choice([None, -1, 0, 1, 2, 3, 5, -(1 << 63), (1 << 63) - 1, rng.randint(-99, 99)])
        u = rng.choice([None, 0, 1, 6, (1 << 63) - 1, rng.randint(0, 1 << 40)])
        bits.execute("INSERT INTO n (id, i, u) VALUES (?, ?, ?)", (k, i, u))
        if k % 7 == 0:
            bits.execute("UPDATE n SET i = i ^ 1 WHERE u & 2 = 2")
            bits.execute("DELETE FROM n WHERE i & 3 = 3")
        bits.check_view("masked")
    bits.check_query(sql)


@pytest.mark.parametrize("expr,what", [
    ("f | 0", "a DOUBLE"), ("1.5e0 & 1", "a DOUBLE"), ("b | 0", "a binary string"),
    ("BIT_COUNT(b)", "binary string"), ("s | 0", "text that is not a constant"),
    ("~s", "text that is not a constant"), ("CAST(d AS DECIMAL(30, 2)) | 0", "a DECIMAL"),
    ("99999999999999999999 | 0", "a DECIMAL"), ("SUM(d) | 0", "a DECIMAL"),
    ("SUM(i) | 0", "a DECIMAL"),
])
def test_operands_mysql_and_mariadb_read_differently_are_refused(
        bits: MySQLPair, expr: str, what: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=what):
        bits.db.query(f"SELECT {expr} FROM n")


@pytest.mark.parametrize("value,bits", [
    (-1, 2 ** 64 - 1), (2 ** 64, 2 ** 64 - 1), (-(2 ** 63) - 1, 2 ** 63), (Decimal("1.5"), 2),
    (Decimal("-1.5"), 2 ** 64 - 2), (Decimal("2.4"), 2), ("1e3", 1000), ("abc", 0),
    (dt.date(2020, 1, 2), 20200102), (dt.timedelta(hours=1, microseconds=500000), 10001),
    (True, 1),
])
def test_to_bits_reads_a_value_as_mysql_does(value: object, bits: int) -> None:
    assert to_bits(value) == bits
