"""Checking the Lobsters benchmark's answers: a sample of each phase's pages against what
MariaDB answers over the same data and the same writes.

The load generator (:mod:`bench.lobsters.run`) measures how fast a system serves pages;
a fast wrong answer must fail the run, not win it. Checking must not slow the pages it
measures, so it is split in two:

* during a phase, each client records (:class:`Recorder`, a backend around the client's
  own) every write statement of every page with the rows it changed, and, for every
  ``check_every``-th page of its schedule (*sampled*) and every page of
  :data:`~bench.lobsters.workload.WRITE_PAGES`, each read's name, values and rows, with
  the time its answer arrived (``time.monotonic``: one clock for every process of the
  machine). Pages that write are found by what they run, not by their type: a story page
  writes its read ribbon though it is no "write page" (the blind spot
  ``bench.lobsters_memory`` had).
* after the phase, outside its measured time, :class:`Oracle` checks the records against
  a MariaDB database of its own (one per configuration, the *baseline* program, loaded
  with the same data set), which is fed the configuration's writes as it goes.

The two systems do not receive the same writes in the same order: each configuration's
phases have seeds and id blocks of their own, and within a phase the client processes
and their connections write concurrently, so the order is the one in which statements
reach the server. The oracle therefore gets each configuration's own writes, page by
page, in the order the pages completed. A page of ``WRITE_PAGES`` is replayed by its page
function on the oracle (the baseline program's writes, whichever version the system
runs), its reads answered as the system under test answered them so that it takes the
same decisions (a story not yet visible is not voted on; a baseline-only read such as
``tag_mods`` goes to the oracle), and a statement that changed no row on the system under
test is not run; any other page's writes (a read ribbon) are applied statement by
statement, those that changed rows, and must be statements both programs write the same
way (else the check stops with the reason: the oracle could not follow).

The rule, for a read statement of a sampled page: its answer must equal (as
:func:`bench.answers.answer_mismatch` compares: ORDER BY ties and LIMIT cuts, numbers by
value) the oracle's answer to the baseline program's statement of the same name and
values in *some* state the read could have seen: the state at the start of the phase
(every earlier phase's writes applied) or the state after any prefix, in completion order,
of the phase's writing pages that includes every page that started before the read's
answer arrived. The start state allows for eventual consistency (a read may not see
another connection's acknowledged write yet); a write that began after the answer
arrived cannot be in it. A statement is evaluated again in a later state only if that
state's page could change it: a page that wrote only read ribbons changes only the
ribbon owner's ``unread_replies`` (:data:`RIBBON_READS`); any other write may change
anything. Not checked: writes that overlap in time and commute on the server but not in
the order the oracle applies them could, in principle, show a read a state the oracle
never passes through (two votes on one story, each seen alone); the workload's pages
rarely overlap that way, and a report shows both answers.
"""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.answers import answer_mismatch, norm_row, query_shape, same_row
from bench.lobsters.backends import Backend, Row
from bench.lobsters.pages import Page, run_page
from bench.lobsters.queries import QuerySet, expand_in, has_in_list
from bench.lobsters.workload import WRITE_PAGES, Request

#: Reads that depend on ``read_ribbons``, with the position of the user parameter whose
#: ribbons alone they read (``replying_comments`` is keyed by the ribbon's user). Every
#: other read of either program reads no ribbon (``tests/test_lobsters_run.py`` checks).
RIBBON_READS = {"unread_replies": 0}
RIBBONS = "read_ribbons"
#: Mismatches kept in a phase's report (all are counted).
KEPT_MISMATCHES = 20

_TARGET = re.compile(r"^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+(\w+)",
                     re.IGNORECASE)


def written_table(sql: str) -> str:
    """The table a write statement changes."""
    found = _TARGET.match(sql)
    if found is None:
        raise ValueError(f"not a write statement: {sql!r}")
    return found.group(1).lower()


