"""``GET /metrics``: the database's counters in Prometheus' text exposition format (0.0.4).

Written by hand rather than with ``prometheus_client``: the numbers already live in
``Database.stats()`` and the lag histogram, so all that is needed is the few lines of
the text format, and a registry of collector objects would only duplicate them.

Counters are cumulative since the database was opened (a scrape after a restart sees them
start again, which Prometheus' ``rate()`` handles). Per-view series carry a ``view`` label;
ad-hoc queries appear under their ``_rivulet_q_...`` view names.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rivulet.engine.lag import LagSnapshot

if TYPE_CHECKING:
    from rivulet.engine.database import Database

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

Labels = tuple[tuple[str, str], ...]


class RequestCounter:
    """HTTP requests served, by endpoint, method and status (one per app, not global)."""

    def __init__(self) -> None:
        self._counts: Counter[tuple[str, str, int]] = Counter()
        self._lock = threading.Lock()

    def add(self, endpoint: str, method: str, status: int) -> None:
        with self._lock:
            self._counts[(endpoint, method, status)] += 1

    def items(self) -> list[tuple[tuple[str, str, int], int]]:
        with self._lock:
            return sorted(self._counts.items())


class Exposition:
    """Builds the text: one HELP and TYPE line per metric family, then its samples."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, kind: str, help_text: str,
               samples: Iterable[tuple[str, Labels, float]]) -> None:
        """``samples`` are (suffix, labels, value); the suffix is "" except for a
        histogram's ``_bucket``/``_sum``/``_count``."""
        self.lines.append(f"# HELP {name} {_escape_help(help_text)}")
        self.lines.append(f"# TYPE {name} {kind}")
        for suffix, labels, value in samples:
            self.lines.append(f"{name}{suffix}{_labels(labels)} {_number(value)}")

    def simple(self, name: str, kind: str, help_text: str, value: float) -> None:
        self.family(name, kind, help_text, [("", (), value)])

    def per_view(self, name: str, kind: str, help_text: str, values: dict[str, float]) -> None:
        self.family(name, kind, help_text,
                    [("", (("view", view),), v) for view, v in sorted(values.items())])

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def render_metrics(db: Database, requests: RequestCounter | None = None) -> str:
    """Every metric of ``db`` (and of the HTTP requests served) as exposition text."""
    stats = db.stats()
    per_view: dict[str, dict[str, Any]] = stats["per_view"]
    out = Exposition()
    out.simple("rivulet_failed", "gauge",
               "1 once the database failed (its dataflow or storage: see /health), else 0.",
               int(db.failure is not None))
    out.simple("rivulet_reads_total", "counter",
               "View reads answered (hits plus misses), all views.",
               stats["hits"] + stats["misses"])
    out.simple("rivulet_hits_total", "counter",
               "View reads answered from state in memory.", stats["hits"])
    out.simple("rivulet_misses_total", "counter",
               "Keys of partial views that were not in memory when read (filled by upqueries).",
               stats["misses"])
    out.simple("rivulet_upqueries_total", "counter",
               "Upqueries sent to dataflow nodes to fill missing state.", stats["upqueries"])
    out.simple("rivulet_evictions_total", "counter",
               "Keys evicted from partial state (memory limit or explicit eviction).",
               stats["evictions"])
    out.simple("rivulet_writes_total", "counter",
               "Write requests committed (statements or insert batches).", stats["writes"])
    out.simple("rivulet_commits_total", "counter",
               "Write batches committed (group commits).", stats["commits"])
    out.simple("rivulet_rows_written_total", "counter",
               "Rows inserted, updated or deleted by committed writes.", stats["rows_written"])
    out.simple("rivulet_memory_bytes", "gauge",
               "Bytes of dataflow state in memory (rivulet's own accounting).",
               stats["memory_bytes"])
    if stats["memory_limit"] is not None:
        out.simple("rivulet_memory_limit_bytes", "gauge",
                   "The configured bound on state in memory.", stats["memory_limit"])
    out.simple("rivulet_lsn", "gauge", "LSN of the last committed write batch.", stats["lsn"])
    out.simple("rivulet_applied_lsn", "gauge",
               "LSN of the last write batch visible in every view.", stats["applied_lsn"])
    out.simple("rivulet_dataflow_nodes", "gauge", "Nodes of the dataflow graph.", stats["nodes"])
    out.simple("rivulet_views", "gauge", "Views of the program (ad-hoc queries excluded).",
               stats["views"])
    _lag(out, db.visibility_lag.snapshot())
    out.per_view("rivulet_view_reads_total", "counter", "Reads of one view (hits plus misses).",
                 {n: v["hits"] + v["misses"] for n, v in per_view.items()})
    out.per_view("rivulet_view_hits_total", "counter", "Reads of one view answered from memory.",
                 {n: v["hits"] for n, v in per_view.items()})
    out.per_view("rivulet_view_misses_total", "counter", "Keys one view missed.",
                 {n: v["misses"] for n, v in per_view.items()})
    out.per_view("rivulet_view_memory_bytes", "gauge", "Bytes of one view's reader state.",
                 {n: v["memory_bytes"] for n, v in per_view.items()})
    out.per_view("rivulet_view_keys", "gauge", "Keys held in one view's reader state.",
                 {n: v["keys"] for n, v in per_view.items()})
    out.per_view("rivulet_view_partial", "gauge",
                 "1 if the view keeps partial state (only the keys read), 0 if full.",
                 {n: int(v["partial"]) for n, v in per_view.items()})
    if "streams" in stats:
        _streams(out, stats["streams"])
    if requests is not None:
        out.family("rivulet_http_requests_total", "counter",
                   "HTTP requests served, by endpoint, method and status.",
                   [("", (("endpoint", e), ("method", m), ("status", str(s))), n)
                    for (e, m, s), n in requests.items()])
    return out.text()


