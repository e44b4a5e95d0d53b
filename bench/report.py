"""The results table of ``bench/README.md``, generated from ``bench/results/*.json``.

``python -m bench.report`` reads every full run's result file (``<name>.json``; quick runs,
``<name>.quick.json``, and full runs from uncommitted code, ``<name>.dirty.json``, are not
kept and not reported), takes each file's ``targets`` (each a
``{"value", "goal", "met", "direction"}`` record, see :func:`bench.common.target`) and the
run's circumstances (date, commit, load average, duration), and rewrites the part of
``bench/README.md`` between the ``<!-- results:begin -->`` and ``<!-- results:end -->``
markers. ``python -m bench.report --check`` rewrites nothing and exits with status 1 if
that part differs from what the result files give (``tests/test_bench_report.py`` runs it).

Standard library only, so it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
README = BENCH_DIR / "README.md"

BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"
DASH = "—"


# ........................................................................ numbers


def format_number(value: Any) -> str:
    """A figure for a table: thousands separators, three significant digits below 1,000.

    >>> [format_number(v) for v in (182360.62, 5390851, 162.31, 3.418, 0.15915, -0.0039389)]
    ['182,361', '5,390,851', '162', '3.42', '0.159', '-0.00394']
    >>> [format_number(v) for v in (10.0, 0.25, 0.8, 0, None, True)]
    ['10', '0.25', '0.8', '0', '—', 'yes']
    """
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value == int(value) or abs(value) >= 1000:
            return f"{round(value):,}"
        decimals = max(0, 2 - math.floor(math.log10(abs(value))))
        text = f"{value:,.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    return str(value)


def format_goal(target: dict[str, Any]) -> str:
    """``at least 2`` / ``at most 100``: the goal with its direction, where recorded."""
    goal = format_number(target.get("goal"))
    direction = target.get("direction")
    return f"{direction} {goal}" if direction else goal


def format_met(target: dict[str, Any]) -> str:
    met = target.get("met")
    if met is None:
        return DASH
    return "yes" if met else "**no**"


# ........................................................................ runs


def load_results(results_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """``(name, data)`` for every full run's result file, in file-name order."""
    runs = []
    for path in sorted(results_dir.glob("*.json")):
        if path.name.endswith((".quick.json", ".dirty.json")):
            continue
        data = json.loads(path.read_text())
        runs.append((str(data.get("benchmark") or path.stem), data))
    return runs


def _first(data: dict[str, Any], *paths: str) -> Any:
    """The first of the dotted ``paths`` present (and not None) in ``data``."""
    for dotted in paths:
        node: Any = data
        for part in dotted.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            return node
    return None


def run_facts(data: dict[str, Any]) -> dict[str, str]:
    """The circumstances of one run, formatted: kind, date, commit, load, duration."""
    date = _first(data, "environment.date", "date")
    commit = _first(data, "environment.git.commit", "git.commit")
    dirty = _first(data, "environment.git.dirty_files", "git.dirty_files",
                   "environment.git.rivulet_dirty_files", "git.rivulet_dirty_files")
    start = _first(data, "environment.load_average_at_start", "load_average_at_start",
                   "load_average_before")
    end = _first(data, "environment.load_average_at_end", "load_average_at_end")
    duration = _first(data, "duration_s", "seconds")
    commit_text = str(commit)[:7] if commit else DASH
    if commit and dirty:
        commit_text += f" + {dirty} changed file{'s' if dirty != 1 else ''}"
    load = [f"{float(la[0]):.1f}" if la else DASH for la in (start, end)]
    return {
        "run": "quick" if data.get("quick") else "full",
        "date": str(date)[:10] if date else DASH,
        "commit": commit_text,
        "load": DASH if load == [DASH, DASH] else f"{load[0]} → {load[1]}",
        "duration": f"{format_number(float(duration) / 60)} min" if duration else DASH,
    }


# ........................................................................ tables


def _table(header: Sequence[str], rows: list[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return lines


def render(runs: list[tuple[str, dict[str, Any]]]) -> str:
    """The generated Markdown: the targets table, then the runs they come from."""
    target_rows: list[Sequence[str]] = []
    run_rows: list[Sequence[str]] = []
    for name, data in runs:
        targets = data.get("targets") or {}
        if not targets:
            target_rows.append((f"`{name}`", "(none recorded)", DASH, DASH, DASH))
        for key, target in targets.items():
            target_rows.append((f"`{name}`", f"`{key}`", format_number(target.get("value")),
                                format_goal(target), format_met(target)))
        facts = run_facts(data)
        run_rows.append((f"`{name}`", facts["run"], facts["date"], facts["commit"],
                         facts["load"], facts["duration"]))
    lines = ["Generated by `python -m bench.report` from `bench/results/*.json`; do not edit.", ""]
    lines += _table(("benchmark", "target", "value", "goal", "met"), target_rows)
    lines += ["", "The runs these figures come from (load average: 1-minute, at start → at end):",
              ""]
    lines += _table(("benchmark", "run", "date", "commit", "load average", "duration"),
                    run_rows)
    return "\n".join(lines) + "\n"


def splice(text: str, generated: str) -> str:
    """``text`` with the part between the markers replaced by ``generated``."""
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        raise ValueError(f"the markers {BEGIN} and {END} are missing or out of order")
    return text[: begin + len(BEGIN)] + "\n" + generated + text[end:]


# ........................................................................ command


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the README's table is stale; change nothing")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help=argparse.SUPPRESS)
    parser.add_argument("--readme", type=Path, default=README, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    text = args.readme.read_text()
    try:
        updated = splice(text, render(load_results(args.results)))
    except ValueError as exc:
        print(f"{args.readme}: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if updated != text:
            print(f"{args.readme} is stale: run `python -m bench.report`", file=sys.stderr)
            return 1
        return 0
    if updated != text:
        args.readme.write_text(updated)
        print(f"rewrote the results table of {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
