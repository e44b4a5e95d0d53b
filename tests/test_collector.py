"""The garbage-collector policy (rivulet/engine/collector.py): old objects are frozen, so that
automatic collections walk only young ones; cycles among frozen objects wait for a full
collection, which is run when due."""

from __future__ import annotations

import gc
import time
import weakref
from pathlib import Path

import pytest

from rivulet.engine import collector


class Node:
    """A weak-referenceable container (tracked by the collector)."""

    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture(autouse=True)
def policy() -> None:
    collector.install()


def frozen_after_middle_collection(*objects: object) -> None:
    gc.collect(1)
    listed = {id(o) for o in gc.get_objects()}  # every generation's objects, not the frozen
    assert all(gc.is_tracked(o) and id(o) not in listed for o in objects), \
        "survivors of a middle collection are frozen"


def test_survivors_of_a_middle_collection_are_frozen() -> None:
    nodes = [Node() for _ in range(1000)]
    frozen_after_middle_collection(*nodes)


def test_a_frozen_object_is_still_freed_when_its_last_reference_goes() -> None:
    node = Node()
    ref = weakref.ref(node)
    frozen_after_middle_collection(node)
    del node
    assert ref() is None


def test_a_frozen_cycle_waits_for_a_full_collection() -> None:
    collector.collect_all()  # none is due until much more is frozen: the idle thread waits
    a, b = Node(), Node()
    a.other, b.other = b, a
    ref = weakref.ref(a)
    frozen_after_middle_collection(a, b)
    del a, b
    gc.collect()  # automatic and explicit collections leave frozen objects alone
    assert ref() is not None
    assert collector.collect_all() >= 2
    assert ref() is None


def test_a_full_collection_is_due_once_the_frozen_heap_has_grown() -> None:
    collector.collect_all()
    assert not collector.full_collection_due()
    # the growth that makes one due: MIN_GROWTH, or a share of a larger frozen heap (a test
    # run that has imported more, Django's ORM say, has one)
    growth = max(collector.MIN_GROWTH, int(collector.GROWTH * collector._FREEZER.after_full))
    keep = [Node() for _ in range(growth + 1000)]
    gc.collect(1)
    assert collector.full_collection_due()
    collector.collect_all()
    assert not collector.full_collection_due()
    del keep


def test_the_idle_process_collects_frozen_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collector, "IDLE_SECONDS", 0.05)
    monkeypatch.setattr(collector, "MIN_GROWTH", 1)
    monkeypatch.setattr(collector, "GROWTH", 0.0)
    a, b = Node(), Node()
    a.other, b.other = b, a
    ref = weakref.ref(a)
    frozen_after_middle_collection(a, b)
    del a, b
    deadline = time.monotonic() + 30  # the thread may be in a sleep of the default length
    while ref() is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ref() is None, "the idle collector did not reclaim the frozen cycle"


def test_opening_a_database_installs_the_policy(tmp_path: Path) -> None:
    import rivulet

    collector.uninstall()
    assert not collector.installed()
    with rivulet.open(tmp_path / "db") as db:
        assert collector.installed()
        assert gc.get_threshold() == (collector.GEN0, collector.GEN1, collector.GEN2)
        db.execute("CREATE TABLE t (id INT PRIMARY KEY)")


def test_the_freezer_never_shows_a_thread_its_own_tuple_being_built() -> None:
    """With the policy on, threads building tuples from generators (CPython resizes such
    a tuple while it grows, and requires it to have no other reference) beside a thread
    that makes middle collections run: no ``SystemError: bad argument to internal
    function``, which a callback holding the oldest generation's list across a thread
    switch caused (the reliability soak's data load hit it)."""
    import sys
    import threading

    errors: list[BaseException] = []
    stop = time.monotonic() + 3.0

    def build() -> None:
        while time.monotonic() < stop and not errors:
            try:
                tuple(x for x in range(30))
                [[i] for i in range(50)]
            except SystemError as exc:
                errors.append(exc)

    def churn() -> None:
        keep: list[list[list[int]]] = []
        while time.monotonic() < stop and not errors:
            keep.append([[] for _ in range(100)])
            if len(keep) > 2000:
                keep.clear()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # a thread switch at every chance
    try:
        threads = [threading.Thread(target=build) for _ in range(2)]
        threads.append(threading.Thread(target=churn))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
