"""A seeded Lobsters data set: the production site's size and skew, for both schemas.

Production Lobsters (as the Noria paper seeds it, section 8.1) had 9,200 users, 40,000
stories and 120,000 comments; :meth:`Sizes.production` gives that times a ``scale``
(10 for the paper's 10x experiment). Popularity is Zipf-skewed: a few users write most
comments and cast most votes, a few stories draw most comments and votes. The skews are
milder than the paper's s = 1.08, which describes *page views* (``ACCESS_SKEW``, used by
the workload): with s = 1.08, the top story of 40,000 would hold 13% of all comments
(15,000), where the real site's busiest threads have hundreds. Stories popular in the
data are the ones popular in the workload (one popularity order per data set). Every
story and comment carries its author's upvote, as Lobsters casts it on submission.

Rows are generated once, in the baseline schema's column order with the hand-maintained
columns (vote counts, scores, comment counts, karma, hotness) computed from the generated
votes and comments exactly as the natural views compute them; :meth:`Dataset.rows` drops
those columns for the natural schema.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from bench.common import Zipf
from bench.lobsters.queries import COMMENT_POINT, SCHEMA, STORY_POINT

Row = tuple[Any, ...]

#: Page views of stories and comments (the paper's Zipf parameter for Lobsters-like reads).
ACCESS_SKEW = 1.08
#: How unevenly activity (browsing, writing, voting) is spread over users.
USER_SKEW = 0.7
#: Comments per story.
COMMENT_SKEW = 0.5
#: Votes per story and per comment.
VOTE_SKEW = 0.4
EPOCH = 1_500_000_000  # created_at of the first story, seconds
STORY_INTERVAL = 600  # seconds between stories at production scale
TAGS = 40
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Sizes:
    """How many of each row to generate."""

    users: int
    stories: int
    comments: int
    story_votes: int  # besides each story's self-upvote
    comment_votes: int  # besides each comment's self-upvote
    tags: int = TAGS

    @classmethod
    def production(cls, scale: float = 1.0) -> Sizes:
        """Lobsters at the paper's size times ``scale``."""
        return cls(
            users=round(9_200 * scale),
            stories=round(40_000 * scale),
            comments=round(120_000 * scale),
            story_votes=round(240_000 * scale),
            comment_votes=round(240_000 * scale),
        )


# --------------------------------------------------------------------------- schema


def table_columns(version: str) -> dict[str, list[str]]:
    """Column names of every table of a schema file, in order (read from the DDL)."""
    tables: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in SCHEMA[version].read_text().splitlines():
        m = re.match(r"CREATE TABLE (\w+) \(", line)
        if m:
            current = tables.setdefault(m.group(1), [])
        elif current is not None and line.startswith(")"):
            current = None
        elif current is not None:
            col = re.match(r"\s+(\w+) [A-Z]", line)
            if col and col.group(1) != "PRIMARY":
                current.append(col.group(1))
    return tables


def short_id(n: int, width: int = 6) -> str:
    """Lobsters' short ids: base 36, fixed width."""
    out = []
    for _ in range(width):
        n, d = divmod(n, 36)
        out.append(_ALPHABET[d])
    return "".join(reversed(out))


# --------------------------------------------------------------------------- dataset


@dataclass
class Dataset:
    """Generated rows (baseline column order) and what a workload needs to continue them."""

    sizes: Sizes
    seed: int
    tables: dict[str, list[Row]]
    #: (user, story) pairs with a story vote, (user, comment) pairs with a comment vote
    story_voters: set[tuple[int, int]] = field(default_factory=set)
    comment_voters: set[tuple[int, int]] = field(default_factory=set)
    #: comment ids per story, oldest first (for replies)
    story_comments: dict[int, list[int]] = field(default_factory=dict)
    #: popularity orders (index 0 most popular) of users, stories and comments, as 0-based
    #: positions in their tables: the workload draws from the same orders
    user_order: list[int] = field(default_factory=list)
    story_order: list[int] = field(default_factory=list)
    comment_order: list[int] = field(default_factory=list)
    now: int = 0  # later than every generated time

    def rows(self, table: str, version: str) -> list[Row]:
        """The table's rows for a schema version (natural: without maintained columns)."""
        rows = self.tables[table]
        if version == "baseline":
            return rows
        base, natural = table_columns("baseline")[table], table_columns(version)[table]
        if base == natural:
            return rows
        keep = [base.index(c) for c in natural]
        return [tuple(r[i] for i in keep) for r in rows]

    def next_id(self, table: str) -> int:
        return len(self.tables[table]) + 1

    def row_count(self) -> int:
        return sum(len(r) for r in self.tables.values())


