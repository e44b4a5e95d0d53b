"""Pre-warming partial views (rivulet/engine/prewarm.py): ``db.prewarm`` and the hot keys
saved at close and filled again at open; on Spark for the shapes it can fill
consistently (the reader alone, or one partial aggregate), in-process otherwise.

A pre-warmed key must be a hit (``stats()["per_view"][v]["hits"/"misses"]``), its answer
must be SQLite's (tests/oracle.py), and the partial state it filled must stay right under
later writes (a key filled in the reader but not in a partial aggregate above it would
silently stop changing).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

import rivulet
from oracle import Pair
from rivulet.engine.prewarm import HOT_KEYS_FILE, prewarm_view, spark_plan
from spark_fixtures import SPARK_CONFIG, spark_session  # noqa: F401

VIEWS = {
    "by_cat": "SELECT id, name FROM items WHERE cat = ?",
    "cat_count": "SELECT cat, COUNT(*) AS n, SUM(qty) AS q FROM items WHERE cat = ? GROUP BY cat",
    "by_pair": "SELECT id FROM items WHERE cat = ? AND name = ?",
    "names_in": "SELECT id, name FROM items WHERE cat = ? AND name IN (?, ?)",
}


@pytest.fixture
def pair() -> Iterator[Pair]:
    with Pair() as p:
        p.execute("CREATE TABLE items (id INT PRIMARY KEY, cat INT, name VARCHAR(10), qty INT)")
        rng = random.Random(1)
        p.insert_many("items", [(i, rng.randint(0, 30), rng.choice("abc"), rng.randint(0, 9))
                                for i in range(600)])
        for name, sql in VIEWS.items():
            p.create_view(name, sql)
        p.settle()
        yield p


def counts(db: rivulet.Database, view: str) -> tuple[int, int]:
    stats = db.stats()["per_view"][view]
    return stats["hits"], stats["misses"]


def assert_all_hits(db: rivulet.Database, view: str, reads: int, misses: int = 0) -> None:
    """``reads`` reads (at least: the first read of a key after a write may count twice
    in the reader's own accounting) and exactly ``misses`` misses."""
    hits, missed = counts(db, view)
    assert missed == misses and hits >= reads - misses, (hits, missed)


def test_prewarm_fills_keys_that_reads_then_hit(pair: Pair) -> None:
    db = pair.db
    assert db.view("by_cat").partial and db.view("cat_count").partial
    assert db.prewarm("cat_count", [1, 2, 3, 999]) == 4
    assert db.prewarm("cat_count", [(2,), 3]) == 0  # held already
    assert db.prewarm("by_pair", [(4, "a"), (5, "b")]) == 2
    assert counts(db, "cat_count") == (0, 0)  # a pre-warm is not a read
    for cat in [1, 2, 3, 999]:
        pair.check_view("cat_count", [cat])
    pair.check_view("by_pair", [4, "a"])
    assert_all_hits(db, "cat_count", 4)
    assert_all_hits(db, "by_pair", 1)
    # Later writes reach the pre-warmed keys (the partial aggregate holds them too).
    pair.insert_many("items", [(1000, 2, "a", 5), (1001, 999, "b", 1)])
    pair.execute("DELETE FROM items WHERE cat = 3 AND qty < 5")
    pair.settle()
    for cat in [1, 2, 3, 999]:
        pair.check_view("cat_count", [cat])
    assert_all_hits(db, "cat_count", 8)


def test_prewarm_of_an_in_view_fills_its_equality_values(pair: Pair) -> None:
    """The reader of ``cat = ? AND name IN (...)`` is keyed by ``cat``: a pre-warm takes
    the category alone or a full key (its IN value dropped), and every list read for a
    pre-warmed category then hits; so after a reopen, from the saved hot keys."""
    db = pair.db
    assert db.prewarm("names_in", [4, (5, "a"), (5, "b")]) == 2
    for names in [("a",), ("b", "c"), ("zz", "a")]:
        pair.check_view("names_in", [4, *names])
        pair.check_view("names_in", [5, *names])
    assert_all_hits(db, "names_in", 6)
    pair.reopen()
    pair.check_view("names_in", [5, "c"])
    assert_all_hits(pair.db, "names_in", 1)


def test_prewarm_rejects_bad_keys(pair: Pair) -> None:
    with pytest.raises(ValueError, match="keyed by 2 value"):
        pair.db.prewarm("by_pair", [(1, "a", 2)])
    with pytest.raises(rivulet.ProgramError):
        pair.db.prewarm("nope", [1])
    assert pair.db.prewarm("by_cat", [None, "not a number"]) == 0


def test_hot_keys_are_prewarmed_after_reopen(pair: Pair) -> None:
    for cat in [3, 4, 5]:
        pair.check_view("by_cat", [cat])
        pair.check_view("cat_count", [cat])
    pair.check_view("by_pair", [3, "b"])
    pair.reopen()
    db = pair.db
    assert (db.path / HOT_KEYS_FILE).exists()
    assert counts(db, "by_cat") == (0, 0)
    for cat in [3, 4, 5]:
        pair.check_view("by_cat", [cat])
        pair.check_view("cat_count", [cat])
    pair.check_view("by_pair", [3, "b"])
    assert_all_hits(db, "by_cat", 3)
    assert_all_hits(db, "cat_count", 3)
    assert_all_hits(db, "by_pair", 1)
    pair.check_view("by_cat", [6])  # never read before: a miss
    assert_all_hits(db, "by_cat", 4, misses=1)


def test_prewarm_on_open_can_be_turned_off(pair: Pair) -> None:
    pair.check_view("by_cat", [7])
    pair.db.close()
    pair.db = rivulet.open(pair.path, prewarm=False)
    pair.check_view("by_cat", [7])
    assert counts(pair.db, "by_cat") == (0, 1)


def test_saved_keys_of_a_changed_view_are_ignored(pair: Pair) -> None:
    pair.check_view("by_cat", [8])
    pair.reopen()
    pair.drop_view("by_cat")
    pair.create_view("by_cat", "SELECT id, qty FROM items WHERE cat = ?")
    pair.reopen()
    pair.check_view("by_cat", [8])
    assert counts(pair.db, "by_cat") == (0, 1)


def test_a_damaged_hot_keys_file_is_ignored(pair: Pair) -> None:
    pair.check_view("by_cat", [9])
    pair.db.close()
    (pair.db.path / HOT_KEYS_FILE).write_bytes(b"not a pickle")
    pair.db = rivulet.open(pair.path)
    pair.check_view("by_cat", [9])
    assert counts(pair.db, "by_cat") == (0, 1)


# --------------------------------------------------------------------------- on Spark


@pytest.fixture
def spark_pair(spark: Any) -> Iterator[Pair]:
    with Pair() as p:
        p.db.close()
        p.db = rivulet.open(p.path, spark=SPARK_CONFIG)
        p.execute("CREATE TABLE items (id INT PRIMARY KEY, cat INT, name VARCHAR(10), qty INT)")
        p.execute("CREATE TABLE tags (item_id INT NOT NULL, tag VARCHAR(10) NOT NULL)")
        rng = random.Random(2)
        p.insert_many("items", [(i, rng.randint(0, 30), rng.choice("abc"), rng.randint(0, 9))
                                for i in range(500)])
        p.insert_many("tags", [(rng.randrange(500), rng.choice(["x", "y", "z"]))
                               for _ in range(300)])
        for name, sql in {**VIEWS, **SPARK_VIEWS}.items():
            p.create_view(name, sql)
        p.settle()
        yield p


SPARK_VIEWS = {
    "tagged": "SELECT items.id, items.name, tags.tag FROM items JOIN tags "
              "ON items.id = tags.item_id WHERE items.cat = ?",
    "top_names": "SELECT cat, name, COUNT(*) AS n FROM items WHERE cat = ? "
                 "GROUP BY cat, name ORDER BY n DESC, name LIMIT 2",
}


def spark_writes(p: Pair) -> None:
    p.insert_many("items", [(900, 3, "a", 1), (901, 4, "c", 8), (902, 31, "b", 2)])
    p.insert_many("tags", [(900, "x"), (3, "z"), (901, "y")])
    p.execute("DELETE FROM items WHERE cat = 5 AND qty > 4")
    p.execute("UPDATE items SET cat = 3 WHERE id % 11 = 0")
    p.settle()


@pytest.mark.spark
@pytest.mark.parametrize("view", ["by_cat", "tagged", "cat_count"])
def test_prewarm_on_spark(spark_pair: Pair, view: str) -> None:
    db = spark_pair.db
    keys = [3, 4, 5, 31, 77]
    result = prewarm_view(db, db.view(view), keys, on_spark=True)
    assert (result.executor, result.filled) == ("spark", len(keys))
    assert prewarm_view(db, db.view(view), keys, on_spark=True).filled == 0
    for key in keys:
        spark_pair.check_view(view, [key])
    assert_all_hits(db, view, len(keys))
    spark_writes(spark_pair)  # the filled keys keep up with writes
    for key in keys:
        spark_pair.check_view(view, [key])
    assert_all_hits(db, view, 2 * len(keys))


@pytest.mark.spark
def test_prewarm_on_spark_shares_an_aggregate_some_keys_of_which_are_held(spark_pair: Pair) -> None:
    db = spark_pair.db
    spark_pair.check_view("cat_count", [3])  # the aggregate now holds 3 (through cat_count)
    assert spark_plan(db.program, db.core.built["cat_count"]) is not None
    result = prewarm_view(db, db.view("cat_count"), [3, 4, 6], on_spark=True)
    assert (result.executor, result.filled) == ("spark", 2)
    for key in [3, 4, 6]:
        spark_pair.check_view("cat_count", [key])
    spark_writes(spark_pair)
    for key in [3, 4, 6]:
        spark_pair.check_view("cat_count", [key])


@pytest.mark.spark
def test_prewarm_falls_back_in_process_where_spark_cannot_fill_consistently(
        spark_pair: Pair) -> None:
    db = spark_pair.db
    built = db.core.built["top_names"]
    assert spark_plan(db.program, built) is None  # a partial top-k over a partial aggregate
    result = prewarm_view(db, db.view("top_names"), [3, 4], on_spark=True)
    assert (result.executor, result.filled) == ("in-process", 2)
    # keyed by cat, not (cat, name)
    assert spark_plan(db.program, db.core.built["names_in"]) is None
    result = prewarm_view(db, db.view("names_in"), [(3, "a"), 4], on_spark=True)
    assert (result.executor, result.filled) == ("in-process", 2)
    spark_writes(spark_pair)
    for key in [3, 4]:
        spark_pair.check_view("top_names", [key])
        spark_pair.check_view("names_in", [key, "a", "c"])
    assert_all_hits(db, "names_in", 2)
