"""``rivulet verify``: recompute views on Spark and diff them with what the engine serves.

The engine and Spark execute the same IR (rivulet/spark/compile.py); verify is the check
that they agree on live data, key by key:

1. **One point in time.** Under the database's migration lock (no commit, no propagation,
   every acknowledged write applied) the database file is copied (SQLite's backup API)
   *and* the engine's answers are read from reader state, so both sides are the state at
   one LSN. The lock is held only for the page copy and the reads of reader state; the
   copy's export to Parquet (rivulet/spark/snapshot.py) and Spark run after it.
2. **What is compared.** For each view, the keys its reader holds (``View.held_keys``):
   every key of a full view; of a partial one, every filled hole up to
   :data:`HELD_SAMPLE` (a random sample of them beyond: a big cache is compared in
   seconds, not hours). A keyed view's answer per key is what ``lookup`` returns (ordered,
   cut to its LIMIT, default rows included), against Spark's answer for the same key
   (``compile.finish`` partitioned by the key, or ``compute_lookups`` where an implicit
   group answers keys without rows; a range aggregate, which keeps one answer per value
   of its range parameters, its query with each held key's values as constants). A range
   view compares the rows held under each key, and so does an IN view whose reader is
   keyed by its equality values alone (under each of those). A full view also reports
   keys Spark has and the engine lacks.
3. **Keys a partial view does not hold.** Its holes are what upqueries compute, so they
   are checked too (but a range aggregate's: every value is a key of it): up to
   :data:`UNFILLED_SAMPLE` keys Spark computes rows for and the reader did not hold (a
   random sample of the recomputation's keys), and one key no row has (past the largest
   value of a numeric or date key column: there a view answers nothing, or an implicit
   group's default row). The engine reads them as a read that
   misses does: a ``lookup`` of the key (a range view, or one whose reader is keyed by
   part of its key, fills the reader key and compares what it then holds, as in 2: a
   lookup answers only part of that). Those reads fill the holes (they stay filled, as
   after any read). Spark picks the keys, so it runs before they can be read; they are
   read afterwards, under the migration lock again: upqueries run under it (the lock's
   two locks are reentrant, in this thread, and an upquery reads storage at the graph's
   LSN, which under the lock is the storage's: rivulet/engine/upquery.py), and so the
   answers are the state at the lock's LSN. Writes may have committed since the first
   snapshot: then the database is copied again under the same lock, and Spark computes
   the keys' answers from that second snapshot, so both sides of each comparison are at
   one LSN (``VerifyReport.unfilled_lsn``); no write can make a false mismatch nor hide a
   true one. Writes wait for these reads too (a few upqueries per partial view). A key
   filled by someone else between the two locks is compared all the same, counted as a
   filled one. A partial view that holds no key and whose recomputation has none (an
   empty table) is reported as such, not as agreeing.
4. **How rows compare.** As multisets per key (rows tied under ORDER BY may come in any
   order): numbers within a relative 1e-9 (sums of floats in another order), decimals by
   value, booleans as 0/1.

The report (:class:`VerifyReport`) says per view how many keys the reader holds and how
many filled and unfilled keys were compared, lists each mismatching key with both
answers, turns into a dict and back (the HTTP API's ``POST /verify`` returns
``to_dict()``), and prints the same way locally or remotely (:func:`format_report`).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as SF
from pyspark.sql import types as T

from rivulet.errors import ProgramError, SchemaError, UnsupportedSqlError
from rivulet.plan import ir
from rivulet.spark.compile import (
    PUSHDOWN_KEYS,
    _collect,
    _key_filter,
    compile_plan,
    compute_lookups,
    finish,
    holds_group_concat,
    local_frame,
    name,
    names,
    old_versions,
)
from rivulet.spark.session import session_config
from rivulet.spark.snapshot import take_snapshot
from rivulet.spark.storage import scratch_parent
from rivulet.state.holes import MISSING
from rivulet.state.reader import RangeReader
from rivulet.storage.sqlite import copy_database
from rivulet.values.schema import (
    DATE,
    DATETIME,
    DECIMAL,
    FLOAT,
    INT,
    Column,
    Kind,
    coerce_value,
)

if TYPE_CHECKING:
    from rivulet.engine.database import Database
    from rivulet.engine.views import View
    from rivulet.plan.planner import Catalog

Row = tuple
#: Mismatching keys listed per view (the counts cover all).
SAMPLE_KEYS = 20
#: Rows shown per side of a mismatch.
SAMPLE_ROWS = 10
REL_TOL = 1e-9
#: Held keys of a partial view compared at most (a random sample of them beyond).
HELD_SAMPLE = 10_000
#: Keys with rows a partial view does not hold, read through the engine and compared at
#: most (beside one key without rows).
UNFILLED_SAMPLE = 20


@dataclass(frozen=True)
class Mismatch:
    """One key whose answers differ: ``kind`` is ``differs``, ``missing`` (Spark has rows
    the engine lacks) or ``extra`` (the engine holds rows Spark does not compute).
    ``upquery``: the key was a hole of a partial view, and the engine's answer is what
    verify's read filled it with (else it is maintained state)."""

    key: Any
    kind: str
    engine: tuple[Row, ...]
    spark: tuple[Row, ...]
    upquery: bool = False


