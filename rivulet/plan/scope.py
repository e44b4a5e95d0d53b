"""Name resolution in a SELECT: which column of the joined FROM row a name means.

A :class:`FromScope` resolves names against the FROM items (tables, views, subqueries) as
they sit side by side in the joined row; a :class:`GroupedScope` resolves them above a
GROUP BY, where only grouped expressions and aggregates may be named. The planner asks
them; so does the extraction of a view's parameters (:mod:`rivulet.plan.params`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from rivulet.errors import (
    AggregateMisuseError,
    AmbiguousColumnError,
    NotGroupedError,
    SqlError,
    UnknownColumnError,
)
from rivulet.plan import ir
from rivulet.plan.expressions import is_aggregate, translate
from rivulet.sql.parse import error_at
from rivulet.values.schema import TableSchema
from rivulet.values.types import SqlType, column_type

#: The nodes whose value the planner may have joined to the row (see
#: :attr:`FromScope.values`): a scalar subquery, ``x IN (subquery)``, ``x op ANY/ALL
#: (subquery)``.
_JOINED_VALUES = (exp.Subquery, exp.In, exp.Binary)


@dataclass
class Relation:
    """One FROM item as seen by name resolution: where its columns sit in the joined row."""

    alias: str
    names: list[str]
    offset: int
    table: TableSchema | None = None  # for functional dependencies on a primary key
    #: Whether MySQL resolves a GROUP BY name to these columns as fields (a table, or a
    #: subquery it materializes: UNION, GROUP BY, DISTINCT); a subquery it merges into the
    #: query gives expressions instead.
    fields: bool = True


@dataclass
class FromScope:
    """Resolves column names over the joined row of a FROM clause."""

    relations: list[Relation]
    columns: tuple[ir.ColumnInfo, ...]
    #: The FROM clause's other tables, which a JOIN's ON cannot name (those after it, and
    #: those before the comma its item follows): MySQL's "unknown column" (1054), as for
    #: a column no table has.
    hidden: frozenset[str] = frozenset()
    #: The scalar subqueries (rivulet/plan/scalars.py) and the quantified comparisons with
    #: a subquery (rivulet/plan/quantified.py) whose values are joined to the row, to the
    #: column holding each (after the FROM items' columns).
    values: dict[exp.Expr, int] = field(default_factory=dict)

    def resolve(self, node: exp.Column) -> int:
        name = node.name.lower()
        qualifier = node.table.lower() if node.table else None
        if qualifier in self.hidden and not any(r.alias.lower() == qualifier
                                                for r in self.relations):
            raise error_at(node, f"unknown column {node.sql(dialect='mysql')!r} in ON: a "
                           "JOIN's ON names the tables of its comma-separated FROM item up "
                           "to itself (a comma binds less tightly than JOIN)",
                           UnknownColumnError)
        hits = []
        for rel in self.relations:
            if qualifier is not None and rel.alias.lower() != qualifier:
                continue
            for i, n in enumerate(rel.names):
                if n.lower() == name:
                    hits.append(rel.offset + i)
        if qualifier is not None and not any(r.alias.lower() == qualifier for r in self.relations):
            # (MySQL's 1054, unknown column 'x.id', not 1146: no table is looked up by it)
            raise error_at(node, f"unknown column {node.sql(dialect='mysql')!r}: no table "
                           f"{node.table!r} in this query", UnknownColumnError)
        if not hits:
            raise error_at(node, f"unknown column {node.sql(dialect='mysql')!r}",
                           UnknownColumnError)
        if len(hits) > 1:
            raise error_at(node, f"column {node.name!r} is ambiguous; qualify it with a table",
                           AmbiguousColumnError)
        return hits[0]

    def column(self, node: exp.Column) -> ir.Expr:
        i = self.resolve(node)
        return ir.Col(i, self.columns[i].name)

    def types(self) -> list[SqlType]:
        return [c.type for c in self.columns]

    def special(self, node: exp.Expr) -> ir.Expr | None:
        if is_aggregate(node):
            raise error_at(node, f"aggregate {node.sql(dialect='mysql')!r} is not allowed here",
                           AggregateMisuseError)
        if self.values and isinstance(node, _JOINED_VALUES) and node in self.values:
            index = self.values[node]
            return ir.Col(index, self.columns[index].name)
        return None

    def relation_of(self, index: int) -> Relation:
        for rel in self.relations:
            if rel.offset <= index < rel.offset + len(rel.names):
                return rel
        raise AssertionError(index)


@dataclass
class GroupedScope:
    """Resolves expressions over an aggregate's output: group keys and aggregate values."""

    inner: FromScope
    group_exprs: list[ir.Expr]  # over the FROM row
    aggregates: dict[exp.Expr, int] = field(default_factory=dict)  # node -> output column
    columns: tuple[ir.ColumnInfo, ...] = ()
    #: The subqueries' values joined to the groups, to their columns (see
    #: :attr:`FromScope.values`).
    values: dict[exp.Expr, int] = field(default_factory=dict)

    def special(self, node: exp.Expr) -> ir.Expr | None:
        if self.values and isinstance(node, _JOINED_VALUES) and node in self.values:
            index = self.values[node]
            return ir.Col(index, self.columns[index].name)
        if is_aggregate(node):
            return ir.Col(self.aggregates[node])
        if isinstance(node, (exp.Literal, exp.Null, exp.Boolean, exp.Placeholder)):
            return None
        try:
            inner = translate(node, self.inner)
        except SqlError:
            return None
        for i, g in enumerate(self.group_exprs):
            if g == inner:
                return ir.Col(i, self.columns[i].name if self.columns else "")
        return None

    def types(self) -> list[SqlType]:
        return [c.type for c in self.columns]

    def column(self, node: exp.Column) -> ir.Expr:
        raise error_at(
            node,
            f"column {node.sql(dialect='mysql')!r} is neither in GROUP BY nor inside an "
            "aggregate (ONLY_FULL_GROUP_BY)", NotGroupedError,
        )


class TableScope:
    """Resolves column names over one table's row: an UPDATE's or a DELETE's, a CHECK
    constraint's (qualified by the table's name or its alias, or not)."""

    def __init__(self, table: TableSchema, alias: str | None = None) -> None:
        self.table = table
        self.alias = (alias or table.name).lower()

    def column(self, node: exp.Column) -> ir.Col:
        if node.table and node.table.lower() not in (self.alias, self.table.name.lower()):
            raise error_at(node, f"unknown column {node.sql(dialect='mysql')!r}: no table "
                           f"{node.table!r} in this statement", UnknownColumnError)
        if not self.table.has_column(node.name):
            raise error_at(node, f"unknown column {node.name!r} in table {self.table.name!r}",
                           UnknownColumnError)
        i = self.table.position(node.name)
        return ir.Col(i, self.table.columns[i].name)

    def special(self, node: exp.Expr) -> ir.Expr | None:
        return None

    def types(self) -> list[SqlType]:
        return [column_type(c) for c in self.table.columns]
