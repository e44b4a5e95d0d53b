"""Write requests: what a write statement does to base tables, resolved at commit time.

An INSERT carries its rows, checked in the caller's thread. An UPDATE or DELETE carries a
compiled predicate (MySQL semantics, any WHERE) and is resolved by the commit worker
against the committed rows, so concurrent writes serialize correctly: the rows it changes
are those present when it commits. Each request becomes signed deltas for the dataflow.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from rivulet.errors import RivuletError
from rivulet.schema import Row, TableSchema, coerce_row
from rivulet.state.arrangement import Delta
from rivulet.storage.base import RowId, Storage


@dataclass
class WriteRequest:
    table: TableSchema
    kind: str  # "insert", "update" or "delete"
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
            storage.insert(self.table, self.rows)
            self.rowcount = len(self.rows)
            return [(row, 1) for row in self.rows]
        matched = self._matching_rows(storage)
        if self.kind == "delete":
            storage.delete(self.table, [rid for rid, _ in matched])
            self.rowcount = len(matched)
            return [(row, -1) for _, row in matched]
        return self._update(storage, matched)

    def _matching_rows(self, storage: Storage) -> list[tuple[RowId, Row]]:
        candidates = (
            storage.get(self.table, self.keys) if self.keys is not None else storage.scan(self.table)
        )
        pred, params = self.predicate, self.params
        if pred is None:
            return list(candidates)
        out, seen = [], set()
        for rid, row in candidates:
            if rid not in seen and pred(row, params):
                seen.add(rid)
                out.append((rid, row))
        return out

    def _update(self, storage: Storage, matched: list[tuple[RowId, Row]]) -> list[Delta]:
        assert self.assign is not None
        changes = []
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
