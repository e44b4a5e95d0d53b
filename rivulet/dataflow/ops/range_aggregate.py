"""γ≶: an aggregate under range parameters, one answer per value of the parameters.

``SELECT k, SUM(v) FROM t WHERE ts >= ? GROUP BY k`` has a different answer for every
value of ``?``, and a row counts in the answers of every value on one side of it. The
operator keeps:

* its input whole, sorted by the range column (a NULL there is in no range, and is not
  kept): a miss computes the aggregate of a new value from the rows on the right side of
  its bounds, which no key of the state below could look up;
* per value of the parameters it was asked for (its *partial key*, filled by an upquery
  and evicted as any partial key), the groups of the rows in its range, kept by an
  :class:`~rivulet.dataflow.ops.aggregate.Aggregate` of their own, so that their answers
  are exactly those of the grouped aggregate (its accumulators take retractions: MIN and
  MAX keep the multiset of their values, and so on);
* those values sorted by their first bound: a write of a row finds the values whose range
  holds it by bisection (then checks any other bound, of the range column or of another
  column: ``WHERE a > ? AND b < ?``), and updates those alone.

Bounds on other columns than the range column (``other_ranges``) are checked row by row,
as Python compares a value with a bound placed among the column's values, exactly as the
range column's extra bounds are: a miss computes from the rows of the range column's range
those within them, and a row NULL in one of those columns is in no range (not held).

Output rows are the groups' rows followed by the parameters' values (the reader's key).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Any

from sortedcontainers import SortedKeyList

from rivulet.dataflow.ops.aggregate import Aggregate
from rivulet.dataflow.ops.base import Batch, Columns, NodeId, StatefulOperator, Upstream
from rivulet.plan import ir
from rivulet.state.arrangement import Delta, Row, apply_to_sorted, consolidate
from rivulet.state.groups import KeyedGroups
from rivulet.state.sizing import shares, sorted_list_bytes
from rivulet.values.schema import Kind

#: ``row value op parameter`` as Python compares (the read turns a parameter into a value
#: that Python's comparison places among the column's values as MySQL's does:
#: ``rivulet.values.matching.range_bound``).
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
}

#: Where one aggregate's own input is (the per-value aggregates run outside the graph).
_OWN = 0


def _values_of(columns: tuple[int, ...]) -> Callable[[Row], tuple]:
    """A row's values in ``columns``, as a tuple (``()`` for none)."""
    if not columns:
        return lambda row: ()
    if len(columns) == 1:
        (column,) = columns
        return lambda row: (row[column],)
    return itemgetter(*columns)


