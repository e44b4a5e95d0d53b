"""Running a test's work on several threads at once, its failures the test's own.

A test of concurrent clients (two ORM sessions that increment one row under a locking
read, ...) runs each client on a thread; an exception raised on one of those threads would
only be printed, and the test pass. :func:`run_threads` collects them and fails the test
with them, and with any thread still running after its time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_threads(count: int, work: Callable[[int], None], *,
                finish: Callable[[], None] = lambda: None, timeout: float = 120) -> None:
    """``work(i)`` on ``count`` threads (``i`` from 0), all started before any is waited
    for; then ``finish()`` on each thread, whatever ``work`` did (an ORM closes the
    thread's own connection there). Fails with the exceptions raised on the threads, and
    if one is still running ``timeout`` seconds after the wait for it began."""
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            work(i)
        except BaseException as exc:  # reported by the test's thread
            errors.append(exc)
        finally:
            finish()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
