"""``SELECT`` statements to view plans.

The planner binds names against a catalog, pulls the ``?`` parameters out of the WHERE
clause (they become the reader's key, not a filter: one maintained view answers every
parameter value), and builds the relational IR bottom-up:
FROM/JOIN -> WHERE -> GROUP BY/aggregates -> HAVING -> SELECT list -> DISTINCT -> top-k.

The plan it returns is the query as written, not optimized: the rules of
rivulet/plan/optimize.py run on it later, once, where it is compiled (the dataflow
builder, the Spark compiler, the streaming pipeline). Nothing they need is known only
while planning: eager aggregation, which ran here, reads the primary key of each scanned
table version from its ``Scan``, the reader's key and implicit group from the ViewPlan,
and which aggregates other views hold from the program's views as planned (its ``views``
option); none of the rules reads the storage's statistics (``value_counts`` serves the
builder's choice of reader keys). So the catalog keeps plans as written, and a view read
by another view in FROM enters the reader's plan as written, to be optimized with it
exactly as it is alone.

Name resolution (:mod:`rivulet.plan.scope`) and the parameters (:mod:`rivulet.plan.params`)
live apart; what stays here is one walk of one SELECT, clause by clause, whose steps share
the FROM scope and the parameters found so far: it is one module on purpose, though it is
longer than most.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from sqlglot import exp

from rivulet.errors import (
    AggregateMisuseError,
    AmbiguousColumnError,
    ParameterError,
    SqlError,
    SqlSyntaxError,
    UnionWidthError,
    UnknownColumnError,
    UnknownQualifierError,
    UnknownTableError,
    UnsupportedParameterError,
    UnsupportedSqlError,
)
from rivulet.plan import ir
from rivulet.plan.alternatives import refuse_unlike_columns, united_columns
from rivulet.plan.broken import BrokenView
from rivulet.plan.ctes import Cte, defined, named_columns
from rivulet.plan.exists_values import exists_as_counts
from rivulet.plan.expressions import (
    SPREAD_AGGREGATES,
    as_text,
    convert,
    full_text_search,
    is_aggregate,
    may_carry_fewer_places,
    pads_a_choice,
    refuse_join_keys,
    shown,
    shown_type,
    to_places,
    translate,
    translate_condition,
    type_of,
)
from rivulet.plan.joins import (
    JoinStep,
    KeyPair,
    comma_groups,
    implied_pairs,
    key_pair,
    keyable,
)
from rivulet.plan.params import Parameters, extract_parameters, literal_of
from rivulet.plan.quantified import (
    Quantified,
    quantified_comparisons,
    quantified_value,
    refuse_unordered,
)
from rivulet.plan.scalars import (
    IMPLICIT_GROUPS,
    VALUE,
    ScalarShape,
    decorrelate_scalar,
    scalar_subqueries,
)
from rivulet.plan.scope import FromScope, GroupedScope, Relation
from rivulet.plan.subqueries import (
    constant_key,
    decorrelate,
    decorrelate_subquery,
    domain_column,
    left_join,
    over_domain,
    semi_join,
    subquery_test,
)
from rivulet.sql.dual import is_dual
from rivulet.sql.parens import conjuncts
from rivulet.sql.parse import error_at, unsupported
from rivulet.values.schema import (
    BOOL,
    BYTES,
    DATETIME,
    DECIMAL,
    ENUM,
    FLOAT,
    INT,
    STR,
    TIME,
    TableSchema,
)
from rivulet.values.types import (
    NOT_FIXED,
    SqlType,
    aggregate,
    aggregate_result_type,
    column_type,
    comparison_kind,
    number_type,
)


class Catalog(Protocol):
    def table(self, name: str) -> TableSchema | None: ...

    def view(self, name: str) -> ir.ViewPlan | None: ...

    def broken_view(self, name: str) -> BrokenView | None: ...


# --------------------------------------------------------------------------- planner


@dataclass
class Planner:
    catalog: Catalog
    #: The values of the outer WHERE's ``?`` by the identity of their placeholder node: the
    #: query is then planned with them as constants, as a filter (rivulet/plan/bound.py),
    #: instead of keying the reader by them.
    bound: dict[int, Any] | None = None
    #: The FROM scopes of the queries whose WHERE subquery is being planned, outermost
    #: first: names a nested subquery may not read (rivulet/plan/subqueries.py).
    enclosing: list[FromScope] = field(default_factory=list)
    #: The CTEs of the WITH clauses around the query being planned, by lower-case name
    #: (rivulet/plan/ctes.py).
    ctes: dict[str, Cte] = field(default_factory=dict)
    #: How many subqueries were rewritten over a domain so far (each names its own).
    domains: int = 0

    # ..................................................................... entry points

    def plan_view(self, name: str, query: exp.Expr, sql: str = "", *,
                  shown: bool = True, union_branch: bool = False) -> ir.ViewPlan:
        """Plan ``query`` (a SELECT or UNION) as the view ``name``. ``shown``: its DECIMAL
        answers are rounded to the places their types show, as MySQL returns them (a
        subquery MySQL merges into the query around it hands its values on unrounded).
        ``union_branch``: a SELECT of a UNION, whose aggregates' values the UNION takes
        unrounded (see :meth:`_plan_select`)."""
        with_ = query.args.get("with_") if isinstance(query, exp.Query) else None
        if with_ is not None:
            outer = self.ctes
            self.ctes = defined(with_, outer)
            try:
                return self._plan_query(name, query, sql, shown, union_branch)
            finally:
                self.ctes = outer
        return self._plan_query(name, query, sql, shown, union_branch)

    def _plan_query(self, name: str, query: exp.Expr, sql: str, shown: bool,
                    union_branch: bool) -> ir.ViewPlan:
        if isinstance(query, exp.Select):
            return self._plan_select(name, query, sql, shown, union_branch)
        if isinstance(query, (exp.Union, exp.Intersect, exp.Except)):
            return self._plan_set_operation_view(name, query, sql, outermost=shown)
        if isinstance(query, exp.Subquery):
            return self.plan_view(name, query.this, sql, shown=shown, union_branch=union_branch)
        raise unsupported(query, "query")

    def plan_relation(self, query: exp.Expr, *,
                      union_branch: bool = False) -> tuple[ir.Node, list[str]]:
        """Plan a parameterless query used as a relation (a subquery or a view in FROM, or
        a branch of a UNION: ``union_branch``)."""
        plan = self.plan_view("", query, shown=False, union_branch=union_branch)
        if plan.param_count:
            raise error_at(query, "a subquery cannot take ? parameters", UnsupportedParameterError)
        root = _cut(plan)
        if root.arity != plan.visible:
            root = _project_columns(root, list(range(plan.visible)))
        return root, list(plan.column_names)

    # ..................................................................... SELECT

    def _plan_select(self, name: str, select: exp.Select, sql: str,
                     shown: bool = True, union_branch: bool = False) -> ir.ViewPlan:
        self._reject_unsupported_clauses(select)
        where = select.args.get("where")
        terms = conjuncts(where.this) if where is not None else []
        for part in [*select.expressions, select.args.get("having"), select.args.get("order"),
                     *[t for t in terms if subquery_test(t) is None]]:
            if part is not None:
                exists_as_counts(part)  # (an EXISTS as a value: rivulet/plan/exists_values.py)
        node, steps, scope = self._plan_from(select)
        where = select.args.get("where")
        for term in conjuncts(where.this) if where is not None else ():
            found = subquery_test(term)
            for placeholder in term.find_all(exp.Placeholder) if found else ():
                inside = placeholder.find_ancestor(exp.Select) is not select
                raise unsupported(placeholder, "? parameter in a subquery of WHERE" if inside
                                  else "? parameter tested by IN (subquery)")
        if self.bound is None:
            plain, params = extract_parameters(where, scope)
        else:
            plain, params = (conjuncts(where.this) if where is not None else []), Parameters()
        tests = [c for c in plain if subquery_test(c) is not None]
        plain = [c for c in plain if subquery_test(c) is None]
        node, plain = self._join_all(node, steps, plain, scope)
        node, scope = self._scalar_values(
            node, scope, [s for c in plain for s in scalar_subqueries(c)])
        node, scope = self._quantified_values(
            node, scope, [q for c in plain for q in quantified_comparisons(c)])
        if plain:
            bind = None if self.bound is None else self._bound_value
            predicate = ir.and_all([translate_condition(c, scope, bind) for c in plain])
            node = ir.Filter(node, predicate, node.columns)
        for test in tests:
            node = self._subquery_join(node, scope, test)

        grouped = bool(select.args.get("group")) or _has_aggregate(select)
        # The scalar subqueries read after WHERE: joined to the FROM row, or, in an
        # aggregated query, to the groups (their correlation then reads group columns).
        listed = [s for item in select.expressions for s in scalar_subqueries(item)]
        for clause in ("order", "having") if grouped else ("order",):
            if select.args.get(clause) is not None:
                listed += scalar_subqueries(select.args[clause])
        # ... and so are the quantified comparisons (rivulet/plan/quantified.py), HAVING's
        # with its aliases expanded as it is read
        having_node = None if select.args.get("having") is None else \
            _with_aliases_expanded(select.args["having"].this, select, scope)
        compared = [q for item in select.expressions for q in quantified_comparisons(item)]
        if select.args.get("order") is not None:
            compared += quantified_comparisons(select.args["order"])
        if having_node is not None:
            compared += quantified_comparisons(having_node)
        if not grouped:
            node, scope = self._scalar_values(node, scope, listed)
            node, scope = self._quantified_values(node, scope, compared)
        if params.alternatives:
            if grouped or having_node is not None:
                assert params.alternatives_node is not None  # (set with the alternatives)
                raise unsupported(params.alternatives_node,
                                  "OR of parameters on different columns in an aggregated "
                                  "query (GROUP BY, aggregates or HAVING: one value's "
                                  "aggregate cannot be combined with another's)")
            return self._plan_alternatives(name, select, sql, shown, node, scope, params)
        key_cols = params.key_columns()
        implicit_group = False
        group_keys = 0
        out_scope: FromScope | GroupedScope
        bound_positions: list[int] = []  # a range aggregate's output columns of the bounds
        if grouped:
            ranged = params.range_column is not None
            if ranged:
                _refuse_with_range_aggregate(select, params, listed)
            node, out_scope, key_positions, implicit_group = self._plan_aggregate(
                select, node, scope, key_cols, params.listed_columns(),
                outermost=shown, range_params=params if ranged else None,
            )
            if isinstance(node, ir.RangeAggregate):
                bound_positions = list(node.bound_columns)
                implicit_group = False  # (the range aggregate answers its row over none)
            group_keys = len(node.group_by) if isinstance(node, ir.Aggregate) else 0
            if listed and implicit_group:
                raise unsupported(listed[0], "scalar subquery in an aggregate without GROUP BY "
                                  "keyed by a ? parameter")
            node, out_scope = self._grouped_scalar_values(node, scope, out_scope, listed)
            node, out_scope = self._grouped_quantified_values(node, scope, out_scope, compared)
        else:
            out_scope, key_positions = scope, key_cols

        # SELECT list, then hidden key, range and sort columns.
        exprs, names = self._select_list(select, out_scope, scope if not grouped else None)
        if shown or select.args.get("distinct") or (grouped and not union_branch):
            exprs = _shown(exprs, out_scope.types())  # MySQL materializes these
        elif grouped:
            # A UNION reads a grouped SELECT's values as they are computed: expressions of
            # the group columns were stored at their shown places in the temporary table
            # that grouped the rows, and what reads the aggregates is computed from them
            # when read, with all the places it carries (AVG(i) in a text column is
            # '1.333333333', i / 3 + AVG(i) '1.333300000').
            exprs = [_group_parts_shown(e, group_keys, out_scope.types()) for e in exprs]
        visible = len(exprs)
        hidden_key = []
        for pos in key_positions:
            hidden_key.append(len(exprs))
            exprs.append(ir.Col(pos))
            names.append(out_scope.columns[pos].name)
        other_ranges: list[ir.ColumnRange] = []
        if bound_positions:  # (a range aggregate's: they key the reader)
            bounded = [(params.range_column, params.range_bounds), *params.other_ranges]
            at = iter(bound_positions)
            for i, (column, bounds) in enumerate(bounded):
                if i:  # (another column's: the key column of its first bound stands for it)
                    other_ranges.append(ir.ColumnRange(len(exprs), tuple(bounds)))
                for _ in bounds:
                    hidden_key.append(len(exprs))
                    exprs.append(ir.Col(next(at)))
                    names.append(scope.columns[column].name)  # type: ignore[index]
        range_col = None
        if params.range_column is not None and not bound_positions:
            range_col = len(exprs)
            exprs.append(ir.Col(params.range_column))
            names.append(scope.columns[params.range_column].name)
            for column, bounds in params.other_ranges:  # (checked over the range's rows)
                other_ranges.append(ir.ColumnRange(len(exprs), tuple(bounds)))
                exprs.append(ir.Col(column))
                names.append(scope.columns[column].name)
        order = self._order_by(select, out_scope, exprs, names, visible)
        distinct = bool(select.args.get("distinct"))
        if distinct and any(k.column >= visible for k in order):
            raise error_at(select, "with SELECT DISTINCT, ORDER BY terms must be selected columns")
        if having_node is not None:
            having = translate_condition(having_node, out_scope)
            node = ir.Filter(node, having, node.columns)
        node = _project(node, exprs, names)
        if distinct:
            node = ir.Distinct(node, node.columns)
        limit, offset = _limit(select)
        if limit is not None and range_col is None:
            node = ir.TopK(node, tuple(hidden_key), order, limit + offset, node.columns)
        return ir.ViewPlan(
            name=name,
            root=node,
            visible=visible,
            key=tuple(hidden_key),
            key_params=tuple(p for p, _ in params.eq)
            + ((params.in_list[1][0],) if params.in_list else ())
            + (tuple(b.param for b in params.range_bounds) if bound_positions else ())
            + (tuple(b.param for _, bounds in params.other_ranges for b in bounds)
               if bound_positions else ()),
            range_column=range_col,
            bounds_keyed=bool(bound_positions),
            range_bounds=tuple(params.range_bounds),
            other_ranges=tuple(other_ranges),
            order=order,
            limit=limit,
            offset=offset,
            in_list=tuple(params.in_list[1]) if params.in_list else (),
            param_count=params.count,
            equal_params=params.equal_params(),
            listed=params.listed_params(),
            null_safe=tuple(params.null_safe),
            distinct_on_read=distinct and (range_col is not None or bool(params.in_list)
                                           or bool(params.listed)),
            implicit_group=implicit_group,
            sql=sql,
        )

    def _plan_alternatives(self, name: str, select: exp.Select, sql: str, shown: bool,
                           node: ir.Node, scope: FromScope,
                           params: Parameters) -> ir.ViewPlan:
        """A SELECT (not aggregated) whose WHERE has ``a = ? OR b = ?`` on different
        columns: the union of one alternative per term, each keyed by the other equality
        parameters and that term's column, its rows tagged with the term and carrying the
        earlier terms' columns (rivulet/plan/alternatives.py). ``node`` is the FROM and
        WHERE without the parameters, which every alternative shares."""
        assert params.alternatives_node is not None  # (set with the alternatives)
        terms = [column for _, column in params.alternatives]
        refuse_unlike_columns(params.alternatives_node, [scope.columns[c] for c in terms])
        exprs, names = self._select_list(select, scope, scope)
        distinct = bool(select.args.get("distinct"))
        if shown or distinct:
            exprs = _shown(exprs, scope.types())  # MySQL materializes these
        visible = len(exprs)
        # (the sort columns before the key: each alternative's key column is its own)
        order = self._order_by(select, scope, exprs, names, visible)
        if distinct and any(k.column >= visible for k in order):
            raise error_at(select, "with SELECT DISTINCT, ORDER BY terms must be selected columns")
        key_cols = params.key_columns()
        hidden_key = tuple(range(len(exprs), len(exprs) + len(key_cols) + 1))
        tag = hidden_key[-1] + 1
        copies = tuple(range(tag + 1, tag + len(terms)))
        limit, offset = _limit(select)
        if distinct and limit is not None:
            # (an alternative's top rows are distinct with the earlier terms' columns,
            # which a read leaves out: its top may then hold fewer distinct answers)
            raise unsupported(params.alternatives_node, "OR of parameters on different "
                              "columns with SELECT DISTINCT and LIMIT")
        branches: list[ir.Node] = []
        for term, column in enumerate(terms):
            added: list[ir.Expr] = [ir.Col(c) for c in (*key_cols, column)]
            added.append(ir.Lit(term, INT))
            added += [ir.Col(terms[j]) if j < term else ir.Lit(None, None)
                      for j in range(len(terms) - 1)]
            added_names = [scope.columns[c].name for c in key_cols]
            added_names += [scope.columns[terms[0]].name, "or_term"]
            added_names += [f"or_{scope.columns[c].name}" for c in terms[:-1]]
            branch = _project(node, [*exprs, *added], [*names, *added_names])
            if distinct:
                branch = ir.Distinct(branch, branch.columns)
            if limit is not None:
                branch = ir.TopK(branch, hidden_key, order, limit + offset, branch.columns)
            branches.append(branch)
        root = ir.Union(tuple(branches), united_columns(branches))
        return ir.ViewPlan(
            name=name,
            root=root,
            visible=visible,
            key=hidden_key,
            key_params=(*(p for p, _ in params.eq), params.alternatives[0][0]),
            order=order,
            limit=limit,
            offset=offset,
            param_count=params.count,
            equal_params=params.equal_params(),
            null_safe=tuple(params.null_safe),
            distinct_on_read=distinct,
            alternatives=ir.Alternatives(
                tuple(p for p, _ in params.alternatives),
                tuple(scope.columns[c].name for c in terms), tag, copies),
            sql=sql,
        )

    def _bound_value(self, placeholder: exp.Placeholder) -> ir.Expr:
        assert self.bound is not None  # (only called when planning with bound values)
        if id(placeholder) not in self.bound:
            raise error_at(placeholder, "a ? parameter outside the outer WHERE",
                           UnsupportedParameterError)
        return literal_of(self.bound[id(placeholder)])

    def _reject_unsupported_clauses(self, select: exp.Select) -> None:
        for key in ("windows", "qualify", "lock", "sample", "settings",
                    "into", "laterals", "pivots", "prewhere", "connect", "match"):
            value = select.args.get(key)
            if value:
                node = value[0] if isinstance(value, list) else value
                raise unsupported(node, key.rstrip("_").upper())
        if select.args.get("locks"):
            raise unsupported(select.args["locks"][0], "locking read (FOR UPDATE/SHARE)")
        group = select.args.get("group")
        for key in ("rollup", "cube", "grouping_sets", "totals"):
            if group is not None and group.args.get(key):
                raise unsupported(group, f"GROUP BY with {key.upper().replace('_', ' ')}")
        distinct = select.args.get("distinct")
        if distinct is not None and distinct.args.get("on") is not None:
            raise unsupported(distinct, "DISTINCT ON")
        for sub in select.find_all(exp.Window):
            raise unsupported(sub, "window function")
        for search in select.find_all(exp.MatchAgainst):  # (before its ? is judged)
            raise full_text_search(search)

    # ..................................................................... WHERE subqueries

    def _subquery_join(self, node: ir.Node, scope: FromScope, condition: exp.Expr) -> ir.Node:
        """``node`` (the FROM row) kept where ``condition``, an EXISTS or IN subquery
        test of WHERE, holds: decorrelated and joined as rivulet/plan/subqueries.py says,
        on keys converted to compare as ``=`` does (as a JOIN's are)."""
        condition = condition.copy()
        tested = subquery_test(condition)
        assert tested is not None
        outer_ctes, self.ctes = self.ctes, self._with_domain(
            tested[1], f"{tested[0].value} subquery", node, scope)
        try:
            found = decorrelate(condition, scope, lambda select: self._plan_from(select)[2],
                                self.enclosing)
            self.enclosing.append(scope)
            try:
                inner, _ = self.plan_relation(found.inner)
            finally:
                self.enclosing.pop()
        finally:
            self.ctes = outer_ctes
        outer_exprs = [translate(e, scope) for e in found.outer]
        types = scope.types()
        outer_keys, inner_keys = _correlation_keys(outer_exprs, types, inner,
                                                   bool(found.correlated))
        width = node.arity
        names = [c.name for c in node.columns]
        key_names = [f"_key{i}" for i in range(len(outer_keys))]
        outer = _project(node, [ir.Col(i, n) for i, n in enumerate(names)] + outer_keys,
                         names + key_names)
        return semi_join(found.test, outer, width, _project(inner, inner_keys, key_names))

    def _with_domain(self, query: exp.Expr, what: str, node: ir.Node, scope: FromScope,
                     grouped: GroupedScope | None = None) -> dict[str, Cte]:
        """The CTEs to plan the subquery ``query`` (the caller's copy) with: when it is
        correlated otherwise than by equalities, it is rewritten in place over its domain
        (rivulet/plan/subqueries.py), the distinct values of the outer columns it reads
        over ``node`` (the outer row, ``scope``'s), a relation they name; else the CTEs
        as they are. ``grouped``: the outer row is an aggregate's groups, refused then."""
        # (a name no table, view or CTE has, here or inside the subquery: it must read the
        # domain wherever the rewritten subquery names it, and hide nothing)
        taken = {t.name.lower() for t in query.find_all(exp.Table)} | {
            c.alias_or_name.lower() for c in query.find_all(exp.CTE)} | set(self.ctes)
        name = f"_domain{self.domains}"
        while name in taken or self.catalog.table(name) is not None or \
                self.catalog.view(name) is not None:
            self.domains += 1
            name = f"_domain{self.domains}"
        domain = over_domain(query, what, name, scope, lambda s: self._plan_from(s)[2],
                             self.enclosing)
        if domain is None:
            return self.ctes
        if grouped is not None:
            raise unsupported(query, f"{what} correlated other than by an equality, with "
                              "the groups of an aggregated query (in its select list, "
                              "HAVING or ORDER BY)")
        self.domains += 1
        names = [domain_column(i) for i in range(len(domain.outer))]
        values = _project(node, [translate(c, scope) for c in domain.outer], names)
        cte = Cte(name, domain.query, None, {}, (ir.Distinct(values, values.columns), names))
        return {**self.ctes, name.lower(): cte}

    # ..................................................................... scalar subqueries

    def _scalar_values(self, node: ir.Node, scope: FromScope,
                       subqueries: list[exp.Subquery]) -> tuple[ir.Node, FromScope]:
        """``node`` (the FROM row, and the values joined to it so far) with a column
        appended for each of ``subqueries`` not joined yet, holding its value, and the
        scope that reads each subquery there (rivulet/plan/scalars.py)."""
        values = dict(scope.values)
        for subquery in subqueries:
            if subquery not in values:
                node = self._scalar_join(node, scope, subquery)
                values[subquery] = node.arity - 1
        if len(values) == len(scope.values):
            return node, scope
        columns = scope.columns + node.columns[len(scope.columns):]
        return node, FromScope(scope.relations, columns, scope.hidden, values)

    def _grouped_scalar_values(self, node: ir.Node, scope: FromScope, grouped: GroupedScope,
                               subqueries: list[exp.Subquery]) -> tuple[ir.Node, GroupedScope]:
        """:meth:`_scalar_values` over an aggregate's output ``node``: the subqueries'
        names resolve over the FROM row (``scope``), their correlation keys are computed
        over the groups (a group column, or MySQL's 1055)."""
        values = dict(grouped.values)
        for subquery in subqueries:
            if subquery not in values:
                node = self._scalar_join(node, scope, subquery, grouped)
                values[subquery] = node.arity - 1
        if len(values) == len(grouped.values):
            return node, grouped
        columns = grouped.columns + node.columns[len(grouped.columns):]
        return node, replace(grouped, columns=columns, values=values)

    def _scalar_join(self, node: ir.Node, scope: FromScope, subquery: exp.Subquery,
                     grouped: GroupedScope | None = None) -> ir.Node:
        """``node`` with the value of the scalar subquery ``subquery`` appended: decorrelated
        and LEFT JOINed on its keys (converted to compare as ``=`` does, as a JOIN's are),
        an outer row it has no row for given what MySQL answers for none. ``grouped``:
        ``node`` is an aggregate's output, over which the keys are computed."""
        subquery = subquery.copy()
        outer_ctes, self.ctes = self.ctes, self._with_domain(
            subquery, "scalar subquery", node, scope, grouped)
        try:
            found = decorrelate_scalar(subquery, scope,
                                       lambda select: self._plan_from(select)[2], self.enclosing)
            self.enclosing.append(scope)
            try:
                inner, _ = self.plan_relation(found.inner)
                empty = None if found.missing.empty is None else \
                    self.plan_relation(found.missing.empty)[0]
            finally:
                self.enclosing.pop()
        finally:
            self.ctes = outer_ctes
        correlated = len(found.outer)
        if found.shape is ScalarShape.FIRST_ROW:
            order = tuple(ir.SortKey(correlated + 1 + i, descending)
                          for i, descending in enumerate(found.descending))
            inner = ir.TopK(inner, tuple(range(correlated)), order, 1, inner.columns)
            inner = _project_columns(inner, list(range(correlated + 1)))
        keys_scope = scope if grouped is None else grouped
        outer_exprs = [translate(e, keys_scope) for e in found.outer]
        types = keys_scope.types()
        outer_keys, inner_keys = _correlation_keys(outer_exprs, types, inner, bool(correlated))
        width = node.arity
        names = [c.name for c in node.columns]
        key_names = [f"_key{i}" for i in range(len(outer_keys))]
        keys = len(outer_keys)
        outer = _project(node, [ir.Col(i, n) for i, n in enumerate(names)] + outer_keys,
                         names + key_names)
        keyed = _project(inner, inner_keys + [ir.Col(correlated, VALUE)], key_names + [VALUE])
        joined = left_join(outer, keyed, tuple(range(width, width + keys)), tuple(range(keys)))
        value: ir.Expr = ir.Col(outer.arity + keys, VALUE)
        if found.missing.zero:  # COUNT over no rows
            value = ir.Call("COALESCE", (value, ir.Lit(0, INT)))
        if empty is not None:  # the value over no rows, where no group matched
            unmatched = ir.Call("is_null", (ir.Col(outer.arity, key_names[0]),))
            joined = _inner_join(joined, empty, (), (), joined.columns + empty.columns)
            value = ir.Case(((unmatched, ir.Col(joined.arity - 1, VALUE)),), value)
        return _project(joined, [ir.Col(i, n) for i, n in enumerate(names)] + [value],
                        names + [VALUE])

    # ..................................................................... quantified comparisons

    def _quantified_values(self, node: ir.Node, scope: FromScope,
                           found: list[Quantified]) -> tuple[ir.Node, FromScope]:
        """``node`` (the FROM row, and the values joined to it so far) with a column
        appended for each of the quantified comparisons ``found`` not joined yet, holding
        its value, and the scope that reads each there (rivulet/plan/quantified.py)."""
        for comparison in found:
            if comparison.node not in scope.values:
                node = self._quantified_join(node, scope, comparison)
                scope = FromScope(scope.relations,
                                  scope.columns + node.columns[len(scope.columns):],
                                  scope.hidden, {**scope.values, comparison.node: node.arity - 1})
        return node, scope

    def _grouped_quantified_values(self, node: ir.Node, scope: FromScope, grouped: GroupedScope,
                                   found: list[Quantified]) -> tuple[ir.Node, GroupedScope]:
        """:meth:`_quantified_values` over an aggregate's output ``node``: the subqueries'
        names resolve over the FROM row (``scope``), the compared values and the
        correlation keys are computed over the groups."""
        for comparison in found:
            if comparison.node not in grouped.values:
                node = self._quantified_join(node, scope, comparison, grouped)
                grouped = replace(grouped,
                                  columns=grouped.columns + node.columns[len(grouped.columns):],
                                  values={**grouped.values, comparison.node: node.arity - 1})
        return node, grouped

    def _quantified_join(self, node: ir.Node, scope: FromScope, comparison: Quantified,
                         grouped: GroupedScope | None = None) -> ir.Node:
        """``node`` with the value of ``comparison`` appended: its subquery decorrelated
        as IN's is, keyed (and its value compared) as ``=`` compares, and joined as
        rivulet/plan/quantified.py says. ``grouped``: ``node`` is an aggregate's output,
        over which the compared value and the keys are computed."""
        query = comparison.query.copy()
        outer_ctes, self.ctes = self.ctes, self._with_domain(
            query, f"{comparison.written} subquery", node, scope, grouped)
        try:
            outer_exprs, select = decorrelate_subquery(
                f"{comparison.written} subquery", query, comparison.value, scope,
                lambda s: self._plan_from(s)[2], self.enclosing)
            self.enclosing.append(scope)
            try:
                inner, _ = self.plan_relation(select)
            finally:
                self.enclosing.pop()
        finally:
            self.ctes = outer_ctes
        keys_scope = scope if grouped is None else grouped
        types = keys_scope.types()
        outer_values = [translate(e, keys_scope) for e in outer_exprs]
        refuse_unordered(comparison, type_of(outer_values[-1], types), inner.columns[-1].type)
        outer_keys, inner_keys = _correlation_keys(outer_values, types, inner,
                                                   len(outer_values) > 1)
        width = node.arity
        names = [c.name for c in node.columns]
        key_names = [f"_key{i}" for i in range(len(outer_keys))]
        outer = _project(node, [ir.Col(i, n) for i, n in enumerate(names)] + outer_keys,
                         names + key_names)
        joined, value = quantified_value(comparison, outer, width,
                                         _project(inner, inner_keys, key_names))
        return _project(joined, [ir.Col(i, n) for i, n in enumerate(names)] + [value],
                        names + [VALUE])

    # ..................................................................... FROM

    def _plan_from(self, select: exp.Select) -> tuple[ir.Node, list[JoinStep], FromScope]:
        """The FROM clause's first item, its joins with their ON read
        (:mod:`rivulet.plan.joins`), and the scope of its whole row; the joins are made
        by :meth:`_join_all` once the WHERE's conditions are known."""
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None or is_dual(from_.this):
            if select.args.get("joins"):
                raise unsupported(select.args["joins"][0], "JOIN after FROM DUAL")
            one_row = ir.OneRow()
            return one_row, [], FromScope([], one_row.columns)
        joins: list[exp.Join] = list(select.args.get("joins") or [])
        for join in joins:
            _refuse_join_kind(join)
        first, rel = self._relation(from_.this, 0)
        relations = [rel]
        columns = first.columns
        steps: list[JoinStep] = []
        for join in joins:
            right, rel = self._relation(join.this, len(columns))
            relations.append(rel)
            left_join = (join.side or "").upper() == "LEFT"
            steps.append(JoinStep(right, len(columns), left_join))
            columns += tuple(replace(c, nullable=True if left_join else c.nullable)
                             for c in right.columns)
        groups = comma_groups(joins)
        for i, (join, step) in enumerate(zip(joins, steps), start=1):
            seen = relations[groups[i]:i + 1]
            hidden = frozenset(r.alias.lower() for r in relations) - {
                r.alias.lower() for r in seen}
            self._read_on(join, step, FromScope(seen, columns[:step.end], hidden))
        return first, steps, FromScope(relations, columns)

    def _read_on(self, join: exp.Join, step: JoinStep, scope: FromScope) -> None:
        """The ON of ``join``: its equalities between the two sides as the step's key, the
        rest as its condition (over the joined row)."""
        on = join.args.get("on")
        if on is None:
            if step.left_join:
                raise error_at(join, "LEFT JOIN needs an ON or USING condition",
                               SqlSyntaxError)
            return
        if any(isinstance(n, exp.Placeholder) for n in on.walk()):
            raise unsupported(on, "? parameter in JOIN ... ON (parameters go in WHERE)")
        left = scope.columns[:step.start]
        for c in conjuncts(on):
            pair = key_pair(c, scope, step.start, step.end)
            columns = isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and \
                isinstance(c.expression, exp.Column)
            if pair is not None and keyable(pair, left, step.right.columns, refuse=columns):
                step.pairs.append(pair)
            else:
                step.rest.append(translate_condition(c, scope))

    def _join_all(self, node: ir.Node, steps: list[JoinStep], plain: list[exp.Expr],
                  scope: FromScope) -> tuple[ir.Node, list[exp.Expr]]:
        """``node`` joined with each step's item, left to right; an inner join with no
        equality of its own keyed on the WHERE conditions (of ``plain``) that are
        equalities between its two sides. Returns the joins and the WHERE conditions left."""
        for step in steps:
            pairs = list(step.pairs)
            if step.open:
                kept = []
                for c in plain:
                    pair = key_pair(c, scope, step.start, step.end)
                    if pair is not None and keyable(pair, node.columns, step.right.columns,
                                                    refuse=False):
                        pairs.append(pair)
                    else:
                        kept.append(c)
                plain = kept
                if not pairs:  # (a key the conditions left for later steps imply)
                    pairs = implied_pairs(plain, scope, step.start, step.end)
            node = _join_step(node, step, pairs)
        return node, plain

    def _relation(self, item: exp.Expr, offset: int) -> tuple[ir.Node, Relation]:
        if isinstance(item, exp.Table):
            if item.args.get("db"):
                raise unsupported(item, "qualified table name")
            name = item.name
            alias = item.alias or name
            cte = self.ctes.get(name.lower())
            if cte is not None:
                node, names = self._cte_relation(cte)
                return node, Relation(alias, names, offset, fields=_materialized(cte.query))
            table = self.catalog.table(name)
            if table is not None:
                cols = tuple(ir.ColumnInfo.of(c.name, column_type(c), c.nullable, c)
                             for c in table.columns)
                scan = ir.Scan(table.name, cols, table.version, tuple(table.primary_key))
                return scan, Relation(alias, list(table.column_names), offset, table)
            view = self.catalog.view(name)
            if view is not None:
                node, names = (self._view_as_table(view, item) if view.param_count
                               else self._view_relation(view))
                return node, Relation(alias, names, offset, fields=False)
            broken = self.catalog.broken_view(name)
            if broken is not None:
                raise broken.error()
            raise error_at(item, f"unknown table or view {name!r}", UnknownTableError)
        if isinstance(item, exp.Subquery):
            if not item.alias and not isinstance(item.unnest(), exp.Query):
                raise unsupported(item, "parenthesized JOIN on the right of a JOIN (write "
                                  "the joins one after the other)")
            if not item.alias:
                raise error_at(item, "a subquery in FROM needs an alias")
            node, names = self.plan_relation(item.this)
            return node, Relation(item.alias, names, offset, fields=_materialized(item.this))
        if isinstance(item, exp.Lateral):
            raise unsupported(item, "LATERAL derived table")
        raise unsupported(item, "FROM item")

    def _cte_relation(self, cte: Cte) -> tuple[ir.Node, list[str]]:
        """A CTE named in FROM: its query planned as a subquery, once (every reference
        reads the same plan), in the scope of the CTEs it may name."""
        if cte.planned is None:
            outer = self.ctes
            self.ctes = cte.seen
            try:
                node, names = self.plan_relation(cte.query)
            finally:
                self.ctes = outer
            cte.planned = node, named_columns(cte, names)
        return cte.planned

    def _view_relation(self, view: ir.ViewPlan) -> tuple[ir.Node, list[str]]:
        root = _cut(view)
        if isinstance(root, ir.Project):  # shared with the view itself (plan/prune.py)
            root = replace(root, view=view.name)
        if root.arity != view.visible:
            root = _project_columns(root, list(range(view.visible)))
        return root, list(view.column_names)

    def _view_as_table(self, view: ir.ViewPlan, item: exp.Expr) -> tuple[ir.Node, list[str]]:
        """A view with parameters read as a table (``SELECT * FROM StoriesWithVC WHERE id
        IN (1, 2)``, a join with it): the rows it answers for every value of its
        parameters, each once. Its plan computes them already: a parameter's condition is
        its reader's key, a column of the plan, not a filter in it. A row whose key column
        is NULL answers no value of ``col = ?`` or of a range (``col <=> ?`` takes it), so
        those rows are left out. A view whose aggregate answers a row for a value with no
        rows (``SELECT COUNT(*) ... WHERE x = ?``) would be a row for every value: refused,
        as is a range aggregate, whose answers differ for every value."""
        if view.implicit_group:
            raise error_at(item, f"view {view.name!r} answers a row for every value of its "
                           "parameters (an aggregate without GROUP BY): it cannot be read as "
                           "a table; read it by its parameters", ParameterError)
        if view.alternatives is not None:
            raise unsupported(item, f"view with parameters under an OR on different columns "
                              f"read as a table ({view.name!r}: its rows are under the "
                              "key of each column); read it by its parameters")
        if view.bounds_keyed:
            raise error_at(item, f"view {view.name!r} answers its aggregate for each value of "
                           "its range parameters apart (a row may count under many of "
                           "them): it cannot be read as a table; read it by its parameters",
                           ParameterError)
        if view.limit is not None:
            raise error_at(item, f"view {view.name!r} has parameters and a LIMIT: its rows are "
                           "each lookup's first rows, not a table's; read it by its "
                           "parameters", ParameterError)
        node, names = self._view_relation(view)
        null_safe = {k for p, k in zip(view.key_params, view.key) if p in view.null_safe}
        keyed = [k for k in view.key if k not in null_safe]
        if view.range_column is not None:
            keyed.append(view.range_column)
            keyed += [other.column for other in view.other_ranges]
        root = view.root
        if isinstance(root, ir.Project):  # shared with the view itself (plan/prune.py)
            root = replace(root, view=view.name)
        checks = [ir.Call("is_not_null", (ir.Col(k, root.columns[k].name),))
                  for k in dict.fromkeys(keyed) if root.columns[k].nullable]
        if not checks:
            return node, names
        predicate = checks[0]
        for more in checks[1:]:
            predicate = ir.Call("and_", (predicate, more))
        kept = ir.Filter(root, predicate, root.columns)
        return _project_columns(kept, list(range(view.visible))), names

    # ..................................................................... GROUP BY

    def _plan_aggregate(
        self,
        select: exp.Select,
        node: ir.Node,
        scope: FromScope,
        key_cols: list[int],
        listed_cols: list[int],
        *,
        outermost: bool,
        range_params: Parameters | None = None,
    ) -> tuple[ir.Node, GroupedScope, list[int], bool]:
        """The aggregate of ``select`` over ``node`` (the FROM row after WHERE), the scope
        its output is read in, the positions there of the key columns ``key_cols``, and
        whether they are an implicit group. With ``range_params``, a
        :class:`~rivulet.plan.ir.RangeAggregate` over the rows within them, whose output
        ends with a column per bound."""
        group_nodes = list(select.args["group"].expressions) if select.args.get("group") else []
        group_exprs = []
        for g in group_nodes:
            g = self._resolve_select_alias(select, g)
            group_exprs.append(translate(g, scope))
        # Columns functionally dependent on a grouped primary key may be selected bare.
        group_exprs += self._dependent_columns(select, scope, group_exprs)
        if any(ir.Col(c) not in group_exprs for c in listed_cols):
            # One maintained group per IN value cannot be merged into the groups over all
            # the values at read time (COUNT(DISTINCT), AVG), so say so instead.
            raise unsupported(
                select, "aggregate over an IN (?, ...) parameter list whose column is not "
                "in GROUP BY (add the column to GROUP BY)"
            )
        implicit_group = not group_exprs and bool(key_cols)
        key_positions = []
        for col in key_cols:
            if ir.Col(col) not in group_exprs:
                group_exprs.append(ir.Col(col, scope.columns[col].name))
            key_positions.append(group_exprs.index(ir.Col(col)))

        agg_nodes: list[exp.Expr] = []
        for part in self._aggregate_sources(select):
            for sub in _own_aggregates(part):
                if not any(sub == seen for seen in agg_nodes):
                    agg_nodes.append(sub)
        pre_exprs = _shown(group_exprs, scope.types())  # MySQL groups DECIMALs as shown
        # MySQL groups in a temporary table that holds SUM's and AVG's running sums in the
        # values' shown type, so they add up the values as shown (SUM(10/k) over three
        # k = 3 is 9.9999), unless a DISTINCT aggregate or a GROUP_CONCAT (any form) has
        # it group sorted rows instead.
        rounds_sums = bool(group_nodes) and not select.meta.get(IMPLICIT_GROUPS) and not any(
            isinstance(a, exp.GroupConcat) or (isinstance(a.this, exp.Distinct)
                                               and isinstance(a, (exp.Count, exp.Sum, exp.Avg)))
            for a in agg_nodes)
        calls = []

        def placed(e: ir.Expr) -> int:
            """The pre-projection's column computing ``e`` (added if none does)."""
            if e in pre_exprs[len(group_exprs):]:
                return pre_exprs.index(e, len(group_exprs))
            pre_exprs.append(e)
            return len(pre_exprs) - 1

        for found in agg_nodes:
            if isinstance(found, exp.GroupConcat):
                calls.append(self._group_concat_call(found, scope, placed))
                continue
            call, arg = self._aggregate_call(found, scope)
            if arg is not None:
                arg_type = type_of(arg, scope.types())
                if (arg_type.kind == ENUM and call.fn in ("min", "max")
                        and (not outermost or _used_beyond_output(select, found))):
                    raise unsupported(found, f"{call.fn.upper()}() of an ENUM used in an "
                                      "expression, HAVING, ORDER BY or a subquery (MySQL "
                                      "returns its text, but numbers it as an integer, and "
                                      "with GROUP BY orders and numbers it by position); "
                                      f"use {call.fn.upper()}(CAST(e AS CHAR))")
                if rounds_sums and call.fn in ("sum", "avg") and not call.distinct:
                    arg = shown(arg, arg_type)
                    arg_type = type_of(arg, scope.types())
                arg = _aggregated_value(call.fn, arg, arg_type)
                call = ir.AggCall(call.fn, placed(arg), call.distinct)
            calls.append(call)
        range_input = None
        other_inputs: list[tuple[int, tuple[str, ...]]] = []  # (input column, its ops)
        if range_params is not None:
            _refuse_range_aggregates(agg_nodes, calls)
            assert range_params.range_column is not None  # (a range parameter's)
            range_input = placed(ir.Col(range_params.range_column))
            other_inputs = [(placed(ir.Col(column)), tuple(b.op for b in bounds))
                            for column, bounds in range_params.other_ranges]
        pre = _project(node, pre_exprs, [_expr_name(e, scope.columns) for e in pre_exprs])
        group_by = tuple(range(len(group_exprs)))
        out_columns = tuple(pre.columns[: len(group_exprs)]) + tuple(
            ir.ColumnInfo.of(a.sql(dialect="mysql").lower(), _agg_type(c, pre.columns),
                             c.fn != "count",
                             pre.columns[c.arg].column if c.fn in ("min", "max")
                             and c.arg is not None else None)
            for a, c in zip(agg_nodes, calls)
        )
        aggregate: ir.Aggregate | ir.RangeAggregate
        if range_params is not None and range_input is not None:
            ops = tuple(b.op for b in range_params.range_bounds)
            # (a column per bound, of its range column's type)
            bounded = [range_input] * len(ops) + [c for c, more in other_inputs for _ in more]
            bound_infos = tuple(replace(pre.columns[c], nullable=False) for c in bounded)
            aggregate = ir.RangeAggregate(pre, group_by, tuple(calls), range_input, ops,
                                          tuple(key_positions), implicit_group,
                                          out_columns + bound_infos, tuple(other_inputs))
        else:
            aggregate = ir.Aggregate(pre, group_by, tuple(calls), out_columns)
        grouped = GroupedScope(scope, group_exprs, columns=out_columns)
        for i, a in enumerate(agg_nodes):
            grouped.aggregates[a] = len(group_exprs) + i
        return aggregate, grouped, key_positions, implicit_group

    def _aggregate_sources(self, select: exp.Select) -> list[exp.Expr]:
        parts: list[exp.Expr] = list(select.expressions)
        if select.args.get("having") is not None:
            parts.append(select.args["having"])
        if select.args.get("order") is not None:
            parts.append(select.args["order"])
        return parts

    def _aggregate_call(self, agg: exp.Expr, scope: FromScope) -> tuple[ir.AggCall, ir.Expr | None]:
        fn = SPREAD_AGGREGATES.get(type(agg)) or type(agg).__name__.lower()
        arg_node = agg.this
        distinct = False
        if isinstance(arg_node, exp.Distinct) and fn in SPREAD_AGGREGATES.values():
            raise unsupported(agg, f"{fn.upper()}(DISTINCT ...) (MySQL has no such form)")
        if isinstance(arg_node, exp.Distinct):
            if len(arg_node.expressions) != 1:
                raise unsupported(agg, "DISTINCT aggregate over several columns")
            distinct = True
            arg_node = arg_node.expressions[0]
        for inner in _own_aggregates(arg_node) if arg_node is not None else ():
            raise error_at(inner, "aggregates cannot be nested", AggregateMisuseError)
        if isinstance(arg_node, exp.Star):
            if fn != "count":
                raise error_at(agg, f"{fn.upper()}(*) is not valid")
            return ir.AggCall("count", None), None
        if distinct and fn not in ("count", "sum", "avg"):
            distinct = False  # MIN/MAX(DISTINCT x) equal MIN/MAX(x)
        arg = translate(arg_node, scope)
        if distinct:  # MySQL keeps the distinct values at the places they show
            arg = shown(arg, type_of(arg, scope.types()))
        return ir.AggCall(fn, 0, distinct), arg

    def _group_concat_call(self, node: exp.GroupConcat, scope: FromScope,
                           placed: Callable[[ir.Expr], int]) -> ir.AggCall:
        """``GROUP_CONCAT([DISTINCT] e, ... [ORDER BY x [ASC|DESC], ...] [SEPARATOR
        's'])`` (rivulet/dataflow/ops/concatenation.py keeps it): its text, each row's
        arguments as ``CONCAT`` writes them (so NULL, and skipped, when any is NULL), its
        ORDER BY terms and its arguments' values, each a column of the pre-projection
        (``placed``). Text orders and compares under rivulet's binary collation, as
        everywhere. Refused by name: MariaDB's ``LIMIT`` in it, a position in its ORDER BY,
        and a DISTINCT one ordered by anything but its arguments (MySQL orders each
        distinct value by whichever of its rows it met first)."""
        body = node.this
        if isinstance(body, exp.Limit):
            raise unsupported(body, "LIMIT inside GROUP_CONCAT (MariaDB's, not MySQL's)")
        terms: list[exp.Ordered] = []
        if isinstance(body, exp.Order):
            terms = list(body.expressions)
            body = body.this
        distinct = isinstance(body, exp.Distinct)
        if isinstance(body, exp.Distinct):
            if len(body.expressions) != 1:
                raise unsupported(body, "GROUP_CONCAT(DISTINCT ...) argument list")
            body = body.expressions[0]
        if isinstance(body, exp.Star):
            raise error_at(node, "GROUP_CONCAT(*) is not valid", SqlSyntaxError)
        written = list(body.expressions) if isinstance(body, exp.Concat) else [body]
        for part in [*written, *terms]:
            for inner in part.find_all(*_AGG_TYPES):
                raise error_at(inner, "aggregates cannot be nested", AggregateMisuseError)
        types = scope.types()
        text = translate(exp.Anonymous(this="CONCAT", expressions=[w.copy() for w in written]),
                         scope)
        values = [shown(v, type_of(v, types)) for v in (translate(w, scope) for w in written)]
        order = []
        for term in terms:
            _refuse_negative_position(term.this, "GROUP_CONCAT's ORDER BY")
            if _is_position(term.this):
                raise unsupported(term, "position in GROUP_CONCAT's ORDER BY (name the "
                                  "expression)")
            key = translate(term.this, scope)
            key = shown(key, type_of(key, types))
            if distinct and key not in values:
                raise unsupported(term, "GROUP_CONCAT(DISTINCT ...) ordered by an expression "
                                  "that is not one of its arguments (MySQL orders each "
                                  "distinct value by whichever of its rows it meets first)")
            order.append(ir.SortKey(placed(key), bool(term.args.get("desc"))))
        separator = ","
        written_separator = node.args.get("separator")
        if written_separator is not None:
            if not (isinstance(written_separator, exp.Literal) and written_separator.is_string):
                raise unsupported(written_separator, "GROUP_CONCAT SEPARATOR other than a "
                                  "text constant")
            separator = str(written_separator.this)
        binary = type_of(text, types).kind == BYTES
        concat = ir.Concatenation(tuple(order), tuple(placed(v) for v in values),
                                  separator.encode() if binary else separator)
        return ir.AggCall("group_concat", placed(text), distinct, concat)

    def _dependent_columns(
        self, select: exp.Select, scope: FromScope, group_exprs: list[ir.Expr]
    ) -> list[ir.Expr]:
        grouped_cols = {g.index for g in group_exprs if isinstance(g, ir.Col)}
        covered: set[str] = set()
        for rel in scope.relations:
            pk = rel.table.primary_key if rel.table is not None else ()
            if pk and all(rel.offset + i in grouped_cols for i in pk):
                covered.add(rel.alias)
        if not covered:
            return []
        extra: list[ir.Expr] = []
        for part in self._aggregate_sources(select):
            for col in part.find_all(exp.Column):
                if isinstance(col.this, exp.Star) or _inside_aggregate(col):
                    continue
                try:
                    index = scope.resolve(col)
                except SqlError:
                    continue
                if scope.relation_of(index).alias in covered:
                    e = ir.Col(index, scope.columns[index].name)
                    if e not in group_exprs and e not in extra:
                        extra.append(e)
        return extra

    def _resolve_select_alias(self, select: exp.Select, node: exp.Expr) -> exp.Expr:
        _refuse_negative_position(node, "GROUP BY")
        if _is_position(node):
            position = int(node.this)
            if not 1 <= position <= len(select.expressions):
                raise error_at(node, f"unknown column '{position}' in GROUP BY: position "
                               f"{position} is out of range", UnknownColumnError)
            item = select.expressions[position - 1]
            return item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Column) and not node.table:
            for item in select.expressions:
                if isinstance(item, exp.Alias) and item.alias.lower() == node.name.lower():
                    if not is_aggregate(item.this):
                        return item.this
        return node

    # ..................................................................... SELECT list

    def _select_list(
        self, select: exp.Select, scope: FromScope | GroupedScope, from_scope: FromScope | None
    ) -> tuple[list[ir.Expr], list[str]]:
        exprs: list[ir.Expr] = []
        names: list[str] = []
        for item in select.expressions:
            if isinstance(item, exp.Star) or (
                isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
            ):
                if from_scope is None:
                    raise unsupported(item, "* in an aggregated query")
                qualifier = item.table if isinstance(item, exp.Column) else ""
                found = False
                for rel in from_scope.relations:
                    if qualifier and rel.alias.lower() != qualifier.lower():
                        continue
                    found = True
                    for i, n in enumerate(rel.names):
                        exprs.append(ir.Col(rel.offset + i, n))
                        names.append(n)
                if not found:
                    raise error_at(item, f"unknown table {qualifier!r} in {qualifier}.*",
                                   UnknownQualifierError)
                continue
            node = item.this if isinstance(item, exp.Alias) else item
            # (a ? here is a value only when planned with the read's values: see bound)
            exprs.append(translate(node, scope, None if self.bound is None else
                                   self._bound_value))
            names.append(item.alias if isinstance(item, exp.Alias) else _output_name(item))
        return exprs, names

    def _order_by(
        self,
        select: exp.Select,
        scope: FromScope | GroupedScope,
        exprs: list[ir.Expr],
        names: list[str],
        visible: int,
    ) -> tuple[ir.SortKey, ...]:
        order = select.args.get("order")
        if order is None:
            return ()
        keys = []
        for term in order.expressions:
            node = term.this
            desc = bool(term.args.get("desc"))
            index = None
            _refuse_negative_position(node, "ORDER BY")
            if _is_position(node):
                position = int(node.this)
                if not 1 <= position <= visible:
                    raise error_at(node, f"unknown column '{position}' in ORDER BY: position "
                                   f"{position} is out of range", UnknownColumnError)
                index = position - 1
            elif isinstance(node, exp.Column) and not node.table:
                for i in range(visible):
                    if names[i].lower() == node.name.lower():
                        index = i
                        break
            if index is None:
                e = translate(node, scope)
                if e in exprs:
                    index = exprs.index(e)
                else:
                    index = len(exprs)
                    exprs.append(e)
                    names.append(_output_name(node))
            keys.append(ir.SortKey(index, desc))
        return tuple(keys)

    # ..................................................................... UNION

    def _plan_set_operation_view(self, name: str, query: exp.Expr, sql: str, *,
                                 outermost: bool = True) -> ir.ViewPlan:
        if isinstance(query, exp.Union):
            branches = self._union_branches(query)
        elif isinstance(query, (exp.Intersect, exp.Except)):
            branches = [query.this, query.expression]  # (INTERSECT binds the tighter)
        else:
            raise unsupported(query, type(query).__name__.upper())
        what = type(query).__name__.upper()
        planned = [self.plan_relation(b, union_branch=True) for b in branches]
        arity = len(planned[0][1])
        for (_, names), branch in zip(planned, branches):
            if len(names) != arity:
                raise error_at(branch, f"the SELECTs of a {what} have different numbers of "
                               "columns", UnionWidthError)
        names = planned[0][1]
        if not outermost:
            _refuse_enum_among_other_values(query, names, [n for n, _ in planned])
        columns = tuple(
            ir.ColumnInfo.of(
                names[i],
                _union_type([n.columns[i].type for n, _ in planned]),
                any(n.columns[i].nullable for n, _ in planned),
            )
            for i in range(arity)
        )
        _refuse_numbers_of_unknown_text(query, columns, [n for n, _ in planned])
        branch_nodes = tuple(_convert_columns(n, columns) for n, _ in planned)
        node: ir.Node
        if isinstance(query, exp.Union):
            node = ir.Union(branch_nodes, columns)
            if _union_is_distinct(query):
                node = ir.Distinct(node, columns)
        else:  # (MySQL 8.0.31: DISTINCT unless ALL)
            op: ir.SetOpKind = "intersect" if isinstance(query, exp.Intersect) else "except"
            node = ir.SetOp(branch_nodes[0], branch_nodes[1], op,
                            not query.args.get("distinct"), columns)
        order: tuple[ir.SortKey, ...] = ()
        if query.args.get("order") is not None:
            keys = []
            for term in query.args["order"].expressions:
                t = term.this
                if isinstance(t, exp.Literal) and not t.is_string:
                    index = int(t.this) - 1
                elif isinstance(t, exp.Column):
                    matches = [i for i, n in enumerate(names) if n.lower() == t.name.lower()]
                    if not matches:
                        raise error_at(t, f"ORDER BY {t.name!r} is not a column of the {what}")
                    index = matches[0]
                else:
                    raise unsupported(t, f"ORDER BY expression on a {what}")
                keys.append(ir.SortKey(index, bool(term.args.get("desc"))))
            order = tuple(keys)
        limit, offset = _limit(query)
        if limit is not None:
            node = ir.TopK(node, (), order, limit + offset, columns)
        return ir.ViewPlan(name, node, arity, (), (), order=order, limit=limit, offset=offset,
                           sql=sql)

    def _union_branches(self, query: exp.Expr) -> list[exp.Expr]:
        if (isinstance(query, exp.Union) and not query.args.get("order")
                and not query.args.get("limit")):
            return self._union_branches(query.this) + self._union_branches(query.expression)
        if isinstance(query, exp.Union):
            inner = query.copy()
            inner.set("order", None)
            inner.set("limit", None)
            inner.set("offset", None)
            return self._union_branches(inner)
        return [query]


