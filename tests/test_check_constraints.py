"""CHECK constraints: declared in a column, as a table element, named or not, and by
``ALTER TABLE ... ADD CONSTRAINT name CHECK``; a row for which the condition is FALSE is
refused by every write path (NULL passes), as MariaDB refuses it (its error is 4025,
rivulet's MySQL 8's 3819); ``DROP CONSTRAINT`` / ``DROP CHECK``; and named PRIMARY KEY and
UNIQUE constraints."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

import rivulet
from rivulet.errors import (
    CheckViolatedError,
    DuplicateCheckNameError,
    TruncatedValueError,
    UnknownColumnError,
    UnknownKeyError,
    UnsupportedSqlError,
    error_code,
)
from rivulet.server.mysql.server import ServerThread
from rivulet.server.mysql.session import create_table_sql

TABLE = ("CREATE TABLE c (id INT PRIMARY KEY, a INT CHECK (a > 0), b INT, "
         "CONSTRAINT b_above_a CHECK (b > a), CHECK (a + b < 100))")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path / "db")
    database.execute(TABLE)
    yield database
    database.close()


def rows(db: rivulet.Database, table: str = "c") -> list[tuple]:
    db.settle()
    return sorted(db.query(f"SELECT * FROM {table}"))


# ......................................................................... against MariaDB

WRITES = [
    "INSERT INTO c VALUES (1, 0, 5)",  # a > 0 is FALSE
    "INSERT INTO c VALUES (1, 1, 0)",  # b > a
    "INSERT INTO c VALUES (1, 1, 99)",  # a + b < 100
    "INSERT INTO c VALUES (1, NULL, NULL)",  # unknown passes
    "INSERT INTO c VALUES (2, 1, 2), (3, 2, 1)",  # the second row fails: neither stays
    "INSERT INTO c VALUES (2, 1, 2), (3, 2, 3)",
    "UPDATE c SET b = 0 WHERE id = 2",
    "UPDATE c SET b = b + 50",  # fails on row 3 (2 + 53): nothing changes
    "UPDATE c SET b = b + 1",
    "INSERT INTO c VALUES (2, 1, 2) ON DUPLICATE KEY UPDATE b = 0",
    "INSERT INTO c VALUES (2, 1, 2) ON DUPLICATE KEY UPDATE b = 7",
    "REPLACE INTO c VALUES (3, 5, 1)",
    "REPLACE INTO c VALUES (3, 5, 6)",
    "DELETE FROM c WHERE id = 1",
    "INSERT INTO c (id, a) VALUES (9, 4)",  # b NULL: b > a unknown
]


def test_writes_are_refused_as_mariadb_refuses_them(mysql_pair: Any) -> None:
    mysql_pair.execute(TABLE)
    for sql in WRITES:
        mysql_pair.execute(sql)
    assert mysql_pair.check_query("SELECT id, a, b FROM c") == [
        (2, 1, 7), (3, 5, 6), (9, 4, None)]


def test_conditions_are_evaluated_as_a_write_evaluates_them(mysql_pair: Any) -> None:
    """Strict mode: text that is no number fails the write (1292), so does a division by
    zero (1365); text compares with a number as a number; functions as in a WHERE."""
    mysql_pair.execute("CREATE TABLE s (id INT PRIMARY KEY, t VARCHAR(10), n INT, "
                       "CHECK (t > 2), CHECK (n / 0 IS NULL), "
                       "CONSTRAINT shout CHECK (UPPER(t) = t))")
    for sql in ["INSERT INTO s VALUES (1, '3', NULL)", "INSERT INTO s VALUES (2, '1', NULL)",
                "INSERT INTO s VALUES (3, 'x', NULL)", "INSERT INTO s VALUES (4, '5', 1)",
                "INSERT INTO s VALUES (5, NULL, NULL)", "INSERT INTO s VALUES (6, '7a', NULL)",
                "INSERT INTO s VALUES (7, '8', NULL)"]:
        mysql_pair.execute(sql)
    assert mysql_pair.check_query("SELECT id, t FROM s") == [(1, "3"), (5, None), (7, "8")]


def test_alter_table_adds_and_drops_checks_as_mariadb(mysql_pair: Any) -> None:
    mysql_pair.execute(TABLE)
    mysql_pair.execute("INSERT INTO c VALUES (1, 1, 50), (2, NULL, 3)")
    for sql in [
        "ALTER TABLE c ADD CONSTRAINT small CHECK (b < 10)",  # row 1 breaks it: not added
        "INSERT INTO c VALUES (3, 1, 20)",
        "ALTER TABLE c ADD CONSTRAINT small CHECK (b < 60)",
        "ALTER TABLE c ADD CONSTRAINT small CHECK (b < 70)",  # the name is taken
        "INSERT INTO c VALUES (4, 1, 61)",
        "ALTER TABLE c DROP CONSTRAINT small",
        "INSERT INTO c VALUES (4, 1, 61)",
        "ALTER TABLE c DROP CONSTRAINT nothing",
        "ALTER TABLE c DROP CONSTRAINT b_above_a",
        "INSERT INTO c VALUES (5, 2, 1)",
        "ALTER TABLE c DROP COLUMN b",  # a + b < 100 reads a too
        "ALTER TABLE c RENAME COLUMN a TO aa",  # the checks follow
        "INSERT INTO c VALUES (6, 0, 1)",
        "INSERT INTO c VALUES (6, 1, 99)",
        "UPDATE c SET aa = 0 WHERE id = 1",
        "ALTER TABLE c ADD COLUMN z INT, ADD CONSTRAINT z_small CHECK (z < 5)",
        "INSERT INTO c (id, aa, b, z) VALUES (7, 1, 2, 5)",
        "INSERT INTO c (id, aa, b, z) VALUES (7, 1, 2, 4)",
        "ALTER TABLE c DROP COLUMN z",  # its only check goes with it
        "INSERT INTO c (id, aa, b) VALUES (8, 1, 2)",
    ]:
        mysql_pair.execute(sql)
    assert mysql_pair.check_query("SELECT id, aa, b FROM c") == [
        (1, 1, 50), (2, None, 3), (3, 1, 20), (4, 1, 61), (5, 2, 1), (7, 1, 2), (8, 1, 2)]


def test_named_keys_as_mariadb(mysql_pair: Any) -> None:
    mysql_pair.execute("CREATE TABLE k (id INT, a INT, b INT, "
                       "CONSTRAINT `pk quote ' one` PRIMARY KEY (id), "
                       "CONSTRAINT uq UNIQUE (a), CONSTRAINT pair UNIQUE KEY (a, b))")
    for sql in ["INSERT INTO k VALUES (1, 1, 1)", "INSERT INTO k VALUES (1, 2, 2)",
                "INSERT INTO k VALUES (2, 1, 3)", "INSERT INTO k VALUES (2, 2, 1)",
                "ALTER TABLE k DROP CONSTRAINT uq", "INSERT INTO k VALUES (3, 1, 3)",
                "INSERT INTO k VALUES (4, 1, 3)"]:
        mysql_pair.execute(sql)
    assert mysql_pair.check_query("SELECT id, a, b FROM k") == [(1, 1, 1), (2, 2, 1), (3, 1, 3)]
    schema = mysql_pair.db.catalog.require_table("k")
    assert [schema.columns[i].name for i in schema.primary_key] == ["id"]
    assert [(k.name, k.unique) for k in schema.keys] == [("pair", True)]


def test_the_error_over_the_wire_is_mysql_8s(db: rivulet.Database) -> None:
    server = ServerThread(db, port=0)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                               database="rivulet", autocommit=True)
        with conn.cursor() as cur:
            with pytest.raises(pymysql.MySQLError) as failed:
                cur.execute("INSERT INTO c VALUES (1, 1, 0)")
            assert failed.value.args == (3819, "row 1: Check constraint 'b_above_a' is "
                                               "violated.")
            cur.execute("SHOW CREATE TABLE c")
            shown = cur.fetchall()[0][1]
        conn.close()
    finally:
        server.stop()
    assert "CONSTRAINT `c_chk_1` CHECK (`a` > 0)" in shown
    assert "CONSTRAINT `b_above_a` CHECK (`b` > `a`)" in shown
    assert "CONSTRAINT `c_chk_2` CHECK (`a` + `b` < 100)" in shown
    assert error_code(CheckViolatedError("x")).mysql == 3819


# ......................................................................... rivulet alone


def test_unnamed_checks_are_named_as_mysql_8_names_them(db: rivulet.Database) -> None:
    schema = db.catalog.require_table("c")
    assert [(c.name, c.condition) for c in schema.checks] == [
        ("c_chk_1", "a > 0"), ("b_above_a", "b > a"), ("c_chk_2", "a + b < 100")]
    assert "CONSTRAINT `c_chk_1` CHECK (`a` > 0)" in create_table_sql(schema)
    db.execute("CREATE TABLE e (a INT, CONSTRAINT x CHECK (a > 0), CHECK (a > 1), "
               "CONSTRAINT e_chk_7 CHECK (a > 2), a2 INT CHECK (a2 > 0))")
    assert [c.name for c in db.catalog.require_table("e").checks] == [
        "x", "e_chk_1", "e_chk_7", "e_chk_8"]  # (one past the largest, as MySQL 8)
    with pytest.raises(DuplicateCheckNameError):
        db.execute("CREATE TABLE d (a INT, CONSTRAINT x CHECK (a > 0), "
                   "CONSTRAINT X CHECK (a > 1))")
    assert db.catalog.table("d") is None


def test_every_write_path_is_checked(db: rivulet.Database) -> None:
    db.execute("INSERT INTO c VALUES (1, 1, 2)")
    with pytest.raises(CheckViolatedError, match="b_above_a"):
        db.table("c").insert_many([(2, 1, 2), (3, 5, 1)])
    with pytest.raises(CheckViolatedError, match="c_chk_1"):
        db.table("c").update("id = ?", [1], a=0)
    with pytest.raises(CheckViolatedError, match="c_chk_2"):
        with db.transaction() as tx:
            tx.execute("INSERT INTO c VALUES (4, 1, 2)")
            tx.execute("UPDATE c SET b = 200 WHERE id = 4")
    with pytest.raises(CheckViolatedError, match="b_above_a"):
        with db.transaction() as tx:
            tx.execute("INSERT INTO c VALUES (5, 1, 2) ON DUPLICATE KEY UPDATE b = 0")
            tx.execute("INSERT INTO c VALUES (1, 1, 2) ON DUPLICATE KEY UPDATE b = 0")
    with pytest.raises(UnsupportedSqlError, match="INSERT IGNORE"):  # MariaDB fails it too
        db.execute("INSERT IGNORE INTO c VALUES (6, 1, 0)")
    assert rows(db) == [(1, 1, 2)]


def test_checks_survive_a_restart(tmp_path: Path) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        db.execute("ALTER TABLE c ADD CONSTRAINT small CHECK (b < 10)")
        db.execute("ALTER TABLE c RENAME COLUMN b TO bb")
    with rivulet.open(tmp_path / "db") as db:
        assert [c.name for c in db.catalog.require_table("c").checks] == [
            "c_chk_1", "b_above_a", "c_chk_2", "small"]
        with pytest.raises(CheckViolatedError, match="small"):
            db.execute("INSERT INTO c VALUES (1, 1, 10)")
        db.execute("INSERT INTO c VALUES (1, 1, 9)")
        assert rows(db) == [(1, 1, 9)]


def test_a_failed_alter_changes_nothing(db: rivulet.Database) -> None:
    db.execute("INSERT INTO c VALUES (1, 1, 50)")
    with pytest.raises(CheckViolatedError, match="small"):
        db.execute("ALTER TABLE c ADD COLUMN z INT, ADD CONSTRAINT small CHECK (b < 10)")
    schema = db.catalog.require_table("c")
    assert schema.column_names == ("id", "a", "b")
    assert [c.name for c in schema.checks] == ["c_chk_1", "b_above_a", "c_chk_2"]
    db.execute("INSERT INTO c VALUES (2, 1, 60)")
    with pytest.raises(UnknownKeyError):
        db.execute("ALTER TABLE c DROP CHECK nothing")
    db.execute("ALTER TABLE c DROP CHECK b_above_a")  # MySQL 8's form
    db.execute("INSERT INTO c VALUES (3, 5, 1)")
    assert rows(db) == [(1, 1, 50), (2, 1, 60), (3, 5, 1)]


def test_a_checked_column_keeps_its_values(db: rivulet.Database) -> None:
    """A change of type that converts a checked column's values is refused (the rows
    converted later would not be checked); one that keeps every value is made."""
    with pytest.raises(UnsupportedSqlError, match="c_chk_1"):
        db.execute("ALTER TABLE c MODIFY a VARCHAR(10)")
    db.execute("ALTER TABLE c MODIFY a BIGINT")
    with pytest.raises(CheckViolatedError, match="c_chk_1"):
        db.execute("INSERT INTO c VALUES (1, 0, 5)")


@pytest.mark.parametrize(("condition", "error", "words"), [
    ("a > (SELECT 1)", UnsupportedSqlError, "subquery"),
    ("a IN (SELECT 1)", UnsupportedSqlError, "subquery"),
    ("a > RAND()", UnsupportedSqlError, "RAND"),
    ("a > UNIX_TIMESTAMP(NOW())", UnsupportedSqlError, "NOW"),
    ("a > @limit", UnsupportedSqlError, "variable"),
    ("b > 0", UnknownColumnError, "'b'"),
    ("COUNT(a) > 0", rivulet.SqlError, "COUNT"),
    ("id > 0", UnsupportedSqlError, "AUTO_INCREMENT"),  # (MySQL 8 refuses it too: 3818)
])
def test_a_condition_rivulet_cannot_evaluate_is_refused(tmp_path: Path, condition: str,
                                                        error: type[Exception],
                                                        words: str) -> None:
    with rivulet.open(tmp_path / "db") as db:
        with pytest.raises(error, match=words):
            db.execute(f"CREATE TABLE d (id INT AUTO_INCREMENT PRIMARY KEY, a INT, "
                       f"CHECK ({condition}))")
        assert db.catalog.table("d") is None
        db.execute("CREATE TABLE d (id INT AUTO_INCREMENT PRIMARY KEY, a INT)")
        with pytest.raises(error, match=words):
            db.execute(f"ALTER TABLE d ADD CONSTRAINT x CHECK ({condition})")
        assert db.catalog.require_table("d").checks == ()


def test_text_that_is_no_number_fails_the_write(db: rivulet.Database) -> None:
    db.execute("CREATE TABLE t (s VARCHAR(5), CHECK (s))")
    with pytest.raises(TruncatedValueError):
        db.execute("INSERT INTO t VALUES ('abc')")
    db.execute("INSERT INTO t VALUES ('1')")
    with pytest.raises(CheckViolatedError):
        db.execute("INSERT INTO t VALUES ('0')")
    assert rows(db, "t") == [("1",)]


def test_an_import_checks_each_row(db: rivulet.Database) -> None:
    """``rivulet import``: a chunk of a table with checks goes through ``coerce_row`` row
    by row (never the vectorized checks alone), and a row a check refuses is rejected."""
    import pyarrow as pa

    from rivulet.pipeline.import_report import ProgressBar, Tally
    from rivulet.pipeline.import_rows import Batches
    from rivulet.pipeline.import_spark import CORRUPT_COL, VALUES_COL

    schema = db.catalog.require_table("c")
    tally = Tally("reject", 10)
    batches = Batches(schema, None, [], [False] * 3, tally, ProgressBar(False, "c"))  # type: ignore[arg-type]
    chunk = pa.table({"v0": [1, 2, 3], "v1": [1, 0, 2], "v2": [2, 5, 3],
                      CORRUPT_COL: pa.nulls(3, pa.string()), VALUES_COL: pa.nulls(3, pa.string())})
    good, numbers = batches._check(chunk, "f.csv", 1)
    assert good == [(1, 1, 2), (3, 2, 3)] and numbers == [1, 3]
    assert [(e.row, e.reason) for e in tally.errors] == [
        (2, "Check constraint 'c_chk_1' is violated.")]


def test_a_checked_table_keeps_its_foreign_keys_and_comment(db: rivulet.Database) -> None:
    """Compiling a table's checks once made a new schema of it without its FOREIGN KEYs
    and COMMENT: they were neither enforced nor shown (SQLAlchemy's reflection suite)."""
    db.execute("CREATE TABLE users (id INT PRIMARY KEY, parent INT, score INT, "
               "CHECK (score > 0), CONSTRAINT user_fk FOREIGN KEY (parent) REFERENCES "
               "users (id)) COMMENT 'people'")
    schema = db.catalog.require_table("users")
    assert [fk.name for fk in schema.foreign_keys] == ["user_fk"]
    assert schema.comment == "people"
    with pytest.raises(rivulet.RivuletError) as failed:
        db.execute("INSERT INTO users VALUES (1, 2, 5)")
    assert error_code(failed.value).mysql == 1452
