"""Predicate pushdown (rivulet/plan/pushdown.py): WHERE conjuncts run as low as their
columns allow, and nothing a view answers changes.

Plans are checked by where each conjunct lands; the dataflow by the oracle (SQLite runs the
same queries over the same rows) through random inserts, updates, deletes and evictions,
with the cases that pushdown gets wrong when done carelessly: conditions on the padded side
of a LEFT JOIN (``IS NULL`` anti-joins, comparisons that padding makes NULL), conditions
across both sides, and conditions on computed columns.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from oracle import Pair, operation_lists, run_operations
from rivulet.plan import ir
from rivulet.plan.ir import conjuncts
from rivulet.plan.pushdown import push_filters
from test_prune import count_join_inputs

SCHEMA = [
    "CREATE TABLE stories (id INT PRIMARY KEY, author INT NOT NULL, hidden INT NOT NULL)",
    "CREATE TABLE comments (id INT PRIMARY KEY, story_id INT NOT NULL, author INT NOT NULL, "
    "parent INT, at INT NOT NULL)",
    "CREATE TABLE ribbons (user_id INT NOT NULL, story_id INT NOT NULL, at INT NOT NULL)",
]

VIEWS: dict[str, str] = {
    # Lobsters' replying_comments, keyed by reader: one-table, two-table and
    # across-the-LEFT-JOIN conditions
    "replies": "SELECT r.user_id, c.id FROM ribbons r JOIN comments c ON c.story_id = r.story_id "
               "JOIN stories s ON s.id = c.story_id LEFT JOIN comments p ON p.id = c.parent "
               "WHERE s.hidden = 0 AND c.author <> r.user_id AND c.at > r.at "
               "AND ((p.id IS NULL AND s.author = r.user_id) OR p.author = r.user_id) "
               "AND r.user_id = ?",
    # an anti-join: the right side's IS NULL must stay above the LEFT JOIN
    "unanswered": "SELECT c.id, c.at FROM comments c LEFT JOIN comments reply "
                  "ON reply.parent = c.id WHERE reply.id IS NULL AND c.story_id = ?",
    # a condition on the padded side that padding makes NULL, and one on the kept side
    "late_replies": "SELECT c.id, reply.id AS rid FROM comments c LEFT JOIN comments reply "
                    "ON reply.parent = c.id WHERE c.at > 2 AND (reply.at > 3 OR reply.at IS NULL) "
                    "AND c.story_id = ?",
    # through a derived table's computed column (stays above) and copied column (goes down)
    "busy": "SELECT t.story_id, t.n FROM (SELECT story_id, author, at * 2 AS twice, 1 AS n "
            "FROM comments) t JOIN stories s ON s.id = t.story_id "
            "WHERE t.twice > 4 AND t.author <> s.author AND s.author = ?",
    # an aggregate over a filtered join: the count must see exactly the kept rows
    "reply_counts": "SELECT r.user_id, COUNT(*) AS n FROM ribbons r JOIN comments c "
                    "ON c.story_id = r.story_id WHERE c.at > r.at AND c.author <> r.user_id "
                    "AND r.user_id = ? GROUP BY r.user_id",
}


def _plan(db: rivulet.Database, name: str) -> ir.ViewPlan:
    return push_filters(db.catalog.view(name))


def _filters(root: ir.Node) -> list[tuple[ir.Filter, ir.Node]]:
    """Each filter with the node directly below it."""
    return [(n, n.input) for n in ir.walk(root) if isinstance(n, ir.Filter)]


# --------------------------------------------------------------------------- plans


def test_one_table_conditions_sink_to_their_table(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        for ddl in SCHEMA:
            db.execute(ddl)
        db.execute(f"CREATE VIEW replies AS {VIEWS['replies']}")
        plan = _plan(db, "replies")
        placed = {n.predicate: below for n, below in _filters(plan.root)}
        scans = [p for p, below in placed.items() if isinstance(below, ir.Scan)]
        # s.hidden = 0 lands right on stories
        assert any(below.table == "stories" for p, below in placed.items()
                   if isinstance(below, ir.Scan)), scans
        # the two ribbon-comment conditions run right above the first join, below the rest
        (first_join,) = [n for n in ir.walk(plan.root) if isinstance(n, ir.Join)
                         and not any(isinstance(m, ir.Join) for m in ir.walk(n) if m is not n)]
        above_first = [p for p, below in placed.items() if below is first_join]
        assert len(above_first) == 1 and len(conjuncts(above_first[0])) == 2
        # the condition reading the LEFT JOIN's padded side stays above it
        (left_join,) = [n for n in ir.walk(plan.root)
                        if isinstance(n, ir.Join) and n.kind == "left"]
        assert any(below is left_join for _, below in placed.items())


def test_padded_side_conditions_stay_above_the_left_join(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        for ddl in SCHEMA:
            db.execute(ddl)
        db.execute(f"CREATE VIEW unanswered AS {VIEWS['unanswered']}")
        plan = _plan(db, "unanswered")
        (join,) = [n for n in ir.walk(plan.root) if isinstance(n, ir.Join)]
        assert not any(isinstance(n, ir.Filter) for n in ir.walk(join.right))
        assert any(below is join for _, below in _filters(plan.root))


def test_pushdown_is_idempotent_and_keeps_the_root(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        for ddl in SCHEMA:
            db.execute(ddl)
        for name, sql in VIEWS.items():
            db.execute(f"CREATE VIEW {name} AS {sql}")
            plan = db.catalog.view(name)
            pushed = push_filters(plan)
            assert [c.name for c in pushed.root.columns] == [c.name for c in plan.root.columns]
            assert push_filters(pushed) == pushed


def test_a_write_that_fails_a_pushed_condition_stops_at_the_first_join(tmp_path: Path) -> None:
    """The point of the pass: a new ribbon newer than every comment of its story is
    dropped right after the ribbon-comment join; the joins above it never run."""
    pair = _open_pair(tmp_path)
    try:
        pair.insert_many("stories", [(1, 7, 0)])
        pair.insert_many("comments", [(i, 1, 8, None, i) for i in range(1, 30)])
        pair.settle()
        pair.check_view("replies", [7])
        calls = count_join_inputs(pair.db)
        pair.execute("INSERT INTO ribbons (user_id, story_id, at) VALUES (7, 1, 100)")
        pair.settle()
        # the ribbon-comment join of `replies` (and of `reply_counts`, if not shared), and
        # no join above them: without pushdown the story and parent joins would run too
        # (a join may run twice: once to find its holes, once after they are filled)
        assert sum(1 for n in calls.values() if n) <= 2, calls
        pair.execute("INSERT INTO ribbons (user_id, story_id, at) VALUES (7, 1, 0)")
        pair.settle()
        pair.check_view("replies", [7])
    finally:
        pair.db.close()


# --------------------------------------------------------------------------- dataflow


def _open_pair(tmp: Path | None = None) -> Pair:
    return Pair.of(SCHEMA, VIEWS, str(tmp) if tmp is not None else None)


_users = st.integers(1, 4)
_stories = st.integers(1, 3)
_comments = st.integers(1, 8)
_operations = operation_lists(
    st.tuples(st.just("story"), _stories, _users, st.integers(0, 1)),
    st.tuples(st.just("comment"), _comments, _stories, _users,
              st.one_of(st.none(), _comments), st.integers(0, 6)),
    st.tuples(st.just("ribbon"), _users, _stories, st.integers(0, 6)),
    st.tuples(st.just("touch"), _users, _stories, st.integers(0, 6)),
    st.tuples(st.just("uncomment"), _comments),
    st.tuples(st.just("hide"), _stories, st.integers(0, 1)),
    max_size=30,
)


def _check_all(pair: Pair) -> None:
    pair.settle()
    for user in range(1, 5):
        pair.check_view("replies", [user])
        pair.check_view("busy", [user])
        pair.check_view("reply_counts", [user])
    for story in range(1, 4):
        pair.check_view("unanswered", [story])
        pair.check_view("late_replies", [story])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=_operations)
def test_views_with_pushed_conditions_match_sqlite(operations: list[tuple]) -> None:
    run_operations(_open_pair(), operations, _apply, _check_all)


def _apply(pair: Pair, op: tuple) -> None:
    kind = op[0]
    if kind == "story":
        pair.execute("DELETE FROM stories WHERE id = ?", [op[1]])
        pair.execute("INSERT INTO stories (id, author, hidden) VALUES (?, ?, ?)", op[1:])
    elif kind == "comment":
        pair.execute("DELETE FROM comments WHERE id = ?", [op[1]])
        pair.execute("INSERT INTO comments (id, story_id, author, parent, at) "
                     "VALUES (?, ?, ?, ?, ?)", op[1:])
    elif kind == "ribbon":
        pair.execute("INSERT INTO ribbons (user_id, story_id, at) VALUES (?, ?, ?)", op[1:])
    elif kind == "touch":
        pair.execute("UPDATE ribbons SET at = ? WHERE user_id = ? AND story_id = ?",
                     [op[3], op[1], op[2]])
    elif kind == "uncomment":
        pair.execute("DELETE FROM comments WHERE id = ?", [op[1]])
    else:  # "hide"
        pair.execute("UPDATE stories SET hidden = ? WHERE id = ?", [op[2], op[1]])
