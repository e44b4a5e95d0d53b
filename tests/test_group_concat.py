"""GROUP_CONCAT against MariaDB (the MySQL oracle of tests/mysql_oracle.py), maintained
incrementally (rivulet/dataflow/ops/aggregate.py's ``GroupConcat``).

What is pinned: every form (``DISTINCT``, ``ORDER BY`` terms ascending and descending,
``SEPARATOR``, several arguments concatenated), NULLs skipped (a row with any NULL
argument), NULL for a group with no text, the text of each type as MySQL writes it
(DECIMAL places, DOUBLEs, dates, datetimes), the cut to ``group_concat_max_len`` (1024
bytes, MySQL's default; the oracle's session is set to it, as MariaDB's default is 1M),
inside views with GROUP BY, with parameters (partial state keyed by the group) and in
ad-hoc reads, across interleaved inserts, updates and deletes.

Without ORDER BY inside, MySQL's order is unspecified: those answers are compared with the
parts of each value sorted (:func:`check_parts`).
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
from decimal import Decimal
from typing import Any

import pytest
from mysql_oracle import MySQLPair

import rivulet
from rivulet.errors import AggregateMisuseError, UnsupportedSqlError
from spark_fixtures import SPARK_CONFIG, spark_session  # noqa: F401 (the ``spark`` fixture)

_names = itertools.count()

TABLE = """CREATE TABLE t (id INT PRIMARY KEY, g INT, s VARCHAR(40), n INT, d DECIMAL(8,2),
    f DOUBLE, day DATE, ts DATETIME, b VARBINARY(20))"""

WORDS = ["a", "B", "b", "A", "ü", "zz", "", "x y", "é€", "10", "9", None]


def random_row(rng: random.Random, id_: int) -> tuple[Any, ...]:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.15 else value

    return (id_, rng.choice([1, 2, 3, None]), rng.choice(WORDS), maybe(rng.randint(-5, 20)),
            maybe(Decimal(rng.randint(-999, 999)) / 100), maybe(rng.choice([0.5, 1e20, -2.25,
                                                                          0.1, 3.0])),
            maybe(dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 400))),
            maybe(dt.datetime(2021, 5, 6, 7, 8, 9) + dt.timedelta(minutes=rng.randint(0, 999))),
            maybe(rng.choice([b"ab", b"\x00", b"", b"zz"])))


@pytest.fixture
def pair(mysql_pair: MySQLPair) -> MySQLPair:
    """The pair with table ``t``; MariaDB cuts GROUP_CONCAT at MySQL's default length."""
    with mysql_pair.conn.cursor() as cur:
        cur.execute("SET SESSION group_concat_max_len = 1024")
    mysql_pair.execute(TABLE)
    rng = random.Random(30)
    mysql_pair.insert_many("t", [random_row(rng, i) for i in range(1, 41)])
    return mysql_pair


def check(pair: MySQLPair, sql: str, *params: Any) -> list[tuple]:
    """``sql`` through ``db.query`` and through a view, both MariaDB's answer."""
    got = pair.check_query(sql, params)
    checked_view(pair, sql, *params)
    return got


def checked_view(pair: MySQLPair, sql: str, *params: Any) -> tuple[str, list[tuple]]:
    """A new view of ``sql``, its name and its answer (MariaDB's)."""
    name = f"gc{next(_names)}"
    pair.create_view(name, sql)
    return name, pair.check_view(name, *params)


def _sorted_parts(rows: list[tuple], separator: str) -> list[tuple]:
    return sorted(
        (tuple(sorted(v.split(separator)) if isinstance(v, str) else v for v in row)
         for row in rows), key=repr)


def check_parts(pair: MySQLPair, sql: str, *params: Any, separator: str = ",") -> None:
    """``sql``, whose GROUP_CONCATs have no ORDER BY, answers MariaDB's rows with the
    parts of each text value in any order (MySQL's order is then unspecified)."""
    pair.settle()
    got = pair.db.query(sql, list(params))
    expected = pair.mariadb(sql, params)
    assert _sorted_parts(got, separator) == _sorted_parts(expected, separator), (sql, got,
                                                                                 expected)


