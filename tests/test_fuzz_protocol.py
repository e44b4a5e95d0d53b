"""Fuzzing the MySQL protocol on raw sockets (bench/reliability_fuzz.py has the generators
and checks): malformed, truncated, out-of-sequence and oversize packets, prepared-statement
commands for statements that do not exist, and garbage before and after the handshake.
The server answers with an error packet or closes that one connection, keeps serving
another client, and no data changes."""

from __future__ import annotations

from typing import Iterator

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings

import rivulet
from bench.reliability_fuzz import (
    PROTOCOL_MAX_PACKET,
    RawClient,
    check_protocol,
    digest,
    make_database,
    mysql_packet,
    protocol_input,
)
from rivulet.server.mysql import ServerThread

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
def test_malformed_exchanges(server, db, witness, example) -> None:
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
