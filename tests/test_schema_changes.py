"""ALTER TABLE applied lazily while the program runs (issue 6, part 3).

The oracle is SQLite running the same changes: ADD, DROP and RENAME COLUMN natively, a
type change by rebuilding the table with CAST (SQLite has no MODIFY). After every step,
the whole table, reads by key, the views planned before the change and views planned
after it must agree with it. Type changes are converted lazily; the tests read before,
during and after the background conversion, and crash the process in the middle of it.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import rivulet
from oracle import assert_same_answer, same_multiset
from rivulet.errors import ProgramError, SqlError
from spark_fixtures import spark_session  # noqa: F401 (the shared ``spark`` fixture)

TABLE = ("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT, "
         "note VARCHAR(30))")
#: Views planned on the first version; none of them depends on qty, note or added columns.
OLD_VIEWS = {
    "by_id": "SELECT id, name FROM items WHERE id = ?",
    "by_name": "SELECT id FROM items WHERE name = ?",
    "per_name": "SELECT name, COUNT(*) AS n FROM items GROUP BY name",
}
OLD_KEYS = {"by_id": [(i,) for i in range(12)], "by_name": [(f"n{i}",) for i in range(4)],
            "per_name": [()]}


class AlterPair:
    """rivulet and SQLite side by side, with the columns of ``items`` tracked for SQLite's
    table rebuilds (column name -> SQLite type, in order)."""

    def __init__(self, path: Path, **options: Any) -> None:
        self.db = rivulet.open(path, **options)
        self.lite = sqlite3.connect(":memory:", isolation_level=None)
        self.columns: dict[str, str] = {"id": "INTEGER PRIMARY KEY", "name": "TEXT NOT NULL",
                                        "qty": "INTEGER", "note": "TEXT"}
        self.both(TABLE)
        for name, sql in OLD_VIEWS.items():
            self.db.execute(f"CREATE VIEW {name} AS {sql}")
        self.views = dict(OLD_VIEWS)
        self.keys = dict(OLD_KEYS)

    def both(self, sql: str, params: tuple = ()) -> None:
        self.db.execute(sql, params)
        self.lite.execute(sql, params)

    def alter(self, sql: str, lite: list[str] | None = None) -> None:
        """``sql`` on rivulet, ``lite`` (default: the same) on SQLite."""
        self.db.execute(sql)
        for statement in lite if lite is not None else [sql]:
            self.lite.execute(statement)

    def retype(self, column: str, rivulet_type: str, lite_type: str) -> None:
        """MODIFY on rivulet; on SQLite, the table rebuilt with the column CAST."""
        self.db.execute(f"ALTER TABLE items MODIFY {column} {rivulet_type}")
        self.columns[column] = lite_type
        decl = ", ".join(f"{c} {t}" for c, t in self.columns.items())
        values = ", ".join(f"CAST({c} AS {lite_type})" if c == column else c for c in self.columns)
        self.lite.executescript(f"""
            CREATE TABLE items_new ({decl});
            INSERT INTO items_new SELECT {values} FROM items;
            DROP TABLE items;
            ALTER TABLE items_new RENAME TO items;
        """)

    def check(self) -> None:
        self.db.settle()
        names = ", ".join(self.columns)
        assert_same_answer(f"SELECT {names} FROM items", (),
                           self.db.query(f"SELECT {names} FROM items"), self.lite,
                           what="whole table")
        by_key = f"SELECT {names} FROM items WHERE id = ?"
        for i in (0, 3, 7, 50):
            assert_same_answer(by_key, (i,), self.db.query(by_key, [i]), self.lite, what=f"row {i}")
        for name, sql in self.views.items():
            for key in self.keys[name]:
                assert_same_answer(sql, key, self.db.view(name).lookup(*key), self.lite,
                                   what=f"view {name}{key}")

    def close(self) -> None:
        self.db.close()
        self.lite.close()


@pytest.fixture
def pair(tmp_path: Path) -> AlterPair:
    p = AlterPair(tmp_path / "db", background_migration=False)  # lazy work only on demand
    rows = [(i, f"n{i % 4}", i * 10, f"note {i}") for i in range(10)]
    for row in rows:
        p.both("INSERT INTO items VALUES (?, ?, ?, ?)", row)
    yield p
    p.close()


def test_add_column_reads_its_default_in_old_rows_and_new_views_see_it(pair: AlterPair) -> None:
    pair.alter("ALTER TABLE items ADD COLUMN score INT NOT NULL DEFAULT 5")
    pair.columns["score"] = "INTEGER"
    pair.check()
    pair.both("INSERT INTO items VALUES (20, 'n1', 1, 'x', 9)")
    pair.both("UPDATE items SET score = score + 1 WHERE id < 3")
    pair.db.execute("CREATE VIEW by_score AS SELECT id, name FROM items WHERE score = ?")
    pair.views["by_score"] = "SELECT id, name FROM items WHERE score = ?"
    pair.keys["by_score"] = [(5,), (6,), (9,)]
    pair.check()


def test_add_column_first_and_after_keeps_every_view_answering(pair: AlterPair) -> None:
    pair.db.execute("ALTER TABLE items ADD COLUMN a INT FIRST, "
                    "ADD COLUMN b VARCHAR(5) DEFAULT 'bb' AFTER name")
    assert pair.db.query("SELECT * FROM items WHERE id = ?", [1]) == [
        (None, 1, "n1", "bb", 10, "note 1")]
    pair.db.execute("INSERT INTO items VALUES (7, 30, 'n2', 'b', 3, 'x')")
    pair.lite.execute("INSERT INTO items VALUES (30, 'n2', 3, 'x')")
    pair.check()  # the whole table as SQLite has it: the columns named, in its order


def test_drop_column_that_no_view_reads(pair: AlterPair) -> None:
    pair.alter("ALTER TABLE items DROP COLUMN note")
    del pair.columns["note"]
    pair.check()
    pair.both("INSERT INTO items VALUES (21, 'n3', 4)")
    pair.both("DELETE FROM items WHERE id = 2")
    pair.check()
    # The name is free again: a new column of that name starts empty.
    pair.alter("ALTER TABLE items ADD COLUMN note INT")
    pair.columns["note"] = "INTEGER"
    pair.check()


def test_rename_column_keeps_old_views_and_new_queries_use_the_new_name(pair: AlterPair) -> None:
    pair.alter("ALTER TABLE items RENAME COLUMN name TO label")
    pair.columns = {("label" if c == "name" else c): t for c, t in pair.columns.items()}
    for name, sql in list(pair.views.items()):  # SQLite's text of the old views, renamed
        pair.views[name] = sql.replace("name", "label").replace("per_label", "per_name")
    pair.both("INSERT INTO items (id, label, qty) VALUES (22, 'n0', 1)")
    pair.check()
    with pytest.raises(SqlError, match="name"):
        pair.db.query("SELECT name FROM items")


def test_type_change_converts_lazily_and_every_read_sees_the_new_type(pair: AlterPair) -> None:
    pair.retype("qty", "VARCHAR(20)", "TEXT")
    assert pair.db.catalog.table("items").converting  # rows not converted yet
    pair.check()  # read while converting: converted on the fly
    pair.both("UPDATE items SET qty = '77' WHERE id = 4")  # a write converts its row
    pair.both("INSERT INTO items VALUES (30, 'n2', '5', NULL)")
    pair.db.execute("CREATE VIEW by_qty AS SELECT id FROM items WHERE qty = ?")
    pair.views["by_qty"] = "SELECT id FROM items WHERE qty = ?"
    pair.keys["by_qty"] = [("20",), ("77",), ("5",), ("40",)]
    pair.check()
    pair.db.finish_conversions()
    assert not pair.db.catalog.table("items").converting
    pair.check()
    with pytest.raises(ProgramError, match="by_qty"):
        pair.db.execute("ALTER TABLE items MODIFY qty BIGINT")
    pair.db.execute("DROP VIEW by_qty")
    del pair.views["by_qty"]
    pair.retype("qty", "BIGINT", "INTEGER")
    pair.check()


def test_the_background_thread_converts_and_copies_on_its_own(tmp_path: Path) -> None:
    import time

    with rivulet.open(tmp_path) as db:
        db.execute(TABLE)
        db.table("items").insert_many([(i, "n", i, None) for i in range(5000)])
        db.execute("ALTER TABLE items MODIFY qty VARCHAR(12)")
        db.execute("CREATE TABLE names AS SELECT id, name FROM items")
        deadline = time.monotonic() + 60
        while ((db.catalog.table("items").converting or db.catalog.copies)
               and time.monotonic() < deadline):
            time.sleep(0.05)
        assert not db.catalog.table("items").converting and not db.catalog.copies
        conn = sqlite3.connect(tmp_path / "rivulet.db")
        assert conn.execute("SELECT COUNT(*) FROM names").fetchone() == (5000,)
        assert conn.execute(
            "SELECT COUNT(*) FROM items WHERE qty = CAST(id AS TEXT)").fetchone() == (5000,)
        conn.close()


def test_a_background_chunk_reads_and_writes_its_rows_in_a_few_statements(
        tmp_path: Path) -> None:
    """A chunk of 1,000 rows (or keys) costs a few SQLite statements, not a step per row:
    each step releases the GIL, and a thread that wants it back while a reader thread
    keeps it waits up to the switch interval (rivulet/storage/sqlite_bulk.py)."""
    with rivulet.open(tmp_path, background_migration=False) as db:
        db.execute(TABLE)
        db.table("items").insert_many([(i, f"n{i % 1500}", i, None) for i in range(3000)])
        db.execute("ALTER TABLE items MODIFY qty VARCHAR(12)")
        db.execute("CREATE TABLE per_name AS SELECT name, COUNT(*) AS n FROM items GROUP BY name")
        lazy = db.core.lazy
        statements: list[str] = []
        lazy.storage.conn.set_trace_callback(statements.append)
        try:
            assert lazy.convert_chunk("items")
            converted = len(statements)
            statements.clear()
            assert lazy.copy_chunk("per_name")
            copied = len(statements)
        finally:
            lazy.storage.conn.set_trace_callback(None)
        # (rows go in by statements of a power of two rows: 1,000 is 6 of them)
        assert converted <= 12 and copied <= 30, (converted, copied)
        db.finish_conversions()
        conn = sqlite3.connect(tmp_path / "rivulet.db")
        try:
            assert conn.execute("SELECT COUNT(*) FROM items WHERE qty = CAST(id AS TEXT)"
                                ).fetchone() == (3000,)
            assert conn.execute("SELECT COUNT(*), SUM(n) FROM per_name").fetchone() == (1500, 3000)
        finally:
            conn.close()


def test_the_background_work_finishes_while_a_reader_thread_keeps_the_gil(
        tmp_path: Path) -> None:
    """A thread looping over cached view lookups (pure Python, never releasing the GIL)
    does not starve the background conversion and copy (bench.schema_change's reader: the
    conversion of 300,000 rows took 160 s). The bound is generous: progress, not speed."""
    import time

    with rivulet.open(tmp_path) as db:
        db.execute(TABLE)
        db.execute("CREATE VIEW by_id AS SELECT id, name FROM items WHERE id = ?")
        db.table("items").insert_many([(i, f"n{i % 700}", i, None) for i in range(20_000)])
        view = db.view("by_id")
        view.lookup_many(list(range(100)))
        stop = threading.Event()
        reads = [0]

        def reader() -> None:
            while not stop.is_set():
                view.lookup(reads[0] % 100)
                reads[0] += 1

        thread = threading.Thread(target=reader)
        thread.start()
        try:
            db.execute("ALTER TABLE items MODIFY qty VARCHAR(12)")
            db.execute("CREATE TABLE per_name AS SELECT name, COUNT(*) AS n FROM items "
                       "GROUP BY name")
            deadline = time.monotonic() + 120
            while ((db.catalog.table("items").converting or db.catalog.copies)
                   and time.monotonic() < deadline):
                time.sleep(0.05)
        finally:
            stop.set()
            thread.join()
        assert not db.catalog.table("items").converting and not db.catalog.copies
        assert reads[0] > 0
        conn = sqlite3.connect(tmp_path / "rivulet.db")
        try:
            assert conn.execute("SELECT COUNT(*) FROM items WHERE qty = CAST(id AS TEXT)"
                                ).fetchone() == (20_000,)
            assert conn.execute("SELECT COUNT(*), SUM(n) FROM per_name").fetchone() == (700,
                                                                                        20_000)
        finally:
            conn.close()


def test_an_integer_becomes_the_text_cast_gives_it() -> None:
    """The conversion of INT values to text (a shortcut past CAST's general way, taken for
    every row of a converted table) gives CAST(v AS CHAR)'s text, cut to the length."""
    from rivulet.migrate.alter import value_conversion
    from rivulet.values import CASTS
    from rivulet.values.schema import INT, STR, Column

    convert = value_conversion(Column("q", INT, True), Column("q", STR, True, length=5))
    values = [0, 1, -1, 9, 10, -99, 12345, 123456, -12345, 2**31, 2**63 - 1, -(2**63),
              2**64 - 1, True, False, None]
    for v in values:
        cast = CASTS["cast_str"](v)
        assert convert(v) == (None if cast is None else cast[:5]), v