@dataclass(frozen=True)
class ViewCheck:
    """One view's comparison. ``keys_held``: the keys its reader held at the snapshot;
    ``filled_checked``: held keys compared (all of a full view's); ``unfilled_checked``:
    keys it did not hold, filled by the engine's upquery and compared (a partial view's)."""

    view: str
    partial: bool
    keys_held: int
    filled_checked: int
    unfilled_checked: int
    keys_differing: int
    keys_missing: int
    keys_extra: int
    mismatches: tuple[Mismatch, ...]  # a sample
    seconds: float

    @property
    def keys_checked(self) -> int:
        return self.filled_checked + self.unfilled_checked

    @property
    def ok(self) -> bool:
        return not (self.keys_differing or self.keys_missing or self.keys_extra)

    @property
    def checked_nothing(self) -> bool:
        """A partial view of which no key could be compared: it held none, and Spark
        computes none (its tables are empty) or none was asked for. A full view compared
        with no keys on either side is a check (Spark's keys would be missing)."""
        return self.partial and not self.keys_checked


@dataclass(frozen=True)
class VerifyReport:
    """``lsn``: the point in time held keys were compared at; ``unfilled_lsn``: the one of
    the keys partial views did not hold (later when writes came between: see the module
    doc; ``lsn`` when none came, or no such key was read)."""

    lsn: int
    unfilled_lsn: int
    views: tuple[ViewCheck, ...]
    snapshot_seconds: float
    seconds: float

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.views)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "lsn": self.lsn, "unfilled_lsn": self.unfilled_lsn,
                "snapshot_seconds": self.snapshot_seconds, "seconds": self.seconds,
                "views": [_view_dict(v) for v in self.views]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerifyReport:
        return cls(lsn=data["lsn"], unfilled_lsn=data["unfilled_lsn"],
                   snapshot_seconds=data["snapshot_seconds"], seconds=data["seconds"],
                   views=tuple(_view_from(v) for v in data["views"]))


def _view_dict(v: ViewCheck) -> dict[str, Any]:
    return {"view": v.view, "ok": v.ok, "partial": v.partial, "keys_held": v.keys_held,
            "keys_checked": v.keys_checked, "filled_checked": v.filled_checked,
            "unfilled_checked": v.unfilled_checked, "checked_nothing": v.checked_nothing,
            "keys_differing": v.keys_differing, "keys_missing": v.keys_missing,
            "keys_extra": v.keys_extra, "seconds": v.seconds,
            "mismatches": [{"key": _jsonable(m.key), "kind": m.kind, "upquery": m.upquery,
                            "engine": [_jsonable(r) for r in m.engine],
                            "spark": [_jsonable(r) for r in m.spark]} for m in v.mismatches]}


