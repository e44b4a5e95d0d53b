"""Rows as SQLite stores them: column types, values converted both ways, statement texts.

SQLite has no DECIMAL, DATE, DATETIME, TIME or ENUM: such values are stored as text or
numbers (a TIME as its microseconds, an ENUM as its member's text: ``TO_DB``) and read back
as Python values (:func:`from_db`: an ENUM's member is found by its text among the column's
members). :class:`TableSql` holds a table schema's statement texts and row converters;
:func:`lookup_sql` reads rows by a list of keys; :func:`convert_rows` rewrites stored values
after ``ALTER TABLE`` changes a column's type.

Why a module of its own: these are pure functions of a schema (no connection, no lock),
shared by the storage (:mod:`rivulet.storage.sqlite`) and by Spark's frozen copies of the
database file (``convert_all``); the storage class keeps the connections and what runs on
them.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rivulet.storage.sqlite_bulk import fetch_at_once, slices, values_list
from rivulet.values.enumerations import stored_member
from rivulet.values.schema import (
    BOOL,
    BYTES,
    DATE,
    DATETIME,
    DECIMAL,
    ENUM,
    FLOAT,
    INT,
    STR,
    TIME,
    Column,
    Row,
    TableSchema,
)
from rivulet.values.times import from_micros, micros

SQLITE_TYPES = {INT: "INTEGER", BOOL: "INTEGER", FLOAT: "REAL", STR: "TEXT", BYTES: "BLOB",
                 DECIMAL: "TEXT", DATE: "TEXT", DATETIME: "TEXT", ENUM: "TEXT", TIME: "INTEGER"}

TO_DB: dict[str, Callable[[Any], Any]] = {
    DECIMAL: str,
    DATE: dt.date.isoformat,
    DATETIME: lambda v: v.isoformat(sep=" "),
    ENUM: str,
    TIME: micros,
}
FROM_DB: dict[str, Callable[[Any], Any]] = {
    DECIMAL: decimal.Decimal,
    DATE: dt.date.fromisoformat,
    DATETIME: dt.datetime.fromisoformat,
    TIME: from_micros,
}


#: Wide enough to give any DECIMAL key its column's scale (as writes do: 65 digits at most).
_WIDE = decimal.Context(prec=200)


def from_db(column: Column) -> Callable[[Any], Any] | None:
    """The function reading ``column``'s stored values back (None: stored as they are)."""
    if column.kind == ENUM:
        return functools.partial(stored_member, column.members)
    return FROM_DB.get(column.kind)


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _converter(schema: TableSchema,
               of_column: Callable[[Column], Callable[[Any], Any] | None],
               ) -> Callable[[Row], Row] | None:
    """A function converting a row's values for (or from) SQLite, or None if none need it."""
    fns = [(i, fn) for i, c in enumerate(schema.columns) if (fn := of_column(c))]
    if not fns:
        return None

    def convert(row: Row) -> Row:  # touches only the columns that need it: rows come by the 10,000
        values = list(row)
        for i, fn in fns:
            v = values[i]
            if v is not None:
                values[i] = fn(v)
        return tuple(values)

    return convert


def key_converter(column: Column) -> Callable[[Any], Any] | None:
    """How a key value of ``column`` is written to find the rows that hold it: as the
    column stores it (``TO_DB``). A DECIMAL(p, s) is stored as text with exactly s places
    (values are quantized on write), so a key is written with s places too: Decimal('1.5')
    finds '1.50'. A key with more places than s keeps them, and finds no row (none equals
    it)."""
    if column.kind != DECIMAL or column.scale is None:
        return TO_DB.get(column.kind)
    step = decimal.Decimal(1).scaleb(-column.scale)

    def stored_text(v: decimal.Decimal) -> str:
        try:
            placed = v.quantize(step, context=_WIDE)
        except decimal.InvalidOperation:  # more digits than a decimal holds: no such row
            return str(v)
        return str(placed) if placed == v else str(v)

    return stored_text


def looked_up_as_number(column: Column) -> bool:
    """Whether a lookup finds ``column``'s rows by their numeric value rather than their
    stored text: a DECIMAL without a declared scale keeps each value's text as it came
    ('1.5', '1.50'), so no one text finds every value equal to a key. Its key is written as
    a double and the column read as one: a looser match (callers keep the rows whose value
    equals their key), and no index."""
    return column.kind == DECIMAL and column.scale is None


#: The integers SQLite binds: a wider one (a client's ``WHERE id = 99999999999999999999``)
#: is bound as its text, which an INTEGER or REAL column compares as a number (equal to no
#: stored integer) and a TEXT column as text.
_SQLITE_INTS = range(-2**63, 2**63)


def key_to_db(key: Any, to_db: list[Callable | None], width: int) -> tuple:
    values = (key,) if width == 1 else key
    return tuple(_bindable(v) if fn is None or v is None else fn(v)
                 for v, fn in zip(values, to_db))


def _bindable(value: Any) -> Any:
    return str(value) if type(value) is int and value not in _SQLITE_INTS else value


