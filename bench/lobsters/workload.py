"""Page requests in the production site's mix, continuing a generated data set.

The page mix is the share of each page type in production Lobsters' access logs (the
statistics the Noria paper's harness replays, section 8.1): reads dominate (story pages
and the front page are 86% of views; writes well under 1%). Which story, comment or user a
request names is Zipf-skewed like the data set's popularity. A :class:`Workload` assigns
new rows their ids itself, so the same seed gives the same requests for every backend.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from bench.lobsters.data import ACCESS_SKEW, USER_SKEW, Dataset, _Picker, short_id

#: Share of page views per page type (production Lobsters, rounded).
PRODUCTION_MIX: dict[str, float] = {
    "story": 55.8,
    "front_page": 30.1,
    "user": 6.7,
    "comments": 4.7,
    "recent": 2.1,
    "vote_comment": 0.26,
    "vote_story": 0.18,
    "post_comment": 0.05,
    "login": 0.05,
    "post_story": 0.04,
}

WRITE_PAGES = ("vote_comment", "vote_story", "post_comment", "post_story")

#: Ids one workload may assign per table when several run at once (``id_block``).
ID_BLOCK = 1_000_000


@dataclass(frozen=True)
class Request:
    """One page view: its type, the signed-in user, and the page's arguments."""

    page: str
    user: int
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def writes(self) -> bool:
        """The page is one of the site's write actions (:data:`WRITE_PAGES`), as the
        production mix counts them. Not whether it changes rows: a story page writes its
        read ribbon too, so code that settles or replays writes goes by the statements a
        page ran (:class:`bench.lobsters.check.Recorder`), or settles after every page."""
        return self.page in WRITE_PAGES


