"""π: compute each output row from one input row. Linear.

An upquery on output columns that copy input columns becomes an upquery on those input
columns (the builder only routes upqueries through copied columns).

A projection may map different rows to one: an UPDATE of a column it drops arrives as
``-old`` and ``+new`` and leaves as two equal rows of opposite sign. Those cancel here, so
the update stops at the projection (the column pruning of ``rivulet/plan/prune.py`` puts
such projections right above the base tables)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, overload

from rivulet.dataflow.ops.base import Batch, Columns, NodeId, Operator
from rivulet.state.arrangement import (
    DIFF_OF,
    EMPTY,
    ROW_OF,
    Arrangement,
    Delta,
    Row,
    consolidate,
)


class Project(Operator):
    symbol = "π"

    def __init__(self, parent: NodeId, fn: Callable[[tuple], tuple], text: str,
                 sources: tuple[int | None, ...] = ()) -> None:
        super().__init__((parent,))
        self.fn = fn
        self.text = text
        self.sources = sources

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        batch = inputs[self.parents[0]]
        # (the rows and their counts taken apart and zipped in C: a batch of a thousand
        # votes is a thousand calls of ``fn`` and nothing else per row)
        out = list(zip(map(self.fn, map(ROW_OF, batch)), map(DIFF_OF, batch)))
        if len(out) > 1 and min(map(DIFF_OF, batch)) < 0:  # inserts alone cannot cancel
            return consolidate(out)
        return out

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        sources = [self.sources[c] for c in columns]
        traced = tuple(s for s in sources if s is not None)
        if len(traced) != len(sources):
            raise ValueError(f"upquery on computed column(s) {columns} of {self.describe()}")
        rows = self.graph.upquery(self.parents[0], traced, keys)
        return self.on_input({self.parents[0]: rows})

    @property
    def copies(self) -> bool:
        """Whether every output column is a copy of an input column (no computed one)."""
        return bool(self.sources) and None not in self.sources

    def describe(self) -> str:
        return f"π {self.text}"


class ProjectedArrangement:
    """An index of a copying projection's output that is its input's index, read through
    the projection (see ``Graph.index_home``): joins of different column subsets of one
    table share the table's index instead of each keeping one of its own. Holes, fills
    and eviction are the input index's; rows are projected (and equal ones merged) as
    they are read."""

    def __init__(self, inner: Arrangement, fn: Callable[[Row], Row]) -> None:
        self.inner = inner
        self.fn = fn
        self.index = _ProjectedIndex(inner, fn)

    def get(self, key: Any) -> dict[Row, int]:
        return self.index.get(key, EMPTY)

    def rows_of(self, keys: Iterable[Any]) -> list[Delta]:
        fn = self.fn
        return consolidate((fn(row), n) for row, n in self.inner.rows_of(keys))

    def all_rows(self) -> Iterable[Delta]:
        fn = self.fn
        return ((fn(row), n) for row, n in self.inner.all_rows())

    def __getattr__(self, name: str) -> Any:  # columns, partial, missing, fill, evict, ...
        return getattr(self.inner, name)


class _ProjectedIndex:
    """``key -> {projected row: multiplicity}`` over an index of whole rows.

    A join probes the same popular keys of a rarely written table over and over (a
    story's comments, for every read ribbon written), so projected buckets are kept until
    the inner index changes at all (its ``version``), at most ``CACHED_KEYS`` of them:
    a bounded CPU cache, not state (it is not counted, and a cleared one costs nothing
    but the projections)."""

    __slots__ = ("inner", "fn", "cache", "version")

    CACHED_KEYS = 4096

    def __init__(self, inner: Arrangement, fn: Callable[[Row], Row]) -> None:
        self.inner = inner
        self.fn = fn
        self.cache: dict[Any, dict[Row, int]] = {}
        self.version = inner.version

    @overload
    def get(self, key: Any) -> dict[Row, int] | None: ...
    @overload
    def get(self, key: Any, default: dict[Row, int]) -> dict[Row, int]: ...
    def get(self, key: Any, default: dict[Row, int] | None = None) -> dict[Row, int] | None:
        cache = self.cache
        if self.version != self.inner.version or len(cache) >= self.CACHED_KEYS:
            cache.clear()
            self.version = self.inner.version
        found = cache.get(key)
        if found is not None:
            return found
        rows = self.inner.index.get(key)
        if rows is None:
            return default
        found = cache[key] = _projected(rows, self.fn)
        return found


def _projected(rows: dict[Row, int] | None, fn: Callable[[Row], Row]) -> dict[Row, int]:
    """Rows projected, equal ones merged, and those that cancel dropped: after ALTER TABLE
    drops or converts a column no reader of the index reads, a row stored before it and
    its later deletion (which carries the column's new value) differ only there."""
    out: dict[Row, int] = {}
    for row, n in (rows or {}).items():
        row = fn(row)
        out[row] = out.get(row, 0) + n
    if rows and len(out) == len(rows):  # nothing merged, so nothing cancelled
        return out
    return {row: n for row, n in out.items() if n}
