"""Running a script's records on an engine, and what became of each.

Every record the engine is admitted to (its ``skipif`` / ``onlyif`` lines) gets one verdict:
passed; wrong (an answer other than the script's, or success where the script expects an
error); refused (the engine declined the SQL with an error of its own: allowed, counted);
error (any other exception: the engine failed); or blocked (not run, because an earlier
statement that builds the script's data was refused or failed, so answers after it would
be compared against data the engine does not have). Where the engine can make a refused
statement's change by other means of its own (rivulet: ``INSERT ... SELECT`` as a query
and an insert), the statement stays refused and the records after it run.
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from bench.sqllogictest.engines import Engine
from bench.sqllogictest.records import (
    Halt,
    HashThreshold,
    Query,
    Record,
    Statement,
    runs_on,
)
from bench.sqllogictest.results import describe, matches, rendered_values

#: Statements whose refusal changes no data, so the script goes on after them (a view left
#: in place by a refused DROP VIEW makes a later CREATE VIEW of its name refused, which
#: blocks the script then).
_HARMLESS = re.compile(
    r"\s*(create\s+(unique\s+)?index|drop\s+index|drop\s+view|reindex|analyze)\b",
    re.IGNORECASE)


class Verdict(enum.Enum):
    PASSED = "passed"
    WRONG = "wrong"
    REFUSED = "refused"
    ERROR = "error"
    BLOCKED = "blocked"


@dataclass(frozen=True)
class Outcome:
    script: str
    line: int
    kind: str  # "statement" or "query"
    verdict: Verdict
    sql: str
    #: The difference (wrong), the error's class and message (refused, error), or why not
    #: run (blocked); empty when passed.
    detail: str = ""
    #: The refused construct's class (see :func:`refusal_category`); empty otherwise.
    category: str = ""

    @property
    def where(self) -> str:
        return f"{self.script}:{self.line}"


@dataclass
class Tally:
    """Verdicts counted, by verdict and by refusal category."""

    verdicts: Counter[Verdict] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)

    def add(self, outcome: Outcome) -> None:
        self.verdicts[outcome.verdict] += 1
        if outcome.verdict is Verdict.REFUSED:
            self.refusals[outcome.category] += 1

    @property
    def records(self) -> int:
        return sum(self.verdicts.values())

    @property
    def pass_rate(self) -> float:
        return self.verdicts[Verdict.PASSED] / self.records if self.records else 0.0

    def as_json(self) -> dict[str, object]:
        return {"records": self.records,
                **{v.value: self.verdicts[v] for v in Verdict},
                "pass_rate": round(self.pass_rate, 4),
                "refusals": dict(self.refusals.most_common())}


_QUOTED = re.compile(r"'[^']*'|`[^`]*`|\"[^\"]*\"")
_NUMBER = re.compile(r"\b\d+(\.\d+)?\b")
_NAME_LIST = re.compile(r"(\(s\)) .*")
_POSITION = re.compile(r"\s*\(?\bat line \d+, column \d+\)?|\s*\(?line \d+, col(umn)? \d+\)?")


def refusal_category(error: Exception) -> str:
    """The class of a refusal: the error's class and the first line of its message, with
    positions, quoted names and numbers taken out, so refusals of one construct count
    together whatever the query."""
    message = str(error).splitlines()[0] if str(error) else ""
    message = _POSITION.sub("", message)
    message = _QUOTED.sub("…", message)
    message = _NAME_LIST.sub(r"\1 …", message)
    message = _NUMBER.sub("N", message)
    return f"{type(error).__name__}: {message.strip()}"[:160]


def run_script(engine: Engine, script: str, records: Iterable[Record],
               on_outcome: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run ``records`` (of ``script``) on ``engine`` in order; one outcome per record the
    engine is admitted to."""
    outcomes: list[Outcome] = []
    blocked_by = ""
    for record in records:
        if isinstance(record, HashThreshold):
            continue  # the expected values' own form says whether they are hashed
        if not runs_on(record, engine.name):
            continue
        if isinstance(record, Halt):
            break
        kind = "statement" if isinstance(record, Statement) else "query"
        if blocked_by:
            outcome = Outcome(script, record.line, kind, Verdict.BLOCKED, record.sql,
                              blocked_by)
        elif isinstance(record, Statement):
            outcome = _statement(engine, script, record)
            if (outcome.verdict in (Verdict.REFUSED, Verdict.ERROR)
                    and not _HARMLESS.match(record.sql)):
                if outcome.verdict is Verdict.REFUSED and _loaded_otherwise(engine, record):
                    outcome = replace(outcome, detail=outcome.detail + _LOADED)
                else:
                    blocked_by = f"after {outcome.where} was {outcome.verdict.value}"
        else:
            outcome = _query(engine, script, record)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return outcomes


_LOADED = " (its rows were loaded by other means, so the records after it ran)"


def _loaded_otherwise(engine: Engine, record: Statement) -> bool:
    try:
        return engine.load_otherwise(record.sql)
    except Exception:  # noqa: BLE001 - then the records after it are blocked
        return False


def _failure(engine: Engine, script: str, record: Statement | Query, kind: str,
             error: Exception) -> Outcome:
    detail = f"{type(error).__name__}: {error}"
    if engine.declines(error):
        return Outcome(script, record.line, kind, Verdict.REFUSED, record.sql, detail,
                       refusal_category(error))
    return Outcome(script, record.line, kind, Verdict.ERROR, record.sql, detail)


def _statement(engine: Engine, script: str, record: Statement) -> Outcome:
    try:
        engine.statement(record.sql)
    except Exception as error:  # noqa: BLE001 - every failure is classified
        if record.expect_error and engine.declines(error):
            return Outcome(script, record.line, "statement", Verdict.PASSED, record.sql)
        return _failure(engine, script, record, "statement", error)
    if record.expect_error:
        return Outcome(script, record.line, "statement", Verdict.WRONG, record.sql,
                       "succeeded; the script expects an error")
    return Outcome(script, record.line, "statement", Verdict.PASSED, record.sql)


def _query(engine: Engine, script: str, record: Query) -> Outcome:
    try:
        columns, rows = engine.query(record.sql)
    except Exception as error:  # noqa: BLE001 - every failure is classified
        return _failure(engine, script, record, "query", error)
    if columns != len(record.types):
        return Outcome(script, record.line, "query", Verdict.WRONG, record.sql,
                       f"{columns} columns; the script expects {len(record.types)}")
    values = rendered_values(rows, record.types, record.sort)
    if matches(values, record.expected):
        return Outcome(script, record.line, "query", Verdict.PASSED, record.sql)
    return Outcome(script, record.line, "query", Verdict.WRONG, record.sql,
                   describe(values, record.expected))
