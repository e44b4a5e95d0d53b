"""Read handles on views: parameters in, finished rows out, straight from reader state.

``lookup`` is the hot path. For the common shape (one equality parameter) it is a dict
lookup and a cached tuple; everything else (several keys, IN lists, ranges, keys of the
wrong Python type) takes the general path.

A parameter finds the rows MySQL's comparison with the same literal finds: its value is
mapped to the stored values it equals (rivulet/plan/params.py, ``KeyLookup``). A value
that may equal many stored values (``varchar_col = 1`` finds '1' and '01') cannot be looked
up: that read is computed whole with the value as a constant (rivulet/plan/bound.py).

A view of ``a = ? OR b = ?`` on different columns reads each term's key and keeps each
row once, through the first term it matches (rivulet/plan/alternatives.py).

A partial view misses on keys it does not hold: the read then fills them by an upquery
(all the keys of one ``lookup_many`` or ``IN`` list in one batch) and answers, or, with
``block=False``, returns :data:`NOT_READY` at once and fills them in the background.
"""

from __future__ import annotations

import enum
import functools
import operator
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from typing import Any

from rivulet import values as F
from rivulet.dataflow.builder import BuiltView, sort_key_function
from rivulet.dataflow.compile import chain_function
from rivulet.dataflow.ops.base import Base
from rivulet.dataflow.ops.filter import Filter
from rivulet.dataflow.ops.project import Project
from rivulet.dataflow.ops.reader import Reader
from rivulet.engine.upquery import BUSY, Upqueries
from rivulet.errors import ClosedError, ParameterCountError, ParameterError, RivuletError
from rivulet.plan import ir
from rivulet.plan.alternatives import AlternativeLookup
from rivulet.plan.bound import bound_plan
from rivulet.plan.params import (
    KeyLookup,
    any_compared_as_doubles,
    compared_as_doubles,
    exact_types,
    key_members,
    key_value,
    other_range_bounds,
    range_bounds,
    values_by_param,
)
from rivulet.state.holes import MISSING, Hole
from rivulet.state.reader import KeyedReader, RangeReader
from rivulet.values.enumerations import plain
from rivulet.values.matching import Unkeyed, range_bound
from rivulet.values.schema import STR, Column, Kind, SchemaError, coerce_value

Row = tuple

class _NotReady:
    """The answer of a non-blocking read that missed: the rows are being computed."""

    _instance: _NotReady | None = None

    def __new__(cls) -> _NotReady:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "rivulet.NOT_READY"


#: Returned by ``lookup(..., block=False)`` when the answer is not in memory yet.
NOT_READY = _NotReady()


class Nowait(enum.Enum):
    """The reads of a server's event loop, beside ``block=False`` (a miss answers
    :data:`NOT_READY` and is filled in the background): both fill a miss at once when the
    fill is a storage lookup and the dataflow is free, and never wait."""

    #: :meth:`View.lookup_nowait`: any other miss as with ``block=False``.
    FILL_OR_BACKGROUND = "fill or background"
    #: :meth:`View.probe`: any other miss answers :data:`NOT_READY` and starts nothing.
    FILL_OR_NOTHING = "fill or nothing"


#: How a read waits for a miss: ``True`` until it is filled, ``False`` not at all (it is
#: filled in the background), or a :class:`Nowait`.
Block = bool | Nowait

_LOWER = {">": False, ">=": True}
_UPPER = {"<": False, "<=": True}
_CHECK = {">": F.gt, ">=": F.ge, "<": F.lt, "<=": F.le}


def _as_doubles(compare: Any) -> Any:
    """``compare`` of its two operands read as DOUBLEs."""
    return lambda a, b: compare(F.cast_float(a), F.cast_float(b))


_CHECK_AS_DOUBLES = {op: _as_doubles(compare) for op, compare in _CHECK.items()}


#: A bound's operator as Python compares a stored value with a bound placed among the
#: column's values (:func:`~rivulet.values.matching.range_bound`), as a sorted list's cut
#: does.
_PLACED = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def _other_range_tests(plan: ir.ViewPlan, values: dict[Any, Any]
                       ) -> list[tuple[int, list[Callable[[Any], Any]]]] | None:
    """Per column of the view's :attr:`~rivulet.plan.ir.ViewPlan.other_ranges`, a test of
    a (non-NULL) value per bound, comparing as the first range column's bounds compare
    (:meth:`View._read_range`): each bound placed among the column's values where it can
    be, else (and ``BETWEEN`` of text and a number, compared as DOUBLEs) compared as
    MySQL compares the two. None where a bound is NULL: no row is in range."""
    out: list[tuple[int, list[Callable[[Any], Any]]]] = []
    for other, given in other_range_bounds(plan, values):
        if any(v is None for v in given):
            return None
        kind = plan.root.columns[other.column].kind
        as_doubles = compared_as_doubles(plan, kind, values, other.bounds)
        tests: list[Callable[[Any], Any]] = []
        for bound, v in zip(other.bounds, given):
            placed = Unkeyed.SCAN if as_doubles and bound.between else range_bound(kind, v)
            if placed is not Unkeyed.SCAN:
                tests.append(functools.partial(_placed_test, _PLACED[bound.op], placed))
            else:
                check = (_CHECK_AS_DOUBLES if as_doubles and bound.between else _CHECK)[bound.op]
                tests.append(functools.partial(_checked_test, check, v))
        out.append((other.column, tests))
    return out


