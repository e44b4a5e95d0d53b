"""Subqueries in WHERE as semi-joins and anti-joins.

A condition of the outer WHERE (one of its AND-ed terms) of the forms

* ``EXISTS (SELECT ... FROM u WHERE u.k = t.k AND ...)`` and ``NOT EXISTS (...)``,
* ``x IN (SELECT c FROM u WHERE ...)`` and ``x NOT IN (SELECT c FROM u WHERE ...)`` (and
  ``x = ANY (...)``, ``x = SOME (...)``, which are IN, and ``x <> ALL (...)``, NOT IN)

is *decorrelated* (:func:`decorrelate`): the subquery's conditions that read the outer row
must be equalities ``outer expression = inner expression`` (the correlation keys); the
others read the subquery's own FROM only, and stay in it. The subquery then becomes a
relation of its own, with no outer column left in it: the inner side of each key (the
correlation keys, then, for IN, the selected column), and the test a join on those keys
(:func:`semi_join`), which the dataflow runs incrementally and, under partial state,
through upqueries like any join:

* ``EXISTS`` / ``IN``: the outer rows that match a row of ``δ(keys of u)`` (an inner join
  with the distinct keys: the δ keeps a count of u's rows per key, so an outer row is
  present iff that count is positive, and once however many rows match);
* ``NOT EXISTS``: the outer rows a left join with ``δ(keys of u)`` pads (no match: count 0);
* ``NOT IN``: MySQL's rule for NULLs. ``x NOT IN (subquery)`` is true when the subquery is
  empty (for this row's correlation keys); else NULL (a row WHERE drops) when x is NULL or
  the subquery yields a NULL; else true iff no value equals x. So the outer row is joined
  (left) with a count per correlation key of the subquery's rows and of its non-NULL
  values, and (left) with the distinct ``(keys, value)`` pairs, and kept iff no rows, or
  x not NULL, no NULL value (the two counts equal) and no pair matched.

An uncorrelated subquery has no correlation key: both sides get the constant 1 as one, so
that the tests above stay joins (the whole subquery is then one group of the count).

Keys compare as MySQL's ``=`` does: the planner converts both sides as it does for a
JOIN's keys before handing them here.

An EXISTS subquery's ``LIMIT n`` (n >= 1, no OFFSET: ORMs write ``LIMIT 1``) leaves
whether it has rows as it is, and is dropped.

Correlation other than by equalities
------------------------------------

A subquery whose WHERE has a correlated term that is not such an equality (``x.b < t1.b``,
``BETWEEN``, ``<>``, an OR, ...) is first rewritten so that it is (:func:`over_domain`;
Neumann and Kemper, "Unnesting Arbitrary Queries": the *domain*, or magic set): the outer
columns its correlated terms read, ``t1.b``, become the columns ``_d0``, ... of a
relation D, the distinct values of those columns over the outer row (the planner plans
it as ``Distinct(Project(outer row))`` and names it as a CTE); D joins the subquery's FROM,
its correlated terms read D's columns instead, and ``D._d0 = t1.b`` are added: its only
correlations are then equalities, and the rewritten subquery goes through the
decorrelation above unchanged (the former inequality a join condition between its own
tables and D). Per domain row the subquery yields what it yields for an outer row of those
values; the join back by ``=`` gives each outer row (duplicates too) its domain row's.
Two conditions make that exact:

* a NULL outer value meets no domain row through ``=``: the rewrite answers "the subquery
  has no rows" for it (EXISTS false, NOT EXISTS true, COUNT 0, NOT IN true), which is
  right only if the subquery's WHERE is never true with that column NULL. So a nullable
  outer column must be an operand of a comparison or BETWEEN (or of arithmetic in one)
  that is a term of the WHERE's AND, or of every branch of an OR; else refused;
* ``=`` must be the values' identity, so that an outer row meets exactly one domain row:
  numbers, dates and times. Text compares under a collation ('a' = 'A '): refused.

A subquery over an aggregated query's groups (in its select list, HAVING or ORDER BY)
correlated otherwise than by equalities is refused by name (its domain would be the
groups'), as are, in the rewritten subquery, what the decorrelation refuses (a scalar
subquery other than an aggregate, for one, as its FROM now holds two relations).

What cannot be decorrelated this way is refused by name (:class:`UnsupportedSqlError`):
a correlation other than an equality the domain cannot answer, an outer column in the
selected value, a correlated
subquery with GROUP BY, HAVING or an aggregate (and an EXISTS of one), another LIMIT,
OFFSET or a set operation, a row constructor before IN. An uncorrelated IN subquery with
GROUP BY, HAVING or aggregates (``id IN (SELECT MAX(id) FROM t GROUP BY k)``) is planned
as written, its rows its groups. Elsewhere than as a term of the outer WHERE's conjunction, EXISTS
is a count (rivulet/plan/exists_values.py) and IN a quantified comparison's value
(rivulet/plan/quantified.py), decorrelated by :func:`decorrelate_subquery` here.

>>> from rivulet.plan.catalog import Catalog
>>> from rivulet.plan.describe import describe
>>> catalog = Catalog.from_sql("CREATE TABLE t (id INT PRIMARY KEY, k INT, x INT)",
...                            "CREATE TABLE u (id INT PRIMARY KEY, k INT, c INT)")
>>> print(describe(catalog.plan(
...     "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.k AND u.c > 1)")))
Project id
  Project id, k, x
    Join inner on _key0#3 = _key0#4
      Project id, k, x, _key0 := k
        Scan t
      Distinct
        Project _key0 := k
          Filter c > 1
            Scan u
>>> print(describe(catalog.plan(
...     "SELECT id FROM t WHERE x NOT IN (SELECT c FROM u WHERE u.k = t.k)")))  # doctest: +ELLIPSIS
Project id
  Project id, k, x
    Filter (count(*) IS NULL) OR (((_key1#4 IS NOT NULL) AND (count(*) = count)) AND ...)
      Join left on _key0#3 = _key0#8 AND _key1#4 = _key1#9
        Join left on _key0#3 = _key0#5
          Project id, k, x, _key0 := k, _key1 := x
            Scan t
          Aggregate by _key0: count(*), count(_key1)
            Project _key0 := k, _key1 := c
              Scan u
        Distinct
          Project _key0 := k, _key1 := c
            Scan u
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sqlglot import exp

from rivulet.errors import UnknownColumnError, UnknownTableError
from rivulet.plan import ir
from rivulet.plan.expressions import is_aggregate
from rivulet.plan.scope import FromScope
from rivulet.sql.parens import conjuncts, unparen
from rivulet.sql.parse import unsupported
from rivulet.values.schema import INT, Kind
from rivulet.values.types import aggregate_result_type


class SubqueryTest(enum.Enum):
    """What a WHERE condition asks of its subquery's rows."""

    EXISTS = "EXISTS"
    NOT_EXISTS = "NOT EXISTS"
    IN = "IN"
    NOT_IN = "NOT IN"

    @property
    def negated(self) -> bool:
        return self in (SubqueryTest.NOT_EXISTS, SubqueryTest.NOT_IN)

    @property
    def has_value(self) -> bool:
        """Whether the test compares a value with the subquery's column (IN, NOT IN)."""
        return self in (SubqueryTest.IN, SubqueryTest.NOT_IN)


