"""Running a Hypothesis strategy against a check for a time budget (the fuzzers' driver).

The test suite runs each fuzzer's check for a few dozen examples under ``@given``; the
reliability benchmark runs the same checks for as many examples as fit in a time budget,
counting them and the failures without stopping at the first (:func:`drive`). Only the
generate phase runs (no shrinking, no example database): a benchmark wants throughput, and
a failure's message carries its input.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings


class Failure(AssertionError):
    """One input broke a rule (the message says which and how)."""


class _TimeUp(Exception):
    """Raised into Hypothesis to end a budgeted run."""


def drive(strategy: Any, seconds: float, check: Callable[..., None], *,
          done: Callable[[], bool] = lambda: False) -> dict[str, Any]:
    """Call ``check(*example)`` on examples of ``strategy`` (tuples) for ``seconds``, or
    until ``done()``; returns ``{"inputs", "failures", "examples", "seconds"}`` (one
    message per kind of failure, the kind being the message's text before its first
    colon)."""
    inputs, failed = 0, 0
    failures: list[str] = []
    started = time.monotonic()
    deadline = started + seconds

    def counted(*args: Any) -> None:
        nonlocal inputs, failed
        if time.monotonic() > deadline or done():
            raise _TimeUp
        inputs += 1
        try:
            check(*args)
        except Failure as exc:
            if not any(f.split(":")[0] == str(exc).split(":")[0] for f in failures):
                failures.append(str(exc)[:500])  # one example of each kind of failure
            failed += 1

    @settings(max_examples=10_000_000, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def fuzz(example: Any) -> None:
        counted(*example)

    while time.monotonic() < deadline and not done():  # (Hypothesis may stop early)
        try:
            fuzz()
        except _TimeUp:
            break
    return {"inputs": inputs, "failures": failed, "examples": failures[:20],
            "seconds": round(time.monotonic() - started, 1)}


__all__ = ["Failure", "drive"]
