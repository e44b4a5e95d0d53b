"""rivulet's MySQL server in a process of its own, for the benchmarks over the wire.

A benchmark's load generators and rivulet must not share a GIL, so the server runs in a
``spawn``-ed process: it opens the database, runs the benchmark's ``setup`` (a module-level
function, so that it can be sent to the process: tables, data, filled views), then serves
on a port the OS chooses, as ``rivulet serve`` does (its event loop, its GIL switch
interval). The parent talks to it over a pipe: ``settle`` (wait until the views hold every
write) and ``stop``. Used by ``bench.vote_wire`` and ``bench.transactions``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: ``rivulet serve``'s GIL switch interval (rivulet/cli/).
SERVE_SWITCH_INTERVAL = 0.0005


def _serve(directory: str, setup: Callable[..., None], setup_args: tuple[Any, ...],
           switch_interval: float, pipe: Any) -> None:
    """The server process: open, set up, serve until told to stop."""
    sys.setswitchinterval(switch_interval)
    import rivulet
    from rivulet.server.auth import LOOPBACK, UserStore
    from rivulet.server.mysql.server import MySQLServer, new_event_loop

    db = rivulet.open(directory)
    UserStore(directory).set_user("bench", "", LOOPBACK)  # the user MariaDB's clients use
    setup(db, *setup_args)
    loop = new_event_loop()  # as rivulet serve does
    server = MySQLServer(db, port=0)
    loop.run_until_complete(server.start())

    def commands() -> None:
        while True:
            command = pipe.recv()
            if command == "settle":
                db.settle()
                pipe.send("settled")
            elif command == "stop":
                loop.call_soon_threadsafe(loop.stop)
                return

    threading.Thread(target=commands, daemon=True).start()
    pipe.send(("ready", server.port))
    loop.run_forever()
    loop.run_until_complete(server.stop())
    db.close()
    pipe.send("stopped")


class RivuletServerProcess:
    """The server process, started and set up (its ``port`` and ``pid`` known) once the
    constructor returns."""

    def __init__(self, directory: Path, setup: Callable[..., None], setup_args: tuple[Any, ...],
                 ctx: Any, *, switch_interval: float = SERVE_SWITCH_INTERVAL,
                 start_timeout: float = 1800) -> None:
        self.pipe, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, name="rivulet-server",
                                   args=(str(directory), setup, setup_args, switch_interval,
                                         child))
        self.process.start()
        if not self.pipe.poll(start_timeout):
            raise RuntimeError("the rivulet server did not start")
        _, self.port = self.pipe.recv()
        self.pid: int = self.process.pid

    def settle(self) -> None:
        self.pipe.send("settle")
        self.pipe.recv()

    def stop(self) -> None:
        if self.process.is_alive():
            self.pipe.send("stop")
            if self.pipe.poll(60):
                self.pipe.recv()
            self.process.join(60)