@dataclass(frozen=True)
class Decorrelated:
    """A subquery test with its correlation taken out of the subquery.

    ``outer`` are expressions over the outer FROM row, ``inner`` a SELECT of the same
    number of columns (its own conditions kept, those on the outer row dropped), to be
    matched pairwise: the correlation keys first, then (IN, NOT IN) the tested value and
    the selected column."""

    test: SubqueryTest
    outer: tuple[exp.Expr, ...]
    inner: exp.Select

    @property
    def correlated(self) -> int:
        """How many of the keys are correlation keys."""
        return len(self.outer) - (1 if self.test.has_value else 0)


def subquery_test(condition: exp.Expr) -> tuple[SubqueryTest, exp.Expr, exp.Expr | None] | None:
    """``condition`` (a term of WHERE's conjunction) as (test, subquery, tested value) when
    it is one of the four tests; None otherwise."""
    node = unparen(condition)
    negated = isinstance(node, exp.Not)
    if negated:
        node = unparen(node.this)
    if isinstance(node, exp.Exists):
        return (SubqueryTest.NOT_EXISTS if negated else SubqueryTest.EXISTS), node.this, None
    if isinstance(node, exp.In) and node.args.get("query") is not None:
        query = node.args["query"]
        return (SubqueryTest.NOT_IN if negated else SubqueryTest.IN), query, node.this
    if isinstance(node, (exp.EQ, exp.NEQ)):
        # x = ANY (subquery) is x IN (subquery); x <> ALL (subquery) is x NOT IN (subquery)
        quantifier = unparen(node.expression)
        wanted = exp.Any if isinstance(node, exp.EQ) else exp.All
        if isinstance(quantifier, wanted) and isinstance(quantifier.this, exp.Query):
            negated ^= isinstance(node, exp.NEQ)
            return (SubqueryTest.NOT_IN if negated else SubqueryTest.IN), quantifier.this, \
                node.this
    return None


