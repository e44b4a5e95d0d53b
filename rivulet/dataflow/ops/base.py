"""The operator contract: what every dataflow node implements.

An operator consumes the batches of signed deltas its parents emitted in one propagation
wave and returns the deltas it emits in turn (linear operators map each delta alone;
joins and aggregates consult state). It may read the *arrangements* of its parents, which
the graph has already brought up to date for this wave: the operator sees its inputs'
state *after* the batch, and each operator's docstring says how it accounts for that.

Partial state (upqueries, misses as values) extends this contract; full-state operators
never miss.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from rivulet.state.arrangement import Delta, Row

if TYPE_CHECKING:
    from rivulet.dataflow.graph import Graph

NodeId = int
Batch = list[Delta]


class Operator:
    """Base class; an operator overrides what it needs."""

    #: Short symbol-style name used by ``explain`` (σ filter, π project, ⋈ join, ...).
    symbol = "?"

    def __init__(self, parents: tuple[NodeId, ...]) -> None:
        self.parents = parents

    def attach(self, graph: Graph, node: NodeId) -> None:
        """Called once the node exists: take the arrangements the operator reads."""

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        """The output deltas for one wave of input deltas, keyed by the parent they came from."""
        raise NotImplementedError(type(self).__name__)

    def initial_output(self) -> Batch:
        """Rows a new node emits before any input (an aggregate over no rows still has one)."""
        return []

    def bootstrap_parents(self) -> tuple[NodeId, ...]:
        """Parents whose full output, fed in as inserts, brings a new node up to date."""
        return self.parents

    def snapshot(self, graph: Graph) -> Iterable[Delta] | None:
        """The node's full current output from its own state, or ``None`` if it keeps none."""
        return None

    def describe(self) -> str:
        return type(self).__name__


class Base(Operator):
    """A base table: deltas enter here from committed writes."""

    symbol = "B"

    def __init__(self, table: str) -> None:
        super().__init__(())
        self.table = table

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        return inputs[-1]

    def describe(self) -> str:
        return f"B {self.table}"


def rows_as_inserts(rows: Iterable[Row]) -> Batch:
    return [(row, 1) for row in rows]
