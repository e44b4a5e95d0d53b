"""Which nodes of a statement read the clock (``NOW()``, ``CURRENT_TIMESTAMP``, ``CURDATE()``,
``UNIX_TIMESTAMP()``...), and the instant a read of them is answered at.

Why this module exists: sqlglot reads MySQL's time functions as several kinds of node (a
``CurrentTimestamp`` for the bare keyword, an ``Anonymous`` call for ``NOW(6)``, a column
for ``UTC_DATE`` without parentheses). Finding them is written once here, for the planner
(which computes them: rivulet/values/clock.py), for the engine and the servers (a read
that calls one is computed at its statement's instant, never kept as a view) and for the
DDL (a column's ``DEFAULT CURRENT_TIMESTAMP``).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from sqlglot import exp

from rivulet.errors import SqlSyntaxError, TooBigPrecisionError
from rivulet.sql.parse import DIALECT, error_at, position
from rivulet.values.clock import MAX_FSP

#: Meta key under which a read notes the instant its clock functions give (see :func:`stamp`).
STAMPED = "rivulet_clock"

#: The time functions by name, each with the function of an instant that computes it
#: (rivulet/values/clock.py) and whether it takes a fractional-digits argument.
_BY_NAME: dict[str, tuple[str, bool]] = {
    **dict.fromkeys(("NOW", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP", "SYSDATE",
                     "UTC_TIMESTAMP"), ("now_at", True)),
    **dict.fromkeys(("CURDATE", "CURRENT_DATE", "UTC_DATE"), ("curdate_at", False)),
    **dict.fromkeys(("CURTIME", "CURRENT_TIME", "UTC_TIME"), ("curtime_at", True)),
    "UNIX_TIMESTAMP": ("unix_timestamp_at", False),
}
#: The names of the time functions (computed here, not by the function registry).
CLOCK_FUNCTIONS = frozenset(_BY_NAME)
#: sqlglot's nodes for the keywords written without parentheses.
_NODES: dict[type, str] = {
    exp.CurrentTimestamp: "CURRENT_TIMESTAMP", exp.CurrentDate: "CURRENT_DATE",
    exp.CurrentTime: "CURRENT_TIME", exp.Localtime: "LOCALTIME",
    exp.Localtimestamp: "LOCALTIMESTAMP",
}
#: The keywords that are a call without parentheses too (sqlglot reads them as columns).
_BARE_WORDS = frozenset({"UTC_DATE", "UTC_TIME", "UTC_TIMESTAMP"})


@dataclass(frozen=True)
class ClockCall:
    """One call of a time function: its name as written (upper case), the function of an
    instant that computes it and its fractional digits."""

    name: str
    function: str
    fsp: int


def clock_call(node: exp.Expr) -> ClockCall | None:
    """The time function ``node`` calls, or None if it is none. A call with arguments a
    time function does not take is MySQL's error (a syntax error; 1426 for ``NOW(7)``)."""
    name = _clock_name(node)
    if name is None:
        return None
    args = [node.this] if type(node) in _NODES and node.this is not None else (
        list(node.expressions) if isinstance(node, exp.Anonymous) else [])
    function, takes_fsp = _BY_NAME[name]
    if len(args) > (1 if takes_fsp else 0) or (args and not _digits(args[0])):
        line, col = position(node)
        raise SqlSyntaxError(node.sql(dialect=DIALECT), line=line, col=col, reason=(
            f"{name}() takes {'its fractional digits, an integer' if takes_fsp else 'none'}"))
    fsp = int(args[0].this) if args else 0
    if fsp > MAX_FSP:
        raise error_at(node, f"Too-big precision {fsp} specified for '{name.lower()}'. "
                             f"Maximum is {MAX_FSP}.", TooBigPrecisionError)
    return ClockCall(name, function, fsp)


def _clock_name(node: exp.Expr) -> str | None:
    """The name of the time function ``node`` calls (its arguments unchecked), or None."""
    if type(node) in _NODES:
        return _NODES[type(node)]
    if isinstance(node, exp.Anonymous) and node.name.upper() in _BY_NAME:
        name = node.name.upper()
        return None if name == "UNIX_TIMESTAMP" and node.expressions else name
    if isinstance(node, exp.Column) and not node.table and node.name.upper() in _BARE_WORDS \
            and not node.this.args.get("quoted"):
        return node.name.upper()
    return None


def _digits(node: exp.Expr) -> bool:
    """Whether ``node`` is an unsigned integer literal."""
    return isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit()


def reads_clock(node: exp.Expr) -> bool:
    """Whether the statement ``node`` calls a time function anywhere."""
    return any(_clock_name(n) is not None for n in node.walk())


def stamp(node: exp.Expr, at: _dt.datetime) -> exp.Expr:
    """``node`` with each of its time functions noted to give their value at ``at`` (the
    planner then computes them as constants: a read answered once, at its statement)."""
    for n in node.walk():
        if _clock_name(n) is not None:
            n.meta[STAMPED] = at
    return node


def stamped(node: exp.Expr) -> _dt.datetime | None:
    """The instant :func:`stamp` noted on a time function's node, if any."""
    return (node.meta or {}).get(STAMPED)
