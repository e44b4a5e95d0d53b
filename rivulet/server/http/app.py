"""The HTTP/JSON API: read views by key, write rows, change the program, observe it.

``make_app(db)`` returns an ASGI application (Starlette) over an open database;
``serve_http(app, host, port)`` runs it with uvicorn on a thread (``rivulet serve`` does).

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

Threads: the engine's blocking calls (commits, upqueries, migrations, scans, stats under
the graph lock) run in Starlette's thread pool so that the event loop keeps serving. Reads
that cannot block (full views, ``block=false``) are answered on the event loop, where a
dict lookup costs less than the hand-off to a pool thread and back (see ``_read``).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import functools
import json
import logging
import math
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import uvicorn
from sqlglot import exp
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rivulet.engine.database import Database
from rivulet.engine.limits import Limits
from rivulet.engine.views import NOT_READY, View
from rivulet.errors import CatchUpTimeout, ProgramError, RivuletError, coded_class, error_code
from rivulet.server.auth import UserStore
from rivulet.server.http import graphviz
from rivulet.server.http.metrics import CONTENT_TYPE, RequestCounter, render_metrics
from rivulet.sql.parse import parse_one, split_statements
from rivulet.values.schema import TableSchema, coerce_value

log = logging.getLogger("rivulet.http")

Verify = Callable[[Database, Sequence[str] | None], Any]


class ApiError(Exception):
    """An error answered as ``{"error": message, "kind": kind}`` with ``status``."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


# --------------------------------------------------------------------------- JSON


def _json_value(value: Any) -> Any:
    """JSON for the values rows hold that JSON lacks: dates and datetimes as ISO 8601,
    DECIMAL as a string (exact; a JSON number would be read as a binary float), binary
    data as base64."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class Json(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(content, default=_json_value, ensure_ascii=False,
                          separators=(",", ":")).encode()


def _rows(rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    return [_finite(list(r)) for r in rows]


def _finite(row: list[Any]) -> list[Any]:
    """NaN and infinities have no JSON form: they are sent as null."""
    for i, v in enumerate(row):
        if isinstance(v, float) and not math.isfinite(v):
            row[i] = None
    return row


async def _json_body(request: Request) -> Any:
    body = await request.body()
    if not body.strip():
        raise ApiError(400, "bad_request", f"{request.method} {request.url.path} needs a JSON body")
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:  # bad JSON, bad UTF-8, too deep
        raise ApiError(400, "bad_json", f"request body is not valid JSON: {exc}") from None


async def _optional_json_body(request: Request) -> Any:
    body = await request.body()
    return await _json_body(request) if body.strip() else None


def _flag(request: Request, name: str, default: bool) -> bool:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on", ""):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ApiError(400, "bad_request",
                   f"query parameter {name!r} must be true or false, got {raw!r}")


def _int_param(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, "bad_request",
                       f"query parameter {name!r} must be an integer, got {raw!r}") from None
    if value < 0:
        raise ApiError(400, "bad_request", f"query parameter {name!r} must not be negative")
    return value


# --------------------------------------------------------------------------- errors


def _error(status: int, kind: str, message: str) -> Json:
    return Json({"error": message, "kind": kind}, status_code=status)


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
        return _error(exc.status, exc.kind, str(exc))

    async def rivulet_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RivuletError)
        status, kind = _classify(db, exc)
        if status == 500:
            log.warning("%s %s: %s", request.method, request.url.path, exc)
        return _error(status, kind, str(exc))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http")
        message = (f"no endpoint {request.method} {request.url.path}"
                   if exc.status_code in (404, 405) else str(exc.detail))
        return _error(exc.status_code, kind, message)

    async def bug(request: Request, exc: Exception) -> Response:
        log.exception("%s %s failed", request.method, request.url.path)
        code = error_code(exc)  # not rivulet's error: a bug (500 "internal")
        return _error(code.http_status, code.http_kind, f"internal error: {exc!r}")

    return {ApiError: api_error, RivuletError: rivulet_error, HTTPException: http_error,
            Exception: bug}


# --------------------------------------------------------------------------- views


def _view(db: Database, name: str) -> View:
    try:
        return db.view(name)
    except ProgramError:
        raise ApiError(404, "not_found", f"unknown view {name!r}") from None


def _table(db: Database, name: str) -> TableSchema:
    schema = db.catalog.table(name)
    if schema is None:
        raise ApiError(404, "not_found", f"unknown table {name!r}")
    return schema


def describe_view(view: View) -> dict[str, Any]:
    """A view's name, columns, parameters (in ``?`` order) and kind of state."""
    plan = view.plan
    names = [c.name for c in plan.root.columns]
    params: list[dict[str, Any]] = [{"position": i} for i in range(plan.param_count)]
    eq_keys = plan.key[: len(plan.key) - (1 if plan.in_list else 0)]
    for column, p in zip(eq_keys, plan.key_params):
        params[p].update(column=names[column], match="=")
    for p in plan.in_list:
        params[p].update(column=names[plan.key[-1]], match="IN")
    for bound in plan.range_bounds:
        assert plan.range_column is not None  # bounds are on the range column
        params[bound.param].update(column=names[plan.range_column], match=bound.op)
    return {"name": view.name, "columns": list(view.columns), "parameters": params,
            "partial": view.partial, "sql": plan.sql}


