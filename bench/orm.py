"""SQLAlchemy's dialect compliance suite against ``rivulet serve`` and a private MariaDB.

SQLAlchemy ships, inside its wheel, the test suite third-party dialects run
(``sqlalchemy.testing.suite``, with its pytest plugin). This benchmark writes the small
harness SQLAlchemy's README.dialects.rst describes into a temporary directory (a
``conftest.py`` loading the plugin, a test module importing the suite, a ``setup.cfg`` naming
the requirements class, :mod:`bench.orm_requirements`), starts a private MariaDB (the
oracle's configuration, :func:`bench.mysql_oracle.start_oracle`) and ``rivulet serve`` on a
fresh data directory, and runs the suite against each, over PyMySQL
(``--dburi mysql+pymysql://root@127.0.0.1:PORT/rivulet``), in two pytest subprocesses at once,
each time-boxed (pytest-timeout's ``--session-timeout`` ends a run cleanly, its junit XML
written). It reports the tests each server passes, how many of MariaDB's passes rivulet
passes too (the target ``sqlalchemy_suite_vs_mariadb``, goal 0.9) and rivulet's failures
grouped by the first line of their error message, the list to work down.

rivulet says it is MySQL 8.0, so SQLAlchemy drives it with its mysql dialect and MariaDB with
its mariadb one: MariaDB's run has tests the mysql dialect never collects or skips (sequences,
``RETURNING``). The target counts them as misses; ``rivulet_passed_of_mariadb_passed_run_for_mysql``
is the share over the tests both runs ran.

The suite wants a second schema, ``test_schema``, for its cross-schema tests: MariaDB has it
(and ``test_schema_2``); rivulet gets ``CREATE DATABASE test_schema`` and the result records
whether it took it.

``--quick`` runs a few test classes (``-k``), a couple of minutes.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import (
    REPO_DIR,
    busy_warning,
    environment,
    git_state,
    logger,
    print_table,
    stop_process,
    target,
    write_results,
)
from bench.mariadb import MariaDB
from bench.mysql_oracle import start_oracle

NAME = "orm"
DATABASE = "rivulet"  # rivulet's database; MariaDB gets one of the same name
EXTRA_SCHEMAS = ("test_schema", "test_schema_2")  # the suite's cross-schema tests use these
GOAL = 0.9
#: The test classes of ``--quick`` (a ``-k`` expression): DDL, inserts, selects, updates, types.
QUICK_CLASSES = ("TableDDLTest", "InsertBehaviorTest", "ExistsTest", "LimitOffsetTest",
                 "SimpleUpdateDeleteTest", "IntegerTest", "StringTest", "BooleanTest",
                 "OrderByLabelTest")
PER_TEST_TIMEOUT_S = 30
TOP_CAUSES = 25
log = logger()

#: The harness files of README.dialects.rst, written beside each other in a temporary directory.
CONFTEST = '''\
import pytest

pytest.register_assert_rewrite("sqlalchemy.testing.assertions")

from sqlalchemy.testing.plugin.pytestplugin import *  # noqa: E402,F401,F403
'''
TEST_MODULE = "from sqlalchemy.testing.suite import *  # noqa: F401,F403\n"
SETUP_CFG = '''\
[tool:pytest]
addopts = --tb native -p no:warnings -p no:cacheprovider
python_files = test_*.py

[sqla_testing]
requirement_cls = bench.orm_requirements:MySQLRequirements
profile_file = profiles.txt
'''


# ............................................................................ servers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RivuletServer:
    """``rivulet serve`` on a fresh data directory, its output kept in ``log_path``."""

    def __init__(self, data_dir: Path, log_path: Path) -> None:
        self.log_path = log_path
        self._log = log_path.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rivulet", "serve", "--data-dir", str(data_dir), "--no-demo",
             "--mysql-port", "0", "--http-port", "0"],
            stdout=self._log, stderr=subprocess.STDOUT, cwd=str(REPO_DIR),
            env=_env({"PYTHONUNBUFFERED": "1"}))
        deadline = time.monotonic() + 120
        while True:
            text = log_path.read_text()
            port = re.search(r"-P (\d+)", text)
            if "stop with Ctrl-C" in text and port is not None:
                self.port = int(port.group(1))
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"rivulet serve did not start:\n{text}")
            time.sleep(0.2)

    def stop(self) -> int | None:
        try:
            return stop_process(self.proc, 60)
        finally:
            self._log.close()


@contextmanager
def mariadb_and_rivulet(work: Path, *, keep: bool,
                        log: Callable[[str], None]) -> Iterator[tuple[MariaDB, RivuletServer]]:
    """MariaDB (the oracle's configuration) and ``rivulet serve``, each on a fresh
    directory under ``work``: the two servers an ORM's or a framework's own test suite is
    run against, to compare rivulet's results with MariaDB's.

    Both are stopped at the end, whatever happened, and ``work`` is removed unless
    ``keep`` (then its path is logged, once the block has ended without an error).
    """
    mariadb: MariaDB | None = None
    rivulet: RivuletServer | None = None
    try:
        mariadb = start_oracle(work / "mariadb", free_port())
        rivulet = RivuletServer(work / "rivulet-data", work / "rivulet-serve.log")
        yield mariadb, rivulet
        if keep:
            log(f"kept: {work}")
    finally:
        if rivulet is not None:
            rivulet.stop()
        if mariadb is not None:
            mariadb.stop()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)


def _env(extra: dict[str, str]) -> dict[str, str]:
    import os

    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, **extra,
            "PYTHONPATH": str(REPO_DIR) + (os.pathsep + path if path else "")}


def create_schemas(port: int, names: Sequence[str]) -> dict[str, str]:
    """``CREATE DATABASE`` each of ``names`` (utf8mb4); per name "ok" or the error."""
    import pymysql

    outcome: dict[str, str] = {}
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    try:
        with conn.cursor() as cur:
            for name in names:
                try:
                    cur.execute(f"CREATE DATABASE IF NOT EXISTS `{name}` "
                                "CHARACTER SET utf8mb4")
                    outcome[name] = "ok"
                except pymysql.MySQLError as exc:
                    outcome[name] = f"{exc.args[0]}: {exc.args[1]}" if len(exc.args) > 1 \
                        else repr(exc)
    finally:
        conn.close()
    return outcome


# .............................................................................. suite


def write_harness(directory: Path, closed: Sequence[str] = ()) -> None:
    """The harness files; with ``closed``, a requirements class with those requirements
    closed too (for both servers: what fails behind a fixture every test shares)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "conftest.py").write_text(CONFTEST)
    (directory / "test_suite.py").write_text(TEST_MODULE)
    setup = SETUP_CFG
    if closed:
        (directory / "closed_requirements.py").write_text(
            "from sqlalchemy.testing import exclusions\n"
            "from bench.orm_requirements import MySQLRequirements\n\n\n"
            "class ClosedRequirements(MySQLRequirements):\n"
            + "".join(f"    {name} = property(lambda self: exclusions.closed())\n"
                      for name in closed))
        setup = setup.replace("bench.orm_requirements:MySQLRequirements",
                              "closed_requirements:ClosedRequirements")
    (directory / "setup.cfg").write_text(setup)


