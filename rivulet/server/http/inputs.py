"""What a request to the HTTP API carries: JSON bodies, query flags, view keys, SQL.

Each function reads one part of a request and checks it, raising :class:`ApiError` (400)
with a message that names what is wrong, so that nothing a client sends reaches the
engine unchecked or ends in a 500.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from rivulet.server.http.responses import ApiError


async def json_body(request: Request) -> Any:
    body = await request.body()
    if not body.strip():
        raise ApiError(400, "bad_request", f"{request.method} {request.url.path} needs a JSON body")
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:  # bad JSON, bad UTF-8, too deep
        raise ApiError(400, "bad_json", f"request body is not valid JSON: {exc}") from None


async def optional_json_body(request: Request) -> Any:
    body = await request.body()
    return await json_body(request) if body.strip() else None


def flag(request: Request, name: str, default: bool) -> bool:
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


def int_param(request: Request, name: str) -> int | None:
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


def key_params(request: Request) -> list[Any]:
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


def lookup_keys(body: Any) -> list[Any]:
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


def _is_json(request: Request, body: bytes) -> bool:
    """A JSON body, by its content type or its first character (SQL never starts with
    ``{``; ``curl -d`` sends JSON labelled as a form)."""
    return request.headers.get("content-type", "").startswith("application/json") or \
        body.lstrip()[:1] == b"{"


def sql_body(request: Request, body: bytes) -> str:
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


def view_names(body: Any) -> list[str]:
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


async def sql_request(request: Request) -> tuple[str, list[Any]]:
    """``{"sql": "...", "params": [...]}``, or the statement as a text body."""
    if not _is_json(request, await request.body()):
        sql = sql_body(request, await request.body())
        params: Any = []
    else:
        body = await json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("sql"), str):
            raise ApiError(400, "bad_request", 'the body must be {"sql": "...", "params": [...]}')
        sql, params = body["sql"], body.get("params", [])
        if not isinstance(params, list) or any(isinstance(p, (list, dict)) for p in params):
            raise ApiError(400, "bad_request", "params must be a JSON list of scalar values")
    if not sql.strip():
        raise ApiError(400, "sql", "empty statement")
    return sql, params


def transaction_request(body: Any) -> list[tuple[str, list[Any]]]:
    """The statements of ``POST /transaction``: ``{"statements": [...]}`` or the list alone,
    each ``{"sql": "...", "params": [...]}`` or the SQL text alone."""
    if isinstance(body, dict) and set(body) == {"statements"}:
        body = body["statements"]
    if not isinstance(body, list) or not body:
        raise ApiError(400, "bad_request", 'the body must be {"statements": [{"sql": "...", '
                       '"params": [...]}, ...]} with at least one statement')
    out = []
    for item in body:
        sql, params = (item, []) if isinstance(item, str) else (
            (item.get("sql"), item.get("params", [])) if isinstance(item, dict) else (None, []))
        if not isinstance(sql, str) or not sql.strip():
            raise ApiError(400, "bad_request", 'each statement is {"sql": "...", "params": '
                           '[...]} or the SQL text')
        if not isinstance(params, list) or any(isinstance(p, (list, dict)) for p in params):
            raise ApiError(400, "bad_request", "params must be a JSON list of scalar values")
        out.append((sql, params))
    return out


__all__ = ["flag", "int_param", "json_body", "key_params", "lookup_keys", "optional_json_body",
           "sql_body", "sql_request", "transaction_request", "view_names"]
