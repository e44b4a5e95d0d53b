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

import threading
from typing import Any, Callable, Iterable

from sortedcontainers import SortedKeyList

from rivulet.state.arrangement import (
    Delta,
    Row,
    apply_to_sorted,
    consolidate,
    key_function,
    key_has_null,
)

Finish = Callable[[list[Row]], tuple[Row, ...]]


class Entry:
    """The rows under one key and their finished answer (``None`` until read)."""

    __slots__ = ("counts", "result")

    def __init__(self) -> None:
        self.counts: dict[Row, int] = {}
        self.result: tuple[Row, ...] | None = None

    def expand(self) -> list[Row]:
        out: list[Row] = []
        for row, n in list(self.counts.items()):
            if n == 1:
                out.append(row)
            else:
                out.extend([row] * n)
        return out


class KeyedReader:
    """Rows by equality key; absent keys hold no rows (full state).

    Rows whose key has a NULL are not kept: ``col = ?`` is never true for them, whatever
    the parameter, so no read can return them.
    """

    def __init__(self, key_columns: tuple[int, ...], finish: Finish) -> None:
        self.key_of = key_function(key_columns)
        self.width = len(key_columns)
        self.finish = finish
        self.entries: dict[Any, Entry] = {}
        self.lock = threading.Lock()

    def apply(self, deltas: Iterable[Delta]) -> None:
        touched = self._apply_unkeyed(deltas) if not self.width else self._apply_keyed(deltas)
        entries = self.entries
        with self.lock:
            for key, entry in touched.items():
                entry.result = None
                if not entry.counts:
                    del entries[key]

    def _apply_unkeyed(self, deltas: Iterable[Delta]) -> dict[Any, Entry]:
        entry = self.entries.get(())
        if entry is None:
            entry = self.entries[()] = Entry()
        counts = entry.counts
        for row, diff in deltas:
            n = counts.get(row, 0) + diff
            if n:
                counts[row] = n
            else:
                del counts[row]
        return {(): entry}

    def _apply_keyed(self, deltas: Iterable[Delta]) -> dict[Any, Entry]:
        entries, key_of, single = self.entries, self.key_of, self.width == 1
        touched: dict[Any, Entry] = {}
        for row, diff in deltas:
            key = key_of(row)
            if (key is None) if single else (None in key):
                continue  # NULL keys are never read
            entry = touched.get(key)
            if entry is None:
                entry = entries.get(key)
                if entry is None:
                    entry = entries[key] = Entry()
                touched[key] = entry
            counts = entry.counts
            n = counts.get(row, 0) + diff
            if n:
                counts[row] = n
            else:
                del counts[row]
        return touched

    def get(self, key: Any) -> tuple[Row, ...] | None:
        """The finished answer under ``key``; ``None`` when no row has that key."""
        entry = self.entries.get(key)
        if entry is None:
            return None
        result = entry.result
        if result is None:
            with self.lock:
                result = entry.result = self.finish(entry.expand())
        return result

    def raw(self, key: Any) -> list[Row]:
        """Unfinished rows under ``key`` (hidden columns kept), for multi-key reads."""
        entry = self.entries.get(key)
        return entry.expand() if entry is not None else []

    def all_raw(self) -> list[Row]:
        out: list[Row] = []
        for entry in self.entries.values():
            out.extend(entry.expand())
        return out

    def __len__(self) -> int:
        return len(self.entries)


class RangeReader:
    """Rows by equality key, then ordered by one range column (for ``col > ?`` views)."""

    def __init__(self, key_columns: tuple[int, ...], range_column: int) -> None:
        self.key_of = key_function(key_columns)
        self.width = len(key_columns)
        self.range_column = range_column
        self.entries: dict[Any, SortedKeyList] = {}
        self.lock = threading.Lock()

    def apply(self, deltas: Iterable[Delta]) -> None:
        with self.lock:
            self._apply(deltas)

    def _apply(self, deltas: Iterable[Delta]) -> None:
        col = self.range_column
        # A batch may retract a row before it inserts it (a join's -ΔL⋈ΔR correction);
        # a sorted list cannot hold a negative count, so net the batch out first.
        for row, diff in consolidate(deltas):
            if row[col] is None:
                continue  # NULL satisfies no range condition
            key = self.key_of(row)
            if self.width and key_has_null(key, self.width):
                continue
            rows = self.entries.get(key)
            if rows is None:
                rows = self.entries[key] = SortedKeyList(key=lambda r, c=col: r[c])
            apply_to_sorted(rows, row, diff)
            if not rows:
                del self.entries[key]

    def range(self, key: Any, low: Any, low_inclusive: bool, high: Any,
              high_inclusive: bool) -> list[Row]:
        with self.lock:
            rows = self.entries.get(key)
            if rows is None:
                return []
            return list(rows.irange_key(low, high, inclusive=(low_inclusive, high_inclusive)))

    def all_raw(self) -> list[Row]:
        with self.lock:
            return [row for rows in self.entries.values() for row in rows]

    def __len__(self) -> int:
        return len(self.entries)
