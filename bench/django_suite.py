"""Django's own test suite, a slice of its apps, against ``rivulet serve`` and a private MariaDB.

Django's source distribution ships its tests (``tests/``, with ``tests/runtests.py``); the
wheel does not. This benchmark downloads the sdist of the installed Django version once with
pip (``pip download django==X --no-binary :all: --no-deps``) into the repository's ignored
``.cache/django-sdist/``, extracts ``tests/``, starts a private MariaDB (the oracle's
configuration, :func:`bench.mysql_oracle.start_oracle`) and ``rivulet serve`` on a fresh data
directory (:class:`bench.orm.RivuletServer`), and runs ``runtests.py`` against each with
Django's MySQL backend (:mod:`bench.django_suite_settings`: mysqlclient, ``--parallel 1``,
``--noinput``), the two servers at once, each server's apps one after another, one
``runtests.py`` process per app. The runner (:mod:`bench.django_suite_runner`) writes a JSON
line per test as it stops, so a run cut short still tells what it ran.

The slice is :data:`APPS`. Each server has :data:`BUDGET_S` for the whole slice: an app runs
with what is left, and is cut (its process killed) when that is used up; the apps after it do
not run. Only the apps both servers ran to the end are compared (``apps_compared``); the
others are recorded with what they did (``runs``). rivulet's connections read their own
commits (``SET rivulet_read_your_writes = 1``, the ``init_command``), as on MySQL.

It reports, per server, the tests passed, failed, errored and skipped (an expected failure
counts as a pass, an unexpected success as a failure), the pass rates (passes over the tests
not skipped), how many of MariaDB's passes rivulet passes too, and rivulet's failures of
MariaDB's passes grouped by cause (:func:`bench.orm.cause`: the construct of a 1235, the first
line of anything else); the tests whose answers differ (an ``AssertionError`` where MariaDB
passes) are listed one by one. The tests of a class whose ``setUpClass`` (where
``setUpTestData`` runs) failed have no result of their own: they get that error.

rivulet says it is MySQL 8.0, and Django's backend asks MySQL 8 and MariaDB for different
features: some tests run on one server and are skipped on the other; they count as misses in
``rivulet_passed_of_mariadb_passed`` and not in ``..._run_for_mysql`` (the tests both ran).

``--quick`` runs one small app (``basic``), a minute or two.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
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
    write_results,
)
from bench.django_suite_runner import RESULTS_ENV
from bench.django_suite_settings import (
    INIT_COMMAND_ENV,
    PORT_ENV,
    READ_TIMEOUT_S,
    TEST_SUFFIX_ENV,
)
from bench.orm import (
    NOT_COLLECTED,
    Outcome,
    _env,
    compare,
    create_schemas,
    internal_errors,
    mariadb_and_rivulet,
)

NAME = "django_suite"
#: The apps of issue 29's slice, in the order they run.
APPS = ("basic", "lookup", "aggregation", "expressions", "queries", "many_to_one",
        "transactions")
QUICK_APPS = ("basic",)
#: Seconds each server has for the whole slice (quick: for its one app).
BUDGET_S = 15 * 60
QUICK_BUDGET_S = 180
#: An app is not started with less time than this left.
MIN_APP_S = 30
SYSTEMS = ("mariadb", "rivulet")
DATABASE = "rivulet"  # the settings' default database; MariaDB gets one of the same name
RIVULET_INIT_COMMAND = "SET rivulet_read_your_writes = 1"
SETTINGS = "bench.django_suite_settings"
CACHE_DIR = REPO_DIR / ".cache" / "django-sdist"
#: The outcome of the tests of an app cut at the time limit that had not run.
NOT_RUN = "not run"
WRONG_VALUES_LISTED = 100
SLOWEST_LISTED = 10
log = logger()


class SdistUnavailable(RuntimeError):
    """Django's source distribution could not be had: no ``tests/`` to run."""


# ........................................................................ the sdist


