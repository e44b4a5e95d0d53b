"""The DDL that ORMs emit: CREATE/DROP INDEX and ALTER TABLE's index actions, TRUNCATE,
and a RENAME beside other ALTER TABLE actions refused (docs/sql.md, "Indexes",
"TRUNCATE"; RENAME TABLE itself: tests/test_broken_views.py).

A key (index) is a real SQLite index that writes and upqueries use; a UNIQUE one is
enforced; each statement is all or nothing and survives a reopen (the program stores it).
The error codes and effects are checked against MariaDB at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest
from mysql_oracle import MySQLPair

import rivulet
from rivulet.errors import (
    ConstraintError,
    DuplicateKeyNameError,
    KeyColumnError,
    RivuletError,
    UnknownKeyError,
    UnknownObjectError,
    UnsupportedSqlError,
    error_code,
)
from rivulet.server.mysql.server import ServerThread
from rivulet.server.mysql.session import create_table_sql, describe, show_index

TABLE = "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, a INT, b VARCHAR(10), c INT)"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path / "db")
    database.execute(TABLE)
    yield database
    database.close()


def sqlite_indexes(db: rivulet.Database, table: str = "t") -> dict[str, tuple[list[str], bool]]:
    """SQLite's indexes of ``table``: name -> (columns, unique)."""
    return db.storage._index_list(table)


def key_names(db: rivulet.Database, table: str = "t") -> list[tuple[str, tuple[str, ...], bool]]:
    schema = db.catalog.require_table(table)
    return [(k.name, tuple(schema.columns[i].name for i in k.columns), k.unique)
            for k in schema.keys]


def program(db: rivulet.Database) -> list[tuple[str, str]]:
    return [(s.kind, s.sql) for s in db.storage.program()]


# --------------------------------------------------------------------------- CREATE / DROP INDEX


def test_create_index_makes_a_sqlite_index_that_upqueries_use(db: rivulet.Database) -> None:
    db.execute("CREATE INDEX ix_a ON t (a)")
    assert key_names(db) == [("ix_a", ("a",), False)]
    assert (["a"], False) in sqlite_indexes(db).values()
    before = set(sqlite_indexes(db))
    db.execute("INSERT INTO t (a, b) VALUES (1, 'x'), (1, 'y'), (2, 'z')")
    # A partial view looked up by a: its upqueries read t by a, through the key's index
    # (no second index is made for them).
    db.execute("CREATE VIEW by_a AS SELECT id, b FROM t WHERE a = ?")
    assert sorted(db.view("by_a").lookup(1)) == [(1, "x"), (2, "y")]
    assert set(sqlite_indexes(db)) == before
    plan = db.storage.conn.execute("EXPLAIN QUERY PLAN SELECT * FROM t WHERE a = 1").fetchall()
    assert any("_rivulet_key_t_a" in str(row) for row in plan)


def test_unique_index_is_enforced_on_later_writes(db: rivulet.Database) -> None:
    db.execute("INSERT INTO t (a, b) VALUES (1, 'x')")
    db.execute("CREATE UNIQUE INDEX ux_b ON t (b)")
    with pytest.raises(ConstraintError) as info:
        db.execute("INSERT INTO t (a, b) VALUES (2, 'x')")
    assert error_code(info.value).mysql == 1062
    db.execute("INSERT INTO t (a, b) VALUES (2, 'y')")
    with pytest.raises(ConstraintError):
        db.execute("UPDATE t SET b = 'x' WHERE a = 2")
    with pytest.raises(ConstraintError):  # in a transaction too
        with db.transaction() as tx:
            tx.execute("INSERT INTO t (a, b) VALUES (3, 'y')")
    db.execute("INSERT INTO t (a, b) VALUES (3, NULL), (4, NULL)")  # NULLs never clash
    assert db.query("SELECT COUNT(*) FROM t") == [(4,)]


