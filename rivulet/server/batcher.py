"""Writes of every connection, committed together by one thread.

A connection's write would otherwise cost a thread-pool hand-off and a commit of its own.
Here the event loop queues the write request (compiled once per statement shape, built
in microseconds) and awaits a future; one committer thread takes everything queued, commits
it as one group (:meth:`Database.submit_many`: one SQLite transaction, each request
failing alone) and resolves the whole batch with one wake-up of the loop. Under load,
the writes that arrive while a group commits form the next group.
"""

from __future__ import annotations

import asyncio
import queue
import threading

from rivulet.database import Database
from rivulet.errors import RivuletError
from rivulet.writes import WriteRequest

_Item = tuple[WriteRequest, "asyncio.Future[WriteRequest]"]


class WriteBatcher:
    def __init__(self, db: Database, loop: asyncio.AbstractEventLoop) -> None:
        self.db = db
        self.loop = loop
        self.queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name="rivulet-mysql-writes", daemon=True)
        self.thread.start()

    def submit(self, request: WriteRequest) -> asyncio.Future[WriteRequest]:
        """A future resolved with ``request`` once it is committed (or has its error)."""
        future: asyncio.Future[WriteRequest] = self.loop.create_future()
        self.queue.put((request, future))
        return future

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
            try:
                self.db.submit_many([request for request, _ in batch])
            except BaseException as exc:  # closed, or the commit itself failed
                for request, _ in batch:
                    if not request.done.is_set():
                        request.error = exc if isinstance(exc, RivuletError) else RivuletError(
                            f"write failed: {exc!r}")
                        request.done.set()
            try:
                self.loop.call_soon_threadsafe(_resolve, batch)
            except RuntimeError:  # the loop is closed: nobody waits any more
                return


def _resolve(batch: list[_Item]) -> None:
    for request, future in batch:
        if not future.done():
            future.set_result(request)
