"""The MySQL oracle: a private MariaDB, fed the same program as rivulet, decides what MySQL
answers (docs/design.md, "The contract (and the test oracle)").

The tests (``tests/mysql_oracle.py``: the ``mariadb_oracle`` and ``mysql_pair`` fixtures)
and the reliability benchmark's fuzzers (``bench/reliability_oracle.py``) ask the same
server the same way, so the set-up and the comparison live here, where both import them.

The server is Debian's ``mariadb-server`` (:class:`bench.mariadb.MariaDB`), started on
loopback with a temporary data directory, set up as rivulet's documented contract says so
that only real differences show: MySQL 8's default ``sql_mode`` (strict,
``ONLY_FULL_GROUP_BY``, no zero dates), ``utf8mb4`` with a binary NO PAD collation (rivulet
compares strings by code point and trailing spaces count), and UTC. Each user gets its own
schema (:meth:`MariaDBOracle.schema`).

Parameters are inlined into the text MariaDB runs, as PyMySQL, mysqlclient and Django's
MySQL backend do (:func:`inline_params`): a Python ``int`` becomes an integer literal, a
``float`` a double literal (``1.5e0``), a ``Decimal`` a decimal literal and a ``str`` a
quoted string.

An answer matches (:func:`mysql_mismatch`) when its rows match as in
:func:`bench.answers.answer_mismatch` (multisets; ORDER BY blocks and LIMIT cuts; floats
within a relative 1e-9), each column holds values of the same Python types as MariaDB's
(an ``int`` where MySQL gives an integer, a ``Decimal`` with the same scale where it gives
a DECIMAL, a ``float`` for a DOUBLE, a ``str`` for text, ``date``/``datetime``/
``timedelta`` for the temporal types), and, where the whole answer is compared (no LIMIT or
OFFSET), each column's DECIMAL values are MariaDB's exactly.
"""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import os
import re
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.answers import answer_mismatch, fmt_rows, query_shape, sorted_rows
from bench.mariadb import MariaDB

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


def start_oracle(root: Path, port: int) -> MariaDB:
    """A MariaDB server set up as the oracle, its data under ``root``, on ``port``."""
    if shutil.which("mariadbd") is None or shutil.which("mariadb-install-db") is None:
        raise RuntimeError("mariadbd is missing: ./test.sh installs mariadb-server")
    server = MariaDB(root, port, options=ORACLE_OPTIONS)
    server.start()
    return server


class MariaDBOracle:
    """The oracle's MariaDB server; :meth:`schema` hands out a fresh schema per user."""

    def __init__(self, server: MariaDB) -> None:
        self.server = server
        self._names = itertools.count()
        self._admin: Any = None  # the connection that creates schemas, kept open

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    def schema(self, **options: Any) -> Any:
        """A PyMySQL connection (autocommit) to a new, empty schema (``options`` go to
        ``pymysql.connect``: ``client_flag=MULTI_STATEMENTS`` to send batches)."""
        name = f"oracle{os.getpid()}_{next(self._names)}"  # (processes share a server)
        if self._admin is None:
            self._admin = self.server.connect(None)
        with self._admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE {name}")
        conn = self.server.connect(name, **options)
        with conn.cursor() as cur:  # literals compare as columns do
            cur.execute("SET NAMES utf8mb4 COLLATE utf8mb4_nopad_bin")
        return conn


# --------------------------------------------------------------------------- parameters


def inline_params(sql: str, params: Sequence[Any], conn: Any) -> str:
    """``sql`` with each ``?`` outside quotes replaced by the literal of its parameter,
    written by the driver (``conn.escape``)."""
    if "?" not in sql:
        if params:
            raise AssertionError(f"more parameters than marks in {sql!r}")
        return sql
    out: list[str] = []
    values = iter(params)
    last = 0
    for m in _QUOTED_OR_MARK.finditer(sql):
        if m.group(0) != "?":
            continue  # a quoted string or name: left as it is
        out.append(sql[last:m.start()])
        try:
            out.append(conn.escape(next(values)))
        except StopIteration:
            raise AssertionError(f"fewer parameters than marks in {sql!r}") from None
        last = m.end()
    out.append(sql[last:])
    if next(values, _END) is not _END:
        raise AssertionError(f"more parameters than marks in {sql!r}")
    return "".join(out)