#: Views whose every GROUP_CONCAT is ordered: compared exactly.
ORDERED = [
    "SELECT g, GROUP_CONCAT(s ORDER BY id) FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(s ORDER BY s DESC, id SEPARATOR ' | ') FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(n, ':', s ORDER BY n DESC, id DESC SEPARATOR '') FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(DISTINCT s ORDER BY s) FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(DISTINCT n ORDER BY n DESC SEPARATOR ';') FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(DISTINCT n, s ORDER BY s, n) FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(d ORDER BY id), GROUP_CONCAT(f ORDER BY id) FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(day ORDER BY day, id), GROUP_CONCAT(ts ORDER BY ts DESC, id) "
    "FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(d * 2, '/', n ORDER BY d + n, id) FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(n ORDER BY n, id), COUNT(*), MAX(s) FROM t GROUP BY g",
    "SELECT GROUP_CONCAT(s ORDER BY id SEPARATOR '') FROM t",
    "SELECT GROUP_CONCAT(id ORDER BY id) FROM t WHERE n > 100",
    "SELECT g, GROUP_CONCAT(id ORDER BY id) AS ids FROM t GROUP BY g HAVING ids LIKE '%1%'",
    "SELECT g, GROUP_CONCAT(UPPER(s) ORDER BY LENGTH(s), id) FROM t WHERE n IS NOT NULL "
    "GROUP BY g ORDER BY GROUP_CONCAT(UPPER(s) ORDER BY LENGTH(s), id)",
]


@pytest.mark.parametrize("sql", ORDERED)
def test_ordered_forms_equal_mysql(pair: MySQLPair, sql: str) -> None:
    check(pair, sql)


#: Views with a GROUP_CONCAT left unordered: compared by their parts.
UNORDERED = [
    "SELECT g, GROUP_CONCAT(s) FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(DISTINCT n) FROM t GROUP BY g",
    "SELECT g, GROUP_CONCAT(n, s) FROM t GROUP BY g",
    "SELECT GROUP_CONCAT(DISTINCT g) FROM t",
]


@pytest.mark.parametrize("sql", UNORDERED)
def test_unordered_forms_equal_mysql_up_to_order(pair: MySQLPair, sql: str) -> None:
    check_parts(pair, sql)
    pair.db.execute(f"CREATE VIEW u{next(_names)} AS {sql}")


MORE_TYPES = """CREATE TABLE p (id INT PRIMARY KEY, g INT, e ENUM('zeta', 'alpha', 'mid'),
    tm TIME, fl FLOAT, bo BOOLEAN, ts3 DATETIME(3), c CHAR(5), u BIGINT UNSIGNED, i INT,
    x VARCHAR(5), y VARCHAR(5), tx TEXT)"""

MORE_ROWS = [
    (1, 1, "zeta", dt.timedelta(hours=1, seconds=5), 1.1, 1,
     dt.datetime(2020, 1, 1, 1, 1, 1, 500000), "ab ", 9223372036854775807, 7, "1", "23",
     "hello"),
    (2, 1, "alpha", dt.timedelta(hours=-1), 3.3, 0, dt.datetime(2020, 1, 1, 1, 1, 1), "ab", 3,
     8, "12", "3", "Hello"),
    (3, 1, "mid", dt.timedelta(hours=30), 0.1, None, None, "A", 0, None, "2", "", ""),
    (4, 2, None, None, None, 1, dt.datetime(2021, 1, 1), "a", 5, 10, "-1", "z", "é"),
    (5, 2, "alpha", dt.timedelta(0), 1e10, 0, dt.datetime(2021, 1, 1, 0, 0, 0, 1000), "b", 5,
     10, "10", "z", None),
]

