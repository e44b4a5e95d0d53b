"""``JSON_CONTAINS``, ``JSON_CONTAINS_PATH``, ``JSON_QUOTE`` and MySQL 8's ``->`` /
``->>`` (the JSON functions Django's JSONField and SQLAlchemy's JSON type send, beside
those of tests/test_json_columns.py), answering as MariaDB (the oracle) does, its quirks included
(rivulet/values/json_containment.py): on hand-picked and generated documents, in ad-hoc
reads and in views kept up to date across interleaved writes."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest

import rivulet
from rivulet.errors import SqlSyntaxError, UnsupportedSqlError

#: Targets and candidates with MariaDB's quirks: numbers equal as DOUBLEs, strings equal
#: as written, names with their escapes read, the first member of a name given twice,
#: arrays that contain what one of their elements contains, texts that are no JSON or
#: break off (a path is searched for in what precedes the break), nesting too deep.
HAND_PICKED = [
    "1", "1.0", "1e0", "-0", "[-0.0]", "9007199254740993", "9007199254740992", '"a"',
    '"\\u0061"', '"A"', '"a\\/"', '"a/"', "true", "false", "null", "[]", "{}", "[1, 2]",
    "[1, [2, 3]]", "[[3]]", "[[1, 2]]", "[1]", "[1, 1]", "[1.0]", "[true]", "[null]",
    '{"a": 1}', '{"\\u0061": 1}', '{"a": 1, "a": 2}', '{"a": 2}', '{"a": [1], "a": [2]}',
    '{"a": [2]}', '{"a": [1, 2]}', '{"a": {"b": 1, "c": 2}}', '{"a": {"c": 2}}',
    '[{"a": 1, "b": 2}]', '{"a": 1, "b": 1}', "[-, 1]", "[1e]", " [1] ", "x", "[1] x", "",
    '["x"]', '"x"', "[1, x", "[[1, 2], x", '{"a": 1, "b": x', '{"a": [1, 2], "a": x',
    "[[1, x", "[1, 2] x", '{"\u0061": [1], "a": 2', "[" * 31 + "1" + "]" * 31,
    "[" * 32 + "1" + "]" * 32,
]


def _generated(count: int) -> list[str]:
    """Small documents of a few shared values (seeded: the same each run), so that many
    pairs contain one another."""
    rng = random.Random(2929)

    def value(depth: int) -> str:
        roll = rng.random()
        if depth > 2 or roll < 0.45:
            return rng.choice(["1", "2", "1.0", '"a"', '"b"', "true", "null", "[]", "{}"])
        if roll < 0.75:
            return "[" + ", ".join(value(depth + 1) for _ in range(rng.randint(0, 3))) + "]"
        return "{" + ", ".join(rng.choice(['"a"', '"b"', '"c"']) + ": " + value(depth + 1)
                               for _ in range(rng.randint(0, 3))) + "}"

    return [value(0) for _ in range(count)]


def _cut(documents: list[str]) -> list[str]:
    """The documents broken off at a random place, some with text after the break."""
    rng = random.Random(7)
    return [d[:rng.randint(0, len(d))] + rng.choice(["", "", " x", "]", "}"])
            for d in documents]


@pytest.fixture
def pairs(mysql_pair: Any) -> Any:
    """Table p of (target, candidate) texts: every hand-picked pair, pairs of generated
    documents, and pairs of which one is broken off."""
    generated = _generated(200)
    cut = _cut(generated)
    rows = list(itertools.product(HAND_PICKED, repeat=2)) + list(
        itertools.product(generated[:30], generated[30:60])) + list(
        zip(generated[:100], cut[100:])) + list(zip(cut[:100], generated[100:]))
    mysql_pair.execute("CREATE TABLE p (id INT PRIMARY KEY, t TEXT, c TEXT)")
    mysql_pair.insert_many("p", [(i, t, c) for i, (t, c) in enumerate(rows)])
    return mysql_pair


def test_json_contains_answers_as_mariadb(pairs: Any) -> None:
    got = pairs.check_query("SELECT id, JSON_CONTAINS(t, c), JSON_CONTAINS(c, t) FROM p")
    assert {row[1] for row in got} == {0, 1, None}  # (the pairs do test each answer)


@pytest.mark.parametrize("path", ["$", "$.a", "$[0]", "$[1]", "$.a[0]", '$."a"', "$.z",
                                  "$[0][0]", "$.b[1]"])
def test_json_contains_at_a_path_answers_as_mariadb(pairs: Any, path: str) -> None:
    pairs.check_query(f"SELECT id, JSON_CONTAINS(t, c, '{path}') FROM p")


def test_json_contains_path_answers_as_mariadb(pairs: Any) -> None:
    pairs.check_query("SELECT id, JSON_CONTAINS_PATH(t, 'one', '$.a', '$[1]'), "
                      "JSON_CONTAINS_PATH(t, 'ALL', '$.a', '$[1]'), "
                      "JSON_CONTAINS_PATH(t, 'all', '$[0]'), "
                      "JSON_CONTAINS_PATH(c, 'One', '$.a.b', '$[0][0]') FROM p")


def test_json_quote_answers_as_mariadb(mysql_pair: Any) -> None:
    """Of text, control characters and all (of any other type it is refused: below)."""
    texts = ["", "a", 'say "hi"', "back\\slash", "a/b", "é𝄞", "\x7f", None,
             "".join(chr(c) for c in range(32)), '{"a": 1}']
    mysql_pair.execute("CREATE TABLE q (id INT PRIMARY KEY, s TEXT, v VARCHAR(40))")
    mysql_pair.insert_many("q", [(i, t, t) for i, t in enumerate(texts)])
    got = mysql_pair.check_query("SELECT id, JSON_QUOTE(s), JSON_QUOTE(v), "
                                 "JSON_VALID(JSON_QUOTE(s)), JSON_UNQUOTE(JSON_QUOTE(s)) = s, "
                                 "JSON_QUOTE(CONCAT(s, 'x')), JSON_QUOTE(NULL) FROM q")
    assert all(row[3] in (1, None) for row in got)


def test_null_arguments_give_null_as_in_mariadb(mysql_pair: Any) -> None:
    mysql_pair.execute("CREATE TABLE n (id INT PRIMARY KEY, s TEXT)")
    mysql_pair.insert_many("n", [(1, '{"a": 1}'), (2, None)])
    mysql_pair.check_query("SELECT id, JSON_CONTAINS(s, NULL), JSON_CONTAINS(NULL, s), "
                           "JSON_CONTAINS(s, '1', NULL), JSON_CONTAINS(s, '1', '$.a'), "
                           "JSON_CONTAINS_PATH(s, NULL, '$.a'), "
                           "JSON_CONTAINS_PATH(s, 'one', '$.a', NULL), "
                           "JSON_CONTAINS_PATH(s, 'one', NULL) FROM n")


def test_views_of_containment_stay_up_to_date_across_writes(mysql_pair: Any) -> None:
    """The filters Django's ``contains``, ``contained_by``, ``has_key``, ``has_keys`` and
    ``has_any_keys`` send, as views, between inserts, updates and deletes."""
    mysql_pair.execute("CREATE TABLE j (id INT PRIMARY KEY, d JSON)")
    mysql_pair.create_view("contains", "SELECT id FROM j WHERE JSON_CONTAINS(d, '{\"a\": 1}')")
    mysql_pair.create_view("contained_by",
                           "SELECT id FROM j WHERE JSON_CONTAINS('{\"a\": 1, \"b\": [1, 2]}', d)")
    mysql_pair.create_view("has_keys", "SELECT id, JSON_CONTAINS_PATH(d, 'one', '$.\"b\"') "
                           "AS b FROM j WHERE (JSON_CONTAINS_PATH(d, 'one', '$.\"a\"') AND "
                           "JSON_CONTAINS_PATH(d, 'one', '$.\"b\"')) OR "
                           "JSON_CONTAINS_PATH(d, 'all', '$[0]', '$[1]')")
    docs = _generated(80)
    rng = random.Random(35)
    for step, doc in enumerate(docs):
        mysql_pair.execute("INSERT INTO j VALUES (?, ?)", [step, doc])
        if step % 5 == 4:
            mysql_pair.execute("UPDATE j SET d = ? WHERE id = ?",
                               [rng.choice(docs), rng.randrange(step)])
        if step % 7 == 6:
            mysql_pair.execute("DELETE FROM j WHERE id = ?", [rng.randrange(step)])
        if step % 10 == 9:
            for view in ("contains", "contained_by", "has_keys"):
                mysql_pair.check_view(view)
    assert mysql_pair.check_view("contains")  # (the documents do match)


def test_arrows_are_mysql_8s_json_extract_and_json_unquote(mysql_pair: Any) -> None:
    """``->`` and ``->>`` (MySQL 8's; MariaDB has neither) answer what MariaDB answers
    for the calls MySQL defines them to be."""
    from test_json_columns import DOCUMENTS, PATHS

    mysql_pair.execute("CREATE TABLE d2 (id INT PRIMARY KEY, s TEXT)")
    mysql_pair.insert_many("d2", list(enumerate(DOCUMENTS)))
    mysql_pair.settle()
    for path in PATHS:
        ours = mysql_pair.db.query(f"SELECT id, s->'{path}', d2.s ->> '{path}' FROM d2")
        theirs = mysql_pair.mariadb(f"SELECT id, JSON_EXTRACT(s, '{path}'), "
                                    f"JSON_UNQUOTE(JSON_EXTRACT(d2.s, '{path}')) FROM d2")
        assert sorted(ours) == sorted(theirs), path


def test_a_view_of_arrows_stays_up_to_date_across_writes(mysql_pair: Any) -> None:
    """A view filtering and showing by ``->>`` and ``->`` in rivulet; MariaDB answers its
    SELECT written with the calls the arrows are (its constant given the oracle's
    collation: MariaDB's JSON_UNQUOTE answers in another)."""
    mysql_pair.execute("CREATE TABLE j (id INT PRIMARY KEY, d TEXT)")
    mysql_pair.db.execute("CREATE VIEW arrows AS SELECT id, d->'$.a' AS a, d->>'$.b' AS b "
                          "FROM j WHERE d->>'$.c' = 'x' OR d->'$[0]' = 1")
    mysql_pair.views["arrows"] = (
        "SELECT id, JSON_EXTRACT(d, '$.a') AS a, JSON_UNQUOTE(JSON_EXTRACT(d, '$.b')) AS b "
        "FROM j WHERE JSON_UNQUOTE(JSON_EXTRACT(d, '$.c')) = 'x' COLLATE utf8mb4_nopad_bin "
        "OR JSON_EXTRACT(d, '$[0]') = 1")
    rng = random.Random(36)
    values = ['"x"', '"y"', "1", "[1, 2]", '{"a": "x"}', "null", "true"]
    for step in range(60):
        doc = rng.choice([
            "{" + ", ".join(f'"{k}": {rng.choice(values)}' for k in rng.sample("abc", 2)) + "}",
            "[" + ", ".join(rng.choice(values) for _ in range(2)) + "]"])
        mysql_pair.execute("INSERT INTO j VALUES (?, ?)", [step, doc])
        if step % 6 == 5:
            mysql_pair.execute("DELETE FROM j WHERE id = ?", [rng.randrange(step)])
        if step % 10 == 9:
            mysql_pair.check_view("arrows")
    assert mysql_pair.check_view("arrows")


#: JSON values MariaDB reads as numbers apart from their text (``true`` is 1, ``"5"`` 5).
VALUES = ['"x"', "5", "true", "false", "null", "1.50", '"5"', '" 7"', '"5x"', '"1e1"',
          '"\\u0037"', "[1]", '{"b": 1}', '"true"', '"null"', "-2.5e1", "1e20", '"-"', "0"]
#: What SQLAlchemy's MySQL dialect sends for ``doc["a"]`` and its ``as_integer()``,
#: ``as_numeric()``, ``as_float()``, ``as_boolean()``, ``as_string()``, and a key read as
#: a number or a truth value otherwise.
SQLALCHEMY_FORMS = [
    "JSON_EXTRACT(d, '$.\"a\"')",
    "CASE JSON_EXTRACT(d, '$.\"a\"') WHEN 'null' THEN NULL "
    "ELSE CAST(JSON_EXTRACT(d, '$.\"a\"') AS SIGNED INTEGER) END",
    "CASE JSON_EXTRACT(d, '$.\"a\"') WHEN 'null' THEN NULL "
    "ELSE CAST(JSON_EXTRACT(d, '$.\"a\"') AS DECIMAL(30, 3)) END",
    "CASE JSON_EXTRACT(d, '$.\"a\"') WHEN 'null' THEN NULL "
    "ELSE JSON_EXTRACT(d, '$.\"a\"')+0.0000000000000000000000 END",
    "CASE JSON_EXTRACT(d, '$.\"a\"') WHEN 'null' THEN NULL WHEN true THEN true ELSE false END",
    "CASE JSON_EXTRACT(d, '$.\"a\"') WHEN 'null' THEN NULL "
    "ELSE JSON_UNQUOTE(JSON_EXTRACT(d, '$.\"a\"')) END",
    "JSON_EXTRACT(d, '$.a') + 1", "JSON_EXTRACT(d, '$.a') > 0", "JSON_EXTRACT(d, '$.a') = 5",
    "JSON_EXTRACT(d, '$.a') IN (1, 5)", "IF(JSON_EXTRACT(d, '$.a'), 'yes', 'no')",
    "NOT JSON_EXTRACT(d, '$.a')", "ABS(JSON_EXTRACT(d, '$.a'))",
    "CAST(JSON_EXTRACT(d, '$.a') AS DOUBLE)", "CAST(JSON_EXTRACT(d, '$.a') AS UNSIGNED)",
]


@pytest.mark.parametrize("form", SQLALCHEMY_FORMS)
def test_a_key_read_as_a_number_answers_as_mariadb(mysql_pair: Any, form: str) -> None:
    """Read as a number (arithmetic, a comparison with a number, a truth value, a cast to
    DECIMAL or DOUBLE), a JSON_EXTRACT result is the number MariaDB reads in its JSON
    value; cast to an integer, the number in its text. In a query and in a view kept up
    to date across writes."""
    mysql_pair.execute("CREATE TABLE j (id INT PRIMARY KEY, d TEXT)")
    mysql_pair.create_view("v", f"SELECT id, {form} AS x FROM j")
    rows = [(i, '{"a": ' + value + "}") for i, value in enumerate(VALUES)]
    mysql_pair.insert_many("j", rows[::2])
    mysql_pair.check_view("v")
    mysql_pair.insert_many("j", rows[1::2])
    mysql_pair.execute("DELETE FROM j WHERE id = 0")
    mysql_pair.check_view("v")
    mysql_pair.check_query(f"SELECT id, {form} FROM j")
    mysql_pair.check_query(f"SELECT id FROM j WHERE {form}")


@pytest.mark.parametrize(("call", "refused"), [
    ("JSON_CONTAINS(s, '1', '$[*]')", UnsupportedSqlError),
    ("JSON_CONTAINS(s, '1', s)", UnsupportedSqlError),
    ("JSON_CONTAINS_PATH(s, 'any', '$.a')", UnsupportedSqlError),
    ("JSON_CONTAINS_PATH(s, s, '$.a')", UnsupportedSqlError),
    ("JSON_CONTAINS_PATH(s, 'one', '$.a', '$**.b')", UnsupportedSqlError),
    ("s -> '$.*'", UnsupportedSqlError),
    ("JSON_QUOTE(id)", UnsupportedSqlError),  # (MariaDB: NULL; MySQL 8: error 3064)
    ("JSON_QUOTE(1.5)", UnsupportedSqlError),
    ("JSON_QUOTE(CAST('2020-01-01' AS DATE))", UnsupportedSqlError),
    ("1 -> '$.a'", SqlSyntaxError),  # (MySQL takes only a column before the arrow)
    ("s -> CONCAT('$', '.a')", SqlSyntaxError),  # (and a string after it)
])
def test_forms_rivulet_does_not_compute_are_refused_by_name(
        tmp_path: Path, call: str, refused: type[Exception]) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, s TEXT)")
        with pytest.raises(refused):
            db.query(f"SELECT {call} FROM t")


def test_a_json_value_compared_with_text_is_refused_by_name(tmp_path: Any) -> None:
    """``JSON_EXTRACT(d, '$.a') = 'x'`` is 1 in MySQL 8 and MariaDB (they unquote the JSON
    string), 0 compared as text: refused, never answered 0; the unquoted form and the
    comparison of two JSON values run."""
    import rivulet

    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE j (id INT PRIMARY KEY, d JSON)")
        db.table("j").insert_many([(1, '{"a": "x"}')])
        for sql in ("SELECT id FROM j WHERE JSON_EXTRACT(d, '$.a') = 'x'",
                    "SELECT id FROM j WHERE d->'$.a' IN ('x', 'y')",
                    "SELECT JSON_EXTRACT(d, '$.a') <> 'x' FROM j"):
            with pytest.raises(UnsupportedSqlError, match="JSON_EXTRACT value with text"):
                db.query(sql)
        db.settle()
        assert db.query("SELECT id FROM j WHERE d->>'$.a' = 'x'") == [(1,)]
        assert db.query("SELECT id FROM j WHERE JSON_EXTRACT(d, '$.a') = "
                        "JSON_EXTRACT('\"x\"', '$')") == [(1,)]
