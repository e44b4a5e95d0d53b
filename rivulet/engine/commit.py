"""Group commit: writes checked by their callers, committed together, handed to propagation.

A caller that takes the commit lock commits every write queued so far, its own and other
callers', in one SQLite transaction (each request in its own savepoint, so one bad request
fails alone), and queues their deltas, tagged with the batch's LSN, for propagation. A
transaction's COMMIT is one such request, holding all its writes (docs/transactions.md).
Committing in the caller's thread, rather than on a commit thread, matters in CPython:
every hand-off between threads waits for the GIL, and a write would need two of them.

A batch's deltas are registered in ``Core.unapplied`` *before* the SQLite commit, so any
snapshot that sees the batch also finds its deltas (see :mod:`rivulet.engine.upquery`).
"""

from __future__ import annotations

import pickle
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from pathlib import Path

from rivulet.bind import statements as st
from rivulet.engine.core import Core
from rivulet.engine.joined import JoinedWriteRequest, committed_parts
from rivulet.engine.propagate import CommittedBatch, Propagation
from rivulet.engine.writers import WriteTexts, carried, check_rows, compile_writer
from rivulet.errors import (
    ClosedError,
    ConstraintError,
    ProgramError,
    RivuletError,
    StorageError,
    StorageFailedError,
)
from rivulet.faults import fault_point
from rivulet.state.arrangement import Delta
from rivulet.storage import foreign_keys
from rivulet.storage.upsert import OnDuplicate
from rivulet.storage.writes import TransactionWrite, WriteRequest
from rivulet.values.schema import Row, TableSchema

#: Bulk imports of at least this many rows (and of at least the rows stored) rebuild the
#: table's secondary indexes at the end instead of updating them row by row.
BULK_INDEX_ROWS = 100_000