class RangeAggregate(StatefulOperator):
    """Groups the rows whose range column satisfies every bound (``ops``, the parameter
    on the right) for each value of the parameters asked for: of the bounds, and of the
    equality parameters' group columns (``keyed``), whose rows are held apart by their
    values. Always partial, on its output's key columns: the parameters' values are
    infinitely many, and only those read are kept."""

    symbol = "γ≶"

    def __init__(self, parent: NodeId, node: ir.RangeAggregate,
                 result_kinds: list[Kind | None]) -> None:
        super().__init__((parent,))
        self.group_by = node.group_by
        self.aggs = node.aggs
        self.range_column = node.range_column
        self.ops = node.ops
        self.implicit = node.implicit
        self.result_kinds = result_kinds
        #: Every bound as (input column, op), in the order of a key's bounds.
        self.bounded = node.bounded
        #: ... as (input column, the comparison of a row's value with the bound)
        self.tests = [(column, _COMPARE[op]) for column, op in node.bounded]
        #: The other columns a range bounds (a row NULL in one is in no range).
        self.other_columns = tuple(column for column, _ in node.other_ranges)
        self.partial_columns = node.key_columns
        self.width = len(node.keyed)  # of the equality parameters' values in a key
        self.single = len(self.partial_columns) == 1
        #: A row's values of the equality parameters' columns (``()`` without any).
        self.keyed_of = _values_of(tuple(node.group_by[c] for c in node.keyed))
        #: The input's rows with a non-NULL range value, by their values of the keyed
        #: columns, each in the range column's order.
        self.rows: dict[tuple, SortedKeyList] = {}
        #: Per value of the parameters held (a scalar for one, else a tuple), the
        #: aggregate of the rows in its range.
        width = len(self.partial_columns)
        self.state: KeyedGroups[Aggregate] = KeyedGroups(width, tuple(range(width)))
        #: The bounds held that can hold a row (none is NULL), by the keyed values, each
        #: sorted by its first bound.
        self.held: dict[tuple, SortedKeyList] = {}

    def _split(self, key: Any) -> tuple[tuple, tuple]:
        """A key's values of the keyed columns, and its bounds."""
        values = (key,) if self.single else tuple(key)
        return values[:self.width], values[self.width:]

    @property
    def partial_input_columns(self) -> Columns | None:
        """None: every input row may be in the range of a value held, so none is dropped."""
        return None

    @property
    def group_columns(self) -> Columns | None:
        return None  # (its groups are found by the parameters' values only)

    def attach(self, graph: Upstream, node: NodeId) -> None:
        super().attach(graph, node)
        for row, diff in consolidate(graph.full_output(self.parents[0])):
            self._hold(row, diff)

    def _hold(self, row: Row, diff: int) -> SortedKeyList | None:
        """Add (or remove) an input row among the rows held; the sorted rows of its keyed
        values, or None for a row in no range (a NULL range value or keyed value)."""
        if row[self.range_column] is None or any(row[c] is None for c in self.other_columns):
            return None
        keyed = self.keyed_of(row)
        if None in keyed:
            return None  # (``col = ?`` finds no NULL)
        rows = self.rows.get(keyed)
        if rows is None:
            rows = self.rows[keyed] = SortedKeyList(key=itemgetter(self.range_column))
        apply_to_sorted(rows, row, diff)
        if not rows:
            del self.rows[keyed]
        return rows

    # ..................................................................... writes

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        # (netted first: a sorted list cannot hold a row a batch retracts before it adds)
        deltas = consolidate(inputs[self.parents[0]])
        touched: dict[Any, list[Delta]] = {}
        for row, diff in deltas:
            if self._hold(row, diff) is None:
                continue  # in no range
            for key in self._holding(self.keyed_of(row), row):
                touched.setdefault(key, []).append((row, diff))
        out: Batch = []
        groups = self.state.groups
        for key, changes in touched.items():
            out += self._rows_of(key, groups[key].on_input({_OWN: changes}))
        return out

    def _rows_of(self, key: Any, rows: Iterable[Delta]) -> Batch:
        """The inner aggregate's deltas as the operator's rows: (the keyed values of an
        implicit group, then) its row, then the bounds."""
        keyed, bounds = self._split(key)
        head = keyed if self.implicit else ()
        return [(head + row + bounds, n) for row, n in rows]

    def _holding(self, keyed: tuple, row: Row) -> list[Any]:
        """The values held whose range holds ``row`` (of keyed values ``keyed``): those on
        the right side of its range value by their first bound (a bisection), then
        checked by the rest, of every range column."""
        held = self.held.get(keyed)
        if held is None:
            return []
        value = row[self.range_column]
        op = self.ops[0]
        if op == "<=":  # value <= p: every p from value up
            found = held.irange_key(min_key=value)
        elif op == "<":
            found = held.irange_key(min_key=value, inclusive=(False, True))
        elif op == ">=":  # value >= p: every p up to value
            found = held.irange_key(max_key=value)
        else:
            found = held.irange_key(max_key=value, inclusive=(True, False))
        if len(self.tests) == 1:
            return list(found)
        return [key for key in found
                if all(check(row[column], bound)
                       for (column, check), bound in zip(self.tests, self._split(key)[1]))]

    # ..................................................................... upqueries

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        if columns != self.partial_columns:
            raise ValueError(f"{self.describe()} is keyed by {self.partial_columns}, "
                             f"not {columns}")
        state = self.state
        for key in state.missing(keys):
            aggregate = self._new_aggregate()
            keyed, bounds = self._split(key)
            if None not in bounds and None not in keyed:  # (else no row is in range)
                aggregate.on_input({_OWN: [(row, 1) for row in self._in_range(keyed, bounds)]})
                held = self.held.get(keyed)
                if held is None:
                    held = self.held[keyed] = SortedKeyList(key=self._first_bound)
                held.add(key)
            state.add(key, aggregate)
            state.mark_filled([key])
        state.recent.update(keys)
        out: Batch = []
        for key in keys:
            out += self._rows_of(key, state.groups[key].snapshot() or ())
        return out

    def _first_bound(self, key: Any) -> Any:
        return key if self.single else key[self.width]

    def _new_aggregate(self) -> Aggregate:
        """The aggregate of one value's rows: over all of them for an implicit group (the
        keyed values are the same in each: one row, also over none), else by the groups."""
        group_by = () if self.implicit else self.group_by
        return Aggregate(_OWN, group_by, self.aggs, result_kinds=self.result_kinds)

    def _in_range(self, keyed: tuple, bounds: tuple[Any, ...]) -> Iterable[Row]:
        """The rows held of keyed values ``keyed`` in the range of ``bounds``: cut from the
        sorted rows by the first bound on each side, checked against any other (of the
        range column, then of the other columns)."""
        held = self.rows.get(keyed)
        if held is None:
            return []
        low = high = None
        low_inclusive = high_inclusive = True
        rest = []
        column = self.range_column
        for op, bound in zip(self.ops, bounds):
            if op in (">", ">=") and low is None:
                low, low_inclusive = bound, op == ">="
            elif op in ("<", "<=") and high is None:
                high, high_inclusive = bound, op == "<="
            else:
                rest.append((column, _COMPARE[op], bound))
        rest += [(other, check, bound) for (other, check), bound
                 in zip(self.tests[len(self.ops):], bounds[len(self.ops):])]
        if low is not None and high is not None and low > high:
            return []
        rows = held.irange_key(low, high, inclusive=(low_inclusive, high_inclusive))
        if not rest:
            return list(rows)
        return [row for row in rows if all(check(row[c], b) for c, check, b in rest)]

    # ..................................................................... partial state

    def evict(self, keys: Iterable[Any]) -> int:
        keys = list(keys)
        for key in keys:
            if key not in self.state.filled:
                continue
            keyed, bounds = self._split(key)
            held = self.held.get(keyed)
            if held is not None and None not in bounds and None not in keyed:
                held.remove(key)
                if not held:
                    del self.held[keyed]
        return self.state.evict(keys)

    def byte_size(self) -> int:
        """The bytes of the rows held, of each value's groups (rivulet.state.sizing, as
        the grouped aggregate measures them) and of the values' bookkeeping."""
        total = shares(list(self.rows)) + shares(list(self.held))
        for rows in self.rows.values():
            total += sum(sorted_list_bytes(rows))
        for held in self.held.values():
            total += sum(sorted_list_bytes(held))
        groups = sum(aggregate.byte_size() for aggregate in self.state.groups.values())
        return int(total + groups) + self.state.byte_size()

    def describe(self) -> str:
        inner = Aggregate(_OWN, self.group_by, self.aggs).describe()[2:]
        bounds = " AND ".join(f"#{column} {op} ?" for column, op in self.bounded)
        return f"{self.symbol} {inner} where {bounds}"
