"""Closed-loop load over the wire: generator processes, each with client threads, and the
measured window they share. Used by ``bench.vote_wire`` and ``bench.transactions``, which
give only what one client does and what a phase reports.

Every generator process starts its clients together at ``start_at``; the clients run until
``start_at + warmup + seconds`` and keep what they did after ``start_at + warmup`` (the
measured window). The processes are ``spawn``-ed, so a generator is a module-level function
of the benchmark, called as ``generator(*args, out)`` and putting one dict on ``out``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from bench.mariadb import process_cpu


def run_clients(client: Callable[[int], None], threads: int, measure_from: float,
                measure_to: float) -> float:
    """``client(k)`` for each of ``threads`` threads, until they end; the CPU seconds this
    process spent in the measured window (all its threads)."""
    workers = [threading.Thread(target=client, args=(k,)) for k in range(threads)]
    for worker in workers:
        worker.start()
    time.sleep(max(0.0, measure_from - time.time()))
    cpu0 = time.process_time()
    time.sleep(max(0.0, measure_to - time.time()))
    cpu1 = time.process_time()
    for worker in workers:
        worker.join()
    return cpu1 - cpu0


def run_generators(ctx: Any, generator: Callable[..., None],
                   args_of: Callable[[int, float], Sequence[Any]], processes: int,
                   server_pids: Sequence[int], warmup: float, seconds: float, name: str, *,
                   timeout: float) -> tuple[list[dict[str, Any]], float, float]:
    """``processes`` generator processes, ``generator(*args_of(g, start_at), out)`` each;
    their parts (one dict each, waited for at most ``timeout`` seconds), the CPU seconds
    the servers (``server_pids``: a system may be more than one process, as a cache in
    front of a database is) used together over the measured window, and that window's wall
    seconds. A part's ``errors`` fail the phase."""
    out = ctx.Queue()
    start_at = time.time() + 2.0  # time for the generator processes to start
    procs = [ctx.Process(target=generator, args=(*args_of(g, start_at), out))
             for g in range(processes)]
    for p in procs:
        p.start()
    time.sleep(max(0.0, start_at + warmup - time.time()))
    cpu0, wall0 = sum(map(process_cpu, server_pids)), time.perf_counter()
    time.sleep(max(0.0, start_at + warmup + seconds - time.time()))
    cpu1, wall1 = sum(map(process_cpu, server_pids)), time.perf_counter()
    parts = [out.get(timeout=timeout) for _ in procs]
    for p in procs:
        p.join(60)
    errors = [e for part in parts for e in part["errors"]]
    if errors:
        raise RuntimeError(f"{name}: load generator errors: {errors[:3]}")
    return parts, cpu1 - cpu0, wall1 - wall0


def quiesce(pids: Sequence[int], idle_cores: float = 0.05, timeout: float = 60.0) -> float:
    """Wait until every server is idle (under ``idle_cores`` over half a second); the
    seconds waited. MariaDB may still be running the natural phase's 200-500 ms statements
    after its clients have gone, and no phase should measure another system's leftover
    work. (It was not why rounds after the first run ~10% slower for every system and its
    clients alike; that cause is unknown.)"""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        before = [process_cpu(pid) for pid in pids]
        time.sleep(0.5)
        if all(process_cpu(pid) - cpu < idle_cores * 0.5 for pid, cpu in zip(pids, before)):
            break
    return time.perf_counter() - start
