"""``rivulet serve --replicas N``: connections dealt to the primary and replica processes.

Whichever process serves a connection, it must behave as one server: every read answers
what SQLite answers over the same writes once they are visible, a connection reads its
own writes at once, errors are the primary's, DDL sent to a replica takes effect for its
connection before the OK, and stopping the server stops the replicas. A replica that
dies takes its connections with it; the primary serves the next ones.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymysql.constants import CLIENT

import rivulet
from rivulet.server.auth import LOOPBACK, UserStore
from rivulet.server.mysql.primary import Replicas
from rivulet.server.mysql.server import MySQLServer
from test_server_serve import start, stop

CONNECTIONS = 4
USERS = range(6)
STORIES = range(5)
#: The table, in rivulet's (MySQL's) words and in SQLite's.
SCHEMA = ("CREATE TABLE votes (id INT PRIMARY KEY AUTO_INCREMENT, user_id INT NOT NULL, "
          "story_id INT NOT NULL)",
          "CREATE TABLE votes (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INT NOT NULL, "
          "story_id INT NOT NULL)")
READS = {
    "count": ("SELECT COUNT(*) FROM votes WHERE story_id = %s", STORIES),
    "by_user": ("SELECT story_id FROM votes WHERE user_id = %s", USERS),
}


class Cluster:
    """A server with one replica, its connections, and SQLite fed the same writes."""

    def __init__(self, data_dir: Path) -> None:
        self.proc, self.port, self.lines = start(data_dir, "--replicas", "1", "--no-demo",
                                                 "--no-http")
        self.data_dir = data_dir
        self.conns = [self.connect() for _ in range(CONNECTIONS)]
        self.roles = [self.scalar(c, "SELECT @@rivulet_server") for c in self.conns]
        self.lite = sqlite3.connect(":memory:", isolation_level=None)

    def connect(self) -> pymysql.Connection:
        """A connection that reads its own writes (as on one server: the setting's
        guarantee, which the primary and a replica must both keep)."""
        conn = pymysql.connect(host="127.0.0.1", port=self.port, user="root",
                               database="rivulet", autocommit=True)
        with conn.cursor() as cur:
            cur.execute("SET rivulet_read_your_writes = 1")
        return conn

    @staticmethod
    def scalar(conn: pymysql.Connection, sql: str, *params: Any) -> Any:
        with conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchone()[0]

    def create_schema(self, conn: pymysql.Connection) -> None:
        with conn.cursor() as cur:
            cur.execute(SCHEMA[0])
        self.lite.execute(SCHEMA[1])

    def on(self, role: str) -> pymysql.Connection:
        return self.conns[self.roles.index(role)]

    def execute(self, conn: pymysql.Connection, sql: str, *params: Any,
                changed: int | None = None) -> int:
        """A write on ``conn`` and on SQLite; returns rivulet's rowcount, which is SQLite's
        (or ``changed``: MySQL counts the rows an UPDATE changed, SQLite those it matched)."""
        with conn.cursor() as cur:
            cur.execute(sql, params)
            n = cur.rowcount
        expected = self.lite.execute(sql.replace("%s", "?"), params).rowcount
        expected = expected if changed is None else changed
        assert n == expected, f"{sql} {params}: rivulet changed {n} rows, SQLite {expected}"
        return n

    def read(self, conn: pymysql.Connection, kind: str, key: Any) -> list[tuple]:
        sql = READS[kind][0]
        with conn.cursor() as cur:
            cur.execute(sql, (key,))
            return sorted(cur.fetchall())

    def expected(self, kind: str, key: Any) -> list[tuple]:
        return sorted(self.lite.execute(READS[kind][0].replace("%s", "?"), (key,)).fetchall())

    def close(self) -> str:
        for conn in self.conns:
            conn.close()
        return stop(self.proc, self.lines)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("replicas"))
    c.create_schema(c.on("replica 1"))  # DDL through the replica
    yield c
    c.close()


def test_connections_are_dealt_to_the_primary_and_the_replica(cluster: Cluster) -> None:
    """Half the connections each; every one has its own CONNECTION_ID(), whichever
    process serves it (each numbers its connections from 1)."""
    assert sorted(set(cluster.roles)) == ["primary", "replica 1"]
    assert cluster.roles.count("primary") == CONNECTIONS // 2
    ids = [cluster.scalar(c, "SELECT CONNECTION_ID()") for c in cluster.conns]
    assert len(set(ids)) == CONNECTIONS, ids


OPS = st.lists(st.tuples(st.integers(0, CONNECTIONS - 1),
                         st.sampled_from(["vote", "unvote", "move", "count", "by_user"]),
                         st.sampled_from(list(USERS)), st.sampled_from(list(STORIES))),
               min_size=1, max_size=30)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_every_connection_answers_as_sqlite_and_reads_its_own_writes(
        cluster: Cluster, ops: list[tuple[int, str, int, int]]) -> None:
    for index, op, user, story in ops:
        conn = cluster.conns[index]
        if op == "vote":
            assert cluster.execute(conn, "INSERT INTO votes (user_id, story_id) VALUES (%s, %s)",
                                   user, story) == 1
            assert conn.insert_id() == cluster.lite.execute(
                "SELECT MAX(id) FROM votes").fetchone()[0]
        elif op == "unvote":
            cluster.execute(conn, "DELETE FROM votes WHERE user_id = %s AND story_id = %s",
                            user, story)
        elif op == "move":
            changed = cluster.lite.execute("SELECT COUNT(*) FROM votes WHERE user_id = ? AND "
                                           "story_id <> ?", (user, story)).fetchone()[0]
            cluster.execute(conn, "UPDATE votes SET story_id = %s WHERE user_id = %s", story, user,
                            changed=changed)
        if op in ("vote", "unvote", "move"):  # the writer reads its write at once
            assert cluster.read(conn, "count", story) == cluster.expected("count", story)
            assert cluster.read(conn, "by_user", user) == cluster.expected("by_user", user)
        else:
            key = story if op == "count" else user
            cluster.read(conn, op, key)  # other connections' writes may still be on their way
    for conn, role in zip(cluster.conns, cluster.roles):
        for kind, (_, keys) in READS.items():
            for key in keys:
                expected = cluster.expected(kind, key)
                deadline = time.monotonic() + 10
                while (got := cluster.read(conn, kind, key)) != expected:
                    assert time.monotonic() < deadline, (
                        f"{role}: {kind}({key}) = {got}, not {expected}")
                    time.sleep(0.01)


def test_a_replica_reports_the_primarys_errors_and_changes_nothing(cluster: Cluster) -> None:
    conn = cluster.on("replica 1")
    before = cluster.read(conn, "count", 1)
    with pytest.raises(pymysql.err.IntegrityError, match="1062"):
        with conn.cursor() as cur:
            cur.execute("INSERT INTO votes VALUES (1, 1, 1), (1, 2, 1)")
    with pytest.raises(pymysql.err.ProgrammingError, match="nosuch"):
        with conn.cursor() as cur:
            cur.execute("INSERT INTO nosuch VALUES (1)")
    assert cluster.read(conn, "count", 1) == before
    assert cluster.read(cluster.on("primary"), "count", 1) == before


def test_client_found_rows_counts_matched_rows_in_either_process(cluster: Cluster) -> None:
    """For a client that asks for CLIENT_FOUND_ROWS, an UPDATE counts the rows it matched
    (as SQLite does), changed or not, whichever process serves it: a replica's autocommit
    write is counted by the primary, its transaction's writes by the replica."""
    conns: dict[str, pymysql.Connection] = {}
    for _ in range(4):
        conn = pymysql.connect(host="127.0.0.1", port=cluster.port, user="root",
                               database="rivulet", autocommit=True,
                               client_flag=CLIENT.FOUND_ROWS)
        conns.setdefault(cluster.scalar(conn, "SELECT @@rivulet_server"), conn)
    assert sorted(conns) == ["primary", "replica 1"]
    cluster.execute(conns["primary"], "INSERT INTO votes (user_id, story_id) VALUES (%s, %s)",
                    7, 1)
    for role, conn in conns.items():
        matched = cluster.execute(conn, "UPDATE votes SET story_id = story_id "
                                        "WHERE user_id = %s", 7)
        assert matched >= 1, role
        with conn.cursor() as cur:
            cur.execute("BEGIN")
            assert cur.execute("UPDATE votes SET story_id = story_id WHERE user_id = %s",
                               (7,)) == matched, role
            cur.execute("ROLLBACK")
        conn.close()