def _refuse_enum_among_other_values(query: exp.Expr, names: list[str],
                                    branches: list[ir.Node]) -> None:
    """Refuse a UNION used by another query whose column holds an ENUM in one branch and
    other values (not only NULLs) in another: MySQL pushes the outer query's conditions
    into each branch, where the ENUM compares with a number by its position, though the
    UNION's column is text."""
    for i, name in enumerate(names):
        kinds = [b.columns[i].kind for b in branches if b.columns[i].kind is not None]
        if ENUM in kinds and len(kinds) > 1:
            raise unsupported(query, f"UNION column {name!r} of an ENUM and other values in "
                              "a subquery (MySQL compares the ENUM branch by position when it "
                              "pushes a condition into it); CAST the ENUM AS CHAR")


def _union_type(branches: list[SqlType]) -> SqlType:
    """The type of a UNION column: the branches' types aggregated, a DECIMAL carrying the
    places it shows (MySQL writes a UNION's rows to a table of that type). An ENUM with
    only NULLs stays an ENUM (it sorts by its members' positions, and ``+ 0`` is the
    position), where two ENUMs make text."""
    present = [t for t in branches if t.kind is not None]
    if len(present) == 1 and present[0].kind == ENUM:
        return present[0]
    t = aggregate(branches)
    return replace(t, frac=t.scale)


