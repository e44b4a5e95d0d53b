"""Range parameters on two (or three) different columns in a query without aggregates
(``SELECT id FROM t WHERE a > ? AND b < ?``): the reader is sorted and cut by the first
range column written, and the other columns' bounds are checked over the rows it cut
(``ViewPlan.other_ranges``), before the answer is ordered, de-duplicated and cut to its
LIMIT. Each read answers what SQLite answers (integers, where the two agree) or MariaDB
answers (typed bounds: text on an INT column, DATETIME with text, BETWEEN of text and a
number, NULL bounds), through views, ``db.query`` and the MySQL server, while rows move
in and out of both ranges, and after their keys are evicted."""

from __future__ import annotations

import random
from typing import Any

import pytest
from mysql_oracle import MySQLPair, OverTheWire

import rivulet
from oracle import Pair
from rivulet.errors import ParameterError, RivuletError, error_code
from rivulet.plan import ir

TABLE = "CREATE TABLE t (id INT PRIMARY KEY, k INT, a INT, b INT, c INT)"

#: name -> (SELECT, how many ``?`` it has). ORDER BY ends with ``id`` wherever the answer
#: is cut, so that the answer is one.
VIEWS: dict[str, tuple[str, int]] = {
    "plain": ("SELECT id, a, b FROM t WHERE a > ? AND b < ?", 2),
    "betweens": ("SELECT id FROM t WHERE a BETWEEN ? AND ? AND b BETWEEN ? AND ?", 4),
    "keyed": ("SELECT id, b FROM t WHERE k = ? AND a >= ? AND b <= ? "
              "ORDER BY b DESC, id LIMIT 3 OFFSET 1", 3),
    "deduped": ("SELECT DISTINCT b FROM t WHERE a < ? AND b > ? ORDER BY b LIMIT 2", 2),
    "interleaved": ("SELECT id FROM t WHERE b > ? AND a <= ? AND b < ? AND a > ?", 4),
    "flipped": ("SELECT id, c FROM t WHERE ? < a AND b < ? ORDER BY id LIMIT 4", 2),
    "three": ("SELECT id FROM t WHERE a > ? AND b < ? AND c >= ? ORDER BY id", 3),
    "skipped": ("SELECT a, b FROM t WHERE b >= ? AND a <= ? ORDER BY a, b DESC, id "
               "LIMIT 2 OFFSET 2", 2),
}


def _row(rng: random.Random, i: int) -> tuple:
    def value() -> Any:
        return rng.choice([None, *range(10)])

    return (i, rng.randrange(3), value(), value(), value())


def _params(rng: random.Random, n: int) -> list[Any]:
    return [rng.choice([None, *range(-1, 11)]) for _ in range(n)]


def _check(pair: Pair, held: dict[str, list[list[Any]]], rng: random.Random) -> None:
    pair.settle()
    for name, (sql, n) in VIEWS.items():
        held[name].append(_params(rng, n))
        held[name].append(_params(rng, n))
        for params in held[name]:
            pair.check_view(name, params)
        pair.check_query(sql, held[name][-1])


def test_two_range_columns_answer_as_sqlite_while_rows_change() -> None:
    """Several values held per view; each round inserts rows, moves rows across both
    ranges (updates of either column, to NULL too), and deletes."""
    rng = random.Random(35)
    with Pair.of([TABLE], {name: sql for name, (sql, _) in VIEWS.items()}) as pair:
        pair.insert_many("t", [_row(rng, i) for i in range(50)])
        held: dict[str, list[list[Any]]] = {name: [] for name in VIEWS}
        _check(pair, held, rng)
        next_id = 100
        for _ in range(8):
            for _ in range(3):
                pair.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?)", list(_row(rng, next_id)))
                next_id += 1
            for column in ("a", "b", "c"):
                pair.execute(f"UPDATE t SET {column} = ? WHERE id = ?",
                             [rng.choice([None, *range(10)]), rng.randrange(50)])
            pair.execute("UPDATE t SET a = a + 3 WHERE k = ?", [rng.randrange(3)])
            pair.execute("DELETE FROM t WHERE id = ?", [rng.randrange(50)])
            pair.execute("DELETE FROM t WHERE b = ?", [rng.randrange(10)])
            _check(pair, held, rng)


