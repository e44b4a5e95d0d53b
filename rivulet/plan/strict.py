"""The expressions of a write statement, made to fail where MySQL's strict mode fails them.

Why this module exists: a write is evaluated in strict mode
(:func:`rivulet.values.conversions.strict_mode`), where a conversion MySQL reports as
truncating raises error 1292 instead of warning. The value functions convert only what they
compare or compute, and MySQL's evaluation differs from theirs in three ways that decide
whether a statement fails:

* MySQL converts an operand even where another is NULL: ``v = m`` reads ``v`` as a number
  before it finds ``m`` NULL (``m = v`` stops at the NULL ``m``), ``<=>`` and arithmetic
  read both operands. :func:`strict_operands` wraps such an operand in an explicit check.
* MySQL evaluates the constant conditions of an UPDATE's WHERE (those joined to it by
  ``AND`` and ``OR`` only), and converts a constant compared with a BIGINT column, while it
  plans the statement, where a truncation only warns; an AND with a false condition reads
  no row at all. :func:`planned_constants` takes them out to be evaluated once, outside
  strict mode.
* MySQL reads only the rows the conditions on the primary key select (by key, or a range
  of keys), where it can bound them by those values (:func:`sargable`), and evaluates the
  WHERE on those rows: :func:`key_range` finds those conditions, for the writer to check
  first, outside strict mode.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from rivulet.plan.expressions import type_of
from rivulet.plan.ir import Call, Case, Col, Expr, Lit, Param, columns_used, conjuncts
from rivulet.values.conversions import text_to_float
from rivulet.values.schema import Kind
from rivulet.values.types import DATE_KINDS, NUMBER_KINDS, TEXT_KINDS, SqlType

#: Comparisons that read their first operand, then the second unless the first is NULL.
_LEFT_FIRST = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "NULLIF"})
#: Arithmetic, which reads both operands.
_ARITHMETIC = frozenset({"add", "sub", "mul", "div", "int_div", "mod"})
_INTEGERS = frozenset({Kind.INT, Kind.BOOL})


def strict_operands(expr: Expr, input_types: Sequence[SqlType]) -> Expr:
    """``expr`` (over columns of ``input_types``) with each operand MySQL converts to a
    number, a date or a TIME even where another operand is NULL wrapped in
    ``strict_number``, ``strict_date`` or ``strict_time``, which fail a write on a value
    that does not convert whole."""
    if isinstance(expr, Case):
        return Case(tuple((strict_operands(c, input_types), strict_operands(v, input_types))
                          for c, v in expr.whens),
                    None if expr.default is None else strict_operands(expr.default, input_types))
    if not isinstance(expr, Call):
        return expr
    kinds = [type_of(a, input_types).kind for a in expr.args]
    args = [strict_operands(a, input_types) for a in expr.args]
    fn = expr.fn
    if fn in _LEFT_FIRST and len(args) == 2:
        args[0] = _checked(args[0], kinds[0], kinds[1:])
    elif fn == "null_safe_eq":
        args = [_checked(args[0], kinds[0], kinds[1:]), _checked(args[1], kinds[1], kinds[:1])]
    elif fn in ("in_list", "between", "between_dates"):  # (the subject first, then the others)
        args[0] = _checked(args[0], kinds[0], kinds[1:])
    elif fn in _ARITHMETIC:
        args = [_checked(a, k, [Kind.FLOAT]) for a, k in zip(args, kinds)]
    return Call(fn, tuple(args))


def _checked(arg: Expr, kind: Kind | None, others: Sequence[Kind | None]) -> Expr:
    """``arg`` (of ``kind``), compared with or computed with values of the ``others`` kinds,
    wrapped in the check of each conversion MySQL makes of it (an IN list's subject is
    converted for each kind among its items, even an item that is NULL)."""
    if kind in TEXT_KINDS and any(k in NUMBER_KINDS for k in others):
        what = "DECIMAL" if all(k in _INTEGERS for k in others if k in NUMBER_KINDS) else "DOUBLE"
        arg = Call("strict_number", (arg, Lit(what)))
    if (kind in TEXT_KINDS or kind in NUMBER_KINDS) and any(k in DATE_KINDS for k in others):
        arg = Call("strict_date", (arg,))
    if kind in TEXT_KINDS and Kind.TIME in others:
        arg = Call("strict_time", (arg,))
    return arg


#: Comparisons of the key with constants that bound the rows MySQL's range scan reads.
_BOUNDING = frozenset({"eq", "lt", "le", "gt", "ge", "between", "in_list", "null_safe_eq"})


def key_range(where: Expr, key: int) -> list[tuple[Expr, list[list[Expr]]]]:
    """The conditions of an UPDATE's WHERE (joined to it by ``AND``) that bound the column
    ``key`` (the primary key's first) by constants: MySQL reads only the rows they select
    (a range scan) and evaluates the WHERE on those alone (``v = 5 AND id > 3`` reads no row
    where no key is above 3). Each with the constants of each of its comparisons, which
    decide whether MySQL can bound a range by it (:func:`sargable`)."""
    out = []
    for c in conjuncts(where):
        groups: list[list[Expr]] = []
        if _bounds(c, key, groups):
            out.append((c, groups))
    return out


def _bounds(e: Expr, key: int, groups: list[list[Expr]]) -> bool:
    if not isinstance(e, Call):
        return False
    if e.fn in ("and_", "or_"):
        return all(_bounds(a, key, groups) for a in e.args)
    if e.fn not in _BOUNDING:
        return False
    first, rest = e.args[0], list(e.args[1:])
    if not (isinstance(first, Col) and first.index == key):
        if e.fn in ("in_list", "between") or len(rest) != 1:
            return False
        first, rest = rest[0], [first]
        if not (isinstance(first, Col) and first.index == key):
            return False
    if any(columns_used(a) for a in rest):
        return False
    groups.append(rest)
    return True


def sargable(kind: Kind | None, values: Sequence[Any]) -> bool:
    """Whether MySQL bounds the rows it reads by comparing a key of ``kind`` with these
    values (an IN list's, or one comparison's), as MariaDB does: an integer key by numbers
    with no fraction, or by text (converted, with a warning: ``id < 'a'`` reads no row), not
    by a mix of the two (``id IN (2, 'a')`` reads every row); a text key by text only.
    Other keys: never (the writer reads every row, as MySQL may)."""
    classes = set()
    for v in values:
        if v is None:
            continue
        if isinstance(v, (str, bytes)):
            text = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
            if not float(text_to_float(text)).is_integer():
                return False  # ('0.5' is not stored whole in an integer key)
            classes.add("text")
        elif isinstance(v, (int, Decimal, float)):
            if isinstance(v, (Decimal, float)) and not (math.isfinite(v) and v == int(v)):
                return False
            classes.add("number")
        else:
            return False
    if len(classes) > 1:
        return False
    if kind in _INTEGERS:
        return True
    return kind in TEXT_KINDS and classes <= {"text"}


def planned_constants(where: Expr, first: int, bigints: frozenset[int] = frozenset()
                      ) -> tuple[Expr, list[Expr]]:
    """An UPDATE's WHERE with each constant MySQL evaluates while planning replaced by the
    parameter numbered ``first``, ``first + 1``..., and those constants, to evaluate once
    per execution, outside strict mode:

    * a condition reached from the top through ``AND`` and ``OR`` only that reads no
      column, put before the other operand of its ``AND``/``OR``, where its value decides
      first, as in MySQL (an ``AND`` with a false one reads no row);
    * a constant compared with a BIGINT column (``bigints``: their positions), which MySQL
      converts to an integer once (``c = 'abc'`` only warns there).
    """
    constants: list[Expr] = []

    def planned(e: Expr) -> Param:
        constants.append(e)
        return Param(first + len(constants) - 1)

    def walk(e: Expr) -> Expr:
        if not columns_used(e):
            return planned(e)
        if isinstance(e, Call) and e.fn in ("and_", "or_"):
            a, b = (walk(x) for x in e.args)
            if _planned(b, first) and not _planned(a, first):
                a, b = b, a
            return Call(e.fn, (a, b))
        return against_bigints(e)

    def against_bigints(e: Expr) -> Expr:
        if isinstance(e, Case):
            return Case(tuple((against_bigints(c), against_bigints(v)) for c, v in e.whens),
                        None if e.default is None else against_bigints(e.default))
        if not isinstance(e, Call) or not columns_used(e):
            return e
        args = [against_bigints(a) for a in e.args]
        if e.fn in _COMPARISONS and len(args) == 2 and bigints:
            for i in (0, 1):
                column, constant = args[i], args[1 - i]
                if isinstance(column, Col) and column.index in bigints and \
                        not columns_used(constant) and \
                        type_of(constant, []).kind in (None, *TEXT_KINDS):
                    args[1 - i] = planned(Call("planned_number", (constant,)))
        return Call(e.fn, tuple(args))

    return walk(where), constants


_COMPARISONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "null_safe_eq"})


def _planned(e: Expr, first: int) -> bool:
    return isinstance(e, Param) and e.index >= first
