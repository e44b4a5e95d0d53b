"""The embedded database: a facade over the engine's parts.

:class:`Database` is what :func:`rivulet.open` returns: a program of tables and views,
durable writes, incremental views, reads. The work is done by the parts it is made of,
each a module of this package, sharing one :class:`~rivulet.engine.core.Core`:

* :mod:`~rivulet.engine.program`: DDL, the views, the program restored at open;
* :mod:`~rivulet.engine.writers`: write statements compiled once per text;
* :mod:`~rivulet.engine.commit`: group commit, in the callers' threads;
* :mod:`~rivulet.engine.transaction`: transactions, their writes held until COMMIT;
* :mod:`~rivulet.engine.propagate`: committed batches through the dataflow, in LSN order;
* :mod:`~rivulet.engine.upquery`: partial state filled on demand, base tables read at the
  graph's LSN;
* :mod:`~rivulet.engine.prewarm`: partial state filled ahead of reads.

Two kinds of threads meet here: **callers** check writes and commit them (grouped:
:mod:`~rivulet.engine.commit`) and read views directly from reader state, never waiting on
writes; the **propagation thread** pushes each committed batch through the dataflow graph
(:mod:`~rivulet.engine.propagate`). ``settle()`` waits until it has caught up with every
acknowledged write.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from rivulet.bind import statements as st
from rivulet.dataflow.builder import BuiltView
from rivulet.dataflow.graph import Graph
from rivulet.engine import collector
from rivulet.engine.commit import GroupCommit, LastInsertIds, disk_hint
from rivulet.engine.config import parse_size
from rivulet.engine.core import Core
from rivulet.engine.limits import Limits
from rivulet.engine.locks import DEFAULT_TIMEOUT, LockManager, autocommit_owner, autocommit_targets
from rivulet.engine.named_locks import NamedLocks
from rivulet.engine.program import Program, read_once
from rivulet.engine.propagate import Propagation
from rivulet.engine.table import Table
from rivulet.engine.transaction import Committer, LocalCommitter, Transaction
from rivulet.engine.upquery import Upqueries
from rivulet.engine.views import View
from rivulet.engine.writers import WriteStatement, WriteTexts, compile_writer
from rivulet.errors import (
    NoSuchSavepointError,
    ParameterCountError,
    StorageError,
    TruncateReferencedError,
    UnknownObjectError,
    UnsupportedSqlError,
)
from rivulet.migrate.lazy import LazyWork
from rivulet.plan.catalog import Catalog
from rivulet.spark.bootstrap import Bootstrapper, PlanRecordingBuilder
from rivulet.sql.control import (
    ISOLATION,
    Control,
    check_isolation,
    control_statement,
    locking_read,
)
from rivulet.sql.foreign_keys import foreign_key_checks_setting
from rivulet.sql.parse import parse_one, split_statements
from rivulet.storage import foreign_keys
from rivulet.storage.backup import Backup, take_backup
from rivulet.storage.dirlock import DataDirectoryLock
from rivulet.storage.sqlite import SqliteStorage, page_cache_bytes
from rivulet.storage.writes import WriteRequest
from rivulet.values.schema import Row

if TYPE_CHECKING:
    from rivulet.spark.session import SparkConfig

log = logging.getLogger("rivulet")


class Database:
    """An open rivulet database. Create with :func:`rivulet.open`."""

    #: Whether this kind of database writes its directory, and so holds its lock (a
    #: follower only reads what another process writes).
    writes_directory: ClassVar[bool] = True

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
        #: The exclusive lock on the data directory (None for a follower, which only
        #: reads it): see rivulet/storage/dirlock.py.
        self.directory_lock = DataDirectoryLock(self.path) if self.writes_directory else None
        try:
            limits = limits if limits is not None else Limits()
            limit = parse_size(memory_limit)
            graph = Graph(partial=partial, memory_limit=limit, eviction=eviction,
                          join_caches=join_caches)
            try:
                storage = SqliteStorage(self.path, durability=durability,
                                        cache_bytes=page_cache_bytes(limit))
            except sqlite3.DatabaseError as exc:
                raise unreadable_database(self.path, exc) from exc
            catalog = Catalog()
            graph.lsn = storage.lsn
            graph_lock = threading.RLock()
            builder = PlanRecordingBuilder(graph, self._ensure_index, reuse=reuse,
                                           value_counts=self._value_counts,
                                           views=lambda: list(catalog.views.values()))
            bootstrap = Bootstrapper(
                graph, builder, catalog, threshold=spark_bootstrap_rows,
                spark_config=spark, database_file=storage.path, graph_lock=graph_lock,
                table_rows=lambda t: storage.count(catalog.require_table(t)))
            graph.bootstrapper = bootstrap
            self.core = core = Core(
                path=self.path, storage=storage, catalog=catalog, graph=graph, limits=limits,
                lazy=LazyWork(storage, catalog, lambda: core.closed,
                              background=background_migration),
                bootstrap=bootstrap, upquery_timeout=upquery_timeout,
                commit_lock=threading.RLock(), graph_lock=graph_lock, applied_lsn=storage.lsn)
            self.propagation = Propagation(core)
            self.texts = WriteTexts(catalog, limits)
            #: ``SET foreign_key_checks`` of :meth:`execute`'s writes (the embedded
            #: database's one session; each MySQL connection has its own).
            self.foreign_key_checks = True
            self.commits = GroupCommit(core, self.propagation, self.texts)
            self.upqueries = self.make_upqueries(core)
            self.program = self.make_program(core, builder, self.upqueries)
            self._last_insert_ids = LastInsertIds()
            #: GET_LOCK's table, shared by this process's sessions (MySQL connections,
            #: DB-API connections): rivulet/engine/named_locks.py.
            self.named_locks = NamedLocks()
            self._prewarm_on_open = prewarm
            bootstrap.hold = True
            try:
                self.program.restore()
                recovering = bootstrap.start_recovery()
            except sqlite3.DatabaseError as exc:
                storage.close()
                raise unreadable_database(self.path, exc) from exc
            self.propagation.start(self._recover)
            if not recovering:
                self._prewarm_saved()
            core.lazy.start()  # what the last run's schema changes left to do
        except BaseException:
            if self.directory_lock is not None:
                self.directory_lock.release()
            raise

    # ..................................................................... the parts

    def make_upqueries(self, core: Core) -> Upqueries:
        """The part that fills partial state (a subclass may fill it another way)."""
        return Upqueries(core)

    def make_program(self, core: Core, builder: PlanRecordingBuilder,
                     upqueries: Upqueries) -> Program:
        """The part that runs DDL and holds the views (a subclass may build views another
        way)."""
        return Program(core, builder, upqueries)

    def _ensure_index(self, table: str, columns: tuple[int, ...]) -> None:
        self.program.ensure_index(table, columns)

    def _value_counts(self, table: str, names: tuple[str, ...]) -> tuple[int, int] | None:
        return self.program.value_counts(table, names)

    def _recover(self) -> None:
        """Run by the propagation thread before it applies any batch: after an open that
        recovers full state on Spark, load it, then pre-warm."""
        bootstrap = self.core.bootstrap
        if not bootstrap.await_loaded(0):
            bootstrap.finish_recovery(self.core.fail)
            self._prewarm_saved(on_spark=False)  # no migration here: it would wait on itself

    # ..................................................................... shared state

    @property
    def storage(self) -> SqliteStorage:
        return self.core.storage

    @property
    def catalog(self) -> Catalog:
        return self.core.catalog

    @property
    def graph(self) -> Graph:
        return self.core.graph

    @property
    def limits(self) -> Limits:
        return self.core.limits

    @property
    def upquery_timeout(self) -> float:
        return self.core.upquery_timeout

    @property
    def hooks(self) -> dict[str, Callable[[], Any]]:
        """Test hooks: name -> callable, run at named points of the engine."""
        return self.core.hooks

    @property
    def graph_lock(self) -> threading.RLock:
        """Held, the graph stands still: no wave of propagation, upquery or migration."""
        return self.core.graph_lock

    @property
    def locks(self) -> LockManager:
        """Transactions' row and table locks (rivulet/engine/locks.py)."""
        return self.core.locks

    @property
    def closed(self) -> bool:
        return self.core.closed

    @property
    def failure(self) -> BaseException | None:
        """What broke the dataflow (its views can no longer be trusted), if anything."""
        return self.core.failure

    def on_failure(self, listener: Callable[[BaseException], None]) -> None:
        """Call ``listener`` with the cause once the database fails (:attr:`failure`), in
        the failing thread; at once if it already has (a server exits on it)."""
        self.core.failure_listeners.append(listener)
        if self.core.failure is not None:
            listener(self.core.failure)

    @property
    def applied_lsn(self) -> int:
        """LSN of the last batch every view reflects."""
        return self.core.applied_lsn

    @property
    def stats_counters(self) -> dict[str, int]:
        return self.commits.counters

    @property
    def commit_listeners(self) -> list[Callable[[int], None]]:
        """Called with the LSN of each committed batch (a write's, an import's) in the
        committing thread, once it is queued for propagation (a server tells its
        replicas: see rivulet/server/mysql/primary.py)."""
        return self.propagation.listeners

    @property
    def visibility_lag(self) -> Any:
        """Seconds from a batch's commit to its being visible in every view (``/metrics``)."""
        return self.propagation.visibility_lag

    def check_open(self) -> None:
        """Raise :class:`~rivulet.errors.ClosedError` once the database is closed."""
        self.core.check_open()

    def migration(self) -> Any:
        """A context: exclusive access to storage and graph at one LSN (no commit, no
        propagation), as every program change has."""
        return self.core.migration()

    def built_views(self) -> list[BuiltView]:
        """Every view's dataflow (the graph's readers and the nodes each view uses)."""
        return list(self.core.built.values())

    def built_view(self, name: str) -> BuiltView | None:
        return self.core.built.get(name.lower())

    # ..................................................................... statements

    def execute(self, sql: str, params: Sequence[Any] = (), *,
                foreign_key_checks: bool | None = None) -> int | list[Row]:
        """Run one statement. Writes return the number of rows changed, once committed;
        DDL returns 0; a SELECT returns its rows (see :meth:`query`). ``foreign_key_checks``:
        the caller's session's (a MySQL connection's; the HTTP API's, always on), else the
        database's own, which ``SET foreign_key_checks`` sets."""
        session = foreign_key_checks is not None
        if foreign_key_checks is None:
            foreign_key_checks = self.foreign_key_checks
        self.check_open()
        prepared = self.program.adhoc.get(sql)
        if prepared is not None:  # a SELECT seen before: skip parsing
            return prepared.lookup(*params)
        writer = self.texts.known(sql)
        if writer is not None:  # a write seen before, same table
            return self._submit_checked(writer(tuple(params)), foreign_key_checks)
        self.limits.check_statement(sql)
        control = control_statement(sql)
        if control is not None:
            return self._control(control)
        checks = foreign_key_checks_setting(sql)
        if checks is not None:
            if session:  # (the caller's session holds it, not the database)
                raise UnsupportedSqlError("SET foreign_key_checks here: each statement runs "
                                          "on its own, with the checks on (send it over a "
                                          "MySQL connection, which keeps it)")
            self.foreign_key_checks = checks
            return 0
        locking = locking_read(sql)
        if locking is not None:  # each statement commits on its own: locks nothing
            sql = locking.sql
        statement = st.bind_text(sql, self.catalog)
        if isinstance(statement, st.Select):
            return self.program.answer(sql, statement.query, params)
        if isinstance(statement, st.WRITES):
            return self._submit_checked(self.texts.remember(sql, statement)(tuple(params)),
                                        foreign_key_checks)
        if params:
            raise ParameterCountError("DDL statements take no parameters")
        self._ddl(statement, foreign_key_checks)
        return 0

    def _submit_checked(self, request: WriteRequest, foreign_key_checks: bool) -> int:
        """:meth:`submit` a write of :meth:`execute`, under its ``foreign_key_checks``."""
        request.foreign_key_checks = foreign_key_checks
        return self.submit(request)

    @staticmethod
    def _control(control: Control) -> int:
        """A transaction statement outside a transaction, where every statement commits
        on its own (as with MySQL's autocommit): COMMIT, ROLLBACK and SAVEPOINT have
        nothing to do; a transaction is begun with :meth:`transaction`."""
        if control.verb == "begin":
            raise UnsupportedSqlError("BEGIN: execute() commits each statement on its own; "
                                      "use db.transaction() (docs/transactions.md)")
        if control.verb in ("rollback_to", "release"):
            raise NoSuchSavepointError(f"SAVEPOINT {control.name} does not exist")
        if control.verb == "characteristics":
            check_isolation(control.isolation or ISOLATION)
        return 0

    def _ddl(self, statement: st.Statement, foreign_key_checks: bool | None = None) -> None:
        if foreign_key_checks is None:  # (a transaction's: the database's setting)
            foreign_key_checks = self.foreign_key_checks
        if isinstance(statement, st.CreateView):  # through the facade: a variant may wait
            self.create_view(statement.name, statement.text, replace=statement.replace)
        elif isinstance(statement, st.Truncate):
            self.truncate(statement.table, foreign_key_checks=foreign_key_checks)
        else:
            self.program.ddl(statement, foreign_key_checks=foreign_key_checks)

    def truncate(self, table: str, *, foreign_key_checks: bool = True) -> None:
        """``TRUNCATE TABLE``: every row of ``table`` deleted as one write (one LSN; views
        receive the deletes as for ``DELETE FROM``), then its AUTO_INCREMENT numbering
        restarts at 1, as MySQL's TRUNCATE does. The reset is made under the commit lock
        the delete committed under, so no insert is numbered between the two. Rows locked
        by a transaction are waited for first, as any write waits. In a transaction it is
        DDL: it commits the transaction first (MySQL's implicit commit)."""
        self.check_open()
        schema = self.catalog.require_table(table)
        for child, fk in foreign_keys.referencing(self.catalog.tables, schema.name):
            if child is not schema and foreign_key_checks:  # (MySQL's 1701)
                raise TruncateReferencedError(
                    "Cannot truncate a table referenced in a foreign key constraint "
                    f"({foreign_keys.constraint_text(child, fk)})")
        request = compile_writer(
            st.Delete(schema, None, None, 0, sql=f"DELETE FROM `{schema.name.replace('`', '``')}`"),
            self.limits)(())
        # No FOREIGN KEY checks or actions: only the table's own (or, with checks off, any)
        # reference it, and InnoDB's TRUNCATE (a new empty table) fires none.
        request.foreign_key_checks = False
        locks = self.core.locks
        owner = autocommit_owner() if locks.active and locks.table_busy(schema.name) else None
        try:
            if owner is not None:
                locks.acquire(owner, autocommit_targets(request), DEFAULT_TIMEOUT).result()
            with self.core.commit_lock:
                self.submit_many([request])
                request.wait()
                self.storage.restart_auto_increment(request.table)
        finally:
            if owner is not None:
                locks.release(owner)

    def write_request(self, sql: str, params: Sequence[Any] = (), *,
                      compiled_only: bool = False,
                      at: dt.datetime | None = None) -> WriteRequest | None:
        """The request of an INSERT, UPDATE or DELETE text, to :meth:`submit` (compiled once
        per text, as :meth:`execute` does: a replica forwards its clients' writes as text).
        ``compiled_only``: None instead of compiling (parsing takes milliseconds). ``at``:
        the instant a statement that reads the clock takes (else now)."""
        if compiled_only:
            writer = self.texts.known(sql)
            return None if writer is None else writer(tuple(params), at=at)
        return self.texts.writer(sql)(tuple(params), at=at)

    def execute_script(self, text: str) -> None:
        """Run several ``;``-separated statements (a program file), in order."""
        self.limits.check_statement(text)
        for statement in split_statements(text):
            self.execute(statement)

    # ..................................................................... program

    def create_table(self, statement: st.CreateTable) -> None:
        self.program.create_table(statement)

    def alter_table(self, statement: st.AlterTable) -> None:
        """ALTER TABLE, applied at once and in O(1) (see rivulet/migrate/alter.py)."""
        self.program.alter_table(statement)

    def create_table_as(self, statement: st.CreateTableAs) -> None:
        """``CREATE TABLE ... AS SELECT`` (see rivulet/migrate/copy.py)."""
        self.program.create_table_as(statement)

    def create_view(self, name: str, sql: str, *, replace: bool = False) -> View:
        """Add a view to the running program; it serves reads as soon as this returns."""
        return self.program.create_view(name, sql, replace=replace)

    def drop_view(self, name: str, *, if_exists: bool = False) -> None:
        self.program.drop_view(name, if_exists=if_exists)

    def drop_table(self, name: str, *, if_exists: bool = False) -> None:
        self.program.drop_table(name, if_exists=if_exists)

    def finish_conversions(self) -> None:
        """Do now what schema changes left to do lazily: rows still in a column's old
        type are converted, tables split off by ``CREATE TABLE ... AS SELECT`` copied
        (the background thread would get there too; reads never wait for it)."""
        self.check_open()
        self.core.lazy.finish()

    # ..................................................................... reads

    def view(self, name: str) -> View:
        """The handle of view ``name``."""
        return self.program.view(name)

    def views(self) -> list[str]:
        return self.program.names()

    def is_current(self, view: View) -> bool:
        """Whether ``view`` is still the program's view of its name."""
        return self.program.is_current(view)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Answer a SELECT from a view made for it on first use (cached by normalized text).
        ``FOR UPDATE`` / ``FOR SHARE`` lock nothing here (no transaction: as MySQL's
        autocommit); see :meth:`transaction`."""
        locking = locking_read(sql)
        if locking is not None:
            sql = locking.sql
        return self.program.answer(sql, params=params)

    def prepare(self, sql: str, parsed: exp.Expr | None = None) -> View:
        """The view that answers the ad-hoc SELECT ``sql``, made on first use (queries that
        differ only in the length of an ``IN (?, ...)`` list, or in spacing and case, share
        one view). ``parsed``: the statement's syntax tree, if the caller has it (a server
        that parsed the text to route it), so the text is not parsed again."""
        return self.program.prepare(sql, parsed)

    def answer_columns(self, sql: str, params: Sequence[Any] = ()) -> tuple[str, ...]:
        """The column names of the SELECT ``sql``'s answer: its view's, or for a read no
        view keeps (``SELECT ?``, one that reads the clock) its plan's."""
        view = self.program.adhoc.get(sql)
        if view is not None:  # (made by the read: no second parse)
            return view.columns
        node = parse_one(sql)
        if read_once(node):
            plan = self.program.constant_plan(node, params)
            return tuple(c.name for c in plan.root.columns[: plan.visible])
        return self.prepare(sql, node).columns

    def table(self, name: str) -> Table:
        self.check_open()
        return Table(self, self.catalog.require_table(name))

    def evict(self, view: str | None = None) -> int:
        """Evict every key of partial state (of one view's reader, or everywhere), as memory
        pressure would; reads refill what they need. Returns the keys evicted."""
        with self.graph_lock:
            if view is None:
                return self.graph.evict_all()
            built = self.built_view(view)
            if built is None:
                raise UnknownObjectError(f"unknown view {view!r}")
            state = built.state
            if not state.partial:
                return 0
            keys = list(state.entries)
            return self.graph.evict(built.reader_node, state, keys)

    # ..................................................................... writes

    def writer(self, statement: WriteStatement) -> Callable[[Sequence[Any]], WriteRequest]:
        """A bound write statement compiled once: a function from its ``?`` values to the
        request to :meth:`submit` (rows checked against the schema, predicate bound).
        Compiling takes far longer than a write; the MySQL server keeps one per shape."""
        return compile_writer(statement, self.limits)

    def submit(self, request: WriteRequest) -> int:
        """Commit a write (with any others queued meanwhile); returns rows changed once the
        write is durable. Raises the write's own error if it was rejected. While a
        transaction holds locks on its table, it first waits for the rows it writes (see
        rivulet/engine/locks.py)."""
        locks = self.core.locks
        if locks.active and any(locks.table_busy(t.name) for t in request.written):
            owner = autocommit_owner()
            try:
                locks.acquire(owner, autocommit_targets(request), DEFAULT_TIMEOUT).result()
                self.submit_many([request])
            finally:
                locks.release(owner)
        else:
            self.submit_many([request])
        count = request.wait()
        self._last_insert_ids.remember(request)
        return count

    @property
    def last_insert_id(self) -> int:
        """The AUTO_INCREMENT value of the calling thread's last insert into such a table
        (the first one generated, for several rows; else the last one given), as MySQL's
        ``mysql_insert_id()``; 0 before any."""
        return self._last_insert_ids.get()

    def submit_many(self, requests: Sequence[WriteRequest], *, wake: bool = True) -> None:
        """Commit several writes in one group (each fails alone: see its ``error``) and
        return once all are done. Callers in several threads are grouped as well."""
        self.commits.submit_many(requests, wake=wake)

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
        return self.commits.try_submit(requests, propagate=propagate)

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
        return self.commits.bulk_insert(table, batches, duplicate=duplicate,
                                        expected_rows=expected_rows)

    # ..................................................................... transactions

    def transaction(self, *, read_only: bool = False,
                    committer: Committer | None = None) -> Transaction:
        """A transaction: ``with db.transaction() as tx:`` runs ``tx.execute``,
        ``tx.query`` and ``tx.view(name).lookup`` with the transaction's own writes
        visible to it and to nobody else, and commits them as one batch on a normal exit
        (rolls them back on an exception). See docs/transactions.md. ``committer``: how
        it commits, if not through this database's group commit (a replica's forwards)."""
        self.check_open()
        if committer is None:
            committer = LocalCommitter(self.core, self.submit_many)
        tx = Transaction(self.core, self.program, self.texts, self.commits, self.upqueries,
                         committer, self._ddl, read_only=read_only)
        tx.foreign_key_checks = self.foreign_key_checks
        return tx

    # ..................................................................... settle

    def settle(self, timeout: float | None = 60.0) -> None:
        """Wait until every write acknowledged so far is reflected in every view."""
        self.check_open()
        self.core.wait_applied(self.storage.lsn, timeout)

    def wait_for(self, lsn: int, timeout: float | None = 60.0) -> None:
        """Wait until the write batch ``lsn`` (and all before it) is reflected in every view."""
        self.check_open()
        self.core.wait_applied(lsn, timeout)

    # ..................................................................... bootstrap, prewarm

    def bootstrap_report(self) -> dict[str, Any]:
        """What the last bootstrap of full state did: each deferred node, its executor
        (Spark or in-process), and the time of the snapshot, the Spark jobs and the load."""
        return self.core.bootstrap.report.as_dict()

    def prewarm(self, view: str, keys: Iterable[Any], *, on_spark: bool | None = None) -> int:
        """Fill these keys of a partial view before anyone reads them (a key is a value, or
        a tuple of the key's values): by batched upqueries, or on Spark for many keys
        (``on_spark``; see :mod:`rivulet.engine.prewarm`). Returns how many keys were filled."""
        self.check_open()
        from rivulet.engine.prewarm import prewarm_view

        return prewarm_view(self.program, self.view(view), keys, on_spark=on_spark).filled

    def _prewarm_saved(self, on_spark: bool | None = None) -> None:
        """Pre-warm the keys saved at the last close (unless turned off)."""
        if self._prewarm_on_open:
            from rivulet.engine.prewarm import prewarm_saved

            prewarm_saved(self.program, on_spark=on_spark)

    # ..................................................................... misc

    @property
    def lsn(self) -> int:
        """LSN of the last committed write batch."""
        return self.storage.lsn

    def backup(self, dest: str | Path) -> Backup:
        """Copy this database into ``dest`` (a new or empty directory) as of one commit,
        while it goes on serving and committing: every write acknowledged before the call
        is in the copy, none half. Returns the backup (its LSN, files and size); restore it
        with ``rivulet restore`` (see rivulet/storage/backup.py, docs/durability.md)."""
        self.check_open()
        return take_backup(self.path, dest)

    def stats(self) -> dict[str, Any]:
        """Counters and state sizes: totals, then ``per_view`` and ``per_node`` (each
        dataflow node). ``memory_bytes`` is rivulet's own accounting of its state."""
        with self.graph_lock:
            graph = self.graph
            nodes = {}
            for node_id in graph.nodes:
                nodes[f"n{node_id}"] = _node_stats(graph, node_id)
            views = {}
            for built in self.core.built.values():
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

    def close(self) -> None:
        """Wait for pending writes to commit and propagate, then stop the workers."""
        core = self.core
        if core.closed:
            return
        with core.commit_lock:
            core.closed = True
        self._save_hot_keys()
        for view in self.program.views.values():
            view._close()
        self.propagation.stop()
        core.lazy.join()
        self.upqueries.stop()
        self.storage.close()
        if self.directory_lock is not None:
            self.directory_lock.release()
        if self._tune_gc and collector.full_collection_due():
            collector.collect_all()  # databases closed before this one become garbage

    def _save_hot_keys(self) -> None:
        if not self._prewarm_on_open:
            return
        from rivulet.engine.prewarm import save_hot_keys

        try:
            save_hot_keys(self.program)
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
        return StorageError(
            f"cannot open the database in {str(path)!r}: {exc}{disk_hint(exc, path)}")
    return StorageError(
        f"the database file {str(path / 'rivulet.db')!r} is damaged ({exc}); nothing was "
        "changed. Restore it from a backup, or salvage its rows with the sqlite3 shell's "
        "'.recover' into a new data directory (README: 'Crash safety and recovery')")



def tune_garbage_collector() -> None:
    """Keep the cyclic collector's pauses short over millions of objects of state (see
    :mod:`rivulet.engine.collector`). Process-wide; pass ``tune_gc=False`` to
    :func:`rivulet.open` to keep the interpreter's settings."""
    collector.install()


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
