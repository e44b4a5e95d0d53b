"""Introspection as ORMs send it (docs/servers.md, "Introspection"): SHOW CREATE TABLE,
SHOW [FULL] COLUMNS, DESCRIBE, SHOW INDEX and the ``information_schema`` tables, compared
with MariaDB's answers for the same schema; SQLAlchemy's ``inspect()`` over the wire giving
what it gives against MariaDB; Django's introspection of the tables it reflects.

rivulet answers as MySQL 8 does where MySQL 8 and MariaDB differ in form: integer types
without display width (``int``, not ``int(11)``), numeric defaults quoted in SHOW CREATE
TABLE, a default's text unquoted in information_schema.COLUMNS. The comparisons map
MariaDB's forms to MySQL 8's (:func:`as_mysql8`), and its engine and collation names to
rivulet's; nothing else is normalized."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest
import sqlalchemy as sa
from mysql_oracle import MySQLPair

import rivulet
from rivulet.server.mysql.server import ServerThread

SCHEMA = [
    "CREATE TABLE author (id INT PRIMARY KEY AUTO_INCREMENT, "
    "name VARCHAR(40) NOT NULL COMMENT 'display name', email VARCHAR(80), "
    "score DECIMAL(10,2) DEFAULT 0, born DATE, big BIGINT UNSIGNED, f DOUBLE, t DATETIME(3), "
    "UNIQUE KEY uq_email (email), KEY ix_name_score (name, score)) "
    "COMMENT 'people who write, it''s them'",
    "CREATE TABLE post (id BIGINT PRIMARY KEY, author_id INT NOT NULL, "
    "title VARCHAR(100) NOT NULL DEFAULT 'untitled', body TEXT, "
    "flag TINYINT(1) NOT NULL DEFAULT 1, KEY ix_author (author_id), "
    "UNIQUE KEY uq_author_title (author_id, title))",
    "CREATE TABLE tag (label VARCHAR(20) NOT NULL, n INT)",
]
TABLES = ("author", "post", "tag")


class Served:
    """The pair's rivulet database behind a MySQL server, and a connection to each side."""

    def __init__(self, pair: MySQLPair) -> None:
        self.pair = pair
        self.server = ServerThread(pair.db, port=0)
        self.rivulet = pymysql.connect(host="127.0.0.1", port=self.server.port, user="root",
                                       database="rivulet", autocommit=True)
        self.mariadb = pair.conn
        self.schema = self.both("SELECT DATABASE()")[1][0][0]
        for ddl in SCHEMA:
            self.both(ddl)

    def close(self) -> None:
        self.rivulet.close()
        self.server.stop()

    def both(self, sql: str, params: Any = None) -> tuple[list[tuple], list[tuple]]:
        """The rows of ``sql`` on rivulet and on MariaDB."""
        out = []
        for conn in (self.rivulet, self.mariadb):
            with conn.cursor() as cur:
                cur.execute(sql, params)
                out.append(list(cur.fetchall()))
        return out[0], out[1]

    def ours(self, sql: str) -> list[tuple]:
        """The rows of ``sql`` on rivulet only."""
        with self.rivulet.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    def same(self, sql: str, params: Any = None, *, ordered: bool = False) -> list[tuple]:
        """``sql``'s rows on rivulet, asserted equal to MariaDB's (in MySQL 8's forms)."""
        ours, theirs = self.both(sql, params)
        theirs = [tuple(as_mysql8(v, self.schema) for v in row) for row in theirs]
        if not ordered:
            ours, theirs = sorted(ours, key=repr), sorted(theirs, key=repr)
        assert ours == theirs
        return ours


def as_mysql8(value: Any, schema: str) -> Any:
    """A value of MariaDB's answer in the form MySQL 8 (and rivulet) gives it."""
    if not isinstance(value, str):
        return value
    if value == schema:
        return "rivulet"
    value = re.sub(r"\b(smallint|mediumint|int|bigint)\(\d+\)", r"\1", value)
    value = re.sub(r"\btinyint\((?!1\))\d+\)", "tinyint", value)
    value = re.sub(r"DEFAULT (-?[0-9.]+)", r"DEFAULT '\1'", value)
    return (value.replace("ENGINE=InnoDB", "ENGINE=rivulet")
            .replace("utf8mb4_nopad_bin", "utf8mb4_0900_bin"))


