"""Bulk import into a base table through Spark (``rivulet import``).

Spark reads the source (CSV, Parquet, JSON lines, or a JDBC query) in parallel and does
the per-value parsing; every row is then checked by :func:`rivulet.values.schema.coerce_row`, the
function every normal write goes through, so an import accepts and rejects exactly what
``insert_many`` would (types, integer ranges, NOT NULL, string lengths), with the same
messages; duplicate primary keys (against stored rows, or earlier in the import) are
caught by SQLite itself as the rows go in.

How the work is split, and why:

1. **Spark: parse.** Spark's readers parse integers (and JSON floats) as they read, where
   Java's parser reads exactly the values Python's does; other values stay text, a few
   converted by checked casts (``_column``), and a JDBC source is read through a
   ``customSchema`` derived from the table, so that no driver mapping can silently change a
   value. A row Spark cannot parse, or whose value fails a check, keeps its text (the
   record, or its values as JSON). The rows, with their source file, file block and
   position, go to a Parquet directory next to the database. Spark parallelises the
   parsing, which is the expensive part of reading text, and its CSV/JSON/JDBC readers
   handle quoting, encodings and drivers.
2. **Python: check and insert.** The driver reads that directory with pyarrow, in file
   order (segments sorted by file, block, position: Spark packs file blocks into tasks by
   size, not by order), numbers each row within its source (for error messages and so
   that, of two rows with one key, the first in the file wins), checks it and streams the
   good rows into :meth:`rivulet.engine.database.Database.bulk_insert`: one SQLite transaction,
   one LSN, one dataflow wave. A chunk of typed rows passes when Arrow kernels find every
   column within the rules of ``coerce_row``'s fast path (exact type, NOT NULL, range,
   length), in which case ``coerce_row`` would return each row unchanged; any other chunk
   goes through ``coerce_row`` row by row, kept text converted exactly as a write of that
   text. A failure anywhere, or ``on_error="fail"`` and one bad row, rolls it all back: a
   table is never left half imported.

Why not validate on Spark alone: Spark's casts are not MySQL's (``CAST('1.5' AS BIGINT)``
is 1 with ANSI off, an error with it on), and a second implementation of the rules would
drift from the one the engine enforces. Only forms that both agree on are parsed there;
tests/test_spark_import.py checks the import against ``insert_many`` row by row.

Why Parquet between the two instead of ``toLocalIterator``: it streams in bounded memory
with pyarrow at several million rows per second, leaves Spark's tasks free to finish in
parallel, and lets the driver read the segments in file order.
"""

from __future__ import annotations

import csv
import functools
import glob
import json
import os
import shutil
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as SF
from pyspark.sql import types as T
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

from rivulet.errors import RivuletError, SchemaError
from rivulet.values.schema import (
    BYTES,
    FLOAT,
    INT,
    STR,
    Kind,
    Row,
    TableSchema,
    coerce_row,
    coerce_value,
)
from rivulet.values.schema import Column as SchemaColumn

if TYPE_CHECKING:
    from rivulet.engine.database import Database

FORMATS = ("csv", "parquet", "json")
ON_ERROR = ("reject", "fail")
#: Rows per batch handed to SQLite (and per progress update).
BATCH_ROWS = 65_536
#: Rejected rows kept as a sample in the result.
SAMPLE_ERRORS = 20
#: Longest text of a rejected value shown in an error.
SHOWN_CHARS = 60

_FILE, _BLOCK, _POS, _CORRUPT, _VALUES = "_file", "_block", "_pos", "_corrupt", "_values"

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


# --------------------------------------------------------------------------- entry points


def import_files(db: Database, table: str,
                 files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
                 *, format: str = "csv", header: bool = True, on_error: str = "reject",
                 progress: bool = True, options: Mapping[str, str] | None = None,
                 spark: SparkSession | None = None,
                 max_errors: int = SAMPLE_ERRORS) -> ImportResult:
    """Import CSV, Parquet or JSON-lines files (paths, directories or globs) into ``table``.

    CSV: with ``header`` the first line names the columns (any order, a subset: missing
    columns take their DEFAULT), else the columns are the table's, in order; an unquoted
    empty field and ``\\N`` are NULL, a quoted empty field (``""``) the empty string;
    quotes are doubled inside quoted fields (RFC 4180). ``options`` go to Spark's reader
    (e.g. ``{"sep": ";"}``, ``{"nullValue": "NULL"}``, ``{"multiLine": "true"}`` for
    newlines inside quoted fields).
    Parquet and JSON: columns by name (a column the Parquet files lack takes its DEFAULT;
    in JSON a missing field is NULL: Spark's JSON reader does not tell it from ``null``;
    fields the table lacks are ignored). Bad rows are skipped and reported
    (``on_error="reject"``), or the first one fails the whole import (``"fail"``).
    """
    if format not in FORMATS:
        raise ImportFailed(f"unknown import format {format!r} (one of {', '.join(FORMATS)})")
    paths = expand_paths(files)
    schema = _table(db, table)
    session = spark or _session()
    sources = {_uri_key(p): str(p) for p in paths}
    reader = functools.partial(_read_files, session, schema, paths, format, header,
                               dict(options or {}))
    return _run_import(db, schema, reader, sources, on_error=on_error, progress=progress,
                       max_errors=max_errors)


