"""The date calls MySQL writes with a unit: ``x +/- INTERVAL n unit``, ``DATE_ADD``,
``DATE_SUB``, ``TIMESTAMPADD``, ``TIMESTAMPDIFF``, ``EXTRACT``, and ``DATE_FORMAT``.

Why this module exists: the unit is a word of the syntax, not a value (``INTERVAL 1 DAY``,
``TIMESTAMPDIFF(MONTH, a, b)``, ``EXTRACT(YEAR FROM d)``), which sqlglot reads as an
``Interval`` node, a column named ``MONTH`` or a ``Var``. Here each becomes a call of the
value library's function (rivulet/values/intervals.py, date_format.py) with the unit as a
constant text argument; then their types, and the arguments whose MySQL answer rivulet
does not give (refused by name): a TIME (read as a time of the current day), a number
where MySQL reads a date its own way, a fractional interval. Text moved by an interval is
text (MySQL 8's: a datetime shows a fraction only if it has one; MariaDB always shows six
digits).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp

from rivulet.errors import ArgumentCountError, UnsupportedSqlError
from rivulet.plan.ir import Call, Expr, Lit, Param
from rivulet.sql.parse import error_at, unsupported
from rivulet.values import types
from rivulet.values.date_format import CLOCK_EXTRACT_UNITS, EXTRACT_UNITS
from rivulet.values.intervals import (
    DATE_UNITS,
    INTEGER_TEXT,
    MICROSECOND_UNITS,
    SIMPLE_UNITS,
    TIME_UNITS,
    UNITS,
)
from rivulet.values.schema import BOOL, DATE, DATETIME, INT, STR, TIME
from rivulet.values.types import SqlType

Translate = Callable[[exp.Expr], Expr]

#: The calls whose first argument is the date moved (their unit is their last argument).
#: (The calls with a unit are named in lower case, as the value library's functions: they
#: are not the registry's, whose functions take any arguments.)
SHIFTS = frozenset({"date_add", "date_sub"})
#: The calls of this module whose unit is their first argument.
UNIT_FIRST = frozenset({"timestampdiff", "extract"})
#: Every function this module plans.
DATE_CALLS = SHIFTS | UNIT_FIRST | {"DATE_FORMAT"}
#: The names of calls written with a unit (``TIMESTAMPADD`` becomes a DATE_ADD).
_WITH_UNIT = {"DATE_ADD", "DATE_SUB", "ADDDATE", "SUBDATE", "TIMESTAMPADD", "TIMESTAMPDIFF"}


def unit_name(call: exp.Expr, node: exp.Expr | None,
              allowed: Sequence[str] | frozenset[str], what: str) -> str:
    """The unit ``node`` names (a ``Var`` or a bare column name), upper case; a unit
    ``what`` (the call's name) does not take is refused."""
    name = node.name.upper() if isinstance(node, (exp.Var, exp.Column)) else ""
    if isinstance(node, exp.Column) and node.table:
        name = ""
    if name not in allowed:
        raise unsupported(call, f"{what} with that unit")
    return name


def interval_operand(node: exp.Interval, t: Translate, what: str) -> tuple[Expr, str]:
    """``INTERVAL n unit``: ``n`` and the unit. A constant of a simple unit must be an
    integer: sqlglot reads ``INTERVAL 1.5 DAY`` and ``INTERVAL '1.5' DAY`` alike, which
    MySQL reads as 2 and 1 days."""
    unit = unit_name(node, node.args.get("unit"), UNITS, what)
    value = node.this
    while isinstance(value, exp.Paren):
        value = value.this
    if (unit in SIMPLE_UNITS and isinstance(value, exp.Literal)
            and not INTEGER_TEXT.fullmatch(value.name)):
        raise unsupported(node, "INTERVAL of a constant that is not an integer")
    return t(node.this), unit


def shift_operation(node: exp.Add | exp.Sub, t: Translate) -> Expr | None:
    """``x + INTERVAL n unit``, ``INTERVAL n unit + x``, ``x - INTERVAL n unit`` (None if
    ``node`` adds no interval)."""
    left, right = node.this, node.expression
    if isinstance(left, exp.Interval) and isinstance(node, exp.Add):
        left, right = right, left
    if isinstance(left, exp.Interval):
        raise unsupported(node, "INTERVAL on the left of -")
    if not isinstance(right, exp.Interval):
        return None
    n, unit = interval_operand(right, t, "INTERVAL")
    fn = "date_add" if isinstance(node, exp.Add) else "date_sub"
    return Call(fn, (t(left), n, Lit(unit, STR)))


def unit_call(node: exp.Anonymous, t: Translate) -> Expr | None:
    """``DATE_ADD(x, INTERVAL n unit)`` and the other calls written with a unit; None if
    ``node`` is none of them."""
    name = node.name.upper()
    if name not in _WITH_UNIT:
        return None
    args = list(node.expressions)
    if len(args) != (3 if name.startswith("TIMESTAMP") else 2):
        raise error_at(node, f"Incorrect parameter count in the call to native function "
                             f"'{name}'", ArgumentCountError)
    if name == "TIMESTAMPDIFF":
        unit = unit_name(node, args[0], SIMPLE_UNITS, name)
        return Call("timestampdiff", (Lit(unit, STR), t(args[1]), t(args[2])))
    if name == "TIMESTAMPADD":
        unit = unit_name(node, args[0], SIMPLE_UNITS, name)
        count = args[1]
        if isinstance(count, exp.Literal) and not INTEGER_TEXT.fullmatch(count.name):
            raise unsupported(node, "TIMESTAMPADD of a constant that is not an integer")
        return Call("date_add", (t(args[2]), t(count), Lit(unit, STR)))
    fn = "date_add" if name in ("DATE_ADD", "ADDDATE") else "date_sub"
    if not isinstance(args[1], exp.Interval):
        if name in ("ADDDATE", "SUBDATE"):  # ADDDATE(x, n): n days
            return Call(fn, (t(args[0]), t(args[1]), Lit("DAY", STR)))
        raise unsupported(node, f"{name} of days written without INTERVAL")
    n, unit = interval_operand(args[1], t, name)
    return Call(fn, (t(args[0]), n, Lit(unit, STR)))


def extract_call(node: exp.Extract, t: Translate) -> Expr:
    """``EXTRACT(unit FROM x)``."""
    unit = unit_name(node, node.this, frozenset(EXTRACT_UNITS), "EXTRACT")
    return Call("extract", (Lit(unit, STR), t(node.expression)))


def _what(t: SqlType, e: Expr, dates_only: bool = False) -> str | None:
    """Why a date argument of this type is refused (None: it is not)."""
    if isinstance(e, Param):
        return "a ? parameter (its type is not known when the query is planned)"
    if t.kind in (DATE, DATETIME, None):
        return None
    if t.kind == STR or (t.kind in types.NUMBER_KINDS and not dates_only):
        return None
    return f"a {t.kind}"


#: How the refusals name a shift: every way it is written.
_SHIFT_NAMES = {"date_add": "DATE_ADD (ADDDATE, TIMESTAMPADD, + INTERVAL)",
                "date_sub": "DATE_SUB (SUBDATE, - INTERVAL)"}


def check(fn: str, args: Sequence[Expr], arg_types: Sequence[SqlType]) -> None:
    """Refuse the arguments of call ``fn`` whose MySQL answer rivulet does not give."""
    if fn in SHIFTS:
        written = _SHIFT_NAMES[fn]
        x, n, unit = arg_types[0], arg_types[1], args[2]
        assert isinstance(unit, Lit)
        reason = _what(x, args[0], dates_only=True)
        if x.kind == TIME:
            reason = None if unit.value in TIME_UNITS else (
                f"a time by {unit.value} (MySQL makes it a DATETIME of the current day)")
        if reason is not None:
            raise UnsupportedSqlError(f"unsupported {written} of {reason}")
        simple = unit.value in SIMPLE_UNITS
        exact = n.kind in (INT, BOOL, None) or (
            n.kind == STR and (not simple or (isinstance(args[1], Lit)
                                              and INTEGER_TEXT.fullmatch(args[1].value))))
        if not exact:
            raise UnsupportedSqlError(f"unsupported INTERVAL of a {n.kind} with unit "
                                      f"{unit.value}: only an integer (or, for a compound "
                                      "unit, its text)")
        return
    dated = [(args[i], arg_types[i]) for i in ((1, 2) if fn == "timestampdiff" else
                                             (1,) if fn == "extract" else (0,))]
    for e, t in dated:
        unit_arg = args[0]
        if (fn == "extract" and t.kind == TIME and isinstance(unit_arg, Lit)
                and unit_arg.value in CLOCK_EXTRACT_UNITS):
            continue
        reason = _what(t, e)
        if reason is None and fn == "extract" and t.kind in (STR, *types.NUMBER_KINDS):
            unit = args[0]
            assert isinstance(unit, Lit)
            if unit.value not in DATE_UNITS:
                reason = (f"a {t.kind} with a unit of the clock (MySQL reads it as a "
                          "TIME)")
            elif unit.value == "WEEK":
                reason = (f"a {t.kind} with unit WEEK (MySQL counts weeks of a date "
                          "with a zero month or day from its own day numbers)")
            elif unit.value == "DAY" and t.kind != STR:
                reason = (f"a {t.kind} with unit DAY (MariaDB reads a number there as a "
                          "time, its hours as days; MySQL as a date)")
        if reason is not None:
            raise UnsupportedSqlError(f"unsupported {fn.upper()}() of {reason}")


def result_type(fn: str, args: Sequence[SqlType], exprs: Sequence[Expr]) -> SqlType:
    """The type of ``fn``: a DATE moved by days or more stays a DATE, else a DATETIME with
    the fractional digits of its argument, six if the unit has microseconds."""
    if fn in SHIFTS:
        unit = exprs[2].value if len(exprs) > 2 and isinstance(exprs[2], Lit) else ""
        if args[0].kind == STR:  # (a date or a datetime as its text holds one)
            return types.STR_TYPE
        if args[0].kind == TIME:
            return types.time_type(types.MAX_FSP if unit in MICROSECOND_UNITS
                                   else args[0].scale)
        if args[0].kind == DATE and unit in DATE_UNITS:
            return SqlType(DATE)
        digits = types.MAX_FSP if unit in MICROSECOND_UNITS else (
            args[0].scale if args[0].kind == DATETIME else 0)
        return SqlType(DATETIME, digits, digits)
    if fn == "DATE_FORMAT":
        return types.STR_TYPE
    return types.INT_TYPE
