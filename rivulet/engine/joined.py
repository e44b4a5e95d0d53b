"""Multi-table UPDATE and DELETE: the rows of the join found at the statement's snapshot,
then written table by table as single-table writes by key, in one commit.

A :class:`~rivulet.bind.statements.JoinedWrite` carries a SELECT of every column of every
table it joins. Run over the rows the statement sees (what is stored when it commits;
inside a transaction, what the transaction sees), each row of that join gives each target
the row it matched and, for an UPDATE, that row's new values. Each target's rows then
become one single-table write that finds them by key and changes exactly them
(rivulet/storage/writes.py), so the statement is stored, checked (duplicate keys, NOT
NULL) and propagated as single-table writes are, all in one savepoint and one LSN.

MySQL's semantics, as MariaDB shows them (tests/test_multi_table_writes.py):

- each row of a target is written once, however many rows of the join match it;
- every SET expression reads the rows as they were before the statement, those of the
  table it assigns to included (``SET a.x = b.y, b.y = a.x`` swaps the two), unlike a
  single-table UPDATE, whose assignments read the ones before them;
- the affected-rows count is the rows changed over all the targets (and an UPDATE's
  "rows matched", the rows matched over all of them).

Where a row of a target is matched by several rows of the join that give it different
values, MySQL keeps the first match, which depends on the order its plan reads the join
in; rivulet refuses that statement (1235) rather than guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from rivulet.bind import statements as st
from rivulet.dataflow.compile import bound_predicate, value_function
from rivulet.engine.core import Core
from rivulet.engine.upquery import computed_from, whole_answer
from rivulet.errors import ParameterCountError, ProgramError, UnsupportedSqlError
from rivulet.plan import ir
from rivulet.plan.catalog import Catalog
from rivulet.plan.planner import Planner
from rivulet.plan.strict import strict_operands
from rivulet.sql.parse import DIALECT
from rivulet.state.arrangement import Delta
from rivulet.storage.base import Storage
from rivulet.storage.writes import TransactionWrite, WriteRequest
from rivulet.values.conversions import strict_mode
from rivulet.values.schema import Row, TableSchema, coerce_value
from rivulet.values.types import column_type

#: A query plan's rows (the join's, computed over the rows the statement sees).
Rows = Callable[[ir.ViewPlan], list[Row]]


@dataclass(eq=False)
class JoinedWriteRequest(TransactionWrite):
    """A multi-table UPDATE or DELETE to commit: the statement and its ``?`` values. The
    commit finds its rows when it stores it (:func:`joined_parts`), as a single-table
    write's rows are found; a transaction finds them when the statement runs."""

    statement: st.JoinedWrite | None = None
    #: Its single-table writes, one per target that has rows to write.
    parts: list[WriteRequest] = field(default_factory=list)

    @property
    def written(self) -> tuple[TableSchema, ...]:
        assert self.statement is not None
        return tuple(t.table for t in self.statement.targets)

    def apply_changes(self, storage: Storage) -> list[tuple[TableSchema, list[Delta]]]:
        out = [(part.table, part.apply(storage)) for part in self.parts]
        self.count(self.parts)
        return out

    def count(self, parts: Sequence[WriteRequest]) -> None:
        """Its counts, from those of its single-table writes."""
        self.rowcount = sum(part.rowcount for part in parts)
        self.matched = sum(part.matched for part in parts)

    def found(self) -> int:
        assert self.statement is not None
        return self.matched if self.statement.kind == "update" else self.rowcount


def compile_joined(statement: st.JoinedWrite) -> Callable[[Sequence[Any]], WriteRequest]:
    """A function from the statement's ``?`` values to the request to commit."""

    def make(params: Sequence[Any]) -> WriteRequest:
        if len(params) != statement.param_count:
            raise ParameterCountError(f"statement takes {statement.param_count} "
                                      f"parameter(s), got {len(params)}")
        return JoinedWriteRequest(statement.table, "transaction", params=tuple(params),
                                  sql=statement.sql, statement=statement)

    return make


def committed_parts(core: Core, request: JoinedWriteRequest) -> list[WriteRequest]:
    """The request's single-table writes, its rows found in what is stored now (by the
    commit, inside its storage transaction)."""
    assert request.statement is not None
    schemas = [core.catalog.require_table(s.name) for s in request.statement.sources]
    stored = core.storage.read_tables(schemas)

    def rows_of(table: str) -> list[tuple[Row, int]]:
        counts: dict[Row, int] = {}
        for _, row in stored.get(table.lower(), []):
            counts[row] = counts.get(row, 0) + 1
        return list(counts.items())

    parts = joined_parts(request, core.catalog,
                         lambda plan: whole_answer(computed_from(core, plan, rows_of)))
    if core.lazy.copies:  # copied as they were, before the write
        for part in parts:
            core.lazy.before_write(part)
    return parts


