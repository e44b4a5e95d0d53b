"""``bench.django_suite``'s own checks, without a server or the network: what its test runner
writes for each kind of outcome, how it reads those lines back, gives a class's set-up error
to the tests it kept from running, compares the two servers, and finds Django's tests in the
sdist it cached."""

from __future__ import annotations

import io
import json
import tarfile
import unittest
from pathlib import Path

import pytest

from bench.django_suite import (
    NOT_COLLECTED,
    analyse,
    app_results,
    attribute_class_errors,
    django_tests,
    load_lines,
    pass_rate_percent,
    run_errors,
)
from bench.django_suite_runner import RESULTS_ENV, JSONLinesResult


class _ServerError(Exception):
    """As the MySQL drivers raise: ``args == (errno, message)``."""


class Outcomes(unittest.TestCase):
    __test__ = False  # run by the runner under test, not collected by pytest

    def test_passes(self) -> None:
        pass

    def test_fails(self) -> None:
        self.assertEqual(1, 2)

    def test_errs(self) -> None:
        raise _ServerError(1235, "unsupported expression: 'DEFAULT'")

    @unittest.skip("Database doesn't support feature(s): x")
    def test_skipped(self) -> None:
        pass

    def test_subtest_fails(self) -> None:
        for i in range(3):
            with self.subTest(i=i):
                self.assertLess(i, 1)

    @unittest.expectedFailure
    def test_expected_failure(self) -> None:
        self.fail("known")


class SetUpFails(unittest.TestCase):
    __test__ = False

    @classmethod
    def setUpClass(cls) -> None:
        raise _ServerError(1146, "table 'x' doesn't exist")

    def test_never_runs(self) -> None:
        pass


def _run_with_runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    lines = tmp_path / "out.jsonl"
    monkeypatch.setenv(RESULTS_ENV, str(lines))
    loader = unittest.TestLoader()
    suite = unittest.TestSuite([loader.loadTestsFromTestCase(Outcomes),
                                loader.loadTestsFromTestCase(SetUpFails)])
    runner = unittest.TextTestRunner(stream=io.StringIO(), resultclass=JSONLinesResult)
    runner.run(suite)
    return [json.loads(line) for line in lines.read_text().splitlines()]