class GroupCommit:
    """Commits write requests in groups (see the module docstring)."""

    def __init__(self, core: Core, propagation: Propagation, texts: WriteTexts) -> None:
        self.core = core
        self.propagation = propagation
        self.texts = texts
        self._pending: list[WriteRequest] = []  # appended to and swapped atomically
        self.counters = {"writes": 0, "commits": 0, "rows_written": 0}

    def submit_many(self, requests: Sequence[WriteRequest], *, wake: bool = True) -> None:
        """Commit several writes in one group (each fails alone: see its ``error``) and
        return once all are done. Callers in several threads are grouped as well."""
        core = self.core
        core.check_open()
        self._pending.extend(requests)
        with core.commit_lock:
            if not all(r.done.is_set() for r in requests):
                group, self._pending = self._pending, []
                refused = _refusal(core)
                if refused is not None:  # closed or failed while these writes waited
                    for queued in group:
                        queued.error = refused
                        queued.done.set()
                else:
                    self._commit_group(group, wake)

    def try_submit(self, requests: Sequence[WriteRequest], *, propagate: bool = False) -> bool:
        """:meth:`submit_many`, if no other thread is committing or migrating right now;
        otherwise False, and nothing done (see ``Database.submit_now``)."""
        core = self.core
        core.check_open()
        if not core.commit_lock.acquire(blocking=False):
            return False
        try:
            self.submit_many(requests, wake=not propagate)
        finally:
            core.commit_lock.release()
        if propagate:
            self.propagation.apply_here()
        return True

    def _commit_group(self, group: list[WriteRequest], wake: bool = True) -> None:
        core = self.core
        storage, graph = core.storage, core.graph
        deltas: dict[int, list] = {}
        ok: list[WriteRequest] = []
        before = storage.lsn
        lsn: int | None = None
        try:
            with storage.transaction():
                for request in group:
                    if request.kind == "transaction":  # see _commit_transaction
                        try:
                            self._commit_transaction(request, deltas)  # type: ignore[arg-type]
                        except Exception as exc:  # rolled back whole; the group goes on
                            request.error = exc if isinstance(exc, RivuletError) else (
                                StorageError(f"commit of a transaction failed: {exc!r}"))
                            continue
                        ok.append(request)
                        continue
                    try:
                        self.bring_up_to_date(request)
                        if core.lazy.copies:  # copied as they were, before the write
                            core.lazy.before_write(request)
                        checked = request.foreign_key_checks and foreign_keys.involved(
                            core.catalog.tables, request.table)
                        with (nullcontext() if request.atomic and not checked
                              else storage.savepoint()):
                            if checked and request.on_duplicate is OnDuplicate.IGNORE:
                                request.rows = foreign_keys.rows_with_parents(
                                    core.catalog.tables, request.table, request.rows,
                                    foreign_keys.StoredRows(storage, core.catalog.tables))
                            out = request.apply(storage)
                            cascaded = self._foreign_keys(request, out) if checked else []
                    except Exception as exc:  # this request fails alone; the group goes on
                        request.error = exc if isinstance(exc, RivuletError) else StorageError(
                            f"write to {request.table.name!r} failed: {exc!r}"
                        )
                        continue
                    ok.append(request)
                    if out:
                        base = graph.bases[request.table.name.lower()]
                        deltas.setdefault(base, []).extend(out)
                    for schema, more in cascaded:
                        deltas.setdefault(graph.bases[schema.name.lower()], []).extend(more)
                if ok and deltas:  # a group that changed no row takes no LSN
                    payload = pickle.dumps(
                        {graph.base(b).table: d for b, d in deltas.items()},
                        protocol=pickle.HIGHEST_PROTOCOL,
                    )
                    lsn = storage.commit_batch(payload, sum(len(d) for d in deltas.values()))
                    core.unapplied.add(lsn, deltas)  # before COMMIT: see the module docstring
                    fault_point("commit_before_durable")
        except BaseException as exc:  # the commit itself failed: nothing of the group is durable
            if lsn is not None:
                core.unapplied.discard(lsn)
            storage.rollback_lsn(before)
            reason = str(exc) if isinstance(exc, StorageError) else f"commit failed: {exc}"
            for request in ok:
                request.error = StorageError(f"{reason}{disk_hint(exc, core.path)}")
            ok = []
            check_after_failed_commit(core, exc, before)
        if ok:
            self.counters["commits"] += 1
            self.counters["writes"] += len(ok)
            self.counters["rows_written"] += sum(r.rowcount for r in ok)
            if lsn is not None:
                self.propagation.queue(CommittedBatch(lsn, deltas, time.monotonic()), wake)
            for request in ok:  # (nothing changed: what they read is what came before)
                request.lsn = lsn if lsn is not None else before
            fault_point("commit_before_ack")
        for request in group:
            request.done.set()

    def _foreign_keys(self, request: WriteRequest, out: list[Delta]
                      ) -> list[tuple[TableSchema, list[Delta]]]:
        """The FOREIGN KEY checks and actions of a write just applied (in its savepoint:
        a failure undoes the write too); the deltas of the rows its actions changed."""
        tables = self.core.catalog.tables
        if request.upsert:
            foreign_keys.check_upsert(tables, request.table, request.on_duplicate)
            changes: list[foreign_keys.RowChange] = [(None, row) for row, sign in out
                                                     if sign > 0]
        else:
            changes = foreign_keys.statement_changes(request.kind, out)
        lazy = self.core.lazy
        rows = foreign_keys.StoredRows(self.core.storage, tables, None if not lazy.copies else (
            lambda schema, row: lazy.before_write(WriteRequest(schema, "insert", rows=[row]))))
        enforcer = foreign_keys.Enforcer(tables, rows)
        enforcer.statement(request.table, changes)
        request.rowcount -= enforcer.taken
        return rows.deltas()

    def _commit_transaction(self, request: TransactionWrite,
                            deltas: dict[int, list]) -> None:
        """A transaction's changes, in a savepoint of their own inside the group's SQLite
        transaction: each table checked to be the version the transaction wrote to, each
        row it found checked to be stored still as it found it, then stored (see
        :class:`~rivulet.storage.writes.TransactionWrite`). Its deltas join the group's only
        once all of it is stored."""
        core = self.core
        catalog, graph, storage = core.catalog, core.graph, core.storage
        for part in request.changes:
            current = catalog.tables.get(part.schema.name.lower())
            if current is None:
                raise ProgramError(f"table {part.schema.name!r} was dropped while the "
                                   "transaction wrote to it; the transaction was rolled back")
            if current.version != part.schema.version:
                raise ProgramError(f"table {current.name!r} was altered while the transaction "
                                   "wrote to it; the transaction was rolled back")
            part.schema = current
        with storage.savepoint():
            if isinstance(request, JoinedWriteRequest):  # its rows found as stored now
                request.parts = committed_parts(core, request)
            if core.lazy.copies:  # keys of tables being copied (or copied from): copied first
                for part in request.changes:
                    touched = [row for change in part.rows.values() for row in change
                               if row is not None]
                    core.lazy.before_write(WriteRequest(part.schema, "insert", rows=touched))
            changed = request.apply_changes(storage)
            # FOREIGN KEYs checked again (what commits since its statements ran changed),
            # for the tables that have or are referenced by one (no others: nothing to check)
            verified = [part for part in request.changes if request.foreign_key_checks
                        and foreign_keys.involved(catalog.tables, part.schema)]
            if verified:
                verifier = foreign_keys.Enforcer(catalog.tables, foreign_keys.StoredRows(
                    storage, catalog.tables), verify=True)
                for part in verified:
                    verifier.statement(part.schema, [(old, new) for old, new in
                                                     part.rows.values() if old != new])
        for schema, out in changed:
            if out:
                deltas.setdefault(graph.bases[schema.name.lower()], []).extend(out)

    def bring_up_to_date(self, request: WriteRequest) -> None:
        """A write prepared against an older version of its table (an ALTER TABLE came in
        between) is bound again to the table as it is now, as MySQL would run it now;
        rows inserted through a table handle are carried to the newest columns."""
        catalog = self.core.catalog
        current = catalog.tables.get(request.table.name.lower())
        if current is None:
            raise ProgramError(f"table {request.table.name!r} was dropped")
        if request.table is current:
            return
        if request.table.version != current.version:
            if request.sql:
                statement = st.bind_text(request.sql, catalog)
                if not isinstance(statement, (st.Insert, st.Update, st.Delete)):
                    raise ProgramError(f"not a write any more: {request.sql[:60]!r}")
                given = request.params[:-1] if request.at is not None else request.params
                fresh = compile_writer(statement, self.texts.limits)(given, at=request.at)
                request.kind, request.rows = fresh.kind, fresh.rows
                request.params, request.at = fresh.params, fresh.at
                request.predicate, request.assign = fresh.predicate, fresh.assign
                request.keys, request.limit = fresh.keys, fresh.limit
            elif request.kind == "insert":
                layout = catalog.layouts[current.name.lower()][request.table.version]
                request.rows = check_rows(current,
                                          [carried(current, layout, r) for r in request.rows])
            else:
                raise ProgramError(f"table {current.name!r} was altered after this "
                                   f"{request.kind.upper()} was prepared: run it again")
        request.table = current

    def bulk_insert(self, table: str, batches: Iterable[list[Row]], *,
                    duplicate: Callable[[int, Row, str], None] | None = None,
                    expected_rows: int = 0) -> tuple[int | None, int]:
        """Insert many checked rows in one transaction, as one write batch (see
        ``Database.bulk_insert``)."""
        core = self.core
        storage, graph = core.storage, core.graph
        core.check_open()
        core.check_writable()
        core.lazy.finish(table.lower())  # an import is no place to copy key by key
        deltas: list = []
        lsn: int | None = None
        imported = 0
        with core.commit_lock:  # migrations hold it too: the table and its views stay put
            core.check_open()
            schema = core.catalog.require_table(table)
            base = graph.bases[schema.name.lower()]
            track = bool(graph.nodes[base].children)
            before = storage.lsn
            # Each row's FOREIGN KEYs checked once it is stored: a row without a parent
            # fails the import whole (1452), as it fails LOAD DATA in MySQL.
            checker = foreign_keys.Enforcer(
                core.catalog.tables, foreign_keys.StoredRows(storage, core.catalog.tables),
                verify=True) if schema.foreign_keys else None
            try:
                with storage.transaction(), (
                        storage.indexes_deferred(schema)
                        if expected_rows >= BULK_INDEX_ROWS
                        and expected_rows >= storage.count(schema)
                        else nullcontext()):
                    for rows in batches:
                        skipped = storage.insert_new(schema, rows)
                        for position, reason in skipped:
                            if duplicate is None:
                                raise ConstraintError(reason)
                            duplicate(position, rows[position], reason)
                        if skipped:
                            gone = {p for p, _ in skipped}
                            rows = [r for i, r in enumerate(rows) if i not in gone]
                        if checker is not None:
                            checker.statement(schema, [(None, row) for row in rows])
                        imported += len(rows)
                        if track:
                            deltas.extend([(row, 1) for row in rows])
                    if imported:
                        lsn = storage.commit_batch(None, imported)
                        core.unapplied.add(lsn, {base: deltas})  # before COMMIT (module doc)
            except BaseException as exc:
                if lsn is not None:
                    core.unapplied.discard(lsn)
                storage.rollback_lsn(before)
                check_after_failed_commit(core, exc, before)
                if isinstance(exc, RivuletError) or not isinstance(exc, Exception):
                    raise
                raise StorageError(f"import into {schema.name!r} failed, nothing of it was "
                                   f"stored: {exc}{disk_hint(exc, core.path)}") from exc
            if lsn is not None:
                self.counters["commits"] += 1
                self.counters["writes"] += 1
                self.counters["rows_written"] += imported
                self.propagation.queue(CommittedBatch(lsn, {base: deltas}, time.monotonic()))
        return lsn, imported


