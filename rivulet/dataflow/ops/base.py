"""The operator contract: what every dataflow node implements.

An operator consumes the batches of signed deltas its parents emitted in one propagation
wave and returns the deltas it emits in turn (linear operators map each delta alone;
joins and aggregates consult state). It may read the *arrangements* of its parents, which
the graph has already brought up to date for this wave: the operator sees its inputs'
state *after* the batch, and each operator's docstring says how it accounts for that.

Partial state adds two things (Noria paper, section 4):

* ``on_upquery(columns, keys)``: the operator's current output rows whose ``columns`` hold
  one of ``keys``, computed from its own state or by upqueries to its parents. Stateful
  operators that keep partial state fill the keys they were asked for on the way.
* *misses as values*: when ``on_input`` needs rows of a parent that a partial arrangement
  does not hold, it returns :class:`Misses` instead of deltas; the graph fills them by
  upqueries (at the wave's LSN, so they include this wave) and calls ``on_input`` again.
  Stateful operators never miss: an update for a key they do not hold is dropped, since no
  state below can be holding that key either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from rivulet.plan import ir
from rivulet.state.arrangement import Arrangement, Delta, Row

NodeId = int
Batch = list[Delta]
Columns = tuple[int, ...]


class Upstream(Protocol):
    """What an operator asks of the graph it runs in (:class:`rivulet.dataflow.graph.Graph`
    is the one implementation): its ancestors' rows on demand and the shared indexes over
    them. Operators know the graph only through this, so the operator modules never import
    the graph that imports them."""

    def upquery(self, node: NodeId, columns: Columns, keys: list[Any]) -> Batch:
        """``node``'s current output rows whose ``columns`` hold one of ``keys``."""
        ...

    def base_lookup(self, table: str, columns: Columns, keys: list[Any]) -> Batch:
        """A base table's stored rows whose ``columns`` hold one of ``keys``."""
        ...

    def arrangement(self, node: NodeId, columns: Columns, *, full: bool = False) -> Arrangement:
        """The shared index of ``node``'s output on ``columns``."""
        ...

    def index_home(self, node: NodeId, columns: Columns) -> tuple[NodeId, Columns]:
        """Where the index of ``node``'s output on ``columns`` is kept."""
        ...

    def fill(self, node: NodeId, arrangement: Arrangement, keys: Iterable[Any], *,
             read: bool = True) -> None:
        """Fill the holes among ``keys`` in an arrangement of ``node``."""
        ...

    def full_output(self, node: NodeId) -> Iterator[Delta]:
        """Every row ``node`` currently outputs."""
        ...

    def holes_below(self, node: NodeId, positions: tuple[frozenset[int], ...],
                    keys: Iterable[Any]) -> list[Any]:
        """The keys among ``keys`` that no state below ``node`` holds (``positions`` of its
        output carry them): deltas under them may be dropped."""
        ...


@dataclass(frozen=True)
class Miss:
    """Rows of ``node``'s output under ``keys`` of ``columns`` are needed but not held."""

    node: NodeId
    columns: Columns
    keys: tuple[Any, ...]


class Misses(list):
    """What ``on_input`` returns instead of deltas when it hit holes: a list of :class:`Miss`."""


class Operator:
    """Base class; an operator overrides what it needs."""

    #: Short symbol-style name used by ``explain`` (σ filter, π project, ⋈ join, ...).
    symbol = "?"
    #: Whether the operator keeps state of its own (and then implements the state protocol
    #: below: ``partial``, ``missing``, ``evict``, ``byte_size``, ``clock_candidates``).
    stateful = False
    #: The IR node the operator computes, where the Spark bootstrap's builder recorded it
    #: (``PlanRecordingBuilder``); absent otherwise.
    plan_node: ir.Node

    def __init__(self, parents: tuple[NodeId, ...]) -> None:
        self.parents = parents
        self.graph: Upstream
        self.node: NodeId = -1

    def attach(self, graph: Upstream, node: NodeId) -> None:
        """Called once the node exists: take the arrangements the operator reads."""
        self.graph = graph
        self.node = node

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        """The output deltas for one wave of input deltas, keyed by the parent they came
        from; or :class:`Misses` if it needs rows that partial state does not hold."""
        raise NotImplementedError(type(self).__name__)

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        """Current output rows whose ``columns`` hold one of ``keys`` (a scalar per key for
        one column, a tuple for several)."""
        raise NotImplementedError(type(self).__name__)

    def compute(self, inputs: dict[NodeId, Batch]) -> Batch:
        """The whole output from the whole output of each parent (used to bootstrap full
        state below this node). Stateless operators only."""
        return self.on_input(inputs)

    def initial_output(self) -> Batch:
        """Rows a new node emits before any input (an aggregate over no rows still has one)."""
        return []

    def snapshot(self) -> Iterable[Delta] | None:
        """The node's full current output from its own state, or ``None`` if it keeps none
        (or only part of it)."""
        return None

    def indexes_read(self) -> list[tuple[NodeId, tuple[int, ...]]]:
        """The shared indexes (parent node, columns) this operator reads (joins do)."""
        return []

    def describe(self) -> str:
        return type(self).__name__


