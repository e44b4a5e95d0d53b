"""Named locks (``GET_LOCK``, ``RELEASE_LOCK``, ``IS_FREE_LOCK``, ``IS_USED_LOCK``,
``RELEASE_ALL_LOCKS``): per session, re-entrant and counted, bounded waits, a wait that
would close a cycle refused at once (1213), released when the connection goes; compared
with MariaDB over two connections each (rivulet/engine/named_locks.py)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mysql.connector
import pymysql
import pytest
from mysql_oracle import MariaDBOracle

import rivulet
from rivulet import dbapi
from rivulet.engine.named_locks import NamedLocks
from rivulet.errors import DeadlockError, UnsupportedSqlError
from rivulet.server.mysql.server import ServerThread

#: (connection, statement) in turn, on two connections "a" and "b"; each answer (rows,
#: or the error code) must be MariaDB's. "@a" in an answer stands for a's CONNECTION_ID().
SCRIPT = [
    ("a", "SELECT GET_LOCK('x', 0)"),
    ("a", "SELECT GET_LOCK('x', 0)"),  # re-entrant: now taken twice
    ("b", "SELECT GET_LOCK('x', 0)"),  # another session's: 0 at once
    ("b", "SELECT GET_LOCK('X', 10)"),  # names compare exactly (as MariaDB's)
    ("b", "SELECT IS_FREE_LOCK('x'), IS_USED_LOCK('x'), IS_FREE_LOCK('y'), IS_USED_LOCK('y')"),
    ("b", "SELECT RELEASE_LOCK('x')"),  # not b's: 0
    ("b", "SELECT RELEASE_LOCK('nobody')"),  # nobody's: NULL
    ("a", "SELECT RELEASE_LOCK('x')"),
    ("a", "SELECT IS_FREE_LOCK('x')"),  # still held once
    ("a", "SELECT RELEASE_LOCK('x')"),
    ("a", "SELECT RELEASE_LOCK('x')"),
    ("a", "SELECT GET_LOCK('x', 0), GET_LOCK('x', 0) AS again, GET_LOCK('y', 1.5) FROM DUAL"),
    ("b", "SELECT GET_LOCK('y', 0.2)"),  # waits 0.2 s, then 0
    ("a", "SELECT RELEASE_ALL_LOCKS()"),  # each level counts: 3
    ("a", "SELECT RELEASE_ALL_LOCKS()"),
    ("b", "SELECT RELEASE_ALL_LOCKS()"),
    ("a", "SELECT GET_LOCK(NULL, 0), GET_LOCK('', 0), GET_LOCK('z', NULL)"),
    ("a", "SELECT RELEASE_LOCK(NULL), IS_FREE_LOCK(NULL), IS_USED_LOCK(NULL), IS_FREE_LOCK('z')"),
    ("a", "SELECT GET_LOCK('z', 'abc'), IS_USED_LOCK('z')"),  # text as a number: 0 s
    ("a", "SELECT GET_LOCK('x')"),  # 1582
    ("a", "SELECT GET_LOCK(5, 0)"),  # a number is no name: an error on both
    ("a", "SELECT RELEASE_ALL_LOCKS()"),
]


def test_a_script_on_two_connections_answers_as_mariadb(server: ServerThread,
                                                        mariadb_oracle: MariaDBOracle) -> None:
    ours = {"a": _wire(server), "b": _wire(server)}
    theirs = {"a": mariadb_oracle.server.connect(None), "b": mariadb_oracle.server.connect(None)}
    try:
        for who, sql in SCRIPT:
            mine, expected = _answer(ours, who, sql), _answer(theirs, who, sql)
            assert mine == expected, (who, sql, mine, expected)
    finally:
        for conn in (*ours.values(), *theirs.values()):
            conn.close()


def test_a_wait_ends_when_the_lock_is_released_or_its_time_is_up(server: ServerThread) -> None:
    a, b = _wire(server), _wire(server)
    assert _one(a, "SELECT GET_LOCK('job', 0)") == 1
    started = time.monotonic()
    assert _one(b, "SELECT GET_LOCK('job', 0.3)") == 0
    assert 0.25 < time.monotonic() - started < 3
    waited = _in_thread(lambda: _one(b, "SELECT GET_LOCK('job', 30)"))
    time.sleep(0.2)
    assert _one(a, "SELECT IS_USED_LOCK('job')") == a.thread_id()
    started = time.monotonic()
    assert _one(a, "SELECT RELEASE_LOCK('job')") == 1
    assert waited() == 1 and time.monotonic() - started < 5
    assert _one(a, "SELECT IS_USED_LOCK('job')") == b.thread_id()
    # A negative timeout waits for ever (MySQL 5.7+; MariaDB 10.11 answers NULL instead).
    waited = _in_thread(lambda: _one(a, "SELECT GET_LOCK('job', -1)"))
    time.sleep(0.3)
    assert _one(b, "SELECT RELEASE_LOCK('job')") == 1
    assert waited() == 1


def test_a_connection_that_goes_releases_its_locks(server: ServerThread) -> None:
    a, b = _wire(server), _wire(server)
    assert _one(a, "SELECT GET_LOCK('m', 0), GET_LOCK('m', 0), GET_LOCK('n', 0)") == 1
    waited = _in_thread(lambda: _one(b, "SELECT GET_LOCK('m', 30)"))
    time.sleep(0.2)
    a.close()
    assert waited() == 1
    deadline = time.monotonic() + 5
    while _one(b, "SELECT IS_FREE_LOCK('n')") != 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    # A connection dropped without a goodbye (its socket closed) is released too.
    c = _wire(server)
    assert _one(c, "SELECT GET_LOCK('o', 0)") == 1
    c._sock.shutdown(socket.SHUT_RDWR)  # type: ignore[attr-defined]
    assert _one(b, "SELECT GET_LOCK('o', 10)") == 1


def test_a_client_gone_while_it_waits_takes_nothing(server: ServerThread) -> None:
    """A client that goes while its GET_LOCK waits (its socket closed mid-wait) gives the
    wait up, as MySQL ends a killed connection's: the lock, released later, is free,
    not taken for good by a session nobody can release it for."""
    a, b = _wire(server), _wire(server)
    assert _one(a, "SELECT GET_LOCK('w', 0)") == 1
    b_id = b.thread_id()
    b._execute_command(pymysql.constants.COMMAND.COM_QUERY,  # the wait, sent, left unread
                       "SELECT GET_LOCK('w', -1)")
    time.sleep(0.3)
    b._sock.shutdown(socket.SHUT_RDWR)  # type: ignore[attr-defined]
    b._sock.close()  # type: ignore[attr-defined]
    time.sleep(0.3)
    assert _one(a, "SELECT RELEASE_LOCK('w')") == 1
    time.sleep(0.3)
    assert _one(a, "SELECT IS_USED_LOCK('w')") is None, f"taken by the gone session {b_id}"
    assert _one(a, "SELECT GET_LOCK('w', 0)") == 1


def test_a_session_ended_while_it_waits_gives_up() -> None:
    """:meth:`NamedLocks.end_session` ends a waiting session's wait (NULL, as a killed
    wait) in a thread as on an event loop, and releases what it holds; another
    session's wait goes on."""
    locks = NamedLocks()
    holder, gone, other = locks.new_session(), locks.new_session(), locks.new_session()
    assert locks.get(holder, "k", 0) == 1
    assert locks.get(gone, "g", 0) == 1
    waits = _in_thread(lambda: locks.get(gone, "k", -1))
    still = _in_thread(lambda: locks.get(other, "k", 5))
    time.sleep(0.2)
    assert locks.end_session(gone) == 1  # 'g', held once
    assert waits() is None and locks.is_free("g") == 1
    assert locks.release(holder, "k") == 1
    assert still() == 1 and locks.is_used("k") == other

    async def on_a_loop() -> int | None:
        task = asyncio.ensure_future(locks.get_async(gone, "k", -1))
        await asyncio.sleep(0.1)
        locks.end_session(gone)
        return await asyncio.wait_for(task, 5)

    assert asyncio.run(on_a_loop()) is None and locks.is_used("k") == other


