"""Storage lookups in a shared read snapshot (SqliteStorage.read_snapshot): an upquery's
base lookups all read one point in time, whatever commits meanwhile, and pay for opening
it once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rivulet.schema import INT, Column, TableSchema
from rivulet.storage.sqlite import SqliteStorage

T = TableSchema("t", (Column("id", INT), Column("g", INT)), primary_key=(0,))


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqliteStorage]:
    s = SqliteStorage(tmp_path)
    with s.transaction():
        s.create_table(T)
    commit(s, [(1, 1), (2, 1), (3, 2)])
    yield s
    s.close()


def commit(s: SqliteStorage, rows: list[tuple[int, int]]) -> int:
    with s.transaction():
        s.insert(T, rows)
        return s.commit_batch(b"", len(rows))


def test_lookups_in_one_snapshot_read_one_point_in_time(storage: SqliteStorage) -> None:
    with storage.read_snapshot():
        lsn, rows = storage.lookup(T, (1,), [1])
        later = commit(storage, [(4, 1), (5, 2)])  # the writer commits meanwhile
        assert later > lsn
        assert storage.lookup(T, (1,), [1]) == (lsn, rows)
        assert storage.lookup(T, (1,), [2]) == (lsn, [(3, 2)])
    assert sorted(rows) == [(1, 1), (2, 1)]
    lsn_after, rows_after = storage.lookup(T, (1,), [1])
    assert lsn_after == later and sorted(rows_after) == [(1, 1), (2, 1), (4, 1)]


def test_another_threads_lookup_waits_for_the_snapshot_to_end(storage: SqliteStorage) -> None:
    answers: list[tuple[int, list]] = []
    other = threading.Thread(target=lambda: answers.append(storage.lookup(T, (1,), [2])))
    with storage.read_snapshot():
        later = commit(storage, [(6, 2)])
        other.start()
        other.join(0.2)
        assert other.is_alive() and not answers
    other.join(10)
    assert answers == [(later, sorted(answers[0][1]))] and sorted(answers[0][1]) == [(3, 2), (6, 2)]


def test_a_failed_lookup_ends_the_snapshot(storage: SqliteStorage) -> None:
    with pytest.raises(RuntimeError), storage.read_snapshot():
        storage.lookup(T, (1,), [1])
        raise RuntimeError("upquery failed")
    later = commit(storage, [(7, 1)])
    assert storage.lookup(T, (1,), [1])[0] == later
    with storage.read_snapshot():  # the reader connection is free again
        assert storage.lookup(T, (0,), [7]) == (later, [(7, 1)])
