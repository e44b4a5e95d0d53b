"""σ: pass the rows that satisfy a predicate. Linear: each delta is judged alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rivulet.dataflow.ops.base import Batch, Columns, NodeId, Operator


class Filter(Operator):
    symbol = "σ"

    def __init__(self, parent: NodeId, predicate: Callable[[tuple], Any], text: str) -> None:
        super().__init__((parent,))
        self.predicate = predicate
        self.text = text

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        pred = self.predicate
        return [d for d in inputs[self.parents[0]] if pred(d[0])]

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        rows = self.graph.upquery(self.parents[0], columns, keys)
        return self.on_input({self.parents[0]: rows})

    def describe(self) -> str:
        return f"σ {self.text}"
