"""Views added and dropped while other threads write and read (issue 6, part 1).

A writer thread commits votes and stories, a reader thread reads every installed view,
and the main thread creates and drops views in a random order. Afterwards every view
equals SQLite running its query over rivulet's own stored rows. Reuse is checked by node
counts: a view over an existing sub-plan adds only its own nodes, and reads the reused
state at once.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from pathlib import Path

import pytest

import rivulet
from oracle import assert_same_answer
from rivulet.errors import ProgramError

SCHEMA = """
CREATE TABLE stories (id INT PRIMARY KEY, author INT NOT NULL, title VARCHAR(40) NOT NULL);
CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL);
"""
COUNTS = "SELECT story_id, COUNT(*) AS n FROM votes GROUP BY story_id"
VIEWS = {
    "vc": f"SELECT stories.id, stories.title, c.n FROM stories LEFT JOIN ({COUNTS}) AS c "
          "ON stories.id = c.story_id WHERE stories.id = ?",
    "vc_by_author": f"SELECT stories.author, stories.id, c.n FROM stories JOIN ({COUNTS}) AS c "
                    "ON stories.id = c.story_id WHERE stories.author = ?",
    "karma": "SELECT stories.author, COUNT(*) AS k FROM votes JOIN stories "
             "ON votes.story_id = stories.id WHERE stories.author = ? GROUP BY stories.author",
    "top": f"SELECT story_id, n FROM ({COUNTS}) AS c ORDER BY n DESC, story_id LIMIT 3",
    "voters": "SELECT DISTINCT user_id FROM votes WHERE story_id = ?",
}
PARAMS = {"vc": [(s,) for s in range(8)], "vc_by_author": [(a,) for a in range(3)],
          "karma": [(a,) for a in range(3)], "top": [()], "voters": [(s,) for s in range(8)]}


def check_all(db: rivulet.Database) -> None:
    db.settle()
    lite = sqlite3.connect(db.path / "rivulet.db")
    try:
        for name in db.views():
            sql = VIEWS[name]
            for params in PARAMS[name]:
                assert_same_answer(sql, params, db.view(name).lookup(*params), lite,
                                   what=name)
    finally:
        lite.close()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("partial", [True, False])
def test_views_come_and_go_under_reads_and_writes(tmp_path: Path, seed: int, partial: bool) -> None:
    rng = random.Random(seed)
    with rivulet.open(tmp_path, partial=partial) as db:
        db.execute_script(SCHEMA)
        db.table("stories").insert_many([(s, s % 3, f"s{s}") for s in range(8)])
        stop = threading.Event()
        errors: list[BaseException] = []
        writing = threading.Lock()  # held per write; a check holds it to compare one state

        def write() -> None:
            wr = random.Random(seed + 100)
            try:
                while not stop.is_set():
                    with writing:
                        write_one(wr)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)

        def write_one(wr: random.Random) -> None:
            if wr.random() < 0.8:
                db.table("votes").insert((wr.randrange(5), wr.randrange(8)))
            else:
                db.execute("DELETE FROM votes WHERE user_id = ? AND story_id = ?",
                           (wr.randrange(5), wr.randrange(8)))

        def read() -> None:
            rr = random.Random(seed + 200)
            try:
                while not stop.is_set():
                    for name in list(db.views()):
                        try:
                            db.view(name).lookup(*rr.choice(PARAMS[name]))
                        except ProgramError:
                            pass  # dropped between listing and reading
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)

        threads = [threading.Thread(target=write), threading.Thread(target=read)]
        for t in threads:
            t.start()
        try:
            for _ in range(12):
                name = rng.choice(list(VIEWS))
                if name in db.views():
                    db.execute(f"DROP VIEW {name}")
                else:
                    db.execute(f"CREATE VIEW {name} AS {VIEWS[name]}")
                    with writing:  # right at once: compare at one state, then writes go on
                        check_all(db)
        finally:
            stop.set()
            for t in threads:
                t.join(30)
        assert not errors, errors
        check_all(db)


def test_an_added_view_reuses_state_and_answers_at_once(tmp_path: Path) -> None:
    """A second view over the same vote counts adds only its own nodes, and its first read
    is answered from the reused aggregate: no new upquery reaches the votes table."""
    with rivulet.open(tmp_path, partial=False) as db:
        db.execute_script(SCHEMA)
        db.table("stories").insert_many([(s, s % 3, f"s{s}") for s in range(8)])
        db.table("votes").insert_many([(u, s) for u in range(5) for s in range(0, 8, 2)])
        db.execute(f"CREATE VIEW top AS {VIEWS['top']}")
        before = set(db.graph.nodes)
        db.execute("CREATE VIEW counts AS SELECT story_id, n FROM "
                   f"({COUNTS}) AS c WHERE story_id = ?")
        added = [db.graph.nodes[n].op.describe() for n in set(db.graph.nodes) - before]
        assert len(added) <= 2, added  # its projection and its reader
        assert db.view("counts").lookup(2) == [(2, 5)]
        assert db.view("counts").lookup(3) == []


def test_dropping_every_view_leaves_only_base_tables(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        db.execute_script(SCHEMA)
        bases = set(db.graph.nodes)
        for name, sql in VIEWS.items():
            db.execute(f"CREATE VIEW {name} AS {sql}")
        for name in VIEWS:
            db.execute(f"DROP VIEW {name}")
        assert set(db.graph.nodes) == bases
        assert all(not db.graph.nodes[n].children for n in bases)
