"""The one SparkSession of a rivulet process, created on first use.

Why one, and why lazily: starting the JVM costs about ten seconds and a gigabyte of memory
(../shared/notes/pyspark-on-this-machine.md), so a process that never moves data in bulk
should never pay for it, and a process that does should pay once. Every Spark job of
rivulet (compute a view, snapshot reads, import, verify) goes through :func:`get_session`.

The settings that make Spark agree with the engine are not optional and are always applied:

* ``spark.sql.ansi.enabled=false``: MySQL answers NULL for a division by zero and for
  ``x % 0``; Spark 4's ANSI default raises instead.
* ``spark.sql.session.timeZone=UTC``: rivulet's datetimes are naive (UDF arguments and
  results cross the Python/JVM boundary as zone-less values; UTC keeps any conversion the
  identity).
* Arrow for every transfer to Python (``toArrow``/``toPandas`` and the expression UDFs).

A local master binds the driver to loopback (nothing outside the machine can reach it) and
runs its JVM with the serial collector (two cores: no collector threads to compete with
the tasks). It also lists files in the driver however many paths there are: above 32
paths Spark lists them with a job of one task per path, which on one machine only adds
task overhead (a streaming micro-batch over 40 new log files spent 1.5-2.9 s in it).

The JIT keeps both tiers by default: stopping at C1 (``-XX:TieredStopAtLevel=1``) starts a
few seconds faster, but made a 10-million-row CSV parse 3 to 4 times slower (110-130 s
against 29-37 s in one process each, same machine load), and bulk jobs are what Spark is
for here. A process that only streams on two cores may want C1 all the same: there the C2
compiler thread stays busy for minutes (about a CPU-second per large micro-batch) and
competes with the second task thread; ``bench.streaming`` runs that way (set it through
``extra["spark.driver.extraJavaOptions"]`` or ``rivulet serve --spark-conf``). A cluster
master (``spark://``, ``k8s://``, ``yarn``) must be reachable from its executors, so there
the driver address is left to Spark (set it through ``SparkConfig.extra`` when needed), and
rivulet's own code is shipped to the executors with the session (rivulet/spark/shipping.py:
nothing installed by hand on workers but the Python packages rivulet depends on). A
Spark Connect URL (``sc://``) creates a remote session; the server owns static settings
there, so only the SQL settings above are applied, at run time.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from rivulet.errors import RivuletError

log = logging.getLogger("rivulet.spark")

#: SQL settings that make Spark's semantics the engine's (MySQL's); settable at run time,
#: so they apply to Spark Connect sessions too.
SEMANTIC_CONF: Mapping[str, str] = {
    "spark.sql.ansi.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}

#: JDBC driver jars looked for (Debian: libxerial-sqlite-jdbc-java, libmariadb-java,
#: libpostgresql-jdbc-java); those present go on the session's class path.
JDBC_JARS = (
    "/usr/share/java/xerial-sqlite-jdbc.jar",
    "/usr/share/java/mariadb-java-client.jar",
    "/usr/share/java/postgresql.jar",
)


def default_jars() -> tuple[str, ...]:
    """The JDBC driver jars installed on this machine (see :data:`JDBC_JARS`)."""
    return tuple(j for j in JDBC_JARS if os.path.isfile(j))


#: JVM options for a local driver (see the module doc for why not C1 only).
LOCAL_JVM_OPTIONS = "-XX:+UseSerialGC"


@dataclass(frozen=True)
class SparkConfig:
    """How to reach Spark: master URL, driver memory, shuffle partitions, anything else.

    ``shuffle_partitions`` defaults to 2 because rivulet's jobs are small to medium and
    run mostly on one machine; a cluster deployment should raise it to its core count.
    ``extra`` entries are applied last and override everything, including the defaults.
    """

    master: str = "local[*]"
    driver_memory: str = "2g"
    shuffle_partitions: int = 2
    app_name: str = "rivulet"
    extra: Mapping[str, str] = field(default_factory=dict)
    #: Jars for the session (JDBC drivers); by default those installed (:func:`default_jars`).
    jars: tuple[str, ...] = field(default_factory=default_jars)
    #: Ship rivulet's code to the executors as a zip (rivulet/spark/shipping.py)? None:
    #: on a cluster master (``spark://``, ``yarn``, ``k8s://``, ``local-cluster``), not on
    #: ``local[N]`` (whose tasks run in the driver's JVM and import what it imports).
    ship_code: bool | None = None
    #: The directory for files every executor reads or writes (rivulet/spark/storage.py);
    #: None: ``$RIVULET_SPARK_DIR``, else beside the data (one machine's paths).
    shared_dir: str | None = None

    @property
    def is_connect(self) -> bool:
        return self.master.startswith("sc://")

    @property
    def is_local(self) -> bool:
        return self.master == "local" or self.master.startswith("local[")

    @property
    def ships_code(self) -> bool:
        if self.ship_code is not None:
            return self.ship_code
        return not (self.is_local or self.is_connect)

    def conf(self) -> dict[str, str]:
        """Every setting to give the builder of a classic (non-Connect) session."""
        out: dict[str, str] = {
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": self.driver_memory,
            "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
            **SEMANTIC_CONF,
        }
        if self.is_local:
            out.update({
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.default.parallelism": str(self.shuffle_partitions),
                "spark.driver.extraJavaOptions": LOCAL_JVM_OPTIONS,
                "spark.sql.sources.parallelPartitionDiscovery.threshold": "100000",
            })
            if self.jars:
                out["spark.driver.extraClassPath"] = os.pathsep.join(self.jars)
        if self.jars:
            out["spark.jars"] = ",".join(self.jars)
        out.update({str(k): str(v) for k, v in self.extra.items()})
        return out


_lock = threading.Lock()
_session: SparkSession | None = None
_session_config: SparkConfig | None = None


def get_session(config: SparkConfig | None = None) -> SparkSession:
    """The process's SparkSession, created with ``config`` on the first call.

    Later calls return the same session; a different ``config`` then is logged and
    ignored, because a JVM's static settings (master, memory) cannot change once it runs.
    """
    global _session, _session_config
    with _lock:
        if _session is not None and not _is_stopped(_session):
            if config is not None and config != _session_config:
                log.warning("a SparkSession already runs with %s; ignoring %s",
                            _session_config, config)
            return _session
        config = config or SparkConfig()
        _session = _build(config)
        _session_config = config
        return _session


def session_config() -> SparkConfig | None:
    """The config the process's running session was created with (None: no session)."""
    with _lock:
        if _session is None or _is_stopped(_session):
            return None
        return _session_config


