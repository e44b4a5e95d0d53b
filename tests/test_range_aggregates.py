"""Range parameters in aggregated queries (rivulet/dataflow/ops/range_aggregate.py):
``SELECT MAX(v) FROM t WHERE id <= ?``, ``SELECT k, SUM(v) ... WHERE ts >= ? GROUP BY k``,
``BETWEEN ? AND ?``, bounds on two or three columns (``WHERE ts > ? AND v <= ?``). Each
read answers what MariaDB answers for the same values written as literals, through
``db.query``, a view's ``lookup``, the MySQL server's text queries (whose literals become
parameters) and its prepared statements; and keeps answering so while rows
are inserted, updated (across a bound, and the current MIN or MAX away) and deleted with
several values of the parameters held at once, and after they are evicted. What the
operator does not keep is refused by name."""

from __future__ import annotations

import itertools
import random
import re
import threading
import time
from typing import Any

import pytest
from mysql_oracle import MySQLPair, OverTheWire

import rivulet
from rivulet.errors import ParameterError, RivuletError, UnsupportedSqlError, error_code

TABLE = ("CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, ts INT, d DECIMAL(6,2), "
         "dd DATE)")

#: Reads over ``t``, each with the kind of values its parameters take.
READS: list[tuple[str, str]] = [
    ("SELECT max(v) FROM t WHERE id <= ?", "int"),
    ("SELECT count(*) FROM t WHERE ts > ?", "int"),
    ("SELECT k, sum(v) FROM t WHERE ts >= ? GROUP BY k", "int"),
    ("SELECT min(v), max(v), count(v), count(*), avg(v), sum(d) FROM t WHERE ts < ?", "int"),
    ("SELECT k, count(*) AS n, min(d) FROM t WHERE ts BETWEEN ? AND ? GROUP BY k "
     "HAVING count(*) > 1", "int2"),
    ("SELECT count(DISTINCT k), max(d), min(id) FROM t WHERE dd >= ?", "date"),
    ("SELECT k, max(v) AS m FROM t WHERE ? < id GROUP BY k ORDER BY m DESC, k LIMIT 2", "int"),
    ("SELECT sum(v) + 1, count(*) * 2 FROM t WHERE v <= ?", "int"),
    # equality parameters beside the range: an implicit group (a row over no rows too)
    ("SELECT count(*), max(v), sum(d) FROM t WHERE k = ? AND ts >= ?", "key,int"),
    ("SELECT k, min(v), count(*) FROM t WHERE ts < ? AND k = ? GROUP BY k", "int,key"),
    ("SELECT ts, count(*) FROM t WHERE k = ? AND id BETWEEN ? AND ? GROUP BY ts "
     "HAVING count(*) >= 1", "key,int2"),
]

#: Reads with range parameters on two (or three) columns: a kept value is one value of
#: every bound, and a row counts in it where every column's bounds hold.
TWO_COLUMN_READS: list[tuple[str, str]] = [
    ("SELECT count(*), max(v), sum(d) FROM t WHERE ts > ? AND v <= ?", "int,int"),
    ("SELECT k, count(*), min(d) FROM t WHERE id BETWEEN ? AND ? AND ts >= ? GROUP BY k",
     "int2,int"),
    ("SELECT count(*), avg(v) FROM t WHERE k = ? AND dd >= ? AND ts < ?", "key,date,int"),
    ("SELECT k, sum(v), count(DISTINCT ts) FROM t WHERE ts >= ? AND v < ? AND id > ? "
     "GROUP BY k ORDER BY k", "int,int,int"),
    ("SELECT count(*), min(v) FROM t WHERE v BETWEEN ? AND ? AND ts BETWEEN ? AND ?",
     "int2,int2"),
    ("SELECT k, max(v) AS m FROM t WHERE ? < ts AND id <= ? AND ts < ? GROUP BY k "
     "HAVING count(*) > 1 ORDER BY m DESC, k LIMIT 2", "int,int,int"),
    ("SELECT count(*) FROM t WHERE d >= ? AND ts <= ?", "int,int"),
]

_names = itertools.count()


def _rows(rng: random.Random, ids: range) -> list[tuple]:
    return [(i, rng.randrange(3), rng.choice([None, *range(-5, 20)]),
             rng.choice([None, *range(12)]), rng.choice([None, rng.randrange(-300, 300) / 4]),
             rng.choice([None, f"2024-01-{rng.randrange(1, 9):02d}"]))
            for i in ids]