def column_default(value: Any) -> Any:
    """MariaDB's information_schema.COLUMNS.COLUMN_DEFAULT as MySQL 8's: the text of a
    string default without its quotes, no default as NULL (MariaDB: 'NULL')."""
    if value == "NULL":
        return None
    if isinstance(value, str) and value.startswith("'"):
        return value[1:-1].replace("''", "'")
    return value


@pytest.fixture
def served(mysql_pair: MySQLPair) -> Iterator[Served]:
    s = Served(mysql_pair)
    yield s
    s.close()


# --------------------------------------------------------------------------- SHOW, DESCRIBE


def test_show_create_table_is_mariadbs_with_keys_and_comments(served: Served) -> None:
    for table in TABLES:
        rows = served.same(f"SHOW CREATE TABLE {table}")
        assert rows[0][1].startswith(f"CREATE TABLE `{table}` (\n  `")
    (_, text), = served.ours("SHOW CREATE TABLE rivulet.author")
    assert "COMMENT 'display name'" in text
    assert text.endswith("COMMENT='people who write, it''s them'")


def test_show_create_table_escapes_comments_as_mariadb(served: Served) -> None:
    """A COMMENT holding a line break, a quote or a backslash is escaped as MariaDB escapes
    it, so that each column stays on one line (SQLAlchemy parses it line by line)."""
    served.both("CREATE TABLE noted (id INT PRIMARY KEY COMMENT 'line\\none\\rtwo "
                "it''s a \\\\ tab\\there') COMMENT 'x\\ny'")
    served.same("SHOW CREATE TABLE noted")
    (_, text), = served.ours("SHOW CREATE TABLE noted")
    assert "COMMENT 'line\\none\\rtwo it''s a \\\\ tab\there'" in text


def test_show_columns_and_describe_are_mariadbs(served: Served) -> None:
    for table in TABLES:
        served.same(f"SHOW FULL COLUMNS FROM {table}", ordered=True)
        served.same(f"SHOW COLUMNS FROM {table}", ordered=True)
        served.same(f"DESCRIBE {table}", ordered=True)


def test_show_index_is_mariadbs(served: Served) -> None:
    for table in TABLES:
        ours, theirs = served.both(f"SHOW INDEX FROM {table}")
        # Cardinality is not kept (NULL); MariaDB's last column is Ignored, MySQL 8's are
        # Visible and Expression.
        assert [r[:6] + r[7:13] for r in ours] == [r[:6] + r[7:13] for r in theirs]


def test_show_full_tables_lists_tables_and_views(served: Served) -> None:
    served.both("CREATE VIEW named AS SELECT id, name FROM author")
    served.same("SHOW FULL TABLES")
    assert served.ours("SHOW FULL TABLES FROM rivulet LIKE 'a%'") == [("author", "BASE TABLE")]


def test_like_takes_each_statements_pattern(served: Served) -> None:
    # (statements differing only in their LIKE pattern share a template: each is its own)
    for pattern in ("a%", "p%", "%a%", "x%"):
        served.same(f"SHOW TABLES LIKE '{pattern}'")
        served.same(f"SHOW FULL COLUMNS FROM author LIKE '{pattern}'")


def test_unknown_table_or_database(served: Served) -> None:
    for sql, code in (("DESCRIBE nope", 1146), ("SHOW CREATE TABLE nope", 1146),
                      ("SHOW FULL COLUMNS FROM nope", 1146), ("SHOW INDEX FROM nope", 1146),
                      ("DESCRIBE nodb.author", 1146), ("SHOW CREATE TABLE nodb.author", 1146),
                      ("SHOW COLUMNS FROM author FROM nodb", 1146),
                      ("SHOW TABLES FROM nodb", 1049)):
        for conn in (served.rivulet, served.mariadb):
            with conn.cursor() as cur, pytest.raises(pymysql.err.MySQLError) as info:
                cur.execute(sql)
            assert info.value.args[0] == code, sql


