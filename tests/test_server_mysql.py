"""The MySQL server with real clients: PyMySQL, mysql-connector-python (pure Python, text
and server-side prepared statements) and SQLAlchemy Core; answers checked against SQLite
running the same statements (tests/oracle.py)."""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import socket
import sqlite3
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mysql.connector
import pymysql
import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from pymysql.constants import CLIENT

import rivulet
from oracle import assert_same_answer
from rivulet.cli import load_news_sample, news_program
from rivulet.server.auth import UserStore
from rivulet.server.mysql.normalize import split
from rivulet.server.mysql.server import ServerThread

SCHEMA = [
    "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, "
    "price DECIMAL(10,2), qty INT, added DATETIME)",
    "CREATE TABLE tags (item_id INT NOT NULL, tag VARCHAR(20) NOT NULL)",
]
ITEMS = [(i, f"item {i}", decimal.Decimal(f"{i}.50"), i % 7, dt.datetime(2024, 1, 1 + i % 28, 12))
         for i in range(1, 41)]
TAGS = [(i, t) for i in range(1, 41) for t in ("red", "green", "blue")[: 1 + i % 3]]

HOSTILE = [
    "' OR 1=1 --", "'; DROP TABLE items; --", "\\'", "\\", "\\\\'", '"', "''", "it's",
    "a\0b", "\0", "ünïcødé 😀 中文", "%s ? ?", "line\nbreak\r\t\x1a", "' UNION SELECT 1, 2 #",
    "/* comment */", "`backtick`", "\\n", "?", "-- ", "#",
]


@pytest.fixture
def db(tmp_path: Path) -> Iterator[rivulet.Database]:
    database = rivulet.open(tmp_path / "db")
    for sql in SCHEMA:
        database.execute(sql)
    database.table("items").insert_many(ITEMS)
    database.table("tags").insert_many(TAGS)
    database.settle()
    yield database
    database.close()


def connect(server: ServerThread, **kwargs: Any) -> pymysql.Connection:
    kwargs.setdefault("user", "root")
    kwargs.setdefault("password", "")
    kwargs.setdefault("autocommit", True)
    return pymysql.connect(host="127.0.0.1", port=server.port, database="rivulet", **kwargs)


def connector(server: ServerThread, **kwargs: Any) -> Any:
    kwargs.setdefault("autocommit", True)  # (its default is off, as MySQL's drivers' is)
    return mysql.connector.connect(host="127.0.0.1", port=server.port, user="root",
                                   password="", database="rivulet", use_pure=True, **kwargs)


def oracle() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE items (id INT PRIMARY KEY, name TEXT NOT NULL, price NUMERIC, "
                 "qty INT, added TEXT)")
    conn.execute("CREATE TABLE tags (item_id INT NOT NULL, tag TEXT NOT NULL)")
    conn.executemany("INSERT INTO items VALUES (?, ?, ?, ?, ?)",
                     [(i, n, float(p), q, str(a)) for i, n, p, q, a in ITEMS])
    conn.executemany("INSERT INTO tags VALUES (?, ?)", TAGS)
    return conn


def query(conn: Any, sql: str, params: Any = None) -> list[tuple]:
    with conn.cursor() as cursor:
        cursor.execute(sql, params)
        return [tuple(r) for r in cursor.fetchall()]


# --------------------------------------------------------------------------- normalization


def test_split_turns_literals_into_slots_and_leaves_names_and_comments() -> None:
    s = split("SELECT t1.a, `x 5`, 'it''s', \"q\\\"\""
              " FROM t1 /* 7 */ WHERE b = 12 AND c = 1.5 -- 9")
    assert s.template == "SELECT t1.a, `x 5`, ?, ? FROM t1 /* 7 */ WHERE b = ? AND c = ? -- 9"
    assert s.values == ("it's", 'q"', 12, decimal.Decimal("1.5"))
    assert s.params == ()
    assert split("SELECT a FROM t WHERE b = ? AND c = 'x?'").params == (0,)
    assert split("SELECT a FROM t WHERE b = 1e3").values == (1000.0,)
    assert not split("SELECT a FROM t WHERE b = X'1f'").exact
    assert split(r"SELECT 'a\nb\0\\\%'").values == ("a\nb\0\\\\%",)


@settings(max_examples=300, deadline=None)
@given(items=st.lists(st.one_of(
           st.integers(0, 10**20),
           st.sampled_from(["2.5", "3e2", "1.", "7E-1", "?", "'9'", "-4", "x1", "0x1f"])),
           min_size=1, max_size=12),
       seps=st.lists(st.sampled_from([",", ", ", " ,\t", ",\n", " , "]), min_size=12, max_size=12))
def test_split_of_a_list_gives_a_slot_per_value(items: list[Any], seps: list[str]) -> None:
    """A list of integers is split in one match (a run of them), and gives exactly the
    slots, values and template that splitting each number alone gives, whatever is
    around it (decimals, exponents, names with digits, strings, '?')."""
    texts = [str(i) for i in items]
    body = "".join(t + (seps[k] if k < len(texts) - 1 else "") for k, t in enumerate(texts))
    sql = f"SELECT a FROM t WHERE b IN ({body}) AND c = 5"
    got = split(sql)
    alone = [split(f"SELECT {t}") for t in texts]  # one number (or name, string, ?) alone
    template = "".join(a.template[len("SELECT "):] + (seps[k] if k < len(texts) - 1 else "")
                       for k, a in enumerate(alone))
    assert got.template == f"SELECT a FROM t WHERE b IN ({template}) AND c = ?"
    assert got.values == (*(v for a in alone for v in a.values), 5)
    assert got.texts == (*(v for a in alone for v in a.texts), "5")
    assert got.exact == all(a.exact for a in alone)
    offsets = itertools.accumulate([len(a.values) for a in alone], initial=0)
    assert got.params == tuple(o + p for a, o in zip(alone, offsets) for p in a.params)


