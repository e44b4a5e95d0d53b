"""Writes that meet a hole are dropped, not filled (issue 32; rivulet/dataflow/holes.py).

As in Noria, partial state grows with reads, not with writes: a join whose input index
lacks a key a write probes drops that key's deltas when no state below it holds the key,
instead of filling the hole by an upquery. Pinned here:

1. writes to keys nobody read leave the state's size, upqueries and misses unchanged, for
   a join + count (``StoriesWithVC``), a plain join, a filter + join, a join + DISTINCT
   and a join + top-k;
2. reading those keys afterwards answers what SQLite answers, and keys read before the
   writes stay up to date (their holes are filled as before);
3. where some state below needs every key (a view read whole over the same join), the
   join still fills;
4. random interleavings of reads, writes (INSERT, UPDATE, DELETE) and evictions answer
   what SQLite answers (Hypothesis).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from oracle import Pair

SCHEMA = [
    "CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(50))",
    "CREATE TABLE votes (user_id INT, story_id INT)",
]

VIEWS = {
    "StoriesWithVC": (
        "SELECT stories.id, stories.title, COUNT(votes.user_id) AS vcount FROM stories "
        "LEFT JOIN votes ON stories.id = votes.story_id WHERE stories.id = ? "
        "GROUP BY stories.id, stories.title"),
    "StoryVoters": (
        "SELECT stories.id, stories.title, votes.user_id FROM stories "
        "JOIN votes ON stories.id = votes.story_id WHERE stories.id = ?"),
    "HighVoters": (
        "SELECT stories.id, votes.user_id FROM stories "
        "JOIN votes ON stories.id = votes.story_id WHERE votes.user_id > 5 AND stories.id = ?"),
    "DistinctVoters": (
        "SELECT DISTINCT stories.id, votes.user_id FROM stories "
        "JOIN votes ON stories.id = votes.story_id WHERE stories.id = ?"),
    "TopVoters": (
        "SELECT stories.id, votes.user_id FROM stories "
        "JOIN votes ON stories.id = votes.story_id WHERE stories.id = ? "
        "ORDER BY votes.user_id DESC LIMIT 2"),
}

#: Views over the same joins whose state below needs every key: read whole, or keyed by
#: a column that is not the join key.
NEEDING = {
    "AllVoters": (
        "SELECT stories.id, stories.title, votes.user_id FROM stories "
        "JOIN votes ON stories.id = votes.story_id"),
    "VotesOfUser": (
        "SELECT stories.id, stories.title, votes.user_id FROM stories "
        "JOIN votes ON stories.id = votes.story_id WHERE votes.user_id = ?"),
}


def make_pair(views: dict[str, str], **options: Any) -> Pair:
    pair = Pair()
    if options:
        pair.db.close()
        pair.db = rivulet.open(pair.path, **options)
    for ddl in SCHEMA:
        pair.execute(ddl)
    for name, sql in views.items():
        pair.create_view(name, sql)
    return pair


def state(pair: Pair) -> tuple[int, int, int]:
    stats = pair.db.stats()
    return stats["memory_bytes"], stats["upqueries"], stats["misses"]


# --------------------------------------------------------------------------- 1, 2


def test_writes_to_unread_keys_leave_state_unchanged() -> None:
    """The issue's shape and two more: 2,000 stories and 2,000 votes, nobody read."""
    for name, sql in VIEWS.items():
        pair = make_pair({name: sql})
        try:
            before = state(pair)
            pair.insert_many("stories", [(i, f"s{i}") for i in range(2000)])
            pair.settle()
            assert state(pair) == before, name
            pair.insert_many("votes", [(i % 13, i % 2000) for i in range(2000)])
            pair.execute("DELETE FROM votes WHERE story_id < 100")
            pair.execute("UPDATE stories SET title = 'x' WHERE id < 50")
            pair.settle()
            assert state(pair) == before, name
        finally:
            pair.close()


def test_unread_keys_answer_right_when_read_later() -> None:
    pair = make_pair(VIEWS)
    try:
        pair.insert_many("stories", [(i, f"s{i}") for i in range(200)])
        pair.insert_many("votes", [(i % 11, i % 200) for i in range(600)])
        pair.settle()
        for name in VIEWS:
            for key in (0, 7, 199, 500):  # 500: a story that does not exist
                pair.check_view(name, [key])
    finally:
        pair.close()


