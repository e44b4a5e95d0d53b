"""The embedded database: program, durable writes, incremental views, reads.

Two kinds of threads meet here:

* **callers** check writes and commit them; they read views directly from reader state,
  never waiting on writes. Commits are grouped: a caller that takes the commit lock
  commits every write queued so far, its own and other callers', in one SQLite
  transaction (each request in its own savepoint, so one bad request fails alone), and
  hands their deltas, tagged with the batch's LSN, to
* the **propagation worker**, which pushes each batch through the dataflow graph in LSN
  order. ``settle()`` waits until it has caught up with every acknowledged write.

Committing in the caller's thread, rather than on a commit worker, matters in CPython:
every hand-off between threads waits for the GIL, and a write would need two of them.

Program changes (new tables and views) run as *migrations*: they hold the commit lock
and the graph lock, so they see base tables and the graph at the same LSN.

Partial state: a read that misses takes the graph lock and fills the hole by an upquery
(``_upquery``), in the reader's own thread. Base tables answer from storage, which may be
ahead of the graph: every committed batch's deltas stay in ``_unapplied`` until propagated,
and a base lookup subtracts those the graph has not applied, so the answer is the state at
the graph's LSN. They are registered *before* the SQLite commit, so any snapshot that sees
a batch also finds its deltas.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import logging
import pickle
import queue
import sqlite3
import threading
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from sqlglot import exp

from rivulet.engine import collector
from rivulet.engine.config import parse_size
from rivulet.dataflow.builder import Builder, BuiltView
from rivulet.dataflow.compile import bound_predicate, value_function
from rivulet.dataflow.graph import Graph
from rivulet.errors import (
    ClosedError,
    ProgramError,
    RivuletError,
    SqlError,
    StorageError,
    UpqueryTimeout,
)
from rivulet.faults import fault_point
from rivulet.engine.lag import LagHistogram
from rivulet.migrate.lazy import LazyWork
from rivulet.engine.limits import Limits
from rivulet.plan import ir
from rivulet.migrate import alter
from rivulet.plan.catalog import ADHOC_PREFIX, Catalog, is_adhoc
from rivulet.migrate.copy import plan_copy
from rivulet.plan.planner import Planner
from rivulet.plan.usage import scan_columns
from rivulet.schema import Row, SchemaError, TableSchema, coerce_row, coerce_value
from rivulet.spark.bootstrap import Bootstrapper, PlanRecordingBuilder
from rivulet.bind import statements as st
from rivulet.sql.parse import DIALECT, parse_one, split_statements
from rivulet.state.arrangement import key_function
from rivulet.state.reader import KeyedReader
from rivulet.storage.sqlite import SqliteStorage, page_cache_bytes
from rivulet.engine.unapplied import UnappliedBatches
from rivulet.engine.views import View
from rivulet.storage.writes import WriteRequest

if TYPE_CHECKING:
    from rivulet.spark.session import SparkConfig

log = logging.getLogger("rivulet")

#: At most this many queued write batches are propagated as one wave (``_take_batches``).
PROPAGATE_COALESCE = 64
#: :meth:`Database.submit_now` with ``propagate=True`` applies committed batches of at most
#: this many rows on the caller's thread; bigger ones are left to the propagation thread.
PROPAGATE_HERE_ROWS = 64
#: Write statement texts whose compiled writers ``execute`` keeps (the first ones seen:
#: an application's statements, not the literal-laden texts of one-off writes).
WRITE_TEXTS_LIMIT = 10_000

_Batch = tuple[int, dict[int, list], float]


class Database:
    """An open rivulet database. Create with :func:`rivulet.open`."""

    def __init__(
        self,
        path: str | Path,
        *,
        durability: str = "normal",
        tune_gc: bool = True,
        partial: bool = True,
        memory_limit: int | str | None = None,
        eviction: str = "lru",
        join_caches: str = "lean",
        upquery_timeout: float = 30.0,
        spark_bootstrap_rows: int | None = 1_000_000,
        spark: SparkConfig | None = None,
        prewarm: bool = True,
        reuse: bool = True,
        background_migration: bool = True,
        limits: Limits | None = None,
    ) -> None:
        self._tune_gc = tune_gc
        if tune_gc:
            tune_garbage_collector()
        self.path = Path(path)
        self.upquery_timeout = upquery_timeout
        self.limits = limits if limits is not None else Limits()
        limit = parse_size(memory_limit)
        self.graph = Graph(partial=partial, memory_limit=limit, eviction=eviction,
                           join_caches=join_caches)
        try:
            self.storage = SqliteStorage(self.path, durability=durability,
                                         cache_bytes=page_cache_bytes(limit))
        except sqlite3.DatabaseError as exc:
            raise unreadable_database(self.path, exc) from exc
        self.catalog = Catalog()
        self.graph.base_rows = self._base_rows
        self.graph.base_lookup = self._base_lookup
        self.graph.lsn = self.storage.lsn
        self.builder = PlanRecordingBuilder(self.graph, self._ensure_index, reuse=reuse,
                                            value_counts=self._value_counts,
                                            views=lambda: list(self.catalog.views.values()))
        #: Deltas of committed batches the graph has not applied yet, by LSN.
        self._unapplied = UnappliedBatches()
        #: Test hooks: name -> callable, run at named points (see ``_hook``).
        self.hooks: dict[str, Any] = {}
        self._per_thread = threading.local()  # last_insert_id of each calling thread
        self._background: queue.Queue[tuple[BuiltView, list[Any]] | None] | None = None
        self._in_flight: set[tuple[str, Any]] = set()
        self._views: dict[str, View] = {}
        self._built: dict[str, BuiltView] = {}
        self._adhoc: dict[str, View] = {}  # ad-hoc SELECT text -> the view answering it
        #: INSERT/UPDATE/DELETE text -> the table it was compiled for and its writer
        #: (parsing and compiling take far longer than the write; see :meth:`execute`)
        self._write_texts: dict[str, tuple[TableSchema, Callable[[Sequence[Any]], WriteRequest]]] = {}
        self._closed = False
        self._failure: BaseException | None = None
        self._lazy = LazyWork(self.storage, self.catalog, lambda: self._closed,
                              background=background_migration)

        self._commit_lock = threading.RLock()
        self._graph_lock = threading.RLock()
        self._pending: list[WriteRequest] = []  # appended to and swapped atomically
        #: (LSN, deltas, monotonic time the batch was acknowledged), in LSN order; None
        #: tells the propagation thread to stop. Taken and applied only under _apply_lock,
        #: by that thread or by a committer propagating its own batch (``submit_now``).
        self._batches: collections.deque[_Batch | None] = collections.deque()
        self._batch_ready = threading.Condition()
        self._apply_lock = threading.Lock()
        self._propagating = False  # the thread has finished recovery: batches may be applied
        self._applied = threading.Condition()
        self.applied_lsn = self.storage.lsn
        self.stats_counters = {"writes": 0, "commits": 0, "rows_written": 0}
        #: Called with the LSN of each committed batch (a write's, an import's) in the
        #: committing thread, once it is queued for propagation (a server tells its
        #: replicas: see rivulet/server/mysql/primary.py).
        self.commit_listeners: list[Callable[[int], None]] = []
        #: Seconds from a batch's commit to its being visible in every view (``/metrics``).
        self.visibility_lag = LagHistogram()

        self._bootstrap = Bootstrapper(
            self.graph, self.builder, self.catalog, threshold=spark_bootstrap_rows,
            spark_config=spark, database_file=self.storage.path, graph_lock=self._graph_lock,
            table_rows=lambda t: self.storage.count(self.catalog.require_table(t)))
        self.graph.bootstrapper = self._bootstrap
        self._prewarm_on_open = prewarm
        self._bootstrap.hold = True
        try:
            self._restore()
            recovering = self._bootstrap.start_recovery()
        except sqlite3.DatabaseError as exc:
            self.storage.close()
            raise unreadable_database(self.path, exc) from exc
        self._propagator = threading.Thread(target=self._propagate_loop, name="rivulet-propagate", daemon=True)
        self._propagator.start()
        if not recovering:
            self._prewarm_saved()
        self._lazy.start()  # what the last run's schema changes left to do

    # ..................................................................... start-up

    def _restore(self) -> None:
        """Rebuild the program; each node bootstraps from the stored rows as it is added,
        exactly as a view added to a running database does."""
        for statement in self.storage.program():
            bound = st.bind_text(statement.sql, self.catalog) if statement.kind == "table" else None
            if isinstance(bound, st.CreateTable):
                self._add_table(bound.schema)
            elif statement.kind == "copy":
                plan = plan_copy(self.catalog, parse_one(statement.sql))
                self._add_table(plan.target)
                if self.storage.has_table(plan.tracking):
                    self._lazy.copies[plan.target.name.lower()] = plan
            elif statement.kind == "alter":
                self._apply_schema_change(
                    alter.replay(self.catalog.require_table(statement.name), statement.sql))
            elif statement.kind == "view":
                plan = Planner(self.catalog).plan_view(
                    statement.name, parse_one(statement.sql), statement.sql
                )
                self._install_view(plan)
        for schema in self.catalog.tables.values():
            if schema.unique:
                self._ensure_unique(schema)

    def _ensure_unique(self, schema: TableSchema) -> None:
        try:
            with self.storage.transaction():
                self.storage.ensure_unique(schema)
        except sqlite3.IntegrityError:
            log.warning("table %r holds rows that share the value of a UNIQUE key: the key is "
                        "not enforced until they are removed", schema.name)

    def _base_rows(self, table: str) -> Iterator[tuple[Row, int]]:
        """Every row of base ``table`` as of the graph's LSN (the whole-table counterpart of
        ``_base_lookup``): full state built, or a whole view filled, while writes commit
        must not see batches the graph has yet to apply."""
        if self._lazy.copies:
            self._lazy.before_read(table, None, [])
        with self.storage.snapshot_scan(self.catalog.require_table(table)) as (snapshot_lsn, rows):
            later = {row: -n for row, n in self._rewind(table, snapshot_lsn, {})}  # net changes
            for row in rows:
                n = later.get(row, 0)
                if n > 0:  # inserted by a batch not applied yet
                    later[row] = n - 1
                    continue
                yield row, 1
        for row, n in later.items():
            if n < 0:  # deleted by a batch not applied yet
                yield from [(row, 1)] * -n

    def _ensure_index(self, table: str, columns: tuple[int, ...]) -> None:
        self.storage.ensure_index(self.catalog.require_table(table), columns)

    def _value_counts(self, table: str, names: tuple[str, ...]) -> tuple[int, int] | None:
        """The planner's statistics (``Storage.value_counts``), by column names."""
        schema = self.catalog.require_table(table)
        positions = {c.name.lower(): i for i, c in enumerate(schema.columns)}
        columns = tuple(positions.get(n.lower(), -1) for n in names)
        if -1 in columns:
            return None  # planned on an older version of the table
        return self.storage.value_counts(schema, columns)

    # ..................................................................... upqueries

    def _base_lookup(self, table: str, columns: tuple[int, ...], keys: list[Any]) -> list[tuple[Row, int]]:
        """Rows of base ``table`` under ``keys``, as of the graph's LSN (see module doc)."""
        schema = self.catalog.require_table(table)
        if self._lazy.copies:
            self._lazy.before_read(table, columns, keys)
        self._hook("upquery_snapshot")
        snapshot_lsn, rows = self.storage.lookup(schema, columns, keys)
        self._hook("upquery_answer")
        key_of = key_function(columns)
        wanted = set(keys)
        counts: dict[Row, int] = {}
        for row in rows:
            if key_of(row) in wanted:
                counts[row] = counts.get(row, 0) + 1
        return self._rewind(table, snapshot_lsn, counts, lambda row: key_of(row) in wanted)

    def _rewind(self, table: str, snapshot_lsn: int, counts: dict[Row, int],
                wanted: Callable[[Row], bool] | None = None) -> list[tuple[Row, int]]:
        """Rows read at ``snapshot_lsn`` taken back to the graph's LSN: the deltas of the
        batches in between (those ``wanted``) are subtracted."""
        base = self.graph.bases[table.lower()]
        for batch in self._unapplied.since(base, self.graph.lsn, snapshot_lsn):
            for row, diff in batch:
                if wanted is None or wanted(row):
                    counts[row] = counts.get(row, 0) - diff
        return [(row, n) for row, n in counts.items() if n]

    def _computed(self, plan: ir.ViewPlan) -> BuiltView:
        """The whole of a view, computed from the base tables at the graph's LSN into
        throwaway full state (``scan()`` of a partial view)."""
        with self._graph_lock:
            graph = Graph(partial=False)

            def rows(table: str) -> list[tuple[Row, int]]:
                if self._lazy.copies:
                    self._lazy.before_read(table, None, [])
                counts: dict[Row, int] = {}
                with self.storage.snapshot_scan(self.catalog.require_table(table)) as (lsn, stored):
                    for row in stored:
                        counts[row] = counts.get(row, 0) + 1
                return self._rewind(table, lsn, counts)

            graph.base_rows = rows
            for table, versions in self.graph.versions.items():
                name = self.catalog.require_table(table).name
                for version, node in sorted(versions.items(), key=lambda v: v[1] == self.graph.bases[table]):
                    copy = graph.add_base(name, version)
                    graph.nodes[copy].op.set_layout(self.graph.nodes[node].op.layout)  # type: ignore[attr-defined]
            return Builder(graph).build_view(plan)

    def _upquery(self, built: BuiltView, keys: list[Any], timeout: float | None = None,
                 read: Callable[[], Any] | None = None, *, wait: bool = True) -> Any:
        """Fill the holes among ``keys`` in a partial view's reader; returns the raw rows
        of each key, default rows included (or what ``read`` returns), read before anything
        can be evicted. With ``wait=False``, None at once if the dataflow is busy (a write
        or another fill holds it) or the view's state is still being recovered."""
        timeout = self.upquery_timeout if timeout is None else timeout
        if not wait:
            if self._bootstrap.waits(built) or not self._graph_lock.acquire(blocking=False):
                return None
        elif self._bootstrap.waits(built) and not self._bootstrap.await_loaded(timeout):
            raise UpqueryTimeout(f"view {built.plan.name!r}: its state is still being "
                                 f"recovered on Spark after {timeout} s")
        elif not self._graph_lock.acquire(timeout=timeout):
            raise UpqueryTimeout(
                f"view {built.plan.name!r}: upquery for {len(keys)} key(s) did not start "
                f"within {timeout} s (the dataflow is busy)"
            )
        try:
            self._check_open()
            if self._failure is not None:
                raise RivuletError(f"the dataflow failed: {self._failure!r}") from self._failure
            if self._built.get(built.plan.name.lower()) is not built:
                raise ProgramError(f"view {built.plan.name!r} was dropped")
            state = built.state
            missing = state.missing(keys)
            if missing:
                self.graph.nodes[built.reader_node].counters["misses"] += len(missing)
                rows = self.graph.upquery(built.root, state.key_columns, missing)
                state.fill(missing, rows)
            if read is not None:
                answers = read()
            elif isinstance(state, KeyedReader):
                # Default rows of implicit groups are decided now: whether HAVING removed a
                # group is read from the aggregate, which eviction may empty below.
                answers = {key: state.raw(key) or (
                    built.default_rows(key, False) if built.default_rows else []) for key in keys}
            else:
                answers = None
            self.graph.enforce_memory_limit()
            return answers
        finally:
            self._graph_lock.release()

    def _upquery_in_background(self, built: BuiltView, keys: list[Any]) -> None:
        """Queue the keys' upquery for the background worker (one per key at a time)."""
        fresh = [k for k in keys if (built.plan.name, k) not in self._in_flight]
        if not fresh:
            return
        self._in_flight.update((built.plan.name, k) for k in fresh)
        if self._background is None:
            self._background = queue.Queue()
            threading.Thread(target=self._background_loop, name="rivulet-upquery", daemon=True).start()
        self._background.put((built, fresh))

    def _background_loop(self) -> None:
        assert self._background is not None
        while True:
            item = self._background.get()
            if item is None:
                return
            built, keys = item
            try:
                self._upquery(built, keys, timeout=None)
            except (ClosedError, ProgramError):
                pass  # closed, or the view was dropped, while the read waited: nobody to answer
            except Exception:  # keep serving other views' background reads
                log.exception("background upquery on view %s failed", built.plan.name)
            finally:
                self._in_flight.difference_update((built.plan.name, k) for k in keys)

    def _hook(self, name: str) -> None:
        hook = self.hooks.get(name)
        if hook is not None:
            hook()

    def evict(self, view: str | None = None) -> int:
        """Evict every key of partial state (of one view's reader, or everywhere), as memory
        pressure would; reads refill what they need. Returns the keys evicted."""
        with self._graph_lock:
            if view is None:
                return self.graph.evict_all()
            built = self._built.get(view.lower())
            if built is None:
                raise ProgramError(f"unknown view {view!r}")
            state = built.state
            if not state.partial:
                return 0
            keys = list(state.entries)
            return self.graph.evict(built.reader_node, state, keys)

    # ..................................................................... program

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int | list[Row]:
        """Run one statement. Writes return the number of rows changed, once committed;
        DDL returns 0; a SELECT returns its rows (see :meth:`query`)."""
        self._check_open()
        prepared = self._adhoc.get(sql)
        if prepared is not None:  # a SELECT seen before: skip parsing
            return prepared.lookup(*params)
        request = self.write_request(sql, params, compiled_only=True)
        if request is not None:  # a write seen before, same table
            return self.submit(request)
        self.limits.check_statement(sql)
        statement = st.bind_text(sql, self.catalog)
        if isinstance(statement, st.Select):
            return self.query(sql, params)
        if isinstance(statement, (st.Insert, st.Update, st.Delete)):
            return self.submit(self._remember_writer(sql, statement)(tuple(params)))
        if params:
            raise SqlError("DDL statements take no parameters")
        return self._ddl(statement)

    def write_request(self, sql: str, params: Sequence[Any] = (), *,
                      compiled_only: bool = False) -> WriteRequest | None:
        """The request of an INSERT, UPDATE or DELETE text, to :meth:`submit` (compiled once
        per text, as :meth:`execute` does: a replica forwards its clients' writes as text).
        ``compiled_only``: None instead of compiling (parsing takes milliseconds)."""
        known = self._write_texts.get(sql)
        if known is not None and self.catalog.tables.get(known[0].name.lower()) is known[0]:
            return known[1](tuple(params))
        if compiled_only:
            return None
        self.limits.check_statement(sql)
        statement = st.bind_text(sql, self.catalog)
        if not isinstance(statement, (st.Insert, st.Update, st.Delete)):
            raise SqlError(f"not an INSERT, UPDATE or DELETE: {sql[:60]!r}")
        return self._remember_writer(sql, statement)(tuple(params))

    def _remember_writer(self, sql: str, statement: st.Insert | st.Update | st.Delete
                         ) -> Callable[[Sequence[Any]], WriteRequest]:
        make = self.writer(statement)
        if len(self._write_texts) < WRITE_TEXTS_LIMIT:
            self._write_texts[sql] = (statement.table, make)
        return make

    def execute_script(self, text: str) -> None:
        """Run several ``;``-separated statements (a program file), in order."""
        self.limits.check_statement(text)
        for statement in split_statements(text):
            self.execute(statement)

    def _ddl(self, statement: st.Statement) -> int:
        if isinstance(statement, st.CreateTable):
            self.create_table(statement)
        elif isinstance(statement, st.CreateView):
            self.create_view(statement.name, statement.text, replace=statement.replace)
        elif isinstance(statement, st.AlterTable):
            self.alter_table(statement)
        elif isinstance(statement, st.CreateTableAs):
            self.create_table_as(statement)
        elif isinstance(statement, st.Drop):
            if statement.kind == "view":
                self.drop_view(statement.name, if_exists=statement.if_exists)
            else:
                self.drop_table(statement.name, if_exists=statement.if_exists)
        else:
            raise SqlError(f"unsupported statement {type(statement).__name__}")
        return 0

    def create_table(self, statement: st.CreateTable) -> None:
        schema = statement.schema
        self.catalog.check_new_name(schema.name)
        with self._migration():
            with self.storage.transaction():
                self.storage.create_table(schema)
                self.storage.add_statement("table", schema.name, statement.sql)
            self._add_table(schema)

    def _add_table(self, schema: TableSchema) -> None:
        self.catalog.tables[schema.name.lower()] = schema
        self.catalog.layouts[schema.name.lower()] = {schema.version: alter.identity(schema)}
        self.graph.add_base(schema.name, schema.version)

    def alter_table(self, statement: st.AlterTable) -> None:
        """ALTER TABLE, applied at once and in O(1) (see rivulet/migrate/alter.py): views
        planned before keep reading the table as it was; rows whose column changed type
        are converted by the writes that touch them and by a background converter."""
        self._check_open()
        name = statement.change.old.name
        self._lazy.finish(name.lower())  # one change at a time per table
        with self._migration():
            change = alter.plan_alter(self.catalog.require_table(name), parse_one(statement.sql))
            self._check_readers(change)
            with self.storage.transaction():
                self.storage.alter(change.old, change.steps)
                self.storage.add_statement("alter", change.old.name, statement.sql)
            self._apply_schema_change(change)
        self._lazy.start()

    def _check_readers(self, change: alter.SchemaChange) -> None:
        """Refuse to drop or convert a column that a view reads (its state would be wrong)."""
        table = change.old.name.lower()
        readers: dict[str, set[str]] = {}
        for plan in self.catalog.views.values():
            if is_adhoc(plan.name):
                continue  # made again on its next use
            # As built: narrowed to what the view reads (rivulet/plan/prune.py).
            built = self._built[plan.name.lower()].plan
            for (scanned, version), columns in scan_columns(built.root).items():
                if scanned != table:
                    continue
                layout = self.catalog.layouts[table][version]
                hit = {layout[c] for c in columns if layout[c] is not None} & change.changed
                for position in hit:
                    readers.setdefault(change.old.columns[position].name, set()).add(plan.name)
        if readers:
            column, views = sorted(readers.items())[0]
            raise ProgramError(f"column {change.old.name}.{column} is read by view(s) "
                               f"{', '.join(sorted(views))}: drop them first (dropping or "
                               "converting the column would change their answers)")

    def _apply_schema_change(self, change: alter.SchemaChange) -> None:
        """The change in catalog and graph (storage has it already)."""
        name = change.old.name.lower()
        layouts = {v: alter.compose(layout, change.moved)
                   for v, layout in self.catalog.layouts[name].items()}
        layouts[change.new.version] = alter.identity(change.new)
        self.catalog.layouts[name] = layouts
        self.catalog.tables[name] = change.new
        self._drop_adhoc_views_of(name)
        self.graph.add_version(change.new.name, change.new.version, layouts)

    def _drop_adhoc_views_of(self, table: str) -> None:
        """Ad-hoc views reading ``table``: they are made again, on the table as it is now,
        on their next use."""
        users = {u.lower() for u in self.catalog.users_of_table(table)}
        for key, view in list(self._adhoc.items()):
            if view.name.lower() in users:
                if view.name.lower() in self._views:
                    self._uninstall_view(view.name)
                del self._adhoc[key]

    # ..................................................................... conversions

    def finish_conversions(self) -> None:
        """Do now what schema changes left to do lazily: rows still in a column's old
        type are converted, tables split off by ``CREATE TABLE ... AS SELECT`` copied
        (the background thread would get there too; reads never wait for it)."""
        self._check_open()
        self._lazy.finish()

    def create_table_as(self, statement: st.CreateTableAs) -> None:
        """``CREATE TABLE ... AS SELECT``: the new table holds the SELECT's rows as of now,
        copied key by key when first needed (see rivulet/migrate/copy.py)."""
        self._check_open()
        self.catalog.check_new_name(statement.plan.target.name)
        # A table being copied is copied whole before another is split off it.
        self._lazy.finish(statement.plan.source.lower(), conversions=False)
        with self._migration():
            plan = plan_copy(self.catalog, parse_one(statement.sql))
            # Keys are copied by a lookup on the old table, and in order by the background
            # pass: both read an index on the key (cheap if upqueries made one already).
            self._ensure_index(plan.source, plan.source_key)
            with self.storage.transaction():
                self.storage.create_table(plan.target)
                self.storage.create_tracking(plan.tracking, len(plan.target_key))
                self.storage.add_statement("copy", plan.target.name, statement.sql)
            self._add_table(plan.target)
            self._lazy.copies[plan.target.name.lower()] = plan
        self._lazy.start()

    def create_view(self, name: str, sql: str, *, replace: bool = False) -> View:
        """Add a view to the running program; it serves reads as soon as this returns."""
        self._check_open()
        self.limits.check_statement(sql)
        query = parse_one(sql)
        sql = sql.strip()
        replacing = replace and self.catalog.view(name) is not None
        if not replacing:
            self.limits.check_new_view(len(self._views))
            self.catalog.check_new_name(name)
        plan = Planner(self.catalog).plan_view(name, query, sql)  # reject before any change
        if replacing:
            self.drop_view(name)
        with self._migration():
            view = self._install_view(plan)
            fault_point("migration_build")
            try:
                with self.storage.transaction():
                    self.storage.add_statement("view", name, sql)
            except BaseException:
                self._uninstall_view(name)
                raise
            fault_point("migration_commit")
        return view

    def _install_view(self, plan: ir.ViewPlan) -> View:
        name = plan.name
        built = self.builder.build_view(plan)
        self._bootstrap.run()  # full state deferred to Spark (held while restoring)
        self.catalog.views[name.lower()] = plan
        self._built[name.lower()] = built
        view = self._views[name.lower()] = View(self, built)
        return view

    def _uninstall_view(self, name: str) -> None:
        built = self._built.pop(name.lower())
        self.builder.drop_view(built)
        del self.catalog.views[name.lower()]
        del self._views[name.lower()]

    def drop_view(self, name: str, *, if_exists: bool = False) -> None:
        if self.catalog.view(name) is None:
            if if_exists:
                return
            raise ProgramError(f"unknown view {name!r}")
        dependents = [
            v.name for v in self.catalog.views.values()
            if v.name.lower() != name.lower() and name.lower() in _view_sources(v.sql)
        ]
        if dependents:
            raise ProgramError(f"view {name!r} is used by view(s) {', '.join(dependents)}")
        with self._migration():
            with self.storage.transaction():
                self.storage.remove_statement("view", name)
            self._uninstall_view(name)
            for key, view in list(self._adhoc.items()):
                if view.name.lower() == name.lower():
                    del self._adhoc[key]

    def drop_table(self, name: str, *, if_exists: bool = False) -> None:
        schema = self.catalog.table(name)
        if schema is None:
            if if_exists:
                return
            raise ProgramError(f"unknown table {name!r}")
        users = [v for v in self.catalog.users_of_table(name) if not is_adhoc(v)]
        if users:
            raise ProgramError(f"table {name!r} is used by view(s) {', '.join(users)}")
        if any(p.source.lower() == name.lower() for p in self._lazy.copies.values()):
            self._lazy.finish(name.lower())  # a table copied from it needs its rows
        with self._migration():
            self._drop_adhoc_views_of(name)
            with self.storage.transaction():
                self.storage.drop_table(schema)
                for kind in ("table", "copy", "alter"):
                    self.storage.remove_statement(kind, name)
                copy = self._lazy.copies.pop(name.lower(), None)
                if copy is not None:
                    self.storage.drop_tracking(copy.tracking)
            del self.catalog.tables[name.lower()]
            del self.catalog.layouts[name.lower()]
            self.graph.drop_base(name)

    @contextmanager
    def _migration(self) -> Iterator[None]:
        """Exclusive access to storage and graph at one LSN: no commit, no propagation."""
        with self._commit_lock:
            self._wait_applied(self.storage.lsn, None)
            with self._graph_lock:
                yield

    # ..................................................................... reads

    def view(self, name: str) -> View:
        """The handle of view ``name``."""
        self._check_open()
        found = self._views.get(name.lower())
        if found is None:
            raise ProgramError(f"unknown view {name!r}")
        return found

    def views(self) -> list[str]:
        views = list(self._views.values())  # a copy: views come and go on other threads
        return [v.plan.name for v in views if not is_adhoc(v.plan.name)]

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Answer a SELECT from a view made for it on first use (cached by normalized text)."""
        return self.prepare(sql).lookup(*params)

    def prepare(self, sql: str) -> View:
        """The view that answers the ad-hoc SELECT ``sql``, made on first use.

        Queries that differ only in the length of an ``IN (?, ...)`` list, or in spacing
        and case, share one view (Noria's MySQL adapter does the same).
        """
        self._check_open()
        view = self._adhoc.get(sql)
        if view is None:
            view = self._adhoc[sql] = self._adhoc_view(sql)
        return view

    def _adhoc_view(self, sql: str) -> View:
        self.limits.check_statement(sql)
        node = parse_one(sql)
        if not isinstance(node, (exp.Select, exp.Union)):
            raise SqlError("query() takes a SELECT statement")
        for in_node in node.find_all(exp.In):
            if in_node.expressions and all(isinstance(e, exp.Placeholder) for e in in_node.expressions):
                in_node.set("expressions", [exp.Placeholder()])
        normalized = node.sql(dialect=DIALECT)
        digest = hashlib.sha1(normalized.encode()).hexdigest()[:16]
        name = f"{ADHOC_PREFIX}{digest}"
        view = self._views.get(name)
        if view is None:
            plan = Planner(self.catalog).plan_view(name, node, normalized)  # reject before any change
            with self._migration():
                view = self._views.get(name)
                if view is None:
                    self.limits.check_new_view(len(self._views))
                    view = self._install_view(plan)
        return view

    def table(self, name: str) -> Table:
        self._check_open()
        return Table(self, self.catalog.require_table(name))

    # ..................................................................... writes

    def writer(self, statement: st.Insert | st.Update | st.Delete) -> Callable[[Sequence[Any]], WriteRequest]:
        """A bound write statement compiled once: a function from its ``?`` values to the
        request to :meth:`submit` (rows checked against the schema, predicate bound).
        Compiling takes far longer than a write; the MySQL server keeps one per shape."""
        expected = statement.param_count
        table = statement.table
        kinds = [c.kind for c in table.columns]
        nullable = [c.nullable for c in table.columns]

        def check(params: Sequence[Any]) -> tuple:
            if len(params) != expected:
                raise SqlError(f"statement takes {expected} parameter(s), got {len(params)}")
            return tuple(params)

        if isinstance(statement, st.Insert):
            self.limits.check_batch(len(statement.rows))
            values = {id(e): value_function(e, [], [], with_params=True)
                      for row in statement.rows for e in row}

            def insert(params: Sequence[Any]) -> WriteRequest:
                bound = check(params)
                rows = st.insert_values(statement, bound, lambda e, p: values[id(e)]((), p))
                return WriteRequest(table, "insert", rows=check_rows(table, rows), params=bound,
                                    sql=statement.sql)

            return insert
        predicate = bound_predicate(statement.where, kinds, nullable) if statement.where else None
        key_values = None if statement.key_lookup is None else [
            [value_function(e, [], [], with_params=True) for e in key] for key in statement.key_lookup
        ]
        assign = _assigner(table, statement.assignments) if isinstance(statement, st.Update) else None

        def change(params: Sequence[Any]) -> WriteRequest:
            bound = check(params)
            keys = None
            if key_values is not None:
                keys = [_coerce_key(table, tuple(f((), bound) for f in key)) for key in key_values]
                keys = [k for k in keys if k is not None]
            if assign is None:
                return WriteRequest(table, "delete", predicate=predicate, keys=keys, params=bound,
                                    sql=statement.sql)
            return WriteRequest(table, "update", predicate=predicate, assign=assign, keys=keys,
                                params=bound, sql=statement.sql)

        return change

    def submit(self, request: WriteRequest) -> int:
        """Commit a write (with any others queued meanwhile); returns rows changed once the
        write is durable. Raises the write's own error if it was rejected."""
        self.submit_many([request])
        count = request.wait()
        if request.last_insert_id:
            self._per_thread.last_insert_id = request.last_insert_id
        return count

    @property
    def last_insert_id(self) -> int:
        """The AUTO_INCREMENT value of the calling thread's last insert into such a table
        (the first one generated, for several rows; else the last one given), as MySQL's
        ``mysql_insert_id()``; 0 before any."""
        return getattr(self._per_thread, "last_insert_id", 0)

    def submit_many(self, requests: Sequence[WriteRequest], *, wake: bool = True) -> None:
        """Commit several writes in one group (each fails alone: see its ``error``) and
        return once all are done. Callers in several threads are grouped as well."""
        self._check_open()
        self._pending.extend(requests)
        with self._commit_lock:
            if not all(r.done.is_set() for r in requests):
                group, self._pending = self._pending, []
                if self._closed:  # closed while these writes waited for the lock
                    for queued in group:
                        queued.error = ClosedError("the database is closed")
                        queued.done.set()
                else:
                    self._commit_group(group, wake)

    def submit_now(self, requests: Sequence[WriteRequest], *, propagate: bool = False) -> bool:
        """:meth:`submit_many`, if no other thread is committing or migrating right now;
        otherwise False, and nothing done (for an event loop, which must not wait).

        ``propagate``: also apply the committed batch to the views here, on this thread,
        when it is small and the propagation thread is idle (else that thread is woken). A
        busy event loop and the propagation thread take turns with the GIL; each turn
        costs two context switches and, on a loaded machine, a wait for a CPU, which came
        to several times the propagation's own cost (MySQL server, 5% writes: ~12 us of
        CPU per statement, a fifth of the server's). The views then hold the write before
        it is acknowledged."""
        self._check_open()
        if not self._commit_lock.acquire(blocking=False):
            return False
        try:
            self.submit_many(requests, wake=not propagate)
        finally:
            self._commit_lock.release()
        if propagate:
            self._propagate_here()
        return True

    def _propagate_here(self) -> None:
        """Apply the queued batches on the caller's thread if they are small, nobody else
        is applying and the graph is free; otherwise leave them to the propagation thread
        (woken). The caller is an event loop: it must not wait for an upquery (a read's
        miss in the pool) that holds the graph."""
        if self._propagating and self._apply_lock.acquire(blocking=False):
            try:
                if self._graph_lock.acquire(blocking=False):  # re-entered by _apply_batches
                    try:
                        items = self._take_batches(PROPAGATE_HERE_ROWS)
                        if items:
                            self._apply_batches(items)
                    finally:
                        self._graph_lock.release()
            finally:
                self._apply_lock.release()
        with self._batch_ready:
            if self._batches:  # too big, or another thread is applying: the thread's work
                self._batch_ready.notify()

    def _queue_batch(self, item: _Batch | None, wake: bool = True) -> None:
        with self._batch_ready:
            self._batches.append(item)
            if wake:
                self._batch_ready.notify()
        if item is not None:
            for listener in self.commit_listeners:
                listener(item[0])

    def _commit_group(self, group: list[WriteRequest], wake: bool = True) -> None:
        deltas: dict[int, list] = {}
        ok: list[WriteRequest] = []
        before = self.storage.lsn
        lsn: int | None = None
        try:
            with self.storage.transaction():
                for request in group:
                    try:
                        self._bring_up_to_date(request)
                        if self._lazy.copies:  # copied as they were, before the write
                            self._lazy.before_write(request)
                        with nullcontext() if request.atomic else self.storage.savepoint():
                            out = request.apply(self.storage)
                    except Exception as exc:  # this request fails alone; the group goes on
                        request.error = exc if isinstance(exc, RivuletError) else StorageError(
                            f"write to {request.table.name!r} failed: {exc!r}"
                        )
                        continue
                    ok.append(request)
                    if out:
                        base = self.graph.bases[request.table.name.lower()]
                        deltas.setdefault(base, []).extend(out)
                if ok and deltas:  # a group that changed no row takes no LSN
                    payload = pickle.dumps(
                        {self.graph.nodes[b].op.table: d for b, d in deltas.items()},  # type: ignore[attr-defined]
                        protocol=pickle.HIGHEST_PROTOCOL,
                    )
                    lsn = self.storage.commit_batch(payload, sum(len(d) for d in deltas.values()))
                    self._unapplied.add(lsn, deltas)  # before COMMIT: see the module docstring
                    fault_point("commit_before_durable")
        except BaseException as exc:  # the commit itself failed: nothing of the group is durable
            if lsn is not None:
                self._unapplied.discard(lsn)
            self.storage.rollback_lsn(before)
            for request in ok:
                request.error = StorageError(f"commit failed: {exc}{_disk_hint(exc, self.path)}")
            ok = []
        if ok:
            self.stats_counters["commits"] += 1
            self.stats_counters["writes"] += len(ok)
            self.stats_counters["rows_written"] += sum(r.rowcount for r in ok)
            if lsn is not None:
                self._queue_batch((lsn, deltas, time.monotonic()), wake)
            for request in ok:  # (nothing changed: what they read is what came before)
                request.lsn = lsn if lsn is not None else before
            fault_point("commit_before_ack")
        for request in group:
            request.done.set()

    def _bring_up_to_date(self, request: WriteRequest) -> None:
        """A write prepared against an older version of its table (an ALTER TABLE came in
        between) is bound again to the table as it is now, as MySQL would run it now;
        rows inserted through a table handle are carried to the newest columns."""
        current = self.catalog.tables.get(request.table.name.lower())
        if current is None:
            raise ProgramError(f"table {request.table.name!r} was dropped")
        if request.table is current:
            return
        if request.table.version != current.version:
            if request.sql:
                statement = st.bind_text(request.sql, self.catalog)
                fresh = self.writer(statement)(request.params)  # type: ignore[arg-type]
                request.kind, request.rows = fresh.kind, fresh.rows
                request.predicate, request.assign, request.keys = fresh.predicate, fresh.assign, fresh.keys
            elif request.kind == "insert":
                layout = self.catalog.layouts[current.name.lower()][request.table.version]
                request.rows = check_rows(current, [_carried(current, layout, r) for r in request.rows])
            else:
                raise ProgramError(f"table {current.name!r} was altered after this "
                                   f"{request.kind.upper()} was prepared: run it again")
        request.table = current

    def bulk_insert(self, table: str, batches: Iterable[list[Row]], *,
                    duplicate: Callable[[int, Row, str], None] | None = None,
                    expected_rows: int = 0) -> tuple[int | None, int]:
        """Insert many checked rows (``rivulet import``) in ONE transaction, as ONE write
        batch (one LSN), and hand them to the dataflow like any write.

        ``batches`` yields lists of rows already checked against the table's schema; it is
        consumed under the commit lock (other writes wait, as they would for SQLite's one
        writer anyway). A row whose primary key is stored already, or came earlier in the
        import, is skipped and passed to ``duplicate(position in its batch, row, reason)``,
        which may raise to abort the import; without it a duplicate raises ConstraintError.
        Any exception rolls everything back: no row is imported and no LSN is used.

        The log entry of an import holds no payload, only the row count: the rows are in
        the base table itself, and recovery rebuilds every state from the base tables (the
        log's deltas are never replayed), so pickling millions of rows would buy nothing.
        Views see the rows as one wave of deltas (the same path as ``insert_many``); a table
        no view reads keeps no deltas in memory at all. Returns (LSN or None, rows imported).

        ``expected_rows`` (how many ``batches`` will yield, if known): when at least
        ``BULK_INDEX_ROWS`` and at least the rows stored, the table's secondary indexes are
        dropped and built again at the end, in the same transaction (see
        ``SqliteStorage.indexes_deferred``).
        """
        from contextlib import nullcontext

        from rivulet.errors import ConstraintError

        self._check_open()
        self._lazy.finish(table.lower())  # an import is no place to copy key by key
        deltas: list = []
        lsn: int | None = None
        imported = 0
        with self._commit_lock:  # migrations hold it too: the table and its views stay put
            self._check_open()
            schema = self.catalog.require_table(table)
            base = self.graph.bases[schema.name.lower()]
            track = bool(self.graph.nodes[base].children)
            before = self.storage.lsn
            try:
                with self.storage.transaction(), (
                        self.storage.indexes_deferred(schema)
                        if expected_rows >= BULK_INDEX_ROWS
                        and expected_rows >= self.storage.count(schema)
                        else nullcontext()):
                    for rows in batches:
                        skipped = self.storage.insert_new(schema, rows)
                        for position, reason in skipped:
                            if duplicate is None:
                                raise ConstraintError(reason)
                            duplicate(position, rows[position], reason)
                        if skipped:
                            gone = {p for p, _ in skipped}
                            rows = [r for i, r in enumerate(rows) if i not in gone]
                        imported += len(rows)
                        if track:
                            deltas.extend([(row, 1) for row in rows])
                    if imported:
                        lsn = self.storage.commit_batch(None, imported)  # type: ignore[arg-type]
                        self._unapplied.add(lsn, {base: deltas})  # before COMMIT (module doc)
            except BaseException:
                if lsn is not None:
                    self._unapplied.discard(lsn)
                self.storage.rollback_lsn(before)
                raise
            if lsn is not None:
                self.stats_counters["commits"] += 1
                self.stats_counters["writes"] += 1
                self.stats_counters["rows_written"] += imported
                self._queue_batch((lsn, {base: deltas}, time.monotonic()))
        return lsn, imported

    def _propagate_loop(self) -> None:
        if not self._bootstrap.await_loaded(0):  # a recovery: load state, then apply batches
            self._bootstrap.finish_recovery(self._fail)
            self._prewarm_saved(on_spark=False)  # no migration here: it would wait on itself
        self._propagating = True
        while True:
            with self._batch_ready:
                while not self._batches:
                    self._batch_ready.wait()
            with self._apply_lock:  # a committer may have taken and applied them meanwhile
                items = self._take_batches()
                if items:
                    self._apply_batches(items)
                with self._batch_ready:
                    if self._batches and self._batches[0] is None:
                        return

    def _take_batches(self, max_rows: int | None = None) -> list[_Batch]:
        """The committed batches at the head of the queue, up to a bound (the caller holds
        _apply_lock); none if they hold more than ``max_rows`` rows. Applying the queued
        batches as one wave costs one graph-lock acquisition and one walk of the graph
        instead of one each, so a worker that falls behind catches up instead of falling
        further behind."""
        with self._batch_ready:
            queued = list(itertools.islice(self._batches, PROPAGATE_COALESCE))
            if None in queued:
                queued = queued[: queued.index(None)]
            if max_rows is not None and sum(
                    len(rows) for _, deltas, _ in queued for rows in deltas.values()) > max_rows:
                return []
            for _ in queued:
                self._batches.popleft()
        return queued  # type: ignore[return-value]

    def _apply_batches(self, items: list[tuple[int, dict[int, list], float]]) -> None:
        lsn = items[-1][0]
        if len(items) == 1:
            deltas = items[0][1]
        else:  # one wave; each base's deltas stay in LSN order
            deltas = {}
            for _, batch, _ in items:
                for base, rows in batch.items():
                    deltas.setdefault(base, []).extend(rows)
        try:
            with self._graph_lock:
                self._hook("before_propagate")
                fault_point("propagate")
                try:
                    self.graph.propagate(deltas, lsn)
                finally:
                    for applied, _, _ in items:
                        self._unapplied.discard(applied)
                self.graph.enforce_memory_limit()
        except BaseException as exc:  # a bug: views can no longer be trusted
            log.exception("propagation of LSN %s failed", lsn)
            self._failure = exc
        now = time.monotonic()
        for _, _, committed_at in items:
            self.visibility_lag.observe(now - committed_at)
        with self._applied:
            self.applied_lsn = lsn
            self._applied.notify_all()

    # ..................................................................... settle

    def settle(self, timeout: float | None = 60.0) -> None:
        """Wait until every write acknowledged so far is reflected in every view."""
        self._check_open()
        self._wait_applied(self.storage.lsn, timeout)

    def wait_for(self, lsn: int, timeout: float | None = 60.0) -> None:
        """Wait until the write batch ``lsn`` (and all before it) is reflected in every view."""
        self._check_open()
        self._wait_applied(lsn, timeout)

    def _wait_applied(self, lsn: int, timeout: float | None) -> None:
        if not self._bootstrap.await_loaded(timeout):
            raise RivuletError(f"views did not catch up with LSN {lsn} within {timeout} s "
                               "(full state is still being recovered on Spark)")
        with self._applied:
            if not self._applied.wait_for(lambda: self.applied_lsn >= lsn, timeout):
                raise RivuletError(f"views did not catch up with LSN {lsn} within {timeout} s")
        if self._failure is not None:
            raise RivuletError(f"the dataflow failed: {self._failure!r}") from self._failure

    # ..................................................................... bootstrap, prewarm

    def _fail(self, exc: BaseException) -> None:
        self._failure = exc

    def bootstrap_report(self) -> dict[str, Any]:
        """What the last bootstrap of full state did: each deferred node, its executor
        (Spark or in-process), and the time of the snapshot, the Spark jobs and the load."""
        return self._bootstrap.report.as_dict()

    def prewarm(self, view: str, keys: Iterable[Any], *, on_spark: bool | None = None) -> int:
        """Fill these keys of a partial view before anyone reads them (a key is a value, or
        a tuple of the key's values): by batched upqueries, or on Spark for many keys
        (``on_spark``; see :mod:`rivulet.engine.prewarm`). Returns how many keys were filled."""
        self._check_open()
        from rivulet.engine.prewarm import prewarm_view

        return prewarm_view(self, self.view(view), keys, on_spark=on_spark).filled

    def _prewarm_saved(self, on_spark: bool | None = None) -> None:
        """Pre-warm the keys saved at the last close (unless turned off)."""
        if self._prewarm_on_open:
            from rivulet.engine.prewarm import prewarm_saved

            prewarm_saved(self, on_spark=on_spark)

    # ..................................................................... misc

    @property
    def lsn(self) -> int:
        """LSN of the last committed write batch."""
        return self.storage.lsn

    def stats(self) -> dict[str, Any]:
        """Counters and state sizes: totals, then ``per_view`` and ``per_node`` (each
        dataflow node). ``memory_bytes`` is rivulet's own accounting of its state."""
        with self._graph_lock:
            graph = self.graph
            nodes = {}
            for node_id, node in graph.nodes.items():
                nodes[f"n{node_id}"] = _node_stats(graph, node_id)
            views = {}
            for built in self._built.values():
                misses = graph.nodes[built.reader_node].counters["misses"]
                views[built.plan.name] = {
                    "partial": built.state.partial,
                    "keys": len(built.state),
                    "memory_bytes": built.state.byte_size(),
                    "hits": max(0, built.state.reads() - misses),
                    "misses": misses,
                }
            memory = graph.memory_bytes()
            sharing = graph.index_sharing()
        return {
            **self.stats_counters,
            "lsn": self.storage.lsn,
            "applied_lsn": self.applied_lsn,
            "memory_bytes": memory,
            "memory_limit": graph.memory_limit,
            "hits": sum(v["hits"] for v in views.values()),
            "misses": sum(v["misses"] for v in views.values()),
            "upqueries": graph.counters["upqueries"],
            "evictions": graph.counters["evictions"],
            "nodes": len(graph.nodes),
            "views": len(self.views()),
            "visibility_lag": self.visibility_lag.snapshot().as_dict(),
            "shared_indexes": sharing,
            "per_view": views,
            "per_node": nodes,
        }

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("the database is closed")

    def close(self) -> None:
        """Wait for pending writes to commit and propagate, then stop the workers."""
        if self._closed:
            return
        with self._commit_lock:
            self._closed = True
        self._save_hot_keys()
        for view in self._views.values():
            view._close()
        self._queue_batch(None)
        self._propagator.join()
        self._lazy.join()
        if self._background is not None:
            self._background.put(None)
        self.storage.close()
        if self._tune_gc and collector.full_collection_due():
            collector.collect_all()  # databases closed before this one become garbage

    def _save_hot_keys(self) -> None:
        if not self._prewarm_on_open:
            return
        from rivulet.engine.prewarm import save_hot_keys

        try:
            save_hot_keys(self)
        except Exception:  # losing a cache hint must not fail close()
            log.exception("could not save the hot keys of partial views")

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<rivulet.Database {str(self.path)!r} lsn={self.storage.lsn}>"


def unreadable_database(path: Path, exc: sqlite3.DatabaseError) -> StorageError:
    """The error of an open that SQLite refused: a damaged file (not a database, malformed
    pages) says so and points at the recovery path; anything else (locked, I/O) is named
    as it is. Raised before anything is written, so the file stays as it was."""
    if isinstance(exc, sqlite3.OperationalError):
        return StorageError(f"cannot open the database in {str(path)!r}: {exc}{_disk_hint(exc, path)}")
    return StorageError(
        f"the database file {str(path / 'rivulet.db')!r} is damaged ({exc}); nothing was "
        "changed. Restore it from a backup, or salvage its rows with the sqlite3 shell's "
        "'.recover' into a new data directory (README: 'Crash safety and recovery')")


def _disk_hint(exc: BaseException, path: Path) -> str:
    """SQLite says 'database or disk is full' (ENOSPC) or 'disk I/O error' (EFBIG, EIO):
    name the directory, and that the write is not stored, so the operator knows what to do."""
    text = str(exc)
    if "disk is full" in text or "disk I/O error" in text:
        return (f" (is the disk holding {str(path)!r} full? nothing of this write was stored; "
                "writes succeed again once space is freed)")
    return ""


#: Bulk imports of at least this many rows (and of at least the rows stored) rebuild the
#: table's secondary indexes at the end instead of updating them row by row.
BULK_INDEX_ROWS = 100_000

def tune_garbage_collector() -> None:
    """Keep the cyclic collector's pauses short over millions of objects of state (see
    :mod:`rivulet.engine.collector`). Process-wide; pass ``tune_gc=False`` to
    :func:`rivulet.open` to keep the interpreter's settings."""
    collector.install()


class Table:
    """Write handle on a base table."""

    def __init__(self, db: Database, schema: TableSchema) -> None:
        self._db = db
        self.schema = schema
        self.name = schema.name
        self.columns = schema.column_names

    def insert(self, row: Sequence[Any] | dict[str, Any]) -> int:
        return self.insert_many([row])

    def insert_many(self, rows: Iterable[Sequence[Any] | dict[str, Any]]) -> int:
        """Insert rows (sequences in column order, or dicts by column name) atomically:
        either all are committed or, if any is bad, none is. Returns the count."""
        most = self._db.limits.max_batch_rows
        checked = check_rows(self.schema, itertools.islice(rows, most + 1))
        self._db.limits.check_batch(len(checked))
        if not checked:
            return 0
        return self._db.submit(WriteRequest(self.schema, "insert", rows=checked))

    def update(self, where: str = "", params: Sequence[Any] = (), **assignments: Any) -> int:
        """``UPDATE <table> SET col = value, ... [WHERE <where>]``; values are constants.

        Example: ``table.update("id = ?", [7], title="new")``. Returns rows changed.
        """
        if not assignments:
            raise SqlError("update() needs at least one column=value assignment")
        sets = ", ".join(f"`{c}` = ?" for c in assignments)
        sql = f"UPDATE `{self.name}` SET {sets}" + (f" WHERE {where}" if where else "")
        return self._db.execute(sql, [*assignments.values(), *params])  # type: ignore[return-value]

    def delete(self, where: str = "", params: Sequence[Any] = ()) -> int:
        """``DELETE FROM <table> [WHERE <where>]``. Returns rows deleted."""
        sql = f"DELETE FROM `{self.name}`" + (f" WHERE {where}" if where else "")
        return self._db.execute(sql, list(params))  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"<Table {self.name} ({', '.join(self.columns)})>"


def check_rows(table: TableSchema, rows: Iterable[Any]) -> list[Row]:
    """Every row checked against the schema; an error names the row (1-based) at fault.
    An AUTO_INCREMENT column given NULL or no value holds 0 until the commit numbers it."""
    checked = []
    if table.auto_column is not None:
        rows = _unnumbered(table, table.auto_column, rows)
    try:
        for row in rows:  # a list (an INSERT's values) as a tuple takes coerce_row's fast path
            checked.append(coerce_row(table, tuple(row) if type(row) is list else row))
    except SchemaError as exc:
        raise SchemaError(f"row {len(checked) + 1}: {exc}") from None
    return checked


def _unnumbered(table: TableSchema, column: int, rows: Iterable[Any]) -> Iterator[Any]:
    """``rows`` with 0, the number-me mark, where the AUTO_INCREMENT ``column`` is NULL or
    missing (a NULL would fail the column's NOT NULL check before the commit numbers it)."""
    name = table.columns[column].name.lower()
    for row in rows:
        if isinstance(row, dict):
            if next((v for k, v in row.items() if k.lower() == name), None) is None:
                row = {**{k: v for k, v in row.items() if k.lower() != name}, name: 0}
        elif len(row) > column and row[column] is None:
            row = (*row[:column], 0, *row[column + 1:])
        yield row


def _assigner(table: TableSchema, assignments: tuple[tuple[int, ir.Expr], ...]) -> Any:
    kinds = [c.kind for c in table.columns]
    nullable = [c.nullable for c in table.columns]
    fns = [(i, value_function(e, kinds, nullable, with_params=True)) for i, e in assignments]

    def assign(row: Row, params: tuple) -> list[Any]:
        out = list(row)
        for i, fn in fns:
            # MySQL evaluates single-table assignments left to right: `SET a = a + 1, b = a`
            # gives b the new a (standard SQL, and SQLite, would give it the old one).
            out[i] = fn(out, params)
        return out

    return assign


def _carried(table: TableSchema, layout: tuple[int | None, ...], row: Row) -> list[Any]:
    """A row of an older version of ``table`` in its newest columns (new ones take their
    defaults)."""
    values = [c.default for c in table.columns]
    for value, position in zip(row, layout):
        if position is not None:
            values[position] = value
    return values


def _coerce_key(table: TableSchema, key: tuple) -> tuple | None:
    try:
        return tuple(coerce_value(table.columns[i], v) for i, v in zip(table.primary_key, key))
    except SchemaError:
        return None


def _node_stats(graph: Graph, node_id: int) -> dict[str, Any]:
    from rivulet.dataflow.ops.reader import Reader

    node = graph.nodes[node_id]
    op = node.op
    state: Any = op.state if isinstance(op, Reader) else op if op.stateful else None
    indexes = list(node.arrangements.values()) + list(node.full_indexes.values())
    return {
        "op": op.describe(),
        "partial": bool(state is not None and state.partial),
        "memory_bytes": (state.byte_size() if state is not None else 0)
        + sum(i.byte_size() for i in indexes),
        "upqueries": node.counters["upqueries"],
        "misses": node.counters["misses"],
        "evictions": node.counters["evictions"],
    }


def _view_sources(sql: str) -> set[str]:
    try:
        return {t.name.lower() for t in parse_one(sql).find_all(exp.Table)}
    except SqlError:
        return set()