#: Each type's text and order (an ENUM sorts by its members' positions), a DISTINCT over
#: two arguments whose concatenations collide ('1' '23' and '12' '3'), an escaped
#: separator, and GROUP_CONCAT's value used by expressions, a subquery, a UNION.
MORE_FORMS = [
    "SELECT g, GROUP_CONCAT(e ORDER BY e, id), GROUP_CONCAT(e ORDER BY e DESC, id) "
    "FROM p GROUP BY g",
    "SELECT g, GROUP_CONCAT(DISTINCT e ORDER BY e) FROM p GROUP BY g",
    "SELECT g, GROUP_CONCAT(tm ORDER BY tm, id), GROUP_CONCAT(bo ORDER BY id), "
    "GROUP_CONCAT(ts3 ORDER BY ts3, id) FROM p GROUP BY g",
    "SELECT g, GROUP_CONCAT(c ORDER BY c, id SEPARATOR '|'), "
    "GROUP_CONCAT(DISTINCT c ORDER BY c SEPARATOR '|') FROM p GROUP BY g",
    "SELECT g, GROUP_CONCAT(u ORDER BY u, id), GROUP_CONCAT(tx ORDER BY tx, id) "
    "FROM p GROUP BY g",
    "SELECT g, GROUP_CONCAT(i / 3 ORDER BY id), GROUP_CONCAT(DISTINCT i / 3 ORDER BY i / 3) "
    "FROM p GROUP BY g",
    "SELECT g, GROUP_CONCAT(i, c ORDER BY id SEPARATOR '\\n') FROM p GROUP BY g",
    "SELECT g, GROUP_CONCAT(DISTINCT x, y ORDER BY x, y) FROM p GROUP BY g",
    "SELECT g, GROUP_CONCAT(ROUND(fl, 2) ORDER BY fl) FROM p GROUP BY g",
    "SELECT g, GROUP_CONCAT(NULL), GROUP_CONCAT('k' ORDER BY id) FROM p GROUP BY g",
    "SELECT g, GROUP_CONCAT(i ORDER BY i IS NULL, i DESC), "
    "GROUP_CONCAT(x ORDER BY CAST(x AS SIGNED), id) FROM p GROUP BY g",
    "SELECT g, LENGTH(GROUP_CONCAT(i)), GROUP_CONCAT(i ORDER BY i) + 1, "
    "CONCAT(GROUP_CONCAT(i ORDER BY i), '!') FROM p GROUP BY g",
    "SELECT * FROM (SELECT g, GROUP_CONCAT(i ORDER BY i) AS l FROM p GROUP BY g) q "
    "WHERE l LIKE '1%'",
    "SELECT g, GROUP_CONCAT(i ORDER BY id) FROM p GROUP BY g UNION ALL SELECT 9, 'x'",
]


@pytest.mark.parametrize("sql", MORE_FORMS)
def test_more_types_and_uses_equal_mysql(pair: MySQLPair, sql: str) -> None:
    pair.execute(MORE_TYPES)
    pair.insert_many("p", MORE_ROWS)
    check(pair, sql)


def test_a_float_columns_text_is_its_shortest(pair: MySQLPair) -> None:
    """MySQL writes a FLOAT (single precision) as its shortest text ('1.1,3.3,0.1'), not
    its double's (1.100000023841858; refused until ``SqlType.single``). (Group 1 only:
    MariaDB shows 1e10 where MySQL 8 shows 10000000000.)"""
    pair.execute(MORE_TYPES)
    pair.insert_many("p", MORE_ROWS)
    check(pair, "SELECT g, GROUP_CONCAT(fl ORDER BY id), GROUP_CONCAT(DISTINCT fl) FROM p "
                "WHERE g = 1 GROUP BY g")


@pytest.mark.parametrize("sql", [
    "SELECT g, SUM(d / 3), AVG(d / 7), LENGTH(GROUP_CONCAT(n)) FROM t GROUP BY g",
    "SELECT g, SUM(d / 3), AVG(d / 7), GROUP_CONCAT(DISTINCT n ORDER BY n) FROM t GROUP BY g",
    "SELECT g, SUM(d / 3), MAX(d / 3), GROUP_CONCAT(n ORDER BY n, id) FROM t GROUP BY g",
])
def test_beside_a_group_concat_sums_add_unrounded_values(pair: MySQLPair, sql: str) -> None:
    """Any GROUP_CONCAT has MySQL group sorted rows, not a temporary table holding SUM's
    running total in its values' shown type: SUM(d / 3) adds the quotients' places."""
    check(pair, sql)


