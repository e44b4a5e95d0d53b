"""A Spark standalone cluster on this machine: one master and N workers, on loopback.

Why: every Spark path of rivulet (import, bootstrap, verify, streaming) must also run with
executors that are not the driver, each in its own JVM with its own Python workers, as on
a real cluster. ``local[N]`` runs tasks inside the driver's JVM, where anything the driver
can import the tasks can too, so it hides what a cluster would break (code not shipped,
files only the driver sees). The tests' session fixture and ``python -m bench.streaming
--cluster`` start one from here.

How: with what PySpark ships, nothing else installed: ``bin/spark-class`` under pyspark's
install directory runs ``org.apache.spark.deploy.master.Master`` and
``org.apache.spark.deploy.worker.Worker`` in the foreground, each a JVM of its own. Every
daemon binds 127.0.0.1 (``--host`` and ``SPARK_LOCAL_IP``) on a free port (the workers
start beside the master and retry until it listens) and keeps its log and its work
directory (executors' stdout/stderr, the files Spark ships to them) under ``log_dir``. The
daemons run without the caller's ``PYTHONPATH``, in ``log_dir``: an executor finds rivulet
only where Spark put it (:mod:`rivulet.spark.session` ships it as a zip).
:meth:`StandaloneCluster.start` returns once the master has elected itself and every
worker has registered, or raises :class:`ClusterError` with the failing daemon's log tail;
:meth:`StandaloneCluster.stop` ends each daemon's process group (a worker's executors and
their Python workers with it).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from rivulet.errors import RivuletError

#: Loopback: nothing outside the machine can reach the cluster.
HOST = "127.0.0.1"
_LEADER = "I have been elected leader"
_REGISTERED = "Successfully registered with master"


class ClusterError(RivuletError):
    """The standalone cluster could not start (no Java, no pyspark, a daemon that died or
    never became ready); the message names the daemon and ends with its log."""


@dataclass(frozen=True)
class ClusterSpec:
    """What to start. Each worker offers ``cores`` cores and ``memory`` to executors (an
    executor takes ``spark.executor.memory`` of it); ``daemon_memory`` is the heap of the
    master's and each worker's own JVM (they only schedule)."""

    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    daemon_memory: str = "256m"
    start_timeout: float = 120.0


def spark_home() -> Path:
    """PySpark's install directory, which holds ``bin/spark-class`` and the jars."""
    try:
        import pyspark
    except ImportError as exc:  # pragma: no cover - pyspark is a dependency
        raise ClusterError(f"a Spark standalone cluster needs pyspark: {exc}") from None
    return Path(pyspark.__file__).parent


