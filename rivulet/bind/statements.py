"""Statements, checked against the catalog and bound to IR, ready for the engine to run.

Everything that can be wrong with a statement (syntax, unknown names, unsupported
constructs) is found here, before anything changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from sqlglot import exp

from rivulet.dataflow.checks import compiled
from rivulet.errors import SqlError, UnknownColumnError, UnknownTableError, ValueCountError
from rivulet.migrate.alter import SchemaChange, plan_alter, replace_conversions
from rivulet.migrate.copy import CopyPlan, plan_copy
from rivulet.plan import ir
from rivulet.plan.catalog import Catalog
from rivulet.plan.expressions import literal_value, translate
from rivulet.plan.params import conjuncts
from rivulet.plan.scope import TableScope as _TableScope
from rivulet.sql.ddl import table_schema
from rivulet.sql.parse import (
    DIALECT,
    Replace,
    error_at,
    parse_one,
    unsupported,
    view_query_text,
)
from rivulet.storage.upsert import OnDuplicate
from rivulet.values.schema import TableSchema
from rivulet.values.types import SqlType, column_type


@dataclass(frozen=True)
class CreateTable:
    schema: TableSchema
    sql: str
    #: ``IF NOT EXISTS``: a table or view of the name already there makes it do nothing
    #: (MySQL: a note, 1050).
    if_not_exists: bool = False


@dataclass(frozen=True)
class CreateView:
    name: str
    query: exp.Expr
    text: str  # the SELECT as written, blank-padded so that positions match the statement
    replace: bool = False

    @property
    def sql(self) -> str:
        return self.text.strip()


@dataclass(frozen=True)
class CreateTableAs:
    """``CREATE TABLE ... AS SELECT``: a table copied lazily (see rivulet/migrate/copy.py)."""

    plan: CopyPlan
    sql: str


@dataclass(frozen=True)
class AlterTable:
    """``ALTER TABLE``, planned against the table as it is now (see rivulet/migrate/alter.py)."""

    change: SchemaChange
    sql: str


@dataclass(frozen=True)
class Truncate:
    """``TRUNCATE [TABLE] t``: every row deleted as one write, AUTO_INCREMENT numbering
    started again at 1 (see ``Database.truncate``)."""

    table: str
    sql: str


@dataclass(frozen=True)
class Drop:
    """``DROP TABLE|VIEW [IF EXISTS] a[, b ...]``: all of them or, where one cannot be
    dropped, none."""

    kind: Literal["table", "view"]
    names: tuple[str, ...]
    if_exists: bool


@dataclass(frozen=True)
class Insert:
    table: TableSchema
    columns: tuple[int, ...]  # table positions the VALUES fill, in order
    rows: tuple[tuple[ir.Expr, ...], ...]  # constants and Params
    param_count: int
    #: The statement's text: bound again if its table changes before it commits.
    sql: str = ""
    #: What a row whose primary or UNIQUE key is taken does (rivulet/storage/upsert.py).
    on_duplicate: OnDuplicate = OnDuplicate.ERROR
    #: ON DUPLICATE KEY UPDATE's assignments, in order, over the row holding the key
    #: (columns 0..n-1) followed by the row the INSERT proposed (n..2n-1: ``VALUES(col)``,
    #: the row alias's columns).
    updates: tuple[tuple[int, ir.Expr], ...] = ()


@dataclass(frozen=True)
class Update:
    table: TableSchema
    assignments: tuple[tuple[int, ir.Expr], ...]  # over the old row, may read Params
    where: ir.Expr | None
    key_lookup: tuple[tuple[ir.Expr, ...], ...] | None  # primary keys the WHERE pins down
    param_count: int
    #: The statement's text: bound again if its table changes before it commits.
    sql: str = ""


@dataclass(frozen=True)
class Delete:
    table: TableSchema
    where: ir.Expr | None
    key_lookup: tuple[tuple[ir.Expr, ...], ...] | None
    param_count: int
    #: The statement's text: bound again if its table changes before it commits.
    sql: str = ""


@dataclass(frozen=True)
class Select:
    query: exp.Expr
    sql: str
    param_count: int


Statement = (
    CreateTable | CreateTableAs | CreateView | AlterTable | Drop | Truncate | Insert | Update
    | Delete | Select
)


def bind_text(text: str, catalog: Catalog) -> Statement:
    """Parse and bind one statement, as written."""
    return bind(parse_one(text), catalog, text)


def bind(node: exp.Expr, catalog: Catalog, text: str) -> Statement:
    sql = text.strip().rstrip(";").strip()
    if isinstance(node, exp.Create):
        kind = (node.args.get("kind") or "").upper()
        if kind == "TABLE":
            if node.args.get("expression") is not None:
                return CreateTableAs(plan_copy(catalog, node), sql)
            if node.find(exp.TemporaryProperty) is not None:
                raise unsupported(node, "CREATE TEMPORARY TABLE")
            return CreateTable(compiled(table_schema(node)), sql, bool(node.args.get("exists")))
        if kind == "VIEW":
            query_text = view_query_text(text)
            return CreateView(node.this.name, parse_one(query_text), query_text,
                              bool(node.args.get("replace")))
        if kind == "INDEX":
            return _alter(_create_index(node), catalog)
        raise unsupported(node, f"CREATE {kind}")
    if isinstance(node, exp.Alter):
        if (node.args.get("kind") or "").upper() != "TABLE":
            raise unsupported(node, f"ALTER {node.args.get('kind')}")
        return _alter(node, catalog, sql)
    if isinstance(node, exp.TruncateTable):
        tables = node.expressions
        if node.args.get("is_database") or len(tables) != 1 or not isinstance(
                tables[0], exp.Table):
            raise unsupported(node, "TRUNCATE (of one table)")
        return Truncate(catalog.require_table(tables[0].name).name, sql)
    if isinstance(node, exp.Drop):
        kind = (node.args.get("kind") or "").upper()
        if kind == "INDEX":
            return _alter(_drop_index(node), catalog)
        if kind not in ("TABLE", "VIEW"):
            raise unsupported(node, f"DROP {kind}")
        names = node.args.get("tables") or ([node.this] if node.this is not None else [])
        dropped: Literal["table", "view"] = "table" if kind == "TABLE" else "view"
        return Drop(dropped, tuple(n.name for n in names), bool(node.args.get("exists")))
    if isinstance(node, exp.Insert):
        return replace(_insert(node, catalog), sql=sql)
    if isinstance(node, exp.Update):
        return replace(_update(node, catalog), sql=sql)
    if isinstance(node, exp.Delete):
        return replace(_delete(node, catalog), sql=sql)
    if isinstance(node, (exp.Select, exp.Union)):
        count = sum(1 for _ in node.find_all(exp.Placeholder))
        return Select(node, sql, count)
    raise unsupported(node, "statement")


def _alter(node: exp.Alter, catalog: Catalog, sql: str | None = None) -> AlterTable:
    """ALTER TABLE planned; ``sql``: its text, else the statement rendered (what the
    program stores, for a ``CREATE INDEX`` or ``DROP INDEX`` made into one)."""
    # Checked against the table as if conversions under way were done: the engine
    # finishes them before it applies the change (Database.alter_table).
    table = replace_conversions(catalog.require_table(node.this.name))
    return AlterTable(plan_alter(table, node), sql or node.sql(dialect=DIALECT))


def _create_index(node: exp.Create) -> exp.Alter:
    """``CREATE [UNIQUE] INDEX name ON t (cols)`` as MySQL defines it: the same as
    ``ALTER TABLE t ADD [UNIQUE] INDEX name (cols)``, which is how it is planned and stored."""
    index = node.this
    params = index.args.get("params") if isinstance(index, exp.Index) else None
    table = index.args.get("table") if isinstance(index, exp.Index) else None
    if not isinstance(table, exp.Table) or params is None or not params.args.get("columns"):
        raise unsupported(node, "CREATE INDEX (it takes a name, ON a table and its columns)")
    extra = [k for k, v in params.args.items() if v and k not in ("columns", "with_storage")]
    if node.args.get("exists") or extra:
        raise unsupported(node, "CREATE INDEX with " + (
            "IF NOT EXISTS" if node.args.get("exists") else extra[0].upper()))
    if (node.args.get("kind_modifier") or node.args.get("concurrently")
            or index.args.get("primary")):
        raise unsupported(node, "CREATE INDEX")
    parts = [_key_part(p) for p in params.args["columns"]]
    name = index.this.copy()
    if node.args.get("unique"):
        key: exp.Expr = exp.UniqueColumnConstraint(
            this=exp.Schema(this=name, expressions=parts))
    else:
        key = exp.IndexColumnConstraint(this=name, expressions=parts)
    return exp.Alter(this=table, kind="TABLE", actions=[exp.AddConstraint(expressions=[key])])


def _key_part(part: exp.Expr) -> exp.Expr:
    """A column of ``CREATE INDEX`` as ``ALTER TABLE ... ADD INDEX`` reads it: without its
    direction (it changes no lookup), and a prefix ``a(10)``, which sqlglot reads here as
    a call, as a column prefix."""
    if isinstance(part, exp.Ordered):
        part = part.this
    if isinstance(part, exp.Anonymous) and len(part.expressions) == 1 and isinstance(
            part.expressions[0], exp.Literal):
        return exp.ColumnPrefix(this=exp.to_identifier(part.name),
                                expression=part.expressions[0])
    return part


def _drop_index(node: exp.Drop) -> exp.Alter:
    """``DROP INDEX name ON t``: the same as ``ALTER TABLE t DROP INDEX name``."""
    on = node.args.get("cluster")
    names = node.args.get("tables") or []
    if not isinstance(on, exp.OnProperty) or not isinstance(on.this, exp.Table) or len(
            names) != 1:
        raise unsupported(node, "DROP INDEX (it takes a name and ON a table)")
    action = exp.Drop(kind="INDEX", tables=[names[0]], exists=node.args.get("exists"))
    return exp.Alter(this=on.this, kind="TABLE", actions=[action])


# --------------------------------------------------------------------------- writes


class _Params:
    """Numbers the ``?`` of a write statement in the order translation meets them, which is
    the order they are written (SET before WHERE, left to right)."""

    def __init__(self) -> None:
        self.order: dict[int, int] = {}
        self.count = 0

    def __call__(self, placeholder: exp.Placeholder) -> ir.Expr:
        index = self.order.get(id(placeholder))
        if index is None:
            index = self.order[id(placeholder)] = self.count
            self.count += 1
        return ir.Param(index)


def _target(node: exp.Expr, catalog: Catalog) -> TableSchema:
    table = node if isinstance(node, exp.Table) else node.find(exp.Table)
    if table is None:
        raise unsupported(node, "statement without a table")
    schema = catalog.table(table.name)
    if schema is None:
        what = "a view, which is read-only" if catalog.view(table.name) else "not a table"
        raise error_at(table, f"cannot write to {table.name!r}: {what}")
    return schema


def _insert(node: exp.Insert, catalog: Catalog) -> Insert:
    for key in ("overwrite", "returning", "where", "alternative"):
        if node.args.get(key):
            raise unsupported(node, f"INSERT with {key.upper()}")
    replacing = isinstance(node, Replace)
    conflict = node.args.get("conflict")
    if replacing and (node.args.get("ignore") or conflict is not None):
        raise unsupported(node, "REPLACE with IGNORE or ON DUPLICATE KEY UPDATE")
    if node.args.get("ignore") and conflict is not None:
        raise unsupported(node, "INSERT IGNORE ... ON DUPLICATE KEY UPDATE")
    if conflict is not None and not (conflict.args.get("duplicate")
                                     and str(conflict.args.get("action")).upper() == "UPDATE"):
        raise unsupported(conflict, "ON CONFLICT")
    target = node.this
    schema = _target(target.this if isinstance(target, exp.Schema) else target, catalog)
    if isinstance(target, exp.Schema):
        columns = []
        for ident in target.expressions:
            if not schema.has_column(ident.name):
                raise error_at(ident, f"unknown column {ident.name!r} in table {schema.name!r}",
                               UnknownColumnError)
            columns.append(schema.position(ident.name))
        if len(set(columns)) != len(columns):
            raise error_at(target, "a column is named twice in the INSERT column list")
    else:
        columns = list(range(len(schema.columns)))
    values = node.expression
    if not isinstance(values, exp.Values):
        raise unsupported(values, "INSERT ... SELECT")
    params = _Params()
    rows = []
    for tup in values.expressions:
        items = tup.expressions if isinstance(tup, exp.Tuple) else [tup]
        if len(items) != len(columns):
            raise error_at(tup, f"INSERT row has {len(items)} values for {len(columns)} columns",
                           ValueCountError)
        rows.append(tuple(_value(v, params) for v in items))
    mode = (OnDuplicate.REPLACE if replacing else OnDuplicate.UPDATE if conflict is not None
            else OnDuplicate.IGNORE if node.args.get("ignore") else OnDuplicate.ERROR)
    updates: list[tuple[int, ir.Expr]] = []
    if conflict is not None:
        scope = _UpsertScope(schema, node.this, values.args.get("alias"))
        for eq in conflict.expressions:
            if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
                raise unsupported(eq, "assignment")
            column = scope.assigned(eq.this)
            updates.append((column, translate(eq.expression, scope, params)))
    return Insert(schema, tuple(columns), tuple(rows), params.count, on_duplicate=mode,
                  updates=tuple(updates))


class _UpsertScope:
    """Names in ON DUPLICATE KEY UPDATE: a column of the table is the row that holds the
    key; ``VALUES(col)``, and the row alias's columns (``AS new``: ``new.col``; ``AS
    new(a, b)``: ``a``, ``b``), the row the INSERT proposed (positions from n on)."""

    def __init__(self, table: TableSchema, target: exp.Expr, alias: exp.TableAlias | None):
        self.table = table
        self.width = len(table.columns)
        self.name = (target.this if isinstance(target, exp.Schema) else target).name.lower()
        self.alias = alias.name.lower() if alias is not None else None
        self.renamed: dict[str, int] = {}
        if alias is not None and alias.columns:
            if len(alias.columns) != self.width:
                raise error_at(alias, f"the row alias names {len(alias.columns)} columns, "
                               f"the table has {self.width}", ValueCountError)
            self.renamed = {c.name.lower(): i for i, c in enumerate(alias.columns)}

    def assigned(self, node: exp.Column) -> int:
        """The table position an assignment's target names."""
        if node.table and node.table.lower() != self.name:
            raise error_at(node, f"unknown column {node.sql(dialect=DIALECT)!r} in "
                           "ON DUPLICATE KEY UPDATE", UnknownColumnError)
        return self._position(node)

    def _position(self, node: exp.Column | exp.Identifier) -> int:
        if not self.table.has_column(node.name):
            raise error_at(node, f"unknown column {node.name!r} in table {self.table.name!r}",
                           UnknownColumnError)
        return self.table.position(node.name)

    def column(self, node: exp.Column) -> ir.Expr:
        qualifier = node.table.lower() if node.table else None
        if qualifier is not None and qualifier == self.alias:
            if self.renamed:
                if node.name.lower() not in self.renamed:
                    raise error_at(node, f"unknown column {node.sql(dialect=DIALECT)!r}",
                                   UnknownColumnError)
                i = self.renamed[node.name.lower()]
            else:
                i = self._position(node)
            return ir.Col(self.width + i, self.table.columns[i].name)
        if qualifier is not None and qualifier != self.name:
            raise error_at(node, f"unknown table {node.table!r} in "
                           f"{node.sql(dialect=DIALECT)!r}", UnknownTableError)
        if qualifier is None and not self.table.has_column(node.name) \
                and node.name.lower() in self.renamed:
            i = self.renamed[node.name.lower()]
            return ir.Col(self.width + i, self.table.columns[i].name)
        i = self._position(node)
        return ir.Col(i, self.table.columns[i].name)

    def special(self, node: exp.Expr) -> ir.Expr | None:
        if isinstance(node, exp.Anonymous) and node.name.upper() == "VALUES":
            args = node.expressions
            if len(args) != 1 or not isinstance(args[0], (exp.Identifier, exp.Column)):
                raise error_at(node, "VALUES() takes one column of the table")
            i = self._position(args[0])
            return ir.Col(self.width + i, self.table.columns[i].name)
        return None

    def types(self) -> list[SqlType]:
        own = [column_type(c) for c in self.table.columns]
        return own + own


