"""Fuzzing writes (bench/reliability_fuzz.py has the generators and checks): batches with
wrong types, huge numbers and strings, NULL into NOT NULL and unicode edge cases (NUL,
lone surrogates, combining marks, 4-byte emoji) are stored and read back as sent, or
rejected whole with a SchemaError that names the column; a rejected batch changes nothing."""

from __future__ import annotations

import decimal
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from bench.reliability_fuzz import check_writes, digest, make_database, write_batch

FIXTURE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture,
                                          HealthCheck.too_slow])


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[rivulet.Database]:
    database = make_database(tmp_path_factory.mktemp("fuzz") / "db")
    yield database
    database.close()


@FIXTURE
@given(rows=write_batch(), via=st.sampled_from(["table", "insert"]))
def test_batches_round_trip_or_are_rejected_whole(db: rivulet.Database, rows, via) -> None:
    check_writes(db, rows, via)


GOOD = (1, 7, 1, 2, "ok", "text", decimal.Decimal("1.50"), 0.5, b"\x00", None, None, True)


@pytest.mark.parametrize("column, value, message", [
    (1, None, "w.n: column is NOT NULL"),
    (1, 2**31, "out of range"),
    (3, 2**63, "out of range"),
    (11, 2**70, "BOOLEAN"),
    (7, float("nan"), "NaN"),
    (7, float("-inf"), "infinity"),
    (6, decimal.Decimal("NaN"), "NaN"),
    (6, decimal.Decimal("1e400"), "out of range"),
    (6, decimal.Decimal("10000"), "value 10000.00 is out of range"),  # DECIMAL(6,2): 4 digits
    (6, decimal.Decimal("-9999.995"), "value -10000.00 is out of range"),  # once rounded
    (4, "\ud800", "surrogates"),
    (5, "x\udfffy", "surrogates"),
    (4, "😀" * 9, "too long"),
    (8, b"123456789", "too long"),
    (1, [1], "not an integer"),
    (5, {"a": 1}, "not a string"),
])
def test_bad_value_in_the_last_row_rejects_the_batch(db: rivulet.Database, column, value,
                                                     message) -> None:
    bad = list(GOOD)
    bad[0], bad[column] = 2, value
    before = digest(db)
    for write in (lambda: db.table("w").insert_many([GOOD, tuple(bad)]),
                  lambda: db.execute("INSERT INTO w VALUES (" + ", ".join("?" * 12) + "), ("
                                     + ", ".join("?" * 12) + ")", [*GOOD, *bad])):
        with pytest.raises(rivulet.SchemaError, match=message):
            write()
        assert digest(db) == before


@pytest.mark.parametrize("text", ["\x00", "a\x00b", "e\u0301", "\u0301", "😀", "👩‍👩‍👧",
                                  "\u202e", "\ufeff", "\U0010ffff", "'; DROP TABLE w; --"])
def test_unicode_edge_cases_round_trip_and_survive_reopening(tmp_path, text: str) -> None:
    database = make_database(tmp_path / "db")
    try:
        database.table("w").insert_many([(1, 1, None, None, text[:8], text, None, None, None,
                                          None, None, None)])
        database.settle()
        assert database.query("SELECT name, body FROM w WHERE id = ?", [1]) == [(text[:8], text)]
        assert database.query("SELECT id FROM w WHERE body = ?", [text]) == [(1,)]
    finally:
        database.close()
    with rivulet.open(tmp_path / "db") as reopened:
        assert reopened.query("SELECT name, body FROM w WHERE id = ?", [1]) == [(text[:8], text)]