def _view_from(d: dict[str, Any]) -> ViewCheck:
    mismatches = tuple(Mismatch(_tuple(m["key"]), m["kind"], tuple(map(_tuple, m["engine"])),
                                tuple(map(_tuple, m["spark"])), m["upquery"])
                       for m in d["mismatches"])
    return ViewCheck(view=d["view"], partial=d["partial"], keys_held=d["keys_held"],
                     filled_checked=d["filled_checked"], unfilled_checked=d["unfilled_checked"],
                     keys_differing=d["keys_differing"], keys_missing=d["keys_missing"],
                     keys_extra=d["keys_extra"], mismatches=mismatches, seconds=d["seconds"])


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
    """The report as text: one line per view (what was compared, and the verdict), then
    each sampled mismatch with its key."""
    later = (f"; keys not held read at LSN {report.unfilled_lsn}"
             if report.unfilled_lsn != report.lsn else "")
    lines = [f"verify at LSN {report.lsn}: "
             + ("all views agree" if report.ok else "MISMATCHES FOUND")
             + f" ({len(report.views)} views, {report.seconds:.1f} s; "
               f"snapshot {report.snapshot_seconds:.1f} s{later})"]
    for v in report.views:
        if v.ok and v.checked_nothing:
            status = "nothing to check (no key held, none computed)"
        elif v.ok:
            status = "ok"
        else:
            status = (f"{v.keys_differing} differ, {v.keys_missing} missing in the engine, "
                      f"{v.keys_extra} extra in the engine")
        if v.partial:
            sampled = " (a sample)" if v.filled_checked < v.keys_held else ""
            what = (f"partial, holds {_keys(v.keys_held)}; checked {v.filled_checked} "
                    f"filled{sampled}, {v.unfilled_checked} unfilled")
        else:
            what = f"full, {_keys(v.keys_checked)}"
        lines.append(f"  {v.view} ({what}): {status}")
        for m in v.mismatches:
            how = " (a hole, filled by verify's upquery)" if m.upquery else ""
            lines.append(f"    key {m.key!r}: {m.kind}{how}")
            lines.append(f"      engine: {_rows_text(m.engine)}")
            lines.append(f"      spark:  {_rows_text(m.spark)}")
    return "\n".join(lines)


def _keys(n: int) -> str:
    return f"{n} key" if n == 1 else f"{n} keys"


def _rows_text(rows: Sequence[Row]) -> str:
    return ", ".join(repr(tuple(r)) for r in rows) or "(no rows)"


# --------------------------------------------------------------------------- verify


def verify(db: Database, views: Iterable[str] | None = None, *, spark: SparkSession | None = None,
           workdir: str | Path | None = None, max_mismatches: int = SAMPLE_KEYS,
           held_sample: int = HELD_SAMPLE, unfilled_sample: int = UNFILLED_SAMPLE,
           seed: int | None = None) -> VerifyReport:
    """Recompute ``views`` (default: every named view Spark computes, all but those with a
    GROUP_CONCAT) on Spark and diff them with the engine, at one LSN (see the module
    doc). The database stays open and serving; writes wait only while a snapshot is
    copied and reader state is read (and the keys partial views did not hold are filled).
    ``held_sample``: held keys of a partial view compared at most; ``unfilled_sample``:
    keys with rows a partial view does not hold compared at most (0: none, nor the key
    without rows); ``seed``: of the random samples."""
    if held_sample < 0 or unfilled_sample < 0:
        raise ValueError(f"sample sizes are counts of keys, got held_sample={held_sample}, "
                         f"unfilled_sample={unfilled_sample}")
    start = time.perf_counter()
    rng = random.Random(seed)
    # (every view Spark computes: one with a GROUP_CONCAT, the engine's only, or read by
    # parameters under an OR on different columns, is left out unless named, when the
    # refusal names it)
    chosen = [db.view(v) for v in views] if views else [
        view for view in map(db.view, db.views())
        if not holds_group_concat(view.plan.root) and view.plan.alternatives is None]
    for view in chosen:
        if view.plan.alternatives is not None:
            raise UnsupportedSqlError(
                f"unsupported verify of view {view.name!r}, read by parameters under an OR "
                f"on different columns: Spark does not compute its reads (each column's "
                f"key read apart, rivulet/plan/alternatives.py)")
    if spark is None:
        from rivulet.spark.session import get_session

        spark = get_session()
    if workdir is None:  # where every executor reads the snapshot (rivulet/spark/storage.py)
        workdir = scratch_parent(db.path, session_config())
    scratch = Path(tempfile.mkdtemp(prefix="rivulet-verify-", dir=workdir))
    seconds = {view.name: 0.0 for view in chosen}
    try:
        db.finish_conversions()  # the copy is read by column name, as of now
        with db.migration():  # the one place both sides see one LSN
            first = _Frozen.take(db, scratch / "frozen.db")
            held = {view.name: _held(view, held_sample, rng) for view in chosen}
        tables = first.tables(spark, scratch / "snapshot")
        snapshot_done = time.perf_counter()
        theirs: dict[str, dict[Any, list[Row]]] = {}
        unheld: dict[str, list[Any]] = {}
        for view in chosen:
            began = time.perf_counter()
            served = held[view.name]
            keys = list(served.rows) if view.partial or view.built.keyed_by_prefix else None
            if view.partial and unfilled_sample and not view.plan.bounds_keyed:
                unheld[view.name] = _unheld_keys(view, tables, served.keys, unfilled_sample,
                                                 rng)
                keys = [*served.rows, *unheld[view.name]]  # (their answers if nothing moves)
            theirs[view.name] = _spark_answers(view, tables, keys, db.catalog)
            seconds[view.name] += time.perf_counter() - began
        later, unfilled_lsn = _check_unheld(db, chosen, unheld, first, theirs, spark, scratch,
                                            seconds)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    checks = []
    for view in chosen:
        served = held[view.name]
        found = _Found()
        found.compare(served.rows, theirs[view.name], view.partial)
        filled, unfilled = len(served.rows), 0
        if view.name in later:
            read = later[view.name]
            found.compare(read.answers, read.spark, partial=True, holes=set(read.holes))
            unfilled = len(read.holes)
            filled += len(read.answers) - unfilled
        sample = tuple((found.differing + found.missing + found.extra)[:max_mismatches])
        checks.append(ViewCheck(
            view=view.name, partial=view.partial, keys_held=served.count,
            filled_checked=filled, unfilled_checked=unfilled,
            keys_differing=len(found.differing), keys_missing=len(found.missing),
            keys_extra=len(found.extra), mismatches=sample, seconds=seconds[view.name]))
    end = time.perf_counter()
    return VerifyReport(first.lsn, unfilled_lsn, tuple(checks), snapshot_done - start,
                        end - start)


