"""Views maintained by Structured Streaming: one query per view over the shipped log.

Layout under the data directory (``<data>/stream/``)::

    log/<table>/<first>-<last>.parquet   the write log as segments (log.py)
    views/<stream id>/checkpoint/        Spark's checkpoint of the view's query
    views/<stream id>/snapshot/          the base tables the stream started from
    sink.db                              each view's rows and last applied batch (sink.py)
    status.json                          progress of every stream, for ``rivulet status``

Why one query per view: adding or dropping a view then starts or stops its own query and
touches no other (Spark cannot change a running query's plan; the Noria paper's complaint
about restarting from a checkpoint does not apply to queries that never change). A new
view's query is bootstrapped from a snapshot the batch pipeline takes at the LSN the view
is created at (its first micro-batch reads the snapshot as +1 deltas) and then follows the
log after that LSN. A view's stream id hashes its SQL: a view dropped and
created again with other SQL gets a new checkpoint.

Position: before a micro-batch runs, Spark's offset log and each file source's log record
which segments it reads; the view is consistent, once the batch is applied, with the
smallest over its tables of the newest segment's last LSN (:meth:`ViewStream._batch_lsn`).
The sink applies a batch to the view's reader after committing it (with its id) to
``sink.db``, and skips ids it already has.

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
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet.dataflow.builder import default_rows
from rivulet.dataflow.graph import random_keys
from rivulet.engine.lag import LagHistogram
from rivulet.pipeline.streaming import keyed as K
from rivulet.pipeline.streaming import plan as P
from rivulet.pipeline.streaming.log import LogShipper, StreamingError, wait_until
from rivulet.pipeline.streaming.sink import SinkStore
from rivulet.plan import ir
from rivulet.spark.compile import name as column_name
from rivulet.spark.snapshot import Snapshot, spark_schema, take_snapshot
from rivulet.spark.values import rows_from_arrow, spark_type, to_kind
from rivulet.state.reader import KeyedReader, RangeReader
from rivulet.values.schema import Kind, TableSchema

log = logging.getLogger("rivulet.pipeline.streaming")

Row = tuple

#: Times a failed query is restarted from its checkpoint before the pipeline gives up
#: (a Python worker that misses Spark's connect timeout on a busy machine is transient).
MAX_RESTARTS = 2


@dataclass(frozen=True)
class StreamSettings:
    """``trigger``: the micro-batch interval (Spark's processingTime: a batch that takes
    longer is followed at once, so a short interval only bounds how often an idle query
    lists the log; None: Spark's own poll every 10 ms); ``retention_interval``: how
    often the log segments and snapshots every stream is done with are deleted;
    ``ship_interval``:
    seconds between shipments of the write log; ``max_files_per_trigger``: most log
    files (shipments) of a table one micro-batch reads (None: all there are), so a
    backlog runs as several batches; ``start_timeout``: how long creating a view waits
    for its bootstrap batch (a cold JVM takes tens of seconds)."""

    trigger: str | None = "0.1 seconds"
    ship_interval: float = 0.1
    max_files_per_trigger: int | None = None
    #: How long creating a view waits for its stream's first (bootstrap) batch.
    start_timeout: float = 300.0
    #: Seconds between deletions of the log segments and snapshots every stream has
    #: read (None: keep them all).
    retention_interval: float | None = 30.0


def stream_id(plan: ir.ViewPlan) -> str:
    digest = hashlib.sha1(plan.sql.encode()).hexdigest()[:10]
    return f"{re.sub(r'[^a-z0-9_]', '_', plan.name.lower())[:60]}-{digest}"


def source_schema(schema: TableSchema) -> T.StructType:
    return T.StructType([T.StructField("lsn", T.LongType(), True),
                         T.StructField("sign", T.LongType(), True),
                         *[T.StructField(f"c{i}", spark_type(c.kind, c.scale), True)
                           for i, c in enumerate(schema.columns)]])


class ViewStream:
    """One view's query, its reader and its part of the sink."""

    def __init__(self, pipeline: StreamingPipeline, plan: ir.ViewPlan,
                 state: KeyedReader | RangeReader) -> None:
        self.pipeline = pipeline
        self.plan = plan
        self.state = state
        self.shape = P.shape_of(plan)
        self.above = P.above_function(self.shape)
        self.id = stream_id(plan)
        self.directory = pipeline.root / "views" / self.id
        self.checkpoint = self.directory / "checkpoint"
        self.query: Any = None
        self.lag = LagHistogram()
        self.kinds = [c.kind for c in plan.root.columns]
        #: A partial reader holds only the keys read (filled by :meth:`fill` from the
        #: sink store); then the stream keeps no copy of the view in memory either: the
        #: previous rows of the groups a batch changes are read from the sink store.
        self.partial = state.partial
        self.key_of = state.key_of
        #: Held while a batch commits and applies its deltas, and while a miss is filled:
        #: a fill reads the sink store at exactly the batch the reader has applied.
        self.apply_lock = threading.Lock()
        self.misses = 0
        self.fills = 0
        self.groups: dict[tuple, tuple[Row, ...]] = {}
        self.counts: dict[Row, int] = {}
        self.present: set[Any] = set()
        self.restarts = 0
        self.snapshot_lsn = 0
        progress = pipeline.store.progress(self.id)
        if progress is not None and not self.checkpoint.exists():
            pipeline.store.drop(self.id)  # rows without the checkpoint that made them
            progress = None
        if progress is None:
            shutil.rmtree(self.directory, ignore_errors=True)
        self.applied_batch, self.applied_lsn = progress if progress is not None else (-1, -1)
        #: The sink store has a batch the reader lacks (see :meth:`_commit_and_apply`).
        self.reader_behind = False
        self.batches = 0
        self.skipped_batches = 0
        self.last_input_rows = 0
        self.last_batch_seconds = 0.0
        #: Seconds of the last batch's Spark job (reading, aggregating, state), within
        #: ``last_batch_seconds`` (the whole foreachBatch call, the Python sink included).
        self.last_job_seconds = 0.0
        #: Totals of both over this process's batches (where a backlog's time went).
        self.total_batch_seconds = 0.0
        self.total_job_seconds = 0.0
        #: (batch id, seconds of the batch function, of its Spark job) of recent batches.
        self.recent: deque[tuple[int, float, float]] = deque(maxlen=200)
        self.rows_applied = 0
        self._load()

    @property
    def fresh(self) -> bool:
        """Never started: the stream starts from a snapshot."""
        return not (self.directory / "snapshot.json").exists()

    def default_rows(self) -> Callable[[Any, bool], list[Row]] | None:
        if not self.plan.implicit_group:
            return None
        return default_rows(self.plan, lambda key: key in self.present)

    # ..................................................................... start, stop

    def start(self, spark: SparkSession, snapshot: Snapshot | None) -> None:
        """Start (or restart) the query. The snapshot a stream starts from is recorded in
        its directory: a restart re-plans the bootstrap batch from Spark's offset log, and
        that must read the same snapshot."""
        self.directory.mkdir(parents=True, exist_ok=True)
        origin = self.directory / "snapshot.json"
        if snapshot is not None:
            paths = {k.lower(): str(v) for k, v in snapshot.tables.items()}
            origin.write_text(json.dumps({"lsn": snapshot.lsn, "tables": paths}))
        seed = json.loads(origin.read_text()) if origin.exists() else None
        self.snapshot_lsn = seed["lsn"] if seed is not None else 0
        tables = {}
        for scan in P.scans(self.plan):
            table = scan.table.lower()
            if table not in tables:
                tables[table] = self._table_stream(spark, table, seed)
        compiler = P.SignedCompiler(tables, seed=lambda: self._seed(spark))
        aggregate, mode = self.shape.aggregate, "append"
        if aggregate is None:
            frame = P.signed_rows(compiler, self.plan)
        elif self.shape.native:
            frame, mode = compiler.aggregate_state(aggregate), "update"
        else:
            frame = compiler.keyed_aggregate(aggregate, K.GROUPS)
        writer = (frame.writeStream.outputMode(mode)
                  .queryName(f"rivulet_{self.pipeline.token}_{self.id.replace('-', '_')}")
                  .foreachBatch(self._batch)
                  .option("checkpointLocation", str(self.checkpoint)))
        if self.pipeline.settings.trigger:
            writer = writer.trigger(processingTime=self.pipeline.settings.trigger)
        with _state_store(spark, ROCKSDB if compiler.keyed else None):
            self.query = writer.start()
        self._await_sources()

    def _seed(self, spark: SparkSession) -> DataFrame:
        """A stream of one row (see ``SignedCompiler``), written once with the checkpoint."""
        directory = self.directory / "seed"
        if not directory.exists():
            staging = self.directory / "seed.tmp"
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            pq.write_table(pa.table({"seed": pa.array([0], pa.int64())}), staging / "seed.parquet")
            os.replace(staging, directory)
        return spark.readStream.schema("seed long").parquet(str(directory))

    def _table_stream(self, spark: SparkSession, table: str,
                      seed: dict[str, Any] | None) -> DataFrame:
        """A table's signed deltas: the log's segments after the snapshot, and (for a
        stream started from one) the snapshot's rows as +1 deltas at its LSN."""
        schema = self.pipeline.schemas()[table]
        reader = spark.readStream.schema(source_schema(schema))
        if self.pipeline.settings.max_files_per_trigger:
            reader = reader.option("maxFilesPerTrigger",
                                   self.pipeline.settings.max_files_per_trigger)
        deltas = reader.parquet(str(self.pipeline.shipper.table_directory(table)))
        if seed is None:
            return deltas
        deltas = deltas.where(SF.col("lsn") > SF.lit(seed["lsn"]))
        path = Path(seed["tables"][table])  # a file source reads directories or globs:
        glob = f"{_glob_escape(str(path.parent))}/[{path.name[0]}]{path.name[1:]}"  # one file
        snapshot = spark.readStream.schema(spark_schema(schema)).parquet(glob)
        rows = snapshot.select(SF.lit(seed["lsn"]).cast("long").alias("lsn"),
                               SF.lit(1).cast("long").alias("sign"),
                               *[SF.col(f"`{c.name}`").alias(f"c{i}")
                                 for i, c in enumerate(schema.columns)])
        return deltas.unionByName(rows)

    def _await_sources(self, timeout: float = 120.0) -> None:
        """Wait until the query has set up its sources: each starts Python processes, and
        starting many at once on a busy machine makes them miss Spark's connect timeout."""
        wait_until(lambda: self.query is None or not self.query.isActive
                   or self.query.status.get("message") != "Initializing sources", timeout, 0.05)

    def stop(self) -> None:
        query, self.query = self.query, None
        if query is not None:
            try:
                query.stop()
            except Exception:  # stopping a failed query may raise its error again
                log.debug("stopping the query of view %s", self.plan.name, exc_info=True)

    # ..................................................................... batches

    def _batch(self, df: DataFrame, batch_id: int) -> None:
        """foreachBatch: apply one micro-batch, once."""
        if self.reader_behind:
            self._resync_reader()
        if batch_id <= self.applied_batch:
            # Applied before a restart: Spark runs it again, the sink must not apply it.
            # The batch is still computed (and discarded), so that its stateful operators
            # commit their state for it: Spark 4 fails a batch whose state stores did not.
            df.write.format("noop").mode("overwrite").save()
            self.skipped_batches += 1
            return
        started = time.monotonic()
        lsn = self._batch_lsn(batch_id)
        self.pipeline.hook("batch", self, batch_id)
        if self.shape.aggregate is not None and self.shape.native:
            table = self._collect(P.finished_aggregate(self.shape.aggregate, df))
        else:
            table = self._collect(df)
        self.pipeline.hook("batch_collected", self, batch_id)
        with self.apply_lock:
            previous = self.applied_lsn
            deltas = self._commit_and_apply(table, batch_id, lsn)
        self.pipeline.hook("batch_applied", self, batch_id)
        self.batches += 1
        self.rows_applied += len(deltas)
        self.last_batch_seconds = time.monotonic() - started
        self.total_batch_seconds += self.last_batch_seconds
        self.total_job_seconds += self.last_job_seconds
        self.recent.append((batch_id, self.last_batch_seconds, self.last_job_seconds))
        self.last_input_rows = self.pipeline.shipper.rows_between(
            max(previous, 0), lsn, {s.table.lower() for s in P.scans(self.plan)})
        self.pipeline.observe_visible(self, previous, lsn)
        self.pipeline.applied.set()
        self.pipeline.enforce_memory_limit()

    def _commit_and_apply(self, table: Any, batch_id: int, lsn: int) -> list[tuple[Row, int]]:
        """Commit the batch to the sink store, then apply its deltas to the reader (under
        ``apply_lock``). Once committed, a re-run of the batch is skipped; so from the
        commit until the reader has the deltas the reader is *behind*: a failure there
        stops the query with the reader lacking a batch no re-run will apply again, and
        the next batch call (the re-run, after the restart) first makes the stream's
        memory the store's again (:meth:`_resync_reader`). ``applied_lsn`` moves only once
        the reader has the batch, so nothing waiting for it reads the reader before."""
        self.reader_behind = True
        if self.shape.aggregate is not None:
            deltas = self._apply_groups(table, batch_id, lsn)
        else:
            deltas = self._apply_rows(table, batch_id, lsn)
        self.applied_batch = batch_id
        self.pipeline.hook("batch_committed", self, batch_id)
        self.state.apply(deltas)
        self.reader_behind = False
        self.applied_lsn = lsn
        return deltas

    def _resync_reader(self) -> None:
        """The stream's memory (progress, reader, groups or counts) as the sink store has
        it, after a batch failed between its commit and its reader apply. A partial
        reader gives up its keys (each fills again from the store when read); a full one
        takes the difference between the stored rows and its own."""
        with self.apply_lock:
            progress = self.pipeline.store.progress(self.id)
            applied = progress if progress is not None else (-1, -1)
            if self.partial:
                self.state.evict(list(self.state.entries))
            else:
                self.state.apply(_difference(self._stored_rows(), self.state.all_raw()))
            self.applied_batch, self.applied_lsn = applied
            self.reader_behind = False
        log.warning("the reader of view %s was behind the sink store (a batch failed after its "
                    "commit): resynchronized at batch %d", self.plan.name, self.applied_batch)

    def committed_lsn(self) -> int | None:
        """The LSN every log source had read by the newest batch Spark has committed (a
        restart re-runs only later batches, which read only later files); None before
        that batch has listed a segment of each table."""
        try:
            ids = [int(p.name) for p in (self.checkpoint / "commits").iterdir() if p.name.isdigit()]
        except FileNotFoundError:
            return None
        if not ids:
            return None
        # Until every table's source has listed a segment, a later batch may still list
        # (and read) segments from before the snapshot: keep them all.
        positions = self._log_positions(max(ids))
        return min(positions) if positions else None

    def _batch_lsn(self, batch_id: int) -> int:
        """The LSN the view is consistent with after ``batch_id``.

        Spark's offset log (written before the batch runs) gives each source's offset,
        and each file source's own log lists the files up to it. A log source has read
        every segment up to the newest one it lists (segments appear in LSN order, and
        every shipment writes every table's file), so the view has every change up to
        the smallest such LSN over its log sources; a snapshot source adds nothing.

        A log source that has listed no segment yet has read nothing after the snapshot:
        the view is then at the snapshot's LSN, whatever the other tables' sources read.
        (The shipper renames a shipment's files one by one, so a batch may list one
        table's first segment and not another's: counting only the sources that listed
        one claimed the whole shipment, and ``settle()`` returned before the view had it.)"""
        positions = self._log_positions(batch_id)
        return max(self.snapshot_lsn, min(positions)) if positions else self.snapshot_lsn

    def _log_positions(self, batch_id: int) -> list[int] | None:
        """Per log source, the last LSN of the newest segment it has listed by
        ``batch_id``; None while some source has listed no file at all: a log source
        that has read nothing yet (a snapshot source lists its one file in the first
        batch, and a log source lists only segments)."""
        lines = (self.checkpoint / "offsets" / str(batch_id)).read_text().splitlines()[2:]
        positions = []
        for index, line in enumerate(lines):
            line = line.strip()
            if not line:
                continue
            offset = int(json.loads(line)["logOffset"]) if line.startswith("{") else -1
            if offset < 0:
                return None
            position = _source_position(self.checkpoint / "sources" / str(index), offset)
            if position is not None:
                positions.append(position)
        return positions

    @staticmethod
    def _converter(table: Any, kinds: list[Kind | None]) -> Callable[[tuple], Row]:
        """Spark's values of a batch's first columns as values of the plan's ``kinds``.
        A DECIMAL keeps the scale Spark typed it with (the column's, or MySQL's rule for a
        computed one), as the batch pipeline's results do: converting without it would
        give every DECIMAL the default 18 places."""
        scales = [f.type.scale if pa.types.is_decimal(f.type) else None
                  for f in list(table.schema)[:len(kinds)]]
        spec = list(zip(kinds, scales))

        def convert(values: tuple) -> Row:
            return tuple(v if v is None or k is None else to_kind(v, k, scale)
                         for v, (k, scale) in zip(values, spec))

        return convert

    def _apply_groups(self, table: Any, batch_id: int, lsn: int) -> list[tuple[Row, int]]:
        aggregate = self.shape.aggregate
        assert aggregate is not None
        width, arity = len(aggregate.group_by), aggregate.arity
        convert = self._converter(table, [c.kind for c in aggregate.columns])
        final: dict[tuple, tuple[Row, ...]] = {}
        alive: dict[tuple, bool] = {}
        for row in rows_from_arrow(table):
            group = tuple(row[arity:arity + width])
            alive[group] = width == 0 or (row[-1] or 0) > 0
            if not alive[group]:
                final[group] = ()
                continue
            # HAVING and the projection run the engine's own functions: their values are
            # what the in-process dataflow would serve, so they are kept as they come.
            out = self.above(convert(row[:arity]))
            final[group] = () if out is None else (out,)
        store = self.pipeline.store
        previous = store.previous_groups(self.id, final) if self.partial else self.groups
        store.commit_groups(self.id, batch_id, lsn, final, self.key_of)
        deltas: list[tuple[Row, int]] = []
        single = width == 1
        for group, rows in final.items():
            deltas.extend((r, -1) for r in previous.get(group, ()))
            deltas.extend((r, 1) for r in rows)
            if self.partial:
                continue
            key = group[0] if single else group
            if rows:
                self.groups[group] = rows
            else:
                self.groups.pop(group, None)
            if alive[group]:
                self.present.add(key)
            else:
                self.present.discard(key)
        return deltas

    def _apply_rows(self, table: Any, batch_id: int, lsn: int) -> list[tuple[Row, int]]:
        arity = self.plan.root.arity
        net: dict[Row, int] = {}
        convert = self._converter(table, self.kinds)
        for row in rows_from_arrow(table):
            converted = convert(row[:arity])
            net[converted] = net.get(converted, 0) + row[arity]
        net = {r: n for r, n in net.items() if n}
        store = self.pipeline.store
        previous = store.previous_counts(self.id, net) if self.partial else self.counts
        changed = [(r, previous.get(r, 0) + n) for r, n in net.items()]
        store.commit_counts(self.id, batch_id, lsn, changed, self.key_of)
        if self.partial:
            return list(net.items())
        for row, n in changed:
            if n:
                self.counts[row] = n
            else:
                self.counts.pop(row, None)
        return list(net.items())

    def _collect(self, df: DataFrame) -> Any:
        """The batch's rows as an Arrow table: the one Spark job of a micro-batch."""
        started = time.monotonic()
        table = df.toArrow()
        self.last_job_seconds = time.monotonic() - started
        return table

    def fill(self, keys: list[Any], timeout: float | None = None) -> dict[Any, list[Row]] | None:
        """Fill the keys a partial reader misses from the sink store (the view as of the
        batch the reader has applied: a batch's commit and apply hold the same lock) and
        return every key's rows, read under that lock; None if the lock was not had
        within ``timeout`` seconds (a batch is applying)."""
        assert isinstance(self.state, KeyedReader)  # a streamed range view is full: no misses
        if not self.apply_lock.acquire(timeout=-1 if timeout is None else timeout):
            return None
        try:
            missing = self.state.missing(keys)
            if missing:
                self.misses += len(missing)
                self.fills += 1
                self.state.fill(missing, self.pipeline.store.rows_for(self.id, missing))
            answers = {key: self.state.raw(key) or [] for key in keys}
        finally:
            self.apply_lock.release()
        if missing:
            self.pipeline.enforce_memory_limit()
        return answers

    def evict(self, count: int, policy: str, rng: random.Random) -> int:
        """Evict up to ``count`` keys of a partial reader: least recently read first
        (``"lru"``, the engine's clock sweep) or at random."""
        if not self.partial:
            return 0
        with self.apply_lock:
            if policy == "random":
                keys = random_keys(self.state.entries, count, rng)
            else:
                keys = self.state.clock_candidates(count)
            return self.state.evict(keys)

    def evict_all(self) -> int:
        """Give up every key of a partial reader (they are filled again when read)."""
        if not self.partial:
            return 0
        with self.apply_lock:
            return self.state.evict(list(self.state.entries))

    def _load(self) -> None:
        """The view's rows as the sink stored them (a restart), into the reader; a
        partial reader starts empty."""
        self.pipeline.store.backfill_keys(self.id, self.key_of)
        if self.partial:
            return
        deltas = self._stored_rows()
        if deltas:
            self.state.apply(deltas)

    def _stored_rows(self) -> list[tuple[Row, int]]:
        """The rows of a full stream's view as the sink stored them (with multiplicities);
        the stream's groups or counts (and present keys) are set to match."""
        store = self.pipeline.store
        if self.shape.aggregate is not None:
            self.groups = store.groups(self.id)
            if not self.shape.aggregate.group_by and () not in self.groups:
                # SQL answers an aggregate without GROUP BY over no rows with one row:
                # until the stream's first batch says otherwise, that is the view.
                self.groups[()] = tuple(default_rows(self.plan, lambda key: False)((), False))
            single = len(self.shape.aggregate.group_by) == 1
            self.present = {g[0] if single else g for g in self.groups}
            return [(r, 1) for rows in self.groups.values() for r in rows]
        self.counts = store.counts(self.id)
        return list(self.counts.items())

    # ..................................................................... progress

    def progress(self, lsn: int) -> dict[str, Any]:
        last = self.query.lastProgress if self.query is not None else None
        out: dict[str, Any] = {
            "view": self.plan.name,
            "active": bool(self.query is not None and self.query.isActive),
            "batch_id": self.applied_batch,
            "applied_lsn": self.applied_lsn,
            "lag_lsns": max(0, lsn - max(self.applied_lsn, 0)),
            "lag_seconds": self.pipeline.lag_seconds(self.applied_lsn, lsn),
            "batches": self.batches,
            "skipped_batches": self.skipped_batches,
            "rows_applied": self.rows_applied,
            "sink_seconds": round(self.last_batch_seconds, 4),
            "job_seconds": round(self.last_job_seconds, 4),
            "checkpoint": str(self.checkpoint),
            "visibility_lag": self.lag.snapshot().as_dict(),
        }
        out["input_rows"] = self.last_input_rows  # of the last batch, from the shipper's
        out["rows_per_second"] = (round(self.last_input_rows / self.last_batch_seconds)
                                  if self.last_batch_seconds else 0)  # counts (see log.py)
        if last:
            out["batch_duration_ms"] = last.get("batchDuration")
            out["duration_ms"] = dict(last.get("durationMs") or {})
        return out


class StreamingPipeline:
    """The shipper, every view's stream, and the thread that watches them."""

    def __init__(self, directory: Path, database_file: Path,
                 schemas: Callable[[], dict[str, TableSchema]], current_lsn: Callable[[], int],
                 spark: Callable[[], SparkSession], settings: StreamSettings,
                 memory_limit: int | None = None, eviction: str = "lru") -> None:
        if re.search(r"[\[\]{}*?\\]", str(directory.resolve())):
            # Spark's file source re-reads every file of a glob whose fixed part has
            # such a character (escaped or not: its seen-file check then never matches).
            raise StreamingError(f"the data directory {str(directory)!r} has a character "
                                 "of [ ] { } * ? \\ in its path, which the Spark streaming "
                                 "pipeline cannot read files under; use another path")
        self.root = directory / "stream"
        #: Query names are unique per SparkSession: several databases may share one.
        self.token = hashlib.sha1(str(self.root.resolve()).encode()).hexdigest()[:6]
        self.log_root = self.root / "log"
        self.database_file = database_file
        self.schemas = schemas
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
                                  interval=settings.ship_interval, on_error=self.fail)
        self._running = False
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None
        self._log_conn: sqlite3.Connection | None = None
        self._log_lock = threading.Lock()

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
            directory = self.root / "snapshots" / f"{int(time.time() * 1000)}"
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
            for directory in (self.root / "snapshots").glob("*"):
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