def _value(rng: random.Random, kind: str) -> list[Any]:
    """Parameters: values equal to the column's (boundaries), between them, past them,
    of other types (text, a fraction) and NULL."""
    pool: list[Any]
    if kind == "date":
        pool = ["2024-01-03", "2024-01-05", "2024-1-7", "2023-12-31", None, "2024-01-04 12:00"]
        return [rng.choice(pool)]
    if "," in kind:
        return [v for part in kind.split(",") for v in _value(rng, part)]
    if kind == "key":  # an equality's: values of the column, none, another type, NULL
        return [rng.choice([0, 1, 2, 5, "1", 1.0, 1.5, None])]
    pool = [*range(-2, 14), 2.5, "3", "4.5", None, 7.0]
    n = 2 if kind == "int2" else 1
    return [rng.choice(pool) for _ in range(n)]


def _views(pair: MySQLPair,
           reads: list[tuple[str, str]] = READS) -> list[tuple[str, str, str]]:
    out = []
    for sql, kind in reads:
        name = f"ra{next(_names)}"
        pair.create_view(name, sql)
        out.append((name, sql, kind))
    return out


def _check(pair: MySQLPair, views: list[tuple[str, str, str]],
           held: dict[str, list[list[Any]]], rng: random.Random) -> None:
    """Reads of every view: the values read before (held, unless evicted) and new ones."""
    pair.settle()
    for name, sql, kind in views:
        for _ in range(3):
            held[name].append(_value(rng, kind))
        for params in held[name]:
            pair.check_view(name, *params)
        pair.check_query(sql, held[name][-1])


def test_range_aggregates_answer_as_mariadb_while_rows_change(mysql_pair: MySQLPair) -> None:
    """Several values of each view's parameters held at once; each round of writes moves
    rows across the bounds, takes the current MIN/MAX away, adds NULLs, deletes rows."""
    rng = random.Random(30)
    mysql_pair.execute(TABLE)
    mysql_pair.insert_many("t", _rows(rng, range(40)))
    views = _views(mysql_pair)
    held: dict[str, list[list[Any]]] = {name: [] for name, _, _ in views}
    _check(mysql_pair, views, held, rng)
    next_id = 100
    for _ in range(6):
        for _ in range(3):
            mysql_pair.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
                               list(_rows(rng, range(next_id, next_id + 1))[0]))
            next_id += 1
        mysql_pair.execute("UPDATE t SET ts = ? WHERE id = ?",
                           [rng.choice([None, *range(12)]), rng.randrange(40)])
        mysql_pair.execute("UPDATE t SET v = ? WHERE id = ?",
                           [rng.choice([None, -10, 50]), rng.randrange(40)])
        mysql_pair.execute("UPDATE t SET v = v - 25 WHERE v >= ?", [rng.randrange(15, 30)])
        mysql_pair.execute("UPDATE t SET id = ? WHERE id = ?", [next_id, rng.randrange(40)])
        next_id += 1
        mysql_pair.execute("DELETE FROM t WHERE ts = ?", [rng.randrange(12)])
        mysql_pair.execute("DELETE FROM t WHERE id = ?", [rng.randrange(40)])
        _check(mysql_pair, views, held, rng)


def test_range_parameters_on_two_columns_answer_as_mariadb_while_rows_change(
        mysql_pair: MySQLPair) -> None:
    """Range parameters on two (and three) columns: a write updates the kept values whose
    ranges, of every column, hold its row; rows move across each column's bounds (to NULL
    too) while several values are held per view."""
    rng = random.Random(31)
    mysql_pair.execute(TABLE)
    mysql_pair.insert_many("t", _rows(rng, range(40)))
    views = _views(mysql_pair, TWO_COLUMN_READS)
    held: dict[str, list[list[Any]]] = {name: [] for name, _, _ in views}
    _check(mysql_pair, views, held, rng)
    next_id = 100
    for _ in range(6):
        for _ in range(3):
            mysql_pair.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
                               list(_rows(rng, range(next_id, next_id + 1))[0]))
            next_id += 1
        mysql_pair.execute("UPDATE t SET ts = ? WHERE id = ?",
                           [rng.choice([None, *range(12)]), rng.randrange(40)])
        mysql_pair.execute("UPDATE t SET v = ? WHERE id = ?",
                           [rng.choice([None, -10, *range(20)]), rng.randrange(40)])
        mysql_pair.execute("UPDATE t SET v = ts, ts = ? WHERE k = ?",
                           [rng.randrange(12), rng.randrange(3)])
        mysql_pair.execute("UPDATE t SET dd = ?, d = ? WHERE id = ?",
                           [rng.choice([None, "2024-01-02", "2024-01-06"]),
                            rng.choice([None, 1, 4.5]), rng.randrange(40)])
        mysql_pair.execute("DELETE FROM t WHERE v = ?", [rng.randrange(20)])
        mysql_pair.execute("DELETE FROM t WHERE id = ?", [rng.randrange(40)])
        _check(mysql_pair, views, held, rng)


