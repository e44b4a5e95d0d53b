"""PEP 249 (DB-API 2.0) over an embedded rivulet database.

Code written against ``sqlite3`` switches by changing its ``connect`` call: the paramstyle
is the same (``qmark``), cursors work the same way. Differences a caller should know:

* Transactions as PEP 249 and ``sqlite3`` have them: a write opens a transaction that
  ``commit()`` stores (all its writes as one batch) and ``rollback()`` forgets; closing the
  connection, or leaving its ``with`` block on an exception, rolls it back, leaving the
  block normally commits it (and then the connection closes: it owns its database). With
  ``autocommit=True`` (the ``connect`` option or the attribute) each write commits on its
  own, as before. ``BEGIN``, ``SAVEPOINT``, ``ROLLBACK TO`` and the rest may be executed
  too. DDL commits the open transaction first. Reads see the transaction's own writes;
  the isolation level is READ COMMITTED (docs/transactions.md).
* ``description`` gives each column's name, its rivulet value kind (``"int"``, ``"str"``,
  ...) as the type code, and whether it may be NULL.
* SELECTs are answered from views (eventually consistent, like a cache). A connection
  opened with ``read_your_writes=True`` (the default) waits, before each SELECT, until its
  own earlier writes are reflected in the views.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rivulet import errors
from rivulet.bind import statements as st
from rivulet.engine.database import Database
from rivulet.engine.program import read_once
from rivulet.engine.transaction import Transaction
from rivulet.sql.control import ISOLATION, Control, check_isolation, control_statement
from rivulet.sql.lock_calls import bind as bind_lock_calls
from rivulet.sql.lock_calls import lock_calls
from rivulet.values.schema import INT

apilevel = "2.0"
threadsafety = 2  # threads may share the module and connections, not cursors
paramstyle = "qmark"


class Error(Exception):
    """PEP 249 base class; rivulet's own errors are wrapped in its subclasses."""


class Warning(Exception):  # noqa: A001 - the name PEP 249 requires
    pass


class InterfaceError(Error):
    pass


class DatabaseError(Error):
    pass


class DataError(DatabaseError):
    pass


class OperationalError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class InternalError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    pass


class NotSupportedError(DatabaseError):
    pass


def _translate(exc: errors.RivuletError) -> Error:
    if isinstance(exc, errors.UnsupportedSqlError):
        return NotSupportedError(str(exc))
    if isinstance(exc, (errors.SqlError, errors.ProgramError, errors.NoSuchSavepointError)):
        return ProgrammingError(str(exc))
    if isinstance(exc, errors.SchemaError):
        return DataError(str(exc))
    if isinstance(exc, errors.ConstraintError):
        return IntegrityError(str(exc))
    if isinstance(exc, errors.ClosedError):
        return InterfaceError(str(exc))
    return OperationalError(str(exc))


def connect(path: str | Path, *, read_your_writes: bool = True, autocommit: bool = False,
            **kwargs: Any) -> Connection:
    """Open the database in directory ``path`` and return a connection that owns it."""
    try:
        return Connection(Database(path, **kwargs), read_your_writes=read_your_writes,
                          autocommit=autocommit)
    except errors.RivuletError as exc:
        raise _translate(exc) from exc


class Connection:
    def __init__(self, db: Database, *, read_your_writes: bool = True,
                 autocommit: bool = False) -> None:
        self.db = db
        self.read_your_writes = read_your_writes
        self._autocommit = autocommit
        self._closed = False
        self._last_write_lsn = 0
        #: The open transaction (after a write with autocommit off, or BEGIN), if any.
        self._tx: Transaction | None = None
        #: The connection as a session of named locks (GET_LOCK): its CONNECTION_ID.
        self.session_id = db.named_locks.new_session()

    @property
    def autocommit(self) -> bool:
        """Whether each write commits on its own. Turning it on commits the open
        transaction (as ``sqlite3`` does)."""
        return self._autocommit

    @autocommit.setter
    def autocommit(self, on: bool) -> None:
        self._check()
        if on and not self._autocommit:
            self.commit()
        self._autocommit = bool(on)

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open (as ``sqlite3.Connection.in_transaction``)."""
        return self._tx is not None

    def cursor(self) -> Cursor:
        self._check()
        return Cursor(self)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Shortcut, as in ``sqlite3``: a new cursor that has executed ``sql``."""
        return self.cursor().execute(sql, params)

    def commit(self) -> None:
        """Store the open transaction's writes as one batch (nothing to do without one)."""
        self._check()
        tx, self._tx = self._tx, None
        if tx is None:
            return
        try:
            tx.commit()
        except errors.RivuletError as exc:
            raise _translate(exc) from exc
        if tx.lsn:
            self._last_write_lsn = tx.lsn

    def rollback(self) -> None:
        """Forget the open transaction's writes (nothing to do without one)."""
        self._check()
        tx, self._tx = self._tx, None
        if tx is not None:
            tx.rollback()

    def close(self) -> None:
        """Close the connection and its database; an open transaction is rolled back."""
        if not self._closed:
            if self._tx is not None:
                self._tx.rollback()
                self._tx = None
            self.db.named_locks.end_session(self.session_id)  # as a MySQL session ends
            self._closed = True
            self.db.close()

    def _transaction(self) -> Transaction:
        """The open transaction, begun now if there is none."""
        if self._tx is None:
            self._tx = self.db.transaction()
        return self._tx

    def _check(self) -> None:
        if self._closed:
            raise InterfaceError("the connection is closed")

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        try:
            if kind is None and not self._closed:
                self.commit()
        finally:
            self.close()


