"""Fuzzing rivulet's inputs: SQL text, written values, HTTP requests and MySQL packets.

The generators (Hypothesis strategies) and the checks live here so that the test suite
(tests/test_fuzz_*.py, a few dozen inputs each) and the reliability benchmark
(``bench.reliability`` calls :func:`run`: thousands of inputs in a time budget) fuzz the
same way. Each check says what must hold for one input:

* SQL: rivulet either runs the statement or raises a :class:`rivulet.RivuletError` whose
  message names the construct (never ``KeyError``, ``RecursionError``, ...), and a
  statement that fails leaves the database exactly as it was (:func:`digest`).
* Writes: a batch of rows with hostile values (wrong types, huge numbers and strings,
  NULL into NOT NULL, NUL, lone surrogates, combining marks, 4-byte emoji) is stored and
  read back unchanged, or rejected whole with a :class:`rivulet.SchemaError`.
* HTTP: never a 5xx; an error answer is ``{"error", "kind"}`` and changes nothing.
* Protocol: a malformed, truncated, out-of-sequence or oversize packet gets an error
  packet or the end of that one connection; the server keeps serving other clients and
  no data changes.

And each accepted input is checked against the oracle, a private MariaDB set up as MySQL
(``bench/reliability_oracle.py``, given a :class:`~bench.reliability_oracle.Checker`): a
SELECT's rows, a write's affected rows and the table it leaves, a 2xx HTTP answer, a
hostile batch stored as MySQL stores it. :func:`run` adds the oracle fuzzer proper
(generated valid SQL over every column type, through the embedded API, the MySQL
protocol and HTTP: ``bench/oracle_sql.py``), whose every accepted input is compared.

    python -m bench.reliability_fuzz [--quick] [--avoid none]   # prints the counts
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import hashlib
import json
import socket
import struct
import tempfile
import urllib.parse
import warnings
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import HypothesisWarning

import rivulet
from bench.fuzz_budget import Failure, drive
from bench.oracle_sql import AVOIDED
from bench.reliability_oracle import Checker, RowWrite, Tally, check_http_answer
from rivulet.errors import RivuletError, SchemaError
from rivulet.sql.parse import split_statements

# --------------------------------------------------------------------------- the database

SCHEMA = [
    "CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(20) NOT NULL)",
    "CREATE TABLE u (id INT PRIMARY KEY, t_id INT, b INT)",
    "CREATE VIEW by_id AS SELECT id, a, s FROM t WHERE id = ?",
    ("CREATE VIEW sums AS SELECT t.id, COUNT(u.id) AS n FROM t LEFT JOIN u ON t.id = u.t_id "
    "GROUP BY t.id"),
]
ROWS_T = [(i, i % 5, f"s{i}") for i in range(1, 21)]
ROWS_U = [(i, i % 20 + 1, i * 3) for i in range(1, 41)]

#: A table with one column of every kind, for the write fuzzer.
WRITE_TABLE = (
    "CREATE TABLE w (id INT PRIMARY KEY, n INT NOT NULL, tiny TINYINT, big BIGINT, "
    "name VARCHAR(8), body TEXT, price DECIMAL(6,2), ratio DOUBLE, raw VARBINARY(8), "
    "seen DATETIME(6), day DATE, flag BOOLEAN)"
)


def make_database(path: str | Path) -> rivulet.Database:
    """The database every SQL and protocol fuzzer runs against (two tables, two views)."""
    db = rivulet.open(path)
    for sql in SCHEMA:
        db.execute(sql)
    db.table("t").insert_many(ROWS_T)
    db.table("u").insert_many(ROWS_U)
    db.execute(WRITE_TABLE)
    db.settle()
    return db


def digest(db: rivulet.Database, *, adhoc: bool = True) -> str:
    """A fingerprint of everything a statement could change: the LSN, the program (tables,
    views, and with ``adhoc`` the views made for ad-hoc queries and the dataflow's nodes)
    and every base table's rows. (A read may make an ad-hoc view: ``adhoc=False`` for a
    check of reads.)"""
    db.settle()
    h = hashlib.sha256()
    program = (db.lsn, sorted(db.catalog.tables), sorted(db.views()))
    if adhoc:
        program += (sorted(db.catalog.views), sorted(db.program.views), len(db.graph.nodes))
    h.update(repr(program).encode())
    for name in sorted(db.catalog.tables):
        schema = db.catalog.tables[name]
        h.update(repr(schema).encode())
        rows = sorted((repr(row) for _, row in db.storage.scan(schema)))
        h.update("\n".join(rows).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


# --------------------------------------------------------------------------- SQL inputs

_COLS = ["id", "a", "s"]
_UNKNOWN_FUNCTIONS = ["JSON_EXTRACT(s, '$[*]')", "SOUNDEX(s)", "RAND()",
                      "UUID()", "SLEEP(1)", "BENCHMARK(10, a)", "LOAD_FILE('/etc/passwd')",
                      "MATCH(s) AGAINST ('x')", "s REGEXP s", "@x := 1", "CAST(s AS JSON)"]


@st.composite
def _base_select(draw: Any) -> str:
    cols = draw(st.lists(st.sampled_from(_COLS), min_size=1, max_size=3, unique=True))
    where = draw(st.sampled_from(["", " WHERE a > 1", " WHERE id = ?", " WHERE s LIKE 's%'"]))
    return f"SELECT {', '.join(cols)} FROM t{where}"


_WINDOW_FUNCTIONS = ["ROW_NUMBER()", "RANK()", "LAG(a)", "SUM(a)", "COUNT(*)"]


def listed_refusals(base: str = "SELECT id, a FROM t WHERE a > 1", col: str = "a",
                    fn: str = "ROW_NUMBER()", unknown: str = "SOUNDEX(s)",
                    invented: str = "fn_abc") -> list[tuple[str, str, list[str]]]:
    """Every (construct, statement, words one of which the error must contain) the SQL
    fuzzer sends as syntactically valid SQL built around one construct rivulet refuses,
    with the given variable parts (:func:`unsupported_sql` draws them).

    This list is the one place that says what rivulet refuses: tests/test_fuzz_sql.py
    sends every entry and fails on one that runs, so the commit that teaches rivulet a
    construct takes it out here too (or trades it for a form still refused). Where a
    listed statement runs all the same (this list behind rivulet), :func:`check_sql` with
    an oracle checks its answer instead of failing it."""
    return [
        ("window function", f"SELECT id, {fn} OVER (PARTITION BY {col} ORDER BY id) FROM t",
         ["window", "over"]),
        ("recursive CTE", ("WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c "
         "WHERE n < 5) SELECT n FROM c"), ["with"]),
        ("IN subquery with LIMIT",
         f"{base.split(' WHERE')[0]} WHERE {col} IN (SELECT b FROM u LIMIT 2)",
         ["subquery", "limit"]),
        # (correlated by other than =, on a nullable outer column whose NULL the condition
        # does not reject: the domain's join back by = would lose it, rivulet/plan/subqueries)
        ("IN subquery under OR correlated by other than =",
         f"{base.split(' WHERE')[0]} WHERE a = 1 OR {col} IN (SELECT b FROM u "
         "WHERE u.t_id > t.a OR t.a IS NULL)", ["subquery"]),
        ("EXISTS correlated by other than =",
         "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.t_id <=> t.a)", ["exists"]),
        ("scalar subquery in select", "SELECT id, (SELECT b FROM u) FROM t",
         ["subquery", "select"]),
        ("scalar subquery in where", f"SELECT id FROM t WHERE {col} = (SELECT b FROM u)",
         ["subquery", "select"]),
        ("ALL subquery correlated by other than =",
         f"SELECT id FROM t WHERE {col} > ALL (SELECT b FROM u WHERE u.t_id <> t.a "
         "OR t.a IS NULL)",
         ["all", "select"]),
        ("subquery in join", "SELECT t.id FROM t JOIN u ON t.id = (SELECT 1)",
         ["subquery", "select", "join"]),
        ("right join", "SELECT t.id FROM t RIGHT JOIN u ON t.id = u.t_id", ["right join"]),
        ("full join", "SELECT t.id FROM t FULL OUTER JOIN u ON t.id = u.t_id", ["full"]),
        ("natural join", "SELECT t.id FROM t NATURAL JOIN u", ["natural"]),
        ("unsupported function", f"SELECT {unknown} FROM t", [unknown.split("(")[0].split()[-1]
                                                               .strip("@:=").lower() or "@",
                                                               "expression", "cast", "match",
                                                               "regexp", "from"]),
        ("invented function", f"SELECT {invented}(a) FROM t", [invented]),
        ("GROUP_CONCAT(DISTINCT) ordered by another column",
         f"SELECT GROUP_CONCAT(DISTINCT s ORDER BY {col}) FROM t", ["group_concat"]),
        ("LIMIT ? in a subquery", f"SELECT id FROM ({base} LIMIT ?) AS s", ["limit"]),
        ("ORDER BY ?", "SELECT id FROM t ORDER BY ? LIMIT 3", ["order", "?", "parameter"]),
        ("? in select list", "SELECT ?, id FROM t", ["parameter", "?"]),
        ("? in join", "SELECT t.id FROM t JOIN u ON t.id = u.t_id AND u.b = ?",
         ["parameter", "?"]),
        ("? under OR", "SELECT id FROM t WHERE a = ? OR a IS NULL", ["parameter"]),
        ("rollup", f"SELECT {col}, COUNT(*) FROM t GROUP BY {col} WITH ROLLUP", ["rollup"]),
        ("distinct on", f"SELECT DISTINCT ON ({col}) id FROM t", ["distinct on"]),
        ("skip locked", f"{base} FOR UPDATE SKIP LOCKED", ["skip locked"]),
        ("select into", "SELECT id INTO @v FROM t", ["into", "parse"]),
        ("insert select", "INSERT INTO u SELECT id, id, a FROM t", ["insert ... select"]),
        ("ignore on duplicate key", "INSERT IGNORE INTO t VALUES (1, 1, 'x') ON DUPLICATE KEY "
         "UPDATE a = 2", ["ignore"]),
        ("multi-table update with LIMIT", "UPDATE t JOIN u ON t.id = u.t_id SET t.a = 1 "
         "LIMIT 1", ["several tables and order by/limit"]),
        ("rename a view", "RENAME TABLE by_id TO z", ["rename", "view"]),
        ("rename a table onto another", "RENAME TABLE t TO u", ["exists", "'u'"]),
        ("grant", "GRANT ALL ON *.* TO 'x'@'%'", ["grant", "statement"]),
        ("call", "CALL proc(1)", ["call", "statement"]),
        ("set variable", "SET @x = 1", ["set", "statement", "variable"]),
        ("use", "USE other", ["use", "statement"]),
        ("lock tables", "LOCK TABLES t WRITE", ["lock", "statement", "parse"]),
        ("create trigger", "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @x = 1",
         ["trigger", "statement", "create"]),
        ("create procedure", "CREATE PROCEDURE p() SELECT 1", ["procedure", "statement",
                                                                 "create"]),
        ("foreign key set default", "CREATE TABLE z (id INT, FOREIGN KEY (id) REFERENCES "
         "t (id) ON DELETE SET DEFAULT)", ["set default"]),
        ("check with a subquery", "CREATE TABLE z (id INT CHECK (id > (SELECT 1)))",
         ["check", "subquery"]),
        ("spatial type", "CREATE TABLE z (id INT, g GEOMETRY)", ["geometry"]),
        ("temporary table", "CREATE TEMPORARY TABLE z (id INT)", ["temporary"]),
        ("drop database", "DROP DATABASE rivulet", ["database"]),
        ("drop several views, one unknown", "DROP VIEW by_id, nowhere", ["nowhere"]),
        ("alter view", "ALTER VIEW by_id AS SELECT id FROM t", ["alter", "statement"]),
        ("load data", "LOAD DATA INFILE '/etc/passwd' INTO TABLE t", ["parse", "load",
                                                                        "statement"]),
        ("outfile", "SELECT * INTO OUTFILE '/tmp/x' FROM t", ["parse", "into", "outfile"]),
        ("view with window", f"CREATE VIEW vw AS SELECT id, {fn} OVER () FROM t",
         ["window", "over"]),
        ("view with a ? in a CTE", "CREATE VIEW vc AS WITH c AS (SELECT a, s, id FROM t "
         "WHERE id = ?) SELECT * FROM c", ["subquery", "parameter"]),
        ("view of unknown table", "CREATE VIEW vu AS SELECT x FROM nowhere", ["nowhere"]),
        ("view replacing a table", "CREATE VIEW t AS SELECT id FROM u", ["exists", "'t'"]),
        ("write to a view", "INSERT INTO by_id VALUES (1, 1, 'x')", ["view", "read-only"]),
        ("deep parentheses", "SELECT id FROM t WHERE " + "(" * 60 + "a" + ")" * 60 + " = 1",
         ["nested"]),
        ("long operator chain", "SELECT id FROM t WHERE a = " + " + ".join(["1"] * 300),
         ["nested"]),
    ]


@st.composite
def unsupported_sql(draw: Any) -> tuple[str, str, list[str]]:
    """(construct, statement, words one of which the error must contain): one of
    :func:`listed_refusals`, its variable parts drawn."""
    choices = listed_refusals(
        base=draw(_base_select()), col=draw(st.sampled_from(["a", "id"])),
        fn=draw(st.sampled_from(_WINDOW_FUNCTIONS)),
        unknown=draw(st.sampled_from(_UNKNOWN_FUNCTIONS)),
        invented="fn_" + draw(st.text("abcdefghij", min_size=3, max_size=8)))
    return draw(st.sampled_from(choices))


_TOKENS = ["SELECT", "FROM", "WHERE", "t", "u", "id", "a", "s", "b", "(", ")", ",", "=", "?",
           "1", "'x'", "NULL", "AND", "OR", "NOT", "IN", "JOIN", "ON", "GROUP", "BY", "ORDER",
           "LIMIT", "UNION", "*", "+", "-", "/", "COUNT", "SUM", "AS", "CREATE", "VIEW",
           "TABLE", "INSERT", "INTO", "VALUES", "UPDATE", "SET", "DELETE", "DROP", "`", "'",
           '"', ";", "--", "/*", "*/", "#", "\\", "\x00", "😀", "é", "\u0301", "CASE", "WHEN",
           "THEN", "END", "HAVING", "DISTINCT", "BETWEEN", "LIKE", "IS", "@", "@@", "0x",
           "1e999", "99999999999999999999999999", ".", "IF", "EXISTS", "OVER", "WITH"]


def token_soup() -> Any:
    """Statements stitched from SQL tokens: mostly invalid, sometimes runnable."""
    return st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=25).map(" ".join)


def random_text() -> Any:
    """Any text, including control characters, NUL and lone surrogates; and raw bytes
    read as Latin-1 (what a client with the wrong charset sends)."""
    return st.one_of(st.text(max_size=200),
                     st.binary(max_size=200).map(lambda b: b.decode("latin-1")))


def sql_inputs() -> Any:
    """(construct, statement, words) for the SQL fuzzer; words None: any error will do."""
    return st.one_of(
        unsupported_sql(),
        token_soup().map(lambda s: ("token soup", s, None)),
        random_text().map(lambda s: ("random text", s, None)),
    )


def check_sql(db: rivulet.Database, construct: str, sql: str, words: list[str] | None,
              how: str = "execute", checker: Checker | None = None) -> str:
    """Run ``sql`` one way (``execute``, ``query``, ``create_view`` or ``script``) and check
    the rules (module docstring), and what it did against the oracle where a ``checker``
    is given; returns the digest the database has afterwards.

    ``words`` not None: ``sql`` is one of :func:`listed_refusals`, and must be refused
    with an error that names one of them. Should it run all the same, with no oracle that
    is a failure (the list is behind rivulet); with a ``checker`` its answer is checked
    like any accepted input, the construct counted as answered
    (``Tally.listed_but_answered``), and the tables and views it made are dropped on both
    sides, so that the next draw of the list meets the database it was written for."""
    before = digest(db)
    names = _names(db)
    result: Any = None
    try:
        if how == "query":
            result = db.query(sql)
        elif how == "create_view":
            db.create_view("fuzz_v", sql)
        elif how == "script":
            db.execute_script(sql)
        else:
            result = db.execute(sql)
    except RivuletError as exc:
        after = digest(db)
        if after != before:
            raise Failure(f"{construct}: {sql!r} failed ({exc}) but changed the database")
        message = str(exc).lower()
        if how in ("query", "create_view") and sql.lstrip()[:6].upper() not in ("SELECT",
                                                                               "WITH"):
            words = None  # "query() takes a SELECT statement" is the error to give
        if words is not None and not any(w.lower() in message for w in words):
            raise Failure(f"{construct}: {sql!r}: the error {str(exc)!r} names none of {words}")
        if checker is not None:
            checker.tally.refused[checker.name] += 1
        return after
    except Exception as exc:
        raise Failure(f"{construct}: {sql!r} ({how}) raised {type(exc).__name__}: {exc}") from exc
    if words is not None and checker is None:
        raise Failure(f"{construct}: {sql!r} ({how}) ran, but listed_refusals() says "
                      "rivulet refuses it")
    _drop_fuzz_view(db)
    if checker is not None:
        if words is not None:
            checker.tally.listed_but_answered[construct] += 1
        if how == "script":
            checker.accepted_script(split_statements(sql))
        elif how == "create_view":
            checker.tally.unanswered[checker.name] += 1
        else:
            checker.accepted(sql, (), result)
        if words is not None:
            _drop_made(db, checker, names)
        if checker.out_of_step:
            checker.resync()
    return digest(db)


def _drop_fuzz_view(db: rivulet.Database) -> None:
    db.drop_view("fuzz_v", if_exists=True)


def _names(db: rivulet.Database) -> tuple[set[str], set[str]]:
    """The database's tables and views, by name."""
    return set(db.catalog.tables), set(db.views())


