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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Self

import mysql.connector
import pymysql

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
from rivulet.errors import error_code
from rivulet.server.mysql.server import ServerThread

__all__ = ["MYSQL_SQL_MODE", "ORACLE_OPTIONS", "MariaDBOracle", "MySQLPair", "OverTheWire",
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

    # ..................................................................... errors

    def mariadb_error(self, sql: str) -> int | None:
        """The MySQL error code MariaDB fails ``sql`` with (None: it succeeded).

        What rivulet must answer for a statement it should refuse as MySQL does; rivulet is
        not asked here (see :meth:`error_codes` for both sides)."""
        try:
            with self.conn.cursor() as cur:
                cur.execute(sql)
        except pymysql.MySQLError as exc:
            return int(exc.args[0])
        return None

    def error_codes(self, sql: str) -> tuple[int | None, int | None]:
        """The MySQL error code of ``sql`` on MariaDB and on rivulet (None: it succeeded).

        Both are run whatever the other did, so that a test comparing the pair sees both
        codes when they differ."""
        riv = None
        maria = self.mariadb_error(sql)
        try:
            self.db.execute(sql)
        except rivulet.RivuletError as exc:
            riv = error_code(exc).mysql
        return maria, riv


# --------------------------------------------------------------------------- over the wire


@contextmanager
def text_wires(pair: MySQLPair) -> Iterator[tuple[Any, Any]]:
    """A PyMySQL client of rivulet's MySQL server over the pair's database and one of
    MariaDB's, both reading values as the text the server sent (``conv={}``): what a client
    that shows text (the mysql client, PHP, JDBC's getString) sees."""
    server = ServerThread(pair.db, port=0)
    maria = pair.conn
    try:
        mine = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                               database="rivulet", autocommit=True, conv={})
        try:
            theirs = pymysql.connect(host="127.0.0.1", port=maria.port, user=maria.user,
                                     database=maria.db, autocommit=True, conv={})
            try:
                yield mine, theirs
            finally:
                theirs.close()
        finally:
            mine.close()
    finally:
        server.stop()


class OverTheWire:
    """rivulet's MySQL server over a :class:`MySQLPair`'s database, read by the two kinds of
    client applications use, each answer compared with MariaDB's.

    The text protocol (PyMySQL) is where the server turns a query's literals into
    parameters (``c = 1`` becomes ``c = ?`` with the value 1), and server-side prepared
    statements (MySQL Connector, pure Python) are where values arrive typed: the same
    query text must answer as MySQL does either way. The prepared-statement connection is
    opened at its first use. Use as a context manager: the connections and the server are
    closed at its end.
    """

    def __init__(self, pair: MySQLPair) -> None:
        self.pair = pair
        self.server = ServerThread(pair.db, port=0)
        try:
            self.text = pymysql.connect(host="127.0.0.1", port=self.server.port, user="root",
                                        password="", database="rivulet", autocommit=True)
        except BaseException:
            self.server.stop()
            raise
        self._prepared: Any = None
        self._prepared_cursor: Any = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self._prepared is not None:
                self._prepared.close()
        finally:
            try:
                self.text.close()
            finally:
                self.server.stop()

    def check_text(self, sql: str, params: Sequence[Any] | None = None) -> None:
        """``sql`` as a text query (with ``params`` the driver writes in for ``%s``)
        answers what MariaDB answers for it."""
        with self.text.cursor() as cur:
            cur.execute(sql, params)
            got = [tuple(r) for r in cur.fetchall()]
        if params is None:
            assert_same_as_mysql(sql, [], got, self.pair.conn, what="the MySQL server")
        else:
            assert_same_as_mysql(sql.replace("%s", "?"), params, got, self.pair.conn,
                                 what="the MySQL server")

    def check_prepared(self, sql: str, params: Sequence[Any]) -> None:
        """``sql`` (with ``?`` marks) as a server-side prepared statement executed with
        ``params`` answers what MariaDB answers for it."""
        if self._prepared is None:
            self._prepared = mysql.connector.connect(
                host="127.0.0.1", port=self.server.port, user="root", password="",
                database="rivulet", use_pure=True)
            self._prepared_cursor = self._prepared.cursor(prepared=True)
        self._prepared_cursor.execute(sql, params)
        got = [tuple(r) for r in self._prepared_cursor.fetchall()]
        assert_same_as_mysql(sql, params, got, self.pair.conn, what="a prepared statement")
