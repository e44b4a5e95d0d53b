"""Everything at once on one database, under fault injection: writers, a transaction
thread, bulk imports, readers whose misses upquery, eviction (explicit and under a memory
limit), the garbage collector, and DDL (views and tables made and dropped), while COMMITs
fail at random. Afterwards every acknowledged write is stored exactly once, every failed
one not at all, every view equals an SQLite oracle over the rows, before and after a
reopen, and no thread met an error it was not meant to meet (a misuse of one SQLite
connection by two threads, say, which fails a write with "bad parameter or other API
misuse")."""

from __future__ import annotations

import gc
import random
import sqlite3
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rivulet
from rivulet.engine.collector import collect_all
from rivulet.errors import ConstraintError, StorageError

GROUPS = 12
SECONDS = 6.0
PROGRAM = f"""
CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL, v INT NOT NULL);
CREATE TABLE u (g INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY, about INT NOT NULL);
INSERT INTO u VALUES {", ".join(f"({g}, 'group {g}')" for g in range(GROUPS))};
CREATE VIEW per_g AS SELECT g, COUNT(*) AS n, SUM(v) AS s FROM t WHERE g = ? GROUP BY g;
CREATE VIEW max_v AS SELECT g, MAX(v) AS m FROM t WHERE g = ? GROUP BY g;
CREATE VIEW top AS SELECT id, v FROM t WHERE g = ? ORDER BY v DESC, id LIMIT 3;
CREATE VIEW named AS SELECT t.id, t.v, u.name FROM t JOIN u ON t.g = u.g WHERE t.g = ?;
"""
VIEWS = {  # each view's query for the oracle, by group
    "per_g": "SELECT g, COUNT(*), SUM(v) FROM t WHERE g = ? GROUP BY g",
    "max_v": "SELECT g, MAX(v) FROM t WHERE g = ? GROUP BY g",
    "top": "SELECT id, v FROM t WHERE g = ? ORDER BY v DESC, id LIMIT 3",
    "named": "SELECT t.id, t.v, u.name FROM t JOIN u ON t.g = u.g WHERE t.g = ?",
}
INJECTED = "disk I/O error (injected)"


