"""``?`` parameters under OR on different columns (rivulet/plan/alternatives.py).

``a = ? OR b = ?`` (Django's ``Q(sender=x) | Q(recipient=y)``) is answered by one partial
reader over the union of one alternative per term, each keyed by its own column. Every
read answers what SQLite (and MariaDB, for values of another type) answers while rows
move in and out of each column's value: rows matching both terms (once, as MySQL keeps
them), equal values, NULL values and parameters, three terms, joins, ORDER BY, LIMIT and
OFFSET, DISTINCT, other parameters beside the OR, after eviction; through views,
``db.query`` and the MySQL server. What is not taken is refused by name.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mysql_oracle import MySQLPair, OverTheWire

import rivulet
from oracle import Pair, operation_lists, run_operations
from rivulet.errors import (
    ParameterError,
    RivuletError,
    UnsupportedSqlError,
    error_code,
)
from rivulet.server.mysql.server import ServerThread

SCHEMA = ["CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, c INT, d INT)"]

#: Views (by name) with the values each of their ``?`` is drawn from, in order.
READS: dict[str, tuple[str, list[str]]] = {
    "two": ("SELECT id, c FROM t WHERE a = ? OR b = ?", ["ab", "ab"]),
    "paren": ("SELECT id FROM t WHERE (b = ? OR (a = ?))", ["ab", "ab"]),
    "beside": ("SELECT id, a, b FROM t WHERE c = 5 AND (a = ? OR b = ?)", ["ab", "ab"]),
    "keyed_beside": ("SELECT id, d FROM t WHERE (a = ? OR b = ?) AND c = ?",
                     ["ab", "ab", "c"]),
    "keyed_before": ("SELECT id FROM t WHERE d = ? AND (b = ? OR a = ?) AND c = ?",
                     ["d", "ab", "ab", "c"]),
    "three": ("SELECT id, a, b, c FROM t WHERE a = ? OR b = ? OR d = ?", ["ab", "ab", "ab"]),
    "again": ("SELECT id FROM t WHERE a = ? OR b = ? OR a = ?", ["ab", "ab", "ab"]),
    "ordered": ("SELECT id, c FROM t WHERE a = ? OR b = ? ORDER BY c DESC, id",
                ["ab", "ab"]),
    "top": ("SELECT id, c FROM t WHERE a = ? OR b = ? ORDER BY c, id DESC LIMIT 2",
            ["ab", "ab"]),
    "page": ("SELECT id, d FROM t WHERE a = ? OR b = ? OR d = ? "
             "ORDER BY d DESC, id LIMIT 3 OFFSET 1", ["ab", "ab", "ab"]),
    "top_keyed": ("SELECT id FROM t WHERE c = ? AND (a = ? OR b = ?) ORDER BY id LIMIT 2",
                  ["c", "ab", "ab"]),
    "deduped": ("SELECT DISTINCT c FROM t WHERE a = ? OR b = ?", ["ab", "ab"]),
    "deduped_ordered": ("SELECT DISTINCT c, d FROM t WHERE a = ? OR b = ? ORDER BY d, c",
                        ["ab", "ab"]),
    "equal_beside": ("SELECT id FROM t WHERE d = ? AND (a = ? OR b = ?) AND d = ?",
                     ["d", "ab", "ab", "d"]),
    "hidden_order": ("SELECT id FROM t WHERE a = ? OR b = ? ORDER BY a, b DESC, id",
                     ["ab", "ab"]),
}

_POOLS: dict[str, list[Any]] = {
    "ab": [0, 1, 2, 3, 9, None],
    "c": [4, 5, 6, None],
    "d": [0, 1, 2, None],
}


def _row(rng: random.Random, i: int) -> tuple:
    return (i, rng.choice([None, 0, 1, 1, 2, 3]), rng.choice([None, 0, 1, 2, 2, 3]),
            rng.choice([None, 4, 5, 5, 6]), rng.choice([None, 0, 1, 2]))


def _values(rng: random.Random, roles: list[str]) -> list[Any]:
    return [rng.choice(_POOLS[role]) for role in roles]


def _check(pair: Pair, held: dict[str, list[list[Any]]]) -> None:
    pair.settle()
    for name, keys in held.items():
        for params in keys:
            pair.check_view(name, params)
        pair.check_query(READS[name][0], keys[-1])


def test_or_on_columns_answers_as_sqlite_while_rows_change() -> None:
    rng = random.Random(40)
    rows = [_row(rng, i) for i in range(30)]
    with Pair.of(SCHEMA, {name: sql for name, (sql, _) in READS.items()}) as pair:
        pair.insert_many("t", rows)
        for name in READS:
            assert pair.db.view(name).partial, name  # filled by upqueries, key by key
        held: dict[str, list[list[Any]]] = {name: [] for name in READS}
        next_id = 100
        for round_ in range(6):
            if round_:
                # rows move between the columns' values, and in and out of all of them
                pair.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", list(_row(rng, next_id)))
                next_id += 1
                pair.execute("UPDATE t SET a = ? WHERE id = ?",
                             [rng.choice(_POOLS["ab"]), rng.randrange(30)])
                pair.execute("UPDATE t SET b = ?, c = ? WHERE id = ?",
                             [rng.choice(_POOLS["ab"]), rng.choice(_POOLS["c"]),
                              rng.randrange(30)])
                pair.execute("UPDATE t SET a = b, d = ? WHERE id = ?",  # matching both
                             [rng.choice(_POOLS["d"]), rng.randrange(30)])
                pair.execute("DELETE FROM t WHERE id = ?", [rng.randrange(30)])
            if round_ == 3:
                pair.settle()
                pair.db.evict()  # reads refill by upqueries
            for name, (_, roles) in READS.items():
                for _ in range(3):
                    held[name].append(_values(rng, roles))
                held[name].append([1 if role == "ab" else rng.choice(_POOLS[role])
                                   for role in roles])  # the same value for every term
            _check(pair, held)


def test_rows_matching_both_terms_are_answered_once() -> None:
    with Pair.of(SCHEMA, {"two": READS["two"][0], "three": READS["three"][0]}) as pair:
        pair.insert_many("t", [(1, 1, 1, 5, 1), (2, 1, 2, 5, 2), (3, 2, 1, 5, 1),
                               (4, None, 1, 5, None), (5, 1, None, 5, 1), (6, 3, 3, 5, 3)])
        pair.settle()
        view = pair.db.view("two")
        assert sorted(view.lookup(1, 1)) == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
        assert sorted(view.lookup(1, 2)) == [(1, 5), (2, 5), (5, 5)]
        assert sorted(view.lookup(2, 1)) == [(1, 5), (3, 5), (4, 5)]
        assert view.lookup(None, None) == []
        assert sorted(view.lookup(None, 3)) == [(6, 5)]
        assert sorted(pair.db.view("three").lookup(1, 1, 1)) == [
            (1, 1, 1, 5), (2, 1, 2, 5), (3, 2, 1, 5), (4, None, 1, 5), (5, 1, None, 5)]
        for params in ([1, 1], [1, 2], [None, 1], [2, None], [3, 3], [9, 9]):
            pair.check_view("two", params)
            pair.check_query(READS["two"][0], params)
            pair.check_view("three", [*params, 1])
            pair.check_view("three", [*params, None])


def test_the_same_base_row_many_times_keeps_its_count() -> None:
    """Bag semantics: equal rows of the query (a projection without the key) are each
    answered once per row they come from, not once per term."""
    views = {"projected": "SELECT c FROM t WHERE a = ? OR b = ?"}
    with Pair.of(SCHEMA, views) as pair:
        pair.insert_many("t", [(1, 1, 1, 5, 0), (2, 1, 1, 5, 0), (3, 1, 2, 5, 0),
                               (4, 2, 1, 5, 0)])
        pair.settle()
        assert pair.db.view("projected").lookup(1, 1) == [(5,)] * 4
        assert pair.db.view("projected").lookup(2, 2) == [(5,)] * 2
        for params in ([1, 1], [1, 2], [2, 1], [2, 2]):
            pair.check_view("projected", params)


def test_or_over_a_join_answers_as_sqlite_while_rows_change() -> None:
    """The terms' columns may be of two tables (a message's sender, its thread's owner),
    of an inner or a LEFT JOIN (the right side's padded NULLs match no value), of one
    table joined to itself; a subquery's condition may stand beside the OR."""
    schema = [SCHEMA[0], "CREATE TABLE u (id INT PRIMARY KEY, t_id INT, x INT)"]
    views = {
        "joined": "SELECT t.id, u.id FROM t JOIN u ON t.id = u.t_id WHERE t.a = ? OR u.x = ?",
        "lefted": "SELECT t.id, u.x FROM t LEFT JOIN u ON t.id = u.t_id "
                  "WHERE (u.x = ? OR t.b = ?) AND t.c = ?",
        "joined_top": "SELECT t.id, u.id FROM t JOIN u ON t.id = u.t_id "
                      "WHERE t.a = ? OR u.x = ? ORDER BY u.id DESC, t.id LIMIT 2",
        "self_joined": "SELECT p.id, q.id FROM t AS p JOIN t AS q ON p.c = q.c "
                       "WHERE p.a = ? OR q.b = ?",
        "subquery_beside": "SELECT id FROM t WHERE (a = ? OR b = ?) "
                           "AND id IN (SELECT t_id FROM u WHERE x > 0)",
    }
    rng = random.Random(41)
    with Pair.of(schema, views) as pair:
        pair.insert_many("t", [_row(rng, i) for i in range(12)])
        pair.insert_many("u", [(i, rng.randrange(14), rng.choice([None, 0, 1, 2]))
                               for i in range(16)])
        for round_ in range(5):
            if round_:
                pair.execute("UPDATE u SET x = ?, t_id = ? WHERE id = ?",
                             [rng.choice([None, 0, 1, 2]), rng.randrange(14), rng.randrange(16)])
                pair.execute("UPDATE t SET a = ?, b = ? WHERE id = ?",
                             [rng.choice(_POOLS["ab"]), rng.choice(_POOLS["ab"]),
                              rng.randrange(12)])
                pair.execute("DELETE FROM u WHERE id = ?", [rng.randrange(16)])
            if round_ == 2:
                pair.settle()
                pair.db.evict()
            pair.settle()
            for params in ([0, 1], [2, 2], [None, 1], [1, None], [1, 9]):
                pair.check_view("joined", params)
                pair.check_view("lefted", [*params, 5])
                pair.check_view("joined_top", params)
                pair.check_view("self_joined", params)
                pair.check_view("subquery_beside", params)
                pair.check_query(views["joined"], params)


def test_reads_under_a_small_memory_limit_refill_by_upqueries(tmp_path: Any) -> None:
    """Opened with a memory limit far below what the reads hold, the views evict as they
    are read: every read refills what it misses, and still answers as SQLite does."""
    names = ["two", "keyed_beside", "top", "page", "deduped", "three"]
    rng = random.Random(42)
    path = str(tmp_path / "db")
    pair = Pair.of(SCHEMA, {name: READS[name][0] for name in names}, path=path)
    try:
        pair.insert_many("t", [_row(rng, i) for i in range(200)])
        pair.settle()
        pair.reopen(memory_limit="64KB")
        for round_ in range(4):
            if round_:
                for _ in range(5):
                    pair.execute("UPDATE t SET a = ?, b = ? WHERE id = ?",
                                 [rng.choice(_POOLS["ab"]), rng.choice(_POOLS["ab"]),
                                  rng.randrange(200)])
            pair.settle()
            for name in names:
                for _ in range(6):
                    pair.check_view(name, _values(rng, READS[name][1]))
        assert pair.db.stats()["evictions"] > 0  # (the limit did evict)
    finally:
        pair.close()


def test_full_state_answers_as_sqlite(tmp_path: Any) -> None:
    """With partial state off, the reader holds every key of every term: a read still
    keeps each row once, through the first term it matches."""
    names = ["two", "three", "top", "page", "deduped", "keyed_beside"]
    rng = random.Random(43)
    pair = Pair.of(SCHEMA, {name: READS[name][0] for name in names}, path=str(tmp_path / "db"))
    try:
        pair.insert_many("t", [_row(rng, i) for i in range(40)])
        pair.reopen(partial=False)
        for round_ in range(3):
            if round_:
                pair.execute("UPDATE t SET a = ?, b = ? WHERE id = ?",
                             [rng.choice(_POOLS["ab"]), rng.choice(_POOLS["ab"]),
                              rng.randrange(40)])
                pair.execute("DELETE FROM t WHERE id = ?", [rng.randrange(40)])
            pair.settle()
            for name in names:
                assert not pair.db.view(name).partial
                for _ in range(5):
                    pair.check_view(name, _values(rng, READS[name][1]))
    finally:
        pair.close()


_ids = st.integers(0, 7)
_ab = st.sampled_from(_POOLS["ab"])


@settings(max_examples=25, deadline=None)
@given(operation_lists(st.tuples(st.just("insert"), _ids, _ab, _ab, st.sampled_from(_POOLS["c"])),
                       st.tuples(st.just("move_a"), _ids, _ab),
                       st.tuples(st.just("move_b"), _ids, _ab),
                       st.tuples(st.just("delete"), _ids),
                       max_size=12),
       st.lists(st.tuples(_ab, _ab, st.sampled_from(_POOLS["c"])), min_size=1, max_size=3))
def test_random_writes_and_reads_interleaved(operations: list[tuple[Any, ...]],
                                             reads: list[tuple[Any, Any, Any]]) -> None:
    views = {name: READS[name][0]
             for name in ("two", "keyed_beside", "top", "deduped", "page")}

    def apply(pair: Pair, op: tuple[Any, ...]) -> None:
        if op[0] == "insert":
            pair.execute("DELETE FROM t WHERE id = ?", [op[1]])  # (a new row of that id)
            pair.execute("INSERT INTO t VALUES (?, ?, ?, ?, 1)", [op[1], op[2], op[3], op[4]])
        elif op[0] == "move_a":
            pair.execute("UPDATE t SET a = ? WHERE id = ?", [op[2], op[1]])
        elif op[0] == "move_b":
            pair.execute("UPDATE t SET b = ? WHERE id = ?", [op[2], op[1]])
        else:
            pair.execute("DELETE FROM t WHERE id = ?", [op[1]])

    def check_all(pair: Pair) -> None:
        pair.settle()
        for a, b, c in reads:
            pair.check_view("two", [a, b])
            pair.check_view("top", [a, b])
            pair.check_view("deduped", [a, b])
            pair.check_view("page", [a, b, a])
            pair.check_view("keyed_beside", [a, b, c])
            pair.check_query(views["keyed_beside"], [a, b, c])

    run_operations(Pair.of(SCHEMA, views), operations, apply, check_all)


def test_reads_that_name_no_one_key(tmp_path: Any) -> None:
    """``lookup_many`` and ``scan`` name no key of both terms: refused by name; a view of
    the OR read as a table in another query is refused too; a locking read answers."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        db.table("t").insert_many([(1, 1, 2, 5, 0), (2, 2, 1, 5, 0), (3, 3, 3, 6, 0)])
        db.execute("CREATE VIEW w AS SELECT id FROM t WHERE a = ? OR b = ?")
        assert sorted(db.view("w").lookup(1, 1)) == [(1,), (2,)]
        with pytest.raises(RivuletError, match="under an OR on different columns"):
            db.view("w").lookup_many([(1, 1)])
        with pytest.raises(RivuletError, match="under an OR on different columns"):
            db.view("w").scan()
        with pytest.raises(UnsupportedSqlError, match="OR on different columns read as a"):
            db.query("SELECT * FROM w")
        with db.transaction() as tx:
            assert sorted(tx.query("SELECT id, a FROM t WHERE id = ? OR a = ? FOR UPDATE",
                                   [1, 3])) == [(1, 1), (3, 3)]
            tx.execute("UPDATE t SET b = 3 WHERE id = 2")
            assert sorted(tx.query("SELECT id FROM t WHERE a = ? OR b = ?", [9, 3])) == \
                [(2,), (3,)]


def test_the_http_api_describes_each_term(tmp_path: Any) -> None:
    """The HTTP API's description of a view names each term's column under the OR."""
    from rivulet.server.http.handlers import describe_view

    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        db.execute("CREATE VIEW w AS SELECT id FROM t WHERE c = ? AND (a = ? OR b = ?)")
        described = describe_view(db.view("w"))["parameters"]
        assert [(p.get("column"), p.get("match"), p.get("under")) for p in described] == [
            ("c", "=", None), ("a", "=", "OR"), ("b", "=", "OR")]


def test_verify_refuses_the_view_by_name(tmp_path: Any) -> None:
    """``rivulet verify`` recomputes keys on Spark, which does not read the alternatives:
    named, such a view is refused (before Spark starts); unnamed, it is left out."""
    from rivulet.pipeline.verify import verify

    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        db.execute("CREATE VIEW w AS SELECT id FROM t WHERE a = ? OR b = ?")
        with pytest.raises(UnsupportedSqlError, match="verify of view 'w'.*OR on different"):
            verify(db, ["w"])


def test_spark_refuses_the_view_by_name(tmp_path: Any) -> None:
    """Spark's reads of a view (rivulet/spark/compile.py) take one key per read: a view of
    the OR is refused by name before any table is read (no Spark session is started)."""
    from rivulet.spark.compile import compute_lookups, scan_view

    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        db.execute("CREATE VIEW w AS SELECT id FROM t WHERE a = ? OR b = ?")
        plan = db.view("w").plan
        with pytest.raises(UnsupportedSqlError, match="OR on different columns on Spark"):
            compute_lookups(plan, {}, [(1, 2)])
        with pytest.raises(UnsupportedSqlError, match="OR on different columns on Spark"):
            scan_view(plan, {})


@pytest.mark.parametrize("sql, named", [
    ("SELECT count(*) FROM t WHERE a = ? OR b = ?",
     "OR of parameters on different columns in an aggregated query"),
    ("SELECT a, count(*) FROM t WHERE a = ? OR b = ? GROUP BY a",
     "OR of parameters on different columns in an aggregated query"),
    ("SELECT id FROM t WHERE a = ? OR b = ? HAVING id > 1",
     "OR of parameters on different columns in an aggregated query"),
    ("SELECT DISTINCT c FROM t WHERE a = ? OR b = ? ORDER BY c LIMIT 2",
     "OR of parameters on different columns with SELECT DISTINCT and LIMIT"),
    ("SELECT id FROM s WHERE i = ? OR v = ?", "OR of parameters on columns of different kinds"),
    ("SELECT id FROM s WHERE g = ? OR h = ?", "OR of parameters on columns of different kinds"),
    ("SELECT id FROM s WHERE e = ? OR f = ?",
     "OR of parameters on ENUM columns of different members"),
    ("SELECT id FROM t WHERE (a = ? OR b = ?) AND c IN (?, ?)",
     "OR of parameters on different columns beside an IN (?, ...) list"),
    ("SELECT id FROM t WHERE (a = ? OR b = ?) AND (c = ? OR c = ?)",
     "OR of parameters on different columns beside an IN (?, ...) list or another OR"),
    ("SELECT id FROM t WHERE (c = ? OR c = ?) AND (a = ? OR b = ?)",
     "OR of parameters on different columns beside an IN (?, ...) list or another OR"),
    ("SELECT id FROM t WHERE (a = ? OR b = ?) AND (c = ? OR d = ?)",
     "second OR of parameters on different columns"),
    ("SELECT id FROM t WHERE (a = ? OR b = ?) AND c > ?",
     "OR of parameters on different columns beside a range parameter"),
    ("SELECT id FROM t WHERE (a = ? OR b = ?) AND c BETWEEN ? AND ?",
     "OR of parameters on different columns beside a range parameter"),
    ("SELECT id FROM t WHERE a = ? OR b IN (?, ?)",
     "IN (?, ...) under an OR of parameters on different columns"),
])
def test_what_the_or_does_not_support_is_refused_by_name(tmp_path: Any, sql: str,
                                                         named: str) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        db.execute("CREATE TABLE s (id INT PRIMARY KEY, i INT, v VARCHAR(4), "
                   "e ENUM('x', 'y'), f ENUM('y', 'x'), g FLOAT, h DOUBLE)")
        with pytest.raises(UnsupportedSqlError) as raised:
            db.query(sql, [1] * sql.count("?"))
        assert f"unsupported {named}" in str(raised.value)
        assert error_code(raised.value).mysql == 1235
        with pytest.raises(UnsupportedSqlError):
            db.execute(f"CREATE VIEW v AS {sql}")
        assert db.views() == []


@pytest.mark.parametrize("sql, named", [
    ("SELECT id FROM t WHERE a = ? OR b IS NULL", "IS NULL beside a parameter under OR"),
    ("SELECT id FROM t WHERE a <=> ? OR b = ?", "<=> parameter under OR"),
    ("SELECT id FROM t WHERE a = ? OR b <=> ?", "<=> parameter under OR"),
    ("SELECT id FROM t WHERE a = ? OR b = 3", "parameters must all compare one column"),
    ("SELECT id FROM t WHERE a = ? OR b > ?", "parameters must all compare one column"),
    ("SELECT id FROM t WHERE a = ? OR (b = ? AND c = 5)",
     "parameters must all compare one column"),
    ("SELECT id FROM t WHERE a = ? OR b + 1 = ?", "parameters must all compare one column"),
    ("SELECT id FROM t WHERE (a = ? OR b = ?) AND a = ?",
     "OR of parameters on different columns beside another parameter on one of its"),
    ("SELECT id FROM t WHERE b = ? AND (a = ? OR b = ?)",
     "OR of parameters on different columns beside another parameter on one of its"),
])
def test_terms_that_are_not_column_equals_parameter_are_refused_by_name(
        tmp_path: Any, sql: str, named: str) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        with pytest.raises(ParameterError, match="unsupported use of a parameter") as raised:
            db.query(sql, [1] * sql.count("?"))
        assert named in str(raised.value)
        assert db.views() == []


_names = itertools.count()


def test_values_of_other_types_answer_as_mariadb(mysql_pair: MySQLPair) -> None:
    """Each value is compared with its own term's column as MySQL's ``=`` does (``s = 1``
    finds '1' and '01': such a read is computed with the values as constants, as is one
    of ``j <=> NULL`` beside the OR; a DATETIME's text finds its instant, a number the
    ENUM member at its position), through a
    view, ``db.query``, the MySQL server's prepared statements and its text protocol
    (whose literals become parameters)."""
    mysql_pair.execute("CREATE TABLE k (id INT PRIMARY KEY, i INT, j INT, s VARCHAR(4), "
                       "r VARCHAR(4), w DATETIME, x DATETIME, e ENUM('p', 'q', 'r'), "
                       "f ENUM('p', 'q', 'r'))")
    mysql_pair.insert_many("k", [
        (1, 1, 2, "1", "a", "2024-01-05 00:00:00", None, "p", "q"),
        (2, 1, 1, "01", "1", None, "2024-01-05 00:00:00", "q", None),
        (3, 2, None, "x", "X", "2024-01-06 10:00:00", "2024-01-05 00:00:00", None, "r"),
        (4, None, 2, None, "01", None, None, "r", "p"),
        (5, 2, 3, "1", None, "2024-01-05 00:00:00", "2024-01-06 10:00:00", "q", "q"),
        (6, 3, 1, "y", "x", None, "2024-01-06 10:00:00", "p", "p")])
    reads = [("SELECT id FROM k WHERE i = ? OR j = ?", [1, 2, 1.0, 2.5, "01", None, "2"]),
             ("SELECT id FROM k WHERE s = ? OR r = ?", ["1", "x", "X", 1, "01", None]),
             ("SELECT id, i FROM k WHERE i > 0 AND (s = ? OR r = ?) ORDER BY id DESC LIMIT 2",
              ["1", "x", "01", None, 1]),
             ("SELECT id FROM k WHERE w = ? OR x = ?",
              ["2024-01-05", "2024-01-05 00:00:00", "2024-01-06 10:00:00", None, 20240105]),
             ("SELECT id FROM k WHERE i = ? OR j = ? OR i = ?", [1, 2, 3, None, "1"]),
             ("SELECT id FROM k WHERE j <=> ? AND (s = ? OR r = ?)", [1, "x", "1", None]),
             ("SELECT id, e, f FROM k WHERE e = ? OR f = ?", ["p", "q", 2, 3, "x", None, "2"])]
    rng = random.Random(6)
    views = []
    for sql, values in reads:
        name = f"orc{next(_names)}"
        mysql_pair.create_view(name, sql)
        views.append((name, sql, values))
    with OverTheWire(mysql_pair) as wire:
        for round_ in range(3):
            if round_:
                mysql_pair.execute("UPDATE k SET s = ?, j = ? WHERE id = ?",
                                   [rng.choice(["1", "01", "x", None]),
                                    rng.choice([1, 2, None]), rng.randrange(1, 7)])
                mysql_pair.execute("UPDATE k SET r = ?, i = ? WHERE id = ?",
                                   [rng.choice(["1", "x", "X", None]),
                                    rng.choice([1, 2, None]), rng.randrange(1, 7)])
                mysql_pair.settle()
            for name, sql, values in views:
                count = sql.count("?")
                fixed = [values[(k + 2 * round_) % len(values)] for k in range(count)]
                for params in [fixed] + [[rng.choice(values) for _ in range(count)]
                                         for _ in range(4)]:
                    mysql_pair.check_view(name, *params)
                    mysql_pair.check_query(sql, params)
                    wire.check_prepared(sql, params)
                    wire.check_text(sql.replace("?", "%s"), params)


@pytest.fixture
def db(tmp_path: Any) -> Iterator[rivulet.Database]:
    """A database for the ``server`` fixture (tests/conftest.py)."""
    database = rivulet.open(tmp_path / "db")
    database.execute(SCHEMA[0])
    database.table("t").insert_many([(1, 1, 3, 5, 0), (2, 1, 2, 5, 1), (3, 2, 1, 5, 2),
                                     (4, None, 1, 5, 3), (5, 3, None, 6, 4)])
    yield database
    database.close()


def test_over_the_mysql_server(db: rivulet.Database, server: ServerThread) -> None:
    """A text query's literals become the OR's parameters (a view made per query shape);
    a view of the OR read as a table through the server says how to read it."""
    db.execute("CREATE VIEW two AS SELECT id, a FROM t WHERE a = ? OR b = ?")
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database="rivulet", autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT id FROM t WHERE c = 5 AND (a = 1 OR b = 1) ORDER BY id")
            assert cur.fetchall() == ((1,), (2,), (3,), (4,))
            cur.execute("SELECT id FROM t WHERE a = %s OR b = %s ORDER BY id", (3, 3))
            assert cur.fetchall() == ((1,), (5,))
            cur.execute("SELECT id FROM t WHERE a = %s OR b = %s ORDER BY id", (None, 2))
            assert cur.fetchall() == ((2,),)
            cur.execute("SELECT id FROM t WHERE a = 1 OR b = 1 ORDER BY id DESC LIMIT 2")
            assert cur.fetchall() == ((4,), (3,))
            with pytest.raises(pymysql.err.NotSupportedError, match="OR on different columns"):
                cur.execute("SELECT * FROM two WHERE a = 1 AND b = 2")
            # refused with parameters, a text query's literals stay constants
            cur.execute("SELECT count(*), sum(id) FROM t WHERE a = 1 OR b = 1")
            assert cur.fetchall() == ((4, 10),)
            cur.execute("SELECT DISTINCT c FROM t WHERE a = 3 OR b = 1 ORDER BY c LIMIT 1")
            assert cur.fetchall() == ((5,),)
    finally:
        conn.close()
