"""Single-table ``UPDATE ... [ORDER BY ...] LIMIT n`` and ``DELETE ... [ORDER BY ...] LIMIT
n``, compared with MariaDB on the same statements: the rows written, the counts, errors;
in a transaction; and the refusal where MySQL's choice of rows depends on its plan."""

from __future__ import annotations

from typing import Any

import pytest

from rivulet.errors import UnsupportedSqlError

ROWS = [(1, 1, 10, "a"), (2, 1, 20, "b"), (3, 2, 30, "c"), (4, 2, 40, "d"),
        (5, None, 50, "e"), (6, 3, 60, "f")]


@pytest.fixture
def pair(mysql_pair: Any) -> Any:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT, v INT, s VARCHAR(5), "
                       "UNIQUE KEY uv (v))")
    mysql_pair.execute("CREATE TABLE n (g INT, v INT)")  # (no primary key)
    mysql_pair.insert_many("t", ROWS)
    mysql_pair.insert_many("n", [(1, 1), (1, 1), (1, 1), (2, 5)])
    mysql_pair.create_view("by_g", "SELECT g, SUM(v) AS v, COUNT(*) AS k FROM t GROUP BY g")
    return mysql_pair


@pytest.mark.parametrize("sql, params", [
    ("UPDATE t SET v = v + 1 ORDER BY v LIMIT 2", ()),
    ("UPDATE t SET v = v + 100 ORDER BY g, id LIMIT 3", ()),  # (NULL first)
    ("UPDATE t SET v = v + 100 WHERE g IS NOT NULL ORDER BY g DESC, id DESC LIMIT ?", (3,)),
    ("UPDATE t SET s = 'z' WHERE id = 3 LIMIT 1", ()),
    ("UPDATE t SET s = 'z' LIMIT 10", ()),  # (no more rows than the limit: all)
    ("UPDATE t SET v = 0 ORDER BY id LIMIT 0", ()),
    ("UPDATE t SET v = 60 ORDER BY id LIMIT 1", ()),  # duplicate key: nothing changes
    ("UPDATE t SET v = 1 ORDER BY nope LIMIT 1", ()),
    ("DELETE FROM t ORDER BY v DESC LIMIT 2", ()),
    ("DELETE FROM t WHERE g = ? ORDER BY s LIMIT ?", (2, 1)),
    ("DELETE FROM t WHERE v > 100 LIMIT 1", ()),
    ("DELETE FROM t ORDER BY s DESC LIMIT 100", ()),
    ("DELETE FROM n WHERE g = 1 LIMIT 5", ()),
    ("UPDATE n SET v = 9 WHERE g = 2 ORDER BY v LIMIT 1", ()),
    ("DELETE FROM t ORDER BY id", ()),  # (ORDER BY alone: every row)
])
def test_as_mariadb(pair: Any, sql: str, params: tuple) -> None:
    pair.execute(sql, params)
    pair.check_query("SELECT * FROM t")
    pair.check_query("SELECT * FROM n")
    pair.check_view("by_g")


@pytest.mark.parametrize("sql, mariadb", [
    # g = 1 holds ids 1 and 2: MariaDB takes id 1, the first its plan reads
    ("UPDATE t SET v = v + 1 ORDER BY g LIMIT 2", [(1, 11), (2, 20), (5, 51)]),
    ("DELETE FROM t LIMIT 1", [(2, 20), (3, 30), (4, 40), (5, 50), (6, 60)]),
])
def test_rows_tied_across_the_limit_are_refused(pair: Any, sql: str, mariadb: list) -> None:
    """Which of the tied rows MySQL writes depends on the order its plan reads them in:
    rivulet refuses by name and changes nothing (identical rows of a table without a key
    tie harmlessly: ``DELETE FROM n WHERE g = 1 LIMIT ...`` above)."""
    with pair.conn.cursor() as cur:
        cur.execute(sql)
    got = pair.mariadb("SELECT id, v FROM t WHERE id IN (1, 2, 5)" if "UPDATE" in sql
                       else "SELECT id, v FROM t ORDER BY id")
    assert got == mariadb
    with pytest.raises(UnsupportedSqlError, match="tied across the limit"):
        pair.db.execute(sql)
    pair.settle()
    assert sorted(pair.db.query("SELECT * FROM t")) == ROWS


def test_in_a_transaction(pair: Any) -> None:
    db = pair.db
    with db.transaction() as tx:
        tx.execute("INSERT INTO t VALUES (7, 9, 5, 'g')")
        assert tx.execute("UPDATE t SET s = 'low' ORDER BY v LIMIT 2") == 2
        assert sorted(tx.query("SELECT id FROM t WHERE s = 'low'")) == [(1,), (7,)]
        assert tx.execute("DELETE FROM t WHERE s = 'low' ORDER BY id DESC LIMIT 1") == 1
        tx.rollback()
    assert db.execute("DELETE FROM t ORDER BY v DESC LIMIT 1") == 1
    db.settle()
    assert db.query("SELECT COUNT(*) FROM t WHERE id = 6") == [(0,)]