def _convert_columns(node: ir.Node, columns: tuple[ir.ColumnInfo, ...]) -> ir.Node:
    """A UNION branch with every column converted to the UNION's column type (MySQL: a
    column that is VARCHAR in one branch and INT in another is VARCHAR throughout; a DECIMAL
    has the places of the widest branch; a quotient or an AVG comes with all the places it
    carries: see :meth:`Planner._plan_select`)."""
    exprs = [convert(ir.Col(i, have.name), have.type, want.type)
             for i, (have, want) in enumerate(zip(node.columns, columns))]
    if all(isinstance(e, ir.Col) for e in exprs):
        return node
    return ir.Project(node, tuple(exprs), tuple(
        replace(want, name=have.name, nullable=have.nullable)
        for have, want in zip(node.columns, columns)
    ))


def _refuse_numbers_of_unknown_text(query: exp.Expr, columns: tuple[ir.ColumnInfo, ...],
                                    branches: list[ir.Node]) -> None:
    """Refuse a UNION column of text that takes a DOUBLE, or a DECIMAL carrying more places
    than it shows (a quotient, an AVG), from one of its SELECTs. MySQL stores such a number
    in the text column's width, which it derives from every SELECT's column (their
    display widths): cut to that width ('333333333.333333' for ``i / 3`` beside a
    VARCHAR(12)), a DOUBLE in fewer or rounded digits ('1.2345678901234566e-7', or
    '0.00000012345678901234566' beside a TEXT). Other numbers' text always fits."""
    for i, column in enumerate(columns):
        if column.kind not in (STR, BYTES):
            continue
        for branch in branches:
            have = branch.columns[i].type
            if have.kind == FLOAT or have.rounded:
                number = "a DOUBLE" if have.kind == FLOAT else "a quotient or an AVG"
                raise unsupported(query, f"UNION column {column.name!r} of text taking "
                                  f"{number} (MySQL's text for it depends on the "
                                  "column's display width); CAST it AS CHAR in its SELECT")
            if _computed_in(branch, i, _writes_double_text):
                raise unsupported(query, f"UNION column {column.name!r} of text taking a "
                                  "DOUBLE written as text (MySQL cuts it to a DOUBLE's "
                                  "display width, 22 characters)")
            if have.kind == DECIMAL and _computed_in(branch, i, _pads_a_choice):
                raise unsupported(query, f"UNION column {column.name!r} of text taking a "
                                  "DECIMAL chosen among values of other places (CASE, IF, "
                                  "COALESCE, GREATEST, ...: MySQL stores the chosen "
                                  "value's own places as text, '2' where the choice's "
                                  "type shows '2.00'); CAST it AS CHAR in its SELECT")
            if have.kind == DECIMAL and _computed_in(branch, i, _carries_fewer_places):
                raise unsupported(query, f"UNION column {column.name!r} of text taking a "
                                  "DECIMAL that may be a zero of other places (a MOD, a "
                                  "difference, a sum or a product that can come to zero: "
                                  "MySQL stores its value's own places as text, '0' for "
                                  "0 % 0.5 where the type shows '0.0'); CAST it AS CHAR in "
                                  "its SELECT")


