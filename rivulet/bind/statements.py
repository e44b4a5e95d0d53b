"""Statements, checked against the catalog and bound to IR, ready for the engine to run.

Everything that can be wrong with a statement (syntax, unknown names, unsupported
constructs) is found here, before anything changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from sqlglot import exp

from rivulet.dataflow.checks import compiled
from rivulet.errors import (
    SqlError,
    SqlSyntaxError,
    UnknownColumnError,
    UnknownTableError,
    ValueCountError,
)
from rivulet.migrate.alter import SchemaChange, plan_alter, replace_conversions
from rivulet.migrate.copy import CopyPlan, plan_copy
from rivulet.plan import ir
from rivulet.plan.catalog import Catalog
from rivulet.plan.expressions import (
    literal_value,
    may_carry_fewer_places,
    pads_a_choice,
    translate,
    translate_condition,
)
from rivulet.plan.planner import Planner
from rivulet.plan.scope import FromScope, Relation
from rivulet.plan.scope import TableScope as _TableScope
from rivulet.plan.strict import strict_operands
from rivulet.sql import parse as sql_parse
from rivulet.sql.clock import clock_call
from rivulet.sql.ddl import table_schema
from rivulet.sql.parens import conjuncts
from rivulet.sql.parse import (
    DIALECT,
    CreateKeyIndex,
    Replace,
    error_at,
    parse_one,
    unsupported,
    view_query_text,
)
from rivulet.sql.rename import is_rename_table, rename_pairs
from rivulet.sql.schemas import SYSTEM_SCHEMAS
from rivulet.storage.upsert import OnDuplicate
from rivulet.values.schema import BYTES, STR, TableSchema
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
class RenameTables:
    """``RENAME TABLE a TO b[, c TO d ...]`` or ``ALTER TABLE a RENAME [TO] b``: each pair
    renamed in turn, all or none (rivulet/sql/rename.py)."""

    #: ``(old, new)`` catalog names, in the statement's order.
    pairs: tuple[tuple[str, str], ...]
    sql: str


@dataclass(frozen=True)
class CreateSchema:
    """``CREATE DATABASE|SCHEMA [IF NOT EXISTS] name`` (rivulet/sql/schemas.py)."""

    name: str
    sql: str
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropSchema:
    """``DROP DATABASE|SCHEMA [IF EXISTS] name``: its tables and views with it."""

    name: str
    if_exists: bool = False


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
    #: Whether it reads the clock (a time function, a column's ``DEFAULT
    #: CURRENT_TIMESTAMP``, an ``ON UPDATE CURRENT_TIMESTAMP`` its upsert may set): its
    #: instant is then bound after its ``?`` values (:class:`~rivulet.plan.ir.StatementTime`).
    reads_clock: bool = False


@dataclass(frozen=True)
class Limit:
    """``[ORDER BY ...] LIMIT n`` of a single-table UPDATE or DELETE: of the rows its WHERE
    matches, the first n in that order are written."""

    #: The ORDER BY keys (an expression over the row, and whether it is descending).
    order: tuple[tuple[ir.Expr, bool], ...]
    count: ir.Expr  # a constant or a Param


@dataclass(frozen=True)
class Update:
    table: TableSchema
    assignments: tuple[tuple[int, ir.Expr], ...]  # over the old row, may read Params
    where: ir.Expr | None
    key_lookup: tuple[tuple[ir.Expr, ...], ...] | None  # primary keys the WHERE pins down
    param_count: int
    #: The statement's text: bound again if its table changes before it commits.
    sql: str = ""
    limit: Limit | None = None
    #: Whether it reads the clock (a time function, an ``ON UPDATE CURRENT_TIMESTAMP``
    #: column): see :attr:`Insert.reads_clock`.
    reads_clock: bool = False


@dataclass(frozen=True)
class Delete:
    table: TableSchema
    where: ir.Expr | None
    key_lookup: tuple[tuple[ir.Expr, ...], ...] | None
    param_count: int
    #: The statement's text: bound again if its table changes before it commits.
    sql: str = ""
    limit: Limit | None = None
    #: Whether its WHERE reads the clock: see :attr:`Insert.reads_clock`.
    reads_clock: bool = False


@dataclass(frozen=True)
class JoinedTarget:
    """A table a multi-table UPDATE or DELETE writes, within the rows of its join."""

    table: TableSchema
    #: Where the table's columns start in a row of the join.
    offset: int
    #: The join-row position of a NOT NULL column of the table: NULL there is no row of it
    #: (the missing side of an outer join), which the statement does not write.
    present: int
    #: An UPDATE's assignments (table position, expression over the join's row): all read
    #: the row as it was before the statement, as MySQL's multi-table UPDATE does.
    assignments: tuple[tuple[int, ir.Expr], ...] = ()


@dataclass(frozen=True)
class JoinedWrite:
    """A multi-table UPDATE (``UPDATE a JOIN b ON ... SET``, ``UPDATE a, b SET ... WHERE``)
    or DELETE (``DELETE a[, b] FROM ...``, ``DELETE FROM a[, b] USING ...``).

    The rows it writes are those of :attr:`query`, a SELECT of every column of every table
    it names, over its join and WHERE, run at the statement's snapshot
    (rivulet/engine/joined.py); each target's rows it found are then written as a
    single-table write by key, all in one commit."""

    kind: Literal["update", "delete"]
    targets: tuple[JoinedTarget, ...]
    #: Every table the join reads, in the order of its columns in a row of the join.
    sources: tuple[TableSchema, ...]
    query: exp.Select
    #: The statement's ``?`` each ``?`` of :attr:`query` stands for, in ``query.dfs()`` order.
    query_params: tuple[int, ...]
    param_count: int
    sql: str = ""
    #: An UPDATE's WHERE over the join's rows, where it converts operands MySQL's strict
    #: mode checks (``b.s = 5``: a truncation fails the UPDATE, 1292): evaluated on every
    #: row of the join, in strict mode, instead of by :attr:`query`, which then has none.
    strict_where: ir.Expr | None = None

    @property
    def table(self) -> TableSchema:
        """The first table it writes (what a caller that keys writes by table sees)."""
        return self.targets[0].table


@dataclass(frozen=True)
class Select:
    query: exp.Expr
    sql: str
    param_count: int


Statement = (
    CreateTable | CreateTableAs | CreateView | AlterTable | Drop | Truncate | Insert | Update
    | Delete | JoinedWrite | Select | CreateSchema | DropSchema | RenameTables
)

#: The bound statements that write rows.
WRITES = (Insert, Update, Delete, JoinedWrite)


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
        if kind in ("DATABASE", "SCHEMA"):
            return _create_schema(node, sql)
        raise unsupported(node, f"CREATE {kind}")
    if isinstance(node, exp.Alter):
        if (node.args.get("kind") or "").upper() != "TABLE":
            raise unsupported(node, f"ALTER {node.args.get('kind')}")
        actions = node.args.get("actions") or []
        if len(actions) == 1 and isinstance(actions[0], exp.AlterRename):
            return RenameTables(((node.this.name, actions[0].this.name),), sql)
        return _alter(node, catalog, sql)
    if is_rename_table(node):
        assert isinstance(node, exp.Command)  # (how sqlglot reads RENAME TABLE)
        return RenameTables(rename_pairs(node), sql)
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
        if kind in ("DATABASE", "SCHEMA"):
            return DropSchema(_schema_name(node), bool(node.args.get("exists")))
        if kind not in ("TABLE", "VIEW"):
            raise unsupported(node, f"DROP {kind}")
        names = node.args.get("tables") or ([node.this] if node.this is not None else [])
        dropped: Literal["table", "view"] = "table" if kind == "TABLE" else "view"
        return Drop(dropped, tuple(n.name for n in names), bool(node.args.get("exists")))
    if isinstance(node, exp.Insert):
        return replace(_insert(node, catalog), sql=sql)
    if isinstance(node, (exp.Update, exp.Delete)) and node.args.get("returning"):
        # (it would run and answer a row count where the client asked for rows)
        raise unsupported(node, f"{type(node).__name__.upper()} with RETURNING")
    if isinstance(node, exp.Update):
        if node.this.args.get("joins"):
            return replace(_joined_update(node, catalog), sql=sql)
        return replace(_update(node, catalog), sql=sql)
    if isinstance(node, exp.Delete):
        if node.args.get("tables") or node.args.get("using") or node.this.args.get("joins"):
            return replace(_joined_delete(node, catalog), sql=sql)
        return replace(_delete(node, catalog), sql=sql)
    if isinstance(node, (exp.Select, exp.SetOperation)):
        count = sum(1 for _ in node.find_all(exp.Placeholder))
        return Select(node, sql, count)
    raise unsupported(node, "statement")


def _schema_name(node: exp.Create | exp.Drop) -> str:
    """The database ``CREATE|DROP DATABASE|SCHEMA`` names (sqlglot keeps it as a table's
    name, or as its database's)."""
    target = node.this if isinstance(node, exp.Create) else (node.args.get("tables") or [None])[0]
    if not isinstance(target, exp.Table) or len(node.args.get("tables") or [target]) != 1:
        raise unsupported(node, "a database statement (it names one database)")
    name = target.name or target.db
    if not name or (target.name and target.db):  # (``CREATE DATABASE a.b``: MySQL's 1064)
        raise unsupported(node, "a database statement (it names one database)")
    if name.lower() in SYSTEM_SCHEMAS:
        raise unsupported(node, f"changing the system database {name}")
    if "." in name or name != name.rstrip() or len(name) > 64:
        raise unsupported(node, f"the database name {name!r}")
    return name


#: The options of ``CREATE DATABASE`` taken: character set and collation, which a rivulet
#: database only reports (its text columns store Unicode text whatever is declared, as a
#: ``CREATE TABLE``'s table options are taken).
_SCHEMA_OPTIONS = (exp.CharacterSetProperty, exp.CollateProperty)


def _create_schema(node: exp.Create, sql: str) -> CreateSchema:
    properties = node.args.get("properties")
    for prop in properties.expressions if properties is not None else ():
        if not isinstance(prop, _SCHEMA_OPTIONS):
            raise unsupported(prop, "CREATE DATABASE option")
    if node.args.get("replace"):
        raise unsupported(node, "CREATE OR REPLACE DATABASE")
    return CreateSchema(_schema_name(node), sql, bool(node.args.get("exists")))


def _alter(node: exp.Alter, catalog: Catalog, sql: str | None = None) -> AlterTable:
    """ALTER TABLE planned; ``sql``: its text, else the statement rendered (what the
    program stores, for a ``CREATE INDEX`` or ``DROP INDEX`` made into one)."""
    # Checked against the table as if conversions under way were done: the engine
    # finishes them before it applies the change (Database.alter_table).
    table = replace_conversions(catalog.require_table(node.this.name))
    return AlterTable(plan_alter(table, node), sql or node.sql(dialect=DIALECT))


def _create_index(node: exp.Create) -> exp.Alter:
    """``CREATE [UNIQUE|FULLTEXT] INDEX name ON t (cols)`` as MySQL defines it: the same as
    ``ALTER TABLE t ADD [UNIQUE|FULLTEXT] INDEX name (cols)``, which is how it is planned
    and stored."""
    if isinstance(node, CreateKeyIndex):  # (FULLTEXT or SPATIAL: the key as ADD reads it)
        if node.args.get("exists"):
            raise unsupported(node, "CREATE INDEX with IF NOT EXISTS")
        return exp.Alter(this=node.args["table"], kind="TABLE",
                         actions=[exp.AddConstraint(expressions=[node.this.copy()])])
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
        rows.append(tuple(_text_write(schema, c, _value(v, params), v, ())
                          for c, v in zip(columns, items)))
    mode = (OnDuplicate.REPLACE if replacing else OnDuplicate.UPDATE if conflict is not None
            else OnDuplicate.IGNORE if node.args.get("ignore") else OnDuplicate.ERROR)
    updates: list[tuple[int, ir.Expr]] = []
    if conflict is not None:
        scope = _UpsertScope(schema, node.this, values.args.get("alias"))
        for eq in conflict.expressions:
            if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
                raise unsupported(eq, "assignment")
            column = scope.assigned(eq.this)
            updates.append((column, _text_write(
                schema, column, translate(eq.expression, scope, params), eq, scope.types())))
    unlisted = [c for i, c in enumerate(schema.columns) if i not in columns]
    reads = (any(ir.reads_clock(e) for row in rows for e in row)
             or any(ir.reads_clock(e) for _, e in updates)
             or any(c.default_now is not None for c in unlisted)
             or bool(updates and schema.clock_updates))
    return Insert(schema, tuple(columns), tuple(rows), params.count, on_duplicate=mode,
                  updates=tuple(updates), reads_clock=reads)


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


def _text_write(schema: TableSchema, position: int, value: ir.Expr, node: exp.Expr,
                input_types: Sequence[SqlType]) -> ir.Expr:
    """``value`` (over columns of ``input_types``), written to column ``position`` of
    ``schema``; refused where a text column would store other text than MySQL's: a DECIMAL
    chosen among values of other places (:func:`~rivulet.plan.expressions.pads_a_choice`)
    or one that may be a zero of other places
    (:func:`~rivulet.plan.expressions.may_carry_fewer_places`)."""
    if schema.columns[position].kind not in (STR, BYTES):
        return value
    if pads_a_choice(value):
        raise unsupported(node, "DECIMAL chosen among values of other places (CASE, IF, "
                                "COALESCE, ...) written to a text column (MySQL stores the "
                                "chosen value's own places; CAST it AS DECIMAL(m, d) or "
                                "AS CHAR)")
    if may_carry_fewer_places(value, input_types, lambda index: False):  # (stored columns)
        raise unsupported(node, "DECIMAL that may be a zero of other places (a MOD, a "
                                "difference, a sum or a product that can come to zero) "
                                "written to a text column (MySQL stores its value's own "
                                "places, '0' for 0 % 0.5 where the type shows '0.0'; CAST "
                                "it AS DECIMAL(m, d) or AS CHAR)")
    return value


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
    if node.args.get("from") or node.args.get("from_") or node.args.get("joins"):
        raise unsupported(node, "UPDATE ... FROM")
    schema = _target(node.this, catalog)
    scope = _TableScope(schema, node.this.alias)
    params = _Params()
    assignments = []
    for eq in node.expressions:
        if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
            raise unsupported(eq, "assignment")
        column = scope.column(eq.this)
        assignments.append((column.index, _text_write(
            schema, column.index, translate(eq.expression, scope, params), eq,
            scope.types())))
    where = node.args.get("where")
    predicate = translate(where.this, scope, params) if where is not None else None
    keys = _key_lookup(where.this if where is not None else None, schema, scope, params)
    limit = _limit(node, scope, params)
    reads = (any(ir.reads_clock(e) for _, e in assignments) or bool(schema.clock_updates)
             or _limit_reads_clock(predicate, limit))
    return Update(schema, tuple(assignments), predicate, keys, params.count, limit=limit,
                  reads_clock=reads)


def _delete(node: exp.Delete, catalog: Catalog) -> Delete:
    schema = _target(node.this, catalog)
    scope = _TableScope(schema, node.this.alias if isinstance(node.this, exp.Table) else None)
    params = _Params()
    where = node.args.get("where")
    predicate = translate(where.this, scope, params) if where is not None else None
    keys = _key_lookup(where.this if where is not None else None, schema, scope, params)
    limit = _limit(node, scope, params)
    return Delete(schema, predicate, keys, params.count, limit=limit,
                  reads_clock=_limit_reads_clock(predicate, limit))


def _limit_reads_clock(where: ir.Expr | None, limit: Limit | None) -> bool:
    """Whether an UPDATE's or DELETE's WHERE or ORDER BY ... LIMIT reads the clock."""
    exprs = ([] if where is None else [where]) + (
        [] if limit is None else [limit.count, *(e for e, _ in limit.order)])
    return any(ir.reads_clock(e) for e in exprs)


def _limit(node: exp.Expr, scope: _TableScope, params: _Params) -> Limit | None:
    """A single-table UPDATE's or DELETE's ``[ORDER BY ...] LIMIT n`` (an ORDER BY without
    LIMIT changes which rows are written in no way rivulet shows: it is left out)."""
    limit = node.args.get("limit")
    order = node.args.get("order")
    if limit is None:
        if order is not None:  # (still checked: unknown columns are errors)
            for item in order.expressions:
                translate(item.this if isinstance(item, exp.Ordered) else item, scope, params)
        return None
    keys = []
    for item in order.expressions if order is not None else []:
        ordered = item if isinstance(item, exp.Ordered) else exp.Ordered(this=item)
        keys.append((translate(ordered.this, scope, params), bool(ordered.args.get("desc"))))
    if limit.args.get("offset") is not None or not isinstance(limit, exp.Limit):
        raise unsupported(limit, "LIMIT with an offset")
    count = _value(limit.expression, params)
    if isinstance(count, ir.Lit) and (not isinstance(count.value, int) or count.value < 0):
        raise error_at(limit, "LIMIT takes a non-negative integer")
    return Limit(tuple(keys), count)


def _joined_update(node: exp.Update, catalog: Catalog) -> JoinedWrite:
    """``UPDATE a JOIN b ON ... SET a.x = b.y, b.z = 1 WHERE ...`` (or ``UPDATE a, b``):
    the tables assigned to are its targets."""
    if node.args.get("from") or node.args.get("from_") or node.args.get("joins"):
        raise unsupported(node, "UPDATE ... FROM")
    if node.args.get("order") or node.args.get("limit"):  # (MySQL refuses them too: 1221)
        raise unsupported(node, "UPDATE with several tables and ORDER BY/LIMIT")
    _refuse_joined_clock(node)
    node = node.copy()  # (its join and WHERE become the SELECT's)
    refs = _JoinScope(node.this, catalog)
    order = _placeholder_order(node)
    param = lambda p: ir.Param(order[id(p)])  # noqa: E731
    assigned: dict[int, list[tuple[int, ir.Expr]]] = {}
    for eq in node.expressions:
        if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
            raise unsupported(eq, "assignment")
        ref, position = refs.resolve(eq.this)
        assigned.setdefault(ref, []).append((position, _text_write(
            refs.refs[ref][1], position, translate(eq.expression, refs, param), eq,
            refs.types())))
    targets = [refs.target(ref, tuple(items)) for ref, items in sorted(assigned.items())]
    for target in targets:
        if target.table.clock_updates:
            raise unsupported(node, f"UPDATE with several tables of {target.table.name!r}, "
                                    "whose ON UPDATE CURRENT_TIMESTAMP column it would set")
    return refs.statement("update", targets, node, order)


def _refuse_joined_clock(node: exp.Expr) -> None:
    """A multi-table UPDATE or DELETE that calls a time function: refused by name (its
    join is a read planned at the statement, which has no instant to give it)."""
    for n in node.walk():
        call = clock_call(n)
        if call is not None:
            raise unsupported(n, f"{call.name}() in an UPDATE or DELETE of several tables")


def _joined_delete(node: exp.Delete, catalog: Catalog) -> JoinedWrite:
    """``DELETE a[, b] FROM <join> ...`` and ``DELETE FROM a[, b] USING <join> ...``: the
    tables named before FROM (or USING) are its targets, by their names in the join (an
    alias, if given: MySQL's rule)."""
    if node.args.get("order") or node.args.get("limit"):  # (MySQL refuses them too: 1221)
        raise unsupported(node, "DELETE with several tables and ORDER BY/LIMIT")
    _refuse_joined_clock(node)
    node = node.copy()  # (its join and WHERE become the SELECT's)
    order = _placeholder_order(node)
    using = node.args.get("using")
    if using:
        if len(using) != 1:  # (sqlglot reads ``USING a, b`` as a table with joins)
            raise unsupported(node, "DELETE ... USING")
        join, named = using[0], [node.this, *(j.this for j in node.this.args.get("joins") or [])]
    else:
        join, named = node.this, list(node.args.get("tables") or [])
    if not isinstance(join, exp.Expr):  # (sqlglot reads ``DELETE DELETE`` so)
        line, col = sql_parse.position(node)
        raise SqlSyntaxError(node.sql(dialect=DIALECT)[:40], line=line, col=col,
                             reason="DELETE names no table")
    refs = _JoinScope(join, catalog)
    targets = []
    for table in named:
        if not isinstance(table, exp.Table) or table.alias:
            raise unsupported(table, "DELETE target")
        targets.append(refs.target(refs.named(table.name, table), ()))
    return refs.statement("delete", targets, node, order)


def _placeholder_order(node: exp.Expr) -> dict[int, int]:
    """Each ``?`` of a statement by its number: the order it is written in (the syntax
    tree's depth-first order, which follows the text)."""
    marks = [n for n in node.find_all(exp.Placeholder, bfs=False)]
    return {id(mark): i for i, mark in enumerate(marks)}


class _JoinScope:
    """The tables a multi-table write joins (each a base table, by its name in the join:
    an alias if given), the names of its expressions resolved among them, and the SELECT
    that finds its rows: every column of every table, in order."""

    def __init__(self, join: exp.Expr, catalog: Catalog) -> None:
        if not isinstance(join, exp.Table):
            raise unsupported(join, "multi-table UPDATE/DELETE over a subquery")
        self.join = join
        self.catalog = catalog
        self.refs: list[tuple[str, TableSchema, int]] = []  # name in the join, table, offset
        offset = 0
        for item in [join, *(j.this for j in join.args.get("joins") or [])]:
            if not isinstance(item, exp.Table):
                raise unsupported(item, "multi-table UPDATE/DELETE over a subquery")
            schema = catalog.table(item.name)
            if schema is None:
                if catalog.view(item.name) is not None:
                    raise unsupported(item, "multi-table UPDATE/DELETE that reads a view")
                raise error_at(item, f"table {item.name!r} does not exist", UnknownTableError)
            name = (item.alias or item.name).lower()
            if any(name == n for n, _, _ in self.refs):
                raise error_at(item, f"Not unique table/alias: {name!r}")
            self.refs.append((name, schema, offset))
            offset += len(schema.columns)
        self.scope = FromScope(
            [Relation(name, list(schema.column_names), offset, schema)
             for name, schema, offset in self.refs],
            tuple(ir.ColumnInfo.of(c.name, column_type(c), c.nullable, c)
                  for _, schema, _ in self.refs for c in schema.columns))

    def named(self, name: str, node: exp.Expr) -> int:
        for i, (n, _, _) in enumerate(self.refs):
            if n == name.lower():
                return i
        raise error_at(node, f"Unknown table {name!r} in multi-table UPDATE/DELETE",
                       UnknownTableError)

    def resolve(self, node: exp.Column) -> tuple[int, int]:
        """The table (its index in the join) and the position in it a column names."""
        index = self.scope.resolve(node)
        relation = self.scope.relation_of(index)
        return self.scope.relations.index(relation), index - relation.offset

    def column(self, node: exp.Column) -> ir.Expr:
        return self.scope.column(node)

    def special(self, node: exp.Expr) -> ir.Expr | None:
        return self.scope.special(node)

    def types(self) -> list[SqlType]:
        return self.scope.types()

    def target(self, ref: int, assignments: tuple[tuple[int, ir.Expr], ...]) -> JoinedTarget:
        _, schema, offset = self.refs[ref]
        present = next((i for i, c in enumerate(schema.columns) if not c.nullable), None)
        if present is None:
            raise unsupported(self.join, f"multi-table UPDATE/DELETE of {schema.name!r}, "
                              "a table without a NOT NULL column")
        return JoinedTarget(schema, offset, offset + present, assignments)

    def _into_joins(self, joins: list[exp.Join], where: exp.Expr,
                    strict: dict[int, int] | None) -> exp.Expr | None:
        """``UPDATE a, b ... WHERE a.id = b.a_id``: a join written with a comma (or without
        ON) takes the WHERE's conditions on its table and those before it as its ON (the
        same rows: an inner join's ON filters as a WHERE does, and a condition on the
        tables before a join filters the same before it as after), so that the planner sees
        the join it answers; the WHERE keeps the rest (and the conditions with a ``?``,
        which the planner takes in a WHERE only). ``strict``: the WHERE is evaluated in strict
        mode (:meth:`_strict`, the ``?`` numbered so), so a condition whose operands it
        converts stays out of the joins, which would drop the rows it fails on first."""
        bare = {i + 1 for i, j in enumerate(joins)
                if j.args.get("on") is None and not j.args.get("using") and not j.side}
        if not bare:
            return where
        kept: list[exp.Expr] = []
        for condition in conjuncts(where):
            columns = list(condition.find_all(exp.Column))
            last = max((self.resolve(c)[0] for c in columns), default=0)
            if last in bare and not condition.find(exp.Select, exp.Subquery, exp.Placeholder) \
                    and (strict is None or self._strict(condition, strict) is None):
                join = joins[last - 1]
                on = join.args.get("on")
                join.set("on", condition if on is None else exp.and_(on, condition, copy=False))
            else:
                kept.append(condition)
        return exp.and_(*kept, copy=False) if kept else None

    def statement(self, kind: Literal["update", "delete"], targets: list[JoinedTarget],
                  node: exp.Expr, order: dict[int, int]) -> JoinedWrite:
        """The write, its SELECT made of the join and the WHERE of ``node`` (which it takes
        over: ``node`` is the caller's copy, whose ``?`` ``order`` numbers)."""
        written = [t.table.name.lower() for t in targets]
        if len(set(written)) != len(written):
            raise unsupported(node, "multi-table UPDATE/DELETE that writes a table under two "
                              "names")
        columns = [(name, c.name) for name, schema, _ in self.refs for c in schema.columns]
        items = [exp.alias_(exp.column(c, table=name, quoted=True), f"c{i}", quoted=True)
                 for i, (name, c) in enumerate(columns)]
        join = self.join
        joins = join.args.get("joins") or []
        join.set("joins", None)
        query = exp.Select(expressions=items).from_(join, copy=False)
        for j in joins:
            query.append("joins", j)
        where = node.args.get("where")
        strict = None if where is None or kind == "delete" else self._strict(where.this, order)
        if where is not None:
            rest = self._into_joins(joins, where.this, order if strict is not None else None)
            if rest is not None and strict is None:
                query.set("where", exp.Where(this=rest))
        for j in joins:
            on = j.args.get("on")
            if on is None or not any(
                    isinstance(c, exp.EQ) and isinstance(c.this, exp.Column)
                    and isinstance(c.expression, exp.Column)
                    and not (c.this.table and c.this.table.lower() == c.expression.table.lower())
                    for c in conjuncts(on)):
                # (the planner takes such a join in a SELECT: not yet for a write's rows)
                raise unsupported(j, "multi-table UPDATE/DELETE over a join with no equality "
                                  "between its two sides (a cross join)")
        marks = [n for n in query.dfs() if isinstance(n, exp.Placeholder)]
        planned = query.copy()  # planned now, so that what the planner refuses fails here
        Planner(self.catalog, bound={id(n): None for n in planned.dfs()
                                     if isinstance(n, exp.Placeholder)}).plan_view("", planned)
        return JoinedWrite(kind, tuple(targets), tuple(s for _, s, _ in self.refs), query,
                           tuple(order[id(m)] for m in marks), len(order), strict_where=strict)

    def _strict(self, where: exp.Expr, order: dict[int, int]) -> ir.Expr | None:
        """An UPDATE's WHERE with the operands MySQL's strict mode converts made explicit, if
        it has any (a condition rivulet translates only as a query, a subquery's, is
        evaluated by the query: as a SELECT's, where a truncation only warns)."""
        try:
            condition = translate_condition(where, self, lambda p: ir.Param(order[id(p)]))
        except SqlError:
            return None
        strict = strict_operands(condition, self.types())
        return None if strict == condition else strict


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
    """The INSERT's rows in table column order (unlisted columns take their defaults: a
    ``DEFAULT CURRENT_TIMESTAMP`` the statement's instant, the last of ``params``)."""
    out = []
    width = len(statement.table.columns)
    at = params[-1] if statement.reads_clock else None
    listed = set(statement.columns)
    defaults = [None if i in listed else c.default_at(at)
                for i, c in enumerate(statement.table.columns)]
    for exprs in statement.rows:
        row: list[Any] = list(defaults)
        for position, e in zip(statement.columns, exprs):
            row[position] = evaluate(e, params)
        out.append(row[:width])
    return out