def test_ddl_through_a_replica_is_in_effect_before_its_ok(cluster: Cluster) -> None:
    replica, primary = cluster.on("replica 1"), cluster.on("primary")
    with replica.cursor() as cur:
        cur.execute("CREATE VIEW VotesPerStory AS SELECT story_id, COUNT(*) AS n FROM votes "
                    "GROUP BY story_id")
        cur.execute("SELECT n FROM VotesPerStory WHERE story_id = %s", (2,))
        got = cur.fetchall()
    expected = cluster.lite.execute("SELECT COUNT(*) FROM votes WHERE story_id = 2 "
                                    "HAVING COUNT(*) > 0").fetchall()
    assert [tuple(r) for r in got] == expected
    with primary.cursor() as cur:  # and on the primary
        cur.execute("SELECT n FROM VotesPerStory WHERE story_id = %s", (2,))
        assert [tuple(r) for r in cur.fetchall()] == expected
    cluster.execute(replica, "INSERT INTO votes (user_id, story_id) VALUES (%s, %s)", 9, 2)
    assert cluster.scalar(replica, "SELECT n FROM VotesPerStory WHERE story_id = 2") == \
        cluster.lite.execute("SELECT COUNT(*) FROM votes WHERE story_id = 2").fetchone()[0]


def test_alter_table_through_a_replica_reaches_both_processes(tmp_path: Path) -> None:
    """A column added and a type changed (converted lazily on one server) through the
    replica: both processes answer with the new table at once."""
    cluster = Cluster(tmp_path)
    try:
        replica, primary = cluster.on("replica 1"), cluster.on("primary")
        cluster.create_schema(primary)
        for user in range(3):
            cluster.execute(primary, "INSERT INTO votes (user_id, story_id) VALUES (%s, %s)",
                            user, 7)
        with replica.cursor() as cur:
            cur.execute("ALTER TABLE votes ADD COLUMN weight INT NOT NULL DEFAULT 2, "
                        "MODIFY COLUMN story_id VARCHAR(10) NOT NULL")
            cur.execute("INSERT INTO votes (user_id, story_id, weight) VALUES (9, '7', 5)")
        for conn in (replica, primary):
            with conn.cursor() as cur:
                cur.execute("SELECT user_id, story_id, weight FROM votes WHERE story_id = %s",
                            ("7",))
                assert sorted(cur.fetchall()) == [(0, "7", 2), (1, "7", 2), (2, "7", 2),
                                                  (9, "7", 5)]
    finally:
        cluster.close()


