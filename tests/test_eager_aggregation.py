"""Eager aggregation (rivulet/plan/eager.py): an aggregate over a join computed below it.

Two kinds of tests:

* plan shape: which aggregates are pushed below their join (the news program's StoryVotes
  and Karma) and which are kept as written because pushing would not be exact;
* answers: random programs of aggregates over a join of a keyed table and an unkeyed
  one (LEFT and inner joins, COUNT(*), COUNT(col), COUNT(DISTINCT), SUM, MIN, MAX, AVG,
  NULL join keys, groups emptied by deletes and filled again, keyed and unkeyed views,
  a top-k above), under random writes, reads, forced evictions and tiny memory limits,
  in partial and full mode; every read equals SQLite running the same query.
"""

from __future__ import annotations

import datetime
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from oracle import Pair
from rivulet.plan import ir
from rivulet.plan.catalog import Catalog
from rivulet.plan.optimize import optimize
from rivulet.plan.planner import Planner
from rivulet.sql.parse import parse_one
from test_partial import PartialPair

NEWS = Path(__file__).resolve().parents[1] / "rivulet" / "examples" / "news.sql"

SCHEMA = (
    "CREATE TABLE k (id INT PRIMARY KEY, g INT, name VARCHAR(8))",
    "CREATE TABLE a (kid INT, x INT, f DOUBLE, s VARCHAR(8))",
)


# --------------------------------------------------------------------------- plan shape


def _aggregates(node: ir.Node) -> list[ir.Aggregate]:
    return [n for n in ir.walk(node) if isinstance(n, ir.Aggregate)]


def _plan(db: rivulet.Database, name: str) -> ir.ViewPlan:
    """The view's plan as built (through the rules of rivulet/plan/optimize.py)."""
    return db.view(name).plan


def _news() -> rivulet.Database:
    import tempfile

    db = rivulet.open(tempfile.mkdtemp(prefix="rivulet-eager-"))
    db.execute_script(NEWS.read_text())
    return db


def test_story_votes_counts_votes_per_story_only() -> None:
    """StoryVotes' aggregate holds (story_id, count), not the five story columns; the
    count of a story without votes is COALESCE(count, 0) above a LEFT join."""
    db = _news()
    try:
        plan = _plan(db, "StoryVotes")
        (agg,) = _aggregates(plan.root)
        assert agg.group_by == (0,) and agg.aggs == (ir.AggCall("count", None),)
        assert [n.table for n in ir.walk(agg) if isinstance(n, ir.Scan)] == ["votes"]
        joins = [n for n in ir.walk(plan.root) if isinstance(n, ir.Join)]
        assert [(j.kind, j.right) for j in joins] == [("left", agg)]
        assert "COALESCE" in repr(plan.root)
        # Karma's votes aggregate is the same node: one shared operator.
        (inner, outer) = sorted(_aggregates(_plan(db, "Karma").root), key=lambda a: a.aggs[0].fn)
        assert inner == agg and outer.aggs == (ir.AggCall("sum", 1),)
    finally:
        db.close()


def _planned(sql: str, *tables: str) -> ir.ViewPlan:
    db = rivulet.open(__import__("tempfile").mkdtemp(prefix="rivulet-eager-"))
    try:
        for t in tables:
            db.execute(t)
        catalog: Catalog = db.catalog
        planned = Planner(catalog).plan_view("v", parse_one(sql))
        return optimize(planned, views=list(catalog.views.values()))  # as the engine builds it
    finally:
        db.close()


def _pushed(sql: str, *tables: str) -> bool:
    """Whether the plan's aggregate reads one table alone (it was pushed below the join)."""
    plan = _planned(sql, *(tables or SCHEMA))
    return any(len({s.table for s in ir.walk(a) if isinstance(s, ir.Scan)}) == 1
               for a in _aggregates(plan.root))


