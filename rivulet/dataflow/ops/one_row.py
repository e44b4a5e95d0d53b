"""①: the one row of no columns a ``SELECT`` without ``FROM`` (or ``FROM DUAL``) reads.

A source like a base table, but constant: it is never written, so no wave ever starts
here; the operators below it compute their output from its one row when they are built
(full state) or asked (an upquery, which can only ask for its whole output: it has no
column to be asked by).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rivulet.dataflow.ops.base import Batch, Columns, NodeId, Operator
from rivulet.state.arrangement import Delta

#: The row, once: ``()`` counted once.
ROW: Delta = ((), 1)


class OneRow(Operator):
    symbol = "①"

    def __init__(self) -> None:
        super().__init__(())

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        return []  # (no parent sends it anything)

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        return [ROW]

    def snapshot(self) -> Iterable[Delta]:
        return [ROW]

    def describe(self) -> str:
        return "① one row"