def joined_parts(request: JoinedWriteRequest, catalog: Catalog, rows: Rows
                 ) -> list[WriteRequest]:
    """The single-table writes of a multi-table UPDATE or DELETE: its join's rows are
    ``rows`` of its query; each target's rows matched, with their new values."""
    statement = _current(request, catalog)
    params = request.params
    query = statement.query.copy()
    marks = [n for n in query.dfs() if isinstance(n, exp.Placeholder)]
    bound = {id(m): params[i] for m, i in zip(marks, statement.query_params)}
    plan = Planner(catalog, bound=bound).plan_view("", query, query.sql(dialect=DIALECT))
    found = rows(plan)
    if statement.strict_where is not None:
        columns = [c for s in statement.sources for c in s.columns]
        where = bound_predicate(statement.strict_where, [c.kind for c in columns],
                                [c.nullable for c in columns])
        with strict_mode():  # (a truncating conversion in the WHERE fails the UPDATE)
            found = [row for row in found if where(row, params)]
    parts = []
    for target in statement.targets:
        chosen = _chosen(statement, target, found, params)
        if not chosen:
            continue
        schema = target.table
        keys = [schema.pk_of(row) for row in chosen] if schema.primary_key else None
        if statement.kind == "delete":
            parts.append(WriteRequest(schema, "delete", predicate=_among(chosen), keys=keys))
        else:
            parts.append(WriteRequest(schema, "update", predicate=_among(chosen),
                                      assign=_new_of(chosen), keys=keys))
    return parts


def _current(request: JoinedWriteRequest, catalog: Catalog) -> st.JoinedWrite:
    """The statement bound to its tables as they are now: bound again from its text if one
    was altered since (as MySQL would run it now)."""
    statement = request.statement
    assert statement is not None
    if all(catalog.tables.get(s.name.lower()) is s for s in statement.sources):
        return statement
    fresh = st.bind_text(statement.sql, catalog)
    if not isinstance(fresh, st.JoinedWrite) or fresh.param_count != len(request.params):
        raise ProgramError(f"not the same write any more: {statement.sql[:60]!r}")
    return fresh


def _chosen(statement: st.JoinedWrite, target: st.JoinedTarget, found: list[Row],
            params: tuple) -> dict[Row, Row | None]:
    """The rows of ``target`` the join matched, each with its new row (an UPDATE's) or
    None (a DELETE's)."""
    width = len(target.table.columns)
    start = target.offset
    assign = _assigner(statement, target) if statement.kind == "update" else None
    chosen: dict[Row, Row | None] = {}
    with strict_mode():  # (a truncating conversion in SET fails the UPDATE, as in MySQL)
        for joined in found:
            if joined[target.present] is None:  # (an outer join's missing side)
                continue
            old = tuple(joined[start:start + width])
            new = None if assign is None else assign(joined, params)
            if old in chosen and chosen[old] != new:
                raise UnsupportedSqlError(
                    f"UPDATE with several tables that matches a row of {target.table.name!r} "
                    "more than once with different new values (MySQL keeps the first match, "
                    "which depends on the order it reads the join in)")
            chosen[old] = new
    return chosen


def _assigner(statement: st.JoinedWrite, target: st.JoinedTarget
              ) -> Callable[[Row, tuple], Row]:
    """A target's assignments compiled: its new row from a row of the join. Every one reads
    the join's row as it was (MySQL's multi-table UPDATE), not the ones before it."""
    columns = [c for s in statement.sources for c in s.columns]
    kinds = [c.kind for c in columns]
    nullable = [c.nullable for c in columns]
    types = [column_type(c) for c in columns]
    table = target.table
    fns = [(i, value_function(strict_operands(e, types), kinds, nullable, with_params=True),
            table.columns[i], f"UPDATE: {table.name}.{table.columns[i].name}")
           for i, e in target.assignments]
    start, width = target.offset, len(table.columns)

    def assign(joined: Row, params: tuple) -> Row:
        out = list(joined[start:start + width])
        for i, fn, column, where in fns:
            out[i] = coerce_value(column, fn(joined, params), where=where)
        return tuple(out)

    return assign


def _among(chosen: dict[Row, Row | None]) -> Callable[[Row, tuple], bool]:
    return lambda row, params: row in chosen


def _new_of(chosen: dict[Row, Row | None]) -> Callable[[Row, tuple], list[Any]]:
    return lambda row, params: list(chosen[row])  # type: ignore[arg-type]
