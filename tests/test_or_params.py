"""``?`` parameters under OR (rivulet/plan/params.py, ``_or_of_equalities``).

``a = ? OR a = ?`` (and ``a = ? OR a IN (?, ?)``) is one column equal to one of several
values: it is answered as an ``IN (?, ...)`` list taking exactly its ``?``, by one partial
reader keyed by the column. Every read answers what SQLite (and MariaDB, for values of
another type) answers while rows move in and out of each value's rows, through views,
``db.query`` and the MySQL server: rows matching both equalities (the same value twice),
rows of equal values, NULLs included. What stays refused (``a = ? OR a IS NULL``, ...) is
refused by name; ``a = ? OR b = ?`` is tests/test_or_columns.py's.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from typing import Any

import mysql.connector
import pymysql
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mysql_oracle import MySQLPair, OverTheWire

import rivulet
from oracle import Pair, operation_lists, run_operations
from rivulet.errors import (
    LockWaitTimeoutError,
    ParameterCountError,
    ParameterError,
    UnsupportedSqlError,
    error_code,
)
from rivulet.server.mysql.server import ServerThread

SCHEMA = ["CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, c INT)"]

#: Views (by name) with the values each of their ``?`` is drawn from, in order.
READS: dict[str, tuple[str, list[str]]] = {
    "two": ("SELECT id, b FROM t WHERE a = ? OR a = ?", ["a", "a"]),
    "paren": ("SELECT id FROM t WHERE (a = ? OR (a = ?) OR a = ?)", ["a", "a", "a"]),
    "beside": ("SELECT id, a FROM t WHERE c = 5 AND (a = ? OR a = ?)", ["a", "a"]),
    "keyed_beside": ("SELECT id FROM t WHERE (a = ? OR a = ?) AND c = ?", ["a", "a", "c"]),
    "with_list": ("SELECT id, c FROM t WHERE a = ? OR a IN (?, ?)", ["a", "a", "a"]),
    "top": ("SELECT id, b FROM t WHERE c = ? AND (a = ? OR a = ?) ORDER BY b DESC, id LIMIT 2",
            ["c", "a", "a"]),
    "grouped": ("SELECT a, count(*), sum(b) FROM t WHERE a = ? OR a = ? GROUP BY a",
                ["a", "a"]),
    "deduped": ("SELECT DISTINCT c FROM t WHERE a = ? OR a = ?", ["a", "a"]),
    "and_list": ("SELECT id FROM t WHERE (a = ? OR a = ?) AND b IN (?, ?)",
                 ["a", "a", "b", "b"]),
    "two_ors": ("SELECT id FROM t WHERE (a = ? OR a = ?) AND (c = ? OR c = ?)",
                ["a", "a", "c", "c"]),
}

_POOLS: dict[str, list[Any]] = {
    "a": [0, 1, 2, 3, 9, None],
    "b": [0, 1, 2, None],
    "c": [4, 5, 6, None],
}


def _row(rng: random.Random, i: int) -> tuple:
    return (i, rng.choice([None, 0, 1, 1, 2, 3]), rng.choice([None, 0, 1, 2]),
            rng.choice([None, 4, 5, 5, 6]))


def _values(rng: random.Random, roles: list[str]) -> list[Any]:
    return [rng.choice(_POOLS[role]) for role in roles]


def _check(pair: Pair, held: dict[str, list[list[Any]]]) -> None:
    pair.settle()
    for name, keys in held.items():
        for params in keys:
            pair.check_view(name, params)
        pair.check_query(READS[name][0], keys[-1])


def test_or_of_equalities_answers_as_sqlite_while_rows_change() -> None:
    rng = random.Random(30)
    rows = [_row(rng, i) for i in range(30)]
    with Pair.of(SCHEMA, {name: sql for name, (sql, _) in READS.items()}) as pair:
        pair.insert_many("t", rows)
        for name in READS:
            assert pair.db.view(name).partial, name  # filled by upqueries, key by key
        held: dict[str, list[list[Any]]] = {name: [] for name in READS}
        next_id = 100
        for round_ in range(6):
            if round_:
                # rows move between the values' rows, and in and out of all of them
                pair.execute("INSERT INTO t VALUES (?, ?, ?, ?)", list(_row(rng, next_id)))
                next_id += 1
                pair.execute("UPDATE t SET a = ? WHERE id = ?",
                             [rng.choice(_POOLS["a"]), rng.randrange(30)])
                pair.execute("UPDATE t SET c = ?, b = ? WHERE id = ?",
                             [rng.choice(_POOLS["c"]), rng.choice(_POOLS["b"]),
                              rng.randrange(30)])
                pair.execute("DELETE FROM t WHERE id = ?", [rng.randrange(30)])
            if round_ == 3:
                pair.settle()
                pair.db.evict()  # reads refill by upqueries
            for name, (_, roles) in READS.items():
                for _ in range(3):
                    held[name].append(_values(rng, roles))
                held[name].append([1] * len(roles))  # the same value twice
            _check(pair, held)


def test_a_value_twice_finds_its_rows_once_and_equal_rows_each() -> None:
    with Pair.of(SCHEMA, {"two": READS["two"][0]}) as pair:
        pair.insert_many("t", [(1, 1, 7, 5), (2, 1, 7, 5), (3, 2, 7, 5), (4, None, 7, 5)])
        pair.settle()
        assert sorted(pair.db.view("two").lookup(1, 1)) == [(1, 7), (2, 7)]
        assert sorted(pair.db.view("two").lookup(1, 2)) == [(1, 7), (2, 7), (3, 7)]
        assert pair.db.view("two").lookup(None, None) == []
        for params in ([1, 1], [1, 2], [None, 2], [2, 9]):
            pair.check_view("two", params)
            pair.check_query(READS["two"][0], params)


def test_or_over_a_join_answers_as_sqlite_while_rows_change() -> None:
    """The OR's column may be either side's, of an inner or a LEFT JOIN (the right side's
    padded NULLs match no value)."""
    schema = [SCHEMA[0], "CREATE TABLE u (id INT PRIMARY KEY, t_id INT, x INT)"]
    views = {
        "joined": "SELECT t.id, u.id FROM t JOIN u ON t.id = u.t_id WHERE u.x = ? OR u.x = ?",
        "lefted": "SELECT t.id, u.x FROM t LEFT JOIN u ON t.id = u.t_id "
                "WHERE (t.a = ? OR t.a = ?) AND t.c = ?",
        "right_side": "SELECT t.id, u.id FROM t LEFT JOIN u ON t.id = u.t_id "
                      "WHERE (u.x = ? OR u.x IN (?, ?))",
    }
    rng = random.Random(31)
    with Pair.of(schema, views) as pair:
        pair.insert_many("t", [_row(rng, i) for i in range(12)])
        pair.insert_many("u", [(i, rng.randrange(14), rng.choice([None, 0, 1, 2]))
                               for i in range(16)])
        for round_ in range(4):
            if round_:
                pair.execute("UPDATE u SET x = ?, t_id = ? WHERE id = ?",
                             [rng.choice([None, 0, 1, 2]), rng.randrange(14), rng.randrange(16)])
                pair.execute("UPDATE t SET a = ? WHERE id = ?",
                             [rng.choice(_POOLS["a"]), rng.randrange(12)])
                pair.execute("DELETE FROM u WHERE id = ?", [rng.randrange(16)])
            pair.settle()
            for params in ([0, 1], [2, 2], [None, 1], [1, 9]):
                pair.check_view("joined", params)
                pair.check_view("lefted", [*params, 5])
                pair.check_view("right_side", [*params, 0])
                pair.check_query(views["right_side"], [*params, 0])


_ids = st.integers(0, 7)
_a = st.sampled_from(_POOLS["a"])


@settings(max_examples=25, deadline=None)
@given(operation_lists(st.tuples(st.just("insert"), _ids, _a, st.sampled_from(_POOLS["c"])),
                       st.tuples(st.just("move"), _ids, _a),
                       st.tuples(st.just("delete"), _ids),
                       max_size=12),
       st.lists(st.tuples(_a, _a, st.sampled_from(_POOLS["c"])), min_size=1, max_size=3))
def test_random_writes_and_reads_interleaved(operations: list[tuple[Any, ...]],
                                             reads: list[tuple[Any, Any, Any]]) -> None:
    views = {"two": READS["two"][0], "keyed_beside": READS["keyed_beside"][0]}

    def apply(pair: Pair, op: tuple[Any, ...]) -> None:
        if op[0] == "insert":
            pair.execute("DELETE FROM t WHERE id = ?", [op[1]])  # (a new row of that id)
            pair.execute("INSERT INTO t VALUES (?, ?, 1, ?)", [op[1], op[2], op[3]])
        elif op[0] == "move":
            pair.execute("UPDATE t SET a = ? WHERE id = ?", [op[2], op[1]])
        else:
            pair.execute("DELETE FROM t WHERE id = ?", [op[1]])

    def check_all(pair: Pair) -> None:
        pair.settle()
        for a1, a2, c in reads:
            pair.check_view("two", [a1, a2])
            pair.check_view("keyed_beside", [a1, a2, c])
            pair.check_query(views["keyed_beside"], [a1, a2, c])

    run_operations(Pair.of(SCHEMA, views), operations, apply, check_all)


def test_a_list_under_or_takes_exactly_its_values(tmp_path: Any) -> None:
    """Unlike a lone ``IN (?, ...)``, whose list takes any number of values, the OR's list
    takes as many as it has ``?``; an ad-hoc query with another count is another view, and
    a lone list beside it takes its own count."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        db.table("t").insert_many([(1, 1, 1, 5), (2, 2, 2, 5), (3, 3, 1, 6)])
        db.execute("CREATE VIEW w AS SELECT id FROM t WHERE a = ? OR a = ?")
        assert sorted(db.view("w").lookup(1, 3)) == [(1,), (3,)]
        with pytest.raises(ParameterCountError, match="takes 2 parameter"):
            db.view("w").lookup(1, 2, 3)
        with pytest.raises(ParameterCountError, match="takes 2 parameter"):
            db.query("SELECT id FROM t WHERE a = ? OR a = ?", [1, 2, 3])
        sql = "SELECT id FROM t WHERE (a = ? OR a = ?) AND b IN ({}) ORDER BY id"
        assert db.query(sql.format("?"), [1, 2, 1]) == [(1,)]
        assert db.query(sql.format("?, ?"), [1, 2, 1, 2]) == [(1,), (2,)]
        assert db.query("SELECT id FROM t WHERE a IN (?, ?) OR a = ? ORDER BY id",
                        [1, 2, 3]) == [(1,), (2,), (3,)]


