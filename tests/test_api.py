"""The Python API surface (see the API brief): open/close, execute, query, views, tables.

Answers are compared with SQLite (in memory) running the same query over the same rows
wherever the query is in the subset on which MySQL and SQLite agree.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from collections import Counter
from pathlib import Path

import pytest

import rivulet
from rivulet import ClosedError, ProgramError, RivuletError

SCHEMA = [
    "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL DEFAULT 'anon', "
    "n INT DEFAULT 7, g INT)",
    "CREATE TABLE u (id INT PRIMARY KEY, tid INT, score INT)",
]
T_ROWS = [(1, "a", 10, 1), (2, "b", 20, 1), (3, "c", 30, 2), (4, "d", None, 2), (5, "e", 50, None)]
U_ROWS = [(10, 1, 5), (11, 1, 6), (12, 3, 7), (13, 9, 8)]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "db"


@pytest.fixture
def db(path: Path):
    d = rivulet.open(path)
    for ddl in SCHEMA:
        d.execute(ddl)
    yield d
    d.close()


@pytest.fixture
def loaded(db):
    db.table("t").insert_many(T_ROWS)
    db.table("u").insert_many(U_ROWS)
    db.settle()
    return db


class Oracle:
    """SQLite over the same rows as a rivulet database (read back from it)."""

    def __init__(self, db: rivulet.Database) -> None:
        self.conn = sqlite3.connect(":memory:")
        for ddl in SCHEMA:
            self.conn.execute(ddl)
        for table in ("t", "u"):
            rows = db.query(f"SELECT * FROM {table}")
            marks = ", ".join("?" for _ in rows[0]) if rows else ""
            if rows:
                self.conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return [tuple(r) for r in self.conn.execute(sql, params).fetchall()]


def bag(rows: list[tuple]) -> Counter:
    return Counter(rows)


# --------------------------------------------------------------------------- open / close


def test_context_manager_closes_and_keeps_data(path):
    with rivulet.open(path) as db:
        assert isinstance(db, rivulet.Database)
        db.execute(SCHEMA[0])
        db.execute("INSERT INTO t VALUES (1, 'a', 1, 1)")
    with pytest.raises(ClosedError):
        db.query("SELECT id FROM t")
    with rivulet.open(path) as db:
        assert db.query("SELECT id, name FROM t") == [(1, "a")]


def test_context_manager_closes_on_exception(path):
    with pytest.raises(KeyError):
        with rivulet.open(path) as db:
            db.execute(SCHEMA[0])
            raise KeyError("boom")
    with pytest.raises(ClosedError):
        db.execute("INSERT INTO t VALUES (1, 'a', 1, 1)")
    with rivulet.open(path) as db:  # the directory is usable again
        db.execute("INSERT INTO t VALUES (1, 'a', 1, 1)")


# --------------------------------------------------------------------------- execute


def test_execute_returns_rowcounts(db):
    assert db.execute("INSERT INTO t VALUES (1, 'a', 1, 1), (2, 'b', 2, 1), (3, 'c', 3, 2)") == 3
    assert db.execute("INSERT INTO t (id, g) VALUES (?, ?)", (4, 2)) == 1
    assert db.execute("UPDATE t SET n = n + 100 WHERE g = ?", (1,)) == 2
    assert db.execute("UPDATE t SET n = 0 WHERE id = 999") == 0
    # MySQL counts rows *changed*: row 3 already has n = 3.
    assert db.execute("UPDATE t SET n = 3 WHERE g = 2") == 1
    assert db.execute("DELETE FROM t WHERE n > ?", (100,)) == 2
    assert db.execute("DELETE FROM t WHERE id = 999") == 0
    assert db.execute("CREATE VIEW v AS SELECT id FROM t WHERE g = ?") == 0
    assert db.execute("SELECT id, n FROM t WHERE g = ?", (2,)) in ([(3, 3), (4, 3)],
                                                                   [(4, 3), (3, 3)])
    assert db.execute("DELETE FROM t") == 2
    db.settle()
    assert db.view("v").lookup(2) == []


def test_a_write_text_is_compiled_once_until_its_table_changes(db, monkeypatch):
    """``execute`` keeps the writer of an INSERT/UPDATE/DELETE text: the same text again
    is not parsed; after its table is altered (or dropped and made again) it is bound to
    the table as it is then."""
    from rivulet.bind import statements

    parsed = Counter()
    bind_text = statements.bind_text
    monkeypatch.setattr(statements, "bind_text",
                        lambda sql, catalog: parsed.update([sql]) or bind_text(sql, catalog))
    insert, update = "INSERT INTO u VALUES (?, ?, ?)", "UPDATE u SET score = ? WHERE id = ?"
    for i in range(3):
        assert db.execute(insert, (i, i, i)) == 1
        assert db.execute(update, (10 * i + 1, i)) == 1
    assert parsed == {insert: 1, update: 1}
    db.execute("ALTER TABLE u ADD COLUMN extra INT")
    with pytest.raises(RivuletError, match="4"):
        db.execute(insert, (3, 3, 3))  # u has four columns now
    assert db.execute(update, (5, 0)) == 1
    db.execute("DROP TABLE u")
    db.execute("CREATE TABLE u (id INT PRIMARY KEY, tid INT, score INT)")
    assert db.execute(insert, (7, 7, 7)) == 1
    assert db.query("SELECT id, tid, score FROM u") == [(7, 7, 7)]
    assert (parsed[insert], parsed[update]) == (3, 2)


def test_execute_select_equals_query(loaded):
    sql = "SELECT id, name FROM t WHERE g = ?"
    assert (bag(loaded.execute(sql, (1,))) == bag(loaded.query(sql, (1,)))
            == bag([(1, "a"), (2, "b")]))


def test_execute_script(db):
    db.execute_script(
        """
        CREATE VIEW by_g AS SELECT id FROM t WHERE g = ?;
        INSERT INTO t VALUES (1, 'a', 1, 1), (2, 'b', 2, 1);
        UPDATE t SET g = 2 WHERE id = 2;
        """
    )
    db.settle()
    assert db.view("by_g").lookup(1) == [(1,)]
    assert db.view("by_g").lookup(2) == [(2,)]


# --------------------------------------------------------------------------- query()


def test_query_caches_its_view(loaded):
    sql = "SELECT id, n FROM t WHERE g = ?"
    views = list(loaded.views())
    assert bag(loaded.query(sql, (1,))) == bag([(1, 10), (2, 20)])
    nodes = loaded.stats()["nodes"]
    assert loaded.views() == views  # ad-hoc views are not part of the program
    for g in (1, 2, 3):
        loaded.query(sql, (g,))
    assert loaded.stats()["nodes"] == nodes, "the same query text made another view"
    assert len(loaded.views()) == len(views)
    # The cached view is maintained: later writes show up in query() answers.
    loaded.execute("INSERT INTO t VALUES (6, 'f', 60, 1)")
    loaded.execute("UPDATE t SET n = 11 WHERE id = 1")
    loaded.execute("DELETE FROM t WHERE id = 2")
    loaded.settle()
    assert bag(loaded.query(sql, (1,))) == bag([(1, 11), (6, 60)])
    assert loaded.stats()["nodes"] == nodes


def test_query_in_list_any_length_shares_one_view(loaded):
    a = loaded.query("SELECT id, name FROM t WHERE id IN (?, ?)", (1, 2))
    nodes = loaded.stats()["nodes"]
    b = loaded.query("SELECT id, name FROM t WHERE id IN (?, ?, ?)", (1, 3, 5))
    c = loaded.query("SELECT id, name FROM t WHERE id IN (?, ?)", (4, 99, 3))
    assert bag(a) == bag([(1, "a"), (2, "b")])
    assert bag(b) == bag([(1, "a"), (3, "c"), (5, "e")])
    assert bag(c) == bag([(4, "d"), (3, "c")])
    assert loaded.stats()["nodes"] == nodes


def test_query_answers_intersect_and_except(loaded):
    # They are SELECTs (tests/test_set_operations.py checks them through writes).
    ids = {r[0] for r in loaded.query("SELECT id FROM t")}
    tids = {r[0] for r in loaded.query("SELECT tid FROM u")}
    assert bag(loaded.query("SELECT id FROM t INTERSECT SELECT tid FROM u")) == bag(
        [(v,) for v in ids & tids])
    assert bag(loaded.query("SELECT id FROM t EXCEPT SELECT tid FROM u")) == bag(
        [(v,) for v in ids - tids])
    assert bag(loaded.query("SELECT id FROM t UNION SELECT tid FROM u EXCEPT SELECT 1 FROM u")
               ) == bag([(v,) for v in (ids | tids) - {1}])


def test_query_without_parameters_reflects_writes(loaded):
    sql = "SELECT g, COUNT(*) FROM t GROUP BY g"
    assert bag(loaded.query(sql)) == bag([(1, 2), (2, 2), (None, 1)])
    loaded.table("t").insert_many([(6, "f", 1, 2), (7, "g", 1, 3)])
    loaded.settle()
    assert bag(loaded.query(sql)) == bag([(1, 2), (2, 3), (3, 1), (None, 1)])


# --------------------------------------------------------------------------- lookups


def test_lookup_in_list(loaded):
    loaded.execute("CREATE VIEW pick AS SELECT id, name FROM t WHERE id IN (?, ?)")
    view = loaded.view("pick")
    assert bag(view.lookup(1, 2)) == bag([(1, "a"), (2, "b")])
    assert bag(view.lookup(1, 2, 3)) == bag([(1, "a"), (2, "b"), (3, "c")])
    assert bag(view.lookup(4)) == bag([(4, "d")])
    assert bag(view.lookup(5, 5, 5)) == bag([(5, "e")])  # IN is a set: no duplicates
    assert view.lookup(99, 98) == []
    with pytest.raises(RivuletError):
        view.lookup()


def test_lookup_in_list_between_other_parameters(loaded):
    loaded.execute(
        "CREATE VIEW mid AS SELECT id FROM t WHERE g = ? AND id IN (?, ?) AND name = ?"
    )
    view = loaded.view("mid")
    oracle = Oracle(loaded)
    sql = "SELECT id FROM t WHERE g = ? AND id IN (?, ?, ?) AND name = ?"
    assert view.lookup(1, 1, 2, 3, "a") == oracle.rows(sql, (1, 1, 2, 3, "a")) == [(1,)]
    assert view.lookup(2, 3, 4, "d") == [(4,)]
    assert view.lookup(2, 3, 4, 5, "zz") == []


def test_lookup_in_list_over_aggregate(loaded):
    loaded.execute("CREATE VIEW cnt AS SELECT g, COUNT(*) FROM t WHERE g IN (?, ?) GROUP BY g")
    assert bag(loaded.view("cnt").lookup(1, 2, 3)) == bag([(1, 2), (2, 2)])


def test_lookup_null_parameter_matches_nothing(loaded):
    """``col = ?`` with ``?`` NULL is never true (SQL three-valued logic), on every read path."""
    loaded.execute("CREATE VIEW by_g AS SELECT id FROM t WHERE g = ?")
    loaded.execute("CREATE VIEW by_g_n AS SELECT id FROM t WHERE g = ? AND n = ?")
    loaded.execute("INSERT INTO t VALUES (6, 'f', NULL, NULL)")
    loaded.settle()
    oracle = Oracle(loaded)
    assert oracle.rows("SELECT id FROM t WHERE g = ?", (None,)) == []
    assert loaded.view("by_g").lookup(None) == []
    assert loaded.view("by_g").lookup_many([None]) == []
    assert loaded.view("by_g_n").lookup(None, None) == []
    assert loaded.query("SELECT id FROM t WHERE g = ?", (None,)) == []


def test_lookup_many(loaded):
    loaded.execute("CREATE VIEW by_g AS SELECT id, name FROM t WHERE g = ?")
    loaded.execute("CREATE VIEW by_g_name AS SELECT id FROM t WHERE g = ? AND name = ?")
    by_g = loaded.view("by_g")
    assert bag(by_g.lookup_many([1, 2])) == bag(by_g.lookup(1) + by_g.lookup(2))
    assert bag(by_g.lookup_many([(1,), 2, 77])) == bag([(1, "a"), (2, "b"), (3, "c"), (4, "d")])
    assert by_g.lookup_many([]) == []
    two = loaded.view("by_g_name")
    assert bag(two.lookup_many([(1, "a"), (2, "d"), (2, "a")])) == bag([(1,), (4,)])
    with pytest.raises(RivuletError):
        two.lookup_many([1])


def test_lookup_many_in_list_view(loaded):
    loaded.execute("CREATE VIEW pick AS SELECT id, name FROM t WHERE id IN (?, ?)")
    assert bag(loaded.view("pick").lookup_many([1, 3, 42])) == bag([(1, "a"), (3, "c")])


def test_range_lookups_match_sqlite(loaded):
    loaded.execute("CREATE VIEW btw AS SELECT id, n FROM t WHERE n BETWEEN ? AND ?")
    loaded.execute("CREATE VIEW above AS SELECT id FROM t WHERE g = ? AND n > ?")
    oracle = Oracle(loaded)
    for lo, hi in [(10, 30), (0, 100), (31, 49), (50, 50), (40, 10)]:
        assert bag(loaded.view("btw").lookup(lo, hi)) == bag(
            oracle.rows("SELECT id, n FROM t WHERE n BETWEEN ? AND ?", (lo, hi)))
    for g, n in [(1, 5), (1, 10), (2, 0), (2, 30)]:
        assert bag(loaded.view("above").lookup(g, n)) == bag(
            oracle.rows("SELECT id FROM t WHERE g = ? AND n > ?", (g, n)))


def test_scan_drops_hidden_columns(loaded):
    loaded.execute("CREATE VIEW by_g AS SELECT id, name FROM t WHERE g = ?")
    loaded.execute("CREATE VIEW top AS SELECT id FROM t WHERE g = ? ORDER BY n DESC LIMIT 1")
    loaded.execute("CREATE VIEW per_g AS SELECT g, COUNT(*) AS c FROM t GROUP BY g")
    oracle = Oracle(loaded)
    assert bag(loaded.view("by_g").scan()) == bag(
        oracle.rows("SELECT id, name FROM t WHERE g IS NOT NULL"))
    assert bag(loaded.view("top").scan()) == bag([(2,), (3,)])
    assert bag(loaded.view("per_g").scan()) == bag(
        oracle.rows("SELECT g, COUNT(*) FROM t GROUP BY g"))
    assert all(len(r) == 2 for r in loaded.view("by_g").scan())


def test_view_columns(loaded):
    loaded.execute("CREATE VIEW a AS SELECT id, name FROM t WHERE g = ?")
    loaded.execute(
        "CREATE VIEW b AS SELECT g AS grp, COUNT(*) AS c, SUM(n) AS total FROM t GROUP BY g")
    loaded.execute("CREATE VIEW c AS SELECT t.id, u.score AS s FROM t JOIN u ON t.id = u.tid "
                   "WHERE u.score > ?")
    loaded.execute("CREATE VIEW d AS SELECT * FROM u")
    assert tuple(loaded.view("a").columns) == ("id", "name")
    assert tuple(loaded.view("b").columns) == ("grp", "c", "total")
    assert tuple(loaded.view("c").columns) == ("id", "s")
    assert tuple(loaded.view("d").columns) == ("id", "tid", "score")
    assert all(len(r) == 2 for r in loaded.view("c").lookup(0))


def test_order_by_in_lookup(loaded):
    loaded.execute("CREATE VIEW ordered AS SELECT id, n FROM t WHERE g = ? ORDER BY n DESC")
    loaded.table("t").insert_many([(6, "f", 15, 1), (7, "g", None, 1)])
    loaded.settle()
    assert loaded.view("ordered").lookup(1) == [(2, 20), (6, 15), (1, 10), (7, None)]


# --------------------------------------------------------------------------- threads


def test_reads_from_threads_while_writing(loaded):
    loaded.execute("CREATE VIEW by_g AS SELECT id, n FROM t WHERE g = ?")
    loaded.execute("CREATE VIEW per_g AS SELECT g, COUNT(*), SUM(n) FROM t GROUP BY g")
    loaded.execute("CREATE VIEW pick AS SELECT id FROM t WHERE id IN (?, ?)")
    stop = threading.Event()
    errors: list[BaseException] = []
    reads = Counter()

    def reader(k: int) -> None:
        rnd = random.Random(k)
        try:
            while not stop.is_set():
                g = rnd.randint(0, 5)
                for rows in (
                    loaded.view("by_g").lookup(g),
                    loaded.view("per_g").scan(),
                    loaded.view("pick").lookup(rnd.randint(1, 300), rnd.randint(1, 300)),
                    loaded.query("SELECT id FROM t WHERE n > ?", (rnd.randint(0, 100),)),
                    loaded.view("by_g").lookup_many([g, g + 1]),
                ):
                    assert isinstance(rows, list) and all(isinstance(r, tuple) for r in rows)
                reads[k] += 1
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    readers = [threading.Thread(target=reader, args=(k,)) for k in range(4)]
    for th in readers:
        th.start()
    rnd = random.Random(99)
    expected_ids = {r[0] for r in T_ROWS}
    try:
        for i in range(150):
            rid = 100 + i
            loaded.table("t").insert((rid, f"r{i}", rnd.randint(0, 100), rnd.randint(0, 5)))
            expected_ids.add(rid)
            if i % 3 == 0:
                loaded.execute("UPDATE t SET n = n + 1, g = ? WHERE id = ?",
                               (rnd.randint(0, 5), rid - 1))
            if i % 5 == 0:
                assert (loaded.execute("DELETE FROM t WHERE id = ?", (rid - 2,))
                        == (rid - 2 in expected_ids))
                expected_ids.discard(rid - 2)
    finally:
        stop.set()
        for th in readers:
            th.join()
    assert not errors, errors[:3]
    assert all(reads[k] > 0 for k in range(4))
    loaded.settle()
    oracle = Oracle(loaded)
    for g in range(6):
        assert bag(loaded.view("by_g").lookup(g)) == bag(
            oracle.rows("SELECT id, n FROM t WHERE g = ?", (g,)))
    assert bag(loaded.view("per_g").scan()) == bag(
        oracle.rows("SELECT g, COUNT(*), SUM(n) FROM t GROUP BY g"))
    assert bag(loaded.query("SELECT id FROM t WHERE n > ?", (50,))) == bag(
        oracle.rows("SELECT id FROM t WHERE n > ?", (50,)))
    assert sorted(r[0] for r in oracle.rows("SELECT * FROM t")) == sorted(expected_ids)


# --------------------------------------------------------------------------- Table handle


def test_insert_many_with_dicts_uses_defaults(db):
    db.execute("CREATE VIEW all_t AS SELECT * FROM t")
    assert db.table("t").insert_many([
        {"id": 1},
        {"id": 2, "name": "bee"},
        {"id": 3, "n": None, "g": 4},
        {"ID": 4, "Name": "case", "G": 1},  # column names are case-insensitive
        (5, "tuple", 1, 1),  # tuples and dicts may be mixed
    ]) == 5
    db.settle()
    assert sorted(db.view("all_t").scan()) == [
        (1, "anon", 7, None),
        (2, "bee", 7, None),
        (3, "anon", None, 4),
        (4, "case", 7, 1),
        (5, "tuple", 1, 1),
    ]


def test_insert_statement_uses_defaults(db):
    db.execute("INSERT INTO t (id) VALUES (1)")
    db.execute("INSERT INTO t (g, id) VALUES (3, 2)")
    assert sorted(db.query("SELECT * FROM t")) == [(1, "anon", 7, None), (2, "anon", 7, 3)]


def test_table_update_and_delete(loaded):
    loaded.execute("CREATE VIEW by_g AS SELECT id, name, n FROM t WHERE g = ?")
    t = loaded.table("t")
    assert t.columns == ("id", "name", "n", "g")
    assert t.update("g = ? AND n >= ?", [1, 15], name="upd", n=None) == 1
    assert t.update("id IN (?, ?)", [3, 4], g=1) == 2
    assert t.update("id = ?", [999], g=1) == 0
    loaded.settle()
    assert bag(loaded.view("by_g").lookup(1)) == bag(
        [(1, "a", 10), (2, "upd", None), (3, "c", 30), (4, "d", None)])
    assert t.delete("n IS NULL", []) == 2
    assert t.delete("id = ?", [1]) == 1
    loaded.settle()
    assert loaded.view("by_g").lookup(1) == [(3, "c", 30)]
    assert t.delete() == 2  # no WHERE: every row (3 and 5)
    loaded.settle()
    assert loaded.view("by_g").lookup(1) == [] and loaded.query("SELECT id FROM t") == []


def test_update_by_expression_and_any_predicate(loaded):
    loaded.execute("CREATE VIEW total AS SELECT SUM(n), COUNT(*) FROM t")
    loaded.execute("UPDATE t SET n = CASE WHEN g = 1 THEN n * 2 ELSE COALESCE(n, 0) - 1 END "
                   "WHERE name <> 'e'")
    loaded.settle()
    assert loaded.view("total").lookup() == [(20 + 40 + 29 + -1 + 50, 5)]


# --------------------------------------------------------------------------- program changes


def test_drop_view(loaded, path):
    loaded.execute("CREATE VIEW by_g AS SELECT id FROM t WHERE g = ?")
    loaded.execute("CREATE VIEW keep AS SELECT id FROM t WHERE n > ?")
    assert loaded.execute("DROP VIEW by_g") == 0
    assert sorted(loaded.views()) == ["keep"]
    with pytest.raises(ProgramError):
        loaded.view("by_g")
    # The name is free again, and the other view still works.
    loaded.execute("CREATE VIEW by_g AS SELECT name FROM t WHERE g = ?")
    loaded.settle()
    assert bag(loaded.view("by_g").lookup(1)) == bag([("a",), ("b",)])
    assert bag(loaded.view("keep").lookup(25)) == bag([(3,), (5,)])
    loaded.execute("DROP VIEW keep")
    loaded.close()
    with rivulet.open(path) as again:
        assert sorted(again.views()) == ["by_g"]
        with pytest.raises(ProgramError):
            again.view("keep")


def test_drop_view_read_by_an_adhoc_query(loaded):
    # The view an ad-hoc SELECT was answered from is no view of the program: it does not
    # keep the view it reads from being dropped, and goes with it.
    loaded.execute("CREATE VIEW by_g AS SELECT id, g FROM t")
    loaded.settle()
    assert bag(loaded.query("SELECT id FROM by_g WHERE g = 1")) == bag([(1,), (2,)])
    assert loaded.execute("DROP VIEW by_g") == 0
    assert loaded.views() == []
    with pytest.raises(rivulet.SqlError):
        loaded.query("SELECT id FROM by_g WHERE g = 1")
    loaded.execute("CREATE VIEW by_g AS SELECT id, g FROM t WHERE id > 1")
    loaded.settle()
    assert loaded.query("SELECT id FROM by_g WHERE g = 1") == [(2,)]


def test_drop_view_method(loaded, path):
    loaded.execute("CREATE VIEW by_g AS SELECT id FROM t WHERE g = ?")
    nodes = loaded.stats()["nodes"]
    loaded.execute("CREATE VIEW other AS SELECT t.id, u.score FROM t JOIN u ON t.id = u.tid")
    assert loaded.stats()["nodes"] > nodes
    loaded.drop_view("other")
    assert loaded.stats()["nodes"] == nodes, "dropping a view must drop the nodes only it used"
    with pytest.raises(ProgramError):
        loaded.view("other")
    loaded.close()
    with rivulet.open(path) as again:
        assert again.views() == ["by_g"]


def test_drop_view_used_by_another_view(loaded):
    loaded.execute("CREATE VIEW base_v AS SELECT g, COUNT(*) AS c FROM t GROUP BY g")
    loaded.execute("CREATE VIEW over AS SELECT g FROM base_v WHERE c > 1")
    with pytest.raises(ProgramError):
        loaded.execute("DROP VIEW base_v")
    assert sorted(loaded.views()) == ["base_v", "over"]


def test_create_view_after_data_bootstraps(loaded):
    views = {
        "f": ("SELECT id, name FROM t WHERE g = ?", [(1,), (2,), (3,)]),
        "agg": ("SELECT g, COUNT(*), SUM(n), MIN(n), MAX(n) FROM t GROUP BY g", [()]),
        "j": ("SELECT t.id, u.id, u.score FROM t JOIN u ON t.id = u.tid", [()]),
        "lj": ("SELECT t.id, COUNT(u.id) FROM t LEFT JOIN u ON t.id = u.tid GROUP BY t.id", [()]),
        "dist": ("SELECT DISTINCT g FROM t", [()]),
        "cnt": ("SELECT COUNT(*) FROM t WHERE g = ?", [(1,), (7,)]),
    }
    oracle = Oracle(loaded)
    for name, (sql, _) in views.items():
        loaded.execute(f"CREATE VIEW {name} AS {sql}")
        # Serves at once, without settle(): it was built from the stored rows.
        for params in views[name][1]:
            assert bag(loaded.view(name).lookup(*params)) == bag(oracle.rows(sql, params)), name
    loaded.execute("INSERT INTO t VALUES (6, 'f', 5, 1)")
    loaded.execute("INSERT INTO u VALUES (14, 6, 1)")
    loaded.execute("DELETE FROM t WHERE id = 1")
    loaded.settle()
    oracle = Oracle(loaded)
    for name, (sql, param_sets) in views.items():
        for params in param_sets:
            assert bag(loaded.view(name).lookup(*params)) == bag(oracle.rows(sql, params)), name


def test_view_over_view(loaded):
    loaded.execute("CREATE VIEW per_g AS SELECT g, COUNT(*) AS c, SUM(n) AS s FROM t GROUP BY g")
    loaded.execute("CREATE VIEW busy AS SELECT g, c FROM per_g WHERE c >= 2")
    loaded.execute("CREATE VIEW busy_by_c AS SELECT g FROM busy WHERE c = ?")
    inner = "SELECT g, COUNT(*) AS c, SUM(n) AS s FROM t GROUP BY g"
    busy = f"SELECT g, c FROM ({inner}) AS per_g WHERE c >= 2"

    def check() -> None:
        loaded.settle()
        o = Oracle(loaded)
        assert bag(loaded.view("per_g").scan()) == bag(o.rows(inner))
        assert bag(loaded.view("busy").scan()) == bag(o.rows(busy))
        for c in (1, 2, 3):
            assert bag(loaded.view("busy_by_c").lookup(c)) == bag(
                o.rows(f"SELECT g FROM ({busy}) AS busy WHERE c = ?", (c,)))

    check()
    loaded.table("t").insert_many([(6, "f", 1, 1), (7, "g", 2, 3), (8, "h", 3, 3)])
    check()
    loaded.execute("UPDATE t SET g = 3 WHERE g = 2")
    check()
    loaded.execute("DELETE FROM t WHERE g = 1")
    check()


def test_views_sharing_a_join(loaded, tmp_path):
    join = "FROM t JOIN u ON t.id = u.tid"
    j2 = f"SELECT t.g, COUNT(*), SUM(u.score) {join} GROUP BY t.g"
    j3 = ("SELECT t.g, COUNT(*), SUM(u.score) FROM u JOIN t ON u.tid = t.id AND u.score > 5 "
          "GROUP BY t.g")
    # How many nodes j2 needs on its own...
    with rivulet.open(tmp_path / "alone") as alone:
        for ddl in SCHEMA:
            alone.execute(ddl)
        bare = alone.stats()["nodes"]
        alone.execute(f"CREATE VIEW j2 AS {j2}")
        j2_alone = alone.stats()["nodes"] - bare
    # ... and how many it adds next to a view with the same join.
    loaded.execute(f"CREATE VIEW j1 AS SELECT t.id, u.score {join} WHERE t.g = ?")
    nodes = loaded.stats()["nodes"]
    loaded.execute(f"CREATE VIEW j2 AS {j2}")
    assert loaded.stats()["nodes"] - nodes < j2_alone, "j2 did not reuse j1's join"
    loaded.execute(f"CREATE VIEW j3 AS {j3}")

    def check() -> None:
        loaded.settle()
        o = Oracle(loaded)
        for g in (1, 2, 3):  # NULL parameters: test_lookup_null_parameter_matches_nothing
            assert bag(loaded.view("j1").lookup(g)) == bag(
                o.rows(f"SELECT t.id, u.score {join} WHERE t.g = ?", (g,)))
        assert bag(loaded.view("j2").scan()) == bag(o.rows(j2))
        assert bag(loaded.view("j3").scan()) == bag(o.rows(j3))

    check()
    loaded.table("u").insert_many([(20, 2, 100), (21, 4, 50), (22, 5, 1)])
    check()
    loaded.execute("UPDATE t SET g = 2 WHERE id = 1")
    check()
    loaded.execute("UPDATE u SET tid = 3 WHERE id = 10")
    check()
    loaded.execute("DELETE FROM t WHERE id = 3")
    loaded.execute("DELETE FROM u WHERE score > 60")
    check()


def test_identical_views_share_all_their_nodes(loaded):
    loaded.execute("CREATE VIEW a AS SELECT g, COUNT(*) FROM t WHERE n > 5 GROUP BY g")
    nodes = loaded.stats()["nodes"]
    loaded.execute("CREATE VIEW b AS SELECT g, COUNT(*) AS how_many FROM t WHERE n > 5 GROUP BY g")
    # Only the new view's reader is new; everything below it is shared.
    assert loaded.stats()["nodes"] - nodes <= 1
    loaded.execute("INSERT INTO t VALUES (6, 'f', 60, 1)")
    loaded.settle()
    assert (bag(loaded.view("a").scan()) == bag(loaded.view("b").scan())
            == bag([(1, 3), (2, 1), (None, 1)]))


def test_created_views_persist_across_reopen(loaded, path):
    loaded.execute("CREATE VIEW by_g AS SELECT id, name FROM t WHERE g = ?")
    loaded.execute("CREATE VIEW per_g AS SELECT g, COUNT(*) AS c FROM t GROUP BY g")
    loaded.execute("CREATE VIEW busy AS SELECT g FROM per_g WHERE c > 1")
    loaded.execute(
        "CREATE VIEW j AS SELECT t.id, u.score FROM t JOIN u ON t.id = u.tid WHERE u.score > ?")
    loaded.query("SELECT id FROM t WHERE n > ?", (1,))  # ad-hoc: not part of the program
    before = {
        "by_g": [bag(loaded.view("by_g").lookup(g)) for g in (1, 2, 3)],
        "per_g": bag(loaded.view("per_g").scan()),
        "busy": bag(loaded.view("busy").scan()),
        "j": bag(loaded.view("j").lookup(5)),
    }
    loaded.close()
    with rivulet.open(path) as db:
        assert sorted(db.views()) == ["busy", "by_g", "j", "per_g"]
        assert tuple(db.view("per_g").columns) == ("g", "c")
        db.settle()
        after = {
            "by_g": [bag(db.view("by_g").lookup(g)) for g in (1, 2, 3)],
            "per_g": bag(db.view("per_g").scan()),
            "busy": bag(db.view("busy").scan()),
            "j": bag(db.view("j").lookup(5)),
        }
        assert after == before
        db.execute("INSERT INTO t VALUES (6, 'f', 1, 3), (7, 'g', 1, 3)")
        db.settle()
        assert bag(db.view("busy").scan()) == bag([(1,), (2,), (3,)])


def test_create_or_replace_with_bad_sql_keeps_the_old_view(tmp_path):
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        db.execute("CREATE VIEW v AS SELECT id FROM t")
        db.table("t").insert((1,))
        with pytest.raises(rivulet.SqlError, match="unknown column 'nope'"):
            db.execute("CREATE OR REPLACE VIEW v AS SELECT nope FROM t")
        db.settle()
        assert db.view("v").lookup() == [(1,)]
    with rivulet.open(tmp_path / "db") as db:
        assert db.view("v").lookup() == [(1,)]


def test_ad_hoc_views_do_not_hide_program_views(tmp_path: Path) -> None:
    """Views made for ad-hoc queries carry a reserved prefix; a program view named like
    the old one (``_q_...``) is listed like any other, and the reserved prefix is refused."""
    with rivulet.open(tmp_path) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        db.execute("CREATE VIEW _q_mine AS SELECT id, v FROM t WHERE id = ?")
        db.query("SELECT v FROM t WHERE id = ?", (1,))
        assert db.views() == ["_q_mine"]
        with pytest.raises(rivulet.ProgramError):
            db.execute("CREATE VIEW _rivulet_q_x AS SELECT id FROM t")


def test_a_write_that_changes_no_row_takes_no_lsn(tmp_path: Path) -> None:
    """Found by the HTTP fuzzer: a DELETE of a missing row answered 404 and still logged an
    empty write batch (a new LSN)."""
    with rivulet.open(tmp_path) as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        db.execute("INSERT INTO t VALUES (1, 1)")
        lsn = db.lsn
        assert db.execute("DELETE FROM t WHERE id = 7") == 0
        assert db.execute("UPDATE t SET v = 1 WHERE id = 1") == 0
        assert db.lsn == lsn
        db.settle()
        assert db.execute("UPDATE t SET v = 2 WHERE id = 1") == 1
        assert db.lsn == lsn + 1