def test_tags_of_a_story_through_a_join(pair: MySQLPair) -> None:
    """A Lobsters-like view: a story's tags, one GROUP_CONCAT per story over a join,
    read by the story's id (partial), with writes to both tables."""
    pair.execute("CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(20))")
    pair.execute("CREATE TABLE taggings (id INT PRIMARY KEY, story_id INT, tag VARCHAR(10))")
    pair.insert_many("stories", [(i, f"s{i}") for i in range(1, 9)])
    rng = random.Random(5)
    tags = ["go", "rust", "c", "ask", "show"]
    pair.insert_many("taggings", [(i, rng.randint(1, 9), rng.choice(tags)) for i in range(30)])
    sql = "SELECT s.id, s.title, GROUP_CONCAT(tg.tag ORDER BY tg.tag, tg.id SEPARATOR ' ') " \
          "FROM stories s JOIN taggings tg ON tg.story_id = s.id WHERE s.id = ? " \
          "GROUP BY s.id, s.title"
    pair.create_view("story_tags", sql)
    for step in range(6):
        for story in range(1, 10):
            pair.check_view("story_tags", story)
        pair.execute("INSERT INTO taggings VALUES (?, ?, ?)",
                     (100 + step, rng.randint(1, 9), rng.choice(tags)))
        pair.execute("DELETE FROM taggings WHERE id = ?", (rng.randrange(30),))
        pair.execute("UPDATE taggings SET tag = ? WHERE id = ?", (rng.choice(tags),
                                                                  rng.randrange(30)))
        pair.execute("UPDATE stories SET title = ? WHERE id = ?", (f"t{step}",
                                                                   rng.randint(1, 9)))
    pair.check_query(sql, (3,))


def test_binary_arguments_make_binary_text(pair: MySQLPair) -> None:
    rows = check(pair, "SELECT g, GROUP_CONCAT(b ORDER BY id SEPARATOR '-') FROM t GROUP BY g")
    assert any(isinstance(v, bytes) for _, v in rows)


def test_interleaved_writes_keep_every_form_equal_to_mysql(pair: MySQLPair) -> None:
    """Inserts, updates (of the group, the text, the ORDER BY value) and deletes, with each
    view checked after every round: the incremental answer is MySQL's."""
    views = []
    for sql in ORDERED[:10]:
        name = f"w{next(_names)}"
        pair.create_view(name, sql)
        views.append(name)
    unordered = [f"w{next(_names)}" for _ in UNORDERED]
    for name, sql in zip(unordered, UNORDERED):
        pair.create_view(name, sql)
    rng = random.Random(7)
    next_id = 100
    for _ in range(12):
        for _ in range(6):
            action = rng.random()
            if action < 0.4:
                pair.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             random_row(rng, next_id))
                next_id += 1
            elif action < 0.75:
                column, value = rng.choice([("g", rng.choice([1, 2, 3, None])),
                                            ("s", rng.choice(WORDS)),
                                            ("n", rng.randint(-5, 20)),
                                            ("d", Decimal(rng.randint(-99, 99)) / 10)])
                pair.execute(f"UPDATE t SET {column} = ? WHERE id % 7 = ?",
                             (value, rng.randrange(7)))
            else:
                pair.execute("DELETE FROM t WHERE id % 11 = ?", (rng.randrange(11),))
        for name in views:
            pair.check_view(name)
        for name, sql in zip(unordered, UNORDERED):
            pair.settle()
            got = pair.db.view(name).lookup()
            assert _sorted_parts(got, ",") == _sorted_parts(pair.mariadb(sql), ","), sql


def test_partial_view_keyed_by_the_group(pair: MySQLPair) -> None:
    """A parameter on the grouped column: partial state, one group a key, filled by
    upqueries and kept up to date for the keys held."""
    keyed = "SELECT g, GROUP_CONCAT(s, '=', n ORDER BY n DESC, id SEPARATOR ';') FROM t " \
            "WHERE g = ? GROUP BY g"
    implicit = "SELECT GROUP_CONCAT(DISTINCT s ORDER BY s DESC) FROM t WHERE g = ?"
    pair.create_view("keyed", keyed)
    pair.create_view("implicit", implicit)
    rng = random.Random(11)
    for step in range(10):
        for g in (1, 2, 3, 4):
            pair.check_view("keyed", g)
            pair.check_view("implicit", g)
        pair.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     random_row(rng, 200 + step))
        pair.execute("UPDATE t SET g = ? WHERE id = ?", (rng.choice([1, 2, 3, 4]),
                                                         rng.randint(1, 40)))
        pair.execute("DELETE FROM t WHERE id = ?", (rng.randint(1, 40),))
    pair.db.evict()
    for g in (1, 2, 3, 4, None):
        pair.check_view("keyed", g)
        pair.check_view("implicit", g)
    pair.check_query(keyed, (2,))


