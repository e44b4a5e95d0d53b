"""One writer per data directory (rivulet.storage.dirlock): a second opener, in this
process or another, stops at once with an error naming the holder; a crashed holder's
lock is taken over; ``rivulet shell``/``import`` beside a running server are refused and
the server keeps writing, while ``status`` reads it as a follower; a server's replicas,
which only read, take no lock."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pymysql
import pytest

import rivulet
from rivulet.errors import DataDirectoryInUseError
from test_server_serve import start, stop


def test_a_second_open_in_this_process_is_refused_until_the_first_closes(
        tmp_path: Path) -> None:
    db = rivulet.open(tmp_path)
    db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    with pytest.raises(DataDirectoryInUseError, match=rf"process {os.getpid()} \(this process"):
        rivulet.open(tmp_path)
    db.execute("INSERT INTO t VALUES (1)")  # the holder goes on writing
    db.close()
    again = rivulet.open(tmp_path)
    try:
        assert again.query("SELECT id FROM t") == [(1,)]
    finally:
        again.close()


_HOLDER = textwrap.dedent("""
    import sys, time
    import rivulet
    db = rivulet.open(sys.argv[1])
    db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    db.execute("INSERT INTO t VALUES (7)")
    print("holding", flush=True)
    time.sleep(600)
""")


def test_a_directory_another_process_holds_is_refused_and_taken_over_when_it_dies(
        tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with pytest.raises(DataDirectoryInUseError, match=rf"process {holder.pid} \("):
            rivulet.open(tmp_path)
        assert (tmp_path / "rivulet.lock").exists()
    finally:
        holder.kill()  # a crash: nothing releases the lock but the kernel
        holder.wait(timeout=30)
    db = rivulet.open(tmp_path)
    try:
        assert db.query("SELECT id FROM t") == [(7,)]  # the acknowledged write survived
    finally:
        db.close()


def test_shell_and_import_beside_a_running_server_are_refused_and_the_server_writes_on(
        tmp_path: Path) -> None:
    proc, port, lines = start(tmp_path, "--no-demo")
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
            cursor.execute("INSERT INTO t VALUES (1, 10)")
        csv = tmp_path.parent / "rows.csv"
        csv.write_text("id,v\n2,20\n")
        importing = ["import", "--table", "t", str(csv), "--data-dir", str(tmp_path)]
        for command, stdin in [(["shell", "--data-dir", str(tmp_path)],
                                "INSERT INTO t VALUES (3, 30);\n"), (importing, "")]:
            done = subprocess.run([sys.executable, "-m", "rivulet", *command], input=stdin,
                                  capture_output=True, text=True, timeout=300)
            assert done.returncode != 0, done
            assert f"process {proc.pid}" in done.stderr, done.stderr
            assert f"MySQL port {port}" in done.stderr, done.stderr
        with conn.cursor() as cursor:  # the server's writes go on, its views follow
            cursor.execute("INSERT INTO t VALUES (4, 40)")
            cursor.execute("SELECT id, v FROM t ORDER BY id")
            assert cursor.fetchall() == ((1, 10), (4, 40))
        conn.close()
        status = subprocess.run([sys.executable, "-m", "rivulet", "status", "--data-dir",
                                 str(tmp_path)], capture_output=True, text=True, timeout=300)
        assert status.returncode == 0, status  # (status only reads: it follows the server)
        assert "reading it only" in status.stderr and "table t: 2 rows" in status.stdout
    except BaseException:
        proc.kill()
        raise
    stop(proc, lines)


def test_replicas_read_the_directory_their_primary_holds(tmp_path: Path) -> None:
    proc, port, lines = start(tmp_path, "--no-demo", "--replicas", "1")
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
            cursor.execute("INSERT INTO t VALUES (1, 10)")
            cursor.execute("SELECT v FROM t WHERE id = 1")
            assert cursor.fetchall() == ((10,),)
        conn.close()
    except BaseException:
        proc.kill()
        raise
    stop(proc, lines)
