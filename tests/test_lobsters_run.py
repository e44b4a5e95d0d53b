"""The Lobsters load generator's accounting (``bench/lobsters/run.py``): Poisson arrivals,
sojourn times with pages that never started, when a load counts as sustained, id blocks
that keep concurrent client processes' inserts apart, a load's point as the median of its
phases; and the check of its answers (``bench/lobsters/check.py``) on a small data set
against the session's private MariaDB (``tests/conftest.py``): recorded pages match the
oracle in a state they could have seen, a wrong answer or one from after the read is a
mismatch with its page, statement and both answers, the oracle follows the writes (a
story page's ribbon included) or says why it cannot."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ beside tests/

from bench.lobsters.backends import RivuletBackend, rivulet_backend  # noqa: E402
from bench.lobsters.check import (  # noqa: E402
    RIBBON_READS,
    Oracle,
    PageRecord,
    Recorder,
    Statement,
    ribbon_user,
    written_table,
)
from bench.lobsters.data import Dataset, Sizes, generate, short_id  # noqa: E402
from bench.lobsters.queries import query_set  # noqa: E402
from bench.lobsters.run import (  # noqa: E402
    Phase,
    WireBackend,
    arrivals,
    best_sustained,
    summarize_phase,
)
from bench.lobsters.workload import Request, Workload  # noqa: E402

PHASE = Phase(rate=100.0, warmup=1.0, seconds=10.0, clients=2, connections=4, seed=1, block=1)


def _part(results: list[tuple[float, float, str, bool]], missed: list[float] = (),
          stopped: float = 13.0) -> dict:
    return {"results": results, "missed": list(missed), "stopped": stopped,
            "cpu_seconds": 1.0, "errors": [], "timings": {"story": [len(results), 0.5]}}


def test_arrivals_are_poisson_at_the_rate() -> None:
    times = arrivals(200.0, 50.0, seed=3)
    assert times == sorted(times) and times[-1] < 50.0
    assert abs(len(times) / 50.0 - 200.0) < 10  # ~10,000 arrivals: within 5%
    gaps = [b - a for a, b in zip(times, times[1:])]
    # exponential gaps: mean 1/rate, standard deviation equal to the mean
    assert statistics.mean(gaps) == pytest.approx(1 / 200, rel=0.05)
    assert statistics.stdev(gaps) == pytest.approx(1 / 200, rel=0.1)
    assert arrivals(200.0, 50.0, seed=3) == times
    assert arrivals(0.0, 10.0, seed=3) == []


def test_sojourn_counts_only_the_measured_window() -> None:
    inside = [(1.0 + i * 0.01, 0.010, "story", True) for i in range(1000)]
    warmup = [(0.5, 9.0, "story", True)]  # slow, but before the window
    point = summarize_phase(PHASE, [_part(inside + warmup)], server_cores=0.5)
    assert point["completed"] == 1000 and point["censored"] == 0
    assert point["p50_ms"] == pytest.approx(10.0) and point["p95_ms"] == pytest.approx(10.0)
    assert point["achieved_rate"] == pytest.approx(100.0)
    assert point["sustained"] and not point["collapsed"]


def test_pages_that_never_started_raise_the_latency() -> None:
    """A saturated system shows up as latency: a page still waiting when the phase ends
    counts at the time it waited (a lower bound), not as if it had not been offered."""
    done = [(1.0 + i * 0.01, 0.010, "story", True) for i in range(900)]
    missed = [10.0 + i * 0.01 for i in range(100)]  # due in the last second, never run
    point = summarize_phase(PHASE, [_part(done, missed, stopped=13.0)], server_cores=1.0)
    assert point["censored"] == 100 and point["scheduled"] == 1000
    assert point["p95_ms"] >= 2000.0  # waited at least from due time to the stop (>= 2 s)
    assert not point["sustained"]


def test_failed_pages_and_slow_percentiles_are_not_sustained() -> None:
    ok = [(1.0 + i * 0.01, 0.010, "story", True) for i in range(990)]
    failed = [(5.0, 0.010, "front_page", False)] * 10
    assert not summarize_phase(PHASE, [_part(ok + failed)], 1.0)["sustained"]
    slow = [(1.0 + i * 0.01, 0.010 if i % 10 else 0.5, "story", True) for i in range(1000)]
    point = summarize_phase(PHASE, [_part(slow)], 1.0)
    assert point["p95_ms"] == pytest.approx(500.0) and not point["sustained"]
    assert not point["collapsed"]


def test_a_closed_loop_of_pages_is_measured_over_the_time_it_took() -> None:
    """A warm-up runs a number of pages, split among the client processes, and ends when
    they are done: its rate is over the time the slowest client took, not its limit."""
    closed = Phase(rate=0.0, warmup=0.0, seconds=200.0, clients=3, connections=8, seed=1,
                   block=1, pages=60_001)
    assert [closed.share(k) for k in range(3)] == [20_001, 20_000, 20_000]
    parts = [dict(_part([(i * 0.001, 0.005, "story", True) for i in range(n)]), elapsed=t)
             for n, t in ((2000, 4.0), (2000, 5.0))]
    point = summarize_phase(closed, parts, server_cores=1.0)
    assert point["completed"] == 4000 and point["seconds"] == pytest.approx(5.0)
    assert point["achieved_rate"] == pytest.approx(800.0)
    assert point["clients_cores"] == pytest.approx(2 / 5.0)


def test_best_sustained_load() -> None:
    points = [{"offered_rate": r, "sustained": s}
              for r, s in ((10, True), (20, True), (40, False), (80, False))]
    assert best_sustained(points) == 20
    assert best_sustained([{"offered_rate": 5, "sustained": False}]) == 0.0


def test_id_blocks_keep_concurrent_inserts_apart() -> None:
    dataset = generate(Sizes(users=50, stories=80, comments=200, story_votes=300,
                             comment_votes=300), seed=2)
    mix = {"post_story": 1, "post_comment": 1, "vote_story": 1, "vote_comment": 1}
    ids: list[set[int]] = []
    for block in (1, 2):
        requests = Workload(dataset, seed=5, mix=mix, id_block=block).take(300)
        ids.append({r.args[key] for r in requests for key in ("id", "vote_id")
                    if key in r.args})
        # new stories are named by later requests of the same workload
        posted = {r.args["short_id"] for r in requests if r.page == "post_story"}
        voted = {r.args["short_id"] for r in requests if r.page == "vote_story"}
        assert posted & voted
    assert ids[0] and ids[1] and not ids[0] & ids[1]
    assert min(ids[0]) > len(dataset.tables["votes"])


def test_sweep_runs_each_load_on_every_configuration_in_alternating_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Configurations meet each load in turn (reversed every other load), each with its
    own id blocks; one that collapsed at two loads in a row is left out of the rest."""
    import argparse

    from bench.lobsters import run

    ran: list[tuple[str, float, int]] = []

    def fake_phase(endpoint: run.Endpoint, phase: Phase, dataset: object,
                   oracle: object = None) -> dict:
        ran.append((endpoint.config, phase.rate, phase.block))
        collapsed = endpoint.config == "b" and phase.rate >= 2
        return _phase_point(phase.rate, 2 * run.COLLAPSE_MS if collapsed else 1.0)

    monkeypatch.setattr(run, "run_phase", fake_phase)
    endpoints = {c: run.Endpoint(c, "rivulet", "natural", 1, "db", "root", 1) for c in "abc"}
    args = argparse.Namespace(rates=[1.0, 2.0, 3.0, 4.0, 5.0], warmup=0.0, seconds=1.0,
                              clients=2, connections=1, seed=0, phases_per_load=1)
    points = run.sweep(endpoints, {"a": 1, "b": 100, "c": 200}, None, args, lambda _: None)
    assert [(c, r) for c, r, _ in ran] == [
        ("a", 1.0), ("b", 1.0), ("c", 1.0),
        ("c", 2.0), ("b", 2.0), ("a", 2.0),
        ("a", 3.0), ("b", 3.0), ("c", 3.0),
        ("c", 4.0), ("a", 4.0),  # b collapsed at 2 and 3: left out
        ("a", 5.0), ("c", 5.0),
    ]
    assert {c: len(p) for c, p in points.items()} == {"a": 5, "b": 3, "c": 5}
    blocks = [b for _, _, b in ran]
    assert len(set(blocks)) == len(blocks), "every phase has id blocks of its own"


