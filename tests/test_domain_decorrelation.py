"""Subqueries correlated otherwise than by equalities, decorrelated through a domain
(rivulet/plan/subqueries.py, "Correlation other than by equalities"), against the
oracles: SQLite (tests/oracle.py), whose answers are MySQL's for these integer
comparisons (EXISTS, counts, NOT IN's NULL rule), and MariaDB for what SQLite lacks
(``> ALL``) or answers otherwise (numbers compared with text).

Each query is read as a view (maintained: after interleaved INSERT / UPDATE / DELETE on
the outer and the inner table its answers equal the oracle's recomputation), as a view
with ``?`` parameters on the outer query, and ad hoc. What the domain cannot answer
exactly is refused by name.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oracle import Pair, ViewSet, apply_outer_inner_write
from rivulet.errors import UnsupportedSqlError
from rivulet.plan.catalog import Catalog
from rivulet.plan.describe import describe

SCHEMA = (
    "CREATE TABLE t (id INT PRIMARY KEY, k INT, x INT, g INT)",
    "CREATE TABLE u (id INT PRIMARY KEY, k INT, c INT)",
    "CREATE TABLE w (id INT PRIMARY KEY, k INT)",
)

#: Views without parameters: scalar aggregates, EXISTS, NOT EXISTS, IN and NOT IN (as
#: WHERE terms and as values), correlated by inequalities, BETWEEN, OR, and a mix of an
#: equality and an inequality.
VIEWS = {
    "count_lt": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.c < t.x) AS n FROM t",
    "count_col": "SELECT id, (SELECT COUNT(c) FROM u WHERE u.k >= t.x) AS n FROM t",
    "sum_ge": "SELECT id, (SELECT SUM(c) FROM u WHERE u.c >= t.x) AS s FROM t",
    "min_ne": "SELECT id, (SELECT MIN(c) FROM u WHERE u.k <> t.k) AS m FROM t",
    "max_between": "SELECT id, (SELECT MAX(c) FROM u WHERE u.c BETWEEN t.x AND t.g) AS m "
                   "FROM t",
    "count_or": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.c < t.x OR u.k > t.x) AS n FROM t",
    "count_mixed": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k AND u.c > t.x) AS n "
                   "FROM t",
    "count_not_null": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k < t.id OR u.c IS NULL) "
                      "AS n FROM t",
    "count_arith": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.c + 1 > t.x * 2) AS n FROM t",
    "in_where": "SELECT id FROM t WHERE x > (SELECT MIN(c) FROM u WHERE u.k > t.k)",
    "ex_lt": "SELECT id, x FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.c < t.x)",
    "nex_mixed": "SELECT id, x FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.k = t.k "
                 "AND u.c > t.x)",
    "nex_lt": "SELECT id FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.c <= t.x)",
    "in_lt": "SELECT id FROM t WHERE k IN (SELECT k FROM u WHERE u.c < t.x)",
    "nin_lt": "SELECT id, x FROM t WHERE x NOT IN (SELECT c FROM u WHERE u.k < t.k)",
    "ex_value": "SELECT id, EXISTS (SELECT 1 FROM u WHERE u.c < t.x) AS e FROM t",
    "in_value": "SELECT id, k IN (SELECT k FROM u WHERE u.c < t.x) AS i FROM t",
    "ex_or_value": "SELECT id FROM t WHERE g = 0 OR EXISTS (SELECT 1 FROM u WHERE u.c > t.x)",
    "joined_outer": "SELECT t.id, w.id FROM t JOIN w ON w.k = t.g WHERE EXISTS "
                    "(SELECT 1 FROM u WHERE u.c < w.k AND u.k <> t.k)",
    "grouped_outer": "SELECT g, COUNT(*) AS n FROM t WHERE EXISTS (SELECT 1 FROM u WHERE "
                     "u.c < t.x) GROUP BY g",
    "nested": "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.k AND EXISTS "
              "(SELECT 1 FROM w WHERE w.k > u.c))",
    "two_domains": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.c < t.x) AS a, "
                   "(SELECT COUNT(*) FROM w WHERE w.k > t.k) AS b FROM t",
    "top": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.c < t.x) AS n FROM t "
           "ORDER BY n DESC, id LIMIT 3",
}

#: Views with parameters on the outer query, each with the values to read it by.
PARAM_VIEWS = {
    "p_count": ("SELECT id, (SELECT COUNT(*) FROM u WHERE u.c < t.x) AS n FROM t WHERE k = ?",
                [(v,) for v in (None, 0, 1, 2, 3)]),
    "p_ex": ("SELECT id FROM t WHERE g = ? AND EXISTS (SELECT 1 FROM u WHERE u.c < t.x)",
             [(v,) for v in (0, 1, 2, 3)]),
    "p_nex": ("SELECT id, x FROM t WHERE k = ? AND NOT EXISTS (SELECT 1 FROM u WHERE "
              "u.k = t.k AND u.c >= t.x)", [(v,) for v in (0, 1, 2, 3)]),
    "p_nin": ("SELECT id FROM t WHERE g = ? AND x NOT IN (SELECT c FROM u WHERE u.k > t.k)",
              [(v,) for v in (0, 1, 2, 3)]),
}

SUITE = ViewSet(SCHEMA, VIEWS, PARAM_VIEWS)

VALUES = st.one_of(st.none(), st.integers(0, 3))
_ids = itertools.count(100)

_write = st.one_of(
    st.tuples(st.just("insert_t"), VALUES, VALUES, VALUES),
    st.tuples(st.just("insert_u"), VALUES, VALUES, st.none()),
    st.tuples(st.just("insert_w"), VALUES, st.none(), st.none()),
    st.tuples(st.just("update_t"), VALUES, VALUES, st.integers(0, 3)),
    st.tuples(st.just("update_u"), VALUES, VALUES, st.integers(0, 3)),
    st.tuples(st.just("delete_t"), st.integers(0, 3), st.none(), st.none()),
    st.tuples(st.just("delete_u"), st.integers(0, 3), st.none(), st.none()),
    st.tuples(st.just("check"), st.none(), st.none(), st.none()),
)


def _apply(pair: Pair, write: tuple[str, Any, Any, Any]) -> None:
    op, a, b, c = write
    if op == "insert_t":
        pair.execute("INSERT INTO t VALUES (?, ?, ?, ?)", (next(_ids), a, b, c))
    elif op == "insert_u":
        pair.execute("INSERT INTO u VALUES (?, ?, ?)", (next(_ids), a, b))
    elif op == "insert_w":
        pair.execute("INSERT INTO w VALUES (?, ?)", (next(_ids), a))
    elif not apply_outer_inner_write(pair, write):
        SUITE.check_all(pair)


def _seed(pair: Pair) -> None:
    # duplicate outer rows (ids 1 and 8, 3 and 9), NULLs in every outer and inner column
    pair.insert_many("t", [(1, 1, 1, 0), (2, 1, 2, 1), (3, 2, None, 1), (4, 3, 3, 2),
                           (5, None, 2, 2), (6, 2, 0, 3), (7, 0, 1, None), (8, 1, 1, 0),
                           (9, 2, None, 1)])
    pair.insert_many("u", [(1, 1, 1), (2, 1, None), (3, 2, 2), (4, 3, 7), (5, None, 3),
                           (6, 0, 0)])
    pair.insert_many("w", [(1, 1), (2, 2), (3, None), (4, 3)])


@pytest.mark.parametrize("partial", [True, False], ids=["partial", "full"])
def test_domain_forms_after_writes_on_both_sides(partial: bool) -> None:
    """Every form, as views and ad hoc, before and after a fixed round of writes on the
    outer table (its domain gains and loses values) and the inner one."""
    with Pair() as pair:
        pair.reopen(partial=partial)
        SUITE.program(pair)
        SUITE.check_all(pair, adhoc=True)
        _seed(pair)
        SUITE.check_all(pair, adhoc=True)
        for write in [("insert_u", 3, None, None), ("delete_u", 2, None, None),
                      ("update_u", 0, 2, 1), ("insert_t", None, 0, 1),
                      ("update_t", None, 1, 3), ("delete_t", 1, None, None),
                      ("insert_u", None, 0, None), ("delete_u", 0, None, None),
                      ("update_t", 3, 2, 0), ("update_u", 2, None, 3),
                      ("insert_w", 0, None, None), ("insert_t", 2, 2, 2)]:
            _apply(pair, write)
            SUITE.check_all(pair)
        SUITE.check_all(pair, adhoc=True)


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(writes=st.lists(_write, max_size=10))
def test_generated_writes_match_recomputation(writes: list[tuple[str, Any, Any, Any]]) -> None:
    """Generated INSERT / UPDATE / DELETE on the outer and the inner tables, checked after
    each ``check`` and at the end: incremental answers equal SQLite's recomputation."""
    with Pair() as pair:
        SUITE.program(pair)
        _seed(pair)
        for write in writes:
            _apply(pair, write)
        SUITE.check_all(pair)


