"""EXISTS as a value (rivulet/plan/exists_values.py): in the select list (Django's
``annotate(x=Exists(...))``), under OR and NOT, in ORDER BY and HAVING; each read and each
view equal to MariaDB's answer as rows come and go on both sides, and the forms the count
cannot stand for refused by name."""

from __future__ import annotations

import random

import pytest
from mysql_oracle import MySQLPair

import rivulet
from rivulet.errors import UnsupportedSqlError

SCHEMA = ["CREATE TABLE t (id INT PRIMARY KEY, n INT)",
          "CREATE TABLE u (id INT PRIMARY KEY, tid INT, k INT)"]

QUERIES = [
    "SELECT id, EXISTS(SELECT 1 FROM u WHERE u.tid = t.id) AS e FROM t",
    "SELECT id, EXISTS(SELECT 1 FROM u WHERE u.tid = t.id AND u.k > 5 LIMIT 1) AS e FROM t",
    "SELECT id, NOT EXISTS(SELECT * FROM u WHERE u.tid = t.id ORDER BY k) AS e FROM t",
    "SELECT id FROM t WHERE EXISTS(SELECT 1 FROM u WHERE u.tid = t.id) OR n = 2",
    "SELECT id FROM t WHERE NOT (EXISTS(SELECT 1 FROM u WHERE u.tid = t.id) AND n > 0)",
    "SELECT id, n + EXISTS(SELECT DISTINCT k FROM u WHERE u.tid = t.n) AS e FROM t",
    "SELECT id, EXISTS(SELECT 1 FROM u WHERE u.k = 7) AS e FROM t",
    "SELECT n, COUNT(*) AS c FROM t GROUP BY n HAVING EXISTS(SELECT 1 FROM u WHERE u.tid = t.n)",
    "SELECT n, EXISTS(SELECT 1 FROM u WHERE u.tid = t.n) AS e, COUNT(*) AS c FROM t GROUP BY n",
]


def test_exists_as_a_value_answers_as_mysql_as_rows_change(mysql_pair: MySQLPair) -> None:
    rnd = random.Random(3)
    for sql in SCHEMA:
        mysql_pair.execute(sql)
    mysql_pair.insert_many("t", [(i, i % 4) for i in range(12)])
    mysql_pair.insert_many("u", [(i, rnd.randrange(14), rnd.randrange(10)) for i in range(8)])
    for i, sql in enumerate(QUERIES):
        mysql_pair.create_view(f"ev{i}", sql)
    for step in range(6):
        for i, sql in enumerate(QUERIES):
            mysql_pair.check_query(sql)
            mysql_pair.check_view(f"ev{i}")
        mysql_pair.execute("INSERT INTO u VALUES (?, ?, ?)",
                           [100 + step, rnd.randrange(14), rnd.randrange(10)])
        mysql_pair.execute("DELETE FROM u WHERE id = ?", [rnd.randrange(8)])
        mysql_pair.execute("UPDATE u SET tid = ? WHERE id = ?", [rnd.randrange(14), 100])
        mysql_pair.execute("INSERT INTO t VALUES (?, ?)", [50 + step, rnd.randrange(4)])


def test_a_keyed_view_with_an_exists_value_is_partial(tmp_path) -> None:
    with rivulet.open(tmp_path / "db") as db:
        for sql in SCHEMA:
            db.execute(sql)
        db.table("t").insert_many([(i, i % 3) for i in range(10)])
        db.table("u").insert_many([(1, 4, 0), (2, 4, 1)])
        db.execute("CREATE VIEW flagged AS SELECT id, EXISTS(SELECT 1 FROM u WHERE "
                   "u.tid = t.id) AS e FROM t WHERE id = ?")
        assert db.view("flagged").lookup(4) == [(4, 1)]
        assert db.view("flagged").lookup(5) == [(5, 0)]
        db.execute("INSERT INTO u VALUES (3, 5, 0)")
        db.execute("DELETE FROM u WHERE tid = 4")
        db.settle()
        assert db.view("flagged").lookup(4) == [(4, 0)]
        assert db.view("flagged").lookup(5) == [(5, 1)]
        assert db.built_view("flagged").state.partial


@pytest.mark.parametrize("sql,words", [
    ("SELECT id, EXISTS(SELECT MAX(k) FROM u WHERE u.tid = t.id) FROM t", "aggregate"),
    ("SELECT id, EXISTS(SELECT tid FROM u WHERE u.tid = t.id GROUP BY tid) FROM t",
     "GROUP BY"),
    ("SELECT id, EXISTS(SELECT 1 FROM u WHERE u.tid = t.id LIMIT 0) FROM t", "LIMIT 0"),
    ("SELECT id, EXISTS(SELECT 1 FROM u WHERE u.tid = t.id LIMIT 1 OFFSET 1) FROM t",
     "OFFSET"),
])
def test_what_a_count_cannot_stand_for_is_refused_by_name(tmp_path, sql: str,
                                                          words: str) -> None:
    with rivulet.open(tmp_path / "db") as db:
        for statement in SCHEMA:
            db.execute(statement)
        with pytest.raises(UnsupportedSqlError, match=words):
            db.query(sql)
