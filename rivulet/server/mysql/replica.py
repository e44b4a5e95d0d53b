"""A replica process: the MySQL server's reads on another core.

CPython runs one process's Python on one core at a time (the GIL), and a server that
answers most reads from memory is bound by it. ``rivulet serve --replicas N`` starts N of
these processes (see :mod:`rivulet.server.mysql.primary`), each with two Unix sockets to the
primary: over one come client connections (the socket itself, passed before the MySQL
handshake), over the other go writes and DDL, and their outcomes come back.

A replica opens the data directory as a :class:`~rivulet.engine.follower.Follower` and serves a
connection as the primary would: reads from its own partial state, filled by upqueries
against SQLite; writes and DDL forwarded to the primary; a transaction run here, its
write set committed by the primary (:class:`ForwardingCommitter`). A forwarded write is
acknowledged once this replica's views hold it too, so a client reads its own writes here
as on the primary. When the program changes (DDL, an import), the follower is stale: a
new one is opened and swapped in, while reads go on from the old one.

    python -m rivulet.server.mysql.replica --data-dir DIR --connections-fd N --primary-fd M
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import pickle
import signal
import socket
import sys
import threading
from collections.abc import Hashable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from rivulet.engine.follower import Follower
from rivulet.engine.limits import Limits
from rivulet.engine.locks import Locks, Target
from rivulet.engine.transaction import Transaction
from rivulet.errors import (
    ER_LOCK_DEADLOCK,
    ER_LOCK_NOWAIT,
    ER_LOCK_WAIT_TIMEOUT,
    ClosedError,
    DeadlockError,
    LockNowaitError,
    LockWaitTimeoutError,
)
from rivulet.server import errors as er
from rivulet.server.allocator import limit_arenas
from rivulet.server.auth import UserStore, tls_context
from rivulet.server.mysql.server import MySQLServer, new_event_loop
from rivulet.server.mysql.session import global_variables
from rivulet.sql.lock_calls import BoundLockCall
from rivulet.storage.writes import TransactionWrite, WriteRequest

log = logging.getLogger("rivulet.server")

#: Seconds a replaced follower keeps serving the reads already started on it.
RETIRE_SECONDS = 5.0
#: Connections passed in one message on the connections socket, at most.
FDS_PER_MESSAGE = 16
#: The primary's message that it committed a batch (then the LSN): the reply to no request.
NOTICE = (0, None, 0, 0)
#: Seconds between a replica's polls of the log: the primary's notices bring each batch
#: at once; the poll finds DDL (which commits no batch) and is the fallback.
REPLICA_POLL_SECONDS = 0.05


# ..................................................................... the channel


def frame(message: Any) -> bytes:
    """A message on the socket between primary and replica (both are rivulet, trusted)."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return len(payload).to_bytes(4, "little") + payload


async def read_frame(reader: asyncio.StreamReader) -> Any:
    size = int.from_bytes(await reader.readexactly(4), "little")
    return pickle.loads(await reader.readexactly(size))


# ..................................................................... forwarding