def lookup_sql(table: str, names: list[str], target: list[str], width: int, count: int,
               numeric: Sequence[bool] = ()) -> str:
    """The rows of ``table`` whose ``target`` columns equal one of ``count`` keys (those
    marked ``numeric`` compared as doubles: :func:`looked_up_as_number`). Several
    columns join a list of keys rather than ``(a, b) IN (VALUES ...)``, which SQLite runs as
    a scan of the whole table (63 ms instead of 0.02 ms per lookup on 600,000 votes)."""

    def read(column: str, i: int) -> str:
        return f"CAST({column} AS REAL)" if i < len(numeric) and numeric[i] else column

    if width == 1:
        return (f"SELECT {', '.join(names)} FROM {quote(table)} "
                f"WHERE {read(target[0], 0)} IN ({', '.join('?' * count)})")
    row = f"({', '.join('?' * width)})"
    keys = ", ".join(f"k{i}" for i in range(width))
    on = " AND ".join(f"{read('t.' + col, i)} = {_KEYS}.k{i}" for i, col in enumerate(target))
    columns = ", ".join(f"t.{n}" for n in names)
    return (f"WITH {_KEYS}({keys}) AS (VALUES {', '.join([row] * count)}) "
            f"SELECT {columns} FROM {quote(table)} AS t JOIN {_KEYS} ON {on}")


#: The name of the list of keys in :func:`lookup_sql`: a reserved name, which no table can
#: have (a table named like it would be read as the list).
_KEYS = "_rivulet_keys"


class TableSql:
    """The statement texts and value converters of one table schema.

    Rows are read by column name, so stored columns that a schema change dropped (renamed
    out of sight) are never read; columns being converted to a new type are read with
    their old values (``Conversion.source``), appended after the row's own columns, and
    converted on the way out while a row has one."""

    def __init__(self, schema: TableSchema) -> None:
        self.schema = schema
        table = quote(schema.name)
        self.names = [quote(c.name) for c in schema.columns]
        sources = [quote(c.conversion.source) for c in schema.columns if c.conversion]
        self.selected = self.names + sources
        listed = ", ".join(self.selected)
        marks = ", ".join("?" for _ in schema.columns)
        self.insert = f"INSERT INTO {table} ({', '.join(self.names)}) VALUES ({marks})"
        if schema.primary_key:
            where = " AND ".join(f"{self.names[i]} = ?" for i in schema.primary_key)
            self.select = f"SELECT {listed} FROM {table}"
        else:
            where = "rowid = ?"
            self.select = f"SELECT rowid, {listed} FROM {table}"
        self.delete = f"DELETE FROM {table} WHERE {where}"
        #: A row stored over the one of its primary key, in place (the key's values are
        #: bound twice: as columns, then in the WHERE). Only for a table no column of which
        #: is being converted (a converted row's old value must be cleared: see
        #: :func:`convert_rows`); None otherwise.
        self.replace = (f"UPDATE {table} SET {', '.join(f'{n} = ?' for n in self.names)} "
                        f"WHERE {where}") if schema.primary_key and not sources else None
        self.get = f"{self.select} WHERE {where}"
        self.select_all = f"SELECT {listed} FROM {table}"
        self.unconverted = (f"{self.select_all} WHERE "
                            + " OR ".join(f"{s} IS NOT NULL" for s in sources)) if sources else ""
        self.to_db = _converter(schema, lambda c: TO_DB.get(c.kind))
        self.from_db = _reader(schema)
        self._keyed: dict[tuple[tuple[int, ...], bool], KeyedRead] = {}

    def keyed(self, columns: tuple[int, ...], with_rowid: bool) -> KeyedRead:
        """How rows are read by the values of ``columns`` (made once per columns: a
        transaction reads a few keys per statement, where building the text and the
        converters cost as much as the read)."""
        known = self._keyed.get((columns, with_rowid))
        if known is None:
            known = self._keyed[columns, with_rowid] = KeyedRead(self, columns, with_rowid)
        return known


class KeyedRead:
    """The rows of a table whose ``columns`` hold one of a list of keys: each key's
    values as SQLite compares them (:func:`key_to_db`), and :func:`lookup_sql`'s text for
    each number of keys."""

    def __init__(self, sql: TableSql, columns: tuple[int, ...], with_rowid: bool) -> None:
        schema = sql.schema
        self.table = schema.name
        self.names = ["rowid", *sql.selected] if with_rowid else sql.selected
        self.target = [quote(schema.columns[i].name) for i in columns]
        self.numeric = [looked_up_as_number(schema.columns[i]) for i in columns]
        self.to_db: list[Callable[[Any], Any] | None] = [
            float if n else key_converter(schema.columns[i])
            for i, n in zip(columns, self.numeric)]
        self.width = len(columns)
        self._texts: dict[int, str] = {}

    def values(self, keys: Iterable[Any]) -> list[tuple]:
        """The keys as bound, each once (a key given twice must not find its rows twice)."""
        to_db, width = self.to_db, self.width
        return list(dict.fromkeys(key_to_db(k, to_db, width) for k in keys))

    def text(self, count: int) -> str:
        text = self._texts.get(count)
        if text is None:
            text = lookup_sql(self.table, self.names, self.target, self.width, count,
                              self.numeric)
            if len(self._texts) < 64:
                self._texts[count] = text
        return text


