"""Schemas (MySQL's databases): ``CREATE DATABASE|SCHEMA``, ``DROP DATABASE``, ``USE``,
``SHOW DATABASES`` and ``db.t`` wherever a table is named (rivulet/sql/schemas.py).

The default database (``rivulet``) keeps bare names; a table of another database ``s`` is
catalogued as ``s.t``. Checked over the embedded API, over the MySQL protocol (the
connection's current database: the handshake's, ``USE``, COM_INIT_DB), across a restart,
and against MariaDB for answers and error codes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
import sqlalchemy as sa
from mysql_oracle import MySQLPair, assert_same_as_mysql

import rivulet
from rivulet.errors import RivuletError, error_code
from rivulet.server.mysql.server import ServerThread
from rivulet.server.mysql.session import create_table_sql


def code_of(run: Any, *args: Any) -> int | None:
    """The MySQL error number ``run(*args)`` fails with (rivulet's or PyMySQL's), or None."""
    try:
        run(*args)
    except RivuletError as exc:
        return error_code(exc).mysql
    except pymysql.MySQLError as exc:
        return int(exc.args[0])
    return None


def q(db: rivulet.Database, sql: str) -> list[tuple]:
    """``sql``'s rows once every write so far is in the views (consistency is eventual)."""
    db.settle()
    return db.query(sql)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path / "db")
    yield database
    database.close()


# --------------------------------------------------------------------------- embedded


def test_create_and_drop_database_give_mysqls_errors(db: rivulet.Database) -> None:
    assert code_of(db.execute, "CREATE TABLE shop.t (id INT PRIMARY KEY)") == 1049
    db.execute("CREATE DATABASE shop")
    assert code_of(db.execute, "CREATE DATABASE shop") == 1007
    assert code_of(db.execute, "CREATE SCHEMA SHOP") == 1007  # (names ignore case here)
    assert code_of(db.execute, "CREATE DATABASE rivulet") == 1007
    db.execute("CREATE DATABASE IF NOT EXISTS shop")
    db.execute("CREATE SCHEMA IF NOT EXISTS other DEFAULT CHARACTER SET utf8mb4 "
               "COLLATE utf8mb4_bin")
    db.execute("DROP SCHEMA other")
    assert code_of(db.execute, "DROP DATABASE other") == 1008
    db.execute("DROP DATABASE IF EXISTS other")
    assert code_of(db.execute, "SELECT * FROM other.t") == 1146
    # What rivulet cannot do as MySQL does is refused by name, changing nothing.
    assert code_of(db.execute, "CREATE DATABASE enc ENCRYPTION = 'Y'") == 1235
    assert code_of(db.execute, "DROP DATABASE rivulet") == 1235
    assert code_of(db.execute, "CREATE DATABASE information_schema") == 1235
    assert code_of(db.execute, "CREATE DATABASE a.b") == 1235
    assert code_of(db.execute, "CREATE DATABASE `a.b`") == 1235  # (its tables' names)
    assert db.catalog.schema_names() == ["rivulet", "shop"]
    assert code_of(db.execute, "SELECT * FROM enc.t") == 1146
    assert code_of(db.execute, "CREATE TABLE enc.t (id INT PRIMARY KEY)") == 1049