def test_unique_index_over_clashing_rows_fails_and_changes_nothing(db: rivulet.Database) -> None:
    db.execute("INSERT INTO t (a, b) VALUES (1, 'x'), (1, 'y')")
    db.execute("CREATE INDEX ix_c ON t (c)")
    schema, indexes, stored = db.catalog.require_table("t"), sqlite_indexes(db), program(db)
    for sql in ("CREATE UNIQUE INDEX ux_a ON t (a)",
                "ALTER TABLE t ADD UNIQUE (a)",
                # several actions: the first would succeed alone
                "ALTER TABLE t ADD INDEX ix_b (b), ADD CONSTRAINT ux UNIQUE (a)",
                "ALTER TABLE t ADD COLUMN d INT, DROP INDEX ix_c, ADD UNIQUE (a)"):
        with pytest.raises(ConstraintError) as info:
            db.execute(sql)
        assert error_code(info.value).mysql == 1062
        assert db.catalog.require_table("t") is schema
        assert sqlite_indexes(db) == indexes
        assert program(db) == stored
    db.execute("INSERT INTO t (a, b) VALUES (1, 'z')")  # a is not unique


def test_index_names_duplicates_and_unknown_ones(db: rivulet.Database) -> None:
    db.execute("CREATE INDEX ix ON t (a)")
    with pytest.raises(DuplicateKeyNameError) as dup:
        db.execute("CREATE INDEX IX ON t (b)")  # names are case-insensitive
    assert error_code(dup.value).mysql == 1061
    with pytest.raises(DuplicateKeyNameError):
        db.execute("ALTER TABLE t ADD UNIQUE KEY ix (b)")
    with pytest.raises(DuplicateKeyNameError):  # within one statement
        db.execute("ALTER TABLE t ADD INDEX k (b), ADD INDEX k (c)")
    with pytest.raises(UnknownKeyError) as unknown:
        db.execute("DROP INDEX nope ON t")
    assert error_code(unknown.value).mysql == 1091
    with pytest.raises(UnknownKeyError):
        db.execute("ALTER TABLE t DROP INDEX ix, DROP INDEX ix")
    assert key_names(db) == [("ix", ("a",), False)]
    with pytest.raises(UnknownObjectError):
        db.execute("CREATE INDEX iy ON nothing (a)")
    with pytest.raises(KeyColumnError, match="Key column 'nope' doesn't exist") as missing:
        db.execute("CREATE INDEX iy ON t (nope)")
    assert error_code(missing.value).mysql == 1072  # (as MySQL: tests/test_noria_lobsters.py)
    with pytest.raises(UnsupportedSqlError, match="PRIMARY"):
        db.execute("DROP INDEX `PRIMARY` ON t")
    assert key_names(db) == [("ix", ("a",), False)]


def test_alter_table_index_actions_and_mysql_default_names(db: rivulet.Database) -> None:
    db.execute("ALTER TABLE t ADD INDEX (a), ADD KEY (a, b), ADD UNIQUE (b), "
               "ADD UNIQUE KEY uk (a, c), ADD UNIQUE INDEX ui (c), "
               "ADD CONSTRAINT uc UNIQUE (b, c)")
    assert key_names(db) == [("a", ("a",), False), ("a_2", ("a", "b"), False),
                             ("b", ("b",), True), ("uk", ("a", "c"), True),
                             ("ui", ("c",), True), ("uc", ("b", "c"), True)]
    db.execute("ALTER TABLE t DROP INDEX a_2, DROP KEY uk")
    db.execute("DROP INDEX uc ON t")
    assert key_names(db) == [("a", ("a",), False), ("b", ("b",), True), ("ui", ("c",), True)]
    covered = sorted(sqlite_indexes(db).values())
    assert covered == [(["a"], False), (["b"], True), (["c"], True)]


