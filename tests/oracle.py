"""The test oracle: run the same program in rivulet and in SQLite, and compare the answers.

docs/design.md, "The contract (and the test oracle)": after ``settle()``, every view answers
what SQLite answers for the same query text over the same base-table rows, as row
multisets; order matters only where the query has ORDER BY; with a LIMIT, rows tied at the
cut may differ.

:class:`Pair` holds a rivulet database (in a fresh directory) and an in-memory SQLite
database side by side. Every statement of the program goes to both (``CREATE VIEW`` with
``?`` parameters only to rivulet; SQLite runs the view's SELECT text with the ``?`` bound
at read time). :meth:`Pair.check_view` / :meth:`Pair.check_query` compare one read.

The comparison (:func:`assert_same_answer`) is :func:`bench.answers.answer_mismatch`:
multisets, ORDER BY blocks and LIMIT cuts, numbers within a relative 1e-9, a string never
equal to a number; it lives in ``bench/answers.py`` because the benchmarks' fuzzers compare
answers the same way.
"""

from __future__ import annotations

import functools
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

import sqlglot
from hypothesis import strategies as st
from sqlglot import exp

import rivulet
from bench.answers import (  # the comparison, shared with the benchmarks' fuzzers
    REL_TOL,
    Row,
    Shape,
    answer_mismatch,
    canon_row,
    contained_in,
    norm_row,
    norm_value,
    query_shape,
    same_multiset,
    same_row,
    same_value,
    sorted_rows,
)
from bench.answers import fmt_rows as _fmt_rows

__all__ = ["REL_TOL", "Pair", "Row", "Shape", "ViewSet", "answer_mismatch",
           "apply_outer_inner_write", "assert_same_answer", "canon_row", "contained_in",
           "in_arity", "norm_row", "norm_value", "operation_lists", "placeholder_count",
           "query_shape", "run_operations", "same_multiset", "same_row", "same_value",
           "sorted_rows", "sqlite_rows", "with_in_arity"]


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

    @classmethod
    def of(cls, schema: Sequence[str], views: Mapping[str, str],
           path: str | None = None) -> Self:
        """A pair fed ``schema`` (DDL and writes) and then ``views`` (name -> SELECT)."""
        pair = cls(path)
        for statement in schema:
            pair.execute(statement)
        for name, sql in views.items():
            pair.create_view(name, sql)
        return pair

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

    def transaction(self, statements: Sequence[str]) -> None:
        """``statements`` in one rivulet transaction (one propagation wave), then in SQLite."""
        with self.db.transaction() as tx:
            for sql in statements:
                tx.execute(sql)
        for sql in statements:
            self.lite.execute(sql)

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

    def reopen(self, **options: Any) -> None:
        """Close rivulet and open the same directory again, with ``options`` for
        :func:`rivulet.open` (SQLite stays as it is)."""
        self.db.close()
        self.db = rivulet.open(self.path, **options)

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


# --------------------------------------------------------------------------- harnesses


def operation_lists(*writes: st.SearchStrategy[tuple[Any, ...]],
                    max_size: int) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    """Lists of at most ``max_size`` operations for :func:`run_operations`: the test's own
    ``writes`` (tuples whose first item names the write), and ``("evict",)`` and
    ``("check",)`` drawn among them."""
    return st.lists(st.one_of(*writes, st.tuples(st.just("evict")), st.tuples(st.just("check"))),
                    max_size=max_size)


def run_operations(pair: Pair, operations: Iterable[tuple[Any, ...]],
                   apply: Callable[[Pair, tuple[Any, ...]], None],
                   check_all: Callable[[Pair], None]) -> None:
    """Feed Hypothesis-generated ``operations`` to ``pair``, then check and close it.

    The generated-writes tests draw lists of tuples whose first item names the operation;
    two names mean the same in all of them: ``("evict",)`` settles and evicts every
    evictable key (so the next reads refill partial state by upqueries), ``("check",)``
    runs ``check_all``. Every other operation is the test's own write, made by ``apply``.
    ``check_all`` runs once more at the end; the pair is closed even when a check fails.
    """
    try:
        for op in operations:
            if op[0] == "evict":
                pair.settle()
                pair.db.evict()
            elif op[0] == "check":
                check_all(pair)
            else:
                apply(pair, op)
        check_all(pair)
    finally:
        pair.close()


#: A view with ``?`` parameters and the parameter tuples it is read by.
ParamView = tuple[str, Sequence[Sequence[Any]]]


@dataclass(frozen=True)
class ViewSet:
    """A schema and the views a test suite reads over it, checked all at once.

    The suites of subqueries keep one program (tables, views without parameters, views
    with parameters each read by a list of parameter tuples) and compare every view after
    each write; their views are also read ad hoc, as ``db.query`` of the same text. Works
    for :class:`Pair` (SQLite's answers) and ``MySQLPair`` (MariaDB's) alike, for views
    without parameters; ``MySQLPair`` takes no ``param_views``.
    """

    schema: Sequence[str]
    views: Mapping[str, str]
    param_views: Mapping[str, ParamView] = field(default_factory=dict)

    def create_tables(self, pair: Any) -> None:
        for sql in self.schema:
            pair.execute(sql)

    def create_views(self, pair: Any) -> None:
        for name, sql in self.views.items():
            pair.create_view(name, sql)
        for name, (sql, _) in self.param_views.items():
            pair.create_view(name, sql)

    def program(self, pair: Any) -> None:
        """The tables, then the views (over no rows yet)."""
        self.create_tables(pair)
        self.create_views(pair)

    def check_all(self, pair: Any, adhoc: bool = False) -> None:
        """Every view (each parameterized one by each of its tuples) equals the oracle's
        answer; with ``adhoc``, every view's text as ``db.query`` too (a parameterized
        one with its second tuple)."""
        pair.settle()
        for name in self.views:
            pair.check_view(name)
        for name, (_, params) in self.param_views.items():
            for p in params:
                pair.check_view(name, p)
        if adhoc:
            for sql in self.views.values():
                pair.check_query(sql)
            for sql, params in self.param_views.values():
                pair.check_query(sql, params[1])

    def assert_param_views_partial(self, pair: Any) -> None:
        """Every view keyed by a parameter keeps partial state."""
        for name in self.param_views:
            assert pair.db.view(name).partial, name


def apply_outer_inner_write(pair: Any, write: tuple[str, Any, Any, Any]) -> bool:
    """Make one of the generated writes the subquery suites share; False for another one.

    Their outer table is ``t (id, k, x, ...)`` and their inner ``u (id, k, c, ...)``,
    ``k`` the correlation key and ``x`` / ``c`` the compared values: ``update_t`` and
    ``update_u`` set the compared value to ``a`` and the key to ``b`` in the rows whose id
    is ``c`` modulo 4; ``delete_<table>`` deletes the rows whose id is ``a`` modulo 4. The
    inserts (each suite's columns differ) and the suite's own tables stay the caller's.
    """
    op, a, b, c = write
    if op == "update_t":
        pair.execute("UPDATE t SET x = ?, k = ? WHERE id % 4 = ?", (a, b, c))
    elif op == "update_u":
        pair.execute("UPDATE u SET c = ?, k = ? WHERE id % 4 = ?", (a, b, c))
    elif op.startswith("delete_"):
        pair.execute(f"DELETE FROM {op.removeprefix('delete_')} WHERE id % 4 = ?", (a,))
    else:
        return False
    return True