def test_runner_writes_a_line_per_test_and_per_error_outside_a_test(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written = {entry["test"].split(" ")[0].rsplit(".", 1)[-1]: entry
               for entry in _run_with_runner(tmp_path, monkeypatch)}
    assert {name: entry["outcome"] for name, entry in written.items()} == {
        "test_passes": "passed", "test_fails": "failed", "test_errs": "error",
        "test_skipped": "skipped", "test_subtest_fails": "failed",
        "test_expected_failure": "expected_failure", "setUpClass": "error"}
    assert written["test_errs"]["message"] == \
        "(1235, \"unsupported expression: 'DEFAULT'\")"
    assert written["test_fails"]["message"].startswith("AssertionError: 1 != 2")
    assert written["test_subtest_fails"]["message"].startswith("AssertionError: 1 not less")
    assert written["test_skipped"]["message"] == "Database doesn't support feature(s): x"
    assert written["setUpClass"]["test"] == \
        f"setUpClass ({__name__}.SetUpFails)"
    assert written["setUpClass"]["message"] == "(1146, \"table 'x' doesn't exist\")"


def _lines(path: Path, *entries: tuple[str, str, str]) -> Path:
    path.write_text("".join(json.dumps({"test": t, "outcome": o, "message": m, "seconds": 0.1})
                            + "\n" for t, o, m in entries) + '{"test": "cut sho')
    return path


def test_lines_are_read_with_expected_failures_as_passes_and_a_cut_line_left_out(
        tmp_path: Path) -> None:
    read = load_lines(_lines(tmp_path / "a.jsonl", ("a.T.t1", "expected_failure", "x"),
                             ("a.T.t2", "unexpected_success", "an expected failure passed"),
                             ("a.T.t3", "passed", "")))
    assert read == {"a.T.t1": ("passed", ""),
                    "a.T.t2": ("failed", "an expected failure passed"),
                    "a.T.t3": ("passed", "")}
    assert load_lines(tmp_path / "missing.jsonl") == {}


def test_a_class_set_up_error_is_given_to_the_tests_it_kept_from_running() -> None:
    error = ("error", "(1235, \"unsupported FOREIGN KEY\")")
    rivulet = {"q.tests.A.test_1": ("passed", ""), "setUpClass (q.tests.B)": error,
               "setUpClass (q.tests.C)": error}
    mariadb = {"q.tests.A.test_1": ("passed", ""), "q.tests.B.test_1": ("passed", ""),
               "q.tests.B.test_2": ("skipped", "no"), "q.tests.BB.test_1": ("passed", "")}
    assert attribute_class_errors(rivulet, mariadb) == {
        "q.tests.A.test_1": ("passed", ""), "q.tests.B.test_1": error,
        "q.tests.B.test_2": error,
        "setUpClass (q.tests.C)": error}  # kept nothing of MariaDB's from running: as it is


def test_analysis_compares_the_apps_and_lists_wrong_values() -> None:
    unsupported = "(1235, \"unsupported expression: 'EXTRACT(MONTH FROM `t`.`d`)' (line 1, " \
        "column 9)\")"
    mariadb = {"basic": {"basic.T.t1": ("passed", ""), "basic.T.t2": ("passed", ""),
                         "basic.T.t3": ("passed", ""), "basic.T.t4": ("skipped", "mariadb"),
                         "basic.T.t5": ("passed", "")},
               "lookup": {"lookup.T.t1": ("passed", "")}}
    rivulet = {"basic": {"basic.T.t1": ("passed", ""), "basic.T.t2": ("error", unsupported),
                         "basic.T.t3": ("failed", "AssertionError: 3 != 4"),
                         "basic.T.t4": ("passed", "")},
               "lookup": {}}
    report = analyse(mariadb, rivulet, ["basic"])  # lookup was cut on rivulet: not compared
    assert report["mariadb"] == {"tests": 5, "passed": 4, "skipped": 1}
    assert report["rivulet"] == {"tests": 4, "passed": 2, "error": 1, "failed": 1}
    assert report["mariadb_pass_rate_percent"] == 100.0
    assert report["rivulet_pass_rate_percent"] == 50.0
    assert report["rivulet_passed_of_mariadb_passed"] == 1
    assert report["rivulet_passed_not_mariadb"] == ["basic.T.t4"]
    missed = {c["cause"]: c["count"] for c in report["rivulet_failure_causes_of_mariadb_passed"]}
    assert missed == {"(1235) unsupported expression: EXTRACT(MONTH FROM `c`.`c`)": 1,
                      "AssertionError (a wrong value)": 1, NOT_COLLECTED: 1}
    assert report["rivulet_wrong_values_of_mariadb_passed"] == [
        {"test": "basic.T.t3", "message": "AssertionError: 3 != 4"}]
    assert report["per_app"]["basic"]["rivulet"]["tests"] == 4
    assert "lookup" not in report["per_app"]


SETUP_FAILED = """\
Creating test database for alias 'default' ('test_rivulet_m2o')...
Got an error creating the test database: (1007, "Can't create database 'x'; database exists")
Destroying old test database for alias 'default' ('test_rivulet_m2o')...
Got an error recreating the test database: (1146, "unknown table 'x.t'")
"""
TEARDOWN_FAILED = """\
ERROR: test_a (q.tests.T.test_a)
Traceback (most recent call last):
django.db.utils.NotSupportedError: (1235, "unsupported X")
----------------------------------------------------------------------
Ran 2 tests in 1.5s

FAILED (errors=1)
Destroying test database for alias 'default' ('test_rivulet_q')...
Traceback (most recent call last):
MySQLdb.OperationalError: (2013, 'Lost connection to server during query')
django.db.utils.OperationalError: (2013, 'Lost connection to server during query')
"""


def test_run_errors_around_the_tests_are_told_apart() -> None:
    assert run_errors(SETUP_FAILED) == {"setup_error": "(1146, \"unknown table 'x.t'\")"}
    assert run_errors(TEARDOWN_FAILED) == {"teardown_error": (
        "django.db.utils.OperationalError: (2013, 'Lost connection to server during query')")}
    assert run_errors("Ran 2 tests in 0.1s\n\nOK\n") == {}


def test_an_app_stopped_before_its_tests_gives_its_error_to_the_tests_the_other_ran(
        tmp_path: Path) -> None:
    empty = tmp_path / "many_to_one.jsonl"
    empty.write_text("")
    stopped = app_results({"results": str(empty), "setup_error": "(1146, 'x')"})
    assert stopped == {"runtests (many_to_one)": ("error", "(1146, 'x')")}
    mariadb = {"many_to_one.tests.T.test_1": ("passed", "")}
    assert attribute_class_errors(stopped, mariadb) == {
        "many_to_one.tests.T.test_1": ("error", "(1146, 'x')")}


def test_pass_rate_is_over_the_tests_not_skipped() -> None:
    assert pass_rate_percent({"tests": 10, "passed": 6, "skipped": 2}) == 75.0
    assert pass_rate_percent({"tests": 2, "skipped": 2}) is None


def test_django_tests_come_from_the_cached_sdist(tmp_path: Path) -> None:
    archive = tmp_path / "django-9.9.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in (("django-9.9/tests/runtests.py", b"# runner\n"),
                           ("django-9.9/django/__init__.py", b"")):
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
    tests = django_tests("9.9", tmp_path)  # no download: the archive is there
    assert tests == tmp_path / "django-9.9" / "tests"
    assert (tests / "runtests.py").read_text() == "# runner\n"
    assert not (tmp_path / "django-9.9" / "django").exists()  # tests/ only
    archive.unlink()
    assert django_tests("9.9", tmp_path) == tests  # extracted once, found again