def test_a_join_view_keeps_answering_when_a_column_it_does_not_read_goes(tmp_path: Path) -> None:
    """The join's indexes hold only the columns the view reads (column pruning), so the
    others may be dropped or converted under it; the ones it reads may not."""
    lite = sqlite3.connect(":memory:", isolation_level=None)
    with rivulet.open(tmp_path) as db:
        for conn in (db, lite):
            conn.execute("CREATE TABLE stories (id INT PRIMARY KEY, title VARCHAR(40), score INT, "
                         "url VARCHAR(20))")
            conn.execute("CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL)")
            conn.execute(
                "INSERT INTO stories VALUES (1, 'a', 5, 'u'), (2, 'b', 6, 'v'), (3, 'c', 7, NULL)")
            conn.execute("INSERT INTO votes VALUES (1, 1), (2, 1), (3, 2)")
        sql = ("SELECT stories.id, stories.title, COUNT(votes.user_id) AS n FROM stories LEFT JOIN "
               "votes ON stories.id = votes.story_id WHERE stories.id = ? "
               "GROUP BY stories.id, stories.title")
        db.execute(f"CREATE VIEW vc AS {sql}")
        for s in (1, 2, 3):
            db.view("vc").lookup(s)  # state filled before the change
        db.execute("ALTER TABLE stories DROP COLUMN url, MODIFY score VARCHAR(5)")
        lite.execute("ALTER TABLE stories DROP COLUMN url")
        for conn in (db, lite):
            conn.execute("UPDATE stories SET title = 'z', score = '9' WHERE id = 1")
            conn.execute("DELETE FROM stories WHERE id = 2")
            conn.execute("INSERT INTO votes VALUES (4, 1)")
        db.settle()
        for s in (1, 2, 3):
            assert_same_answer(sql, (s,), db.view("vc").lookup(s), lite, what=f"vc({s})")
        with pytest.raises(ProgramError, match="stories.title is read by view"):
            db.execute("ALTER TABLE stories DROP COLUMN title")
    lite.close()


