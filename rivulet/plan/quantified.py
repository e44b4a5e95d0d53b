"""Quantified comparisons with a subquery as values: ``x op ANY (SELECT ...)`` (``SOME``
is ANY), ``x op ALL (SELECT ...)`` for ``op`` one of ``= <> < <= > >=``, and
``x IN (SELECT ...)`` (which is ``x = ANY``) wherever a value may stand: under ``OR`` or
``NOT``, in the select list, a ``CASE``, compared with something, in ``HAVING`` or
``ORDER BY``. (A term of WHERE's ``AND`` of the forms IN, NOT IN, ``= ANY`` and ``<> ALL``
is a semi-join or an anti-join instead: rivulet/plan/subqueries.py.)

MySQL's answer, in its three-valued logic, for the subquery's values S (those of the
outer row's correlation keys) and x:

* ``x op ANY S``: 0 when S is empty (even for a NULL x); else NULL when x is NULL; else 1
  when some non-NULL s has ``x op s``; else NULL when S holds a NULL; else 0.
* ``x op ALL S``: 1 when S is empty (even for a NULL x); else NULL when x is NULL; else 0
  when some non-NULL s has ``NOT (x op s)``; else NULL when S holds a NULL; else 1. (So
  ``x op ALL S`` is ``NOT (x op' ANY S)`` for the opposite ``op'``: ``<>`` for ``=``,
  ``<=`` for ``>``...; ``x <> ALL S`` is ``x NOT IN S``.)

The subquery is decorrelated as IN's is (equalities of an outer and an inner expression
are its correlation keys; :func:`~rivulet.plan.subqueries.decorrelate_subquery`) and
becomes a relation of the correlation keys and the value, each converted to compare as
``=`` does. What the table above asks of S is then a few aggregates per correlation key,
LEFT JOINed to the outer row (:func:`quantified_value`):

* ``COUNT(*)`` (NULL after the join: S is empty) and ``COUNT(value)`` (less than it: S
  holds a NULL);
* for ``<`` and ``<=``, ``MAX(value)``; for ``>`` and ``>=``, ``MIN(value)``: some s has
  ``x < s`` iff ``x < MAX(S)``, and ``NOT (x < s)`` iff ``x >= MIN(S)``... (MIN and MAX
  skip NULLs, and are NULL when every s is, so that the comparison is then not true);
* for ``=`` and ``<>``, the number of s equal to x: a count per (keys, value), LEFT
  JOINed on (keys, x). Some s equals x iff it is there; some non-NULL s differs from x
  iff ``COUNT(value)`` exceeds it.

That MIN and MAX stand for S under the comparison holds only where the comparison orders
the subquery's values as MIN and MAX do, so the ordered forms are refused (by name) where
it converts them otherwise: text compared as numbers or as dates (MariaDB then answers
one way in the select list and another in WHERE, where it compares with the MAX of the
text itself), a number compared as a date, an ENUM. So are a bare subquery and an
aggregate as x (``(SELECT MAX(c) FROM u) IN (...)``, ``HAVING MAX(x) > ALL (...)``), which
MariaDB answers otherwise than it answers for their value (``(SELECT ...) + 0`` is taken),
``<=> ANY``, and what IN's decorrelation refuses. Each aggregate is maintained
incrementally as any is, and partial state keeps working through the joins.

>>> from rivulet.plan.catalog import Catalog
>>> from rivulet.plan.describe import describe
>>> catalog = Catalog.from_sql("CREATE TABLE t (id INT PRIMARY KEY, k INT, x INT)",
...                            "CREATE TABLE u (id INT PRIMARY KEY, k INT, c INT)")
>>> print(describe(catalog.plan(
...     "SELECT id, x > ALL (SELECT c FROM u WHERE u.k = t.k) AS a FROM t")))  # doctest: +ELLIPSIS
Project id, a := _value
  Project id, k, x, _value := CASE WHEN count(*) IS NULL THEN 1 ... WHEN _key1 <= max THEN 0 ...
    Join left on _key0#3 = _key0#5
      Project id, k, x, _key0 := k, _key1 := x
        Scan t
      Aggregate by _key0: count(*), count(_key1), max(_key1)
        Project _key0 := k, _key1 := c
          Scan u
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from rivulet.plan import ir
from rivulet.plan.expressions import is_aggregate, typed
from rivulet.plan.subqueries import left_join
from rivulet.sql.parens import unparen
from rivulet.sql.parse import unsupported
from rivulet.values.schema import DATETIME, ENUM, INT, Kind
from rivulet.values.types import (
    DATE_KINDS,
    FLOAT,
    NUMBER_KINDS,
    TEXT_KINDS,
    SqlType,
    aggregate_result_type,
    comparison_kind,
)


class Quantifier(enum.Enum):
    ANY = "ANY"
    ALL = "ALL"


#: The comparisons a quantifier may follow, by sqlglot's node, as the function library
#: names them.
COMPARISONS: dict[type, str] = {exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le",
                                exp.GT: "gt", exp.GTE: "ge"}

#: Each comparison's opposite: ``NOT (x op s)`` is ``x opposite s`` for non-NULL x and s.
OPPOSITE = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "gt": "le", "le": "gt"}

#: The aggregate of the subquery's values that decides an ordered comparison for some s:
#: ``x < s`` for some s iff ``x < MAX(S)``; ``x > s`` iff ``x > MIN(S)``.
_EXTREME = {"lt": "max", "le": "max", "gt": "min", "ge": "min"}

_WRITTEN = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@dataclass(frozen=True)
class Quantified:
    """``value op quantifier (query)``, as written at ``node``."""

    node: exp.Expr
    op: str
    quantifier: Quantifier
    value: exp.Expr
    query: exp.Expr

    @property
    def written(self) -> str:
        """The construct as SQL names it, for messages (``> ALL``, ``IN``)."""
        if isinstance(self.node, exp.In):
            return "IN"
        return f"{_WRITTEN[self.op]} {self.quantifier.value}"

    @property
    def ordered(self) -> bool:
        """Whether the comparison orders (``<``...), rather than tests equality."""
        return self.op in _EXTREME


def quantified(node: exp.Expr) -> Quantified | None:
    """``node`` as a quantified comparison with a subquery (``IN (SELECT ...)`` counted),
    None when it is none."""
    if isinstance(node, exp.In) and node.args.get("query") is not None:
        return Quantified(node, "eq", Quantifier.ANY, node.this, node.args["query"])
    op = COMPARISONS.get(type(node))
    if op is None:
        return None
    assert isinstance(node, exp.Binary)
    right = unparen(node.expression)
    if not isinstance(right, (exp.Any, exp.All)) or not isinstance(right.this, exp.Query):
        return None
    quantifier = Quantifier.ANY if isinstance(right, exp.Any) else Quantifier.ALL
    return Quantified(node, op, quantifier, node.this, right.this)


def quantified_comparisons(node: exp.Expr) -> list[Quantified]:
    """The quantified comparisons ``node`` holds, not those inside its subqueries (theirs),
    each after those inside its own compared value (which it reads)."""
    out: list[Quantified] = []

    def visit(n: exp.Expr) -> None:
        if isinstance(n, (exp.Select, exp.Subquery, exp.Exists)):
            return
        found = quantified(n)
        if found is not None:
            if isinstance(unparen(found.value), exp.Subquery):
                # ((SELECT MAX(c) FROM u) IN (SELECT ...) is 1 in MariaDB where the
                # subquery's value is 2 and the other's values are 1 and NULL)
                raise unsupported(n, f"subquery compared by {found.written} with a subquery "
                                  "(MariaDB answers otherwise than for its value; compare "
                                  "(SELECT ...) + 0)")
            if any(is_aggregate(a) for a in _own_nodes(found.value)):
                # (MAX(id) IN (SELECT ...) is 0 in MariaDB where MAX(id) is one of its
                # values; MAX(x) > ALL (...) NULL where some value is MAX(x))
                raise unsupported(n, f"aggregate compared by {found.written} with a subquery "
                                  "(MariaDB answers otherwise than for its value)")
            visit(found.value)
            out.append(found)
            return
        if isinstance(n, exp.NullSafeEQ) and isinstance(unparen(n.expression),
                                                        (exp.Any, exp.All)):
            raise unsupported(n, "<=> ANY/ALL (subquery)")
        for child in n.iter_expressions():
            visit(child)

    visit(node)
    return out


def _own_nodes(node: exp.Expr) -> list[exp.Expr]:
    """``node`` and what it holds, but not what its subqueries hold."""
    if isinstance(node, (exp.Select, exp.Subquery, exp.Exists)):
        return []
    return [node, *(n for child in node.iter_expressions() for n in _own_nodes(child))]


def refuse_unordered(found: Quantified, value: SqlType, inner: SqlType) -> None:
    """Refuse an ordered comparison of ``value`` with a subquery's values of type ``inner``
    that does not order them as MIN and MAX do (see the module's docstring)."""
    if not found.ordered:
        return
    as_kind = comparison_kind(value.kind, inner.kind)
    if inner.kind == ENUM or value.kind == ENUM or not _orders_as_is(inner.kind, as_kind):
        raise unsupported(
            found.node, f"{found.written} (subquery) comparing a {value.kind or 'NULL'} with "
            f"a subquery's {inner.kind or 'NULL'} values: the comparison orders them "
            "otherwise than MIN and MAX of them do (MySQL answers it one way in WHERE and "
            "another in the select list); compare values of one kind (CAST one side)")


def _orders_as_is(inner: Kind | None, as_kind: Kind | None) -> bool:
    """Whether comparing values of kind ``inner`` as ``as_kind`` keeps their order (None:
    as they are)."""
    if as_kind is None or inner is None or inner == as_kind:
        return True
    if as_kind == FLOAT:
        return inner in NUMBER_KINDS
    if as_kind == DATETIME:
        return inner in DATE_KINDS
    return as_kind in TEXT_KINDS and inner in TEXT_KINDS  # (binary text: rivulet's order)


def quantified_value(found: Quantified, outer: ir.Node, width: int,
                     inner: ir.Node) -> tuple[ir.Node, ir.Expr]:
    """The outer row joined to what ``found`` asks of its subquery, and its value over the
    joined row (see the module's docstring). ``outer`` is the outer row (its first
    ``width`` columns) followed by the correlation keys (the constant key of an
    uncorrelated subquery) and x, ``inner`` the subquery's keys and value in the same
    order, both converted to compare as ``=`` does."""
    keys = inner.arity
    groups = keys - 1  # (the correlation keys; the value is the last key)
    # What decides the comparison for some s: for ANY x op s, for ALL NOT (x op s).
    decisive = found.op if found.quantifier is Quantifier.ANY else OPPOSITE[found.op]
    extreme = _EXTREME.get(decisive)
    counted = aggregate_result_type("count", None)
    aggs = [ir.AggCall("count", None), ir.AggCall("count", groups)]
    columns = [ir.ColumnInfo.of("count(*)", counted, False),
               ir.ColumnInfo.of("count", counted, False)]
    if extreme is not None:
        aggs.append(ir.AggCall(extreme, groups))
        columns.append(ir.ColumnInfo.of(extreme, inner.columns[groups].type, True))
    counts = ir.Aggregate(inner, tuple(range(groups)), tuple(aggs),
                          inner.columns[:groups] + tuple(columns))
    node = left_join(outer, counts, tuple(range(width, width + groups)), tuple(range(groups)))
    rows = ir.Col(outer.arity + groups, "count(*)")  # NULL: no rows
    values = ir.Col(outer.arity + groups + 1, "count")  # fewer than rows: a NULL among them
    x = ir.Col(width + groups, outer.columns[width + groups].name)
    some: ir.Expr  # some non-NULL s has x decisive s (x not NULL)
    if extreme is not None:
        some = ir.Call(decisive, (x, ir.Col(outer.arity + groups + 2, extreme)))
    else:  # (= and <>: the values equal to x, counted; NULL where none)
        equal = ir.Aggregate(inner, tuple(range(keys)), (ir.AggCall("count", None),),
                             inner.columns + (ir.ColumnInfo.of("equal", counted, False),))
        joined = node.arity
        node = left_join(node, equal, tuple(range(width, width + keys)), tuple(range(keys)))
        equals = ir.Col(joined + keys, "equal")
        some = (ir.Call("is_not_null", (equals,)) if decisive == "eq" else
                ir.Call("gt", (values, ir.Call("COALESCE", (equals, ir.Lit(0, INT))))))
    null = ir.Lit(None, None)
    one, zero = ir.Lit(1, INT), ir.Lit(0, INT)
    found_one, none_found = (one, zero) if found.quantifier is Quantifier.ANY else (zero, one)
    case = ir.Case(((ir.Call("is_null", (rows,)), none_found),
                    (ir.Call("is_null", (x,)), null),
                    (some, found_one),
                    (ir.Call("lt", (values, rows)), null)), none_found)
    return node, typed(case, _types(node.columns))[0]


def _types(columns: Sequence[ir.ColumnInfo]) -> list[SqlType]:
    return [c.type for c in columns]
