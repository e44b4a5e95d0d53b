"""The test oracle: run the same program in rivulet and in SQLite, and compare the answers.

design.md, "The contract (and the test oracle)": after ``settle()``, every view answers
what SQLite answers for the same query text over the same base-table rows, as row
multisets; order matters only where the query has ORDER BY; with a LIMIT, rows tied at the
cut may differ.

:class:`Pair` holds a rivulet database (in a fresh directory) and an in-memory SQLite
database side by side. Every statement of the program goes to both (``CREATE VIEW`` with
``?`` parameters only to rivulet; SQLite runs the view's SELECT text with the ``?`` bound
at read time). :meth:`Pair.check_view` / :meth:`Pair.check_query` compare one read.

The comparison (:func:`assert_same_answer`):

* values are normalized: ``bool`` -> ``int``, ``Decimal`` -> ``float``; numbers compare by
  value with a relative tolerance of 1e-9 (rivulet's AVG is a float, SQLite's too, but
  they may be summed in a different order); a string never equals a number;
* no ORDER BY: the two answers are equal as multisets;
* ORDER BY without LIMIT/OFFSET: the same multiset, and the sequence of sort keys is equal
  (rows tied on the sort key may come in any order);
* ORDER BY with LIMIT/OFFSET: the sequence of sort keys equals SQLite's (so the cut is at
  the same place), and every row rivulet returns is a row of SQLite's unlimited answer
  (as a multiset: no row is returned more often than it exists).

The ORDER BY terms of a query must name its output columns (by alias, bare name, position,
or an expression written exactly as in the SELECT list) so that the sort key of an answer
row can be read off the row.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import shutil
import sqlite3
import tempfile
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import sqlglot
from sqlglot import exp

import rivulet

REL_TOL = 1e-9

Row = tuple


# --------------------------------------------------------------------------- values


def norm_value(v: Any) -> Any:
    """A value as the comparison sees it (bool -> int, Decimal -> float)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, decimal.Decimal):
        return float(v)
    return v


def norm_row(row: Sequence[Any]) -> Row:
    return tuple(norm_value(v) for v in row)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same_value(a: Any, b: Any) -> bool:
    a, b = norm_value(a), norm_value(b)
    if a is None or b is None:
        return a is None and b is None
    if _is_number(a) and _is_number(b):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
    if type(a) is not type(b):
        return False
    return a == b


def same_row(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))


def _canon(v: Any) -> tuple:
    """A total order over normalized values, used only to line two multisets up."""
    v = norm_value(v)
    if v is None:
        return (0,)
    if _is_number(v):
        # Rounded, so that values equal within the tolerance sort to the same place.
        return (1, float(f"{float(v):.9g}"))
    if isinstance(v, str):
        return (2, v)
    if isinstance(v, bytes):
        return (3, v)
    if isinstance(v, (dt.datetime, dt.date)):
        return (4, v.isoformat())
    return (5, repr(v))


def canon_row(row: Sequence[Any]) -> tuple:
    return tuple(_canon(v) for v in row)


def sorted_rows(rows: Iterable[Sequence[Any]]) -> list[Row]:
    return sorted((norm_row(r) for r in rows), key=canon_row)


def same_multiset(a: Iterable[Sequence[Any]], b: Iterable[Sequence[Any]]) -> bool:
    sa, sb = sorted_rows(a), sorted_rows(b)
    if len(sa) != len(sb):
        return False
    if all(same_row(x, y) for x, y in zip(sa, sb)):
        return True
    # Values within the tolerance but on two sides of a rounding step: match greedily.
    return contained_in(sa, sb)


def contained_in(small: Iterable[Sequence[Any]], big: Iterable[Sequence[Any]]) -> bool:
    """Every row of ``small`` matches a distinct row of ``big`` (multiset containment)."""
    pool = [norm_row(r) for r in big]
    used = [False] * len(pool)
    for row in small:
        for i, candidate in enumerate(pool):
            if not used[i] and same_row(row, candidate):
                used[i] = True
                break
        else:
            return False
    return True


# --------------------------------------------------------------------------- query shape