def test_drop_index_removes_enforcement_and_keeps_what_upqueries_need(
        db: rivulet.Database) -> None:
    db.execute("CREATE UNIQUE INDEX ub ON t (b)")
    db.execute("INSERT INTO t (a, b) VALUES (1, 'x')")
    db.execute("CREATE VIEW by_b AS SELECT id FROM t WHERE b = ?")
    assert db.view("by_b").lookup("x") == [(1,)]
    db.execute("DROP INDEX ub ON t")
    db.execute("INSERT INTO t (a, b) VALUES (2, 'x')")  # no longer unique
    # the view's upqueries read t by b: an index over b is there still (made again)
    assert (["b"], False) in sqlite_indexes(db).values()
    db.settle()
    assert sorted(db.view("by_b").lookup("x")) == [(1,), (2,)]


def test_keys_follow_column_changes(db: rivulet.Database) -> None:
    db.execute("CREATE INDEX ab ON t (a, b)")
    db.execute("CREATE INDEX only_c ON t (c)")
    db.execute("INSERT INTO t (a, b, c) VALUES (1, 'x', 5)")
    db.execute("ALTER TABLE t RENAME COLUMN a TO aa")
    assert ("ab", ("aa", "b"), False) in key_names(db)
    db.execute("ALTER TABLE t DROP COLUMN b")  # MySQL takes it out of the key
    db.execute("ALTER TABLE t DROP COLUMN c")  # and drops a key left with no column
    assert key_names(db) == [("ab", ("aa",), False)]
    assert sorted(sqlite_indexes(db).values()) == [(["aa"], False)]
    db.execute("ALTER TABLE t MODIFY aa BIGINT")  # a new type: the index moves with it
    assert sorted(sqlite_indexes(db).values()) == [(["aa"], False)]
    with pytest.raises(RivuletError, match="in a UNIQUE key"):
        db.execute("ALTER TABLE t ADD UNIQUE (aa), MODIFY aa VARCHAR(10)")
    db.execute("ALTER TABLE t ADD COLUMN e INT UNIQUE")
    assert ("e", ("e",), True) in key_names(db)
    db.execute("UPDATE t SET e = 1")
    with pytest.raises(ConstraintError):
        db.execute("INSERT INTO t (aa, e) VALUES (2, 1)")


def test_keys_survive_a_reopen(tmp_path: Path) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        db.execute("CREATE UNIQUE INDEX ub ON t (b)")
        db.execute("CREATE INDEX ia ON t (a)")
        db.execute("ALTER TABLE t ADD CONSTRAINT uac UNIQUE (a, c), ADD INDEX (c)")
        db.execute("DROP INDEX ia ON t")
        db.execute("INSERT INTO t (a, b, c) VALUES (1, 'x', 1)")
        keys = key_names(db)
    with rivulet.open(tmp_path / "db") as db:
        assert key_names(db) == keys == [("ub", ("b",), True), ("uac", ("a", "c"), True),
                                         ("c", ("c",), False)]
        with pytest.raises(ConstraintError):
            db.execute("INSERT INTO t (a, b, c) VALUES (2, 'x', 2)")
        with pytest.raises(ConstraintError):
            db.execute("INSERT INTO t (a, b, c) VALUES (1, 'y', 1)")
        with pytest.raises(DuplicateKeyNameError):
            db.execute("CREATE INDEX ub ON t (a)")
        db.execute("CREATE INDEX ia ON t (a)")  # its name is free again


def test_keys_declared_in_create_table_are_named_and_droppable(tmp_path: Path) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE u (id INT PRIMARY KEY, a INT UNIQUE, b INT, c INT, "
                   "KEY ix (b), INDEX (c), UNIQUE KEY (b, c), CONSTRAINT uq UNIQUE (a, b))")
        assert key_names(db, "u") == [("a", ("a",), True), ("ix", ("b",), False),
                                      ("c", ("c",), False), ("b", ("b", "c"), True),
                                      ("uq", ("a", "b"), True)]
        assert sorted(sqlite_indexes(db, "u").values()) == [
            (["a"], True), (["a", "b"], True), (["b"], False), (["b", "c"], True),
            (["c"], False)]
        db.execute("ALTER TABLE u DROP INDEX a")
        db.execute("INSERT INTO u VALUES (1, 1, 1, 1), (2, 1, 2, 2)")
        with pytest.raises(DuplicateKeyNameError):
            db.execute("CREATE TABLE w (id INT PRIMARY KEY, a INT, KEY k (a), UNIQUE KEY k (a))")
        # (FULLTEXT keys are taken: tests/test_fulltext_keys.py)
        with pytest.raises(UnsupportedSqlError, match="SPATIAL"):
            db.execute("CREATE TABLE w (id INT PRIMARY KEY, a TEXT, SPATIAL KEY f (a))")
        with pytest.raises(UnsupportedSqlError, match="prefix"):
            db.execute("CREATE UNIQUE INDEX p ON u (a(3))")


