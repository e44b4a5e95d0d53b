"""The engine's facade and its parts: what a variant of the engine (the follower, the Spark
streaming database) relies on when it chooses parts or overrides a facade method."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from rivulet.engine.core import Core
from rivulet.engine.database import Database
from rivulet.engine.program import Program
from rivulet.engine.propagate import CommittedBatch
from rivulet.engine.upquery import BUSY, Upqueries
from rivulet.engine.views import View


class _Recording(Database):
    """Records which facade methods and parts were used."""

    def __init__(self, path: Path) -> None:
        self.created: list[str] = []
        self.fills = 0
        super().__init__(path, tune_gc=False, prewarm=False)

    def make_upqueries(self, core: Core) -> Upqueries:
        outer = self

        class Counting(Upqueries):
            def fill(self, *args: Any, **kwargs: Any) -> Any:
                outer.fills += 1
                return super().fill(*args, **kwargs)

        return Counting(core)

    def create_view(self, name: str, sql: str, *, replace: bool = False) -> View:
        self.created.append(name)
        return super().create_view(name, sql, replace=replace)


def test_create_view_in_sql_goes_through_the_facade(tmp_path: Path) -> None:
    """A CREATE VIEW statement is run by ``Database.create_view``, so a variant that waits
    there (the streaming database waits for the stream's first batch) waits for it too."""
    with _Recording(tmp_path) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        db.execute("CREATE VIEW by_id AS SELECT id, v FROM t WHERE id = ?")
        assert db.created == ["by_id"]


def test_reads_that_miss_use_the_chosen_upquery_part(tmp_path: Path) -> None:
    with _Recording(tmp_path) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        db.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
        db.execute("CREATE VIEW by_id AS SELECT id, v FROM t WHERE id = ?")
        db.settle()
        assert db.view("by_id").lookup(2) == [(2, 20)]
        assert db.fills == 1  # the miss was filled by the part the variant chose
        assert db.view("by_id").lookup(2) == [(2, 20)]
        assert db.fills == 1  # then held


def test_a_fill_that_must_not_wait_answers_busy_while_the_graph_is_held(tmp_path: Path) -> None:
    with Database(tmp_path, tune_gc=False, prewarm=False) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        db.execute("INSERT INTO t VALUES (1, 10)")
        db.execute("CREATE VIEW by_id AS SELECT id, v FROM t WHERE id = ?")
        db.settle()
        built = db.built_view("by_id")
        assert built is not None

        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with db.graph_lock:
                held.set()
                release.wait(10)

        holder = threading.Thread(target=hold)
        holder.start()
        held.wait(10)
        try:
            assert db.upqueries.fill(built, [1], wait=False) is BUSY
        finally:
            release.set()
            holder.join()
        answers = db.upqueries.fill(built, [1], wait=False)
        assert answers is not BUSY and list(answers) == [1]  # the graph free: filled now
        assert db.view("by_id").lookup(1) == [(1, 10)]


def test_a_committed_batch_says_its_rows(tmp_path: Path) -> None:
    batch = CommittedBatch(7, {1: [((1,), 1), ((2,), 1)], 2: [((3,), -1)]}, 0.0)
    assert (batch.lsn, batch.rows) == (7, 3)


def test_the_program_part_is_the_views_registry(tmp_path: Path) -> None:
    with Database(tmp_path, tune_gc=False, prewarm=False) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        db.execute("CREATE VIEW all_t AS SELECT id, v FROM t")
        view = db.view("all_t")
        assert isinstance(db.program, Program)
        assert db.views() == ["all_t"] and db.is_current(db.view("all_t"))
        db.execute("DROP VIEW all_t")
        assert not db.is_current(view) and db.views() == []