class _Picker:
    """Zipf-skewed picks over ``0..n-1``; rank ``k`` is ``order[k]`` (shuffled by default,
    so that popularity is not tied to ids)."""

    def __init__(self, n: int, s: float, seed: int, order: list[int] | None = None,
                 batch: int = 4096) -> None:
        self.zipf = Zipf(n, s, seed)
        if order is None:
            order = list(range(n))
            random.Random(seed).shuffle(order)
        self.order = order
        self.batch = batch
        self.pending: list[int] = []

    def __call__(self) -> int:
        if not self.pending:
            self.pending = self.zipf.sample(self.batch)
        return self.order[self.pending.pop()]


def generate(sizes: Sizes, seed: int = 1) -> Dataset:
    """The whole data set; the same ``(sizes, seed)`` give the same rows."""
    rnd = random.Random(seed)
    pick_user = _Picker(sizes.users, USER_SKEW, seed + 1)
    pick_story = _Picker(sizes.stories, COMMENT_SKEW, seed + 2)
    pick_voted = _Picker(sizes.stories, VOTE_SKEW, seed + 5, order=pick_story.order)
    pick_tag = _Picker(sizes.tags, 1.0, seed + 3)
    # one story every 10 minutes up to production size; a larger site posts more often
    interval = max(1, min(STORY_INTERVAL, round(STORY_INTERVAL * 40_000 / max(1, sizes.stories))))
    t: dict[str, list[Row]] = defaultdict(list)

    tag_mods = [rnd.choice((-2, -1, 0, 0, 0, 0, 0, 1)) for _ in range(sizes.tags)]
    for i in range(sizes.tags):
        t["tags"].append((i + 1, f"tag{i}", f"about tag {i}", int(i < 2), int(i % 7 == 3), 0,
                          tag_mods[i]))

    users = _users(sizes, rnd, t)
    stories, story_tags = _stories(sizes, rnd, t, pick_user, pick_story, pick_tag, interval)
    comments = _comments(sizes, rnd, t, stories, pick_user, pick_story)
    ds = Dataset(sizes=sizes, seed=seed, tables=t, user_order=pick_user.order,
                 story_order=pick_story.order)
    _votes(sizes, rnd, ds, stories, comments, pick_user, pick_voted)
    _personal(sizes, rnd, t, stories, comments, pick_user, pick_story)
    _maintained(ds, users, stories, comments, story_tags, tag_mods)
    ds.story_comments = defaultdict(list)
    for c in comments:
        ds.story_comments[c["story"]].append(c["id"])
    ds.story_comments = dict(ds.story_comments)
    last = max([s["created_at"] for s in stories] + [c["created_at"] for c in comments] +
               [r[3] for r in t["read_ribbons"]] + [EPOCH])
    ds.now = last + 1
    for name in ("users", "tags", "stories", "taggings", "comments", "votes", "hidden_stories",
                 "saved_stories", "read_ribbons", "messages", "invitations", "moderations",
                 "tag_filters"):
        t.setdefault(name, [])
    ds.tables = dict(t)
    return ds