def test_one_commit_writing_both_sides() -> None:
    """Transactions writing the outer and the inner table at once: the domain and the
    subquery's rows over it change in the same wave as the outer rows joined back."""
    with Pair() as pair:
        SUITE.program(pair)
        _seed(pair)
        SUITE.check_all(pair)
        for statements in [
            ["INSERT INTO u VALUES (50, 0, 1)", "INSERT INTO t VALUES (50, 0, 5, 1)",
             "UPDATE t SET x = 2 WHERE k = 1"],
            ["DELETE FROM u WHERE k = 1", "UPDATE t SET x = NULL WHERE id = 50",
             "INSERT INTO u VALUES (51, NULL, NULL)"],
            ["DELETE FROM t WHERE x = 2", "UPDATE u SET c = c + 1"],
            ["DELETE FROM u", "UPDATE t SET x = 1"],
        ]:
            pair.transaction(statements)
            SUITE.check_all(pair)


def test_views_keyed_by_a_parameter_are_partial() -> None:
    """The views of PARAM_VIEWS keep partial state: a read asks the outer side by its key;
    the subquery's side over the domain is looked up by the domain's columns."""
    with Pair() as pair:
        SUITE.program(pair)
        SUITE.assert_param_views_partial(pair)


def test_eviction_refills_through_the_domain() -> None:
    """Partial state under a tiny memory budget: evicted keys are refilled by upqueries
    through the domain's joins and still answer as SQLite does."""
    with Pair() as pair:
        pair.reopen(memory_limit=1)
        SUITE.program(pair)
        _seed(pair)
        for round_ in range(3):
            SUITE.check_all(pair)
            _apply(pair, ("insert_u", round_, round_, None))
            _apply(pair, ("update_t", round_, round_ % 2, round_))
            pair.db.evict()
        SUITE.check_all(pair)


