"""A view with parameters read as a table (``SELECT * FROM StoriesWithVC``, ``WHERE id IN
(1, 2)``, a range, an aggregate of it, a join with it): its rows for every value of its
parameters, each once (rivulet/plan/planner.py, ``_view_as_table``). MariaDB, which has no
parameters in views, answers the same queries over the view without its parameters'
conditions: ``col = ?`` and a range over ``col`` keep the rows whose ``col`` is not NULL,
``col <=> ?`` keeps every row. Over the MySQL protocol, ``SHOW TABLES`` lists such views and
an application reads them by name."""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

import rivulet
from rivulet.server.mysql.server import ServerThread

#: (name, rivulet's view with parameters, MariaDB's view: its rows for every value)
VIEWS = [
    ("counted", "SELECT s.id, s.title, COUNT(v.user_id) AS n FROM s LEFT JOIN v "
                "ON s.id = v.story_id WHERE s.id = ? GROUP BY s.id, s.title",
                "SELECT s.id, s.title, COUNT(v.user_id) AS n FROM s LEFT JOIN v "
                "ON s.id = v.story_id GROUP BY s.id, s.title"),
    ("by_group", "SELECT id, g, title FROM s WHERE g = ?",
                 "SELECT id, g, title FROM s WHERE g IS NOT NULL"),
    ("by_group_or_null", "SELECT id, g FROM s WHERE g <=> ?", "SELECT id, g FROM s"),
    ("recent", "SELECT id, made FROM s WHERE made > ? ORDER BY made DESC",
               "SELECT id, made FROM s WHERE made IS NOT NULL"),
    ("titles_of", "SELECT title FROM s WHERE g = ?",  # (its parameter column not shown)
                  "SELECT title FROM s WHERE g IS NOT NULL"),
]

QUERIES = [
    "SELECT * FROM counted",
    "SELECT * FROM counted WHERE id IN (1, 3)",
    "SELECT id, n FROM counted WHERE id BETWEEN 2 AND 4",
    "SELECT COUNT(*), SUM(n) FROM counted",
    "SELECT c.title, c.n FROM counted AS c JOIN v ON c.id = v.story_id WHERE v.user_id = 7",
    "SELECT * FROM by_group",
    "SELECT g, COUNT(*) FROM by_group GROUP BY g",
    "SELECT * FROM by_group_or_null",
    "SELECT * FROM recent WHERE made < '2024-01-03'",
    "SELECT COUNT(*) FROM recent",
    "SELECT title, COUNT(*) FROM titles_of GROUP BY title",
]


@pytest.fixture
def pair(mysql_pair: Any) -> Any:
    pair = mysql_pair
    pair.execute("CREATE TABLE s (id INT PRIMARY KEY, g INT, title VARCHAR(20), made DATETIME)")
    pair.execute("CREATE TABLE v (user_id INT NOT NULL, story_id INT NOT NULL)")
    pair.insert_many("s", [(1, 1, "a", "2024-01-01"), (2, 1, "b", None), (3, None, "a",
                     "2024-01-03"), (4, 2, "c", "2024-01-02"), (5, None, None, None)])
    pair.insert_many("v", [(7, 1), (7, 3), (8, 1), (9, 4), (7, 4)])
    for name, ours, theirs in VIEWS:
        pair.db.execute(f"CREATE VIEW {name} AS {ours}")
        with pair.conn.cursor() as cur:
            cur.execute(f"CREATE VIEW {name} AS {theirs}")
    return pair


@pytest.mark.parametrize("sql", QUERIES)
def test_a_view_with_parameters_reads_as_its_rows_for_every_value(pair: Any, sql: str) -> None:
    pair.check_query(sql)
    pair.execute("INSERT INTO v VALUES (7, 2)")  # (and stays so as writes come)
    pair.execute("UPDATE s SET g = 3, made = '2024-01-04' WHERE id = 5")
    pair.check_query(sql)


def test_a_view_answering_a_row_for_every_value_is_refused(pair: Any) -> None:
    """``COUNT(*) ... WHERE x = ?`` answers a row (0) for any value: as a table it would be
    a row for every value there is, so it is refused, naming why."""
    pair.db.execute("CREATE VIEW votes_of AS SELECT COUNT(*) AS n FROM v WHERE story_id = ?")
    with pytest.raises(rivulet.RivuletError, match="a row for every value"):
        pair.db.query("SELECT * FROM votes_of")
    assert pair.db.view("votes_of").lookup(2) == [(0,)]


def test_views_read_by_name_over_the_wire(tmp_path: Any) -> None:
    """SHOW TABLES lists the news program's views; each reads by name like a table: all
    its rows, rows by key (= or IN), a range, an aggregate of it; a read by its parameters
    is still the view's own lookup."""
    from rivulet.cli import load_news_sample, news_program

    with rivulet.open(tmp_path / "db") as db:
        db.execute_script(news_program())
        load_news_sample(db, stories=40, votes=300)
        db.settle()
        server = ServerThread(db, port=0)
        try:
            conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root",
                                   autocommit=True)
            with conn.cursor() as cur:
                cur.execute("SHOW TABLES")
                assert {"StoriesWithVC", "RecentStories"} <= {r[0] for r in cur.fetchall()}

                def rows(sql: str) -> list[tuple]:
                    cur.execute(sql)
                    return sorted(cur.fetchall())

                every = rows("SELECT id, vcount FROM StoriesWithVC")
                assert every == sorted((r[0], r[5]) for r in db.view("StoryVotes").lookup())
                assert rows("SELECT id, vcount FROM StoriesWithVC WHERE id IN (3, 5)") == [
                    r for r in every if r[0] in (3, 5)]
                assert rows("SELECT id, vcount FROM StoriesWithVC WHERE id > 35") == [
                    r for r in every if r[0] > 35]
                assert rows("SELECT COUNT(*), SUM(vcount) FROM StoriesWithVC") == [
                    (40, sum(n for _, n in every))]
                assert rows("SELECT COUNT(*) FROM RecentStories") == [(40,)]
                assert rows("SELECT id, vcount FROM StoriesWithVC WHERE id = 7") == [
                    r for r in every if r[0] == 7]
            conn.close()
        finally:
            server.stop()