def test_query_texts_are_kept_from_their_second_time_and_while_asked_for() -> None:
    """The cache of whole query texts (statements.Texts) keeps a text the second time it
    is answered, not the first (most texts come once); it holds at most its limit and
    keeps the texts asked for lately, whatever came in between."""
    from rivulet.server.mysql.statements import Known, Texts

    texts = Texts(limit=8)
    known = {n: Known(None, (n,)) for n in range(100)}  # type: ignore[arg-type]
    text = {n: f"SELECT {n}".encode() for n in range(100)}
    texts.remember(text[0], known[0])
    assert texts.get(text[0]) is None  # once: only noted
    texts.remember(text[0], known[0])
    assert texts.get(text[0]) is known[0]
    for n in range(1, 60):  # many others, each twice; text 0 asked for all along
        texts.remember(text[n], known[n])
        texts.remember(text[n], known[n])
        assert texts.get(text[0]) is known[0]
        assert len(texts) <= 8
    assert texts.get(text[59]) is known[59] and texts.get(text[1]) is None
    stale = Known(None, ("changed",))  # type: ignore[arg-type]
    texts.remember(text[0], stale)  # answered again (after DDL): replaced at once
    assert texts.get(text[0]) is stale
    texts.clear()
    assert texts.get(text[0]) is None and len(texts) == 0


def test_statement_templates_keep_their_text_not_their_parsed_tree() -> None:
    """The statement cache keeps a shape per template (up to CACHE_LIMIT of them), outside
    the memory limit: a read's, a write's or a DDL's keeps its text, not sqlglot's tree of
    it (tens of kilobytes for a CREATE VIEW; a soak that added and dropped a view a minute
    grew by them); the kinds answered from their tree (SHOW, EXPLAIN) keep it."""
    import gc
    import tracemalloc

    from rivulet.server.mysql import normalize
    from rivulet.server.mysql.statements import analyze

    def shape(sql: str):  # type: ignore[no-untyped-def]
        return analyze(normalize.split(sql), sql)

    view = ("CREATE VIEW v{} AS SELECT user_id, story_id, COUNT(*) AS n FROM votes "
            "WHERE user_id = ? AND story_id >= 5 GROUP BY user_id, story_id")
    texts = [view.format(n) for n in range(200)] + [f"DROP VIEW v{n}" for n in range(200)]
    texts += [f"SELECT story_id, n FROM v{n} WHERE user_id = 7" for n in range(200)]
    texts += [f"INSERT INTO votes{n} (user_id, story_id) VALUES (1, 2)" for n in range(200)]
    # What the shapes hold is what dropping them frees (the growth of all traced memory
    # also counted other threads' allocations and caches filled on the way in a full run).
    tracemalloc.start()
    try:
        shapes = [shape(text) for text in texts]
        assert all(s.node is None for s in shapes)
        count = len(shapes)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        del shapes
        gc.collect()
        kept = held - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert kept / count < 2_000, f"{kept / count:.0f} bytes a template"
    assert shape("SHOW CREATE VIEW v1").node is not None
    assert shape("EXPLAIN SELECT * FROM votes").node is not None


def test_texts_seen_once_take_no_more_memory_as_they_come() -> None:
    """The one-off texts a server sees are remembered in a table made once: 200,000
    distinct texts, none kept (each came once), allocate nothing that stays; a text seen
    twice is still kept."""
    import tracemalloc

    from rivulet.server.mysql.statements import Known, Texts

    texts = Texts(limit=50_000)
    known = Known(None, ())  # type: ignore[arg-type]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(200_000):
            texts.remember(f"SELECT * FROM t WHERE id = {n}".encode(), known)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(texts) == 0 and grown < 64 * 1024, grown
    texts.remember(b"SELECT 1", known)
    texts.remember(b"SELECT 1", known)
    assert texts.get(b"SELECT 1") is known


def test_literals_in_key_positions_share_one_view(server: ServerThread,
                                                  db: rivulet.Database) -> None:
    conn = connect(server)
    views_before = len(db.program.views)
    for i in (5, 6, 7):
        assert query(conn, f"SELECT name, qty FROM items WHERE id = {i}") == [(f"item {i}", i % 7)]
    for n in (1, 2, 5):
        ids = list(range(1, n + 1))
        got = query(conn, f"SELECT id FROM items WHERE id IN ({', '.join(map(str, ids))})")
        assert sorted(r[0] for r in got) == ids
    assert query(conn, "SELECT name FROM items WHERE name = 'item 3'") == [("item 3",)]
    assert query(conn, "SELECT name FROM items WHERE name = 'item 4'") == [("item 4",)]
    # one view for `id = ?`, one for `id IN (?)` (any length), one for `name = ?`
    assert len(db.program.views) == views_before + 3
    with conn.cursor() as cursor:  # negative literals are parameters too
        cursor.execute("INSERT INTO items (id, name, qty) VALUES (-3, 'minus three', -1), "
                       "(-4, 'minus four', -2)")
        cursor.execute("UPDATE items SET qty = -7 WHERE id = -4")
    db.settle()
    assert query(conn, "SELECT name, qty FROM items WHERE id = -3") == [("minus three", -1)]
    assert query(conn, "SELECT name, qty FROM items WHERE id = -4") == [("minus four", -7)]
    assert sorted(query(conn, "SELECT id FROM items WHERE id IN (-4, 5, -3)")) == [
        (-4,), (-3,), (5,)]
    assert len(db.program.views) == views_before + 3


def test_literals_outside_key_positions_stay_constants(server: ServerThread) -> None:
    conn, sqlite = connect(server), oracle()
    queries = [
        "SELECT id, qty * 2 + 1 FROM items WHERE qty = 3",
        "SELECT id, 'const' FROM items WHERE id = 9",
        "SELECT id FROM items WHERE qty > 2 AND qty < 5",
        "SELECT id, name FROM items WHERE id > 30 ORDER BY id LIMIT 3",
        "SELECT id, name FROM items WHERE id > 30 ORDER BY id LIMIT 5",
        "SELECT item_id, COUNT(*) FROM tags WHERE tag = 'red' GROUP BY item_id",
        "SELECT item_id, COUNT(*) FROM tags WHERE tag = 'blue' GROUP BY item_id",
        "SELECT id FROM items WHERE qty = 1 OR qty = 2",
        "SELECT id FROM items WHERE price BETWEEN 3 AND 7.5",
        "SELECT items.id, tags.tag FROM items JOIN tags ON items.id = tags.item_id "
        "WHERE items.id = 12",
    ]
    for sql in queries:
        assert_same_answer(sql, (), query(conn, sql), sqlite, what="the MySQL server")


