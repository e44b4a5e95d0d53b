"""Unit tests of the planner: SELECT -> ViewPlan (rivulet/plan/planner.py).

Checks are stated in terms of meaning, not positions: a root column is traced back through
the IR to the base-table column it carries (``origin``), so the tests do not depend on how
the planner lays out hidden columns.
"""

from __future__ import annotations

import pytest

from rivulet.errors import SqlError, UnsupportedSqlError
from rivulet.plan import ir
from rivulet.plan.catalog import Catalog
from rivulet.plan.planner import Planner
from rivulet.sql.ddl import table_schema
from rivulet.sql.parse import parse_one

DDL = [
    "CREATE TABLE t (id INT PRIMARY KEY, g INT, n INT, name VARCHAR(10))",
    "CREATE TABLE u (id INT PRIMARY KEY, tid INT, score INT)",
]


def make_catalog() -> Catalog:
    catalog = Catalog()
    for ddl in DDL:
        schema = table_schema(parse_one(ddl))
        catalog.tables[schema.name.lower()] = schema
    return catalog


@pytest.fixture
def catalog() -> Catalog:
    return make_catalog()


def plan(catalog: Catalog, sql: str, name: str = "v") -> ir.ViewPlan:
    return Planner(catalog).plan_view(name, parse_one(sql), sql)


def origin(node: ir.Node, i: int) -> tuple[str, str] | None:
    """The base-table column that column ``i`` of ``node`` carries unchanged, if any."""
    if isinstance(node, ir.Scan):
        return node.table, node.columns[i].name
    if isinstance(node, ir.Project):
        e = node.exprs[i]
        return origin(node.input, e.index) if isinstance(e, ir.Col) else None
    if isinstance(node, (ir.Filter, ir.Distinct, ir.TopK)):
        return origin(node.input, i)
    if isinstance(node, ir.Join):
        if i < node.left.arity:
            return origin(node.left, i)
        return origin(node.right, i - node.left.arity)
    if isinstance(node, ir.Aggregate):
        return origin(node.input, node.group_by[i]) if i < len(node.group_by) else None
    return None


def nodes_of(root: ir.Node, kind: type) -> list[ir.Node]:
    return [n for n in ir.walk(root) if isinstance(n, kind)]


def key_origins(p: ir.ViewPlan) -> list[tuple[str, str] | None]:
    return [origin(p.root, k) for k in p.key]


def filter_origins(f: ir.Filter) -> set[tuple[str, str] | None]:
    return {origin(f.input, i) for i in ir.columns_used(f.predicate)}


# --------------------------------------------------------------------------- parameters


def test_equality_parameter_becomes_the_reader_key(catalog):
    p = plan(catalog, "SELECT id, name FROM t WHERE g = ?")
    assert key_origins(p) == [("t", "g")]
    assert p.key_params == (0,)
    assert p.param_count == 1
    assert p.visible == 2 and p.column_names == ("id", "name")
    assert [origin(p.root, i) for i in range(p.visible)] == [("t", "id"), ("t", "name")]
    assert p.range_column is None and p.range_bounds == () and p.in_list == ()
    # The parameter is a key, not a filter: one maintained view answers every value.
    assert nodes_of(p.root, ir.Filter) == []
    assert not any(isinstance(n, ir.Param) for n in _all_exprs(p.root))


def test_parameter_on_the_left_of_the_comparison(catalog):
    a = plan(catalog, "SELECT id FROM t WHERE g = ?")
    b = plan(catalog, "SELECT id FROM t WHERE ? = g")
    assert key_origins(b) == [("t", "g")]
    assert a.root == b.root and a.key == b.key


def test_selected_key_column(catalog):
    p = plan(catalog, "SELECT g, id FROM t WHERE g = ?")
    assert key_origins(p) == [("t", "g")]
    assert p.column_names == ("g", "id")


@pytest.mark.parametrize("sql,expected", [
    ("SELECT id FROM t WHERE g = ? AND n = ?", [("t", "g"), ("t", "n")]),
    ("SELECT id FROM t WHERE n = ? AND g = ?", [("t", "n"), ("t", "g")]),
    ("SELECT id FROM t WHERE n = ? AND id > 3 AND g = ?", [("t", "n"), ("t", "g")]),
])
def test_several_parameters_make_a_compound_key_in_text_order(catalog, sql, expected):
    p = plan(catalog, sql)
    assert key_origins(p) == expected
    assert p.key_params == (0, 1)
    assert p.param_count == 2


