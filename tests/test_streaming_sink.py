"""The streaming sink's store (rivulet/pipeline/streaming/sink.py) on its own, without Spark:
reader keys, the lookups a partial reader fills from, and data directories of the first
layout (no reader keys) brought up to date."""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path

from rivulet.pipeline.streaming.sink import SinkStore
from rivulet.state.arrangement import key_function

KEY_OF = key_function((0,))  # the reader key: the first column


def test_rows_for_and_previous_rows_by_reader_key(tmp_path: Path) -> None:
    store = SinkStore(tmp_path / "sink.db")
    groups = {(g,): ((g % 7, f"group {g}"),) for g in range(2000)}  # more than one chunk
    store.commit_groups("s", 0, 10, groups, KEY_OF)
    store.commit_counts("r", 0, 10, [((k, "x"), 2) for k in range(5)], KEY_OF)
    assert sorted(store.rows_for("s", [3])) == sorted(
        ((3, f"group {g}"), 1) for g in range(3, 2000, 7))
    assert store.rows_for("s", [99]) == []
    assert store.rows_for("r", [1, 4]) == [((1, "x"), 2), ((4, "x"), 2)]
    assert store.previous_groups("s", list(groups)) == groups
    assert store.previous_counts("r", [(2, "x"), (9, "x")]) == {(2, "x"): 2}
    store.commit_groups("s", 1, 11, {(3,): ()}, KEY_OF)  # the group is gone
    assert ((3, "group 3"), 1) not in store.rows_for("s", [3])
    assert store.progress("s") == (1, 11)
    store.close()


def test_first_layout_gets_reader_keys(tmp_path: Path) -> None:
    path = tmp_path / "sink.db"
    old = sqlite3.connect(path)
    old.executescript("""
        CREATE TABLE progress (stream TEXT PRIMARY KEY, batch_id INTEGER NOT NULL,
                               lsn INTEGER NOT NULL);
        CREATE TABLE groups (stream TEXT NOT NULL, grp BLOB NOT NULL, rows BLOB NOT NULL,
                             PRIMARY KEY (stream, grp));
        CREATE TABLE counts (stream TEXT NOT NULL, row BLOB NOT NULL, n INTEGER NOT NULL,
                             PRIMARY KEY (stream, row));
    """)
    old.execute("INSERT INTO groups VALUES ('s', ?, ?)",
                (pickle.dumps((5,)), pickle.dumps(((5, 9),))))
    old.execute("INSERT INTO counts VALUES ('r', ?, 3)", (pickle.dumps((8, "y")),))
    old.commit()
    old.close()
    store = SinkStore(path)
    assert store.rows_for("s", [5]) == []  # no reader keys yet
    store.backfill_keys("s", KEY_OF)
    store.backfill_keys("r", KEY_OF)
    assert store.rows_for("s", [5]) == [((5, 9), 1)]
    assert store.rows_for("r", [8]) == [((8, "y"), 3)]
    store.close()
