"""JSON columns and the JSON functions rivulet computes, as MariaDB (the oracle) has them:
a JSON column holds text that is a JSON document, kept as written and read back as text
(MariaDB's JSON is a LONGTEXT checked by JSON_VALID); ``JSON_VALID``, ``JSON_TYPE``,
``JSON_LENGTH``, ``JSON_KEYS`` and ``JSON_UNQUOTE`` answer as MariaDB's do, MariaDB's
own reading of JSON included (rivulet/values/json_text.py). (``JSON_CONTAINS``,
``JSON_CONTAINS_PATH``, ``->`` and ``->>``: tests/test_json_functions.py.) The other JSON
functions are refused by name."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import rivulet
from rivulet.errors import InvalidJsonError, UnsupportedSqlError, error_code

#: Texts MariaDB reads as JSON, and texts it does not, with its quirks.
TEXTS = [
    '{"a":1,  "b" : [1, 2.50]}', "nope", "", "  1 ", "NaN", '{"a":1,"a":2}', "[" * 31 + "1"
    + "]" * 31, "[" * 32 + "1" + "]" * 32, '{"a":' * 31 + "1" + "}" * 31, '"a\tb"', "1e400",
    '"\\ud800"', '"\\ude00"', '"\\ud83d\\ude00"', '"\\u12"', "true", "TRUE", "nul", "null",
    '{"a":1} x', "-0", "01", "1.", ".5", "+1", "1e", "1.5e3", "1E5", "-1.0", '"\\x"',
    '"a\\u0041\\n\\/"', '{"a":1,}', "[1,]", "1 2", "\f1", "[]", "{}", "[1, [2, 3]]",
    '{"b":1,"a":2,"b":3}', '{"é\\"x":1}', '{"a\\u0041":1}', '"ab"', '  "x"  ', '"a"b"',
    '"bad\\x"', '"', '""', '"abc', "[1, 2]", '"é"', "[true, false, null]",
    '{"a": {"b": [1, {"c": null}]}, "d": "e"}',
]


@pytest.fixture
def texts(mysql_pair: Any) -> Any:
    mysql_pair.execute("CREATE TABLE t (id INT PRIMARY KEY, s TEXT)")
    mysql_pair.insert_many("t", list(enumerate(TEXTS)))
    return mysql_pair


@pytest.mark.parametrize("function", ["JSON_VALID", "JSON_TYPE", "JSON_LENGTH", "JSON_KEYS",
                                      "JSON_UNQUOTE"])
def test_each_function_answers_as_mariadb(texts: Any, function: str) -> None:
    texts.check_query(f"SELECT id, {function}(s) FROM t")


def test_functions_of_numbers_and_null(mysql_pair: Any) -> None:
    mysql_pair.execute("CREATE TABLE n (id INT PRIMARY KEY, i INT, d DECIMAL(5, 2))")
    mysql_pair.insert_many("n", [(1, 5, "1.50"), (2, None, None), (3, -7, "-0.25")])
    mysql_pair.check_query("SELECT id, JSON_VALID(i), JSON_TYPE(i), JSON_TYPE(d), "
                           "JSON_LENGTH(d), JSON_KEYS(i), JSON_UNQUOTE(d), JSON_VALID(d) "
                           "FROM n")


def test_a_json_column_takes_what_mariadb_takes(mysql_pair: Any) -> None:
    mysql_pair.execute("CREATE TABLE j (id INT PRIMARY KEY, j JSON)")
    for i, text in enumerate(TEXTS):
        mysql_pair.execute("INSERT INTO j VALUES (?, ?)", [i, text])
    mysql_pair.execute("INSERT INTO j VALUES (100, NULL)")
    mysql_pair.execute("INSERT INTO j VALUES (101, 5)")
    mysql_pair.execute("UPDATE j SET j = 'x' WHERE id = 0")  # refused: nothing changes
    mysql_pair.execute("UPDATE j SET j = '[1]' WHERE id = 0")
    got = mysql_pair.check_query("SELECT id, j, JSON_TYPE(j) FROM j")
    assert (3, "  1 ", "INTEGER") in got  # kept as written


def test_bad_json_is_mysql_8s_error_and_changes_nothing(tmp_path: Path) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE j (id INT PRIMARY KEY, j JSON NOT NULL DEFAULT '{}')")
        db.execute("INSERT INTO j (id) VALUES (1)")
        with pytest.raises(InvalidJsonError, match="Invalid JSON text") as failed:
            db.execute("INSERT INTO j VALUES (2, '[1]'), (3, '[1')")
        assert error_code(failed.value).mysql == 3140
        with pytest.raises(InvalidJsonError):
            db.table("j").insert_many([(4, "{")])
        with pytest.raises(rivulet.SqlError, match="Invalid JSON text"):
            db.execute("CREATE TABLE k (j JSON DEFAULT 'x')")
        db.settle()
        assert db.query("SELECT id, j FROM j") == [(1, "{}")]
        with pytest.raises(UnsupportedSqlError, match="JSON NOT NULL"):
            db.execute("ALTER TABLE j ADD COLUMN k JSON NOT NULL")
        db.execute("CREATE TABLE x (id INT PRIMARY KEY, s TEXT)")
        with pytest.raises(UnsupportedSqlError, match="to JSON"):
            db.execute("ALTER TABLE x MODIFY s JSON")


#: Documents and paths for JSON_EXTRACT, with MariaDB's quirks (a name as written, [0] of
#: a value that is no array, the first member of a name given twice).
DOCUMENTS = [
    '{"a": {"b" :[1 ,  {"c":"x\\u0041"} ], "d": {}}, "e": [], "f": 1.50e0, "g": true}',
    '[1, [2, [3]], {"a": null}]', '{"a":1,"a":2}', '{"0": 1}', '{"a\\u0062": 1, "ab": 2}',
    '"s"', " 5 ", "x", "[1, 2] x", '{"a b": "c", "é": "\\u00e9"}', "[]",
    '{"b":[1],"b" : {"a" : [2]}}', "[-, 1e, 1., 2]", '{"a": -}', "- ",
]
PATHS = ["$", "$.a", "$.a.b", "$.a.b[1]", "$.a.b[1].c", "$.a.d", "$.e", "$.f", "$.g", "$[0]",
         "$[1][1]", "$[1][1][0]", "$[2].a", "$[5]", "$[0][0]", '$."a b"', "$.ab", '$."0"',
         "$.z", "$.b.a", "$.b.a[0]", "$[1]", "$[2]", "$[3]"]


@pytest.mark.parametrize("path", PATHS)
def test_json_extract_answers_as_mariadb(mysql_pair: Any, path: str) -> None:
    mysql_pair.execute("CREATE TABLE d (id INT PRIMARY KEY, s TEXT)")
    mysql_pair.insert_many("d", list(enumerate(DOCUMENTS)))
    mysql_pair.check_query(f"SELECT id, JSON_EXTRACT(s, '{path}'), "
                           f"JSON_UNQUOTE(JSON_EXTRACT(s, '{path}')) FROM d")


def _random_texts(count: int) -> list[str]:
    """Texts made of JSON's tokens and of what MariaDB reads apart (seeded: the same each
    run), and documents nested a few levels deep."""
    rng = random.Random(29)
    tokens = ["{", "}", "[", "]", ",", ":", '"a"', '"b"', '"\\u0041"', '"\\x"', "1", "-", "0",
              "01", "1.5", "1e5", "1.", "e", "true", "null", " ", "\t", '"', "\\", "x",
              '"a b"', "-0.5e-3", '""', '"\\ud800"', ".", "+"]

    def nested(depth: int) -> str:
        roll = rng.random()
        if depth > 3 or roll < 0.4:
            return rng.choice(["1", '"a"', "true", "null", "1.50", "-2e3", "[]", "{}"])
        if roll < 0.7:
            return "[" + rng.choice([",", " , "]).join(
                nested(depth + 1) for _ in range(rng.randint(0, 3))) + "]"
        return "{" + ",".join(rng.choice(['"a"', '"b"', '"a b"']) + rng.choice([":", " : "])
                              + nested(depth + 1) for _ in range(rng.randint(0, 3))) + "}"

    flat = ["".join(rng.choice(tokens) for _ in range(rng.randint(1, 8)))
            for _ in range(count)]
    return flat + [nested(0) for _ in range(count)]


def test_random_texts_answer_as_mariadb(mysql_pair: Any) -> None:
    mysql_pair.execute("CREATE TABLE r (id INT PRIMARY KEY, s TEXT)")
    mysql_pair.insert_many("r", list(enumerate(_random_texts(300))))
    mysql_pair.check_query("SELECT id, JSON_VALID(s), JSON_TYPE(s), JSON_LENGTH(s), "
                           "JSON_KEYS(s), JSON_UNQUOTE(s) FROM r")
    mysql_pair.check_query("SELECT id, JSON_EXTRACT(s, '$'), JSON_EXTRACT(s, '$.a'), "
                           "JSON_EXTRACT(s, '$[1]'), JSON_EXTRACT(s, '$.b.a'), "
                           "JSON_EXTRACT(s, '$[0].a') FROM r")


@pytest.mark.parametrize("call", [
    "JSON_LENGTH(s, '$.a')", "JSON_KEYS(s, '$')", "JSON_EXTRACT(s, '$[*]')",
    "JSON_EXTRACT(s, '$.a', '$.b')", "JSON_EXTRACT(s, '$**.a')", "JSON_EXTRACT(s, '$[last]')",
    "JSON_EXTRACT(s, '$ . a')", "JSON_EXTRACT(s, CONCAT('$', '.a'))", "JSON_EXTRACT(s, s)",
    "JSON_OBJECT('a', s)", "JSON_ARRAY(s)", "JSON_QUOTE(id)", "JSON_SET(s, '$.a', 1)",
    "s ->> '$[*]'",
])
def test_the_json_functions_rivulet_does_not_compute_are_refused_by_name(
        tmp_path: Path, call: str) -> None:
    with rivulet.open(tmp_path / "db") as db:
        db.execute("CREATE TABLE t (id INT PRIMARY KEY, s TEXT)")
        with pytest.raises(UnsupportedSqlError):
            db.query(f"SELECT {call} FROM t")
