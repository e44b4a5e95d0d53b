"""Non-recursive common table expressions (rivulet/plan/ctes.py): ``WITH x AS (SELECT ...)``
planned as the derived table it names, once however often it is named.

Plans are checked to be the derived tables' plans; answers against SQLite through random
inserts, updates, deletes and evictions (views with ``?`` parameters, ad-hoc queries),
incremental answers equal to recomputation; scoping and errors against MariaDB.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from oracle import Pair, operation_lists, run_operations
from rivulet.errors import error_code
from rivulet.plan import ir
from rivulet.sql.parse import parse_one

SCHEMA = [
    "CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(10), team INT)",
    "CREATE TABLE posts (id INT PRIMARY KEY, author INT, score INT)",
]

VIEWS: dict[str, str] = {
    # two CTEs joined, the second over the first, keyed by a parameter
    "totals": "WITH scored AS (SELECT author, SUM(score) AS total, COUNT(*) AS n FROM posts "
              "GROUP BY author), named AS (SELECT u.id, u.name, u.team, s.total FROM users u "
              "JOIN scored s ON s.author = u.id) SELECT id, name, total FROM named WHERE team = ?",
    # one CTE named twice (a self-join of it)
    "pairs": "WITH good AS (SELECT id, author FROM posts WHERE score > 1) SELECT g.id, h.id AS hid "
             "FROM good g JOIN good h ON g.author = h.author AND g.id < h.id WHERE g.author = ?",
    # a CTE with named columns, merged into the query (no aggregate): a WHERE on it
    "renamed": "WITH p (post, who) AS (SELECT id, author FROM posts) "
               "SELECT post FROM p WHERE who = ?",
    # a CTE in a UNION and read whole
    "everyone": "WITH active AS (SELECT DISTINCT author FROM posts) "
                "SELECT author FROM active UNION SELECT id FROM users WHERE team = 1",
    # a CTE whose name hides a table
    "shadow": "WITH users AS (SELECT id, score AS team FROM posts) "
              "SELECT id FROM users WHERE team = ?",
}

QUERIES = [
    "WITH t AS (SELECT team, COUNT(*) AS n FROM users GROUP BY team) SELECT team, n FROM t",
    "WITH a AS (SELECT id FROM users), b AS (SELECT author FROM posts) "
    "SELECT a.id, COUNT(b.author) FROM a LEFT JOIN b ON b.author = a.id GROUP BY a.id",
    "SELECT * FROM (WITH q AS (SELECT id, score FROM posts) SELECT id FROM q WHERE score > 1) t",
    "WITH x AS (SELECT id FROM users) SELECT x.id, y.id FROM x, x AS y WHERE x.id < y.id",
]


@pytest.fixture
def db(tmp_path: Path) -> Any:
    with rivulet.open(tmp_path) as db:
        for ddl in SCHEMA:
            db.execute(ddl)
        yield db


def _plan(db: Any, sql: str) -> ir.ViewPlan:
    from rivulet.plan.planner import Planner

    return Planner(db.catalog).plan_view("q", parse_one(sql))


# --------------------------------------------------------------------------- plans


def test_a_cte_is_planned_as_the_derived_table_it_names(db: Any) -> None:
    cte = _plan(db, "WITH s AS (SELECT author, COUNT(*) AS n FROM posts GROUP BY author) "
                    "SELECT u.name, s.n FROM users u JOIN s ON s.author = u.id WHERE u.id = ?")
    derived = _plan(db, "SELECT u.name, s.n FROM users u JOIN (SELECT author, COUNT(*) AS n "
                        "FROM posts GROUP BY author) s ON s.author = u.id WHERE u.id = ?")
    assert cte.root == derived.root and cte.key == derived.key


def test_a_cte_named_twice_is_one_sub_plan(db: Any) -> None:
    plan = _plan(db, "WITH g AS (SELECT author, COUNT(*) AS n FROM posts GROUP BY author) "
                     "SELECT a.author FROM g a JOIN g b ON a.n = b.n")
    aggregates = [n for n in ir.walk(plan.root) if isinstance(n, ir.Aggregate)]
    assert len(aggregates) == 1  # (walk lists each node object once: both sides are one)


def test_with_recursive_is_refused_by_name(db: Any) -> None:
    with pytest.raises(rivulet.UnsupportedSqlError, match="WITH RECURSIVE"):
        db.query("WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) "
                 "SELECT n FROM c")


def test_a_cte_cannot_take_parameters(db: Any) -> None:
    """(A CTE's LIMIT cuts its rows as a subquery's does: tests/test_limit_in_from.py.)"""
    with pytest.raises(rivulet.SqlError, match="cannot take \\? parameters"):
        db.execute("CREATE VIEW p AS WITH x AS (SELECT id FROM users WHERE team = ?) "
                   "SELECT id FROM x")


def test_a_cte_names_as_many_columns_as_its_select_and_once(db: Any) -> None:
    with pytest.raises(rivulet.SqlError, match="names 2 column"):
        db.query("WITH x (a, b) AS (SELECT id FROM users) SELECT * FROM x")
    with pytest.raises(rivulet.SqlError, match="defined twice"):
        db.query("WITH x AS (SELECT 1), x AS (SELECT 2) SELECT * FROM x")


# --------------------------------------------------------------------------- answers


def _open_pair() -> Pair:
    return Pair.of(SCHEMA, VIEWS)


_ids = st.integers(1, 6)
_small = st.one_of(st.none(), st.integers(0, 3))
_operations = operation_lists(
    st.tuples(st.just("user"), _ids, st.sampled_from(["ann", "bob", None]), _small),
    st.tuples(st.just("post"), _ids, _small, _small),
    st.tuples(st.just("score"), _ids, _small),
    st.tuples(st.just("delete"), st.sampled_from(["users", "posts"]), _ids),
    max_size=25,
)


def _check_all(pair: Pair) -> None:
    pair.settle()
    for key in (0, 1, 2, 3):
        for name in ("totals", "pairs", "renamed", "shadow"):
            pair.check_view(name, [key])
    pair.check_view("everyone")
    for sql in QUERIES:
        pair.check_query(sql)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=_operations)
def test_views_and_queries_with_ctes_match_sqlite(operations: list[tuple]) -> None:
    run_operations(_open_pair(), operations, _apply, _check_all)


def _apply(pair: Pair, op: tuple) -> None:
    kind = op[0]
    if kind == "user":
        pair.execute("DELETE FROM users WHERE id = ?", [op[1]])
        pair.execute("INSERT INTO users VALUES (?, ?, ?)", op[1:])
    elif kind == "post":
        pair.execute("DELETE FROM posts WHERE id = ?", [op[1]])
        pair.execute("INSERT INTO posts VALUES (?, ?, ?)", op[1:])
    elif kind == "score":
        pair.execute("UPDATE posts SET score = ? WHERE id = ?", [op[2], op[1]])
    else:  # "delete"
        pair.execute(f"DELETE FROM {op[1]} WHERE id = ?", [op[2]])


# --------------------------------------------------------------------------- MySQL


def _mysql_pair(pair: Any) -> Any:
    for ddl in SCHEMA:
        pair.execute(ddl)
    pair.execute("INSERT INTO users VALUES (1, 'ann', 1), (2, 'bob', 2), (3, NULL, 1)")
    pair.execute("INSERT INTO posts VALUES (1, 1, 5), (2, 1, 2), (3, 2, NULL), (4, 9, 1)")
    return pair


@pytest.mark.parametrize("sql", [
    # a CTE's query cannot name the CTEs after it (they name tables)
    "WITH x AS (SELECT id FROM y), y AS (SELECT 1 AS id) SELECT * FROM x",
    # nor itself, without RECURSIVE
    "WITH z AS (SELECT id FROM z) SELECT * FROM z",
])
def test_errors_are_mysqls(mysql_pair: Any, sql: str) -> None:
    pair = _mysql_pair(mysql_pair)
    expected = pair.mariadb_error(sql)
    assert expected is not None, f"MariaDB answered {sql!r}"
    with pytest.raises(rivulet.RivuletError) as caught:
        pair.db.query(sql)
    assert error_code(caught.value).mysql == expected, caught.value


@pytest.mark.parametrize("sql", [
    "WITH s AS (SELECT author, SUM(score) AS total FROM posts GROUP BY author) "
    "SELECT u.name, s.total FROM users u LEFT JOIN s ON s.author = u.id",
    "WITH s AS (SELECT author, AVG(score) AS mean FROM posts GROUP BY author) "
    "SELECT author, mean FROM s WHERE mean > 1",
    "WITH users AS (SELECT 7 AS id) SELECT id FROM users",
    "WITH x AS (SELECT id FROM users), y AS (SELECT id FROM x WHERE id > 1) "
    "SELECT x.id, y.id FROM x JOIN y ON y.id >= x.id",
    "WITH x (a) AS (SELECT team FROM users) SELECT a, COUNT(*) FROM x GROUP BY a",
])
def test_answers_are_mysqls(mysql_pair: Any, sql: str) -> None:
    pair = _mysql_pair(mysql_pair)
    pair.check_query(sql)
    pair.execute("INSERT INTO posts VALUES (5, 3, 4)")
    pair.execute("UPDATE users SET team = 2 WHERE id = 1")
    pair.check_query(sql)
