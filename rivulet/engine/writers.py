"""Write statements compiled once: from a bound INSERT, UPDATE or DELETE to a function of
its ``?`` values that makes the :class:`~rivulet.storage.writes.WriteRequest` to commit.

Compiling (binding the WHERE, the assignments, the VALUES) takes far longer than the
write itself, so every text is compiled once (:class:`WriteTexts`) and the MySQL server
keeps one writer per statement shape.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from rivulet.bind import statements as st
from rivulet.dataflow.compile import bound_predicate, value_function
from rivulet.engine.joined import compile_joined
from rivulet.engine.limits import Limits
from rivulet.engine.planned import PlannedWhere
from rivulet.errors import (
    CheckViolatedError,
    ParameterCountError,
    SqlError,
    UnsupportedSqlError,
)
from rivulet.plan import ir
from rivulet.plan.catalog import Catalog
from rivulet.plan.strict import strict_operands
from rivulet.storage.upsert import OnDuplicate, Updater
from rivulet.storage.writes import WriteRequest
from rivulet.values.clock import now_at, statement_time
from rivulet.values.comparison import eq
from rivulet.values.conversions import strict_mode
from rivulet.values.matching import Unkeyed, equal_key
from rivulet.values.ordering import desc_key, sort_key
from rivulet.values.schema import (
    Row,
    SchemaError,
    TableSchema,
    coerce_row,
    coerce_value,
    key_value,
)
from rivulet.values.types import column_type

#: Write statement texts whose compiled writers are kept (the first ones seen: an
#: application's statements, not the literal-laden texts of one-off writes).
WRITE_TEXTS_LIMIT = 10_000

WriteStatement = st.Insert | st.Update | st.Delete | st.JoinedWrite
#: A compiled write: its ``?`` values (and, for one that reads the clock, the instant to
#: give it, ``at=``: a request bound again after an ALTER TABLE keeps its own; else now)
#: to the request to commit.
Writer = Callable[..., WriteRequest]


def compile_writer(statement: WriteStatement, limits: Limits) -> Writer:
    """A bound write statement compiled once: a function from its ``?`` values to the
    request to commit (rows checked against the schema, predicate bound)."""
    if isinstance(statement, st.JoinedWrite):
        return compile_joined(statement)
    expected = statement.param_count
    table = statement.table
    kinds = [c.kind for c in table.columns]
    nullable = [c.nullable for c in table.columns]

    clock = statement.reads_clock

    def check(params: Sequence[Any], at: dt.datetime | None) -> tuple:
        """The statement's values: its ``?`` values, then its instant if it reads the clock
        (:class:`~rivulet.plan.ir.StatementTime`: read once, so that every time function
        and default of the statement sees the same one)."""
        if len(params) != expected:
            raise ParameterCountError(f"statement takes {expected} parameter(s), "
                                      f"got {len(params)}")
        if clock:
            return (*params, statement_time() if at is None else at)
        return tuple(params)

    if isinstance(statement, st.Insert):
        limits.check_batch(len(statement.rows))
        values = {id(e): value_function(strict_operands(e, []), [], [], with_params=True)
                  for row in statement.rows for e in row}
        inserting = statement
        mode = statement.on_duplicate
        update = upsert_assigner(table, statement.updates) if statement.updates else None
        auto = table.auto_column

        def insert(params: Sequence[Any], at: dt.datetime | None = None) -> WriteRequest:
            bound = check(params, at)
            try:
                with strict_mode():  # MySQL's: a truncating conversion in VALUES fails it
                    rows = st.insert_values(inserting, bound,
                                            lambda e, p: values[id(e)]((), p))
                checked = check_rows(table, rows)
            except SchemaError as exc:
                if mode is OnDuplicate.IGNORE and isinstance(exc, CheckViolatedError):
                    raise UnsupportedSqlError(  # (MariaDB fails it: 4025)
                        f"INSERT IGNORE of a row a CHECK constraint refuses (MySQL 8 skips "
                        f"it with a warning, MariaDB fails): {exc}") from None
                if mode is OnDuplicate.IGNORE:  # (MySQL stores a value it adjusts, and warns)
                    raise UnsupportedSqlError(
                        f"INSERT IGNORE of a value MySQL would adjust with a warning: {exc}"
                    ) from None
                raise
            generated = frozenset() if auto is None or mode is OnDuplicate.ERROR else (
                frozenset(i for i, row in enumerate(checked) if not row[auto]))
            return WriteRequest(table, "insert", rows=checked, params=bound, sql=inserting.sql,
                                on_duplicate=mode, update=update, generated=generated,
                                at=bound[-1] if clock else None)

        return insert
    planned = None  # an UPDATE's WHERE as MySQL's strict mode evaluates it
    if isinstance(statement, st.Update) and statement.where is not None:
        planned = PlannedWhere(statement)
    predicate = None
    if statement.where is not None and planned is None:
        predicate = bound_predicate(statement.where, kinds, nullable)
    key_values = None if statement.key_lookup is None else [
        [value_function(e, [], [], with_params=True) for e in key]
        for key in statement.key_lookup
    ]
    assign = assigner(table, statement.assignments) if isinstance(statement, st.Update) else None
    limit = None if statement.limit is None else limiter(table, statement.limit)
    sql = statement.sql

    def change(params: Sequence[Any], at: dt.datetime | None = None) -> WriteRequest:
        bound = check(params, at)
        instant = bound[-1] if clock else None
        keys = None
        if key_values is not None:
            given = [tuple(f((), bound) for f in key) for key in key_values]
            if planned is None or planned.keys_bound(given):  # (else MySQL reads every row)
                keys = stored_keys(table, given)
        if assign is None:
            return WriteRequest(table, "delete", predicate=predicate, keys=keys, params=bound,
                                sql=sql, limit=limit, at=instant)
        where = predicate if planned is None else planned.predicate(bound,
                                                                    looked_up=keys is not None)
        return WriteRequest(table, "update", predicate=where, assign=assign, keys=keys,
                            params=bound, sql=sql, limit=limit, at=instant)

    return change


class WriteTexts:
    """Writers by statement text: a text seen before is neither parsed nor bound again,
    as long as its table is the version it was compiled for."""

    def __init__(self, catalog: Catalog, limits: Limits) -> None:
        self.catalog = catalog
        self.limits = limits
        self._writers: dict[str, tuple[TableSchema, Writer]] = {}

    def known(self, sql: str) -> Writer | None:
        """The writer of a text compiled before for its table as it is now."""
        known = self._writers.get(sql)
        if known is not None and self.catalog.tables.get(known[0].name.lower()) is known[0]:
            return known[1]
        return None

    def writer(self, sql: str) -> Writer:
        """The writer of an INSERT, UPDATE or DELETE text, compiled on first use."""
        known = self.known(sql)
        if known is not None:
            return known
        self.limits.check_statement(sql)
        statement = st.bind_text(sql, self.catalog)
        if not isinstance(statement, st.WRITES):
            raise SqlError(f"not an INSERT, UPDATE or DELETE: {sql[:60]!r}")
        return self.remember(sql, statement)

    def remember(self, sql: str, statement: WriteStatement) -> Writer:
        """Compile a bound write and keep it for its text."""
        make = compile_writer(statement, self.limits)
        if len(self._writers) < WRITE_TEXTS_LIMIT:
            self._writers[sql] = (statement.table, make)
        return make


def check_rows(table: TableSchema, rows: Iterable[Any]) -> list[Row]:
    """Every row checked against the schema; an error names the row (1-based) at fault.
    An AUTO_INCREMENT column given NULL or no value holds 0 until the commit numbers it."""
    checked = []
    if table.auto_column is not None:
        rows = _unnumbered(table, table.auto_column, rows)
    if table.clock_defaults:
        rows = _clock_defaulted(table, rows, statement_time())
    try:
        for row in rows:  # a list (an INSERT's values) as a tuple takes coerce_row's fast path
            checked.append(coerce_row(table, tuple(row) if type(row) is list else row))
    except SchemaError as exc:  # the same kind of error (NotNullError, ...), naming the row
        raise type(exc)(f"row {len(checked) + 1}: {exc}") from None
    return checked


def carried(table: TableSchema, layout: tuple[int | None, ...], row: Row) -> list[Any]:
    """A row of an older version of ``table`` in its newest columns (new ones take their
    defaults)."""
    values = [c.default for c in table.columns]
    for value, position in zip(row, layout):
        if position is not None:
            values[position] = value
    return values


def assigner(table: TableSchema, assignments: tuple[tuple[int, ir.Expr], ...]
             ) -> Callable[[Row, tuple], list[Any]]:
    """An UPDATE's ``SET`` list compiled: the new row from the old one and the values."""
    kinds = [c.kind for c in table.columns]
    nullable = [c.nullable for c in table.columns]
    types = [column_type(c) for c in table.columns]
    fns = [(i, value_function(strict_operands(e, types), kinds, nullable, with_params=True),
            table.columns[i], f"UPDATE: {table.name}.{table.columns[i].name}")
           for i, e in assignments]

    stamp = clock_stamper(table, [i for i, _ in assignments])

    def assign(row: Row, params: tuple) -> list[Any]:
        out = list(row)
        for i, fn, column, where in fns:
            # MySQL evaluates single-table assignments left to right: `SET a = a + 1, b = a`
            # gives b the new a (standard SQL, and SQLite, would give it the old one), as
            # stored: `SET x = 59, w = CONCAT(w, x)` reads 59.000 from a DECIMAL(6,3) x.
            out[i] = coerce_value(column, fn(out, params), where=where)
        if stamp is not None:
            stamp(row, out, params)
        return out

    return assign


