"""``rivulet backup`` / ``db.backup()`` and ``rivulet restore`` (rivulet/storage/backup.py).

A backup taken while writers go on holds every write acknowledged before it began, is at
one LSN (a transfer between two accounts is in it whole or not at all; views answer as
recomputed from its tables), and no write waits for it or fails; beside a running
``rivulet serve`` the CLI backs up without going through the server while its clients
write. A restored directory opens and answers as the original did, and passes ``verify``
on Spark. A destination that holds files, a damaged backup (truncated, changed, failing
SQLite's integrity check, without its manifest), a directory holding data or held by a
running process are refused with a clear error and nothing changed; a backup killed
midway leaves nothing that restore takes for a backup.
"""

from __future__ import annotations

import collections
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pymysql
import pytest

import rivulet
from rivulet.errors import BackupError, DataDirectoryInUseError
from rivulet.pipeline.verify import format_report, verify
from rivulet.server.auth import UserStore
from rivulet.storage.backup import MANIFEST, read_backup, restore_backup, take_backup
from spark_fixtures import spark_session  # noqa: F401 (the shared ``spark`` fixture)
from test_server_serve import start, stop

PROGRAM = """
CREATE TABLE stories (id INT PRIMARY KEY, author INT, title VARCHAR(50), score DOUBLE);
CREATE TABLE votes (id INT PRIMARY KEY, story INT NOT NULL, user_id INT NOT NULL);
CREATE VIEW vc AS SELECT story, COUNT(*) AS n FROM votes WHERE story = ? GROUP BY story;
CREATE VIEW story_votes AS SELECT stories.id, stories.title, COUNT(votes.id) AS n
    FROM stories LEFT JOIN votes ON stories.id = votes.story WHERE stories.id = ?
    GROUP BY stories.id, stories.title;
CREATE VIEW by_author AS SELECT id, title FROM stories WHERE author = ? ORDER BY id DESC LIMIT 2;
CREATE VIEW top AS SELECT story, COUNT(*) AS n FROM votes GROUP BY story ORDER BY n DESC, story
    LIMIT 3;
CREATE VIEW everything AS SELECT COUNT(*) AS n, SUM(score) AS s FROM stories;
"""


def news(path: Path) -> rivulet.Database:
    db = rivulet.open(path)
    db.execute_script(PROGRAM)
    db.table("stories").insert_many(
        [(i, i % 5, f"story {i} é", i / 7 if i % 4 else None) for i in range(40)])
    db.table("votes").insert_many([(i, i * 7 % 40, i % 13) for i in range(300)])
    db.table("votes").delete("id < ?", [20])
    db.settle()
    return db


def answers(db: rivulet.Database) -> dict[str, Any]:
    """Every view's answer for a spread of keys (reading fills the partial views)."""
    out: dict[str, Any] = {}
    for key in (0, 1, 2, 7, 39, 1000):
        out[f"vc {key}"] = db.view("vc").lookup(key)
        out[f"story_votes {key}"] = db.view("story_votes").lookup(key)
    for author in range(6):
        out[f"by_author {author}"] = db.view("by_author").lookup(author)
    out["top"] = db.view("top").lookup()
    out["everything"] = db.view("everything").lookup()
    out["query"] = sorted(db.query("SELECT story, user_id FROM votes WHERE user_id = ?", [3]))
    return out


