"""Upqueries: filling the holes of partial state, and reading base tables at the graph's LSN.

A read that misses takes the graph lock and fills the hole by an upquery
(:meth:`Upqueries.fill`), in the reader's own thread, or queues it for a background
thread (:meth:`Upqueries.fill_in_background`). Base tables answer from storage, which may
be ahead of the graph: every committed batch's deltas stay in ``Core.unapplied`` until
propagated, and a base lookup subtracts those the graph has not applied, so the answer is
the state at the graph's LSN. They are registered *before* the SQLite commit, so any
snapshot that sees a batch also finds its deltas.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from rivulet.dataflow.builder import Builder, BuiltView
from rivulet.dataflow.graph import Graph
from rivulet.engine.core import Core
from rivulet.errors import ClosedError, ProgramError, UpqueryTimeout
from rivulet.plan import ir
from rivulet.state.arrangement import key_function
from rivulet.state.holes import MISSING
from rivulet.state.reader import KeyedReader
from rivulet.values.schema import Row

log = logging.getLogger("rivulet")


class Busy:
    """What a fill that must not wait (``wait=False``) answers when the dataflow is busy
    (a write or another fill holds it) or the view's state is still being recovered."""

    def __repr__(self) -> str:
        return "BUSY"


BUSY = Busy()


def computed_from(core: Core, plan: ir.ViewPlan,
                  rows: Callable[[str], list[tuple[Row, int]]]) -> BuiltView:
    """The whole of a view computed from ``rows`` (each base table's rows by name, with
    their counts: a transaction's view of them, or what a commit reads) into throwaway
    full state."""
    with core.graph_lock:  # (only to copy the bases: the rows are the caller's)
        graph = _throwaway_graph(core, rows)
    return Builder(graph).build_view(plan)


def whole_answer(built: BuiltView) -> list[Row]:
    """The rows of a view computed whole (:func:`computed_from`) that takes no parameter."""
    state: KeyedReader = built.state  # type: ignore[assignment]  # (no parameter left)
    answer: Any = state.get(())
    if not answer or answer is MISSING:
        answer = built.finish(built.default_rows((), True)) if built.default_rows else ()
    return list(answer)


def _throwaway_graph(core: Core, rows: Callable[[str], list[tuple[Row, int]]]) -> Graph:
    """A graph of full state with the running graph's base tables (every version of each,
    laid out as there), whose rows are ``rows``."""
    graph = Graph(partial=False)
    graph.base_rows = rows
    for table, versions in core.graph.versions.items():
        name = core.catalog.require_table(table).name
        newest = core.graph.bases[table]
        for version, node in sorted(versions.items(), key=lambda v: v[1] == newest):
            copy = graph.add_base(name, version)
            graph.base(copy).set_layout(core.graph.base(node).layout)
    return graph


