"""A failing commit never leaves a database that fails every later write: a failure that
leaves storage where it was (a full disk, an I/O error, a COMMIT that left the transaction
open) is the write's own and the next write commits; one that leaves storage unknown (the
log written by another process) fails the database, which says so (/health, /metrics, the
error of every write and read), and ``rivulet serve`` exits for its supervisor to restart
it, which recovers from the durable log."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pymysql
import pytest

import rivulet
from rivulet.cli import EXIT_FAILED
from rivulet.errors import DataflowFailedError, StorageError, StorageFailedError
from rivulet.server.http.app import make_app
from test_server_serve import start

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette's notice about httpx vs httpx2
    from starlette.testclient import TestClient

PROGRAM = """
CREATE TABLE t (id INT PRIMARY KEY, g INT);
CREATE VIEW per_g AS SELECT g, COUNT(*) AS n FROM t WHERE g = ? GROUP BY g;
"""


class CommitFailsOnce:
    """The storage connection, whose next COMMIT fails and leaves the transaction open, as
    SQLite's COMMIT does when it is busy (and may on an I/O error)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.armed = True

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT" and self.armed:
            self.armed = False
            raise sqlite3.OperationalError("disk I/O error")
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def write_to_the_log_behind_its_back(path: Path) -> None:
    """What a second writer did before the directory was locked: append to the log."""
    conn = sqlite3.connect(path / "rivulet.db")
    try:
        (last,) = conn.execute("SELECT MAX(lsn) FROM _rivulet_log").fetchone()
        conn.execute("INSERT INTO _rivulet_log VALUES (?, 'now', 0, NULL)", (last + 1,))
        conn.commit()
    finally:
        conn.close()


def test_a_commit_that_fails_is_the_write_s_alone_and_the_next_write_commits(
        tmp_path: Path) -> None:
    db = rivulet.open(tmp_path)
    try:
        db.execute_script(PROGRAM)
        db.execute("INSERT INTO t VALUES (1, 1)")
        failing = CommitFailsOnce(db.storage.conn)
        db.storage.conn = failing  # type: ignore[assignment]
        with pytest.raises(StorageError, match="commit failed: disk I/O error"):
            db.execute("INSERT INTO t VALUES (2, 1)")
        assert not failing.armed and db.failure is None
        db.storage.conn = failing._conn
        db.execute("INSERT INTO t VALUES (3, 1)")
        assert db.query("SELECT id FROM t ORDER BY id") == [(1,), (3,)]
        assert db.view("per_g").lookup(1) == [(1, 2)]
    finally:
        db.close()
    again = rivulet.open(tmp_path)
    try:
        assert again.query("SELECT id FROM t ORDER BY id") == [(1,), (3,)]
    finally:
        again.close()


def test_a_log_written_behind_its_back_fails_the_database_and_says_so(tmp_path: Path) -> None:
    db = rivulet.open(tmp_path)
    try:
        db.execute_script(PROGRAM)
        db.execute("INSERT INTO t VALUES (1, 1)")
        told: list[BaseException] = []
        db.on_failure(told.append)
        write_to_the_log_behind_its_back(tmp_path)
        with pytest.raises(StorageError, match="commit failed"):
            db.execute("INSERT INTO t VALUES (2, 1)")
        assert isinstance(db.failure, StorageFailedError) and told == [db.failure]
        assert "another process wrote" in str(db.failure)
        with pytest.raises(StorageFailedError, match="takes no write until it is opened"):
            db.execute("INSERT INTO t VALUES (3, 1)")
        with pytest.raises(DataflowFailedError):
            db.view("per_g").lookup(1)
        api = TestClient(make_app(db))
        health = api.get("/health")
        assert health.status_code == 503 and health.json()["status"] == "failed"
        assert "rivulet_failed 1" in api.get("/metrics").text.splitlines()
    finally:
        db.close()


def test_a_healthy_database_reports_rivulet_failed_0(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        db.execute_script(PROGRAM)
        assert "rivulet_failed 0" in TestClient(make_app(db)).get("/metrics").text.splitlines()


def test_serve_exits_for_a_restart_when_storage_fails_and_the_restart_recovers(
        tmp_path: Path) -> None:
    proc, port, lines = start(tmp_path, "--no-demo")
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT)")
            cursor.execute("INSERT INTO t VALUES (1, 1)")
            write_to_the_log_behind_its_back(tmp_path)
            with pytest.raises(pymysql.err.OperationalError, match="commit failed") as caught:
                cursor.execute("INSERT INTO t VALUES (2, 1)")
            assert caught.value.args[0] == 1105
        out, _ = proc.communicate(timeout=60)
    except BaseException:
        proc.kill()
        raise
    assert proc.returncode == EXIT_FAILED, "".join(lines) + out
    assert "the database failed" in out and "stopping for a restart" in out
    restarted = rivulet.open(tmp_path)
    try:
        assert restarted.query("SELECT id FROM t") == [(1,)]
        restarted.execute("INSERT INTO t VALUES (2, 1)")  # the restart writes again
        assert restarted.query("SELECT id FROM t ORDER BY id") == [(1,), (2,)]
    finally:
        restarted.close()