def listing(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` with its contents (what "unchanged" is checked against)."""
    return {p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(path.rglob("*")) if p.is_file()}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rivulet", *args], capture_output=True,
                          text=True, timeout=300)


# --------------------------------------------------------------------------- under load


def test_a_backup_while_writers_go_on_holds_every_acknowledged_write_at_one_lsn(
        tmp_path: Path) -> None:
    db = rivulet.open(tmp_path / "data")
    db.execute_script("""
        CREATE TABLE events (id INT PRIMARY KEY, k INT NOT NULL, pad VARCHAR(300));
        CREATE TABLE accounts (id INT PRIMARY KEY, balance INT NOT NULL);
        CREATE TABLE transfers (id INT PRIMARY KEY, src INT, dst INT, amount INT);
        CREATE VIEW per_k AS SELECT k, COUNT(*) AS n FROM events GROUP BY k;
        CREATE VIEW money AS SELECT SUM(balance) AS total, COUNT(*) AS n FROM accounts;
    """)
    pad = "x" * 300  # some 25 MB of rows, so that the copy takes a while
    for lo in range(0, 80_000, 10_000):
        db.table("events").insert_many((i, i % 17, pad) for i in range(lo, lo + 10_000))
    opening = {i: 1000 for i in range(20)}
    db.table("accounts").insert_many(opening.items())
    stop = threading.Event()
    errors: list[BaseException] = []
    inserted: list[tuple[int, float, float]] = []  # (id, sent, acknowledged)
    base = 1_000_000

    def insert() -> None:
        n = 0
        while not stop.is_set():
            sent = time.perf_counter()
            try:
                db.execute("INSERT INTO events VALUES (?, ?, ?)", (base + n, n % 17, "w"))
            except BaseException as exc:
                errors.append(exc)
                return
            inserted.append((base + n, sent, time.perf_counter()))
            n += 1

    def transfer() -> None:
        rnd = random.Random(5)
        n = 0
        while not stop.is_set():
            src, dst = rnd.sample(range(20), 2)
            amount = rnd.randrange(1, 50)
            try:
                with db.transaction() as tx:
                    tx.execute("UPDATE accounts SET balance = balance - ? WHERE id = ?",
                               (amount, src))
                    tx.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?",
                               (amount, dst))
                    tx.execute("INSERT INTO transfers VALUES (?, ?, ?, ?)", (n, src, dst, amount))
            except BaseException as exc:
                errors.append(exc)
                return
            n += 1

    threads = [threading.Thread(target=insert), threading.Thread(target=transfer)]
    for t in threads:
        t.start()
    try:
        while len(inserted) < 200 and not errors:
            time.sleep(0.01)
        acknowledged = {i for i, _, _ in inserted}
        began = time.perf_counter()
        backup = db.backup(tmp_path / "backup")
        ended = time.perf_counter()
        while len(inserted) < len(acknowledged) + 500 and not errors:
            time.sleep(0.01)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    during = [(i, ack - sent) for i, sent, ack in inserted if began < ack < ended]
    assert during, "no write was acknowledged while the backup ran"
    final_lsn = db.lsn
    db.close()
    print(f"backup of {backup.size:,} bytes in {ended - began:.3f} s; {len(during)} writes "
          f"acknowledged meanwhile, the slowest in {max(d for _, d in during) * 1000:.1f} ms")

    assert 0 < backup.lsn < final_lsn and sorted(os.listdir(backup.path)) == [
        MANIFEST, "rivulet.db"]
    restore_backup(backup.path, tmp_path / "restored")
    with rivulet.open(tmp_path / "restored") as restored:
        assert restored.lsn == backup.lsn
        written = sorted(i for (i,) in restored.query("SELECT id FROM events WHERE id >= ?",
                                                       [base]))
        assert acknowledged <= set(written)  # every write acknowledged before it began
        assert written == list(range(base, base + len(written)))  # a prefix: no holes
        assert len(written) < len(inserted)  # (and not the writes after it)
        balances = dict(restored.query("SELECT id, balance FROM accounts"))
        moved = collections.Counter(opening)
        for src, dst, amount in restored.query("SELECT src, dst, amount FROM transfers"):
            moved[src] -= amount
            moved[dst] += amount
        assert balances == dict(moved)  # every transfer whole, none half
        assert restored.view("money").lookup() == [(sum(opening.values()), 20)]
        rows = restored.query("SELECT k FROM events")
        assert sorted(restored.view("per_k").lookup()) == sorted(
            collections.Counter(k for (k,) in rows).items())


# --------------------------------------------------------------------------- restore


def test_a_restored_backup_answers_as_the_original_with_its_users(tmp_path: Path) -> None:
    source = tmp_path / "data"
    with news(source) as db:
        UserStore(source).set_user("app", "secret", read_only=True)
        for leftover in ("stream", "_bootstrap"):  # derived state and scratch: left out
            (source / leftover).mkdir()
            (source / leftover / "x").write_text("x")
        (source / "users.tmp").write_text("half written")
        before = answers(db)
        backup = db.backup(tmp_path / "backup")
        assert backup.lsn == db.lsn
    assert sorted(f.name for f in backup.files) == ["rivulet.db", "users.json"]
    assert read_backup(backup.path) == backup
    assert (backup.path / "users.json").read_bytes() == (source / "users.json").read_bytes()

    restored_at = tmp_path / "restored"
    assert restore_backup(backup.path, restored_at).lsn == backup.lsn
    assert sorted(os.listdir(restored_at)) == ["rivulet.db", "rivulet.lock", "users.json"]
    assert UserStore(restored_at).accounts["app"].read_only
    with rivulet.open(restored_at) as db:
        assert db.lsn == backup.lsn
        assert answers(db) == before
        db.execute("INSERT INTO votes VALUES (5000, 1, 1)")  # and it takes writes
        db.settle()
        assert db.view("vc").lookup(1) == [(1, before["vc 1"][0][1] + 1)]


def test_the_cli_restores_over_data_only_with_force(tmp_path: Path) -> None:
    with news(tmp_path / "data") as db:
        before = answers(db)
    done = cli("backup", str(tmp_path / "backup"), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 0, done
    assert re.search(r"LSN \d+, 2 files", done.stdout), done.stdout
    other = tmp_path / "other"
    with rivulet.open(other) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    held = listing(other)
    done = cli("restore", str(tmp_path / "backup"), "--data-dir", str(other))
    assert done.returncode == 1 and "holds data (rivulet.db" in done.stderr, done
    assert "--force" in done.stderr and listing(other) == held
    done = cli("restore", str(tmp_path / "backup"), "--data-dir", str(other), "--force")
    assert done.returncode == 0 and "restored" in done.stdout, done
    assert not [p for p in other.iterdir() if p.name.startswith(".")]  # no scratch left
    with rivulet.open(other) as db:
        assert answers(db) == before and "t" not in db.catalog.tables


# --------------------------------------------------------------------------- refusals


def test_a_destination_that_holds_files_or_lies_inside_the_data_dir_is_refused(
        tmp_path: Path) -> None:
    with news(tmp_path / "data") as db:
        full = tmp_path / "full"
        full.mkdir()
        (full / "keep.txt").write_text("mine")
        with pytest.raises(BackupError, match=r"is not empty \(keep.txt\)"):
            db.backup(full)
        assert listing(full) == {"keep.txt": b"mine"}
        (tmp_path / "file").write_text("mine")
        with pytest.raises(BackupError, match="is not a directory"):
            db.backup(tmp_path / "file")
        with pytest.raises(BackupError, match="cannot go inside the data directory"):
            db.backup(tmp_path / "data" / "backup")
        assert not (tmp_path / "data" / "backup").exists()
        empty = tmp_path / "mounted"  # an existing empty directory (a mount point) is fine
        empty.mkdir()
        backup = db.backup(empty)
        assert sorted(os.listdir(empty)) == [MANIFEST, "rivulet.db"] and backup.lsn == db.lsn
    assert sorted(os.listdir(tmp_path)) == ["data", "file", "full", "mounted"]  # no scratch
    with pytest.raises(BackupError, match="no rivulet data directory"):
        take_backup(tmp_path / "full", tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists() and not (tmp_path / "full" / "rivulet.db").exists()
    done = cli("backup", str(full), "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 1 and "is not empty" in done.stderr, done


def damaged(tmp_path: Path, name: str, change: Any, *, fix_manifest: bool = False) -> Path:
    """A copy of the backup at ``tmp_path/backup`` whose database ``change`` altered (and
    whose manifest then agrees with it, if ``fix_manifest``)."""
    copy = tmp_path / name
    shutil.copytree(tmp_path / "backup", copy)
    database = copy / "rivulet.db"
    database.write_bytes(change(database.read_bytes()))
    if fix_manifest:
        import hashlib

        manifest = json.loads((copy / MANIFEST).read_text())
        manifest["files"]["rivulet.db"] = {"size": database.stat().st_size,
                                           "sha256": hashlib.sha256(database.read_bytes())
                                           .hexdigest()}
        (copy / MANIFEST).write_text(json.dumps(manifest))
    return copy


def test_a_damaged_backup_is_refused_and_the_directory_left_as_it_was(tmp_path: Path) -> None:
    with news(tmp_path / "data") as db:
        db.table("votes").insert_many([(i, i % 40, i % 13) for i in range(1000, 5000)])
        db.backup(tmp_path / "backup")
    page = 4096

    def scrambled(data: bytes) -> bytes:  # pages of the tables' B-trees overwritten
        junk = random.Random(1).randbytes(3 * page)
        return data[:2 * page] + junk + data[5 * page:]

    cases = [
        (damaged(tmp_path, "truncated", lambda d: d[:len(d) // 2]),
         r"rivulet.db of the backup .* is [\d,]+ bytes, its manifest says [\d,]+: .*damaged"),
        (damaged(tmp_path, "changed", lambda d: d[:-100] + b"\xff" * 100),
         "does not match its SHA-256 in the manifest"),
        (damaged(tmp_path, "malformed", scrambled, fix_manifest=True),
         "fails SQLite's integrity check|is damaged"),
        (damaged(tmp_path, "truncated_agreeing", lambda d: d[:3 * page], fix_manifest=True),
         "fails SQLite's integrity check|is damaged"),
    ]
    (tmp_path / "plain").mkdir()
    shutil.copy(tmp_path / "data" / "rivulet.db", tmp_path / "plain" / "rivulet.db")
    cases.append((tmp_path / "plain", "no rivulet backup: it has no backup.json"))
    with rivulet.open(tmp_path / "existing") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        db.execute("INSERT INTO t VALUES (1)")
    existing = listing(tmp_path / "existing")
    for backup, message in cases:
        for target, force in ((tmp_path / "new", False), (tmp_path / "existing", True)):
            with pytest.raises(BackupError, match=message):
                restore_backup(backup, target, force=force)
        assert not (tmp_path / "new").exists()
        assert listing(tmp_path / "existing") == existing
    everything = listing(tmp_path)
    with pytest.raises(BackupError, match="into a directory that holds it"):
        restore_backup(tmp_path / "backup", tmp_path, force=True)
    assert listing(tmp_path) == everything
    done = cli("restore", str(tmp_path / "truncated"), "--data-dir", str(tmp_path / "new"))
    assert done.returncode == 1 and "the backup is damaged" in done.stderr, done
    assert not (tmp_path / "new").exists()
    with rivulet.open(tmp_path / "existing") as db:
        assert db.query("SELECT id FROM t") == [(1,)]


def test_restore_refuses_a_directory_a_running_process_holds(tmp_path: Path) -> None:
    with news(tmp_path / "data") as db:
        db.backup(tmp_path / "backup")
    with rivulet.open(tmp_path / "held") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        held = listing(tmp_path / "held")
        with pytest.raises(DataDirectoryInUseError, match=rf"process {os.getpid()}"):
            restore_backup(tmp_path / "backup", tmp_path / "held", force=True)
        assert listing(tmp_path / "held") == held
        db.execute("INSERT INTO t VALUES (1)")  # the holder goes on
        assert db.query("SELECT id FROM t") == [(1,)]


def test_a_backup_killed_midway_leaves_nothing_restore_takes_for_a_backup(
        tmp_path: Path) -> None:
    with news(tmp_path / "data"):
        pass
    env = {**os.environ, "RIVULET_FAULTS": "backup_copy"}
    for dest in (tmp_path / "new", tmp_path / "empty"):
        if dest.name == "empty":
            dest.mkdir()
        done = subprocess.run([sys.executable, "-m", "rivulet", "backup", str(dest),
                               "--data-dir", str(tmp_path / "data")], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == -9 and "rivulet-fault: backup_copy" in done.stderr, done
        leftovers = [p for p in tmp_path.rglob("*backup-partial-*") if p.is_dir()]
        assert leftovers and all((p / "rivulet.db").exists() for p in leftovers)
        for candidate in [dest, *leftovers]:
            if candidate.exists():
                with pytest.raises(BackupError, match="no rivulet backup"):
                    restore_backup(candidate, tmp_path / "restored")
        assert not (tmp_path / "restored").exists()
        for p in leftovers:
            shutil.rmtree(p)
    assert not (tmp_path / "new").exists()


# --------------------------------------------------------------------------- beside a server


def test_the_cli_backs_up_beside_a_running_server_while_clients_write(tmp_path: Path) -> None:
    proc, port, lines = start(tmp_path / "data", "--no-demo")
    stop_writing = threading.Event()
    errors: list[BaseException] = []
    written: list[tuple[int, float, float]] = []  # (id, sent, acknowledged)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("CREATE TABLE t (id INT PRIMARY KEY, k INT)")
            cursor.execute("CREATE VIEW per_k AS SELECT k, COUNT(*) AS n FROM t GROUP BY k")

        def write() -> None:
            n = 0
            try:
                with conn.cursor() as cursor:
                    while not stop_writing.is_set():
                        sent = time.perf_counter()
                        cursor.execute("INSERT INTO t VALUES (%s, %s)", (n, n % 7))
                        written.append((n, sent, time.perf_counter()))
                        n += 1
            except BaseException as exc:
                errors.append(exc)

        writer = threading.Thread(target=write)
        writer.start()
        try:
            while len(written) < 100 and not errors:
                time.sleep(0.01)
            acknowledged = len(written)
            began = time.perf_counter()
            done = cli("backup", str(tmp_path / "backup"), "--data-dir", str(tmp_path / "data"))
            ended = time.perf_counter()
            assert done.returncode == 0, done
            while len(written) < acknowledged + 100 and not errors:
                time.sleep(0.01)
        finally:
            stop_writing.set()
            writer.join()
        assert errors == []
        during = [ack - sent for _, sent, ack in written if began < ack < ended]
        assert during, "the server acknowledged no write while the backup ran"
        print(f"{len(during)} writes acknowledged during rivulet backup ({ended - began:.2f} s), "
              f"the slowest in {max(during) * 1000:.1f} ms")
        with conn.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM t")
            assert cursor.fetchone() == (len(written),)
        conn.close()
    except BaseException:
        proc.kill()
        raise
    stop(proc, lines)

    lsn = int(re.search(r"LSN (\d+)", done.stdout).group(1))  # type: ignore[union-attr]
    assert "rivulet.lock" not in os.listdir(tmp_path / "backup")
    done = cli("restore", str(tmp_path / "backup"), "--data-dir", str(tmp_path / "restored"))
    assert done.returncode == 0, done
    with rivulet.open(tmp_path / "restored") as db:
        assert db.lsn == lsn
        ids = sorted(i for (i,) in db.query("SELECT id FROM t"))
        assert acknowledged <= len(ids) < len(written) and ids == list(range(len(ids)))
        assert sorted(db.view("per_k").lookup()) == sorted(
            collections.Counter(i % 7 for i in ids).items())


# --------------------------------------------------------------------------- verify


@pytest.mark.spark
def test_a_restored_backup_passes_verify(tmp_path: Path, spark: Any) -> None:
    with news(tmp_path / "data") as db:
        before = answers(db)
        backup = db.backup(tmp_path / "backup")
    restore_backup(backup.path, tmp_path / "restored")
    with rivulet.open(tmp_path / "restored") as db:
        assert answers(db) == before  # (reading fills the partial views verify checks)
        report = verify(db, spark=spark)
        assert report.ok, format_report(report)
        assert report.lsn == backup.lsn
        assert {v.view for v in report.views} >= {"vc", "story_votes", "by_author", "top",
                                                   "everything"}
        assert all(v.keys_checked > 0 for v in report.views)

