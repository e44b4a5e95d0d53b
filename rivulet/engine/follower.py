"""A read-only database that follows another process's writes: the engine of a replica.

A :class:`Follower` opens the data directory a primary :class:`~rivulet.engine.database.Database`
writes, builds the same program, and serves reads from its own partial state: it is how
reads use a second core in CPython, whose GIL keeps one process on one. It never writes.

The primary's log is its replication stream. Every committed batch is a row of
``_rivulet_log`` holding the batch's deltas, so following is tailing that table: a thread
polls it, and each new batch is queued for the propagation worker exactly as the primary
queues its own commits. Upqueries read the base tables from SQLite like the primary's do,
and SQLite may be ahead of this graph by batches the tail has not read yet, so before an
answer is taken back to the graph's LSN (``Upqueries.rewind``), the log is tailed up to the
answer's snapshot: every batch the snapshot holds is then known, and subtracted.

A change of the program (DDL, or an import, whose log entry holds no deltas) cannot be
followed batch by batch: the follower stops applying, says it is ``stale``, and its owner
opens a new one (see :mod:`rivulet.server.mysql.replica`). The one thing a follower writes is
what a schema change left to migrate lazily, if it opens before the primary is done.
"""

from __future__ import annotations

import logging
import pickle
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rivulet.engine.core import Core
from rivulet.engine.database import Database
from rivulet.engine.program import Program
from rivulet.engine.propagate import CommittedBatch
from rivulet.engine.upquery import Upqueries
from rivulet.errors import ProgramError
from rivulet.spark.bootstrap import PlanRecordingBuilder
from rivulet.storage.sqlite import DB_FILE
from rivulet.storage.writes import WriteRequest
from rivulet.values.schema import Row, TableSchema

log = logging.getLogger("rivulet")

#: Seconds between two polls of the primary's log (a write forwarded by this process is
#: followed at once, without waiting for the poll: see :meth:`Follower.follow`).
POLL_SECONDS = 0.002
#: Log entries read per query while catching up.
TAIL_CHUNK = 256


class ReadOnlyError(ProgramError):
    """A write or a change of the program sent to a follower."""


