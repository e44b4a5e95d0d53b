"""Helpers shared by the benchmarks: workload generation, timing, result files, tables, plots.

Everything here is independent of rivulet; benchmarks use rivulet's public API only.

* :class:`Zipf` -- a seeded Zipf(s) sampler over ``0..n-1`` (rank 0 most popular), with
  numpy when available, else ``bisect`` on a precomputed CDF.
* :class:`Timer`, :func:`measure_rate`, :func:`sample_latencies` -- wall-clock timing of a
  phase, of a call rate over a fixed duration, and of per-call latency percentiles.
* :func:`target` -- a ``{"value", "goal", "met"}`` record for a performance target;
  :func:`figure` the same record for a figure recorded with no goal (goal and met None).
* :func:`write_results` -- ``bench/results/<name>.json`` (``<name>.quick.json`` in quick mode).
* :func:`print_table` -- a table with ``rich`` if installed, plain text otherwise.
* :func:`bar_chart` -- grouped bar charts with matplotlib (skipped if it is not installed).
* :func:`stop_process` -- stop a private server process: SIGTERM, then SIGKILL after a wait.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import json
import math
import os
import platform
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

try:  # numpy is optional: used for fast sampling when present
    import numpy as np
except ImportError:  # pragma: no cover - exercised only without numpy
    np = None  # type: ignore[assignment]

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
REPO_DIR = BENCH_DIR.parent


# ......................................................................... workload


class Zipf:
    """Zipf(s) over the integers ``0..n-1``: ``P(k) ∝ 1 / (k + 1) ** s`` (0 is the most popular).

    Seeded and reproducible: two samplers with the same ``(n, s, seed)`` draw the same
    sequence (per backend: numpy and the pure-Python fallback draw different sequences).
    """

    def __init__(self, n: int, s: float, seed: int) -> None:
        if n < 1:
            raise ValueError("Zipf needs n >= 1")
        self.n, self.s, self.seed = n, s, seed
        if np is not None:
            weights = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
            cdf = np.cumsum(weights)
            self._cdf = cdf / cdf[-1]
            self._rng = np.random.default_rng(seed)
        else:
            total = 0.0
            cdf_list = []
            for k in range(1, n + 1):
                total += 1.0 / k**s
                cdf_list.append(total)
            self._cdf_list = [c / total for c in cdf_list]
            self._random = random.Random(seed)

    @property
    def backend(self) -> str:
        return "numpy" if np is not None else "bisect"

    def probability(self, k: int) -> float:
        """``P(k)``."""
        if np is not None:
            return float(self._cdf[k] - (self._cdf[k - 1] if k else 0.0))
        return self._cdf_list[k] - (self._cdf_list[k - 1] if k else 0.0)

    def sample(self, size: int) -> list[int]:
        """``size`` draws, as a list of Python ints."""
        if np is not None:
            idx = np.searchsorted(self._cdf, self._rng.random(size), side="right")
            return np.minimum(idx, self.n - 1).tolist()
        cdf, rnd, last = self._cdf_list, self._random.random, self.n - 1
        return [min(bisect.bisect_right(cdf, rnd()), last) for _ in range(size)]


def uniform_ints(low: int, high: int, size: int, seed: int) -> list[int]:
    """``size`` seeded uniform draws from ``low..high`` inclusive, as Python ints."""
    if np is not None:
        return np.random.default_rng(seed).integers(low, high + 1, size).tolist()
    rnd = random.Random(seed)
    return [rnd.randint(low, high) for _ in range(size)]


def batches(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    """``items`` cut into consecutive slices of ``size`` (the last may be shorter)."""
    return [items[i:i + size] for i in range(0, len(items), size)]


def counts_of(keys: Iterable[int], n: int) -> list[int]:
    """How often each of ``0..n-1`` occurs in ``keys``."""
    if np is not None:
        return np.bincount(np.fromiter(keys, dtype=np.int64), minlength=n).tolist()
    out = [0] * n
    for k in keys:
        out[k] += 1
    return out


# ......................................................................... timing


class Timer:
    """``with Timer() as t: ...`` then ``t.seconds`` (wall clock, ``perf_counter``) and
    ``t.cpu_seconds`` (CPU time of the whole process, all threads, ``process_time``)."""

    def __init__(self) -> None:
        self.start = 0.0
        self.seconds = 0.0
        self.cpu_start = 0.0
        self.cpu_seconds = 0.0

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        self.cpu_start = time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
        self.cpu_seconds = time.process_time() - self.cpu_start

    def elapsed(self) -> float:
        """Seconds since the timer started (while it runs)."""
        return time.perf_counter() - self.start


def measure_rate(call: Callable[[Any], Any], args: Sequence[Any], seconds: float,
                 *, max_calls: int | None = None) -> dict[str, float]:
    """Call ``call(a)`` for ``a`` cycling through ``args`` for about ``seconds`` (one thread).

    The clock is read between chunks of calls whose size adapts (doubling while a chunk
    takes under 20 ms, up to 4096 calls), so timing adds next to nothing to fast calls and
    slow calls do not overshoot the duration by much. Returns calls, seconds, per_s.
    """
    n_args = len(args)
    if n_args == 0:
        raise ValueError("measure_rate needs at least one argument value")
    cycle = itertools.cycle(args)
    islice = itertools.islice
    chunk, calls = 1, 0
    cpu_start = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    now = start
    while now < deadline and (max_calls is None or calls < max_calls):
        before = now
        for a in islice(cycle, chunk):
            call(a)
        calls += chunk
        now = time.perf_counter()
        if now - before < 0.02 and chunk < 4096:
            chunk *= 2
    elapsed = now - start
    return {"calls": calls, "seconds": elapsed, "per_s": calls / elapsed if elapsed else 0.0,
            "process_cpu_seconds": time.process_time() - cpu_start}


def sample_latencies(call: Callable[[Any], Any], args: Sequence[Any], *, samples: int,
                     max_seconds: float) -> dict[str, float]:
    """Time up to ``samples`` single calls (stopping after ``max_seconds``); µs percentiles."""
    clock = time.perf_counter_ns
    out: list[int] = []
    deadline = time.perf_counter() + max_seconds
    for i, a in enumerate(itertools.cycle(args)):
        if i >= samples or (i & 63 == 0 and time.perf_counter() > deadline):
            break
        t0 = clock()
        call(a)
        out.append(clock() - t0)
    return latency_summary(out)


def latency_summary(nanos: list[int]) -> dict[str, float]:
    if not nanos:
        return {"samples": 0}
    nanos = sorted(nanos)
    return {
        "samples": len(nanos),
        "p50_us": percentile(nanos, 50) / 1000,
        "p90_us": percentile(nanos, 90) / 1000,
        "p95_us": percentile(nanos, 95) / 1000,
        "p99_us": percentile(nanos, 99) / 1000,
        "max_us": nanos[-1] / 1000,
        "mean_us": sum(nanos) / len(nanos) / 1000,
    }


def percentile(sorted_values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile of an already sorted sequence."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


# ......................................................................... results


def target(value: float | None, goal: float, at_least: bool = True) -> dict[str, Any]:
    """A performance target record: met when ``value >= goal`` (``<=`` if not ``at_least``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        met = False
    else:
        met = value >= goal if at_least else value <= goal
    return {"value": value, "goal": goal, "met": bool(met),
            "direction": "at least" if at_least else "at most"}


def figure(value: float | None) -> dict[str, Any]:
    """A figure recorded beside the targets with no goal (informational): ``bench.report``
    shows its value with no goal and no verdict."""
    return {"value": value, "goal": None, "met": None, "direction": None}


def results_path(name: str, quick: bool, ext: str = "json") -> Path:
    return RESULTS_DIR / f"{name}{'.quick' if quick else ''}.{ext}"


def write_results(name: str, data: dict[str, Any], quick: bool) -> Path:
    """Write ``data`` as JSON to ``bench/results/<name>[.quick].json``; returns the path.

    A full run from a tree whose code differs from its commit (:func:`git_state`) is not
    a result anyone can reproduce: it goes to ``<name>.dirty.json`` instead (not kept by
    git, not reported), so that the committed result always names the code it measured."""
    path = results_path(name, quick)
    if not quick and git_state().get("dirty_files"):
        path = RESULTS_DIR / f"{name}.dirty.json"
        print(f"WARNING: the tree has uncommitted changes to rivulet/ or bench/: the result "
              f"goes to {path.name}, not {name}.json (commit, then rerun)", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=_json_default) + "\n")
    tmp.replace(path)
    return path


