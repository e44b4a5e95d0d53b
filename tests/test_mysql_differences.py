"""The intended differences from MySQL, each pinned: what rivulet answers, and what MySQL
(the private MariaDB of ``tests/mysql_oracle.py``) answers instead.

docs/sql.md, "Differences from MySQL", is the one list of them; every row there names its
test here (``test_every_difference_in_the_docs_is_pinned_by_a_test`` keeps the two in step).
Anything else where rivulet and MySQL differ is a bug, or is refused with an error naming
the construct.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pymysql
import pytest
from mysql_oracle import MySQLPair
from pymysql.constants.FIELD_TYPE import (
    BLOB,
    LONG,
    LONGLONG,
    MEDIUM_BLOB,
    NEWDECIMAL,
    VAR_STRING,
)

from rivulet.server.mysql.server import ServerThread

DOCS = Path(__file__).resolve().parent.parent / "docs" / "sql.md"


@pytest.fixture
def pair(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), b BIGINT, "
                       "u INT UNSIGNED)")
    mysql_pair.execute("INSERT INTO t VALUES (1, 'a', 9223372036854775807, 3)")
    mysql_pair.settle()
    return mysql_pair


def test_strings_compare_by_code_point(pair: MySQLPair) -> None:
    """A binary collation: 'a' and 'A' differ. MySQL 8's default (utf8mb4_0900_ai_ci), like
    MariaDB's utf8mb4_general_ci, finds them equal."""
    assert pair.db.query("SELECT id FROM t WHERE s = 'A'") == []
    assert pair.mariadb("SELECT id FROM t WHERE s = 'A' COLLATE utf8mb4_general_ci") == [(1,)]
    # With the binary collation rivulet documents, MariaDB agrees.
    pair.check_query("SELECT id FROM t WHERE s = 'A'")


def test_integer_arithmetic_past_bigint_is_exact(pair: MySQLPair) -> None:
    """MySQL refuses a result beyond BIGINT's range (error 1690); rivulet keeps the exact
    integer, since a view cannot fail a read for one of its rows."""
    assert pair.db.query("SELECT b + 1 FROM t") == [(9223372036854775808,)]
    with pytest.raises(pymysql.err.OperationalError) as caught:
        pair.mariadb("SELECT b + 1 FROM t")
    assert caught.value.args[0] == 1690


def test_unsigned_subtraction_below_zero_is_negative(pair: MySQLPair) -> None:
    """MySQL refuses an UNSIGNED result below zero (error 1690); rivulet's column kinds have
    no sign, so the difference is negative."""
    assert pair.db.query("SELECT u - 5 FROM t") == [(-2,)]
    with pytest.raises(pymysql.err.OperationalError) as caught:
        pair.mariadb("SELECT u - 5 FROM t")
    assert caught.value.args[0] == 1690


def test_arithmetic_past_the_double_range_is_infinite(pair: MySQLPair) -> None:
    """MySQL refuses a DOUBLE result beyond its range (error 1690); rivulet gives the
    infinity IEEE arithmetic gives, since a view cannot fail a read for one of its rows."""
    pair.execute("INSERT INTO t VALUES (2, '1e308', 0, 0)")
    assert pair.db.query("SELECT s * 2, -s * 2 FROM t WHERE id = 2") == [
        (float("inf"), float("-inf"))]
    with pytest.raises(pymysql.err.OperationalError) as caught:
        pair.mariadb("SELECT s * 2 FROM t WHERE id = 2")
    assert caught.value.args[0] == 1690


def test_result_columns_report_one_type_per_kind(pair: MySQLPair) -> None:
    """Over the MySQL protocol an INT column is LONG and a TEXT column BLOB in MySQL; rivulet
    reports LONGLONG and VAR_STRING, one type code per value kind (and NOT NULL only where
    it knows), while PyMySQL reads the same values from both, with the same UNSIGNED flag
    and a number's decimals."""
    pair.execute("CREATE TABLE w (id INT PRIMARY KEY, i INT NOT NULL, tx TEXT, "
                 "d DECIMAL(6,2), u INT UNSIGNED)")
    pair.execute("INSERT INTO w VALUES (1, 7, 'x', 1.50, 3)")
    pair.settle()
    sql = "SELECT i, tx, d, u, UPPER(tx) FROM w"
    server = ServerThread(pair.db, port=0)
    client = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                             database="rivulet", autocommit=True)
    try:
        fields = []
        for conn in (client, pair.conn):
            with conn.cursor() as cur:
                cur.execute(sql)
                assert cur.fetchall() == ((7, "x", Decimal("1.50"), 3, "X"),)
                fields.append([(f.type_code, f.scale, f.flags & 32) for f in
                               cur._result.fields])
    finally:
        client.close()
        server.stop()
    mine, mysql = fields
    assert [code for code, _, _ in mine] == [LONGLONG, VAR_STRING, NEWDECIMAL, LONGLONG,
                                             VAR_STRING]
    assert [code for code, _, _ in mysql] == [LONG, BLOB, NEWDECIMAL, LONG, MEDIUM_BLOB]
    assert [rest for _, *rest in mine[:4]] == [rest for _, *rest in mysql[:4]]