@dataclass(frozen=True)
class Shape:
    """What the comparison needs to know about a query's top level."""

    order: tuple[tuple[int, bool], ...]  # (output column, descending)
    limited: bool  # LIMIT or OFFSET present
    unlimited_sql: str  # the text with the top-level LIMIT/OFFSET removed


_LIMIT_TAIL = re.compile(
    r"\s+LIMIT\s+\d+(\s*,\s*\d+)?(\s+OFFSET\s+\d+)?\s*;?\s*$", re.IGNORECASE
)


def query_shape(sql: str) -> Shape:
    tree = sqlglot.parse_one(sql, read="mysql")
    order_node = tree.args.get("order")
    limited = tree.args.get("limit") is not None or tree.args.get("offset") is not None
    select = tree
    while isinstance(select, exp.Union):
        select = select.this
    while isinstance(select, exp.Subquery):
        select = select.this
    items = list(select.expressions) if isinstance(select, exp.Select) else []
    order: list[tuple[int, bool]] = []
    if order_node is not None:
        for term in order_node.expressions:
            order.append((_output_position(term.this, items, sql), bool(term.args.get("desc"))))
    unlimited = sql
    if limited:
        unlimited, n = _LIMIT_TAIL.subn("", sql)
        if n != 1:
            raise AssertionError(f"oracle: cannot strip the LIMIT of {sql!r}")
    return Shape(tuple(order), limited, unlimited)


def _output_position(term: exp.Expr, items: list[exp.Expr], sql: str) -> int:
    if isinstance(term, exp.Literal) and not term.is_string:
        return int(term.this) - 1
    if isinstance(term, exp.Column) and not term.table:
        for i, item in enumerate(items):
            if isinstance(item, exp.Alias) and item.alias.lower() == term.name.lower():
                return i
        for i, item in enumerate(items):
            if isinstance(item, exp.Column) and item.name.lower() == term.name.lower():
                return i
    for i, item in enumerate(items):
        inner = item.this if isinstance(item, exp.Alias) else item
        if inner == term:
            return i
    raise AssertionError(
        f"oracle: ORDER BY {term.sql(dialect='mysql')!r} of {sql!r} is not an output column; "
        "write ORDER BY over selected columns so that answers can be compared"
    )


def _sort_key_of(row: Sequence[Any], order: tuple[tuple[int, bool], ...]) -> tuple:
    return tuple(norm_value(row[i]) for i, _ in order)


# --------------------------------------------------------------------------- comparison


def _fmt_rows(rows: Sequence[Sequence[Any]], limit: int = 60) -> str:
    rows = list(rows)
    shown = "\n      ".join(repr(tuple(r)) for r in rows[:limit])
    more = f"\n      ... ({len(rows) - limit} more)" if len(rows) > limit else ""
    return f"{len(rows)} row(s)" + (f":\n      {shown}{more}" if rows else "")


def answer_mismatch(
    sql: str,
    params: Sequence[Any],
    got: Sequence[Sequence[Any]],
    expected: Sequence[Sequence[Any]],
    unlimited: Sequence[Sequence[Any]] | None,
    shape: Shape,
) -> str | None:
    """``None`` if ``got`` is a correct answer, else the reason."""
    got = [norm_row(r) for r in got]
    expected = [norm_row(r) for r in expected]
    if any(len(r) != len(expected[0]) for r in got) if expected else False:
        return "rows have a different number of columns"
    if not shape.order:
        return None if same_multiset(got, expected) else "different rows"
    got_keys = [_sort_key_of(r, shape.order) for r in got]
    exp_keys = [_sort_key_of(r, shape.order) for r in expected]
    if len(got_keys) != len(exp_keys) or not all(
        same_row(a, b) for a, b in zip(got_keys, exp_keys)
    ):
        return "different sequence of ORDER BY keys"
    if not shape.limited:
        return None if same_multiset(got, expected) else "different rows"
    assert unlimited is not None
    if not contained_in(got, unlimited):
        return "a returned row is not in the unlimited answer (or is returned too often)"
    return None


