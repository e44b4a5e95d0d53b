"""Bulk import through Spark (rivulet/pipeline/importer.py; issue 4, part 2).

The oracle of an import is the normal write path: every data row of a generated CSV file
is also inserted on its own with ``insert_many`` into a second database; the import must
keep exactly the rows that path accepts (same stored values), and reject exactly the others,
by row number, with the same reason. Views over the imported table must then equal SQLite
running their query over the stored base table.

Spark tests share one local[2] session (tests/spark_fixtures.py) and never skip.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import rivulet
from oracle import same_multiset
from rivulet.errors import RivuletError
from rivulet.pipeline.import_report import ImportFailed
from rivulet.pipeline.importer import import_files, import_jdbc
from spark_fixtures import spark_session  # noqa: F401 (the shared ``spark`` fixture)

pytestmark = pytest.mark.spark

EXAMPLES = 60 if settings.default.max_examples >= 1000 else 4

TABLE = ("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(6) NOT NULL, score DOUBLE, "
         "n BIGINT, day DATE, price DECIMAL(8,2), flag BOOLEAN, note VARCHAR(4) DEFAULT 'dflt')")
COLUMNS = ["id", "name", "score", "n", "day", "price", "flag"]


def write_csv(path: Path, header: list[str] | None, rows: list[list[str | None]],
              quote_all: bool = True) -> Path:
    """A CSV file: NULL as an unquoted ``\\N``, other values quoted (RFC 4180); with
    ``quote_all=False`` only those that need it (and the empty string) are."""
    def cell(v: str | None) -> str:
        if v is None:
            return "\\N"
        if not quote_all and v and v != "\\N" and not any(c in v for c in ',"\r\n'):
            return v
        return '"' + v.replace('"', '""') + '"'
    lines = ([",".join(header)] if header else []) + [",".join(cell(v) for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def table_rows(db: rivulet.Database, table: str = "t") -> list[tuple]:
    return sorted(db.execute(f"SELECT * FROM {table}"), key=lambda r: repr(r[0]))  # type: ignore[arg-type]


def normal_writes(path: Path, rows: list[list[str | None]]) -> tuple[list[tuple], dict[int, str]]:
    """What inserting each row on its own does: the stored rows, and row number -> error."""
    rejected: dict[int, str] = {}
    with rivulet.open(path) as ref:
        ref.execute(TABLE)
        for number, row in enumerate(rows, 1):
            try:
                ref.table("t").insert_many([dict(zip(COLUMNS, row))])
            except RivuletError as exc:
                rejected[number] = str(exc).removeprefix("row 1: ")
        return table_rows(ref), rejected


# --------------------------------------------------------------------------- differential

INT_TEXT = st.one_of(
    st.integers(-(2**40), 2**40).map(str),
    st.sampled_from([" 7", "+3", "007", "-0", "1_000", "3.0", "1e3", "", "abc", "٣",
                     "99999999999999999999", "-9223372036854775808", "9223372036854775807",
                     "9223372036854775808", "2147483648", "-2147483649"]))
FLOAT_TEXT = st.one_of(
    st.floats(allow_nan=False, width=64).map(repr),
    st.sampled_from(["1.5d", "0x1p3", "inf", "-Infinity", "1e400", ".5", "1.", "", "abc",
                     " 2.5 ", "1e", "--1", "+1.5", "1E5"]))
NAME_TEXT = st.text(st.sampled_from(list("ab ,\"'é😀\\\t")), max_size=8)
DAY_TEXT = st.one_of(st.dates().map(dt.date.isoformat),
                     st.sampled_from(["2024-02-30", "2024-1-1", "", "20240101", "2024-01-01x"]))
PRICE_TEXT = st.one_of(st.decimals(-10**6, 10**6, places=3).map(str),
                       st.sampled_from(["1e3", "123456789", "", "1.005", "x"]))
FLAG_TEXT = st.sampled_from(["0", "1", "true", "FALSE", " 1 ", "2", "yes", ""])


def nullable(strategy: st.SearchStrategy[str]) -> st.SearchStrategy[str | None]:
    return st.one_of(st.none(), strategy)


ROW = st.tuples(nullable(st.integers(0, 25).map(str) | INT_TEXT), nullable(NAME_TEXT),
                nullable(FLOAT_TEXT), nullable(INT_TEXT), nullable(DAY_TEXT),
                nullable(PRICE_TEXT), nullable(FLAG_TEXT)).map(list)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rows=st.lists(ROW, min_size=1, max_size=40), quote_all=st.booleans())
@example(rows=[["1", "a", None, "٣", None, None, None], ["٣", "b", None, None, None, None, None]],
         quote_all=False)  # Java's and Python's integer parsers read '٣' as 3; MySQL refuses it
def test_import_accepts_and_rejects_what_normal_writes_do(tmp_path_factory: Any, spark: Any,
                                                           rows: list[list[str | None]],
                                                           quote_all: bool) -> None:
    root = tmp_path_factory.mktemp("diff")
    expected_rows, expected_errors = normal_writes(root / "ref", rows)
    with rivulet.open(root / "db") as db:
        db.execute(TABLE)
        result = import_files(db, "t", write_csv(root / "t.csv", COLUMNS, rows, quote_all),
                              progress=False, spark=spark, max_errors=1000)
        assert table_rows(db) == expected_rows
        got = {e.row: e.reason for e in result.errors}
        assert sorted(got) == sorted(expected_errors)
        for number, reason in expected_errors.items():
            if "duplicate primary key" in reason:
                assert "duplicate primary key (id)" in got[number]
            else:
                assert got[number] == reason, f"row {number}: {rows[number - 1]}"
        assert (result.rows_read, result.rows_imported, result.rows_rejected) == (
            len(rows), len(expected_rows), len(expected_errors))


# --------------------------------------------------------------------------- explicit cases


@pytest.fixture
def db(tmp_path: Path) -> Any:
    with rivulet.open(tmp_path / "data") as database:
        database.execute(TABLE)
        yield database


def test_good_csv_with_header_in_any_order_and_a_default(db: rivulet.Database, tmp_path: Path,
                                                         spark: Any) -> None:
    header = ["name", "id", "price", "day", "score", "flag", "n"]
    rows = [["héllo", "1", "1.25", "2024-02-29", "0.1", "true", "9223372036854775807"],
            ["", "2", "-3", "1999-12-31", "-1e300", "0", None],
            ["a,\"b\"", "3", None, None, None, None, "-9223372036854775808"]]
    result = import_files(db, "t", write_csv(tmp_path / "a.csv", header, rows), progress=False,
                          spark=spark)
    assert (result.rows_imported, result.rows_rejected, result.errors) == (3, 0, ())
    assert result.lsn == db.lsn
    assert table_rows(db) == [
        (1, "héllo", 0.1, 2**63 - 1, dt.date(2024, 2, 29), Decimal("1.25"), 1, "dflt"),
        (2, "", -1e300, None, dt.date(1999, 12, 31), Decimal("-3.00"), 0, "dflt"),
        (3, 'a,"b"', None, -(2**63), None, None, None, "dflt")]


def test_bad_rows_are_rejected_with_counts_and_samples(db: rivulet.Database, tmp_path: Path,
                                                       spark: Any) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("id,name,n\n1,ok,5\n2,,6\nx,bad,7\n4,toolongname,8\n5,big,"
                    "99999999999999999999\n6,short\n1,dup,9\n7,fine,10\n", encoding="utf-8")
    result = import_files(db, "t", path, progress=False, spark=spark, max_errors=3)
    assert (result.rows_read, result.rows_imported, result.rows_rejected) == (8, 2, 6)
    assert [e.row for e in result.errors] == [2, 3, 4]  # the sample, in row order
    assert "NOT NULL" in result.errors[0].reason and "t.name" in result.errors[0].reason
    assert "'x'" in result.errors[1].reason
    assert "too long" in result.errors[2].reason
    assert all(e.source == str(path.resolve()) for e in result.errors)
    assert [r[:2] for r in table_rows(db)] == [(1, "ok"), (7, "fine")]
    everything = import_files(db, "t", path, progress=False, spark=spark, max_errors=100)
    reasons = {e.row: e.reason for e in everything.errors}
    assert "out of range" in reasons[5]
    assert "malformed record" in reasons[6]
    assert "already in the table" in reasons[1] and "already in the table" in reasons[8]
    assert "given earlier in the import" not in reasons[1]


def test_duplicates_within_the_file_keep_the_first_row(db: rivulet.Database, tmp_path: Path,
                                                       spark: Any) -> None:
    db.table("t").insert_many([(100, "old", None, None, None, None, None, "x")])
    rows = [[str(i % 3), f"r{i}"] for i in range(7)] + [["100", "new"]]
    result = import_files(db, "t", write_csv(tmp_path / "d.csv", ["id", "name"], rows),
                          progress=False, spark=spark)
    assert [r[:2] for r in table_rows(db)] == [(0, "r0"), (1, "r1"), (100, "old"), (2, "r2")]
    assert [e.row for e in result.errors] == [4, 5, 6, 7, 8]
    assert all("given earlier in the import" in e.reason for e in result.errors[:4])
    assert "already in the table" in result.errors[4].reason


def test_on_error_fail_changes_nothing(db: rivulet.Database, tmp_path: Path, spark: Any) -> None:
    db.table("t").insert_many([(1, "kept", None, None, None, None, None, "x")])
    lsn, before = db.lsn, table_rows(db)
    rows = [[str(i), "fine"] for i in range(2, 300)] + [["301", None]]
    with pytest.raises(ImportFailed,
                       match=r"nothing imported: .*row 299: t.name: column is NOT NULL"):
        import_files(db, "t", write_csv(tmp_path / "f.csv", ["id", "name"], rows),
                     on_error="fail", progress=False, spark=spark)
    dup = write_csv(tmp_path / "g.csv", ["id", "name"], [["5", "a"], ["1", "b"]])
    with pytest.raises(ImportFailed, match=r"row 2: duplicate primary key \(id\) = \(1\)"):
        import_files(db, "t", dup, on_error="fail", progress=False, spark=spark)
    assert (db.lsn, table_rows(db)) == (lsn, before)
    db.settle()


def test_bad_input_fails_clearly_and_changes_nothing(db: rivulet.Database, tmp_path: Path,
                                                     spark: Any) -> None:
    lsn = db.lsn
    wrong = write_csv(tmp_path / "w.csv", ["id", "nope"], [["1", "a"]])
    with pytest.raises(ImportFailed, match="names column 'nope', which table 't' does not have"):
        import_files(db, "t", wrong, progress=False, spark=spark)
    with pytest.raises(ImportFailed, match="no such file"):
        import_files(db, "t", tmp_path / "missing.csv", progress=False, spark=spark)
    with pytest.raises(ImportFailed, match="unknown table|no table"):
        import_files(db, "nosuch", wrong, progress=False, spark=spark)
    with pytest.raises(ImportFailed, match="unknown import format"):
        import_files(db, "t", wrong, format="xml", progress=False, spark=spark)
    assert db.lsn == lsn and table_rows(db) == []


def test_several_files_in_order_with_row_numbers_per_file(db: rivulet.Database, tmp_path: Path,
                                                         spark: Any) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    write_csv(folder / "b.csv", None, [["3", "b1"] + [None] * 6, ["1", "b2"] + [None] * 6])
    write_csv(folder / "a.csv", None, [["1", "a1"] + [None] * 6, ["x", "a2"] + [None] * 6])
    result = import_files(db, "t", folder, header=False, progress=False, spark=spark)
    assert [r[:2] for r in table_rows(db)] == [(1, "a1"), (3, "b1")]  # a.csv first: a1 wins
    assert [(Path(e.source).name, e.row) for e in result.errors] == [("a.csv", 2), ("b.csv", 2)]


def test_parquet_and_json_files(db: rivulet.Database, tmp_path: Path, spark: Any) -> None:
    table = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "name": ["p", "q", None],
                      "score": [0.5, None, 1.0], "day": [dt.date(2020, 1, 1), None, None],
                      "flag": [True, False, None], "price": [Decimal("1.50"), None, None]})
    pq.write_table(table, tmp_path / "p.parquet")
    result = import_files(db, "t", tmp_path / "p.parquet", format="parquet", progress=False,
                          spark=spark)
    assert (result.rows_imported, [e.row for e in result.errors]) == (2, [3])
    lines = [{"id": 10, "name": "j", "n": 2**62, "score": 1.5}, {"id": "11", "name": "k"},
             {"id": 12.0, "name": "l", "day": "2024-01-02"}, {"id": 13.5, "name": "m"},
             {"id": 14, "name": "ü" * 7}, "not json"]
    (tmp_path / "j.json").write_text("\n".join(json.dumps(x) if isinstance(x, dict) else x
                                               for x in lines) + "\n", encoding="utf-8")
    result = import_files(db, "t", tmp_path / "j.json", format="json", progress=False, spark=spark)
    assert [e.row for e in result.errors] == [5, 6]
    assert "malformed record" in result.errors[1].reason
    assert table_rows(db) == [
        (1, "p", 0.5, None, dt.date(2020, 1, 1), Decimal("1.50"), 1, "dflt"),
        (10, "j", 1.5, 2**62, None, None, None, None),  # JSON: a missing field is NULL
        (11, "k", None, None, None, None, None, None),
        (12, "l", None, None, dt.date(2024, 1, 2), None, None, None),
        (14, "m", None, None, None, None, None, None),  # 13.5 rounded, as a write rounds it
        (2, "q", None, None, None, None, 0, "dflt")]


def test_jdbc_from_a_sqlite_file(db: rivulet.Database, tmp_path: Path, spark: Any) -> None:
    source = tmp_path / "source.db"
    conn = sqlite3.connect(source)
    conn.execute("CREATE TABLE src (id INTEGER, name TEXT, n INTEGER, score REAL, day TEXT)")
    conn.executemany("INSERT INTO src VALUES (?, ?, ?, ?, ?)", [
        (1, "big", 2**40, 0.1, "2024-03-01"), (2, "neg", -(2**62), None, None),
        (3, "text", "abc", 1.0, None), (4, "ü😀", None, 1e-300, "2024-13-01"),
        (5, None, 1, None, None)])
    conn.commit()
    conn.close()
    result = import_jdbc(db, "t", f"jdbc:sqlite:{source}", dbtable="src", progress=False,
                         spark=spark)
    assert [e.row for e in result.errors] == [3, 4, 5]
    assert "'abc'" in result.errors[0].reason  # not silently 0
    assert table_rows(db) == [(1, "big", 0.1, 2**40, dt.date(2024, 3, 1), None, None, "dflt"),
                              (2, "neg", None, -(2**62), None, None, None, "dflt")]
    query = import_jdbc(db, "t", f"jdbc:sqlite:{source}", query="SELECT id + 100 AS id, name "
                        "FROM src WHERE name IS NOT NULL", progress=False, spark=spark)
    assert query.rows_imported == 4


def test_views_equal_sqlite_after_import(tmp_path: Path, spark: Any) -> None:
    with rivulet.open(tmp_path / "data") as db:
        db.execute("CREATE TABLE votes (id INT PRIMARY KEY, user_id INT NOT NULL, story INT)")
        views = {
            "per_story": "SELECT story, COUNT(*) AS n, SUM(user_id) AS s FROM votes GROUP BY story",
            "big": "SELECT id, user_id FROM votes WHERE user_id > 50",
            "top": "SELECT story, COUNT(*) AS n FROM votes GROUP BY story ORDER BY n DESC, "
                   "story LIMIT 3",
        }
        for name, sql in views.items():
            db.execute(f"CREATE VIEW {name} AS {sql}")
        db.execute("CREATE VIEW by_story AS SELECT id, user_id FROM votes WHERE story = ?")
        db.table("votes").insert_many([(i, i, i % 4) for i in range(10)])
        db.settle()
        held = db.view("by_story").lookup(1)  # a partial key held before the import
        rows = [[str(i), str(i * 7 % 100), str(i % 9) if i % 10 else None] for i in range(5, 400)]
        result = import_files(db, "votes", write_csv(tmp_path / "v.csv", ["id", "user_id", "story"],
                                                     rows), progress=False, spark=spark)
        assert result.rows_imported == 390 and len(result.errors) == 5
        db.settle()
        conn = sqlite3.connect(db.storage.path)
        try:
            for name, sql in views.items():
                assert same_multiset(db.view(name).scan(), conn.execute(sql).fetchall()), name
            expected = conn.execute("SELECT id, user_id FROM votes WHERE story = 1").fetchall()
        finally:
            conn.close()
        assert len(expected) > len(held)
        assert same_multiset(db.view("by_story").lookup(1), expected)


def test_progress_bar_shows_rows_per_second(db: rivulet.Database, tmp_path: Path, spark: Any,
                                            capsys: Any) -> None:
    rows = [[str(i), "x"] for i in range(1000)]
    result = import_files(db, "t", write_csv(tmp_path / "p.csv", ["id", "name"], rows),
                          progress=True, spark=spark)
    assert result.rows_imported == 1000 and result.rows_per_second > 0
    assert "rows/s" in capsys.readouterr().err
    assert "imported 1,000 of 1,000 rows into t" in result.summary()


def test_a_failure_after_several_batches_rolls_all_back(db: rivulet.Database, tmp_path: Path,
                                                        spark: Any, monkeypatch: Any) -> None:
    from rivulet.pipeline import import_rows

    monkeypatch.setattr(import_rows, "BATCH_ROWS", 10)  # rows 1..50 go in as 5 batches first
    db.execute("CREATE VIEW names AS SELECT id, name FROM t")
    lsn = db.lsn
    rows = [[str(i), "ok"] for i in range(1, 56)] + [["56", "much too long"]]
    with pytest.raises(ImportFailed, match="row 56"):
        import_files(db, "t", write_csv(tmp_path / "r.csv", ["id", "name"], rows),
                     on_error="fail", progress=False, spark=spark)
    db.settle()
    assert (db.lsn, table_rows(db), db.view("names").scan()) == (lsn, [], [])
    result = import_files(db, "t", write_csv(tmp_path / "s.csv", ["id", "name"], rows[:-1]),
                          progress=False, spark=spark)
    db.settle()
    assert result.lsn == lsn + 1 and len(db.view("names").scan()) == 55


def test_large_imports_rebuild_secondary_indexes(db: rivulet.Database, tmp_path: Path,
                                                 spark: Any, monkeypatch: Any) -> None:
    import rivulet.engine.commit

    monkeypatch.setattr(rivulet.engine.commit, "BULK_INDEX_ROWS", 10)
    db.execute("CREATE VIEW by_n AS SELECT id, name FROM t WHERE n = ?")
    db.view("by_n").lookup(3)  # a partial view: storage gets an index on n

    def indexes() -> list[tuple]:
        return db.storage.conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 't' "
            "AND sql IS NOT NULL").fetchall()

    before = indexes()
    assert len(before) == 1
    rows = [[str(i), "x", None, str(i % 4)] for i in range(40)]
    header = ["id", "name", "score", "n"]
    with pytest.raises(ImportFailed):
        import_files(db, "t", write_csv(tmp_path / "a.csv", header, rows + [["x", "y", None, "1"]]),
                     on_error="fail", progress=False, spark=spark)
    assert indexes() == before and table_rows(db) == []
    import_files(db, "t", write_csv(tmp_path / "b.csv", header, rows), progress=False, spark=spark)
    db.settle()
    assert indexes() == before
    plan = db.storage.conn.execute("EXPLAIN QUERY PLAN SELECT * FROM t WHERE n = 3").fetchall()
    assert any(before[0][0] in str(step) for step in plan)
    assert sorted(r[0] for r in db.view("by_n").lookup(3)) == list(range(3, 40, 4))


@pytest.mark.slow
def test_jdbc_from_mariadb(db: rivulet.Database, tmp_path: Path, spark: Any) -> None:
    """A MySQL-family source over JDBC (Debian's MariaDB Connector/J): a private MariaDB on
    loopback, read through a customSchema derived from rivulet's table, so that BIGINTs,
    dates and decimals arrive exactly and a bad value is rejected with its row number."""
    import socket

    from bench.vote_wire import MariaDB

    MariaDB.ensure_installed(print)
    assert Path("/usr/share/java/mariadb-java-client.jar").exists(), \
        "libmariadb-java is missing: test.sh installs it"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = MariaDB(tmp_path / "mariadb", port)
    try:
        server.start()
        conn = server.connect(None)
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE src CHARACTER SET utf8mb4")
            cur.execute("CREATE TABLE src.items (id INT, name VARCHAR(20), n BIGINT, "
                        "day DATE, price DECIMAL(8,2), score DOUBLE)")
            cur.executemany("INSERT INTO src.items VALUES (%s, %s, %s, %s, %s, %s)", [
                (1, "big", 2**62, "2024-03-01", "1.50", 0.25),
                (2, "neg", -(2**40), None, "-3.00", None),
                (3, "far too long", 5, None, None, None),  # longer than VARCHAR(6)
                (4, "ü😀", None, "1999-12-31", None, 1e-300)])
        conn.close()
        result = import_jdbc(db, "t", f"jdbc:mariadb://127.0.0.1:{port}/src", dbtable="items",
                             user="bench", progress=False, spark=spark)
    finally:
        server.stop()
    assert [e.row for e in result.errors] == [3], result.errors
    assert table_rows(db) == [
        (1, "big", 0.25, 2**62, dt.date(2024, 3, 1), Decimal("1.50"), None, "dflt"),
        (2, "neg", None, -(2**40), None, Decimal("-3.00"), None, "dflt"),
        (4, "ü😀", 1e-300, None, dt.date(1999, 12, 31), None, None, "dflt")]
