"""When two answers to one query are the same answer: the comparison every oracle uses.

rivulet's contract (docs/design.md, "The contract (and the test oracle)") is that a view
answers what the oracle answers for the same query text over the same rows: SQLite where
it and MySQL agree (``tests/oracle.py``), a private MariaDB where they differ
(``bench/mysql_oracle.py``). Both the tests and the benchmarks' fuzzers
(``bench/reliability_oracle.py``) compare answers this one way, so it lives here, where
both can import it:

* values are normalized: ``bool`` -> ``int``, ``Decimal`` -> ``float``; numbers compare by
  value with a relative tolerance of 1e-9 (an AVG may be summed in another order; the
  MySQL oracle checks DECIMAL values and scales exactly on top of this); a string never
  equals a number;
* no ORDER BY: the two answers are equal as multisets;
* ORDER BY: the oracle's full answer (no LIMIT/OFFSET) is cut into *blocks* of rows with
  equal sort keys. At each position of the LIMIT/OFFSET window, rivulet's row must come
  from the block the oracle has there: each block wholly inside the window must be matched
  exactly (as a multiset; rows tied on the sort key may come in any order), and the blocks
  cut by the window partially (rows tied at the cut may differ).

ORDER BY terms are found among the output columns (alias, bare name, position, or the same
expression as a SELECT item); other terms are appended to the SELECT list of the query the
oracle runs (:func:`query_shape`), so that each row carries its sort key.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

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
    #: the text to run on the oracle for the full ordered answer: no LIMIT/OFFSET, and the
    #: ORDER BY terms that are not output columns appended to the SELECT list
    keyed_sql: str
    width: int | None  # output columns of the query (before appended keys), if known
    #: how many sort keys ``keyed_sql`` appends to each row (after all of a ``*``'s columns)
    appended: int = 0

    @property
    def limited(self) -> bool:
        return self.limit is not None or self.offset > 0

    def shown(self, row: Sequence[Any]) -> Sequence[Any]:
        """A row of the keyed answer without its appended sort keys: what the query shows."""
        return row[:len(row) - self.appended] if self.appended else row


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
    while isinstance(select, exp.SetOperation):  # (UNION, INTERSECT, EXCEPT)
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
            # (Under a ``*`` only a position is known before the answer: other terms are
            # appended, and found counting back from the end of the row.)
            numbered = isinstance(term.this, exp.Literal) and not term.this.is_string
            pos = (_output_position(term.this, items) if width is not None or numbered
                   else None)
            if pos is None:
                if not isinstance(tree, exp.Select):
                    raise AssertionError(
                        f"oracle: ORDER BY {term.this.sql(dialect='mysql')!r} of {sql!r} is "
                        "not an output column"
                    )
                pos = ~len(extra) if width is None else width + len(extra)
                extra.append(term.this.sql(dialect=dialect))
            order.append((pos, desc))
    if width is None:  # (~i was the i-th appended key: it is len(extra) - i from the end)
        order = [(pos if pos >= 0 else ~pos - len(extra), desc) for pos, desc in order]
    if extra:
        keyed = _append_select_items(keyed, extra)
    return Shape(tuple(order), limit, offset, keyed, width, len(extra))


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


def fmt_rows(rows: Sequence[Sequence[Any]], limit: int = 60) -> str:
    rows = list(rows)
    shown = "\n      ".join(repr(tuple(r)) for r in rows[:limit])
    more = f"\n      ... ({len(rows) - limit} more)" if len(rows) > limit else ""
    return f"{len(rows)} row(s)" + (f":\n      {shown}{more}" if rows else "")


def answer_mismatch(
    got: Sequence[Sequence[Any]], full: Sequence[Sequence[Any]], shape: Shape
) -> str | None:
    """``None`` if ``got`` is a correct answer, else the reason.

    ``full`` is the oracle's answer without LIMIT/OFFSET, in ORDER BY order, with the sort keys
    that are not output columns appended to each row. Rows with equal sort keys form a
    *block*; a correct answer holds, position by position, rows of the block the oracle has at
    that position: every whole block of the window exactly (as a multiset), and part of
    the blocks cut by LIMIT/OFFSET.
    """
    got = [norm_row(r) for r in got]
    full = [norm_row(r) for r in full]
    width = shape.width if shape.width is not None else (
        len(full[0]) - shape.appended if full else None)
    if width is not None and any(len(r) != width for r in got):
        return f"rows of {width} column(s) expected"
    project = shape.shown
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
            return "a row at the LIMIT/OFFSET cut is not one the oracle has there (or is repeated)"
    return None