def test_show_where_is_a_query_of_information_schema(served: Served) -> None:
    served.both("CREATE VIEW named AS SELECT id, name FROM author")
    for sql in ("SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'",
                "SHOW FULL TABLES WHERE Table_type != 'VIEW' AND Tables_in_{db} LIKE 'p%'",
                "SHOW TABLES WHERE Tables_in_{db} IN ('tag', 'named')",
                "SHOW COLUMNS FROM author WHERE Field = 'email' OR `Null` = 'NO'",
                "SHOW FULL COLUMNS FROM author WHERE Comment != ''",
                "SHOW FULL COLUMNS FROM post WHERE `Key` = 'PRI'"):
        with served.mariadb.cursor() as cur:
            cur.execute(sql.format(db=served.schema))
            theirs = [tuple(as_mysql8(v, served.schema) for v in r) for r in cur.fetchall()]
        assert served.ours(sql.format(db="rivulet")) == theirs
    for sql, code in (("SHOW TABLES WHERE nope = 1", 1054),
                      ("SHOW COLUMNS FROM nope WHERE Field = 'id'", 1146),
                      ("SHOW INDEX FROM author WHERE Key_name = 'PRIMARY'", 1235)):
        with served.rivulet.cursor() as cur, pytest.raises(pymysql.err.MySQLError) as info:
            cur.execute(sql)
        assert info.value.args[0] == code


# --------------------------------------------------------------------------- information_schema


def test_database_and_schema_functions_name_the_session_database(served: Served) -> None:
    ours, _ = served.both("SELECT DATABASE() AS d, SCHEMA() AS s")
    assert ours == [("rivulet", "rivulet")]
    served.same("SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = SCHEMA() AND table_name = 'tag'")


def test_information_schema_tables_as_django_reads_them(served: Served) -> None:
    served.same("SELECT table_name, table_type, table_comment FROM information_schema.tables "
                "WHERE table_schema = DATABASE()")
    served.same("SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = DATABASE() AND table_name = %s", ["post"])
    served.same("SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = DATABASE() AND table_name = %s", ["nope"])


def test_information_schema_columns_as_django_reads_them(served: Served) -> None:
    query = """
        SELECT column_name, data_type, character_maximum_length,
            numeric_precision, numeric_scale, extra, column_default,
            CASE WHEN collation_name = %s THEN NULL ELSE collation_name END AS collation_name,
            CASE WHEN column_type LIKE '%% unsigned' THEN 1 ELSE 0 END AS is_unsigned,
            column_comment
        FROM information_schema.columns
        WHERE table_name = %s AND table_schema = DATABASE()"""
    for table in TABLES:
        ours, theirs = served.both(query, ["utf8mb4_0900_bin", table])
        _, collations = served.both(query, ["utf8mb4_nopad_bin", table])
        theirs = [(*r[:6], column_default(r[6]), *r[7:]) for r in collations]
        assert sorted(ours) == sorted(theirs)
        assert ours  # (the table's columns, each once)


def test_information_schema_columns_positions_types_and_keys(served: Served) -> None:
    ours, theirs = served.both(
        "SELECT table_name, column_name, ordinal_position, is_nullable, column_type, "
        "column_key, character_set_name, datetime_precision FROM information_schema.columns "
        "WHERE table_schema = DATABASE() ORDER BY table_name, ordinal_position")
    assert ours == [tuple(as_mysql8(v, served.schema) for v in r) for r in theirs]


#: Django's get_constraints: a table's keys and FOREIGN KEYs, column by column.
DJANGO_KEY_CONSTRAINTS = """
        SELECT kc.`constraint_name`, kc.`column_name`,
            kc.`referenced_table_name`, kc.`referenced_column_name`, c.`constraint_type`
        FROM information_schema.key_column_usage AS kc,
            information_schema.table_constraints AS c
        WHERE kc.table_schema = DATABASE() AND
            (kc.referenced_table_schema = DATABASE() OR kc.referenced_table_schema IS NULL)
            AND c.table_schema = kc.table_schema
            AND c.constraint_name = kc.constraint_name
            AND c.constraint_type != 'CHECK'
            AND kc.table_name = %s"""


