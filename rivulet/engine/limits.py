"""Limits on what one request may ask of rivulet, so that no client can exhaust the
process's memory or CPU by accident or on purpose. Each has a default meant to be far above
what an application needs and far below what would hurt; a request over one gets a
:class:`LimitError` saying which limit, its value, and how to change it, and changes nothing.

    db = rivulet.open("data", limits=Limits(max_batch_rows=1_000_000))
    rivulet serve --max-result-rows 100000 ...

``upquery_timeout`` (how long a read that misses may wait for its upquery) is a limit too;
it is an argument of :func:`rivulet.open` of its own, kept where it has always been.
The MySQL server also bounds a packet (``max_allowed_packet``, 64 MB, error 1153) and the
HTTP API a request body (64 MB, 413).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

# LimitError is defined with the other errors, at the bottom layer; it is importable from
# here too (rivulet.engine.limits.LimitError), as it always was.
from rivulet.errors import LimitError, ResultTooLargeError

__all__ = ["LimitError", "Limits", "ResultTooLargeError"]


def _limit(default: int, help_text: str) -> Any:
    """A limit: its default, and what it bounds (``rivulet serve``'s option help)."""
    return field(default=default, metadata={"help": help_text})


@dataclass(frozen=True)
class Limits:
    #: Characters of SQL text parsed at once (a statement, or a script of several). Values
    #: sent as parameters (and, over MySQL, the literals of a query, which are split off
    #: before parsing) do not count.
    max_statement_chars: int = _limit(1_000_000, "characters of SQL text parsed at once")
    #: Rows in one write: an INSERT's VALUES, an ``insert_many`` call, an HTTP POST of
    #: rows (bulk loads go through ``rivulet import`` or ``Database.bulk_insert``).
    max_batch_rows: int = _limit(1_000_000, "rows in one write")
    #: Rows in one answer to a client of the MySQL server or the HTTP API (an embedded
    #: caller gets every row it asks for).
    max_result_rows: int = _limit(1_000_000, "rows in one answer to a client")
    #: Views in the program, the views made for ad-hoc queries included (each holds
    #: dataflow nodes and state: a client sending ever-different queries would otherwise
    #: grow the program without end).
    max_views: int = _limit(10_000, "views in the program, ad-hoc ones included")

    def __post_init__(self) -> None:
        for name in self.names():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"limit {name} must be a positive integer, got {value!r}")

    @classmethod
    def names(cls) -> list[str]:
        """The limits' names (each one is an option of ``rivulet serve``)."""
        return [f.name for f in fields(cls)]

    @classmethod
    def help(cls, name: str) -> str:
        return next(f.metadata["help"] for f in fields(cls) if f.name == name)

    @classmethod
    def from_options(cls, options: Any) -> Limits:
        """The limits an ``argparse`` namespace names, one attribute per limit."""
        return cls(**{name: getattr(options, name) for name in cls.names()})

    def check_statement(self, sql: str) -> None:
        if len(sql) > self.max_statement_chars:
            raise LimitError(f"statement of {len(sql):,} characters is over the limit of "
                             f"{self.max_statement_chars:,} (max_statement_chars): send "
                             "large values as parameters")

    def check_batch(self, rows: int) -> None:
        if rows > self.max_batch_rows:
            raise LimitError(f"a write of {rows:,} rows is over the limit of "
                             f"{self.max_batch_rows:,} (max_batch_rows): split it into batches")

    def check_result(self, rows: int) -> None:
        if rows > self.max_result_rows:
            raise ResultTooLargeError(f"a result of {rows:,} rows is over the limit of "
                                      f"{self.max_result_rows:,} (max_result_rows): narrow "
                                      "the query or add a LIMIT")

    def check_new_view(self, views: int) -> None:
        """Before a view is added to a program that has ``views`` views."""
        if views >= self.max_views:
            raise LimitError(f"the program has {views:,} views, the limit (max_views); drop "
                             "views, or raise the limit")
