"""bench/README.md's results table is generated from bench/results/*.json (bench/report.py).

The check against the committed files keeps every figure in the table true to its result
file: a new result committed without ``python -m bench.report`` fails here.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import common, report

REPO = Path(__file__).resolve().parent.parent


def test_committed_table_is_current():
    result = subprocess.run([sys.executable, "-m", "bench.report", "--check"], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("value, text", [
    (None, "—"), (True, "yes"), (False, "no"), (0, "0"), (60, "60"), (35558, "35,558"),
    (3012704, "3,012,704"), (182360.62473650783, "182,361"), (1234.5, "1,234"),
    (162.30991464215361, "162"), (57.55985849100398, "57.6"), (3.4184650279824558, "3.42"),
    (0.8905147879966857, "0.891"), (0.25, "0.25"), (10.0, "10"), (2.0, "2"),
    (-0.003938921116782845, "-0.00394"), (0.0000001, "0.0000001"),
])
def test_format_number(value, text):
    assert report.format_number(value) == text


def _fake_results(directory: Path) -> None:
    directory.mkdir()
    (directory / "fake.json").write_text(json.dumps({
        "benchmark": "fake",
        "quick": False,
        "targets": {
            "rows_per_s": {"value": 1234567.8, "goal": 1000000, "met": True,
                           "direction": "at least"},
            "p95_ms": {"value": 12.345, "goal": 10.0, "met": False, "direction": "at most"},
            "ratio": {"value": 0.5, "goal": 0.4, "met": True},
        },
        "environment": {"date": "2026-01-02T03:04:05+00:00",
                        "git": {"commit": "0123456789abcdef", "rivulet_dirty_files": 2},
                        "load_average_at_start": [1.234, 1, 1],
                        "load_average_at_end": [5.678, 1, 1]},
        "duration_s": 90.0,
    }))
    (directory / "bare.json").write_text(json.dumps({"benchmark": "bare", "targets": {},
                                                     "load_average_before": [3, 2, 1]}))
    (directory / "fake.quick.json").write_text(json.dumps({"benchmark": "fake", "quick": True}))
    (directory / "fake.dirty.json").write_text(json.dumps({"benchmark": "dirty", "targets": {}}))


def test_table_from_a_fake_result(tmp_path):
    _fake_results(tmp_path / "results")
    table = report.render(report.load_results(tmp_path / "results"))
    assert "| `fake` | `rows_per_s` | 1,234,568 | at least 1,000,000 | yes |" in table
    assert "| `fake` | `p95_ms` | 12.3 | at most 10 | **no** |" in table
    assert "| `fake` | `ratio` | 0.5 | 0.4 | yes |" in table
    assert "| `bare` | (none recorded) | — | — | — |" in table
    assert ("| `fake` | full | 2026-01-02 | 0123456 + 2 changed files | 1.2 → 5.7 | 1.5 min |"
            in table)
    assert "| `bare` | full | — | — | 3.0 → — | — |" in table
    assert "quick" not in table.split("| benchmark | run |")[1]  # .quick.json is skipped
    assert "`dirty`" not in table  # and so is .dirty.json


def test_check_and_rewrite(tmp_path):
    _fake_results(tmp_path / "results")
    readme = tmp_path / "README.md"
    readme.write_text(f"# B\n\n{report.BEGIN}\nold table\n{report.END}\n\nafter\n")
    args = ["--results", str(tmp_path / "results"), "--readme", str(readme)]
    assert report.main([*args, "--check"]) == 1
    assert "old table" in readme.read_text()
    assert report.main(args) == 0
    text = readme.read_text()
    assert "old table" not in text and "`rows_per_s`" in text and text.endswith("\nafter\n")
    assert report.main([*args, "--check"]) == 0
    readme.write_text("no markers\n")
    assert report.main([*args, "--check"]) == 2


def test_a_full_result_from_uncommitted_code_is_written_aside(tmp_path, monkeypatch):
    """``write_results`` of a full run from a tree whose rivulet/ or bench/ differs from
    its commit writes ``<name>.dirty.json``, never the committed ``<name>.json``; a quick
    run or a clean tree writes where it always did."""
    monkeypatch.setattr(common, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr(common, "git_state", lambda: {"commit": "abc", "dirty_files": 3})
    assert common.write_results("b", {"x": 1}, quick=False) == tmp_path / "b.dirty.json"
    assert common.write_results("b", {"x": 1}, quick=True) == tmp_path / "b.quick.json"
    assert not (tmp_path / "b.json").exists()
    monkeypatch.setattr(common, "git_state", lambda: {"commit": "abc", "dirty_files": 0})
    assert common.write_results("b", {"x": 2}, quick=False) == tmp_path / "b.json"
    assert json.loads((tmp_path / "b.json").read_text()) == {"x": 2}


def test_git_state_counts_changed_code_not_results(tmp_path, monkeypatch):
    """The count :func:`bench.common.write_results` decides by: files of rivulet/ and
    bench/ that differ from the commit (changed or new), result files and others left
    out."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       cwd=tmp_path, check=True, capture_output=True)

    for name in ("rivulet/a.py", "bench/b.py", "bench/results/r.json", "README.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "one")
    monkeypatch.setattr(common, "REPO_DIR", tmp_path)
    assert common.git_state()["dirty_files"] == 0
    for name in ("bench/results/r.json", "README.md"):
        (tmp_path / name).write_text("2\n")
    assert common.git_state()["dirty_files"] == 0
    (tmp_path / "rivulet/a.py").write_text("2\n")
    (tmp_path / "bench/new.py").write_text("new\n")
    state = common.git_state()
    assert state["dirty_files"] == 2 and len(state["commit"]) == 40
