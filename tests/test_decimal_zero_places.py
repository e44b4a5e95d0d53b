"""A DECIMAL zero's own places, against MariaDB (tests/mysql_oracle.py).

MySQL's decimal arithmetic makes some zeros plain, with no places and no sign, whatever
the places of their type (strings/decimal.c in MariaDB and MySQL alike): the remainder of
a zero dividend (``0 % 0.5``), a difference or a sum that cancels (``1.5 - 1.5``,
``-1.5 + 1.5``, ``e - 0`` where ``e`` is 0.00), the product of a zero and a negative
(``-2 * 0.0``), and so what is computed from one (``(0 % 0.5) + 1`` is 1, not 1.0). A
quotient of a zero dividend too, but a quotient is refused in a text column already. MariaDB
also keeps the places and the sign of another zero remainder (``-2 % 0.5`` is -0.0), where
MySQL 8 makes every zero remainder plain.

Where MySQL formats the expression's type, that does not show: the result column, CONCAT,
CAST AS CHAR, LENGTH, a CASE with text, GROUP_CONCAT all round the value to the type's
places ('0.0'). Where it stores the value in a text column, it does: a UNION column of
text (one SELECT gives text) and a write to a CHAR/VARCHAR/TEXT column store '0', and
'-0.0' for MariaDB's negative zero. rivulet's values carry the type's places, so those two
conversions are refused by name (1235), with a CAST AS CHAR as the way out; a conversion
that formats the type is answered. Found by the random differential test
(tests/test_mysql_differential.py) on ``SELECT a % 0.5 FROM t1 UNION SELECT d FROM t1``.
"""

from __future__ import annotations

from typing import Any

import pytest
from mysql_oracle import MySQLPair

from rivulet.errors import UnsupportedSqlError, error_code

SCHEMA = ("CREATE TABLE t1 (id INT PRIMARY KEY, a INT UNSIGNED, d VARCHAR(12) NOT NULL, "
          "k INT, e DECIMAL(5,2))")
ROWS = [(101, None, "1", 1, None), (102, 0, " 7", 0, 0), (103, 2, " 7", -2, 2),
        (104, 1, "a", 3, -2), (105, 0, "b", 4, -1)]

#: UNIONs whose text column takes a DECIMAL that may be a plain zero, with the text MariaDB
#: stores for it where its type shows more places.
PLAIN_ZEROS_IN_A_UNION = [
    ("SELECT a % 0.5 FROM t1 UNION SELECT d FROM t1", "0"),
    ("SELECT d FROM t1 UNION ALL SELECT MOD(a, 1.5) FROM t1", "0"),
    ("SELECT k % 0.5 FROM t1 UNION ALL SELECT d FROM t1", "-0.0"),
    ("SELECT e - 0 FROM t1 UNION ALL SELECT d FROM t1", "0"),
    ("SELECT 1.5 - 1.5 UNION ALL SELECT 'x'", "0"),
    ("SELECT -1.5 + 1.5 UNION ALL SELECT 'x'", "0"),
    ("SELECT e + k FROM t1 UNION ALL SELECT 'x'", "0"),
    ("SELECT k * 0.0 FROM t1 UNION ALL SELECT 'x'", "0"),
    ("SELECT e * a FROM t1 UNION ALL SELECT 'x'", "0"),
    ("SELECT (a % 0.5) * 2 FROM t1 UNION ALL SELECT 'x'", "0"),
    ("SELECT -(a % 0.5) FROM t1 UNION ALL SELECT 'x'", "0"),
    ("SELECT ABS(a % 0.5) FROM t1 UNION ALL SELECT 'x'", "0"),
    ("SELECT (a % 0.5) + 1 FROM t1 UNION ALL SELECT 'x'", "1"),
    ("SELECT IF(id > 0, a % 0.5, 1.5) FROM t1 UNION ALL SELECT 'x'", "0"),
    ("SELECT CASE WHEN id > 0 THEN a % 0.5 END FROM t1 UNION ALL SELECT 'x'", "0"),
    ("SELECT (SELECT 0 % 0.5) UNION ALL SELECT 'x'", "0"),
    ("SELECT MAX(a % 0.5) FROM t1 UNION ALL SELECT 'x'", "0"),
    ("SELECT MIN(k % 0.5) FROM t1 UNION ALL SELECT 'x'", "-0.0"),
    ("SELECT SUM(x) FROM (SELECT 0.5 AS x UNION ALL SELECT -0.5) s UNION ALL SELECT 'x'",
     "0"),
]


