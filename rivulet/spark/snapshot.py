"""A consistent snapshot of the base tables at a known LSN, as Parquet files Spark reads.

Spark must see the base tables as they were at one point of the write log, so that the
engine can apply exactly the writes after it (bootstrap, recovery) or compare its state
at that point (verify). The engine's storage is one SQLite database in WAL mode
(``<data-dir>/rivulet.db``; each committed batch is a row of ``_rivulet_log``, its LSN
``MAX(lsn)``).

How, and why this way:

1. **Freeze.** SQLite's online backup API (``sqlite3.Connection.backup``) copies the whole
   database in one step, inside one read transaction of the source: the copy is exactly
   the database as of one commit, tables, program and write log alike, and the LSN read
   from the copy is the LSN of that state. A WAL read transaction never blocks the
   engine's writer, and it is short (a page copy, no per-row work), so the WAL can be
   checkpointed again soon.
2. **Export to Parquet** with pyarrow, from the frozen copy, converting each column from
   its SQLite form to its exact rivulet type (DECIMAL, DATE and DATETIME are stored as
   TEXT; see rivulet/storage/sqlite_rows.py) and writing the Arrow type of
   :mod:`rivulet.spark.values`. The schema comes from the program stored in the copy, so
   it is the schema of the snapshot's own rows.

Why not Spark over JDBC on the frozen copy (../shared/notes/sqlite-jdbc-and-mysql-mimic.md):
it works, but needs a SQLite JDBC jar on every executor, a ``customSchema`` to keep
integers, decimals and dates from being silently corrupted, and date parsing options; it
re-reads SQLite for every job. Parquet is typed by construction, read by any Spark
(local or a cluster through shared storage) with no driver, column-pruned, split by row
group, and immutable: one export serves every view a verify or bootstrap computes.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from rivulet.bind import statements as st
from rivulet.errors import RivuletError
from rivulet.migrate.alter import program_tables, replace_conversions
from rivulet.plan.catalog import Catalog
from rivulet.spark.values import NOT_ON_SPARK, arrow_type, fit_decimal, spark_field
from rivulet.storage.sqlite import copy_database
from rivulet.storage.sqlite_rows import convert_all
from rivulet.values.schema import DATE, DATETIME, DECIMAL, TableSchema

DB_FILE = "rivulet.db"
MANIFEST = "snapshot.json"
#: Rows per Parquet row group (and per conversion batch).
BATCH_ROWS = 65536


class SnapshotError(RivuletError):
    """A snapshot could not be taken or read (no database, a value Spark cannot hold)."""


@dataclass(frozen=True)
class Snapshot:
    """Base tables at LSN ``lsn``: one Parquet file per table, and each table's schema."""

    lsn: int
    directory: Path
    tables: Mapping[str, Path]  # table name (as declared) -> Parquet file
    schemas: Mapping[str, TableSchema]
    rows: Mapping[str, int]

    def spark_schema(self, table: str) -> T.StructType:
        return spark_schema(self.schemas[table])

    def dataframes(self, spark: SparkSession | None = None) -> dict[str, DataFrame]:
        """Each table as a DataFrame (columns named and typed as in the table)."""
        if spark is None:
            from rivulet.spark.session import get_session

            spark = get_session()
        return {name: spark.read.schema(self.spark_schema(name)).parquet(str(path))
                for name, path in self.tables.items()}


def spark_schema(schema: TableSchema) -> T.StructType:
    return T.StructType([spark_field(c.name, c) for c in schema.columns])


def arrow_schema(schema: TableSchema) -> pa.Schema:
    return pa.schema([pa.field(c.name, arrow_type(c.kind, c.scale), c.nullable)
                      for c in schema.columns])


# --------------------------------------------------------------------------- taking one


def take_snapshot(source: Any, out_dir: str | os.PathLike[str], *,
                  keep_copy: bool = False) -> Snapshot:
    """Freeze the database of ``source`` and export every base table to ``out_dir``.

    ``source`` is an open :class:`rivulet.Database`, its storage, a data directory or the
    database file itself; the database may be in use (its writes go on meanwhile).
    ``keep_copy`` keeps the frozen SQLite copy (``frozen.db``) next to the Parquet files.
    """
    database = _database_file(source)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    frozen = out / "frozen.db"
    copy_database(database, frozen)
    try:
        conn = sqlite3.connect(frozen)
        try:
            snapshot = _export(conn, out)
        finally:
            conn.close()
    finally:
        if not keep_copy:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{frozen}{suffix}").unlink(missing_ok=True)
    return snapshot


def load_snapshot(directory: str | os.PathLike[str]) -> Snapshot:
    """A snapshot taken earlier into ``directory`` (from its manifest)."""
    root = Path(directory)
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except FileNotFoundError:
        raise SnapshotError(f"no snapshot in {root} (no {MANIFEST})") from None
    if "program" in manifest:  # the statements that made the tables, ALTERs included
        made = program_tables(tuple(s) for s in manifest["program"])
        schemas = {t["name"]: replace_conversions(made[t["name"].lower()][0])
                   for t in manifest["tables"]}
    else:
        schemas = {t["name"]: _table_schema(t["sql"]) for t in manifest["tables"]}
    return Snapshot(
        lsn=manifest["lsn"],
        directory=root,
        tables={t["name"]: root / t["file"] for t in manifest["tables"]},
        schemas=schemas,
        rows={t["name"]: t["rows"] for t in manifest["tables"]},
    )


