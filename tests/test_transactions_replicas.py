"""Transactions through the replica processes of ``rivulet serve --replicas 2``, over the
wire, with PyMySQL as an application uses it: autocommit off (the DB-API default), so every
write is in a transaction. Whichever process serves a connection, its transaction reads
its own writes, other connections see nothing of it before COMMIT and all of it after, a
ROLLBACK (or a closed connection) leaves nothing, and AUTO_INCREMENT numbers come from the
primary (docs/transactions.md)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from test_server_serve import start, stop

ROLES = ["primary", "replica 1", "replica 2"]


class Servers:
    """``serve --replicas 2`` and one connection (autocommit off) served by each process."""

    def __init__(self, data_dir: Path) -> None:
        self.proc, self.port, self.lines = start(data_dir, "--replicas", "2", "--no-demo",
                                                 "--no-http")
        self.conns: dict[str, pymysql.Connection] = {}
        spare = []
        while len(self.conns) < len(ROLES):
            conn = self.connect()
            role = scalar(conn, "SELECT @@rivulet_server")
            if role in self.conns:
                spare.append(conn)
            else:
                self.conns[role] = conn
        for conn in spare:
            conn.close()

    def connect(self) -> pymysql.Connection:
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root",
                               database="rivulet")

    def close(self) -> str:
        for conn in self.conns.values():
            conn.close()
        return stop(self.proc, self.lines)


def scalar(conn: pymysql.Connection, sql: str, *params: Any) -> Any:
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchone()[0]


def rows(conn: pymysql.Connection, sql: str, *params: Any) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return sorted(tuple(r) for r in cur.fetchall())


def eventually(read: Any, expected: Any, seconds: float = 10.0) -> None:
    """Another connection's commit is seen by a new read once its process's views have it
    (a moment later: rivulet's reads from views are eventually consistent across
    connections, docs/transactions.md)."""
    deadline = time.monotonic() + seconds
    got = read()
    while got != expected and time.monotonic() < deadline:
        time.sleep(0.01)
        got = read()
    assert got == expected


def run(conn: pymysql.Connection, sql: str, *params: Any) -> int:
    with conn.cursor() as cur:
        return cur.execute(sql, params)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    s = Servers(tmp_path_factory.mktemp("replicas"))
    primary = s.conns["primary"]
    run(primary, "CREATE TABLE accounts (id INT PRIMARY KEY, owner VARCHAR(20), "
                 "balance INT NOT NULL)")
    run(primary, "CREATE TABLE notes (id INT PRIMARY KEY AUTO_INCREMENT, body VARCHAR(50))")
    run(primary, "INSERT INTO accounts VALUES (1, 'ann', 100), (2, 'bob', 100), (3, 'cy', 100)")
    primary.commit()
    yield s
    s.close()


def balances(conn: pymysql.Connection) -> list[tuple]:
    return rows(conn, "SELECT id, balance FROM accounts")


@pytest.mark.parametrize("role", ROLES)
def test_a_transaction_reads_its_writes_and_commits_them_all_at_once(
        servers: Servers, role: str) -> None:
    conn = servers.conns[role]
    others = [c for r, c in servers.conns.items() if r != role]
    before = balances(others[0])
    assert run(conn, "UPDATE accounts SET balance = balance - 10 WHERE id = 1") == 1
    assert run(conn, "UPDATE accounts SET balance = balance + 10 WHERE id = 2") == 1
    mine = balances(conn)
    assert mine[0][1] == before[0][1] - 10 and mine[1][1] == before[1][1] + 10
    assert rows(conn, "SELECT SUM(balance) FROM accounts WHERE id IN (1, 2)") == [
        (before[0][1] + before[1][1],)]
    for other in others:  # nothing of it is seen before COMMIT
        other.rollback()  # (a new statement sees the newest commits)
        assert balances(other) == before
    conn.commit()
    for other in [conn, *others]:  # (the primary acknowledges a COMMIT once durable)
        eventually(lambda: balances(other), mine)


@pytest.mark.parametrize("role", ROLES)
def test_a_rollback_or_a_closed_connection_leaves_nothing(servers: Servers, role: str) -> None:
    conn = servers.conns[role]
    before = balances(conn)
    run(conn, "UPDATE accounts SET balance = 0 WHERE id = 3")
    run(conn, "INSERT INTO accounts VALUES (50, 'dee', 5)")
    assert len(balances(conn)) == 4
    conn.rollback()
    assert balances(conn) == before
    extra = servers.connect()
    try:
        run(extra, "DELETE FROM accounts")
        assert balances(extra) == []
    finally:
        extra.close()  # in its transaction: rolled back
    assert balances(conn) == before


@pytest.mark.parametrize("role", ROLES)
def test_auto_increment_numbers_come_from_the_primary(servers: Servers, role: str) -> None:
    conn = servers.conns[role]
    with conn.cursor() as cur:
        cur.execute("INSERT INTO notes (body) VALUES (%s)", (f"from {role}",))
        first = cur.lastrowid
        cur.execute("INSERT INTO notes (body) VALUES (%s), (%s)", ("a", "b"))
    assert first > 0
    assert rows(conn, "SELECT body FROM notes WHERE id = %s", first) == [(f"from {role}",)]
    conn.commit()
    eventually(lambda: rows(servers.conns["primary"], "SELECT body FROM notes WHERE id = %s",
                            first), [(f"from {role}",)])
    numbers = [r[0] for r in rows(conn, "SELECT id FROM notes")]
    assert len(numbers) == len(set(numbers)) and first in numbers


@pytest.mark.parametrize("role", ROLES)
def test_a_failed_statement_keeps_the_transaction(servers: Servers, role: str) -> None:
    conn = servers.conns[role]
    run(conn, "INSERT INTO accounts VALUES (60, 'eve', 1)")
    with pytest.raises(pymysql.err.IntegrityError) as failed:
        run(conn, "INSERT INTO accounts VALUES (1, 'dup', 1)")
    assert failed.value.args[0] == 1062
    assert (60, 1) in balances(conn)
    conn.commit()
    other = servers.conns["primary" if role != "primary" else "replica 1"]
    eventually(lambda: (60, 1) in balances(other), True)
    run(conn, "DELETE FROM accounts WHERE id = 60")
    conn.commit()


def test_concurrent_transfers_through_every_process_keep_the_total(servers: Servers) -> None:
    """Each connection moves money between accounts of its own (no two write a row at
    once), many times; the total and each balance are exact."""
    primary = servers.conns["primary"]
    run(primary, "INSERT INTO accounts VALUES (101, 'p', 1000), (102, 'p', 1000), "
                 "(201, 'r1', 1000), (202, 'r1', 1000), (301, 'r2', 1000), (302, 'r2', 1000)")
    primary.commit()
    errors: list[BaseException] = []

    def transfers(conn: pymysql.Connection, base: int) -> None:
        try:
            for i in range(30):
                run(conn, "UPDATE accounts SET balance = balance - %s WHERE id = %s", i, base + 1)
                run(conn, "UPDATE accounts SET balance = balance + %s WHERE id = %s", i, base + 2)
                if i % 5 == 4:
                    conn.rollback()
                else:
                    conn.commit()
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=transfers, args=(servers.conns[role], 100 * (k + 1)))
               for k, role in enumerate(ROLES)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    moved = sum(i for i in range(30) if i % 5 != 4)
    expected = {base + k: 1000 + (moved if k == 2 else -moved)
                for base in (100, 200, 300) for k in (1, 2)}
    for conn in servers.conns.values():
        eventually(lambda: {i: b for i, b in balances(conn) if i > 100}, expected)


def test_locking_reads_through_every_process_lose_no_increment(servers: Servers) -> None:
    """SELECT ... FOR UPDATE then UPDATE from connections of all three processes: the
    locks are the primary's, so the count is exact."""
    primary = servers.conns["primary"]
    run(primary, "CREATE TABLE counter (id INT PRIMARY KEY, n INT NOT NULL)")
    run(primary, "INSERT INTO counter VALUES (1, 0)")
    primary.commit()
    conns = [servers.connect() for _ in range(6)]
    roles = {scalar(c, "SELECT @@rivulet_server") for c in conns}
    assert len(roles) == 3, roles
    errors: list[BaseException] = []

    def increments(conn: pymysql.Connection) -> None:
        try:
            for _ in range(15):
                n = scalar(conn, "SELECT n FROM counter WHERE id = 1 FOR UPDATE")
                run(conn, "UPDATE counter SET n = %s WHERE id = 1", n + 1)
                conn.commit()
        except BaseException as exc:  # reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=increments, args=(c,)) for c in conns]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    for conn in servers.conns.values():
        eventually(lambda: rows(conn, "SELECT n FROM counter WHERE id = 1"), [(90,)])
    for conn in conns:
        conn.close()


def test_a_deadlock_between_processes_answers_1213(servers: Servers) -> None:
    first, second = servers.conns["replica 1"], servers.conns["replica 2"]
    scalar(first, "SELECT balance FROM accounts WHERE id = 1 FOR UPDATE")
    scalar(second, "SELECT balance FROM accounts WHERE id = 2 FOR UPDATE")
    result: list[Any] = []
    waiting = threading.Thread(target=lambda: result.append(
        scalar(first, "SELECT balance FROM accounts WHERE id = 2 FOR UPDATE")))
    waiting.start()
    time.sleep(0.3)
    with pytest.raises(pymysql.err.OperationalError) as failed:
        run(second, "UPDATE accounts SET balance = balance WHERE id = 1")
    assert failed.value.args[0] == 1213
    waiting.join(10)
    assert len(result) == 1
    first.rollback()
    second.rollback()