def test_a_connection_reset_releases_its_locks(server: ServerThread) -> None:
    """COM_RESET_CONNECTION ends the session as MySQL's does: its locks go too."""
    conn = mysql.connector.connect(host="127.0.0.1", port=server.port, user="root",
                                   password="", database="rivulet", use_pure=True,
                                   autocommit=True)
    other = _wire(server)
    try:
        cur = conn.cursor()
        cur.execute("SELECT GET_LOCK('r', 0)")
        assert cur.fetchall() == [(1,)]
        assert _one(other, "SELECT IS_FREE_LOCK('r')") == 0
        conn.cmd_reset_connection()
        assert _one(other, "SELECT IS_FREE_LOCK('r')") == 1
    finally:
        conn.close()
        other.close()


def test_a_wait_that_closes_a_cycle_is_a_deadlock(server: ServerThread,
                                                  mariadb_oracle: MariaDBOracle) -> None:
    """a holds p and waits for q; b holds q and asks for p: b's call fails at once with
    1213 (as on MariaDB), b keeps q, a's wait goes on until b lets q go."""
    for connect in (lambda: _wire(server), lambda: mariadb_oracle.server.connect(None)):
        a, b = connect(), connect()
        assert _one(a, "SELECT GET_LOCK('p', 0)") == _one(b, "SELECT GET_LOCK('q', 0)") == 1
        waited = _in_thread(lambda: _one(a, "SELECT GET_LOCK('q', 30)"))  # noqa: B023
        time.sleep(0.3)
        started = time.monotonic()
        with pytest.raises(pymysql.err.OperationalError) as caught:
            _one(b, "SELECT GET_LOCK('p', 30)")
        assert caught.value.args[0] == 1213 and time.monotonic() - started < 2
        assert _one(b, "SELECT RELEASE_LOCK('q')") == 1
        assert waited() == 1
        a.close()
        b.close()


