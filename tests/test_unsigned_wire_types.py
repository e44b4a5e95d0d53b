"""UNSIGNED and DECIMAL results over the MySQL protocol, against MariaDB (the oracle).

Why this module exists: a driver reads a result column's type from its definition, and the
UNSIGNED flag is part of it (MySQL Connector and JDBC widen an unsigned BIGINT to a bigger
Java/Python type, an ORM maps the column from it). rivulet flagged only integers: a
``DECIMAL(8,2) UNSIGNED`` column, ``ROUND(u, -2)`` of a ``BIGINT UNSIGNED`` (a DECIMAL, since
rounding to tens may add a digit) and every expression made of them came without the flag
MariaDB sets; and such a column stored the negative numbers MariaDB refuses (error 1264).

Each query here runs on rivulet's MySQL server and on MariaDB; the column types must agree
(tests/test_mysql_differential.py's :func:`wire_type_mismatch`: type class, UNSIGNED flag,
decimals) and so must the values, as the text each server sends (``conv={}``). The
comments say what MariaDB 10.11 reported for them (its type and flag; rivulet sends one
type code per kind, docs/sql.md).

Left out, as rivulet answers them on purpose otherwise: a NULL literal beside an UNSIGNED
integer (``COALESCE(u, NULL)``: a signed DECIMAL in MariaDB, a BIGINT UNSIGNED in MySQL and
rivulet; tests/mysql_scenarios.py's MARIADB_IS_NOT_MYSQL), ``GREATEST``/``LEAST`` with a
NULL literal (a DOUBLE in MariaDB), and ``TRUNCATE()``, which rivulet refuses by name.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pymysql
import pytest
from mysql_oracle import MYSQL_SQL_MODE, MySQLPair, OverTheWire, text_wires
from test_mysql_differential import wire_type_mismatch

SCHEMA = ("CREATE TABLE t (id INT PRIMARY KEY, u BIGINT UNSIGNED, i INT UNSIGNED, "
          "d DECIMAL(8,2) UNSIGNED, e DECIMAL(6,1), c INT, s INT, b BIGINT)")
#: No u of 0: ``u - 1`` below zero is error 1690 in MySQL and a negative number in rivulet
#: (docs/sql.md's intended differences). The largest u is rivulet's largest BIGINT
#: UNSIGNED (2**63 - 1), which rounds to tens past 19 digits.
ROWS = [
    (1, 149, 149, Decimal("149.50"), Decimal("-2.5"), 1, -3, -9223372036854775807),
    (2, 150, 250, Decimal("0.05"), Decimal("1.0"), 0, 7, 15),
    (3, 9223372036854775807, 4294967295, Decimal("999999.99"), None, None, 0,
     9223372036854775807),
    (4, None, None, None, None, 1, None, None),
    (5, 1, 1, Decimal("1.00"), Decimal("3.0"), 0, 5, -45),
]

#: Expressions over one row, each with what MariaDB reports for it.
EXPRESSIONS = [
    # ROUND of an UNSIGNED integer: to tens, of a BIGINT, a DECIMAL(21,0) UNSIGNED (rounding
    # may add a digit), and so with places known only per row; to places of a BIGINT, a
    # BIGINT UNSIGNED; an INT's to tens a BIGINT UNSIGNED, to places an INT UNSIGNED.
    "ROUND(u, -2)", "ROUND(u, -1)", "ROUND(u, -19)", "ROUND(u, -30)", "ROUND(u, c)",
    "ROUND(u, s)", "ROUND(u, 0)", "ROUND(u, 2)", "ROUND(u)",
    "ROUND(i, -2)", "ROUND(i, -10)", "ROUND(i, -20)", "ROUND(i, 2)", "ROUND(i)", "ROUND(i, s)",
    # ... a signed BIGINT's with places per row: a signed DECIMAL(20,0)
    "ROUND(b, s)", "ROUND(b, -1)", "ROUND(s, s)",
    # and what is made of it: UNSIGNED with UNSIGNED, signed with a signed operand
    "COALESCE(ROUND(u, -2), u)", "IF(c, ROUND(u, -2), d)",
    "ROUND(u, -2) + 0", "ROUND(u, -2) * 1", "-ROUND(u, -2)", "COALESCE(ROUND(u, -2), 5)",
    # a DECIMAL(8,2) UNSIGNED column, and what keeps its flag: the choosers of it alone,
    # ROUND (ROUND(d, 1): DECIMAL(8,1) UNSIGNED), ABS, FLOOR/CEIL and DIV (INT UNSIGNED), %,
    # NULLIF
    "d", "COALESCE(d, d)", "IF(c, d, d)", "CASE WHEN c THEN d ELSE d END", "LEAST(d, d)",
    "NULLIF(d, 1)", "ROUND(d)", "ROUND(d, 1)", "ROUND(d, -1)", "ROUND(d, c)", "ROUND(d, s)",
    "ABS(d)", "FLOOR(d)", "CEIL(d)", "d DIV 2", "d % 2", "MOD(d, 3)", "d % 2.5",
    # arithmetic: a DECIMAL is UNSIGNED when both operands are (d * d: DECIMAL(16,4)
    # UNSIGNED; MariaDB lets d - u go below zero), an integer when either is (u + i: BIGINT
    # UNSIGNED)
    "d * d", "d + d", "d - d", "d / d", "u + d", "d + u", "u - d", "d - u", "d * u", "d / u",
    "u / d", "u / i", "(d + d) / 2", "CEIL(d / d)", "FLOOR(d * d)", "ROUND(d * d, 1)",
    "d * d * d", "u + i", "u + 0", "u - 1", "i - 1", "MOD(u, d)", "u % 2.5",
    # ... and signed with a signed operand or sign (d + 1: DECIMAL(9,2), -d: DECIMAL(8,2))
    "d + 1", "d * 2", "d / 2", "d - 1", "d - 0.01", "d + 1.5", "d * 1.0", "d + s", "d + e",
    "d + 0", "0 + d", "d / 2.0", "u / 2", "u + 0.5", "u * 1.5", "-d", "-(-d)", "ABS(-d)",
    "-u", "-i", "CEIL(d * 1.5)", "FLOOR(u / 3)", "ROUND(u / 3, 1)", "ROUND(d / 2, 1)",
    "IF(c, d, u) + 1",
    # choosers: UNSIGNED when every branch is (COALESCE(u, d): DECIMAL(22,2) UNSIGNED),
    # signed with any signed one; an UNSIGNED integer with a signed one: a signed DECIMAL
    # (IF(c, u, -1), GREATEST(u, 2): DECIMAL(20,0); COALESCE(u, 1.5): DECIMAL(21,1))
    "COALESCE(u, d)", "COALESCE(i, d)", "COALESCE(d, i, u)", "IF(c, d, u)", "GREATEST(d, u)",
    "GREATEST(i, d, u)", "CASE WHEN c THEN d WHEN s THEN u END", "IF(c, d, u + 1)",
    "COALESCE(u, u)", "IF(c, u, u)", "CASE WHEN c THEN u ELSE u END", "LEAST(u, i)",
    "GREATEST(u, i)", "COALESCE(d, 1)", "IFNULL(d, 0)", "GREATEST(d, 2)", "IF(c, d, 1.5)",
    "IF(c, d, 5)", "IF(c, 5, d)", "COALESCE(d, s)", "COALESCE(d, e)", "COALESCE(u, 1.5)",
    "IF(c, u, -1)", "GREATEST(u, 2)", "COALESCE(u, 1)", "IFNULL(u, 0)",
    # a NULL: IF takes the other branch's type, a CASE without ELSE too; COALESCE, IFNULL
    # and CASE ... ELSE NULL count it as signed (MariaDB; of an integer, see above)
    "IF(c, d, NULL)", "IF(c, NULL, d)", "CASE WHEN c THEN d END", "IF(c, u / i, NULL)",
    "IF(c, u, NULL)", "COALESCE(d, NULL)", "COALESCE(NULL, d)", "IFNULL(d, NULL)",
    "CASE WHEN c THEN d ELSE NULL END", "COALESCE(u / i, NULL)",
    "COALESCE(d, CAST(NULL AS DECIMAL))",
    # casts: a DECIMAL cast is signed, an UNSIGNED cast unsigned
    "CAST(d AS DECIMAL)", "CAST(d AS DECIMAL(8,2))", "CAST(d AS DECIMAL(10,1))",
    "CAST(u AS DECIMAL)", "CAST(u AS DECIMAL(25,0))", "CAST(i AS DECIMAL(12,2))",
    "CAST(d AS UNSIGNED)", "SIGN(d)", "d = 1", "CONCAT(d)",
    # a DOUBLE of it: no flag, its text the shortest ('1', not '1.0')
    "d + 0e0", "d * 1e0", "CAST(d AS DOUBLE)", "u + 0e0",
]

#: Aggregates: MIN/MAX keep their argument's flag; SUM and AVG are signed DECIMALs (SUM(d):
#: DECIMAL(30,2), AVG(d): DECIMAL(12,6), SUM(u): DECIMAL(42,0)).
AGGREGATES = [
    "MIN(d)", "MAX(d)", "MIN(ROUND(d, 1))", "MAX(ROUND(u, -2))", "MIN(u + d)", "MAX(d * d)",
    "MAX(IF(c, d, NULL))", "MIN(u) + MAX(d)", "MIN(u)", "MAX(i)", "MAX(e)", "MIN(-d)",
    "MAX(d + 1)", "MIN(COALESCE(d, 0))", "SUM(d)", "SUM(DISTINCT d)", "AVG(d)", "SUM(u)",
    "SUM(i)", "AVG(u)", "AVG(i)", "SUM(d * 2)", "SUM(ROUND(i, -1))", "SUM(ROUND(u, -2))",
    "AVG(ROUND(u, -2))", "AVG(d) + 0", "SUM(d) + 0", "COUNT(d)",
]

#: UNIONs: a column is UNSIGNED when every branch's is (MariaDB: NULL is signed).
UNIONS = [
    "SELECT d AS x FROM t UNION SELECT d FROM t",
    "SELECT u AS x FROM t UNION SELECT d FROM t",
    "SELECT ROUND(u, -2) AS x FROM t UNION SELECT u FROM t",
    "SELECT u AS x FROM t UNION SELECT i FROM t",
    "SELECT d AS x FROM t UNION ALL SELECT ROUND(d, 1) FROM t",
    "SELECT d AS x FROM t UNION SELECT 1",
    "SELECT d AS x FROM t UNION SELECT e FROM t",
    "SELECT d AS x FROM t UNION SELECT NULL",
]


@pytest.fixture
def wire(mysql_pair: MySQLPair) -> Iterator[tuple[Any, Any]]:
    """A client of rivulet's MySQL server over the pair's database and one of MariaDB's,
    both reading values as the text the server sent (``conv={}``), over :data:`ROWS`."""
    mysql_pair.execute(SCHEMA)
    mysql_pair.insert_many("t", ROWS)
    mysql_pair.settle()
    with text_wires(mysql_pair) as clients:
        yield clients


def _run(conn: Any, sql: str) -> tuple[list[tuple], list[Any]]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()], list(cur._result.fields)


def _same_over_the_wire(wire: tuple[Any, Any], sql: str, *, ordered: bool = True) -> None:
    mine, theirs = wire
    their_rows, their_fields = _run(theirs, sql)
    rows, fields = _run(mine, sql)
    problem = wire_type_mismatch(fields, their_fields)
    assert problem is None, f"{sql}: {problem}"
    if not ordered:
        rows, their_rows = sorted(rows, key=repr), sorted(their_rows, key=repr)
    assert rows == their_rows, sql


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_expressions_report_mariadbs_types_and_values(wire: tuple[Any, Any],
                                                      expr: str) -> None:
    _same_over_the_wire(wire, f"SELECT id, {expr} AS x FROM t ORDER BY id")


@pytest.mark.parametrize("agg", AGGREGATES)
def test_aggregates_report_mariadbs_types_and_values(wire: tuple[Any, Any], agg: str) -> None:
    _same_over_the_wire(wire, f"SELECT {agg} AS x FROM t")
    _same_over_the_wire(wire, f"SELECT c, {agg} AS x FROM t GROUP BY c ORDER BY c")


@pytest.mark.parametrize("sql", UNIONS)
def test_union_columns_report_mariadbs_types_and_values(wire: tuple[Any, Any],
                                                        sql: str) -> None:
    _same_over_the_wire(wire, sql, ordered=False)


def test_views_report_mariadbs_types(wire: tuple[Any, Any], mysql_pair: MySQLPair) -> None:
    """A view kept up to date reports the types its SELECT has, read with a key or not."""
    mysql_pair.db.execute("CREATE VIEW rounded AS SELECT id, c, ROUND(u, -2) AS r, d, "
                          "COALESCE(d, u) AS k, MAX(d) AS m FROM t GROUP BY id, c, u, d")
    mine, theirs = wire
    select = ("SELECT id, c, ROUND(u, -2) AS r, d, COALESCE(d, u) AS k, MAX(d) AS m FROM t "
              "GROUP BY id, c, u, d")
    for where in ("", " WHERE c = 1"):
        their_rows, their_fields = _run(theirs, f"SELECT * FROM ({select}) AS v{where} "
                                                "ORDER BY id")
        rows, fields = _run(mine, f"SELECT * FROM rounded{where} ORDER BY id")
        assert wire_type_mismatch(fields, their_fields) is None, (
            where, wire_type_mismatch(fields, their_fields))
        assert rows == their_rows, where


def test_embedded_reads_answer_as_mariadb(mysql_pair: MySQLPair) -> None:
    """``db.query`` gives MariaDB's values for the same expressions (DECIMALs with their
    places)."""
    mysql_pair.execute(SCHEMA)
    mysql_pair.insert_many("t", ROWS)
    for start in range(0, len(EXPRESSIONS), 20):
        mysql_pair.check_query(f"SELECT id, {', '.join(EXPRESSIONS[start:start + 20])} FROM t")
    mysql_pair.check_query(f"SELECT {', '.join(AGGREGATES)} FROM t")


@pytest.mark.parametrize("value", [
    "-1", "-0.01", "-0.001", "-0.005", "'-0.001'", "-1e-9", "-1e-3",  # refused (1264)
    "'-0'", "-0.0", "-0e0", "0", "999999.994",  # stored: 0.00, and 999999.99
    "999999.996",  # refused: rounds past DECIMAL(8,2)
])
def test_a_decimal_unsigned_column_refuses_what_mariadb_refuses(mysql_pair: MySQLPair,
                                                                value: str) -> None:
    """A DECIMAL UNSIGNED column holds no number below zero, however little below (MariaDB
    checks before rounding to the column's places: -0.001 is refused, '-0' stored as 0);
    rivulet stored -1 as it came."""
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, d DECIMAL(8,2) UNSIGNED)")
    mysql_pair.execute("INSERT INTO w VALUES (1, 5)")
    mysql_pair.execute(f"INSERT INTO w VALUES (2, {value})")  # (both refuse or both store)
    mysql_pair.execute(f"UPDATE w SET d = {value} WHERE id = 1")
    mysql_pair.check_query("SELECT id, d FROM w")


def test_writes_below_zero_are_refused(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, d DECIMAL(8,2) UNSIGNED, "
                       "e DECIMAL(8,2))")
    mysql_pair.execute("INSERT INTO w VALUES (1, 1.50, -3), (2, 0, 2)")
    for sql in ("UPDATE w SET d = d - 1 WHERE id = 1", "UPDATE w SET d = -d",
                "UPDATE w SET d = e", "UPDATE w SET d = e + 3",
                "UPDATE w SET d = d + 1", "INSERT INTO w VALUES (3, -0.004, 0)"):
        mysql_pair.execute(sql)
    mysql_pair.check_query("SELECT id, d, e FROM w")


def test_a_column_made_decimal_unsigned_converts_as_mariadb_outside_strict_mode(
        mysql_pair: MySQLPair) -> None:
    """``MODIFY d DECIMAL(8,2) UNSIGNED`` converts the values as MySQL does outside strict
    mode (docs/schema-changes.md: rivulet converts rows lazily, so it cannot fail the
    statement on a row it has not read): a negative one becomes 0. It kept -0.50 in the
    UNSIGNED column, as if no conversion were needed. Later writes are strict again."""
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, d DECIMAL(8,2))")
    mysql_pair.execute("INSERT INTO w VALUES (1, 2.5), (2, -0.5), (3, NULL)")
    with mysql_pair.conn.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")
        cur.execute("ALTER TABLE w MODIFY d DECIMAL(8,2) UNSIGNED")
        cur.execute(f"SET SESSION sql_mode = '{MYSQL_SQL_MODE}'")
    mysql_pair.db.execute("ALTER TABLE w MODIFY d DECIMAL(8,2) UNSIGNED")
    mysql_pair.check_query("SELECT id, d FROM w")
    mysql_pair.execute("INSERT INTO w VALUES (4, -1)")
    mysql_pair.execute("INSERT INTO w VALUES (5, 1)")
    mysql_pair.check_query("SELECT id, d, -d, d * d FROM w")


def test_a_choice_between_decimals_differing_only_in_sign_is_written_as_text(
        mysql_pair: MySQLPair) -> None:
    """``COALESCE(d, e)`` of a DECIMAL(8,2) UNSIGNED and a DECIMAL(8,2) has their places:
    written to a text column, or in a UNION column of text, it is the chosen value's text
    (a choice that pads a value to other places is refused there; the sign changes no
    place)."""
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, d DECIMAL(8,2) UNSIGNED, "
                       "e DECIMAL(8,2), txt VARCHAR(20))")
    mysql_pair.execute("INSERT INTO w VALUES (1, 1.50, -2, 'a'), (2, NULL, -2.25, 'b')")
    mysql_pair.execute("UPDATE w SET txt = COALESCE(d, e)")
    mysql_pair.check_query("SELECT id, txt FROM w")
    mysql_pair.check_query("SELECT txt FROM w UNION SELECT COALESCE(d, e) FROM w "
                           "UNION SELECT IF(id = 1, e, d) FROM w")


def test_truncate_stays_refused_by_name(wire: tuple[Any, Any]) -> None:
    """``TRUNCATE(u, -2)`` is MariaDB's BIGINT UNSIGNED; rivulet has no TRUNCATE() and says
    so (1235), where a wrong type or value would be the worse answer."""
    mine, _ = wire
    with pytest.raises(pymysql.MySQLError) as refused:
        _run(mine, "SELECT TRUNCATE(u, -2) FROM t")
    assert refused.value.args[0] == 1235 and "TRUNCATE" in refused.value.args[1]


def test_prepared_statements_read_mariadbs_values(mysql_pair: MySQLPair) -> None:
    """Server-side prepared statements (values sent binary, by the column's type and
    flags) read the same values as MariaDB's: a BIGINT UNSIGNED past 2**63 - 1 among
    them (``u + i``, which failed the statement: 1105 'argument out of range')."""
    mysql_pair.execute(SCHEMA)
    mysql_pair.insert_many("t", ROWS)
    with OverTheWire(mysql_pair) as wire:
        for start in range(0, len(EXPRESSIONS), 20):
            wire.check_prepared(f"SELECT id, {', '.join(EXPRESSIONS[start:start + 20])} "
                                "FROM t WHERE id > ?", [0])
        wire.check_prepared(f"SELECT {', '.join(AGGREGATES)} FROM t WHERE id > ?", [0])
        wire.check_prepared("SELECT u + i, u + i + i, i * 3 FROM t WHERE u >= ?", [1])
