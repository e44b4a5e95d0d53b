"""Bootstrap and recovery of full state on Spark.

A full-state node (an aggregate, top-k or distinct that no key can make partial, a full
reader, the complete index of a join side) must see its parents' whole output when it is
created: at ``CREATE VIEW`` and, for every view, again at :func:`rivulet.open`. In-process,
that output is pulled row by row from SQLite through the operators above; for a large
table Spark computes it much faster from a Parquet snapshot (rivulet/spark/snapshot.py),
with the same IR compiled by rivulet/spark/compile.py.

**What Spark computes.** The node's *state*, not its output: for an aggregate, per group
the row count and what each accumulator keeps (count, sum and count, or the multiset of
values for MIN/MAX/DISTINCT), loaded with :meth:`Aggregate.load_groups`; for a distinct,
each row with its multiplicity (:meth:`Distinct.load_counts`); for a top-k, a reader or a
join index, the parent's output rows, fed through ``on_input`` / ``apply`` as an
in-process bootstrap would feed them. Results come back as Arrow batches. The queries are
:mod:`rivulet.spark.state_queries`; the session is started (and its JVM warmed up) while
the snapshot exports, by :mod:`rivulet.spark.warmup`.

**Which executor.** Per node, by the rows of the base tables the in-process path would
read for it: base tables reached through stateless operators only (a parent with full
state of its own answers from memory and counts nothing). At or above ``threshold`` rows
(``rivulet.open(..., spark_bootstrap_rows=...)``; 0 forces Spark, None never uses it) the
node is *deferred*: the graph's ``bootstrapper`` hook (:meth:`Bootstrapper.__call__`)
leaves it empty and records a :class:`Task`; so is every node whose input depends on a
deferred node, since its in-process bootstrap would read that empty state. Deferred tasks
are then run in node order (a parent before its children; a join index right after the
node it indexes), Spark ones first in one batch of jobs over one snapshot, then all loaded.

**Why nothing is lost or applied twice.** Every state the graph holds is the state at
``graph.lsn`` (graph.py). Spark's snapshot is taken at an LSN it records (one SQLite read
transaction, snapshot.py), and each task is loaded only if that LSN is the graph's:

* *CREATE VIEW* runs as a migration (commit lock and graph lock held, every committed
  batch applied): the snapshot is taken then, so its LSN is ``graph.lsn``; writes wait
  meanwhile, as they do for an in-process bootstrap.
* *Recovery* (:meth:`start_recovery`, at open): the database file is frozen (SQLite's
  backup API) before the propagation worker starts and before ``open`` returns, so its LSN
  is the storage's, which is ``graph.lsn`` (nothing is committed before open returns).
  Then ``open`` returns. Commits go on: each one registers its deltas in ``Core.unapplied``
  and queues ``(lsn, deltas)`` for the propagation worker, which first runs
  :meth:`finish_recovery` (export the frozen copy, Spark, load under the graph lock) and
  only then takes batches off its queue, in LSN order. So the loaded state is the state at
  ``graph.lsn`` = the snapshot's LSN, and the batches applied after it are exactly those
  with a greater LSN, each once. Reads of a view that uses a deferred node wait until the
  load (at most the upquery timeout; the reader looks partial meanwhile, so every read
  misses and asks); ``settle`` waits too. Views that use no deferred node are served at
  once: partial state fills by upqueries answered at ``graph.lsn`` (storage rows minus
  the unapplied batches), exactly as while the worker lags behind.

If Spark fails (no Java, a plan it cannot run), the task falls back to the in-process
path, which reads base rows as of ``graph.lsn`` (``Upqueries.base_rows``); it is slower,
not wrong.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rivulet.dataflow.builder import Builder, BuiltView
from rivulet.dataflow.ops.aggregate import Aggregate
from rivulet.dataflow.ops.base import Base, Batch, Columns, NodeId, Operator, StatefulOperator
from rivulet.dataflow.ops.distinct import Distinct
from rivulet.dataflow.ops.join import Join
from rivulet.dataflow.ops.reader import Reader
from rivulet.faults import fault_point
from rivulet.plan import ir
from rivulet.spark.state_queries import aggregate_state, distinct_counts, output_rows
from rivulet.spark.storage import database_area
from rivulet.spark.warmup import SessionStarter
from rivulet.state.arrangement import Arrangement
from rivulet.storage.sqlite import copy_database
from rivulet.values.schema import ENUM, TIME
from rivulet.values.types import column_type

if TYPE_CHECKING:
    from rivulet.dataflow.graph import Graph
    from rivulet.plan.catalog import Catalog
    from rivulet.spark.session import SparkConfig
    from rivulet.spark.snapshot import Snapshot

log = logging.getLogger("rivulet.spark")

#: Where snapshots for bootstrap are written (removed after): in the data directory, or in
#: its area of the shared directory (rivulet/spark/storage.py).
WORK_DIR = "_bootstrap"


class PlanRecordingBuilder(Builder):
    """The builder, also remembering which IR node each operator runs (``op.plan_node``):
    Spark compiles a node's input from it. One IR, two executors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.current_plan: ir.ViewPlan | None = None

    def build_view(self, plan: ir.ViewPlan) -> BuiltView:
        self.current_plan = plan
        try:
            return super().build_view(plan)
        finally:
            self.current_plan = None

    def _operator(self, node: ir.Node, parents: list[NodeId], partial: Columns | None) -> Operator:
        op = super()._operator(node, parents, partial)
        op.plan_node = node
        return op


