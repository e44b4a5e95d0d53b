"""The other column types MySQL applications declare, as MySQL's strict mode keeps them.

Compared with MariaDB (tests/mysql_oracle.py): CHAR drops trailing spaces and BINARY pads
with zero bytes, a VARCHAR drops spaces past its length, TEXT and BLOB types hold their
byte limits, DECIMAL is DECIMAL(10, 0) and holds 65 digits, DATETIME and TIMESTAMP keep
their fractional digits, a TIMESTAMP holds 1970 to 2038. BIT, YEAR and SET are refused by
name. (ENUM, TIME and JSON have their own files.)
"""

from __future__ import annotations

import datetime as dt
import decimal

import pytest
from mysql_oracle import MySQLPair

import rivulet
from rivulet.errors import RivuletError, UnsupportedSqlError
from rivulet.values.schema import DATETIME, Column, coerce_value


def test_char_drops_trailing_spaces_and_binary_pads_with_zero_bytes(
        mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE f (id INT PRIMARY KEY, c CHAR(5), x CHAR, v VARCHAR(5), "
                 "b BINARY(4), y BINARY, vb VARBINARY(4))")
    rows = [(1, "ab  ", "a", "ab  ", b"ab", b"x", b"ab"), (2, "", " ", "", b"", b"", b""),
            (3, " a b ", None, "a" + " " * 9, b"a\0", b"\0", b"a "),
            (4, "abcdef", "a", "a", b"a", b"a", b"a"), (5, "a", "ab", "a", b"a", b"a", b"a"),
            (6, "a", "a", "abcdef", b"a", b"a", b"a"), (7, "a", "a", "a", b"abcde", b"a", b"a"),
            (8, "a", "a", "a", b"a", b"a", b"abc  "), (9, "ab" + " " * 10, "a", "a", b"a",
                                                       b"a", b"a")]
    for row in rows:
        pair.execute("INSERT INTO f VALUES (?, ?, ?, ?, ?, ?, ?)", list(row))
    pair.check_query("SELECT id, c, LENGTH(c), CONCAT('[', c, ']'), x, v, LENGTH(v), b, "
                     "LENGTH(b), y, vb FROM f")
    for where in ["c = 'ab'", "c = 'ab  '", "c LIKE 'ab%'", "v = 'ab  '", "b = 'ab'",
                  "b = 'ab\\0\\0'", "c < 'ab '", "x = ' '", "x = ''"]:
        pair.check_query(f"SELECT id FROM f WHERE {where}")
    pair.create_view("by_c", "SELECT id, v FROM f WHERE c = ?")
    pair.create_view("by_b", "SELECT id FROM f WHERE b = ?")
    for key in ["ab", "ab  ", "", " a b", " a b "]:
        pair.check_view("by_c", key)
    for key in [b"ab", b"ab\0\0", b"", b"\0\0\0\0"]:
        pair.check_view("by_b", key)


def test_text_and_blob_types_hold_their_byte_limits(mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE tx (id INT PRIMARY KEY, a TINYTEXT, b TEXT, c MEDIUMTEXT, "
                 "d LONGTEXT, e TINYBLOB, g BLOB)")
    values = [("x" * 255, "x", b"x"), ("x" * 256, "x", b"x"), ("é" * 127, "x", b"x"),
              ("a", "x" * 65535, b"x"), ("a", "x" * 65536, b"x"), ("a", "é" * 32767, b"x"),
              ("a", "é" * 32768, b"x"), ("a", "x", b"x" * 255), ("a", "x", b"x" * 256)]
    for i, (a, b, e) in enumerate(values):
        pair.execute("INSERT INTO tx VALUES (?, ?, ?, ?, ?, ?, ?)", [i, a, b, b, b, e, e])
    pair.check_query("SELECT id, LENGTH(a), LENGTH(b), LENGTH(d), LENGTH(e) FROM tx")


def test_a_decimal_column_holds_no_negative_zero(mysql_pair: MySQLPair) -> None:
    """A zero that comes negative (-0.001 rounded, MOD of a negative number, a Decimal
    '-0.00') is stored as 0.00, as MySQL stores it (its text was '-0.00')."""
    pair = mysql_pair
    pair.execute("CREATE TABLE nz (id INT PRIMARY KEY, d DECIMAL(5,2), e DECIMAL(5,2))")
    pair.execute("INSERT INTO nz VALUES (1, -0.001, -1.25), (2, 1, 1)")
    pair.execute("INSERT INTO nz VALUES (?, ?, ?)", [3, decimal.Decimal("-0.00"), 0])
    pair.execute("UPDATE nz SET d = MOD(e, e) WHERE id = 1")
    pair.check_query("SELECT id, CAST(d AS CHAR), CONCAT(d), d FROM nz ORDER BY id")


def test_decimal_is_ten_digits_unless_declared_and_holds_sixty_five(
        mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE dc (id INT PRIMARY KEY, d DECIMAL(5,2), e DECIMAL, "
                 "u DECIMAL(65,30), n NUMERIC(4))")
    rows = [(1, "999.99", "1.5", "1", "9999.4"), (2, "1000", "1", "1", "1"),
            (3, "-999.995", "1", "1", "1"), (4, "1.234", "12345678901", "1", "1"),
            (5, "1", "-2.5", "12345678901234567890123456789012345.1", "1"),
            (6, "1", "1", "123456789012345678901234567890123456.1", "1"),
            (7, "0.005", "9999999999", "-0.0000000000000000000000000000005", "-9999.5")]
    for row in rows:
        pair.execute("INSERT INTO dc VALUES (?, ?, ?, ?, ?)",
                     [row[0], *(decimal.Decimal(v) for v in row[1:])])
    pair.check_query("SELECT * FROM dc")
    pair.create_view("by_d", "SELECT id FROM dc WHERE d = ?")
    for key in [decimal.Decimal("1.23"), decimal.Decimal("1.234"), decimal.Decimal("0.01"),
                decimal.Decimal("999.990")]:
        pair.check_view("by_d", key)


def test_datetime_and_timestamp_keep_their_fractional_digits(mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE ts (id INT PRIMARY KEY, v TIMESTAMP NULL, w TIMESTAMP(3) NULL, "
                 "d DATETIME, d3 DATETIME(3), d6 DATETIME(6))")
    rows = [(1, "2024-01-02 03:04:05.4", "2024-01-02 03:04:05.1234", "2024-01-02 03:04:05.3",
             "2024-01-02 03:04:05.0001", "2024-01-02 03:04:05.000001"),
            (2, "1960-01-01 00:00:00", None, None, None, None),
            (3, "2038-01-19 03:14:08", None, None, None, None),
            (4, "2038-01-19 03:14:07", "1970-01-01 00:00:01", "1000-01-01 00:00:00",
             "9999-12-31 23:59:59.999", None),
            (5, "1970-01-01 00:00:00", None, None, None, None),
            (6, None, "2038-01-19 03:14:07.999", None, None, None)]
    for row in rows:
        pair.execute("INSERT INTO ts VALUES (?, ?, ?, ?, ?, ?)", list(row))
    pair.check_query("SELECT id, v, w, d, d3, d6, CONCAT(d), CONCAT(v) FROM ts")
    # in numeric and string context, with their fractional digits (rivulet/values/types.py)
    pair.check_query("SELECT id, d3 + 0, d6 + 0, w + 0, -d3, CONCAT(d3), CONCAT(d6), "
                     "CONCAT(w), CAST(d3 AS CHAR), CAST(d3 AS DECIMAL(20, 3)), "
                     "UNIX_TIMESTAMP(w), COALESCE(d3, d) FROM ts")
    pair.check_query("SELECT SUM(d3), MAX(w) + 0 FROM ts")
    pair.create_view("at", "SELECT id FROM ts WHERE d = ?")
    for key in ["2024-01-02 03:04:05", "2024-01-02 03:04:05.3", dt.datetime(2024, 1, 2, 3, 4, 5)]:
        pair.check_view("at", key)


def test_fractional_seconds_round_as_mysql_rounds() -> None:
    # MySQL rounds to the column's digits (MariaDB truncates): pinned by hand.
    for fsp, written, stored in [
            (0, dt.datetime(2024, 1, 1, 10, 0, 0, 500000), dt.datetime(2024, 1, 1, 10, 0, 1)),
            (0, dt.datetime(2024, 12, 31, 23, 59, 59, 999999), dt.datetime(2025, 1, 1)),
            (3, dt.datetime(2024, 1, 1, 0, 0, 0, 123500), dt.datetime(2024, 1, 1, 0, 0, 0, 124000)),
            (2, dt.datetime(2024, 1, 1, 0, 0, 0, 4999), dt.datetime(2024, 1, 1, 0, 0, 0))]:
        assert coerce_value(Column("d", DATETIME, fsp=fsp), written) == stored


def test_float_is_single_precision(mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE fl (id INT PRIMARY KEY, f FLOAT, d DOUBLE, r REAL, p FLOAT(25), "
                 "q FLOAT(24))")
    for i, value in enumerate([0.1, 1.5, 16777.5, -0.25, 3.4e38, 1e39, -1e39, 2.0 ** -149, 0]):
        pair.execute("INSERT INTO fl VALUES (?, ?, ?, ?, ?, ?)", [i, *[value] * 5])
    pair.execute("INSERT INTO fl VALUES (20, 0.1, 0.1, 0.1, 0.1, 0.1)")  # (DECIMAL literals)
    pair.check_query("SELECT id, f, d, r, p, q, f + 0, f * 3, r + 0, p + 0, q + 0 FROM fl")
    for where in ["f = 0.1", "f = 0.1e0", "f > 0.1", "f = d", "f = 1.5", "d = 0.1", "r = 0.1",
                  "p = 0.1", "f < 0", "f = 0.10000000149011612e0"]:
        pair.check_query(f"SELECT id FROM fl WHERE {where}")
    pair.check_query("SELECT MAX(f), MIN(f), SUM(f), COUNT(DISTINCT f) FROM fl")
    pair.check_query("SELECT f, COUNT(*) FROM fl GROUP BY f ORDER BY f")
    pair.create_view("by_f", "SELECT id FROM fl WHERE f = ?")
    for key in [0.1, 1.5, 0.10000000149011612, -0.25, decimal.Decimal("1.5")]:
        pair.check_view("by_f", key)
    with pytest.raises(UnsupportedSqlError, match=r"FLOAT\(M, D\)"):
        pair.db.execute("CREATE TABLE fm (id INT PRIMARY KEY, f FLOAT(10, 2))")


def test_boolean_and_tinyint_1(mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE b1 (id INT PRIMARY KEY, v TINYINT(1), w BOOLEAN, x BOOL)")
    for i, value in enumerate([0, 1, 5, 127, -128, 128, -129, True, False, None, "1", 1.0]):
        pair.execute("INSERT INTO b1 VALUES (?, ?, ?, ?)", [i, value, value, value])
    pair.check_query("SELECT id, v, w, x, v + 0, v = TRUE, IF(w, 'y', 'n') FROM b1")


def test_types_rivulet_does_not_keep_are_refused_by_name(mysql_pair: MySQLPair) -> None:
    db = mysql_pair.db
    for sql_type, name in [("BIT(8)", "BIT"), ("BIT", "BIT"), ("YEAR", "YEAR"),
                           ("SET('a','b')", "SET"),
                           ("GEOMETRY", "GEOMETRY")]:
        with pytest.raises(UnsupportedSqlError, match=f"column type {name}"):
            db.execute(f"CREATE TABLE r (id INT PRIMARY KEY, v {sql_type})")
        db.execute("CREATE TABLE r (id INT PRIMARY KEY)")  # the refused one left nothing
        with pytest.raises(UnsupportedSqlError, match=f"column type {name}"):
            db.execute(f"ALTER TABLE r ADD COLUMN v {sql_type}")
        db.execute("ALTER TABLE r ADD COLUMN v INT")
        db.execute("DROP TABLE r")


def test_a_refused_statement_changes_nothing(mysql_pair: MySQLPair) -> None:
    """A CREATE or ALTER refused anywhere in it (a later action, a bad DEFAULT) leaves the
    program as it was, also after reopening."""
    db = mysql_pair.db
    db.execute("CREATE TABLE t (id INT PRIMARY KEY, x INT)")
    db.execute("INSERT INTO t VALUES (1, 2)")
    for sql in ["ALTER TABLE t ADD COLUMN a INT, ADD COLUMN b YEAR",
                "ALTER TABLE t DROP COLUMN x, ADD COLUMN j JSON NOT NULL",
                "ALTER TABLE t ADD COLUMN a INT, MODIFY x ENUM('a')",
                "CREATE TABLE u (id INT PRIMARY KEY, a INT, b BIT)",
                "CREATE TABLE u (id INT PRIMARY KEY, e ENUM('a', 'a'))",
                "CREATE TABLE u (id INT PRIMARY KEY, e ENUM('a') DEFAULT 'b')",
                "CREATE TABLE u (id INT PRIMARY KEY, t TIME(7))"]:
        with pytest.raises(RivuletError):
            db.execute(sql)
    assert db.catalog.table("u") is None
    assert db.query("SELECT * FROM t") == [(1, 2)]
    db.close()
    mysql_pair.db = db = rivulet.open(mysql_pair.path)
    assert db.catalog.table("u") is None
    assert db.query("SELECT * FROM t") == [(1, 2)]
    db.execute("CREATE TABLE u (id INT PRIMARY KEY, e ENUM('a'))")


def test_altering_to_float_char_and_datetime_fits_the_values(mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE a (id INT PRIMARY KEY, d DOUBLE, v VARCHAR(5), t DATETIME(6), "
                 "f FLOAT)")
    pair.execute("INSERT INTO a VALUES (1, 0.1, 'ab  ', '2024-01-01 10:00:00.24', 0.1), "
                 "(2, 1677.25, '', '2024-01-01 10:00:00', 1.5), (3, NULL, NULL, NULL, NULL)")
    pair.execute("ALTER TABLE a MODIFY d FLOAT, MODIFY v CHAR(5), MODIFY t DATETIME(1), "
                 "MODIFY f DOUBLE")
    pair.db.finish_conversions()
    pair.check_query("SELECT id, d, d + 0, v, CONCAT('[', v, ']'), t, f FROM a")
    pair.check_query("SELECT id FROM a WHERE d = 0.1")
