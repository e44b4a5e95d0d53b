"""The fuzzers' oracle checks (bench/reliability_oracle.py, through the fronts of
bench/oracle_fronts.py): what rivulet accepts is run on MariaDB too and compared, so a
wrong answer, a wrong type or scale, a wrong count of affected rows or a refusal that
changed data is found, and every check is counted.

A fake front (rivulet behind a wrapper that answers wrong) must be caught; the real one,
over the generated SQL of bench/oracle_sql.py with its avoided shapes, must not."""

from __future__ import annotations

import decimal
import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pymysql.constants import CLIENT

import rivulet
from bench import oracle_sql as q
from bench import reliability_oracle
from bench.mysql_oracle import MariaDBOracle, mysql_mismatch
from bench.oracle_fronts import EmbeddedFront, Front, Refused, embedded_front, http_value
from bench.reliability_fuzz import check_sql, make_database, mirror_of_fuzz_database
from bench.reliability_oracle import (
    Checker,
    Mirror,
    OracleRefused,
    OracleSession,
    RowWrite,
    Tally,
    action,
    run_oracle_fuzz,
    schema_of,
)


@pytest.fixture
def schema(tmp_path: Path) -> q.Schema:
    db = rivulet.open(tmp_path / "probe")
    try:
        return schema_of(db, q.AVOIDED)
    finally:
        db.close()


@pytest.fixture
def mirror(mariadb_oracle: MariaDBOracle) -> Iterator[Mirror]:
    m = Mirror(mariadb_oracle.schema(client_flag=CLIENT.MULTI_STATEMENTS))
    yield m
    m.conn.close()


@pytest.fixture
def fuzz_database(tmp_path: Path, mariadb_oracle: MariaDBOracle
                  ) -> Iterator[tuple[rivulet.Database, Mirror]]:
    """The SQL fuzzer's database and its MariaDB mirror, as bench.reliability_fuzz makes
    them."""
    db = make_database(tmp_path / "db")
    try:
        mirror = mirror_of_fuzz_database(mariadb_oracle)
        try:
            yield db, mirror
        finally:
            mirror.conn.close()
    finally:
        db.close()


def run_session(tmp_path: Path, mirror: Mirror, schema: q.Schema,
                make_front: Callable[[rivulet.Database], tuple[Front, Callable[[], None]]],
                inputs: int, seed: int = 26) -> Tally:
    """``inputs`` generated inputs (from fixed seeds) through ``make_front``'s front."""
    tally = Tally()
    session = OracleSession(tmp_path / "session", mirror, schema, tally, make_front,
                            seed=seed, episode=40)
    try:
        for n in range(inputs):
            session.step(action(q.Gen(random.Random(seed * 1000 + n), schema), lookups=10))
    finally:
        session.close()
    return tally


# --------------------------------------------------------------------------- fake fronts