class StatefulOperator(Operator):
    """An operator with state of its own, held in ``self.state`` (a ``KeyedGroups``):
    aggregate, top-k, distinct. Partial on ``partial_columns`` of its output, or full."""

    stateful = True
    partial_columns: Columns | None = None
    state: Any

    @property
    def partial(self) -> bool:
        return self.state.partial

    @property
    def group_columns(self) -> Columns | None:
        """The output columns whose values name one group, or ``None`` where none do (a
        global aggregate): an upquery on them is a plain lookup of groups."""
        raise NotImplementedError(type(self).__name__)

    @property
    def partial_input_columns(self) -> Columns | None:
        """The input columns whose values are a row's partial key (``None``: full state):
        an update to a key not held is dropped here (see rivulet/dataflow/holes.py)."""
        return self.partial_columns if self.partial else None

    def natural(self, columns: Columns) -> bool:
        """Whether an upquery on ``columns`` of full state is a plain lookup by group."""
        return columns == self.group_columns

    def hold(self, columns: Columns, keys: list[Any], traced: Columns,
             absorb: Callable[[Batch], Any]) -> None:
        """Before answering an upquery on ``columns``: make sure ``keys`` are held, by
        asking the parent for their rows (on its ``traced`` columns) and ``absorb``-ing
        them into the state. Full state holds everything; it only checks ``columns``."""
        state = self.state
        if not state.partial:
            if not self.natural(columns):
                raise ValueError(f"{self.describe()}: upquery on {columns} needs an index")
            return
        if columns != self.partial_columns:
            raise ValueError(
                f"{self.describe()} is partial on {self.partial_columns}, not {columns}")
        missing = state.missing(keys)
        if missing:
            rows = self.graph.upquery(self.parents[0], traced, missing)
            state.mark_filled(missing)
            absorb(rows)
        state.recent.update(keys)

    def missing(self, keys: Iterable[Any]) -> list[Any]:
        return self.state.missing(keys)

    def evict(self, keys: Iterable[Any]) -> int:
        return self.state.evict(keys)

    def recently_used(self, key: Any) -> bool:
        return self.state.recently_used(key)

    def clock_candidates(self, count: int, used_below: Callable[[Any], bool]) -> list[Any]:
        return self.state.clock_candidates(count, used_below)

    def byte_size(self) -> int:
        raise NotImplementedError(type(self).__name__)


class Base(Operator):
    """A base table: deltas enter here from committed writes; upqueries read storage.

    After ALTER TABLE a table has several versions, one base node each (a root, like any
    base node). Writes and storage speak the newest version's columns; the node of an
    older version maps them to its own columns through its ``layout`` (see
    rivulet/migrate/alter.py), so views planned on it keep running unchanged."""

    symbol = "B"

    def __init__(self, table: str, version: int = 0) -> None:
        super().__init__(())
        self.table = table
        self.version = version
        #: Positions of this version's columns in the newest version's rows (None: newest).
        self.layout: tuple[int | None, ...] | None = None
        self._adapt: Callable[[Row], Row] | None = None

    def set_layout(self, layout: tuple[int | None, ...] | None) -> None:
        self.layout = layout
        if layout is None:
            self._adapt = None
        else:
            parts = ", ".join("None" if p is None else f"r[{p}]" for p in layout)
            self._adapt = eval(f"lambda r: ({parts},)")  # noqa: S307 (positions only)

    def adapt(self, batch: Iterable[Delta]) -> Batch:
        """Deltas of the newest version as deltas of this one."""
        adapt = self._adapt
        if adapt is None:
            return list(batch)
        return [(adapt(row), n) for row, n in batch]

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        return inputs[-1]

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        if self.layout is None:
            return self.graph.base_lookup(self.table, columns, keys)
        return self.adapt(self.graph.base_lookup(self.table, self.newest_columns(columns), keys))

    def newest_columns(self, columns: Columns) -> Columns:
        """Positions in the newest version of this version's ``columns``."""
        if self.layout is None:
            return columns
        found = tuple(self.layout[c] for c in columns)
        out = tuple(c for c in found if c is not None)
        if len(out) != len(found):  # ALTER TABLE refuses to drop a column a view reads
            raise RuntimeError(f"table {self.table!r} version {self.version}: column dropped")
        return out

    def describe(self) -> str:
        return f"B {self.table}" + (f" (version {self.version})" if self.layout is not None else "")


def rows_as_inserts(rows: Iterable[Row]) -> Batch:
    return [(row, 1) for row in rows]


def select_keys(deltas: Iterable[Delta], key_of: Any, keys: Iterable[Any]) -> Batch:
    """The deltas whose key is one of ``keys``."""
    wanted = set(keys)
    return [d for d in deltas if key_of(d[0]) in wanted]