def test_a_grouped_sum_of_a_quotient_adds_the_places_it_shows(pair: MySQLPair) -> None:
    """MySQL's grouped SUM/AVG of a quotient depends on its plan: grouping in a temporary
    table adds the quotient as shown (4 places), grouping in primary-key order adds all it
    carries (9). rivulet always adds it as shown, as the temporary table does."""
    pair.execute("CREATE TABLE q (id INT PRIMARY KEY, g INT, n INT)")
    pair.execute("INSERT INTO q VALUES (1, 1, 2), (2, 2, 1)")
    pair.settle()
    by_key = "SELECT id, AVG(n / 3) FROM q GROUP BY id ORDER BY id"
    assert [tuple(map(str, r)) for r in pair.db.query(by_key)] == [
        ("1", "0.66670000"), ("2", "0.33330000")]
    assert [tuple(map(str, r)) for r in pair.mariadb(by_key)] == [
        ("1", "0.66666667"), ("2", "0.33333333")]
    pair.check_query("SELECT g, AVG(n / 3) FROM q GROUP BY g ORDER BY g")  # a temporary table


def test_a_view_read_by_another_view_cannot_be_dropped(pair: MySQLPair) -> None:
    """MySQL drops the view and leaves the views reading it invalid until it is created
    again; rivulet refuses, since a view it keeps up to date needs its inputs."""
    from rivulet import RivuletError

    pair.execute("CREATE VIEW v1 AS SELECT id, s FROM t")
    pair.execute("CREATE VIEW v2 AS SELECT s FROM v1")
    with pytest.raises(RivuletError, match="v2"):
        pair.db.execute("DROP VIEW v1")
    with pair.conn.cursor() as cur:
        cur.execute("DROP VIEW v1")  # MySQL: dropped, v2 now fails
        with pytest.raises(pymysql.err.OperationalError):
            cur.execute("SELECT * FROM v2")


def test_a_multi_table_drop_that_fails_on_a_foreign_key_drops_nothing(
        pair: MySQLPair) -> None:
    """``DROP TABLE parent, child``: MariaDB refuses the parent (1451: the child, later in
    the list, still references it) and drops the child; rivulet refuses with 1451 too, and
    drops neither (a DDL statement that fails changes nothing)."""
    from rivulet import RivuletError

    pair.execute("CREATE TABLE pa (id INT PRIMARY KEY)")
    pair.execute("CREATE TABLE ch (id INT PRIMARY KEY, pa_id INT REFERENCES pa (id))")
    with pytest.raises(RivuletError, match="foreign key"):
        pair.db.execute("DROP TABLE pa, ch")
    assert pair.db.catalog.table("ch") is not None
    with pair.conn.cursor() as cur:
        with pytest.raises(pymysql.err.IntegrityError):
            cur.execute("DROP TABLE pa, ch")
        cur.execute("SHOW TABLES LIKE 'ch'")
        assert cur.fetchall() == ()  # MariaDB: the child is gone


def test_an_update_fails_on_conversions_mariadb_skips_or_only_warns_about(
        pair: MySQLPair) -> None:
    """MariaDB converts an IN list of constants against a DOUBLE or a date column while it
    plans an UPDATE, and reads the rows of an UPDATE that changes the primary key before it
    updates them (both: a truncation is a warning, and the UPDATE writes); and it stops a
    BETWEEN or GREATEST at a NULL first operand. rivulet evaluates the WHERE row by row,
    converting every operand of a BETWEEN or GREATEST over text and numbers, so its UPDATE
    fails with 1292 (strict mode's error) and changes nothing."""
    from rivulet.errors import TruncatedValueError

    pair.execute("CREATE TABLE q (id INT PRIMARY KEY, f DOUBLE, day DATE, v VARCHAR(5), m INT)")
    pair.execute("INSERT INTO q VALUES (1, 1, '2024-01-02', 'abc', NULL)")
    for sql in ["UPDATE q SET f = 3 WHERE f IN ('abc', 1)",
                "UPDATE q SET f = 4 WHERE day IN ('abc', '2024-01-02')",
                "UPDATE q SET id = id + 10 WHERE v = 5",
                "UPDATE q SET f = 6 WHERE m BETWEEN v AND 5",
                "UPDATE q SET f = 7 WHERE GREATEST(m, v) IS NULL"]:
        with pytest.raises(TruncatedValueError):
            pair.db.execute(sql)
        with pair.conn.cursor() as cur:
            cur.execute(sql)  # MariaDB: at most a warning
            cur.execute("SHOW WARNINGS")
            assert all(w[1] == 1292 for w in cur.fetchall())
    assert pair.db.query("SELECT f FROM q") == [(1.0,)]
    assert pair.mariadb("SELECT f FROM q") == [(7.0,)]


def _pinned_tests() -> list[str]:
    """The test names in the table of docs/sql.md, "Differences from MySQL"."""
    text = DOCS.read_text()
    section = text.split("## Differences from MySQL", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"`(test_\w+)`", section)