def test_keys_read_before_the_writes_stay_up_to_date() -> None:
    """Read keys are held below the join: its holes under them are filled as before."""
    pair = make_pair(VIEWS)
    try:
        pair.insert_many("stories", [(i, f"s{i}") for i in range(100)])
        pair.settle()
        read = [3, 4, 50]
        for name in VIEWS:
            for key in read:
                pair.check_view(name, [key])
        memory = state(pair)[0]
        pair.insert_many("votes", [(u, s) for u in range(10) for s in range(100)])
        pair.execute("DELETE FROM votes WHERE user_id = 7")
        pair.execute("UPDATE stories SET title = 'renamed' WHERE id IN (3, 60)")
        pair.settle()
        assert state(pair)[0] > memory  # the read keys' rows grew, nothing else was filled
        for name in VIEWS:
            for key in read:
                pair.check_view(name, [key])
        for name in VIEWS:
            built = pair.db.built_view(name)
            assert built is not None
            assert set(built.state.entries) == set(read), name  # nothing but what was read
        unread = [k for k in range(100) if k not in read]
        for name in VIEWS:
            for key in unread[:5]:
                pair.check_view(name, [key])
    finally:
        pair.close()


# --------------------------------------------------------------------------- 3


def test_state_that_needs_every_key_keeps_the_fill() -> None:
    """A view read whole (or keyed otherwise) over the same join: its state below needs
    every key, so the join fills its holes for writes as it did, and both views answer
    right."""
    for name, sql in NEEDING.items():
        pair = make_pair({"StoryVoters": VIEWS["StoryVoters"], name: sql})
        try:
            pair.insert_many("stories", [(i, f"s{i}") for i in range(50)])
            if name == "AllVoters":
                pair.check_view(name)  # fills the whole view: from now on it needs every key
            else:
                pair.check_view(name, [3])
            pair.insert_many("votes", [(i % 7, i % 50) for i in range(300)])
            pair.settle()
            if name == "AllVoters":
                pair.check_view(name)
            else:
                for user in (3, 4, 6):
                    pair.check_view(name, [user])
            for story in (0, 1, 49):
                pair.check_view("StoryVoters", [story])
        finally:
            pair.close()


def test_holders_of_a_shared_join() -> None:
    """A join shared by a view keyed by its key and one read whole: both readers decide.
    The whole view's reader is one hole until read; read, it needs every key."""
    from rivulet.dataflow.holes import holders
    from rivulet.dataflow.ops.join import Join

    pair = make_pair({"StoryVoters": VIEWS["StoryVoters"], "AllVoters": NEEDING["AllVoters"]})
    try:
        graph = pair.db.graph
        (join,) = [n for n, e in graph.nodes.items() if isinstance(e.op, Join)]
        op = graph.nodes[join].op
        assert isinstance(op, Join)
        found = holders(graph.nodes, join, op.key_positions)
        assert found is not None
        readers = {v: pair.db.built_view(v).state for v in ("StoryVoters", "AllVoters")}  # type: ignore[union-attr]
        assert {id(h.owner) for h in found} == {id(r) for r in readers.values()}
        assert [h.whole for h in found if h.owner is readers["AllVoters"]] == [True]
        assert graph.holes_below(join, op.key_positions, [1, 2]) == [1, 2]
        pair.check_view("StoryVoters", [1])
        assert graph.holes_below(join, op.key_positions, [1, 2]) == [2]
        pair.check_view("AllVoters")
        assert graph.holes_below(join, op.key_positions, [1, 2]) == []
        pair.db.evict("AllVoters")
        assert graph.holes_below(join, op.key_positions, [1, 2]) == [2]
    finally:
        pair.close()


def test_full_state_below_needs_every_key() -> None:
    from rivulet.dataflow.holes import holders
    from rivulet.dataflow.ops.join import Join

    pair = Pair()
    pair.db.close()
    pair.db = rivulet.open(pair.path, partial=False)
    try:
        for ddl in SCHEMA:
            pair.execute(ddl)
        pair.create_view("StoryVoters", VIEWS["StoryVoters"])
        graph = pair.db.graph
        (join,) = [n for n, e in graph.nodes.items() if isinstance(e.op, Join)]
        op = graph.nodes[join].op
        assert isinstance(op, Join)
        assert holders(graph.nodes, join, op.key_positions) is None
    finally:
        pair.close()


