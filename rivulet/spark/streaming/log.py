"""The write log as a stream: immutable Parquet segments of signed deltas, one per shipment.

Every committed write batch is already durable in ``_rivulet_log`` (SQLite, one row per
LSN, the batch's deltas pickled by table). The :class:`LogShipper` copies the batches
committed since its last shipment into ONE *segment*: a directory
``<data>/stream/log/<first LSN>-<last LSN>/`` holding one Parquet file per table (empty
when the table has no rows in it), columns ``lsn, sign, c0..cN`` (the table's columns, typed as
:mod:`rivulet.spark.values` types them; ``sign`` is the delta's multiplicity, negative for
deletes). The directory is written under a temporary name and renamed into place, so a
reader sees a segment whole or not at all.

Why this gives exactly-once: segments cover consecutive, disjoint LSN ranges, and their
names say which. After a crash the shipper resumes after the last segment on disk (a
half-written temporary directory is removed), so no LSN is shipped twice or skipped, and the
LSN a stream has read up to is the last LSN of the newest segment it read.

Spark reads each table's part with its own Parquet file source over the glob
``log/*/<table>.parquet`` (in the JVM: no Python worker per task, no Python planner).

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rivulet.errors import RivuletError
from rivulet.schema import BOOL, TableSchema
from rivulet.spark.values import arrow_type

log = logging.getLogger("rivulet.spark.streaming")

_SEGMENT = re.compile(r"^(\d{12})-(\d{12})$")
#: Most LSNs one shipment takes (bounds the memory of one segment).
MAX_LSNS_PER_SEGMENT = 20_000


class StreamingError(RivuletError):
    """The Spark streaming pipeline cannot go on (a failed query, a log it cannot ship)."""


@dataclass(frozen=True)
class Segment:
    """One shipped LSN range ``first..last`` (inclusive) and its directory."""

    first: int
    last: int
    path: Path

    def table_file(self, table: str) -> Path:
        return self.path / table_file_name(table)


def table_file_name(table: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", table.lower())[:100] + ".parquet"


def segments(root: Path) -> list[Segment]:
    """Every complete segment under ``root``, in LSN order."""
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return []
    found = []
    for entry in names:
        match = _SEGMENT.match(entry)
        if match:
            found.append(Segment(int(match.group(1)), int(match.group(2)), root / entry))
    found.sort(key=lambda s: s.first)
    return found


def shipped_lsn(root: Path) -> int:
    """The last LSN shipped into ``root`` (0 before the first shipment)."""
    found = segments(root)
    return found[-1].last if found else 0


def table_arrow_schema(schema: TableSchema) -> pa.Schema:
    """Columns of a table's segment file: ``lsn``, ``sign``, then ``c0..cN``."""
    return pa.schema([pa.field("lsn", pa.int64(), False), pa.field("sign", pa.int64(), False),
                      *[pa.field(f"c{i}", arrow_type(c.kind, c.scale))
                        for i, c in enumerate(schema.columns)]])


class LogShipper:
    """Copies committed batches from the SQLite log into segments, on a thread of its own.

    ``schemas()`` gives the current table schemas by lower-cased name. ``on_error`` is
    told (once) when a batch cannot be shipped; the shipper then stops."""

    def __init__(self, database_file: Path, root: Path, schemas: Callable[[], Mapping[str, TableSchema]],
                 *, interval: float = 0.1, on_error: Callable[[BaseException], None] | None = None,
                 max_lsns: int = MAX_LSNS_PER_SEGMENT) -> None:
        self.database_file = database_file
        self.root = root
        self.schemas = schemas
        self.interval = interval
        self.on_error = on_error
        self.max_lsns = max_lsns
        self.root.mkdir(parents=True, exist_ok=True)
        # Segments are written beside the log (a glob over the log must never match a
        # half-written one) and renamed into it; a shipment cut short by a crash is removed.
        self.tmp_root = root.parent / f"{root.name}-tmp"
        shutil.rmtree(self.tmp_root, ignore_errors=True)
        self.shipped = shipped_lsn(root)
        self.rows_shipped = 0
        #: (last LSN, rows per table) of each segment shipped by this process, for the
        #: streams' input-row counts (Spark's own undercount under foreachBatch).
        self.segment_rows: list[tuple[int, dict[str, int]]] = []
        self._wake = threading.Event()
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

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                while self.ship_once():
                    pass
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

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(self.database_file, check_same_thread=False)
        return self._conn

    def ship_once(self) -> bool:
        """Ship the batches committed since the last shipment as one segment; False when
        there were none."""
        rows = self._connection().execute(
            "SELECT lsn, payload FROM _rivulet_log WHERE lsn > ? ORDER BY lsn LIMIT ?",
            (self.shipped, self.max_lsns)).fetchall()
        if not rows:
            return False
        first, last = rows[0][0], rows[-1][0]
        if first != self.shipped + 1:
            raise StreamingError(f"the write log has no LSN {self.shipped + 1} (next is {first})")
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
        self._write(first, last, by_table)
        self.segment_rows.append((last, {t: len(v[0]) for t, v in by_table.items()}))
        self.shipped = last
        self.rows_shipped += sum(len(v[0]) for v in by_table.values())
        return True

    def _write(self, first: int, last: int, by_table: dict[str, tuple[list[int], list[int], list[tuple]]]) -> None:
        """One file per table, with rows or not: a stream learns that its table has no
        changes up to ``last`` from the (empty) file of a shipment."""
        schemas = self.schemas()
        for table in by_table:
            if table not in schemas:
                raise StreamingError(f"the write log has rows of table {table!r}, which no longer exists")
        tmp = self.tmp_root / f"{first:012d}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for table, schema in schemas.items():
            lsns, signs, values = by_table.get(table, ([], [], []))
            pq.write_table(arrow_rows(schema, lsns, signs, values), tmp / table_file_name(table))
        os.rename(tmp, self.root / f"{first:012d}-{last:012d}")


def arrow_rows(schema: TableSchema, lsns: list[int], signs: list[int], rows: list[tuple]) -> pa.Table:
    """Deltas of one table as a segment file's Arrow table."""
    target = table_arrow_schema(schema)
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