def test_plain_conjuncts_stay_filters_parameters_do_not(catalog):
    p = plan(catalog, "SELECT id FROM t WHERE g = ? AND n > 3 AND name LIKE 'a%'")
    filters = nodes_of(p.root, ir.Filter)
    assert len(filters) == 1
    used = filter_origins(filters[0])
    assert used == {("t", "n"), ("t", "name")}
    assert key_origins(p) == [("t", "g")]


def test_parameter_in_joined_query_keys_the_right_table(catalog):
    p = plan(catalog,
             "SELECT t.id, u.score FROM t JOIN u ON t.id = u.tid WHERE u.score = ? AND t.g = ?")
    assert key_origins(p) == [("u", "score"), ("t", "g")]
    assert p.column_names == ("id", "score")


def test_parameter_of_aggregate_becomes_a_group_key(catalog):
    p = plan(catalog, "SELECT COUNT(*) FROM t WHERE g = ?")
    assert key_origins(p) == [("t", "g")]
    agg = nodes_of(p.root, ir.Aggregate)
    assert len(agg) == 1
    assert [origin(agg[0].input, i) for i in agg[0].group_by] == [("t", "g")]
    assert p.implicit_group  # an unseen key still answers COUNT(*) = 0
    grouped = plan(catalog, "SELECT g, COUNT(*) FROM t WHERE g = ? GROUP BY g")
    assert key_origins(grouped) == [("t", "g")] and not grouped.implicit_group


# --------------------------------------------------------------------------- ranges


@pytest.mark.parametrize("sql,bounds", [
    ("SELECT id FROM t WHERE n > ?", [(">", 0)]),
    ("SELECT id FROM t WHERE n >= ?", [(">=", 0)]),
    ("SELECT id FROM t WHERE n < ?", [("<", 0)]),
    ("SELECT id FROM t WHERE n <= ?", [("<=", 0)]),
    ("SELECT id FROM t WHERE ? < n", [(">", 0)]),
    ("SELECT id FROM t WHERE ? >= n", [("<=", 0)]),
    ("SELECT id FROM t WHERE n BETWEEN ? AND ?", [(">=", 0), ("<=", 1)]),
    ("SELECT id FROM t WHERE n > ? AND n <= ?", [(">", 0), ("<=", 1)]),
])
def test_range_parameters(catalog, sql, bounds):
    p = plan(catalog, sql)
    assert p.range_column is not None
    assert origin(p.root, p.range_column) == ("t", "n")
    assert [(b.op, b.param) for b in p.range_bounds] == bounds
    assert p.key == () and p.key_params == ()
    assert p.param_count == len(bounds)
    assert nodes_of(p.root, ir.Filter) == []
    assert p.visible == 1 and p.column_names == ("id",)


def test_range_with_equality_parameter(catalog):
    p = plan(catalog, "SELECT id FROM t WHERE n <= ? AND g = ?")
    assert key_origins(p) == [("t", "g")]
    assert p.key_params == (1,)
    assert origin(p.root, p.range_column) == ("t", "n")
    assert [(b.op, b.param) for b in p.range_bounds] == [("<=", 0)]


def test_range_on_two_columns_cuts_by_the_first_and_checks_the_second(catalog):
    """``n > ? AND g < ?`` (once refused here): the reader's range is on ``n``, the first
    written; ``g`` is a hidden column whose bound a read checks over the rows cut."""
    p = plan(catalog, "SELECT id FROM t WHERE n > ? AND g < ? AND n <= ?")
    assert p.range_column is not None and p.key == ()
    assert [(b.op, b.param) for b in p.range_bounds] == [(">", 0), ("<=", 2)]
    (other,) = p.other_ranges
    assert [(b.op, b.param) for b in other.bounds] == [("<", 1)]
    assert origin(p.root, p.range_column) == ("t", "n")
    assert origin(p.root, other.column) == ("t", "g")
    assert p.visible == 1 and not any(isinstance(n, ir.TopK) for n in ir.walk(p.root))


def test_range_in_aggregate_is_a_range_aggregate(catalog):
    p = plan(catalog, "SELECT COUNT(*) FROM t WHERE n > ?")
    assert any(isinstance(n, ir.RangeAggregate) for n in ir.walk(p.root))


