"""What an import reports: its result, the rows it rejected, and its progress bar.

Why a module of its own: every part of an import (reading on Spark, checking in Python,
the run that drives both: :mod:`rivulet.pipeline.importer`) raises :class:`ImportFailed`
or rejects rows into the :class:`Tally`, and the progress bar follows both phases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from rivulet.errors import RivuletError

#: Rejected rows kept as a sample in the result.
SAMPLE_ERRORS = 20


class ImportFailed(RivuletError):
    """An import changed nothing: a bad row with ``on_error="fail"``, or a source error."""


@dataclass(frozen=True)
class RejectedRow:
    """One row that was not imported: where it is and why."""

    source: str  # a file, or the JDBC table/query
    row: int  # 1-based number of the data row in its source (a CSV header not counted)
    reason: str

    def __str__(self) -> str:
        return f"{self.source}, row {self.row}: {self.reason}"


@dataclass(frozen=True)
class ImportResult:
    """What an import did. ``errors`` is a sample (the first rows rejected)."""

    table: str
    rows_read: int
    rows_imported: int
    rows_rejected: int
    errors: tuple[RejectedRow, ...]
    lsn: int | None
    spark_seconds: float  # reading and parsing on Spark
    write_seconds: float  # checking and inserting into SQLite
    seconds: float  # the whole import

    @property
    def rows_per_second(self) -> float:
        return self.rows_read / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        lines = [f"imported {self.rows_imported:,} of {self.rows_read:,} rows into "
                 f"{self.table} in {self.seconds:.1f} s ({self.rows_per_second:,.0f} rows/s; "
                 f"Spark {self.spark_seconds:.1f} s, SQLite {self.write_seconds:.1f} s)"
                 + (f", LSN {self.lsn}" if self.lsn is not None else "")]
        if self.rows_rejected:
            lines.append(f"rejected {self.rows_rejected:,} rows; the first "
                         f"{len(self.errors)}:")
            lines.extend(f"  {e}" for e in self.errors)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "rows_read": self.rows_read,
                "rows_imported": self.rows_imported, "rows_rejected": self.rows_rejected,
                "errors": [{"source": e.source, "row": e.row, "reason": e.reason}
                           for e in self.errors],
                "lsn": self.lsn, "spark_seconds": self.spark_seconds,
                "write_seconds": self.write_seconds, "seconds": self.seconds,
                "rows_per_second": self.rows_per_second}


@dataclass
class Tally:
    """Counts and the sample of rejected rows."""

    on_error: str
    max_errors: int
    read: int = 0
    rejected: int = 0
    errors: list[RejectedRow] = field(default_factory=list)

    def reject(self, source: str, row: int, reason: str) -> None:
        error = RejectedRow(source, row, reason)
        if self.on_error == "fail":
            raise ImportFailed(f"nothing imported: {error}")
        self.rejected += 1
        if len(self.errors) < self.max_errors:
            self.errors.append(error)


class ProgressBar:
    """A rich progress bar on stderr (rows and rows/s), or nothing."""

    def __init__(self, enabled: bool, table: str) -> None:
        self.enabled = enabled
        self.table = table
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> ProgressBar:
        if self.enabled:
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                      BarColumn(), MofNCompleteColumn(), _RowsPerSecond(),
                                      TimeElapsedColumn(), console=Console(stderr=True))
            self._progress.start()
            self._task = self._progress.add_task(f"{self.table}: reading on Spark", total=None)
        return self

    def writing(self, total: int) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description=f"{self.table}: checking and writing",
                                  total=total, completed=0)
            self._progress.reset(self._task, total=total)

    def advance(self, rows: int) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, rows)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()


class _RowsPerSecond(ProgressColumn):
    """Rows per second since the phase began (rich's own speed is a short moving window,
    empty until several updates came)."""

    def render(self, task: Any) -> Text:
        elapsed = task.finished_time if task.finished else task.elapsed
        if not task.completed or not elapsed:
            return Text("")
        return Text(f"{task.completed / elapsed:,.0f} rows/s")


__all__ = ["SAMPLE_ERRORS", "ImportFailed", "ImportResult", "ProgressBar", "RejectedRow", "Tally"]