def django_tests(version: str, cache: Path = CACHE_DIR) -> Path:
    """``tests/`` of Django ``version``'s sdist, downloaded (once) and extracted under ``cache``."""
    extracted = sorted(cache.glob("[dD]jango-*/tests/runtests.py"))
    for runtests in extracted:
        if runtests.parent.parent.name.lower() == f"django-{version}":
            return runtests.parent
    archives = [p for p in cache.glob("*.tar.gz") if p.name.lower() == f"django-{version}.tar.gz"]
    if not archives:
        cache.mkdir(parents=True, exist_ok=True)
        log(f"downloading Django {version}'s sdist with pip into {cache}")
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", f"django=={version}", "--no-binary",
             ":all:", "--no-deps", "--disable-pip-version-check", "-q", "-d", str(cache)],
            capture_output=True, text=True)
        archives = [p for p in cache.glob("*.tar.gz")
                    if p.name.lower() == f"django-{version}.tar.gz"]
        if done.returncode or not archives:
            raise SdistUnavailable(f"pip download django=={version} failed "
                                   f"(exit {done.returncode}): {done.stderr.strip()[-2000:]}")
    with tarfile.open(archives[0]) as tar:
        members = [m for m in tar.getmembers() if m.name.split("/")[1:2] == ["tests"]]
        if not members:
            raise SdistUnavailable(f"{archives[0].name} has no tests/")
        tar.extractall(cache, members=members, filter="data")
        top = members[0].name.split("/")[0]
    return cache / top / "tests"


# ............................................................................ running


@dataclass
class AppRun:
    """One ``runtests.py`` process for one app against one server: ``<system>/<app>.jsonl``
    (the runner's lines) and ``<system>/<app>.log`` (Django's verbose output) under ``work``."""

    system: str
    app: str
    port: int
    init_command: str
    tests_dir: Path
    work: Path

    @property
    def results(self) -> Path:
        return self.work / self.system / f"{self.app}.jsonl"

    @property
    def log_path(self) -> Path:
        return self.work / self.system / f"{self.app}.log"

    def run(self, timeout_s: float) -> dict[str, Any]:
        """Run (killed after ``timeout_s``); its status (``completed``, ``cut``), exit status,
        seconds and the last line of its output."""
        self.results.parent.mkdir(parents=True, exist_ok=True)
        self.results.write_text("")
        args = [sys.executable, "runtests.py", "--settings", SETTINGS, "--parallel", "1",
                "--noinput", "--verbosity", "2", self.app]
        env = _env({PORT_ENV: str(self.port), INIT_COMMAND_ENV: self.init_command,
                    TEST_SUFFIX_ENV: self.app, RESULTS_ENV: str(self.results),
                    "PYTHONUNBUFFERED": "1"})
        began = time.perf_counter()
        with self.log_path.open("w") as out:
            proc = subprocess.Popen(args, cwd=str(self.tests_dir), stdout=out,
                                    stderr=subprocess.STDOUT, env=env)
            try:
                status: int | None = proc.wait(timeout_s)
                cut = False
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                status, cut = None, True
        output = self.log_path.read_text(errors="replace")
        summary = [line for line in output.splitlines()
                   if re.match(r"^(OK|FAILED)\b|^Ran \d+ test", line)]
        return {"status": "cut" if cut else "completed", "exit_status": status,
                "seconds": round(time.perf_counter() - began, 1),
                "summary": "; ".join(summary), **run_errors(output)}


def run_slice(system: str, port: int, init_command: str, apps: Sequence[str], budget_s: float,
              tests_dir: Path, work: Path) -> dict[str, dict[str, Any]]:
    """Each app in turn against one server, within ``budget_s`` for them all."""
    deadline = time.monotonic() + budget_s
    infos: dict[str, dict[str, Any]] = {}
    for app in apps:
        left = deadline - time.monotonic()
        if left < MIN_APP_S:
            infos[app] = {"status": "not run", "reason": f"{left:.0f} s of the budget left"}
            continue
        run = AppRun(system, app, port, init_command, tests_dir, work)
        infos[app] = {**run.run(left), "results": str(run.results)}
        log(f"{system} {app}: {infos[app]['status']}, {infos[app]['summary']} "
            f"({infos[app]['seconds']} s)")
    return infos


