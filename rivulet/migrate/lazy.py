"""The lazy half of schema changes: rows converted to a column's new type, and tables split
off by ``CREATE TABLE ... AS SELECT`` copied key by key (rivulet/migrate/alter.py and
rivulet/migrate/copy.py say what each change means; this module does the work).

Both are done the way BullFrog migrates: a unit (a row, a key) is migrated when something
first needs it, in the same transaction as whatever needed it, and a background thread
migrates the rest in chunks, one short transaction each. What is migrated is marked in the
same transaction (a cleared old value; a row of the tracking table), so no unit is
migrated twice, and after a crash the work resumes where it stopped.

Locks: a chunk takes only storage's write lock (``storage.transaction()``), as a commit
does, never the database's commit or graph lock: a read that must copy a key holds the
graph lock already, and migrations take the commit lock before the graph lock.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from rivulet.errors import ClosedError
from rivulet.faults import fault_point
from rivulet.migrate.alter import replace_conversions
from rivulet.migrate.copy import CopyPlan
from rivulet.plan.catalog import Catalog
from rivulet.storage.sqlite import SqliteStorage
from rivulet.storage.writes import WriteRequest
from rivulet.values.schema import coerce_row

log = logging.getLogger("rivulet")

#: Rows (or keys) migrated per transaction when the work is wanted now (``finish``, a read
#: that needs a whole copied table).
CHUNK = 1000
#: The background thread's chunks are sized by time instead: rows (or keys) per chunk
#: start at one and follow the last chunk's CPU time towards :data:`CHUNK_SECONDS`, at most
#: doubling or halving at a time, within 1 and :data:`MAX_CHUNK`. A copy's keys hold rows
#: in any number (the first 1,000 keys of bench.schema_change's Zipf votes hold 60% of
#: them: a 4 s chunk, holding writes that long); a chunk of any size pays a few waits for
#: the GIL (rivulet/storage/sqlite_bulk.py), fewer per row in bigger chunks.
FIRST_CHUNK = 1
CHUNK_SECONDS = 0.02
MAX_CHUNK = 20_000
#: The share of the CPU the background thread takes while it works: it sleeps after each
#: round of chunks until the round's CPU time (``time.thread_time``: its Python, which holds
#: the GIL, and SQLite's steps) is this share of the time gone by. Paced by CPU, not by
#: the round's wall time: a round that waited for the GIL (a reader thread looping over
#: cached lookups keeps it) took the readers nothing, and resting as long again halved the
#: work's progress for nothing; a round that ran took their GIL time, which the rest gives
#: back. bench.schema_change's workload (quick), the work paused every other half second:
#: reads at 0.77 of their rate with a share of 0.2, 0.90 with 0.15 or 0.1 (converting
#: 16, 19 and 29 s); a wall-time half share read at 0.61-0.72 in its runs.
BACKGROUND_SHARE = 0.15


class _DryRun(Exception):
    """Rolls back a write run only to see which rows it touches."""


class LazyWork:
    def __init__(self, storage: SqliteStorage, catalog: Catalog, closed: Callable[[], bool],
                 *, background: bool = True) -> None:
        self.storage = storage
        self.background = background
        self.catalog = catalog
        self.closed = closed
        #: Tables being copied (target name lower-cased -> how), kept in the catalog.
        self.copies: dict[str, CopyPlan] = catalog.copies
        #: Where each table's background pass stopped (row identity, or key): the next
        #: chunk starts there (a restart starts again from the top; done work is skipped).
        self._cursors: dict[Any, Any] = {}
        #: Rows (or keys) per background chunk, by the cursor's name (see FIRST_CHUNK).
        self._sizes: dict[Any, int] = {}
        #: CPU seconds that reads and writes spent copying keys for themselves (summed by
        #: their threads; a lost update only paces less exactly): the background thread
        #: counts them against its share, as that work was its own, done sooner.
        self._foreground_cpu = 0.0
        #: Copies complete in a transaction not committed yet (or just committed): the
        #: entry in ``copies`` goes only after the commit, for the reason in convert_chunk.
        self._complete: set[str] = set()
        self._thread: threading.Thread | None = None

    # ..................................................................... background

    def pending(self) -> bool:
        return bool(self.copies) or any(t.converting for t in list(self.catalog.tables.values()))

    def start(self) -> None:
        """The background thread, if there is work and it is not running."""
        if not self.background:
            return
        if self.pending() and (self._thread is None or not self._thread.is_alive()):
            self._thread = threading.Thread(target=self._loop, name="rivulet-lazy", daemon=True)
            self._thread.start()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        try:
            while not self.closed() and self.pending():
                began, cpu, foreground = (time.perf_counter(), time.thread_time(),
                                          self._foreground_cpu)
                for schema in [t for t in list(self.catalog.tables.values()) if t.converting]:
                    self._timed(("convert", schema.name.lower()), functools.partial(
                        self.convert_chunk, schema.name))
                for name in list(self.copies):
                    self._timed(("copy", name), functools.partial(self.copy_chunk, name))
                worked = time.thread_time() - cpu + (self._foreground_cpu - foreground)
                time.sleep(max(0.0, worked / BACKGROUND_SHARE - (time.perf_counter() - began)))
        except ClosedError:
            return
        except Exception:  # readers still see right answers (converted / copied on demand)
            log.exception("lazy schema work failed; it resumes at the next open")

    def _timed(self, cursor: tuple[str, str], chunk: Callable[[int], bool]) -> None:
        """Run ``chunk`` with the rows (or keys) per chunk of ``cursor``, and size the next
        one by this one's CPU time (see FIRST_CHUNK)."""
        size = self._sizes.get(cursor, FIRST_CHUNK)
        cpu = time.thread_time()
        if not chunk(size):
            self._sizes.pop(cursor, None)
            return
        scale = CHUNK_SECONDS / max(time.thread_time() - cpu, 1e-6)
        self._sizes[cursor] = max(1, min(MAX_CHUNK, round(size * min(2.0, max(0.5, scale)))))

    def finish(self, table: str | None = None, *, conversions: bool = True) -> None:
        """Do now every conversion and copy (of ``table``: as target or as source)."""
        for schema in list(self.catalog.tables.values()):
            if conversions and schema.converting and table in (None, schema.name.lower()):
                while self.convert_chunk(schema.name):
                    pass
        for name, plan in list(self.copies.items()):
            if table in (None, name, plan.source.lower()):
                while self.copy_chunk(name):
                    pass

    # ..................................................................... conversions

    def convert_chunk(self, table: str, limit: int = CHUNK) -> bool:
        """Convert a chunk of ``table``'s rows to their columns' new types; False once done
        (and the table's schema stops reading the old values)."""
        with self.storage.transaction():
            if self.closed():
                raise ClosedError("the database is closed")
            schema = self.catalog.tables.get(table.lower())
            if schema is None or not schema.converting:
                return False
            cursor = ("convert", table.lower())
            done, after = self.storage.convert_rows(schema, limit, self._cursors.get(cursor))
            if done:
                fault_point("schema_conversion_chunk")
            if after is not None:
                self._cursors[cursor] = after
                return True
            self._cursors.pop(cursor, None)
        # Only once the last rows are committed: a reader takes the schema before its
        # snapshot, so one that reads the old values' column no more sees them converted.
        if self.catalog.tables.get(table.lower()) is schema:
            self.catalog.tables[table.lower()] = replace_conversions(schema)
        return False

    # ..................................................................... copies

    def copy_chunk(self, name: str, limit: int = CHUNK) -> bool:
        """Copy a chunk of ``limit`` keys of table ``name``; False once it is complete."""
        with self.storage.transaction():
            if self.closed():
                raise ClosedError("the database is closed")
            plan = self.copies.get(name)
            if plan is None or name in self._complete:
                return False
            source = self.catalog.require_table(plan.source)
            # One pass over the old table's keys in order: a key behind the pass that is
            # not copied yet was written since, and the write copied it first.
            cursor = ("copy", name)
            keys = self.storage.keys_after(source, plan.source_key, limit,
                                           self._cursors.get(cursor))
            if keys:
                self._copy_keys(plan, keys)
                fault_point("schema_conversion_chunk")
                self._cursors[cursor] = keys[-1]
                return True
            self._cursors.pop(cursor, None)
            self.storage.drop_tracking(plan.tracking)
            self._complete.add(name)
        self.copies.pop(name, None)
        self._complete.discard(name)
        return False

    def before_read(self, table: str, columns: tuple[int, ...] | None, keys: list[Any]) -> None:
        """A read of ``table`` by ``columns`` (None: all of it) is about to run: copy what
        it needs first."""
        plan = self.copies.get(table.lower())
        if plan is None:
            return
        if columns is None or tuple(columns) != plan.target_key:
            while self.copy_chunk(table.lower()):
                pass
            return
        with self.storage.transaction():
            if table.lower() in self.copies and table.lower() not in self._complete:
                self._copy_keys(plan, keys)

    def before_write(self, request: WriteRequest) -> None:
        """In the commit's transaction, before ``request`` runs: copy the keys it touches
        of a table being copied, or of the table one is copied from (as it is still)."""
        name = request.table.name.lower()
        for target, plan in list(self.copies.items()):
            if target in self._complete:
                continue
            if plan.target.name.lower() == name:
                keys = self._target_keys(plan, request)
                if keys is None:  # a scan: every key, in this transaction
                    self._copy_rest(plan)
                else:
                    self._copy_keys(plan, keys)
            elif plan.source.lower() == name:
                key_of = plan.key_of_source()
                self._copy_keys(plan, [key_of(row) for row, _ in self._touched(request)])

    @staticmethod
    def _target_keys(plan: CopyPlan, request: WriteRequest) -> list[Any] | None:
        """The new table's keys a write to it touches (None: it scans the table)."""
        if request.kind == "insert":
            rows: list = request.rows
        elif request.keys is not None:  # primary keys, and the new table's key is its own
            rows = [dict(zip(request.table.primary_key, k)) for k in request.keys]
        else:
            return None
        key = plan.target_key
        return [r[key[0]] if len(key) == 1 else tuple(r[i] for i in key) for r in rows]

    def _copy_rest(self, plan: CopyPlan) -> None:
        """Copy every key left, inside the open transaction (the next chunk of the
        background pass then finds nothing and completes the copy)."""
        source = self.catalog.require_table(plan.source)
        after = None
        while keys := self.storage.keys_after(source, plan.source_key, CHUNK, after):
            self._copy_keys(plan, keys)
            after = keys[-1]

    def _touched(self, request: WriteRequest) -> list[tuple[tuple, int]]:
        """The rows ``request`` would delete and insert, found by running it in a savepoint
        rolled back at once."""
        if request.kind == "insert":
            return [(row, 1) for row in request.rows]
        out: list = []
        try:
            with self.storage.savepoint():
                out = request.apply(self.storage)
                raise _DryRun
        except _DryRun:
            pass
        return out

    def _copy_keys(self, plan: CopyPlan, keys: list[Any]) -> None:
        """Copy ``keys`` not copied yet (inside the open transaction). A write's first
        touch of the hot keys copies most of the table (bench.schema_change's first commit
        of votes after the split: half of its rows, and the writer's CPU at 0.15-0.75 of a
        core for 5 s): its CPU time is counted against the background thread's share."""
        if threading.current_thread() is self._thread:
            self._copy_keys_now(plan, keys)
            return
        began = time.thread_time()
        try:
            self._copy_keys_now(plan, keys)
        finally:
            self._foreground_cpu += time.thread_time() - began

    def _copy_keys_now(self, plan: CopyPlan, keys: list[Any]) -> None:
        target = self.catalog.require_table(plan.target.name)
        keys = self.storage.untracked(plan.tracking, target, plan.target_key, keys)
        if not keys:
            return
        source = self.catalog.require_table(plan.source)
        wanted = set(keys)
        key_of = plan.key_of_source()
        rows = [r for r in self.storage.rows_by(source, plan.source_key, keys, in_one_step=True)
                if key_of(r) in wanted]
        copied = [coerce_row(target, row, where="CREATE TABLE ... AS SELECT: ")
                  for row in plan.evaluate(rows)]
        if copied:
            self.storage.insert(target, copied, in_one_step=True)
        self.storage.track(plan.tracking, target, plan.target_key, keys)
