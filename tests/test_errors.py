"""Error paths of the SQL front end, the write path and storage.

Every test checks three things:

(a) the exception class,
(b) a message that names the problem (for SQL errors also the construct, and ``.line`` /
    ``.col`` pointing at it when sqlglot located a token of it), and
(c) that nothing changed: LSN, program (views, tables, stored program statements), stored
    rows (read straight from the SQLite file), every view's answer after ``settle()``, the
    number of dataflow nodes; then again after close and reopen (LSN, program, stored rows).

View answers *after* a reopen are checked in tests/test_durability.py, not here, so that
a restart bug does not hide what these tests are about.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import rivulet
from rivulet import (
    ClosedError,
    ConstraintError,
    ProgramError,
    RivuletError,
    SchemaError,
    SqlError,
    UnsupportedSqlError,
)
from rivulet.errors import NoTableToDropError, ObjectExistsError, SqlSyntaxError

PROGRAM = """
CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(5) NOT NULL, n INT, g INT);
CREATE TABLE u (id INT PRIMARY KEY, tid INT, n INT);
CREATE TABLE kv (k1 INT, k2 VARCHAR(10), v INT, PRIMARY KEY (k1, k2));
CREATE VIEW by_g AS SELECT id, name, n FROM t WHERE g = ?;
CREATE VIEW per_g AS SELECT g, COUNT(*) AS c, SUM(n) AS s FROM t GROUP BY g;
CREATE VIEW joined AS SELECT t.id, u.id AS uid, u.n FROM t JOIN u ON t.id = u.tid;
CREATE VIEW all_t AS SELECT * FROM t;
CREATE VIEW all_kv AS SELECT * FROM kv;
"""

T_ROWS = [(1, "a", 10, 1), (2, "b", 20, 1), (3, "c", 30, 2), (4, "d", None, None)]
U_ROWS = [(10, 1, 5), (11, 1, 6), (12, 3, 7)]
KV_ROWS = [(1, "x", 1), (1, "y", 2), (2, "x", 3)]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "db"


@pytest.fixture
def db(path: Path):
    d = rivulet.open(path)
    d.execute_script(PROGRAM)
    d.table("t").insert_many(T_ROWS)
    d.table("u").insert_many(U_ROWS)
    d.table("kv").insert_many(KV_ROWS)
    d.settle()
    yield d
    d.close()


def stored(path: Path) -> dict[str, Any]:
    """What is in the SQLite file: every user table's rows, the program, the last LSN."""
    conn = sqlite3.connect(f"file:{path / 'rivulet.db'}?mode=ro", uri=True)
    try:
        names = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not r[0].startswith(("_rivulet", "sqlite_"))
        ]
        out: dict[str, Any] = {
            "tables": {n: Counter(conn.execute(f'SELECT * FROM "{n}"').fetchall()) for n in names},
            "program": conn.execute(
                "SELECT kind, name, sql FROM _rivulet_program ORDER BY seq"
            ).fetchall(),
            "log_lsn": conn.execute("SELECT MAX(lsn) FROM _rivulet_log").fetchone()[0],
        }
    finally:
        conn.close()
    return out


def live(db: rivulet.Database) -> dict[str, Any]:
    """What the running database answers, after settle()."""
    db.settle()
    return {
        "lsn": db.lsn,
        "views": sorted(db.views()),
        "nodes": db.stats()["nodes"],
        "by_g": {g: Counter(db.view("by_g").lookup(g)) for g in (1, 2, 3, None)},
        "per_g": Counter(db.view("per_g").scan()),
        "joined": Counter(db.view("joined").scan()),
        "all_t": Counter(db.view("all_t").scan()),
        "all_kv": Counter(db.view("all_kv").scan()),
    }


def expect_unchanged(db: rivulet.Database, path: Path, action: Callable[[], Any],
                     exc: type[BaseException] | tuple[type[BaseException], ...],
                     *words: str) -> BaseException:
    """Run ``action``: it must raise ``exc`` with every word of ``words`` in its message
    (case-insensitive), and change nothing, live or stored (also after a reopen)."""
    before_live = live(db)
    before_stored = stored(path)
    with pytest.raises(exc) as info:
        action()
    # State first: a rejected statement that changed something is the worse bug.
    assert live(db) == before_live, "a rejected statement changed the running database"
    assert stored(path) == before_stored, "a rejected statement changed storage"
    db.close()
    reopened = rivulet.open(path)
    try:
        assert reopened.lsn == before_live["lsn"]
        assert sorted(reopened.views()) == before_live["views"]
        assert stored(path) == before_stored
    finally:
        reopened.close()
    message = str(info.value).lower()
    for w in words:
        assert w.lower() in message, f"{w!r} not in error message {str(info.value)!r}"
    return info.value


