"""Which functions rivulet computes, pinned against the parser's and MySQL's lists.

sqlglot's mysql dialect knows hundreds of function names, other dialects' among them
(``NVL``, ``STRPOS``, ``DATE_TRUNC``), and builds some MySQL functions as expressions that
mean something else to rivulet (``TO_DAYS`` as a DATEDIFF from year 0). rivulet's parser
builds only the functions its registry computes; every other call is refused when it is
planned, by name: MySQL's "FUNCTION x does not exist" (1305) for a name MySQL lacks too,
"unsupported function" (1235) for a MySQL function rivulet lacks, MySQL's "Incorrect
parameter count" (1582) for a call with a number of arguments its function does not take,
never a NameError, KeyError or TypeError at run time. Each function rivulet computes
answers as MariaDB (the MySQL oracle) does, ``CONVERT_TZ`` included.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from sqlglot.parsers.mysql import MySQLParser

import rivulet
from rivulet import values as F
from rivulet.errors import (
    ArgumentCountError,
    RivuletError,
    SqlSyntaxError,
    UnknownFunctionError,
    UnsupportedSqlError,
)
from rivulet.sql.clock import CLOCK_FUNCTIONS
from rivulet.sql.syntax import COMPUTED_FUNCTIONS, MYSQL_FUNCTION_NAMES, is_mysql_function
from rivulet.values.dates import MAX_OFFSET, MIN_OFFSET, convert_tz

TABLE = "CREATE TABLE f (id INT PRIMARY KEY, n INT, x DECIMAL(6,2), s VARCHAR(20), d DATETIME)"
ROWS = [
    (1, 7, "2.50", "abc", dt.datetime(2020, 1, 1, 12, 30, 15)),
    (2, -3, "-1.25", " Hello ", dt.datetime(1999, 12, 31, 23, 59, 59)),
    (3, None, None, None, None),
    (4, 0, "0.00", "", dt.datetime(2038, 1, 19, 3, 14, 7)),
]

#: Every name a call could be written with: sqlglot's MySQL tables and MySQL's own list.
ALL_NAMES = sorted(set(MySQLParser.FUNCTIONS) | set(MySQLParser.FUNCTION_PARSERS)
                   | MYSQL_FUNCTION_NAMES)
#: Names rivulet runs through syntax of their own besides the registry's calls (the time
#: functions: rivulet/sql/clock.py).
SPECIAL_SYNTAX = {"POSITION", "CAST", "CONVERT", "REGEXP_LIKE", "ADDTIME", "SUBTIME",
                  *CLOCK_FUNCTIONS}
#: What a call rivulet does not compute may raise.
REFUSALS = (UnsupportedSqlError, UnknownFunctionError, ArgumentCountError, SqlSyntaxError)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path_factory.mktemp("functions") / "db")
    database.execute(TABLE)
    database.table("f").insert_many(ROWS)
    database.settle()
    yield database
    database.close()


@pytest.fixture
def pair(mysql_pair: Any) -> Any:
    mysql_pair.execute(TABLE)
    mysql_pair.insert_many("f", ROWS)
    mysql_pair.settle()
    return mysql_pair


def test_every_name_the_parser_knows_is_computed_or_refused_by_name(
        db: rivulet.Database) -> None:
    ran: dict[str, list[str]] = {}
    for name in ALL_NAMES:
        # ('$': a constant JSON path; 'one': JSON_CONTAINS_PATH's constant mode; s: text,
        # which JSON_QUOTE takes only)
        for args in ("", "n", "n, n", "n, n, n", "n, '$'", "n, 'one', '$'", "s"):
            sql = f"SELECT {name}({args}) FROM f"
            try:
                db.query(sql)
            except REFUSALS as exc:
                if isinstance(exc, (UnsupportedSqlError, UnknownFunctionError)):
                    assert name.lower() in str(exc).lower(), (sql, str(exc))
                continue
            except RivuletError as exc:  # pragma: no cover - the failure report
                pytest.fail(f"{sql}: {type(exc).__name__}: {exc}")
            ran.setdefault(name, []).append(args)
    # what runs is what rivulet computes, written as MySQL writes it
    assert set(ran) <= COMPUTED_FUNCTIONS | SPECIAL_SYNTAX, sorted(
        set(ran) - COMPUTED_FUNCTIONS - SPECIAL_SYNTAX)
    assert all(is_mysql_function(name) for name in ran), ran
    # and every function of the registry runs
    assert set(F.SCALAR_FUNCTIONS) <= set(ran), sorted(set(F.SCALAR_FUNCTIONS) - set(ran))


def test_the_parser_builds_only_what_the_registry_computes() -> None:
    from rivulet.sql.parse import _Parser

    assert set(_Parser.FUNCTIONS) <= COMPUTED_FUNCTIONS
    assert all(is_mysql_function(name) for name in _Parser.FUNCTION_PARSERS)
    assert set(F.SCALAR_FUNCTIONS) <= MYSQL_FUNCTION_NAMES


#: A call of each registry function, over the table's columns.
CALLS = [
    "ABS(x)", "ABS(n)", "CEIL(x)", "CEILING(n)", "FLOOR(x)", "ROUND(x)", "ROUND(x, 1)",
    "SIGN(x)", "MOD(n, 4)", "GREATEST(n, 1)", "LEAST(x, -5.00)", "COALESCE(s, 'none')",
    "IFNULL(n, -1)", "NULLIF(n, 0)", "IF(n > 0, s, 'no')", "CONCAT(s, n)", "CONCAT_WS('-', s, n)",
    "LOWER(s)", "LCASE(s)", "UPPER(s)", "UCASE(s)", "LENGTH(s)", "OCTET_LENGTH(s)",
    "CHAR_LENGTH(s)", "CHARACTER_LENGTH(s)", "SUBSTRING(s, 2)", "SUBSTR(s, 2, 2)", "MID(s, 2)",
    "MID(s, 1, 2)", "LEFT(s, 2)", "RIGHT(s, 2)", "TRIM(s)", "LTRIM(s)", "RTRIM(s)",
    "REPLACE(s, 'l', 'L')", "REVERSE(s)", "LOCATE('l', s)", "LOCATE('l', s, 4)", "INSTR(s, 'b')",
    "LPAD(s, 6, '*')", "RPAD(s, 6, '*')", "REPEAT(s, 2)", "POSITION('b' IN s)", "YEAR(d)",
    "MONTH(d)", "DAY(d)", "DAYOFMONTH(d)", "HOUR(d)", "MINUTE(d)", "SECOND(d)", "DATE(d)",
    "DATEDIFF(d, '2000-01-01')", "UNIX_TIMESTAMP(d)", "CONVERT_TZ(d, '+00:00', '+05:30')",
    "TIME(d)", "TIME(s)", "TIMEDIFF(d, '2000-01-01 00:00:00')", "TIME_TO_SEC(d)",
    "SEC_TO_TIME(n)", "SEC_TO_TIME(x)", "JSON_VALID(s)", "JSON_VALID(x)", "JSON_TYPE(n)",
    "JSON_TYPE(x)", "JSON_LENGTH(s)", "JSON_KEYS(s)", "JSON_UNQUOTE(s)",
    "JSON_EXTRACT(s, '$')", "JSON_CONTAINS(s, s)", "JSON_CONTAINS(s, '1', '$')",
    "JSON_CONTAINS_PATH(s, 'one', '$')", "JSON_QUOTE(s)", "BIT_COUNT(n)", "BIT_COUNT(x)",
    "LN(x)", "LOG(x)", "LOG(2, n)", "LOG2(n)", "LOG10(x)", "EXP(n)", "POW(x, 2)", "POWER(n, 3)",
    "SQRT(x)", "DAYOFWEEK(d)",
    "WEEKDAY(d)", "DAYOFYEAR(d)", "ASCII(s)", "ORD(s)", "HEX(s)", "HEX(x)", "UNHEX(s)",
    "DATE_FORMAT(d, '%Y-%m-%d %H %W')", "DATE_FORMAT(s, '%j')", "MICROSECOND(d)",
]


@pytest.mark.parametrize("call", CALLS)
def test_each_function_rivulet_computes_answers_as_mariadb(pair: Any, call: str) -> None:
    pair.check_query(f"SELECT id, {call} FROM f")


def test_the_registry_is_covered_by_the_calls() -> None:
    named = {call.split("(")[0] for call in CALLS}
    assert set(F.SCALAR_FUNCTIONS) <= named | {"POSITION"}


# --------------------------------------------------------------------------- CONVERT_TZ

ZONE_TABLE = "CREATE TABLE z (id INT PRIMARY KEY, d DATETIME, src VARCHAR(20), dst VARCHAR(20))"
#: Zones MariaDB and MySQL 8 read alike (MariaDB's offsets stop at -12:59 and +13:00).
ZONES = ["+00:00", "-05:30", "+5:30", "+13:00", "-12:59", "+05:3", "+005:00", "-00:00",
         "+:30", "SYSTEM", "system", "UTC", "Europe/Paris", "", "+05:60", "05:30", "+0530",
         " +01:00", "+01:00 ", "+01:", "+1", "+00:00:00", "x"]
INSTANTS = [
    dt.datetime(2020, 1, 1, 0, 0), dt.datetime(2020, 6, 30, 23, 59, 59),
    dt.datetime(1970, 1, 1, 0, 0), dt.datetime(1970, 1, 1, 0, 0, 1),
    dt.datetime(1970, 1, 1, 4, 59, 59), dt.datetime(1970, 1, 1, 5, 0, 1),
    dt.datetime(2038, 1, 19, 3, 14, 7), dt.datetime(2038, 1, 19, 3, 14, 8),
    dt.datetime(1960, 5, 5, 5, 5), dt.datetime(9999, 12, 31, 23, 0), None,
]


def test_convert_tz_answers_as_mariadb(pair: Any) -> None:
    """Offsets and 'SYSTEM' (UTC, as rivulet's time is), NULL for a named zone (as a
    server without time zone tables, the oracle's case) or a malformed one, and a value
    whose UTC time is outside the TIMESTAMP range unchanged."""
    pair.execute(ZONE_TABLE)
    rows = []
    for i, d in enumerate(INSTANTS):
        for j, zone in enumerate(ZONES):
            rows.append((len(rows) + 1, d, ZONES[(i + j) % len(ZONES)], zone))
    rows.append((len(rows) + 1, INSTANTS[0], None, "+01:00"))
    pair.insert_many("z", rows)
    pair.check_query("SELECT id, CONVERT_TZ(d, src, dst) FROM z")
    pair.check_query("SELECT id, CONVERT_TZ(d, '+05:00', dst) FROM z WHERE id < 40")
    pair.check_query("SELECT id FROM z WHERE CONVERT_TZ(d, src, '+01:00') > '2020-01-01'")


@pytest.mark.parametrize("value", ["'2020-01-01'", "'2020-01-01 10:00'", "20200101",
                                   "'2020-01-01 00:00:00.5'", "'1970-01-01 05:00:00.5'",
                                   "'garbage'", "'2020-02-30 00:00:00'", "NULL", "d", "DATE(d)",
                                   "'2020-01-01T00:00:00'", "1.5"])
def test_convert_tz_reads_its_value_as_mariadb(pair: Any, value: str) -> None:
    pair.execute(ZONE_TABLE)
    pair.insert_many("z", [(1, dt.datetime(2021, 3, 4, 5, 6, 7), "+00:00", "-01:00")])
    pair.check_query(f"SELECT id, CONVERT_TZ({value}, src, dst), CONVERT_TZ({value}, 'SYSTEM', "
                     "'+02:00') FROM z")


def test_convert_tz_takes_mysql_8s_offsets() -> None:
    """MySQL 8.0.19 widened the offsets to -13:59 .. +14:00 (MariaDB, the oracle, and
    older MySQL stop at -12:59 .. +13:00), so these are by MySQL's documented range."""
    noon = dt.datetime(2020, 1, 1, 12, 0)
    assert convert_tz(noon, "+00:00", "+14:00") == dt.datetime(2020, 1, 2, 2, 0)
    assert convert_tz(noon, "+00:00", "-13:59") == dt.datetime(2019, 12, 31, 22, 1)
    assert convert_tz(noon, "+00:00", "+14:01") is None
    assert convert_tz(noon, "+00:00", "-14:00") is None
    assert (MIN_OFFSET, MAX_OFFSET) == (-dt.timedelta(hours=13, minutes=59),
                                        dt.timedelta(hours=14))


@pytest.mark.parametrize("sql", ["SELECT CONVERT_TZ(d, '+00:00') FROM f",
                                 "SELECT CONVERT_TZ(d) FROM f",
                                 "SELECT CONVERT_TZ(d, '+00:00', '+01:00', 1) FROM f"])
def test_convert_tz_takes_three_arguments(pair: Any, sql: str) -> None:
    with pytest.raises(ArgumentCountError, match="CONVERT_TZ"):
        pair.db.query(sql)
    with pytest.raises(Exception, match="1582"):
        pair.mariadb(sql)
