"""``x +/- INTERVAL n unit``, ``DATE_ADD``, ``DATE_SUB``, ``TIMESTAMPADD``,
``TIMESTAMPDIFF``, ``EXTRACT`` and ``DATE_FORMAT`` (rivulet/values/intervals.py,
date_format.py, rivulet/plan/date_calls.py) against MariaDB, where it and MySQL 8 agree:
month arithmetic clamping the day, a DATE plus a unit of the clock becoming a DATETIME,
NULLs, results past year 9999, Django's DurationField sums (``col + INTERVAL duration_col
MICROSECOND``), through ``db.query`` and views kept up to date by writes; the forms whose
MySQL answer rivulet does not give are refused by name."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from mysql_oracle import MySQLPair
from test_mysql_types import check

from rivulet.errors import UnsupportedSqlError

TABLE = """CREATE TABLE ev (id INT PRIMARY KEY, d DATE, ts DATETIME, t6 DATETIME(6),
    n BIGINT, s VARCHAR(30))"""


def _row(rng: random.Random, i: int) -> tuple:
    return (i,
            rng.choice([None, dt.date(2020, 1, 31), dt.date(2024, 2, 29), dt.date(2019, 12, 31),
                        dt.date(9999, 12, 31), dt.date(1, 3, 1), dt.date(2021, 1, 3)]),
            rng.choice([None, dt.datetime(2020, 1, 31, 23, 59, 59), dt.datetime(2024, 2, 29),
                        dt.datetime(1999, 12, 31, 12, 0, 1), dt.datetime(9999, 12, 31, 23, 59),
                        dt.datetime(2021, 1, 1, 0, 0, 0)]),
            rng.choice([None, dt.datetime(2020, 3, 31, 10, 11, 12, 345678),
                        dt.datetime(2000, 1, 1, 0, 0, 0, 1), dt.datetime(2023, 1, 1, 13, 0)]),
            rng.choice([None, 0, 1, -1, 13, 86400000000, -3600000001, 1000000]),
            rng.choice([None, "1 2:03:04", "1:2", "-1 1", "5", "1.5", "2-3", "x"]))


@pytest.fixture
def events(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(TABLE)
    rng = random.Random(11)
    mysql_pair.insert_many("ev", [_row(rng, i) for i in range(1, 40)])
    return mysql_pair


@pytest.mark.parametrize("expr", [
    "d + INTERVAL 1 MONTH", "d - INTERVAL 1 MONTH", "ts + INTERVAL 1 MONTH",
    "d + INTERVAL 1 YEAR", "ts - INTERVAL 12 YEAR", "d + INTERVAL 1 QUARTER",
    "d + INTERVAL 2 WEEK", "d - INTERVAL 1 DAY", "d + INTERVAL 1 HOUR", "d + INTERVAL 90 MINUTE",
    "ts + INTERVAL 1 SECOND", "ts - INTERVAL 1 MICROSECOND", "t6 + INTERVAL 1 DAY",
    "d + INTERVAL n MICROSECOND", "ts + INTERVAL n MICROSECOND", "t6 - INTERVAL n MICROSECOND",
    "INTERVAL n DAY + d", "ts + INTERVAL n MONTH", "d + INTERVAL NULL DAY",
    "DATE_ADD(d, INTERVAL 1 MONTH)", "DATE_SUB(ts, INTERVAL n SECOND)",
    "DATE_ADD(ts, INTERVAL '1 2:03:04' DAY_SECOND)", "DATE_ADD(d, INTERVAL '1-2' YEAR_MONTH)",
    "DATE_SUB(ts, INTERVAL '1:30' HOUR_MINUTE)", "DATE_ADD(ts, INTERVAL s DAY_SECOND)",
    "DATE_ADD(t6, INTERVAL '1.5' SECOND_MICROSECOND)",
    "DATE_ADD(ts, INTERVAL '5' SECOND_MICROSECOND)",
    "DATE_ADD(ts, INTERVAL '1:2:3:4' HOUR_SECOND)", "DATE_ADD(d, INTERVAL s DAY_HOUR)",
    "DATE_ADD(ts, INTERVAL '10' MINUTE_SECOND)", "ADDDATE(d, INTERVAL 3 DAY)",
    "SUBDATE(ts, INTERVAL 3 HOUR)", "ADDDATE(d, 31)", "SUBDATE(ts, n)",
    "DATE_ADD(d, INTERVAL -1 MONTH)",
    "TIMESTAMPADD(MONTH, 1, d)", "TIMESTAMPADD(MICROSECOND, n, ts)", "TIMESTAMPADD(DAY, n, d)",
    "(d + INTERVAL 1 DAY) > ts", "d + INTERVAL (n * 2) SECOND",
])
def test_interval_arithmetic_is_mysqls(events: MySQLPair, expr: str) -> None:
    check(events, f"SELECT id, {expr} AS x FROM ev")


@pytest.mark.parametrize("expr", [
    "TIMESTAMPDIFF(MONTH, d, ts)", "TIMESTAMPDIFF(YEAR, ts, d)", "TIMESTAMPDIFF(QUARTER, d, t6)",
    "TIMESTAMPDIFF(DAY, d, ts)", "TIMESTAMPDIFF(MICROSECOND, t6, ts)",
    "TIMESTAMPDIFF(SECOND, ts, t6)", "TIMESTAMPDIFF(WEEK, d, t6)", "TIMESTAMPDIFF(HOUR, ts, d)",
    "TIMESTAMPDIFF(MINUTE, '2020-01-01 10:00:00', ts)", "TIMESTAMPDIFF(MONTH, '2020-02-29', d)",
    "TIMESTAMPDIFF(MONTH, s, d)",
    "EXTRACT(YEAR FROM d)", "EXTRACT(MONTH FROM ts)", "EXTRACT(DAY FROM t6)",
    "EXTRACT(HOUR FROM ts)", "EXTRACT(MINUTE FROM t6)", "EXTRACT(SECOND FROM ts)",
    "EXTRACT(MICROSECOND FROM t6)", "EXTRACT(WEEK FROM d)", "EXTRACT(QUARTER FROM ts)",
    "EXTRACT(DAY_HOUR FROM ts)", "EXTRACT(YEAR_MONTH FROM d)", "EXTRACT(DAY_SECOND FROM t6)",
    "EXTRACT(HOUR_MINUTE FROM ts)", "EXTRACT(MINUTE_SECOND FROM t6)", "EXTRACT(HOUR FROM d)",
    "EXTRACT(YEAR FROM s)",
    "DATE_FORMAT(ts, '%Y-%m-%d %H:%i:%s')", "DATE_FORMAT(t6, '%f %j %W %a %M %b %p %T')",
    "DATE_FORMAT(d, '%U %u %V %v %X %x %w')", "DATE_FORMAT(ts, '%e %c %k %l %h %I %r %S %y')",
    "DATE_FORMAT(d, '%D %% %q %')", "DATE_FORMAT(ts, s)", "DATE_FORMAT(s, '%Y')",
    "DATE_FORMAT(d, '%Y-%m-01 00:00:00')", "DATE_FORMAT(NULL, '%Y')",
])
def test_date_functions_with_units_are_mysqls(events: MySQLPair, expr: str) -> None:
    check(events, f"SELECT id, {expr} AS x FROM ev")


def test_week_numbers_over_years_ends_are_mysqls(mysql_pair: MySQLPair) -> None:
    """Every calc_week rule, over the days around each new year of 28 years."""
    mysql_pair.execute("CREATE TABLE days (id INT PRIMARY KEY, d DATE)")
    days = [dt.date(y, m, dd) for y in range(2000, 2028) for m, dd in
            ((1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6), (1, 7), (12, 28), (12, 29),
             (12, 30), (12, 31))]
    mysql_pair.insert_many("days", list(enumerate(days)))
    check(mysql_pair, "SELECT id, DATE_FORMAT(d, '%U %u %V %v %X %x'), EXTRACT(WEEK FROM d) "
                      "FROM days")


def test_date_arithmetic_in_where_group_and_views_keeps_up_with_writes(
        events: MySQLPair) -> None:
    queries = {
        "due": ("SELECT id, d + INTERVAL n MICROSECOND AS due FROM ev "
                "WHERE ts + INTERVAL 1 MONTH > d + INTERVAL n MICROSECOND"),
        "months": ("SELECT EXTRACT(YEAR_MONTH FROM ts) AS m, COUNT(*) AS c, "
                   "MAX(TIMESTAMPDIFF(DAY, d, ts)) AS span FROM ev "
                   "GROUP BY EXTRACT(YEAR_MONTH FROM ts)"),
        "fmt": ("SELECT DATE_FORMAT(d, '%Y-%m') AS ym, COUNT(*) AS c FROM ev "
                "GROUP BY DATE_FORMAT(d, '%Y-%m')"),
    }
    for name, sql in queries.items():
        events.create_view(name, sql)
    rng = random.Random(5)
    for k in range(100, 118):
        events.execute("INSERT INTO ev VALUES (?, ?, ?, ?, ?, ?)", _row(rng, k))
        if k % 4 == 0:
            events.execute("UPDATE ev SET ts = ts + INTERVAL 1 MONTH, n = n + 1 "
                           "WHERE EXTRACT(DAY FROM d) > 15")
            events.execute("DELETE FROM ev WHERE TIMESTAMPDIFF(YEAR, d, ts) > 5")
        for name in queries:
            events.check_view(name)
    for sql in queries.values():
        events.check_query(sql)


def test_an_interval_parameter_and_a_written_interval(events: MySQLPair) -> None:
    events.execute("UPDATE ev SET d = DATE_SUB(d, INTERVAL ? DAY) WHERE id < 5", [3])
    events.check_query("SELECT id, d FROM ev")


@pytest.mark.parametrize("unit", ["HOUR", "MINUTE", "SECOND", "MICROSECOND", "HOUR_MINUTE",
                                  "HOUR_SECOND", "MINUTE_SECOND"])
def test_extract_of_a_time_within_a_day_is_mysqls(mysql_pair: MySQLPair, unit: str) -> None:
    """EXTRACT of a TIME, its sign kept. (Past 24 hours MariaDB takes the days out,
    EXTRACT(HOUR FROM '838:00:00') is 22; MySQL 8 keeps them, 838, as rivulet does.)"""
    mysql_pair.execute("CREATE TABLE tm (id INT PRIMARY KEY, t TIME(6))")
    mysql_pair.insert_many("tm", list(enumerate([
        None, dt.timedelta(0), dt.timedelta(hours=23, minutes=59, seconds=59, microseconds=5),
        -dt.timedelta(hours=10, minutes=5, seconds=3, microseconds=250000),
        dt.timedelta(minutes=1, microseconds=1), -dt.timedelta(microseconds=1)])))
    check(mysql_pair, f"SELECT id, EXTRACT({unit} FROM t) FROM tm")


@pytest.mark.parametrize("interval", ["1 DAY", "1 HOUR", "1 MICROSECOND", "'1:1' MINUTE_SECOND",
                                      "-11 HOUR", "40 DAY", "59 SECOND", "'0:58.999999' "
                                      "MINUTE_MICROSECOND", "NULL SECOND"])
def test_a_time_moved_by_an_interval_is_a_time(mysql_pair: MySQLPair, interval: str) -> None:
    """A TIME plus the clock's units or days: a TIME, NULL past 838:59:59. (Between
    838:59:59 and 838:59:59.999999 MySQL 8 answers NULL, as rivulet does, and MariaDB the
    TIME: the intervals here stay off that edge.)"""
    mysql_pair.execute("CREATE TABLE tm (id INT PRIMARY KEY, t TIME, t3 TIME(3))")
    mysql_pair.insert_many("tm", [
        (1, dt.timedelta(hours=10), dt.timedelta(seconds=1, microseconds=500000)),
        (2, dt.timedelta(hours=838), -dt.timedelta(hours=838)),
        (3, -dt.timedelta(hours=1), None),
        (4, dt.timedelta(hours=838, minutes=59), -dt.timedelta(hours=838, minutes=59))])
    check(mysql_pair, f"SELECT id, t + INTERVAL {interval} AS a, "
                      f"DATE_SUB(t3, INTERVAL {interval}) AS b FROM tm")


TEXTS = ["2020-01-31", "2020-01-31 10:00:00", "2020-01-31 10:00:00.5", "x", "2020-02-30",
         "20200131", "2020-01-31 10:00:00.000000", " 2020-1-3 ", "2020-01-31T01:02:03",
         "0000-00-00", "2020-01-00", "9999-12-31"]


@pytest.mark.parametrize("interval", ["1 DAY", "-1 MONTH", "1 HOUR", "1 MICROSECOND",
                                      "'1:1' MINUTE_SECOND", "1 YEAR"])
def test_text_moved_by_an_interval_is_mysql_8s_text(mysql_pair: MySQLPair,
                                                    interval: str) -> None:
    """Text gives text: a date, or a datetime, as MariaDB answers it but for the fraction
    of a datetime that has none, which MySQL 8 leaves out and MariaDB shows as .000000."""
    mysql_pair.execute("CREATE TABLE txt (id INT PRIMARY KEY, s VARCHAR(40))")
    mysql_pair.insert_many("txt", list(enumerate(TEXTS)))
    sql = f"SELECT id, s + INTERVAL {interval} AS a, DATE_SUB(s, INTERVAL {interval}) AS b " \
          "FROM txt"
    mysql_pair.create_view("moved", sql)
    mysql_pair.settle()
    theirs = sorted(tuple(v.removesuffix(".000000") if isinstance(v, str) else v for v in row)
                    for row in mysql_pair.mariadb(sql))
    assert sorted(mysql_pair.db.query(sql)) == theirs
    assert sorted(mysql_pair.db.view("moved").scan()) == theirs
    constant = f"SELECT '2020-01-31 10:00:00' + INTERVAL {interval}, " \
               f"'2020-01-31' + INTERVAL {interval}"
    assert [tuple(v.removesuffix(".000000") for v in row)
            for row in mysql_pair.mariadb(constant)] == mysql_pair.db.query(constant)


@pytest.mark.parametrize("expr,what", [
    ("n + INTERVAL 1 DAY", "DATE_ADD .* of a int"), ("ADDDATE(n, 1)", "ADDDATE.* of a int"),
    ("d + INTERVAL 1.5 DAY", "not an integer"),
    ("d + INTERVAL s DAY", "INTERVAL of a str"),
    ("d + INTERVAL 1.5e0 HOUR", "not an integer"),
    ("TIMESTAMPDIFF(DAY, TIME('10:00:00'), ts)", "TIMESTAMPDIFF\\(\\) of a time"),
    ("EXTRACT(HOUR FROM s)", "EXTRACT\\(\\) of a str with a unit of the clock"),
    ("DATE_ADD(d, 1)", "DATE_ADD of days written without INTERVAL"),
    ("TIMESTAMPDIFF(FORTNIGHT, d, ts)", "TIMESTAMPDIFF with that unit"),
    ("INTERVAL 1 DAY - d", "INTERVAL on the left of -"),
    ("TIME('10:00:00') + INTERVAL 1 WEEK", "DATE_ADD .* of a time by WEEK"),
    ("TIME('10:00:00') - INTERVAL 1 MONTH", "DATE_SUB .* of a time by MONTH"),
])
def test_forms_rivulet_does_not_answer_as_mysql_are_refused(events: MySQLPair, expr: str,
                                                            what: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=what):
        events.db.query(f"SELECT {expr} FROM ev")
