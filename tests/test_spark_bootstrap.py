"""Bootstrap and recovery of full state on Spark (rivulet/spark/bootstrap.py; issue 4, part 3).

The oracle is SQLite running the same views over the same rows (tests/oracle.py): full
state computed on Spark must answer exactly what SQLite answers, at creation, after more
writes (inserts, deletes of current extremes, updates: the loaded state must survive
retraction), and after a restart during which writes keep coming. Every test also checks
*which* executor ran (``db.bootstrap_report()``), so a silent fallback to the in-process
path cannot pass for Spark.

Spark tests share one local[2] session (tests/spark_fixtures.py); the threshold
``spark_bootstrap_rows=0`` forces the Spark path whatever the size.
"""

from __future__ import annotations

import math
import random
import statistics
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rivulet
import rivulet.spark.bootstrap as bootstrap_module
from oracle import Pair
from spark_fixtures import SPARK_CONFIG, spark_session  # noqa: F401

pytestmark = pytest.mark.spark

TABLES = [
    "CREATE TABLE items (id INT PRIMARY KEY, cat INT, w DOUBLE, name VARCHAR(20), qty INT)",
    "CREATE TABLE tags (item_id INT NOT NULL, tag VARCHAR(10) NOT NULL)",
]

#: Views whose state is full with partial state on (no key, or a key no state can use).
FULL_VIEWS = {
    "per_cat": "SELECT cat, COUNT(*) AS n, SUM(qty) AS total, AVG(w) AS mean, MIN(name) AS lo, "
               "MAX(w) AS hi, COUNT(DISTINCT name) AS names, COUNT(w) AS ws "
               "FROM items GROUP BY cat",
    "overall": "SELECT COUNT(*) AS n, SUM(w) AS sw, MIN(qty) AS lo, MAX(name) AS hi FROM items",
    "pairs": "SELECT DISTINCT cat, name FROM items",
    "top_cats": "SELECT cat, COUNT(*) AS n FROM items GROUP BY cat ORDER BY n DESC, cat LIMIT 3",
    "heavy": "SELECT name, SUM(w) AS sw FROM items WHERE qty > 2 GROUP BY name HAVING COUNT(*) > 1",
    "tag_counts": "SELECT tags.tag, COUNT(*) AS n, SUM(items.qty) AS q FROM items "
                  "JOIN tags ON items.id = tags.item_id GROUP BY tags.tag",
}

#: Views keyed by a parameter (full when the database runs with ``partial=False``).
KEYED_VIEWS = {
    "by_tag": "SELECT items.id, items.name, tags.tag FROM items JOIN tags "
              "ON items.id = tags.item_id WHERE tags.tag = ?",
    "cat_items": "SELECT items.id, tags.tag FROM items LEFT JOIN tags "
                 "ON items.id = tags.item_id WHERE items.cat = ?",
    "cat_count": "SELECT cat, COUNT(*) AS n, MAX(qty) AS q FROM items WHERE cat = ? GROUP BY cat",
}

NAMES = ["ant", "bee", "cat", "dog", "eel", "fox", None]
TAGS = ["red", "green", "blue"]


def item(rng: random.Random, i: int) -> tuple:
    return (i, rng.choice([1, 2, 3, 4, None]), rng.choice([0.5, 1.25, 2.0, -3.5, None]),
            rng.choice(NAMES), rng.randint(0, 6))


def load(pair: Pair, rng: random.Random, n: int, start: int = 0) -> None:
    pair.insert_many("items", [item(rng, i) for i in range(start, start + n)])
    pair.insert_many("tags", [(rng.randrange(start, start + n), rng.choice(TAGS))
                              for _ in range(n)])


def reopen(pair: Pair, **options: Any) -> rivulet.Database:
    pair.db.close()
    pair.db = rivulet.open(pair.path, spark=SPARK_CONFIG, **options)
    return pair.db


def check_all(pair: Pair, keyed: bool = False) -> None:
    for name in pair.views:
        if "?" not in pair.views[name]:
            pair.check_view(name)
    if keyed:
        for tag in TAGS + ["none"]:
            pair.check_view("by_tag", [tag])
        for cat in [1, 2, 3, 4, 9]:
            pair.check_view("cat_items", [cat])
            pair.check_view("cat_count", [cat])