def ribbon_user(sql: str, params: Sequence[Any]) -> Any:
    """The user whose read ribbon a write of ``read_ribbons`` changes: the value of the
    ``user_id`` column (an INSERT's column list) or of ``user_id = ?`` (an UPDATE)."""
    insert = re.search(r"\(([^)]*)\)\s*VALUES", sql, re.IGNORECASE)
    if insert is not None:
        columns = [c.strip().lower() for c in insert.group(1).split(",")]
        return params[columns.index("user_id")]
    at = re.search(r"\buser_id\s*=\s*\?", sql, re.IGNORECASE)
    if at is None:
        raise ValueError(f"no user_id in the ribbon write {sql!r}")
    return params[sql[:at.start()].count("?")]


# --------------------------------------------------------------------------- records


@dataclass
class Statement:
    """A read a recorded page ran: its name, values, rows, and when the answer arrived."""

    name: str
    params: tuple[Any, ...]
    rows: list[Row]
    at: float


@dataclass
class PageRecord:
    """One page as the system under test ran it (see the module docstring)."""

    client: int
    index: int  # in its client's schedule
    request: Request
    sampled: bool
    start: float
    end: float = 0.0
    ok: bool = True
    reads: list[Statement] = field(default_factory=list)
    #: (name, values, rows changed) of every write the page ran, in order
    writes: list[tuple[str, tuple[Any, ...], int]] = field(default_factory=list)


class Recorder(Backend):
    """``inner`` with its pages recorded into ``sink`` (a list shared by a client's
    workers): :meth:`run` runs a page (``every`` 0: runs it, records nothing)."""

    def __init__(self, inner: Backend, sink: list[PageRecord], *, every: int,
                 client: int = 0) -> None:
        self.inner = inner
        self.queries = inner.queries
        self.name = inner.name
        self.sink = sink
        self.every = every
        self.client = client
        self._page: PageRecord | None = None
        self._reads = False

    def run(self, index: int, request: Request) -> Page:
        if self.every <= 0:  # no check: nothing recorded
            return run_page(self.inner, request)
        sampled = self.every > 0 and index % self.every == 0
        page = self._page = PageRecord(self.client, index, request, sampled, time.monotonic())
        self._reads = sampled or request.page in WRITE_PAGES
        try:
            return run_page(self, request)
        except BaseException:
            page.ok = False
            raise
        finally:
            page.end = time.monotonic()
            self._page = None
            if sampled or page.writes or (not page.ok and request.page in WRITE_PAGES):
                self.sink.append(page)

    def read(self, name: str, params: Sequence[Any] = ()) -> list[Row]:
        rows = self.inner.read(name, params)
        if self._reads and self._page is not None:
            self._page.reads.append(Statement(name, tuple(params), rows, time.monotonic()))
        return rows

    def write(self, name: str, params: Sequence[Any]) -> int:
        changed = self.inner.write(name, params)
        if self._page is not None:
            self._page.writes.append((name, tuple(params), changed))
        return changed

    def settle(self) -> None:
        self.inner.settle()

    def close(self) -> None:
        self.inner.close()


# --------------------------------------------------------------------------- the oracle


class _Replay(Backend):
    """The oracle's backend for replaying one recorded page by its page function: reads
    the system under test ran answer as it answered them, the others (the baseline's
    own) go to the oracle; a write the system ran that changed nothing is not run, and
    returns the system's count."""

    def __init__(self, oracle: Backend, page: PageRecord) -> None:
        self.oracle = oracle
        self.queries = oracle.queries
        self.name = oracle.name
        self.answers = {(s.name, s.params): s.rows for s in page.reads}
        self.counts = {(n, p): c for n, p, c in page.writes}
        self.tables: set[str] = set()
        self.ribbon_users: set[Any] = set()

    def read(self, name: str, params: Sequence[Any] = ()) -> list[Row]:
        found = self.answers.get((name, tuple(params)))
        return list(found) if found is not None else self.oracle.read(name, params)

    def write(self, name: str, params: Sequence[Any]) -> int:
        recorded = self.counts.get((name, tuple(params)))
        if recorded == 0:
            return 0
        changed = self.oracle.write(name, params)
        _note_write(self, self.queries.writes[name], params)
        return changed if recorded is None else recorded


def _note_write(into: Any, sql: str, params: Sequence[Any]) -> None:
    table = written_table(sql)
    into.tables.add(table)
    if table == RIBBONS:
        into.ribbon_users.add(ribbon_user(sql, params))