def _drop_made(db: rivulet.Database, checker: Checker,
               before: tuple[set[str], set[str]]) -> None:
    """Drop the views, then the tables, that rivulet has now and had not ``before``, from
    rivulet and the oracle's mirror."""
    tables, views = _names(db)
    for view in sorted(views - before[1] - tables):
        db.drop_view(view, if_exists=True)
        checker.mirror.execute(f"DROP VIEW IF EXISTS `{view}`")
    for table in sorted(tables - before[0]):
        db.drop_table(table, if_exists=True)
        checker.mirror.execute(f"DROP TABLE IF EXISTS `{table}`")


# --------------------------------------------------------------------------- write inputs

_HUGE = [2**31, -(2**31) - 1, 2**63, -(2**63) - 1, 10**30, -(10**40)]
_STRINGS = ["", "\x00", "a\x00b", "\ud800", "x\udfffy", "e\u0301", "\u0301", "😀", "👩‍👩‍👧",
            "𝔘𝔫𝔦", "\u202e", "\ufeff", "\uffff", "\U0010ffff", "'; DROP TABLE w; --", "\\",
            "x" * 9, "é" * 8, "😀" * 8, "😀" * 9, "a" * 70000]


def any_value(avoided: frozenset[str] = AVOIDED) -> Any:
    """A value of any type a client might send, with the edge cases first in mind."""
    return st.one_of(
        st.none(), st.booleans(), st.integers(), st.sampled_from(_HUGE),
        st.floats(allow_nan=True, allow_infinity=True),
        st.decimals(allow_nan=True, allow_infinity=True, places=None),
        st.text(max_size=12), strings(avoided), st.binary(max_size=12),
        datetimes(avoided), st.dates(), st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
    )


