"""Fewer C allocator arenas for a server process, so that its memory stays near its limit.

glibc's malloc gives each thread that allocates at once an arena of its own, up to eight
per core, and a freed block stays in its arena's pages. A server allocates from many
threads (the event loop, the executor's workers building views and answering misses,
SQLite stepping without the GIL, the HTTP thread): under a changing program (views added
and dropped every minute in ``bench.reliability``'s soak), memory freed in one arena was
not reused by the next allocation in another, and the process's resident set grew by tens
of kilobytes per view while Python's own allocations (tracemalloc) did not grow at all.
With two arenas that growth all but stops, at no cost in throughput the soak could see:
Python threads allocate under the GIL anyway, so more arenas buy little concurrency.
"""

from __future__ import annotations

import ctypes
import ctypes.util

#: glibc's ``mallopt`` parameter for the arena limit (malloc.h: ``M_ARENA_MAX``).
_M_ARENA_MAX = -8
SERVER_ARENAS = 2


def limit_arenas(arenas: int = SERVER_ARENAS) -> bool:
    """Cap glibc's arenas (call before the server starts its threads); whether it took.
    Elsewhere than glibc (musl, macOS) there is nothing to do and nothing is done."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_ARENA_MAX, arenas))
