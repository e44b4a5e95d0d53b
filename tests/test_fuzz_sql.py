"""Fuzzing the SQL front end (bench/reliability_fuzz.py has the generators and checks):
syntactically valid SQL around one unsupported construct, SQL token soup and random text.
Every statement runs or raises a RivuletError naming the construct, never an internal
exception, and a statement that fails changes nothing (state digest before and after)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from bench.reliability_fuzz import check_sql, digest, make_database, sql_inputs, unsupported_sql

HOWS = st.sampled_from(["execute", "query", "create_view", "script"])
FIXTURE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[rivulet.Database]:
    database = make_database(tmp_path_factory.mktemp("fuzz") / "db")
    yield database
    database.close()


@FIXTURE
@given(example=unsupported_sql(), how=HOWS)
def test_unsupported_sql_is_named_and_changes_nothing(db: rivulet.Database, example, how) -> None:
    check_sql(db, *example, how=how)


@FIXTURE
@given(example=sql_inputs(), how=HOWS)
def test_any_sql_runs_or_fails_cleanly(db: rivulet.Database, example, how) -> None:
    check_sql(db, *example, how=how)


@pytest.mark.parametrize("sql, words", [
    ("UPDATE t JOIN u ON t.id = u.t_id SET t.a = 99", "several tables"),
    ("UPDATE t, u SET t.a = 99 WHERE t.id = u.t_id", "several tables"),
    ("DELETE t FROM t JOIN u ON t.id = u.t_id", "several tables"),
    ("SELECT a, COUNT(*) FROM t GROUP BY a WITH ROLLUP", "ROLLUP"),
    ("SELECT DISTINCT ON (a) id FROM t", "DISTINCT ON"),
    ("SELECT id FROM t FOR UPDATE", "locking read"),
    ("SELECT id, (SELECT MAX(b) FROM u) FROM t", "subquery in the select list"),
    ("CREATE TEMPORARY TABLE z (id INT)", "TEMPORARY"),
    ("SELECT id FROM t WHERE " + "(" * 40 + "a" + ")" * 40 + " = 1", "parentheses nested"),
    ("SELECT id FROM t WHERE a = " + " + ".join(["1"] * 250), "nested more than"),
])
def test_regressions(db: rivulet.Database, sql: str, words: str) -> None:
    """Statements that used to run wrongly (multi-table UPDATE/DELETE changed every row of
    the first table; ROLLUP and DISTINCT ON were ignored) or crash (RecursionError, a
    Python SyntaxError from compiled expressions, a misleading unknown-column error)."""
    before = digest(db)
    with pytest.raises(rivulet.SqlError, match=words):
        db.execute(sql)
    assert digest(db) == before


def test_nesting_within_the_limits_still_works(db: rivulet.Database) -> None:
    nested = db.execute("SELECT id FROM t WHERE " + "(" * 20 + "a" + ")" * 20 + " = 1")
    assert sorted(nested) == [(1,), (6,), (11,), (16,)]
    chained = db.execute("SELECT id FROM t WHERE id = " + " + ".join(["1"] * 40))
    assert chained == []
    assert db.execute("SELECT id FROM t WHERE id = " + " + ".join(["1"] * 20)) == [(20,)]


def test_random_bytes_over_the_script_splitter(db: rivulet.Database) -> None:
    @FIXTURE
    @given(st.binary(max_size=300))
    def run(data: bytes) -> None:
        check_sql(db, "bytes", data.decode("utf-8", "surrogateescape"), None, how="script")

    run()


def test_fuzz_helper_reports_a_statement_that_ran(tmp_path: Path) -> None:
    """The checker itself fails when an 'unsupported' statement runs (so the property above
    can fail)."""
    database = make_database(tmp_path / "db")
    try:
        with pytest.raises(AssertionError, match="ran"):
            check_sql(database, "supported", "SELECT id FROM t WHERE a = 1", ["x"])
    finally:
        database.close()
