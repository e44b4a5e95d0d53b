"""``rivulet verify``: recompute views on Spark and diff them with what the engine serves.

The engine and Spark execute the same IR (rivulet/spark/compile.py); verify is the check
that they agree on live data, key by key:

1. **One point in time.** Under the database's migration lock (no commit, no propagation,
   every acknowledged write applied) the database file is copied (SQLite's backup API)
   *and* the engine's answers are read from reader state, so both sides are the state at
   one LSN. The lock is held only for the page copy and the reads of reader state; the
   copy's export to Parquet (rivulet/spark/snapshot.py) and Spark run after it.
2. **What is compared.** For each view, the keys its reader holds (``View.held_keys``):
   every key of a full view, the filled holes of a partial one (a partial view is checked
   on the keys it serves; the rest it would compute when read). A keyed view's answer per
   key is what ``lookup`` returns (ordered, cut to its LIMIT, default rows included),
   against Spark's answer for the same key (``compile.finish`` partitioned by the key, or
   ``compute_lookups`` where an implicit group answers keys without rows). A range view
   compares the rows held under each key, and so does an IN view whose reader is keyed by
   its equality values alone (under each of those). A full view also reports keys Spark has and
   the engine lacks.
3. **How rows compare.** As multisets per key (rows tied under ORDER BY may come in any
   order): numbers within a relative 1e-9 (sums of floats in another order), decimals by
   value, booleans as 0/1.

The report (:class:`VerifyReport`) lists each mismatching key with both answers, turns
into a dict and back (the HTTP API's ``POST /verify`` returns ``to_dict()``), and prints
the same way locally or remotely (:func:`format_report`).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet.errors import ProgramError
from rivulet.plan import ir
from rivulet.spark.compile import (
    PUSHDOWN_KEYS,
    _collect,
    _key_filter,
    compile_plan,
    compute_lookups,
    finish,
    local_frame,
    name,
    names,
    old_versions,
)
from rivulet.spark.snapshot import take_snapshot
from rivulet.state.holes import MISSING
from rivulet.state.reader import RangeReader
from rivulet.storage.sqlite import copy_database

if TYPE_CHECKING:
    from rivulet.engine.database import Database
    from rivulet.engine.views import View

Row = tuple
#: Mismatching keys listed per view (the counts cover all).
SAMPLE_KEYS = 20
#: Rows shown per side of a mismatch.
SAMPLE_ROWS = 10
REL_TOL = 1e-9


@dataclass(frozen=True)
class Mismatch:
    """One key whose answers differ: ``kind`` is ``differs``, ``missing`` (Spark has rows
    the engine lacks) or ``extra`` (the engine holds rows Spark does not compute)."""

    key: Any
    kind: str
    engine: tuple[Row, ...]
    spark: tuple[Row, ...]


@dataclass(frozen=True)
class ViewCheck:
    view: str
    partial: bool
    keys_checked: int
    keys_differing: int
    keys_missing: int
    keys_extra: int
    mismatches: tuple[Mismatch, ...]  # a sample
    seconds: float

    @property
    def ok(self) -> bool:
        return not (self.keys_differing or self.keys_missing or self.keys_extra)


@dataclass(frozen=True)
class VerifyReport:
    lsn: int
    views: tuple[ViewCheck, ...]
    snapshot_seconds: float
    seconds: float

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.views)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "lsn": self.lsn, "snapshot_seconds": self.snapshot_seconds,
                "seconds": self.seconds, "views": [_view_dict(v) for v in self.views]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerifyReport:
        return cls(lsn=data["lsn"], snapshot_seconds=data["snapshot_seconds"],
                   seconds=data["seconds"], views=tuple(_view_from(v) for v in data["views"]))


def _view_dict(v: ViewCheck) -> dict[str, Any]:
    return {"view": v.view, "ok": v.ok, "partial": v.partial, "keys_checked": v.keys_checked,
            "keys_differing": v.keys_differing, "keys_missing": v.keys_missing,
            "keys_extra": v.keys_extra, "seconds": v.seconds,
            "mismatches": [{"key": _jsonable(m.key), "kind": m.kind,
                            "engine": [_jsonable(r) for r in m.engine],
                            "spark": [_jsonable(r) for r in m.spark]} for m in v.mismatches]}


def _view_from(d: dict[str, Any]) -> ViewCheck:
    mismatches = tuple(Mismatch(_tuple(m["key"]), m["kind"], tuple(map(_tuple, m["engine"])),
                                tuple(map(_tuple, m["spark"]))) for m in d["mismatches"])
    return ViewCheck(d["view"], d["partial"], d["keys_checked"], d["keys_differing"],
                     d["keys_missing"], d["keys_extra"], mismatches, d["seconds"])


def _jsonable(value: Any) -> Any:
    """A value as JSON holds it (tuples as lists; dates, decimals and bytes as text)."""
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def _tuple(value: Any) -> Any:
    return tuple(_tuple(v) for v in value) if isinstance(value, list) else value


def format_report(report: VerifyReport) -> str:
    """The report as text: one line per view, then each sampled mismatch with its key."""
    lines = [f"verify at LSN {report.lsn}: "
             + ("all views agree" if report.ok else "MISMATCHES FOUND")
             + f" ({len(report.views)} views, {report.seconds:.1f} s; "
               f"snapshot {report.snapshot_seconds:.1f} s)"]
    for v in report.views:
        state = "partial" if v.partial else "full"
        status = "ok" if v.ok else (f"{v.keys_differing} differ, {v.keys_missing} missing "
                                    f"in the engine, {v.keys_extra} extra in the engine")
        lines.append(f"  {v.view} ({state}, {v.keys_checked} keys): {status}")
        for m in v.mismatches:
            lines.append(f"    key {m.key!r}: {m.kind}")
            lines.append(f"      engine: {_rows_text(m.engine)}")
            lines.append(f"      spark:  {_rows_text(m.spark)}")
    return "\n".join(lines)


def _rows_text(rows: Sequence[Row]) -> str:
    return ", ".join(repr(tuple(r)) for r in rows) or "(no rows)"


# --------------------------------------------------------------------------- verify


def verify(db: Database, views: Iterable[str] | None = None, *, spark: SparkSession | None = None,
           workdir: str | Path | None = None, max_mismatches: int = SAMPLE_KEYS) -> VerifyReport:
    """Recompute ``views`` (default: every named view) on Spark and diff them with the
    engine, at one LSN (see the module doc). The database stays open and serving; writes
    wait only while the snapshot is copied and reader state is read."""
    start = time.perf_counter()
    chosen = [db.view(v) for v in views] if views else [db.view(v) for v in db.views()]
    if spark is None:
        from rivulet.spark.session import get_session

        spark = get_session()
    scratch = Path(tempfile.mkdtemp(prefix="rivulet-verify-", dir=workdir))
    try:
        frozen = scratch / "frozen.db"
        db.finish_conversions()  # the copy is read by column name, as of now
        with db.migration():  # the one place both sides see one LSN
            lsn = db.lsn
            copy_database(db.storage.path, frozen)  # the state at the engine's LSN
            served = {view.name: _served(view) for view in chosen}
        snapshot = take_snapshot(frozen, scratch / "snapshot")  # Parquet, writes going on
        snapshot_done = time.perf_counter()
        if snapshot.lsn != lsn:
            raise ProgramError(f"snapshot LSN {snapshot.lsn} is not the engine's {lsn}")
        tables = old_versions(snapshot.dataframes(spark), db.catalog.layouts,
                              {n: t.version for n, t in db.catalog.tables.items()})
        checks = tuple(_check_view(view, tables, served[view.name], max_mismatches)
                       for view in chosen)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    end = time.perf_counter()
    return VerifyReport(lsn, checks, snapshot_done - start, end - start)


def _served(view: View) -> dict[Any, list[Row]]:
    """Each held key's rows, as the engine serves them now."""
    out: dict[Any, list[Row]] = {}
    for key in view.held_keys():
        rows = view.held_rows(key)
        if rows is not MISSING:  # (evicted since the keys were listed)
            out[key] = rows
    return out


