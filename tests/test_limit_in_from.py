"""A ``LIMIT`` inside another query: a subquery or a view in ``FROM``, a CTE, a UNION's branch.

MySQL cuts such a query's rows where it stands (``SELECT ... FROM (SELECT id FROM s ORDER BY
score DESC LIMIT 3) t``, Noria's Lobsters ``frontpage_ids`` view read by another query);
rivulet's top-k operator passes on exactly those rows, less the first ``OFFSET`` of them
(rivulet/plan/planner.py ``_cut``, ``skip`` in rivulet/dataflow/ops/topk.py), and keeps them
as rows move across the cut. Every read answers what MariaDB answers, before and after
rounds of inserts, updates and deletes that move rows into and out of the cut. The orders
here are total (ties broken by ``id``): with ties, MySQL keeps any of the tied rows.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from mysql_oracle import MySQLPair

import rivulet
from rivulet.errors import ParameterError
from rivulet.plan.describe import describe

SCHEMA = ["CREATE TABLE s (id INT PRIMARY KEY, score INT NOT NULL, team INT)",
          "CREATE TABLE m (id INT PRIMARY KEY, s_id INT, note VARCHAR(10))"]

VIEWS = {
    "top5": "SELECT id, score, team FROM s ORDER BY score DESC, id LIMIT 5",
    "page2": "SELECT id, score FROM s ORDER BY score, id LIMIT 3 OFFSET 3",
    "zero": "SELECT id FROM s ORDER BY id LIMIT 0",
}

#: Reads of the cut rows (ad-hoc, each made a view on first use), with their ``?`` pools.
READS: list[tuple[str, list[str]]] = [
    ("SELECT * FROM (SELECT id, score FROM s ORDER BY score DESC, id LIMIT 3) t", []),
    ("SELECT t.id FROM (SELECT id, score FROM s ORDER BY score, id LIMIT 4 OFFSET 2) t", []),
    ("SELECT id, score FROM top5", []),
    ("SELECT id FROM top5 WHERE team = ?", ["team"]),
    ("SELECT COUNT(*), SUM(score) FROM top5", []),
    ("SELECT m.note, top5.score FROM m JOIN top5 ON top5.id = m.s_id WHERE m.id = ?", ["m"]),
    ("SELECT top5.id, COUNT(m.id) FROM top5 LEFT JOIN m ON m.s_id = top5.id GROUP BY top5.id",
     []),
    ("SELECT id, score FROM page2", []),
    ("SELECT id FROM page2 WHERE id = ?", ["s"]),
    ("SELECT * FROM zero", []),
    ("SELECT team, MAX(score) FROM (SELECT team, score FROM s ORDER BY score DESC, id "
     "LIMIT 6) t GROUP BY team", []),
    ("WITH best AS (SELECT id, score FROM s ORDER BY score DESC, id LIMIT 2) "
     "SELECT b.id, m.note FROM best b JOIN m ON m.s_id = b.id", []),
    ("(SELECT id FROM s ORDER BY score, id LIMIT 2) UNION ALL "
     "(SELECT id FROM s ORDER BY score DESC, id LIMIT 2)", []),
    ("(SELECT id, score FROM s ORDER BY score, id LIMIT 2 OFFSET 1) UNION "
     "(SELECT s_id, 0 FROM m ORDER BY id LIMIT 3)", []),
    ("SELECT id FROM (SELECT DISTINCT score AS id FROM s ORDER BY score DESC LIMIT 3) t", []),
    ("SELECT x.id FROM (SELECT id FROM (SELECT id, score FROM s ORDER BY score DESC, id "
     "LIMIT 6) a ORDER BY id LIMIT 2 OFFSET 1) x", []),
]


def _pool(rng: random.Random, name: str) -> object:
    return {"team": rng.choice([1, 2, 3, None]), "m": rng.randrange(1, 25),
            "s": rng.randrange(1, 40)}[name]


def _write_round(pair: MySQLPair, rng: random.Random, next_id: Iterator[int]) -> None:
    """Inserts, updates and deletes that move rows across the cuts (scores cluster near the
    top and the bottom so that they do)."""
    for _ in range(6):
        i = next(next_id)
        pair.execute("INSERT INTO s VALUES (?, ?, ?)",
                     [i, rng.choice([rng.randrange(0, 5), rng.randrange(95, 100)]),
                      rng.choice([1, 2, 3, None])])
    for _ in range(4):
        pair.execute("UPDATE s SET score = ? WHERE id = ?",
                     [rng.randrange(0, 100), rng.randrange(1, 40)])
    for _ in range(3):
        pair.execute("DELETE FROM s WHERE id = ?", [rng.randrange(1, 40)])
    for _ in range(2):
        pair.execute("UPDATE m SET s_id = ? WHERE id = ?",
                     [rng.randrange(1, 40), rng.randrange(1, 25)])


@pytest.mark.parametrize("seed", [1, 2])
def test_cut_rows_read_by_other_queries_answer_as_mariadb(mysql_pair: MySQLPair,
                                                         seed: int) -> None:
    rng = random.Random(seed)
    for sql in SCHEMA:
        mysql_pair.execute(sql)
    mysql_pair.insert_many("s", [(i, rng.randrange(0, 100), rng.choice([1, 2, 3, None]))
                                 for i in range(1, 21)])
    mysql_pair.insert_many("m", [(i, rng.randrange(1, 25), f"n{i}") for i in range(1, 25)])
    for name, sql in VIEWS.items():
        mysql_pair.execute(f"CREATE VIEW {name} AS {sql}")
    next_id = iter(range(21, 10_000))
    for _ in range(5):
        for sql, pools in READS:
            for _ in range(3 if pools else 1):
                mysql_pair.check_query(sql, [_pool(rng, p) for p in pools])
        _write_round(mysql_pair, rng, next_id)


def test_a_cut_inside_another_query_passes_on_only_its_rows(tmp_path) -> None:
    """The plan: one top-k holding LIMIT + OFFSET rows, passing on the rows past the
    OFFSET (``skip``), with nothing below it filtered by the outer query's conditions."""
    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        db.execute("CREATE VIEW v AS SELECT id FROM (SELECT id, team FROM s ORDER BY "
                   "score, id LIMIT 4 OFFSET 2) t WHERE team = 1")
        built = db.built_view("v")
        assert built is not None
        plan = describe(built.plan)
        assert "TopK 6 skip 2 order" in plan, plan
        assert plan.index("Filter") < plan.index("TopK")  # (the team filter stays above)


def test_a_view_with_parameters_and_a_limit_is_no_table(tmp_path) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute(SCHEMA[0])
        db.execute("CREATE VIEW best AS SELECT id, score FROM s WHERE team = ? "
                   "ORDER BY score DESC LIMIT 2")
        with pytest.raises(ParameterError, match="parameters and a LIMIT"):
            db.query("SELECT * FROM best")