#: What a column's computing expression is asked (by :func:`_computed_in`): given the
#: expression and the node it computes over.
ComputedBy = Callable[[ir.Expr, ir.Node], bool]


def _computed_in(node: ir.Node, i: int, computes: ComputedBy) -> bool:
    """Whether column ``i`` of ``node`` may be computed by an expression ``computes``
    holds for, followed through the nodes that pass a column on (a filter, a join's side,
    a group's key, a MIN or MAX) to the projection that computes it; a SUM is asked as
    the sum of its argument with itself (MySQL adds its values one by one). A table's
    column is stored, computed by nothing."""
    if isinstance(node, ir.Project):
        return computes(node.exprs[i], node.input)
    if isinstance(node, (ir.Filter, ir.Distinct, ir.TopK)):
        return _computed_in(node.input, i, computes)
    if isinstance(node, (ir.Union, ir.SetOp)):
        return any(_computed_in(b, i, computes) for b in node.inputs())
    if isinstance(node, ir.Join):
        left = node.left.arity
        return _computed_in(node.left, i, computes) if i < left else \
            _computed_in(node.right, i - left, computes)
    if isinstance(node, ir.Aggregate):
        keys = len(node.group_by)
        if i < keys:
            return _computed_in(node.input, node.group_by[i], computes)
        call = node.aggs[i - keys]
        if call.arg is None:
            return False
        if call.fn == "sum":  # (adds its argument's values: as their sum computes)
            arg = ir.Col(call.arg)
            return computes(ir.Call("add", (arg, arg)), node.input)
        return call.fn in ("min", "max") and _computed_in(node.input, call.arg, computes)
    return False