def clock_stamper(table: TableSchema, assigned: Sequence[int]
                  ) -> Callable[[Row, list[Any], tuple], None] | None:
    """The ``ON UPDATE CURRENT_TIMESTAMP`` columns of ``table`` that an update assigning
    the columns ``assigned`` sets: a function that, where the update changed the row
    (``old`` to ``new``), sets each of them in ``new`` to the statement's instant (the last
    of its values), as MySQL does. None if there are none. A row the update leaves as it
    was keeps its time, and so does a column the update assigns itself."""
    stamped = [(i, table.columns[i]) for i in table.clock_updates if i not in assigned]
    if not stamped:
        return None

    def stamp(old: Row, new: list[Any], params: tuple) -> None:
        if all(a == b and type(a) is type(b) for a, b in zip(old, new)):
            return
        for i, column in stamped:
            new[i] = coerce_value(column, now_at(params[-1], column.on_update_now or 0))

    return stamp


def limiter(table: TableSchema, limit: st.Limit) -> Callable[[list[Row], tuple], list[int]]:
    """A single-table UPDATE's or DELETE's ``[ORDER BY ...] LIMIT n`` compiled: of the rows
    it matched, the positions of the first n in that order (NULLs first ascending, as
    MySQL sorts). Where rows that differ tie across the limit (or, without ORDER BY, more
    rows match than it writes), which ones MySQL writes depends on the order its plan reads
    them in: refused (1235) rather than guessed."""
    kinds = [c.kind for c in table.columns]
    nullable = [c.nullable for c in table.columns]
    keys = [(value_function(e, kinds, nullable, with_params=True), desc)
            for e, desc in limit.order]
    count = value_function(limit.count, [], [], with_params=True)

    def chosen(rows: list[Row], params: tuple) -> list[int]:
        n = count((), params)
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise SqlError(f"LIMIT takes a non-negative integer, not {n!r}")
        if n >= len(rows):
            return list(range(len(rows)))
        order = [tuple(desc_key(fn(row, params)) if desc else sort_key(fn(row, params))
                       for fn, desc in keys) for row in rows]
        ranked = sorted(range(len(rows)), key=order.__getitem__)
        if n and order[ranked[n - 1]] == order[ranked[n]]:
            tied = {rows[i] for i in ranked if order[i] == order[ranked[n]]}
            if len(tied) > 1:
                raise UnsupportedSqlError(
                    f"UPDATE/DELETE ... LIMIT {n} whose ORDER BY leaves rows of "
                    f"{table.name!r} tied across the limit (which of them MySQL writes "
                    "depends on the order its plan reads them in)")
        return ranked[:n]

    return chosen


