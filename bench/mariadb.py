"""A private MariaDB server for the benchmarks: the Debian package, started on loopback.

The paper's configuration for its MySQL baseline: the data directory in tmpfs
(``/dev/shm`` by the callers' choice of ``root``), the thread pool, no log flush at commit
(``innodb_flush_log_at_trx_commit=0``), no binary log, a 1 GB buffer pool, and no grant
tables (any user name connects). Its temporary tables live under ``root`` too, not in
``/tmp``, where other work on a shared machine may clean them away mid-query.
``mariadb-server`` is installed with apt when missing.
Used by ``bench.vote_wire``, ``bench.lobsters.run`` and the Lobsters test.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import stop_process

MARIADB_OPTIONS = [
    "--thread-handling=pool-of-threads", "--innodb-flush-log-at-trx-commit=0",
    "--skip-log-bin", "--innodb-buffer-pool-size=1G", "--innodb-doublewrite=0",
    "--skip-name-resolve", "--skip-grant-tables", "--max-connections=500",
]


#: Debian packages mysqlclient is built with (libmariadb's headers, pkg-config, a compiler).
MYSQLCLIENT_BUILD_PACKAGES = ["libmariadb-dev", "pkg-config", "gcc"]


def apt_install(packages: list[str]) -> None:
    """Debian packages, installed with apt-get (as root, or through sudo)."""
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([*sudo, "apt-get", "install", "-y", "--no-install-recommends", *packages],
                   check=True, env=env)


def ensure_mysqlclient(log: Any) -> bool:
    """mysqlclient (``MySQLdb``: libmariadb's C protocol code, the driver a Rails
    application's mysql2 is to Ruby) in this interpreter, installed with pip when missing;
    it has no binary package for Linux, so its build needs are installed with apt first.
    False if that fails (the caller falls back to PyMySQL and says so)."""
    try:
        import MySQLdb  # noqa: F401
        return True
    except ImportError:
        pass
    log("installing mysqlclient (the load generator's MySQL driver) with pip")
    try:
        if not (shutil.which("pkg-config") and shutil.which("gcc")
                and Path("/usr/include/mariadb/mysql.h").exists()):
            apt_install(MYSQLCLIENT_BUILD_PACKAGES)
        subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check",
                        "-q", "mysqlclient"], check=True)
        importlib.invalidate_caches()
        import MySQLdb  # noqa: F401, F811
        return True
    except (OSError, subprocess.CalledProcessError, ImportError) as exc:
        log(f"mysqlclient could not be installed ({exc!r})")
        return False


class MariaDB:
    """A private mariadbd on loopback with its data directory under ``root``."""

    def __init__(self, root: Path, port: int, options: Sequence[str] = MARIADB_OPTIONS) -> None:
        self.root = root
        self.port = port
        self.options = list(options)
        self.data = root / "data"
        self.proc: subprocess.Popen[bytes] | None = None

    @staticmethod
    def ensure_installed(log: Any) -> None:
        if shutil.which("mariadbd") and shutil.which("mariadb-install-db"):
            return
        log("installing mariadb-server with apt")
        apt_install(["mariadb-server"])

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={self.data}",
                        "--user=root", "--skip-test-db",
                        "--auth-root-authentication-method=normal"],
                       check=True, capture_output=True)
        self.proc = subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={self.data}",
             f"--socket={self.root / 'sock'}", f"--port={self.port}", "--bind-address=127.0.0.1",
             "--user=root", f"--pid-file={self.root / 'pid'}",
             f"--log-error={self.root / 'error.log'}", f"--secure-file-priv={self.root}",
             f"--tmpdir={self.root}", *self.options],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.connect(None).close()
                return
            except Exception:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(
                        "mariadbd did not start: see " + str(self.root / "error.log"))
                time.sleep(0.2)

    def connect(self, database: str | None, **options: Any) -> Any:
        """A PyMySQL connection (autocommit; ``options`` go to ``pymysql.connect``)."""
        import pymysql

        return pymysql.connect(host="127.0.0.1", port=self.port, user="bench", database=database,
                               autocommit=True, local_infile=False, charset="utf8mb4",
                               **options)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, 60)
        shutil.rmtree(self.root, ignore_errors=True)


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