def import_jdbc(db: Database, table: str, url: str, *, dbtable: str | None = None,
                query: str | None = None, user: str | None = None, password: str | None = None,
                driver: str | None = None, on_error: str = "reject", progress: bool = True,
                options: Mapping[str, str] | None = None, spark: SparkSession | None = None,
                max_errors: int = SAMPLE_ERRORS) -> ImportResult:
    """Import the rows of a JDBC table (``dbtable``) or query into ``table``.

    Source columns are matched to the table's by name; missing ones take their DEFAULT.
    Values are read through a ``customSchema`` (floats as DOUBLE, binary as BINARY, the
    rest as text, checked like CSV text): a driver's default mapping silently truncates
    integers and dates (../shared/notes/sqlite-jdbc-and-mysql-mimic.md). The read is one
    partition (one connection, one snapshot) unless ``options`` ask for more.
    """
    if (dbtable is None) == (query is None):
        raise ImportFailed("import_jdbc takes exactly one of dbtable= or query=")
    schema = _table(db, table)
    session = spark or _session()
    label = f"{_redact(url)} ({dbtable or 'query'})"
    conn = {"url": url, **({"dbtable": dbtable} if dbtable else {"query": query or ""})}
    conn.update({k: v for k, v in (("user", user), ("password", password),
                                   ("driver", driver or _jdbc_driver(url))) if v})
    if url.startswith(("jdbc:mariadb:", "jdbc:mysql:")):
        # Spark quotes column names with double quotes unless it knows the URL as MySQL's:
        # without ANSI_QUOTES, MariaDB reads "name" as a string and every row would hold
        # the column's name instead of its value.
        conn["sessionInitStatement"] = "SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')"
    conn.update(options or {})
    reader = functools.partial(_read_jdbc, session, schema, conn, label)
    return _run_import(db, schema, reader, {label: label}, on_error=on_error,
                       progress=progress, max_errors=max_errors)


def _session() -> SparkSession:
    from rivulet.spark.session import get_session

    return get_session()


def _table(db: Database, table: str) -> TableSchema:
    try:
        return db.catalog.require_table(table)
    except RivuletError as exc:
        raise ImportFailed(str(exc)) from None