@dataclass
class _Applied:
    """What one page's writes changed on the oracle."""

    tables: set[str] = field(default_factory=set)
    ribbon_users: set[Any] = field(default_factory=set)

    def may_change(self, statement: Statement) -> bool:
        if self.tables - {RIBBONS}:
            return True
        if RIBBONS not in self.tables or statement.name not in RIBBON_READS:
            return False
        return statement.params[RIBBON_READS[statement.name]] in self.ribbon_users


@dataclass
class _Open:
    """A sampled statement not yet matched by any state it could have seen."""

    page: PageRecord
    statement: Statement
    horizon: int  # the states it could have seen: after 0..horizon writing pages
    answers: list[list[Row]]
    problem: str


class Oracle:
    """One configuration's MariaDB database (``backend``: the baseline program over it,
    a duplicate read ribbon taken as the application's upsert), loaded with the run's
    data set, and the program of the system it checks (``system``)."""

    def __init__(self, backend: Backend, system: QuerySet) -> None:
        self.backend = backend
        self.system = system
        self.diverged: str | None = None  # why the oracle could not follow, once it could not
        self._shapes: dict[str, Any] = {}

    # ..................................................................... reads

    def _sql(self, name: str, params: Sequence[Any]) -> str:
        sql = self.backend.queries.reads[name]
        if has_in_list(sql):
            sql = expand_in(sql, len(params) - (sql.count("?") - 1))
        return sql

    def answer(self, name: str, params: Sequence[Any]) -> tuple[list[Row], Any]:
        """The oracle's full answer to read ``name`` (no LIMIT, sort keys appended, as
        :func:`~bench.answers.answer_mismatch` takes it) and the statement's shape."""
        sql = self._sql(name, params)
        shape = self._shapes.get(sql)
        if shape is None:
            shape = self._shapes[sql] = query_shape(sql, "mysql")
        cur = getattr(self.backend, "conn").cursor()
        text = shape.keyed_sql.replace("?", "%s")
        if shape.order and shape.limit:
            # the window and one row more: enough unless that row ties with the window's
            # last (then the block at the cut is needed whole, and so is the answer); a
            # front page's whole answer is every story
            cut = shape.offset + shape.limit
            cur.execute(f"{text} LIMIT {cut + 1}", tuple(params))
            rows = [tuple(r) for r in cur.fetchall()]
            if len(rows) <= cut or not same_row(_key(rows[cut], shape), _key(rows[cut - 1],
                                                                                  shape)):
                return rows, shape
        cur.execute(text, tuple(params))
        return [tuple(r) for r in cur.fetchall()], shape

    def _compare(self, statement: Statement) -> tuple[str | None, list[Row]]:
        full, shape = self.answer(statement.name, statement.params)
        return answer_mismatch(statement.rows, full, shape), _window(full, shape)

    # ..................................................................... writes

    def apply(self, page: PageRecord) -> _Applied:
        """Feed the oracle ``page``'s writes (see the module docstring)."""
        applied = _Applied()
        request = page.request
        if request.page in WRITE_PAGES:
            if not page.ok:
                if page.writes:
                    self.diverged = (f"page {request.page} {request.args} failed after "
                                     f"writing {[w[0] for w in page.writes]}")
                return applied
            replay = _Replay(self.backend, page)
            run_page(replay, request)
            applied.tables, applied.ribbon_users = replay.tables, replay.ribbon_users
            return applied
        for name, params, changed in page.writes:
            sql = self.system.writes[name]
            if self.backend.queries.writes.get(name) != sql:
                self.diverged = (f"page {request.page} wrote {name}, which the "
                                 f"{self.system.version} and {self.backend.version} programs "
                                 "write differently: the oracle cannot follow")
                return applied
            if changed:
                self.backend.write(name, params)
                _note_write(applied, sql, params)
        return applied

    # ..................................................................... a phase

    def check(self, pages: list[PageRecord]) -> dict[str, Any]:
        """Check a phase's sampled pages and feed the oracle the phase's writes; the
        report (counts, and each mismatch with its page, statement and both answers)."""
        t0 = time.perf_counter()
        sampled = [p for p in pages if p.sampled]
        report: dict[str, Any] = {
            "sampled_pages": len(sampled), "statements": 0, "matched_at_start": 0,
            "matched_later": 0, "mismatch_count": 0, "mismatches": [], "writing_pages": 0,
            "unchecked": 0, "oracle_diverged": self.diverged, "seconds": 0.0}
        if self.diverged is not None:
            report["unchecked"] = sum(len(p.reads) for p in sampled)
            return report
        writers = sorted((p for p in pages if p.writes or p.request.page in WRITE_PAGES),
                         key=lambda p: p.end)
        # the last writing page (in completion order) each read could have seen: the
        # last one that started before its answer arrived (suffix minima of the starts)
        mins = [p.start for p in writers]
        for i in range(len(mins) - 2, -1, -1):
            mins[i] = min(mins[i], mins[i + 1])
        open_: list[_Open] = []
        for page in sampled:
            for statement in page.reads:
                report["statements"] += 1
                problem, rows = self._compare(statement)
                if problem is None:
                    report["matched_at_start"] += 1
                    continue
                horizon = bisect.bisect_left(mins, statement.at)
                open_.append(_Open(page, statement, horizon, [rows], problem))
        for k, page in enumerate(writers, start=1):
            self._close(report, [o for o in open_ if o.horizon < k])
            open_ = [o for o in open_ if o.horizon >= k]
            try:
                applied = self.apply(page)
            except Exception as exc:  # noqa: BLE001 - reported: the check stops
                applied = _Applied()
                self.diverged = f"applying page {page.request.page} {page.request.args}: {exc!r}"
            report["writing_pages"] += 1
            if self.diverged is not None:
                report["oracle_diverged"] = self.diverged
                report["unchecked"] += len(open_)
                open_ = []
                break
            still: list[_Open] = []
            for o in open_:
                if applied.may_change(o.statement):
                    problem, rows = self._compare(o.statement)
                    if problem is None:
                        report["matched_later"] += 1
                        continue
                    if rows not in o.answers:
                        o.answers.append(rows)
                    o.problem = problem
                still.append(o)
            open_ = still
        self._close(report, open_)
        report["seconds"] = time.perf_counter() - t0
        return report

    def _close(self, report: dict[str, Any], mismatched: list[_Open]) -> None:
        for o in mismatched:
            report["mismatch_count"] += 1
            if len(report["mismatches"]) < KEPT_MISMATCHES:
                report["mismatches"].append(self._mismatch(o))

    def _mismatch(self, o: _Open) -> dict[str, Any]:
        r, s = o.page.request, o.statement
        return {
            "page": {"page": r.page, "user": r.user, "args": _plain(r.args)},
            "client": o.page.client, "index": o.page.index,
            "statement": s.name, "params": _plain(list(s.params)),
            "sql": self.system.reads[s.name], "mariadb_sql": self.backend.queries.reads[s.name],
            "problem": o.problem,
            "answer": [_plain(list(row)) for row in s.rows],
            # the oracle's answers in the states the read could have seen (distinct ones)
            "mariadb_answers": [[_plain(list(row)) for row in rows] for rows in o.answers],
        }


