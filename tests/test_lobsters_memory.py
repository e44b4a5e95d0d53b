"""bench.lobsters_memory at a tiny scale, in this process: the Lobsters program loaded once,
then opened with partial state and with full state on copies, runs the same pages, shows
the same data, and partial state holds less than full state; before any read, less again
(the state it cannot make partial). The resident-memory figures need a process per
configuration (``python -m bench.lobsters_memory``); here only their shape is checked."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ beside tests/

from bench import lobsters_memory as lm  # noqa: E402


def test_partial_and_full_state_serve_the_same_pages_and_partial_holds_less(tmp_path):
    params = lm.load(tmp_path / "data", scale=0.01, seed=3, pages=300, log=lambda _: None)
    assert params["pages_per_type"]["story"] > 100 and params["rows"] > 5_000

    configs = {}
    for config in lm.Config:
        directory = tmp_path / config.value
        shutil.copytree(tmp_path / "data" / ("tables" if config is lm.Config.TABLES
                                             else "program"), directory)
        configs[config.value] = lm.worker({
            "config": config.value, "data_dir": str(directory),
            "pages": str(tmp_path / "data" / "pages.pickle"), "join_caches": "lean"})
    tables, partial, full = (configs[c.value] for c in lm.Config)

    assert tables["memory_bytes"] == 0 and "pages" not in tables
    assert full["stats"]["misses"] == 0 and full["nodes_partial"] == 0
    assert partial["stats"]["misses"] > 0 and partial["nodes_partial"] > 0
    # full state is built at open; partial state grows as the pages read
    assert full["memory_bytes_after_open"] > 0.9 * full["memory_bytes"]
    assert 0 < partial["memory_bytes_after_open"] < partial["memory_bytes"]

    summary = lm.summarize(configs, {})
    assert summary["verification"]["ok"], summary["verification"]
    assert 0 < summary["essential_fraction"] < summary["state_fraction"] < 1
    assert summary["memory_estimate_error"] is None and summary["traced_state_fraction"] is None
