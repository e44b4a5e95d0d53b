"""Where a view's stream is in the write log, read from its query's Spark checkpoint.

Position: before a micro-batch runs, Spark's offset log and each file source's log record
which segments it reads; the view is consistent, once the batch is applied, with the
smallest over its tables of the newest segment's last LSN (:func:`batch_lsn`). The sink
applies a batch to the view's reader after committing it (with its id) to ``sink.db``,
and skips ids it already has (:mod:`.view`).

Why a module of its own: these functions read files Spark writes (the layout of a
checkpoint's ``offsets/``, ``commits/`` and ``sources/`` directories, and the segment
names of :mod:`.log`), and nothing of the stream's own state; the stream asks them where
a batch leaves it, and retention asks them which segments every stream is done with.
"""

from __future__ import annotations

import json
import re
from pathlib import Path


def committed_lsn(checkpoint: Path) -> int | None:
    """The LSN every log source had read by the newest batch Spark has committed (a
    restart re-runs only later batches, which read only later files); None before
    that batch has listed a segment of each table."""
    try:
        ids = [int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit()]
    except FileNotFoundError:
        return None
    if not ids:
        return None
    # Until every table's source has listed a segment, a later batch may still list
    # (and read) segments from before the snapshot: keep them all.
    positions = log_positions(checkpoint, max(ids))
    return min(positions) if positions else None


def batch_lsn(checkpoint: Path, batch_id: int, snapshot_lsn: int) -> int:
    """The LSN the view is consistent with after ``batch_id``.

    Spark's offset log (written before the batch runs) gives each source's offset,
    and each file source's own log lists the files up to it. A log source has read
    every segment up to the newest one it lists (segments appear in LSN order, and
    every shipment writes every table's file), so the view has every change up to
    the smallest such LSN over its log sources; a snapshot source adds nothing.

    A log source that has listed no segment yet has read nothing after the snapshot:
    the view is then at the snapshot's LSN, whatever the other tables' sources read.
    (The shipper renames a shipment's files one by one, so a batch may list one
    table's first segment and not another's: counting only the sources that listed
    one claimed the whole shipment, and ``settle()`` returned before the view had it.)"""
    positions = log_positions(checkpoint, batch_id)
    return max(snapshot_lsn, min(positions)) if positions else snapshot_lsn


def log_positions(checkpoint: Path, batch_id: int) -> list[int] | None:
    """Per log source, the last LSN of the newest segment it has listed by
    ``batch_id``; None while some source has listed no file at all: a log source
    that has read nothing yet (a snapshot source lists its one file in the first
    batch, and a log source lists only segments)."""
    lines = (checkpoint / "offsets" / str(batch_id)).read_text().splitlines()[2:]
    positions = []
    for index, line in enumerate(lines):
        line = line.strip()
        if not line:
            continue
        offset = int(json.loads(line)["logOffset"]) if line.startswith("{") else -1
        if offset < 0:
            return None
        position = _source_position(checkpoint / "sources" / str(index), offset)
        if position is not None:
            positions.append(position)
    return positions


def _source_position(directory: Path, offset: int) -> int | None:
    """The last LSN of the newest log segment a file source has listed up to ``offset``
    (None for a source that reads no log segment: a snapshot)."""
    entries = directory / str(offset)
    if not entries.exists():
        entries = directory / f"{offset}.compact"
    if offset < 0 or not entries.exists():
        return None  # no file yet
    newest = None
    for line in entries.read_text().splitlines()[1:]:
        match = _SEGMENT_PATH.search(json.loads(line)["path"])
        if match is not None:
            newest = max(newest or 0, int(match.group(1)))
    return newest


#: A log segment's path: under ``<data>/stream/`` or a shared ``stream-<token>/`` (storage.py).
_SEGMENT_PATH = re.compile(r"/stream(?:-[0-9a-f]+)?/log/[^/]+/\d{12}-(\d{12})\.parquet$")


__all__ = ["batch_lsn", "committed_lsn", "log_positions"]
