"""SQLite's sqllogictest corpus run through rivulet's Python API, as the engine ``mysql``.

Every record rivulet runs must pass or be refused (a ``RivuletError`` naming what it does
not support: allowed, counted); a wrong answer or an internal error fails the test, unless
the record is in :data:`KNOWN_WRONG` with the finding it shows, and a record there that no
longer answers wrongly fails too, so the list is emptied as fixes land. Where the session's
MariaDB is at hand (MySQL's answers, ``tests/mysql_oracle.py``), the scripts run on it too,
and a query where rivulet gives the script's answer but MySQL another fails as a wrong
answer (a statement the script expects to fail and MySQL runs, such as a write through a
view, is a refusal if rivulet refuses it). The pass rates of rivulet, SQLite (the engine
the scripts' answers come from) and MariaDB on the same scripts are printed at the end of
the module. The harness itself
(reading scripts, rendering values, verdicts) is tested first, on scripts written here.

The corpus is read from a copy found by :func:`bench.sqllogictest.corpus.find_corpus`; the
corpus tests are skipped where there is none. The suite runs the first records of some
scripts (:data:`bench.sqllogictest.corpus.QUICK`); ``pytest --long`` runs the larger
selection whole.
"""

from __future__ import annotations

import itertools
import shutil
from decimal import Decimal
from typing import Any

import pytest

from bench.sqllogictest.corpus import LONG, QUICK, find_corpus
from bench.sqllogictest.engines import Engine, MariaDBEngine, RivuletEngine, SqliteEngine
from bench.sqllogictest.records import (
    Condition,
    Halt,
    Hashed,
    HashThreshold,
    Query,
    ScriptSyntaxError,
    Statement,
    parse,
)
from bench.sqllogictest.results import digest, render, rendered_values
from bench.sqllogictest.runner import Outcome, Tally, Verdict, run_script

#: Records rivulet answers wrongly (against the script, or with the script's answer where
#: MySQL gives another), ``script:line`` -> the finding (with a repro). Known, so they do
#: not fail the test; a record here that rivulet now answers right fails it.
KNOWN_WRONG: dict[str, str] = {}

# ............................................................................ the harness

SCRIPT = """\
# a comment line
statement ok
CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(10))

statement ok
INSERT INTO t VALUES (1, 10, 'x'), (2, 9, ''), (3, NULL, NULL)

hash-threshold 4

onlyif mysql # the MySQL spelling
query I rowsort label-1
SELECT a DIV 2 FROM t
----
4
5
NULL

skipif mysql
query IT nosort
SELECT a, s FROM t ORDER BY id
----
6 values hashing to 0123456789abcdef0123456789abcdef

statement error
INSERT INTO nowhere VALUES (1)

halt

query I
SELECT 1
"""


def test_parse_reads_each_kind_of_record() -> None:
    records = parse(SCRIPT, "inline.test")
    assert [type(r) for r in records] == [Statement, Statement, HashThreshold, Query, Query,
                                          Statement, Halt, Query]
    first, mysql_only, not_mysql = records[0], records[3], records[4]
    assert isinstance(first, Statement) and not first.expect_error and first.line == 2
    assert isinstance(mysql_only, Query) and mysql_only.conditions == (Condition(True, "mysql"),)
    assert (mysql_only.types, mysql_only.sort, mysql_only.label) == ("I", "rowsort", "label-1")
    assert mysql_only.sql == "SELECT a DIV 2 FROM t" and mysql_only.expected == ("4", "5", "NULL")
    assert isinstance(not_mysql, Query) and not_mysql.conditions == (Condition(False, "mysql"),)
    assert not_mysql.expected == Hashed(6, "0123456789abcdef0123456789abcdef")
    assert isinstance(records[5], Statement) and records[5].expect_error
    assert records[2] == HashThreshold(8, 4)


def test_parse_rejects_what_is_not_a_record() -> None:
    with pytest.raises(ScriptSyntaxError, match="inline.test:1"):
        parse("statement maybe\nSELECT 1\n", "inline.test")
    with pytest.raises(ScriptSyntaxError, match="type string"):
        parse("query IX\nSELECT 1, 2\n", "inline.test")