def test_equality_correlation_keeps_its_plan() -> None:
    """A subquery correlated by equalities only is decorrelated as before, with no
    domain; one with an inequality too reads the distinct values of the outer columns."""
    catalog = Catalog.from_sql(*SCHEMA)
    plain = describe(catalog.plan("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u "
                                  "WHERE u.k = t.k)"))
    assert "_d0" not in plain
    domain = describe(catalog.plan("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u "
                                   "WHERE u.k = t.k AND u.c < t.x)"))
    assert "Distinct\n" in domain and "Project _d0 := k, _d1 := x" in domain, domain


def test_a_table_named_like_a_domain_is_still_read() -> None:
    """The domain takes a name no table, view or CTE has: a table ``_domain0`` named
    inside the rewritten subquery is read, not hidden by it."""
    with Pair() as pair:
        SUITE.create_tables(pair)
        pair.execute("CREATE TABLE _domain0 (id INT PRIMARY KEY, _d0 INT)")
        _seed(pair)
        pair.insert_many("_domain0", [(1, 1), (2, 3)])
        sql = ("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.c < t.x AND EXISTS "
               "(SELECT 1 FROM _domain0 WHERE _domain0._d0 = u.k))")
        pair.check_query(sql)
        pair.create_view("named", sql)
        pair.execute("INSERT INTO _domain0 VALUES (3, 2)")
        pair.settle()
        pair.check_view("named")


# --------------------------------------------------------------------------- select1


def _select1_rows() -> list[str]:
    """The INSERTs of sqllogictest's select1.test (its t1 of 30 rows, NULLs among them)."""
    script = Path(__file__).parent.parent / "bench/sqllogictest/scripts/select1.test"
    return re.findall(r"^INSERT INTO t1\(.*$", script.read_text(), re.MULTILINE)