#: The last line of a traceback: the exception and its text.
_EXCEPTION_LINE = re.compile(r"^[\w.]+(Error|Exception)\b.*$", re.MULTILINE)


def run_errors(output: str) -> dict[str, str]:
    """What went wrong in ``runtests.py``'s output around the tests: ``setup_error``, the
    error that stopped it before any test (making the test database, migrating), and
    ``teardown_error``, one dropping the test database after them."""
    ran = re.search(r"^Ran \d+ tests? in ", output, re.MULTILINE)
    before, after = (output[:ran.start()], output[ran.end():]) if ran else (output, "")
    errors: dict[str, str] = {}
    made = re.findall(r"^Got an error (?:re)?creating the test database: (.*)$", before,
                      re.MULTILINE)
    raised = [m.group(0) for m in _EXCEPTION_LINE.finditer(before)]
    if ran is None and (made or raised):
        errors["setup_error"] = made[-1] if made else raised[-1]
    dropped = [m.group(0) for m in _EXCEPTION_LINE.finditer(after)]
    if dropped:
        errors["teardown_error"] = dropped[-1]
    return errors


# ........................................................................... analysis

#: unittest's name for an error outside any test, ``setUpClass (module.Class)``, and this
#: benchmark's for one that stopped a whole app's run before its tests, ``runtests (app)``.
_OUTSIDE_A_TEST = re.compile(r"^(setUpClass|setUpModule|tearDownClass|tearDownModule|"
                             r"runtests) \((.+)\)$")


def load_lines(path: Path) -> dict[str, Outcome]:
    """The runner's lines: each test's outcome (an expected failure as a pass, an unexpected
    success as a failure) and message; a line cut short by a killed run is left out."""
    results: dict[str, Outcome] = {}
    if not path.exists():
        return results
    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        outcome = {"expected_failure": "passed",
                   "unexpected_success": "failed"}.get(entry["outcome"], entry["outcome"])
        results[entry["test"]] = (outcome, "" if outcome == "passed" else entry["message"])
    return results


def app_results(info: Mapping[str, Any]) -> dict[str, Outcome]:
    """One app's run: its tests' outcomes, or, where it stopped before any test, its error
    (``runtests (app)``, given to the tests the other server ran by
    :func:`attribute_class_errors`)."""
    results = load_lines(Path(info["results"]))
    if not results and info.get("setup_error"):
        app = Path(info["results"]).stem
        results[f"runtests ({app})"] = ("error", info["setup_error"])
    return results


def attribute_class_errors(results: Mapping[str, Outcome],
                           other: Mapping[str, Outcome]) -> dict[str, Outcome]:
    """``results`` with each error outside a test given to the tests it kept from running:
    the tests of its class (module) that ``other`` ran and ``results`` has no line for. An
    error that kept no test of ``other``'s from running stays as it is."""
    out = {test: outcome for test, outcome in results.items()
           if not _OUTSIDE_A_TEST.match(test)}
    for test, outcome in results.items():
        outside = _OUTSIDE_A_TEST.match(test)
        if outside is None:
            continue
        scope = outside.group(2) + "."
        kept = [t for t in other if t.startswith(scope) and t not in out]
        for name in kept:
            out[name] = outcome
        if not kept:
            out[test] = outcome
    return out


def pass_rate_percent(counts: Mapping[str, int]) -> float | None:
    """Passes over the tests run (not skipped), in percent."""
    ran = counts.get("tests", 0) - counts.get("skipped", 0)
    return round(100 * counts.get("passed", 0) / ran, 2) if ran else None