def test_full_state_answers_as_sqlite() -> None:
    """With partial state off, the readers hold every row: the same answers."""
    rng = random.Random(36)
    with Pair.of([TABLE], {}) as pair:
        pair.reopen(partial=False)
        for name, (sql, _) in VIEWS.items():
            pair.create_view(name, sql)
        pair.insert_many("t", [_row(rng, i) for i in range(40)])
        held: dict[str, list[list[Any]]] = {name: [] for name in VIEWS}
        for _ in range(3):
            _check(pair, held, rng)
            pair.execute("UPDATE t SET b = ? WHERE id < ?", [rng.randrange(10), 10])


def test_the_view_read_as_a_table_and_scanned_keeps_rows_in_some_range() -> None:
    """Read as a table (or scanned), the view's rows are those some values of its
    parameters answer: a NULL in any range column answers none."""
    rng = random.Random(37)
    with Pair.of([TABLE], {}) as pair:
        pair.insert_many("t", [_row(rng, i) for i in range(30)])
        pair.create_view("v", "SELECT id, a FROM t WHERE a > ? AND b < ? AND c <= ?")
        pair.settle()
        expected = sorted(pair.lite.execute(
            "SELECT id, a FROM t WHERE a IS NOT NULL AND b IS NOT NULL AND c IS NOT NULL")
            .fetchall())
        assert sorted(pair.db.query("SELECT * FROM v")) == expected
        assert sorted(pair.db.view("v").scan()) == expected
        assert sorted(pair.db.query("SELECT id FROM v WHERE a > 3")) == sorted(
            (i,) for i, a in expected if a > 3)


def test_evicted_keys_are_filled_again_under_a_memory_limit() -> None:
    """Under a memory limit far below what the keys' rows take, keys are evicted while rows
    change; every read (the other column's bounds checked over rows filled anew) still
    answers as SQLite."""
    rng = random.Random(38)
    with Pair.of([], {}) as pair:
        pair.reopen(memory_limit="96KB")
        pair.execute("CREATE TABLE p (id INT PRIMARY KEY, g INT, x INT, y INT)")
        pair.insert_many("p", [(i, rng.randrange(60), rng.randrange(100), rng.randrange(100))
                               for i in range(600)])
        pair.create_view("mem", "SELECT id, x, y FROM p WHERE g = ? AND x >= ? AND y < ? "
                         "ORDER BY y, id LIMIT 5")
        for _ in range(3):
            for _ in range(60):
                pair.check_view("mem", [rng.randrange(60), rng.randrange(100),
                                        rng.randrange(100)])
            for _ in range(10):
                pair.execute("UPDATE p SET y = ?, x = ? WHERE id = ?",
                             [rng.randrange(100), rng.randrange(100), rng.randrange(600)])
                pair.execute("DELETE FROM p WHERE id = ?", [rng.randrange(600)])
            pair.settle()
        assert pair.db.stats()["evictions"] > 0


def test_ranges_on_columns_of_two_joined_tables_answer_as_sqlite() -> None:
    """The first range column on one side of a join, the other on the other side: rows
    move in and out of the ranges by either table's writes (the join key too)."""
    rng = random.Random(42)
    reads = {
        "pairs": ("SELECT t.id, u.id FROM t JOIN u ON u.t_id = t.id WHERE t.a > ? AND "
                  "u.w < ? ORDER BY t.id, u.id", 2),
        "counts": ("SELECT t.k, count(*), max(u.w) FROM t JOIN u ON u.t_id = t.id "
                   "WHERE u.w BETWEEN ? AND ? AND t.a >= ? GROUP BY t.k ORDER BY t.k", 3),
    }
    schema = [TABLE, "CREATE TABLE u (id INT PRIMARY KEY, t_id INT, w INT)"]
    with Pair.of(schema, {name: sql for name, (sql, _) in reads.items()}) as pair:
        pair.insert_many("t", [_row(rng, i) for i in range(30)])
        pair.insert_many("u", [(i, rng.randrange(30), rng.choice([None, *range(10)]))
                               for i in range(40)])
        held: dict[str, list[list[Any]]] = {name: [] for name in reads}
        for _ in range(6):
            pair.settle()
            for name, (sql, n) in reads.items():
                held[name].append(_params(rng, n))
                for params in held[name]:
                    pair.check_view(name, params)
                pair.check_query(sql, held[name][-1])
            pair.execute("UPDATE u SET w = ?, t_id = ? WHERE id = ?",
                         [rng.choice([None, *range(10)]), rng.randrange(30), rng.randrange(40)])
            pair.execute("UPDATE t SET a = ? WHERE id = ?",
                         [rng.choice([None, *range(10)]), rng.randrange(30)])
            pair.execute("DELETE FROM u WHERE id = ?", [rng.randrange(40)])


