"""δ: each distinct row once. Keeps a count per row; emits only on 0 <-> positive changes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from rivulet.dataflow.ops.base import Batch, NodeId, Operator
from rivulet.state.arrangement import Delta, Row, consolidate

if TYPE_CHECKING:
    from rivulet.dataflow.graph import Graph


class Distinct(Operator):
    symbol = "δ"

    def __init__(self, parent: NodeId) -> None:
        super().__init__((parent,))
        self.counts: dict[Row, int] = {}

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        counts = self.counts
        out: Batch = []
        for row, diff in consolidate(inputs[self.parents[0]]):
            before = counts.get(row, 0)
            after = before + diff
            if after > 0:
                counts[row] = after
            else:
                counts.pop(row, None)
            if before <= 0 < after:
                out.append((row, 1))
            elif after <= 0 < before:
                out.append((row, -1))
        return out

    def snapshot(self, graph: Graph) -> Iterable[Delta]:
        return [(row, 1) for row in self.counts]

    def describe(self) -> str:
        return "δ"
