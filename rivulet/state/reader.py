"""Reader state: a view's rows indexed by its parameters, ready to hand out.

A read is the hot path of the whole system: a hit must be one dict lookup and nothing
more. So each key keeps its rows as a multiset (cheap to update) *and* a cached, finished
answer (projected, sorted, cut to the LIMIT) that is rebuilt lazily, on the first read
after a write touched the key.

Concurrency: one writer (the propagation worker), many reading threads. A hit takes no
lock: it reads one reference, a complete tuple. Filling the cache and invalidating it
take the reader's lock, and the writer invalidates only *after* changing the rows, so a
reader can never store an answer older than the rows it was built from. Copying a dict
(``list(d.items())``) runs in C without a thread switch, so readers snapshot safely.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Any

from sortedcontainers import SortedKeyList

from rivulet.state.arrangement import (
    Delta,
    Row,
    add_row,
    apply_to_sorted,
    clock_sweep,
    consolidate,
    key_function,
    key_has_null,
)
from rivulet.state.holes import MISSING, Hole
from rivulet.state.sizing import (
    EMPTY_DICT,
    Sample,
    answer_bytes,
    release_if_empty,
    rows_bytes,
    set_bytes,
    shares,
    sorted_list_bytes,
)

Finish = Callable[[list[Row]], tuple[Row, ...]]

_size = sys.getsizeof


class Entry:
    """The rows under one key and their finished answer (``None`` until read).

    ``reads`` counts reads (one increment is all a hit pays for this bookkeeping);
    eviction passes compare it with ``seen``, its value at the previous pass: an entry read
    since then gets a second chance (the CLOCK approximation of least-recently-used)."""

    __slots__ = ("counts", "result", "reads", "seen")

    def __init__(self) -> None:
        self.counts: dict[Row, int] = {}
        self.result: tuple[Row, ...] | None = None
        self.reads = 0
        self.seen = 0

    def expand(self) -> list[Row]:
        out: list[Row] = []
        for row, n in list(self.counts.items()):
            if n == 1:
                out.append(row)
            else:
                out.extend([row] * n)
        return out


class KeyedReader:
    """Rows by equality key.

    Full: absent keys hold no rows. Partial: an absent key is a hole (a read answers
    :data:`MISSING`), filled by an upquery on the first read; updates to holes are dropped,
    and a filled key with no rows keeps an empty entry (a read answers no rows). A view
    without a key is one hole, under the key ``()``.

    Rows whose key has a NULL are not kept: ``col = ?`` is never true for them, whatever
    the parameter, so no read can return them.
    """

    def __init__(self, key_columns: tuple[int, ...], finish: Finish, *,
                 partial: bool = False) -> None:
        self.key_columns = key_columns
        self.key_of = key_function(key_columns)
        self.width = len(key_columns)
        self.finish = finish
        self.partial = partial
        #: The finished answer of a key with no rows: what a full reader answers for a key
        #: it has no entry for (it holds every key with rows).
        self.no_rows = finish([])
        self.entries: dict[Any, Entry] = {}
        self.lock = threading.Lock()
        self.rows = 0
        self.sample = Sample()
        #: Rows applied and answers cached: what grows the state besides keys and rows.
        self.changes = 0
        self.evicted_reads = 0  # reads of entries since evicted (for the hit count)

    def apply(self, deltas: Iterable[Delta]) -> None:
        touched = self._apply_unkeyed(deltas) if not self.width else self._apply_keyed(deltas)
        entries = self.entries
        self.changes += len(touched)
        with self.lock:
            for key, entry in touched.items():
                entry.result = None
                if not entry.counts and not self.partial:
                    del entries[key]

    def _apply_unkeyed(self, deltas: Iterable[Delta]) -> dict[Any, Entry]:
        entry = self.entries.get(())
        if entry is None:
            if self.partial:
                return {}  # the whole view is one hole: the update is dropped
            entry = self.entries[()] = Entry()
        counts, rows = entry.counts, self.rows
        for row, diff in deltas:
            rows += add_row(counts, row, diff)
        self.rows = rows
        return {(): entry}

    def _apply_keyed(self, deltas: Iterable[Delta]) -> dict[Any, Entry]:
        entries, key_of, single = self.entries, self.key_of, self.width == 1
        partial = self.partial
        touched: dict[Any, Entry] = {}
        rows = self.rows
        for row, diff in deltas:
            key = key_of(row)
            entry = touched.get(key)
            if entry is None:
                if (key is None) if single else (None in key):
                    continue  # NULL keys are never read
                entry = entries.get(key)
                if entry is None:
                    if partial:
                        continue  # a hole: the update is dropped
                    entry = entries[key] = Entry()
                touched[key] = entry
            rows += add_row(entry.counts, row, diff)
        self.rows = rows
        return touched

    def get(self, key: Any) -> tuple[Row, ...] | Hole:
        """The finished answer under ``key`` (empty when it has no rows); :data:`MISSING`
        when it is a hole of a partial reader."""
        entry = self.entries.get(key)
        if entry is None:
            return MISSING if self.partial else self.no_rows
        entry.reads += 1
        result = entry.result
        if result is None:
            with self.lock:
                result = entry.result = self.finish(entry.expand())
                self.changes += 1
        return result

    def raw(self, key: Any) -> list[Row] | Hole:
        """Unfinished rows under ``key`` (hidden columns kept), for multi-key reads;
        :data:`MISSING` for a hole."""
        entry = self.entries.get(key)
        if entry is None:
            return MISSING if self.partial else []
        entry.reads += 1
        return entry.expand()

    def all_raw(self) -> list[Row]:
        out: list[Row] = []
        for entry in list(self.entries.values()):
            out.extend(entry.expand())
        return out

    def fill(self, keys: Iterable[Any], deltas: Iterable[Delta]) -> None:
        """Fill the holes ``keys`` from an upquery's answer."""
        entries = self.entries
        fresh: dict[Any, Entry] = {}
        for key in keys:
            if key not in entries:
                fresh[key] = Entry()
        key_of = self.key_of
        rows = self.rows
        for row, diff in deltas:
            entry = fresh.get(key_of(row))
            if entry is not None:
                rows += add_row(entry.counts, row, diff)
        self.rows = rows
        with self.lock:
            entries.update(fresh)

    def missing(self, keys: Iterable[Any]) -> list[Any]:
        if not self.partial:
            return []
        entries = self.entries
        return [k for k in dict.fromkeys(keys) if k not in entries]

    def evict(self, keys: Iterable[Any]) -> int:
        n = 0
        with self.lock:
            for key in keys:
                entry = self.entries.pop(key, None)
                if entry is not None:
                    self.rows -= len(entry.counts)
                    self.evicted_reads += entry.reads
                    n += 1
            release_if_empty(self.entries)
        return n

    def reads(self) -> int:
        """Reads of this state so far (hits and the reads that missed)."""
        return self.evicted_reads + sum(e.reads for e in list(self.entries.values()))

    def recently_used(self, key: Any) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry.reads != entry.seen

    def clock_candidates(self, count: int) -> list[Any]:
        """Up to ``count`` keys to evict, oldest first; keys read since the last pass are
        spared once (moved to the back)."""
        return clock_sweep(self.entries, count, _entry_used)

    def byte_size(self) -> int:
        """The bytes of the entries (rivulet.state.sizing): keys, multisets, rows, and the
        cached answers reads built (projected rows are new tuples; others are shared)."""
        return self.sample.bytes(self.entries, self.rows, self._measure, self.changes)

    def _measure(self, picked: list[Any]) -> tuple[float, float, int]:
        fixed = shares(picked)
        variable, rows = 0.0, 0
        entries = self.entries
        for key in picked:
            entry = entries.get(key)
            if entry is None:
                continue  # (evicted by another thread meanwhile)
            counts = entry.counts
            n = len(counts)
            fixed += ENTRY_BYTES + EMPTY_DICT
            variable += _size(counts) - EMPTY_DICT + rows_bytes(counts, n)
            if entry.result is not None:
                variable += answer_bytes(entry.result)
            rows += n
        return fixed, variable, rows

    def __len__(self) -> int:
        return len(self.entries)