#: select1.test's queries, verbatim (those without ``/``, which SQLite divides as integers).
SELECT1 = [
    "SELECT (SELECT count(*) FROM t1 AS x WHERE x.b<t1.b)\n  FROM t1\n WHERE (a>b-2 AND "
    "a<b+2)\n    OR c>d\n ORDER BY 1",
    "SELECT a+b*2+c*3+d*4,\n       CASE a+1 WHEN b THEN 111 WHEN c THEN 222\n        WHEN d "
    "THEN 333  WHEN e THEN 444 ELSE 555 END,\n       (SELECT count(*) FROM t1 AS x WHERE "
    "x.c>t1.c AND x.d<t1.d),\n       c\n  FROM t1\n WHERE (c<=d-2 OR c>=d+2)\n ORDER BY 4,2,1,3",
    "SELECT a, b FROM t1 WHERE EXISTS(SELECT 1 FROM t1 AS x WHERE x.b<t1.b) ORDER BY 1, 2",
    "SELECT a+b*2+c*3+d*4+e*5,\n       CASE WHEN a<b-3 THEN 111 WHEN a<=b THEN 222\n"
    "        WHEN a<b+3 THEN 333 ELSE 444 END,\n       abs(b-c),\n       a+b*2+c*3\n"
    "  FROM t1\n WHERE (e>c OR e<d)\n   AND d>e\n   AND EXISTS(SELECT 1 FROM t1 AS x WHERE "
    "x.b<t1.b)\n ORDER BY 4,2,1,3",
    "SELECT (SELECT count(*) FROM t1 AS x WHERE x.c>t1.c AND x.d<t1.d), a, b FROM t1 "
    "WHERE NOT EXISTS(SELECT 1 FROM t1 AS x WHERE x.c<t1.c) ORDER BY 1, 2, 3",
]


def test_select1_queries_verbatim() -> None:
    """select1.test's correlated counts and EXISTS, over its rows, as views and ad hoc;
    then after deleting and updating rows of t1 (outer and inner table at once)."""
    with Pair() as pair:
        pair.execute("CREATE TABLE t1(a INTEGER, b INTEGER, c INTEGER, d INTEGER, e INTEGER)")
        for insert in _select1_rows():
            pair.execute(insert)
        for i, sql in enumerate(SELECT1):
            pair.check_query(sql)
            pair.create_view(f"s{i}", sql)
        for write in ["DELETE FROM t1 WHERE a % 3 = 0", "UPDATE t1 SET b = NULL WHERE c > 120",
                      "INSERT INTO t1(a,b,c,d,e) VALUES(1,2,3,4,5)", "UPDATE t1 SET b = b + 7"]:
            pair.execute(write)
            pair.settle()
            for i in range(len(SELECT1)):
                pair.check_view(f"s{i}")


# --------------------------------------------------------------------------- MariaDB


def test_mysql_semantics_of_the_domain(mysql_pair) -> None:
    """Against MariaDB: ``> ALL`` / ``< ANY`` correlated by inequalities, NULL outer values
    (COUNT 0, other aggregates NULL, NOT EXISTS true, NOT IN true), duplicate outer rows,
    numbers compared with text and DECIMALs, as views maintained under writes."""
    for sql in ("CREATE TABLE t (id INT PRIMARY KEY, k INT, x INT, d DECIMAL(6,2))",
                "CREATE TABLE u (id INT PRIMARY KEY, k INT, c INT, s VARCHAR(10), "
                "e DECIMAL(6,3))"):
        mysql_pair.execute(sql)
    mysql_pair.insert_many("t", [(1, 1, 1, "1.50"), (2, 1, None, None), (3, 2, 2, "2.00"),
                                 (4, None, 5, "0.25"), (5, 1, 1, "1.50")])
    mysql_pair.insert_many("u", [(1, 1, 3, "2", "1.500"), (2, 2, None, "10", None),
                                 (3, 2, 2, "abc", "2.001"), (4, 3, 7, " 1x", "0.250")])
    queries = [
        "SELECT id, x > ALL (SELECT c FROM u WHERE u.k > t.k) AS a FROM t",
        "SELECT id, x < ANY (SELECT c FROM u WHERE u.k <> t.k) AS a FROM t",
        "SELECT id, (SELECT COUNT(*) FROM u WHERE u.c > t.x) AS n, "
        "(SELECT MAX(c) FROM u WHERE u.c > t.x) AS m, "
        "(SELECT SUM(c) FROM u WHERE u.c > t.x) AS s FROM t",
        "SELECT id FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.c > t.x)",
        "SELECT id FROM t WHERE x NOT IN (SELECT c FROM u WHERE u.k > t.k)",
        "SELECT id FROM t WHERE x IN (SELECT c FROM u WHERE u.k >= t.k)",
        "SELECT id, (SELECT COUNT(*) FROM u WHERE u.s < t.x) AS n FROM t",
        "SELECT id, (SELECT COUNT(*) FROM u WHERE u.s > t.x AND u.k = t.k) AS n FROM t",
        "SELECT id, (SELECT COUNT(*) FROM u WHERE u.e >= t.d) AS n FROM t",
        "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.e BETWEEN t.d AND t.x)",
    ]
    for i, sql in enumerate(queries):
        mysql_pair.check_query(sql)
        mysql_pair.create_view(f"v{i}", sql)
    for write in ["INSERT INTO u VALUES (5, NULL, 0, '0', 0.5)", "DELETE FROM u WHERE c = 7",
                  "UPDATE t SET x = NULL WHERE id = 3", "INSERT INTO t VALUES (6, 3, 2, 2.5)",
                  "UPDATE u SET c = NULL WHERE id = 1"]:
        mysql_pair.execute(write)
        mysql_pair.settle()
        for i in range(len(queries)):
            mysql_pair.check_view(f"v{i}")