class Upqueries:
    """Fills partial state, and reads base tables for the graph (``graph.base_rows``,
    ``graph.base_lookup``)."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self._background: queue.Queue[tuple[BuiltView, list[Any]] | None] | None = None
        self._in_flight: set[tuple[str, Any]] = set()
        core.graph.base_rows = self.base_rows
        core.graph.base_lookup = self.base_lookup

    # ..................................................................... base tables

    def base_rows(self, table: str) -> Iterator[tuple[Row, int]]:
        """Every row of base ``table`` as of the graph's LSN (the whole-table counterpart of
        :meth:`base_lookup`): full state built, or a whole view filled, while writes commit
        must not see batches the graph has yet to apply."""
        core = self.core
        if core.lazy.copies:
            core.lazy.before_read(table, None, [])
        with core.storage.snapshot_scan(core.catalog.require_table(table)) as (snapshot_lsn, rows):
            later = {row: -n for row, n in self.rewind(table, snapshot_lsn, {})}  # net changes
            for row in rows:
                n = later.get(row, 0)
                if n > 0:  # inserted by a batch not applied yet
                    later[row] = n - 1
                    continue
                yield row, 1
        for row, n in later.items():
            if n < 0:  # deleted by a batch not applied yet
                yield from [(row, 1)] * -n

    def base_lookup(self, table: str, columns: tuple[int, ...], keys: list[Any]
                    ) -> list[tuple[Row, int]]:
        """Rows of base ``table`` under ``keys``, as of the graph's LSN (module docstring)."""
        core = self.core
        schema = core.catalog.require_table(table)
        if core.lazy.copies:
            core.lazy.before_read(table, columns, keys)
        core.hook("upquery_snapshot")
        snapshot_lsn, rows = core.storage.lookup(schema, columns, keys)
        core.hook("upquery_answer")
        key_of = key_function(columns)
        wanted = set(keys)
        counts: dict[Row, int] = {}
        for row in rows:
            if key_of(row) in wanted:
                counts[row] = counts.get(row, 0) + 1
        return self.rewind(table, snapshot_lsn, counts, lambda row: key_of(row) in wanted)

    def rewind(self, table: str, snapshot_lsn: int, counts: dict[Row, int],
               wanted: Callable[[Row], bool] | None = None) -> list[tuple[Row, int]]:
        """Rows read at ``snapshot_lsn`` taken back to the graph's LSN: the deltas of the
        batches in between (those ``wanted``) are subtracted."""
        graph = self.core.graph
        base = graph.bases[table.lower()]
        for batch in self.core.unapplied.since(base, graph.lsn, snapshot_lsn):
            for row, diff in batch:
                if wanted is None or wanted(row):
                    counts[row] = counts.get(row, 0) - diff
        return [(row, n) for row, n in counts.items() if n]

    def computed(self, plan: ir.ViewPlan,
                 rows: Callable[[str], list[tuple[Row, int]]] | None = None) -> BuiltView:
        """The whole of a view, computed from the base tables at the graph's LSN into
        throwaway full state (``scan()`` of a partial view); or from ``rows`` (each base
        table's rows by name: a transaction's own, see rivulet/engine/transaction.py)."""
        core = self.core
        if rows is not None:
            return computed_from(core, plan, rows)
        with core.graph_lock:

            def at_graph_lsn(table: str) -> list[tuple[Row, int]]:
                if core.lazy.copies:
                    core.lazy.before_read(table, None, [])
                counts: dict[Row, int] = {}
                schema = core.catalog.require_table(table)
                with core.storage.snapshot_scan(schema) as (lsn, stored):
                    for row in stored:
                        counts[row] = counts.get(row, 0) + 1
                return self.rewind(table, lsn, counts)

            return Builder(_throwaway_graph(core, at_graph_lsn)).build_view(plan)

    # ..................................................................... partial state

    def fill(self, built: BuiltView, keys: list[Any], timeout: float | None = None,
             read: Callable[[], Any] | None = None, *, wait: bool = True) -> Any:
        """Fill the holes among ``keys`` in a partial view's reader; returns the raw rows
        of each key, default rows included (or what ``read`` returns), read before anything
        can be evicted. With ``wait=False``, :data:`BUSY` at once if the dataflow is busy
        or the view's state is still being recovered."""
        core = self.core
        timeout = core.upquery_timeout if timeout is None else timeout
        if not wait:
            if core.bootstrap.waits(built) or not core.graph_lock.acquire(blocking=False):
                return BUSY
        elif core.bootstrap.waits(built) and not core.bootstrap.await_loaded(timeout):
            raise UpqueryTimeout(f"view {built.plan.name!r}: its state is still being "
                                 f"recovered on Spark after {timeout} s")
        elif not core.graph_lock.acquire(timeout=timeout):
            raise UpqueryTimeout(
                f"view {built.plan.name!r}: upquery for {len(keys)} key(s) did not start "
                f"within {timeout} s (the dataflow is busy)"
            )
        try:
            core.check_open()
            core.check_healthy()
            if core.built.get(built.plan.name.lower()) is not built:
                raise ProgramError(f"view {built.plan.name!r} was dropped")
            state = built.state
            missing = state.missing(keys)
            if missing:
                core.graph.nodes[built.reader_node].counters["misses"] += len(missing)
                # (the upquery's answer is not kept in a variable: eviction below
                # measures the state, and a reference held here would count as a holder
                # of the rows filled; see rivulet.state.sizing)
                state.fill(missing, core.graph.upquery(built.root, state.key_columns, missing))
            if read is not None:
                answers = read()
            elif isinstance(state, KeyedReader):
                # Default rows of implicit groups are decided now: whether HAVING removed a
                # group is read from the aggregate, which eviction may empty below.
                answers = {key: state.raw(key) or (
                    built.default_rows(key, False) if built.default_rows else []) for key in keys}
            else:
                answers = None
            core.graph.enforce_memory_limit()
            return answers
        finally:
            core.graph_lock.release()

    def fill_in_background(self, built: BuiltView, keys: list[Any]) -> None:
        """Queue the keys' upquery for the background thread (one per key at a time)."""
        fresh = [k for k in keys if (built.plan.name, k) not in self._in_flight]
        if not fresh:
            return
        self._in_flight.update((built.plan.name, k) for k in fresh)
        if self._background is None:
            self._background = queue.Queue()
            threading.Thread(target=self._background_loop, name="rivulet-upquery",
                             daemon=True).start()
        self._background.put((built, fresh))

    def stop(self) -> None:
        """End the background thread (the database is closing)."""
        if self._background is not None:
            self._background.put(None)

    def _background_loop(self) -> None:
        assert self._background is not None
        while True:
            item = self._background.get()
            if item is None:
                return
            built, keys = item
            try:
                self.fill(built, keys, timeout=None)
            except (ClosedError, ProgramError):
                pass  # closed, or the view was dropped, while the read waited: nobody to answer
            except Exception:  # keep serving other views' background reads
                log.exception("background upquery on view %s failed", built.plan.name)
            finally:
                self._in_flight.difference_update((built.plan.name, k) for k in keys)