@dataclass
class Task:
    """One deferred piece of full state: a node's own state (``columns`` None), or the
    complete index on ``columns`` of node ``target``'s output that join ``node`` reads."""

    node: NodeId
    target: NodeId
    columns: Columns | None = None
    executor: str = ""  # "spark" or "in-process", decided when it runs
    result: Any = None  # what Spark computed, until loaded

    @property
    def order(self) -> tuple[int, int]:
        """Load order: a node's state, then the indexes of its output, before any child."""
        return (self.node, 0) if self.columns is None else (self.target, 1)


@dataclass
class Report:
    """What the last bootstrap did and how long each part took (for stats and benches)."""

    lsn: int = 0
    tasks: list[dict[str, Any]] = field(default_factory=list)
    snapshot_s: float = 0.0
    session_s: float = 0.0
    spark_s: float = 0.0
    load_s: float = 0.0
    in_process_s: float = 0.0
    spark_input_rows: int = 0
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Bootstrapper:
    """The graph's bootstrap hook, the deferred tasks, and their execution (module doc)."""

    def __init__(self, graph: Graph, builder: PlanRecordingBuilder, catalog: Catalog, *,
                 threshold: int | None, spark_config: SparkConfig | None,
                 database_file: Path, table_rows: Callable[[str], int],
                 graph_lock: Any) -> None:
        self.graph = graph
        self.builder = builder
        self.catalog = catalog
        self.threshold = threshold
        self.spark_config = spark_config
        self.database_file = Path(database_file)
        self.table_rows = table_rows
        self.graph_lock = graph_lock
        self.pending: list[Task] = []
        #: While the program is restored, deferred tasks wait for :meth:`start_recovery`.
        self.hold = False
        self.report = Report()
        self._counts: dict[str, int] = {}
        self._loaded = threading.Event()
        self._loaded.set()
        self._waiting_nodes: set[NodeId] = set()  # nodes whose state a recovery still loads
        self._frozen: Path | None = None
        self._warm_session: Any = None

    # ..................................................................... the hook

    def __call__(self, node: NodeId, op: Operator) -> bool:
        """Called by ``Graph.add_node`` before ``op`` attaches: True defers the node's full
        state; a join's complete indexes may be deferred too (prepared empty here, so
        that ``attach`` takes them as they are)."""
        if self.threshold is None and not self.pending:
            return False  # nothing deferred, nothing to defer: the in-process path
        if isinstance(op, Join):
            self._defer_join_indexes(node, op)
            return False
        if not _keeps_full_state(op):
            return False
        if not self._wants_deferral(list(op.parents)):
            return False
        if isinstance(op, Reader):
            op.state.partial = True  # reads miss (and wait) until the state is loaded
        self.pending.append(Task(node, node))
        return True

    def _defer_join_indexes(self, node: NodeId, op: Join) -> None:
        sides = ((op.left, op.left_keys, op.full[0]), (op.right, op.right_keys, op.full[1]))
        for parent, columns, full in sides:
            if not (full or not self.graph.partial):
                continue
            parent, columns = self.graph.index_home(parent, columns)  # a table's, maybe
            arrangements = self.graph.nodes[parent].arrangements
            existing = arrangements.get(columns)
            if existing is not None and not existing.partial:
                continue  # complete already (or deferred already, by another join)
            if not self._wants_deferral([parent]):
                continue
            if existing is None:
                arrangements[columns] = Arrangement(columns, partial=False)
            else:  # a cache turns complete: empty now, loaded with the rest
                existing.evict(list(existing.index))
                existing.partial = False
            self.pending.append(Task(node, parent, columns))

    def _wants_deferral(self, inputs: list[NodeId]) -> bool:
        if any(self._pending_below(p) for p in inputs):
            return True
        return (self.threshold is not None
                and sum(self._rows_under(p) for p in inputs) >= self.threshold)

    # ..................................................................... measuring inputs

    def _full_index(self, node: NodeId, skip: Columns | None) -> Columns | None:
        """The columns of a complete index of ``node``'s output (``full_output`` reads it
        first), other than ``skip``."""
        entry = self.graph.nodes[node]
        for columns, index in itertools.chain(entry.full_indexes.items(),
                                              entry.arrangements.items()):
            if not index.partial and columns != skip:
                return columns
        return None

    def _rows_under(self, node: NodeId, skip: Columns | None = None) -> int:
        """Base-table rows the in-process ``full_output(node)`` would read (state in memory,
        or to be loaded before, counts nothing)."""
        if self._full_index(node, skip) is not None:
            return 0
        op = self.graph.nodes[node].op
        if isinstance(op, StatefulOperator) and not op.partial:
            return 0
        if isinstance(op, Base):
            if op.table not in self._counts:
                self._counts[op.table] = self.table_rows(op.table)
            return self._counts[op.table]
        return sum(self._rows_under(p) for p in op.parents)

    def _pending_below(self, node: NodeId, skip: Columns | None = None) -> bool:
        """Whether ``full_output(node)`` would read state that is deferred (still empty)."""
        columns = self._full_index(node, skip)
        if columns is not None:
            return any(t.target == node and t.columns == columns for t in self.pending)
        op = self.graph.nodes[node].op
        if isinstance(op, StatefulOperator) and not op.partial:
            return any(t.node == node and t.columns is None for t in self.pending)
        if isinstance(op, Base):
            return False
        return any(self._pending_below(p) for p in op.parents)

    # ..................................................................... IR of nodes

    def _plan_node(self, node: NodeId) -> ir.Node | None:
        """The IR node whose rows are ``node``'s output (None: unknown, no Spark)."""
        op = self.graph.nodes[node].op
        if isinstance(op, Base):
            if op.layout is not None or op.table.lower() in self.catalog.copies:
                return None  # an older version of an altered table, a table being copied
            schema = self.catalog.require_table(op.table)
            return ir.Scan(schema.name, tuple(
                ir.ColumnInfo.of(c.name, column_type(c), c.nullable) for c in schema.columns))
        return getattr(op, "plan_node", None)

    def _inputs(self, task: Task) -> list[NodeId]:
        if task.columns is not None:
            return [task.target]
        return list(dict.fromkeys(self.graph.nodes[task.node].op.parents))

    def _choose(self, task: Task) -> str:
        if self.threshold is None:
            return "in-process"
        if task.columns is not None:
            rows = self._rows_under(task.target, skip=task.columns)
        else:
            rows = sum(self._rows_under(p) for p in self._inputs(task))
        inputs = [self._plan_node(p) for p in self._inputs(task)]
        if rows < self.threshold or any(n is None or not _on_spark(n) for n in inputs):
            return "in-process"
        return "spark"

    # ..................................................................... running

    def run(self) -> None:
        """Run every deferred task now, from a snapshot taken now. The caller holds the
        graph at the storage's LSN (a migration, or open before any write)."""
        if self.hold:
            return  # row counts are kept through a restore: one COUNT per table
        if not self.pending:
            self._counts.clear()  # tables change between migrations
            return
        tasks = self._take()
        snapshot_lsn = self.graph.lsn
        work = self.work_dir()
        try:
            self._compute(tasks, lambda: self._snapshot(self.database_file, work, snapshot_lsn),
                          work)
            with self.graph_lock:
                self._load(tasks)
        finally:
            self._counts.clear()
            shutil.rmtree(work, ignore_errors=True)

    def start_recovery(self) -> bool:
        """At open, after the program is restored: if tasks were deferred, freeze the
        database now (at ``graph.lsn``) and leave the rest to :meth:`finish_recovery` in
        the propagation worker; False if there is nothing to do in the background."""
        self.hold = False
        if not self.pending:
            self._counts.clear()
            return False
        if not any(self._choose(t) == "spark" for t in self.pending):
            self.run()  # only in-process work: as fast here as in the background
            return False
        work = self.work_dir()
        started = time.perf_counter()
        frozen = work / "frozen.db"
        copy_database(self.database_file, frozen)
        self.report = Report(snapshot_s=time.perf_counter() - started)
        self._frozen = frozen
        self._counts.clear()
        self._waiting_nodes = {n for t in self.pending for n in (t.node, t.target)}
        self._loaded.clear()
        return True

    def finish_recovery(self, on_failure: Callable[[BaseException], None]) -> None:
        """In the propagation worker, before it applies any batch (module doc)."""
        if self._frozen is None:
            return
        frozen, self._frozen = self._frozen, None
        work = frozen.parent
        try:
            tasks = self._take()
            lsn = self.graph.lsn
            self._compute(tasks, lambda: self._snapshot(frozen, work / "parquet", lsn), work,
                          keep_report=True)
            with self.graph_lock:
                self._load(tasks)
        except BaseException as exc:  # state cannot be trusted: the dataflow fails
            log.exception("recovery of full state failed")
            on_failure(exc)
        finally:
            shutil.rmtree(work, ignore_errors=True)
            self._waiting_nodes = set()
            self._loaded.set()

    def waits(self, built: BuiltView) -> bool:
        """Whether a read of this view must wait for the recovery to load its state."""
        return not self._loaded.is_set() and not self._waiting_nodes.isdisjoint(built.nodes)

    def await_loaded(self, timeout: float | None) -> bool:
        return self._loaded.wait(timeout)

    # ..................................................................... internals

    def _take(self) -> list[Task]:
        """The pending tasks in load order, without those of nodes dropped meanwhile (a
        build that failed). A complete index prepared for a dropped join stays on its
        node, where ``full_output`` would read it: it is loaded all the same."""
        tasks = sorted(self.pending, key=lambda t: t.order)
        self.pending = []
        return [t for t in tasks if t.target in self.graph.nodes]

    def work_dir(self) -> Path:
        # where every executor reads the snapshot (rivulet/spark/storage.py)
        work = database_area(self.database_file.parent, self.spark_config) / WORK_DIR
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        return work

    def _snapshot(self, source: Path, out: Path, lsn: int) -> Snapshot:
        from rivulet.spark.snapshot import SnapshotError, take_snapshot

        started = time.perf_counter()
        snapshot = take_snapshot(source, out)
        self.report.snapshot_s += time.perf_counter() - started
        if snapshot.lsn != lsn:
            raise SnapshotError(f"the snapshot is at LSN {snapshot.lsn}, the graph at {lsn}")
        return snapshot

    def _compute(self, tasks: list[Task], snapshot: Callable[[], Snapshot], work: Path, *,
                 keep_report: bool = False) -> None:
        """Decide each task's executor and run the Spark ones (no graph lock needed: the
        IR and the snapshot are immutable). A Spark failure sends tasks in-process."""
        if not keep_report:
            self.report = Report()
        self.report.lsn = self.graph.lsn
        for task in tasks:
            task.executor = self._choose(task)
        spark_tasks = [t for t in tasks if t.executor == "spark"]
        if not spark_tasks:
            return
        try:
            session = SessionStarter(self.spark_config, work, self._warm_session)
            session.start()  # overlaps the snapshot's export
            snap = snapshot()
            spark = self._warm_session = session.result()
            self.report.session_s = session.seconds
            tables = snap.dataframes(spark)
            from rivulet.spark.compile import PlanCompiler

            compiler = PlanCompiler(tables)
        except Exception as exc:
            log.warning("bootstrap on Spark failed, falling back to in-process: %r", exc)
            self.report.error = repr(exc)
            for task in spark_tasks:
                task.executor, task.result = "in-process", None
            return
        started = time.perf_counter()
        for task in spark_tasks:
            try:
                task.result = self._spark_state(compiler, task)
            except Exception as exc:  # this plan is left to the engine
                log.warning("bootstrap of n%s on Spark failed, falling back to in-process: %r",
                            task.node, exc)
                self.report.error = repr(exc)
                task.executor, task.result = "in-process", None
                continue
            self.report.spark_input_rows += sum(self._rows_under(p) for p in self._inputs(task))
        self.report.spark_s = time.perf_counter() - started
        fault_point("spark_bootstrap")

    def _spark_state(self, compiler: Any, task: Task) -> Any:
        op = self.graph.nodes[task.node].op
        if task.columns is None and isinstance(op, Aggregate):
            agg = op.plan_node
            return aggregate_state(compiler.frame(agg.input), agg, op)
        if task.columns is None and isinstance(op, Distinct):
            return distinct_counts(compiler.frame(op.plan_node.input))
        return {p: output_rows(compiler.frame(self._plan_node(p))) for p in self._inputs(task)}

    def _load(self, tasks: list[Task]) -> None:
        """Under the graph lock, in task order: Spark results, or the in-process path."""
        for task in tasks:
            started = time.perf_counter()
            self._load_one(task)
            elapsed = time.perf_counter() - started
            if task.executor == "spark":
                self.report.load_s += elapsed
            else:
                self.report.in_process_s += elapsed
            owner = self.graph.nodes.get(task.node) or self.graph.nodes[task.target]
            self.report.tasks.append({"node": task.node, "target": task.target,
                                      "index": task.columns is not None,
                                      "op": owner.op.describe(),
                                      "executor": task.executor, "seconds": round(elapsed, 4)})
            task.result = None

    def _load_one(self, task: Task) -> None:
        graph = self.graph
        if task.columns is not None:
            arrangements = graph.nodes[task.target].arrangements
            index = arrangements[task.columns]
            if task.result is not None:
                rows: Batch = task.result[task.target]
            else:  # the node's output without this (still empty) index
                del arrangements[task.columns]
                try:
                    rows = list(graph.full_output(task.target))
                finally:
                    arrangements[task.columns] = index
            index.index.clear()
            index.rows = 0
            index.apply(rows)
            return
        op = graph.nodes[task.node].op
        if isinstance(op, Reader):
            op.state.partial = False
        if task.result is not None and isinstance(op, Aggregate):
            op.load_groups(task.result)
        elif task.result is not None and isinstance(op, Distinct):
            op.load_counts(task.result)
        elif task.result is not None:
            if any(task.result.values()):
                op.on_input(task.result)
        else:
            graph.bootstrap(op)


def _on_spark(node: ir.Node) -> bool:
    """Whether Spark can hold every column of the plan (no ENUM or TIME: see
    :data:`~rivulet.spark.values.NOT_ON_SPARK`)."""
    return not any(c.kind in (ENUM, TIME) for n in ir.walk(node) for c in n.columns)


def _keeps_full_state(op: Operator) -> bool:
    if isinstance(op, Reader):
        return not op.state.partial
    return isinstance(op, StatefulOperator) and not op.partial


__all__ = ["Bootstrapper", "PlanRecordingBuilder", "Report", "Task"]
