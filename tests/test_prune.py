"""Column pruning (rivulet/plan/prune.py): base-table rows are narrowed to what a view
reads right above the table, and an update of a column no view reads stops there.

The plans are checked by meaning (which table columns reach each join); the dataflow by
the oracle (SQLite runs the same queries over the same rows) through inserts, updates of
read and unread columns, deletes and evictions, which make every later read an upquery
through the new projections.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from oracle import Pair, operation_lists, run_operations
from rivulet.dataflow.ops.join import Join
from rivulet.plan import ir
from rivulet.plan.prune import prune

SCHEMA = [
    "CREATE TABLE stories (id INT PRIMARY KEY, author INT NOT NULL, title VARCHAR(20) NOT NULL, "
    "upvotes INT NOT NULL, url VARCHAR(20))",
    "CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL, vote INT NOT NULL)",
]

VIEWS = {
    # reads stories.title only (besides the join and group keys)
    "counts": "SELECT stories.id, stories.title, COUNT(votes.user_id) AS n FROM stories "
              "LEFT JOIN votes ON stories.id = votes.story_id WHERE stories.id = ? "
              "GROUP BY stories.id, stories.title",
    # keyed by a column the join does not use
    "by_author": "SELECT votes.user_id, stories.title FROM votes JOIN stories "
                 "ON votes.story_id = stories.id WHERE stories.author = ?",
    # reads upvotes: updates of it must still arrive
    "hot": "SELECT stories.id, stories.upvotes, SUM(votes.vote) AS score FROM stories "
           "JOIN votes ON votes.story_id = stories.id WHERE stories.author = ? "
           "GROUP BY stories.id, stories.upvotes",
    # no column of votes but its count
    "total": "SELECT COUNT(*) AS c FROM votes WHERE story_id = ?",
    # a filter on a column nothing selects
    "linked": "SELECT id FROM stories WHERE url IS NOT NULL AND author = ?",
    # a view read by another view, which uses one of its columns
    "upvoters": "SELECT stories.author, stories.title, votes.user_id FROM stories "
                "JOIN votes ON votes.story_id = stories.id WHERE votes.vote > 0",
    "upvoted_authors": "SELECT author, COUNT(*) AS n FROM upvoters WHERE author = ? "
                       "GROUP BY author",
}


def _open_pair(tmp: Path | None = None) -> Pair:
    return Pair.of(SCHEMA, VIEWS, str(tmp) if tmp is not None else None)


def _scans_under_joins(root: ir.Node) -> dict[str, set[str]]:
    """Table -> the names of its columns that reach some join."""
    out: dict[str, set[str]] = {}
    for node in ir.walk(root):
        if isinstance(node, ir.Join):
            for side in (node.left, node.right):
                _collect(side, out)
    return out


def _collect(node: ir.Node, out: dict[str, set[str]]) -> None:
    if isinstance(node, ir.Project) and isinstance(node.input, ir.Scan):
        names = {node.input.columns[e.index].name for e in node.exprs if isinstance(e, ir.Col)}
        out.setdefault(node.input.table, set()).update(names)
    elif isinstance(node, ir.Scan):
        out.setdefault(node.table, set()).update(c.name for c in node.columns)


# --------------------------------------------------------------------------- plans


def test_joins_carry_only_the_columns_the_view_reads(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        for ddl in SCHEMA:
            db.execute(ddl)
        db.execute(f"CREATE VIEW counts AS {VIEWS['counts']}")
        pruned = db.view("counts").plan  # as built: after eager aggregation, pruned last
        # votes are counted before the join (rivulet/plan/eager.py): by story_id alone
        assert _scans_under_joins(pruned.root) == {"stories": {"id", "title"}}
        (counted,) = [n for n in ir.walk(pruned.root) if isinstance(n, ir.Aggregate)]
        narrowed: dict[str, set[str]] = {}
        _collect(counted.input, narrowed)
        assert narrowed == {"votes": {"story_id"}}
        db.execute(f"CREATE VIEW by_author AS {VIEWS['by_author']}")
        pruned = db.view("by_author").plan
        # the key column (author) survives though nothing selects it
        assert _scans_under_joins(pruned.root) == {
            "stories": {"id", "author", "title"}, "votes": {"user_id", "story_id"}}


def test_pruning_keeps_the_root_and_is_idempotent(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        for ddl in SCHEMA:
            db.execute(ddl)
        for name, sql in VIEWS.items():
            db.execute(f"CREATE VIEW {name} AS {sql}")
            plan = db.catalog.view(name)
            pruned = prune(plan)
            assert [c.name for c in pruned.root.columns] == [c.name for c in plan.root.columns]
            assert ((pruned.key, pruned.visible, pruned.order)
                    == (plan.key, plan.visible, plan.order))
            assert prune(pruned) == pruned


def test_same_needs_give_equal_plans_for_sharing(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        for ddl in SCHEMA:
            db.execute(ddl)
        db.execute("CREATE VIEW a AS SELECT s.title, v.user_id FROM stories s "
                   "JOIN votes v ON s.id = v.story_id WHERE s.author = ?")
        before = len(db.graph.nodes)
        db.execute("CREATE VIEW b AS SELECT v.user_id AS u, t.title FROM votes v "
                   "JOIN stories t ON t.id = v.story_id WHERE t.author = ?")
        joins = [n for n in db.graph.nodes.values() if isinstance(n.op, Join)]
        assert len(joins) == 1
        assert len(db.graph.nodes) - before <= 2  # its own projection and reader


def test_a_view_read_by_another_view_shares_its_operators(tmp_path: Path) -> None:
    """``upvoted_authors`` uses one column of ``upvoters``; pruned to it, the view's join
    would be built a second time (and every write to it done twice). It is pruned as the
    view itself is: one join, and the reader adds only its own aggregate."""
    pair = _open_pair(tmp_path)
    try:
        joins = [n for n, e in pair.db.graph.nodes.items() if isinstance(e.op, Join)]
        both = {"upvoters", "upvoted_authors"}
        users = {n: pair.db.graph.nodes[n].users & both for n in joins}
        shared = [n for n, views in users.items() if views]
        assert len(shared) == 1 and users[shared[0]] == both, users
        pair.insert_many("stories", [(1, 7, "a", 0, None), (2, 8, "b", 0, None)])
        pair.insert_many("votes", [(10, 1, 1), (11, 1, -1), (12, 2, 1), (13, 1, 1)])
        pair.settle()
        pair.check_view("upvoted_authors", [7])
        calls = count_join_inputs(pair.db)
        pair.insert_many("votes", [(14, 1, 1)])
        pair.settle()
        assert calls[shared[0]] == 1, calls
        pair.check_view("upvoted_authors", [7])
        pair.check_view("upvoters", [])
    finally:
        pair.db.close()


# --------------------------------------------------------------------------- dataflow


def test_an_update_of_a_column_no_view_reads_stops_at_the_projection(tmp_path: Path) -> None:
    pair = _open_pair(tmp_path)
    try:
        pair.insert_many("stories", [(1, 7, "a", 0, None), (2, 7, "b", 0, "u")])
        pair.insert_many("votes", [(10, 1, 1), (11, 1, 1), (12, 2, -1)])
        pair.settle()
        for name, params in (("counts", [1]), ("by_author", [7]), ("hot", [7]), ("linked", [7])):
            pair.check_view(name, params)
        calls = count_join_inputs(pair.db)
        pair.execute("UPDATE stories SET url = 'x' WHERE id = 1")  # only `linked` reads url
        pair.settle()
        assert sum(calls.values()) == 0
        pair.execute("UPDATE stories SET upvotes = upvotes + 1 WHERE id = 1")  # `hot` reads it
        pair.settle()
        assert sum(calls.values()) > 0
        for name, params in (("counts", [1]), ("by_author", [7]), ("hot", [7]), ("linked", [7])):
            pair.check_view(name, params)
    finally:
        pair.db.close()


def test_dropping_a_column_no_view_reads_keeps_joins_right(tmp_path: Path) -> None:
    """The join reads the table's index (whole rows, stored before the ALTER) through its
    projection; rows stored before and their later deletes differ only in the dropped
    column, and must cancel."""
    pair = _open_pair(tmp_path)
    try:
        pair.insert_many("stories", [(1, 7, "a", 0, "u"), (2, 7, "b", 0, None)])
        pair.insert_many("votes", [(10, 1, 1), (11, 1, 1), (12, 2, -1)])
        pair.settle()
        pair.check_view("by_author", [7])
        pair.drop_view("linked")  # it reads url
        pair.execute("ALTER TABLE stories DROP COLUMN url")
        pair.execute("UPDATE stories SET title = 'z' WHERE id = 1")
        pair.execute("DELETE FROM stories WHERE id = 2")
        pair.insert_many("votes", [(13, 1, 1), (14, 2, 1)])
        pair.settle()
        for author in (7, 8):
            pair.check_view("by_author", [author])
            pair.check_view("hot", [author])
        pair.db.evict()
        pair.check_view("by_author", [7])
    finally:
        pair.db.close()


def count_join_inputs(db: rivulet.Database) -> dict[int, int]:
    """Join node -> how many times its ``on_input`` runs from now on."""
    calls: dict[int, int] = {}
    for node_id, node in db.graph.nodes.items():
        if isinstance(node.op, Join):
            calls[node_id] = 0
            original = node.op.on_input

            def counted(inputs: Any, original: Any = original, node_id: int = node_id) -> Any:
                calls[node_id] += 1
                return original(inputs)

            node.op.on_input = counted  # type: ignore[method-assign]
    return calls


_ids = st.integers(1, 6)
_operations = operation_lists(
    st.tuples(st.just("story"), _ids, st.integers(1, 3), st.sampled_from(["a", "b", "c"])),
    st.tuples(st.just("vote"), st.integers(1, 5), _ids, st.sampled_from([-1, 1])),
    st.tuples(st.just("upvote"), _ids),
    st.tuples(st.just("relink"), _ids, st.sampled_from([None, "u", "v"])),
    st.tuples(st.just("retitle"), _ids, st.sampled_from(["a", "b", "z"])),
    st.tuples(st.just("unvote"), _ids),
    st.tuples(st.just("unstory"), _ids),
    max_size=30,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_operations)
def test_pruned_views_agree_with_sqlite(ops: list[tuple]) -> None:
    run_operations(_open_pair(), ops, _apply, _check_all)


def _apply(pair: Pair, op: tuple) -> None:
    kind = op[0]
    if kind == "story":
        _, sid, author, title = op
        if not pair.lite.execute("SELECT 1 FROM stories WHERE id = ?", (sid,)).fetchall():
            pair.insert_many("stories", [(sid, author, title, 0, None)])
    elif kind == "vote":
        pair.insert_many("votes", [(op[1], op[2], op[3])])
    elif kind == "upvote":
        pair.execute("UPDATE stories SET upvotes = upvotes + 1 WHERE id = ?", [op[1]])
    elif kind == "relink":
        pair.execute("UPDATE stories SET url = ? WHERE id = ?", [op[2], op[1]])
    elif kind == "retitle":
        pair.execute("UPDATE stories SET title = ? WHERE id = ?", [op[2], op[1]])
    elif kind == "unvote":
        pair.execute("DELETE FROM votes WHERE story_id = ?", [op[1]])
    else:  # "unstory"
        pair.execute("DELETE FROM stories WHERE id = ?", [op[1]])


def _check_all(pair: Pair) -> None:
    pair.settle()
    for sid in range(1, 7):
        pair.check_view("counts", [sid])
        pair.check_view("total", [sid])
    for author in range(1, 4):
        pair.check_view("by_author", [author])
        pair.check_view("hot", [author])
        pair.check_view("linked", [author])
        pair.check_view("upvoted_authors", [author])
    pair.check_view("upvoters", [])
