"""Writes of every connection, committed together.

A connection's write would otherwise cost a thread-pool hand-off and a commit of its own.
Here the event loop queues the write request (compiled once per statement shape, built
in microseconds) and awaits a future. At the end of the loop's turn, the writes queued in
it are committed as one group (:meth:`Database.submit_many`: one SQLite transaction,
each request failing alone), right on the event loop: a commit without fsync takes tens
of microseconds, less than handing it to a thread and back (~60 us less per write here).
A small group is also propagated to the views right there, before the writes are
acknowledged (``propagate``; see :meth:`Database.submit_now`): handing it to the
propagation thread made the loop and that thread take turns with the GIL, which cost the
server a fifth of its CPU in ``bench.vote_wire`` (5% writes).
Two kinds of writes go to a committer thread instead, which commits everything queued
to it as one group and wakes the loop once per group: an UPDATE or DELETE that is not by
primary key (it may scan a table), and any write while another thread holds the commit
lock (a migration, the HTTP API) -- the event loop never waits for either.
"""

from __future__ import annotations

import asyncio
import queue
import threading

from rivulet.engine.database import Database
from rivulet.engine.joined import JoinedWriteRequest
from rivulet.errors import RivuletError
from rivulet.storage.writes import WriteRequest

_Item = tuple[WriteRequest, "asyncio.Future[WriteRequest]"]


class WriteBatcher:
    def __init__(self, db: Database, loop: asyncio.AbstractEventLoop,
                 propagate: bool = True) -> None:
        self.db = db
        self.loop = loop
        self.propagate = propagate  # small groups propagated on the loop, before the replies
        self.queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self.pending: list[_Item] = []
        self.thread = threading.Thread(target=self._run, name="rivulet-mysql-writes", daemon=True)
        self.thread.start()

    def submit(self, request: WriteRequest) -> asyncio.Future[WriteRequest]:
        """A future resolved with ``request`` once it is committed (or has its error)."""
        future: asyncio.Future[WriteRequest] = self.loop.create_future()
        if not self.pending:
            self.loop.call_soon(self._commit_here)
        self.pending.append((request, future))
        return future

    def _commit_here(self) -> None:
        """Commit what the connections queued in this turn of the event loop, right here
        when no other thread is committing (a commit without fsync takes tens of
        microseconds; a hand-off to a thread and back costs more), else in the thread."""
        pending, self.pending = self.pending, []
        batch = [item for item in pending if _bounded(item[0])]
        for item in pending:
            if not _bounded(item[0]):  # may scan a whole table: not on the event loop
                self.queue.put(item)
        if not batch:
            return
        try:
            done = self.db.submit_now([request for request, _ in batch], propagate=self.propagate)
        except RivuletError as exc:  # closed
            done = True
            _fail(batch, exc)
        if not done:  # a migration or another writer holds the commit lock: don't wait
            for item in batch:
                self.queue.put(item)
            return
        _resolve(batch)

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()

    def _run(self) -> None:
        stop = False
        while not stop:
            item = self.queue.get()
            if item is None:
                return
            batch = [item]
            while True:
                try:
                    item = self.queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                batch.append(item)
            self._commit(batch)
            try:
                self.loop.call_soon_threadsafe(_resolve, batch)
            except RuntimeError:  # the loop is closed: nobody waits any more
                return


    def _commit(self, batch: list[_Item]) -> None:
        try:
            self.db.submit_many([request for request, _ in batch])
        except BaseException as exc:  # closed, or the commit itself failed
            _fail(batch, exc)


def _fail(batch: list[_Item], exc: BaseException) -> None:
    for request, _ in batch:
        if not request.done.is_set():
            request.error = exc if isinstance(exc, RivuletError) else RivuletError(
                f"write failed: {exc!r}")
            request.done.set()


def _bounded(request: WriteRequest) -> bool:
    """Whether a write touches only rows it names (an INSERT, an UPDATE/DELETE by primary
    key, a transaction's COMMIT: its write set by row identity), so committing it cannot
    take long. A multi-table UPDATE or DELETE computes its join when it commits: not one."""
    if isinstance(request, JoinedWriteRequest):
        return False
    return request.kind in ("insert", "transaction") or request.keys is not None


def _resolve(batch: list[_Item]) -> None:
    for request, future in batch:
        if not future.done():
            future.set_result(request)