class Follower(Database):
    """A :class:`Database` that applies the batches another process commits (see the
    module docstring). Options are :func:`rivulet.open`'s; Spark bootstrap, pre-warming
    and background migration are off (they are the primary's work), and the directory's
    lock is the primary's too (a follower writes no batch)."""

    writes_directory = False

    def __init__(self, path: str | Path, *, poll_seconds: float = POLL_SECONDS,
                 on_stale: Callable[[str], None] | None = None, **options: Any) -> None:
        self._tail_lock = threading.Lock()
        self._tail: sqlite3.Connection | None = None
        #: The program's signature when this follower read it: a change means DDL.
        self._program = _program_signature(Path(path) / DB_FILE)
        #: Why this follower stopped following (None while it follows).
        self.stale: str | None = None
        self._on_stale = on_stale
        self._poll_seconds = poll_seconds
        options.update(spark_bootstrap_rows=None, prewarm=False, background_migration=False)
        super().__init__(path, **options)
        if self.core.lazy.pending():
            # Replayed schema changes start out as migrating; the primary has usually
            # done the work (a server with replicas finishes it before answering DDL),
            # and finishing then only confirms it. What is left is done here: migrating
            # a row or key writes no delta, and each step is guarded so that no unit is
            # migrated twice, whichever process gets to it.
            self.core.lazy.finish()
        self._poller = threading.Thread(target=self._poll_loop, name="rivulet-follow",
                                        daemon=True)
        self._poller.start()

    # ..................................................................... following

    def follow(self, upto: int | None = None, *, wake: bool = True) -> int:
        """Queue every batch the primary has committed (at least up to ``upto``) for the
        propagation worker (woken unless ``wake`` is False: the caller then applies them
        with ``apply_here``); returns the LSN followed to."""
        if upto is not None and self.storage.lsn >= upto:
            return self.storage.lsn
        with self._tail_lock:
            while self.stale is None and not self.closed:
                rows, program = self._read_log()
                if program != self._program:
                    self._go_stale("the program changed (DDL on the primary)")
                    break
                for lsn, payload in rows:
                    deltas = self._deltas(payload)
                    if deltas is None:
                        break
                    self.core.unapplied.add(lsn, deltas)
                    self.storage.lsn = lsn
                    self.propagation.queue(CommittedBatch(lsn, deltas, time.monotonic()), wake)
                if len(rows) < TAIL_CHUNK:
                    break
        return self.storage.lsn

    def _read_log(self) -> tuple[list[tuple[int, bytes | None]], tuple[int, int]]:
        """New log entries and the program's signature, read in one snapshot."""
        if self._tail is None:
            self._tail = sqlite3.connect(self.storage.path, isolation_level=None,
                                         check_same_thread=False)
        conn = self._tail
        conn.execute("BEGIN")
        try:
            rows = conn.execute("SELECT lsn, payload FROM _rivulet_log WHERE lsn > ? "
                                "ORDER BY lsn LIMIT ?", (self.storage.lsn, TAIL_CHUNK)).fetchall()
            program = conn.execute(_PROGRAM_SIGNATURE).fetchone()
        finally:
            conn.execute("COMMIT")
        return rows, tuple(program)

    def _deltas(self, payload: bytes | None) -> dict[int, list] | None:
        """A batch's deltas by base node; None (and stale) if the batch cannot be
        followed: an import (no deltas logged), or rows of a table as this follower does
        not know it."""
        if payload is None:
            self._go_stale("rows were imported on the primary")
            return None
        deltas: dict[int, list] = {}
        for table, rows in pickle.loads(payload).items():
            schema = self.catalog.tables.get(table.lower())
            if schema is None or not _rows_fit(schema, rows):
                self._go_stale(f"table {table!r} changed on the primary")
                return None
            deltas[self.graph.bases[table.lower()]] = rows
        return deltas

    def apply_here(self) -> None:
        """Apply the queued batches on the calling thread if they are small and the graph
        is free, else wake the propagation worker (the primary's loop does the same with
        its own commits: see ``Database.submit_now``)."""
        self.propagation.apply_here()

    def _go_stale(self, why: str) -> None:
        if self.stale is None:
            self.stale = why
            log.info("follower of %s stops following: %s", self.path, why)
            if self._on_stale is not None:
                self._on_stale(why)

    def _poll_loop(self) -> None:
        """Follow the log every ``poll_seconds``, the first time ``poll_seconds`` after
        opening (which read the log as it was then)."""
        while not self.closed and self.stale is None:
            time.sleep(self._poll_seconds)
            if self.closed or self.stale is not None:
                return
            try:
                self.follow()
            except Exception:  # the primary's file is being replaced, say: try again
                log.exception("following the log of %s failed", self.path)
                time.sleep(1.0)

    def make_upqueries(self, core: Core) -> Upqueries:
        return _FollowingUpqueries(core, self.follow)

    def make_program(self, core: Core, builder: PlanRecordingBuilder,
                     upqueries: Upqueries) -> Program:
        return Program(core, builder, upqueries, enforce_unique=False)  # the primary's work

    # ..................................................................... read-only

    def submit_many(self, requests: Sequence[WriteRequest], *, wake: bool = True) -> None:
        raise ReadOnlyError("a follower takes no writes: send them to the primary")

    def submit_now(self, requests: Sequence[WriteRequest], *, propagate: bool = False) -> bool:
        raise ReadOnlyError("a follower takes no writes: send them to the primary")

    def _ddl(self, statement: Any, foreign_key_checks: bool | None = None) -> None:
        raise ReadOnlyError("a follower takes no DDL: send it to the primary")

    def bulk_insert(self, table: str, batches: Any, **options: Any) -> tuple[int | None, int]:
        raise ReadOnlyError("a follower takes no imports: send them to the primary")

    def close(self) -> None:
        super().close()
        with self._tail_lock:
            if self._tail is not None:
                self._tail.close()
                self._tail = None


class _FollowingUpqueries(Upqueries):
    """Upqueries of a follower: before a base table's rows read at some LSN are taken back
    to the graph's, every batch up to that LSN is followed (see the module docstring)."""

    def __init__(self, core: Core, follow: Callable[[int], int]) -> None:
        super().__init__(core)
        self._follow = follow

    def rewind(self, table: str, snapshot_lsn: int, counts: dict[Row, int],
               wanted: Callable[[Row], bool] | None = None) -> list[tuple[Row, int]]:
        self._follow(snapshot_lsn)  # every batch the snapshot holds is known (module doc)
        return super().rewind(table, snapshot_lsn, counts, wanted)


_PROGRAM_SIGNATURE = "SELECT COALESCE(MAX(seq), 0), COUNT(*) FROM _rivulet_program"


def _program_signature(path: Path) -> tuple[int, int] | None:
    """The program's last statement number and statement count (None: no database yet)."""
    if not path.exists():
        return None
    conn = sqlite3.connect(path)
    try:
        return tuple(conn.execute(_PROGRAM_SIGNATURE).fetchone())
    except sqlite3.OperationalError:  # a new database: no program table yet
        return None
    finally:
        conn.close()


def _rows_fit(schema: TableSchema, rows: list[tuple[Row, int]]) -> bool:
    width = len(schema.columns)
    return all(len(row) == width for row, _ in rows)
