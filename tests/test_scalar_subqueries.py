"""Scalar subqueries (rivulet/plan/scalars.py) against the oracles: SQLite
(tests/oracle.py), whose answers are MySQL's for these forms (each returns at most one row:
SQLite would take the first of several where MySQL raises 1242, and those forms are
refused), and MariaDB for MySQL's own rules: COUNT over no rows is 0, MAX over none and a
GROUP BY of no rows NULL.

Each query is read as a view maintained through interleaved INSERT / UPDATE / DELETE on
the outer and the inner tables (its answers must equal SQLite's recomputation), as a
view with ``?`` parameters (partial state, filled by upqueries through the LEFT JOIN on
the correlation key), and ad hoc. What cannot be proved to return at most one row, or
decorrelated, is refused by name.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from oracle import Pair, ViewSet, apply_outer_inner_write
from rivulet.errors import OperandColumnsError, UnsupportedSqlError, error_code

SCHEMA = (
    "CREATE TABLE t (id INT PRIMARY KEY, k INT, x INT, g INT)",
    "CREATE TABLE u (id INT PRIMARY KEY, k INT, c INT)",
    "CREATE TABLE w (id INT PRIMARY KEY, k INT, name VARCHAR(10))",
)

#: Views without parameters: each shape, uncorrelated and correlated, in the select list
#: and in WHERE, beside joins, EXISTS, GROUP BY and ORDER BY ... LIMIT.
VIEWS = {
    "max_plain": "SELECT id, (SELECT MAX(c) FROM u) AS m FROM t",
    "avg_where": "SELECT id, x FROM t WHERE x > (SELECT AVG(c) FROM u WHERE c < 5)",
    "count_corr": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k) AS n FROM t",
    "max_corr": "SELECT id, (SELECT MAX(c) FROM u WHERE u.k = t.k AND u.c > 0) AS m FROM t",
    "sum_corr": "SELECT t.id, (SELECT SUM(c) FROM u WHERE t.k = u.k) AS s FROM t",
    "expr_corr": "SELECT id, (SELECT COUNT(c) * 10 + COALESCE(MAX(c), -1) FROM u "
                 "WHERE u.k = t.k) AS e FROM t",
    "count_where": "SELECT id FROM t WHERE x >= (SELECT COUNT(*) FROM u WHERE u.k = t.k)",
    "two_keys": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k AND u.c = t.x) AS n FROM t",
    "by_key": "SELECT id, (SELECT k FROM w WHERE w.id = t.g) AS wk FROM t",
    "by_key_const": "SELECT id, (SELECT name FROM w WHERE id = 1) AS n FROM t",
    "first": "SELECT id, (SELECT c FROM u WHERE u.k = t.k ORDER BY c DESC, id LIMIT 1) AS top "
             "FROM t",
    "first_plain": "SELECT id, (SELECT id FROM u ORDER BY c, id DESC LIMIT 1) AS lo FROM t",
    "grouped_key": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k GROUP BY u.k) AS n "
                   "FROM t",
    "grouped_having": "SELECT id, (SELECT SUM(c) FROM u WHERE u.k = t.k GROUP BY u.k "
                      "HAVING COUNT(*) > 1) AS s FROM t",
    "first_text": "SELECT id, (SELECT name FROM w WHERE w.k = t.k ORDER BY name DESC, id "
                  "LIMIT 1) AS n FROM t",
    "grouped_outer": "SELECT g, COUNT(*) AS n, (SELECT COUNT(*) FROM u WHERE u.k = t.g) AS m, "
                     "(SELECT MAX(c) FROM u) AS top FROM t GROUP BY g",
    "grouped_having_value": "SELECT k, SUM(x) AS s FROM t GROUP BY k HAVING SUM(x) > "
                            "(SELECT MIN(c) FROM u) ORDER BY (SELECT COUNT(*) FROM u "
                            "WHERE u.k = t.k) DESC, k LIMIT 2",
    "outer_grouped": "SELECT g, COUNT(*) AS n FROM t WHERE x <= (SELECT MAX(c) FROM u "
                     "WHERE u.k = t.k) GROUP BY g",
    "joined": "SELECT t.id, w.id AS wid, (SELECT COUNT(*) FROM u WHERE u.k = w.k) AS n "
              "FROM t JOIN w ON w.k = t.g",
    "with_exists": "SELECT id, (SELECT MIN(c) FROM u) AS lo, (SELECT MAX(c) FROM u "
                   "WHERE u.k = t.k) AS hi FROM t WHERE EXISTS (SELECT 1 FROM w WHERE w.k = t.k)",
    "ordered": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k) AS n FROM t "
               "ORDER BY n DESC, id LIMIT 3",
    "nested": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k AND u.c > "
              "(SELECT MIN(k) FROM w)) AS n FROM t",
    # correlated other than by an equality: through the domain of the outer columns
    # (tests/test_domain_decorrelation.py)
    "count_gt": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k > t.k) AS n FROM t",
    "order_by": "SELECT id, x FROM t ORDER BY (SELECT COUNT(*) FROM u WHERE u.k = t.k) DESC, "
                "id LIMIT 4",
    "no_from": "SELECT id, (SELECT 5) AS five FROM t WHERE x < (SELECT 2)",
    "twice": "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k) + 1 AS n FROM t "
             "WHERE (SELECT COUNT(*) FROM u WHERE u.k = t.k) < 2",
}

#: Views with parameters, each with the values to read it by (NULL and missing keys too).
PARAM_VIEWS = {
    "p_count": ("SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k) AS n FROM t WHERE id = ?",
                [(v,) for v in (None, 1, 2, 5, 9)]),
    "p_first": ("SELECT id, (SELECT c FROM u WHERE u.k = t.k ORDER BY c DESC, id LIMIT 1) AS top "
                "FROM t WHERE g = ?", [(v,) for v in (0, 1, 2, 3)]),
    "p_where": ("SELECT id FROM t WHERE k = ? AND x > (SELECT AVG(c) FROM u)",
                [(v,) for v in (None, 0, 1, 2, 3)]),
    "p_max": ("SELECT id, (SELECT MAX(c) FROM u WHERE u.k = t.k) AS m FROM t WHERE k = ?",
              [(v,) for v in (0, 1, 2, 3)]),
    "p_grouped": ("SELECT g, COUNT(*) AS n, (SELECT MAX(c) FROM u WHERE u.k = t.g) AS m "
                  "FROM t WHERE g = ? GROUP BY g", [(v,) for v in (0, 1, 2, 3)]),
    "p_by_key": ("SELECT id, (SELECT name FROM w WHERE w.id = t.g) AS who FROM t WHERE x = ?",
                 [(v,) for v in (0, 1, 2, 3)]),
}

VALUES = st.one_of(st.none(), st.integers(0, 3))
_ids = itertools.count(100)


#: The program every test of answers runs and checks.
SUITE = ViewSet(SCHEMA, VIEWS, PARAM_VIEWS)


def _seed(pair: Pair) -> None:
    pair.insert_many("t", [(1, 1, 1, 0), (2, 1, 2, 1), (3, 2, None, 1), (4, 3, 3, 2),
                           (5, None, 2, 2), (6, 2, 0, 3), (7, 0, 1, 0)])
    pair.insert_many("u", [(1, 1, 1), (2, 1, None), (3, 2, 2), (4, 3, 7), (5, None, 3),
                           (6, 1, 3)])
    pair.insert_many("w", [(1, 1, "ann"), (2, 2, "bob"), (3, None, None)])


# --------------------------------------------------------------------------- writes

_write = st.one_of(
    st.tuples(st.just("insert_t"), VALUES, VALUES, VALUES),
    st.tuples(st.just("insert_u"), VALUES, VALUES, st.none()),
    st.tuples(st.just("insert_w"), VALUES, st.sampled_from(["ann", "cy", None]), st.none()),
    st.tuples(st.just("update_t"), VALUES, VALUES, st.integers(0, 3)),
    st.tuples(st.just("update_u"), VALUES, VALUES, st.integers(0, 3)),
    st.tuples(st.just("update_w"), VALUES, st.none(), st.integers(0, 3)),
    st.tuples(st.just("delete_t"), st.integers(0, 3), st.none(), st.none()),
    st.tuples(st.just("delete_u"), st.integers(0, 3), st.none(), st.none()),
    st.tuples(st.just("delete_w"), st.integers(0, 3), st.none(), st.none()),
    st.tuples(st.just("check"), st.none(), st.none(), st.none()),
)


def _apply(pair: Pair, write: tuple[str, Any, Any, Any]) -> None:
    op, a, b, c = write
    if op == "insert_t":
        pair.execute("INSERT INTO t VALUES (?, ?, ?, ?)", (next(_ids), a, b, c))
    elif op == "insert_u":
        pair.execute("INSERT INTO u VALUES (?, ?, ?)", (next(_ids), a, b))
    elif op == "insert_w":
        pair.execute("INSERT INTO w VALUES (?, ?, ?)", (next(_ids), a, b))
    elif op == "update_w":
        pair.execute("UPDATE w SET k = ? WHERE id % 4 = ?", (a, c))
    elif not apply_outer_inner_write(pair, write):
        SUITE.check_all(pair)


_ROUND = [("insert_u", 3, None, None), ("delete_u", 2, None, None), ("update_u", 0, 2, 1),
          ("insert_t", None, 0, 1), ("update_t", None, 1, 3), ("delete_t", 1, None, None),
          ("insert_u", None, 0, None), ("delete_u", 0, None, None), ("update_u", 2, None, 3),
          ("insert_w", 0, "cy", None), ("update_w", 1, None, 2), ("delete_w", 1, None, None),
          ("delete_u", 1, None, None), ("delete_u", 3, None, None), ("delete_u", 2, None, None)]


# --------------------------------------------------------------------------- answers


@pytest.mark.parametrize("partial", [True, False], ids=["partial", "full"])
def test_values_after_writes_on_both_sides(partial: bool) -> None:
    """Every form, as views and ad hoc, before and after a fixed round of writes that
    moves inner rows between keys, takes the last row of a key away (a COUNT back to 0, a
    MAX to NULL, the first row to the next one) and empties the inner table."""
    with Pair() as pair:
        pair.reopen(partial=partial)
        SUITE.program(pair)
        SUITE.check_all(pair, adhoc=True)
        _seed(pair)
        SUITE.check_all(pair, adhoc=True)
        for write in _ROUND:
            _apply(pair, write)
            SUITE.check_all(pair)
        SUITE.check_all(pair, adhoc=True)


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(writes=st.lists(_write, max_size=12))
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
    """Transactions writing the outer and the inner table at once."""
    with Pair() as pair:
        SUITE.program(pair)
        _seed(pair)
        SUITE.check_all(pair)
        rounds = [
            ["INSERT INTO u VALUES (50, 0, 1)", "INSERT INTO t VALUES (50, 0, 1, 1)",
             "UPDATE t SET k = 2 WHERE k = 1"],
            ["DELETE FROM u WHERE k = 2", "UPDATE t SET k = 1 WHERE id = 50",
             "INSERT INTO w VALUES (50, 0, 'dee')"],
            ["DELETE FROM u", "UPDATE t SET x = NULL WHERE id = 50"],
        ]
        for statements in rounds:
            pair.transaction(statements)
            SUITE.check_all(pair)


def test_views_keyed_by_a_parameter_are_partial() -> None:
    """The views of PARAM_VIEWS keep partial state: the outer side asked by the key, the
    subquery's value looked up by its correlation key."""
    with Pair() as pair:
        SUITE.program(pair)
        SUITE.assert_param_views_partial(pair)


