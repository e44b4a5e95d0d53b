"""The HTTP/JSON API (rivulet.server.http.app): every endpoint, its errors, and its answers
compared with SQLite (tests/oracle.py) after writes made through the API itself.

Most tests drive the ASGI app with Starlette's TestClient; the ones about threads and the
runner use a real uvicorn server on a free port.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import sqlite3
import stat
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rivulet
from oracle import Pair, assert_same_answer, sorted_rows
from rivulet.cli import load_news_sample, news_program
from rivulet.server.http.app import make_app
from rivulet.server.http.serve import serve_http
from spark_fixtures import spark_session  # noqa: F401 (the shared ``spark`` fixture)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette's notice about httpx vs httpx2
    from starlette.testclient import TestClient

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def client_for(db: rivulet.Database, **kwargs: Any) -> TestClient:
    # Server exceptions are raised in the test: a 500 is always a bug here.
    return TestClient(make_app(db, **kwargs), raise_server_exceptions=True)


@pytest.fixture
def news(tmp_path: Path):
    db = rivulet.open(tmp_path / "news")
    db.execute_script(news_program())
    load_news_sample(db, stories=200, votes=2_000)
    yield db
    db.close()


@pytest.fixture
def api(news):
    return client_for(news)


def rows_of(response: httpx.Response) -> list[tuple]:
    assert response.status_code == 200, response.text
    return [tuple(r) for r in response.json()["rows"]]


def assert_error(response: httpx.Response, status: int, kind: str, *words: str) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "kind"}, body
    assert body["kind"] == kind, body
    for word in words:
        assert word.lower() in body["error"].lower(), (word, body)
    return body


# --------------------------------------------------------------------------- health


def test_health_reports_lsns_then_503_once_closed(news, api):
    body = api.get("/health").json()
    assert body == {"status": "ok", "lsn": news.lsn, "applied_lsn": news.applied_lsn}
    news.close()
    r = api.get("/health")
    assert r.status_code == 503 and r.json()["status"] == "closed"
    assert_error(api.get("/views/StoriesWithVC", params={"key": 1}), 503, "closed")
    assert_error(api.post("/tables/votes/rows", json=[[1, 1]]), 503, "closed")
    assert_error(api.get("/metrics"), 503, "closed")


def test_health_503_when_the_dataflow_failed(news, api):
    def boom() -> None:
        raise RuntimeError("injected propagation failure")

    news.hooks["before_propagate"] = boom
    assert api.post("/tables/votes/rows", json=[[1, 1]]).status_code == 201  # durable
    deadline = time.monotonic() + 5
    while news.applied_lsn < news.lsn and time.monotonic() < deadline:
        time.sleep(0.01)
    r = api.get("/health")
    assert r.status_code == 503, r.text
    assert r.json()["status"] == "failed" and "injected propagation failure" in r.json()["error"]
    assert_error(api.post("/sql", json={"sql": "SELECT id FROM stories WHERE id = ?",
                                          "params": [1]}), 503, "failed")


# --------------------------------------------------------------------------- views


def test_views_lists_parameters_and_state(tmp_path):
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT, n INT, at DATETIME)")
        db.execute("CREATE VIEW by_g AS SELECT id, n FROM t WHERE g = ?")
        db.execute("CREATE VIEW pick AS SELECT id FROM t WHERE g = ? AND id IN (?)")
        db.execute("CREATE VIEW since AS SELECT id FROM t WHERE g = ? AND at > ? AND at <= ?")
        db.execute("CREATE VIEW total AS SELECT COUNT(*) AS c FROM t")
        db.execute("CREATE VIEW both_ AS SELECT id FROM t WHERE at > ? AND n BETWEEN ? AND ?")
        db.execute("CREATE VIEW counted AS SELECT COUNT(*) AS c FROM t WHERE g = ? AND n < ? "
                   "AND at >= ?")
        views = {v["name"]: v for v in client_for(db).get("/views").json()["views"]}
        assert set(views) == {"by_g", "pick", "since", "total", "both_", "counted"}
        assert views["by_g"]["columns"] == ["id", "n"]
        assert views["by_g"]["parameters"] == [{"position": 0, "column": "g", "match": "="}]
        assert views["pick"]["parameters"] == [
            {"position": 0, "column": "g", "match": "="},
            {"position": 1, "column": "id", "match": "IN"},
        ]
        assert views["since"]["parameters"] == [
            {"position": 0, "column": "g", "match": "="},
            {"position": 1, "column": "at", "match": ">"},
            {"position": 2, "column": "at", "match": "<="},
        ]
        assert views["total"]["parameters"] == []
        assert views["both_"]["parameters"] == [  # (range parameters on two columns)
            {"position": 0, "column": "at", "match": ">"},
            {"position": 1, "column": "n", "match": ">="},
            {"position": 2, "column": "n", "match": "<="},
        ]
        assert views["counted"]["parameters"] == [  # (a range aggregate: its key the values)
            {"position": 0, "column": "g", "match": "="},
            {"position": 1, "column": "n", "match": "<"},
            {"position": 2, "column": "at", "match": ">="},
        ]
        for name, v in views.items():
            assert v["partial"] == db.view(name).partial
            assert v["sql"] == db.view(name).plan.sql
        assert views["by_g"]["partial"] is True
    with rivulet.open(tmp_path / "full", partial=False) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT)")
        db.execute("CREATE VIEW by_g AS SELECT id FROM t WHERE g = ?")
        assert client_for(db).get("/views").json()["views"][0]["partial"] is False


def test_read_by_key_forms(news, api):
    sql = "SELECT id, author, title, url, vcount FROM StoryVotes WHERE id = ?"
    for form in ({"key": "7"}, {"key": "[7]"}, [("key", "7")]):
        got = rows_of(api.get("/views/StoriesWithVC", params=form))
        assert got == [tuple(r) for r in news.query(sql, [7])]
        assert len(got) == 1 and got[0][0] == 7
    assert rows_of(api.get("/views/StoriesWithVC", params={"key": "123456"})) == []
    # An IN list: repeated keys, in any number.
    news.execute("CREATE VIEW ByIds AS SELECT id, title FROM stories WHERE id IN (?)")
    got = rows_of(api.get("/views/ByIds", params=[("key", "1"), ("key", "5"), ("key", "9")]))
    assert sorted(got) == [(1, "Story 1"), (5, "Story 5"), (9, "Story 9")]
    # A range parameter, given as an ISO datetime string.
    got = rows_of(api.get("/views/RecentStories", params={"key": "2024-01-01T03:15:00"}))
    assert [r[0] for r in got] == list(range(199, 195, -1))
    assert got[0][2] == "2024-01-01T03:19:00"
    # An unparameterized view takes no key.
    front = rows_of(api.get("/views/FrontPage"))
    assert front == [tuple(r) for r in news.view("FrontPage").lookup()]
    assert len(front) == 30


def test_read_errors(news, api):
    assert_error(api.get("/views/NoSuchView", params={"key": 1}), 404, "not_found", "NoSuchView")
    # A wrong number of keys is the error of a statement given a wrong number of values.
    assert_error(api.get("/views/StoriesWithVC"), 400, "sql", "1 parameter", "got 0")
    assert_error(api.get("/views/StoriesWithVC", params=[("key", "1"), ("key", "2")]), 400,
                 "sql", "parameter")
    assert_error(api.get("/views/FrontPage", params={"key": 1}), 400, "sql",
                 "no parameters")
    assert_error(api.get("/views/StoriesWithVC", params={"key": "[1,"}), 400, "bad_json")
    assert_error(api.get("/views/StoriesWithVC", params={"key": "[[1]]"}), 400, "bad_request",
                 "scalar")
    assert_error(api.get("/views/StoriesWithVC", params={"key": 1, "block": "maybe"}), 400,
                 "bad_request", "block")
    # Text that is no date is MySQL's zero date, before every date: every story is after it
    everything = rows_of(api.get("/views/RecentStories", params={"key": "2000-01-01"}))
    assert rows_of(api.get("/views/RecentStories", params={"key": "yesterday"})) == everything
    assert_error(api.get("/views/StoriesWithVC", params={"key": 1, "min_lsn": "x"}), 400,
                 "bad_request", "min_lsn")
    assert_error(api.get("/views/StoriesWithVC", params={"key": 1, "min_lsn": news.lsn + 5}),
                 400, "bad_request", "ahead")


def test_non_blocking_read_of_a_miss_answers_202_then_the_rows(news, api):
    view = news.view("StoriesWithVC")
    assert view.partial
    news.evict("StoriesWithVC")
    r = api.get("/views/StoriesWithVC", params={"key": 11, "block": "false"})
    assert r.status_code == 202, r.text
    assert r.json()["ready"] is False and r.json()["view"] == "StoriesWithVC"
    deadline = time.monotonic() + 10
    while True:
        r = api.get("/views/StoriesWithVC", params={"key": 11, "block": "false"})
        if r.status_code == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert rows_of(r) == [tuple(x) for x in view.lookup(11)]
    # Blocking (the default) on a miss fills it and answers at once.
    news.evict("StoriesWithVC")
    assert rows_of(api.get("/views/StoriesWithVC", params={"key": 12})) == [
        tuple(x) for x in view.lookup(12)]


def test_reads_over_http_count_like_direct_reads(news, api):
    """A miss is one miss and no hit; reading the key again is one hit."""
    news.execute("CREATE VIEW Title AS SELECT title FROM stories WHERE id = ?")

    def counts() -> tuple[int, int]:
        v = news.stats()["per_view"]["Title"]
        return v["hits"], v["misses"]

    for k in range(5):
        assert rows_of(api.get("/views/Title", params={"key": str(k)})) == [(f"Story {k}",)]
    time.sleep(0.1)  # a stray background fill would count by now
    assert counts() == (0, 5)
    for k in range(5):
        api.get("/views/Title", params={"key": str(k)})
    assert rows_of(api.post("/views/Title/lookup", json=["7", "8"])) in (
        [("Story 7",), ("Story 8",)], [("Story 8",), ("Story 7",)])
    time.sleep(0.1)
    assert counts() == (5, 7)


def test_lookup_many_and_scan(news, api):
    got = rows_of(api.post("/views/StoriesWithVC/lookup", json=[3, 1, 4, 1, 999999]))
    expected = news.view("StoriesWithVC").lookup_many([3, 1, 4])
    assert sorted_rows(got) == sorted_rows(expected)
    assert sorted(r[0] for r in got) == [1, 3, 4]
    news.execute(
        "CREATE VIEW ByAuthorTitle AS SELECT id FROM stories WHERE author = ? AND title = ?")
    author, title = news.query("SELECT author, title FROM stories WHERE id = ?", [8])[0]
    got = rows_of(api.post("/views/ByAuthorTitle/lookup",
                           json=[[author, title], [author, "none"]]))
    assert got == [(8,)]
    assert_error(api.post("/views/ByAuthorTitle/lookup", json=[[author]]), 400, "sql",
                 "keyed by 2")
    assert_error(api.post("/views/StoriesWithVC/lookup", json={"keys": [1]}), 400, "bad_request",
                 "list of keys")
    assert_error(api.post("/views/StoriesWithVC/lookup", content=b"[1, 2"), 400, "bad_json")
    deep = b"[" * 100_000 + b"]" * 100_000
    assert_error(api.post("/views/StoriesWithVC/lookup", content=deep), 400, "bad_json")
    deep_key = "[" * 5_000 + "]" * 5_000
    assert_error(api.get("/views/StoriesWithVC", params={"key": deep_key}), 400, "bad_json")
    assert_error(api.post("/views/StoriesWithVC/lookup", json=[{"id": 1}]), 400, "bad_request")
    assert_error(api.post("/views/Nope/lookup", json=[1]), 404, "not_found")
    # Scans: the whole view; limit cuts it.
    scan = rows_of(api.get("/views/StoryVotes/rows"))
    assert sorted_rows(scan) == sorted_rows(
        [(*r[:4], r[4].isoformat(), r[5]) for r in news.view("StoryVotes").scan()])
    assert len(scan) == 200
    assert len(rows_of(api.get("/views/StoryVotes/rows", params={"limit": 5}))) == 5
    assert_error(api.get("/views/StoryVotes/rows", params={"limit": -1}), 400, "bad_request")


def test_put_and_delete_views(news, api):
    r = api.put("/views/Top3",
                content="SELECT id, vcount FROM StoryVotes ORDER BY vcount DESC LIMIT 3")
    assert r.status_code == 201, r.text
    assert r.json()["name"] == "Top3" and r.json()["columns"] == ["id", "vcount"]
    top = rows_of(api.get("/views/Top3"))
    assert top == [tuple(x) for x in news.view("FrontPage").lookup()[:3]] or \
        [x[1] for x in top] == [x[2] for x in news.view("FrontPage").lookup()[:3]]
    # PUT again replaces (200); a JSON body works too.
    r = api.put("/views/Top3", json={"sql": "SELECT id FROM stories WHERE author = ?"})
    assert r.status_code == 200, r.text
    assert r.json()["parameters"] == [{"position": 0, "column": "author", "match": "="}]
    # Bad SQL: 400 naming the problem and where; the old view stays as it was.
    body = assert_error(api.put("/views/Top3", content="SELECT id FROM stories WHERE nope = ?"),
                        400, "sql", "nope", "line 1")
    assert "column" in body["error"]
    assert news.view("Top3").plan.sql == "SELECT id FROM stories WHERE author = ?"
    assert_error(api.put("/views/Top3", content=""), 400, "bad_request")
    assert_error(api.put("/views/Top3", content="create view Top3 as SELECT id FROM stories"),
                 400, "sql", "not a CREATE VIEW")
    assert_error(api.put("/views/Bad", json={"query": "x"}), 400, "bad_request")
    assert_error(api.put("/views/stories", content="SELECT id FROM stories"), 409, "conflict",
                 "already exists")
    # A view used by another cannot be dropped (409); an unknown one is 404.
    assert_error(api.delete("/views/StoryVotes"), 409, "conflict", "used by")
    assert api.delete("/views/Top3").json() == {"dropped": "Top3"}
    assert_error(api.get("/views/Top3"), 404, "not_found")
    assert_error(api.delete("/views/Top3"), 404, "not_found")
    assert "Top3" not in news.views()


# --------------------------------------------------------------------------- tables


def test_insert_rows(news, api):
    r = api.post("/tables/users/rows", json=[{"id": 5000, "name": "ann"}, [5001, "bob"]])
    assert r.status_code == 201, r.text
    assert r.json() == {"inserted": 2, "lsn": news.lsn}
    assert news.query("SELECT id, name FROM users WHERE id IN (?, ?)", [5000, 5001]) in (
        [(5000, "ann"), (5001, "bob")], [(5001, "bob"), (5000, "ann")])
    # A single object is one row.
    assert api.post("/tables/users/rows", json={"id": 5002, "name": "cy"}).json()["inserted"] == 1
    count = news.storage.count(news.catalog.require_table("users"))
    # Errors reject the whole batch.
    assert_error(api.post("/tables/users/rows", json=[[5003, "ok"], [5000, "dup"]]), 409,
                 "constraint", "duplicate")
    assert_error(api.post("/tables/users/rows", json=[[5004, "ok"], {"id": 5005, "nme": "x"}]),
                 400, "schema", "row 2", "nme")
    assert_error(api.post("/tables/users/rows", json=[["x", "bad id"]]), 400, "schema", "id")
    assert_error(api.post("/tables/users/rows", json=[[5006, None]]), 400, "schema", "NOT NULL")
    assert_error(api.post("/tables/users/rows", json=[[5007]]), 400, "schema", "2 columns")
    assert_error(api.post("/tables/users/rows", json="rows"), 400, "bad_request", "list of rows")
    assert_error(api.post("/tables/users/rows", json=[1, 2]), 400, "bad_request")
    assert_error(api.post("/tables/users/rows", content=b"{not json"), 400, "bad_json")
    assert_error(api.post("/tables/users/rows", content=b""), 400, "bad_request", "JSON body")
    assert_error(api.post("/tables/nope/rows", json=[[1]]), 404, "not_found", "nope")
    assert news.storage.count(news.catalog.require_table("users")) == count


def test_patch_and_delete_by_primary_key(news, api):
    news.execute("CREATE VIEW UserName AS SELECT name FROM users WHERE id = ?")
    assert rows_of(api.get("/views/UserName", params={"key": 3})) == [("user3",)]
    r = api.patch("/tables/users/rows/3", json={"name": "renamed"})
    assert r.status_code == 200 and r.json()["updated"] == 1, r.text
    got = rows_of(api.get("/views/UserName", params={"key": 3, "min_lsn": r.json()["lsn"]}))
    assert got == [("renamed",)]
    # The row already holds the value: MySQL counts 0 rows changed, but the row exists.
    r = api.patch("/tables/users/rows/3", json={"name": "renamed"})
    assert r.status_code == 200 and r.json()["updated"] == 0, r.text
    assert_error(api.patch("/tables/users/rows/99999", json={"name": "x"}), 404, "not_found",
                 "99999")
    assert_error(api.patch("/tables/users/rows/3", json={"nam": "x"}), 400, "schema", "nam")
    assert_error(api.patch("/tables/users/rows/3", json={"name` = 'x', `id": 1}), 400, "schema")
    assert_error(api.patch("/tables/users/rows/3", json={"name": None}), 400, "schema", "NOT NULL")
    assert_error(api.patch("/tables/users/rows/3", json={}), 400, "bad_request")
    assert_error(api.patch("/tables/users/rows/abc", json={"name": "x"}), 400, "schema", "abc")
    assert news.query("SELECT name FROM users WHERE id = ?", [3]) == [("renamed",)]
    r = api.delete("/tables/users/rows/3")
    assert r.json()["deleted"] == 1, r.text
    assert rows_of(api.get("/views/UserName", params={"key": 3, "min_lsn": r.json()["lsn"]})) == []
    assert_error(api.delete("/tables/users/rows/3"), 404, "not_found")
    # No primary key; composite keys as a JSON array.
    assert_error(api.delete("/tables/votes/rows/1"), 400, "bad_request", "no primary key")
    news.execute("CREATE TABLE pairs (a INT, b VARCHAR(5), v INT, PRIMARY KEY (a, b))")
    api.post("/tables/pairs/rows", json=[[1, "x", 10], [1, "y", 20]])
    r = api.patch("/tables/pairs/rows/" + json.dumps([1, "y"]), json={"v": 21})
    assert r.json()["updated"] == 1, r.text
    assert_error(api.delete("/tables/pairs/rows/1"), 400, "bad_request", "(a, b)")
    assert api.delete("/tables/pairs/rows/" + json.dumps([1, "x"])).json()["deleted"] == 1
    assert news.query("SELECT a, b, v FROM pairs") == [(1, "y", 21)]


def test_tables_lists_columns_and_keys(news, api):
    tables = {t["name"]: t for t in api.get("/tables").json()["tables"]}
    assert set(tables) == {"users", "stories", "votes", "comments"}
    assert tables["users"]["primary_key"] == ["id"]
    assert tables["votes"]["primary_key"] == []
    assert [c["name"] for c in tables["stories"]["columns"]] == [
        "id", "author", "title", "url", "created_at"]
    assert tables["stories"]["columns"][3]["nullable"] is True


def test_json_values_round_trip(tmp_path):
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE m (id INT PRIMARY KEY, price DECIMAL(10,2), at DATETIME, "
                   "day DATE, ok BOOLEAN, x DOUBLE, raw VARBINARY(8))")
        db.execute("CREATE VIEW one AS SELECT price, at, day, ok, x, raw FROM m WHERE id = ?")
        api = client_for(db)
        r = api.post("/tables/m/rows", json=[[1, "19.5", "2024-03-01T10:20:30", "2024-03-01",
                                              True, 0.25, "ab"]])
        assert r.status_code == 201, r.text
        got = rows_of(api.get("/views/one", params={"key": 1, "min_lsn": r.json()["lsn"]}))
        assert got == [("19.50", "2024-03-01T10:20:30", "2024-03-01", 1, 0.25, "YWI=")]
        stored = db.query("SELECT price, at FROM m WHERE id = ?", [1])[0]
        assert str(stored[0]) == "19.50" and stored[1] == dt.datetime(2024, 3, 1, 10, 20, 30)


# --------------------------------------------------------------------------- /sql


def test_sql_endpoint(news, api):
    lite = sqlite3.connect(":memory:")
    lite.execute("CREATE TABLE votes (user_id INT, story_id INT)")
    lite.executemany("INSERT INTO votes VALUES (?, ?)",
                     news.query("SELECT user_id, story_id FROM votes"))
    sql = "SELECT story_id, COUNT(*) AS n FROM votes WHERE story_id = ? GROUP BY story_id"
    r = api.post("/sql", json={"sql": sql, "params": [2]})
    assert r.json()["columns"] == ["story_id", "n"], r.text
    assert_same_answer(sql, [2], rows_of(r), lite)
    r = api.post("/sql", json={"sql": "INSERT INTO votes VALUES (?, ?), (?, ?)",
                               "params": [1, 2, 3, 2]})
    assert r.json() == {"rowcount": 2, "lsn": news.lsn}, r.text
    lite.executemany("INSERT INTO votes VALUES (?, ?)", [(1, 2), (3, 2)])
    news.settle()
    assert_same_answer(sql, [2], rows_of(api.post("/sql", json={"sql": sql, "params": [2]})), lite)
    # JSON sent as a form (what `curl -d` does) is still read as JSON.
    r = api.post("/sql", content=json.dumps({"sql": sql, "params": [2]}),
                 headers={"content-type": "application/x-www-form-urlencoded"})
    assert_same_answer(sql, [2], rows_of(r), lite)
    # A text body is one statement without parameters; DDL answers rowcount 0.
    r = api.post("/sql", content="CREATE TABLE extra (id INT PRIMARY KEY)",
                 headers={"content-type": "text/plain"})
    assert r.json()["rowcount"] == 0, r.text
    assert news.catalog.table("extra") is not None
    assert api.post("/sql", json={"sql": "DELETE FROM votes WHERE story_id = ?",
                                  "params": [2]}).json()["rowcount"] == lite.execute(
        "DELETE FROM votes WHERE story_id = 2").rowcount


def test_sql_errors(news, api):
    assert_error(api.post("/sql", json={"sql": "SELECT id FROM stories WHERE nope = 1"}), 400,
                 "sql", "nope", "line 1, column")
    assert_error(api.post("/sql", json={"sql": "SELECT id FROM nowhere"}), 400, "sql", "nowhere")
    assert_error(api.post("/sql", json={"sql": "SELEC id FROM stories"}), 400, "sql",
                 "SQL syntax", "near 'SELEC id FROM stories'", "line 1")
    assert_error(api.post("/sql", json={"sql": "SELECT id FROM stories ORDER BY id NULLS LAST"}),
                 400, "sql", "SQL syntax", "NULLS LAST")
    assert_error(api.post("/sql", json={"sql": "SELECT nope(id) FROM stories"}), 400, "sql",
                 "FUNCTION nope does not exist")
    assert_error(api.post("/sql", json={"sql": "SELECT id FROM stories ORDER BY id LIMIT ?",
                                        "params": [1]}), 400, "unsupported_sql", "limit")
    assert_error(api.post("/sql", json={"sql": "SELECT 1; SELECT 2"}), 400, "sql", "one statement")
    assert_error(api.post("/sql", json={"sql": "INSERT INTO users VALUES (?, ?)", "params": [1]}),
                 400, "sql", "2 parameter")
    assert_error(api.post("/sql", json={"sql": "INSERT INTO users VALUES (1, 'dup')"}), 409,
                 "constraint", "duplicate")
    assert_error(api.post("/sql", json={"sql": "DROP VIEW nope"}), 404, "not_found", "nope")
    assert_error(api.post("/sql", json={"sql": "SELECT 1", "params": "1"}), 400, "bad_request",
                 "params")
    assert_error(api.post("/sql", json=["SELECT 1"]), 400, "bad_request")
    assert_error(api.post("/sql", json={"sql": "  "}), 400, "sql", "empty")
    assert_error(api.post("/sql", content=b"\xff\xfe", headers={"content-type": "text/plain"}),
                 400, "bad_request", "UTF-8")


# --------------------------------------------------------------------------- differential


SCHEMA = "CREATE TABLE t (id INT PRIMARY KEY, g INT, n INT, name VARCHAR(8))"
VIEWS = {
    "by_g": "SELECT id, n, name FROM t WHERE g = ?",
    "sum_g": "SELECT g, SUM(n) AS s, COUNT(*) AS c FROM t WHERE g = ? GROUP BY g",
    "top": "SELECT id, n FROM t ORDER BY n DESC, id LIMIT 3",
    "pick": "SELECT id, name FROM t WHERE id IN (?)",
    "above": "SELECT id, n FROM t WHERE n > ? ORDER BY n, id",
}
#: The views as SQLite computes what the API sends: SUM of integers is a DECIMAL (as in
#: MySQL), which the API sends as its string.
LITE_VIEWS = {**VIEWS, "sum_g": "SELECT g, CAST(SUM(n) AS TEXT) AS s, COUNT(*) AS c FROM t "
                                "WHERE g = ? GROUP BY g"}
KEYS = {"by_g": [[0], [1], [2]], "sum_g": [[0], [1], [2]], "top": [[]],
        "pick": [[0, 1, 2], [3], [5, 6, 7, 8]], "above": [[-1], [3], [8]]}

rows_st = st.lists(st.tuples(st.integers(0, 9), st.integers(0, 2), st.integers(-5, 10),
                             st.sampled_from(["a", "b", "c'd", "é"])), min_size=1, max_size=4)
ops_st = st.lists(st.one_of(
    st.tuples(st.just("insert"), rows_st, st.booleans()),
    st.tuples(st.just("patch"), st.integers(0, 9), st.integers(-5, 10)),
    st.tuples(st.just("delete"), st.integers(0, 9)),
    st.tuples(st.just("evict")),
), max_size=12)


def _mirror_insert(lite: sqlite3.Connection, rows: list[tuple]) -> bool:
    try:
        with lite:
            lite.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
        return True
    except sqlite3.IntegrityError:
        return False


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(ops=ops_st, use_min_lsn=st.booleans())
def test_reads_equal_sqlite_after_writes_through_the_api(ops, use_min_lsn):
    with Pair() as pair:
        api = client_for(pair.db)
        assert api.post("/sql", json={"sql": SCHEMA}).status_code == 200
        pair.lite.execute(SCHEMA)
        for name, sql in VIEWS.items():
            assert api.put(f"/views/{name}", content=sql).status_code == 201
        lite = pair.lite
        lite.isolation_level = ""  # transactions for the mirrored inserts
        lsn = 0
        for op in ops:
            if op[0] == "insert":
                rows, as_objects = op[1], op[2]
                body = [dict(zip(("id", "g", "n", "name"), r)) if as_objects else list(r)
                        for r in rows]
                r = api.post("/tables/t/rows", json=body)
                ok = _mirror_insert(lite, rows)
                assert r.status_code == (201 if ok else 409), (r.text, rows)
            elif op[0] == "patch":
                r = api.patch(f"/tables/t/rows/{op[1]}", json={"n": op[2]})
                with lite:
                    exists = lite.execute("SELECT 1 FROM t WHERE id = ?", (op[1],)).fetchone()
                    lite.execute("UPDATE t SET n = ? WHERE id = ?", (op[2], op[1]))
                assert r.status_code == (200 if exists else 404), r.text
            elif op[0] == "delete":
                r = api.delete(f"/tables/t/rows/{op[1]}")
                with lite:
                    gone = lite.execute("DELETE FROM t WHERE id = ?", (op[1],)).rowcount
                assert r.status_code == (200 if gone else 404), r.text
            else:
                pair.db.evict()
                continue
            if r.status_code < 300:
                lsn = max(lsn, r.json()["lsn"])
        extra = {"min_lsn": lsn} if use_min_lsn else {}
        if not use_min_lsn:
            pair.settle()
        for name, sql in LITE_VIEWS.items():
            for params in KEYS[name]:
                got = rows_of(api.get(f"/views/{name}",
                                      params={"key": json.dumps(params), **extra}))
                lite_sql = sql.replace("IN (?)", "IN (" + ", ".join("?" * len(params)) + ")")
                assert_same_answer(lite_sql, params, got, lite, what=f"GET /views/{name}")
        got = rows_of(api.post("/views/by_g/lookup", json=[0, 2]))
        expected = lite.execute("SELECT id, n, name FROM t WHERE g IN (0, 2)").fetchall()
        assert sorted_rows(got) == sorted_rows(expected)
        got = rows_of(api.post("/sql", json={"sql": "SELECT id, g, n, name FROM t WHERE n >= ?",
                                             "params": [0]}))
        assert_same_answer("SELECT id, g, n, name FROM t WHERE n >= ?", [0], got, lite)


# --------------------------------------------------------------------------- /metrics

_SAMPLE = re.compile(
    r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)'
    r'(?P<labels>\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})?'
    r' (?P<value>[-+]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|Inf)|NaN)$'
)
_COMMENT = re.compile(r"^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$")


def parse_metrics(text: str) -> dict[str, float]:
    """Every sample by ``name{labels}``, after checking each line's syntax and that every
    sample belongs to a family declared by a TYPE line."""
    assert text.endswith("\n")
    samples: dict[str, float] = {}
    types: dict[str, str] = {}
    for line in text.splitlines():
        comment = _COMMENT.match(line)
        if comment:
            if comment.group(1) == "TYPE":
                assert comment.group(3) in ("counter", "gauge", "histogram"), line
                types[comment.group(2)] = comment.group(3)
            continue
        m = _SAMPLE.match(line)
        assert m, f"not a Prometheus sample line: {line!r}"
        name = m.group("name")
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in types else name
        assert family in types, f"sample {name} has no TYPE line"
        key = name + (m.group("labels") or "")
        assert key not in samples, f"duplicate sample {key}"
        samples[key] = float(m.group("value"))
    return samples


def test_metrics_parse_and_move(news, api):
    r = api.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    before = parse_metrics(r.text)
    for view in news.views():
        assert f'rivulet_view_memory_bytes{{view="{view}"}}' in before
        assert before[f'rivulet_view_partial{{view="{view}"}}'] == int(news.view(view).partial)
    assert before["rivulet_memory_bytes"] == news.stats()["memory_bytes"]
    assert before["rivulet_lsn"] == news.lsn
    # Hits: a key already in memory, read twice.
    view = news.view("StoriesWithVC")
    view.lookup(1)
    view.lookup(1)
    before = parse_metrics(api.get("/metrics").text)
    api.get("/views/StoriesWithVC", params={"key": 1})
    api.get("/views/StoriesWithVC", params={"key": 1})
    after_hits = parse_metrics(api.get("/metrics").text)
    v = '{view="StoriesWithVC"}'
    assert after_hits["rivulet_hits_total"] == before["rivulet_hits_total"] + 2
    assert after_hits["rivulet_reads_total"] == before["rivulet_reads_total"] + 2
    assert after_hits[f"rivulet_view_hits_total{v}"] == before[f"rivulet_view_hits_total{v}"] + 2
    assert after_hits[f"rivulet_view_reads_total{v}"] == before[f"rivulet_view_reads_total{v}"] + 2
    # Misses, upqueries and evictions: evict, then read again.
    news.evict("StoriesWithVC")
    api.get("/views/StoriesWithVC", params={"key": 1})
    after_miss = parse_metrics(api.get("/metrics").text)
    assert after_miss["rivulet_evictions_total"] > after_hits["rivulet_evictions_total"]
    assert (after_miss[f"rivulet_view_misses_total{v}"]
            == after_hits[f"rivulet_view_misses_total{v}"] + 1)
    assert after_miss["rivulet_misses_total"] == after_hits["rivulet_misses_total"] + 1
    assert after_miss["rivulet_upqueries_total"] > after_hits["rivulet_upqueries_total"]
    # Writes, and the write-to-visible lag histogram.
    lag = "rivulet_write_visible_lag_seconds"
    api.post("/tables/votes/rows", json=[[1, 1], [2, 1]])
    news.settle()
    after_write = parse_metrics(api.get("/metrics").text)
    assert after_write["rivulet_writes_total"] == after_miss["rivulet_writes_total"] + 1
    assert after_write["rivulet_rows_written_total"] == after_miss["rivulet_rows_written_total"] + 2
    assert after_write[f"{lag}_count"] == after_miss[f"{lag}_count"] + 1
    assert after_write[f'{lag}_bucket{{le="+Inf"}}'] == after_write[f"{lag}_count"]
    assert after_write[f"{lag}_sum"] > after_miss[f"{lag}_sum"]
    buckets = [val for key, val in after_write.items() if key.startswith(f"{lag}_bucket")]
    assert buckets == sorted(buckets)  # cumulative
    assert after_write["rivulet_applied_lsn"] == after_write["rivulet_lsn"] == news.lsn
    served = 'rivulet_http_requests_total{endpoint="read_view",method="GET",status="200"}'
    assert after_write[served] == 3


def test_metrics_memory_limit_gauge(tmp_path):
    with rivulet.open(tmp_path / "db", memory_limit="8MB") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        samples = parse_metrics(client_for(db).get("/metrics").text)
        assert samples["rivulet_memory_limit_bytes"] == 8 * 1024 * 1024 or \
            samples["rivulet_memory_limit_bytes"] == 8_000_000


# --------------------------------------------------------------------------- /graph


def test_graph_dot_marks_every_node(news, api):
    news.execute("CREATE VIEW Titles AS SELECT title FROM stories WHERE id = ?")
    news.execute("""CREATE VIEW Odd AS SELECT id FROM stories WHERE title <> 'say "hi" \\\\ now'""")
    r = api.get("/graph")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/vnd.graphviz")
    dot = r.text
    assert dot.startswith("digraph rivulet {") and dot.rstrip().endswith("}")
    lines = {int(m.group(1)): m.group(2) for m in re.finditer(r"^  n(\d+) \[(.*)\];$", dot, re.M)}
    graph = news.graph
    assert set(lines) == set(graph.nodes)
    quoted = r'"(?:[^"\\\n]|\\.)*"'
    attr = re.compile(rf"^label={quoted}(, [a-z]+=(?:{quoted}|[a-z0-9.]+))*$")
    for node_id, attrs in lines.items():
        assert attr.match(attrs), f"malformed attributes of n{node_id}: {attrs}"
    assert any('say \\"hi\\"' in a for a in lines.values())
    for node_id, node in graph.nodes.items():
        for parent in set(node.op.parents):
            assert f"  n{parent} -> n{node_id};" in dot
        attrs = lines[node_id]
        shared = len(node.users) > 1
        assert (f"shared by {len(node.users)} views" in attrs) == shared, attrs
        assert ('fillcolor="#ffe9a8"' in attrs) == shared
    readers = {b.reader_node: b.plan.name for b in news.built_views()}
    for node_id, name in readers.items():
        assert f"view {name}" in lines[node_id] or f"query {name}" in lines[node_id]
        state = news.core.built[name.lower()].state
        assert ("dashed" in lines[node_id]) == state.partial
        assert ("partial on" in lines[node_id]
                or "partial (whole" in lines[node_id]) == state.partial
    # State: partial dashed, full bold with its reason (the front page's top-k has no key
    # to be partial on), none plain.
    from rivulet.dataflow.ops.reader import Reader

    kinds = set()
    for node_id, node in graph.nodes.items():
        op = node.op
        state = op.state if isinstance(op, Reader) else op if op.stateful else None
        kind = "none" if state is None else "partial" if state.partial else "full"
        kinds.add(kind)
        attrs = lines[node_id]
        assert ("dashed" in attrs) == (kind == "partial"), attrs
        assert ("penwidth=2.0" in attrs) == (kind == "full"), attrs
        assert ("\\nfull (" in attrs) == (kind == "full"), attrs
    assert kinds == {"none", "partial", "full"}
    # Titles shares the stories base with every other view that reads it.
    base = graph.bases["stories"]
    assert f"shared by {len(graph.nodes[base].users)} views" in lines[base]
    assert len(graph.nodes[base].users) > 1


def test_graph_svg(news, api, tmp_path, monkeypatch):
    assert_error(api.get("/graph", params={"format": "png"}), 400, "bad_request", "png")
    if shutil.which("dot"):
        r = api.get("/graph", params={"format": "svg"})
        assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml"
        assert b"<svg" in r.content and b"StoriesWithVC" in r.content
    cat = shutil.which("cat")
    # Without Graphviz: 501 saying how to get it.
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert_error(api.get("/graph", params={"format": "svg"}), 501, "unavailable", "graphviz")
    # With a stand-in `dot` that wraps its input: the dot text is what gets rendered.
    fake = tmp_path / "bin"
    fake.mkdir()
    script = fake / "dot"
    script.write_text(f'#!/bin/sh\n[ "$1" = "-Tsvg" ] || exit 3\necho "<svg><!--"\n'
                      f'{cat}\necho "--></svg>"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{empty}")
    r = api.get("/graph", params={"format": "svg"})
    assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml"
    assert r.text.startswith("<svg><!--") and "digraph rivulet {" in r.text
    assert "view StoriesWithVC" in r.text


# --------------------------------------------------------------------------- /verify


class FakeReport:
    def __init__(self, views: list[str]) -> None:
        self.views = views

    def to_dict(self) -> dict[str, Any]:
        return {"ok": True, "views": self.views}


def test_verify_calls_the_verifier(news):
    calls: list[Any] = []

    def verify(db: rivulet.Database, views: list[str] | None) -> FakeReport:
        calls.append((db, views))
        return FakeReport(views or db.views())

    api = client_for(news, verify=verify)
    r = api.post("/verify", json=["frontpage", "Karma"])
    assert r.json() == {"ok": True, "views": ["FrontPage", "Karma"]}, r.text
    assert calls == [(news, ["FrontPage", "Karma"])]
    r = api.post("/verify")
    assert r.json()["views"] == news.views() and calls[-1] == (news, None)
    # The form `rivulet verify --server` sends; an empty list means every view.
    assert api.post("/verify", json={"views": ["karma"]}).json()["views"] == ["Karma"]
    assert api.post("/verify", json={"views": []}).json()["views"] == news.views()
    assert calls[-1] == (news, None)
    assert_error(api.post("/verify", json=["FrontPage", "Nope"]), 404, "not_found", "Nope")
    assert_error(api.post("/verify", json={"view": ["Karma"]}), 400, "bad_request", "view names")
    assert_error(api.post("/verify", json=[1]), 400, "bad_request", "view names")
    assert len(calls) == 4


@pytest.mark.spark
def test_verify_on_spark_through_the_cli(news, spark, capsys):
    """The real verifier behind POST /verify, asked by `rivulet verify --server URL`; a
    reader entry corrupted behind the engine's back is reported with its key."""
    from rivulet.cli import main

    for key in (1, 2, 3):
        news.view("StoriesWithVC").lookup(key)
    server = serve_http(make_app(news), port=0)
    try:
        assert main(["verify", "--server", server.url, "--json", "StoriesWithVC", "Karma"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["ok"] and report["lsn"] == news.lsn
        assert [v["view"] for v in report["views"]] == ["StoriesWithVC", "Karma"]
        stories = report["views"][0]
        assert (stories["keys_held"], stories["filled_checked"]) == (3, 3)
        assert stories["unfilled_checked"] == 21 and not stories["checked_nothing"]
        entry = news.core.built["storieswithvc"].state.entries[2]
        entry.result = ((2, 0, "wrong", None, -1),)  # what a hit would now serve
        assert main(["verify", "--server", server.url, "StoriesWithVC"]) == 1
        out = capsys.readouterr().out
        assert "key 2: differs" in out
        assert "StoriesWithVC (partial, holds 24 keys; checked 24 filled, 20 unfilled)" in out
    finally:
        server.stop()


def test_verify_without_spark_verifier_is_503(news, api, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "rivulet.pipeline.verify", None)  # import fails
    assert_error(api.post("/verify"), 503, "unavailable", "verification")


# --------------------------------------------------------------------------- never a 500

paths = st.sampled_from([
    "/views/StoriesWithVC", "/views/FrontPage", "/views/RecentStories", "/views/Nope",
    "/views/StoriesWithVC/lookup", "/views/StoriesWithVC/rows", "/tables/users/rows",
    "/tables/users/rows/1", "/tables/votes/rows/x", "/tables/nope/rows", "/sql", "/verify",
    "/graph", "/views/%00", "/tables/users/rows/%5B1%2C",
])
bodies = st.one_of(
    st.binary(max_size=40),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) |
                 st.text(max_size=10), lambda c: st.lists(c, max_size=4) |
                 st.dictionaries(st.text(max_size=5), c, max_size=3),
                 max_leaves=8).map(json.dumps).map(str.encode),
)
queries = st.dictionaries(st.sampled_from(["key", "block", "limit", "min_lsn", "format"]),
                          st.text(max_size=8), max_size=3)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          deadline=None)