@dataclass(frozen=True)
class _Frozen:
    """A copy of the database file at one LSN, and the catalog's table versions then."""

    path: Path
    lsn: int
    layouts: dict[str, dict[int, tuple[int | None, ...]]]
    versions: dict[str, int]

    @classmethod
    def take(cls, db: Database, path: Path) -> _Frozen:
        """Copy the database now (under the migration lock: the engine's LSN)."""
        catalog = db.catalog
        copy_database(db.storage.path, path)
        return cls(path, db.lsn, {t: dict(v) for t, v in catalog.layouts.items()},
                   {n: t.version for n, t in catalog.tables.items()})

    def same_state(self, db: Database) -> bool:
        """Whether the database is still as copied (no write, no table changed since)."""
        return db.lsn == self.lsn and self.versions == {
            n: t.version for n, t in db.catalog.tables.items()}

    def tables(self, spark: SparkSession, out: Path) -> dict[str, DataFrame]:
        """The copy's tables on Spark (exported to Parquet first), each version as the
        views built over it read it."""
        snapshot = take_snapshot(self.path, out)
        if snapshot.lsn != self.lsn:
            raise ProgramError(f"snapshot LSN {snapshot.lsn} is not the engine's {self.lsn}")
        return old_versions(snapshot.dataframes(spark), self.layouts, self.versions)


@dataclass
class _Held:
    """A view's reader at the snapshot: how many keys it held, which (the unfilled
    sample leaves them out), and the rows of those compared (all, or a sample)."""

    count: int
    keys: list[Any]
    rows: dict[Any, list[Row]]


def _held(view: View, sample: int, rng: random.Random) -> _Held:
    """Each compared held key's rows, as the engine serves them now."""
    keys = view.held_keys()
    chosen = keys if not view.partial or len(keys) <= sample else rng.sample(keys, sample)
    out: dict[Any, list[Row]] = {}
    for key in chosen:
        rows = view.held_rows(key)
        if rows is not MISSING:  # (evicted since the keys were listed)
            out[key] = rows
    return _Held(len(keys), keys, out)


@dataclass
class _Unheld:
    """Keys a partial view did not hold: the engine's answers (read at the second
    lock), which of them were holes then (filled by verify's read), Spark's answers."""

    answers: dict[Any, list[Row]]
    holes: list[Any]
    spark: dict[Any, list[Row]]


