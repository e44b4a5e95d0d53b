"""Joins written without an equality key of their own (rivulet/plan/joins.py): comma joins
keyed by the WHERE's equalities, CROSS JOIN and JOIN without ON, ON conditions with no
equality between the two sides (a join on the empty key plus a condition), and equalities
between expressions (``lower(a.s) = lower(b.s)``: keys computed on each side).

Plans are checked for the key each join got; answers against SQLite through random
inserts, updates, deletes and evictions (views with ``?`` parameters keyed on either side,
read whole, aggregated; ad-hoc queries), incremental answers equal to recomputation; MySQL's
precedence (a comma binds less tightly than JOIN) and its errors against MariaDB.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from oracle import Pair, operation_lists, run_operations
from rivulet.errors import UnknownColumnError, error_code
from rivulet.plan import ir
from rivulet.plan.optimize import optimize

SCHEMA = [
    "CREATE TABLE a (id INT PRIMARY KEY, k INT, v INT, s VARCHAR(10))",
    "CREATE TABLE b (id INT PRIMARY KEY, k INT, v INT, s VARCHAR(10))",
    "CREATE TABLE c (id INT PRIMARY KEY, k INT, v INT)",
]

VIEWS: dict[str, str] = {
    # the WHERE's equality is the join's key; keyed by the left side
    "comma": "SELECT a.id, b.id AS bid, b.v FROM a, b WHERE a.k = b.k AND a.id = ?",
    # every pair, keyed by a column of the right side
    "cross_right": "SELECT a.id, b.id AS bid FROM a CROSS JOIN b WHERE b.id = ?",
    # every pair, read whole
    "cross_whole": "SELECT a.id, b.id AS bid, a.v + b.v AS total FROM a JOIN b",
    # no equality in ON: the empty key and a condition
    "theta": "SELECT a.id, b.id AS bid FROM a JOIN b ON a.v < b.v WHERE a.k = ?",
    "left_theta": "SELECT a.id, b.id AS bid FROM a LEFT JOIN b ON a.v < b.v AND b.k <> 1 "
                  "WHERE a.k = ?",
    # keys computed on each side
    "lowered": "SELECT a.id, b.id AS bid FROM a JOIN b ON lower(a.s) = lower(b.s) WHERE a.k = ?",
    "left_lowered": "SELECT a.id, b.id AS bid FROM a LEFT JOIN b ON lower(a.s) = lower(b.s) "
                    "WHERE a.k = ?",
    # three tables, each comma keyed by the WHERE
    "three": "SELECT a.id, b.id AS bid, c.id AS cid FROM a, b, c "
             "WHERE a.k = b.k AND c.v = b.v AND a.id = ?",
    # a and b meet only through c: keyed on the equality the two imply
    "implied": "SELECT a.id, b.id AS bid, c.id AS cid FROM a, b, c "
               "WHERE a.k = c.k AND b.k = c.k AND a.id = ?",
    # a comma before a LEFT JOIN, whose ON sees only b and c
    "precedence": "SELECT a.id, b.id AS bid, c.id AS cid FROM a, b LEFT JOIN c ON c.k = b.k "
                  "WHERE a.v = b.v AND a.k = ?",
    # an aggregate over a cross join with a condition
    "counted": "SELECT a.k, COUNT(*) AS n, SUM(b.v) AS total FROM a, b WHERE a.v <= b.v "
               "AND a.k = ? GROUP BY a.k",
}

QUERIES = [
    "SELECT a.id, b.id FROM a, b WHERE a.k = b.k",
    "SELECT a.id, b.id FROM a CROSS JOIN b WHERE a.v > b.v",
    "SELECT a.id, c.id FROM a JOIN c",
    "SELECT a.k, COUNT(*) FROM a, c GROUP BY a.k",
    "SELECT DISTINCT a.k, b.k FROM a, b",
    "SELECT a.id, b.id, c.id FROM (a, b) JOIN c ON c.k = a.k WHERE b.v = c.v",
    "SELECT a.id, b.id FROM a JOIN b ON upper(a.s) = upper(b.s) AND a.v + 1 = b.v + 1",
]


def _plan(db: rivulet.Database, sql: str) -> ir.ViewPlan:
    db.execute(f"CREATE VIEW probe AS {sql}")
    try:
        plan = db.catalog.view("probe")
        assert plan is not None
        return optimize(plan)
    finally:
        db.execute("DROP VIEW probe")


def _joins(plan: ir.ViewPlan) -> list[ir.Join]:
    return [n for n in ir.walk(plan.root) if isinstance(n, ir.Join)]


@pytest.fixture
def db(tmp_path: Path) -> Any:
    with rivulet.open(tmp_path) as db:
        for ddl in SCHEMA:
            db.execute(ddl)
        yield db


# --------------------------------------------------------------------------- plans


def test_a_comma_join_is_keyed_by_the_where_equality(db: Any) -> None:
    plan = _plan(db, "SELECT a.id, b.id AS bid FROM a, b WHERE a.k = b.k AND a.v > b.v")
    join, = _joins(plan)
    assert len(join.left_keys) == 1 and join.kind == "inner"
    conditions = [n.predicate for n in ir.walk(plan.root) if isinstance(n, ir.Filter)]
    assert len(conditions) == 1 and conditions[0].fn == "gt"  # (the other stays a condition)


def test_an_equality_implied_through_a_third_table_keys_the_join(db: Any) -> None:
    plan = _plan(db, "SELECT a.id FROM a, b, c WHERE a.k = c.k AND b.k = c.k")
    joins = _joins(plan)
    assert len(joins) == 2 and all(j.left_keys for j in joins)
    # (not through a conversion: text = number compares as DOUBLEs, not transitively)
    plan = _plan(db, "SELECT a.id FROM a, b, c WHERE a.s = c.k AND b.s = c.k")
    assert any(not j.left_keys for j in _joins(plan))


def test_cross_join_and_join_without_on_are_joins_on_no_key(db: Any) -> None:
    for sql in ("SELECT a.id, b.id FROM a CROSS JOIN b", "SELECT a.id, b.id FROM a JOIN b",
                "SELECT a.id, b.id FROM a INNER JOIN b", "SELECT a.id, b.id FROM a, b",
                "SELECT a.id, b.id FROM a JOIN b ON a.v < b.v"):
        join, = _joins(_plan(db, sql))
        assert join.left_keys == join.right_keys == ()


def test_an_equality_of_expressions_keys_the_join_on_computed_columns(db: Any) -> None:
    plan = _plan(db, "SELECT a.id, b.id AS bid FROM a JOIN b ON lower(a.s) = lower(b.s)")
    join, = _joins(plan)
    assert len(join.left_keys) == 1
    for side, key in ((join.left, join.left_keys[0]), (join.right, join.right_keys[0])):
        assert isinstance(side, ir.Project)
        assert isinstance(side.exprs[key], ir.Call) and side.exprs[key].fn == "LOWER"


def test_an_equality_of_expressions_of_other_kinds_stays_a_condition(db: Any) -> None:
    # text with a number compares as DOUBLEs: no key, a condition over each pair
    plan = _plan(db, "SELECT a.id FROM a JOIN b ON CONCAT(a.s) = b.v + 0")
    join, = _joins(plan)
    assert join.left_keys == ()
    assert any(isinstance(n, ir.Filter) for n in ir.walk(plan.root))


def test_the_where_keys_only_joins_without_an_equality_of_their_own(db: Any) -> None:
    plan = _plan(db, "SELECT a.id FROM a JOIN b ON a.id = b.id WHERE a.k = b.k")
    join, = _joins(plan)
    assert len(join.left_keys) == 1  # (as ever: ON's key, the WHERE a condition)


def test_a_comma_binds_less_tightly_than_join(db: Any) -> None:
    with pytest.raises(UnknownColumnError, match="a.x|a.k"):
        db.query("SELECT * FROM a, b JOIN c ON c.k = a.k")
    with pytest.raises(UnknownColumnError):  # (a table after the join is not seen either)
        db.query("SELECT * FROM a JOIN b ON b.k = c.k JOIN c ON c.id = a.id")
    assert db.query("SELECT * FROM a JOIN b JOIN c ON c.k = a.k") == []
    assert db.query("SELECT * FROM (a, b) JOIN c ON c.k = a.k") == []


def test_a_keyed_view_over_a_cross_join_is_partial_on_its_key(db: Any) -> None:
    db.table("a").insert_many([(i, i % 3, i, "x") for i in range(1, 30)])
    db.table("b").insert_many([(i, i % 3, i, "y") for i in range(1, 5)])
    db.execute("CREATE VIEW v AS SELECT a.id, b.id AS bid FROM a CROSS JOIN b WHERE a.id = ?")
    assert sorted(db.view("v").lookup(7)) == [(7, 1), (7, 2), (7, 3), (7, 4)]
    reader = db.view("v")
    assert reader.partial
    db.table("b").insert_many([(9, 0, 9, "z")])
    db.settle()
    assert sorted(reader.lookup(7)) == [(7, 1), (7, 2), (7, 3), (7, 4), (7, 9)]


def test_multi_table_writes_over_a_cross_join_are_still_refused(db: Any) -> None:
    with pytest.raises(rivulet.UnsupportedSqlError, match="cross join"):
        db.execute("UPDATE a, b SET a.v = 1")


# --------------------------------------------------------------------------- answers


def _open_pair() -> Pair:
    return Pair.of(SCHEMA, VIEWS)


_ids = st.integers(1, 6)
_keys = st.one_of(st.none(), st.integers(0, 2))
_values = st.one_of(st.none(), st.integers(0, 4))
_texts = st.one_of(st.none(), st.sampled_from(["a", "A", "b", "B ", "c"]))
_operations = operation_lists(
    st.tuples(st.sampled_from(["a", "b"]), _ids, _keys, _values, _texts),
    st.tuples(st.just("c"), _ids, _keys, _values),
    st.tuples(st.just("update"), st.sampled_from(["a", "b", "c"]), _ids, _values),
    st.tuples(st.just("delete"), st.sampled_from(["a", "b", "c"]), _ids),
    max_size=25,
)


def _check_all(pair: Pair) -> None:
    pair.settle()
    for key in (0, 1, 2):
        for name in ("theta", "left_theta", "lowered", "left_lowered", "precedence", "counted"):
            pair.check_view(name, [key])
    for i in range(1, 7):
        for name in ("comma", "cross_right", "three", "implied"):
            pair.check_view(name, [i])
    pair.check_view("cross_whole")
    for sql in QUERIES:
        pair.check_query(sql)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=_operations)
def test_views_and_queries_over_cross_joins_match_sqlite(operations: list[tuple]) -> None:
    run_operations(_open_pair(), operations, _apply, _check_all)


def _apply(pair: Pair, op: tuple) -> None:
    kind = op[0]
    if kind in ("a", "b", "c"):
        pair.execute(f"DELETE FROM {kind} WHERE id = ?", [op[1]])
        marks = ", ".join("?" * (len(op) - 1))
        pair.execute(f"INSERT INTO {kind} VALUES ({marks})", op[1:])
    elif kind == "update":
        pair.execute(f"UPDATE {op[1]} SET v = ? WHERE id = ?", [op[3], op[2]])
    else:  # "delete"
        pair.execute(f"DELETE FROM {op[1]} WHERE id = ?", [op[2]])


# --------------------------------------------------------------------------- MySQL


MYSQL_SCHEMA = [
    "CREATE TABLE a (id INT PRIMARY KEY, k INT, s VARCHAR(10))",
    "CREATE TABLE b (id INT PRIMARY KEY, n INT, s VARCHAR(10))",
    "CREATE TABLE c (id INT PRIMARY KEY, k INT)",
]


def _mysql_pair(pair: Any) -> Any:
    for ddl in MYSQL_SCHEMA:
        pair.execute(ddl)
    pair.execute("INSERT INTO a VALUES (1, 1, '1'), (2, 2, ' 2'), (3, 3, '3abc'), "
                 "(4, NULL, 'x'), (5, 1, 'A')")
    pair.execute("INSERT INTO b VALUES (1, 1, 'a'), (2, 2, 'B'), (3, 3, NULL), (4, 0, 'x')")
    pair.execute("INSERT INTO c VALUES (1, 1), (2, 3)")
    return pair


@pytest.mark.parametrize("sql", [
    "SELECT * FROM a, b JOIN c ON c.k = a.k",
    "SELECT * FROM a JOIN b ON b.n = c.k JOIN c ON c.id = a.id",
    "SELECT * FROM a, b LEFT JOIN c ON c.k = a.k",
    "SELECT * FROM a LEFT JOIN b",
])
def test_errors_are_mysqls(mysql_pair: Any, sql: str) -> None:
    pair = _mysql_pair(mysql_pair)
    expected = pair.mariadb_error(sql)
    assert expected is not None
    with pytest.raises(rivulet.RivuletError) as caught:
        pair.db.query(sql)
    assert error_code(caught.value).mysql == expected, caught.value


@pytest.mark.parametrize("sql", [
    # text with a number compares as DOUBLEs ('3abc' = 3, ' 2' = 2), in a key and out of one
    "SELECT a.id, b.id FROM a, b WHERE a.s = b.n",
    "SELECT a.id, b.id FROM a CROSS JOIN b WHERE a.s = b.n + 0",
    "SELECT a.id, b.id FROM a JOIN b ON CONCAT(a.s, '') = b.n",
    # binary collation: 'A' <> 'a' but lower() makes them equal
    "SELECT a.id, b.id FROM a JOIN b ON lower(a.s) = lower(b.s)",
    "SELECT a.id, b.id FROM a JOIN b ON a.s = b.s",
    "SELECT a.id, b.id FROM a LEFT JOIN b ON a.k < b.n",
    "SELECT a.id, b.id, c.id FROM a, b LEFT JOIN c ON c.k = b.n WHERE a.k = b.n",
    "SELECT a.id, b.id, c.id FROM (a, b) JOIN c ON c.k = a.k",
    "SELECT a.k, COUNT(*), SUM(b.n) FROM a, b GROUP BY a.k",
    "SELECT a.id, b.id, c.id FROM a, b, c WHERE a.k = c.k AND b.n = c.k",
    "SELECT a.id, b.id, c.id FROM a, b, c WHERE a.s = c.k AND b.s = c.k",
])
def test_answers_are_mysqls(mysql_pair: Any, sql: str) -> None:
    pair = _mysql_pair(mysql_pair)
    pair.check_query(sql)
    pair.execute("INSERT INTO b VALUES (5, 3, 'A')")
    pair.execute("UPDATE a SET s = '2' WHERE id = 2")
    pair.check_query(sql)
