"""How the fuzzers reach rivulet: embedded, over the MySQL protocol, over HTTP.

A *front* (:class:`Front`) runs a SELECT, a write, a view and its lookups, or a batch of
rows through one of rivulet's interfaces, and tells a clean refusal (:class:`Refused`: a
RivuletError, an error packet, a 4xx with ``{"error", "kind"}``) from a breakage
(:class:`Broken`: anything else). It also says what the oracle must be given for the same
input (:meth:`Front.sent`: over HTTP, values as JSON carries them) and how its answers
look (:meth:`Front.answer`: over HTTP, JSON), so that ``bench/reliability_oracle.py`` can
compare every front's answers with MariaDB's the same way.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import rivulet
from bench.mysql_oracle import inline_params
from rivulet.errors import ClosedError, DataflowFailedError, RivuletError, UpqueryTimeout

# --------------------------------------------------------------------------- outcomes


class Refused(Exception):
    """rivulet refused the input with a clean error (a RivuletError, an error packet, a
    4xx with ``{"error", "kind"}``)."""


class Broken(Exception):
    """rivulet failed in a way no input excuses: an exception that is not a RivuletError,
    a 5xx, a dropped connection, an error answer without its parts."""


class Inexpressible(Exception):
    """No MySQL client can send this input (a NaN, a lone surrogate, a nested list): there
    is nothing to compare with."""


# --------------------------------------------------------------------------- fronts


class Front(Protocol):
    """How a fuzzer reaches rivulet. Each call raises :class:`Refused` for a clean error and
    :class:`Broken` for anything else; parameters are Python values."""

    name: str

    def sent(self, params: Sequence[Any]) -> tuple[Any, ...]:
        """The parameter values as they reach rivulet (what the oracle is given too)."""
        ...

    def answer(self, rows: Sequence[Sequence[Any]]) -> list[tuple]:
        """MariaDB's rows as this front answers them (HTTP: as JSON)."""
        ...

    def query(self, sql: str, params: Sequence[Any]) -> list[tuple]: ...

    def write(self, sql: str, params: Sequence[Any]) -> int: ...

    def create_view(self, name: str, sql: str) -> None: ...

    def drop_view(self, name: str) -> None: ...

    def lookup(self, name: str, sql: str, params: Sequence[Any]) -> list[tuple]: ...

    def insert_rows(self, table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]) -> int: ...

    def insert_statements(self, table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]
                          ) -> list[tuple[str, list]]:
        """What MariaDB runs, in one transaction, for :meth:`insert_rows` of ``rows``."""
        ...

    def update_row(self, table: str, pk: int, values: dict[str, Any]) -> int: ...

    def delete_row(self, table: str, pk: int) -> int: ...