def test_tables_of_a_schema_are_apart_from_the_default_ones(db: rivulet.Database) -> None:
    db.execute("CREATE DATABASE shop")
    db.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT)")
    db.execute("CREATE TABLE shop.t (id INT PRIMARY KEY, b VARCHAR(10))")
    db.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    db.execute("INSERT INTO shop.t VALUES (1, 'one'), (3, 'three')")
    db.execute("INSERT INTO rivulet.t VALUES (3, 30)")
    assert sorted(q(db, "SELECT * FROM t")) == [(1, 10), (2, 20), (3, 30)]
    assert sorted(q(db, "SELECT * FROM shop.t")) == [(1, "one"), (3, "three")]
    # Columns named by table, by schema and table, and by alias.
    assert q(db, "SELECT shop.t.b, t.b FROM shop.t WHERE shop.t.id = 3") == [
        ("three", "three")]
    assert sorted(q(db,
        "SELECT r.id, r.a, s.b FROM rivulet.t AS r JOIN shop.t AS s ON s.id = r.id")) == [
        (1, 10, "one"), (3, 30, "three")]
    assert sorted(q(db,
        "SELECT t.id, x.b FROM t LEFT JOIN shop.t AS x ON x.id = t.id")) == [
        (1, "one"), (2, None), (3, "three")]
    # Two tables named t, neither aliased: refused (1052), never one taken for the other.
    assert code_of(q, db, "SELECT shop.t.b, rivulet.t.a FROM shop.t "
                          "JOIN rivulet.t ON shop.t.id = rivulet.t.id") == 1052
    assert db.execute("UPDATE shop.t SET b = 'uno' WHERE shop.t.id = 1") == 1
    assert db.execute("DELETE FROM shop.t WHERE t.id = 3") == 1
    assert q(db, "SELECT * FROM shop.t") == [(1, "uno")]
    assert sorted(q(db, "SELECT * FROM t")) == [(1, 10), (2, 20), (3, 30)]
    assert db.execute("UPDATE t JOIN shop.t AS s ON s.id = t.id SET t.a = 11") == 1
    assert sorted(q(db, "SELECT * FROM t")) == [(1, 11), (2, 20), (3, 30)]
    db.execute("ALTER TABLE shop.t ADD COLUMN n INT DEFAULT 7")
    db.execute("CREATE INDEX ix_n ON shop.t (n)")
    db.execute("TRUNCATE TABLE shop.t")
    assert q(db, "SELECT * FROM shop.t") == []
    db.execute("DROP TABLE shop.t")
    assert sorted(q(db, "SELECT * FROM t")) == [(1, 11), (2, 20), (3, 30)]
    assert error_code_of_query(db, "SELECT * FROM shop.t") == 1146


def error_code_of_query(db: rivulet.Database, sql: str) -> int | None:
    return code_of(q, db, sql)


def test_foreign_keys_across_schemas(db: rivulet.Database) -> None:
    db.execute("CREATE DATABASE shop")
    db.execute("CREATE TABLE shop.parent (id INT PRIMARY KEY)")
    db.execute("CREATE TABLE child (id INT PRIMARY KEY, p INT, "
               "FOREIGN KEY (p) REFERENCES shop.parent (id))")
    db.execute("INSERT INTO shop.parent VALUES (1)")
    db.execute("INSERT INTO child VALUES (1, 1)")
    assert code_of(db.execute, "INSERT INTO child VALUES (2, 2)") == 1452
    # The parent's database cannot go while a table of another references its table.
    assert code_of(db.execute, "DROP DATABASE shop") == 1105
    assert q(db, "SELECT * FROM shop.parent") == [(1,)]


def test_names_made_for_a_schemas_constraints_are_mysqls(db: rivulet.Database) -> None:
    """Unnamed FOREIGN KEYs and CHECKs are named after the bare table, as MySQL 8 names
    them; SHOW CREATE TABLE names a parent of another database with its database."""
    db.execute("CREATE DATABASE shop")
    db.execute("CREATE TABLE p (id INT PRIMARY KEY)")
    db.execute("CREATE TABLE shop.t (id INT PRIMARY KEY, p INT, q INT, CHECK (q > 0), "
               "FOREIGN KEY (p) REFERENCES rivulet.p (id), FOREIGN KEY (q) REFERENCES "
               "shop.t (id))")
    schema = db.catalog.require_table("shop.t")
    assert [fk.name for fk in schema.foreign_keys] == ["t_ibfk_1", "t_ibfk_2"]
    assert [c.name for c in schema.checks] == ["t_chk_1"]
    text = create_table_sql(schema)
    assert text.startswith("CREATE TABLE `t` (")
    assert "REFERENCES `rivulet`.`p` (`id`)" in text and "REFERENCES `t` (`id`)" in text