def test_widening_a_column_a_view_reads_needs_no_conversion(pair: AlterPair) -> None:
    pair.db.execute("ALTER TABLE items MODIFY name VARCHAR(200) NOT NULL")
    assert not pair.db.catalog.table("items").converting
    pair.both("INSERT INTO items VALUES (40, ?, 1, NULL)", ("x" * 100,))
    pair.keys["by_name"].append(("x" * 100,))
    pair.check()


def test_narrowing_converts_as_mysql_does_outside_strict_mode(tmp_path: Path) -> None:
    with rivulet.open(tmp_path) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), n BIGINT)")
        db.execute(
            "INSERT INTO t VALUES (1, 'abcdefgh', 5000000000), (2, '12x', -7), (3, NULL, NULL)")
        db.execute("ALTER TABLE t MODIFY v VARCHAR(3), MODIFY n INT")
        want = [(1, "abc", 2**31 - 1), (2, "12x", -7), (3, None, None)]
        assert sorted(db.query("SELECT * FROM t")) == want
        db.finish_conversions()
        assert sorted(db.query("SELECT id, v, n FROM t WHERE id IN (?, ?, ?)", [1, 2, 3])) == want
        db.execute("ALTER TABLE t MODIFY v INT")  # '12x' -> 12, 'abc' -> 0, as CAST does
        assert sorted(db.query("SELECT id, v FROM t")) == [(1, 0), (2, 12), (3, None)]


