"""The storage interface: durable base tables, the program, and the LSN of every commit.

The engine writes through one :class:`Storage` from one thread at a time (the commit
worker, or a migration holding the commit lock), inside :meth:`transaction`. A row's
*identity* (``RowId``) is its primary key tuple, or a hidden row id for tables without one;
updates and deletes name rows by identity.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal

from rivulet.values.schema import Column, Row, TableSchema

RowId = Any


#: What a statement of the stored program makes: a table, a view, a schema change of a
#: table, a table copied from another (``CREATE TABLE ... AS SELECT``), a database, or
#: (``view_columns``, a JSON list) the columns a view had when its table was dropped (see
#: rivulet/plan/broken.py).
StatementKind = Literal["table", "view", "alter", "copy", "schema", "view_columns"]


@dataclass(frozen=True)
class ProgramStatement:
    """One statement of the program, in the order it was applied."""

    seq: int
    kind: StatementKind
    name: str
    sql: str


@dataclass(frozen=True, slots=True)
class AddStored:
    """Schema change step: add a stored column; rows already stored read ``fill`` in it."""

    column: Column
    fill: Any


@dataclass(frozen=True, slots=True)
class RenameStored:
    """Schema change step: rename a stored column (also how a dropped column leaves sight)."""

    old: str
    new: str


@dataclass(frozen=True, slots=True)
class AddIndex:
    """Schema change step: an index over stored ``columns`` (their names at this step),
    refusing rows that clash if ``unique``; none is made when one over the same columns
    serves already (a unique one serves a plain key too). A UNIQUE index over rows that
    clash fails with :class:`~rivulet.errors.ConstraintError`."""

    columns: tuple[str, ...]
    unique: bool


@dataclass(frozen=True, slots=True)
class DropIndex:
    """Schema change step: drop rivulet's indexes over stored ``columns`` of this kind
    (unique or not); what still needs one over them makes it again (``ensure_keys``)."""

    columns: tuple[str, ...]
    unique: bool


class Storage(ABC):
    """Durable state. Implementations: :class:`rivulet.storage.sqlite.SqliteStorage`."""

    #: LSN of the last committed write batch (0 before the first).
    lsn: int

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction; commits on normal exit, rolls back on an exception."""

    @abstractmethod
    def savepoint(self) -> AbstractContextManager[None]:
        """A nested scope inside a transaction that rolls back alone on an exception."""

    @abstractmethod
    def commit_batch(self, payload: bytes | None, rows: int) -> int:
        """Record a write batch in the log within the open transaction; returns its LSN.
        An import's batch has no payload (its rows are in the table)."""

    # ..................................................................... program

    @abstractmethod
    def program(self) -> list[ProgramStatement]: ...

    @abstractmethod
    def add_statement(self, kind: StatementKind, name: str, sql: str) -> None: ...

    @abstractmethod
    def remove_statement(self, kind: StatementKind, name: str) -> None: ...

    @abstractmethod
    def replace_statement(self, seq: int, name: str, sql: str) -> None:
        """Statement ``seq`` of the program made to name ``name`` and say ``sql`` (in its
        place: a renamed table's statements, rivulet/sql/rename.py)."""

    @abstractmethod
    def create_table(self, schema: TableSchema) -> None: ...

    @abstractmethod
    def drop_table(self, schema: TableSchema) -> None: ...

    @abstractmethod
    def rename_table(self, schema: TableSchema, new: str) -> None:
        """The rows of ``schema``'s table (and its indexes) kept under the name ``new``."""

    # ..................................................................... rows

    @abstractmethod
    def insert(self, schema: TableSchema, rows: list[Row]) -> None:
        """Insert rows; raises ConstraintError on a duplicate primary key."""

    @abstractmethod
    def delete(self, schema: TableSchema, ids: list[RowId]) -> None: ...

    def replace_rows(self, schema: TableSchema, rows: list[Row]) -> None:
        """Store ``rows`` over the stored rows of the same primary keys (each is there):
        what deleting those rows and inserting these does, for a table with a primary key
        and no other UNIQUE key (where one row at a time cannot clash). A storage may do it
        in place. Inside the caller's transaction and savepoint (a failure may leave part
        of it done, for the savepoint to undo)."""
        self.delete(schema, [schema.pk_of(row) for row in rows])
        self.insert(schema, rows)

    @abstractmethod
    def scan(self, schema: TableSchema) -> Iterator[tuple[RowId, Row]]:
        """Every row of a table with its identity."""

    @abstractmethod
    def get(self, schema: TableSchema, keys: list[tuple]) -> list[tuple[RowId, Row]]:
        """Rows by primary key (tables with a primary key only)."""

    @abstractmethod
    def held(self, schema: TableSchema, columns: tuple[int, ...],
             value: tuple) -> list[tuple[RowId, Row]]:
        """The rows whose ``columns`` hold exactly ``value`` (a key's), with their
        identities, inside the open transaction (seeing its own writes)."""

    # ..................................................................... transactions

    @abstractmethod
    def read_rows(self, schema: TableSchema, columns: tuple[int, ...] | None = None,
                  keys: list[Any] | None = None) -> list[tuple[RowId, Row]]:
        """Committed rows with their identities (those whose ``columns`` hold one of
        ``keys``; None: all), from the last commit. Callable while writes commit."""

    @abstractmethod
    def read_tables(self, schemas: list[TableSchema]) -> dict[str, list[tuple[RowId, Row]]]:
        """Every committed row of each table with its identity, from one snapshot, by
        lower-case table name."""

    @abstractmethod
    def rows_by_id(self, schema: TableSchema, ids: list[RowId]) -> dict[RowId, Row]:
        """The rows stored under these identities, inside the open transaction."""

    # ..................................................................... upqueries

    @abstractmethod
    def ensure_index(self, schema: TableSchema, columns: tuple[int, ...]) -> None:
        """Make lookups of ``schema`` by ``columns`` fast (an index obligation)."""

    def value_counts(self, schema: TableSchema, columns: tuple[int, ...]) -> tuple[int, int] | None:
        """Statistics for the planner: the rows with a value in every one of ``columns``
        and the distinct values they hold there, or None when not known (no such rows,
        or a store that keeps no statistics)."""
        return None

    @abstractmethod
    def lookup(self, schema: TableSchema, columns: tuple[int, ...],
               keys: list[Any]) -> tuple[int, list[Row]]:
        """Rows whose ``columns`` hold one of ``keys``, read from one consistent snapshot,
        and the LSN of that snapshot. Callable from another thread while writes commit."""

    @abstractmethod
    def ensure_keys(self, schema: TableSchema) -> None:
        """The index of each of the table's keys, UNIQUE ones enforced (inside the open
        transaction)."""

    @abstractmethod
    def auto_increment_base(self, schema: TableSchema, column: int) -> int:
        """The largest value of AUTO_INCREMENT ``column`` stored or handed out (inside the
        open transaction): the next one generated is one above it."""

    @abstractmethod
    def note_auto_increment(self, schema: TableSchema, column: int, value: int) -> None:
        """Values up to ``value`` of AUTO_INCREMENT ``column`` are handed out."""

    @abstractmethod
    def snapshot_scan(
            self, schema: TableSchema) -> AbstractContextManager[tuple[int, Iterator[Row]]]:
        """Every row of a table from one consistent snapshot, and its LSN (like ``lookup``),
        while the context lasts."""

    @abstractmethod
    def close(self) -> None: ...