def _key_params(request: Request) -> list[Any]:
    """The ``?`` values of a read: repeated ``key=`` (strings, converted to the parameter's
    type by the view), or one ``key=`` holding a JSON array (typed values, null)."""
    keys = request.query_params.getlist("key")
    if len(keys) == 1 and keys[0].lstrip().startswith("["):
        try:
            values = json.loads(keys[0])
        except (ValueError, RecursionError) as exc:
            raise ApiError(400, "bad_json", f"key is not a valid JSON array: {exc}") from None
        if not isinstance(values, list) or any(isinstance(v, (list, dict)) for v in values):
            raise ApiError(400, "bad_request", "key must be a JSON array of scalar values")
        return values
    return keys


def _lookup_keys(body: Any) -> list[Any]:
    if not isinstance(body, list):
        raise ApiError(400, "bad_request", "the lookup body must be a JSON list of keys")
    keys = []
    for i, key in enumerate(body):
        if isinstance(key, list):
            if any(isinstance(v, (list, dict)) for v in key):
                raise ApiError(400, "bad_request", f"key {i + 1}: values must be scalars")
            keys.append(tuple(key))
        elif isinstance(key, dict):
            raise ApiError(400, "bad_request", f"key {i + 1}: a key is a value or a list of values")
        else:
            keys.append(key)
    return keys


def _answer(view: View, rows: Any, limits: Limits) -> Json:
    if rows is NOT_READY:
        return Json({"view": view.name, "ready": False,
                     "message": "not in memory yet: being computed, ask again"}, status_code=202)
    limits.check_result(len(rows))
    return Json({"view": view.name, "columns": list(view.columns), "rows": _rows(rows)})


def _is_json(request: Request, body: bytes) -> bool:
    """A JSON body, by its content type or its first character (SQL never starts with
    ``{``; ``curl -d`` sends JSON labelled as a form)."""
    return request.headers.get("content-type", "").startswith("application/json") or \
        body.lstrip()[:1] == b"{"


def _sql_body(request: Request, body: bytes) -> str:
    """The SQL of a ``PUT /views/{name}`` body: plain text, or JSON ``{"sql": ...}``."""
    if _is_json(request, body):
        try:
            parsed = json.loads(body)
        except (ValueError, RecursionError) as exc:  # bad JSON, bad UTF-8, too deep
            raise ApiError(400, "bad_json", f"request body is not valid JSON: {exc}") from None
        sql = parsed.get("sql") if isinstance(parsed, dict) else parsed
        if not isinstance(sql, str):
            raise ApiError(400, "bad_request", 'the JSON body must be {"sql": "SELECT ..."}')
        return sql
    try:
        return body.decode()
    except UnicodeDecodeError:
        raise ApiError(400, "bad_request", "the SQL body is not UTF-8 text") from None


# --------------------------------------------------------------------------- the app


