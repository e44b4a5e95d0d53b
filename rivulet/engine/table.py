"""A write handle on one base table: rows in, by the embedded API (``db.table(name)``)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from rivulet.engine.limits import Limits
from rivulet.engine.writers import check_rows
from rivulet.errors import SqlError
from rivulet.storage.writes import WriteRequest
from rivulet.values.schema import Row, TableSchema


class Writes(Protocol):
    """What a table handle needs of its database (:class:`~rivulet.engine.database.Database`)."""

    @property
    def limits(self) -> Limits: ...

    def submit(self, request: WriteRequest) -> int: ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int | list[Row]: ...


class Table:
    """Write handle on a base table."""

    def __init__(self, db: Writes, schema: TableSchema) -> None:
        self._db = db
        self.schema = schema
        self.name = schema.name
        self.columns = schema.column_names

    def insert(self, row: Sequence[Any] | dict[str, Any]) -> int:
        return self.insert_many([row])

    def insert_many(self, rows: Iterable[Sequence[Any] | dict[str, Any]]) -> int:
        """Insert rows (sequences in column order, or dicts by column name) atomically:
        either all are committed or, if any is bad, none is. Returns the count."""
        most = self._db.limits.max_batch_rows
        checked = check_rows(self.schema, itertools.islice(rows, most + 1))
        self._db.limits.check_batch(len(checked))
        if not checked:
            return 0
        return self._db.submit(WriteRequest(self.schema, "insert", rows=checked))

    def update(self, where: str = "", params: Sequence[Any] = (), **assignments: Any) -> int:
        """``UPDATE <table> SET col = value, ... [WHERE <where>]``; values are constants.

        Example: ``table.update("id = ?", [7], title="new")``. Returns rows changed.
        """
        if not assignments:
            raise SqlError("update() needs at least one column=value assignment")
        sets = ", ".join(f"`{c}` = ?" for c in assignments)
        sql = f"UPDATE `{self.name}` SET {sets}" + (f" WHERE {where}" if where else "")
        return _count(self._db.execute(sql, [*assignments.values(), *params]))

    def delete(self, where: str = "", params: Sequence[Any] = ()) -> int:
        """``DELETE FROM <table> [WHERE <where>]``. Returns rows deleted."""
        sql = f"DELETE FROM `{self.name}`" + (f" WHERE {where}" if where else "")
        return _count(self._db.execute(sql, list(params)))

    def __repr__(self) -> str:
        return f"<Table {self.name} ({', '.join(self.columns)})>"


def _count(result: int | list[Row]) -> int:
    """What an UPDATE or DELETE returns: the rows it changed."""
    if not isinstance(result, int):
        raise TypeError("a write statement returned rows")
    return result
