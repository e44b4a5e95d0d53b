"""Bulk import, the Spark side: read the source and parse what Spark parses exactly.

Spark's readers parse integers (and JSON floats) as they read, where Java's parser reads
exactly the values Python's does; other values stay text, a few converted by checked casts
(``_column``), and a JDBC source is read through a ``customSchema`` derived from the table,
so that no driver mapping can silently change a value. A row Spark cannot parse, or whose
value fails a check, keeps its text (the record, or its values as JSON), for Python to
decide (:mod:`rivulet.pipeline.import_rows`). Every row carries where it comes from: its
source file, file block and position.

Why a module of its own: this is all that runs on Spark, for files and JDBC alike; what
runs in Python afterwards reads only the Parquet files these DataFrames are written to.
"""

from __future__ import annotations

import codecs
import csv
import glob
import os
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet.pipeline.import_report import ImportFailed
from rivulet.values.schema import BYTES, FLOAT, INT, Kind, TableSchema

#: Columns added to the source's: where a row comes from, the text of a record Spark could
#: not parse, and the row's values as JSON where a value failed a check on Spark.
FILE_COL, BLOCK_COL, POS_COL = "_file", "_block", "_pos"
CORRUPT_COL, VALUES_COL = "_corrupt", "_values"


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


def uri_key(path: Path | str) -> str:
    """A file as Spark's ``_metadata.file_path`` names it, normalized for matching."""
    text = str(path)
    if "://" in text or text.startswith("file:"):
        text = urllib.parse.unquote(urllib.parse.urlparse(text).path)
    return os.path.normpath(text)


def redact(url: str) -> str:
    """A JDBC URL without a password in it (for messages)."""
    parts = url.split("?", 1)
    if len(parts) == 1:
        return url
    kept = [kv for kv in parts[1].split("&") if not kv.lower().startswith("password")]
    return parts[0] + ("?" + "&".join(kept) if kept else "")


def jdbc_driver(url: str) -> str | None:
    drivers = {"jdbc:sqlite:": "org.sqlite.JDBC", "jdbc:mariadb:": "org.mariadb.jdbc.Driver",
               "jdbc:mysql:": "org.mariadb.jdbc.Driver",
               "jdbc:postgresql:": "org.postgresql.Driver"}
    return next((d for prefix, d in drivers.items() if url.startswith(prefix)), None)


@dataclass(frozen=True)
class Source:
    """How the source was read, for re-reading a row Spark could not parse (in Python)."""

    kind: str  # csv, json, parquet or jdbc
    columns: tuple[str, ...] = ()  # CSV: the table columns of the fields, in file order
    sep: str = ","
    quote: str = '"'
    null_value: str = "\\N"
    escape: str = '"'


def read_files(spark: SparkSession, schema: TableSchema, paths: list[Path], fmt: str,
                header: bool, options: dict[str, str]) -> tuple[DataFrame, Source]:
    """The source rows, columns named as the table's, plus where each row comes from."""
    names = [str(p) for p in paths]
    if fmt == "csv":
        columns = _csv_columns(schema, paths) if header else list(schema.column_names)
        opts = {"header": str(header).lower(), "mode": "PERMISSIVE",
                "columnNameOfCorruptRecord": CORRUPT_COL, "escape": '"', "enforceSchema": "true",
                "nullValue": "\\N", **options}
        source = Source("csv", tuple(columns), opts.get("sep", opts.get("delimiter", ",")),
                         opts.get("quote", '"'), opts["nullValue"], opts.get("escape", '"'))
        struct = _struct(schema, columns, _CSV_TYPES if _only_ascii_digits(paths) else {})
        df = spark.read.schema(struct).options(**opts).csv(names)
    elif fmt == "json":
        struct = _struct(schema, list(schema.column_names), _JSON_TYPES)
        df = (spark.read.schema(struct)
              .options(mode="PERMISSIVE", columnNameOfCorruptRecord=CORRUPT_COL, **options)
              .json(names))
        source = Source("json")
    else:
        df = spark.read.options(**options).parquet(*names)
        _check_names(schema, df.columns, "the Parquet files")
        df = df.withColumn(CORRUPT_COL, SF.lit(None).cast(T.StringType()))
        source = Source("parquet")
    df = df.select("*", SF.col("_metadata.file_path").alias(FILE_COL),
                   SF.col("_metadata.file_block_start").alias(BLOCK_COL),
                   SF.monotonically_increasing_id().alias(POS_COL))
    return df, source


