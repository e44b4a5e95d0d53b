"""``YEAR``, ``MONTH``, ``DAY``, ``DAYOFMONTH`` and ``EXTRACT`` of text and numbers read as
dates (``values.conversions.date_fields``) against MariaDB: those functions read a date
"fuzzily", so a month or day of 0 is a date to them (``MONTH(1000)``, 1000 read as YYMMDD
00-10-00, is 10; ``DAY('2000-10-00')`` is 0; the number 0 and text '0000-00-00' are the
zero date), while a day past its month's end is no date (NULL). rivulet answered NULL for
every one of them (found by the random differential test: ``SELECT DISTINCT MONTH(a)``
over a DOUBLE holding 1000). Through ``db.query`` and through views kept up to date."""

from __future__ import annotations

import datetime as dt

import pytest
from mysql_oracle import MySQLPair
from test_mysql_types import check

from rivulet.errors import UnsupportedSqlError

#: Text and numbers: zero months and days, two-digit years, the zero date, years 0, days
#: past their month's end, times past 23, trailing junk, and numbers of no date's length.
TEXTS = ["2000-10-00", "2000-00-05", "0000-00-00", "2000-00-00", "2000-10-00 10:11:12",
         "0000-00-00 00:00:01", "2000-02-30", "2001-02-29", "0000-02-29", "2000-10-32",
         "2000-00-05 25:00:00", "2000-10-00x", "20001000", "001000", "2024-02-29", "junk", ""]
NUMBERS = [1000, 100, 101, 1231, 691231, 700101, 991231, 100000, 10000, 20001000, 20000000,
           20001300, 20001000123456, 99, 0, -1, 20240229, 20230229]
DECIMALS = ["1000.0", "0.5", "20001000.25", "1000.9"]


@pytest.fixture
def written(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute("CREATE TABLE w (id INT PRIMARY KEY, s VARCHAR(30), n BIGINT, "
                       "f DOUBLE, d DECIMAL(12,2))")
    rows = [(i, s, None, None, None) for i, s in enumerate(TEXTS)]
    rows += [(100 + i, None, n, float(n), None) for i, n in enumerate(NUMBERS)]
    rows += [(200 + i, None, None, float(d), d) for i, d in enumerate(DECIMALS)]
    mysql_pair.insert_many("w", rows)
    return mysql_pair


@pytest.mark.parametrize("fn", ["YEAR", "MONTH", "DAY", "DAYOFMONTH"])
def test_date_parts_of_text_and_numbers_with_zero_months_and_days_are_mysqls(
        written: MySQLPair, fn: str) -> None:
    check(written, f"SELECT id, {fn}(s), {fn}(n), {fn}(f), {fn}(d) FROM w")


@pytest.mark.parametrize("unit", ["YEAR", "MONTH", "DAY", "QUARTER", "YEAR_MONTH"])
def test_extract_of_text_and_numbers_with_zero_months_and_days_is_mysqls(
        written: MySQLPair, unit: str) -> None:
    numbers = "" if unit == "DAY" else \
        f", EXTRACT({unit} FROM n), EXTRACT({unit} FROM f), EXTRACT({unit} FROM d)"
    check(written, f"SELECT id, EXTRACT({unit} FROM s){numbers} FROM w")  # (DAY: refused)


def test_a_date_compared_with_a_number_past_fourteen_digits_is_mysqls(
        mysql_pair: MySQLPair) -> None:
    """A number longer than YYYYMMDDhhmmss is no date (10**15 read as year 100000 with a
    zero month made DATE <= 10**15 true; MariaDB: false; found by bench.reliability's
    oracle fuzzer)."""
    mysql_pair.execute("CREATE TABLE c (id INT PRIMARY KEY, day DATE, big BIGINT)")
    mysql_pair.insert_many("c", [(1, dt.date(2020, 2, 29), 10**15), (2, dt.date(2020, 2, 29),
                                                                     99999999999999),
                                 (3, dt.date(1999, 1, 1), 10**14), (4, None, 10**15)])
    check(mysql_pair, "SELECT id, day <= big, day >= big, day = big, big < day FROM c")


def test_a_distinct_month_of_a_double_column_follows_writes(written: MySQLPair) -> None:
    """The differential test's query: a view grouping by the month a DOUBLE reads as."""
    sql = "SELECT DISTINCT MONTH(f) AS m FROM w"
    check(written, sql)
    written.execute("INSERT INTO w VALUES (300, NULL, NULL, 1100, NULL), "
                    "(301, NULL, NULL, 0, NULL)")
    written.execute("UPDATE w SET f = 1200 WHERE id = 100")
    written.execute("DELETE FROM w WHERE id = 113")
    check(written, sql)


@pytest.mark.parametrize(("expr", "what"), [
    # MySQL counts the week of a date with a zero month from its own day numbers (MariaDB
    # answers 613566752 for '2000-00-05')
    ("EXTRACT(WEEK FROM s)", "with unit WEEK"), ("EXTRACT(WEEK FROM n)", "with unit WEEK"),
    ("EXTRACT(WEEK FROM f)", "with unit WEEK"),
    # MariaDB reads a number as a time there (20001000 is 2000 hours: day 83), MySQL as a
    # date (day 0)
    ("EXTRACT(DAY FROM n)", "DAY .MariaDB reads a number there as a time"),
    ("EXTRACT(DAY FROM f)", "DAY .MariaDB reads a number there as a time"),
    ("EXTRACT(DAY FROM d)", "DAY .MariaDB reads a number there as a time"),
])
def test_extracts_whose_answer_is_not_mysqls_are_refused(written: MySQLPair, expr: str,
                                                         what: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=what):
        written.db.query(f"SELECT {expr} FROM w")