def _streams(out: Exposition, progress: dict[str, Any]) -> None:
    """Per view stream of the Spark pipeline (rivulet/pipeline/streaming)."""
    streams = {s["view"]: s for s in progress["streams"]}
    out.simple("rivulet_stream_shipped_lsn", "gauge",
               "Last LSN shipped from the write log to the Spark streams.", progress["shipped_lsn"])
    for metric, field, kind, help_text in (
            ("active", "active", "gauge", "1 while the view's streaming query runs."),
            ("applied_lsn", "applied_lsn", "gauge", "LSN the view's stream has applied."),
            ("lag_lsns", "lag_lsns", "gauge", "Committed LSNs the view's stream has not applied."),
            ("lag_seconds", "lag_seconds", "gauge",
             "Age of the oldest committed write the view's stream has not applied."),
            ("batches_total", "batches", "counter", "Micro-batches the view's stream applied."),
            ("batch_duration_ms", "batch_duration_ms", "gauge",
             "Duration of the stream's last micro-batch (Spark's trigger execution)."),
            ("rows_per_second", "rows_per_second", "gauge",
             "Input rows per second Spark processed in the stream's last micro-batch.")):
        out.per_view(f"rivulet_stream_{metric}", kind, help_text,
                     {v: float(s.get(field) or 0) for v, s in streams.items()})


def _lag(out: Exposition, lag: LagSnapshot) -> None:
    samples: list[tuple[str, Labels, float]] = [
        ("_bucket", (("le", _number(bound)),), n) for bound, n in lag.cumulative()
    ]
    samples += [("_sum", (), lag.total_seconds), ("_count", (), lag.count)]
    out.family("rivulet_write_visible_lag_seconds", "histogram",
               "Seconds from a write batch's commit to its being visible in every view.",
               samples)
    out.simple("rivulet_write_visible_lag_last_seconds", "gauge",
               "Write-to-visible lag of the last batch applied.", lag.last_seconds)


def _number(value: float) -> str:
    if isinstance(value, float):
        if math.isinf(value):
            return "+Inf" if value > 0 else "-Inf"
        if math.isnan(value):
            return "NaN"
        return repr(value)
    return str(int(value))


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape_label(v)}"' for k, v in labels) + "}"


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")
