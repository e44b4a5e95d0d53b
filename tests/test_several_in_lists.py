"""Several ``IN (?, ...)`` parameter lists in one query (``a IN (?, ?) AND b IN (?, ?, ?)``,
rivulet/plan/params.py): each list keys its column, a read looks up every combination of the
lists' values, and each list takes as many values as it has ``?``. Each read answers what
MariaDB answers for the same values written as literals, through ``db.query``, views, the
MySQL server's text queries and its prepared statements, while rows change; values that
find no row (NULL, another type), duplicates and values compared as doubles included."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from mysql_oracle import MySQLPair, OverTheWire

import rivulet
from rivulet.errors import ParameterCountError, UnsupportedSqlError, error_code

TABLE = "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(4), c DATE, v INT)"

#: Reads, with how many values each list (then each other parameter) takes.
READS: list[tuple[str, list[str]]] = [
    ("SELECT id, v FROM t WHERE a IN (?, ?) AND b IN (?, ?)", ["a", "a", "b", "b"]),
    ("SELECT id FROM t WHERE b IN (?) AND a IN (?, ?, ?) ORDER BY v DESC, id LIMIT 3",
     ["b", "a", "a", "a"]),
    ("SELECT a, b, count(*), sum(v) FROM t WHERE a IN (?, ?) AND b IN (?, ?) GROUP BY a, b",
     ["a", "a", "b", "b"]),
    ("SELECT DISTINCT a FROM t WHERE v = ? AND a IN (?, ?) AND c IN (?, ?)",
     ["v", "a", "a", "c", "c"]),
    ("SELECT id FROM t WHERE a IN (?, ?) AND b IN (?, ?) AND v >= ?", ["a", "a", "b", "b", "v"]),
]

_names = itertools.count()


def _rows(rng: random.Random, ids: range) -> list[tuple]:
    return [(i, rng.choice([None, 0, 1, 2, 3]), rng.choice([None, "x", "y", "1", "01"]),
             rng.choice([None, "2024-01-01", "2024-01-02"]), rng.randrange(6)) for i in ids]


def _value(rng: random.Random, role: str) -> Any:
    pools: dict[str, list[Any]] = {
        "a": [0, 1, 2, 3, 9, None, "2", 1.0, 2.5],
        "b": ["x", "y", "1", "01", "z", None, "X"],
        "c": ["2024-01-01", "2024-1-2", "2024-01-03", None],
        "v": [0, 2, 4, "3"],
    }
    return rng.choice(pools[role])


def test_several_in_lists_answer_as_mariadb_while_rows_change(mysql_pair: MySQLPair) -> None:
    rng = random.Random(12)
    mysql_pair.execute(TABLE)
    mysql_pair.insert_many("t", _rows(rng, range(40)))
    views = []
    for sql, roles in READS:
        name = f"il{next(_names)}"
        mysql_pair.create_view(name, sql)
        views.append((name, sql, roles))
    held: dict[str, list[list[Any]]] = {name: [] for name, _, _ in views}
    next_id = 100
    for round_ in range(5):
        if round_:
            mysql_pair.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)",
                               list(_rows(rng, range(next_id, next_id + 1))[0]))
            next_id += 1
            mysql_pair.execute("UPDATE t SET b = ? WHERE id = ?",
                               [rng.choice(["x", "y", None]), rng.randrange(40)])
            mysql_pair.execute("UPDATE t SET a = ? WHERE id = ?", [rng.randrange(4),
                                                                   rng.randrange(40)])
            mysql_pair.execute("DELETE FROM t WHERE id = ?", [rng.randrange(40)])
        for name, sql, roles in views:
            for _ in range(4):
                held[name].append([_value(rng, role) for role in roles])
            for params in held[name]:
                mysql_pair.check_view(name, *params)
            mysql_pair.check_query(sql, held[name][-1])


def test_distinct_holds_across_the_combinations(mysql_pair: MySQLPair) -> None:
    """A row of one combination may equal a row of another: DISTINCT keeps one, and ORDER
    BY with LIMIT cuts the rows of all the combinations together."""
    mysql_pair.execute("CREATE TABLE d (id INT PRIMARY KEY, a INT, c INT, v INT)")
    mysql_pair.insert_many("d", [(1, 1, 1, 5), (2, 1, 2, 5), (3, 2, 1, 6), (4, 2, 2, 4),
                                 (5, 1, 1, 7)])
    for sql in ("SELECT DISTINCT a FROM d WHERE a IN (?, ?) AND c IN (?, ?)",
                "SELECT DISTINCT v FROM d WHERE c IN (?, ?) AND a IN (?, ?) ORDER BY v",
                "SELECT a, v FROM d WHERE a IN (?, ?) AND c IN (?, ?) ORDER BY v DESC LIMIT 2"):
        name = f"il{next(_names)}"
        mysql_pair.create_view(name, sql)
        for params in ([1, 2, 1, 2], [1, 1, 2, 1], [2, 1, 2, 2]):
            mysql_pair.check_view(name, *params)
            mysql_pair.check_query(sql, params)


def test_each_list_takes_as_many_values_as_it_has_marks(tmp_path: Any) -> None:
    """Where one list would end among a read's values is the statement's to say: a view
    takes exactly its count; an ad-hoc query with other counts is another view."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        db.table("t").insert_many([(1, 1, "x", None, 0), (2, 2, "y", None, 0),
                                   (3, 3, "x", None, 0)])
        db.execute("CREATE VIEW w AS SELECT id FROM t WHERE a IN (?, ?) AND b IN (?)")
        assert sorted(db.view("w").lookup(1, 3, "x")) == [(1,), (3,)]
        with pytest.raises(ParameterCountError, match="takes 3 parameter"):
            db.view("w").lookup(1, 2, 3, "x")
        sql = "SELECT id FROM t WHERE a IN ({}) AND b IN ({}) ORDER BY id"
        assert db.query(sql.format("?, ?", "?"), [1, 2, "y"]) == [(2,)]
        assert db.query(sql.format("?", "?, ?"), [1, "y", "x"]) == [(1,)]
        assert db.query(sql.format("?, ?, ?", "?, ?"), [1, 2, 3, "y", "x"]) == [
            (1,), (2,), (3,)]


