"""Arrangements: a node's output indexed by some of its columns, shared by every reader of it.

As in the shared-arrangements paper, an index over one node's output is built once and
used by every operator that needs that key on that node (a join's lookups into its other
side, a new view's bootstrap), instead of each keeping a private copy. The node's output is
a multiset, so each key maps to ``{row: multiplicity}``.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator

Row = tuple
Delta = tuple[Row, int]

EMPTY: dict[Row, int] = {}


def key_function(columns: tuple[int, ...]) -> Callable[[Row], Any]:
    """The key of a row: a scalar for one column, a tuple for several, ``()`` for none."""
    if not columns:
        return lambda row: ()
    return itemgetter(*columns)


def key_has_null(key: Any, width: int) -> bool:
    """NULL never equals anything, so a key with a NULL component matches nothing."""
    if width == 1:
        return key is None
    return None in key


class Arrangement:
    """``key -> {row: multiplicity}`` over one node's output."""

    __slots__ = ("columns", "key_of", "index")

    def __init__(self, columns: tuple[int, ...]) -> None:
        self.columns = columns
        self.key_of = key_function(columns)
        self.index: dict[Any, dict[Row, int]] = {}

    def apply(self, deltas: Iterable[Delta]) -> None:
        index = self.index
        key_of = self.key_of
        for row, diff in deltas:
            key = key_of(row)
            bucket = index.get(key)
            if bucket is None:
                index[key] = {row: diff}
                continue
            n = bucket.get(row, 0) + diff
            if n:
                bucket[row] = n
            else:
                del bucket[row]
                if not bucket:
                    del index[key]

    def get(self, key: Any) -> dict[Row, int]:
        """The rows under ``key`` (empty when there are none)."""
        return self.index.get(key, EMPTY)

    def rows(self) -> Iterator[Delta]:
        for bucket in self.index.values():
            yield from bucket.items()

    def __len__(self) -> int:
        return sum(len(b) for b in self.index.values())


def consolidate(deltas: Iterable[Delta]) -> list[Delta]:
    """Merge equal rows of a batch, dropping those whose multiplicities cancel."""
    net: dict[Row, int] = {}
    for row, diff in deltas:
        net[row] = net.get(row, 0) + diff
    return [(row, n) for row, n in net.items() if n]


def group_by_key(deltas: Iterable[Delta], key_of: Callable[[Row], Any]) -> dict[Any, dict[Row, int]]:
    """A batch indexed like an arrangement (used to subtract a batch from new state)."""
    out: dict[Any, dict[Row, int]] = {}
    for row, diff in deltas:
        bucket = out.setdefault(key_of(row), {})
        n = bucket.get(row, 0) + diff
        if n:
            bucket[row] = n
        else:
            del bucket[row]
    return out


def subtract(rows: dict[Row, int], delta: dict[Row, int]) -> dict[Row, int]:
    """``rows - delta`` as multisets: the state before a batch, from the state after it."""
    if not delta:
        return rows
    out = dict(rows)
    for row, n in delta.items():
        m = out.get(row, 0) - n
        if m:
            out[row] = m
        else:
            out.pop(row, None)
    return out


def apply_to_sorted(rows: Any, row: Row, diff: int) -> None:
    """Add (or, for a negative ``diff``, remove) ``row`` ``|diff|`` times in a sorted list,
    the multiset of operators that need their rows in order (top-k, range readers)."""
    if diff > 0:
        for _ in range(diff):
            rows.add(row)
    else:
        for _ in range(-diff):
            rows.remove(row)