def _writes_double_text(e: ir.Expr, source: ir.Node) -> bool:
    """Whether text ``e`` computes over the columns of ``source`` may hold a DOUBLE written
    as text (``CONCAT(f)``, ``CAST(f AS CHAR)``, anything made of those), which can be
    longer than MySQL's width for it ('0.00000012345678901234566' in a column 22
    characters wide)."""
    input_types = [c.type for c in source.columns]
    if type_of(e, input_types).kind not in (STR, BYTES):
        return False
    if isinstance(e, ir.Col):
        return _computed_in(source, e.index, _writes_double_text)
    return any(type_of(a, input_types).kind == FLOAT or _writes_double_text(a, source)
               for a in e.children())


def _pads_a_choice(e: ir.Expr, source: ir.Node) -> bool:
    """Whether ``e`` chooses among DECIMALs of other places, padding the chosen one
    (:func:`~rivulet.plan.expressions.pads_a_choice`), or passes on a column of
    ``source`` that does."""
    if isinstance(e, ir.Col):
        return _computed_in(source, e.index, _pads_a_choice)
    return pads_a_choice(e)


def _carries_fewer_places(e: ir.Expr, source: ir.Node) -> bool:
    """Whether the DECIMAL ``e`` computes over the columns of ``source`` may carry fewer
    places than its type shows (:func:`~rivulet.plan.expressions.may_carry_fewer_places`),
    following the columns it reads to what computes them."""
    return may_carry_fewer_places(
        e, [c.type for c in source.columns],
        lambda index: _computed_in(source, index, _carries_fewer_places))


