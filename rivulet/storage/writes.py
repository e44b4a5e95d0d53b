"""Write requests: what a write statement does to base tables, resolved at commit time.

An INSERT carries its rows, checked in the caller's thread. An UPDATE or DELETE carries a
compiled predicate (MySQL semantics, any WHERE) and is resolved by the commit worker
against the committed rows, so concurrent writes serialize correctly: the rows it changes
are those present when it commits. Each request becomes signed deltas for the dataflow.

A transaction's writes come as one :class:`TransactionWrite`: the rows it changed, resolved
when its statements ran, checked at commit against what is stored then (see
rivulet/engine/transaction.py and docs/transactions.md).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal

from rivulet.errors import OutOfRangeError, RivuletError, WriteConflictError
from rivulet.faults import fault_point
from rivulet.state.arrangement import Delta
from rivulet.storage.base import RowId, Storage
from rivulet.storage.upsert import OnDuplicate, Updater, resolve
from rivulet.values.conversions import strict_mode
from rivulet.values.schema import Row, TableSchema, coerce_row

WriteKind = Literal["insert", "update", "delete", "transaction"]

#: Held while a request's ``done`` event is made (see :attr:`WriteRequest.done`).
_MAKING_DONE = threading.Lock()


@dataclass
class WriteRequest:
    table: TableSchema
    kind: WriteKind
    rows: list[Row] = field(default_factory=list)  # insert: checked rows
    predicate: Callable[[Row, tuple], Any] | None = None
    assign: Callable[[Row, tuple], list[Any]] | None = None
    keys: list[tuple] | None = None  # primary keys that bound the rows considered
    #: ``[ORDER BY ...] LIMIT n``: of the rows an UPDATE or DELETE matched, the positions
    #: of those it writes.
    limit: Callable[[list[Row], tuple], list[int]] | None = None
    params: tuple = ()
    #: The statement's text, if it came from one (bound again after an ALTER TABLE).
    sql: str = ""
    #: An insert's rows whose key is taken: fail it, skip them, update or replace the rows
    #: holding the key (rivulet/storage/upsert.py).
    on_duplicate: OnDuplicate = OnDuplicate.ERROR
    #: ON DUPLICATE KEY UPDATE's assignments.
    update: Updater | None = None
    #: The positions of an insert's rows that asked for an AUTO_INCREMENT number.
    generated: frozenset[int] = frozenset()
    #: The instant of a statement that read the clock (a time function, a column's
    #: ``DEFAULT``/``ON UPDATE CURRENT_TIMESTAMP``): its ``params`` end with it.
    at: dt.datetime | None = None
    #: The session's ``foreign_key_checks``: FOREIGN KEYs checked and their actions carried
    #: out (rivulet/storage/foreign_keys.py), or neither.
    foreign_key_checks: bool = True
    # Set by the commit worker:
    lsn: int = 0
    rowcount: int = 0
    #: The rows an UPDATE matched, changed or not; an upsert's count as a client with
    #: CLIENT_FOUND_ROWS is told it (see :meth:`found`).
    matched: int = 0
    #: The first AUTO_INCREMENT value the insert generated, else the last it was given (0:
    #: none), as MySQL reports it in the OK packet.
    last_insert_id: int = 0
    error: BaseException | None = None
    #: Set once committed (or failed): made on first use (see :attr:`done`).
    _done: threading.Event | None = field(default=None, init=False, repr=False,
                                          compare=False)

    @property
    def done(self) -> threading.Event:
        """Set once the request is committed or has failed. Made when first asked for: a
        statement inside a transaction is never submitted on its own, and making an event
        (a lock and a condition) cost a tenth of such a statement. Made under a lock, so
        that the committer and the submitter, asking at once, share one."""
        event = self._done
        if event is None:
            with _MAKING_DONE:
                event = self._done
                if event is None:
                    event = self._done = threading.Event()
        return event

    @property
    def atomic(self) -> bool:
        """Whether :meth:`apply` either succeeds or changes nothing by itself, so the commit
        needs no savepoint around it: an INSERT is one ``Storage.insert``, which is atomic;
        an UPDATE deletes and inserts, and may fail in between."""
        return self.kind == "insert" and self.on_duplicate is OnDuplicate.ERROR

    @property
    def written(self) -> tuple[TableSchema, ...]:
        """The tables the write may change."""
        return (self.table,)

    @property
    def upsert(self) -> bool:
        """Whether this is an insert that resolves clashes row by row (IGNORE, ON DUPLICATE
        KEY UPDATE, REPLACE)."""
        return self.kind == "insert" and self.on_duplicate is not OnDuplicate.ERROR

    def apply(self, storage: Storage) -> list[Delta]:
        """Perform the write inside the open transaction; return its deltas."""
        if self.upsert:
            return self._upsert(storage)
        if self.kind == "insert":
            column = self.table.auto_column
            if column is not None:
                highest = self._number_rows(storage, column)
            storage.insert(self.table, self.rows)
            if column is not None:  # numbers of a rejected insert are handed out again
                storage.note_auto_increment(self.table, column, highest)
            self.rowcount = len(self.rows)
            return [(row, 1) for row in self.rows]
        matched = self._matching_rows(storage)
        if self.limit is not None:
            matched = [matched[i] for i in self.limit([row for _, row in matched], self.params)]
        if self.kind == "delete":
            storage.delete(self.table, [rid for rid, _ in matched])
            self.rowcount = len(matched)
            return [(row, -1) for _, row in matched]
        return self._update(storage, matched)

    def _upsert(self, storage: Storage) -> list[Delta]:
        """An insert resolving its clashes row by row against what is stored (inside the
        caller's savepoint: a failure leaves nothing of it)."""
        column = self.table.auto_column
        if column is not None:  # handed out, used or not, even if the statement fails
            storage.note_auto_increment(self.table, column, self._number_rows(storage, column))
        target = _Stored(storage, self.table)
        out = resolve(self.table, self.rows, self.on_duplicate, target, update=self.update,
                      params=self.params, generated=self.generated)
        self.rowcount, self.matched = out.affected, out.found
        self.last_insert_id = out.last_insert_id
        return target.deltas()

    def number_rows(self, storage: Storage) -> None:
        """Give the rows of an insert their AUTO_INCREMENT numbers now, and count the
        numbers as handed out (a transaction's insert is numbered when it runs, as MySQL
        numbers it: its rows then go to storage as they are at COMMIT)."""
        column = self.table.auto_column
        if self.kind == "insert" and column is not None:
            storage.note_auto_increment(self.table, column, self._number_rows(storage, column))

    def _number_rows(self, storage: Storage, column: int) -> int:
        """Give rows whose AUTO_INCREMENT column is 0 (NULL or no value was written) the
        next numbers, in row order, as MySQL does: each is one above every value stored,
        handed out before, or given explicitly by an earlier row of this insert. Returns
        the highest value of the column among the rows."""
        given = [row[column] for row in self.rows if row[column]]
        if len(given) == len(self.rows):
            self.last_insert_id = given[-1]
            return max(given)
        counter = storage.auto_increment_base(self.table, column)
        numbered, first = [], 0
        for row in self.rows:
            value = row[column]
            if not value:
                counter += 1
                value, first = counter, first or counter
                row = row[:column] + (value,) + row[column + 1:]
            counter = max(counter, value)
            numbered.append(row)
        col = self.table.columns[column]
        if col.bounds is not None and counter > col.bounds[1]:
            raise OutOfRangeError(f"{self.table.name}.{col.name}: AUTO_INCREMENT value "
                                  f"{counter} is out of range for {col.sql_type or col.kind}")
        self.rows, self.last_insert_id = numbered, first
        return counter

    def _matching_rows(self, storage: Storage) -> list[tuple[RowId, Row]]:
        candidates = (
            storage.get(self.table, self.keys) if self.keys is not None
            else storage.scan(self.table)
        )
        pred, params = self.predicate, self.params
        if pred is None:
            return list(candidates)
        out, seen = [], set()
        # MySQL's strict mode: a conversion that truncates (`v = 5` over v = 'abc') in the
        # WHERE of a row an UPDATE reads fails it. (A DELETE's WHERE only warns in MariaDB,
        # which deletes; MySQL 8 fails that DELETE too.)
        with strict_mode() if self.kind == "update" else nullcontext():
            for rid, row in candidates:
                if rid not in seen and pred(row, params):
                    seen.add(rid)
                    out.append((rid, row))
        return out

    def _update(self, storage: Storage, matched: list[tuple[RowId, Row]]) -> list[Delta]:
        assert self.assign is not None
        changes = []
        with strict_mode():  # (a truncating conversion in SET fails the UPDATE, as in MySQL)
            for rid, old in matched:
                new = coerce_row(self.table, self.assign(old, self.params), where="UPDATE: ")
                if new != old:
                    changes.append((rid, old, new))
        storage.delete(self.table, [rid for rid, _, _ in changes])
        storage.insert(self.table, [new for _, _, new in changes])
        self.rowcount, self.matched = len(changes), len(matched)
        return [(old, -1) for _, old, _ in changes] + [(new, 1) for _, _, new in changes]

    def found(self) -> int:
        """The affected-rows count of a client that asked for CLIENT_FOUND_ROWS (Django's
        and SQLAlchemy's MySQL backends do): an UPDATE counts the rows it matched, as
        MySQL's "Rows matched", not only those it changed; an ON DUPLICATE KEY UPDATE
        counts a row it left as it was as 1, not 0."""
        return self.matched if self.kind == "update" or self.upsert else self.rowcount

    def wait(self, timeout: float | None = None) -> int:
        if not self.done.wait(timeout):
            raise RivuletError(f"write not acknowledged within {timeout} s")
        if self.error is not None:
            raise self.error
        return self.rowcount


class _Stored:
    """The table as stored, inside the open transaction, for :func:`resolve`; keeps the
    deltas of what it changed."""

    def __init__(self, storage: Storage, schema: TableSchema) -> None:
        self.storage = storage
        self.schema = schema
        self.changes: dict[Row, int] = {}

    def holder(self, key: tuple[int, ...], value: tuple) -> tuple[RowId, Row] | None:
        found = self.storage.held(self.schema, key, value)
        return found[0] if found else None

    def insert(self, row: Row) -> None:
        self.storage.insert(self.schema, [row])
        self._note(row, 1)

    def delete(self, rid: RowId, row: Row) -> None:
        self.storage.delete(self.schema, [rid])
        self._note(row, -1)

    def update(self, rid: RowId, old: Row, new: Row) -> None:
        self.delete(rid, old)
        self.insert(new)  # (ConstraintError if a key of it is held by another row)

    def _note(self, row: Row, sign: int) -> None:
        count = self.changes.get(row, 0) + sign
        if count:
            self.changes[row] = count
        else:
            self.changes.pop(row, None)

    def deltas(self) -> list[Delta]:
        """What changed, a row inserted and deleted again by the statement cancelled out."""
        return list(self.changes.items())


#: What a transaction did to one row identity: the committed row it found there when it
#: first touched it (None: none), and the row it holds there now (None: deleted).
Change = tuple[Row | None, Row | None]


@dataclass(eq=False)
class TableChanges:
    """A transaction's changes to one table, by row identity (the primary key, or a row id:
    SQLite's for committed rows, a negative one for rows the transaction inserted into a
    table without a primary key)."""

    schema: TableSchema
    rows: dict[RowId, Change] = field(default_factory=dict)
    #: Rows the transaction's locking reads found (None: no row there), checked at commit
    #: as the rows it found before writing are, but not written.
    checked: dict[RowId, Row | None] = field(default_factory=dict)

    def apply(self, storage: Storage) -> list[Delta]:
        """Store the changes inside the open transaction, once every row the transaction
        found (and read under a lock) is checked to be there still as it found it (else
        nothing of it is stored: :class:`WriteConflictError`); returns the deltas."""
        schema = self.schema
        found: list[tuple[RowId, Row | None]] = [
            (rid, old) for rid, (old, _) in self.rows.items() if old is not None]
        found += [(rid, row) for rid, row in self.checked.items() if rid not in self.rows]
        stored = storage.rows_by_id(schema, [rid for rid, _ in found])
        for rid, old in found:
            if stored.get(rid) != old:
                raise WriteConflictError(
                    f"table {schema.name!r}: {_row_named(schema, rid)} was changed by another "
                    "commit after this transaction read or wrote it; the transaction was "
                    "rolled back (try restarting transaction)")
        changed = [(rid, old, new) for rid, (old, new) in self.rows.items() if old != new]
        if schema.primary_key and not schema.unique:
            # A row changed under its own key is stored over itself: no other key can clash
            # one row at a time (with UNIQUE keys, rows that trade values would).
            replaced = [new for _, old, new in changed if old is not None and new is not None]
            if replaced:
                storage.replace_rows(schema, replaced)
            deleted = [rid for rid, _, new in changed if new is None]
            if deleted:
                storage.delete(schema, deleted)
            inserted = [new for _, old, new in changed if old is None and new is not None]
            if inserted:
                storage.insert(schema, inserted)
        else:
            storage.delete(schema, [rid for rid, old, _ in changed if old is not None])
            storage.insert(schema, [new for _, _, new in changed if new is not None])
        return ([(old, -1) for _, old, _ in changed if old is not None]
                + [(new, 1) for _, _, new in changed if new is not None])


@dataclass(eq=False)
class TransactionWrite(WriteRequest):
    """A transaction's COMMIT: its changes to every table it wrote, committed as one
    request of the group commit (in a savepoint of its own: all or nothing)."""

    changes: list[TableChanges] = field(default_factory=list)

    @property
    def atomic(self) -> bool:
        return False

    @property
    def written(self) -> tuple[TableSchema, ...]:
        return tuple(part.schema for part in self.changes)

    def apply_changes(self, storage: Storage) -> list[tuple[TableSchema, list[Delta]]]:
        """Store every table's changes inside the open transaction (the caller's savepoint
        undoes them all if one fails); each table's deltas."""
        out = []
        for part in self.changes:
            out.append((part.schema, part.apply(storage)))
            fault_point("transaction_apply")
        self.rowcount = sum(old != new for part in self.changes for old, new in part.rows.values())
        return out


def _row_named(schema: TableSchema, rid: RowId) -> str:
    if not schema.primary_key:
        return "a row it changed"
    names = ", ".join(schema.columns[i].name for i in schema.primary_key)
    shown = ", ".join(repr(v) for v in rid)
    return f"the row with primary key ({names}) = ({shown})"