TYPED = ("CREATE TABLE e (id INT PRIMARY KEY, n INT, at DATETIME, d DECIMAL(6,2), "
         "s VARCHAR(8))")

#: Reads whose bounds take values of other types than their columns (MySQL's comparison
#: of the two), each with its parameter sets.
TYPED_READS: list[tuple[str, list[list[Any]]]] = [
    ("SELECT id FROM e WHERE at >= ? AND n < ? ORDER BY id",
     [["2024-01-03", "4"], ["2024-01-03 10:00:00", "4.5"], ["2024-01-02", 3.5],
      ["nonsense", 5], ["2024-01-03", None], [None, 3], ["2024-1-4", "abc"]]),
    ("SELECT id, d FROM e WHERE n > ? AND at < ? ORDER BY d, id",
     [["1", "2024-01-04"], [1.5, "2024-01-04 10:30:00"], ["x", "2024-01-05"],
      [2, "2024-01-03 00:00:00.000"], [0, None]]),
    ("SELECT id FROM e WHERE d > ? AND n BETWEEN ? AND ? ORDER BY id",
     [["1.25", "1", 4], [0, 2, "3.5"], [-1, "a", 5], ["2", None, 3], [0.5, 1.0, "4"]]),
    # BETWEEN of text and a number compares the three as DOUBLEs, on either column
    ("SELECT id FROM e WHERE n > ? AND s BETWEEN ? AND ? ORDER BY id",
     [[-1, 0, "b"], [0, "a", 5], [1, "0", "c"], [-1, None, 1]]),
    ("SELECT id FROM e WHERE s BETWEEN ? AND ? AND n BETWEEN ? AND ? ORDER BY id",
     [[0, "b", "1", 4], ["a", "c", 0, "3x"]]),
    ("SELECT id FROM e WHERE s >= ? AND at BETWEEN ? AND ? ORDER BY id",
     [["b", "2024-01-02", "2024-01-04"], ["", "2024-01-02 11:00:00", "2024-01-05"],
      ["a", 20240102, "2024-01-04"], ["c", "2024-01-03", None]]),
    # range aggregates (keyed by every bound's value)
    ("SELECT count(*), max(d) FROM e WHERE at >= ? AND n < ?",
     [["2024-01-03", "4"], ["2024-01-03 10:00:00", "4.5"], ["2024-01-02", 3.5],
      ["nonsense", 5], ["2024-01-03", None], ["2024-1-4", "abc"]]),
    ("SELECT n, count(*), min(d) FROM e WHERE d > ? AND at BETWEEN ? AND ? GROUP BY n "
     "ORDER BY n", [["-1.5", "2024-01-02", "2024-01-04"], [0, "2024-01-02 11:00:00", None],
                    [1, 20240102, "2024-01-05"]]),
    ("SELECT count(*) FROM e WHERE n BETWEEN ? AND ? AND s > ?",
     [[1, "4", "a"], ["a", 5, "b"], [0, 3, 1]]),
]


def _typed_rows(rng: random.Random, ids: range) -> list[tuple]:
    return [(i, rng.choice([None, *range(6)]),
             rng.choice([None, f"2024-01-0{rng.randrange(1, 6)} 1{rng.randrange(3)}:00:00"]),
             rng.choice([None, rng.randrange(-20, 20) / 4]),
             rng.choice([None, "a", "b", "bb", "c", "B"]))
            for i in ids]


def test_typed_bounds_answer_as_mariadb_while_rows_change(mysql_pair: MySQLPair) -> None:
    rng = random.Random(39)
    mysql_pair.execute(TYPED)
    mysql_pair.insert_many("e", _typed_rows(rng, range(40)))
    names = []
    for i, (sql, _) in enumerate(TYPED_READS):
        names.append(f"typed{i}")
        mysql_pair.create_view(names[-1], sql)
    next_id = 100
    for _ in range(3):
        for name, (sql, param_sets) in zip(names, TYPED_READS):
            for params in param_sets:
                mysql_pair.check_view(name, *params)
                mysql_pair.check_query(sql, params)
        for row in _typed_rows(rng, range(next_id, next_id + 3)):
            mysql_pair.execute("INSERT INTO e VALUES (?, ?, ?, ?, ?)", list(row))
        next_id += 3
        mysql_pair.execute("UPDATE e SET n = ? WHERE id < ?", [rng.randrange(6), 8])
        mysql_pair.execute("UPDATE e SET at = NULL WHERE id = ?", [rng.randrange(40)])
        mysql_pair.execute("DELETE FROM e WHERE id = ?", [rng.randrange(40)])