def test_values_render_as_the_reference_runner_prints_them() -> None:
    assert [render(v, "I") for v in (7, Decimal("-2.9"), 2.9, "12abc", "x", True)] == [
        "7", "-2", "2", "12", "0", "1"]
    assert [render(v, "R") for v in (1, Decimal("2.5"), 1 / 3, "1.5e1x")] == [
        "1.000", "2.500", "0.333", "15.000"]
    assert [render(v, "T") for v in ("abc", "", 5, Decimal("1.50"), "é\t")] == [
        "abc", "(empty)", "5", "1.50", "@@@"]
    assert {render(None, t) for t in "ITR"} == {"NULL"}


def test_sorting_compares_the_rendered_text() -> None:
    rows = [(9, "b"), (10, "a"), (None, "c")]
    assert rendered_values(rows, "IT", "rowsort") == ["10", "a", "9", "b", "NULL", "c"]
    assert rendered_values(rows, "IT", "valuesort") == ["10", "9", "NULL", "a", "b", "c"]
    assert rendered_values(rows, "IT", "nosort") == ["9", "b", "10", "a", "NULL", "c"]


def test_a_hash_is_the_md5_of_each_value_and_a_newline() -> None:
    import hashlib

    assert digest(["1", "a"]) == Hashed(2, hashlib.md5(b"1\na\n").hexdigest())
    assert digest([]) == Hashed(0, hashlib.md5(b"").hexdigest())


def _verdicts(outcomes: list[Outcome]) -> list[tuple[int, Verdict]]:
    return [(o.line, o.verdict) for o in outcomes]


def test_each_record_gets_a_verdict_on_rivulet() -> None:
    script = """\
statement ok
CREATE TABLE t (id INT PRIMARY KEY, a INT)

statement ok
INSERT INTO t VALUES (1, 7), (2, 8)

query I rowsort
SELECT a FROM t
----
7
8

query I rowsort
SELECT a FROM t
----
7
9

query II rowsort
SELECT a FROM t
----
7
8

query I nosort
SELECT a FROM t WHERE NOT EXISTS (SELECT 1 FROM t AS u WHERE u.a > t.a OR t.a IS NULL)
----
8

statement error
INSERT INTO t VALUES (1, 0)

statement error
INSERT INTO t VALUES (3, 0)
"""
    engine = RivuletEngine()
    try:
        outcomes = run_script(engine, "inline.test", parse(script, "inline.test"))
    finally:
        engine.close()
    assert _verdicts(outcomes) == [
        (1, Verdict.PASSED), (4, Verdict.PASSED), (7, Verdict.PASSED), (13, Verdict.WRONG),
        (19, Verdict.WRONG), (25, Verdict.REFUSED), (30, Verdict.PASSED), (33, Verdict.WRONG)]
    assert outcomes[5].category.startswith(
        "UnsupportedSqlError: unsupported NOT EXISTS subquery correlated other than by")
    assert "expected [7 9], got [7 8]" in outcomes[3].detail
    assert "1 columns; the script expects 2" in outcomes[4].detail


def test_a_refused_statement_that_builds_data_blocks_the_rest() -> None:
    script = """\
statement ok
CREATE TABLE t (id INT PRIMARY KEY, a INT)

statement ok
CREATE INDEX t_a ON t (a)

statement ok
CREATE TRIGGER t_r AFTER INSERT ON t FOR EACH ROW SET @n = 1

query I nosort
SELECT a FROM t
"""
    engine = RivuletEngine()
    try:
        outcomes = run_script(engine, "inline.test", parse(script, "inline.test"))
    finally:
        engine.close()
    assert [o.verdict for o in outcomes][2:] == [Verdict.REFUSED, Verdict.BLOCKED]
    assert outcomes[3].detail == "after inline.test:7 was refused"


def test_conditions_pick_each_engines_records() -> None:
    records = parse(SCRIPT, "inline.test")
    engine = SqliteEngine()
    try:
        outcomes = run_script(engine, "inline.test", records)
    finally:
        engine.close()
    # SQLite skips the MySQL record, runs the other, and stops at the halt.
    assert [o.line for o in outcomes] == [2, 5, 19, 24]
    assert outcomes[2].verdict is Verdict.WRONG  # the hash in SCRIPT is made up


