"""A private memcached for the benchmarks: the Debian package, started on loopback.

The cache many teams put in front of MySQL instead of a dataflow (the Noria paper's
Figure 7 compares with it). Debian's ``memcached`` package (installed with apt when missing,
as ``scripts/setup.sh`` installs it for the tests), run as Debian's service runs it
(``/etc/memcached.conf``: 64 MB of cache, 4 worker threads, loopback only) but on a free
port of its own and with UDP off, so that it never meets another memcached on the machine.
Used by ``bench.vote_wire``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from typing import Any

from bench.common import stop_process
from bench.mariadb import apt_install

#: Debian's defaults (``/etc/memcached.conf``), UDP off.
MEMCACHED_OPTIONS = ["-m", "64", "-t", "4", "-c", "1024", "-U", "0"]


def free_port() -> int:
    """A TCP port on loopback that nothing listens on (the OS's choice)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Memcached:
    """A private memcached on loopback (``port`` chosen free when not given)."""

    def __init__(self, port: int | None = None, options: list[str] = MEMCACHED_OPTIONS) -> None:
        self.port = port or free_port()
        self.options = list(options)
        self.proc: subprocess.Popen[bytes] | None = None

    @staticmethod
    def ensure_installed(log: Any) -> None:
        if shutil.which("memcached"):
            return
        log("installing memcached with apt")
        apt_install(["memcached"])

    def start(self) -> None:
        # memcached refuses to run as root unless told which user to be.
        user = ["-u", "root"] if os.geteuid() == 0 else []
        self.proc = subprocess.Popen(
            ["memcached", "-l", "127.0.0.1", "-p", str(self.port), *user, *self.options],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                    conn.sendall(b"version\r\n")
                    if conn.recv(64).startswith(b"VERSION"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"memcached did not start on port {self.port}")
            time.sleep(0.1)

    def client(self) -> Any:
        """A pymemcache client (one per thread: a client is one connection)."""
        from pymemcache.client.base import Client

        return Client(("127.0.0.1", self.port), no_delay=True)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, 30)
