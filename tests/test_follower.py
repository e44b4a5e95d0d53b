"""A follower (rivulet/engine/follower.py): a read-only database applying another's log.

The follower opens the directory a primary writes and follows its ``_rivulet_log``. Its
views must answer what SQLite answers over the primary's rows once it has followed the
primary's LSN, whatever the interleaving of the primary's commits, the follower's tail,
its propagation and its upqueries (whose storage snapshot may be ahead of everything the
follower has read from the log). A change of the program makes it stale; it takes no
writes.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

import rivulet
from oracle import assert_same_answer
from rivulet.engine.follower import Follower, ReadOnlyError
from test_partial import (
    EXTRA,
    KEYS,
    MANY,
    PHASES,
    STORIES,
    TINY_LIMITS,
    WAIT,
    Gate,
    PartialStateMachine,
    examples,
    lite_sql,
    make_pair,
)

NEVER = 3600.0  # a poll interval: the follower reads the log only when it must


def check_follower(pair: Any, follower: Follower, names: Any = None) -> None:
    """Once the follower has applied the primary's LSN, each of its views answers at
    every key what SQLite answers."""
    pair.settle()
    follower.follow(pair.db.lsn)
    follower.wait_for(pair.db.lsn, timeout=WAIT)
    for name in names if names is not None else list(pair.views):
        sql = pair.views[name]
        for params in KEYS[name]:
            got = follower.view(name).lookup(*params)
            assert_same_answer(lite_sql(sql, params), params, got, pair.lite,
                               what=f"follower's view {name}{tuple(params)!r}")


class FollowerMachine(PartialStateMachine):
    """The partial-state machine's writes, reads, evictions and migrations on the
    primary, with a follower reading beside it; after each check, every follower view
    equals SQLite. A migration makes the follower stale: it is opened again, as a
    replica process does."""

    follower: Follower | None = None

    @initialize(limit=st.sampled_from(TINY_LIMITS), seed=st.integers(0, 3),
                poll=st.sampled_from([0.001, NEVER]))
    def open(self, limit: int | None, seed: int, poll: float) -> None:  # type: ignore[override]
        self.pair = make_pair(memory_limit=limit, seed=seed)
        self.options = {"memory_limit": limit, "poll_seconds": poll}
        self.follower = Follower(self.pair.path, **self.options)

    def teardown(self) -> None:
        if self.follower is not None:
            self.follower.close()
        super().teardown()

    def _current(self) -> Follower:
        assert self.follower is not None
        self.follower.follow()  # the poll may not have run since a migration
        if self.follower.stale is not None:
            self.follower.close()
            self.follower = Follower(self.pair.path, **self.options)
        return self.follower

    @rule(data=st.data(), block=st.booleans())
    def read_follower(self, data: st.DataObject, block: bool) -> None:
        follower = self._current()
        name = data.draw(st.sampled_from(sorted(self.pair.views)))
        params = data.draw(st.sampled_from(KEYS[name]))
        got = follower.view(name).lookup(*params, block=block)
        assert got is rivulet.NOT_READY or isinstance(got, list)

    @rule(data=st.data())
    def read_follower_many(self, data: st.DataObject) -> None:
        follower = self._current()
        name = data.draw(st.sampled_from(sorted(n for n in MANY if n in self.pair.views)))
        keys = data.draw(st.lists(st.sampled_from(MANY[name]), min_size=1, max_size=6))
        assert isinstance(follower.view(name).lookup_many(keys), list)

    @rule(view=st.none() | st.sampled_from(["Karma", "StoryComments", "UserVotes"]))
    def evict_follower(self, view: str | None) -> None:
        self._current().evict(view)

    @rule()
    def follower_equals_sqlite(self) -> None:
        check_follower(self.pair, self._current())


TestFollowerMachine = FollowerMachine.TestCase
TestFollowerMachine.settings = settings(
    max_examples=examples(0.15), stateful_step_count=25, deadline=None,
    report_multiple_bugs=False, phases=PHASES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture
def pair() -> Any:
    p = make_pair()
    yield p
    p.close()


def test_an_upquery_ahead_of_the_tail_counts_each_batch_once(pair: Any) -> None:
    """The follower has read none of these commits from the log when its upquery reads
    storage: the snapshot holds them, so the tail must catch up to the snapshot and the
    answer be taken back to the graph's LSN, or the batches' rows count twice (once read,
    once propagated)."""
    with Follower(pair.path, poll_seconds=NEVER) as follower:
        for story in STORIES[:4]:
            pair.execute("INSERT INTO votes VALUES (?, ?)", [1, story])
        pair.settle()
        assert follower.applied_lsn < pair.db.lsn
        check_follower(pair, follower, ["VoteCount", "Karma", "UserVotes", "StoryComments"])


def test_commits_during_an_upquery_are_subtracted(pair: Any) -> None:
    """Writes that commit while the follower's upquery waits between its storage read and
    its answer, and while its propagation is held: every view equals SQLite after."""
    with Follower(pair.path, poll_seconds=0.001) as follower:
        gate = Gate(then=None)
        follower.hooks["upquery_snapshot"] = gate
        reader = threading.Thread(target=lambda: follower.view("Karma").lookup(1))
        reader.start()
        assert gate.reached.wait(WAIT)
        held = Gate()
        follower.hooks["before_propagate"] = held
        for story in STORIES[:5]:
            pair.execute("INSERT INTO votes VALUES (?, ?)", [2, story])
        pair.execute("DELETE FROM votes WHERE user_id = ?", [3])
        gate.release.set()
        reader.join(WAIT)
        held.release.set()
        assert not gate.errors and not held.errors
        del follower.hooks["upquery_snapshot"], follower.hooks["before_propagate"]
        check_follower(pair, follower)


def test_ddl_on_the_primary_makes_the_follower_stale(pair: Any) -> None:
    seen: list[str] = []
    with Follower(pair.path, poll_seconds=0.001, on_stale=seen.append) as follower:
        pair.create_view("VotersAgain", EXTRA["VotersAgain"])
        pair.execute("INSERT INTO votes VALUES (?, ?)", [4, 4])
        follower.follow()
        assert follower.stale is not None and "program changed" in follower.stale
        assert seen == [follower.stale]
    with Follower(pair.path) as fresh:  # opened again, it has the new view
        check_follower(pair, fresh, ["VotersAgain", "VoteCount"])


def test_an_import_on_the_primary_makes_the_follower_stale(pair: Any) -> None:
    with Follower(pair.path, poll_seconds=NEVER) as follower:
        pair.db.bulk_insert("votes", [[(5, 5), (5, 6)]])
        follower.follow()
        assert follower.stale is not None and "imported" in follower.stale


def test_a_follower_takes_no_writes_and_no_ddl(pair: Any) -> None:
    with Follower(pair.path) as follower:
        lsn = pair.db.lsn
        with pytest.raises(ReadOnlyError, match="no writes"):
            follower.execute("INSERT INTO votes VALUES (1, 1)")
        with pytest.raises(ReadOnlyError, match="no DDL"):
            follower.execute("CREATE VIEW x AS SELECT id FROM users")
        with pytest.raises(ReadOnlyError, match="no imports"):
            follower.bulk_insert("votes", [[(1, 1)]])
        assert pair.db.lsn == lsn
        check_follower(pair, follower, ["UserVotes"])


def test_a_follower_opens_while_a_type_change_is_still_converting(tmp_path: Any) -> None:
    """What a schema change left to convert lazily is done by the follower that opens
    first (no row twice); both then read the converted values."""
    db = rivulet.open(tmp_path, background_migration=False)
    try:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10) NOT NULL)")
        db.table("t").insert_many([(i, str(i * 3)) for i in range(50)])
        db.execute("ALTER TABLE t MODIFY COLUMN v INT NOT NULL")
        assert db.core.lazy.pending()
        with Follower(tmp_path) as follower:
            assert not follower.core.lazy.pending()
            assert follower.query("SELECT id FROM t WHERE v = ?", [21]) == [(7,)]
            db.execute("INSERT INTO t VALUES (?, ?)", [99, 21])
            follower.follow(db.lsn)
            follower.wait_for(db.lsn, timeout=WAIT)
            assert sorted(follower.query("SELECT id FROM t WHERE v = ?", [21])) == [(7,), (99,)]
        assert sorted(db.query("SELECT id, v FROM t WHERE id IN (?, ?)", [7, 99])) == [
            (7, 21), (99, 21)]
    finally:
        db.close()


def test_an_index_made_by_the_other_process_meanwhile_is_no_error(tmp_path: Any) -> None:
    """A primary and its replica's follower plan the same views at once (a server
    starting): each reads the table's indexes, then makes the one its upqueries need. The
    one that comes second finds it made, and goes on; the index exists once."""
    from rivulet.storage.sqlite import SqliteStorage
    from rivulet.values.schema import INT, Column, TableSchema

    schema = TableSchema("votes", (Column("id", INT), Column("story_id", INT)), (0,))
    first, second = SqliteStorage(tmp_path), SqliteStorage(tmp_path)
    try:
        first.create_table(schema)
        before = second._indexes("votes")  # what the second read before the first made it
        first.ensure_index(schema, (1,))
        second._indexes = lambda table: dict(before)  # type: ignore[method-assign]
        second.ensure_index(schema, (1,))
        del second._indexes
        assert list(second._indexes("votes").values()) == [["story_id"]]
    finally:
        first.close()
        second.close()
