"""Where the files every Spark executor reads or writes are kept: one configurable place.

Why: on ``local[N]`` the executors are the driver's JVM, so any path of the driver will do;
on a cluster, an executor on another machine reads the Parquet snapshots that bootstrap and
verify export, the stream's log segments and snapshots, and reads and writes the streams'
checkpoints (their state stores are written by the executors). Those files must be where
every executor sees them, at the same path. The database, the stream's sink store and
``status.json`` stay with the driver (the frozen SQLite copy bootstrap and verify export
from is written beside their snapshot, though only the driver reads it).

The place is ``SparkConfig(shared_dir=...)`` (``rivulet serve --spark-conf`` cannot set it:
it is not a Spark setting), else the environment variable ``RIVULET_SPARK_DIR``, else
there is none and every path is what it was on one machine: bootstrap's
``<data>/_bootstrap``, the stream's ``<data>/stream/``, verify's scratch in the system's
temporary directory. With one, a database's files go to
``<shared>/<data directory's name>-<hash of its absolute path>/`` (several databases, and
several machines' databases, may share it): ``_bootstrap/``, ``verify-*/`` and ``stream-*/``
(see :func:`stream_area`).

What it may be: a directory every machine mounts at the same path (NFS, CephFS, Lustre, a
cloud file share), or, on one machine, a local directory (what the tests use with a
standalone cluster). The driver writes and reads these files with Python's own file
functions (pathlib, pyarrow, SQLite), so HDFS and object stores (``hdfs://``, ``s3a://``)
are not possible yet; docs/spark.md says so.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rivulet.spark.session import SparkConfig

#: The environment variable naming the shared directory when ``SparkConfig`` does not.
SHARED_DIR_ENV = "RIVULET_SPARK_DIR"
#: The file in ``<data>/stream/`` naming the stream's directory under the shared one.
STREAM_AREA_FILE = "shared-area"


def shared_dir(config: SparkConfig | None = None) -> Path | None:
    """The configured shared directory (module doc), or None: one machine's paths.

    ``config`` None means the running session's (:func:`~rivulet.spark.session.session_config`).
    """
    if config is None:
        from rivulet.spark.session import session_config

        config = session_config()
    value = (config.shared_dir if config is not None else None) or os.environ.get(SHARED_DIR_ENV)
    return Path(value) if value else None


def database_area(data_dir: str | os.PathLike[str], config: SparkConfig | None = None) -> Path:
    """Where a database's executor-visible files go: the data directory itself when nothing
    is shared, else its own directory under the shared one (created)."""
    data = Path(data_dir).resolve()
    shared = shared_dir(config)
    if shared is None:
        return data
    digest = hashlib.sha256(str(data).encode()).hexdigest()[:12]
    area = shared / f"{data.name}-{digest}"
    area.mkdir(parents=True, exist_ok=True)
    return area


def scratch_parent(data_dir: str | os.PathLike[str],
                   config: SparkConfig | None = None) -> Path | None:
    """Where a temporary directory for Spark's input goes (verify's): the database's area
    under the shared directory, or None (the system's temporary directory)."""
    return database_area(data_dir, config) if shared_dir(config) is not None else None


def stream_area(data_dir: str | os.PathLike[str], config: SparkConfig | None = None) -> Path:
    """The streaming pipeline's log, snapshots and checkpoints: ``<data>/stream`` when
    nothing is shared. Under a shared directory, ``stream-<token>`` in the database's area,
    the token kept in ``<data>/stream/shared-area``: a data directory whose ``stream/`` is
    new (a first start, a restore from a backup, which leaves ``stream/`` out) gets a new
    token, so its streams start afresh rather than resume checkpoints whose sink store
    (``<data>/stream/sink.db``, the driver's) is gone."""
    local = Path(data_dir) / "stream"
    if shared_dir(config) is None:
        return local
    marker = local / STREAM_AREA_FILE
    if marker.is_file():
        token = marker.read_text().strip()
    else:
        token = secrets.token_hex(6)
        local.mkdir(parents=True, exist_ok=True)
        staging = marker.with_suffix(".tmp")
        staging.write_text(token + "\n")
        os.replace(staging, marker)
    area = database_area(data_dir, config) / f"stream-{token}"
    area.mkdir(parents=True, exist_ok=True)
    return area


__all__ = ["SHARED_DIR_ENV", "STREAM_AREA_FILE", "database_area", "scratch_parent",
           "shared_dir", "stream_area"]