def test_show_index_show_create_table_and_describe(db: rivulet.Database) -> None:
    db.execute("CREATE INDEX ab ON t (a, b)")
    db.execute("ALTER TABLE t ADD UNIQUE KEY uc (c)")
    schema = db.catalog.require_table("t")
    rows, columns = show_index(schema)
    assert [c.name for c in columns][:5] == [
        "Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name"]
    assert [r[:5] for r in rows] == [("t", 0, "PRIMARY", 1, "id"), ("t", 0, "uc", 1, "c"),
                                     ("t", 1, "ab", 1, "a"), ("t", 1, "ab", 2, "b")]
    text = create_table_sql(schema)
    assert "  UNIQUE KEY `uc` (`c`),\n  KEY `ab` (`a`,`b`)\n)" in text
    keys = {row[0]: row[3] for row in describe(db.catalog, "t")[0]}
    assert keys == {"id": "PRI", "a": "MUL", "b": "", "c": "UNI"}
    server = ServerThread(db, port=0)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                               database="rivulet", autocommit=True)
        with conn.cursor() as cursor:
            cursor.execute("CREATE INDEX ib ON t (b)")
            cursor.execute("SHOW INDEX FROM t")
            shown = [(r[2], r[3], r[4]) for r in cursor.fetchall()]
            assert shown == [("PRIMARY", 1, "id"), ("uc", 1, "c"), ("ab", 1, "a"),
                             ("ab", 2, "b"), ("ib", 1, "b")]
            with pytest.raises(pymysql.err.MySQLError) as info:
                cursor.execute("DROP INDEX nope ON t")
            assert info.value.args[0] == 1091
        conn.close()
    finally:
        server.stop()


# --------------------------------------------------------------------------- TRUNCATE


def test_truncate_deletes_every_row_as_one_write_and_restarts_numbering(
        db: rivulet.Database) -> None:
    db.execute("INSERT INTO t (a, b) VALUES (1, 'x'), (1, 'y'), (2, 'z')")
    db.execute("CREATE VIEW counts AS SELECT a, COUNT(*) AS n FROM t GROUP BY a")
    db.execute("CREATE VIEW by_a AS SELECT id FROM t WHERE a = ?")
    assert db.view("by_a").lookup(1) == [(1,), (2,)]
    db.settle()
    before = db.lsn
    assert db.execute("TRUNCATE TABLE t") == 0
    assert db.lsn == before + 1  # one write batch
    db.settle()
    assert db.query("SELECT COUNT(*) FROM t") == [(0,)]
    assert db.view("counts").lookup() == []
    assert db.view("by_a").lookup(1) == []
    db.execute("INSERT INTO t (a, b) VALUES (7, 'q')")
    assert db.last_insert_id == 1  # MySQL's TRUNCATE resets AUTO_INCREMENT
    db.execute("TRUNCATE t")
    db.execute("TRUNCATE t")  # an empty table: nothing to write, no LSN
    db.settle()
    db.execute("INSERT INTO t (a, b) VALUES (8, 'r')")
    assert db.query("SELECT id, a FROM t") == [(1, 8)]
    assert db.view("counts").lookup() == [(8, 1)]