def hostile_value(column: str, avoided: frozenset[str] = AVOIDED) -> Any:
    """:func:`any_value` for ``column`` of table ``w``: no float for a string column where
    that shape ("a DOUBLE written into a string column") is avoided."""
    if column in ("name", "body") and "a DOUBLE written into a string column" in avoided:
        return any_value(avoided).filter(lambda v: not isinstance(v, float))
    return any_value(avoided)


def strings(avoided: frozenset[str] = AVOIDED) -> Any:
    """The hostile strings; where that shape is avoided, the longest is the longest a TEXT
    column takes (65,535 bytes), not one past it."""
    if "a TEXT value over 65,535 bytes" in avoided:
        return st.sampled_from([s if len(s) < 65_536 else s[:65_535] for s in _STRINGS])
    return st.sampled_from(_STRINGS)


def datetimes(avoided: frozenset[str] = AVOIDED) -> Any:
    """Datetimes, with fractions of a second unless that shape is avoided, and then below
    half a second (MySQL rounds a fraction into a DATETIME column, MariaDB truncates it:
    ``UNDECIDABLE`` in bench/oracle_sql.py)."""
    if "fractional seconds into a DATETIME" in avoided:
        return st.datetimes().map(lambda d: d.replace(microsecond=0))
    return st.datetimes().map(lambda d: d.replace(microsecond=d.microsecond % 500_000))


