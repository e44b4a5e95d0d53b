"""The Spark executor against the engine and SQLite (issue 4: one IR, two executors).

Every test computes views on Spark (rivulet/spark/compile.py) from a snapshot of the base
tables (rivulet/spark/snapshot.py) and compares with what the engine serves for the same
views (``lookup`` and ``scan``), with stated MySQL answers, and, for the generated
programs of tests/test_differential.py, with SQLite running the same SQL (tests/oracle.py).

* Explicit tests: the session's settings; snapshots (every type, consistency under
  concurrent writes); MySQL's expression semantics (the table of
  tests/test_mysql_semantics.py, NULLs, division, LIKE, the functions that run as UDFs);
  COUNT(DISTINCT), top-k ties, left-join padding, UNION, DISTINCT, the implicit group's
  default row, IN lists and ranges, dates and decimals.
* Differential tests (Hypothesis, few examples: each costs a few Spark jobs).

Spark tests share one local[2] session (tests/spark_fixtures.py) and never skip.
"""

from __future__ import annotations

import datetime as dt
import math
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from decimal import Context, Decimal
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, note, reject, settings
from hypothesis import strategies as st
from scenarios import Scenario, ViewSpec, lookups_for

import rivulet
from oracle import (
    Pair,
    assert_same_answer,
    in_arity,
    placeholder_count,
    same_multiset,
    with_in_arity,
)
from rivulet.errors import UnsupportedSqlError
from rivulet.spark import (
    compute_lookups,
    compute_view,
    get_session,
    load_snapshot,
    scan_view,
    take_snapshot,
)
from rivulet.spark.natives import like_pattern
from rivulet.spark.values import rows_from_arrow
from spark_fixtures import (  # spark_session: the shared ``spark`` fixture
    assert_rows_equal,
    assert_same_rows,
    spark_session,  # noqa: F401
    spark_tables,
)
from test_differential import (
    COMPOSED,
    T1,
    T2,
    Features,
    V,
    _scn,
    scenarios,
)
from test_differential import (
    ROWS as DIFF_ROWS,
)
from test_mysql_semantics import EXPRESSIONS, FILTERS, ROWS, _same

pytestmark = pytest.mark.spark

#: Few Hypothesis examples: each runs a Spark job or more (about a second each); ``--long``
#: runs more.
EXAMPLES = 60 if settings.default.max_examples >= 1000 else 5

Row = tuple

# --------------------------------------------------------------------------- the world