def more_writes(pair: Pair, rng: random.Random) -> None:
    """Inserts, deletes that remove current extremes, and updates that move rows between
    groups: the state loaded from Spark must retract correctly."""
    load(pair, rng, 30, start=1000)
    pair.execute("DELETE FROM items WHERE qty = 0")
    pair.execute("DELETE FROM items WHERE w = 2.0 AND cat = 1")
    pair.execute("UPDATE items SET cat = 4, name = 'zebra' WHERE id % 7 = 3")
    pair.execute("DELETE FROM tags WHERE tag = 'green' AND item_id % 2 = 0")
    pair.settle()


def spark_tasks(db: rivulet.Database) -> list[dict[str, Any]]:
    return [t for t in db.bootstrap_report()["tasks"] if t["executor"] == "spark"]


@pytest.fixture
def pair(spark: Any) -> Iterator[Pair]:
    with Pair() as p:
        reopen(p, spark_bootstrap_rows=0)
        for sql in TABLES:
            p.execute(sql)
        yield p


# --------------------------------------------------------------------------- CREATE VIEW


def test_create_view_bootstraps_full_state_on_spark(pair: Pair) -> None:
    rng = random.Random(1)
    load(pair, rng, 200)
    pair.settle()
    kinds = set()
    for name, sql in FULL_VIEWS.items():
        pair.create_view(name, sql)
        tasks = spark_tasks(pair.db)
        assert tasks, f"view {name}: nothing was bootstrapped on Spark"
        assert not pair.db.bootstrap_report()["error"]
        kinds.update(t["op"][0] for t in tasks)
    assert {"γ", "δ", "↑"} <= kinds  # aggregates, distinct and top-k all came from Spark
    check_all(pair)
    more_writes(pair, rng)
    check_all(pair)


def _spreads(db: rivulet.Database) -> dict[Any, tuple[Any, Any]]:
    """Each category's STD(w) and VAR_SAMP(qty), computed here from the rows (statistics
    rounds the exact variance once, as rivulet does; VAR_SAMP of an INT shows 4 places)."""
    by_cat: dict[Any, tuple[list[float], list[int]]] = {}
    for cat, w, qty in db.query("SELECT cat, w, qty FROM items"):
        ws, qs = by_cat.setdefault(cat, ([], []))
        if w is not None:
            ws.append(w)
        qs.append(qty)
    return {cat: (math.sqrt(statistics.pvariance(ws)) if ws else None,
                  round(statistics.variance(qs), 4) if len(qs) > 1 else None)
            for cat, (ws, qs) in by_cat.items()}


def test_spreads_bootstrap_from_spark_and_keep_up_with_writes(pair: Pair) -> None:
    """STD and VAR_SAMP load their values from Spark (the state kind "values") into the
    engine's exact sums, which later writes add to and take from."""
    rng = random.Random(6)
    load(pair, rng, 200)
    pair.settle()
    pair.db.execute("CREATE VIEW spreads AS SELECT cat, STD(w) AS s, VAR_SAMP(qty) AS v "
                    "FROM items GROUP BY cat")
    assert any(t["op"][0] == "γ" for t in spark_tasks(pair.db))
    assert not pair.db.bootstrap_report()["error"]
    for writes in (False, True):
        if writes:
            more_writes(pair, rng)
            pair.settle()
        got = {cat: (s, v) for cat, s, v in pair.db.view("spreads").scan()}
        want = _spreads(pair.db)
        assert got.keys() == want.keys()
        for cat, (s, v) in got.items():
            assert v == want[cat][1] and (s == want[cat][0] or math.isclose(
                s, want[cat][0], rel_tol=1e-12)), (cat, (s, v), want[cat])


