"""Tests for rivulet.values: MySQL scalar semantics.

Table-driven cases pin down each function, its NULL handling and the places where MySQL
differs from SQLite; Hypothesis properties check ORDER BY keys against a reference
comparator, LIKE against a plain recursive matcher, and same-kind comparisons against SQLite.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import sqlite3
from collections.abc import Callable
from decimal import Decimal as D
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rivulet import values as F
from rivulet.errors import SqlError

NULL = None


def check(fn: Callable[..., Any], args: tuple[Any, ...], expected: Any) -> None:
    """The result equals expected and has the same Python type (1 is not 1.0 is not True)."""
    got = fn(*args)
    assert got == expected and type(got) is type(expected), (
        f"{fn.__name__}{args!r} = {got!r} ({type(got).__name__}), "
        f"expected {expected!r} ({type(expected).__name__})"
    )


def cases(rows: list[tuple[Any, ...]]) -> Any:
    """Parametrize (fn, args, expected) rows with readable ids."""
    return pytest.mark.parametrize(
        "fn,args,expected",
        rows,
        ids=[f"{r[0].__name__}{r[1]!r}"[:80] for r in rows],
    )


# --------------------------------------------------------------------------------------------
# Comparisons
# --------------------------------------------------------------------------------------------

d1 = dt.date(2020, 1, 5)
dt1 = dt.datetime(2020, 1, 5, 0, 0, 0)
dt2 = dt.datetime(2020, 1, 5, 10, 30, 0)

COMPARISONS = [
    # NULL operands
    (F.eq, (NULL, 1), NULL),
    (F.eq, (1, NULL), NULL),
    (F.eq, (NULL, NULL), NULL),
    (F.lt, (NULL, "a"), NULL),
    (F.ne, (NULL, 1), NULL),
    # same kind
    (F.eq, (1, 1), 1),
    (F.ne, (1, 2), 1),
    (F.lt, (1, 2), 1),
    (F.le, (2, 2), 1),
    (F.gt, (1, 2), 0),
    (F.ge, (3, 2), 1),
    (F.lt, ("a", "b"), 1),
    (F.lt, ("B", "a"), 1),  # binary collation: uppercase sorts first
    (F.eq, ("a", "A"), 0),  # case-sensitive
    (F.eq, ("a", "a "), 0),  # NO PAD: trailing spaces count
    (F.lt, ("", "a"), 1),
    (F.lt, (b"a", b"b"), 1),
    # numbers of mixed types
    (F.eq, (1, 1.0), 1),
    (F.eq, (1, D("1.00")), 1),
    (F.eq, (0.1, D("0.1")), 1),  # compared as doubles, as MySQL
    (F.lt, (D("1.5"), 2), 1),
    (F.gt, (2.5, 2), 1),
    (F.eq, (True, 1), 1),
    (F.eq, (False, 0.0), 1),
    # string vs number: the string's numeric prefix
    (F.eq, ("abc", 0), 1),
    (F.eq, ("12abc", 12), 1),
    (F.eq, (12, "12abc"), 1),
    (F.eq, (" 3.5x", 3.5), 1),
    (F.eq, ("1e2", 100), 1),
    (F.eq, ("-.5", -0.5), 1),
    (F.eq, ("0x10", 0), 1),  # no hex
    (F.lt, ("10", 9), 0),  # numeric, not lexicographic
    (F.lt, ("10", "9"), 1),  # both strings: lexicographic
    (F.eq, ("1.50", D("1.5")), 1),
    # bytes vs str
    (F.eq, (b"abc", "abc"), 1),
    (F.lt, ("abc", b"abd"), 1),
    # dates
    (F.eq, (d1, dt1), 1),
    (F.lt, (d1, dt2), 1),
    (F.gt, (dt2, d1), 1),
    (F.eq, (d1, "2020-01-05"), 1),
    (F.eq, ("2020-01-05", d1), 1),
    (F.eq, (d1, "2020-1-5"), 1),
    (F.eq, (d1, "2020-01-05 00:00:00"), 1),
    (F.lt, (d1, "2020-01-05 00:00:01"), 1),
    (F.eq, (dt2, "2020-01-05 10:30:00"), 1),
    (F.eq, (dt2, "2020-01-05T10:30"), 1),
    (F.eq, (dt2, "2020-01-05"), 0),
    (F.gt, (dt2, "2020-01-05"), 1),
    (F.lt, (d1, "2021-01-01"), 1),
    (F.eq, (d1, b"2020-01-05"), 1),
    (F.eq, (d1, "not a date"), 0),  # not a date: the zero date, before every date
    (F.lt, (d1, "3"), 0),  # (MariaDB; this case once expected strings compared: 1)
    (F.gt, (d1, "2"), 1),
    (F.eq, (d1, "2020-01-05x"), 1),  # text after a date is ignored, as MySQL does
    (F.eq, (d1, 200105), 1),  # a number as YYMMDD
    (F.lt, (d1, 20200105.5), 0),  # the fraction of a date-only number is ignored
    (F.eq, (d1, 20200105), 1),  # date as the number YYYYMMDD
    (F.eq, (dt2, 20200105103000), 1),
    (F.lt, (d1, 20200106.5), 1),
    # null-safe equality never returns NULL
    (F.null_safe_eq, (NULL, NULL), 1),
    (F.null_safe_eq, (NULL, 1), 0),
    (F.null_safe_eq, (1, NULL), 0),
    (F.null_safe_eq, (1, 1), 1),
    (F.null_safe_eq, ("12abc", 12), 1),
    (F.null_safe_eq, (1, 2), 0),
]


@cases(COMPARISONS)
def test_comparisons(fn: Callable[..., Any], args: tuple[Any, ...], expected: Any) -> None:
    check(fn, args, expected)


def test_comparison_of_non_sql_values_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        F.eq(1, object())


# --------------------------------------------------------------------------------------------
# Three-valued logic
# --------------------------------------------------------------------------------------------

T, Fa, N = 1, 0, None
AND_TABLE = {(T, T): T, (T, Fa): Fa, (T, N): N, (Fa, T): Fa, (Fa, Fa): Fa, (Fa, N): Fa,
             (N, T): N, (N, Fa): Fa, (N, N): N}
OR_TABLE = {(T, T): T, (T, Fa): T, (T, N): T, (Fa, T): T, (Fa, Fa): Fa, (Fa, N): N,
            (N, T): T, (N, Fa): N, (N, N): N}
XOR_TABLE = {(T, T): Fa, (T, Fa): T, (T, N): N, (Fa, T): T, (Fa, Fa): Fa, (Fa, N): N,
             (N, T): N, (N, Fa): N, (N, N): N}


@pytest.mark.parametrize("a,b", list(AND_TABLE))
def test_truth_tables(a: Any, b: Any) -> None:
    check(F.and_, (a, b), AND_TABLE[a, b])
    check(F.or_, (a, b), OR_TABLE[a, b])
    check(F.xor, (a, b), XOR_TABLE[a, b])


LOGIC = [
    (F.not_, (1,), 0),
    (F.not_, (0,), 1),
    (F.not_, (NULL,), NULL),
    (F.not_, (5,), 0),
    (F.not_, ("abc",), 1),
    (F.not_, (0.0,), 1),
    (F.truth, (NULL,), NULL),
    (F.truth, (7,), 1),
    (F.truth, (-1,), 1),
    (F.truth, (0,), 0),
    (F.truth, (0.5,), 1),
    (F.truth, (D("0.00"),), 0),
    (F.truth, ("abc",), 0),
    (F.truth, ("0.0",), 0),
    (F.truth, ("1x",), 1),
    (F.truth, (" 2",), 1),
    (F.truth, (b"1",), 1),
    (F.truth, (True,), 1),
    (F.truth, (d1,), 1),
    (F.and_, (5, "1"), 1),  # any nonzero value is true
    (F.and_, (2, "abc"), 0),
    (F.or_, ("abc", 0.0), 0),
    (F.or_, (NULL, 0.1), 1),
    (F.xor, (5, 3), 0),
    (F.xor, (5, 0), 1),
    (F.is_null, (NULL,), 1),
    (F.is_null, (0,), 0),
    (F.is_null, ("",), 0),
    (F.is_not_null, (NULL,), 0),
    (F.is_not_null, (0,), 1),
]


@cases(LOGIC)
def test_logic(fn: Callable[..., Any], args: tuple[Any, ...], expected: Any) -> None:
    check(fn, args, expected)


# --------------------------------------------------------------------------------------------
# Arithmetic
# --------------------------------------------------------------------------------------------

ARITHMETIC = [
    (F.add, (1, 2), 3),
    (F.add, (1, 2.5), 3.5),
    (F.add, (D("1.5"), 1), D("2.5")),
    (F.add, (D("1.5"), D("0.25")), D("1.75")),
    (F.add, (D("1.5"), 0.5), 2.0),  # Decimal with float -> float
    (F.add, ("1", 1), 2.0),  # strings become doubles
    (F.add, ("12abc", 1), 13.0),
    (F.add, ("abc", 1), 1.0),
    (F.add, (True, 1), 2),
    (F.add, (NULL, 1), NULL),
    (F.add, (1, NULL), NULL),
    (F.add, (d1, 1), 20200106),  # a date in numeric context is YYYYMMDD
    (F.sub, (5, 7), -2),
    (F.sub, (D("0.3"), D("0.1")), D("0.2")),
    (F.sub, (NULL, NULL), NULL),
    (F.mul, (6, 7), 42),
    (F.mul, (D("1.10"), 2), D("2.20")),
    (F.mul, ("3", 2), 6.0),  # not Python's string repetition
    (F.mul, (2, "3"), 6.0),
    (F.mul, (1.5, NULL), NULL),
    # An exact quotient carries whole nine-digit words, truncated (MySQL's DECIMAL
    # division); the plan rounds it to the dividend's places + 4 where it is shown.
    (F.div, (5, 2), D("2.500000000")),
    (F.div, (4, 2), D("2.000000000")),  # never integer division
    (F.div, (-7, 2), D("-3.500000000")),
    (F.div, (1, 0), NULL),
    (F.div, (1.0, 0.0), NULL),
    (F.div, (1, D("0.00")), NULL),
    (F.div, (1, "abc"), NULL),  # 'abc' is 0
    (F.div, (0, 5), D("0E-9")),
    (F.div, (NULL, 2), NULL),
    (F.div, (D("1.00"), 3), D("0.333333333")),
    (F.div, (1, D("3")), D("0.333333333")),
    (F.div, (D("2"), D("3")), D("0.666666666")),  # truncated
    (F.div, (D("1.500"), D("2.5")), D("0.600000000000000000")),  # two words each: 18
    (F.div, (D("2.333333333"), 3), D("0.777777777666666666")),  # 7 / 3 / 3
    (F.to_scale, (D("0.666666666"), 4), D("0.6667")),  # rounded half up where shown
    (F.to_scale, (D("6.999999999"), 4), D("7.0000")),  # 7 / 3 * 3, shown
    (F.to_scale, (5, 3), D("5.000")),
    (F.to_scale, (NULL, 3), NULL),
    (F.div, (D("1"), 4.0), 0.25),
    (F.div, ("5", 2), 2.5),
    (F.int_div, (5, 2), 2),
    (F.int_div, (-7, 2), -3),  # truncates toward zero (Python // gives -4)
    (F.int_div, (7, -2), -3),
    (F.int_div, (-7, -2), 3),
    (F.int_div, (5, 0), NULL),
    (F.int_div, (5.5, 2), 2),
    (F.int_div, (-5.5, 2), -2),
    (F.int_div, (D("7.9"), D("2")), 3),
    (F.int_div, ("7", 2), 3),
    (F.int_div, (5, 0.0), NULL),
    (F.int_div, (NULL, 2), NULL),
    (F.mod, (7, 3), 1),
    (F.mod, (-7, 3), -1),  # sign of the dividend (Python % gives 2)
    (F.mod, (7, -3), 1),
    (F.mod, (-7, -3), -1),
    (F.mod, (7, 0), NULL),
    (F.mod, (5.5, 2), 1.5),  # fmod, not SQLite's integer cast
    (F.mod, (-5.5, 2), -1.5),
    (F.mod, (D("-7.5"), 2), D("-1.5")),
    (F.mod, (D("7.5"), D("0")), NULL),
    (F.mod, ("7", 3), 1.0),
    (F.mod, (NULL, 3), NULL),
    (F.neg, (5,), -5),
    (F.neg, (-2.5,), 2.5),
    (F.neg, (D("1.5"),), D("-1.5")),
    (F.neg, ("3",), -3.0),
    (F.neg, (True,), -1),
    (F.neg, (NULL,), NULL),
]


@cases(ARITHMETIC)
def test_arithmetic(fn: Callable[..., Any], args: tuple[Any, ...], expected: Any) -> None:
    check(fn, args, expected)


def test_decimal_arithmetic_is_exact_beyond_default_context_precision() -> None:
    big = D("12345678901234567890123456789012345.123456789")
    assert F.add(big, 1) == D("12345678901234567890123456789012346.123456789")
    assert F.neg(big) == D("-12345678901234567890123456789012345.123456789")  # not -big,
    # which rounds to the default context's 28 digits
    assert F.desc_key(big) == (0, D("-12345678901234567890123456789012345.123456789"))


@given(st.integers(-10**20, 10**20), st.integers(-10**6, 10**6).filter(bool))
def test_int_div_and_mod_recompose(a: int, b: int) -> None:
    q = F.int_div(a, b)
    r = F.mod(a, b)
    assert q * b + r == a
    assert abs(r) < abs(b)
    assert r == 0 or (r < 0) == (a < 0)


# --------------------------------------------------------------------------------------------
# LIKE, IN, BETWEEN
# --------------------------------------------------------------------------------------------

LIKE = [
    (F.like, ("abc", "abc"), 1),
    (F.like, ("abc", "a%"), 1),
    (F.like, ("abc", "%c"), 1),
    (F.like, ("abc", "%b%"), 1),
    (F.like, ("abc", "a_c"), 1),
    (F.like, ("abc", "a_"), 0),
    (F.like, ("abc", "ABC"), 0),  # case-sensitive (binary collation)
    (F.like, ("ABC", "a%"), 0),
    (F.like, ("", "%"), 1),
    (F.like, ("", "_"), 0),
    (F.like, ("a\nb", "a_b"), 1),  # _ matches a newline too
    (F.like, ("a\nb", "a%"), 1),
    (F.like, ("a.c", "a.c"), 1),  # regex metacharacters are literal
    (F.like, ("abc", "a.c"), 0),
    (F.like, ("a*c", "a*c"), 1),
    (F.like, ("10%", "10\\%"), 1),  # default escape is backslash
    (F.like, ("100", "10\\%"), 0),
    (F.like, ("a_c", "a\\_c"), 1),
    (F.like, ("abc", "a\\_c"), 0),
    (F.like, ("a\\", "a\\"), 1),  # a trailing escape is literal
    (F.like, ("a|c", "a||c", "|"), 1),
    (F.like, ("a_c", "a|_c", "|"), 1),
    (F.like, ("abc", "a|_c", "|"), 0),
    (F.like, ("a\\c", "a\\c", ""), 1),  # empty ESCAPE: no escape character
    (F.like, ("a%c", "a\\%c", NULL), 1),  # NULL ESCAPE: the default
    (F.like, (123, "12%"), 1),  # numbers are matched as strings
    (F.like, (1.5, "1.5"), 1),
    (F.like, (d1, "2020-%"), 1),
    (F.like, (b"abc", "a%"), 1),
    (F.like, ("é", "_"), 1),  # one character
    (F.like, ("é".encode(), b"_"), 0),  # binary: one byte
    (F.like, ("é".encode(), b"__"), 1),
    (F.like, (NULL, "%"), NULL),
    (F.like, ("a", NULL), NULL),
    (F.not_like, ("abc", "a%"), 0),
    (F.not_like, ("abc", "b%"), 1),
    (F.not_like, (NULL, "b%"), NULL),
]


@cases(LIKE)
def test_like(fn: Callable[..., Any], args: tuple[Any, ...], expected: Any) -> None:
    check(fn, args, expected)


def test_like_rejects_long_escape() -> None:
    with pytest.raises(SqlError):
        F.like("a", "a", "ab")


IN_BETWEEN = [
    (F.in_list, (1, (1, 2)), 1),
    (F.in_list, (3, (1, 2)), 0),
    (F.in_list, (1, (NULL, 1)), 1),  # a match wins over NULL
    (F.in_list, (3, (1, NULL)), NULL),  # no match but a NULL: unknown
    (F.in_list, (NULL, (1, 2)), NULL),
    (F.in_list, (NULL, (NULL,)), NULL),
    (F.in_list, (1, (1.0,)), 1),
    (F.in_list, ("12abc", (12,)), 1),
    (F.in_list, (0, ("abc",)), 1),
    (F.in_list, ("a", ("A", "b")), 0),
    (F.in_list, (d1, ("2020-01-05",)), 1),
    (F.in_list, (1, ()), 0),
    (F.between, (2, 1, 3), 1),
    (F.between, (1, 1, 3), 1),
    (F.between, (3, 1, 3), 1),
    (F.between, (4, 1, 3), 0),
    (F.between, (NULL, 1, 3), NULL),
    (F.between, (2, NULL, 3), NULL),
    (F.between, (5, NULL, 3), 0),  # upper bound already fails
    (F.between, (0, 1, NULL), 0),
    (F.between, ("b", "a", "c"), 1),
    (F.between, (d1, "2020-01-01", "2020-01-31"), 1),
]


@cases(IN_BETWEEN)
def test_in_and_between(fn: Callable[..., Any], args: tuple[Any, ...], expected: Any) -> None:
    check(fn, args, expected)


# --------------------------------------------------------------------------------------------
# Control flow functions
# --------------------------------------------------------------------------------------------

CONTROL = [
    (F.coalesce, (NULL, NULL, 3, 4), 3),
    (F.coalesce, (NULL,), NULL),
    (F.coalesce, (0, 1), 0),
    (F.ifnull, (NULL, 2), 2),
    (F.ifnull, (1, 2), 1),
    (F.ifnull, (NULL, NULL), NULL),
    (F.nullif, (1, 1), NULL),
    (F.nullif, (1, 2), 1),
    (F.nullif, (NULL, 1), NULL),
    (F.nullif, (1, NULL), 1),
    (F.nullif, ("12abc", 12), NULL),
    (F.if_, (1, "a", "b"), "a"),
    (F.if_, (0, "a", "b"), "b"),
    (F.if_, (NULL, "a", "b"), "b"),
    (F.if_, ("abc", "a", "b"), "b"),
    (F.if_, (0.5, "a", "b"), "a"),
    (F.if_, (1, NULL, "b"), NULL),
]


@cases(CONTROL)
def test_control_flow(fn: Callable[..., Any], args: tuple[Any, ...], expected: Any) -> None:
    check(fn, args, expected)


# --------------------------------------------------------------------------------------------
# String functions
# --------------------------------------------------------------------------------------------

STRINGS = [
    (F.concat, ("a", "b", "c"), "abc"),
    (F.concat, ("a", NULL), NULL),
    (F.concat, ("x", 1, 2.0, 2.5, D("1.50"), True), "x122.51.501"),
    (F.concat, (d1, " ", dt2), "2020-01-05 2020-01-05 10:30:00"),
    (F.concat, (b"a", "b"), b"ab"),  # binary if any argument is binary
    (F.concat, ("",), ""),
    (F.concat_ws, (",", "a", NULL, "b"), "a,b"),
    (F.concat_ws, (",", NULL, NULL), ""),
    (F.concat_ws, (NULL, "a", "b"), NULL),
    (F.concat_ws, ("-", 1, 2.5), "1-2.5"),
    (F.concat_ws, (",", "a", ""), "a,"),  # empty strings are kept
    (F.lower, ("AbC",), "abc"),
    (F.lower, (NULL,), NULL),
    (F.lower, (b"ABC",), b"ABC"),  # binary strings have no case
    (F.upper, ("straße",), "STRAßE"),  # one character to one, as MySQL (not 'STRASSE')
    (F.lower, ("ΑΣ",), "ασ"),  # no final sigma
    (F.upper, (12,), "12"),
    (F.length, ("abc",), 3),
    (F.length, ("é",), 2),  # bytes, not characters
    (F.length, ("😀",), 4),
    (F.length, (b"ab",), 2),
    (F.length, (123,), 3),
    (F.length, (NULL,), NULL),
    (F.char_length, ("é",), 1),
    (F.char_length, ("😀a",), 2),
    (F.char_length, (NULL,), NULL),
    (F.substring, ("abcdef", 2), "bcdef"),
    (F.substring, ("abcdef", 2, 3), "bcd"),
    (F.substring, ("abcdef", -2), "ef"),
    (F.substring, ("abcdef", -3, 2), "de"),
    (F.substring, ("abcdef", 0), ""),  # SQLite would give 'abcdef'
    (F.substring, ("abcdef", 0, 2), ""),
    (F.substring, ("abcdef", 7), ""),
    (F.substring, ("abcdef", -7), ""),
    (F.substring, ("abcdef", 2, 0), ""),
    (F.substring, ("abcdef", 2, -1), ""),
    (F.substring, ("abcdef", 5, 10), "ef"),
    (F.substring, ("abcdef", "2", 2.4), "bc"),
    (F.substring, (b"abc", 2), b"bc"),
    (F.substring, (12345, 2, 2), "23"),
    (F.substring, (NULL, 1), NULL),
    (F.substring, ("abc", NULL), NULL),
    (F.substring, ("abc", 1, NULL), NULL),
    (F.left, ("abcdef", 2), "ab"),
    (F.left, ("abc", 10), "abc"),
    (F.left, ("abc", 0), ""),
    (F.left, ("abc", -1), ""),
    (F.left, (NULL, 1), NULL),
    (F.left, ("abc", NULL), NULL),
    (F.right, ("abcdef", 2), "ef"),
    (F.right, ("abc", 10), "abc"),
    (F.right, ("abc", 0), ""),
    (F.right, ("abc", NULL), NULL),
    (F.trim, ("  a b  ",), "a b"),
    (F.trim, ("\ta\t",), "\ta\t"),  # only spaces
    (F.trim, ("xxaxx", "x"), "a"),
    (F.trim, ("xyxyaxy", "xy"), "a"),  # whole copies of remstr
    (F.trim, ("xxaxx", "x", "LEADING"), "axx"),
    (F.trim, ("xxaxx", "x", "TRAILING"), "xxa"),
    (F.trim, ("aaa", "a"), ""),
    (F.trim, ("abc", ""), "abc"),
    (F.trim, (NULL,), NULL),
    (F.trim, ("abc", NULL), NULL),
    (F.ltrim, ("  a  ",), "a  "),
    (F.ltrim, (NULL,), NULL),
    (F.rtrim, ("  a  ",), "  a"),
    (F.rtrim, (b"a  ",), b"a"),
    (F.replace, ("aXbXc", "X", "-"), "a-b-c"),
    (F.replace, ("abc", "B", "x"), "abc"),  # case-sensitive
    (F.replace, ("abc", "", "x"), "abc"),  # empty from: unchanged
    (F.replace, ("abc", "b", ""), "ac"),
    (F.replace, (NULL, "a", "b"), NULL),
    (F.replace, ("abc", NULL, "b"), NULL),
    (F.replace, ("abc", "a", NULL), NULL),
    (F.reverse, ("abc",), "cba"),
    (F.reverse, ("",), ""),
    (F.reverse, (NULL,), NULL),
    (F.locate, ("b", "abcb"), 2),
    (F.locate, ("b", "abcb", 3), 4),
    (F.locate, ("B", "abc"), 0),  # case-sensitive
    (F.locate, ("x", "abc"), 0),
    (F.locate, ("b", "abc", 0), 0),
    (F.locate, ("b", "abc", -1), 0),
    (F.locate, ("", "abc"), 1),
    (F.locate, ("", "abc", 4), 4),
    (F.locate, ("", "abc", 5), 0),
    (F.locate, (NULL, "abc"), NULL),
    (F.locate, ("a", NULL), NULL),
    (F.locate, ("a", "abc", NULL), NULL),
    (F.instr, ("foobarbar", "bar"), 4),
    (F.instr, ("xbar", "foobar"), 0),
    (F.instr, (NULL, "a"), NULL),
    (F.lpad, ("hi", 5, "xy"), "xyxhi"),
    (F.lpad, ("hi", 1, "x"), "h"),  # cut to length
    (F.lpad, ("hi", 2, ""), "hi"),
    (F.lpad, ("hi", 3, ""), NULL),  # nothing to pad with
    (F.lpad, ("hi", -1, "x"), NULL),
    (F.lpad, (NULL, 3, "x"), NULL),
    (F.lpad, ("hi", NULL, "x"), NULL),
    (F.lpad, ("hi", 3, NULL), NULL),
    (F.rpad, ("hi", 5, "xy"), "hixyx"),
    (F.rpad, ("hi", 1, "x"), "h"),
    (F.rpad, ("hi", 4, ""), NULL),
    (F.repeat, ("ab", 3), "ababab"),
    (F.repeat, ("ab", 0), ""),
    (F.repeat, ("ab", -1), ""),
    (F.repeat, (NULL, 2), NULL),
    (F.repeat, ("ab", NULL), NULL),
    (F.repeat, ("ab", 10**9), NULL),  # beyond max_allowed_packet
]


@cases(STRINGS)
def test_strings(fn: Callable[..., Any], args: tuple[Any, ...], expected: Any) -> None:
    check(fn, args, expected)


TO_STR = [
    (1.0, "1"),
    (-1.0, "-1"),
    (0.0, "0"),
    (0.1, "0.1"),
    (2.5, "2.5"),
    (123.456, "123.456"),
    (1e14, "100000000000000"),
    (1e15, "1e15"),
    (1.5e20, "1.5e20"),
    (-1.5e20, "-1.5e20"),
    (1e-5, "0.00001"),
    (1.5e-10, "0.00000000015"),
    (1e-15, "0.000000000000001"),
    (1e-16, "1e-16"),
    (1.25e-300, "1.25e-300"),
    (1234567890123456.8, "1234567890123456.8"),
    (1 / 3, "0.3333333333333333"),
    (5, "5"),
    (-5, "-5"),
    (True, "1"),
    (False, "0"),
    (D("1.50"), "1.50"),
    (D("1E+3"), "1000"),
    (D("-0.001"), "-0.001"),
    (d1, "2020-01-05"),
    (dt2, "2020-01-05 10:30:00"),
    (dt.datetime(2020, 1, 5, 1, 2, 3, 400000), "2020-01-05 01:02:03.400000"),
    ("x", "x"),
    (b"x", b"x"),
    (NULL, NULL),
]


@pytest.mark.parametrize("value,expected", TO_STR, ids=[repr(v) for v, _ in TO_STR])
def test_to_str(value: Any, expected: Any) -> None:
    check(F.to_str, (value,), expected)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_formatting_round_trips(x: float) -> None:
    s = F.to_str(x)
    assert float(s) == x
    assert "+" not in s


@given(st.one_of(st.integers(-10**15, 10**15), st.floats(allow_nan=False,
                                                          allow_infinity=False)))
def test_number_equals_its_own_string(x: float) -> None:
    assert F.eq(F.to_str(x), x) == 1
    assert F.eq(F.to_str(x) + "abc", x) == 1


# --------------------------------------------------------------------------------------------
# Numeric functions
# --------------------------------------------------------------------------------------------

NUMERIC = [
    (F.abs_, (-3,), 3),
    (F.abs_, (-2.5,), 2.5),
    (F.abs_, (D("-1.50"),), D("1.50")),
    (F.abs_, ("-2",), 2.0),
    (F.abs_, (NULL,), NULL),
    (F.round_, (2.5,), 2.0),  # a DOUBLE's binary value, half to even (MariaDB: 2)
    (F.round_, (-2.5,), -2.0),
    (F.round_, (2.4,), 2.0),
    (F.round_, (2.675, 2), 2.68),  # 2.675 * 100 is 267.5: to the even 268
    (F.round_, (1.005, 2), 1.0),  # 1.005 * 100 is 100.49999999999999 (MariaDB: 1.0)
    (F.round_, (1234.5678, -2), 1200.0),
    (F.round_, (0.5, 0), 0.0),
    (F.round_, (1.5, 10), 1.5),
    (F.round_, (5,), 5),  # exact types stay exact
    (F.round_, (5, 2), 5),
    (F.round_, (1250, -2), 1300),
    (F.round_, (-1250, -2), -1300),
    (F.round_, (1249, -2), 1200),
    (F.round_, (49, -2), 0),
    (F.round_, (D("1.25"), 1), D("1.3")),
    (F.round_, (D("-1.25"), 1), D("-1.3")),
    (F.round_, (D("1.2"), 3), D("1.2")),
    (F.round_, (D("1.5"),), D("2")),
    (F.round_, (D("125.5"), -1), D("130")),
    (F.round_, ("2.5",), 2.0),  # text is read as a DOUBLE (MariaDB: 2)
    (F.round_, (NULL,), NULL),
    (F.round_, (1.5, NULL), NULL),
    (F.floor, (1.5,), 1.0),
    (F.floor, (-1.5,), -2.0),
    (F.floor, (3,), 3),
    (F.floor, (D("-1.5"),), -2),
    (F.floor, ("2.7",), 2.0),
    (F.floor, (NULL,), NULL),
    (F.ceil, (1.2,), 2.0),
    (F.ceil, (-1.2,), -1.0),
    (F.ceil, (D("1.01"),), 2),
    (F.ceil, (4,), 4),
    (F.ceil, (NULL,), NULL),
    (F.sign, (-5,), -1),
    (F.sign, (0,), 0),
    (F.sign, (0.1,), 1),
    (F.sign, (D("-0.01"),), -1),
    (F.sign, ("abc",), 0),
    (F.sign, (NULL,), NULL),
    (F.greatest, (1, 3, 2), 3),
    (F.greatest, ("a", "c", "b"), "c"),
    (F.greatest, (1, NULL, 3), NULL),
    (F.greatest, (1, 2.5), 2.5),
    (F.greatest, (3, 2.5), 3.0),  # a float argument makes the result a float
    (F.greatest, (D("1.5"), 1), D("1.5")),
    (F.greatest, (2, D("1.5")), D("2")),
    (F.greatest, (d1, dt2), dt2),
    (F.greatest, (d1, "2019-12-31"), d1),
    (F.greatest, (10, "9"), 10.0),  # numbers with strings compare as DOUBLEs (MariaDB)
    (F.least, (1, 3, 2), 1),
    (F.least, ("b", "a"), "a"),
    (F.least, (NULL, 1), NULL),
    (F.least, (1.5, 2), 1.5),
    (F.least, (d1, dt2), d1),
]


@cases(NUMERIC)
def test_numeric_functions(fn: Callable[..., Any], args: tuple[Any, ...],
                           expected: Any) -> None:
    check(fn, args, expected)


# --------------------------------------------------------------------------------------------
# Date functions
# --------------------------------------------------------------------------------------------

dt3 = dt.datetime(2021, 12, 31, 23, 59, 58, 123456)

DATES = [
    (F.year, (dt3,), 2021),
    (F.year, (d1,), 2020),
    (F.year, ("2019-07-04",), 2019),
    (F.year, ("2019-07-04 10:00:00",), 2019),
    (F.year, ("nonsense",), NULL),
    (F.year, ("2019-02-30",), NULL),  # invalid date
    (F.year, (20190704,), 2019),
    (F.year, (NULL,), NULL),
    (F.month, (dt3,), 12),
    (F.month, ("2019-07-04",), 7),
    (F.month, (NULL,), NULL),
    (F.day, (dt3,), 31),
    (F.day, (d1,), 5),
    (F.day, ("20190704",), 4),
    (F.day, (NULL,), NULL),
    (F.hour, (dt3,), 23),
    (F.hour, (d1,), 0),
    (F.hour, ("2019-07-04 10:11:12",), 10),
    (F.hour, ("10:11:12",), 10),
    (F.hour, ("272:59:59",), 272),
    (F.hour, ("abc",), NULL),
    (F.hour, (NULL,), NULL),
    (F.minute, (dt3,), 59),
    (F.minute, ("10:11:12",), 11),
    (F.minute, (NULL,), NULL),
    (F.second, (dt3,), 58),
    (F.second, ("10:11:12",), 12),
    (F.second, ("10:11",), 0),
    (F.second, (NULL,), NULL),
    (F.date_, (dt3,), dt.date(2021, 12, 31)),
    (F.date_, (d1,), d1),
    (F.date_, ("2019-07-04 10:11:12",), dt.date(2019, 7, 4)),
    (F.date_, ("x",), NULL),
    (F.date_, (NULL,), NULL),
    (F.datediff, (dt.date(2020, 3, 1), dt.date(2020, 2, 1)), 29),
    (F.datediff, (dt.date(2020, 2, 1), dt.date(2020, 3, 1)), -29),
    (F.datediff, ("2020-01-05 23:59:59", "2020-01-05 00:00:01"), 0),
    (F.datediff, (dt3, d1), 726),
    (F.datediff, (NULL, d1), NULL),
    (F.datediff, (d1, "bad"), NULL),
    (F.unix_timestamp, (dt.datetime(1970, 1, 2),), 86400),
    (F.unix_timestamp, (dt.date(1970, 1, 2),), 86400),
    (F.unix_timestamp, (dt.datetime(1970, 1, 1, 0, 0, 1, 500000),), D("1.500000")),
    (F.unix_timestamp, (dt.datetime(1960, 1, 1),), 0),
    (F.unix_timestamp, ("1970-01-01 00:01:00",), 60),
    (F.unix_timestamp, (NULL,), NULL),
]


@cases(DATES)
def test_dates(fn: Callable[..., Any], args: tuple[Any, ...], expected: Any) -> None:
    check(fn, args, expected)


# --------------------------------------------------------------------------------------------
# Registries
# --------------------------------------------------------------------------------------------

REQUIRED_NAMES = """CONCAT CONCAT_WS LOWER LCASE UPPER UCASE LENGTH CHAR_LENGTH CHARACTER_LENGTH
SUBSTRING SUBSTR LEFT RIGHT TRIM LTRIM RTRIM REPLACE REVERSE LOCATE INSTR LPAD RPAD REPEAT ABS
ROUND FLOOR CEIL CEILING SIGN GREATEST LEAST COALESCE IFNULL NULLIF IF YEAR MONTH DAY
DAYOFMONTH HOUR MINUTE SECOND DATE DATEDIFF MOD""".split()


def test_registry_covers_required_names_with_arity() -> None:
    assert set(REQUIRED_NAMES) <= set(F.SCALAR_FUNCTIONS)
    assert set(F.SCALAR_FUNCTIONS) == set(F.FUNCTION_ARITY)
    for name, (lo, hi) in F.FUNCTION_ARITY.items():
        assert name == name.upper()
        assert lo >= 1 and (hi is None or hi >= lo), name


@pytest.mark.parametrize("name", sorted(F.SCALAR_FUNCTIONS))
def test_every_function_accepts_its_arity_and_is_null_on_all_null(name: str) -> None:
    fn = F.SCALAR_FUNCTIONS[name]
    lo, hi = F.FUNCTION_ARITY[name]
    for n in {lo, hi if hi is not None else lo + 3}:
        if name == "TRIM" and n == 3:
            assert fn(None, None, "BOTH") is None
            continue
        assert fn(*([None] * n)) is None, (name, n)


def test_arity_error() -> None:
    assert F.arity_error("left", 2) is None
    assert F.arity_error("CONCAT", 7) is None
    assert F.arity_error("NO_SUCH_FUNCTION", 1) is None
    assert F.arity_error("left", 1) == (
        "Incorrect parameter count in the call to native function 'LEFT': "
        "expected 2 arguments, got 1")
    assert "expected 2 to 3 arguments, got 4" in F.arity_error("SUBSTRING", 4)
    assert "expected at least 1 argument, got 0" in F.arity_error("COALESCE", 0)
    assert "expected 1 argument, got 2" in F.arity_error("ABS", 2)


def test_operators_map_to_functions() -> None:
    assert F.OPERATORS["="] is F.eq
    assert F.OPERATORS["DIV"](7, 2) == 3
    assert F.OPERATORS["/"](7, 2) == 3.5
    assert F.OPERATORS["<=>"](None, None) == 1


# --------------------------------------------------------------------------------------------
# ORDER BY keys
# --------------------------------------------------------------------------------------------


def test_sort_keys_examples() -> None:
    values = [3, None, 1, None, 2]
    assert sorted(values, key=F.sort_key) == [None, None, 1, 2, 3]
    assert sorted(values, key=F.desc_key) == [3, 2, 1, None, None]
    words = ["b", None, "B", "a"]
    assert sorted(words, key=F.sort_key) == [None, "B", "a", "b"]
    assert sorted(words, key=F.desc_key) == ["b", "a", "B", None]
    days = [d1, None, dt.date(2019, 1, 1)]
    assert sorted(days, key=F.desc_key) == [d1, dt.date(2019, 1, 1), None]
    mixed = [D("1.5"), 1, 2.5, None, True]
    assert sorted(mixed, key=F.desc_key) == [2.5, D("1.5"), 1, True, None]


def _ref_cmp(a: Any, b: Any, descending: bool) -> int:
    """MySQL ORDER BY on one column: NULL is the smallest value (first ASC, last DESC)."""
    if a is None or b is None:
        c = (a is not None) - (b is not None)
    else:
        c = (a > b) - (a < b)
    return -c if descending else c


def _ref_row_cmp(directions: tuple[bool, ...]) -> Callable[[Any, Any], int]:
    def cmp(r1: tuple[Any, ...], r2: tuple[Any, ...]) -> int:
        for a, b, descending in zip(r1, r2, directions):
            c = _ref_cmp(a, b, descending)
            if c:
                return c
        return 0

    return cmp


_column = st.one_of(
    st.lists(st.none() | st.integers(-5, 5)),
    st.lists(st.none() | st.text(alphabet="aAb", max_size=3)),
    st.lists(st.none() | st.floats(-3, 3, allow_nan=False)),
    st.lists(st.none() | st.dates(dt.date(2020, 1, 1), dt.date(2020, 1, 10))),
)


@given(_column)
def test_sort_keys_agree_with_reference_on_one_column(values: list[Any]) -> None:
    asc = sorted(values, key=functools.cmp_to_key(lambda a, b: _ref_cmp(a, b, False)))
    desc = sorted(values, key=functools.cmp_to_key(lambda a, b: _ref_cmp(a, b, True)))
    assert sorted(values, key=F.sort_key) == asc
    assert sorted(values, key=F.desc_key) == desc


@given(
    st.lists(
        st.tuples(st.none() | st.integers(-3, 3), st.none() | st.text(alphabet="ab", max_size=2),
                  st.none() | st.integers(-2, 2))
    ),
    st.tuples(st.booleans(), st.booleans(), st.booleans()),
)
def test_sort_keys_agree_with_reference_in_tuples(
    rows: list[tuple[Any, ...]], directions: tuple[bool, bool, bool]
) -> None:
    keys = [F.desc_key if d else F.sort_key for d in directions]

    def key(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(k(v) for k, v in zip(keys, row))

    expected = sorted(rows, key=functools.cmp_to_key(_ref_row_cmp(directions)))
    assert sorted(rows, key=key) == expected


# --------------------------------------------------------------------------------------------
# LIKE against a reference matcher
# --------------------------------------------------------------------------------------------


def _ref_like(s: str, p: str, esc: str) -> int:
    """A direct recursive reading of LIKE: % any run, _ one character, esc quotes the next."""

    @functools.cache
    def m(i: int, j: int) -> bool:
        if j == len(p):
            return i == len(s)
        c = p[j]
        if esc and c == esc and j + 1 < len(p):
            return i < len(s) and s[i] == p[j + 1] and m(i + 1, j + 2)
        if c == "%":
            return m(i, j + 1) or (i < len(s) and m(i + 1, j))
        if c == "_":
            return i < len(s) and m(i + 1, j + 1)
        return i < len(s) and s[i] == c and m(i + 1, j + 1)

    return 1 if m(0, 0) else 0


@given(
    st.text(alphabet="aAb%_\\|.*\n", max_size=10),
    st.text(alphabet="aAb%_\\|.*\n", max_size=8),
    st.sampled_from(["\\", "|", "a", "%", ""]),
)
def test_like_agrees_with_reference_matcher(s: str, pattern: str, escape: str) -> None:
    assert F.like(s, pattern, escape) == _ref_like(s, pattern, escape)


@given(st.text(alphabet="ab", max_size=8), st.text(alphabet="ab%_", max_size=6))
def test_like_on_likely_matches(s: str, pattern: str) -> None:
    # Patterns built from the text itself match far more often than random ones.
    for p in (pattern, s[:2] + "%", "%" + s[-2:], "_" * len(s)):
        assert F.like(s, p) == _ref_like(s, p, "\\")


# --------------------------------------------------------------------------------------------
# Comparisons against SQLite (same kind, no NULLs: where the two dialects agree)
# --------------------------------------------------------------------------------------------

_SQLITE = sqlite3.connect(":memory:", check_same_thread=False)
_OPS = [(F.eq, "="), (F.ne, "<>"), (F.lt, "<"), (F.le, "<="), (F.gt, ">"), (F.ge, ">=")]

_same_kind_pairs = st.one_of(
    st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.integers(-3, 3), st.integers(-3, 3)),
    st.tuples(st.floats(allow_nan=False), st.floats(allow_nan=False)),
    st.tuples(st.floats(-2, 2, allow_nan=False), st.floats(-2, 2, allow_nan=False)),
    st.tuples(st.text(st.characters(codec="utf-8")), st.text(st.characters(codec="utf-8"))),
    st.tuples(st.text(alphabet="aAbB ", max_size=3), st.text(alphabet="aAbB ", max_size=3)),
)


@given(_same_kind_pairs)
def test_same_kind_comparisons_agree_with_sqlite(pair: tuple[Any, Any]) -> None:
    a, b = pair
    for fn, op in _OPS:
        (expected,) = _SQLITE.execute(f"SELECT ? {op} ?", (a, b)).fetchone()
        assert fn(a, b) == expected, (fn.__name__, a, b)
        assert fn(a, a) == _SQLITE.execute(f"SELECT ? {op} ?", (a, a)).fetchone()[0]


@given(st.one_of(st.integers(-5, 5), st.text(alphabet="ab", max_size=2)), st.just(None))
def test_null_comparisons_are_null_like_sqlite(a: Any, b: None) -> None:
    for fn, op in _OPS:
        assert fn(a, b) is None is _SQLITE.execute(f"SELECT ? {op} ?", (a, b)).fetchone()[0]
        assert fn(b, a) is None


@given(st.lists(st.one_of(st.none(), st.integers(-3, 3)), max_size=4), st.integers(-3, 3))
def test_in_list_agrees_with_sqlite(items: list[Any], v: int) -> None:
    if not items:
        return
    marks = ", ".join("?" * len(items))
    (expected,) = _SQLITE.execute(f"SELECT ? IN ({marks})", (v, *items)).fetchone()
    assert F.in_list(v, tuple(items)) == expected


@given(st.sampled_from([0, 1, None]), st.sampled_from([0, 1, None]))
def test_logic_agrees_with_sqlite(a: Any, b: Any) -> None:
    for fn, op in [(F.and_, "AND"), (F.or_, "OR")]:
        (expected,) = _SQLITE.execute(f"SELECT ? {op} ?", (a, b)).fetchone()
        assert fn(a, b) == expected
    assert F.not_(a) == _SQLITE.execute("SELECT NOT ?", (a,)).fetchone()[0]


def test_float_comparisons_with_infinities() -> None:
    assert F.lt(-math.inf, 0.0) == 1
    assert F.eq(math.inf, math.inf) == 1


@pytest.mark.parametrize("value, expected", [
    (b"\x00\xff", 0), (b"12abc", 12), ("abc", 0), ("1e400", 2**63 - 1), ("-1e400", -(2**63)),
    (1e30, 2**63 - 1), (D("-1e30"), -(2**63)), (2.5, 2), (-2.5, -2), (3.5, 4),
    (D("2.5"), 3), (D("-2.5"), -3),
])
def test_cast_to_signed_never_raises_and_saturates(value: object, expected: int) -> None:
    """CAST(x AS SIGNED) reads the leading number of text and bytes (0 if none) and
    saturates at the BIGINT range, as MySQL does (with a warning there)."""
    assert F.cast_int(value) == expected
