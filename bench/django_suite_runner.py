"""The test runner ``bench.django_suite`` has Django's ``tests/runtests.py`` use: Django's own
runner, its results written as they happen, one JSON line per test.

A run can be cut at its time limit (``bench.django_suite`` kills the process), so nothing waits
for the end: each test's line is appended and flushed when the test stops. A line holds the
test's id, its outcome (``passed``, ``failed``, ``error``, ``skipped``, ``expected_failure``,
``unexpected_success``), a message and the seconds it took. A failure's message is the
server's error as the driver gives it (``(1235, "unsupported ...")``) where the exception is a
database error with a MySQL error code, else ``<exception class>: <text>``, what
:func:`bench.orm.cause` groups into causes. A test with failing subtests fails with its first
subtest's failure. An error outside any test (``setUpClass``: where ``setUpTestData`` runs,
``setUpModule``) gets a line of its own under unittest's description of it
(``setUpClass (module.Class)``): the tests of that class then have no line.

The file is named by the environment (:data:`RESULTS_ENV`), as the settings module's server is
(:mod:`bench.django_suite_settings`).
"""

from __future__ import annotations

import json
import os
import time
import unittest
from types import TracebackType
from typing import Any

from django.test.runner import DiscoverRunner

#: The environment variable naming the JSON-lines file the results are appended to.
RESULTS_ENV = "RIVULET_DJANGO_RESULTS"
MESSAGE_CHARS = 2000

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


def describe(err: ExcInfo) -> str:
    """A failure's message: a MySQL error as ``(code, "text")``, anything else with its class."""
    kind, value, _ = err
    args = getattr(value, "args", ())
    if args and isinstance(args[0], int) and len(args) == 2:  # the driver's (errno, message)
        text = str(value)
    else:
        text = f"{kind.__name__}: {value}"
    return text[:MESSAGE_CHARS]


class JSONLinesResult(unittest.TextTestResult):
    """Django's text output as usual, and one JSON line per test in :data:`RESULTS_ENV`'s file."""

    def __init__(self, stream: Any, descriptions: bool, verbosity: int,
                 **kwargs: Any) -> None:
        super().__init__(stream, descriptions, verbosity, **kwargs)
        self._lines = open(os.environ[RESULTS_ENV], "a")  # noqa: SIM115 (closed at the run's end)
        self._running: unittest.TestCase | None = None
        self._outcome: tuple[str, str] | None = None
        self._began = 0.0

    def startTest(self, test: unittest.TestCase) -> None:
        super().startTest(test)
        self._running, self._outcome, self._began = test, None, time.perf_counter()

    def stopTest(self, test: unittest.TestCase) -> None:
        super().stopTest(test)
        outcome, message = self._outcome or ("passed", "")
        self._write(test.id(), outcome, message, time.perf_counter() - self._began)
        self._running = None

    def stopTestRun(self) -> None:
        super().stopTestRun()
        self._lines.close()

    def _write(self, test_id: str, outcome: str, message: str, seconds: float) -> None:
        self._lines.write(json.dumps({"test": test_id, "outcome": outcome, "message": message,
                                      "seconds": round(seconds, 3)}) + "\n")
        self._lines.flush()

    def _record(self, test: unittest.TestCase, outcome: str, message: str = "") -> None:
        """The test's outcome, the first failure winning; outside a test, a line of its own."""
        if test is not self._running:  # setUpClass, setUpModule, tearDownClass: no test runs
            self._write(test.id(), outcome, message, 0.0)
        elif self._outcome is None or self._outcome[0] == "passed":
            self._outcome = (outcome, message)

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self._record(test, "passed")

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        super().addError(test, err)
        self._record(test, "error", describe(err))

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addFailure(test, err)
        self._record(test, "failed", describe(err))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self._record(test, "skipped", reason)

    def addExpectedFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addExpectedFailure(test, err)
        self._record(test, "expected_failure", describe(err))

    def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
        super().addUnexpectedSuccess(test)
        self._record(test, "unexpected_success", "an expected failure passed")

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase,
                   err: Any) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._record(test, "failed" if failed else "error", describe(err))


class JSONLinesRunner(DiscoverRunner):
    """Django's runner with :class:`JSONLinesResult` (the settings' ``TEST_RUNNER``)."""

    def get_resultclass(self) -> type[unittest.TextTestResult]:
        return JSONLinesResult
