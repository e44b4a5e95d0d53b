"""The fuzzers' oracle: what rivulet accepts is also run on MariaDB, and the answers compared.

A fuzzer that only checks "no crash" passes a database that answers wrongly. Here every
statement, lookup and row write that rivulet accepts, embedded, over the MySQL protocol or
over HTTP (a *front*: ``bench/oracle_fronts.py``), is
also run on a :class:`Mirror`, a MariaDB schema holding the same tables and rows, set up
as MySQL 8 (``bench/mysql_oracle.py``), and the :class:`Checker` compares:

* reads: rows as multisets (in order where the query has ORDER BY; LIMIT cuts may take any
  of the rows tied there), values (DECIMAL exactly, floats within a relative 1e-9) and
  per-column types (an ``int`` where MySQL gives an integer, a ``Decimal`` of the same
  scale where it gives a DECIMAL...); over HTTP, the JSON rows against MariaDB's rows
  encoded as docs/http.md says (DECIMAL as its exact string, dates in ISO 8601);
* writes: the count of affected rows (MySQL's: rows *changed* by an UPDATE), and then the
  written table read back through rivulet against MariaDB's (every column type makes this
  round trip);
* refusals: a statement rivulet refuses (a clean error) is a refusal, counted, and MariaDB's
  effect of it is rolled back; the tables are read back to check it changed nothing. A
  statement rivulet accepts and MariaDB rejects is a mismatch (rivulet answered what MySQL
  would not).

Every outcome goes to a :class:`Tally`: inputs checked against the oracle, refusals,
mismatches (each with a repro: the tables' rows and the statement, as SQL), failures
(rivulet broke: an internal exception, a 5xx, a dropped connection) and inputs the oracle
cannot express (a NaN, a lone surrogate: no MySQL client can send them) or that fall in a
shape the generator avoids by name (``bench/oracle_sql.py``, :data:`AVOIDED`).

:func:`run_oracle_fuzz` drives the generated SQL of ``bench/oracle_sql.py`` through each
front for a time budget; ``bench/reliability_fuzz.py`` also checks its own fuzzers'
accepted inputs (SQL, hostile writes, HTTP requests) with a :class:`Checker`.
"""

from __future__ import annotations

import decimal
import hashlib
import itertools
import json
import random
import re
import shutil
import socket
import tempfile
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

import rivulet
from bench import oracle_sql as q
from bench.answers import query_shape
from bench.fuzz_budget import drive
from bench.mysql_oracle import MariaDBOracle, inline_params, mysql_mismatch, start_oracle
from bench.oracle_fronts import (
    FRONTS,
    Broken,
    Front,
    FrontMaker,
    Inexpressible,
    Refused,
    insert_sql,
    update_sql,
)
from rivulet.errors import RivuletError

#: Mismatches kept with their repro in the results (the counts cover every one).
MAX_EXAMPLES = 25


# --------------------------------------------------------------------------- outcomes


class OracleRefused(Exception):
    """MariaDB rejected the statement (an error MySQL would give)."""


@dataclass
class Tally:
    """What the oracle checks found, per front."""

    checked: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    #: refusals where MariaDB refused too (a subset of ``refused``)
    refused_by_both: Counter[str] = field(default_factory=Counter)
    mismatched: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    inexpressible: Counter[str] = field(default_factory=Counter)
    #: inputs the random fuzzers made that fall in a shape :data:`AVOIDED` names
    avoided: Counter[str] = field(default_factory=Counter)
    #: accepted inputs with no SQL answer to compare (GET /graph, a CREATE VIEW ...)
    unanswered: Counter[str] = field(default_factory=Counter)
    #: statements the SQL fuzzer sends as refused (``listed_refusals`` in
    #: bench/reliability_fuzz.py) that rivulet answered, by construct: checked like any
    #: other accepted input, and a sign the list is behind rivulet
    listed_but_answered: Counter[str] = field(default_factory=Counter)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def mismatch(self, front: str, report: str, repro: str, *, failure: bool = False) -> None:
        (self.failed if failure else self.mismatched)[front] += 1
        headline = _headline(report)
        if len(self.examples) < MAX_EXAMPLES and not any(
                e["front"] == front and _headline(e["report"]) == headline
                for e in self.examples):
            example = {"front": front, "kind": "failure" if failure else "mismatch",
                       "report": _cut(report, 4000), "repro": _cut(repro, 12000)}
            if len(repro) > 12000:  # (a history's middle is what a repro cannot do without)
                example["whole_repro"] = str(_keep_whole(repro))
            self.examples.append(example)

    def merge(self, other: Tally) -> None:
        """Add ``other``'s counts and examples (a worker process's) to these."""
        for name in ("checked", "refused", "refused_by_both", "mismatched", "failed",
                     "inexpressible", "avoided", "unanswered", "listed_but_answered"):
            getattr(self, name).update(getattr(other, name))
        for example in other.examples:
            if len(self.examples) < MAX_EXAMPLES:
                self.examples.append(example)

    def as_dict(self) -> dict[str, Any]:
        fronts = sorted(set(self.checked) | set(self.refused) | set(self.mismatched)
                        | set(self.failed))
        return {
            "checked_against_oracle": sum(self.checked.values()),
            "mismatches": sum(self.mismatched.values()),
            "failures": sum(self.failed.values()),
            "refusals": sum(self.refused.values()),
            "refusals_mariadb_also_refused": sum(self.refused_by_both.values()),
            "inexpressible": sum(self.inexpressible.values()),
            "avoided_by_shape": dict(self.avoided),
            "accepted_without_answer": sum(self.unanswered.values()),
            "listed_as_refused_but_answered": dict(self.listed_but_answered),
            "by_front": {f: {"checked": self.checked[f], "refused": self.refused[f],
                             "mismatches": self.mismatched[f], "failures": self.failed[f]}
                         for f in fronts},
            "examples": self.examples,
        }


#: Where a repro too long for the result file is kept whole (not kept by git).
REPRO_DIR = Path(__file__).resolve().parent / "results" / "repros"


def _keep_whole(repro: str) -> Path:
    """Write ``repro`` to :data:`REPRO_DIR`, named by its hash; returns the path."""
    REPRO_DIR.mkdir(parents=True, exist_ok=True)
    data = repro.encode("utf-8", "surrogatepass")
    path = REPRO_DIR / f"{hashlib.sha1(data).hexdigest()[:12]}.sql"
    path.write_bytes(data)
    return path


