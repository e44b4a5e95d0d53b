"""What every part of the engine shares, and the two locks that order them.

A :class:`~rivulet.engine.database.Database` is a facade over parts, each a module of
this package: :mod:`~rivulet.engine.commit` (group commit of writes),
:mod:`~rivulet.engine.propagate` (committed batches through the dataflow),
:mod:`~rivulet.engine.upquery` (filling partial state), :mod:`~rivulet.engine.program`
(DDL, views, restore at open) and :mod:`~rivulet.engine.writers` (write statements
compiled). They meet here, in one :class:`Core`: storage, catalog and graph, the built
views, and the graph's progress (the LSN it has applied).

Locks, always taken in this order: the **commit lock** (one committer, or one migration,
at a time) before the **graph lock** (one wave of propagation, one upquery, or one
migration in the graph at a time). A migration holds both at one LSN (:meth:`Core.migration`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rivulet.dataflow.builder import BuiltView
from rivulet.dataflow.graph import Graph
from rivulet.engine.limits import Limits
from rivulet.engine.locks import LockManager
from rivulet.engine.unapplied import UnappliedBatches
from rivulet.errors import CatchUpTimeout, ClosedError, DataflowFailedError, StorageFailedError
from rivulet.migrate.lazy import LazyWork
from rivulet.plan.catalog import Catalog
from rivulet.spark.bootstrap import Bootstrapper
from rivulet.storage.sqlite import SqliteStorage


@dataclass(eq=False)
class Core:
    """The shared pieces of one open database (see the module docstring)."""

    path: Path
    storage: SqliteStorage
    catalog: Catalog
    graph: Graph
    limits: Limits
    lazy: LazyWork
    bootstrap: Bootstrapper
    #: A read that misses waits at most this long for the dataflow (seconds).
    upquery_timeout: float
    commit_lock: threading.RLock
    graph_lock: threading.RLock
    #: Deltas of committed batches the graph has not applied yet, by LSN.
    unapplied: UnappliedBatches = field(default_factory=UnappliedBatches)
    #: Every view's dataflow, by lower-case name.
    built: dict[str, BuiltView] = field(default_factory=dict)
    #: Transactions' row and table locks (rivulet/engine/locks.py).
    locks: LockManager = field(default_factory=LockManager)
    #: Test hooks: name -> callable, run at named points (see :meth:`hook`).
    hooks: dict[str, Callable[[], Any]] = field(default_factory=dict)
    closed: bool = False
    #: What broke the dataflow (views can no longer be trusted), if anything did.
    failure: BaseException | None = None
    #: Called (in the failing thread) once :attr:`failure` is set: a server stops.
    failure_listeners: list[Callable[[BaseException], None]] = field(default_factory=list)
    #: LSN of the last batch every view reflects.
    applied_lsn: int = 0
    _applied: threading.Condition = field(default_factory=threading.Condition)

    def check_open(self) -> None:
        if self.closed:
            raise ClosedError("the database is closed")

    def check_healthy(self) -> None:
        """Raise if the dataflow failed (a bug): its views can no longer be trusted."""
        if self.failure is not None:
            raise DataflowFailedError(f"the dataflow failed: {self.failure!r}") from self.failure

    def check_writable(self) -> None:
        """Raise once storage failed (:class:`StorageFailedError`): no write is taken."""
        if isinstance(self.failure, StorageFailedError):
            raise StorageFailedError(f"storage failed: {self.failure}; the database takes no "
                                     "write until it is opened again") from self.failure

    def fail(self, exc: BaseException) -> None:
        if self.failure is not None:  # the first failure is the cause
            return
        self.failure = exc
        for listener in list(self.failure_listeners):
            listener(exc)

    def hook(self, name: str) -> None:
        hook = self.hooks.get(name)
        if hook is not None:
            hook()

    def mark_applied(self, lsn: int) -> None:
        """Every view now reflects the batches up to ``lsn``: wake who waits for them."""
        with self._applied:
            self.applied_lsn = lsn
            self._applied.notify_all()

    def wait_applied(self, lsn: int, timeout: float | None) -> None:
        """Wait until every view reflects the batches up to ``lsn``."""
        if not self.bootstrap.await_loaded(timeout):
            raise CatchUpTimeout(f"views did not catch up with LSN {lsn} within {timeout} s "
                                 "(full state is still being recovered on Spark)")
        with self._applied:
            if not self._applied.wait_for(lambda: self.applied_lsn >= lsn, timeout):
                raise CatchUpTimeout(f"views did not catch up with LSN {lsn} within {timeout} s")
        self.check_healthy()

    @contextmanager
    def migration(self) -> Iterator[None]:
        """Exclusive access to storage and graph at one LSN: no commit, no propagation."""
        with self.commit_lock:
            self.wait_applied(self.storage.lsn, None)
            with self.graph_lock:
                yield
