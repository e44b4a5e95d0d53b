"""The write log as a stream: immutable Parquet files of signed deltas, one per table and shipment.

Every committed write batch is already durable in ``_rivulet_log`` (SQLite, one row per
LSN, the batch's deltas pickled by table). The :class:`LogShipper` copies the batches
committed since its last shipment into ONE *segment*: a file
``<data>/stream/log/<table>/<first LSN>-<last LSN>.parquet`` for every table (empty when
the table has no rows in it), columns ``lsn, sign`` and the table's columns (``c0..cN``
for a table never altered, names stable across ALTER TABLE: :mod:`.columns`; typed as
:mod:`rivulet.spark.values` types them; ``sign`` is the delta's multiplicity, negative for
deletes). Each file is written under a temporary name outside the log and renamed into
place, so a reader sees it whole or not at all.

Why one flat directory per table: Spark's file source lists its path before every
micro-batch. A glob over one directory per shipment (the first layout) made that listing
a Spark job of one task per directory once there were more than 32 of them (Spark's
parallel partition discovery): seconds per batch after a few minutes of writes. One
directory is one ``listdir``.

Why this gives exactly-once: segments cover consecutive, disjoint LSN ranges, and their
names say which. A shipment renames its tables' files one by one; after a crash between
two renames the shipper finishes that shipment (the same range, for the tables that lack
its file) before it ships anything new, so no LSN is shipped twice or skipped. A stream
has read a table up to the last LSN of the newest file of that table it listed. Files get
strictly increasing modification times: Spark's file source orders new files by them, so
a batch capped at ``maxFilesPerTrigger`` files takes the oldest shipments first.

Why a shipper thread rather than writing Parquet in the commit path: a commit stays one
SQLite transaction (the in-process pipeline pays nothing), and one segment per shipment
batches many commit groups, so Spark reads a few large files instead of many tiny ones.
"""

from __future__ import annotations

import logging
import os
import pickle
import re
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rivulet.errors import RivuletError
from rivulet.pipeline.streaming.columns import positional_names
from rivulet.spark.values import arrow_type
from rivulet.values.schema import BOOL, TableSchema

log = logging.getLogger("rivulet.pipeline.streaming")

_SEGMENT = re.compile(r"^(\d{12})-(\d{12})\.parquet$")
#: Most LSNs one shipment takes (bounds the memory of one segment).
MAX_LSNS_PER_SEGMENT = 20_000
#: Rows per Parquet row group: Spark splits a file between tasks only at row groups, so a
#: large shipment must have several for more than one core to read it.
ROW_GROUP_ROWS = 64 * 1024


class StreamingError(RivuletError):
    """The Spark streaming pipeline cannot go on (a failed query, a log it cannot ship)."""


@dataclass(frozen=True)
class Segment:
    """One shipped LSN range ``first..last`` (inclusive) of one table, and its file."""

    first: int
    last: int
    path: Path


