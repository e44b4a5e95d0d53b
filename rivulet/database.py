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
"""

from __future__ import annotations

import gc
import hashlib
import logging
import pickle
import queue
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from sqlglot import exp

from rivulet.dataflow.builder import Builder, BuiltView
from rivulet.dataflow.compile import bound_predicate, value_function
from rivulet.dataflow.graph import Graph
from rivulet.errors import ClosedError, ProgramError, RivuletError, SqlError, StorageError
from rivulet.plan import ir
from rivulet.plan.catalog import Catalog
from rivulet.plan.planner import Planner
from rivulet.schema import Row, SchemaError, TableSchema, coerce_row, coerce_value
from rivulet.sql import statements as st
from rivulet.sql.parse import DIALECT, parse_one, split_statements
from rivulet.storage.sqlite import SqliteStorage
from rivulet.views import View
from rivulet.writes import WriteRequest

log = logging.getLogger("rivulet")


class Database:
    """An open rivulet database. Create with :func:`rivulet.open`."""

    def __init__(self, path: str | Path, *, durability: str = "normal", tune_gc: bool = True) -> None:
        if tune_gc:
            tune_garbage_collector()
        self.path = Path(path)
        self.storage = SqliteStorage(self.path, durability=durability)
        self.catalog = Catalog()
        self.graph = Graph()
        self.graph.base_rows = self._base_rows
        self.builder = Builder(self.graph)
        self._views: dict[str, View] = {}
        self._built: dict[str, BuiltView] = {}
        self._adhoc: dict[str, View] = {}  # ad-hoc SELECT text -> the view answering it
        self._closed = False
        self._failure: BaseException | None = None

        self._commit_lock = threading.RLock()
        self._graph_lock = threading.RLock()
        self._pending: list[WriteRequest] = []  # appended to and swapped atomically
        self._batches: queue.Queue[tuple[int, dict[int, list]] | None] = queue.Queue()
        self._applied = threading.Condition()
        self.applied_lsn = self.storage.lsn
        self.stats_counters = {"writes": 0, "commits": 0, "rows_written": 0}

        self._restore()
        self._propagator = threading.Thread(target=self._propagate_loop, name="rivulet-propagate", daemon=True)
        self._propagator.start()

    # ..................................................................... start-up

    def _restore(self) -> None:
        """Rebuild the program; each node bootstraps from the stored rows as it is added,
        exactly as a view added to a running database does."""
        for statement in self.storage.program():
            bound = st.bind_text(statement.sql, self.catalog) if statement.kind == "table" else None
            if isinstance(bound, st.CreateTable):
                self.catalog.tables[bound.schema.name.lower()] = bound.schema
                self.graph.add_base(bound.schema.name)
            elif statement.kind == "view":
                plan = Planner(self.catalog).plan_view(
                    statement.name, parse_one(statement.sql), statement.sql
                )
                self._install_view(plan)

    def _base_rows(self, table: str) -> Iterator[tuple[Row, int]]:
        schema = self.catalog.require_table(table)
        for _, row in self.storage.scan(schema):
            yield row, 1

    # ..................................................................... program

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int | list[Row]:
        """Run one statement. Writes return the number of rows changed, once committed;
        DDL returns 0; a SELECT returns its rows (see :meth:`query`)."""
        self._check_open()
        prepared = self._adhoc.get(sql)
        if prepared is not None:  # a SELECT seen before: skip parsing
            return prepared.lookup(*params)
        statement = st.bind_text(sql, self.catalog)
        if isinstance(statement, st.Select):
            return self.query(sql, params)
        if isinstance(statement, (st.Insert, st.Update, st.Delete)):
            return self._write_statement(statement, tuple(params))
        if params:
            raise SqlError("DDL statements take no parameters")
        return self._ddl(statement)

    def execute_script(self, text: str) -> None:
        """Run several ``;``-separated statements (a program file), in order."""
        for statement in split_statements(text):
            self.execute(statement)

    def _ddl(self, statement: st.Statement) -> int:
        if isinstance(statement, st.CreateTable):
            self.create_table(statement)
        elif isinstance(statement, st.CreateView):
            self.create_view(statement.name, statement.text, replace=statement.replace)
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
            self.catalog.tables[schema.name.lower()] = schema
            self.graph.add_base(schema.name)

    def create_view(self, name: str, sql: str, *, replace: bool = False) -> View:
        """Add a view to the running program; it serves reads as soon as this returns."""
        self._check_open()
        query = parse_one(sql)
        sql = sql.strip()
        replacing = replace and self.catalog.view(name) is not None
        if not replacing:
            self.catalog.check_new_name(name)
        plan = Planner(self.catalog).plan_view(name, query, sql)  # reject before any change
        if replacing:
            self.drop_view(name)
        with self._migration():
            view = self._install_view(plan)
            try:
                with self.storage.transaction():
                    self.storage.add_statement("view", name, sql)
            except BaseException:
                self._uninstall_view(name)
                raise
        return view

    def _install_view(self, plan: ir.ViewPlan) -> View:
        name = plan.name
        built = self.builder.build_view(plan)
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
        users = [v for v in self.catalog.users_of_table(name) if not v.startswith("_q_")]
        if users:
            raise ProgramError(f"table {name!r} is used by view(s) {', '.join(users)}")
        with self._migration():
            users = {u.lower() for u in self.catalog.users_of_table(name)}
            for key, view in list(self._adhoc.items()):
                if view.name.lower() in users:
                    if view.name.lower() in self._views:
                        self._uninstall_view(view.name)
                    del self._adhoc[key]
            with self.storage.transaction():
                self.storage.drop_table(schema)
                self.storage.remove_statement("table", name)
            del self.catalog.tables[name.lower()]
            base = self.graph.bases.pop(name.lower())
            del self.graph.nodes[base]

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
        return [v.plan.name for v in self._views.values() if not v.plan.name.startswith("_q_")]

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
        node = parse_one(sql)
        if not isinstance(node, (exp.Select, exp.Union)):
            raise SqlError("query() takes a SELECT statement")
        for in_node in node.find_all(exp.In):
            if in_node.expressions and all(isinstance(e, exp.Placeholder) for e in in_node.expressions):
                in_node.set("expressions", [exp.Placeholder()])
        normalized = node.sql(dialect=DIALECT)
        digest = hashlib.sha1(normalized.encode()).hexdigest()[:16]
        name = f"_q_{digest}"
        view = self._views.get(name)
        if view is None:
            plan = Planner(self.catalog).plan_view(name, node, normalized)  # reject before any change
            with self._migration():
                view = self._views.get(name) or self._install_view(plan)
        return view

    def table(self, name: str) -> Table:
        self._check_open()
        return Table(self, self.catalog.require_table(name))

    # ..................................................................... writes

    def _write_statement(self, statement: st.Insert | st.Update | st.Delete, params: tuple) -> int:
        expected = statement.param_count
        if len(params) != expected:
            raise SqlError(f"statement takes {expected} parameter(s), got {len(params)}")
        table = statement.table
        kinds = [c.kind for c in table.columns]
        nullable = [c.nullable for c in table.columns]
        if isinstance(statement, st.Insert):
            values = st.insert_values(
                statement, params, lambda e, p: value_function(e, [], [], with_params=True)((), p)
            )
            rows = check_rows(table, values)
            return self.submit(WriteRequest(table, "insert", rows=rows))
        predicate = bound_predicate(statement.where, kinds, nullable) if statement.where else None
        keys = None
        if statement.key_lookup is not None:
            keys = [
                tuple(value_function(e, [], [], with_params=True)((), params) for e in key)
                for key in statement.key_lookup
            ]
            keys = [_coerce_key(table, k) for k in keys]
            keys = [k for k in keys if k is not None]
        if isinstance(statement, st.Delete):
            return self.submit(WriteRequest(table, "delete", predicate=predicate, keys=keys, params=params))
        assign = _assigner(table, statement.assignments)
        return self.submit(
            WriteRequest(table, "update", predicate=predicate, assign=assign, keys=keys, params=params)
        )

    def submit(self, request: WriteRequest) -> int:
        """Commit a write (with any others queued meanwhile); returns rows changed once the
        write is durable. Raises the write's own error if it was rejected."""
        self._check_open()
        self._pending.append(request)
        with self._commit_lock:
            if not request.done.is_set():
                group, self._pending = self._pending, []
                if self._closed:  # closed while this write waited for the lock
                    for queued in group:
                        queued.error = ClosedError("the database is closed")
                        queued.done.set()
                else:
                    self._commit_group(group)
        return request.wait()

    def _commit_group(self, group: list[WriteRequest]) -> None:
        deltas: dict[int, list] = {}
        ok: list[WriteRequest] = []
        before = self.storage.lsn
        try:
            with self.storage.transaction():
                for request in group:
                    try:
                        with self.storage.savepoint():
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
                if ok:
                    payload = pickle.dumps(
                        {self.graph.nodes[b].op.table: d for b, d in deltas.items()},  # type: ignore[attr-defined]
                        protocol=pickle.HIGHEST_PROTOCOL,
                    )
                    lsn = self.storage.commit_batch(payload, sum(len(d) for d in deltas.values()))
        except BaseException as exc:  # the commit itself failed: nothing of the group is durable
            self.storage.rollback_lsn(before)
            for request in ok:
                request.error = RivuletError(f"commit failed: {exc}")
            ok = []
        if ok:
            self.stats_counters["commits"] += 1
            self.stats_counters["writes"] += len(ok)
            self.stats_counters["rows_written"] += sum(r.rowcount for r in ok)
            self._batches.put((lsn, deltas))
            for request in ok:
                request.lsn = lsn
        for request in group:
            request.done.set()

    def _propagate_loop(self) -> None:
        while True:
            item = self._batches.get()
            if item is None:
                return
            lsn, deltas = item
            try:
                with self._graph_lock:
                    self.graph.propagate(deltas)
            except BaseException as exc:  # a bug: views can no longer be trusted
                log.exception("propagation of LSN %s failed", lsn)
                self._failure = exc
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
        with self._applied:
            if not self._applied.wait_for(lambda: self.applied_lsn >= lsn, timeout):
                raise RivuletError(f"views did not catch up with LSN {lsn} within {timeout} s")
        if self._failure is not None:
            raise RivuletError(f"the dataflow failed: {self._failure!r}") from self._failure

    # ..................................................................... misc

    @property
    def lsn(self) -> int:
        """LSN of the last committed write batch."""
        return self.storage.lsn

    def stats(self) -> dict[str, Any]:
        return {
            **self.stats_counters,
            "lsn": self.storage.lsn,
            "applied_lsn": self.applied_lsn,
            "nodes": len(self.graph.nodes),
            "views": len(self.views()),
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
        for view in self._views.values():
            view._close()
        self._batches.put(None)
        self._propagator.join()
        self.storage.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<rivulet.Database {str(self.path)!r} lsn={self.storage.lsn}>"


#: Generation-0 threshold of CPython's cyclic garbage collector while rivulet runs.
GC_THRESHOLD = (100_000, 50, 100)


def tune_garbage_collector() -> None:
    """Collect cycles less often: the dataflow allocates millions of short-lived tuples and
    dicts that never form cycles, and with the default thresholds (700, 10, 10) collection
    took a quarter of the write path's time at a million rows of state. Process-wide;
    pass ``tune_gc=False`` to :func:`rivulet.open` to keep the interpreter's settings."""
    if gc.get_threshold()[0] < GC_THRESHOLD[0]:
        gc.set_threshold(*GC_THRESHOLD)


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
        checked = check_rows(self.schema, rows)
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
    """Every row checked against the schema; an error names the row (1-based) at fault."""
    checked = []
    try:
        for row in rows:
            checked.append(coerce_row(table, row))
    except SchemaError as exc:
        raise SchemaError(f"row {len(checked) + 1}: {exc}") from None
    return checked


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


def _coerce_key(table: TableSchema, key: tuple) -> tuple | None:
    try:
        return tuple(coerce_value(table.columns[i], v) for i, v in zip(table.primary_key, key))
    except SchemaError:
        return None


def _view_sources(sql: str) -> set[str]:
    try:
        return {t.name.lower() for t in parse_one(sql).find_all(exp.Table)}
    except SqlError:
        return set()
