"""Bulk import into a base table through Spark (``rivulet import``).

Spark reads the source (CSV, Parquet, JSON lines, or a JDBC query) in parallel and does
the per-value parsing; every row is then checked by :func:`rivulet.values.schema.coerce_row`, the
function every normal write goes through, so an import accepts and rejects exactly what
``insert_many`` would (types, integer ranges, NOT NULL, string lengths), with the same
messages; duplicate primary keys (against stored rows, or earlier in the import) are
caught by SQLite itself as the rows go in.

How the work is split, and why:

1. **Spark: parse** (:mod:`rivulet.pipeline.import_spark`). Spark's readers parse integers
   (and JSON floats) as they read, where Java's parser reads exactly the values Python's
   does; other values stay text, a few converted by checked casts
   (``import_spark._column``), and a JDBC source is read through a ``customSchema`` derived
   from the table, so that no driver mapping can silently change a value. A row Spark cannot
   parse, or whose value fails a check, keeps its text (the record, or its values as JSON).
   The rows, with their source file, file block and position, go to a Parquet directory next
   to the database. Spark parallelises the parsing, which is the expensive part of reading
   text, and its CSV/JSON/JDBC readers handle quoting, encodings and drivers.
2. **Python: check and insert** (:mod:`rivulet.pipeline.import_rows`). The driver reads that
   directory with pyarrow, in file order (segments sorted by file, block, position: Spark
   packs file blocks into tasks by size, not by order), numbers each row within its source
   (for error messages and so that, of two rows with one key, the first in the file wins),
   checks it and streams the good rows into
   :meth:`rivulet.engine.database.Database.bulk_insert`: one SQLite transaction, one LSN,
   one dataflow wave. A chunk of typed rows passes when Arrow kernels find every column
   within the rules of ``coerce_row``'s fast path (exact type, NOT NULL, range, length), in
   which case ``coerce_row`` would return each row unchanged; any other chunk goes through
   ``coerce_row`` row by row, kept text converted exactly as a write of that text. A failure
   anywhere, or ``on_error="fail"`` and one bad row, rolls it all back: a table is never
   left half imported.

Why not validate on Spark alone: Spark's casts are not MySQL's (``CAST('1.5' AS BIGINT)``
is 1 with ANSI off, an error with it on), and a second implementation of the rules would
drift from the one the engine enforces. Only forms that both agree on are parsed there;
tests/test_spark_import.py checks the import against ``insert_many`` row by row.

Why Parquet between the two instead of ``toLocalIterator``: it streams in bounded memory
with pyarrow at several million rows per second, leaves Spark's tasks free to finish in
parallel, and lets the driver read the segments in file order.

This module holds the entry points (:func:`import_files`, :func:`import_jdbc`) and the run
that drives both sides; what an import reports (its result, rejected rows, the progress
bar) is :mod:`rivulet.pipeline.import_report`.
"""

from __future__ import annotations

import functools
import os
import shutil
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, SparkSession

from rivulet.errors import RivuletError
from rivulet.pipeline.import_report import (
    SAMPLE_ERRORS,
    ImportFailed,
    ImportResult,
    ProgressBar,
    Tally,
)
from rivulet.pipeline.import_rows import Batches, staged_segments
from rivulet.pipeline.import_spark import (
    Source,
    expand_paths,
    jdbc_driver,
    read_files,
    read_jdbc,
    redact,
    staging_frame,
    uri_key,
)
from rivulet.values.schema import TableSchema

if TYPE_CHECKING:
    from rivulet.engine.database import Database

FORMATS = ("csv", "parquet", "json")
ON_ERROR = ("reject", "fail")


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
    sources = {uri_key(p): str(p) for p in paths}
    reader = functools.partial(read_files, session, schema, paths, format, header,
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
    label = f"{redact(url)} ({dbtable or 'query'})"
    conn = {"url": url, **({"dbtable": dbtable} if dbtable else {"query": query or ""})}
    conn.update({k: v for k, v in (("user", user), ("password", password),
                                   ("driver", driver or jdbc_driver(url))) if v})
    if url.startswith(("jdbc:mariadb:", "jdbc:mysql:")):
        # Spark quotes column names with double quotes unless it knows the URL as MySQL's:
        # without ANSI_QUOTES, MariaDB reads "name" as a string and every row would hold
        # the column's name instead of its value.
        conn["sessionInitStatement"] = "SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')"
    conn.update(options or {})
    reader = functools.partial(read_jdbc, session, schema, conn, label)
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


def _run_import(db: Database, schema: TableSchema, reader: Callable[[], tuple[DataFrame, Source]],
                sources: dict[str, str], *, on_error: str, progress: bool,
                max_errors: int) -> ImportResult:
    if on_error not in ON_ERROR:
        raise ImportFailed(f"on_error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
    start = time.perf_counter()
    staging = Path(db.path) / f".import-{uuid.uuid4().hex}"
    tally = Tally(on_error, max_errors)
    try:
        with ProgressBar(progress, schema.name) as bar:
            try:
                df, source = reader()
                prepared, absent = staging_frame(df, schema)
                prepared.write.parquet(str(staging), compression="none")
            except ImportFailed:
                raise
            except Exception as exc:  # the source could not be read at all
                raise ImportFailed(f"cannot read the import source: {_first_line(exc)}") from None
            spark_done = time.perf_counter()
            batches = Batches(schema, source, staged_segments(staging, sources), absent, tally, bar)
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


__all__ = ["import_files", "import_jdbc"]
