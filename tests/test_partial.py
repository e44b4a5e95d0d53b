"""Partial state (issue 3): differential, stateful and behaviour tests.

docs/design.md, "Partial state": readers and stateful operators hold only the keys that were
read; a miss fills them by an upquery down to storage at the graph's LSN; eviction (by
``db.evict()`` or under ``memory_limit``) removes keys and every key below that depends
on them. Whatever the interleaving of writes, reads, evictions and settles, after
``settle()`` every lookup answers what SQLite answers (the Noria paper's four invariants,
section 4: update completeness, no spurious or duplicate updates, descendant eviction,
eventual consistency).

1. Differential: the scenario generators of tests/test_differential.py, with random reads
   of random keys (keys never written included; blocking, ``block=False``,
   ``lookup_many``), evictions and tiny memory limits interleaved with the writes; and
   ``partial=True`` against ``partial=False`` on the same scenario.
2. A Hypothesis state machine over a small news-like program (joins, aggregates, DISTINCT,
   top-k per key, compound, IN and range keys).
3. Behaviour: ``NOT_READY``, one fill for many concurrent misses, one upquery for
   ``lookup_many``, the memory bound, descendant eviction, ``UpqueryTimeout``, memory-limit
   strings, which views can be partial, ``rivulet explain``.

Deliberate races (hooks holding an upquery or propagation while writes commit) are in
tests/test_partial_races.py, which shares the helpers below.
"""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from scenarios import (
    Handler,
    Scenario,
    ViewSpec,
    check_all,
    lookups_for,
    many_keys_for,
    note_example,
    play,
)

import rivulet
from oracle import (
    Pair,
    assert_same_answer,
    in_arity,
    placeholder_count,
    query_shape,
    same_multiset,
    sorted_rows,
    with_in_arity,
)
from rivulet.cli import explain
from rivulet.engine.config import parse_size
from test_differential import AGGS, COMPOSED, JOINS, SINGLE, Features, scenarios

#: Every wait on another thread is bounded (pytest-timeout friendly).
WAIT = 10.0

#: Memory limits drawn by the generated tests (None: no limit).
TINY_LIMITS = [None, 5_000, 20_000, 50_000]

def examples(fraction: float) -> int:
    """A share of the profile's max_examples (ci: 60, dev: 30, --long: 2000)."""
    return max(4, int(settings.default.max_examples * fraction))


#: No "explain" phase: on Python < 3.12 it traces every line (sys.settrace) and a failure
#: in these multi-threaded tests then takes minutes to report.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]

HEAVY = settings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    report_multiple_bugs=False,
    deadline=None,
    phases=PHASES,
)


# --------------------------------------------------------------------------- the pair


def lite_sql(sql: str, params: Sequence[Any]) -> str:
    """The view's SELECT as SQLite runs it with ``params`` (IN lists sized to fit)."""
    arity = in_arity(sql)
    if arity is None:
        return sql
    return with_in_arity(sql, arity + len(params) - placeholder_count(sql))