#: Spark's state store for queries with keyed processors (``transformWithState`` needs it);
#: the others keep the default store, which their checkpoints were started with.
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_PROVIDER = "spark.sql.streaming.stateStore.providerClass"


@contextmanager
def _state_store(spark: SparkSession, provider: str | None) -> Iterator[None]:
    """Start a query with ``provider`` as its state store: a query takes the session's
    setting when it starts (and keeps it in its checkpoint), so it is set only meanwhile
    (queries start under the pipeline's lock)."""
    if provider is None:
        yield
        return
    previous = spark.conf.get(_PROVIDER, None)
    spark.conf.set(_PROVIDER, provider)
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(_PROVIDER)
        else:
            spark.conf.set(_PROVIDER, previous)


def _glob_escape(path: str) -> str:
    """``path`` matched literally by Hadoop's glob (a data directory may be ``x[1]``)."""
    return re.sub(r"([\\\[\]{}*?])", r"\\\1", path)


def _source_position(directory: Path, offset: int) -> int | None:
    """The last LSN of the newest log segment a file source has listed up to ``offset``
    (None for a source that reads no log segment: a snapshot)."""
    entries = directory / str(offset)
    if not entries.exists():
        entries = directory / f"{offset}.compact"
    if offset < 0 or not entries.exists():
        return None  # no file yet
    newest = None
    for line in entries.read_text().splitlines()[1:]:
        match = _SEGMENT_PATH.search(json.loads(line)["path"])
        if match is not None:
            newest = max(newest or 0, int(match.group(1)))
    return newest


_SEGMENT_PATH = re.compile(r"/stream/log/[^/]+/\d{12}-(\d{12})\.parquet$")


def _difference(wanted: list[tuple[Row, int]], held: list[Row]) -> list[tuple[Row, int]]:
    """The deltas that turn the rows ``held`` (one entry per copy) into ``wanted``."""
    counts = Counter(held)
    for row, n in wanted:
        counts[row] -= n
    return [(row, -n) for row, n in counts.items() if n]


def _first_line(error: Any) -> str:
    """The line of a (Java or Python) error that names it, not the traceback's header."""
    text = str(getattr(error, "desc", None) or error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    named = [line for line in lines if re.search(r"(Error|Exception)\b.*:", line)
             and not line.startswith(("File ", "at "))]
    return (named[-1] if named else lines[0] if lines else repr(error))[:400]


__all__ = ["StreamSettings", "StreamingPipeline", "ViewStream", "column_name"]