def _users(sizes: Sizes, rnd: random.Random, t: dict[str, list[Row]]) -> list[dict]:
    users = []
    invitation = 0
    for uid in range(1, sizes.users + 1):
        inviter = None if uid <= 10 else rnd.randint(1, uid - 1)
        created = EPOCH - 86_400 * 365 + uid * 60
        users.append({"id": uid, "inviter": inviter})
        if inviter is not None:
            invitation += 1
            t["invitations"].append((invitation, inviter, f"user{uid}@example.com",
                                     f"code{invitation:08d}", uid, created - 3600))
        # columns of schema.sql; karma (last) is filled in by _maintained
        t["users"].append([uid, f"user{uid}", f"user{uid}@example.com", f"pw{uid}",
                           f"token{uid}", f"I am user {uid}" if uid % 3 else None, created,
                           int(uid == 1), int(uid <= 5), inviter, 0])
    for _ in range(sizes.users // 10):  # invitations not used yet
        invitation += 1
        inviter = rnd.randint(1, sizes.users)
        t["invitations"].append((invitation, inviter, f"friend{invitation}@example.com",
                                 f"code{invitation:08d}", None, EPOCH))
    return users


def _stories(sizes: Sizes, rnd: random.Random, t: dict[str, list[Row]], pick_user: _Picker,
             pick_story: _Picker, pick_tag: _Picker, interval: int
             ) -> tuple[list[dict], dict[int, list[int]]]:
    stories = []
    story_tags: dict[int, list[int]] = {}
    tagging = 0
    for i in range(sizes.stories):
        sid = i + 1
        author = pick_user() + 1
        created = EPOCH + i * interval
        merged = rnd.randint(1, sid - 1) if sid > 1 and rnd.random() < 0.01 else None
        stories.append({"id": sid, "author": author, "created_at": created})
        t["stories"].append([sid, short_id(sid), author, f"Story {sid}: a title",
                             f"https://example.com/{sid}" if rnd.random() < 0.85 else None,
                             f"text of story {sid}" if rnd.random() < 0.3 else None,
                             created, int(rnd.random() < 0.01), merged, 0, 0, 0, 0])
        chosen = sorted({pick_tag() + 1 for _ in range(rnd.choice((1, 1, 2, 3)))})
        story_tags[sid] = chosen
        for tag in chosen:
            tagging += 1
            t["taggings"].append((tagging, sid, tag))
    return stories, story_tags


def _comments(sizes: Sizes, rnd: random.Random, t: dict[str, list[Row]], stories: list[dict],
              pick_user: _Picker, pick_story: _Picker) -> list[dict]:
    drafts = []
    for _ in range(sizes.comments):
        story = stories[pick_story()]
        # submitters answer in their own threads (their comments add no hotness)
        author = story["author"] if rnd.random() < 0.15 else pick_user() + 1
        drafts.append((story["created_at"] + rnd.randint(60, 3 * 86_400), story["id"], author))
    drafts.sort()
    comments: list[dict] = []
    per_story: dict[int, list[dict]] = defaultdict(list)
    for n, (created, sid, author) in enumerate(drafts):
        cid = n + 1
        earlier = per_story[sid]
        parent = rnd.choice(earlier) if earlier and rnd.random() < 0.5 else None
        c = {"id": cid, "story": sid, "author": author, "created_at": created}
        comments.append(c)
        earlier.append(c)
        t["comments"].append([cid, short_id(cid, 10), sid, author,
                              parent["id"] if parent else None, f"comment {cid} on {sid}",
                              created, int(rnd.random() < 0.005), int(rnd.random() < 0.002),
                              0, 0, 0])
    return comments


def _votes(sizes: Sizes, rnd: random.Random, ds: Dataset, stories: list[dict],
           comments: list[dict], pick_user: _Picker, pick_story: _Picker) -> None:
    votes = ds.tables["votes"]
    for s in stories:
        votes.append((len(votes) + 1, s["author"], s["id"], None, 1, None))
        ds.story_voters.add((s["author"], s["id"]))
    for _ in range(sizes.story_votes):
        s, user = stories[pick_story()], pick_user() + 1
        if (user, s["id"]) not in ds.story_voters:
            ds.story_voters.add((user, s["id"]))
            vote = -1 if rnd.random() < 0.05 else 1
            votes.append((len(votes) + 1, user, s["id"], None, vote,
                          "S" if vote < 0 else None))
    for c in comments:
        votes.append((len(votes) + 1, c["author"], c["story"], c["id"], 1, None))
        ds.comment_voters.add((c["author"], c["id"]))
    if not comments:
        return
    pick_comment = _Picker(len(comments), VOTE_SKEW, ds.seed + 4)
    ds.comment_order = pick_comment.order
    for _ in range(sizes.comment_votes):
        c, user = comments[pick_comment()], pick_user() + 1
        if (user, c["id"]) not in ds.comment_voters:
            ds.comment_voters.add((user, c["id"]))
            vote = -1 if rnd.random() < 0.1 else 1
            votes.append((len(votes) + 1, user, c["story"], c["id"], vote,
                          "T" if vote < 0 else None))


def _personal(sizes: Sizes, rnd: random.Random, t: dict[str, list[Row]], stories: list[dict],
              comments: list[dict], pick_user: _Picker, pick_story: _Picker) -> None:
    """Read ribbons, hidden and saved stories, tag filters, messages, moderations."""
    ribbons: dict[tuple[int, int], int] = {}
    for s in stories:
        ribbons[(s["author"], s["id"])] = s["created_at"]
    for c in comments:
        key = (c["author"], c["story"])
        ribbons[key] = max(ribbons.get(key, 0), c["created_at"])
    for _ in range(sizes.stories):  # readers who never commented
        s = stories[pick_story()]
        key = (pick_user() + 1, s["id"])
        ribbons.setdefault(key, s["created_at"])
    for (user, sid), seen in sorted(ribbons.items()):
        t["read_ribbons"].append((user, sid, int(rnd.random() < 0.9),
                                  seen + rnd.randint(0, 2 * 86_400)))
    for table, n in (("hidden_stories", sizes.users // 2), ("saved_stories", sizes.users)):
        seen_pairs: set[tuple[int, int]] = set()
        for _ in range(n):
            pair = (pick_user() + 1, stories[pick_story()]["id"])
            if pair not in seen_pairs:
                seen_pairs.add(pair)
                t[table].append((len(t[table]) + 1, *pair))
    filters: set[tuple[int, int]] = set()
    for _ in range(sizes.users // 10):
        filters.add((rnd.randint(1, sizes.users), rnd.randint(1, sizes.tags)))
    for user, tag in sorted(filters):
        t["tag_filters"].append((len(t["tag_filters"]) + 1, user, tag))
    for _ in range(2 * sizes.users):
        mid = len(t["messages"]) + 1
        t["messages"].append((mid, pick_user() + 1, pick_user() + 1, f"subject {mid}",
                              f"message {mid}", int(rnd.random() < 0.7),
                              EPOCH + rnd.randint(0, max(1, sizes.stories) * 600)))
    for _ in range(max(1, sizes.stories // 200)):
        mid = len(t["moderations"]) + 1
        target = rnd.random()
        story = stories[rnd.randrange(len(stories))]["id"] if target < 0.4 and stories else None
        comment = (comments[rnd.randrange(len(comments))]["id"]
                   if 0.4 <= target < 0.8 and comments else None)
        user = pick_user() + 1 if target >= 0.8 else None
        t["moderations"].append((mid, rnd.randint(1, 5), story, comment, user,
                                 rnd.choice(("edited title", "deleted comment", "banned user",
                                             "merged story")),
                                 None if rnd.random() < 0.5 else "spam", EPOCH + mid * 3600))


def _maintained(ds: Dataset, users: list[dict], stories: list[dict], comments: list[dict],
                story_tags: dict[int, list[int]], tag_mods: list[int]) -> None:
    """Fill the hand-maintained columns from the votes and comments, as the baseline
    application would have kept them (and as the natural views compute them)."""
    t = ds.tables
    story_author = {s["id"]: s["author"] for s in stories}
    comment_author = {c["id"]: c["author"] for c in comments}
    s_up: dict[int, int] = defaultdict(int)
    s_down: dict[int, int] = defaultdict(int)
    c_up: dict[int, int] = defaultdict(int)
    c_down: dict[int, int] = defaultdict(int)
    karma: dict[int, int] = defaultdict(int)
    for _, user, sid, cid, vote, _ in t["votes"]:
        if cid is None:
            (s_up if vote > 0 else s_down)[sid] += 1
            if user != story_author[sid]:
                karma[story_author[sid]] += vote
        else:
            (c_up if vote > 0 else c_down)[cid] += 1
            if user != comment_author[cid]:
                karma[comment_author[cid]] += vote
    count: dict[int, int] = defaultdict(int)
    points: dict[int, int] = defaultdict(int)
    for row in t["comments"]:
        cid, sid, author, deleted = row[0], row[2], row[3], row[7]
        score = c_up[cid] - c_down[cid]
        row[9], row[10], row[11] = c_up[cid], c_down[cid], score
        if not deleted:
            count[sid] += 1
            if author != story_author[sid]:
                points[sid] += score
    for row in t["stories"]:
        sid, created = row[0], row[6]
        mods = sum(tag_mods[tag - 1] for tag in story_tags[sid])
        row[9], row[10], row[11] = s_up[sid], s_down[sid], count[sid]
        row[12] = (created + STORY_POINT * (s_up[sid] - s_down[sid] + mods)
                   + COMMENT_POINT * points[sid])
    for row in t["users"]:
        row[10] = karma[row[0]]
    for name in ("users", "stories", "comments"):
        t[name] = [tuple(r) for r in t[name]]
