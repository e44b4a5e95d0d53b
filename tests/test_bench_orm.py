"""``bench.orm``'s own checks: how it reads the suite's junit files, pairs MariaDB's tests with
rivulet's, and groups rivulet's failures into causes (the list the lead works down)."""

from __future__ import annotations

from pathlib import Path

from bench.orm import NOT_COLLECTED, cause, compare, load_junit, write_harness

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="test_suite.ExistsTest_{db}" name="test_select_exists"/>
<testcase classname="test_suite.ExistsTest_{db}" name="test_select_exists_false">
  {exists_false}</testcase>
<testcase classname="test_suite.TableDDLTest_{db}" name="test_create_table">
  {create_table}</testcase>
<testcase classname="test_suite.TableDDLTest_{db}" name="test_drop_table">
  <error message="failed on teardown with &quot;boom&quot;">trace</error></testcase>
{extra}
</testsuite></testsuites>
"""


def junit(tmp_path: Path, name: str, db: str, exists_false: str = "", create_table: str = "",
          extra: str = "") -> Path:
    path = tmp_path / f"{name}.xml"
    path.write_text(JUNIT.format(db=db, exists_false=exists_false, create_table=create_table,
                                 extra=extra))
    return path


def test_junit_outcomes_are_read_under_one_name_for_both_dialects(tmp_path: Path) -> None:
    mariadb = load_junit(junit(tmp_path, "m", "mariadb+pymysql_10_11_19", extra=(
        '<testcase classname="test_suite.HasSequenceTest_mariadb+pymysql_10_11_19" '
        'name="test_has_sequence"/>')))
    rivulet = load_junit(junit(
        tmp_path, "r", "mysql+pymysql_8_0_36_0_1_0",
        exists_false='<failure message="sqlalchemy.exc.NotSupportedError: (pymysql.err.'
        'NotSupportedError) (1235, &quot;unsupported EXISTS subquery: \'EXISTS(SELECT\' '
        '(line 1, column 8)&quot;)">trace</failure>',
        create_table='<skipped message="\'test_suite.py::TableDDLTest (call)\' : mysql '
        'doesn\'t support \'X\'">skip</skipped>'))
    assert set(mariadb) - set(rivulet) == {"test_suite.HasSequenceTest::test_has_sequence"}
    assert rivulet["test_suite.ExistsTest::test_select_exists"] == ("passed", "")
    assert rivulet["test_suite.TableDDLTest::test_drop_table"][0] == "teardown_error"
    assert rivulet["test_suite.TableDDLTest::test_create_table"][0] == "skipped"

    report = compare(mariadb, rivulet)
    assert report["mariadb_passed"] == 4 and report["rivulet_passed"] == 1
    assert report["rivulet_passed_of_mariadb_passed"] == 1
    # the sequence test is not collected for MySQL 8 and the DDL test skipped: not comparable
    assert report["mariadb_passed_run_for_mysql"] == 2
    assert report["rivulet_outcome_of_mariadb_passed"] == {
        "passed": 1, "failed": 1, "skipped": 1, NOT_COLLECTED: 1}
    missed = {c["cause"]: c["count"] for c in report["rivulet_failure_causes_of_mariadb_passed"]}
    assert missed == {"(1235) unsupported EXISTS subquery": 1, NOT_COLLECTED: 1,
                      "skipped: mysql doesn't support 'X'": 1}
    causes = {c["cause"] for c in report["rivulet_failure_causes"]}
    assert causes == {"(1235) unsupported EXISTS subquery", "boom"}


def test_causes_name_the_construct_and_abstract_names_and_literals() -> None:
    prefix = "sqlalchemy.exc.NotSupportedError: (pymysql.err.NotSupportedError) "
    assert cause(prefix + "(1235, \"unsupported expression: 'bitwise.a ^ 5' (line 1, column "
                 "60)\")\n[SQL: SELECT ...]") == "(1235) unsupported expression: c ^ N"
    assert cause(prefix + "(1235, 'unsupported expression: \"x\\'37e79f\\'\" (line 1, column "
                 "63)')") == "(1235) unsupported expression: X'…'"
    assert cause(prefix + "(1235, \"unsupported expression: '(some_table.x, some_table.z)' "
                 "(line 1, column 56)\")") == "(1235) unsupported expression: (c, c)"
    assert cause(prefix + "(1235, \"unsupported expression: 'DEFAULT'\")") \
        == "(1235) unsupported expression: DEFAULT"
    assert cause('failed on setup with "' + prefix + "(1235, \"unsupported FOREIGN KEY to a "
                 "table of another database: 'CONSTRAINT ...' (line 10, column 22)\")") \
        == "(1235) unsupported FOREIGN KEY to a table of another database"
    assert cause("sqlalchemy.exc.IntegrityError: (pymysql.err.IntegrityError) (1062, "
                 "\"duplicate primary key (1,) in table 'some_table'\")") \
        == '(1062, "duplicate primary key ... in table <T>")'


def test_harness_closes_requirements_for_both_servers(tmp_path: Path) -> None:
    write_harness(tmp_path / "plain")
    assert "bench.orm_requirements:MySQLRequirements" in (tmp_path / "plain/setup.cfg").read_text()
    write_harness(tmp_path / "closed", ["schemas"])
    assert "closed_requirements:ClosedRequirements" in (tmp_path / "closed/setup.cfg").read_text()
    namespace: dict[str, object] = {}
    exec((tmp_path / "closed/closed_requirements.py").read_text(), namespace)
    requirements = namespace["ClosedRequirements"]()  # type: ignore[operator]
    assert not requirements.schemas.enabled and requirements.views.enabled
