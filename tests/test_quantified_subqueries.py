"""Quantified comparisons with a subquery (rivulet/plan/quantified.py): ``x op ANY`` /
``SOME`` / ``ALL (SELECT ...)`` for each comparison, and ``x [NOT] IN (SELECT ...)`` as a
value, against MariaDB: in the select list, in ``CASE``, compared with something, under
``NOT`` and ``OR`` in WHERE (where NULL drops a row as FALSE does, but ``NOT (NULL)`` is
NULL too), in HAVING and ORDER BY, correlated and not, with NULLs on both sides and with
empty subqueries. Each query is a view kept up to date as rows come and go on both sides
(fixed rounds of writes and generated ones), and is read ad hoc; what MySQL would answer
otherwise than rivulet can is refused by name."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mysql_oracle import MariaDBOracle, MySQLPair

import rivulet
from oracle import ViewSet, apply_outer_inner_write
from rivulet.errors import UnsupportedSqlError

SCHEMA = ["CREATE TABLE t (id INT PRIMARY KEY, k INT, x INT, d DECIMAL(6,2), ts DATETIME)",
          "CREATE TABLE u (id INT PRIMARY KEY, k INT, c INT, e DECIMAL(6,1), s VARCHAR(8), "
          "dd DATE)"]

OPERATORS = ["=", "<>", "<", "<=", ">", ">="]

#: Each comparison with each quantifier, correlated and not, in the select list.
EVERY_FORM = [
    f"SELECT id, x {op} {quantifier} (SELECT c FROM u{where}) AS v FROM t"
    for op in OPERATORS for quantifier in ("ANY", "ALL")
    for where in (" WHERE u.k = t.k", "")
]

QUERIES = [
    *EVERY_FORM,
    "SELECT id, x = SOME (SELECT c FROM u WHERE u.k = t.k AND u.c > 0) AS v FROM t",
    # IN and NOT IN as values: the select list, CASE, compared with something
    "SELECT id, x IN (SELECT c FROM u WHERE u.k = t.k) AS i, "
    "x NOT IN (SELECT c FROM u WHERE u.k = t.k) AS n FROM t",
    "SELECT id, x IN (SELECT c FROM u) AS i, x NOT IN (SELECT c FROM u) AS n FROM t",
    "SELECT id, CASE WHEN x IN (SELECT c FROM u WHERE u.k = t.k) THEN 'in' "
    "WHEN x NOT IN (SELECT c FROM u WHERE u.k = t.k) THEN 'out' ELSE 'unknown' END AS w FROM t",
    "SELECT id, (x IN (SELECT c FROM u WHERE u.k = t.k)) = 0 AS f, "
    "(x + 1 IN (SELECT c FROM u)) IS NULL AS u FROM t",
    "SELECT id, COALESCE(x > ALL (SELECT c FROM u WHERE u.k = t.k), -1) AS v FROM t",
    # WHERE: a term (the ordered forms), under NOT (NULL stays NULL), under OR
    "SELECT id FROM t WHERE x > ALL (SELECT c FROM u WHERE u.k = t.k)",
    "SELECT id FROM t WHERE NOT (x > ALL (SELECT c FROM u WHERE u.k = t.k))",
    "SELECT id FROM t WHERE x <= ANY (SELECT c FROM u)",
    "SELECT id FROM t WHERE NOT (x <= ANY (SELECT c FROM u))",
    "SELECT id FROM t WHERE x < ALL (SELECT c FROM u WHERE u.k = t.k) OR k = 2",
    "SELECT id FROM t WHERE NOT (x = ANY (SELECT c FROM u WHERE u.k = t.k))",
    "SELECT id FROM t WHERE x = ANY (SELECT c FROM u WHERE u.k = t.k)",
    "SELECT id FROM t WHERE x <> ALL (SELECT c FROM u WHERE u.k = t.k)",
    "SELECT id FROM t WHERE NOT (x <> ALL (SELECT c FROM u))",
    "SELECT id FROM t WHERE x <> ANY (SELECT c FROM u WHERE u.k = t.k)",
    "SELECT id FROM t WHERE NOT (x = ALL (SELECT c FROM u WHERE u.k = t.k))",
    "SELECT id FROM t WHERE x IN (SELECT c FROM u WHERE u.k = t.k) OR x IS NULL",
    "SELECT id FROM t WHERE NOT (x IN (SELECT c FROM u WHERE u.k = t.k) OR k = 1)",
    "SELECT id FROM t WHERE NOT (x IN (SELECT c FROM u) AND k = 1)",
    "SELECT id FROM t WHERE x = ANY (SELECT c FROM u)",
    # correlated other than by an equality: through the domain of the outer columns
    "SELECT id, x > ALL (SELECT c FROM u WHERE u.k > t.k) AS a FROM t",
    "SELECT id FROM t WHERE x IN (SELECT c FROM u WHERE u.k < t.k) OR k = 1",
    # other kinds: DECIMALs of other places, an INT with a DECIMAL, text with text
    "SELECT id, d >= ALL (SELECT e FROM u WHERE u.k = t.k) AS a, "
    "d < ANY (SELECT e FROM u) AS b, d = ANY (SELECT e FROM u) AS c FROM t",
    "SELECT id, x > ANY (SELECT e FROM u WHERE u.k = t.k) AS a FROM t",
    # text compared with numbers as DOUBLEs, which order the numbers as they are
    # an INT key against text, compared as DOUBLEs ('a' is 0)
    "SELECT id, x IN (SELECT s FROM u) AS a, x <> ALL (SELECT s FROM u WHERE u.k = t.k) AS b, "
    "x <> ANY (SELECT s FROM u WHERE u.k = t.k) AS c FROM t",
    # dates: a DATETIME against DATEs, compared as DATETIMEs
    "SELECT id, ts > ALL (SELECT dd FROM u WHERE u.k = t.k) AS a, "
    "ts <= ANY (SELECT dd FROM u) AS b, ts = ANY (SELECT dd FROM u) AS c FROM t",
    "SELECT id, NULL IN (SELECT c FROM u WHERE u.k = t.k) AS a, "
    "NULL <> ALL (SELECT c FROM u WHERE u.k = t.k) AS b FROM t",
    # uncorrelated subqueries of groups and aggregates: their rows as written
    "SELECT id FROM t WHERE id IN (SELECT MAX(id) FROM t GROUP BY k)",
    "SELECT id FROM t WHERE x NOT IN (SELECT k FROM u GROUP BY k)",
    "SELECT id, x IN (SELECT MAX(c) FROM u GROUP BY k) AS a, "
    "x > ALL (SELECT COUNT(*) FROM u GROUP BY k) AS b, "
    "x >= ANY (SELECT MIN(c) FROM u GROUP BY k HAVING COUNT(*) > 1) AS c FROM t",
    "SELECT id, x = ANY (SELECT MAX(c) FROM u) AS a, "
    "x NOT IN (SELECT MAX(c) FROM u WHERE c > 100) AS b, "
    "x < ALL (SELECT SUM(c) AS s FROM u GROUP BY k HAVING s > 1) AS c FROM t",
    "SELECT id FROM t WHERE x <> ALL (SELECT COUNT(c) FROM u GROUP BY k) OR k = 3",
    # without FROM, in a derived table, in a UNION's branch
    "SELECT 2 > ALL (SELECT c FROM u) AS a, 1 IN (SELECT c FROM u) AS b",
    "SELECT id FROM (SELECT id, x IN (SELECT c FROM u WHERE u.k = t.k) AS i FROM t) d "
    "WHERE i = 0 OR i IS NULL",
    "SELECT id, x < ANY (SELECT c FROM u) AS a FROM t WHERE k = 1 "
    "UNION ALL SELECT id, x <> ALL (SELECT c FROM u WHERE u.k = t.k) FROM t WHERE k <> 1",
    # ORDER BY of an aggregated query
    "SELECT k, COUNT(*) AS n FROM t GROUP BY k ORDER BY k IN (SELECT c FROM u), k",
    "SELECT id, CONCAT(x, '.5') >= ALL (SELECT c FROM u WHERE u.k = t.k) AS a, "
    "CONCAT(x, '') < ANY (SELECT e FROM u) AS b FROM t",
    "SELECT id, 'b' > ALL (SELECT s FROM u WHERE u.k = t.k) AS a, "
    "'b' IN (SELECT s FROM u WHERE u.k = t.k) AS b FROM t",
    # a constant, and NULL, compared
    "SELECT id, 2 >= ALL (SELECT c FROM u WHERE u.k = t.k) AS a, "
    "NULL > ANY (SELECT c FROM u WHERE u.k = t.k) AS b FROM t",
    # the compared value a scalar subquery's, or another quantified comparison's
    "SELECT id, (SELECT MAX(c) FROM u) + 0 > ALL (SELECT c FROM u WHERE u.k = t.k) AS a, "
    "(SELECT MAX(c) FROM u) - 1 IN (SELECT c FROM u WHERE u.k = t.k) AS b FROM t",
    "SELECT id, (x > ANY (SELECT c FROM u)) IN (SELECT c FROM u WHERE u.k = t.k) AS a FROM t",
    # over the groups of an aggregated query, in HAVING, in ORDER BY
    "SELECT k, SUM(x) AS s, k + 1 > ALL (SELECT c FROM u WHERE u.k = t.k) AS a "
    "FROM t GROUP BY k",
    "SELECT k, COUNT(*) AS n FROM t GROUP BY k HAVING k IN (SELECT c FROM u) OR k IS NULL",
    "SELECT k, MIN(x) AS m FROM t GROUP BY k HAVING NOT (k < ANY (SELECT c FROM u)) "
    "AND m IS NOT NULL",
    "SELECT id, x FROM t ORDER BY x >= ALL (SELECT c FROM u WHERE u.k = t.k), id",
]

_ids = itertools.count(100)
VALUES = st.one_of(st.none(), st.integers(0, 3))


#: The tables and every query as a view (``q0``, ``q1``, ...), checked all at once.
SUITE = ViewSet(SCHEMA, {f"q{i}": sql for i, sql in enumerate(QUERIES)})


def _seed(pair: MySQLPair) -> None:
    SUITE.create_tables(pair)
    _seed_rows(pair)


def _seed_rows(pair: MySQLPair) -> None:
    pair.insert_many("t", [(11, 1, 0, "0.50", "2024-01-02 00:00:00"),
                           (12, 1, 1, "1.00", "2024-01-01 12:00:00"), (3, 1, None, None, None),
                           (4, 2, 2, "2.25", "2024-01-03 00:00:00"),
                           (5, 3, 3, "3.00", "2024-01-01 00:00:00"),
                           (6, 4, 1, "1.10", None), (7, None, 2, "0.00", "2024-01-05 00:00:00"),
                           (8, 2, 0, "-1.00", "2024-01-02 00:00:00")])
    pair.insert_many("u", [(1, 1, 1, "1.0", "a", "2024-01-01"), (2, 1, None, None, None, None),
                           (3, 2, 1, "1.5", "b", "2024-01-02"), (4, 2, 2, "2.2", "c", "2024-01-03"),
                           (5, 3, None, None, "b", None), (6, None, 3, "3.0", "z", "2024-01-04")])


def _apply(pair: MySQLPair, write: tuple[str, Any, Any, Any]) -> None:
    op, a, b, c = write
    if op == "insert_t":
        pair.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)",
                     (next(_ids), a, b, b, None if b is None else f"2024-01-0{b + 1} 12:00:00"))
    elif op == "insert_u":
        pair.execute("INSERT INTO u VALUES (?, ?, ?, ?, ?, ?)",
                     (next(_ids), a, b, None if b is None else b + 0.5,
                      None if c is None else "abcd"[c],
                      None if c is None else f"2024-01-0{c + 1}"))
    elif not apply_outer_inner_write(pair, write):
        SUITE.check_all(pair)


_write = st.one_of(
    st.tuples(st.just("insert_t"), VALUES, VALUES, st.none()),
    st.tuples(st.just("insert_u"), VALUES, VALUES, VALUES),
    st.tuples(st.just("update_t"), VALUES, VALUES, st.integers(0, 3)),
    st.tuples(st.just("update_u"), VALUES, VALUES, st.integers(0, 3)),
    st.tuples(st.just("delete_t"), st.integers(0, 3), st.none(), st.none()),
    st.tuples(st.just("delete_u"), st.integers(0, 3), st.none(), st.none()),
    st.tuples(st.just("check"), st.none(), st.none(), st.none()),
)


def test_views_made_before_the_rows(mysql_pair: MySQLPair) -> None:
    """Every form as a view over empty tables (every subquery empty: ANY false, ALL true,
    whatever x is), then kept up to date as the seed's rows arrive."""
    SUITE.program(mysql_pair)
    mysql_pair.execute("INSERT INTO t VALUES (1, 1, 1, 1, '2024-01-01'), (2, 2, NULL, NULL, NULL)")
    SUITE.check_all(mysql_pair, adhoc=True)
    _seed_rows(mysql_pair)
    SUITE.check_all(mysql_pair, adhoc=True)