ITEMS = [
    # id, cat, score, price DECIMAL(10,2), day DATE, at DATETIME(6), f DOUBLE, raw BLOB,
    # flag BOOLEAN, amount DECIMAL(38, 18) (stored with 18 places), big BIGINT, note TEXT
    (1, "x", 10, Decimal("1.25"), dt.date(2020, 1, 2), dt.datetime(2020, 1, 2, 3, 4, 5, 6), 0.5,
     b"\x00\xff", 1, Decimal("3.14159"), 2**62, "hello\nworld"),
    (2, "x", 10, Decimal("2.50"), dt.date(1999, 12, 31), dt.datetime(1999, 12, 31, 23, 59, 59),
     -1.5, b"", 0, Decimal(-2), -(2**63), "a%b_c"),
    (3, "y", 7, None, None, None, None, None, None, None, None, None),
    (4, "y", 10, Decimal("0.10"), dt.date(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
     1e300, b"abc", 1, Decimal("12345678901234567890.5"), 2**63 - 1, "ABC"),
    (5, None, None, Decimal("3.00"), dt.date(2024, 2, 29), dt.datetime(2024, 2, 29, 12, 0), 2.5,
     b"a", 0, Decimal("0.000000000000000001"), 0, "12abc"),
    (6, "x", 3, Decimal("9.99"), dt.date(2020, 1, 2), dt.datetime(2020, 1, 2), 0.1, b"z", 1,
     Decimal("1E+3"), 7, "é😀"),
    (7, "x", 10, Decimal("1.25"), dt.date(2021, 6, 1), dt.datetime(2021, 6, 1, 8, 30), 7.0, b"q", 0,
     Decimal("0.5"), -7, " padded "),
    (8, "é", 7, Decimal("-4.75"), dt.date(2020, 1, 1), dt.datetime(2020, 1, 1, 0, 0, 0, 1), -0.0,
     b"\x80", 1, Decimal("-0.25"), 5, "x\\y"),
]

TAGS = [(1, 1, "red"), (2, 1, "blue"), (3, 2, "red"), (4, 9, "orphan"), (5, None, "none"),
        (6, 4, "Red"), (7, 7, "red")]

PROGRAM = """
CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, s VARCHAR(10));
CREATE TABLE items (id INT PRIMARY KEY, cat VARCHAR(10), score INT, price DECIMAL(10,2),
    day DATE, at DATETIME(6), f DOUBLE, raw BLOB, flag BOOLEAN, amount DECIMAL(38, 18),
    big BIGINT, note TEXT);
CREATE TABLE tags (id INT PRIMARY KEY, item INT, tag VARCHAR(10));
"""


class World:
    """One database with the tables above, a snapshot of it, and its tables on Spark.
    Tests add views (the data never changes, so the snapshot stays valid)."""

    def __init__(self, path: Path, spark: Any) -> None:
        self.db = rivulet.open(path / "data")
        self.db.execute_script(PROGRAM)
        self.db.table("t").insert_many(ROWS)
        self.db.table("items").insert_many(ITEMS)
        self.db.table("tags").insert_many(TAGS)
        self.snapshot, self.tables = spark_tables(self.db, path / "snapshot", spark)
        self.count = 0

    def view(self, sql: str) -> str:
        self.count += 1
        name = f"w{self.count}"
        self.db.execute(f"CREATE VIEW {name} AS {sql}")
        return name

    def plan(self, name: str) -> Any:
        return self.db.view(name).plan

    def spark(self, name: str, params: tuple | None = None) -> list[Row]:
        return compute_view(self.plan(name), self.tables, params, self.db.catalog)

    def engine(self, name: str, params: tuple | None = None) -> list[Row]:
        view = self.db.view(name)
        return view.scan() if params is None else view.lookup(*params)

    def both(self, sql: str, params: tuple | None = None) -> list[Row]:
        """Spark's rows for the view ``sql`` (asserted equal to the engine's)."""
        name = self.view(sql)
        got = self.spark(name, params)
        assert_same_rows(got, self.engine(name, params), self.plan(name), f"{name}{params or ''}")
        return got


@pytest.fixture(scope="module")
def world(spark: Any) -> Iterator[World]:
    path = Path(tempfile.mkdtemp(prefix="rivulet-spark-"))
    w = World(path, spark)
    try:
        yield w
    finally:
        w.db.close()
        shutil.rmtree(path, ignore_errors=True)


def exact(got: Any, expected: Any) -> bool:
    """Equal values of the same Python type (Decimals compare as numbers: Spark gives an
    unscaled DECIMAL its fixed scale; an int equals a Decimal where the engine's result
    kind depends on the value, as UNIX_TIMESTAMP's does)."""
    if isinstance(got, tuple) and isinstance(expected, tuple):
        return len(got) == len(expected) and all(exact(a, b) for a, b in zip(got, expected))
    if {type(got), type(expected)} == {int, Decimal}:
        return got == expected
    if type(got) is not type(expected):
        return False
    if isinstance(got, float) and math.isnan(got):
        return math.isnan(expected)
    return got == expected


def assert_exact_rows(got: list[Row], expected: list[Row], what: str = "") -> None:
    a, b = sorted(got, key=repr), sorted(expected, key=repr)
    assert len(a) == len(b) and all(exact(x, y) for x, y in zip(a, b)), (
        f"{what}\n  got:      {a}\n  expected: {b}")


# --------------------------------------------------------------------------- session


def test_one_session_with_mysql_settings(spark: Any) -> None:
    assert get_session() is spark
    conf = spark.conf
    assert conf.get("spark.sql.ansi.enabled") == "false"
    assert conf.get("spark.sql.session.timeZone") == "UTC"
    assert conf.get("spark.sql.shuffle.partitions") == "2"
    assert conf.get("spark.sql.execution.arrow.pyspark.enabled") == "true"
    assert spark.sparkContext.master == "local[2]"
    assert spark.sparkContext.getConf().get("spark.ui.enabled") == "false"
    assert spark.sparkContext.getConf().get("spark.driver.host") == "127.0.0.1"


# --------------------------------------------------------------------------- snapshots


def test_snapshot_round_trips_every_type(world: World, spark: Any) -> None:
    snap = world.snapshot
    assert snap.lsn == world.db.storage.lsn and snap.lsn > 0
    assert snap.rows == {"t": len(ROWS), "items": len(ITEMS), "tags": len(TAGS)}
    for name, expected in (("t", ROWS), ("items", ITEMS), ("tags", TAGS)):
        got = rows_from_arrow(world.tables[name].toArrow())
        assert_exact_rows(got, [tuple(r) for r in expected], f"table {name} on Spark")
        stored = [tuple(d.values()) for d in pq.read_table(snap.tables[name]).to_pylist()]
        assert_exact_rows(stored, [tuple(r) for r in expected], f"table {name} in Parquet")
    again = load_snapshot(snap.directory)
    assert again.lsn == snap.lsn and again.tables == snap.tables
    assert {n: s.columns for n, s in again.schemas.items()} == {
        n: s.columns for n, s in snap.schemas.items()}
    assert not (snap.directory / "frozen.db").exists()


def test_snapshot_is_one_commit_under_concurrent_writes(tmp_path: Path, spark: Any) -> None:
    """A writer commits batches of 10 rows while snapshots are taken: each snapshot holds
    exactly the rows of the batches up to its LSN."""
    db = rivulet.open(tmp_path / "data")
    try:
        db.execute("CREATE TABLE e (id INT PRIMARY KEY, batch INT NOT NULL, pad VARCHAR(100))")
        base = db.storage.lsn
        batches = 300

        def write() -> None:
            for n in range(batches):
                db.table("e").insert_many([(n * 10 + i, n, "x" * 100) for i in range(10)])

        writer = threading.Thread(target=write)
        writer.start()
        try:
            while db.storage.lsn < base + 3:
                time.sleep(0.001)
            seen = []
            for i in range(4):
                snap = take_snapshot(db, tmp_path / f"s{i}")
                seen.append((snap.lsn, snap.rows["e"], pq.read_table(snap.tables["e"]).num_rows))
        finally:
            writer.join()
        for lsn, rows, stored in seen:
            assert rows == stored == 10 * (lsn - base), seen
        assert any(lsn < base + batches for lsn, _, _ in seen), "no snapshot during the writes"
        last = take_snapshot(db, tmp_path / "last")
        assert last.lsn == base + batches
        got = rows_from_arrow(last.dataframes(spark)["e"].toArrow())
        assert sorted(r[0] for r in got) == list(range(10 * batches))
    finally:
        db.close()
    closed = take_snapshot(tmp_path / "data", tmp_path / "closed")  # a data directory
    assert (closed.lsn, closed.rows) == (last.lsn, last.rows)


# --------------------------------------------------------------------------- expressions


def test_mysql_expression_semantics(world: World) -> None:
    """The table of tests/test_mysql_semantics.py, every expression in one view."""
    items = ", ".join(f"{expr} AS x{i}" for i, (expr, _, _) in enumerate(EXPRESSIONS))
    name = world.view(f"SELECT id, {items} FROM t")
    got = {r[0]: r for r in world.spark(name)}
    engine = {r[0]: r for r in world.engine(name)}
    for i, (expr, row_id, expected) in enumerate(EXPRESSIONS):
        value = got[row_id][i + 1]
        assert _same(value, expected), (
            f"{expr} on row {row_id}: Spark {value!r}, MySQL {expected!r}")
    for row_id, row in engine.items():
        assert exact(got[row_id], row), f"row {row_id}: Spark {got[row_id]}, engine {row}"


def test_mysql_filter_semantics(world: World) -> None:
    for where, expected in FILTERS[:4]:
        rows = world.both(f"SELECT id FROM t WHERE {where}")
        assert sorted(r[0] for r in rows) == expected, where
    tests = ", ".join(f"CASE WHEN {w} THEN 1 ELSE 0 END AS k{i}"
                      for i, (w, _) in enumerate(FILTERS))
    rows = world.both(f"SELECT id, {tests} FROM t")
    for i, (where, expected) in enumerate(FILTERS):
        assert sorted(r[0] for r in rows if r[i + 1]) == expected, where


def test_null_semantics(world: World) -> None:
    """Three-valued logic and NULL propagation (t: row 4 has a = NULL, b = 2)."""
    exprs = [
        ("a = NULL", None), ("a <=> NULL", 1), ("b <=> NULL", 0), ("NULL <=> NULL", 1),
        ("a + 1", None), ("a > 1 AND b > 5", 0), ("a > 1 OR b > 1", 1), ("a > 1 OR b > 5", None),
        ("NOT (a > 1)", None), ("a IN (1, 2)", None), ("b IN (1, NULL)", None),
        ("b IN (2, NULL)", 1), ("b NOT IN (1, NULL)", None), ("b BETWEEN NULL AND 1", 0),
        ("b BETWEEN 1 AND NULL", None), ("a IS NULL", 1), ("a IS NOT NULL", 0),
        ("COALESCE(a, b, 9)", 2), ("IFNULL(a, 7)", 7), ("NULLIF(b, 2)", None),
        ("CASE WHEN a > 1 THEN 1 WHEN b = 2 THEN 2 ELSE 3 END", 2),
        ("CASE WHEN a THEN 1 END", None),
        ("CONCAT('x', a)", None), ("a XOR 1", None), ("s LIKE NULL", None), ("-a", None),
    ]
    items = ", ".join(f"{e} AS x{i}" for i, (e, _) in enumerate(exprs))
    (row,) = world.both(f"SELECT {items} FROM t WHERE id = ?", (4,))
    for (e, expected), value in zip(exprs, row):
        assert exact(value, expected), f"{e}: {value!r}, expected {expected!r}"
    assert [r[0] for r in world.both("SELECT id FROM t WHERE NOT (b IN (3, NULL))")] == []
    assert sorted(r[0] for r in world.both("SELECT id FROM t WHERE a <> 5 OR a IS NULL")) == [
        2, 3, 4, 5]


def test_division_and_decimal_arithmetic(world: World) -> None:
    exprs = [
        ("7 / 2", Decimal("3.5000")), ("7 DIV 2", 3), ("-7 DIV 2", -3), ("7 DIV 0", None),
        ("7 / 0", None), ("7 % 0", None), ("-7 % 3", -1), ("7.5 % 2", Decimal("1.5")),
        ("-7.5 DIV 2", -3),
        ("price / 3", Decimal("0.416667")), ("price * 2", Decimal("2.50")),
        ("price + 1", Decimal("2.25")), ("price - 0.005", Decimal("1.245")),
        ("price / 0", None), ("f / 0", None), ("f * 2", 1.0), ("score / 4", Decimal("2.5000")),
        ("score DIV 4", 2), ("score % 4", 2), ("f % 0.3", 0.5 % 0.3), ("big DIV 2", 2**61),
        ("ROUND(price, 1)", Decimal("1.3")), ("ROUND(2.5)", Decimal(3)),
        ("FLOOR(f)", 0.0), ("CEIL(price)", 2), ("ABS(-price)", Decimal("1.25")),
        ("CAST(price AS SIGNED)", 1), ("CAST(score AS DECIMAL)", Decimal(10)),
    ]
    items = ", ".join(f"{e} AS x{i}" for i, (e, _) in enumerate(exprs))
    (row,) = world.both(f"SELECT {items} FROM items WHERE id = ?", (1,))
    for (e, expected), value in zip(exprs, row):
        assert exact(value, expected), f"{e}: {value!r}, expected {expected!r}"


def test_like_patterns(world: World) -> None:
    assert like_pattern("a\\%") == "a\\%"
    assert like_pattern("a\\x") == "ax"
    assert like_pattern("a\\") == "a\\\\"
    patterns = ["a%", "%b\\_c", "a\\%b%", "%\\\\y", "x\\y", "hello%", "%world", "_", "%", "é_",
                "A%", "%B%", "a_b%", "12%"]
    items = ", ".join(f"note LIKE '{p}' AS l{i}, note NOT LIKE '{p}' AS n{i}"
                      for i, p in enumerate(p.replace("\\", "\\\\") for p in patterns))
    world.both(f"SELECT id, {items}, score LIKE '1%' AS num, note LIKE cat AS dyn, "
               f"raw LIKE 'a%' AS bin FROM items")


def test_engine_functions(world: World) -> None:
    """Functions Spark has no exact equivalent of run the engine's own code."""
    exprs = [
        "REPEAT(cat, 3)", "LOCATE('l', note)", "INSTR(note, 'b')", "REPLACE(note, 'l', 'L')",
        "TRIM(note)",
        "GREATEST(score, 8)", "LEAST(price, 2)", "GREATEST(note, 5)", "ROUND(f, 1)", "FLOOR(price)",
        "CEIL(f)", "SIGN(f)", "DATEDIFF(day, '2020-01-01')", "UNIX_TIMESTAMP(at)",
        "UNIX_TIMESTAMP(day)", "HOUR(at)", "MINUTE(at)", "SECOND(at)",
        "CONCAT_WS('-', cat, note, score)",
        "REVERSE(note)", "LEFT(note, 2)", "RIGHT(note, 2)", "CHAR_LENGTH(note)", "LENGTH(note)",
        "LENGTH(raw)", "UPPER(note)", "LOWER(note)", "SUBSTRING(note, 2, 3)", "SUBSTRING(note, -2)",
        "UPPER(CONCAT(note, 'ßᾳ'))", "LOWER(CONCAT(note, 'ΑΣİ'))",  # one character to one
        "SUBSTRING(note, 0)", "CONCAT(note, price)", "CONCAT(f, '')", "CONCAT(at, '')",
        "CONCAT(day, '')", "CAST(f AS CHAR)", "CAST(note AS SIGNED)", "CAST(note AS DECIMAL)",
        "CAST(note AS DOUBLE)", "CAST('2020-02-03' AS DATE)", "CAST(day AS DATETIME)",
        "IF(score > 5, note, cat)", "note + 1", "note = 12", "note < 'b'", "raw = 'abc'",
        "YEAR(day)", "MONTH(at)", "DAY(day)", "DATE(at)", "YEAR('2021-03-04')", "amount * 2",
        "amount + price", "MOD(big, 1000)", "big DIV 3 + 1", "-score", "score * f", "price * f",
        "day = '2020-01-02'", "at > '2020-01-01'", "day < at", "day + 0", "at + 0",
        "flag + 1", "NOT flag", "TRUE", "score BETWEEN 5 AND '9x'", "note IN (12, 'ABC')",
        "CONVERT_TZ(at, '+00:00', '+05:30')", "CONVERT_TZ(day, 'SYSTEM', '-03:00')",
        "CONVERT_TZ(at, note, '+01:00')", "LTRIM(note)", "RPAD(note, 6, '*')",
        "DAYOFMONTH(at)", "MID(note, 2)", "OCTET_LENGTH(note)",
        "day + INTERVAL 1 MONTH", "at - INTERVAL score MICROSECOND", "day + INTERVAL 2 HOUR",
        "DATE_ADD(at, INTERVAL '1 2:03' DAY_MINUTE)", "TIMESTAMPADD(WEEK, score, day)",
        "TIMESTAMPDIFF(MONTH, day, at)", "TIMESTAMPDIFF(MICROSECOND, at, day)",
        "EXTRACT(YEAR_MONTH FROM at)", "EXTRACT(WEEK FROM day)",
        "DATE_FORMAT(at, '%Y-%m-%d %H:%i:%s.%f %W %U %x')",
    ]
    items = ", ".join(f"{e} AS x{i}" for i, e in enumerate(exprs))
    name = world.view(f"SELECT id, {items} FROM items")
    got = {r[0]: r for r in world.spark(name)}
    for row in world.engine(name):
        spark_row = got[row[0]]
        for e, a, b in zip(["id"] + exprs, spark_row, row):
            assert exact(a, b) or (isinstance(a, float) and isinstance(b, float)
                                   and abs(a - b) <= 1e-9 * abs(b)), (
                f"{e} on row {row[0]}: Spark {a!r}, engine {b!r}")


# --------------------------------------------------------------------------- operators


def test_count_distinct_and_aggregates(world: World) -> None:
    rows = world.both(
        "SELECT cat, COUNT(DISTINCT score) AS d, SUM(DISTINCT score) AS sd,"
        " AVG(DISTINCT score) AS ad,"
        " COUNT(score) AS c, COUNT(*) AS n, SUM(price) AS sp, AVG(score) AS av, MIN(note) AS mn,"
        " MAX(day) AS mx, COUNT(DISTINCT price) AS dp FROM items GROUP BY cat")
    by_cat = {r[0]: r for r in rows}
    # MySQL: SUM of an INT is a DECIMAL, AVG one with 4 places.
    assert exact(by_cat["x"][1:6], (2, Decimal(13), Decimal("6.5000"), 4, 4))
    assert exact(by_cat["x"][6], Decimal("14.99"))
    assert exact(by_cat["y"][1:6], (2, Decimal(17), Decimal("8.5000"), 2, 2))
    assert exact(by_cat[None][1:6], (0, None, None, 0, 1))
    (empty,) = world.both("SELECT COUNT(DISTINCT score), COUNT(*), SUM(score), MAX(note) "
                          "FROM items WHERE score > 100")
    assert exact(empty, (0, 0, None, None))
    world.both("SELECT cat, COUNT(*) AS n FROM items GROUP BY cat HAVING COUNT(DISTINCT score) > 1")


def test_spreads_are_refused_by_name_on_spark(world: World) -> None:
    """STDDEV and VARIANCE: the engine's exact sums, which Spark's own would not match to
    the last bit; Spark refuses them by name (a bootstrap loads their values instead)."""
    name = world.view("SELECT cat, STD(score) AS s, VAR_SAMP(f) AS v FROM items GROUP BY cat")
    with pytest.raises(UnsupportedSqlError, match="STDDEV_POP"):
        world.spark(name)
    assert world.engine(name)


def test_topk_ties_broken_by_the_whole_row(world: World) -> None:
    """Top-k keeps the first k rows by ORDER BY, ties broken by the whole row ascending
    (NULLs first), like the engine's top-k operator."""
    scored = [(r[0], r[1], r[2]) for r in ITEMS]

    def expected(rows: list[Row], k: int) -> list[Row]:
        def key(r: Row) -> tuple:
            return ((1,) if r[2] is None else (0, -r[2]), tuple(
                (0,) if v is None else (1, v) for v in r))

        return sorted(rows, key=key)[:k]

    got = world.both("SELECT id, cat, score FROM items ORDER BY score DESC LIMIT 3")
    assert got == expected(scored, 3)
    got = world.both("SELECT id, cat, score FROM items WHERE cat = ? ORDER BY score DESC LIMIT 2",
                     ("x",))
    assert got == expected([r for r in scored if r[1] == "x"], 2)
    got = world.both("SELECT id, score FROM items ORDER BY score LIMIT 2")
    assert got == [(5, None), (6, 3)]
    world.both("SELECT id, score FROM items WHERE cat = ? ORDER BY score DESC LIMIT 2 OFFSET 1",
               ("x",))
    scan = world.both("SELECT id, cat, score FROM items WHERE cat = ? ORDER BY score DESC LIMIT 1")
    assert sorted(scan) == [(1, "x", 10), (4, "y", 10), (8, "é", 7)]


def test_subqueries_as_semi_and_anti_joins(world: World) -> None:
    """EXISTS / NOT EXISTS / IN / NOT IN subqueries (rivulet/plan/subqueries.py), which the
    planner writes as joins with the subquery's distinct keys and counts, compute on Spark
    what the engine serves, NOT IN's NULLs (a tag of no item) included."""
    got = world.both("SELECT id FROM items WHERE EXISTS (SELECT 1 FROM tags WHERE "
                     "tags.item = items.id AND tag = 'red')")
    assert sorted(got) == [(1,), (2,), (7,)]
    got = world.both("SELECT id FROM items WHERE id NOT IN (SELECT item FROM tags)")
    assert got == []  # a tag's NULL item makes every NOT IN unknown
    got = world.both("SELECT id FROM items WHERE id NOT IN (SELECT item FROM tags WHERE "
                     "item IS NOT NULL)")
    assert sorted(got) == [(3,), (5,), (6,), (8,)]
    world.both("SELECT id, cat FROM items WHERE cat = ? AND NOT EXISTS (SELECT 1 FROM tags "
               "WHERE tags.item = items.id)", ("x",))
    world.both("SELECT id FROM items WHERE score IN (SELECT item FROM tags WHERE tags.id = "
               "items.id)")
    world.both("SELECT id FROM items WHERE score NOT IN (SELECT item FROM tags WHERE "
               "tags.tag = items.cat)")
    world.both("SELECT cat, COUNT(*) AS n FROM items WHERE NOT EXISTS (SELECT 1 FROM tags "
               "WHERE tag = 'none') GROUP BY cat")


def test_left_join_padding(world: World) -> None:
    got = world.both("SELECT items.id, tags.tag FROM items LEFT JOIN tags ON items.id = tags.item")
    expected = [(i[0], t[2]) for i in ITEMS for t in TAGS if t[1] == i[0]]
    expected += [(i[0], None) for i in ITEMS if not any(t[1] == i[0] for t in TAGS)]
    assert_rows_equal(got, expected)
    # A residual ON condition Spark evaluates natively, and one that runs Python.
    got = world.both("SELECT items.id, tags.tag FROM items LEFT JOIN tags "
                     "ON items.id = tags.item AND tags.tag <> 'red'")
    assert_rows_equal(got, [(1, "blue"), (2, None), (3, None), (4, "Red"), (5, None), (6, None),
                            (7, None), (8, None)])
    got = world.both("SELECT items.id, tags.tag FROM items LEFT JOIN tags "
                     "ON items.id = tags.item AND LOCATE('e', tags.tag) = 2")
    assert_rows_equal(got, [(1, "red"), (2, "red"), (3, None), (4, "Red"), (5, None), (6, None),
                            (7, "red"), (8, None)])
    got = world.both("SELECT i.id, t.tag, COUNT(*) AS n FROM items AS i LEFT JOIN tags AS t "
                     "ON i.id = t.item WHERE i.cat = ? GROUP BY i.id, t.tag", ("x",))
    assert_rows_equal(got, [(1, "red", 1), (1, "blue", 1), (2, "red", 1), (6, None, 1),
                            (7, "red", 1)])
    # Join keys of different kinds compare as MySQL compares them (as numbers).
    world.both("SELECT t.id, items.id FROM t JOIN items ON t.b = items.score")


def test_joins_on_no_key_and_on_computed_keys(world: World) -> None:
    """Comma and cross joins, ON conditions without an equality and equalities of
    expressions (rivulet/plan/joins.py) compile on Spark and answer as the engine does."""
    got = world.both("SELECT items.id, tags.id FROM items, tags WHERE items.id = tags.item")
    assert_rows_equal(got, [(t[1], t[0]) for t in TAGS if t[1] is not None and t[1] <= 8])
    got = world.both("SELECT t.id, tags.id FROM t CROSS JOIN tags")
    assert len(got) == len(ROWS) * len(TAGS)
    world.both("SELECT items.id, tags.id FROM items JOIN tags ON items.score < tags.item")
    world.both("SELECT items.id, tags.tag FROM items LEFT JOIN tags ON items.score < tags.item")
    world.both("SELECT items.id, tags.tag FROM items JOIN tags ON lower(items.cat) = "
               "lower(tags.tag) WHERE items.id = ?", (1,))


def test_union_and_distinct(world: World) -> None:
    got = world.both("SELECT cat FROM items UNION SELECT tag FROM tags")
    assert_rows_equal(got, [(v,) for v in {i[1] for i in ITEMS} | {t[2] for t in TAGS}])
    got = world.both("SELECT cat FROM items UNION ALL SELECT tag FROM tags")
    assert len(got) == len(ITEMS) + len(TAGS)
    got = world.both("SELECT DISTINCT cat, score FROM items")
    assert_rows_equal(got, list({(i[1], i[2]) for i in ITEMS}))
    got = world.both("SELECT s AS c FROM t WHERE id < 3 UNION ALL SELECT a FROM t WHERE id < 3")
    assert_rows_equal(got, [("12abc",), ("5",), ("7",), ("abc",)])
    got = world.both(
        "SELECT score FROM items UNION SELECT price FROM items ORDER BY 1 DESC LIMIT 3")
    assert got == [(10,), (9.99,), (7,)] or [float(r[0]) for r in got] == [10.0, 9.99, 7.0]
    world.both("SELECT DISTINCT cat FROM items WHERE score IN (?, ?)", (10, 7))


def test_a_select_without_from_is_one_row(world: World) -> None:
    """``SELECT`` without ``FROM`` (ir.OneRow) reads one row of no columns on Spark as in
    the engine: its constants, its WHERE, its aggregates, and beside a table in a UNION."""
    assert world.both("SELECT 1 AS one, 'x' AS s, 2.50 * 2 AS d") == [(1, "x", Decimal("5.00"))]
    assert world.both("SELECT 1 AS one FROM DUAL WHERE 1 = 0") == []
    assert world.both("SELECT COUNT(*) AS n FROM DUAL WHERE 1 = 0") == [(0,)]
    got = world.both("SELECT cat FROM items UNION SELECT 'zz'")
    assert_rows_equal(got, [(v,) for v in {i[1] for i in ITEMS} | {"zz"}])


def test_intersect_and_except(world: World) -> None:
    """INTERSECT / EXCEPT, DISTINCT and ALL: Spark's own set operations, as the engine's
    (rivulet/dataflow/ops/setop.py)."""
    cats = [(i[1],) for i in ITEMS]
    tags = [(t[2],) for t in TAGS]
    got = world.both("SELECT cat FROM items INTERSECT SELECT tag FROM tags")
    assert_rows_equal(got, list(set(cats) & set(tags)))
    got = world.both("SELECT cat FROM items EXCEPT SELECT tag FROM tags")
    assert_rows_equal(got, list(set(cats) - set(tags)))
    world.both("SELECT cat FROM items INTERSECT ALL SELECT tag FROM tags")
    world.both("SELECT cat FROM items EXCEPT ALL SELECT tag FROM tags")
    world.both("SELECT score FROM items EXCEPT SELECT price FROM items")


def test_implicit_group_default_row(world: World) -> None:
    """``COUNT(*) ... WHERE k = ?`` answers one row for a key with no rows (the aggregate
    over no rows), none for a key HAVING removes, and the aggregate for a NULL key."""
    name = world.view("SELECT COUNT(*) AS n, SUM(score) AS s, MAX(note) AS m FROM items "
                      "WHERE cat = ?")
    plan = world.plan(name)
    params = [("x",), ("zz",), (None,), (7,), ("é",)]
    answers = compute_lookups(plan, world.tables, params, world.db.catalog)
    for p, got in zip(params, answers):
        assert_same_rows(got, world.engine(name, p), plan, f"lookup{p}")
    assert answers[0] == [(4, 33, "é😀")]  # code point order: 'é' > 'h'

    assert answers[1] == [(0, None, None)] == answers[2] == answers[3]
    having = world.view("SELECT COUNT(*) AS n FROM items WHERE cat = ? HAVING COUNT(*) > 0")
    assert world.spark(having, ("zz",)) == [] == world.engine(having, ("zz",))
    assert world.spark(having, ("x",)) == [(4,)]
    shown = world.view("SELECT COUNT(*) + 1 AS n, cat FROM items WHERE cat = ? AND score = ?")
    for p in [("x", 10), ("x", 99), ("q", 1), (None, 1)]:
        assert_same_rows(world.spark(shown, p), world.engine(shown, p), world.plan(shown), str(p))
    assert world.spark(shown, ("x", 99)) == [(1, "x")]
    assert sorted(world.spark(name)) == sorted(world.engine(name))  # scan: keys with rows only


def test_parameters_are_read_as_the_engine_reads_them(world: World) -> None:
    """A parameter finds the rows the same literal finds (tests/test_mysql_parameters.py
    compares the engine with MySQL): on Spark as in the engine, which look up the same keys
    (``params.lookup_keys``) and compute a read that no key answers from the view's query
    with the values as constants (``plan/bound.py``). t: a = 5, 7, -7, NULL, 4; b = 2, 0,
    3, 2, 1; s = '12abc', 'abc', 'ABC', NULL, '3'."""
    cases = [
        ("SELECT id FROM t WHERE s = ?", [(3,), ("3",), (12,), (0,), (None,), (3.0,)]),
        ("SELECT COUNT(*), MAX(id) FROM t WHERE s = ?", [(3,), (0,), ("abc",), (None,)]),
        ("SELECT id FROM t WHERE a IN (?, ?) AND b >= ?", [(5, 7, 0), (7, 5, 1), (4, -7, 2)]),
        ("SELECT id FROM t WHERE a < ? AND a <= ?", [(7, 4), (4, 7)]),
        ("SELECT id FROM t WHERE a > ? AND a BETWEEN ? AND ?", [(0, -9, 9), (4, 0, 5)]),
        ("SELECT MAX(a), COUNT(*) FROM t WHERE a = ? AND a = ?", [(5, 5), (5, 7), (5, "5")]),
        ("SELECT COUNT(*) FROM t WHERE a <=> ?", [(None,), (5,), ("7",)]),
        ("SELECT id FROM t WHERE a = ?", [("5",), (" 7",), (5.0,), (4.5,), (Decimal("7"),)]),
        ("SELECT id FROM items WHERE price = ?",
         [(Decimal("1.25"),), (Decimal("1.250"),), (0.1,), ("9.99",), (1.25,), (3,)]),
        ("SELECT id FROM items WHERE day = ?", [("2020-1-2",), (dt.date(2020, 1, 2),)]),
        ("SELECT id FROM items WHERE at > ?", [("2020-01-02",), (dt.date(2021, 6, 1),)]),
        ("SELECT id FROM items WHERE score > ? AND score < ?", [("3.5", 10.5), (7, "10")]),
    ]
    for sql, param_sets in cases:
        name = world.view(sql)
        plan = world.plan(name)
        for params in param_sets:
            assert_same_rows(world.spark(name, params), world.engine(name, params), plan,
                             f"{sql} {params}")


def test_in_lists_and_ranges(world: World) -> None:
    sql = "SELECT id, score FROM items WHERE cat IN (?, ?) ORDER BY score DESC, id LIMIT 3"
    for params in [("x", "y"), ("y",), ("x", "x", None), (None,), ("q", "y", "é")]:
        world.both(sql, params)
    for params in [(5, 10), (10, 5), (None, 3), (7, 7)]:
        world.both("SELECT id FROM items WHERE score BETWEEN ? AND ?", params)
    world.both("SELECT id, score FROM items WHERE cat = ? AND score >= ? ORDER BY id", ("x", 5))
    # an IN list with a range: every listed value's rows (the first value alone, once)
    in_range = "SELECT id, cat, score FROM items WHERE cat IN (?, ?) AND score >= ? ORDER BY id"
    for params in [("y", "y", 0), ("q", None, 0)]:
        world.both(in_range, params)
    assert [r[0] for r in world.both(in_range, ("x", "y", 5))] == [1, 2, 3, 4, 7]
    assert [r[0] for r in world.both(in_range, (None, "y", 0))] == [3, 4]
    world.both("SELECT id, day FROM items WHERE day > ? ORDER BY day DESC LIMIT 2", ("2000-01-01",))
    world.both("SELECT id FROM items WHERE price <= ?", (Decimal("2.5"),))
    name = world.view("SELECT id, note FROM items WHERE big < ?")
    assert world.spark(name) == world.engine(name)  # a range view's scan: every row, in order
    # A bound compares as MySQL compares it: 'not a number' is 0 (MySQL warns), so big < 0.
    assert sorted(world.spark(name, ("not a number",))) == sorted(
        world.engine(name, ("not a number",))) == [(2, "a%b_c"), (7, " padded ")]
    with pytest.raises(rivulet.RivuletError):
        world.spark(name, (1, 2))
    assert world.spark(world.view("SELECT id FROM items WHERE id = ?"), ("abc",)) == []


def test_ranges_on_two_columns(world: World) -> None:
    """Bounds on a second (and third) column are checked over the first column's range on
    Spark as in the engine (``ViewPlan.other_ranges``), before ORDER BY and LIMIT cut the
    answer; a NULL bound finds no row; a scan keeps the rows with no NULL in a range
    column."""
    cases = [
        ("SELECT id, score FROM items WHERE score > ? AND day < ? ORDER BY id",
         [(0, "2021-01-01"), ("5", dt.date(2020, 6, 1)), (1, None), (None, "2030-01-01")]),
        ("SELECT id FROM items WHERE cat = ? AND price BETWEEN ? AND ? AND score >= ? "
         "ORDER BY score DESC, id LIMIT 2", [("x", 0, 100, "5"), ("x", "1.25", 9.99, 0)]),
        ("SELECT id FROM t WHERE a > ? AND b < ? AND s >= ? ORDER BY id",
         [(-10, 3, ""), (0, "2", "A"), (4, 10, "a")]),
        # BETWEEN of text and a number: the three compared as DOUBLEs, on either column
        ("SELECT id FROM t WHERE a > ? AND s BETWEEN ? AND ? ORDER BY id",
         [(-10, 0, "b"), (-10, "a", 5)]),
        ("SELECT id FROM t WHERE s BETWEEN ? AND ? AND a > ? ORDER BY id",
         [(0, "b", -10), ("0", "z", 0)]),
    ]
    for sql, param_sets in cases:
        name = world.view(sql)
        assert world.plan(name).other_ranges
        for params in param_sets:
            world.both(sql, params)
        assert sorted(world.spark(name)) == sorted(world.engine(name))
    # a range aggregate over two columns: each read computed as its query with the values
    # as constants
    name = world.view("SELECT cat, COUNT(*), MAX(price) FROM items WHERE score >= ? AND "
                      "day < ? GROUP BY cat")
    plan = world.plan(name)
    assert plan.bounds_keyed and plan.other_ranges
    params = [(0, "2021-01-01"), ("5", dt.date(2020, 6, 1)), (1, None), (99, "2030-01-01")]
    answers = compute_lookups(plan, world.tables, params, world.db.catalog)
    assert any(answers)
    for p, got in zip(params, answers):
        assert_same_rows(got, world.engine(name, p), plan, f"{name}{p}")


def test_several_in_lists_and_range_aggregates(world: World) -> None:
    """Several IN lists: every combination of their values, on Spark as in the engine. A
    range parameter in an aggregated query (the engine keeps one answer per value) is
    computed on Spark as its query with the values as constants, as the engine answers."""
    sql = "SELECT id, score FROM items WHERE cat IN (?, ?) AND score IN (?, ?, ?) ORDER BY id"
    for params in [("x", "y", 5, 10, 7), ("x", None, 10, 10, "7"), ("q", "x", 1, 2, 3)]:
        world.both(sql, params)
    name = world.view("SELECT cat, COUNT(*) FROM items WHERE score >= ? GROUP BY cat")
    for params in [(5,), (0,), ("7",), (None,), (10_000,)]:
        got = world.spark(name, params)
        assert_same_rows(got, world.engine(name, params), world.plan(name), f"{name}{params}")
    assert world.spark(name, (5,)) and not world.spark(name, (None,))


def test_dates_and_decimals_round_trip(world: World) -> None:
    got = world.both("SELECT id, day, at, price, amount, raw, flag, big, f FROM items")
    places = Decimal(1).scaleb(-18)  # amount DECIMAL(38, 18) stores 18 places
    assert_exact_rows(got, [(r[0], r[4], r[5], r[3], None if r[9] is None else
                             r[9].quantize(places, context=Context(prec=60)), r[7], r[8], r[10],
                             r[6]) for r in ITEMS])
    got = world.both("SELECT id, DATE(at) AS d, YEAR(day) AS y, price * 2 AS p FROM items "
                     "WHERE day = ?", (dt.date(2020, 1, 2),))
    assert_exact_rows(got, [(1, dt.date(2020, 1, 2), 2020, Decimal("2.50")),
                            (6, dt.date(2020, 1, 2), 2020, Decimal("19.98"))])
    got = world.both("SELECT id FROM items WHERE at >= ? AND at < ?",
                     (dt.datetime(2020, 1, 1, 0, 0, 0, 1), "2020-01-02 03:04:05.000007"))
    assert sorted(got) == [(1,), (6,), (8,)]


def test_views_over_views_and_subqueries(world: World) -> None:
    world.db.execute("CREATE VIEW inner_v AS SELECT cat, COUNT(*) AS n FROM items GROUP BY cat")
    world.both("SELECT inner_v.cat, inner_v.n, tags.tag FROM inner_v JOIN items ON inner_v.cat = "
               "items.cat LEFT JOIN tags ON tags.item = items.id WHERE inner_v.n > ?", (1,))
    world.both("SELECT q.c, COUNT(*) FROM (SELECT cat AS c FROM items WHERE score > 5) AS q "
               "GROUP BY q.c")
    world.both(
        "SELECT a.id, b.id FROM items AS a JOIN items AS b ON a.score = b.score AND a.id < b.id")


# --------------------------------------------------------------------------- random expressions
# Expressions over every kind, mixing kinds freely in operators and functions, so that
# both the native compilations and the UDF fallbacks meet every conversion rule. Outside
# the generator on purpose: functions whose result kind depends on the values (CASE,
# COALESCE, IF... get arguments of one kind), DECIMAL values in a text context (the engine
# keeps each value's own scale, Spark a column's), BIGINT overflow, and the row with
# extreme values (a float of 1e300 reaches inf and NaN, whose ordering Spark defines).

COLUMNS = {"int": ["id", "score", "flag"], "float": ["f"], "dec": ["price"], "str": ["cat", "note"],
           "bytes": ["raw"], "date": ["day"], "datetime": ["at"]}
LITERALS = {
    "int": ["0", "1", "-2", "7", "10", "TRUE"], "float": ["0.5e0", "-1.5e0", "2e0", "0e0"],
    "dec": ["1.25", "-0.5", "3.000", "0.1"],
    "str": ["''", "'x'", "'12abc'", "'10'", "'2020-01-02'", "'2020-01-02 03:04:05'", "'A%'",
            "'hello\nworld'", "' 3.5e1x'", "'é'"],
    "bytes": ["X'00ff'"], "date": ["CAST('2020-01-02' AS DATE)"],
    "datetime": ["CAST('2021-06-01 08:30:00' AS DATETIME)"],
}
KINDS = sorted(COLUMNS)
TEXT_FUNCTIONS = ["LOWER({})", "UPPER({})", "LENGTH({})", "CHAR_LENGTH({})", "REVERSE({})",
                  "TRIM({})", "SUBSTRING({}, 2)", "SUBSTRING({}, -2, 1)", "LEFT({}, 2)",
                  "RIGHT({}, 3)", "REPEAT({}, 2)", "REPLACE({}, 'l', 'LL')", "LOCATE('1', {})",
                  "INSTR({}, 'x')", "CAST({} AS CHAR)"]
NUMBER_FUNCTIONS = ["ABS({})", "ROUND({})", "ROUND({}, 1)", "FLOOR({})", "CEIL({})", "SIGN({})",
                    "-{}", "CAST({} AS SIGNED)", "CAST({} AS DOUBLE)"]
DATE_FUNCTIONS = ["YEAR({})", "MONTH({})", "DAY({})", "HOUR({})", "MINUTE({})", "SECOND({})",
                  "DATE({})", "DATEDIFF({}, '2020-01-01')", "CAST({} AS DATE)"]
OPERATORS = ["+", "-", "*", "/", "DIV", "%", "=", "<>", "<", "<=", ">", ">=", "<=>", "AND", "OR",
             "XOR"]


@st.composite
def expressions(draw: Any, depth: int = 3, kind: str | None = None, text: bool = True,
                operand: bool = False) -> str:
    """An expression; ``kind`` asks for one of that kind (for functions whose result kind
    would otherwise depend on the values); ``text``: it may be read as a string;
    ``operand``: of an arithmetic operator (a DATETIME there is an int or a DECIMAL in the
    engine, depending on its microseconds; always a DECIMAL on Spark)."""
    kinds = [k for k in KINDS if (text or k != "dec") and not (operand and k == "datetime")]
    kinds = kinds if kind is None else [kind]
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        k = draw(st.sampled_from(kinds))
        if draw(st.integers(0, 2)) == 0:
            return draw(st.sampled_from(LITERALS[k] + ["NULL"]))
        return draw(st.sampled_from(COLUMNS[k]))

    def sub(**kw: Any) -> str:
        return draw(expressions(depth - 1, **kw))

    form = draw(st.sampled_from(["op", "op", "text", "number", "date", "pred", "same", "concat"]
                                if kind is None else ["same"]))
    if form == "op":
        op = draw(st.sampled_from(OPERATORS))
        return f"({sub(text=False, operand=True)} {op} {sub(text=False, operand=True)})"
    if form == "text":
        return draw(st.sampled_from(TEXT_FUNCTIONS)).format(
            sub(kind=draw(st.sampled_from([k for k in KINDS if k != "dec"]))))
    if form == "number":
        return draw(st.sampled_from(NUMBER_FUNCTIONS)).format(sub(text=False))
    if form == "date":
        return draw(st.sampled_from(DATE_FUNCTIONS)).format(
            sub(kind=draw(st.sampled_from(["date", "datetime", "str"]))))
    if form == "concat":
        parts = [sub(kind=draw(st.sampled_from([k for k in KINDS if k != "dec"])))
                 for _ in range(2)]
        return f"CONCAT({parts[0]}, {parts[1]})"
    if form == "pred":
        e = sub(text=False)
        choice = draw(st.sampled_from(["like", "in", "between", "null", "not"]))
        if choice == "like":
            pattern = draw(st.sampled_from(["%", "1%", "_", "%l%", "A%", "\\\\%", "%x\\\\_%",
                                            "2020%"]))
            subject = sub(kind=draw(st.sampled_from(['str', 'int', 'bytes', 'date'])))
            return f"({subject} LIKE '{pattern}')"
        if choice == "in":
            return f"({e} IN ({sub(text=False)}, {sub(text=False)}, 3))"
        if choice == "between":
            return f"({e} BETWEEN {sub(text=False)} AND {sub(text=False)})"
        if choice == "null":
            return f"({e} IS {'NOT ' if draw(st.booleans()) else ''}NULL)"
        return f"(NOT {e})"
    k = kind or draw(st.sampled_from(kinds))

    def same() -> str:
        return sub(kind=k)

    choice = draw(st.sampled_from(["coalesce", "ifnull", "if", "case", "nullif", "greatest"]))
    if choice == "coalesce":
        return f"COALESCE({same()}, {same()})"
    if choice == "ifnull":
        return f"IFNULL({same()}, {same()})"
    if choice == "if":
        return f"IF({sub(text=False)}, {same()}, {same()})"
    if choice == "nullif":
        return f"NULLIF({same()}, {sub(text=False)})"
    if choice == "greatest":
        return f"{draw(st.sampled_from(['GREATEST', 'LEAST']))}({same()}, {same()})"
    return (f"CASE WHEN {sub(text=False)} THEN {same()} WHEN {sub(text=False)} THEN {same()} "
            f"ELSE {same()} END")


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    return exact(a, b)


@pytest.mark.timeout(EXAMPLES * 30)
@settings(max_examples=EXAMPLES * 2, deadline=None, derandomize=EXAMPLES < 60,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(exprs=st.lists(expressions(), min_size=4, max_size=8))
def test_random_expressions_agree_with_the_engine(world: World, exprs: list[str]) -> None:
    items = ", ".join(f"{e} AS x{i}" for i, e in enumerate(exprs))
    sql = f"SELECT id, {items} FROM items WHERE id <> 4"
    try:
        name = world.view(sql)
    except rivulet.SqlError:
        reject()  # outside what rivulet accepts
    except (TypeError, ValueError):
        # The engine's function failed on a value (CAST of a DATE or a BLOB to a number):
        # an engine bug, reported; Spark runs the same function and would fail alike.
        reject()
    got = {r[0]: r for r in world.spark(name)}
    engine = world.engine(name)
    assert len(got) == len(engine) == len(ITEMS) - 1
    for row in engine:
        for e, a, b in zip(["id"] + exprs, got[row[0]], row):
            assert same_value(a, b), f"{e} on row {row[0]}: Spark {a!r}, engine {b!r}"
    world.db.execute(f"DROP VIEW {name}")


# --------------------------------------------------------------------------- MySQL, not the engine


def test_both_upper_bounds_of_a_range_apply_on_spark(world: World) -> None:
    """The engine kept only the first of two upper bounds (reported, not fixed here: the
    extraction of a view's parameters, rivulet/plan/params.py); Spark applies both, so
    that verify points at it."""
    name = world.view("SELECT id FROM t WHERE a < ? AND a <= ?")
    assert sorted(world.spark(name, (7, 4))) == [(3,), (5,)]


def test_where_the_engine_once_differed_from_mysql_both_answer_mysql(world: World) -> None:
    """Cases where the engine's answer was not MySQL's while Spark's was (recorded here as
    reported, not fixed): now both executors answer MySQL's, values and types (MariaDB
    agrees: tests/test_mysql_types.py). t: a = 5, 7, -7, NULL, 4; s = '12abc', 'abc',
    'ABC', NULL, '3'."""

    def both_exactly(sql: str, params: tuple | None = None) -> list[Row]:
        name = world.view(sql)
        spark, engine = world.spark(name, params), world.engine(name, params)
        assert sorted(map(repr, spark)) == sorted(map(repr, engine)), (sql, spark, engine)
        return engine

    # SUM and AVG of strings add their numeric prefixes as doubles (the engine raised).
    assert both_exactly("SELECT SUM(s), AVG(s) FROM t") == [(15.0, 3.75)]
    # A join of an INT with a VARCHAR compares them as numbers (the engine never matched).
    assert sorted(both_exactly("SELECT t.id, items.id FROM t JOIN items ON t.s = items.score")
                  ) == [(5, 6)]  # '3' = 3
    # AVG of a DECIMAL keeps 4 more places, rounded half up.
    assert both_exactly("SELECT AVG(price) FROM items WHERE cat = ?", ("x",)) == [
        (Decimal("3.747500"),)]
    (avg,), = both_exactly("SELECT AVG(price) FROM items WHERE cat = ?", ("y",))
    assert avg == Decimal("0.100000") and avg.as_tuple().exponent == -6
    # CASE (and COALESCE, IF) mixing INT and VARCHAR is a VARCHAR (the engine: mixed types).
    assert sorted(both_exactly("SELECT id, CASE WHEN a > 4 THEN a ELSE s END FROM t")) == [
        (1, "5"), (2, "7"), (3, "ABC"), (4, None), (5, "3")]


# --------------------------------------------------------------------------- differential


def _check_view(pair: Pair, spec: ViewSpec, tables: dict) -> None:
    view = pair.db.view(spec.name)
    plan = view.plan
    probes = lookups_for(spec)[:14]
    answers = compute_lookups(plan, tables, probes)
    for params, got in zip(probes, answers):
        engine = view.lookup(*params)
        assert_same_rows(got, engine, plan, f"{spec.name}.lookup{params}")
        sql = pair.views[spec.name]
        arity = in_arity(sql)
        lite_sql = sql if arity is None else with_in_arity(
            sql, arity + len(params) - placeholder_count(sql))
        assert_same_answer(lite_sql, params, got, pair.lite, what=f"Spark {spec.name}{params}")
    scanned = scan_view(plan, tables)
    engine_scan = view.scan()
    if getattr(view, "partial", False):  # the engine holds only the keys read so far
        held = {tuple(map(repr, r)) for r in engine_scan}
        assert held <= {tuple(map(repr, r)) for r in scanned}, (plan.sql, scanned, engine_scan)
    elif plan.limit is None and not plan.offset:
        assert same_multiset(scanned, engine_scan), (plan.sql, scanned, engine_scan)
    else:
        assert len(scanned) == len(engine_scan), (plan.sql, scanned, engine_scan)


def run_on_spark(scenario: Scenario, spark: Any) -> None:
    """Run the scenario's program and writes on rivulet and SQLite, then compute every view
    on Spark from a snapshot and compare with both."""
    note(repr(scenario))
    with Pair() as pair:
        for table in scenario.tables:
            pair.execute(table.ddl())
        views: list[ViewSpec] = []
        for op in scenario.ops:
            if op[0] == "view":
                pair.create_view(op[1].name, op[1].sql)
                views.append(op[1])
            elif op[0] == "insert_many":
                pair.insert_many(op[1], op[2])
            elif op[0] == "sql":
                for statement in op[1:]:
                    pair.execute(statement)
            elif op[0] == "sqlp":
                pair.execute(op[1], op[2])
            elif op[0] == "drop":
                pair.drop_view(op[1])
                views = [v for v in views if v.name != op[1]]
        snapshot, tables = spark_tables(pair.db, Path(pair.path) / "spark-snapshot", spark)
        assert snapshot.lsn == pair.db.storage.lsn
        for spec in views:
            _check_view(pair, spec, tables)


DIFF = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES < 60,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

SINGLE = Features(joins=False, unions=False, subqueries=False, views_in_from=False)
JOINED = Features(unions=False, subqueries=False, views_in_from=False)


@pytest.mark.timeout(EXAMPLES * 30)
@DIFF
@given(scenario=scenarios(SINGLE, max_tables=1, n_views=(2, 3)))
@example(scenario=_scn(
    (T1,),
    ("insert_many", "t0", DIFF_ROWS + [(7, 1, "a"), (8, 3, "b")]),
    V("v0", "SELECT r0.id AS c0, r0.a AS c1 FROM t0 AS r0 WHERE r0.b IN (?, ?) "
      "ORDER BY c1 DESC, c0 LIMIT 2", ("str", "in")),
    V("v1", "SELECT r0.id AS c0, r0.a AS c1 FROM t0 AS r0 WHERE r0.a > ? ORDER BY c1 LIMIT 2 "
      "OFFSET 1", ("int", "range")),
    V("v2", "SELECT DISTINCT r0.b AS c0 FROM t0 AS r0 WHERE r0.a IN (?, ?)", ("int", "in")),
    V("v3", "SELECT r0.b AS c0, COUNT(*) AS c1, SUM(r0.a) AS c2 FROM t0 AS r0 WHERE r0.a <> 2 "
      "GROUP BY r0.b HAVING COUNT(*) > 1 ORDER BY c1 DESC, c0 LIMIT 2"),
    ("sql", "UPDATE t0 SET a = a - 1, b = 'b' WHERE id IN (1, 7)"),
))
def test_differential_single_table(scenario: Scenario, spark: Any) -> None:
    run_on_spark(scenario, spark)


@pytest.mark.timeout(EXAMPLES * 30)
@DIFF
@given(scenario=scenarios(JOINED, max_tables=2, n_views=(2, 3)))
@example(scenario=_scn(
    (T1, T2),
    ("insert_many", "t0", DIFF_ROWS),
    ("insert_many", "t1", [(10, 1, "x"), (11, 2, "a"), (12, None, "b")]),
    V("v0", "SELECT r0.id AS c0, r1.id AS c1 FROM t0 AS r0 LEFT JOIN t1 AS r1 ON r0.a = r1.a "
      "WHERE r0.b = ?", ("str", "eq")),
    V("v1", "SELECT r0.b AS c0, MIN(r0.a) AS c1, MAX(r0.a) AS c2, COUNT(*) AS c3, "
      "COUNT(r0.a) AS c4, SUM(r0.a) AS c5, AVG(r0.a) AS c6 FROM t0 AS r0 GROUP BY r0.b"),
    V("v2", "SELECT COUNT(*) AS c0 FROM t0 AS r0 WHERE r0.a = ?", ("int", "eq")),
))
def test_differential_joins_and_aggregates(scenario: Scenario, spark: Any) -> None:
    run_on_spark(scenario, spark)


@pytest.mark.timeout(EXAMPLES * 30)
@DIFF
@given(scenario=scenarios(COMPOSED, max_tables=2, n_views=(1, 2), relation_views=(1, 2)))
def test_differential_composed(scenario: Scenario, spark: Any) -> None:
    run_on_spark(scenario, spark)
