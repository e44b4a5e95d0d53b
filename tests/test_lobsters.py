"""The Lobsters workload, scaled down: rivulet and SQLite, natural and baseline, agree.

``bench/lobsters/`` holds the application (schema, the baseline and natural queries, a data
generator, the page functions). Here a small data set (200 users, 500 stories, 1,500
comments, ~7,000 votes) is loaded into four systems: rivulet with the natural queries,
rivulet with the baseline queries, SQLite with each. A few hundred page views in a
write-heavy mix (every page type; votes, comments and stories posted) run on all four,
and every page must show the same data on all four: SQLite computes the natural views at
read time (the oracle for rivulet's incrementally maintained ones), and the baseline's
hand-maintained columns must keep matching what the natural views compute. After the run
the maintained columns are compared with the natural views row by row, on SQLite and on
rivulet.

The same replay runs against rivulet under a memory limit that keeps evicting partial
state (pages filled by upqueries), and (marked ``spark``, ``slow``: 11-45 s) against the
natural program with its full state computed on Spark at open; and (``slow``) the same
statements run on a private MariaDB, both versions, showing the same pages.
"""

from __future__ import annotations

import contextlib
import socket
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spark_fixtures import SPARK_CONFIG, spark_session  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ beside tests/

from bench.lobsters.backends import (  # noqa: E402
    Backend,
    RivuletBackend,
    SqlBackend,
    rivulet_backend,
    sqlite_backend,
)
from bench.lobsters.data import Dataset, Sizes, generate, table_columns  # noqa: E402
from bench.lobsters.pages import PAGE_FUNCTIONS, Page, run_page  # noqa: E402
from bench.lobsters.queries import (  # noqa: E402
    PAGES,
    VERSIONS,
    expand_in,
    query_set,
)
from bench.lobsters.workload import PRODUCTION_MIX, Request, Workload  # noqa: E402

SIZES = Sizes(users=200, stories=500, comments=1_500, story_votes=3_000, comment_votes=3_000)
REQUESTS = 250

#: Every page type, writes far more often than in production so that the hand-maintained
#: columns and the dataflow's incremental updates are exercised.
WRITE_HEAVY_MIX = {
    "story": 25, "front_page": 12, "user": 10, "comments": 8, "recent": 5, "login": 2,
    "vote_story": 14, "vote_comment": 14, "post_comment": 7, "post_story": 3,
}

MAINTAINED = {
    "users": ["karma"],
    "stories": ["upvotes", "downvotes", "comments_count", "hotness"],
    "comments": ["upvotes", "downvotes", "score"],
}

#: (baseline query, natural query): the maintained columns beside what the views compute.
CONSISTENCY = {
    "stories": (
        "SELECT id, upvotes, downvotes, comments_count, hotness FROM stories",
        "SELECT id, upvotes, downvotes, comments_count, hotness FROM stories_with_stats",
    ),
    "comments": (
        "SELECT id, upvotes, downvotes, score FROM comments",
        "SELECT id, upvotes, downvotes, score FROM comments_with_votes",
    ),
    "users": (
        "SELECT id, karma FROM users",
        "SELECT users.id, COALESCE(user_karma.karma, 0) AS karma "
        "FROM users LEFT JOIN user_karma ON users.id = user_karma.user_id",
    ),
}


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return generate(SIZES, seed=3)


@pytest.fixture(scope="module")
def systems(dataset: Dataset) -> Iterator[list[Backend]]:
    """SQLite baseline (the reference), SQLite natural, rivulet natural, rivulet baseline."""
    opened: list[Backend] = []
    try:
        opened.append(sqlite_backend(query_set("baseline"), dataset))
        opened.append(sqlite_backend(query_set("natural"), dataset))
        for version in ("natural", "baseline"):
            opened.append(rivulet_backend(query_set(version), dataset,
                                          spark_bootstrap_rows=None, prewarm=False))
        yield opened
    finally:
        for backend in opened:
            backend.close()


def _difference(request: Request, reference: Backend, ref: Page, other: Backend,
                got: Page) -> str:
    lines = [f"page {request.page} {request.args} (user {request.user}): "
             f"{other.name} differs from {reference.name}"]
    for part in sorted(set(ref) | set(got)):
        if ref.get(part) != got.get(part):
            lines.append(f"  {part}:\n    {reference.name}: {ref.get(part)!r}\n"
                         f"    {other.name}: {got.get(part)!r}")
    return "\n".join(lines)


def _replay(requests: list[Request], reference: Backend, others: list[Backend]) -> list[Page]:
    """Run every request on every system; each page must equal the reference's. Each
    page is settled before the next (rivulet's reads are eventually consistent): every
    page, not only those of ``Request.writes``, since a story page writes its read
    ribbon, which the next page's header (unread replies) reads."""
    pages: list[Page] = []
    for request in requests:
        ref = run_page(reference, request)
        results = [run_page(other, request) for other in others]
        for backend in others:
            backend.settle()
        for other, got in zip(others, results):
            assert got == ref, _difference(request, reference, ref, other, got)
        pages.append(ref)
    return pages