def upsert_assigner(table: TableSchema, assignments: tuple[tuple[int, ir.Expr], ...]
                    ) -> Updater:
    """ON DUPLICATE KEY UPDATE's assignments compiled: the updated row from the row
    holding the key, the row the INSERT proposed (``VALUES(col)``, the row alias) and the
    statement's values, left to right as MySQL assigns (a later one reads the earlier
    ones' results)."""
    kinds = [c.kind for c in table.columns] * 2
    nullable = [c.nullable for c in table.columns] * 2
    types = [column_type(c) for c in table.columns] * 2
    fns = [(i, value_function(strict_operands(e, types), kinds, nullable, with_params=True),
            table.columns[i], f"UPDATE: {table.name}.{table.columns[i].name}")
           for i, e in assignments]

    stamp = clock_stamper(table, [i for i, _ in assignments])

    def update(old: Row, proposed: Row, params: tuple) -> list[Any]:
        out = list(old)
        for i, fn, column, where in fns:
            out[i] = coerce_value(column, fn(out + list(proposed), params), where=where)
        if stamp is not None:
            stamp(old, out, params)
        return out

    return update


def _clock_defaulted(table: TableSchema, rows: Iterable[Any], at: dt.datetime
                     ) -> Iterator[Any]:
    """``rows`` with the instant ``at`` (one for the whole batch, as for one statement) in
    each ``DEFAULT CURRENT_TIMESTAMP`` column a row given by column name leaves out."""
    clocked = [c for c in table.columns if c.default_now is not None]
    for row in rows:
        if isinstance(row, dict):
            given = {k.lower() for k in row}
            missing = {c.name: c.default_at(at) for c in clocked if c.name.lower() not in given}
            if missing:
                row = {**row, **missing}
        yield row