def test_ranges_on_two_columns_in_aggregate_key_it_by_every_bound(catalog):
    """``n > ? AND id < ?`` in an aggregated query (once refused here): one range
    aggregate whose key holds each bound's value, the first column's then the other's."""
    p = plan(catalog, "SELECT COUNT(*) FROM t WHERE n > ? AND id < ? AND n <= ?")
    [node] = [n for n in ir.walk(p.root) if isinstance(n, ir.RangeAggregate)]
    assert node.ops == (">", "<=") and [ops for _, ops in node.other_ranges] == [("<",)]
    assert p.bounds_keyed and p.key_params == (0, 2, 1) and len(p.key) == 3
    (other,) = p.other_ranges
    assert other.column == p.key[2] and [b.param for b in other.bounds] == [1]


@pytest.mark.parametrize("sql", [
    "SELECT GROUP_CONCAT(name) FROM t WHERE n > ?",  # an aggregate it cannot keep exactly
])
def test_range_aggregates_it_cannot_keep_are_unsupported(catalog, sql):
    with pytest.raises(UnsupportedSqlError):
        plan(catalog, sql)


@pytest.mark.parametrize("sql", [
    "SELECT id FROM t WHERE n + 1 = ?",
    "SELECT id FROM t WHERE g = ? OR n > ?",
    "SELECT id FROM t WHERE NOT g = ?",
    "SELECT id FROM t WHERE g = ? + 1",
])
def test_parameter_outside_a_column_comparison_is_rejected(catalog, sql):
    with pytest.raises(SqlError):
        plan(catalog, sql)


def test_or_on_two_columns_is_a_union_keyed_by_each_term(catalog):
    """``g = ? OR n = ?`` (once refused here) is one alternative per term
    (rivulet/plan/alternatives.py): the union of two projections of the same rows, the
    last key column each term's own column, tagged with the term, the second carrying the
    first term's column."""
    p = plan(catalog, "SELECT id FROM t WHERE g = ? OR n = ?")
    assert p.alternatives is not None and p.alternatives.params == (0, 1)
    assert p.key_params == (0,) and p.param_count == 2
    assert isinstance(p.root, ir.Union) and len(p.root.branches) == 2
    first, second = p.root.branches
    assert origin(first, p.key[0]) == ("t", "g") and origin(second, p.key[0]) == ("t", "n")
    (copy,) = p.alternatives.copies
    assert origin(first, copy) is None and origin(second, copy) == ("t", "g")
    assert first.input is second.input  # (the rows below the OR, planned once)


# --------------------------------------------------------------------------- IN lists


def test_in_list(catalog):
    p = plan(catalog, "SELECT id, name FROM t WHERE id IN (?, ?, ?)")
    assert p.in_list == (0, 1, 2)
    assert key_origins(p) == [("t", "id")]
    assert p.key_params == (0,)
    assert p.param_count == 3
    assert nodes_of(p.root, ir.Filter) == []


def test_in_list_after_equality(catalog):
    p = plan(catalog, "SELECT name FROM t WHERE g = ? AND id IN (?, ?)")
    assert p.in_list == (1, 2)
    assert key_origins(p) == [("t", "g"), ("t", "id")]  # the IN column is the last key column
    assert p.key_params == (0, 1)


def test_in_list_before_equality(catalog):
    p = plan(catalog, "SELECT name FROM t WHERE id IN (?, ?) AND g = ?")
    assert p.in_list == (0, 1)
    assert key_origins(p) == [("t", "g"), ("t", "id")]
    assert p.key_params == (2, 0)


def test_in_list_of_constants_is_a_filter(catalog):
    p = plan(catalog, "SELECT name FROM t WHERE id IN (1, 2)")
    assert p.in_list == () and p.key == () and p.param_count == 0
    assert len(nodes_of(p.root, ir.Filter)) == 1


def test_two_in_lists_key_their_columns(catalog):
    p = plan(catalog, "SELECT name FROM t WHERE id IN (?, ?) AND g IN (?, ?)")
    assert sorted(origin(p.root, i) for i in p.key) == [("t", "g"), ("t", "id")]


def test_two_in_lists_on_one_column_are_unsupported(catalog):
    with pytest.raises(UnsupportedSqlError):
        plan(catalog, "SELECT name FROM t WHERE id IN (?, ?) AND id IN (?, ?)")