def _union_is_distinct(query: exp.Expr) -> bool:
    if isinstance(query, exp.Union):
        mixed = [query.args.get("distinct")] + [
            _union_is_distinct(s) for s in (query.this, query.expression)
            if isinstance(s, exp.Union)
        ]
        if len(set(bool(m) for m in mixed)) > 1:
            raise unsupported(query, "mixing UNION and UNION ALL")
        return bool(query.args.get("distinct"))
    return False


# --------------------------------------------------------------------------- helpers

_AGG_TYPES: tuple[type[exp.Expr], ...] = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max,
                                          exp.GroupConcat, *SPREAD_AGGREGATES)


#: The aggregates a range aggregate keeps per value of its parameters (with the grouped
#: aggregate's accumulators, which take retractions exactly).
RANGE_AGGREGATES = frozenset({"count", "sum", "avg", "min", "max"})


def _refuse_with_range_aggregate(select: exp.Select, params: Parameters,
                                 listed: list[exp.Subquery]) -> None:
    """Refuse what a range parameter in an aggregated query does not support: parameters
    beside it other than one ``col = ?`` per column (IN lists, ``<=>``, two equalities on
    a column) and scalar subqueries over its groups."""
    if params.lists:
        raise unsupported(select, "IN (?, ...) parameter list beside a range parameter in "
                          "an aggregated query")
    if params.null_safe or params.also_equal:
        raise unsupported(select, "<=> parameter or two parameters on one column beside a "
                          "range parameter in an aggregated query")
    if listed:
        raise unsupported(listed[0], "scalar subquery in an aggregated query with a range "
                          "parameter")


def _refuse_range_aggregates(found: list[exp.Expr], calls: list[ir.AggCall]) -> None:
    """Refuse an aggregate a range aggregate does not keep (see :data:`RANGE_AGGREGATES`)."""
    for node, call in zip(found, calls):
        if call.fn not in RANGE_AGGREGATES:
            raise unsupported(node, f"{call.fn.upper()}() in an aggregated query with a "
                              "range parameter")


def _has_aggregate(select: exp.Select) -> bool:
    parts = list(select.expressions)
    if select.args.get("having") is not None:
        parts.append(select.args["having"])
    return any(_own_aggregates(p) for p in parts)


