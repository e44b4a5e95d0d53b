"""``ADDTIME``, ``SUBTIME``, ``DAYOFWEEK``, ``WEEKDAY``, ``DAYOFYEAR`` and ``MICROSECOND``
(rivulet/values/dates.py) against MariaDB, over TIME(fsp), DATETIME, DATE and text
arguments, NULLs, the TIME range's edge and dates that are none, through ``db.query`` and a
view kept up to date by writes; the forms whose MySQL answer is text (or the day's) are
refused by name."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from mysql_oracle import MySQLPair
from test_mysql_types import check

from rivulet.errors import UnsupportedSqlError

TIMES_TABLE = """CREATE TABLE tt (id INT PRIMARY KEY, t TIME, t3 TIME(3), ts DATETIME,
    d DATE, s VARCHAR(30), n INT)"""


def _row(rng: random.Random, i: int) -> tuple:
    return (i, rng.choice([None, dt.timedelta(0), dt.timedelta(hours=10),
                           -dt.timedelta(hours=1, seconds=1), dt.timedelta(hours=838)]),
            rng.choice([None, dt.timedelta(seconds=3723, microseconds=500000),
                        -dt.timedelta(microseconds=1000)]),
            rng.choice([None, dt.datetime(2020, 1, 1, 23, 30), dt.datetime(2024, 2, 29),
                        dt.datetime(9999, 12, 31, 23, 59, 59), dt.datetime(1970, 1, 1)]),
            rng.choice([None, dt.date(2020, 1, 5), dt.date(2024, 12, 31), dt.date(2000, 2, 29)]),
            rng.choice([None, "01:00:00", "2020-01-01 10:00:00", "2020-01-05", "x", "", "838:59",
                        "1 02:03:04", "-00:00:01.5", "2020-02-30", "20200105"]),
            rng.choice([None, 0, 1, 10000, -59, 20200105]))


@pytest.fixture
def times(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(TIMES_TABLE)
    rng = random.Random(9)
    mysql_pair.insert_many("tt", [_row(rng, i) for i in range(1, 40)])
    return mysql_pair


@pytest.mark.parametrize("expr", [
    "ADDTIME(t, '01:00:00')", "ADDTIME(t3, t)", "ADDTIME(t, t3)", "ADDTIME(ts, '01:00:00')",
    "ADDTIME(ts, t3)", "ADDTIME(ts, t)", "ADDTIME(t, NULL)", "ADDTIME(t, '838:00:00')",
    "ADDTIME(ts, '-00:00:01.5')", "ADDTIME(t, '-838:59:59')", "ADDTIME(t3, '00:00:00.25')",
    "SUBTIME(t, '11:00:00')", "SUBTIME(ts, '24:00:00')", "SUBTIME(t3, t3)", "SUBTIME(ts, t)",
    "ADDTIME(t, '1 02:00:00')", "ADDTIME(t, t) > '20:00'", "ADDTIME(ts, '10:00')",
    "CONCAT(ADDTIME(t3, '00:00:01'))", "DAYOFWEEK(d)", "DAYOFWEEK(ts)", "DAYOFWEEK(s)",
    "DAYOFWEEK(n)", "WEEKDAY(d)", "WEEKDAY(ts)", "WEEKDAY(s)", "DAYOFYEAR(d)", "DAYOFYEAR(ts)",
    "DAYOFYEAR(s)", "DAYOFYEAR(n)", "DAYOFWEEK(NULL)", "DAYOFWEEK(d) + 1",
    "MICROSECOND(t)", "MICROSECOND(t3)", "MICROSECOND(ts)", "MICROSECOND(d)", "MICROSECOND(s)",
    "MICROSECOND(n)", "MICROSECOND(t3) + 1", "MICROSECOND(NULL)",
])
def test_time_functions_are_mysqls(times: MySQLPair, expr: str) -> None:
    check(times, f"SELECT id, {expr} AS x FROM tt")


def test_time_functions_in_where_and_a_view_keep_up_with_writes(times: MySQLPair) -> None:
    sql = ("SELECT id, ADDTIME(ts, t) AS a, WEEKDAY(d) AS w FROM tt "
           "WHERE DAYOFWEEK(d) IN (1, 7) OR SUBTIME(t, '01:00:00') > '05:00:00'")
    times.create_view("weekend", sql)
    rng = random.Random(4)
    for k in range(100, 120):
        times.execute("INSERT INTO tt VALUES (?, ?, ?, ?, ?, ?, ?)", _row(rng, k))
        if k % 5 == 0:
            times.execute("UPDATE tt SET t = ADDTIME(t, '01:00:00') WHERE DAYOFYEAR(d) > 100")
            times.execute("DELETE FROM tt WHERE WEEKDAY(ts) = 2")
        times.check_view("weekend")
    times.check_query(sql)


@pytest.mark.parametrize("expr,what", [
    ("ADDTIME(d, t)", "ADDTIME\\(\\) of a date"), ("ADDTIME(s, t)", "ADDTIME\\(\\) of a str"),
    ("SUBTIME('10:00:00', t)", "SUBTIME\\(\\) of a str"), ("ADDTIME(t, ts)", "by a datetime"),
    ("ADDTIME(t, 1.5e0)", "by a float"), ("DAYOFWEEK(t)", "DAYOFWEEK\\(\\) of a TIME"),
    ("ADDTIME(t, s)", "by a str"), ("ADDTIME(ts, n)", "by a int"),
    ("ADDTIME(t, '2020-01-01 01:00:00')", "by a str"), ("ADDTIME(t, 10000)", "by a int"),
    ("WEEKDAY(t3)", "WEEKDAY\\(\\) of a TIME"), ("EXTRACT(DAY FROM t)", "EXTRACT\\(\\) of a time"),
    ("EXTRACT(DAY_HOUR FROM t)", "EXTRACT\\(\\) of a time"),
])
def test_forms_mysql_answers_as_text_or_by_the_day_are_refused(times: MySQLPair, expr: str,
                                                              what: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=what):
        times.db.query(f"SELECT {expr} FROM tt")


@pytest.mark.parametrize(("text", "seconds"), [
    ("1969-12-31 23:59:59", 0), ("1970-01-01 00:00:01", 1),
    ("2040-01-01", 2208988800), ("3001-01-18 23:59:59", 32536771199),
    ("3001-01-19 00:00:00", 0), ("9999-12-31", 0)])
def test_unix_timestamp_outside_mysql_8s_range_is_0(text: str, seconds: int) -> None:
    """MySQL 8 (8.0.28 on, 64-bit) answers UNIX_TIMESTAMP from 1970-01-01 00:00:01 to
    3001-01-18 23:59:59 UTC and 0 outside; MariaDB answers NULL past 2038, so it is no
    oracle here: the figures are MySQL's documented range, the seconds Python's."""
    from rivulet.values.dates import unix_timestamp

    assert unix_timestamp(text) == seconds
    if seconds:
        assert dt.datetime.fromtimestamp(seconds, dt.UTC).replace(tzinfo=None) \
            == dt.datetime.fromisoformat(text)
