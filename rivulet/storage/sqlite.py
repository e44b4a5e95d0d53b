"""Base tables, the program and the write log in one SQLite database (WAL mode).

Durability: WAL with ``synchronous=NORMAL`` by default. A commit is in the WAL file, in the
operating system's hands, before the write is acknowledged, so it survives the process
being killed at any moment (SIGKILL included). On power loss or an OS crash, the last
commits since the previous checkpoint may be lost (never corrupted). ``durability="full"``
sets ``synchronous=FULL`` (fsync on every commit) for power-loss durability too.

Each user table is a SQLite table of the same name. A table whose primary key is one
INTEGER column stores it as SQLite's rowid (the fastest layout); other primary keys make a
``WITHOUT ROWID`` table; a table without a primary key uses SQLite's hidden rowid as row
identity. Secondary indexes are created only as upqueries need them (``ensure_index``): the
dataflow reads a base table by the columns a partial view's key reaches it by, and every
SQLite index costs insert throughput.

Upqueries read on a second connection (:meth:`lookup`), in a read transaction that also
reads the last LSN: in WAL mode both see one snapshot, so the engine knows exactly which
writes the rows include, while the writer goes on committing.

How rows are encoded for SQLite (types, value conversions, statement texts, conversion
after a column's type changes) is :mod:`rivulet.storage.sqlite_rows`; the tracking tables of
lazy copies are :mod:`rivulet.storage.sqlite_copies`; many rows read or written in one
step for the lazy background work, :mod:`rivulet.storage.sqlite_bulk`. This module keeps
the connections and what runs on them: transactions, the write log, the program, rows,
lookups, scans.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rivulet.errors import ConstraintError, StorageError
from rivulet.storage.base import (
    AddIndex,
    AddStored,
    DropIndex,
    ProgramStatement,
    RenameStored,
    RowId,
    Storage,
)
from rivulet.storage.sqlite_bulk import fetch_at_once, insert_at_once
from rivulet.storage.sqlite_copies import CopyTracking
from rivulet.storage.sqlite_rows import (
    SQLITE_TYPES,
    TableSql,
    convert_rows,
    key_converter,
    key_to_db,
    looked_up_as_number,
    lookup_sql,
    quote,
    sql_literal,
)
from rivulet.values.schema import INT, Row, TableSchema

DB_FILE = "rivulet.db"

SYNCHRONOUS = {"normal": "NORMAL", "full": "FULL"}


#: SQLite's page cache per connection (the writer's and the reader's), without a memory limit.
PAGE_CACHE_BYTES = 64 << 20


#: At most this for the page cache of the connection that serves upqueries (point lookups by
#: index, and the scans statistics make). Misses read a few pages each, which the operating
#: system's page cache holds anyway, while a 64 MiB cache over a partial program's reads
#: grew to a quarter of its resident memory, unaccounted (bench.memory: 6.4 of 21 MB).
READ_PAGE_CACHE_BYTES = 4 << 20


def page_cache_bytes(memory_limit: int | None) -> int:
    """Each connection's page cache: with a memory limit, an eighth of it (at least 1 MiB,
    at most the default), so that the two caches, which the limit does not account, keep
    the process near the limit instead of 128 MiB above it."""
    if memory_limit is None:
        return PAGE_CACHE_BYTES
    return max(1 << 20, min(PAGE_CACHE_BYTES, memory_limit // 8))


class SqliteStorage(CopyTracking, Storage):
    def __init__(self, directory: str | Path, *, durability: str = "normal",
                 cache_bytes: int = PAGE_CACHE_BYTES) -> None:
        if durability not in SYNCHRONOUS:
            raise ValueError(f"durability must be one of {sorted(SYNCHRONOUS)}, got {durability!r}")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / DB_FILE
        self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._lock = threading.RLock()
        self._cache_pragma = f"cache_size=-{max(1, cache_bytes >> 10)}"  # in KiB
        read_cache = min(cache_bytes, READ_PAGE_CACHE_BYTES)
        self._read_cache_pragma = f"cache_size=-{max(1, read_cache >> 10)}"
        for pragma in ("journal_mode=WAL", f"synchronous={SYNCHRONOUS[durability]}",
                       self._cache_pragma, "temp_store=MEMORY"):
            self.conn.execute(f"PRAGMA {pragma}")
        self.conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS _rivulet_program (
                seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, sql TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS _rivulet_log (
                lsn INTEGER PRIMARY KEY, committed_at TEXT NOT NULL, rows INTEGER NOT NULL,
                payload BLOB);
            """
        )
        row = self.conn.execute("SELECT MAX(lsn) FROM _rivulet_log").fetchone()
        self.lsn = row[0] or 0
        self._in_transaction = False
        self._savepoints = 0
        self._statements: dict[str, TableSql] = {}
        self._auto_increment: dict[str, int] = {}  # by table: the largest number handed out
        #: By table: at least the largest value of its AUTO_INCREMENT column ever stored
        #: since it was first asked for (kept up by every insert here), so numbering an
        #: insert costs no ``SELECT MAX`` (a read that costs as much as the insert).
        self._stored_max: dict[str, int] = {}
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()
        #: Transactions' reads of committed rows (see :meth:`read_rows`).
        self._transactions: sqlite3.Connection | None = None
        self._transactions_lock = threading.Lock()

    # ..................................................................... transactions

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            self._in_transaction = True
            try:
                try:
                    yield
                except BaseException:
                    self._rollback()
                    raise
                try:
                    self.conn.execute("COMMIT")
                except sqlite3.Error as exc:
                    self._rollback()
                    raise StorageError(f"commit failed: {exc}") from exc
            finally:
                self._in_transaction = False

    def _rollback(self) -> None:
        # A COMMIT that fails may leave the transaction open (SQLITE_BUSY, some I/O errors):
        # closed here, or every later BEGIN would fail.
        self._stored_max.clear()  # (rows it counted are gone: asked of SQLite again)
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        self._savepoints += 1
        name = f"sp{self._savepoints}"
        self.conn.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            self._stored_max.clear()  # (rows it counted are gone: asked of SQLite again)
            self.conn.execute(f"ROLLBACK TO {name}")
            self.conn.execute(f"RELEASE {name}")
            raise
        else:
            self.conn.execute(f"RELEASE {name}")
        finally:
            self._savepoints -= 1

    def commit_batch(self, payload: bytes | None, rows: int) -> int:
        lsn = self.lsn + 1
        self.conn.execute(
            "INSERT INTO _rivulet_log VALUES (?, ?, ?, ?)",
            (lsn, dt.datetime.now(dt.UTC).isoformat(), rows, payload),
        )
        self.lsn = lsn
        return lsn

    def rollback_lsn(self, lsn: int) -> None:
        """Forget an LSN handed out in a transaction that then failed to commit."""
        self.lsn = lsn

    def durable_lsn(self) -> int:
        """The last LSN in the log on disk, read afresh (after a failed commit: does the log
        still end where this process believes it does?)."""
        with self._lock:
            if self.conn.in_transaction:
                raise StorageError("a transaction is still open on the storage connection")
            return self.conn.execute("SELECT MAX(lsn) FROM _rivulet_log").fetchone()[0] or 0

    # ..................................................................... program

    def program(self) -> list[ProgramStatement]:
        with self._lock:
            rows = self.conn.execute(
                "SELECT seq, kind, name, sql FROM _rivulet_program ORDER BY seq"
            ).fetchall()
        return [ProgramStatement(*r) for r in rows]

    def add_statement(self, kind: str, name: str, sql: str) -> None:
        self.conn.execute(
            "INSERT INTO _rivulet_program (kind, name, sql) VALUES (?, ?, ?)", (kind, name, sql)
        )

    def remove_statement(self, kind: str, name: str) -> None:
        self.conn.execute(
            "DELETE FROM _rivulet_program WHERE kind = ? AND lower(name) = lower(?)", (kind, name)
        )

    def replace_statement(self, seq: int, name: str, sql: str) -> None:
        self.conn.execute("UPDATE _rivulet_program SET name = ?, sql = ? WHERE seq = ?",
                          (name, sql, seq))

    def create_table(self, schema: TableSchema) -> None:
        cols = []
        pk = schema.primary_key
        int_rowid = len(pk) == 1 and schema.columns[pk[0]].kind == INT
        for i, c in enumerate(schema.columns):
            decl = f"{quote(c.name)} {SQLITE_TYPES[c.kind]}"
            if int_rowid and i == pk[0]:
                decl += " PRIMARY KEY"
            cols.append(decl)
        suffix = ""
        if pk and not int_rowid:
            cols.append(f"PRIMARY KEY ({', '.join(quote(schema.columns[i].name) for i in pk)})")
            suffix = " WITHOUT ROWID"
        self.conn.execute(f"CREATE TABLE {quote(schema.name)} ({', '.join(cols)}){suffix}")
        self._stored_max.pop(schema.name.lower(), None)
        self.ensure_keys(schema)

    def ensure_keys(self, schema: TableSchema) -> None:
        """The index of each key (made with the table; after ALTER TABLE dropped one that
        another key shared; at open, made for a table stored before rivulet kept its keys).
        Indexes are found by the columns they cover, not by name (see :meth:`ensure_index`):
        a key whose columns begin the primary key needs none, nor one whose columns an index
        covers already (a unique index serves a plain key too); a FULLTEXT key needs none
        (it serves no lookup: :class:`~rivulet.values.schema.KeyKind`). A UNIQUE key over
        stored rows that clash raises :class:`ConstraintError` (nothing is made)."""
        pk = schema.primary_key
        for key in schema.keys:
            if not key.lookup or (not key.unique and key.columns == pk[: len(key.columns)]):
                continue
            self._add_index(schema.name, tuple(schema.columns[i].name for i in key.columns),
                            key.unique)

    def _add_index(self, table: str, columns: tuple[str, ...], unique: bool) -> None:
        wanted = [c.lower() for c in columns]
        existing = self._index_list(table)
        if any(covers == wanted and (is_unique or not unique)
               for covers, is_unique in existing.values()):
            return
        base = f"{UNIQUE_PREFIX if unique else KEY_PREFIX}{table}_{'_'.join(columns)}"
        taken = {r[0].lower() for r in self.conn.execute(  # (one namespace for all tables)
            "SELECT name FROM sqlite_master WHERE type = 'index'").fetchall()}
        index, n = base, 1
        while index.lower() in taken:
            n += 1
            index = f"{base}_{n}"
        try:
            self.conn.execute(
                f"CREATE {'UNIQUE ' if unique else ''}INDEX {quote(index)} ON {quote(table)} "
                f"({', '.join(quote(c) for c in columns)})")
        except sqlite3.IntegrityError:
            raise ConstraintError(
                f"table {table!r} holds rows that share a value of ({', '.join(columns)}): "
                "the UNIQUE key is not made") from None

    def _drop_index(self, table: str, columns: tuple[str, ...], unique: bool) -> None:
        """Drop rivulet's indexes of this kind over exactly ``columns``."""
        wanted = [c.lower() for c in columns]
        for name, (covers, is_unique) in self._index_list(table).items():
            if covers == wanted and is_unique == unique and name.lower().startswith("_rivulet_"):
                self.conn.execute(f"DROP INDEX {quote(name)}")

    def _index_list(self, table: str) -> dict[str, tuple[list[str], bool]]:
        """Index name -> the columns it covers (lower-cased, in order), and whether it is
        unique (the primary key's own index of a WITHOUT ROWID table among them)."""
        out = {}
        for row in self.conn.execute(f"PRAGMA index_list({quote(table)})").fetchall():
            info = self.conn.execute(f"PRAGMA index_info({quote(row[1])})").fetchall()
            out[row[1]] = ([str(r[2]).lower() for r in info], bool(row[2]))
        return out

    def drop_table(self, schema: TableSchema) -> None:
        self.conn.execute(f"DROP TABLE {quote(schema.name)}")
        self._statements.pop(schema.name.lower(), None)
        self._auto_increment.pop(schema.name.lower(), None)
        self._stored_max.pop(schema.name.lower(), None)

    def rename_table(self, schema: TableSchema, new: str) -> None:
        self.conn.execute(f"ALTER TABLE {quote(schema.name)} RENAME TO {quote(new)}")
        self._statements.pop(schema.name.lower(), None)
        self._stored_max.pop(schema.name.lower(), None)
        self._stored_max.pop(new.lower(), None)
        handed_out = self._auto_increment.pop(schema.name.lower(), None)
        if handed_out is not None:
            self._auto_increment[new.lower()] = handed_out

    def alter(self, schema: TableSchema,
              steps: Iterable[AddStored | RenameStored | AddIndex | DropIndex]) -> None:
        """Apply the storage steps of a schema change (inside the open transaction). Each
        column step costs O(1): SQLite adds and renames columns in its schema text alone;
        an index step builds or drops an index (a UNIQUE one over rows that clash raises
        :class:`ConstraintError`, and the transaction's rollback undoes the rest)."""
        table = quote(schema.name)
        self._stored_max.pop(schema.name.lower(), None)  # (the column may be another now)
        for step in steps:
            if isinstance(step, AddIndex):
                self._add_index(schema.name, step.columns, step.unique)
            elif isinstance(step, DropIndex):
                self._drop_index(schema.name, step.columns, step.unique)
            elif isinstance(step, RenameStored):
                self.conn.execute(f"ALTER TABLE {table} RENAME COLUMN {quote(step.old)} "
                                  f"TO {quote(step.new)}")
            else:
                column = step.column
                default = "" if step.fill is None else f" DEFAULT {sql_literal(column, step.fill)}"
                self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {quote(column.name)} "
                                  f"{SQLITE_TYPES[column.kind]}{default}")
        self._statements.pop(schema.name.lower(), None)

    def convert_rows(self, schema: TableSchema, limit: int = 1000,
                     after: tuple | None = None) -> tuple[int, tuple | None]:
        """:func:`convert_rows` inside the open transaction."""
        return convert_rows(self.conn, schema, limit, after)

    # ..................................................................... rows

    def rows_by(self, schema: TableSchema, columns: tuple[int, ...], keys: list[Any],
                *, in_one_step: bool = False) -> list[Row]:
        """Rows whose ``columns`` hold one of ``keys``, on the writer's connection (inside
        the open transaction, so seeing its own writes); ``in_one_step``: each statement's
        rows read in one step (many rows of a background thread's chunk: see
        :mod:`rivulet.storage.sqlite_bulk`)."""
        sql = self._sql(schema)
        target = [quote(schema.columns[i].name) for i in columns]
        to_db = [key_converter(schema.columns[i]) for i in columns]
        values = list(dict.fromkeys(key_to_db(k, to_db, len(columns)) for k in keys))
        rows: list = []
        for start in range(0, len(values), LOOKUP_CHUNK):
            chunk = values[start:start + LOOKUP_CHUNK]
            text = lookup_sql(schema.name, sql.selected, target, len(columns), len(chunk))
            params = [v for key in chunk for v in key]
            rows.extend(fetch_at_once(self.conn, text, params, len(sql.selected)) if in_one_step
                        else self.conn.execute(text, params).fetchall())
        return rows if sql.from_db is None else [sql.from_db(r) for r in rows]

    def _sql(self, schema: TableSchema) -> TableSql:
        """Prepared statement texts and converters of a table (cached per schema object:
        ALTER TABLE makes a new one)."""
        cached = self._statements.get(schema.name.lower())
        if cached is not None and cached.schema is schema:
            return cached
        cached = self._statements[schema.name.lower()] = TableSql(schema)
        return cached

    def _note_stored(self, schema: TableSchema, rows: list[Row]) -> None:
        """Keep ``_stored_max`` up with rows going in (if it is kept for the table)."""
        column = schema.auto_column
        if column is not None and rows:
            key = schema.name.lower()
            known = self._stored_max.get(key)
            if known is not None:
                self._stored_max[key] = max(known, max(
                    (r[column] for r in rows if r[column] is not None), default=known))

    def insert(self, schema: TableSchema, rows: list[Row], *, in_one_step: bool = False) -> None:
        """(``in_one_step``: many rows of a background thread's chunk, by multi-row INSERT
        statements instead of a step per row: see :mod:`rivulet.storage.sqlite_bulk`.)"""
        self._note_stored(schema, rows)
        sql = self._sql(schema)
        values = rows if sql.to_db is None else list(map(sql.to_db, rows))
        try:
            if len(values) == 1:  # one statement: SQLite undoes all of it if it fails
                self.conn.execute(sql.insert, values[0])
                return
            with self.savepoint():  # (each row its own statement: undone together)
                if in_one_step:
                    insert_at_once(self.conn, quote(schema.name), sql.names, values)
                else:
                    self.conn.executemany(sql.insert, values)
        except sqlite3.IntegrityError as exc:
            raise ConstraintError(self._describe_duplicate(schema, rows, exc)) from None
        except (OverflowError, sqlite3.Error) as exc:
            raise StorageError(f"cannot store a row of table {schema.name!r}: {exc}") from None

    def insert_new(self, schema: TableSchema, rows: list[Row]) -> list[tuple[int, str]]:
        """Bulk import: insert ``rows`` (checked) inside the open transaction, skipping those
        whose primary key is already stored or came earlier in the import; returns each
        skipped row's position in ``rows`` and why. The batch goes in with one
        ``executemany``; only a batch that clashes is retried row by row (a failed INSERT
        statement changes nothing in SQLite), so the common case costs nothing extra."""
        self._note_stored(schema, rows)
        sql = self._sql(schema)
        insert = sql.insert
        values = rows if sql.to_db is None else list(map(sql.to_db, rows))
        try:
            with self.savepoint():
                self.conn.executemany(insert, values)
            return []
        except sqlite3.IntegrityError:
            pass
        except (OverflowError, sqlite3.Error) as exc:
            raise StorageError(f"cannot store a row of table {schema.name!r}: {exc}") from None
        clashes = []
        for i, value in enumerate(values):
            try:
                self.conn.execute(insert, value)
            except sqlite3.IntegrityError:
                clashes.append(i)
        return [(i, self._clash_reason(schema, rows[i])) for i in clashes]

    def _unique_clash(self, schema: TableSchema, row: Row) -> tuple[int, ...] | None:
        """The UNIQUE key (not the primary key) whose value ``row`` shares with a stored
        row (the writer's view: the import's own rows included), if any."""
        for key in schema.unique:
            value = tuple(row[i] for i in key)
            if None not in value and self.rows_by(schema, key, [
                    value if len(value) > 1 else value[0]]):
                return key
        return None

    @contextmanager
    def indexes_deferred(self, schema: TableSchema) -> Iterator[None]:
        """Inside the open transaction: drop the table's secondary indexes, then build them
        again from all rows at the end (bulk import). Building an index sorts once; keeping
        it while millions of rows go in costs a B-tree insert at a random place per row
        (10M rows into a table with one secondary index: 103 s of inserts against 19 s).
        On an error the transaction's rollback restores them with everything else."""
        indexes = self.conn.execute(  # UNIQUE keys stay: a clash must be found row by row
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
            "AND lower(tbl_name) = lower(?) AND substr(name, 1, length(?)) <> ?",
            (schema.name, UNIQUE_PREFIX, UNIQUE_PREFIX)).fetchall()
        for name, _ in indexes:
            self.conn.execute(f"DROP INDEX {quote(name)}")
        yield
        for _, sql in indexes:
            self.conn.execute(sql)

    def _clash_reason(self, schema: TableSchema, row: Row) -> str:
        """Why a bulk-imported row clashed: the last committed state (the read connection
        does not see the import's open transaction) tells a stored key from an earlier
        row of the import."""
        unique = self._unique_clash(schema, row) if schema.unique else None
        columns = schema.primary_key if unique is None else unique
        names = ", ".join(schema.columns[i].name for i in columns)
        key = tuple(row[i] for i in columns)
        shown = ", ".join(repr(v) for v in key)
        stored = self.lookup(schema, columns, [key if len(key) > 1 else key[0]])[1]
        where = "already in the table" if stored else "given earlier in the import"
        what = "primary key" if unique is None else "value of UNIQUE key"
        return f"duplicate {what} ({names}) = ({shown}): {where}"

    def auto_increment_base(self, schema: TableSchema, column: int) -> int:
        # Under the connection's lock: a transaction's INSERT is numbered when it runs,
        # outside any commit, while other threads may use this connection (a count, a
        # background conversion): two threads at once on one SQLite connection is a misuse.
        key = schema.name.lower()
        stored = self._stored_max.get(key)
        if stored is None:
            with self._lock:
                stored = self._stored_max[key] = self.conn.execute(
                    f"SELECT MAX({quote(schema.columns[column].name)}) FROM {quote(schema.name)}"
                ).fetchone()[0] or 0
        return max(stored, self._auto_increment.get(key, 0))

    def note_auto_increment(self, schema: TableSchema, column: int, value: int) -> None:
        # Kept in memory only: the number of a row since deleted is not given again until
        # the database is reopened (MySQL 5.7's rule; 8.0 also persists it).
        key = schema.name.lower()
        self._auto_increment[key] = max(value, self._auto_increment.get(key, 0))

    def restart_auto_increment(self, schema: TableSchema) -> None:
        """Number the table's AUTO_INCREMENT column from one above its largest stored value
        again (1 once it is empty), forgetting the numbers handed out: TRUNCATE's reset."""
        with self._lock:
            self._auto_increment.pop(schema.name.lower(), None)
            self._stored_max.pop(schema.name.lower(), None)

    def _describe_duplicate(self, schema: TableSchema, rows: list[Row],
                            error: sqlite3.IntegrityError) -> str:
        """Which key clashed, judged against the table as it was before the batch."""
        columns = _failed_key(schema, error)
        if not columns:
            return f"a row clashes with a key of table {schema.name!r} ({error})"
        names = ", ".join(schema.columns[i].name for i in columns)
        seen: set[tuple] = set()
        key: tuple = ()
        for row in rows:
            candidate = tuple(row[i] for i in columns)
            if candidate in seen or self.rows_by(schema, columns, [
                    candidate if len(candidate) > 1 else candidate[0]]):
                key = candidate
                break
            seen.add(candidate)
        shown = ", ".join(repr(v) for v in key)
        what = "primary key" if columns == schema.primary_key else "value of UNIQUE key"
        return f"duplicate {what} ({names}) = ({shown}) in table {schema.name!r}"

    def replace_rows(self, schema: TableSchema, rows: list[Row]) -> None:
        """Each row stored in place over the row of its primary key (one UPDATE each,
        where deleting and inserting cost two statements and two B-tree changes). Not
        atomic by itself, as :meth:`delete` is not: the caller's savepoint undoes it."""
        sql = self._sql(schema)
        if sql.replace is None:
            super().replace_rows(schema, rows)
            return
        self._note_stored(schema, rows)
        values = rows if sql.to_db is None else list(map(sql.to_db, rows))
        bound = [(*value, *self._key_to_db(schema, schema.pk_of(row)))
                 for row, value in zip(rows, values)]
        try:
            for params in bound:
                if self.conn.execute(sql.replace, params).rowcount != 1:
                    raise StorageError(f"table {schema.name!r}: a row to store in place "
                                       "is not stored")
        except sqlite3.IntegrityError as exc:
            raise ConstraintError(self._describe_duplicate(schema, rows, exc)) from None
        except (OverflowError, sqlite3.Error) as exc:
            raise StorageError(f"cannot store a row of table {schema.name!r}: {exc}") from None

    def delete(self, schema: TableSchema, ids: list[RowId]) -> None:
        delete = self._sql(schema).delete
        if schema.primary_key:
            keys = [self._key_to_db(schema, k) for k in ids]
        else:
            keys = [(i,) for i in ids]
        self.conn.executemany(delete, keys)

    def _key_to_db(self, schema: TableSchema, key: tuple) -> tuple:
        out = []
        for i, v in zip(schema.primary_key, key):
            fn = key_converter(schema.columns[i])
            out.append(v if fn is None or v is None else fn(v))
        return tuple(out)

    def scan(self, schema: TableSchema) -> Iterator[tuple[RowId, Row]]:
        sql = self._sql(schema)
        with self._lock:
            rows = self.conn.execute(sql.select).fetchall()
        yield from self._identified(schema, rows, sql.from_db)

    def get(self, schema: TableSchema, keys: list[tuple]) -> list[tuple[RowId, Row]]:
        sql = self._sql(schema)
        rows = []
        with self._lock:
            for key in keys:
                rows.extend(self.conn.execute(sql.get, self._key_to_db(schema, key)).fetchall())
        return list(self._identified(schema, rows, sql.from_db))

    def held(self, schema: TableSchema, columns: tuple[int, ...],
             value: tuple) -> list[tuple[RowId, Row]]:
        with self._lock:
            found = self._read_rows(self.conn, schema, columns,
                                    [value if len(value) > 1 else value[0]])
        return [(rid, row) for rid, row in found  # (the lookup may be looser than `=`)
                if tuple(row[i] for i in columns) == value]

    def _identified(self, schema: TableSchema, rows: list,
                    from_db: Callable | None) -> Iterator[tuple[RowId, Row]]:
        if schema.primary_key:
            for row in rows:
                row = row if from_db is None else from_db(row)
                yield schema.pk_of(row), row
        else:
            for row in rows:
                values = row[1:] if from_db is None else from_db(row[1:])
                yield row[0], values

    # ..................................................................... upqueries

    def ensure_index(self, schema: TableSchema, columns: tuple[int, ...]) -> None:
        """An index on ``columns`` unless the primary key already orders rows by them.
        Indexes are found by the columns they cover, not by name: renaming a column
        (ALTER TABLE) keeps its index under the old name."""
        pk = schema.primary_key
        if pk and tuple(columns) == tuple(pk[: len(columns)]):
            return
        names = [schema.columns[i].name for i in columns]
        with self._lock:
            existing = self._indexes(schema.name)
            if [n.lower() for n in names] in existing.values():
                return
            base = f"_rivulet_{schema.name}_{'_'.join(names)}"
            index = base
            while index.lower() in (n.lower() for n in existing):
                index = f"{base}_{len(existing)}"
                existing[index] = []
            # IF NOT EXISTS: another process on this file (a replica's follower) may
            # have made the same index since ``existing`` was read.
            self.conn.execute(
                f"CREATE INDEX IF NOT EXISTS {quote(index)} ON {quote(schema.name)} "
                f"({', '.join(quote(n) for n in names)})"
            )

    def _indexes(self, table: str) -> dict[str, list[str]]:
        """Index name -> the columns it covers, lower-cased, in order."""
        return {name: covers for name, (covers, _) in self._index_list(table).items()}

    def value_counts(self, schema: TableSchema, columns: tuple[int, ...]) -> tuple[int, int] | None:
        """Counted in one pass (an index's when one covers the columns): tens of
        milliseconds per million rows, paid once when a view is planned."""
        if any(schema.columns[i].conversion is not None for i in columns):
            return None  # rows not converted yet hold no value there
        names = ", ".join(quote(schema.columns[i].name) for i in columns)
        not_null = " AND ".join(f"{quote(schema.columns[i].name)} IS NOT NULL" for i in columns)
        table = quote(schema.name)
        with self._reader_lock:
            rows, values = self._read_connection().execute(
                f"SELECT (SELECT COUNT(*) FROM {table} WHERE {not_null}), "
                f"(SELECT COUNT(*) FROM (SELECT DISTINCT {names} FROM {table} WHERE {not_null}))"
            ).fetchone()
        return (rows, values) if values else None

    def lookup(self, schema: TableSchema, columns: tuple[int, ...],
               keys: list[Any]) -> tuple[int, list[Row]]:
        """Rows whose ``columns`` hold one of ``keys`` (scalars for one column, tuples for
        several), and the LSN of the snapshot they were read at. May return extra rows
        where SQLite's comparison is looser than Python's: callers filter by key."""
        sql = self._sql(schema)
        names = sql.selected
        target = [quote(schema.columns[i].name) for i in columns]
        numeric = [looked_up_as_number(schema.columns[i]) for i in columns]
        to_db = [float if n else key_converter(schema.columns[i]) for i, n in zip(columns, numeric)]
        # Distinct keys: a key given twice must not return its rows twice (see lookup_sql).
        values = list(dict.fromkeys(key_to_db(k, to_db, len(columns)) for k in keys))
        with self._reader_lock:
            conn = self._read_connection()
            conn.execute("BEGIN")
            try:
                lsn = conn.execute("SELECT MAX(lsn) FROM _rivulet_log").fetchone()[0] or 0
                rows: list = []
                for start in range(0, len(values), LOOKUP_CHUNK):
                    chunk = values[start:start + LOOKUP_CHUNK]
                    rows.extend(conn.execute(
                        lookup_sql(schema.name, names, target, len(columns), len(chunk),
                                   numeric),
                        [v for key in chunk for v in key],
                    ).fetchall())
                if any(schema.columns[i].conversion is not None for i in columns):
                    # Rows not converted yet have no value in the column's new storage:
                    # they are read too, and the caller keeps those under its keys.
                    rows.extend(conn.execute(sql.unconverted).fetchall())
            finally:
                conn.execute("COMMIT")
        if sql.from_db is not None:
            rows = [sql.from_db(r) for r in rows]
        return lsn, rows

    @contextmanager
    def snapshot_scan(self, schema: TableSchema) -> Iterator[tuple[int, Iterator[Row]]]:
        """Every row of a table from one snapshot, and the LSN of that snapshot, read a
        chunk at a time while the context lasts: a table is never held whole in memory,
        where the pieces freed after building state from it would stay in the process. The
        scan has a connection of its own, so lookups go on meanwhile (and may be made from
        the code consuming the rows)."""
        sql = self._sql(schema)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA {self._cache_pragma}")
            conn.execute("BEGIN")
            lsn = conn.execute("SELECT MAX(lsn) FROM _rivulet_log").fetchone()[0] or 0
            yield lsn, self._fetch_chunks(conn.execute(sql.select_all), sql.from_db)
        finally:
            conn.close()  # ends the read transaction

    @staticmethod
    def _fetch_chunks(cursor: sqlite3.Cursor, from_db: Callable[[Row], Row] | None
                      ) -> Iterator[Row]:
        while rows := cursor.fetchmany(SCAN_CHUNK):
            yield from rows if from_db is None else map(from_db, rows)

    # ..................................................................... transactions' reads

    def read_rows(self, schema: TableSchema, columns: tuple[int, ...] | None = None,
                  keys: list[Any] | None = None) -> list[tuple[RowId, Row]]:
        """The committed rows of ``schema`` (those whose ``columns`` hold one of ``keys``;
        None: all of them) with their identities, as the last commit left them: what a
        statement in a transaction reads (see rivulet/engine/transaction.py). May return
        extra rows where SQLite's comparison is looser than Python's: callers filter by key.
        Read on a connection of its own, so reads and commits go on meanwhile; the rows of
        a few keys on the writer's connection if no commit is using it (see below)."""
        if keys is not None and len(keys) <= LOOKUP_CHUNK and self._lock.acquire(blocking=False):
            # Each commit empties the page cache of every other connection (SQLite's WAL
            # mode: the database changed), and the writer's keeps its pages: a read of a
            # few keys right after a commit costs a third of what it does elsewhere.
            try:
                if not self.conn.in_transaction:  # (no write of this thread's under way)
                    return self._read_rows(self.conn, schema, columns, keys)
            finally:
                self._lock.release()
        with self._transactions_lock:
            conn = self._transactions_connection()
            if keys is not None and len(keys) <= LOOKUP_CHUNK:  # one SELECT: one snapshot
                return self._read_rows(conn, schema, columns, keys)
            conn.execute("BEGIN")
            try:
                return self._read_rows(conn, schema, columns, keys)
            finally:
                conn.execute("COMMIT")

    def read_tables(self, schemas: list[TableSchema]) -> dict[str, list[tuple[RowId, Row]]]:
        """Every committed row of each of ``schemas`` with its identity, all from one
        snapshot, by lower-case table name."""
        with self._transactions_lock:
            conn = self._transactions_connection()
            conn.execute("BEGIN")
            try:
                return {s.name.lower(): self._read_rows(conn, s, None, None) for s in schemas}
            finally:
                conn.execute("COMMIT")

    def _read_rows(self, conn: sqlite3.Connection, schema: TableSchema,
                   columns: tuple[int, ...] | None, keys: list[Any] | None
                   ) -> list[tuple[RowId, Row]]:
        sql = self._sql(schema)
        if columns is None or keys is None or any(
                schema.columns[i].conversion is not None for i in columns):
            # (rows not converted yet hold no value in the new column: read them all)
            return list(self._identified(schema, conn.execute(sql.select).fetchall(),
                                         sql.from_db))
        keyed = sql.keyed(tuple(columns), not schema.primary_key)
        values = keyed.values(keys)
        rows: list = []
        for start in range(0, len(values), LOOKUP_CHUNK):
            chunk = values[start:start + LOOKUP_CHUNK]
            rows.extend(conn.execute(keyed.text(len(chunk)),
                                     [v for key in chunk for v in key]).fetchall())
        return list(self._identified(schema, rows, sql.from_db))

    def rows_by_id(self, schema: TableSchema, ids: list[RowId]) -> dict[RowId, Row]:
        """The rows stored under these identities, on the writer's connection (inside the
        open transaction): what a transaction's commit checks its rows against."""
        sql = self._sql(schema)
        rows: list = []
        pk = schema.primary_key
        if len(pk) == 1 and 1 < len(ids) <= LOOKUP_CHUNK:  # one statement, `=` per key
            column = quote(schema.columns[pk[0]].name)
            rows = self.conn.execute(
                f"{sql.select} WHERE {column} IN ({', '.join('?' * len(ids))})",
                [self._key_to_db(schema, rid)[0] for rid in ids]).fetchall()
            return dict(self._identified(schema, rows, sql.from_db))
        for rid in ids:
            key = self._key_to_db(schema, rid) if pk else (rid,)
            rows.extend(self.conn.execute(sql.get, key).fetchall())
        return dict(self._identified(schema, rows, sql.from_db))

    def _transactions_connection(self) -> sqlite3.Connection:
        if self._transactions is None:
            self._transactions = sqlite3.connect(self.path, isolation_level=None,
                                                 check_same_thread=False)
            self._transactions.execute(f"PRAGMA {self._cache_pragma}")
        return self._transactions

    def _read_connection(self) -> sqlite3.Connection:
        if self._reader is None:
            self._reader = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._reader.execute(f"PRAGMA {self._read_cache_pragma}")
        return self._reader

    def count(self, schema: TableSchema) -> int:
        with self._lock:
            return self.conn.execute(f"SELECT COUNT(*) FROM {quote(schema.name)}").fetchone()[0]

    def close(self) -> None:
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
        with self._transactions_lock:
            if self._transactions is not None:
                self._transactions.close()
        with self._lock:
            self.conn.close()


