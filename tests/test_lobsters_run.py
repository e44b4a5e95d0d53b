"""The Lobsters load generator's accounting (``bench/lobsters/run.py``): Poisson arrivals,
sojourn times with pages that never started, when a load counts as sustained, and id
blocks that keep concurrent client processes' inserts apart."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ beside tests/

from bench.lobsters.data import Sizes, generate  # noqa: E402
from bench.lobsters.run import Phase, arrivals, best_sustained, summarize_phase  # noqa: E402
from bench.lobsters.workload import Workload  # noqa: E402

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

    def fake_phase(endpoint: run.Endpoint, phase: Phase, dataset: object) -> dict:
        ran.append((endpoint.config, phase.rate, phase.block))
        collapsed = endpoint.config == "b" and phase.rate >= 2
        return {"collapsed": collapsed, "achieved_rate": phase.rate, "p50_ms": 1.0,
                "p95_ms": 1.0, "censored": 0, "failed": 0, "server_cores": 0.1,
                "clients_cores": 0.1, "errors": []}

    monkeypatch.setattr(run, "run_phase", fake_phase)
    endpoints = {c: run.Endpoint(c, "rivulet", "natural", 1, "db", "root", 1) for c in "abc"}
    args = argparse.Namespace(rates=[1.0, 2.0, 3.0, 4.0, 5.0], warmup=0.0, seconds=1.0,
                              clients=2, connections=1, seed=0)
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