def _own_aggregates(node: exp.Expr) -> list[exp.Expr]:
    """The aggregates in ``node``, not those of the subqueries in it (theirs)."""
    if isinstance(node, _AGG_TYPES):
        return [node]
    if isinstance(node, (exp.Select, exp.Subquery, exp.Exists)):
        return []
    return [a for child in node.iter_expressions() for a in _own_aggregates(child)]


def _with_aliases_expanded(node: exp.Expr, select: exp.Select, scope: FromScope) -> exp.Expr:
    """MySQL lets HAVING name SELECT-list aliases (``HAVING c > 1``). A name that is also a
    column of the FROM clause means the column where GROUP BY groups by that column (standard
    SQL first, as MySQL documents) or inside an aggregate, and the alias elsewhere."""
    aliases = {
        item.alias.lower(): item.this for item in select.expressions if isinstance(item, exp.Alias)
    }
    if not aliases:
        return node
    grouped: set[int] = set()
    group = select.args.get("group")
    for key in group.expressions if group is not None else []:
        if isinstance(key, exp.Column):
            try:
                grouped.add(scope.resolve(key))
            except SqlError:
                pass  # (a GROUP BY alias or position)

    def expand(n: exp.Expr) -> exp.Expr:
        if isinstance(n, exp.Column) and not n.table and n.name.lower() in aliases:
            if not _inside_aggregate(n) and _two_grouped_columns_named(
                    n.name, aliases[n.name.lower()], group, scope):
                raise error_at(n, f"column {n.name!r} in HAVING is ambiguous: the alias's "
                               "column and another column of that name are both grouped",
                               AmbiguousColumnError)
            try:
                column = scope.resolve(n)
            except SqlError:
                return aliases[n.name.lower()].copy()
            if column not in grouped and not _inside_aggregate(n):
                return aliases[n.name.lower()].copy()
        return n

    return node.copy().transform(expand)


def _two_grouped_columns_named(name: str, aliased: exp.Expr, group: exp.Expr | None,
                               scope: FromScope) -> bool:
    """Whether HAVING's ``name`` could be either of two grouped columns, which MySQL
    refuses as ambiguous: the SELECT alias ``name`` is a grouped column that is a field
    (:func:`_a_field`), and GROUP BY also names another column ``name`` (``SELECT t.a AS
    b ... GROUP BY t.a, t.b HAVING b > 1``)."""
    if group is None or not isinstance(aliased, exp.Column):
        return False
    try:
        target = scope.resolve(aliased)
        keys = [scope.resolve(k) if isinstance(k, exp.Column) else None
                for k in group.expressions]
    except SqlError:
        return False  # (a GROUP BY alias or position: resolved elsewhere)
    if target not in keys or not _a_field(target, scope):
        return False
    return any(isinstance(k, exp.Column) and k.name.lower() == name.lower()
               and index != target for k, index in zip(group.expressions, keys))


def _a_field(column: int | None, scope: FromScope) -> bool:
    """Whether the FROM column at ``column`` is a field to MySQL's GROUP BY name
    resolution (:attr:`Relation.fields`)."""
    return column is not None and any(
        r.fields and r.offset <= column < r.offset + len(r.names) for r in scope.relations)


def _materialized(query: exp.Expr) -> bool:
    """Whether MySQL materializes a subquery in FROM rather than merging it into the query
    around it: a UNION, or a SELECT with GROUP BY, an aggregate, DISTINCT or LIMIT."""
    if not isinstance(query, exp.Select):
        return True
    return bool(query.args.get("group") or query.args.get("distinct") or query.args.get("limit")
                or query.args.get("having") or _has_aggregate(query))


def _inside_aggregate(node: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, _AGG_TYPES):
            return True
        parent = parent.parent
    return False


def _refuse_join_kind(join: exp.Join) -> None:
    """Refuse the joins rivulet does not plan, by name."""
    side = (join.side or "").upper()
    kind = (join.kind or "").upper()
    if side == "RIGHT":
        raise unsupported(join, "RIGHT JOIN (write it as a LEFT JOIN)")
    if side == "FULL" or kind in ("NATURAL", "SEMI", "ANTI", "ASOF"):
        raise unsupported(join, f"{side or kind} JOIN")
    if (join.method or "").upper() == "NATURAL":
        raise unsupported(join, "NATURAL JOIN")
    if join.args.get("using"):
        raise unsupported(join, "JOIN ... USING (write it with ON)")


def _join_step(left: ir.Node, step: JoinStep, pairs: list[KeyPair]) -> ir.Node:
    """``left`` joined with ``step``'s item on the equalities ``pairs`` (none: every left
    row meets every right row) and the rest of its ON."""
    right = step.right
    left_join = step.left_join
    columns = left.columns + tuple(
        replace(c, nullable=True if left_join else c.nullable) for c in right.columns)
    residual = ir.and_all(step.rest) if step.rest else None
    keyed = _compared_keys(left, right, [], [], pairs)
    if keyed is not None:
        return _join_on_compared_keys(keyed, left_join, residual, columns)
    left_keys = tuple(x.index for x, _ in pairs if isinstance(x, ir.Col))
    right_keys = tuple(y.index for _, y in pairs if isinstance(y, ir.Col))
    if left_join:
        return ir.Join(left, right, "left", left_keys, right_keys, residual, columns)
    node = _inner_join(left, right, left_keys, right_keys, columns)
    if residual is not None:
        node = ir.Filter(node, residual, columns)
    return node


@dataclass(frozen=True)
class _KeyedSides:
    """The two sides of a join, each with a column appended per key whose values must be
    converted to compare as MySQL's ``=`` does, and the join keys over them."""

    left: ir.Node
    right: ir.Node
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    left_width: int  # the columns of the side as written
    right_width: int


def _correlation_keys(outer_exprs: list[ir.Expr], types: Sequence[SqlType], inner: ir.Node,
                      correlated: bool) -> tuple[list[ir.Expr], list[ir.Expr]]:
    """The keys a decorrelated subquery (``inner``, its correlation columns first) joins the
    outer row on: each outer expression and its inner column, converted to compare as
    ``=`` does; uncorrelated, the constant key. Join keys ``=`` cannot compare are refused."""
    refuse_join_keys([(type_of(e, types).kind, inner.columns[j].kind)
                      for j, e in enumerate(outer_exprs)])
    outer_keys: list[ir.Expr] = [] if correlated else [constant_key()]
    inner_keys: list[ir.Expr] = [] if correlated else [constant_key()]
    for j, e in enumerate(outer_exprs):
        mine, theirs = type_of(e, types), inner.columns[j].type
        outer_keys.append(_compared_key(e, mine, theirs))
        inner_keys.append(_compared_key(ir.Col(j, inner.columns[j].name), theirs, mine,
                                        against_text_literal=isinstance(e, ir.Lit)))
    return outer_keys, inner_keys


def _compared_key(e: ir.Expr, have: SqlType, other: SqlType, *,
                  against_text_literal: bool = False) -> ir.Expr:
    """A join key as the value ``=`` compares it as against keys of type ``other``
    (``against_text_literal``: the other key is a text constant).

    Exact numbers compare exactly as they are, but a DECIMAL key is also looked up in its
    table by its text ('1.500'): an INT or a DECIMAL with fewer places joined to one with
    more is padded to them, so that equal keys are equal values of one form. Compared as
    DOUBLEs, a quotient is its unrounded value (MySQL's val_real, as ``typed`` has it:
    ``f IN (SELECT c / 3 ...)`` holds for f = 0.333333333e0, not 0.3333e0), but against a
    text constant, as a DECIMAL at the places it shows."""
    if have.rounded and not (against_text_literal and other.kind in (STR, BYTES)) and \
            comparison_kind(shown_type(have).kind, shown_type(other).kind) == FLOAT:
        return ir.Call("cast_float", (e,))
    e = shown(e, have)  # a DECIMAL compares at the places it shows
    mine, theirs = shown_type(have), shown_type(other)
    as_kind = comparison_kind(mine.kind, theirs.kind)
    if as_kind is None:
        exact = (INT, BOOL, DECIMAL)
        if DECIMAL in (mine.kind, theirs.kind) and mine.kind in exact and theirs.kind in exact:
            places = max(t.frac for t in (mine, theirs) if t.kind == DECIMAL)
            if mine.kind != DECIMAL or mine.frac != places:
                return ir.Call("to_scale", (e, ir.Lit(places, INT)))
        return e
    if as_kind == mine.kind:
        return e
    return ir.Call(f"cast_{as_kind}", (e,))


def _compared_keys(left: ir.Node, right: ir.Node, left_keys: list[int],
                   right_keys: list[int], pairs: Sequence[KeyPair] = ()) -> _KeyedSides | None:
    """The sides of a join keyed on the values its ``=`` compares, where those are not the
    columns themselves (an INT with a VARCHAR compare as DOUBLEs, a DATE with a DATETIME
    as DATETIMEs...); None where every key pair compares as it is. Key ``pairs`` of
    expressions (``lower(a.x) = lower(b.y)``: of one kind, see
    :func:`~rivulet.plan.joins.keyable`) are computed as columns of their sides, as they are;
    pairs of columns are converted as ``left_keys`` and ``right_keys`` are."""
    left_extra: list[ir.Expr] = []
    right_extra: list[ir.Expr] = []
    lk, rk = [], []
    computed = [(x, y) for x, y in pairs if not (isinstance(x, ir.Col) and isinstance(y, ir.Col))]
    columns = [(x.index, y.index) for x, y in pairs
               if isinstance(x, ir.Col) and isinstance(y, ir.Col)]
    for a, b in [*zip(left_keys, right_keys), *columns]:
        ta, tb = left.columns[a].type, right.columns[b].type
        x = _compared_key(ir.Col(a, left.columns[a].name), ta, tb)
        y = _compared_key(ir.Col(b, right.columns[b].name), tb, ta)
        if isinstance(x, ir.Col) and isinstance(y, ir.Col):
            lk.append(a)
            rk.append(b)
            continue
        lk.append(left.arity + len(left_extra))
        rk.append(right.arity + len(right_extra))
        left_extra.append(x)
        right_extra.append(y)
    for x, y in computed:
        lk.append(left.arity + len(left_extra))
        rk.append(right.arity + len(right_extra))
        left_extra.append(x)
        right_extra.append(y)
    if not left_extra:
        return None

    def widened(node: ir.Node, extra: list[ir.Expr]) -> ir.Node:
        exprs = [ir.Col(i, c.name) for i, c in enumerate(node.columns)] + extra
        return _project(node, exprs, [c.name for c in node.columns]
                        + [f"_key{i}" for i in range(len(extra))])

    return _KeyedSides(widened(left, left_extra), widened(right, right_extra), tuple(lk),
                       tuple(rk), left.arity, right.arity)


