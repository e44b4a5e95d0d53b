"""π: compute each output row from one input row. Linear.

An upquery on output columns that copy input columns becomes an upquery on those input
columns (the builder only routes upqueries through copied columns)."""

from __future__ import annotations

from typing import Any, Callable

from rivulet.dataflow.ops.base import Batch, Columns, NodeId, Operator


class Project(Operator):
    symbol = "π"

    def __init__(self, parent: NodeId, fn: Callable[[tuple], tuple], text: str,
                 sources: tuple[int | None, ...] = ()) -> None:
        super().__init__((parent,))
        self.fn = fn
        self.text = text
        self.sources = sources

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        fn = self.fn
        return [(fn(row), diff) for row, diff in inputs[self.parents[0]]]

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        traced = tuple(self.sources[c] for c in columns)
        if None in traced:
            raise ValueError(f"upquery on computed column(s) {columns} of {self.describe()}")
        rows = self.graph.upquery(self.parents[0], traced, keys)  # type: ignore[arg-type]
        return self.on_input({self.parents[0]: rows})

    def describe(self) -> str:
        return f"π {self.text}"
