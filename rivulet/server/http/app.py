"""The HTTP/JSON API: read views by key, write rows, change the program, observe it.

``make_app(db)`` returns an ASGI application (Starlette) over an open database;
``serve_http(app, host, port)`` (:mod:`.serve`) runs it with uvicorn on a thread
(``rivulet serve`` does).

Endpoints (README, "HTTP API"):

=======  ===============================  ==============================================
GET      /views                           views: columns, parameters, partial or full
GET      /views/{name}?key=...            rows for one set of parameters
POST     /views/{name}/lookup             rows for a JSON list of keys (one batch)
GET      /views/{name}/rows               every row (a scan)
PUT      /views/{name}                    install (or replace) a view: the SELECT as body
DELETE   /views/{name}                    drop a view
GET      /tables                          tables, columns, primary keys
POST     /tables/{name}/rows              insert a JSON list of rows (atomically)
PATCH    /tables/{name}/rows/{key}        update the row with this primary key
DELETE   /tables/{name}/rows/{key}        delete the row with this primary key
POST     /sql                             one statement, ``{"sql": ..., "params": [...]}``
POST     /verify                          recompute views on Spark and compare
GET      /health                          200 with LSNs, 503 once closed or failed
GET      /metrics                         Prometheus text
GET      /graph[?format=svg]              the dataflow in Graphviz dot (or SVG)
=======  ===============================  ==============================================

With a user store (``make_app(db, users=UserStore(path))``, as ``rivulet serve`` does),
requests authenticate with HTTP Basic against the MySQL server's users (auth.py): 401
without valid credentials (none at all count as ``root`` with an empty password, from
loopback only unless root may connect from anywhere), 403 for a read-only user's write or
program change. ``GET /health`` needs no credentials (load balancers probe it).

Errors are JSON ``{"error": message, "kind": ...}``: 400 for bad input (the message names
the problem; for SQL the construct and where), 404 for an unknown view, table or row, 409
for a constraint or program conflict, 503 when the database is closed or failed. Nothing
a client sends produces a 500; that is kept for rivulet's own bugs. An engine error's status
and kind are its class's entry in ``rivulet.errors.ERROR_CODES``, the table the MySQL
server's error codes come from too.

The endpoints are :class:`rivulet.server.http.handlers.Api`; what a request carries is
read by :mod:`.inputs`, answers and errors are encoded by :mod:`.responses`; the body
limit, authentication and request counts are :mod:`.middleware`; :mod:`.serve` runs the
app with uvicorn. This module assembles them: routes, middleware, and the exception
handlers that turn every error into its JSON answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from rivulet.engine.database import Database
from rivulet.errors import CatchUpTimeout, RivuletError, coded_class, error_code
from rivulet.server.auth import UserStore
from rivulet.server.http.handlers import Api, Verify
from rivulet.server.http.metrics import RequestCounter
from rivulet.server.http.middleware import Authenticate, CountRequests, LimitBody
from rivulet.server.http.responses import ApiError, error_response

log = logging.getLogger("rivulet.http")


#: Errors that say nothing of the request's own fault: while the dataflow has failed, they
#: are answered as the failure (503 "failed"), their likelier cause.
_MASKED_BY_FAILURE = (RivuletError, CatchUpTimeout)


def _classify(db: Database, exc: RivuletError) -> tuple[int, str]:
    """HTTP status and error kind of an engine error: its class's entry in
    :data:`rivulet.errors.ERROR_CODES`, the table the MySQL server's codes come from too."""
    if db.failure is not None and coded_class(exc) in _MASKED_BY_FAILURE:
        return 503, "failed"
    code = error_code(exc)
    return code.http_status, code.http_kind


def _exception_handlers(
        db: Database) -> dict[Any, Callable[[Request, Exception], Awaitable[Response]]]:
    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return error_response(exc.status, exc.kind, str(exc))

    async def rivulet_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RivuletError)
        status, kind = _classify(db, exc)
        if status == 500:
            log.warning("%s %s: %s", request.method, request.url.path, exc)
        return error_response(status, kind, str(exc))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http")
        message = (f"no endpoint {request.method} {request.url.path}"
                   if exc.status_code in (404, 405) else str(exc.detail))
        return error_response(exc.status_code, kind, message)

    async def bug(request: Request, exc: Exception) -> Response:
        log.exception("%s %s failed", request.method, request.url.path)
        code = error_code(exc)  # not rivulet's error: a bug (500 "internal")
        return error_response(code.http_status, code.http_kind, f"internal error: {exc!r}")

    return {ApiError: api_error, RivuletError: rivulet_error, HTTPException: http_error,
            Exception: bug}


#: Largest request body accepted (bytes); larger ones get 413 before they are read.
MAX_BODY = 64 * 1024 * 1024


def make_app(db: Database, *, verify: Verify | None = None, max_body: int = MAX_BODY,
             users: UserStore | None = None) -> Starlette:
    """The HTTP API over ``db``. ``verify(db, view_names or None)`` answers ``POST /verify``
    (default: :func:`rivulet.pipeline.verify.verify`, imported on first use); request bodies
    over ``max_body`` bytes are refused (413); with ``users``, requests authenticate as
    one of them (:class:`Authenticate`), without, the caller vouches for every request
    (an application embedding the API behind its own authentication)."""
    api = Api(db, verify, RequestCounter())
    routes = [
        Route("/health", api.health, methods=["GET"]),
        Route("/metrics", api.metrics, methods=["GET"]),
        Route("/graph", api.graph, methods=["GET"]),
        Route("/views", api.list_views, methods=["GET"]),
        Route("/views/{name}", api.read_view, methods=["GET"]),
        Route("/views/{name}", api.put_view, methods=["PUT"]),
        Route("/views/{name}", api.drop_view, methods=["DELETE"]),
        Route("/views/{name}/rows", api.scan_view, methods=["GET"]),
        Route("/views/{name}/lookup", api.lookup_view, methods=["POST"]),
        Route("/tables", api.list_tables, methods=["GET"]),
        Route("/tables/{name}/rows", api.insert_rows, methods=["POST"]),
        Route("/tables/{name}/rows/{key:path}", api.update_row, methods=["PATCH"]),
        Route("/tables/{name}/rows/{key:path}", api.delete_row, methods=["DELETE"]),
        Route("/sql", api.sql, methods=["POST"]),
        Route("/transaction", api.transaction, methods=["POST"]),
        Route("/verify", api.verify_views, methods=["POST"]),
    ]
    app = Starlette(routes=routes, exception_handlers=_exception_handlers(db))
    app.add_middleware(LimitBody, limit=max_body)
    if users is not None:
        app.add_middleware(Authenticate, users=users)
    app.add_middleware(CountRequests, counter=api.requests)
    app.state.api = api
    return app


__all__ = ["MAX_BODY", "make_app"]