def _reader(schema: TableSchema) -> Callable[[Row], Row] | None:
    """Stored row -> row: values converted from SQLite's, and rows not yet converted to a
    column's new type converted now (without storing them: see convert_rows)."""
    plain = _converter(schema, from_db)
    width = len(schema.columns)
    converting = [(i, c.conversion) for i, c in enumerate(schema.columns)
                  if c.conversion is not None]
    pending = [(i, width + j, conversion, from_db(conversion.old))
               for j, (i, conversion) in enumerate(converting)]
    if not pending:
        return plain

    def read(row: Row) -> Row:
        values = list(row[:width] if plain is None else plain(row[:width]))
        for i, at, conversion, from_db in pending:
            old = row[at]
            if old is not None:
                values[i] = conversion.convert(old if from_db is None else from_db(old))
        return tuple(values)

    return read


def convert_rows(conn: sqlite3.Connection, schema: TableSchema, limit: int,
                 after: tuple | None = None) -> tuple[int, tuple | None]:
    """Convert up to ``limit`` stored rows per converting column of ``schema`` on ``conn``
    (in the caller's transaction), in row order from just ``after`` the row identity given
    (None: the first), so that each chunk starts where the last one stopped instead of
    scanning the converted rows again: the new value stored, the old one cleared, in one
    statement per column, guarded by the old one's not being cleared yet. Returns the rows
    converted and the identity of the last row looked at (None: the end of the table).

    The rows are read in one step and written with one statement per column
    (:mod:`rivulet.storage.sqlite_bulk`: a step per row waited for the GIL each time a
    reader thread kept it busy); only the conversion itself runs in Python, per value."""
    table = quote(schema.name)
    pk = schema.primary_key
    ident = [quote(schema.columns[i].name) for i in pk] if pk else ["rowid"]
    order = ", ".join(ident)
    start = "" if after is None else f"({order}) > ({', '.join('?' * len(ident))}) AND "
    converting = [c for c in schema.columns if c.conversion is not None]
    sources = [quote(c.conversion.source) for c in converting
               if c.conversion is not None]  # (every one of them)
    pending = " OR ".join(f"{s} IS NOT NULL" for s in sources)
    width = len(ident)
    rows = fetch_at_once(conn, f"SELECT {order}, {', '.join(sources)} FROM {table} "
                               f"WHERE {start}({pending}) ORDER BY {order} LIMIT ?",
                         (*(after or ()), limit), width + len(sources), sorted_by=width)
    # (``_rivulet_new`` holds the new value, then the row's identity: columns column1...)
    on = " AND ".join(f"{table}.{c} = _rivulet_new.column{k + 2}" for k, c in enumerate(ident))
    done = 0
    for j, column in enumerate(converting):
        conversion = column.conversion
        assert conversion is not None
        old_from = from_db(conversion.old)
        new_to = TO_DB.get(column.kind)
        updates = []
        for row in rows:
            old = row[width + j]
            if old is None:
                continue
            new = conversion.convert(old if old_from is None else old_from(old))
            updates.append((new if new is None or new_to is None else new_to(new), *row[:width]))
        for part in slices(updates, 1 + width):
            listed, params = values_list(part, 1 + width)
            conn.execute(f"UPDATE {table} SET {quote(column.name)} = _rivulet_new.column1, "
                         f"{sources[j]} = NULL FROM ({listed}) AS _rivulet_new "
                         f"WHERE {on} AND {table}.{sources[j]} IS NOT NULL", params)
        done += len(updates)
    return done, (tuple(rows[-1][:width]) if len(rows) == limit else None)


def convert_all(conn: sqlite3.Connection, schemas: Iterable[TableSchema]) -> int:
    """Finish every conversion on ``conn`` at once (a frozen copy that Spark reads)."""
    total = 0
    for schema in schemas:
        after: tuple | None = None
        while schema.converting:
            done, after = convert_rows(conn, schema, 10_000, after)
            total += done
            if after is None:
                break
    conn.commit()
    return total


def sql_literal(column: Any, value: Any) -> str:
    """A constant for a SQLite ``DEFAULT`` clause."""
    fn = TO_DB.get(column.kind)
    value = value if fn is None else fn(value)
    if isinstance(value, (bool, int, float)):
        return repr(int(value) if isinstance(value, bool) else value)
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    return "'" + str(value).replace("'", "''") + "'"


__all__ = ["FROM_DB", "SQLITE_TYPES", "TO_DB", "TableSql", "convert_all", "convert_rows",
           "from_db", "key_converter", "key_to_db", "looked_up_as_number", "lookup_sql",
           "quote", "sql_literal"]
