"""A single-precision FLOAT's value shown and read as text (``values.types.SqlType.single``,
``values.casts.single_str``): MySQL writes a FLOAT as the shortest text that reads back as
the same 4-byte float, '1.1', where the double rivulet computes with is
1.100000023841858; so do ``CAST(f AS CHAR)``, ``CONCAT``, ``LENGTH``, ``LIKE`` and
``GROUP_CONCAT`` of it, and ``COALESCE``/``IF``/``CASE``/``MIN``/``MAX`` of FLOATs alone,
which stay FLOATs. Arithmetic, ``SUM``/``AVG`` and a FLOAT mixed with a DOUBLE are DOUBLEs
and show the double's digits; ``CAST(x AS FLOAT)`` narrows to single precision (MySQL 8;
``FLOAT(p)`` past 24 is a DOUBLE). rivulet showed the double's digits in text everywhere,
and CAST AS FLOAT kept the double.

Against MariaDB, with values whose shortest text has at most six digits (MariaDB shows a
FLOAT with six significant digits, MySQL 8 with as many as it needs: they agree on
these)."""

from __future__ import annotations

import pytest
from mysql_oracle import MySQLPair, text_wires
from test_mysql_types import check

VALUES = [1.1, 0.1, 2.5, None, 1e-05, 123456.0, -0.3, 3.14159, 7.0]


@pytest.fixture
def floats(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute("CREATE TABLE fl (id INT PRIMARY KEY, f FLOAT, g FLOAT, d DOUBLE, "
                       "k INT)")
    rows = [(i, v, VALUES[(i + 3) % len(VALUES)], 1.1, i % 3)
            for i, v in enumerate(VALUES)]
    mysql_pair.insert_many("fl", rows)
    return mysql_pair


@pytest.mark.parametrize("expr", [
    "f", "CAST(f AS CHAR)", "CONCAT(f)", "CONCAT('x', f, g)", "CONCAT_WS(',', f, g)",
    "LENGTH(f)", "UPPER(f)", "f LIKE '1.1'", "SUBSTRING(f, 1, 3)", "REPLACE(f, '.', ',')",
    "COALESCE(f, g)", "IFNULL(f, g)", "IF(k = 1, f, g)", "CASE WHEN k = 1 THEN f ELSE g END",
    "NULLIF(f, 0)", "CONCAT(COALESCE(f, g))", "CAST(IFNULL(f, g) AS CHAR)",
    "f + 0", "f * 2", "-f", "ABS(f)", "COALESCE(f, d)", "COALESCE(f, 0)", "CONCAT(f + 0)",
    "CONCAT(COALESCE(f, d))", "CAST(f AS DOUBLE)", "ROUND(f, 1)", "GREATEST(f, g)",
    # CAST AS FLOAT narrows to single precision (it kept the double: 3.3000000000000003)
    "CAST(d * 3 AS FLOAT)", "CAST(d AS FLOAT) + 0", "CONCAT(CAST(d * 3 AS FLOAT))",
    "CAST(k AS FLOAT)", "CAST(f AS FLOAT)",
])
def test_a_floats_text_is_its_shortest_as_mysqls(floats: MySQLPair, expr: str) -> None:
    check(floats, f"SELECT id, {expr} AS x FROM fl")


@pytest.mark.parametrize("expr", [
    "MAX(f)", "MIN(g)", "CONCAT(MAX(f))", "SUM(f)", "AVG(f)", "GROUP_CONCAT(f ORDER BY id)",
    "GROUP_CONCAT(DISTINCT g ORDER BY g)", "COUNT(DISTINCT f)",
])
def test_aggregates_of_floats_show_as_mysqls(floats: MySQLPair, expr: str) -> None:
    check(floats, f"SELECT k, {expr} AS x FROM fl GROUP BY k")


def test_a_floats_text_in_a_view_follows_writes(floats: MySQLPair) -> None:
    sql = "SELECT k, GROUP_CONCAT(CONCAT(f, '/', g) ORDER BY id) AS x FROM fl GROUP BY k"
    check(floats, sql)
    floats.execute("INSERT INTO fl VALUES (50, 0.7, 9.9, 1, 1)")
    floats.execute("UPDATE fl SET f = 0.2 WHERE id = 1")
    floats.execute("DELETE FROM fl WHERE id = 2")
    check(floats, sql)


def test_the_text_protocol_sends_a_double_as_mysql_writes_it(floats: MySQLPair) -> None:
    """Over the MySQL text protocol a DOUBLE is sent in MySQL's shortest form ('1', '1e20',
    '0.0000001', '-1e15'), as a client that reads text (PHP's mysqli, JDBC's getString, the
    mysql client) shows it; rivulet sent Python's ('1.0', '1e+20', '1e-07',
    '-1000000000000000.0'), the same number to a driver that parses it."""
    floats.execute("CREATE TABLE db (id INT PRIMARY KEY, x DOUBLE, d DECIMAL(8,2))")
    floats.insert_many("db", [(1, 1.0, 1), (2, 1e20, 2.5), (3, 1e-07, -3), (4, -1e15, 0),
                              (5, 0.30000000000000004, None), (6, 123456789012345680.0, 7),
                              (7, 999999999999999.0, 1), (8, -0.0, 1), (9, None, 1)])
    with text_wires(floats) as (mine, theirs):
        for sql in ("SELECT id, x, x * 1, x + d, d + 0e0, CAST(d AS DOUBLE), -x, "
                    "COALESCE(x, 2e0) FROM db ORDER BY id",
                    "SELECT id, f, d, f + 0, SUM(d), AVG(k + 0e0) FROM fl GROUP BY id, f, d "
                    "ORDER BY id"):
            sent = []
            for conn in (mine, theirs):
                with conn.cursor() as cur:
                    cur.execute(sql)
                    sent.append(cur.fetchall())
            assert sent[0] == sent[1], sql