def _json_default(value: Any) -> Any:
    if np is not None and isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def logger() -> Callable[[str], None]:
    """A progress logger: each message on stdout with the seconds since the logger was made."""
    start = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - start:7.1f}s] {message}", flush=True)

    return log


def busy_warning(log: Callable[[str], None]) -> list[float] | None:
    """Log a warning when other work is loading the machine; returns the load averages."""
    load = load_average()
    cpus = os.cpu_count() or 1
    if load and load[0] >= 0.5 * cpus:
        log(f"WARNING: load average {load[0]:.2f} on {cpus} CPU(s): other processes are "
            "running, timings will be noisy")
    return load


def environment() -> dict[str, Any]:
    """Where and on what the benchmark ran (for comparing result files)."""
    info: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "sqlite": sqlite3.sqlite_version,
        "numpy": getattr(np, "__version__", None),
        "load_average_at_end": load_average(),
    }
    try:
        info["cpu"] = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    info["git"] = git_state()
    return info


def git_state() -> dict[str, Any]:
    """The checkout's commit and how many files of the code a benchmark measures (rivulet/
    and bench/, its results aside) differ from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO_DIR, capture_output=True, text=True,
                              timeout=10).stdout.strip()

    try:
        dirty = git("status", "--porcelain", "--", "rivulet", "bench", ":!bench/results")
        return {"commit": git("rev-parse", "HEAD"),
                "dirty_files": len(dirty.splitlines()) if dirty else 0}
    except (OSError, subprocess.SubprocessError):
        return {}


# ......................................................................... processes


def stop_process(proc: subprocess.Popen[Any], timeout: float) -> int | None:
    """Stop a server the benchmark started: SIGTERM, then SIGKILL if it is still running
    ``timeout`` seconds later. Returns its exit code, or None where it had to be killed.

    Every private server (MariaDB, memcached, ``rivulet serve``) is stopped this way, so
    that none outlives the benchmark whether or not it shuts down cleanly; a killed one is
    reaped too (no zombie left). A process that has already exited is only reaped."""
    proc.terminate()
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)
        return None


# ......................................................................... output


def fmt_num(value: float | None, digits: int = 3) -> str:
    """``1234567`` -> ``1.23M``; small numbers with ``digits`` significant digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.{digits}g}{suffix}"
    return f"{value:.{digits}g}"


