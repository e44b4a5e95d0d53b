"""The durable side of the sink: each view's materialized rows and last applied batch.

Why a store of its own: the readers serving the view live in memory, but Spark resumes a
restarted query from its checkpoint, not from zero, so the rows the earlier batches
produced must survive the process. Each micro-batch's changes and its batch id are
committed in ONE SQLite transaction (``<data>/stream/sink.db``): after a crash either both
are there or neither, and a batch Spark runs again after restarting (its id is not above
the stored one) is skipped. That is the idempotence the exactly-once guarantee ends with.

Two layouts, by the view's shape (:mod:`rivulet.spark.streaming.plan`):

* ``groups``: an aggregate view; per group key, the group's current root rows (a changed
  group's rows are replaced whole).
* ``rows``: a view of signed rows; per root row, its multiplicity.
"""

from __future__ import annotations

import pickle
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

Row = tuple

_SCHEMA = """
CREATE TABLE IF NOT EXISTS progress (
    stream TEXT PRIMARY KEY, batch_id INTEGER NOT NULL, lsn INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS groups (
    stream TEXT NOT NULL, grp BLOB NOT NULL, rows BLOB NOT NULL, PRIMARY KEY (stream, grp));
CREATE TABLE IF NOT EXISTS counts (
    stream TEXT NOT NULL, row BLOB NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (stream, row));
"""


def _dump(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


class SinkStore:
    """``sink.db``: streams' rows and progress. Thread-safe (one lock, one connection):
    each query's batches arrive on a thread of their own."""

    def __init__(self, path: Path, *, durability: str = "NORMAL") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(f"PRAGMA synchronous={durability}")
        self.conn.executescript(_SCHEMA)
        self.lock = threading.Lock()

    def progress(self, stream: str) -> tuple[int, int] | None:
        """(last applied batch id, its LSN), or None for a stream never applied."""
        with self.lock:
            row = self.conn.execute("SELECT batch_id, lsn FROM progress WHERE stream = ?",
                                    (stream,)).fetchone()
        return None if row is None else (row[0], row[1])

    def groups(self, stream: str) -> dict[tuple, tuple[Row, ...]]:
        with self.lock:
            found = self.conn.execute("SELECT grp, rows FROM groups WHERE stream = ?", (stream,))
            return {pickle.loads(g): pickle.loads(r) for g, r in found}

    def counts(self, stream: str) -> dict[Row, int]:
        with self.lock:
            found = self.conn.execute("SELECT row, n FROM counts WHERE stream = ?", (stream,))
            return {pickle.loads(r): n for r, n in found}

    def commit_groups(self, stream: str, batch_id: int, lsn: int,
                      changed: Mapping[tuple, tuple[Row, ...]]) -> None:
        """Replace the rows of the changed groups (no rows: the group is gone)."""
        gone = [(stream, _dump(g)) for g, rows in changed.items() if not rows]
        kept = [(stream, _dump(g), _dump(rows)) for g, rows in changed.items() if rows]
        with self.lock, self._transaction(stream, batch_id, lsn):
            self.conn.executemany("DELETE FROM groups WHERE stream = ? AND grp = ?", gone)
            self.conn.executemany("INSERT OR REPLACE INTO groups VALUES (?, ?, ?)", kept)

    def commit_counts(self, stream: str, batch_id: int, lsn: int,
                      changed: Iterable[tuple[Row, int]]) -> None:
        """Set the multiplicity of changed rows (0: the row is gone)."""
        changed = list(changed)
        with self.lock, self._transaction(stream, batch_id, lsn):
            self.conn.executemany("DELETE FROM counts WHERE stream = ? AND row = ?",
                                  [(stream, _dump(r)) for r, n in changed if n == 0])
            self.conn.executemany("INSERT OR REPLACE INTO counts VALUES (?, ?, ?)",
                                  [(stream, _dump(r), n) for r, n in changed if n != 0])

    @contextmanager
    def _transaction(self, stream: str, batch_id: int, lsn: int) -> Iterator[None]:
        """One transaction: the caller's changes, then the stream's progress."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.conn.execute("INSERT OR REPLACE INTO progress VALUES (?, ?, ?)",
                              (stream, batch_id, lsn))
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def drop(self, stream: str) -> None:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            for table in ("progress", "groups", "counts"):
                self.conn.execute(f"DELETE FROM {table} WHERE stream = ?", (stream,))
            self.conn.execute("COMMIT")

    def close(self) -> None:
        with self.lock:
            self.conn.close()