def test_two_column_values_evicted_under_memory_pressure_are_filled_again(
        mysql_pair: MySQLPair) -> None:
    """The kept values of a range aggregate over two columns are evicted as a small memory
    limit requires while rows change; a value read again is computed anew from the rows of
    its first column's range within its other column's bounds."""
    mysql_pair.db.close()
    mysql_pair.db = rivulet.open(mysql_pair.path, memory_limit="96KB")
    rng = random.Random(4)
    mysql_pair.execute("CREATE TABLE p (id INT PRIMARY KEY, g INT, v INT, w INT)")
    mysql_pair.insert_many("p", [(i, rng.randrange(8), rng.randrange(1000), rng.randrange(50))
                                 for i in range(400)])
    sql = ("SELECT g, min(v), max(v), count(*) FROM p WHERE id <= ? AND w > ? GROUP BY g")
    mysql_pair.create_view("mem2", sql)
    for round_ in range(3):
        for bound in rng.sample(range(-5, 420), 30):
            mysql_pair.check_view("mem2", bound, rng.randrange(-2, 52))
        for _ in range(5):
            mysql_pair.execute("UPDATE p SET v = ?, w = ? WHERE id = ?",
                               [rng.randrange(1000), rng.randrange(50), rng.randrange(400)])
            mysql_pair.execute("DELETE FROM p WHERE id = ?", [rng.randrange(400)])
        del round_
    assert mysql_pair.db.stats()["evictions"] > 0


def test_the_current_extreme_taken_away_finds_the_next(mysql_pair: MySQLPair) -> None:
    """MIN and MAX over a range keep every value of it: deleting or updating the extreme
    (several rows hold it) answers the next one, for each value of the parameter held."""
    mysql_pair.execute("CREATE TABLE m (id INT PRIMARY KEY, at INT, v INT)")
    mysql_pair.insert_many("m", [(1, 1, 10), (2, 2, 50), (3, 3, 50), (4, 4, 30),
                                 (5, 5, None), (6, None, 99)])
    sql = "SELECT min(v), max(v), count(*), count(v) FROM m WHERE at >= ?"
    mysql_pair.create_view("ext", sql)
    bounds = [0, 1, 2, 3, 4, 5, 6, None]

    def read_all() -> None:
        for b in bounds:
            mysql_pair.check_view("ext", b)

    read_all()
    for write in ["DELETE FROM m WHERE id = 2", "UPDATE m SET v = 5 WHERE id = 3",
                  "UPDATE m SET at = 7 WHERE id = 1", "UPDATE m SET at = 2 WHERE id = 6",
                  "DELETE FROM m WHERE v = 99", "INSERT INTO m VALUES (7, 4, 30)",
                  "DELETE FROM m WHERE id = 4", "DELETE FROM m"]:
        mysql_pair.execute(write)
        read_all()


def test_evicted_values_are_filled_again(mysql_pair: MySQLPair) -> None:
    """Evicting the reader's keys, or every partial key (the range aggregate's values too),
    then writing: the values read again are computed anew, and right."""
    mysql_pair.execute("CREATE TABLE e (id INT PRIMARY KEY, g INT, v INT)")
    mysql_pair.insert_many("e", [(i, i % 2, i * 3 % 7) for i in range(1, 15)])
    sql = "SELECT g, max(v), sum(v) FROM e WHERE id < ? GROUP BY g"
    mysql_pair.create_view("ev", sql)
    db = mysql_pair.db
    for b in (3, 8, 15):
        mysql_pair.check_view("ev", b)
    mysql_pair.settle()
    assert db.evict("ev") == 3
    mysql_pair.execute("UPDATE e SET v = 100 WHERE id = 2")
    for b in (3, 8, 15):
        mysql_pair.check_view("ev", b)
    mysql_pair.settle()
    assert db.evict() >= 3
    mysql_pair.execute("DELETE FROM e WHERE id = 2")
    mysql_pair.execute("INSERT INTO e VALUES (20, 1, 9)")
    for b in (2, 3, 8, 15, 21):
        mysql_pair.check_view("ev", b)