@pytest.mark.parametrize("sql, params", [
    ("SELECT id FROM t WHERE a = ? OR b = ?", [1, 2]),
    ("SELECT id FROM t WHERE c = 5 AND (a = ? OR b = ?)", [1, 1]),
])
def test_or_on_two_columns_is_answered(sql: str, params: list[Any]) -> None:
    """Once refused, ``a = ? OR b = ?`` is answered as a union of keyed alternatives
    (tests/test_or_columns.py has its cases): here, as SQLite answers it."""
    with Pair.of(SCHEMA, {"v": sql}) as pair:
        pair.insert_many("t", [(1, 1, 1, 5), (2, 1, 2, 5), (3, 2, 2, 6), (4, None, 1, 5),
                               (5, 3, None, 5)])
        pair.settle()
        pair.check_view("v", params)
        pair.check_query(sql, params)
        assert pair.db.view("v").lookup(*params)  # (rows found: not vacuous)


@pytest.mark.parametrize("sql, named", [
    ("SELECT id FROM t WHERE a = ? OR a IS NULL", "IS NULL beside a parameter under OR"),
    ("SELECT id FROM t WHERE a IS NOT NULL OR a = ?", "IS NULL beside a parameter under OR"),
    ("SELECT id FROM t WHERE a <=> ? OR a = ?", "<=> parameter under OR"),
    ("SELECT id FROM t WHERE a = ? OR a = 3",
     "parameters must all compare one column"),
    ("SELECT id FROM t WHERE a = ? OR a > ?", "parameters must all compare one column"),
    ("SELECT id FROM t WHERE a = ? OR (a = ? AND c = 5)",
     "parameters must all compare one column"),
])
def test_what_or_does_not_support_is_refused_by_name(tmp_path: Any, sql: str,
                                                     named: str) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        with pytest.raises(ParameterError, match="unsupported use of a parameter") as raised:
            db.query(sql, [1] * sql.count("?"))
        assert named in str(raised.value)
        with pytest.raises(ParameterError, match="unsupported use of a parameter"):
            db.execute(f"CREATE VIEW v AS {sql}")
        assert db.views() == []


