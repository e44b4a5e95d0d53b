"""``rivulet.open(..., pipeline="spark")``: a database whose views Spark maintains.

The write path is the engine's, unchanged: writes are checked, grouped and committed to
SQLite with an LSN. What changes is who maintains the views. Instead of the in-process
dataflow graph, each view has a reader fed by its Structured Streaming query
(:mod:`rivulet.spark.streaming.pipeline`); the graph keeps only its base-table nodes, so
propagating a batch in process costs nothing.

Readers here hold every key of their view (the sink stores the whole view anyway, and a
miss would have no in-process operator state to be answered from); reads are the
engine's hot path, a dict lookup. ``settle()`` waits until every stream has applied the
last acknowledged LSN.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from pyspark.sql import SparkSession

from rivulet.database import Database
from rivulet.dataflow.builder import BuiltView, finisher
from rivulet.plan import ir
from rivulet.spark.session import SparkConfig, get_session
from rivulet.spark.streaming.pipeline import StreamingPipeline, StreamSettings, ViewStream
from rivulet.spark.streaming.plan import shape_of
from rivulet.state.reader import KeyedReader, RangeReader
from rivulet.views import View


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
        pipeline = StreamingPipeline(
            self.path, self.storage.path, lambda: dict(self.catalog.tables),
            lambda: self.storage.lsn, self.spark_session, self._streaming)
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

    def _install_view(self, plan: ir.ViewPlan) -> View:
        shape_of(plan)  # reject what the streams cannot maintain, before any change
        finish = finisher(plan)
        if plan.range_column is not None:
            state: KeyedReader | RangeReader = RangeReader(plan.key, plan.range_column)
        else:
            state = KeyedReader(plan.key, finish)
        built = BuiltView(plan, -1, -1, state, finish, None)
        name = plan.name.lower()
        self.catalog.views[name] = plan
        self._built[name] = built
        view = self._views[name] = View(self, built)
        if self._pipeline is None:
            self._pending_streams.append((plan, state))
        else:
            self._attach(self._pipeline.add(plan, state))
        return view

    def _attach(self, stream: ViewStream) -> None:
        """Implicit groups answer a default row for keys the stream has no group for."""
        view = self._views[stream.plan.name.lower()]
        defaults = stream.default_rows()
        view._built.default_rows = defaults
        view._default = defaults

    def _uninstall_view(self, name: str) -> None:
        built = self._built.pop(name.lower())
        del self.catalog.views[name.lower()]
        del self._views[name.lower()]
        if self._pipeline is not None:
            self._pipeline.remove(built.plan.name)

    def create_view(self, name: str, sql: str, *, replace: bool = False) -> View:
        """Add a view: its stream starts from a snapshot taken now; returns once the
        stream has applied its first batch. Other views' streams keep running."""
        view = super().create_view(name, sql, replace=replace)
        self.pipeline.wait(self.storage.lsn, self.upquery_timeout, [name])
        return view

    # ..................................................................... waiting, stats

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
        views = {b.plan.name: {"partial": False, "keys": len(b.state),
                               "memory_bytes": b.state.byte_size(), "hits": b.state.reads(),
                               "misses": 0} for b in list(self._built.values())}
        return {
            **self.stats_counters,
            "pipeline": "spark",
            "lsn": self.storage.lsn,
            "applied_lsn": min([s.applied_lsn for s in self.pipeline.streams.values()],
                               default=self.storage.lsn),
            "memory_bytes": sum(v["memory_bytes"] for v in views.values()),
            "memory_limit": None,
            "hits": sum(v["hits"] for v in views.values()),
            "misses": 0, "upqueries": 0, "evictions": 0, "nodes": len(self.graph.nodes),
            "views": len(self.views()),
            "visibility_lag": self.visibility_lag.snapshot().as_dict(),
            "streams": self.stream_progress(),
            "per_view": views,
            "per_node": {},
        }

    def evict(self, view: str | None = None) -> int:
        return 0  # readers are full: nothing to evict

    def close(self) -> None:
        if self._closed:
            return
        super().close()
        if self._pipeline is not None:
            self._pipeline.stop()


def open_streaming(path: str | Path, **options: Any) -> StreamingDatabase:
    return StreamingDatabase(path, **options)


Hook = Callable[..., None]
