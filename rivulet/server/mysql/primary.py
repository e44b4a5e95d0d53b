"""The primary's side of replicas: their processes, the hand-off of connections, and the
writes and DDL they forward (the replica's side, and why: :mod:`rivulet.server.mysql.replica`).

The primary accepts every connection on the MySQL port and deals them out in turn to
itself and its ready replicas, passing the socket (``SCM_RIGHTS``) before the handshake,
so a client never knows which process serves it. A replica's writes arrive as statement
text and parameters and join the primary's own group commits; a transaction of a replica
runs there and sends its write set at COMMIT, committed here as the primary's own
transactions are; its DDL runs as the primary's does. A replica that exits gets no more
connections (those it served are closed with it); the primary goes on.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import itertools
import logging
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rivulet.engine.limits import Limits
from rivulet.engine.locks import Target
from rivulet.engine.transaction import LocalCommitter
from rivulet.errors import ProgramError
from rivulet.server import errors as er
from rivulet.server.mysql.replica import NOTICE, frame, read_frame
from rivulet.storage.writes import TableChanges, TransactionWrite, WriteRequest
from rivulet.values.schema import TableSchema

if TYPE_CHECKING:
    from rivulet.server.mysql.context import ServerContext

log = logging.getLogger("rivulet.server")

#: Seconds a replica may take to open the database (it builds the program's full state).
READY_SECONDS = 1800.0
#: Seconds a replica may take to stop once told to.
STOP_SECONDS = 30.0


@dataclass(eq=False)
class Replica:
    """One replica process and the primary's ends of its two sockets."""

    index: int  # from 1, as in "replica 1"
    process: subprocess.Popen[bytes]
    connections: socket.socket  # SOCK_SEQPACKET: one client socket per message
    channel: socket.socket  # writes and DDL in, outcomes out
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)  # its channel closed
    writer: asyncio.StreamWriter | None = None
    task: asyncio.Task[None] | None = None

    @property
    def serving(self) -> bool:
        return self.ready.is_set() and self.process.poll() is None