@pytest.mark.parametrize("sql, named", [
    ("SELECT count(*) FROM t WHERE a = ? OR a = ?",
     "aggregate over an IN (?, ...) parameter list whose column is not in GROUP BY"),
    ("SELECT id FROM t WHERE a = ? AND (a = ? OR a = ?)",
     "IN (?, ...) parameter list on a column another parameter compares"),
])
def test_what_the_list_does_not_support_is_refused_by_name(tmp_path: Any, sql: str,
                                                           named: str) -> None:
    """An aggregate across the OR's values (one row for all of them) and a second
    parameter on the OR's column are refused as the IN list's are."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        with pytest.raises(UnsupportedSqlError) as raised:
            db.query(sql, [1] * sql.count("?"))
        assert f"unsupported {named}" in str(raised.value)
        assert error_code(raised.value).mysql == 1235


_names = itertools.count()


def test_values_of_other_types_answer_as_mariadb(mysql_pair: MySQLPair) -> None:
    """A value of another type is compared with the column on its own, as the OR compares
    it (``s = 1`` finds '1' and '01': such a read is computed with the values as
    constants); through a view, ``db.query`` and the MySQL server's prepared statements."""
    mysql_pair.execute("CREATE TABLE k (id INT PRIMARY KEY, i INT, s VARCHAR(4), v INT)")
    mysql_pair.insert_many("k", [(1, 1, "1", 0), (2, 1, "01", 1), (3, 2, "x", 2),
                                 (4, None, None, 3), (5, 2, "1", 4), (6, 3, "y", 5)])
    reads = ["SELECT id FROM k WHERE i = ? OR i = ?",
             "SELECT id FROM k WHERE s = ? OR s = ?",
             "SELECT id, v FROM k WHERE v > 0 AND (s = ? OR s IN (?, ?))",
             "SELECT id FROM k WHERE (i = ? OR i = ?) AND s = ? ORDER BY v DESC LIMIT 1"]
    values: list[Any] = [1, "1", 1.0, 2.5, "01", None, "x", "X", 2]
    rng = random.Random(5)
    views = []
    for sql in reads:
        name = f"orv{next(_names)}"
        mysql_pair.create_view(name, sql)
        views.append((name, sql))
    with OverTheWire(mysql_pair) as wire:
        for round_ in range(3):
            if round_:
                mysql_pair.execute("UPDATE k SET s = ?, i = ? WHERE id = ?",
                                   [rng.choice(["1", "01", "x", None]),
                                    rng.choice([1, 2, None]), rng.randrange(1, 7)])
                mysql_pair.settle()
            for name, sql in views:
                for _ in range(4):
                    params = [rng.choice(values) for _ in range(sql.count("?"))]
                    mysql_pair.check_view(name, *params)
                    mysql_pair.check_query(sql, params)
                    wire.check_prepared(sql, params)


