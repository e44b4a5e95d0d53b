"""``CREATE TABLE new AS SELECT ... FROM old``: a table split off another, copied lazily.

The new table holds, from the moment the statement returns, the SELECT's rows over the old
table *as it was then*; afterwards the two tables are independent. Copying is lazy and
keyed (BullFrog's keyed tracking, for splits and aggregations): the unit is a *key*, the
new table's primary key, made of old-table columns the SELECT passes through (the old
table's primary key, or the GROUP BY columns of an aggregation). A key is copied, in one
transaction with the mark that says so, when something first needs it:

* a read of the new table by that key (any other read copies the whole table first);
* a write to the new table under that key;
* a write to the old table touching that key: copied *before* the write, so the copy sees
  the old table as it was at the split (a key nobody wrote since is unchanged since);
* the background copier, which takes the keys left, a chunk at a time.

The rows of a key are computed by rivulet's own operators over the old table's rows of
that key, so the copy means exactly what the SELECT means everywhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from rivulet.errors import ParameterError
from rivulet.plan import ir
from rivulet.plan.catalog import Catalog
from rivulet.plan.planner import Planner
from rivulet.sql.parse import error_at, unsupported
from rivulet.values.schema import (
    BOOL,
    BYTES,
    DATE,
    DATETIME,
    DECIMAL,
    FLOAT,
    INT,
    INT_RANGES,
    STR,
    TIME,
    Column,
    TableSchema,
)

#: SQL type of a computed column of a copied table, by value kind.
_TYPES = {INT: "BIGINT", FLOAT: "DOUBLE", DECIMAL: "DECIMAL", STR: "TEXT", BOOL: "BOOLEAN",
          DATE: "DATE", DATETIME: "DATETIME(6)", BYTES: "BLOB", TIME: "TIME(6)"}


@dataclass(frozen=True)
class CopyPlan:
    """How the new table's rows come from the old one."""

    target: TableSchema
    source: str
    #: The SELECT, planned on the old table's version at the split.
    view: ir.ViewPlan
    #: Positions of the key in the old table's rows and in the new table's.
    source_key: tuple[int, ...]
    target_key: tuple[int, ...]

    @property
    def tracking(self) -> str:
        """The table of keys copied so far (gone once the copy is complete)."""
        return f"_rivulet_copied_{self.target.name}"

    def evaluate(self, rows: list[tuple]) -> list[tuple]:
        """The new table's rows computed from ``rows`` of the old table (all of the rows
        of some keys), by rivulet's own operators."""
        from rivulet.dataflow.builder import Builder
        from rivulet.dataflow.graph import Graph
        from rivulet.state.reader import KeyedReader

        graph = Graph(partial=False)
        graph.base_rows = lambda _table: [(r, 1) for r in rows]
        scan = next(n for n in ir.walk(self.view.root) if isinstance(n, ir.Scan))
        graph.add_base(self.source, scan.version)
        state = Builder(graph).build_view(self.view).state
        assert isinstance(state, KeyedReader)  # the view is keyed by the copy's key
        return [tuple(r) for key in list(state.entries) for r in state.get(key) or ()]

    def key_of_source(self) -> Callable[[tuple], Any]:
        key = self.source_key
        if len(key) == 1:
            return lambda row: row[key[0]]
        return lambda row: tuple(row[i] for i in key)


def plan_copy(catalog: Catalog, create: exp.Create) -> CopyPlan:
    """The plan of ``CREATE TABLE name AS SELECT ...``, or an error naming what is wrong."""
    name = create.this.name if not isinstance(create.this, exp.Schema) else ""
    if not name:
        raise unsupported(
            create, "CREATE TABLE ... (columns) AS SELECT (the SELECT names the columns)")
    select = create.args["expression"]
    if not isinstance(select, exp.Select):
        raise unsupported(select, "CREATE TABLE ... AS of anything but one SELECT")
    for clause in ("joins", "order", "limit", "offset", "distinct", "having"):
        if select.args.get(clause):
            raise unsupported(select.args[clause] if not isinstance(select.args[clause], list)
                              else select.args[clause][0],
                              f"{clause.upper()} in CREATE TABLE ... AS SELECT")
    tables = list(select.find_all(exp.Table))
    if len(tables) != 1:
        raise unsupported(select, "CREATE TABLE ... AS SELECT from other than one table")
    source = catalog.require_table(tables[0].name)
    if any(isinstance(p, exp.Placeholder) for p in select.find_all(exp.Placeholder)):
        raise error_at(select, "CREATE TABLE ... AS SELECT takes no ? parameters", ParameterError)
    view = Planner(catalog).plan_view(name, select, select.sql())
    passed = _passed_columns(select, source)  # output position -> source position
    group = select.args.get("group")
    if group is not None:
        positions = [_source_position(e, source) for e in group.expressions]
        if None in positions:
            raise unsupported(group, "GROUP BY other than columns in CREATE TABLE ... AS SELECT")
        key_sources = [p for p in positions if p is not None]  # every one of them
        why = "its GROUP BY columns"
    else:
        key_sources = list(source.primary_key)
        if not key_sources:
            raise error_at(select, f"table {source.name!r} has no primary key: CREATE TABLE ... "
                                   "AS SELECT copies it by key")
        why = f"the primary key of {source.name!r}"
    nullable = [source.columns[k].name for k in key_sources if source.columns[k].nullable]
    if nullable:
        raise error_at(select, f"column {nullable[0]!r} may be NULL: it cannot be part of the "
                               "key by which CREATE TABLE ... AS SELECT copies the table")
    outputs = {src: out for out, src in passed.items()}
    if any(k not in outputs for k in key_sources):
        raise error_at(select, f"CREATE TABLE ... AS SELECT must select {why} "
                               f"({', '.join(source.columns[k].name for k in key_sources)}): "
                               "the new table is copied by that key")
    target_key = tuple(outputs[k] for k in key_sources)
    columns = []
    for i, info in enumerate(view.root.columns[: view.visible]):
        if i in passed:
            column = replace(source.columns[passed[i]], name=info.name, default=None,
                             conversion=None)
        else:
            kind = info.kind or STR
            column = Column(info.name, kind, info.nullable, bounds=INT_RANGES["BIGINT"]
                            if kind == INT else None, sql_type=_TYPES[kind], fsp=6)
        columns.append(replace(column, nullable=False) if i in target_key else column)
    target = TableSchema(name, tuple(columns), target_key)
    return CopyPlan(target, source.name, view, tuple(key_sources), target_key)


def _passed_columns(select: exp.Select, source: TableSchema) -> dict[int, int]:
    """Output positions whose value is an old-table column as it is."""
    out = {}
    for i, item in enumerate(select.expressions):
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Star):
            raise unsupported(node, "* in CREATE TABLE ... AS SELECT (name the columns)")
        position = _source_position(node, source)
        if position is not None:
            out[i] = position
    return out


def _source_position(node: exp.Expr, source: TableSchema) -> int | None:
    if isinstance(node, exp.Column) and source.has_column(node.name):
        return source.position(node.name)
    return None

