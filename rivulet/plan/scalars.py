"""Scalar subqueries: ``(SELECT ...)`` as a value, in the select list or in WHERE.

A scalar subquery's value is a column joined to the outer row (the planner then reads
that column where the subquery is written). MySQL answers a scalar subquery's one row's
value, NULL when it has no row, and raises error 1242 ("Subquery returns more than 1 row")
for a row where it has more. A view cannot raise an error for one row of its answer, so
only the subqueries that *provably* return at most one row are planned; the others are
refused by name. The subquery is decorrelated as EXISTS and IN are
(:func:`~rivulet.plan.subqueries.split_correlation`; correlated otherwise than by
equalities, first rewritten over its domain, rivulet/plan/subqueries.py): its WHERE's
equalities of an outer and an inner expression are its correlation keys, and it becomes
a relation of its own keyed by their inner sides, LEFT JOINed to the outer row on them
(on the constant key when uncorrelated). Its shapes (:class:`ScalarShape`):

* an aggregate without GROUP BY (``SELECT COUNT(*) FROM s WHERE s.k = t.id``): one row
  always. Uncorrelated, it is planned as written (one row, joined to every outer row).
  Correlated, it is grouped by its correlation keys, each group computed as MySQL computes
  the one implicit group (its sums not rounded as a GROUP BY's are), and an outer row no
  group matches gets the value over no rows: 0 for a bare COUNT, NULL for a bare MIN,
  MAX, SUM or AVG, and for an expression of aggregates (``COUNT(*) + 1``) the subquery's
  own value over no rows, planned as the subquery with ``WHERE FALSE`` (one row);
* at most one row per key (NULL when none): a SELECT without FROM (``(SELECT 1)``), a
  GROUP BY whose every column the WHERE fixes
  (equated to an outer expression or to a constant: Django's
  ``.values('fk').annotate(...)``), or rows of one table whose WHERE fixes every column
  of its primary key or of a unique key (a ``LIMIT n`` (n >= 1), ORDER BY and DISTINCT
  then change nothing);
* ``ORDER BY ... LIMIT 1`` over one table, where the ORDER BY's columns with the fixed
  ones hold a primary key or a unique key of NOT NULL columns (so that no two rows tie
  and the first row is MySQL's): the first row per key (a top-1 per group).

A column is fixed by an equality only where ``=`` compares it without conversion (an outer
INT against an inner VARCHAR compares as DOUBLE, under which many texts equal one value);
a subquery grouped or cut per correlation key (an aggregate, a GROUP BY, ORDER BY ...
LIMIT 1) is keyed only by such equalities, so that one outer row matches one group.
Refused by name: an outer column anywhere but in the WHERE's correlation equalities, a
correlation other than an equality, a subquery other than a SELECT (UNION...), OFFSET,
HAVING without a GROUP BY, ORDER BY beside an aggregate of a correlated subquery, a
correlation with a query further out than the one around it, and what may return more
than one row. Where the subquery may stand is the planner's: WHERE, the select list and
ORDER BY, joined to the FROM row; in an aggregated query, the select list, HAVING and
ORDER BY ones joined to its groups.

>>> from rivulet.plan.catalog import Catalog
>>> from rivulet.plan.describe import describe
>>> catalog = Catalog.from_sql("CREATE TABLE t (id INT PRIMARY KEY, k INT, x INT)",
...                            "CREATE TABLE u (id INT PRIMARY KEY, k INT, c INT)")
>>> print(describe(catalog.plan(
...     "SELECT id, (SELECT COUNT(*) FROM u WHERE u.k = t.id) AS n FROM t")))
Project id, n := _value
  Project id, k, x, _value := COALESCE(_value, 0)
    Join left on _key0#3 = _key0#4
      Project id, k, x, _key0 := id
        Scan t
      Project _key0 := k, _value := count(*)
        Aggregate by k: count(*)
          Project k
            Scan u
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlglot import exp

from rivulet.errors import OperandColumnsError
from rivulet.plan.expressions import is_aggregate, translate, type_of
from rivulet.plan.scope import FromScope
from rivulet.plan.subqueries import Scopes, sides, split_correlation
from rivulet.sql.parens import unparen
from rivulet.sql.parse import error_at, unsupported
from rivulet.values.schema import DECIMAL, FLOAT, TableSchema

#: The marker a decorrelated aggregate's SELECT carries (in its ``meta``): its groups are
#: the correlation's, each computed as MySQL computes a query's one implicit group.
IMPLICIT_GROUPS = "rivulet_implicit_groups"

#: The names of the decorrelated SELECT's columns: the keys, the value, the ORDER BY's.
KEY, VALUE, ORDER = "_key", "_value", "_order"


class ScalarShape(enum.Enum):
    """Why a scalar subquery returns at most one row (see the module's docstring)."""

    AGGREGATE = "an aggregate without GROUP BY"
    ONE_ROW = "at most one row per key"
    FIRST_ROW = "ORDER BY ... LIMIT 1"


@dataclass(frozen=True)
class Missing:
    """What a correlated subquery answers for an outer row none of its rows match: NULL,
    unless ``zero`` (a bare COUNT) or ``empty`` (an expression of aggregates: the
    subquery over no rows, a one-row SELECT)."""

    zero: bool = False
    empty: exp.Select | None = None


@dataclass(frozen=True)
class DecorrelatedScalar:
    """A scalar subquery with its correlation taken out: ``inner`` selects the inner side
    of each correlation key (``_key0``...), the value (``_value``) and, for
    :attr:`ScalarShape.FIRST_ROW`, the ORDER BY's columns (``_order0``..., descending where
    ``descending`` says), with at most one row per key (once cut to its first, for
    FIRST_ROW); ``outer`` the outer side of each key."""

    shape: ScalarShape
    outer: tuple[exp.Expr, ...]
    inner: exp.Select
    missing: Missing = Missing()
    descending: tuple[bool, ...] = ()


def scalar_subqueries(node: exp.Expr) -> list[exp.Subquery]:
    """The scalar subqueries ``node`` holds, outermost only (those inside them are their
    own), in the order written; not the subqueries of IN, EXISTS, ANY and ALL."""
    found: list[exp.Subquery] = []

    def visit(n: exp.Expr) -> None:
        if isinstance(n, (exp.Select, exp.Exists, exp.Any, exp.All)):
            return  # (another test of a subquery's rows, refused or planned as its own)
        if isinstance(n, exp.Subquery):
            if not isinstance(n.parent, exp.In) and not _compared_with_a_row(n):
                found.append(n)
            return
        for child in n.iter_expressions():
            visit(child)

    visit(node)
    return found


def _compared_with_a_row(subquery: exp.Subquery) -> bool:
    """Whether ``subquery`` is a row subquery compared with a row constructor (``(a, b) =
    (SELECT ...)``): no scalar; rivulet/sql/rows.py refuses it by name (MySQL answers it,
    so it is no error 1241)."""
    parent = subquery.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    return isinstance(parent, exp.Binary) and any(
        isinstance(side, exp.Tuple) for side in (parent.left, parent.right))


def decorrelate_scalar(subquery: exp.Subquery, outer: FromScope,
                       from_scope: Callable[[exp.Select], FromScope],
                       further: Sequence[FromScope] = ()) -> DecorrelatedScalar:
    """``subquery`` decorrelated (see the module's docstring); ``outer`` resolves the outer
    query's names, ``from_scope`` gives the scope of a SELECT's FROM (the planner's),
    ``further`` are the scopes of the queries around the outer one. Raises
    UnsupportedSqlError naming what stops it."""
    query = unparen(subquery.this)
    while isinstance(query, exp.Subquery):
        query = unparen(query.this)
    if not isinstance(query, exp.Select):
        raise unsupported(query, f"scalar subquery with {type(query).__name__.upper()}")
    items = query.expressions
    if len(items) != 1 or isinstance(items[0], exp.Star) or (
            isinstance(items[0], exp.Column) and isinstance(items[0].this, exp.Star)):
        raise error_at(query, "Operand should contain 1 column(s)", OperandColumnsError)
    select = query.copy()
    if select.args.get("with_") is not None:
        raise unsupported(select, "scalar subquery with WITH")
    if select.args.get("offset") is not None or (
            select.args.get("limit") is not None
            and select.args["limit"].args.get("offset") is not None):
        raise unsupported(select, "scalar subquery with OFFSET")
    inner_scope = from_scope(select)
    scopes = Scopes(inner_scope, outer, tuple(further))
    outer_keys, inner_keys, kept = split_correlation(select, scopes, "scalar subquery")
    item = select.expressions[0].this if isinstance(select.expressions[0], exp.Alias) \
        else select.expressions[0]
    for clause, node in (("select list", item), ("GROUP BY", select.args.get("group")),
                         ("HAVING", select.args.get("having")),
                         ("ORDER BY", select.args.get("order"))):
        if node is not None and "outer" in sides(node, scopes):
            raise unsupported(node, f"outer column in a scalar subquery's {clause} "
                              "(correlate it in the subquery's WHERE, by an equality)")
    limit = _limit(select)
    if limit == 0:
        raise unsupported(select, "scalar subquery with LIMIT 0")
    fixed = _fixed_columns(outer_keys, inner_keys, kept, outer, inner_scope)
    # (grouped or cut per key, the keys must be the values they match: one group each)
    keyed_as_is = all(_compared_as_is(o, outer, i, inner_scope)
                      for o, i in zip(outer_keys, inner_keys))
    aggregated = any(is_aggregate(n) for n in _own_nodes(item))
    group = select.args.get("group")
    having = select.args.get("having")

    if group is not None:
        if not keyed_as_is:
            raise _more_than_one_row(group, _CONVERTED)
        for g in group.expressions:
            if not (isinstance(g, exp.Column) and _column(g, inner_scope) in fixed):
                raise _more_than_one_row(g, "GROUP BY on a column its WHERE does not fix "
                                         "by an equality")
        grouped = list(group.expressions)
        grouped += [k.copy() for k in inner_keys if not any(k == g for g in grouped)]
        select.set("group", exp.Group(expressions=grouped))
        return _decorrelated(ScalarShape.ONE_ROW, select, outer_keys, inner_keys, kept, item)
    if having is not None:
        raise unsupported(having, "scalar subquery with HAVING and no GROUP BY")
    if aggregated:
        if not outer_keys:
            select.set("limit", None)  # (one row: a LIMIT n >= 1 keeps it)
            select.set("distinct", None)
            select.set("expressions", [exp.alias_(item.copy(), VALUE)])
            return DecorrelatedScalar(ScalarShape.AGGREGATE, (), select)
        if not keyed_as_is:
            raise _more_than_one_row(select, _CONVERTED)
        if select.args.get("order") is not None:
            raise unsupported(select.args["order"], "ORDER BY in a correlated scalar "
                              "subquery with an aggregate")
        empty = None
        bare = is_aggregate(unparen(item))
        if not bare:
            empty = query.copy()
            empty.set("where", exp.Where(this=exp.false()))
            empty.set("limit", None)
            empty.set("distinct", None)
        missing = Missing(zero=bare and isinstance(unparen(item), exp.Count), empty=empty)
        select.set("group", exp.Group(expressions=[k.copy() for k in inner_keys]))
        select.meta[IMPLICIT_GROUPS] = True
        return _decorrelated(ScalarShape.AGGREGATE, select, outer_keys, inner_keys, kept, item,
                             missing)

    if not inner_scope.relations:  # no FROM: one row, or none where its WHERE is false
        return _decorrelated(ScalarShape.ONE_ROW, select, outer_keys, inner_keys, kept, item)
    table = _one_table(select, inner_scope)
    if table is not None and any(set(key) <= fixed for key in _unique_keys(table)):
        return _decorrelated(ScalarShape.ONE_ROW, select, outer_keys, inner_keys, kept, item)
    order = select.args.get("order")
    if table is not None and order is not None and limit == 1 and keyed_as_is \
            and not select.args.get("distinct"):
        columns = [unparen(o.this) for o in order.expressions]
        if all(isinstance(c, exp.Column) for c in columns):
            ordered = {_column(c, inner_scope) for c in columns if isinstance(c, exp.Column)}
            not_null = [key for key in _unique_keys(table)
                        if all(not table.columns[i].nullable for i in key)]
            if any(set(key) <= ordered | fixed for key in not_null):
                return _decorrelated(ScalarShape.FIRST_ROW, select, outer_keys, inner_keys,
                                     kept, item, order=columns,
                                     descending=tuple(bool(o.args.get("desc"))
                                                      for o in order.expressions))
    if limit == 1 and order is not None and not keyed_as_is:
        why = _CONVERTED
    elif limit == 1:
        why = ("LIMIT 1 without an ORDER BY on a key of its table (MySQL picks any row)"
               if order is None else "LIMIT 1 with an ORDER BY that may tie (not on a key "
               "of NOT NULL columns of its one table)")
    else:
        why = "no aggregate, and no equality on every column of a key of its one table"
    raise _more_than_one_row(select, why)


def _decorrelated(shape: ScalarShape, select: exp.Select, outer_keys: list[exp.Expr],
                  inner_keys: list[exp.Expr], kept: list[exp.Expr], item: exp.Expr,
                  missing: Missing = Missing(), order: Sequence[exp.Expr] = (),
                  descending: tuple[bool, ...] = ()) -> DecorrelatedScalar:
    """The SELECT of keys, value and ORDER BY columns (see :class:`DecorrelatedScalar`)."""
    select.set("expressions", [
        *(exp.alias_(k.copy(), f"{KEY}{i}") for i, k in enumerate(inner_keys)),
        exp.alias_(item.copy(), VALUE),
        *(exp.alias_(o.copy(), f"{ORDER}{i}") for i, o in enumerate(order))])
    select.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
    for clause in ("order", "limit", "distinct"):
        select.set(clause, None)
    return DecorrelatedScalar(shape, tuple(outer_keys), select, missing, descending)


#: Why a subquery grouped or cut per correlation key may return several rows.
_CONVERTED = ("correlated by an equality that converts a side (other kinds, a DOUBLE or "
              "a DECIMAL's places), under which several of its groups may equal one outer "
              "value")


def _more_than_one_row(node: exp.Expr, why: str) -> Exception:
    return unsupported(node, "scalar subquery that may return more than one row (MySQL's "
                       f"error 1242 for such an outer row; a view cannot raise it): {why}")


def _fixed_columns(outer_keys: list[exp.Expr], inner_keys: list[exp.Expr],
                   kept: list[exp.Expr], outer: FromScope, inner: FromScope) -> set[int]:
    """The inner FROM row's columns the WHERE fixes to one value: a column equated to an
    outer expression (a correlation key) or to a literal, where ``=`` compares the two as
    they are (:func:`_compared_as_is`)."""
    fixed = set()
    pairs = list(zip(outer_keys, inner_keys, [outer] * len(outer_keys)))
    for term in kept:
        term = unparen(term)
        if isinstance(term, exp.EQ):
            for column, value in ((term.this, term.expression), (term.expression, term.this)):
                if isinstance(unparen(value), (exp.Literal, exp.Neg)):
                    pairs.append((value, column, inner))
    for value, column, scope in pairs:
        column = unparen(column)
        if isinstance(column, exp.Column) and _compared_as_is(value, scope, column, inner):
            fixed.add(_column(column, inner))
    return fixed


def _compared_as_is(value: exp.Expr, scope: FromScope, inner: exp.Expr,
                    inner_scope: FromScope) -> bool:
    """Whether ``value = inner`` compares the two as they are: of one kind, not a DOUBLE,
    and for a DECIMAL at the places both show and carry. Then one value equals one inner
    value only; a conversion (an INT against a VARCHAR compares as DOUBLE) would make many
    inner values ('1', '1.0') equal one outer value."""
    have = type_of(translate(inner, inner_scope), inner_scope.types())
    other = type_of(translate(value, scope), scope.types())
    if have.kind is None or have.kind != other.kind or have.kind == FLOAT:
        return False
    return have.kind != DECIMAL or (have.frac == other.frac and not have.rounded
                                     and not other.rounded)


def _column(column: exp.Column, scope: FromScope) -> int:
    return scope.resolve(column)


def _one_table(select: exp.Select, scope: FromScope) -> TableSchema | None:
    """The table ``select`` reads, when its FROM is one table (not a view, a subquery or
    a join)."""
    if select.args.get("joins") or len(scope.relations) != 1:
        return None
    return scope.relations[0].table


def _unique_keys(table: TableSchema) -> list[tuple[int, ...]]:
    keys = list(table.unique)
    if table.primary_key:
        keys.append(tuple(table.primary_key))
    return keys


def _limit(select: exp.Select) -> int | None:
    limit = select.args.get("limit")
    if limit is None:
        return None
    value = limit.expression
    if not (isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit()):
        raise unsupported(limit, "scalar subquery with a LIMIT other than a number")
    return int(value.this)


def _own_nodes(node: exp.Expr) -> list[exp.Expr]:
    """``node`` and what it holds, but not what its subqueries hold."""
    out = [node]
    for child in node.iter_expressions():
        if not isinstance(child, (exp.Select, exp.Subquery, exp.Exists)):
            out.extend(_own_nodes(child))
    return out

