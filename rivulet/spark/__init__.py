"""rivulet's data pipeline on Spark (design.md, "The data pipeline on Spark").

The in-process engine and Spark execute the same IR: :mod:`rivulet.spark.compile` turns a
view's plan into DataFrames over a consistent snapshot of the base tables
(:mod:`rivulet.spark.snapshot`), through the one SparkSession of the process
(:mod:`rivulet.spark.session`); expression semantics are the engine's
(:mod:`rivulet.spark.exprs`), values cross over as Arrow (:mod:`rivulet.spark.values`).
"""

from rivulet.spark.compile import compile_plan, compute_lookups, compute_view, scan_view
from rivulet.spark.session import SparkConfig, get_session, stop_session
from rivulet.spark.snapshot import Snapshot, SnapshotError, load_snapshot, take_snapshot

__all__ = [
    "Snapshot", "SnapshotError", "SparkConfig", "compile_plan", "compute_lookups",
    "compute_view", "get_session", "load_snapshot", "scan_view", "stop_session",
    "take_snapshot",
]