def print_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Print a table (rich when installed); cells are converted with ``str``."""
    rows = [[str(c) for c in row] for row in rows]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c)
                  for i, c in enumerate(columns)]
        print(f"\n{title}")
        print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
        print("  ".join("-" * w for w in widths))
        for row in rows:
            print("  ".join(v.rjust(w) if i else v.ljust(w)
                            for i, (v, w) in enumerate(zip(row, widths))))
        return
    table = Table(title=title, title_justify="left")
    for i, c in enumerate(columns):
        table.add_column(c, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*row)
    Console(width=max(100, 22 * len(columns))).print(table)


def bar_chart(path: Path, title: str, panels: Sequence[dict[str, Any]], *,
              log: bool = True) -> Path | None:
    """Grouped bar charts side by side; returns the path, or None without matplotlib.

    Each panel: ``{"title", "ylabel", "groups": [labels], "series": {name: [values]}}``
    (``None`` values are left out); optional ``"log"`` overrides ``log`` for that panel and
    ``"goals": [{"value", "label"}]`` draws dashed reference lines.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        groups = panel["groups"]
        series = panel["series"]
        width = 0.8 / max(1, len(series))
        for j, (name, values) in enumerate(series.items()):
            xs = [i + (j - (len(series) - 1) / 2) * width for i in range(len(groups))]
            shown = [(x, v) for x, v in zip(xs, values) if v]
            if not shown:
                continue
            bars = ax.bar([x for x, _ in shown], [v for _, v in shown], width, label=name)
            for bar, (_, v) in zip(bars, shown):
                ax.annotate(fmt_num(v), (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            ha="center", va="bottom", fontsize=8)
        for line in panel.get("goals", []):
            ax.axhline(line["value"], color="gray", linestyle="--", linewidth=1)
            ax.annotate(line["label"], (len(groups) - 0.5, line["value"]), ha="right",
                        va="bottom", fontsize=8, color="gray")
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups)
        ax.set_title(panel["title"])
        ax.set_ylabel(panel.get("ylabel", ""))
        if panel.get("log", log):
            ax.set_yscale("log")
        else:
            from matplotlib.ticker import FuncFormatter

            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_num(v)))
        if len(series) > 1:
            ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
