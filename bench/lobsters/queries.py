"""The Lobsters application's queries, written twice: *baseline* and *natural*.

The *baseline* queries are what the Lobsters developers wrote for MySQL: reads take vote
counts, comment counts, scores, karma and the front page's hotness from columns of the
base tables (``schema.sql``), and every write that changes one of those values updates the
column too, in the same request (Lobsters does it in a transaction, which is why it needs
transactions at all). The *natural* queries read the same values from views that compute
them with joins and aggregates, over base tables without those columns
(``schema_natural.sql``); their writes are plain inserts. rivulet serves both; the point of
the Noria paper's section 8.1 is that the natural version is both simpler and faster on a
dataflow system (and collapses on MariaDB, which computes the aggregates on every read).

Every statement is a plain string with ``?`` parameters that runs unchanged on rivulet
(reads as ``CREATE VIEW``-able parameterized views), SQLite and MySQL/MariaDB. An
``IN (?)`` list takes any number of values: a backend that does not expand lists itself
writes one ``?`` per value (:func:`expand_in`).

Hotness: Lobsters orders the front page by ``log10(score) + created_at / window`` plus tag
modifiers and half the score of other users' comments, capped. The log and the cap make it a
float compared across engines, so here it is kept integral and linear, with the same
inputs: ``created_at + 3600 * (story score + tags' hotness_mod) + 1800 * (score of the
comments by users other than the submitter)``. An hour of age is worth one point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMA = {"baseline": HERE / "schema.sql", "natural": HERE / "schema_natural.sql"}
VERSIONS = ("baseline", "natural")

#: Hotness weights (seconds of age one point is worth).
STORY_POINT = 3600
COMMENT_POINT = 1800

FRONT_PAGE_SIZE = 25
COMMENTS_PAGE_SIZE = 20


# --------------------------------------------------------------------------- shared

#: Comments that are notifications for a user: replies to the user's comments, and top-level
#: comments on the user's stories, by someone else, newer than the user's last visit of the
#: story (the read ribbon), on stories the user follows. Lobsters' ``replying_comments``
#: database view; both versions compute the count on every page (that is what makes
#: MariaDB read-bound in the paper), so the text is shared.
REPLYING_COMMENTS = """
SELECT read_ribbons.user_id AS user_id, comments.id AS comment_id, comments.story_id AS story_id
FROM read_ribbons
JOIN comments ON comments.story_id = read_ribbons.story_id
JOIN stories ON stories.id = comments.story_id
LEFT JOIN comments AS parent ON parent.id = comments.parent_comment_id
WHERE read_ribbons.is_following = 1
  AND comments.user_id <> read_ribbons.user_id
  AND comments.is_deleted = 0 AND comments.is_moderated = 0
  AND comments.created_at > read_ribbons.updated_at
  AND ((parent.id IS NULL AND stories.user_id = read_ribbons.user_id)
       OR parent.user_id = read_ribbons.user_id)
