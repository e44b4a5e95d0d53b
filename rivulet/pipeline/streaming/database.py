"""``rivulet.open(..., pipeline="spark")``: a database whose views Spark maintains.

The write path is the engine's, unchanged: writes are checked, grouped and committed to
SQLite with an LSN. What changes is who maintains the views. Instead of the in-process
dataflow graph, each view has a reader fed by its Structured Streaming query
(:mod:`rivulet.pipeline.streaming.pipeline`); the graph keeps only its base-table nodes, so
propagating a batch in process costs nothing.

Every view is streamed: what Spark's own operators cannot keep under deletes (MIN/MAX,
top-k, DISTINCT, LEFT joins, aggregates under other operators) runs in keyed processors
(:mod:`rivulet.pipeline.streaming.keyed`), so a program such as the news example runs whole
with ``--pipeline spark``.

A streamed view keyed by its parameters has a partial reader (unless partial state is
off): it holds the keys read, and a miss is filled from the sink store, which holds the
whole view at exactly the batch the reader has applied (see
:meth:`ViewStream.fill`). That beats the two other upqueries a streamed view could make:
the engine's, through base tables, would read SQLite ahead of the stream (the writes
since the stream's LSN would have to be taken out again), and a batched Spark lookup
costs a Spark job (tenths of a second) per miss. Views with implicit groups
(``SELECT COUNT(*) ... WHERE k = ?``) and range views keep full readers. Reads that hit
are the engine's hot path, a dict lookup. ``settle()`` waits until every stream has
applied the last acknowledged LSN.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from rivulet.dataflow.builder import BuiltView, finisher
from rivulet.engine.core import Core
from rivulet.engine.database import Database
from rivulet.engine.program import Program
from rivulet.engine.upquery import BUSY, Upqueries
from rivulet.engine.views import View
from rivulet.errors import ProgramError, UnsupportedSqlError, UpqueryTimeout
from rivulet.pipeline.streaming.pipeline import StreamingPipeline
from rivulet.pipeline.streaming.settings import StreamSettings
from rivulet.pipeline.streaming.view import ViewStream
from rivulet.plan import ir
from rivulet.plan.optimize import optimize
from rivulet.spark.bootstrap import PlanRecordingBuilder
from rivulet.spark.session import SparkConfig, get_session
from rivulet.spark.storage import stream_area
from rivulet.state.reader import KeyedReader, RangeReader


class StreamingDatabase(Database):
    """A :class:`Database` with ``pipeline="spark"``. Options as :func:`rivulet.open`, plus
    ``spark`` (a SparkConfig), ``session`` (an existing SparkSession to use instead) and
    ``streaming`` (:class:`StreamSettings`)."""

    def __init__(self, path: str | Path, *, spark: SparkConfig | None = None,
                 session: SparkSession | None = None, streaming: StreamSettings | None = None,
                 **options: Any) -> None:
        self._spark_config = spark
        self._session = session
        self._pipeline: StreamingPipeline | None = None
        self._pending_streams: list[tuple[ir.ViewPlan, KeyedReader | RangeReader]] = []
        self._streaming = streaming or StreamSettings()
        options.update(prewarm=False, spark_bootstrap_rows=None)
        super().__init__(path, spark=spark, **options)
        try:
            pipeline = StreamingPipeline(
                self.path, self.storage.path, lambda: dict(self.catalog.tables),
                lambda: self.storage.lsn, self.spark_session, self._streaming,
                memory_limit=self.graph.memory_limit, eviction=self.graph.eviction,
                area=stream_area(self.path, self._spark_config),
                layouts=lambda: self.catalog.layouts)
        except BaseException:
            super().close()
            raise
        for plan, state in self._pending_streams:
            self._attach(pipeline.add(plan, state))
        self._pending_streams = []
        self._pipeline = pipeline
        try:
            pipeline.start()
        except BaseException:
            pipeline.stop()
            super().close()
            raise

    def spark_session(self) -> SparkSession:
        if self._session is None:
            self._session = get_session(self._spark_config)
        return self._session

    @property
    def pipeline(self) -> StreamingPipeline:
        assert self._pipeline is not None
        return self._pipeline

    # ..................................................................... views

    def make_program(self, core: Core, builder: PlanRecordingBuilder,
                     upqueries: Upqueries) -> Program:
        return _StreamedProgram(core, builder, upqueries, self)

    def make_upqueries(self, core: Core) -> Upqueries:
        return _StreamedUpqueries(core, self)

    def _attach(self, stream: ViewStream) -> None:
        """Implicit groups answer a default row for keys the stream has no group for."""
        self.program.views[stream.plan.name.lower()].use_default_rows(stream.default_rows())

    def stream_view(self, plan: ir.ViewPlan, state: KeyedReader | RangeReader) -> None:
        """Start the stream of a view just installed (once the pipeline runs)."""
        if self._pipeline is None:
            self._pending_streams.append((plan, state))
        else:
            self._attach(self._pipeline.add(plan, state))

    def unstream_view(self, name: str) -> None:
        if self._pipeline is not None:
            self._pipeline.remove(name)

    def create_view(self, name: str, sql: str, *, replace: bool = False) -> View:
        """Add a view: its stream starts from a snapshot taken now; returns once the
        stream has applied its first batch. Other views' streams keep running."""
        view = super().create_view(name, sql, replace=replace)
        self.pipeline.wait(self.storage.lsn, self._streaming.start_timeout, [name])
        return view

    # ..................................................................... waiting, stats

    def await_first_batch(self, name: str) -> None:
        """Until the stream of view ``name`` has applied its first (bootstrap) batch: its
        reader is empty before, and a read would answer no rows."""
        stream = None if self._pipeline is None else self._pipeline.streams.get(name.lower())
        if stream is not None and stream.applied_lsn < 0:
            self.pipeline.wait(0, self._streaming.start_timeout, [name])

    @property
    def applied_lsn(self) -> int:
        """LSN of the last batch every view reflects: the least its streams have applied
        (the in-process graph keeps only base tables, and is at the storage's LSN at once);
        a server's read-your-writes waits for it."""
        pipeline = self._pipeline
        streams = [] if pipeline is None else list(pipeline.streams.values())
        return min([super().applied_lsn, *[s.applied_lsn for s in streams]])

    def settle(self, timeout: float | None = 60.0) -> None:
        """Wait until every acknowledged write is reflected in every view's stream."""
        self.wait_for(self.storage.lsn, timeout)

    def wait_for(self, lsn: int, timeout: float | None = 60.0) -> None:
        super().wait_for(lsn, timeout)
        self.pipeline.wait(lsn, timeout)

    def stream_progress(self) -> dict[str, Any]:
        """Per stream: batch id, applied LSN, lag in LSNs and seconds, batch duration and
        rows/s (``/metrics``, ``rivulet status``)."""
        return self.pipeline.progress()

    def stats(self) -> dict[str, Any]:
        views = {}
        for built in self.built_views():
            stream = self.pipeline.streams.get(built.plan.name.lower())
            misses = stream.misses if stream is not None else 0
            views[built.plan.name] = {
                "partial": built.state.partial, "keys": len(built.state),
                "memory_bytes": built.state.byte_size(),
                "hits": max(0, built.state.reads() - misses), "misses": misses,
                "pipeline": "spark"}
        return {
            **self.stats_counters,
            "pipeline": "spark",
            "lsn": self.storage.lsn,
            "applied_lsn": self.applied_lsn,
            "memory_bytes": sum(v["memory_bytes"] for v in views.values()),
            "memory_limit": self.pipeline.memory_limit,
            "hits": sum(v["hits"] for v in views.values()),
            "misses": sum(v["misses"] for v in views.values()),
            "upqueries": self.graph.counters["upqueries"] + sum(
                s.fills for s in self.pipeline.streams.values()),
            "evictions": self.graph.counters["evictions"] + self.pipeline.evictions,
            "nodes": len(self.graph.nodes),
            "views": len(self.views()),
            "visibility_lag": self.visibility_lag.snapshot().as_dict(),
            "streams": self.stream_progress(),
            "per_view": views,
            "per_node": {},
        }

    def evict(self, view: str | None = None) -> int:
        """Evict a view's keys (every view's with None); a streamed view's partial
        reader gives up every key it holds (a full one none)."""
        streams = [s for s in self.pipeline.streams.values()
                   if view is None or s.plan.name.lower() == view.lower()]
        return sum(s.evict_all() for s in streams)

    def close(self) -> None:
        if self.closed:
            return
        super().close()
        if self._pipeline is not None:
            self._pipeline.stop()


