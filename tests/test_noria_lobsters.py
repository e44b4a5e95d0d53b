"""Noria's own Lobsters program runs on rivulet unchanged and answers as MySQL does.

The program is mit-pdos/noria's ``applications/lobsters/noria/``: ``schema.sql`` (the
tables and the derived views Noria's Lobsters client reads: vote counts, scores, hotness,
the front page's top 51, karma, notifications) and ``queries.sql`` (every query the client
prepares). rivulet's repository keeps none of its text: the test reads it from a checkout of
mit-pdos/noria named by ``RIVULET_NORIA`` (a work tree, or a git directory read at HEAD),
else from the workplace's fetched snapshot beside this checkout
(``../.mirror/mit-pdos+noria/repo``), and is skipped, saying so, when neither is there.

The program is MySQL's (InnoDB tables, ``int unsigned``, backquotes), so MariaDB is the
oracle: every view read as a table and every query, with parameters drawn from the data,
answers what MariaDB answers over the same rows, before and after a round of writes
(new stories, comments and votes, deleted votes, a merged story, deleted comments, moved
read ribbons).

What is done to the text, and why (nothing else is):

* Noria's recipe syntax: ``name: SELECT ...;`` is a view (``CREATE VIEW name AS ...`` on
  both sides) and ``QUERY name: SELECT ...;`` a query the application sends with its ``?``s
  (``db.query`` here).
* Noria's parser takes a comma before ``FROM`` (``... AS score,`` then ``FROM comments``);
  MySQL's does not (1064), so it goes.
* ``comments`` declares ``INDEX confidence_idx (confidence)`` over a column it does not
  have: MariaDB refuses that ``CREATE TABLE`` (1072), and so does rivulet (both shown
  below); the index goes.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mysql_oracle import MySQLPair, mariadb_rows

PROGRAM = "applications/lobsters/noria"
#: Where the fetched snapshot of mit-pdos/noria sits beside a checkout of rivulet.
SNAPSHOT = Path(__file__).resolve().parents[2] / ".mirror" / "mit-pdos+noria" / "repo"

#: The one statement of the program MySQL refuses: an index over a missing column.
MISSING_COLUMN_INDEX = "INDEX `confidence_idx`  (`confidence`),"

_NAMED = re.compile(r"^(QUERY\s+)?(\w+):\s*(.*)$", re.S)
_COMMA_BEFORE_FROM = re.compile(r",(\s*FROM\b)", re.I)


def _program_file(name: str) -> str | None:
    """The text of the program's ``name``, or ``None`` when no checkout is at hand."""
    root = Path(os.environ.get("RIVULET_NORIA", SNAPSHOT))
    if (root / PROGRAM / name).is_file():
        return (root / PROGRAM / name).read_text()
    if (root / "HEAD").is_file():  # a git directory
        shown = subprocess.run(["git", "--git-dir", str(root), "show", f"HEAD:{PROGRAM}/{name}"],
                               capture_output=True, text=True)
        if shown.returncode == 0:
            return shown.stdout
    return None


def _statements(text: str) -> list[str]:
    """The program's statements: ``;``-separated, ``--`` comment lines dropped."""
    kept = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() for s in kept.split(";") if s.strip()]


def _recipe(text: str) -> tuple[list[str], list[tuple[str, str]], list[tuple[str, str]]]:
    """The tables' DDL, the views (name, SELECT) and the queries (name, SELECT) of a Noria
    recipe, in order."""
    tables, views, queries = [], [], []
    for statement in _statements(text):
        named = _NAMED.match(statement)
        if named is None:
            tables.append(statement)
            continue
        query, name, body = named.groups()
        (queries if query else views).append((name, _COMMA_BEFORE_FROM.sub(r"\1", body)))
    return tables, views, queries