def test_eviction_refills_through_the_left_join() -> None:
    """Under a tiny memory budget, evicted keys are refilled by upqueries through the
    decorrelated subqueries and still answer as SQLite does."""
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
        assert pair.db.stats()["evictions"] > 0


def test_a_correlated_count_is_grouped_by_its_key() -> None:
    """The decorrelation: one aggregate grouped by the correlation key, LEFT JOINed on it
    (not a subquery evaluated per outer row)."""
    from rivulet.plan import ir
    from rivulet.plan.planner import Planner
    from rivulet.sql.parse import parse_one

    with Pair() as pair:
        SUITE.program(pair)
        plan = Planner(pair.db.catalog).plan_view("q", parse_one(VIEWS["count_corr"]))
        nodes = ir.walk(plan.root)
        joins = [n for n in nodes if isinstance(n, ir.Join)]
        aggregates = [n for n in nodes if isinstance(n, ir.Aggregate)]
        assert [j.kind for j in joins] == ["left"]
        assert len(aggregates) == 1 and len(aggregates[0].group_by) == 1


# --------------------------------------------------------------------------- MySQL


MYSQL_QUERIES = [
    # COUNT over no rows is 0 (a NULL key's too); MAX, SUM over none NULL
    "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k) AS n FROM t",
    "SELECT id, (SELECT COUNT(c) FROM u WHERE u.k = t.k) AS n, "
    "(SELECT MAX(c) FROM u WHERE u.k = t.k) AS m FROM t",
    "SELECT id, (SELECT SUM(c) FROM u WHERE u.k = t.k AND u.c > 1) AS s FROM t",
    # an expression of aggregates over no rows: its value over no rows
    "SELECT id, (SELECT COUNT(*) + 1 FROM u WHERE u.k = t.k) AS n, "
    "(SELECT IFNULL(MAX(c), 0) FROM u WHERE u.k = t.k) AS m FROM t",
    # a GROUP BY of no rows has no row: NULL, COUNT's too
    "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k GROUP BY u.k) AS n FROM t",
    # the sums of one implicit group, not rounded as a GROUP BY's temporary table's
    "SELECT id, (SELECT SUM(c / 3) FROM u WHERE u.k = t.k) AS s, "
    "(SELECT AVG(c / 7) FROM u WHERE u.k = t.k) AS a FROM t",
    "SELECT id, (SELECT c FROM u WHERE u.k = t.k ORDER BY c DESC, id LIMIT 1) AS top FROM t",
    "SELECT id FROM t WHERE x > (SELECT AVG(c) FROM u)",
    "SELECT id, (SELECT name FROM w WHERE w.id = t.g) AS who FROM t",
    # over the groups of an aggregated query: correlated with a group column
    "SELECT g, COUNT(*) AS n, (SELECT COUNT(*) FROM u WHERE u.k = t.g) AS m, "
    "(SELECT AVG(c) FROM u) AS a FROM t GROUP BY g",
    "SELECT k, SUM(x) FROM t GROUP BY k HAVING SUM(x) >= (SELECT MIN(c) FROM u WHERE u.k = t.k)",
    # a derived table whose columns are scalar subqueries' values, computed on
    "SELECT id, v * 3 FROM (SELECT id, (SELECT AVG(c) FROM u) / 7 AS v, "
    "(SELECT SUM(c) FROM u WHERE u.k = t.k) / 3 AS s FROM t) d WHERE s * 3 > 0",
]


