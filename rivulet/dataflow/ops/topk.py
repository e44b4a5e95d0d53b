"""↑k: the first k rows of each group in a given order, kept up to date under deletes.

Each group keeps *all* its rows, sorted (full state), so a row leaving the top is replaced
by the next one without asking upstream. Per batch, the top of every touched group is
compared before and after, and only the difference is emitted. Ties in the ORDER BY are
broken by the whole row, so the answer is deterministic.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Iterable

from sortedcontainers import SortedKeyList

from rivulet.dataflow.ops.base import Batch, NodeId, Operator
from rivulet.state.arrangement import Delta, Row, apply_to_sorted, consolidate, key_function

if TYPE_CHECKING:
    from rivulet.dataflow.graph import Graph


class TopK(Operator):
    symbol = "↑"

    def __init__(
        self, parent: NodeId, group_by: tuple[int, ...], sort_key: Callable[[Row], Any], k: int,
        text: str = "",
    ) -> None:
        super().__init__((parent,))
        self.key_of = key_function(group_by)
        self.sort_key = sort_key
        self.k = k
        self.groups: dict[Any, SortedKeyList] = {}
        self.text = text

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        groups, key_of, k = self.groups, self.key_of, self.k
        before: dict[Any, list[Row]] = {}
        for row, diff in consolidate(inputs[self.parents[0]]):
            key = key_of(row)
            rows = groups.get(key)
            if rows is None:
                rows = groups[key] = SortedKeyList(key=self.sort_key)
            if key not in before:
                before[key] = list(rows.islice(0, k))
            apply_to_sorted(rows, row, diff)
        out: Batch = []
        for key, old in before.items():
            rows = groups[key]
            new = list(rows.islice(0, k))
            if not rows:
                del groups[key]
            if old == new:
                continue
            change = Counter(new)
            change.subtract(old)
            out.extend((row, n) for row, n in change.items() if n)
        return out

    def snapshot(self, graph: Graph) -> Iterable[Delta]:
        return [(row, 1) for rows in self.groups.values() for row in rows.islice(0, self.k)]

    def describe(self) -> str:
        return f"↑{self.k} {self.text}"
