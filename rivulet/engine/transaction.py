"""Transactions: one connection's writes, held until COMMIT and committed as one batch.

``with db.transaction() as tx:`` (and the MySQL server's and DB-API's transactions, built
on the same class) runs each statement at once against the rows committed now plus the
transaction's own writes, and keeps what it changes in a write set (per table, by row
identity: the committed row it found, the row it holds now). Nothing reaches storage or the
views before :meth:`Transaction.commit`, which hands the write set to the group commit as
one request: checked, stored and propagated all together, with one LSN, or not at all.

Reads that use no table the transaction wrote are the shared views' answers; the others
are computed from one snapshot of storage with the write set laid over it. Locking reads
(``FOR UPDATE``, ``FOR SHARE``) and writes take row or table locks first
(rivulet/engine/locks.py), held until the transaction ends, and read the newest committed
rows. The design, the isolation level (READ COMMITTED) and why: docs/transactions.md.

A transaction is used by one thread at a time, as a connection is.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlglot import exp

from rivulet.bind import statements as st
from rivulet.engine.commit import GroupCommit
from rivulet.engine.core import Core
from rivulet.engine.joined import JoinedWriteRequest, joined_parts
from rivulet.engine.locks import DEFAULT_TIMEOUT, IX, Locks, Target, X, row_locks, table_lock
from rivulet.engine.program import Program, read_once
from rivulet.engine.upquery import Upqueries, whole_answer
from rivulet.engine.views import View
from rivulet.engine.writers import WriteTexts, stored_keys
from rivulet.errors import (
    ConstraintError,
    DeadlockError,
    NoSuchSavepointError,
    ParameterCountError,
    ReadOnlyWriteError,
    TransactionError,
    UnsupportedSqlError,
)
from rivulet.plan import ir
from rivulet.plan.bound import bound_plan
from rivulet.plan.params import values_by_param
from rivulet.sql.control import (
    ISOLATION,
    Control,
    check_isolation,
    control_statement,
    locking_read,
)
from rivulet.sql.foreign_keys import foreign_key_checks_setting
from rivulet.sql.limit_params import bind_limit, has_limit_params
from rivulet.sql.parse import parse_one
from rivulet.storage import foreign_keys
from rivulet.storage.base import RowId
from rivulet.storage.upsert import OnDuplicate, resolve, unique_keys
from rivulet.storage.writes import Change, TableChanges, TransactionWrite, WriteRequest
from rivulet.values.conversions import strict_mode
from rivulet.values.schema import Row, TableSchema, coerce_row


@dataclass(eq=False)
class _Writes:
    """The write set of one table, and an index of the rows it holds by each UNIQUE key."""

    changes: TableChanges
    #: For each UNIQUE key of the table: key value -> the identities holding it now.
    unique: list[dict[tuple, set[RowId]]] = field(default_factory=list)

    @property
    def schema(self) -> TableSchema:
        return self.changes.schema

    @property
    def rows(self) -> dict[RowId, Change]:
        return self.changes.rows

    def reindex(self) -> None:
        self.unique = [{} for _ in self.schema.unique]
        for rid, (_, now) in self.rows.items():
            self._index(rid, now, add=True)

    def set(self, rid: RowId, change: Change) -> None:
        """Identity ``rid`` now holds ``change`` (an identity inserted and deleted again by
        the transaction leaves nothing behind)."""
        held = self.rows.get(rid)
        if held is not None:
            self._index(rid, held[1], add=False)
        if change == (None, None):
            self.rows.pop(rid, None)
            return
        self.rows[rid] = change
        self._index(rid, change[1], add=True)

    def _index(self, rid: RowId, row: Row | None, *, add: bool) -> None:
        if row is None:
            return
        for key, holders in zip(self.schema.unique, self.unique):
            value = tuple(row[i] for i in key)
            if add:
                holders.setdefault(value, set()).add(rid)
            else:
                holders.get(value, set()).discard(rid)


#: Rows a locking read may name by key before it locks the whole table instead.
MAX_LOCKED_KEYS = 1000
#: Rows a write naming no key locks one by one; past this, the whole table (exclusive).
ESCALATE_ROWS = 10_000
#: Keys a statement reads at most to count as quick (:meth:`Transaction.quick_write`).
QUICK_KEYS = 100

_owners = itertools.count(1)


class LockWait(Exception):  # noqa: N818 (not an error: a statement to run again)
    """A statement must wait for a lock before it can go on; raised instead of waiting when
    ``Transaction.defer_lock_waits`` is set (the MySQL server awaits ``future`` on its event
    loop, no thread blocked, then runs the statement again)."""

    def __init__(self, future: Future[None]) -> None:
        super().__init__("a lock wait")
        self.future = future


class Committer(Protocol):
    """What a transaction needs of the process that commits: the primary's own group
    commit and lock manager (:class:`LocalCommitter`), or, in a replica process of
    ``rivulet serve --replicas``, the primary reached over the replica's channel
    (rivulet/server/mysql/replica.py)."""

    #: Where its locks are taken.
    locks: Locks

    def new_owner(self) -> Hashable:
        """A name for a transaction's locks, unique among every process's transactions."""
        ...

    def number(self, request: WriteRequest) -> None:
        """Give an insert's rows their AUTO_INCREMENT numbers now (as MySQL numbers them
        when the statement runs), and set its ``last_insert_id``."""
        ...

    def numbers_at_once(self) -> bool:
        """Whether :meth:`number` would return at once now (no commit in progress to wait
        for, no primary to ask): a statement may then run on an event loop."""
        ...

    def commit(self, request: TransactionWrite) -> None:
        """Store the transaction's changes as one batch: ``request.lsn`` is set once they
        are durable (and, in a replica, in its views); raises why it failed."""
        ...


class LocalCommitter:
    """:class:`Committer` of the process that holds the database: its group commit."""

    def __init__(self, core: Core, submit: Callable[[Sequence[WriteRequest]], None]) -> None:
        self._core = core
        self._submit = submit
        self.locks: Locks = core.locks

    def new_owner(self) -> Hashable:
        return ("tx", next(_owners))

    def number(self, request: WriteRequest) -> None:
        with self._core.commit_lock:  # numbered now, as MySQL numbers them
            request.number_rows(self._core.storage)

    def numbers_at_once(self) -> bool:
        lock = self._core.commit_lock
        if not lock.acquire(blocking=False):
            return False
        lock.release()
        return True

    def commit(self, request: TransactionWrite) -> None:
        self._submit([request])
        request.wait()


class Transaction:
    """A transaction on a database (see the module docstring); :meth:`Database.transaction`
    makes one. As a context manager it commits on a normal exit and rolls back on an
    exception."""

    def __init__(self, core: Core, program: Program, texts: WriteTexts, commits: GroupCommit,
                 upqueries: Upqueries, committer: Committer,
                 ddl: Callable[[st.Statement], None], *, read_only: bool = False) -> None:
        self._core = core
        self._program = program
        self._texts = texts
        self._commits = commits
        self._upqueries = upqueries
        self._committer = committer
        self._ddl = ddl
        self.read_only = read_only
        self._tables: dict[str, _Writes] = {}
        #: Rows its locking reads found (None: none), by table then identity: checked at
        #: COMMIT as the rows it wrote are (see TableChanges.checked).
        self._checked: dict[str, tuple[TableSchema, dict[RowId, Row | None]]] = {}
        self._locks = committer.locks
        #: The name its locks are held under (a new one after each commit of what it holds).
        self.owner = committer.new_owner()
        #: The locks it holds, as asked for; a request whose wait was deferred, pending.
        self._granted: set[Target] = set()
        #: The last plan and parameters :meth:`_pinned` was asked about, and its answer.
        self._pinned_memo: tuple[ir.ViewPlan, Sequence[Any],
                                 tuple[TableSchema, list[RowId]] | None] | None = None
        self._pending: tuple[Future[None], list[Target]] | None = None
        self._asked = False
        #: Seconds a lock wait lasts at most (MySQL's ``innodb_lock_wait_timeout``).
        self.lock_timeout: float = DEFAULT_TIMEOUT
        #: Raise :class:`LockWait` rather than block the thread when a lock must be waited
        #: for (the MySQL server awaits it on its event loop).
        self.defer_lock_waits = False
        self._numbered: WriteRequest | None = None  # (an insert numbered already)
        self._update_pairs: list[foreign_keys.RowChange] = []  # (the last UPDATE's rows)
        self._savepoints: list[tuple[str, dict[str, dict[RowId, Change]]]] = []
        self._row_ids = itertools.count(-1, -1)  # rows inserted into tables without a key
        #: Whether the transaction can still run statements (False once committed or
        #: rolled back).
        self.active = True
        #: The LSN its COMMIT stored it at (0: not committed, or it wrote nothing).
        self.lsn = 0
        #: The AUTO_INCREMENT value of its last insert into such a table (as MySQL's
        #: ``LAST_INSERT_ID()``), 0 before any.
        self.last_insert_id = 0
        #: The session's ``foreign_key_checks`` for its next statements.
        self.foreign_key_checks = True
        #: Whether a write of it ran without them (its COMMIT then checks none again).
        self._unchecked = False

    # ..................................................................... state

    @property
    def written(self) -> bool:
        """Whether the transaction holds writes (a commit would store something)."""
        return any(w.rows for w in self._tables.values())

    def written_tables(self) -> set[str]:
        """The tables it holds writes to, lower-case."""
        return {name for name, w in self._tables.items() if w.rows}

    def _check_active(self) -> None:
        if not self.active:
            raise TransactionError("the transaction has ended (committed or rolled back)")

    # ..................................................................... statements

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int | list[Row]:
        """Run one statement in the transaction, as ``Database.execute`` runs it outside:
        writes return the rows they changed, a SELECT its rows (the transaction's own
        writes included). ``SAVEPOINT``, ``ROLLBACK TO``, ``RELEASE SAVEPOINT``, ``COMMIT``
        and ``ROLLBACK`` act on the transaction; DDL commits it first, then it goes on as a
        new transaction (as in MySQL)."""
        self._check_active()
        control = control_statement(sql)
        if control is not None:
            if params:
                raise ParameterCountError("transaction statements take no parameters")
            self.control(control)
            return 0
        prepared = self._program.adhoc.get(sql)
        if prepared is not None:
            return self.read(prepared, params)
        checks = foreign_key_checks_setting(sql)
        if checks is not None:
            self.foreign_key_checks = checks
            return 0
        locking = locking_read(sql)
        if locking is not None:
            view, params = self._program.prepare_read(locking.sql, params)
            return self.locking_read(view, params, locking.mode, locking.nowait)
        writer = self._texts.known(sql)
        if writer is not None:
            return self.write(writer(tuple(params)))
        self._core.limits.check_statement(sql)
        statement = st.bind_text(sql, self._core.catalog)
        if isinstance(statement, st.Select):
            return self._select(sql, params, statement.query)
        if isinstance(statement, st.WRITES):
            return self.write(self._texts.remember(sql, statement)(tuple(params)))
        if params:
            raise ParameterCountError("DDL statements take no parameters")
        self.commit_so_far()
        self._ddl(statement)
        return 0

    def control(self, control: Control) -> None:
        """A transaction control statement (see :mod:`rivulet.sql.control`)."""
        verb = control.verb
        if verb == "commit":
            self.commit()
        elif verb == "rollback":
            self.rollback()
        elif verb == "savepoint":
            self.savepoint(control.name)
        elif verb == "rollback_to":
            self.rollback_to(control.name)
        elif verb == "release":
            self.release(control.name)
        elif verb == "characteristics" and control.read_only is None and control.scope:
            check_isolation(control.isolation or ISOLATION)  # (the session's, as it is)
        elif verb == "characteristics":
            raise TransactionError("Transaction characteristics can't be changed while a "
                                   "transaction is in progress")
        else:
            raise UnsupportedSqlError("BEGIN inside a transaction: COMMIT or ROLLBACK it first")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """A SELECT's rows, the transaction's own writes included (a locking read's
        locks taken first: ``FOR UPDATE``, ``FOR SHARE``)."""
        self._check_active()
        locking = locking_read(sql)
        if locking is not None:
            view, params = self._program.prepare_read(locking.sql, params)
            return self.locking_read(view, params, locking.mode, locking.nowait)
        prepared = self._program.adhoc.get(sql)
        if prepared is not None:  # (a view made for this text: no parse)
            return self.read(prepared, params)
        return self._select(sql, params, parse_one(sql))

    def _select(self, sql: str, params: Sequence[Any], node: exp.Expr) -> list[Row]:
        """An ad-hoc SELECT's rows as the transaction sees them: the values of a top-level
        ``LIMIT ?`` written in (rivulet/sql/limit_params.py), a read of the clock computed
        now, any other answered by its view."""
        if has_limit_params(node):
            limited = bind_limit(sql, params)
            if limited is not None:
                sql, params = limited
                node = parse_one(sql)
        if read_once(node):
            return self.read_plan(self._program.constant_plan(node, params))
        return self.read(self._program.prepare(sql, node, params=params), params)

    def view(self, name: str) -> TransactionView:
        """View ``name``, read inside the transaction (its own writes included)."""
        self._check_active()
        return TransactionView(self, self._program.view(name))

    # ..................................................................... savepoints

    def savepoint(self, name: str) -> None:
        """``SAVEPOINT name``: remember the write set as it is (an older savepoint of the
        same name is replaced)."""
        self._check_active()
        self._savepoints = [s for s in self._savepoints if s[0].lower() != name.lower()]
        self._savepoints.append(
            (name, {t: dict(w.rows) for t, w in self._tables.items() if w.rows}))

    def rollback_to(self, name: str) -> None:
        """``ROLLBACK TO SAVEPOINT name``: the write set as it was at the savepoint, which
        stays; later savepoints go."""
        self._check_active()
        at = self._savepoint_index(name)
        saved = self._savepoints[at][1]
        del self._savepoints[at + 1:]
        for table in list(self._tables):
            writes = self._tables[table]
            writes.changes.rows = dict(saved.get(table, {}))
            writes.reindex()

    def release(self, name: str) -> None:
        """``RELEASE SAVEPOINT name``: forget it and every later one."""
        self._check_active()
        del self._savepoints[self._savepoint_index(name):]

    def _savepoint_index(self, name: str) -> int:
        for at in range(len(self._savepoints) - 1, -1, -1):
            if self._savepoints[at][0].lower() == name.lower():
                return at
        raise NoSuchSavepointError(f"SAVEPOINT {name} does not exist")

    # ..................................................................... end

    def commit(self) -> None:
        """Store every write of the transaction as one batch (one LSN) and end it; once
        this returns the writes are durable. If the commit fails (a row it wrote was
        changed by another commit meanwhile: ``WriteConflictError``; a key taken meanwhile:
        ``ConstraintError``; a table altered), nothing of it is stored, the transaction
        ends rolled back, and the error is raised."""
        self._check_active()
        self.active = False
        self._store()

    def commit_so_far(self) -> None:
        """Commit what the transaction holds and go on as a new transaction (what DDL and
        ``SET autocommit = 1`` do in MySQL)."""
        self._check_active()
        self._store()

    def rollback(self) -> None:
        """Forget every write of the transaction, release its locks and end it (nothing
        was stored)."""
        self.active = False
        self._tables.clear()
        self._checked.clear()
        self._savepoints.clear()
        self._release_locks()

    def commit_request(self) -> TransactionWrite | None:
        """COMMIT in two steps, for a caller that hands the request to the group commit
        itself (the MySQL server's write batcher, which commits on its event loop without
        a hop to a thread): the transaction ends, its write set becomes one request, or
        None if it wrote nothing (its locks are then released). Once the request is done,
        :meth:`finish_commit`."""
        self._check_active()
        self.active = False
        request = self._request()
        if request is None:
            self._release_locks()
        return request

    def finish_commit(self, request: TransactionWrite) -> None:
        """The second step of :meth:`commit_request`, once ``request`` is done (committed,
        or failed with its ``error``, which the caller reports): the locks are released."""
        if request.error is None:
            self.lsn = request.lsn
        self._release_locks()

    def _store(self) -> None:
        request = self._request()
        if request is None:
            self._release_locks()
            return
        try:
            self._committer.commit(request)
        finally:
            self.finish_commit(request)

    def _request(self) -> TransactionWrite | None:
        """The write set as one request of the group commit (None: nothing written); the
        transaction holds nothing more but its locks."""
        changes = [w.changes for w in self._tables.values() if w.rows]
        checked, self._checked = self._checked, {}
        self._tables = {}
        self._savepoints.clear()
        if not changes:
            return None
        by_table = {part.schema.name.lower(): part for part in changes}
        for name, (schema, rows) in checked.items():  # what its writes may rest on
            part = by_table.get(name)
            if part is None:
                part = by_table[name] = TableChanges(schema)
                changes.append(part)
            part.checked = rows
        request = TransactionWrite(changes[0].schema, "transaction", changes=changes)
        request.foreign_key_checks = not self._unchecked
        self._unchecked = False
        return request

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if not self.active:
            return
        if kind is None:
            self.commit()
        else:
            self.rollback()

    # ..................................................................... writes

    def write(self, request: WriteRequest) -> int:
        """Run an INSERT, UPDATE or DELETE in the transaction; the rows it changed. It
        changes nothing if it fails (the transaction goes on)."""
        self._check_active()
        if self.read_only:
            raise ReadOnlyWriteError("Cannot execute statement in a READ ONLY transaction")
        if isinstance(request, JoinedWriteRequest):
            return self._joined(request)
        core = self._core
        core.check_open()
        self._commits.bring_up_to_date(request)
        schema = request.table
        if core.lazy.copies:  # a table being copied is copied whole before it is read here
            core.lazy.before_read(schema.name, None, [])
        writes = self._writes_of(schema)
        checked = self.foreign_key_checks and foreign_keys.involved(core.catalog.tables, schema)
        self._unchecked |= not self.foreign_key_checks
        if request.upsert and checked and request.on_duplicate is not OnDuplicate.IGNORE:
            raise UnsupportedSqlError("ON DUPLICATE KEY UPDATE and REPLACE in a transaction, "
                                      f"into table {schema.name!r}, which has or is "
                                      "referenced by FOREIGN KEYs")
        if request.upsert:
            self._number(request)
            if checked:  # INSERT IGNORE: rows without a parent row skipped, as InnoDB does
                foreign_keys.check_upsert(core.catalog.tables, schema, request.on_duplicate)
                request.rows = foreign_keys.rows_with_parents(
                    core.catalog.tables, schema, request.rows, _OverlaidRows(self, _Undo(self)))
            self._upsert(writes, request)
            return request.rowcount
        if request.kind == "insert":
            fresh = self._number(request)
            self._lock_rows(schema, [schema.pk_of(r) for r in request.rows]
                            if schema.primary_key else None)
            touched = self._inserted(writes, request.rows, fresh)
            request.rowcount = len(request.rows)
        else:
            if request.keys is not None:
                self._lock_rows(schema, request.keys)
            matched = self._matching(writes, request)
            if request.keys is None:
                matched = self._locked(writes, request, matched)
            if request.limit is not None:
                matched = [matched[i] for i in request.limit([row for _, row, _ in matched],
                                                             request.params)]
            if request.kind == "delete":
                touched = {rid: (found, None) for rid, _, found in matched}
                request.rowcount = len(matched)
            else:
                touched = self._updated(writes, request, matched)
                self._lock_rows(schema, [rid for rid, (_, new) in touched.items()
                                         if new is not None])  # (a key moved to)
        self._check_unique(writes, touched)
        undo = _Undo(self)
        if checked:
            for rid in touched:
                undo.note(schema, rid)
        for rid, change in touched.items():
            writes.set(rid, change)
        if checked:
            self._foreign_keys(request, matched if request.kind != "insert" else [], undo)
        return request.rowcount

    def _joined(self, request: JoinedWriteRequest) -> int:
        """A multi-table UPDATE or DELETE (rivulet/engine/joined.py): its join's rows as the
        transaction sees them, each target's written as a single-table write by key. It
        changes nothing if one of them fails or must wait for a lock (then it runs again)."""
        assert request.statement is not None
        self._core.check_open()
        stored = self._stored({s.name.lower() for s in request.statement.sources}, None)
        parts = joined_parts(request, self._core.catalog,
                             lambda plan: self._computed(plan, stored))
        saved = {name: dict(writes.rows) for name, writes in self._tables.items()}
        try:
            for part in parts:
                self.write(part)
        except BaseException:
            for name, writes in self._tables.items():
                writes.changes.rows = dict(saved.get(name, {}))
                writes.reindex()
            raise
        request.count(parts)
        return request.rowcount

    def _foreign_keys(self, request: WriteRequest, matched: list[tuple[RowId, Row, Row | None]],
                      undo: _Undo) -> None:
        """The FOREIGN KEY checks and actions of a statement whose changes are in the write
        set (rivulet/storage/foreign_keys.py), the rows they change locked first; if they
        fail (or must wait for a lock: the statement runs again), the write set is as it
        was before the statement (``undo``)."""
        changes: list[foreign_keys.RowChange]
        if request.kind == "insert":
            changes = [(None, row) for row in request.rows]
        elif request.kind == "delete":
            changes = [(row, None) for _, row, _ in matched]
        else:
            changes = self._update_pairs
        try:
            enforcer = foreign_keys.Enforcer(self._core.catalog.tables,
                                             _OverlaidRows(self, undo))
            enforcer.statement(request.table, changes)
            request.rowcount -= enforcer.taken
        except BaseException:
            undo.restore()
            raise

    def _number(self, request: WriteRequest) -> set[RowId]:
        """An insert's AUTO_INCREMENT numbers, handed out when it runs (as MySQL does).
        Returns the primary keys it numbered when the number is the whole key: above every
        value stored or handed out, so no committed row can hold them (a key given
        meanwhile by another commit fails this one's COMMIT as a duplicate)."""
        auto = request.table.auto_column
        if auto is None or request is self._numbered:
            return set()
        blank = [i for i, row in enumerate(request.rows) if not row[auto]]
        self._committer.number(request)
        self._numbered = request  # (not again if the statement waits for a lock)
        if request.last_insert_id and not request.upsert:
            self.last_insert_id = request.last_insert_id
        if request.table.primary_key != (auto,):
            return set()
        return {(request.rows[i][auto],) for i in blank}

    def _upsert(self, writes: _Writes, request: WriteRequest) -> None:
        """An INSERT IGNORE, ON DUPLICATE KEY UPDATE or REPLACE: its rows resolved one by
        one against the write set laid over the committed rows (rivulet/storage/upsert.py).
        It changes nothing if it fails or must wait for a lock (then it runs again)."""
        schema = writes.schema
        saved = dict(writes.rows)
        try:
            self._lock_rows(schema, [schema.pk_of(r) for r in request.rows]
                            if schema.primary_key else None)
            out = resolve(schema, request.rows, request.on_duplicate, _Overlaid(self, writes),
                          update=request.update, params=request.params,
                          generated=request.generated)
        except BaseException:
            writes.changes.rows = saved
            writes.reindex()
            raise
        request.rowcount, request.matched = out.affected, out.found
        request.last_insert_id = out.last_insert_id
        if out.last_insert_id:
            self.last_insert_id = out.last_insert_id

    def quick_write(self, request: WriteRequest) -> bool:
        """Whether ``request`` reads the rows of a few keys and no more (an INSERT of a few
        rows, an UPDATE or DELETE naming whole primary keys): a server may run it on its
        event loop, where the hop to a thread and back cost more than the statement. Not
        an INSERT into a table with an AUTO_INCREMENT column while its numbers cannot be
        handed out at once (they are, under the commit lock, which a group commit holds
        throughout; in a replica, by the primary)."""
        if request.kind == "insert":
            if request.table.auto_column is not None and not self._committer.numbers_at_once():
                return False
            keys: Sequence[Any] | None = request.rows
        else:
            keys = request.keys
        return keys is not None and len(keys) <= QUICK_KEYS and not self._core.lazy.copies

    def quick_read(self, view: View, params: Sequence[Any]) -> bool:
        """Whether a locking read of ``view`` with ``params`` reads the rows of a few
        primary keys and no more (see :meth:`quick_write`)."""
        if self._core.lazy.copies:
            return False
        pinned = self._pinned(view.plan, params)
        return pinned is not None and len(pinned[1]) <= QUICK_KEYS

    def _writes_of(self, schema: TableSchema) -> _Writes:
        writes = self._tables.get(schema.name.lower())
        if writes is None or not writes.rows:
            writes = self._tables[schema.name.lower()] = _Writes(TableChanges(schema))
            writes.reindex()
        elif writes.schema.version != schema.version:
            raise TransactionError(f"table {schema.name!r} was altered after this transaction "
                                   "wrote to it: roll the transaction back and run it again")
        else:
            writes.changes.schema = schema  # (the same columns: a conversion may have ended)
        return writes

    def _locked(self, writes: _Writes, request: WriteRequest,
                matched: list[tuple[RowId, Row, Row | None]]
                ) -> list[tuple[RowId, Row, Row | None]]:
        """The rows an UPDATE or DELETE that names no key matches, each locked: matched,
        locked, and matched again (a row may have changed while it waited) until every
        row matched is locked (READ COMMITTED keeps no lock on rows that did not match)."""
        schema = writes.schema
        while True:
            need = [rid for rid, _, _ in matched if not self._holds(schema, rid)]
            if not need:
                return matched
            self._lock([table_lock(schema.name, X)] if len(need) > ESCALATE_ROWS
                       else row_locks(schema.name, need, X))
            matched = self._matching(writes, request)

    def _matching(self, writes: _Writes, request: WriteRequest
                  ) -> list[tuple[RowId, Row, Row | None]]:
        """The rows an UPDATE or DELETE matches, as the transaction sees them: each with
        its identity and the committed row the transaction found there."""
        schema, held = writes.schema, writes.rows
        storage = self._core.storage
        if request.keys is not None:
            keys = set(request.keys)
            known = self._found_under_lock(schema, keys)
            unknown = [k for k in keys if k not in known and k not in held]
            stored = [(rid, row) for rid, row in known.items() if row is not None]
            if unknown:
                stored += [(rid, row) for rid, row in storage.read_rows(
                    schema, schema.primary_key, [k if len(k) > 1 else k[0] for k in unknown])
                    if rid in keys]
            own = [(rid, held[rid]) for rid in keys if rid in held]
        else:
            stored = storage.read_rows(schema)
            own = list(held.items())
        rows: list[tuple[RowId, Row, Row | None]] = [
            (rid, row, row) for rid, row in stored if rid not in held]
        rows += [(rid, now, found) for rid, (found, now) in own if now is not None]
        predicate, params = request.predicate, request.params
        if predicate is None:
            return rows
        # MySQL's strict mode, as outside a transaction (rivulet/storage/writes.py): a
        # truncating conversion in the WHERE of a row an UPDATE reads fails it
        with strict_mode() if request.kind == "update" else nullcontext():
            return [match for match in rows if predicate(match[1], params)]

    def _found_under_lock(self, schema: TableSchema, keys: set[RowId]
                          ) -> dict[RowId, Row | None]:
        """Of ``keys``, those a locking read of the transaction found (None: no row there)
        and that it still holds locked: the committed row there cannot have changed since
        (a writer of that row waits for the lock), so a write reads it from here, not from
        storage again (the read after another commit costs as much as the statement). The
        commit checks these rows against storage all the same."""
        entry = self._checked.get(schema.name.lower())
        if entry is None or entry[0].version != schema.version:
            return {}
        found = entry[1]
        return {rid: found[rid] for rid in keys
                if rid in found and self._holds(schema, rid)}

    def _updated(self, writes: _Writes, request: WriteRequest,
                 matched: list[tuple[RowId, Row, Row | None]]) -> dict[RowId, Change]:
        """An UPDATE's changes: the rows it matched, assigned; a row whose primary key
        changes leaves its identity for the new one."""
        assert request.assign is not None
        schema = writes.schema
        changed = []
        pairs: list[foreign_keys.RowChange] = []
        with strict_mode():  # (a truncating conversion in SET fails the UPDATE)
            for rid, row, found in matched:
                new = coerce_row(schema, request.assign(row, request.params),
                                 where="UPDATE: ")
                if new != row:
                    changed.append((rid, found, new))
                    pairs.append((row, new))
        self._update_pairs = pairs  # (what FOREIGN KEYs check: see _foreign_keys)
        request.rowcount, request.matched = len(changed), len(matched)
        if not schema.primary_key:  # a row id stays the row's
            return {rid: (found, new) for rid, found, new in changed}
        touched: dict[RowId, Change] = {rid: (found, None) for rid, found, _ in changed}
        return self._land(writes, touched, [(schema.pk_of(new), new) for _, _, new in changed])

    def _inserted(self, writes: _Writes, rows: list[Row], fresh: set[RowId]
                  ) -> dict[RowId, Change]:
        schema = writes.schema
        if not schema.primary_key:
            return {next(self._row_ids): (None, row) for row in rows}
        return self._land(writes, {}, [(schema.pk_of(row), row) for row in rows], fresh)

    def _land(self, writes: _Writes, touched: dict[RowId, Change],
              rows: list[tuple[RowId, Row]], fresh: Collection[RowId] = (),
              ) -> dict[RowId, Change]:
        """``rows`` placed at their primary keys, after ``touched``: a key that holds a row
        (committed, the transaction's, or placed by this statement) is a duplicate. Keys in
        ``fresh`` (just numbered) are known to hold no committed row."""
        schema, held = writes.schema, writes.rows
        unknown = {rid for rid, _ in rows
                   if rid not in touched and rid not in held and rid not in fresh}
        stored: dict[RowId, Row] = {}
        if unknown:
            stored = {rid: row for rid, row in self._core.storage.read_rows(
                schema, schema.primary_key, [k if len(k) > 1 else k[0] for k in unknown])
                if rid in unknown}
        for rid, row in rows:
            if rid in touched:
                found, now = touched[rid]
            elif rid in held:
                found, now = held[rid]
            else:
                found = now = stored.get(rid)
            if now is not None:
                raise ConstraintError(_duplicate(schema, schema.primary_key, rid))
            touched[rid] = (found, row)
        return touched

    def _check_unique(self, writes: _Writes, touched: dict[RowId, Change]) -> None:
        """A value of a UNIQUE key that a row of this statement puts where another row
        (committed, the transaction's, or this statement's) holds it is a duplicate."""
        schema = writes.schema
        for key, holders in zip(schema.unique, writes.unique):
            placed: dict[tuple, RowId] = {}
            for rid, (_, new) in touched.items():
                if new is None:
                    continue
                value = tuple(new[i] for i in key)
                if None in value:
                    continue  # (NULLs never clash)
                if value in placed:
                    raise ConstraintError(_duplicate(schema, key, value))
                placed[value] = rid
                if any(other not in touched for other in holders.get(value, ())):
                    raise ConstraintError(_duplicate(schema, key, value))
            if not placed:
                continue
            for rid, row in self._core.storage.read_rows(
                    schema, key, [v if len(v) > 1 else v[0] for v in placed]):
                value = tuple(row[i] for i in key)
                if value in placed and rid not in writes.rows and rid not in touched:
                    raise ConstraintError(_duplicate(schema, key, value))

    # ..................................................................... locks

    def _holds(self, schema: TableSchema, rid: RowId) -> bool:
        """Whether it holds row ``rid`` exclusively (a row it inserted into a table without
        a primary key, a negative row id, is no one else's)."""
        if isinstance(rid, int) and rid < 0:
            return True
        self._take_pending()
        name = schema.name.lower()
        return ((("r", name, rid), X) in self._granted
                or (("t", name), X) in self._granted)

    def _lock_rows(self, schema: TableSchema, keys: Sequence[RowId] | None) -> None:
        """Exclusive locks on rows it writes (``keys``: their identities; None: rows not
        known yet, of a table without a primary key: the table's intention lock only)."""
        if keys is None:
            self._lock([table_lock(schema.name, IX)])
        else:
            self._lock(row_locks(schema.name, [k for k in keys if not self._holds(schema, k)],
                                 X))

    def _take_pending(self) -> None:
        pending = self._pending
        if pending is not None and pending[0].done():
            self._pending = None
            if pending[0].exception() is None:
                self._granted.update(pending[1])

    def _lock(self, targets: list[Target], nowait: bool = False) -> None:
        """Hold ``targets`` before going on: at once if they are free, else after a wait
        (or, with ``defer_lock_waits``, raise :class:`LockWait`). A deadlock rolls the
        transaction back (it was its victim) and raises 1213; a timeout raises 1205."""
        self._take_pending()
        granted = self._granted
        targets = [t for t in targets if t not in granted and (t[0], X) not in granted]
        if not targets:
            return
        self._asked = True
        future = self._locks.acquire(self.owner, targets, self.lock_timeout, nowait=nowait)
        if not future.done() and self.defer_lock_waits:
            self._pending = (future, targets)
            raise LockWait(future)
        try:
            future.result()
        except DeadlockError:
            self.rollback()
            raise
        granted.update(targets)

    def _release_locks(self) -> None:
        """Release every lock (the transaction ended, or committed what it held); later
        locks are taken under a new name."""
        if self._asked:
            self._locks.release(self.owner)
            self.owner = self._committer.new_owner()
        self._granted = set()
        self._pending = None
        self._asked = False

    def locking_read(self, view: View, params: Sequence[Any], mode: str,
                     nowait: bool = False) -> list[Row]:
        """``SELECT ... FOR UPDATE`` (``mode`` X) or ``FOR SHARE`` (S): the rows read are
        locked first (by primary key where the read names whole keys, else its tables),
        then read as the last commit left them, with the transaction's own writes. The
        committed rows it found by key are checked again at COMMIT."""
        self._check_active()
        plan = view.plan
        targets, pinned = self._read_locks(plan, params, mode)
        self._pinned_memo = None  # (kept from quick_read for this statement only)
        self._lock(targets, nowait)
        tables = _tables_of(plan)
        stored = self._stored(tables, pinned)
        if pinned is not None:
            answer = view.answer_of_rows(self._overlaid(pinned[0].name, stored), params)
            if answer is not None:
                return answer
        if plan.param_count:
            plan = bound_plan(plan, params, self._core.catalog)
        elif params:
            raise ParameterCountError(f"view {view.name!r} takes no parameters, "
                                      f"got {len(params)}")
        return self._computed(plan, stored)

    def _read_locks(self, plan: ir.ViewPlan, params: Sequence[Any], mode: str
                    ) -> tuple[list[Target], tuple[TableSchema, list[RowId]] | None]:
        """What a locking read locks: rows by primary key when it reads one table, only
        filtering and projecting, and its parameters give every primary-key column (the
        stored keys its values find); else each table it reads, whole."""
        pinned = self._pinned(plan, params)
        if pinned is not None:
            return row_locks(pinned[0].name, pinned[1], mode), pinned
        return [table_lock(name, mode) for name in sorted(_tables_of(plan))], None

    def _pinned(self, plan: ir.ViewPlan, params: Sequence[Any]
                ) -> tuple[TableSchema, list[RowId]] | None:
        """The table and primary keys a read of ``plan`` with ``params`` names, if it reads
        one table, only filtering, projecting and cutting (LIMIT), and its parameters give every
        primary-key column; else None. The answer is kept for the same plan and parameters
        from :meth:`quick_read` to the :meth:`locking_read` of the same statement."""
        memo = self._pinned_memo
        if memo is not None and memo[0] is plan and memo[1] is params:
            return memo[2]
        pinned = None
        pin = _shape_of(plan).pin
        if pin is not None:
            schema = self._core.catalog.tables.get(pin.table)
            if schema is not None and schema.version == pin.version:
                keys = _pinned_keys(plan, pin, params, schema)
                if keys is not None:
                    pinned = (schema, keys)
        self._pinned_memo = (plan, params, pinned)
        return pinned

    # ..................................................................... reads

    def read(self, view: View, params: Sequence[Any]) -> list[Row]:
        """``view``'s rows for ``params`` as the transaction sees them: the shared view's
        answer when the transaction wrote none of the tables it reads; else computed from
        one snapshot of storage with the transaction's writes laid over it."""
        self._check_active()
        tables = _tables_of(view.plan)
        if not any(self._tables[t].rows for t in tables if t in self._tables):
            return view.lookup(*params)
        plan = view.plan
        if plan.param_count:
            plan = bound_plan(plan, params, self._core.catalog)
        elif params:
            raise ParameterCountError(f"view {view.name!r} takes no parameters, "
                                      f"got {len(params)}")
        return self._computed(plan, self._stored(tables, None))

    def read_plan(self, plan: ir.ViewPlan) -> list[Row]:
        """The rows of a read no view keeps (a query that reads the clock: rivulet/engine/
        program.py's ``constant_plan``), computed whole as the transaction sees the tables:
        one snapshot of storage with its own writes laid over it."""
        self._check_active()
        return self._computed(plan, self._stored(_tables_of(plan), None))

    def _stored(self, tables: Collection[str], pinned: tuple[TableSchema, list[RowId]] | None
                ) -> dict[str, list[tuple[RowId, Row]]]:
        """The committed rows of ``tables`` by table (lower-case name); ``pinned``: the read
        is of one table's rows with these primary keys (a locking read's), so only those are
        read, and kept to be checked at COMMIT."""
        core = self._core
        if core.lazy.copies:
            for table in tables:
                core.lazy.before_read(table, None, [])
        if pinned is not None:
            return {pinned[0].name.lower(): self._read_pinned(*pinned)}
        return core.storage.read_tables([core.catalog.require_table(t) for t in tables])

    def _overlaid(self, table: str, stored: dict[str, list[tuple[RowId, Row]]]
                  ) -> list[tuple[Row, int]]:
        """``table``'s rows in ``stored`` (read now if missing) with the write set laid over
        them, each with its count."""
        name = table.lower()
        if name not in stored:  # (not read by the plan's own scans)
            core = self._core
            stored.update(core.storage.read_tables([core.catalog.require_table(table)]))
        held = self._tables.get(name)
        own = held.rows if held is not None else {}
        counts: dict[Row, int] = {}
        for rid, row in stored.get(name, []):
            if rid not in own:
                counts[row] = counts.get(row, 0) + 1
        for _, now in own.values():
            if now is not None:
                counts[now] = counts.get(now, 0) + 1
        return list(counts.items())

    def _computed(self, plan: ir.ViewPlan,
                  stored: dict[str, list[tuple[RowId, Row]]]) -> list[Row]:
        """``plan``'s rows over the committed rows ``stored`` with the write set laid over
        them."""
        return whole_answer(
            self._upqueries.computed(plan, lambda table: self._overlaid(table, stored)))


    def _read_pinned(self, schema: TableSchema, keys: list[RowId]) -> list[tuple[RowId, Row]]:
        """The committed rows under ``keys`` (as the last commit left them), each noted with
        what it found (None: no row) to be checked at COMMIT, unless the transaction wrote
        it (its write set holds what it found)."""
        wanted = set(keys)
        found = {rid: row for rid, row in self._core.storage.read_rows(
            schema, schema.primary_key, [k if len(k) > 1 else k[0] for k in keys])
            if rid in wanted}
        name = schema.name.lower()
        held = self._tables.get(name)
        own = held.rows if held is not None else {}
        entry = self._checked.get(name)
        if entry is None or entry[0].version != schema.version:
            entry = self._checked[name] = (schema, {})
        for key in keys:
            if key not in own:
                entry[1].setdefault(key, found.get(key))
        return list(found.items())


class _Overlaid:
    """A table as a statement of a transaction sees it (its write set laid over the
    committed rows), for :func:`~rivulet.storage.upsert.resolve`: each row found is locked
    (exclusively) before it is used, and its changes go to the write set."""

    def __init__(self, transaction: Transaction, writes: _Writes) -> None:
        self.tx = transaction
        self.writes = writes
        self.schema = writes.schema

    def holder(self, key: tuple[int, ...], value: tuple) -> tuple[RowId, Row] | None:
        found = self._holder(key, value)
        while found is not None and not self.tx._holds(self.schema, found[0]):
            self.tx._lock_rows(self.schema, [found[0]])
            found = self._holder(key, value)  # (as it is now that it is locked)
        return found

    def _holder(self, key: tuple[int, ...], value: tuple) -> tuple[RowId, Row] | None:
        schema, rows = self.schema, self.writes.rows
        if key == schema.primary_key and value in rows:
            now = rows[value][1]
            return None if now is None else (value, now)
        if key != schema.primary_key:
            index = self.writes.unique[list(map(tuple, schema.unique)).index(key)]
            for rid in index.get(value, ()):
                now = rows[rid][1]
                if now is not None:
                    return rid, now
        stored = self.tx._core.storage.read_rows(schema, key,
                                                 [value if len(value) > 1 else value[0]])
        for rid, row in stored:  # (the lookup may be looser than `=`)
            if rid not in rows and tuple(row[i] for i in key) == value:
                return rid, row
        return None

    def _found(self, rid: RowId, row: Row | None) -> Row | None:
        """The committed row the transaction found at ``rid`` (``row``, if it had not
        touched it)."""
        held = self.writes.rows.get(rid)
        return held[0] if held is not None else row

    def insert(self, row: Row) -> None:
        schema = self.schema
        if schema.primary_key:
            rid: RowId = schema.pk_of(row)
            self.tx._lock_rows(schema, [rid])
        else:
            rid = next(self.tx._row_ids)
        self.writes.set(rid, (self._found(rid, None), row))

    def delete(self, rid: RowId, row: Row) -> None:
        self.writes.set(rid, (self._found(rid, row), None))

    def update(self, rid: RowId, old: Row, new: Row) -> None:
        schema = self.schema
        for key in unique_keys(schema):
            value = tuple(new[i] for i in key)
            if None in value:
                continue
            held = self.holder(key, value)
            if held is not None and held[0] != rid:
                raise ConstraintError(_duplicate(schema, key, value))
        if schema.primary_key and schema.pk_of(new) != rid:  # the row moves to a new key
            self.delete(rid, old)
            self.insert(new)
        else:
            self.writes.set(rid, (self._found(rid, old), new))


class _Undo:
    """What one statement changed in a transaction's write set, to put back if it fails:
    each (table, identity) it touched, with what the write set held there before."""

    def __init__(self, transaction: Transaction) -> None:
        self.tx = transaction
        self.before: dict[tuple[str, RowId], Change | None] = {}

    def note(self, schema: TableSchema, rid: RowId) -> None:
        """Identity ``rid`` of ``schema`` is about to change (the first time counts)."""
        name = schema.name.lower()
        if (name, rid) not in self.before:
            writes = self.tx._tables.get(name)
            self.before[name, rid] = writes.rows.get(rid) if writes is not None else None

    def restore(self) -> None:
        for (name, rid), change in self.before.items():
            writes = self.tx._tables.get(name)
            if writes is not None:
                writes.set(rid, change if change is not None else (None, None))


class _OverlaidRows:
    """The tables as a statement of a transaction sees them, for FOREIGN KEY checks and
    actions (:class:`~rivulet.storage.foreign_keys.Rows`): the committed rows with the write
    set laid over them; a row an action changes is locked (exclusively) first, and noted in
    the statement's ``undo``."""

    def __init__(self, transaction: Transaction, undo: _Undo) -> None:
        self.tx = transaction
        self.undo = undo

    def find(self, schema: TableSchema, columns: tuple[int, ...],
             value: tuple) -> list[tuple[RowId, Row]]:
        writes = self.tx._tables.get(schema.name.lower())
        held = writes.rows if writes is not None else {}
        found = [(rid, row) for rid, row in self.tx._core.storage.read_rows(
            schema, columns, [value if len(value) > 1 else value[0]])
            if rid not in held and tuple(row[i] for i in columns) == value]
        if writes is None:
            return found
        if columns == schema.primary_key:  # (the write set is by primary key)
            rids: Iterable[RowId] = (value,) if value in held else ()
        elif columns in schema.unique:  # (and indexed by each UNIQUE key)
            rids = writes.unique[schema.unique.index(columns)].get(value, ())
        else:
            rids = held
        for rid in rids:
            now = held[rid][1]
            if now is not None and tuple(now[i] for i in columns) == value:
                found.append((rid, now))
        return found

    def _table(self, schema: TableSchema, rids: list[RowId]) -> _Overlaid:
        self.tx._lock_rows(schema, rids if schema.primary_key else None)
        for rid in rids:
            self.undo.note(schema, rid)
        return _Overlaid(self.tx, self.tx._writes_of(schema))

    def delete(self, schema: TableSchema, rid: RowId, row: Row) -> None:
        self._table(schema, [rid]).delete(rid, row)

    def update(self, schema: TableSchema, rid: RowId, old: Row, new: Row) -> None:
        moved = schema.primary_key and schema.pk_of(new) != rid
        self._table(schema, [rid, schema.pk_of(new)] if moved else [rid]).update(rid, old, new)


class TransactionView:
    """A view read inside a transaction (``tx.view(name)``): its answers include the
    transaction's own writes."""

    def __init__(self, transaction: Transaction, view: View) -> None:
        self._transaction = transaction
        self.view = view
        self.name = view.name
        self.columns = view.columns

    def lookup(self, *params: Any) -> list[Row]:
        """The view's rows for these ``?`` values (as ``View.lookup``)."""
        return self._transaction.read(self.view, params)

    def __repr__(self) -> str:
        return f"<TransactionView {self.name} ({', '.join(self.columns)})>"


@dataclass(frozen=True, slots=True)
class _Constant:
    """``column = 5``: the read names one value of the column."""

    value: Any

    def values(self, by_param: dict[Any, Any]) -> list[Any]:
        return [self.value]


@dataclass(frozen=True, slots=True)
class _Constants:
    """``column IN (5, 6)``: the read names these values of the column (a NULL listed
    is left out: it matches no row)."""

    listed: tuple[Any, ...]

    def values(self, by_param: dict[Any, Any]) -> list[Any]:
        return list(self.listed)


@dataclass(frozen=True, slots=True)
class _Parameter:
    """``column = ?``: the read names the value the reader gives the ``?`` at
    ``position`` (one of the view's key parameters)."""

    position: int

    def values(self, by_param: dict[Any, Any]) -> list[Any]:
        return [by_param[self.position]]


@dataclass(frozen=True, slots=True)
class _InListParameters:
    """``column IN (?, ...)``: the read names the values the reader gives the view's IN
    list (any number of them)."""

    def values(self, by_param: dict[Any, Any]) -> list[Any]:
        return list(by_param["in"])


@dataclass(frozen=True, slots=True)
class _ListedParameters:
    """One of several IN lists (``id IN (?, ?) AND a IN (?, ?)``), or the list an OR of
    equalities is (``id = ? OR id = ?``): the read names the values of all its ``?``
    (:attr:`ViewPlan.listed`), not only the first, which feeds the reader's key."""

    positions: tuple[int, ...]

    def values(self, by_param: dict[Any, Any]) -> list[Any]:
        return [by_param[p] for p in self.positions]


#: How a read names the values of one column, to be given its values with the reader's
#: parameters by position (``values_by_param``).
_Named = _Constant | _Constants | _Parameter | _InListParameters | _ListedParameters


@dataclass(frozen=True)
class _Pin:
    """How a read of one table (only filtered, projected and cut) names primary-key
    values: each column's constant (``WHERE id = 5``), constants (``WHERE id IN (5, 6)``)
    or the ``?`` that gives it (the reader's key parameters, or the IN list's), by
    lower-case column name."""

    table: str
    version: int
    given: dict[str, _Named]


@dataclass(frozen=True)
class _PlanShape:
    """What a transaction asks of a plan's structure on every read of it, worked out once
    per plan (:func:`_shape_of`): walking the plan again for each statement cost as much
    as the rest of a locking read by key."""

    tables: frozenset[str]
    pin: _Pin | None


#: Plans' shapes by ``id(plan)``, each with its plan (an id may be reused once a plan is
#: gone: the plan kept here is checked to be the one asked about).
_SHAPES: dict[int, tuple[ir.ViewPlan, _PlanShape]] = {}
#: Shapes kept at most (ad-hoc reads plan new views; all are forgotten past this).
_SHAPES_LIMIT = 4096


def _shape_of(plan: ir.ViewPlan) -> _PlanShape:
    known = _SHAPES.get(id(plan))
    if known is not None and known[0] is plan:
        return known[1]
    nodes = ir.walk(plan.root)
    scans = [n for n in nodes if isinstance(n, ir.Scan)]
    pin = None
    # (a LIMIT only cuts the rows of the keys it names: Django's get() writes LIMIT 21,
    # and locking the whole table for it serialized every select_for_update().get())
    if len(scans) == 1 and all(isinstance(n, (ir.Scan, ir.Filter, ir.Project, ir.TopK))
                               for n in nodes):
        pin = _Pin(scans[0].table.lower(), scans[0].version, _given(plan, nodes))
    shape = _PlanShape(frozenset(n.table.lower() for n in scans), pin)
    if len(_SHAPES) >= _SHAPES_LIMIT:
        _SHAPES.clear()
    _SHAPES[id(plan)] = (plan, shape)
    return shape


def _given(plan: ir.ViewPlan, nodes: list[ir.Node]) -> dict[str, _Named]:
    """The column values a read of ``plan`` names by ``=`` (see :class:`_Pin`)."""
    given: dict[str, _Named] = {}
    for node in nodes:
        if not isinstance(node, ir.Filter):
            continue
        for condition in ir.conjuncts(node.predicate):
            if not isinstance(condition, ir.Call):
                continue
            listed = _listed_constants(condition)
            if listed is not None:  # (``id IN (1, 2)``: the rows of those keys)
                source = node.input.columns[listed[0].index].column
                if source is not None:
                    given.setdefault(source.name.lower(), _Constants(tuple(listed[1])))
                continue
            if condition.fn != "eq" or len(condition.args) != 2:
                continue
            column, value = condition.args
            if isinstance(value, ir.Col) and isinstance(column, ir.Lit):
                column, value = value, column
            if isinstance(column, ir.Col) and isinstance(value, ir.Lit):
                source = node.input.columns[column.index].column
                if source is not None:
                    given.setdefault(source.name.lower(), _Constant(value.value))
    columns = plan.root.columns
    other_marks = dict(plan.listed)  # key position -> its list's other ``?``
    for position, (key, param) in enumerate(zip(plan.key, plan.key_params)):
        source = columns[key].column
        if source is None:
            continue
        named: _Named = _Parameter(param)
        if param in plan.in_list:
            named = _InListParameters()
        elif position in other_marks:
            named = _ListedParameters((param, *other_marks[position]))
        given[source.name.lower()] = named
    return given


def _pinned_keys(plan: ir.ViewPlan, pin: _Pin, params: Sequence[Any],
                 schema: TableSchema) -> list[RowId] | None:
    """The stored primary keys a read of one table (only filtered and projected) pins:
    each key column compared with ``=`` to an equality parameter of the view or to a
    constant (``WHERE id = 5``), or listed with constants (``WHERE id IN (5, 6)``), its
    rows then among those keys' rows; else None."""
    if not schema.primary_key:
        return None
    values = values_by_param(plan, params)
    per_column: list[list[Any]] = []
    for position in schema.primary_key:
        named = pin.given.get(schema.columns[position].name.lower())
        if named is None:
            return None
        per_column.append(named.values(values))
    size = 1
    for options in per_column:
        size *= len(options)
    if size > MAX_LOCKED_KEYS:
        return None
    return stored_keys(schema, list(itertools.product(*per_column)))


def _listed_constants(condition: ir.Call) -> tuple[ir.Col, list[Any]] | None:
    """For ``column IN (constant, ...)``, the column and the constants that can match it
    (a NULL matches no row); else None."""
    if condition.fn != "in_list" or not isinstance(condition.args[0], ir.Col):
        return None
    listed = condition.args[1:]
    if not all(isinstance(a, ir.Lit) for a in listed):
        return None
    return condition.args[0], [a.value for a in listed
                               if isinstance(a, ir.Lit) and a.value is not None]


def _tables_of(plan: ir.ViewPlan) -> frozenset[str]:
    """The base tables a plan reads, lower-case."""
    return _shape_of(plan).tables


def _duplicate(schema: TableSchema, key: tuple[int, ...], value: tuple) -> str:
    names = ", ".join(schema.columns[i].name for i in key)
    shown = ", ".join(repr(v) for v in value)
    what = "primary key" if key == schema.primary_key else "value of UNIQUE key"
    return f"duplicate {what} ({names}) = ({shown}) in table {schema.name!r}"