def expand_paths(files: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Files in the order given: a directory's files (not hidden) and a glob's matches
    sorted by name. A path that names nothing is an error."""
    items = [files] if isinstance(files, (str, os.PathLike)) else list(files)
    out: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            out.extend(sorted(p for p in path.iterdir() if p.is_file()
                              and not p.name.startswith((".", "_"))))
        elif path.is_file():
            out.append(path)
        elif glob.has_magic(str(item)):
            out.extend(sorted(Path(p) for p in glob.glob(str(item)) if Path(p).is_file()))
        else:
            raise ImportFailed(f"no such file: {item}")
    if not out:
        raise ImportFailed(f"no files to import in {', '.join(map(str, items))}")
    return [p.resolve() for p in out]


def _uri_key(path: Path | str) -> str:
    """A file as Spark's ``_metadata.file_path`` names it, normalized for matching."""
    text = str(path)
    if "://" in text or text.startswith("file:"):
        text = urllib.parse.unquote(urllib.parse.urlparse(text).path)
    return os.path.normpath(text)


def _redact(url: str) -> str:
    """A JDBC URL without a password in it (for messages)."""
    parts = url.split("?", 1)
    if len(parts) == 1:
        return url
    kept = [kv for kv in parts[1].split("&") if not kv.lower().startswith("password")]
    return parts[0] + ("?" + "&".join(kept) if kept else "")


def _jdbc_driver(url: str) -> str | None:
    drivers = {"jdbc:sqlite:": "org.sqlite.JDBC", "jdbc:mariadb:": "org.mariadb.jdbc.Driver",
               "jdbc:mysql:": "org.mariadb.jdbc.Driver",
               "jdbc:postgresql:": "org.postgresql.Driver"}
    return next((d for prefix, d in drivers.items() if url.startswith(prefix)), None)


# --------------------------------------------------------------------------- reading on Spark


@dataclass(frozen=True)
class _Source:
    """How the source was read, for re-reading a row Spark could not parse (in Python)."""

    kind: str  # csv, json, parquet or jdbc
    columns: tuple[str, ...] = ()  # CSV: the table columns of the fields, in file order
    sep: str = ","
    quote: str = '"'
    null_value: str = "\\N"
    escape: str = '"'


def _read_files(spark: SparkSession, schema: TableSchema, paths: list[Path], fmt: str,
                header: bool, options: dict[str, str]) -> tuple[DataFrame, _Source]:
    """The source rows, columns named as the table's, plus where each row comes from."""
    names = [str(p) for p in paths]
    if fmt == "csv":
        columns = _csv_columns(schema, paths) if header else list(schema.column_names)
        opts = {"header": str(header).lower(), "mode": "PERMISSIVE",
                "columnNameOfCorruptRecord": _CORRUPT, "escape": '"', "enforceSchema": "true",
                "nullValue": "\\N", **options}
        source = _Source("csv", tuple(columns), opts.get("sep", opts.get("delimiter", ",")),
                         opts.get("quote", '"'), opts["nullValue"], opts.get("escape", '"'))
        struct = _struct(schema, columns, _CSV_TYPES)
        df = spark.read.schema(struct).options(**opts).csv(names)
    elif fmt == "json":
        struct = _struct(schema, list(schema.column_names), _JSON_TYPES)
        df = (spark.read.schema(struct)
              .options(mode="PERMISSIVE", columnNameOfCorruptRecord=_CORRUPT, **options)
              .json(names))
        source = _Source("json")
    else:
        df = spark.read.options(**options).parquet(*names)
        _check_names(schema, df.columns, "the Parquet files")
        df = df.withColumn(_CORRUPT, SF.lit(None).cast(T.StringType()))
        source = _Source("parquet")
    df = df.select("*", SF.col("_metadata.file_path").alias(_FILE),
                   SF.col("_metadata.file_block_start").alias(_BLOCK),
                   SF.monotonically_increasing_id().alias(_POS))
    return df, source


#: Spark types the readers parse a column of each kind as (text otherwise; ``_column``
#: converts some text with checked casts). A value the reader cannot parse as its type
#: makes the row corrupt, and Python re-reads the record's text (``" 7"`` or ``"12"``
#: for an INT are fine there, as in a normal write). Integers are parsed by the CSV reader
#: itself (Java's ``Long.parseLong`` reads exactly the values ``int()`` reads the same
#: way, and parsing while reading took 14-15 s for 10M rows against 20-28 s as text and a
#: cast); CSV floats stay text: Java's parser also takes ``1.5d`` and hex floats.
_CSV_TYPES: dict[Kind, T.DataType] = {INT: T.LongType()}
_JSON_TYPES = {INT: T.LongType(), FLOAT: T.DoubleType()}


def _struct(schema: TableSchema, columns: Sequence[str],
            types: Mapping[Kind, T.DataType]) -> T.StructType:
    fields = [T.StructField(c, types.get(schema.columns[schema.position(c)].kind, T.StringType()))
              for c in columns]
    return T.StructType(fields + [T.StructField(_CORRUPT, T.StringType())])


def _csv_columns(schema: TableSchema, paths: list[Path]) -> list[str]:
    """The header of the CSV files (all must agree), checked against the table."""
    headers = {}
    for path in paths:
        with open(path, newline="", encoding="utf-8-sig") as f:
            headers[path] = next(csv.reader(f), [])
    first = next(iter(headers.values()))
    for path, names in headers.items():
        if [n.strip().lower() for n in names] != [n.strip().lower() for n in first]:
            raise ImportFailed(f"{path}: its header ({', '.join(names)}) differs from "
                               f"{paths[0]}'s ({', '.join(first)})")
    columns = [n.strip() for n in first]
    _check_names(schema, columns, f"the CSV header of {paths[0]}")
    return [schema.columns[schema.position(n)].name for n in columns]


def _check_names(schema: TableSchema, names: Sequence[str], where: str) -> None:
    seen: set[str] = set()
    for n in names:
        if n.lower() in seen:
            raise ImportFailed(f"{where} names column {n!r} twice")
        seen.add(n.lower())
        if not schema.has_column(n):
            raise ImportFailed(f"{where} names column {n!r}, which table {schema.name!r} "
                               f"does not have (columns: {', '.join(schema.column_names)})")


def _read_jdbc(spark: SparkSession, schema: TableSchema, conn: dict[str, str],
               label: str) -> tuple[DataFrame, _Source]:
    probe = spark.read.format("jdbc").options(**conn).load()
    _check_names(schema, probe.columns, f"the JDBC source {label}")
    custom = ", ".join(f"`{c}` {_jdbc_type(schema.columns[schema.position(c)].kind)}"
                       for c in probe.columns)
    df = spark.read.format("jdbc").options(**conn, customSchema=custom).load()
    df = df.toDF(*[schema.columns[schema.position(c)].name for c in df.columns])
    df = df.select("*", SF.lit(None).cast(T.StringType()).alias(_CORRUPT),
                   SF.lit(label).alias(_FILE), SF.spark_partition_id().cast("long").alias(_BLOCK),
                   SF.monotonically_increasing_id().alias(_POS))
    return df, _Source("jdbc")


def _jdbc_type(kind: Kind) -> str:
    """Floats as DOUBLE (exact), binary as BINARY, the rest as text: an integer read as a
    number by the SQLite driver turns a text value into 0, silently."""
    return {FLOAT: "DOUBLE", BYTES: "BINARY"}.get(kind, "STRING")


def _prepared(df: DataFrame, schema: TableSchema) -> tuple[DataFrame, list[bool]]:
    """``v<i>``: table column ``i``'s value (typed where Spark parsed it, else as read);
    ``_values``: the row's values as JSON where a value failed a check on Spark (Python
    then decides). Also which table columns the source lacks (they take their DEFAULT,
    as a dict row missing them would)."""
    present = {c.lower(): c for c in df.columns if c not in (_CORRUPT, _FILE, _BLOCK, _POS)}
    absent = [c.name.lower() not in present for c in schema.columns]
    values: list[Column] = []
    bad: list[Column] = []
    for i, col in enumerate(schema.columns):
        name = present.get(col.name.lower())
        if name is None:
            values.append(SF.lit(None).cast(T.StringType()).alias(f"v{i}"))
            continue
        value, failed = _column(SF.col(f"`{name}`"), df.schema[name].dataType, col.kind)
        values.append(value.alias(f"v{i}"))
        if failed is not None:
            bad.append(failed)
    raw = SF.to_json(SF.struct(*[SF.col(f"`{n}`") for n in present.values()]))
    flagged = SF.lit(None).cast(T.StringType())
    if bad:
        flagged = SF.when(reduce_or(bad), raw)
    return df.select(*values, SF.col(_CORRUPT), flagged.alias(_VALUES), _FILE, _BLOCK, _POS), absent


def reduce_or(columns: list[Column]) -> Column:
    out = columns[0]
    for c in columns[1:]:
        out = out | c
    return out


#: Characters of a float literal both Java's and Python's parsers read the same way.
_FLOAT_CHARS = "0123456789.eE+-"


def _column(c: Column, dtype: T.DataType, kind: str) -> tuple[Column, Column | None]:
    """(value, failed-a-check?) of one source column for a table column of ``kind``."""
    text = isinstance(dtype, T.StringType)
    if kind == FLOAT and text:
        parsed = SF.when(SF.translate(c, _FLOAT_CHARS, "") == "", c.cast(T.DoubleType()))
        return parsed, c.isNotNull() & parsed.isNull()
    if kind == INT and text:  # the text must be the number's own form (no "+1", "007")
        parsed = c.cast(T.LongType())
        return parsed, c.isNotNull() & (parsed.isNull() | (parsed.cast(T.StringType()) != c))
    if kind == BYTES and text:
        return SF.encode(c, "UTF-8"), None
    if isinstance(dtype, (T.IntegerType, T.ShortType, T.ByteType, T.BooleanType)):
        return c.cast(T.LongType()), None  # a normal write takes True as 1 too
    if isinstance(dtype, T.FloatType):
        return c.cast(T.DoubleType()), None
    return c, None


# --------------------------------------------------------------------------- the import


@dataclass
class _Tally:
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


def _run_import(db: Database, schema: TableSchema, reader: Callable[[], tuple[DataFrame, _Source]],
                sources: dict[str, str], *, on_error: str, progress: bool,
                max_errors: int) -> ImportResult:
    if on_error not in ON_ERROR:
        raise ImportFailed(f"on_error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
    start = time.perf_counter()
    staging = Path(db.path) / f".import-{uuid.uuid4().hex}"
    tally = _Tally(on_error, max_errors)
    try:
        with _Progress(progress, schema.name) as bar:
            try:
                df, source = reader()
                prepared, absent = _prepared(df, schema)
                prepared.write.parquet(str(staging), compression="none")
            except ImportFailed:
                raise
            except Exception as exc:  # the source could not be read at all
                raise ImportFailed(f"cannot read the import source: {_first_line(exc)}") from None
            spark_done = time.perf_counter()
            batches = _Batches(schema, source, _segments(staging, sources), absent, tally, bar)
            lsn, imported = db.bulk_insert(schema.name, batches, duplicate=batches.duplicate,
                                           expected_rows=batches.total)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    end = time.perf_counter()
    order = {name: n for n, name in enumerate(sources.values())}
    errors = sorted(tally.errors, key=lambda e: (order.get(e.source, len(order)), e.row))
    return ImportResult(schema.name, tally.read, imported, tally.rejected, tuple(errors),
                        lsn, spark_done - start, end - spark_done, end - start)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@dataclass(frozen=True)
class _Segment:
    """Rows of one source block inside one staged Parquet part: ``[start, stop)``."""

    source: str
    block: int
    first_pos: int
    part: Path
    start: int
    stop: int


def _segments(staging: Path, sources: dict[str, str]) -> list[_Segment]:
    """Runs of rows from one source block in each part file, in source order (Spark packs
    blocks into tasks by size, so part order is not source order)."""
    segments: list[_Segment] = []
    for part in sorted(staging.glob("*.parquet")):
        where = pq.read_table(part, columns=[_FILE, _BLOCK, _POS])
        n = where.num_rows
        if not n:
            continue
        files, blocks = where.column(_FILE), where.column(_BLOCK)
        changed = pc.or_(pc.not_equal(files.slice(1), files.slice(0, n - 1)),
                         pc.not_equal(blocks.slice(1), blocks.slice(0, n - 1)))
        starts = [0] + [i + 1 for i in pc.indices_nonzero(changed.combine_chunks()).to_pylist()]
        for start, stop in zip(starts, starts[1:] + [n]):
            file = files[start].as_py()
            name = sources.get(file) or sources.get(_uri_key(file), file)
            segments.append(_Segment(name, blocks[start].as_py(), where.column(_POS)[start].as_py(),
                                     part, start, stop))
    rank = {name: n for n, name in enumerate(sources.values())}
    segments.sort(key=lambda s: (rank.get(s.source, len(rank)), s.block, s.first_pos))
    return segments


class _Batches:
    """Checked rows in source order, one batch per chunk of a segment, for
    :meth:`Database.bulk_insert`; remembers the batch's row numbers to report duplicates.

    A chunk whose values Spark typed and which passes the vectorized checks (the rules of
    ``coerce_row``'s fast path: exact type, NOT NULL, integer range, length) goes in as it
    is; any other chunk is checked row by row by ``coerce_row`` itself."""

    def __init__(self, schema: TableSchema, source: _Source, segments: list[_Segment],
                 absent: list[bool], tally: _Tally, bar: _Progress) -> None:
        self.schema = schema
        self.source = source
        self.segments = segments
        self.tally = tally
        self.bar = bar
        #: Constant columns of a source that lacks them (their DEFAULT), by position.
        self.defaults = {i: c.default for i, c in enumerate(schema.columns) if absent[i]}
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
        clean = chunk.column(_CORRUPT).null_count == chunk.num_rows and \
            chunk.column(_VALUES).null_count == chunk.num_rows
        if clean and self._passes(chunk):
            return rows, None
        corrupt = chunk.column(_CORRUPT).to_pylist()
        flagged = chunk.column(_VALUES).to_pylist()
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
        column with Arrow kernels (the same rules as its generated fast path)."""
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


# --------------------------------------------------------------------------- progress


class _Progress:
    """A rich progress bar on stderr (rows and rows/s), or nothing."""

    def __init__(self, enabled: bool, table: str) -> None:
        self.enabled = enabled
        self.table = table
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
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


__all__ = ["ImportFailed", "ImportResult", "RejectedRow", "expand_paths", "import_files",
           "import_jdbc"]