def test_a_changed_schema_survives_reopening_with_old_views_intact(tmp_path: Path) -> None:
    p = AlterPair(tmp_path / "db")
    try:
        for i in range(12):
            p.both("INSERT INTO items VALUES (?, ?, ?, ?)", (i, f"n{i % 4}", i, None))
        p.alter("ALTER TABLE items ADD COLUMN extra INT DEFAULT 3")
        p.columns["extra"] = "INTEGER"
        p.alter("ALTER TABLE items DROP COLUMN note")
        del p.columns["note"]
        p.retype("qty", "VARCHAR(10)", "TEXT")
        p.db.close()
        p.db = rivulet.open(tmp_path / "db")
        p.check()
        p.both("INSERT INTO items VALUES (99, 'n1', '4', 8)")
        p.check()
    finally:
        p.close()


def test_rejected_changes_name_the_problem_and_change_nothing(pair: AlterPair) -> None:
    before = [(s.kind, s.sql) for s in pair.db.storage.program()]
    schema = pair.db.catalog.table("items")
    cases = {
        "ALTER TABLE items DROP COLUMN id": "primary key column 'id'",
        "ALTER TABLE items DROP COLUMN name": "read by view",
        "ALTER TABLE items MODIFY name INT NOT NULL": "read by view",
        "ALTER TABLE items DROP COLUMN nope": "no column 'nope'",
        "ALTER TABLE items ADD COLUMN qty INT": "already has a column 'qty'",
        "ALTER TABLE items ADD COLUMN _rivulet_x INT": "reserved",
        "ALTER TABLE items MODIFY qty INT NOT NULL": "cannot become NOT NULL",
        "ALTER TABLE items RENAME TO other, ADD COLUMN x INT": "RENAME TO beside other",
        "ALTER TABLE items ADD COLUMN x INT, DROP COLUMN nope": "no column 'nope'",
        "ALTER TABLE nothing ADD COLUMN x INT": "unknown table",
    }
    for sql, message in cases.items():
        with pytest.raises(rivulet.RivuletError, match=message):
            pair.db.execute(sql)
    assert [(s.kind, s.sql) for s in pair.db.storage.program()] == before
    assert pair.db.catalog.table("items") is schema
    pair.check()


def test_writes_prepared_before_a_change_run_on_the_table_as_it_is(tmp_path: Path) -> None:
    """A statement bound before an ALTER that commits after it is bound again (MySQL would
    run it on the table as it is then); rows inserted through a table handle are carried
    over; a statement naming a column that is gone fails alone, naming it."""
    from rivulet.bind.statements import bind_text

    with rivulet.open(tmp_path) as db:
        db.execute(TABLE)
        table = db.table("items")  # bound to the first version
        update = db.writer(bind_text("UPDATE items SET qty = ? WHERE id = ?", db.catalog))
        gone = db.writer(bind_text("UPDATE items SET note = ? WHERE id = ?", db.catalog))
        db.execute("ALTER TABLE items ADD COLUMN extra INT DEFAULT 7 FIRST, DROP COLUMN note")
        table.insert_many([(1, "a", 2, "dropped")])
        db.settle()
        assert db.query("SELECT * FROM items") == [(7, 1, "a", 2)]
        assert db.submit(update([5, 1])) == 1
        with pytest.raises(SqlError, match="note"):
            db.submit(gone(["x", 1]))
        db.settle()
        assert db.query("SELECT * FROM items") == [(7, 1, "a", 5)]


ACTIONS = hs.sampled_from(["add", "drop", "rename", "retype", "insert", "update", "delete",
                           "view", "unview"])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=hs.lists(hs.tuples(ACTIONS, hs.integers(0, 30)), min_size=1, max_size=14),
       partial=hs.booleans())