class Cursor:
    arraysize = 1

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.description: tuple[tuple[Any, ...], ...] | None = None
        self.rowcount = -1
        self.lastrowid: int | None = None
        self._rows: list[tuple] = []
        self._pos = 0
        self._closed = False

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        self._check()
        conn = self.connection
        db = conn.db
        try:
            control = control_statement(sql)
            if control is not None:
                self._control(control)
                self._rows, self.description, self.rowcount = [], None, -1
                self._pos = 0
                return self
            statement = st.bind_text(sql, db.catalog)
            tx = conn._tx
            calls = lock_calls(statement.query) if isinstance(statement, st.Select) else None
            if calls is not None:  # GET_LOCK(...): this connection's, not a view's
                row = db.named_locks.answer(conn.session_id, bind_lock_calls(calls, params))
                self._rows, self.rowcount = [row], 1
                self.description = tuple((c.column, INT, None, None, None, None, True)
                                         for c in calls)
            elif isinstance(statement, st.Select):
                if conn.read_your_writes and conn._last_write_lsn:
                    db.wait_for(conn._last_write_lsn)
                if read_once(statement.query) and tx is None:  # SELECT ?, NOW(): no view
                    self._rows, columns = db.program.constant_read(statement.query, params)
                elif read_once(statement.query) and tx is not None:
                    plan = db.program.constant_plan(statement.query, params)
                    self._rows = tx.read_plan(plan)
                    columns = plan.root.columns[: plan.visible]
                else:
                    view, params = db.program.prepare_read(sql, params, statement.query)
                    self._rows = view.lookup(*params) if tx is None else tx.read(view, params)
                    columns = view.plan.root.columns[: view.plan.visible]
                self.description = tuple(
                    (c.name, c.kind, None, None, None, None, c.nullable) for c in columns
                )
                self.rowcount = len(self._rows)
            elif isinstance(statement, st.WRITES) and (
                    tx is not None or not conn.autocommit):
                tx = conn._transaction()
                self.rowcount = tx.write(db.texts.writer(sql)(tuple(params)))
                self._rows, self.description = [], None
                if isinstance(statement, st.Insert):
                    self.lastrowid = tx.last_insert_id or None
            else:
                if not isinstance(statement, st.WRITES):
                    conn.commit()  # DDL commits the open transaction first, as in MySQL
                result = db.execute(sql, params)
                conn._last_write_lsn = db.lsn
                self._rows, self.description = [], None
                self.rowcount = result if isinstance(result, int) else -1
                if isinstance(statement, st.Insert):
                    self.lastrowid = db.last_insert_id or None
        except errors.RivuletError as exc:
            raise _translate(exc) from exc
        self._pos = 0
        return self

    def _control(self, control: Control) -> None:
        """BEGIN, COMMIT, ROLLBACK and the savepoints, executed as statements."""
        conn = self.connection
        if control.verb == "begin":
            conn.commit()
            conn._tx = conn.db.transaction(read_only=bool(control.read_only))
        elif control.verb == "commit":
            conn.commit()
        elif control.verb == "rollback":
            conn.rollback()
        elif control.verb == "characteristics":
            check_isolation(control.isolation or ISOLATION)
            if control.read_only is not None:
                raise errors.UnsupportedSqlError(
                    "SET TRANSACTION READ ONLY | READ WRITE: start the transaction with "
                    "START TRANSACTION READ ONLY instead")
        elif conn._tx is None and conn.autocommit:  # no transaction: MySQL keeps no savepoint
            if control.verb != "savepoint":
                raise errors.NoSuchSavepointError(f"SAVEPOINT {control.name} does not exist")
        else:
            conn._transaction().control(control)

    def executemany(self, sql: str, seq_of_params: Sequence[Sequence[Any]]) -> Cursor:
        total = 0
        for params in seq_of_params:
            self.execute(sql, params)
            total += max(self.rowcount, 0)
        self.rowcount = total
        return self

    def fetchone(self) -> tuple | None:
        self._check()
        if self._pos >= len(self._rows):
            return None
        row = self._rows[self._pos]
        self._pos += 1
        return row

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        self._check()
        n = self.arraysize if size is None else size
        rows = self._rows[self._pos:self._pos + n]
        self._pos += len(rows)
        return rows

    def fetchall(self) -> list[tuple]:
        self._check()
        rows = self._rows[self._pos:]
        self._pos = len(self._rows)
        return rows

    def __iter__(self) -> Iterator[tuple]:
        while (row := self.fetchone()) is not None:
            yield row

    def close(self) -> None:
        self._closed = True

    def setinputsizes(self, sizes: Any) -> None:
        pass

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        pass

    def _check(self) -> None:
        if self._closed:
            raise InterfaceError("the cursor is closed")
        self.connection._check()
