"""``python -m bench.sqllogictest``: run the selected sqllogictest scripts on rivulet and on
SQLite (the first records of some, as the test suite does) and write
``bench/results/sqllogictest.json`` (counts by verdict, pass rates, the refusals by
construct, every wrong answer and internal error).

``--long`` takes the larger selection, whole; ``--mariadb`` runs the scripts on a private
MariaDB too, and lists the records where rivulet gave the script's answer and MySQL
another; ``--scripts`` names scripts to run instead, whole (then the result is written as
``sqllogictest.quick.json``, not kept); ``--export DIR`` copies the selected scripts out of
the corpus into ``DIR`` (the upstream layout), for a copy in the shared folder.
"""

from __future__ import annotations

import argparse
import signal
import socket
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.common import environment, load_average, write_results
from bench.sqllogictest.corpus import (
    COMMIT,
    LICENCE,
    LONG,
    QUICK,
    REPOSITORY,
    Corpus,
    find_corpus,
)
from bench.sqllogictest.engines import Engine, MariaDBEngine, RivuletEngine, SqliteEngine
from bench.sqllogictest.records import HashThreshold, Record, parse
from bench.sqllogictest.runner import Outcome, Tally, Verdict, run_script

#: An engine for a script: made from the script's number in the run.
EngineMaker = Callable[[int], Engine]

ENGINES: dict[str, EngineMaker] = {"rivulet": lambda n: RivuletEngine(),
                                   "sqlite": lambda n: SqliteEngine()}

#: mariadbd options for ``--mariadb``: MySQL 8's default sql_mode, rivulet's collation and
#: time zone, as the tests' MySQL oracle (tests/mysql_oracle.py) has them.
MARIADB_OPTIONS = [
    "--skip-log-bin", "--skip-grant-tables", "--skip-name-resolve",
    "--innodb-buffer-pool-size=64M", "--innodb-flush-log-at-trx-commit=0",
    "--innodb-doublewrite=0", "--character-set-server=utf8mb4",
    "--collation-server=utf8mb4_nopad_bin", "--default-time-zone=+00:00",
    "--sql-mode=ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
]


def run_selection(corpus: Corpus, scripts: Mapping[str, int | None],
                  engines: dict[str, EngineMaker], log: Any = print) -> dict[str, Any]:
    """Every script (its first ``scripts[path]`` records, or all) on every engine: the
    result file's content (but its environment)."""
    totals = {name: Tally() for name in engines}
    per_script: dict[str, dict[str, Any]] = {}
    failures: list[dict[str, str]] = []
    not_mysqls: list[dict[str, str]] = []
    refused_by_mysql_too: Counter[str] = Counter()
    missing: list[str] = []
    for number, (path, limit) in enumerate(scripts.items()):
        text = corpus.read(path)
        if text is None:
            missing.append(path)
            continue
        records = parse(text, path)[:limit]
        per_script[path] = {"records_taken": "all" if limit is None else limit}
        outcomes: dict[str, list[Outcome]] = {}
        for name, make in engines.items():
            engine = make(number)
            started = time.perf_counter()
            try:
                outcomes[name] = run_script(engine, path, records)
            finally:
                engine.close()
            tally = Tally()
            for outcome in outcomes[name]:
                tally.add(outcome)
                totals[name].add(outcome)
                if name == "rivulet" and outcome.verdict in (Verdict.WRONG, Verdict.ERROR):
                    failures.append(_failure(outcome))
            summary = tally.as_json()
            summary.pop("refusals")
            summary["seconds"] = round(time.perf_counter() - started, 1)
            per_script[path][name] = summary
        if "mariadb" in outcomes:
            mysql = {o.line: o for o in outcomes["mariadb"]}
            for outcome in outcomes["rivulet"]:
                other = mysql.get(outcome.line)
                if other is None:
                    continue
                if (outcome.verdict is Verdict.PASSED and other.verdict is Verdict.WRONG
                        and outcome.kind == "query"):
                    not_mysqls.append({"where": outcome.where, "sql": outcome.sql,
                                       "mariadb": other.detail})
                if outcome.verdict is Verdict.REFUSED and other.verdict is Verdict.REFUSED:
                    refused_by_mysql_too[outcome.category] += 1
        log(f"{path}: " + "; ".join(f"{name} {summary}"
                                    for name, summary in per_script[path].items()))
    result: dict[str, Any] = {
        "corpus": {"repository": REPOSITORY, "commit": COMMIT, "licence": LICENCE,
                   "read_from": corpus.describe(), "scripts": list(per_script),
                   "missing": missing},
        "engines": {name: tally.as_json() for name, tally in totals.items()},
        "scripts": per_script,
        "failures": failures,
    }
    rivulet = totals["rivulet"]
    targets = {
        "rivulet_wrong_answers": _at_most_zero(rivulet.verdicts[Verdict.WRONG]),
        "rivulet_internal_errors": _at_most_zero(rivulet.verdicts[Verdict.ERROR]),
        "rivulet_pass_rate_percent": _percent(rivulet),
        "sqlite_pass_rate_percent": _percent(totals["sqlite"]),
    }
    if "mariadb" in totals:
        result["passed_with_an_answer_mysql_does_not_give"] = not_mysqls
        result["refused_by_mysql_too"] = dict(refused_by_mysql_too.most_common())
        targets["mariadb_pass_rate_percent"] = _percent(totals["mariadb"])
        targets["rivulet_answers_not_mysqls"] = _at_most_zero(len(not_mysqls))
    result["targets"] = targets
    return result


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _failure(outcome: Outcome) -> dict[str, str]:
    return {"where": outcome.where, "verdict": outcome.verdict.value, "sql": outcome.sql,
            "detail": outcome.detail}


