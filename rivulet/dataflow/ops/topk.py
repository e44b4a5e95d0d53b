"""↑k: the first k rows of each group in a given order, kept up to date under deletes.

Each group keeps *all* its rows, sorted, so a row leaving the top is replaced by the next
one without asking upstream. Per batch, the top of every touched group is compared before
and after, and only the difference is emitted. Ties in the ORDER BY are broken by the
whole row, so the answer is deterministic. With ``partial``, only the groups under keys
asked for by upqueries are held (the key must name whole groups).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Iterable

from sortedcontainers import SortedKeyList

from rivulet.dataflow.ops.base import Batch, Columns, NodeId, StatefulOperator
from rivulet.state.arrangement import Delta, Row, apply_to_sorted, consolidate, estimate_row_bytes, key_function
from rivulet.state.groups import KeyedGroups

#: Rough cost of one row held in a group's sorted list (list slot and its sort key).
ROW_SLOT_BYTES = 120


class TopK(StatefulOperator):
    symbol = "↑"

    def __init__(
        self, parent: NodeId, group_by: tuple[int, ...], sort_key: Callable[[Row], Any], k: int,
        text: str = "", partial: Columns | None = None,
    ) -> None:
        super().__init__((parent,))
        self.group_by = group_by
        self.key_of = key_function(group_by)
        self.sort_key = sort_key
        self.k = k
        positions = None if partial is None else tuple(group_by.index(c) for c in partial)
        self.partial_columns = partial
        self.state: KeyedGroups[SortedKeyList] = KeyedGroups(len(group_by), positions)
        self.groups = self.state.groups
        self.text = text
        self.rows = 0
        self.row_bytes = 0

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        return self._apply(inputs[self.parents[0]])

    def _apply(self, deltas: Batch) -> Batch:
        groups, key_of, k, state = self.groups, self.key_of, self.k, self.state
        before: dict[Any, list[Row]] = {}
        for row, diff in consolidate(deltas):
            key = key_of(row)
            rows = groups.get(key)
            if rows is None:
                if not state.holds(key):
                    continue  # a hole: nobody below holds this group either
                rows = SortedKeyList(key=self.sort_key)
                state.add(key, rows)
            if key not in before:
                before[key] = list(rows.islice(0, k))
            apply_to_sorted(rows, row, diff)
            self.rows += diff
        out: Batch = []
        for key, old in before.items():
            rows = groups[key]
            new = list(rows.islice(0, k))
            if not rows:
                state.remove(key)
            if old == new:
                continue
            change = Counter(new)
            change.subtract(old)
            out.extend((row, n) for row, n in change.items() if n)
        return out

    # ..................................................................... upqueries

    def natural(self, columns: Columns) -> bool:
        return bool(self.group_by) and columns == self.group_by

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        self.hold(columns, keys, columns, self._apply)
        state = self.state
        out: Batch = []
        for key in keys:
            for gk in state.group_keys(key):
                out.extend((row, 1) for row in self.groups[gk].islice(0, self.k))
        return out

    def snapshot(self) -> Iterable[Delta] | None:
        if self.partial:
            return None
        return [(row, 1) for rows in self.groups.values() for row in rows.islice(0, self.k)]

    def evict(self, keys: Iterable[Any]) -> int:
        held = [pk for pk in dict.fromkeys(keys) if pk in self.state.filled]
        for pk in held:
            for gk in self.state.group_keys(pk):
                self.rows -= len(self.groups[gk])
        return self.state.evict(held)

    def byte_size(self) -> int:
        if self.rows and not self.row_bytes:
            self.row_bytes = estimate_row_bytes(r for rows in self.groups.values() for r in rows)
        return len(self.groups) * 400 + self.rows * (self.row_bytes + ROW_SLOT_BYTES)

    def describe(self) -> str:
        return f"↑{self.k} {self.text}"