def test_truncate_commits_a_transaction_first_and_refuses_what_is_no_table(
        db: rivulet.Database) -> None:
    db.execute("CREATE VIEW v AS SELECT id FROM t")
    with db.transaction() as tx:
        tx.execute("INSERT INTO t (a) VALUES (1)")
        tx.execute("TRUNCATE TABLE t")  # MySQL's implicit commit: the insert, then all gone
        tx.execute("INSERT INTO t (a) VALUES (2)")
        tx.rollback()
    assert db.query("SELECT COUNT(*) FROM t") == [(0,)]
    for sql, kind in [("TRUNCATE TABLE v", UnknownObjectError),
                      ("TRUNCATE TABLE nothing", UnknownObjectError)]:
        with pytest.raises(kind):
            db.execute(sql)


def test_truncate_through_the_server(db: rivulet.Database) -> None:
    db.execute("INSERT INTO t (a) VALUES (1), (2)")
    server = ServerThread(db, port=0)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                               database="rivulet", autocommit=False)
        with conn.cursor() as cursor:
            cursor.execute("INSERT INTO t (a) VALUES (3)")
            cursor.execute("TRUNCATE TABLE t")
            conn.rollback()  # nothing left to roll back: TRUNCATE committed the insert
            cursor.execute("SELECT COUNT(*) FROM t")
            assert cursor.fetchall() == ((0,),)
            cursor.execute("INSERT INTO t (a) VALUES (4)")
            conn.commit()
            cursor.execute("SELECT id FROM t")
            assert cursor.fetchall() == ((1,),)
        conn.close()
    finally:
        server.stop()


# --------------------------------------------------------------------------- RENAME TABLE


def test_a_rename_beside_other_alter_actions_is_refused_clearly(db: rivulet.Database) -> None:
    """``ALTER TABLE t RENAME TO u`` alone renames (tests/test_broken_views.py); beside
    other actions it is refused, and nothing changes."""
    for sql in ("ALTER TABLE t RENAME TO u, ADD COLUMN z INT",
                "ALTER TABLE t ADD COLUMN z INT, RENAME TO u"):
        with pytest.raises(UnsupportedSqlError, match="RENAME") as info:
            db.execute(sql)
        assert error_code(info.value).mysql == 1235
    assert db.catalog.table("t") is not None and db.catalog.table("u") is None
    assert not db.catalog.table("t").has_column("z")


# --------------------------------------------------------------------------- against MariaDB


def test_index_ddl_and_truncate_agree_with_mariadb(mysql_pair: MySQLPair) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, a INT, b VARCHAR(10))")
    pair.execute("INSERT INTO t (a, b) VALUES (1, 'x'), (1, 'y'), (2, 'z')")
    for sql, code in [
        ("CREATE INDEX ia ON t (a)", None),
        ("CREATE INDEX ia ON t (b)", 1061),
        ("CREATE UNIQUE INDEX ua ON t (a)", 1062),
        ("ALTER TABLE t ADD UNIQUE (a)", 1062),
        ("ALTER TABLE t ADD CONSTRAINT ub UNIQUE (b)", None),
        ("ALTER TABLE t ADD INDEX (a, b), ADD KEY (a)", None),
        ("DROP INDEX nope ON t", 1091),
        ("ALTER TABLE t DROP INDEX nope", 1091),
        ("INSERT INTO t (a, b) VALUES (3, 'x')", 1062),
        ("DROP INDEX ia ON t", None),
    ]:
        assert pair.error_codes(sql) == (code, code), sql
    maria_keys = {(r[2], r[3], r[4], r[1]) for r in pair.mariadb("SHOW INDEX FROM t")}
    rivulet_keys = {(r[2], r[3], r[4], r[1])
                    for r in show_index(pair.db.catalog.require_table("t"))[0]}
    assert rivulet_keys == maria_keys
    pair.execute("INSERT INTO t (a, b) VALUES (3, 'w')")
    pair.execute("TRUNCATE TABLE t")
    pair.execute("INSERT INTO t (a, b) VALUES (4, 'v')")
    pair.check_query("SELECT id, a, b FROM t")
    pair.execute("INSERT INTO t (a, b) VALUES (5, 'v')")  # (both refuse: ub is unique)
    pair.check_query("SELECT id, a, b FROM t")