def test_values_evicted_under_memory_pressure_are_filled_again(mysql_pair: MySQLPair) -> None:
    """Under a memory limit far below what many values' groups take, the values held are
    evicted as the limit requires (the range aggregate's with its reader's) while rows
    change; every read still answers as MariaDB."""
    mysql_pair.db.close()
    mysql_pair.db = rivulet.open(mysql_pair.path, memory_limit="96KB")
    rng = random.Random(3)
    mysql_pair.execute("CREATE TABLE p (id INT PRIMARY KEY, g INT, v INT)")
    mysql_pair.insert_many("p", [(i, rng.randrange(8), rng.randrange(1000)) for i in range(400)])
    sql = "SELECT g, min(v), max(v), count(*) FROM p WHERE id <= ? GROUP BY g"
    mysql_pair.create_view("mem", sql)
    for round_ in range(3):
        for bound in rng.sample(range(-5, 420), 40):
            mysql_pair.check_view("mem", bound)
        for _ in range(5):
            mysql_pair.execute("UPDATE p SET v = ? WHERE id = ?",
                               [rng.randrange(1000), rng.randrange(400)])
            mysql_pair.execute("DELETE FROM p WHERE id = ?", [rng.randrange(400)])
        del round_
    assert mysql_pair.db.stats()["evictions"] > 0


def test_reads_and_evictions_racing_writes_leave_exact_answers(mysql_pair: MySQLPair) -> None:
    """Readers missing and filling values, and an evictor, run while writes commit; once
    the writes have settled every value (held or filled anew) answers as MariaDB."""
    rng = random.Random(8)
    mysql_pair.execute("CREATE TABLE r (id INT PRIMARY KEY, g INT, v INT)")
    mysql_pair.insert_many("r", [(i, i % 3, rng.randrange(100)) for i in range(60)])
    sql = "SELECT g, max(v), min(v), count(*) FROM r WHERE id > ? GROUP BY g"
    mysql_pair.create_view("race", sql)
    db = mysql_pair.db
    view = db.view("race")
    done = threading.Event()
    errors: list[BaseException] = []

    def read(seed: int) -> None:
        local = random.Random(seed)
        try:
            while not done.is_set():
                view.lookup(local.randrange(-2, 70))
        except BaseException as exc:  # noqa: BLE001 -- reported below
            errors.append(exc)

    def evict() -> None:
        try:
            while not done.is_set():
                db.evict("race" if rng.random() < 0.5 else None)
                time.sleep(0.005)
        except BaseException as exc:  # noqa: BLE001 -- reported below
            errors.append(exc)

    threads = [threading.Thread(target=read, args=(s,), daemon=True) for s in range(3)]
    threads.append(threading.Thread(target=evict, daemon=True))
    for thread in threads:
        thread.start()
    try:
        for step in range(40):
            mysql_pair.execute("UPDATE r SET v = ? WHERE id = ?",
                               [rng.randrange(100), rng.randrange(60)])
            mysql_pair.execute("INSERT INTO r VALUES (?, ?, ?)",
                               [100 + step, rng.randrange(3), rng.randrange(100)])
            mysql_pair.execute("DELETE FROM r WHERE id = ?", [rng.randrange(60)])
    finally:
        done.set()
        for thread in threads:
            thread.join(30)
    assert not errors, errors
    for bound in range(-2, 70, 3):
        mysql_pair.check_view("race", bound)


def test_range_aggregates_over_a_join_and_distinct(mysql_pair: MySQLPair) -> None:
    mysql_pair.execute("CREATE TABLE a (id INT PRIMARY KEY, at DATETIME, u INT)")
    mysql_pair.execute("CREATE TABLE u (id INT PRIMARY KEY, name VARCHAR(8))")
    mysql_pair.insert_many("u", [(1, "x"), (2, "y"), (3, "x")])
    mysql_pair.insert_many("a", [(i, f"2024-01-0{1 + i % 5} 1{i % 3}:00:00", 1 + i % 3)
                                 for i in range(12)])
    checks = [
        ("SELECT u.name, count(*) FROM a JOIN u ON u.id = a.u WHERE a.at > ? GROUP BY u.name",
         [["2024-01-03"], ["2024-01-03 10:00:00"], ["2024-01-02 11:00:00"], ["2025-01-01"]]),
        ("SELECT DISTINCT count(*) FROM a WHERE at < ? GROUP BY u",
         [["2024-01-04"], ["2024-01-01 10:00:00"]]),
    ]
    names = []
    for sql, _ in checks:
        name = f"ra{next(_names)}"
        mysql_pair.create_view(name, sql)
        names.append(name)
    for round_ in range(2):
        for name, (sql, param_sets) in zip(names, checks):
            for params in param_sets:
                mysql_pair.check_view(name, *params)
                mysql_pair.check_query(sql, params)
        mysql_pair.execute("UPDATE a SET at = '2024-01-03 10:00:00' WHERE id < 4")
        mysql_pair.execute("DELETE FROM u WHERE id = 3")
        del round_


