"""rivulet's MySQL server: existing applications connect with their MySQL driver.

Built on mysql-mimic (handshake, authentication, driver chatter), with rivulet's own
command loop (protocol.py), statement cache (statements.py) and user store (auth.py).
One asyncio event loop serves every connection; blocking work goes to a thread pool.

    server = MySQLServer(db, port=3307)
    await server.start()          # or: running = serve_in_thread(db, port=0)
    ...
    await server.stop()
"""

from __future__ import annotations

import asyncio
import cProfile
import functools
import logging
import os
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mysql_mimic import MysqlServer
from mysql_mimic.constants import DEFAULT_SERVER_CAPABILITIES
from mysql_mimic.control import LocalControl, TooManyConnections
from mysql_mimic.stream import MysqlStream
from mysql_mimic.types import Capabilities

from rivulet.engine.database import Database
from rivulet.engine.locks import DEFAULT_TIMEOUT, autocommit_owner, autocommit_targets
from rivulet.engine.transaction import Transaction
from rivulet.server.auth import UserStore
from rivulet.server.mysql.batcher import WriteBatcher
from rivulet.server.mysql.context import ConnectionDealer, NamedLockTable
from rivulet.server.mysql.handshake import GuardedStream
from rivulet.server.mysql.infoschema import InformationSchema
from rivulet.server.mysql.protocol import RivuletConnection
from rivulet.server.mysql.session import RivuletSession, global_variables
from rivulet.server.mysql.statements import StatementCache
from rivulet.storage.writes import WriteRequest

log = logging.getLogger("rivulet.server")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3307  # not MySQL's 3306, so both can run side by side
DEFAULT_MAX_PACKET = 64 * 1024 * 1024  # MySQL 8's default max_allowed_packet

#: Set to a file path, the server profiles its event loop (cProfile: the hot path of every
#: read and write runs there) from start to stop and dumps the statistics to that file.
PROFILE_ENV = "RIVULET_SERVER_PROFILE"

#: mimic's capabilities without query attributes (rivulet takes no per-query attributes,
#: and without them a COM_QUERY is just its text), with CLIENT_FOUND_ROWS, as MySQL's: a
#: client may ask for an UPDATE's matched rows as its count (Django's backend does, and
#: takes an UPDATE by primary key that counts 0 for a missing row, then INSERTs it).
CAPABILITIES = ((DEFAULT_SERVER_CAPABILITIES & ~Capabilities.CLIENT_QUERY_ATTRIBUTES)
                | Capabilities.CLIENT_FOUND_ROWS)


