"""Locks of transactions: rows and tables, shared or exclusive, held until the end.

``SELECT ... FOR SHARE`` (``LOCK IN SHARE MODE``) takes shared locks, ``SELECT ... FOR
UPDATE`` and every write in a transaction exclusive ones, as InnoDB does; they are held
until the transaction commits or rolls back (docs/transactions.md). What is locked:

* a **row**, named by its table and primary key (or, in a table without one, by SQLite's
  row id), for the rows a write changes and for a locking read that names whole primary
  keys (``WHERE id = ?``, ``id IN (...)``); a row lock also takes the matching intention
  lock (IS or IX) on its table;
* a whole **table**, shared or exclusive, for a locking read that names no key (the
  coarser unit: a range, a join, a scan).

Modes and their conflicts are the usual multi-granularity ones (IS, IX, S, X). Requests
wait in arrival order on each resource (a transaction that holds a lock on it already, to
upgrade it, passes the waiters). A request that has to wait is checked at once for a
cycle in the wait-for graph; if there is one, the youngest transaction of the cycle is the
victim: its wait fails with :class:`~rivulet.errors.DeadlockError` (1213) and its locks are
released at once (its owner rolls it back). A wait longer than its timeout fails with
:class:`~rivulet.errors.LockWaitTimeoutError` (1205); the locks held stay.

One :class:`LockManager` per database, kept by the primary; the replica processes of
``rivulet serve --replicas`` lock through it too (their requests are forwarded). Every
method is thread-safe; waits are futures, so an event loop awaits them without a thread.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Hashable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from rivulet.errors import DeadlockError, LockNowaitError, LockWaitTimeoutError, TransactionError
from rivulet.storage.writes import WriteRequest

IS, IX, S, X = "IS", "IX", "S", "X"
#: The modes each mode conflicts with (held by another owner, or requested ahead of it).
_CONFLICTS = {IS: frozenset({X}), IX: frozenset({S, X}), S: frozenset({IX, X}),
              X: frozenset({IS, IX, S, X})}
#: The modes a held mode makes unnecessary to ask for.
_COVERS = {IS: frozenset({IS}), IX: frozenset({IS, IX}), S: frozenset({IS, S}),
           X: frozenset({IS, IX, S, X})}

#: A lockable thing: ``("t", table)`` or ``("r", table, key)`` (table names lower-case).
Resource = tuple
#: One lock asked for: a resource and a mode.
Target = tuple[Resource, str]
Owner = Hashable

#: Seconds a lock wait lasts at most unless the session says otherwise (MySQL's
#: ``innodb_lock_wait_timeout``).
DEFAULT_TIMEOUT = 50.0


def table_lock(table: str, mode: str) -> Target:
    """A lock on a whole table (S or X: a locking read naming no key)."""
    return (("t", table.lower()), mode)


def row_locks(table: str, keys: Iterable[Any], mode: str) -> list[Target]:
    """Locks on rows of ``table`` by identity (primary key tuple, or row id), S or X; the
    table's intention lock is added when they are asked for."""
    name = table.lower()
    return [(("r", name, key), mode) for key in keys]


class Locks(Protocol):
    """What a transaction locks through: the primary's :class:`LockManager`, or a
    replica's stand-in that forwards to it."""

    def acquire(self, owner: Owner, targets: Sequence[Target], timeout: float | None,
                *, nowait: bool = False) -> Future[None]:
        """A future done once ``owner`` holds every lock of ``targets`` (at once, when they
        are free), or failed with the reason it never will (deadlock, timeout; with
        ``nowait``, any lock held by another)."""
        ...

    def release(self, owner: Owner) -> None:
        """Release every lock of ``owner`` and end any wait of its (the transaction ended)."""
        ...


@dataclass(eq=False)
class _Request:
    owner: Owner
    targets: list[Target]
    #: What its waiter awaits; made only once it must wait (most requests are granted at
    #: once, and a future costs a condition and its lock).
    future: Future[None] | None
    deadline: float | None
    nowait: bool = False
    index: int = 0  # targets before it are held
    #: The resource it waits on (None: not waiting).
    waiting_on: Resource | None = None

    @property
    def mode(self) -> str:
        return self.targets[self.index][1]


