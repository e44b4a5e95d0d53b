"""The MySQL oracle: a private MariaDB, fed the same program as rivulet, decides what MySQL
answers (docs/design.md, "The contract (and the test oracle)").

SQLite (``tests/oracle.py``) stays the oracle where SQLite and MySQL agree; where they
differ, MariaDB decides. The server is Debian's ``mariadb-server`` (``test.sh`` installs
it), started once per test session on loopback with a temporary data directory (the
``mariadb_oracle`` fixture of ``tests/conftest.py``); each :class:`MySQLPair` gets its own
schema.

The server is set up as rivulet's documented contract says, so that only real differences
show: MySQL 8's default ``sql_mode`` (strict, ``ONLY_FULL_GROUP_BY``, no zero dates),
``utf8mb4`` with a binary NO PAD collation (rivulet compares strings by code point and
trailing spaces count), and UTC.

Parameters are inlined into the text MariaDB runs, as PyMySQL, mysqlclient and Django's
MySQL backend do: a Python ``int`` becomes an integer literal, a ``float`` a double literal
(``1.5e0``), a ``Decimal`` a decimal literal and a ``str`` a quoted string.

An answer matches (:func:`assert_same_as_mysql`) when its rows match as in
``oracle.answer_mismatch`` (multisets; ORDER BY blocks and LIMIT cuts; floats
within a relative 1e-9) and each column holds values of the same Python types as MariaDB's
(an ``int`` where MySQL gives an integer, a ``Decimal`` with the same scale where it gives
a DECIMAL, a ``float`` for a DOUBLE, a ``str`` for text, ``date``/``datetime``/
``timedelta`` for the temporal types).
"""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

import rivulet
from oracle import _fmt_rows, answer_mismatch, query_shape, sorted_rows

#: MySQL 8.0's default sql_mode (MariaDB's default lacks ONLY_FULL_GROUP_BY and the zero-date
#: modes).
MYSQL_SQL_MODE = ("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                  "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION")

#: mariadbd options for the oracle: small, fast to start, rivulet's collation and time zone.
ORACLE_OPTIONS = [
    "--skip-log-bin", "--skip-grant-tables", "--skip-name-resolve",
    "--innodb-buffer-pool-size=64M", "--innodb-flush-log-at-trx-commit=0",
    "--innodb-doublewrite=0", "--character-set-server=utf8mb4",
    "--collation-server=utf8mb4_nopad_bin", "--default-time-zone=+00:00",
    f"--sql-mode={MYSQL_SQL_MODE}", "--max-connections=200",
]


class MariaDBOracle:
    """The session's MariaDB server; :meth:`schema` hands out a fresh schema per user."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self._names = itertools.count()
        self._admin: Any = None  # the connection that creates schemas, kept

    def connect(self, database: str | None) -> Any:
        """A PyMySQL connection to the server (no TLS on loopback: PyMySQL's TLS context
        costs a quarter of a second per connection)."""
        import pymysql

        return pymysql.connect(host="127.0.0.1", port=self.server.port, user="bench",
                               database=database, autocommit=True, local_infile=False,
                               charset="utf8mb4", ssl_disabled=True)

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def schema(self) -> Any:
        """A PyMySQL connection (autocommit) to a new, empty schema."""
        name = f"oracle{next(self._names)}"
        if self._admin is None:
            self._admin = self.connect(None)
        with self._admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE {name}")
        conn = self.connect(name)
        with conn.cursor() as cur:  # literals compare as columns do
            cur.execute("SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin")
        return conn


# --------------------------------------------------------------------------- parameters


def inline_params(sql: str, params: Sequence[Any], conn: Any) -> str:
    """``sql`` with each ``?`` outside quotes and comments replaced by the literal of its
    parameter, written by the driver (``conn.escape``)."""
    out: list[str] = []
    values = iter(params)
    quote: str | None = None
    i = 0
    while i < len(sql):
        ch = sql[i]
        if quote is not None:
            out.append(ch)
            if ch == "\\" and quote != "`" and i + 1 < len(sql):
                out.append(sql[i + 1])
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
            out.append(ch)
        elif ch == "?":
            try:
                out.append(conn.escape(next(values)))
            except StopIteration:
                raise AssertionError(f"fewer parameters than marks in {sql!r}") from None
        else:
            out.append(ch)
        i += 1
    if next(values, _END) is not _END:
        raise AssertionError(f"more parameters than marks in {sql!r}")
    return "".join(out)


_END = object()


# --------------------------------------------------------------------------- comparison


def _type_of(v: Any) -> str:
    if isinstance(v, bool):
        return "int"
    if isinstance(v, decimal.Decimal):
        exponent = v.as_tuple().exponent
        return f"decimal(scale={-exponent if isinstance(exponent, int) else exponent})"
    if isinstance(v, dt.datetime):
        return "datetime"
    return type(v).__name__


def column_types(rows: Sequence[Sequence[Any]]) -> list[set[str]]:
    """Per column, the value types found (NULLs left out)."""
    width = max((len(r) for r in rows), default=0)
    return [{_type_of(r[i]) for r in rows if i < len(r) and r[i] is not None}
            for i in range(width)]


def types_mismatch(got: Sequence[Sequence[Any]], expected: Sequence[Sequence[Any]]) -> str | None:
    """``None`` if every column of ``got`` holds the types MariaDB's does, else the reason."""
    for i, (mine, theirs) in enumerate(zip(column_types(got), column_types(expected))):
        if mine and theirs and mine != theirs:
            return f"column {i + 1}: rivulet gives {sorted(mine)}, MariaDB {sorted(theirs)}"
    return None


def mariadb_rows(conn: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
    text = inline_params(sql, params, conn)
    with conn.cursor() as cur:
        cur.execute(text)
        return [tuple(r) for r in cur.fetchall()]


def assert_same_as_mysql(sql: str, params: Sequence[Any], got: Sequence[Sequence[Any]],
                         conn: Any, *, what: str = "") -> None:
    """``got`` (rivulet's rows) is MariaDB's answer to ``sql`` with ``params``."""
    shape = query_shape(sql, "mysql")
    try:
        full = mariadb_rows(conn, shape.keyed_sql, params)
    except Exception as exc:
        raise AssertionError(f"MariaDB rejected {sql!r} {tuple(params)!r} which rivulet "
                             f"answered with {_fmt_rows(got)}: {exc}") from exc
    problem = answer_mismatch(got, full, shape)
    if problem is None:
        width = shape.width if shape.width is not None else None
        problem = types_mismatch(got, [r[:width] for r in full] if width else full)
    if problem is None:
        return
    expected = full
    if shape.order:
        expected = full[shape.offset: None if shape.limit is None else shape.offset + shape.limit]
    lines = [
        f"rivulet and MariaDB disagree ({problem}){' on ' + what if what else ''}",
        f"  query:   {sql}",
        f"  params:  {tuple(params)!r}",
        f"  rivulet: {_fmt_rows(got if shape.order else sorted_rows(got))}",
        f"  mariadb: {_fmt_rows(expected if shape.order else sorted_rows(expected))}",
    ]
    raise AssertionError("\n".join(lines))


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


def start_oracle(root: Path, port: int) -> Any:
    """The MariaDB server of the test session (see ``tests/conftest.py``)."""
    from bench.mariadb import MariaDB

    if shutil.which("mariadbd") is None or shutil.which("mariadb-install-db") is None:
        raise RuntimeError("mariadbd is missing: ./test.sh installs mariadb-server")
    server = MariaDB(root, port, options=ORACLE_OPTIONS)
    server.start()
    return server