def _mysql_seed(pair: Any) -> None:
    for sql in SCHEMA:
        pair.execute(sql)
    pair.insert_many("t", [(1, 1, 1, 1), (2, 1, None, 2), (3, 2, 2, 9), (4, 9, None, 1),
                           (5, None, 5, None)])
    pair.insert_many("u", [(1, 1, 3), (2, 2, None), (3, 2, 2), (4, 3, 7), (5, 1, 1)])
    pair.insert_many("w", [(1, 1, "ann"), (2, 2, None)])


def test_answers_are_mysqls(mysql_pair: Any) -> None:
    """Against MariaDB, as views and ad hoc, before and after writes that empty a key."""
    _mysql_seed(mysql_pair)
    for i, sql in enumerate(MYSQL_QUERIES):
        mysql_pair.check_query(sql)
        mysql_pair.create_view(f"v{i}", sql)
    for round_ in range(2):
        for i in range(len(MYSQL_QUERIES)):
            mysql_pair.check_view(f"v{i}")
        mysql_pair.execute("DELETE FROM u WHERE k = 1" if round_ == 0 else
                           "INSERT INTO u VALUES (9, 9, 4)")


def test_more_than_one_column_is_mysqls_error(mysql_pair: Any) -> None:
    _mysql_seed(mysql_pair)
    sql = "SELECT id, (SELECT c, k FROM u WHERE id = 1) FROM t"
    expected = mysql_pair.mariadb_error(sql)
    assert expected is not None, f"MariaDB answered {sql!r}"
    with pytest.raises(OperandColumnsError) as caught:
        mysql_pair.db.query(sql)
    assert error_code(caught.value).mysql == expected