@dataclass(frozen=True)
class Api:
    """The endpoints, closed over one database (no module-level state)."""

    db: Database
    verify: Verify | None
    requests: RequestCounter

    async def wait_lsn(self, request: Request) -> None:
        """``min_lsn=N``: answer only once write batch N is visible (read your writes)."""
        lsn = _int_param(request, "min_lsn")
        if lsn is not None and self.db.applied_lsn < lsn:
            if lsn > self.db.lsn:
                raise ApiError(400, "bad_request",
                               f"min_lsn {lsn} is ahead of the last commit ({self.db.lsn})")
            await run_in_threadpool(self.db.wait_for, lsn)

    # ..................................................................... views

    async def list_views(self, request: Request) -> Response:
        return Json({"views": [describe_view(self.db.view(n)) for n in self.db.views()]})

    async def read_view(self, request: Request) -> Response:
        view = _view(self.db, request.path_params["name"])
        params = _key_params(request)
        block = _flag(request, "block", True)
        await self.wait_lsn(request)
        return _answer(view, await _read(view, functools.partial(view.lookup, *params), block),
                       self.db.limits)

    async def lookup_view(self, request: Request) -> Response:
        view = _view(self.db, request.path_params["name"])
        keys = _lookup_keys(await _json_body(request))
        block = _flag(request, "block", True)
        await self.wait_lsn(request)
        return _answer(view, await _read(view, functools.partial(view.lookup_many, keys), block),
                       self.db.limits)

    async def scan_view(self, request: Request) -> Response:
        view = _view(self.db, request.path_params["name"])
        limit = _int_param(request, "limit")
        await self.wait_lsn(request)
        rows = await run_in_threadpool(view.scan)
        rows = rows if limit is None else rows[:limit]
        self.db.limits.check_result(len(rows))
        return Json({"view": view.name, "columns": list(view.columns), "rows": _rows(rows)})

    async def put_view(self, request: Request) -> Response:
        name = request.path_params["name"]
        sql = _sql_body(request, await request.body())
        if not sql.strip():
            raise ApiError(400, "bad_request",
                           f"PUT /views/{name} needs the view's SELECT as its body")
        if sql.lstrip()[:6].upper() == "CREATE":
            raise ApiError(400, "sql", f"PUT /views/{name} takes the view's SELECT (the name comes "
                           "from the URL), not a CREATE VIEW statement")
        existed = self.db.catalog.view(name) is not None
        view = await run_in_threadpool(self.db.create_view, name, sql, replace=True)
        return Json(describe_view(view), status_code=200 if existed else 201)

    async def drop_view(self, request: Request) -> Response:
        name = request.path_params["name"]
        _view(self.db, name)
        await run_in_threadpool(self.db.drop_view, name)
        return Json({"dropped": name})

    # ..................................................................... tables

    async def list_tables(self, request: Request) -> Response:
        tables = [
            {"name": t.name, "columns": [{"name": c.name, "type": c.sql_type or c.kind,
                                          "nullable": c.nullable} for c in t.columns],
             "primary_key": [t.columns[i].name for i in t.primary_key]}
            for t in self.db.catalog.tables.values()
        ]
        return Json({"tables": tables})

    async def insert_rows(self, request: Request) -> Response:
        schema = _table(self.db, request.path_params["name"])
        body = await _json_body(request)
        rows = [body] if isinstance(body, dict) else body
        if not isinstance(rows, list) or not all(isinstance(r, (list, dict)) for r in rows):
            raise ApiError(400, "bad_request",
                           "the body must be a JSON list of rows "
                           "(objects by column name, or arrays)")
        inserted = await run_in_threadpool(self.db.table(schema.name).insert_many, rows)
        return Json({"inserted": inserted, "lsn": self.db.lsn}, status_code=201)

    def _row_key(self, schema: TableSchema, raw: str) -> tuple[str, list[Any]]:
        """The WHERE clause and values selecting one row by primary key: the key in the
        path is the value itself, or a JSON array for a composite key."""
        if not schema.primary_key:
            raise ApiError(400, "bad_request", f"table {schema.name!r} has no primary key")
        columns = [schema.columns[i] for i in schema.primary_key]
        values: list[Any] = [raw]
        if len(columns) > 1 or raw.lstrip().startswith("["):
            try:
                parsed = json.loads(raw)
            except (ValueError, RecursionError):
                parsed = None
            if not isinstance(parsed, list) or len(parsed) != len(columns):
                names = ", ".join(c.name for c in columns)
                raise ApiError(400, "bad_request",
                               f"the primary key of {schema.name!r} is ({names}): give it as a "
                               f"JSON array of {len(columns)} value(s), got {raw!r}")
            values = parsed
        coerced = [coerce_value(c, v, where=f"primary key column {c.name!r}")
                   for c, v in zip(columns, values)]
        return " AND ".join(f"`{c.name}` = ?" for c in columns), coerced

    async def update_row(self, request: Request) -> Response:
        schema = _table(self.db, request.path_params["name"])
        where, key = self._row_key(schema, request.path_params["key"])
        body = await _json_body(request)
        if not isinstance(body, dict) or not body:
            raise ApiError(400, "bad_request",
                           "the body must be a JSON object of column: new value")
        for column in body:
            if not schema.has_column(column):
                raise ApiError(400, "schema", f"table {schema.name!r} has no column {column!r}")
        assignments = {schema.columns[schema.position(c)].name: v for c, v in body.items()}
        table = self.db.table(schema.name)
        updated = await run_in_threadpool(lambda: table.update(where, key, **assignments))
        # MySQL counts rows *changed*: 0 is also the answer for a row already so.
        if not updated and not await run_in_threadpool(self._row_exists, schema, key):
            raise ApiError(404, "not_found", f"no row of {schema.name!r} has primary key {key!r}")
        return Json({"updated": updated, "lsn": self.db.lsn})

    def _row_exists(self, schema: TableSchema, key: list[Any]) -> bool:
        wanted = key[0] if len(key) == 1 else tuple(key)
        _, rows = self.db.storage.lookup(schema, schema.primary_key, [wanted])
        pk = schema.primary_key
        return any((r[pk[0]] if len(pk) == 1 else tuple(r[i] for i in pk)) == wanted for r in rows)

    async def delete_row(self, request: Request) -> Response:
        schema = _table(self.db, request.path_params["name"])
        where, key = self._row_key(schema, request.path_params["key"])
        deleted = await run_in_threadpool(self.db.table(schema.name).delete, where, key)
        if not deleted:
            raise ApiError(404, "not_found", f"no row of {schema.name!r} has primary key {key!r}")
        return Json({"deleted": deleted, "lsn": self.db.lsn})

    # ..................................................................... SQL

    async def sql(self, request: Request) -> Response:
        sql, params = await _sql_request(request)
        statements = split_statements(sql)
        if len(statements) != 1:
            raise ApiError(400, "sql", f"POST /sql runs one statement, got {len(statements)}")
        if request.scope.get(READ_ONLY_SCOPE) and not isinstance(parse_one(sql), exp.Query):
            raise ApiError(403, "forbidden", f"user {request.scope.get(USER_SCOPE)!r} is "
                           "read-only: POST /sql takes only a SELECT")
        result = await run_in_threadpool(self.db.execute, sql, params)
        if isinstance(result, list):
            self.db.limits.check_result(len(result))
            columns = self.db.prepare(sql).columns  # cached by execute: no second parse
            return Json({"columns": list(columns), "rows": _rows(result)})
        return Json({"rowcount": result, "lsn": self.db.lsn})

    # ..................................................................... operations

    async def health(self, request: Request) -> Response:
        db = self.db
        body: dict[str, Any] = {"lsn": db.lsn, "applied_lsn": db.applied_lsn}
        if db.closed:
            return Json({"status": "closed", **body}, status_code=503)
        if db.failure is not None:
            return Json({"status": "failed", "error": repr(db.failure), **body}, status_code=503)
        return Json({"status": "ok", **body})

    async def metrics(self, request: Request) -> Response:
        self.db.check_open()
        text = await run_in_threadpool(render_metrics, self.db, self.requests)
        return Response(text, media_type=CONTENT_TYPE)

    async def graph(self, request: Request) -> Response:
        self.db.check_open()
        fmt = request.query_params.get("format", "dot").lower()
        if fmt not in ("dot", "svg"):
            raise ApiError(400, "bad_request", f"format must be dot or svg, got {fmt!r}")
        dot = await run_in_threadpool(graphviz.dataflow_dot, self.db)
        if fmt == "dot":
            return Response(dot, media_type="text/vnd.graphviz; charset=utf-8")
        try:
            svg = await run_in_threadpool(graphviz.render_svg, dot)
        except graphviz.GraphvizMissing as exc:
            raise ApiError(501, "unavailable", str(exc)) from None
        return Response(svg, media_type="image/svg+xml")

    async def verify_views(self, request: Request) -> Response:
        names = _view_names(await _optional_json_body(request))
        views = [_view(self.db, n).name for n in names] or None  # none named: every view
        verify = self.verify or _default_verify()
        try:
            report = await run_in_threadpool(verify, self.db, views)
        except RivuletError:
            raise
        except Exception as exc:  # Spark or Java trouble: not the client's fault, not a crash
            log.exception("verification failed")
            raise ApiError(500, "verify_failed", f"verification failed: {exc!r}") from exc
        return Json(report.to_dict() if hasattr(report, "to_dict") else report)


