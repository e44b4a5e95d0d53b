"""The expressions of a write statement, made to fail where MySQL's strict mode fails them.

Why this module exists: a write is evaluated in strict mode
(:func:`rivulet.values.conversions.strict_mode`), where a conversion MySQL reports as
truncating raises error 1292 instead of warning. The value functions convert only what they
compare or compute, and MySQL's evaluation differs from theirs in two ways that decide
whether a statement fails:

* MySQL converts an operand even where another is NULL: ``v = m`` reads ``v`` as a number
  before it finds ``m`` NULL (``m = v`` stops at the NULL ``m``), ``<=>`` and arithmetic
  read both operands. :func:`strict_operands` wraps such an operand in an explicit check.
* MySQL evaluates the constant conditions of an UPDATE's WHERE (those joined to it by
  ``AND`` and ``OR`` only) while it plans the statement, where a truncation only warns, and
  an AND with a false one reads no row at all. :func:`planned_constants` takes them out to
  be evaluated once, outside strict mode.
* MySQL reads only the rows the conditions on the primary key select (by key, or a range
  of keys), and evaluates the WHERE on those: :func:`key_range` finds those conditions, for
  the writer to check first, outside strict mode.
"""

from __future__ import annotations

from collections.abc import Sequence

from rivulet.plan.expressions import type_of
from rivulet.plan.ir import Call, Case, Col, Expr, Lit, Param, columns_used, conjuncts
from rivulet.values.schema import Kind
from rivulet.values.types import DATE_KINDS, NUMBER_KINDS, TEXT_KINDS, SqlType

#: Comparisons that read their first operand, then the second unless the first is NULL.
_LEFT_FIRST = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "NULLIF"})
#: Arithmetic, which reads both operands.
_ARITHMETIC = frozenset({"add", "sub", "mul", "div", "int_div", "mod"})
_INTEGERS = frozenset({Kind.INT, Kind.BOOL})


def strict_operands(expr: Expr, input_types: Sequence[SqlType]) -> Expr:
    """``expr`` (over columns of ``input_types``) with each operand MySQL converts to a
    number or a date even where another operand is NULL wrapped in ``strict_number`` or
    ``strict_date``, which fail a write on a value that does not convert whole."""
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
    elif fn in ("in_list", "between"):  # (the subject is read first, then the others)
        args[0] = _checked(args[0], kinds[0], kinds[1:])
    elif fn in _ARITHMETIC:
        args = [_checked(a, k, [Kind.FLOAT]) for a, k in zip(args, kinds)]
    return Call(fn, tuple(args))


def _checked(arg: Expr, kind: Kind | None, others: Sequence[Kind | None]) -> Expr:
    """``arg`` (of ``kind``), compared with or computed with values of the ``others`` kinds,
    wrapped in the check of the conversion MySQL makes of it, if it makes one."""
    if kind in TEXT_KINDS and any(k in NUMBER_KINDS for k in others):
        what = "DECIMAL" if all(k in _INTEGERS for k in others if k in NUMBER_KINDS) else "DOUBLE"
        return Call("strict_number", (arg, Lit(what)))
    if (kind in TEXT_KINDS or kind in NUMBER_KINDS) and any(k in DATE_KINDS for k in others):
        return Call("strict_date", (arg,))
    if kind in TEXT_KINDS and Kind.TIME in others:
        return Call("strict_time", (arg,))
    return arg


#: Comparisons of the key with constants that bound the rows MySQL's range scan reads.
_BOUNDING = frozenset({"eq", "lt", "le", "gt", "ge", "between", "in_list", "null_safe_eq"})


def key_range(where: Expr, key: int, kind: Kind, *, looked_up: bool = False) -> Expr | None:
    """The conditions of an UPDATE's WHERE (joined to it by ``AND``) that bound the column
    ``key`` (the primary key's first, of ``kind``) by constants of its kind, ANDed: MySQL
    reads only the rows they select (a range scan) and evaluates the WHERE on those alone
    (``v = 5 AND id > 3`` reads no row where no key is above 3). None if there are none, or
    (``looked_up``: the writer reads rows by their keys already) if there is only one."""
    parts = [c for c in conjuncts(where) if _bounds(c, key, kind)]
    if not parts or (looked_up and len(parts) == 1):
        return None
    out = parts[0]
    for part in parts[1:]:
        out = Call("and_", (out, part))
    return out


def _bounds(e: Expr, key: int, kind: Kind) -> bool:
    if not isinstance(e, Call):
        return False
    if e.fn in ("and_", "or_"):
        return all(_bounds(a, key, kind) for a in e.args)
    if e.fn not in _BOUNDING:
        return False
    first, rest = e.args[0], e.args[1:]
    if isinstance(first, Col) and first.index == key:
        return all(_constant_of(a, kind) for a in rest)
    if e.fn != "in_list" and e.fn != "between" and len(e.args) == 2:
        second = e.args[1]
        return isinstance(second, Col) and second.index == key and _constant_of(first, kind)
    return False


def _constant_of(e: Expr, kind: Kind) -> bool:
    """Whether ``e`` is a constant compared with the key without a conversion (a text
    constant for a numeric key may not bound MySQL's range: it is read row by row)."""
    if columns_used(e):
        return False
    have = type_of(e, []).kind
    return have is None or have == kind or (have in NUMBER_KINDS and kind in NUMBER_KINDS) or (
        have in TEXT_KINDS and kind in TEXT_KINDS) or (have in DATE_KINDS and kind in DATE_KINDS)


def planned_constants(where: Expr, first: int) -> tuple[Expr, list[Expr]]:
    """An UPDATE's WHERE with each constant condition MySQL evaluates while planning (one
    reached from the top through ``AND`` and ``OR`` only, that reads no column) replaced by
    the parameter numbered ``first``, ``first + 1``..., and put before the other operand of
    its ``AND``/``OR``, where its value decides first, as in MySQL (an ``AND`` with a false
    one reads no row); and those constants, to evaluate once per execution."""
    constants: list[Expr] = []

    def walk(e: Expr) -> Expr:
        if not columns_used(e):
            constants.append(e)
            return Param(first + len(constants) - 1)
        if isinstance(e, Call) and e.fn in ("and_", "or_"):
            a, b = (walk(x) for x in e.args)
            if _planned(b, first) and not _planned(a, first):
                a, b = b, a
            return Call(e.fn, (a, b))
        return e

    return walk(where), constants


def _planned(e: Expr, first: int) -> bool:
    return isinstance(e, Param) and e.index >= first