class ExtraRow(EmbeddedFront):
    """Answers every non-empty SELECT with its first row twice."""

    name = "extra row"

    def query(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        rows = super().query(sql, params)
        return rows + rows[:1]

    def lookup(self, name: str, sql: str, params: Sequence[Any]) -> list[tuple]:
        rows = super().lookup(name, sql, params)
        return rows + rows[:1]


class WrongScale(EmbeddedFront):
    """Answers every DECIMAL with one more place (1.25 as 1.250: equal, but not MySQL's)."""

    name = "wrong scale"

    def query(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        return [tuple(v.quantize(decimal.Decimal(1).scaleb(v.as_tuple().exponent - 1))
                      if isinstance(v, decimal.Decimal) and v.is_finite() else v for v in row)
                for row in super().query(sql, params)]


class CountsOneMore(EmbeddedFront):
    """Says every write changed one row more than it did."""

    name = "counts one more"

    def write(self, sql: str, params: Sequence[Any]) -> int:
        return super().write(sql, params) + 1


class RefusesAfterWriting(EmbeddedFront):
    """Runs every write, then says it refused it."""

    name = "refuses after writing"

    def write(self, sql: str, params: Sequence[Any]) -> int:
        super().write(sql, params)
        raise Refused("refused (but written)")


def fake(cls: type[EmbeddedFront]) -> Callable[[rivulet.Database],
                                               tuple[Front, Callable[[], None]]]:
    return lambda db: (cls(db), lambda: None)


# --------------------------------------------------------------------------- the checks


def test_a_correct_database_passes_and_every_check_is_counted(
        tmp_path: Path, mirror: Mirror, schema: q.Schema) -> None:
    tally = run_session(tmp_path, mirror, schema, embedded_front, inputs=60)
    assert tally.mismatched["embedded"] == 0 and tally.failed["embedded"] == 0, tally.examples
    # Lookups of views count one each: more checks than inputs.
    assert tally.checked["embedded"] > 60
    assert tally.as_dict()["checked_against_oracle"] == tally.checked["embedded"]


@pytest.mark.parametrize("front", [ExtraRow, WrongScale])
def test_a_wrong_answer_is_found_with_a_repro(tmp_path: Path, mirror: Mirror,
                                              schema: q.Schema, front: type) -> None:
    tally = run_session(tmp_path, mirror, schema, fake(front), inputs=40)
    assert tally.mismatched[front.name] > 0
    example = tally.examples[0]
    assert "disagree" in example["report"]
    assert "CREATE TABLE r" in example["repro"] and "INSERT INTO r" in example["repro"]


def test_a_wrong_count_of_affected_rows_is_found(tmp_path: Path, mirror: Mirror,
                                                 schema: q.Schema) -> None:
    tally = run_session(tmp_path, mirror, schema, fake(CountsOneMore), inputs=40)
    assert tally.mismatched["counts one more"] > 0
    assert any("rows affected" in e["report"] for e in tally.examples)


def test_a_refusal_that_changed_data_is_found(tmp_path: Path, mirror: Mirror,
                                              schema: q.Schema) -> None:
    tally = run_session(tmp_path, mirror, schema, fake(RefusesAfterWriting), inputs=40)
    assert tally.refused["refuses after writing"] > 0
    assert tally.mismatched["refuses after writing"] > 0
    assert any("refused" in e["report"] for e in tally.examples)


def test_a_refusal_that_changed_nothing_is_counted_not_a_mismatch(
        tmp_path: Path, mirror: Mirror) -> None:
    db = rivulet.open(tmp_path / "db")
    try:
        db.execute("CREATE TABLE k (id INT PRIMARY KEY, d DECIMAL(4,2))")
        mirror.load({"k": ("CREATE TABLE k (id INT PRIMARY KEY, d DECIMAL(4,2))",
                           [(1, decimal.Decimal("1.50"))])})
        db.table("k").insert_many([(1, decimal.Decimal("1.50"))])
        tally = Tally()
        checker = Checker(db, mirror, tally, EmbeddedFront(db))
        # Too big for DECIMAL(4,2): both refuse; a duplicate key: both refuse.
        assert checker.write("INSERT INTO k VALUES (2, 123.45)", (), "k") == "refused"
        assert checker.row_write(RowWrite("insert", "k", ((1, decimal.Decimal(2)),))) == \
            "refused"
        assert checker.write("UPDATE k SET d = d + 1", (), "k") == "checked"
        checker.read("SELECT d, d * 2 FROM k")
        assert tally.refused["embedded"] == tally.refused_by_both["embedded"] == 2
        assert tally.checked["embedded"] == 2 and not tally.mismatched
    finally:
        db.close()


def test_the_fuzz_databases_mirror_reads_a_view_with_parameters_as_a_table(
        fuzz_database: tuple[rivulet.Database, Mirror]) -> None:
    """The SQL fuzzer's database and its MariaDB mirror agree on a read of ``by_id`` (a
    view with a parameter, read by name as a table): the full run counted one as MySQL
    rejecting it (1146) when the mirror had no such view."""
    db, mirror = fuzz_database
    tally = Tally()
    checker = Checker(db, mirror, tally, EmbeddedFront(db))
    checker.name = "sql fuzzer"
    check_sql(db, "read", "SELECT id, a, s FROM by_id WHERE id = 1", None, how="query",
              checker=checker)
    check_sql(db, "read", "SELECT COUNT(*) FROM by_id WHERE a > 1", None, how="query",
              checker=checker)
    assert tally.checked["sql fuzzer"] == 2 and not tally.mismatched, tally.examples


def test_an_http_write_of_no_rows_is_checked_not_crashed(
        fuzz_database: tuple[rivulet.Database, Mirror]) -> None:
    """``POST /tables/t/rows`` with ``[]`` inserts nothing: the oracle checks that the table
    is as MariaDB's (a full bench.reliability run's HTTP fuzzer drew it and the checker
    itself failed with an IndexError, losing the whole fuzz phase)."""
    import httpx

    from bench.oracle_fronts import HttpFront
    from bench.reliability_fuzz import check_http
    from rivulet.server.http.app import make_app
    from rivulet.server.http.serve import serve_http

    db, mirror = fuzz_database
    http = serve_http(make_app(db), port=0)
    try:
        tally = Tally()
        checker = Checker(db, mirror, tally, HttpFront(http.url, db))
        checker.name = "http fuzzer"
        with httpx.Client(base_url=http.url, timeout=30) as client:
            check_http(client, db, "POST", "/tables/T/rows", {"params": {}, "json": []},
                       checker=checker)
        assert tally.checked["http fuzzer"] == 1 and not tally.mismatched, tally.examples
    finally:
        http.stop()


def test_a_listed_refusal_that_runs_is_checked_against_the_oracle_not_failed(
        fuzz_database: tuple[rivulet.Database, Mirror]) -> None:
    """Where the SQL fuzzer's list of refused constructs is behind rivulet (a full run
    failed 6 inputs for a view with a CTE, which rivulet answers since), a listed
    statement that runs is, with an oracle at hand, an accepted input checked like any
    other and counted by construct; the view it made is dropped on both sides, so the
    same statement drawn again runs again (rather than fail as 'exists')."""
    db, mirror = fuzz_database
    tally = Tally()
    checker = Checker(db, mirror, tally, EmbeddedFront(db))
    checker.name = "sql fuzzer"
    cte = "WITH c AS (SELECT a, s, id FROM t WHERE s LIKE 's%') SELECT * FROM c"
    for _ in range(2):
        check_sql(db, "view with CTE", f"CREATE VIEW vc AS {cte}",
                  ["subquery", "parameter"], checker=checker)
    check_sql(db, "CTE", f"{cte} WHERE a > 2", ["with"], how="query", checker=checker)
    assert tally.listed_but_answered == {"view with CTE": 2, "CTE": 1}
    assert tally.checked["sql fuzzer"] == 1, tally.as_dict()
    assert not tally.mismatched and not tally.failed, tally.examples
    assert "vc" not in db.views() and not mirror.query("SHOW FULL TABLES LIKE 'vc'")


def test_a_repro_too_long_for_the_result_is_kept_whole(tmp_path: Path, monkeypatch) -> None:
    """An example's repro is cut in the result (its head and tail), and kept whole in a
    file the example names: the full run's mismatch depended on the history cut out."""
    monkeypatch.setattr(reliability_oracle, "REPRO_DIR", tmp_path)
    tally = Tally()
    repro = "CREATE TABLE r (id INT);\n" + "UPDATE r SET id = id;\n" * 2000 + "SELECT 'é😀';"
    tally.mismatch("embedded", "rivulet and MariaDB disagree", repro)
    example = tally.examples[0]
    assert len(example["repro"]) < len(repro) and "characters cut" in example["repro"]
    assert Path(example["whole_repro"]).read_text(encoding="utf-8") == repro
    tally.mismatch("mysql", "rivulet and MariaDB disagree", "SELECT 1;")
    assert "whole_repro" not in tally.examples[1]


def test_a_condition_on_mariadbs_negative_zero_quotient_is_set_aside(
        tmp_path: Path, mirror: Mirror) -> None:
    """``1 / -2147483648`` is -0.0000 in MariaDB, unequal to 0 in its IN; MySQL's division
    makes it a plain zero, as rivulet's does. A read that differs only by that is set
    aside under the avoided shape (the full run's embedded mismatch), and is a mismatch
    when the shape is not avoided."""
    db = rivulet.open(tmp_path / "db")
    try:
        db.execute("CREATE TABLE z (id INT PRIMARY KEY, n INT)")
        rows = [(1, -2147483648), (2, 2), (3, -3)]
        mirror.load({"z": ("CREATE TABLE z (id INT PRIMARY KEY, n INT)", rows)})
        db.table("z").insert_many(rows)
        sql = "SELECT id FROM z WHERE (1 / n) NOT IN (0.5, 0.00)"
        assert sorted(mirror.query(sql)) == [(1,), (3,)]  # MariaDB's negative zero
        tally = Tally()
        Checker(db, mirror, tally, EmbeddedFront(db)).read(sql)
        assert tally.avoided["a negative zero DECIMAL"] == 1 and not tally.mismatched
        strict = Tally()
        Checker(db, mirror, strict, EmbeddedFront(db), frozenset()).read(sql)
        assert sum(strict.mismatched.values()) == 1
    finally:
        db.close()


def test_decimals_are_compared_exactly_and_with_their_scale() -> None:
    big = decimal.Decimal("12345678901234567.89")
    assert mysql_mismatch("SELECT d FROM k", (), [(big,)], [(big,)]) is None
    # Within a relative 1e-9 (as floats would be), but not the same DECIMAL:
    assert mysql_mismatch("SELECT d FROM k", (), [(big + decimal.Decimal("0.01"),)],
                          [(big,)]) is not None
    assert mysql_mismatch("SELECT d FROM k", (), [(decimal.Decimal("1.5"),)],
                          [(decimal.Decimal("1.50"),)]) is not None
    # Floats within the tolerance are the same answer.
    assert mysql_mismatch("SELECT f FROM k", (), [(0.1 + 0.2,)], [(0.3,)]) is None


def test_a_batch_with_an_error_in_the_middle_is_answered_in_order(mirror: Mirror) -> None:
    answers = mirror.query_many(["SELECT 1", "SELECT nowhere FROM nothing", "SELECT 3"])
    assert answers[0] == [(1,)] and answers[2] == [(3,)]
    assert isinstance(answers[1], OracleRefused)


def test_http_answers_are_compared_as_the_api_encodes_them() -> None:
    # docs/http.md: DECIMAL as its exact string, dates in ISO 8601, binary as base64.
    import datetime as dt

    assert http_value(decimal.Decimal("1.50")) == "1.50"
    assert http_value(dt.datetime(2021, 2, 3, 4, 5, 6)) == "2021-02-03T04:05:06"
    assert http_value(dt.date(2020, 2, 29)) == "2020-02-29"
    assert http_value(b"\x00\xff") == "AP8="
    assert http_value(float("nan")) is None and http_value(7) == 7


def test_a_short_run_checks_every_front(mariadb_oracle: MariaDBOracle) -> None:
    tally = Tally()
    out = run_oracle_fuzz(mariadb_oracle, {"embedded": 3, "mysql": 3, "http": 3}, tally=tally,
                          lookups=10)
    assert set(out["inputs"]) == {"embedded", "mysql", "http"}
    for front in ("embedded", "mysql", "http"):
        assert tally.checked[front] > 0, front
    summary = tally.as_dict()
    assert summary["checked_against_oracle"] == sum(tally.checked.values())
    assert summary["mismatches"] == 0 and summary["failures"] == 0, summary["examples"]


def test_every_avoided_shape_is_one_the_generator_knows() -> None:
    assert q.AVOIDED <= q.SHAPES and q.UNDECIDABLE <= q.SHAPES
    # Allowing a shape lets the generator produce it (the set can be emptied).
    everything = q.Shapes(frozenset())
    assert everything.allows("mixed string/number comparison")
    assert not everything.allows("an integer beyond 2**53 compared with a DOUBLE")


def test_a_run_stops_once_its_goal_is_checked(mariadb_oracle: MariaDBOracle) -> None:
    tally = Tally()
    out = run_oracle_fuzz(mariadb_oracle, {"embedded": 120}, goals={"embedded": 30},
                          tally=tally, lookups=10)
    assert tally.checked["embedded"] >= 30
    assert out["seconds"]["embedded"] < 120
