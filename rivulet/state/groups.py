"""The state of a stateful operator: groups by group key, held whole or only for some keys.

Aggregates, top-k and distinct keep one value per *group* (accumulators, a sorted list of
rows, a count). When partial, they hold only the groups under the *partial keys* that
upqueries asked for: a partial key is the group key itself, or some of its columns (a view
keyed by ``story_id`` over ``GROUP BY story_id, title`` holds whole stories). ``filled``
records which partial keys are held, including those with no group at all: an update to a
group whose partial key is not filled is dropped, one to a filled key is applied even if it
creates the group.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from rivulet.state.arrangement import buckets_bytes, clock_sweep, key_function
from rivulet.state.sizing import (
    EMPTY_DICT,
    Sample,
    release_if_empty,
    rows_bytes,
    set_bytes,
    shares,
)

G = TypeVar("G")


class KeyedGroups(Generic[G]):
    def __init__(self, group_width: int, partial_positions: tuple[int, ...] | None, *,
                 rows_as_keys: bool = False) -> None:
        self.groups: dict[Any, G] = {}
        self.partial = partial_positions is not None
        self.filled: dict[Any, None] = {}  # ordered: the eviction clock runs over it
        self.recent: set[Any] = set()
        # With ``rows_as_keys`` a group key is a whole row (a tuple even of one column),
        # while partial keys are scalars for one column, as everywhere else.
        identity = partial_positions == tuple(range(group_width)) and not rows_as_keys
        self.identity = identity or not self.partial
        #: Partial key of a group key (its value in the group key's positions).
        self.partial_key: Callable[[Any], Any] = (
            (lambda gk: gk) if self.identity
            else key_function(partial_positions) if rows_as_keys  # type: ignore[arg-type]
            else _positions_of(partial_positions, group_width)  # type: ignore[arg-type]
        )
        self.members: dict[Any, set[Any]] = {}  # partial key -> its group keys, if not identity
        self.sample = Sample()

    def holds(self, group_key: Any) -> bool:
        """Whether updates to this group are applied (always, for full state)."""
        if not self.partial:
            return True
        return self.partial_key(group_key) in self.filled

    def add(self, group_key: Any, group: G) -> None:
        self.groups[group_key] = group
        if not self.identity:
            self.members.setdefault(self.partial_key(group_key), set()).add(group_key)

    def remove(self, group_key: Any) -> None:
        del self.groups[group_key]
        if not self.identity:
            pk = self.partial_key(group_key)
            members = self.members.get(pk)
            if members is not None:
                members.discard(group_key)
                if not members:
                    del self.members[pk]

    def group_keys(self, partial_key: Any) -> Iterable[Any]:
        if self.identity:
            return (partial_key,) if partial_key in self.groups else ()
        return tuple(self.members.get(partial_key, ()))

    # ..................................................................... partial keys

    def missing(self, keys: Iterable[Any]) -> list[Any]:
        if not self.partial:
            return []
        filled = self.filled
        return [k for k in dict.fromkeys(keys) if k not in filled]

    def mark_filled(self, keys: Iterable[Any]) -> None:
        for key in keys:
            self.filled[key] = None
        self.recent.update(keys)

    def evict(self, keys: Iterable[Any]) -> int:
        n = 0
        for pk in keys:
            if pk not in self.filled:
                continue
            del self.filled[pk]
            self.recent.discard(pk)  # (else the marks of keys gone would pile up)
            n += 1
            for gk in self.group_keys(pk):
                self.remove(gk)
        release_if_empty(self.filled, self.groups, self.members, self.recent)
        return n

    def recently_used(self, key: Any) -> bool:
        return key in self.recent

    def clock_candidates(self, count: int, used_below: Callable[[Any], bool]) -> list[Any]:
        """Keys to evict: neither read through this state nor used by a state below since
        the last pass."""
        recent = self.recent

        def used(index: dict[Any, None], key: Any) -> bool:
            marked = key in recent or used_below(key)
            recent.discard(key)
            return marked

        return clock_sweep(self.filled, count, used)

    def byte_size(self) -> int:
        """The bytes of the bookkeeping of partial keys (filled keys, their groups, the
        clock's marks); the groups themselves are the operator's to measure."""
        if not self.partial:
            return 0
        members = self.members

        def measure(picked: list[Any]) -> tuple[float, float, int]:
            variable, n = 0.0, 0
            for key in picked:
                found = members.get(key)
                if found:
                    variable += sys.getsizeof(found) + rows_bytes(found, len(found))
                    n += 1
            return shares(picked), variable, n

        return (self.sample.bytes(self.filled, len(members), measure)
                + sys.getsizeof(members) - EMPTY_DICT + int(set_bytes(self.recent)))

    def __len__(self) -> int:
        return len(self.groups)


def _positions_of(positions: tuple[int, ...], width: int) -> Callable[[Any], Any]:
    if width == 1:
        return lambda gk: gk
    return key_function(positions)


class GroupIndex:
    """A full stateful node's groups by some of their key's columns, for upqueries on them.

    A view keyed by ``story_id`` over a full ``GROUP BY story_id, title`` asks the aggregate
    for groups by a part of their key. Copying every output row into an index would double
    the aggregate's memory; this index keeps only which groups each key has, and the rows
    are made by the operator itself (``answer``) when asked. Counts per group are kept
    because a group may output several rows (a top-k's).
    """

    partial = False

    def __init__(self, columns: tuple[int, ...], group_columns: tuple[int, ...],
                 answer: Callable[[list[Any]], list]) -> None:
        self.columns = columns
        self.key_of = key_function(columns)
        self.group_of = key_function(group_columns)
        self.answer = answer
        self.members: dict[Any, dict[Any, int]] = {}
        self.groups = 0  # entries over all keys, for byte_size in O(1)
        self.sample = Sample()

    def apply(self, deltas: Iterable[tuple[tuple, int]]) -> None:
        members, key_of, group_of = self.members, self.key_of, self.group_of
        for row, diff in deltas:
            key = key_of(row)
            groups = members.get(key)
            if groups is None:
                groups = members[key] = {}
            gk = group_of(row)
            old = groups.get(gk, 0)
            n = old + diff
            if n:
                groups[gk] = n
                self.groups += not old
            else:
                del groups[gk]
                self.groups -= 1
                if not groups:
                    del members[key]

    def rows_of(self, keys: Iterable[Any]) -> list:
        groups = [gk for key in keys for gk in self.members.get(key, ())]
        return self.answer(groups) if groups else []

    def all_rows(self) -> list:
        return self.answer([gk for groups in self.members.values() for gk in groups])

    def byte_size(self) -> int:
        return buckets_bytes(self.sample, self.members, self.groups)

    def evict(self, keys: Iterable[Any]) -> int:
        return 0  # full state: nothing to evict (the graph evicts partial state only)

    def recently_used(self, key: Any) -> bool:
        return False