class FlakyCommits:
    """The storage connection, whose COMMITs fail now and then (and leave the transaction
    open, as SQLite's may), and which checks that whoever uses it holds the storage's lock:
    two threads on one SQLite connection is the misuse this test looks for, and it shows
    only now and then by itself."""

    def __init__(self, conn: sqlite3.Connection, owned: Callable[[], bool], rate: float,
                 seed: int) -> None:
        self._conn = conn
        self._owned = owned
        self._rate = rate
        self._random = random.Random(seed)
        self.failed = 0
        self.unlocked: list[str] = []

    def execute(self, sql: str, *args: Any) -> Any:
        self._check(sql)
        if sql == "COMMIT" and self._random.random() < self._rate:
            self.failed += 1
            raise sqlite3.OperationalError(INJECTED)
        return self._conn.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        self._check(sql)
        return self._conn.executemany(sql, *args)

    def _check(self, sql: str) -> None:
        if not self._owned():
            where = traceback.extract_stack()[-3]
            self.unlocked.append(f"{sql[:40]!r} from {where.filename}:{where.lineno}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class Run:
    """The threads' shared bookkeeping: rows as acknowledged, and errors nobody expected."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.rows: dict[int, tuple[int, int]] = {}  # id -> (g, v), acknowledged writes only
        self.unexpected: list[str] = []
        self.counts: dict[str, int] = {}

    def count(self, what: str) -> None:
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def loop(self, name: str, step: Callable[[random.Random], None], seed: int) -> threading.Thread:
        def body() -> None:
            rng = random.Random(seed)
            while not self.stop.is_set():
                try:
                    step(rng)
                except StorageError as exc:
                    if INJECTED not in str(exc):
                        self.unexpected.append(f"{name}: {exc!r}")
                    self.count("injected failures met")
                except Exception as exc:  # noqa: BLE001 (each is a finding)
                    where = traceback.extract_tb(exc.__traceback__)[-1]
                    self.unexpected.append(f"{name}: {exc!r} at {where.filename}:{where.lineno}")
        thread = threading.Thread(target=body, name=name, daemon=True)
        thread.start()
        return thread


def test_everything_at_once_keeps_every_acknowledged_write_once_and_views_right(
        tmp_path: Path) -> None:
    db = rivulet.open(tmp_path, memory_limit="300KB")
    db.execute_script(PROGRAM)
    flaky = FlakyCommits(db.storage.conn, db.storage._lock._is_owned,  # type: ignore[attr-defined]
                         rate=0.03, seed=7)
    db.storage.conn = flaky  # type: ignore[assignment]
    run = Run()
    next_id = iter(range(1, 10**9))
    ids_lock = threading.Lock()

    def new_ids(n: int) -> list[int]:
        with ids_lock:
            return [next(next_id) for _ in range(n)]

    def owned(rng: random.Random, mine: list[int]) -> int | None:
        with run.lock:
            alive = [i for i in mine if i in run.rows]
        return rng.choice(alive) if alive else None

    def writer(mine: list[int]) -> Callable[[random.Random], None]:
        def step(rng: random.Random) -> None:
            choice = rng.random()
            target = owned(rng, mine)
            if choice < 0.5 or target is None:
                rows = [(i, rng.randrange(GROUPS), rng.randrange(100)) for i in new_ids(4)]
                if db.table("t").insert_many(rows) != len(rows):
                    run.unexpected.append(f"insert of {len(rows)} rows reported fewer")
                    return
                mine.extend(r[0] for r in rows)
                with run.lock:
                    run.rows.update({r[0]: (r[1], r[2]) for r in rows})
            elif choice < 0.65:  # a duplicate key fails alone and changes nothing
                try:
                    db.execute("INSERT INTO t VALUES (?, 0, 0)", [target])
                except ConstraintError:
                    run.count("duplicates refused")
                else:
                    run.unexpected.append(f"duplicate id {target} was accepted")
            elif choice < 0.9:
                v = rng.randrange(100)
                db.execute("UPDATE t SET v = ? WHERE id = ?", [v, target])
                with run.lock:
                    run.rows[target] = (run.rows[target][0], v)
            else:
                db.execute("DELETE FROM t WHERE id = ?", [target])
                with run.lock:
                    del run.rows[target]
        return step

    def transactions(mine: list[int]) -> Callable[[random.Random], None]:
        def step(rng: random.Random) -> None:
            ids = new_ids(2)
            g = rng.randrange(GROUPS)
            with db.transaction() as tx:
                for i in ids:
                    tx.execute("INSERT INTO t VALUES (?, ?, ?)", [i, g, 1])
                tx.execute("UPDATE t SET v = v + 1 WHERE id = ?", [ids[0]])
                tx.execute("INSERT INTO notes (about) VALUES (?)", [ids[0]])  # numbered now
                assert tx.query("SELECT v FROM t WHERE id = ?", [ids[0]]) == [(2,)]
                if rng.random() < 0.3:
                    tx.rollback()
                    run.count("transactions rolled back")
                    return
            mine.extend(ids)
            with run.lock:
                run.rows.update({ids[0]: (g, 2), ids[1]: (g, 1)})
        return step

    def importer(rng: random.Random) -> None:
        rows = [(i, rng.randrange(GROUPS), rng.randrange(100)) for i in new_ids(200)]
        db.bulk_insert("t", [rows[:100], rows[100:]])
        with run.lock:
            run.rows.update({r[0]: (r[1], r[2]) for r in rows})
        time.sleep(0.05)

    def reader(rng: random.Random) -> None:
        name = rng.choice(sorted(VIEWS))
        db.view(name).lookup(rng.randrange(GROUPS))
        if rng.random() < 0.1:
            db.query("SELECT COUNT(*) FROM t WHERE g = ?", [rng.randrange(GROUPS)])

    def evictor(rng: random.Random) -> None:
        db.evict()
        run.count("evictions")
        time.sleep(0.05)

    def collector(rng: random.Random) -> None:
        gc.collect() if rng.random() < 0.8 else collect_all()
        time.sleep(0.02)

    def ddl(rng: random.Random) -> None:
        # (A DROP whose commit failed left its object: the next round drops it first.)
        db.execute("DROP VIEW IF EXISTS scratch")
        db.execute("DROP TABLE IF EXISTS scratch_t")
        db.execute("CREATE VIEW scratch AS SELECT g, MIN(v) AS m FROM t WHERE g = ? GROUP BY g")
        db.view("scratch").lookup(rng.randrange(GROUPS))
        db.execute("DROP VIEW scratch")
        db.execute("CREATE TABLE scratch_t (a INT PRIMARY KEY, b INT)")
        db.table("scratch_t").insert_many([(i, i) for i in range(3000)])
        db.execute("ALTER TABLE scratch_t MODIFY b VARCHAR(10)")  # converted in the background
        db.execute("UPDATE scratch_t SET b = 'x' WHERE a = 5")
        db.execute("DROP TABLE scratch_t")
        run.count("DDL rounds")

    owners: list[list[int]] = [[] for _ in range(4)]
    threads = [run.loop(f"writer {k}", writer(owners[k]), seed=k) for k in range(3)]
    threads += [run.loop("transactions", transactions(owners[3]), seed=10),
                run.loop("import", importer, seed=11),
                run.loop("reader 1", reader, seed=12), run.loop("reader 2", reader, seed=13),
                run.loop("evictor", evictor, seed=14), run.loop("collector", collector, seed=15),
                run.loop("ddl", ddl, seed=16)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads interleave at many more places
    try:
        time.sleep(SECONDS)
        # On a loaded machine a DDL round (a table filled, altered, dropped) may not have
        # ended yet: the run goes on until one has, and a commit has failed, or a minute.
        deadline = time.monotonic() + 60
        while (run.counts.get("DDL rounds", 0) == 0 or flaky.failed == 0) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        sys.setswitchinterval(interval)
    run.stop.set()
    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive(), f"{thread.name} is stuck"
    db.storage.conn = flaky._conn
    try:
        assert run.unexpected == [], sorted(set(run.unexpected))[:10]
        assert flaky.unlocked == [], sorted(set(flaky.unlocked))[:10]
        assert db.failure is None
        db.settle()
        assert flaky.failed > 0 and run.counts.get("DDL rounds", 0) > 0, run.counts
        check(db, run.rows)
    finally:
        db.close()
    with rivulet.open(tmp_path) as again:  # what was acknowledged survives a reopen
        check(again, run.rows)


def check(db: rivulet.Database, rows: dict[int, tuple[int, int]]) -> None:
    expected = sorted((i, g, v) for i, (g, v) in rows.items())
    assert sorted(db.query("SELECT id, g, v FROM t")) == expected  # each once, none lost
    oracle = sqlite3.connect(":memory:")
    oracle.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT)")
    oracle.execute("CREATE TABLE u (g INT PRIMARY KEY, name TEXT)")
    oracle.executemany("INSERT INTO t VALUES (?, ?, ?)", expected)
    oracle.executemany("INSERT INTO u VALUES (?, ?)", [(g, f"group {g}") for g in range(GROUPS)])
    for name, sql in VIEWS.items():
        for g in range(GROUPS):
            want = [tuple(r) for r in oracle.execute(sql, [g]).fetchall()]
            got = [tuple(int(x) if not isinstance(x, str) else x for x in r)
                   for r in db.view(name).lookup(g)]
            if name not in ("top",):
                want, got = sorted(want), sorted(got)
            assert got == want, (name, g)