#: Name prefix of the SQLite indexes that enforce UNIQUE keys.
UNIQUE_PREFIX = "_rivulet_unique_"
#: Name prefix of the SQLite indexes of keys that are not UNIQUE (``CREATE INDEX``).
KEY_PREFIX = "_rivulet_key_"


def _failed_key(schema: TableSchema, error: sqlite3.IntegrityError) -> tuple[int, ...]:
    """The key a constraint error is about, from SQLite's message (``UNIQUE constraint
    failed: t.a, t.b``); the primary key when it names no other."""
    named = str(error).partition("failed:")[2]
    columns = tuple(schema.position(part.strip().rpartition(".")[2])
                    for part in named.split(",") if part.strip()
                    and schema.has_column(part.strip().rpartition(".")[2]))
    return columns if columns in schema.unique else schema.primary_key


#: Keys per lookup statement (well under SQLite's limit on bound variables).
LOOKUP_CHUNK = 500
#: Rows per fetch of a whole-table scan.
SCAN_CHUNK = 5_000


def copy_database(source: Path, target: Path) -> int:
    """Copy the database file ``source`` as of one commit to ``target`` (SQLite's backup
    API in one step, inside one read transaction), while writers go on: the frozen copy
    that Spark snapshots, bootstraps and verifies from, and a backup's database. Returns
    the LSN of that commit, read in the same transaction as the pages (the transaction
    is begun by that read, so no commit can fall between the two). In WAL mode the read
    transaction blocks no writer, in this process or another."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    src = sqlite3.connect(source, timeout=60, isolation_level=None)
    try:
        src.execute("BEGIN")
        lsn: int = src.execute("SELECT COALESCE(MAX(lsn), 0) FROM _rivulet_log").fetchone()[0]
        dst = sqlite3.connect(target)
        try:
            src.backup(dst, pages=-1)  # (uses the open read transaction's snapshot)
        finally:
            dst.close()
        src.execute("COMMIT")
    finally:
        src.close()
    return lsn
