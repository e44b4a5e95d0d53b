"""The command phase of a MySQL connection, rivulet's way.

mysql-mimic does the handshake and authentication; :class:`RivuletConnection` replaces its
command loop, because the hot path must be short: a query is split into template and
values (no parsing), its handler found in the shared cache, the view read (a dict lookup
on a hit), and the whole reply (column definitions framed once per handler, rows, OK)
written to the socket buffer and flushed once. Prepared statements are parsed at PREPARE
and their parameters decoded as values at EXECUTE (never spliced into SQL).

Reads of keys in memory are answered synchronously as their packet arrives (wire.py).
Work that may block runs off the event loop: writes go to the committer thread (all
connections' writes committed together, batcher.py); reads that miss (an upquery), view
creation, DDL and read-your-writes waits run in the server's thread pool. A failing
statement gets an error packet; the connection always stays usable.

Why this is one module of about 700 lines: :class:`RivuletConnection` is one state
machine. Its fast path, slow path, result-set framing and prepared statements all read and
write the same per-connection state (the stream's buffer and sequence id, the sequence id a
reply starts at, the character set with its cached texts and framing, the prepared
statements and their cursors), and the order of those writes is the protocol. Split over
modules, that state would be passed around or shared behind an interface, and the hot path
would pay for the indirection. What needs none of it lives apart already: the packet loop
(wire.py), parameter decoding (params.py), statement handlers (statements.py), sessions
(session.py), the handshake (handshake.py), the write batcher (batcher.py).
"""

from __future__ import annotations

import asyncio
import logging
import operator
import re
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mysql_mimic import packets
from mysql_mimic.connection import Connection
from mysql_mimic.results import ResultColumn, ensure_result_set
from mysql_mimic.stream import ConnectionClosed
from mysql_mimic.types import Capabilities, ColumnDefinition, ServerStatus
from mysql_mimic.utils import aiterate
from sqlglot import exp

from rivulet.engine.explain import explain
from rivulet.engine.transaction import LockWait, Transaction
from rivulet.engine.views import NOT_READY, View
from rivulet.errors import (
    DeadlockError,
    NoSuchSavepointError,
    ParameterError,
    ProgramError,
    RivuletError,
    SqlError,
    UnsupportedSqlError,
)
from rivulet.server import errors as er
from rivulet.server.mysql import normalize
from rivulet.server.mysql.context import ServerContext
from rivulet.server.mysql.handshake import GuardedStream, check_field_list
from rivulet.server.mysql.infoschema import reads_information_schema, show_where
from rivulet.server.mysql.params import Reader, read_params
from rivulet.server.mysql.reply_cache import ENTRY_BYTES, ReplyBudget
from rivulet.server.mysql.session import (
    ColumnExtras,
    RivuletSession,
    column_extras,
    describe,
    int_columns,
    isolation_value,
    result_columns,
    show,
    shown_schema,
    text_columns,
)
from rivulet.server.mysql.statements import (
    CHATTER,
    CLOCK,
    DDL,
    EXPLAIN,
    NAMED_LOCK,
    READ,
    SET,
    SHOW,
    TRANSACTION,
    WRITE,
    Handler,
    Known,
    Shape,
    Texts,
    is_session_select,
)
from rivulet.server.mysql.wire import MAX_PAYLOAD, PacketTooLarge, Wire
from rivulet.sql.control import Control, LockingRead, control_statement, locking_read
from rivulet.sql.limit_params import bind_limit, has_limit_params
from rivulet.sql.lock_calls import bind as bind_lock_calls
from rivulet.sql.lock_calls import lock_calls
from rivulet.sql.parse import parse_one
from rivulet.sql.schemas import SYSTEM_SCHEMAS
from rivulet.state.sizing import rows_bytes
from rivulet.storage.writes import WriteRequest

if TYPE_CHECKING:
    from rivulet.engine.database import Database
    from rivulet.server.mysql.statements import StatementCache

log = logging.getLogger("rivulet.server")

COM_QUIT, COM_INIT_DB, COM_QUERY, COM_FIELD_LIST, COM_PING = 0x01, 0x02, 0x03, 0x04, 0x0E
COM_CHANGE_USER, COM_STMT_PREPARE, COM_STMT_EXECUTE = 0x11, 0x16, 0x17
COM_STMT_SEND_LONG_DATA, COM_STMT_CLOSE, COM_STMT_RESET = 0x18, 0x19, 0x1A
COM_STMT_FETCH, COM_RESET_CONNECTION = 0x1C, 0x1F
_SERVER_STATUS_IN_TRANS, _SERVER_STATUS_AUTOCOMMIT = 0x0001, 0x0002
_SERVER_STATUS_IN_TRANS_READONLY = 0x2000
_TRANSACTION_STATUS = (_SERVER_STATUS_IN_TRANS | _SERVER_STATUS_AUTOCOMMIT
                       | _SERVER_STATUS_IN_TRANS_READONLY)
_CURSOR_EXISTS, _LAST_ROW_SENT = 0x0040, 0x0080
MAX_PREPARED = 16_382
_EXPLAIN_PREFIX = re.compile(r"\s*EXPLAIN\s+", re.I)


@dataclass(eq=False)
class Prepared:
    """A prepared statement: parsed at PREPARE, bound to its handler."""

    split: normalize.Split
    sql: str
    shape: Shape
    handler: Handler | None
    types: list[tuple[int, bool]] | None = None
    long_data: dict[int, bytearray] | None = None
    cursor: list[tuple] | None = None
    columns: Any = None
    #: A locking read's clause (``FOR UPDATE``, ``FOR SHARE``), taken off ``sql``.
    lock: LockingRead | None = None
    #: Whether its top-level LIMIT or OFFSET is a ``?``: each EXECUTE then reads the view
    #: of the statement with those values written in (rivulet/sql/limit_params.py); its
    #: ``handler`` (written with 1s) only describes the result's columns.
    limited: bool = False


#: The session ``time_zone`` values under which MySQL's time functions give UTC (SYSTEM:
#: rivulet's system time zone is UTC).
_UTC_ZONES = frozenset({"SYSTEM", "UTC", "+00:00", "+0:00", "-00:00", "GMT"})


@dataclass(eq=False)
class Reply:
    """A result set to send: rows and their column descriptions."""

    rows: Sequence[Sequence[Any]]
    columns: Sequence[ResultColumn]
    extras: Sequence[ColumnExtras] = field(default_factory=tuple)