def test_other_kinds_of_outer_column(mysql_pair) -> None:
    """A DOUBLE, a DATE, a TIME and a BIGINT outer column (their ``=`` the values'
    identity: -0.0 and 0.0 one value), compared with other kinds inside, against MariaDB.
    (A scalar aggregate or an EXISTS as a value over a DOUBLE's domain is refused:
    grouped by a DOUBLE key.)"""
    mysql_pair.execute("CREATE TABLE a (id INT PRIMARY KEY, f DOUBLE, d DATE, tm TIME, "
                       "b BIGINT)")
    mysql_pair.execute("CREATE TABLE b (id INT PRIMARY KEY, f DOUBLE, d DATETIME, s VARCHAR(12), "
                       "n INT)")
    mysql_pair.insert_many("a", [(1, 0.5, "2024-01-02", "10:00:00", 5), (2, None, None, None, None),
                                 (3, -0.0, "2024-01-01", "-01:00:00", 2**40),
                                 (4, 0.0, "2024-01-02", "10:00:00", 5)])
    mysql_pair.insert_many("b", [(1, 0.25, "2024-01-01 12:00:00", "0.5", 1),
                                 (2, 1e10, "2024-01-02 00:00:00", "10:00:00", 2**31 - 1),
                                 (3, None, None, "2024-01-01", None)])
    queries = [
        "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.f > a.f)",
        "SELECT id FROM a WHERE a.f NOT IN (SELECT n FROM b WHERE b.s <= a.f)",
        "SELECT id FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.f < a.f + 1)",
        "SELECT id, (SELECT COUNT(*) FROM b WHERE b.d >= a.d) AS n, "
        "(SELECT MAX(id) FROM b WHERE b.s < a.d) AS m FROM a",
        "SELECT id, (SELECT COUNT(*) FROM b WHERE b.s > a.tm) AS n FROM a",
        "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.n < a.b)",
    ]
    for i, sql in enumerate(queries):
        mysql_pair.check_query(sql)
        mysql_pair.create_view(f"k{i}", sql)
    for write in ["INSERT INTO b VALUES (4, -1, '2023-12-31', '-02:00:00', -5)",
                  "UPDATE a SET f = 0.25, d = '2024-01-01' WHERE id = 1",
                  "DELETE FROM b WHERE id = 1"]:
        mysql_pair.execute(write)
        mysql_pair.settle()
        for i in range(len(queries)):
            mysql_pair.check_view(f"k{i}")