def test_fixed_writes(mysql_pair: MySQLPair) -> None:
    """The seed, then writes that empty a group, bring a NULL into a subquery and take
    it out, and move compared values, each checked: views and ad hoc reads."""
    _seed(mysql_pair)
    SUITE.create_views(mysql_pair)
    SUITE.check_all(mysql_pair, adhoc=True)
    for write in [("delete_u", 1, None, None), ("insert_u", 1, None, 0),
                  ("update_t", None, 2, 3), ("insert_u", 2, 3, 1), ("update_u", 2, None, 3),
                  ("delete_u", 2, None, None), ("insert_t", None, None, None),
                  ("update_u", None, 1, 0), ("delete_t", 1, None, None)]:
        _apply(mysql_pair, write)
        SUITE.check_all(mysql_pair)
    SUITE.check_all(mysql_pair, adhoc=True)


@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(writes=st.lists(_write, max_size=10))
def test_generated_writes_match_mysql(mariadb_oracle: MariaDBOracle,
                                      writes: list[tuple[str, Any, Any, Any]]) -> None:
    """Generated INSERT / UPDATE / DELETE on the outer and the inner table; the views,
    kept up to date incrementally, answer what MariaDB answers at each ``check``."""
    with MySQLPair(mariadb_oracle) as pair:
        _seed(pair)
        SUITE.create_views(pair)
        for write in writes:
            _apply(pair, write)
        SUITE.check_all(pair)