def stop_session() -> None:
    """Stop the process's session (if any); the next :func:`get_session` starts a new one."""
    global _session, _session_config
    with _lock:
        if _session is not None:
            _session.stop()
        _session = None
        _session_config = None


def _is_stopped(spark: SparkSession) -> bool:
    context: Any = getattr(spark, "_sc", None)
    return context is not None and getattr(context, "_jsc", None) is None


def _build(config: SparkConfig) -> SparkSession:
    # Python workers (UDFs) must run this interpreter: it has rivulet, pyarrow and pandas,
    # whatever ``python3`` on PATH is.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(config.app_name)
    if config.is_connect:
        if importlib.util.find_spec("grpc") is None:  # pyspark would exit the process
            raise RivuletError(f"a Spark Connect master ({config.master}) needs pyspark's "
                               "connect extra: pip install 'pyspark[connect]'")
        spark = builder.remote(config.master).getOrCreate()
        for key, value in {**SEMANTIC_CONF, **config.extra}.items():
            spark.conf.set(key, value)
        spark.conf.set("spark.sql.shuffle.partitions", str(config.shuffle_partitions))
        return spark
    builder = builder.master(config.master)
    if config.is_local:  # the JVM's own address is loopback too, unless the user set one
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    for key, value in config.conf().items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if config.ships_code:
        from rivulet.spark.shipping import code_zip

        # Executors import rivulet from this copy of the driver's code (shipping.py).
        spark.sparkContext.addPyFile(str(code_zip()))
    return spark