@dataclass(eq=False)
class _Resource:
    holders: dict[Owner, set[str]] = field(default_factory=dict)
    queue: list[_Request] = field(default_factory=list)


class LockManager:
    """The lock table (see the module docstring)."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._resources: dict[Resource, _Resource] = {}
        #: Each owner's resources held, and its wait (one at a time).
        self._held: dict[Owner, set[Resource]] = {}
        self._waits: dict[Owner, _Request] = {}
        #: Owners by age (first request), for choosing a deadlock's victim.
        self._age: dict[Owner, int] = {}
        self._ages = itertools.count()
        #: Owners chosen as a deadlock's victim, until they release.
        self._victims: set[Owner] = set()
        self._timer: threading.Thread | None = None
        self._wake_timer = threading.Condition(self._mutex)
        self.counters = {"lock_waits": 0, "deadlocks": 0, "lock_timeouts": 0}

    # ..................................................................... queries

    @property
    def active(self) -> bool:
        """Whether any lock is held or asked for (read without the mutex: a hint)."""
        return bool(self._resources)

    def table_busy(self, table: str) -> bool:
        """Whether a transaction holds (or waits for) a lock on ``table`` or its rows."""
        return ("t", table.lower()) in self._resources

    def held(self, owner: Owner) -> dict[Resource, set[str]]:
        """The locks ``owner`` holds (for tests and diagnostics)."""
        with self._mutex:
            return {r: set(self._resources[r].holders[owner])
                    for r in self._held.get(owner, ())}

    # ..................................................................... acquire / release

    def acquire(self, owner: Owner, targets: Sequence[Target], timeout: float | None,
                *, nowait: bool = False) -> Future[None]:
        """See :meth:`Locks.acquire`; ``nowait``: fail at once (3572) rather than wait."""
        settle: list[tuple[Future[None] | None, BaseException | None]] = []
        request = None
        with self._mutex:
            if owner in self._victims:
                settle.append((None, DeadlockError(_DEADLOCK)))
            elif owner in self._waits:
                settle.append((None, TransactionError(
                    "a transaction asked for a lock while it waits for another")))
            else:
                self._age.setdefault(owner, next(self._ages))
                deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
                request = _Request(owner, _expanded(targets), None, deadline, nowait)
                self._advance(request, settle)
        _settle(settle)
        if request is not None and request.future is not None:
            return request.future  # (it waits)
        error = next(e for f, e in settle if f is None)  # (the outcome at once)
        if error is None:
            return _GRANTED
        failed: Future[None] = Future()
        failed.set_exception(error)
        return failed

    def release_all(self, which: Any) -> None:
        """Release every owner for which ``which(owner)`` is true (a replica process that
        ended: its transactions')."""
        with self._mutex:
            owners = [o for o in {*self._held, *self._waits} if which(o)]
        for owner in owners:
            self.release(owner)

    def release(self, owner: Owner) -> None:
        settle: list[tuple[Future[None] | None, BaseException | None]] = []
        with self._mutex:
            request = self._waits.pop(owner, None)
            if request is not None:
                self._unqueue(request, settle)
                settle.append((request.future, TransactionError(
                    "the transaction ended while it waited for a lock")))
            self._release(owner, settle)
            self._victims.discard(owner)
            self._age.pop(owner, None)
        _settle(settle)

    # ..................................................................... inside the mutex

    def _advance(self, request: _Request, settle: list) -> None:
        """Grant ``request`` its targets in order, as far as they are free; the first that
        is not makes it wait (and be checked for a deadlock)."""
        owner = request.owner
        while request.index < len(request.targets):
            resource, mode = request.targets[request.index]
            state = self._resources.get(resource)
            if state is None:
                state = self._resources[resource] = _Resource()
            mine = state.holders.get(owner)
            if mine is not None and any(mode in _COVERS[m] for m in mine):
                request.index += 1
                continue
            if not self._grantable(state, request, mode, state.queue):
                if request.nowait:
                    self._drop_if_idle(resource)
                    settle.append((request.future, LockNowaitError(
                        "Statement aborted because lock(s) could not be acquired immediately "
                        "and NOWAIT is set.")))
                    return
                request.waiting_on = resource
                if request.future is None:
                    request.future = Future()
                state.queue.append(request)
                self._waits[owner] = request
                self.counters["lock_waits"] += 1
                self._check_deadlock(request, settle)
                if request.waiting_on is not None and request.deadline is not None:
                    self._start_timer()
                    self._wake_timer.notify()
                return
            state.holders.setdefault(owner, set()).add(mode)
            self._held.setdefault(owner, set()).add(resource)
            request.index += 1
        request.waiting_on = None
        self._waits.pop(owner, None)
        settle.append((request.future, None))

    def _grantable(self, state: _Resource, request: _Request, mode: str,
                   ahead: list[_Request]) -> bool:
        owner = request.owner
        conflicts = _CONFLICTS[mode]
        for other, modes in state.holders.items():
            if other != owner and not modes.isdisjoint(conflicts):
                return False
        if owner in state.holders:  # an upgrade passes the waiters
            return True
        return not any(w.owner != owner and w.mode in conflicts for w in ahead)

    def _blockers(self, request: _Request) -> set[Owner]:
        """The owners ``request`` waits for: holders of conflicting locks on its resource,
        and the waiters ahead of it whose modes conflict (unless it upgrades)."""
        assert request.waiting_on is not None
        state = self._resources[request.waiting_on]
        conflicts = _CONFLICTS[request.mode]
        out = {o for o, modes in state.holders.items()
               if o != request.owner and not modes.isdisjoint(conflicts)}
        if request.owner not in state.holders:
            for waiter in state.queue:
                if waiter is request:
                    break
                if waiter.owner != request.owner and waiter.mode in conflicts:
                    out.add(waiter.owner)
        return out

    def _check_deadlock(self, request: _Request, settle: list) -> None:
        """A cycle through ``request``'s owner in the wait-for graph: its member holding the
        fewest locks is the victim, the requester among equals (then the youngest), as
        InnoDB chooses the lighter transaction and the one whose request closes the cycle
        on a tie; the victim's wait fails and its locks go at once; repeated while
        ``request`` still waits in a cycle."""
        while request.waiting_on is not None:
            cycle = self._cycle(request.owner)
            if cycle is None:
                return
            self.counters["deadlocks"] += 1
            victim = min(cycle, key=lambda o: (len(self._held.get(o, ())), o != request.owner,
                                               -self._age.get(o, 0)))
            doomed = self._waits.pop(victim)
            self._unqueue(doomed, settle)
            settle.append((doomed.future, DeadlockError(_DEADLOCK)))
            self._victims.add(victim)  # its locks go now; it rolls back when it sees why
            self._release(victim, settle)
            if victim == request.owner:
                return

    def _cycle(self, start: Owner) -> list[Owner] | None:
        """Owners on a path of waits from ``start`` back to it, if there is one."""
        path: list[Owner] = []
        on_path: set[Owner] = set()
        done: set[Owner] = set()

        def visit(owner: Owner) -> bool:
            request = self._waits.get(owner)
            if request is None or request.waiting_on is None:
                return False
            path.append(owner)
            on_path.add(owner)
            for other in self._blockers(request):
                if other == start:
                    return True
                if other not in on_path and other not in done and visit(other):
                    return True
            path.pop()
            on_path.discard(owner)
            done.add(owner)
            return False

        return list(path) if visit(start) else None

    def _unqueue(self, request: _Request, settle: list) -> None:
        """Take a waiting request out of its resource's queue (those behind may go)."""
        resource = request.waiting_on
        request.waiting_on = None
        if resource is None:
            return
        state = self._resources.get(resource)
        if state is not None and request in state.queue:
            state.queue.remove(request)
            self._wake(resource, settle)

    def _release(self, owner: Owner, settle: list) -> None:
        for resource in self._held.pop(owner, ()):
            state = self._resources.get(resource)
            if state is None:
                continue
            state.holders.pop(owner, None)
            self._wake(resource, settle)

    def _wake(self, resource: Resource, settle: list) -> None:
        """Grant the waiters of ``resource`` that can go now, in order."""
        state = self._resources.get(resource)
        if state is None:
            return
        position = 0
        while position < len(state.queue):
            waiter = state.queue[position]
            if self._grantable(state, waiter, waiter.mode, state.queue[:position]):
                del state.queue[position]
                waiter.waiting_on = None
                self._waits.pop(waiter.owner, None)
                state.holders.setdefault(waiter.owner, set()).add(waiter.mode)
                self._held.setdefault(waiter.owner, set()).add(resource)
                waiter.index += 1
                self._advance(waiter, settle)  # (its next targets)
                state = self._resources.get(resource)
                if state is None:
                    return
                continue
            position += 1
        self._drop_if_idle(resource)

    def _drop_if_idle(self, resource: Resource) -> None:
        state = self._resources.get(resource)
        if state is not None and not state.holders and not state.queue:
            del self._resources[resource]

    # ..................................................................... timeouts

    def _start_timer(self) -> None:
        if self._timer is None:
            self._timer = threading.Thread(target=self._expire, name="rivulet-lock-timeouts",
                                           daemon=True)
            self._timer.start()

    def _expire(self) -> None:
        """Thread: fail the waits whose deadline has passed (1205)."""
        while True:
            settle: list[tuple[Future[None] | None, BaseException | None]] = []
            with self._mutex:
                now = time.monotonic()
                deadlines = [r.deadline for r in self._waits.values() if r.deadline is not None]
                for request in [r for r in self._waits.values()
                                if r.deadline is not None and r.deadline <= now]:
                    self._waits.pop(request.owner, None)
                    self._unqueue(request, settle)
                    self.counters["lock_timeouts"] += 1
                    settle.append((request.future, LockWaitTimeoutError(
                        "Lock wait timeout exceeded; try restarting transaction")))
                if not settle:
                    pending = [d for d in deadlines if d > now]
                    self._wake_timer.wait(min(pending) - now if pending else None)
            _settle(settle)


# ..................................................................... autocommit writes

_autocommits = itertools.count(1)


def autocommit_owner() -> Owner:
    """A name for the locks of one autocommit write (see :func:`autocommit_targets`)."""
    return ("auto", next(_autocommits))


def autocommit_targets(request: WriteRequest) -> list[Target]:
    """The locks an autocommit write waits for while a transaction holds locks on its
    table (as InnoDB's would: it is a transaction of one statement): the rows it names
    (an insert's keys, an UPDATE/DELETE by primary key), else the whole table, exclusive;
    held only while it commits."""
    table = request.table
    if len(request.written) > 1:  # (a multi-table UPDATE or DELETE)
        return [table_lock(t.name, X) for t in request.written]
    if request.kind == "insert":
        if not table.primary_key:
            return [table_lock(table.name, IX)]
        auto = table.auto_column
        keys = [table.pk_of(row) for row in request.rows if auto is None or row[auto]]
        return [table_lock(table.name, IX), *row_locks(table.name, keys, X)]
    if request.keys is not None:
        return [table_lock(table.name, IX), *row_locks(table.name, request.keys, X)]
    return [table_lock(table.name, X)]


def _expanded(targets: Sequence[Target]) -> list[Target]:
    """``targets`` with each row lock's table intention lock before it (once per table)."""
    out: list[Target] = []
    seen: set[Target] = set()
    for resource, mode in targets:
        if resource[0] == "r":
            intention = (("t", resource[1]), IS if mode == S else IX)
            if intention not in seen:
                seen.add(intention)
                out.append(intention)
        if (resource, mode) not in seen:
            seen.add((resource, mode))
            out.append((resource, mode))
    # Table locks first, then rows, each in a fixed order: two transactions asking for the
    # same set in one request never deadlock on its order.
    out.sort(key=lambda t: (t[0][0] != "t", repr(t[0])))
    return out


def _settle(settle: list[tuple[Future[None] | None, BaseException | None]]) -> None:
    """Resolve futures outside the mutex (their callbacks may call back in); None stands
    for the outcome of a request settled at once, which :meth:`LockManager.acquire`
    returns itself."""
    for future, error in settle:
        if future is None or future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)


_DEADLOCK = "Deadlock found when trying to get lock; try restarting transaction"

#: What a request granted at once gets: one future, done.
_GRANTED: Future[None] = Future()
_GRANTED.set_result(None)


def wait(future: Future[None]) -> None:
    """Block until a lock request is settled (its error raised)."""
    future.result()


__all__ = ["DEFAULT_TIMEOUT", "IS", "IX", "S", "X", "LockManager", "Locks", "Resource",
           "Target", "autocommit_owner", "autocommit_targets", "row_locks", "table_lock",
           "wait"]