def test_django_exists_with_outer_ref_inequality(mysql_pair) -> None:
    """Django's ``Exists(Vote.objects.filter(story=OuterRef('pk'),
    created__gt=OuterRef('updated_at')))`` as Django writes it (parenthesized AND,
    ``LIMIT 1``), over DATETIMEs with NULLs, against MariaDB under writes."""
    mysql_pair.execute("CREATE TABLE story (id INT PRIMARY KEY, updated_at DATETIME)")
    mysql_pair.execute("CREATE TABLE vote (id INT PRIMARY KEY, story_id INT, "
                       "created DATETIME)")
    mysql_pair.insert_many("story", [(1, "2024-01-01 10:00:00"), (2, None),
                                     (3, "2024-01-02 00:00:00"), (4, "2024-01-01 10:00:00")])
    mysql_pair.insert_many("vote", [(1, 1, "2024-01-01 10:00:01"), (2, 2, "2024-01-05 00:00:00"),
                                    (3, 3, "2024-01-01 00:00:00"), (4, 4, None)])
    queries = [
        "SELECT story.id, EXISTS(SELECT 1 AS a FROM vote U0 WHERE (U0.story_id = story.id "
        "AND U0.created > story.updated_at) LIMIT 1) AS fresh FROM story",
        "SELECT story.id FROM story WHERE EXISTS(SELECT 1 AS a FROM vote U0 WHERE "
        "(U0.story_id = story.id AND U0.created > story.updated_at) LIMIT 1)",
        "SELECT story.id FROM story WHERE NOT EXISTS(SELECT 1 AS a FROM vote U0 WHERE "
        "(U0.created >= story.updated_at) LIMIT 1)",
    ]
    for i, sql in enumerate(queries):
        mysql_pair.check_query(sql)
        mysql_pair.create_view(f"d{i}", sql)
    for write in ["INSERT INTO vote VALUES (5, 3, '2024-01-03 00:00:00')",
                  "UPDATE story SET updated_at = '2024-01-06 00:00:00' WHERE id = 2",
                  "UPDATE story SET updated_at = NULL WHERE id = 1",
                  "DELETE FROM vote WHERE id = 2"]:
        mysql_pair.execute(write)
        mysql_pair.settle()
        for i in range(len(queries)):
            mysql_pair.check_view(f"d{i}")


# --------------------------------------------------------------------------- refused


@pytest.mark.parametrize("sql, construct", [
    # a NULL outer value would make the term true for some inner rows, but the domain's
    # join back by = never meets a NULL
    ("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.k OR u.c = 1)",
     "EXISTS subquery correlated other than by an equality, on a nullable outer column"),
    ("SELECT id, (SELECT COUNT(*) FROM u WHERE u.c <=> t.x) FROM t",
     "scalar subquery correlated other than by an equality, on a nullable outer column"),
    ("SELECT id, (SELECT COUNT(*) FROM u WHERE t.x IS NULL) FROM t",
     "scalar subquery correlated other than by an equality, on a nullable outer column"),
    ("SELECT id FROM t WHERE x NOT IN (SELECT c FROM u WHERE u.k NOT BETWEEN t.k AND 3)",
     "NOT IN subquery correlated other than by an equality, on a nullable outer column"),
    # text compares under a collation: its domain's values are not its = classes
    ("SELECT id FROM v WHERE EXISTS (SELECT 1 FROM v AS y WHERE y.s < v.s)",
     "EXISTS subquery correlated other than by an equality, on a STR outer column"),
    # a DOUBLE domain key converts (as a DOUBLE correlation key does): the groups per key
    # are not proven one per outer value
    ("SELECT id, (SELECT COUNT(*) FROM u WHERE u.c > t.x) FROM t AS t2 JOIN "
     "(SELECT id AS i, x + 0e0 AS x FROM t) AS t ON t.i = t2.id",
     "scalar subquery that may return more than one row.*converts a side"),
    # correlated with an aggregate's groups
    ("SELECT g, (SELECT COUNT(*) FROM u WHERE u.c < t.g) FROM t GROUP BY g",
     "scalar subquery correlated other than by an equality, with the groups of an "
     "aggregated query"),
    ("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE EXISTS "
     "(SELECT 1 FROM w WHERE w.k < t.k))", "subquery correlated with a query further out"),
    # an outer column outside WHERE stays refused as before
    ("SELECT id, (SELECT COUNT(*) + t.x FROM u WHERE u.c < t.x) FROM t",
     "outer column in a scalar subquery's select list"),
    ("SELECT id, (SELECT c FROM u WHERE u.c < t.x) FROM t",
     "scalar subquery that may return more than one row"),
])
def test_refused_forms_name_the_construct(sql: str, construct: str) -> None:
    with Pair() as pair:
        SUITE.create_tables(pair)
        pair.execute("CREATE TABLE v (id INT PRIMARY KEY, s VARCHAR(10))")
        with pytest.raises(UnsupportedSqlError, match=construct):
            pair.db.query(sql)
        with pytest.raises(UnsupportedSqlError, match=construct):
            pair.db.execute(f"CREATE VIEW refused AS {sql}")
