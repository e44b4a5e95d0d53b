"""``rivulet serve`` as a process: started, used over the MySQL protocol, stopped with
SIGTERM, restarted on the same data directory; ``--help`` on every command."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pymysql
import pytest

from rivulet.cli import main


def start(data_dir: Path, *extra: str) -> tuple[subprocess.Popen[str], int, list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rivulet", "serve", "--data-dir", str(data_dir),
         "--mysql-port", "0", "--http-port", "0", "--stories", "200", "--votes", "1000", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: list[str] = []
    deadline = time.monotonic() + 120
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "stop with Ctrl-C" in line:  # the last line of the connection instructions
            found = re.search(r"-P (\d+)", "".join(lines))
            assert found is not None, lines
            return proc, int(found.group(1)), lines
    proc.kill()
    raise AssertionError("rivulet serve did not start:\n" + "".join(lines))


def stop(proc: subprocess.Popen[str], lines: list[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, "".join(lines) + out
    return "".join(lines) + out


def test_serve_keeps_acknowledged_writes_across_sigterm(tmp_path: Path) -> None:
    proc, port, lines = start(tmp_path)
    try:
        http = re.search(r"(http://[\d.]+:\d+)/health", "".join(lines))
        assert http is not None, lines
        with urllib.request.urlopen(http.group(1) + "/health", timeout=10) as response:
            assert response.status == 200
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with conn.cursor() as cursor:
            assert cursor.execute("SELECT id, title FROM stories WHERE id = 3") == 1
            for i in range(50):
                cursor.execute("INSERT INTO votes (user_id, story_id) VALUES (%s, %s)",
                               (90_000 + i, 3))
            cursor.execute("INSERT INTO stories VALUES "
                           "(5000, 1, 'after start', NULL, '2025-01-01 00:00:00')")
        conn.close()
    except BaseException:
        proc.kill()
        raise
    out = stop(proc, lines)
    assert "installed the news example" in out and "stopped" in out

    proc, port, lines = start(tmp_path)
    try:
        assert "installed" not in "".join(lines)
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("SELECT title FROM stories WHERE id = 5000")
            assert cursor.fetchall() == (("after start",),)
            cursor.execute("SELECT COUNT(*) FROM votes WHERE story_id = 3 AND user_id >= 90000")
            assert cursor.fetchall() == ((50,),)
        conn.close()
    finally:
        stop(proc, lines)


@pytest.mark.parametrize("command", ["serve", "demo", "explain", "status", "shell", "user",
                                     "import", "verify"])
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert "usage: rivulet " + command in capsys.readouterr().out


def test_shell_against_a_server(tmp_path: Path) -> None:
    import rivulet
    from rivulet.server.mysql.server import ServerThread

    with rivulet.open(tmp_path) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))")
        running = ServerThread(db, port=0)
        try:
            script = ("INSERT INTO t VALUES (1, 'one'), (2, 'two'); "
                      "SELECT name FROM t WHERE id = 2;\n"
                      "SELECT nope\n FROM t WHERE id = 1;\nSHOW TABLES;\n")
            out = subprocess.run(
                [sys.executable, "-m", "rivulet", "shell", "--server", f"mysql://root@127.0.0.1:{running.port}"],
                input=script, capture_output=True, text=True, timeout=60).stdout
        finally:
            running.stop()
    assert "ok (2 rows)" in out
    assert "  two\n(1 rows)" in out
    assert "error: unknown column 'nope'" in out
    assert "  t\n(1 rows)" in out


def test_user_command_sets_hashed_passwords(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from rivulet.server.auth import UserStore, hash_password

    assert main(["user", "app", "--password", "pw", "--any-host", "--data-dir", str(tmp_path)]) == 0
    store = UserStore(tmp_path)
    assert store.accounts["app"].auth_string == hash_password("pw") != "pw"
    assert store.accounts["app"].host == "%"
    assert store.accounts["root"].host == "localhost" and store.accounts["root"].auth_string == ""
    assert main(["user", "app", "--remove", "--data-dir", str(tmp_path)]) == 0
    assert "app" not in UserStore(tmp_path).accounts
    assert main(["user", "app", "--remove", "--data-dir", str(tmp_path)]) == 1