@pytest.fixture(scope="module")
def program() -> tuple[list[str], list[tuple[str, str]], list[tuple[str, str]]]:
    schema, queries = _program_file("schema.sql"), _program_file("queries.sql")
    if schema is None or queries is None:
        pytest.skip("no checkout of mit-pdos/noria: set RIVULET_NORIA to one (rivulet's "
                    "repository keeps none of Noria's program)")
    tables, views, _ = _recipe(schema)
    _, _, prepared = _recipe(queries)
    assert len(tables) >= 19 and len(views) >= 30 and len(prepared) >= 60  # (all of it read)
    return tables, views, prepared


# --------------------------------------------------------------------------- data

T0 = datetime(2026, 1, 1, 12, 0, 0)


class Lobsters:
    """Rows for the program's tables, written to both sides, with the ids each query's
    parameters are drawn from."""

    def __init__(self, pair: MySQLPair, rng: random.Random) -> None:
        self.pair, self.rng = pair, rng
        self.users = self.stories = self.comments = self.votes = 0
        self.comments_of: dict[int, list[int]] = {}
        self.short_ids: list[str] = []
        self.comment_short_ids: list[str] = []

    def insert(self, table: str, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        marks = ", ".join(["(" + ", ".join(["?"] * len(columns)) + ")"] * len(rows))
        names = ", ".join(f"`{c}`" for c in columns)
        self.pair.execute(f"INSERT INTO `{table}` ({names}) VALUES {marks}",
                          [v for row in rows for v in row])

    def at(self) -> datetime:
        return T0 + timedelta(minutes=self.rng.randrange(0, 60 * 24 * 30))

    def add_users(self, n: int) -> None:
        first = self.users + 1
        self.users += n
        self.insert("users", ["id", "username", "karma"],
                    [(i, f"user{i}", self.rng.randrange(0, 50)) for i in range(first,
                                                                              self.users + 1)])

    def add_stories(self, n: int) -> None:
        rows = []
        for _ in range(n):
            self.stories += 1
            i = self.stories
            short = f"s{i:05d}"
            self.short_ids.append(short)
            merged = self.rng.randrange(1, i) if i > 5 and self.rng.random() < 0.05 else None
            rows.append((i, self.at(), self.rng.randrange(1, self.users + 1), f"http://x/{i}",
                         f"story {i}", "text", short, int(self.rng.random() < 0.1), merged))
        self.insert("stories", ["id", "created_at", "user_id", "url", "title", "description",
                                "short_id", "is_expired", "merged_story_id"], rows)

    def add_comments(self, n: int) -> None:
        rows = []
        for _ in range(n):
            self.comments += 1
            i = self.comments
            story = self.rng.randrange(1, self.stories + 1)
            earlier = self.comments_of.setdefault(story, [])
            parent = self.rng.choice(earlier) if earlier and self.rng.random() < 0.6 else None
            earlier.append(i)
            short = f"c{i:05d}"
            self.comment_short_ids.append(short)
            rows.append((i, self.at(), short, story, self.rng.randrange(1, self.users + 1),
                         parent, f"comment {i}", int(self.rng.random() < 0.05),
                         int(self.rng.random() < 0.05)))
        self.insert("comments", ["id", "created_at", "short_id", "story_id", "user_id",
                                 "parent_comment_id", "comment", "is_deleted", "is_moderated"],
                    rows)

    def add_votes(self, n: int) -> None:
        """Votes on stories (``comment_id`` NULL) and on comments; up (1) or down (0)."""
        rows = []
        for _ in range(n):
            self.votes += 1
            user = self.rng.randrange(1, self.users + 1)
            if self.rng.random() < 0.6 or not self.comments:
                rows.append((self.votes, user, self.rng.randrange(1, self.stories + 1), None,
                             int(self.rng.random() < 0.8)))
            else:
                comment = self.rng.randrange(1, self.comments + 1)
                story = next(s for s, cs in self.comments_of.items() if comment in cs)
                rows.append((self.votes, user, story, comment, int(self.rng.random() < 0.7)))
        self.insert("votes", ["id", "user_id", "story_id", "comment_id", "vote"], rows)

    def add_rest(self) -> None:
        rng = self.rng
        self.insert("tags", ["id", "tag", "inactive", "hotness_mod"],
                    [(i, f"tag{i}", int(i == 4), rng.randrange(-2, 3)) for i in range(1, 7)]
                    + [(7, "test", 0, 1)])
        pairs = {(rng.randrange(1, self.stories + 1), rng.randrange(1, 8)) for _ in range(90)}
        self.insert("taggings", ["story_id", "tag_id"], sorted(pairs))
        self.insert("read_ribbons", ["is_following", "created_at", "updated_at", "user_id",
                                     "story_id"],
                    [(int(rng.random() < 0.8), T0, self.at(), rng.randrange(1, self.users + 1),
                      rng.randrange(1, self.stories + 1)) for _ in range(120)])
        for table in ("hidden_stories", "saved_stories"):
            seen = sorted({(rng.randrange(1, self.users + 1), rng.randrange(1, self.stories + 1))
                           for _ in range(30)})
            times = [T0, T0] if table == "saved_stories" else []
            self.insert(table, (["created_at", "updated_at"] if times else [])
                        + ["user_id", "story_id"], [(*times, u, s) for u, s in seen])
        self.insert("tag_filters", ["created_at", "updated_at", "user_id", "tag_id"],
                    [(T0, T0, rng.randrange(1, self.users + 1), rng.randrange(1, 8))
                     for _ in range(15)])
        self.insert("suggested_titles", ["story_id", "user_id", "title"],
                    [(rng.randrange(1, self.stories + 1), rng.randrange(1, self.users + 1),
                      f"better {i}") for i in range(10)])
        self.insert("suggested_taggings", ["story_id", "tag_id", "user_id"],
                    [(rng.randrange(1, self.stories + 1), rng.randrange(1, 8),
                      rng.randrange(1, self.users + 1)) for _ in range(10)])
        self.insert("keystores", ["key", "value"],
                    [(f"user:{u}:unread_messages", rng.randrange(0, 5)) for u in range(1, 9)])
        self.insert("hats", ["user_id", "hat"], [(u, f"hat{u}") for u in range(1, 6)])
        self.point_heads(40)

    def point_heads(self, n: int) -> None:
        """``stories.always_null`` set to one of the story's comments for ``n`` stories.

        No vote can count for a comment here: Noria's comment votes are those with a NULL
        ``story_id``, a NOT NULL column MySQL keeps NULLs out of. So no comment's score is
        ``>= 0``, ``heads`` holds only its stories' rows, with ``always_null`` as their
        ``pid``, and ``tails`` and the notifications would stay empty with a NULL there
        (as its name says Noria's client leaves it). A comment's id there makes its replies
        tails, and the notification views count them."""
        commented = [s for s, cs in self.comments_of.items() if cs]
        for story in self.rng.sample(commented, min(n, len(commented))):
            self.pair.execute("UPDATE stories SET always_null = ? WHERE id = ?",
                              [self.rng.choice(self.comments_of[story]), story])

    def write_round(self) -> None:
        """What a busy minute of Lobsters writes, and some of what its moderators do."""
        rng = self.rng
        self.add_users(3)
        self.add_stories(8)
        self.add_comments(30)
        self.add_votes(120)
        for _ in range(15):
            self.pair.execute("DELETE FROM votes WHERE id = ?", [rng.randrange(1, self.votes)])
        self.pair.execute("UPDATE stories SET merged_story_id = ? WHERE id = ?",
                          [rng.randrange(1, 10), rng.randrange(10, self.stories + 1)])
        self.pair.execute("UPDATE stories SET is_expired = 1 WHERE id = ?",
                          [rng.randrange(1, self.stories + 1)])
        for _ in range(4):
            self.pair.execute("UPDATE comments SET is_deleted = 1 WHERE id = ?",
                              [rng.randrange(1, self.comments + 1)])
        self.pair.execute("UPDATE read_ribbons SET updated_at = ? WHERE user_id = ?",
                          [self.at(), rng.randrange(1, self.users + 1)])
        self.pair.execute("UPDATE users SET karma = karma + 1 WHERE id = ?",
                          [rng.randrange(1, self.users + 1)])
        self.point_heads(10)

    # ..................................................................... parameters

    def value_for(self, column: str) -> Any:
        """A value for a query's ``column = ?``: mostly one the data has, sometimes not."""
        rng = self.rng
        if column == "username":
            return f"user{rng.randrange(1, self.users + 3)}"
        if column == "key":
            return f"user:{rng.randrange(1, 11)}:unread_messages"
        if column == "short_id":
            return rng.choice(self.short_ids + self.comment_short_ids + ["nope"])
        if column in ("user_id",):
            return rng.randrange(1, self.users + 2)
        if column == "comment_id":
            return rng.randrange(1, self.comments + 2)
        return rng.randrange(1, max(self.stories, self.comments) + 2)  # ids of every table


_PARAMETER_COLUMN = re.compile(r"`?(\w+)`?\s*=\s*\?")


def _parameter_columns(sql: str) -> list[str]:
    """The column each ``?`` of a query is compared with, in order."""
    columns = _PARAMETER_COLUMN.findall(sql)
    assert len(columns) == sql.count("?"), sql
    return columns


# --------------------------------------------------------------------------- the test


def _check_front_page(pair: MySQLPair) -> None:
    """``frontpage_1`` reads ``frontpage_ids`` (``ORDER BY hotness LIMIT 51``) with no
    ORDER BY of its own: with ties at the cut, MySQL may keep any of the tied stories, so
    the answer is checked as MySQL defines it: 51 distinct stories (or all of them) whose
    hotness values are the 51 lowest."""
    got = pair.db.query("SELECT `frontpage_ids`.id FROM `frontpage_ids`")
    hotness = dict(mariadb_rows(pair.conn, "SELECT id, hotness FROM FULL_story_hotness", ()))
    ids = [row[0] for row in got]
    assert len(set(ids)) == len(ids) and set(ids) <= set(hotness), ids
    assert sorted(hotness[i] for i in ids) == sorted(hotness.values())[:51]


#: The views no rows can reach under MySQL's rules (see :meth:`Lobsters.point_heads`).
EMPTY_BY_THE_PROGRAM = {"comment_upvotes", "comment_downvotes", "FULL_comment_upvotes",
                        "FULL_comment_downvotes", "comment_votes", "FULL_comment_score",
                        "FULL_story_comment_score"}


def _check_everything(pair: MySQLPair, lobsters: Lobsters, views: list[tuple[str, str]],
                      queries: list[tuple[str, str]]) -> None:
    for name, _ in views:
        if name != "frontpage_ids":
            rows = pair.check_query(f"SELECT * FROM `{name}`")
            assert bool(rows) == (name not in EMPTY_BY_THE_PROGRAM), name  # (data reach it)
    _check_front_page(pair)
    for name, sql in queries:
        if name == "frontpage_1":
            continue  # (above)
        columns = _parameter_columns(sql)
        for _ in range(4 if columns else 1):
            pair.check_query(sql, [lobsters.value_for(c) for c in columns])


def test_noria_lobsters_program_answers_as_mysql_before_and_after_writes(
        mysql_pair: MySQLPair, program: Any) -> None:
    tables, views, queries = program
    for ddl in tables:
        if MISSING_COLUMN_INDEX in ddl:
            assert mysql_pair.error_codes(ddl) == (1072, 1072)  # both refuse it as it is
            ddl = ddl.replace(MISSING_COLUMN_INDEX, "")
        mysql_pair.execute(ddl)
    for name, select in views:
        mysql_pair.execute(f"CREATE VIEW `{name}` AS {select}")
    lobsters = Lobsters(mysql_pair, random.Random(7))
    lobsters.add_users(25)
    lobsters.add_stories(80)
    lobsters.add_comments(250)
    lobsters.add_votes(900)
    lobsters.add_rest()
    _check_everything(mysql_pair, lobsters, views, queries)
    lobsters.write_round()
    _check_everything(mysql_pair, lobsters, views, queries)
