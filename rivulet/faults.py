"""Named fault points: a test-only way to crash the process at an exact place.

A crash test must kill rivulet *inside* the windows that matter (between a group's SQLite
commit and its acknowledgement, in the middle of an upquery, of a migration, of a Spark
bootstrap, of a lazy schema conversion). Killing at random moments rarely lands there, so
the engine calls ``fault_point("name")`` at each such place, and a crash test starts the
process with ``RIVULET_FAULTS="name[:n]"`` (several comma-separated): the ``n``-th time
(default 1) the process reaches that point it writes ``rivulet-fault: name n`` to stderr and
SIGKILLs itself, exactly what the kernel's OOM killer or ``kill -9`` would do.

Without the variable, :func:`fault_point` is a check of one module constant against None:
nothing is counted and nothing else runs. The variable is read once, at import.
"""

from __future__ import annotations

import os
import signal
import threading

ENV = "RIVULET_FAULTS"

#: Every fault point the engine has, and where it is (the crash harness kills at each).
FAULT_POINTS: dict[str, str] = {
    "commit_before_durable": "group commit: rows and log entry written, SQLite COMMIT not yet run",
    "commit_before_ack": "group commit: SQLite COMMIT done, no writer told yet",
    "transaction_apply": "a transaction's COMMIT: one table's changes stored in the group's "
                         "SQLite transaction, the next table's not yet",
    "propagate": "propagation worker: a committed batch taken, not yet applied to the views",
    "upquery": "an upquery answered from upstream, not yet stored in the partial state",
    "migration_build": "CREATE VIEW: dataflow built, the view not yet durable in the program",
    "migration_commit": "CREATE VIEW: the view durable in the program, the call not returned",
    "spark_bootstrap": "Spark bootstrap: full state computed on Spark, not yet loaded",
    "schema_conversion_chunk": "lazy ALTER TABLE: between chunks of rows converted",
    "backup_copy": "rivulet backup: the files copied under a temporary name, the manifest "
                   "not yet written",
}


class _Armed:
    """The fault points armed by the environment, and how often each was reached."""

    def __init__(self, spec: str) -> None:
        self.at: dict[str, int] = parse(spec)
        self.reached: dict[str, int] = {}
        self.lock = threading.Lock()

    def reach(self, name: str) -> None:
        target = self.at.get(name)
        if target is None:
            return
        with self.lock:
            count = self.reached[name] = self.reached.get(name, 0) + 1
        if count == target:
            os.write(2, f"rivulet-fault: {name} {count}\n".encode())
            os.kill(os.getpid(), signal.SIGKILL)


def parse(spec: str) -> dict[str, int]:
    """``"a:3,b"`` -> ``{"a": 3, "b": 1}``; an unknown name or a bad count raises
    ValueError (a typo would silently test nothing)."""
    out: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, count = item.partition(":")
        if name not in FAULT_POINTS:
            raise ValueError(f"{ENV}: unknown fault point {name!r} "
                             f"(known: {', '.join(FAULT_POINTS)})")
        try:
            n = int(count) if count else 1
        except ValueError:
            raise ValueError(f"{ENV}: bad count {count!r} for fault point {name!r}") from None
        if n < 1:
            raise ValueError(f"{ENV}: the count of fault point {name!r} must be >= 1")
        out[name] = n
    return out


_ARMED: _Armed | None = _Armed(os.environ[ENV]) if os.environ.get(ENV) else None


def fault_point(name: str) -> None:
    """Crash here if the environment armed this point (see the module docstring)."""
    if _ARMED is not None:
        _ARMED.reach(name)
