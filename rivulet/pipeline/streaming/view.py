"""One view's stream: its Structured Streaming query, its reader and its part of the sink.

A view's query is bootstrapped from a snapshot the batch pipeline takes at the LSN the
view is created at (its first micro-batch reads the snapshot as +1 deltas) and then
follows the log after that LSN. A view's stream id hashes its SQL: a view dropped and
created again with other SQL gets a new checkpoint. Each micro-batch is applied once
(:meth:`ViewStream._batch`): committed to the sink store with its id, then applied to the
reader; where a batch leaves the view in the log is read from the query's checkpoint
(:mod:`.checkpoint`).

Why apart from :mod:`.pipeline`: a stream is one query and its state (groups or counts,
the reader, misses filled from the sink store, eviction of a partial reader's keys); the
pipeline runs many of them with the shipper, restarts the ones that fail and deletes what
every stream is done with. A stream reaches the pipeline that runs it only through
:class:`StreamHost`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import shutil
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

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
from rivulet.pipeline.streaming.checkpoint import batch_lsn, committed_lsn
from rivulet.pipeline.streaming.log import LogShipper, wait_until
from rivulet.pipeline.streaming.settings import StreamSettings
from rivulet.pipeline.streaming.sink import SinkStore
from rivulet.plan import ir
from rivulet.spark.snapshot import Snapshot, spark_schema
from rivulet.spark.values import rows_from_arrow, spark_field, to_kind
from rivulet.state.reader import KeyedReader, RangeReader
from rivulet.values.schema import Kind, TableSchema

log = logging.getLogger("rivulet.pipeline.streaming")

Row = tuple


class StreamHost(Protocol):
    """What a stream uses of the pipeline that runs it (:class:`.pipeline.StreamingPipeline`):
    its directory, settings, sink store and shipper, and the calls a batch makes."""

    area: Path
    #: Part of every query's name: query names are unique per SparkSession.
    token: str
    settings: StreamSettings
    store: SinkStore
    shipper: LogShipper
    schemas: Callable[[], dict[str, TableSchema]]
    #: Set after every batch applied (waits wake up on it).
    applied: threading.Event

    def column_names(self, table: str) -> list[str]: ...

    def scan_names(self, table: str, version: int, arity: int) -> list[str | None]: ...

    def hook(self, name: str, *args: Any) -> None: ...

    def observe_visible(self, stream: ViewStream, previous: int, lsn: int) -> None: ...

    def lag_seconds(self, applied: int, lsn: int) -> float: ...

    def enforce_memory_limit(self) -> int: ...


def stream_id(plan: ir.ViewPlan) -> str:
    digest = hashlib.sha1(plan.sql.encode()).hexdigest()[:10]
    return f"{re.sub(r'[^a-z0-9_]', '_', plan.name.lower())[:60]}-{digest}"


def source_schema(schema: TableSchema, names: list[str] | None = None) -> T.StructType:
    """A table's segments as Spark reads them (columns named ``names``, default ``c0..``)."""
    names = [f"c{i}" for i in range(len(schema.columns))] if names is None else names
    return T.StructType([T.StructField("lsn", T.LongType(), True),
                         T.StructField("sign", T.LongType(), True),
                         *[spark_field(n, c) for n, c in zip(names, schema.columns)]])

class ViewStream:
    """One view's query, its reader and its part of the sink."""

    def __init__(self, pipeline: StreamHost, plan: ir.ViewPlan,
                 state: KeyedReader | RangeReader) -> None:
        self.pipeline = pipeline
        self.plan = plan
        self.state = state
        self.shape = P.shape_of(plan)
        self.above = P.above_function(self.shape)
        self.id = stream_id(plan)
        self.directory = pipeline.area / "views" / self.id
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
        compiler = P.SignedCompiler(
            tables, seed=lambda: self._seed(spark),
            columns=lambda scan: self.pipeline.scan_names(scan.table.lower(), scan.version,
                                                          scan.arity))
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
        names = self.pipeline.column_names(table)
        reader = spark.readStream.schema(source_schema(schema, names))
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
                               *[SF.col(f"`{c.name}`").alias(n)
                                 for n, c in zip(names, schema.columns)])
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
        """See :func:`.checkpoint.committed_lsn`."""
        return committed_lsn(self.checkpoint)

    def _batch_lsn(self, batch_id: int) -> int:
        """The LSN the view is consistent with after ``batch_id`` (see
        :func:`.checkpoint.batch_lsn`)."""
        return batch_lsn(self.checkpoint, batch_id, self.snapshot_lsn)

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


def _difference(wanted: list[tuple[Row, int]], held: list[Row]) -> list[tuple[Row, int]]:
    """The deltas that turn the rows ``held`` (one entry per copy) into ``wanted``."""
    counts = Counter(held)
    for row, n in wanted:
        counts[row] -= n
    return [(row, -n) for row, n in counts.items() if n]


__all__ = ["StreamHost", "ViewStream", "source_schema", "stream_id"]