def _scan(backend: Backend, sql: str) -> list[tuple]:
    if isinstance(backend, RivuletBackend):
        rows = backend.db.query(sql)
    else:
        assert isinstance(backend, SqlBackend)
        rows = backend.conn.execute(sql).fetchall()
    return sorted(tuple(r) for r in rows)


# --------------------------------------------------------------------------- program


def test_natural_schema_is_the_baseline_without_maintained_columns() -> None:
    baseline, natural = table_columns("baseline"), table_columns("natural")
    assert set(baseline) == set(natural)
    assert len(baseline) >= 13
    for table, columns in baseline.items():
        dropped = [c for c in columns if c not in natural[table]]
        assert dropped == MAINTAINED.get(table, []), table
        assert [c for c in columns if c not in dropped] == natural[table], table


def test_every_page_names_statements_of_its_version() -> None:
    for page, versions in PAGES.items():
        assert page in PAGE_FUNCTIONS
        for version in VERSIONS:
            qs = query_set(version)
            for name in versions[version]:
                assert name in qs.reads or name in qs.writes, (page, version, name)
    assert set(PAGES) == set(PAGE_FUNCTIONS) == set(PRODUCTION_MIX)


def test_in_lists_expand_for_sql_drivers() -> None:
    sql = "SELECT a FROM t WHERE u = ? AND b IN (?) AND c = ?"
    assert expand_in(sql, 3) == "SELECT a FROM t WHERE u = ? AND b IN (?, ?, ?) AND c = ?"
    assert expand_in(sql, 2, "%s") == "SELECT a FROM t WHERE u = %s AND b IN (%s, %s) AND c = %s"
    with pytest.raises(ValueError):
        expand_in(sql, 0)


# --------------------------------------------------------------------------- data


def test_generator_is_seeded_and_scales() -> None:
    small = Sizes(users=30, stories=40, comments=90, story_votes=100, comment_votes=100)
    a, b = generate(small, seed=9), generate(small, seed=9)
    assert a.tables == b.tables
    assert generate(small, seed=10).tables != a.tables
    prod = Sizes.production()
    assert (prod.users, prod.stories, prod.comments) == (9_200, 40_000, 120_000)
    ten = Sizes.production(10)
    assert (ten.users, ten.stories, ten.comments) == (92_000, 400_000, 1_200_000)
    for table, rows in a.tables.items():
        width = len(table_columns("baseline")[table])
        assert all(len(r) == width for r in rows), table
        natural = a.rows(table, "natural")
        assert all(len(r) == len(table_columns("natural")[table]) for r in natural), table