def test_cut_at_group_concat_max_len_bytes(pair: MySQLPair) -> None:
    """1024 bytes, cut on a character's boundary (two- and three-byte characters), growing
    past the limit and shrinking back under it."""
    pair.execute("CREATE TABLE w (id INT PRIMARY KEY, g INT, s VARCHAR(200))")
    rows = [(i, i % 2, ("é" * (i % 7) + "€" * (i % 5) + "abc" * (i % 3)) * 4)
            for i in range(1, 120)]
    pair.insert_many("w", rows)
    sql = "SELECT g, GROUP_CONCAT(s ORDER BY id DESC SEPARATOR '·'), " \
          "LENGTH(GROUP_CONCAT(s ORDER BY id)) FROM w GROUP BY g"
    name, got = checked_view(pair, sql)
    pair.check_query(sql)
    assert all(len(text.encode()) <= 1024 for _, text, _ in got)
    assert any(length == 1024 for _, _, length in got)
    for g in (0, 1):
        for i in range(1, 120, 3):
            pair.execute("DELETE FROM w WHERE id = ? AND g = ?", (i, g))
        pair.check_view(name)
    pair.execute("DELETE FROM w WHERE id > 12")
    assert all(length < 1024 for _, _, length in pair.check_view(name))
    pair.check_query(sql)


def test_nulls_are_skipped_and_an_empty_group_is_null(pair: MySQLPair) -> None:
    pair.execute("CREATE TABLE z (id INT PRIMARY KEY, g INT, a VARCHAR(5), c INT)")
    pair.insert_many("z", [(1, 1, None, 1), (2, 1, "x", None), (3, 2, "y", 2),
                           (4, 2, "", 3), (5, 3, None, None)])
    sql = "SELECT g, GROUP_CONCAT(a, c ORDER BY id), GROUP_CONCAT(a ORDER BY id), " \
          "GROUP_CONCAT(c ORDER BY id) FROM z GROUP BY g"
    name, rows = checked_view(pair, sql)
    pair.check_query(sql)
    assert (3, None, None, None) in rows
    pair.execute("UPDATE z SET a = 'q' WHERE id = 1")
    pair.check_view(name)
    pair.execute("DELETE FROM z")
    check(pair, "SELECT GROUP_CONCAT(a ORDER BY id) FROM z")


@pytest.mark.parametrize("sql, error", [
    ("SELECT GROUP_CONCAT(DISTINCT s ORDER BY id) FROM t", UnsupportedSqlError),
    ("SELECT GROUP_CONCAT(s ORDER BY 1) FROM t", UnsupportedSqlError),
    ("SELECT GROUP_CONCAT(s LIMIT 2) FROM t", UnsupportedSqlError),
    ("SELECT GROUP_CONCAT(s SEPARATOR ?) FROM t", UnsupportedSqlError),
    ("SELECT GROUP_CONCAT(COUNT(*)) FROM t", AggregateMisuseError),
    ("SELECT id FROM t WHERE GROUP_CONCAT(s) = 'a'", AggregateMisuseError),
])
def test_refused_by_name(pair: MySQLPair, sql: str, error: type[Exception]) -> None:
    with pytest.raises(error, match="GROUP_CONCAT|aggregate"):
        pair.db.query(sql)


def test_spark_compiler_refuses_group_concat_by_name(pair: MySQLPair) -> None:
    """Spark (bootstrap, pre-warm, the pipelines) leaves GROUP_CONCAT to the engine."""
    pytest.importorskip("pyspark")
    from rivulet.plan import ir
    from rivulet.spark.compile import refuse_group_concat

    plan = pair.db.prepare("SELECT g, GROUP_CONCAT(s ORDER BY id) FROM t GROUP BY g").plan
    found = [n for n in ir.walk(plan.root) if isinstance(n, ir.Aggregate)]
    assert found
    with pytest.raises(UnsupportedSqlError, match="GROUP_CONCAT on Spark"):
        refuse_group_concat(found[0])