def test_ctes_set_operations_and_joins_without_on_over_the_wire(server: ServerThread) -> None:
    conn, sqlite = connect(server), oracle()
    queries = [
        "WITH t AS (SELECT item_id, COUNT(*) AS n FROM tags GROUP BY item_id) "
        "SELECT items.id, t.n FROM items JOIN t ON t.item_id = items.id WHERE items.id = 12",
        "SELECT items.id, tags.tag FROM items, tags WHERE items.id = tags.item_id "
        "AND items.id = 12",
        "SELECT items.id, tags.tag FROM items CROSS JOIN tags WHERE items.qty > 4",
        "SELECT id FROM items INTERSECT SELECT item_id FROM tags",
        "SELECT id FROM items EXCEPT SELECT item_id FROM tags WHERE tag = 'red'",
    ]
    for sql in queries:
        assert_same_answer(sql, (), query(conn, sql), sqlite, what="the MySQL server")


def test_writes_through_text_queries(server: ServerThread, db: rivulet.Database) -> None:
    conn, sqlite = connect(server), oracle()
    statements = [
        "INSERT INTO items (id, name, qty) VALUES (100, 'new', 3), (101, 'newer', 4)",
        "UPDATE items SET qty = qty + 10 WHERE id = 100",
        "UPDATE items SET name = 'renamed' WHERE qty = 4",
        "DELETE FROM items WHERE id IN (1, 2, 3)",
        "DELETE FROM tags WHERE tag = 'blue'",
    ]
    counts = []
    for sql in statements:
        with conn.cursor() as cursor:
            counts.append(cursor.execute(sql))
        sqlite.execute(sql)
    assert counts[:4] == [2, 1, sqlite.execute("SELECT COUNT(*) FROM items WHERE name = 'renamed'")
                          .fetchone()[0], 3]
    db.settle()
    for sql in ["SELECT id, name, qty FROM items WHERE qty > 0",
                "SELECT item_id, tag FROM tags WHERE tag = 'red'"]:
        assert_same_answer(sql, (), query(conn, sql), sqlite)


def test_client_found_rows_counts_the_rows_an_update_matched(server: ServerThread) -> None:
    """MySQL counts the rows an UPDATE changed, or those it matched for a client that asks
    for CLIENT_FOUND_ROWS (Django's and SQLAlchemy's backends do: Django's ``save()`` of
    an unchanged row takes a count of 0 for a missing row and INSERTs it). On the slow
    path (a text's first time), the fast one (its next times), prepared, and in a
    transaction."""
    found, plain = connect(server, client_flag=CLIENT.FOUND_ROWS), connect(server)
    statements = [  # (qty is id % 7: ids 3, 10, 17, 24, 31 and 38 hold 3)
        ("UPDATE items SET qty = 3 WHERE qty = 3", 6, 0),
        ("UPDATE items SET qty = qty WHERE id = 1", 1, 0),
        ("UPDATE items SET qty = 8 - qty WHERE id IN (4, 6)", 2, 1),  # (4 stays 4)
        ("UPDATE items SET qty = 0 WHERE id = 999", 0, 0),
    ]
    for conn, column in ((found, 1), (plain, 2)):
        for _ in range(3):  # (the fast path from a text's second time)
            with conn.cursor() as cursor:
                assert [cursor.execute(s[0]) for s in statements] == [s[column] for s in
                                                                     statements]
    with found.cursor() as cursor:
        assert cursor.execute("DELETE FROM items WHERE id IN (39, 40, 999)") == 2
        assert cursor.execute("INSERT INTO items (id, name) VALUES (39, 'x')") == 1
        cursor.execute("BEGIN")
        assert [cursor.execute(s[0]) for s in statements] == [s[1] for s in statements]
        cursor.execute("ROLLBACK")
    prepared = connector(server, client_flags=[mysql.connector.constants.ClientFlag.FOUND_ROWS])
    cursor = prepared.cursor(prepared=True)
    for _ in range(2):
        cursor.execute("UPDATE items SET qty = ? WHERE id = ?", (4, 5))
        assert cursor.rowcount == 1
    prepared.close()
    found.close()
    plain.close()


def test_ddl_show_describe_and_explain(server: ServerThread, db: rivulet.Database) -> None:
    conn = connect(server)
    with conn.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE notes (id INT PRIMARY KEY, body TEXT NOT NULL, score INT DEFAULT 0)")
        cursor.execute("INSERT INTO notes (id, body) VALUES (1, 'one'), (2, 'two')")
        cursor.execute("CREATE VIEW NotesById AS SELECT id, body, score FROM notes WHERE id = ?")
    assert ("notes",) in query(conn, "SHOW TABLES")
    assert ("NotesById", "VIEW") in query(conn, "SHOW FULL TABLES")
    assert [r[0] for r in query(conn, "SHOW VIEWS")] == ["NotesById"]
    create = query(conn, "SHOW CREATE TABLE notes")[0][1]
    assert "`body` text NOT NULL" in create and "PRIMARY KEY (`id`)" in create
    assert query(conn, "DESCRIBE notes")[2][:5] == ("score", "int", "YES", "", "0")
    assert [r[0] for r in query(conn, "DESCRIBE NotesById")] == ["id", "body", "score"]
    db.settle()
    assert query(conn, "SELECT * FROM NotesById WHERE id = 2") == [(2, "two", 0)]
    plan = [r[0] for r in query(conn, "EXPLAIN NotesById")]
    assert plan[0].startswith("view NotesById") and any("state: partial" in p for p in plan)
    plan = [r[0] for r in query(conn, "EXPLAIN SELECT body FROM notes WHERE score = 0")]
    assert plan[0].startswith("view _rivulet_q_") and "score = ?" in plan[0]
    with conn.cursor() as cursor:
        cursor.execute("DROP VIEW NotesById")
    assert query(conn, "SHOW VIEWS") == []
    with pytest.raises(pymysql.ProgrammingError) as info:
        query(conn, "SELECT * FROM NotesById WHERE id = 2")
    assert info.value.args[0] == 1146


