"""IR expressions to Python functions over rows.

Expressions are compiled once, when an operator is built, into the source of one Python
lambda and ``eval``-ed: a generated ``lambda r: r[2] + 1`` runs several times faster than a
tree of closures, and operators call these functions once per row. Semantics come from
:mod:`rivulet.values` (MySQL's rules); the compiler only inlines the cases where
plain Python already agrees with them (a comparison of a column with a constant of the same
kind, in a filter's top-level conjunction, where NULL and false are the same).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from rivulet import values as F
from rivulet.errors import SqlError
from rivulet.plan.expressions import refuse_unanswerable
from rivulet.plan.ir import (
    Call,
    Case,
    Col,
    Expr,
    Filter,
    Lit,
    Node,
    Param,
    Project,
    Scan,
    StatementTime,
)
from rivulet.values.schema import BOOL, DECIMAL, ENUM, INT, Kind

RowFn = Callable[[tuple], Any]

_OPERATORS = {
    "eq", "ne", "lt", "le", "gt", "ge", "null_safe_eq", "and_", "or_", "xor", "not_",
    "add", "sub", "mul", "div", "int_div", "mod", "neg", "like", "between", "between_dates",
    "is_null",
    "is_not_null", "to_scale", "strict_number", "strict_date", "strict_time", "planned_number",
    "bit_and", "bit_or", "bit_xor", "bit_not", "shift_left", "shift_right", "regexp",
    "addtime", "subtime", "now_at", "curdate_at", "curtime_at", "unix_timestamp_at",
    "date_add", "date_sub", "timestampdiff", "extract",
}
_PY_COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
#: WHENs of a CASE compiled as one nested conditional expression; more go through
#: ``F.first_branch`` (Python's parser stops at 200 nested parentheses).
_NESTED_WHENS = 32
#: Numeric kinds Python compares with one another exactly as MySQL does.
_EXACT_KINDS = frozenset({INT, BOOL, DECIMAL})


class _Codegen:
    """Builds the source of one expression; constants go into a namespace, not the text."""

    def __init__(self, kinds: Sequence[Kind | None], nullable: Sequence[bool]) -> None:
        self.kinds = kinds
        self.nullable = nullable
        self.namespace: dict[str, Any] = {"F": F}
        self._names: dict[int, str] = {}
        self._temporaries = 0

    def constant(self, value: Any) -> str:
        if value is None:
            return "None"
        if type(value) is int or type(value) is str:
            return repr(value)
        name = f"_c{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def function(self, fn: str) -> str:
        if fn in _OPERATORS:
            return f"F.{fn}"
        if fn in F.CASTS:
            name = f"_{fn}"
            self.namespace[name] = F.CASTS[fn]
            return name
        impl = F.SCALAR_FUNCTIONS.get(fn)
        if impl is None:
            raise SqlError(f"unknown function {fn}()")
        name = f"_f_{fn.lower()}"
        self.namespace[name] = impl
        return name

    def expr(self, e: Expr) -> str:
        if isinstance(e, Col):
            return f"r[{e.index}]"
        if isinstance(e, Lit):
            return self.constant(e.value)
        if isinstance(e, Param):
            return f"p[{e.index}]"
        if isinstance(e, StatementTime):  # (bound after the statement's ? values)
            return "p[-1]"
        if isinstance(e, Case):
            return self._case(e)
        assert isinstance(e, Call)
        if e.fn == "in_list":
            items = ", ".join(self.expr(a) for a in e.args[1:])
            return f"F.in_list({self.expr(e.args[0])}, ({items},))"
        self._check_arity(e)
        lazy = self._lazy(e)
        if lazy is not None:
            return lazy
        args = ", ".join(self.expr(a) for a in e.args)
        return f"{self.function(e.fn)}({args})"

    def _lazy(self, e: Call) -> str | None:
        """The source of a call that evaluates an argument only where MySQL does: ``AND``
        stops at a false operand, ``OR`` at a true one, ``IF`` evaluates the branch it
        takes, ``IFNULL``/``COALESCE`` stop at the first non-NULL. The functions would give
        the same value, but an argument evaluated in a write can fail it (MySQL's strict
        mode: ``IF(1, 1, 'a' + 1)`` writes 1, ``'a' + 1`` alone fails)."""
        fn, args = e.fn, e.args
        if fn == "and_":
            name = self._temporary()
            return (f"(0 if ({name} := F.truth({self.expr(args[0])})) == 0 "
                    f"else F.and_({name}, {self.expr(args[1])}))")
        if fn == "or_":
            name = self._temporary()
            return (f"(1 if ({name} := F.truth({self.expr(args[0])})) == 1 "
                    f"else F.or_({name}, {self.expr(args[1])}))")
        if fn == "IF":
            return (f"(F.coalesce({self.expr(args[1])}) if F.truth({self.expr(args[0])}) == 1 "
                    f"else F.coalesce({self.expr(args[2])}))")
        if fn in ("IFNULL", "COALESCE"):
            out = f"F.coalesce({self.expr(args[-1])})"
            for a in reversed(args[:-1]):
                name = self._temporary()
                out = (f"(F.coalesce({name}) if ({name} := {self.expr(a)}) is not None "
                       f"else {out})")
            return out
        return None

    def _temporary(self) -> str:
        """A new name for a value the generated code computes once and uses twice."""
        self._temporaries += 1
        return f"_t{self._temporaries}"

    def _check_arity(self, e: Call) -> None:
        bounds = F.FUNCTION_ARITY.get(e.fn)
        if bounds is None:
            return
        low, high = bounds
        n = len(e.args)
        if n < low or (high is not None and n > high):
            upper = high if high is not None else "any"
            expected = f"{low}" if low == high else f"{low} to {upper}"
            raise SqlError(f"function {e.fn}() takes {expected} arguments, got {n}")

    def _case(self, e: Case) -> str:
        out = self._result(e.default) if e.default is not None else "None"
        if len(e.whens) > _NESTED_WHENS:  # (one flat call: see values.first_branch)
            branches = "".join(f"(lambda: {self.expr(cond)}, lambda: {self._result(value)}), "
                               for cond, value in e.whens)
            return f"F.first_branch(({branches}), lambda: {out})"
        for cond, value in reversed(e.whens):
            out = f"({self._result(value)} if F.truth({self.expr(cond)}) else {out})"
        return out

    def _result(self, e: Expr) -> str:
        """A CASE's result: an ENUM column's value comes out as its text, as in MySQL (a
        CASE is a string, not an ENUM)."""
        if isinstance(e, Col) and self.kinds[e.index] == ENUM:
            return f"F.cast_str({self.expr(e)})"
        return self.expr(e)

    def predicate(self, e: Expr) -> str:
        """Source whose truth value is the filter's decision (NULL counts as false)."""
        if isinstance(e, Call) and e.fn == "and_":
            return f"({self.predicate(e.args[0])} and {self.predicate(e.args[1])})"
        if isinstance(e, Call) and e.fn == "or_":
            return f"({self.predicate(e.args[0])} or {self.predicate(e.args[1])})"
        if isinstance(e, Call) and e.fn in ("is_null", "is_not_null"):
            arg = e.args[0]
            test = "is None" if e.fn == "is_null" else "is not None"
            if isinstance(arg, Lit):  # fold: `5 is None` is a SyntaxWarning in generated code
                return repr((arg.value is None) == (e.fn == "is_null"))
            return f"({self.expr(arg)} {test})"
        fast = self._fast_comparison(e)
        if fast is not None:
            return fast
        return f"F.truth({self.expr(e)})" if not _is_boolean(e) else f"({self.expr(e)} == 1)"

    def _fast_comparison(self, e: Expr) -> str | None:
        if not (isinstance(e, Call) and e.fn in _PY_COMPARISONS):
            return None
        a, b = e.args
        if not (isinstance(a, Col) and isinstance(b, (Lit, Col))):
            return None
        ka = self.kinds[a.index]
        kb = b.kind if isinstance(b, Lit) else self.kinds[b.index]
        if isinstance(b, Lit) and b.value is None:
            return None
        # Python compares exact numbers (INT, DECIMAL) exactly, as MySQL does; a DOUBLE
        # with an exact number MySQL compares as doubles (DECIMAL 0.10 = 0.1e0), not Python.
        same = ka == kb or (ka in _EXACT_KINDS and kb in _EXACT_KINDS)
        if not same or ka is None:
            return None
        op = _PY_COMPARISONS[e.fn]
        left, right = self.expr(a), self.expr(b)
        checks = []
        if self.nullable[a.index]:
            checks.append(f"{left} is not None")
        if isinstance(b, Col) and self.nullable[b.index]:
            checks.append(f"{right} is not None")
        checks.append(f"{left} {op} {right}")
        return "(" + " and ".join(checks) + ")"