"""

SHARED_VIEWS: tuple[tuple[str, str], ...] = (("replying_comments", REPLYING_COMMENTS),)

SHARED_READS: dict[str, str] = {
    "unread_replies": (
        "SELECT user_id, COUNT(*) AS n FROM replying_comments WHERE user_id = ? "
        "GROUP BY user_id"
    ),
    "unread_messages": (
        "SELECT recipient_user_id, COUNT(*) AS n FROM messages "
        "WHERE recipient_user_id = ? AND has_been_read = 0 GROUP BY recipient_user_id"
    ),
    "login": "SELECT id, username, password_digest, session_token FROM users WHERE username = ?",
    "users_by_ids": "SELECT id, username FROM users WHERE id IN (?)",
    "story_tags": (
        "SELECT taggings.story_id, tags.id, tags.tag FROM taggings "
        "JOIN tags ON taggings.tag_id = tags.id WHERE taggings.story_id IN (?)"
    ),
    "tag_mods": "SELECT id, hotness_mod FROM tags WHERE id IN (?)",
    "user_hidden": "SELECT story_id FROM hidden_stories WHERE user_id = ?",
    "user_tag_filters": "SELECT tag_id FROM tag_filters WHERE user_id = ?",
    "user_story_votes": (
        "SELECT story_id, vote FROM votes "
        "WHERE user_id = ? AND comment_id IS NULL AND story_id IN (?)"
    ),
    "user_saved": "SELECT story_id FROM saved_stories WHERE user_id = ? AND story_id IN (?)",
    "user_votes_on_story_comments": (
        "SELECT comment_id, vote FROM votes "
        "WHERE user_id = ? AND story_id = ? AND comment_id IS NOT NULL"
    ),
    "user_comment_votes": (
        "SELECT comment_id, vote FROM votes WHERE user_id = ? AND comment_id IN (?)"
    ),
    "story_ref": "SELECT id, user_id FROM stories WHERE short_id = ?",
    "story_ref_by_id": "SELECT id, user_id FROM stories WHERE id = ?",
    "comment_ref": "SELECT id, user_id, story_id FROM comments WHERE short_id = ?",
    "user_story_count": (
        "SELECT user_id, COUNT(*) AS n FROM stories WHERE user_id = ? GROUP BY user_id"
    ),
    "user_comment_count": (
        "SELECT user_id, COUNT(*) AS n FROM comments WHERE user_id = ? AND is_deleted = 0 "
        "GROUP BY user_id"
    ),
    "user_top_tags": (
        "SELECT stories.user_id, tags.id, tags.tag, COUNT(*) AS n FROM stories "
        "JOIN taggings ON taggings.story_id = stories.id JOIN tags ON tags.id = taggings.tag_id "
        "WHERE stories.user_id = ? GROUP BY stories.user_id, tags.id, tags.tag "
        "ORDER BY n DESC, tags.id LIMIT 3"
    ),
    "user_moderations": (
        "SELECT id, moderator_user_id, action, reason, created_at FROM moderations "
        "WHERE user_id = ? ORDER BY id DESC LIMIT 5"
    ),
    "user_invitations": (
        "SELECT id, email, new_user_id, created_at FROM invitations WHERE user_id = ?"
    ),
}

SHARED_WRITES: dict[str, str] = {
    "touch_ribbon": (
        "UPDATE read_ribbons SET updated_at = ? WHERE user_id = ? AND story_id = ?"
    ),
    "insert_ribbon": (
        "INSERT INTO read_ribbons (user_id, story_id, is_following, updated_at) "
        "VALUES (?, ?, 1, ?)"
    ),
    "insert_tagging": "INSERT INTO taggings (id, story_id, tag_id) VALUES (?, ?, ?)",
    "insert_vote": (
        "INSERT INTO votes (id, user_id, story_id, comment_id, vote, reason) "
        "VALUES (?, ?, ?, ?, ?, NULL)"
    ),
}

# --------------------------------------------------------------------------- columns

STORY_LIST_COLUMNS = (
    "id, short_id, user_id, title, url, created_at, upvotes, downvotes, comments_count, hotness"
)
STORY_COLUMNS = (
    "id, short_id, user_id, title, url, description, created_at, is_expired, merged_story_id, "
    "upvotes, downvotes, comments_count, hotness"
)
COMMENT_COLUMNS = (
    "id, short_id, story_id, user_id, parent_comment_id, comment, created_at, "
    "upvotes, downvotes, score"
)


def _front_page(source: str) -> str:
    return (
        f"SELECT {STORY_LIST_COLUMNS} FROM {source} "
        "WHERE merged_story_id IS NULL AND is_expired = 0 AND upvotes - downvotes >= 0 "
        f"ORDER BY hotness DESC, id DESC LIMIT {FRONT_PAGE_SIZE}"
    )


def _recent(source: str) -> str:
    return (
        f"SELECT {STORY_LIST_COLUMNS} FROM {source} "
        "WHERE merged_story_id IS NULL AND is_expired = 0 "
        f"ORDER BY created_at DESC, id DESC LIMIT {FRONT_PAGE_SIZE}"
    )


def _story(source: str) -> str:
    return f"SELECT {STORY_COLUMNS} FROM {source} WHERE short_id = ?"


def _story_comments(source: str) -> str:
    return (
        f"SELECT {COMMENT_COLUMNS} FROM {source} WHERE story_id = ? AND is_deleted = 0 "
        "ORDER BY score DESC, id"
    )


def _recent_comments(source: str) -> str:
    cols = ", ".join(f"{source}.{c.strip()}" for c in COMMENT_COLUMNS.split(","))
    return (
        f"SELECT {cols}, stories.short_id AS story_short_id, stories.title AS story_title "
        f"FROM {source} JOIN stories ON {source}.story_id = stories.id "
        f"WHERE {source}.is_deleted = 0 AND {source}.is_moderated = 0 "
        f"ORDER BY {source}.id DESC LIMIT {COMMENTS_PAGE_SIZE}"
    )


# --------------------------------------------------------------------------- baseline

BASELINE_READS: dict[str, str] = {
    "header_user": "SELECT id, username, karma FROM users WHERE id = ?",
    "front_page": _front_page("stories"),
    "recent": _recent("stories"),
    "story": _story("stories"),
    "story_comments": _story_comments("comments"),
    "recent_comments": _recent_comments("comments"),
    "user_profile": (
        "SELECT id, username, about, created_at, is_moderator, invited_by_user_id, karma "
        "FROM users WHERE username = ?"
    ),
}

BASELINE_WRITES: dict[str, str] = {
    "insert_story": (
        "INSERT INTO stories (id, short_id, user_id, title, url, description, created_at, "
        "is_expired, merged_story_id, upvotes, downvotes, comments_count, hotness) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, 1, 0, 0, ?)"
    ),
    "insert_comment": (
        "INSERT INTO comments (id, short_id, story_id, user_id, parent_comment_id, comment, "
        "created_at, is_deleted, is_moderated, upvotes, downvotes, score) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, 1, 0, 1)"
    ),
    # the new comment counts, and its self-upvote adds to the story's hotness when the
    # commenter is not the submitter (the page passes 0 or COMMENT_POINT)
    "story_add_comment": (
        "UPDATE stories SET comments_count = comments_count + 1, hotness = hotness + ? "
        "WHERE id = ?"
    ),
    "story_add_vote": (
        "UPDATE stories SET upvotes = upvotes + ?, downvotes = downvotes + ?, "
        "hotness = hotness + ? WHERE id = ?"
    ),
    "story_add_hotness": "UPDATE stories SET hotness = hotness + ? WHERE id = ?",
    "comment_add_vote": (
        "UPDATE comments SET upvotes = upvotes + ?, downvotes = downvotes + ?, "
        "score = score + ? WHERE id = ?"
    ),
    "user_add_karma": "UPDATE users SET karma = karma + ? WHERE id = ?",
}

# --------------------------------------------------------------------------- natural

NATURAL_VIEWS: tuple[tuple[str, str], ...] = (
    ("story_vote_totals", """
