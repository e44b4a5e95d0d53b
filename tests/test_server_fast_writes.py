"""Text writes on the MySQL server's fast path: once a write's statement shape is cached,
the connection queues it for the group commit without a task and answers when it is done.
Every answer must be the one the slow path gives: affected rows, MySQL's error codes, the
read-only refusal, and replies in order when a client pipelines several statements."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

import rivulet
from rivulet.server.auth import LOOPBACK, UserStore
from rivulet.server.mysql.server import ServerThread


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[ServerThread]:
    db = rivulet.open(tmp_path)
    db.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10) NOT NULL)")
    db.execute("CREATE TABLE log (n INT NOT NULL)")
    users = UserStore(tmp_path)
    users.set_user("writer", "w", LOOPBACK)
    users.set_user("reader", "r", LOOPBACK, read_only=True)
    running = ServerThread(db, port=0, users=users)
    yield running
    running.stop()
    db.close()


def _connect(server: ServerThread, user: str, password: str) -> pymysql.Connection:
    return pymysql.connect(host="127.0.0.1", port=server.port, user=user, password=password,
                           autocommit=True)


def test_cached_text_writes_answer_as_the_slow_path(server: ServerThread) -> None:
    conn = _connect(server, "writer", "w")
    with conn.cursor() as cur:
        for i in range(5):  # the first one caches the shape; the others take the fast path
            assert cur.execute(f"INSERT INTO t (id, name) VALUES ({i}, 'n{i}')") == 1
        with pytest.raises(pymysql.err.IntegrityError) as info:
            cur.execute("INSERT INTO t (id, name) VALUES (3, 'again')")
        assert info.value.args[0] == 1062
        with pytest.raises(pymysql.err.DataError):
            cur.execute("INSERT INTO t (id, name) VALUES (9, 'far too long a name')")
        assert cur.execute("UPDATE t SET name = 'x' WHERE id = 1") == 1
        assert cur.execute("UPDATE t SET name = 'y' WHERE id = 2") == 1
        assert cur.execute("DELETE FROM t WHERE id = 4") == 1
        cur.execute("SET rivulet_read_your_writes = 1")
        cur.execute("SELECT id, name FROM t WHERE id = 2")
        assert cur.fetchall() == ((2, "y"),)
        cur.execute("SELECT id FROM t WHERE id = 4")
        assert cur.fetchall() == ()
    conn.close()


def test_a_read_only_user_is_refused_on_the_fast_path_too(server: ServerThread) -> None:
    writer = _connect(server, "writer", "w")
    with writer.cursor() as cur:
        cur.execute("INSERT INTO log (n) VALUES (1)")  # the shape is now cached
    reader = _connect(server, "reader", "r")
    with reader.cursor() as cur:
        with pytest.raises(pymysql.err.OperationalError) as info:
            cur.execute("INSERT INTO log (n) VALUES (2)")
        assert info.value.args[0] == 1142
    server.server.db.settle()
    assert server.server.db.execute("SELECT n FROM log") == [(1,)]
    reader.close()
    writer.close()


def test_pipelined_writes_and_reads_are_answered_in_order(server: ServerThread) -> None:
    conn = _connect(server, "writer", "w")
    with conn.cursor() as cur:
        cur.execute("INSERT INTO log (n) VALUES (0)")  # cache the shape
    conn.close()
    raw = _connect(server, "writer", "w")
    sock: socket.socket = raw._sock  # type: ignore[attr-defined]
    statements = [f"INSERT INTO log (n) VALUES ({i})" for i in range(1, 30)]
    statements.insert(10, "INSERT INTO log (n) VALUES (NULL)")  # fails alone, in its place
    payload = b"".join(_packet(b"\x03" + s.encode()) for s in statements)
    sock.sendall(payload)  # all at once: later packets wait for each write's answer
    firsts = [_read_packet(sock)[0] for _ in statements]
    assert firsts == [0x00] * 10 + [0xFF] + [0x00] * 19
    server.server.db.settle()
    rows = server.server.db.execute("SELECT n FROM log")
    assert sorted(r[0] for r in rows) == list(range(30))
    raw.close()


def _packet(payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "little") + b"\x00" + payload


def _read_packet(sock: socket.socket) -> bytes:
    header = _recv(sock, 4)
    return _recv(sock, int.from_bytes(header[:3], "little"))


def _recv(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        assert chunk, "the server closed the connection"
        out += chunk
    return out
