"""A view's ``?`` parameters: where they are, and the values a read gives them.

Where: the planner pulls each ``?`` out of the outer WHERE (:func:`extract_parameters`);
it becomes part of the reader's key, not a filter, so that one maintained view answers
every parameter value. An OR of equalities on one column (``a = ? OR a = ?``) is an
``IN (?, ...)`` list of fixed length (:func:`_or_of_equalities`); an OR of equalities on
different columns (``a = ? OR b = ?``) is a union of alternatives, each keyed by its own
column (:attr:`Parameters.alternatives`, rivulet/plan/alternatives.py). Range conditions
(``a > ?``, ``a BETWEEN ? AND ?``) order the reader by the first column they bound; those
on other columns (``a > ? AND b < ?``) are checked over its rows
(:attr:`Parameters.other_ranges`).

The values: the engine's read handles and the Spark executor both turn the values a caller passes
into the plan's parameters; they must agree on how an ``IN (?, ...)`` list of any length
sits among the other parameters, and on what is an error, or the same read would answer
differently on Spark than in memory. It needs nothing but the plan, so it lives here,
below both.
"""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlglot import exp

from rivulet.errors import (
    ParameterCountError,
    ParameterError,
    SqlError,
    UnsupportedParameterError,
)
from rivulet.plan import ir
from rivulet.plan.scope import FromScope
from rivulet.sql.parens import conjuncts, disjuncts
from rivulet.sql.parse import error_at, unsupported
from rivulet.values.enumerations import EnumValue, plain
from rivulet.values.matching import EXACT_TYPES, Unkeyed, equal_key
from rivulet.values.schema import (
    BOOL,
    BYTES,
    DATE,
    DATETIME,
    DECIMAL,
    ENUM,
    FLOAT,
    INT,
    STR,
    TIME,
    Kind,
)
from rivulet.values.types import between_as_doubles, value_type

RANGE_OPS: dict[type, str] = {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}
FLIPPED = {">": "<", ">=": "<=", "<": ">", "<=": ">="}



