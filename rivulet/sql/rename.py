"""``RENAME TABLE a TO b[, c TO d ...]``: its pairs of names, and a stored statement that
made a table written again under the table's new name.

sqlglot reads ``RENAME TABLE`` as an opaque command (its text after ``RENAME``); the pairs
are read here from its tokens. ``ALTER TABLE a RENAME [TO] b`` sqlglot parses, and binds
to the same statement (rivulet/bind/statements.py). The stored program keeps the
``CREATE TABLE`` and ``ALTER TABLE`` statements that made each table (rivulet/engine/
program.py replays them at open); a renamed table's are written again naming the new name,
so that the program restored, and the programs Spark snapshots carry, make it under that
name.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp
from sqlglot.tokens import TokenType

from rivulet.errors import SqlSyntaxError
from rivulet.sql.parse import DIALECT, parse_one, tokenize
from rivulet.sql.schemas import catalog_name, split_name
from rivulet.values.schema import TableSchema

#: Token types that separate the names of ``RENAME TABLE``'s list.
_PUNCTUATION = (TokenType.COMMA, TokenType.DOT, TokenType.SEMICOLON, TokenType.L_PAREN,
                TokenType.R_PAREN)


def is_rename_table(node: exp.Expr) -> bool:
    """Whether ``node`` is ``RENAME TABLE ...`` (as sqlglot reads it: a command)."""
    return isinstance(node, exp.Command) and node.name.upper() == "RENAME"


def rename_pairs(command: exp.Command) -> tuple[tuple[str, str], ...]:
    """The ``(old, new)`` catalog names of a ``RENAME TABLE`` command, in order (1064 if
    it is not ``RENAME TABLE name TO name[, name TO name ...]``)."""
    return tuple((_catalog_name(old), _catalog_name(new))
                 for old, new in _written_pairs(command))


def qualified_rename(command: exp.Command, schema: str) -> str:
    """``RENAME TABLE`` run in database ``schema`` (not the default): its text with each
    bare name qualified by it (as rivulet/sql/schemas.py's ``qualify`` does for statements
    sqlglot parses)."""
    pairs = [f"{_quoted(old, schema)} TO {_quoted(new, schema)}"
             for old, new in _written_pairs(command)]
    return f"RENAME TABLE {', '.join(pairs)}"


#: A name as written: its database (None if bare) and its name.
_Written = tuple[str | None, str]


def _catalog_name(written: _Written) -> str:
    database, name = written
    return name if database is None else catalog_name(database, name)


def _quoted(written: _Written, schema: str) -> str:
    database, name = written
    return ".".join("`" + part.replace("`", "``") + "`"
                    for part in (database if database is not None else schema, name))


def _written_pairs(command: exp.Command) -> list[tuple[_Written, _Written]]:
    """The pairs of names of ``RENAME TABLE``, as written."""
    text = command.expression.name if isinstance(command.expression, exp.Expr) else ""
    tokens = tokenize(text)
    at = 0

    def fail() -> SqlSyntaxError:
        return SqlSyntaxError(text[tokens[at].start:][:80] if at < len(tokens) else "")

    def word(*words: str) -> bool:
        nonlocal at
        if (at < len(tokens) and tokens[at].token_type != TokenType.IDENTIFIER
                and tokens[at].text.upper() in words):
            at += 1
            return True
        return False

    def name() -> _Written:
        nonlocal at
        parts: list[str] = []
        while True:
            if at >= len(tokens) or tokens[at].token_type in _PUNCTUATION:
                raise fail()
            parts.append(tokens[at].text)  # (a quoted name's text is without its quotes)
            at += 1
            if at < len(tokens) and tokens[at].token_type == TokenType.DOT and len(parts) < 2:
                at += 1
                continue
            break
        return (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])

    if not word("TABLE", "TABLES"):
        raise fail()
    pairs = []
    while True:
        old = name()
        if not word("TO"):
            raise fail()
        pairs.append((old, name()))
        if at < len(tokens) and tokens[at].token_type == TokenType.COMMA:
            at += 1
            continue
        if at < len(tokens):
            raise fail()
        return pairs


def renamed_statement(sql: str, new: str) -> str:
    """A stored ``CREATE TABLE`` or ``ALTER TABLE`` statement, naming table ``new``
    instead of the table it names (rendered again from its syntax tree)."""
    node = parse_one(sql)
    if isinstance(node, exp.Create) and isinstance(node.this, exp.Schema):
        table = node.this.this
    elif isinstance(node, exp.Alter):
        table = node.this
    else:
        raise ValueError(f"not a CREATE TABLE or ALTER TABLE statement: {sql!r}")
    table.set("this", exp.to_identifier(new, quoted=True))
    table.set("db", None)
    table.set("catalog", None)
    return node.sql(dialect=DIALECT)


def renamed_schema(schema: TableSchema, new: str) -> TableSchema:
    """``schema`` named ``new``, its CHECK and FOREIGN KEY constraints named after the
    table (``<table>_chk_<n>``, ``<table>_ibfk_<n>``) named after the new name, as MySQL 8's
    RENAME TABLE renames them (and as its statements, written again, make them)."""
    old_bare, new_bare = split_name(schema.name)[1], split_name(new)[1]

    def follow(name: str, kind: str) -> str:
        prefix = f"{old_bare}_{kind}_"
        if name.lower().startswith(prefix.lower()):
            return f"{new_bare}_{kind}_{name[len(prefix):]}"
        return name

    return replace(schema, name=new,
                   checks=tuple(replace(c, name=follow(c.name, "chk")) for c in schema.checks),
                   foreign_keys=tuple(replace(f, name=follow(f.name, "ibfk"))
                                      for f in schema.foreign_keys))