def _join_on_compared_keys(sides: _KeyedSides, left_join: bool, residual: ir.Expr | None,
                           columns: tuple[ir.ColumnInfo, ...]) -> ir.Node:
    """The join of :func:`_compared_keys`' sides, with the appended key columns dropped
    again (``columns``: the joined row as written)."""
    lw, rw = sides.left_width, sides.right_width
    left_extra = sides.left.arity - lw
    joined = sides.left.columns + tuple(
        replace(c, nullable=True if left_join else c.nullable) for c in sides.right.columns)
    node: ir.Node
    if left_join:
        if residual is not None:  # over the widened row: right columns sit further on
            residual = ir.replace_columns(
                residual, lambda c: c if c.index < lw else ir.Col(c.index + left_extra, c.name))
        node = ir.Join(sides.left, sides.right, "left", sides.left_keys, sides.right_keys,
                       residual, joined)
        residual = None
    else:
        node = _inner_join(sides.left, sides.right, sides.left_keys, sides.right_keys, joined)
    keep = list(range(lw)) + [sides.left.arity + j for j in range(rw)]
    node = _project(node, [ir.Col(i, joined[i].name) for i in keep],
                    [c.name for c in columns])
    if residual is not None:
        node = ir.Filter(node, residual, columns)
    return node


def _shown(exprs: list[ir.Expr], input_types: list[SqlType]) -> list[ir.Expr]:
    """Answer columns as MySQL returns them: a DECIMAL at the places its type shows; a
    DOUBLE rounded to places (``ROUND(x, 2) * y``) as the text MySQL sends for it reads
    back (-249.975 is -249.98: its text shows 2 places)."""
    out = []
    for e in exprs:
        t = type_of(e, input_types)
        if t.kind == FLOAT and t.decimals < NOT_FIXED:  # (still showing its places)
            e = ir.Call("cast_float", (as_text(e, t), ir.Lit(t.decimals, INT)))
        out.append(shown(e, t))
    return out


def _group_parts_shown(e: ir.Expr, keys: int, input_types: list[SqlType]) -> ir.Expr:
    """``e``, over an aggregate's output of ``keys`` group columns then the aggregates,
    with its largest parts that read no aggregate at their shown places (:func:`_shown`)."""
    if not _reads_beyond(e, keys):
        return _shown([e], input_types)[0]
    if isinstance(e, ir.Call):
        return ir.Call(e.fn, tuple(_group_parts_shown(a, keys, input_types) for a in e.args))
    if isinstance(e, ir.Case):
        return ir.Case(
            tuple((_group_parts_shown(c, keys, input_types),
                   _group_parts_shown(v, keys, input_types)) for c, v in e.whens),
            None if e.default is None else _group_parts_shown(e.default, keys, input_types))
    return e


def _reads_beyond(e: ir.Expr, columns: int) -> bool:
    """Whether ``e`` reads a column past the first ``columns`` (of an aggregate's output:
    an aggregate's value rather than a group column)."""
    if isinstance(e, ir.Col):
        return e.index >= columns
    return any(_reads_beyond(x, columns) for x in e.children())


def _project(node: ir.Node, exprs: list[ir.Expr], names: list[str]) -> ir.Node:
    direct = [e for e in exprs if isinstance(e, ir.Col)]
    if len(direct) == len(exprs) and [e.index for e in direct] == list(range(node.arity)):
        if [c.name for c in node.columns] == names:
            return node
    input_types = [c.type for c in node.columns]
    columns = tuple(
        ir.ColumnInfo.of(n, type_of(e, input_types), _nullable(e, node.columns),
                         node.columns[e.index].column if isinstance(e, ir.Col) else None)
        for e, n in zip(exprs, names)
    )
    return ir.Project(node, tuple(exprs), columns)


def _inner_join(left: ir.Node, right: ir.Node, left_keys: tuple[int, ...],
                right_keys: tuple[int, ...], columns: tuple[ir.ColumnInfo, ...]) -> ir.Node:
    """An inner join with its inputs in one canonical order, so that ``a JOIN b`` and
    ``b JOIN a`` share one operator and its state; a projection puts the columns back."""
    if left.signature() <= right.signature():
        return ir.Join(left, right, "inner", left_keys, right_keys, None, columns)
    n = left.arity
    swapped = ir.Join(right, left, "inner", right_keys, left_keys, None, columns[n:] + columns[:n])
    width = right.arity
    return _project_columns(swapped, [width + i for i in range(n)] + list(range(width)))


def _project_columns(node: ir.Node, indexes: list[int]) -> ir.Node:
    return _project(node, [ir.Col(i, node.columns[i].name) for i in indexes],
                    [node.columns[i].name for i in indexes])


#: Calls that are NULL only where an argument is (MySQL's NOT NULL flag for them follows
#: their arguments'); other calls may be NULL for some values (a quotient by zero, a
#: conversion), and are said to be.
_NULL_ONLY_FROM_ARGUMENTS = frozenset({"add", "sub", "mul", "neg", "ABS", "cast_int",
                                       "to_scale", "ROUND", "FLOOR", "CEIL", "CEILING"})


def _nullable(e: ir.Expr, columns: tuple[ir.ColumnInfo, ...]) -> bool:
    """Whether a column computed as ``e`` may hold NULL (its NOT NULL flag on the wire)."""
    if isinstance(e, ir.Col):
        return columns[e.index].nullable
    if isinstance(e, ir.Lit):
        return e.value is None
    if not isinstance(e, ir.Call):
        return True
    if e.fn in ("is_null", "is_not_null", "null_safe_eq"):
        return False
    if e.fn in _NULL_ONLY_FROM_ARGUMENTS:
        return any(_nullable(a, columns) for a in e.args)
    if e.fn in ("cast_float", "cast_str", "cast_bytes") and all(
            isinstance(a, ir.Lit) for a in e.args):
        return _nullable(e.args[0], columns)  # a constant converted (MySQL folds it)
    if e.fn in ("COALESCE", "IFNULL"):  # (each argument converted to the result's type)
        return all(_nullable(_unconverted(a), columns) for a in e.args)
    return True


def _unconverted(e: ir.Expr) -> ir.Expr:
    """``e`` without the conversion the planner put around it (``expressions.convert``)."""
    if isinstance(e, ir.Call) and e.fn.startswith("cast_") and e.args:
        return e.args[0]
    return e


def _used_beyond_output(select: exp.Select, agg: exp.Expr) -> bool:
    """Whether the aggregate ``agg`` is used other than as a column of ``select``'s output:
    inside an expression, in HAVING, or in ORDER BY (itself, its alias or its position)."""
    outputs = [e.this if isinstance(e, exp.Alias) else e for e in select.expressions]
    for e in select.expressions:
        inner = e.this if isinstance(e, exp.Alias) else e
        if inner != agg and any(sub == agg for sub in inner.find_all(type(agg))):
            return True
    having = select.args.get("having")
    if having is not None and any(sub == agg for sub in having.find_all(type(agg))):
        return True
    order = select.args.get("order")
    for term in order.expressions if order is not None else ():
        t = term.this
        if any(sub == agg for sub in t.find_all(type(agg))):
            return True
        if isinstance(t, exp.Literal) and not t.is_string and t.this.isdigit():
            position = int(t.this) - 1
            if 0 <= position < len(outputs) and outputs[position] == agg:
                return True
        if isinstance(t, exp.Column) and not t.table:
            if any(isinstance(e, exp.Alias) and e.alias.lower() == t.name.lower()
                   and e.this == agg for e in select.expressions):
                return True
    return False


def _aggregated_value(fn: str, arg: ir.Expr, t: SqlType) -> ir.Expr:
    """What an aggregate takes of ``arg`` (of type ``t``): SUM and AVG of an ENUM add its
    members' indexes and of a TIME its [-]HHMMSS numbers (with the TIME's places), as MySQL
    does; MIN and MAX of an ENUM compare (and return) its members' text."""
    if fn in SPREAD_AGGREGATES.values() and t.kind not in (INT, BOOL, DECIMAL, FLOAT, STR,
                                                          None):
        raise UnsupportedSqlError(f"unsupported {fn.upper()}() of a {t.kind}: MySQL reads it "
                                  "as a number of its own; CAST it to a number first")
    if t.kind == ENUM and fn in ("sum", "avg"):
        return ir.Call("cast_int", (arg,))
    if t.kind == ENUM and fn in ("min", "max"):
        return ir.Call("cast_str", (arg,))
    if t.kind == TIME and fn in ("sum", "avg"):
        return to_places(arg, number_type(t)) if t.scale else ir.Call("cast_int", (arg,))
    if t.kind == DATETIME and t.scale and fn in ("sum", "avg"):  # (with its fraction)
        return to_places(arg, number_type(t))
    return arg


def _agg_type(call: ir.AggCall, columns: tuple[ir.ColumnInfo, ...]) -> SqlType:
    return aggregate_result_type(call.fn, columns[call.arg].type if call.arg is not None else None)


def _expr_name(e: ir.Expr, columns: tuple[ir.ColumnInfo, ...]) -> str:
    return columns[e.index].name if isinstance(e, ir.Col) else "expr"


def _output_name(item: exp.Expr) -> str:
    if isinstance(item, exp.Column):
        return item.name
    if isinstance(item, exp.Literal) and item.is_string:
        return item.name  # MySQL names a string's column by its value: SELECT 'a' -> a
    return item.sql(dialect="mysql")


def _cut(plan: ir.ViewPlan) -> ir.Node:
    """The root of a parameterless ``plan`` read as a relation (a subquery or a view in
    FROM, a UNION's branch): its rows, in no order. A ``LIMIT`` cuts them there, as MySQL
    cuts them: its top-k (which holds ``LIMIT + OFFSET`` rows for the view's own reader, who
    skips the OFFSET when it answers) passes on only the rows past the OFFSET. (A view's
    reader orders its answer; a relation has no order, so the ``ORDER BY`` only says which
    rows the LIMIT keeps.)"""
    root = plan.root
    if plan.limit is None:
        return root
    assert isinstance(root, ir.TopK), "a parameterless plan's LIMIT is its last node"
    return replace(root, skip=plan.offset) if plan.offset else root


def _limit(query: exp.Expr) -> tuple[int | None, int]:
    limit_node = query.args.get("limit")
    offset_node = query.args.get("offset")
    limit = offset = None
    if limit_node is not None:
        value = limit_node.expression
        if isinstance(value, exp.Placeholder):
            raise unsupported(value, "? as LIMIT")
        limit = int(value.this)
        if limit_node.args.get("offset") is not None:
            offset = int(limit_node.args["offset"].this)
    if offset_node is not None:
        value = offset_node.expression
        if isinstance(value, exp.Placeholder):
            raise unsupported(value, "? as OFFSET")
        offset = int(value.this)
    return limit, offset or 0


def _is_position(node: exp.Expr) -> bool:
    """``ORDER BY 2`` / ``GROUP BY 2``: an unsigned integer names a select-list column (a
    decimal such as ``1.5`` is a constant, as in MySQL)."""
    return isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit()


def _refuse_negative_position(node: exp.Expr, clause: str) -> None:
    """MySQL reads ``ORDER BY -1`` as a position too, and names no column by it."""
    if isinstance(node, exp.Neg) and _is_position(node.this):
        raise error_at(node, f"unknown column '-{node.this.this}' in {clause}",
                       UnknownColumnError)
