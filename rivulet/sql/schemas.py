"""Schemas (MySQL's databases): how a table of one is named in the catalog.

A MySQL server holds several databases; rivulet's catalog is one namespace of tables and
views. The default database (:data:`DEFAULT_SCHEMA`, what ``DATABASE()`` says on a
connection that names no other) keeps bare names, so programs made before schemas existed
read the same; a table or view of another schema ``s`` is catalogued as ``s.name``, one
name with a dot in it. Storage, the planner and the stored program then need nothing new:
the name is just a name (quoted wherever it is written, as every name is).

The rewrite is done on the syntax tree as it is parsed (:func:`resolve`): ``s.t`` becomes
the one name ``s.t`` (a FROM or JOIN item, or a written table, aliased ``t`` as MySQL lets
its columns be named ``t.col``; ``s.t.col`` becomes ``t.col``), and ``rivulet.t`` becomes
``t``. The system schemas (``information_schema``, ``mysql``, ...) are left as written:
the server answers them. A quoted name with a dot in it (```s.t```) is read as the
catalogued name it looks like, because that is how a rewritten tree renders; a table named
with a dot in one schema cannot be told from a table of another (a limit noted in docs).

A connection whose current database is not the default has its bare names qualified first
(:func:`qualify`), so that statements reach the engine naming their tables in full and the
server's statement cache (keyed by text) never answers one database's query with another's.
"""

from __future__ import annotations

from sqlglot import exp

from rivulet.errors import UnsupportedSqlError
from rivulet.sql.dual import is_dual

#: The database every connection starts in, which keeps bare names in the catalog.
DEFAULT_SCHEMA = "rivulet"
#: Schemas the server answers itself, never catalogued.
SYSTEM_SCHEMAS = frozenset({"information_schema", "mysql", "performance_schema", "sys"})


#: On a Table node :func:`resolve` took ``rivulet.`` off: named in the default database.
_NAMED_DEFAULT = "rivulet_default_schema"


def is_default(schema: str | None) -> bool:
    """Whether ``schema`` is the default one (None: no database named)."""
    return not schema or schema.lower() == DEFAULT_SCHEMA


def catalog_name(schema: str | None, name: str) -> str:
    """The catalog's name of table or view ``name`` of ``schema``.

    >>> catalog_name("rivulet", "t"), catalog_name("shop", "t"), catalog_name(None, "t")
    ('t', 'shop.t', 't')
    """
    return name if is_default(schema) else f"{schema}.{name}"


def split_name(name: str) -> tuple[str, str]:
    """The schema and the bare name of a catalog name.

    >>> split_name("t"), split_name("shop.t")
    (('rivulet', 't'), ('shop', 't'))
    """
    schema, dot, bare = name.partition(".")
    return (schema, bare) if dot else (DEFAULT_SCHEMA, name)


def in_schema(name: str, schema: str) -> bool:
    """Whether catalog name ``name`` is of ``schema`` (case-insensitively, as the catalog).

    >>> in_schema("shop.t", "SHOP"), in_schema("t", "rivulet"), in_schema("t", "shop")
    (True, True, False)
    """
    return split_name(name)[0].lower() == schema.lower()


def _is_schema_statement(node: exp.Expr) -> bool:
    """``CREATE/DROP DATABASE|SCHEMA``, ``USE``: the name is no table's."""
    return isinstance(node, exp.Use) or isinstance(node, (exp.Create, exp.Drop)) and str(
        node.args.get("kind") or "").upper() in ("DATABASE", "SCHEMA")


def _names_no_table(table: exp.Table) -> bool:
    """A Table node that names something else: ``DELETE t FROM ...`` (a FROM item),
    ``DROP INDEX i ON t`` (the index)."""
    parent = table.parent
    return table.arg_key == "tables" and (
        isinstance(parent, exp.Delete)
        or (isinstance(parent, exp.Drop) and str(parent.args.get("kind") or "").upper()
            == "INDEX"))