def assert_located(error: SqlError, sql: str, token: str) -> None:
    """``error.line``/``.col`` point into ``token`` (sqlglot columns are 1-based and mark a
    token's end; a position anywhere from its start to its end is accepted)."""
    assert error.line is not None and error.col is not None, f"no position in {error}"
    lines = sql.split("\n")
    assert 1 <= error.line <= len(lines)
    text = lines[error.line - 1]
    spans = []
    start = text.find(token)
    while start >= 0:
        spans.append((start + 1, start + len(token)))
        start = text.find(token, start + 1)
    assert spans, f"{token!r} is not on line {error.line} ({text!r}) where the error points"
    assert any(lo <= error.col <= hi for lo, hi in spans), (
        f"column {error.col} of line {error.line} ({text!r}) is not inside {token!r}"
    )


def assert_somewhere(error: SqlError, sql: str) -> None:
    assert error.line is not None and error.col is not None, f"no position in {error}"
    lines = sql.split("\n")
    assert 1 <= error.line <= len(lines)
    assert 1 <= error.col <= len(lines[error.line - 1]) + 1


# --------------------------------------------------------------------------- syntax

SYNTAX = [
    "SELEC id FROM t",
    "SELECT id FROM t WHERE",
    "SELECT id FROM t WHERE id = = 1",
    "SELECT id,, name FROM t",
    "INSERT INTO t VALUES (1, 'a'",
]


@pytest.mark.parametrize("sql", SYNTAX)
def test_syntax_error(db, path, sql):
    err = expect_unchanged(db, path, lambda: db.execute(sql), SqlSyntaxError, "SQL syntax")
    assert not isinstance(err, UnsupportedSqlError)
    assert_somewhere(err, sql)


def test_syntax_error_located_on_later_line(db, path):
    sql = "SELECT id,\n  name\nFROM t\nWHERE id = = 3"
    err = expect_unchanged(db, path, lambda: db.execute(sql), SqlSyntaxError, "SQL syntax")
    assert err.line == 4


def test_syntax_error_in_query(db, path):
    expect_unchanged(db, path, lambda: db.query("SELEC id FROM t WHERE id = ?", (1,)),
                     SqlSyntaxError, "SQL syntax")


def test_syntax_error_in_create_view(db, path):
    expect_unchanged(db, path, lambda: db.execute("CREATE VIEW w AS SELEC id FROM t"),
                     SqlSyntaxError, "SQL syntax")


def test_unterminated_string(db, path):
    expect_unchanged(db, path, lambda: db.execute("SELECT id FROM t WHERE name = 'abc"),
                     SqlError)


def test_several_statements_to_execute(db, path):
    expect_unchanged(
        db, path,
        lambda: db.execute(
            "INSERT INTO t VALUES (7, 'x', 1, 1); INSERT INTO t VALUES (8, 'y', 1, 1)"),
        SqlError, "statement",
    )


# --------------------------------------------------------------------------- unknown names

UNKNOWN_TABLE = [
    ("SELECT id FROM nosuch", "nosuch"),
    ("SELECT t.id FROM t JOIN nosuch ON t.id = nosuch.tid", "nosuch"),
    ("INSERT INTO nosuch VALUES (1)", "nosuch"),
    ("UPDATE nosuch SET a = 1", "nosuch"),
    ("DELETE FROM nosuch WHERE a = 1", "nosuch"),
    ("SELECT nosuch.id FROM t", "nosuch.id"),
]


@pytest.mark.parametrize("sql,token", UNKNOWN_TABLE)
def test_unknown_table(db, path, sql, token):
    err = expect_unchanged(db, path, lambda: db.execute(sql), SqlError, token)
    assert_located(err, sql, token)


def test_unknown_table_in_create_view(db, path):
    sql = "CREATE VIEW w AS SELECT id FROM nosuch WHERE id = ?"
    err = expect_unchanged(db, path, lambda: db.execute(sql), SqlError, "nosuch")
    assert_located(err, sql, "nosuch")


def test_unknown_table_handle(db, path):
    expect_unchanged(db, path, lambda: db.table("nosuch"), ProgramError, "nosuch")


def test_unknown_view_handle(db, path):
    expect_unchanged(db, path, lambda: db.view("nosuch"), ProgramError, "nosuch")