def _check_unheld(db: Database, views: list[View], unheld: dict[str, list[Any]],
                  first: _Frozen, answered: dict[str, dict[Any, list[Row]]],
                  spark: SparkSession, scratch: Path,
                  seconds: dict[str, float]) -> tuple[dict[str, _Unheld], int]:
    """Read the keys ``unheld`` names through the engine and on Spark at one LSN (see the
    module doc, 3): each view's :class:`_Unheld`, and that LSN. ``answered``: Spark's
    answers at the first snapshot, which stand if the database is still as it was."""
    if not any(unheld.values()):
        return {}, first.lsn
    db.finish_conversions()  # (a schema change since: the copy is read by column name)
    read: dict[str, tuple[dict[Any, list[Row]], list[Any]]] = {}
    with db.migration():
        frozen = first if first.same_state(db) else _Frozen.take(db, scratch / "frozen2.db")
        for view in views:
            keys = unheld.get(view.name)
            if keys:
                began = time.perf_counter()
                read[view.name] = _engine_reads(view, keys)
                seconds[view.name] += time.perf_counter() - began
    if frozen is first:
        return {name: _Unheld(answers, holes, answered[name])
                for name, (answers, holes) in read.items()}, first.lsn
    tables = frozen.tables(spark, scratch / "snapshot2")
    out: dict[str, _Unheld] = {}
    for view in views:
        if view.name in read:
            began = time.perf_counter()
            answers, holes = read[view.name]
            out[view.name] = _Unheld(answers, holes, _spark_answers(view, tables, list(answers)))
            seconds[view.name] += time.perf_counter() - began
    return out, frozen.lsn


def _engine_reads(view: View, keys: list[Any]) -> tuple[dict[Any, list[Row]], list[Any]]:
    """The engine's answer of each key (under the migration lock), as a read that misses
    gets it, and the keys that were holes (filled by an upquery here)."""
    state = view.built.state
    holes = state.missing(keys)
    if isinstance(state, RangeReader) or view.built.keyed_by_prefix:
        # A lookup answers part of what the reader holds under a key (a range of it, the
        # listed values): compare all of it, filled as a miss fills it.
        return view.fill_held(keys), holes
    plan = view.plan
    return {key: view.lookup(*_params(plan, key)) for key in keys}, holes


class _Found:
    """Mismatching keys, by kind (see :class:`Mismatch`)."""

    def __init__(self) -> None:
        self.differing: list[Mismatch] = []
        self.missing: list[Mismatch] = []
        self.extra: list[Mismatch] = []

    def compare(self, engine: dict[Any, list[Row]], spark: dict[Any, list[Row]],
                partial: bool, holes: Collection[Any] = ()) -> None:
        """Each key of ``engine`` against Spark's answer; of a full view, also the keys
        Spark has and the engine lacks (a partial view may not hold them). ``holes``: the
        keys verify's read filled."""
        for key, rows in engine.items():
            theirs = spark.get(key, [])
            if not same_rows(rows, theirs):
                found = self.extra if not theirs else self.differing
                found.append(Mismatch(key, "extra" if not theirs else "differs",
                                      tuple(rows[:SAMPLE_ROWS]), tuple(theirs[:SAMPLE_ROWS]),
                                      key in holes))
        if partial:
            return
        for key, rows in spark.items():
            if key not in engine and rows:
                self.missing.append(Mismatch(key, "missing", (), tuple(rows[:SAMPLE_ROWS])))


def _spark_answers(view: View, tables: dict[str, DataFrame], keys: list[Any] | None,
                   catalog: Catalog | None = None) -> dict[Any, list[Row]]:
    """Spark's answer of each of ``keys`` (reader keys; None: all), in the form the
    engine's answers are compared in (see the module doc, 2). A range aggregate's keys
    (values of its range parameters) are each read as its query with them as constants,
    planned with ``catalog``: its plan keeps one answer per value, which Spark cannot
    compute for all values at once."""
    plan = view.plan
    state = view.built.state
    if plan.bounds_keyed:
        answers = compute_lookups(plan, tables, [_params(plan, k) for k in keys or []],
                                  catalog)
        return dict(zip(keys or [], answers))
    if isinstance(state, RangeReader):
        return _range_rows(plan, tables, keys)
    if view.built.keyed_by_prefix:  # a reader keyed by part of the key
        return _held_rows(plan, state.key_columns, tables, keys)
    if plan.implicit_group and view.partial:
        return _lookups(plan, tables, keys or [])
    return _keyed_answers(plan, tables, keys)