def test_constraints_as_django_reads_them(served: Served) -> None:
    query = DJANGO_KEY_CONSTRAINTS + " ORDER BY kc.`ordinal_position`"
    for table in TABLES:
        # (ORDER BY ordinal_position alone leaves ties between constraints in any order)
        served.same(query, [table])
    ours, _ = served.both(query, ["post"])
    # (PRIMARY twice: the join matches the PRIMARY KEY of each table, as in MySQL)
    assert sorted(set(ours)) == [("PRIMARY", "id", None, None, "PRIMARY KEY"),
                            ("uq_author_title", "author_id", None, None, "UNIQUE"),
                            ("uq_author_title", "title", None, None, "UNIQUE")]


def test_key_usage_statistics_and_relations(served: Served) -> None:
    served.same("SELECT constraint_name, table_name, column_name, ordinal_position "
                "FROM information_schema.key_column_usage WHERE table_schema = DATABASE()")
    served.same("SELECT table_name, non_unique, index_name, seq_in_index, column_name, "
                "nullable, index_type FROM information_schema.statistics "
                "WHERE table_schema = DATABASE()")
    served.same("SELECT constraint_name, table_name, constraint_type "
                "FROM information_schema.table_constraints WHERE table_schema = DATABASE()")
    # Django's get_relations: no FOREIGN KEY, no rows.
    served.same("""SELECT column_name, referenced_column_name, referenced_table_name
        FROM information_schema.key_column_usage
        WHERE table_name = %s AND table_schema = DATABASE()
            AND referenced_table_schema = DATABASE() AND referenced_table_name IS NOT NULL
            AND referenced_column_name IS NOT NULL""", ["post"])
    served.same("SELECT constraint_name FROM information_schema.referential_constraints "
                "WHERE constraint_schema = DATABASE()")
    served.same("SELECT constraint_name FROM information_schema.check_constraints "
                "WHERE constraint_schema = DATABASE()")
    served.same("SELECT schema_name FROM information_schema.schemata "
                "WHERE schema_name = DATABASE()")


def test_foreign_keys_as_django_reads_them(served: Served) -> None:
    """Django's get_relations and get_constraints, and the rules SQLAlchemy could read,
    find a table's FOREIGN KEYs as against MariaDB."""
    served.both("CREATE TABLE fk_parent (id INT PRIMARY KEY, code INT NOT NULL, "
                "UNIQUE KEY uq_code (code))")
    served.both("CREATE TABLE fk_child (id INT PRIMARY KEY, parent_id INT, code INT, "
                "CONSTRAINT fk_to_parent FOREIGN KEY (parent_id) REFERENCES fk_parent (id) "
                "ON DELETE CASCADE, CONSTRAINT fk_code FOREIGN KEY (code) "
                "REFERENCES fk_parent (code) ON UPDATE SET NULL)")
    served.same("""SELECT column_name, referenced_column_name, referenced_table_name
        FROM information_schema.key_column_usage
        WHERE table_name = %s AND table_schema = DATABASE()
            AND referenced_table_schema = DATABASE() AND referenced_table_name IS NOT NULL
            AND referenced_column_name IS NOT NULL ORDER BY column_name""", ["fk_child"])
    served.same(DJANGO_KEY_CONSTRAINTS + " ORDER BY kc.`constraint_name`, kc.`ordinal_position`",
                ["fk_child"])
    served.same("SELECT constraint_name, unique_constraint_name, match_option, update_rule, "
                "delete_rule, table_name, referenced_table_name "
                "FROM information_schema.referential_constraints "
                "WHERE constraint_schema = DATABASE() ORDER BY constraint_name")


def test_foreign_keys_in_show_create_table_come_by_name(served: Served,
                                                        mariadb_oracle: Any) -> None:
    """SHOW CREATE TABLE lists FOREIGN KEYs by name, as InnoDB keeps them, whatever order
    they were declared in: SQLAlchemy's get_foreign_keys gives MariaDB's list."""
    served.both("CREATE TABLE fk_p (id INT PRIMARY KEY)")
    served.both("CREATE TABLE fk_c (id INT PRIMARY KEY, a INT, b INT, "
                "CONSTRAINT zz_a FOREIGN KEY (a) REFERENCES fk_p (id), "
                "FOREIGN KEY (b) REFERENCES fk_p (id))")
    ours = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:{served.server.port}/rivulet")
    theirs = sa.create_engine(
        f"mysql+pymysql://bench@127.0.0.1:{mariadb_oracle.server.port}/{served.schema}")
    try:
        got, want = (sa.inspect(e).get_foreign_keys("fk_c") for e in (ours, theirs))
        assert [fk["name"] for fk in got] == [fk["name"] for fk in want] == [
            "fk_c_ibfk_1", "zz_a"]
    finally:
        ours.dispose()
        theirs.dispose()