class Replicas:
    """``count`` replica processes of ``server``'s database, started with ``options``
    (the replica's command line options: memory limit, join caches, limits)."""

    def __init__(self, server: ServerContext, count: int, options: list[str]) -> None:
        self.server = server
        self.count = count
        self.options = options
        self.replicas: list[Replica] = []
        self._turn = itertools.count()

    async def start(self, timeout: float = READY_SECONDS) -> None:
        """Start the processes and wait until each has opened the database."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self.server.db.commit_listeners.append(self._committed)
        for index in range(1, self.count + 1):
            self.replicas.append(self._spawn(index))
        for replica in self.replicas:
            replica.task = asyncio.get_running_loop().create_task(self._serve(replica))
        opened = [asyncio.create_task(_first(r.ready, r.ended)) for r in self.replicas]
        _, pending = await asyncio.wait(opened, timeout=timeout)
        for wait in pending:
            wait.cancel()
        failed = [r.index for r in self.replicas if not r.serving]
        if failed:
            await self.stop()
            raise RuntimeError(f"replica(s) {failed} did not open the database within "
                               f"{timeout:.0f} s (see their errors above)")

    def _spawn(self, index: int) -> Replica:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        channel, their_channel = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        command = [sys.executable, "-m", "rivulet.server.mysql.replica",
                   "--data-dir", str(self.server.db.path),
                   "--connections-fd", str(theirs.fileno()),
                   "--primary-fd", str(their_channel.fileno()), "--index", str(index),
                   *self.options]
        process = subprocess.Popen(command, pass_fds=(theirs.fileno(), their_channel.fileno()),
                                   stdin=subprocess.DEVNULL)
        theirs.close()
        their_channel.close()
        return Replica(index, process, ours, channel)

    # ..................................................................... connections

    def hand_off(self, writer: asyncio.StreamWriter) -> bool:
        """Pass a new connection to the replica whose turn it is; False when it is the
        primary's turn (or no replica is serving): the caller serves it."""
        serving = [r for r in self.replicas if r.serving]
        turn = next(self._turn) % (len(serving) + 1)
        if turn == len(serving):
            return False
        sock = writer.get_extra_info("socket")
        try:
            socket.send_fds(serving[turn].connections, [b"c"], [sock.fileno()])
        except OSError:  # the replica is gone: serve the connection here
            log.warning("replica %d does not take connections", serving[turn].index)
            return False
        return True

    # ..................................................................... commits

    def _committed(self, lsn: int) -> None:
        """(the committing thread) Tell the replicas at once: they follow the log when
        told, where polling it would cost them a wake-up every few milliseconds."""
        if threading.get_ident() == self._loop_thread:
            self._announce(lsn)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._announce, lsn)

    def _announce(self, lsn: int) -> None:
        message = frame(NOTICE + (lsn,))
        for replica in self.replicas:
            if replica.writer is not None and replica.serving:
                replica.writer.write(message)

    # ..................................................................... forwarded work

    async def _serve(self, replica: Replica) -> None:
        """Requests from one replica, each answered when done (in any order)."""
        reader, writer = await asyncio.open_unix_connection(sock=replica.channel)
        replica.writer = writer
        pending: set[asyncio.Task[None]] = set()
        try:
            while True:
                kind, ident, *body = await read_frame(reader)
                if kind == "ready":
                    replica.ready.set()
                    continue
                task = asyncio.get_running_loop().create_task(
                    self._answer(writer, kind, ident, body))
                pending.add(task)
                task.add_done_callback(pending.discard)
        except (asyncio.IncompleteReadError, ConnectionError):
            code = await asyncio.get_running_loop().run_in_executor(None, _exit_status,
                                                                    replica.process)
            if code not in (None, 0):
                log.error("replica %d exited with status %s", replica.index, code)
        finally:
            replica.ended.set()
            index = replica.index  # its transactions are gone: so are their locks
            self.server.db.locks.release_all(
                lambda owner: owner[:2] == ("replica", index))
            # (its connections' ids carry its process number + 1: see MySQLServer)
            self.server.db.named_locks.release_sessions(
                lambda session: session >> 16 == index + 1)

    async def _answer(self, writer: asyncio.StreamWriter, kind: str, ident: int,
                      body: list[Any]) -> None:
        try:
            if kind == "write":
                outcome = await self._write(*body)
            elif kind == "ddl":
                await self.server.run_ddl(*body)
                outcome = (None, 0, 0, self.server.db.lsn)
            elif kind == "lock":
                outcome = await self._lock(*body)
            elif kind == "release":
                self.server.db.locks.release(body[0])
                outcome = (None, 0, 0, 0)
            elif kind == "named_lock":
                session, calls = body
                row = await self.server.db.named_locks.answer_async(session, calls)
                outcome = (None, 0, 0, 0, row)
            elif kind == "named_release":
                self.server.db.named_locks.end_session(body[0])
                outcome = (None, 0, 0, 0)
            elif kind == "number":
                outcome = await self._number(*body)
            elif kind == "commit":
                outcome = await self._commit(*body)
            else:
                raise er.MysqlError(f"unknown request {kind!r} from a replica", er.ER_UNKNOWN)
        except Exception as exc:  # the replica's client gets the error
            outcome = (tuple(er.failure(exc)), 0, 0, 0)
        if not writer.is_closing():
            writer.write(frame((ident, *outcome)))

    async def _write(self, sql: str, params: tuple, at: dt.datetime | None = None
                     ) -> tuple[Any, ...]:
        """A replica's write: its text, ``?`` values and, if it read the clock, the instant
        it read it at (the value it stores is that instant's, as on one server)."""
        db = self.server.db
        request = db.write_request(sql, params, compiled_only=True, at=at)
        if request is None:  # a statement new to the primary: compiled off the loop
            request = await asyncio.get_running_loop().run_in_executor(
                self.server.pool, functools.partial(db.write_request, sql, params, at=at))
            assert request is not None  # compiled now: there is one
        await self.server.submit_write(request)
        if request.error is not None:
            return tuple(er.failure(request.error)), 0, 0, 0
        return None, request.rowcount, request.last_insert_id, request.lsn, request.matched

    async def _lock(self, owner: Any, targets: list[Target], timeout: float | None,
                    nowait: bool) -> tuple[Any, ...]:
        """Locks for a replica's transaction (``owner``: the replica's name for it, which
        starts with ``("replica", n)``), answered once held, or with why not (1205, 1213,
        3572)."""
        future = self.server.db.locks.acquire(owner, targets, timeout, nowait=nowait)
        await asyncio.wrap_future(future)
        return None, 0, 0, 0

    async def _number(self, table: str, version: int, rows: list) -> tuple[Any, ...]:
        """AUTO_INCREMENT numbers for the rows of an insert in a replica's transaction."""
        db = self.server.db
        request = WriteRequest(_same_version(db, table, version), "insert", rows=rows)
        await asyncio.get_running_loop().run_in_executor(
            self.server.pool, LocalCommitter(db.core, db.submit_many).number, request)
        return None, 0, request.last_insert_id, 0, request.rows

    async def _commit(self, parts: list[tuple[str, int, dict]]) -> tuple[Any, ...]:
        """A replica's transaction's COMMIT: its write set (by table: name, the version it
        was written against, the changes by row identity), committed as the primary's own
        transactions are (checked, then stored as one batch, or not at all)."""
        db = self.server.db
        changes = [TableChanges(_same_version(db, name, version), rows)
                   for name, version, rows in parts]
        request = TransactionWrite(changes[0].schema, "transaction", changes=changes)
        await self.server.writes.submit(request)
        if request.error is not None:
            return tuple(er.failure(request.error)), 0, 0, 0
        return None, request.rowcount, 0, request.lsn

    # ..................................................................... stop

    async def stop(self) -> None:
        """Tell every replica to stop (its connections close) and wait for it."""
        if self._committed in self.server.db.commit_listeners:
            self.server.db.commit_listeners.remove(self._committed)
        for replica in self.replicas:
            replica.connections.close()  # the replica's signal to stop
        loop = asyncio.get_running_loop()
        for replica in self.replicas:
            try:
                await loop.run_in_executor(None, replica.process.wait, STOP_SECONDS)
            except subprocess.TimeoutExpired:
                log.warning("replica %d did not stop in %.0f s: killed", replica.index,
                            STOP_SECONDS)
                replica.process.kill()
            if replica.writer is not None:
                replica.writer.close()
            if replica.task is not None:
                await asyncio.gather(replica.task, return_exceptions=True)


