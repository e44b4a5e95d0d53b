"""Where MySQL and SQLite disagree, MySQL's answer is the contract (docs/design.md, "The contract
(and the test oracle)"). The differential tests stay out of these constructs; here each one
is stated explicitly, through views (``CREATE VIEW`` + ``lookup``), ad-hoc ``db.query`` and
write statements.

Each case notes what SQLite would answer, so that it is clear why the case is here and not
in the differential tests.
"""

from __future__ import annotations

import decimal
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rivulet

ROWS = [
    # id, a, b, s
    (1, 5, 2, "12abc"),
    (2, 7, 0, "abc"),
    (3, -7, 3, "ABC"),
    (4, None, 2, None),
    (5, 4, 1, "3"),
]


@pytest.fixture
def db() -> Iterator[rivulet.Database]:
    path = tempfile.mkdtemp(prefix="rivulet-mysql-")
    database = rivulet.open(path)
    database.execute("CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, s VARCHAR(10))")
    database.table("t").insert_many(ROWS)
    database.settle()
    try:
        yield database
    finally:
        database.close()
        shutil.rmtree(path, ignore_errors=True)


def _same(got: Any, expected: Any) -> bool:
    """Equal value and compatible type: an exact number where MySQL gives an integer; a
    non-integer numeric type (float or Decimal) where MySQL gives a DECIMAL/DOUBLE."""
    if expected is None or got is None:
        return got is None and expected is None
    if isinstance(expected, bool):
        expected = int(expected)
    if isinstance(expected, int):
        return type(got) is int and got == expected
    if isinstance(expected, float):
        return isinstance(got, (float, decimal.Decimal)) and abs(float(got) - expected) < 1e-9
    return type(got) is type(expected) and got == expected


_counter = iter(range(10**6))


def value_of(db: rivulet.Database, expr: str, row_id: int) -> Any:
    """``expr`` evaluated on row ``row_id`` through a view, and through ``db.query``; the two
    must agree; returns the view's answer."""
    name = f"m{next(_counter)}"
    sql = f"SELECT {expr} AS x FROM t WHERE id = ?"
    db.execute(f"CREATE VIEW {name} AS {sql}")
    rows = db.view(name).lookup(row_id)
    assert len(rows) == 1, rows
    adhoc = db.query(sql, [row_id])
    assert (
        len(adhoc) == 1 and adhoc[0][0] == rows[0][0] and type(adhoc[0][0]) is type(rows[0][0])
    ), f"view says {rows!r}, db.query says {adhoc!r}"
    return rows[0][0]


# (expression, row id, MySQL's answer)  -- SQLite's answer in the comment
EXPRESSIONS = [
    # Division is exact, never integer division.
    ("5/2", 1, 2.5),  # SQLite: 2
    ("a / b", 1, 2.5),  # 5/2; SQLite: 2
    ("a / b", 5, 4.0),  # 4/1 is 4.0000, not the integer 4; SQLite: 4
    ("-7 / 2", 1, -3.5),  # SQLite: -3
    ("a / 4", 5, 1.0),  # 4/4 is 1.0000, a DECIMAL, not the integer 1
    # DIV is integer division, truncating toward zero.
    ("7 DIV 2", 1, 3),  # SQLite: syntax error
    ("a DIV b", 1, 2),
    ("-7 DIV 2", 1, -3),
    ("a DIV b", 3, -2),
    # Division and modulo by zero give NULL (no error outside strict-mode writes).
    ("1/0", 1, None),  # SQLite: NULL too, but 1/0.0 etc. differ across versions
    ("a / b", 2, None),  # 7/0
    ("a DIV b", 2, None),
    ("a % b", 2, None),  # SQLite: NULL as well
    ("MOD(a, 0)", 1, None),
    ("-7 % 3", 1, -1),  # sign of the dividend (SQLite agrees)
    # Strings compare with numbers as numbers: the string's numeric prefix.
    ("'12abc' = 12", 1, 1),  # SQLite: 0 (a TEXT never equals an INTEGER)
    ("s = 12", 1, 1),  # s = '12abc'
    ("'abc' = 0", 1, 1),  # no numeric prefix: 0
    ("s = 0", 2, 1),  # s = 'abc'
    ("s = 3", 5, 1),  # s = '3'
    # A string in arithmetic is converted to DOUBLE (SQLite: to INTEGER 4 and 1).
    ("'3abc' + 1", 1, 4.0),
    ("'abc' + 1", 1, 1.0),
    # || is logical OR (MySQL's default sql_mode), not concatenation.
    ("'a' || 0", 1, 0),  # SQLite: 'a0'
    ("1 || 0", 1, 1),  # SQLite: '10'
    ("0 || 0", 1, 0),
    ("0 || NULL", 1, None),
    ("1 || NULL", 1, 1),
    ("a || b", 2, 1),  # 7 OR 0
    ("b || a", 4, 1),  # 2 OR NULL
    ("s || 0", 1, 1),  # '12abc' is 12: true
    # LIKE (and =) are case-sensitive: rivulet uses a binary collation.
    ("'abc' LIKE 'A%'", 1, 0),  # SQLite (default): 1
    ("s LIKE 'a%'", 3, 0),  # s = 'ABC'
    ("s LIKE 'A%'", 3, 1),
    ("'a' = 'A'", 1, 0),
    # LENGTH counts bytes, CHAR_LENGTH characters (SQLite's LENGTH counts characters).
    ("LENGTH('é')", 1, 2),
    ("CHAR_LENGTH('é')", 1, 1),
    # SUBSTRING from position 0 is empty (SQLite: from the start).
    ("SUBSTRING('abc', 0)", 1, ""),
    ("SUBSTRING('abc', 0, 2)", 1, ""),  # SQLite: 'a'
    # ROUND of an exact value rounds half away from zero and keeps the integer type.
    ("ROUND(a / b)", 1, 3.0),  # ROUND(2.5): 3; SQLite: ROUND(2) = 2.0
    ("ROUND(-2.5)", 1, -3.0),
    # Booleans are integers.
    ("TRUE + TRUE", 1, 2),
    ("(a > 1) + (b > 1)", 1, 2),
    # CONCAT with a NULL is NULL; CONCAT converts numbers.
    ("CONCAT(s, a)", 1, "12abc5"),  # SQLite < 3.44: no such function
    ("CONCAT(s, NULL)", 1, None),
    # IF / IFNULL
    ("IF(a > b, 'y', 'n')", 1, "y"),  # SQLite: IF is iif()
    ("IFNULL(a, -1)", 4, -1),
]


