"""What the HTTP API answers: JSON bodies, and errors as JSON.

Rows hold values JSON lacks (dates, DECIMAL, binary data, NaN): :class:`Json` encodes
them the one way every endpoint answers them. An error is ``{"error": message, "kind":
kind}`` with its status (:class:`ApiError`, raised by the handlers, the middleware and the
input checks; answered by the app's exception handlers, :mod:`.app`).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
from collections.abc import Sequence
from typing import Any

from starlette.responses import JSONResponse

from rivulet.values.times import format_time


class ApiError(Exception):
    """An error answered as ``{"error": message, "kind": kind}`` with ``status``."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


def _json_value(value: Any) -> Any:
    """JSON for the values rows hold that JSON lacks: dates and datetimes as ISO 8601, a
    TIME as MySQL writes it ('-838:59:59', '26:03:04.5' as '26:03:04.500000'), DECIMAL as a
    string (exact; a JSON number would be read as a binary float), binary data as base64."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return format_time(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class Json(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(content, default=_json_value, ensure_ascii=False,
                          separators=(",", ":")).encode()


def json_rows(rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    return [_finite(list(r)) for r in rows]


def _finite(row: list[Any]) -> list[Any]:
    """NaN and infinities have no JSON form: they are sent as null."""
    for i, v in enumerate(row):
        if isinstance(v, float) and not math.isfinite(v):
            row[i] = None
    return row


def error_response(status: int, kind: str, message: str) -> Json:
    return Json({"error": message, "kind": kind}, status_code=status)


__all__ = ["ApiError", "Json", "error_response", "json_rows"]