def test_over_the_wire_and_the_session_variable(pair: MySQLPair) -> None:
    """Through the MySQL protocol GROUP_CONCAT is text; ``@@group_concat_max_len`` says
    1024, which a session may set again, and any other length is refused (error 1231)
    rather than answered cut at 1024: a view's answer is every session's."""
    import pymysql

    from rivulet.server.mysql.server import ServerThread

    sql = "SELECT g, GROUP_CONCAT(DISTINCT s ORDER BY s DESC SEPARATOR '/') FROM t GROUP BY g"
    pair.settle()
    server = ServerThread(pair.db, port=0)
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database="rivulet", autocommit=True)
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
            got = list(cursor.fetchall())
            cursor.execute("SELECT @@group_concat_max_len")
            assert cursor.fetchall() == ((1024,),)
            cursor.execute("SET SESSION group_concat_max_len = 1024")
        assert sorted(got, key=repr) == sorted(pair.mariadb(sql), key=repr)
        for length in ("1000000", "4", "'x'"):
            with pytest.raises(pymysql.err.MySQLError) as caught, conn.cursor() as cursor:
                cursor.execute(f"SET SESSION group_concat_max_len = {length}")
            assert caught.value.args[0] == 1231
            assert "group_concat_max_len" in str(caught.value.args[1])
    finally:
        conn.close()
        server.stop()


@pytest.mark.spark
def test_spark_bootstrap_leaves_group_concat_to_the_engine(pair: MySQLPair,
                                                           spark: Any) -> None:
    """With Spark forced for every bootstrap, a GROUP_CONCAT's state is built in-process
    (Spark refuses it by name) at CREATE VIEW and at the restart's recovery, and the view
    answers MySQL's answer throughout; the view's other aggregate still came from Spark
    where it stands alone."""
    pair.db.close()
    pair.db = rivulet.open(pair.path, spark=SPARK_CONFIG, spark_bootstrap_rows=0)
    sql = "SELECT g, GROUP_CONCAT(s, n ORDER BY n DESC, id), COUNT(*) FROM t GROUP BY g"
    pair.create_view("concat_on_spark", sql)
    report = pair.db.bootstrap_report()
    assert "GROUP_CONCAT" in report["error"]
    assert [t["executor"] for t in report["tasks"] if t["op"].startswith("γ")] == [
        "in-process"]
    pair.check_view("concat_on_spark")
    pair.create_view("count_on_spark", "SELECT g, COUNT(*) FROM t GROUP BY g")
    assert [t["executor"] for t in pair.db.bootstrap_report()["tasks"]] == ["spark"]
    pair.execute("DELETE FROM t WHERE id % 3 = 0")
    pair.execute("UPDATE t SET n = n + 7 WHERE id % 4 = 1")
    pair.check_view("concat_on_spark")
    pair.db.close()
    pair.db = rivulet.open(pair.path, spark=SPARK_CONFIG, spark_bootstrap_rows=0)
    pair.check_view("concat_on_spark")
    pair.check_view("count_on_spark")


@pytest.mark.spark
def test_verify_leaves_group_concat_views_out_unless_named(pair: MySQLPair,
                                                           spark: Any) -> None:
    """``rivulet verify`` recomputes on Spark every view Spark computes: a view with a
    GROUP_CONCAT is left out, and named, refused by name."""
    from rivulet.pipeline.verify import verify

    pair.create_view("with_concat", "SELECT g, GROUP_CONCAT(s ORDER BY id) FROM t GROUP BY g")
    pair.create_view("without", "SELECT g, COUNT(*) FROM t GROUP BY g")
    pair.settle()
    report = verify(pair.db, spark=spark)
    assert report.ok and [c.view for c in report.views] == ["without"]
    with pytest.raises(UnsupportedSqlError, match="GROUP_CONCAT on Spark"):
        verify(pair.db, ["with_concat"], spark=spark)