def _at_most_zero(count: int) -> dict[str, Any]:
    return {"value": count, "goal": 0, "met": count == 0, "direction": "at most"}


def _percent(tally: Tally) -> dict[str, Any]:
    """A pass rate in percent, a figure with no goal (the table shows it, with no verdict)."""
    return {"value": round(100 * tally.pass_rate, 2), "goal": None, "met": None,
            "direction": None}


def export(corpus: Corpus, scripts: Mapping[str, int | None], directory: Path) -> int:
    """Copy ``scripts`` out of ``corpus`` into ``directory``, each cut after the records the
    selection takes (so the copy is small); returns how many were found."""
    copied = 0
    for path, limit in scripts.items():
        text = corpus.read(path)
        if text is None:
            continue
        records = parse(text, path)
        if limit is not None and limit < len(records):
            text = _first_records(text, records[limit], limit, path)
        target = directory / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        copied += 1
    (directory / "SOURCE.md").write_text(
        f"Scripts of SQLite's sqllogictest corpus, from the public repository {REPOSITORY} "
        f"at commit {COMMIT}, laid out as its test/ folder; some cut after the records the "
        f"test suite runs.\nLicence: {LICENCE}.\n"
        "Written by `python -m bench.sqllogictest --export`.\n", encoding="utf-8")
    return copied


def _first_records(text: str, first_left_out: Record, count: int, path: str) -> str:
    """``text`` up to the record ``first_left_out`` (and the conditions before it)."""
    lines = text.splitlines(keepends=True)
    cut = first_left_out.line - 1
    if not isinstance(first_left_out, HashThreshold):
        cut -= len(first_left_out.conditions)
    head = "".join(lines[:cut])
    if len(parse(head, path)) != count:
        raise ValueError(f"{path}: cutting before line {cut + 1} does not keep {count} records")
    return head


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sqllogictest",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--long", action="store_true", help="run the larger selection")
    parser.add_argument("--scripts", nargs="+", help="run these scripts instead (not kept)")
    parser.add_argument("--mariadb", action="store_true",
                        help="run the scripts on a private MariaDB too (MySQL's answers)")
    parser.add_argument("--export", type=Path, metavar="DIR",
                        help="copy the selected scripts into DIR and run nothing")
    args = parser.parse_args(argv)

    corpus = find_corpus()
    if corpus is None:
        print("no copy of the sqllogictest corpus found (see bench/sqllogictest/corpus.py)",
              file=sys.stderr)
        return 2
    scripts: Mapping[str, int | None] = (
        dict.fromkeys(args.scripts or LONG) if args.scripts or args.long else QUICK)
    if args.export:
        print(f"copied {export(corpus, scripts, args.export)} scripts into {args.export}")
        return 0
    started = time.perf_counter()
    load_at_start = load_average()
    data: dict[str, Any] = {"benchmark": "sqllogictest", "quick": bool(args.scripts),
                            "selection": "scripts" if args.scripts else
                            ("long" if args.long else "quick")}
    engines = dict(ENGINES)
    server = None
    # Stopped by a signal, the run still stops its MariaDB (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    if args.mariadb:
        from bench.mariadb import MariaDB

        MariaDB.ensure_installed(print)
        server = MariaDB(Path(tempfile.mkdtemp(prefix="slt-mariadb-")), _free_port(),
                         options=MARIADB_OPTIONS)
        server.start()
        engines["mariadb"] = lambda n: MariaDBEngine(server.connect, f"slt_{n}")
    try:
        data.update(run_selection(corpus, scripts, engines))
    finally:
        if server is not None:
            server.stop()
    data["duration_s"] = round(time.perf_counter() - started, 1)
    data["environment"] = environment()
    data["environment"]["load_average_at_start"] = load_at_start
    path = write_results("sqllogictest", data, quick=bool(args.scripts))
    for name, tally in data["engines"].items():
        print(f"{name}: {tally}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
