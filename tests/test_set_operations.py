"""``INTERSECT`` and ``EXCEPT``, ``DISTINCT`` (the default) and ``ALL``
(rivulet/dataflow/ops/setop.py): MySQL 8.0.31's semantics over multisets, ``INTERSECT``
binding more tightly than ``UNION`` and ``EXCEPT``.

Views (read whole, and keyed through a derived table) and ad-hoc queries are checked
through random inserts, updates, deletes and evictions, incremental answers equal to
recomputation: the DISTINCT forms against SQLite, the ALL forms against the multiset
arithmetic over SQLite's answers for each side (SQLite has no INTERSECT ALL); precedence,
types and NULLs against MariaDB.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from oracle import Pair, operation_lists, run_operations, sqlite_rows
from rivulet.plan import ir

SCHEMA = [
    "CREATE TABLE a (id INT PRIMARY KEY, g INT, x INT)",
    "CREATE TABLE b (id INT PRIMARY KEY, g INT, y INT)",
]

LEFT = "SELECT g, x FROM a"
RIGHT = "SELECT g, y FROM b"

#: The DISTINCT forms, which SQLite computes as MySQL does (one operator each).
VIEWS: dict[str, str] = {
    "both": f"{LEFT} INTERSECT {RIGHT}",
    "only_left": f"{LEFT} EXCEPT {RIGHT}",
    "only_right": f"{RIGHT} EXCEPT {LEFT}",
    # keyed by a column through a derived table
    "keyed": f"SELECT g, x FROM ({LEFT} EXCEPT {RIGHT}) t WHERE g = ?",
    "keyed_one": "SELECT g FROM (SELECT g FROM a INTERSECT SELECT g FROM b) t WHERE g = ?",
}

#: The ALL forms: name -> (view, the function of a row's counts on each side).
ALL_VIEWS: dict[str, tuple[str, Any]] = {
    "both_all": (f"{LEFT} INTERSECT ALL {RIGHT}", min),
    "left_all": (f"{LEFT} EXCEPT ALL {RIGHT}", lambda left, right: max(left - right, 0)),
}


def _open_pair() -> Pair:
    pair = Pair.of(SCHEMA, VIEWS)
    # DISTINCT written out is the default (SQLite reads only the plain form)
    pair.db.execute(f"CREATE VIEW only_right_distinct AS {RIGHT} EXCEPT DISTINCT {LEFT}")
    pair.views["only_right_distinct"] = VIEWS["only_right"]
    for name, (sql, _) in ALL_VIEWS.items():
        pair.db.execute(f"CREATE VIEW {name} AS {sql}")
    return pair


def _check_all(pair: Pair) -> None:
    pair.settle()
    for name in ("both", "only_left", "only_right", "only_right_distinct"):
        pair.check_view(name)
    for g in (0, 1, 2):
        pair.check_view("keyed", [g])
        pair.check_view("keyed_one", [g])
    left = Counter(sqlite_rows(pair.lite, LEFT, ()))
    right = Counter(sqlite_rows(pair.lite, RIGHT, ()))
    for name, (sql, f) in ALL_VIEWS.items():
        expected = Counter({row: f(left[row], right[row]) for row in left | right})
        for got in (pair.db.view(name).lookup(), pair.db.query(sql)):
            assert Counter(got) == +expected, (name, got, expected)
    pair.check_query(f"{LEFT} INTERSECT {RIGHT} ORDER BY 1, 2")
    pair.check_query("SELECT g FROM a EXCEPT SELECT g FROM b")


_ids = st.integers(1, 6)
_small = st.one_of(st.none(), st.integers(0, 2))
_operations = operation_lists(
    st.tuples(st.sampled_from(["a", "b"]), _ids, _small, _small),
    st.tuples(st.just("update"), st.sampled_from(["a", "b"]), _ids, _small),
    st.tuples(st.just("delete"), st.sampled_from(["a", "b"]), _ids),
    max_size=30,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=_operations)
def test_set_operations_are_maintained_as_recomputed(operations: list[tuple]) -> None:
    run_operations(_open_pair(), operations, _apply, _check_all)


def _apply(pair: Pair, op: tuple) -> None:
    kind = op[0]
    if kind in ("a", "b"):
        pair.execute(f"DELETE FROM {kind} WHERE id = ?", [op[1]])
        pair.execute(f"INSERT INTO {kind} VALUES (?, ?, ?)", op[1:])
    elif kind == "update":
        column = "x" if op[1] == "a" else "y"
        pair.execute(f"UPDATE {op[1]} SET {column} = ? WHERE id = ?", [op[3], op[2]])
    else:  # "delete"
        pair.execute(f"DELETE FROM {op[1]} WHERE id = ?", [op[2]])


def test_a_set_operation_is_one_operator_over_both_sides(tmp_path: Any) -> None:
    with rivulet.open(tmp_path) as db:
        for ddl in SCHEMA:
            db.execute(ddl)
        db.execute(f"CREATE VIEW v AS {LEFT} INTERSECT ALL {RIGHT}")
        ops = [n for n in ir.walk(db.catalog.view("v").root) if isinstance(n, ir.SetOp)]
        assert [(o.op, o.all) for o in ops] == [("intersect", True)]
        # the same input on both sides (one shared node) counts on both
        db.table("a").insert_many([(1, 1, 1), (2, 1, 1), (3, 2, 2)])
        assert sorted(db.query(f"{LEFT} INTERSECT ALL {LEFT}")) == [(1, 1), (1, 1), (2, 2)]
        assert db.query(f"{LEFT} EXCEPT ALL {LEFT}") == []


def test_the_selects_must_have_as_many_columns(tmp_path: Any) -> None:
    with rivulet.open(tmp_path) as db:
        for ddl in SCHEMA:
            db.execute(ddl)
        with pytest.raises(rivulet.SqlError, match="different numbers of columns") as caught:
            db.query("SELECT g FROM a INTERSECT SELECT g, y FROM b")
        assert rivulet.errors.error_code(caught.value).mysql == 1222


# --------------------------------------------------------------------------- MySQL

MYSQL_SCHEMA = [
    "CREATE TABLE a (id INT PRIMARY KEY, n INT, d DECIMAL(6,2), s VARCHAR(10))",
    "CREATE TABLE b (id INT PRIMARY KEY, n INT, d DECIMAL(6,1), s VARCHAR(10))",
]


def _mysql_pair(pair: Any) -> Any:
    for ddl in MYSQL_SCHEMA:
        pair.execute(ddl)
    pair.execute("INSERT INTO a VALUES (1, 1, 1.50, 'x'), (2, 1, 1.50, 'X'), (3, 2, NULL, NULL), "
                 "(4, 3, 2.00, '3'), (5, NULL, 0, 'y')")
    pair.execute("INSERT INTO b VALUES (1, 1, 1.5, 'x'), (2, 2, NULL, NULL), (3, 2, 2, '3'), "
                 "(4, NULL, 7, 'z')")
    return pair


@pytest.mark.parametrize("sql", [
    # INTERSECT binds more tightly than UNION and EXCEPT
    "SELECT n FROM a UNION SELECT n FROM b INTERSECT SELECT 3",
    "SELECT n FROM a EXCEPT SELECT n FROM b INTERSECT SELECT 1",
    "SELECT n FROM a INTERSECT SELECT n FROM b UNION SELECT 9",
    # left to right among UNION and EXCEPT; ALL and DISTINCT each where written
    "SELECT n FROM a UNION ALL SELECT n FROM b EXCEPT SELECT 2",
    "SELECT n FROM a EXCEPT ALL SELECT n FROM b EXCEPT SELECT 3",
    "SELECT n FROM a INTERSECT ALL SELECT n FROM a",
    "SELECT n, s FROM a INTERSECT ALL SELECT n, s FROM b",
    # NULLs are equal; DECIMALs of other places compare by value; text with a number as
    # text (the column's type); binary collation
    "SELECT d FROM a INTERSECT SELECT d FROM b",
    "SELECT d FROM a EXCEPT ALL SELECT d FROM b",
    "SELECT s FROM a INTERSECT SELECT n FROM b",
    "SELECT s FROM a EXCEPT SELECT s FROM b",
    "SELECT n, d FROM a EXCEPT SELECT n, d FROM b ORDER BY 1 DESC LIMIT 2",
    "SELECT * FROM (SELECT n FROM a INTERSECT SELECT n FROM b) t WHERE n > 1",
])
def test_answers_are_mysqls(mysql_pair: Any, sql: str) -> None:
    pair = _mysql_pair(mysql_pair)
    pair.check_query(sql)
    pair.execute("INSERT INTO b VALUES (5, 3, 2.0, 'X'), (6, 1, 1.5, 'x')")
    pair.execute("DELETE FROM a WHERE id = 3")
    pair.check_query(sql)
