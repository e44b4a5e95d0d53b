"""⊎: bag union of several inputs (UNION ALL). Linear.

The same parent may appear twice (``SELECT a FROM t UNION ALL SELECT a FROM t`` shares one
node for both branches); its deltas then count once per appearance.
"""

from __future__ import annotations

from collections import Counter

from rivulet.dataflow.ops.base import Batch, NodeId, Operator


class Union(Operator):
    symbol = "⊎"

    def __init__(self, parents: tuple[NodeId, ...]) -> None:
        super().__init__(parents)
        self.times = Counter(parents)

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        out: Batch = []
        for parent, deltas in inputs.items():
            times = self.times[parent]
            out.extend(deltas if times == 1 else [(r, d * times) for r, d in deltas])
        return out

    def bootstrap_parents(self) -> tuple[NodeId, ...]:
        return tuple(self.times)

    def describe(self) -> str:
        return "⊎"