def _unheld_keys(view: View, tables: dict[str, DataFrame], held: Collection[Any], n: int,
                 rng: random.Random) -> list[Any]:
    """Reader keys of a partial view it does not hold: up to ``n`` keys Spark computes
    rows for, picked at random, and one no row has (:func:`_absent_key`), if one can be
    made; in one Spark job."""
    plan = view.plan
    columns = view.built.state.key_columns
    if not columns:  # one key, ``()``: the whole view (it has no equality to vary)
        return [] if held else [()]
    root = _restricted(plan, compile_plan(plan.root, tables), None, columns)
    assert root is not None  # (all keys asked for)
    others = _restricted(plan, root, list(held), columns, exclude=True) if held else root
    assert others is not None  # (a list of keys to leave out)
    key_names = [name(i) for i in columns]
    picked = (others.select(*key_names).distinct()
              .orderBy(SF.rand(rng.randrange(2 ** 31))).limit(n)
              .withColumn(_LARGEST, SF.lit(False)))
    info = plan.root.columns[columns[-1]]
    step = _NEXT.get(info.kind) if info.kind is not None else None
    if step is not None and info.column is not None:  # with the largest of each column
        picked = picked.unionByName(root.agg(*[SF.max(c).alias(c) for c in key_names])
                                    .withColumn(_LARGEST, SF.lit(True)))
    rows = _collect(picked, [])
    keys = [_state_key(row[:-1]) for row in rows if not row[-1]]
    largest = next((row[:-1] for row in rows if row[-1]), None)
    if largest is not None and step is not None and info.column is not None:
        absent = _absent_key(largest, step, info.column)
        if absent is not None and absent not in set(held):
            keys.append(absent)
    return keys


#: Marks the row of the key columns' largest values among the keys picked.
_LARGEST = "_largest"

#: The next value of a key column's kind, past its largest. Other kinds have none that is
#: surely stored as made and found by nothing else: text compares under a collation (a
#: made-up string may equal a stored one), booleans, ENUM members and bytes are few or
#: padded, a TIME is bounded.
_NEXT: dict[Kind, Callable[[Any], Any]] = {
    INT: lambda v: v + 1,
    DECIMAL: lambda v: v + 1,
    FLOAT: lambda v: v + 1.0,
    DATE: lambda v: v + dt.timedelta(days=1),
    DATETIME: lambda v: v + dt.timedelta(seconds=1),
}


def _absent_key(largest: Sequence[Any], step: Callable[[Any], Any], column: Column) -> Any:
    """A reader key no row has (None if none is made): the largest value of each key
    column, the last one's moved past it by ``step``, if ``column`` (the last one's)
    stores that value as it is (a TINYINT's 127 has no next). Where a view answers a key
    without rows: no rows, or an implicit group's default row."""
    if largest[-1] is None:  # no rows at all
        return None
    value = step(largest[-1])
    try:
        stored = coerce_value(column, value)
    except SchemaError:
        return None
    if type(stored) is not type(value) or stored != value:
        return None
    return _state_key([*largest[:-1], value])


def _state_key(values: Sequence[Any]) -> Any:
    """A key as reader state stores it: the value for one column, else a tuple."""
    return values[0] if len(values) == 1 else tuple(values)


def _restricted(plan: ir.ViewPlan, root: DataFrame, keys: list[Any] | None,
                key: tuple[int, ...] | None = None, *, exclude: bool = False) -> DataFrame | None:
    """Root rows with non-NULL keys (on ``key``, the plan's by default); only those of
    ``keys`` when given (None if none), or with ``exclude`` all but those."""
    if keys is not None and not keys and not exclude:
        return None
    key = plan.key if key is None else key
    columns = [name(i) for i in key]
    for column in columns:
        root = root.where(SF.col(column).isNotNull())
    if keys is None or not columns or (exclude and not keys):
        return root
    tuples = [k if isinstance(k, tuple) and len(key) > 1 else (k,) for k in keys]
    types = [root.schema[c].dataType for c in columns]
    if len(tuples) <= PUSHDOWN_KEYS:
        matching = _key_filter(key, types, tuples)
        return root.where(~matching if exclude else matching)
    schema = T.StructType([T.StructField(f"_k{j}", t) for j, t in enumerate(types)])
    frame = local_frame(root.sparkSession, tuples, schema)
    on = [SF.col(c) == SF.col(f"_k{j}") for j, c in enumerate(columns)]
    cond = on[0]
    for c in on[1:]:
        cond = cond & c
    return root.join(frame, cond, "left_anti" if exclude else "left_semi")


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
    by_param.update((p, values[position]) for position, rest in plan.listed for p in rest)
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
               keys: list[Any] | None) -> dict[Any, list[Row]]:
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
