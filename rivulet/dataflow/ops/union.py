"""⊎: bag union of several inputs (UNION ALL). Linear.

The same parent may appear twice (``SELECT a FROM t UNION ALL SELECT a FROM t`` shares one
node for both branches); its deltas then count once per appearance.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rivulet.dataflow.ops.base import Batch, Columns, NodeId, Operator


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

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        # One upquery per distinct parent: each answers once, however often it appears.
        return self.on_input({p: self.graph.upquery(p, columns, keys) for p in self.times})

    def describe(self) -> str:
        return "⊎"