def test_full_readers_and_join_indexes_on_spark(spark: Any) -> None:
    with Pair() as p:
        reopen(p, spark_bootstrap_rows=0, partial=False)
        for sql in TABLES:
            p.execute(sql)
        rng = random.Random(2)
        load(p, rng, 150)
        p.settle()
        tasks = []
        for name, sql in KEYED_VIEWS.items():
            p.create_view(name, sql)
            report = p.db.bootstrap_report()
            assert spark_tasks(p.db) and not report["error"], report
            tasks += spark_tasks(p.db)
        assert [t for t in tasks if t["index"]], "no join index came from Spark"
        assert [t for t in tasks if t["op"].startswith("R ")], "no reader came from Spark"
        check_all(p, keyed=True)
        more_writes(p, rng)
        check_all(p, keyed=True)


def test_threshold_picks_the_executor(pair: Pair) -> None:
    load(pair, random.Random(3), 100)  # 100 items and 100 tags
    pair.settle()
    reopen(pair, spark_bootstrap_rows=101)
    pair.create_view("per_cat", FULL_VIEWS["per_cat"])
    assert pair.db.bootstrap_report()["tasks"] == []  # 100 rows < 101: in-process, at once
    reopen(pair, spark_bootstrap_rows=100)
    pair.create_view("overall", FULL_VIEWS["overall"])
    assert [t["executor"] for t in pair.db.bootstrap_report()["tasks"]] == ["spark"]
    # The top-k above an aggregate reads the aggregate's state in memory: 0 base rows.
    pair.create_view("top_cats", FULL_VIEWS["top_cats"])
    assert {t["op"][0]: t["executor"] for t in pair.db.bootstrap_report()["tasks"]} == {
        "γ": "spark", "↑": "in-process"}
    reopen(pair, spark_bootstrap_rows=None)
    pair.create_view("pairs", FULL_VIEWS["pairs"])
    assert pair.db.bootstrap_report()["tasks"] == []
    check_all(pair)


def test_spark_failure_falls_back_to_the_engine(pair: Pair,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    load(pair, random.Random(4), 80)
    pair.settle()

    def broken(*args: Any) -> Any:
        raise RuntimeError("deliberately broken")

    monkeypatch.setattr(bootstrap_module, "aggregate_state", broken)
    pair.create_view("per_cat", FULL_VIEWS["per_cat"])
    report = pair.db.bootstrap_report()
    assert "deliberately broken" in report["error"]
    assert [t["executor"] for t in report["tasks"]] == ["in-process"]
    check_all(pair)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(0, 60),
       views=st.lists(st.sampled_from(sorted(FULL_VIEWS)), min_size=1, max_size=3, unique=True))
def test_differential_bootstrap(spark: Any, seed: int, n: int, views: list[str]) -> None:
    """Random data, some views bootstrapped on Spark, random writes after: SQLite agrees."""
    rng = random.Random(seed)
    with Pair() as p:
        reopen(p, spark_bootstrap_rows=0)
        for sql in TABLES:
            p.execute(sql)
        load(p, rng, n)
        p.settle()
        for name in views:
            p.create_view(name, FULL_VIEWS[name])
            assert spark_tasks(p.db), name
        check_all(p)
        more_writes(p, rng)
        check_all(p)


# --------------------------------------------------------------------------- recovery


class Writer(threading.Thread):
    """Writes to rivulet until stopped, recording each committed statement for SQLite,
    and whether any commit happened while the recovery was still loading state."""

    def __init__(self, db: rivulet.Database, seed: int) -> None:
        super().__init__(daemon=True)
        self.db = db
        self.rng = random.Random(seed)
        self.done: list[tuple[str, tuple]] = []
        self.stop = threading.Event()
        self.during_recovery = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        next_id = 5000
        try:
            while not self.stop.is_set():
                choice = self.rng.random()
                if choice < 0.6:
                    row = item(self.rng, next_id)
                    next_id += 1
                    statement = ("INSERT INTO items VALUES (?, ?, ?, ?, ?)", row)
                elif choice < 0.75:
                    statement = ("INSERT INTO tags VALUES (?, ?)",
                                 (self.rng.randrange(next_id), self.rng.choice(TAGS)))
                elif choice < 0.9:
                    statement = ("DELETE FROM items WHERE id = ?", (self.rng.randrange(next_id),))
                else:
                    statement = ("UPDATE items SET qty = qty + 1 WHERE cat = ?",
                                 (self.rng.choice([1, 2, 3, 4]),))
                loading = not self.db.core.bootstrap.await_loaded(0)
                self.db.execute(*statement)
                self.done.append(statement)
                self.during_recovery += loading
                time.sleep(0.002)
        except BaseException as exc:  # reported by the test
            self.error = exc