def _placed_test(compare: Callable[[Any, Any], bool], bound: Any, value: Any) -> bool:
    return compare(value, bound)


def _checked_test(check: Callable[[Any, Any], Any], bound: Any, value: Any) -> Any:
    return check(value, bound)


def _in_other_ranges(rows: list[Row],
                     tests: list[tuple[int, list[Callable[[Any], Any]]]]) -> list[Row]:
    """The rows whose value in each column of ``tests`` is not NULL and passes its tests."""
    for column, column_tests in tests:
        rows = [r for r in rows if (v := r[column]) is not None
                and all(test(v) for test in column_tests)]
    return rows


class View:
    """A view of the program, read by its ``?`` parameters."""

    def __init__(self, upqueries: Upqueries, built: BuiltView) -> None:
        self._upqueries = upqueries
        self._built = built
        plan = built.plan
        self.name = plan.name
        self.columns: tuple[str, ...] = plan.column_names
        self.plan = plan
        self._state = built.state
        self._entries = built.state.entries  # the hot path reads the reader's dict directly
        self._finish = built.finish
        self._default = built.default_rows
        #: The kinds of the key columns (their stored values are what a read looks up).
        self._key_kinds = [plan.root.columns[i].kind for i in plan.key]
        #: An ENUM key column's members (a number finds the member at its position), else ().
        self._key_members = key_members(plan)
        self._key_lookup = KeyLookup.of(plan)
        #: ``a = ? OR b = ?``: the reader keys of each term's alternative, and which of
        #: their rows a read keeps (rivulet/plan/alternatives.py).
        self._alternatives = (AlternativeLookup.of(plan) if plan.alternatives is not None
                              else None)
        #: Where the reader is keyed by part of the plan's key (``BuiltView.listed``):
        #: the position of the rest in the key and its column. A read keeps the rows whose
        #: value in the column it asks for.
        self._listed = built.listed
        self._listed_column: int | None = None if built.listed is None else plan.key[built.listed]
        self._reader_kinds = [k for i, k in enumerate(self._key_kinds) if i != built.listed]
        self._reader_members = [m for i, m in enumerate(self._key_members) if i != built.listed]
        #: For a one-column key, the Python types of values the reader's dict may be asked
        #: for as they are (a value of another type goes through ``KeyLookup``).
        self._exact = exact_types(self._key_kinds[0]) if len(plan.key) == 1 else frozenset()
        self._single = (len(plan.key) == 1 and plan.range_column is None and not plan.in_list
                        and not plan.bounds_keyed)
        self._simple = self._single and plan.param_count == 1 and plan.key_params == (0,)
        self._unparameterized = plan.param_count == 0
        #: Whether the answer of several keys is each key's answer, one after the other
        #: (no order, cut or DISTINCT across them, no implicit group's default row): a
        #: read of several keys then takes each key's cached answer as it is.
        self._concatenated = (not plan.order and plan.limit is None and not plan.offset
                              and not plan.distinct_on_read and self._default is None
                              and plan.alternatives is None
                              and isinstance(built.state, KeyedReader))
        #: Whether a miss is filled by reading base tables through filters and projections
        #: alone (an index lookup in storage): :meth:`lookup_nowait` fills such a miss at
        #: once instead of in the background.
        graph = upqueries.core.graph
        self._fills_inline = built.state.partial and bool(built.nodes) and all(
            isinstance(graph.nodes[n].op, _INLINE_OPS) for n in built.nodes if n in graph.nodes)
        #: ``WHERE col IN (?, ...)`` and nothing else: every parameter is one key.
        self._list_only = (self._concatenated and bool(plan.in_list) and len(plan.key) == 1
                           and plan.param_count == len(plan.in_list))
        self._closed = False

    @property
    def built(self) -> BuiltView:
        """The view's dataflow: its plan, reader state and nodes."""
        return self._built

    def use_default_rows(self, defaults: Any) -> None:
        """Answer keys without a group with ``defaults`` (an implicit group's default row,
        known only once a streamed view's stream has started)."""
        self._built.default_rows = defaults
        self._default = defaults

    def _close(self) -> None:
        """Called when the database closes: every read now fails with ClosedError."""
        self._closed = True
        self._entries = {}

    # ..................................................................... reads

    def lookup(self, *params: Any, block: Block = True, timeout: float | None = None) -> Any:
        """The view's rows for these ``?`` values, in the order the ``?`` appear.

        For ``BETWEEN ? AND ?`` pass both bounds; for ``IN (?, ...)`` pass any number of
        values in its place. A miss blocks until the rows are computed (at most
        ``timeout`` seconds to start, the database's ``upquery_timeout`` by default); with
        ``block=False`` it returns :data:`NOT_READY` instead and computes them meanwhile.
        """
        try:
            if self._simple and len(params) == 1 and type(params[0]) in self._exact:
                entry = self._entries.get(params[0])
                if entry is not None:  # a hit: counted once, here or by ``get``
                    result = entry.result
                    if result is None:
                        result = self._state.get(params[0])  # type: ignore[union-attr]
                        if result is MISSING:  # evicted since: a miss after all
                            return self._lookup(params, block, timeout)
                    else:
                        entry.reads += 1
                    return list(result) if result else self._defaults(params[0])
            return self._lookup(params, block, timeout)
        except TypeError:
            _check_scalars(params)
            raise

    def lookup_nowait(self, *params: Any) -> Any:
        """``lookup(..., block=False)`` for a server's event loop: never waits. A miss on a
        view whose fill is a storage lookup (:attr:`_fills_inline`) is filled now when no
        write holds the dataflow (cheaper than handing it to another thread); any other
        miss returns :data:`NOT_READY` and is filled in the background."""
        return self.lookup(*params, block=Nowait.FILL_OR_BACKGROUND)

    def probe(self, *params: Any) -> Any:
        """:meth:`lookup_nowait` for a caller that reads a miss itself, with :meth:`lookup`
        on another thread (the server's pool): a miss that cannot be filled right here
        returns :data:`NOT_READY` and starts nothing. A background fill as well would put
        a second thread on the same miss, at the cost of two more thread wake-ups (the
        background worker's, and the pool's wait for it), each tens of microseconds with
        the event loop's GIL held."""
        return self.lookup(*params, block=Nowait.FILL_OR_NOTHING)

    def answer(self, key: Any) -> tuple[Row, ...] | None:
        """The rows under a one-value key (``()`` for a view without parameters) exactly
        as the reader keeps them (empty too, unless the view makes a default row for an
        empty group), if they are at hand; else None (use :meth:`lookup`). The tuple
        stays the same object until a write changes the rows under the key, so the MySQL
        server can reuse the reply it encoded from it. Counted as a read, as
        :meth:`lookup` counts."""
        if not ((self._simple and type(key) in self._exact)
                or (self._unparameterized and key == ())):
            return None
        entry = self._entries.get(key)
        if entry is None:
            return None
        result = entry.result  # (None until a lookup finishes the rows)
        if result is None or not (result or self._default is None):
            return None  # (no rows, but an implicit group's default row to make)
        entry.reads += 1
        return result

    def answer_each(self, keys: Sequence[Any]) -> list[tuple[Row, ...]] | None:
        """For a ``WHERE col IN (?, ...)`` view whose answer is its keys' answers one after
        the other: each distinct key's rows exactly as the reader keeps them, if every
        key is at hand; else None (use :meth:`lookup`). As with :meth:`answer`, while
        every tuple is the same object the reply encoded from them can be sent again."""
        if not self._list_only:
            return None
        entries = self._entries
        exact = self._exact
        held: dict[int, Any] = {}  # (1 and 1.0 are one key: one entry)
        for key in keys:
            if type(key) not in exact:
                return None
            entry = entries.get(key)
            if entry is None or entry.result is None:
                return None
            held[id(entry)] = entry
        out = []
        for entry in held.values():
            entry.reads += 1
            out.append(entry.result)
        return out

    def answer_of_rows(self, rows: Iterable[tuple[Row, int]],
                       params: Sequence[Any]) -> list[Row] | None:
        """The view's answer for ``params`` over ``rows`` (its one table's rows, each with
        its count), for a view that only filters and projects one table and is read by its
        keys alone (no range, order, cut or DISTINCT); None for any other view, or values
        that find no key by themselves (the caller then computes the read whole).

        A transaction's locking read by primary key answers from the rows it locked so
        (rivulet/engine/transaction.py): a throwaway dataflow built for a row or two cost
        more than a millisecond."""
        plan = self.plan
        chain = self._chain
        if (chain is None or plan.range_column is not None or plan.order
                or plan.limit is not None or plan.offset or plan.distinct_on_read
                or self._default is not None or plan.alternatives is not None):
            return None
        asked = (self._key_lookup.keys(values_by_param(plan, params)) if plan.param_count
                 else [()])
        if isinstance(asked, Unkeyed):
            return None
        by_key: dict[tuple, list[Row]] = {key: [] for key in asked}
        key, visible = plan.key, plan.visible
        for row, count in rows:
            out = chain(row)
            if out is not None:
                found = by_key.get(tuple(out[i] for i in key))
                if found is not None:
                    found.extend([out[:visible]] * count)
        return [row for answer in by_key.values() for row in answer]

    @cached_property
    def _chain(self) -> Callable[[Row], Row | None] | None:
        """:func:`chain_function` of the view's plan (made on first use)."""
        return chain_function(self.plan.root)

    def lookup_many(self, keys: Iterable[Any], *, block: Block = True,
                    timeout: float | None = None) -> Any:
        """Rows for several keys at once (one value, or a tuple of the key's values, each).

        For an ``IN (?, ...)`` view, each key gives the values of the equality parameters
        followed by one value of the IN list. The keys a partial view misses are filled by
        one upquery.
        """
        self._check_open()
        if self.plan.bounds_keyed or self.plan.range_column is not None:
            # (a key names no read: the bounds' values are none of it)
            raise RivuletError(f"view {self.name!r} is read by range parameters: read it "
                               "with lookup()")
        if self.plan.alternatives is not None:
            raise RivuletError(f"view {self.name!r} is read by parameters under an OR on "
                               "different columns (no one key names a read): read it with "
                               "lookup()")
        keys = [k if isinstance(k, tuple) else (k,) for k in keys]
        width = len(self._key_kinds)
        asked: list[tuple] = []
        unmatched = 0
        computed: list[tuple] = []
        for k in keys:
            if len(k) != width:
                raise ParameterCountError(
                    f"view {self.name!r} is keyed by {width} value(s), "
                    f"got a key of {len(k)}: {k!r}"
                )
            _check_scalars(k)
            stored = tuple(key_value(kind, v, members)
                           for kind, v, members in zip(self._key_kinds, k, self._key_members))
            if any(v is Unkeyed.NOTHING for v in stored):
                unmatched += 1
            elif any(v is Unkeyed.SCAN for v in stored):
                computed.append(k)
            else:
                asked.append(stored)
        asked = list(dict.fromkeys(asked))
        if computed:
            return self._read_computed_keys(asked, computed, unmatched, block, timeout)
        if self._listed is not None:
            return self._read_listed(_by_prefix(asked, self._listed), block, timeout)
        return self._read_keys(asked, block, timeout, unmatched)

    def scan(self) -> list[Row]:
        """Every row of the view, over all parameter values (hidden columns dropped): the
        answers of every key, each ordered and cut to its LIMIT, one after the other. A
        range view has no keys to cut by: it returns all its rows in the view's order.
        A partial view computes them from the base tables, without filling its state."""
        self._check_open()
        if self.plan.bounds_keyed:
            raise RivuletError(f"view {self.name!r} answers each value of its range "
                               "parameters apart: read it with lookup()")
        if self.plan.alternatives is not None:
            raise RivuletError(f"view {self.name!r} is read by parameters under an OR on "
                               "different columns (a row is under the key of each column): "
                               "read it with lookup()")
        state = (self._state if not self._state.partial
                 else self._upqueries.computed(self.plan).state)
        if isinstance(state, RangeReader):
            # (a row NULL in another range column is in no range: it answers no read)
            rows = [r for r in state.all_raw()
                    if all(r[other.column] is not None for other in self.plan.other_ranges)]
            if self.plan.order:
                rows.sort(key=sort_key_function(self.plan.order))
            return [r[: self.plan.visible] for r in rows]
        out: list[Row] = []
        for key in list(state.entries):
            answer = state.get(key)
            if answer is not MISSING:  # (a full state holds every key)
                out.extend(answer)
        return out

    def held_keys(self) -> list[Any]:
        """The keys the reader holds, as stored (a value for one key column, a tuple for
        several, ``()`` for a view without parameters): every key with rows of a full view,
        the filled holes of a partial one; for an IN view whose reader is keyed by its
        equality parameters alone, those values. ``rivulet verify`` compares these (and, of a
        partial view, a sample of keys it does not hold, read as a miss reads them)."""
        return list(self._state.entries)

    def held_rows(self, key: Any) -> list[Row] | Hole:
        """The rows the reader holds under ``key`` without reading it (no upquery, no
        counters): a keyed view's answer as ``lookup`` gives it (default row included); a
        range view's rows of that key, unfinished (all columns, no bounds), and so an IN
        view's rows under its equality values when its reader is keyed by those alone.
        :data:`MISSING` if the key is not held."""
        state = self._state
        if isinstance(state, RangeReader):
            with state.lock:
                rows = state.entries.get(key)
                return MISSING if rows is None else list(rows)
        entry = state.entries.get(key)
        if entry is None:
            return MISSING
        if self._listed_column is not None:
            return entry.expand()
        served = entry.result  # the cached answer a hit returns, if built
        if served is None:
            served = self._finish(entry.expand())
        if not served and self._default is not None:
            return list(self._finish(self._default(key, False)))
        return list(served)

    def fill_held(self, keys: Sequence[Any]) -> dict[Any, list[Row]]:
        """:meth:`held_rows` of each of ``keys`` (reader keys, as stored), those the
        reader does not hold filled first by one upquery, as a read that misses them
        fills them. The rows are read under the lock that filled them, so nothing is
        evicted in between. ``rivulet verify`` reads keys a range view, or a view whose
        reader is keyed by part of its key, did not hold this way: a ``lookup`` of
        those answers only part of what the reader holds under a key."""
        self._check_open()
        keys = list(dict.fromkeys(keys))

        def read() -> dict[Any, list[Row]]:
            # (MISSING after the fill: a full reader's key without rows, which holds none)
            return {k: [] if (rows := self.held_rows(k)) is MISSING else rows
                    for k in keys}

        held: dict[Any, list[Row]] = self._upqueries.fill(self._built, keys, read=read)
        return held

    @property
    def partial(self) -> bool:
        """Whether the view holds only the keys that were read (see ``rivulet explain``)."""
        return self._state.partial

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("the database is closed")

    def __repr__(self) -> str:
        return f"<View {self.name} ({', '.join(self.columns)})>"

    # ..................................................................... general path

    def _lookup(self, params: Sequence[Any], block: Block, timeout: float | None) -> Any:
        self._check_open()
        plan = self.plan
        if self._unparameterized:
            if params:
                raise ParameterCountError(
                    f"view {self.name!r} takes no parameters, got {len(params)}")
            return self._read_one((), block, timeout)
        values = values_by_param(plan, params)
        if plan.bounds_keyed:
            return self._read_bounds(params, values, block, timeout)
        if plan.in_list:  # (an unhashable value here is not caught on the way)
            _check_scalars(values["in"])
        if self._alternatives is not None:
            return self._read_alternatives(params, values, block, timeout)
        asked = self._key_lookup.keys(values)
        if isinstance(asked, Unkeyed):
            return self._computed(params, block)
        if plan.range_column is not None:
            return self._read_range(asked, values, block, timeout)
        if not asked:  # no row can match (a NULL, ``int_col = 1.5``)
            return self._defaults(self._no_key(), matches_nothing=True)
        if self._listed is not None:
            return self._read_listed(_by_prefix(asked, self._listed), block, timeout)
        if len(asked) == 1:
            return self._read_one(asked[0], block, timeout)
        return self._read_keys(asked, block, timeout)

    def _read_alternatives(self, params: Sequence[Any], values: dict[Any, Any],
                           block: Block, timeout: float | None) -> Any:
        """A read of ``a = ? OR b = ?`` (rivulet/plan/alternatives.py): each term's key
        read (or filled) once, its rows kept where they came through that term and match
        no earlier one, then all of them ordered, cut and finished as one answer."""
        assert self._alternatives is not None  # (a view of an OR on different columns)
        reads = self._alternatives.reads(values)
        if reads is Unkeyed.SCAN:
            return self._computed(params, block)
        state: KeyedReader = self._state  # type: ignore[assignment]  # (no range parameter)
        held: dict[Any, list[Row]] = {}
        missing: list[Any] = []
        for read in reads:
            key = read.key[0] if len(read.key) == 1 else read.key
            if key in held or key in missing:
                continue
            rows = state.raw(key)
            if rows is MISSING:
                missing.append(key)
            else:
                held[key] = rows
        if missing:
            filled = self._fill(missing, block, timeout)
            if filled is NOT_READY:
                return NOT_READY
            held.update(filled)
        kept: list[Row] = []
        for read in reads:
            key = read.key[0] if len(read.key) == 1 else read.key
            kept += self._alternatives.kept(held[key], read)
        return list(self._finish(kept))

    def _read_bounds(self, params: Sequence[Any], values: dict[Any, Any], block: Block,
                     timeout: float | None) -> Any:
        """A view keyed by its range parameters' values (a range aggregate), and by its
        equality parameters' if any: the reader's key is each equality's stored value and
        each bound placed among the range column's values as MySQL compares them
        (:func:`~rivulet.values.matching.range_bound`), so that every value that finds the
        same rows finds one key. A NULL (it finds no row, yet an aggregate without GROUP BY
        answers a row), a value that finds no stored value or several, a bound with no
        place among the column's values, and ``BETWEEN`` compared as DOUBLEs are computed
        with the values as constants instead (:meth:`_computed`)."""
        plan = self.plan
        given = [values[p] for p in plan.key_params]
        _check_scalars(given)
        key = self._bounds_key(given)
        if key is None or any_compared_as_doubles(plan, values):
            return self._computed(params, block)
        return self._read_one(key, block, timeout)

    def _bounds_key(self, given: Sequence[Any]) -> tuple | None:
        """The reader's key of a range aggregate's parameters (equalities, then bounds:
        see :meth:`_read_bounds`), or None where a value finds no key of its own."""
        n_eq = len(self._key_kinds) - len(self.plan.all_range_bounds)
        key = []
        for i, value in enumerate(given):
            kind = self._key_kinds[i]
            if value is None:
                return None
            if i < n_eq:
                found = key_value(kind, value, self._key_members[i])
                if found is Unkeyed.NOTHING:
                    return None
            else:
                found = range_bound(kind, plain(value))
            if found is Unkeyed.SCAN:
                return None
            key.append(found)
        return tuple(key)

    def _no_key(self) -> Any:
        """The key an implicit group's default row shows when no row can match: NULLs."""
        width = len(self._key_kinds)
        return None if width == 1 else (None,) * width

    def _computed(self, params: Sequence[Any], block: Block) -> Any:
        """A read its reader cannot answer by its keys: the view's query with ``params`` as
        constants, computed whole from the base tables (rivulet/plan/bound.py). It fills no
        state, so there is nothing to fill in the background: only a read that must not
        wait at all (:attr:`Nowait.FILL_OR_NOTHING`) answers :data:`NOT_READY`."""
        if block is Nowait.FILL_OR_NOTHING:
            return NOT_READY
        plan = bound_plan(self.plan, params, self._upqueries.core.catalog)
        built = self._upqueries.computed(plan)
        state: KeyedReader = built.state  # type: ignore[assignment]  # (no range parameter)
        rows = state.get(())
        if not rows or rows is MISSING:
            rows = built.finish(built.default_rows((), True)) if built.default_rows else ()
        return list(rows)

    def _read_computed_keys(self, asked: list[tuple], computed: list[tuple], unmatched: int,
                            block: Block, timeout: float | None) -> Any:
        """:meth:`lookup_many` where some keys cannot be looked up (:meth:`_computed`):
        those keys' answers after the others'. Only where the answer of several keys is
        each key's answer, one after the other."""
        if not self._concatenated:
            raise RivuletError(
                f"view {self.name!r}: the key {computed[0]!r} matches several stored values "
                f"(compared as MySQL compares its types); read it with lookup()")
        rows = self._read_keys(asked, block, timeout, unmatched) if asked else []
        if rows is NOT_READY:
            return NOT_READY
        for key in dict.fromkeys(computed):
            answer = self._computed(self._params_of_key(key), block)
            if answer is NOT_READY:
                return NOT_READY
            rows.extend(answer)
        return rows

    def _params_of_key(self, key: tuple) -> list[Any]:
        """The parameters of a read of one key (the key's value in an IN list's place)."""
        plan = self.plan
        by_param = dict(zip(plan.key_params, key))
        by_param.update((p, key[position]) for p, position in plan.equal_params)
        by_param.update((p, key[position]) for position, rest in plan.listed for p in rest)
        skipped = set(plan.in_list[1:])
        return [by_param[p] for p in range(plan.param_count) if p not in skipped]

    def _read_one(self, key: tuple, block: Block, timeout: float | None) -> Any:
        state: KeyedReader = self._state  # type: ignore[assignment]
        state_key = key[0] if len(key) == 1 else key
        result = state.get(state_key)
        if result is MISSING:
            answers = self._fill([state_key], block, timeout)
            if answers is NOT_READY:
                return NOT_READY
            return list(self._finish(answers[state_key]))  # default rows included
        if not result:
            return self._defaults(state_key)
        return list(result)

    def _read_keys(self, keys: list[tuple], block: Block, timeout: float | None,
                   unmatched: int = 0) -> Any:
        """The answer of several keys (stored values, each once), and of ``unmatched``
        keys that match no row (only an implicit group answers those: its default row)."""
        if self._concatenated:
            return self._read_each(keys, block, timeout)
        state: KeyedReader = self._state  # type: ignore[assignment]
        raw: list[Row] = []
        if self._default is not None:
            for _ in range(unmatched):
                raw.extend(self._default(self._no_key(), True))
        state_keys = [key[0] if len(key) == 1 else key for key in keys]
        missing: list[Any] = []
        for key in state_keys:
            rows = state.raw(key)
            if rows is MISSING:
                missing.append(key)
            elif not rows and self._default is not None:
                raw.extend(self._default(key, False))
            else:
                raw.extend(rows)
        if missing:
            filled = self._fill(missing, block, timeout)
            if filled is NOT_READY:
                return NOT_READY
            for rows in filled.values():
                raw.extend(rows)  # default rows included
        return list(self._finish(raw))

    def _fill(self, keys: list[Any], block: Block, timeout: float | None) -> Any:
        """Fill the reader's holes ``keys``: each key's raw rows (default rows included);
        with ``block=False``, :data:`NOT_READY` at once, the keys filled in the background;
        with a :class:`Nowait`, filled now if that costs a storage lookup and the dataflow
        is free, else as with ``False`` (``FILL_OR_BACKGROUND``) or :data:`NOT_READY` with
        nothing started (``FILL_OR_NOTHING``)."""
        if isinstance(block, Nowait) and self._fills_inline:
            answers = self._upqueries.fill(self._built, keys, wait=False)
            if answers is not BUSY:
                return answers
        if block is Nowait.FILL_OR_NOTHING:
            return NOT_READY
        if block is Nowait.FILL_OR_BACKGROUND or not block:
            self._upqueries.fill_in_background(self._built, keys)
            return NOT_READY
        return self._upqueries.fill(self._built, keys, timeout)

    def _read_each(self, keys: list[tuple], block: Block, timeout: float | None) -> Any:
        """:meth:`_read_keys` for a view whose answer over several keys is their answers
        one after the other: each held key's cached answer is taken as it is."""
        state: KeyedReader = self._state  # type: ignore[assignment]
        out: list[Row] = []
        missing: list[Any] = []
        for key in keys:
            state_key = key[0] if len(key) == 1 else key
            rows = state.get(state_key)
            if rows is MISSING:
                missing.append(state_key)
            else:
                out.extend(rows)
        if missing:
            answers = self._fill(missing, block, timeout)
            if answers is NOT_READY:
                return NOT_READY
            for rows in answers.values():
                out.extend(self._finish(rows))
        return out

    def _read_listed(self, lists: dict[tuple, list[Any]], block: Block,
                     timeout: float | None) -> Any:
        """A view whose reader is keyed by part of its key, read for ``lists`` (values
        of the rest, listed with each reader key): each reader key is read (or filled)
        once, and its rows are kept when they hold a listed value. The reader's cached
        answer under a key is its rows by that value (``builder.rows_by``)."""
        assert self._listed is not None and self._listed_column is not None  # a listed view
        listed: dict[Any, set[Any]] = {}
        for prefix, asked in lists.items():
            listed.setdefault(prefix[0] if len(prefix) == 1 else prefix, set()).update(asked)
        state: KeyedReader = self._state  # type: ignore[assignment]
        raw: list[Row] = []
        missing: list[Any] = []
        for prefix, values in listed.items():
            by_value: dict[Any, list[Row]] | Hole = state.get(prefix)  # type: ignore[assignment]
            if by_value is MISSING:
                missing.append(prefix)
                continue
            for value in values:
                rows = by_value.get(value)
                if rows:
                    raw.extend(rows)
        if missing:
            answers = self._fill(missing, block, timeout)
            if answers is NOT_READY:
                return NOT_READY
            position = self._listed_column
            for prefix, rows in answers.items():
                values = listed[prefix]
                raw.extend(r for r in rows if r[position] in values)
        return list(self._finish(raw))

    def _read_range(self, keys: list[tuple], values: dict[Any, Any], block: Block,
                    timeout: float | None) -> Any:
        """A range view's rows under each of ``keys`` (stored values) within every bound.
        The reader's sorted rows are cut by a lower and an upper bound where each is one
        value placed among the column's values as MySQL compares them
        (:func:`~rivulet.values.matching.range_bound`); any other bound (a second one on a
        side, ``varchar_col < 10``) is checked row by row. Bounds on other columns
        (``ViewPlan.other_ranges``) are checked over the rows cut, before the answer is
        ordered, de-duplicated and cut to its LIMIT."""
        state: RangeReader = self._state  # type: ignore[assignment]
        bounds = range_bounds(self.plan, values)
        others = _other_range_tests(self.plan, values)
        if not keys or others is None or any(v is None for _, v in bounds):
            return []  # a comparison with NULL is never true
        range_column = self.plan.range_column
        assert range_column is not None  # a range view
        range_kind = self.plan.root.columns[range_column].kind
        low = high = None
        low_inc = high_inc = True
        lows = [(op, v) for op, v in bounds if op in _LOWER]
        highs = [(op, v) for op, v in bounds if op in _UPPER]
        checked = len(lows) > 1 or len(highs) > 1
        as_doubles = compared_as_doubles(self.plan, range_kind, values)
        if as_doubles:  # BETWEEN text and a number: every row compared as a DOUBLE
            lows = highs = []
            checked = True
        if len(lows) == 1:
            op, v = lows[0]
            low, low_inc = range_bound(range_kind, v), _LOWER[op]
            if low is Unkeyed.SCAN:
                low, checked = None, True
        if len(highs) == 1:
            op, v = highs[0]
            high, high_inc = range_bound(range_kind, v), _UPPER[op]
            if high is Unkeyed.SCAN:
                high, checked = None, True

        def cut(key: Any) -> Any:
            return state.range(key, low, low_inc, high, high_inc)

        rows: list[Row] = []
        missing: list[Any] = []
        for key in keys:
            state_key = key[0] if len(key) == 1 else key
            held = cut(state_key)
            if held is MISSING:
                missing.append(state_key)
            else:
                rows.extend(held)
        if missing:
            if block is Nowait.FILL_OR_NOTHING:
                return NOT_READY
            if block is Nowait.FILL_OR_BACKGROUND or not block:
                self._upqueries.fill_in_background(self._built, missing)
                return NOT_READY
            # (read under the lock that filled the keys: no eviction comes between)
            filled = self._upqueries.fill(
                self._built, missing, timeout, read=lambda: [cut(k) for k in missing])
            for held in filled:
                rows.extend(held)
        if checked:
            checks = [((_CHECK_AS_DOUBLES if as_doubles and b.between else _CHECK)[op], v)
                      for b, (op, v) in zip(self.plan.range_bounds, bounds)]
            rows = [r for r in rows if all(check(r[range_column], v) for check, v in checks)]
        if others:  # (before the answer is ordered, de-duplicated and cut: finish)
            rows = _in_other_ranges(rows, others)
        return list(self._finish(rows))

    def _defaults(self, key: Any, *, matches_nothing: bool = False) -> list[Row]:
        """Rows of an implicit group that has no input rows (see ``default_rows``);
        ``matches_nothing`` for a key with a NULL, which no row can match."""
        if self._default is None:
            return []
        return list(self._finish(self._default(key, matches_nothing)))

    def _coerce_key(self, key: tuple, kinds: list[Kind | None] | None = None,
                    members: Sequence[tuple[str, ...]] | None = None) -> tuple | None:
        """``key`` converted to the key columns' kinds (or to ``kinds``, an ENUM's with its
        ``members``) as a write converts a value (NULLs kept); None if a value cannot be
        one. For keys saved by prewarming, which are the reader's own: a read's values are
        looked up by ``KeyLookup``)."""
        if kinds is None:
            kinds, members = self._key_kinds, self._key_members
        members = members if members is not None else [()] * len(kinds)
        try:
            return tuple(v if v is None else coerce_value(Column("key", k or STR, members=m), v)
                         for k, v, m in zip(kinds, key, members))
        except SchemaError:
            return None


#: Operators a miss passes through at the cost of a storage index lookup.
_INLINE_OPS = (Base, Filter, Project, Reader)


def _by_prefix(keys: Iterable[tuple], listed: int) -> dict[tuple, list[Any]]:
    """Whole keys grouped by the reader's part of them (all but position ``listed``)."""
    out: dict[tuple, list[Any]] = {}
    for key in keys:
        out.setdefault(key[:listed] + key[listed + 1:], []).append(key[listed])
    return out


def _check_scalars(values: Sequence[Any]) -> None:
    """A ParameterError for a parameter value that is not a scalar (a list where the IN
    list's values were meant to be passed one by one, say), which a read fails on deep
    inside; nothing if every value is one (the failure was something else)."""
    for value in values:
        try:
            hash(value)
        except TypeError:
            raise ParameterError(
                f"a parameter value must be a number, string, bytes, date, datetime, "
                f"timedelta or None, got a {type(value).__name__} ({value!r:.40}); pass the "
                "values of an IN (?, ...) one by one") from None
