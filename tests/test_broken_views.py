"""Views whose tables are gone, ``RENAME TABLE``, and the error codes of ``DROP TABLE``,
against MariaDB (rivulet/plan/broken.py, rivulet/sql/rename.py).

MySQL's ``DROP TABLE t`` drops ``t`` even where views read it: each view stays (listed by
``SHOW TABLES`` and ``information_schema``) and every read of it is error 1356 until a
table of that name with the columns it needs exists again, when it answers again. A
``RENAME TABLE`` leaves the views of the old name the same way. ORM test suites lean on
both (their teardowns drop tables in any order). Each behaviour here is checked against
the private MariaDB (codes and answers), through the Python API and the MySQL server,
and across a restart.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest
from mysql_oracle import MySQLPair

import rivulet
from rivulet.errors import (
    BrokenViewError,
    RivuletError,
    UnsupportedSqlError,
    error_code,
)
from rivulet.server.mysql.server import ServerThread

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# --------------------------------------------------------------------------- helpers


def same_code(pair: MySQLPair, sql: str, code: int | None) -> None:
    """``sql`` fails with ``code`` on both (None: succeeds on both)."""
    assert pair.error_codes(sql) == (code, code), sql


def reopen(pair: MySQLPair) -> None:
    """rivulet restarted on its directory (MariaDB's side stays as it is)."""
    pair.db.close()
    pair.db = rivulet.open(pair.path)


def tables(pair: MySQLPair) -> list[tuple[str, str]]:
    """``SHOW FULL TABLES`` over the MySQL protocol from rivulet, checked against
    MariaDB's."""
    with pair.conn.cursor() as cur:
        cur.execute("SHOW FULL TABLES")
        theirs = sorted(cur.fetchall())
    ours = sorted(over_the_wire(pair.db, "SHOW FULL TABLES"))
    assert ours == theirs
    return ours


def over_the_wire(db: rivulet.Database, sql: str) -> list[tuple]:
    """The rows of ``sql`` sent to rivulet's MySQL server (or its error, raised)."""
    running = ServerThread(db, port=0)
    try:
        conn = pymysql.connect(host="127.0.0.1", port=running.port, user="root",
                               password="", database="rivulet", autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                return list(cur.fetchall())
        finally:
            conn.close()
    finally:
        running.stop()


def wire_code(db: rivulet.Database, sql: str) -> int | None:
    try:
        over_the_wire(db, sql)
    except pymysql.err.MySQLError as exc:
        return int(exc.args[0])
    return None


@pytest.fixture
def pair(mysql_pair: MySQLPair) -> Iterator[MySQLPair]:
    mysql_pair.execute("CREATE TABLE t (a INT PRIMARY KEY, b INT)")
    mysql_pair.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    mysql_pair.execute("CREATE VIEW v AS SELECT a, b FROM t WHERE b > 5")
    mysql_pair.execute("CREATE VIEW v2 AS SELECT a FROM v")
    yield mysql_pair


# --------------------------------------------------------------------------- DROP TABLE


def test_a_table_views_read_is_dropped_and_the_views_stay_broken(pair: MySQLPair) -> None:
    pair.check_query("SELECT * FROM v2")
    pair.execute("DROP TABLE t")
    for sql in ("SELECT * FROM v", "SELECT a FROM v2", "SELECT * FROM v JOIN v2 ON v.a = v2.a"):
        same_code(pair, sql, 1356)
    with pytest.raises(BrokenViewError, match=r"View 'rivulet\.v' references invalid"):
        pair.db.view("v")
    assert tables(pair) == [("v", "VIEW"), ("v2", "VIEW")]
    # The names stay taken, by views.
    same_code(pair, "CREATE TABLE v (x INT PRIMARY KEY)", 1050)
    same_code(pair, "CREATE VIEW v2 AS SELECT 1 AS a", 1050)
    # DROP TABLE of a view: MariaDB's own 1965 ("is a view"); rivulet's is MySQL 8's.
    assert pair.error_codes("DROP TABLE v") == (1965, 1051)


def test_the_views_answer_again_once_the_table_is_back(pair: MySQLPair) -> None:
    pair.execute("DROP TABLE t")
    pair.execute("CREATE TABLE t (b INT, a INT PRIMARY KEY, c INT)")
    pair.execute("INSERT INTO t VALUES (30, 3, 0), (1, 4, 0)")
    pair.check_query("SELECT * FROM v")
    pair.check_query("SELECT * FROM v2")
    pair.execute("INSERT INTO t VALUES (50, 5, 0)")
    assert pair.check_query("SELECT a FROM v2") == [(3,), (5,)]
    # A table without a column the view reads: broken still.
    pair.execute("DROP TABLE t")
    pair.execute("CREATE TABLE t (a INT PRIMARY KEY)")
    same_code(pair, "SELECT * FROM v", 1356)
    same_code(pair, "SELECT * FROM v2", 1356)


def test_a_column_added_back_by_alter_table_brings_a_view_back(pair: MySQLPair) -> None:
    pair.execute("DROP TABLE t")
    pair.execute("CREATE TABLE t (a INT PRIMARY KEY)")
    pair.execute("INSERT INTO t VALUES (1), (2)")
    same_code(pair, "SELECT * FROM v", 1356)
    same_code(pair, "CREATE VIEW w AS SELECT a FROM v2", 1356)  # (a view over a broken one)
    pair.execute("ALTER TABLE t ADD COLUMN b INT DEFAULT 6")
    pair.check_query("SELECT * FROM v2")
    reopen(pair)  # (restored: the view, the table, then the ALTER that brings it back)
    pair.execute("INSERT INTO t VALUES (3, 1)")
    assert pair.check_query("SELECT * FROM v") == [(1, 6), (2, 6)]


def test_a_broken_view_stays_broken_across_a_restart_and_comes_back(pair: MySQLPair) -> None:
    pair.execute("DROP TABLE t")
    reopen(pair)
    same_code(pair, "SELECT * FROM v2", 1356)
    assert tables(pair) == [("v", "VIEW"), ("v2", "VIEW")]
    pair.execute("CREATE TABLE t (a INT PRIMARY KEY, b INT)")
    pair.execute("INSERT INTO t VALUES (7, 70), (8, 1)")
    pair.check_query("SELECT * FROM v2")
    # Made again after the views in the stored program, the table is restored after them:
    # they are built once it is.
    reopen(pair)
    assert pair.check_query("SELECT * FROM v") == [(7, 70)]
    pair.execute("INSERT INTO t VALUES (9, 90)")
    assert pair.check_query("SELECT * FROM v2") == [(7,), (9,)]


def test_a_broken_view_is_dropped_or_replaced(pair: MySQLPair) -> None:
    pair.execute("DROP TABLE t")
    pair.execute("DROP VIEW v2")
    pair.execute("CREATE OR REPLACE VIEW v AS SELECT 1 AS a")
    pair.check_query("SELECT * FROM v")
    assert tables(pair) == [("v", "VIEW")]
    reopen(pair)
    pair.check_query("SELECT * FROM v")
    pair.execute("DROP VIEW v")
    assert tables(pair) == []
    pair.execute("CREATE TABLE v2 (a INT PRIMARY KEY)")  # the names are free again
    reopen(pair)
    assert tables(pair) == [("v2", "BASE TABLE")]


def test_introspection_lists_a_broken_view_without_columns(pair: MySQLPair) -> None:
    pair.execute("DROP TABLE t")
    listing = ("SELECT TABLE_NAME, TABLE_TYPE, TABLE_COMMENT FROM information_schema.TABLES "
               "WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME")
    columns = ("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS "
               "WHERE TABLE_SCHEMA = DATABASE()")
    for sql in (listing, columns):
        with pair.conn.cursor() as cur:
            cur.execute(sql)
            assert over_the_wire(pair.db, sql) == list(cur.fetchall()), sql
    for sql in ("DESCRIBE v", "SHOW COLUMNS FROM v2"):
        with pytest.raises(pymysql.err.MySQLError) as theirs:
            with pair.conn.cursor() as cur:
                cur.execute(sql)
        assert theirs.value.args[0] == wire_code(pair.db, sql) == 1356, sql
    # SHOW CREATE VIEW shows the definition (MariaDB with a warning).
    assert "SELECT a, b FROM t WHERE b > 5" in over_the_wire(pair.db, "SHOW CREATE VIEW v")[0][1]


# --------------------------------------------------------------------------- error codes


def test_drop_table_codes_agree_with_mariadb(pair: MySQLPair) -> None:
    pair.execute("CREATE TABLE u (id INT PRIMARY KEY)")
    same_code(pair, "DROP TABLE missing", 1051)
    same_code(pair, "DROP TABLE IF EXISTS missing", None)  # (a note)
    same_code(pair, "DROP TABLE IF EXISTS u, missing", None)
    pair.execute("CREATE TABLE u (id INT PRIMARY KEY)")
    same_code(pair, "DROP TABLE u, missing", 1051)  # u dropped, on both
    same_code(pair, "SELECT * FROM u", 1146)
    same_code(pair, "SELECT x.* FROM t", 1051)
    with pytest.raises(rivulet.RivuletError, match=r"Unknown table 'rivulet\.m1,rivulet\.m2'"):
        pair.db.execute("DROP TABLE m1, t, m2")
    assert pair.db.catalog.table("t") is None


# --------------------------------------------------------------------------- RENAME TABLE


def test_rename_table_keeps_rows_and_agrees_with_mariadb(pair: MySQLPair) -> None:
    pair.execute("CREATE TABLE u (id INT PRIMARY KEY AUTO_INCREMENT, s VARCHAR(5) NOT NULL, "
                 "UNIQUE KEY us (s))")
    pair.execute("INSERT INTO u (s) VALUES ('x'), ('y')")
    same_code(pair, "RENAME TABLE u TO t", 1050)
    same_code(pair, "RENAME TABLE u TO v", 1050)
    same_code(pair, "RENAME TABLE missing TO w", 1146)
    same_code(pair, "RENAME TABLE u TO w, missing TO z", 1146)  # all or none
    same_code(pair, "SELECT * FROM w", 1146)
    pair.execute("RENAME TABLE u TO w")
    pair.check_query("SELECT * FROM w")
    same_code(pair, "SELECT * FROM u", 1146)
    pair.execute("INSERT INTO w (s) VALUES ('z')")
    pair.execute("ALTER TABLE w RENAME TO u2")
    pair.execute("ALTER TABLE u2 RENAME u3")
    reopen(pair)
    pair.check_query("SELECT * FROM u3")
    pair.execute("INSERT INTO u3 (s) VALUES ('q')")  # numbered on from the rows kept
    pair.check_query("SELECT * FROM u3")
    same_code(pair, "INSERT INTO u3 (s) VALUES ('z')", 1062)  # its UNIQUE key kept
    assert ("u3", "BASE TABLE") in tables(pair)


def test_a_renamed_tables_views_break_and_a_swap_brings_them_back(pair: MySQLPair) -> None:
    pair.execute("CREATE TABLE t2 (a INT PRIMARY KEY, b INT)")
    pair.execute("INSERT INTO t2 VALUES (3, 30)")
    pair.execute("RENAME TABLE t TO old_t")
    same_code(pair, "SELECT * FROM v", 1356)
    same_code(pair, "SELECT * FROM v2", 1356)
    pair.execute("RENAME TABLE t2 TO t, old_t TO t2")  # the views read t: t2's rows now
    pair.check_query("SELECT * FROM v")
    pair.check_query("SELECT * FROM v2")
    pair.check_query("SELECT * FROM t2")
    reopen(pair)
    assert pair.check_query("SELECT * FROM v") == [(3, 30)]
    pair.check_query("SELECT * FROM t2")
    pair.execute("INSERT INTO t VALUES (4, 40)")
    pair.check_query("SELECT * FROM v2")


def test_rename_table_over_the_mysql_protocol(pair: MySQLPair) -> None:
    db = pair.db
    assert over_the_wire(db, "RENAME TABLE t TO t3") == []
    assert wire_code(db, "SELECT * FROM v") == 1356
    assert wire_code(db, "RENAME TABLE t TO t4") == 1146
    assert over_the_wire(db, "ALTER TABLE t3 RENAME TO t") == []
    db.settle()
    assert over_the_wire(db, "SELECT * FROM v2") == [(1,), (2,)]


def test_what_rename_table_refuses(tmp_path: Path) -> None:
    """What rivulet cannot rename as MySQL does is refused (1235), changing nothing: a table
    a FOREIGN KEY references, one made by CREATE TABLE ... AS SELECT or read by one, a
    view."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute_script("""
            CREATE TABLE p (id INT PRIMARY KEY);
            CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id));
            CREATE TABLE s (id INT PRIMARY KEY, x INT);
            CREATE TABLE copied AS SELECT id, x FROM s;
            CREATE VIEW pv AS SELECT id FROM p;
        """)
        before = db.storage.program()
        for sql, words in [("RENAME TABLE p TO q", "FOREIGN KEY"),
                           ("RENAME TABLE copied TO q", "AS SELECT"),
                           ("RENAME TABLE s TO q", "AS SELECT"),
                           ("RENAME TABLE pv TO q", "view"),
                           ("RENAME TABLE c TO c2, p TO q", "FOREIGN KEY")]:
            with pytest.raises(UnsupportedSqlError, match=words):
                db.execute(sql)
        assert db.storage.program() == before
        db.execute("RENAME TABLE c TO c2")  # (a child renames: its key names the parent)
        db.execute("INSERT INTO p VALUES (1)")
        db.execute("INSERT INTO c2 VALUES (1, 1)")
        with pytest.raises(RivuletError):
            db.execute("INSERT INTO c2 VALUES (2, 5)")  # still enforced (1452)
    with rivulet.open(tmp_path / "db") as db:
        assert db.query("SELECT * FROM c2") == [(1, 1)]


def test_rename_follows_mysql_8s_generated_constraint_names(tmp_path: Path) -> None:
    """MySQL 8 renames ``t_chk_n`` CHECK names with their table; the program restored
    names them the same."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE k (id INT PRIMARY KEY, n INT CHECK (n > 0))")
        db.execute("RENAME TABLE k TO k2")
        assert [c.name for c in db.catalog.table("k2").checks] == ["k2_chk_1"]
    with rivulet.open(tmp_path / "db") as db:
        assert [c.name for c in db.catalog.table("k2").checks] == ["k2_chk_1"]
        with pytest.raises(RivuletError, match="k2_chk_1"):
            db.execute("INSERT INTO k2 VALUES (1, 0)")


