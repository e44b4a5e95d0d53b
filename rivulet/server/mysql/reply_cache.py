"""The bound on the replies the MySQL server keeps encoded, so that a memory limit bounds
the process and not only the state.

To answer a popular read without encoding it again, the server keeps what it encoded: the
last reply to a query text (:class:`rivulet.server.mysql.statements.Texts`) and each reader
row's text-protocol payload (``Handler.encoded``). Those entries also hold the reader's row
tuples, so a key the memory limit evicted stays in memory as long as a cache holds its
reply. Bounded one by one (a count per cache, a cache per statement shape), they grew with
every view and shape a server answered: the soak (``bench/reliability_soak.py``) saw RSS
climb far past the limit while the state stayed under it.

So every cache charges what it adds to one :class:`ReplyBudget` per server, and when the
charges pass the budget every cache is emptied at once and the count starts again. Charges
are never given back (an entry replaced or dropped stays counted), so the count is an upper
bound on what the caches hold. The budget follows the memory limit as SQLite's page caches
do (:func:`rivulet.storage.sqlite.page_cache_bytes`): an eighth of it, 1 MiB at least.
"""

from __future__ import annotations

from collections.abc import Callable

#: The budget without a memory limit.
REPLY_CACHE_BYTES = 64 << 20
#: The least budget under a memory limit.
MIN_REPLY_CACHE_BYTES = 1 << 20
#: What a cache entry costs besides its payload: a dict slot, the pair or the record that
#: holds it, the payload's object header.
ENTRY_BYTES = 160


def reply_cache_bytes(memory_limit: int | None) -> int:
    """The server's budget for encoded replies under ``memory_limit`` (None: no limit)."""
    if memory_limit is None:
        return REPLY_CACHE_BYTES
    return max(MIN_REPLY_CACHE_BYTES, min(REPLY_CACHE_BYTES, memory_limit // 8))


class ReplyBudget:
    """Counts the bytes the reply caches took since they were last emptied; ``drop``
    empties them all. Used from the event loop and worker threads alike: a charge lost to
    a race only delays the next emptying by that much."""

    __slots__ = ("limit", "used", "drop", "drops")

    def __init__(self, limit: int, drop: Callable[[], None]) -> None:
        self.limit = limit
        self.used = 0
        self.drop = drop
        #: How many times the caches were emptied (a figure for tests and /metrics).
        self.drops = 0

    def charge(self, size: int) -> None:
        """Count ``size`` bytes a cache just took; past the budget, empty every cache."""
        self.used += size
        if self.used > self.limit:
            self.used = 0
            self.drops += 1
            self.drop()