class RangeReader:
    """Rows by equality key, then ordered by one range column (for ``col > ?`` views).

    Partial: an absent key is a hole (a read answers :data:`MISSING`), as in
    ``KeyedReader``; without an equality key the whole view is one hole, under the key
    ``()``.
    """

    def __init__(self, key_columns: tuple[int, ...], range_column: int, *,
                 partial: bool = False) -> None:
        self.key_columns = key_columns
        self.key_of = key_function(key_columns)
        self.width = len(key_columns)
        self.range_column = range_column
        self.partial = partial
        self.entries: dict[Any, SortedKeyList] = {}
        self.used: set[Any] = set()
        self.lock = threading.Lock()
        self.rows = 0
        self.sample = Sample()
        self._reads = 0
        #: One sort key for every list (a function per list would cost ~200 bytes a key).
        self.order_of = itemgetter(range_column)

    def reads(self) -> int:
        return self._reads

    def _new_list(self) -> SortedKeyList:
        return SortedKeyList(key=self.order_of)

    def apply(self, deltas: Iterable[Delta]) -> None:
        with self.lock:
            self._apply(deltas)

    def _apply(self, deltas: Iterable[Delta], only: dict[Any, SortedKeyList] | None = None) -> None:
        col = self.range_column
        target = self.entries if only is None else only
        # A batch may retract a row before it inserts it (a join's -ΔL⋈ΔR correction);
        # a sorted list cannot hold a negative count, so net the batch out first.
        for row, diff in consolidate(deltas):
            if row[col] is None:
                continue  # NULL satisfies no range condition
            key = self.key_of(row)
            if self.width and key_has_null(key, self.width):
                continue
            rows = target.get(key)
            if rows is None:
                if self.partial or only is not None:
                    continue
                rows = target[key] = self._new_list()
            apply_to_sorted(rows, row, diff)
            self.rows += diff
            if not rows and not self.partial:
                del target[key]

    def range(self, key: Any, low: Any, low_inclusive: bool, high: Any,
              high_inclusive: bool) -> list[Row] | Hole:
        """Rows under ``key`` within the bounds; :data:`MISSING` for a hole."""
        with self.lock:
            self._reads += 1
            rows = self.entries.get(key)
            if rows is None:
                return MISSING if self.partial else []
            self.used.add(key)
            return list(rows.irange_key(low, high, inclusive=(low_inclusive, high_inclusive)))

    def all_raw(self) -> list[Row]:
        with self.lock:
            return [row for rows in self.entries.values() for row in rows]

    def fill(self, keys: Iterable[Any], deltas: Iterable[Delta]) -> None:
        with self.lock:
            fresh = {k: self._new_list() for k in keys if k not in self.entries}
            self._apply(deltas, only=fresh)
            self.entries.update(fresh)
            self.used.update(fresh)

    def missing(self, keys: Iterable[Any]) -> list[Any]:
        if not self.partial:
            return []
        return [k for k in dict.fromkeys(keys) if k not in self.entries]

    def evict(self, keys: Iterable[Any]) -> int:
        n = 0
        with self.lock:
            for key in keys:
                rows = self.entries.pop(key, None)
                if rows is not None:
                    self.rows -= len(rows)
                    self.used.discard(key)  # (else the marks of keys gone would pile up)
                    n += 1
            release_if_empty(self.entries, self.used)
        return n

    def recently_used(self, key: Any) -> bool:
        return key in self.used

    def clock_candidates(self, count: int) -> list[Any]:
        with self.lock:
            return clock_sweep(self.entries, count, self.used)

    def byte_size(self) -> int:
        """The bytes of the keys and their sorted lists (rivulet.state.sizing)."""
        return self.sample.bytes(self.entries, self.rows, self._measure) + int(set_bytes(self.used))

    def _measure(self, picked: list[Any]) -> tuple[float, float, int]:
        fixed = shares(picked)
        variable, rows = 0.0, 0
        entries = self.entries
        empty = sorted_list_bytes(self._new_list())[0]
        for key in picked:
            found = entries.get(key)
            if found is None:
                continue
            own, held = sorted_list_bytes(found)
            fixed += empty
            variable += own - empty + held
            rows += len(found)
        return fixed, variable, rows

    def __len__(self) -> int:
        return len(self.entries)


#: Bytes of an :class:`Entry` (its slots; what they hold is measured apart).
ENTRY_BYTES = _size(Entry())


def _entry_used(entries: dict[Any, Entry], key: Any) -> bool:
    entry = entries[key]
    used = entry.reads != entry.seen
    entry.seen = entry.reads
    return used
