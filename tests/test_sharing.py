"""Views share operators and indexed state: identical sub-plans are built once."""

from __future__ import annotations

from pathlib import Path

import rivulet

SCHEMA = """
CREATE TABLE stories (id INT PRIMARY KEY, author INT NOT NULL, title VARCHAR(50) NOT NULL);
CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL);
"""

# An aggregate over a join. COUNT(user_id + 0), not COUNT(user_id): eager aggregation
# (rivulet/plan/eager.py, tested in test_eager_aggregation.py) would move the plain count
# below the join, and these tests are about sharing a join and an aggregate above it.
COUNTS = ("SELECT stories.id, stories.title, COUNT(votes.user_id + 0) AS n FROM stories "
          "LEFT JOIN votes ON stories.id = votes.story_id GROUP BY stories.id")


def test_a_second_view_over_the_same_join_and_aggregate_adds_only_its_own_nodes(
        tmp_path: Path) -> None:
    # Full state: one aggregate serves views keyed by any of its columns.
    with rivulet.open(tmp_path, partial=False) as db:
        db.execute_script(SCHEMA)
        db.execute(f"CREATE VIEW by_id AS SELECT id, n FROM ({COUNTS}) AS c WHERE id = ?")
        before = len(db.graph.nodes)
        db.execute(f"CREATE VIEW by_title AS SELECT title, n FROM ({COUNTS}) AS c WHERE title = ?")
        added = len(db.graph.nodes) - before
        assert added <= 2  # its projection and its reader; join and aggregate are reused
        db.table("stories").insert_many([(1, 1, "a"), (2, 1, "b")])
        db.table("votes").insert_many([(9, 1), (8, 1), (7, 2)])
        db.settle()
        assert db.view("by_id").lookup(1) == [(1, 2)]
        assert db.view("by_title").lookup("b") == [("b", 1)]