def _check_view(view: View, tables: dict[str, DataFrame], engine: dict[Any, list[Row]],
                max_mismatches: int) -> ViewCheck:
    start = time.perf_counter()
    plan = view.plan
    partial = view.partial
    state = view.built.state
    if isinstance(state, RangeReader):
        spark_rows = _range_rows(plan, tables, None if not partial else list(engine))
    elif view.built.keyed_by_prefix:  # a reader keyed by part of the key
        spark_rows = _held_rows(plan, state.key_columns, tables, list(engine))
    elif plan.implicit_group and partial:
        spark_rows = _lookups(plan, tables, list(engine))
    else:
        spark_rows = _keyed_answers(plan, tables, None if not partial else list(engine))
    differing: list[Mismatch] = []
    missing: list[Mismatch] = []
    extra: list[Mismatch] = []
    for key, rows in engine.items():
        theirs = spark_rows.get(key, [])
        if not same_rows(rows, theirs):
            found = extra if not theirs else differing
            found.append(Mismatch(key, "extra" if not theirs else "differs",
                                  tuple(rows[:SAMPLE_ROWS]), tuple(theirs[:SAMPLE_ROWS])))
    for key, rows in spark_rows.items():
        if key not in engine and rows and not partial:  # a partial view may not hold it
            missing.append(Mismatch(key, "missing", (), tuple(rows[:SAMPLE_ROWS])))
    sample = tuple((differing + missing + extra)[:max_mismatches])
    return ViewCheck(view.name, partial, len(engine), len(differing), len(missing), len(extra),
                     sample, time.perf_counter() - start)


def _state_key(values: Sequence[Any]) -> Any:
    """A key as reader state stores it: the value for one column, else a tuple."""
    return values[0] if len(values) == 1 else tuple(values)


