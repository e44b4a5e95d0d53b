"""Hexadecimal and bit-value literals (rivulet/plan/hybrids.py) against MariaDB: a binary
string in string context, a number in numeric context; the positions that could read them
either way, and the ``X'41'`` form in numeric context (MySQL: a number, MariaDB: text), are
refused by name."""

from __future__ import annotations

import pytest
from mysql_oracle import MySQLPair
from test_mysql_types import check

from rivulet.errors import SqlError, UnsupportedSqlError

HEX_TABLE = "CREATE TABLE h (id INT PRIMARY KEY, i INT, s VARCHAR(10), b VARBINARY(10))"
HEX_ROWS = [(1, 65, "A", b"A"), (2, 0, "AB", b"\x01A"), (3, None, None, None),
            (4, -1, "", b""), (5, 255, "a", b"\xff")]


@pytest.fixture
def hexes(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(HEX_TABLE)
    mysql_pair.insert_many("h", HEX_ROWS)
    return mysql_pair


@pytest.mark.parametrize("expr", [
    "0x41", "X'41'", "x'4142'", "0x141", "x''", "b'1000001'", "0b1000001", "b'111111111'",
    "(0x41)", "0x41 + 0", "0x41 * 1.5", "0x41 + 1.5e0", "-0x41", "-0x41 + 1",
    "b'101' + 0", "0b101 * 2", "0xffffffff + 1", "0x41 | i", "~0x0f", "BIT_COUNT(0xff)",
    "0x41 DIV 2", "CONCAT(0x41, 'a')", "CONCAT(x'4142', 1)", "LOWER(0x41)", "LENGTH(0x4142)",
    "REVERSE(x'4142')", "s LIKE 0x25", "0x41 LIKE 'A'", "s = 0x41", "b = x'41'",
    "b IN (x'41', x'0141')", "s < 0x42", "0x41 = s", "b <> x''",
])
def test_a_hex_or_bit_literal_is_read_as_its_position_reads_it(hexes: MySQLPair,
                                                               expr: str) -> None:
    check(hexes, f"SELECT id, {expr} AS x FROM h")


def test_a_hex_literal_keys_a_filter_on_a_binary_column(hexes: MySQLPair) -> None:
    check(hexes, "SELECT id FROM h WHERE b = x'0141' OR s = 0x41")
    hexes.execute("INSERT INTO h VALUES (6, 7, 'x', 'A')")
    hexes.execute("UPDATE h SET i = 0x10 | i WHERE b = 0x41")
    check(hexes, "SELECT id, i FROM h WHERE b = x'41'")


@pytest.mark.parametrize("expr,what", [
    ("X'41' + 0", "X'...' literal in numeric context"),
    ("x'41' | 0", "X'...' literal in numeric context"),
    ("0x4142434445464748494a + 0", "longer than 8 bytes"),
    ("0xffffffffffffffff + 0", "past a signed BIGINT"),
    ("i = 0x41", "in this position"), ("ROUND(0x41)", "in this position"),
    ("i + 0x41", "in this position"), ("1 - 0x41", "in this position"),
    ("0x41 + -1", "in this position"), ("CONCAT(0x41, s)", "in this position"),
    ("CONCAT(x'4142', i)", "in this position"),
    ("CASE WHEN i > 0 THEN 0x41 ELSE s END", "in this position"),
    ("0x41 IN (65, 'A')", "in this position"),
])
def test_a_literal_either_reading_could_take_is_refused(hexes: MySQLPair, expr: str,
                                                         what: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=what):
        hexes.db.query(f"SELECT {expr} FROM h")


def test_an_odd_x_literal_is_a_syntax_error(hexes: MySQLPair) -> None:
    with pytest.raises(SqlError, match="even number"):
        hexes.db.query("SELECT X'141'")
    with pytest.raises(Exception, match="1064"):
        hexes.mariadb("SELECT X'141'")