def test_a_keyed_view_with_a_quantified_value_is_partial(tmp_path: Any) -> None:
    """A view keyed by a parameter holds the keys read; the quantified value's aggregates
    are reached through the left joins, and change with the subquery's rows."""
    with rivulet.open(tmp_path / "db") as db:
        for sql in SCHEMA:
            db.execute(sql)
        db.table("t").insert_many([(1, 1, 2, None, None), (2, 2, 2, None, None),
                                   (3, 3, None, None, None)])
        db.table("u").insert_many([(1, 1, 1, None, None, None), (2, 2, 3, None, None, None)])
        db.execute("CREATE VIEW above AS SELECT id, x > ALL (SELECT c FROM u WHERE "
                   "u.k = t.k) AS a, x IN (SELECT c FROM u WHERE u.k = t.k) AS i "
                   "FROM t WHERE id = ?")
        view = db.view("above")
        assert [view.lookup(i) for i in (1, 2, 3)] == [[(1, 1, 0)], [(2, 0, 0)], [(3, 1, 0)]]
        db.execute("INSERT INTO u VALUES (3, 1, NULL, NULL, NULL, NULL), "
                   "(4, 2, 2, NULL, NULL, NULL)")
        db.execute("INSERT INTO u VALUES (5, 3, 0, NULL, NULL, NULL)")
        db.settle()
        assert [view.lookup(i) for i in (1, 2, 3)] == [[(1, None, None)], [(2, 0, 1)],
                                                       [(3, None, None)]]
        assert db.built_view("above").state.partial