def _view_names(body: Any) -> list[str]:
    """The views ``POST /verify`` names: a JSON list, ``{"views": [...]}`` (what ``rivulet
    verify --server`` sends), or no body."""
    if isinstance(body, dict) and set(body) <= {"views"}:
        body = body.get("views")
    if body is None:
        return []
    if not isinstance(body, list) or not all(isinstance(v, str) for v in body):
        raise ApiError(400, "bad_request",
                       'the body must be a JSON list of view names, {"views": [...]}, or empty')
    return body


async def _read(view: View, read: Callable[..., Any], block: bool) -> Any:
    """Run ``read`` (a lookup) where it costs least without ever blocking the event loop.

    A read that cannot wait (a full view, or ``block=false``) is a dict lookup: answered
    here, it is cheaper than the hop to a pool thread and back (README: 4.4k vs 3.2k
    requests/s). A blocking read of a partial view may miss and run an upquery, so it goes
    to the pool. (Probing it here with ``block=False`` first would start a background
    fill on a miss as well as the pool's own: two upqueries, and a phantom hit counted.)
    """
    if not block or not view.partial:
        return read(block=False)
    return await run_in_threadpool(read)


async def _sql_request(request: Request) -> tuple[str, list[Any]]:
    """``{"sql": "...", "params": [...]}``, or the statement as a text body."""
    if not _is_json(request, await request.body()):
        sql = _sql_body(request, await request.body())
        params: Any = []
    else:
        body = await _json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("sql"), str):
            raise ApiError(400, "bad_request", 'the body must be {"sql": "...", "params": [...]}')
        sql, params = body["sql"], body.get("params", [])
        if not isinstance(params, list) or any(isinstance(p, (list, dict)) for p in params):
            raise ApiError(400, "bad_request", "params must be a JSON list of scalar values")
    if not sql.strip():
        raise ApiError(400, "sql", "empty statement")
    return sql, params


