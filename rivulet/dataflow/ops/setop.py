"""∩ / ∖: ``INTERSECT`` and ``EXCEPT``, ``ALL`` or ``DISTINCT``, over multisets.

The operator keeps, for every row either input has, how many times each input has it
(``[left, right]``); a row's multiplicity in the output is a function of the two (MySQL
8.0.31's semantics, NULLs equal to NULLs as in ``DISTINCT``):

* ``INTERSECT ALL``: ``min(left, right)``; ``INTERSECT``: 1 where both are positive;
* ``EXCEPT ALL``: ``max(left - right, 0)``; ``EXCEPT``: 1 where only ``left`` is.

An input delta changes its row's counts, and the output changes by the difference of the
function before and after: incremental, one row at a time. Both inputs may be the same
node (``SELECT a FROM t INTERSECT SELECT a FROM t`` shares it): its deltas then count on
both sides. The state is full: a row's output depends on both inputs' counts of it,
which an upquery on some of its columns could fill, but the counts of rows not asked for
would have to be dropped on both sides alike; the builder keeps it whole
(``rivulet.plan.keys.partial_possible``), and upqueries from below are answered from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from rivulet.dataflow.ops.base import Batch, Columns, NodeId, StatefulOperator
from rivulet.plan import ir
from rivulet.state.arrangement import Delta, Row
from rivulet.state.groups import KeyedGroups
from rivulet.state.sizing import Sample, shares

#: A row's multiplicity in the output from its counts in the two inputs, by operation and
#: ``ALL``.
MULTIPLICITY: dict[tuple[str, bool], Callable[[int, int], int]] = {
    ("intersect", True): min,
    ("intersect", False): lambda left, right: 1 if left > 0 and right > 0 else 0,
    ("except", True): lambda left, right: max(left - right, 0),
    ("except", False): lambda left, right: 1 if left > 0 and right <= 0 else 0,
}


class SetOp(StatefulOperator):
    plan_node: ir.SetOp

    def __init__(self, left: NodeId, right: NodeId, arity: int, op: str, all_: bool) -> None:
        super().__init__((left, right))
        self.arity = arity
        self.op = op
        self.all = all_
        self.symbol = "∩" if op == "intersect" else "∖"
        self.multiplicity = MULTIPLICITY[(op, all_)]
        # Each row is its own group, held whole.
        self.state: KeyedGroups[list[int]] = KeyedGroups(arity, None, rows_as_keys=True)
        self.counts = self.state.groups
        self.sample = Sample()

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        changes: dict[Row, list[int]] = {}
        for side, parent in enumerate(self.parents):
            for row, diff in inputs.get(parent) or ():
                change = changes.get(row)
                if change is None:
                    change = changes[row] = [0, 0]
                change[side] += diff
        counts, state, f = self.counts, self.state, self.multiplicity
        out: Batch = []
        for row, (dl, dr) in changes.items():
            if not dl and not dr:
                continue
            held = counts.get(row)
            left, right = (0, 0) if held is None else held
            after_left, after_right = left + dl, right + dr
            if after_left or after_right:
                if held is None:
                    state.add(row, [after_left, after_right])
                else:
                    held[0], held[1] = after_left, after_right
            elif held is not None:
                state.remove(row)
            diff = f(after_left, after_right) - f(left, right)
            if diff:
                out.append((row, diff))
        return out

    @property
    def group_columns(self) -> Columns | None:
        return tuple(range(self.arity))

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        self.hold(columns, keys, columns, lambda rows: None)  # (full: checks the columns)
        f = self.multiplicity
        out: Batch = []
        for key in keys:
            row = (key,) if self.arity == 1 else key
            held = self.counts.get(row)
            n = 0 if held is None else f(*held)
            if n > 0:
                out.append((row, n))
        return out

    def snapshot(self) -> Iterable[Delta] | None:
        f = self.multiplicity
        return [(row, n) for row, held in self.counts.items() if (n := f(*held)) > 0]

    def byte_size(self) -> int:
        """The bytes of the rows and their two counts (rivulet.state.sizing)."""
        counts = self.counts

        def measure(picked: list[Any]) -> tuple[float, float, int]:
            return shares(picked) + shares([counts.get(row) for row in picked]), 0.0, 0

        return self.sample.bytes(counts, 0, measure) + self.state.byte_size()

    def describe(self) -> str:
        return f"{self.symbol} {self.op.upper()}{' ALL' if self.all else ''}"