@pytest.mark.parametrize(
    "expr,row_id,expected", EXPRESSIONS, ids=[f"{e}@{i}" for e, i, _ in EXPRESSIONS]
)
def test_expression(db: rivulet.Database, expr: str, row_id: int, expected: Any) -> None:
    got = value_of(db, expr, row_id)
    assert _same(got, expected), (
        f"SELECT {expr} on row {row_id}: got {got!r} ({type(got).__name__}), "
        f"MySQL gives {expected!r}"
    )


def ids(rows: list[tuple]) -> list[int]:
    return sorted(r[0] for r in rows)


# (WHERE condition, ids MySQL selects) -- the same semantics in a filter
FILTERS = [
    ("a / b > 2", [1, 5]),  # 5/2 = 2.5 > 2 and 4/1; SQLite: 5/2 = 2, only row 5
    ("a / b = 2.5", [1]),
    ("a DIV b = 2", [1]),
    ("s = 12", [1]),  # '12abc' = 12; SQLite: none
    ("s = 0", [2, 3]),  # 'abc' and 'ABC' are 0
    ("a = 5 || b = 3", [1, 3]),  # OR; SQLite: concatenation, a string, false
    ("s LIKE 'abc'", [2]),  # not 'ABC'
    ("s = 'abc'", [2]),
    ("b / 0 IS NULL", [1, 2, 3, 4, 5]),
]


@pytest.mark.parametrize("where,expected", FILTERS, ids=[w for w, _ in FILTERS])
def test_filter(db: rivulet.Database, where: str, expected: list[int]) -> None:
    name = f"f{next(_counter)}"
    db.execute(f"CREATE VIEW {name} AS SELECT id FROM t WHERE {where}")
    assert ids(db.view(name).lookup()) == expected
    assert ids(db.query(f"SELECT id FROM t WHERE {where}")) == expected


def test_sum_of_ints_is_a_decimal_and_avg_one_with_four_places(db: rivulet.Database) -> None:
    """MySQL (and MariaDB, the tests' oracle): SUM of an INT is a DECIMAL with no places,
    AVG a DECIMAL with four (an earlier version of this test expected an int and a float)."""
    db.execute(
        "CREATE VIEW agg AS SELECT b, SUM(a), AVG(a), COUNT(a), MIN(a), MAX(a) FROM t GROUP BY b"
    )
    rows = {r[0]: r for r in db.view("agg").lookup()}
    dec = decimal.Decimal
    # b = 2: a in (5, NULL)
    b2 = rows[2]
    assert b2[1:] == (dec("5"), dec("5.0000"), 1, 5, 5), b2
    assert [str(v) for v in b2[1:3]] == ["5", "5.0000"] and type(b2[3]) is int, b2
    # b = 1: a = 4; b = 3: a = -7; b = 0: a = 7
    assert str(rows[3][1]) == "-7"
    ((avg,),) = db.query("SELECT AVG(a) FROM t WHERE id IN (1, 2)")
    assert str(avg) == "6.0000"  # (5 + 7) / 2; an AVG is never an int
    ((avg,),) = db.query("SELECT AVG(a) FROM t WHERE id IN (1, 5)")
    assert str(avg) == "4.5000"  # SQLite: 4.5