@pytest.mark.parametrize("sql, params", [
    ("SELECT id, a FROM t WHERE id = ? OR id = ? FOR UPDATE", [1, 3]),
    ("SELECT id, a FROM t WHERE id IN (?, ?) AND a IN (?, ?) FOR UPDATE", [1, 3, 1, 2]),
])
def test_a_locking_read_locks_and_answers_every_value_of_its_list(
        tmp_path: Any, sql: str, params: list[Any]) -> None:
    """A locking read by primary key names every value of a list whose ``?`` are fixed (an
    OR of equalities, one of several IN lists), not only the first, which feeds the
    reader's key: it locks the rows of all of them and answers all of them, its own
    writes included (rivulet/engine/transaction.py answers from the rows it locked)."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        db.table("t").insert_many([(1, 1, 0, 5), (2, 1, 0, 5), (3, 2, 0, 5)])
        first, second = db.transaction(), db.transaction()
        first.execute("UPDATE t SET a = 2 WHERE id = 1")  # (row 3 only the read locks)
        assert sorted(first.query(sql, params)) == [(1, 2), (3, 2)]
        held = db.locks.held(first.owner)
        assert {r for r in held if r[0] == "r"} == {("r", "t", (1,)), ("r", "t", (3,))}
        second.lock_timeout = 0.3
        assert second.query("SELECT id FROM t WHERE id = 2 FOR UPDATE") == [(2,)]
        with pytest.raises(LockWaitTimeoutError):
            second.query("SELECT id FROM t WHERE id = 3 FOR UPDATE")
        first.rollback()
        second.rollback()


@pytest.fixture
def db(tmp_path: Any) -> Iterator[rivulet.Database]:
    """A database for the ``server`` fixture (tests/conftest.py)."""
    database = rivulet.open(tmp_path / "db")
    database.execute(SCHEMA[0])
    database.table("t").insert_many([(1, 1, 3, 5), (2, 1, 2, 5), (3, 2, 1, 5), (4, None, 0, 5),
                                     (5, 3, 0, 6)])
    yield database
    database.close()


def test_over_the_mysql_server(db: rivulet.Database, server: ServerThread) -> None:
    """A prepared statement's OR is one view's list; a view of one read as a table
    answers every value's rows; one with a LIMIT, read by a value, says how to read it."""
    db.execute("CREATE VIEW two AS SELECT id, a FROM t WHERE a = ? OR a = ?")
    db.execute("CREATE VIEW top AS SELECT id FROM t WHERE a = ? OR a = ? ORDER BY b LIMIT 1")
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database="rivulet", autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT id FROM t WHERE c = 5 AND (a = %s OR a = %s) ORDER BY id",
                        (1, 2))
            assert cur.fetchall() == ((1,), (2,), (3,))
            cur.execute("SELECT id, a FROM two WHERE a IN (2, 3) ORDER BY id")
            assert cur.fetchall() == ((3, 2), (5, 3))
            with pytest.raises(pymysql.err.NotSupportedError, match="col = \\? OR col = \\?"):
                cur.execute("SELECT * FROM top WHERE a = 1")
    finally:
        conn.close()
    prepared = mysql.connector.connect(host="127.0.0.1", port=server.port, user="root",
                                       password="", database="rivulet", use_pure=True)
    try:
        cursor = prepared.cursor(prepared=True)
        cursor.execute("SELECT id FROM t WHERE a = ? OR a = ? ORDER BY id", (3, 1))
        assert [tuple(r) for r in cursor.fetchall()] == [(1,), (2,), (5,)]
        cursor.execute("SELECT id FROM t WHERE a = ? OR a = ? ORDER BY id", (None, 2))
        assert [tuple(r) for r in cursor.fetchall()] == [(3,)]
    finally:
        prepared.close()