def _replica_pids(data_dir: Path) -> list[int]:
    out = subprocess.run(["pgrep", "-f", f"rivulet.server.mysql.replica --data-dir {data_dir}"],
                         capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def test_stop_stops_the_replicas_and_keeps_their_writes(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path)
    try:
        assert len(_replica_pids(tmp_path)) == 1
        cluster.create_schema(cluster.on("primary"))
        for conn in cluster.conns:
            cluster.execute(conn, "INSERT INTO votes (user_id, story_id) VALUES (%s, %s)", 1, 1)
    finally:
        out = cluster.close()
    assert "Traceback" not in out, out
    assert _replica_pids(tmp_path) == []
    proc, port, lines = start(tmp_path, "--no-demo", "--no-http")
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="rivulet")
        assert Cluster.scalar(conn, "SELECT COUNT(*) FROM votes WHERE story_id = 1") == CONNECTIONS
        conn.close()
    finally:
        stop(proc, lines)


def test_when_a_replica_dies_the_primary_serves_new_connections(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path)
    try:
        cluster.create_schema(cluster.on("primary"))
        [pid] = _replica_pids(tmp_path)
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _replica_pids(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        fresh = [cluster.connect() for _ in range(3)]
        assert {Cluster.scalar(c, "SELECT @@rivulet_server") for c in fresh} == {"primary"}
        cluster.execute(fresh[0], "INSERT INTO votes (user_id, story_id) VALUES (%s, %s)", 2, 3)
        assert cluster.read(fresh[1], "count", 3) == cluster.expected("count", 3)
        for c in fresh:
            c.close()
    finally:
        cluster.conns = [c for c, r in zip(cluster.conns, cluster.roles) if r == "primary"]
        cluster.close()


def test_replicas_offer_tls_and_keep_read_only_users_read_only(
        tmp_path: Path, certificate: tuple[str, str]) -> None:
    cert, key = certificate
    UserStore(tmp_path).set_user("reader", "r-secret", LOOPBACK, read_only=True)
    proc, port, lines = start(tmp_path, "--replicas", "1", "--no-demo", "--no-http",
                              "--tls-cert", cert, "--tls-key", key)
    try:
        root = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True,
                               ssl={"ca": cert})
        with root.cursor() as cur:
            cur.execute(SCHEMA[0])
        readers = [pymysql.connect(host="127.0.0.1", port=port, user="reader",
                                   password="r-secret", autocommit=True, ssl={"ca": cert})
                   for _ in range(3)]
        conns = [root, *readers]
        assert all(isinstance(c._sock, ssl.SSLSocket) for c in conns)
        assert {Cluster.scalar(c, "SELECT @@rivulet_server") for c in conns} == {
            "primary", "replica 1"}
        for reader in readers:
            with pytest.raises(pymysql.err.OperationalError, match="1142"):
                with reader.cursor() as cur:
                    cur.execute("INSERT INTO votes (user_id, story_id) VALUES (1, 1)")
            assert Cluster.scalar(reader, "SELECT COUNT(*) FROM votes WHERE story_id = 1") == 0
        for c in conns:
            c.close()
    finally:
        stop(proc, lines)