UNKNOWN_COLUMN = [
    # SELECT list
    ("SELECT nosuch FROM t", "nosuch"),
    ("SELECT id, t.nosuch FROM t", "nosuch"),
    # WHERE
    ("SELECT id FROM t WHERE nosuch = 1", "nosuch"),
    ("SELECT id FROM t WHERE nosuch = ?", "nosuch"),
    # JOIN ON
    ("SELECT t.id FROM t JOIN u ON t.id = u.nosuch", "nosuch"),
    # GROUP BY / ORDER BY
    ("SELECT COUNT(*) FROM t GROUP BY nosuch", "nosuch"),
    ("SELECT id FROM t ORDER BY nosuch LIMIT 2", "nosuch"),
    # INSERT column list
    ("INSERT INTO t (id, nosuch) VALUES (5, 1)", "nosuch"),
    # UPDATE SET (target and value) and UPDATE WHERE
    ("UPDATE t SET nosuch = 1 WHERE id = 1", "nosuch"),
    ("UPDATE t SET n = nosuch + 1 WHERE id = 1", "nosuch"),
    ("UPDATE t SET n = 1 WHERE nosuch = 1", "nosuch"),
    # DELETE WHERE
    ("DELETE FROM t WHERE nosuch = 1", "nosuch"),
]


@pytest.mark.parametrize("sql,token", UNKNOWN_COLUMN)
def test_unknown_column(db, path, sql, token):
    err = expect_unchanged(db, path, lambda: db.execute(sql, (1,) if "?" in sql else ()),
                           SqlError, token, "column")
    assert not isinstance(err, UnsupportedSqlError)
    assert_located(err, sql, token)


def test_unknown_column_located_on_later_line(db, path):
    sql = "SELECT id,\n       name\nFROM t\nWHERE g = 1\n  AND nosuch > 2"
    err = expect_unchanged(db, path, lambda: db.execute(sql), SqlError, "nosuch")
    assert err.line == 5
    assert_located(err, sql, "nosuch")


def test_unknown_column_in_create_view(db, path):
    sql = "CREATE VIEW w AS SELECT id, nosuch FROM t WHERE g = ?"
    err = expect_unchanged(db, path, lambda: db.execute(sql), SqlError, "nosuch")
    assert_located(err, sql, "nosuch")


def test_unknown_column_in_query(db, path):
    sql = "SELECT id FROM t WHERE nosuch = ?"
    err = expect_unchanged(db, path, lambda: db.query(sql, (1,)), SqlError, "nosuch")
    assert_located(err, sql, "nosuch")


def test_unknown_column_in_table_update(db, path):
    expect_unchanged(db, path, lambda: db.table("t").update("id = ?", [1], nosuch=3),
                     SqlError, "nosuch")


def test_unknown_column_in_table_delete(db, path):
    expect_unchanged(db, path, lambda: db.table("t").delete("nosuch = ?", [1]),
                     SqlError, "nosuch")


def test_unknown_column_in_dict_insert(db, path):
    expect_unchanged(
        db, path,
        lambda: db.table("t").insert_many(
            [{"id": 7, "name": "x"}, {"id": 8, "name": "y", "nosuch": 1}]),
        SchemaError, "nosuch",
    )


AMBIGUOUS = [
    ("SELECT n FROM t JOIN u ON t.id = u.tid", "n"),
    ("SELECT t.id FROM t JOIN u ON t.id = u.tid WHERE n = 1", "n"),
    ("SELECT t.id FROM t JOIN u ON id = tid", "id"),
    ("SELECT t.id FROM t JOIN u ON t.id = u.tid WHERE id = ?", "id"),
]


@pytest.mark.parametrize("sql,token", AMBIGUOUS)
def test_ambiguous_column(db, path, sql, token):
    err = expect_unchanged(db, path, lambda: db.execute(sql, (1,) if "?" in sql else ()),
                           SqlError, "ambiguous", repr(token))
    assert_located(err, sql, token)


# --------------------------------------------------------------------------- unsupported SQL