class Forwarder:
    """The replica's stand-in for :class:`~rivulet.server.mysql.batcher.WriteBatcher`: a write
    request goes to the primary as its statement text and parameters; the future is done
    once the primary has answered and, for a success, this replica's views hold it."""

    def __init__(self, server: ReplicaServer, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.server = server
        self.reader, self.writer = reader, writer
        self.waiting: dict[int, tuple[WriteRequest | None, asyncio.Future[Any]]] = {}
        self._next = 0
        self.closed = False
        self.task = asyncio.get_running_loop().create_task(self._replies())

    def submit(self, request: WriteRequest) -> asyncio.Future[WriteRequest]:
        # (a write that read the clock: its ? values, then the instant it read here, which
        # the primary gives the statement it compiles again)
        params = request.params[:-1] if request.at is not None else request.params
        return self._send("write", request, request.sql, params, request.at)

    async def ddl(self, sql: str) -> None:
        await self._send("ddl", None, sql)

    def call(self, kind: str, *body: Any) -> asyncio.Future[tuple[int, int, int, Any]]:
        """Another request (a transaction's, see :class:`ForwardingCommitter`): its future's
        result is the reply's (rowcount, last_insert_id, lsn, payload), once this replica's
        views hold batch ``lsn``."""
        return self._send(kind, None, *body)

    def _send(self, kind: str, request: WriteRequest | None, *body: Any) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.closed:
            future.set_exception(ClosedError("the primary is gone: restart the server"))
            return future
        self._next += 1
        self.waiting[self._next] = (request, future)
        self.writer.write(frame((kind, self._next, *body)))
        return future

    async def _replies(self) -> None:
        try:
            while True:
                message = await read_frame(self.reader)
                try:
                    self._reply(*message)
                except Exception:  # following the log failed: the poll tries again
                    log.exception("replica: handling the primary's message %r failed",
                                  message[:2])
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.closed = True
            for request, future in self.waiting.values():
                if not future.done():
                    future.set_exception(ClosedError("the primary went away"))
            self.waiting.clear()
            self.server.primary_gone.set()

    def _reply(self, ident: int, failure: tuple | None, rowcount: int, last_insert_id: int,
               lsn: int, payload: Any = None) -> None:
        if ident == 0:  # a NOTICE: a batch was committed
            self.server.follow(lsn)
            return
        request, future = self.waiting.pop(ident)
        if failure is not None:
            error = er.Forwarded(er.Failure(*failure))
            if request is None:
                future.set_exception(error)
            else:
                request.error = error
                future.set_result(request)
            return
        result: Any = (rowcount, last_insert_id, lsn, payload)
        if request is not None:
            request.rowcount, request.last_insert_id, request.lsn = rowcount, last_insert_id, lsn
            request.matched = payload or 0  # (a write's: the rows an UPDATE matched)
            result = request
        try:
            self.server.when_visible(lsn, future, result)
        except Exception as exc:
            future.set_exception(exc)

    def close(self) -> None:
        """(any thread: the server closes its write path from a worker)"""
        loop = self.task.get_loop()
        if not loop.is_closed():
            loop.call_soon_threadsafe(self.writer.close)


class RemoteLocks:
    """A replica's transactions lock through the primary's lock manager: a request is
    forwarded, and its future done when the primary answers (it waits there, with the
    timeout given: a deadlock or timeout comes back as its error)."""

    def __init__(self, server: ReplicaServer) -> None:
        self.server = server

    def acquire(self, owner: Hashable, targets: Sequence[Target], timeout: float | None,
                *, nowait: bool = False) -> Future[None]:
        result: Future[None] = Future()
        self._forward(result, "lock", owner, list(targets), timeout, nowait)
        return result

    def release(self, owner: Hashable) -> None:
        self._forward(None, "release", owner)

    def _forward(self, result: Future[None] | None, kind: str, *body: Any) -> None:
        """(any thread) Send a request on the event loop; settle ``result`` by its answer."""
        loop, forwarder = self.server.loop, self.server.forwarder
        if loop is None or forwarder is None or loop.is_closed():
            if result is not None:
                result.set_exception(ClosedError("the replica is not attached to its primary"))
            return

        def send() -> None:
            try:
                answer = forwarder.call(kind, *body)
            except Exception as exc:  # (no loop: the replica is stopping)
                if result is not None:
                    result.set_exception(exc)
                return
            answer.add_done_callback(lambda done: _settle(result, done))

        loop.call_soon_threadsafe(send)


def _settle(result: Future[None] | None, answer: asyncio.Future[Any]) -> None:
    """A lock request's future from the primary's answer; its error as the class the
    transaction tells apart (1213 a deadlock, 1205 a timeout, 3572 NOWAIT)."""
    error = answer.exception() if not answer.cancelled() else ClosedError("cancelled")
    if result is None or result.done():
        return
    if error is None:
        result.set_result(None)
        return
    code = getattr(error, "code", None)
    kinds = {ER_LOCK_DEADLOCK: DeadlockError, ER_LOCK_WAIT_TIMEOUT: LockWaitTimeoutError,
             ER_LOCK_NOWAIT: LockNowaitError}
    result.set_exception(kinds[code](str(error)) if code in kinds else error)


class RemoteNamedLocks:
    """A replica's sessions lock in the primary's named-lock table: a SELECT of lock
    calls is forwarded (a GET_LOCK waits there), and a session's end releases its locks
    there. Session ids are connection ids, unique across the server's processes."""

    def __init__(self, server: ReplicaServer) -> None:
        self.server = server

    async def answer_async(self, session: int,
                           calls: list[BoundLockCall]) -> tuple[int | None, ...]:
        forwarder = self.server.forwarder
        if forwarder is None:
            raise ClosedError("the replica is not attached to its primary")
        _, _, _, row = await forwarder.call("named_lock", session, calls)
        return tuple(row)

    def end_session(self, session: int) -> None:
        """(on the event loop, as a session ends) Nothing waits for the answer."""
        forwarder = self.server.forwarder
        if forwarder is not None and not forwarder.closed:
            forwarder.call("named_release", session).add_done_callback(_ignore)


def _ignore(answer: asyncio.Future[Any]) -> None:
    if not answer.cancelled():
        answer.exception()  # (retrieved: a primary gone has released them all anyway)


class ForwardingCommitter:
    """A replica's transactions commit through the primary
    (:class:`~rivulet.engine.transaction.Committer`): the transaction runs here (its
    statements read the committed rows from SQLite, its write set is kept here, its reads
    are computed here), and what only the primary may do is asked of it over the channel:
    AUTO_INCREMENT numbers, and at COMMIT the write set, which the primary's group commit
    checks and stores as one batch as it does its own transactions'. Called from the
    server's worker threads (it waits for the primary's answer)."""

    def __init__(self, server: ReplicaServer) -> None:
        self.server = server
        self.locks: Locks = server.locks

    def new_owner(self) -> Hashable:
        return ("replica", self.server.index, next(self.server.owners))

    def numbers_at_once(self) -> bool:
        return False  # (the primary numbers them)

    def _call(self, kind: str, *body: Any) -> tuple[int, int, int, Any]:
        server = self.server
        loop, forwarder = server.loop, server.forwarder
        if loop is None or forwarder is None:
            raise ClosedError("the replica is not attached to its primary")

        async def call() -> tuple[int, int, int, Any]:
            return await forwarder.call(kind, *body)

        return asyncio.run_coroutine_threadsafe(call(), loop).result()

    def number(self, request: WriteRequest) -> None:
        table = request.table
        _, request.last_insert_id, _, request.rows = self._call(
            "number", table.name, table.version, request.rows)

    def commit(self, request: TransactionWrite) -> None:
        parts = [(part.schema.name, part.schema.version, part.rows)
                 for part in request.changes]
        request.rowcount, _, request.lsn, _ = self._call("commit", parts)


# ..................................................................... the server


class ReplicaServer(MySQLServer):
    """A :class:`MySQLServer` that listens on no port: the primary passes it connections.
    Its database is a :class:`Follower`, replaced when it goes stale."""

    db: Follower

    def __init__(self, follower: Follower, *, index: int, open_follower: Any,
                 **kwargs: Any) -> None:
        super().__init__(follower, process=index, **kwargs)
        self.index = index
        self.variables = global_variables(self.max_packet, role=f"replica {index}")
        #: Its transactions' locks, held by the primary, and their names there.
        self.locks = RemoteLocks(self)
        self.owners = itertools.count(1)
        self.named_locks = RemoteNamedLocks(self)
        self.open_follower = open_follower
        self.primary_gone = asyncio.Event()
        self._rebuilding: asyncio.Future[None] | None = None
        self.forwarder: Forwarder | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def transaction(self, read_only: bool) -> Transaction:
        """A connection's new transaction: run here, committed through the primary."""
        return self.db.transaction(read_only=read_only, committer=ForwardingCommitter(self))

    def commit(self, tx: Transaction) -> asyncio.Future[None] | None:
        """COMMIT: through the primary, from a thread of the pool (the call waits)."""
        return asyncio.get_running_loop().run_in_executor(self.pool, tx.commit)

    async def attach(self, channel: socket.socket) -> None:
        """Start serving: writes and DDL go to the primary over ``channel``."""
        self.loop = asyncio.get_running_loop()
        reader, writer = await asyncio.open_unix_connection(sock=channel)
        self.forwarder = self.writes = Forwarder(self, reader, writer)  # type: ignore[assignment]
        writer.write(frame(("ready", 0)))

    def adopt(self, fd: int) -> None:
        """Serve a client connection the primary accepted (a new socket of ours)."""
        sock = socket.socket(fileno=fd)
        sock.setblocking(False)
        task = asyncio.get_running_loop().create_task(self._serve(sock))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, sock: socket.socket) -> None:
        try:
            reader, writer = await asyncio.open_connection(sock=sock)
        except OSError:  # the client left before we got to it
            sock.close()
            return
        await self._client_connected_cb(reader, writer)

    def follow(self, lsn: int) -> None:
        """Follow the primary's log up to ``lsn``; small batches are applied right here,
        on the event loop, as the primary applies its own (see ``Database.submit_now``)."""
        self.db.follow(lsn, wake=False)
        self.db.apply_here()

    def when_visible(self, lsn: int, future: asyncio.Future[Any], result: Any) -> None:
        """Complete ``future`` once this replica's views hold batch ``lsn``."""
        self.follow(lsn)
        db = self.db
        if db.applied_lsn >= lsn or db.stale is not None:
            future.set_result(result)
            return

        def waited(wait: asyncio.Future[None]) -> None:
            if future.done():
                return
            failure = wait.exception()
            if failure is not None:
                future.set_exception(failure)
            else:
                future.set_result(result)

        loop = asyncio.get_running_loop()
        loop.run_in_executor(self.pool, db.wait_for, lsn).add_done_callback(waited)

    async def run_ddl(self, sql: str, foreign_key_checks: bool = True) -> None:
        """DDL runs on the primary; the answer waits for a follower of the new program."""
        assert self.forwarder is not None
        await self.forwarder.ddl(sql)
        await self.rebuild()

    async def catch_up(self) -> None:
        """A statement new to this replica may name what DDL on another connection just
        made: the follower checks the program first, and a stale one is replaced."""
        self.db.follow()
        if self.db.stale is not None:
            await self.rebuild()

    def on_stale(self, why: str) -> None:
        """Called by the follower (any thread) when it stops following."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(lambda: loop.create_task(self._rebuild_in_background()))

    async def _rebuild_in_background(self) -> None:
        try:
            await self.rebuild()
        except Exception:  # the old follower serves on; the next statement tries again
            log.exception("replica: opening a follower of the changed program failed")

    async def rebuild(self) -> None:
        """Serve from a follower of the program as it is now: if the one serving is
        stale, open another and swap it in (one opening at a time)."""
        loop = asyncio.get_running_loop()
        while True:
            if self._rebuilding is not None and not self._rebuilding.done():
                await asyncio.shield(self._rebuilding)
                continue
            self.db.follow()  # a change since the follower opened makes it stale now
            if self.db.stale is None:
                return
            self._rebuilding = loop.create_future()
            try:
                fresh = await loop.run_in_executor(None, self.open_follower)
                old, self.db = self.db, fresh
                self.cache.rebind(fresh)
                loop.call_later(RETIRE_SECONDS, lambda: threading.Thread(
                    target=old.close, name="rivulet-retire", daemon=True).start())
                log.info("replica: serving from a new follower at LSN %s", fresh.applied_lsn)
            finally:
                self._rebuilding.set_result(None)


def _receive_connections(channel: socket.socket, server: ReplicaServer,
                         loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """Thread: connections from the primary, handed to the event loop as they come."""
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(channel, FDS_PER_MESSAGE, FDS_PER_MESSAGE)
        except OSError:
            data, fds = b"", []
        for fd in fds:
            loop.call_soon_threadsafe(server.adopt, fd)
        if not data:  # the primary closed its end: stop
            loop.call_soon_threadsafe(stop.set)
            return


# ..................................................................... the process


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m rivulet.server.mysql.replica")
    p.add_argument("--data-dir", required=True)
    p.add_argument("--connections-fd", type=int, required=True)
    p.add_argument("--primary-fd", type=int, required=True)
    p.add_argument("--index", type=int, default=1, help="this replica's number, from 1")
    p.add_argument("--memory-limit", default=None)
    p.add_argument("--join-caches", default="lean")
    p.add_argument("--upquery-timeout", type=float, default=30.0)
    p.add_argument("--limits", default="", help="Limits fields as name=value,...")
    p.add_argument("--tls-cert", default=None)
    p.add_argument("--tls-key", default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    logging.basicConfig(level=logging.WARNING, format="rivulet replica: %(message)s")
    sys.setswitchinterval(0.0005)  # as the primary's server (see rivulet.cli)
    limit_arenas()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the primary tells us when to stop
    limits = Limits(**{k: int(v) for k, v in (f.split("=") for f in args.limits.split(",") if f)})
    path = Path(args.data_dir)
    tls = tls_context(args.tls_cert, args.tls_key) if args.tls_cert else None
    server: ReplicaServer | None = None

    def open_follower() -> Follower:
        return Follower(path, poll_seconds=REPLICA_POLL_SECONDS,
                        memory_limit=args.memory_limit, join_caches=args.join_caches,
                        upquery_timeout=args.upquery_timeout, limits=limits,
                        on_stale=lambda why: server.on_stale(why) if server else None)

    async def serve() -> None:
        nonlocal server
        loop = asyncio.get_running_loop()
        follower = await loop.run_in_executor(None, open_follower)
        server = ReplicaServer(follower, index=args.index, open_follower=open_follower,
                               users=UserStore(path), tls=tls)
        await server.attach(socket.socket(fileno=args.primary_fd))
        stop = asyncio.Event()
        connections = socket.socket(fileno=args.connections_fd)
        threading.Thread(target=_receive_connections, args=(connections, server, loop, stop),
                         name="rivulet-handoff", daemon=True).start()
        gone = loop.create_task(server.primary_gone.wait())
        await asyncio.wait([loop.create_task(stop.wait()), gone],
                           return_when=asyncio.FIRST_COMPLETED)
        await server.stop()
        server.db.close()

    with asyncio.Runner(loop_factory=lambda: new_event_loop(tls=tls is not None)) as runner:
        runner.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