@pytest.mark.parametrize("sql, construct", [
    # correlated other than by an equality where a NULL outer value could pass: the
    # domain's join back by = never meets a NULL
    ("SELECT id, x > ALL (SELECT c FROM u WHERE u.k > t.k OR u.c = 1) FROM t",
     "> ALL subquery correlated other than by an equality, on a nullable outer column"),
    ("SELECT id FROM t WHERE x IN (SELECT c FROM u WHERE u.k <=> t.k + 1) OR k = 1",
     "IN subquery correlated other than by an equality, on a nullable outer column"),
    # MIN and MAX of text do not order it as a comparison with a number does
    ("SELECT id, x > ALL (SELECT s FROM u) FROM t", "MIN and MAX"),
    ("SELECT id FROM t WHERE d <= ANY (SELECT s FROM u WHERE u.k = t.k)", "MIN and MAX"),
    # where MariaDB answers otherwise than for the compared value
    ("SELECT id, (SELECT MAX(c) FROM u) IN (SELECT c FROM u WHERE u.k = t.k) FROM t",
     "subquery compared by IN with a subquery"),
    ("SELECT k FROM t GROUP BY k HAVING MAX(x) > ALL (SELECT c FROM u)",
     "aggregate compared by > ALL with a subquery"),
    # what the decorrelation of IN refuses, refused for each quantifier
    ("SELECT id, x = ANY (SELECT MAX(c) FROM u WHERE u.k = t.k) FROM t",
     "= ANY subquery with an aggregate"),
    ("SELECT id, x < ALL (SELECT c FROM u WHERE u.k = t.k GROUP BY c) FROM t",
     "< ALL subquery with GROUP BY"),
    ("SELECT id, x IN (SELECT c FROM u GROUP BY c HAVING c > t.k) FROM t",
     "outer column in the HAVING of an IN subquery"),
    ("SELECT id, x > ANY (SELECT c FROM u LIMIT 2) FROM t", "> ANY subquery with LIMIT"),
    ("SELECT id, x >= ANY (SELECT c FROM u UNION SELECT 1) FROM t",
     ">= ANY subquery with UNION"),
    ("SELECT id, x <> ALL (SELECT t.k FROM u) FROM t",
     "outer column in the column an <> ALL subquery selects"),
    ("SELECT id, x <=> ANY (SELECT c FROM u) FROM t", "<=> ANY/ALL"),
    ("SELECT id, (x, k) = ANY (SELECT c, k FROM u) FROM t", "row constructor"),
    # not joined to a row: ON, GROUP BY, an aggregate's argument
    ("SELECT t.id FROM t JOIN u ON u.k = t.k AND t.x > ALL (SELECT c FROM u)", "ALL subquery"),
    ("SELECT COUNT(x IN (SELECT c FROM u)) FROM t",
     "IN with a subquery in ON, GROUP BY, an aggregate's argument or a write"),
])
def test_refused_forms_name_the_construct(tmp_path: Any, sql: str, construct: str) -> None:
    with rivulet.open(tmp_path / "db") as db:
        for statement in SCHEMA:
            db.execute(statement)
        with pytest.raises(UnsupportedSqlError, match=re.escape(construct)):
            db.query(sql)
        with pytest.raises(UnsupportedSqlError, match=re.escape(construct)):
            db.execute(f"CREATE VIEW refused AS {sql}")


