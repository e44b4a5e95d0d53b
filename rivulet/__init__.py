"""rivulet: a partially-stateful dataflow database for read-heavy web applications.

Give it a schema and parameterized views; it keeps every view's answer up to date as
writes arrive, so reads are dictionary lookups. See README.md and docs/design.md.

    >>> import rivulet, tempfile
    >>> with rivulet.open(tempfile.mkdtemp()) as db:
    ...     _ = db.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT)")
    ...     _ = db.execute("CREATE VIEW big AS SELECT id FROM t WHERE n > ?")
    ...     db.table("t").insert_many([(1, 5), (2, 50)])
    ...     db.settle()
    ...     db.view("big").lookup(10)
    2
    [(2,)]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rivulet.engine.database import Database
from rivulet.engine.limits import Limits
from rivulet.engine.table import Table
from rivulet.engine.views import NOT_READY, View
from rivulet.errors import (
    ClosedError,
    ConstraintError,
    LimitError,
    ProgramError,
    RivuletError,
    SchemaError,
    SqlError,
    UnsupportedSqlError,
    UpqueryTimeout,
)

if TYPE_CHECKING:
    from rivulet import dbapi
    from rivulet.spark.session import SparkConfig

__all__ = [
    "NOT_READY",
    "ClosedError",
    "ConstraintError",
    "Database",
    "LimitError",
    "Limits",
    "ProgramError",
    "RivuletError",
    "SchemaError",
    "SqlError",
    "Table",
    "UnsupportedSqlError",
    "UpqueryTimeout",
    "View",
    "connect",
    "open",
]

__version__ = "0.1.0"


def open(  # noqa: A001
    path: str | Path,
    *,
    durability: str = "normal",
    memory_limit: int | str | None = None,
    eviction: str = "lru",
    join_caches: str = "lean",
    partial: bool = True,
    upquery_timeout: float = 30.0,
    tune_gc: bool = True,
    spark_bootstrap_rows: int | None = 1_000_000,
    spark: SparkConfig | None = None,
    prewarm: bool = True,
    reuse: bool = True,
    background_migration: bool = True,
    pipeline: str = "inprocess",
    limits: Limits | None = None,
    **streaming: Any,
) -> Database:
    """Open (or create) the database in directory ``path``.

    ``durability="normal"`` (the default) survives the process being killed at any moment;
    ``"full"`` also survives power loss, at the cost of an fsync per commit.

    ``memory_limit`` bounds the state rivulet keeps in memory (bytes, or a string such as
    ``"512MB"``): past it, the least recently read keys of partial state are evicted
    (``eviction="lru"``, or ``"random"``) and refilled when read again. ``partial=False``
    keeps every view's state whole instead (no misses; more memory). A read that misses
    waits at most ``upquery_timeout`` seconds for the dataflow. ``limits`` bounds what one
    request may ask (statement length, rows per write, rows per answer to a server client,
    number of views: :class:`rivulet.engine.limits.Limits`).

    A join looks up its other side in an index over that side's output. Where that side
    answers such a lookup by itself (a base table from storage's index, a full aggregate
    from its groups), ``join_caches="lean"`` (the default) keeps in the index only the keys
    writes probed: what a read's upquery filled is held by the reader, and a second copy
    would cost memory. ``"kept"`` keeps those too (evicted like any partial state under
    ``memory_limit``): repeated misses and writes then skip storage, for more memory.

    ``tune_gc`` sets a garbage-collector policy for the process that keeps collection
    pauses short over a large heap of state (see :mod:`rivulet.engine.collector`).

    Full state over at least ``spark_bootstrap_rows`` base-table rows is computed on Spark
    when a view is created and at open (``None``: never; ``0``: always), through a
    session made with ``spark`` (a :class:`rivulet.spark.SparkConfig`); at open, writes
    are accepted while Spark works (see :mod:`rivulet.spark.bootstrap`). ``prewarm``
    saves the hot keys of partial views at close and fills them again at open.

    Views share every operator (and its state) that another view already built for the
    same sub-plan; ``reuse=False`` builds each view on its own, to measure what that saves.

    Schema changes (``ALTER TABLE``, ``CREATE TABLE ... AS SELECT``) migrate rows lazily:
    on demand, and by a background thread; ``background_migration=False`` leaves them to
    demand and :meth:`Database.finish_conversions`.

    ``pipeline="spark"`` maintains the views with Spark Structured Streaming instead of the
    in-process dataflow (:mod:`rivulet.pipeline.streaming`; ``session=`` an existing
    SparkSession, ``streaming=`` a ``StreamSettings``).
    """
    if pipeline == "spark":
        from rivulet.pipeline.streaming import StreamingDatabase

        return StreamingDatabase(path, durability=durability, memory_limit=memory_limit,
                                 eviction=eviction, join_caches=join_caches, partial=partial,
                                 upquery_timeout=upquery_timeout, tune_gc=tune_gc, spark=spark,
                                 reuse=reuse, limits=limits, **streaming)
    if pipeline != "inprocess" or streaming:
        raise ValueError(f"pipeline must be 'inprocess' or 'spark', got {pipeline!r}"
                         if pipeline != "inprocess" else
                         f"unexpected options {sorted(streaming)} (only with pipeline='spark')")
    return Database(path, durability=durability, memory_limit=memory_limit, eviction=eviction,
                    join_caches=join_caches, partial=partial, upquery_timeout=upquery_timeout,
                    tune_gc=tune_gc,
                    spark_bootstrap_rows=spark_bootstrap_rows, spark=spark, prewarm=prewarm,
                    reuse=reuse, background_migration=background_migration, limits=limits)


def connect(path: str | Path, **kwargs: Any) -> dbapi.Connection:
    """A PEP 249 (DB-API 2.0) connection; see :mod:`rivulet.dbapi`."""
    from rivulet import dbapi

    return dbapi.connect(path, **kwargs)
