"""Short pauses of CPython's cyclic garbage collector over a large heap of state.

A collection of a generation walks every object tracked in it and in the younger ones,
and the event loop serves nothing meanwhile. rivulet's state is millions of small,
long-lived containers (groups and their accumulators, lists of rows, index dicts): at
Lobsters scale (1.7 million tracked objects), a full collection took 0.9 s. Raised
thresholds alone only trade frequency for length: with ``(100_000, 50, 100)`` each young
collection took 30-70 ms and each middle one 0.2-0.4 s, pauses that decided the tail of
page latency under load.

The policy: young collections are small (``GEN0`` new containers) and every few of them
is a middle one; whatever survives a middle collection (it has outlived two, so it is
state, not a request's temporaries) is frozen (:func:`gc.freeze`): moved to the
permanent generation, which no automatic collection walks. Reference counting still frees
frozen objects; state is acyclic (a group holds its accumulators, nothing points back),
so nothing of it waits for the collector. Only a reference cycle that becomes garbage
after it was frozen (a closed connection's objects, say) waits: :func:`collect_all`
unfreezes and collects everything; a thread runs it when the process has been idle for
a while and the frozen heap has grown since the last time, and :meth:`Database.close`
when the heap has grown (so that a process opening and closing databases gets their
memory back).

Process-wide, like the collector itself: installed by :func:`rivulet.open` unless
``tune_gc=False``.
"""

from __future__ import annotations

import gc
import threading
import time
from typing import Any

#: Young generation's size (new tracked containers) and how many young collections make a
#: middle one. At Lobsters scale a young collection took 2-5 ms and a middle one 10-12 ms
#: (against 30-50 ms and 0.2-0.4 s with ``(100_000, 50, 100)``), for the same total time.
GEN0, GEN1 = 10_000, 3
#: Full collections come only from :func:`collect_all`: the oldest generation holds
#: nothing unfrozen for long.
GEN2 = 1_000_000
#: A full collection is due once the frozen heap has grown by this share since the last
#: one (amortized: each object is walked a bounded number of times)...
GROWTH = 0.25
#: ... and by at least this many objects (a small heap is not walked again and again).
MIN_GROWTH = 50_000
#: The idle collector's period, and the share of a core under which the process is idle.
IDLE_SECONDS, IDLE_SHARE = 2.0, 0.05


class _Freezer:
    """The gc callback: after a middle or full collection, freeze the survivors. One per
    process, as the collector is; it counts what it froze since the last full
    collection."""

    def __init__(self) -> None:
        self.after_full = 0  # frozen objects right after the last full collection
        self.since_full = 0  # objects frozen since then (some may have been freed)
        self.idle: _IdleCollector | None = None

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info["generation"] >= 1:
            # After a middle collection the survivors are all in the oldest generation:
            # count them there (get_freeze_count walks the whole frozen heap). The list of
            # them is made and dropped inside one C call (sum over map), never alive at a
            # point where this thread may give up the GIL: another thread would see a
            # second reference to its own objects, and CPython's tuple(generator) fails
            # ("bad argument to internal function") on a tuple it is still building.
            self.since_full += sum(map(len, map(gc.get_objects, (2,))))
            gc.freeze()

    def __repr__(self) -> str:
        return "rivulet.engine.collector.freezer"


_FREEZER = _Freezer()


def install() -> None:
    """Set the thresholds, freeze survivors of middle collections, and start the idle
    collector (idempotent)."""
    gc.set_threshold(GEN0, GEN1, GEN2)
    if not installed():
        gc.callbacks.append(_FREEZER)
    if _FREEZER.idle is None:
        _FREEZER.idle = _IdleCollector()
        _FREEZER.idle.start()


def installed() -> bool:
    return any(cb is _FREEZER for cb in gc.callbacks)


def uninstall() -> None:
    """Stop freezing (frozen objects stay frozen until :func:`collect_all`); the
    thresholds are left as they are."""
    gc.callbacks[:] = [cb for cb in gc.callbacks if cb is not _FREEZER]


def full_collection_due() -> bool:
    """Whether enough has been frozen since the last full collection for one to be worth
    its pause."""
    return installed() and _FREEZER.since_full >= max(MIN_GROWTH, GROWTH * _FREEZER.after_full)


def collect_all() -> int:
    """Walk the whole heap once, frozen objects included, and collect unreachable cycles;
    the survivors are frozen again. A pause in proportion to the heap (about half a
    microsecond per tracked object): run it when nobody waits. Returns the number of
    objects collected."""
    gc.unfreeze()
    _FREEZER.since_full = 0
    try:
        return gc.collect()  # the freezer counts the survivors (the whole heap) and freezes them
    finally:
        _FREEZER.after_full, _FREEZER.since_full = _FREEZER.since_full, 0


class _IdleCollector(threading.Thread):
    """Runs :func:`collect_all` when one is due and the process has used at most
    ``IDLE_SHARE`` of a core over the last ``IDLE_SECONDS``: cycles among old objects are
    reclaimed while nobody waits for an answer."""

    def __init__(self) -> None:
        super().__init__(name="rivulet-collector", daemon=True)

    def run(self) -> None:
        cpu = time.process_time()
        while True:
            time.sleep(IDLE_SECONDS)
            now = time.process_time()
            if now - cpu <= IDLE_SHARE * IDLE_SECONDS and full_collection_due():
                collect_all()
                now = time.process_time()
            cpu = now