def test_a_replica_that_cannot_start_fails_the_start_at_once(tmp_path: Path) -> None:
    """The primary does not wait out its start-up timeout for a replica that exited, and
    leaves no process behind."""
    db = rivulet.open(tmp_path)
    try:
        replicas = Replicas(MySQLServer(db), 1, ["--no-such-option"])

        async def start() -> None:
            began = time.monotonic()
            with pytest.raises(RuntimeError, match=r"replica\(s\) \[1\] did not open"):
                await replicas.start(timeout=120)
            assert time.monotonic() - began < 60

        asyncio.run(start())
        assert [r.process.poll() for r in replicas.replicas] == [2]  # argparse's status
        assert replicas._committed not in db.commit_listeners
    finally:
        db.close()


def test_the_time_a_write_stores_is_one_value_in_both_processes(cluster: Cluster) -> None:
    """A write through a replica that reads the clock (``NOW(6)``, a ``DEFAULT
    CURRENT_TIMESTAMP(6)``) is computed once, where it is run: the primary and the replica
    then hold the same values (the log carries them, not the calls), and each answers a
    read of the clock at its own statement."""
    replica, primary = cluster.on("replica 1"), cluster.on("primary")
    with replica.cursor() as cur:
        cur.execute("CREATE TABLE clocked (id INT PRIMARY KEY, "
                    "at DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6))")
        cur.execute("INSERT INTO clocked (id) VALUES (1)")
        cur.execute("INSERT INTO clocked VALUES (2, NOW(6))")
    sql = "SELECT id, at, at <= NOW(6) FROM clocked ORDER BY id"
    answers = {}
    for role, conn in (("replica", replica), ("primary", primary)):
        deadline = time.monotonic() + 10
        while True:  # (the primary sees the replica's writes once they are applied)
            with conn.cursor() as cur:
                cur.execute(sql)
                answers[role] = cur.fetchall()
            if len(answers[role]) == 2 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    assert answers["replica"] == answers["primary"]
    assert [(r[0], r[2]) for r in answers["primary"]] == [(1, 1), (2, 1)]
    assert answers["primary"][0][1] < answers["primary"][1][1]