UNSUPPORTED = [
    ("SELECT t.id FROM t RIGHT JOIN u ON t.id = u.tid", ("right",), True),
    ("SELECT t.id FROM t FULL JOIN u ON t.id = u.tid", ("full",), True),
    ("SELECT t.id FROM t NATURAL JOIN u", ("natural",), True),
    ("SELECT id, ROW_NUMBER() OVER (ORDER BY id) FROM t", ("window",), True),
    ("SELECT id, SUM(n) OVER (PARTITION BY g) FROM t", ("window",), True),
    ("SELECT id FROM t WHERE id IN (SELECT tid FROM u LIMIT 1)", ("subquery", "limit"), True),
    # (correlated by other than =: refused where the outer column's NULL is not rejected)
    ("SELECT id FROM t WHERE n = (SELECT MAX(n) FROM u WHERE u.tid > t.g OR t.g IS NULL)",
     ("scalar subquery", "equality"), True),
    ("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.tid <=> t.g)", ("exists",), True),
    ("SELECT id, ? FROM t", ("?",), False),
    ("SELECT t.id FROM t JOIN u ON t.id = u.tid AND u.n = ?", ("?", "join"), True),
    ("SELECT id FROM t WHERE id IN (SELECT tid FROM u LIMIT ?)", ("?", "subquery"), False),
    ("INSERT INTO t SELECT id, 'x', n, tid FROM u", ("insert", "select"), True),
    # (run, they would answer a count where the client asked for rows)
    ("DELETE FROM t WHERE id = 1 RETURNING id", ("delete", "returning"), True),
    ("UPDATE t SET n = 5 WHERE id = 1 RETURNING id", ("update", "returning"), True),
    ("SELECT id, n > ALL (SELECT n FROM u WHERE u.tid > t.g OR t.g IS NULL) FROM t",
     ("> all subquery", "equality"), True),
    ("SELECT id FROM t WHERE n < ANY (SELECT n FROM u) OR g IN (SELECT tid FROM u "
     "WHERE u.n = t.n GROUP BY tid)", ("in subquery", "group by"), True),
    ("SELECT id FROM u WHERE n > ALL (SELECT name FROM t)", ("> all", "max"), True),
]


@pytest.mark.parametrize("sql,words,located", UNSUPPORTED)
def test_unsupported_construct(db, path, sql, words, located):
    params = (1,) * sql.count("?")
    err = expect_unchanged(db, path, lambda: db.execute(sql, params), UnsupportedSqlError, *words)
    if located:
        assert_somewhere(err, sql)


@pytest.mark.parametrize("sql,words,located", UNSUPPORTED[:11])
def test_unsupported_construct_in_create_view(db, path, sql, words, located):
    expect_unchanged(db, path, lambda: db.execute(f"CREATE VIEW w AS {sql}"),
                     UnsupportedSqlError, *words)


@pytest.mark.parametrize("sql,words,located", UNSUPPORTED[:11])
def test_unsupported_construct_in_query(db, path, sql, words, located):
    params = (1,) * sql.count("?")
    expect_unchanged(db, path, lambda: db.query(sql, params), UnsupportedSqlError, *words)


def test_right_join_error_located_on_its_line(db, path):
    sql = "SELECT t.id\nFROM t\nRIGHT JOIN u ON t.id = u.tid"
    err = expect_unchanged(db, path, lambda: db.execute(sql), UnsupportedSqlError, "right")
    assert err.line == 3


# --------------------------------------------------------------------------- bad values

def test_string_into_int(db, path):
    err = expect_unchanged(db, path, lambda: db.execute("INSERT INTO t VALUES ('abc', 'x', 1, 1)"),
                           SchemaError, "'abc'", "id")
    assert "int" in str(err).lower()


def test_string_into_int_as_parameter(db, path):
    expect_unchanged(db, path,
                     lambda: db.execute("INSERT INTO t VALUES (?, ?, ?, ?)", (7, "x", "abc", 1)),
                     SchemaError, "'abc'", "n")


def test_string_into_int_in_later_row_rejects_batch(db, path):
    expect_unchanged(
        db, path,
        lambda: db.execute(
            "INSERT INTO t VALUES (7, 'x', 1, 1), (8, 'y', 'abc', 1), (9, 'z', 1, 1)"),
        SchemaError, "'abc'",
    )


def test_string_into_int_via_table(db, path):
    expect_unchanged(db, path,
                     lambda: db.table("t").insert_many([(7, "x", 1, 1), (8, "y", "abc", 2)]),
                     SchemaError, "'abc'", "n")


HUGE = 2**70  # fits no SQL integer type


def test_integer_too_large_for_any_integer_type(db, path):
    expect_unchanged(db, path,
                     lambda: db.execute(f"INSERT INTO t VALUES (7, 'x', {HUGE}, 1)"),
                     SchemaError, "n", str(HUGE))


def test_integer_too_large_via_table(db, path):
    expect_unchanged(db, path,
                     lambda: db.table("t").insert_many([(7, "x", 1, 1), (8, "y", HUGE, 1)]),
                     SchemaError, "n", str(HUGE))


def test_integer_too_large_in_update(db, path):
    expect_unchanged(db, path, lambda: db.execute("UPDATE t SET n = ? WHERE id = 1", (HUGE,)),
                     SchemaError, "n", str(HUGE))


def test_integer_out_of_range_for_int(db, path):
    # MySQL's INT is 32 bits; strict mode rejects 2147483648 ("Out of range value").
    expect_unchanged(db, path, lambda: db.execute("INSERT INTO t VALUES (7, 'x', 2147483648, 1)"),
                     SchemaError, "n", "range")