# --------------------------------------------------------------------------- points


def _phase_point(rate: float, p95: float, completed: int = 100, failed: int = 0) -> dict:
    return {"offered_rate": rate, "scheduled": 100, "completed": completed, "failed": failed,
            "censored": 100 - completed - failed, "seconds": 8.0,
            "achieved_rate": completed / 8.0, "p50_ms": p95 / 2, "p95_ms": p95,
            "p99_ms": p95 * 2, "server_cores": 1.0, "clients_cores": 0.5, "errors": []}


def test_a_point_is_the_median_of_its_phases_every_phase_kept() -> None:
    from bench.lobsters.run import median_point

    phases = [_phase_point(50, 40.0), _phase_point(50, 140.0), _phase_point(50, 90.0)]
    point = median_point(phases)
    assert point["p95_ms"] == 90.0 and point["p50_ms"] == 45.0
    assert point["phases"] == phases and point["sustained"] and not point["collapsed"]
    two = median_point(phases[:2])  # two phases: their mean
    assert two["p95_ms"] == 90.0 and two["sustained"]
    assert not median_point(phases[1:]) ["sustained"]  # median 115 ms
    # a failed page in any phase: not sustained, whatever the medians
    assert not median_point([_phase_point(50, 10.0), _phase_point(50, 10.0, 99, 1),
                             _phase_point(50, 10.0)])["sustained"]


