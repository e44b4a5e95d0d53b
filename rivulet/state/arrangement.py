"""Arrangements: a node's output indexed by some of its columns, shared by every reader of it.

As in the shared-arrangements paper, an index over one node's output is built once and
used by every operator that needs that key on that node (a join's lookups into its other
side, a new view's bootstrap), instead of each keeping a private copy. The node's output is
a multiset, so each key maps to ``{row: multiplicity}``.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from typing import Any

from rivulet.state.sizing import (
    EMPTY_DICT,
    Sample,
    release_if_empty,
    rows_bytes,
    set_bytes,
    shares,
)

Row = tuple
Delta = tuple[Row, int]

EMPTY: dict[Row, int] = {}


def key_function(columns: tuple[int, ...]) -> Callable[[Row], Any]:
    """The key of a row: a scalar for one column, a tuple for several, ``()`` for none."""
    if not columns:
        return lambda row: ()
    return itemgetter(*columns)


def add_row(counts: dict[Row, int], row: Row, diff: int) -> int:
    """Add ``diff`` copies of ``row`` to the multiset ``counts`` (remove them, for a negative
    ``diff``; a row whose count reaches zero leaves it). Returns the change in its number
    of distinct rows (1, 0 or -1), which the byte accounting of every state follows. The
    one place a multiset of rows changes: arrangements, readers and batch indexes all
    hold ``{row: multiplicity}`` and must agree on when a row is there."""
    n = counts.get(row, 0) + diff
    if n:
        counts[row] = n
        return 1 if n == diff else 0
    del counts[row]
    return -1


def key_has_null(key: Any, width: int) -> bool:
    """NULL never equals anything, so a key with a NULL component matches nothing."""
    if width == 1:
        return key is None
    return None in key


class Arrangement:
    """``key -> {row: multiplicity}`` over one node's output.

    A *partial* arrangement holds only the keys that were asked for: a key absent from
    ``index`` is a hole, not an empty key, and updates to holes are skipped (whoever asks
    for that key later fills it by an upquery). A key that was filled but has no rows keeps
    an empty bucket. A full arrangement holds every key, and absent means empty.
    """

    __slots__ = ("columns", "key_of", "index", "partial", "rows", "recent", "sample",
                 "version")

    def __init__(self, columns: tuple[int, ...], *, partial: bool = False) -> None:
        self.columns = columns
        self.key_of = key_function(columns)
        self.index: dict[Any, dict[Row, int]] = {}
        self.partial = partial
        self.rows = 0  # distinct rows held, for byte accounting
        self.recent: set[Any] = set()  # keys read since the last eviction pass
        self.sample = Sample()
        self.version = 0  # bumped by every change, so views of the index know to recompute

    def apply(self, deltas: Iterable[Delta]) -> None:
        self.version += 1
        index = self.index
        key_of = self.key_of
        partial = self.partial
        rows = self.rows
        for row, diff in deltas:
            key = key_of(row)
            bucket = index.get(key)
            if bucket is None:
                if partial:
                    continue  # a hole: whoever needs this key fills it by an upquery
                index[key] = {row: diff}
                rows += 1
                continue
            change = add_row(bucket, row, diff)
            rows += change
            if change < 0 and not bucket and not partial:
                del index[key]
        self.rows = rows

    def get(self, key: Any) -> dict[Row, int]:
        """The rows under ``key`` (empty when there are none, or when it is a hole)."""
        return self.index.get(key, EMPTY)

    def missing(self, keys: Iterable[Any]) -> list[Any]:
        """The keys among ``keys`` that are holes (always none for a full arrangement)."""
        if not self.partial:
            return []
        index = self.index
        return [k for k in dict.fromkeys(keys) if k not in index]

    def fill(self, keys: Iterable[Any], deltas: Iterable[Delta], *, read: bool = True) -> None:
        """Fill the holes ``keys`` with an upquery's answer (rows of other keys are ignored).
        ``read=False`` for fills a write needed: they get no second chance from eviction."""
        self.version += 1
        index = self.index
        fresh = {}
        for key in keys:
            if key not in index:
                fresh[key] = index[key] = {}
        key_of = self.key_of
        rows = 0
        for row, diff in deltas:
            bucket = fresh.get(key_of(row))
            if bucket is not None:
                rows += add_row(bucket, row, diff)
        self.rows += rows
        if read:
            self.recent.update(fresh)

    def evict(self, keys: Iterable[Any]) -> int:
        """Turn ``keys`` back into holes; returns how many keys were held."""
        if not self.partial:
            return 0
        self.version += 1
        index = self.index
        recent = self.recent
        n = 0
        for key in keys:
            bucket = index.pop(key, None)
            if bucket is not None:
                self.rows -= len(bucket)
                recent.discard(key)  # (else the marks of keys gone would pile up)
                n += 1
        release_if_empty(index, recent)
        return n

    def rows_of(self, keys: Iterable[Any]) -> list[Delta]:
        out: list[Delta] = []
        index = self.index
        for key in keys:
            bucket = index.get(key)
            if bucket:
                out.extend(bucket.items())
        return out

    def all_rows(self) -> Iterator[Delta]:
        for bucket in self.index.values():
            yield from bucket.items()

    def recently_used(self, key: Any) -> bool:
        return key in self.recent

    def clock_candidates(self, count: int) -> list[Any]:
        return clock_sweep(self.index, count, self.recent)

    def byte_size(self) -> int:
        """The bytes of the index (rivulet.state.sizing): keys, buckets, rows (a row the
        node's other indexes and the reader below hold too is shared among them)."""
        return buckets_bytes(self.sample, self.index, self.rows) + int(set_bytes(self.recent))

    def __len__(self) -> int:
        return self.rows


def buckets_bytes(sample: Sample, index: dict[Any, dict[Any, int]], rows: int) -> int:
    """The bytes of ``key -> {row: multiplicity}`` holding ``rows`` rows in all."""

    def measure(picked: list[Any]) -> tuple[float, float, int]:
        fixed = shares(picked)
        variable, n_rows = 0.0, 0
        for key in picked:
            bucket = index.get(key)
            if bucket is None:
                continue
            n = len(bucket)
            fixed += EMPTY_DICT
            variable += sys.getsizeof(bucket) - EMPTY_DICT + rows_bytes(bucket, n)
            n_rows += n
        return fixed, variable, n_rows

    return sample.bytes(index, rows, measure)


#: A delta's row and its multiplicity, as C functions (for ``map`` over a batch).
ROW_OF: Callable[[Delta], Row] = itemgetter(0)
DIFF_OF: Callable[[Delta], int] = itemgetter(1)


def consolidate(deltas: Iterable[Delta]) -> list[Delta]:
    """Merge equal rows of a batch, dropping those whose multiplicities cancel."""
    net: dict[Row, int] = {}
    for row, diff in deltas:
        net[row] = net.get(row, 0) + diff
    return [(row, n) for row, n in net.items() if n]


def group_by_key(deltas: Iterable[Delta],
                 key_of: Callable[[Row], Any]) -> dict[Any, dict[Row, int]]:
    """A batch indexed like an arrangement (used to subtract a batch from new state)."""
    out: dict[Any, dict[Row, int]] = {}
    for row, diff in deltas:
        add_row(out.setdefault(key_of(row), {}), row, diff)
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


def clock_sweep(index: dict[Any, Any], count: int, used: Any) -> list[Any]:
    """The CLOCK eviction sweep over a dict (insertion order is the clock's hand).

    Takes keys from the front; a key marked used is unmarked and moved to the back instead
    of being chosen. ``used`` is a set of marked keys or a function ``(index, key) -> bool``
    that reads and clears the mark."""
    chosen: dict[Any, None] = {}
    for _ in range(2):  # a second round finds the keys the first one unmarked
        for key in list(itertools.islice(index, 4 * count + len(chosen))):
            if key in chosen:
                continue  # chosen by the first round (still held until evicted)
            if callable(used):
                marked = used(index, key)
            else:
                marked = key in used
                used.discard(key)
            if marked:
                index[key] = index.pop(key)
            else:
                chosen[key] = None
                if len(chosen) == count:
                    return list(chosen)
        if not index:
            break
    return list(chosen)