def test_a_check_constraint_fails_with_mysql_8s_error_and_names(pair: MySQLPair) -> None:
    """A row a CHECK constraint refuses: MariaDB's error is 4025 and it names an unnamed
    check after its column or ``CONSTRAINT_n``; rivulet answers MySQL 8's 3819 and names it
    ``<table>_chk_n``, as MySQL 8 does."""
    from rivulet.errors import CheckViolatedError, error_code

    pair.execute("CREATE TABLE c (a INT CHECK (a > 0))")
    with pytest.raises(CheckViolatedError, match="'c_chk_1'") as ours:
        pair.db.execute("INSERT INTO c VALUES (0)")
    assert error_code(ours.value).mysql == 3819
    with pair.conn.cursor() as cur, pytest.raises(pymysql.MySQLError) as theirs:
        cur.execute("INSERT INTO c VALUES (0)")
    assert theirs.value.args[0] == 4025 and "c.a" in theirs.value.args[1]


def test_text_that_is_no_json_fails_with_mysql_8s_error(pair: MySQLPair) -> None:
    """Text that is no JSON, for a JSON column: MariaDB's JSON is a LONGTEXT checked by
    JSON_VALID and fails that check (4025); rivulet answers MySQL 8's 3140."""
    from rivulet.errors import InvalidJsonError, error_code

    pair.execute("CREATE TABLE j (j JSON)")
    with pytest.raises(InvalidJsonError) as ours:
        pair.db.execute("INSERT INTO j VALUES ('{')")
    assert error_code(ours.value).mysql == 3140
    with pair.conn.cursor() as cur, pytest.raises(pymysql.MySQLError) as theirs:
        cur.execute("INSERT INTO j VALUES ('{')")
    assert theirs.value.args[0] == 4025


def test_a_view_of_star_over_a_table_made_again_with_other_columns_is_refused(
        pair: MySQLPair) -> None:
    """MySQL stores a view's ``*`` as the columns it stood for, so a view whose table is
    dropped and made again with its columns in another order answers them as it was made;
    rivulet keeps the view's query, which would answer the new order: it refuses (1235)
    until the view is made again."""
    from rivulet.errors import UnsupportedSqlError

    pair.execute("CREATE TABLE r (a INT PRIMARY KEY, b INT)")
    pair.execute("CREATE VIEW star AS SELECT * FROM r")
    pair.execute("DROP TABLE r")
    pair.execute("CREATE TABLE r (b INT, a INT PRIMARY KEY)")
    pair.execute("INSERT INTO r VALUES (10, 1)")
    assert pair.mariadb("SELECT * FROM star") == [(1, 10)]
    with pytest.raises(UnsupportedSqlError, match=r"made with the columns \(a, b\)"):
        pair.db.query("SELECT * FROM star")


def test_a_drop_table_of_several_names_drops_those_that_exist(pair: MySQLPair) -> None:
    """``DROP TABLE t, missing``: MySQL 8 drops nothing (1051); MariaDB drops ``t`` and
    fails naming ``missing`` (1051), and so does rivulet. ``DROP TABLE`` of a view is
    MariaDB's 1965 ("is a view"), MySQL 8's and rivulet's 1051."""
    from rivulet import RivuletError
    from rivulet.errors import error_code

    pair.execute("CREATE TABLE d (id INT PRIMARY KEY)")
    pair.execute("CREATE VIEW dv AS SELECT id FROM t")
    for sql, codes in (("DROP TABLE d, missing", (1051, 1051)),
                       ("DROP TABLE dv", (1965, 1051))):
        with pytest.raises(pymysql.err.MySQLError) as theirs:
            with pair.conn.cursor() as cur:
                cur.execute(sql)
        with pytest.raises(RivuletError) as ours:
            pair.db.execute(sql)
        assert (theirs.value.args[0], error_code(ours.value).mysql) == codes, sql
    assert pair.db.catalog.table("d") is None and pair.mariadb("SHOW TABLES LIKE 'd'") == []


def test_a_date_moved_into_year_0_is_null(pair: MySQLPair) -> None:
    """A date moved by months into year 0: MariaDB answers the date (0000-12-31); rivulet's
    dates are Python's, which start at year 1, so NULL. (By days MariaDB answers NULL too:
    pair.check_query agrees.)"""
    sql = "SELECT DATE('0001-01-31') - INTERVAL 1 MONTH"
    assert pair.db.query(sql) == [(None,)]
    assert pair.mariadb(sql) == [("0000-12-31",)]
    pair.check_query("SELECT DATE('0001-01-01') - INTERVAL 1 DAY")


def test_every_difference_in_the_docs_is_pinned_by_a_test() -> None:
    pinned = _pinned_tests()
    here = {name for name in globals() if name.startswith("test_")}
    assert pinned, "docs/sql.md has no table of differences from MySQL"
    assert set(pinned) <= here, f"rows naming no test here: {set(pinned) - here}"
    assert here - {"test_every_difference_in_the_docs_is_pinned_by_a_test"} <= set(pinned), \
        "a test here pins a difference docs/sql.md does not list"