# --------------------------------------------------------------------------- refused


@pytest.mark.parametrize("sql, construct", [
    ("SELECT id, (SELECT COUNT(*) FROM u WHERE u.k > t.k OR t.k IS NULL) FROM t",
     "correlated other than by an equality"),
    ("SELECT id, (SELECT c FROM u WHERE u.k = t.k) FROM t",
     "may return more than one row.*no equality on every column of a key"),
    ("SELECT id FROM t WHERE x = (SELECT c FROM u WHERE c > 1)",
     "may return more than one row"),
    ("SELECT id, (SELECT c FROM u WHERE u.k = t.k LIMIT 1) FROM t",
     "may return more than one row.*LIMIT 1 without an ORDER BY"),
    ("SELECT id, (SELECT c FROM u WHERE u.k = t.k ORDER BY c LIMIT 1) FROM t",
     "may return more than one row.*ORDER BY that may tie"),
    ("SELECT id, (SELECT id FROM u ORDER BY id LIMIT 2) FROM t", "may return more than one row"),
    ("SELECT id, (SELECT COUNT(*) FROM w WHERE w.name = t.x) FROM t",
     "may return more than one row.*converts a side"),
    ("SELECT id, (SELECT id FROM w WHERE w.name = t.x ORDER BY id LIMIT 1) FROM t",
     "may return more than one row.*converts a side"),
    ("SELECT id, (SELECT COUNT(*) FROM u GROUP BY k) FROM t",
     "may return more than one row.*GROUP BY on a column"),
    ("SELECT id, (SELECT c FROM u WHERE u.id = t.g ORDER BY c LIMIT 1 OFFSET 1) FROM t",
     "scalar subquery with OFFSET"),
    ("SELECT id, (SELECT MAX(c) + t.x FROM u WHERE u.k = t.k) FROM t",
     "outer column in a scalar subquery's select list"),
    ("SELECT id, (SELECT COUNT(*) FROM u HAVING COUNT(*) > 1) FROM t", "HAVING and no GROUP BY"),
    ("SELECT id, (SELECT c FROM u WHERE id = 1 UNION SELECT k FROM w WHERE id = 1) FROM t",
     "scalar subquery with UNION"),
    ("SELECT COUNT(*) FROM t GROUP BY (SELECT MAX(c) FROM u WHERE u.k = t.g)",
     "scalar subquery other than in WHERE, the select list, HAVING or ORDER BY"),
    ("SELECT SUM((SELECT MAX(c) FROM u WHERE u.k = t.g)) FROM t",
     "scalar subquery other than in WHERE, the select list, HAVING or ORDER BY"),
    ("SELECT t.id FROM t JOIN w ON w.k = (SELECT MAX(c) FROM u)",
     "scalar subquery other than in WHERE, the select list, HAVING or ORDER BY"),
    ("SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = (SELECT MAX(w.k) FROM w "
     "WHERE w.id = t.g)) FROM t", "subquery correlated with a query further out"),
    ("SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.k ORDER BY c) FROM t",
     "ORDER BY in a correlated scalar subquery with an aggregate"),
])
def test_refused_forms_name_the_construct(sql: str, construct: str) -> None:
    with Pair() as pair:
        SUITE.create_tables(pair)
        with pytest.raises(UnsupportedSqlError, match=construct):
            pair.db.query(sql)
        with pytest.raises(UnsupportedSqlError, match=construct):
            pair.db.execute(f"CREATE VIEW refused AS {sql}")