def test_over_the_wire_text_and_prepared(mysql_pair: MySQLPair) -> None:
    """The MySQL server turns a text query's literals into parameters (one view for every
    value), and a prepared statement sends typed values: both answer as MariaDB."""
    mysql_pair.execute(TYPED)
    mysql_pair.insert_many("e", _typed_rows(random.Random(40), range(30)))
    mysql_pair.settle()
    with OverTheWire(mysql_pair) as wire:
        texts = ["SELECT id FROM e WHERE n > 1 AND d < 2 ORDER BY id",
                 "SELECT id FROM e WHERE n > 2 AND d < 3.5 ORDER BY id",
                 "SELECT id FROM e WHERE at >= '2024-01-03' AND n <= '3' ORDER BY id",
                 "SELECT id, s FROM e WHERE n BETWEEN 1 AND 4 AND s > 'a' ORDER BY s, id "
                 "LIMIT 3"]
        for write in ("", "UPDATE e SET n = 3, d = 1 WHERE id < 10"):
            if write:
                mysql_pair.execute(write)
                mysql_pair.settle()
            for sql in texts:
                wire.check_text(sql)
        # (the literals became parameters: views of two range columns answered them)
        assert any(plan.other_ranges for name, plan in mysql_pair.db.catalog.views.items()
                   if ir.is_adhoc(name))
        for sql, params in [("SELECT id FROM e WHERE n > ? AND d < ? ORDER BY id", [1, 2]),
                            ("SELECT id FROM e WHERE n > ? AND d < ? ORDER BY id", [1, None]),
                            ("SELECT id FROM e WHERE at < ? AND n >= ? ORDER BY id",
                             ["2024-01-04", "2"])]:
            wire.check_prepared(sql, params)


def test_a_view_of_two_range_columns_is_read_by_lookup_only(tmp_path: Any) -> None:
    """A key names no read of a range view (its bounds are none of it): lookup_many is
    refused by name, on one range column as on two."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        db.execute("CREATE VIEW one AS SELECT id FROM t WHERE k = ? AND a > ?")
        db.execute("CREATE VIEW two AS SELECT id FROM t WHERE k = ? AND a > ? AND b < ?")
        for name in ("one", "two"):
            with pytest.raises(RivuletError, match="read by range parameters: read it with "
                               "lookup"):
                db.view(name).lookup_many([1, 2])
        # a range aggregate of two columns answers each value of its bounds apart
        db.execute("CREATE VIEW counted AS SELECT count(*) AS n FROM t WHERE a > ? AND b < ?")
        view = db.view("counted")
        assert view.lookup(1, 2) == [(0,)]
        for read in (view.scan, lambda: view.lookup_many([(1, 2)])):
            with pytest.raises(RivuletError, match="read it with lookup"):
                read()
        with pytest.raises(ParameterError, match="cannot be read as a table") as raised:
            db.query("SELECT * FROM counted")
        assert error_code(raised.value).mysql == 1210


def test_aggregated_queries_of_two_range_columns_answer_as_sqlite(tmp_path: Any) -> None:
    """Once refused by name: an aggregate under range parameters on two columns is a range
    aggregate keyed by every bound's value (tests/test_range_aggregates.py compares it with
    MariaDB across writes and evictions)."""
    rng = random.Random(41)
    reads = {"counted": ("SELECT count(*) FROM t WHERE a > ? AND b < ?", 2),
             "grouped": ("SELECT k, max(c) FROM t WHERE a BETWEEN ? AND ? AND b >= ? "
                         "GROUP BY k ORDER BY k", 3)}
    with Pair.of([TABLE], {name: sql for name, (sql, _) in reads.items()}) as pair:
        pair.insert_many("t", [_row(rng, i) for i in range(40)])
        for _ in range(3):
            pair.settle()
            for name, (sql, n) in reads.items():
                assert pair.db.view(name).plan.bounds_keyed
                for _ in range(4):
                    params = _params(rng, n)
                    pair.check_view(name, params)
                    pair.check_query(sql, params)
            pair.execute("UPDATE t SET b = ?, a = ? WHERE id = ?",
                         [rng.randrange(10), rng.randrange(10), rng.randrange(40)])