def _key(row: Row, shape: Any) -> tuple[Any, ...]:
    return tuple(row[i] for i, _ in shape.order)


def _window(full: list[Row], shape: Any) -> list[Row]:
    """The rows a client would get from the oracle (LIMIT window, appended keys cut)."""
    rows = [norm_row(shape.shown(r)) for r in full]
    if shape.limited:
        stop = None if shape.limit is None else shape.offset + shape.limit
        rows = rows[shape.offset:stop]
    return rows


def _plain(value: Any) -> Any:
    """``value`` as JSON can hold it (a DECIMAL as its text)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def merge_reports(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Several phases' check reports added up (mismatches kept up to the limit)."""
    total: dict[str, Any] = {"phases": sum(r.get("phases", 1) for r in reports),
                             "mismatches": []}
    for key in ("sampled_pages", "statements", "matched_at_start", "matched_later",
                "mismatch_count", "writing_pages", "unchecked", "seconds"):
        total[key] = sum(r.get(key, 0) for r in reports)
    for r in reports:
        total["mismatches"] += r.get("mismatches", [])
    total["mismatches"] = total["mismatches"][:KEPT_MISMATCHES]
    total["oracle_diverged"] = next((r["oracle_diverged"] for r in reports
                                     if r.get("oracle_diverged")), None)
    return total
