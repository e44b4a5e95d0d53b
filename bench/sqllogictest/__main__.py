"""``python -m bench.sqllogictest``: run the selected sqllogictest scripts on rivulet and on
SQLite and write ``bench/results/sqllogictest.json`` (counts by verdict, pass rates, the
refusals by construct, every wrong answer and internal error).

``--long`` takes the larger selection; ``--scripts`` names scripts to run instead (then
the result is written as ``sqllogictest.quick.json``, not kept); ``--export DIR`` copies
the selected scripts out of the corpus into ``DIR`` (the upstream layout), for a copy in
the shared folder.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import environment, write_results
from bench.sqllogictest.corpus import (
    COMMIT,
    LICENCE,
    LONG,
    QUICK,
    REPOSITORY,
    Corpus,
    find_corpus,
)
from bench.sqllogictest.engines import Engine, RivuletEngine, SqliteEngine
from bench.sqllogictest.records import parse
from bench.sqllogictest.runner import Outcome, Tally, Verdict, run_script

ENGINES = {"rivulet": RivuletEngine, "sqlite": SqliteEngine}


def run_selection(corpus: Corpus, scripts: Sequence[str],
                  log: Any = print) -> dict[str, Any]:
    """Every script on both engines: the result file's content (but its environment)."""
    totals = {name: Tally() for name in ENGINES}
    per_script: dict[str, dict[str, Any]] = {}
    failures: list[dict[str, str]] = []
    missing: list[str] = []
    for path in scripts:
        text = corpus.read(path)
        if text is None:
            missing.append(path)
            continue
        records = parse(text, path)
        per_script[path] = {}
        for name, make in ENGINES.items():
            engine: Engine = make()
            started = time.perf_counter()
            try:
                outcomes = run_script(engine, path, records)
            finally:
                engine.close()
            tally = Tally()
            for outcome in outcomes:
                tally.add(outcome)
                totals[name].add(outcome)
                if name == "rivulet" and outcome.verdict in (Verdict.WRONG, Verdict.ERROR):
                    failures.append(_failure(outcome))
            summary = tally.as_json()
            summary.pop("refusals")
            summary["seconds"] = round(time.perf_counter() - started, 1)
            per_script[path][name] = summary
        log(f"{path}: rivulet {per_script[path]['rivulet']}, "
            f"sqlite pass rate {per_script[path]['sqlite']['pass_rate']}")
    rivulet, sqlite = totals["rivulet"], totals["sqlite"]
    return {
        "corpus": {"repository": REPOSITORY, "commit": COMMIT, "licence": LICENCE,
                   "read_from": corpus.describe(), "scripts": list(per_script),
                   "missing": missing},
        "engines": {name: tally.as_json() for name, tally in totals.items()},
        "scripts": per_script,
        "failures": failures,
        "targets": {
            "rivulet_wrong_answers": _at_most_zero(rivulet.verdicts[Verdict.WRONG]),
            "rivulet_internal_errors": _at_most_zero(rivulet.verdicts[Verdict.ERROR]),
            "rivulet_pass_rate": _figure(round(rivulet.pass_rate, 4)),
            "sqlite_pass_rate": _figure(round(sqlite.pass_rate, 4)),
        },
    }


def _failure(outcome: Outcome) -> dict[str, str]:
    return {"where": outcome.where, "verdict": outcome.verdict.value, "sql": outcome.sql,
            "detail": outcome.detail}


def _at_most_zero(count: int) -> dict[str, Any]:
    return {"value": count, "goal": 0, "met": count == 0, "direction": "at most"}


def _figure(value: float) -> dict[str, Any]:
    """A measured figure with no goal (the table shows it, with no verdict)."""
    return {"value": value, "goal": None, "met": None, "direction": None}


def export(corpus: Corpus, scripts: Sequence[str], directory: Path) -> int:
    """Copy ``scripts`` out of ``corpus`` into ``directory``; returns how many were found."""
    copied = 0
    for path in scripts:
        text = corpus.read(path)
        if text is None:
            continue
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        copied += 1
    (directory / "SOURCE.md").write_text(
        f"Scripts of SQLite's sqllogictest corpus, from the public repository {REPOSITORY} "
        f"at commit {COMMIT}, laid out as its test/ folder.\nLicence: {LICENCE}.\n"
        "Written by `python -m bench.sqllogictest --export`.\n", encoding="utf-8")
    return copied


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sqllogictest",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--long", action="store_true", help="run the larger selection")
    parser.add_argument("--scripts", nargs="+", help="run these scripts instead (not kept)")
    parser.add_argument("--export", type=Path, metavar="DIR",
                        help="copy the selected scripts into DIR and run nothing")
    args = parser.parse_args(argv)

    corpus = find_corpus()
    if corpus is None:
        print("no copy of the sqllogictest corpus found (see bench/sqllogictest/corpus.py)",
              file=sys.stderr)
        return 2
    scripts = args.scripts or (LONG if args.long else tuple(QUICK))
    if args.export:
        print(f"copied {export(corpus, scripts, args.export)} scripts into {args.export}")
        return 0
    started = time.perf_counter()
    data: dict[str, Any] = {"benchmark": "sqllogictest", "quick": bool(args.scripts),
                            "selection": "scripts" if args.scripts else
                            ("long" if args.long else "quick")}
    data.update(run_selection(corpus, scripts))
    data["duration_s"] = round(time.perf_counter() - started, 1)
    data["environment"] = environment()
    path = write_results("sqllogictest", data, quick=bool(args.scripts))
    for name, tally in data["engines"].items():
        print(f"{name}: {tally}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