async def _first(*events: asyncio.Event) -> None:
    """Until one of ``events`` is set."""
    waits = [asyncio.create_task(e.wait()) for e in events]
    _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for wait in pending:
        wait.cancel()


def _exit_status(process: subprocess.Popen[bytes], timeout: float = 5.0) -> int | None:
    """A process's exit status once it has ended (its channel closing comes first)."""
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        return None


def _same_version(db: Any, table: str, version: int) -> TableSchema:
    """The table a replica's transaction wrote to, as long as it is the version it wrote
    against (else the transaction fails, as the primary's own do)."""
    schema = db.catalog.tables.get(table.lower())
    if schema is None:
        raise ProgramError(f"table {table!r} was dropped while the transaction wrote to it; "
                           "the transaction was rolled back")
    if schema.version != version:
        raise ProgramError(f"table {table!r} was altered while the transaction wrote to it; "
                           "the transaction was rolled back")
    return schema


def replica_options(args: Any) -> list[str]:
    """The replica's options from ``rivulet serve``'s."""
    options = ["--join-caches", args.join_caches, "--upquery-timeout", str(args.upquery_timeout)]
    if args.memory_limit is not None:
        options += ["--memory-limit", str(args.memory_limit)]
    if args.tls_cert is not None:  # a replica's clients are offered TLS as the primary's
        options += ["--tls-cert", str(args.tls_cert), "--tls-key", str(args.tls_key)]
    limits = ",".join(f"{name}={getattr(args, name)}" for name in Limits.names())
    return options + ["--limits", limits]