SELECT story_id,
       SUM(CASE WHEN vote > 0 THEN 1 ELSE 0 END) AS upvotes,
       SUM(CASE WHEN vote < 0 THEN 1 ELSE 0 END) AS downvotes
FROM votes WHERE comment_id IS NULL GROUP BY story_id
"""),
    ("comment_vote_totals", """
SELECT comment_id,
       SUM(CASE WHEN vote > 0 THEN 1 ELSE 0 END) AS upvotes,
       SUM(CASE WHEN vote < 0 THEN 1 ELSE 0 END) AS downvotes
FROM votes WHERE comment_id IS NOT NULL GROUP BY comment_id
"""),
    ("comments_with_votes", """
SELECT comments.id, comments.short_id, comments.story_id, comments.user_id,
       comments.parent_comment_id, comments.comment, comments.created_at,
       comments.is_deleted, comments.is_moderated,
       COALESCE(comment_vote_totals.upvotes, 0) AS upvotes,
       COALESCE(comment_vote_totals.downvotes, 0) AS downvotes,
       COALESCE(comment_vote_totals.upvotes, 0) - COALESCE(comment_vote_totals.downvotes, 0)
           AS score
FROM comments LEFT JOIN comment_vote_totals ON comments.id = comment_vote_totals.comment_id
"""),
    ("story_comment_totals", f"""
