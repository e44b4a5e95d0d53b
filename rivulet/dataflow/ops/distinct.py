"""δ: each distinct row once. Keeps a count per row; emits only on 0 <-> positive changes.

With ``partial`` columns, holds the counts of rows under the keys asked for only."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rivulet.dataflow.ops.base import Batch, Columns, NodeId, StatefulOperator
from rivulet.plan import ir
from rivulet.state.arrangement import Delta, Row, consolidate
from rivulet.state.groups import KeyedGroups
from rivulet.state.sizing import Sample, shares


class Distinct(StatefulOperator):
    symbol = "δ"
    plan_node: ir.Distinct

    def __init__(self, parent: NodeId, arity: int, partial: Columns | None = None) -> None:
        super().__init__((parent,))
        self.arity = arity
        self.partial_columns = partial
        # Each distinct row is its own group; the partial key is some of its columns.
        self.state: KeyedGroups[int] = KeyedGroups(arity, partial, rows_as_keys=True)
        self.counts = self.state.groups
        self.sample = Sample()

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        counts, state = self.counts, self.state
        out: Batch = []
        for row, diff in consolidate(inputs[self.parents[0]]):
            before = counts.get(row, 0)
            if not before and not state.holds(row):
                continue  # a hole: nobody below holds this row's key either
            after = before + diff
            if after > 0:
                if before:
                    counts[row] = after
                else:
                    state.add(row, after)
            elif before:
                state.remove(row)
            if before <= 0 < after:
                out.append((row, 1))
            elif after <= 0 < before:
                out.append((row, -1))
        return out

    def load_counts(self, counts: Iterable[tuple[Row, int]]) -> int:
        """Install each distinct row with its multiplicity in the input, computed elsewhere
        (bootstrap on Spark); only into empty full state, before anything is emitted (the
        children bootstrap from :meth:`snapshot`). Returns the rows loaded."""
        if self.partial:
            raise ValueError("δ: load_counts needs full state")
        n = 0
        for row, count in counts:
            if count > 0:
                self.state.add(row, count)
                n += 1
        return n

    @property
    def group_columns(self) -> Columns | None:
        return tuple(range(self.arity))

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        self.hold(columns, keys, columns, lambda rows: self.on_input({self.parents[0]: rows}))
        state = self.state
        if state.partial:
            return [(row, 1) for key in keys for row in state.group_keys(key)]
        rows = [(key,) if self.arity == 1 else key for key in keys]
        return [(row, 1) for row in rows if row in self.counts]

    def snapshot(self) -> Iterable[Delta] | None:
        if self.partial:
            return None
        return [(row, 1) for row in self.counts]

    def byte_size(self) -> int:
        """The bytes of the distinct rows and their counts (rivulet.state.sizing), and the
        partial keys' bookkeeping."""
        counts = self.counts

        def measure(picked: list[Any]) -> tuple[float, float, int]:
            return shares(picked) + shares([counts.get(row) for row in picked]), 0.0, 0

        return self.sample.bytes(counts, 0, measure) + self.state.byte_size()

    def describe(self) -> str:
        return "δ"