# ............................................................................ the corpus

CORPUS = find_corpus()
_TALLIES: dict[str, dict[str, Tally]] = {}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "script" in metafunc.fixturenames:
        selection = ({path: None for path in LONG} if metafunc.config.getoption("--long")
                     else QUICK)
        metafunc.parametrize(("script", "records_run"), list(selection.items()),
                             ids=list(selection))


@pytest.fixture(scope="module")
def mysql_engines(request: pytest.FixtureRequest):
    """Makes an engine on a fresh schema of the session's MariaDB; None without mariadbd."""
    if shutil.which("mariadbd") is None:
        return None
    server = request.getfixturevalue("mariadb_oracle").server
    numbers = itertools.count()
    return lambda: MariaDBEngine(server.connect, f"slt{next(numbers)}")


@pytest.fixture(scope="module", autouse=True)
def pass_rates(request: pytest.FixtureRequest):
    """Prints the engines' pass rates on the scripts run, after the module."""
    yield
    if not _TALLIES:
        return
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin(
        "capturemanager")
    lines = ["", "sqllogictest pass rates (records passed / records run):"]
    totals: dict[str, Tally] = {}
    for script, tallies in _TALLIES.items():
        for name, tally in tallies.items():
            total = totals.setdefault(name, Tally())
            total.verdicts.update(tally.verdicts)
            total.refusals.update(tally.refusals)
        lines.append(f"  {script}: " + ", ".join(
            f"{name} {tally.pass_rate:.1%}" for name, tally in tallies.items()))
    for name, tally in totals.items():
        counts = ", ".join(f"{v.value} {tally.verdicts[v]}" for v in Verdict)
        lines.append(f"  all: {name} {tally.pass_rate:.1%} of {tally.records} ({counts})")
    lines.append("  rivulet's refusals by construct:")
    lines += [f"    {n:6d}  {c}" for c, n in totals["rivulet"].refusals.most_common(12)]
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # printed, not captured
            for line in lines:
                reporter.write_line(line)


def _tally(outcomes: list[Outcome]) -> Tally:
    tally = Tally()
    for outcome in outcomes:
        tally.add(outcome)
    return tally


def _run(engine: Engine, script: str, records: list[Any]) -> list[Outcome]:
    try:
        return run_script(engine, script, records)
    finally:
        engine.close()


def test_rivulet_answers_sqllogictest_scripts_right_or_refuses(
        script: str, records_run: int | None, mysql_engines: Any) -> None:
    if CORPUS is None:
        pytest.skip("no copy of the sqllogictest corpus (see bench/sqllogictest/corpus.py)")
    text = CORPUS.read(script)
    if text is None:
        pytest.skip(f"{script} is not in the copy of the corpus at {CORPUS.describe()}")
    records = parse(text, script)[:records_run]
    rivulet = _run(RivuletEngine(), script, records)
    outcomes = {"rivulet": rivulet, "sqlite": _run(SqliteEngine(), script, records)}
    if mysql_engines is not None:
        outcomes["mariadb"] = _run(mysql_engines(), script, records)
    _TALLIES[script] = {name: _tally(found) for name, found in outcomes.items()}

    failed = {o.where: f"{o.verdict.value}: {o.sql!r}: {o.detail}"
              for o in rivulet if o.verdict in (Verdict.WRONG, Verdict.ERROR)}
    mysql_wrong = {o.line: o for o in outcomes.get("mariadb", ())
                   if o.verdict is Verdict.WRONG and o.kind == "query"}
    failed |= {o.where: f"the script's answer, MySQL's is another: {o.sql!r}: "
                        f"MariaDB {mysql_wrong[o.line].detail}"
               for o in rivulet if o.verdict is Verdict.PASSED and o.line in mysql_wrong}
    unexpected = [f"{where} {why}" for where, why in failed.items() if where not in KNOWN_WRONG]
    now_right = sorted(w for w in KNOWN_WRONG if w.startswith(f"{script}:") and w not in failed)
    assert not unexpected, "\n".join(unexpected)
    assert not now_right, f"known-wrong records that now pass (take them out): {now_right}"