@dataclass
class SuiteRun:
    """One pytest run of the suite in a subprocess, writing ``<name>.xml`` and ``<name>.log``."""

    name: str
    harness: Path
    port: int
    timeout_s: float
    keyword: str | None

    def start(self) -> None:
        dburi = f"mysql+pymysql://root@127.0.0.1:{self.port}/{DATABASE}?charset=utf8mb4"
        args = [sys.executable, "-m", "pytest", "test_suite.py", "--dburi", dburi, "-q",
                "-p", "no:cacheprovider", f"--timeout={PER_TEST_TIMEOUT_S}",
                f"--session-timeout={self.timeout_s:.0f}", f"--junitxml={self.xml}"]
        if self.keyword:
            args += ["-k", self.keyword]
        self._log = self.log_path.open("w")
        self.began = time.perf_counter()
        self.proc = subprocess.Popen(args, cwd=str(self.harness), stdout=self._log,
                                     stderr=subprocess.STDOUT, env=_env({}))

    @property
    def xml(self) -> Path:
        return self.harness / f"{self.name}.xml"

    @property
    def log_path(self) -> Path:
        return self.harness / f"{self.name}.log"

    def wait(self) -> dict[str, Any]:
        """Wait (the session timeout and a margin); the run's exit status and seconds."""
        try:
            status: int | None = self.proc.wait(self.timeout_s + 300)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            status = None
        self._log.close()
        seconds = time.perf_counter() - self.began
        tail = self.log_path.read_text(errors="replace").strip().splitlines()[-1:]
        return {"exit_status": status, "seconds": round(seconds, 1),
                "summary": tail[0] if tail else "",
                "session_timed_out": "session-timeout" in self.log_path.read_text(
                    errors="replace").lower() or seconds >= self.timeout_s}