def test_restart_recovers_full_state_on_spark_while_writes_continue(
        pair: Pair, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    load(pair, rng, 400)
    for name, sql in FULL_VIEWS.items():
        pair.create_view(name, sql)
    pair.create_view("cat_names", "SELECT id, name FROM items WHERE cat = ?")  # partial
    pair.settle()
    pair.db.close()
    # Spark starts only once the writer has committed some batches after open, so the
    # test does not depend on how fast Spark is.
    writers: list[Writer] = []
    original = bootstrap_module.Bootstrapper._compute

    def after_some_writes(self: Any, *args: Any, **kwargs: Any) -> None:
        deadline = time.monotonic() + 30
        while (not writers or len(writers[0].done) < 20) and time.monotonic() < deadline:
            time.sleep(0.01)
        original(self, *args, **kwargs)

    monkeypatch.setattr(bootstrap_module.Bootstrapper, "_compute", after_some_writes)
    db = pair.db = rivulet.open(pair.path, spark=SPARK_CONFIG, spark_bootstrap_rows=0)
    assert not db.core.bootstrap.await_loaded(0), "open waited for Spark instead of returning"
    writer = Writer(db, seed=6)
    writers.append(writer)
    writer.start()
    # Reads of views whose state is not loaded yet wait for it.
    assert len(db.view("top_cats").lookup()) == 3
    assert db.view("per_cat").lookup()
    assert db.core.bootstrap.await_loaded(120)
    time.sleep(0.3)  # and a few writes after the load
    writer.stop.set()
    writer.join()
    assert writer.error is None, writer.error
    report = db.bootstrap_report()
    assert not report["error"], report
    assert {t["executor"] for t in report["tasks"]} == {"spark"}
    assert writer.during_recovery >= 20, "writes waited for the recovery"
    assert len(writer.done) > writer.during_recovery, "no write after the recovery"
    for statement, params in writer.done:
        pair.lite.execute(statement, params)
    db.settle()
    check_all(pair)
    for cat in [1, 2, 3, 4]:
        pair.check_view("cat_names", [cat])


def test_restart_with_partial_state_off(spark: Any) -> None:
    """Every reader and join index full: all of them come back from Spark, and a keyed
    read issued right after open waits for its state."""
    with Pair() as p:
        reopen(p, spark_bootstrap_rows=None, partial=False)
        for sql in TABLES:
            p.execute(sql)
        load(p, random.Random(7), 200)
        for name, sql in KEYED_VIEWS.items():
            p.create_view(name, sql)
        p.settle()
        db = reopen(p, spark_bootstrap_rows=0, partial=False)
        check_all(p, keyed=True)
        report = db.bootstrap_report()
        assert {t["executor"] for t in report["tasks"]} == {"spark"} and not report["error"]
        more_writes(p, random.Random(8))
        check_all(p, keyed=True)


def test_recovery_read_times_out_with_the_upquery_timeout(pair: Pair,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    load(pair, random.Random(9), 50)
    pair.create_view("per_cat", FULL_VIEWS["per_cat"])
    pair.settle()
    pair.db.close()
    release = threading.Event()
    original = bootstrap_module.Bootstrapper._compute

    def slow(self: Any, *args: Any, **kwargs: Any) -> None:
        release.wait(30)
        original(self, *args, **kwargs)

    monkeypatch.setattr(bootstrap_module.Bootstrapper, "_compute", slow)
    db = pair.db = rivulet.open(pair.path, spark=SPARK_CONFIG, spark_bootstrap_rows=0)
    try:
        with pytest.raises(rivulet.UpqueryTimeout, match="recovered"):
            db.view("per_cat").lookup(timeout=0.2)
        db.execute("INSERT INTO items VALUES (99999, 1, 1.0, 'ant', 3)")  # writes go on
        pair.lite.execute("INSERT INTO items VALUES (99999, 1, 1.0, 'ant', 3)")
    finally:
        release.set()
    db.settle()
    pair.check_view("per_cat")
