"""TIME columns as MySQL keeps them: signed durations up to 838:59:59, as ``timedelta``.

Compared with MariaDB (tests/mysql_oracle.py): what a TIME column accepts in strict mode,
ordering, comparisons with text and numbers, numeric context ([-]HHMMSS), the TIME
functions, views keyed or ranged by a TIME, and what the MySQL server sends for TIME and
ENUM columns (types and values, read by PyMySQL from rivulet and from MariaDB alike).

Fractions that need rounding are left out of the comparisons: MySQL rounds a TIME to its
column's digits, MariaDB truncates (``test_fractions_round_as_mysql_rounds`` pins MySQL's).
"""

from __future__ import annotations

import datetime as dt

import pymysql
import pytest
from mysql_oracle import MySQLPair

import rivulet
from rivulet.errors import IncorrectTimeError, UnsupportedSqlError
from rivulet.server.mysql.server import ServerThread

TIMES = "CREATE TABLE tm (id INT PRIMARY KEY, t TIME, t3 TIME(3), d DATETIME, s VARCHAR(20))"
ROWS = [
    (1, "10:11:12", "10:11:12.5", "2024-01-02 10:11:12", "10:11:12"),
    (2, "-838:59:59", "-838:59:59", "2024-01-02 00:00:00", "abc"),
    (3, "25:00:00", "-00:00:00.25", None, "25:00"),
    (4, "00:00:00", None, "2024-03-01 23:59:59", None),
    (5, "-00:30:00", "00:00:01", None, "101112"),
    (6, None, "12:00:00", "2024-01-01 12:00:00", "2024-01-01 12:00:00"),
    (7, "03:04:05", "03:04:05.125", None, "-1 10:00"),
]


def _td(**parts: float) -> dt.timedelta:
    return dt.timedelta(**parts)