@pytest.mark.parametrize("sql", [
    "SELECT k.id, k.name, COUNT(a.x) FROM k LEFT JOIN a ON k.id = a.kid GROUP BY k.id",
    "SELECT k.id, COUNT(*), SUM(a.x), MIN(a.s), AVG(a.f) FROM k LEFT JOIN a ON k.id = a.kid "
    "GROUP BY k.id",
    "SELECT k.id, COUNT(DISTINCT a.x) FROM a JOIN k ON k.id = a.kid GROUP BY k.id",
    "SELECT k.id, SUM(a.x + 1) FROM k JOIN a ON k.id = a.kid GROUP BY k.id",
    "SELECT k.g, COUNT(*), MAX(a.s) FROM k JOIN a ON k.id = a.kid GROUP BY k.g",
    "SELECT k.id, SUM(a.x) FROM k JOIN a ON k.id = a.kid WHERE k.id = ? GROUP BY k.id",
])
def test_pushed(sql: str) -> None:
    assert _pushed(sql)


@pytest.mark.parametrize("sql, why", [
    ("SELECT k.g, COUNT(a.x) FROM k LEFT JOIN a ON k.id = a.kid GROUP BY k.g",
     "LEFT join grouped by columns that are not a key: null-extended rows of many k rows"),
    ("SELECT k.id, COUNT(a.x + 1) FROM k LEFT JOIN a ON k.id = a.kid GROUP BY k.id",
     "LEFT join aggregating an expression (its value on the null-extended row)"),
    ("SELECT k.id, COUNT(a.x) FROM k LEFT JOIN a ON k.id = a.kid AND a.x > 1 GROUP BY k.id",
     "residual ON condition"),
    ("SELECT k.id, COUNT(a.x) FROM k JOIN a ON k.id = a.kid WHERE a.x > 1 GROUP BY k.id",
     "a filter between the join and the aggregate"),
    ("SELECT k.id, k.g, a.x, COUNT(*) FROM k JOIN a ON k.id = a.kid GROUP BY k.id, a.x",
     "grouped by a column of the aggregated side"),
    ("SELECT k.id, COUNT(k.g) FROM k JOIN a ON k.id = a.kid GROUP BY k.id",
     "aggregates reading the kept side"),
    ("SELECT k.g, AVG(a.x) FROM k JOIN a ON k.id = a.kid GROUP BY k.g",
     "AVG does not combine from partial results"),
    ("SELECT k.g, COUNT(DISTINCT a.x) FROM k JOIN a ON k.id = a.kid GROUP BY k.g",
     "DISTINCT does not combine"),
    ("SELECT k.g, SUM(a.f) FROM k JOIN a ON k.id = a.kid GROUP BY k.g",
     "float sums would round in another order"),
    ("SELECT k.id, COUNT(*) FROM k JOIN a ON k.id = a.s GROUP BY k.id",
     "join keys of different kinds"),
    ("SELECT k.g, SUM(a.x) FROM k JOIN a ON k.id = a.kid WHERE k.g = ? GROUP BY k.g",
     "keyed by a column that is not the join key: the pushed aggregate would be full"),
    ("SELECT k.id, k.g, COUNT(a.x) FROM k LEFT JOIN a ON k.id = a.kid WHERE k.g = ? "
     "GROUP BY k.id", "the same, with the primary key grouped"),
    ("SELECT COUNT(*) FROM k JOIN a ON k.id = a.kid",
     "no GROUP BY: over no rows COUNT(*) is 0, a SUM of counts NULL"),
    ("SELECT COUNT(a.x) FROM k LEFT JOIN a ON k.id = a.kid WHERE k.id = ?",
     "an implicit group (its empty-key row is made from the aggregate)"),
])
def test_not_pushed(sql: str, why: str) -> None:
    assert not _pushed(sql), why


def test_no_primary_key_no_per_row_push() -> None:
    """Without a primary key, equal rows of the kept side are one group: not pushed as
    one group per row (a LEFT join then has no exact form at all)."""
    tables = ("CREATE TABLE k (id INT, name VARCHAR(8))", "CREATE TABLE a (kid INT, x INT)")
    assert not _pushed(
        "SELECT k.id, COUNT(a.x) FROM k LEFT JOIN a ON k.id = a.kid GROUP BY k.id", *tables)