def test_avg_of_a_decimal_has_four_more_places_rounded_half_up(tmp_path: Path) -> None:
    """MySQL: AVG of a DECIMAL(10,2) is a DECIMAL with 6 places, rounded half up (the
    Spark pipelines compute it so too); not Python's 28 significant digits."""
    with rivulet.open(tmp_path) as db:
        db.execute("CREATE TABLE p (id INT PRIMARY KEY, g INT, d DECIMAL(10,2))")
        db.table("p").insert_many([(1, 1, "1.00"), (2, 1, "1.00"), (3, 1, "0.00"),
                                   (4, 2, "2.50"), (5, 2, "0.50"), (6, 3, "-1.00"), (7, 3, "-1.00"),
                                   (8, 3, "0.00")])
        db.execute(
            "CREATE VIEW a AS SELECT g, AVG(d), AVG(DISTINCT d) FROM p WHERE g = ? GROUP BY g")
        dec = decimal.Decimal
        assert db.view("a").lookup(1) == [(1, dec("0.666667"), dec("0.500000"))]
        assert db.view("a").lookup(2) == [(2, dec("1.500000"), dec("1.500000"))]
        assert db.view("a").lookup(3) == [(3, dec("-0.666667"), dec("-0.500000"))]
        assert [str(v) for v in db.view("a").lookup(2)[0][1:]] == ["1.500000", "1.500000"]


def test_avg_of_ints_is_not_truncated(db: rivulet.Database) -> None:
    db.execute("CREATE VIEW g AS SELECT AVG(b) FROM t")
    ((avg,),) = db.view("g").lookup()
    assert avg == decimal.Decimal("1.6000") and str(avg) == "1.6000"  # 8 / 5; SQLite: 1.6


def test_sum_over_no_rows_is_null_and_count_zero(db: rivulet.Database) -> None:
    db.execute("CREATE VIEW e AS SELECT SUM(a), COUNT(a), COUNT(*) FROM t WHERE b = ?")
    assert db.view("e").lookup(99) == [(None, 0, 0)]


def test_update_assignments_are_evaluated_left_to_right(db: rivulet.Database) -> None:
    """MySQL: "the second assignment sets col2 to the current (updated) col1 value"
    (single-table UPDATE, reference manual 15.2.17). SQLite (and standard SQL) evaluate
    every right-hand side on the old row."""
    db.execute("UPDATE t SET a = a + 1, b = a WHERE id = 1")
    db.execute("CREATE VIEW u AS SELECT a, b FROM t WHERE id = ?")
    db.settle()
    assert db.view("u").lookup(1) == [(6, 6)]  # SQLite: (6, 5)


def test_insert_string_into_int_column(db: rivulet.Database) -> None:
    """Strict mode (MySQL's default): a non-numeric string for an INT column is an error
    (SQLite stores the string as is); a numeric string is converted."""
    with pytest.raises(rivulet.RivuletError):
        db.execute("INSERT INTO t VALUES (10, 'abc', 1, 'x')")
    db.execute("INSERT INTO t VALUES (11, '12', 1, 'x')")
    db.execute("CREATE VIEW ins AS SELECT a FROM t WHERE id = ?")
    db.settle()
    assert db.view("ins").lookup(11) == [(12,)]
    assert type(db.view("ins").lookup(11)[0][0]) is int


def test_union_of_string_and_int_columns_is_a_string_column(db: rivulet.Database) -> None:
    """MySQL: a UNION column that is VARCHAR in one branch and INT in another is VARCHAR;
    the numbers come out as strings. (SQLite keeps each value's own type and sorts numbers
    before strings.)"""
    db.execute(
        "CREATE VIEW un AS SELECT s AS c FROM t WHERE id < 3 UNION ALL SELECT a FROM t WHERE id < 3"
    )
    db.settle()
    got = db.view("un").lookup()
    assert Counter(got) == Counter([("12abc",), ("5",), ("7",), ("abc",)]), got


def test_union_of_string_and_int_columns_ordered_with_limit(db: rivulet.Database) -> None:
    """The same UNION with ORDER BY ... LIMIT: string order ('12abc' < '5' < '7' < 'abc').
    rivulet compared str with int in the top-k operator: TypeError during propagation,
    which failed the whole dataflow (every later ``settle()`` raised)."""
    db.execute("CREATE VIEW good AS SELECT id FROM t WHERE id = ?")
    db.execute(
        "CREATE VIEW unk AS SELECT s AS c FROM t WHERE id < 3 UNION ALL "
        "SELECT a FROM t WHERE id < 3 ORDER BY c LIMIT 3"
    )
    db.table("t").insert_many([(6, 1, 1, "zz")])
    db.settle()
    assert db.view("unk").lookup() == [("12abc",), ("5",), ("7",)]
    assert db.view("good").lookup(6) == [(6,)]