class _StreamedProgram(Program):
    """Views whose state a Spark stream maintains: no dataflow in the graph, a reader
    filled from the stream's sink."""

    def __init__(self, core: Core, builder: PlanRecordingBuilder, upqueries: Upqueries,
                 db: StreamingDatabase) -> None:
        super().__init__(core, builder, upqueries)
        self.db = db

    def install_view(self, plan: ir.ViewPlan) -> View:
        if plan.alternatives is not None:  # (before anything is installed)
            raise UnsupportedSqlError(
                "unsupported parameters under an OR on different columns in a streaming "
                "pipeline (a union of alternatives, rivulet/plan/alternatives.py, that no "
                "stream has been checked to keep)")
        if plan.other_ranges:  # (before anything is installed)
            raise UnsupportedSqlError(
                "unsupported range parameters on two different columns in a streaming "
                "pipeline (no stream has been checked to keep the other columns' bounds)")
        # The stream runs the plan the engine's dataflow would be built from (every rule
        # of the optimizer); the catalog keeps it as planned, for views that read it.
        catalog = self.core.catalog
        planned, plan = plan, optimize(plan, views=list(catalog.views.values()))
        finish = finisher(plan)
        if plan.range_column is not None:
            state: KeyedReader | RangeReader = RangeReader(plan.key, plan.range_column)
        else:
            partial = self.core.graph.partial and bool(plan.key) and not plan.implicit_group
            state = KeyedReader(plan.key, finish, partial=partial)
        built = BuiltView(plan, -1, -1, state, finish, None)
        name = plan.name.lower()
        catalog.views[name] = planned
        self.core.built[name] = built
        view = self.views[name] = View(self.upqueries, built)
        self.db.stream_view(plan, state)
        return view

    def before_schema_change(self, table: str) -> None:
        """The log so far is shipped with the columns it was written with (commits are
        held off): segments after the change name the columns as before
        (rivulet/pipeline/streaming/columns.py), so running streams read on."""
        if self.db._pipeline is not None:
            self.db._pipeline.before_schema_change()

    def await_ready(self, view: View) -> None:
        """An ad-hoc view made by a read answers once its stream's bootstrap batch is in
        its reader (:meth:`StreamingDatabase.await_first_batch`)."""
        self.db.await_first_batch(view.name)

    def uninstall_view(self, name: str) -> None:
        built = self.core.built.pop(name.lower())
        del self.core.catalog.views[name.lower()]
        del self.views[name.lower()]
        self.db.unstream_view(built.plan.name)


class _StreamedUpqueries(Upqueries):
    """A streamed view's miss is filled by its stream, from the sink store (never at once,
    ``wait=False``: the caller fills it in the background)."""

    def __init__(self, core: Core, db: StreamingDatabase) -> None:
        super().__init__(core)
        self.db = db

    def fill(self, built: BuiltView, keys: list[Any], timeout: float | None = None,
             read: Any = None, *, wait: bool = True) -> Any:
        if not wait:
            return BUSY
        core = self.core
        core.check_open()
        stream = self.db.pipeline.streams.get(built.plan.name.lower())
        if stream is None or core.built.get(built.plan.name.lower()) is not built:
            raise ProgramError(f"view {built.plan.name!r} was dropped")
        timeout = core.upquery_timeout if timeout is None else timeout
        answers = stream.fill(keys, timeout)
        if answers is None:
            raise UpqueryTimeout(f"view {built.plan.name!r}: filling {len(keys)} key(s) did "
                                 f"not start within {timeout} s (a micro-batch is applying)")
        return answers
