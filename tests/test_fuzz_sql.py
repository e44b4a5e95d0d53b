"""Fuzzing the SQL front end (bench/reliability_fuzz.py has the generators and checks):
syntactically valid SQL around one unsupported construct, SQL token soup and random text.
Every statement runs or raises a RivuletError naming the construct, never an internal
exception, and a statement that fails changes nothing (state digest before and after).
Here too: calls of any function name with any number of arguments, and clauses at the
edges of MySQL's grammar (LIMIT, OFFSET, ORDER BY, IN, quoting, comments), whose errors
are rivulet's own words: never the parser's classes or tokens, nor a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from bench.reliability_fuzz import (
    check_sql,
    digest,
    listed_refusals,
    make_database,
    sql_inputs,
    unsupported_sql,
)
from rivulet.errors import RivuletError
from rivulet.sql.syntax import MYSQL_FUNCTION_NAMES
from rivulet.values.registry import SCALAR_FUNCTIONS

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


@pytest.mark.parametrize("example", [
    *listed_refusals(),
    *listed_refusals(base="SELECT s FROM t WHERE id = ?", col="id", fn="LAG(a)",
                     unknown="@x := 1", invented="fn_hij"),
], ids=lambda example: example[0])
def test_every_listed_refusal_is_refused_by_name(db: rivulet.Database, example) -> None:
    """Each construct the fuzzer lists as refused, sent once (the property above draws a
    few dozen and may miss one): a construct rivulet has learnt fails here, in the commit
    that taught it, rather than as a failure of the benchmark's fuzzer later."""
    for how in ("execute", "script"):
        check_sql(db, *example, how=how)


@FIXTURE
@given(example=sql_inputs(), how=HOWS)
def test_any_sql_runs_or_fails_cleanly(db: rivulet.Database, example, how) -> None:
    check_sql(db, *example, how=how)


@pytest.mark.parametrize("sql, words", [
    ("UPDATE t JOIN u ON t.id = u.t_id SET t.a = 99 LIMIT 1", "several tables and ORDER BY"),
    ("SELECT a, COUNT(*) FROM t GROUP BY a WITH ROLLUP", "ROLLUP"),
    ("SELECT DISTINCT ON (a) id FROM t", "DISTINCT ON"),
    ("SELECT id FROM t FOR UPDATE SKIP LOCKED", "SKIP LOCKED"),
    ("SELECT id, (SELECT b FROM u) FROM t", "scalar subquery that may return more than one"),
    ("CREATE TEMPORARY TABLE z (id INT)", "TEMPORARY"),
    ("SELECT id FROM t WHERE " + "(" * 40 + "a" + ")" * 40 + " = 1", "parentheses nested"),
    ("SELECT id FROM t WHERE a = " + " + ".join(["1"] * 250), "nested more than"),
])
def test_regressions(db: rivulet.Database, sql: str, words: str) -> None:
    """Statements that used to run wrongly (multi-table UPDATE/DELETE changed every row of
    the first table: tests/test_multi_table_writes.py has them now; ROLLUP and DISTINCT ON
    were ignored) or crash (RecursionError, a
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


# --------------------------------------------------------------------------- rivulet's words

#: What an error message must never show: the parser's classes and tokens, a traceback.
INTERNALS = ("<class", "Token", "sqlglot", "Traceback", "NoneType", "Step '")

#: Function names: rivulet's, MySQL's, other dialects' that sqlglot knows, and invented.
#: (Aggregates are left to the fuzzers of aggregation.)
_NAMES = sorted(SCALAR_FUNCTIONS) + sorted(MYSQL_FUNCTION_NAMES - {"SUM", "AVG", "MIN", "MAX",
                                                                    "COUNT"})[:400:7] + [
    "NVL", "STRPOS", "DATE_TRUNC", "IIF", "LEN", "TO_CHAR", "VAR_MAP", "J_S_O_N_OBJECT",
    "TS_OR_DS_TO_DATE", "CONVERT_TIMEZONE", "ARG_MAX", "STRING_AGG", "TRY_CAST", "fn_x"]
_ARGS = ["a", "s", "id", "1", "-1", "1.5", "1e3", "'x'", "'2020-01-01'", "'+01:00'", "NULL",
         "*", "DISTINCT a", "a AS SIGNED", "s FROM 1", "s USING utf8mb4", "(a)", "a + 1",
         "(SELECT 1)", "INTERVAL 1 DAY", "?", ""]
_TAILS = ["", " LIMIT 1", " LIMIT 1, 2", " LIMIT 2 OFFSET 1", " LIMIT -1", " LIMIT 'a'",
          " LIMIT a", " LIMIT ALL", " OFFSET 1", " ORDER BY 1", " ORDER BY a DESC NULLS LAST",
          " GROUP BY a", " WHERE a IN ()", " WHERE a = ?", " WHERE a IS DISTINCT FROM 1",
          " WHERE s ILIKE 'x'", " WHERE a == 1", " WHERE a::INT = 1", " FETCH FIRST 1 ROWS ONLY",
          " WHERE a = /*! 1 + */ 1", " -- comment", " WHERE \"s\" = 'x'", " AS \"x\"",
          " WHERE a = ANY (1, 2)", " WHERE (a, id) = (1, 2)", " HAVING a > 1"]


@st.composite
def function_calls(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(_NAMES))
    args = ", ".join(draw(st.lists(st.sampled_from(_ARGS), max_size=4)))
    return f"SELECT {name}({args}) FROM t" + draw(st.sampled_from(_TAILS))


@st.composite
def clause_edges(draw: st.DrawFn) -> str:
    tails = draw(st.lists(st.sampled_from(_TAILS), min_size=1, max_size=3))
    return draw(st.sampled_from(["SELECT id FROM t", "SELECT a, COUNT(*) FROM t",
                                 "DELETE FROM t", "UPDATE t SET a = 1"])) + "".join(tails)


def run_how(db: rivulet.Database, sql: str, how: str) -> None:
    if how == "query":
        db.query(sql)
    elif how == "create_view":
        try:
            db.create_view("fuzz_v", sql)
        finally:
            db.drop_view("fuzz_v", if_exists=True)
    elif how == "script":
        db.execute_script(sql)
    else:
        db.execute(sql, [1] if how == "execute with a value" else [])


@FIXTURE
@given(sql=st.one_of(function_calls(), clause_edges(), sql_inputs().map(lambda e: e[1])),
       how=st.sampled_from(["execute", "execute with a value", "query", "create_view",
                            "script"]))
def test_errors_are_rivulet_errors_in_rivulets_words(db: rivulet.Database, sql: str,
                                                     how: str) -> None:
    """Whatever the statement, it runs or raises a RivuletError whose message shows none
    of the parser's internals (an internal exception fails the test as it is raised), and
    a statement that fails changes nothing."""
    before = digest(db)
    try:
        run_how(db, sql, how)
    except RivuletError as exc:
        leaked = [word for word in INTERNALS if word in str(exc)]
        assert not leaked, f"{sql!r} ({how}): {type(exc).__name__}: {exc}"
        assert digest(db) == before, f"{sql!r} failed ({exc}) but changed the database"