# --------------------------------------------------------------------------- LIMIT


def test_limit_becomes_topk_grouped_by_the_key(catalog):
    p = plan(catalog, "SELECT id, n FROM t WHERE g = ? ORDER BY n DESC LIMIT 3")
    assert isinstance(p.root, ir.TopK)
    assert p.root.group_by == p.key
    assert [origin(p.root, i) for i in p.root.group_by] == [("t", "g")]
    assert p.root.k == 3
    assert [(origin(p.root.input, s.column), s.descending)
            for s in p.root.order] == [(("t", "n"), True)]
    assert p.limit == 3 and p.offset == 0
    assert [(origin(p.root, s.column), s.descending) for s in p.order] == [(("t", "n"), True)]


def test_limit_with_compound_key(catalog):
    p = plan(catalog, "SELECT id FROM t WHERE g = ? AND name = ? ORDER BY n, id LIMIT 2")
    assert isinstance(p.root, ir.TopK)
    assert p.root.group_by == p.key
    assert [origin(p.root, i) for i in p.root.group_by] == [("t", "g"), ("t", "name")]
    assert [origin(p.root.input, s.column) for s in p.root.order] == [("t", "n"), ("t", "id")]
    assert p.visible == 1


def test_limit_per_in_list_value(catalog):
    p = plan(catalog, "SELECT id FROM t WHERE g IN (?, ?) ORDER BY n LIMIT 1")
    assert isinstance(p.root, ir.TopK)
    assert p.root.group_by == p.key
    assert [origin(p.root, i) for i in p.root.group_by] == [("t", "g")]


def test_limit_without_parameters_is_one_group(catalog):
    p = plan(catalog, "SELECT id, n FROM t ORDER BY n LIMIT 2 OFFSET 1")
    assert isinstance(p.root, ir.TopK)
    assert p.root.group_by == ()
    assert p.root.k == 3  # the top-k keeps offset + limit rows
    assert p.limit == 2 and p.offset == 1


def test_no_limit_no_topk(catalog):
    p = plan(catalog, "SELECT id, n FROM t WHERE g = ? ORDER BY n")
    assert nodes_of(p.root, ir.TopK) == []
    assert [origin(p.root, s.column) for s in p.order] == [("t", "n")]


def test_limit_on_aggregate(catalog):
    p = plan(catalog, "SELECT g, COUNT(*) AS c FROM t GROUP BY g ORDER BY c DESC LIMIT 2")
    assert isinstance(p.root, ir.TopK) and p.root.k == 2 and p.root.group_by == ()


# --------------------------------------------------------------------------- sharing


def _join(p: ir.ViewPlan) -> ir.Join:
    joins = nodes_of(p.root, ir.Join)
    assert len(joins) == 1
    return joins[0]  # type: ignore[return-value]


def assert_shared(a: ir.Node, b: ir.Node) -> None:
    assert a == b
    assert hash(a) == hash(b)
    assert {a: "x"}[b] == "x"


def test_same_query_planned_twice_is_equal(catalog):
    sql = ("SELECT t.g, COUNT(*), SUM(u.score) FROM t JOIN u ON t.id = u.tid WHERE t.n > 1 "
           "GROUP BY t.g")
    a = plan(catalog, sql, "a")
    b = plan(make_catalog(), sql, "b")  # another planner and catalog: still the same signature
    assert_shared(a.root, b.root)


def test_views_with_the_same_join_share_it(catalog):
    a = plan(catalog, "SELECT t.id, u.score FROM t JOIN u ON t.id = u.tid WHERE t.g = ?")
    # (AVG: an aggregate that eager aggregation, rivulet/plan/eager.py, keeps above the join)
    b = plan(catalog, "SELECT t.g, AVG(u.score) FROM t JOIN u ON t.id = u.tid GROUP BY t.g")
    assert_shared(_join(a), _join(b))


def test_table_aliases_do_not_break_sharing(catalog):
    a = plan(catalog, "SELECT t.id, u.score FROM t JOIN u ON t.id = u.tid")
    b = plan(catalog, "SELECT x.id, y.score FROM t AS x JOIN u AS y ON x.id = y.tid")
    assert_shared(_join(a), _join(b))
    assert_shared(a.root, b.root)


def test_swapped_join_condition_shares(catalog):
    a = plan(catalog, "SELECT t.id FROM t JOIN u ON t.id = u.tid")
    b = plan(catalog, "SELECT t.id FROM t JOIN u ON u.tid = t.id")
    assert_shared(_join(a), _join(b))


