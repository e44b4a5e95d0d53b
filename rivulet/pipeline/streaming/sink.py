"""The durable side of the sink: each view's materialized rows and last applied batch.

Why a store of its own: the readers serving the view live in memory, but Spark resumes a
restarted query from its checkpoint, not from zero, so the rows the earlier batches
produced must survive the process. Each micro-batch's changes and its batch id are
committed in ONE SQLite transaction (``<data>/stream/sink.db``): after a crash either both
are there or neither, and a batch Spark runs again after restarting (its id is not above
the stored one) is skipped. That is the idempotence the exactly-once guarantee ends with.

Two layouts, by the view's shape (:mod:`rivulet.pipeline.streaming.plan`):

* ``groups``: an aggregate view; per group key, the group's current root rows (a changed
  group's rows are replaced whole).
* ``rows``: a view of signed rows; per root row, its multiplicity.

Each stored row also carries its *reader key* (the view's parameter values, ``key``,
indexed): a partial reader that misses a key fills it from here (:meth:`SinkStore.rows_for`),
which is the view at exactly the LSN the stream has applied, and a partial stream reads
the previous rows of the groups a batch changes from here instead of holding the whole
view in memory (:meth:`SinkStore.previous_groups`, :meth:`SinkStore.previous_counts`).
"""

from __future__ import annotations

import pickle
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
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
#: Added after the first layout: the reader key of a stored row (NULL until backfilled).
_KEYED = """
CREATE INDEX IF NOT EXISTS groups_key ON groups (stream, key);
CREATE INDEX IF NOT EXISTS counts_key ON counts (stream, key);
"""
#: Most values bound in one statement (SQLite's default limit is 32766; older ones 999).
_CHUNK = 900

KeyOf = Callable[[Row], Any]


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
        for table in ("groups", "counts"):
            columns = {c[1] for c in self.conn.execute(f"PRAGMA table_info({table})")}
            if "key" not in columns:
                self.conn.execute(f"ALTER TABLE {table} ADD COLUMN key BLOB")
        self.conn.executescript(_KEYED)
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
                      changed: Mapping[tuple, tuple[Row, ...]], key_of: KeyOf) -> None:
        """Replace the rows of the changed groups (no rows: the group is gone). An
        aggregate's group has at most one row, so it has one reader key."""
        gone = [(stream, _dump(g)) for g, rows in changed.items() if not rows]
        kept = [(stream, _dump(g), _dump(rows), _dump(key_of(rows[0])))
                for g, rows in changed.items() if rows]
        with self.lock, self._transaction(stream, batch_id, lsn):
            self.conn.executemany("DELETE FROM groups WHERE stream = ? AND grp = ?", gone)
            self.conn.executemany(
                "INSERT OR REPLACE INTO groups (stream, grp, rows, key) VALUES (?, ?, ?, ?)", kept)

    def commit_counts(self, stream: str, batch_id: int, lsn: int,
                      changed: Iterable[tuple[Row, int]], key_of: KeyOf) -> None:
        """Set the multiplicity of changed rows (0: the row is gone)."""
        changed = list(changed)
        with self.lock, self._transaction(stream, batch_id, lsn):
            self.conn.executemany("DELETE FROM counts WHERE stream = ? AND row = ?",
                                  [(stream, _dump(r)) for r, n in changed if n == 0])
            self.conn.executemany(
                "INSERT OR REPLACE INTO counts (stream, row, n, key) VALUES (?, ?, ?, ?)",
                [(stream, _dump(r), n, _dump(key_of(r))) for r, n in changed if n != 0])

    def backfill_keys(self, stream: str, key_of: KeyOf) -> None:
        """Set the reader key of rows stored before keys were (a data directory of the
        first layout); a no-op once done."""
        with self.lock:
            groups = self.conn.execute(
                "SELECT grp, rows FROM groups WHERE stream = ? AND key IS NULL",
                (stream,)).fetchall()
            counts = self.conn.execute(
                "SELECT row FROM counts WHERE stream = ? AND key IS NULL", (stream,)).fetchall()
            if not groups and not counts:
                return
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.executemany("UPDATE groups SET key = ? WHERE stream = ? AND grp = ?",
                                  [(_dump(key_of(pickle.loads(r)[0])), stream, g)
                                   for g, r in groups])
            self.conn.executemany("UPDATE counts SET key = ? WHERE stream = ? AND row = ?",
                                  [(_dump(key_of(pickle.loads(r))), stream, r) for (r,) in counts])
            self.conn.execute("COMMIT")

    def rows_for(self, stream: str, keys: Iterable[Any]) -> list[tuple[Row, int]]:
        """The stored rows (with multiplicities) of the view whose reader key is one of
        ``keys``: what a partial reader fills a miss with."""
        blobs = [_dump(k) for k in keys]
        groups = self._select_in("SELECT rows FROM groups WHERE stream = ? AND key IN",
                                 stream, blobs)
        counts = self._select_in("SELECT row, n FROM counts WHERE stream = ? AND key IN",
                                 stream, blobs)
        return ([(row, 1) for (rows,) in groups for row in pickle.loads(rows)]
                + [(pickle.loads(row), n) for row, n in counts])

    def previous_groups(self, stream: str, groups: Iterable[tuple]) -> dict[tuple, tuple[Row, ...]]:
        """The stored rows of ``groups`` (those it has)."""
        found = self._select_in("SELECT grp, rows FROM groups WHERE stream = ? AND grp IN",
                                stream, [_dump(g) for g in groups])
        return {pickle.loads(g): pickle.loads(r) for g, r in found}

    def previous_counts(self, stream: str, rows: Iterable[Row]) -> dict[Row, int]:
        """The stored multiplicities of ``rows`` (those it has)."""
        found = self._select_in("SELECT row, n FROM counts WHERE stream = ? AND row IN",
                                stream, [_dump(r) for r in rows])
        return {pickle.loads(r): n for r, n in found}

    def _select_in(self, query: str, stream: str, values: list[bytes]) -> list[tuple]:
        """``query`` (ending in ``IN``) for ``stream`` and each chunk of ``values``."""
        out: list[tuple] = []
        for start in range(0, len(values), _CHUNK):
            chunk = values[start:start + _CHUNK]
            with self.lock:
                out.extend(self.conn.execute(f"{query} ({','.join('?' * len(chunk))})",
                                             (stream, *chunk)).fetchall())
        return out

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

