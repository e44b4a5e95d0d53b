"""Limits (rivulet.engine.limits.Limits): statement length, rows per write, rows per answer and
number of views, enforced by the engine and by both servers with an error naming the limit,
and nothing changed by the request that went over one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pymysql
import pytest

import rivulet
from bench.reliability_fuzz import digest, make_database
from rivulet.cli import main as cli_main
from rivulet.engine.limits import LimitError, Limits
from rivulet.server.http.app import make_app
from rivulet.server.http.serve import serve_http
from rivulet.server.mysql.server import ServerThread

SMALL = Limits(max_statement_chars=300, max_batch_rows=5, max_result_rows=10, max_views=6)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    make_database(tmp_path / "db").close()  # 2 tables, 2 views, 20 rows in t
    database = rivulet.open(tmp_path / "db", limits=SMALL)
    yield database
    database.close()


def test_defaults_are_generous_and_validated() -> None:
    limits = Limits()
    assert limits.max_batch_rows >= 1_000_000 and limits.max_views >= 10_000
    with pytest.raises(ValueError, match="max_views"):
        Limits(max_views=0)


def test_statement_length(db) -> None:
    before = digest(db)
    long_sql = "SELECT id FROM t WHERE a = 1 OR a = 2" + " " * 300
    for run in (lambda: db.execute(long_sql), lambda: db.query(long_sql),
                lambda: db.create_view("big", long_sql), lambda: db.execute_script(long_sql)):
        with pytest.raises(LimitError, match="max_statement_chars"):
            run()
    assert digest(db) == before
    assert db.execute("SELECT id FROM t WHERE s = ?", ["x" * 1000]) == []  # parameters: free


def test_rows_per_write(db) -> None:
    before = digest(db)
    with pytest.raises(LimitError, match="max_batch_rows"):
        db.table("u").insert_many((100 + i, 1, i) for i in range(10**9))  # not all read
    values = ", ".join(f"({100 + i}, 1, {i})" for i in range(6))
    with pytest.raises(LimitError, match="6 rows"):
        db.execute(f"INSERT INTO u VALUES {values}")
    assert digest(db) == before
    assert db.table("u").insert_many([(100 + i, 1, i) for i in range(5)]) == 5


def test_number_of_views_counts_adhoc_views(db) -> None:
    db.execute("CREATE VIEW v3 AS SELECT id FROM t WHERE a = ?")
    db.query("SELECT s FROM t WHERE id = ?", [1])
    db.query("SELECT b FROM u WHERE id = ?", [1])
    db.query("SELECT a FROM t WHERE id = ?", [1])  # six views now
    before = digest(db)
    with pytest.raises(LimitError, match="max_views"):
        db.query("SELECT t_id FROM u WHERE id = ?", [1])
    with pytest.raises(LimitError, match="max_views"):
        db.execute("CREATE VIEW v4 AS SELECT id FROM u WHERE b = ?")
    assert digest(db) == before
    db.query("SELECT s FROM t WHERE id = ?", [2])  # a view that exists still answers
    db.drop_view("v3")
    db.execute("CREATE VIEW v4 AS SELECT id FROM u WHERE b = ?")


def test_mysql_server_enforces_the_limits(db) -> None:
    server = ServerThread(db, port=0)
    conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", autocommit=True)
    try:
        before = digest(db, adhoc=False)
        with conn.cursor() as cursor:
            with pytest.raises(pymysql.MySQLError) as caught:
                cursor.execute("SELECT id FROM t WHERE a >= %s", (0,))  # 20 rows
            assert caught.value.args[0] == 1104 and "max_result_rows" in caught.value.args[1]
            cursor.execute("SELECT id FROM t WHERE a >= %s ORDER BY id LIMIT 10", (0,))
            assert len(cursor.fetchall()) == 10
            with pytest.raises(pymysql.MySQLError, match="max_batch_rows"):
                cursor.execute("INSERT INTO u VALUES " + ", ".join(["(%s, 1, 1)"] * 6),
                               list(range(200, 206)))
            with pytest.raises(pymysql.MySQLError, match="max_statement_chars"):
                cursor.execute("CREATE VIEW lv AS SELECT id FROM t WHERE a = ?" + " " * 300)
            cursor.execute("SELECT s FROM by_id WHERE id = %s", (7,))
            assert cursor.fetchall() == (("s7",),)
        assert digest(db, adhoc=False) == before
    finally:
        conn.close()
        server.stop()


def test_http_api_enforces_the_limits(db) -> None:
    http = serve_http(make_app(db), port=0)
    try:
        before = digest(db, adhoc=False)
        scan = httpx.get(f"{http.url}/views/sums/rows")
        assert scan.status_code == 400 and scan.json()["kind"] == "limit"
        limited = httpx.get(f"{http.url}/views/sums/rows", params={"limit": 10})
        assert len(limited.json()["rows"]) == 10
        rows = httpx.post(f"{http.url}/tables/u/rows", json=[[300 + i, 1, 1] for i in range(6)])
        assert rows.status_code == 400 and "max_batch_rows" in rows.json()["error"]
        sql = httpx.post(f"{http.url}/sql", json={"sql": "SELECT id FROM t WHERE a >= ?",
                                                  "params": [0]})
        assert sql.status_code == 400 and "max_result_rows" in sql.json()["error"]
        assert digest(db, adhoc=False) == before
    finally:
        http.stop()


def test_serve_takes_the_limits_as_options(tmp_path: Path, monkeypatch) -> None:
    opened = {}

    def fake_open(path, **kwargs):
        opened.update(kwargs)
        raise rivulet.RivuletError("stop here")

    monkeypatch.setattr(rivulet, "open", fake_open)
    assert cli_main(["serve", "--data-dir", str(tmp_path), "--max-result-rows", "7",
                     "--upquery-timeout", "2.5", "--no-http"]) == 1
    assert opened["limits"].max_result_rows == 7 and opened["upquery_timeout"] == 2.5
