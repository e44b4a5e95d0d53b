"""A Spark streaming source over one table's part of the shipped write log.

Offsets are LSNs: ``{"table": t, "lsn": n}`` means "every delta of table ``t`` up to LSN
``n``". The newest offset is the last shipped LSN (:func:`log.shipped_lsn`), and a
micro-batch from offset ``a`` to ``b`` reads the rows with ``a < lsn <= b`` of the
segments overlapping that range. Segments are immutable, so re-running a batch after a
restart reads exactly the same rows: with Spark's offset log and checkpointed state this
is what makes the pipeline exactly-once up to the sink (which skips batches it applied).

A stream may start from a snapshot of the table (``snapshot``, ``snapshot_lsn``; see
:mod:`rivulet.spark.streaming.pipeline`): its first batch then also reads every row of the
snapshot as a +1 delta (offset ``-1`` is "before the snapshot"), and the log from
``snapshot_lsn`` on. That is how a view's stream is bootstrapped from the batch pipeline's
snapshot and caught up from the log, with no gap and no overlap.

Runs in a Python worker that Spark starts (the driver's planner and the executors'
readers), so everything it needs travels in its options.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from rivulet.spark.streaming.log import segments, shipped_lsn

NAME = "rivulet_log"
BEFORE_SNAPSHOT = -1


@dataclass
class LogPartition(InputPartition):
    """Files to read: rows with ``low < lsn <= high`` (a snapshot file: all, as +1).

    A partition is one Spark task (and a Python worker's round trip): a batch groups its
    segments into at most ``partitions`` of them, however many shipments it covers."""

    paths: list[str]
    low: int
    high: int
    snapshot_lsn: int | None = None  # set for a snapshot file


class LogSource(DataSource):
    """``spark.readStream.format("rivulet_log")`` with options ``log`` (the segments'
    directory), ``table``, ``schema`` (JSON of the output schema), and optionally
    ``snapshot`` (a Parquet file of the table) with ``snapshot_lsn``; ``partitions``: the
    most tasks a batch reads the log with (default 2)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        return StructType.fromJson(json.loads(self.options["schema"]))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return LogReader(dict(self.options), schema)


class LogReader(DataSourceStreamReader):
    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.root = Path(options["log"])
        self.table = options["table"]
        self.file = options["file"]
        self.snapshot = options.get("snapshot") or None
        self.snapshot_lsn = int(options.get("snapshot_lsn", "0"))
        self.max_partitions = max(1, int(options.get("partitions", "2")))
        self.arrow = pa.schema([pa.field(f.name, _arrow(f.dataType)) for f in schema.fields])

    def initialOffset(self) -> dict:
        return {"table": self.table, "lsn": BEFORE_SNAPSHOT if self.snapshot else 0}

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        return {"table": self.table, "lsn": max(shipped_lsn(self.root), self.snapshot_lsn)}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        low, high = int(start["lsn"]), int(end["lsn"])
        out: list[InputPartition] = []
        if low == BEFORE_SNAPSHOT:
            if self.snapshot:
                out.append(LogPartition([self.snapshot], 0, 0, self.snapshot_lsn))
            low = self.snapshot_lsn
        files = [str(s.path / self.file) for s in segments(self.root)
                 if s.last > low and s.first <= high and (s.path / self.file).exists()]
        n = min(len(files), self.max_partitions)
        out.extend(LogPartition(files[i::n], low, high) for i in range(n))
        return out

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, LogPartition)
        for path in partition.paths:
            yield from self._read_file(path, partition)

    def _read_file(self, path: str, partition: LogPartition) -> Iterator[pa.RecordBatch]:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=65536):
            if partition.snapshot_lsn is not None:
                n = batch.num_rows
                columns = [pa.array([partition.snapshot_lsn] * n, pa.int64()),
                           pa.array([1] * n, pa.int64()), *batch.columns]
            else:
                lsn = batch.column(0)
                keep = pc.and_(pc.greater(lsn, partition.low), pc.less_equal(lsn, partition.high))
                batch = batch.filter(keep)
                columns = list(batch.columns)
            yield pa.RecordBatch.from_arrays(
                [c.cast(f.type) if c.type != f.type else c for c, f in zip(columns, self.arrow)],
                schema=self.arrow)

    def commit(self, end: dict) -> None:
        """Nothing to acknowledge: segments are kept for streams started later."""


def _arrow(data_type: Any) -> pa.DataType:
    from pyspark.sql.pandas.types import to_arrow_type

    return to_arrow_type(data_type)
