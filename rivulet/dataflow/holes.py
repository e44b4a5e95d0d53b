"""Which states below a join could hold the rows of a join key: the key's *holders*.

In Noria (paper, section 4) an update that meets a hole is dropped when no state below
holds its key, so partial state grows with reads, not with writes, and a write never waits
on an upquery. A join here meets a hole when one of its input indexes lacks a key the wave
probes. Filling it (today's answer, still right) costs a storage read and memory for rows
nobody may ever read. Dropping the key's deltas instead is exact when every state the
join's output can reach under that key is partial, keyed by the join key's values, and
does not hold the key: every output row made from input rows with join key ``k`` carries
``k`` in the join key's output columns, so those states would skip those rows anyway (a
partial stateful operator drops updates to groups it does not hold, and so emits nothing
the states below it could keep; a partial index or reader skips holes). Whoever reads the
key later fills it by an upquery, which sees the join's inputs as they are then.

:func:`holders` walks down from a join through operators that keep the key's columns
(σ, π copying them, ⊎, the side of a join whose rows it passes on) and returns the states
that decide, or ``None`` when some state below needs every key (full state, state keyed by
other columns, or an operator the walk does not see through): then the join keeps filling.
The decision needs no invariant between a join's inputs and the states below: a key held
below is filled as before, however its inputs' indexes were evicted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from rivulet.dataflow.ops.base import NodeId, StatefulOperator
from rivulet.dataflow.ops.filter import Filter
from rivulet.dataflow.ops.join import Join
from rivulet.dataflow.ops.project import Project
from rivulet.dataflow.ops.reader import Reader
from rivulet.dataflow.ops.union import Union
from rivulet.state.arrangement import Arrangement

#: For each column of a join key, the output columns of a node that carry its value.
KeyPositions = tuple[frozenset[int], ...]


class Node(Protocol):
    """What the walk reads of a graph node (rivulet.dataflow.graph.GraphNode)."""

    op: Any
    children: list[NodeId]
    arrangements: dict[tuple[int, ...], Arrangement]
    full_indexes: dict[tuple[int, ...], Any]


@dataclass(frozen=True)
class Holder:
    """A partial state below a join, keyed by the join key's values (``held``: the dict
    whose keys are the keys it holds), or by no column (``whole``: a view read whole, one
    hole for every key). ``owner`` says whether it is still partial."""

    owner: Any
    held: dict[Any, Any]
    whole: bool

    def needs(self, key: Any) -> bool:
        return () in self.held if self.whole else key in self.held


def holders(nodes: Mapping[NodeId, Node], node: NodeId,
            positions: KeyPositions) -> list[Holder] | None:
    """The states below ``node`` (its own indexes included) that could hold rows whose
    ``positions`` carry a key, or ``None`` if some state below needs every key."""
    found: list[Holder] = []
    seen: set[tuple[NodeId, KeyPositions]] = set()
    stack = [(node, positions)]
    while stack:
        at, where = stack.pop()
        if (at, where) in seen:
            continue
        seen.add((at, where))
        entry = nodes[at]
        if entry.full_indexes:
            return None
        for index in entry.arrangements.values():
            holder = _holder(index, index.index, index.columns, where)
            if holder is None:
                return None
            found.append(holder)
        for child in dict.fromkeys(entry.children):
            op = nodes[child].op
            below: KeyPositions | None
            if isinstance(op, (Filter, Union)):
                below = where
            elif isinstance(op, Project):
                below = _projected(op, where)
            elif isinstance(op, Join):
                below = _through_join(op, at, where)
            elif isinstance(op, StatefulOperator):
                columns = op.partial_input_columns
                if columns is None:
                    return None
                holder = _holder(op.state, op.state.filled, columns, where)
                if holder is None:
                    return None
                found.append(holder)  # it drops what it does not hold: nothing passes on
                continue
            elif isinstance(op, Reader):
                state = op.state
                holder = _holder(state, state.entries, state.key_columns, where)
                if holder is None:
                    return None
                found.append(holder)
                continue
            else:
                return None
            if below is None:
                return None
            stack.append((child, below))
    return found


def holes(found: list[Holder], keys: Iterable[Any]) -> list[Any]:
    """The keys among ``keys`` that none of ``found`` holds (none if one turned full)."""
    if any(not h.owner.partial for h in found):
        return []
    return [k for k in keys if not any(h.needs(k) for h in found)]


def _holder(owner: Any, held: dict[Any, Any], columns: tuple[int, ...],
            where: KeyPositions) -> Holder | None:
    if not owner.partial:
        return None
    if not columns:
        return Holder(owner, held, True)
    if len(columns) == len(where) and all(c in p for c, p in zip(columns, where)):
        return Holder(owner, held, False)
    return None  # keyed by other columns: any of its keys may have rows of this one


def _projected(op: Project, where: KeyPositions) -> KeyPositions | None:
    out = []
    for positions in where:
        copies = frozenset(o for o, s in enumerate(op.sources) if s in positions)
        if not copies:
            return None  # the key is not kept: states below are keyed otherwise
        out.append(copies)
    return tuple(out)


def _through_join(op: Join, parent: NodeId, where: KeyPositions) -> KeyPositions | None:
    """Where a join below passes the key of its ``parent``'s rows on. A left join's right
    rows also decide which left rows are padded, rows that do not carry the key."""
    if op.left == op.right:
        return None
    if parent == op.left:
        return where
    if op.kind == "left":
        return None
    return tuple(frozenset(op.left_arity + c for c in p) for p in where)