@dataclass
class Parameters:
    """The ``?`` of a view: which column each one keys, in the order they are written."""

    eq: list[tuple[int, int]] = field(default_factory=list)  # (placeholder index, FROM column)
    in_list: tuple[int, list[int]] | None = None  # (FROM column, placeholder indexes)
    range_column: int | None = None
    range_bounds: list[ir.RangeBound] = field(default_factory=list)
    #: Range parameters on columns other than :attr:`range_column`, per column (FROM
    #: column, its bounds), in the order the columns are first written.
    other_ranges: list[tuple[int, list[ir.RangeBound]]] = field(default_factory=list)
    count: int = 0
    #: ``col = ?`` on a column another parameter keys already (``a = ? AND a = ?``,
    #: ``a = ? AND a IN (?, ...)``): (placeholder index, FROM column). The column keys the
    #: reader once; a read checks that these values equal its key.
    also_equal: list[tuple[int, int]] = field(default_factory=list)
    #: Placeholder indexes of ``col <=> ?``: a NULL value matches the NULLs of the column.
    null_safe: list[int] = field(default_factory=list)
    #: The ``IN (?, ...)`` lists, in the order written: (FROM column, placeholder indexes,
    #: the IN node, or the OR written in its place). One becomes :attr:`in_list`; several
    #: (or one of an OR), fixed lists (:attr:`listed`).
    lists: list[tuple[int, list[int], exp.Expr]] = field(default_factory=list)
    #: Of several IN lists, each one's first placeholder (which keys its column, in
    #: :attr:`eq`) and the others: a read looks up every value, and every combination of
    #: the lists' values. Each takes as many values as it has ``?``.
    listed: list[tuple[int, list[int]]] = field(default_factory=list)
    #: An IN list was written as an OR of equalities (``a = ? OR a = ?``,
    #: :func:`_or_of_equalities`): every list then takes exactly as many values as it has
    #: ``?`` (:attr:`listed`), as the OR does, instead of any number of them.
    fixed_lists: bool = False
    #: ``a = ? OR b = ?`` (columns not all one): each term as (placeholder index, FROM
    #: column), in the order written. The view is planned once per term, keyed by its
    #: column, and a read unites the terms' rows (rivulet/plan/alternatives.py).
    alternatives: list[tuple[int, int]] = field(default_factory=list)
    #: The OR of :attr:`alternatives` (for refusals that name it).
    alternatives_node: exp.Expr | None = None

    def key_columns(self) -> list[int]:
        cols = [c for _, c in self.eq]
        if self.in_list is not None:
            cols.append(self.in_list[0])
        return cols

    def equal_params(self) -> tuple[tuple[int, int], ...]:
        """``also_equal`` as (placeholder index, position in the key)."""
        key = self.key_columns()
        return tuple((p, key.index(c)) for p, c in self.also_equal)

    def listed_params(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """``listed`` as (position in the key, the list's other placeholders)."""
        firsts = [p for p, _ in self.eq]
        return tuple((firsts.index(first), tuple(rest)) for first, rest in self.listed)

    def listed_columns(self) -> list[int]:
        """The FROM columns of the IN lists."""
        return [column for column, _, _ in self.lists]


def extract_parameters(
    where: exp.Expr | None, scope: FromScope
) -> tuple[list[exp.Expr], Parameters]:
    """Split WHERE into plain conjuncts and parameter conjuncts."""
    params = Parameters()
    if where is None:
        return [], params
    if isinstance(where, exp.Where):
        where = where.this
    order = {id(p): i for i, p in enumerate(where.dfs()) if isinstance(p, exp.Placeholder)}
    order = {k: i for i, k in enumerate(order)}
    params.count = len(order)
    plain: list[exp.Expr] = []
    for conjunct in conjuncts(where):
        if not any(isinstance(n, exp.Placeholder) for n in conjunct.walk()):
            plain.append(conjunct)
            continue
        _take_parameter(conjunct, scope, params, order)
    if params.alternatives:
        _refuse_beside_alternatives(params)
    if len(params.lists) == 1 and not params.fixed_lists:
        column, placeholders, _ = params.lists[0]
        params.in_list = (column, placeholders)
    elif params.lists:
        _fixed_lists(params)
    # One key column per column: a second ``col = ?`` on it is checked at read time.
    listed = params.in_list[0] if params.in_list is not None else None
    keyed: list[tuple[int, int]] = []
    for p, c in params.eq:
        if c == listed or any(c == k for _, k in keyed):
            params.also_equal.append((p, c))
        else:
            keyed.append((p, c))
    params.eq = keyed
    return plain, params


def _take_parameter(
    node: exp.Expr, scope: FromScope, params: Parameters, order: dict[int, int]
) -> None:
    hint = (
        "parameters must appear in the WHERE conjunction as `column = ?`, `column <=> ?`, "
        "`column IN (?, ...)`, `column BETWEEN ? AND ?` or `column <op> ?`"
    )
    if isinstance(node, (exp.EQ, exp.NullSafeEQ)):
        col, ph = _column_and_placeholder(node.this, node.expression)
        if col is not None:
            params.eq.append((order[id(ph)], scope.resolve(col)))
            if isinstance(node, exp.NullSafeEQ):
                params.null_safe.append(order[id(ph)])
            return
    elif isinstance(node, exp.In) and isinstance(node.this, exp.Column):
        if node.expressions and all(isinstance(e, exp.Placeholder) for e in node.expressions):
            params.lists.append((scope.resolve(node.this),
                                 [order[id(e)] for e in node.expressions], node))
            return
    elif isinstance(node, exp.Between) and isinstance(node.this, exp.Column):
        low, high = node.args["low"], node.args["high"]
        if isinstance(low, exp.Placeholder) and isinstance(high, exp.Placeholder):
            column = scope.resolve(node.this)
            _add_range(node, column, ">=", order[id(low)], params, between=True)
            _add_range(node, column, "<=", order[id(high)], params, between=True)
            return
    elif isinstance(node, exp.Or):
        _or_of_equalities(node, scope, params, order)
        return
    elif type(node) in RANGE_OPS:
        op = RANGE_OPS[type(node)]
        col, ph = _column_and_placeholder(node.this, node.expression)
        if col is not None:
            if col is node.expression:
                op = FLIPPED[op]
            _add_range(node, scope.resolve(col), op, order[id(ph)], params)
            return
    raise error_at(node, f"unsupported use of a parameter in {node.sql(dialect='mysql')!r}: {hint}",
                   UnsupportedParameterError)


def _or_of_equalities(node: exp.Or, scope: FromScope, params: Parameters,
                      order: dict[int, int]) -> None:
    """``a = ? OR a = ?`` (and ``a = ? OR a IN (?, ?)``): one column equal to one of several
    values is an ``IN (?, ...)`` list, answered as one: one reader keyed by the column, and
    a read looks up each value's key, each once. In a WHERE the two agree row by row: a row
    is kept where some equality is TRUE, and a NULL value (UNKNOWN) keeps none; each value
    is compared with the column on its own, as the OR does (a read that no key answers,
    ``varchar_col = 1``, is computed with the values as constants from the OR's own text,
    rivulet/plan/bound.py). The list takes exactly its ``?``, as the OR does.

    ``a = ? OR b = ?`` (every term ``column = ?``, the columns not all one) is a union of
    alternatives (:attr:`Parameters.alternatives`, rivulet/plan/alternatives.py).

    Anything else under OR is refused by name: ``a = ? OR a IS NULL`` (no reader keeps
    NULL keys), ``a <=> ? OR ...`` (a NULL value finds the NULLs, which an IN list's does
    not), an IN list beside another column's equality, and a ``?`` beside a constant or a
    range under the OR."""
    columns: list[int] = []
    placeholders: list[exp.Expr] = []
    lists = False
    for term in disjuncts(node):
        if isinstance(term, exp.EQ):
            col, ph = _column_and_placeholder(term.this, term.expression)
            values = [ph] if col is not None else []
        elif (isinstance(term, exp.In) and isinstance(term.this, exp.Column) and term.expressions
              and all(isinstance(e, exp.Placeholder) for e in term.expressions)):
            col, values = term.this, list(term.expressions)
            lists = True
        else:
            col, values = None, []
        if col is None or not values:
            raise _refused_or(node, _why_not_listed(term))
        columns.append(scope.resolve(col))
        placeholders += values
    if len(set(columns)) == 1:
        params.lists.append((columns[0], sorted(order[id(p)] for p in placeholders), node))
        params.fixed_lists = True
        return
    if lists:
        raise unsupported(node, "IN (?, ...) under an OR of parameters on different "
                          "columns (each term must be `column = ?`)")
    if params.alternatives:
        raise unsupported(node, "second OR of parameters on different columns in one query")
    params.alternatives = [(order[id(p)], c) for p, c in zip(placeholders, columns)]
    params.alternatives_node = node


def _refuse_beside_alternatives(params: Parameters) -> None:
    """What an OR of parameters on different columns is not combined with, refused by
    name: the reader is keyed by each term's column in turn beside the other equality
    parameters, and nothing else."""
    node = params.alternatives_node
    assert node is not None  # (set with the alternatives)
    if params.lists:
        raise unsupported(node, "OR of parameters on different columns beside an "
                          "IN (?, ...) list or another OR of parameters")
    if params.range_column is not None:
        raise unsupported(node, "OR of parameters on different columns beside a range "
                          "parameter")
    ored = {c for _, c in params.alternatives}
    if any(c in ored for _, c in params.eq):
        raise _refused_or(node, "OR of parameters on different columns beside another "
                          "parameter on one of its columns")


def _why_not_listed(term: exp.Expr) -> str:
    """Why a term of an OR holding a ``?`` cannot be one of its IN list's values."""
    if isinstance(term, exp.Is) or (isinstance(term, exp.Not) and isinstance(term.this, exp.Is)):
        return ("IS NULL beside a parameter under OR (`a = ? OR a IS NULL`: no reader keeps "
                "NULL keys)")
    if isinstance(term, exp.NullSafeEQ):
        return "<=> parameter under OR (a NULL value finds the NULLs, an IN list's does not)"
    return ("under OR, parameters must all compare one column as `column = ?` or "
            "`column IN (?, ...)`, or each its own column as `column = ?`, with nothing "
            "else beside them")


def _refused_or(node: exp.Expr, why: str) -> SqlError:
    """The refusal (1235, a :class:`ParameterError` too) of a ``?`` under the OR ``node``."""
    return error_at(node, f"unsupported use of a parameter in {node.sql(dialect='mysql')!r}: "
                    f"{why}", UnsupportedParameterError)


def _fixed_lists(params: Parameters) -> None:
    """Several ``IN (?, ...)`` lists: each keys its column as an equality would, with every
    value of the list looked up (:attr:`Parameters.listed`). Where one list would end among
    a read's values cannot be told apart from the next, so each takes as many values as it
    has ``?`` (an ad-hoc query's view is made per count, rivulet/engine/program.py)."""
    keyed = {column for _, column in params.eq}
    seen: set[int] = set()
    for column, placeholders, node in params.lists:
        if column in keyed or column in seen:
            raise unsupported(node, "IN (?, ...) parameter list on a column another "
                              "parameter compares, beside a second list")
        seen.add(column)
        params.eq.append((placeholders[0], column))
        params.listed.append((placeholders[0], placeholders[1:]))
    # the key in the order of the ``?`` (as ViewPlan.key_params are)
    params.eq.sort()


def _column_and_placeholder(a: exp.Expr, b: exp.Expr) -> tuple[exp.Column | None, exp.Expr]:
    if isinstance(a, exp.Column) and isinstance(b, exp.Placeholder):
        return a, b
    if isinstance(b, exp.Column) and isinstance(a, exp.Placeholder):
        return b, a
    return None, a


def _add_range(node: exp.Expr, column: int, op: str, param: int, params: Parameters, *,
               between: bool = False) -> None:
    """A bound ``column op ?``: on the first range column written, the reader's range;
    on any other, one of :attr:`Parameters.other_ranges`, checked over the rows that range
    holds."""
    bound = ir.RangeBound(op, param, between)
    if params.range_column in (None, column):
        params.range_column = column
        params.range_bounds.append(bound)
        return
    for other, bounds in params.other_ranges:
        if other == column:
            bounds.append(bound)
            return
    params.other_ranges.append((column, [bound]))


def _what(plan: ir.ViewPlan) -> str:
    """The view by name, or "statement" for an ad-hoc query's view (its name is rivulet's)."""
    return "statement" if ir.is_adhoc(plan.name) else f"view {plan.name!r}"


def values_by_param(plan: ir.ViewPlan, params: Sequence[Any]) -> dict[Any, Any]:
    """Parameter values by position; an IN list's values (any number of them, in place of
    its placeholders) under ``"in"``. Raises ParameterCountError for a wrong number of
    values."""
    n = plan.param_count
    if not plan.in_list:
        if len(params) != n:
            raise ParameterCountError(
                f"{_what(plan)} takes {n} parameter(s), got {len(params)}")
        return dict(enumerate(params))
    extra = len(params) - n
    start, size = plan.in_list[0], len(plan.in_list) + extra
    if size < 1:
        raise ParameterCountError(
            f"{_what(plan)} takes {n - len(plan.in_list)} parameter(s) and at least one "
            f"IN value, got {len(params)} values")
    values: dict[Any, Any] = {}
    for p in range(n):
        if p < start:
            values[p] = params[p]
        elif p >= start + len(plan.in_list):
            values[p] = params[p + extra]
    values["in"] = list(params[start:start + size])
    return values


#: The kinds of a parameter's value by its Python type (as the same literal's: ``1.5`` is a
#: DECIMAL, ``1.5e0`` a FLOAT, ``TRUE`` a BOOL; a ``timedelta`` a TIME; a value read from an
#: ENUM column its text).
_VALUE_KINDS: dict[type, Kind] = {
    int: INT, bool: BOOL, float: FLOAT, decimal.Decimal: DECIMAL, str: STR, bytes: BYTES,
    dt.date: DATE, dt.datetime: DATETIME, dt.timedelta: TIME, EnumValue: STR,
}


def literal_of(value: Any) -> ir.Lit:
    """A parameter's value as the constant a query would write in its place."""
    if value is None:
        return ir.Lit(None, None)
    kind = _VALUE_KINDS.get(type(value))
    if kind is None:
        raise ParameterError(
            f"a parameter value must be a number, string, bytes, date, datetime, timedelta "
            f"or None, got a {type(value).__name__} ({value!r:.40}); pass the values of an "
            "IN (?, ...) one by one")
    return ir.Lit(int(value) if kind is BOOL else plain(value), kind)


#: The Python type of a key column's stored values, by its kind, where every value of that
#: type finds exactly the stored values equal to it (not a float or a Decimal: NaN). An
#: ENUM's member, of this column or another, finds the member of its text, as MySQL
#: compares two ENUMs; a TIME beyond the column's range or digits finds nothing, as in MySQL.
_STORED: dict[Kind, type] = {
    INT: int, BOOL: int, STR: str, BYTES: bytes, DATE: dt.date, DATETIME: dt.datetime,
    ENUM: EnumValue, TIME: dt.timedelta,
}


def key_value(kind: Kind | None, value: Any, members: tuple[str, ...] = ()) -> Any:
    """The stored value of a ``kind`` key column that ``value`` finds under MySQL's ``=``, or
    an :class:`Unkeyed` member (:func:`rivulet.values.matching.equal_key`; a value already
    of the column's type is its own key). ``members``: an ENUM column's."""
    if kind is not None and type(value) is _STORED.get(kind):
        return value
    return equal_key(kind, value, members)


def key_members(plan: ir.ViewPlan) -> tuple[tuple[str, ...], ...]:
    """Per key column of ``plan``, an ENUM column's members (a number finds the member at
    its position), else ``()``."""
    out = []
    for i in plan.key:
        column = plan.root.columns[i].column
        out.append(column.members if column is not None and column.kind == ENUM else ())
    return tuple(out)


def exact_types(kind: Kind | None) -> frozenset[type]:
    """Python types of values a reader of a ``kind`` key may look up as they are."""
    return EXACT_TYPES.get(kind, frozenset()) if kind is not None else frozenset()


@dataclass(frozen=True)
class KeyLookup:
    """How a read's values become the reader keys it asks for: each key the tuple of the
    stored values of the key columns that MySQL's ``=`` finds equal to the read's values
    (:func:`key_value`). Made once per view (:meth:`of`): reads are the hot path.

    The engine's read handles and the Spark executor both use it, so that they agree."""

    kinds: tuple[Kind | None, ...]  # of the key columns
    stored: tuple[type | None, ...]  # the Python type of each key column's stored values
    members: tuple[tuple[str, ...], ...]  # of each key column that is an ENUM, else ()
    eq_params: tuple[int, ...]  # the ``?`` of each key column but an IN list's
    equal_params: tuple[tuple[int, int], ...]  # (``?``, key position): see ViewPlan
    null_safe: frozenset[int]
    in_list: bool
    #: Key position -> the other ``?`` of its IN list, of several lists (ViewPlan.listed).
    listed: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, plan: ir.ViewPlan) -> KeyLookup:
        kinds = tuple(plan.root.columns[i].kind for i in plan.key)
        n_eq = len(plan.key) - (1 if plan.in_list else 0)
        return cls(kinds, tuple(_STORED.get(k) if k is not None else None for k in kinds),
                   key_members(plan), plan.key_params[:n_eq], plan.equal_params,
                   frozenset(plan.null_safe), bool(plan.in_list), dict(plan.listed))

    def keys(self, values: dict[Any, Any]) -> list[tuple] | Literal[Unkeyed.SCAN]:
        """The keys a read of ``values`` (:func:`values_by_param`) asks for, in order, each
        once; none where no row can match (a NULL, ``int_col = 1.5``, an equality of
        :attr:`ViewPlan.equal_params` that fails). :attr:`Unkeyed.SCAN` where a value may
        equal several stored values (``varchar_col = 1``, ``col <=> NULL``): the reader
        cannot answer by its keys, and the read is computed with the values as constants
        instead (rivulet/plan/bound.py)."""
        scan = False
        eq_key: list[Any] = []
        choices: dict[int, list[Any]] = {}  # of a list's key position: its values' keys
        for i, p in enumerate(self.eq_params):
            v = values[p]
            rest = self.listed.get(i)
            if rest is not None:
                found = self._listed_keys(i, [v, *(values[q] for q in rest)])
                if found is Unkeyed.SCAN:
                    scan = True
                elif not found:
                    return []  # no value of the list finds a row
                else:
                    choices[i] = found
                eq_key.append(None)  # (each of the choices, below)
                continue
            if type(v) is self.stored[i]:
                eq_key.append(v)
                continue
            if v is None and p in self.null_safe:
                scan = True  # ``col <=> NULL`` finds the NULLs, which no reader keys
                eq_key.append(None)
                continue
            k = equal_key(self.kinds[i], v, self.members[i])
            if k is Unkeyed.NOTHING:
                return []
            scan = scan or k is Unkeyed.SCAN
            eq_key.append(k)
        checks: list[tuple[int, Any]] = []
        for p, position in self.equal_params:
            v = values[p]
            if v is None and p in self.null_safe:
                scan = True
                continue
            k = key_value(self.kinds[position], v, self.members[position])
            if k is Unkeyed.NOTHING:
                return []
            scan = scan or k is Unkeyed.SCAN
            checks.append((position, k))
        if not self.in_list:
            if scan:
                return Unkeyed.SCAN
            if choices:
                return [k for k in _combinations(eq_key, choices)
                        if all(k[i] == v for i, v in checks)]
            key = tuple(eq_key)
            return [key] if all(key[i] == v for i, v in checks) else []
        kind, stored, members = self.kinds[-1], self.stored[-1], self.members[-1]
        listed: list[Any] = []
        for v in values["in"]:
            k = v if type(v) is stored else equal_key(kind, v, members)
            if k is Unkeyed.SCAN:
                scan = True
            elif k is not Unkeyed.NOTHING:
                listed.append(k)
        if scan:
            return Unkeyed.SCAN
        keys = dict.fromkeys((*eq_key, v) for v in listed)
        return [k for k in keys if all(k[i] == v for i, v in checks)] if checks else list(keys)

    def _listed_keys(self, position: int,
                     values: list[Any]) -> list[Any] | Literal[Unkeyed.SCAN]:
        """The keys the values of an IN list at key ``position`` find, each once (none
        where none finds a row); :attr:`Unkeyed.SCAN` where one may find several."""
        kind, stored, members = self.kinds[position], self.stored[position], \
            self.members[position]
        found: list[Any] = []
        for v in values:
            k = v if type(v) is stored else equal_key(kind, v, members)
            if k is Unkeyed.SCAN:
                return Unkeyed.SCAN
            if k is not Unkeyed.NOTHING:
                found.append(k)
        return list(dict.fromkeys(found))


