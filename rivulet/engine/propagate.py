"""Propagation: committed write batches pushed through the dataflow graph, in LSN order.

Committers queue each batch they commit (:meth:`Propagation.queue`); the propagation
thread applies them as waves under the graph lock. ``settle()`` waits until it has caught
up with every acknowledged write (:meth:`Core.wait_applied`).

A thread that falls behind catches up instead of falling further behind: the batches
queued at the head are applied as one wave (:data:`PROPAGATE_COALESCE` at most), which
costs one graph-lock acquisition and one walk of the graph instead of one each. A small
batch may also be applied by the thread that committed it (:meth:`Propagation.apply_here`,
for an event loop whose turns with this thread would each cost two context switches).
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from rivulet.dataflow.ops.base import NodeId
from rivulet.engine.core import Core
from rivulet.engine.lag import LagHistogram
from rivulet.faults import fault_point
from rivulet.state.arrangement import Delta

log = logging.getLogger("rivulet")

#: At most this many queued write batches are propagated as one wave.
PROPAGATE_COALESCE = 64
#: :meth:`Propagation.apply_here` applies committed batches of at most this many rows on
#: the caller's thread; bigger ones are left to the propagation thread.
PROPAGATE_HERE_ROWS = 64


@dataclass(frozen=True, slots=True)
class CommittedBatch:
    """One committed write batch on its way to the views."""

    lsn: int
    #: Signed rows by base node.
    deltas: dict[NodeId, list[Delta]]
    #: ``time.monotonic()`` when it was acknowledged (the visibility lag starts there).
    committed_at: float

    @property
    def rows(self) -> int:
        return sum(len(rows) for rows in self.deltas.values())


class _Stop:
    """Queued after the last batch: the propagation thread ends there."""


STOP = _Stop()


class Propagation:
    """The queue of committed batches and the thread that applies them."""

    def __init__(self, core: Core) -> None:
        self.core = core
        #: Committed batches in LSN order, then maybe STOP. Taken and applied only under
        #: ``_apply_lock``, by the thread or by a committer applying its own batch.
        self._batches: collections.deque[CommittedBatch | _Stop] = collections.deque()
        self._batch_ready = threading.Condition()
        self._apply_lock = threading.Lock()
        self._running = False  # the thread has finished recovery: batches may be applied
        self._thread: threading.Thread | None = None
        #: Called with the LSN of each queued batch (a write's, an import's) in the
        #: committing thread (a server tells its replicas: rivulet/server/mysql/primary.py).
        self.listeners: list[Callable[[int], None]] = []
        #: Seconds from a batch's commit to its being visible in every view (``/metrics``).
        self.visibility_lag = LagHistogram()

    def start(self, first: Callable[[], None]) -> None:
        """Start the thread; it runs ``first`` (recovery) before it applies any batch."""
        self._thread = threading.Thread(target=self._run, args=(first,),
                                        name="rivulet-propagate", daemon=True)
        self._thread.start()

    def queue(self, batch: CommittedBatch, wake: bool = True) -> None:
        """Queue a committed batch (wake the thread unless the caller applies it itself)."""
        with self._batch_ready:
            self._batches.append(batch)
            if wake:
                self._batch_ready.notify()
        for listener in self.listeners:
            listener(batch.lsn)

    def stop(self) -> None:
        """Apply what is queued, then end the thread."""
        with self._batch_ready:
            self._batches.append(STOP)
            self._batch_ready.notify()
        if self._thread is not None:
            self._thread.join()

    def apply_here(self) -> None:
        """Apply the queued batches on the caller's thread if they are small, nobody else
        is applying and the graph is free; otherwise leave them to the propagation thread
        (woken). The caller is an event loop: it must not wait for an upquery (a read's
        miss in the pool) that holds the graph."""
        if self._running and self._apply_lock.acquire(blocking=False):
            try:
                if self.core.graph_lock.acquire(blocking=False):  # re-entered by _apply
                    try:
                        batches = self._take(PROPAGATE_HERE_ROWS)
                        if batches:
                            self._apply(batches)
                    finally:
                        self.core.graph_lock.release()
            finally:
                self._apply_lock.release()
        with self._batch_ready:
            if self._batches:  # too big, or another thread is applying: the thread's work
                self._batch_ready.notify()

    def _run(self, first: Callable[[], None]) -> None:
        first()
        self._running = True
        while True:
            with self._batch_ready:
                while not self._batches:
                    self._batch_ready.wait()
            with self._apply_lock:  # a committer may have taken and applied them meanwhile
                batches = self._take()
                if batches:
                    self._apply(batches)
                with self._batch_ready:
                    if self._batches and self._batches[0] is STOP:
                        return

    def _take(self, max_rows: int | None = None) -> list[CommittedBatch]:
        """The committed batches at the head of the queue, up to STOP and
        :data:`PROPAGATE_COALESCE` (the caller holds ``_apply_lock``); none if they hold
        more than ``max_rows`` rows."""
        with self._batch_ready:
            batches: list[CommittedBatch] = []
            for item in itertools.islice(self._batches, PROPAGATE_COALESCE):
                if isinstance(item, _Stop):
                    break
                batches.append(item)
            if max_rows is not None and sum(b.rows for b in batches) > max_rows:
                return []
            for _ in batches:
                self._batches.popleft()
        return batches

    def _apply(self, batches: list[CommittedBatch]) -> None:
        core = self.core
        lsn = batches[-1].lsn
        if len(batches) == 1:
            deltas = batches[0].deltas
        else:  # one wave; each base's deltas stay in LSN order
            deltas = {}
            for batch in batches:
                for base, rows in batch.deltas.items():
                    deltas.setdefault(base, []).extend(rows)
        try:
            with core.graph_lock:
                core.hook("before_propagate")
                fault_point("propagate")
                try:
                    core.graph.propagate(deltas, lsn)
                finally:
                    for batch in batches:
                        core.unapplied.discard(batch.lsn)
                core.graph.enforce_memory_limit()
        except BaseException as exc:  # a bug: views can no longer be trusted
            log.exception("propagation of LSN %s failed", lsn)
            core.fail(exc)
        now = time.monotonic()
        for batch in batches:
            self.visibility_lag.observe(now - batch.committed_at)
        core.mark_applied(lsn)