def test_random_changes_and_writes_agree_with_sqlite(tmp_path_factory: pytest.TempPathFactory,
                                                     actions: list, partial: bool) -> None:
    p = AlterPair(tmp_path_factory.mktemp("alter") / "db", partial=partial)
    try:
        for i in range(8):
            p.both("INSERT INTO items VALUES (?, ?, ?, ?)", (i, f"n{i % 4}", i * 3, None))
        added = 0
        qty_is_text = False
        new_views: dict[str, str] = {}
        for action, n in actions:
            extra = [c for c in p.columns if c.startswith("x")]
            if action == "add":
                added += 1
                p.alter(f"ALTER TABLE items ADD COLUMN x{added} INT DEFAULT {n}")
                p.columns[f"x{added}"] = "INTEGER"
            elif action == "drop" and extra:
                column = extra[n % len(extra)]
                readers = [v for v, sql in new_views.items() if column in sql]
                if readers:
                    with pytest.raises(ProgramError, match="read by view"):
                        p.db.execute(f"ALTER TABLE items DROP COLUMN {column}")
                    continue
                p.alter(f"ALTER TABLE items DROP COLUMN {column}")
                del p.columns[column]
            elif action == "rename":
                old, new = ("note", "memo") if "note" in p.columns else ("memo", "note")
                p.alter(f"ALTER TABLE items RENAME COLUMN {old} TO {new}")
                p.columns = {(new if c == old else c): t for c, t in p.columns.items()}
                for v, sql in new_views.items():
                    p.views[v] = new_views[v] = sql.replace(old, new)
            elif action == "retype":
                if any("qty" in sql for sql in new_views.values()):
                    continue
                qty_is_text = not qty_is_text
                p.retype("qty", "VARCHAR(12)" if qty_is_text else "INT",
                         "TEXT" if qty_is_text else "INTEGER")
            elif action == "insert":
                key = 100 + n
                if p.lite.execute("SELECT 1 FROM items WHERE id = ?", (key,)).fetchone():
                    p.both("UPDATE items SET name = ? WHERE id = ?", (f"n{(n + 1) % 4}", key))
                else:
                    values = [key, f"n{n % 4}", str(n) if qty_is_text else n, None]
                    values += [n] * (len(p.columns) - 4)
                    p.both(f"INSERT INTO items VALUES ({', '.join('?' * len(values))})",
                           tuple(values))
            elif action == "update":
                value = str(n) if qty_is_text else n
                p.both("UPDATE items SET qty = ?, name = ? WHERE id % 3 = ?",
                       (value, f"n{n % 4}", n % 3))
            elif action == "delete":
                p.both("DELETE FROM items WHERE id = ?", (n % 10,))
            elif action == "view" and extra:
                column = extra[n % len(extra)]
                name = f"v_{column}"
                if name not in new_views:
                    sql = f"SELECT id, {column} FROM items WHERE {column} = ?"
                    p.db.execute(f"CREATE VIEW {name} AS {sql}")
                    p.views[name] = new_views[name] = sql
                    p.keys[name] = [(k,) for k in range(0, 31, 5)]
            elif action == "unview" and new_views:
                name = sorted(new_views)[n % len(new_views)]
                p.db.execute(f"DROP VIEW {name}")
                del new_views[name], p.views[name]
            p.check()
        p.db.finish_conversions()
        p.check()
    finally:
        p.close()


def test_changes_while_other_threads_write_and_read(tmp_path: Path) -> None:
    """Writers insert and update, readers read the old views, while the main thread
    alters the table again and again; at the end every row is there exactly once, and
    every view equals SQLite over rivulet's own stored rows."""
    db = rivulet.open(tmp_path)
    db.execute(TABLE)
    for name, sql in OLD_VIEWS.items():
        db.execute(f"CREATE VIEW {name} AS {sql}")
    done = threading.Event()
    acknowledged: list[int] = []
    errors: list[BaseException] = []

    def writer(start: int) -> None:
        i = start
        try:
            while not done.is_set():
                db.execute("INSERT INTO items (id, name, qty) VALUES (?, ?, ?)",
                           (i, f"n{i % 4}", i))
                acknowledged.append(i)
                db.execute("UPDATE items SET name = ? WHERE id = ?", (f"n{(i + 1) % 4}", i - 2))
                i += 2
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    def reader() -> None:
        try:
            while not done.is_set():
                for key in range(0, 50, 7):
                    db.view("by_id").lookup(key)
                db.view("per_name").lookup()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(s,)) for s in (0, 1)]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    try:
        for step in range(6):
            db.execute(f"ALTER TABLE items ADD COLUMN c{step} INT DEFAULT {step}")
            db.execute("ALTER TABLE items MODIFY qty "
                       + ("VARCHAR(12)" if step % 2 == 0 else "INT"))
            if step >= 2:
                db.execute(f"ALTER TABLE items DROP COLUMN c{step - 2}")
    finally:
        done.set()
        for t in threads:
            t.join()
    assert not errors, errors
    db.finish_conversions()
    db.settle()
    ids = [r[0] for r in db.query("SELECT id FROM items")]
    assert sorted(ids) == sorted(acknowledged)
    lite = sqlite3.connect(db.path / "rivulet.db")
    try:
        for name, sql in OLD_VIEWS.items():
            for key in OLD_KEYS[name] + ([(k,) for k in range(40)] if name == "by_id" else []):
                assert_same_answer(sql, key, db.view(name).lookup(*key), lite, what=name)
        stored = lite.execute("SELECT id, qty FROM items").fetchall()
        assert same_multiset(db.query("SELECT id, qty FROM items"),
                             [(i, int(q)) for i, q in stored])
    finally:
        lite.close()
        db.close()


CRASHING = textwrap.dedent("""
    import sys, rivulet
    # (no background thread: its chunks are sized by time, and the count below is of
    # finish_conversions' chunks of 1,000 rows)
    db = rivulet.open(sys.argv[1], background_migration=False)
    db.execute("ALTER TABLE items MODIFY qty VARCHAR(12)")
    db.finish_conversions()  # dies in its third chunk (RIVULET_FAULTS)
    print("not killed")
""")


