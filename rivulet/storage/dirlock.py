"""One writer per data directory: the exclusive lock its opening process holds.

Why this module exists: two processes that write one data directory (a server, and
``rivulet import`` or ``rivulet shell`` run beside it) both number their commits from the
log's last LSN, and from then on every commit of one of them fails on a duplicate LSN
while its views go stale. So the process that opens a directory for writing takes an
exclusive ``flock`` on ``<dir>/rivulet.lock`` and writes there who it is (its pid, its
command, and the ports a server listens on, once it does); a second opener stops at once,
with an error that names the holder. The kernel drops a ``flock`` when the holding process
ends, however it ends, so a crashed holder leaves nothing to clean up: the next opener
takes the lock over. The lock guards the process, not the object: a second
:class:`~rivulet.engine.database.Database` on the same directory in the same process is
refused too. A server's replica processes open the directory to read (followers), and take
no lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from pathlib import Path
from typing import Any

from rivulet.errors import DataDirectoryInUseError

#: The lock file, in the data directory.
LOCK_FILE = "rivulet.lock"


class DataDirectoryLock:
    """The exclusive lock on a data directory, held from construction to :meth:`release`.

    Raises :class:`DataDirectoryInUseError` if another open holds it."""

    def __init__(self, directory: str | Path) -> None:
        Path(directory).mkdir(parents=True, exist_ok=True)
        self.path = Path(directory) / LOCK_FILE
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = _holder(self.path)
            error = DataDirectoryInUseError(
                f"data directory {str(directory)!r} is in use by {holder}: one process "
                "writes a data directory; stop it first, or go through that server (rivulet "
                "shell --server mysql://USER@HOST:PORT, or any MySQL client)")
            error.holder = holder
            raise error from None
        self._fd: int | None = fd
        self._about: dict[str, Any] = {}
        self.describe()

    @property
    def held(self) -> bool:
        return self._fd is not None

    def describe(self, **about: Any) -> None:
        """Write who holds the lock, for the error a second opener gets: this process's pid
        and command, and ``about`` (a server's ``mysql_port`` and ``http_port``)."""
        if self._fd is None:
            return
        self._about.update(about)
        record = {"pid": os.getpid(), "command": " ".join(sys.argv)[:200], **self._about}
        text = json.dumps(record).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, text, 0)

    def release(self) -> None:
        """Let the directory go (closing the file drops the lock); idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.ftruncate(fd, 0)
            os.close(fd)


def _holder(path: Path) -> str:
    """Who holds the lock, from what it wrote: 'process 1234 (rivulet serve ..., MySQL
    port 3307, HTTP port 8080)'; 'another process' if it wrote nothing yet."""
    try:
        record = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        record = {}
    if not isinstance(record, dict) or "pid" not in record:
        return "another process"
    own = " (this process)" if record["pid"] == os.getpid() else ""
    details = [str(record.get("command") or "").strip()]
    for key, label in (("mysql_port", "MySQL port"), ("http_port", "HTTP port")):
        if record.get(key) is not None:
            details.append(f"{label} {record[key]}")
    shown = ", ".join(d for d in details if d)
    return f"process {record['pid']}{own}" + (f" ({shown})" if shown else "")