# ........................................................................... analysis

Outcome = tuple[str, str]  # (passed | failed | error | teardown_error | skipped, message)
#: The outcome of a test one run has and the other's collection did not produce.
NOT_COLLECTED = "not collected"


def test_id(case: ET.Element) -> str:
    """A test's name with the per-database suffix pytest's parametrisation adds removed."""
    cls = re.sub(r"_(mysql|mariadb)\+\w+_[\d_]+$", "", case.attrib.get("classname", ""))
    return f"{cls}::{case.attrib.get('name', '')}"


def load_junit(path: Path) -> dict[str, Outcome]:
    """Each test case of a junit file and its outcome with the first failure's message."""
    if not path.exists():
        return {}
    results: dict[str, Outcome] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        kids = {c.tag: c for c in case if c.tag in ("failure", "error", "skipped")}
        if not kids:
            results[test_id(case)] = ("passed", "")
            continue
        tag = next(t for t in ("failure", "error", "skipped") if t in kids)
        message = kids[tag].attrib.get("message", "") or (kids[tag].text or "")
        outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
        if outcome == "error" and message.startswith("failed on teardown"):
            outcome = "teardown_error"
        if outcome == "failed" and test_id(case) in results:  # a teardown error's 2nd entry
            continue
        results[test_id(case)] = (outcome, message)
    return results


_CAUSE_RULES = (
    (r'^failed on (setup|teardown) with "', ""),
    (r"^sqlalchemy\.exc\.\w+: ", ""),
    (r"^\(pymysql\.err\.\w+\) ", ""),
    (r"duplicate primary key .* in table '\w+'", "duplicate primary key ... in table <T>"),
    (r"named '\w+' already exists", "named <T> already exists"),
    (r"\(line \d+, column \d+\)", ""),
    (r"^(AssertionError|assert):? .*", r"\1 (a wrong value)"),
)
#: rivulet's 1235: "unsupported <construct>: '<the statement's text>' (line, column)".
_UNSUPPORTED = re.compile(r"""^\(1235, ['"]unsupported ([^:'"]+)(?:: (.*))?""")


def _expression_shape(fragment: str) -> str:
    """An expression's text with its names and literals abstracted (``c ^ N``, ``(c, c)``,
    ``X'…'``): what kind of expression rivulet refused, not which."""
    text, cut = re.subn(r"\s*\(line \d+, column \d+\).*$", "", fragment)
    if not cut:  # the message's own closing quote and parenthesis
        text = re.sub(r"""['"]\)$""", "", text)
    text = text.strip().replace("\\'", "'")
    if len(text) > 1 and text[0] in "'\"" and text[-1] == text[0]:
        text = text[1:-1]
    text = re.sub(r"\b[xX]'[0-9a-fA-F]*(?:'|\.\.\.)", "X'…'", text)
    text = re.sub(r"(?<!X)'[^']*'", "'…'", text)
    text = re.sub(r"\b\d+(\.\d+)?\b", "N", text)
    text = re.sub(r"\b[A-Za-z_]\w*\.[A-Za-z_]\w*\b", "c", text)
    return re.sub(r"\b(?![A-Z_]+\b)(?!X')[A-Za-z_]\w*\b(?!\()", "c", text)