class Workload:
    """An endless, seeded stream of :class:`Request` over ``dataset``'s rows.

    Writes are applied to the workload's own bookkeeping (ids, who voted on what, the
    comments of each story) as they are generated, so later requests can name the new
    rows: run requests in the order they come. Workloads that write to one database at
    the same time (the load generator's processes) take distinct ``id_block`` numbers, so
    the rows they insert never share an id.
    """

    def __init__(self, dataset: Dataset, seed: int = 7,
                 mix: dict[str, float] | None = None, id_block: int = 0) -> None:
        self.ds = dataset
        self.rnd = random.Random(seed)
        mix = mix or PRODUCTION_MIX
        self.pages = list(mix)
        self.weights = [mix[p] for p in self.pages]
        sizes = dataset.sizes
        self.pick_user = _Picker(sizes.users, USER_SKEW, seed + 11, dataset.user_order)
        self.pick_story = _Picker(sizes.stories, ACCESS_SKEW, seed + 12, dataset.story_order)
        self.pick_comment = _Picker(max(1, sizes.comments), ACCESS_SKEW, seed + 13,
                                    dataset.comment_order or None)
        self.comments = len(dataset.tables["comments"])
        self.new_stories: list[int] = []  # posted by this workload
        self.new_comments: list[int] = []
        self.story_of_comment = {r[0]: r[2] for r in dataset.tables["comments"]}
        self.story_author = {r[0]: r[2] for r in dataset.tables["stories"]}
        self.next = {name: dataset.next_id(name) + id_block * ID_BLOCK
                     for name in ("stories", "comments", "votes", "taggings")}
        self.now = dataset.now
        # copies: the data set stays as generated, whatever the workload does
        self.story_voters = set(dataset.story_voters)
        self.comment_voters = set(dataset.comment_voters)
        self.story_comments = {k: list(v) for k, v in dataset.story_comments.items()}
        self.tags = len(dataset.tables["tags"])

    def _tick(self) -> int:
        self.now += 1 + self.rnd.randint(0, 5)
        return self.now

    def _any_story(self) -> int:
        """A story id: mostly the generated ones by popularity, sometimes a new one."""
        if self.new_stories and self.rnd.random() < 0.2:
            return self.rnd.choice(self.new_stories)
        return self.pick_story() + 1

    def _any_comment(self) -> int | None:
        if self.new_comments and self.rnd.random() < 0.2:
            return self.rnd.choice(self.new_comments)
        if self.comments == 0:
            return None
        return min(self.pick_comment() + 1, self.comments)

    def __iter__(self) -> Workload:
        return self

    def __next__(self) -> Request:
        page = self.rnd.choices(self.pages, self.weights)[0]
        user = self.pick_user() + 1
        return getattr(self, f"_{page}")(user) or Request("front_page", user)

    def take(self, n: int) -> list[Request]:
        return [next(self) for _ in range(n)]

    # ..................................................................... pages

    def _front_page(self, user: int) -> Request:
        return Request("front_page", user)

    def _recent(self, user: int) -> Request:
        return Request("recent", user)

    def _comments(self, user: int) -> Request:
        return Request("comments", user)

    def _story(self, user: int) -> Request:
        return Request("story", user, {"short_id": short_id(self._any_story()),
                                       "now": self._tick()})

    def _user(self, user: int) -> Request:
        other = self.pick_user() + 1
        return Request("user", user, {"username": f"user{other}"})

    def _login(self, user: int) -> Request:
        return Request("login", user, {"username": f"user{user}", "password": f"pw{user}"})

    def _post_story(self, user: int) -> Request:
        sid = self.next["stories"]
        self.next["stories"] += 1
        self.new_stories.append(sid)
        self.story_author[sid] = user
        tags = sorted({self.rnd.randint(1, self.tags) for _ in range(self.rnd.choice((1, 2)))})
        taggings = list(range(self.next["taggings"], self.next["taggings"] + len(tags)))
        self.next["taggings"] += len(tags)
        vote = self._vote_id()
        self.story_voters.add((user, sid))
        return Request("post_story", user, {
            "id": sid, "short_id": short_id(sid), "title": f"New story {sid}",
            "url": f"https://example.org/{sid}", "description": None, "now": self._tick(),
            "tags": tags, "tagging_ids": taggings, "vote_id": vote})

    def _post_comment(self, user: int) -> Request:
        sid = self._any_story()
        if self.rnd.random() < 0.25:  # submitters answer the comments on their stories
            user = self.story_author[sid]
        cid = self.next["comments"]
        self.next["comments"] += 1
        siblings = self.story_comments.setdefault(sid, [])
        parent = self.rnd.choice(siblings) if siblings and self.rnd.random() < 0.5 else None
        siblings.append(cid)
        self.new_comments.append(cid)
        self.story_of_comment[cid] = sid
        self.comment_voters.add((user, cid))
        return Request("post_comment", user, {
            "id": cid, "short_id": short_id(cid, 10), "story_short_id": short_id(sid),
            "parent_short_id": None if parent is None else short_id(parent, 10),
            "comment": f"reply {cid}", "now": self._tick(), "vote_id": self._vote_id()})

    def _vote_story(self, user: int) -> Request | None:
        for _ in range(10):
            sid = self._any_story()
            if (user, sid) not in self.story_voters:
                self.story_voters.add((user, sid))
                return Request("vote_story", user, {
                    "short_id": short_id(sid), "vote": self._direction(0.05),
                    "vote_id": self._vote_id()})
        return None

    def _vote_comment(self, user: int) -> Request | None:
        for _ in range(10):
            cid = self._any_comment()
            if cid is None:
                return None
            if (user, cid) not in self.comment_voters:
                self.comment_voters.add((user, cid))
                return Request("vote_comment", user, {
                    "short_id": short_id(cid, 10), "vote": self._direction(0.1),
                    "vote_id": self._vote_id()})
        return None

    def _direction(self, down: float) -> int:
        return -1 if self.rnd.random() < down else 1

    def _vote_id(self) -> int:
        vid = self.next["votes"]
        self.next["votes"] += 1
        return vid
