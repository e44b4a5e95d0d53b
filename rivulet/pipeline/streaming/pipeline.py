"""Views maintained by Structured Streaming: one query per view over the shipped log.

Layout under the data directory (``<data>/stream/``)::

    log/<table>/<first>-<last>.parquet   the write log as segments (log.py)
    views/<stream id>/checkpoint/        Spark's checkpoint of the view's query
    views/<stream id>/snapshot/          the base tables the stream started from
    sink.db                              each view's rows and last applied batch (sink.py)
    status.json                          progress of every stream, for ``rivulet status``

``log/``, ``views/`` and ``snapshots/`` are what executors read and write: with a shared
directory configured they are in the database's ``stream-<token>/`` there instead
(rivulet/spark/storage.py); ``sink.db`` and ``status.json`` are the driver's and stay.

Why one query per view: adding or dropping a view then starts or stops its own query and
touches no other (Spark cannot change a running query's plan; the Noria paper's complaint
about restarting from a checkpoint does not apply to queries that never change). A view's
stream (its query, its reader, how a batch is applied once) is :mod:`.view`; where a batch
leaves it in the log is read from Spark's checkpoint (:mod:`.checkpoint`); the settings
are :mod:`.settings`. This module runs the streams with the shipper: starts them (fresh
ones from one snapshot), watches and restarts them, deletes what every stream is done
with, keeps the readers under the memory limit, and reports progress.

Failure: a query that stops with an error is restarted from its checkpoint (at most
:data:`MAX_RESTARTS` times); then it stops the whole pipeline (every query and the
shipper), and ``settle()`` raises :class:`StreamingError` naming the view and the cause.
Opening the database again resumes every stream from its checkpoint.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import math
import os
import random
import re
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from rivulet.pipeline.streaming.columns import (
    Layout,
    column_names,
    positional_names,
    scan_names,
)
from rivulet.pipeline.streaming.log import LogShipper, StreamingError, wait_until
from rivulet.pipeline.streaming.settings import StreamSettings
from rivulet.pipeline.streaming.sink import SinkStore
from rivulet.pipeline.streaming.view import ViewStream
from rivulet.plan import ir
from rivulet.spark.snapshot import take_snapshot
from rivulet.state.reader import KeyedReader, RangeReader
from rivulet.values.schema import TableSchema

log = logging.getLogger("rivulet.pipeline.streaming")

#: Times a failed query is restarted from its checkpoint before the pipeline gives up
#: (a Python worker that misses Spark's connect timeout on a busy machine is transient).
MAX_RESTARTS = 2


class StreamingPipeline:
    """The shipper, every view's stream, and the thread that watches them."""

    def __init__(self, directory: Path, database_file: Path,
                 schemas: Callable[[], dict[str, TableSchema]], current_lsn: Callable[[], int],
                 spark: Callable[[], SparkSession], settings: StreamSettings,
                 memory_limit: int | None = None, eviction: str = "lru",
                 area: Path | None = None,
                 layouts: Callable[[], Mapping[str, Mapping[int, Layout]]] | None = None
                 ) -> None:
        if re.search(r"[\[\]{}*?\\]", str(directory.resolve())):
            # Spark's file source re-reads every file of a glob whose fixed part has
            # such a character (escaped or not: its seen-file check then never matches).
            raise StreamingError(f"the data directory {str(directory)!r} has a character "
                                 "of [ ] { } * ? \\ in its path, which the Spark streaming "
                                 "pipeline cannot read files under; use another path")
        self.root = directory / "stream"
        #: What executors read or write (log, snapshots, checkpoints): ``root`` itself
        #: unless a shared directory is configured (rivulet/spark/storage.py).
        self.area = area or self.root
        #: Query names are unique per SparkSession: several databases may share one.
        self.token = hashlib.sha1(str(self.root.resolve()).encode()).hexdigest()[:6]
        self.log_root = self.area / "log"
        self.database_file = database_file
        self.schemas = schemas
        #: Every version of each table, as the catalog keeps them (None: never altered).
        self.layouts = layouts
        self.current_lsn = current_lsn
        self._spark = spark
        self.settings = settings
        self.store = SinkStore(self.root / "sink.db")
        self.streams: dict[str, ViewStream] = {}
        #: Bytes the readers may hold (None: no limit); partial readers give up keys
        #: (``eviction``: "lru" or "random") when a batch or a fill takes them above it.
        self.memory_limit = memory_limit
        self.eviction = eviction
        self.evictions = 0
        self._random = random.Random(0)
        self._evict_lock = threading.Lock()
        self.applied = threading.Event()
        self.failure: BaseException | None = None
        self.hooks: dict[str, Callable[..., None]] = {}
        self.shipper = LogShipper(database_file, self.log_root, schemas,
                                  interval=settings.ship_interval, on_error=self.fail,
                                  names=self.column_names)
        self._running = False
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None
        self._log_conn: sqlite3.Connection | None = None
        self._log_lock = threading.Lock()

    def column_names(self, table: str) -> list[str]:
        """The names of the table's columns (newest version) in the log (:mod:`.columns`)."""
        width = len(self.schemas()[table].columns)
        layouts = None if self.layouts is None else self.layouts().get(table)
        return positional_names(width) if not layouts else column_names(layouts, width)

    def scan_names(self, table: str, version: int, arity: int) -> list[str | None]:
        """The log's names of the columns a scan of table version ``version`` reads."""
        layouts = None if self.layouts is None else self.layouts().get(table)
        if not layouts or version not in layouts:
            return list(positional_names(arity))
        return scan_names(layouts, len(self.schemas()[table].columns), version)[:arity]

    def before_schema_change(self) -> None:
        """Called with commits held off, before ALTER TABLE changes the catalog: the log
        written so far is shipped with the columns it was written with."""
        if self.failure is None:
            self.shipper.flush()

    def memory_bytes(self) -> int:
        return sum(s.state.byte_size() for s in list(self.streams.values()))

    def enforce_memory_limit(self) -> int:
        """Evict keys of partial readers, the largest reader first, until the readers'
        bytes are under the limit (with 10% to spare, as the engine does, so eviction runs
        in batches). Full readers cannot give keys up: when they alone exceed the limit,
        reads of partial views miss. Returns the keys evicted."""
        limit = self.memory_limit
        if limit is None or self.memory_bytes() <= limit:
            return 0
        if not self._evict_lock.acquire(blocking=False):
            return 0  # another thread (a batch, a read) is evicting already
        try:
            target = int(limit * 0.9)
            evicted = 0
            total = self.memory_bytes()
            partial = sorted((s for s in list(self.streams.values()) if s.partial),
                             key=lambda s: s.state.byte_size(), reverse=True)
            for stream in partial:
                while total > target and len(stream.state):
                    size = max(1, stream.state.byte_size())
                    count = max(1, min(1000, math.ceil(
                        (total - target) * len(stream.state) / size)))
                    n = stream.evict(count, self.eviction, self._random)
                    if not n:
                        break
                    evicted += n
                    total = self.memory_bytes()
            self.evictions += evicted
            return evicted
        finally:
            self._evict_lock.release()

    def hook(self, name: str, *args: Any) -> None:
        fn = self.hooks.get(name)
        if fn is not None:
            fn(*args)

    # ..................................................................... lifecycle

    def add(self, plan: ir.ViewPlan, state: KeyedReader | RangeReader) -> ViewStream:
        """Register a view (its reader is loaded from the sink); started by :meth:`start`
        or, once running, at once (from a snapshot taken now)."""
        stream = ViewStream(self, plan, state)
        with self._lock:
            self.streams[plan.name.lower()] = stream
            if self._running:
                self._start_streams([stream])
        return stream

    def start(self) -> None:
        """Start the shipper and every registered stream (fresh ones from one snapshot)."""
        with self._lock:
            self.shipper.start()
            self._running = True
            self._start_streams(list(self.streams.values()))
        self._monitor = threading.Thread(target=self._watch, name="rivulet-streams", daemon=True)
        self._monitor.start()

    def _start_streams(self, streams: list[ViewStream]) -> None:
        spark = self._spark()
        fresh = [s for s in streams if s.fresh]
        snapshot = None
        if fresh:
            directory = self.area / "snapshots" / f"{int(time.time() * 1000)}"
            snapshot = take_snapshot(self.database_file, directory)
            for stream in fresh:
                stream.applied_lsn = -1
        for stream in streams:
            stream.start(spark, snapshot if stream.fresh else None)

    def remove(self, name: str) -> None:
        """Stop a dropped view's stream and forget its checkpoint and rows."""
        with self._lock:
            stream = self.streams.pop(name.lower(), None)
        if stream is None:
            return
        stream.stop()
        self.store.drop(stream.id)
        shutil.rmtree(stream.directory, ignore_errors=True)

    def stop(self) -> None:
        """Stop every query and the shipper (their checkpoints stay: a restart resumes)."""
        self._stop.set()
        with self._lock:
            self._running = False
            for stream in self.streams.values():
                stream.stop()
        self.shipper.stop()
        if self._monitor is not None:
            self._monitor.join()
        self._write_status()
        self.store.close()

    def fail(self, exc: BaseException) -> None:
        """Stop everything after a failure; waits raise it from now on."""
        if self.failure is not None:
            return
        self.failure = exc
        log.error("the Spark streaming pipeline stopped: %s", exc)
        threading.Thread(target=self._stop_after_failure, daemon=True).start()
        self.applied.set()

    def _stop_after_failure(self) -> None:
        with self._lock:
            for stream in self.streams.values():
                stream.stop()
        self.shipper.stop()

    def collect(self) -> tuple[int, int]:
        """Delete the log segments and snapshots no stream needs again: segments up to the
        smallest LSN any stream's committed batches reached, and snapshots of streams
        whose bootstrap batch is committed. Nothing goes while a stream has not committed
        its bootstrap batch (it reads every segment there is). Returns (segments,
        snapshots) deleted."""
        with self._lock:
            if not self._running or self.failure is not None:
                return 0, 0
            streams = list(self.streams.values())
            committed = [s.committed_lsn() for s in streams]
            positions = [p for p in committed if p is not None]
            if len(positions) != len(committed):
                return 0, 0
            upto = min(positions, default=self.shipper.shipped)
            segments = self.shipper.remove_through(upto)
            snapshots = 0
            for directory in (self.area / "snapshots").glob("*"):
                shutil.rmtree(directory, ignore_errors=True)  # every bootstrap is committed
                snapshots += 1
        return segments, snapshots

    def _watch(self) -> None:
        collected = time.monotonic()
        while not self._stop.wait(0.5):
            interval = self.settings.retention_interval
            if interval is not None and time.monotonic() - collected >= interval:
                collected = time.monotonic()
                try:
                    self.collect()
                except OSError:  # retention is housekeeping: the next pass tries again
                    log.warning("deleting old log segments failed", exc_info=True)
            for stream in list(self.streams.values()):
                query = stream.query
                if query is None or query.isActive or self.failure is not None:
                    continue
                error = query.exception()
                cause = _first_line(error) if error else "stopped outside rivulet"
                with self._lock:
                    if self._stop.is_set() or stream.query is not query:
                        continue  # stopped or dropped meanwhile
                    if stream.restarts < MAX_RESTARTS:
                        stream.restarts += 1
                        log.warning("the stream of view %s stopped (%s): restarting it from "
                                    "its checkpoint (%d of %d)", stream.plan.name, cause,
                                    stream.restarts, MAX_RESTARTS)
                        try:
                            stream.start(self._spark(), None)
                            continue
                        except Exception as exc:  # noqa: BLE001 - reported below
                            cause = _first_line(exc)
                self.fail(StreamingError(
                    f"the stream of view {stream.plan.name!r} stopped: {cause}; "
                    "opening the database again resumes from the checkpoint"))
            self._write_status()

    # ..................................................................... waiting, progress

    def wait(self, lsn: int, timeout: float | None, views: list[str] | None = None) -> None:
        """Until every stream (or those of ``views``) reflects LSN ``lsn``."""
        self.shipper.nudge()

        def done() -> bool:
            self.check()
            streams = ([self.streams[v.lower()] for v in views] if views
                       else list(self.streams.values()))
            return all(s.applied_lsn >= lsn for s in streams)

        if not wait_until(done, timeout):
            raise StreamingError(f"the Spark streams did not reach LSN {lsn} within {timeout} s")

    def check(self) -> None:
        if self.failure is not None:
            raise StreamingError(str(self.failure)) from self.failure

    def progress(self) -> dict[str, Any]:
        lsn = self.current_lsn()
        return {
            "lsn": lsn,
            "shipped_lsn": self.shipper.shipped,
            "rows_shipped": self.shipper.rows_shipped,
            "failure": None if self.failure is None else str(self.failure),
            "streams": [s.progress(lsn) for s in list(self.streams.values())],
        }

    def _write_status(self) -> None:
        try:
            status = {"time": dt.datetime.now(dt.UTC).isoformat(), **self.progress()}
            tmp = self.root / "status.json.tmp"
            tmp.write_text(json.dumps(status, indent=1, default=str))
            os.replace(tmp, self.root / "status.json")
        except Exception:  # status is advisory: never fail the pipeline for it
            log.debug("could not write the streaming status", exc_info=True)

    def _committed_at(self, low: int, high: int) -> list[float]:
        """Commit times (epoch seconds) of LSNs ``low < lsn <= high``."""
        with self._log_lock:
            if self._log_conn is None:
                self._log_conn = sqlite3.connect(self.database_file, check_same_thread=False)
            found = self._log_conn.execute(
                "SELECT committed_at FROM _rivulet_log WHERE lsn > ? AND lsn <= ?",
                (low, high)).fetchall()
        return [dt.datetime.fromisoformat(t).timestamp() for (t,) in found]

    def observe_visible(self, stream: ViewStream, previous: int, lsn: int) -> None:
        """Write-to-visible seconds of each LSN the batch made visible."""
        if previous < 0:
            return  # the bootstrap batch: its LSNs were written before the view existed
        now = time.time()
        for committed in self._committed_at(previous, lsn):
            stream.lag.observe(max(0.0, now - committed))

    def lag_seconds(self, applied: int, lsn: int) -> float:
        if applied >= lsn:
            return 0.0
        times = self._committed_at(max(applied, 0), max(applied, 0) + 1)
        return round(time.time() - times[0], 3) if times else 0.0


def _first_line(error: Any) -> str:
    """The line of a (Java or Python) error that names it, not the traceback's header."""
    text = str(getattr(error, "desc", None) or error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    named = [line for line in lines if re.search(r"(Error|Exception)\b.*:", line)
             and not line.startswith(("File ", "at "))]
    return (named[-1] if named else lines[0] if lines else repr(error))[:400]


__all__ = ["MAX_RESTARTS", "StreamingPipeline"]
