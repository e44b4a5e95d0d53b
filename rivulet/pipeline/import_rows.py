"""Bulk import, the Python side: the staged rows in file order, checked, in batches.

The driver reads the Parquet directory Spark wrote with pyarrow, in file order (segments
sorted by file, block, position: Spark packs file blocks into tasks by size, not by order),
numbers each row within its source (for error messages and so that, of two rows with one
key, the first in the file wins), checks it and hands the good rows to
:meth:`rivulet.engine.database.Database.bulk_insert` in batches (:class:`Batches`). A chunk
of typed rows passes when Arrow kernels find every column within the rules of
``coerce_row``'s fast path (exact type, NOT NULL, range, length), in which case
``coerce_row`` would return each row unchanged; any other chunk goes through ``coerce_row``
row by row, kept text converted exactly as a write of that text.

Why a module of its own: this is all that runs in Python after Spark, and it reads only
the staged files (:mod:`rivulet.pipeline.import_spark` writes what they hold).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from rivulet.errors import SchemaError
from rivulet.pipeline.import_report import ProgressBar, Tally
from rivulet.pipeline.import_spark import (
    BLOCK_COL,
    CORRUPT_COL,
    FILE_COL,
    POS_COL,
    VALUES_COL,
    Source,
    uri_key,
)
from rivulet.values.clock import statement_time
from rivulet.values.schema import BYTES, FLOAT, INT, STR, Row, TableSchema, coerce_row, coerce_value
from rivulet.values.schema import Column as SchemaColumn

#: Rows per batch handed to SQLite (and per progress update).
BATCH_ROWS = 65_536
#: Longest text of a rejected value shown in an error.
SHOWN_CHARS = 60


@dataclass(frozen=True)
class Segment:
    """Rows of one source block inside one staged Parquet part: ``[start, stop)``."""

    source: str
    block: int
    first_pos: int
    part: Path
    start: int
    stop: int


def staged_segments(staging: Path, sources: dict[str, str]) -> list[Segment]:
    """Runs of rows from one source block in each part file, in source order (Spark packs
    blocks into tasks by size, so part order is not source order)."""
    segments: list[Segment] = []
    for part in sorted(staging.glob("*.parquet")):
        where = pq.read_table(part, columns=[FILE_COL, BLOCK_COL, POS_COL])
        n = where.num_rows
        if not n:
            continue
        files, blocks = where.column(FILE_COL), where.column(BLOCK_COL)
        changed = pc.or_(pc.not_equal(files.slice(1), files.slice(0, n - 1)),
                         pc.not_equal(blocks.slice(1), blocks.slice(0, n - 1)))
        starts = [0] + [i + 1 for i in pc.indices_nonzero(changed.combine_chunks()).to_pylist()]
        for start, stop in zip(starts, starts[1:] + [n]):
            file = files[start].as_py()
            name = sources.get(file) or sources.get(uri_key(file), file)
            segments.append(Segment(name, blocks[start].as_py(),
                                    where.column(POS_COL)[start].as_py(), part, start, stop))
    rank = {name: n for n, name in enumerate(sources.values())}
    segments.sort(key=lambda s: (rank.get(s.source, len(rank)), s.block, s.first_pos))
    return segments


class Batches:
    """Checked rows in source order, one batch per chunk of a segment, for
    :meth:`Database.bulk_insert`; remembers the batch's row numbers to report duplicates.

    A chunk whose values Spark typed and which passes the vectorized checks (the rules of
    ``coerce_row``'s fast path: exact type, NOT NULL, integer range, length) goes in as it
    is; any other chunk is checked row by row by ``coerce_row`` itself."""

    def __init__(self, schema: TableSchema, source: Source, segments: list[Segment],
                 absent: list[bool], tally: Tally, bar: ProgressBar) -> None:
        self.schema = schema
        self.source = source
        self.segments = segments
        self.tally = tally
        self.bar = bar
        #: Constant columns of a source that lacks them (their DEFAULT; a DEFAULT
        #: CURRENT_TIMESTAMP the import's one instant, as one INSERT's), by position.
        at = statement_time()
        self.defaults = {i: c.default_at(at) for i, c in enumerate(schema.columns)
                         if absent[i]}
        self.total = sum(s.stop - s.start for s in segments)
        self.current: tuple[str, int, list[int] | None] = ("", 0, None)

    def duplicate(self, position: int, _row: Row, reason: str) -> None:
        name, first, numbers = self.current
        self.tally.reject(name, numbers[position] if numbers is not None else first + position,
                          reason)

    def __iter__(self) -> Iterator[list[Row]]:
        self.bar.writing(self.total)
        counters: dict[str, int] = {}
        cached: tuple[Path, pa.Table] | None = None
        for segment in self.segments:
            if cached is None or cached[0] != segment.part:
                cached = (segment.part, pq.read_table(segment.part, memory_map=True))
            table = cached[1].slice(segment.start, segment.stop - segment.start)
            base = counters.get(segment.source, 0)
            counters[segment.source] = base + table.num_rows
            for offset in range(0, table.num_rows, BATCH_ROWS):
                chunk = table.slice(offset, BATCH_ROWS)
                rows, numbers = self._check(chunk, segment.source, base + offset + 1)
                self.tally.read += chunk.num_rows
                self.bar.advance(chunk.num_rows)
                if rows:
                    self.current = (segment.source, base + offset + 1, numbers)
                    yield rows

    def _check(self, chunk: pa.Table, name: str, first: int) -> tuple[list[Row], list[int] | None]:
        """The rows of ``chunk`` that pass, and their numbers (None: all, in order)."""
        width = len(self.schema.columns)
        columns = [[self.defaults[i]] * chunk.num_rows if i in self.defaults
                   else chunk.column(f"v{i}").to_pylist() for i in range(width)]
        rows = list(zip(*columns)) if width else [()] * chunk.num_rows
        clean = chunk.column(CORRUPT_COL).null_count == chunk.num_rows and \
            chunk.column(VALUES_COL).null_count == chunk.num_rows
        if clean and self._passes(chunk):
            return rows, None
        corrupt = chunk.column(CORRUPT_COL).to_pylist()
        flagged = chunk.column(VALUES_COL).to_pylist()
        good, numbers = [], []
        for i, values in enumerate(rows):
            try:
                if corrupt[i] is not None:
                    values = self._reread(corrupt[i])
                elif flagged[i] is not None:
                    values = self._from_json(flagged[i])
                good.append(coerce_row(self.schema, values))
            except SchemaError as exc:
                self.tally.reject(name, first + i, str(exc))
                continue
            numbers.append(first + i)
        return good, numbers

    def _passes(self, chunk: pa.Table) -> bool:
        """Whether every row of ``chunk`` passes ``coerce_row`` unchanged, decided per
        column with Arrow kernels (the same rules as its generated fast path). A table
        with CHECK constraints or a JSON column has its rows checked one by one (by
        ``coerce_row``)."""
        if self.schema.checks or any(c.json for c in self.schema.columns):
            return False
        for i, col in enumerate(self.schema.columns):
            if i in self.defaults:
                if not _default_ok(col):
                    return False
                continue
            if not _column_passes(col, chunk.column(f"v{i}")):
                return False
        return True

    def _reread(self, text: str) -> tuple:
        """A row Spark's reader could not parse, read again in Python from its text."""
        shown = text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."
        if self.source.kind == "csv":
            src = self.source
            fields = split_record(text.rstrip("\r\n"), src.sep, src.quote, src.escape)
            if len(fields) != len(src.columns):
                raise SchemaError(f"malformed record ({len(fields)} fields, expected "
                                  f"{len(src.columns)}, or bad quoting): {shown!r}")
            return self._by_name({c.lower(): None if (v == "" and not quoted) or
                                  v == src.null_value else v
                                  for c, (v, quoted) in zip(src.columns, fields)})
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            raise SchemaError(f"malformed record (not a JSON object): {shown!r}")
        return self._by_name({k.lower(): v for k, v in record.items()})

    def _from_json(self, text: str) -> tuple:
        record = json.loads(text)
        return self._by_name({k.lower(): v for k, v in record.items()})

    def _by_name(self, values: dict[str, Any]) -> tuple:
        return tuple(self.defaults[i] if i in self.defaults else values.get(c.name.lower())
                     for i, c in enumerate(self.schema.columns))


def split_record(text: str, sep: str, quote: str, escape: str) -> list[tuple[str, bool]]:
    """The fields of one CSV record, each with whether it was quoted.

    Only for the rare record Spark's reader marked corrupt, re-read in Python: the csv
    module (before Python 3.12) cannot tell a quoted empty field (the empty string) from
    an unquoted one (NULL), and Spark's reader does (see ``import_files``)."""
    fields: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    while True:
        if i < n and text[i] == quote:
            i, value = _quoted(text, i + 1, quote, escape)
            end = text.find(sep, i)
            fields.append((value + (text[i:] if end < 0 else text[i:end]), True))
        else:
            end = text.find(sep, i)
            fields.append((text[i:] if end < 0 else text[i:end], False))
        if end < 0:
            return fields
        i = end + len(sep)


def _quoted(text: str, i: int, quote: str, escape: str) -> tuple[int, str]:
    """A quoted field's value from ``i`` (after the opening quote) and where it ends."""
    out: list[str] = []
    while i < len(text):
        c = text[i]
        if c == escape and i + 1 < len(text) and text[i + 1] in (quote, escape) and (
                escape != quote or text[i + 1] == quote):
            out.append(text[i + 1])
            i += 2
        elif c == quote:
            return i + 1, "".join(out)
        else:
            out.append(c)
            i += 1
    return i, "".join(out)


def _default_ok(col: SchemaColumn) -> bool:
    if col.default_now is not None:
        return False  # (the instant: checked row by row, as any other value)
    try:
        return coerce_value(col, col.default) == col.default
    except SchemaError:
        return False


#: Arrow types whose Python values have exactly a kind's type (``coerce_row`` keeps them).
_ARROW_EXACT = {INT: pa.types.is_int64, FLOAT: pa.types.is_float64, STR: pa.types.is_string,
                BYTES: pa.types.is_binary}


def _column_passes(col: SchemaColumn, values: pa.ChunkedArray) -> bool:
    exact = _ARROW_EXACT.get(col.kind)
    if exact is None or not exact(values.type):
        return False
    if not col.nullable and values.null_count:
        return False
    if col.bounds is not None and len(values) > values.null_count:
        low, high = pc.min_max(values).values()
        if low.as_py() < col.bounds[0] or high.as_py() > col.bounds[1]:
            return False
    if col.length is not None and len(values) > values.null_count:
        length = pc.utf8_length(values) if col.kind == STR else pc.binary_length(values)
        if pc.max(length).as_py() > col.length:
            return False
    return True


__all__ = ["BATCH_ROWS", "Batches", "Segment", "split_record", "staged_segments"]
