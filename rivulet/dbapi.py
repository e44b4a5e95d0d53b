"""PEP 249 (DB-API 2.0) over an embedded rivulet database.

Code written against ``sqlite3`` switches by changing its ``connect`` call: the paramstyle
is the same (``qmark``), cursors work the same way. Differences a caller should know:

* Every write statement commits on its own when it executes (autocommit); ``commit()`` is
  accepted and does nothing, ``rollback()`` raises ``NotSupportedError``.
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
    if isinstance(exc, (errors.SqlError, errors.ProgramError)):
        return ProgrammingError(str(exc))
    if isinstance(exc, errors.SchemaError):
        return DataError(str(exc))
    if isinstance(exc, errors.ConstraintError):
        return IntegrityError(str(exc))
    if isinstance(exc, errors.ClosedError):
        return InterfaceError(str(exc))
    return OperationalError(str(exc))


def connect(path: str | Path, *, read_your_writes: bool = True, **kwargs: Any) -> Connection:
    """Open the database in directory ``path`` and return a connection that owns it."""
    try:
        return Connection(Database(path, **kwargs), read_your_writes=read_your_writes)
    except errors.RivuletError as exc:
        raise _translate(exc) from exc


class Connection:
    def __init__(self, db: Database, *, read_your_writes: bool = True) -> None:
        self.db = db
        self.read_your_writes = read_your_writes
        self._closed = False
        self._last_write_lsn = 0

    def cursor(self) -> Cursor:
        self._check()
        return Cursor(self)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Shortcut, as in ``sqlite3``: a new cursor that has executed ``sql``."""
        return self.cursor().execute(sql, params)

    def commit(self) -> None:
        self._check()

    def rollback(self) -> None:
        raise NotSupportedError("rivulet commits every statement as it executes; no rollback")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.db.close()

    def _check(self) -> None:
        if self._closed:
            raise InterfaceError("the connection is closed")

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
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
            statement = st.bind_text(sql, db.catalog)
            if isinstance(statement, st.Select):
                if conn.read_your_writes and conn._last_write_lsn:
                    db.wait_for(conn._last_write_lsn)
                view = db.prepare(sql)
                self._rows = view.lookup(*params)
                columns = view.plan.root.columns[: view.plan.visible]
                self.description = tuple(
                    (c.name, c.kind, None, None, None, None, c.nullable) for c in columns
                )
                self.rowcount = len(self._rows)
            else:
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