def assert_same_answer(
    sql: str,
    params: Sequence[Any],
    got: Sequence[Sequence[Any]],
    conn: sqlite3.Connection,
    *,
    what: str = "",
) -> None:
    """``got`` (rivulet's rows) is a correct answer to ``sql`` with ``params`` over ``conn``."""
    shape = query_shape(sql)
    expected = sqlite_rows(conn, sql, params)
    unlimited = sqlite_rows(conn, shape.unlimited_sql, params) if shape.limited else None
    problem = answer_mismatch(sql, params, got, expected, unlimited, shape)
    if problem is None:
        return
    lines = [
        f"rivulet and SQLite disagree ({problem}){' on ' + what if what else ''}",
        f"  query:  {sql}",
        f"  params: {tuple(params)!r}",
        f"  rivulet: {_fmt_rows(got if shape.order else sorted_rows(got))}",
        f"  sqlite:  {_fmt_rows(expected if shape.order else sorted_rows(expected))}",
    ]
    if unlimited is not None:
        lines.append(f"  sqlite without LIMIT: {_fmt_rows(unlimited)}")
    raise AssertionError("\n".join(lines))


def sqlite_rows(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Row]:
    try:
        return [tuple(r) for r in conn.execute(sql, tuple(params)).fetchall()]
    except sqlite3.Error as exc:
        raise AssertionError(f"SQLite rejected {sql!r} {tuple(params)!r}: {exc}") from exc


# --------------------------------------------------------------------------- IN lists

_IN_PLACEHOLDERS = re.compile(r"\bIN\s*\(\s*\?(\s*,\s*\?)*\s*\)", re.IGNORECASE)


def with_in_arity(sql: str, n: int) -> str:
    """``sql`` with its ``IN (?, ...)`` parameter list written with ``n`` placeholders."""
    found = _IN_PLACEHOLDERS.findall(sql)
    if not found:
        return sql
    return _IN_PLACEHOLDERS.sub("IN (" + ", ".join(["?"] * n) + ")", sql, count=1)


def in_arity(sql: str) -> int | None:
    m = _IN_PLACEHOLDERS.search(sql)
    return None if m is None else m.group(0).count("?")


def placeholder_count(sql: str) -> int:
    tree = sqlglot.parse_one(sql, read="mysql")
    return sum(1 for _ in tree.find_all(exp.Placeholder))


# --------------------------------------------------------------------------- the pair


_CREATE_VIEW = re.compile(r"^\s*CREATE\s+VIEW\s+(\w+)\s+AS\s+(.*?);?\s*$", re.IGNORECASE | re.DOTALL)