_WRITE_COLUMNS = ["id", "n", "tiny", "big", "name", "body", "price", "ratio", "raw", "seen",
                  "day", "flag"]


#: Values of each column's own type (edge cases included), so most batches are valid and
#: the round trip is checked; any_value() mixes in everything else.
_TYPED = {
    "n": st.integers(-(2**31), 2**31 - 1), "tiny": st.integers(-128, 127),
    "big": st.integers(-(2**63), 2**63 - 1),
    "price": st.decimals(-9999, 9999, places=2), "ratio": st.floats(),
    "raw": st.binary(max_size=8), "day": st.dates(), "flag": st.booleans(),
}


@st.composite
def write_batch(draw: Any, avoided: frozenset[str] = AVOIDED) -> list[tuple]:
    """1-4 rows for table ``w``: distinct ints as primary keys, values of each column's
    type (edge cases included), and in about half the rows one column with NULL or a value
    of any type at all (datetimes as :func:`datetimes` says, for ``avoided``)."""
    text = st.one_of(st.text(max_size=10), strings(avoided))
    typed = {**_TYPED, "name": text, "body": text, "seen": datetimes(avoided)}
    count = draw(st.integers(1, 4))
    ids = draw(st.lists(st.integers(1, 10**6), min_size=count, max_size=count, unique=True))
    rows = []
    for pk in ids:
        hostile = draw(st.one_of(st.none(), st.sampled_from(_WRITE_COLUMNS[1:])))
        rest = [draw(st.one_of(st.none(), hostile_value(column, avoided)) if column == hostile
                     else typed[column]) for column in _WRITE_COLUMNS[1:]]
        rows.append((pk, *rest))
    return rows