def _embedded(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, **kwargs)
    except (DataflowFailedError, ClosedError, UpqueryTimeout) as exc:  # not the input's fault
        raise Broken(f"{type(exc).__name__}: {exc}") from exc
    except RivuletError as exc:
        raise Refused(f"{type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        raise Broken(f"{type(exc).__name__}: {exc}") from exc


class EmbeddedFront:
    """rivulet in this process: ``db.query``, ``db.execute``, views, ``db.table(...)``."""

    name = "embedded"

    def __init__(self, db: rivulet.Database) -> None:
        self.db = db

    def sent(self, params: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(params)

    def answer(self, rows: Sequence[Sequence[Any]]) -> list[tuple]:
        return [tuple(r) for r in rows]

    def settle(self) -> None:
        _embedded(self.db.settle)

    def query(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        self.settle()
        return [tuple(r) for r in _embedded(self.db.query, sql, list(params))]

    def write(self, sql: str, params: Sequence[Any]) -> int:
        count = _embedded(self.db.execute, sql, list(params))
        if not isinstance(count, int):
            raise Broken(f"a write returned {count!r}")
        self.settle()
        return count

    def create_view(self, name: str, sql: str) -> None:
        _embedded(self.db.create_view, name, sql)

    def drop_view(self, name: str) -> None:
        _embedded(self.db.drop_view, name, if_exists=True)

    def lookup(self, name: str, sql: str, params: Sequence[Any]) -> list[tuple]:
        self.settle()
        return [tuple(r) for r in _embedded(lambda: self.db.view(name).lookup(*params))]

    def insert_rows(self, table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]) -> int:
        count = _embedded(lambda: self.db.table(table).insert_many(rows))
        self.settle()
        return int(count)

    def insert_statements(self, table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]
                          ) -> list[tuple[str, list]]:
        return row_inserts(table, [dict(r) if isinstance(r, dict) else tuple(r) for r in rows])

    def update_row(self, table: str, pk: int, values: dict[str, Any]) -> int:
        count = _embedded(lambda: self.db.table(table).update("id = ?", [pk], **values))
        self.settle()
        return int(count)

    def delete_row(self, table: str, pk: int) -> int:
        count = _embedded(lambda: self.db.table(table).delete("id = ?", [pk]))
        self.settle()
        return int(count)


class WireFront:
    """rivulet's MySQL server, through PyMySQL (parameters inlined by the driver, as every
    MySQL client without server-side prepared statements sends them). A view with ``?``
    is what a MySQL client asks as the same query text with different literals, which the
    server answers from one view: :meth:`lookup` sends the view's SELECT with the values
    inlined."""

    name = "mysql"

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = self._connect()

    def _connect(self) -> Any:
        import pymysql

        conn = pymysql.connect(host="127.0.0.1", port=self.port, user="root", autocommit=True,
                               read_timeout=120, write_timeout=120, charset="utf8mb4")
        with conn.cursor() as cur:
            cur.execute("SET rivulet_read_your_writes = 1")
        return conn

    def close(self) -> None:
        self.conn.close()

    def sent(self, params: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(params)

    def answer(self, rows: Sequence[Sequence[Any]]) -> list[tuple]:
        return [tuple(r) for r in rows]

    def _run(self, sql: str, params: Sequence[Any] = ()) -> tuple[int, list[tuple]]:
        import pymysql

        try:
            text = inline_params(sql, params, self.conn)
            text.encode("utf-8")
        except Exception as exc:
            raise Inexpressible(f"{type(exc).__name__}: {exc}") from None
        try:
            with self.conn.cursor() as cur:
                count = cur.execute(text)
                return count, [tuple(r) for r in cur.fetchall()]
        except pymysql.err.MySQLError as exc:
            code = exc.args[0] if exc.args else None
            if isinstance(code, int) and 1000 <= code < 2000:
                raise Refused(f"{code}: {exc.args[1] if len(exc.args) > 1 else ''}") from exc
            self.conn.close()
            self.conn = self._connect()
            raise Broken(f"{type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # the socket, or an answer the driver cannot read
            self.conn.close()
            self.conn = self._connect()
            raise Broken(f"{type(exc).__name__}: {exc}") from exc

    def query(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        return self._run(sql, params)[1]

    def write(self, sql: str, params: Sequence[Any]) -> int:
        return self._run(sql, params)[0]

    def create_view(self, name: str, sql: str) -> None:
        pass  # (see the class docstring)

    def drop_view(self, name: str) -> None:
        pass

    def lookup(self, name: str, sql: str, params: Sequence[Any]) -> list[tuple]:
        return self._run(sql, params)[1]

    def insert_rows(self, table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]) -> int:
        (sql, params), = self.insert_statements(table, rows)
        return self._run(sql, params)[0]

    def insert_statements(self, table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]
                          ) -> list[tuple[str, list]]:
        """One INSERT for the batch (rows given by column name: the columns any of them
        names, NULL where a row names none), as a MySQL client sends a batch."""
        return [batch_insert(table, rows)]

    def update_row(self, table: str, pk: int, values: dict[str, Any]) -> int:
        return self._run(*update_sql(table, pk, values))[0]

    def delete_row(self, table: str, pk: int) -> int:
        return self._run(f"DELETE FROM {table} WHERE id = ?", [pk])[0]


class HttpFront:
    """rivulet's HTTP API (docs/http.md): ``POST /sql``, ``PUT``/``GET``/``DELETE
    /views/...``, ``POST``/``PATCH``/``DELETE /tables/.../rows``. Parameters and row values
    go as JSON (a DECIMAL or a date as its string); answers come back as JSON, so MariaDB's
    rows are compared in the same encoding (:meth:`answer`)."""

    name = "http"

    def __init__(self, url: str, db: rivulet.Database) -> None:
        import httpx

        self.client = httpx.Client(base_url=url, timeout=120)
        self.db = db
        self.lsn = 0

    def close(self) -> None:
        self.client.close()

    def sent(self, params: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(json_value(v) for v in params)

    def answer(self, rows: Sequence[Sequence[Any]]) -> list[tuple]:
        return [tuple(http_value(v) for v in r) for r in rows]

    def _call(self, method: str, path: str, *, ok_404: bool = False, **kwargs: Any) -> Any:
        import httpx

        try:
            response = self.client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise Broken(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 500:
            raise Broken(f"{method} {path}: {response.status_code} {response.text[:300]}")
        try:
            body = response.json()
        except ValueError:
            raise Broken(f"{method} {path}: {response.status_code} answered no JSON: "
                         f"{response.text[:200]!r}") from None
        if response.status_code >= 400:
            if not isinstance(body, dict) or not body.get("error") or not body.get("kind"):
                raise Broken(f"{method} {path}: error answer without error/kind: {body!r}")
            if ok_404 and response.status_code == 404 and body["kind"] == "not_found":
                return None
            raise Refused(f"{response.status_code} {body['kind']}: {body['error']}")
        if isinstance(body, dict) and isinstance(body.get("lsn"), int):
            self.lsn = max(self.lsn, body["lsn"])
        return body

    def _settle(self) -> None:
        _embedded(self.db.wait_for, self.lsn)

    def query(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        self._settle()
        body = self._call("POST", "/sql", json={"sql": sql, "params": list(self.sent(params))})
        return [tuple(r) for r in body["rows"]]

    def write(self, sql: str, params: Sequence[Any]) -> int:
        body = self._call("POST", "/sql", json={"sql": sql, "params": list(self.sent(params))})
        self._settle()
        return int(body["rowcount"])

    def create_view(self, name: str, sql: str) -> None:
        self._call("PUT", f"/views/{name}", content=sql.encode())

    def drop_view(self, name: str) -> None:
        self._call("DELETE", f"/views/{name}", ok_404=True)

    def lookup(self, name: str, sql: str, params: Sequence[Any]) -> list[tuple]:
        key = json.dumps(list(self.sent(params)))
        body = self._call("GET", f"/views/{name}", params={"key": key, "min_lsn": self.lsn})
        return [tuple(r) for r in body["rows"]]

    def insert_rows(self, table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]) -> int:
        payload = [{k: json_value(v) for k, v in r.items()} if isinstance(r, dict)
                   else [json_value(v) for v in r] for r in rows]
        body = self._call("POST", f"/tables/{table}/rows", json=payload)
        self._settle()
        return int(body["inserted"])

    def insert_statements(self, table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]
                          ) -> list[tuple[str, list]]:
        return row_inserts(table, [{k: json_value(v) for k, v in r.items()}
                                    if isinstance(r, dict) else self.sent(r) for r in rows])

    def update_row(self, table: str, pk: int, values: dict[str, Any]) -> int:
        body = self._call("PATCH", f"/tables/{table}/rows/{pk}", ok_404=True,
                          json={k: json_value(v) for k, v in values.items()})
        self._settle()
        return 0 if body is None else int(body["updated"])

    def delete_row(self, table: str, pk: int) -> int:
        body = self._call("DELETE", f"/tables/{table}/rows/{pk}", ok_404=True)
        self._settle()
        return 0 if body is None else int(body["deleted"])


def mysql_time(value: dt.timedelta) -> str:
    """A TIME value as MySQL writes it (``-01:00:00``, ``838:59:59``)."""
    seconds = int(value.total_seconds())
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    return f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def json_value(value: Any) -> Any:
    """A parameter or row value as an HTTP client sends it in JSON: a DECIMAL, date, time
    as its string (as MySQL writes it)."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return str(value)
    if isinstance(value, dt.timedelta):
        return mysql_time(value)
    return value


def http_value(value: Any) -> Any:
    """A value of an answer as docs/http.md says the HTTP API encodes it: DATETIME/DATE in
    ISO 8601, DECIMAL as its string, binary as base64, TIME as MySQL writes it, NaN and
    infinities as null."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return mysql_time(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return None
    return value


def insert_sql(table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]) -> tuple[str, list]:
    """An INSERT of ``rows`` (all tuples, or one dict) with ``?`` marks."""
    if len(rows) == 1 and isinstance(rows[0], dict):
        names = list(rows[0])
        marks = ", ".join("?" * len(names))
        cols = ", ".join(f"`{n}`" for n in names)
        return f"INSERT INTO {table} ({cols}) VALUES ({marks})", list(rows[0].values())
    marks = ", ".join("(" + ", ".join("?" * len(r)) + ")" for r in rows)
    return f"INSERT INTO {table} VALUES {marks}", [v for r in rows for v in r]


def row_inserts(table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]
                 ) -> list[tuple[str, list]]:
    """A batch as INSERTs: one for rows in column order, one per row given by name (its
    columns; the others take their DEFAULT)."""
    if any(isinstance(r, dict) for r in rows):
        return [insert_sql(table, [r]) for r in rows]
    return [insert_sql(table, rows)]


def batch_insert(table: str, rows: Sequence[Sequence[Any] | dict[str, Any]]
                  ) -> tuple[str, list]:
    if not any(isinstance(r, dict) for r in rows):
        return insert_sql(table, rows)
    names = list(dict.fromkeys(k for r in rows if isinstance(r, dict) for k in r))
    if any(not isinstance(r, dict) for r in rows):
        raise ValueError("a batch mixes rows by name and rows in column order")
    cols = ", ".join(f"`{n}`" for n in names)
    marks = ", ".join("(" + ", ".join("?" * len(names)) + ")" for _ in rows)
    params = [r.get(n) for r in rows if isinstance(r, dict) for n in names]
    return f"INSERT INTO {table} ({cols}) VALUES {marks}", params


def update_sql(table: str, pk: int, values: dict[str, Any]) -> tuple[str, list]:
    sets = ", ".join(f"`{c}` = ?" for c in values)
    return f"UPDATE {table} SET {sets} WHERE id = ?", [*values.values(), pk]


#: Opens a front on a database: (the front, what closes it).
FrontMaker = Callable[[rivulet.Database], tuple[Front, Callable[[], None]]]


def embedded_front(db: rivulet.Database) -> tuple[Front, Callable[[], None]]:
    return EmbeddedFront(db), lambda: None


def wire_front(db: rivulet.Database) -> tuple[Front, Callable[[], None]]:
    from rivulet.server.mysql.server import ServerThread

    server = ServerThread(db, port=0)
    front = WireFront(server.port)

    def close() -> None:
        front.close()
        server.stop()
    return front, close


def http_front(db: rivulet.Database) -> tuple[Front, Callable[[], None]]:
    from rivulet.server.http.app import make_app
    from rivulet.server.http.serve import serve_http

    http = serve_http(make_app(db), port=0)
    front = HttpFront(http.url, db)

    def close() -> None:
        front.close()
        http.stop()
    return front, close


FRONTS: dict[str, FrontMaker] = {"embedded": embedded_front, "mysql": wire_front,
                                 "http": http_front}


__all__ = ["FRONTS", "Broken", "EmbeddedFront", "Front", "FrontMaker", "HttpFront",
           "Inexpressible", "Refused", "WireFront", "batch_insert", "embedded_front",
           "http_front", "http_value", "insert_sql", "json_value", "mysql_time",
           "row_inserts", "update_sql", "wire_front"]