def analyse(mariadb: Mapping[str, dict[str, Outcome]], rivulet: Mapping[str, dict[str, Outcome]],
            apps: Sequence[str]) -> dict[str, Any]:
    """Both servers' results over ``apps`` (per app: test -> outcome), compared as
    :func:`bench.orm.compare` compares, with each server's pass rate, rivulet's wrong values
    (its assertion failures of MariaDB's passes) and per-app counts."""
    base: dict[str, Outcome] = {}
    other: dict[str, Outcome] = {}
    per_app: dict[str, dict[str, dict[str, int]]] = {}
    for app in apps:
        base_app = attribute_class_errors(mariadb.get(app, {}), rivulet.get(app, {}))
        other_app = attribute_class_errors(rivulet.get(app, {}), base_app)
        base.update(base_app)
        other.update(other_app)
        per_app[app] = {name: {"tests": len(r), **collections.Counter(o for o, _ in r.values())}
                        for name, r in (("mariadb", base_app), ("rivulet", other_app))}
    comparison = compare(base, other)
    wrong = [{"test": test, "message": other[test][1][:300]}
             for test in sorted(base) if base[test][0] == "passed"
             and other.get(test, (NOT_COLLECTED, ""))[0] == "failed"
             and other[test][1].startswith("AssertionError")]
    return {**comparison,
            "mariadb_pass_rate_percent": pass_rate_percent(comparison["mariadb"]),
            "rivulet_pass_rate_percent": pass_rate_percent(comparison["rivulet"]),
            "rivulet_wrong_values_of_mariadb_passed": wrong[:WRONG_VALUES_LISTED],
            "rivulet_wrong_values_of_mariadb_passed_count": len(wrong),
            "per_app": per_app}


def slowest(paths: Sequence[Path], count: int = SLOWEST_LISTED) -> list[dict[str, Any]]:
    """The ``count`` slowest tests of the runner's files."""
    entries = []
    for path in paths:
        for line in path.read_text(errors="replace").splitlines() if path.exists() else ():
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    entries.sort(key=lambda e: -float(e.get("seconds", 0)))
    return [{"test": e["test"], "seconds": e["seconds"], "outcome": e["outcome"]}
            for e in entries[:count]]


def percent_figure(value: float | None) -> dict[str, Any]:
    """A figure recorded with no goal (issue 29 asks for the pass rates, not a bound)."""
    return {"value": value, "goal": None, "met": None, "direction": None}