@pytest.fixture
def pair(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(SCHEMA)
    mysql_pair.insert_many("t1", ROWS)
    return mysql_pair


def _refused(run: Any) -> str:
    with pytest.raises(UnsupportedSqlError, match="may be a zero of other places") as caught:
        run()
    assert error_code(caught.value).mysql == 1235
    return str(caught.value)


@pytest.mark.parametrize(("sql", "stored"), PLAIN_ZEROS_IN_A_UNION)
def test_a_decimal_that_may_be_a_plain_zero_is_refused_in_a_union_text_column(
        pair: MySQLPair, sql: str, stored: str) -> None:
    """MariaDB stores the zero's own text ('0', '-0.0') in the UNION's text column, where
    the SELECT's type shows '0.0' or '0.00' (or '1' for '1.0'); rivulet refuses the
    query, in a view as well."""
    assert (stored,) in pair.mariadb(sql)
    _refused(lambda: pair.db.query(sql))
    _refused(lambda: pair.db.execute(f"CREATE VIEW v AS {sql}"))


def test_the_types_places_show_where_mysql_formats_the_type(pair: MySQLPair) -> None:
    """The same values are '0.0' (the type's places) as a result column, through CONCAT,
    CAST AS CHAR, LENGTH, a CASE with text, GROUP_CONCAT and compared with text: rivulet
    answers them as MariaDB does."""
    for sql in [
        "SELECT id, a % 0.5, CONCAT(a % 0.5), CAST(a % 0.5 AS CHAR), LENGTH(a % 0.5) FROM t1",
        "SELECT id, e - 0, CONCAT(e - 0), CAST(e + k AS CHAR), k * 0.0, CONCAT(k * 0.0) "
        "FROM t1",
        "SELECT id, (a % 0.5) + 1, CONCAT((a % 0.5) + 1), IF(id > 0, a % 0.5, 1.5) FROM t1",
        "SELECT id, CASE WHEN id > 200 THEN d ELSE a % 0.5 END, COALESCE(a % 0.5, d) FROM t1",
        "SELECT id, (a % 0.5) = '0', (a % 0.5) = '0.0', a % 0.5 LIKE '0.0' FROM t1",
        "SELECT GROUP_CONCAT(a % 0.5 ORDER BY id), GROUP_CONCAT(e - 0 ORDER BY id) FROM t1",
        "SELECT 1.5 - 1.5, CONCAT(-2 * 0.0), CAST(0 % 0.5 AS CHAR)",
    ]:
        pair.check_query(sql)


def test_a_union_of_the_types_text_or_of_zeros_that_keep_their_places_is_answered(
        pair: MySQLPair) -> None:
    """Written as text in its SELECT, or brought to places by a CAST or ROUND, the value is
    answered in a UNION's text column; so is arithmetic whose zeros keep their places (an
    UNSIGNED times a positive constant, a sum with 0, a product with a positive
    constant)."""
    for sql in [
        "SELECT CAST(a % 0.5 AS CHAR) FROM t1 UNION SELECT d FROM t1",
        "SELECT CONCAT(a % 0.5) FROM t1 UNION ALL SELECT d FROM t1",
        "SELECT CAST(e - 0 AS DECIMAL(6,3)) FROM t1 UNION ALL SELECT d FROM t1",
        "SELECT ROUND(a % 0.5, 1) FROM t1 UNION ALL SELECT d FROM t1",
        "SELECT a * 0.5 FROM t1 UNION ALL SELECT d FROM t1",
        "SELECT e + 0 FROM t1 UNION ALL SELECT d FROM t1",
        "SELECT e * 2 FROM t1 UNION ALL SELECT d FROM t1",
        "SELECT 0.0 + 0.00 UNION ALL SELECT 'x'",
    ]:
        pair.check_query(sql)


def test_a_decimal_that_may_be_a_plain_zero_written_to_text_is_refused(
        pair: MySQLPair) -> None:
    """MariaDB stores '0' in a VARCHAR for ``0 % 0.5``, ``1.5 - 1.5``, ``-2 * 0.0`` and
    ``e - 0`` (e 0.00), and '-0.0' for ``-2 % 0.5``; rivulet refuses such a write to a text
    column (INSERT, UPDATE, ON DUPLICATE KEY UPDATE, an UPDATE of several tables). Written
    to a DECIMAL column, or CAST AS CHAR first, it is MariaDB's."""
    pair.execute("CREATE TABLE t2 (id INT PRIMARY KEY, s VARCHAR(20), n DECIMAL(6,2))")
    with pair.conn.cursor() as cur:  # what rivulet would have had to store
        cur.execute("INSERT INTO t2 (id, s) VALUES (1, 0 % 0.5), (2, 1.5 - 1.5), "
                    "(3, -2 * 0.0), (4, -2 % 0.5), (5, 2 * 0.0)")
        cur.execute("INSERT INTO t2 (id, s) SELECT id, e - 0 FROM t1 WHERE id = 102")
    assert pair.mariadb("SELECT id, s FROM t2 ORDER BY id") == [
        (1, "0"), (2, "0"), (3, "0"), (4, "-0.0"), (5, "0.0"), (102, "0")]
    with pair.conn.cursor() as cur:
        cur.execute("DELETE FROM t2")
    for sql in ["INSERT INTO t2 (id, s) VALUES (1, 0 % 0.5)",
                "INSERT INTO t2 (id, s) VALUES (1, 'x'), (2, 1.5 - 1.5)",
                "INSERT INTO t2 (id, s) VALUES (1, 'x') ON DUPLICATE KEY UPDATE s = n - 1",
                "UPDATE t2 SET s = n * -1",
                "UPDATE t2 SET s = (n % 0.5) + 1 WHERE id = 1",
                "UPDATE t2 JOIN t1 ON t1.id = t2.id SET t2.s = t1.k % 0.5"]:
        _refused(lambda: pair.db.execute(sql))
    pair.execute("INSERT INTO t2 VALUES (1, CAST(0 % 0.5 AS CHAR), 0 % 0.5), "
                 "(2, CONCAT(1.5 - 1.5), -2 * 0.0), (3, 2 * 0.0, 1.5 - 1.5)")
    pair.execute("UPDATE t2 SET n = n - 0, s = CAST(n - 0 AS CHAR) WHERE id = 3")
    pair.check_query("SELECT id, s, n FROM t2")
