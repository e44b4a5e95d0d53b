"""The running dataflow graph: nodes, their shared arrangements, and propagation of waves.

Node ids are assigned in creation order and a node is only created after its parents, so
id order is a topological order: a wave of deltas is propagated by visiting the touched
nodes in increasing id order, each exactly once, after all of its parents.

The graph is single-writer: only the propagation worker (or a migration, which runs on
that worker) calls :meth:`propagate` and :meth:`add_node`. Readers on other threads only
read reader state.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from rivulet.dataflow.ops.base import Base, Batch, NodeId, Operator
from rivulet.state.arrangement import Arrangement, Delta


@dataclass
class GraphNode:
    id: NodeId
    op: Operator
    children: list[NodeId] = field(default_factory=list)
    arrangements: dict[tuple[int, ...], Arrangement] = field(default_factory=dict)
    #: Names of the views that use this node; a node nobody uses can be dropped.
    users: set[str] = field(default_factory=set)


class Graph:
    def __init__(self) -> None:
        self.nodes: dict[NodeId, GraphNode] = {}
        self.bases: dict[str, NodeId] = {}
        self._next_id = 0
        #: Full output of nodes created by the running migration (see ``add_node``).
        self._fresh: dict[NodeId, Batch] | None = None
        #: Reads a base table's stored rows; base nodes keep no rows in memory themselves.
        self.base_rows: Callable[[str], Iterable[Delta]] = _no_base_rows

    # ..................................................................... building

    def add_base(self, table: str) -> NodeId:
        node = self._insert(Base(table))
        self.bases[table.lower()] = node
        return node

    def add_node(self, op: Operator, bootstrap: Iterable[Delta] | None = None) -> NodeId:
        """Add ``op`` below its parents and bring it up to date with their current output."""
        node = self._insert(op)
        for parent in set(op.parents):
            self.nodes[parent].children.append(node)
        op.attach(self, node)
        out = list(op.initial_output())
        inputs = {p: list(self.full_output(p)) for p in op.bootstrap_parents()}
        if any(inputs.values()):
            out.extend(op.on_input(inputs))
        if self._fresh is not None:
            self._fresh[node] = out
        for arrangement in self.nodes[node].arrangements.values():
            arrangement.apply(out)
        return node

    def _insert(self, op: Operator) -> NodeId:
        node = self._next_id
        self._next_id += 1
        self.nodes[node] = GraphNode(node, op)
        return node

    def begin_migration(self) -> None:
        """Remember the output of nodes added from now on, so their children bootstrap fast."""
        self._fresh = {}

    def end_migration(self) -> None:
        self._fresh = None

    def arrangement(self, node: NodeId, columns: tuple[int, ...]) -> Arrangement:
        """The shared index of ``node``'s output on ``columns``, built on first request."""
        arrangements = self.nodes[node].arrangements
        found = arrangements.get(columns)
        if found is None:
            source = next(iter(arrangements.values()), None)
            found = Arrangement(columns)
            found.apply(source.rows() if source is not None else self.full_output(node))
            arrangements[columns] = found
        return found

    # ..................................................................... reading state

    def full_output(self, node: NodeId) -> Iterator[Delta]:
        """Every row ``node`` currently outputs, from the cheapest state that has them."""
        if self._fresh is not None and node in self._fresh:
            yield from self._fresh[node]
            return
        entry = self.nodes[node]
        if entry.arrangements:
            yield from next(iter(entry.arrangements.values())).rows()
            return
        op = entry.op
        snapshot = op.snapshot(self)
        if snapshot is not None:
            yield from snapshot
            return
        if isinstance(op, Base):
            yield from self.base_rows(op.table)
            return
        inputs = {p: list(self.full_output(p)) for p in op.bootstrap_parents()}
        yield from op.on_input(inputs) if any(inputs.values()) else ()

    # ..................................................................... propagation

    def propagate(self, writes: dict[NodeId, Batch]) -> None:
        """Push one wave of base-table deltas through every node below them."""
        pending: dict[NodeId, dict[NodeId, Batch]] = {}
        queue: list[NodeId] = []
        for base, deltas in writes.items():
            if deltas:
                pending[base] = {-1: deltas}
                heapq.heappush(queue, base)
        nodes = self.nodes
        while queue:
            node_id = heapq.heappop(queue)
            inputs = pending.pop(node_id)
            node = nodes[node_id]
            out = node.op.on_input(inputs)
            if not out:
                continue
            for arrangement in node.arrangements.values():
                arrangement.apply(out)
            for child in node.children:
                child_inputs = pending.get(child)
                if child_inputs is None:
                    pending[child] = {node_id: out}
                    heapq.heappush(queue, child)
                else:
                    child_inputs[node_id] = out

    # ..................................................................... removal

    def remove_unused(self) -> list[NodeId]:
        """Drop nodes (and their state) that no view uses any more, leaves first."""
        removed = []
        for node_id in sorted(self.nodes, reverse=True):
            node = self.nodes[node_id]
            if node.users or node.children or isinstance(node.op, Base):
                continue
            for parent in set(node.op.parents):
                self.nodes[parent].children.remove(node_id)
            del self.nodes[node_id]
            removed.append(node_id)
        return removed


def _no_base_rows(table: str) -> Iterable[Delta]:
    raise RuntimeError(f"base table {table!r}: the graph has no storage to read it from")