def _integer_stored(sent: Any) -> int | None:
    """The integer MySQL stores for ``sent`` in an integer column: a DOUBLE rounded half to
    even (its rint), a DECIMAL or text that is a number half away from zero; None where it
    stores none (the write must fail)."""
    if isinstance(sent, (bool, int)):
        return int(sent)
    if isinstance(sent, float):
        return round(sent) if sent == sent and abs(sent) != float("inf") else None
    try:
        number = decimal.Decimal(sent.strip(" \t\n\r") if isinstance(sent, str) else sent)
    except (decimal.InvalidOperation, TypeError, ValueError):
        return None
    if not number.is_finite():
        return None
    return int(number.to_integral_value(rounding=decimal.ROUND_HALF_UP))


def _same(stored: Any, sent: Any, column: str) -> bool:
    """Whether a value read back is the one written (as the column's type keeps it)."""
    if sent is None or stored is None:
        return sent is None and stored is None
    if column in ("name", "body"):
        return stored == sent if isinstance(sent, str) else isinstance(stored, str)
    if column == "raw":
        return stored == (sent.encode() if isinstance(sent, str) else sent)
    if column in ("id", "n", "tiny", "big"):
        return stored == _integer_stored(sent)
    if column == "ratio" and isinstance(sent, float):
        return stored == sent
    if column == "seen" and isinstance(sent, dt.date):
        return stored == (sent if isinstance(sent, dt.datetime)
                          else dt.datetime.combine(sent, dt.time()))
    if column == "day" and isinstance(sent, dt.date):
        return stored == (sent.date() if isinstance(sent, dt.datetime) else sent)
    return True  # numbers, dates, flags: converted by MySQL's rules (tests/test_functions.py)


def check_writes(db: rivulet.Database, rows: list[tuple], via: str = "table",
                 checker: Checker | None = None) -> None:
    """Insert ``rows`` into ``w`` (by ``Table.insert_many`` or a parameterized INSERT);
    either all are stored and read back as sent, or a SchemaError leaves nothing. With a
    ``checker``, a batch a MySQL client could send is run on the oracle too: MariaDB must
    store it alike (the table read back: values and types) or refuse it too, or rivulet
    refuse it (and change nothing)."""
    marks = ", ".join(["(" + ", ".join("?" * len(_WRITE_COLUMNS)) + ")"] * len(rows))
    insert = f"INSERT INTO w VALUES {marks}"
    params = [v for row in rows for v in row]
    if checker is not None:
        outcome = (checker.row_write(RowWrite("insert", "w", tuple(rows))) if via == "table"
                   else checker.write(insert, params, "w"))
        if outcome != "inexpressible":  # else: only rivulet's own rules, below
            _remove_rows(db, rows, checker)
            return
    before = digest(db)
    try:
        if via == "table":
            db.table("w").insert_many(rows)
        else:
            db.execute(insert, params)
    except SchemaError as exc:
        if digest(db) != before:
            raise Failure(f"rejected batch {rows!r} ({exc}) changed the database") from exc
        if not str(exc):
            raise Failure(f"rejected batch {rows!r} with an empty message")
        return
    except RivuletError as exc:
        if "duplicate" in str(exc):
            return
        raise Failure(f"batch {rows!r}: {type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        raise Failure(f"batch {rows!r} raised {type(exc).__name__}: {exc}") from exc
    db.settle()
    try:
        for row in rows:
            stored = db.query("SELECT * FROM w WHERE id = ?", [row[0]])
            if len(stored) != 1:
                raise Failure(f"row {row!r} written, {len(stored)} read back")
            for column, got, sent in zip(_WRITE_COLUMNS, stored[0], row):
                if not _same(got, sent, column):
                    raise Failure(f"column {column}: wrote {sent!r}, read back {got!r}")
    finally:
        _remove_rows(db, rows, checker)


def _remove_rows(db: rivulet.Database, rows: list[tuple], checker: Checker | None) -> None:
    """Delete the batch's rows again (from the mirror too), so that ``w`` stays small."""
    delete = f"DELETE FROM w WHERE id IN ({', '.join('?' * len(rows))})"
    keys = [row[0] for row in rows]
    db.execute(delete, keys)
    if checker is not None:
        checker.mirror.execute(delete, keys)
        if checker.out_of_step:
            checker.resync()


# --------------------------------------------------------------------------- protocol inputs


def mysql_packet(payload: bytes, seq: int) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq & 0xFF]) + payload


