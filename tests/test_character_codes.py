"""``ASCII``, ``ORD``, ``HEX`` and ``UNHEX`` (rivulet/values/codes.py) against MariaDB,
over text (empty, accented, four-byte characters), binary strings, integers (negative,
huge), DECIMALs, DOUBLEs and NULL, through ``db.query`` and a view kept up to date."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from mysql_oracle import MySQLPair
from test_mysql_types import check

from rivulet.errors import UnsupportedSqlError

CODES_TABLE = """CREATE TABLE c (id INT PRIMARY KEY, s VARCHAR(10), b VARBINARY(10), i BIGINT,
    d DECIMAL(12,2), f DOUBLE, dt DATE)"""
CODES_ROWS = [
    (1, "abc", b"abc", 255, Decimal("1.50"), 2.5, None),
    (2, "", b"", -1, Decimal("-1.50"), -2.5, None),
    (3, None, None, None, None, None, None),
    (4, "é", b"\xc3\xa9", 9223372036854775807, Decimal("9999999999.99"), 1e20, None),
    (5, "😀x", b"\xff\x00", -9223372036854775808, Decimal("0.49"), 0.49999999999999994, None),
    (6, "4142", b"41", 0, Decimal("-0.50"), -1e20, None),
    (7, "zz", b"0", 16, Decimal("2.50"), 1.5, None),
    (8, "141", b"\x00", 1, Decimal("0.00"), 0.0, None),
    (9, "41 42", b"A", 65, Decimal("65.00"), 65.0, None),
]


@pytest.fixture
def codes(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(CODES_TABLE)
    mysql_pair.insert_many("c", CODES_ROWS)
    return mysql_pair


@pytest.mark.parametrize("expr", [
    "ASCII(s)", "ASCII(b)", "ASCII(i)", "ASCII(d)", "ASCII(f)", "ORD(s)", "ORD(b)", "ORD(i)",
    "HEX(s)", "HEX(b)", "HEX(i)", "HEX(d)", "HEX(f)", "HEX(i DIV 2)", "HEX(NULL)", "HEX('é')",
    "UNHEX(s)", "UNHEX(b)", "UNHEX(i)", "UNHEX(HEX(s))", "UNHEX(NULL)", "LOWER(HEX(b))",
    "HEX(UNHEX(s))", "ASCII(UNHEX(s))", "CONCAT(HEX(i), s)",
])
def test_character_codes_are_mysqls(codes: MySQLPair, expr: str) -> None:
    check(codes, f"SELECT id, {expr} AS x FROM c")


def test_codes_in_where_and_a_view_keep_up_with_writes(codes: MySQLPair) -> None:
    sql = "SELECT id, HEX(s) AS h FROM c WHERE ASCII(s) > 100 OR ORD(s) > 255 OR UNHEX(s) = 'AB'"
    codes.create_view("coded", sql)
    rng = random.Random(8)
    for k in range(100, 115):
        codes.execute("INSERT INTO c (id, s, i) VALUES (?, ?, ?)",
                      (k, rng.choice(["a", "z", "é", "4142", "", None, "日本"]), k))
        if k % 5 == 0:
            codes.execute("UPDATE c SET s = HEX(s) WHERE ASCII(s) = 122")
            codes.execute("DELETE FROM c WHERE ORD(s) = 97")
        codes.check_view("coded")
    codes.check_query(sql)


def test_hex_of_a_date_or_time_is_refused(codes: MySQLPair) -> None:
    with pytest.raises(UnsupportedSqlError, match="HEX\\(\\) of a date"):
        codes.db.query("SELECT HEX(dt) FROM c")
