"""↑k: the first k rows of each group in a given order, kept up to date under deletes.

Full state keeps, per group, only a *prefix* of the group's rows in order: at most
``bound`` rows (about 2k). Cutting a group fixes its *boundary*, the sort key of the last
row kept: the prefix then holds every row of the group that sorts at or before it (copies
of the boundary row aside: some of them may lie beyond). A row sorting after the boundary
is not kept; one sorting before it is, also when it replaces a row the prefix lost (a
vote for the story at the boundary moves it up, and it stays in). A delete that leaves
fewer than k rows in a cut prefix makes the group ask its parent for all its rows again
(an upquery by the group key, or the parent's whole output for a global top-k), which
happens only after about k net deletes from the top. So a front page over a million
stories holds sixty rows, not a million. Partial state holds whole groups (they are small,
and a group's rows come back with the upquery that fills it).

Per batch, the top of every touched group is compared before and after, and only the
difference is emitted. Ties in the ORDER BY are broken by the whole row, so the order is
total and the prefix well defined. With ``partial``, only the groups under keys asked for
by upqueries are held (the key must name whole groups).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from sortedcontainers import SortedKeyList

from rivulet.dataflow.ops.base import Batch, Columns, NodeId, StatefulOperator
from rivulet.state.arrangement import (
    Delta,
    Row,
    apply_to_sorted,
    consolidate,
    key_function,
)
from rivulet.state.groups import KeyedGroups
from rivulet.state.sizing import EMPTY_DICT, Sample, dict_bytes, shares, sorted_list_bytes

#: The boundary of a group that is held whole (not cut).
_WHOLE = object()


class TopK(StatefulOperator):
    symbol = "↑"

    def __init__(
        self, parent: NodeId, group_by: tuple[int, ...], sort_key: Callable[[Row], Any], k: int,
        text: str = "", partial: Columns | None = None, bound: int | None = None,
        refill_by_key: bool = False, skip: int = 0,
    ) -> None:
        super().__init__((parent,))
        self.group_by = group_by
        self.key_of = key_function(group_by)
        self.sort_key = sort_key
        self.k = k
        #: The rows passed on are the group's ``skip``-th to ``k``-th (a LIMIT's OFFSET
        #: inside another query; a view's reader skips its own OFFSET).
        self.skip = skip
        positions = None if partial is None else tuple(group_by.index(c) for c in partial)
        self.partial_columns = partial
        self.state: KeyedGroups[SortedKeyList] = KeyedGroups(len(group_by), positions)
        self.groups = self.state.groups
        self.text = text
        #: Rows kept per group at most (``None``: all); groups cut to it are ``truncated``,
        #: each with its boundary: the sort key of the last row kept when it was cut.
        self.bound = None if bound is None else max(bound, k)
        self.truncated: dict[Any, Any] = {}
        #: Whether a cut group is refilled by an upquery on the group key (else by
        #: filtering the parent's whole output).
        self.refill_by_key = refill_by_key
        self.refills = 0
        self.rows = 0
        self.sample = Sample()

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        return self._apply(inputs[self.parents[0]])

    def _apply(self, deltas: Batch) -> Batch:
        groups, key_of, k, skip, state = self.groups, self.key_of, self.k, self.skip, self.state
        if not k:
            return []  # a top-0 (LIMIT 0) is empty whatever its input: it holds nothing
        before: dict[Any, list[Row]] = {}
        for row, diff in consolidate(deltas):
            key = key_of(row)
            rows = groups.get(key)
            if rows is None:
                if not state.holds(key):
                    continue  # a hole: nobody below holds this group either
                rows = SortedKeyList(key=self.sort_key)
                state.add(key, rows)
            if key not in before:
                before[key] = list(rows.islice(skip, k))
            boundary = self.truncated.get(key, _WHOLE)
            if boundary is not _WHOLE:
                self._apply_to_prefix(rows, row, diff, boundary)
            else:
                apply_to_sorted(rows, row, diff)
                self.rows += diff
        out: Batch = []
        for key, old in before.items():
            rows = self._bounded(key) if self.bound is not None else groups[key]
            new = list(rows.islice(skip, k))
            if not rows and key not in self.truncated:
                # Only a whole group that is empty goes. An empty cut prefix does not say
                # the group is: its other rows were never held, and forgetting the cut
                # would apply their deletes to a whole, empty group. (With k > 0 a cut
                # prefix that empties is refilled above; a top-0 held nothing anyway.)
                state.remove(key)
            if old == new:
                continue
            change = Counter(new)
            change.subtract(old)
            out.extend((row, n) for row, n in change.items() if n)
        return out

    def _apply_to_prefix(self, rows: SortedKeyList, row: Row, diff: int, boundary: Any) -> None:
        """Apply a change to a cut group, which holds the first rows of the group only:
        a row sorting after its boundary is outside the prefix."""
        inside = self.sort_key(row) <= boundary
        if diff > 0:
            if inside:
                apply_to_sorted(rows, row, diff)
                self.rows += diff
            return
        # Copies of the prefix's last row may also lie beyond it: remove those held.
        held = min(-diff, rows.count(row)) if inside else 0
        apply_to_sorted(rows, row, -held)
        self.rows -= held

    def _bounded(self, key: Any) -> SortedKeyList:
        """The group after a batch: refilled if its cut prefix no longer holds k rows,
        cut if it holds more than ``bound``."""
        rows = self.groups[key]
        if key in self.truncated and len(rows) < self.k:
            rows = self._refill(key)
        bound = self.bound
        assert bound is not None  # (a top-k without a bound keeps every row)
        if len(rows) > bound:
            self.rows -= len(rows) - bound
            del rows[bound:]
            self.truncated[key] = self.sort_key(rows[-1])
        return rows

    def _refill(self, key: Any) -> SortedKeyList:
        """All of the group's rows, from the parent as it is now (after this batch)."""
        self.refills += 1
        parent = self.parents[0]
        if self.refill_by_key:
            deltas = self.graph.upquery(parent, self.group_by, [key])
        else:
            key_of = self.key_of
            deltas = [d for d in self.graph.full_output(parent) if key_of(d[0]) == key]
        old = self.groups[key]
        rows = SortedKeyList(key=self.sort_key)
        for row, n in consolidate(deltas):
            apply_to_sorted(rows, row, n)
        self.rows += len(rows) - len(old)
        self.state.add(key, rows)
        self.truncated.pop(key, None)
        return rows

    # ..................................................................... upqueries

    @property
    def group_columns(self) -> Columns | None:
        return self.group_by or None

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        self.hold(columns, keys, columns, self._apply)
        state = self.state
        out: Batch = []
        for key in keys:
            for gk in state.group_keys(key):
                out.extend((row, 1) for row in self.groups[gk].islice(self.skip, self.k))
        return out

    def snapshot(self) -> Iterable[Delta] | None:
        if self.partial:
            return None
        return [(row, 1) for rows in self.groups.values() for row in rows.islice(self.skip, self.k)]

    def evict(self, keys: Iterable[Any]) -> int:
        held = [pk for pk in dict.fromkeys(keys) if pk in self.state.filled]
        for pk in held:
            for gk in self.state.group_keys(pk):
                self.rows -= len(self.groups[gk])
                self.truncated.pop(gk, None)
        return self.state.evict(held)

    def byte_size(self) -> int:
        """The bytes of the groups' sorted lists with their rows and sort keys
        (rivulet.state.sizing), and the partial keys' bookkeeping."""
        groups = self.groups

        def measure(picked: list[Any]) -> tuple[float, float, int]:
            fixed = shares(picked)
            variable, rows = 0.0, 0
            empty = sorted_list_bytes(SortedKeyList(key=self.sort_key))[0]
            for key in picked:
                found = groups.get(key)
                if found is not None:
                    own, held = sorted_list_bytes(found)
                    fixed += empty
                    variable += own - empty + held
                    rows += len(found)
            return fixed, variable, rows

        return (self.sample.bytes(groups, self.rows, measure) + int(dict_bytes(self.truncated))
                - EMPTY_DICT + self.state.byte_size())

    def describe(self) -> str:
        return f"↑{self.k} {self.text}"
