"""Running the HTTP API: uvicorn on a thread of its own (``rivulet serve`` does).

Why apart from the app: an application (:func:`rivulet.server.http.app.make_app`) can be
served by any ASGI server, or embedded in another application; this is the one rivulet
runs itself, bound in the caller's thread so that a busy port is the caller's exception.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

import uvicorn
from starlette.types import ASGIApp


@dataclass
class HttpServer:
    """A running HTTP server (uvicorn on its own thread and event loop)."""

    server: uvicorn.Server
    thread: threading.Thread
    host: str
    port: int

    tls: bool = False

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting, let requests in flight finish (up to ``timeout``), and return."""
        self.server.should_exit = True
        self.thread.join(timeout)


def serve_http(app: ASGIApp, host: str = "127.0.0.1", port: int = 8080, *,
               start_timeout: float = 10.0, tls_cert: str | None = None,
               tls_key: str | None = None) -> HttpServer:
    """Serve ``app`` on ``host:port`` (``port=0``: any free port, see ``.port``) until
    ``.stop()``. Returns once the server accepts; raises ``OSError`` if the port is taken.

    The socket is bound here, in the caller's thread, so that a busy port is an exception
    the caller sees (uvicorn would log it and exit its thread)."""
    try:
        sock = _listen(host, port)
    except OSError as exc:
        raise OSError(exc.errno,
                      f"HTTP API: cannot listen on {host}:{port}: {exc.strerror}") from None
    bound = sock.getsockname()[1]
    config = uvicorn.Config(app, host=host, port=bound, log_level="warning", access_log=False,
                            lifespan="off", ssl_certfile=tls_cert, ssl_keyfile=tls_key)
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # SystemExit included: reported by serve_http
            failure.append(exc)
        finally:
            sock.close()

    thread = threading.Thread(target=run, name="rivulet-http", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout
    while not server.started:
        if failure or not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise OSError(
                f"the HTTP server did not start on {host}:{bound}: {failure or 'timeout'}")
        time.sleep(0.01)
    return HttpServer(server, thread, host, bound, tls=tls_cert is not None)


def _listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket. Its protocol must say TCP (not 0, as ``socket.create_server``
    leaves it): asyncio sets TCP_NODELAY on accepted connections only then, and without it
    every keep-alive response waits 40 ms for a delayed ACK."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    return sock


__all__ = ["HttpServer", "serve_http"]
