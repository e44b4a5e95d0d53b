"""The test oracle: run the same program in rivulet and in SQLite, and compare the answers.

docs/design.md, "The contract (and the test oracle)": after ``settle()``, every view answers
what SQLite answers for the same query text over the same base-table rows, as row
multisets; order matters only where the query has ORDER BY; with a LIMIT, rows tied at the
cut may differ.

:class:`Pair` holds a rivulet database (in a fresh directory) and an in-memory SQLite
database side by side. Every statement of the program goes to both (``CREATE VIEW`` with
``?`` parameters only to rivulet; SQLite runs the view's SELECT text with the ``?`` bound
at read time). :meth:`Pair.check_view` / :meth:`Pair.check_query` compare one read.

The comparison (:func:`assert_same_answer`):

* values are normalized: ``bool`` -> ``int``, ``Decimal`` -> ``float``; numbers compare by
  value with a relative tolerance of 1e-9 (floats may be summed in a different order); a
  string never equals a number; SQLite's AVG of integers is rounded to MySQL's 4 places
  (:func:`sqlite_text`);
* no ORDER BY: the two answers are equal as multisets;
* ORDER BY: SQLite's full answer (no LIMIT/OFFSET) is cut into *blocks* of rows with equal
  sort keys. At each position of the LIMIT/OFFSET window, rivulet's row must come from the
  block SQLite has there: each block wholly inside the window must be matched exactly (as
  a multiset; rows tied on the sort key may come in any order), and the blocks cut by the
  window partially (rows tied at the cut may differ).

ORDER BY terms are found among the output columns (alias, bare name, position, or the same
expression as a SELECT item); other terms are appended to the SELECT list of the query run
on SQLite, so that each row carries its sort key.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import math
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Self

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

    #: (column of the keyed answer, descending) per ORDER BY term
    order: tuple[tuple[int, bool], ...]
    limit: int | None
    offset: int
    #: the text to run on SQLite for the full ordered answer: no LIMIT/OFFSET, and the
    #: ORDER BY terms that are not output columns appended to the SELECT list
    keyed_sql: str
    width: int | None  # output columns of the query (before appended keys), if known

    @property
    def limited(self) -> bool:
        return self.limit is not None or self.offset > 0


_LIMIT_TAIL = re.compile(
    r"\s+LIMIT\s+(\d+)(?:\s*,\s*(\d+))?(?:\s+OFFSET\s+(\d+))?\s*;?\s*$", re.IGNORECASE
)


@functools.lru_cache(maxsize=4096)
def query_shape(sql: str, dialect: str = "sqlite") -> Shape:
    """The shape of ``sql``; ``dialect`` is the oracle's, in which appended sort keys are
    written."""
    tree = sqlglot.parse_one(sql, read="mysql")
    order_node = tree.args.get("order")
    select = tree
    while isinstance(select, exp.Union):
        select = select.this
    while isinstance(select, exp.Subquery):
        select = select.this
    items = list(select.expressions) if isinstance(select, exp.Select) else []
    if any(
        isinstance(i, exp.Star) or (isinstance(i, exp.Column) and isinstance(i.this, exp.Star))
        for i in items
    ):
        width = None
    else:
        width = len(items)
    limit, offset = None, 0
    keyed = sql
    m = _LIMIT_TAIL.search(sql)
    if m is not None and (
        tree.args.get("limit") is not None or tree.args.get("offset") is not None
    ):
        a, b, c = m.group(1), m.group(2), m.group(3)
        if b is not None:  # LIMIT offset, count
            offset, limit = int(a), int(b)
        else:
            limit, offset = int(a), int(c or 0)
        keyed = sql[: m.start()]
    elif tree.args.get("limit") is not None or tree.args.get("offset") is not None:
        raise AssertionError(f"oracle: cannot find the LIMIT of {sql!r}")
    order: list[tuple[int, bool]] = []
    extra: list[str] = []
    if order_node is not None:
        for term in order_node.expressions:
            desc = bool(term.args.get("desc"))
            pos = _output_position(term.this, items)
            if pos is None:
                if not isinstance(tree, exp.Select) or width is None:
                    raise AssertionError(
                        f"oracle: ORDER BY {term.this.sql(dialect='mysql')!r} of {sql!r} is "
                        "not an output column"
                    )
                pos = width + len(extra)
                extra.append(term.this.sql(dialect=dialect))
            order.append((pos, desc))
    if extra:
        keyed = _append_select_items(keyed, extra)
    return Shape(tuple(order), limit, offset, keyed, width)


def _output_position(term: exp.Expr, items: list[exp.Expr]) -> int | None:
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
    return None


def _append_select_items(sql: str, extra: list[str]) -> str:
    """``sql`` with ``extra`` expressions added at the end of its top-level SELECT list."""
    depth, quoted = 0, False
    upper = sql.upper()
    for i, ch in enumerate(sql):
        if ch == "'":
            quoted = not quoted
        elif quoted:
            continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and upper.startswith(" FROM ", i):
            added = ", ".join(f"{e} AS __key{n}" for n, e in enumerate(extra))
            return f"{sql[:i]}, {added}{sql[i:]}"
    raise AssertionError(f"oracle: no top-level FROM in {sql!r}")


def _sort_key_of(row: Sequence[Any], order: tuple[tuple[int, bool], ...]) -> tuple:
    return tuple(norm_value(row[i]) for i, _ in order)


# --------------------------------------------------------------------------- comparison


def _fmt_rows(rows: Sequence[Sequence[Any]], limit: int = 60) -> str:
    rows = list(rows)
    shown = "\n      ".join(repr(tuple(r)) for r in rows[:limit])
    more = f"\n      ... ({len(rows) - limit} more)" if len(rows) > limit else ""
    return f"{len(rows)} row(s)" + (f":\n      {shown}{more}" if rows else "")


def answer_mismatch(
    got: Sequence[Sequence[Any]], full: Sequence[Sequence[Any]], shape: Shape
) -> str | None:
    """``None`` if ``got`` is a correct answer, else the reason.

    ``full`` is SQLite's answer without LIMIT/OFFSET, in ORDER BY order, with the sort keys
    that are not output columns appended to each row. Rows with equal sort keys form a
    *block*; a correct answer holds, position by position, rows of the block SQLite has at
    that position: every whole block of the window exactly (as a multiset), and part of
    the blocks cut by LIMIT/OFFSET.
    """
    got = [norm_row(r) for r in got]
    full = [norm_row(r) for r in full]
    width = shape.width if shape.width is not None else (len(full[0]) if full else None)
    if width is not None and any(len(r) != width for r in got):
        return f"rows of {width} column(s) expected"
    project = (lambda r: r[:width]) if width is not None else (lambda r: r)
    start = shape.offset
    stop = len(full) if shape.limit is None else min(len(full), start + shape.limit)
    window = max(0, stop - start)
    if not shape.order:
        if not shape.limited:
            return None if same_multiset(got, [project(r) for r in full]) else "different rows"
        if len(got) != window:  # LIMIT without ORDER BY: any `window` of the rows
            return f"{len(got)} row(s), expected {window}"
        return None if contained_in(got, [project(r) for r in full]) else "different rows"
    if len(got) != window:
        return f"{len(got)} row(s), expected {window}"
    # Blocks of equal sort keys over the full answer.
    block_of: list[int] = []
    blocks: list[list[Row]] = []
    prev = None
    for r in full:
        key = _sort_key_of(r, shape.order)
        if prev is None or not same_row(key, prev):
            blocks.append([])
        blocks[-1].append(project(r))
        block_of.append(len(blocks) - 1)
        prev = key
    assigned: dict[int, list[Row]] = {}
    for i, row in enumerate(got):
        assigned.setdefault(block_of[start + i], []).append(row)
    for b, rows in assigned.items():
        whole = block_of.index(b) >= start and (len(block_of) - 1 - block_of[::-1].index(b)) < stop
        if whole and not same_multiset(rows, blocks[b]):
            return "different rows (or order) among rows with equal ORDER BY keys"
        if not whole and not contained_in(rows, blocks[b]):
            return "a row at the LIMIT/OFFSET cut is not one SQLite has there (or is repeated)"
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
    full = sqlite_rows(conn, shape.keyed_sql, params)
    problem = answer_mismatch(got, full, shape)
    if problem is None:
        return
    expected = full
    if shape.order:
        expected = full[shape.offset : None if shape.limit is None else shape.offset + shape.limit]
    lines = [
        f"rivulet and SQLite disagree ({problem}){' on ' + what if what else ''}",
        f"  query:  {sql}",
        f"  params: {tuple(params)!r}",
        f"  rivulet: {_fmt_rows(got if shape.order else sorted_rows(got))}",
        f"  sqlite:  {_fmt_rows(expected if shape.order else sorted_rows(expected))}",
    ]
    if shape.limited or shape.keyed_sql != sql:
        lines.append(f"  sqlite, all rows in order (keys appended): {_fmt_rows(full)}")
    raise AssertionError("\n".join(lines))


def sqlite_rows(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Row]:
    try:
        return [tuple(r) for r in conn.execute(sqlite_text(sql), tuple(params)).fetchall()]
    except sqlite3.Error as exc:
        raise AssertionError(f"SQLite rejected {sql!r} {tuple(params)!r}: {exc}") from exc


_AVG = re.compile(r"\bAVG\s*\(", re.IGNORECASE)


def sqlite_text(sql: str) -> str:
    """``sql`` as SQLite runs it for the oracle: an ``AVG`` of integers rounded to 4 places.

    MySQL's AVG of integers is a DECIMAL with 4 places, rounded half up; SQLite's is a
    double. Where every value averaged is an integer (SQLite's ``typeof``: a DOUBLE column
    holds reals, whole ones too), SQLite's AVG is rounded to 4 places; an AVG of doubles or
    text stays a double, as in MySQL. (The few rows of the generated programs never put an
    exact quotient's fifth place on a 5 that a double misses.)"""
    out: list[str] = []
    i = 0
    for m in _AVG.finditer(sql):
        if m.start() < i or sql.count("'", 0, m.start()) % 2:
            continue  # inside an AVG already rewritten, or inside a string
        depth, j = 1, m.end()
        while depth and j < len(sql):
            depth += {"(": 1, ")": -1}.get(sql[j], 0)
            j += 1
        avg = sql[m.start():j]
        arg = re.sub(r"(?i)^\s*DISTINCT\s+", "", sql[m.end():j - 1])
        out.append(f"{sql[i:m.start()]}(CASE WHEN SUM(typeof({arg}) NOT IN ('integer', 'null'))"
                   f" THEN {avg} ELSE ROUND({avg}, 4) END)")
        i = j
    return "".join(out) + sql[i:]


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


@functools.lru_cache(maxsize=4096)
def placeholder_count(sql: str) -> int:
    tree = sqlglot.parse_one(sql, read="mysql")
    return sum(1 for _ in tree.find_all(exp.Placeholder))


# --------------------------------------------------------------------------- the pair


_CREATE_VIEW = re.compile(
    r"^\s*CREATE\s+VIEW\s+(\w+)\s+AS\s+(.*?);?\s*$", re.IGNORECASE | re.DOTALL
)


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
            self.lite.execute(f"CREATE VIEW {name} AS {sqlite_text(select_sql)}")

    def drop_view(self, name: str) -> None:
        self.db.execute(f"DROP VIEW {name}")
        sql = self.views.pop(name)
        if "?" not in sql:
            self.lite.execute(f"DROP VIEW {name}")

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
            # The IN list's placeholders go after the equality ones written before it.
            params = _splice_in_params(sql, eq, in_values)
            lite_sql = with_in_arity(sql, len(in_values))
            assert_same_answer(
                lite_sql, params, got, self.lite, what=f"view {name}.lookup_many({keys!r})"
            )
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

    def __enter__(self) -> Self:
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
