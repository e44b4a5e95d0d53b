"""Where a Lobsters page's statements run: rivulet embedded, or a SQL database.

A backend is set up with one version's program (:class:`~bench.lobsters.queries.QuerySet`)
and answers the program's statements by name: :meth:`Backend.read` returns rows,
:meth:`Backend.write` the number of rows changed. Pages (``pages.py``) see nothing else,
so one page function serves every system. :class:`SqlBackend` is written against DB-API
2.0 with the ``?`` text rewritten to the driver's placeholder, so a MySQL backend over
PyMySQL is the same class with ``mark="%s"`` and a connection made by the caller.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import rivulet
from bench.lobsters.data import Dataset
from bench.lobsters.queries import QuerySet, expand_in, has_in_list, split_script

Row = tuple[Any, ...]
LOAD_BATCH = 5_000


class Backend(ABC):
    """One system under test running one version of the program."""

    name: str
    queries: QuerySet

    @abstractmethod
    def read(self, name: str, params: Sequence[Any] = ()) -> list[Row]:
        """The rows of read ``name`` for ``params`` (an ``IN (?)`` takes the rest)."""

    @abstractmethod
    def write(self, name: str, params: Sequence[Any]) -> int:
        """Run write ``name``; the number of rows it changed."""

    def settle(self) -> None:
        """Wait until every acknowledged write is visible to reads."""

    def close(self) -> None:
        """Release the backend's resources."""

    @property
    def version(self) -> str:
        return self.queries.version


def _in_count(sql: str, params: Sequence[Any]) -> int:
    return len(params) - (sql.count("?") - 1)


def load_tables(db: rivulet.Database, queries: QuerySet, dataset: Dataset) -> None:
    """Create ``queries``' tables in ``db`` and insert every row of ``dataset``."""
    db.execute_script(queries.schema_sql)
    for table in dataset.tables:
        rows = dataset.rows(table, queries.version)
        handle = db.table(table)
        for i in range(0, len(rows), LOAD_BATCH):
            handle.insert_many(rows[i:i + LOAD_BATCH])


def create_views(db: rivulet.Database, queries: QuerySet) -> None:
    """Create the program's internal views and each read as the view ``q_<name>``."""
    for statement in queries.view_statements():
        db.execute(statement)
    for name, sql in queries.reads.items():
        db.execute(f"CREATE VIEW q_{name} AS {sql}")


class RivuletBackend(Backend):
    """rivulet embedded: every read is a parameterized view, looked up by its values."""

    def __init__(self, queries: QuerySet, dataset: Dataset, path: str | None = None,
                 **open_args: Any) -> None:
        self.queries = queries
        self.name = f"rivulet-{queries.version}"
        self._scratch = None if path else tempfile.mkdtemp(prefix="lobsters-")  # removed at close
        self.db = rivulet.open(path or self._scratch, **open_args)
        load_tables(self.db, queries, dataset)
        create_views(self.db, queries)
        self._bind_views()
        self.db.settle()

    @classmethod
    def over(cls, queries: QuerySet, db: rivulet.Database) -> RivuletBackend:
        """A backend over ``db``, open on a directory ``queries``' program (tables and
        views, as :func:`load_tables` and :func:`create_views` make them) is loaded into;
        closing the backend closes ``db``."""
        backend = cls.__new__(cls)
        backend.queries = queries
        backend.name = f"rivulet-{queries.version}"
        backend._scratch = None
        backend.db = db
        backend._bind_views()
        return backend

    def _bind_views(self) -> None:
        self.views = {name: self.db.view(f"q_{name}") for name in self.queries.reads}

    def reopen(self, **open_args: Any) -> None:
        """Close the database and open its directory again (state rebuilt at open, by
        Spark if ``open_args`` say so), waiting until the state is loaded."""
        path = self.db.path
        self.db.close()
        self.db = rivulet.open(path, **open_args)
        self._bind_views()
        self.db.settle(timeout=None)

    def read(self, name: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.views[name].lookup(*params)

    def write(self, name: str, params: Sequence[Any]) -> int:
        return self.db.execute(self.queries.writes[name], params)  # type: ignore[return-value]

    def settle(self) -> None:
        self.db.settle()

    def close(self) -> None:
        self.db.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)


class SqlBackend(Backend):
    """A DB-API connection running the statements' text (the program's views created as
    database views, computed by the database at every read)."""

    def __init__(self, queries: QuerySet, connection: Any, *, name: str,
                 mark: str = "?") -> None:
        self.queries = queries
        self.name = name
        self.conn = connection
        self.mark = mark
        self._plain = {n: sql.replace("?", mark) for n, sql in queries.reads.items()}
        self._writes = {n: sql.replace("?", mark) for n, sql in queries.writes.items()}
        self._listed = {n for n, sql in queries.reads.items() if has_in_list(sql)}

    def create_program(self, dataset: Dataset) -> None:
        """Tables, rows and views, committed."""
        cur = self.conn.cursor()
        for statement in split_script(self.queries.schema_sql):
            cur.execute(statement)
        for table in dataset.tables:
            rows = dataset.rows(table, self.queries.version)
            if rows:
                marks = ", ".join([self.mark] * len(rows[0]))
                for i in range(0, len(rows), LOAD_BATCH):
                    cur.executemany(f"INSERT INTO {table} VALUES ({marks})",
                                    rows[i:i + LOAD_BATCH])
        for statement in self.queries.view_statements():
            cur.execute(statement)
        self.conn.commit()

    def read_text(self, name: str, params: Sequence[Any]) -> str:
        """Read ``name``'s text in the driver's paramstyle, its IN list as long as
        ``params`` make it."""
        sql = self.queries.reads[name]
        if name in self._listed:
            return expand_in(sql, _in_count(sql, params), self.mark)
        return self._plain[name]

    def read(self, name: str, params: Sequence[Any] = ()) -> list[Row]:
        text = self.read_text(name, params)
        cur = self.conn.cursor()
        cur.execute(text, tuple(params))
        return [tuple(r) for r in cur.fetchall()]

    def write(self, name: str, params: Sequence[Any]) -> int:
        cur = self.conn.cursor()
        cur.execute(self._writes[name], tuple(params))
        self.conn.commit()
        return cur.rowcount

    def close(self) -> None:
        self.conn.close()


def sqlite_backend(queries: QuerySet, dataset: Dataset) -> SqlBackend:
    """An in-memory SQLite database with the program and the data set."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute("PRAGMA case_sensitive_like = ON")
    backend = SqlBackend(queries, conn, name=f"sqlite-{queries.version}")
    backend.create_program(dataset)
    return backend


def rivulet_backend(queries: QuerySet, dataset: Dataset, **open_args: Any) -> RivuletBackend:
    return RivuletBackend(queries, dataset, **open_args)