class Pair:
    """A rivulet database and an in-memory SQLite database fed the same program."""

    def __init__(self, path: str | None = None) -> None:
        self.own_dir = path is None
        self.path = path or tempfile.mkdtemp(prefix="rivulet-diff-")
        self.db = rivulet.open(self.path)
        self.lite = sqlite3.connect(":memory:", isolation_level=None)
        self.lite.execute("PRAGMA case_sensitive_like = ON")
        self.views: dict[str, str] = {}  # name -> SELECT text

    # ..................................................................... program

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """A DDL or write statement, on both sides. Errors must agree."""
        m = _CREATE_VIEW.match(sql)
        if m is not None:
            return self.create_view(m.group(1), m.group(2))
        lite_error = riv_error = None
        lite_count = riv_count = None
        try:
            cur = self.lite.execute(sql, tuple(params))
            lite_count = cur.rowcount
        except sqlite3.Error as exc:
            lite_error = exc
        try:
            riv_count = self.db.execute(sql, params)
        except rivulet.RivuletError as exc:
            riv_error = exc
        if (lite_error is None) != (riv_error is None):
            raise AssertionError(
                f"only one side rejected {sql!r} {tuple(params)!r}: "
                f"sqlite: {lite_error!r}, rivulet: {riv_error!r}"
            )
        if lite_error is None and sql.lstrip().upper().startswith(("DELETE", "INSERT")):
            assert riv_count == lite_count, (
                f"row count of {sql!r}: rivulet {riv_count}, sqlite {lite_count}"
            )
        return riv_count

    def create_view(self, name: str, select_sql: str) -> None:
        self.db.execute(f"CREATE VIEW {name} AS {select_sql}")
        self.views[name] = select_sql
        if "?" not in select_sql:
            self.lite.execute(f"CREATE VIEW {name} AS {select_sql}")

    def insert_many(self, table: str, rows: Sequence[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        self.db.table(table).insert_many(rows)
        if rows:
            marks = ", ".join(["?"] * len(rows[0]))
            self.lite.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)

    def settle(self) -> None:
        self.db.settle()

    # ..................................................................... reads

    def check_view(self, name: str, params: Sequence[Any] = ()) -> None:
        """``view(name).lookup(*params)`` equals SQLite's answer to the view's SELECT."""
        sql = self.views[name]
        arity = in_arity(sql)
        lite_sql = sql
        if arity is not None:
            lite_sql = with_in_arity(sql, arity + len(params) - placeholder_count(sql))
        got = self.db.view(name).lookup(*params)
        assert_same_answer(lite_sql, params, got, self.lite, what=f"view {name}.lookup")

    def check_view_many(self, name: str, keys: Sequence[Any]) -> None:
        """``lookup_many(keys)`` of a view with equality (or one IN) parameters.

        For ``= ?`` views it is the multiset union of the answers for the distinct keys;
        for an ``IN (?, ...)`` view whose keys share their equality values, it is the
        answer with the IN list made of the keys' last values.
        """
        sql = self.views[name]
        got = self.db.view(name).lookup_many(keys)
        tuples = [k if isinstance(k, tuple) else (k,) for k in keys]
        if in_arity(sql) is not None:
            prefixes = {t[:-1] for t in tuples}
            assert len(prefixes) == 1, "oracle: IN-view keys must share their equality values"
            eq = list(prefixes.pop())
            in_values = [t[-1] for t in tuples]
            # The IN list's placeholders sit after the equality ones that precede it in
            # the text; find where by rendering.
            params = _splice_in_params(sql, eq, in_values)
            lite_sql = with_in_arity(sql, len(in_values))
            assert_same_answer(lite_sql, params, got, self.lite,
                               what=f"view {name}.lookup_many({keys!r})")
            return
        shape = query_shape(sql)
        assert not shape.order, "oracle: lookup_many is compared only on unordered views"
        expected: list[Row] = []
        for t in dict.fromkeys(tuples):
            expected.extend(sqlite_rows(self.lite, sql, t))
        if not same_multiset(got, expected):
            raise AssertionError(
                f"rivulet and SQLite disagree on view {name}.lookup_many({keys!r})\n"
                f"  query: {sql}\n"
                f"  rivulet: {_fmt_rows(sorted_rows(got))}\n"
                f"  sqlite (union over distinct keys): {_fmt_rows(sorted_rows(expected))}"
            )

    def check_query(self, sql: str, params: Sequence[Any] = ()) -> None:
        """``db.query(sql, params)`` (an ad-hoc SELECT) equals SQLite's answer."""
        got = self.db.query(sql, params)
        lite_sql = sql
        arity = in_arity(sql)
        if arity is not None:
            lite_sql = with_in_arity(sql, arity + len(params) - placeholder_count(sql))
        assert_same_answer(lite_sql, params, got, self.lite, what="db.query")

    # ..................................................................... lifetime

    def reopen(self) -> None:
        """Close rivulet and open the same directory again (SQLite stays as it is)."""
        self.db.close()
        self.db = rivulet.open(self.path)

    def close(self) -> None:
        try:
            self.db.close()
        finally:
            self.lite.close()
            if self.own_dir:
                shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> "Pair":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _splice_in_params(sql: str, eq: list[Any], in_values: list[Any]) -> list[Any]:
    """Parameters in text order for ``sql`` whose IN list gets ``in_values``."""
    m = _IN_PLACEHOLDERS.search(sql)
    assert m is not None
    before = placeholder_count_text(sql[: m.start()])
    return eq[:before] + list(in_values) + eq[before:]


def placeholder_count_text(text: str) -> int:
    """``?`` outside string literals (our generated SQL quotes strings with '...')."""
    n, quoted = 0, False
    for ch in text:
        if ch == "'":
            quoted = not quoted
        elif ch == "?" and not quoted:
            n += 1
    return n