def _unnumbered(table: TableSchema, column: int, rows: Iterable[Any]) -> Iterator[Any]:
    """``rows`` with 0, the number-me mark, where the AUTO_INCREMENT ``column`` is NULL or
    missing (a NULL would fail the column's NOT NULL check before the commit numbers it)."""
    name = table.columns[column].name.lower()
    for row in rows:
        if isinstance(row, dict):
            if next((v for k, v in row.items() if k.lower() == name), None) is None:
                row = {**{k: v for k, v in row.items() if k.lower() != name}, name: 0}
        elif len(row) > column and row[column] is None:
            row = (*row[:column], 0, *row[column + 1:])
        yield row


def stored_keys(table: TableSchema, keys: list[tuple]) -> list[tuple] | None:
    """The stored primary keys the WHERE's key values find, as MySQL's ``=`` compares them
    (:func:`~rivulet.values.matching.equal_key`): a value no stored key equals drops its
    key; a value several stored keys may equal (``varchar_pk = 1`` finds '1', '01', ' 1')
    makes the write consider every row (None), the predicate deciding."""
    stored = []
    for key in keys:
        values = []
        for i, v in zip(table.primary_key, key):
            column = table.columns[i]
            found = equal_key(column.kind, v, column.members)
            if found is Unkeyed.SCAN:
                return None
            if found is Unkeyed.NOTHING:
                break
            try:
                value = key_value(column, found)
            except SchemaError:  # no value of the column's type equals it
                break
            if eq(value, found) != 1:  # held otherwise (a TIME past 838:59:59 is clipped)
                break
            values.append(value)
        else:
            stored.append(tuple(values))
    return stored