def test_drop_database_drops_its_tables_and_views_and_nothing_else(
        db: rivulet.Database) -> None:
    db.execute("CREATE DATABASE shop")
    db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    db.execute("CREATE TABLE shop.t (id INT PRIMARY KEY, n INT)")
    db.execute("CREATE TABLE shop.u (id INT PRIMARY KEY, t_id INT, "
               "FOREIGN KEY (t_id) REFERENCES shop.t (id))")
    db.execute("CREATE VIEW shop.v AS SELECT id, n FROM shop.t")
    db.execute("CREATE VIEW shop.w AS SELECT COUNT(*) AS c FROM shop.v")
    db.execute("CREATE VIEW outside AS SELECT id FROM shop.t")
    # A view of another database reads its table: refused, nothing dropped.
    assert code_of(db.execute, "DROP DATABASE shop") == 1105
    assert q(db, "SELECT * FROM shop.w") == [(0,)]
    db.execute("DROP VIEW outside")
    db.execute("DROP DATABASE shop")
    assert db.views() == []
    assert [t.name for t in db.catalog.tables.values()] == ["t"]
    assert code_of(db.execute, "CREATE TABLE shop.t (id INT PRIMARY KEY)") == 1049
    db.execute("CREATE DATABASE shop")  # made again: empty
    db.execute("CREATE TABLE shop.t (id INT PRIMARY KEY)")
    assert q(db, "SELECT * FROM shop.t") == []


def test_schemas_tables_and_views_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "db"
    with rivulet.open(path) as db:
        db.execute("CREATE DATABASE shop")
        db.execute("CREATE DATABASE gone")
        db.execute("CREATE TABLE shop.t (id INT PRIMARY KEY, n INT)")
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT)")
        db.execute("CREATE VIEW shop.v AS SELECT s.id, s.n + d.n AS total FROM shop.t AS s "
                   "JOIN t AS d ON d.id = s.id")
        db.execute("INSERT INTO shop.t VALUES (1, 10), (2, 20)")
        db.execute("INSERT INTO t VALUES (1, 1), (2, 2)")
        db.execute("CREATE TABLE gone.t (id INT PRIMARY KEY)")
        db.execute("DROP DATABASE gone")
    with rivulet.open(path) as db:
        assert db.catalog.schema_names() == ["rivulet", "shop"]
        assert sorted(q(db, "SELECT * FROM shop.v")) == [(1, 11), (2, 22)]
        db.execute("UPDATE shop.t SET n = 100 WHERE id = 2")
        db.settle()
        assert sorted(db.view("shop.v").lookup()) == [(1, 11), (2, 102)]
        assert code_of(db.execute, "CREATE DATABASE shop") == 1007
        assert code_of(db.execute, "CREATE TABLE gone.t (id INT PRIMARY KEY)") == 1049
        db.execute("DROP DATABASE shop")
    with rivulet.open(path) as db:
        assert db.catalog.schema_names() == ["rivulet"]
        assert db.views() == []
        assert sorted(q(db, "SELECT * FROM t")) == [(1, 1), (2, 2)]


# --------------------------------------------------------------------------- MariaDB


def test_schema_statements_answer_and_fail_as_mariadb(mysql_pair: MySQLPair) -> None:
    """The same statements on both: the same error codes, the same answers (the view's
    incremental answer after each write equals MariaDB's recomputation)."""
    schema = f"rs_{uuid.uuid4().hex[:10]}"
    conn = mysql_pair.conn
    db = mysql_pair.db

    def both(sql: str) -> None:
        with conn.cursor() as cur:
            maria = code_of(cur.execute, sql)
        riv = code_of(db.execute, sql)
        assert riv == maria, f"{sql}: rivulet {riv}, mariadb {maria}"

    try:
        for sql in [
            f"CREATE TABLE {schema}.t (id INT PRIMARY KEY)",
            f"CREATE DATABASE {schema}",
            f"CREATE DATABASE {schema}",
            f"CREATE DATABASE IF NOT EXISTS {schema} CHARACTER SET utf8mb4",
            f"CREATE TABLE {schema}.item (id INT PRIMARY KEY, kind INT, price INT)",
            "CREATE TABLE kind (id INT PRIMARY KEY, name VARCHAR(10))",
            f"INSERT INTO {schema}.item VALUES (1, 1, 10), (2, 1, 5), (3, 2, 7)",
            "INSERT INTO kind VALUES (1, 'a'), (2, 'b')",
            f"INSERT INTO {schema}.item VALUES (1, 2, 3)",
            f"SELECT * FROM {schema}.nope",
        ]:
            both(sql)
        view = (f"SELECT k.name, SUM(i.price) AS total, COUNT(*) AS n FROM {schema}.item AS i "
                f"JOIN kind AS k ON k.id = i.kind GROUP BY k.name")
        db.execute(f"CREATE VIEW {schema}.totals AS {view}")
        for write in [None,
                      f"INSERT INTO {schema}.item VALUES (4, 2, 1)",
                      f"UPDATE {schema}.item SET price = price * 2 WHERE kind = 1",
                      f"DELETE FROM {schema}.item WHERE {schema}.item.id = 3",
                      "UPDATE kind SET name = 'c' WHERE id = 2"]:
            if write is not None:
                both(write)
            mysql_pair.settle()
            assert_same_as_mysql(view, (), db.view(f"{schema}.totals").lookup(), conn,
                                 what="view of a schema")
            mysql_pair.check_query(f"SELECT {schema}.item.id, item.price FROM {schema}.item "
                                   f"WHERE {schema}.item.kind = 2 ORDER BY id")
        both(f"DROP DATABASE {schema}")
        both(f"DROP DATABASE {schema}")
        both(f"DROP DATABASE IF EXISTS {schema}")
        both(f"SELECT * FROM {schema}.item")
        mysql_pair.check_query("SELECT id, name FROM kind ORDER BY id")
    finally:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {schema}")