def test_over_the_wire_text_and_prepared(mysql_pair: MySQLPair) -> None:
    """The MySQL server turns a text query's literals into parameters (one view for every
    value), and a prepared statement sends typed values: both answer as MariaDB."""
    mysql_pair.execute(TABLE)
    mysql_pair.insert_many("t", _rows(random.Random(7), range(30)))
    mysql_pair.settle()
    with OverTheWire(mysql_pair) as wire:
        texts = ["SELECT max(v) FROM t WHERE id <= 5", "SELECT max(v) FROM t WHERE id <= 12",
                 "SELECT count(*) FROM t WHERE ts > 3", "SELECT count(*) FROM t WHERE ts > 3.5",
                 "SELECT k, sum(v) FROM t WHERE ts >= 4 GROUP BY k ORDER BY k",
                 "SELECT count(*) FROM t WHERE dd BETWEEN '2024-01-02' AND '2024-01-05'",
                 # range parameters on two columns (once refused)
                 "SELECT count(*), max(v) FROM t WHERE id <= 20 AND ts > 3",
                 "SELECT k, sum(v) FROM t WHERE ts BETWEEN 2 AND 9 AND v >= '3' GROUP BY k "
                 "ORDER BY k"]
        for write in ("", "UPDATE t SET ts = 4, v = 1000 WHERE id = 3"):
            if write:
                mysql_pair.execute(write)
                mysql_pair.settle()
            for sql in texts:
                wire.check_text(sql)
        for sql, params in [("SELECT max(v), count(*) FROM t WHERE id <= ?", [7]),
                            ("SELECT max(v), count(*) FROM t WHERE id <= ?", [None]),
                            ("SELECT k, count(*) FROM t WHERE ts > ? GROUP BY k", [2]),
                            ("SELECT min(d) FROM t WHERE dd >= ?", ["2024-01-04"]),
                            ("SELECT count(*) FROM t WHERE id <= ? AND ts > ?", [12, 2]),
                            ("SELECT count(*) FROM t WHERE id <= ? AND ts > ?", [12, None])]:
            wire.check_prepared(sql, params)


@pytest.mark.parametrize("sql, named", [
    ("SELECT group_concat(v) FROM t WHERE id <= ?", "GROUP_CONCAT() in an aggregated query "
     "with a range parameter"),
    ("SELECT var_pop(v) FROM t WHERE id <= ?", "VAR_POP() in an aggregated query with a "
     "range parameter"),
    ("SELECT k, count(*) FROM t WHERE k IN (?, ?) AND id <= ? GROUP BY k",
     "IN (?, ...) parameter list beside a range parameter in an aggregated query"),
    ("SELECT count(*) FROM t WHERE k <=> ? AND id <= ?",
     "<=> parameter or two parameters on one column beside a range parameter"),
    ("SELECT count(*) FROM t WHERE k = ? AND k = ? AND id <= ?",
     "<=> parameter or two parameters on one column beside a range parameter"),
    ("SELECT k, (SELECT max(id) FROM t AS x WHERE x.k = t.k) FROM t WHERE id <= ? GROUP BY k",
     "scalar subquery in an aggregated query with a range parameter"),
])
def test_what_a_range_aggregate_does_not_keep_is_refused_by_name(
        tmp_path: Any, sql: str, named: str) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        refused = re.escape(f"unsupported {named}")
        with pytest.raises(UnsupportedSqlError, match=refused) as raised:
            db.query(sql, [1, 2, 3][: sql.count("?")])
        assert error_code(raised.value).mysql == 1235


def test_a_range_aggregate_view_is_read_by_lookup_only(tmp_path: Any) -> None:
    """Its rows exist per value of the parameters: no scan, no keys of other meaning."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        db.execute("CREATE VIEW c AS SELECT count(*) AS n FROM t WHERE id <= ?")
        view = db.view("c")
        assert view.lookup(3) == [(0,)]
        with pytest.raises(RivuletError, match="read it with lookup"):
            view.scan()
        with pytest.raises(RivuletError, match="read it with lookup"):
            view.lookup_many([1, 2])
        for sql in ("SELECT * FROM c", "SELECT t.id FROM t JOIN c ON c.n = t.id"):
            with pytest.raises(ParameterError, match="cannot be read as a table") as raised:
                db.query(sql)
            assert error_code(raised.value).mysql == 1210
