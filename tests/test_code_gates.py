"""The code gates: the import contracts hold, ruff and mypy pass.

Each tool runs as a subprocess of this interpreter, from the repository root (where
pyproject.toml configures it), with the root on PYTHONPATH so that the tools see this
checkout of rivulet. A failure shows the tool's output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Seconds a tool may take (mypy without its cache takes about a minute on a busy machine).
TOOL_TIMEOUT = 840


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=TOOL_TIMEOUT, check=False)


def assert_passes(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, (
        f"{' '.join(done.args[1:])} exited with {done.returncode}\n"
        f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}")


@pytest.mark.timeout(TOOL_TIMEOUT + 60)
def test_import_contracts_are_kept() -> None:
    # import-linter has no ``python -m`` entry: its console script's function, run here.
    assert_passes(run_tool(
        "-c", "import sys; from importlinter.cli import lint_imports_command; "
              "sys.exit(lint_imports_command())"))


@pytest.mark.timeout(TOOL_TIMEOUT + 60)
def test_ruff_finds_nothing() -> None:
    assert_passes(run_tool("-m", "ruff", "check", "rivulet", "tests", "bench"))


@pytest.mark.timeout(TOOL_TIMEOUT + 60)
def test_mypy_finds_nothing() -> None:
    assert_passes(run_tool("-m", "mypy"))