def _combinations(key: list[Any], choices: dict[int, list[Any]]) -> list[tuple]:
    """Every key ``key`` stands for with each of ``choices``' positions taking each of its
    values, each once (in the order of the lists' values)."""
    positions = sorted(choices)
    out: list[tuple] = []
    for picked in itertools.product(*(choices[i] for i in positions)):
        filled = list(key)
        for i, v in zip(positions, picked):
            filled[i] = v
        out.append(tuple(filled))
    return list(dict.fromkeys(out))


def lookup_keys(plan: ir.ViewPlan,
                values: dict[Any, Any]) -> list[tuple] | Literal[Unkeyed.SCAN]:
    """:meth:`KeyLookup.keys` of ``plan`` (made anew: for reads off the hot path)."""
    return KeyLookup.of(plan).keys(values)


def range_bounds(plan: ir.ViewPlan, values: dict[Any, Any]) -> list[tuple[str, Any]]:
    """A range read's bounds, ``(op, value)``, as the read gives them. (Text that is no
    date, compared with a DATE or DATETIME column, is the zero date there, as in MySQL:
    ``values.comparison``; the read checks such a bound row by row.)"""
    # (a value read from an ENUM column compares as its text, as a client would send it)
    assert plan.range_column is not None  # a range view
    return [(b.op, plain(values[b.param])) for b in plan.range_bounds]