def test_named_views_read_by_their_parameters(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        db.execute_script(news_program())
        load_news_sample(db, stories=300, votes=3000)
        running = ServerThread(db, port=0)
        try:
            conn = connect(running)
            expected = db.view("StoriesWithVC").lookup(7)
            assert query(conn, "SELECT * FROM StoriesWithVC WHERE id = 7") == expected
            assert query(conn, "SELECT vcount, id FROM StoriesWithVC WHERE id = 7") == [
                (expected[0][4], 7)]
            assert (query(conn, "SELECT * FROM FrontPage LIMIT 3")
                    == db.view("FrontPage").lookup()[:3])
            # Read otherwise, a view with parameters is a table of its rows for every value
            # (tests/test_views_as_tables.py); a view with a LIMIT reads only as itself.
            story = db.view("StoriesWithVC").lookup(7)[0]
            assert query(conn, f"SELECT id FROM StoriesWithVC WHERE title = '{story[2]}'") \
                == [(7,)]
            assert len(query(conn, "SELECT * FROM StoriesWithVC")) == 300
            with pytest.raises(pymysql.err.NotSupportedError, match="parameter columns"):
                query(conn, "SELECT * FROM FrontPage WHERE title = 'x'")
        finally:
            running.stop()


# --------------------------------------------------------------------------- clients


def test_mysql_connector_prepared_statements_take_values(server: ServerThread,
                                                          db: rivulet.Database) -> None:
    conn = connector(server)
    cursor = conn.cursor(prepared=True)
    cursor.execute("SELECT id, name, price, added FROM items WHERE id = ?", (4,))
    assert cursor.fetchall() == [
        (4, "item 4", decimal.Decimal("4.50"), dt.datetime(2024, 1, 5, 12))]
    cursor.execute("SELECT id FROM items WHERE id IN (?, ?, ?)", (1, 2, 40))
    assert sorted(r[0] for r in cursor.fetchall()) == [1, 2, 40]
    when = dt.datetime(2025, 3, 4, 5, 6, 7)
    cursor.execute("INSERT INTO items VALUES (?, ?, ?, ?, ?)",
                   (200, "prepared", decimal.Decimal("9.99"), None, when))
    assert cursor.rowcount == 1
    cursor.execute("UPDATE items SET qty = ? WHERE id = ?", (3, 200))
    db.settle()
    cursor.execute("SELECT name, price, qty, added FROM items WHERE id = ?", (200,))
    assert cursor.fetchall() == [("prepared", decimal.Decimal("9.99"), 3, when)]
    cursor.execute("SELECT id FROM items WHERE added > ? AND id = ?",
                   (dt.datetime(2025, 1, 1), 200))
    assert cursor.fetchall() == [(200,)]
    text = conn.cursor()
    text.execute("SELECT name FROM items WHERE id = %s", (200,))
    assert text.fetchall() == [("prepared",)]
    conn.close()


def test_hostile_strings_are_values_never_sql(server: ServerThread, db: rivulet.Database) -> None:
    plain, prepared = connect(server), connector(server)
    pcursor = prepared.cursor(prepared=True)
    for i, value in enumerate(HOSTILE):
        with plain.cursor() as cursor:  # PyMySQL escapes on the client: the text path
            assert cursor.execute("INSERT INTO items (id, name) VALUES (%s, %s)",
                                  (1000 + i, value)) == 1
        pcursor.execute("INSERT INTO items (id, name) VALUES (?, ?)", (2000 + i, value))
    db.settle()
    for i, value in enumerate(HOSTILE):
        assert sorted(query(plain, "SELECT id, name FROM items WHERE name = %s", (value,))) == [
            (1000 + i, value), (2000 + i, value)]
        pcursor.execute("SELECT id FROM items WHERE name = ?", (value,))
        assert sorted(r[0] for r in pcursor.fetchall()) == [1000 + i, 2000 + i]
        pcursor.execute("SELECT name FROM items WHERE id = ?", (2000 + i,))
        assert pcursor.fetchall() == [(value,)]
    assert query(plain, "SELECT COUNT(*) FROM items WHERE id > 0") == [
        (len(ITEMS) + 2 * len(HOSTILE),)]
    assert db.storage.count(db.catalog.require_table("items")) == len(ITEMS) + 2 * len(HOSTILE)
    prepared.close()


def test_sqlalchemy_core(server: ServerThread, db: rivulet.Database) -> None:
    engine = sa.create_engine(f"mysql+pymysql://root@127.0.0.1:{server.port}/rivulet")
    try:
        inspector = sa.inspect(engine)
        assert {"items", "tags"} <= set(inspector.get_table_names())
        assert [c["name"] for c in inspector.get_columns("items")] == [
            "id", "name", "price", "qty", "added"]
        metadata = sa.MetaData()
        items = sa.Table("items", metadata, autoload_with=engine)
        with engine.begin() as conn:
            conn.execute(sa.insert(items), [{"id": 300, "name": "sa", "qty": 1},
                                            {"id": 301, "name": "sa2", "qty": 2}])
            conn.execute(sa.update(items).where(items.c.id == 301).values(qty=5))
        db.settle()
        with engine.connect() as conn:
            rows = conn.execute(sa.select(items.c.id, items.c.qty)
                                .where(items.c.id.in_([300, 301, 5]))).all()
            assert sorted(tuple(r) for r in rows) == [(5, 5), (300, 1), (301, 5)]
            assert conn.execute(sa.select(items.c.name).where(items.c.id == 300)).scalar() == "sa"
            assert conn.execute(sa.text("SELECT name FROM items WHERE id = :i"),
                                {"i": 301}).scalar() == "sa2"
    finally:
        engine.dispose()


def test_32_connections_reading_and_writing_agree_with_sqlite(server: ServerThread,
                                                              db: rivulet.Database) -> None:
    errors: list[BaseException] = []
    writes: list[list[str]] = [[] for _ in range(32)]

    def client(n: int) -> None:
        try:
            conn = connect(server)
            for k in range(15):
                key = 10_000 + n * 100 + k
                statements = [
                    f"INSERT INTO items (id, name, qty) VALUES ({key}, 'c{n}', {k % 5})",
                    f"INSERT INTO tags VALUES ({key}, 't{n % 4}')",
                ]
                if k % 3 == 2:
                    statements.append(f"UPDATE items SET qty = qty + 1 WHERE id = {key - 1}")
                if k % 5 == 4:
                    statements.append(f"DELETE FROM tags WHERE item_id = {key - 2}")
                for sql in statements:
                    with conn.cursor() as cursor:
                        cursor.execute(sql)
                    writes[n].append(sql)
                query(conn, f"SELECT name, qty FROM items WHERE id = {key}")
                query(conn, f"SELECT item_id FROM tags WHERE tag = 't{n % 4}'")
            conn.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
    db.settle()
    sqlite = oracle()
    for statements in writes:  # each client wrote its own keys: the order across clients is moot
        for sql in statements:
            sqlite.execute(sql)
    conn = connect(server)
    checks = [("SELECT id, name, qty FROM items WHERE name = %s", [f"c{n}"]) for n in range(32)]
    checks += [("SELECT item_id, tag FROM tags WHERE tag = %s", [f"t{n}"]) for n in range(4)]
    checks += [("SELECT qty, COUNT(*) FROM items WHERE qty >= %s GROUP BY qty", [0])]
    for sql, params in checks:
        got = query(conn, sql, params)
        assert_same_answer(sql.replace("%s", "?"), params, got, sqlite)


# --------------------------------------------------------------------------- errors


def test_malformed_and_unsupported_sql_get_errors_and_the_connection_goes_on(
        server: ServerThread) -> None:
    conn = connect(server)
    cases = [
        ("SELEC id FROM items", pymysql.err.ProgrammingError, 1064),
        ("SELECT id FROM items WHERE", pymysql.err.ProgrammingError, 1064),
        ("SELECT nope FROM items WHERE id = 1", pymysql.err.OperationalError, 1054),
        ("SELECT id FROM missing WHERE id = 1", pymysql.err.ProgrammingError, 1146),
        ("GRANT ALL ON *.* TO someone", pymysql.err.NotSupportedError, 1235),
        ("INSERT INTO items (id, name) VALUES (1, 'dup')", pymysql.err.IntegrityError, 1062),
        ("INSERT INTO items (id) VALUES (500)", pymysql.err.IntegrityError, 1048),
        ("SELECT id FROM items WHERE id = ?", pymysql.err.OperationalError, 1210),
    ]
    for sql, error, code in cases:
        with pytest.raises(error) as info:
            query(conn, sql)
        assert info.value.args[0] == code, (sql, info.value.args)
        assert query(conn, "SELECT name FROM items WHERE id = 1") == [("item 1",)]


def test_oversized_packet_is_refused_and_the_connection_goes_on(db: rivulet.Database) -> None:
    running = ServerThread(db, port=0, max_packet=64 * 1024)
    try:
        conn = connect(running)
        big = "x" * (200 * 1024)
        with pytest.raises(pymysql.err.OperationalError) as info:
            query(conn, f"SELECT id FROM items WHERE name = '{big}'")
        assert info.value.args[0] == 1153
        assert query(conn, "SELECT name FROM items WHERE id = 2") == [("item 2",)]
        assert query(conn, "SELECT @@max_allowed_packet") == [(64 * 1024,)]
    finally:
        running.stop()


def test_packets_over_16mb_are_joined(server: ServerThread, db: rivulet.Database) -> None:
    conn = connect(server)
    body = "ab" * (9 * 1024 * 1024)  # an 18 MB statement: two protocol frames
    with conn.cursor() as cursor:
        cursor.execute("CREATE TABLE docs (id INT PRIMARY KEY, body LONGTEXT NOT NULL)")
        assert cursor.execute("INSERT INTO docs VALUES (1, %s)", (body,)) == 1
        with pytest.raises(pymysql.err.DataError) as info:  # too long for VARCHAR(100)
            cursor.execute("INSERT INTO items (id, name) VALUES (777, %s)", (body,))
        assert info.value.args[0] == 1406
    db.settle()
    assert query(conn, "SELECT body FROM docs WHERE id = 1") == [(body,)]


def test_client_disconnecting_mid_query_leaves_others_served(server: ServerThread,
                                                              db: rivulet.Database) -> None:
    db.table("tags").insert_many([(i, "bulk") for i in range(50_000)])
    db.settle()
    others = connect(server)
    for n in range(5):
        conn = connect(server)
        # A query that creates a view over 50,000 rows; the client hangs up at once.
        sql = f"SELECT tag, COUNT(*) FROM tags WHERE item_id > {n} GROUP BY tag"
        payload = b"\x03" + sql.encode()
        conn._sock.sendall(struct.pack("<I", len(payload))[:3] + b"\x00" + payload)
        conn._sock.close()
        assert query(others, "SELECT name FROM items WHERE id = 3") == [("item 3",)]
    time.sleep(0.5)
    assert query(others, "SELECT name FROM items WHERE id = 4") == [("item 4",)]
    assert query(connect(server), "SELECT name FROM items WHERE id = 5") == [("item 5",)]


def test_read_your_writes(server: ServerThread, db: rivulet.Database) -> None:
    # Propagation is slowed down so that a read right after a write would miss it, and
    # left to the propagation thread (small write groups are otherwise propagated on the
    # event loop before their reply: see the next test).
    db.hooks["before_propagate"] = lambda: time.sleep(0.05)
    server.server.writes.propagate = False
    conn = connect(server)
    query(conn, "SELECT qty FROM items WHERE id = 7")  # the view exists and holds id 7
    with conn.cursor() as cursor:
        cursor.execute("SET rivulet_read_your_writes = 1")
    assert query(conn, "SELECT @@rivulet_read_your_writes") == [(1,)]
    for n in range(1, 8):
        with conn.cursor() as cursor:
            cursor.execute(f"UPDATE items SET qty = {100 + n} WHERE id = 7")
        assert query(conn, "SELECT qty FROM items WHERE id = 7") == [(100 + n,)]
    with conn.cursor() as cursor:
        cursor.execute("SET rivulet_read_your_writes = 0")
    stale = 0
    for n in range(1, 6):
        with conn.cursor() as cursor:
            cursor.execute(f"UPDATE items SET qty = {200 + n} WHERE id = 7")
        stale += query(conn, "SELECT qty FROM items WHERE id = 7") != [(200 + n,)]
    assert stale > 0  # without it, reads are eventually consistent (the test is meaningful)


def test_repeated_reads_follow_writes_and_each_clients_framing(server: ServerThread,
                                                               db: rivulet.Database) -> None:
    """A text read answered before is answered with the reply encoded then while the
    view's rows under its key are unchanged: it must follow every write to the key, and
    clients with other capabilities (PyMySQL's and MySQL Connector's differ) must each
    get a reply framed for them."""
    clients = [connect(server), connect(server), connector(server)]
    sql = "SELECT name, qty FROM items WHERE id = 9"
    for n in range(6):
        for conn in clients:
            for _ in range(2):  # the second read of the same rows is the cached reply
                assert query(conn, sql) == [(f"item 9 v{n}" if n else "item 9", n * 10 or 2)]
        writer = clients[n % len(clients)]
        with writer.cursor() as cursor:
            cursor.execute(f"UPDATE items SET name = 'item 9 v{n + 1}', qty = {(n + 1) * 10} "
                           "WHERE id = 9")
        db.settle()  # (other connections' reads are eventually consistent: docs/servers.md)
        if n % 2:  # (and once by another key: the cache is per query text)
            assert query(writer, "SELECT name, qty FROM items WHERE id = 10") == [("item 10", 3)]


def test_repeated_empty_reads_follow_writes(server: ServerThread) -> None:
    """An empty answer is reused as any other (every page reads the user's few saved
    and hidden stories, mostly none), until a write gives the key rows, and again once
    they are deleted; a count's empty group still answers its default row. (The
    connection reads its own writes: by default a read may come before a write's
    propagation, docs/servers.md.)"""
    conn = connect(server)
    with conn.cursor() as cursor:
        cursor.execute("SET rivulet_read_your_writes = 1")
    tags = "SELECT tag FROM tags WHERE item_id = 77"
    count = "SELECT COUNT(*) FROM tags WHERE item_id = 77"
    for n in range(3):
        for _ in range(2):
            assert query(conn, tags) == [] and query(conn, count) == [(0,)]
        with conn.cursor() as cursor:
            cursor.execute(f"INSERT INTO tags VALUES (77, 'tag {n}')")
        for _ in range(2):
            assert query(conn, tags) == [(f"tag {n}",)] and query(conn, count) == [(1,)]
        with conn.cursor() as cursor:
            cursor.execute("DELETE FROM tags WHERE item_id = 77")


def test_repeated_reads_of_a_view_without_parameters_follow_writes(server: ServerThread) -> None:
    """A read without parameters (every page's front-page list) reuses its encoded reply
    too, and only while its rows are unchanged."""
    conn = connect(server)
    with conn.cursor() as cursor:
        cursor.execute("SET rivulet_read_your_writes = 1")
    sql = "SELECT COUNT(*), SUM(qty) FROM items"
    [(count, total)] = query(conn, sql)
    [(qty,)] = query(conn, "SELECT qty FROM items WHERE id = 9")
    for n in range(1, 5):
        with conn.cursor() as cursor:
            cursor.execute(f"UPDATE items SET qty = {1000 + n} WHERE id = 9")
        for _ in range(2):
            [(c, t)] = query(conn, sql)
            assert (c, int(t)) == (count, int(total) - qty + 1000 + n)


def test_repeated_in_list_reads_follow_writes_to_any_listed_key(server: ServerThread) -> None:
    """A text read of an IN list reuses its encoded reply while every listed key's rows
    are unchanged; a write to any one of them is seen. A value listed twice (3 and 3.0)
    is one key."""
    conn = connect(server)
    with conn.cursor() as cursor:
        cursor.execute("SET rivulet_read_your_writes = 1")
    sql = "SELECT id, qty FROM items WHERE id IN (9, 3, 3.0, 11)"
    [before] = [dict(query(conn, sql))]
    assert set(before) == {3, 9, 11} and len(query(conn, sql)) == 3
    for n, changed in enumerate([9, 3, 11, 3], start=1):
        with conn.cursor() as cursor:
            cursor.execute(f"UPDATE items SET qty = {500 + n} WHERE id = {changed}")
        before[changed] = 500 + n
        for _ in range(2):
            got = query(conn, sql)
            assert len(got) == 3 and dict(got) == before


@pytest.mark.parametrize("budget", [1 << 20, 2_000])
def test_rows_are_encoded_once_and_follow_writes_in_any_list(
        server: ServerThread, monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    """Keys read in many different IN lists (each text new, so no whole reply to reuse)
    have their rows encoded once per value, not once per read (twice at most: a key's
    first read after a change gets the rows its fill made, the next the reader's kept
    tuple); a write to a row is seen in every list after it. With the server's budget
    for encoded replies small (reply_cache.py), the caches are emptied as they fill it
    and answers stay right."""
    from mysql_mimic import packets

    replies = server.server.cache.replies
    monkeypatch.setattr(replies, "limit", budget)
    drops = replies.drops
    encode = packets.make_text_resultset_row
    encoded: list[tuple] = []

    def counting(row: Any, columns: Any) -> bytes:
        encoded.append(tuple(row))
        return encode(row, columns)

    monkeypatch.setattr(packets, "make_text_resultset_row", counting)
    conn = connect(server)
    qty = {i: i % 7 for i in range(1, 41)}
    for n in range(16):
        ids = [5, 6, 7 + n % 3, 20 + n]
        sql = f"SELECT id, qty FROM items WHERE id IN ({', '.join(map(str, ids))})"
        assert sorted(query(conn, sql)) == sorted((i, qty[i]) for i in ids)
        if n % 4 == 3:
            qty[5] = 900 + n
            with conn.cursor() as cursor:
                cursor.execute(f"UPDATE items SET qty = {qty[5]} WHERE id = 5")
    per_value = {row: encoded.count(row) for row in encoded}
    if budget > 2_000:
        assert set(per_value) >= {(5, 5), (5, 903), (5, 907), (5, 911), (6, 6)}
        assert max(per_value.values()) <= 2, per_value
        assert replies.drops == drops
    else:
        assert per_value[(6, 6)] > 2  # the caches were emptied: the row encoded again
        assert replies.drops > drops


def test_small_write_groups_are_propagated_before_the_reply(server: ServerThread,
                                                            db: rivulet.Database) -> None:
    threads: list[str] = []

    def slow() -> None:  # a read right after a write would miss a background propagation
        threads.append(threading.current_thread().name)
        time.sleep(0.05)

    db.hooks["before_propagate"] = slow
    conn = connect(server)
    query(conn, "SELECT qty FROM items WHERE id = 7")  # the view exists and holds id 7
    for n in range(1, 6):  # read-your-writes is off: fresh anyway, on the event loop
        with conn.cursor() as cursor:
            cursor.execute(f"UPDATE items SET qty = {300 + n} WHERE id = 7")
        assert query(conn, "SELECT qty FROM items WHERE id = 7") == [(300 + n,)]
    assert threads and set(threads) == {server.thread.name}
    # A group of more rows than PROPAGATE_HERE_ROWS is the propagation thread's.
    threads.clear()
    values = ", ".join(f"({1000 + i}, 'bulk {i}', 1.0, {i})" for i in range(65))
    with conn.cursor() as cursor:
        cursor.execute(f"INSERT INTO items (id, name, price, qty) VALUES {values}")
    db.settle()
    assert threads == ["rivulet-propagate"]
    assert query(conn, "SELECT name FROM items WHERE id = 1064") == [("bulk 64",)]


def test_a_write_does_not_wait_on_the_loop_for_a_busy_graph(server: ServerThread,
                                                           db: rivulet.Database) -> None:
    """While an upquery (here: a thread holding the graph) has the dataflow, a small
    write is acknowledged at once and its propagation left to the propagation thread:
    the event loop serves every connection and must not wait for a read's miss."""
    conn = connect(server)
    query(conn, "SELECT qty FROM items WHERE id = 7")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with db.graph_lock:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        with conn.cursor() as cursor:
            cursor.execute("UPDATE items SET qty = 4242 WHERE id = 7")
        assert time.monotonic() - started < 2.0  # acknowledged while the graph is held
    finally:
        release.set()
        holder.join()
    db.settle()
    assert query(conn, "SELECT qty FROM items WHERE id = 7") == [(4242,)]


# --------------------------------------------------------------------------- users


def test_passwords_and_unknown_users(db: rivulet.Database) -> None:
    store = UserStore(db.path)
    store.set_user("app", "s3cret", "%")
    assert "s3cret" not in (db.path / "users.json").read_text()
    running = ServerThread(db, port=0)
    try:
        assert query(connect(running, user="app", password="s3cret"),
                     "SELECT name FROM items WHERE id = 1")
        for user, password in [("app", "wrong"), ("app", ""), ("nobody", ""), ("root", "x")]:
            with pytest.raises(pymysql.err.OperationalError) as info:
                connect(running, user=user, password=password)
            assert info.value.args[0] == 1045
        assert query(connect(running), "SELECT name FROM items WHERE id = 1")  # root, loopback
    finally:
        running.stop()


def test_root_without_password_only_from_loopback(db: rivulet.Database) -> None:
    import asyncio

    store = UserStore(db.path)
    remote, local = store.identity("192.0.2.7"), store.identity("127.0.0.1")
    assert asyncio.run(remote.get_user("root")).auth_plugin == "mysql_no_login"
    assert asyncio.run(local.get_user("root")).auth_plugin == "mysql_native_password"
    address = _non_loopback_address()
    if address is None:
        return
    running = ServerThread(db, host="0.0.0.0", port=0)
    try:
        with pytest.raises(pymysql.err.OperationalError) as info:
            pymysql.connect(host=address, port=running.port, user="root", password="")
        assert info.value.args[0] == 1045
    finally:
        running.stop()


def _non_loopback_address() -> str | None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


def test_sql_is_parsed_once_per_shape_not_per_query(server: ServerThread,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from rivulet.server.mysql import statements
    from rivulet.sql import parse

    calls: list[str] = []
    real = parse.parse_statements

    def counting(text: str) -> Any:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(parse, "parse_statements", counting)
    assert statements.parse_one.__module__ == "rivulet.sql.parse"  # goes through the counter
    conn, prepared = connect(server), connector(server)
    cursor = prepared.cursor(prepared=True)
    query(conn, "SELECT name FROM items WHERE id = 1")
    cursor.execute("SELECT name FROM items WHERE id = ?", (1,))
    cursor.fetchall()
    with conn.cursor() as c:
        c.execute("UPDATE items SET qty = 1 WHERE id = 1")
    calls.clear()
    for i in range(2, 30):
        assert query(conn, f"SELECT name FROM items WHERE id = {i}") == [(f"item {i}",)]
        cursor.execute("SELECT name FROM items WHERE id = ?", (i,))
        assert cursor.fetchall() == [(f"item {i}",)]
        with conn.cursor() as c:
            # rows changed, as MySQL counts them: qty was i % 7
            assert c.execute(f"UPDATE items SET qty = {i} WHERE id = {i}") == (1 if i >= 7 else 0)
    assert calls == []
    prepared.close()


def test_a_failed_statement_does_not_cost_its_shape_the_parameters(
        server: ServerThread, db: rivulet.Database) -> None:
    conn = connect(server)
    with pytest.raises(pymysql.err.ProgrammingError):
        query(conn, "SELECT b FROM later WHERE a = 1")  # no such table yet
    with conn.cursor() as cursor:
        cursor.execute("CREATE TABLE later (a INT PRIMARY KEY, b INT)")
        cursor.execute("INSERT INTO later VALUES (1, 10), (2, 20), (3, 30)")
    db.settle()
    views = len(db.program.views)
    for a in (1, 2, 3):
        assert query(conn, f"SELECT b FROM later WHERE a = {a}") == [(10 * a,)]
    assert len(db.program.views) == views + 1
    # Two range columns cannot both be parameters: the literals stay, answers stay right.
    assert query(conn, "SELECT a FROM later WHERE a > 1 AND b < 30") == [(2,)]
    assert sorted(query(conn, "SELECT a FROM later WHERE a > 0 AND b < 30")) == [(1,), (2,)]


def test_rollback_undoes_the_transactions_writes(server: ServerThread,
                                                 db: rivulet.Database) -> None:
    conn = connect(server)
    with conn.cursor() as cursor:
        cursor.execute("BEGIN")
        cursor.execute("ROLLBACK")  # nothing written: fine
        cursor.execute("BEGIN")
        cursor.execute("INSERT INTO items (id, name) VALUES (900, 'undone')")
        cursor.execute("ROLLBACK")
        cursor.execute("INSERT INTO items (id, name) VALUES (901, 'autocommit')")
        cursor.execute("ROLLBACK")  # autocommit: nothing to undo, as in MySQL
    manual = connect(server, autocommit=False)  # PyMySQL's default: autocommit off
    with manual.cursor() as cursor:
        cursor.execute("INSERT INTO items (id, name) VALUES (902, 'x')")
    manual.commit()
    with manual.cursor() as cursor:
        cursor.execute("UPDATE items SET name = 'y' WHERE id = 902")
    manual.rollback()
    db.settle()
    assert sorted(query(conn, "SELECT id, name FROM items WHERE id IN (900, 901, 902)")) == [
        (901, "autocommit"), (902, "x")]


def test_tables_may_be_qualified_by_the_database_name(server: ServerThread,
                                                      db: rivulet.Database) -> None:
    conn = connect(server)
    with conn.cursor() as cursor:
        assert cursor.execute("INSERT INTO rivulet.items (id, name) VALUES (950, 'q')") == 1
    db.settle()
    assert query(conn, "SELECT name FROM `rivulet`.`items` WHERE id = 950") == [("q",)]
    # A table of a database there is not: MySQL's "doesn't exist" (tests/test_schemas.py).
    with pytest.raises(pymysql.err.ProgrammingError, match="other.items") as failed:
        query(conn, "SELECT name FROM other.items WHERE id = 950")
    assert failed.value.args[0] == 1146


def test_reads_go_on_while_a_migration_holds_the_writes(server: ServerThread,
                                                        db: rivulet.Database) -> None:
    reader, writer = connect(server), connect(server)
    query(reader, "SELECT name FROM items WHERE id = 1")
    held, release = threading.Event(), threading.Event()

    def migration() -> None:  # holds the commit lock as a migration does
        with db.core.commit_lock:
            held.set()
            release.wait(10)

    threading.Thread(target=migration).start()
    held.wait(10)
    done: list[int] = []
    write = threading.Thread(target=lambda: done.append(
        writer.cursor().execute("INSERT INTO items (id, name) VALUES (960, 'late')")))
    write.start()
    time.sleep(0.2)
    assert not done  # the write waits for the lock...
    started = time.perf_counter()
    for i in range(1, 20):  # ...and the event loop goes on serving reads
        assert query(reader, f"SELECT name FROM items WHERE id = {i}") == [(f"item {i}",)]
    assert time.perf_counter() - started < 2
    release.set()
    write.join(10)
    assert done == [1]
    db.settle()
    assert query(reader, "SELECT name FROM items WHERE id = 960") == [("late",)]


def test_reply_caches_share_one_budget_that_follows_the_memory_limit(tmp_path: Any) -> None:
    """The encoded replies the server keeps (texts' replies, handlers' row payloads) are
    charged to one budget, an eighth of the memory limit (1 MiB to 64 MiB): a server
    under a small limit does not keep megabytes of replies, and their rows, besides."""
    from rivulet.server.mysql.reply_cache import ReplyBudget, reply_cache_bytes

    assert reply_cache_bytes(None) == 64 << 20
    assert reply_cache_bytes(16_000_000) == 2_000_000
    assert reply_cache_bytes(1_000) == 1 << 20 and reply_cache_bytes(10 << 30) == 64 << 20
    emptied: list[int] = []
    budget = ReplyBudget(100, lambda: emptied.append(1))
    budget.charge(60)
    assert not emptied
    budget.charge(60)  # past the budget: every cache emptied, the count starts again
    assert emptied == [1] and budget.used == 0 and budget.drops == 1
    with rivulet.open(tmp_path / "db", memory_limit="16MB") as limited:
        limited.execute("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(50))")
        limited.table("t").insert_many([(i, "x" * 40) for i in range(400)])
        limited.settle()
        running = ServerThread(limited, port=0)
        try:
            replies = running.server.cache.replies
            assert replies.limit == 2_000_000
            replies.limit = 5_000
            conn = connect(running)
            for i in range(400):
                assert query(conn, f"SELECT s FROM t WHERE id = {i}") == [("x" * 40,)]
                assert query(conn, f"SELECT s FROM t WHERE id = {i}") == [("x" * 40,)]
            conn.close()
            assert replies.drops > 0 and replies.used <= 5_000
        finally:
            running.stop()