def test_a_write_with_a_quantified_comparison_is_refused(tmp_path: Any) -> None:
    with rivulet.open(tmp_path / "db") as db:
        for statement in SCHEMA:
            db.execute(statement)
        with pytest.raises(UnsupportedSqlError, match="ANY subquery other than after"):
            db.execute("DELETE FROM t WHERE x > ANY (SELECT c FROM u)")
        with pytest.raises(UnsupportedSqlError, match="ALL subquery other than after"):
            db.execute("UPDATE t SET k = 1 WHERE x <> ALL (SELECT c FROM u)")


QUOTIENTS = [
    "SELECT id FROM b WHERE f IN (SELECT c / 3 FROM a)",
    "SELECT id, f IN (SELECT c / 3 FROM a) AS i, f > ALL (SELECT c / 3 FROM a WHERE c = 1) AS g, "
    "f >= ALL (SELECT c / 3 FROM a WHERE c = 1) AS ge, d = ANY (SELECT c / 3 FROM a) AS e FROM b",
    "SELECT id, s IN (SELECT c / 3 FROM a) AS i FROM b",
    "SELECT id, '0.3333' IN (SELECT c / 3 FROM a) AS i, "
    "'0.333333333' IN (SELECT c / 3 FROM a) AS j FROM b",
    "SELECT b.id, q.id FROM b JOIN (SELECT id, c / 3 AS v FROM a) q ON b.f = q.v",
    "SELECT b.id, q.id FROM b JOIN (SELECT id, c / 3 AS v FROM a) q ON b.d = q.v",
]


