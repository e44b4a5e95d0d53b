"""Pre-warming partial views: fill chosen keys before anyone reads them.

After a restart every partial view is empty, so the first read of each hot key pays an
upquery. ``db.prewarm(view, keys)`` fills keys ahead of time, and :func:`save_hot_keys`
(at ``close``) records the hot keys of every partial view in the data directory, which
:func:`prewarm_saved` fills again at the next ``open`` (``rivulet.open(...,
prewarm=False)`` turns that off).

Which keys are hot: the keys a view's reader still holds (eviction has already dropped the
cold ones), those read since the last pass of the eviction clock first, then by how often
they were read; at most :data:`HOT_KEYS_PER_VIEW` per view, and only keys that were read.
A view is pre-warmed again only if its SQL is unchanged (a key means nothing to another
query).

How, in-process: the missing keys of a view in batched upqueries (:data:`BATCH_KEYS` a
batch), under the graph lock, exactly the path a read that misses takes (so every partial
state on the way fills consistently, at the graph's LSN).

How, on Spark (many keys, :data:`SPARK_KEYS`, or ``on_spark=True``): under a migration
(no commit, every batch applied), so a snapshot taken then is at the graph's LSN; Spark
computes what the keys need and it is loaded before any write can move the graph on.
Only where that is consistent (:func:`spark_plan`): the reader alone when no partial
stateful operator lies upstream, or one partial aggregate (its groups for the keys, then
the reader fills from it in-process). Other shapes go in-process. Writes wait while Spark
works, as for ``CREATE VIEW``.

A pre-warm is not a read: it counts no miss, and filled keys count hits only when read.
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rivulet.dataflow.builder import BuiltView
from rivulet.dataflow.ops.aggregate import Aggregate
from rivulet.dataflow.ops.base import StatefulOperator
from rivulet.errors import UpqueryTimeout
from rivulet.plan.ir import is_adhoc
from rivulet.state.reader import KeyedReader

if TYPE_CHECKING:
    from rivulet.engine.program import Program
    from rivulet.engine.views import View

log = logging.getLogger("rivulet")

#: The file of hot keys in the data directory.
HOT_KEYS_FILE = "hot_keys.pickle"
#: At most this many keys per view are saved.
HOT_KEYS_PER_VIEW = 10_000
#: Keys per upquery batch (bounds the graph lock's hold time; reads go on in between).
BATCH_KEYS = 5_000
#: From this many missing keys, ``prewarm`` fills them on Spark (when the view allows).
#: Above :data:`HOT_KEYS_PER_VIEW`: the saved keys of one view are filled in-process at
#: open, which takes well under the ten seconds a cold JVM needs to start.
SPARK_KEYS = 50_000


@dataclass(frozen=True)
class PrewarmResult:
    filled: int  # keys that were missing and are now held
    executor: str  # "spark", "in-process", or "" when nothing was missing
    seconds: float


def prewarm_view(program: Program, view: View, keys: Iterable[Any], *,
                 on_spark: bool | None = None) -> PrewarmResult:
    """Fill ``keys`` of ``view`` (values, or tuples of the key's values). On Spark when
    ``on_spark`` (None: when at least :data:`SPARK_KEYS` keys are missing) and the view's
    shape allows it (:func:`spark_plan`), else by batched upqueries. A full view holds
    every key already."""
    started = time.perf_counter()
    built = program.core.built[view.name.lower()]
    state = built.state
    if not state.partial:
        return PrewarmResult(0, "", 0.0)
    wanted = _state_keys(view, keys)
    bootstrap = program.core.bootstrap
    if bootstrap.waits(built) and not bootstrap.await_loaded(program.core.upquery_timeout):
        raise UpqueryTimeout(f"view {view.name!r}: its state is still being recovered")
    missing = state.missing(wanted)
    if not missing:
        return PrewarmResult(0, "", time.perf_counter() - started)
    if on_spark is None:
        on_spark = len(missing) >= SPARK_KEYS
    if on_spark and spark_plan(program, built) is not None:
        filled = _prewarm_on_spark(program, built, missing)
        if filled is not None:
            return PrewarmResult(filled, "spark", time.perf_counter() - started)
    filled = _prewarm_in_process(program, built, wanted)
    return PrewarmResult(filled, "in-process", time.perf_counter() - started)


def _prewarm_in_process(program: Program, built: BuiltView, wanted: list[Any]) -> int:
    state = built.state
    view = built.plan
    filled = 0
    for start in range(0, len(wanted), BATCH_KEYS):
        batch = wanted[start:start + BATCH_KEYS]
        with program.core.graph_lock:
            program.core.check_open()
            if program.core.built.get(view.name.lower()) is not built:
                return filled  # dropped meanwhile
            missing = state.missing(batch)
            if missing:
                rows = program.core.graph.upquery(built.root, state.key_columns, missing)
                state.fill(missing, rows)
                filled += len(missing)
            program.core.graph.enforce_memory_limit()
    return filled


def spark_plan(program: Program, built: BuiltView) -> tuple[str, Any] | None:
    """How Spark can fill keys of this partial view consistently, or None.

    A partial stateful operator drops updates for keys it does not hold, so filling a key
    in the reader alone would freeze it if such an operator lies upstream. Two shapes are
    safe: ``("reader", None)``, no partial stateful operator in the view (Spark computes
    the reader's rows for the keys; partial join caches on the way fill on their own when
    writes need them); and ``("aggregate", node)``, exactly one, a partial aggregate on one
    column with none upstream (Spark computes its groups for the keys, loaded with the
    keys marked held; the reader then fills from it by an in-process upquery, which also
    fills anything between them). The reader's keys are the aggregate's partial keys by
    the same values (``Graph.add_dependent``)."""
    if built.plan.alternatives is not None:
        return None  # an OR's alternatives (rivulet/plan/alternatives.py): the engine's only
    if built.keyed_by_prefix:
        return None  # a reader keyed by part of the key (BuiltView.listed): filled in-process
    graph = program.core.graph
    partial_ops = [n for n in built.nodes if n in graph.nodes and n != built.reader_node
                   and isinstance(op := graph.nodes[n].op, StatefulOperator) and op.partial]
    if any(isinstance(op := graph.nodes[n].op, Aggregate) and op.concatenates
           for n in built.nodes if n in graph.nodes):
        return None  # GROUP_CONCAT: the engine's only (rivulet.spark.compile)
    if not partial_ops:
        return ("reader", None)
    if len(partial_ops) != 1:
        return None
    node = partial_ops[0]
    op = graph.nodes[node].op
    if not isinstance(op, Aggregate) or len(op.partial_columns or ()) != 1:
        return None
    if getattr(op, "plan_node", None) is None:
        return None
    if all(s is not built.state for _, s in graph.dependents.get(node, ())):
        return None
    return ("aggregate", node)


def _prewarm_on_spark(program: Program, built: BuiltView, keys: list[Any]) -> int | None:
    """Spark's part, under a migration (no commit, every batch applied: the snapshot's
    LSN is the graph's). None if the shape changed meanwhile (the caller goes in-process)."""
    from rivulet.spark.compile import PlanCompiler, _key_rows, name
    from rivulet.spark.session import get_session
    from rivulet.spark.snapshot import take_snapshot
    from rivulet.spark.state_queries import aggregate_state, output_rows

    with program.core.migration():
        program.core.check_open()
        state = built.state
        keys = state.missing(keys)
        shape = spark_plan(program, built)
        current = program.core.built.get(built.plan.name.lower())
        if current is not built or shape is None or not keys:
            return None if shape is None else 0
        work = program.core.bootstrap.work_dir()
        try:
            snapshot = take_snapshot(program.core.storage.path, work)
            if snapshot.lsn != program.core.graph.lsn:
                return None
            spark = get_session(program.core.bootstrap.spark_config)
            compiler = PlanCompiler(snapshot.dataframes(spark))
            kind, node = shape
            if kind == "reader":
                plan = built.plan
                tuples = [k if len(plan.key) != 1 else (k,) for k in keys]
                root = compiler.frame(plan.root)
                frame = _key_rows(plan, root, [(0, t) for t in tuples])
                columns = [name(i) for i in range(plan.root.arity)]
                state.fill(keys, output_rows(frame.select(*columns)))
                program.core.graph.enforce_memory_limit()
                return len(keys)
            op = program.core.graph.nodes[node].op
            assert isinstance(op, Aggregate) and op.partial_columns  # the shape spark_plan found
            fresh = [k for k in keys if k not in op.state.filled]
            agg = op.plan_node
            if fresh:
                column = name(agg.group_by[op.partial_columns[0]])
                df = compiler.frame(agg.input)
                df = df.where(_isin(df, column, fresh))
                op.load_groups(aggregate_state(df, agg, op), filled=fresh)
            rows = program.core.graph.upquery(built.root, state.key_columns, keys)
            state.fill(keys, rows)
            program.core.graph.enforce_memory_limit()
            return len(keys)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _isin(df: Any, column: str, values: list[Any]) -> Any:
    """``column IN values`` with the values as literals of the column's Spark type."""
    from pyspark.sql import functions as SF

    from rivulet.spark.compile import _typed_literal

    data_type = df.schema[column].dataType
    return SF.col(column).isin([_typed_literal(v, data_type) for v in values])


def _state_keys(view: View, keys: Iterable[Any]) -> list[Any]:
    """Keys as the reader holds them: coerced to the key columns' kinds, a scalar for a
    one-column key; keys that cannot match (a NULL, a value of the wrong kind) dropped."""
    width = len(view._state.key_columns)
    out: dict[Any, None] = {}
    for key in keys:
        values = key if isinstance(key, tuple) else (key,)
        if view.plan.bounds_keyed and len(values) == width:
            coerced = view._bounds_key(values)  # (a range aggregate's bounds)
        elif len(values) == len(view.plan.key):
            coerced = view._coerce_key(values)
            if coerced is not None:  # the reader may hold part of it (BuiltView.listed)
                coerced = view._built.reader_key(coerced)
        elif len(values) == width:
            coerced = view._coerce_key(values, view._reader_kinds, view._reader_members)
        else:
            of = "" if width == len(view.plan.key) else f" (its state by {width} of them)"
            raise ValueError(f"view {view.name!r} is keyed by {len(view.plan.key)} "
                             f"value(s){of}, got a key of {len(values)}: {key!r}")
        if coerced is None or any(v is None for v in coerced):
            continue
        out[coerced[0] if width == 1 else coerced] = None
    return list(out)


def hot_keys(program: Program) -> dict[str, dict[str, Any]]:
    """Per partial view: its SQL and its hot keys (module doc), as reader keys."""
    out: dict[str, dict[str, Any]] = {}
    with program.core.graph_lock:
        for built in program.core.built.values():
            state = built.state
            if not state.partial or not state.entries or is_adhoc(built.plan.name):
                continue  # (an ad-hoc query's view is made again on first use, empty)
            if isinstance(state, KeyedReader):
                read = [(k, e) for k, e in list(state.entries.items()) if e.reads]
                read.sort(key=lambda ke: (ke[1].reads != ke[1].seen, ke[1].reads), reverse=True)
                keys = [k for k, _ in read[:HOT_KEYS_PER_VIEW]]
            else:  # a range reader keeps no per-key read counts: the keys it holds
                keys = list(state.entries)[:HOT_KEYS_PER_VIEW]
            if keys:
                out[built.plan.name] = {"sql": built.plan.sql, "keys": keys}
    return out


def save_hot_keys(program: Program) -> Path | None:
    """Write the hot keys of every partial view into the data directory (atomically);
    nothing when no partial view holds a read key (an older file is removed)."""
    path = program.core.path / HOT_KEYS_FILE
    keys = hot_keys(program)
    if not keys:
        path.unlink(missing_ok=True)
        return None
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(keys, protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(tmp, path)
    return path


def prewarm_saved(program: Program, *, on_spark: bool | None = None) -> int:
    """Pre-warm the keys saved at the last close (views whose SQL is unchanged);
    ``on_spark=False`` where a migration cannot run (the propagation worker)."""
    path = program.core.path / HOT_KEYS_FILE
    try:
        saved = pickle.loads(path.read_bytes())
    except FileNotFoundError:
        return 0
    except Exception:  # a damaged hint is not an error of the database
        log.warning("ignoring unreadable %s", path)
        return 0
    filled = 0
    for name, entry in saved.items():
        built = program.core.built.get(name.lower())
        if built is None or built.plan.sql != entry.get("sql") or not built.state.partial:
            continue
        view = program.views[name.lower()]
        keys = [k if isinstance(k, tuple) and len(built.state.key_columns) != 1 else (k,)
                for k in entry["keys"]]
        try:
            filled += prewarm_view(program, view, keys, on_spark=on_spark).filled
        except Exception:
            log.exception("pre-warming view %s failed", name)
    return filled


__all__ = ["HOT_KEYS_FILE", "PrewarmResult", "hot_keys", "prewarm_saved", "prewarm_view",
           "save_hot_keys", "spark_plan"]