def decorrelate(condition: exp.Expr, outer: FromScope,
                from_scope: Callable[[exp.Select], FromScope],
                further: Sequence[FromScope] = ()) -> Decorrelated:
    """The test ``condition`` (for which :func:`subquery_test` answers) decorrelated;
    ``outer`` resolves the outer query's names and ``from_scope`` gives the scope of a
    SELECT's FROM (the planner's); ``further`` are the scopes of the queries around the
    outer one (when it is itself a subquery), whose names a subquery may not read. Raises
    UnsupportedSqlError naming what stops it."""
    found = subquery_test(condition)
    assert found is not None
    test, query, value = found
    outer_keys, keyed = decorrelate_subquery(f"{test.value} subquery", query, value, outer,
                                             from_scope, further)
    return Decorrelated(test, outer_keys, keyed)


def decorrelate_subquery(what: str, query: exp.Expr, value: exp.Expr | None,
                         outer: FromScope, from_scope: Callable[[exp.Select], FromScope],
                         further: Sequence[FromScope] = (),
                         ) -> tuple[tuple[exp.Expr, ...], exp.Select]:
    """The subquery ``query`` (``what`` names its test, for messages), whose rows are
    tested (EXISTS) or whose one column is compared with ``value``, decorrelated: the
    outer side of each key and the SELECT of their inner sides (see
    :class:`Decorrelated`). Raises UnsupportedSqlError naming what stops it."""
    query = unparen(query)
    while isinstance(query, exp.Subquery):
        query = unparen(query.this)
    if not isinstance(query, exp.Select):
        raise unsupported(query, f"{what} with {type(query).__name__.upper()}")
    select = query.copy()
    if value is None and limit_keeps_a_row(select):
        select.set("limit", None)  # EXISTS (... LIMIT 1), as ORMs write it: one row decides
    for clause, name in (("limit", "LIMIT"), ("offset", "OFFSET")):
        if select.args.get(clause) is not None:
            raise unsupported(query, f"{what} with {name}")
    if value is not None and isinstance(unparen(value), exp.Tuple):
        raise unsupported(value, f"row constructor before {what.removesuffix(' subquery')} "
                          "(subquery)")
    inner = from_scope(select)
    scopes = Scopes(inner, outer, tuple(further))

    outer_keys, inner_keys, kept = split_correlation(select, scopes, what)
    grouping = [(name, select.args[clause]) for clause, name in (("group", "GROUP BY"),
                                                                  ("having", "HAVING"))
                if select.args.get(clause) is not None]
    if any(is_aggregate(e) for item in select.expressions for e in item.walk()):
        grouping.append(("an aggregate", select))
    if grouping and (outer_keys or value is None):
        # (its groups would be the correlation's: not planned here; and an EXISTS of
        # groups is whether any row passes its HAVING)
        raise unsupported(query, f"{what} with {grouping[0][0]}")
    for name, node in grouping:
        if node is not select and "outer" in sides(node, scopes):
            raise unsupported(node, f"outer column in the {name} of an {what}")
    if value is not None:
        items = select.expressions
        if len(items) != 1 or isinstance(items[0], exp.Star) or (
                isinstance(items[0], exp.Column) and isinstance(items[0].this, exp.Star)):
            raise unsupported(query, f"{what} selecting other than one column")
        selected = items[0].this if isinstance(items[0], exp.Alias) else items[0]
        if "outer" in sides(selected, scopes):
            raise unsupported(selected, f"outer column in the column an {what} selects")
        outer_keys.append(value)
        inner_keys.append(selected)
    if grouping:
        # Uncorrelated, its rows are its groups' as written (its one column, which a
        # HAVING may name by its alias): a relation like any subquery in FROM.
        select.set("order", None)
        return tuple(outer_keys), select
    keyed = select
    keyed.set("expressions", [exp.alias_(e.copy(), f"_key{i}") for i, e in enumerate(inner_keys)]
              or [exp.alias_(exp.Literal.number(1), "_key")])
    keyed.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
    keyed.set("order", None)
    keyed.set("distinct", None)
    return tuple(outer_keys), keyed