@pytest.mark.parametrize("declared", ["DECIMAL(66, 2)", "DECIMAL(5, 6)", "DECIMAL(0)"])
def test_decimal_mysql_does_not_allow_is_refused(db, path, declared):
    expect_unchanged(db, path, lambda: db.execute(f"CREATE TABLE d (id INT PRIMARY KEY, "
                                                  f"x {declared})"),
                     SqlError, "precision 1 to 65")


def test_value_too_long_for_varchar(db, path):
    err = expect_unchanged(db, path,
                           lambda: db.execute("INSERT INTO t VALUES (7, 'toolong', 1, 1)"),
                           SchemaError, "name", "long")
    assert "varchar(5)" in str(err).lower()


def test_value_too_long_via_table(db, path):
    expect_unchanged(db, path,
                     lambda: db.table("t").insert_many([(7, "ok", 1, 1), (8, "abcdef", 1, 1)]),
                     SchemaError, "name", "long")


def test_value_too_long_in_update(db, path):
    expect_unchanged(db, path,
                     lambda: db.execute("UPDATE t SET name = 'toolong' WHERE id = 1"),
                     SchemaError, "name", "long")


def test_string_into_int_in_update(db, path):
    expect_unchanged(db, path, lambda: db.execute("UPDATE t SET n = 'abc' WHERE g = 1"),
                     SchemaError, "'abc'", "n")


def test_not_null_violation(db, path):
    expect_unchanged(db, path, lambda: db.execute("INSERT INTO t VALUES (7, NULL, 1, 1)"),
                     SchemaError, "name", "null")


def test_not_null_violation_by_omitted_column(db, path):
    # name is NOT NULL with no DEFAULT: leaving it out is an error (MySQL strict mode).
    expect_unchanged(db, path, lambda: db.execute("INSERT INTO t (id, n) VALUES (7, 1)"),
                     SchemaError, "name", "null")


def test_not_null_violation_via_dict(db, path):
    expect_unchanged(db, path, lambda: db.table("t").insert_many([{"id": 7, "n": 1}]),
                     SchemaError, "name", "null")


def test_null_primary_key(db, path):
    expect_unchanged(db, path, lambda: db.execute("INSERT INTO t VALUES (NULL, 'x', 1, 1)"),
                     SchemaError, "id", "null")


def test_not_null_violation_in_update(db, path):
    expect_unchanged(db, path, lambda: db.execute("UPDATE t SET name = NULL WHERE g = 1"),
                     SchemaError, "name", "null")


def test_not_null_violation_in_table_update(db, path):
    expect_unchanged(db, path, lambda: db.table("t").update("id = ?", [1], name=None),
                     SchemaError, "name", "null")


def test_wrong_row_width(db, path):
    err = expect_unchanged(db, path, lambda: db.execute("INSERT INTO t VALUES (7, 'x', 1)"),
                           SqlError, "3", "4")
    assert_somewhere(err, "INSERT INTO t VALUES (7, 'x', 1)")


def test_wrong_row_width_via_table(db, path):
    expect_unchanged(db, path, lambda: db.table("t").insert((7, "x")), SchemaError, "4", "2")


# --------------------------------------------------------------------------- duplicate keys

def test_duplicate_key_within_one_batch(db, path):
    expect_unchanged(
        db, path,
        lambda: db.execute("INSERT INTO t VALUES (7, 'x', 1, 1), (8, 'y', 2, 2), (7, 'z', 3, 3)"),
        ConstraintError, "duplicate", "7",
    )


def test_duplicate_key_against_existing_row(db, path):
    expect_unchanged(
        db, path,
        lambda: db.execute("INSERT INTO t VALUES (7, 'x', 1, 1), (8, 'y', 2, 2), (2, 'z', 3, 3)"),
        ConstraintError, "duplicate", "2",
    )


def test_duplicate_key_within_batch_via_table(db, path):
    expect_unchanged(db, path,
                     lambda: db.table("t").insert_many([(7, "x", 1, 1), (7, "y", 2, 1)]),
                     ConstraintError, "duplicate", "7")


def test_duplicate_key_against_existing_via_table(db, path):
    expect_unchanged(db, path,
                     lambda: db.table("t").insert_many([(9, "x", 1, 1), (3, "y", 2, 1)]),
                     ConstraintError, "duplicate", "3")


def test_duplicate_composite_key(db, path):
    expect_unchanged(db, path,
                     lambda: db.execute("INSERT INTO kv VALUES (3, 'a', 1), (1, 'y', 9)"),
                     ConstraintError, "duplicate")