@given(method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]), path=paths,
       body=bodies, query=queries)
def test_bad_input_never_gets_a_500(news, method, path, body, query):
    if method in ("PUT", "DELETE") and path.startswith("/views/") and path.count("/") == 2:
        path = "/views/Scratch"  # do not drop or replace the news views
    api = client_for(news, verify=lambda db, views: FakeReport(views or []))  # no Spark here
    r = api.request(method, path, params=query, content=body)
    assert r.status_code < 500 or r.status_code in (501, 503), r.text
    assert r.headers["content-type"].split(";")[0] in (
        "application/json", "text/plain", "text/vnd.graphviz", "image/svg+xml"), r.headers
    if r.status_code >= 400:
        assert set(r.json()) == {"error", "kind"} and r.json()["error"]


def test_oversized_bodies_get_413(news):
    api = client_for(news, max_body=1000)
    rows = [[10_000 + i, "x" * 20] for i in range(100)]
    assert_error(api.post("/tables/users/rows", json=rows), 413, "too_large", "1000 bytes")

    def chunks():
        for _ in range(20):
            yield b" " * 100

    assert_error(api.post("/sql", content=chunks()), 413, "too_large")
    assert api.post("/tables/users/rows", json=rows[:5]).status_code == 201
    assert len(news.query("SELECT id FROM users WHERE id >= ?", [10_000])) == 5


