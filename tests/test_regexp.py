"""``REGEXP`` / ``RLIKE`` / ``REGEXP_LIKE`` (rivulet/values/regexps.py) against MariaDB:
patterns of the common core of MySQL's, MariaDB's and Python's regular expressions, written
and generated, over awkward text (empty, case, accents, newlines, numbers); the constructs
outside the core and non-constant patterns are refused by name."""

from __future__ import annotations

import random

import pytest
from mysql_oracle import MySQLPair
from test_mysql_types import check

from rivulet.errors import UnsupportedSqlError
from rivulet.values.regexps import PatternRefused, python_pattern

TEXTS = ["", "a", "abc", "ABC", "aBc", "xabcx", "a.c", "a\nb", "ab\n", "aaa", "abab", "é",
         "éa", "a-b", "a]b", "a|b", "(a)", "12", "1.5", "-3", " a ", "a{2}", "c$", None,
         "b^c", "a*b", "ß", "日本"]


@pytest.fixture
def texts(mysql_pair: MySQLPair) -> MySQLPair:
    mysql_pair.execute("CREATE TABLE r (id INT PRIMARY KEY, s VARCHAR(20), n INT, d DOUBLE)")
    mysql_pair.insert_many("r", [(i, s, i - 5, (i - 5) / 4) for i, s in enumerate(TEXTS)])
    return mysql_pair


WRITTEN = [
    "a", "A", "^a", "c$", "^abc$", "a.c", "a.b", "^.$", "a*b", "a+", "^a?b", "(ab)+",
    "^(ab){2}$", "a{2}", "a{1,2}c", "a{2,}", "a|x", "^(a|b)c", "[abc]", "[^abc]", "[a-c]+$",
    "^[A-Z]", "[0-9]", "^-?[0-9]+$", "[.]", "a\\.c", "\\(a\\)", "a\\|b", "[a\\-]", "[-a]",
    "\\]", "[\\]]", "é", "^.a$", "[à-ÿ]", "b\\^c", "c\\$", "a\\*b", "(?:ab)+", "a*?b",
    "a\\{2\\}", "^$", "^ ", "日", "ab$", "b\n", "a$", "ß",
]


@pytest.mark.parametrize("pattern", WRITTEN)
def test_a_pattern_of_the_common_core_matches_as_in_mysql(texts: MySQLPair,
                                                          pattern: str) -> None:
    quoted = pattern.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    check(texts, f"SELECT id, s REGEXP '{quoted}' AS m, s NOT RLIKE '{quoted}' AS n FROM r")


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    atoms = ["a", "b", "c", "A", ".", "é", "[ab]", "[^a]", "[a-c]", "\\.", " ", "1"]
    out = "^" if rng.random() < 0.2 else ""
    for _ in range(rng.randint(1, 4)):
        if depth < 2 and rng.random() < 0.2:
            atom = "(" + "|".join(_random_pattern(rng, depth + 1)
                                  for _ in range(rng.randint(1, 2))) + ")"
        else:
            atom = rng.choice(atoms)
        out += atom + rng.choice(["", "", "*", "+", "?", "{2}", "{1,2}", "*?"])
    return out + ("$" if rng.random() < 0.2 else "")


def test_generated_patterns_match_as_in_mysql(texts: MySQLPair) -> None:
    rng = random.Random(17)
    for _ in range(6):
        patterns = [_random_pattern(rng) for _ in range(12)]
        columns = ", ".join(f"s REGEXP '{p.replace(chr(92), chr(92) * 2)}' AS m{i}"
                            for i, p in enumerate(patterns))
        texts.check_query(f"SELECT id, {columns} FROM r")


def test_regexp_in_where_and_a_view_keep_up_with_writes(texts: MySQLPair) -> None:
    sql = "SELECT id, s FROM r WHERE s REGEXP '^[a-c]+$' OR n REGEXP '^-' OR d RLIKE '\\\\.'"
    texts.create_view("matched", sql)
    rng = random.Random(2)
    for k in range(100, 120):
        texts.execute("INSERT INTO r VALUES (?, ?, ?, ?)",
                      (k, rng.choice(TEXTS), rng.randint(-3, 3), rng.choice([0.5, 2.0, None])))
        if k % 4 == 0:
            texts.execute("UPDATE r SET s = CONCAT(s, 'a') WHERE s REGEXP 'b$'")
            texts.execute("DELETE FROM r WHERE s RLIKE '^a{3}'")
        texts.check_view("matched")
    texts.check_query(sql)


@pytest.mark.parametrize("pattern,what", [
    ("\\\\d", "escape \\\\d"), ("\\\\w+", "escape \\\\w"), ("(a)\\\\1", "escape \\\\1"),
    ("(?=a)", "\\(\\? group"), ("(?i)a", "\\(\\? group"), ("[[:alpha:]]", "POSIX classes"),
    ("[a&&b]", "set operator"), ("a++", "possessive"), ("*a", "follows nothing"),
    ("a{,2}", "not a count"), ("", "empty pattern"), ("(a", "without its \\)"),
    ("a)", "without its \\("), ("[z-a]", "range"), ("[a-b-c]", "neither a range"),
])
def test_a_pattern_outside_the_common_core_is_refused_by_name(texts: MySQLPair, pattern: str,
                                                              what: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=what):
        texts.db.query(f"SELECT id FROM r WHERE s REGEXP '{pattern}'")


def test_what_else_is_refused(texts: MySQLPair) -> None:
    db = texts.db
    with pytest.raises(UnsupportedSqlError, match="not a text constant"):
        db.query("SELECT id FROM r WHERE s REGEXP s")
    with pytest.raises(UnsupportedSqlError, match="match type"):
        db.query("SELECT REGEXP_LIKE(s, 'a', 'i') FROM r")
    db.execute("CREATE TABLE rb (id INT PRIMARY KEY, b VARBINARY(5))")
    with pytest.raises(UnsupportedSqlError, match="binary string"):
        db.query("SELECT id FROM rb WHERE b REGEXP 'a'")
    assert db.query("SELECT REGEXP_LIKE('abc', 'b'), REGEXP_LIKE(NULL, 'b')") == [(1, None)]


def test_the_translation_keeps_icus_dot_and_end() -> None:
    """ICU's ``.`` matches no line terminator and its ``$`` stands before a final one
    (``\\r`` too, where Python's stands before ``\\n`` only)."""
    import re

    assert re.search(python_pattern("a.b"), "a\rb") is None
    assert re.search(python_pattern("a$"), "a\r\n") is not None
    with pytest.raises(PatternRefused):
        python_pattern("\\s")
