"""An UPDATE's WHERE compiled as MySQL's strict mode evaluates it (rivulet/plan/strict.py).

An UPDATE is evaluated in strict mode (:func:`rivulet.values.conversions.strict_mode`): a
conversion MySQL reports as truncating fails it. Whether one is made depends on which rows
MySQL reads and which conditions it decides before reading any, so the writer compiles
the WHERE in three parts: the constant conditions (decided once per execution, outside
strict mode), the conditions on the primary key that bound a range of rows (checked first,
outside strict mode, where MySQL can bound a range by their values), and the WHERE itself
with the operands MySQL converts made explicit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rivulet.bind import statements as st
from rivulet.dataflow.compile import bound_predicate, value_function
from rivulet.plan.strict import key_range, planned_constants, sargable, strict_operands
from rivulet.values.conversions import lenient
from rivulet.values.schema import Row
from rivulet.values.types import column_type

Predicate = Callable[[Row, tuple], Any]
#: The largest BIGINT (and BIGINT UNSIGNED: rivulet keeps it to a signed one).
BIGINT_MAX = 2**63 - 1


class PlannedWhere:
    """An UPDATE's WHERE: :meth:`predicate` gives the function of a row the commit calls
    (in strict mode) for one execution's ``?`` values."""

    def __init__(self, statement: st.Update) -> None:
        assert statement.where is not None
        table = statement.table
        kinds = [c.kind for c in table.columns]
        nullable = [c.nullable for c in table.columns]
        self.key_kinds = [table.columns[i].kind for i in table.primary_key]
        self.ranges: list[tuple[Predicate, list[list[Callable[..., Any]]]]] = []
        if table.primary_key:
            for condition, groups in key_range(statement.where, table.primary_key[0]):
                self.ranges.append((
                    lenient(bound_predicate(condition, kinds, nullable)),
                    [[value_function(e, [], [], with_params=True) for e in group]
                     for group in groups]))
        bigints = frozenset(i for i, c in enumerate(table.columns)
                            if c.bounds is not None and c.bounds[1] == BIGINT_MAX)
        where, planned = planned_constants(statement.where, statement.param_count, bigints)
        where = strict_operands(where, [column_type(c) for c in table.columns])
        self.where = bound_predicate(where, kinds, nullable)
        self.constants = [value_function(e, [], [], with_params=True) for e in planned]
        #: Whether the statement's values end with its instant (it reads the clock): the
        #: planned constants' values go before it, where their Params number them.
        self.clock = statement.reads_clock

    def keys_bound(self, keys: Sequence[tuple]) -> bool:
        """Whether MySQL reads only the rows of these primary keys (the WHERE's ``pk = v``
        or ``pk IN (...)`` values), rather than every row: where it can bound a range by
        them (``id = 2.5`` or ``id IN (2, 'a')`` reads every row)."""
        return all(sargable(kind, [key[i] for key in keys])
                   for i, kind in enumerate(self.key_kinds))

    def predicate(self, bound: tuple, *, looked_up: bool) -> Predicate:
        """The WHERE for one execution: its constant conditions computed now, outside strict
        mode, as MySQL computes them while planning (a truncation only warns); only the rows
        in the range its conditions on the key bound (where MySQL can bound one by their
        values) are tested. ``looked_up``: the rows are read by the keys of one of those
        conditions already."""
        computed = tuple(f((), bound) for f in self.constants)
        full = (bound[:-1] + computed + bound[-1:]) if self.clock else bound + computed
        where = self.where
        checks = [check for check, groups in self.ranges
                  if all(sargable(self.key_kinds[0], [f((), bound) for f in group])
                         for group in groups)]
        if not checks or (looked_up and len(checks) == 1):
            if not self.constants:
                return where
            return lambda row, _params: where(row, full)
        if len(checks) == 1:
            in_range = checks[0]
            return lambda row, _params: in_range(row, full) and where(row, full)
        return lambda row, _params: all(c(row, full) for c in checks) and where(row, full)