def _database_file(source: Any) -> Path:
    storage = getattr(source, "storage", source)
    path = storage if isinstance(storage, (str, os.PathLike)) else getattr(storage, "path", None)
    if path is None:
        raise SnapshotError(f"cannot find a rivulet database in {source!r}")
    path = Path(path)
    if path.is_dir():
        path = path / DB_FILE
    if not path.is_file():
        raise SnapshotError(f"no rivulet database at {path}")
    return path


def _export(conn: sqlite3.Connection, out: Path) -> Snapshot:
    lsn = conn.execute("SELECT COALESCE(MAX(lsn), 0) FROM _rivulet_log").fetchone()[0]
    statements = conn.execute(
        "SELECT kind, sql FROM _rivulet_program WHERE kind IN ('table', 'copy', 'alter') "
        "ORDER BY seq").fetchall()
    program = program_tables(statements)
    # Rows a schema change left in a column's old type are converted here, in the copy:
    # Spark reads every column by name.
    convert_all(conn, [schema for schema, _ in program.values()])
    tables: dict[str, Path] = {}
    schemas: dict[str, TableSchema] = {}
    rows: dict[str, int] = {}
    entries = []
    for i, (schema, history) in enumerate(program.values()):
        schema = replace_conversions(schema)
        if any(c.kind in NOT_ON_SPARK for c in schema.columns):
            continue  # Spark cannot hold its values: no plan on Spark reads it
        path = out / f"{i:03d}_{_file_name(schema.name)}.parquet"
        rows[schema.name] = _export_table(conn, schema, path)
        tables[schema.name] = path
        schemas[schema.name] = schema
        entries.append({"name": schema.name, "file": path.name, "sql": history[0],
                        "rows": rows[schema.name]})
    manifest = {"lsn": lsn, "tables": entries, "program": [list(s) for s in statements]}
    tmp = out / f"{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, out / MANIFEST)
    return Snapshot(lsn=lsn, directory=out, tables=tables, schemas=schemas, rows=rows)


def _table_schema(sql: str) -> TableSchema:
    statement = st.bind_text(sql, Catalog())
    if not isinstance(statement, st.CreateTable):
        raise SnapshotError(f"not a CREATE TABLE statement: {sql!r}")
    return statement.schema


def _file_name(table: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", table)[:100]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _export_table(conn: sqlite3.Connection, schema: TableSchema, path: Path) -> int:
    """Write one table to Parquet, batch by batch; returns its row count."""
    columns = ", ".join(_quote(c.name) for c in schema.columns)
    cursor = conn.execute(f"SELECT {columns} FROM {_quote(schema.name)}")
    target = arrow_schema(schema)
    converters = [_from_sqlite(schema, i) for i in range(len(schema.columns))]
    total = 0
    tmp = path.with_suffix(".parquet.tmp")
    with pq.ParquetWriter(tmp, target) as writer:
        while True:
            batch = cursor.fetchmany(BATCH_ROWS)
            if not batch:
                break
            arrays = [pa.array(convert(values), type=field.type)
                      for convert, values, field in zip(converters, zip(*batch), target)]
            writer.write_table(pa.Table.from_arrays(arrays, schema=target))
            total += len(batch)
    os.replace(tmp, path)
    return total


def _from_sqlite(schema: TableSchema, index: int) -> Callable[[Iterable[Any]], list[Any]]:
    """A converter of one column's stored values to rivulet values."""
    column = schema.columns[index]
    where = f"{schema.name}.{column.name}"
    if column.kind == DECIMAL:
        def decimals(values: Iterable[Any]) -> list[Any]:
            return [None if v is None else _exact_decimal(v, column.scale, where) for v in values]
        return decimals
    if column.kind == DATE:
        return lambda values: [None if v is None else dt.date.fromisoformat(v) for v in values]
    if column.kind == DATETIME:
        return lambda values: [None if v is None else dt.datetime.fromisoformat(v) for v in values]
    return list


def _exact_decimal(text: Any, scale: int | None, where: str) -> decimal.Decimal:
    value = decimal.Decimal(str(text))
    try:
        fitted = fit_decimal(value, scale)
    except ValueError as exc:
        raise SnapshotError(f"{where}: {exc}") from None
    if fitted != value:
        raise SnapshotError(f"{where}: {value} has more decimal places than Spark's "
                            f"DECIMAL(38, {fitted.as_tuple().exponent * -1}) column holds")
    return fitted


__all__ = ["Snapshot", "SnapshotError", "arrow_schema", "load_snapshot", "spark_schema",
           "take_snapshot"]
