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
  holds it by bisection (then checks any other bound), and updates those alone.

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
from rivulet.plan.ir import AggCall
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


class RangeAggregate(StatefulOperator):
    """Groups by ``group_by`` the rows whose ``range_column`` satisfies every bound
    (``ops``, the parameter on the right) for each value of the parameters asked for.
    Always partial, on its output's bound columns: the parameters' values are infinitely
    many, and only those read are kept."""

    symbol = "γ≶"

    def __init__(self, parent: NodeId, group_by: tuple[int, ...], aggs: tuple[AggCall, ...],
                 range_column: int, ops: tuple[str, ...],
                 result_kinds: list[Kind | None]) -> None:
        super().__init__((parent,))
        self.group_by = group_by
        self.aggs = aggs
        self.range_column = range_column
        self.ops = ops
        self.result_kinds = result_kinds
        self.checks = [_COMPARE[op] for op in ops]
        width = len(group_by) + len(aggs)
        self.partial_columns = tuple(range(width, width + len(ops)))
        self.single = len(ops) == 1
        #: The input's rows with a non-NULL range value, in its order.
        self.rows = SortedKeyList(key=itemgetter(range_column))
        #: Per value of the parameters held (a scalar for one bound, else a tuple), the
        #: aggregate of the rows in its range.
        self.state: KeyedGroups[Aggregate] = KeyedGroups(len(ops), tuple(range(len(ops))))
        #: The values held whose bounds can hold a row (none is NULL), by the first bound.
        self.held = SortedKeyList(key=self._first)

    def _first(self, key: Any) -> Any:
        return key if self.single else key[0]

    def _bounds(self, key: Any) -> tuple[Any, ...]:
        return (key,) if self.single else tuple(key)

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
            if row[self.range_column] is not None:
                apply_to_sorted(self.rows, row, diff)

    # ..................................................................... writes

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        # (netted first: a sorted list cannot hold a row a batch retracts before it adds)
        deltas = consolidate(inputs[self.parents[0]])
        column = self.range_column
        touched: dict[Any, list[Delta]] = {}
        for row, diff in deltas:
            value = row[column]
            if value is None:
                continue  # in no range
            apply_to_sorted(self.rows, row, diff)
            for key in self._holding(value):
                touched.setdefault(key, []).append((row, diff))
        out: Batch = []
        groups = self.state.groups
        for key, changes in touched.items():
            bounds = self._bounds(key)
            for row, diff in groups[key].on_input({_OWN: changes}):
                out.append((row + bounds, diff))
        return out

    def _holding(self, value: Any) -> list[Any]:
        """The values held whose range holds a row of range value ``value``: those on the
        right side of it by their first bound (a bisection), then checked by the rest."""
        op = self.ops[0]
        if op == "<=":  # value <= p: every p from value up
            found = self.held.irange_key(min_key=value)
        elif op == "<":
            found = self.held.irange_key(min_key=value, inclusive=(False, True))
        elif op == ">=":  # value >= p: every p up to value
            found = self.held.irange_key(max_key=value)
        else:
            found = self.held.irange_key(max_key=value, inclusive=(True, False))
        if self.single:
            return list(found)
        return [key for key in found if self._inside(value, key)]

    def _inside(self, value: Any, key: Any) -> bool:
        return all(check(value, bound) for check, bound in zip(self.checks, self._bounds(key)))

    # ..................................................................... upqueries

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        if columns != self.partial_columns:
            raise ValueError(f"{self.describe()} is keyed by {self.partial_columns}, "
                             f"not {columns}")
        state = self.state
        for key in state.missing(keys):
            aggregate = self._new_aggregate()
            bounds = self._bounds(key)
            if None not in bounds:  # (a NULL bound holds no row: nothing is in its range)
                aggregate.on_input({_OWN: [(row, 1) for row in self._in_range(bounds)]})
                self.held.add(key)
            state.add(key, aggregate)
            state.mark_filled([key])
        state.recent.update(keys)
        out: Batch = []
        for key in keys:
            bounds = self._bounds(key)
            for row, n in state.groups[key].snapshot() or ():
                out.append((row + bounds, n))
        return out

    def _new_aggregate(self) -> Aggregate:
        return Aggregate(_OWN, self.group_by, self.aggs, result_kinds=self.result_kinds)

    def _in_range(self, bounds: tuple[Any, ...]) -> Iterable[Row]:
        """The rows held in the range of ``bounds``: cut from the sorted rows by the first
        bound on each side, checked against any other."""
        low = high = None
        low_inclusive = high_inclusive = True
        rest = []
        for op, bound in zip(self.ops, bounds):
            if op in (">", ">=") and low is None:
                low, low_inclusive = bound, op == ">="
            elif op in ("<", "<=") and high is None:
                high, high_inclusive = bound, op == "<="
            else:
                rest.append((_COMPARE[op], bound))
        if low is not None and high is not None and low > high:
            return []
        rows = self.rows.irange_key(low, high, inclusive=(low_inclusive, high_inclusive))
        if not rest:
            return list(rows)
        column = self.range_column
        return [row for row in rows if all(check(row[column], b) for check, b in rest)]

    # ..................................................................... partial state

    def evict(self, keys: Iterable[Any]) -> int:
        keys = list(keys)
        for key in keys:
            if key in self.state.filled and None not in self._bounds(key):
                self.held.remove(key)
        return self.state.evict(keys)

    def byte_size(self) -> int:
        """The bytes of the rows held, of each value's groups (rivulet.state.sizing, as
        the grouped aggregate measures them) and of the values' bookkeeping."""
        own, held = sorted_list_bytes(self.rows)
        values = sum(sorted_list_bytes(self.held)) + shares(list(self.held))
        groups = sum(aggregate.byte_size() for aggregate in self.state.groups.values())
        return int(own + held + values + groups) + self.state.byte_size()

    def describe(self) -> str:
        inner = self._new_aggregate().describe()[2:]
        bounds = " AND ".join(f"#{self.range_column} {op} ?" for op in self.ops)
        return f"{self.symbol} {inner} where {bounds}"
