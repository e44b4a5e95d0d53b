"""FOREIGN KEY constraints as InnoDB enforces them, compared with MariaDB 10.11 on the same
statements: outcomes (error codes) and the tables' rows after them; cascades seen by views
as one delta; inside transactions; over the MySQL protocol with its session's
``foreign_key_checks``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

import rivulet
from rivulet.errors import error_code
from rivulet.server.mysql.server import ServerThread

PARENT_CHILD = [
    "CREATE TABLE a (id INT PRIMARY KEY, y INT, UNIQUE KEY (y))",
    "CREATE TABLE b (id INT PRIMARY KEY, a_id INT, CONSTRAINT fk_b FOREIGN KEY (a_id) "
    "REFERENCES a (id) ON DELETE CASCADE ON UPDATE CASCADE)",
    "CREATE TABLE c (id INT PRIMARY KEY, b_id INT REFERENCES b (id))",
    "CREATE TABLE d (id INT PRIMARY KEY, y INT, FOREIGN KEY (y) REFERENCES a (y) "
    "ON DELETE SET NULL ON UPDATE SET NULL)",
]


def code(pair: Any, sql: str) -> int | None:
    """The MySQL error code both sides fail ``sql`` with (None: both succeed), after
    checking they agree."""
    maria, riv = pair.error_codes(sql)
    assert riv == maria, f"{sql!r}: rivulet {riv}, mariadb {maria}"
    return riv


def same_rows(pair: Any, *tables: str) -> None:
    for table in tables:
        pair.check_query(f"SELECT * FROM {table}")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    """A database with tables a and b (b's FOREIGN KEY fk_b: ON DELETE and ON UPDATE
    CASCADE); lazy copies are made only as writes and reads need them."""
    database = rivulet.open(tmp_path / "db", background_migration=False)
    for sql in PARENT_CHILD[:2]:
        database.execute(sql)
    yield database
    database.close()


def test_create_table_with_foreign_keys_and_their_index(mysql_pair: Any) -> None:
    for sql in PARENT_CHILD:
        pair = mysql_pair
        pair.execute(sql)
    schema = pair.db.catalog.require_table("b")
    assert [k.name for k in schema.keys] == ["fk_b"]  # (the index InnoDB makes, named so)
    assert [f.name for f in pair.db.catalog.require_table("c").foreign_keys] == ["c_ibfk_1"]
    # Referenced columns without a key, no such table, SET NULL of a NOT NULL column: 1005.
    assert code(pair, "CREATE TABLE e (id INT PRIMARY KEY, z INT, "
                      "FOREIGN KEY (z) REFERENCES b (a_id))") is None  # (b's index on a_id)
    assert code(pair, "CREATE TABLE g (id INT PRIMARY KEY, z INT, "
                      "FOREIGN KEY (z) REFERENCES nope (id))") == 1005
    assert code(pair, "CREATE TABLE h (id INT PRIMARY KEY, z INT NOT NULL, "
                      "FOREIGN KEY (z) REFERENCES a (id) ON DELETE SET NULL)") == 1005
    assert code(pair, "CREATE TABLE j (id INT PRIMARY KEY, z BIGINT, "
                      "FOREIGN KEY (z) REFERENCES a (id))") == 1005
    assert code(pair, "CREATE TABLE k (id INT PRIMARY KEY, z INT, "
                      "FOREIGN KEY (nope) REFERENCES a (id))") == 1072
    assert code(pair, "CREATE TABLE m (id INT PRIMARY KEY, z INT, "
                      "FOREIGN KEY (z) REFERENCES a (id, y))") == 1239
    assert code(pair, "CREATE TABLE n (id INT PRIMARY KEY, z INT, CONSTRAINT f FOREIGN KEY "
                      "(z) REFERENCES a (id), CONSTRAINT f FOREIGN KEY (z) REFERENCES a (y))") \
        == 1005
    assert code(pair, "CREATE TABLE o (id INT PRIMARY KEY, z VARCHAR(5), "
                      "FOREIGN KEY (z) REFERENCES a (id))") == 1005
    # MariaDB takes SET DEFAULT (InnoDB does not carry it out); rivulet refuses it: 1235.
    with pytest.raises(rivulet.UnsupportedSqlError):
        pair.db.execute("CREATE TABLE i (id INT PRIMARY KEY, z INT, "
                        "FOREIGN KEY (z) REFERENCES a (id) ON DELETE SET DEFAULT)")


def test_checks_and_actions_as_mariadb(mysql_pair: Any) -> None:
    pair = mysql_pair
    for sql in PARENT_CHILD:
        pair.execute(sql)
    pair.db.execute("CREATE VIEW per_parent AS SELECT a_id, COUNT(*) AS n FROM b GROUP BY a_id")
    pair.views["per_parent"] = "SELECT a_id, COUNT(*) AS n FROM b GROUP BY a_id"
    outcomes = [
        ("INSERT INTO b VALUES (1, 5)", 1452),
        ("INSERT INTO a VALUES (5, 50), (6, 60), (7, 70)", None),
        ("INSERT INTO b VALUES (1, 5), (2, 5), (3, 6), (4, NULL)", None),
        ("INSERT INTO b VALUES (5, 6), (6, 99)", 1452),  # (atomic: (5, 6) is not stored)
        ("INSERT INTO c VALUES (1, 1), (2, 3)", None),
        ("INSERT INTO d VALUES (1, 50), (2, 60), (3, NULL)", None),
        ("UPDATE b SET a_id = 99 WHERE id = 4", 1452),
        ("UPDATE b SET a_id = 7 WHERE id = 4", None),
        ("DELETE FROM a WHERE id = 5", 1451),  # cascades to b (1), which c references
        ("UPDATE a SET id = 15 WHERE id = 5", None),  # ON UPDATE CASCADE: b follows
        ("UPDATE a SET y = 66 WHERE id = 6", None),  # ON UPDATE SET NULL: d.y of 60
        ("DELETE FROM c WHERE id = 1", None),
        ("DELETE FROM a WHERE id = 15", None),  # cascades: b 1 and 2 go
        ("DELETE FROM a WHERE id = 7", None),
        ("DELETE FROM b WHERE id = 3", 1451),  # c 2 references it
        ("TRUNCATE TABLE a", 1701),
        ("DROP TABLE a", 1451),
    ]
    for sql, expected in outcomes:
        assert code(pair, sql) == expected, sql
        same_rows(pair, "a", "b", "c", "d")
        pair.check_view("per_parent")


def test_self_reference_row_by_row(mysql_pair: Any) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE s (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES s (id))")
    pair.execute("CREATE TABLE t (id INT PRIMARY KEY, p INT, "
                 "FOREIGN KEY (p) REFERENCES t (id) ON DELETE CASCADE)")
    for sql, expected in [
        ("INSERT INTO s VALUES (1, 1)", None),
        ("INSERT INTO s VALUES (3, 2), (2, NULL)", 1452),
        ("INSERT INTO s VALUES (2, NULL), (3, 2)", None),
        ("DELETE FROM s WHERE id > 1", 1451),  # (2 before its child 3)
        ("DELETE FROM s WHERE id = 3", None),
        ("INSERT INTO t VALUES (1, NULL), (2, 1), (3, 2), (4, NULL)", None),
        ("DELETE FROM t WHERE id = 1", None),  # the chain goes
        ("DELETE FROM s", 1451),
        ("INSERT INTO s VALUES (0, 2)", None),
        ("DELETE FROM s WHERE id IN (2, 0)", None),  # (in key order: the child 0 first)
    ]:
        assert code(pair, sql) == expected, sql
        same_rows(pair, "s", "t")


def test_cascades_go_15_levels_deep(mysql_pair: Any) -> None:
    pair = mysql_pair
    for n in (15, 16):
        pair.execute(f"CREATE TABLE c{n} (id INT PRIMARY KEY, p INT, "
                     f"FOREIGN KEY (p) REFERENCES c{n} (id) ON DELETE CASCADE)")
        chain = ", ".join(f"({i}, {i - 1 if i > 1 else 'NULL'})" for i in range(1, n + 1))
        pair.execute(f"INSERT INTO c{n} VALUES {chain}")
    assert code(pair, "DELETE FROM c15 WHERE id = 1") is None
    assert code(pair, "DELETE FROM c16 WHERE id = 1") == 1296
    same_rows(pair, "c15", "c16")


def test_foreign_key_checks_off_and_on(mysql_pair: Any) -> None:
    pair = mysql_pair
    for sql in PARENT_CHILD[:2]:
        pair.execute(sql)
    pair.execute("INSERT INTO a VALUES (1, 10)")
    pair.execute("INSERT INTO b VALUES (1, 1)")
    for sql, expected in [
        ("SET foreign_key_checks = 0", None),
        ("INSERT INTO b VALUES (2, 99)", None),
        ("DELETE FROM a WHERE id = 1", None),  # no cascade either
        ("SET foreign_key_checks = 1", None),
        ("INSERT INTO b VALUES (3, 98)", 1452),
        ("UPDATE b SET a_id = 99 WHERE id = 2", None),  # (its key unchanged: not checked)
        ("UPDATE b SET id = 4 WHERE id = 2", 1452),  # (a new primary key: checked)
        ("TRUNCATE TABLE a", 1701),
        ("DROP TABLE a", 1451),
        ("SET @@foreign_key_checks = OFF", None),
        ("CREATE TABLE e (id INT PRIMARY KEY, z INT, FOREIGN KEY (z) REFERENCES later (id))",
         None),  # (a parent not made yet)
        ("TRUNCATE TABLE a", None),
        ("DROP TABLE a", None),
        ("SET foreign_key_checks = 1", None),
        ("INSERT INTO b VALUES (5, NULL)", None),
        ("INSERT INTO b VALUES (6, 1)", 1452),  # (its parent table is gone)
        ("CREATE TABLE a (id INT PRIMARY KEY, y INT)", None),
        ("INSERT INTO a VALUES (1, 10)", None),
        ("INSERT INTO b VALUES (6, 1)", None),  # (found again)
    ]:
        assert code(pair, sql) == expected, sql
        if "DROP" not in sql and "e (" not in sql:
            same_rows(pair, "b")


def test_alter_table_add_and_drop_foreign_key(mysql_pair: Any) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE a (id INT PRIMARY KEY)")
    pair.execute("CREATE TABLE b (id INT PRIMARY KEY, a_id INT)")
    pair.execute("INSERT INTO a VALUES (1)")
    pair.execute("INSERT INTO b VALUES (1, 1), (2, 2)")
    assert code(pair, "ALTER TABLE b ADD CONSTRAINT fk FOREIGN KEY (a_id) REFERENCES a (id)") \
        == 1452  # (a row stored without a parent)
    pair.execute("DELETE FROM b WHERE id = 2")
    pair.execute("ALTER TABLE b ADD CONSTRAINT fk FOREIGN KEY (a_id) REFERENCES a (id) "
                 "ON DELETE CASCADE")
    assert [k.name for k in pair.db.catalog.require_table("b").keys] == ["fk"]
    assert code(pair, "INSERT INTO b VALUES (3, 3)") == 1452
    pair.execute("ALTER TABLE b ADD COLUMN note VARCHAR(10)")  # (the FOREIGN KEY stays)
    assert code(pair, "INSERT INTO b VALUES (3, 3, 'x')") == 1452
    pair.execute("ALTER TABLE b RENAME COLUMN a_id TO parent")
    assert code(pair, "INSERT INTO b VALUES (3, 3, 'x')") == 1452
    assert code(pair, "ALTER TABLE b DROP COLUMN parent") == 1553
    assert code(pair, "ALTER TABLE b DROP INDEX fk") == 1553  # (the FOREIGN KEY's index)
    assert code(pair, "ALTER TABLE b ADD CONSTRAINT fk FOREIGN KEY (parent) REFERENCES a (id)") \
        == 1005  # (errno 121: the name is taken)
    assert code(pair, "ALTER TABLE b DROP FOREIGN KEY nope") == 1091
    pair.execute("ALTER TABLE b DROP FOREIGN KEY fk")
    assert code(pair, "INSERT INTO b VALUES (3, 3, 'x')") is None
    assert code(pair, "ALTER TABLE b ADD FOREIGN KEY (parent) REFERENCES a (id)") == 1452
    pair.execute("DELETE FROM b WHERE id = 3")
    pair.execute("ALTER TABLE b ADD FOREIGN KEY (parent) REFERENCES a (id)")
    assert [f.name for f in pair.db.catalog.require_table("b").foreign_keys] == ["b_ibfk_1"]
    assert code(pair, "DELETE FROM a") == 1451
    # An added column's inline REFERENCES is a FOREIGN KEY (MariaDB's); the rows stored
    # are checked with the value they read in it.
    assert code(pair, "ALTER TABLE b ADD COLUMN other INT DEFAULT 7 REFERENCES a (id)") == 1452
    assert code(pair, "ALTER TABLE b ADD COLUMN other INT DEFAULT 1 REFERENCES a (id)") is None
    assert code(pair, "INSERT INTO b VALUES (4, 1, 'y', 7)") == 1452
    same_rows(pair, "a", "b")


def test_transaction_sees_its_cascades_and_rolls_them_back(db: rivulet.Database) -> None:
    db.execute("INSERT INTO a VALUES (1, 10), (2, 20)")
    db.execute("INSERT INTO b VALUES (1, 1), (2, 1), (3, 2)")
    db.execute("CREATE VIEW kids AS SELECT a_id, COUNT(*) AS n FROM b GROUP BY a_id")
    with db.transaction() as tx:
        tx.execute("DELETE FROM a WHERE id = 1")
        assert tx.query("SELECT * FROM b ORDER BY id") == [(3, 2)]
        with pytest.raises(rivulet.RivuletError) as failed:
            tx.execute("INSERT INTO b VALUES (9, 1)")
        assert error_code(failed.value).mysql == 1452
        tx.rollback()
    db.settle()
    assert sorted(db.view("kids").lookup()) == [(1, 2), (2, 1)]
    lsn = db.storage.lsn
    with db.transaction() as tx:
        tx.execute("DELETE FROM a WHERE id = 1")
    db.settle()
    assert db.storage.lsn == lsn + 1  # one commit: the parent and its children
    assert sorted(db.view("kids").lookup()) == [(2, 1)]
    assert db.query("SELECT * FROM b") == [(3, 2)]


def test_self_reference_actions_on_rows_the_statement_deletes_later(mysql_pair: Any) -> None:
    pair = mysql_pair
    pair.execute("CREATE TABLE t (id INT PRIMARY KEY, p INT, "
                 "FOREIGN KEY (p) REFERENCES t (id) ON DELETE CASCADE)")
    pair.execute("CREATE TABLE n (id INT PRIMARY KEY, p INT, "
                 "FOREIGN KEY (p) REFERENCES n (id) ON DELETE SET NULL)")
    pair.execute("INSERT INTO t VALUES (1, NULL), (2, 1), (3, 2), (4, NULL), (5, 4)")
    pair.execute("INSERT INTO n VALUES (1, NULL), (2, 1), (3, 2)")
    # Rows a cascade deletes before the DELETE reaches them are not its own (2 affected).
    assert pair.execute("DELETE FROM t") == 2
    assert pair.execute("DELETE FROM n") == 3
    same_rows(pair, "t", "n")


def test_drop_table_order_and_multi_table_drop(mysql_pair: Any) -> None:
    pair = mysql_pair
    for sql in PARENT_CHILD[:2]:
        pair.execute(sql)
    # MariaDB drops b and refuses a (rivulet drops neither: a DDL that fails changes nothing).
    with pytest.raises(rivulet.RivuletError) as failed:
        pair.db.execute("DROP TABLE a, b")
    assert error_code(failed.value).mysql == 1451
    assert code(pair, "DROP TABLE b, a") is None
    assert pair.db.catalog.table("a") is None


def test_refused_and_checked_paths(db: rivulet.Database) -> None:
    db.execute("INSERT INTO a VALUES (1, 10)")
    with pytest.raises(rivulet.UnsupportedSqlError):  # (InnoDB's REPLACE deletes)
        db.execute("REPLACE INTO a VALUES (1, 11)")
    with pytest.raises(rivulet.UnsupportedSqlError):
        db.execute("INSERT INTO a VALUES (1, 11) ON DUPLICATE KEY UPDATE y = 11")
    with pytest.raises(rivulet.UnsupportedSqlError):  # (a referenced table's)
        db.execute("INSERT IGNORE INTO a VALUES (1, 11)")
    with db.transaction() as tx:
        with pytest.raises(rivulet.UnsupportedSqlError):
            tx.execute("REPLACE INTO b VALUES (1, 1)")
        with pytest.raises(rivulet.UnsupportedSqlError):
            tx.execute("INSERT IGNORE INTO a VALUES (1, 11)")
    # An import whose row has no parent fails whole.
    with pytest.raises(rivulet.RivuletError) as failed:
        db.bulk_insert("b", [[(1, 1), (2, 5)]])
    assert error_code(failed.value).mysql == 1452
    db.bulk_insert("b", [[(1, 1), (2, None)]])
    db.settle()
    assert sorted(db.query("SELECT * FROM b")) == [(1, 1), (2, None)]


def test_insert_ignore_skips_rows_without_a_parent(mysql_pair: Any) -> None:
    """INSERT IGNORE into a table with FOREIGN KEYs skips the rows InnoDB skips: those
    whose parent row is missing, as well as duplicates (Django's many-to-many ``add()``
    sends it, in a transaction); in a transaction, the transaction's own parent rows
    count."""
    pair = mysql_pair
    for sql in PARENT_CHILD[:2]:
        pair.execute(sql)
    pair.execute("INSERT INTO a VALUES (1, 10), (2, 20)")
    pair.execute("INSERT INTO b VALUES (1, 1)")
    assert code(pair, "INSERT IGNORE INTO b VALUES (1, 2), (2, 5), (3, 2), (4, NULL), "
                      "(5, 7), (5, 1)") is None
    pair.settle()
    same_rows(pair, "b")
    statements = ["INSERT INTO a VALUES (3, 30)", "INSERT IGNORE INTO b VALUES (6, 3), (7, 9)"]
    with pair.conn.cursor() as cur:
        cur.execute("BEGIN")
        for sql in statements:
            cur.execute(sql)
        cur.execute("SELECT * FROM b")
        theirs = sorted(cur.fetchall())
        cur.execute("COMMIT")
    with pair.db.transaction() as tx:
        for sql in statements:
            tx.execute(sql)
        assert sorted(tx.query("SELECT * FROM b")) == theirs
    pair.settle()
    same_rows(pair, "a", "b")


def test_a_lazy_copy_keeps_the_rows_a_cascade_changes_after_it(db: rivulet.Database) -> None:
    db.execute("INSERT INTO a VALUES (1, 10), (2, 20)")
    db.execute("INSERT INTO b VALUES (1, 1), (2, 1), (3, 2)")
    db.execute("CREATE TABLE snap AS SELECT id, a_id FROM b")  # (copied lazily)
    assert "snap" in db.core.lazy.copies
    db.execute("DELETE FROM a WHERE id = 1")
    db.execute("UPDATE a SET id = 5 WHERE id = 2")
    db.settle()
    assert sorted(db.query("SELECT * FROM snap")) == [(1, 1), (2, 1), (3, 2)]
    assert db.query("SELECT * FROM b") == [(3, 5)]


def test_commit_checks_what_other_commits_changed_meanwhile(db: rivulet.Database) -> None:
    """A transaction's child row whose parent another commit deleted after the statement
    ran: its COMMIT fails (1452) and stores nothing; no row is left without its parent."""
    db.execute("ALTER TABLE b DROP FOREIGN KEY fk_b")
    db.execute("ALTER TABLE b ADD CONSTRAINT fk_b FOREIGN KEY (a_id) REFERENCES a (id)")
    db.execute("INSERT INTO a VALUES (1, 10), (2, 20)")
    tx = db.transaction()
    tx.execute("INSERT INTO b VALUES (1, 1)")
    db.execute("DELETE FROM a WHERE id = 1")  # (the child is not committed yet)
    with pytest.raises(rivulet.RivuletError) as failed:
        tx.commit()
    assert error_code(failed.value).mysql == 1452
    db.settle()
    assert db.query("SELECT * FROM b") == []
    db.execute("INSERT INTO b VALUES (2, 2)")
    tx = db.transaction()
    tx.execute("DELETE FROM b WHERE id = 2")
    tx.execute("DELETE FROM a WHERE id = 2")
    db.execute("INSERT INTO b VALUES (3, 2)")  # (its parent is still there)
    with pytest.raises(rivulet.RivuletError) as failed:
        tx.commit()
    assert error_code(failed.value).mysql == 1451
    db.settle()
    assert sorted(db.query("SELECT * FROM b")) == [(2, 2), (3, 2)]


def test_over_the_wire_per_session_checks(server: ServerThread) -> None:
    def connect() -> Any:
        return pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                               database="rivulet", autocommit=True)

    one, two = connect(), connect()
    try:
        with one.cursor() as cur:
            cur.execute("SELECT @@foreign_key_checks")
            assert cur.fetchall()[0][0] == 1
            with pytest.raises(pymysql.err.IntegrityError) as failed:
                cur.execute("INSERT INTO b VALUES (1, 7)")
            assert failed.value.args[0] == 1452
            with pytest.raises(pymysql.err.OperationalError) as wrong:
                cur.execute("SET foreign_key_checks = 'maybe'")
            assert wrong.value.args[0] == 1231 and "foreign_key_checks" in wrong.value.args[1]
            cur.execute("SET SESSION foreign_key_checks = 0")
            cur.execute("INSERT INTO b VALUES (1, 7)")
        with two.cursor() as cur:  # (another session's checks are its own)
            with pytest.raises(pymysql.err.IntegrityError):
                cur.execute("INSERT INTO b VALUES (2, 7)")
            cur.execute("INSERT INTO a VALUES (7, 70)")
            cur.execute("BEGIN")
            cur.execute("DELETE FROM a WHERE id = 7")
            cur.execute("SELECT COUNT(*) FROM b")
            assert cur.fetchall()[0][0] == 0
            cur.execute("ROLLBACK")
            cur.execute("SELECT COUNT(*) FROM b")
            assert cur.fetchall()[0][0] == 1
            cur.execute("SHOW CREATE TABLE b")
            assert "  CONSTRAINT `fk_b` FOREIGN KEY (`a_id`) REFERENCES `a` (`id`) ON DELETE " \
                   "CASCADE ON UPDATE CASCADE" in cur.fetchall()[0][1]
            with pytest.raises(pymysql.err.IntegrityError) as dropped:
                cur.execute("DROP TABLE a")
            assert dropped.value.args[0] == 1451
        with one.cursor() as cur:  # (checks off: the session's DDL too)
            cur.execute("DROP TABLE a")
    finally:
        one.close()
        two.close()


def test_http_requests_check_and_cannot_turn_checks_off(db: rivulet.Database) -> None:
    """Each HTTP request is a session of its own: FOREIGN KEYs are checked, and a SET of
    foreign_key_checks (which would outlive it) is refused rather than kept for others."""
    from starlette.testclient import TestClient

    from rivulet.server.http.app import make_app

    api = TestClient(make_app(db), raise_server_exceptions=True)
    r = api.post("/sql", json={"sql": "INSERT INTO b VALUES (1, 5)"})
    assert r.status_code == 409 and "foreign key" in r.text, r.text
    r = api.post("/sql", json={"sql": "SET foreign_key_checks = 0"})
    assert r.status_code == 400 and "foreign_key_checks" in r.text, r.text
    assert db.foreign_key_checks
    r = api.post("/transaction", json={"statements": [
        {"sql": "INSERT INTO a VALUES (5, 50)"}, {"sql": "INSERT INTO b VALUES (1, 5)"},
        {"sql": "INSERT INTO b VALUES (2, 6)"}]})
    assert r.status_code == 409 and "statement 3" in r.text, r.text
    assert db.query("SELECT * FROM b") == []