def test_check_constraints_as_django_reads_them(served: Served) -> None:
    """Django's get_constraints finds a table's CHECK constraints by name (the clause is
    each server's own rendering of the condition)."""
    served.both("CREATE TABLE ck (id INT PRIMARY KEY, n INT, s VARCHAR(5), "
                "CONSTRAINT pos CHECK (n > 0 AND s <> 'x'), CONSTRAINT small CHECK (n < 9))")
    query = """
        SELECT cc.constraint_name, cc.check_clause
        FROM information_schema.check_constraints AS cc,
            information_schema.table_constraints AS tc
        WHERE cc.constraint_schema = DATABASE() AND tc.table_schema = cc.constraint_schema
            AND cc.constraint_name = tc.constraint_name AND tc.constraint_type = 'CHECK'
            AND tc.table_name = %s"""
    ours, theirs = served.both(query, ["ck"])
    assert sorted(name for name, _ in ours) == sorted(name for name, _ in theirs) == [
        "pos", "small"]
    assert dict(ours)["small"].replace("`", "") == "n < 9"
    served.same("SELECT constraint_name, table_name, constraint_type "
                "FROM information_schema.table_constraints WHERE table_schema = DATABASE() "
                "AND table_name = 'ck'")


def test_a_views_columns_have_their_table_columns_types(served: Served) -> None:
    served.both("CREATE VIEW named AS SELECT id, name, score, big, score * 2 AS s2 "
                "FROM author")
    served.same("SELECT column_name, ordinal_position, column_type, data_type, is_nullable, "
                "character_maximum_length, numeric_precision, numeric_scale "
                "FROM information_schema.columns "
                "WHERE table_schema = DATABASE() AND table_name = 'named'")
    served.same("SELECT table_name, table_type, table_comment FROM information_schema.tables "
                "WHERE table_schema = DATABASE()")
    ours, theirs = served.both("DESCRIBE named")
    assert [r[:3] for r in ours] == [tuple(as_mysql8(v, served.schema) for v in r[:3])
                                     for r in theirs]


def test_information_schema_follows_ddl(served: Served) -> None:
    served.both("ALTER TABLE tag ADD COLUMN note VARCHAR(10) COMMENT 'why'")
    served.both("CREATE UNIQUE INDEX uq_label ON tag (label)")
    served.same("SELECT column_name, column_comment FROM information_schema.columns "
                "WHERE table_schema = DATABASE() AND table_name = 'tag'")
    served.same("SELECT constraint_name, column_name FROM information_schema.key_column_usage "
                "WHERE table_schema = DATABASE() AND table_name = 'tag'")
    served.both("DROP TABLE tag")
    served.same("SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = DATABASE()")


def test_information_schema_with_a_table_of_the_database_is_refused(served: Served) -> None:
    with served.rivulet.cursor() as cur, pytest.raises(pymysql.err.MySQLError) as info:
        cur.execute("SELECT t.table_name FROM information_schema.tables AS t "
                    "JOIN author ON author.name = t.table_name")
    assert info.value.args[0] == 1235


# --------------------------------------------------------------------------- comments


def test_comments_survive_a_reopen_and_alter(tmp_path: Path) -> None:
    from rivulet.server.mysql.session import create_table_sql

    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE c (id INT PRIMARY KEY COMMENT 'the key', "
                   "v VARCHAR(5) COMMENT 'a \\\\ and a ''') COMMENT 'old'")
        db.execute("ALTER TABLE c ADD COLUMN w INT COMMENT 'added'")
        db.execute("ALTER TABLE c COMMENT = 'first'")
        db.execute("ALTER TABLE c COMMENT = 'see ''docs''', ADD COLUMN x INT")
    with rivulet.open(tmp_path / "db") as db:
        schema = db.catalog.require_table("c")
        assert schema.comment == "see 'docs'"
        assert [c.comment for c in schema.columns] == ["the key", "a \\ and a '", "added", ""]
        text = create_table_sql(schema)
        assert "`v` varchar(5) DEFAULT NULL COMMENT 'a \\\\ and a '''" in text
        assert text.endswith("COMMENT='see ''docs'''")