# ............................................................................... main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.django_suite",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one small app: " + ", ".join(QUICK_APPS))
    parser.add_argument("--apps", nargs="+", help="Django test apps (default: "
                        + " ".join(APPS) + "); other apps print without writing the result")
    parser.add_argument("--budget", type=float, help=f"seconds per server for the whole slice "
                        f"(default {BUDGET_S}, quick {QUICK_BUDGET_S})")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    args.apps = tuple(args.apps or (QUICK_APPS if args.quick else APPS))
    args.budget = args.budget or (QUICK_BUDGET_S if args.quick else BUDGET_S)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    import django

    from bench.django_suite_settings import DRIVER

    load_avg = busy_warning(log)
    began = time.perf_counter()
    try:
        tests_dir = django_tests(django.__version__)
    except SdistUnavailable as exc:
        log(f"Django's test suite is not available: {exc}")
        return 2
    work = Path(tempfile.mkdtemp(prefix="rivulet-bench-django-"))
    with mariadb_and_rivulet(work, keep=args.keep, log=log) as (mariadb, rivulet):
        mariadb_schemas = create_schemas(mariadb.port, (DATABASE,))
        log(f"MariaDB on {mariadb.port}, rivulet serve on {rivulet.port}; Django "
            f"{django.__version__}'s tests in {tests_dir}; apps {', '.join(args.apps)}, "
            f"at most {args.budget:.0f} s each server")
        ports = {"mariadb": (mariadb.port, ""), "rivulet": (rivulet.port, RIVULET_INIT_COMMAND)}
        runs: dict[str, dict[str, dict[str, Any]]] = {}

        def run(system: str) -> None:
            port, init_command = ports[system]
            runs[system] = run_slice(system, port, init_command, args.apps, args.budget,
                                     tests_dir, work)

        threads = [threading.Thread(target=run, args=(system,)) for system in SYSTEMS]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        results = {system: {app: app_results(info) for app, info in runs[system].items()
                            if "results" in info} for system in SYSTEMS}
        compared = [app for app in args.apps
                    if all(runs[s][app]["status"] == "completed" for s in SYSTEMS)]
        analysis = analyse(results["mariadb"], results["rivulet"], compared)
        slow = slowest([Path(info["results"]) for info in runs["rivulet"].values()
                        if "results" in info])
        server_errors = internal_errors(rivulet.log_path)

    passed = analysis["mariadb_passed"]
    share = analysis["rivulet_passed_of_mariadb_passed"] / passed if passed else None
    result = {
        "benchmark": NAME, "quick": args.quick,
        "params": {"apps": list(args.apps), "budget_s_per_server": args.budget,
                   "min_app_s": MIN_APP_S, "django": django.__version__, "driver": DRIVER,
                   "settings": SETTINGS, "runtests": "--parallel 1 --noinput --verbosity 2",
                   "rivulet_init_command": RIVULET_INIT_COMMAND,
                   "read_timeout_s": READ_TIMEOUT_S, "database": DATABASE,
                   "mariadb": "bench.mysql_oracle.start_oracle (MySQL 8 sql_mode, "
                              "utf8mb4_nopad_bin, UTC)"},
        "mariadb_schemas": mariadb_schemas,
        "runs": {system: {app: {k: v for k, v in info.items() if k != "results"}
                          for app, info in runs[system].items()} for system in SYSTEMS},
        "apps_compared": compared,
        "apps_not_compared": [app for app in args.apps if app not in compared],
        **analysis,
        "rivulet_slowest_tests": slow,
        "rivulet_server_internal_errors": server_errors,
        "duration_s": round(time.perf_counter() - began, 1),
        "targets": {
            "rivulet_pass_rate_percent": percent_figure(analysis["rivulet_pass_rate_percent"]),
            "mariadb_pass_rate_percent": percent_figure(analysis["mariadb_pass_rate_percent"]),
            "django_suite_vs_mariadb": percent_figure(
                round(share, 4) if share is not None else None)},
        "environment": {**environment(), "load_average_at_start": load_avg},
        "git": git_state(),
    }
    report(result)
    if set(args.apps) != set(QUICK_APPS if args.quick else APPS):  # not the benchmark's figure
        log("a run of other apps (--apps): not written to the results file")
        return 0 if passed else 1
    path = write_results(NAME, result, args.quick)
    log(f"results: {path}")
    return 0 if passed else 1


def report(result: Mapping[str, Any]) -> None:
    """The tables: per app and server, rivulet's causes of misses, the figures."""
    def cell(counts: Mapping[str, int] | None, info: Mapping[str, Any]) -> str:
        if counts is None:
            return str(info.get("status", "-"))
        ran = counts["tests"] - counts.get("skipped", 0)
        return f"{counts.get('passed', 0)}/{ran} ({counts.get('skipped', 0)} skipped)"

    rows = []
    for app in result["params"]["apps"]:
        per = result["per_app"].get(app, {})
        rows.append([app, *(cell(per.get(s), result["runs"][s].get(app, {})) for s in SYSTEMS),
                     *(f"{result['runs'][s].get(app, {}).get('seconds', '-')} s" for s in SYSTEMS)])
    print_table("Django's tests: passed / run (not skipped), per app",
                ["app", "mariadb", "rivulet", "mariadb time", "rivulet time"], rows)
    print_table("why rivulet misses tests MariaDB passes (first line of the error)",
                ["tests", "cause"],
                [[c["count"], c["cause"]]
                 for c in result["rivulet_failure_causes_of_mariadb_passed"]])
    print_table("figures (no goal)", ["figure", "value"],
                [[k, v["value"]] for k, v in result["targets"].items()])
    log(f"rivulet passes {result['rivulet_passed_of_mariadb_passed']} of the "
        f"{result['mariadb_passed']} tests MariaDB passes; "
        f"{result['rivulet_wrong_values_of_mariadb_passed_count']} wrong values")


if __name__ == "__main__":
    sys.exit(main())
