"""π: compute each output row from one input row. Linear."""

from __future__ import annotations

from typing import Callable

from rivulet.dataflow.ops.base import Batch, NodeId, Operator


class Project(Operator):
    symbol = "π"

    def __init__(self, parent: NodeId, fn: Callable[[tuple], tuple], text: str) -> None:
        super().__init__((parent,))
        self.fn = fn
        self.text = text

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        fn = self.fn
        return [(fn(row), diff) for row, diff in inputs[self.parents[0]]]

    def describe(self) -> str:
        return f"π {self.text}"