def test_aliases_do_not_prevent_sharing(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        db.execute_script(SCHEMA)
        db.execute("CREATE VIEW a AS SELECT s.id AS x FROM stories s JOIN votes v "
                   "ON s.id = v.story_id WHERE s.author = ?")
        before = len(db.graph.nodes)
        db.execute("CREATE VIEW b AS SELECT t.id AS y FROM stories t JOIN votes w "
                   "ON t.id = w.story_id WHERE t.author = ?")
        assert len(db.graph.nodes) - before == 1  # only the reader is new


def test_joins_on_the_same_key_of_a_node_share_one_index(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        db.execute_script(SCHEMA)
        db.execute("CREATE VIEW j1 AS SELECT votes.user_id, stories.title FROM votes "
                   "JOIN stories ON votes.story_id = stories.id")
        db.execute("CREATE VIEW j2 AS SELECT stories.author, votes.user_id FROM stories "
                   "JOIN votes ON stories.id = votes.story_id WHERE stories.author = ?")
        stories = db.graph.nodes[db.graph.bases["stories"]]
        # one index on stories.id, used by both joins
        assert list(stories.arrangements) == [(0,)]


def test_dropping_a_view_keeps_what_other_views_use(tmp_path: Path) -> None:
    with rivulet.open(tmp_path, partial=False) as db:
        db.execute_script(SCHEMA)
        db.execute(f"CREATE VIEW by_id AS SELECT id, n FROM ({COUNTS}) AS c WHERE id = ?")
        db.execute(f"CREATE VIEW by_title AS SELECT title, n FROM ({COUNTS}) AS c WHERE title = ?")
        with_both = len(db.graph.nodes)
        db.execute("DROP VIEW by_title")
        assert len(db.graph.nodes) == with_both - 2
        db.table("stories").insert(( 3, 1, "c"))
        db.table("votes").insert((1, 3))
        db.settle()
        assert db.view("by_id").lookup(3) == [(3, 1)]


def test_partial_state_is_shared_by_views_with_the_same_key_only(tmp_path: Path) -> None:
    # Partial state is keyed by what reads ask for: an aggregate holding some ids cannot
    # answer for a title, so a view keyed by title gets its own (partial) aggregate, while
    # a second view keyed by id reuses the first one's.
    with rivulet.open(tmp_path) as db:
        db.execute_script(SCHEMA)
        db.execute(f"CREATE VIEW by_id AS SELECT id, n FROM ({COUNTS}) AS c WHERE id = ?")
        one = len(db.graph.nodes)
        db.execute(f"CREATE VIEW by_id2 AS SELECT n, id FROM ({COUNTS}) AS c WHERE id = ?")
        assert len(db.graph.nodes) - one <= 2  # its projection and reader
        two = len(db.graph.nodes)
        db.execute(f"CREATE VIEW by_title AS SELECT title, n FROM ({COUNTS}) AS c WHERE title = ?")
        aggregates = [n for n in db.graph.nodes.values() if n.op.symbol == "γ"]
        assert sorted(a.op.partial_columns for a in aggregates) == [(0,), (1,)]
        db.table("stories").insert_many([(1, 1, "a"), (2, 1, "b")])
        db.table("votes").insert_many([(9, 1), (8, 1), (7, 2)])
        db.settle()
        assert db.view("by_id").lookup(1) == [(1, 2)]
        assert db.view("by_id2").lookup(1) == [(2, 1)]
        assert db.view("by_title").lookup("b") == [("b", 1)]
        db.execute("DROP VIEW by_title")
        assert len(db.graph.nodes) == two  # everything only by_title used is gone
        db.table("votes").insert((6, 2))
        db.settle()
        assert db.view("by_id").lookup(2) == [(2, 2)]


def test_a_join_written_either_way_is_one_operator(tmp_path: Path) -> None:
    """``a JOIN b`` and ``b JOIN a`` are one join (inputs in a canonical order, columns put
    back by a projection); both views answer as SQLite would."""
    with rivulet.open(tmp_path) as db:
        db.execute_script(SCHEMA)
        db.execute("CREATE VIEW sv AS SELECT stories.title, votes.user_id FROM stories "
                   "JOIN votes ON stories.id = votes.story_id WHERE stories.author = ?")
        joins = _joins(db)
        db.execute("CREATE VIEW vs AS SELECT votes.user_id, stories.title FROM votes "
                   "JOIN stories ON votes.story_id = stories.id WHERE stories.author = ?")
        assert _joins(db) == joins and len(joins) == 1
        db.table("stories").insert_many([(1, 7, "a"), (2, 7, "b"), (3, 8, "c")])
        db.table("votes").insert_many([(10, 1), (11, 1), (12, 3)])
        db.settle()
        assert sorted(db.view("sv").lookup(7)) == [("a", 10), ("a", 11)]
        assert sorted(db.view("vs").lookup(7)) == [(10, "a"), (11, "a")]
        assert db.view("vs").lookup(8) == [(12, "c")]


def test_reuse_off_builds_each_view_on_its_own(tmp_path: Path) -> None:
    """``reuse=False`` (for measuring what sharing saves): the second view over the same
    join and aggregate builds its own, and both still answer right."""
    sizes = {}
    for reuse in (True, False):
        with rivulet.open(tmp_path / str(reuse), partial=False, reuse=reuse) as db:
            db.execute_script(SCHEMA)
            db.table("stories").insert_many([(i, i % 3, f"t{i}") for i in range(50)])
            db.table("votes").insert_many([(u, s) for u in range(20) for s in range(0, 50, 3)])
            db.execute(f"CREATE VIEW by_id AS SELECT id, n FROM ({COUNTS}) AS c WHERE id = ?")
            db.execute(
                f"CREATE VIEW by_title AS SELECT title, n FROM ({COUNTS}) AS c WHERE title = ?")
            db.settle()
            assert len(_joins(db)) == (1 if reuse else 2)
            assert db.view("by_id").lookup(3) == [(3, 20)]
            assert db.view("by_title").lookup("t4") == [("t4", 0)]
            sizes[reuse] = db.stats()["memory_bytes"]
    assert sizes[True] < sizes[False]


def _joins(db: rivulet.Database) -> list[int]:
    from rivulet.dataflow.ops.join import Join

    return sorted(n for n, node in db.graph.nodes.items() if isinstance(node.op, Join))