def split_correlation(select: exp.Select, scopes: Scopes, what: str,
                      ) -> tuple[list[exp.Expr], list[exp.Expr], list[exp.Expr]]:
    """The terms of ``select``'s WHERE conjunction as (outer keys, inner keys, kept): the
    correlation keys, each an equality of an expression over the outer row and one over
    the subquery's (pairwise), and the terms that read the subquery's FROM only. Any other
    term reading the outer row is refused (``what`` names the subquery)."""
    outer_keys: list[exp.Expr] = []
    inner_keys: list[exp.Expr] = []
    kept: list[exp.Expr] = []
    where = select.args.get("where")
    for term in conjuncts(where.this) if where is not None else []:
        if "outer" not in sides(term, scopes):
            kept.append(term)
            continue
        pair = _correlation(term, scopes)
        if pair is None:
            raise unsupported(term, f"{what} correlated other than by an equality of an "
                              "outer and an inner expression")
        outer_keys.append(pair[0])
        inner_keys.append(pair[1])
    return outer_keys, inner_keys, kept


def semi_join(test: SubqueryTest, outer: ir.Node, width: int, inner: ir.Node) -> ir.Node:
    """The outer rows that pass ``test``: ``outer`` is the outer row (its first ``width``
    columns) followed by one column per key, ``inner`` one column per key, in the same
    order (converted to compare as ``=`` does; the constant key of an uncorrelated test
    included). Its columns are the outer row's first ``width``."""
    keys = inner.arity
    outer_keys = tuple(range(width, width + keys))
    inner_keys = tuple(range(keys))
    distinct = ir.Distinct(inner, inner.columns)
    node: ir.Node
    if test in (SubqueryTest.EXISTS, SubqueryTest.IN):
        node = ir.Join(outer, distinct, "inner", outer_keys, inner_keys, None,
                       outer.columns + distinct.columns)
    elif test is SubqueryTest.NOT_EXISTS:
        node = left_join(outer, distinct, outer_keys, inner_keys)
        node = ir.Filter(node, _is_null(node, outer.arity), node.columns)
    else:
        node = _not_in(outer, width, inner, distinct)
    return ir.Project(node, tuple(ir.Col(i, c.name) for i, c in enumerate(outer.columns[:width])),
                      outer.columns[:width])


def _not_in(outer: ir.Node, width: int, inner: ir.Node, distinct: ir.Node) -> ir.Node:
    """NOT IN's rule: see the module's docstring."""
    keys = inner.arity
    groups = keys - 1  # the correlation keys (or the constant one)
    count_all = ir.AggCall("count", None)
    count_values = ir.AggCall("count", groups)
    counted = aggregate_result_type("count", None)
    grouped = ir.Aggregate(
        inner, tuple(range(groups)), (count_all, count_values),
        inner.columns[:groups] + (ir.ColumnInfo.of("count(*)", counted, False),
                                  ir.ColumnInfo.of("count", counted, False)))
    counts = left_join(outer, grouped, tuple(range(width, width + groups)),
                        tuple(range(groups)))
    node = left_join(counts, distinct, tuple(range(width, width + keys)), tuple(range(keys)))
    rows = outer.arity + groups  # count(*) of the row's group; NULL: the subquery is empty
    value = width + keys - 1
    matched = counts.arity  # a matched pair's first key: NULL when none matched
    no_null_no_match = ir.and_all([
        ir.Call("is_not_null", (ir.Col(value, outer.columns[value].name),)),
        ir.Call("eq", (ir.Col(rows), ir.Col(rows + 1))),
        _is_null(node, matched),
    ])
    predicate = ir.Call("or_", (_is_null(node, rows), no_null_no_match))
    return ir.Filter(node, predicate, node.columns)


