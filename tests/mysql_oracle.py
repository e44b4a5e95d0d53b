"""The MySQL oracle for tests: :class:`MySQLPair`, rivulet beside a private MariaDB.

The server's set-up, the parameters inlined as drivers do and the comparison of answers and
column types are ``bench/mysql_oracle.py`` (shared with the reliability benchmark's
fuzzers, which ask the same oracle); they are re-exported here. The server is started once
per test session (the ``mariadb_oracle`` fixture of ``tests/conftest.py``); each
:class:`MySQLPair` gets its own schema.

SQLite (``tests/oracle.py``) stays the oracle where SQLite and MySQL agree; where they
differ, MariaDB decides.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from typing import Any, Self

import rivulet
from bench.mysql_oracle import (
    MYSQL_SQL_MODE,
    ORACLE_OPTIONS,
    MariaDBOracle,
    assert_same_as_mysql,
    column_types,
    inline_params,
    mariadb_rows,
    start_oracle,
    types_mismatch,
)

__all__ = ["MYSQL_SQL_MODE", "ORACLE_OPTIONS", "MariaDBOracle", "MySQLPair",
           "assert_same_as_mysql", "column_types", "inline_params", "mariadb_rows",
           "start_oracle", "types_mismatch"]


# --------------------------------------------------------------------------- the pair


class MySQLPair:
    """A rivulet database (embedded, in a fresh directory) and a fresh MariaDB schema fed
    the same program. Statements must succeed or fail on both; reads must agree."""

    def __init__(self, oracle: MariaDBOracle) -> None:
        self.path = tempfile.mkdtemp(prefix="rivulet-mysql-")
        self.db = rivulet.open(self.path)
        self.conn = oracle.schema()
        self.views: dict[str, str] = {}  # name -> SELECT text with ? marks

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()
        self.conn.close()
        shutil.rmtree(self.path, ignore_errors=True)

    # ..................................................................... program

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """A DDL or write statement on both sides: both succeed (with the same count of
        affected rows for writes) or both fail; returns rivulet's result."""
        maria_error = riv_error = None
        maria_count = riv_count = None
        try:
            with self.conn.cursor() as cur:
                maria_count = cur.execute(inline_params(sql, params, self.conn))
        except Exception as exc:  # PyMySQL's error classes
            maria_error = exc
        try:
            riv_count = self.db.execute(sql, params)
        except rivulet.RivuletError as exc:
            riv_error = exc
        if (maria_error is None) != (riv_error is None):
            raise AssertionError(f"only one side rejected {sql!r} {tuple(params)!r}: "
                                 f"mariadb: {maria_error!r}, rivulet: {riv_error!r}")
        words = sql.lstrip().split(None, 1)
        if maria_error is None and words and words[0].upper() in ("INSERT", "UPDATE", "DELETE"):
            assert riv_count == maria_count, (
                f"rows affected by {sql!r}: rivulet {riv_count}, mariadb {maria_count}")
        return riv_count

    def insert_many(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        if not rows:
            return
        self.db.table(table).insert_many(rows)
        marks = ", ".join(["%s"] * len(rows[0]))
        with self.conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)

    def create_view(self, name: str, select_sql: str) -> None:
        """A view in rivulet; MariaDB runs its SELECT with the parameters inlined at each
        read."""
        self.db.execute(f"CREATE VIEW {name} AS {select_sql}")
        self.views[name] = select_sql

    def settle(self) -> None:
        self.db.settle()

    # ..................................................................... reads

    def check_query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """``db.query(sql, params)`` answers what MariaDB answers; returns rivulet's rows."""
        self.settle()
        got = self.db.query(sql, list(params))
        assert_same_as_mysql(sql, params, got, self.conn, what="db.query")
        return got

    def check_view(self, name: str, *params: Any) -> list[tuple]:
        """``view(name).lookup(*params)`` answers what MariaDB answers for the view's SELECT."""
        self.settle()
        got = self.db.view(name).lookup(*params)
        assert_same_as_mysql(self.views[name], params, got, self.conn, what=f"view {name}")
        return got

    def mariadb(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return mariadb_rows(self.conn, sql, params)