def _default_verify() -> Verify:
    try:
        from rivulet.pipeline.verify import verify
    except ImportError as exc:
        raise ApiError(503, "unavailable", f"Spark verification is not available: {exc}") from None
    return verify


#: Largest request body accepted (bytes); larger ones get 413 before they are read.
MAX_BODY = 64 * 1024 * 1024


class LimitBody:
    """ASGI middleware refusing request bodies over ``limit`` bytes with 413, by their
    Content-Length up front, or, for a chunked body, as soon as the bytes read pass it."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise ApiError(413, "too_large", self._message())
            return message

        await self.app(scope, limited, send)

    def _message(self) -> str:
        return f"request body over {self.limit} bytes"

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _error(413, "too_large", self._message())(scope, receive, send)


USER_SCOPE, READ_ONLY_SCOPE = "rivulet.user", "rivulet.read_only"


class Authenticate:
    """ASGI middleware: HTTP Basic authentication against the MySQL users, and read-only
    users kept to reads (every GET, ``POST .../lookup``, ``POST /verify``; ``POST /sql``
    checks its statement itself, see ``Api.sql``)."""

    def __init__(self, app: ASGIApp, users: UserStore) -> None:
        self.app = app
        self.users = users

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == "/health":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        name, password = _basic_credentials(dict(scope["headers"]).get(b"authorization"))
        account = None if name is None else self.users.check_password(
            name, password, client[0] if client else None)
        if account is None:
            response = _error(401, "unauthorized", "authentication required: HTTP Basic with "
                              "a rivulet user's name and password")
            response.headers["WWW-Authenticate"] = 'Basic realm="rivulet", charset="UTF-8"'
            await response(scope, receive, send)
            return
        scope[USER_SCOPE], scope[READ_ONLY_SCOPE] = account.name, account.read_only
        if account.read_only and not _is_read(scope["method"], scope["path"]):
            await _error(403, "forbidden", f"user {account.name!r} is read-only: "
                         f"{scope['method']} {scope['path']} is denied")(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _basic_credentials(header: bytes | None) -> tuple[str | None, str]:
    """(name, password) of an ``Authorization: Basic`` header; no header is ``root``
    with an empty password (as ``mysql -u root`` without one); a malformed one, no user."""
    if header is None:
        return "root", ""
    scheme, _, value = header.partition(b" ")
    if scheme.lower() != b"basic":
        return None, ""
    try:
        name, sep, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None, ""
    return (name, password) if sep else (None, "")


def _is_read(method: str, path: str) -> bool:
    return method in ("GET", "HEAD") or (method == "POST" and (
        path.endswith("/lookup") or path in ("/sql", "/verify")))


class CountRequests:
    """ASGI middleware counting responses by endpoint, method and status (for /metrics)."""

    def __init__(self, app: ASGIApp, counter: RequestCounter) -> None:
        self.app = app
        self.counter = counter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = [500]

        async def send_counting(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_counting)
        finally:
            endpoint = scope.get("endpoint")
            name = getattr(endpoint, "__name__", "none")
            self.counter.add(name, scope["method"], status[0])


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
        Route("/verify", api.verify_views, methods=["POST"]),
    ]
    app = Starlette(routes=routes, exception_handlers=_exception_handlers(db))
    app.add_middleware(LimitBody, limit=max_body)
    if users is not None:
        app.add_middleware(Authenticate, users=users)
    app.add_middleware(CountRequests, counter=api.requests)
    app.state.api = api
    return app


# --------------------------------------------------------------------------- running


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