SELECT comments_with_votes.story_id AS story_id, COUNT(*) AS comments_count,
       SUM(CASE WHEN comments_with_votes.user_id <> stories.user_id
                THEN comments_with_votes.score ELSE 0 END) * {COMMENT_POINT} AS comment_points
FROM comments_with_votes JOIN stories ON comments_with_votes.story_id = stories.id
WHERE comments_with_votes.is_deleted = 0
GROUP BY comments_with_votes.story_id
"""),
    ("story_tag_totals", """
SELECT taggings.story_id AS story_id, SUM(tags.hotness_mod) AS hotness_mod
FROM taggings JOIN tags ON taggings.tag_id = tags.id GROUP BY taggings.story_id
"""),
    ("stories_with_stats", f"""
SELECT stories.id, stories.short_id, stories.user_id, stories.title, stories.url,
       stories.description, stories.created_at, stories.is_expired, stories.merged_story_id,
       COALESCE(story_vote_totals.upvotes, 0) AS upvotes,
       COALESCE(story_vote_totals.downvotes, 0) AS downvotes,
       COALESCE(story_comment_totals.comments_count, 0) AS comments_count,
       stories.created_at
         + {STORY_POINT} * (COALESCE(story_vote_totals.upvotes, 0)
                            - COALESCE(story_vote_totals.downvotes, 0)
                            + COALESCE(story_tag_totals.hotness_mod, 0))
         + COALESCE(story_comment_totals.comment_points, 0) AS hotness
FROM stories
LEFT JOIN story_vote_totals ON stories.id = story_vote_totals.story_id
LEFT JOIN story_comment_totals ON stories.id = story_comment_totals.story_id
LEFT JOIN story_tag_totals ON stories.id = story_tag_totals.story_id
"""),
    # karma: votes by others on a user's stories and comments
    ("karma_votes", """
SELECT stories.user_id AS user_id, votes.vote AS vote
FROM votes JOIN stories ON votes.story_id = stories.id
WHERE votes.comment_id IS NULL AND votes.user_id <> stories.user_id
UNION ALL
SELECT comments.user_id AS user_id, votes.vote AS vote
FROM votes JOIN comments ON votes.comment_id = comments.id
WHERE votes.user_id <> comments.user_id
"""),
    ("user_karma", """