def test_duplicate_rows_without_key_still_correct() -> None:
    """The inner two-step form stays exact when the kept side has equal rows."""
    tables = ("CREATE TABLE k (id INT, name VARCHAR(8))", "CREATE TABLE a (kid INT, x INT)")
    with Pair() as pair:
        for t in tables:
            pair.execute(t)
        pair.create_view("v", "SELECT k.id, COUNT(*), SUM(a.x) FROM k JOIN a ON k.id = a.kid "
                              "GROUP BY k.id")
        pair.execute("INSERT INTO k VALUES (1, 'p'), (1, 'p'), (2, 'q')")
        pair.execute("INSERT INTO a VALUES (1, 5), (1, 7), (2, NULL), (NULL, 3)")
        pair.settle()
        pair.check_view("v")


# --------------------------------------------------------------------------- answers

#: Views over k and a; ``?`` keys make them partial.
VIEWS = [
    "SELECT k.id, k.name, COUNT(a.x) AS c FROM k LEFT JOIN a ON k.id = a.kid GROUP BY k.id",
    "SELECT k.id, k.g, COUNT(*) AS c, SUM(a.x), MIN(a.s), MAX(a.x), AVG(a.x) "
    "FROM k LEFT JOIN a ON k.id = a.kid GROUP BY k.id",
    "SELECT k.id, COUNT(DISTINCT a.x), SUM(DISTINCT a.x) FROM k LEFT JOIN a ON a.kid = k.id "
    "GROUP BY k.id",
    "SELECT k.id, k.name, COUNT(a.x) AS c FROM k LEFT JOIN a ON k.id = a.kid WHERE k.id = ? "
    "GROUP BY k.id",
    "SELECT k.id, COUNT(*) AS c, SUM(a.x + 1) FROM a JOIN k ON k.id = a.kid WHERE k.id = ? "
    "GROUP BY k.id",
    "SELECT k.g, COUNT(*) AS c, SUM(a.x), MIN(a.s), MAX(a.x) FROM k JOIN a ON k.id = a.kid "
    "WHERE k.g = ? GROUP BY k.g",
    "SELECT k.g, COUNT(a.x) AS c FROM k JOIN a ON k.id = a.kid GROUP BY k.g",
    "SELECT k.id, k.name, COUNT(a.x) AS c FROM k LEFT JOIN a ON k.id = a.kid GROUP BY k.id "
    "ORDER BY c DESC, k.id LIMIT 3",
    "SELECT k.g, COUNT(*) AS c FROM k JOIN a ON k.id = a.kid GROUP BY k.g HAVING COUNT(*) > 1",
    "SELECT COUNT(*), SUM(a.x) FROM k JOIN a ON k.id = a.kid",
]

IDS = [1, 2, 3, 4, 5]
small = st.one_of(st.none(), st.integers(0, 3))


@st.composite
def writes(draw: Any) -> list[tuple[str, tuple]]:
    out: list[tuple[str, tuple]] = []
    for _ in range(draw(st.integers(1, 25))):
        op = draw(st.sampled_from(["k+", "a+", "a+", "a+", "a-", "a-", "k-", "ku", "au",
                                   "read", "evict"]))
        if op == "k+":
            out.append(("INSERT INTO k VALUES (?, ?, ?)",
                        (draw(st.sampled_from(IDS)), draw(small),
                         draw(st.sampled_from(["p", "q"])))))
        elif op == "a+":
            out.append(("INSERT INTO a VALUES (?, ?, ?, ?)",
                        (draw(st.one_of(st.none(), st.sampled_from(IDS + [9]))), draw(small),
                         draw(st.sampled_from([None, 0.5, 2.25])),
                         draw(st.sampled_from([None, "x", "y"])))))
        elif op == "a-":
            out.append(("DELETE FROM a WHERE kid = ? AND (x = ? OR x IS NULL)",
                        (draw(st.sampled_from(IDS)), draw(st.integers(0, 3)))))
        elif op == "k-":
            out.append(("DELETE FROM k WHERE id = ?", (draw(st.sampled_from(IDS)),)))
        elif op == "ku":
            out.append(("UPDATE k SET g = ?, name = ? WHERE id = ?",
                        (draw(small), draw(st.sampled_from(["p", "q"])),
                         draw(st.sampled_from(IDS)))))
        elif op == "au":
            out.append(("UPDATE a SET kid = ? WHERE x = ?",
                        (draw(st.one_of(st.none(), st.sampled_from(IDS))),
                         draw(st.integers(0, 3)))))
        else:
            out.append((op, (draw(st.integers(0, 2**16)),)))
    return out