def test_each_load_runs_its_phases_in_alternating_order_with_blocks_of_their_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from bench.lobsters import run

    ran: list[tuple[str, float, int]] = []

    def fake_phase(endpoint: run.Endpoint, phase: Phase, dataset: object,
                   oracle: object = None) -> dict:
        ran.append((endpoint.config, phase.rate, phase.block))
        return _phase_point(phase.rate, 10.0 * len(ran))

    monkeypatch.setattr(run, "run_phase", fake_phase)
    endpoints = {c: run.Endpoint(c, "rivulet", "natural", 1, "db", "root", 1) for c in "ab"}
    args = argparse.Namespace(rates=[1.0, 2.0], warmup=0.0, seconds=1.0, clients=3,
                              connections=1, seed=0, phases_per_load=2, check_every=0)
    points = run.sweep(endpoints, {"a": 1, "b": 100}, None, args, lambda _: None)
    assert [(c, r) for c, r, _ in ran] == [("a", 1.0), ("b", 1.0), ("b", 1.0), ("a", 1.0),
                                           ("a", 2.0), ("b", 2.0), ("b", 2.0), ("a", 2.0)]
    blocks = [b for _, _, b in ran]
    assert len(set(blocks)) == len(blocks)
    assert all(b - a >= args.clients for a, b in zip(sorted(blocks), sorted(blocks)[1:])
               if (a < 100) == (b < 100)), "each phase's clients have blocks of their own"
    assert [len(p["phases"]) for p in points["a"]] == [2, 2]
    assert points["a"][0]["p95_ms"] == (10.0 + 40.0) / 2


# --------------------------------------------------------------------------- the check


SMALL = Sizes(users=60, stories=120, comments=360, story_votes=600, comment_votes=600)


@pytest.fixture(scope="module")
def small() -> Dataset:
    return generate(SMALL, seed=4)