class PartialPair(Pair):
    """:class:`oracle.Pair` with rivulet opened with ``options`` (memory limit, eviction,
    ...); with ``compare_full``, also a third database, rivulet with ``partial=False``, fed
    the same program and writes, whose answers must equal the partial one's."""

    def __init__(self, *, compare_full: bool = False, **options: Any) -> None:
        super().__init__()
        self.options = options
        self.db.close()
        self.db = rivulet.open(self.path, **options)
        self.full: rivulet.Database | None = None
        self.full_path: str | None = None
        if compare_full:
            self.full_path = tempfile.mkdtemp(prefix="rivulet-full-")
            self.full = rivulet.open(self.full_path, partial=False)

    # ..................................................................... program and writes

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if re.match(r"\s*CREATE\s+VIEW\b", sql, re.IGNORECASE):
            return super().execute(sql, params)  # goes through create_view
        out = super().execute(sql, params)
        if self.full is not None:
            try:
                n = self.full.execute(sql, params)
            except rivulet.RivuletError:
                n = None
            assert n == out, f"{sql!r} {tuple(params)!r}: partial gives {out!r}, full {n!r}"
        return out

    def create_view(self, name: str, select_sql: str) -> None:
        super().create_view(name, select_sql)
        if self.full is not None:
            self.full.execute(f"CREATE VIEW {name} AS {select_sql}")

    def drop_view(self, name: str) -> None:
        super().drop_view(name)
        if self.full is not None:
            self.full.execute(f"DROP VIEW {name}")

    def insert_many(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        super().insert_many(table, rows)
        if self.full is not None:
            self.full.table(table).insert_many([tuple(r) for r in rows])

    def settle(self) -> None:
        super().settle()
        if self.full is not None:
            self.full.settle()

    # ..................................................................... reads

    def check_view(self, name: str, params: Sequence[Any] = ()) -> None:
        super().check_view(name, params)
        if self.full is None:
            return
        sql = self.views[name]
        got = self.db.view(name).lookup(*params)
        got_full = self.full.view(name).lookup(*params)
        assert_same_answer(lite_sql(sql, params), params, got_full, self.lite,
                           what=f"view {name}.lookup with partial=False")
        if not query_shape(sql).limited:  # rows tied at a LIMIT may differ
            assert same_multiset(got, got_full), (
                f"view {name}{tuple(params)!r}: partial {sorted_rows(got)} != "
                f"full {sorted_rows(got_full)}"
            )

    def check_view_many(self, name: str, keys: Sequence[Any]) -> None:
        super().check_view_many(name, keys)
        if self.full is None:
            return
        got = self.db.view(name).lookup_many(keys)
        got_full = self.full.view(name).lookup_many(keys)
        if not query_shape(self.views[name]).limited:
            assert same_multiset(got, got_full), f"view {name}.lookup_many({keys!r})"

    def check_answer(self, name: str, params: Sequence[Any], got: Any,
                     lite: sqlite3.Connection | None = None) -> None:
        """``got`` (an answer read some other way) is SQLite's answer (over ``lite``)."""
        sql = self.views[name]
        assert_same_answer(lite_sql(sql, params), params, got, lite or self.lite,
                           what=f"view {name}{tuple(params)!r}")

    # ..................................................................... lifetime

    def reopen(self) -> None:
        self.db.close()
        self.db = rivulet.open(self.path, **self.options)

    def close(self) -> None:
        try:
            if self.full is not None:
                self.full.close()
        finally:
            if self.full_path is not None:
                shutil.rmtree(self.full_path, ignore_errors=True)
            super().close()


def snapshot(lite: sqlite3.Connection) -> sqlite3.Connection:
    """A copy of the SQLite oracle as it is now (the state at the current LSN)."""
    copy = sqlite3.connect(":memory:", isolation_level=None)
    copy.execute("PRAGMA case_sensitive_like = ON")
    lite.backup(copy)
    return copy


def matches(pair: PartialPair, name: str, params: Sequence[Any], got: Any,
            lite: sqlite3.Connection) -> bool:
    try:
        pair.check_answer(name, params, got, lite)
    except AssertionError:
        return False
    return True


# --------------------------------------------------------------------------- 1. differential


@st.composite
def partial_scenarios(draw: Any, feats: Features, **kwargs: Any) -> Scenario:
    """A scenario of tests/test_differential.py with partial-state operations put in
    anywhere: ``("probe", seed)`` random reads of random keys (not compared: views may
    lag), ``("settled_probe", seed)`` the same after settle() (compared),
    ``("evict",)`` / ``("evict_view", seed)`` forced evictions, ``("reopen_partial", _)``
    close and reopen (partial state starts empty again)."""
    base = draw(scenarios(feats, **kwargs))
    ops = list(base.ops)
    for _ in range(draw(st.integers(2, 8))):
        kind = draw(st.sampled_from(
            ["probe", "probe", "probe", "settled_probe", "evict", "evict_view", "probe",
             "settled_probe", "evict", "reopen_partial"]))
        op = (kind, draw(st.integers(0, 2**32 - 1)))
        ops.insert(draw(st.integers(0, len(ops))), op)
    return Scenario(base.tables, ops)


def probe(pair: PartialPair, views: list[ViewSpec], rng: random.Random, *,
          compare: bool) -> None:
    """A few reads of random views at random keys (values with no rows and NULL included),
    blocking, non-blocking or batched. With ``compare`` (after settle()), each answer that
    is not NOT_READY must be SQLite's, and a blocking read follows each non-blocking one
    (racing the background fill it started)."""
    if not views:
        return
    if compare:
        pair.settle()
    for _ in range(rng.randint(1, 5)):
        spec = rng.choice(views)
        view = pair.db.view(spec.name)
        batches = many_keys_for(spec)
        mode = rng.choice(["block", "nonblock", "many", "many_nonblock"])
        if mode.startswith("many") and batches:
            keys = list(rng.choice(batches))
            rng.shuffle(keys)
            got = view.lookup_many(keys, block=mode == "many")
            assert got is rivulet.NOT_READY or isinstance(got, list), got
            if compare:
                if got is not rivulet.NOT_READY and not any(p.role == "in" for p in spec.params):
                    expected = []
                    for key in dict.fromkeys(k if isinstance(k, tuple) else (k,) for k in keys):
                        expected.extend(pair.lite.execute(spec.sql, key).fetchall())
                    assert same_multiset(got, expected), (spec.sql, keys, got, expected)
                pair.check_view_many(spec.name, keys)
            continue
        params = rng.choice(lookups_for(spec))
        got = view.lookup(*params, block=mode == "block")
        assert got is rivulet.NOT_READY or isinstance(got, list), got
        if compare:
            if got is not rivulet.NOT_READY:
                pair.check_answer(spec.name, params, got)
            pair.check_view(spec.name, params)


def insert_many(pair: PartialPair, table: str, rows: list[tuple]) -> None:
    """``pair.insert_many``, where a shrunk scenario may reuse a primary key (a
    ``reinsert`` write before the first load): then both sides must reject the batch."""
    try:
        pair.insert_many(table, rows)
    except rivulet.ConstraintError:
        marks = ", ".join(["?"] * len(rows[0]))
        pair.lite.execute("SAVEPOINT batch")
        try:
            pair.lite.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        except sqlite3.IntegrityError:
            return
        finally:
            pair.lite.execute("ROLLBACK TO batch")
            pair.lite.execute("RELEASE batch")
        raise


def _probe(pair: PartialPair, views: list[ViewSpec], op: tuple) -> None:
    note_example(f"{op[0]} {op[1]}")
    probe(pair, views, random.Random(op[1]), compare=op[0] == "settled_probe")


def _evict_view(pair: PartialPair, views: list[ViewSpec], op: tuple) -> None:
    if views:
        pair.db.evict(random.Random(op[1]).choice(views).name)


#: The operations of :func:`partial_scenarios`, beside those of every scenario.
PARTIAL_OPERATIONS: dict[str, Handler] = {
    "insert_many": lambda pair, views, op: insert_many(pair, op[1], op[2]),
    "probe": _probe,
    "settled_probe": _probe,
    "evict": lambda pair, views, op: pair.db.evict(),
    "reopen_partial": lambda pair, views, op: pair.reopen(),
    "evict_view": _evict_view,
}


def run_partial(scenario: Scenario, *, compare_full: bool = False, **options: Any) -> None:
    """tests/test_differential.py's ``run_scenario`` on a :class:`PartialPair`, with the
    partial-state operations of :func:`partial_scenarios`. At the end: every view equals
    SQLite, then again after evicting everything (all refilled from storage)."""
    note_example(f"{scenario!r}\noptions {options}, compare_full={compare_full}")
    with PartialPair(compare_full=compare_full, **options) as pair:
        views = play(pair, scenario, PARTIAL_OPERATIONS)
        pair.db.evict()
        check_all(pair, views)


LIMITS = st.sampled_from(TINY_LIMITS)
POLICIES = st.sampled_from(["lru", "random"])


@settings(HEAVY, max_examples=examples(0.4))
@given(partial_scenarios(SINGLE, max_tables=1), LIMITS, POLICIES)
def test_partial_single_table(scenario: Scenario, limit: int | None, policy: str) -> None:
    """Filters, DISTINCT, aggregates, top-k, every parameter shape, under evictions."""
    run_partial(scenario, memory_limit=limit, eviction=policy)


@settings(HEAVY, max_examples=examples(0.4))
@given(partial_scenarios(JOINS, max_tables=3), LIMITS, POLICIES)
def test_partial_joins(scenario: Scenario, limit: int | None, policy: str) -> None:
    """Inner and left joins (partial join indexes) under evictions."""
    run_partial(scenario, memory_limit=limit, eviction=policy)


@settings(HEAVY, max_examples=examples(0.4))
@given(partial_scenarios(AGGS, max_tables=2), LIMITS, POLICIES)
def test_partial_aggregates(scenario: Scenario, limit: int | None, policy: str) -> None:
    """Partial aggregates (and their descendants) under evictions."""
    run_partial(scenario, memory_limit=limit, eviction=policy)


@settings(HEAVY, max_examples=examples(0.25))
@given(partial_scenarios(COMPOSED, max_tables=2, n_views=(1, 2), relation_views=(1, 2)),
       LIMITS, POLICIES)
def test_partial_composed(scenario: Scenario, limit: int | None, policy: str) -> None:
    """Views over views, subqueries, unions, with reopen, under evictions."""
    run_partial(scenario, memory_limit=limit, eviction=policy)


@settings(HEAVY, max_examples=examples(0.3))
@given(partial_scenarios(Features(views_in_from=False), max_tables=2), LIMITS)
def test_partial_equals_full(scenario: Scenario, limit: int | None) -> None:
    """The same scenario on ``partial=True`` (with evictions) and ``partial=False``: the
    same answers, both SQLite's."""
    run_partial(scenario, compare_full=True, memory_limit=limit)


# --------------------------------------------------------------------------- the news-like program

SCHEMA = [
    "CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(16) NOT NULL)",
    ("CREATE TABLE stories (id INT PRIMARY KEY, author INT NOT NULL, title VARCHAR(32) NOT NULL,"
     " topic VARCHAR(8))"),
    "CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL)",
    ("CREATE TABLE comments (id INT PRIMARY KEY, story_id INT NOT NULL, author INT NOT NULL,"
     " body VARCHAR(32) NOT NULL, created INT NOT NULL)"),
]

#: After rivulet/examples/news.sql (integer times instead of DATETIME, so SQLite can be the
#: oracle), plus a partial view of every kind.
VIEWS = {
    # full: no parameter
    "StoryVotes": "SELECT stories.id, stories.author, stories.title, COUNT(votes.user_id) AS "
    "vcount FROM stories LEFT JOIN votes ON stories.id = votes.story_id GROUP BY stories.id",
    "FrontPage": "SELECT id, vcount FROM StoryVotes ORDER BY vcount DESC, id LIMIT 5",
    # partial reader over a full aggregate
    "StoriesWithVC": "SELECT id, author, title, vcount FROM StoryVotes WHERE id = ?",
    # join + partial aggregate
    "Karma": "SELECT stories.author, COUNT(*) AS karma FROM stories JOIN votes "
    "ON stories.id = votes.story_id WHERE stories.author = ? GROUP BY stories.author",
    # join looked up by a column that is not its join key, partial aggregate above it
    "TopicVotes": "SELECT stories.topic, COUNT(votes.user_id) AS n FROM stories JOIN votes "
    "ON stories.id = votes.story_id WHERE stories.topic = ? GROUP BY stories.topic",
    # join (partial join indexes)
    "StoryComments": "SELECT comments.id, users.name, comments.body, comments.created "
    "FROM comments JOIN users ON comments.author = users.id WHERE comments.story_id = ? "
    "ORDER BY comments.created",
    # partial aggregate, partial distinct, partial top-k per key
    "VoteCount": "SELECT story_id, COUNT(*) AS n FROM votes WHERE story_id = ? GROUP BY story_id",
    "UserVotes": "SELECT COUNT(*) AS n FROM votes WHERE user_id = ?",
    "Voters": "SELECT DISTINCT user_id FROM votes WHERE story_id = ?",
    "LatestComments": "SELECT id, created FROM comments WHERE story_id = ? "
    "ORDER BY created DESC, id DESC LIMIT 2",
    "TopicTop": "SELECT id, title FROM stories WHERE topic = ? ORDER BY id DESC LIMIT 3",
    # compound key, IN list, equality + range
    "PairVotes": "SELECT COUNT(*) AS n FROM votes WHERE user_id = ? AND story_id = ?",
    "StoriesIn": "SELECT id, title, author FROM stories WHERE id IN (?, ?)",
    # IN lists after an equality: readers keyed by the equality value alone, over a base
    # table and over a partial aggregate keyed by it
    "UserVotedIn": "SELECT story_id FROM votes WHERE user_id = ? AND story_id IN (?, ?)",
    "UserVoteCountIn": "SELECT story_id, COUNT(*) AS n FROM votes "
    "WHERE user_id = ? AND story_id IN (?, ?) GROUP BY story_id",
    "AuthorAfter": "SELECT id, title FROM stories WHERE author = ? AND id > ? ORDER BY id",
    # a range and no equality key: read whole, straight from a base table
    "StoriesAfter": "SELECT id, title FROM stories WHERE id > ? ORDER BY id",
    # cannot be partial (computed key) / partial reader over a full aggregate by its value
    "Computed": "SELECT s.id FROM (SELECT id, author + 1 AS k FROM stories) AS s WHERE s.k = ?",
    "ByCount": "SELECT s.story_id FROM (SELECT story_id, COUNT(*) AS n FROM votes "
    "GROUP BY story_id) AS s WHERE s.n = ?",
}

USERS = list(range(6))
STORIES = list(range(10))
TOPICS = ["a", "b", "c"]

STORY_KEYS = [-1, *STORIES, 10, 99, None]
USER_KEYS = [*USERS, 6, 99, None]
TOPIC_KEYS = [*TOPICS, "zz", None]


def one(values: Iterable[Any]) -> list[tuple]:
    return [(v,) for v in values]


#: Parameter tuples every check reads each view with.
KEYS: dict[str, list[tuple]] = {
    "StoryVotes": [()],
    "FrontPage": [()],
    "StoriesAfter": [(-1,), (3,), (99,), (5,)],
    "StoriesWithVC": one(STORY_KEYS),
    "Karma": one(USER_KEYS),
    "TopicVotes": one(TOPIC_KEYS),
    "StoryComments": one(STORY_KEYS),
    "VoteCount": one(STORY_KEYS),
    "UserVotes": one(USER_KEYS),
    "Voters": one(STORY_KEYS),
    "LatestComments": one(STORY_KEYS),
    "TopicTop": one(TOPIC_KEYS),
    "PairVotes": [(u, s) for u in [0, 2, 5, 99, None] for s in [1, 4, 7, 99]],
    "StoriesIn": [(1, 2), (3,), (4, 99), (5, 5, None), (0, 6, 8, 9)],
    "UserVotedIn": [(0, 1, 4), (2, 7), (5, 1, 4, 7, 99), (99, 1), (None, 1), (0, None, 3),
                    (2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 3, 3)],
    "UserVoteCountIn": [(0, 1, 4), (2, 7), (5, 1, 4, 7, 99), (99, 1), (None, 1),
                        (0, None, 3), (2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)],
    "AuthorAfter": [(a, lo) for a in [0, 1, 3, 5, None] for lo in [-1, 3, 8]],
    "Computed": one(range(8)),
    "ByCount": one(range(6)),
}

#: Views a lookup_many can be checked on (equality keys, no ORDER BY).
MANY = {
    "StoriesWithVC": STORY_KEYS[:-1],
    "Karma": USER_KEYS[:-1],
    "TopicVotes": TOPIC_KEYS[:-1],
    "VoteCount": STORY_KEYS[:-1],
    "UserVotes": USER_KEYS[:-1],
    "Voters": STORY_KEYS[:-1],
    "PairVotes": [(u, s) for u in [0, 2, 5, 99] for s in [1, 4, 7, 99]],
    "StoriesIn": STORY_KEYS[:-1],
    "UserVotedIn": [(2, s) for s in [1, 4, 7, 99]],  # (the oracle's IN keys share a user)
    "UserVoteCountIn": [(0, s) for s in [1, 4, 7, 99]],
}

#: Views created and dropped while the program runs (migrations): they share operators and
#: partial state with the views above, and start with empty readers of their own.
EXTRA = {
    "KarmaAgain": VIEWS["Karma"],
    "KarmaOver2": "SELECT stories.author, COUNT(*) AS karma FROM stories JOIN votes "
    "ON stories.id = votes.story_id WHERE stories.author = ? GROUP BY stories.author "
    "HAVING COUNT(*) > 2",
    "VotersAgain": VIEWS["Voters"],
    "TopicTop1": "SELECT id, title FROM stories WHERE topic = ? ORDER BY id DESC LIMIT 1",
    # two equalities, made while rows exist: readers keyed by the value with the fewest
    # rows alone (``Builder._narrowed``), over a base table and through a join, with a
    # per-pair order and cut
    "UserStoryVotes": "SELECT user_id, story_id FROM votes WHERE user_id = ? AND story_id = ?",
    "AuthorComments": "SELECT comments.id, users.name FROM comments JOIN users "
    "ON comments.author = users.id WHERE comments.story_id = ? AND comments.author = ? "
    "ORDER BY comments.created DESC, comments.id LIMIT 2",
}
PAIRS = [(u, s) for u in [0, 2, 5, 99, None] for s in [1, 4, 7, 99]]
KEYS.update({"KarmaAgain": KEYS["Karma"], "KarmaOver2": KEYS["Karma"],
             "VotersAgain": KEYS["Voters"], "TopicTop1": KEYS["TopicTop"],
             "UserStoryVotes": PAIRS, "AuthorComments": [(s, u) for u, s in PAIRS]})
MANY.update({"KarmaAgain": MANY["Karma"], "KarmaOver2": MANY["Karma"],
             "VotersAgain": MANY["Voters"],
             "UserStoryVotes": [p for p in PAIRS if None not in p]})

#: Views used in FROM by other views.
NEEDS = {"StoriesWithVC": ["StoryVotes"], "FrontPage": ["StoryVotes"]}

PARTIAL_VIEWS = [n for n in VIEWS if n not in ("StoryVotes", "FrontPage", "Computed")]


def load_sample(pair: Pair, seed: int = 0, *, stories: int = len(STORIES), votes: int = 40,
                comments: int = 25) -> None:
    rng = random.Random(seed)
    users = max(len(USERS), stories // 5)
    pair.insert_many("users", [(u, f"user{u}") for u in range(users)])
    pair.insert_many("stories", [
        (s, s % 4, f"story{s}", TOPICS[s % 4] if s % 4 < 3 else None) for s in range(stories)
    ])
    pair.insert_many("votes", [(rng.randrange(users), rng.randrange(stories))
                               for _ in range(votes)])
    pair.insert_many("comments", [
        (c, rng.randrange(stories), rng.randrange(users), f"c{c}", rng.randrange(20))
        for c in range(comments)
    ])
    pair.settle()


def make_pair(*, views: Iterable[str] = VIEWS, rows: bool = True, seed: int = 0,
              **options: Any) -> PartialPair:
    pair = PartialPair(**options)
    try:
        for ddl in SCHEMA:
            pair.execute(ddl)
        for name in dict.fromkeys(n for v in views for n in [*NEEDS.get(v, ()), v]):
            pair.create_view(name, VIEWS[name])
        if rows:
            load_sample(pair, seed)
    except BaseException:
        pair.close()
        raise
    return pair


def check_views(pair: PartialPair, names: Iterable[str] | None = None) -> None:
    """settle(), then every view at every key of :data:`KEYS` (and lookup_many) equals SQLite."""
    pair.settle()
    for name in names if names is not None else list(pair.views):
        for params in KEYS[name]:
            pair.check_view(name, params)
        if name in MANY:
            pair.check_view_many(name, MANY[name])


def held_invariant(db: rivulet.Database) -> None:
    """Descendant eviction, as a state invariant: every key a dependent state holds is
    held by the partial operator it depends on (else that operator drops the updates the
    dependent needs)."""
    from rivulet.dataflow.graph import _held_keys

    with db.graph_lock:
        for source, deps in db.graph.dependents.items():
            op = db.graph.nodes[source].op
            if not getattr(op, "partial", False):
                continue
            held = _held_keys(op)
            for dep_node, dep in deps:
                extra = [k for k in _held_keys(dep) if k not in held]
                assert not extra, (
                    f"n{dep_node} holds keys {extra[:5]} that its partial source n{source} "
                    f"({op.describe()}) does not"
                )


class Gate:
    """A test hook (``db.hooks[name] = Gate(...)``) that holds a thread at that point.

    It holds the calls after the first ``skip`` ones, ``times`` of them, made by ``thread``
    (a thread or a thread's name; any thread if ``None``), until :attr:`release` is set;
    then runs ``then`` in the held thread (e.g. a read or an eviction while that thread
    holds the graph lock). Errors of ``then`` are kept in :attr:`errors`; every wait is
    bounded."""

    def __init__(self, *, thread: threading.Thread | str | None = None, skip: int = 0,
                 times: int = 1, then: Any = None) -> None:
        self.thread = thread
        self.skip = skip
        self.times = times
        self.then = then
        self.calls = 0
        self.reached = threading.Event()
        self.release = threading.Event()
        self.errors: list[Any] = []
        self._lock = threading.Lock()

    def __call__(self) -> None:
        current = threading.current_thread()
        if self.thread is not None and current is not self.thread and current.name != self.thread:
            return
        with self._lock:
            self.calls += 1
            if not self.skip < self.calls <= self.skip + self.times:
                return
        self.reached.set()
        if not self.release.wait(WAIT):
            self.errors.append("the gate was not released in time")
        if self.then is not None:
            try:
                self.then()
            except BaseException as exc:  # noqa: BLE001 -- the test reports it
                self.errors.append(exc)


# --------------------------------------------------------------------------- 2. state machine


class PartialStateMachine(RuleBasedStateMachine):
    """Writes, reads of random keys (blocking, non-blocking, lookup_many), evictions and
    settles in any order on the news-like program; after each settle every view at every
    key equals SQLite, and dependent states never hold a key their source does not."""

    def __init__(self) -> None:
        super().__init__()
        self.pair: PartialPair | None = None
        self.next_id = 1000

    @initialize(limit=st.sampled_from(TINY_LIMITS), policy=POLICIES, seed=st.integers(0, 3))
    def open(self, limit: int | None, policy: str, seed: int) -> None:
        self.pair = make_pair(memory_limit=limit, eviction=policy, seed=seed)

    def teardown(self) -> None:
        if self.pair is not None:
            self.pair.close()

    @property
    def db(self) -> rivulet.Database:
        assert self.pair is not None
        return self.pair.db

    # ..................................................................... writes

    @rule(story=st.sampled_from(STORIES + [10, 11]), author=st.sampled_from(USERS),
          topic=st.sampled_from(TOPICS + [None]))
    def insert_story(self, story: int, author: int, topic: str | None) -> None:
        self.pair.execute("INSERT INTO stories VALUES (?, ?, ?, ?)",  # may be a duplicate
                          [story, author, f"story{story}", topic])

    @rule(story=st.sampled_from(STORIES + [10]), column=st.sampled_from(["author", "topic", "id"]),
          value=st.integers(0, 11))
    def update_story(self, story: int, column: str, value: int) -> None:
        if column == "topic":
            new: Any = (TOPICS + [None])[value % 4]
        elif column == "author":
            new = value % len(USERS)
        else:
            new = value + 20  # a new primary key (may collide: both sides reject it)
        self.pair.execute(f"UPDATE stories SET {column} = ? WHERE id = ?", [new, story])

    @rule(story=st.sampled_from(STORIES + [10, 11]))
    def delete_story(self, story: int) -> None:
        self.pair.execute("DELETE FROM stories WHERE id = ?", [story])

    @rule(votes=st.lists(st.tuples(st.sampled_from(USERS), st.sampled_from(STORIES)),
                         min_size=1, max_size=4))
    def insert_votes(self, votes: list[tuple[int, int]]) -> None:
        self.pair.insert_many("votes", votes)

    @rule(user=st.sampled_from(USERS), story=st.sampled_from(STORIES))
    def delete_votes(self, user: int, story: int) -> None:
        self.pair.execute("DELETE FROM votes WHERE user_id = ? AND story_id = ?", [user, story])

    @rule(user=st.sampled_from(USERS), story=st.sampled_from(STORIES))
    def move_votes(self, user: int, story: int) -> None:
        self.pair.execute("UPDATE votes SET story_id = ? WHERE user_id = ?", [story, user])

    @rule(story=st.sampled_from(STORIES), author=st.sampled_from(USERS), created=st.integers(0, 20))
    def insert_comment(self, story: int, author: int, created: int) -> None:
        self.next_id += 1
        self.pair.execute("INSERT INTO comments VALUES (?, ?, ?, ?, ?)",
                          [self.next_id, story, author, f"c{self.next_id}", created])

    @rule(story=st.sampled_from(STORIES), to=st.sampled_from(STORIES), shift=st.integers(-3, 3))
    def update_comments(self, story: int, to: int, shift: int) -> None:
        self.pair.execute(
            "UPDATE comments SET story_id = ?, created = created + ? WHERE story_id = ?",
            [to, shift, story])

    @rule(story=st.sampled_from(STORIES))
    def delete_comments(self, story: int) -> None:
        self.pair.execute("DELETE FROM comments WHERE story_id = ?", [story])

    @rule(user=st.sampled_from(USERS), delete=st.booleans())
    def change_user(self, user: int, delete: bool) -> None:
        if delete:
            self.pair.execute("DELETE FROM users WHERE id = ?", [user])
        else:
            self.pair.execute("INSERT INTO users VALUES (?, ?)", [user, f"user{user}"])
            self.pair.execute("UPDATE users SET name = ? WHERE id = ?", [f"new{user}", user])

    # ..................................................................... reads

    @rule(data=st.data(), block=st.booleans())
    def read(self, data: st.DataObject, block: bool) -> None:
        name = data.draw(st.sampled_from(sorted(self.pair.views)))
        params = data.draw(st.sampled_from(KEYS[name]))
        got = self.db.view(name).lookup(*params, block=block)
        assert got is rivulet.NOT_READY or isinstance(got, list)

    @rule(data=st.data(), block=st.booleans())
    def read_many(self, data: st.DataObject, block: bool) -> None:
        name = data.draw(st.sampled_from(sorted(n for n in MANY if n in self.pair.views)))
        keys = data.draw(st.lists(st.sampled_from(MANY[name]), min_size=1, max_size=6))
        got = self.db.view(name).lookup_many(keys, block=block)
        assert got is rivulet.NOT_READY or isinstance(got, list)

    @rule(data=st.data())
    def settle_and_read(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(VIEWS)))
        self.pair.settle()
        for params in data.draw(st.lists(st.sampled_from(KEYS[name]), min_size=1, max_size=4)):
            self.pair.check_view(name, params)

    # ..................................................................... evictions, settle

    @rule(name=st.sampled_from(sorted(EXTRA)), read=st.booleans())
    def migrate(self, name: str, read: bool) -> None:
        """Create the view (sharing running operators and their partial state), or drop
        it (the others keep what they share)."""
        if name in self.pair.views:
            self.pair.drop_view(name)
        else:
            self.pair.create_view(name, EXTRA[name])
            if read:
                self.pair.settle()
                self.pair.check_view(name, KEYS[name][1])

    @rule(view=st.none() | st.sampled_from(PARTIAL_VIEWS))
    def evict(self, view: str | None) -> None:
        self.db.evict(view)

    @rule()
    def settle_and_check(self) -> None:
        check_views(self.pair)

    @invariant()
    def dependents_hold_only_held_keys(self) -> None:
        if self.pair is not None:
            held_invariant(self.db)


TestPartialStateMachine = PartialStateMachine.TestCase
TestPartialStateMachine.settings = settings(
    max_examples=examples(0.25), stateful_step_count=25, deadline=None, report_multiple_bugs=False,
    phases=PHASES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------- 3. behaviour


def built(db: rivulet.Database, view: str) -> Any:
    return db.core.built[view.lower()]


def node_stat(db: rivulet.Database, node: int, counter: str) -> int:
    return db.stats()["per_node"][f"n{node}"][counter]


def view_stat(db: rivulet.Database, view: str, counter: str) -> Any:
    return db.stats()["per_view"][view][counter]


def wait_answer(read: Any, deadline: float = WAIT) -> Any:
    """Poll a non-blocking read until it answers."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        got = read()
        if got is not rivulet.NOT_READY:
            return got
        time.sleep(0.005)
    raise AssertionError("a non-blocking read never answered")


@pytest.mark.parametrize("name", ["Karma", "StoryComments", "VoteCount", "UserVotes", "Voters",
                                  "LatestComments", "TopicTop", "PairVotes", "AuthorAfter",
                                  "StoriesWithVC", "ByCount", "UserVotedIn", "UserVoteCountIn"])
def test_nonblocking_read_then_answer(name: str) -> None:
    """block=False on a missing key returns NOT_READY at once and fills it in the
    background: a later read hits, with SQLite's answer."""
    with make_pair(views=[name]) as pair:
        db = pair.db
        view = db.view(name)
        assert view.partial
        params = KEYS[name][1]
        t0 = time.monotonic()
        assert view.lookup(*params, block=False) is rivulet.NOT_READY
        assert time.monotonic() - t0 < 1.0
        got = wait_answer(lambda: view.lookup(*params, block=False))
        pair.check_answer(name, params, got)
        hits = view_stat(db, name, "hits")
        pair.check_view(name, params)  # a hit
        assert view_stat(db, name, "hits") > hits
        assert view_stat(db, name, "misses") == 1


def test_lookup_nowait_fills_a_storage_lookup_at_once() -> None:
    """``lookup_nowait`` (the server's read): a miss on a view over a base table through
    filters and projections is filled at once, unless the dataflow is busy; a miss that
    needs a join or an aggregate is left to the background, as ``block=False`` is."""
    with make_pair(views=["UserVotedIn", "StoriesIn", "VoteCount"]) as pair:
        db = pair.db
        pair.check_answer("StoriesIn", (1, 2), db.view("StoriesIn").lookup_nowait(1, 2))
        pair.check_answer("UserVotedIn", (2, 1, 4), db.view("UserVotedIn").lookup_nowait(2, 1, 4))
        assert view_stat(db, "UserVotedIn", "misses") == 1
        assert db.view("VoteCount").lookup_nowait(5) is rivulet.NOT_READY
        pair.check_answer("VoteCount", (5,),
                          wait_answer(lambda: db.view("VoteCount").lookup_nowait(5)))
        held, release = threading.Event(), threading.Event()

        def hold() -> None:  # another thread (a write) holds the dataflow
            with db.graph_lock:
                held.set()
                release.wait(WAIT)

        holder = threading.Thread(target=hold, daemon=True)
        holder.start()
        assert held.wait(WAIT)
        try:  # no waiting on the event loop: the background fills it once the lock is free
            assert db.view("StoriesIn").lookup_nowait(3) is rivulet.NOT_READY
        finally:
            release.set()
            holder.join(WAIT)
        pair.check_answer("StoriesIn", (3,),
                          wait_answer(lambda: db.view("StoriesIn").lookup_nowait(3)))


def test_probe_fills_a_storage_lookup_at_once_and_starts_nothing_else() -> None:
    """``probe`` (the server's read, which reads a miss itself in its pool): what
    ``lookup_nowait`` fills at once it fills too; any other miss is NOT_READY and stays a
    hole until someone reads it with ``lookup`` (no background fill runs meanwhile)."""
    with make_pair(views=["StoriesIn", "VoteCount", "AuthorAfter"]) as pair:
        db = pair.db
        pair.check_answer("StoriesIn", (1, 2), db.view("StoriesIn").probe(1, 2))
        for name, params in (("VoteCount", (5,)), ("AuthorAfter", (1, 0))):
            view = db.view(name)
            assert view.probe(*params) is rivulet.NOT_READY
            time.sleep(0.2)  # a background fill would be done by now
            assert view.probe(*params) is rivulet.NOT_READY
            assert view_stat(db, name, "misses") == 0, "nothing filled it"
            pair.check_answer(name, params, view.lookup(*params))
            assert view_stat(db, name, "misses") == 1
            pair.check_answer(name, params, view.probe(*params))  # a hit now


def test_nonblocking_lookup_many_then_answer() -> None:
    with make_pair(views=["Karma"]) as pair:
        view = pair.db.view("Karma")
        keys = [0, 1, 2, 99]
        assert view.lookup_many(keys, block=False) is rivulet.NOT_READY
        got = wait_answer(lambda: view.lookup_many(keys, block=False))
        expected = [r for k in keys for r in pair.lite.execute(VIEWS["Karma"], (k,)).fetchall()]
        assert same_multiset(got, expected)
        assert view_stat(pair.db, "Karma", "misses") == len(keys)


@pytest.mark.parametrize("block", [True, False])
@pytest.mark.parametrize("name", ["Karma", "StoryComments", "Voters", "UserVotedIn"])
def test_concurrent_misses_fill_once(name: str, block: bool) -> None:
    """Many threads missing on one key at once: one fill (one miss, one upquery at the
    view's root), every thread gets the same answer."""
    with make_pair(views=[name]) as pair:
        db = pair.db
        b = built(db, name)
        params = KEYS[name][2]
        upqueries = node_stat(db, b.root, "upqueries")
        # Hold the first upquery at its storage read so that the others pile up behind it.
        gate = Gate()
        db.hooks["upquery_answer"] = gate
        n = 8
        barrier = threading.Barrier(n, timeout=WAIT)
        answers: list[Any] = []
        errors: list[BaseException] = []

        def read() -> None:
            try:
                barrier.wait()
                view = db.view(name)
                if block:
                    answers.append(view.lookup(*params))
                else:
                    first = view.lookup(*params, block=False)
                    answers.append(first if first is not rivulet.NOT_READY else
                                   wait_answer(lambda: view.lookup(*params, block=False)))
            except BaseException as exc:  # noqa: BLE001 -- reported below
                errors.append(exc)

        threads = [threading.Thread(target=read, daemon=True) for _ in range(n)]
        for t in threads:
            t.start()
        assert gate.reached.wait(WAIT)
        time.sleep(0.2)  # the other readers reach the graph lock (or their NOT_READY)
        gate.release.set()
        for t in threads:
            t.join(WAIT)
        assert not any(t.is_alive() for t in threads)
        assert not errors, errors
        assert len(answers) == n
        for got in answers:
            pair.check_answer(name, params, got)
        assert view_stat(db, name, "misses") == 1
        assert node_stat(db, b.root, "upqueries") == upqueries + 1


@pytest.mark.parametrize("name", ["Karma", "VoteCount", "StoryComments", "PairVotes", "StoriesIn"])
def test_lookup_many_is_one_upquery(name: str) -> None:
    """lookup_many with N missing keys (some never written): N misses, one upquery."""
    with make_pair(views=[name]) as pair:
        db = pair.db
        b = built(db, name)
        keys = MANY.get(name) or [k[0] for k in KEYS[name] if k[0] is not None]
        keys = list(dict.fromkeys(keys))[:7]
        before = db.stats()
        upqueries = node_stat(db, b.root, "upqueries")
        got = db.view(name).lookup_many(keys)
        after = db.stats()
        assert after["per_view"][name]["misses"] == len(keys)
        assert after["per_node"][f"n{b.reader_node}"]["misses"] == len(keys)
        assert after["misses"] - before["misses"] == len(keys)
        assert node_stat(db, b.root, "upqueries") == upqueries + 1
        assert after["per_view"][name]["keys"] == len(keys)
        if name == "StoriesIn":
            pair.check_answer(name, tuple(keys), got)
        elif query_shape(VIEWS[name]).order:
            expected = [r for k in keys for r in pair.lite.execute(VIEWS[name], (k,)).fetchall()]
            assert same_multiset(got, expected)
            for key in keys:
                pair.check_view(name, (key,))  # hits now
        else:
            pair.check_view_many(name, keys)  # hits now
        assert view_stat(db, name, "misses") == len(keys)
        # Evicted, then three of them read again: three misses, one more upquery.
        db.evict(name)
        assert view_stat(db, name, "keys") == 0
        db.view(name).lookup_many(keys[:3])
        assert view_stat(db, name, "misses") == len(keys) + 3
        assert node_stat(db, b.root, "upqueries") == upqueries + 2


@pytest.mark.parametrize("name", ["UserVotedIn", "UserVoteCountIn"])
def test_in_list_after_an_equality_is_filled_by_the_equality(name: str) -> None:
    """``user_id = ? AND story_id IN (...)``: the reader is keyed by ``user_id`` alone
    (``explain`` says so). A user's first read fills everything of that user by one
    upquery; reads of other lists for the same user then hit, stories without a vote
    included; a write for the user reaches the held rows; eviction drops the user and the
    next read fills it again."""
    with make_pair(views=[name]) as pair:
        db = pair.db
        b = built(db, name)
        plan = db.view(name).plan
        assert b.state.key_columns == plan.key[:-1]
        assert f"state: partial, keyed by (#{plan.key[0]})" in explain(db, name).splitlines()[-1]
        upqueries = node_stat(db, b.root, "upqueries")
        pair.check_view(name, (2, 1, 4))
        assert view_stat(db, name, "misses") == 1
        for stories in [(7,), (0, 3, 9), (99, 1), tuple(STORIES)]:
            pair.check_view(name, (2, *stories))
        assert view_stat(db, name, "misses") == 1 and view_stat(db, name, "keys") == 1
        assert node_stat(db, b.root, "upqueries") == upqueries + 1
        pair.check_view_many(name, [(2, 5), (2, 6)])
        assert view_stat(db, name, "misses") == 1
        pair.execute("INSERT INTO votes VALUES (?, ?)", [2, 8])
        pair.execute("INSERT INTO votes VALUES (?, ?)", [3, 8])  # another user's: not held
        pair.settle()
        pair.check_view(name, (2, 8, 1))
        assert view_stat(db, name, "misses") == 1
        db.evict(name)
        pair.check_view(name, (2, 8))
        assert view_stat(db, name, "misses") == 2
        check_views(pair)


#: A range view with an IN list after an equality (the range column, then the IN column,
#: then the equality's), through a join whose sides hold different parts of the key, and
#: over a distinct.
RANGE_IN = {
    "CommentsOnAuthorsStories": "SELECT stories.id, comments.id FROM stories JOIN comments "
    "ON stories.id = comments.story_id WHERE comments.created > ? "
    "AND comments.author IN (?, ?) AND stories.author = ?",
    "StoryCommenters": "SELECT DISTINCT story_id, author, created FROM comments "
    "WHERE created > ? AND author IN (?, ?) AND story_id = ?",
}


@pytest.mark.parametrize("name", list(RANGE_IN))
def test_range_in_list_after_an_equality_keeps_its_whole_key(name: str) -> None:
    """A range view's reader is keyed by its whole key, IN column included (unlike an IN
    view's, keyed by its equality values alone): the demand traced down the plan is that
    key too. Traced as the equality values alone, a join whose left side has the equality
    column and right side the IN column was built to be asked by the left side, then
    asked by both ("no route for an upquery"), and a distinct was made partial on the
    equality column, then asked by both columns. Through the join the whole key has no
    route (the view is full); over the distinct it is partial on the whole key."""
    with make_pair(views=[]) as pair:
        pair.create_view(name, RANGE_IN[name])
        db = pair.db
        reads = [(lo, *listed, eq) for lo in (-1, 5) for listed in [(0, 1), (2, 3), (4, 5)]
                 for eq in (0, 1, 3, 99)]
        for params in reads:
            pair.check_view(name, params)
        b = built(db, name)
        plan = db.view(name).plan
        assert b.listed is None and b.state.key_columns == plan.key
        assert b.state.partial == (name == "StoryCommenters")
        pair.execute("INSERT INTO comments VALUES (?, ?, ?, ?, ?)", [200, 1, 2, "new", 9])
        pair.execute("DELETE FROM comments WHERE id = ?", [3])
        pair.settle()
        for params in reads:
            pair.check_view(name, params)
        db.evict(name)
        for params in reads:
            pair.check_view(name, params)


@pytest.mark.parametrize("name, listed", [("UserStoryVotes", 0), ("AuthorComments", 1)])
def test_two_equalities_are_filled_by_the_value_with_fewest_rows(name: str, listed: int) -> None:
    """``user_id = ? AND story_id = ?`` made over existing rows: the reader is keyed by
    the column whose base table has few rows per value while the other column has many
    values (here a story, by 40 users; a user's 10 stories are too few to leave out),
    so reads of other pairs with a held value hit; writes reach the held rows; eviction
    drops the value."""
    with make_pair(views=[]) as pair:
        pair.insert_many("users", [(u, f"user{u}") for u in range(len(USERS), 40)])
        pair.insert_many("votes", [(u, s) for u in range(40) for s in STORIES if (u + s) % 3])
        pair.insert_many("comments", [(100 + i, i % 6, i % 40, f"x{i}", i) for i in range(120)])
        pair.settle()
        pair.create_view(name, EXTRA[name])
        db = pair.db
        b = built(db, name)
        plan = db.view(name).plan
        kept = plan.key[1 - listed]
        assert b.listed == listed and b.state.key_columns == (kept,)
        assert f"state: partial, keyed by (#{kept})" in explain(db, name).splitlines()[-1]
        first = (0, 1) if listed == 0 else (1, 0)
        pair.check_view(name, first)
        assert view_stat(db, name, "misses") == 1
        others = [(u, 1) for u in USERS + [99]] if listed == 0 else [(1, a) for a in (0, 1, 7)]
        for params in others:
            pair.check_view(name, params)
        assert view_stat(db, name, "misses") == 1 and view_stat(db, name, "keys") == 1
        if listed == 0:
            pair.check_view_many(name, [(2, 1), (4, 1), (2, 1)])
            assert view_stat(db, name, "misses") == 1
            pair.execute("INSERT INTO votes VALUES (?, ?)", [2, 1])
            pair.execute("DELETE FROM votes WHERE user_id = ? AND story_id = ?", [4, 1])
        else:
            pair.execute("INSERT INTO comments VALUES (?, ?, ?, ?, ?)", [200, 1, 0, "new", 99])
            pair.execute("UPDATE users SET name = ? WHERE id = ?", ["renamed", 0])
        pair.settle()
        for params in others:
            pair.check_view(name, params)
        assert view_stat(db, name, "misses") == 1
        db.evict(name)
        pair.check_view(name, first)
        assert view_stat(db, name, "misses") == 2
        check_views(pair)


def test_two_equalities_keep_their_whole_key_without_statistics(tmp_path: Any) -> None:
    """Made over an empty table (nothing to count), over values with many rows each, or
    where the other column has few values (a flag), a reader of two equalities is keyed
    by both."""
    sql = "SELECT a, b FROM t WHERE a = ? AND b = ?"
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (a INT NOT NULL, b INT NOT NULL)")
        db.execute(f"CREATE VIEW empty AS {sql}")
        db.table("t").insert_many([(i % 3, i % 5) for i in range(600)])  # 120+ per value
        db.settle()
        db.execute(f"CREATE VIEW crowded AS {sql}")
        db.execute("CREATE TABLE f (id INT NOT NULL, flag INT NOT NULL)")
        db.table("f").insert_many([(i // 2, i % 2) for i in range(600)])  # 2 per id, 2 flags
        db.settle()
        db.execute("CREATE VIEW flagged AS SELECT id, flag FROM f WHERE id = ? AND flag = ?")
        for name in ("empty", "crowded", "flagged"):
            b = db.core.built[name]
            assert b.listed is None and b.state.key_columns == b.plan.key, name
        assert db.view("crowded").lookup(1, 1) == [(1, 1)] * 40
        assert db.view("flagged").lookup(7, 1) == [(7, 1)]


@pytest.mark.parametrize("policy", ["lru", "random"])
def test_memory_limit_bounds_state(policy: str) -> None:
    """Under a memory limit a read workload over many keys keeps the accounted bytes
    within ~10% of the limit (evicting), and answers stay right."""
    limit = 40_000
    names = ["Karma", "StoryComments", "VoteCount", "Voters", "LatestComments", "UserVotes"]
    pair = PartialPair(memory_limit=limit, eviction=policy)
    with pair:
        for ddl in SCHEMA:
            pair.execute(ddl)
        for name in names:
            pair.create_view(name, VIEWS[name])
        load_sample(pair, 3, stories=300, votes=1500, comments=600)
        db = pair.db
        assert db.stats()["memory_limit"] == limit
        rng = random.Random(5)
        peak = 0
        for i in range(600):
            name = rng.choice(names)
            key = (rng.randrange(-5, 320) if name not in ("Karma", "UserVotes")
                   else rng.randrange(70))
            got = db.view(name).lookup(key)
            if i % 50 == 0:
                pair.check_answer(name, (key,), got)
                held_invariant(db)
                peak = max(peak, db.stats()["memory_bytes"])
        stats = db.stats()
        assert stats["evictions"] > 0
        assert stats["memory_bytes"] <= limit * 1.1, stats["memory_bytes"]
        assert peak <= limit * 1.1, peak
        # Writes to keys held and evicted alike, then every answer is right.
        pair.insert_many("votes", [(rng.randrange(60), rng.randrange(300)) for _ in range(200)])
        pair.execute("DELETE FROM comments WHERE created < 3")
        pair.settle()
        assert db.stats()["memory_bytes"] <= limit * 1.1
        for name in names:
            for key in range(0, 300, 7):
                pair.check_view(name, (key,))
        assert db.stats()["memory_bytes"] <= limit * 1.1
        held_invariant(db)


def _partial_stateful(db: rivulet.Database, view: str) -> int:
    """The partial stateful operator (aggregate, distinct, top-k) behind ``view``."""
    b = built(db, view)
    found = [n for n in sorted(b.nodes)
             if getattr(db.graph.nodes[n].op, "stateful", False)
             and getattr(db.graph.nodes[n].op, "partial", False)]
    assert found, f"no partial stateful operator behind {view}"
    return found[-1]


@pytest.mark.parametrize("name,params,write", [
    ("Karma", (1,), ("INSERT INTO votes VALUES (?, ?)", [0, 5])),  # story 5 is author 1's
    ("TopicVotes", ("b",), ("INSERT INTO votes VALUES (?, ?)", [0, 5])),  # story 5 is 'b'
    ("VoteCount", (5,), ("INSERT INTO votes VALUES (?, ?)", [0, 5])),
    ("UserVotes", (0,), ("INSERT INTO votes VALUES (?, ?)", [0, 5])),
    ("Voters", (5,), ("INSERT INTO votes VALUES (?, ?)", [77, 5])),
    ("LatestComments", (5,), ("INSERT INTO comments VALUES (?, ?, ?, ?, ?)", [500, 5, 1, "x", 99])),
    ("TopicTop", ("b",), ("INSERT INTO stories VALUES (?, ?, ?, ?)", [50, 1, "new", "b"])),
    ("UserVoteCountIn", (0, 5), ("INSERT INTO votes VALUES (?, ?)", [0, 5])),
])
def test_descendant_eviction(name: str, params: tuple, write: tuple) -> None:
    """Evicting a key of a partial aggregate / distinct / top-k evicts the reader's key
    built from it; a write to that key then reaches the view (refilled on the next read)
    instead of being dropped by the operator while the reader keeps a stale answer."""
    with make_pair(views=[name]) as pair:
        db = pair.db
        b = built(db, name)
        pair.check_view(name, params)
        node = _partial_stateful(db, name)
        op = db.graph.nodes[node].op
        key = params[0]
        assert view_stat(db, name, "keys") == 1
        reader_evictions = node_stat(db, b.reader_node, "evictions")
        with db.graph_lock:
            assert db.graph.evict(node, op, [key]) == 1
        assert view_stat(db, name, "keys") == 0, "the reader kept a key its source evicted"
        assert node_stat(db, b.reader_node, "evictions") == reader_evictions + 1
        assert node_stat(db, node, "evictions") >= 1
        held_invariant(db)
        pair.execute(*write)
        pair.settle()
        pair.check_view(name, params)
        assert view_stat(db, name, "misses") == 2
        check_views(pair)


def test_descendant_eviction_under_memory_pressure() -> None:
    """Eviction chosen by the memory limit (LRU and random) keeps readers' keys a subset
    of their partial sources' keys."""
    for policy in ("lru", "random"):
        with make_pair(memory_limit=6_000, eviction=policy) as pair:
            db = pair.db
            rng = random.Random(1)
            for _ in range(300):
                name = rng.choice(PARTIAL_VIEWS)
                db.view(name).lookup(*rng.choice(KEYS[name]))
                if rng.random() < 0.2:
                    pair.insert_many("votes", [(rng.choice(USERS), rng.choice(STORIES))])
            held_invariant(db)
            assert db.stats()["evictions"] > 0
            check_views(pair)
            held_invariant(db)


def test_upquery_timeout() -> None:
    """While the graph lock is held (propagation stuck in a hook), a read that misses
    raises UpqueryTimeout after its timeout; a hit is still answered at once."""
    with make_pair(views=["Karma", "VoteCount"], upquery_timeout=0.2) as pair:
        db = pair.db
        held = db.view("Karma").lookup(1)
        gate = Gate()
        db.hooks["before_propagate"] = gate
        try:
            pair.execute("INSERT INTO votes VALUES (1, 1)")
            assert gate.reached.wait(WAIT)
            for read in (lambda: db.view("Karma").lookup(2, timeout=0.2),
                         lambda: db.view("Karma").lookup(3),  # the database's upquery_timeout
                         lambda: db.view("VoteCount").lookup_many([1, 2], timeout=0.2)):
                t0 = time.monotonic()
                with pytest.raises(rivulet.UpqueryTimeout):
                    read()
                assert 0.15 <= time.monotonic() - t0 < 3.0
            assert isinstance(rivulet.UpqueryTimeout("x"), rivulet.RivuletError)
            t0 = time.monotonic()
            assert db.view("Karma").lookup(1) == held  # a hit takes no lock (no timeout)
            assert time.monotonic() - t0 < 1.0
            assert db.view("Karma").lookup(2, block=False) is rivulet.NOT_READY
        finally:
            gate.release.set()
        pair.settle()
        check_views(pair)


@pytest.mark.parametrize("text,size", [
    ("512MB", 512_000_000), ("1.5GiB", int(1.5 * 1024**3)), ("800k", 800_000),
    (" 2 gib ", 2 * 1024**3), ("4096", 4096), (4096, 4096), ("10KiB", 10 * 1024), (None, None),
])
def test_memory_limit_strings(text: Any, size: int | None, tmp_path: Any) -> None:
    assert parse_size(text) == size
    with rivulet.open(tmp_path / "db", memory_limit=text) as db:
        assert db.stats()["memory_limit"] == size


@pytest.mark.parametrize("bad", ["lots", "12XB", "-5MB", "0", "", "MB", "1.5.5MB", "0.0001",
                                 "5 M B", 0, -1, True])
def test_memory_limit_bad_strings(bad: Any, tmp_path: Any) -> None:
    with pytest.raises(ValueError):
        parse_size(bad)
    with pytest.raises(ValueError):
        rivulet.open(tmp_path / "db", memory_limit=bad)


def test_bad_eviction_policy(tmp_path: Any) -> None:
    with pytest.raises(ValueError):
        rivulet.open(tmp_path / "db", eviction="fifo")


def test_which_views_are_partial() -> None:
    """A view keyed by a computed column keeps full state and says why in ``explain``. A
    view without an equality parameter is read whole: its reader is one hole, filled by
    the first read (one miss), while the stateful nodes under it are full and say why.
    With partial=False no view is partial."""
    with make_pair() as pair:
        db = pair.db
        pair.create_view("Recent", "SELECT id, title FROM stories WHERE id > ? ORDER BY id DESC")
        expected_full = {"Computed": "is computed"}
        read_whole = {"StoryVotes": "γ", "FrontPage": "↑", "Recent": None}
        stats = db.stats()["per_view"]
        for name in [*VIEWS, "Recent"]:
            view = db.view(name)
            assert view.partial == (name not in expected_full), name
            assert stats[name]["partial"] == view.partial
            text = explain(db, name)
            reader = text.splitlines()[-1]
            if view.partial:
                assert "state: partial" in reader, text
            else:
                assert "state: full" in reader and expected_full[name] in reader, text
            if read_whole.get(name):
                stateful = [line for line in text.splitlines() if f": {read_whole[name]}" in line]
                state = text.splitlines()[text.splitlines().index(stateful[0]) + 1]
                assert "state: full" in state and "no equality parameter" in state, text
        for name in expected_full:  # a full view never misses
            for params in KEYS.get(name, [(3,)]):
                db.view(name).lookup(*params)
            assert db.stats()["per_view"][name]["misses"] == 0
        for name in read_whole:  # a whole view misses once, then hits
            for params in [*KEYS.get(name, [(4,)]), *KEYS.get(name, [(1,)])]:
                db.view(name).lookup(*params)
            assert db.stats()["per_view"][name]["misses"] == 1, name
        pair.check_view("Recent", (4,))
    with make_pair(partial=False) as pair:
        db = pair.db
        assert not any(db.view(name).partial for name in VIEWS)
        for name in VIEWS:
            assert "state: partial" not in explain(db, name)
        check_views(pair)
        stats = db.stats()
        assert stats["misses"] == 0 and stats["evictions"] == 0
        assert db.evict() == 0


def test_evict_api() -> None:
    """``db.evict(view)`` evicts that reader's keys and returns how many; ``db.evict()``
    every partial key; full views have nothing to evict; unknown views are an error."""
    with make_pair() as pair:
        db = pair.db
        db.view("Karma").lookup_many([0, 1, 2])
        db.view("AuthorAfter").lookup(1, 0)
        db.view("AuthorAfter").lookup(2, 5)
        assert db.evict("karma") == 3  # names are case-insensitive
        assert view_stat(db, "Karma", "keys") == 0
        assert db.evict("Karma") == 0
        assert db.evict("AuthorAfter") == 2
        assert db.evict("StoryVotes") == 0  # full
        with pytest.raises(rivulet.ProgramError):
            db.evict("NoSuchView")
        check_views(pair)
        n = db.evict()
        assert n > 0
        stats = db.stats()
        assert stats["evictions"] >= n + 5
        assert all(v["keys"] == 0 for v in stats["per_view"].values() if v["partial"])
        assert all(s["memory_bytes"] == 0 for s in stats["per_node"].values() if s["partial"])
        check_views(pair)


def test_reopen_starts_empty_and_refills() -> None:
    """After close and reopen without pre-warming, partial state is empty (no keys, no
    misses yet) and every read refills from storage, including writes made just before
    closing."""
    with make_pair(memory_limit=50_000, prewarm=False) as pair:
        check_views(pair)
        pair.execute("INSERT INTO votes VALUES (1, 1), (2, 1), (3, 5)")
        pair.execute("UPDATE stories SET topic = 'c' WHERE id = 1")
        pair.reopen()
        stats = pair.db.stats()
        assert stats["misses"] == 0
        assert all(v["keys"] == 0 for n, v in stats["per_view"].items() if v["partial"])
        check_views(pair)
        assert pair.db.stats()["misses"] > 0


def test_scan_of_partial_view_does_not_fill() -> None:
    """scan() of a partial view answers every row, computed from storage, without
    filling the view's state."""
    with make_pair(views=["StoryComments", "Karma", "Voters"]) as pair:
        db = pair.db
        db.view("Karma").lookup(1)
        for name in ("StoryComments", "Karma", "Voters"):
            keys = view_stat(db, name, "keys")
            rows = db.view(name).scan()
            assert view_stat(db, name, "keys") == keys
            expected = []
            for key in STORY_KEYS if name != "Karma" else USER_KEYS:
                if key is not None:
                    expected += pair.lite.execute(VIEWS[name], (key,)).fetchall()
            assert same_multiset(rows, expected), name


def test_explain_cli(tmp_path: Any) -> None:
    """``python -m rivulet explain VIEW`` says which state is partial and which is full."""
    path = tmp_path / "news"
    from rivulet.cli import load_news_sample, news_program

    with rivulet.open(path) as db:
        db.execute_script(news_program())
        load_news_sample(db, stories=50, votes=200)
    out = {}
    for view in ("Karma", "StoryVotes"):
        proc = subprocess.run(
            [sys.executable, "-m", "rivulet", "explain", view, "--data-dir", str(path)],
            check=False, capture_output=True, text=True, timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        out[view] = proc.stdout
    assert "state: partial" in out["Karma"].splitlines()[-1], out["Karma"]
    assert "state: partial, the whole view" in out["StoryVotes"].splitlines()[-1], out["StoryVotes"]
    assert "state: full (the view has no equality parameter" in out["StoryVotes"]


def test_news_program_partial_equals_full(tmp_path: Any) -> None:
    """The example program (rivulet/examples/news.sql) with its sample data: reads of
    random keys, evictions and writes under a tiny memory limit, against partial=False."""
    from rivulet.cli import load_news_sample, news_program

    partial = rivulet.open(tmp_path / "p", memory_limit=20_000)
    full = rivulet.open(tmp_path / "f", partial=False)
    try:
        for db in (partial, full):
            db.execute_script(news_program())
            load_news_sample(db, stories=200, votes=1000)
        rng = random.Random(7)
        keyed = {"StoriesWithVC": 210, "Karma": 60, "StoryComments": 210}
        for step in range(120):
            name = rng.choice(list(keyed))
            key = rng.randrange(-2, keyed[name])
            mode = rng.random()
            if mode < 0.1:
                partial.evict(rng.choice([None, name]))
            elif mode < 0.3:
                writes = [("INSERT INTO votes VALUES (?, ?)",
                           [rng.randrange(40), rng.randrange(200)]),
                          ("DELETE FROM votes WHERE user_id = ?", [rng.randrange(40)]),
                          ("UPDATE stories SET author = ? WHERE id = ?",
                           [rng.randrange(40), key])]
                sql, params = rng.choice(writes)
                for db in (partial, full):
                    db.execute(sql, params)
            elif mode < 0.4:
                partial.view(name).lookup(key, block=False)
            else:
                partial.view(name).lookup(key)
            if step % 30 == 29:
                partial.settle()
                full.settle()
                for view, top in keyed.items():
                    keys = list(range(-1, top))
                    assert same_multiset(partial.view(view).lookup_many(keys),
                                         full.view(view).lookup_many(keys)), view
                # FrontPage (full): the same vote counts (ties at the LIMIT may differ)
                assert [r[2] for r in partial.view("FrontPage").lookup()] == \
                    [r[2] for r in full.view("FrontPage").lookup()]
        assert partial.stats()["evictions"] > 0
    finally:
        partial.close()
        full.close()


# --------------------------------------------------------------------------- regressions
# Minimal reproductions of engine bugs these tests found.


def test_regression_nonblocking_read_of_range_view(tmp_path: Any) -> None:
    """``lookup(..., block=False)`` missing on a partial range view (equality key plus a
    range): the background upquery fills the key, then reads the answer with
    ``state.raw(key)``, which a RangeReader does not have: AttributeError kills the
    background thread (it only catches RivuletError), and from then on every
    non-blocking miss, on any view, stays NOT_READY for ever."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
        db.execute("CREATE VIEW r AS SELECT id FROM t WHERE a = ? AND id > ?")
        db.execute("CREATE VIEW e AS SELECT id FROM t WHERE a = ?")
        db.table("t").insert_many([(1, 1), (2, 1), (3, 2)])
        db.settle()
        assert db.view("r").partial
        assert db.view("r").lookup(1, 0, block=False) is rivulet.NOT_READY
        assert wait_answer(lambda: db.view("r").lookup(1, 0, block=False)) == [(1,), (2,)]
        assert db.view("e").lookup(2, block=False) is rivulet.NOT_READY
        assert wait_answer(lambda: db.view("e").lookup(2, block=False), 3.0) == [(3,)]


def test_regression_topk_eviction_accounting(tmp_path: Any) -> None:
    """The CLOCK sweep (``clock_sweep``) can return a key twice (its second round starts
    again at keys the first round chose), and ``TopK.evict`` subtracts a group's rows once
    per occurrence: the top-k's accounted bytes go negative, ``memory_bytes`` under-counts,
    and once every other state is empty ``enforce_memory_limit`` raises
    ``ValueError: Total of weights must be greater than zero`` in propagation: the
    dataflow fails and every later settle() raises."""
    with rivulet.open(tmp_path / "db", memory_limit=3_000) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT)")
        db.execute("CREATE VIEW top AS SELECT id FROM t WHERE g = ? ORDER BY id LIMIT 2")
        db.table("t").insert_many([(i, i % 5) for i in range(40)])
        db.settle()
        for g in [3, 3, 0, 2, 4, 3, 3, 2]:
            assert db.view("top").lookup(g) == [(g,), (g + 5,)]
            sizes = {n: s["memory_bytes"] for n, s in db.stats()["per_node"].items()}
            assert min(sizes.values()) >= 0, sizes
        db.table("t").insert_many([(100, 1)])
        db.settle()
        assert db.view("top").lookup(1) == [(1,), (6,)]


def test_regression_lookup_many_null_key_of_implicit_aggregate(tmp_path: Any) -> None:
    """``SELECT COUNT(*) FROM t WHERE a = ?`` (an implicit group: one row for any key):
    ``lookup(None)`` answers ``[(0,)]`` (as SQLite does for ``a = NULL``), but
    ``lookup_many([None])`` answers ``[]``: ``_read_keys`` skips keys with a NULL instead
    of answering their default row. lookup_many must be the union of the lookups."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
        db.execute("CREATE VIEW c AS SELECT COUNT(*) AS n FROM t WHERE a = ?")
        db.table("t").insert_many([(1, 1), (2, None)])
        db.settle()
        view = db.view("c")
        assert view.lookup(None) == [(0,)]
        assert view.lookup(1) == [(1,)]
        assert view.lookup_many([1]) == [(1,)]
        assert sorted(view.lookup_many([1, None])) == [(0,), (1,)]
        assert view.lookup_many([None]) == [(0,)]


@pytest.mark.parametrize("partial,sql", [
    (False, "SELECT DISTINCT COUNT(*) AS n FROM t WHERE id = ?"),
    (True, "SELECT DISTINCT COUNT(*) AS n FROM (SELECT a + 1 AS k FROM t) AS s WHERE s.k = ?"),
])
def test_regression_same_select_twice_over_full_implicit_group(
        partial: bool, sql: str, tmp_path: Any) -> None:
    """A second view with the SELECT of an existing one reuses its operators. For a
    DISTINCT over an implicit group (an aggregate with ``= ?`` and no GROUP BY) whose state
    is full (``partial=False``, or a computed key), the build reuses the top node, so
    ``Builder._default_rows`` does not find the aggregate below it in ``build.ids``:
    ``KeyError: Aggregate(...)`` and the view cannot be created. (Fine before partial
    state, commit 81fceb7, and with partial state on a plain key.)"""
    with rivulet.open(tmp_path / "db", partial=partial) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL)")
        db.table("t").insert_many([(1, 0), (6, 5)])  # ids 1, 6; a + 1: 1, 6
        db.execute(f"CREATE VIEW v0 AS {sql}")
        db.execute(f"CREATE VIEW v1 AS {sql}")
        db.settle()
        for key in (1, 6, 99):
            expected = [(1,)] if key < 99 else [(0,)]
            assert db.view("v1").lookup(key) == db.view("v0").lookup(key) == expected


@pytest.mark.parametrize("policy", ["lru", "random"])
def test_regression_having_default_row_after_eviction(policy: str, tmp_path: Any) -> None:
    """``SELECT COUNT(*) FROM t WHERE id = ? HAVING COUNT(*) = 0`` read with a key that has
    a row: its group fails HAVING, so no row. A view tells "HAVING removed the group" from
    "no rows at all" (answer the default row ``(0,)``) by looking for the key among the
    aggregate's groups, but it looks *after* the upquery, whose ``enforce_memory_limit``
    may already have evicted the key it just filled: the read answers ``[(0,)]``.
    Found by test_partial_single_table (--long) with memory_limit=5000, eviction="random";
    memory_limit=1 makes every fill evicted at once."""
    with rivulet.open(tmp_path / "db", memory_limit=1, eviction=policy) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
        db.execute("CREATE VIEW v AS SELECT COUNT(*) AS n FROM t WHERE id = ? HAVING COUNT(*) = 0")
        db.table("t").insert_many([(1, None), (2, None)])
        db.settle()
        view = db.view("v")
        for _ in range(2):
            assert view.lookup(1) == []
            assert view.lookup(5) == [(0,)]
            assert sorted(view.lookup_many([1, 2, 5])) == [(0,)]


def test_limit_below_full_state_warns_once(caplog: Any) -> None:
    """A memory limit smaller than the full state (never evicted) cannot be met: rivulet
    evicts every partial key, keeps answering correctly, and logs one warning naming it."""
    with make_pair(memory_limit=1_000) as pair:
        with caplog.at_level("WARNING", logger="rivulet"):
            check_views(pair)
            check_views(pair)
        warnings = [r for r in caplog.records if "cannot be evicted" in r.getMessage()]
        assert len(warnings) == 1, caplog.records
        stats = pair.db.stats()
        assert stats["memory_bytes"] > 1_000 and stats["evictions"] > 0


@pytest.mark.parametrize("limit,kib", [(None, 65536), ("16MB", 1953), ("1GB", 65536),
                                       (100_000, 1024)])
def test_sqlite_page_caches_follow_the_memory_limit(limit: Any, kib: int) -> None:
    """The limit does not account SQLite's page caches, so with one each connection's
    cache is an eighth of it (1 MiB to 64 MiB): a process under a small limit does not keep
    128 MiB of pages besides. The connection serving upqueries keeps at most 4 MiB, limit
    or not (its point lookups find their pages in the system's cache)."""
    with tempfile.TemporaryDirectory() as directory, \
            rivulet.open(directory, memory_limit=limit) as db:
        storage = db.storage
        assert storage.conn.execute("PRAGMA cache_size").fetchone()[0] == -kib
        reads = storage._read_connection()
        assert reads.execute("PRAGMA cache_size").fetchone()[0] == -min(kib, 4096)


def test_a_hit_counts_once() -> None:
    """Each read of a held key is one hit, whether its answer is cached, rebuilt after a
    write, or empty (an implicit group's default row)."""
    with make_pair() as pair:
        db = pair.db
        for name, key in (("StoriesWithVC", 3), ("UserVotes", 99), ("VoteCount", 99)):
            db.view(name).lookup(key)  # the miss that fills it
            before = db.stats()["per_view"][name]["hits"]
            for _ in range(3):
                db.view(name).lookup(key)
            pair.execute("INSERT INTO votes VALUES (?, ?)", [99, 3])
            pair.settle()
            db.view(name).lookup(key)
            assert db.stats()["per_view"][name]["hits"] - before == 4, name
            pair.check_view(name, (key,))


def test_regression_a_key_evicted_before_its_answer_is_built_is_a_miss(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that finds a key held, with its answer not built since a write, builds it
    through the reader; when eviction takes the key in between (a writer's thread under a
    memory limit), the reader answers a hole, and the read fills it like any miss. It used
    to take the hole for a key without rows: an empty answer for a story with votes."""
    with make_pair() as pair:
        db = pair.db
        view = db.view("VoteCount")
        view.lookup(3)  # the miss that fills it
        pair.execute("INSERT INTO votes VALUES (?, ?)", [99, 3])
        pair.settle()  # the key's answer is rebuilt on its next read
        state = built(db, "VoteCount").state
        get = state.get

        def evicted_first(key: Any) -> Any:
            db.evict("VoteCount")
            return get(key)

        monkeypatch.setattr(state, "get", evicted_first)
        got = view.lookup(3)
        assert got, "story 3 has a vote: its count is a row"
        pair.check_answer("VoteCount", (3,), got)


def test_a_lookup_by_several_columns_uses_their_index(tmp_path: Any) -> None:
    """An upquery by two columns reaches SQLite through the index made for it (a join
    with the keys), not a scan of the table, and a key asked twice returns its rows once."""
    import sqlite3

    from rivulet.storage.sqlite_rows import lookup_sql

    with rivulet.open(tmp_path / "db") as db:
        db.execute_script("CREATE TABLE v (u INT NOT NULL, s INT NOT NULL);"
                          "CREATE VIEW uv AS SELECT COUNT(*) AS n FROM v WHERE u = ? AND s = ?")
        db.table("v").insert_many([(i % 7, i % 11) for i in range(300)])
        db.settle()
        assert db.view("uv").lookup_many([(1, 1), (1, 1), (2, 3)]) == [(4,), (4,)]
        db.evict()
        assert db.view("uv").lookup(1, 1) == [(4,)]
        conn = sqlite3.connect(db.path / "rivulet.db")
        sql = lookup_sql("v", ['"u"', '"s"'], ['"u"', '"s"'], 2, 2)
        plan = " ".join(r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, [1, 1, 2, 3]))
        conn.close()
        assert "USING" in plan and "INDEX" in plan and "SCAN t" not in plan, plan


def test_full_state_is_built_without_holding_the_table() -> None:
    """Full state is built from a table scanned, and streamed through the operators, a
    chunk at a time: the memory allocated while a full count over 100,000 rows is created
    peaks far below what the rows take when held together (which the process would keep)."""
    n = 100_000
    with tempfile.TemporaryDirectory() as directory, rivulet.open(directory) as db:
        db.execute("CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL)")
        db.table("votes").insert_many([(i, i % 100) for i in range(n)])
        db.settle()
        tracemalloc.start()
        try:
            db.execute("CREATE VIEW VoteCount AS "
                       "SELECT story_id, COUNT(*) AS n FROM votes GROUP BY story_id")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert "full" in explain(db, "VoteCount")
        assert sorted(db.view("VoteCount").lookup()) == [(s, n // 100) for s in range(100)]
        assert peak < 60 * n, f"{peak:,} bytes allocated at the peak"  # held whole: 270 n
