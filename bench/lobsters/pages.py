"""One Lobsters page view: the statements a page issues, and the data it shows.

Each page function runs a :class:`~bench.lobsters.workload.Request` against a
:class:`~bench.lobsters.backends.Backend` and returns what the page would render, as a
dict of plain values: lists where the page orders them (the front page's stories, a
story's comments), sorted tuples where it does not (tags, the user's votes). The same
request gives the same dict on every backend and in both versions of the program, which is
what ``tests/test_lobsters.py`` checks. The control flow is the application's: the
baseline's writes read what they need to update the hand-maintained columns (a story's
author for karma, the tags' hotness modifiers), the natural ones only insert.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench.lobsters.backends import Backend
from bench.lobsters.queries import COMMENT_POINT, STORY_POINT
from bench.lobsters.workload import Request

Page = dict[str, Any]


def run_page(backend: Backend, request: Request) -> Page:
    """Execute ``request`` on ``backend``; the page's data.

    The header is read first, before the page's own writes: on an eventually consistent
    backend (rivulet, like any cache) a read right after a write may not see it yet."""
    top = header(backend, request.user)
    page = PAGE_FUNCTIONS[request.page](backend, request)
    page["header"] = top
    return page


def header(b: Backend, user: int) -> tuple:
    """Every page: the user's name and karma, unread replies and messages."""
    me = b.read("header_user", [user])
    replies = b.read("unread_replies", [user])
    messages = b.read("unread_messages", [user])
    return (tuple(me[0]) if me else None, replies[0][1] if replies else 0,
            messages[0][1] if messages else 0)


def _by_id(rows: Sequence[tuple]) -> dict[Any, tuple]:
    return {r[0]: r for r in rows}


def _in(b: Backend, name: str, prefix: Sequence[Any], values: Sequence[Any]) -> list[tuple]:
    """Read ``name`` with an ``IN`` list; no statement at all for an empty list."""
    values = sorted(set(values))
    return b.read(name, [*prefix, *values]) if values else []


def _story_list(b: Backend, user: int, stories: list[tuple]) -> Page:
    """What the front page and the recent page show for their stories: hidden stories and
    filtered tags left out; author, tags, the user's vote and bookmark beside each."""
    hidden = {r[0] for r in b.read("user_hidden", [user])}
    filtered = {r[0] for r in b.read("user_tag_filters", [user])}
    tags: dict[int, list[tuple]] = {}
    for sid, tag_id, tag in _in(b, "story_tags", [], [s[0] for s in stories]):
        tags.setdefault(sid, []).append((tag_id, tag))
    shown = [s for s in stories if s[0] not in hidden
             and not filtered.intersection(t for t, _ in tags.get(s[0], ()))]
    ids = [s[0] for s in shown]
    authors = _by_id(_in(b, "users_by_ids", [], [s[2] for s in shown]))
    votes = dict(_in(b, "user_story_votes", [user], ids))
    saved = {r[0] for r in _in(b, "user_saved", [user], ids)}
    return {"stories": [
        (*s, authors[s[2]][1], tuple(sorted(tags.get(s[0], ()))), votes.get(s[0]),
         s[0] in saved)
        for s in shown
    ]}


def front_page(b: Backend, r: Request) -> Page:
    return _story_list(b, r.user, b.read("front_page"))


def recent(b: Backend, r: Request) -> Page:
    return _story_list(b, r.user, b.read("recent"))


def story(b: Backend, r: Request) -> Page:
    """A story with its comments, ordered by score; visiting it moves the read ribbon."""
    found = b.read("story", [r.args["short_id"]])
    if not found:
        return {"story": None}
    s = found[0]
    sid = s[0]
    tags = sorted((t, name) for _, t, name in b.read("story_tags", [sid]))
    comments = b.read("story_comments", [sid])
    authors = _by_id(_in(b, "users_by_ids", [], [s[2]] + [c[3] for c in comments]))
    my_vote = b.read("user_story_votes", [r.user, sid])
    saved = b.read("user_saved", [r.user, sid])
    my_comment_votes = sorted(b.read("user_votes_on_story_comments", [r.user, sid]))
    _touch_ribbon(b, r.user, sid, r.args["now"])
    return {
        "story": (*s, authors[s[2]][1], tuple(tags), my_vote[0][1] if my_vote else None,
                  bool(saved)),
        "comments": [(*c, authors[c[3]][1]) for c in comments],
        "my_comment_votes": my_comment_votes,
    }


def _touch_ribbon(b: Backend, user: int, story_id: int, now: int) -> None:
    """Update the read ribbon, or create it. An UPDATE counts *changed* rows (MySQL's and
    rivulet's rule), so ``now`` must move on between visits or the INSERT would collide:
    the workload's clock only goes forward."""
    if b.write("touch_ribbon", [now, user, story_id]) == 0:
        b.write("insert_ribbon", [user, story_id, now])