def _oracle(mariadb_oracle: object, dataset: Dataset, version: str) -> Oracle:
    """A fresh schema of the session's MariaDB with the baseline program and ``dataset``,
    checking a system that runs ``version``."""
    conn = mariadb_oracle.schema()  # type: ignore[attr-defined]
    backend = WireBackend(query_set("baseline"), conn, name="oracle", timings={},
                          driver="pymysql")
    backend.create_program(dataset)
    return Oracle(backend, query_set(version))


def _recorded(dataset: Dataset, version: str, requests: list[Request], every: int
              ) -> tuple[RivuletBackend, list[PageRecord]]:
    """``requests`` run one after the other on rivulet (embedded), settled after each
    page, every ``every``-th page sampled."""
    system = rivulet_backend(query_set(version), dataset, spark_bootstrap_rows=None,
                             prewarm=False)
    pages: list[PageRecord] = []
    recorder = Recorder(system, pages, every=every)
    for i, request in enumerate(requests):
        recorder.run(i, request)
        system.settle()
    return system, pages


@pytest.mark.parametrize("version", ["natural", "baseline"])
def test_rivulets_pages_check_out_and_the_oracle_follows_its_writes(
        small: Dataset, mariadb_oracle: object, version: str) -> None:
    """A write-heavy run of every page type, every third page sampled: each sampled read
    is MariaDB's answer in a state it could have seen (reads after a write match only the
    states after it), and once the phase's writes are fed to it the oracle holds what
    rivulet holds: the maintained columns, the read ribbons the story pages wrote."""
    from test_lobsters import CONSISTENCY, WRITE_HEAVY_MIX

    requests = Workload(small, seed=5, mix=WRITE_HEAVY_MIX).take(150)
    system, pages = _recorded(small, version, requests, every=3)
    oracle = _oracle(mariadb_oracle, small, version)
    try:
        report = oracle.check(pages)
        assert report["mismatch_count"] == 0, report["mismatches"]
        assert report["oracle_diverged"] is None
        assert report["sampled_pages"] == 50 and report["statements"] > 200
        assert report["matched_later"] > 0, "no read saw an earlier page's write"
        story_pages = sum(r.page == "story" for r in requests)
        assert report["writing_pages"] >= story_pages, "a story page's ribbon was missed"
        for table, (baseline_sql, natural_sql) in CONSISTENCY.items():
            cur = oracle.backend.conn.cursor()  # type: ignore[attr-defined]
            cur.execute(baseline_sql)
            theirs = sorted(tuple(int(v) for v in r) for r in cur.fetchall())
            mine = sorted(tuple(int(v) for v in r) for r in system.db.query(
                natural_sql if version == "natural" else baseline_sql))
            assert mine == theirs, table
        ribbons = "SELECT user_id, story_id, is_following, updated_at FROM read_ribbons"
        cur = oracle.backend.conn.cursor()  # type: ignore[attr-defined]
        cur.execute(ribbons)
        assert sorted(system.db.query(ribbons)) == sorted(cur.fetchall())
    finally:
        system.close()


def test_a_wrong_answer_is_a_mismatch_with_its_page_statement_and_both_answers(
        small: Dataset, mariadb_oracle: object) -> None:
    requests = Workload(small, seed=6).take(40)
    system, pages = _recorded(small, "natural", requests, every=2)
    system.close()
    page = next(p for p in pages if p.sampled)
    statement = next(s for s in page.reads if s.name == "header_user")
    (uid, name, karma), = statement.rows
    statement.rows = [(uid, name, karma + 1000)]
    report = _oracle(mariadb_oracle, small, "natural").check(pages)
    assert report["mismatch_count"] == 1
    found, = report["mismatches"]
    assert found["page"]["page"] == page.request.page and found["statement"] == "header_user"
    assert found["params"] == [uid] and "users" in found["sql"]
    assert found["answer"] == [[uid, name, str(karma + 1000)]]  # (a SUM: a DECIMAL's text)
    assert found["mariadb_answers"] == [[[uid, name, int(karma)]]]