def test_identical_subqueries_share(catalog):
    sub = "(SELECT g, COUNT(*) AS c FROM t WHERE n > 0 GROUP BY g)"
    a = plan(catalog, f"SELECT g FROM {sub} AS s WHERE c > 1")
    b = plan(catalog, f"SELECT c FROM {sub} AS other WHERE g = ?")
    agg_a, agg_b = nodes_of(a.root, ir.Aggregate), nodes_of(b.root, ir.Aggregate)
    assert len(agg_a) == len(agg_b) == 1
    assert_shared(agg_a[0], agg_b[0])


def test_subquery_and_view_share(catalog):
    base = plan(catalog, "SELECT g, COUNT(*) AS c FROM t WHERE n > 0 GROUP BY g", "per_g")
    catalog.views["per_g"] = base
    over_view = plan(catalog, "SELECT g FROM per_g WHERE c > 1")
    over_sub = plan(catalog, "SELECT g FROM (SELECT g, COUNT(*) AS c FROM t WHERE n > 0 "
                             "GROUP BY g) AS s WHERE c > 1")
    assert_shared(over_view.root, over_sub.root)
    # The view's own plan is a sub-plan of the plan over it: its state is reused.
    assert any(n == base.root for n in ir.walk(over_view.root))


@pytest.mark.parametrize("a,b", [
    ("SELECT id AS a FROM t WHERE n > 5", "SELECT id AS b FROM t WHERE n > 5"),
    ("SELECT n + 1 AS x, name FROM t WHERE g = ?",
     "SELECT n + 1 AS y, name AS nm FROM t WHERE g = ?"),
    ("SELECT g, COUNT(*) AS c FROM t GROUP BY g",
     "SELECT g AS grp, COUNT(*) AS how_many FROM t GROUP BY g"),
    ("SELECT t.id AS i, u.score AS s FROM t JOIN u ON t.id = u.tid",
     "SELECT x.id AS k, y.score AS v FROM t AS x JOIN u AS y ON x.id = y.tid"),
])
def test_output_aliases_do_not_break_sharing(catalog, a, b):
    pa, pb = plan(catalog, a, "a"), plan(catalog, b, "b")
    assert pa.column_names != pb.column_names
    below_a = pa.root.input if isinstance(pa.root, ir.Project) else pa.root
    below_b = pb.root.input if isinstance(pb.root, ir.Project) else pb.root
    assert_shared(below_a, below_b)
    assert_shared(pa.root, pb.root)
    assert pa.key == pb.key


@pytest.mark.parametrize("a,b", [
    ("SELECT id FROM t WHERE n > 5", "SELECT id FROM t WHERE n > 6"),
    ("SELECT id FROM t WHERE n > 5", "SELECT id FROM t WHERE n >= 5"),
    ("SELECT id FROM t WHERE n > 5", "SELECT name FROM t WHERE n > 5"),
    ("SELECT t.id FROM t JOIN u ON t.id = u.tid", "SELECT t.id FROM t JOIN u ON t.id = u.id"),
    ("SELECT t.id FROM t JOIN u ON t.id = u.tid", "SELECT t.id FROM t LEFT JOIN u ON t.id = u.tid"),
    ("SELECT g, COUNT(*) FROM t GROUP BY g", "SELECT g, COUNT(n) FROM t GROUP BY g"),
    ("SELECT g, SUM(n) FROM t GROUP BY g", "SELECT g, SUM(DISTINCT n) FROM t GROUP BY g"),
    ("SELECT id FROM t WHERE n = 1", "SELECT id FROM t WHERE n = 1.0"),
])
def test_different_queries_do_not_share(catalog, a, b):
    assert plan(catalog, a, "a").root != plan(catalog, b, "b").root


# --------------------------------------------------------------------------- helpers


def _all_exprs(root: ir.Node) -> list[ir.Expr]:
    out: list[ir.Expr] = []

    def visit(e: ir.Expr) -> None:
        out.append(e)
        for c in e.children():
            visit(c)

    for n in ir.walk(root):
        for e in getattr(n, "exprs", ()) or ():
            visit(e)
        for attr in ("predicate", "residual"):
            e = getattr(n, attr, None)
            if e is not None:
                visit(e)
    return out