def comments(b: Backend, r: Request) -> Page:
    """The newest comments across the site."""
    rows = b.read("recent_comments")
    authors = _by_id(_in(b, "users_by_ids", [], [c[3] for c in rows]))
    votes = sorted(_in(b, "user_comment_votes", [r.user], [c[0] for c in rows]))
    return {"comments": [(*c, authors[c[3]][1]) for c in rows], "my_votes": votes}


def user(b: Backend, r: Request) -> Page:
    """A user's profile: karma, counts, favourite tags, inviter, moderation record."""
    found = b.read("user_profile", [r.args["username"]])
    if not found:
        return {"user": None}
    u = found[0]
    uid = u[0]
    stories = b.read("user_story_count", [uid])
    comment_count = b.read("user_comment_count", [uid])
    inviter = _in(b, "users_by_ids", [], [u[5]] if u[5] is not None else [])
    return {
        "user": tuple(u),
        "stories": stories[0][1] if stories else 0,
        "comments": comment_count[0][1] if comment_count else 0,
        "top_tags": [tuple(t[1:]) for t in b.read("user_top_tags", [uid])],
        "invited_by": inviter[0][1] if inviter else None,
        "moderations": [tuple(m) for m in b.read("user_moderations", [uid])],
        "invitations": sorted(b.read("user_invitations", [uid])),
    }


def login(b: Backend, r: Request) -> Page:
    found = b.read("login", [r.args["username"]])
    ok = bool(found) and found[0][2] == r.args["password"]
    return {"login": ok, "token": found[0][3] if ok else None}


# ......................................................................... writes


def post_story(b: Backend, r: Request) -> Page:
    a = r.args
    extra: list[Any] = []
    if b.version == "baseline":
        mods = sum(m for _, m in _in(b, "tag_mods", [], a["tags"]))
        extra = [a["now"] + STORY_POINT * (1 + mods)]
    b.write("insert_story", [a["id"], a["short_id"], r.user, a["title"], a["url"],
                             a["description"], a["now"], *extra])
    for tagging, tag in zip(a["tagging_ids"], a["tags"]):
        b.write("insert_tagging", [tagging, a["id"], tag])
    b.write("insert_vote", [a["vote_id"], r.user, a["id"], None, 1])
    b.write("insert_ribbon", [r.user, a["id"], a["now"]])
    return {"posted": a["short_id"]}


def post_comment(b: Backend, r: Request) -> Page:
    a = r.args
    found = b.read("story_ref", [a["story_short_id"]])
    if not found:
        return {"posted": None}
    sid, story_author = found[0]
    parent = None
    if a["parent_short_id"] is not None:
        parent_rows = b.read("comment_ref", [a["parent_short_id"]])
        parent = parent_rows[0][0] if parent_rows else None
    b.write("insert_comment", [a["id"], a["short_id"], sid, r.user, parent, a["comment"],
                               a["now"]])
    b.write("insert_vote", [a["vote_id"], r.user, sid, a["id"], 1])
    if b.version == "baseline":
        gain = COMMENT_POINT if r.user != story_author else 0
        b.write("story_add_comment", [gain, sid])
    _touch_ribbon(b, r.user, sid, a["now"])
    return {"posted": a["short_id"], "parent": parent}


def vote_story(b: Backend, r: Request) -> Page:
    a = r.args
    found = b.read("story_ref", [a["short_id"]])
    if not found:
        return {"voted": None}
    sid, author = found[0]
    vote = a["vote"]
    b.write("insert_vote", [a["vote_id"], r.user, sid, None, vote])
    if b.version == "baseline":
        b.write("story_add_vote", [int(vote > 0), int(vote < 0), STORY_POINT * vote, sid])
        if author != r.user:
            b.write("user_add_karma", [vote, author])
    return {"voted": sid}


def vote_comment(b: Backend, r: Request) -> Page:
    a = r.args
    found = b.read("comment_ref", [a["short_id"]])
    if not found:
        return {"voted": None}
    cid, author, sid = found[0]
    vote = a["vote"]
    if b.version == "baseline":
        story_author = b.read("story_ref_by_id", [sid])[0][1]
    b.write("insert_vote", [a["vote_id"], r.user, sid, cid, vote])
    if b.version == "baseline":
        b.write("comment_add_vote", [int(vote > 0), int(vote < 0), vote, cid])
        if author != story_author:
            b.write("story_add_hotness", [COMMENT_POINT * vote, sid])
        if author != r.user:
            b.write("user_add_karma", [vote, author])
    return {"voted": cid}


PAGE_FUNCTIONS: dict[str, Callable[[Backend, Request], Page]] = {
    "front_page": front_page,
    "recent": recent,
    "story": story,
    "comments": comments,
    "user": user,
    "login": login,
    "post_story": post_story,
    "post_comment": post_comment,
    "vote_story": vote_story,
    "vote_comment": vote_comment,
}
