"""Write-to-visible lag: how long an acknowledged write takes to show in every view.

A write is acknowledged once its batch is durable; readers see it once the propagation
worker has pushed the batch through the dataflow. The time between the two is what an
application observes as staleness, so the database records it per batch and ``/metrics``
exports it as a Prometheus histogram (cumulative buckets, sum and count).
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass

#: Upper bounds (seconds) of the histogram's buckets; +Inf is implied.
LAG_BUCKETS: tuple[float, ...] = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
)


@dataclass(frozen=True)
class LagSnapshot:
    """A consistent copy of the histogram: ``counts[i]`` batches took at most
    ``buckets[i]`` seconds (not cumulative); ``counts[-1]`` is the +Inf bucket."""

    buckets: tuple[float, ...]
    counts: tuple[int, ...]
    total_seconds: float
    count: int
    last_seconds: float
    max_seconds: float

    def cumulative(self) -> list[tuple[float, int]]:
        """(upper bound, batches at most that slow) pairs, ending with (+Inf, count)."""
        out, running = [], 0
        for bound, n in zip((*self.buckets, float("inf")), self.counts):
            running += n
            out.append((bound, running))
        return out

    def as_dict(self) -> dict[str, float | int]:
        return {
            "count": self.count,
            "last_seconds": self.last_seconds,
            "avg_seconds": self.total_seconds / self.count if self.count else 0.0,
            "max_seconds": self.max_seconds,
        }


class LagHistogram:
    """Observed by the propagation worker (one call per batch), read by anyone."""

    def __init__(self, buckets: tuple[float, ...] = LAG_BUCKETS) -> None:
        self._buckets = buckets
        self._counts = [0] * (len(buckets) + 1)
        self._total = 0.0
        self._count = 0
        self._last = 0.0
        self._max = 0.0
        self._lock = threading.Lock()

    def observe(self, seconds: float) -> None:
        with self._lock:
            self._counts[bisect.bisect_left(self._buckets, seconds)] += 1
            self._total += seconds
            self._count += 1
            self._last = seconds
            self._max = max(self._max, seconds)

    def snapshot(self) -> LagSnapshot:
        with self._lock:
            return LagSnapshot(self._buckets, tuple(self._counts), self._total, self._count,
                               self._last, self._max)