#: Spark types the readers parse a column of each kind as (text otherwise; ``_column``
#: converts some text with checked casts). A value the reader cannot parse as its type
#: makes the row corrupt, and Python re-reads the record's text (``" 7"`` or ``"12"``
#: for an INT are fine there, as in a normal write). Integers are parsed by the CSV reader
#: itself (Java's ``Long.parseLong`` reads exactly the values ``int()`` reads the same
#: way, and parsing while reading took 14-15 s for 10M rows against 20-28 s as text and a
#: cast) unless the files hold a digit outside ASCII: both read '٣' as 3, which MySQL
#: (and a normal write) refuses. CSV floats stay text: Java's parser also takes ``1.5d``
#: and hex floats.
_CSV_TYPES: dict[Kind, T.DataType] = {INT: T.LongType()}
_JSON_TYPES = {INT: T.LongType(), FLOAT: T.DoubleType()}
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")


def _only_ascii_digits(paths: Sequence[Path]) -> bool:
    """No digit but 0-9 in the files (read at the speed of ``bytes.isascii`` where they
    are ASCII, decoded where they are not)."""
    for path in paths:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        with open(path, "rb") as f:
            while chunk := f.read(1 << 24):
                if chunk.isascii():
                    decoder.reset()
                elif _OTHER_DIGIT.search(decoder.decode(chunk)):
                    return False
    return True


def _struct(schema: TableSchema, columns: Sequence[str],
            types: Mapping[Kind, T.DataType]) -> T.StructType:
    fields = [T.StructField(c, types.get(schema.columns[schema.position(c)].kind, T.StringType()))
              for c in columns]
    return T.StructType(fields + [T.StructField(CORRUPT_COL, T.StringType())])


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


def read_jdbc(spark: SparkSession, schema: TableSchema, conn: dict[str, str],
               label: str) -> tuple[DataFrame, Source]:
    probe = spark.read.format("jdbc").options(**conn).load()
    _check_names(schema, probe.columns, f"the JDBC source {label}")
    custom = ", ".join(f"`{c}` {_jdbc_type(schema.columns[schema.position(c)].kind)}"
                       for c in probe.columns)
    df = spark.read.format("jdbc").options(**conn, customSchema=custom).load()
    df = df.toDF(*[schema.columns[schema.position(c)].name for c in df.columns])
    df = df.select("*", SF.lit(None).cast(T.StringType()).alias(CORRUPT_COL),
                   SF.lit(label).alias(FILE_COL),
                   SF.spark_partition_id().cast("long").alias(BLOCK_COL),
                   SF.monotonically_increasing_id().alias(POS_COL))
    return df, Source("jdbc")


def _jdbc_type(kind: Kind) -> str:
    """Floats as DOUBLE (exact), binary as BINARY, the rest as text: an integer read as a
    number by the SQLite driver turns a text value into 0, silently."""
    return {FLOAT: "DOUBLE", BYTES: "BINARY"}.get(kind, "STRING")


def staging_frame(df: DataFrame, schema: TableSchema) -> tuple[DataFrame, list[bool]]:
    """``v<i>``: table column ``i``'s value (typed where Spark parsed it, else as read);
    ``_values``: the row's values as JSON where a value failed a check on Spark (Python
    then decides). Also which table columns the source lacks (they take their DEFAULT,
    as a dict row missing them would)."""
    added = (CORRUPT_COL, FILE_COL, BLOCK_COL, POS_COL)
    present = {c.lower(): c for c in df.columns if c not in added}
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
    return df.select(*values, SF.col(CORRUPT_COL), flagged.alias(VALUES_COL), FILE_COL,
                     BLOCK_COL, POS_COL), absent


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


__all__ = ["BLOCK_COL", "CORRUPT_COL", "FILE_COL", "POS_COL", "VALUES_COL",
           "Source", "expand_paths", "jdbc_driver", "read_files", "read_jdbc",
           "redact", "reduce_or", "staging_frame", "uri_key"]