def test_verify_failure_is_reported(news):
    def verify(db: rivulet.Database, views: list[str] | None) -> FakeReport:
        raise RuntimeError("java is missing")

    assert_error(client_for(news, verify=verify).post("/verify"), 500, "verify_failed",
                 "java is missing")


def test_reserved_view_name_is_bad_input(news, api):
    assert_error(api.put("/views/_rivulet_mine", content="SELECT id FROM stories"), 400,
                 "bad_request", "reserved")


# --------------------------------------------------------------------------- threads, runner


def test_a_held_upquery_does_not_block_other_requests(news):
    # A view partial down to its base table: a miss reaches storage, where the hook holds it.
    news.execute("CREATE VIEW Title AS SELECT title FROM stories WHERE id = ?")
    news.evict()  # every cache, the base table's join index included
    server = serve_http(make_app(news), port=0)
    try:
        entered, release = threading.Event(), threading.Event()

        def hold() -> None:
            entered.set()
            release.wait(10)

        news.hooks["upquery_answer"] = hold
        result: dict[str, Any] = {}

        def read() -> None:
            result["r"] = httpx.get(f"{server.url}/views/Title", params={"key": 5}, timeout=20)

        reader = threading.Thread(target=read)
        reader.start()
        assert entered.wait(10)
        t0 = time.perf_counter()
        health = httpx.get(f"{server.url}/health", timeout=5)
        blocked = httpx.get(f"{server.url}/views/Karma", params={"key": 2, "block": "false"},
                            timeout=5)
        elapsed = time.perf_counter() - t0
        assert health.status_code == 200 and blocked.status_code in (200, 202)
        assert elapsed < 1.0, elapsed
        assert reader.is_alive()  # still held
        del news.hooks["upquery_answer"]
        release.set()
        reader.join(10)
        assert rows_of(result["r"]) == [("Story 5",)]
    finally:
        release.set()
        server.stop()
    assert not server.thread.is_alive()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{server.url}/health", timeout=2)


