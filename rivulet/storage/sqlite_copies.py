"""The bookkeeping of lazily copied tables on SQLite (rivulet/migrate/copy.py, lazy.py).

A table split off another by ``CREATE TABLE ... AS SELECT`` is copied key by key: each
key copied is marked, in the same transaction, in a tracking table of its own, and the
background copier walks the source table's keys in order, a chunk at a time.

Why a module of its own: these tables and walks serve only lazy copies, not the base
tables' rows or the write log. :class:`CopyTracking` is a part of
:class:`rivulet.storage.sqlite.SqliteStorage` and runs on its writer's connection, inside
the open transaction.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from rivulet.storage.sqlite_bulk import fetch_at_once, insert_at_once, slices, values_list
from rivulet.storage.sqlite_rows import from_db, key_converter, key_to_db, quote
from rivulet.values.schema import TableSchema


class CopyTracking:
    """The tracking tables of lazy copies, and the walk over a source table's keys."""

    #: The writer's connection (:class:`rivulet.storage.sqlite.SqliteStorage` sets it).
    conn: sqlite3.Connection

    def create_tracking(self, name: str, width: int) -> None:
        """The table of keys copied so far of a lazily copied table (rivulet/migrate/copy.py)."""
        keys = ", ".join(f"k{i}" for i in range(width))
        self.conn.execute(
            f"CREATE TABLE {quote(name)} ({keys}, PRIMARY KEY ({keys})) WITHOUT ROWID")

    def has_table(self, name: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                 (name,)).fetchone() is not None

    def drop_tracking(self, name: str) -> None:
        self.conn.execute(f"DROP TABLE IF EXISTS {quote(name)}")

    def untracked(self, tracking: str, schema: TableSchema, columns: tuple[int, ...],
                  keys: list[Any]) -> list[Any]:
        """Those of ``keys`` (of ``columns`` of ``schema``) not marked in ``tracking``, in
        their order (one statement for them all: see :mod:`rivulet.storage.sqlite_bulk`)."""
        to_db = [key_converter(schema.columns[i]) for i in columns]
        width = len(columns)
        stored = {key_to_db(key, to_db, width): key for key in keys}
        where = " AND ".join(f"k{i} IS _rivulet_keys.column{i + 1}" for i in range(width))
        listed = ", ".join(f"column{i + 1}" for i in range(width))
        left: set[tuple] = set()
        for part in slices(list(stored), width):
            values, params = values_list(part, width)
            left.update(fetch_at_once(
                self.conn, f"SELECT {listed} FROM ({values}) AS _rivulet_keys WHERE NOT EXISTS "
                           f"(SELECT 1 FROM {quote(tracking)} WHERE {where})", params, width))
        return [key for value, key in stored.items() if value in left]

    def track(self, tracking: str, schema: TableSchema, columns: tuple[int, ...],
              keys: list[Any]) -> None:
        to_db = [key_converter(schema.columns[i]) for i in columns]
        insert_at_once(self.conn, quote(tracking), [f"k{i}" for i in range(len(columns))],
                       [key_to_db(k, to_db, len(columns)) for k in keys])

    def keys_after(self, schema: TableSchema, columns: tuple[int, ...], limit: int,
                   after: Any = None) -> list[Any]:
        """Up to ``limit`` distinct keys (``columns``) of ``schema``'s rows, in order, from
        just after ``after`` (None: the first): one pass over an index on them, read in one
        step (:mod:`rivulet.storage.sqlite_bulk`)."""
        names = [quote(schema.columns[i].name) for i in columns]
        listed = ", ".join(names)
        start = ""
        params: list[Any] = []
        if after is not None:
            to_db = [key_converter(schema.columns[i]) for i in columns]
            params = list(key_to_db(after, to_db, len(columns)))
            start = f"WHERE ({listed}) > ({', '.join('?' * len(columns))}) "
        rows = fetch_at_once(self.conn, f"SELECT DISTINCT {listed} FROM {quote(schema.name)} "
                                        f"{start}ORDER BY {listed} LIMIT ?",
                             (*params, limit), len(columns), sorted_by=len(columns))
        readers = [from_db(schema.columns[i]) for i in columns]
        keys = [tuple(v if f is None or v is None else f(v) for v, f in zip(r, readers))
                for r in rows]
        return [k[0] for k in keys] if len(columns) == 1 else keys


__all__ = ["CopyTracking"]
