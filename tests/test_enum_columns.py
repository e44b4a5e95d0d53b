"""ENUM columns as MySQL keeps them: a member's text that orders and counts by its index.

Compared with MariaDB (tests/mysql_oracle.py): which values an ENUM accepts in strict mode,
ORDER BY by the members' positions, the index in numeric context (``e + 0``, ``e = 3``,
``WHERE e``, ``SUM(e)``), the text everywhere else (``e = 'red'``, ``CONCAT``, ``MAX``), and
expressions over an ENUM being plain text (``COALESCE(e, 'x') + 0`` is 0)."""

from __future__ import annotations

import pytest
from mysql_oracle import MySQLPair

import rivulet
from rivulet.errors import NotAMemberError, UnsupportedSqlError

COLORS = "CREATE TABLE t (id INT PRIMARY KEY, e ENUM('red','yellow','green'), " \
         "f ENUM('b','a') NOT NULL, s VARCHAR(10))"
ROWS = [(1, "green", "a", "green"), (2, "red", "b", "x"), (3, "yellow", "a", "red"),
        (4, None, "b", None), (5, "yellow", "b", "yellow"), (6, "red", "a", "2")]


@pytest.fixture
def colors(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute(COLORS)
    mysql_pair.insert_many("t", ROWS)
    return mysql_pair


def test_an_enum_column_stores_its_members_and_refuses_other_values(
        mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE e2 (id INT PRIMARY KEY, e ENUM('a','b','','3','1'))")
    values = ["purple", "", "0", 0, 6, -1, "A", " a", "a ", "b  ", "b\t", 2, "2", "2 ", " 2",
              "+2", "00002", "000002", "2.0", "3", "1", 3, True, 1.9, 0.5, 2.0, None]
    for i, value in enumerate(values):
        pair.execute("INSERT INTO e2 VALUES (?, ?)", [i, value])  # both accept, or both refuse
    pair.execute("INSERT INTO e2 VALUES (100, 1.9)")  # a DECIMAL literal: truncated too
    pair.execute("INSERT INTO e2 VALUES (101, 2.5e0)")
    got = pair.check_query("SELECT id, e, e + 0 FROM e2")
    assert len(got) == 18  # (and 11 refused on both sides)


def test_a_refused_value_names_the_column_and_its_members(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute(COLORS)
    with pytest.raises(NotAMemberError, match=r"t\.e.*'purple'.*'red', 'yellow', 'green'"):
        mysql_pair.db.execute("INSERT INTO t VALUES (1, 'purple', 'a', NULL)")
    with pytest.raises(NotAMemberError):
        mysql_pair.db.table("t").insert_many([(1, "red", "c", None)])
    assert mysql_pair.db.query("SELECT COUNT(*) FROM t") == [(0,)]


def test_an_update_stores_members_as_an_insert_does(colors: MySQLPair) -> None:
    colors.execute("UPDATE t SET e = 'zz' WHERE id = 1")
    colors.execute("UPDATE t SET e = e + 1 WHERE e = 'red'")
    colors.execute("UPDATE t SET e = 3 WHERE id = 4")
    colors.execute("UPDATE t SET f = s WHERE id = 2")  # 'x' is no member of f
    colors.check_query("SELECT id, e, f FROM t")


def test_enum_columns_sort_by_their_members_positions(colors: MySQLPair) -> None:
    colors.check_query("SELECT id, e FROM t ORDER BY e, id")
    colors.check_query("SELECT id, e FROM t ORDER BY e DESC, id")
    colors.check_query("SELECT f, e FROM t ORDER BY f, e DESC")
    colors.check_query("SELECT e, COUNT(*) FROM t GROUP BY e ORDER BY e")
    colors.check_query("SELECT DISTINCT e FROM t ORDER BY e DESC")
    colors.check_query("SELECT id, e FROM t ORDER BY e LIMIT 3")
    colors.check_query("SELECT x.e FROM (SELECT e FROM t) AS x ORDER BY x.e")
    colors.create_view("by_color", "SELECT id, e FROM t ORDER BY e, id LIMIT 4")
    colors.check_view("by_color")


def test_an_enum_in_numeric_context_is_its_index(colors: MySQLPair) -> None:
    colors.check_query("SELECT id, e + 0, e * 1, -e, e + 1.5, CAST(e AS SIGNED), "
                       "CAST(e AS DECIMAL), ROUND(e), ABS(e), FLOOR(e), e DIV 1, e % 2 FROM t")
    colors.check_query("SELECT id FROM t WHERE e")
    colors.check_query("SELECT id FROM t WHERE NOT e")
    colors.check_query("SELECT id, e AND 1, e XOR 0 FROM t")
    colors.check_query("SELECT SUM(e) + 0.0, SUM(f) + 0.0, COUNT(DISTINCT e) FROM t")
    colors.check_query("SELECT f, SUM(e) + 0.0 FROM t GROUP BY f")


def test_an_enum_compares_with_a_number_by_index_and_with_text_as_text(
        colors: MySQLPair) -> None:
    for where in ["e = 3", "e = '3'", "e = 'red'", "e = 'RED'", "e = 'red '", "e < 3",
                  "e < 'red'", "e > 1", "e > 'green'", "e IN (1, 2)", "e IN ('red', 3)",
                  "e BETWEEN 1 AND 2", "e BETWEEN 'a' AND 'r'", "e LIKE 'r%'", "e = 3.0",
                  "e = 1.0e0", "e <> 2", "e <=> 1", "e = f", "e = s", "e < s", "f = 2"]:
        colors.check_query(f"SELECT id FROM t WHERE {where}")


def test_what_is_computed_from_an_enum_is_text(colors: MySQLPair) -> None:
    colors.check_query("SELECT id, COALESCE(e, 'x'), COALESCE(e, 'x') + 0, IF(id > 0, e, e) + 0,"
                       " IFNULL(e, e) + 0, CASE WHEN id > 0 THEN e END + 0, NULLIF(e, 'x') + 0,"
                       " GREATEST(e, 'a'), CONCAT(e, '!'), UPPER(e), LENGTH(e), LEFT(e, 2),"
                       " TRIM(e) + 0, CAST(e AS CHAR) FROM t")
    colors.check_query("SELECT id FROM t ORDER BY COALESCE(e, 'x'), id")
    colors.check_query("SELECT id FROM t ORDER BY IF(id > 0, e, e), id")
    colors.check_query("SELECT id FROM t ORDER BY CASE WHEN id > 0 THEN e END, id")
    colors.check_query("SELECT MAX(e), MIN(e), MIN(f) FROM t")
    colors.check_query("SELECT f, MAX(e) FROM t GROUP BY f ORDER BY f")
    colors.check_query("SELECT e FROM t UNION ALL SELECT e FROM t ORDER BY e")
    colors.check_query("SELECT e FROM t UNION SELECT f FROM t ORDER BY 1")


def test_min_and_max_of_an_enum_are_text_or_refused_where_mysql_makes_them_members(
        colors: MySQLPair) -> None:
    """MIN/MAX of an ENUM pick by text and return it. Used further, MySQL numbers the text
    as an integer ('01' + 0 is the INT 1), and with GROUP BY (a temporary table) or in a
    subquery holds a member, numbered and ordered by position: those uses are refused."""
    colors.check_query("SELECT f, MAX(e), MIN(e) FROM t GROUP BY f ORDER BY f")
    colors.check_query("SELECT MAX(e), MIN(f) FROM t")
    for sql in ["SELECT f, MAX(e) + 0 FROM t GROUP BY f", "SELECT MAX(e) + 0 = 0 FROM t",
                "SELECT f, MAX(e) AS m FROM t GROUP BY f ORDER BY m",
                "SELECT f, MIN(e) FROM t GROUP BY f ORDER BY 2",
                "SELECT f FROM t GROUP BY f HAVING MAX(e) > 1",
                "SELECT m FROM (SELECT MIN(e) AS m FROM t) AS d WHERE m >= 2"]:
        with pytest.raises(UnsupportedSqlError, match="of an ENUM"):
            colors.db.query(sql)
    colors.check_query("SELECT f, MAX(CAST(e AS CHAR)) AS m FROM t GROUP BY f ORDER BY m, f")


def test_an_enum_in_a_union_with_only_nulls_stays_an_enum(colors: MySQLPair) -> None:
    """MySQL makes a UNION column of one ENUM and NULLs that ENUM (sorted by position, its
    index in numeric context), of two ENUMs text."""
    for sql in ["SELECT e FROM t UNION SELECT NULL FROM t ORDER BY 1 DESC",
                "SELECT NULL FROM t UNION SELECT f FROM t UNION SELECT NULL FROM t ORDER BY 1",
                "SELECT e, e + 0 FROM t UNION ALL SELECT NULL, NULL FROM t ORDER BY 1, 2",
                "SELECT x + 0 FROM (SELECT e AS x FROM t UNION SELECT NULL FROM t) u ORDER BY 1",
                "SELECT x FROM (SELECT e AS x FROM t UNION SELECT NULL FROM t) u WHERE x = 2",
                "SELECT e FROM t UNION SELECT f FROM t UNION SELECT NULL FROM t ORDER BY 1"]:
        colors.check_query(sql)


def test_an_enum_among_numbers_is_its_index_and_among_text_its_text(
        colors: MySQLPair) -> None:
    colors.check_query("SELECT id, GREATEST(e, 1), LEAST(e, 1.5), GREATEST(e, f), "
                       "GREATEST(e, 'b'), CAST(e AS UNSIGNED), CAST(e AS DECIMAL(5, 1)), "
                       "CAST(e AS BINARY) FROM t")
    colors.check_query("SELECT f, AVG(e), AVG(DISTINCT e), SUM(DISTINCT e) FROM t GROUP BY f")
    colors.check_query("SELECT id, COALESCE(e, id), IF(id > 2, e, f), NULLIF(e, 'red') + 0 "
                       "FROM t")


def test_greatest_of_an_enum_read_as_a_number_is_its_index_unless_cast_to_text(
        colors: MySQLPair) -> None:
    """GREATEST/LEAST over text read as a number take each argument's number: an ENUM's is
    its index, but one the query itself cast to text is that text's number ('red' is 0)."""
    colors.check_query("SELECT id, GREATEST(e, 'x') + 0, GREATEST(CAST(e AS CHAR), 'x') + 0, "
                       "LEAST(CAST(f AS BINARY), 'zz') + 0, GREATEST(CAST(s AS CHAR), e) + 0 "
                       "FROM t")
    colors.check_query("SELECT id FROM t WHERE GREATEST(CAST(e AS CHAR), '0')")
    colors.check_query("SELECT id, CASE WHEN LEAST(e, 'z') THEN 1 ELSE 0 END, "
                       "CASE WHEN LEAST(CAST(e AS CHAR), 'z') THEN 1 ELSE 0 END FROM t")


def test_views_read_enum_columns_by_text_or_by_number(colors: MySQLPair) -> None:
    colors.create_view("of_color", "SELECT id, f FROM t WHERE e = ?")
    for key in ["red", "yellow", 3, 2, "3", "2", "purple", "red ", 0, 4, 1.0, 2.5, None]:
        colors.check_view("of_color", key)
    colors.create_view("of_colors", "SELECT id, e FROM t WHERE e IN (?, ?)")
    colors.check_view("of_colors", "red", 3)
    colors.check_view("of_colors", "2", "green")
    colors.create_view("counts", "SELECT e, COUNT(*) FROM t GROUP BY e ORDER BY e")
    colors.check_view("counts")
    colors.create_view("by_f", "SELECT f, e FROM t WHERE f = ? ORDER BY e")
    colors.check_view("by_f", "a")
    colors.check_view("by_f", 1)
    colors.execute("INSERT INTO t VALUES (7, 'green', 'b', NULL), (8, 1, 2, 'x')")
    colors.execute("DELETE FROM t WHERE id = 3")
    colors.check_view("of_color", "green")
    colors.check_view("counts")
    colors.check_view("by_f", "b")


def test_enum_parameters_find_what_their_literals_find(colors: MySQLPair) -> None:
    """A parameter compared with an ENUM column is looked up as MySQL compares it (text by
    text, a number by position: rivulet/values/matching.py), in every shape of read."""
    keys = [["red"], [3], [3.0], ["3"], [b"green"], [True], [2.5], [0], [None], ["red "]]
    for sql in ["SELECT id FROM t WHERE e = ?", "SELECT id FROM t WHERE e = ? AND f = 'a'",
                "SELECT id FROM t WHERE e <=> ?"]:
        for key in keys:
            colors.check_query(sql, key)
    for key in [["red", "a"], [2, "a"], [1, 1], ["green", 2], [3, "x"]]:
        colors.check_query("SELECT id FROM t WHERE e = ? AND f = ?", key)
    for key in [["red", 3], [1, "green", 3.0], ["2", 2, b"red"]]:
        colors.check_query(f"SELECT id FROM t WHERE e IN ({', '.join('?' * len(key))})", key)
    for key in [["red"], [2], ["s"], [3.5], [0]]:
        colors.check_query("SELECT id FROM t WHERE e < ? ORDER BY id", key)
        colors.check_query("SELECT id FROM t WHERE e >= ? ORDER BY id", key)
    colors.create_view("by_both", "SELECT id FROM t WHERE f = ? AND e = ?")
    for key in [("a", "green"), ("b", 1), (2, 2), ("a", 3.0), ("b", "1")]:
        colors.check_view("by_both", *key)
    got = colors.db.view("by_both").lookup_many([("a", "green"), ("b", 1), (2, 2), ("a", 9)])
    assert sorted(got) == [(1,), (2,), (3,)]


def test_an_enum_joins_a_text_column_by_text(colors: MySQLPair) -> None:
    colors.execute("CREATE TABLE names (name VARCHAR(10) PRIMARY KEY, n INT)")
    colors.insert_many("names", [("red", 1), ("green", 2), ("blue", 3), ("a", 4)])
    colors.check_query("SELECT t.id, names.n FROM t JOIN names ON t.e = names.name")
    colors.check_query("SELECT t.id, names.n FROM t JOIN names ON names.name = t.f")
    colors.create_view("named", "SELECT t.id, t.e, names.n FROM t JOIN names "
                                "ON t.e = names.name WHERE t.f = ? ORDER BY t.e")
    colors.check_view("named", "a")


def test_joining_an_enum_with_a_number_is_refused(colors: MySQLPair) -> None:
    colors.execute("CREATE TABLE codes (code INT PRIMARY KEY)")
    with pytest.raises(UnsupportedSqlError, match="ENUM"):
        colors.db.query("SELECT t.id FROM t JOIN codes ON t.e = codes.code")


def test_defaults_of_enum_columns(mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE d1 (id INT PRIMARY KEY, e ENUM('a ','b') NOT NULL DEFAULT 'c')")
    pair.execute("CREATE TABLE d1 (id INT PRIMARY KEY, e ENUM('a','a'))")
    pair.execute("CREATE TABLE d1 (id INT PRIMARY KEY, e ENUM('x ','y') NOT NULL, "
                 "g ENUM('p','q') DEFAULT 'q', h ENUM('m','n'), k ENUM('a','A'))")
    pair.execute("INSERT INTO d1 (id) VALUES (1)")
    pair.execute("INSERT INTO d1 (id, e, k) VALUES (2, 'x', 'A')")
    pair.execute("INSERT INTO d1 (id, e) VALUES (3, NULL)")
    pair.execute("INSERT INTO d1 (id, e) VALUES (4, 'x ')")
    pair.check_query("SELECT id, e, LENGTH(e), g, h, k, k + 0 FROM d1")


def test_enum_values_are_the_same_after_reopening(colors: MySQLPair) -> None:
    colors.create_view("sorted", "SELECT id, e, f FROM t ORDER BY e, f, id")
    colors.db.close()
    colors.db = rivulet.open(colors.path)
    colors.check_view("sorted")
    colors.check_query("SELECT id, e + 0, f + 0 FROM t WHERE e < 3")


def test_altering_an_enum_column(colors: MySQLPair) -> None:
    colors.execute("ALTER TABLE t MODIFY e ENUM('red','yellow','green','blue')")
    colors.execute("INSERT INTO t VALUES (10, 'blue', 'a', NULL)")
    colors.check_query("SELECT id, e, e + 0 FROM t ORDER BY e, id")
    colors.execute("ALTER TABLE t MODIFY e ENUM('blue','green','yellow','red')")
    colors.check_query("SELECT id, e, e + 0 FROM t ORDER BY e, id")
    colors.execute("ALTER TABLE t ADD COLUMN g ENUM('on','off') NOT NULL")
    colors.check_query("SELECT id, g, g + 0 FROM t")
    colors.execute("ALTER TABLE t MODIFY e VARCHAR(10)")
    colors.check_query("SELECT id, e FROM t ORDER BY e, id")


def test_a_change_to_an_enum_that_could_lose_values_is_refused(colors: MySQLPair) -> None:
    with pytest.raises(UnsupportedSqlError, match="ENUM"):
        colors.db.execute("ALTER TABLE t MODIFY e ENUM('red','green')")
    with pytest.raises(UnsupportedSqlError, match="ENUM"):
        colors.db.execute("ALTER TABLE t MODIFY s ENUM('red','green')")
    colors.check_query("SELECT id, e, s FROM t")


def test_set_columns_are_refused_by_name_and_leave_nothing_behind(
        mysql_pair: MySQLPair) -> None:
    db = mysql_pair.db
    with pytest.raises(UnsupportedSqlError, match=r"column type SET"):
        db.execute("CREATE TABLE tags (id INT PRIMARY KEY, t SET('a','b'))")
    db.execute("CREATE TABLE tags (id INT PRIMARY KEY, t VARCHAR(10))")
    db.execute("INSERT INTO tags VALUES (1, 'a,b')")
    assert db.query("SELECT t FROM tags") == [("a,b",)]
    with pytest.raises(UnsupportedSqlError, match=r"column type SET"):
        db.execute("ALTER TABLE tags ADD COLUMN u SET('x')")
    assert db.query("SELECT * FROM tags") == [(1, "a,b")]