def test_prepared_statements_take_parameters(server: ServerThread) -> None:
    conn = mysql.connector.connect(host="127.0.0.1", port=server.port, user="root",
                                   password="", database="rivulet", use_pure=True,
                                   autocommit=True)
    other = _wire(server)
    try:
        cur = conn.cursor(prepared=True)
        cur.execute("SELECT GET_LOCK(?, ?), IS_USED_LOCK(?)", ("prep", 1, "prep"))
        assert cur.fetchall() == [(1, conn.connection_id)]
        assert _one(other, "SELECT IS_FREE_LOCK('prep')") == 0
        cur.execute("SELECT RELEASE_LOCK(?)", ("prep",))
        assert cur.fetchall() == [(1,)]
    finally:
        conn.close()
        other.close()


def test_misplaced_calls_are_refused_by_name(server: ServerThread) -> None:
    conn = _wire(server)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    for sql, words in [("SELECT GET_LOCK('x', 0) + 1", "inside an expression"),
                       ("SELECT GET_LOCK('x', 0), 1", "beside"),
                       ("SELECT GET_LOCK(CONCAT('a', 'b'), 0)", "argument"),
                       ("SELECT GET_LOCK('x', 0) FROM t", "reads a table"),
                       ("SELECT id FROM t WHERE IS_FREE_LOCK('x') = 1", "SELECT of lock calls")]:
        with pytest.raises(pymysql.err.NotSupportedError, match=words):
            _one(conn, sql)
    assert _one(conn, "SELECT IS_FREE_LOCK('x')") == 1  # nothing was taken


def test_the_embedded_dbapi_connection_is_a_session(tmp_path: Path) -> None:
    db = rivulet.open(tmp_path / "db")
    running = ServerThread(db, port=0)
    embedded = dbapi.Connection(db)
    wire = _wire(running)
    try:
        cur = embedded.cursor()
        cur.execute("SELECT GET_LOCK(?, ?), GET_LOCK('e', 0) AS again", ("e", 0))
        assert cur.fetchall() == [(1, 1)]
        assert [d[0] for d in cur.description] == ["GET_LOCK(?, ?)", "again"]
        assert _one(wire, "SELECT IS_USED_LOCK('e')") == embedded.session_id
        assert _one(wire, "SELECT GET_LOCK('e', 0)") == 0
        cur.execute("SELECT RELEASE_ALL_LOCKS()")
        assert cur.fetchall() == [(2,)]
        assert _one(wire, "SELECT GET_LOCK('e', 0)") == 1
        cur.execute("SELECT RELEASE_LOCK('e')")
        assert cur.fetchall() == [(0,)]
        cur.execute("SELECT GET_LOCK(?, ?), RELEASE_LOCK(?)", ("t", "0.1", "t"))  # as numbers
        assert cur.fetchall() == [(1, 1)]
        with pytest.raises(dbapi.ProgrammingError, match="parameter value"):
            cur.execute("SELECT GET_LOCK(?, 0)", ({"not": "a value"},))
        with pytest.raises(UnsupportedSqlError, match="session"):
            db.query("SELECT GET_LOCK('x', 0)")
        wire.close()
        cur.execute("SELECT GET_LOCK('f', 0)")
    finally:
        running.stop()
        embedded.close()  # (its database too)
    assert db.named_locks.is_free("f") == 1


