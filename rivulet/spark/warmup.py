"""Starting Spark for a bootstrap while its snapshot is exported, warmed up on the way.

Why a module of its own: starting the JVM and warming it is about the Spark session, not
about which state to defer or load (:mod:`rivulet.spark.bootstrap`, which runs it). pyspark
is imported in the thread, when it runs: the engine imports the bootstrap at start-up.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rivulet.spark.session import SparkConfig

log = logging.getLogger("rivulet.spark")

#: A session that comes back sooner than this was running already (a JVM takes seconds to
#: start), and has run jobs before: it is not warmed up again.
WARM_START_S = 1.0


class SessionStarter(threading.Thread):
    """Gets the SparkSession, and warms the JVM with one small aggregation, in a thread
    while the snapshot is exported: the JVM starts in its own process and the export is
    mostly SQLite and Arrow, so on two cores the start-up (about ten seconds cold) and the
    export overlap instead of adding up. The warm-up compiles the hash-aggregation and
    Arrow-transfer code paths the state queries take, so the first real job does not pay
    for that."""

    def __init__(self, config: SparkConfig | None, work: Path, warm: Any = None) -> None:
        super().__init__(name="rivulet-spark-start", daemon=True)
        self.config = config
        self.work = work
        self.warm = warm  # a session warmed up before: not again
        self.session: Any = None
        self.error: BaseException | None = None
        self.seconds = 0.0

    def run(self) -> None:
        started = time.perf_counter()
        try:
            from pyspark.sql import functions as SF

            from rivulet.spark.session import get_session

            spark = get_session(self.config)
        except BaseException as exc:
            self.error = exc
            self.seconds = time.perf_counter() - started
            return
        self.session = spark
        if spark is self.warm or time.perf_counter() - started < WARM_START_S:
            self.seconds = time.perf_counter() - started
            return
        try:
            self._warm_up(spark, SF)
        except Exception as exc:  # only a warm-up: the bootstrap goes on without it
            log.warning("warming up Spark failed: %r", exc)
        finally:
            self.seconds = time.perf_counter() - started

    def _warm_up(self, spark: Any, SF: Any) -> None:  # noqa: N803
        """One small job of the kind the state queries run: a Parquet scan, a grouping,
        an Arrow transfer (JIT compilation of those paths is most of a cold first job)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.work / "warm-up.parquet"
        n = 200_000
        pq.write_table(pa.table({"a": pa.array(range(n), pa.int64()),
                                 "b": pa.array([i % 1000 for i in range(n)], pa.int64())}), path)
        try:
            (spark.read.parquet(str(path)).groupBy("b")
             .agg(SF.count(SF.lit(1)), SF.sum("a"), SF.min("a")).toArrow())
        finally:
            path.unlink(missing_ok=True)

    def result(self) -> Any:
        self.join()
        if self.error is not None:
            raise self.error
        return self.session


__all__ = ["WARM_START_S", "SessionStarter"]