def test_duplicate_key_after_update_in_same_db(db, path):
    """A key freed by a committed DELETE may be reused; a key still present may not."""
    assert db.execute("DELETE FROM t WHERE id = 4") == 1
    assert db.execute("INSERT INTO t VALUES (4, 'new', 1, 1)") == 1
    expect_unchanged(db, path, lambda: db.execute("INSERT INTO t VALUES (4, 'again', 1, 1)"),
                     ConstraintError, "duplicate", "4")


def test_update_creating_duplicate_key(db, path):
    expect_unchanged(db, path, lambda: db.execute("UPDATE t SET id = 2, n = 99 WHERE id = 1"),
                     ConstraintError, "duplicate", "2")


def test_update_creating_duplicate_among_updated_rows(db, path):
    # Rows 1 and 2 would both become id 50: the whole UPDATE is rejected, none moves.
    expect_unchanged(db, path, lambda: db.execute("UPDATE t SET id = 50, n = n + 1 WHERE g = 1"),
                     ConstraintError, "duplicate", "50")


def test_update_with_duplicate_rejected_whole(db, path):
    # Every row's n changes, and row 3 would take row 1's key: nothing at all may change.
    expect_unchanged(
        db, path,
        lambda: db.execute("UPDATE t SET n = 1000, id = CASE WHEN id = 3 THEN 1 ELSE id END"),
        ConstraintError, "duplicate",
    )


def test_update_composite_key_duplicate(db, path):
    expect_unchanged(db, path,
                     lambda: db.execute("UPDATE kv SET k2 = 'x' WHERE k1 = 1 AND k2 = 'y'"),
                     ConstraintError, "duplicate")


def test_table_update_creating_duplicate(db, path):
    expect_unchanged(db, path, lambda: db.table("t").update("id = ?", [3], id=1),
                     ConstraintError, "duplicate")


def test_rejected_batch_is_invisible_while_a_good_one_commits(db, path):
    """A bad batch committed in the same group as good ones fails alone."""
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def writer(i: int) -> None:
        barrier.wait()
        try:
            if i % 2:
                db.table("t").insert_many([(100 + i, "ok", i, 5)])
            else:
                db.table("t").insert_many([(100 + i, "bad", i, 5), (1, "dup", 0, 5)])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(errors) == 4 and all(isinstance(e, ConstraintError) for e in errors)
    db.settle()
    ids = sorted(r[0] for r in db.view("by_g").lookup(5))
    assert ids == [101, 103, 105, 107]
    assert stored(path)["tables"]["t"] == Counter(
        T_ROWS + [(100 + i, "ok", i, 5) for i in (1, 3, 5, 7)])


# --------------------------------------------------------------------------- program changes

def test_duplicate_create_table(db, path):
    expect_unchanged(db, path, lambda: db.execute("CREATE TABLE t (id INT PRIMARY KEY)"),
                     ProgramError, "'t'", "exists")


def test_create_table_named_like_a_view(db, path):
    expect_unchanged(db, path, lambda: db.execute("CREATE TABLE by_g (id INT PRIMARY KEY)"),
                     ProgramError, "by_g", "exists")


def test_duplicate_create_view(db, path):
    expect_unchanged(db, path, lambda: db.execute("CREATE VIEW by_g AS SELECT id FROM t"),
                     ProgramError, "by_g", "exists")


def test_create_view_named_like_a_table(db, path):
    expect_unchanged(db, path, lambda: db.execute("CREATE VIEW u AS SELECT id FROM t"),
                     ProgramError, "'u'", "exists")


def test_create_table_with_unknown_primary_key_column(db, path):
    expect_unchanged(db, path,
                     lambda: db.execute("CREATE TABLE x (a INT, PRIMARY KEY (b))"),
                     SqlError, "'b'")
    with rivulet.open(path) as again:  # the name stays free
        again.execute("CREATE TABLE x (a INT PRIMARY KEY)")


def test_create_table_with_unknown_type(db, path):
    expect_unchanged(db, path, lambda: db.execute("CREATE TABLE x (a INT, b FOO)"), SqlError)


def test_drop_unknown_view(db, path):
    expect_unchanged(db, path, lambda: db.execute("DROP VIEW nosuch"), ProgramError, "nosuch")


def test_drop_unknown_table(db, path):
    expect_unchanged(db, path, lambda: db.execute("DROP TABLE nosuch"), ProgramError, "nosuch")


def test_drop_view_if_exists_of_unknown_view_is_a_no_op(db, path):
    before = live(db)
    assert db.execute("DROP VIEW IF EXISTS nosuch") == 0
    assert live(db) == before


