"""Access control: loopback by default, hashed passwords, read-only users over MySQL and
HTTP, TLS for both protocols with a self-signed certificate made here (openssl), and
hostile strings that must travel as values over both protocols (no SQL injection)."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import mysql.connector
import pymysql
import pytest

import rivulet
from bench.reliability_fuzz import digest, make_database
from rivulet.cli import main as cli_main
from rivulet.server.auth import ANY_HOST, UserStore, tls_context
from rivulet.server.http.app import make_app
from rivulet.server.http.serve import serve_http
from rivulet.server.mysql.server import DEFAULT_HOST, ServerThread

HOSTILE = [
    "' OR 1=1 --", "'; DROP TABLE t; --", "\\'", "\\", "\\\\'", '"', "''", "it's", "a\0b",
    "\0", "ünïcødé 😀 中文", "%s ? ?", "line\nbreak\r\t\x1a", "' UNION SELECT 1, 2, 3 #",
    "/* comment */", "`backtick`", "\\n", "?", "-- ", "#", "e\u0301", "); DELETE FROM t; (",
    "1; SET @x = 1", "${jndi:ldap://x}", "\\0\\b\\Z",
]


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    database = make_database(tmp_path / "db")
    database.execute("CREATE TABLE notes (id INT PRIMARY KEY, body TEXT NOT NULL)")
    store = UserStore(database.path)
    store.set_user("reader", "r-secret", ANY_HOST, read_only=True)
    store.set_user("writer", "w-secret", ANY_HOST)
    yield database
    database.close()


def connect(port: int, user: str, password: str, **kwargs) -> pymysql.Connection:
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=password,
                           autocommit=True, **kwargs)


# --------------------------------------------------------------------------- defaults


def test_servers_listen_on_loopback_by_default(db, server) -> None:
    assert DEFAULT_HOST == "127.0.0.1"
    assert server.server.sockets()[0].getsockname()[0] == "127.0.0.1"
    http = serve_http(make_app(db), port=0)
    try:
        assert http.host == "127.0.0.1"
    finally:
        http.stop()
    with pytest.raises(SystemExit):  # the CLI's default too, shown in its help
        cli_main(["serve", "--help"])


def test_passwords_are_stored_hashed(db) -> None:
    text = (db.path / "users.json").read_text()
    assert "r-secret" not in text and "w-secret" not in text
    assert json.loads(text)["users"]["reader"]["read_only"] is True


def test_wrong_password_and_unknown_user_are_denied(server) -> None:
    for user, password in (("reader", "nope"), ("nobody", "")):
        with pytest.raises(pymysql.err.OperationalError) as caught:
            connect(server.port, user, password)
        assert caught.value.args[0] == 1045


def test_cli_adds_a_read_only_user(tmp_path: Path, capsys) -> None:
    assert cli_main(["user", "viewer", "--password", "pw", "--read-only",
                     "--data-dir", str(tmp_path)]) == 0
    assert "read-only" in capsys.readouterr().out
    assert UserStore(tmp_path).accounts["viewer"].read_only


# --------------------------------------------------------------------------- read-only, MySQL

DENIED = [
    "INSERT INTO t VALUES (100, 1, 'x')",
    "UPDATE t SET a = 0 WHERE id = 1",
    "DELETE FROM t WHERE id = 2",
    "DELETE FROM t",
    "CREATE TABLE z (id INT)",
    "CREATE VIEW v2 AS SELECT id FROM t WHERE a = ?",
    "DROP VIEW by_id",
    "DROP TABLE u",
]


def test_read_only_user_reads_but_cannot_change_anything(db, server) -> None:
    before = digest(db, adhoc=False)
    conn = connect(server.port, "reader", "r-secret")
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT id, a, s FROM by_id WHERE id = %s", (2,))
            assert cursor.fetchall() == ((2, 2, "s2"),)
            cursor.execute("SELECT id FROM t WHERE a = %s ORDER BY id", (4,))
            assert cursor.fetchall() == ((4,), (9,), (14,), (19,))
            for sql in DENIED:
                with pytest.raises(pymysql.MySQLError) as caught:
                    cursor.execute(sql)
                assert caught.value.args[0] == 1142, sql
                assert "read-only user 'reader'" in caught.value.args[1]
            cursor.execute("SELECT 1 FROM t WHERE id = 1")  # the connection still works
    finally:
        conn.close()
    assert digest(db, adhoc=False) == before


def test_read_only_user_cannot_write_with_prepared_statements(db, server) -> None:
    before = digest(db, adhoc=False)
    conn = mysql.connector.connect(host="127.0.0.1", port=server.port, user="reader",
                                   password="r-secret", autocommit=True, use_pure=True)
    try:
        cursor = conn.cursor(prepared=True)
        with pytest.raises(mysql.connector.Error) as caught:
            cursor.execute("INSERT INTO t VALUES (?, ?, ?)", (101, 1, "x"))
        assert caught.value.errno == 1142
        cursor.execute("SELECT s FROM by_id WHERE id = ?", (3,))
        assert cursor.fetchall() == [("s3",)]
    finally:
        conn.close()
    assert digest(db, adhoc=False) == before


def test_read_write_user_writes(db, server) -> None:
    conn = connect(server.port, "writer", "w-secret")
    try:
        with conn.cursor() as cursor:
            cursor.execute("INSERT INTO notes VALUES (%s, %s)", (1, "hi"))
            cursor.execute("CREATE VIEW note AS SELECT body FROM notes WHERE id = ?")
    finally:
        conn.close()
    db.settle()
    assert db.view("note").lookup(1) == [("hi",)]


# --------------------------------------------------------------------------- HTTP


@pytest.fixture
def http(db: rivulet.Database) -> Iterator[str]:
    running = serve_http(make_app(db, users=UserStore(db.path)), port=0)
    yield running.url
    running.stop()


def test_http_needs_credentials_once_root_has_a_password(db, http) -> None:
    assert httpx.get(f"{http}/views/by_id", params={"key": 1}).status_code == 200  # root, no pw
    UserStore(db.path).set_user("root", "root-pw", "localhost")
    app_store = UserStore(db.path)  # a server reads users at start: start one anew
    running = serve_http(make_app(db, users=app_store), port=0)
    try:
        anonymous = httpx.get(f"{running.url}/views/by_id", params={"key": 1})
        assert anonymous.status_code == 401 and "Basic" in anonymous.headers["www-authenticate"]
        assert httpx.get(f"{running.url}/views/by_id", params={"key": 1},
                         auth=("root", "wrong")).status_code == 401
        assert httpx.get(f"{running.url}/views/by_id", params={"key": 1},
                         auth=("root", "root-pw")).json()["rows"] == [[1, 1, "s1"]]
        assert httpx.get(f"{running.url}/health").status_code == 200  # probes need none
        garbled = httpx.get(f"{running.url}/views", headers={"Authorization": "Basic !!"})
        assert garbled.status_code == 401
    finally:
        running.stop()


def test_http_read_only_user(db, http) -> None:
    before = digest(db, adhoc=False)
    auth = ("reader", "r-secret")
    assert httpx.get(f"{http}/views/by_id", params={"key": 2}, auth=auth).json()["rows"] == \
        [[2, 2, "s2"]]
    assert httpx.post(f"{http}/views/by_id/lookup", json=[1, 3], auth=auth).status_code == 200
    assert httpx.post(f"{http}/sql", json={"sql": "SELECT id FROM t WHERE a = ?", "params": [0]},
                      auth=auth).status_code == 200
    denied = [
        ("POST", "/tables/t/rows", {"json": [[200, 1, "x"]]}),
        ("PATCH", "/tables/t/rows/1", {"json": {"a": 9}}),
        ("DELETE", "/tables/t/rows/1", {}),
        ("PUT", "/views/v3", {"content": "SELECT id FROM t WHERE a = ?"}),
        ("DELETE", "/views/by_id", {}),
        ("POST", "/sql", {"json": {"sql": "DELETE FROM t"}}),
        ("POST", "/sql", {"json": {"sql": "INSERT INTO t VALUES (?, ?, ?)",
                                   "params": [201, 1, "x"]}}),
        ("POST", "/sql", {"json": {"sql": "DROP VIEW by_id"}}),
    ]
    for method, path, kwargs in denied:
        response = httpx.request(method, f"{http}{path}", auth=auth, **kwargs)
        assert response.status_code == 403, (method, path, response.text)
        assert response.json()["kind"] == "forbidden"
    assert digest(db, adhoc=False) == before
    written = httpx.post(f"{http}/tables/notes/rows", json=[[5, "ok"]], auth=("writer", "w-secret"))
    assert written.status_code == 201


# --------------------------------------------------------------------------- TLS


def test_mysql_over_tls(db, certificate) -> None:
    cert, key = certificate
    running = ServerThread(db, port=0, tls=tls_context(cert, key))
    try:
        conn = connect(running.port, "writer", "w-secret", ssl={"ca": cert})
        try:
            assert isinstance(conn._sock, ssl.SSLSocket)
            with conn.cursor() as cursor:
                cursor.execute("INSERT INTO notes VALUES (%s, %s)", (7, "over tls"))
                cursor.execute("SELECT body FROM notes WHERE id = %s", (7,))
                assert cursor.fetchall() == (("over tls",),)
        finally:
            conn.close()
        plain = connect(running.port, "reader", "r-secret")  # TLS is offered, not required
        plain.close()
        for _ in range(10):  # the TLS hello often arrives with the SSL request: never lost
            again = connect(running.port, "reader", "r-secret", ssl={"ca": cert},
                            connect_timeout=10)
            assert isinstance(again._sock, ssl.SSLSocket)
            again.close()
    finally:
        running.stop()


def test_http_over_tls(db, certificate) -> None:
    cert, key = certificate
    running = serve_http(make_app(db, users=UserStore(db.path)), port=0, tls_cert=cert,
                         tls_key=key)
    try:
        assert running.url.startswith("https://")
        response = httpx.get(f"{running.url}/views/by_id", params={"key": 1},
                             auth=("reader", "r-secret"),
                             verify=ssl.create_default_context(cafile=cert))
        assert response.json()["rows"] == [[1, 1, "s1"]]
        with pytest.raises(httpx.HTTPError):  # plain HTTP to the TLS port
            httpx.get(f"http://127.0.0.1:{running.port}/health", timeout=3)
    finally:
        running.stop()


# --------------------------------------------------------------------------- injection


def test_hostile_strings_over_mysql_are_values(db, server) -> None:
    conn = connect(server.port, "writer", "w-secret")
    prepared = mysql.connector.connect(host="127.0.0.1", port=server.port, user="writer",
                                       password="w-secret", autocommit=True, use_pure=True)
    try:
        pcur = prepared.cursor(prepared=True)
        with conn.cursor() as cursor:
            for i, text in enumerate(HOSTILE):
                cursor.execute("INSERT INTO notes VALUES (%s, %s)", (i, text))  # client escaping
                pcur.execute("INSERT INTO notes VALUES (?, ?)", (1000 + i, text))  # binary
            for i, text in enumerate(HOSTILE):
                cursor.execute("SELECT body FROM notes WHERE id = %s", (i,))
                assert cursor.fetchall() == ((text,),)
                cursor.execute("SELECT id FROM notes WHERE body = %s ORDER BY id", (text,))
                assert cursor.fetchall() == ((i,), (1000 + i,))
                pcur.execute("SELECT id FROM notes WHERE body = ? ORDER BY id", (text,))
                assert pcur.fetchall() == [(i,), (1000 + i,)]
    finally:
        conn.close()
        prepared.close()
    db.settle()
    assert sorted(db.catalog.tables) == ["notes", "t", "u", "w"]
    assert len(db.execute("SELECT id FROM t")) == 20


def test_hostile_strings_over_http_are_values(db, http) -> None:
    auth = ("writer", "w-secret")
    rows = [[i, text] for i, text in enumerate(HOSTILE)]
    assert httpx.post(f"{http}/tables/notes/rows", json=rows, auth=auth).status_code == 201
    for i, text in enumerate(HOSTILE):
        found = httpx.post(f"{http}/sql", json={"sql": "SELECT id FROM notes WHERE body = ?",
                                                "params": [text]}, auth=auth, params={})
        assert found.json()["rows"] == [[i]], text
        patched = httpx.patch(f"{http}/tables/notes/rows/{i}", json={"body": text + "!"}, auth=auth)
        assert patched.status_code == 200
        key = httpx.get(f"{http}/views/by_id", params={"key": text}, auth=auth)
        # a string key for an INT parameter compares as MySQL compares them, as a number
        # (its numeric prefix: '1; SET @x = 1' = 1), or is refused with a clear error
        assert key.status_code in (200, 400)
        if key.status_code == 200:
            expected = db.query("SELECT id, a, s FROM t WHERE id = ?", [text])
            assert key.json()["rows"] == [list(r) for r in expected], text
    db.settle()
    assert db.execute("SELECT body FROM notes WHERE id = ?", [3]) == [(HOSTILE[3] + "!",)]
    assert len(db.execute("SELECT id FROM t")) == 20


def test_tls_context_rejects_a_missing_key(tmp_path: Path, certificate) -> None:
    cert, _ = certificate
    with pytest.raises((OSError, ssl.SSLError)):
        tls_context(cert, tmp_path / "missing.pem")
    assert socket  # the module is used by the raw-socket helpers of other tests
