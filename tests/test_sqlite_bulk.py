"""Rows read in one step and written in one statement (rivulet/storage/sqlite_bulk.py)
against SQLite's own row-by-row answers: every value as stored, in SQLite's order."""

from __future__ import annotations

import sqlite3

import pytest

from rivulet.storage.sqlite_bulk import MAX_ROWS, fetch_at_once, insert_at_once, slices

VALUES = [None, 0, -1, 2**63 - 1, -(2**63), 7, "", "a", "B", "é", "日本", "a\"b\n\u0000c",
          "10", "9", " x"]


@pytest.fixture
def conn() -> sqlite3.Connection:
    c = sqlite3.connect(":memory:", isolation_level=None)
    c.execute("CREATE TABLE t (k, v)")  # no affinity: each value stays as bound
    yield c
    c.close()


@pytest.mark.parametrize("kind", ["integers", "texts", "mixed"])
def test_integers_text_and_null_come_back_exactly_and_sorted_as_sqlite_sorts(
        conn: sqlite3.Connection, kind: str) -> None:
    """Integers alone and texts alone are sorted in Python; kinds mixed, or NULL, are read
    again in SQLite's order."""
    keys = [k for k in VALUES if kind == "mixed" or type(k) is {"integers": int,
                                                                 "texts": str}[kind]]
    conn.executemany("INSERT INTO t VALUES (?, ?)",
                     [(k, v) for k in keys for v in (k, 1) if v is not None])
    sql = "SELECT k, v FROM t ORDER BY k, v"
    expected = conn.execute(sql).fetchall()
    got = fetch_at_once(conn, sql, (), 2, sorted_by=1 if kind != "mixed" else 2)
    assert sorted(got, key=repr) == sorted(expected, key=repr)
    assert [r[0] for r in got] == [r[0] for r in expected]
    assert [tuple(map(type, r)) for r in sorted(got, key=repr)] == [
        tuple(map(type, r)) for r in sorted(expected, key=repr)]
    limited = "SELECT k FROM t WHERE k > ? ORDER BY k LIMIT ?"
    bound = (0 if kind != "texts" else "", 5)
    assert fetch_at_once(conn, limited, bound, 1, sorted_by=1) == conn.execute(
        limited, bound).fetchall()


@pytest.mark.parametrize("odd", [0.1, 1e300, -0.0, 2.0**60 + 0.5, b"\x00\xff", b""])
def test_a_real_or_a_blob_is_read_again_row_by_row(conn: sqlite3.Connection, odd) -> None:
    """JSON prints a REAL with 15 digits and holds no BLOB: such rows are read as stored."""
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(1, "x"), (2, odd), (3, 5)])
    sql = "SELECT k, v FROM t ORDER BY k"
    got = fetch_at_once(conn, sql, (), 2, sorted_by=1)
    assert got == conn.execute(sql).fetchall()
    assert type(got[1][1]) is type(odd)


def test_many_rows_go_in_by_slices_of_bound_parameters(conn: sqlite3.Connection) -> None:
    rows = [(i, VALUES[i % len(VALUES)]) for i in range(40_000)]  # 80,000 parameters
    insert_at_once(conn, "t", ["k", "v"], rows)
    assert conn.execute("SELECT k, v FROM t ORDER BY k").fetchall() == rows


def test_an_insert_statement_that_fails_stores_none_of_its_rows(
        conn: sqlite3.Connection) -> None:
    """(Several statements are undone together by the caller's savepoint, as
    SqliteStorage.insert's.)"""
    conn.execute("CREATE TABLE u (k INTEGER PRIMARY KEY)")
    with pytest.raises(sqlite3.IntegrityError):
        insert_at_once(conn, "u", ["k"], [(1,), (2,), (3,), (1,)])  # one slice of 4
    assert conn.execute("SELECT COUNT(*) FROM u").fetchone() == (0,)


@pytest.mark.parametrize("width", [1, 3, 200])
def test_slices_are_powers_of_two_within_the_limits(width: int) -> None:
    """Few statement sizes: each compiled statement stays in sqlite3's cache."""
    rows = [(0,) * width] * 3001
    parts = slices(rows, width)
    assert sum(len(p) for p in parts) == 3001
    assert all(len(p) & (len(p) - 1) == 0 and len(p) <= MAX_ROWS for p in parts)
    assert all(len(p) * width <= 32766 for p in parts)
    assert len({len(p) for p in parts}) <= 10