# --------------------------------------------------------------------------- CTEs


def test_a_cte_named_like_a_view_is_not_that_view(tmp_path: Path) -> None:
    """A view whose CTE is named like another view does not read that view: the other one
    may be dropped (it was refused as "used by")."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute_script("""
            CREATE TABLE t (a INT PRIMARY KEY);
            CREATE VIEW c AS SELECT a FROM t;
            CREATE VIEW w AS WITH c AS (SELECT a FROM t WHERE a > 1) SELECT a FROM c;
            CREATE VIEW r AS SELECT a FROM c;
        """)
        db.execute("INSERT INTO t VALUES (1), (2)")
        with pytest.raises(rivulet.ProgramError, match="r"):
            db.execute("DROP VIEW c")  # (r does read it)
        db.execute("DROP VIEW r")
        db.execute("DROP VIEW c")
        db.settle()
        assert db.query("SELECT a FROM w") == [(2,)]


def test_the_cte_scopes_of_a_view_source(tmp_path: Path) -> None:
    from rivulet.engine.program import _view_sources

    assert _view_sources("WITH c AS (SELECT a FROM t), d AS (SELECT a FROM c) "
                         "SELECT * FROM d") == {"t"}
    # A CTE's own query reads the table of its name; a query beside the WITH, the view.
    assert _view_sources("WITH c AS (SELECT a FROM c) SELECT a FROM c") == {"c"}
    assert _view_sources("SELECT * FROM (WITH c AS (SELECT 1 AS a) SELECT a FROM c) x "
                         "JOIN c ON c.a = x.a") == {"c"}
    assert _view_sources("WITH c AS (SELECT 1 AS a) SELECT a FROM c") == set()


# --------------------------------------------------------------------------- copies


def test_a_table_a_stored_copy_reads_is_not_dropped_alone(tmp_path: Path) -> None:
    """The program restored makes a ``CREATE TABLE ... AS SELECT`` table from its source
    again, so dropping the source alone would leave a database that does not open: it is
    refused (1235), changing nothing; with its copy in the same statement it goes."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute_script("""
            CREATE TABLE s (a INT PRIMARY KEY, b INT);
            INSERT INTO s VALUES (1, 2);
            CREATE TABLE c AS SELECT a, b FROM s;
        """)
        for drop in (lambda: db.execute("DROP TABLE s"), lambda: db.drop_table("s")):
            with pytest.raises(UnsupportedSqlError, match="CREATE TABLE ... AS SELECT") as info:
                drop()
            assert error_code(info.value).mysql == 1235
    with rivulet.open(tmp_path / "db") as db:
        assert db.query("SELECT * FROM c") == [(1, 2)]
        db.execute("DROP TABLE s, c")
    with rivulet.open(tmp_path / "db") as db:
        assert db.catalog.tables == {}


def test_rename_table_in_another_database_renames_its_tables(tmp_path: Path) -> None:
    """Over a connection whose database is not the default one, bare names are of that
    database (as every statement's are), qualified ones of theirs."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute_script("""
            CREATE DATABASE shop;
            CREATE TABLE t (a INT PRIMARY KEY);
            CREATE TABLE shop.t (a INT PRIMARY KEY);
            INSERT INTO shop.t VALUES (5);
        """)
        running = ServerThread(db, port=0)
        try:
            conn = pymysql.connect(host="127.0.0.1", port=running.port, user="root",
                                   password="", database="shop", autocommit=True)
            with conn.cursor() as cur:
                cur.execute("RENAME TABLE t TO u")
                cur.execute("ALTER TABLE u RENAME TO w")
                cur.execute("RENAME TABLE w TO rivulet.moved, rivulet.t TO `t two`")
            conn.close()
        finally:
            running.stop()
        assert sorted(db.catalog.tables) == ["moved", "shop.t two"]
    with rivulet.open(tmp_path / "db") as db:
        assert db.query("SELECT a FROM moved") == [(5,)]
        assert db.catalog.table("shop.t two") is not None


def test_a_view_of_several_tables_made_again_with_other_columns_is_refused(
        pair: MySQLPair) -> None:
    """MySQL keeps each column of a view as the table it stood for; rivulet keeps the
    query, whose unqualified names could now find another table's column (here ``b``, of
    ``u`` now: MySQL's ``t.b`` is gone, 1356). A view of several tables whose columns
    changed is refused (1235) rather than answered; with the same columns it answers."""
    pair.execute("CREATE TABLE u (id INT PRIMARY KEY, c INT)")
    pair.execute("CREATE VIEW j AS SELECT a, b, c FROM t JOIN u ON t.a = u.id")
    pair.execute("DROP TABLE t")
    pair.execute("DROP TABLE u")
    pair.execute("CREATE TABLE t (a INT PRIMARY KEY)")
    pair.execute("CREATE TABLE u (id INT PRIMARY KEY, b INT, c INT)")
    assert pair.error_codes("SELECT * FROM j") == (1356, 1235)
    reopen(pair)  # (what it was made over is kept in the stored program)
    assert pair.error_codes("SELECT * FROM j") == (1356, 1235)
    pair.execute("DROP TABLE t")
    pair.execute("DROP TABLE u")
    pair.execute("CREATE TABLE t (a INT PRIMARY KEY, b INT)")
    pair.execute("CREATE TABLE u (id INT PRIMARY KEY, c INT)")
    pair.execute("INSERT INTO t VALUES (1, 2)")
    pair.execute("INSERT INTO u VALUES (1, 3)")
    assert pair.check_query("SELECT * FROM j") == [(1, 2, 3)]