def _is_boolean(e: Expr) -> bool:
    return isinstance(e, Call) and e.fn in {
        "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "xor", "not_", "like", "in_list",
        "between", "between_dates", "null_safe_eq",
    }


def _build(source: str, gen: _Codegen) -> Callable[..., Any]:
    return eval(source, gen.namespace)  # noqa: S307 - source is generated from the IR


def row_function(
    exprs: Sequence[Expr], kinds: Sequence[Kind | None], nullable: Sequence[bool]
) -> Callable[[tuple], tuple]:
    """A function computing the output row of a projection."""
    if not exprs:
        return lambda r: ()
    columns = [e for e in exprs if isinstance(e, Col)]
    if len(columns) == len(exprs):
        indexes = [e.index for e in columns]
        if len(indexes) == 1:
            i = indexes[0]
            return lambda r: (r[i],)
        return itemgetter(*indexes)
    for e in exprs:
        refuse_unanswerable(e, list(kinds))
    gen = _Codegen(kinds, nullable)
    body = ", ".join(gen.expr(e) for e in exprs)
    return _build(f"lambda r: ({body},)", gen)


def predicate_function(
    expr: Expr, kinds: Sequence[Kind | None], nullable: Sequence[bool]
) -> Callable[[tuple], Any]:
    """A function whose truth says whether a row passes ``expr`` (a WHERE or ON condition)."""
    refuse_unanswerable(expr, list(kinds))
    gen = _Codegen(kinds, nullable)
    return _build(f"lambda r: {gen.predicate(expr)}", gen)