def test_a_crash_in_the_middle_of_a_conversion_resumes_where_it_stopped(tmp_path: Path) -> None:
    rows = 3500
    with rivulet.open(tmp_path) as db:
        db.execute(TABLE)
        db.execute("CREATE VIEW by_id AS SELECT id, name FROM items WHERE id = ?")
        db.table("items").insert_many([(i, f"n{i % 4}", i, None) for i in range(rows)])
    env = {**os.environ, "RIVULET_FAULTS": "schema_conversion_chunk:3"}
    done = subprocess.run([sys.executable, "-c", CRASHING, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stdout + done.stderr
    assert "rivulet-fault: schema_conversion_chunk 3" in done.stderr
    # Two chunks committed, the third rolled back with the process: no row half-converted.
    conn = sqlite3.connect(tmp_path / "rivulet.db")
    source = [c[1] for c in conn.execute("PRAGMA table_info(items)") if "_old_" in c[1]]
    assert len(source) == 1
    pending = conn.execute(
        f'SELECT COUNT(*) FROM items WHERE "{source[0]}" IS NOT NULL').fetchone()[0]
    converted = conn.execute(
        f'SELECT COUNT(*) FROM items WHERE "{source[0]}" IS NULL').fetchone()[0]
    conn.close()
    assert (pending, converted) == (rows - 2000, 2000)
    with rivulet.open(tmp_path) as db:  # the ALTER is durable; conversion resumes at open
        assert db.query("SELECT qty FROM items WHERE id = ?", [3000]) == [("3000",)]
        db.finish_conversions()
        assert sorted(db.query("SELECT id, qty FROM items")) == [(i, str(i)) for i in range(rows)]
        assert db.view("by_id").lookup(7) == [(7, "n3")]
    conn = sqlite3.connect(tmp_path / "rivulet.db")
    assert conn.execute(
        f'SELECT COUNT(*) FROM items WHERE "{source[0]}" IS NOT NULL').fetchone()[0] == 0
    conn.close()


@pytest.mark.spark
def test_a_spark_snapshot_reads_an_altered_table_as_it_is_now(tmp_path: Path) -> None:
    from rivulet.spark.snapshot import load_snapshot, take_snapshot

    with rivulet.open(tmp_path / "db", background_migration=False) as db:
        db.execute(TABLE)
        db.table("items").insert_many([(i, "n", i, "x") for i in range(50)])
        db.execute("ALTER TABLE items DROP COLUMN note, ADD COLUMN w INT DEFAULT 2, "
                   "MODIFY qty VARCHAR(5)")
        assert db.catalog.table("items").converting
        snapshot = take_snapshot(db, tmp_path / "snap")
    schema = load_snapshot(tmp_path / "snap").schemas["items"]
    assert [c.name for c in schema.columns] == ["id", "name", "qty", "w"]
    import pyarrow.parquet as pq

    table = pq.read_table(snapshot.tables["items"]).to_pylist()
    assert sorted((r["id"], r["qty"], r["w"]) for r in table) == [(i, str(i), 2) for i in range(50)]


# --------------------------------------------------------------------------- splits

VOTES = ("CREATE TABLE votes (id INT PRIMARY KEY, user_id INT NOT NULL, story_id INT NOT NULL, "
         "w INT)")
SPLITS = {
    "per_story": "SELECT story_id, COUNT(*) AS n, SUM(w) AS total FROM votes GROUP BY story_id",
    "heavy": "SELECT id, user_id, w * 2 AS w2 FROM votes WHERE w > 0",
    "per_pair": "SELECT user_id, story_id, MAX(w) AS top FROM votes WHERE id % 2 = 0 "
                "GROUP BY user_id, story_id",
}
SPLIT_KEYS = {"per_story": ("story_id",), "heavy": ("id",), "per_pair": ("user_id", "story_id")}
SPLIT_VALUE = {"per_story": "n", "heavy": "w2", "per_pair": "top"}


def _split_pair(tmp_path: Path, rows: int = 300) -> tuple[rivulet.Database, sqlite3.Connection]:
    db = rivulet.open(tmp_path, background_migration=False)
    lite = sqlite3.connect(":memory:", isolation_level=None)
    db.execute(VOTES)
    lite.execute(VOTES)
    data = [(i, i % 7, i % 13, i % 4) for i in range(rows)]
    db.table("votes").insert_many(data)
    lite.executemany("INSERT INTO votes VALUES (?, ?, ?, ?)", data)
    return db, lite


def _check_split(db: rivulet.Database, lite: sqlite3.Connection, name: str) -> None:
    db.settle()
    key = SPLIT_KEYS[name]
    where = " AND ".join(f"{k} = ?" for k in key)
    for params in lite.execute(f"SELECT DISTINCT {', '.join(key)} FROM {name} LIMIT 5").fetchall():
        sql = f"SELECT * FROM {name} WHERE {where}"
        assert_same_answer(sql, params, db.query(sql, list(params)), lite, what=f"{name}{params}")
    assert_same_answer(f"SELECT * FROM {name}", (), db.query(f"SELECT * FROM {name}"), lite,
                       what=f"all of {name}")


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_a_split_holds_the_rows_of_its_moment_whatever_happens_to_either_table(
        tmp_path: Path, name: str) -> None:
    db, lite = _split_pair(tmp_path)
    try:
        for conn in (db, lite):
            conn.execute(f"CREATE TABLE {name} AS {SPLITS[name]}")
        assert name in db.catalog.copies  # nothing copied yet (no background work)
        # Writes to the old table after the split must not reach the new one: each
        # copies the keys it touches first.
        for conn in (db, lite):
            conn.execute("INSERT INTO votes VALUES (1000, 1, 5, 3)")
            conn.execute("UPDATE votes SET w = w + 10, story_id = 2 WHERE id % 5 = 0")
            conn.execute("DELETE FROM votes WHERE user_id = 3")
        _check_split(db, lite, name)
        # Writes to the new table: by key, then by a scan (which copies everything first).
        key = SPLIT_KEYS[name]
        value = SPLIT_VALUE[name]
        where = " AND ".join(f"{k} = ?" for k in key)
        first, second = lite.execute(f"SELECT {', '.join(key)} FROM {name} LIMIT 2").fetchall()
        for conn in (db, lite):
            conn.execute(f"DELETE FROM {name} WHERE {where}", first)
            conn.execute(f"UPDATE {name} SET {value} = 77 WHERE {where}", second)
        _check_split(db, lite, name)
        _check_split(db, lite, name)
        db.finish_conversions()
        assert name not in db.catalog.copies
        assert not db.storage.has_table(f"_rivulet_copied_{name}")
        _check_split(db, lite, name)
        db.close()
        db = rivulet.open(tmp_path)
        _check_split(db, lite, name)
    finally:
        db.close()
        lite.close()


@pytest.mark.parametrize("name", sorted(SPLITS))
def test_a_write_that_scans_a_split_table_copies_it_first(tmp_path: Path, name: str) -> None:
    db, lite = _split_pair(tmp_path)
    try:
        value = SPLIT_VALUE[name]
        for conn in (db, lite):
            conn.execute(f"CREATE TABLE {name} AS {SPLITS[name]}")
            conn.execute(f"UPDATE {name} SET {value} = 5 WHERE {value} < 30")
            conn.execute(f"DELETE FROM {name} WHERE {value} > 60")
        _check_split(db, lite, name)
    finally:
        db.close()
        lite.close()


def test_views_on_a_split_table_read_it_before_it_is_copied(tmp_path: Path) -> None:
    db, lite = _split_pair(tmp_path)
    try:
        for conn in (db, lite):
            conn.execute(f"CREATE TABLE per_story AS {SPLITS['per_story']}")
        db.execute("CREATE VIEW busy AS SELECT story_id, n FROM per_story WHERE story_id = ?")
        db.execute("CREATE VIEW big AS SELECT COUNT(*) AS c FROM per_story WHERE n > 20")
        for s in range(13):
            assert_same_answer("SELECT story_id, n FROM per_story WHERE story_id = ?", (s,),
                               db.view("busy").lookup(s), lite, what=f"busy({s})")
        for conn in (db, lite):
            conn.execute("INSERT INTO votes VALUES (5000, 1, 4, 1)")  # not in the split
            conn.execute("UPDATE per_story SET n = 0 WHERE story_id = 4")
        db.settle()
        assert db.view("busy").lookup(4) == [(4, 0)]
        assert_same_answer("SELECT COUNT(*) AS c FROM per_story WHERE n > 20", (),
                           db.view("big").lookup(), lite, what="big")
    finally:
        db.close()
        lite.close()


def test_a_split_is_rejected_with_a_reason_and_changes_nothing(tmp_path: Path) -> None:
    db, lite = _split_pair(tmp_path, rows=10)
    before = [(s.kind, s.sql) for s in db.storage.program()]
    cases = {
        "CREATE TABLE x AS SELECT user_id FROM votes": "primary key of 'votes'",
        "CREATE TABLE x AS SELECT COUNT(*) AS c FROM votes GROUP BY user_id": "GROUP BY columns",
        "CREATE TABLE x AS SELECT * FROM votes": r"\*",
        "CREATE TABLE x AS SELECT v.id FROM votes v JOIN votes w ON v.id = w.id": "JOIN",
        "CREATE TABLE x AS SELECT id FROM nope": "unknown table",
        "CREATE TABLE votes AS SELECT id FROM votes": "already exists",
        "CREATE TABLE x AS SELECT id FROM votes ORDER BY id LIMIT 3": "ORDER",
    }
    try:
        for sql, message in cases.items():
            with pytest.raises(rivulet.RivuletError, match=message):
                db.execute(sql)
        assert [(s.kind, s.sql) for s in db.storage.program()] == before
        assert db.catalog.table("x") is None
    finally:
        db.close()
        lite.close()


SPLIT_CRASH = textwrap.dedent("""
    import sys, rivulet
    db = rivulet.open(sys.argv[1], background_migration=False)
    db.execute("CREATE TABLE heavy AS SELECT id, user_id, w * 2 AS w2 FROM votes WHERE w > 0")
    db.execute("INSERT INTO votes VALUES (100000, 1, 1, 9)")  # after the split: not copied
    db.finish_conversions()  # dies in its third chunk (RIVULET_FAULTS)
    print("not killed")
""")


def test_a_crash_in_the_middle_of_a_split_resumes_with_every_key_copied_once(
        tmp_path: Path) -> None:
    rows = 3500
    db, lite = _split_pair(tmp_path, rows=rows)
    db.close()
    lite.execute(f"CREATE TABLE heavy AS {SPLITS['heavy']}")
    env = {**os.environ, "RIVULET_FAULTS": "schema_conversion_chunk:3"}
    done = subprocess.run([sys.executable, "-c", SPLIT_CRASH, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stdout + done.stderr
    conn = sqlite3.connect(tmp_path / "rivulet.db")
    copied = conn.execute("SELECT COUNT(*) FROM _rivulet_copied_heavy").fetchone()[0]
    conn.close()
    # Two chunks committed, the third rolled back with the process; and the key the
    # INSERT into votes touched, copied (as nothing) before the insert.
    assert copied == 2001
    with rivulet.open(tmp_path) as db:
        db.finish_conversions()
        assert_same_answer("SELECT * FROM heavy", (), db.query("SELECT * FROM heavy"), lite,
                           what="heavy after the crash")
        assert db.query("SELECT COUNT(*) FROM votes") == [(rows + 1,)]
    lite.close()


SPLIT_OPS = hs.sampled_from(["source_insert", "source_update", "source_delete", "target_update",
                             "target_delete", "read_key", "read_all", "chunk"])


@settings(max_examples=30, deadline=None)
@given(name=hs.sampled_from(sorted(SPLITS)),
       ops=hs.lists(hs.tuples(SPLIT_OPS, hs.integers(0, 40)), min_size=1, max_size=20))
def test_random_interleavings_of_a_split_agree_with_sqlite(name: str, ops: list) -> None:
    """Writes to either table, reads and background chunks in any order: the split table
    is always SQLite's CREATE TABLE ... AS SELECT taken at the split."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        db, lite = _split_pair(Path(directory), rows=120)
        try:
            for conn in (db, lite):
                conn.execute(f"CREATE TABLE {name} AS {SPLITS[name]}")
            key = SPLIT_KEYS[name]
            where = " AND ".join(f"{k} = ?" for k in key)
            value = SPLIT_VALUE[name]
            for op, n in ops:
                params = {"story_id": n % 13, "user_id": n % 7, "id": n * 3}
                pk = tuple(params[k] for k in key)
                if op == "source_insert":
                    statement = ("INSERT INTO votes VALUES (?, ?, ?, ?)",
                                 (1000 + n, n % 7, n % 13, n % 4))
                    if lite.execute("SELECT 1 FROM votes WHERE id = ?", (1000 + n,)).fetchone():
                        continue
                elif op == "source_update":
                    statement = ("UPDATE votes SET w = w + 1, story_id = ? WHERE user_id = ?",
                                 (n % 13, n % 7))
                elif op == "source_delete":
                    statement = ("DELETE FROM votes WHERE story_id = ?", (n % 13,))
                elif op == "target_update":
                    statement = (f"UPDATE {name} SET {value} = ? WHERE {where}", (n, *pk))
                elif op == "target_delete":
                    statement = (f"DELETE FROM {name} WHERE {where}", pk)
                elif op == "read_key":
                    db.settle()
                    sql = f"SELECT * FROM {name} WHERE {where}"
                    assert_same_answer(sql, pk, db.query(sql, list(pk)), lite, what=f"{name}{pk}")
                    continue
                elif op == "read_all":
                    _check_split(db, lite, name)
                    continue
                else:
                    db.core.lazy.copy_chunk(name, limit=3)  # a background chunk
                    continue
                for conn in (db, lite):
                    conn.execute(*statement)
            _check_split(db, lite, name)
            db.finish_conversions()
            _check_split(db, lite, name)
        finally:
            db.close()
            lite.close()


def test_schema_changes_over_the_mysql_protocol(tmp_path: Path) -> None:
    """An application alters its tables through its MySQL driver: the statements it
    prepared before keep working, and SHOW/DESCRIBE show the new columns."""
    import pymysql

    from rivulet.server.mysql.server import ServerThread

    with rivulet.open(tmp_path) as db:
        db.execute(TABLE)
        db.table("items").insert_many([(i, f"n{i % 3}", i, None) for i in range(20)])
        server = ServerThread(db, port=0)
        try:
            conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="",
                                   database="rivulet", autocommit=True)
            with conn.cursor() as cur:
                cur.execute("SELECT name FROM items WHERE id = %s", (4,))
                assert cur.fetchall() == (("n1",),)
                cur.execute("ALTER TABLE items ADD COLUMN score INT NOT NULL DEFAULT 1, "
                            "MODIFY qty VARCHAR(10)")
                cur.execute("SELECT name FROM items WHERE id = %s", (5,))  # prepared before
                assert cur.fetchall() == (("n2",),)
                cur.execute("SELECT qty, score FROM items WHERE id = %s", (5,))
                assert cur.fetchall() == (("5", 1),)
                cur.execute("INSERT INTO items (id, name, qty, score) VALUES (%s, %s, %s, %s)",
                            (100, "new", "x", 9))
                cur.execute("CREATE TABLE per_name AS SELECT name, COUNT(*) AS n FROM items "
                            "GROUP BY name")
                cur.execute("SELECT n FROM per_name WHERE name = %s", ("n0",))
                assert cur.fetchall() == ((7,),)
                cur.execute("DESCRIBE items")
                assert [r[0] for r in cur.fetchall()] == ["id", "name", "qty", "note", "score"]
                with pytest.raises(pymysql.MySQLError, match="primary key"):
                    cur.execute("ALTER TABLE items DROP COLUMN id")
            conn.close()
        finally:
            server.stop()


@pytest.mark.spark
def test_verify_on_spark_checks_views_planned_before_a_change(tmp_path: Path, spark) -> None:
    from rivulet.pipeline.verify import verify

    with rivulet.open(tmp_path / "db") as db:
        db.execute(TABLE)
        for name, sql in OLD_VIEWS.items():
            db.execute(f"CREATE VIEW {name} AS {sql}")
        db.table("items").insert_many([(i, f"n{i % 4}", i, "x") for i in range(40)])
        db.execute("ALTER TABLE items DROP COLUMN note, ADD COLUMN w INT DEFAULT 2 FIRST")
        db.execute("CREATE VIEW by_w AS SELECT id FROM items WHERE w = ?")
        db.execute("INSERT INTO items VALUES (9, 100, 'n1', 3)")  # w, id, name, qty
        db.settle()
        for key in range(5):
            db.view("by_id").lookup(key)
        db.view("per_name").lookup()
        db.view("by_w").lookup(2)
        report = verify(db, spark=spark)
        assert report.ok, report
        assert {v.view for v in report.views} >= {"by_id", "per_name", "by_w"}