# --------------------------------------------------------------------------- SQLAlchemy


def _described(columns: list[dict[str, Any]]) -> list[tuple]:
    out = []
    for c in columns:
        kind = c["type"]
        out.append((c["name"], type(kind).__name__, getattr(kind, "length", None),
                    getattr(kind, "precision", None), getattr(kind, "scale", None),
                    getattr(kind, "unsigned", None), c["nullable"],
                    # MySQL 8 quotes a numeric default, MariaDB does not
                    None if c["default"] is None else c["default"].strip("'"),
                    c.get("autoincrement"), c.get("comment")))
    return out


def test_sqlalchemy_inspect_is_as_against_mariadb(served: Served, mariadb_oracle: Any) -> None:
    ours = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:{served.server.port}/rivulet")
    theirs = sa.create_engine(
        f"mysql+pymysql://bench@127.0.0.1:{mariadb_oracle.server.port}/{served.schema}")
    try:
        a, b = sa.inspect(ours), sa.inspect(theirs)
        assert a.get_table_names() == b.get_table_names() == sorted(TABLES)
        assert a.has_table("post") and not a.has_table("nope")
        for table in TABLES:
            assert _described(a.get_columns(table)) == _described(b.get_columns(table))
            assert a.get_pk_constraint(table) == b.get_pk_constraint(table)
            assert a.get_indexes(table) == b.get_indexes(table)
            assert a.get_unique_constraints(table) == b.get_unique_constraints(table)
            assert a.get_table_comment(table) == b.get_table_comment(table)
            assert a.get_foreign_keys(table) == b.get_foreign_keys(table) == []
        assert a.get_table_comment("author") == {"text": "people who write, it's them"}
        metadata = sa.MetaData()
        post = sa.Table("post", metadata, autoload_with=ours)
        assert [c.name for c in post.primary_key] == ["id"]
        assert post.c.title.server_default is not None
    finally:
        ours.dispose()
        theirs.dispose()


# --------------------------------------------------------------------------- Django


def test_django_introspection(served: Served) -> None:
    pytest.importorskip("django")
    import django_rivulet

    django_rivulet.configure()
    django_rivulet.point_at(served.server.port)
    from django.db import connection

    introspection = connection.introspection
    with connection.cursor() as cursor:
        listed = {t.name: (t.type, t.comment) for t in introspection.get_table_list(cursor)}
        assert listed == {"author": ("t", "people who write, it's them"), "post": ("t", ""),
                          "tag": ("t", "")}
        fields = {f.name: f for f in introspection.get_table_description(cursor, "author")}
        assert list(fields) == ["id", "name", "email", "score", "born", "big", "f", "t"]
        assert fields["name"].comment == "display name"
        assert fields["name"].null_ok is False and fields["email"].null_ok is True
        assert fields["big"].is_unsigned and not fields["id"].is_unsigned
        assert fields["score"].default == "0.00"
        assert (fields["score"].precision, fields["score"].scale) == (10, 2)
        assert fields["name"].internal_size == 40 and fields["name"].collation is None
        assert "auto_increment" in fields["id"].extra
        assert introspection.get_sequences(cursor, "author") == [
            {"table": "author", "column": "id"}]
        assert introspection.get_relations(cursor, "post") == {}
        assert introspection.get_primary_key_column(cursor, "post") == "id"
        constraints = introspection.get_constraints(cursor, "post")
        assert constraints["PRIMARY"]["primary_key"] and constraints["PRIMARY"]["columns"] == [
            "id"]
        assert constraints["uq_author_title"]["unique"]
        assert constraints["uq_author_title"]["columns"] == ["author_id", "title"]
        assert constraints["ix_author"]["index"] and not constraints["ix_author"]["unique"]
        assert introspection.get_storage_engine(cursor, "post") == "rivulet"