def chain_function(root: Node) -> Callable[[tuple], tuple | None] | None:
    """For a plan that only filters and projects the rows of one table: one function from
    a stored row to the plan's row, or None where a filter drops it, made of the same
    functions the builder compiles for those operators. None for any other plan.

    Why: a transaction's locking read by primary key (rivulet/engine/transaction.py) reads
    a row or two; building a throwaway dataflow for them cost a millisecond and more."""
    steps: list[tuple[bool, Callable[[tuple], Any]]] = []
    node = root
    while isinstance(node, (Filter, Project)):
        kinds = [c.kind for c in node.input.columns]
        nullable = [c.nullable for c in node.input.columns]
        if isinstance(node, Filter):
            steps.append((True, predicate_function(node.predicate, kinds, nullable)))
        else:
            steps.append((False, row_function(node.exprs, kinds, nullable)))
        node = node.input
    if not isinstance(node, Scan):
        return None
    steps.reverse()

    def chain(row: tuple) -> tuple | None:
        for is_filter, fn in steps:
            if is_filter:
                if not fn(row):
                    return None
            else:
                row = fn(row)
        return row

    return chain


def value_function(
    expr: Expr, kinds: Sequence[Kind | None], nullable: Sequence[bool], *, with_params: bool = False
) -> Callable[..., Any]:
    """A function computing one value from a row (and, for writes, the statement's params)."""
    refuse_unanswerable(expr, list(kinds))
    gen = _Codegen(kinds, nullable)
    args = "r, p" if with_params else "r"
    return _build(f"lambda {args}: {gen.expr(expr)}", gen)


def bound_predicate(
    expr: Expr, kinds: Sequence[Kind | None], nullable: Sequence[bool]
) -> Callable[[tuple, tuple], Any]:
    """A predicate over a row and the statement's ``?`` values (UPDATE/DELETE ... WHERE)."""
    refuse_unanswerable(expr, list(kinds))
    gen = _Codegen(kinds, nullable)
    return _build(f"lambda r, p: {gen.predicate(expr)}", gen)
