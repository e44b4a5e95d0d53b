"""The engines a script runs on: rivulet (as ``mysql``, the dialect it answers in), SQLite
(the reference the scripts' answers were computed with, for its own pass rate) and, where
one is at hand, MariaDB (as ``mysql`` too: MySQL's own answers, to tell the records whose
scripted answer is not MySQL's).

An engine runs a statement, answers a query with its rows and the number of its columns,
and tells which of its exceptions mean "this engine declines that SQL" (an error it reports
to its user) as opposed to a failure of the engine itself.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

_WRITE = re.compile(r"\s*(insert|update|delete|replace)\b", re.IGNORECASE)
_INSERT_SELECT = re.compile(r"\s*insert\s+into\s+(\w+)\s*(\([^)]*\))?\s*(select\b.*)",
                            re.IGNORECASE | re.DOTALL)


class Engine(Protocol):
    #: The name ``skipif`` / ``onlyif`` lines test.
    name: str

    def statement(self, sql: str) -> None: ...

    def query(self, sql: str) -> tuple[int, list[Sequence[Any]]]:
        """The answer's number of columns and its rows."""
        ...

    def declines(self, error: Exception) -> bool:
        """Whether ``error`` is the engine's report of a statement it will not run."""
        ...

    def load_otherwise(self, sql: str) -> bool:
        """Make the change of a data statement the engine refused by other means of its
        own, so that the records after it can still be run (the statement still counts as
        refused); False where the engine has none."""
        ...

    def close(self) -> None: ...


class RivuletEngine:
    """rivulet embedded, through its Python API, answering as MySQL would.

    Reads are served by views that writes reach asynchronously, so after a write the
    engine waits (``Database.settle``) until every view holds it, as a program that
    reads its own writes does. Each distinct query becomes an ad-hoc view; a script has
    thousands, so the limit on views is raised for the run.
    """

    name = "mysql"

    def __init__(self, directory: Path | None = None) -> None:
        import rivulet
        from rivulet.engine.limits import Limits

        self._tmp = None if directory is not None else tempfile.TemporaryDirectory(
            prefix="rivulet-slt-")
        path = directory if directory is not None else Path(self._tmp.name)  # type: ignore[union-attr]
        self.db = rivulet.open(path, limits=Limits(max_views=10_000_000),
                               spark_bootstrap_rows=None, prewarm=False, tune_gc=False,
                               background_migration=False)

    def statement(self, sql: str) -> None:
        self.db.execute(sql)
        if _WRITE.match(sql):
            self.db.settle()

    def query(self, sql: str) -> tuple[int, list[Sequence[Any]]]:
        rows = self.db.query(sql)
        return len(self.db.prepare(sql).columns), rows

    def declines(self, error: Exception) -> bool:
        from rivulet import RivuletError

        return isinstance(error, RivuletError)

    def load_otherwise(self, sql: str) -> bool:
        """``INSERT INTO t [(columns)] SELECT ...`` (which rivulet refuses) as the SELECT's
        rows read with ``query`` and inserted as parameters of one ``INSERT ... VALUES``.
        Scripts copy their tables that way before the queries they test."""
        match = _INSERT_SELECT.match(sql)
        if match is None:
            return False
        table, columns, select = match[1], match[2] or "", match[3]
        rows = self.db.query(select)
        if rows:
            values = ", ".join("(" + ", ".join("?" * len(rows[0])) + ")" for _ in rows)
            self.db.execute(f"INSERT INTO {table} {columns} VALUES {values}",
                            [value for row in rows for value in row])
            self.db.settle()
        return True

    def close(self) -> None:
        self.db.close()
        if self._tmp is not None:
            self._tmp.cleanup()


class SqliteEngine:
    """The standard library's SQLite, in memory: the scripts' own reference engine."""

    name = "sqlite"

    def __init__(self) -> None:
        self.connection = sqlite3.connect(":memory:", isolation_level=None)

    def statement(self, sql: str) -> None:
        if ";" in sql.strip().rstrip(";"):
            self.connection.executescript(sql)  # several statements, as the C runner allows
        else:
            self.connection.execute(sql)

    def query(self, sql: str) -> tuple[int, list[Sequence[Any]]]:
        cursor = self.connection.execute(sql)
        rows = cursor.fetchall()
        return len(cursor.description or ()), rows

    def declines(self, error: Exception) -> bool:
        return isinstance(error, sqlite3.Error)

    def load_otherwise(self, sql: str) -> bool:
        return False

    def close(self) -> None:
        self.connection.close()


class MariaDBEngine:
    """A fresh schema on a MariaDB server, reached with PyMySQL."""

    name = "mysql"

    def __init__(self, connect: Any, schema: str) -> None:
        """``connect(database)``: a new autocommit connection (``None``: no database)."""
        self.schema = schema
        admin = connect(None)
        try:
            with admin.cursor() as cursor:
                cursor.execute(f"DROP DATABASE IF EXISTS `{schema}`")
                cursor.execute(f"CREATE DATABASE `{schema}`")
        finally:
            admin.close()
        self.connection = connect(schema)
        with self.connection.cursor() as cursor:  # literals compare as rivulet's columns do
            cursor.execute("SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin")

    def statement(self, sql: str) -> None:
        with self.connection.cursor() as cursor:
            cursor.execute(sql)

    def query(self, sql: str) -> tuple[int, list[Sequence[Any]]]:
        with self.connection.cursor() as cursor:
            cursor.execute(sql)
            return len(cursor.description or ()), list(cursor.fetchall())

    def declines(self, error: Exception) -> bool:
        import pymysql

        return isinstance(error, pymysql.err.MySQLError)

    def load_otherwise(self, sql: str) -> bool:
        return False

    def close(self) -> None:
        try:
            with self.connection.cursor() as cursor:
                cursor.execute(f"DROP DATABASE IF EXISTS `{self.schema}`")
        finally:
            self.connection.close()
