"""The records of a sqllogictest script, read from its text.

The format is SQLite's (``about.wiki`` of the sqllogictest sources): records are separated
by blank lines; lines starting with ``#`` are comments; a record may be prefixed by
``skipif <engine>`` / ``onlyif <engine>`` lines; a record is ``statement ok`` or
``statement error`` followed by the SQL, ``query <types> [<sort>] [<label>]`` followed by
the SQL, a ``----`` line and the expected values (one per line, or ``N values hashing to
<md5>``), ``hash-threshold <n>``, or ``halt``.

No maintained Python package reads this format (the maintained parsers are Rust crates and
engines' own runners), so this module is the few dozen lines it takes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

#: How a query's values are ordered before they are compared (``nosort``: as returned).
SortMode = Literal["nosort", "rowsort", "valuesort"]

_HASHED = re.compile(r"^(\d+) values hashing to ([0-9a-f]{32})$")


class ScriptSyntaxError(ValueError):
    """A line that is not of the sqllogictest format (the script, not an engine, is wrong)."""


@dataclass(frozen=True)
class Condition:
    """``skipif <engine>`` (run everywhere but there) or ``onlyif <engine>`` (only there)."""

    only: bool
    engine: str

    def admits(self, engine: str) -> bool:
        return (self.engine.lower() == engine.lower()) == self.only


@dataclass(frozen=True)
class Hashed:
    """Expected values given as their count and the MD5 of each value followed by a newline."""

    count: int
    md5: str


@dataclass(frozen=True)
class Statement:
    line: int
    conditions: tuple[Condition, ...]
    sql: str
    expect_error: bool


@dataclass(frozen=True)
class Query:
    line: int
    conditions: tuple[Condition, ...]
    sql: str
    types: str
    sort: SortMode
    label: str | None
    expected: tuple[str, ...] | Hashed


@dataclass(frozen=True)
class HashThreshold:
    """From here on, results of more than ``limit`` values are written as a hash (0: never)."""

    line: int
    limit: int


@dataclass(frozen=True)
class Halt:
    """The rest of the script is not run."""

    line: int
    conditions: tuple[Condition, ...]


Record = Statement | Query | HashThreshold | Halt


def runs_on(record: Statement | Query | Halt, engine: str) -> bool:
    """Whether ``record`` is for ``engine`` (every condition admits it)."""
    return all(c.admits(engine) for c in record.conditions)


def _words(line: str) -> list[str]:
    """A control line's words, without its trailing ``# comment``."""
    return line.split("#", 1)[0].split()


def _blocks(text: str) -> Iterator[list[tuple[int, str]]]:
    """Blank-line-separated blocks of (1-based line number, line), comment lines removed."""
    block: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        if line.startswith("#"):
            continue
        if line.strip():
            block.append((number, line))
        elif block:
            yield block
            block = []
    if block:
        yield block


def parse(text: str, name: str = "<script>") -> list[Record]:
    """The records of a script's ``text`` (``name`` is used in syntax errors)."""
    records: list[Record] = []
    for block in _blocks(text):
        conditions: list[Condition] = []
        while block and _words(block[0][1])[:1] in (["skipif"], ["onlyif"]):
            words = _words(block[0][1])
            if len(words) < 2:
                raise ScriptSyntaxError(f"{name}:{block[0][0]}: {words[0]} names no engine")
            conditions.append(Condition(words[0] == "onlyif", words[1]))
            block = block[1:]
        if not block:
            continue
        line, head = block[0]
        words = _words(head)
        body = [text_line for _, text_line in block[1:]]
        records.append(_record(name, line, words, tuple(conditions), body))
    return records


def _record(name: str, line: int, words: list[str], conditions: tuple[Condition, ...],
            body: list[str]) -> Record:
    where = f"{name}:{line}"
    kind = words[0] if words else ""
    if kind == "statement" and len(words) >= 2 and words[1] in ("ok", "error"):
        return Statement(line, conditions, "\n".join(body), words[1] == "error")
    if kind == "query" and len(words) >= 2:
        types = words[1]
        if not types or set(types) - set("ITR"):
            raise ScriptSyntaxError(f"{where}: type string {types!r} is not of I, T and R")
        sort = words[2] if len(words) >= 3 else "nosort"
        if sort not in ("nosort", "rowsort", "valuesort"):
            raise ScriptSyntaxError(f"{where}: unknown sort mode {sort!r}")
        label = words[3] if len(words) >= 4 else None
        sql, expected = _split_results(body)
        return Query(line, conditions, sql, types, sort, label, expected)  # type: ignore[arg-type]
    if kind == "hash-threshold" and len(words) == 2 and words[1].isdigit():
        return HashThreshold(line, int(words[1]))
    if kind == "halt":
        return Halt(line, conditions)
    raise ScriptSyntaxError(f"{where}: not a sqllogictest record: {' '.join(words)!r}")


def _split_results(body: list[str]) -> tuple[str, tuple[str, ...] | Hashed]:
    """A query's SQL (up to ``----``) and its expected values (none if no ``----``)."""
    if "----" not in body:
        return "\n".join(body), ()
    cut = body.index("----")
    values = body[cut + 1:]
    if len(values) == 1 and (match := _HASHED.match(values[0])):
        return "\n".join(body[:cut]), Hashed(int(match[1]), match[2])
    return "\n".join(body[:cut]), tuple(values)
