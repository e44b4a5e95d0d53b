"""What an INSERT does with a row whose key is taken: ``INSERT IGNORE``, ``INSERT ... ON
DUPLICATE KEY UPDATE`` and ``REPLACE``, resolved row by row as MySQL (InnoDB) does.

The rows go in order, each against the table as the earlier rows of the statement left it
(a second row with the same key updates the row the first inserted). The keys are
checked in InnoDB's order, the primary key first, then each UNIQUE key as declared; two
values clash when they are equal as stored (NULLs never clash). The same resolution runs
against storage in the group commit (:class:`~rivulet.storage.writes.WriteRequest`) and
against a transaction's write set laid over the committed rows
(rivulet/engine/transaction.py): each gives it a :class:`Table` to read and change.

What MySQL counts, and rivulet with it (``mysql_affected_rows()``, ``mysql_insert_id()``):

* IGNORE: a row that clashes is skipped; the rows inserted.
* ON DUPLICATE KEY UPDATE: the first row that holds a clashing key (in key order) is
  updated by the assignments; 1 per row inserted, 2 per row changed, 0 per row the update
  left as it was (a client with CLIENT_FOUND_ROWS counts it 1: :attr:`Outcome.found`).
* REPLACE: every row that holds a clashing key is deleted, then the row inserted; the rows
  deleted plus those inserted, except that a clash on the table's last unique key alone is
  an update in place, which counts 1 when it changes nothing.
* AUTO_INCREMENT: the statement's numbers are handed out before it runs (one per row that
  asks for one); a row that is not inserted gives its number back to the next row of the
  statement. LAST_INSERT_ID is the first number inserted; else, if any row was written,
  the AUTO_INCREMENT value of the last one written; else 0.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from rivulet.storage.base import RowId
from rivulet.values.conversions import strict_mode
from rivulet.values.schema import Row, TableSchema, coerce_row


class OnDuplicate(enum.Enum):
    """What an INSERT does with a row whose primary or UNIQUE key is taken."""

    #: A plain INSERT: the statement fails (1062) and changes nothing.
    ERROR = "error"
    #: ``INSERT IGNORE``: the row is skipped.
    IGNORE = "ignore"
    #: ``INSERT ... ON DUPLICATE KEY UPDATE``: the row holding the key is updated.
    UPDATE = "update"
    #: ``REPLACE``: the rows holding its keys are deleted, then it is inserted.
    REPLACE = "replace"


#: The assignments of ON DUPLICATE KEY UPDATE: the updated row from the row holding the
#: key, the row the INSERT proposed and the statement's parameters (not yet checked
#: against the schema).
Updater = Callable[[Row, Row, tuple], list[Any]]


class Table(Protocol):
    """A table as one statement sees it while it resolves its rows."""

    def holder(self, key: tuple[int, ...], value: tuple) -> tuple[RowId, Row] | None:
        """The row whose ``key`` columns hold ``value`` now, with its identity."""
        ...

    def insert(self, row: Row) -> None:
        """Insert ``row`` (no key of it is held: the resolution checked)."""
        ...

    def delete(self, rid: RowId, row: Row) -> None:
        """Delete the row ``rid`` holds, ``row``."""
        ...

    def update(self, rid: RowId, old: Row, new: Row) -> None:
        """Row ``rid`` becomes ``new``; a key of ``new`` held by another row is a duplicate
        (ConstraintError, the whole statement failing)."""
        ...


@dataclass
class Outcome:
    """What a statement did, as MySQL reports it."""

    affected: int = 0
    #: The affected rows a client with CLIENT_FOUND_ROWS is told.
    found: int = 0
    last_insert_id: int = 0


def unique_keys(schema: TableSchema) -> list[tuple[int, ...]]:
    """The keys a row may clash on, in the order InnoDB checks them."""
    keys = [schema.primary_key] if schema.primary_key else []
    return keys + [tuple(k) for k in schema.unique]


def resolve(schema: TableSchema, rows: list[Row], mode: OnDuplicate, table: Table, *,
            update: Updater | None = None, params: tuple = (),
            generated: frozenset[int] = frozenset()) -> Outcome:
    """Write ``rows`` (checked; those at positions ``generated`` numbered by the statement)
    into ``table`` one by one, each clash resolved as ``mode`` says (see the module
    docstring). Raises as the statement fails (the caller undoes what it did)."""
    keys = unique_keys(schema)
    auto = schema.auto_column
    counter = min((rows[i][auto] for i in generated), default=1) - 1 if auto is not None else 0
    out = Outcome()
    first_generated = 0
    last_written: Row | None = None
    for position, row in enumerate(rows):
        if auto is not None and position in generated:
            row = row[:auto] + (counter + 1,) + row[auto + 1:]
        written, inserted = _resolve_row(schema, keys, row, mode, table, update, params, out)
        if written is not None:
            last_written = written
        if inserted and auto is not None:
            counter = max(counter, row[auto])
            if position in generated and not first_generated:
                first_generated = row[auto]
    if auto is not None:
        out.last_insert_id = first_generated or (
            last_written[auto] if last_written is not None else 0)
    return out


def _resolve_row(schema: TableSchema, keys: list[tuple[int, ...]], row: Row, mode: OnDuplicate,
                 table: Table, update: Updater | None, params: tuple,
                 out: Outcome) -> tuple[Row | None, bool]:
    """One row: the row written (None: none) and whether ``row`` itself was inserted."""
    if mode is OnDuplicate.REPLACE:
        return _replace(keys, row, table, out)
    for _, (rid, old) in _holders(keys, row, table):
        if mode is OnDuplicate.IGNORE:
            return None, False
        assert update is not None
        with strict_mode():  # (a truncating conversion fails the statement, as in UPDATE)
            new = coerce_row(schema, update(old, row, params), where="UPDATE: ")
        if new == old:
            out.found += 1
            return None, False
        table.update(rid, old, new)
        out.affected += 2
        out.found += 2
        return new, False
    table.insert(row)
    out.affected += 1
    out.found += 1
    return row, True


def _replace(keys: list[tuple[int, ...]], row: Row, table: Table,
             out: Outcome) -> tuple[Row | None, bool]:
    """REPLACE of one row: each row holding one of its keys deleted, in key order; a
    clash on the last key is an update in place of the row holding it (MySQL's shortcut,
    which counts no delete when the row stays as it was)."""
    count = 1
    for at, (rid, old) in _holders(keys, row, table):
        if at == len(keys) - 1:
            if old != row:
                table.update(rid, old, row)
                count += 1
            out.affected += count
            out.found += count
            return row, True
        table.delete(rid, old)
        count += 1
    table.insert(row)
    out.affected += count
    out.found += count
    return row, True


def _holders(keys: list[tuple[int, ...]], row: Row,
             table: Table) -> Iterator[tuple[int, tuple[RowId, Row]]]:
    """Each key of ``row`` (by its position in ``keys``) that a stored row holds, with that
    row (its id, its values); a key with a NULL in it clashes with none. Looked up one at a
    time, so what the caller does to one holder (REPLACE deletes it) the next lookup sees."""
    for at, key in enumerate(keys):
        value = tuple(row[i] for i in key)
        if None in value:
            continue
        held = table.holder(key, value)
        if held is not None:
            yield at, held
