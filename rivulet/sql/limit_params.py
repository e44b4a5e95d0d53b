"""``LIMIT ?`` and ``OFFSET ?``: the values written into the statement before it is planned.

A view's parameters are keys: a read passes their values and finds the rows stored under
them. A LIMIT is no key; it cuts the answer. So a SELECT whose top-level ``LIMIT`` or
``OFFSET`` is a ``?`` is answered by the view of the same SELECT with those values written
in (``LIMIT 10``), the other parameters passed as keys: one view per page size, sharing
every operator below the cut with the others (an application uses a few page sizes).

The clause ends a SELECT (only a locking clause, which callers take off first, may come
after it), so its ``?`` are the statement's last ones, in the order written: ``LIMIT ?, ?``
is the offset then the count, ``LIMIT ? OFFSET ?`` the count then the offset. A ``?`` in
the LIMIT of a subquery or of one SELECT of a UNION is not in the tail: the planner refuses
it by name, as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from rivulet.errors import ParameterCountError, ParameterError

#: The top-level LIMIT clause at the end of a statement, with at least one ``?``.
_TAIL = re.compile(
    r"\bLIMIT\s+(?P<first>\?|\d+)\s*(?:,\s*(?P<count>\?|\d+)|\s+OFFSET\s+(?P<offset>\?|\d+))?"
    r"\s*;?\s*\Z", re.I)


def has_limit_params(node: exp.Expr) -> bool:
    """Whether the statement's own (top-level) LIMIT or OFFSET is a ``?``."""
    return any(isinstance(clause, (exp.Limit, exp.Offset))
               and isinstance(clause.expression, exp.Placeholder)
               for clause in (node.args.get("limit"), node.args.get("offset")))


def bind_limit(sql: str, params: Sequence[Any]) -> tuple[str, tuple[Any, ...]] | None:
    """``sql`` (whose top-level LIMIT or OFFSET is a ``?``: :func:`has_limit_params`) with
    the values of those ``?`` written in, and the other parameters; None when the text
    does not end with the clause (a comment after it, say): the planner then refuses it."""
    found = _TAIL.search(sql)
    if found is None or "?" not in found.group():
        return None
    if found.group("count") is not None:  # LIMIT offset, count
        marks = [("offset", found.start("first")), ("limit", found.start("count"))]
    else:
        marks = [("limit", found.start("first"))]
        if found.group("offset") is not None:
            marks.append(("offset", found.start("offset")))
    placed = [(role, at) for role, at in marks if sql[at] == "?"]
    if len(params) < len(placed):
        raise ParameterCountError(f"statement takes more parameters than the "
                                  f"{len(params)} given")
    values = params[len(params) - len(placed):]
    text = sql
    for (role, at), value in sorted(zip(placed, values), key=lambda p: -p[0][1]):
        text = text[:at] + str(_row_count(role, value)) + text[at + 1:]
    return text, tuple(params[:len(params) - len(placed)])


def _row_count(role: str, value: Any) -> int:
    """A LIMIT or OFFSET value as MySQL takes one: a whole number, not negative (a number
    in text form too, as the text protocol sends it)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParameterError(f"Incorrect arguments to {role.upper()}: {value!r} (a whole "
                             "number, not negative)")
    return value