def test_in_an_aggregated_query_the_correlation_reads_group_columns() -> None:
    """A scalar subquery over an aggregated query's groups correlates with a grouped
    column (MySQL's 1055 for another); one in an aggregate without GROUP BY keyed by a
    parameter (a row for every value) is refused by name."""
    with Pair() as pair:
        SUITE.create_tables(pair)
        with pytest.raises(rivulet.SqlError, match="neither in GROUP BY") as caught:
            pair.db.query("SELECT g, (SELECT COUNT(*) FROM u WHERE u.k = t.x) FROM t GROUP BY g")
        assert error_code(caught.value).mysql == 1055
        with pytest.raises(UnsupportedSqlError, match="aggregate without GROUP BY keyed by"):
            pair.db.execute("CREATE VIEW p AS SELECT COUNT(*), (SELECT MAX(c) FROM u) FROM t "
                            "WHERE k = ?")


def test_a_parameter_inside_a_scalar_subquery_is_refused() -> None:
    with Pair() as pair:
        SUITE.create_tables(pair)
        with pytest.raises(rivulet.SqlError, match="cannot take \\? parameters"):
            pair.db.execute("CREATE VIEW p AS SELECT id, (SELECT COUNT(*) FROM u "
                            "WHERE u.k = t.k AND u.c = ?) FROM t")