def cause(message: str) -> str:
    """The cause of a failure: its message's first line, names and positions abstracted; for
    a 1235, the construct rivulet names (and an expression's shape)."""
    text = message.strip().split("\n")[0]
    for pattern, replacement in _CAUSE_RULES[:3]:
        text = re.sub(pattern, replacement, text)
    unsupported = _UNSUPPORTED.match(text)
    if unsupported:
        construct, fragment = unsupported.groups()
        construct = re.sub(r"\s*\(line \d+, column \d+\).*$", "", construct).strip()
        if construct == "expression" and fragment:
            return f"(1235) unsupported expression: {_expression_shape(fragment)}"
        return f"(1235) unsupported {construct}"
    for pattern, replacement in _CAUSE_RULES[3:]:
        text = re.sub(pattern, replacement, text)
    return text.strip().rstrip('"')[:240]


def compare(baseline: dict[str, Outcome], other: dict[str, Outcome]) -> dict[str, Any]:
    """MariaDB's and rivulet's counts, the overlap of their passes, rivulet's failure causes."""
    def counts(results: dict[str, Outcome]) -> dict[str, int]:
        return dict(collections.Counter(o for o, _ in results.values()))

    base_passed = {t for t, (o, _) in baseline.items() if o == "passed"}
    other_passed = {t for t, (o, _) in other.items() if o == "passed"}
    both = base_passed & other_passed
    causes: dict[str, list[str]] = collections.defaultdict(list)
    for test, (outcome, message) in other.items():
        if outcome in ("failed", "error", "teardown_error"):
            causes[cause(message)].append(test)
    missed: dict[str, list[str]] = collections.defaultdict(list)  # of MariaDB's passes only
    for test in sorted(base_passed - other_passed):
        outcome, message = other.get(test, (NOT_COLLECTED, ""))
        reason = re.sub(r"^'.*?\(\w+\)' : ", "", message)  # a skip's test id, then its reason
        missed[f"skipped: {reason}" if outcome == "skipped" else
               cause(message) if message else outcome].append(test)
    # The tests of MariaDB's passes that SQLAlchemy runs for MySQL 8 too: rivulet says it is
    # MySQL 8.0, so the mysql dialect drives it, without MariaDB's sequences and RETURNING.
    comparable = {t for t in base_passed if other.get(t, (NOT_COLLECTED, ""))[0]
                  not in (NOT_COLLECTED, "skipped")}
    ranked = sorted(causes.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ranked_missed = sorted(missed.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return {
        "mariadb": {"tests": len(baseline), **counts(baseline)},
        "rivulet": {"tests": len(other), **counts(other)},
        "mariadb_passed": len(base_passed),
        "rivulet_passed": len(other_passed),
        "rivulet_passed_of_mariadb_passed": len(both),
        "mariadb_passed_run_for_mysql": len(comparable),
        "rivulet_passed_of_mariadb_passed_run_for_mysql": len(comparable & other_passed),
        "rivulet_passed_not_mariadb": sorted(other_passed - base_passed),
        "rivulet_outcome_of_mariadb_passed": dict(collections.Counter(
            other.get(t, (NOT_COLLECTED, ""))[0] for t in base_passed)),
        "rivulet_failure_causes": [
            {"count": len(tests), "cause": text, "example": tests[0]}
            for text, tests in ranked[:TOP_CAUSES]],
        "rivulet_failure_causes_of_mariadb_passed": [
            {"count": len(tests), "cause": text, "example": tests[0]}
            for text, tests in ranked_missed[:TOP_CAUSES]],
    }


def internal_errors(server_log: Path) -> dict[str, int]:
    """The exceptions ``rivulet serve`` logged (the last line of each traceback), counted."""
    counted: collections.Counter[str] = collections.Counter()
    lines = server_log.read_text(errors="replace").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Traceback"):
            j = i + 1
            while j < len(lines) and (lines[j].startswith(" ") or not lines[j].strip()):
                j += 1
            if j < len(lines):
                counted[lines[j][:200]] += 1
    return dict(counted.most_common(15))


# ............................................................................... main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.orm",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a few test classes: " + ", ".join(QUICK_CLASSES))
    parser.add_argument("-k", dest="keyword", help="pytest -k expression (default: all, "
                        "or the quick classes)")
    parser.add_argument("--timeout", type=float, help="seconds per server's run "
                        "(default 1200, quick 300)")
    parser.add_argument("--close", action="append", default=[], metavar="REQUIREMENT",
                        help="close a suite requirement for both servers (e.g. schemas: the "
                        "reflection fixture then makes no tables in test_schema); repeatable")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    if args.keyword is None and args.quick:
        args.keyword = " or ".join(QUICK_CLASSES)
    args.timeout = args.timeout or (300 if args.quick else 1200)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    load_avg = busy_warning(log)
    began = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="rivulet-bench-orm-"))
    with mariadb_and_rivulet(work, keep=args.keep, log=log) as (mariadb, rivulet):
        harness = work / "harness"
        write_harness(harness, args.close)
        mariadb_schemas = create_schemas(mariadb.port, (DATABASE, *EXTRA_SCHEMAS))
        rivulet_schemas = create_schemas(rivulet.port, EXTRA_SCHEMAS)
        log(f"MariaDB on {mariadb.port}, rivulet serve on {rivulet.port}; "
            f"rivulet's schemas: {rivulet_schemas}")
        runs = {name: SuiteRun(name, harness, port, args.timeout, args.keyword)
                for name, port in (("mariadb", mariadb.port), ("rivulet", rivulet.port))}
        for run in runs.values():
            run.start()
        log(f"running the suite against both (at most {args.timeout:.0f} s each)")
        run_info = {name: run.wait() for name, run in runs.items()}
        for name, info in run_info.items():
            log(f"{name}: {info['summary']} ({info['seconds']} s)")
        baseline, other = load_junit(runs["mariadb"].xml), load_junit(runs["rivulet"].xml)
        comparison = compare(baseline, other)
        server_errors = internal_errors(rivulet.log_path)

    passed = comparison["mariadb_passed"]
    ratio = comparison["rivulet_passed_of_mariadb_passed"] / passed if passed else None
    import sqlalchemy

    results = {
        "benchmark": NAME, "quick": args.quick,
        "params": {"keyword": args.keyword, "closed_requirements": args.close,
                   "timeout_s_per_run": args.timeout,
                   "per_test_timeout_s": PER_TEST_TIMEOUT_S, "sqlalchemy": sqlalchemy.__version__,
                   "requirements": "bench.orm_requirements:MySQLRequirements",
                   "driver": "pymysql", "database": DATABASE},
        "schemas": {"mariadb": mariadb_schemas, "rivulet": rivulet_schemas},
        "runs": run_info,
        **comparison,
        "rivulet_server_internal_errors": server_errors,
        "duration_s": round(time.perf_counter() - began, 1),
        "targets": {"sqlalchemy_suite_vs_mariadb": target(
            round(ratio, 4) if ratio is not None else None, GOAL)},
        "environment": {**environment(), "load_average_at_start": load_avg},
        "git": git_state(),
    }
    print_table("SQLAlchemy compliance suite", ["server", "tests", "passed", "failed", "error",
                                                "skipped"],
                [[name, c["tests"], c.get("passed", 0), c.get("failed", 0),
                  c.get("error", 0) + c.get("teardown_error", 0), c.get("skipped", 0)]
                 for name, c in (("mariadb", comparison["mariadb"]),
                                 ("rivulet", comparison["rivulet"]))])
    print_table("why rivulet misses tests MariaDB passes (first line of the error)",
                ["tests", "cause"],
                [[c["count"], c["cause"]]
                 for c in comparison["rivulet_failure_causes_of_mariadb_passed"]])
    print_table("targets", ["target", "value", "goal", "met"],
                [[k, v["value"], v["goal"], v["met"]] for k, v in results["targets"].items()])
    c = comparison
    log(f"rivulet passes {c['rivulet_passed_of_mariadb_passed']} of the {passed} tests MariaDB "
        f"passes; {c['rivulet_passed_of_mariadb_passed_run_for_mysql']} of the "
        f"{c['mariadb_passed_run_for_mysql']} of them SQLAlchemy runs for MySQL 8 too")
    if args.close or (args.keyword and not args.quick):  # not the benchmark's figure
        log("a run with --close or -k: not written to the results file")
        return 0 if passed else 1
    path = write_results(NAME, results, args.quick)
    log(f"results: {path}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