def _check_all(pair: Pair, names: list[str], rng: random.Random) -> None:
    for name in names:
        if "?" in pair.views[name]:
            for key in rng.sample([None, 0, 1, 2, 3, 4, 5, 9], 4):
                pair.check_view(name, (key,))
        else:
            pair.check_view(name)


def _run(pair: Pair, views: list[int], ops: list[tuple[str, tuple]]) -> None:
    for t in SCHEMA:
        pair.execute(t)
    names = []
    for i in views:
        names.append(f"v{i}")
        pair.create_view(f"v{i}", VIEWS[i])
    for sql, params in ops:
        if sql == "read":
            pair.settle()
            _check_all(pair, names, random.Random(params[0]))
        elif sql == "evict":
            pair.db.evict()
        else:
            pair.execute(sql, params)
    pair.settle()
    _check_all(pair, names, random.Random(0))
    pair.db.evict()
    _check_all(pair, names, random.Random(1))


view_sets = st.lists(st.integers(0, len(VIEWS) - 1), min_size=1, max_size=4, unique=True)
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(views=view_sets, ops=writes(), limit=st.sampled_from([None, 1, 4_000]))
def test_partial_equals_sqlite(views: list[int], ops: list[tuple[str, tuple]],
                               limit: int | None) -> None:
    """Partial state (with forced evictions and tiny memory limits), also compared with
    the same program in full mode."""
    with PartialPair(compare_full=True, memory_limit=limit) as pair:
        _run(pair, views, ops)


@SETTINGS
@given(views=view_sets, ops=writes())
def test_full_equals_sqlite(views: list[int], ops: list[tuple[str, tuple]]) -> None:
    with PartialPair(partial=False) as pair:
        _run(pair, views, ops)


def test_counts_to_zero_and_back() -> None:
    """A story's votes all deleted: its count is 0 (not NULL, not gone); then one again."""
    with PartialPair() as pair:
        for t in SCHEMA:
            pair.execute(t)
        for i in (0, 3, 7):
            pair.create_view(f"v{i}", VIEWS[i])
        pair.execute("INSERT INTO k VALUES (1, 0, 'p'), (2, 0, 'q')")
        pair.execute(
            "INSERT INTO a VALUES (1, 1, NULL, 'x'), (1, 2, NULL, 'y'), (NULL, 3, NULL, 'z')")
        for step in ("", "DELETE FROM a WHERE kid = 1",
                     "INSERT INTO a VALUES (1, NULL, NULL, NULL)",
                     "UPDATE a SET kid = 2 WHERE kid IS NULL"):
            if step:
                pair.execute(step)
            pair.settle()
            pair.check_view("v0")
            pair.check_view("v7")
            for key in (1, 2, 3):
                pair.check_view("v3", (key,))


# --------------------------------------------------------------------------- residency


def _cached_keys(db: rivulet.Database, symbol: str) -> int:
    """Keys held by the join indexes of nodes whose operator symbol is ``symbol``."""
    return sum(len(a.index) for n in db.graph.nodes.values() if n.op.symbol == symbol
               for a in n.arrangements.values())