def _value(node: exp.Expr, params: _Params) -> ir.Expr:
    if isinstance(node, exp.Placeholder):
        return params(node)
    try:
        return ir.Lit(literal_value(node))
    except SqlError:
        scope = _NoColumns()
        return translate(node, scope, params)


class _NoColumns:
    def column(self, node: exp.Column) -> ir.Expr:
        raise error_at(node, f"a column ({node.name!r}) cannot be used in VALUES")

    def special(self, node: exp.Expr) -> ir.Expr | None:
        return None

    def types(self) -> list[SqlType]:
        return []


def _update(node: exp.Update, catalog: Catalog) -> Update:
    if node.args.get("from") or node.args.get("from_") or node.args.get("joins") \
            or node.this.args.get("joins"):
        raise unsupported(node, "UPDATE with several tables")
    if node.args.get("order") or node.args.get("limit"):
        raise unsupported(node, "UPDATE ... ORDER BY/LIMIT")
    schema = _target(node.this, catalog)
    scope = _TableScope(schema, node.this.alias)
    params = _Params()
    assignments = []
    for eq in node.expressions:
        if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
            raise unsupported(eq, "assignment")
        column = scope.column(eq.this)
        assignments.append((column.index, translate(eq.expression, scope, params)))
    where = node.args.get("where")
    predicate = translate(where.this, scope, params) if where is not None else None
    keys = _key_lookup(where.this if where is not None else None, schema, scope, params)
    return Update(schema, tuple(assignments), predicate, keys, params.count)