def test_create_table_if_not_exists_of_an_existing_name_is_a_no_op(db, path):
    """MySQL answers a note (1050) and leaves the table as it is, so schema scripts run
    again; without IF NOT EXISTS it stays an error."""
    before, before_stored = live(db), stored(path)
    for name in ("t", "by_g"):  # a table, a view
        assert db.execute(f"CREATE TABLE IF NOT EXISTS {name} (id INT PRIMARY KEY)") == 0
    assert live(db) == before and stored(path) == before_stored  # (t's rows among them)
    expect_unchanged(db, path, lambda: db.execute("CREATE TABLE t (id INT PRIMARY KEY)"),
                     ObjectExistsError, "already exists")


def test_create_table_if_not_exists_of_a_new_name_creates_it(db, path):
    db.execute("CREATE TABLE IF NOT EXISTS fresh (id INT PRIMARY KEY)")
    db.execute("INSERT INTO fresh VALUES (1)")
    assert db.query("SELECT * FROM fresh") == [(1,)]


def test_dropping_several_names_drops_none_when_one_cannot_go(db, path):
    """``DROP VIEW per_g, nosuch`` changes nothing (per_g stays)."""
    expect_unchanged(db, path, lambda: db.execute("DROP VIEW per_g, nosuch"), ProgramError,
                     "nosuch")


def test_dropping_several_names_drops_them_all(db, path):
    """Views reading each other go readers first; IF EXISTS passes over unknown names."""
    db.execute("CREATE VIEW over_all AS SELECT id FROM all_t")
    with pytest.raises(ProgramError, match="over_all"):
        db.execute("DROP VIEW all_t")
    db.execute("DROP VIEW all_t, over_all, by_g")
    db.execute("DROP VIEW IF EXISTS nosuch, all_kv")
    assert sorted(db.views()) == ["joined", "per_g"]
    db.execute("DROP VIEW joined, per_g")
    db.execute("DROP TABLE IF EXISTS nosuch, kv, u")
    assert sorted(db.catalog.tables) == ["t"]


def test_drop_of_unknown_tables_names_them_all(db, path):
    """MySQL's 1051, naming each missing table (a view among them: DROP TABLE drops
    tables); none here exists, so nothing changes. (A table views read is dropped, and
    the views stay broken: tests/test_broken_views.py.)"""
    expect_unchanged(db, path, lambda: db.execute("DROP TABLE nosuch, all_t"),
                     NoTableToDropError, "unknown table", "rivulet.nosuch,rivulet.all_t")


# --------------------------------------------------------------------------- writing to a view

@pytest.mark.parametrize("sql", [
    "INSERT INTO by_g VALUES (1, 'a', 1)",
    "UPDATE per_g SET c = 1",
    "DELETE FROM all_t WHERE id = 1",
])
def test_write_to_view(db, path, sql):
    name = sql.split()[2] if sql.startswith(("INSERT", "DELETE")) else sql.split()[1]
    err = expect_unchanged(db, path, lambda: db.execute(sql), (SqlError, ProgramError),
                           name, "view")
    if isinstance(err, SqlError):
        assert_located(err, sql, name)


def test_table_handle_on_view(db, path):
    expect_unchanged(db, path, lambda: db.table("all_t"), (ProgramError, SqlError),
                     "all_t", "view")


# --------------------------------------------------------------------------- parameters

@pytest.mark.parametrize("sql,params", [
    ("INSERT INTO t VALUES (?, ?, ?, ?)", (7, "x", 1)),
    ("INSERT INTO t VALUES (?, ?, ?, ?)", (7, "x", 1, 1, 5)),
    ("INSERT INTO t VALUES (?, ?, 1, 1), (?, ?, 1, 1)", (7, "x", 8)),
    ("UPDATE t SET n = ? WHERE id = ?", (5,)),
    ("UPDATE t SET n = 5 WHERE id = ?", ()),
    ("DELETE FROM t WHERE id = ?", ()),
    ("DELETE FROM t WHERE id = ?", (1, 2)),
    ("DELETE FROM t WHERE id = 1", (1,)),
])
def test_wrong_number_of_parameters_in_write(db, path, sql, params):
    expected = sql.count("?")
    expect_unchanged(db, path, lambda: db.execute(sql, params), SqlError,
                     str(expected), str(len(params)), "parameter")


def test_parameters_to_ddl(db, path):
    expect_unchanged(db, path,
                     lambda: db.execute("CREATE VIEW w AS SELECT id FROM t WHERE g = ?", (1,)),
                     SqlError, "parameter")


@pytest.mark.parametrize("params", [(), (1, 2)])
def test_wrong_number_of_parameters_in_lookup(db, path, params):
    expect_unchanged(db, path, lambda: db.view("by_g").lookup(*params), RivuletError,
                     "1", str(len(params)))


