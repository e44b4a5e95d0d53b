"""Named (user-level) locks: ``GET_LOCK``, ``RELEASE_LOCK``, ``IS_FREE_LOCK``,
``IS_USED_LOCK``, ``RELEASE_ALL_LOCKS``, as MySQL 5.7+ and MariaDB have them.

Applications use them as a mutex across connections (Django's and Rails' migration runners,
job queues), unrelated to rows or transactions: a lock is held by a session (a MySQL
connection, an embedded DB-API connection) until it releases it or goes away; it is
re-entrant, counted (taken twice, released twice); ``COMMIT`` and ``ROLLBACK`` leave it
alone. A wait is bounded by the call's timeout in seconds (fractions allowed; a negative
timeout waits for ever, as MySQL 5.7+ documents it); a wait that would close a cycle of
waits fails at once with MySQL's deadlock error (1213), as MariaDB's and MySQL's lock
managers detect it, instead of both sessions sleeping out their timeouts.

One table per database process (the :class:`NamedLocks` of the
:class:`~rivulet.engine.database.Database`), shared by every session of it. Names compare
exactly, as MariaDB 10.11 compares them (``'x'`` and ``'X'`` are two locks).

Waiting: a session's thread blocks on :meth:`NamedLocks.get`; the MySQL server waits on
its event loop instead (:meth:`NamedLocks.get_async`), so that a thousand clients waiting
for one lock hold no thread each.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rivulet.errors import DeadlockError
from rivulet.sql.lock_calls import BoundLockCall

#: Session ids the embedded sessions get: below 65,536, where the MySQL server's never are
#: (its connection ids carry the serving process's number, from 1, in their high bits).
_EMBEDDED_IDS = 1 << 16


@dataclass
class _Held:
    """A lock taken: by which session, how many times."""

    owner: int
    count: int = 1


@dataclass(eq=False)
class _Waiter:
    """A call of a session waiting for a lock: what wakes it when the lock may be free.
    One per call (two threads of one DB-API connection may wait at once)."""

    owner: int
    wake: Callable[[], None]
    #: Its session ended while it waited (:meth:`NamedLocks.end_session`): it gives up.
    abandoned: bool = False


class _Abandoned(Exception):
    """A wait whose session ended: it takes nothing (see :meth:`NamedLocks.end_session`)."""


@dataclass
class NamedLocks:
    """The lock table. Sessions are named by their connection id (``CONNECTION_ID()``)."""

    _held: dict[str, _Held] = field(default_factory=dict)
    _waiting: dict[str, list[_Waiter]] = field(default_factory=dict)
    _mutex: threading.Lock = field(default_factory=threading.Lock)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def new_session(self) -> int:
        """An id for an embedded session (a DB-API connection)."""
        session = next(self._ids)
        if session >= _EMBEDDED_IDS:  # (65,535 connections opened in one process)
            self._ids = itertools.count(1)
            session = next(self._ids)
        return session

    # ..................................................................... statements

    def answer(self, session: int, calls: list[BoundLockCall]) -> tuple[int | None, ...]:
        """The row of a SELECT of lock calls (rivulet/sql/lock_calls.py), each call made
        in turn by ``session``; a GET_LOCK blocks this thread while it waits."""
        row: list[int | None] = []
        for c in calls:
            if _waits(c):
                assert c.name is not None and c.timeout is not None  # (see _waits)
                row.append(self.get(session, c.name, c.timeout))
            else:
                row.append(self._call(session, c))
        return tuple(row)

    async def answer_async(self, session: int,
                           calls: list[BoundLockCall]) -> tuple[int | None, ...]:
        """:meth:`answer` on an event loop."""
        row: list[int | None] = []
        for c in calls:
            if _waits(c):
                assert c.name is not None and c.timeout is not None  # (see _waits)
                row.append(await self.get_async(session, c.name, c.timeout))
            else:
                row.append(self._call(session, c))
        return tuple(row)

    def _call(self, session: int, call: BoundLockCall) -> int | None:
        """A call that does not wait."""
        if call.function == "RELEASE_ALL_LOCKS":
            return self.release_all(session)
        if call.name is None or call.function == "GET_LOCK":  # (a NULL name or timeout)
            return None
        if call.function == "RELEASE_LOCK":
            return self.release(session, call.name)
        if call.function == "IS_FREE_LOCK":
            return self.is_free(call.name)
        return self.is_used(call.name)

    # ..................................................................... the functions

    def get(self, session: int, name: str, timeout: float) -> int | None:
        """``GET_LOCK(name, timeout)``: 1 once ``session`` holds the lock, 0 if another
        session still held it after ``timeout`` seconds (negative: no limit), NULL if the
        session ended meanwhile (as for a killed wait in MySQL). Blocks."""
        deadline = _deadline(timeout)
        ready = threading.Event()
        waiter = _Waiter(session, ready.set)
        try:
            while True:
                if self._try(name, waiter):
                    return 1
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return 0
                ready.wait(remaining)
                ready.clear()
        except _Abandoned:
            return None
        finally:
            self._stop_waiting(name, waiter)

    async def get_async(self, session: int, name: str, timeout: float) -> int | None:
        """:meth:`get` for an event loop: waits without holding a thread."""
        deadline = _deadline(timeout)
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()

        def wake() -> None:  # (from whichever thread releases the lock)
            loop.call_soon_threadsafe(ready.set)

        waiter = _Waiter(session, wake)
        try:
            while True:
                if self._try(name, waiter):
                    return 1
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return 0
                try:
                    await asyncio.wait_for(ready.wait(), remaining)
                except TimeoutError:
                    pass
                ready.clear()
        except _Abandoned:
            return None
        finally:
            self._stop_waiting(name, waiter)

    def release(self, session: int, name: str) -> int | None:
        """``RELEASE_LOCK(name)``: 1 if ``session`` held it (one level released), 0 if
        another session holds it, NULL if nobody does."""
        with self._mutex:
            held = self._held.get(name)
            if held is None:
                return None
            if held.owner != session:
                return 0
            held.count -= 1
            if held.count == 0:
                del self._held[name]
                self._wake(name)
            return 1

    def release_all(self, session: int) -> int:
        """``RELEASE_ALL_LOCKS()``, and a session's end: every lock ``session`` holds
        released; how many levels that was (each re-entrant take counts)."""
        with self._mutex:
            mine = [name for name, held in self._held.items() if held.owner == session]
            count = 0
            for name in mine:
                count += self._held.pop(name).count
                self._wake(name)
            return count

    def end_session(self, session: int) -> int:
        """A session's end (its client gone, its connection closed or reset): its waits
        given up, and every lock it holds released (how many levels). A wait left going
        would take its lock later for a session nobody can release it for: the lock
        would be held for good, as MySQL avoids by ending the wait of a killed
        connection."""
        with self._mutex:
            for waiters in self._waiting.values():
                for waiter in waiters:
                    if waiter.owner == session:
                        waiter.abandoned = True
                        waiter.wake()
        return self.release_all(session)

    def release_sessions(self, ended: Callable[[int], bool]) -> None:
        """End every session ``ended`` says is gone, holding or waiting (a replica
        process's, when it exits)."""
        with self._mutex:
            sessions = {held.owner for held in self._held.values() if ended(held.owner)}
            sessions |= {w.owner for ws in self._waiting.values() for w in ws if ended(w.owner)}
        for session in sessions:
            self.end_session(session)

    def is_free(self, name: str) -> int:
        """``IS_FREE_LOCK(name)``: 1 if nobody holds the lock, else 0."""
        return 0 if name in self._held else 1

    def is_used(self, name: str) -> int | None:
        """``IS_USED_LOCK(name)``: the connection id of the session holding it, or NULL."""
        held = self._held.get(name)
        return None if held is None else held.owner

    # ..................................................................... internals

    def _try(self, name: str, waiter: _Waiter) -> bool:
        """Take the lock for ``waiter``'s session if free (or its already); else register
        ``waiter`` to be woken when it is released, refusing a wait that closes a cycle."""
        session = waiter.owner
        with self._mutex:
            if waiter.abandoned:
                raise _Abandoned
            held = self._held.get(name)
            if held is None:
                self._held[name] = _Held(session)
                return True
            if held.owner == session:
                held.count += 1
                return True
            if self._waits_for(held.owner, session):
                raise DeadlockError("Deadlock found when trying to get lock; try restarting "
                                    "transaction")
            waiters = self._waiting.setdefault(name, [])
            if waiter not in waiters:
                waiters.append(waiter)
            return False

    def _waits_for(self, session: int, target: int) -> bool:
        """Whether ``session`` waits, directly or through others, for a lock ``target``
        holds (under the mutex)."""
        seen: set[int] = set()
        todo = [session]
        while todo:
            current = todo.pop()
            if current == target:
                return True
            if current in seen:
                continue
            seen.add(current)
            for name, waiters in self._waiting.items():
                holder = self._held.get(name)
                if holder is not None and any(w.owner == current for w in waiters):
                    todo.append(holder.owner)
        return False

    def _wake(self, name: str) -> None:
        for waiter in self._waiting.get(name, ()):
            waiter.wake()

    def _stop_waiting(self, name: str, waiter: _Waiter) -> None:
        with self._mutex:
            waiters = self._waiting.get(name)
            if waiters is not None and waiter in waiters:
                waiters.remove(waiter)
                if not waiters:
                    del self._waiting[name]


def _waits(call: BoundLockCall) -> bool:
    """A GET_LOCK with a name and a timeout (else it answers NULL at once)."""
    return call.function == "GET_LOCK" and call.name is not None and call.timeout is not None


def _deadline(timeout: float) -> float | None:
    """When a wait of ``timeout`` seconds ends (None: never, for a negative timeout)."""
    if timeout < 0 or math.isinf(timeout):
        return None
    return time.monotonic() + timeout