def _delete(node: exp.Delete, catalog: Catalog) -> Delete:
    if node.args.get("using") or node.args.get("order") or node.args.get("limit"):
        raise unsupported(node, "DELETE with USING/ORDER BY/LIMIT")
    if node.args.get("tables") or node.this.args.get("joins"):
        raise unsupported(node, "DELETE with several tables")
    schema = _target(node.this, catalog)
    scope = _TableScope(schema, node.this.alias if isinstance(node.this, exp.Table) else None)
    params = _Params()
    where = node.args.get("where")
    predicate = translate(where.this, scope, params) if where is not None else None
    keys = _key_lookup(where.this if where is not None else None, schema, scope, params)
    return Delete(schema, predicate, keys, params.count)


def _key_lookup(
    where: exp.Expr | None, schema: TableSchema, scope: _TableScope, params: _Params
) -> tuple[tuple[ir.Expr, ...], ...] | None:
    """Primary keys a WHERE clause pins down (``pk = v`` or ``pk IN (...)``), if it does.

    The full predicate is still checked on each row found; this only avoids a scan.
    Placeholders were already numbered by the WHERE translation, so they resolve the same.
    """
    if where is None or not schema.primary_key:
        return None
    found: dict[int, list[ir.Expr]] = {}
    listed: dict[int, list[ir.Expr]] = {}  # (an `=` decides over an IN list, as in MySQL)
    for c in conjuncts(where):
        if isinstance(c, exp.EQ):
            col, value = ((c.this, c.expression) if isinstance(c.this, exp.Column)
                          else (c.expression, c.this))
            if isinstance(col, exp.Column) and not any(True for _ in value.find_all(exp.Column)):
                i = scope.column(col).index
                if i in schema.primary_key:
                    found[i] = [translate(value, scope, params)]
        elif isinstance(c, exp.In) and isinstance(c.this, exp.Column) and not c.args.get("query"):
            i = scope.column(c.this).index
            if i in schema.primary_key and not any(
                    True for e in c.expressions for _ in e.find_all(exp.Column)):
                listed[i] = [translate(e, scope, params) for e in c.expressions]
    found = {**listed, **found}
    if set(found) != set(schema.primary_key):
        return None
    keys: list[tuple[ir.Expr, ...]] = [()]
    for i in schema.primary_key:
        keys = [k + (v,) for k in keys for v in found[i]]
    return tuple(keys)



def insert_values(statement: Insert, params: tuple[Any, ...], evaluate: Any) -> list[list[Any]]:
    """The INSERT's rows in table column order (unlisted columns take their defaults)."""
    out = []
    width = len(statement.table.columns)
    for exprs in statement.rows:
        row: list[Any] = [c.default for c in statement.table.columns]
        for position, e in zip(statement.columns, exprs):
            row[position] = evaluate(e, params)
        out.append(row[:width])
    return out