# --------------------------------------------------------------------------- MySQL protocol


@pytest.fixture
def server(db: rivulet.Database) -> Iterator[ServerThread]:
    db.execute("CREATE DATABASE shop")
    db.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10))")
    db.execute("CREATE TABLE shop.t (id INT PRIMARY KEY, name VARCHAR(10))")
    db.execute("INSERT INTO t VALUES (1, 'default')")
    db.execute("INSERT INTO shop.t VALUES (1, 'shop')")
    running = ServerThread(db, port=0)
    yield running
    running.stop()


def connect(server: ServerThread, database: str | None = "rivulet") -> pymysql.Connection:
    return pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                           database=database, autocommit=True)


def rows(conn: pymysql.Connection, sql: str, params: Any = None) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return list(cur.fetchall())


def test_the_current_database_names_bare_tables(server: ServerThread) -> None:
    home, shop = connect(server), connect(server, "shop")
    text = "SELECT name FROM t WHERE id = 1"
    for _ in range(3):  # (again and again: the fast path's cache must not mix them up)
        assert rows(home, text) == [("default",)]
        assert rows(shop, text) == [("shop",)]
        assert rows(shop, "SELECT name FROM t WHERE id = %s", (1,)) == [("shop",)]
    assert rows(shop, "SELECT DATABASE()") == [("shop",)]
    rows(shop, "INSERT INTO t VALUES (2, 'two')")
    assert rows(shop, "SELECT t.id, r.name FROM t JOIN rivulet.t AS r ON r.id = t.id") == [
        (1, "default")]
    assert rows(home, "SELECT id FROM shop.t ORDER BY id") == [(1,), (2,)]
    rows(shop, "CREATE TABLE u (id INT PRIMARY KEY)")  # made in shop
    rows(shop, "CREATE VIEW names AS SELECT id, name FROM t")
    assert rows(home, "SELECT * FROM shop.names ORDER BY id") == [(1, "shop"), (2, "two")]
    assert rows(home, "SHOW TABLES") == [("t",)]
    assert rows(shop, "SHOW TABLES") == [("names",), ("t",), ("u",)]
    # USE, and COM_INIT_DB (a driver's select_db), switch; a database not there is 1049.
    rows(shop, "USE rivulet")
    assert rows(shop, text) == [("default",)]
    shop.select_db("shop")
    assert rows(shop, text) == [("shop",)]
    assert code_of(rows, shop, "USE nowhere") == 1049
    assert code_of(shop.select_db, "nowhere") == 1049
    assert rows(shop, "SELECT DATABASE()") == [("shop",)]
    # Prepared statements are named in the database they were prepared in.
    with shop.cursor(pymysql.cursors.Cursor) as cur:
        cur.execute("SELECT name FROM t WHERE id = %s", (2,))
        assert cur.fetchall() == (("two",),)
    home.close()
    shop.close()