def test_keep_alive_responses_are_not_delayed(news):
    """Regression: the listening socket once lacked TCP_NODELAY on its connections, and
    every keep-alive response waited ~40 ms for a delayed ACK."""
    import http.client

    server = serve_http(make_app(news), port=0)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port)
        times = []
        for _ in range(21):
            t0 = time.perf_counter()
            conn.request("GET", "/views/StoriesWithVC?key=1")
            assert conn.getresponse().read()
            times.append(time.perf_counter() - t0)
        conn.close()
    finally:
        server.stop()
    assert sorted(times)[10] < 0.02, sorted(times)


def test_serve_http_reports_a_busy_port(news):
    first = serve_http(make_app(news), port=0)
    try:
        assert httpx.get(f"{first.url}/health").json()["status"] == "ok"
        with pytest.raises(OSError, match=str(first.port)):
            serve_http(make_app(news), port=first.port, start_timeout=5)
    finally:
        first.stop()


def test_concurrent_clients_equal_sqlite_after_settling(tmp_path):
    with Pair(str(tmp_path / "db")) as pair:
        pair.execute(SCHEMA)
        pair.create_view("by_g", VIEWS["by_g"])
        server = serve_http(make_app(pair.db), port=0)
        errors: list[BaseException] = []

        def worker(w: int) -> None:
            try:
                with httpx.Client(base_url=server.url, timeout=30) as c:
                    for i in range(25):
                        row = [w * 100 + i, i % 3, i, f"w{w}"]
                        assert c.post("/tables/t/rows", json=[row]).status_code == 201
                        assert c.get("/views/by_g", params={"key": i % 3}).status_code == 200
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        server.stop()
        assert not errors, errors
        pair.lite.executemany("INSERT INTO t VALUES (?, ?, ?, ?)",
                              [(w * 100 + i, i % 3, i, f"w{w}")
                               for w in range(8) for i in range(25)])
        pair.settle()
        api = client_for(pair.db)
        for g in range(3):
            assert_same_answer(VIEWS["by_g"], [g],
                               rows_of(api.get("/views/by_g", params={"key": g})), pair.lite)