def table_directory_name(table: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", table.lower())[:100]


def segment_name(first: int, last: int) -> str:
    return f"{first:012d}-{last:012d}.parquet"


def segments(directory: Path) -> list[Segment]:
    """Every complete segment file of one table's directory, in LSN order."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    found = []
    for entry in names:
        match = _SEGMENT.match(entry)
        if match:
            found.append(Segment(int(match.group(1)), int(match.group(2)), directory / entry))
    found.sort(key=lambda s: s.first)
    return found


def newest_segment(root: Path) -> Segment | None:
    """The newest segment of any table under ``root`` (the last shipment, maybe unfinished)."""
    newest = None
    for directory in (root.iterdir() if root.is_dir() else ()):
        found = segments(directory)
        if found and (newest is None or found[-1].last > newest.last):
            newest = found[-1]
    return newest


def shipped_lsn(root: Path) -> int:
    """The last LSN shipped into ``root`` (0 before the first shipment)."""
    newest = newest_segment(root)
    return newest.last if newest is not None else 0


def table_arrow_schema(schema: TableSchema, names: Sequence[str] | None = None) -> pa.Schema:
    """Columns of a table's segment file: ``lsn``, ``sign``, then the table's columns,
    named ``names`` (stable across ALTER TABLE: rivulet/pipeline/streaming/columns.py),
    by default ``c0..cN``."""
    names = positional_names(len(schema.columns)) if names is None else names
    return pa.schema([pa.field("lsn", pa.int64(), False), pa.field("sign", pa.int64(), False),
                      *[pa.field(n, arrow_type(c.kind, c.scale))
                        for n, c in zip(names, schema.columns)]])


class LogShipper:
    """Copies committed batches from the SQLite log into segments, on a thread of its own.

    ``schemas()`` gives the current table schemas by lower-cased name, ``names(table)``
    the names of its columns in segments (default ``c0..``). ``on_error`` is told (once)
    when a batch cannot be shipped; the shipper then stops."""

    def __init__(self, database_file: Path, root: Path,
                 schemas: Callable[[], Mapping[str, TableSchema]],
                 *, interval: float = 0.1, on_error: Callable[[BaseException], None] | None = None,
                 max_lsns: int = MAX_LSNS_PER_SEGMENT,
                 names: Callable[[str], Sequence[str]] | None = None) -> None:
        self.database_file = database_file
        self.root = root
        self.schemas = schemas
        self.names = names
        self.interval = interval
        self.on_error = on_error
        self.max_lsns = max_lsns
        self.root.mkdir(parents=True, exist_ok=True)
        # Files are written beside the log (Spark must never list a half-written one) and
        # renamed into it; a shipment cut short by a crash is finished before the next.
        self.tmp_root = root.parent / f"{root.name}-tmp"
        shutil.rmtree(self.tmp_root, ignore_errors=True)
        newest = newest_segment(root)
        self.shipped = newest.last if newest is not None else 0
        #: The range of the newest shipment, which a crash may have left without some
        #: tables' files (checked once, at the first shipment).
        self._unfinished = (newest.first, newest.last) if newest is not None else None
        self._mtime_ns = 0 if newest is None else newest.path.stat().st_mtime_ns
        self.rows_shipped = 0
        #: (last LSN, rows per table) of each segment shipped by this process, for the
        #: streams' input-row counts (Spark's own undercount under foreachBatch).
        self.segment_rows: list[tuple[int, dict[str, int]]] = []
        self._wake = threading.Event()
        #: One shipment at a time: the thread's, or :meth:`flush`'s.
        self._shipping = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="rivulet-log-shipper", daemon=True)
        self._thread.start()

    def nudge(self) -> None:
        """Ship now rather than at the next tick (``settle`` is waiting)."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def flush(self) -> None:
        """Ship every batch committed so far, now, in the caller's thread. A schema change
        calls it with commits held off, before the catalog changes: the batches before it
        are shipped with the columns they were written with."""
        with self._shipping:
            while self.ship_once():
                pass

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.flush()
            except BaseException as exc:  # a log we cannot ship: every stream would stall
                log.exception("shipping the write log failed")
                if self.on_error is not None:
                    self.on_error(exc)
                return
            self._wake.wait(self.interval)
            self._wake.clear()

    def rows_between(self, low: int, high: int, tables: set[str]) -> int:
        """Rows of ``tables`` in the segments shipped after ``low`` up to ``high``."""
        return sum(n for last, rows in list(self.segment_rows) if low < last <= high
                   for t, n in rows.items() if t in tables)

    def remove_through(self, lsn: int) -> int:
        """Delete the segments every stream has read (last LSN at most ``lsn``), but each
        table's newest (its name says where shipping resumes); returns the files deleted.
        Spark's file sources only read files they have not listed before, so files its
        committed batches read are never opened again."""
        removed = 0
        for directory in (self.root.iterdir() if self.root.is_dir() else ()):
            for segment in segments(directory)[:-1]:
                if segment.last <= lsn:
                    segment.path.unlink(missing_ok=True)
                    removed += 1
        self.segment_rows = [(last, rows) for last, rows in list(self.segment_rows) if last > lsn]
        return removed

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(self.database_file, check_same_thread=False)
        return self._conn

    def table_directory(self, table: str) -> Path:
        """A table's directory of segments (made when first asked: Spark's file source
        refuses to start on a path that does not exist)."""
        directory = self.root / table_directory_name(table)
        directory.mkdir(parents=True, exist_ok=True)
        return directory

    def ship_once(self) -> bool:
        """Ship the batches committed since the last shipment as one segment; False when
        there were none."""
        if self._unfinished is not None:
            first, last = self._unfinished
            self._unfinished = None
            segment = segment_name(first, last)
            missing = [t for t in self.schemas()
                       if not (self.root / table_directory_name(t) / segment).exists()]
            if missing:
                log.warning("finishing the shipment of LSNs %d..%d cut short by a crash",
                            first, last)
                self._ship(first - 1, last, set(missing))
            return True
        return self._ship(self.shipped, self.shipped + self.max_lsns, None)

    def _ship(self, after: int, upto: int, only: set[str] | None) -> bool:
        """Ship LSNs ``after < lsn <= upto`` (those committed) for every table, or for the
        tables of ``only``."""
        rows = self._connection().execute(
            "SELECT lsn, payload FROM _rivulet_log WHERE lsn > ? AND lsn <= ? ORDER BY lsn",
            (after, upto)).fetchall()
        if not rows:
            return False
        first, last = rows[0][0], rows[-1][0]
        if first != after + 1:
            raise StreamingError(f"the write log has no LSN {after + 1} (next is {first})")
        by_table: dict[str, tuple[list[int], list[int], list[tuple]]] = {}
        for lsn, payload in rows:
            if payload is None:
                raise StreamingError(
                    f"LSN {lsn} is a bulk import, whose rows are not in the write log: the "
                    "Spark streaming pipeline cannot stream it (import with the in-process "
                    "pipeline, then restart the views' streams)")
            for table, deltas in pickle.loads(payload).items():
                lsns, signs, values = by_table.setdefault(table.lower(), ([], [], []))
                lsns.extend([lsn] * len(deltas))
                signs.extend([d for _, d in deltas])
                values.extend([r for r, _ in deltas])
        self._write(first, last, by_table, only)
        if only is None:
            self.segment_rows.append((last, {t: len(v[0]) for t, v in by_table.items()}))
            self.rows_shipped += sum(len(v[0]) for v in by_table.values())
        self.shipped = max(self.shipped, last)
        return True

    def _write(self, first: int, last: int,
               by_table: dict[str, tuple[list[int], list[int], list[tuple]]],
               only: set[str] | None) -> None:
        """One file per table, with rows or not: a stream learns that its table has no
        changes up to ``last`` from the (empty) file of a shipment."""
        schemas = self.schemas()
        for table in by_table:
            if table not in schemas:
                raise StreamingError(
                    f"the write log has rows of table {table!r}, which no longer exists")
        self.tmp_root.mkdir(parents=True, exist_ok=True)
        name = segment_name(first, last)
        written = []
        for table, schema in schemas.items():
            if only is not None and table not in only:
                continue
            lsns, signs, values = by_table.get(table, ([], [], []))
            tmp = self.tmp_root / f"{table_directory_name(table)}-{name}"
            names = None if self.names is None else self.names(table)
            pq.write_table(arrow_rows(schema, lsns, signs, values, names), tmp,
                           row_group_size=ROW_GROUP_ROWS)
            written.append((tmp, self.table_directory(table) / name))
        # Strictly increasing modification times, in LSN order (see the module doc).
        self._mtime_ns = max(time.time_ns() // 1_000_000,
                             self._mtime_ns // 1_000_000 + 1) * 1_000_000
        for tmp, target in written:
            os.utime(tmp, ns=(self._mtime_ns, self._mtime_ns))
            os.rename(tmp, target)


def arrow_rows(schema: TableSchema, lsns: list[int], signs: list[int],
               rows: list[tuple], names: Sequence[str] | None = None) -> pa.Table:
    """Deltas of one table as a segment file's Arrow table (columns named ``names``)."""
    target = table_arrow_schema(schema, names)
    columns: list[Any] = list(zip(*rows)) if rows else [() for _ in schema.columns]
    arrays = [pa.array(lsns, pa.int64()), pa.array(signs, pa.int64())]
    for column, values, field in zip(schema.columns, columns, list(target)[2:]):
        if column.kind == BOOL:
            values = [None if v is None else int(v) for v in values]
        arrays.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(arrays, schema=target)


def wait_until(predicate: Callable[[], bool], timeout: float | None, step: float = 0.02) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds pass."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while not predicate():
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(step)
    return True