@pytest.fixture
def times(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(TIMES)
    for row in ROWS:
        mysql_pair.execute("INSERT INTO tm VALUES (?, ?, ?, ?, ?)", list(row))
    return mysql_pair


def test_a_time_column_stores_what_mysql_accepts(mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE t1 (id INT PRIMARY KEY, t TIME)")
    values = ["10:11:12", "-838:59:59", "838:59:59", "839:00:00", "-839:00:00", "25:00",
              "1 02:03:04", "-1 10:11", 101112, -101112, 8385959, 8385960, "101112",
              "2020-01-02 03:04:05", "2020-01-02", "abc", "10:61:00", "10:00:60", 1234, 60,
              "-0:30", "12", "1112", "", "10:11:12x", " 10:11:12 ", _td(hours=30, seconds=5),
              _td(seconds=-1), _td(hours=900), dt.time(7, 8, 9), 0, None, 59.0, 20200102030405,
              "2021-02-03 5", "1-2-3 5.6", "2021-02-03T5 ", "2021-02-03 5x", "2021-02-30 5",
              "2021-02-03.5", "10:11:12 5"]
    for i, value in enumerate(values):
        pair.execute("INSERT INTO t1 VALUES (?, ?)", [i, value])  # both accept or both refuse
    got = pair.check_query("SELECT id, t FROM t1 ORDER BY id")
    assert all(type(t) is dt.timedelta for _, t in got if t is not None)


def test_a_refused_time_says_why(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute(TIMES)
    with pytest.raises(IncorrectTimeError, match=r"tm\.t.*'10:61:00'"):
        mysql_pair.db.execute("INSERT INTO tm (id, t) VALUES (1, '10:61:00')")
    with pytest.raises(IncorrectTimeError, match="838:59:59"):
        mysql_pair.db.table("tm").insert_many([(1, _td(hours=839), None, None, None)])


def test_fractions_round_as_mysql_rounds() -> None:
    # MySQL rounds a fraction to the column's digits (MariaDB would truncate); pinned by hand.
    from rivulet.values.schema import TIME, Column, coerce_value

    assert coerce_value(Column("t", TIME), "10:00:00.5") == _td(hours=10, seconds=1)
    assert coerce_value(Column("t", TIME), "-00:00:00.5") == _td(seconds=-1)
    assert coerce_value(Column("t", TIME, fsp=2), 59.125) == _td(seconds=59, milliseconds=130)
    assert coerce_value(Column("t", TIME, fsp=6), "00:00:00.1234567") == _td(microseconds=123457)


def test_time_columns_order_and_compare_as_times(times: MySQLPair) -> None:
    times.check_query("SELECT id, t, t3 FROM tm ORDER BY t, id")
    times.check_query("SELECT id, t FROM tm ORDER BY t DESC, id")
    times.check_query("SELECT MAX(t), MIN(t), MAX(t3), MIN(t3), COUNT(DISTINCT t) FROM tm")
    for where in ["t > '10:00:00'", "t > '9:00'", "t = '10:11:12'", "t > 100000",
                  "t = 101112", "t = 101112.0", "t = '101112'", "t < '2024-01-01 10:00:00'",
                  "t IN ('10:11:12', '25:00:00')", "t BETWEEN '00:00:00' AND '10:00:00'",
                  "t < t3", "t = s", "t", "NOT t", "t3 > '12:00'", "t <=> NULL",
                  "t > -3000", "t3 = '00:00:01'"]:
        times.check_query(f"SELECT id FROM tm WHERE {where}")


def test_numbers_and_text_compare_with_a_time_as_the_time_they_read_as(
        mysql_pair: MySQLPair) -> None:
    """A number compared with a TIME is read as a TIME, not the TIME as a number: one that
    is none (minutes past 59, no datetime) is 00:00:00, 8 to 14 digits are a datetime's
    time part (the day not checked against the month), one past the range is
    838:59:59.999999; a BETWEEN with a TIME among text or numbers compares all three so."""
    pair = mysql_pair
    pair.execute("CREATE TABLE t6 (id INT PRIMARY KEY, a TIME(6), n INT, s VARCHAR(20))")
    rows = [(1, "838:59:59.999999", 8390000, "839:00:00"), (2, "00:00:00", 3000000, "abc"),
            (3, "12:34:56", 123456, "2024-02-30 12:34:56"), (4, "-01:00:00", -20240102, ""),
            (5, "01:02:03", 9999999, "00:00:10"), (6, "838:59:59", 10000000, "-839:00")]
    for row in rows:
        pair.execute("INSERT INTO t6 VALUES (?, ?, ?, ?)", list(row))
    for number in [9999999, 8390000, 8385960, 100000000000000, -20240102, 20240102,
                   3000000000, 99999999999999, 99999999000000, 101123456, 20240230123456,
                   20240001123456, 691231235960, 8390000.5, 1.5, "1.5e0", -0.5]:
        for op in ["=", "<=", ">"]:
            pair.check_query(f"SELECT id FROM t6 WHERE a {op} {number} ORDER BY id")
    for where in ["a = '1e3'", "a < '1.5e1'", "a = '12e'", "a = '1 x'", "a BETWEEN '1e3' AND '1'",
                  "a = n", "a < n", "a = s", "a > s", "a NOT BETWEEN '2024-01-02' AND 3000000000",
                  "'00:00:10' BETWEEN a AND 5", "s BETWEEN a AND 5", "n BETWEEN a AND '900:00'",
                  "a BETWEEN 10000 AND '02:00:00'"]:
        pair.check_query(f"SELECT id FROM t6 WHERE {where} ORDER BY id")
    pair.check_query("SELECT CAST(8390000 AS TIME(6)), CAST(-8390000 AS TIME), "
                     "CAST('839:00:00' AS TIME(3)), CAST(20240230123456 AS TIME) FROM t6 "
                     "WHERE id = 1")
    pair.create_view("t6_at", "SELECT id FROM t6 WHERE a = ?")
    for key in [9999999, 8390000, 20240102, "839:00:00", 123456.0]:
        pair.check_view("t6_at", key)
    pair.create_view("t6_after", "SELECT id FROM t6 WHERE a > ? ORDER BY a")
    for key in [9999999, 8385959, -8390000, 3000000000]:
        pair.check_view("t6_after", key)


def test_a_time_in_numeric_and_string_context(times: MySQLPair) -> None:
    times.check_query("SELECT id, t + 0, t * 1, CAST(t AS SIGNED), CAST(t AS DECIMAL), "
                      "CAST(t AS DOUBLE), CAST(t AS CHAR), CONCAT(t), "
                      "LENGTH(t), t LIKE '1%' FROM tm")
    times.check_query("SELECT SUM(t), AVG(t), SUM(t) + 0 FROM tm")
    times.check_query("SELECT id, COALESCE(t, t3), IFNULL(t, t3), IF(id > 3, t, t3), "
                      "CASE WHEN id > 3 THEN t ELSE t3 END, NULLIF(t, '25:00:00') FROM tm")


def test_fractional_digits_in_numeric_and_string_context(times: MySQLPair) -> None:
    """A TIME(n) is a DECIMAL with n places in numeric context and shows n fractional
    digits as text; so do what the TIME functions, GREATEST and COALESCE give, with the
    digits of their arguments (MariaDB's typing: rivulet/values/types.py)."""
    times.check_query("SELECT id, t3 + 0, -t3, ABS(t3), -t, ABS(t), t3 / 2, t3 % 7, t3 * 1, "
                      "CONCAT(t3), CAST(t3 AS CHAR), LENGTH(t3), t3 LIKE '%.500' FROM tm")
    times.check_query("SELECT SUM(t3), AVG(t3), MAX(t3) + 0, CONCAT(MIN(t3)) FROM tm")
    times.check_query("SELECT id, TIME(s) + 0, SEC_TO_TIME(id / 4) + 0, TIMEDIFF(t, t3) + 0, "
                      "GREATEST(t, t3) + 0, GREATEST(t, '05:00:00.25') + 0, LEAST(t, 5), "
                      "GREATEST(t, s), COALESCE(t, t3) + 0, CONCAT(COALESCE(t3, t)), "
                      "CAST(t AS TIME(2)) + 0, CONCAT(SEC_TO_TIME(id / 4)) FROM tm")
    times.check_query("SELECT t3 FROM tm UNION ALL SELECT s FROM tm")
    with pytest.raises(UnsupportedSqlError, match=r"ROUND\(\) of a TIME"):
        times.db.query("SELECT ROUND(t) FROM tm")  # MariaDB: a TIME, MySQL: a number


def test_time_functions(times: MySQLPair) -> None:
    times.check_query("SELECT id, HOUR(t), MINUTE(t), SECOND(t), TIME_TO_SEC(t), HOUR(t3), "
                      "SECOND(d), HOUR(s), TIME(s), TIME(d), TIME(t) FROM tm")
    times.check_query("SELECT id, TIMEDIFF(t, t3), TIMEDIFF(t, '01:00:00'), "
                      "TIMEDIFF(d, '2024-01-01 00:00:00'), TIMEDIFF(d, t), SEC_TO_TIME(id * 4000),"
                      " SEC_TO_TIME(TIME_TO_SEC(t) - 3600), CAST(s AS TIME), CAST(id AS TIME)"
                      " FROM tm")
    times.check_query(
        "SELECT SEC_TO_TIME(3661), SEC_TO_TIME(-1.5), SEC_TO_TIME(4000000), "
        "TIME('10:11:12.5'), TIME('2020-01-01 10:00:00'), TIME('abc'), TIME(101112), "
        "TIME('1 10:11'), TIME('-1 10:11:00'), TIME('12'), TIME('1112'), TIME('10.5'), "
        "TIMEDIFF('10:00:00', '12:30:00'), TIMEDIFF('2020-01-02 00:00:00', '2020-01-01'), "
        "TIMEDIFF('10:00:00', '2020-01-01 00:00:00'), TIMEDIFF('1000:00:00', '-1000:00:00'), "
        "TIME_TO_SEC('10:00'), TIME_TO_SEC('2020-01-01 10:00:00'), TIME_TO_SEC(101112), "
        "HOUR('838:00:00'), HOUR('-10:11:12'), MINUTE(-101112), CAST('1000:00:00' AS TIME), "
        "CAST(101112 AS TIME), CAST(8385960 AS TIME), CAST('abc' AS TIME), "
        "CAST('10:11:12.123' AS TIME(3)), CAST(-101112 AS TIME) FROM tm WHERE id = 1")


def test_time_parts_of_text_and_numbers_are_those_of_the_time_they_read_as(
        mysql_pair: MySQLPair) -> None:
    """HOUR/MINUTE/SECOND/TIME of text or a number read it as a TIME ('2024-01-02' is
    00:20:24, '10:11:12' is no date here, '20240102' is past the range), as MySQL does;
    text that is a datetime gives its time part, the hour alone ('2021-02-03 5' is
    05:00:00), any punctuation between the parts ('10:11:12 5' is 2010-11-12 05:00:00),
    anything after it ignored, and NULL if a part is out of range ('2021-13-03 5')."""
    pair = mysql_pair
    pair.execute("CREATE TABLE tp (id INT PRIMARY KEY, s VARCHAR(30), n BIGINT)")
    for i, (text, number) in enumerate([
            ("2024-01-02", 101112), ("10:11:12", 20240102), ("01:02:03", 8390000),
            ("2024-01-02 10:11:12", 9999999), ("24-01-02", -101112), ("101112", 0),
            ("20240102", 3000000000), ("2024:01:02", 20240102101112), ("abc", None),
            ("2021-02-03 5", None), ("2021-02-03T5", None), ("21-2-3 5.5", None),
            ("1-2-3 5:6", None), ("10:11:12 5", None), ("2021/02/03 5-6-7x", None),
            ("2021-02-03 5:6:7:8", None), ("2021-02-30 5", None), ("2021-13-03 5", None),
            ("2021-02-03 24", None), ("12345-02-03 5", None), ("2021-02-03.5", None),
            ("1-2 5", None), ("2021-02-03 05:06:07.5x", None)]):
        pair.execute("INSERT INTO tp VALUES (?, ?, ?)", [i, text, number])
    pair.check_query("SELECT id, HOUR(s), MINUTE(s), SECOND(s), TIME(s), HOUR(n), MINUTE(n), "
                     "SECOND(n), TIME(n) FROM tp ORDER BY id")


def test_views_read_by_a_time(times: MySQLPair) -> None:
    times.create_view("at_time", "SELECT id, t3 FROM tm WHERE t = ?")
    for key in ["10:11:12", _td(hours=25), 101112, "-838:59:59", "25:00", "abc", 0, None]:
        times.check_view("at_time", key)
    times.create_view("after", "SELECT id, t FROM tm WHERE t > ? ORDER BY t")
    for bound in ["00:00:00", _td(minutes=-40), 30405, "10:11:12"]:
        times.check_view("after", bound)
    times.create_view("by_hour", "SELECT HOUR(t), COUNT(*) FROM tm GROUP BY HOUR(t)")
    times.check_view("by_hour")
    times.execute("INSERT INTO tm VALUES (8, '10:11:12', NULL, NULL, NULL)")
    times.execute("UPDATE tm SET t = '26:00' WHERE id = 1")
    times.check_view("at_time", "10:11:12")
    times.check_view("after", "10:11:12")
    times.check_view("by_hour")


def test_time_parameters_find_what_their_literals_find(times: MySQLPair) -> None:
    """A parameter compared with a TIME column is looked up as MySQL compares it (text read
    as a TIME, a number as [-]HHMMSS: rivulet/values/matching.py), in every shape of
    read."""
    keys = [["10:11:12"], [_td(hours=25)], [101112], [101112.0], ["25:00"], ["abc"], [0],
            [None], [b"03:04:05"], [-3000], ["-00:30"], [30405.0], ["900:00:00"]]
    for sql in ["SELECT id FROM tm WHERE t = ?", "SELECT id FROM tm WHERE t = ? AND id > 0",
                "SELECT id FROM tm WHERE t <=> ?", "SELECT id FROM tm WHERE t3 = ?"]:
        for key in keys:
            times.check_query(sql, key)
    for key in [["10:11:12", 0], [_td(minutes=-30), "25:00:00", 30405]]:
        times.check_query(f"SELECT id FROM tm WHERE t IN ({', '.join('?' * len(key))})", key)
    for key in [["00:00:00"], [_td(minutes=-40)], [30405], ["abc"], ["25:00"], [0.5]]:
        times.check_query("SELECT id FROM tm WHERE t <= ? ORDER BY id", key)
        times.check_query("SELECT id FROM tm WHERE t > ? AND t < '30:00' ORDER BY id", key)
    times.create_view("by_s_t", "SELECT id FROM tm WHERE s = ? AND t = ?")
    for key in [("10:11:12", "10:11:12"), ("abc", -8385959), ("25:00", _td(hours=25))]:
        times.check_view("by_s_t", *key)
    got = times.db.view("by_s_t").lookup_many([("10:11:12", 101112), ("abc", "-838:59:59")])
    assert sorted(got) == [(1,), (2,)]
    with pytest.raises(UnsupportedSqlError, match="TIME"):
        times.db.query("SELECT id FROM tm WHERE t = ?", [dt.datetime(2024, 1, 2, 10, 11, 12)])


def test_time_values_are_the_same_after_reopening(times: MySQLPair) -> None:
    times.create_view("sorted", "SELECT id, t, t3 FROM tm ORDER BY t, id")
    times.db.close()
    times.db = rivulet.open(times.path)
    times.check_view("sorted")
    times.check_query("SELECT id, t3 FROM tm WHERE t3 < '00:00:02'")


def test_adding_and_converting_time_columns(times: MySQLPair) -> None:
    times.execute("ALTER TABLE tm ADD COLUMN u TIME")
    times.execute("ALTER TABLE tm ADD COLUMN v TIME NOT NULL")
    times.execute("INSERT INTO tm (id, u, v) VALUES (9, '01:02:03', '-01:00')")
    times.check_query("SELECT id, u, v FROM tm")
    times.execute("UPDATE tm SET s = '12:34:56' WHERE id IN (2, 7)")
    times.db.execute("ALTER TABLE tm MODIFY s TIME")  # (MySQL's strict ALTER would refuse
    times.db.finish_conversions()                     # 'abc'; rivulet converts as CAST does)
    got = times.db.query("SELECT id, s FROM tm ORDER BY id")
    assert got[:3] == [(1, _td(hours=10, minutes=11, seconds=12)), (2, _td(hours=12, minutes=34,
                       seconds=56)), (3, _td(hours=25))]
    times.db.execute("ALTER TABLE tm MODIFY t VARCHAR(20)")
    times.db.finish_conversions()
    assert times.db.query("SELECT t FROM tm WHERE id = 2") == [("-838:59:59",)]


def test_comparing_a_time_with_a_date_is_refused(times: MySQLPair) -> None:
    for sql in ["SELECT id FROM tm WHERE t < d", "SELECT CAST(t AS DATETIME) FROM tm",
                "SELECT YEAR(t) FROM tm", "SELECT id FROM tm WHERE t3 = DATE('2024-01-01')"]:
        with pytest.raises(UnsupportedSqlError, match="current day"):
            times.db.query(sql)
    with pytest.raises(UnsupportedSqlError, match="TIME"):
        times.db.query("SELECT a.id FROM tm a JOIN tm b ON a.t = b.s")


def test_a_time_equal_to_text_holding_a_date_is_refused(times: MySQLPair) -> None:
    """MariaDB's WHERE reads ``time_col = '2024-01-02 10:11:12'`` as a datetime of the current
    day (a row matches only today), elsewhere as the text's time part: the equality is
    refused, as a literal and as a parameter; other comparisons answer with the time part."""
    for sql, params in [("SELECT id FROM tm WHERE t = '2024-01-02 10:11:12'", []),
                        ("SELECT id FROM tm WHERE t IN ('20240102101112')", []),
                        ("SELECT id FROM tm WHERE id > 0 AND t3 = '24-01-02 12:00'", []),
                        ("SELECT id FROM tm WHERE t = ?", ["2024-01-02 10:11:12"])]:
        with pytest.raises(UnsupportedSqlError, match="current day"):
            times.db.query(sql, params)
    for where in ["t <= '2024-01-02 10:11:12'", "t IN ('2024-01-02 10:11:12', '25:00')",
                  "t <=> '2024-01-02 10:11:12'", "t <> '2024-01-02 10:11:12'",
                  "t = '10:11:12'", "t = 20240102101112"]:
        times.check_query(f"SELECT id FROM tm WHERE {where} ORDER BY id")


def test_a_refused_time_table_leaves_nothing_behind(mysql_pair: MySQLPair) -> None:
    db = mysql_pair.db
    with pytest.raises(rivulet.RivuletError, match="fractional digits"):
        db.execute("CREATE TABLE z (id INT PRIMARY KEY, t TIME(7))")
    db.execute("CREATE TABLE z (id INT PRIMARY KEY, t TIME(6))")
    db.execute("INSERT INTO z VALUES (1, '00:00:00.000001')")
    assert db.query("SELECT t FROM z") == [(_td(microseconds=1),)]
    with pytest.raises(UnsupportedSqlError, match="YEAR"):
        db.execute("ALTER TABLE z ADD COLUMN y YEAR")
    assert db.query("SELECT * FROM z") == [(1, _td(microseconds=1))]


# --------------------------------------------------------------------------- the wire


def test_time_and_enum_columns_over_the_wire(mysql_pair: MySQLPair) -> None:
    """PyMySQL reads TIME and ENUM columns from rivulet's MySQL server with the column types
    and values it reads from MariaDB."""
    pair = mysql_pair
    pair.execute("CREATE TABLE w (id INT PRIMARY KEY, t TIME, t6 TIME(6), "
                 "e ENUM('red','yellow','green') NOT NULL)")
    pair.execute("INSERT INTO w VALUES (1, '-838:59:59', '00:00:00.5', 'green'), "
                 "(2, '100:00:01', '-00:00:00.000001', 'red'), (3, NULL, '00:00:00', 2), "
                 "(4, '00:00:00', NULL, 'yellow')")
    queries = ["SELECT id, t, t6, e FROM w ORDER BY e, id", "SELECT e, COUNT(*) FROM w GROUP BY e",
               "SELECT id, TIMEDIFF(t, '01:00:00'), SEC_TO_TIME(id) FROM w ORDER BY id",
               "SELECT id, CONCAT(e), e + 0 FROM w ORDER BY id"]
    server = ServerThread(pair.db, port=0)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                               database="rivulet", autocommit=True)
        try:
            for sql in queries:
                with conn.cursor() as cur:
                    cur.execute(sql)
                    got, got_types = cur.fetchall(), [d[1] for d in cur.description]
                with pair.conn.cursor() as cur:
                    cur.execute(sql)
                    want, want_types = cur.fetchall(), [d[1] for d in cur.description]
                assert sorted(got, key=repr) == sorted(want, key=repr), sql
                kinds = [(a, b) for a, b in zip(got_types, want_types) if 11 in (a, b)
                         or 254 in (a, b)]
                assert all(a == b for a, b in kinds), (sql, got_types, want_types)
        finally:
            conn.close()
    finally:
        server.stop()


# --------------------------------------------------------------------------- Spark


def test_spark_keeps_away_from_time_and_enum_columns(mysql_pair: MySQLPair, tmp_path) -> None:
    """Spark has no TIME and no ENUM: its types refuse them by name, snapshots leave such
    tables out, and a view over one is bootstrapped in-process even when Spark is forced."""
    from rivulet.spark.snapshot import take_snapshot
    from rivulet.spark.values import spark_type
    from rivulet.values.schema import ENUM, TIME

    for kind in (TIME, ENUM):
        with pytest.raises(UnsupportedSqlError, match=f"{kind.upper()} columns on Spark"):
            spark_type(kind)
    pair = mysql_pair
    pair.execute(TIMES)
    pair.execute("CREATE TABLE plain (id INT PRIMARY KEY, n INT)")
    pair.execute("CREATE TABLE colors (id INT PRIMARY KEY, e ENUM('red','green'))")
    for row in ROWS:
        pair.execute("INSERT INTO tm VALUES (?, ?, ?, ?, ?)", list(row))
    pair.execute("INSERT INTO plain VALUES (1, 2)")
    pair.execute("INSERT INTO colors VALUES (1, 'green'), (2, 'red'), (3, 'green')")
    pair.settle()
    snapshot = take_snapshot(pair.db, tmp_path / "snap")
    assert set(snapshot.tables) == {"plain"}
    pair.db.close()
    pair.db = rivulet.open(pair.path, spark_bootstrap_rows=0)
    pair.create_view("longest", "SELECT MAX(t), MIN(t3), COUNT(*) FROM tm")
    pair.create_view("per_color", "SELECT e, COUNT(*) FROM colors GROUP BY e ORDER BY e")
    pair.check_view("longest")
    pair.check_view("per_color")
    tasks = pair.db.bootstrap_report()["tasks"]
    assert tasks and all(t["executor"] == "in-process" for t in tasks)


def test_time_and_enum_columns_over_http(mysql_pair: MySQLPair) -> None:
    """The HTTP API writes TIME and ENUM values from JSON and answers them as MySQL writes
    them: a TIME as its text (negative, past 24 hours, with a fraction), an ENUM as its
    member's text; a view is keyed by either, given as text."""
    import warnings

    from rivulet.server.http.app import make_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    db = mysql_pair.db
    db.execute("CREATE TABLE h (id INT PRIMARY KEY, t TIME(6), e ENUM('low','high') NOT NULL)")
    db.execute("CREATE VIEW by_e AS SELECT id, t FROM h WHERE e = ? ORDER BY t")
    db.execute("CREATE VIEW by_t AS SELECT id, e FROM h WHERE t = ?")
    api = TestClient(make_app(db), raise_server_exceptions=True)
    r = api.post("/tables/h/rows", json=[[1, "-838:59:59", "high"], [2, "100:00:00.5", "low"],
                                         [3, "00:00:01", 2], [4, None, "low"]])
    assert r.status_code == 201, r.text
    lsn = r.json()["lsn"]
    assert api.post("/tables/h/rows", json=[[5, "abc", "low"]]).status_code == 400
    got = api.get("/views/by_e", params={"key": "high", "min_lsn": lsn}).json()["rows"]
    assert got == [[1, "-838:59:59"], [3, "00:00:01"]]
    got = api.get("/views/by_e", params={"key": "low", "min_lsn": lsn}).json()["rows"]
    assert got == [[4, None], [2, "100:00:00.500000"]]
    got = api.get("/views/by_t", params={"key": "100:00:00.5", "min_lsn": lsn}).json()["rows"]
    assert got == [[2, "low"]]
