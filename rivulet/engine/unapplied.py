"""Committed write batches the dataflow graph has not applied yet.

Storage runs ahead of the graph: a batch is durable (and visible to a SQLite lookup) before
the propagation worker has pushed it through the dataflow. An upquery that reads a base
table from storage takes the answer back to the graph's LSN by subtracting the deltas of
the batches in between (see :mod:`rivulet.engine.database`).

Under load the graph may trail storage by hundreds of batches, and almost every upquery
reads a table that few of them touched. Indexing the batches by base node makes the
subtraction cost what that table's own unapplied deltas cost, not one step per batch.

Three threads meet here: committers ``add`` (before their SQLite COMMIT), the propagation
worker ``discard``s, and upqueries read ``since``; the last two both hold the graph lock.
Every operation is a single C-level dict step or a copy of a dict's items, atomic under the
GIL, so readers never see a dict change size while they iterate it.
"""

from __future__ import annotations

from typing import Any

NodeId = int
Deltas = list[tuple[Any, int]]


class UnappliedBatches:
    """The deltas of each unapplied batch, by LSN and by base node."""

    def __init__(self) -> None:
        self._by_lsn: dict[int, dict[NodeId, Deltas]] = {}
        self._by_base: dict[NodeId, dict[int, Deltas]] = {}

    def add(self, lsn: int, deltas: dict[NodeId, Deltas]) -> None:
        for base, batch in deltas.items():
            self._by_base.setdefault(base, {})[lsn] = batch
        self._by_lsn[lsn] = deltas

    def discard(self, lsn: int) -> None:
        """Forget batch ``lsn`` (applied, or its commit failed); absent is fine."""
        deltas = self._by_lsn.pop(lsn, None)
        for base in deltas or ():
            self._by_base[base].pop(lsn, None)

    def since(self, base: NodeId, after: int, upto: int) -> list[Deltas]:
        """``base``'s deltas of the batches with ``after < lsn <= upto``, in LSN order."""
        batches = self._by_base.get(base)
        if not batches:
            return []
        # Committers add in LSN order (under the commit lock), so insertion order is LSN order.
        return [batch for lsn, batch in list(batches.items()) if after < lsn <= upto]

    def __len__(self) -> int:
        return len(self._by_lsn)

    def __contains__(self, lsn: object) -> bool:
        return lsn in self._by_lsn