class RivuletConnection(Connection):
    """One client connection (see the module docstring)."""

    session: RivuletSession
    #: mimic's stream, in a :class:`GuardedStream` until the handshake is checked
    #: (mimic ships no types).
    stream: Any
    #: The server status flags of OK and EOF packets (mimic's; see _status_changed).
    status_flags: ServerStatus

    def __init__(self, server: ServerContext, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.server = server
        self.pool = server.pool
        self.status_flags |= _SERVER_STATUS_AUTOCOMMIT
        self.statements: dict[int, Prepared] = {}
        self._next_stmt = 0
        self._codec = "utf-8"
        self._ok_bytes = self._end_bytes = b""
        self._seq = 1  # sequence id of the current reply's first packet
        self._header_key: Any = None
        self._framing: Any = None  # (header key, end packet), canonical (see _read_text)
        self._texts = Texts(1)  # (the cache's, for the client's character set, once known)
        #: The client asked for CLIENT_FOUND_ROWS: an UPDATE's OK counts the rows it matched.
        self._found_rows = False
        self.read_only = True  # until authentication says who the user is
        #: Write OKs by (rows, LAST_INSERT_ID), for the status flags now (_write_ok); the
        #: replies that carry the status flags, by status (_status_changed).
        self._oks: dict[tuple[int, int], bytes] = {}
        self._by_status: dict[int, tuple[bytes, bytes, Any, dict[tuple[int, int], bytes]]] = {}

    async def authenticate(self, username: str, *args: Any, **kwargs: Any) -> None:
        """mimic's authentication, after the handshake's database is found to be one
        rivulet has (else MySQL's 1049, and no command phase: the user stays unknown)."""
        database = self.session.database
        if database and database.lower() not in SYSTEM_SCHEMAS \
                and not self.db.catalog.has_schema(database):
            await self.stream.write(self.error(msg=f"Unknown database '{database}'",
                                               code=er.ER_BAD_DB))
            return
        await super().authenticate(username, *args, **kwargs)

    @property
    def db(self) -> Database:
        """The server's database (a replica swaps in a new follower after DDL)."""
        return self.server.db

    @property
    def cache(self) -> StatementCache:
        return self.server.cache

    # ..................................................................... loop

    async def command_phase(self) -> None:
        """Hand the socket to a :class:`Wire` protocol (no more stream reads) and wait
        until the client goes away."""
        if self.session.username is None:
            return  # authentication failed (mimic has sent the error): no commands
        self.read_only = self.server.users.is_read_only(self.session.username)
        if isinstance(self.stream, GuardedStream):  # checked the handshake: done with it
            self.stream = self.stream.inner
        self._codec = self.client_charset.codec
        self._found_rows = Capabilities.CLIENT_FOUND_ROWS in self.capabilities
        self._ok_bytes = self.ok()
        self._end_bytes = self.ok_or_eof()
        self._header_key = (self.capabilities, self.server_charset)
        self._framing = self.cache.framing((self._header_key, self._end_bytes))
        self._texts = self.cache.texts_for(self._codec)
        await self.stream.drain()
        reader, transport = self.stream.reader, self.stream.writer.transport
        wire = Wire(self, transport, self.server.max_packet)
        leftover = bytes(reader._buffer)
        reader._buffer.clear()
        transport.set_protocol(wire)
        if not transport.is_reading():  # paused by the StreamReader's flow control
            transport.resume_reading()
        if leftover:
            wire.data_received(leftover)
        await wire.closed

    def fast(self, data: bytes, seq: int) -> bool | asyncio.Future[bool]:
        """Answer a read whose handler is cached and whose keys are in memory, at once:
        no task, no future, no thread. A write whose handler is cached is queued for the
        next group commit, and a future is returned that is done once it is answered.
        False: the packet needs :meth:`slow`."""
        mark = len(self.stream._buffer)
        try:
            return self._fast(data, seq)
        except Exception:  # the slow path runs it again and reports the error
            del self.stream._buffer[mark:]
            return False

    def _fast(self, data: bytes, seq: int) -> bool | asyncio.Future[bool]:
        session = self.session
        if len(data) <= _CONTROL_SIZE:
            verb = _CONTROLS.get(data)
            if verb is not None:
                return self._control_now(verb, seq)
        if session.elsewhere is not None:
            return False  # names qualified by the current database first: the slow path
        if not session.direct and session.tx is not None:
            done = self._in_transaction_now(session.tx, data, seq)
            if done is not None:
                return done
            if session.tx.written:
                return False  # reads see the transaction's own writes: the slow path
        command = data[0]
        if command == COM_QUERY:
            known = self._texts.get(data)  # this very text answered before: no decoding
            if known is None or not self.cache.current(known.handler):
                sql = data[1:].decode(self._codec)
                split = normalize.split(sql)
                if split.params:
                    return False
                handler = self.cache.lookup(split, sql)
                if handler is None:
                    return False
                if handler.kind != READ:
                    if (handler.kind != WRITE or self.read_only or not session.direct
                            or self.db.locks.active  # (locks: see _write)
                            or not self._clock_allowed(handler)):
                        return False
                    return self._write_soon(handler, handler.args(split.values), seq)
                known = Known(handler, handler.args(split.values))
                self._texts.remember(data, known)
            return self._read_text(known, seq)
        if command == COM_STMT_EXECUTE:
            stmt = self.statements.get(int.from_bytes(data[1:5], "little"))
            if (stmt is None or data[5] & 0x01 or stmt.long_data is not None or stmt.lock
                    or stmt.limited):
                return False  # unknown, a cursor, long data, a locking read or LIMIT ?
            handler = stmt.handler
            if handler is None or handler.kind != READ or not self.cache.current(handler):
                return False
            return self._read_now(handler, handler.args(self._slot_values(stmt, Reader(data, 10))),
                                  seq, True)
        return False

    def _control_now(self, verb: str, seq: int) -> bool | asyncio.Future[bool]:
        """BEGIN, COMMIT or ROLLBACK as a driver sends them, without a task: a COMMIT's
        write set joins the write batcher, and its OK is sent once it is committed."""
        session = self.session
        if verb == "begin":
            if session.tx is not None:
                return False  # (it commits the open transaction first: the slow path)
            session.begin()
            self._status_changed()
            self._reply_packet(seq, self._ok_bytes)
            return True
        tx = session.end()
        self._status_changed()
        committed = None
        if tx is not None:
            if verb == "rollback":
                tx.rollback()
            else:
                try:
                    committed = self.server.commit(tx)
                except Exception as exc:  # (the transaction is no longer the session's)
                    return asyncio.ensure_future(self._framed(seq, _raise(exc)))
        if committed is None:
            self._reply_packet(seq, self._ok_bytes)
            return True
        assert tx is not None

        def respond(mark: int) -> None:  # OK, or the error the COMMIT failed with
            error = committed.exception()
            if error is not None:
                if not isinstance(error, (er.MysqlError, RivuletError)):
                    log.exception("COMMIT failed on connection %s", self.connection_id,
                                  exc_info=error)
                self._error(error, None, mark)
            else:
                if tx.lsn:
                    self.session.wrote(tx.lsn)
                self._send(self._ok_bytes)

        return self._answer_when(committed, seq, "a COMMIT", respond)

    def _answer_when(self, done: asyncio.Future[Any], seq: int, what: str,
                     respond: Callable[[int], None]) -> asyncio.Future[bool]:
        """The reply to packet ``seq`` (``what`` it was, for the log) written once ``done``
        is, by ``respond(mark)`` (``mark``: where the reply starts in the stream's buffer,
        for an error to replace what was written), in the connection's sequence, without a
        task: a task per write or per COMMIT cost more than the statement. The future
        returned says whether it was answered: False where ``done`` was cancelled (the
        connection went away) or ``respond`` failed (the connection closes, as after a
        failed task)."""
        reply = (seq + 1) & 0xFF
        answered: asyncio.Future[bool] = done.get_loop().create_future()

        def answer(_: Any) -> None:
            if done.cancelled():
                answered.set_result(False)
                return
            stream = self.stream
            mark = len(stream._buffer)
            self._seq = stream.seq.value = reply
            try:
                respond(mark)
            except Exception:
                log.exception("answering %s failed on connection %s", what, self.connection_id)
                answered.set_result(False)
                return
            answered.set_result(True)

        done.add_done_callback(answer)
        return answered

    def _in_transaction_now(self, tx: Transaction, data: bytes, seq: int
                            ) -> bool | asyncio.Future[bool] | None:
        """A text statement of transaction ``tx`` that reads a few keys (a write by key, a
        locking read by primary key), run here on the event loop, without a task (a task,
        a hop to a thread and back, cost more than the statement). If it must wait for a
        lock, the rest of it goes on in a task; None: not such a statement."""
        if data[0] != COM_QUERY or self.read_only:
            return None
        sql = data[1:].decode(self._codec)
        lock = locking_read(sql)
        if lock is not None:
            sql = lock.sql
        split = normalize.split(sql)
        if split.params:
            return None
        handler = self.cache.lookup(split, sql)  # (None unless current)
        if handler is None:
            return None
        args = handler.args(split.values)
        if lock is not None:
            view = handler.view
            if handler.kind != READ or view is None or not tx.quick_read(view, args):
                return None
            return self._now(
                tx, seq,
                lambda: self._answer(handler, tx.locking_read(view, args, lock.mode,
                                                              lock.nowait), False,
                                     kept=False),
                lambda wait: self._locking_read(tx, handler, args, lock, False, None, wait))
        if handler.kind != WRITE or not self._clock_allowed(handler):
            return None
        request = handler.make(args)  # type: ignore[misc]
        request.foreign_key_checks = self._foreign_key_checks()
        if not tx.quick_write(request):
            return None
        return self._now(tx, seq, lambda: self._write_ok(request, tx.write(request)),
                         lambda wait: self._write_in_transaction(tx, request, wait))

    def _now(self, tx: Transaction, seq: int, run: Callable[[], None],
             rest: Callable[[LockWait], Coroutine[Any, Any, None]]
             ) -> bool | asyncio.Future[bool]:
        """Run a statement of ``tx`` and reply, here; if it must wait for a lock, ``rest``
        goes on in a task (as the slow path runs it); a deadlock ends the transaction as
        there. Another failure propagates: the slow path runs the statement again (it
        changed nothing) and reports it."""
        tx.defer_lock_waits = True
        tx.lock_timeout = self._lock_timeout()
        tx.foreign_key_checks = self._foreign_key_checks()
        self._seq = (seq + 1) & 0xFF
        self.stream.seq.value = self._seq
        try:
            run()
        except LockWait as wait:
            return asyncio.ensure_future(self._framed(seq, rest(wait)))
        except DeadlockError as exc:
            return asyncio.ensure_future(self._framed(seq, self._deadlocked(exc)))
        return True

    async def _deadlocked(self, exc: DeadlockError) -> None:
        await self._end_transaction(commit=False)  # (rolled back already: its victim)
        raise exc

    def _reply_packet(self, seq: int, packet: bytes) -> None:
        """One packet as the whole reply to packet ``seq``."""
        self._seq = (seq + 1) & 0xFF
        self.stream.seq.value = self._seq
        self._send(packet)

    def _write_soon(self, handler: Handler, args: tuple, seq: int) -> asyncio.Future[bool]:
        """:meth:`_write` without a task: a text INSERT/UPDATE/DELETE is made into its
        request and queued for the group commit here; the reply is written when it is
        done (a task per write, and splitting its text twice, cost more than the commit)."""
        request = handler.make(args)  # type: ignore[misc]
        request.foreign_key_checks = self._foreign_key_checks()

        def respond(mark: int) -> None:  # its OK, or the error it failed with
            if request.error is not None:
                if not isinstance(request.error, RivuletError):
                    log.error("write failed on connection %s: %r", self.connection_id,
                              request.error)
                self._error(request.error, None, mark)
            else:
                self.session.wrote(request.lsn)
                self._write_ok(request, request.rowcount)

        return self._answer_when(self.server.writes.submit(request), seq, "a write", respond)

    def _read_now(self, handler: Handler, args: tuple, seq: int, binary: bool) -> bool:
        session = self.session
        if session.read_your_writes and session.last_write_lsn > self.db.applied_lsn:
            return False
        self._seq = (seq + 1) & 0xFF
        rows = handler.view.probe(*args)  # type: ignore[union-attr]
        if rows is NOT_READY:  # read by the slow path, in the pool
            return False
        self._answer(handler, rows, binary)
        return True

    def _read_text(self, known: Known, seq: int) -> bool:
        """:meth:`_read_now` for a text query. A read of one key (or of a view without
        parameters) whose rows are the very tuple its last reply was encoded from gets
        that reply again, as it is: no row encoding, no framing (most reads of a popular
        key between two writes to it)."""
        handler, args = known.handler, known.args
        if seq != 0:
            return self._read_now(handler, args, seq, False)
        session = self.session
        if session.read_your_writes and session.last_write_lsn > self.db.applied_lsn:
            return False
        view: View = handler.view  # type: ignore[assignment]
        rows: Any = view.answer(args[0] if args else ()) if len(args) <= 1 else None
        if rows is not None:
            same = rows is known.rows
            parts = rows
        else:  # an IN list: the same reply while every key's rows are the same tuples
            parts = view.answer_each(args)
            if parts is None:
                return self._read_now(handler, args, seq, False)
            last = known.rows
            same = (type(last) is list and len(last) == len(parts)
                    and all(map(operator.is_, parts, last)))
            rows = parts[0] if len(parts) == 1 else [r for part in parts for r in part]
        if len(rows) > self.db.limits.max_result_rows:
            return self._read_now(handler, args, seq, False)
        stream = self.stream
        if same and known.framing is self._framing:
            stream._buffer += known.reply
            stream.seq.value = known.end_seq
            return True
        self._seq = 1
        mark = len(stream._buffer)
        self._answer(handler, rows, False)
        known.rows, known.reply = parts, bytes(stream._buffer[mark:])
        known.framing, known.end_seq = self._framing, stream.seq.value
        self.cache.replies.charge(len(known.reply))
        return True

    async def slow(self, data: bytes, seq: int) -> bool:
        """Any command; False when the connection is to be closed."""
        return await self._framed(seq, self._command(data))

    async def _framed(self, seq: int, work: Coroutine[Any, Any, bool | None]) -> bool:
        """Run ``work``, a command (or the rest of one the fast path began), as the reply to
        packet ``seq``: its failure is the client's error packet. False when the
        connection is to be closed."""
        stream = self.stream
        mark = len(stream._buffer)
        self._seq = (seq + 1) & 0xFF
        stream.seq.value = self._seq
        try:
            if await work is False:
                return False
        except (ConnectionClosed, ConnectionError):
            return False
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every failure is the client's error packet
            if not isinstance(exc, (er.MysqlError, RivuletError)):
                log.exception("statement failed on connection %s", self.connection_id)
            self._error(exc, None, mark)
        return True

    async def _command(self, data: bytes) -> bool | None:
        """Any command (False: COM_QUIT)."""
        command = data[0]
        if command == COM_QUERY:
            await self._query(self._statement_text(data))
        elif command == COM_STMT_EXECUTE:
            await self._execute(data)
        elif command == COM_STMT_PREPARE:
            await self._prepare(self._statement_text(data))
        elif command == COM_STMT_CLOSE:
            self.statements.pop(int.from_bytes(data[1:5], "little"), None)  # no reply
        elif command == COM_STMT_SEND_LONG_DATA:
            self._long_data(data)  # no reply
        elif command == COM_STMT_RESET:
            stmt = self._statement(int.from_bytes(data[1:5], "little"))
            stmt.long_data = stmt.cursor = None
            self._send(self._ok_bytes)
        elif command == COM_STMT_FETCH:
            self._fetch(data)
        elif command == COM_PING:
            self._send(self._ok_bytes)
        elif command == COM_INIT_DB:
            await self.session.use(self._statement_text(data))
            self._send(self._ok_bytes)
        elif command == COM_QUIT:
            return False
        elif command == COM_RESET_CONNECTION:
            self.statements.clear()
            await self.session.reset()
            self._status_changed()
            self._send(self._ok_bytes)
        elif command == COM_FIELD_LIST:
            check_field_list(data[1:])  # mimic's parser loops forever without the NUL
            await self.handle_field_list(data[1:])
        else:  # COM_CHANGE_USER included: reconnect instead
            raise er.MysqlError(f"unsupported command {command:#x}", 1047)
        return None

    def _statement_text(self, data: bytes) -> str:
        """The SQL of a COM_QUERY or COM_STMT_PREPARE, in the connection's character set."""
        try:
            return data[1:].decode(self._codec)
        except UnicodeDecodeError as exc:
            raise SqlError(f"the statement is not valid {self._codec} text: byte "
                           f"{data[1 + exc.start:2 + exc.start]!r} at offset {exc.start}") from None

    def too_large(self, total: int, seq: int) -> None:
        self._seq = (seq + 1) & 0xFF
        message = (f"Got a packet bigger than 'max_allowed_packet' bytes "
                   f"({total} > {self.server.max_packet})")
        self._error(PacketTooLarge(message), er.ER_PACKET_TOO_LARGE, len(self.stream._buffer))

    def _send(self, payload: bytes) -> None:
        """One packet; one of 16 MB or more goes out in several frames."""
        if len(payload) < MAX_PAYLOAD:
            self.stream.write_many((payload,))
            return
        payload = bytes(payload)
        self.stream.write_many([payload[i:i + MAX_PAYLOAD]
                                for i in range(0, len(payload) + 1, MAX_PAYLOAD)])

    def _error(self, exc: BaseException, code: int | None, mark: int) -> None:
        stream = self.stream
        del stream._buffer[mark:]  # drop what was buffered of a reply that failed half-way
        stream.seq.value = self._seq
        failure = er.failure(exc)
        code = code or failure.code
        payload = (b"\xff" + code.to_bytes(2, "little") + b"#"
                   + er.SQLSTATES.get(code, failure.sqlstate).encode()
                   + failure.message.encode("utf-8", "replace"))
        self._send(payload)

    # ..................................................................... text queries

    async def _query(self, sql: str) -> None:
        lock = locking_read(sql)
        if lock is not None:  # the SELECT without its FOR UPDATE / FOR SHARE
            sql = lock.sql
        sql = self.session.qualified(sql)
        split = normalize.split(sql)
        handler = None if split.params else self.cache.lookup(split, sql)
        if handler is None:
            shape = self.cache.shape(split, sql)
            if shape.kind not in (READ, WRITE):
                await self._other(shape, sql)  # CREATE VIEW ... = ? keeps its '?'
                return
            if split.params:
                raise ParameterError("a '?' parameter marker in a text query: use a prepared "
                                     "statement")
            handler = await self._handler(split, sql)
        if handler.kind == READ:
            await self._read(handler, handler.args(split.values), False, lock=lock)
        else:
            _no_lock(lock)
            await self._write(handler, handler.args(split.values))

    async def _read(self, handler: Handler, args: tuple, binary: bool,
                    cursor: Prepared | None = None, lock: LockingRead | None = None) -> None:
        session = self.session
        tx = session.tx
        if lock is not None and (tx is not None or not session.autocommit):
            if tx is None:  # with autocommit off, a locking read begins a transaction
                tx = session.begin()
                self._status_changed()
            await self._locking_read(tx, handler, args, lock, binary, cursor)
            return
        if tx is not None and tx.written:  # its own writes in the answer
            rows = await self._in_pool(tx.read, handler.view, args)
            self._answer(handler, rows, binary, cursor, kept=False)
            return
        if session.read_your_writes and session.last_write_lsn > self.db.applied_lsn:
            await self._in_pool(self.db.wait_for, session.last_write_lsn)
        view = handler.view
        rows = view.probe(*args)  # type: ignore[union-attr]
        if rows is NOT_READY:  # a miss: the upquery runs off the event loop
            rows = await self._in_pool(lambda: view.lookup(*args))  # type: ignore[union-attr]
        self._answer(handler, rows, binary, cursor)

    async def _locking_read(self, tx: Transaction, handler: Handler, args: tuple,
                            lock: LockingRead, binary: bool, cursor: Prepared | None = None,
                            waiting: LockWait | None = None) -> None:
        """``SELECT ... FOR UPDATE | FOR SHARE`` in transaction ``tx`` and its rows
        (``waiting``: the lock the fast path found it must wait for first)."""
        view = handler.view
        assert view is not None  # (a read's handler)
        rows = await self._in_transaction(tx, tx.quick_read(view, args), tx.locking_read,
                                          view, args, lock.mode, lock.nowait, waiting=waiting)
        self._answer(handler, rows, binary, cursor, kept=False)

    def _check_may_change(self, what: str) -> None:
        """A read-only user's write or DDL: MySQL's "command denied" (1142)."""
        if self.read_only:
            raise er.MysqlError(f"{what} denied to read-only user '{self.session.username}'",
                                er.ER_TABLEACCESS_DENIED)

    async def _write(self, handler: Handler, args: tuple) -> None:
        self._check_may_change("write")
        if not self._clock_allowed(handler):
            self._check_time_zone()
        request = handler.make(args)  # type: ignore[misc]
        request.foreign_key_checks = self._foreign_key_checks()
        session = self.session
        if not session.direct:  # in a transaction (one starts here with autocommit off)
            tx = session.tx or session.begin()
            self._status_changed()
            await self._write_in_transaction(tx, request)
            return
        await self.server.submit_write(request, self._lock_timeout())
        if request.error is not None:
            raise request.error
        self.session.wrote(request.lsn)
        self._write_ok(request, request.rowcount)

    async def _write_in_transaction(self, tx: Transaction, request: WriteRequest,
                                    waiting: LockWait | None = None) -> None:
        """A write of transaction ``tx`` and its OK (``waiting``: the lock the fast path
        found it must wait for first)."""
        count = await self._in_transaction(tx, tx.quick_write(request), tx.write, request,
                                           waiting=waiting)
        self._write_ok(request, count)

    def _write_ok(self, request: WriteRequest, count: int) -> None:
        """A write's OK: the rows it changed (``count``; with CLIENT_FOUND_ROWS, those it
        matched) and its LAST_INSERT_ID. Kept per value for the session's status: most
        writes change one row and insert no number (mimic's packet builder cost a twentieth
        of the server's time in bench.transactions)."""
        if self._found_rows:
            count = request.found()
        key = (count, request.last_insert_id)
        oks = self._oks
        packet = oks.get(key)
        if packet is None:
            if len(oks) >= 64:
                oks.clear()
            packet = oks[key] = self.ok(affected_rows=count,
                                        last_insert_id=request.last_insert_id)
        self._send(packet)

    async def _in_transaction(self, tx: Transaction, quick: bool, fn: Any, *args: Any,
                              waiting: LockWait | None = None) -> Any:
        """``fn(*args)``, a statement of ``tx``: here if it is ``quick`` (it reads the rows
        of a few keys: ``Transaction.quick_write``), else in the pool. A lock it must wait
        for (``waiting``: one it found already) is awaited here (no thread held
        meanwhile), then the statement runs again. A deadlock ends the transaction (rolled
        back: its victim); a lock wait timeout fails the statement only (1205), as in
        MySQL."""
        tx.defer_lock_waits = True
        tx.lock_timeout = self._lock_timeout()
        tx.foreign_key_checks = self._foreign_key_checks()
        try:
            while True:
                try:
                    if waiting is not None:
                        await asyncio.wrap_future(waiting.future)
                        waiting = None
                    if quick:
                        return fn(*args)
                    return await self._in_pool(fn, *args)
                except LockWait as wait:
                    waiting = wait
        except DeadlockError:
            await self._end_transaction(commit=False)
            raise

    def _foreign_key_checks(self) -> bool:
        """The session's ``foreign_key_checks``."""
        return bool(self.session.variables.get_variable("foreign_key_checks"))

    def _lock_timeout(self) -> float:
        """The session's ``innodb_lock_wait_timeout``, in seconds."""
        return float(self.session.variables.get_variable("innodb_lock_wait_timeout"))

    async def _handler(self, split: normalize.Split, sql: str) -> Handler:
        """A statement's handler, built off the event loop on the program as it is now (a
        replica first catches up with DDL run elsewhere)."""
        await self.server.catch_up()
        return await self._in_pool(self.cache.handler, split, sql)

    async def _in_pool(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    # ..................................................................... replies

    def _answer(self, handler: Handler, rows: Sequence[Sequence[Any]], binary: bool,
                cursor: Prepared | None = None, *, kept: bool = True) -> None:
        """A view's rows as a result set; the header packets are built once per handler.
        ``kept``: the rows are a reader's, the same tuples from one reply to the next until
        a write changes them, so each row's encoding is cached (:func:`_text_payloads`);
        rows a transaction computed for one read are new tuples each time, and caching them
        would only fill the cache (and charge its budget) with rows no reply reuses."""
        if handler.limit is not None:
            rows = rows[: handler.limit]
        if len(rows) > self.db.limits.max_result_rows:
            self.db.limits.check_result(len(rows))
        columns = handler.columns
        if columns is None:
            columns = handler.columns = _columns_of(handler)
        key = self._header_key
        header = handler.headers.get(key)
        if header is None:
            header = handler.headers[key] = self._header(*columns)
        if not binary and cursor is None:
            if kept:
                payloads = _text_payloads(handler, rows, columns[0], self.cache.replies)
            else:
                project = handler.project
                make = packets.make_text_resultset_row
                payloads = [make(row if project is None else tuple(row[i] for i in project),
                                 columns[0]) for row in rows]
            self._write_rows(header, columns[0], payloads, encoded=True)
            return
        if handler.project is not None:
            project = handler.project
            rows = [tuple(r[i] for i in project) for r in rows]
        self._write_rows(header, columns[0], rows, binary, cursor)

    def _header(self, columns: Sequence[ResultColumn],
                extras: Sequence[ColumnExtras]) -> tuple[bytes, int]:
        """The framed column-count, column-definition (and EOF) packets of a reply, and
        the sequence id of the packet after them."""
        payloads = [packets.make_column_count(capabilities=self.capabilities,
                                              column_count=len(columns))]
        for i, column in enumerate(columns):
            payloads.append(packets.make_column_definition_41(
                server_charset=self.server_charset, schema="rivulet", name=column.name,
                column_type=column.type, character_set=column.character_set,
                flags=extras[i].flags if extras else ColumnDefinition(0),
                decimals=extras[i].decimals if extras else 0,
            ))
        if not self.deprecate_eof():
            payloads.append(self.eof())
        framed = bytearray()
        for seq, payload in enumerate(payloads, start=1):
            framed += len(payload).to_bytes(3, "little") + bytes([seq & 0xFF]) + payload
        return bytes(framed), (len(payloads) + 1) & 0xFF

    def _write_rows(self, header: tuple[bytes, int], columns: Sequence[ResultColumn],
                    rows: Sequence[Any], binary: bool = False, cursor: Prepared | None = None,
                    encoded: bool = False) -> None:
        """A result set: ``header`` (see :meth:`_header`), then ``rows`` (text-protocol
        row payloads already, when ``encoded``), then the end packet."""
        stream = self.stream
        framed, next_seq = header
        if self._seq != 1:  # headers are framed for a reply starting at sequence id 1
            stream.seq.value = self._seq
            stream.write_many(_unframe(framed))
        else:
            stream._buffer += framed
            stream.seq.value = next_seq
        if cursor is not None:
            cursor.cursor = list(rows)
            cursor.columns = columns
            self._send(self.ok_or_eof(flags=_CURSOR_EXISTS))
            return
        start, seq = len(stream._buffer), stream.seq.value
        make = packets.make_binary_resultrow if binary else packets.make_text_resultset_row
        if encoded:
            stream.write_many(rows)
        elif binary:
            stream.write_many([make(r, columns) for r in rows])
        else:
            stream.write_text_rows(rows, columns)
        if len(stream._buffer) - start >= MAX_PAYLOAD:  # a row may need several frames
            del stream._buffer[start:]
            stream.seq.value = seq
            for row in rows:
                self._send(row if encoded else make(row, columns))
        self._send(self._end_bytes)

    def _reply(self, reply: Reply, binary: bool = False, cursor: Prepared | None = None) -> None:
        self._write_rows(self._header(reply.columns, reply.extras), reply.columns, reply.rows,
                         binary, cursor)

    # ..................................................................... other statements

    async def _other(self, shape: Shape, sql: str, binary: bool = False,
                     cursor: Prepared | None = None) -> None:
        """Statements that are not view reads or writes: DDL, SHOW, EXPLAIN, SET, chatter."""
        kind = shape.kind
        if kind == TRANSACTION:
            control = control_statement(sql)
            assert control is not None  # (how the shape was found)
            try:
                await self._control(control)
            finally:
                self._status_changed()
            self._send(self._ok_bytes)
        elif kind == DDL:
            self._check_may_change("changing the program (DDL)")
            await self._end_transaction(commit=True)  # DDL commits first, as in MySQL
            await self.server.run_ddl(sql, self._foreign_key_checks())
            self._send(self._ok_bytes)
        elif kind == SHOW:  # (parsed again: the template's node has the first text's LIKE)
            node = None if shape.node is None else parse_one(sql)
            query = show_where(node, self.db.catalog, shown_schema(
                self.db.catalog, node, self.session.database)) \
                if isinstance(node, exp.Show) and node.name.upper() != "DATABASES" else None
            if query is not None:  # SHOW ... WHERE: a query of information_schema
                await self._information_schema(query, binary, cursor)
                return
            rows, columns = show(self.db, node, sql, self.session.database)
            self._reply(Reply(rows, columns), binary, cursor)
        elif kind == EXPLAIN:
            self._reply(await self._explain(shape, sql), binary, cursor)
        elif kind == CHATTER and isinstance(shape.node, exp.Query) \
                and reads_information_schema(shape.node):
            await self._information_schema(sql, binary, cursor)
        elif kind == NAMED_LOCK:
            await self._named_locks(sql, (), binary, cursor)
        elif kind == CLOCK:
            await self._read_once(sql, (), binary, cursor)
        else:  # SET and driver chatter: mysql-mimic's session handlers
            if kind == CHATTER and isinstance(shape.node, exp.Query) \
                    and not is_session_select(shape.node):
                await self._read_with_session_values(sql, binary, cursor)
                return
            session = self.session
            result = await ensure_result_set(await session.handle_query(sql, {}))
            if kind == SET:
                await self._autocommit_changed()
                session.refresh()
                self._codec = self.client_charset.codec
                self._header_key = (self.capabilities, self.server_charset)
                self._framing = self.cache.framing((self._header_key, self._end_bytes))
                self._by_status.clear()  # (their framings have the old header key)
                self._texts = self.cache.texts_for(self._codec)
            if not result:
                self._send(self._ok_bytes)
                return
            rows = [tuple(r) async for r in aiterate(result.rows)]
            self._reply(Reply(rows, result.columns), binary, cursor)

    async def _information_schema(self, sql: str, binary: bool,
                                  cursor: Prepared | None) -> None:
        """A query of information_schema (rivulet/server/mysql/infoschema.py)."""
        handler, rows = await self._in_pool(self.server.information_schema.answer,
                                            self.db.catalog, sql, self.session.database)
        self._answer(handler, rows, binary, cursor)

    async def _read_once(self, sql: str, params: Sequence[Any], binary: bool,
                         cursor: Prepared | None) -> None:
        """A SELECT that reads the clock (``NOW()``...): planned with its instant and
        computed, by no view and no reply cache (rivulet/engine/program.py's
        ``constant_plan``); in a transaction, with its own writes."""
        self._check_time_zone()
        session = self.session
        if session.read_your_writes and session.last_write_lsn > self.db.applied_lsn:
            await self._in_pool(self.db.wait_for, session.last_write_lsn)
        node = parse_one(sql)
        program = self.db.program
        plan = await self._in_pool(program.constant_plan, node, params)
        tx = session.tx
        if tx is not None:
            rows = await self._in_pool(tx.read_plan, plan)
        else:
            rows = await self._in_pool(program.computed_rows, plan)
        if len(rows) > self.db.limits.max_result_rows:
            self.db.limits.check_result(len(rows))
        columns = plan.root.columns[: plan.visible]
        self._reply(Reply(rows, result_columns(columns), column_extras(columns)), binary,
                    cursor)

    def _clock_allowed(self, handler: Handler) -> bool:
        """Whether a write may run as it is under the session's ``time_zone``: one that
        reads the clock (a time function, a ``DEFAULT CURRENT_TIMESTAMP``) only in UTC."""
        return (not getattr(handler.statement, "reads_clock", False)
                or self._zone() in _UTC_ZONES)

    def _zone(self) -> str:
        """The session's ``time_zone``, upper case."""
        return str(self.session.variables.get("time_zone") or "SYSTEM").upper()

    def _check_time_zone(self) -> None:
        """A statement that reads the clock, refused (1235) under a session ``time_zone``
        other than UTC: rivulet's time functions give UTC, its one time zone."""
        zone = self._zone()
        if zone not in _UTC_ZONES:
            raise UnsupportedSqlError(
                f"unsupported time function under time_zone '{zone}': rivulet keeps UTC only "
                "(SET time_zone = '+00:00', or compute the time in the application)")

    async def _named_locks(self, sql: str, params: Sequence[Any], binary: bool,
                           cursor: Prepared | None) -> None:
        """``SELECT GET_LOCK(...)``: made by this connection's session, a GET_LOCK's wait
        spent on the event loop (rivulet/engine/named_locks.py)."""
        calls = lock_calls(parse_one(sql))
        assert calls is not None  # (how the kind was found)
        bound = bind_lock_calls(calls, params)
        row = await self.server.named_locks.answer_async(self.connection_id, bound)
        self._reply(Reply([row], int_columns(*(c.column for c in calls))), binary, cursor)

    async def _read_with_session_values(self, sql: str, binary: bool,
                                        cursor: Prepared | None) -> None:
        """A SELECT without FROM asking the session's values beside others (Django's
        first query: ``SELECT VERSION(), @@sql_mode, ..., CONVERT_TZ(...) IS NOT NULL``):
        the values put in as literals, then answered as an ad-hoc read."""
        text = self.session.with_session_values(sql)
        split = normalize.split(text)
        if self.cache.shape(split, text).kind == CLOCK:
            await self._read_once(text, (), binary, cursor)
            return
        if self.cache.shape(split, text).kind != READ:  # (a session value it cannot put in)
            raise UnsupportedSqlError(f"unsupported SELECT {sql.strip()[:60]!r}")
        handler = await self._handler(split, text)
        await self._read(handler, handler.args(split.values), binary, cursor)

    # ..................................................................... transactions

    async def _control(self, control: Control) -> None:
        """BEGIN, COMMIT, ROLLBACK and the savepoints (docs/transactions.md)."""
        session = self.session
        verb = control.verb
        if verb == "begin":  # (BEGIN in a transaction commits it first, as in MySQL)
            await self._end_transaction(commit=True)
            session.begin(control.read_only)
        elif verb in ("commit", "rollback"):
            await self._end_transaction(commit=verb == "commit")
        elif verb == "characteristics":
            self._characteristics(control)
        else:
            tx = session.tx
            if tx is None:
                if session.autocommit:  # no transaction: MySQL keeps no savepoint
                    if verb == "savepoint":
                        return
                    raise NoSuchSavepointError(f"SAVEPOINT {control.name} does not exist")
                tx = session.begin()
            await self._in_pool(tx.control, control)

    def _characteristics(self, control: Control) -> None:
        """``SET [SESSION] TRANSACTION ...``: for the session, or the next transaction."""
        session = self.session
        if control.isolation is not None:
            isolation_value(control.isolation)  # (READ COMMITTED, or refused: 1231)
        if control.scope == "GLOBAL":
            raise UnsupportedSqlError("SET GLOBAL TRANSACTION: rivulet's transaction "
                                      "characteristics are set per session")
        if control.scope == "SESSION":
            if control.read_only is not None:
                session.variables.set("transaction_read_only", control.read_only)
        elif session.tx is not None:
            raise er.MysqlError("Transaction characteristics can't be changed while a "
                                "transaction is in progress", er.ER_CANT_CHANGE_TX_CHARACTERISTICS)
        elif control.read_only is not None:
            session.next_read_only = control.read_only

    async def _end_transaction(self, *, commit: bool) -> None:
        """End the open transaction, if any: commit it (in the pool: it waits for the
        group commit) or roll it back. A failed commit leaves it rolled back."""
        tx = self.session.end()
        try:
            if tx is None:
                return
            if not commit:
                tx.rollback()
                return
            committed = self.server.commit(tx)
            if committed is not None:
                await committed
            if tx.lsn:
                self.session.wrote(tx.lsn)
        finally:
            self._status_changed()

    async def _autocommit_changed(self) -> None:
        """After a SET: autocommit turned on commits the open transaction (as in MySQL)."""
        session = self.session
        on = bool(session.variables.get("autocommit"))
        if on == session.autocommit:
            return
        session.set_autocommit(on)
        if on:
            await self._end_transaction(commit=True)
        self._status_changed()

    def _status_changed(self) -> None:
        """The transaction status the OK and EOF packets carry (SERVER_STATUS_IN_TRANS,
        _AUTOCOMMIT), and the replies built from them, brought up to date."""
        session = self.session
        flags = int(self.status_flags) & ~_TRANSACTION_STATUS
        if session.autocommit:
            flags |= _SERVER_STATUS_AUTOCOMMIT
        if session.tx is not None:
            flags |= _SERVER_STATUS_IN_TRANS
            if session.tx.read_only:
                flags |= _SERVER_STATUS_IN_TRANS_READONLY
        if flags == self.status_flags:
            return
        self.status_flags = ServerStatus(flags)
        replies = self._by_status.get(flags)
        if replies is None:  # (built once per status: BEGIN and COMMIT switch between two)
            end = self.ok_or_eof()
            replies = self._by_status[flags] = (
                self.ok(), end, self.cache.framing((self._header_key, end)), {})
        self._ok_bytes, self._end_bytes, self._framing, self._oks = replies

    async def _explain(self, shape: Shape, sql: str) -> Reply:
        """``EXPLAIN SELECT ...``: the dataflow of the view that answers the query (made
        now if new); ``EXPLAIN name``: of a view, or the columns of a table."""
        node = shape.node
        target = node.this if node is not None else None
        if target is not None and not isinstance(target, exp.Query):
            name = target.name
            if self.db.catalog.view(name) is None:
                rows, columns = describe(self.db.catalog, name)
                return Reply(rows, columns)
        else:
            inner = _EXPLAIN_PREFIX.sub("", sql, count=1)
            split = normalize.split(inner)
            handler = await self._handler(split, inner)
            if handler.kind != READ:
                raise ProgramError("EXPLAIN takes a SELECT or a view name")
            name = handler.view.name  # type: ignore[union-attr]
        lines = explain(self.db, name).splitlines()
        return Reply([(line,) for line in lines], text_columns("plan"))

    # ..................................................................... prepared statements

    async def _prepare(self, sql: str) -> None:
        lock = locking_read(sql)
        if lock is not None:  # kept with the statement, taken off its text
            sql = lock.sql
        sql = self.session.qualified(sql)
        split = normalize.split(sql)
        shape = self.cache.shape(split, sql)
        handler = None
        limited = None
        if shape.kind == READ and split.params:
            limited = bind_limit(sql, [1] * len(split.params))
            if limited is not None and not has_limit_params(parse_one(sql)):
                limited = None  # (a comment ending the text, say: the planner decides)
        if limited is not None:
            handler = await self._handler(normalize.split(limited[0]), limited[0])
        elif shape.kind in (READ, WRITE):
            handler = await self._handler(split, sql)
        elif split.params and shape.kind not in (NAMED_LOCK, CLOCK):
            raise ParameterError("only SELECT, INSERT, UPDATE and DELETE take '?' parameters")
        if len(self.statements) >= MAX_PREPARED:
            raise er.MysqlError(  # MySQL's max_prepared_stmt_count, per connection here
                f"Can't create more than max_prepared_stmt_count statements ({MAX_PREPARED})",
                er.ER_MAX_PREPARED)
        self._next_stmt += 1
        stmt_id = self._next_stmt
        if lock is not None and (handler is None or handler.kind != READ):
            _no_lock(lock)
        self.statements[stmt_id] = Prepared(split, sql, shape, handler, lock=lock,
                                            limited=limited is not None)
        n_params = len(split.params)
        columns: Sequence[ResultColumn] = ()
        extras: Sequence[ColumnExtras] = ()
        if handler is not None and handler.kind == READ:
            columns, extras = handler.columns = handler.columns or _columns_of(handler)
        payloads = [b"\x00" + stmt_id.to_bytes(4, "little") + len(columns).to_bytes(2, "little")
                    + n_params.to_bytes(2, "little") + b"\x00\x00\x00"]
        for _ in range(n_params):
            payloads.append(packets.make_column_definition_41(
                server_charset=self.server_charset, name="?"))
        if n_params and not self.deprecate_eof():
            payloads.append(self.eof())
        for i, column in enumerate(columns):
            payloads.append(packets.make_column_definition_41(
                server_charset=self.server_charset, schema="rivulet", name=column.name,
                column_type=column.type, character_set=column.character_set,
                flags=extras[i].flags, decimals=extras[i].decimals))
        if columns and not self.deprecate_eof():
            payloads.append(self.eof())
        self.stream.write_many(payloads)

    def _slot_values(self, stmt: Prepared, reader: Reader) -> list[Any]:
        """The statement's slot values: its literals, with the ``?`` filled from EXECUTE."""
        split = stmt.split
        values, stmt.types = read_params(reader, len(split.params), stmt.types, stmt.long_data,
                                         self._codec)
        stmt.long_data = None
        slots = list(split.values)
        for slot, value in zip(split.params, values):
            slots[slot] = value
        return slots

    async def _execute(self, data: bytes) -> None:
        reader = Reader(data, 1)
        stmt = self._statement(reader.uint(4))
        cursor_flags = reader.uint(1)
        reader.uint(4)  # iteration count, always 1
        slots = self._slot_values(stmt, reader)
        cursor = stmt if cursor_flags & 0x01 else None
        handler = stmt.handler
        if handler is None and stmt.shape.kind in (NAMED_LOCK, CLOCK):
            params = [slots[i] for i in stmt.split.params]
            if stmt.shape.kind == CLOCK:
                await self._read_once(stmt.sql, params, True, cursor)
            else:
                await self._named_locks(stmt.sql, params, True, cursor)
            return
        if handler is None:
            await self._other(stmt.shape, stmt.sql, True, cursor)
            return
        if stmt.limited:
            handler, slots = await self._limited(stmt, slots)
        elif not self.cache.current(handler):  # DDL replaced what the statement was bound to
            handler = stmt.handler = await self._handler(stmt.split, stmt.sql)
        if handler.kind == READ:
            await self._read(handler, handler.args(slots), True, cursor, stmt.lock)
        else:
            await self._write(handler, handler.args(slots))

    async def _limited(self, stmt: Prepared, slots: list[Any]) -> tuple[Handler, list[Any]]:
        """The handler and slot values of an EXECUTE of a statement whose LIMIT or OFFSET
        is a ``?``: the statement with this execution's values written there."""
        bound = bind_limit(stmt.sql, [slots[i] for i in stmt.split.params])
        assert bound is not None  # (it was at PREPARE: the text has not changed)
        sql, params = bound
        split = normalize.split(sql)
        handler = self.cache.lookup(split, sql)
        if handler is None or not self.cache.current(handler):
            handler = await self._handler(split, sql)
        values = list(split.values)
        for slot, value in zip(split.params, params):
            values[slot] = value
        return handler, values

    def _fetch(self, data: bytes) -> None:
        reader = Reader(data, 1)
        stmt = self._statement(reader.uint(4))
        count = reader.uint(4)
        rows = stmt.cursor or []
        batch, stmt.cursor = rows[:count], rows[count:]
        make = packets.make_binary_resultrow
        self.stream.write_many([make(r, stmt.columns) for r in batch])
        done = not stmt.cursor
        self._send(self.ok_or_eof(flags=_LAST_ROW_SENT if done else _CURSOR_EXISTS))

    def _long_data(self, data: bytes) -> None:
        reader = Reader(data, 1)
        stmt = self.statements.get(reader.uint(4))
        if stmt is None:
            return  # no reply to long data, not even an error
        param = reader.uint(2)
        if stmt.long_data is None:
            stmt.long_data = {}
        stmt.long_data.setdefault(param, bytearray()).extend(data[7:])

    def _statement(self, stmt_id: int) -> Prepared:
        stmt = self.statements.get(stmt_id)
        if stmt is None:
            raise er.MysqlError(f"unknown prepared statement handler ({stmt_id})",
                                er.ER_UNKNOWN_STMT)
        return stmt


#: BEGIN, COMMIT and ROLLBACK as drivers send them (COM_QUERY packets), by their verb.
_CONTROLS = {bytes([COM_QUERY]) + text: verb
             for verb, texts in (("begin", ("BEGIN", "START TRANSACTION")),
                                 ("commit", ("COMMIT",)), ("rollback", ("ROLLBACK",)))
             for word in texts for text in (word.encode(), word.lower().encode())}
_CONTROL_SIZE = max(map(len, _CONTROLS))


async def _raise(exc: BaseException) -> None:
    raise exc


def _no_lock(lock: LockingRead | None) -> None:
    """A locking clause ends only a SELECT that reads tables."""
    if lock is not None:
        raise UnsupportedSqlError("FOR UPDATE / FOR SHARE ends a SELECT that reads tables")


def _columns_of(handler: Handler) -> tuple[tuple[ResultColumn, ...], tuple[ColumnExtras, ...]]:
    """Result columns of a view read, typed from the view's schema."""
    plan = handler.view.plan  # type: ignore[union-attr]
    out = plan.root.columns[: plan.visible]
    if handler.project is not None:
        out = [out[i] for i in handler.project]
    return result_columns(out), column_extras(out)


def _text_payloads(handler: Handler, rows: Sequence[Sequence[Any]],
                   columns: Sequence[ResultColumn], budget: ReplyBudget) -> list[bytes]:
    """The text-protocol payloads of a read's rows (projected as the handler says). A
    reader keeps each row as the same tuple until a write changes it, so a row is encoded
    once per handler and its payload reused by every later reply that holds it (the rows
    of a key read in many IN lists, of an unchanged result). The cache holds the rows it
    encoded (their ids stay theirs, and an evicted row stays alive while it is there), so
    what it takes is charged to the server's ``budget`` (reply_cache.py), rows included."""
    cache = handler.encoded
    project = handler.project
    make = packets.make_text_resultset_row
    out = []
    fresh: list[Any] = []
    size = 0
    for row in rows:
        hit = cache.get(id(row))
        if hit is None or hit[0] is not row:
            values = row if project is None else tuple(row[i] for i in project)
            hit = cache[id(row)] = (row, make(values, columns))
            fresh.append(row)
            size += len(hit[1])
        out.append(hit[1])
    if fresh:
        budget.charge(size + len(fresh) * ENTRY_BYTES + int(rows_bytes(fresh, len(fresh))))
    return out


def _unframe(framed: bytes) -> list[bytes]:
    """The payloads of framed packets (to frame them again with other sequence ids)."""
    out, pos = [], 0
    while pos < len(framed):
        n = int.from_bytes(framed[pos:pos + 3], "little")
        out.append(framed[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out

