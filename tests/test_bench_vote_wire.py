"""bench.vote_wire's memcached baseline and its figures.

The cache-aside application (``CountCache``) runs against a real memcached (Debian's
package, ``bench/memcached.py``) in front of the session's MariaDB oracle, whose column is
the truth every count read through the cache must equal; the run's figures
(``summarize``) are checked on rounds whose ratios are worked out by hand."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bench.mariadb import ensure_mysqlclient
from bench.memcached import Memcached
from bench.vote_wire import COLUMN_READ, Session, Target, Workload, summarize

STORIES = 3


@pytest.fixture(scope="module")
def memcached() -> Iterator[Memcached]:
    Memcached.ensure_installed(print)
    server = Memcached()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def cached(mariadb_oracle: Any, memcached: Memcached) -> Iterator[tuple[Target, Any]]:
    """The ``memcached`` system over a fresh schema: its target, and a PyMySQL connection
    to the schema (the oracle's view of the column)."""
    assert ensure_mysqlclient(print), "mysqlclient could not be installed"
    conn = mariadb_oracle.schema()
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(255) NOT NULL, "
                    "vcount INT NOT NULL DEFAULT 0)")
        cur.execute("CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL)")
        cur.executemany("INSERT INTO stories (id, title) VALUES (%s, %s)",
                        [(i, f"story {i}") for i in range(STORIES)])
    memcached.client().flush_all(noreply=False)
    database = conn.db.decode()
    try:
        yield Target("memcached", mariadb_oracle.server.port, database, COLUMN_READ, True,
                     memcached.port), conn
    finally:
        conn.close()


def column_counts(conn: Any) -> list[int]:
    with conn.cursor() as cur:
        cur.execute("SELECT vcount FROM stories ORDER BY id")
        return [row[0] for row in cur.fetchall()]


def test_a_read_fills_the_cache_and_a_vote_invalidates_it(cached: tuple[Target, Any]) -> None:
    t, oracle = cached
    session = Session(t, "a")
    try:
        assert session.cache is not None
        assert session.read(1) == 0 and session.cache.misses == 1
        assert session.cache.cache.get("vcount:1") == b"0"
        assert session.read(1) == 0 and session.cache.hits == 1
        session.vote(7, 1)
        session.vote(8, 1)
        assert session.cache.cache.get("vcount:1") is None
        assert [session.read(i) for i in range(STORIES)] == column_counts(oracle) == [0, 2, 0]
        assert session.read(1) == 2 and session.cache.hits == 2
    finally:
        session.close()


class VoteDuringRead:
    """A mysqlclient connection that runs ``vote`` once, right after its next statement's
    result comes back: a vote committed between a cache miss's read and its fill."""

    def __init__(self, conn: Any, vote: Callable[[], None]) -> None:
        self.conn = conn
        self.vote: Callable[[], None] | None = vote

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)

    def store_result(self) -> Any:
        result = self.conn.store_result()
        if self.vote is not None:
            vote, self.vote = self.vote, None
            vote()
        return result


def test_a_vote_between_a_miss_and_its_fill_leaves_no_stale_count(
        cached: tuple[Target, Any]) -> None:
    """The reader read 0 before the vote committed; its fill must not put that 0 back
    after the vote's invalidation (the lease's ``cas`` fails), so the next read sees 1."""
    t, oracle = cached
    reader, voter = Session(t, "reader"), Session(t, "voter")
    try:
        assert reader.cache is not None
        assert voter.cache is not None
        voter_cache = voter.cache.cache

        def vote() -> None:
            voter.vote(3, 2)
            voter_cache.get("vcount:2")  # its delete (sent without waiting) is done too

        reader.cache.conn = VoteDuringRead(reader.cache.conn, vote)
        assert reader.read(2) == 0
        assert reader.cache.cache.get("vcount:2") is None
        assert reader.read(2) == voter.read(2) == column_counts(oracle)[2] == 1
    finally:
        reader.close()
        voter.close()


def test_a_reader_that_meets_a_lease_reads_the_database(cached: tuple[Target, Any]) -> None:
    t, oracle = cached
    session = Session(t, "b")
    try:
        assert session.cache is not None
        session.vote(1, 0)
        session.cache.cache.set("vcount:0", b"lease:other:0")  # another reader is filling
        assert session.read(0) == column_counts(oracle)[0] == 1
        assert session.cache.cache.get("vcount:0") == b"lease:other:0"  # left to it
    finally:
        session.close()


def phase(ops: float, server_us: float, clients_us: float) -> dict[str, Any]:
    latency = {"samples": 1, "p50_us": 1000.0, "p95_us": 2000.0}
    return {"ops_per_s": ops, "reads_per_s": ops, "writes_per_s": 0.0, "latency_us": latency,
            "read_latency_us": latency, "write_latency_us": latency,
            "server_cpu_us_per_op": server_us, "clients_cpu_us_per_op": clients_us,
            "server_cores": 1.0, "clients_cores": 1.0, "written": []}


def test_the_ratios_are_medians_of_paired_rounds() -> None:
    phases = {
        "rivulet": [phase(12_000, 30, 60), phase(9_000, 40, 50), phase(11_000, 20, 40)],
        "mariadb_column": [phase(10_000, 45, 60), phase(10_000, 40, 50), phase(10_000, 40, 60)],
        "memcached": [phase(6_000, 50, 90), phase(4_500, 50, 90), phase(11_000, 50, 90)],
    }
    args = argparse.Namespace(quick=True, generators=1, threads=1, seconds=1.0, warmup=0.0,
                              repeat=3, switch_interval=0.0005)
    targets = summarize(phases, args, Workload(10, 10, 10, 1.08, 7, 0.05), [])["targets"]
    # rounds: 1.2, 0.9, 1.1 -> 1.1; server CPU 1.5, 1.0, 2.0 -> 1.5;
    # bound (60 + 45) / 60, (50 + 40) / 50, (60 + 40) / 40 -> 1.8
    assert targets["wire_vs_mariadb_column_ratio"]["value"] == pytest.approx(1.1)
    assert targets["wire_vs_mariadb_column_ratio"]["met"] is False
    assert targets["server_cpu_per_op_vs_mariadb"]["value"] == pytest.approx(1.5)
    assert targets["server_cpu_per_op_vs_mariadb"]["met"] is True
    assert targets["wire_ratio_bound"] == {"value": pytest.approx(1.8), "goal": None,
                                           "met": None, "direction": None}
    assert targets["wire_vs_memcached_ratio"]["value"] == pytest.approx(2.0)
    assert targets["wire_vs_memcached_ratio"]["met"] is None
    assert targets["wire_vs_mariadb_natural_ratio"]["value"] is None
