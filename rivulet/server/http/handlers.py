"""The HTTP API's endpoints (:class:`Api`), closed over one database.

Threads: the engine's blocking calls (commits, upqueries, migrations, scans, stats under
the graph lock) run in Starlette's thread pool so that the event loop keeps serving. Reads
that cannot block (full views, ``block=false``) are answered on the event loop, where a
dict lookup costs less than the hand-off to a pool thread and back (see ``_read``).

The routes, middleware and error handling that make these an application are
:mod:`.app`; request inputs are read by :mod:`.inputs`, answers encoded by
:mod:`.responses`.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlglot import exp
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from rivulet.engine.database import Database
from rivulet.engine.limits import Limits
from rivulet.engine.views import NOT_READY, View
from rivulet.errors import ProgramError, RivuletError, error_code
from rivulet.server.http import graphviz
from rivulet.server.http.inputs import (
    flag,
    int_param,
    json_body,
    key_params,
    lookup_keys,
    optional_json_body,
    sql_body,
    sql_request,
    transaction_request,
    view_names,
)
from rivulet.server.http.metrics import CONTENT_TYPE, RequestCounter, render_metrics
from rivulet.server.http.middleware import READ_ONLY_SCOPE, USER_SCOPE
from rivulet.server.http.responses import ApiError, Json, json_rows
from rivulet.sql.control import control_statement
from rivulet.sql.parse import parse_one, split_statements
from rivulet.values.schema import TableSchema, coerce_value

log = logging.getLogger("rivulet.http")

Verify = Callable[[Database, Sequence[str] | None], Any]


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
    bounds = plan.all_range_bounds
    # (a range aggregate's key ends with its bounds: below)
    first = len(plan.key) - (len(bounds) if plan.bounds_keyed else 0)
    eq_keys = plan.key[: first - (1 if plan.in_list else 0)]
    for column, p in zip(eq_keys, plan.key_params):
        params[p].update(column=names[column], match="=")
    for p in plan.in_list:
        params[p].update(column=names[plan.key[-1]], match="IN")
    for p in plan.null_safe:
        params[p].update(match="<=>")
    for p, position in plan.equal_params:
        params[p].update(column=names[plan.key[position]], match="=")
    for position, rest in plan.listed:  # (several IN lists: each one's ``?`` in its place)
        for p in (plan.key_params[position], *rest):
            params[p].update(column=names[plan.key[position]], match="IN")
    if plan.alternatives is not None:  # (``a = ? OR b = ?``: each term on its column)
        for p, term_column in zip(plan.alternatives.params, plan.alternatives.names):
            params[p].update(column=term_column, match="=", under="OR")
    for i, bound in enumerate(plan.range_bounds):
        # (on the range column; a range aggregate's key holds each bound's value, under
        # its column's name)
        at = plan.key[first + i] if plan.bounds_keyed else plan.range_column
        assert at is not None  # a range view
        params[bound.param].update(column=names[at], match=bound.op)
    for other in plan.other_ranges:  # (checked over the first range column's rows)
        for bound in other.bounds:
            params[bound.param].update(column=names[other.column], match=bound.op)
    return {"name": view.name, "columns": list(view.columns), "parameters": params,
            "partial": view.partial, "sql": plan.sql}


def _answer(view: View, rows: Any, limits: Limits) -> Json:
    if rows is NOT_READY:
        return Json({"view": view.name, "ready": False,
                     "message": "not in memory yet: being computed, ask again"}, status_code=202)
    limits.check_result(len(rows))
    return Json({"view": view.name, "columns": list(view.columns), "rows": json_rows(rows)})


@dataclass(frozen=True)
class Api:
    """The endpoints, closed over one database (no module-level state)."""

    db: Database
    verify: Verify | None
    requests: RequestCounter

    async def wait_lsn(self, request: Request) -> None:
        """``min_lsn=N``: answer only once write batch N is visible (read your writes)."""
        lsn = int_param(request, "min_lsn")
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
        params = key_params(request)
        block = flag(request, "block", True)
        await self.wait_lsn(request)
        return _answer(view, await _read(view, functools.partial(view.lookup, *params), block),
                       self.db.limits)

    async def lookup_view(self, request: Request) -> Response:
        view = _view(self.db, request.path_params["name"])
        keys = lookup_keys(await json_body(request))
        block = flag(request, "block", True)
        await self.wait_lsn(request)
        return _answer(view, await _read(view, functools.partial(view.lookup_many, keys), block),
                       self.db.limits)

    async def scan_view(self, request: Request) -> Response:
        view = _view(self.db, request.path_params["name"])
        limit = int_param(request, "limit")
        await self.wait_lsn(request)
        rows = await run_in_threadpool(view.scan)
        rows = rows if limit is None else rows[:limit]
        self.db.limits.check_result(len(rows))
        return Json({"view": view.name, "columns": list(view.columns), "rows": json_rows(rows)})

    async def put_view(self, request: Request) -> Response:
        name = request.path_params["name"]
        sql = sql_body(request, await request.body())
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
            for t in list(self.db.catalog.tables.values())
        ]
        return Json({"tables": tables})

    async def insert_rows(self, request: Request) -> Response:
        schema = _table(self.db, request.path_params["name"])
        body = await json_body(request)
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
        body = await json_body(request)
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
        sql, params = await sql_request(request)
        statements = split_statements(sql)
        if len(statements) != 1:
            raise ApiError(400, "sql", f"POST /sql runs one statement, got {len(statements)}")
        if request.scope.get(READ_ONLY_SCOPE) and not isinstance(parse_one(sql), exp.Query):
            raise ApiError(403, "forbidden", f"user {request.scope.get(USER_SCOPE)!r} is "
                           "read-only: POST /sql takes only a SELECT")
        # (each request is a session of its own: FOREIGN KEYs checked, as a new one's are)
        result = await run_in_threadpool(self.db.execute, sql, params, foreign_key_checks=True)
        if isinstance(result, list):
            self.db.limits.check_result(len(result))
            columns = self.db.answer_columns(sql, params)  # (a view's: cached by execute)
            return Json({"columns": list(columns), "rows": json_rows(result)})
        return Json({"rowcount": result, "lsn": self.db.lsn})

    async def transaction(self, request: Request) -> Response:
        """Several SELECT, INSERT, UPDATE and DELETE statements as one transaction: all of
        their writes commit as one batch, or none (docs/transactions.md)."""
        statements = transaction_request(await json_body(request))
        read_only = request.scope.get(READ_ONLY_SCOPE)
        for n, (sql, _) in enumerate(statements, 1):
            if control_statement(sql) is not None or len(split_statements(sql)) != 1:
                raise ApiError(400, "sql", f"statement {n}: POST /transaction takes one SELECT, "
                               "INSERT, UPDATE or DELETE per statement (it begins and commits "
                               "the transaction itself)")
            node = parse_one(sql)
            if not isinstance(node, (exp.Query, exp.Insert, exp.Update, exp.Delete)):
                raise ApiError(400, "sql", f"statement {n}: DDL would commit the transaction "
                               "half-way; run it with POST /sql")
            if read_only and not isinstance(node, exp.Query):
                raise ApiError(403, "forbidden", f"user {request.scope.get(USER_SCOPE)!r} is "
                               "read-only: a transaction of SELECTs only")
        results, lsn = await run_in_threadpool(self._transaction, statements)
        return Json({"results": results, "lsn": lsn})

    def _transaction(self, statements: list[tuple[str, list[Any]]]
                     ) -> tuple[list[dict[str, Any]], int]:
        db = self.db
        results: list[dict[str, Any]] = []
        tx = db.transaction()
        tx.foreign_key_checks = True  # (a session of its own, as POST /sql's)
        try:
            for n, (sql, params) in enumerate(statements, 1):
                try:
                    result = tx.execute(sql, params)
                except RivuletError as exc:
                    code = error_code(exc)
                    raise ApiError(code.http_status, code.http_kind,
                                   f"statement {n}: {exc} (the transaction was rolled back)"
                                   ) from exc
                if isinstance(result, list):
                    db.limits.check_result(len(result))
                    results.append({"columns": list(db.answer_columns(sql, params)),
                                    "rows": json_rows(result)})
                else:
                    results.append({"rowcount": result})
            tx.commit()
        finally:
            if tx.active:
                tx.rollback()
        return results, tx.lsn or db.lsn

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
        names = view_names(await optional_json_body(request))
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


def _default_verify() -> Verify:
    try:
        from rivulet.pipeline.verify import verify
    except ImportError as exc:
        raise ApiError(503, "unavailable", f"Spark verification is not available: {exc}") from None
    return verify


__all__ = ["Api", "Verify", "describe_view"]
