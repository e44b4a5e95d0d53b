"""What a connection, a session and the replica dealer need of the server they run in.

:class:`~rivulet.server.mysql.server.MySQLServer` (and the replica's subclass) implements
:class:`ServerContext`; the modules it is made of know it only through this protocol, so
imports run one way: ``server`` imports ``protocol``, ``session`` and ``primary``, never
the reverse.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from typing import Any, Protocol

from rivulet.engine.database import Database
from rivulet.engine.transaction import Transaction
from rivulet.plan.catalog import Catalog
from rivulet.server.auth import UserStore
from rivulet.server.mysql.batcher import WriteBatcher
from rivulet.server.mysql.statements import Handler, StatementCache
from rivulet.sql.lock_calls import BoundLockCall
from rivulet.storage.writes import WriteRequest


class SystemTables(Protocol):
    """Answers queries of ``information_schema`` (rivulet/server/mysql/infoschema.py)."""

    def answer(self, catalog: Catalog, sql: str, database: str) -> tuple[Handler, list]:
        """The handler (for the result's columns) and rows of such a query."""
        ...


class NamedLockTable(Protocol):
    """What a connection asks of the named-lock table
    (:class:`~rivulet.engine.named_locks.NamedLocks`, or a replica's stand-in for the
    primary's)."""

    async def answer_async(self, session: int,
                           calls: list[BoundLockCall]) -> tuple[int | None, ...]: ...

    def end_session(self, session: int) -> Any: ...


class ServerContext(Protocol):
    """The server as its connections see it."""

    db: Database
    users: UserStore
    max_packet: int
    cache: StatementCache
    information_schema: SystemTables
    pool: Executor
    writes: WriteBatcher
    #: GET_LOCK's table: the database's, or on a replica the primary's, reached over its
    #: channel (sessions of every process lock in one table).
    named_locks: NamedLockTable

    async def catch_up(self) -> None:
        """Before a statement is bound: bring the program up to date (a replica's may lag)."""
        ...

    async def run_ddl(self, sql: str, foreign_key_checks: bool = True) -> None:
        """Change the program (off the event loop), under the session's
        ``foreign_key_checks`` (a replica's DDL runs on the primary, with them on)."""
        ...

    async def submit_write(self, request: WriteRequest, timeout: float = ...) -> None:
        """An autocommit write, committed (after the locks it needs, if any are held)."""
        ...

    def transaction(self, read_only: bool) -> Transaction:
        """A new transaction of a connection (a replica's commits through the primary)."""
        ...

    def commit(self, tx: Transaction) -> asyncio.Future[None] | None:
        """COMMIT of a connection's transaction: a future done once it is committed (its
        exception: why it failed), or None if there was nothing to commit."""
        ...


class ConnectionDealer(Protocol):
    """Hands new connections to other processes (the primary's replicas)."""

    def hand_off(self, writer: asyncio.StreamWriter) -> bool:
        """True if a replica took the connection (the caller closes its copy)."""
        ...

    async def stop(self) -> None:
        """Stop the other processes."""
        ...