def _check_comments(pair: Pair, story: int) -> None:
    """StoryComments against SQLite (which returns DATETIME as text)."""
    got = [tuple(str(v) if isinstance(v, datetime.datetime) else v for v in row)
           for row in pair.db.view("StoryComments").lookup(story)]
    want = pair.lite.execute(pair.views["StoryComments"], (story,)).fetchall()
    assert got == [tuple(r) for r in want]


def _news_with_rows(pair: Pair) -> None:
    """The news program, two users, two stories, three votes and a comment, settled."""
    for statement in NEWS.read_text().split(";"):
        text = "\n".join(line for line in statement.splitlines()
                         if not line.lstrip().startswith("--"))
        if text.strip():
            pair.execute(text.strip())
    pair.execute("INSERT INTO users VALUES (1, 'ann'), (2, 'bob')")
    pair.execute("INSERT INTO stories VALUES (1, 1, 'a', NULL, '2020-01-01 00:00:00'), "
                 "(2, 2, 'b', 'u', '2020-01-02 00:00:00')")
    pair.execute("INSERT INTO votes VALUES (1, 1), (2, 1), (2, 2)")
    pair.execute("INSERT INTO comments VALUES (1, 1, 2, 'hi', '2020-01-03 00:00:00')")
    pair.settle()


def test_read_upqueries_keep_no_second_copy_of_rows() -> None:
    """A read that misses fills the reader; the join indexes it went through over a base
    table (answered from storage) or a full aggregate (answered from its groups) are not
    kept filled. Writes after it still reach the reader (they fill what they probe)."""
    with PartialPair() as pair:
        _news_with_rows(pair)
        written = _cached_keys(pair.db, "B")  # what the writes' joins probed, kept
        for story in (1, 2, 3):
            pair.check_view("StoriesWithVC", (story,))
            _check_comments(pair, story)
        for user in (1, 2, 3):
            pair.check_view("Karma", (user,))
        assert _cached_keys(pair.db, "B") == written
        pair.db.evict()
        for story in (1, 2, 3):
            pair.check_view("StoriesWithVC", (story,))
            _check_comments(pair, story)
        for user in (1, 2, 3):
            pair.check_view("Karma", (user,))
        assert _cached_keys(pair.db, "B") == 0
        full = [n for n in pair.db.graph.nodes.values() if n.op.symbol == "γ" and not n.op.partial]
        assert full and all(not a.index for n in full for a in n.arrangements.values())
        pair.execute("INSERT INTO votes VALUES (3, 1), (3, 2)")
        pair.execute("INSERT INTO comments VALUES (2, 1, 1, 'yo', '2020-01-04 00:00:00')")
        pair.execute("DELETE FROM votes WHERE user_id = 2")
        pair.settle()
        for story in (1, 2, 3):
            pair.check_view("StoriesWithVC", (story,))
            _check_comments(pair, story)
        for user in (1, 2, 3):
            pair.check_view("Karma", (user,))


def test_kept_join_caches_hold_what_reads_filled_and_stay_right() -> None:
    """``join_caches="kept"``: the same reads leave their base-table keys in the join
    indexes (a repeated miss skips storage), and every answer is the same as SQLite's
    through writes and evictions."""
    with PartialPair(join_caches="kept") as pair:
        _news_with_rows(pair)
        pair.db.evict()
        for story in (1, 2, 3):
            _check_comments(pair, story)
        for user in (1, 2, 3):
            pair.check_view("Karma", (user,))
        assert _cached_keys(pair.db, "B") > 0
        pair.execute("INSERT INTO comments VALUES (2, 1, 1, 'yo', '2020-01-04 00:00:00')")
        pair.execute("DELETE FROM votes WHERE user_id = 2")
        pair.settle()
        for story in (1, 2, 3):
            _check_comments(pair, story)
        for user in (1, 2, 3):
            pair.check_view("Karma", (user,))


def test_an_unknown_join_cache_policy_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="join_caches must be one of"):
        rivulet.open(tmp_path, join_caches="huge")
