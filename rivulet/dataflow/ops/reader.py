"""R: the leaf that keeps a view's answer, indexed by its parameters, for reads."""

from __future__ import annotations

from rivulet.dataflow.ops.base import Batch, NodeId, Operator
from rivulet.state.reader import KeyedReader, RangeReader


class Reader(Operator):
    symbol = "R"

    def __init__(self, parent: NodeId, state: KeyedReader | RangeReader, view: str) -> None:
        super().__init__((parent,))
        self.state = state
        self.view = view

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        self.state.apply(inputs[self.parents[0]])
        return []

    def describe(self) -> str:
        return f"R {self.view}"
