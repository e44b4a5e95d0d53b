"""Write requests: what a write statement does to base tables, resolved at commit time.

An INSERT carries its rows, checked in the caller's thread. An UPDATE or DELETE carries a
compiled predicate (MySQL semantics, any WHERE) and is resolved by the commit worker
against the committed rows, so concurrent writes serialize correctly: the rows it changes
are those present when it commits. Each request becomes signed deltas for the dataflow.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal

from rivulet.errors import OutOfRangeError, RivuletError
from rivulet.state.arrangement import Delta
from rivulet.storage.base import RowId, Storage
from rivulet.values.conversions import strict_mode
from rivulet.values.schema import Row, TableSchema, coerce_row

WriteKind = Literal["insert", "update", "delete"]


@dataclass
class WriteRequest:
    table: TableSchema
    kind: WriteKind
    rows: list[Row] = field(default_factory=list)  # insert: checked rows
    predicate: Callable[[Row, tuple], Any] | None = None
    assign: Callable[[Row, tuple], list[Any]] | None = None
    keys: list[tuple] | None = None  # primary keys that bound the rows considered
    params: tuple = ()
    #: The statement's text, if it came from one (bound again after an ALTER TABLE).
    sql: str = ""
    # Set by the commit worker:
    lsn: int = 0
    rowcount: int = 0
    #: The first AUTO_INCREMENT value the insert generated, else the last it was given (0:
    #: none), as MySQL reports it in the OK packet.
    last_insert_id: int = 0
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def atomic(self) -> bool:
        """Whether :meth:`apply` either succeeds or changes nothing by itself, so the commit
        needs no savepoint around it: an INSERT is one ``Storage.insert``, which is atomic;
        an UPDATE deletes and inserts, and may fail in between."""
        return self.kind == "insert"

    def apply(self, storage: Storage) -> list[Delta]:
        """Perform the write inside the open transaction; return its deltas."""
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
        if self.kind == "delete":
            storage.delete(self.table, [rid for rid, _ in matched])
            self.rowcount = len(matched)
            return [(row, -1) for _, row in matched]
        return self._update(storage, matched)

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
        self.rowcount = len(changes)
        return [(old, -1) for _, old, _ in changes] + [(new, 1) for _, _, new in changes]

    def wait(self, timeout: float | None = None) -> int:
        if not self.done.wait(timeout):
            raise RivuletError(f"write not acknowledged within {timeout} s")
        if self.error is not None:
            raise self.error
        return self.rowcount