def _refusal(core: Core) -> RivuletError | None:
    """Why no write can be committed now, if none can."""
    if core.closed:
        return ClosedError("the database is closed")
    try:
        core.check_writable()
    except StorageFailedError as exc:
        return exc
    return None


def check_after_failed_commit(core: Core, exc: BaseException, before: int) -> None:
    """After a commit failed, is storage where this process believes it is?

    A failed commit rolls back whole, so the log must still end at ``before``: then the
    failure was the write's own (a full disk, a transient I/O error) and the next commit
    can succeed. If instead the log ends elsewhere (another process wrote it), or it cannot
    be read, or the transaction could not be closed, no later commit can be trusted (each
    would fail, or views would miss rows they never saw): the database fails
    (:class:`StorageFailedError`), refuses writes and reads, and a server exits for its
    supervisor to restart it, which recovers from the durable log.
    """
    try:
        durable = core.storage.durable_lsn()
    except Exception as check:  # noqa: BLE001 (any failure here means storage is unknown)
        core.fail(StorageFailedError(f"a commit failed ({exc}) and the log cannot be read "
                                     f"back: {check}{disk_hint(check, core.path)}"))
        return
    if durable != before:
        core.fail(StorageFailedError(
            f"a commit failed ({exc}) and the log on disk ends at LSN {durable} where this "
            f"process committed LSN {before}: another process wrote {str(core.path)!r}"))


class LastInsertIds:
    """The AUTO_INCREMENT value of each calling thread's last insert (MySQL's
    ``mysql_insert_id()`` is per connection; a thread is the embedded API's connection)."""

    def __init__(self) -> None:
        self._per_thread = threading.local()

    def remember(self, request: WriteRequest) -> None:
        if request.last_insert_id:
            self._per_thread.last_insert_id = request.last_insert_id

    def get(self) -> int:
        return getattr(self._per_thread, "last_insert_id", 0)


def disk_hint(exc: BaseException, path: Path) -> str:
    """SQLite says 'database or disk is full' (ENOSPC) or 'disk I/O error' (EFBIG, EIO):
    name the directory, and that the write is not stored, so the operator knows what to do."""
    text = str(exc)
    if "disk is full" in text or "disk I/O error" in text:
        return (f" (is the disk holding {str(path)!r} full? nothing of this write was stored; "
                "writes succeed again once space is freed)")
    return ""