#: A quoted string (with backslash escapes), a quoted name, or a ``?``.
_QUOTED_OR_MARK = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|\?", re.DOTALL)
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


def decimals_mismatch(got: Sequence[Sequence[Any]],
                      expected: Sequence[Sequence[Any]]) -> str | None:
    """``None`` if each column's DECIMAL values are, as a multiset, exactly MariaDB's, as
    a client reads them (the row comparison lets numbers differ by a relative 1e-9, right
    for floats only; and ``-0.00`` is not what MySQL shows for zero)."""
    width = max((len(r) for r in expected), default=0)
    for i in range(width):
        mine = Counter(str(r[i]) for r in got
                       if i < len(r) and isinstance(r[i], decimal.Decimal))
        theirs = Counter(str(r[i]) for r in expected if isinstance(r[i], decimal.Decimal))
        if mine and theirs and mine != theirs:
            return (f"column {i + 1}: DECIMAL values differ: rivulet "
                    f"{sorted(mine - theirs)[:5]}, MariaDB {sorted(theirs - mine)[:5]}")
    return None


def mariadb_rows(conn: Any, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
    text = inline_params(sql, params, conn)
    with conn.cursor() as cur:
        cur.execute(text)
        return [tuple(r) for r in cur.fetchall()]


def mysql_mismatch(sql: str, params: Sequence[Any], got: Sequence[Sequence[Any]],
                   full: Sequence[Sequence[Any]], *, what: str = "") -> str | None:
    """``None`` if ``got`` (rivulet's rows) is a correct answer to ``sql`` with ``params``,
    else the report of the difference. ``full`` is MariaDB's answer to
    ``query_shape(sql, "mysql").keyed_sql`` (no LIMIT/OFFSET, sort keys appended)."""
    shape = query_shape(sql, "mysql")
    if _identical(got, full, shape):
        return None
    problem = answer_mismatch(got, full, shape)
    expected_rows = [shape.shown(r) for r in full]
    if problem is None:
        problem = types_mismatch(got, expected_rows)
    if problem is None and not shape.limited:
        problem = decimals_mismatch(got, expected_rows)
    if problem is None:
        return None
    expected = full
    if shape.order:
        expected = full[shape.offset: None if shape.limit is None else shape.offset + shape.limit]
    return "\n".join([
        f"rivulet and MariaDB disagree ({problem}){' on ' + what if what else ''}",
        f"  query:   {sql}",
        f"  params:  {tuple(params)!r}",
        f"  rivulet: {fmt_rows(got if shape.order else sorted_rows(got))}",
        f"  mariadb: {fmt_rows(expected if shape.order else sorted_rows(expected))}",
    ])


def _identical(got: Sequence[Sequence[Any]], full: Sequence[Sequence[Any]], shape: Any) -> bool:
    """The fast path: ``got`` is MariaDB's whole answer exactly, values and types alike
    (their reprs match: ``Decimal('1.50')`` is not ``Decimal('1.5')`` nor ``1.5``), in
    order where the query orders. Anything else goes through the full comparison."""
    if shape.limited or len(got) != len(full):
        return False
    theirs = [repr(tuple(shape.shown(r))) for r in full]
    mine = [repr(tuple(r)) for r in got]
    return mine == theirs if shape.order else sorted(mine) == sorted(theirs)


def assert_same_as_mysql(sql: str, params: Sequence[Any], got: Sequence[Sequence[Any]],
                         conn: Any, *, what: str = "") -> None:
    """``got`` (rivulet's rows) is MariaDB's answer to ``sql`` with ``params``."""
    shape = query_shape(sql, "mysql")
    try:
        full = mariadb_rows(conn, shape.keyed_sql, params)
    except Exception as exc:
        raise AssertionError(f"MariaDB rejected {sql!r} {tuple(params)!r} which rivulet "
                             f"answered with {fmt_rows(got)}: {exc}") from exc
    report = mysql_mismatch(sql, params, got, full, what=what)
    if report is not None:
        raise AssertionError(report)


__all__ = ["MYSQL_SQL_MODE", "ORACLE_OPTIONS", "MariaDBOracle", "assert_same_as_mysql",
           "column_types", "decimals_mismatch", "inline_params", "mariadb_rows",
           "mysql_mismatch", "start_oracle", "types_mismatch"]