def _restricted(plan: ir.ViewPlan, root: DataFrame, keys: list[Any] | None,
                key: tuple[int, ...] | None = None) -> DataFrame | None:
    """Root rows with non-NULL keys (on ``key``, the plan's by default); only those of
    ``keys`` when given (None if none)."""
    if keys is not None and not keys:
        return None
    key = plan.key if key is None else key
    columns = [name(i) for i in key]
    for column in columns:
        root = root.where(SF.col(column).isNotNull())
    if keys is None or not columns:
        return root
    tuples = [k if isinstance(k, tuple) and len(key) > 1 else (k,) for k in keys]
    types = [root.schema[c].dataType for c in columns]
    if len(tuples) <= PUSHDOWN_KEYS:
        return root.where(_key_filter(key, types, tuples))
    schema = T.StructType([T.StructField(f"_k{j}", t) for j, t in enumerate(types)])
    frame = local_frame(root.sparkSession, tuples, schema)
    on = [SF.col(c) == SF.col(f"_k{j}") for j, c in enumerate(columns)]
    cond = on[0]
    for c in on[1:]:
        cond = cond & c
    return root.join(frame, cond, "left_semi")


def _keyed_answers(plan: ir.ViewPlan, tables: dict[str, DataFrame],
                   keys: list[Any] | None) -> dict[Any, list[Row]]:
    """Each key's answer on Spark, finished as a read finishes it (all keys, or ``keys``)."""
    root = _restricted(plan, compile_plan(plan.root, tables), keys)
    if root is None:
        return {}
    partition = [name(i) for i in plan.key]
    finished, sort = finish(root, plan, partition)
    rows = _collect(finished, sort)
    key_at = [finished.columns.index(c) for c in partition]
    visible = [finished.columns.index(c) for c in names(plan.visible)]
    out: dict[Any, list[Row]] = {}
    for row in rows:
        out.setdefault(_state_key([row[i] for i in key_at]), []).append(
            tuple(row[i] for i in visible))
    return out


def _lookups(plan: ir.ViewPlan, tables: dict[str, DataFrame],
             keys: list[Any]) -> dict[Any, list[Row]]:
    """``lookup`` of each key on Spark (an implicit group answers keys without rows)."""
    answers = compute_lookups(plan, tables, [_params(plan, k) for k in keys])
    return {k: rows for k, rows in zip(keys, answers)}


def _params(plan: ir.ViewPlan, key: Any) -> tuple:
    """The parameters of a lookup of one reader key (one value in an IN list's place)."""
    values = key if isinstance(key, tuple) and len(plan.key) > 1 else (key,)
    by_param = dict(zip(plan.key_params, values))
    by_param.update((p, values[position]) for p, position in plan.equal_params)
    skipped = set(plan.in_list[1:])
    return tuple(by_param[p] for p in range(plan.param_count) if p not in skipped)


def _range_rows(plan: ir.ViewPlan, tables: dict[str, DataFrame],
                keys: list[Any] | None) -> dict[Any, list[Row]]:
    """A range view's rows (all columns) under each equality key, as its reader holds them."""
    root = _restricted(plan, compile_plan(plan.root, tables), keys)
    if root is None:
        return {}
    assert plan.range_column is not None  # a range view
    root = root.where(SF.col(name(plan.range_column)).isNotNull())
    rows = _collect(root, [])
    out: dict[Any, list[Row]] = {}
    for row in rows:
        out.setdefault(_state_key([row[i] for i in plan.key]) if plan.key else (), []).append(row)
    return out


def _held_rows(plan: ir.ViewPlan, key: tuple[int, ...], tables: dict[str, DataFrame],
               keys: list[Any]) -> dict[Any, list[Row]]:
    """The root rows (all columns) under each of ``keys`` on ``key``: what a reader keyed
    by part of its view's key (an IN view's equality values, ``BuiltView.listed``) holds
    under them."""
    root = _restricted(plan, compile_plan(plan.root, tables), keys, key)
    if root is None:
        return {}
    out: dict[Any, list[Row]] = {}
    for row in _collect(root, []):
        out.setdefault(_state_key([row[i] for i in key]), []).append(row)
    return out


# --------------------------------------------------------------------------- comparing


def same_rows(a: Sequence[Row], b: Sequence[Row]) -> bool:
    """Equal as multisets, numbers within a relative 1e-9 (see the module doc)."""
    if len(a) != len(b):
        return False
    sa = sorted(a, key=_canon_row)
    sb = sorted(b, key=_canon_row)
    return all(len(x) == len(y) and all(_same_value(u, v) for u, v in zip(x, y))
               for x, y in zip(sa, sb))


def _norm(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, decimal.Decimal):
        return float(v)
    return v


def _canon_row(row: Sequence[Any]) -> tuple:
    out: list[tuple[int, Any]] = []
    for v in map(_norm, row):
        if v is None:
            out.append((0, 0))
        elif isinstance(v, int):
            out.append((1, v))
        elif isinstance(v, float):  # rounded: values within the tolerance sort together
            out.append((1, float(f"{v:.9g}")) if math.isfinite(v) else (2, repr(v)))
        else:
            out.append((3, repr(v)))
    return tuple(out)


def _same_value(a: Any, b: Any) -> bool:
    a, b = _norm(a), _norm(b)
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
    return type(a) is type(b) and a == b


__all__ = ["Mismatch", "VerifyReport", "ViewCheck", "format_report", "same_rows", "verify"]