def left_join(left: ir.Node, right: ir.Node, left_keys: tuple[int, ...],
               right_keys: tuple[int, ...]) -> ir.Node:
    padded = tuple(replace(c, nullable=True) for c in right.columns)
    return ir.Join(left, right, "left", left_keys, right_keys, None, left.columns + padded)


def _is_null(node: ir.Node, column: int) -> ir.Expr:
    return ir.Call("is_null", (ir.Col(column, node.columns[column].name),))


def constant_key() -> ir.Expr:
    """The key both sides of an uncorrelated test share."""
    return ir.Lit(1, INT)


# --------------------------------------------------------------------------- correlation


@dataclass(frozen=True)
class Scopes:
    """Where a subquery's names resolve: its own FROM, then the outer query's; the
    queries further out only to be refused."""

    inner: FromScope
    outer: FromScope
    further: tuple[FromScope, ...]


def _correlation(term: exp.Expr, scopes: Scopes) -> tuple[exp.Expr, exp.Expr] | None:
    """``term`` as (outer expression, inner expression) when it is an equality of one
    reading only the outer row and one reading only the subquery's."""
    term = unparen(term)
    if not isinstance(term, exp.EQ):
        return None
    a, b = term.this, term.expression
    sa, sb = sides(a, scopes), sides(b, scopes)
    if sa == {"outer"} and sb == {"inner"}:
        return a, b
    if sb == {"outer"} and sa == {"inner"}:
        return b, a
    return None


def sides(node: exp.Expr, scopes: Scopes) -> set[str]:
    """Which rows ``node``'s columns read ("inner", "outer"): a name resolves in the
    subquery's FROM first, as in SQL, then in the outer query's (else it is unknown, or,
    found further out, refused)."""
    sides = set()
    for column in _columns(node):
        if isinstance(column.this, exp.Star):
            continue
        try:
            scopes.inner.resolve(column)
            sides.add("inner")
            continue
        except (UnknownColumnError, UnknownTableError):
            pass
        try:
            scopes.outer.resolve(column)
            sides.add("outer")
        except (UnknownColumnError, UnknownTableError):
            if any(_resolves(column, scope) for scope in scopes.further):
                raise unsupported(column, "subquery correlated with a query further out "
                                  "than the one around it") from None
            raise
    return sides


def _resolves(column: exp.Column, scope: FromScope) -> bool:
    try:
        scope.resolve(column)
    except (UnknownColumnError, UnknownTableError):
        return False
    return True


def _columns(node: exp.Expr) -> list[exp.Column]:
    """The columns ``node`` reads itself (not those of subqueries nested in it)."""
    if isinstance(node, exp.Column):
        return [node]
    if isinstance(node, (exp.Select, exp.Subquery, exp.Exists)):
        return []
    return [c for child in node.iter_expressions() for c in _columns(child)]


def limit_keeps_a_row(select: exp.Select) -> bool:
    """Whether ``select`` has a ``LIMIT n`` (n >= 1, no OFFSET), which leaves whether it
    has rows as it is."""
    limit = select.args.get("limit")
    if limit is None or select.args.get("offset") is not None or limit.args.get("offset"):
        return False
    value = limit.expression
    return (isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit()
            and int(value.this) >= 1)




# --------------------------------------------------------------------------- domain


#: The kinds of outer column a domain may hold: those whose ``=`` is the values' identity,
#: so that the join back by ``=`` meets exactly the domain row of an outer row's values
#: (text compares under a collation: 'a' = 'A', 'a' = 'a ', several domain rows each).
_DOMAIN_KINDS = frozenset({Kind.INT, Kind.BOOL, Kind.DECIMAL, Kind.FLOAT, Kind.DATE,
                           Kind.DATETIME, Kind.TIME})


@dataclass(frozen=True)
class Domain:
    """A subquery correlated otherwise than by equalities, rewritten over its domain.

    ``query`` reads the relation ``name`` (the domain: the distinct values of ``outer``, the
    outer row's columns the correlation reads, as its columns ``_d0``, ``_d1``, ...) in its
    FROM instead of the outer row: every outer column of its correlated terms is replaced
    by the domain's, and ``name._di = <outer column i>`` added to its WHERE, its one
    correlation left."""

    name: str
    outer: tuple[exp.Column, ...]
    query: exp.Select


