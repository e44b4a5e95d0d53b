"""The settings of the Spark streaming pipeline (``rivulet.open(..., streaming=...)``).

Why a module of its own: both the pipeline (shipping, retention) and each view's stream
(its trigger, how many log files a batch reads) read them, and the view's stream must not
import the pipeline that runs it.
"""

from __future__ import annotations

from dataclasses import dataclass


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


__all__ = ["StreamSettings"]