def test_quotients_compare_unrounded_as_doubles(mysql_pair: MySQLPair) -> None:
    """A quotient (a DECIMAL carrying more places than it shows) compared as a DOUBLE is
    its unrounded value (1/3 = 0.333333333e0, not 0.3333e0), as a DECIMAL or against a
    text constant its shown one: as IN's, a quantified comparison's and a join's keys."""
    for sql in ["CREATE TABLE a (id INT PRIMARY KEY, c INT)",
                "CREATE TABLE b (id INT PRIMARY KEY, d DECIMAL(8,4), f DOUBLE, s VARCHAR(20))"]:
        mysql_pair.execute(sql)
    mysql_pair.insert_many("a", [(1, 1), (2, 0), (3, None), (4, 2)])
    mysql_pair.insert_many("b", [(1, "0.3333", 0.3333, "0.3333"),
                                 (2, "0.6667", 0.666666667, "0.666666667"),
                                 (3, "0.3334", 0.333333333, "0.333333333")])
    for sql in QUOTIENTS:
        mysql_pair.check_query(sql)


KEYED = [
    "SELECT id FROM t WHERE k = ? AND id IN (SELECT MAX(id) FROM t GROUP BY k)",
    "SELECT id, x > ALL (SELECT c FROM u WHERE u.k = t.k) AS a, "
    "x NOT IN (SELECT COUNT(*) FROM u GROUP BY k) AS b FROM t WHERE k = ?",
]


def test_keyed_views_answer_mysqls_as_rows_change(mysql_pair: MySQLPair) -> None:
    """Views keyed by a parameter (partial state, filled through the joins) read for
    each key, present and missing, after writes on both sides."""
    _seed(mysql_pair)
    for i, sql in enumerate(KEYED):
        mysql_pair.create_view(f"keyed{i}", sql)
    for write in [None, ("insert_t", 2, 3, None), ("delete_u", 1, None, None),
                  ("insert_u", 4, None, 1), ("update_t", 1, 4, 0)]:
        if write is not None:
            _apply(mysql_pair, write)
        for i in range(len(KEYED)):
            for key in (None, 1, 2, 3, 4, 9):
                mysql_pair.check_view(f"keyed{i}", key)