def domain_column(i: int) -> str:
    return f"_d{i}"


def over_domain(query: exp.Expr, what: str, name: str, outer: FromScope,
                from_scope: Callable[[exp.Select], FromScope],
                further: Sequence[FromScope] = ()) -> Domain | None:
    """``query`` rewritten (in place: the caller's copy) over the domain ``name`` when its
    WHERE has a term correlated otherwise than by an equality of an outer and an inner
    expression (see the module's docstring, "Correlation other than by equalities"); None
    when it has none (or is not a SELECT: what the usual decorrelation refuses, it
    refuses). ``what`` names the subquery in messages."""
    select = unparen(query)
    while isinstance(select, exp.Subquery):
        select = unparen(select.this)
    if not isinstance(select, exp.Select):
        return None
    scopes = Scopes(from_scope(select), outer, tuple(further))
    where = select.args.get("where")
    terms = conjuncts(where.this) if where is not None else []
    correlated = [t for t in terms if "outer" in sides(t, scopes)]
    if all(_correlation(t, scopes) is not None for t in correlated):
        return None
    columns: dict[int, int] = {}  # outer column -> domain column
    written: list[exp.Column] = []
    rewritten = []
    for term in terms:
        if "outer" not in sides(term, scopes):
            rewritten.append(term)
            continue
        for column in _columns(term):
            if isinstance(column.this, exp.Star) or sides(column, scopes) != {"outer"}:
                continue
            index = outer.resolve(column)
            info = outer.columns[index]
            kind = info.type.kind
            if kind not in _DOMAIN_KINDS:
                written_kind = "NULL" if kind is None else kind.value.upper()
                raise unsupported(column, f"{what} correlated other than by an equality, "
                                  f"on a {written_kind} outer column (its "
                                  "domain is joined back by =, which compares text under "
                                  "a collation)")
            if index not in columns:
                columns[index] = len(written)
                written.append(column.copy())
            read = exp.column(domain_column(columns[index]), table=name)
            column.replace(read)
            term = read if term is column else term
        rewritten.append(term)
    for i, column in enumerate(written):
        if outer.columns[outer.resolve(column)].nullable and \
                not any(_rejects_null(t, name, domain_column(i)) for t in rewritten):
            raise unsupported(column, f"{what} correlated other than by an equality, on a "
                              "nullable outer column its WHERE does not reject NULL of "
                              "(its domain is joined back by =, which a NULL never meets)")
    keys = [exp.EQ(this=exp.column(domain_column(i), table=name), expression=column)
            for i, column in enumerate(written)]
    select.set("where", exp.Where(this=exp.and_(*rewritten, *keys)))
    domain = exp.Table(this=exp.to_identifier(name))
    if select.args.get("from_") is None and select.args.get("from") is None:
        select.set("from_", exp.From(this=domain))
    else:
        select.append("joins", exp.Join(this=domain))
    return Domain(name, tuple(written), select)


def _rejects_null(term: exp.Expr, table: str, column: str) -> bool:
    """Whether ``term`` is never true when ``table.column`` is NULL: a comparison or a
    BETWEEN with that column as an operand (or an operand's term of arithmetic), an AND
    of which a term is, an OR of which every term is."""
    term = unparen(term)
    if isinstance(term, exp.And):
        return _rejects_null(term.this, table, column) or \
            _rejects_null(term.expression, table, column)
    if isinstance(term, exp.Or):
        return _rejects_null(term.this, table, column) and \
            _rejects_null(term.expression, table, column)
    if isinstance(term, (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)):
        operands = [term.this, term.expression]
    elif isinstance(term, exp.Between):
        operands = [term.this, term.args["low"], term.args["high"]]
    else:
        return False
    return any(_null_with(o, table, column) for o in operands)


def _null_with(node: exp.Expr, table: str, column: str) -> bool:
    """Whether ``node`` is NULL when ``table.column`` is: the column, or arithmetic on it."""
    node = unparen(node)
    if isinstance(node, exp.Column):
        return node.name == column and node.table == table
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg)):
        return any(_null_with(c, table, column) for c in node.iter_expressions())
    return False