# --------------------------------------------------------------------------- 4


KEYS = 6  # few keys, so that reads, writes and evictions meet on the same ones
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("story"), st.integers(0, KEYS - 1)),
        st.tuples(st.just("vote"), st.integers(0, 8), st.integers(0, KEYS)),
        st.tuples(st.just("unvote"), st.integers(0, 8)),
        st.tuples(st.just("rename"), st.integers(0, KEYS - 1)),
        st.tuples(st.just("drop"), st.integers(0, KEYS - 1)),
        st.tuples(st.just("read"), st.sampled_from(sorted(VIEWS)), st.integers(0, KEYS)),
        st.tuples(st.just("evict"), st.sampled_from([None, *sorted(VIEWS)])),
        st.tuples(st.just("settle")),
    ),
    min_size=4,
    max_size=40,
)


def play(pair: Pair, ops: list[tuple[Any, ...]], stories: set[int]) -> None:
    for op in ops:
        kind = op[0]
        if kind == "story":
            if op[1] not in stories:
                stories.add(op[1])
                pair.execute("INSERT INTO stories VALUES (?, ?)", [op[1], f"s{op[1]}"])
        elif kind == "vote":
            pair.execute("INSERT INTO votes VALUES (?, ?)", [op[1], op[2]])
        elif kind == "unvote":
            pair.execute("DELETE FROM votes WHERE user_id = ?", [op[1]])
        elif kind == "rename":
            pair.execute("UPDATE stories SET title = ? WHERE id = ?", [f"r{op[1]}", op[1]])
        elif kind == "drop":
            stories.discard(op[1])
            pair.execute("DELETE FROM stories WHERE id = ?", [op[1]])
        elif kind == "read":
            pair.settle()
            pair.check_view(op[1], [op[2]])
        elif kind == "evict":
            pair.db.evict(op[1])
        else:
            pair.settle()


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops=OPS, needing=st.sampled_from([None, *sorted(NEEDING)]))
def test_random_reads_writes_and_evictions_equal_sqlite(
        ops: list[tuple[Any, ...]], needing: str | None) -> None:
    views = dict(VIEWS)
    if needing is not None:
        views[needing] = NEEDING[needing]
    pair = make_pair(views)
    try:
        pair.insert_many("stories", [(i, f"s{i}") for i in range(0, KEYS, 2)])
        pair.insert_many("votes", [(u, u % KEYS) for u in range(9)])
        play(pair, ops, set(range(0, KEYS, 2)))
        pair.settle()
        for name in VIEWS:
            for key in range(KEYS + 1):
                pair.check_view(name, [key])
        if needing == "AllVoters":
            pair.check_view(needing)
        elif needing is not None:
            for user in range(9):
                pair.check_view(needing, [user])
    finally:
        pair.close()


def test_random_interleavings_under_a_tiny_memory_limit() -> None:
    """Eviction by memory pressure (any partial state, the join's indexes included)."""
    rng = random.Random(7)
    for _ in range(3):
        pair = make_pair(VIEWS, memory_limit=20_000)
        try:
            ops: list[tuple[Any, ...]] = []
            for _ in range(300):
                r = rng.random()
                if r < 0.2:
                    ops.append(("story", rng.randrange(40)))
                elif r < 0.55:
                    ops.append(("vote", rng.randrange(9), rng.randrange(44)))
                elif r < 0.6:
                    ops.append(("unvote", rng.randrange(9)))
                elif r < 0.65:
                    ops.append(("rename", rng.randrange(40)))
                elif r < 0.68:
                    ops.append(("drop", rng.randrange(40)))
                elif r < 0.95:
                    ops.append(("read", rng.choice(sorted(VIEWS)), rng.randrange(44)))
                else:
                    ops.append(("evict", rng.choice([None, *sorted(VIEWS)])))
            play(pair, ops, set())
            pair.settle()
            for name in VIEWS:
                for key in range(44):
                    pair.check_view(name, [key])
        finally:
            pair.close()