def test_generated_popularity_is_skewed(dataset: Dataset) -> None:
    """A few stories draw a large share of comments and votes, as on the production site."""
    per_story = sorted(Counter(r[2] for r in dataset.tables["comments"]).values(), reverse=True)
    assert sum(per_story[:SIZES.stories // 20]) > 0.15 * len(dataset.tables["comments"])
    votes = sorted(Counter(r[2] for r in dataset.tables["votes"] if r[3] is None).values())
    assert votes[-1] > 3 * votes[len(votes) // 2]


@pytest.mark.parametrize("table", sorted(CONSISTENCY))
def test_generated_maintained_columns_match_the_natural_views(dataset: Dataset,
                                                              table: str) -> None:
    base = sqlite_backend(query_set("baseline"), dataset)
    natural = sqlite_backend(query_set("natural"), dataset)
    try:
        want, got = CONSISTENCY[table]
        expected = _scan(base, want)
        assert len(expected) == len(dataset.tables[table])
        assert _scan(natural, got) == expected
    finally:
        base.close()
        natural.close()


# --------------------------------------------------------------------------- the workload


def test_every_page_agrees_on_all_four_systems(dataset: Dataset,
                                               systems: list[Backend]) -> None:
    requests = Workload(dataset, seed=5, mix=WRITE_HEAVY_MIX).take(REQUESTS)
    pages = _replay(requests, systems[0], systems[1:])
    seen = Counter(r.page for r in requests)
    assert set(seen) == set(PAGE_FUNCTIONS), seen
    _assert_pages_show_something(requests, pages)
    _assert_maintained_columns_match_views(dataset, systems, seen)


def _assert_maintained_columns_match_views(dataset: Dataset, systems: list[Backend],
                                           seen: Counter[str]) -> None:
    """Every baseline write kept its columns in step with what the natural views
    compute, on SQLite and on rivulet (rivulet reads both through ad-hoc views)."""
    sqlite_base, sqlite_natural, rivulet_natural, rivulet_base = systems
    grown = {"users": 0, "stories": seen["post_story"], "comments": seen["post_comment"]}
    for table, (want, got) in CONSISTENCY.items():
        expected = _scan(sqlite_base, want)
        assert len(expected) == len(dataset.tables[table]) + grown[table], table
        assert _scan(sqlite_natural, got) == expected, f"sqlite natural, {table}"
        assert _scan(rivulet_natural, got) == expected, f"rivulet natural, {table}"
        assert _scan(rivulet_base, want) == expected, f"rivulet baseline, {table}"


def _assert_pages_show_something(requests: list[Request], pages: list[Page]) -> None:
    """Agreement on empty pages would prove nothing: the workload shows real data."""
    def values(page: str, part: str) -> list[Any]:
        return [p[part] for r, p in zip(requests, pages) if r.page == page]

    assert all(len(v) >= 20 for v in values("front_page", "stories"))
    assert any(len(v) >= 5 for v in values("story", "comments"))
    assert any(h[1] > 0 for h in (p["header"] for p in pages)), "no unread replies anywhere"
    assert any(h[0][2] != 0 for h in (p["header"] for p in pages)), "no karma anywhere"
    assert all(v is not None for v in values("post_comment", "posted"))
    assert all(v is not None for v in values("vote_comment", "voted"))
    assert any(v["login"] for r, v in zip(requests, pages) if r.page == "login")


#: Memory limits just above each version's full (unevictable) state at SIZES, so that
#: partial state is evicted all the time and pages are filled by upqueries.
TIGHT_MEMORY = {"natural": "2MB", "baseline": "300KB"}


@pytest.mark.parametrize("version", VERSIONS)
def test_pages_agree_under_memory_pressure(dataset: Dataset, version: str) -> None:
    """With a memory limit that keeps evicting partial state, every page still shows what
    SQLite shows: misses are filled by upqueries, evicted keys come back right."""
    reference = sqlite_backend(query_set("baseline"), dataset)
    backend = rivulet_backend(query_set(version), dataset, spark_bootstrap_rows=None,
                              prewarm=False, memory_limit=TIGHT_MEMORY[version])
    try:
        _replay(Workload(dataset, seed=6, mix=WRITE_HEAVY_MIX).take(120), reference, [backend])
        stats = backend.db.stats()
        assert stats["evictions"] > 1_000 and stats["upqueries"] > 1_000, stats
    finally:
        backend.close()
        reference.close()


@pytest.mark.spark
@pytest.mark.slow
def test_pages_agree_after_a_spark_bootstrap(dataset: Dataset, spark: Any) -> None:
    """The natural program's full state (aggregates, top-k, join indexes) computed on
    Spark at open serves the same pages, and keeps them right as writes arrive."""
    reference = sqlite_backend(query_set("baseline"), dataset)
    backend = rivulet_backend(query_set("natural"), dataset, spark_bootstrap_rows=None,
                              prewarm=False)
    try:
        backend.reopen(spark_bootstrap_rows=0, spark=SPARK_CONFIG, prewarm=False)
        report = backend.db.bootstrap_report()
        assert report["tasks"] and {t["executor"] for t in report["tasks"]} == {"spark"}, report
        _replay(Workload(dataset, seed=8, mix=WRITE_HEAVY_MIX).take(100), reference, [backend])
    finally:
        backend.close()
        reference.close()


class _Dealt(Backend):
    """Pages dealt in turn to connections that ``rivulet serve --replicas`` dealt to its
    primary and its replicas (a page starts with its header: :func:`run_page`), each
    connection reading its own writes. :meth:`settle` makes every write acknowledged so
    far visible to every connection: each writes a probe (a moderation of no user, which
    no page reads) and reads, which waits for that write, and so for all before it."""

    def __init__(self, backends: list[Any]) -> None:
        self.backends = backends
        self.queries = backends[0].queries
        self.name = backends[0].name
        self.turn = -1
        self.probes = iter(range(2_000_000_001, 2_100_000_000))
        for backend in backends:
            backend.conn.cursor().execute("SET rivulet_read_your_writes = 1")

    @property
    def current(self) -> Any:
        return self.backends[self.turn % len(self.backends)]

    def read(self, name: str, params: Any = ()) -> list[tuple]:
        if name == "header_user":
            self.turn += 1
        return self.current.read(name, params)

    def write(self, name: str, params: Any) -> int:
        return self.current.write(name, params)

    def settle(self) -> None:
        for backend in self.backends:
            cur = backend.conn.cursor()
            cur.execute("INSERT INTO moderations (id, moderator_user_id, action, created_at) "
                        "VALUES (%s, 1, 'settle', 0)", (next(self.probes),))
            cur.execute("SELECT id FROM users WHERE id = 1")
            cur.fetchall()

@pytest.mark.parametrize(("driver", "replicas"),
                         [("pymysql", 0), ("mysqlclient", 0), ("mysqlclient", 1)])
def test_pages_agree_through_the_load_generators_client(dataset: Dataset, tmp_path: Path,
                                                        driver: str, replicas: int) -> None:
    """The benchmark's clients (``bench.lobsters.run``: its data load, its connection,
    the statements' text with ``%s`` values, a read ribbon's duplicate INSERT taken as
    the application's upsert) against ``rivulet``'s MySQL server show SQLite's pages,
    over either driver (mysqlclient's statements bypass its cursor); and against
    ``rivulet serve --replicas 1`` as the benchmark runs it (its server, its options),
    the pages dealt in turn to a connection of the primary and one of the replica."""
    import rivulet
    from bench.lobsters.run import Endpoint, RivuletServer, WireBackend, connect, load_rivulet
    from bench.mariadb import ensure_mysqlclient
    from rivulet.server.mysql.server import ServerThread

    if driver == "mysqlclient":
        assert ensure_mysqlclient(print), "mysqlclient could not be installed"

    queries = query_set("natural")
    load_rivulet(tmp_path / "db", queries, dataset)
    with contextlib.ExitStack() as closing:
        reference = sqlite_backend(query_set("baseline"), dataset)
        closing.callback(reference.close)
        if replicas:
            process = RivuletServer(tmp_path / "db", tmp_path / "serve.log", replicas=replicas)
            closing.callback(process.stop)
            port, settle = process.port, None
        else:
            db = rivulet.open(tmp_path / "db")
            closing.callback(db.close)
            server = ServerThread(db, port=0)
            closing.callback(server.stop)
            port, settle = server.port, db.settle

        class Wire(WireBackend):
            def settle(self) -> None:
                assert settle is not None, "dealt pages settle through _Dealt"
                settle()

        endpoint = Endpoint("rivulet-natural", "rivulet", "natural", port, "rivulet",
                            "root", 0, driver)

        def wire() -> Wire:
            backend = Wire(queries, connect(endpoint), name=endpoint.config, timings={},
                           driver=driver)
            closing.callback(backend.close)
            return backend

        if replicas:
            roles: dict[str, Wire] = {}
            for _ in range(4 * (1 + replicas)):  # the server deals connections in turn
                backend = wire()
                cur = backend.conn.cursor()
                cur.execute("SELECT @@rivulet_server")
                roles.setdefault(cur.fetchall()[0][0], backend)
                if len(roles) == 1 + replicas:
                    break
            assert sorted(roles) == ["primary", *(f"replica {n + 1}" for n in range(replicas))]
            system: Backend = _Dealt(list(roles.values()))
            backend = roles["replica 1"]
        else:
            system = backend = wire()
        requests = Workload(dataset, seed=9, mix=WRITE_HEAVY_MIX).take(120)
        _replay(requests, reference, [system])
        ribbon = next(r for r in requests if r.page == "story")
        backend.write("insert_ribbon", [ribbon.user, 1, 0])  # (a duplicate: no error)
        assert backend.write("insert_ribbon", [ribbon.user, 1, 0]) == 0
        assert set(backend.timings) >= {"story_comments", "touch_ribbon"}


@pytest.mark.slow
def test_the_same_statements_run_on_mariadb(dataset: Dataset, tmp_path: Path) -> None:
    """The benchmark sends these statements to MariaDB too: the same text must run there
    (through PyMySQL, ``%s`` placeholders) and show the same pages, in both versions."""
    import pymysql

    from bench.vote_wire import MariaDB

    MariaDB.ensure_installed(print)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = MariaDB(tmp_path / "mariadb", port)
    reference = sqlite_backend(query_set("baseline"), dataset)
    systems: list[Backend] = []
    try:
        server.start()
        for version in VERSIONS:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="bench", autocommit=False)
            conn.cursor().execute(f"CREATE DATABASE lobsters_{version}")
            conn.select_db(f"lobsters_{version}")
            backend = SqlBackend(query_set(version), conn, name=f"mariadb-{version}", mark="%s")
            systems.append(backend)
            backend.create_program(dataset)
        _replay(Workload(dataset, seed=5, mix=WRITE_HEAVY_MIX).take(120), reference, systems)
    finally:
        for backend in systems:
            backend.close()
        reference.close()
        server.stop()


def test_production_mix_is_read_dominated(dataset: Dataset) -> None:
    requests = Workload(dataset, seed=11).take(5_000)
    writes = sum(r.writes for r in requests) / len(requests)
    story_and_front = sum(r.page in ("story", "front_page") for r in requests) / len(requests)
    assert writes < 0.02
    assert story_and_front > 0.8
