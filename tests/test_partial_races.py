"""Partial state (issue 3): deliberate races between upqueries, writes and evictions.

docs/design.md, "Partial state": "Races between an in-flight upquery and concurrent updates are
the classic bug: test them deliberately." Everything that touches the graph holds the graph
lock, but writes COMMIT without it, so storage runs ahead of the graph: an upquery answers
from a storage snapshot taken back to the graph's LSN by subtracting the committed batches
not yet propagated. The test hooks (``db.hooks``) force the interleavings:

(a) an upquery held at ``upquery_snapshot`` (before its storage read) or ``upquery_answer``
    (after it) while writes to the same key commit; the read answers the state at the
    graph's LSN, and after settle() the key has every write exactly once;
(b) propagation held at ``before_propagate`` while several writes commit, then a blocking
    read of a missing key: the snapshot is ahead of the graph, the rows of the unapplied
    batches must not be counted twice (once by the snapshot, once by propagation);
(c) (a) and (b) on every kind of partial view: joins (StoryComments, Karma, TopicVotes),
    aggregates (VoteCount, UserVotes, Karma), a reader over a full aggregate
    (StoriesWithVC), DISTINCT, top-k, compound, IN and range keys;
(d) evictions while writes are pending, and a free-running stress of readers, an evictor
    and a writer under a tiny memory limit.

Helpers (the news-like program, :class:`Gate`, the SQLite oracle) are in test_partial.py.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

import rivulet
from test_partial import (
    KEYS,
    PARTIAL_VIEWS,
    TOPICS,
    USERS,
    WAIT,
    Gate,
    PartialPair,
    check_views,
    held_invariant,
    make_pair,
    matches,
    snapshot,
    wait_answer,
)

#: The story the race writes revolve around (author 3, topic None in the sample: the
#: writes give it a topic), and one with a topic.
STORIES_UNDER_RACE = [5, 3]

RACE_VIEWS = [
    "StoriesWithVC", "Karma", "TopicVotes", "StoryComments", "VoteCount", "UserVotes",
    "Voters", "LatestComments", "TopicTop", "PairVotes", "StoriesIn", "AuthorAfter",
    "StoryVotes", "FrontPage",  # read whole: the reader is one hole over full state
    "StoriesAfter",  # read whole, filled straight from a base table
]


class Ctx:
    """A story and the keys of every view that its writes touch."""

    def __init__(self, pair: PartialPair, story: int) -> None:
        lite = pair.lite
        self.story = story
        self.author, self.topic = lite.execute(
            "SELECT author, topic FROM stories WHERE id = ?", (story,)).fetchone()
        row = lite.execute("SELECT user_id FROM votes WHERE story_id = ? ORDER BY user_id",
                           (story,)).fetchone()
        self.voter = row[0] if row else 0
        row = lite.execute("SELECT id FROM stories WHERE author = ? AND id <> ? ORDER BY id",
                           (self.author, story)).fetchone()
        self.sibling = row[0] if row else 0  # another story of the same author
        row = lite.execute("SELECT id FROM stories WHERE author <> ? ORDER BY id",
                           (self.author,)).fetchone()
        self.stranger = row[0]  # a story of another author
        self.other_topic = next(t for t in TOPICS if t != self.topic)

    def key(self, view: str) -> tuple:
        return {
            "StoriesWithVC": (self.story,),
            "StoryComments": (self.story,),
            "VoteCount": (self.story,),
            "Voters": (self.story,),
            "LatestComments": (self.story,),
            "Karma": (self.author,),
            "UserVotes": (self.voter,),
            "TopicVotes": (self.topic if self.topic is not None else self.other_topic,),
            "TopicTop": (self.topic if self.topic is not None else self.other_topic,),
            "PairVotes": (self.voter, self.story),
            "StoriesIn": (self.story, self.sibling, 99),
            "AuthorAfter": (self.author, -1),
            "StoryVotes": (),
            "FrontPage": (),
            "StoriesAfter": (-1,),
        }[view]

    def writes(self) -> list[tuple[str, list[Any]]]:
        """Separate commits that add rows to, change rows of, and move rows into and out
        of the keys of :meth:`key`."""
        k, a, u = self.story, self.author, self.voter
        return [
            ("INSERT INTO votes VALUES (?, ?)", [u, k]),
            ("INSERT INTO votes VALUES (?, ?)", [(u + 1) % len(USERS), k]),
            ("INSERT INTO comments VALUES (?, ?, ?, ?, ?)", [900, k, u, "race", 5]),
            ("UPDATE comments SET created = created + 30 WHERE story_id = ?", [k]),
            ("UPDATE users SET name = ? WHERE id = ?", ["renamed", u]),
            ("INSERT INTO stories VALUES (?, ?, ?, ?)", [90, a, "new", self.topic]),
            ("UPDATE stories SET topic = ? WHERE id = ?", [self.other_topic, k]),
            ("DELETE FROM votes WHERE user_id = ? AND story_id = ?", [u, k]),
            ("UPDATE votes SET story_id = ? WHERE story_id = ?", [k, self.stranger]),
            ("UPDATE stories SET author = ? WHERE id = ?", [a, self.stranger]),
            ("DELETE FROM stories WHERE id = ?", [self.sibling]),
            ("UPDATE stories SET author = ? WHERE id = ?", [(a + 1) % 4, k]),
            ("INSERT INTO votes VALUES (?, ?)", [u, k]),
        ]


def _run(target: Any, out: list[Any], errors: list[BaseException]) -> threading.Thread:
    def body() -> None:
        try:
            out.append(target())
        except BaseException as exc:  # noqa: BLE001 -- the test reports it
            errors.append(exc)

    return threading.Thread(target=body, daemon=True)


def _held_or_done(gate: Gate, thread: threading.Thread) -> bool:
    """Wait until ``thread`` is held by ``gate`` (True) or has finished (False)."""
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        if gate.reached.wait(0.01):
            return True
        if not thread.is_alive():
            return False
    raise AssertionError("the read neither reached the hook nor finished")


# --------------------------------------------------------------------------- (a), (c)


@pytest.mark.parametrize("view", RACE_VIEWS)
@pytest.mark.parametrize("hook,skip", [
    ("upquery_snapshot", 0),  # held before reading storage: the snapshot sees the writes
    ("upquery_answer", 0),    # held after reading storage: the writes come after it
    ("upquery_answer", 1),    # a second base lookup of the same upquery (joins) is held
])
def test_upquery_held_while_writes_commit(view: str, hook: str, skip: int) -> None:
    """A read's upquery is held at a hook while writes to its key commit (they cannot
    propagate: the upquery holds the graph lock). The read answers the state before the
    writes (the graph's LSN); after settle() the key, and every view, equals SQLite."""
    with make_pair() as pair:
        db = pair.db
        ctx = Ctx(pair, STORIES_UNDER_RACE[0])
        params = ctx.key(view)
        db.evict()
        before = snapshot(pair.lite)
        out: list[Any] = []
        errors: list[BaseException] = []
        reader = _run(lambda: db.view(view).lookup(*params), out, errors)
        gate = Gate(thread=reader, skip=skip)
        db.hooks[hook] = gate
        reader.start()
        _held_or_done(gate, reader)
        try:
            for sql, p in ctx.writes():
                pair.execute(sql, p)
        finally:
            gate.release.set()
        reader.join(WAIT)
        assert not reader.is_alive()
        assert not errors and not gate.errors, (errors, gate.errors)
        pair.check_answer(view, params, out[0], before)
        del db.hooks[hook]
        pair.settle()
        pair.check_view(view, params)
        check_views(pair)
        held_invariant(db)


# --------------------------------------------------------------------------- (b), (c)


@pytest.mark.parametrize("view", RACE_VIEWS)
def test_read_in_held_propagation(view: str) -> None:
    """Propagation is held before the first write's wave while all the writes commit;
    then, still before that wave (in the hook, holding the graph lock), a blocking read of
    a missing key: its snapshot is ahead of the graph by every write. It must answer the
    state before the writes, and after the waves (which update the filled key) every
    write counts exactly once."""
    with make_pair() as pair:
        db = pair.db
        ctx = Ctx(pair, STORIES_UNDER_RACE[1])
        params = ctx.key(view)
        writes = ctx.writes()
        db.evict()
        before = snapshot(pair.lite)
        out: list[Any] = []
        gate = Gate(then=lambda: out.append(db.view(view).lookup(*params)))
        db.hooks["before_propagate"] = gate
        try:
            pair.execute(*writes[0])
            assert gate.reached.wait(WAIT)
            for sql, p in writes[1:]:
                pair.execute(sql, p)
        finally:
            gate.release.set()
        pair.settle()
        assert not gate.errors, gate.errors
        pair.check_answer(view, params, out[0], before)
        pair.check_view(view, params)
        check_views(pair)
        held_invariant(db)


@pytest.mark.parametrize("view", RACE_VIEWS)
def test_blocking_read_races_held_propagation(view: str) -> None:
    """As above, but the read comes from another thread that waits for the graph lock
    while propagation is held, and then races the remaining waves for it: its answer is
    the state after some prefix of the writes, and after settle() every view is right."""
    with make_pair() as pair:
        db = pair.db
        ctx = Ctx(pair, STORIES_UNDER_RACE[0])
        params = ctx.key(view)
        writes = ctx.writes()
        db.evict()
        states = [snapshot(pair.lite)]
        gate = Gate()
        db.hooks["before_propagate"] = gate
        out: list[Any] = []
        errors: list[BaseException] = []
        reader = _run(lambda: db.view(view).lookup(*params), out, errors)
        try:
            pair.execute(*writes[0])
            states.append(snapshot(pair.lite))
            assert gate.reached.wait(WAIT)
            for sql, p in writes[1:]:
                pair.execute(sql, p)
                states.append(snapshot(pair.lite))
            reader.start()
            time.sleep(0.05)  # the reader waits for the graph lock
        finally:
            gate.release.set()
        reader.join(WAIT)
        assert not reader.is_alive()
        assert not errors, errors
        assert any(matches(pair, view, params, out[0], s) for s in states[1:]), (
            f"{view}{params}: {out[0]} is not the answer after any prefix of the writes")
        pair.settle()
        pair.check_view(view, params)
        check_views(pair)
        held_invariant(db)


# --------------------------------------------------------------------------- (d)


@pytest.mark.parametrize("view", ["Karma", "TopicVotes", "StoryComments", "VoteCount", "Voters",
                                  "LatestComments", "TopicTop", "AuthorAfter"])
def test_evict_while_writes_pending(view: str) -> None:
    """Keys filled before the writes; propagation held while the writes commit; in the
    hold (graph lock held, writes pending): evict everything, refill the key at the old
    LSN, evict the view, refill again; then the waves run. After settle() every view
    equals SQLite."""
    with make_pair() as pair:
        db = pair.db
        ctx = Ctx(pair, STORIES_UNDER_RACE[0])
        params = ctx.key(view)
        writes = ctx.writes()
        check_views(pair)  # everything filled
        before = snapshot(pair.lite)
        answers: list[Any] = []

        def in_the_hold() -> None:
            db.evict()
            answers.append(db.view(view).lookup(*params))
            held_invariant(db)
            db.evict(view)
            answers.append(db.view(view).lookup(*params))
            for name in PARTIAL_VIEWS:  # other keys at the old LSN too
                db.view(name).lookup(*KEYS[name][3])

        gate = Gate(then=in_the_hold)
        db.hooks["before_propagate"] = gate
        try:
            pair.execute(*writes[0])
            assert gate.reached.wait(WAIT)
            for sql, p in writes[1:]:
                pair.execute(sql, p)
        finally:
            gate.release.set()
        pair.settle()
        assert not gate.errors, gate.errors
        for got in answers:
            pair.check_answer(view, params, got, before)
        check_views(pair)
        held_invariant(db)


def test_evict_in_upquery_hold_then_write() -> None:
    """A read's upquery is held after its storage read while writes commit and a second
    thread waits to evict: the eviction runs after the fill, before the writes' waves,
    which must then be dropped for the evicted keys and refilled correctly later."""
    with make_pair() as pair:
        db = pair.db
        ctx = Ctx(pair, STORIES_UNDER_RACE[0])
        out: list[Any] = []
        errors: list[BaseException] = []
        reader = _run(lambda: db.view("Karma").lookup(*ctx.key("Karma")), out, errors)
        evictor = _run(db.evict, [], errors)
        gate = Gate(thread=reader)
        db.hooks["upquery_answer"] = gate
        reader.start()
        assert _held_or_done(gate, reader)
        try:
            evictor.start()
            for sql, p in ctx.writes():
                pair.execute(sql, p)
        finally:
            gate.release.set()
        reader.join(WAIT)
        evictor.join(WAIT)
        assert not errors, errors
        check_views(pair)
        held_invariant(db)


def _random_write(rng: random.Random, next_id: list[int]) -> tuple[str, list[Any]]:
    story, user = rng.randrange(12), rng.randrange(len(USERS))
    choice = rng.randrange(10)
    if choice < 3:
        return "INSERT INTO votes VALUES (?, ?)", [user, story]
    if choice == 3:
        return "DELETE FROM votes WHERE user_id = ? AND story_id = ?", [user, story]
    if choice == 4:
        return "UPDATE votes SET story_id = ? WHERE user_id = ?", [story, user]
    if choice == 5:
        next_id[0] += 1
        return "INSERT INTO comments VALUES (?, ?, ?, ?, ?)", [
            next_id[0], story, user, "s", rng.randrange(20)]
    if choice == 6:
        return "UPDATE comments SET story_id = ? WHERE story_id = ?", [story, rng.randrange(12)]
    if choice == 7:
        return "UPDATE stories SET author = ?, topic = ? WHERE id = ?", [
            rng.randrange(4), rng.choice(TOPICS + [None]), story]
    if choice == 8:
        return "DELETE FROM stories WHERE id = ?", [story]
    return "INSERT INTO stories VALUES (?, ?, ?, ?)", [story, rng.randrange(4), "s",
                                                      rng.choice(TOPICS)]


@pytest.mark.parametrize("limit,policy", [(None, "lru"), (8_000, "lru"), (8_000, "random")])
def test_stress_readers_evictor_writer(limit: int | None, policy: str) -> None:
    """Readers (blocking, non-blocking, lookup_many) on every partial view, an evictor
    and a writer at once; then settle(): every view equals SQLite."""
    with make_pair(memory_limit=limit, eviction=policy) as pair:
        db = pair.db
        stop = threading.Event()
        errors: list[BaseException] = []

        def reader(seed: int) -> None:
            rng = random.Random(seed)
            try:
                while not stop.is_set():
                    name = rng.choice(PARTIAL_VIEWS)
                    view = db.view(name)
                    mode = rng.randrange(3)
                    if mode == 2 and name in ("Karma", "VoteCount", "Voters", "UserVotes"):
                        got = view.lookup_many([rng.randrange(-1, 12) for _ in range(4)],
                                               block=rng.random() < 0.5)
                    else:
                        got = view.lookup(*rng.choice(KEYS[name]), block=mode == 0)
                    assert got is rivulet.NOT_READY or isinstance(got, list)
            except BaseException as exc:  # noqa: BLE001 -- reported below
                errors.append(exc)

        def evictor() -> None:
            rng = random.Random(99)
            try:
                while not stop.is_set():
                    db.evict(rng.choice([None, *PARTIAL_VIEWS]))
                    time.sleep(0.003)
            except BaseException as exc:  # noqa: BLE001 -- reported below
                errors.append(exc)

        threads = [threading.Thread(target=reader, args=(s,), daemon=True) for s in range(3)]
        threads.append(threading.Thread(target=evictor, daemon=True))
        for t in threads:
            t.start()
        rng = random.Random(7)
        next_id = [1000]
        try:
            for _ in range(150):
                pair.execute(*_random_write(rng, next_id))
        finally:
            stop.set()
            for t in threads:
                t.join(WAIT)
        assert not any(t.is_alive() for t in threads)
        assert not errors, errors
        check_views(pair)
        held_invariant(db)
        if limit is not None:
            assert db.stats()["evictions"] > 0


def test_nonblocking_fill_races_writes() -> None:
    """A non-blocking read starts a background fill that is held after its storage read
    while writes to the key commit; the key's later answers are SQLite's."""
    with make_pair() as pair:
        db = pair.db
        ctx = Ctx(pair, STORIES_UNDER_RACE[1])
        gate = Gate()
        db.hooks["upquery_answer"] = gate
        params = ctx.key("Karma")
        try:
            assert db.view("Karma").lookup(*params, block=False) is rivulet.NOT_READY
            assert gate.reached.wait(WAIT)
            for sql, p in ctx.writes():
                pair.execute(sql, p)
        finally:
            gate.release.set()
        wait_answer(lambda: db.view("Karma").lookup(*params, block=False))
        check_views(pair)
        held_invariant(db)


def _evict_join_caches(db: rivulet.Database) -> int:
    """Evict the partial join indexes (caches of base tables) only, keeping readers and
    aggregates: the next wave's join lookups miss and fill inside the wave."""
    n = 0
    with db.graph_lock:
        for node_id in db.graph.bases.values():
            for index in db.graph.nodes[node_id].arrangements.values():
                if index.partial:
                    n += db.graph.evict(node_id, index, list(index.index))
    return n


@pytest.mark.parametrize("hook", ["upquery_snapshot", "upquery_answer"])
@pytest.mark.parametrize("view,first", [
    ("Karma", "vote"), ("TopicVotes", "vote"), ("StoryComments", "comment"),
])
def test_join_fill_in_wave_races_writes(view: str, first: str, hook: str) -> None:
    """A wave's join misses in its (evicted) index of the other side and fills it from
    storage at the wave's LSN, in the propagation worker; that storage read is held while
    later writes commit (storage runs ahead of the wave). After settle() every view is
    right: the fill saw neither the later writes nor missed the wave's own."""
    with make_pair() as pair:
        db = pair.db
        ctx = Ctx(pair, STORIES_UNDER_RACE[0])
        params = ctx.key(view)
        pair.check_view(view, params)  # the reader (and aggregate) hold the key
        assert _evict_join_caches(db) > 0
        writes = ctx.writes()
        lead = writes[0] if first == "vote" else writes[2]
        gate = Gate(thread="rivulet-propagate")
        db.hooks[hook] = gate
        try:
            pair.execute(*lead)
            held = gate.reached.wait(WAIT)
            for sql, p in writes:
                if (sql, p) != lead:
                    pair.execute(sql, p)
        finally:
            gate.release.set()
        pair.settle()
        assert not gate.errors, gate.errors
        assert held, "the wave did not fill a join index from storage"
        pair.check_view(view, params)
        check_views(pair)
        held_invariant(db)


def test_stress_with_migrations() -> None:
    """Readers and a writer while views sharing partial operators with the running ones
    are created and dropped (migrations hold the commit and graph locks); then every view
    equals SQLite and dependents never hold keys their sources do not."""
    from test_partial import EXTRA

    with make_pair(memory_limit=20_000) as pair:
        db = pair.db
        stop = threading.Event()
        errors: list[BaseException] = []

        def reader(seed: int) -> None:
            rng = random.Random(seed)
            try:
                while not stop.is_set():
                    name = rng.choice(["Karma", "Voters", "TopicTop", "TopicVotes"])
                    got = db.view(name).lookup(*rng.choice(KEYS[name]), block=rng.random() < 0.7)
                    assert got is rivulet.NOT_READY or isinstance(got, list)
            except BaseException as exc:  # noqa: BLE001 -- reported below
                errors.append(exc)

        threads = [threading.Thread(target=reader, args=(s,), daemon=True) for s in range(2)]
        for t in threads:
            t.start()
        rng = random.Random(3)
        next_id = [2000]
        try:
            for step in range(60):
                pair.execute(*_random_write(rng, next_id))
                if step % 6 == 0:
                    name = rng.choice(sorted(EXTRA))
                    if name in pair.views:
                        pair.drop_view(name)
                    else:
                        pair.create_view(name, EXTRA[name])
                        db.view(name).lookup(*rng.choice(KEYS[name]))
                    held_invariant(db)
        finally:
            stop.set()
            for t in threads:
                t.join(WAIT)
        assert not any(t.is_alive() for t in threads)
        assert not errors, errors
        check_views(pair)
        held_invariant(db)


def test_batches_queued_behind_held_propagation_apply_as_one_wave() -> None:
    """Batches that queue while propagation is held are applied together: one more wave,
    not one per batch (the worker catches up instead of trailing), and every write still
    counts exactly once in every view; a read in between answers from storage taken back
    across all of them."""
    with make_pair() as pair:
        db = pair.db
        gate = Gate()
        db.hooks["before_propagate"] = gate
        story = STORIES_UNDER_RACE[0]
        writes = [("INSERT INTO votes (user_id, story_id) VALUES (?, ?)", (user, story))
                  for user in range(100, 130)]
        try:
            pair.execute(*writes[0])
            assert gate.reached.wait(WAIT)
            for sql, params in writes[1:]:
                pair.execute(sql, params)
        finally:
            gate.release.set()
        pair.settle()
        assert not gate.errors, gate.errors
        assert gate.calls <= 3, f"{len(writes)} batches took {gate.calls} waves"
        check_views(pair)
        held_invariant(db)