@pytest.mark.parametrize("sql, named", [
    ("SELECT id FROM t WHERE a IN (?, ?) AND a IN (?, ?)",
     "IN (?, ...) parameter list on a column another parameter compares, beside a second "
     "list"),
    ("SELECT id FROM t WHERE a = ? AND a IN (?, ?) AND b IN (?, ?)",
     "IN (?, ...) parameter list on a column another parameter compares, beside a second "
     "list"),
    ("SELECT count(*) FROM t WHERE a IN (?, ?) AND b IN (?, ?)",
     "aggregate over an IN (?, ...) parameter list whose column is not in GROUP BY"),
])
def test_what_several_lists_do_not_support_is_refused_by_name(
        tmp_path: Any, sql: str, named: str) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        with pytest.raises(UnsupportedSqlError) as raised:
            db.query(sql, [1] * sql.count("?"))
        assert f"unsupported {named}" in str(raised.value)
        assert error_code(raised.value).mysql == 1235


def test_several_lists_over_the_wire(mysql_pair: MySQLPair) -> None:
    """Text queries (their literals made parameters: each count its own view) and
    prepared statements."""
    mysql_pair.execute(TABLE)
    mysql_pair.insert_many("t", _rows(random.Random(4), range(30)))
    mysql_pair.settle()
    with OverTheWire(mysql_pair) as wire:
        texts = ["SELECT id FROM t WHERE a IN (1, 2) AND b IN ('x', 'y')",
                 "SELECT id FROM t WHERE a IN (1, 2, 3) AND b IN ('x')",
                 "SELECT id FROM t WHERE a IN (3) AND b IN ('x', '01', 'y')",
                 "SELECT id FROM t WHERE a IN (1, 2) AND b IN (1, 'x')",
                 "SELECT a, b, count(*) FROM t WHERE a IN (0, 1) AND b IN ('x', 'y') "
                 "GROUP BY a, b"]
        for write in ("", "UPDATE t SET a = 1, b = 'x' WHERE id < 5"):
            if write:
                mysql_pair.execute(write)
                mysql_pair.settle()
            for sql in texts:
                wire.check_text(sql)
        for sql, params in [("SELECT id FROM t WHERE a IN (?, ?) AND b IN (?, ?)",
                             [1, 2, "x", "y"]),
                            ("SELECT id FROM t WHERE a IN (?, ?, ?) AND b IN (?)",
                             [0, 1, None, "y"]),
                            ("SELECT id FROM t WHERE a IN (?, ?) AND b IN (?, ?)",
                             [3, 3, "01", "1"])]:
            wire.check_prepared(sql, params)