def test_a_read_may_show_writes_begun_before_its_answer_but_none_begun_after(
        small: Dataset, mariadb_oracle: object) -> None:
    """The window: a read answered before a vote began cannot show the vote; one
    answered while the vote was under way may show it, or not."""
    sid, author = 1, small.tables["stories"][0][2]
    voter = next(u for u in range(1, SMALL.users + 1) if u != author
                 and (u, sid) not in small.story_voters)
    header = Request("login", author, {"username": f"user{author}", "password": "x"})
    vote = Request("vote_story", voter, {"short_id": short_id(sid), "vote": 1,
                                         "vote_id": 10_000_000})
    system, pages = _recorded(small, "natural", [header, vote, header], every=1)
    system.close()
    before, voted, after = pages
    karma = [s.rows for p in (before, after) for s in p.reads if s.name == "header_user"]
    assert karma[0] != karma[1], "the vote changed the author's karma"
    shown = next(s for s in before.reads if s.name == "header_user")
    shown.rows = karma[1]  # the karma after the vote, read before the vote began
    early = _oracle(mariadb_oracle, small, "natural").check([before, voted])
    assert early["mismatch_count"] == 1, early
    shown.at = voted.start + 1e-6  # answered once the vote had begun: either state will do
    overlapping = _oracle(mariadb_oracle, small, "natural").check([before, voted])
    assert overlapping["mismatch_count"] == 0 and overlapping["matched_later"] == 1


def test_a_write_the_oracle_cannot_translate_stops_the_check_with_the_reason(
        small: Dataset, mariadb_oracle: object) -> None:
    """A page outside WRITE_PAGES that writes a statement the two programs write
    differently (not a read ribbon) cannot be followed: said, never guessed."""
    page = PageRecord(0, 0, Request("story", 1, {"short_id": short_id(1), "now": 1}),
                      sampled=False, start=1.0, end=2.0)
    page.writes.append(("insert_story", (10_000, "zzzzzz", 1, "t", "u", None, 5), 1))
    report = _oracle(mariadb_oracle, small, "natural").check([page])
    assert "insert_story" in report["oracle_diverged"]


def test_only_the_declared_reads_read_read_ribbons() -> None:
    """A page that wrote only read ribbons is taken to change no read but the ribbon
    owner's unread replies: true of both programs."""
    for version in ("baseline", "natural"):
        qs = query_set(version)
        views = {name: sql for name, sql in qs.views}
        ribbon_views = {name for name, sql in views.items() if "read_ribbons" in sql}
        readers = {name for name, sql in qs.reads.items()
                   if "read_ribbons" in sql or any(v in sql for v in ribbon_views)}
        assert readers == set(RIBBON_READS), version
        for name, position in RIBBON_READS.items():
            assert qs.reads[name].count("?") == 1 and position == 0
            assert "WHERE user_id = ?" in qs.reads[name]
    for name in ("touch_ribbon", "insert_ribbon"):
        sql = query_set("natural").writes[name]
        params = {"touch_ribbon": (5, 7, 9), "insert_ribbon": (7, 9, 5)}[name]
        assert written_table(sql) == "read_ribbons" and ribbon_user(sql, params) == 7