class RawClient:
    """A MySQL client on a bare socket: handshake as ``root`` (empty password), then any
    bytes at all."""

    def __init__(self, port: int, *, login: bool = True, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.greeting = self.read_packet()
        if login:
            self.login()

    def login(self, user: str = "root") -> None:
        caps = 0x00000200 | 0x00008000 | 0x00080000 | 0x00000001 | 0x00002000
        payload = (struct.pack("<IIB", caps, 1 << 24, 45) + b"\x00" * 23 + user.encode()
                   + b"\x00" + b"\x00" + b"mysql_native_password\x00")
        self.sock.sendall(mysql_packet(payload, 1))
        reply = self.read_packet()
        if reply[:1] == b"\xfe":  # auth switch: answer with the empty password
            self.sock.sendall(mysql_packet(b"", 3))
            reply = self.read_packet()
        if reply[:1] != b"\x00":
            raise ConnectionError(f"login failed: {reply!r}")

    def read_packet(self) -> bytes:
        header = self._read(4)
        return self._read(int.from_bytes(header[:3], "little"))

    def _read(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("closed by the server")
            out += chunk
        return out

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def reply(self, timeout: float = 3.0) -> str:
        """What the server did: "error", "ok", "rows", "closed" or "silent" (nothing in
        ``timeout`` seconds: the server waits for the rest of a packet, or sends no reply)."""
        self.sock.settimeout(timeout)
        try:
            packet = self.read_packet()
        except TimeoutError:
            return "silent"
        except (ConnectionError, OSError):
            return "closed"
        kind = {0xFF: "error", 0x00: "ok", 0xFE: "ok"}.get(packet[0] if packet else -1, "rows")
        if kind == "rows":  # drain a result set so the next command starts clean
            self.sock.settimeout(0.5)
            try:
                while True:
                    self.read_packet()
            except (OSError, ConnectionError):
                pass
        return kind

    def close(self) -> None:
        self.sock.close()


#: max_allowed_packet of the server the protocol fuzzer runs against.
PROTOCOL_MAX_PACKET = 1 << 20

_COMMANDS = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x0E, 0x11, 0x16, 0x17, 0x18, 0x19, 0x1A,
             0x1C, 0x1F, 0x20, 0x7F, 0xFF]


@st.composite
def protocol_input(draw: Any) -> tuple[str, bytes, bool]:
    """(kind, bytes to send, whether to log in first): one malformed exchange."""
    kind = draw(st.sampled_from(["command", "command", "truncated", "bad sequence",
                                 "oversize", "before login", "garbage stream", "stmt", "sql"]))
    command = draw(st.sampled_from(_COMMANDS))
    body = draw(st.binary(max_size=64))
    if kind == "command":  # a whole packet: a command byte and random arguments
        return kind, mysql_packet(bytes([command]) + body, 0), True
    if kind == "sql":  # unsupported SQL as a text query or a prepared statement
        _, sql, _ = draw(unsupported_sql())
        return kind, mysql_packet(draw(st.sampled_from([b"\x03", b"\x16"])) + sql.encode(), 0), True
    if kind == "truncated":  # the header promises more than follows (then the socket ends)
        payload = bytes([command]) + body
        cut = draw(st.integers(0, len(payload)))
        return kind, (len(payload) + draw(st.integers(1, 1000))).to_bytes(3, "little") + \
            b"\x00" + payload[:cut], True
    if kind == "bad sequence":
        sql = draw(st.sampled_from([b"SELECT id, a, s FROM by_id WHERE id = 1", b"SELECT 1",
                                    b"\x00"]))
        return kind, mysql_packet(b"\x03" + sql, draw(st.integers(1, 255))), True
    if kind == "oversize":  # a whole packet past max_allowed_packet (PROTOCOL_MAX_PACKET)
        size = PROTOCOL_MAX_PACKET + draw(st.integers(1, 1000))
        payload = (bytes([command]) + body + b"\x00" * size)[:size]
        return kind, mysql_packet(payload, 0), True
    if kind == "before login":
        return kind, draw(st.one_of(st.binary(max_size=200),
                                    st.builds(mysql_packet, st.binary(max_size=100),
                                              st.integers(0, 255)))), False
    if kind == "stmt":  # prepared-statement commands naming statements that may not exist
        stmt_id = draw(st.sampled_from([0, 1, 2, 0xFFFFFFFF]))
        which = draw(st.sampled_from([0x17, 0x18, 0x19, 0x1A, 0x1C]))
        return kind, mysql_packet(bytes([which]) + stmt_id.to_bytes(4, "little") + body, 0), True
    return kind, draw(st.binary(min_size=1, max_size=300)), True


_NO_REPLY = {0x18, 0x19}  # COM_STMT_SEND_LONG_DATA and COM_STMT_CLOSE answer nothing


def check_protocol(port: int, db: rivulet.Database, kind: str, data: bytes, login: bool,
                   witness: Any) -> None:
    """Send one malformed exchange, then check the server: it answered (with an error for
    an oversize packet) or closed the connection, and a connection it kept open is still
    in step (a ping is answered); an incomplete packet may be waited for. Another client
    still reads, and nothing changed (but for the ad-hoc view a well-formed read such as
    ``SELECT 1`` makes). ``witness`` is that other client (PyMySQL)."""
    before = digest(db, adhoc=False)
    client = RawClient(port, login=login)
    try:
        client.send(data)
        whole = kind in ("command", "stmt", "bad sequence", "oversize", "sql")
        no_reply = not whole or data[4] in _NO_REPLY
        outcome = client.reply(0.3 if no_reply else 3.0)
        if kind == "oversize" and outcome != "error":
            raise Failure(f"oversize packet: answered {outcome!r}, not error 1153")
        if whole and outcome == "silent" and data[4] not in _NO_REPLY:
            raise Failure(f"{kind} {data[:40]!r}: no answer")
        if whole and outcome != "closed":
            client.send(mysql_packet(b"\x0e", 0))  # COM_PING
            if client.reply() not in ("ok", "closed"):
                raise Failure(f"{kind} {data[:40]!r}: the connection is out of step after it")
    except (ConnectionError, OSError):
        outcome = "closed"
    finally:
        client.close()
    with witness.cursor() as cursor:
        cursor.execute("SELECT id, a, s FROM by_id WHERE id = %s", (3,))
        if cursor.fetchall() != ((3, 3, "s3"),):
            raise Failure(f"{kind} {data[:40]!r}: the other client's read went wrong")
    if digest(db, adhoc=False) != before:
        raise Failure(f"{kind} {data[:40]!r} ({outcome}) changed the database")


# --------------------------------------------------------------------------- HTTP inputs

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12)
_NAMES = st.one_of(st.sampled_from(["t", "u", "w", "by_id", "sums", "nowhere", "T", "BY_ID"]),
                   st.text(max_size=12), st.sampled_from(_STRINGS[:16]))