def compared_as_doubles(plan: ir.ViewPlan, column_kind: Kind | None, values: dict[Any, Any],
                        bounds: Sequence[ir.RangeBound] | None = None) -> bool:
    """Whether a read's ``column BETWEEN ? AND ?`` (of ``bounds``, the first range
    column's by default) compares the column and both values as DOUBLEs (text and a number
    among them: MySQL types the three together, :func:`values.types.between_as_doubles`),
    which no bound placed among the column's values answers."""
    ends = [values[b.param] for b in (plan.range_bounds if bounds is None else bounds)
            if b.between]
    return bool(ends) and between_as_doubles(
        [column_kind] + [value_type(v).kind for v in ends])


def any_compared_as_doubles(plan: ir.ViewPlan, values: dict[Any, Any]) -> bool:
    """Whether a read's ``BETWEEN ? AND ?`` on any range column compares as DOUBLEs
    (:func:`compared_as_doubles`)."""
    if plan.bounds_keyed:  # (the key column of each column's first bound has its type)
        first = plan.key[len(plan.key) - len(plan.all_range_bounds)]
    else:
        assert plan.range_column is not None  # a range view
        first = plan.range_column
    if compared_as_doubles(plan, plan.root.columns[first].kind, values):
        return True
    return any(compared_as_doubles(plan, plan.root.columns[other.column].kind, values,
                                   other.bounds) for other in plan.other_ranges)


def other_range_bounds(plan: ir.ViewPlan,
                       values: dict[Any, Any]) -> list[tuple[ir.ColumnRange, list[Any]]]:
    """Each of a range read's :attr:`~rivulet.plan.ir.ViewPlan.other_ranges` with its
    bounds' values as the read gives them (as :func:`range_bounds`)."""
    return [(other, [plain(values[b.param]) for b in other.bounds])
            for other in plan.other_ranges]
