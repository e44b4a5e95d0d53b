"""Fuzzing the MySQL protocol on raw sockets (bench/reliability_fuzz.py has the generators
and checks): malformed, truncated, out-of-sequence and oversize packets, prepared-statement
commands for statements that do not exist, unsupported SQL, and garbage before and after
the handshake. The server answers with an error packet or closes that one connection,
keeps serving another client, and no data changes. The HTTP API likewise: any request
gets a 2xx or a JSON 4xx, never a 5xx."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pymysql
import pytest
from hypothesis import HealthCheck, example, given, settings

import rivulet
from bench.reliability_fuzz import (
    PROTOCOL_MAX_PACKET,
    RawClient,
    check_http,
    check_protocol,
    digest,
    http_request,
    make_database,
    mysql_packet,
    protocol_input,
)
from rivulet.server.http.app import make_app
from rivulet.server.http.serve import serve_http
from rivulet.server.mysql.server import ServerThread

FIXTURE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture,
                                          HealthCheck.too_slow])


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[rivulet.Database]:
    database = make_database(tmp_path_factory.mktemp("fuzz") / "db")
    yield database
    database.close()


@pytest.fixture(scope="module")
def server(db: rivulet.Database) -> Iterator[ServerThread]:
    running = ServerThread(db, port=0, max_packet=PROTOCOL_MAX_PACKET)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def witness(server: ServerThread) -> Iterator[pymysql.Connection]:
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", autocommit=True)
    yield conn
    conn.close()


@FIXTURE
@given(example=protocol_input())
@example(example=("bad sequence", b"\t\x00\x00\xd0\x03SELECT 1", True))  # a read's ad-hoc
def test_malformed_exchanges(server, db, witness, example) -> None:  # view is no change
    check_protocol(server.port, db, *example, witness)


def _error_message(packet: bytes) -> tuple[int, str]:
    assert packet[:1] == b"\xff", packet
    return int.from_bytes(packet[1:3], "little"), packet[9:].decode()


def test_query_that_is_not_utf8_gets_a_named_error(server, db) -> None:
    """Used to be an internal UnicodeDecodeError (logged as a server bug)."""
    client = RawClient(server.port)
    try:
        for command in (b"\x03", b"\x16"):  # COM_QUERY, COM_STMT_PREPARE
            client.send(mysql_packet(command + b"SELECT \xff\xfe FROM t", 0))
            code, message = _error_message(client.read_packet())
            assert "not valid utf8 text" in message and code == 1064
        client.send(mysql_packet(b"\x0e", 0))
        assert client.reply() == "ok"
    finally:
        client.close()


def test_oversize_packet_is_refused_and_the_connection_stays_in_step(server, db) -> None:
    before = digest(db)
    client = RawClient(server.port)
    try:
        client.send(mysql_packet(b"\x03INSERT INTO t VALUES (99, 1, 'x') -- " +
                                 b"x" * PROTOCOL_MAX_PACKET, 0))
        code, message = _error_message(client.read_packet())
        assert code == 1153 and "max_allowed_packet" in message
        client.send(mysql_packet(b"\x03SELECT id, a, s FROM by_id WHERE id = 2", 0))
        assert client.reply() == "rows"
    finally:
        client.close()
    assert digest(db) == before


def test_garbage_instead_of_a_handshake_closes_only_that_connection(server, witness) -> None:
    client = RawClient(server.port, login=False)
    try:
        client.send(mysql_packet(b"\x00" * 3 + b"garbage", 1))
        assert client.reply() in ("error", "closed")
    finally:
        client.close()
    with witness.cursor() as cursor:
        cursor.execute("SELECT s FROM by_id WHERE id = %s", (4,))
        assert cursor.fetchall() == (("s4",),)


def test_many_half_open_connections_do_not_stop_other_clients(server, witness) -> None:
    clients = [RawClient(server.port, login=False) for _ in range(20)]
    try:
        for c in clients:
            c.send(b"\x50\x00\x00\x01partial")  # a packet header promising 80 bytes
        with witness.cursor() as cursor:
            cursor.execute("SELECT s FROM by_id WHERE id = %s", (5,))
            assert cursor.fetchall() == (("s5",),)
    finally:
        for c in clients:
            c.close()


@pytest.fixture(scope="module")
def http_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[rivulet.Database]:
    """A database of its own: a request that succeeds may change it (``DELETE
    /views/by_id`` drops the view the MySQL tests of this module read)."""
    database = make_database(tmp_path_factory.mktemp("fuzz-http") / "db")
    yield database
    database.close()


@pytest.fixture(scope="module")
def http_client(http_db: rivulet.Database) -> Iterator[httpx.Client]:
    running = serve_http(make_app(http_db), port=0)
    with httpx.Client(base_url=running.url, timeout=30) as client:
        yield client
    running.stop()


@FIXTURE
@given(request=http_request())
def test_http_requests_get_a_clear_answer(http_client, http_db, request) -> None:
    """Any endpoint with mostly wrong names, keys, parameters and bodies: never a 5xx, an
    error is JSON naming the problem, and a refused request changes nothing."""
    check_http(http_client, http_db, *request)


HANDSHAKE_HEADER = (0x200 | 0x8000 | 0x80000 | 0x100000).to_bytes(4, "little") + \
    (1 << 24).to_bytes(4, "little") + b"\x2d" + b"\x00" * 23


@pytest.mark.parametrize("payload", [
    HANDSHAKE_HEADER + b"root-without-its-nul",
    HANDSHAKE_HEADER + b"root\x00\x00mysql_native_password",  # plugin name without NUL
    HANDSHAKE_HEADER + b"root\x00\x05ab",  # auth response shorter than its length
    HANDSHAKE_HEADER + b"root\x00\x00mysql_native_password\x00\xfe" + b"\xff" * 8,  # 2**64 attrs
])
def test_malformed_handshake_ends_only_that_connection(server, witness, payload) -> None:
    """Used to freeze the whole server: mimic's compiled parser looped forever on the
    event loop (a string without its NUL, connection attributes longer than the packet)."""
    client = RawClient(server.port, login=False)
    try:
        client.send(mysql_packet(payload, 1))
        assert client.reply() in ("error", "closed")
    finally:
        client.close()
    with witness.cursor() as cursor:
        cursor.execute("SELECT s FROM by_id WHERE id = %s", (6,))
        assert cursor.fetchall() == (("s6",),)


def test_field_list_without_its_nul_is_an_error(server, witness) -> None:
    """COM_FIELD_LIST with a table name lacking its NUL froze the server the same way."""
    client = RawClient(server.port)
    try:
        client.send(mysql_packet(b"\x04t", 0))
        code, message = _error_message(client.read_packet())
        assert code == 1835 and "NUL" in message
        client.send(mysql_packet(b"\x04t\x00", 0))  # a well-formed one still works
        assert client.reply() in ("rows", "ok")
    finally:
        client.close()
    with witness.cursor() as cursor:
        cursor.execute("SELECT s FROM by_id WHERE id = %s", (6,))
        assert cursor.fetchall() == (("s6",),)
