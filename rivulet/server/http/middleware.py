"""The HTTP API's ASGI middleware: the body-size limit, authentication, request counts.

Each wraps the whole app (:func:`rivulet.server.http.app.make_app` stacks them): the body
limit refuses a request before it is read, authentication before any handler runs (and
keeps a read-only user to reads), and the counter sees every response, errors included.
"""

from __future__ import annotations

import base64

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from rivulet.server.auth import UserStore
from rivulet.server.http.metrics import RequestCounter
from rivulet.server.http.responses import ApiError, error_response


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
        await error_response(413, "too_large", self._message())(scope, receive, send)


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
            response = error_response(401, "unauthorized", "authentication required: HTTP "
                                      "Basic with a rivulet user's name and password")
            response.headers["WWW-Authenticate"] = 'Basic realm="rivulet", charset="UTF-8"'
            await response(scope, receive, send)
            return
        scope[USER_SCOPE], scope[READ_ONLY_SCOPE] = account.name, account.read_only
        if account.read_only and not _is_read(scope["method"], scope["path"]):
            await error_response(403, "forbidden", f"user {account.name!r} is read-only: "
                                 f"{scope['method']} {scope['path']} is denied")(scope, receive,
                                                                                 send)
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


__all__ = ["READ_ONLY_SCOPE", "USER_SCOPE", "Authenticate", "CountRequests", "LimitBody"]