def test_an_ordered_limited_read_fetches_its_window_unless_a_tie_crosses_the_cut(
        small: Dataset, mariadb_oracle: object) -> None:
    """The oracle reads a LIMIT's window and one row more (a front page's whole answer
    would be every story), and the whole answer when that row ties with the window's
    last, where any of the tied rows is a right answer."""
    import dataclasses

    oracle = _oracle(mariadb_oracle, small, "baseline")
    reads = {**oracle.backend.queries.reads,
             "by_mod": "SELECT id, hotness_mod FROM tags WHERE id > ? ORDER BY hotness_mod LIMIT 2",
             "by_id": "SELECT id, hotness_mod FROM tags WHERE id > ? ORDER BY id DESC LIMIT 2"}
    oracle.backend.queries = dataclasses.replace(oracle.backend.queries, reads=reads)
    tags = sorted(small.tables["tags"], key=lambda t: (t[-1], t[0]))
    assert tags[1][-1] == tags[2][-1], "the data set's tags tie on hotness_mod"
    rows, _ = oracle.answer("by_id", [0])
    assert [r[0] for r in rows] == [40, 39, 38]
    rows, _ = oracle.answer("by_mod", [0])
    assert len(rows) == len(tags)
    tied = [t for t in tags if t[-1] == tags[1][-1]]
    for other in tied[1:]:  # any row of the block at the cut will do, the others will not
        pick = Statement("by_mod", (0,), [(tags[0][0], tags[0][-1]), (other[0], other[-1])], 0.0)
        assert oracle._compare(pick)[0] is None
    wrong = Statement("by_mod", (0,), [(tags[0][0], tags[0][-1]), (tags[-1][0], tags[-1][-1])],
                      0.0)
    assert oracle._compare(wrong)[0] is not None


def test_the_results_name_the_commit_the_load_and_the_answers_checked(small: Dataset) -> None:
    import argparse

    from bench.lobsters import run
    from bench.lobsters.check import merge_reports

    args = run.parse_args(["--quick"])
    assert (args.phases_per_load, args.check_every) == (1, 5)
    assert (run.parse_args([]).phases_per_load, run.parse_args([]).check_every) == (2, 20)
    bad = {"sampled_pages": 3, "statements": 30, "matched_at_start": 28, "matched_later": 1,
           "mismatch_count": 1, "mismatches": [{"statement": "story"}], "writing_pages": 9,
           "unchecked": 0, "oracle_diverged": None, "seconds": 0.5}
    point = run.median_point([_phase_point(5, 10.0) | {"check": bad}])
    configs = {"rivulet-natural": {"points": [point], "check": merge_reports([point["check"]])}}
    assert isinstance(args, argparse.Namespace)
    results = run.summarize(configs, args, small, load_at_start=[1.0, 2.0, 3.0])
    env = results["environment"]
    assert env["load_average_at_start"] == [1.0, 2.0, 3.0] and env["load_average_at_end"]
    assert set(env["git"]) >= {"commit", "dirty_files"}
    assert results["answers"]["mismatches"] == 1 and results["answers"]["statements"] == 30
    assert results["checks"]["rivulet-natural"]["mismatches"] == [{"statement": "story"}]
    assert results["params"]["phases_per_load"] == 1


def test_a_phase_against_rivulet_serve_with_a_replica_is_checked_after_it_ran(
        small: Dataset, mariadb_oracle: object, tmp_path: Path) -> None:
    """The whole path of a run's phase, small: client processes (forked) record their
    pages while they send them to ``rivulet serve --replicas 1`` as the benchmark runs
    it, and the phase's sampled reads are then checked against the oracle, which gets
    the phase's writes; a second phase is checked against the state the first left."""
    from bench.lobsters.run import Endpoint, RivuletServer, load_rivulet, run_phase

    load_rivulet(tmp_path / "db", query_set("natural"), small)
    server = RivuletServer(tmp_path / "db", tmp_path / "serve.log", replicas=1)
    try:
        endpoint = Endpoint("rivulet-natural", "rivulet", "natural", server.port, "rivulet",
                            "root", server.pid)
        oracle = _oracle(mariadb_oracle, small, "natural")
        for n in range(2):
            phase = Phase(rate=40.0, warmup=0.5, seconds=2.0, clients=2, connections=2,
                          seed=n, block=1 + 2 * n, check_every=2)
            point = run_phase(endpoint, phase, small, oracle)
            check = point["check"]
            assert point["completed"] > 40 and not point["failed"], point["errors"]
            assert check["mismatch_count"] == 0, check["mismatches"]
            assert check["oracle_diverged"] is None
            assert check["sampled_pages"] >= 30 and check["statements"] >= 200
            assert check["writing_pages"] >= 20  # the story pages' read ribbons at least
    finally:
        server.stop()
