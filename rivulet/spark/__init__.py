"""The IR on Spark, called by the engine (docs/design.md, "The data pipeline on Spark").

The in-process engine and Spark execute the same IR: :mod:`rivulet.spark.compile` turns a
view's plan into DataFrames over a consistent snapshot of the base tables
(:mod:`rivulet.spark.snapshot`), through the one SparkSession of the process
(:mod:`rivulet.spark.session`); expression semantics are the engine's
(:mod:`rivulet.spark.exprs`, with the native translations in :mod:`rivulet.spark.natives`
and the static kinds in :mod:`rivulet.spark.kinds`), values cross over as Arrow
(:mod:`rivulet.spark.values`). Full state at open or CREATE VIEW is computed there by
:mod:`rivulet.spark.bootstrap`, with the state queries of :mod:`rivulet.spark.state_queries`
and a session started ahead by :mod:`rivulet.spark.warmup`.

Importing this package costs nothing: pyspark loads when a name below is first used (the
engine imports :mod:`rivulet.spark.bootstrap` at start-up, and a JVM-less CLI command must
not pay a second of pyspark imports).

What drives the engine from Spark (bulk import, verify, the streaming pipeline) sits above
the engine, in :mod:`rivulet.pipeline`.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "compile_plan": "compile", "compute_lookups": "compile", "compute_view": "compile",
    "scan_view": "compile",
    "SparkConfig": "session", "get_session": "session", "stop_session": "session",
    "Snapshot": "snapshot", "SnapshotError": "snapshot", "load_snapshot": "snapshot",
    "take_snapshot": "snapshot",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rivulet.spark' has no attribute {name!r}")
    return getattr(importlib.import_module(f"rivulet.spark.{module}"), name)
