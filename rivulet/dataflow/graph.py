"""The running dataflow graph: nodes, their state, propagation of waves, upqueries, eviction.

Node ids are assigned in creation order and a node is only created after its parents, so
id order is a topological order: a wave of deltas is propagated by visiting the touched
nodes in increasing id order, each exactly once, after all of its parents.

Partial state (Noria paper, section 4). Readers, stateful operators and arrangements may
hold only some keys. A read that misses asks for the rows by an *upquery*: the graph asks
the nearest state that can answer, recursively down to base tables, whose rows come from
storage; every partial state the answer passes fills its hole on the way. Upqueries run in
the thread that holds the graph lock, so they see the graph at one LSN, :attr:`lsn`: the
last wave applied, or, inside a wave, the wave itself (every ancestor of the asking node has
already applied it). Storage may be ahead of that LSN; the base lookup hook subtracts the
writes the graph has not applied yet, so every answer is exactly the state at :attr:`lsn`.

Eviction keeps the accounted bytes of all state under :attr:`memory_limit`. A stateful
operator that evicts a key also evicts it from every state below that depends on it
(registered by the builder with :meth:`add_dependent`): those states would otherwise miss
the updates the operator now drops.

The graph is single-writer: the thread holding the database's graph lock.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import random
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from rivulet.dataflow.holes import Holder, KeyPositions, holders, holes
from rivulet.dataflow.ops.base import (
    Base,
    Batch,
    Columns,
    Misses,
    NodeId,
    Operator,
    StatefulOperator,
)
from rivulet.dataflow.ops.project import Project, ProjectedArrangement
from rivulet.dataflow.ops.reader import Reader
from rivulet.faults import fault_point
from rivulet.state.arrangement import Arrangement, Delta
from rivulet.state.groups import GroupIndex

log = logging.getLogger("rivulet")


class State(Protocol):
    """What eviction needs of any partial state (reader, arrangement, stateful operator)."""

    @property
    def partial(self) -> bool: ...

    def evict(self, keys: Iterable[Any]) -> int: ...
    def byte_size(self) -> int: ...
    def recently_used(self, key: Any) -> bool: ...


@dataclass
class GraphNode:
    id: NodeId
    op: Operator
    children: list[NodeId] = field(default_factory=list)
    #: Shared indexes of the node's output (partial caches, or full when partial state is off).
    arrangements: dict[Columns, Arrangement] = field(default_factory=dict)
    #: Full indexes of a full stateful node, for upqueries on other columns than its key.
    full_indexes: dict[Columns, Arrangement | GroupIndex] = field(default_factory=dict)
    #: Names of the views that use this node; a node nobody uses can be dropped.
    users: set[str] = field(default_factory=set)
    #: Why the node's state is full (for ``explain``), when it keeps full state.
    full_reason: str = ""
    #: Columns -> how many operators read the shared index ``arrangements[columns]``.
    index_users: Counter = field(default_factory=Counter)
    counters: Counter = field(default_factory=Counter)


EVICTION_POLICIES = ("lru", "random")
JOIN_CACHE_POLICIES = ("lean", "kept")


class Graph:
    def __init__(self, *, partial: bool = True, memory_limit: int | None = None,
                 eviction: str = "lru", join_caches: str = "lean") -> None:
        if eviction not in EVICTION_POLICIES:
            raise ValueError(f"eviction must be one of {EVICTION_POLICIES}, got {eviction!r}")
        if join_caches not in JOIN_CACHE_POLICIES:
            raise ValueError(
                f"join_caches must be one of {JOIN_CACHE_POLICIES}, got {join_caches!r}")
        #: "lean": join indexes over state that answers by itself keep only what writes
        #: probed (see ``upquery``); "kept": also what reads filled, until evicted.
        self.join_caches = join_caches
        self.nodes: dict[NodeId, GraphNode] = {}
        #: Table (lower-cased) -> the base node of its newest version, where writes enter.
        self.bases: dict[str, NodeId] = {}
        #: Table -> version -> base node (older versions: see ``Base``), while in use.
        self.versions: dict[str, dict[int, NodeId]] = {}
        self._next_id = 0
        self.partial = partial
        self.memory_limit = memory_limit
        self.eviction = eviction
        #: The LSN whose state the graph holds (inside a wave: the wave's).
        self.lsn = 0
        #: Reads a base table's stored rows; base nodes keep no rows in memory themselves.
        self.base_rows: Callable[[str], Iterable[Delta]] = _no_base_rows
        #: Answers an upquery on a base table at :attr:`lsn` (set by the database).
        self.base_lookup: Callable[[str, Columns, list[Any]], Batch] = _no_base_lookup
        #: Stateful node -> the states below it keyed by the same values (see module doc).
        self.dependents: dict[NodeId, list[tuple[NodeId, State]]] = {}
        #: Called with each new node before it attaches; returning True means it brings
        #: the node's full state up to date itself, later (rivulet.spark.bootstrap: on
        #: Spark, for large inputs). It may also prepare the full indexes ``attach`` takes.
        self.bootstrapper: Callable[[NodeId, Operator], bool] | None = None
        self.counters: Counter = Counter()
        self._random = random.Random(0)
        self._warned_floor = False
        #: Per thread, inside a read upquery: the cache keys it filled that are not kept.
        self._transient = threading.local()
        #: Join node -> the states below it keyed by its key (``holes_below``), or None
        #: where some state below needs every key; cleared when the graph changes shape.
        self._holders: dict[NodeId, list[Holder] | None] = {}

    # ..................................................................... building

    def add_base(self, table: str, version: int = 0) -> NodeId:
        node = self._insert(Base(table, version))
        self.nodes[node].op.attach(self, node)
        self.bases[table.lower()] = node
        self.versions.setdefault(table.lower(), {})[version] = node
        return node

    def base(self, node: NodeId) -> Base:
        """The operator of base node ``node``."""
        op = self.nodes[node].op
        if not isinstance(op, Base):
            raise TypeError(f"node {node} is not a base table: {op.describe()}")
        return op

    def base_node(self, table: str, version: int) -> NodeId:
        """The base node of one version of a table."""
        try:
            return self.versions[table.lower()][version]
        except KeyError:
            raise KeyError(f"no base node for table {table!r} version {version}") from None

    def add_version(self, table: str, version: int, layouts: dict[int, Any]) -> NodeId:
        """A new newest version of ``table`` (ALTER TABLE): its own base node; the nodes of
        the older versions still in use get their ``layouts``, and the others go."""
        node = self.add_base(table, version)
        versions = self.versions[table.lower()]
        for old_version, old in list(versions.items()):
            if old == node:
                continue
            if not self.nodes[old].children:
                del versions[old_version], self.nodes[old]
            else:
                old_base = self.nodes[old].op
                assert isinstance(old_base, Base)
                old_base.set_layout(layouts[old_version])
        return node

    def drop_base(self, table: str) -> None:
        """Forget every version of a table (DROP TABLE; no view reads it)."""
        self._holders.clear()
        del self.bases[table.lower()]
        for node in self.versions.pop(table.lower()).values():
            del self.nodes[node]

    def add_node(self, op: Operator, *, full_reason: str = "") -> NodeId:
        """Add ``op`` below its parents. Full state is brought up to date from the parents'
        whole output; partial state starts empty."""
        node = self._insert(op)
        self.nodes[node].full_reason = full_reason
        for parent in set(op.parents):
            self.nodes[parent].children.append(node)
        deferred = self.bootstrapper is not None and self.bootstrapper(node, op)
        op.attach(self, node)
        if _keeps_full_state(op) and not deferred:
            self.bootstrap(op)
        return node

    def bootstrap(self, op: Operator) -> None:
        """Bring ``op``'s full state up to date from its parents' whole output."""
        for inputs in self._whole_inputs(op):
            if any(inputs.values()):
                op.on_input(inputs)

    def _whole_inputs(self, op: Operator) -> Iterator[dict[NodeId, Batch]]:
        """The whole output of ``op``'s parents, as inputs to hand it in turn: from one
        parent a chunk at a time (the same result for an operator that maps rows one by one
        or keeps state, with a chunk's memory); from several, all of it at once."""
        parents = set(op.parents)
        if len(parents) == 1:
            (parent,) = parents
            for chunk in _chunks(self.full_output(parent)):
                yield {parent: chunk}
        else:
            yield {p: list(self.full_output(p)) for p in parents}

    def _insert(self, op: Operator) -> NodeId:
        self._holders.clear()
        node = self._next_id
        self._next_id += 1
        self.nodes[node] = GraphNode(node, op)
        return node

    def arrangement(self, node: NodeId, columns: Columns, *, full: bool = False) -> Arrangement:
        """The shared index of ``node``'s output on ``columns``, made on first request:
        empty (a cache filled by upqueries) under partial state, else complete. ``full``
        asks for a complete one (where upqueries cannot fill it), upgrading a cache."""
        home, at = self.index_home(node, columns)
        if home != node:
            inner = self.arrangement(home, at, full=full)
            return ProjectedArrangement(inner, self.nodes[node].op.fn)  # type: ignore[return-value,attr-defined]
        arrangements = self.nodes[node].arrangements
        self.nodes[node].index_users[columns] += 1
        found = arrangements.get(columns)
        self._holders.clear()
        full = full or not self.partial
        if found is None:
            found = Arrangement(columns, partial=not full)
            if full:
                found.apply(list(self.full_output(node)))
            arrangements[columns] = found
        elif full and found.partial:
            rows = list(self.full_output(node))  # before the cache turns full (and empty)
            found.evict(list(found.index))
            found.partial = False
            found.apply(rows)
        return found

    def index_home(self, node: NodeId, columns: Columns) -> tuple[NodeId, Columns]:
        """Where the index of ``node``'s output on ``columns`` is kept: a projection that
        copies columns of a base table (column pruning puts one over each table a view
        reads part of) keeps none; its readers share the table's index on the same
        columns, read through the projection."""
        op = self.nodes[node].op
        if isinstance(op, Project) and op.copies \
                and isinstance(self.nodes[op.parents[0]].op, Base):
            return op.parents[0], tuple(op.sources[c] for c in columns)  # type: ignore[misc]
        return node, columns

    def add_dependent(self, source: NodeId, node: NodeId, state: State) -> None:
        """``state`` (of ``node``) holds keys of partial ``source`` by the same values."""
        deps = self.dependents.setdefault(source, [])
        if all(s is not state for _, s in deps):
            deps.append((node, state))

    # ..................................................................... reading state

    def full_output(self, node: NodeId) -> Iterator[Delta]:
        """Every row ``node`` currently outputs, from the cheapest state that has them."""
        entry = self.nodes[node]
        for index in itertools.chain(entry.full_indexes.values(), entry.arrangements.values()):
            if not index.partial:
                yield from index.all_rows()
                return
        op = entry.op
        snapshot = op.snapshot()
        if snapshot is not None:
            yield from snapshot
            return
        if isinstance(op, Base):
            rows = self.base_rows(op.table)
            yield from (rows if op.layout is None else op.adapt(rows))
            return
        if op.stateful or isinstance(op, Reader):
            raise RuntimeError(f"n{node} ({op.describe()}) holds partial state: no full output")
        for inputs in self._whole_inputs(op):
            yield from op.compute(inputs)

    # ..................................................................... upqueries

    def upquery(self, node: NodeId, columns: Columns, keys: list[Any]) -> Batch:
        """``node``'s current output rows whose ``columns`` hold one of ``keys``, filling
        every partial state on the way.

        Join indexes over state that answers by itself at the cost of a lookup (a base
        table, from storage's index; a full aggregate or top-k, from its groups) are not
        kept filled after the outermost upquery: the state it fills (a reader, a partial
        operator) holds the answer, and a second copy of those rows would be held for no
        read. A write that later probes such a key fills it again (and keeps it). With
        ``join_caches="kept"`` they are kept, trading that memory for fewer lookups."""
        transient = self._transient
        outer = getattr(transient, "fills", None) is None
        if outer:
            transient.fills = []
        try:
            arrangement = self.nodes[node].arrangements.get(columns)
            if arrangement is not None:
                self.fill(node, arrangement, keys)
                return arrangement.rows_of(keys)
            return self._answer(node, columns, keys)
        finally:
            if outer:
                fills, transient.fills = transient.fills, None
                for filled, filled_keys in fills:
                    filled.evict(filled_keys)

    def fill(self, node: NodeId, arrangement: Arrangement, keys: Iterable[Any], *,
             read: bool = True) -> None:
        """Fill the holes among ``keys`` in an arrangement of ``node`` (for a read, or, with
        ``read=False``, for a write: LRU eviction then takes those keys first)."""
        missing = arrangement.missing(keys)
        if missing:
            self.nodes[node].counters["misses"] += len(missing)
            answer = self._answer(node, arrangement.columns, missing)
            fault_point("upquery")
            arrangement.fill(missing, answer, read=read)
            fills = getattr(self._transient, "fills", None)
            if (read and fills is not None and self.join_caches == "lean"
                    and _answers_itself(self.nodes[node].op)):
                fills.append((arrangement, missing))

    def _answer(self, node: NodeId, columns: Columns, keys: list[Any]) -> Batch:
        entry = self.nodes[node]
        entry.counters["upqueries"] += 1
        self.counters["upqueries"] += 1
        if not columns:  # the whole output (a reader of a view read whole)
            return list(self.full_output(node))
        op = entry.op
        if isinstance(op, StatefulOperator) and not op.partial and not op.natural(columns):
            index = entry.full_indexes.get(columns)
            if index is None:
                index = entry.full_indexes[columns] = _full_index(op, columns)
                index.apply(op.snapshot() or ())
            return index.rows_of(keys)
        return op.on_upquery(columns, keys)

    def holes_below(self, node: NodeId, positions: KeyPositions, keys: Iterable[Any]) -> list[Any]:
        """The keys among ``keys`` that no state below ``node`` holds, where ``positions``
        of its output carry them: a write may drop its deltas under those keys instead of
        filling holes for them (rivulet/dataflow/holes.py). None when some state below
        needs every key."""
        try:
            found = self._holders[node]
        except KeyError:
            found = self._holders[node] = holders(self.nodes, node, positions)
        if found is None:
            return []
        return holes(found, keys)

    # ..................................................................... propagation

    def propagate(self, writes: dict[NodeId, Batch], lsn: int | None = None) -> None:
        """Push one wave of base-table deltas (write batch ``lsn``) through every node
        below them."""
        if lsn is not None:
            self.lsn = lsn
        pending: dict[NodeId, dict[NodeId, Batch]] = {}
        queue: list[NodeId] = []
        nodes = self.nodes
        for base, deltas in writes.items():
            if deltas:
                pending[base] = {-1: deltas}
                heapq.heappush(queue, base)
                for older in self._older_versions(base):
                    pending[older] = {-1: nodes[older].op.adapt(deltas)}  # type: ignore[attr-defined]
                    heapq.heappush(queue, older)
        while queue:
            node_id = heapq.heappop(queue)
            inputs = pending.pop(node_id)
            node = nodes[node_id]
            out = node.op.on_input(inputs)
            while isinstance(out, Misses):
                for miss in out:
                    self.fill(miss.node, nodes[miss.node].arrangements[miss.columns], miss.keys,
                              read=False)
                out = node.op.on_input(inputs)
            if not out:
                continue
            for arrangement in node.arrangements.values():
                arrangement.apply(out)
            for index in node.full_indexes.values():
                index.apply(out)
            for child in node.children:
                child_inputs = pending.get(child)
                if child_inputs is None:
                    pending[child] = {node_id: out}
                    heapq.heappush(queue, child)
                else:
                    child_inputs[node_id] = out

    def _older_versions(self, base: NodeId) -> list[NodeId]:
        op = self.nodes[base].op
        versions = self.versions.get(op.table.lower(), {})  # type: ignore[attr-defined]
        return [n for n in versions.values() if n != base] if len(versions) > 1 else []

    # ..................................................................... memory

    def states(self) -> Iterator[tuple[NodeId, State]]:
        """Every piece of state with its node: readers, stateful operators, indexes."""
        for node_id, node in self.nodes.items():
            op = node.op
            if isinstance(op, Reader):
                yield node_id, op.state
            elif isinstance(op, StatefulOperator):
                yield node_id, op
            for index in itertools.chain(node.arrangements.values(), node.full_indexes.values()):
                yield node_id, index

    def memory_bytes(self) -> int:
        return sum(state.byte_size() for _, state in self.states())

    def index_sharing(self) -> dict[str, int]:
        """What sharing indexes saves (shared arrangements): each index of a node's output
        is kept once however many operators read it; private indexes would keep one copy
        per reader (as many bytes for a full index; a partial one would hold the keys its
        own reader asked for)."""
        indexes = users = shared = private = 0
        for node in self.nodes.values():
            for columns, index in node.arrangements.items():
                readers = max(1, node.index_users[columns])
                size = index.byte_size()
                indexes += 1
                users += readers
                shared += size
                private += size * readers
        return {"indexes": indexes, "readers": users, "memory_bytes": shared,
                "private_memory_bytes": private}

    def enforce_memory_limit(self) -> int:
        """Evict partial state until the accounted bytes are under the limit (with 10% to
        spare, so that eviction runs in batches rather than on every write). Returns the
        number of keys evicted."""
        limit = self.memory_limit
        if limit is None:
            return 0
        total = self.memory_bytes()
        if total <= limit:
            return 0
        target = int(limit * 0.9)
        evictable = [(n, s) for n, s in self.states() if s.partial]
        evicted = 0
        while total > target and evictable:
            sizes = [max(0, s.byte_size()) for _, s in evictable]
            if not any(sizes):
                break
            i = self._random.choices(range(len(evictable)), weights=sizes)[0]
            node, state = evictable[i]
            held = max(1, _held(state))
            count = max(1, min(1000, math.ceil((total - target) * held / sizes[i])))
            keys = self._victims(node, state, count)
            if not keys:
                evictable.pop(i)
                continue
            evicted += self.evict(node, state, keys)
            total = self.memory_bytes()
        if total > limit and not self._warned_floor:
            self._warned_floor = True  # once: the state is what the program needs
            # The loop ran out of victims: what is left cannot be evicted, full state and
            # what partial states keep with no key held (indexes, bookkeeping).
            full = sum(max(0, s.byte_size()) for _, s in self.states() if not s.partial)
            log.warning(
                "memory limit %d bytes is below the %d bytes of state that cannot be evicted "
                "(%d of full state: see `rivulet explain`; the rest is the partial states' "
                "own structures); reads of partial views will miss", limit, total, full)
        return evicted

    def _victims(self, node: NodeId, state: State, count: int) -> list[Any]:
        held = _held_keys(state)
        if self.eviction == "random":
            return random_keys(held, count, self._random)
        if isinstance(state, StatefulOperator):
            deps = self.dependents.get(node, [])
            return state.clock_candidates(
                count, lambda key: any(d.recently_used(key) for _, d in deps)
            )
        return state.clock_candidates(count)  # type: ignore[attr-defined]

    def evict(self, node: NodeId, state: State, keys: list[Any]) -> int:
        """Evict ``keys`` from ``state`` and from every state below that depends on them."""
        n = state.evict(keys)
        self.nodes[node].counters["evictions"] += n
        self.counters["evictions"] += n
        if isinstance(state, Operator):
            for dep_node, dep in self.dependents.get(node, []):
                m = dep.evict(keys)
                self.nodes[dep_node].counters["evictions"] += m
                self.counters["evictions"] += m
        return n

    def evict_all(self) -> int:
        """Evict every key of every partial state (a test and operations aid)."""
        n = 0
        for node, state in list(self.states()):
            if state.partial:
                n += self.evict(node, state, list(_held_keys(state)))
        return n

    # ..................................................................... removal

    def remove_unused(self) -> list[NodeId]:
        """Drop nodes (and their state) that no view uses any more, leaves first."""
        self._holders.clear()
        removed = []
        for node_id in sorted(self.nodes, reverse=True):
            node = self.nodes[node_id]
            if node.users or node.children:
                continue
            if isinstance(node.op, Base):
                if node.op.layout is not None:  # an older version nobody reads any more
                    del self.versions[node.op.table.lower()][node.op.version]
                    del self.nodes[node_id]
                    removed.append(node_id)
                continue
            for parent in set(node.op.parents):
                self.nodes[parent].children.remove(node_id)
            for parent, columns in node.op.indexes_read():
                self.nodes[parent].index_users[columns] -= 1
            del self.nodes[node_id]
            removed.append(node_id)
        if removed:
            gone = set(removed)
            for source in list(self.dependents):
                if source in gone:
                    del self.dependents[source]
                else:
                    self.dependents[source] = [(n, s) for n, s in self.dependents[source]
                                               if n not in gone]
        return removed


def _answers_itself(op: Operator) -> bool:
    """Whether an index of ``op``'s output is a copy of rows ``op`` looks up by itself."""
    return isinstance(op, Base) or (isinstance(op, StatefulOperator) and not op.partial)


#: Rows per step when full state is built from a parent's whole output. Streaming them
#: through in chunks (storage scans a table the same way) holds one chunk at a time instead
#: of the table, twice over with a projection: memory freed after a bootstrap is not given
#: back to the system, so building a full count over 500,000 votes left the process 60 MB
#: larger than its state (18 MB in chunks of 5,000 rows).
CHUNK_ROWS = 5_000


def _chunks(rows: Iterable[Delta]) -> Iterator[list[Delta]]:
    it = iter(rows)
    while chunk := list(itertools.islice(it, CHUNK_ROWS)):
        yield chunk


def _keeps_full_state(op: Operator) -> bool:
    if isinstance(op, Reader):
        return not op.state.partial
    return isinstance(op, StatefulOperator) and not op.partial


def _held_keys(state: Any) -> dict[Any, Any]:
    """The dict whose keys are the keys a partial state holds."""
    if isinstance(state, Arrangement):
        return state.index
    if isinstance(state, StatefulOperator):
        return state.state.filled
    return state.entries


def _held(state: Any) -> int:
    return len(_held_keys(state))


def random_keys(held: dict[Any, Any], count: int, rng: random.Random) -> list[Any]:
    """``count`` keys picked at random (from a window at a random place among the first
    65,536 keys, since a dict has no random access)."""
    if not held:
        return []
    start = rng.randrange(max(1, min(len(held), 65_536) - count))
    window = list(itertools.islice(held, start, start + 4 * count))
    return rng.sample(window, min(count, len(window)))


def _full_index(op: StatefulOperator, columns: Columns) -> Arrangement | GroupIndex:
    """An index of a full stateful operator's output on ``columns`` (not its group key):
    the groups under each key, whose rows the operator makes when asked, if ``columns``
    are among its group columns; else a copy of its rows."""
    group = op.group_columns
    if group is not None and set(columns) <= set(group):
        return GroupIndex(columns, group, lambda groups: op.on_upquery(group, groups))
    return Arrangement(columns)


def _no_base_rows(table: str) -> Iterable[Delta]:
    raise RuntimeError(f"base table {table!r}: the graph has no storage to read it from")


def _no_base_lookup(table: str, columns: Columns, keys: list[Any]) -> Batch:
    raise RuntimeError(f"base table {table!r}: the graph has no storage to read it from")