def java_command() -> str:
    """The ``java`` that ``spark-class`` will run (``$JAVA_HOME/bin/java``, else PATH)."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        raise ClusterError("a Spark standalone cluster needs Java: no JAVA_HOME and no java "
                           "on PATH (scripts/setup.sh installs openjdk-17-jre-headless)")
    return java


class StandaloneCluster:
    """A master and ``spec.workers`` workers; a context manager (start, then stop)."""

    def __init__(self, log_dir: str | os.PathLike[str], spec: ClusterSpec | None = None) -> None:
        self.spec = spec or ClusterSpec()
        self.log_dir = Path(log_dir)
        self.master_url = ""
        self._daemons: list[tuple[str, subprocess.Popen[bytes], Path]] = []
        #: Each daemon's environment and command line, to start it again (:meth:`restart`).
        self._commands: dict[str, tuple[dict[str, str], list[str]]] = {}

    # ..................................................................... starting

    def start(self) -> StandaloneCluster:
        """Start the master, then the workers; return once all are ready (module doc)."""
        home = spark_home()
        spark_class = home / "bin" / "spark-class"
        if not spark_class.is_file():
            raise ClusterError(f"pyspark at {home} has no bin/spark-class")
        java_command()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        env = self._environment(home)
        self.master_url = f"spark://{HOST}:{_free_port()}"
        try:
            master_log = self._launch("master", env, [
                str(spark_class), "org.apache.spark.deploy.master.Master",
                "--host", HOST, "--port", self.master_url.rsplit(":", 1)[1],
                "--webui-port", "0"])
            workers = []
            for i in range(self.spec.workers):
                work = self.log_dir / f"worker-{i}"
                work.mkdir(exist_ok=True)
                workers.append((f"worker-{i}", self._launch(f"worker-{i}", env, [
                    str(spark_class), "org.apache.spark.deploy.worker.Worker",
                    "--host", HOST, "--port", "0", "--webui-port", "0",
                    "--cores", str(self.spec.cores), "--memory", self.spec.memory,
                    "--work-dir", str(work), self.master_url])))
            self._await("master", master_log, re.compile(re.escape(_LEADER)))
            for name, log in workers:
                self._await(name, log, re.compile(re.escape(_REGISTERED)))
        except BaseException:
            self.stop()
            raise
        return self

    def _environment(self, home: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "SPARK_CONF_DIR", "SPARK_LOG_DIR")}
        env.update(SPARK_HOME=str(home), SPARK_LOCAL_IP=HOST,
                   SPARK_DAEMON_MEMORY=self.spec.daemon_memory,
                   # no REST submission server: it would take the fixed port 6066
                   SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
                   SPARK_DAEMON_JAVA_OPTS="-XX:+UseSerialGC")
        return env

    def _launch(self, name: str, env: dict[str, str], command: list[str]) -> Path:
        self._commands[name] = (env, command)
        log = self.log_dir / f"{name}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(command, env=env, cwd=self.log_dir, stdin=subprocess.DEVNULL,
                                       stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        self._daemons.append((name, process, log))
        return log

    def _await(self, name: str, log: Path, pattern: re.Pattern[str]) -> str:
        """Wait for ``pattern`` in the daemon's log; its first group (or match) back."""
        process = next(p for n, p, _ in self._daemons if n == name)
        deadline = time.monotonic() + self.spec.start_timeout
        while True:
            text = log.read_text(errors="replace")
            found = pattern.search(text)
            if found:
                return found.group(1) if pattern.groups else found.group(0)
            if process.poll() is not None:
                raise ClusterError(f"the Spark {name} exited with status {process.returncode} "
                                   f"before it was ready; {_tail(log)}")
            if time.monotonic() > deadline:
                raise ClusterError(f"the Spark {name} was not ready after "
                                   f"{self.spec.start_timeout:.0f} s; {_tail(log)}")
            time.sleep(0.1)

    # ..................................................................... failures

    def kill(self, name: str) -> None:
        """SIGKILL a daemon's process group at once, as when its machine dies: a worker
        takes its executors and their Python workers with it. For failure tests."""
        process = next(p for n, p, _ in self._daemons if n == name)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()

    def restart(self, name: str) -> None:
        """Start a worker again (after :meth:`kill`), with its command; returns once it has
        registered with the master. Its earlier log is kept as ``<name>.log.<n>``."""
        entry = next(d for d in self._daemons if d[0] == name)
        _end(entry[1])
        self._daemons.remove(entry)
        log = entry[2]
        n = 1
        while log.with_name(f"{log.name}.{n}").exists():
            n += 1
        log.rename(log.with_name(f"{log.name}.{n}"))
        env, command = self._commands[name]
        self._await(name, self._launch(name, env, command), re.compile(re.escape(_REGISTERED)))

    # ..................................................................... stopping

    def stop(self) -> None:
        """End every daemon (workers first) with its process group; idempotent."""
        for name, process, _ in reversed(self._daemons):
            _end(process)
        self._daemons = []

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    def logs(self) -> dict[str, Path]:
        """Each running daemon's log file, by name (``master``, ``worker-0``, ...)."""
        return {name: log for name, _, log in self._daemons}

    def processes(self, name: str) -> list[int]:
        """The live processes of a daemon, from ``/proc``: its process group (a worker:
        its JVM and its executors' JVMs) and their descendants (the executors' Python
        workers, which PySpark's daemon puts in groups of their own); for failure tests."""
        group = next(p for n, p, _ in self._daemons if n == name).pid
        parents: dict[int, tuple[int, int]] = {}  # pid -> (parent, process group)
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue  # ended meanwhile
                # (the fields after the command's parenthesis: state, ppid, pgrp, ...)
                fields = stat.rsplit(")", 1)[1].split()
                parents[int(entry.name)] = (int(fields[1]), int(fields[2]))
        found = {pid for pid, (_, pgrp) in parents.items() if pgrp == group}
        grew = True
        while grew:
            more = {pid for pid, (ppid, _) in parents.items() if ppid in found} - found
            found |= more
            grew = bool(more)
        return sorted(found)


def _free_port() -> int:
    """A port free on loopback now. The workers start beside the master (they retry until
    it listens), so its port is chosen here, not read from its log."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def _end(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the daemon's process group (its own session: the daemon, a worker's
    executors and their Python workers), SIGKILL what is left after ``grace`` seconds."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # executors the daemon left behind
    except ProcessLookupError:
        pass
    process.wait()


def _tail(log: Path, lines: int = 30) -> str:
    text = log.read_text(errors="replace").splitlines()[-lines:]
    return f"the end of {log}:\n" + "\n".join(text)


__all__ = ["HOST", "ClusterError", "ClusterSpec", "StandaloneCluster", "java_command",
           "spark_home"]