def test_parameters_to_unparameterized_view(db, path):
    expect_unchanged(db, path, lambda: db.view("per_g").lookup(1), RivuletError, "parameter")


@pytest.mark.parametrize("params", [(), (1, 2)])
def test_wrong_number_of_parameters_in_query(db, path, params):
    db.query("SELECT id FROM t WHERE g = ?", (1,))  # the view exists before the error
    expect_unchanged(db, path, lambda: db.query("SELECT id FROM t WHERE g = ?", params),
                     RivuletError, "1", str(len(params)))


def test_wrong_key_width_in_lookup_many(db, path):
    expect_unchanged(db, path, lambda: db.view("by_g").lookup_many([(1, 2)]), RivuletError, "key")


def test_parameter_in_unsupported_place(db, path):
    sql = "SELECT id FROM t WHERE n + ? > 1"
    err = expect_unchanged(db, path, lambda: db.execute(sql, (1,)), SqlError, "parameter")
    assert_somewhere(err, sql)


# --------------------------------------------------------------------------- GROUP BY

@pytest.mark.parametrize("sql,token", [
    ("SELECT name, COUNT(*) FROM t GROUP BY g", "name"),
    ("SELECT g, n FROM t GROUP BY g", "n"),
    ("SELECT name, COUNT(*) FROM t", "name"),
    ("SELECT g, COUNT(*) FROM t GROUP BY g HAVING n > 1", "n"),
    ("SELECT g, COUNT(*) FROM t GROUP BY g ORDER BY n", "n"),
    ("SELECT u.n, COUNT(*) FROM t JOIN u ON t.id = u.tid GROUP BY t.id", "u.n"),
])
def test_bare_column_not_in_group_by(db, path, sql, token):
    err = expect_unchanged(db, path, lambda: db.execute(sql), SqlError, "group by",
                           token.split(".")[-1])
    assert_located(err, sql, token)


def test_bare_column_in_create_view_not_in_group_by(db, path):
    expect_unchanged(db, path,
                     lambda: db.execute("CREATE VIEW w AS SELECT name, COUNT(*) FROM t GROUP BY g"),
                     SqlError, "group by", "name")


def test_bare_column_functionally_dependent_on_grouped_key_is_accepted(db):
    # Not an error: t.name depends on t.id, the grouped primary key (MySQL accepts this).
    rows = db.query("SELECT t.id, t.name, COUNT(u.id) FROM t JOIN u ON t.id = u.tid GROUP BY t.id")
    assert sorted(rows) == [(1, "a", 2), (3, "c", 1)]


# --------------------------------------------------------------------------- closed database

def test_closed_database(path):
    db = rivulet.open(path)
    db.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT)")
    db.execute("CREATE VIEW v AS SELECT id FROM t WHERE g = ?")
    db.execute("INSERT INTO t VALUES (1, 1)")
    table = db.table("t")
    db.close()
    db.close()  # closing twice is harmless
    calls = [
        lambda: db.execute("INSERT INTO t VALUES (2, 1)"),
        lambda: db.execute("SELECT id FROM t"),
        lambda: db.execute_script("INSERT INTO t VALUES (3, 1);"),
        lambda: db.query("SELECT id FROM t WHERE g = ?", (1,)),
        lambda: db.view("v"),
        lambda: db.table("t"),
        lambda: db.settle(),
        lambda: table.insert((4, 1)),
        lambda: table.insert_many([(5, 1)]),
        lambda: table.update("id = ?", [1], g=2),
        lambda: table.delete("id = ?", [1]),
    ]
    for call in calls:
        with pytest.raises(ClosedError) as info:
            call()
        assert "closed" in str(info.value).lower()
    with rivulet.open(path) as again:
        assert again.query("SELECT id, g FROM t") == [(1, 1)]
        assert again.lsn == 1


def test_closed_database_view_handle(path):
    """A View handle taken before close() must not keep answering from a closed database."""
    db = rivulet.open(path)
    db.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT)")
    db.execute("CREATE VIEW v AS SELECT id FROM t WHERE g = ?")
    db.execute("INSERT INTO t VALUES (1, 1)")
    db.settle()
    view = db.view("v")
    db.close()
    for call in (lambda: view.lookup(1), lambda: view.lookup_many([1]), lambda: view.scan()):
        with pytest.raises(ClosedError):
            call()


def test_closed_by_context_manager(path):
    with rivulet.open(path) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    with pytest.raises(ClosedError):
        db.execute("INSERT INTO t VALUES (1)")


def test_bad_durability_mode(path):
    with pytest.raises((ValueError, RivuletError)) as info:
        rivulet.open(path, durability="sometimes")
    assert "durability" in str(info.value)