def _segment(text: str) -> str:
    """``text`` percent-encoded as one path segment (its bytes, lone surrogates included)."""
    return urllib.parse.quote(text.encode("utf-8", "surrogatepass"), safe="")


@st.composite
def http_request(draw: Any) -> tuple[str, str, dict[str, Any]]:
    """(method, path, httpx keyword arguments): one request to any endpoint, with names,
    keys, query parameters and bodies that are mostly wrong."""
    name = draw(_NAMES)
    key = draw(st.one_of(st.integers().map(str), st.text(max_size=12), st.just("[1, 2]")))
    method, path = draw(st.sampled_from([
        ("GET", "/views/{n}"), ("POST", "/views/{n}/lookup"), ("GET", "/views/{n}/rows"),
        ("PUT", "/views/{n}"), ("DELETE", "/views/{n}"), ("POST", "/tables/{n}/rows"),
        ("PATCH", "/tables/{n}/rows/{k}"), ("DELETE", "/tables/{n}/rows/{k}"),
        ("POST", "/sql"), ("GET", "/views"), ("GET", "/tables"), ("GET", "/graph"),
        ("POST", "/views"), ("GET", "/{n}"), ("OPTIONS", "/sql"),
    ]))
    path = path.replace("{n}", _segment(name)).replace("{k}", _segment(key))
    params = draw(st.dictionaries(st.sampled_from(["key", "block", "limit", "min_lsn", "format"]),
                                  st.text(max_size=10), max_size=3))
    body = draw(st.one_of(
        st.none(), _JSON.map(lambda v: {"json": v}),
        st.binary(max_size=100).map(lambda b: {"content": b}),
        unsupported_sql().map(lambda e: {"json": {"sql": e[1], "params": []}}),
        unsupported_sql().map(lambda e: {"content": e[1].encode()}),
    ))
    return method, path, {"params": params, **(body or {})}


def check_http(client: Any, db: rivulet.Database, method: str, path: str,
               kwargs: dict[str, Any], checker: Checker | None = None) -> None:
    """One request: never a 5xx (kept for rivulet's own bugs), an error answer is JSON
    ``{"error", "kind"}`` and changes nothing. A request that succeeded may have changed
    the program or the data (a PUT of a valid view, a valid row): it is undone by a fresh
    baseline (the next request's digest). With a ``checker``, a 2xx answer is checked
    against the oracle (a view's rows, a SQL answer, the rows a write changed)."""
    before = digest(db)
    response = client.request(method, path, **kwargs)
    if checker is not None and 200 <= response.status_code < 300:
        check_http_answer(checker, method, path, kwargs, response, checker.avoided)
        if checker.out_of_step:
            checker.resync()
    if response.status_code >= 500:
        raise Failure(f"HTTP {method} {path} {kwargs!r}: "
                      f"{response.status_code} {response.text[:300]}")
    if response.status_code >= 400:
        body = response.json()
        if not isinstance(body, dict) or not body.get("error") or not body.get("kind"):
            raise Failure(f"HTTP {method} {path}: error answer without error/kind: {body!r}")
        if digest(db) != before:
            raise Failure(f"HTTP {method} {path} {kwargs!r}: {response.status_code} but the "
                          "database changed")


# --------------------------------------------------------------------------- the budgeted run

#: Seconds per fuzzer (quick, full). The oracle fuzzer's fronts run in two worker
#: processes (embedded; MySQL then HTTP) while the others run in this one, and stop early
#: once they have checked :data:`ORACLE_GOALS` inputs (so a busy machine takes longer, up
#: to these seconds, and a quiet one less).
SECONDS: dict[bool, dict[str, float]] = {
    True: {"sql": 4, "writes": 4, "http": 4, "protocol": 3,
           "oracle embedded": 16, "oracle mysql": 8, "oracle http": 8},
    False: {"sql": 30, "writes": 30, "http": 30, "protocol": 20,
            "oracle embedded": 540, "oracle mysql": 270, "oracle http": 270},
}
#: Inputs each front of the oracle fuzzer checks against MariaDB before it stops (the
#: benchmark's goal is 100,000 in all, 1,000 quick).
ORACLE_GOALS: dict[bool, dict[str, int]] = {
    True: {"embedded": 800, "mysql": 200, "http": 200},
    False: {"embedded": 70_000, "mysql": 16_000, "http": 16_000},
}


#: ``by_id`` as MySQL can have it: rivulet reads a view with parameters by name as a table
#: of its SELECT without them (its parameter column a column to filter on).
BY_ID_AS_TABLE = "CREATE VIEW by_id AS SELECT id, a, s FROM t"


def mirror_of_fuzz_database(oracle: Any) -> Any:
    """The oracle's copy of :func:`make_database`: the tables, their rows, and the views
    (``by_id`` without its parameter: :data:`BY_ID_AS_TABLE`)."""
    from pymysql.constants import CLIENT

    from bench.reliability_oracle import Mirror

    mirror = Mirror(oracle.schema(client_flag=CLIENT.MULTI_STATEMENTS))
    mirror.load({"t": (SCHEMA[0], ROWS_T), "u": (SCHEMA[1], ROWS_U), "w": (WRITE_TABLE, [])})
    mirror.execute(SCHEMA[3])
    mirror.execute(BY_ID_AS_TABLE)
    return mirror