SELECT user_id, SUM(vote) AS karma FROM karma_votes GROUP BY user_id
"""),
)

NATURAL_READS: dict[str, str] = {
    "header_user": (
        "SELECT users.id, users.username, COALESCE(user_karma.karma, 0) AS karma "
        "FROM users LEFT JOIN user_karma ON users.id = user_karma.user_id WHERE users.id = ?"
    ),
    "front_page": _front_page("stories_with_stats"),
    "recent": _recent("stories_with_stats"),
    "story": _story("stories_with_stats"),
    "story_comments": _story_comments("comments_with_votes"),
    "recent_comments": _recent_comments("comments_with_votes"),
    "user_profile": (
        "SELECT users.id, users.username, users.about, users.created_at, users.is_moderator, "
        "users.invited_by_user_id, COALESCE(user_karma.karma, 0) AS karma "
        "FROM users LEFT JOIN user_karma ON users.id = user_karma.user_id "
        "WHERE users.username = ?"
    ),
}

NATURAL_WRITES: dict[str, str] = {
    "insert_story": (
        "INSERT INTO stories (id, short_id, user_id, title, url, description, created_at, "
        "is_expired, merged_story_id) VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL)"
    ),
    "insert_comment": (
        "INSERT INTO comments (id, short_id, story_id, user_id, parent_comment_id, comment, "
        "created_at, is_deleted, is_moderated) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0)"
    ),
}


# --------------------------------------------------------------------------- query sets


@dataclass(frozen=True)
class QuerySet:
    """One version's program: schema, internal views, and the named reads and writes.

    ``views`` have no parameters (backends create them as views everywhere); ``reads``
    have ``?`` parameters (rivulet serves each as a parameterized view; SQL databases run
    the text with the values bound).
    """

    version: str
    schema_sql: str
    views: tuple[tuple[str, str], ...]
    reads: dict[str, str]
    writes: dict[str, str]

    def view_statements(self) -> list[str]:
        return [f"CREATE VIEW {name} AS {sql.strip()}" for name, sql in self.views]


def query_set(version: str) -> QuerySet:
    """The baseline or natural program."""
    if version == "baseline":
        views, reads, writes = (), BASELINE_READS, BASELINE_WRITES
    elif version == "natural":
        views, reads, writes = NATURAL_VIEWS, NATURAL_READS, NATURAL_WRITES
    else:
        raise ValueError(f"unknown Lobsters version {version!r} (expected one of {VERSIONS})")
    return QuerySet(
        version=version,
        schema_sql=SCHEMA[version].read_text(),
        views=views + SHARED_VIEWS,
        reads={**SHARED_READS, **reads},
        writes={**SHARED_WRITES, **writes},
    )


#: The statements each page issues, in order (reads, then writes), per version; a page
#: may skip some (an empty IN list, a ribbon that exists). ``header`` runs on every page.
HEADER = ("header_user", "unread_replies", "unread_messages")
PAGES: dict[str, dict[str, tuple[str, ...]]] = {
    "front_page": {
        v: ("front_page", "user_hidden", "user_tag_filters", "story_tags", "users_by_ids",
            "user_story_votes", "user_saved")
        for v in VERSIONS
    },
    "recent": {
        v: ("recent", "user_hidden", "user_tag_filters", "story_tags", "users_by_ids",
            "user_story_votes", "user_saved")
        for v in VERSIONS
    },
    "story": {
        v: ("story", "story_tags", "story_comments", "users_by_ids", "user_story_votes",
            "user_saved", "user_votes_on_story_comments", "touch_ribbon", "insert_ribbon")
        for v in VERSIONS
    },
    "comments": {
        v: ("recent_comments", "users_by_ids", "user_comment_votes") for v in VERSIONS
    },
    "user": {
        v: ("user_profile", "user_story_count", "user_comment_count", "user_top_tags",
            "users_by_ids", "user_moderations", "user_invitations")
        for v in VERSIONS
    },
    "login": {v: ("login",) for v in VERSIONS},
    "post_story": {
        "baseline": ("tag_mods", "insert_story", "insert_tagging", "insert_vote",
                     "insert_ribbon"),
        "natural": ("insert_story", "insert_tagging", "insert_vote", "insert_ribbon"),
    },
    "post_comment": {
        "baseline": ("story_ref", "comment_ref", "insert_comment", "insert_vote",
                     "story_add_comment", "touch_ribbon", "insert_ribbon"),
        "natural": ("story_ref", "comment_ref", "insert_comment", "insert_vote",
                    "touch_ribbon", "insert_ribbon"),
    },
    "vote_story": {
        "baseline": ("story_ref", "insert_vote", "story_add_vote", "user_add_karma"),
        "natural": ("story_ref", "insert_vote"),
    },
    "vote_comment": {
        "baseline": ("comment_ref", "story_ref_by_id", "insert_vote", "comment_add_vote",
                     "story_add_hotness", "user_add_karma"),
        "natural": ("comment_ref", "insert_vote"),
    },
}

def split_script(text: str) -> list[str]:
    """The ``;``-separated statements of a DDL file, without ``--`` comments."""
    lines = [line.split("--", 1)[0] for line in text.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


_IN_LIST = re.compile(r"\bIN\s*\(\s*\?\s*\)", re.IGNORECASE)


def has_in_list(sql: str) -> bool:
    return _IN_LIST.search(sql) is not None


def expand_in(sql: str, n: int, mark: str = "?") -> str:
    """``sql`` with its ``IN (?)`` written with ``n`` placeholders ``mark`` (and every
    other ``?`` as ``mark``, for drivers with another paramstyle)."""
    if n < 1:
        raise ValueError("an IN list needs at least one value")
    text = _IN_LIST.sub("IN (" + ", ".join(["\0"] * n) + ")", sql, count=1)
    return text.replace("?", mark).replace("\0", mark)