def test_sessions_of_a_replica_process_lock_in_the_primarys_table(tmp_path: Path) -> None:
    """With ``--replicas``, connections served by a replica process lock in the primary's
    table (forwarded): one table for the server, as for one process."""
    from test_server_serve import start, stop

    proc, port, lines = start(tmp_path, "--replicas", "1", "--no-demo", "--no-http")
    try:
        conns = [pymysql.connect(host="127.0.0.1", port=port, user="root",
                                 database="rivulet", autocommit=True) for _ in range(4)]
        roles = [_one(c, "SELECT @@rivulet_server") for c in conns]
        replica, primary = conns[roles.index("replica 1")], conns[roles.index("primary")]
        assert _one(replica, "SELECT GET_LOCK('shared', 0)") == 1
        assert _one(replica, "SELECT GET_LOCK('shared', 0)") == 1
        assert _one(primary, "SELECT IS_USED_LOCK('shared')") == \
            _one(replica, "SELECT CONNECTION_ID()")
        assert _one(primary, "SELECT GET_LOCK('shared', 0)") == 0
        assert _one(primary, "SELECT GET_LOCK('mine', 0)") == 1
        with pytest.raises(pymysql.err.OperationalError) as caught:  # forwarded, as is
            waited = _in_thread(lambda: _one(primary, "SELECT GET_LOCK('shared', 30)"))
            time.sleep(0.3)
            _one(replica, "SELECT GET_LOCK('mine', 30)")
        assert caught.value.args[0] == 1213
        replica.close()  # its session ends: its locks go, in the primary's table
        assert waited() == 1
        for conn in conns:
            if conn is not replica:
                conn.close()
    finally:
        stop(proc, lines)


def test_the_lock_table_counts_each_level() -> None:
    locks = NamedLocks()
    one, two = locks.new_session(), locks.new_session()
    assert one != two and max(one, two) < 1 << 16  # (below the server's connection ids)
    assert [locks.get(one, "k", 0) for _ in range(3)] == [1, 1, 1]
    assert locks.get(two, "k", 0.05) == 0
    assert [locks.release(one, "k") for _ in range(4)] == [1, 1, 1, None]
    assert locks.get(two, "k", 0) == 1 and locks.is_used("k") == two
    assert locks.get(one, "j", 0) == 1
    with pytest.raises(DeadlockError):
        waiting = _in_thread(lambda: locks.get(two, "j", 30))
        time.sleep(0.2)
        locks.get(one, "k", 30)
    assert locks.release_all(one) == 1
    assert waiting() == 1
    assert locks.release_all(two) == 2 and locks.is_free("k") == locks.is_free("j") == 1
    # Two threads of one session (a DB-API connection shared by threads) wait at once:
    # both are woken, and take the lock in turn (it is the session's: re-entrant).
    assert locks.get(one, "w", 0) == 1
    first = _in_thread(lambda: locks.get(two, "w", 30))
    second = _in_thread(lambda: locks.get(two, "w", 30))
    time.sleep(0.2)
    assert locks.release(one, "w") == 1
    assert first() == second() == 1 and locks.release_all(two) == 2


# --------------------------------------------------------------------------- helpers


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    db = rivulet.open(tmp_path / "db")
    running = ServerThread(db, port=0)
    try:
        yield running
    finally:
        running.stop()
        db.close()


def _wire(server: ServerThread) -> pymysql.Connection:
    return pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database="rivulet", autocommit=True)


def _answer(conns: dict[str, Any], who: str, sql: str) -> Any:
    """The rows of ``sql`` on ``conns[who]`` with connection ids named, or the error code."""
    ids = {conn.thread_id(): f"@{name}" for name, conn in conns.items()}
    try:
        with conns[who].cursor() as cur:
            cur.execute(sql)
            rows = cur.fetchall()
            used = [d[0].upper().startswith("IS_USED_LOCK") for d in cur.description]
    except pymysql.err.MySQLError as exc:
        # A number as a lock's name: MariaDB's 4079 (illegal parameter type), rivulet's
        # 1064; both refuse it.
        return ("error", 1064 if exc.args[0] == 4079 else exc.args[0])
    return [tuple(ids.get(v, v) if by_id else v for v, by_id in zip(row, used))
            for row in rows]


def _one(conn: Any, sql: str) -> Any:
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchone()[0]


def _in_thread(fn: Callable[[], Any]) -> Callable[[], Any]:
    """Run ``fn`` in a thread; the returned function joins it and gives its result."""
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()

    def result() -> Any:
        thread.join(30)
        assert out, "the call did not return"
        return out[0]

    return result