def run(quick: bool, *, avoided: frozenset[str] | None = None) -> dict[str, Any]:
    """Fuzz SQL, writes, the HTTP API and the MySQL protocol, and the oracle fuzzer's
    generated SQL, for a time budget (:data:`SECONDS`: ~25 s quick, at most ~9 minutes
    full, the oracle fuzzer stopping at :data:`ORACLE_GOALS`),
    every accepted input checked against MariaDB; returns ``{"inputs", "failures",
    "by_fuzzer", "oracle": {...}}``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import pymysql

    from bench import oracle_sql
    from bench.oracle_fronts import EmbeddedFront, HttpFront
    from bench.reliability_oracle import fuzz_worker, mariadb_oracle
    from rivulet.server.mysql.server import ServerThread

    warnings.filterwarnings("ignore", category=HypothesisWarning)  # reprs of 70 kB strings
    avoided = oracle_sql.AVOIDED if avoided is None else avoided
    seconds = SECONDS[quick]
    goals = ORACLE_GOALS[quick]
    by_fuzzer: dict[str, Any] = {}
    tally = Tally()
    with mariadb_oracle() as oracle, ProcessPoolExecutor(
            2, mp_context=multiprocessing.get_context("spawn")) as pool:
        port = oracle.server.port
        workers = [
            pool.submit(fuzz_worker, port, {"embedded": seconds["oracle embedded"]}, goals,
                        sorted(avoided)),
            pool.submit(fuzz_worker, port, {"mysql": seconds["oracle mysql"],
                                            "http": seconds["oracle http"]}, goals,
                        sorted(avoided)),
        ]
        with tempfile.TemporaryDirectory(prefix="rivulet-fuzz-") as tmp:
            db = make_database(Path(tmp) / "db")
            mirror = mirror_of_fuzz_database(oracle)
            try:
                checker = Checker(db, mirror, tally, EmbeddedFront(db), avoided)
                checker.name = "sql fuzzer"
                hows = st.sampled_from(["execute", "query", "create_view", "script"])
                by_fuzzer["sql"] = drive(
                    st.tuples(sql_inputs(), hows), seconds["sql"],
                    lambda example, how: check_sql(db, *example, how=how, checker=checker))
                checker.name = "write fuzzer"
                by_fuzzer["writes"] = drive(
                    st.tuples(write_batch(avoided), st.sampled_from(["table", "insert"])),
                    seconds["writes"], lambda rows, via: check_writes(db, rows, via, checker))
                import httpx

                from rivulet.server.http.app import make_app
                from rivulet.server.http.serve import serve_http

                http = serve_http(make_app(db), port=0)
                try:
                    http_checker = Checker(db, mirror, tally, HttpFront(http.url, db), avoided)
                    http_checker.name = "http fuzzer"
                    with httpx.Client(base_url=http.url, timeout=30) as client:
                        by_fuzzer["http"] = drive(
                            http_request(), seconds["http"],
                            lambda *request: check_http(client, db, *request, checker=http_checker))
                finally:
                    http.stop()
                # A fresh database: requests the HTTP fuzzer made that succeeded may have
                # changed the program (DELETE /views/by_id), and the witness reads by_id.
                db.close()
                db = make_database(Path(tmp) / "protocol")
                server = ServerThread(db, port=0, max_packet=PROTOCOL_MAX_PACKET)
                witness = pymysql.connect(host="127.0.0.1", port=server.port, user="root",
                                          autocommit=True, read_timeout=60, write_timeout=60)
                try:
                    by_fuzzer["protocol"] = drive(
                        protocol_input(), seconds["protocol"],
                        lambda kind, data, login: check_protocol(server.port, db, kind, data,
                                                                 login, witness))
                finally:
                    witness.close()
                    server.stop()
            finally:
                db.close()
                mirror.conn.close()
        oracle_runs = []
        for worker in workers:
            worker_tally, out = worker.result()
            tally.merge(worker_tally)
            oracle_runs.append(out)
    by_fuzzer["oracle"] = {
        "inputs": sum(n for run in oracle_runs for n in run["inputs"].values()),
        "failures": 0,  # (its failures are the oracle's: tally.failed)
        "by_front": {front: n for run in oracle_runs for front, n in run["inputs"].items()},
        "seconds": {front: n for run in oracle_runs for front, n in run["seconds"].items()},
        "goals": goals,
        "episodes": {front: n for run in oracle_runs for front, n in run["episodes"].items()},
        "columns": oracle_runs[0]["columns"],
    }
    checked = tally.as_dict()
    return {
        "inputs": sum(f["inputs"] for f in by_fuzzer.values()),
        "failures": sum(f["failures"] for f in by_fuzzer.values()) + checked["failures"],
        "seconds_per_fuzzer": seconds,
        "by_fuzzer": by_fuzzer,
        "oracle": {**checked, "avoided_shapes": sorted(avoided),
                   "undecidable_shapes": sorted(oracle_sql.UNDECIDABLE)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--avoid", choices=["listed", "none"], default="listed",
                        help="none: generate the shapes bench/oracle_sql.py AVOIDED names too")
    args = parser.parse_args()
    avoided: frozenset[str] | None = frozenset() if args.avoid == "none" else None
    print(json.dumps(run(args.quick, avoided=avoided), indent=2, default=str))


if __name__ == "__main__":
    main()


__all__ = ["ORACLE_GOALS", "SECONDS", "Failure", "RawClient", "check_http", "check_protocol",
           "check_sql", "check_writes", "digest", "http_request", "listed_refusals",
           "make_database",
           "mirror_of_fuzz_database", "protocol_input", "run", "sql_inputs", "unsupported_sql",
           "write_batch"]
