"""``information_schema``: the catalog as MySQL 8's tables of it, queried with rivulet's SQL.

ORMs reflect a database by querying ``information_schema`` (Django's introspection:
``TABLES``, ``COLUMNS``, ``KEY_COLUMN_USAGE`` joined with ``TABLE_CONSTRAINTS``, ...), with
``WHERE table_schema = DATABASE()``, joins, ``CASE``, ``LIKE`` and ``ORDER BY``. Rather than
recognise each ORM's queries, the tables are real tables of a private, throw-away rivulet
database: at each query their rows are made from the catalog as it is then (and written
only if they changed), and the query runs there as any ad-hoc query does, with rivulet's
MySQL semantics, through the server's statement machinery (its literals become the
parameters of a view). So any query over these tables that rivulet can answer is answered.

What a query may not do: name a table of the program beside ``information_schema`` ones
(1235), or name an ``information_schema`` table not made here (those stay mysql-mimic's).
``FROM a, b WHERE a.x = b.y`` (the comma join of Django's constraint query) is read as
``a JOIN b ON a.x = b.y``, the same inner join. ``DATABASE()`` and ``SCHEMA()`` are the
session's database. The rows are MySQL 8's (rivulet says it is MySQL 8): a default is its
text unquoted, a column type has no display width. Sizes, row counts and times are not
kept (NULL). Text compares by code point, as all of rivulet's (MySQL compares most of
these columns case-insensitively; ORMs send names as they are). ``SHOW [FULL] TABLES |
COLUMNS ... WHERE`` is the query of these tables its WHERE stands for (:func:`show_where`).

FOREIGN KEY and CHECK constraints: :func:`foreign_key_rows` and :func:`check_rows` are where
their rows come from.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from rivulet.errors import UnknownColumnError, UnknownObjectError, UnsupportedSqlError
from rivulet.plan.ir import is_adhoc
from rivulet.server.mysql import normalize
from rivulet.server.mysql.session import (
    CHARSET,
    COLLATION,
    PRIVILEGES,
    _key_text,
    _type_text,
    collation_of,
    default_shown,
    extra_shown,
    show_index,
    view_column_type,
)
from rivulet.server.mysql.statements import Handler, StatementCache
from rivulet.sql.ddl import check_condition
from rivulet.sql.parens import conjuncts
from rivulet.sql.parse import DIALECT, parse_one
from rivulet.sql.schemas import catalog_name, split_name
from rivulet.values.schema import BOOL, BYTES, DATETIME, DECIMAL, ENUM, FLOAT, INT, STR, TIME
from rivulet.values.schema import Column as SchemaColumn

if TYPE_CHECKING:
    from rivulet.engine.database import Database
    from rivulet.plan.catalog import Catalog
    from rivulet.values.schema import TableSchema

SCHEMA_NAME = "information_schema"
_CATALOG = "def"

_NAME = "VARCHAR(64)"
_CATALOG_NAME = "VARCHAR(512)"
_COUNT = "BIGINT UNSIGNED"

#: The tables made here, each with MySQL 8's columns (in its order, names upper case as
#: MySQL 8 names them): column -> type in the private database.
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "SCHEMATA": (
        ("CATALOG_NAME", _CATALOG_NAME), ("SCHEMA_NAME", _NAME),
        ("DEFAULT_CHARACTER_SET_NAME", "VARCHAR(32)"), ("DEFAULT_COLLATION_NAME", _NAME),
        ("SQL_PATH", _CATALOG_NAME), ("DEFAULT_ENCRYPTION", "VARCHAR(3)"),
    ),
    "TABLES": (
        ("TABLE_CATALOG", _CATALOG_NAME), ("TABLE_SCHEMA", _NAME), ("TABLE_NAME", _NAME),
        ("TABLE_TYPE", _NAME), ("ENGINE", _NAME), ("VERSION", _COUNT),
        ("ROW_FORMAT", "VARCHAR(10)"), ("TABLE_ROWS", _COUNT), ("AVG_ROW_LENGTH", _COUNT),
        ("DATA_LENGTH", _COUNT), ("MAX_DATA_LENGTH", _COUNT), ("INDEX_LENGTH", _COUNT),
        ("DATA_FREE", _COUNT), ("AUTO_INCREMENT", _COUNT), ("CREATE_TIME", "DATETIME"),
        ("UPDATE_TIME", "DATETIME"), ("CHECK_TIME", "DATETIME"), ("TABLE_COLLATION", _NAME),
        ("CHECKSUM", _COUNT), ("CREATE_OPTIONS", "VARCHAR(2048)"),
        ("TABLE_COMMENT", "VARCHAR(2048)"),
    ),
    "COLUMNS": (
        ("TABLE_CATALOG", _CATALOG_NAME), ("TABLE_SCHEMA", _NAME), ("TABLE_NAME", _NAME),
        ("COLUMN_NAME", _NAME), ("ORDINAL_POSITION", _COUNT), ("COLUMN_DEFAULT", "LONGTEXT"),
        ("IS_NULLABLE", "VARCHAR(3)"), ("DATA_TYPE", _NAME),
        ("CHARACTER_MAXIMUM_LENGTH", _COUNT), ("CHARACTER_OCTET_LENGTH", _COUNT),
        ("NUMERIC_PRECISION", _COUNT), ("NUMERIC_SCALE", _COUNT),
        ("DATETIME_PRECISION", _COUNT), ("CHARACTER_SET_NAME", "VARCHAR(32)"),
        ("COLLATION_NAME", _NAME), ("COLUMN_TYPE", "LONGTEXT"), ("COLUMN_KEY", "VARCHAR(3)"),
        ("EXTRA", "VARCHAR(80)"), ("PRIVILEGES", "VARCHAR(80)"),
        ("COLUMN_COMMENT", "VARCHAR(1024)"), ("GENERATION_EXPRESSION", "LONGTEXT"),
        ("SRS_ID", _COUNT),
    ),
    "STATISTICS": (
        ("TABLE_CATALOG", _CATALOG_NAME), ("TABLE_SCHEMA", _NAME), ("TABLE_NAME", _NAME),
        ("NON_UNIQUE", "INT"), ("INDEX_SCHEMA", _NAME), ("INDEX_NAME", _NAME),
        ("SEQ_IN_INDEX", _COUNT), ("COLUMN_NAME", _NAME), ("COLLATION", "VARCHAR(1)"),
        ("CARDINALITY", "BIGINT"), ("SUB_PART", "BIGINT"), ("PACKED", "VARCHAR(10)"),
        ("NULLABLE", "VARCHAR(3)"), ("INDEX_TYPE", "VARCHAR(16)"), ("COMMENT", "VARCHAR(8)"),
        ("INDEX_COMMENT", "VARCHAR(2048)"), ("IS_VISIBLE", "VARCHAR(3)"),
        ("EXPRESSION", "LONGTEXT"),
    ),
    "TABLE_CONSTRAINTS": (
        ("CONSTRAINT_CATALOG", _CATALOG_NAME), ("CONSTRAINT_SCHEMA", _NAME),
        ("CONSTRAINT_NAME", _NAME), ("TABLE_SCHEMA", _NAME), ("TABLE_NAME", _NAME),
        ("CONSTRAINT_TYPE", "VARCHAR(11)"), ("ENFORCED", "VARCHAR(3)"),
    ),
    "KEY_COLUMN_USAGE": (
        ("CONSTRAINT_CATALOG", _CATALOG_NAME), ("CONSTRAINT_SCHEMA", _NAME),
        ("CONSTRAINT_NAME", _NAME), ("TABLE_CATALOG", _CATALOG_NAME), ("TABLE_SCHEMA", _NAME),
        ("TABLE_NAME", _NAME), ("COLUMN_NAME", _NAME), ("ORDINAL_POSITION", _COUNT),
        ("POSITION_IN_UNIQUE_CONSTRAINT", _COUNT), ("REFERENCED_TABLE_SCHEMA", _NAME),
        ("REFERENCED_TABLE_NAME", _NAME), ("REFERENCED_COLUMN_NAME", _NAME),
    ),
    "REFERENTIAL_CONSTRAINTS": (
        ("CONSTRAINT_CATALOG", _CATALOG_NAME), ("CONSTRAINT_SCHEMA", _NAME),
        ("CONSTRAINT_NAME", _NAME), ("UNIQUE_CONSTRAINT_CATALOG", _CATALOG_NAME),
        ("UNIQUE_CONSTRAINT_SCHEMA", _NAME), ("UNIQUE_CONSTRAINT_NAME", _NAME),
        ("MATCH_OPTION", "VARCHAR(7)"), ("UPDATE_RULE", "VARCHAR(11)"),
        ("DELETE_RULE", "VARCHAR(11)"), ("TABLE_NAME", _NAME),
        ("REFERENCED_TABLE_NAME", _NAME),
    ),
    "CHECK_CONSTRAINTS": (
        ("CONSTRAINT_CATALOG", _CATALOG_NAME), ("CONSTRAINT_SCHEMA", _NAME),
        ("CONSTRAINT_NAME", _NAME), ("CHECK_CLAUSE", "LONGTEXT"),
    ),
}


def reads_information_schema(node: exp.Expr) -> bool:
    """Whether a query reads tables made here only (then :class:`InformationSchema`
    answers it); one that also names a table of the program is refused."""
    tables = list(node.find_all(exp.Table))
    ours = [t for t in tables if t.db.lower() == SCHEMA_NAME and t.name.upper() in TABLES]
    if not ours or len(ours) != len([t for t in tables if t.db.lower() == SCHEMA_NAME]):
        return False
    if len(ours) != len(tables):
        raise UnsupportedSqlError("a query of information_schema with a table of the "
                                  "database (query them apart)")
    return True


# --------------------------------------------------------------------------- rows


def catalog_rows(catalog: Catalog) -> dict[str, list[tuple]]:
    """Every table's rows, from the catalog as it is now: each table and view under its
    database (rivulet/sql/schemas.py)."""
    # (list() copies each dict at once: DDL of other connections may change it meanwhile)
    tables = sorted(list(catalog.tables.values()), key=lambda t: t.name)
    views = sorted((p for p in list(catalog.views.values()) if not is_adhoc(p.name)),
                   key=lambda p: p.name)
    by_name = {t.name.lower(): t for t in tables}
    rows: dict[str, list[tuple]] = {name: [] for name in TABLES}
    rows["SCHEMATA"] = [(_CATALOG, name, CHARSET, COLLATION, None, "NO")
                        for name in (SCHEMA_NAME, *catalog.schema_names())]
    for schema in tables:
        database, name = _placed(catalog, schema.name)
        rows["TABLES"].append((_CATALOG, database, name, "BASE TABLE", "rivulet", 10,
                               "Dynamic", None, None, None, None, None, None, None, None,
                               None, None, COLLATION, None, "", schema.comment))
        for i, column in enumerate(schema.columns):
            rows["COLUMNS"].append(_column_row(database, name, i, column,
                                               _key_text(schema, i)))
        index_rows, _ = show_index(schema)
        for r in index_rows:
            rows["STATISTICS"].append((_CATALOG, database, name, r[1], database, *r[2:]))
        for key_name, kind, positions in _constraints(schema):
            rows["TABLE_CONSTRAINTS"].append((_CATALOG, database, key_name, database, name,
                                              kind, "YES"))
            for seq, i in enumerate(positions, 1):
                rows["KEY_COLUMN_USAGE"].append((
                    _CATALOG, database, key_name, _CATALOG, database, name,
                    schema.columns[i].name, seq, None, None, None, None))
        for more in (foreign_key_rows(catalog, schema, by_name),
                     check_rows(schema, database, name)):
            for table, extra in more.items():
                rows[table].extend(extra)
    for plan in views:
        database, name = _placed(catalog, plan.name)
        rows["TABLES"].append((_CATALOG, database, name, "VIEW", None, None, None, None,
                               None, None, None, None, None, None, None, None, None, None,
                               None, None, "VIEW"))
        for i, c in enumerate(plan.root.columns[: plan.visible]):
            rows["COLUMNS"].append(_column_row(database, name, i, _view_column(c), ""))
    # A view whose tables are gone is listed, without columns (as MySQL lists it, with a
    # warning 1356 for each).
    for broken in sorted(list(catalog.broken.values()), key=lambda b: b.name):
        database, name = _placed(catalog, broken.name)
        rows["TABLES"].append((_CATALOG, database, name, "VIEW", None, None, None, None,
                               None, None, None, None, None, None, None, None, None, None,
                               None, None, "VIEW"))
    return rows


def _placed(catalog: Catalog, name: str) -> tuple[str, str]:
    """The database (as it was created) and bare name of a catalog name."""
    database, bare = split_name(name)
    return catalog.schemas.get(database.lower(), database), bare


def _view_column(out: Any) -> SchemaColumn:
    """A view's output column (``ir.ColumnInfo``) as a column: its table column's
    declaration where it passes one on unchanged, else its kind's type (see
    :func:`view_column_type`); no default, comment or AUTO_INCREMENT of its own."""
    if out.column is not None:
        return replace(out.column, name=out.name, nullable=out.nullable, default=None,
                       auto_increment=False, comment="")
    return SchemaColumn(out.name, out.kind or STR, out.nullable, sql_type=view_column_type(out),
                        scale=out.scale if out.kind == DECIMAL else None,
                        precision=out.digits + out.scale if out.kind == DECIMAL else None,
                        fsp=out.frac)


def _constraints(schema: TableSchema) -> Iterator[tuple[str, str, tuple[int, ...]]]:
    """The PRIMARY KEY and UNIQUE constraints: name, type, column positions."""
    if schema.primary_key:
        yield "PRIMARY", "PRIMARY KEY", schema.primary_key
    for key in schema.keys:
        if key.unique:
            yield key.name, "UNIQUE", key.columns


def foreign_key_rows(catalog: Catalog, schema: TableSchema,
                     tables: dict[str, TableSchema]) -> dict[str, list[tuple]]:
    """The rows a table's FOREIGN KEY constraints add, by information_schema table:
    TABLE_CONSTRAINTS (type 'FOREIGN KEY'), KEY_COLUMN_USAGE (with the REFERENCED_*
    columns and POSITION_IN_UNIQUE_CONSTRAINT) and REFERENTIAL_CONSTRAINTS (MATCH_OPTION
    'NONE', the UPDATE_RULE and DELETE_RULE, the parent's key the columns reference):
    Django's get_relations and get_constraints read them here."""
    if not schema.foreign_keys:
        return {}
    database, name = _placed(catalog, schema.name)
    rows: dict[str, list[tuple]] = {"TABLE_CONSTRAINTS": [], "KEY_COLUMN_USAGE": [],
                                    "REFERENTIAL_CONSTRAINTS": []}
    for fk in schema.foreign_keys:
        parent_db, parent = _placed(catalog, fk.parent)
        rows["TABLE_CONSTRAINTS"].append((_CATALOG, database, fk.name, database, name,
                                          "FOREIGN KEY", "YES"))
        for seq, (i, parent_column) in enumerate(zip(fk.columns, fk.parent_columns), 1):
            rows["KEY_COLUMN_USAGE"].append((
                _CATALOG, database, fk.name, _CATALOG, database, name,
                schema.columns[i].name, seq, seq, parent_db, parent, parent_column))
        rows["REFERENTIAL_CONSTRAINTS"].append((
            _CATALOG, database, fk.name, _CATALOG, parent_db,
            _referenced_key(tables.get(fk.parent.lower()), fk.parent_columns), "NONE",
            fk.on_update.value, fk.on_delete.value, name, parent))
    return rows


def _referenced_key(parent: TableSchema | None, columns: tuple[str, ...]) -> str | None:
    """The name of the parent's key a FOREIGN KEY's columns are (PRIMARY, or a lookup
    key's: never a FULLTEXT one)."""
    if parent is None:  # (made with foreign_key_checks = 0 before its parent)
        return None
    names = [c.lower() for c in columns]

    def of(positions: tuple[int, ...]) -> list[str]:
        return [parent.columns[i].name.lower() for i in positions]

    if parent.primary_key and of(parent.primary_key)[:len(names)] == names:
        return "PRIMARY"
    return next((k.name for k in parent.keys
                 if k.lookup and of(k.columns)[:len(names)] == names), None)


def check_rows(schema: TableSchema, database: str, name: str) -> dict[str, list[tuple]]:
    """The rows a table's CHECK constraints add, by information_schema table:
    TABLE_CONSTRAINTS (type 'CHECK') and CHECK_CONSTRAINTS (the clause as SHOW CREATE
    TABLE prints it inside its parentheses; MariaDB prints its own rendering, MySQL 8 one
    with every operand in parentheses: the ORMs read the names)."""
    if not schema.checks:
        return {}
    clauses = [check_condition(c).sql(dialect=DIALECT, identify=True) for c in schema.checks]
    return {
        "TABLE_CONSTRAINTS": [(_CATALOG, database, c.name, database, name, "CHECK",
                               "YES") for c in schema.checks],
        "CHECK_CONSTRAINTS": [(_CATALOG, database, c.name, clause)
                              for c, clause in zip(schema.checks, clauses)],
    }


#: Integer types' digits (information_schema.COLUMNS.NUMERIC_PRECISION), signed and not.
_INT_DIGITS = {"tinyint": (3, 3), "smallint": (5, 5), "mediumint": (7, 8), "int": (10, 10),
               "integer": (10, 10), "bigint": (19, 20)}
#: Character lengths of the TEXT types (their byte limits: MySQL reports those).
_TEXT_LENGTHS = {"tinytext": 255, "text": 65535, "mediumtext": 16777215,
                 "longtext": 4294967295, "tinyblob": 255, "blob": 65535,
                 "mediumblob": 16777215, "longblob": 4294967295}


def _column_row(database: str, table: str, i: int, c: SchemaColumn, key: str) -> tuple:
    column_type = _type_text(c.sql_type or c.kind)
    data_type = re.split(r"[ (]", column_type, maxsplit=1)[0]
    char_length = octets = precision = scale = fsp = None
    if c.kind in (STR, ENUM, BYTES):
        if data_type in _TEXT_LENGTHS:
            char_length = _TEXT_LENGTHS[data_type]
            octets = char_length
        elif c.kind == ENUM:
            char_length = max(len(m) for m in c.members)
            octets = 4 * char_length
        elif c.length is not None:
            char_length = c.length
            octets = c.length * (1 if c.kind == BYTES else 4)
    elif c.kind in (INT, BOOL):
        signed, unsigned = _INT_DIGITS.get(data_type, (19, 20))
        precision, scale = (unsigned if "unsigned" in column_type else signed), 0
    elif c.kind == DECIMAL:
        precision, scale = c.precision, c.scale
    elif c.kind == FLOAT:
        precision = 12 if c.single else 22
    elif c.kind in (TIME, DATETIME):
        fsp = c.fsp
    textual = collation_of(c.kind) is not None
    default = default_shown(c)  # (as DESCRIBE shows it)
    return (_CATALOG, database, table, c.name, i + 1, default, "YES" if c.nullable else "NO",
            data_type, char_length, octets, precision, scale, fsp,
            CHARSET if textual else None, collation_of(c.kind), column_type, key,
            extra_shown(c), PRIVILEGES, c.comment, "", None)


# --------------------------------------------------------------------------- queries


class InformationSchema:
    """The private database the tables live in, made on first use, and the statement
    cache of the queries asked of it. One per server; safe to use from many threads
    (queries are answered one at a time: each first brings the rows up to date)."""

    def __init__(self) -> None:
        self._db: Database | None = None
        self._dir: str | None = None
        self._cache: StatementCache | None = None
        self._loaded: dict[str, list[tuple]] = {}
        self._lock = threading.Lock()

    def answer(self, catalog: Catalog, sql: str, database: str) -> tuple[Handler, list]:
        """The handler (its view, for the result's columns) and rows of a query of
        information_schema (see :func:`reads_information_schema`)."""
        text = _rewritten(parse_one(sql), database)
        split = normalize.split(text)
        with self._lock:
            cache = self._open()
            self._refresh(catalog_rows(catalog))
            handler = cache.handler(split, text)
            assert handler.view is not None  # a SELECT's handler reads a view
            rows = handler.view.lookup(*handler.args(split.values))
        return handler, rows

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = self._cache = None
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None

    def _open(self) -> StatementCache:
        if self._cache is not None:
            return self._cache
        import rivulet  # (the engine's entry point; the server runs on an open database)

        self._dir = tempfile.mkdtemp(prefix="rivulet-information-schema-")
        db = rivulet.open(self._dir, prewarm=False, tune_gc=False)
        for name, columns in TABLES.items():
            body = ", ".join(f"`{c}` {t}" for c, t in columns)
            db.execute(f"CREATE TABLE `{name}` ({body})")
        self._db, self._cache = db, StatementCache(db)
        self._loaded = {name: [] for name in TABLES}
        return self._cache

    def _refresh(self, rows: dict[str, list[tuple]]) -> None:
        db = self._db
        assert db is not None
        changed = False
        for name, table_rows in rows.items():
            if table_rows != self._loaded[name]:
                db.truncate(name)
                if table_rows:
                    db.table(name).insert_many(table_rows)
                self._loaded[name] = table_rows
                changed = True
        if changed:
            db.settle()


def _rewritten(node: exp.Expr, database: str) -> str:
    """A query of information_schema as a query of the private database's tables:
    ``information_schema.x`` as ``x``, ``DATABASE()`` as the session's database, comma
    joins with their equalities as inner joins."""
    for table in list(node.find_all(exp.Table)):
        table.set("db", None)
    for call in list(node.find_all(exp.CurrentSchema, exp.Anonymous)):
        if isinstance(call, exp.CurrentSchema) or (
                call.name.upper() in ("DATABASE", "SCHEMA") and not call.expressions):
            call.replace(exp.Literal.string(database))
    for select in list(node.find_all(exp.Select)):
        _join_commas(select)
    return node.sql(dialect=DIALECT)


def _join_commas(select: exp.Select) -> None:
    """``FROM a, b WHERE a.x = b.y AND ...`` as ``FROM a JOIN b ON a.x = b.y WHERE ...``:
    each comma join takes the WHERE's equalities between its table and those before it."""
    where = select.args.get("where")
    if where is None:
        return
    source = select.args.get("from") or select.args.get("from_")
    if source is None:
        return
    seen = {source.this.alias_or_name.lower()}
    remaining = list(conjuncts(where.this))
    for join in select.args.get("joins") or []:
        name = join.this.alias_or_name.lower()
        if join.args.get("on") is None and not join.args.get("using") \
                and not join.args.get("kind") and not join.args.get("side"):
            links = [c for c in remaining if _links(c, name, seen)]
            if links:
                join.set("on", exp.and_(*links))
                remaining = [c for c in remaining if not any(c is link for link in links)]
        seen.add(name)
    if not remaining:
        select.set("where", None)
    else:
        where.set("this", exp.and_(*remaining))


def _links(condition: exp.Expr, table: str, before: set[str]) -> bool:
    """Whether ``condition`` is ``t.x = u.y`` with one side of ``table``, the other of a
    table in ``before``."""
    if not isinstance(condition, exp.EQ):
        return False
    left, right = condition.this, condition.expression
    if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
        return False
    sides = {left.table.lower(), right.table.lower()}
    return table in sides and bool((sides - {table}) & before)


# --------------------------------------------------------------------------- SHOW ... WHERE

#: The columns of SHOW [FULL] TABLES and SHOW [FULL] COLUMNS as information_schema's:
#: (name shown, column of information_schema, shown without FULL).
_SHOWN = {
    "TABLES": ("TABLES", "TABLE_NAME", (
        ("Tables_in_{db}", "TABLE_NAME", True), ("Table_type", "TABLE_TYPE", False))),
    "COLUMNS": ("COLUMNS", "ORDINAL_POSITION", (
        ("Field", "COLUMN_NAME", True), ("Type", "COLUMN_TYPE", True),
        ("Collation", "COLLATION_NAME", False), ("Null", "IS_NULLABLE", True),
        ("Key", "COLUMN_KEY", True), ("Default", "COLUMN_DEFAULT", True),
        ("Extra", "EXTRA", True), ("Privileges", "PRIVILEGES", False),
        ("Comment", "COLUMN_COMMENT", False))),
}


def show_where(node: exp.Show, catalog: Catalog, database: str) -> str | None:
    """``SHOW [FULL] TABLES WHERE ...`` and ``SHOW [FULL] COLUMNS FROM t WHERE ...`` as the
    query of information_schema that MySQL answers them with (its WHERE names the columns
    shown); None for another SHOW, or one without WHERE. (The database was checked.)"""
    where = node.args.get("where")
    kind = node.name.upper()
    if kind == "FIELDS":
        kind = "COLUMNS"
    if where is None or kind not in _SHOWN:
        return None
    table, order, shown = _SHOWN[kind]
    full = bool(node.args.get("full"))
    columns = [(name.format(db=database), source) for name, source, plain in shown
               if plain or full]
    by_name = {name.lower(): source for name, source in columns}
    condition = where.this.copy()
    for column in list(condition.find_all(exp.Column)):
        source = by_name.get(column.name.lower())
        if column.table or source is None:
            raise UnknownColumnError(f"Unknown column '{column.sql(dialect=DIALECT)}' in "
                                     f"'where clause'")
        column.replace(exp.column(source))
    filters = [exp.column("TABLE_SCHEMA").eq(exp.Literal.string(database))]
    if kind == "COLUMNS":
        target = node.args.get("target")
        name = target.name if isinstance(target, exp.Expr) else str(target or "")
        full_name = catalog_name(database, name)
        broken = catalog.broken_view(full_name)
        if broken is not None:
            raise broken.error()
        if catalog.table(full_name) is None and catalog.view(full_name) is None:
            raise UnknownObjectError(f"Table '{database}.{name}' doesn't exist")
        filters.append(exp.column("TABLE_NAME").eq(exp.Literal.string(name)))
    select = exp.select(*(exp.alias_(exp.column(source), name, quoted=True)
                          for name, source in columns))
    query = select.from_(exp.table_(table, db=SCHEMA_NAME)).where(
        exp.and_(*filters, exp.paren(condition))).order_by(exp.column(order))
    return query.sql(dialect=DIALECT)