class MySQLServer(MysqlServer):
    """The MySQL protocol in front of an open :class:`~rivulet.engine.database.Database`."""

    def __init__(self, db: Database, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 users: UserStore | None = None, max_packet: int = DEFAULT_MAX_PACKET,
                 workers: int = 32, tls: ssl.SSLContext | None = None,
                 process: int = 0) -> None:
        # Connection ids are the process's number (the primary 0, replica N N) plus one,
        # then a sequence: CONNECTION_ID() is unique across the server's processes.
        super().__init__(capabilities=CAPABILITIES, ssl=tls,
                         control=LocalControl(server_id=process + 1))
        self.db = db
        self.host = host
        self.requested_port = port
        self.users = users if users is not None else UserStore(db.path)
        self.max_packet = max_packet
        self.cache = StatementCache(db)
        self.information_schema = InformationSchema()
        self.variables = global_variables(max_packet)
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="rivulet-mysql")
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._profile: cProfile.Profile | None = None
        self.named_locks: NamedLockTable = db.named_locks
        #: Replica processes this server deals connections to (``rivulet serve --replicas``).
        self.replicas: ConnectionDealer | None = None

    @property
    def port(self) -> int:
        """The port listened on (the one chosen by the OS when started with port 0)."""
        sockets = self.sockets()
        return sockets[0].getsockname()[1] if sockets else self.requested_port

    async def start(self) -> None:
        self.writes = WriteBatcher(self.db, asyncio.get_running_loop())
        await self.start_server(host=self.host, port=self.requested_port)
        if os.environ.get(PROFILE_ENV):
            self._profile = cProfile.Profile()
            self._profile.enable()

    async def stop(self) -> None:
        """Stop listening and close every connection (statements in flight finish in the
        pool; the caller closes the database after)."""
        self.close()
        if self.replicas is not None:
            await self.replicas.stop()
        for writer in list(self._writers):
            writer.close()
        if self._tasks:  # each ends once its connection is closed
            await asyncio.wait(list(self._tasks), timeout=10)
        await self.wait_closed()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.pool.shutdown, True)
        await loop.run_in_executor(None, self.writes.close)
        await loop.run_in_executor(None, self.information_schema.close)
        if self._profile is not None:
            self._profile.disable()
            self._profile.dump_stats(os.environ[PROFILE_ENV])
            self._profile = None

    async def catch_up(self) -> None:
        """Before a statement is bound: nothing to do here (a replica's program may lag)."""

    async def submit_write(self, request: WriteRequest,
                           timeout: float = DEFAULT_TIMEOUT) -> None:
        """An autocommit write, to the group commit; while a transaction holds locks on
        its table, after the locks of the rows it writes (held until it is committed)."""
        locks = self.db.locks
        if not (locks.active and any(locks.table_busy(t.name) for t in request.written)):
            await self.writes.submit(request)
            return
        owner = autocommit_owner()
        try:
            await asyncio.wrap_future(locks.acquire(owner, autocommit_targets(request),
                                                    timeout))
            await self.writes.submit(request)
        finally:
            locks.release(owner)

    def transaction(self, read_only: bool) -> Transaction:
        """A connection's new transaction (docs/transactions.md)."""
        return self.db.transaction(read_only=read_only)

    def commit(self, tx: Transaction) -> asyncio.Future[None] | None:
        """COMMIT of a connection's transaction: its write set joins the other
        connections' writes in the write batcher, committed on the event loop (no hop to
        a thread and back). A future done once it is committed (its exception: why it
        failed), or None if the transaction wrote nothing. Its locks go once it is done,
        even if nobody waits for the future any more (a connection gone)."""
        request = tx.commit_request()
        if request is None:
            return None
        committed = self.writes.submit(request)
        done: asyncio.Future[None] = committed.get_loop().create_future()

        def finish(_: Any) -> None:
            tx.finish_commit(request)
            if done.done():  # (cancelled)
                return
            if request.error is not None:
                done.set_exception(request.error)
            else:
                done.set_result(None)

        committed.add_done_callback(finish)
        return done

    async def run_ddl(self, sql: str, foreign_key_checks: bool = True) -> None:
        """Change the program (off the event loop); handlers bound before are dropped.
        With replicas, what the change leaves to migrate lazily is done first: a replica
        opens only on a program fully migrated."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self.pool, functools.partial(
            self.db.execute, sql, foreign_key_checks=foreign_key_checks))
        self.cache.clear()
        if self.replicas is not None:
            await loop.run_in_executor(self.pool, self.db.finish_conversions)

    async def _client_connected_cb(self, reader: asyncio.StreamReader,
                                   writer: asyncio.StreamWriter) -> None:
        if self.replicas is not None and self.replicas.hand_off(writer):
            writer.close()  # our copy of the socket: the replica has its own
            return
        stream = GuardedStream(MysqlStream(reader, writer), self.capabilities)
        peer = writer.get_extra_info("peername")
        self._writers.add(writer)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        connection = RivuletConnection(
            self,
            stream=stream,
            session=RivuletSession(self, self.variables),
            control=self.control,
            identity_provider=self.users.identity(peer[0] if peer else None),
            server_capabilities=self.capabilities,
            ssl=self.ssl,  # TLS offered (CLIENT_SSL) when a certificate is configured
        )
        try:
            try:
                connection.connection_id = await self.control.add(connection)
            except TooManyConnections:
                await stream.write(connection.error(msg="Too many connections", code=1040))
                return
            try:
                await connection.start()
            finally:
                await self.control.remove(connection.connection_id)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away
        except Exception:  # a handshake that failed: mimic has sent the client an error
            log.debug("connection ended with an error", exc_info=True)
        finally:
            self._writers.discard(writer)
            writer.close()


def new_event_loop(tls: bool = False) -> asyncio.AbstractEventLoop:
    """The event loop to serve on: uvloop's when it is installed (libuv's loop, in C, takes
    a fraction of the selector loop's time per socket event, and every request is one),
    else asyncio's own. With TLS, asyncio's: uvloop's ``start_tls`` aborts the upgrade of
    mysql-mimic's stream at once ("SSL handshake is taking longer than 60.0 seconds")."""
    if tls:
        return asyncio.new_event_loop()
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency on POSIX systems
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class ServerThread:
    """A :class:`MySQLServer` running on its own event loop in a background thread (for
    tests, benchmarks and embedding next to other work)."""

    def __init__(self, db: Database, **kwargs: Any) -> None:
        self.server = MySQLServer(db, **kwargs)
        self.loop = new_event_loop(tls=self.server.ssl is not None)
        started = threading.Event()
        self._error: BaseException | None = None

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            try:
                self.loop.run_until_complete(self.server.start())
            except BaseException as exc:
                self._error = exc
                started.set()
                return
            started.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, name="rivulet-mysql-loop", daemon=True)
        self.thread.start()
        started.wait()
        if self._error is not None:
            raise self._error
        self.port = self.server.port

    def stop(self) -> None:
        future = asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop)
        future.result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


def serve_in_thread(db: Database, **kwargs: Any) -> ServerThread:
    """Start a MySQL server for ``db`` in a background thread; ``.port``, ``.stop()``."""
    return ServerThread(db, **kwargs)