def _cut(text: str, limit: int) -> str:
    """``text``, or its head and tail (a repro's data, and the statement at its end)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit // 2]}\n... ({len(text) - limit:,} characters cut) ...\n" \
           f"{text[-limit // 2:]}"


def _short(params: Sequence[Any], limit: int = 600) -> str:
    """Parameters as a report shows them (a 70 kB string cut short)."""
    text = repr(tuple(params))
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _headline(report: str) -> str:
    """A report's first line without the names and numbers that vary between inputs (one
    example is kept per headline)."""
    first = report.splitlines()[0] if report else ""
    return re.sub(r"fz_view\d+|\d+", "#", first)[:160]


# --------------------------------------------------------------------------- the mirror


class Mirror:
    """A MariaDB schema that holds what the rivulet database holds (the oracle's copy)."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.ddl: dict[str, str] = {}
        #: each table's rows as last read (the data a repro of a read starts from)
        self.rows: dict[str, list[tuple]] = {}
        #: each table's rows as loaded (where a repro with the statements since starts)
        self.loaded: dict[str, list[tuple]] = {}

    def text(self, sql: str, params: Sequence[Any]) -> str:
        """``sql`` with ``params`` inlined as a driver would, or Inexpressible."""
        try:
            text = inline_params(sql, params, self.conn)
            text.encode("utf-8")
        except (TypeError, ValueError, UnicodeError) as exc:
            raise Inexpressible(f"{type(exc).__name__}: {exc}") from None
        except Exception as exc:  # PyMySQL's ProgrammingError for NaN and infinities
            if type(exc).__module__.startswith("pymysql"):
                raise Inexpressible(str(exc)) from None
            raise
        return text

    def _run(self, text: str) -> tuple[int, list[tuple]]:
        import pymysql

        try:
            with self.conn.cursor() as cur:
                count = cur.execute(text)
                return count, [tuple(r) for r in cur.fetchall()]
        except pymysql.err.MySQLError as exc:
            code = exc.args[0] if exc.args else None
            if isinstance(code, int) and code >= 2000:  # the client or connection, not SQL
                raise
            raise OracleRefused(f"{code}: {exc.args[1] if len(exc.args) > 1 else exc}") from None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self._run(self.text(sql, params))[1]

    def query_many(self, texts: Sequence[str], batch: int = 40
                   ) -> list[list[tuple] | OracleRefused]:
        """The answers to several SELECT texts, sent ``batch`` to a round trip (the
        connection takes multi-statements): an answer, or the error of that statement
        (MariaDB stops a batch at an error; the rest go again)."""
        import pymysql

        out: list[list[tuple] | OracleRefused] = []
        while len(out) < len(texts):
            chunk = texts[len(out): len(out) + batch]
            try:
                with self.conn.cursor() as cur:
                    cur.execute(";\n".join(chunk))
                    out.append([tuple(r) for r in cur.fetchall()])
                    while cur.nextset():
                        out.append([tuple(r) for r in cur.fetchall()])
            except pymysql.err.MySQLError as exc:
                code = exc.args[0] if exc.args else None
                if isinstance(code, int) and code >= 2000:
                    raise
                out.append(OracleRefused(f"{code}: {exc.args[1] if len(exc.args) > 1 else exc}"))
        return out

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._run(self.text(sql, params))[0]

    @contextmanager
    def transaction(self) -> Iterator[Callable[[], None]]:
        """A transaction rolled back at the end unless the ``commit`` yielded is called."""
        done = [False]

        def commit() -> None:
            self.conn.commit()
            done[0] = True

        self.conn.begin()
        try:
            yield commit
        finally:
            if not done[0]:
                self.conn.rollback()

    def table(self, name: str) -> list[tuple]:
        rows = self.query(f"SELECT * FROM {name}")
        self.rows[name] = rows
        return rows

    def load(self, tables: Mapping[str, tuple[str, Sequence[Sequence[Any]]]]) -> None:
        """Replace the schema's tables with ``tables`` (name -> (DDL, rows))."""
        for name in tables:
            self._run(f"DROP TABLE IF EXISTS {name}")
        for name, (ddl, rows) in tables.items():
            self._run(ddl)
            self.ddl[name] = ddl
            for chunk in range(0, len(rows), 200):
                batch = rows[chunk: chunk + 200]
                if batch:
                    values = ", ".join(self.text("(" + ", ".join("?" * len(r)) + ")", r)
                                       for r in batch)
                    self._run(f"INSERT INTO {name} VALUES {values}")
            self.rows[name] = [tuple(r) for r in rows]
            self.loaded[name] = self.rows[name]

    def repro(self, statement: str, params: Sequence[Any] = (),
              journal: Sequence[str] | None = None) -> str:
        """SQL that rebuilds the tables as last read and runs ``statement``; with a
        ``journal``, the tables as loaded and then the journal's statements (views made,
        writes accepted), for what depends on history (a view kept up to date)."""
        lines = []
        for name, ddl in self.ddl.items():
            lines.append(f"{ddl};")
            rows = (self.loaded if journal is not None else self.rows).get(name, [])
            if rows:
                values = ",\n  ".join(
                    "(" + ", ".join(_literal(self.conn, v) for v in row) + ")" for row in rows)
                lines.append(f"INSERT INTO {name} VALUES\n  {values};")
        lines += [f"{line};" for line in journal or ()]
        try:
            lines.append(self.text(statement, params) + ";")
        except Inexpressible:
            lines.append(f"{statement};  -- parameters: {_short(params)}")
        return "\n".join(lines)


def _literal(conn: Any, value: Any) -> str:
    try:
        return str(conn.escape(value))
    except Exception:
        return repr(value)


# --------------------------------------------------------------------------- the checker


@dataclass(frozen=True)
class RowWrite:
    """A write through the table API (``insert_many``; ``update``/``delete`` by key), the
    HTTP API's row endpoints, or their SQL over MySQL."""

    kind: str  # "insert", "update", "delete"
    table: str
    rows: tuple[tuple | dict, ...] = ()
    pk: int = 0
    values: dict[str, Any] = field(default_factory=dict)

    def oracle_statements(self, front: Front) -> list[tuple[str, list]]:
        """The SQL MariaDB runs for it (with ``front``'s encoding of the values)."""
        if self.kind == "insert":
            return front.insert_statements(self.table, list(self.rows))
        if self.kind == "update":
            sent = dict(zip(self.values, front.sent(list(self.values.values()))))
            return [update_sql(self.table, self.pk, sent)]
        return [(f"DELETE FROM {self.table} WHERE id = ?", [self.pk])]


class Checker:
    """Runs inputs through one front and on the mirror, and records what it finds."""

    def __init__(self, db: rivulet.Database, mirror: Mirror, tally: Tally, front: Front,
                 avoided: frozenset[str] = q.AVOIDED) -> None:
        self.db = db
        self.avoided = avoided
        #: what the tally counts this checker's inputs under (the front's name by default)
        self.name = front.name
        self.mirror = mirror
        self.tally = tally
        self.front = front
        self.views = itertools.count()
        #: set when the mirror may no longer hold what rivulet holds (after a mismatch of
        #: data): the session reloads both before the next input
        self.out_of_step = False
        #: the views made, queries asked and writes accepted since the tables were loaded
        #: (a session's checker keeps one: its repros replay it, as views shared and kept
        #: up to date depend on history); None: repros start from the rows as last read
        self.journal: list[str] | None = None
        #: the views made and the queries asked, to ask again after later writes
        self.made: list[tuple[str, q.ViewCase]] = []
        self.asked: list[q.Query] = []


    def _mismatch(self, report: str, statement: str, params: Sequence[Any] = (), *,
                  failure: bool = False) -> None:
        self.tally.mismatch(self.name, report,
                            self.mirror.repro(statement, params, self.journal),
                            failure=failure)

    def _journal(self, line: str) -> None:
        if self.journal is not None:
            self.journal.append(line)

    # ..................................................................... reads

    def query(self, query: q.Query) -> None:
        """An ad-hoc SELECT, with each of its parameter tuples."""
        self._journal(f"{query.sql}  -- (asked: rivulet makes it a view)")
        self.asked.append(query)
        for params in query.params:
            self.read(query.sql, params)

    def ask_again(self, pick: int) -> None:
        """A query asked earlier, asked again (answered by the view made for it then, kept
        up to date since)."""
        if self.asked:
            query = self.asked[pick % len(self.asked)]
            for params in query.params:
                self.read(query.sql, params)

    def read(self, sql: str, params: Sequence[Any] = ()) -> None:
        """An ad-hoc SELECT."""
        try:
            sent = self.front.sent(params)
            self.mirror.text(sql, sent)  # (can MySQL be sent it at all?)
            got = self.front.query(sql, params)
        except Inexpressible:
            self.tally.inexpressible[self.name] += 1
            return
        except Refused:
            self.tally.refused[self.name] += 1
            return
        except Broken as exc:
            self._mismatch(f"rivulet broke on a SELECT: {exc}\n  query:   {sql}\n"
                           f"  params:  {_short(params)}", sql, params, failure=True)
            return
        self.compare(sql, sent, got, what="query")

    def compare(self, sql: str, sent: Sequence[Any], got: Sequence[Sequence[Any]], *,
                what: str) -> bool:
        """rivulet's answer ``got`` against MariaDB's; counts it and returns whether they
        agree."""
        try:
            keyed = query_shape(sql, "mysql").keyed_sql
        except Exception:  # a shape the comparison cannot line up (none is generated)
            self.tally.unanswered[self.name] += 1
            return True
        full: list[tuple] | OracleRefused
        try:
            full = self.mirror.query(keyed, sent)
        except OracleRefused as exc:
            full = exc
        return self.judge(sql, sent, got, full, what=what)

    def judge(self, sql: str, sent: Sequence[Any], got: Sequence[Sequence[Any]],
              full: list[tuple] | OracleRefused, *, what: str) -> bool:
        """rivulet's answer ``got`` against MariaDB's ``full`` answer (to the query's keyed
        form: see :func:`bench.answers.query_shape`) or error."""
        if isinstance(full, OracleRefused):
            shape = _error_shape(full)
            if shape is not None and shape in self.avoided:
                self.tally.avoided[shape] += 1
                return True
            self._mismatch(f"rivulet answered a statement MySQL rejects ({full}) on {what}\n"
                           f"  rivulet: {list(got)[:10]!r}", sql, sent)
            return False
        report = self.report(sql, sent, [tuple(r) for r in got], self.front.answer(full),
                             what=f"{what} over {self.name}")
        if report == _SET_ASIDE:
            return True
        if report is not None:
            self._mismatch(report, sql, sent)
            return False
        self.tally.checked[self.name] += 1
        return True

    def report(self, sql: str, sent: Sequence[Any], rows: list[tuple], theirs: list[tuple],
               *, what: str) -> str | None:
        """:func:`mysql_mismatch`, but an answer that differs only by a negative zero
        DECIMAL, where that shape is avoided, is set aside (counted) and ``_SET_ASIDE``
        returned."""
        report = mysql_mismatch(sql, sent, rows, theirs, what=what)
        if report is None or _NEGATIVE_ZERO not in self.avoided:
            return report
        if mysql_mismatch(sql, sent, [tuple(_unsigned_zero(v) for v in r) for r in rows],
                          [tuple(_unsigned_zero(v) for v in r) for r in theirs]) is None \
                or self._agrees_without_negative_zeros(sql, sent, rows):
            self.tally.avoided[_NEGATIVE_ZERO] += 1
            return _SET_ASIDE
        return report

    def _agrees_without_negative_zeros(self, sql: str, sent: Sequence[Any],
                                       rows: list[tuple]) -> bool:
        """Whether MariaDB answers ``rows`` once its quotients and remainders cannot be
        a negative zero DECIMAL. MariaDB's can (``1 / -2147483648`` is -0.0000, which is
        unequal to 0 in its IN), MySQL's cannot (its division makes a zero result a plain
        zero): so a condition on one can keep rows MySQL drops. ``q + 0`` is the same
        value, type and places, with MariaDB's zero made plain."""
        normalized = _zeros_made_positive(sql)
        if normalized is None:
            return False
        try:
            keyed = query_shape(normalized, "mysql").keyed_sql
            theirs = self.front.answer(self.mirror.query(keyed, sent))
        except Exception:  # (refused, or a shape the comparison cannot line up)
            return False
        return mysql_mismatch(sql, sent, rows, theirs) is None

    def view(self, case: q.ViewCase) -> None:
        """A view with parameters, looked up with each of ``case.lookups``. The view stays
        (the session's next database has none: dropping one views' worth of SQL costs a
        parse of every other view's)."""
        name = f"fz_view{next(self.views)}"
        try:
            self.front.create_view(name, case.select)
        except Refused:
            self.tally.refused[self.name] += 1
            return
        except Broken as exc:
            self._mismatch(f"rivulet broke creating a view: {exc}\n  query:   {case.select}",
                           case.select, failure=True)
            return
        self._journal(f"CREATE VIEW {name} AS {case.select}")
        self.made.append((name, case))
        self.look_up(name, case)

    def revisit(self, pick: int) -> None:
        """A view made earlier, looked up again: after the writes since, its answers come
        from state kept up to date, not computed afresh."""
        if self.made:
            self.look_up(*self.made[pick % len(self.made)])

    def look_up(self, name: str, case: q.ViewCase) -> None:
        """The view ``name`` looked up with each of ``case.lookups``."""
        try:
            keyed = query_shape(case.select, "mysql").keyed_sql
        except Exception:  # a shape the comparison cannot line up (none is generated)
            self.tally.unanswered[self.name] += 1
            return
        answered: list[tuple[tuple[Any, ...], list[tuple], str]] = []
        for params in {repr(p): p for p in case.lookups}.values():  # (each distinct once)
            try:
                sent = self.front.sent(params)
                text = self.mirror.text(keyed, sent)
                got = self.front.lookup(name, case.select, params)
            except Inexpressible:
                self.tally.inexpressible[self.name] += 1
                continue
            except Refused:
                self.tally.refused[self.name] += 1
                continue
            except Broken as exc:
                self._mismatch(f"rivulet broke on a lookup: {exc}\n  query:   {case.select}\n"
                               f"  params:  {_short(params)}", case.select, params,
                               failure=True)
                return
            answered.append((sent, got, text))
        fulls = self.mirror.query_many([text for _, _, text in answered])
        for (sent, got, _), full in zip(answered, fulls):
            if not self.judge(case.select, sent, got, full, what=f"view lookup {name}"):
                return  # one report per view is enough

    def tables(self) -> None:
        """Every table read back through the front (the round trip of every column type)."""
        for name in list(self.mirror.ddl):
            self.read(f"SELECT * FROM {name}")

    # ..................................................................... writes

    def write(self, sql: str, params: Sequence[Any], table: str) -> str:
        """An INSERT, UPDATE or DELETE: run in a MariaDB transaction, then on rivulet; the
        transaction is kept only if rivulet accepted the statement too. Returns the
        outcome: checked, refused, mismatch, failure, avoided or inexpressible."""
        return self._write([(sql, list(self.front.sent(params)))],
                           lambda: self.front.write(sql, params), table, sql, params)

    def row_write(self, op: RowWrite) -> str:
        calls: dict[str, Callable[[], int]] = {
            "insert": lambda: self.front.insert_rows(op.table, list(op.rows)),
            "update": lambda: self.front.update_row(op.table, op.pk, op.values),
            "delete": lambda: self.front.delete_row(op.table, op.pk),
        }
        try:
            statements = op.oracle_statements(self.front)
        except (TypeError, ValueError, AttributeError):  # rows no client could send
            self.tally.inexpressible[self.name] += 1
            return "inexpressible"
        return self._write(statements, calls[op.kind], op.table, *statements[0])

    def _write(self, statements: list[tuple[str, list]], on_rivulet: Callable[[], int],
               table: str, shown: str, shown_params: Sequence[Any]) -> str:
        try:
            texts = [self.mirror.text(sql, params) for sql, params in statements]
        except Inexpressible:
            self.tally.inexpressible[self.name] += 1
            return "inexpressible"
        before = self.mirror.rows.get(table)
        refusal: Refused | None = None
        with self.mirror.transaction() as commit:
            oracle_error: OracleRefused | None = None
            oracle_count = count = 0
            try:
                for text in texts:
                    oracle_count += self.mirror._run(text)[0]
            except OracleRefused as exc:
                oracle_error = exc
            try:
                count = on_rivulet()
            except Refused as exc:
                refusal = exc
            except Broken as exc:
                self._mismatch(f"rivulet broke on a write: {exc}\n  statement: {shown}\n"
                               f"  params:  {_short(shown_params)}", shown, shown_params,
                               failure=True)
                self.out_of_step = True
                return "failure"
            if refusal is None and oracle_error is None:
                commit()
        if refusal is not None:  # (MariaDB's effect, if any, is rolled back)
            self.tally.refused[self.name] += 1
            if oracle_error is not None:
                self.tally.refused_by_both[self.name] += 1
            self.unchanged(table, shown, shown_params, f"refused ({refusal})")
            return "refused"
        if oracle_error is not None:
            shape = _error_shape(oracle_error) or _negative_zero_refusal(oracle_error, shown)
            self.out_of_step = True  # (rivulet wrote what MariaDB did not)
            if shape is not None and shape in self.avoided:
                self.tally.avoided[shape] += 1
                return "avoided"
            self._mismatch(f"rivulet accepted a write MySQL rejects ({oracle_error}); "
                           f"rivulet: {count} row(s)\n  statement: {shown}\n"
                           f"  params:  {_short(shown_params)}", shown, shown_params)
            return "mismatch"
        self._journal(";\n".join(texts))
        if count != oracle_count:
            self._mismatch(f"rows affected: rivulet {count}, MariaDB {oracle_count}\n"
                           f"  statement: {shown}\n  params:  {_short(shown_params)}",
                           shown, shown_params)
            self.out_of_step = True
            return "mismatch"
        if self.same_table(table, shown, shown_params, before):
            self.tally.checked[self.name] += 1
            return "checked"
        return "mismatch"

    def resync(self) -> None:
        """Make the mirror hold rivulet's rows again (after a mismatch of data, where no
        fresh episode can be had: the legacy fuzzers' one database)."""
        self.db.settle()
        for name in self.mirror.ddl:
            rows = [tuple(r) for r in self.db.query(f"SELECT * FROM {name}")]
            self.mirror._run(f"DELETE FROM {name}")
            for row in rows:
                try:
                    self.mirror._run(self.mirror.text(
                        f"INSERT INTO {name} VALUES ({', '.join('?' * len(row))})", row))
                except (OracleRefused, Inexpressible):
                    pass  # (the next comparison of this table will say so)
            self.mirror.table(name)
        self.out_of_step = False

    def same_table(self, table: str, statement: str, params: Sequence[Any],
                   before: list[tuple] | None = None, *, what: str = "") -> bool:
        """rivulet's table, read back, holds MariaDB's rows (values and types)."""
        try:
            self.db.settle()
            got = [tuple(r) for r in self.db.query(f"SELECT * FROM {table}")]
        except Exception as exc:
            self._mismatch(f"reading {table} back failed: {type(exc).__name__}: {exc}",
                           statement, params, failure=True)
            self.out_of_step = True
            return False
        theirs = self.mirror.table(table)
        report = self.report(f"SELECT * FROM {table}", (), got, theirs,
                             what=f"table {table} after {what or 'a write'} over {self.name}")
        if report == _SET_ASIDE:
            self.out_of_step = True  # (the tables differ, if only by the sign of a zero)
            return False
        if report is not None:
            if before is not None:
                self.mirror.rows[table] = before  # the repro starts from the rows before
            self._mismatch(report, statement, params)
            self.out_of_step = True
            return False
        return True

    def unchanged(self, table: str, statement: str, params: Sequence[Any], what: str) -> None:
        """After a refused write: the table still holds what it held (read back)."""
        self.same_table(table, statement, params, what=f"a {what} write")

    # ..................................................................... after the fact

    def accepted(self, sql: str, params: Sequence[Any], result: Any) -> None:
        """A statement the random fuzzers sent that rivulet accepted (already run there):
        a SELECT's rows are compared; a write runs on MariaDB too and the counts and the
        tables are compared; DDL runs on MariaDB (a CREATE VIEW with ``?`` has no MySQL
        form, nor anything to compare)."""
        words = sql.lstrip().split(None, 1)
        first = words[0].upper() if words else ""
        if isinstance(result, list):
            self.compare(sql, self.front.sent(params), result, what="accepted SELECT")
            return
        try:
            text = self.mirror.text(sql, self.front.sent(params))
        except Inexpressible:
            self.tally.inexpressible[self.name] += 1
            return
        if first == "CREATE" and "?" in sql or first not in ("INSERT", "UPDATE", "DELETE",
                                                              "CREATE", "DROP", "ALTER"):
            self.tally.unanswered[self.name] += 1
            return
        try:
            count = self.mirror._run(text)[0]
        except OracleRefused as exc:
            self._mismatch(f"rivulet accepted a statement MySQL rejects ({exc})", sql, params)
            self.out_of_step = True
            return
        if first in ("INSERT", "UPDATE", "DELETE"):
            if count != result:
                self._mismatch(f"rows affected: rivulet {result}, MariaDB {count}", sql, params)
                self.out_of_step = True
                return
            table = _written_table(sql)
            if table is None or self.same_table(table, sql, params):
                self.tally.checked[self.name] += 1
        else:
            self.tally.unanswered[self.name] += 1

    def accepted_script(self, statements: Sequence[str]) -> None:
        """A script rivulet ran: MariaDB runs its statements too (SELECTs have no answer
        to compare here), then every table is compared."""
        ran = False
        for sql in statements:
            words = sql.lstrip().split(None, 1)
            if not words or words[0].upper() in ("SELECT", "WITH"):
                continue
            if words[0].upper() == "CREATE" and "?" in sql:
                continue  # (a view with parameters has no MySQL form)
            try:
                self.mirror._run(self.mirror.text(sql, ()))
                ran = True
            except (OracleRefused, Inexpressible) as exc:
                self._mismatch(f"rivulet ran a script statement MySQL rejects ({exc})", sql)
                self.out_of_step = True
                return
        if not ran:
            self.tally.unanswered[self.name] += 1
            return
        for table in list(self.mirror.ddl):
            if not self.same_table(table, "; ".join(statements), (), what="a script"):
                return
        self.tally.checked[self.name] += 1


#: MySQL errors that data, not the statement's shape, brings about, by the avoided shape
#: (``bench/oracle_sql.py``) they belong to: the checker sets such answers aside, counted.
_ERROR_SHAPES = {
    "1690": "integer overflow (MySQL error 1690)",
    "1916": "integer overflow (MySQL error 1690)",  # (a DIV past BIGINT, converted)
}


#: A DECIMAL zero computed from a negative operand: MariaDB shows -0.00 for some
#: (``MOD(-1.25, 1.25)``), rivulet 0.00: data decides, so the checker sets such answers
#: aside (those that differ in nothing else, either side's -0 made 0), counted under this name.
_NEGATIVE_ZERO = "a negative zero DECIMAL"
_SET_ASIDE = "(set aside: an avoided shape)"


def _zeros_made_positive(sql: str) -> str | None:
    """``sql`` with every ``/`` and MOD wrapped as ``(q + 0)`` (see
    :meth:`Checker._agrees_without_negative_zeros`); None if it has none or does not
    parse."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="mysql")
    except sqlglot.errors.ParseError:
        return None
    if not any(tree.find_all(exp.Div, exp.Mod)):
        return None

    def plain(node: exp.Expression) -> exp.Expression:
        if isinstance(node, (exp.Div, exp.Mod)):
            return exp.Paren(this=exp.Add(this=node, expression=exp.Literal.number(0)))
        return node

    return tree.transform(plain).sql(dialect="mysql")


def _unsigned_zero(value: Any) -> Any:
    """``value`` with a DECIMAL (or its string, over HTTP) -0 made 0."""
    if isinstance(value, decimal.Decimal) and value.is_zero() and value.is_signed():
        return value.copy_abs()
    if isinstance(value, str) and value.startswith("-") and value[1:].replace(".", "") and \
            set(value[1:]) <= set("0.") and value[1:2] == "0":
        return value[1:]
    return value


def _error_shape(error: OracleRefused) -> str | None:
    return _ERROR_SHAPES.get(str(error).split(":", 1)[0])


def _negative_zero_refusal(error: OracleRefused, sql: str) -> str | None:
    """:data:`_NEGATIVE_ZERO` where MariaDB refused a write as out of range (1264) that
    takes a remainder: its -0.00 does not fit an UNSIGNED column (rivulet's 0.00 does)."""
    if str(error).startswith("1264") and (" % " in sql or "MOD(" in sql.upper()):
        return _NEGATIVE_ZERO
    return None


_WRITTEN = re.compile(r"^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+`?(\w+)`?", re.IGNORECASE)


def _written_table(sql: str) -> str | None:
    m = _WRITTEN.match(sql)
    return m.group(1) if m else None


# --------------------------------------------------------------------------- HTTP answers


def check_http_answer(checker: Checker, method: str, path: str, kwargs: dict[str, Any],
                      response: Any, avoided: frozenset[str]) -> None:
    """A 2xx answer of the HTTP fuzzer (requests mostly wrong, some right) against the
    oracle: a view's rows, a lookup's, a scan's, a SQL answer, and the rows a write
    changed (its count, then the table read back)."""
    db = checker.db
    parts = [urllib.parse.unquote(p, errors="surrogatepass") for p in path.split("/")[1:]]
    try:
        body = response.json() if response.content else None
    except ValueError:  # /graph, /metrics: text
        body = None
    request_json = kwargs.get("json")
    if parts[:1] == ["views"] and len(parts) >= 2 and method in ("GET", "POST") and \
            isinstance(body, dict) and "rows" in body:
        try:
            view = db.view(parts[1])
        except RivuletError:  # dropped since (a later request): nothing to compare with
            checker.tally.unanswered[checker.name] += 1
            return
        sql = view.plan.sql
        kinds = _param_kinds(db, view)
        if len(parts) == 2:
            keys = _http_keys(kwargs.get("params") or {})
            if keys is None or _avoided_params(kinds, [keys], avoided, checker.tally):
                return
            checker.compare(sql, keys, [tuple(r) for r in body["rows"]], what=f"GET {path}")
        elif parts[2:] == ["lookup"] and isinstance(request_json, list):
            keys_list = [k if isinstance(k, list) else [k] for k in request_json]
            if _avoided_params(kinds, keys_list, avoided, checker.tally):
                return
            expected: list[tuple] = []
            for keys in {json.dumps(k): k for k in keys_list}.values():
                try:
                    expected += checker.mirror.query(sql, keys)
                except (OracleRefused, Inexpressible):
                    checker.tally.unanswered[checker.name] += 1
                    return
            _compare_union(checker, sql, request_json, body["rows"], expected, path)
        elif parts[2:] == ["rows"] and view.plan.param_count == 0 and \
                "limit" not in (kwargs.get("params") or {}):
            checker.compare(sql, (), [tuple(r) for r in body["rows"]], what=f"GET {path}")
        else:
            checker.tally.unanswered[checker.name] += 1
        return
    if parts[:1] == ["sql"] and method == "POST" and isinstance(body, dict):
        statement, params = _sql_of_request(kwargs)
        if statement is None:
            checker.tally.unanswered[checker.name] += 1
        elif "rows" in body:
            checker.accepted(statement, params, [tuple(r) for r in body["rows"]])
        else:
            checker.accepted(statement, params, body.get("rowcount"))
        return
    if parts[:1] == ["tables"] and len(parts) >= 3 and parts[2] == "rows" and \
            isinstance(body, dict):
        table = parts[1].lower()
        if table not in checker.mirror.ddl:
            checker.tally.unanswered[checker.name] += 1
            return
        db.settle()
        if method == "POST" and "inserted" in body:
            rows = request_json if isinstance(request_json, list) else [request_json]
            statements = [insert_sql(table, [r]) for r in rows if isinstance(r, (list, dict))]
            _replay(checker, statements, int(body["inserted"]), table, path)
        elif method == "PATCH" and len(parts) == 4 and isinstance(request_json, dict):
            _replay(checker, [update_sql(table, _pk(parts[3]), request_json)],
                    int(body["updated"]), table, path)
        elif method == "DELETE" and len(parts) == 4:
            _replay(checker, [(f"DELETE FROM {table} WHERE id = ?", [_pk(parts[3])])],
                    int(body["deleted"]), table, path)
        else:
            checker.tally.unanswered[checker.name] += 1
        return
    checker.tally.unanswered[checker.name] += 1


def _pk(raw: str) -> Any:
    """A primary key as the HTTP API reads one from a path (JSON array or the value)."""
    if raw.lstrip().startswith("["):
        try:
            parsed = json.loads(raw)
            if isinstance(parsed, list) and len(parsed) == 1:
                return parsed[0]
        except ValueError:
            pass
    return raw


def _replay(checker: Checker, statements: list[tuple[str, list]], count: int, table: str,
            path: str) -> None:
    # What a mismatch names: the first statement, or the request itself when it wrote no
    # row (a POST of ``[]``: nothing to replay, and the table must be as it was).
    shown = statements[0] if statements else (f"-- {path} with no rows", [])
    total = 0
    try:
        for sql, params in statements:
            total += checker.mirror.execute(sql, params)
    except (OracleRefused, Inexpressible) as exc:
        checker._mismatch(f"HTTP {path}: rivulet accepted a write MySQL rejects ({exc})",
                          *shown)
        checker.out_of_step = True
        return
    if total != count:
        checker._mismatch(f"HTTP {path}: rows affected: rivulet {count}, MariaDB {total}",
                          *shown)
        checker.out_of_step = True
        return
    if checker.same_table(table, *shown, what=f"HTTP {path}"):
        checker.tally.checked[checker.name] += 1


def _compare_union(checker: Checker, sql: str, keys: Any, got: list, expected: list[tuple],
                   path: str) -> None:
    from bench.answers import same_multiset

    rows = [tuple(r) for r in got]
    if same_multiset(rows, checker.front.answer(expected)):
        checker.tally.checked[checker.name] += 1
    else:
        checker._mismatch(f"POST {path} {keys!r}: rivulet {rows[:10]!r}, MariaDB (union over "
                          f"the keys) {checker.front.answer(expected)[:10]!r}", sql)


def _sql_of_request(kwargs: dict[str, Any]) -> tuple[str | None, list[Any]]:
    body = kwargs.get("json")
    if isinstance(body, dict) and isinstance(body.get("sql"), str):
        return body["sql"], list(body.get("params") or [])
    content = kwargs.get("content")
    if isinstance(content, bytes):
        try:
            return content.decode(), []
        except UnicodeDecodeError:
            return None, []
    return None, []


def _http_keys(params: dict[str, Any]) -> list[Any] | None:
    """The ``?`` values of ``GET /views/{name}`` as docs/http.md defines them (repeated
    ``key=`` strings, or one ``key=`` holding a JSON array)."""
    raw = params.get("key")
    if raw is None:
        return []
    if isinstance(raw, str) and raw.lstrip().startswith("["):
        try:
            values = json.loads(raw)
        except ValueError:
            return None
        return values if isinstance(values, list) else None
    return [raw] if isinstance(raw, str) else None


def _param_kinds(db: rivulet.Database, view: Any) -> list[str]:
    """The value kind of each ``?`` of ``view``'s SQL (of the column it is compared with)."""
    kinds = []
    for token in re.finditer(r"(\w+)\s*(?:=|<=|>=|<|>|IN\s*\()\s*\?", view.plan.sql, re.I):
        kinds.append(_column_kind(db, token.group(1)))
    return kinds


def _column_kind(db: rivulet.Database, name: str) -> str:
    for schema in db.catalog.tables.values():
        for column in schema.columns:
            if column.name.lower() == name.lower():
                return str(column.kind)
    return "unknown"


def _avoided_params(kinds: list[str], key_lists: list[list[Any]], avoided: frozenset[str],
                    tally: Tally) -> bool:
    """Whether a lookup compares a string key with a numeric column (or a number with a
    string column): counted under that avoided shape, not compared."""
    shape = "mixed string/number comparison"
    if shape not in avoided:
        return False
    for keys in key_lists:
        for kind, key in zip(kinds, keys):
            numeric_column = kind in ("int", "float", "decimal", "bool")
            if (numeric_column and isinstance(key, str) and not _is_number_text(key)) or \
                    (kind == "str" and isinstance(key, (int, float)) and
                     not isinstance(key, bool)):
                tally.avoided[shape] += 1
                return True
    return False


def _is_number_text(text: str) -> bool:
    try:
        float(text.strip())
    except ValueError:
        return False
    return text == text.strip() and text.strip() != "" and \
        re.fullmatch(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?", text) is not None


# --------------------------------------------------------------------------- the session


@dataclass(frozen=True)
class Action:
    """One input of the oracle fuzzer."""

    kind: str  # "query", "view", "write", "rows", "tables"
    payload: Any = None


def row_write(g: q.Gen) -> RowWrite:
    """A batch of rows for ``insert_many`` (in column order or by name), or an update or a
    delete by primary key."""
    table = g.schema.table(g.pick(["r", "r", "s"]))
    kind = g.pick(["insert", "insert", "update", "delete"])
    pk = g.num(1, 40) if g.chance(70) else g.num(1000, 10**6)
    if kind == "insert":
        rows: list[tuple | dict] = []
        by_name = g.chance(30)
        for _ in range(g.num(1, 3)):
            key = g.num(1000, 10**6) if g.chance(90) else g.num(1, 30)
            values = [key, *(g.value_of(c) for c in table.columns[1:])]
            if by_name:
                rows.append({c.name: v for c, v in zip(table.columns, values)
                             if c.name == "id" or not c.nullable or g.chance(60)})
            else:
                rows.append(tuple(values))
        return RowWrite("insert", table.name, tuple(rows))
    if kind == "update":
        cols = g.sample(table.columns[1:], 1, 3)
        return RowWrite("update", table.name, pk=pk, values={c.name: g.value_of(c) for c in cols})
    return RowWrite("delete", table.name, pk=pk)


#: How often each kind of input comes (of 12): views are looked up many times each, the
#: cheapest inputs to check.
_WEIGHTS = {"query": 2, "view": 3, "write": 3, "rows": 2, "tables": 1, "again": 4}


def action(g: q.Gen, lookups: int = 60) -> Action:
    """One input of the oracle fuzzer: a SELECT, a view looked up with up to ``lookups``
    parameter tuples, a write, a row write, or reading every table back."""
    kind = g.pick([k for k, n in _WEIGHTS.items() for _ in range(n)])
    if kind == "query":
        return Action(kind, q.query(g))
    if kind == "view":
        return Action(kind, q.parameterized_view(g, lookups))
    if kind == "write":
        return Action(kind, q.write(g))
    if kind == "rows":
        return Action(kind, row_write(g))
    if kind == "again":  # a view (or query) made earlier, asked again
        return Action(kind, g.num(0, 10**6))
    return Action(kind)


class OracleSession:
    """Episodes of the oracle fuzzer: a fresh rivulet database (in ``root``) and the same
    tables in the mirror, with random rows, for ``episode`` inputs (or until a mismatch of
    data leaves the two out of step). A fresh database rather than dropping what an
    episode made: dropping a view costs a parse of every other view's SQL."""

    def __init__(self, root: Path, mirror: Mirror, schema: q.Schema, tally: Tally,
                 make_front: FrontMaker, *, seed: int = 26, episode: int = 150) -> None:
        self.root = root
        self.mirror = mirror
        self.schema = schema
        self.tally = tally
        self.make_front = make_front
        self.rnd = random.Random(seed)
        self.episode = episode
        self.steps = 0
        self.episodes = 0
        self.db: rivulet.Database | None = None
        self.checker: Checker | None = None
        self._close_front: Callable[[], None] = lambda: None

    def close(self) -> None:
        self._close_front()
        self._close_front = lambda: None
        if self.db is not None:
            path = Path(self.db.path)
            try:
                self.db.close()
            except RivuletError:  # (a database whose dataflow failed says so again)
                pass
            self.db = None
            shutil.rmtree(path, ignore_errors=True)

    def reload(self) -> Checker:
        """A fresh database and mirror with random rows (rows rivulet refuses are left out
        of both, and counted as refusals)."""
        self.close()
        self.episodes += 1
        db = self.db = rivulet.open(self.root / f"episode{self.episodes}")
        contents: dict[str, tuple[str, list[tuple]]] = {}
        for table in self.schema.tables:
            db.execute(table.ddl)
            rows = self._rows(table)
            try:
                db.table(table.name).insert_many(rows)
            except RivuletError:
                kept = []
                for row in rows:
                    try:
                        db.table(table.name).insert_many([row])
                        kept.append(row)
                    except RivuletError:
                        self.tally.refused["load"] += 1
                rows = kept
            contents[table.name] = (table.ddl, rows)
        self.mirror.load(contents)
        db.settle()
        front, self._close_front = self.make_front(db)
        checker = self.checker = Checker(db, self.mirror, self.tally, front,
                                         self.schema.shapes.avoided)
        checker.journal = []
        self.steps = 0
        for name in contents:  # the rows as loaded, read back: the first round trip
            if checker.same_table(name, f"SELECT * FROM {name}", (), what="loading rows"):
                self.tally.checked[checker.name] += 1
        if checker.out_of_step:  # (reported): go on from rivulet's rows
            checker.resync()
        return checker

    def _rows(self, table: q.Table) -> list[tuple]:
        count = self.rnd.randint(15, 40)
        rows = []
        for pk in range(1, count + 1):
            row: list[Any] = [pk]
            for col in table.columns[1:]:
                null = col.nullable and self.rnd.random() < 0.12
                row.append(None if null else self.rnd.choice(col.pool))
            rows.append(tuple(row))
        return rows

    def step(self, action: Action) -> None:
        checker = self.checker
        if checker is None or checker.out_of_step or self.steps >= self.episode:
            checker = self.reload()
        self.steps += 1
        failures = self.tally.failed[checker.name]
        try:
            self._run(checker, action)
        except Exception as exc:  # the harness's own trouble (the oracle's connection...)
            self.tally.mismatch(checker.name, f"the check itself failed: "
                                f"{type(exc).__name__}: {exc}", repr(action), failure=True)
        if self.tally.failed[checker.name] != failures:
            checker.out_of_step = True  # a failure may leave rivulet failed: start afresh

    def _run(self, checker: Checker, action: Action) -> None:
        if action.kind == "query":
            checker.query(action.payload)
        elif action.kind == "view":
            checker.view(action.payload)
        elif action.kind == "write":
            w = action.payload
            checker.write(w.sql, w.params, w.table)
        elif action.kind == "rows":
            checker.row_write(action.payload)
        elif action.kind == "again":
            if action.payload % 3:
                checker.revisit(action.payload // 3)
            else:
                checker.ask_again(action.payload // 3)
        else:
            checker.tables()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def mariadb_oracle(root: Path | None = None) -> Iterator[MariaDBOracle]:
    """A private MariaDB set up as the oracle (stopped and removed at the end)."""
    base = Path(tempfile.mkdtemp(prefix="rivulet-oracle-", dir=root or _tmpfs()))
    try:
        server = start_oracle(base / "mariadb", free_port())
        try:
            yield MariaDBOracle(server)
        finally:
            server.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _tmpfs() -> str | None:
    return "/dev/shm" if Path("/dev/shm").is_dir() else None


def schema_of(db: rivulet.Database, avoided: frozenset[str]) -> q.Schema:
    """The fuzzed schema, with the optional column types ``db``'s schema accepts."""
    def accepts(ddl: str) -> bool:
        try:
            db.execute(ddl)
        except RivuletError:
            return False
        db.execute("DROP TABLE probe")
        return True

    return q.schema_for(accepts, q.Shapes(avoided))


def run_oracle_fuzz(oracle: MariaDBOracle, seconds: dict[str, float], *,
                    goals: Mapping[str, int] | None = None,
                    avoided: frozenset[str] = q.AVOIDED, tally: Tally | None = None,
                    lookups: int = 120, log: Callable[[str], None] = lambda _: None
                    ) -> dict[str, Any]:
    """Generated SQL (``bench/oracle_sql.py``) through each front (``embedded``,
    ``mysql``, ``http``) for ``seconds[front]``, or until ``goals[front]`` inputs of that
    front have been checked against MariaDB."""
    tally = tally or Tally()
    goals = goals or {}
    inputs: dict[str, int] = {}
    spent: dict[str, float] = {}
    episodes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="rivulet-oracle-fuzz-") as tmp:
        probe = rivulet.open(Path(tmp) / "probe")
        try:
            schema = schema_of(probe, avoided)
        finally:
            probe.close()
        from pymysql.constants import CLIENT

        mirror = Mirror(oracle.schema(client_flag=CLIENT.MULTI_STATEMENTS))
        for front_name, budget in seconds.items():
            if budget <= 0:
                continue
            session = OracleSession(Path(tmp) / front_name, mirror, schema, tally,
                                    FRONTS[front_name])
            strategy = st.tuples(q.generated(schema, lambda g: action(g, lookups)))
            goal = goals.get(front_name)
            try:
                out = drive(strategy, budget, session.step,
                            done=lambda f=front_name, n=goal: n is not None
                            and tally.checked[f] >= n)
            finally:
                session.close()
            inputs[front_name] = out["inputs"]
            spent[front_name] = out["seconds"]
            episodes[front_name] = session.episodes
            log(f"oracle fuzz over {front_name}: {out['inputs']} inputs, "
                f"{tally.checked[front_name]} checked, {tally.mismatched[front_name]} "
                f"mismatches, {tally.refused[front_name]} refused")
        mirror.conn.close()
    return {"inputs": inputs, "seconds": spent, "episodes": episodes,
            "columns": [c.sql_type for c in schema.table("r").columns],
            "avoided_shapes": sorted(avoided)}


def fuzz_worker(port: int, seconds: dict[str, float], goals: dict[str, int],
                avoided: Sequence[str], lookups: int = 120) -> tuple[Tally, dict[str, Any]]:
    """:func:`run_oracle_fuzz` in a worker process, against the oracle's MariaDB on
    ``port`` (started by the parent: only its port is needed to connect)."""
    import warnings

    from hypothesis.errors import HypothesisWarning

    from bench.mariadb import MariaDB

    warnings.filterwarnings("ignore", category=HypothesisWarning)
    tally = Tally()
    server = MariaDB(Path(tempfile.gettempdir()), port)  # (not started here: connect only)
    out = run_oracle_fuzz(MariaDBOracle(server), seconds, goals=goals,
                          avoided=frozenset(avoided), tally=tally, lookups=lookups)
    return tally, out


__all__ = ["Action", "Checker", "Mirror", "OracleRefused", "OracleSession", "RowWrite", "Tally",
           "action", "check_http_answer", "free_port", "fuzz_worker", "mariadb_oracle",
           "row_write", "run_oracle_fuzz", "schema_of"]