def _aliased(table: exp.Table) -> bool:
    """Whether ``table`` is read under a name of its own in the statement (a FROM or JOIN
    item, an UPDATE's or single-table DELETE's table), where the catalog's dotted name is
    given the bare name as its alias, as MySQL names its columns ``t.col``."""
    parent = table.parent
    key = table.arg_key
    return (isinstance(parent, (exp.From, exp.Join))
            or (isinstance(parent, (exp.Update, exp.Delete)) and key == "this"))


def resolve(node: exp.Expr) -> exp.Expr:
    """``node`` with every schema-qualified table named as the catalog names it (see the
    module docstring); changed in place and returned.

    >>> from sqlglot import parse_one
    >>> resolve(parse_one("SELECT shop.t.a, t.b FROM shop.t JOIN rivulet.u ON u.x = t.a",
    ...                   read="mysql")).sql(dialect="mysql")
    'SELECT t.a, t.b FROM `shop.t` AS t JOIN u ON u.x = t.a'
    >>> resolve(parse_one("INSERT INTO shop.t (a) VALUES (1)", read="mysql")).sql("mysql")
    'INSERT INTO `shop.t` (a) VALUES (1)'
    """
    if _is_schema_statement(node):
        return node
    renamed: dict[tuple[str, str], str] = {}  # (schema, table) lower -> what columns say
    for table in list(node.find_all(exp.Table)):
        db = table.args.get("db")
        if db is None or not table.name:
            continue
        schema = db.name
        if schema.lower() in SYSTEM_SCHEMAS:
            continue
        if table.args.get("catalog") is not None:
            raise UnsupportedSqlError(f"a table name of three parts: {table.sql('mysql')!r}")
        bare = table.this
        if _names_no_table(table):
            table.set("db", None)  # DELETE s.t FROM ...: names the FROM item t
            continue
        table.set("db", None)
        if is_default(schema):
            table.meta[_NAMED_DEFAULT] = True  # (not the current database's: see qualify)
            continue
        table.set("this", exp.to_identifier(catalog_name(schema, bare.name), quoted=True))
        if table.alias:
            continue
        if _aliased(table):
            table.set("alias", exp.TableAlias(this=bare.copy()))
            renamed[(schema.lower(), bare.name.lower())] = bare.name
        else:
            renamed.setdefault((schema.lower(), bare.name.lower()),
                               catalog_name(schema, bare.name))
    for column in node.find_all(exp.Column):
        db = column.args.get("db")
        if db is None or db.name.lower() in SYSTEM_SCHEMAS:
            continue
        column.set("db", None)
        if is_default(db.name):
            continue
        name = renamed.get((db.name.lower(), column.table.lower()))
        if name is not None:
            column.set("table", exp.to_identifier(name, quoted=name != column.table))
        else:  # s.t.col of no table s.t of the statement: unknown, as MySQL says
            column.set("table", exp.to_identifier(catalog_name(db.name, column.table),
                                                  quoted=True))
    return node


def qualify(node: exp.Expr, schema: str) -> exp.Expr:
    """``node``, a statement run in database ``schema`` (not the default), with its bare
    table names qualified by it (not those of its CTEs, nor ``DUAL``); changed in place.

    >>> from sqlglot import parse_one
    >>> qualify(parse_one("WITH c AS (SELECT 1) SELECT * FROM t, c, rivulet.u",
    ...                   read="mysql"), "shop").sql(dialect="mysql")
    'WITH c AS (SELECT 1) SELECT * FROM shop.t, c, rivulet.u'
    """
    if _is_schema_statement(node):
        return node
    ctes = {cte.alias.lower() for cte in node.find_all(exp.CTE)}
    for table in node.find_all(exp.Table):
        if (table.args.get("db") is not None or not table.name or is_dual(table)
                or table.meta.get(_NAMED_DEFAULT)):
            continue
        if table.name.lower() in ctes:
            continue
        if _names_no_table(table):
            continue
        if isinstance(table.this, exp.Identifier) and "." in table.name:
            continue  # a catalog name already
        table.set("db", exp.to_identifier(schema))
    return node