def test_the_handshake_database_must_exist(server: ServerThread) -> None:
    assert code_of(connect, server, "nowhere") == 1049
    conn = connect(server, None)  # none named: bare names are the default database's
    assert rows(conn, "SELECT name FROM t") == [("default",)]
    conn.close()


def test_show_and_information_schema_name_each_tables_database(
        server: ServerThread) -> None:
    conn = connect(server)
    rows(conn, "CREATE VIEW shop.v AS SELECT id FROM shop.t")
    assert rows(conn, "SHOW DATABASES") == [("information_schema",), ("rivulet",), ("shop",)]
    assert rows(conn, "SHOW SCHEMAS LIKE 'sh%'") == [("shop",)]
    assert rows(conn, "SHOW FULL TABLES FROM shop") == [("t", "BASE TABLE"), ("v", "VIEW")]
    assert rows(conn, "SHOW TABLES IN rivulet") == [("t",)]
    assert code_of(rows, conn, "SHOW TABLES FROM nowhere") == 1049
    create = rows(conn, "SHOW CREATE TABLE shop.t")[0]
    assert create[0] == "t" and create[1].startswith("CREATE TABLE `t` (")
    assert [r[0] for r in rows(conn, "DESCRIBE shop.t")] == ["id", "name"]
    assert [r[0] for r in rows(conn, "SHOW COLUMNS FROM t FROM shop")] == ["id", "name"]
    assert code_of(rows, conn, "SHOW CREATE TABLE nowhere.t") == 1146
    assert rows(conn, "SELECT table_schema, table_name, table_type FROM "
                      "information_schema.tables ORDER BY table_schema, table_name") == [
        ("rivulet", "t", "BASE TABLE"), ("shop", "t", "BASE TABLE"), ("shop", "v", "VIEW")]
    assert rows(conn, "SELECT column_name FROM information_schema.columns WHERE "
                      "table_schema = 'shop' AND table_name = 't' ORDER BY 1") == [
        ("id",), ("name",)]
    assert rows(conn, "SELECT schema_name FROM information_schema.schemata ORDER BY 1") == [
        ("information_schema",), ("rivulet",), ("shop",)]
    conn.select_db("shop")
    assert rows(conn, "SELECT table_name FROM information_schema.tables WHERE "
                      "table_schema = DATABASE() ORDER BY 1") == [("t",), ("v",)]
    conn.close()


def test_sqlalchemy_reflects_and_uses_another_schema(server: ServerThread) -> None:
    engine = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:{server.port}/rivulet")
    try:
        inspector = sa.inspect(engine)
        assert "shop" in inspector.get_schema_names()
        assert inspector.get_table_names(schema="shop") == ["t"]
        assert inspector.has_table("t", schema="shop")
        assert not inspector.has_table("nope", schema="shop")
        assert [c["name"] for c in inspector.get_columns("t", schema="shop")] == ["id", "name"]
        meta = sa.MetaData()
        item = sa.Table("item", meta, sa.Column("id", sa.Integer, primary_key=True),
                        sa.Column("label", sa.String(20)), schema="shop")
        meta.create_all(engine)
        with engine.begin() as conn:
            conn.execute(item.insert(), [{"id": 1, "label": "a"}, {"id": 2, "label": "b"}])
        with engine.connect() as conn:
            got = conn.execute(sa.select(item.c.label).where(item.c.id == 2)).all()
        assert [tuple(r) for r in got] == [("b",)]
        meta.drop_all(engine)
        assert not sa.inspect(engine).has_table("item", schema="shop")
    finally:
        engine.dispose()


def test_transactions_run_in_another_database(server: ServerThread) -> None:
    conn = connect(server, "shop")
    for sql in ["START TRANSACTION", "INSERT INTO t VALUES (5, 'five')", "SAVEPOINT a",
                "INSERT INTO t VALUES (6, 'six')", "ROLLBACK TO SAVEPOINT a",
                "SELECT name FROM t WHERE id = 5 FOR UPDATE", "COMMIT"]:
        rows(conn, sql)
    assert rows(conn, "SELECT id FROM t ORDER BY id") == [(1,), (5,)]
    assert rows(conn, "SELECT id FROM rivulet.t ORDER BY id") == [(1,)]
    conn.close()
