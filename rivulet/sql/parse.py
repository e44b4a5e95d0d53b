"""SQL text to sqlglot ASTs, in MySQL's dialect, with errors that say where.

rivulet serves MySQL clients, so statements are read as MySQL reads them (``||`` is OR,
backticks quote names, ``"x"`` is a string). Positions in error messages come from the
tokens sqlglot keeps on identifiers and literals. Text that is not MySQL gets MySQL's
syntax error (:class:`~rivulet.errors.SqlSyntaxError`, 1064) in rivulet's words, never the
parser's: sqlglot's messages name its classes and tokens. What sqlglot reads but MySQL
rejects is refused by :mod:`rivulet.sql.syntax`.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import ParseError, TokenError
from sqlglot.parsers.mysql import MySQLParser
from sqlglot.tokens import Token, TokenType

from rivulet.errors import ArgumentCountError, SqlError, UnsupportedSqlError
from rivulet.sql import schemas, syntax
from rivulet.sql.parens import drop_redundant_parens
from rivulet.sql.rows import expand_rows

DIALECT = "mysql"

#: Deepest nesting of parentheses a statement may have. sqlglot parses them by recursion
#: (about 25 Python frames a level), so a few dozen levels would exhaust the interpreter's
#: stack; no real query comes close (the example programs nest 3 deep).
MAX_PARENS = 24
#: Deepest expression tree a statement may have (``a + b + ...`` is one level a term):
#: the planner and the compiled expressions recurse over it too.
MAX_DEPTH = 64


class Replace(exp.Insert):
    """MySQL's ``REPLACE [INTO] t ...``: an INSERT whose rows take the place of the rows
    holding their keys (rivulet/storage/upsert.py). sqlglot has no node for it (it reads
    the statement as an opaque command), so rivulet's parser builds this one, which
    renders as the REPLACE it was read from (the MySQL server parses statements again from
    their rendered templates)."""


def _replace_sql(generator: Any, node: Replace) -> str:
    return "REPLACE" + generator.insert_sql(node).removeprefix("INSERT")


class CreateKeyIndex(exp.Create):
    """MySQL's ``CREATE FULLTEXT|SPATIAL INDEX [IF NOT EXISTS] name ON t (cols)
    [options]``, which sqlglot reads only as an opaque command (it knows ``CREATE [UNIQUE]
    INDEX``): a CREATE of kind INDEX whose ``this`` is the key as ``ALTER TABLE t ADD
    FULLTEXT|SPATIAL INDEX name (cols)`` reads it (an ``IndexColumnConstraint``, the same
    statement by MySQL's definition) and whose ``table`` is ``t``. It renders as written."""

    arg_types = {**exp.Create.arg_types, "table": True}


def _create_key_index_sql(generator: Any, node: CreateKeyIndex) -> str:
    key = node.this
    exists = " IF NOT EXISTS" if node.args.get("exists") else ""
    columns = ", ".join(generator.sql(part) for part in key.expressions)
    options = "".join(f" {generator.sql(option)}" for option in key.args.get("options") or [])
    return (f"CREATE {key.args['kind']} INDEX{exists} {generator.sql(key, 'this')} ON "
            f"{generator.sql(node, 'table')} ({columns}){options}")


def _key_kind(token: Token | None) -> bool:
    """Whether ``token`` is the word FULLTEXT or SPATIAL, a kind of key written before
    INDEX or KEY (quoted, it is a name: ``UNIQUE `spatial` (a)``)."""
    if not token:  # (None, or sqlglot's falsy stand-in past the last token)
        return False
    return token.token_type != TokenType.IDENTIFIER and token.text.upper() in (
        "FULLTEXT", "SPATIAL")

# Rendering is through sqlglot's MySQL generator (by dialect name): taught the nodes only
# rivulet's parser makes.
MySQL.Generator.TRANSFORMS[Replace] = _replace_sql
MySQL.Generator.TRANSFORMS[CreateKeyIndex] = _create_key_index_sql


class _Parser(MySQLParser):
    """sqlglot's MySQL parser, building from its table of functions only the aggregates
    (any other call is read as a plain call, computed or refused by the name written: see
    :data:`~rivulet.sql.syntax.BUILT_FUNCTIONS`) and knowing only MySQL's special call
    syntaxes (``CAST``, ``TRIM(... FROM ...)``, ...; not ``TRY_CAST`` or ``STRING_AGG``).
    It notes on each call it builds how many arguments it was written with (the tree
    alone does not always say), and which call, if any, sqlglot found with arguments
    missing or too many (its error then says so in its own words)."""

    FUNCTIONS = {name: build for name, build in MySQLParser.FUNCTIONS.items()
                 if name in syntax.BUILT_FUNCTIONS}
    FUNCTION_PARSERS = {name: parse for name, parse in MySQLParser.FUNCTION_PARSERS.items()
                        if syntax.is_mysql_function(name)}

    #: MySQL 8's ``column->path`` and ``column->>path`` read as the calls MySQL defines
    #: them to be (``JSON_EXTRACT(column, path)``, ``JSON_UNQUOTE(JSON_EXTRACT(column,
    #: path))``), so that the planner computes them as those calls, path as written.
    COLUMN_OPERATORS = {
        **MySQLParser.COLUMN_OPERATORS,
        TokenType.ARROW: lambda self, this, path: self._json_extract(this, path),
        TokenType.DARROW: lambda self, this, path: exp.Anonymous(
            this="JSON_UNQUOTE", expressions=[self._json_extract(this, path)]),
    }

    STATEMENT_PARSERS = {**MySQLParser.STATEMENT_PARSERS,
                         TokenType.REPLACE: lambda self: self._parse_replace()}

    bad_call: Token | None = None
    #: Where the last error was raised: the token it names, or None past the statement's
    #: last token (``stopped_after``), where MySQL says ``near ''``.
    stopped_at: Token | None = None
    stopped_after: Token | None = None

    def raise_error(self, message: str, token: Any = None) -> None:
        # sqlglot's stand-in for "no token" is a falsy sentinel token
        self.stopped_at = token or self._curr or None
        self.stopped_after = self._prev or None
        if token is None:
            super().raise_error(message)
        else:
            super().raise_error(message, token)

    def _json_extract(self, this: exp.Expr, path: exp.Expr) -> exp.Anonymous:
        """``this->path``: MySQL takes only a column before the arrow and a string after."""
        if not isinstance(this, exp.Column) or not (
                isinstance(path, exp.Literal) and path.is_string):
            self.raise_error("Invalid expression / Unexpected token")
        return exp.Anonymous(this="JSON_EXTRACT", expressions=[this, path])

    def _parse_replace(self) -> Replace:
        """``REPLACE`` read as the INSERT it is written like (``INTO`` optional, ``SET``
        or ``VALUES``), then made a :class:`Replace`."""
        if self._curr and self._curr.token_type == TokenType.OR:  # (``INSERT OR ...`` only)
            self.raise_error("Invalid expression / Unexpected token")
        inserted = self._parse_insert()
        if not isinstance(inserted, exp.Insert):
            self.raise_error("Invalid expression / Unexpected token")
        node = Replace(**inserted.args)
        node.meta.update(inserted.meta)
        node.comments = inserted.comments
        return node

    def _parse_create(self) -> exp.Create | exp.Command:
        """``CREATE FULLTEXT|SPATIAL INDEX`` read as :class:`CreateKeyIndex`; ``CREATE
        UNIQUE FULLTEXT|SPATIAL INDEX`` is no MySQL (its syntax error, near the kind);
        any other CREATE as sqlglot reads it."""
        ahead = self._next.text.upper() if self._next else ""
        if _key_kind(self._curr) and ahead == "INDEX":
            return self._parse_create_key_index()
        if self._curr and self._curr.token_type == TokenType.UNIQUE and _key_kind(self._next):
            self.raise_error("Invalid expression / Unexpected token", self._next)
        return super()._parse_create()

    def _parse_create_key_index(self) -> CreateKeyIndex:
        kind = self._curr.text.upper()
        self._advance(2)  # (FULLTEXT INDEX)
        exists = self._parse_exists(not_=True)
        name = self._parse_id_var(any_token=False)
        if name is None or not self._match(TokenType.ON):
            self.raise_error("Expected an index name and ON")
        table = self._parse_table_parts(schema=True)
        key = self._parse_index_constraint(kind=kind)  # (cols) [options], as ADD reads them
        key.set("this", name)
        return self.expression(CreateKeyIndex(this=key, kind="INDEX", exists=exists,
                                              table=table))

    def _parse_unique(self) -> exp.UniqueColumnConstraint:
        """``UNIQUE [KEY|INDEX] ...``; ``UNIQUE FULLTEXT|SPATIAL`` is no MySQL (its syntax
        error, near the kind, where sqlglot would read the kind as the key's name)."""
        if _key_kind(self._curr):
            self.raise_error("Invalid expression / Unexpected token")
        return super()._parse_unique()

    def _parse_join(self, skip_join_token: bool = False, parse_bracket: bool = False,
                    alias_tokens: Any = None) -> exp.Join | None:
        """A join, with ``JOIN t`` written without ON or USING read as the ``CROSS JOIN
        t`` it is in MySQL. sqlglot reads it, and writes it back, as ``, t``: a comma,
        which binds less tightly than JOIN (``FROM a, b JOIN c ON c.x = a.x`` cannot
        name ``a`` in its ON; ``FROM a JOIN b JOIN c ON c.x = a.x`` can). So a join
        with no kind, side, method or condition is a comma, and only a comma."""
        comma = bool(self._curr) and self._curr.token_type == TokenType.COMMA
        join = super()._parse_join(skip_join_token, parse_bracket, alias_tokens)
        if join is not None and not comma and not any(
                join.args.get(k) for k in ("kind", "side", "method", "on", "using")):
            join.set("kind", "CROSS")
        return join

    def current(self) -> Token | None:
        """The token the parser is at (None past the last)."""
        return self._curr or None

    def validate_expression(self, expression: Any, args: list | None = None) -> Any:
        if expression is None:  # a function builder that made nothing of odd arguments
            self.raise_error("Invalid function call")
            return None
        if args is not None and isinstance(expression, exp.Func):
            expression.meta[syntax.WRITTEN_ARGUMENTS] = len(args)
            if expression.error_messages(args):
                self.bad_call = self._curr or self._prev
        return super().validate_expression(expression, args)


class _Tokenizer(MySQL.Tokenizer):
    """sqlglot's MySQL tokenizer, except that a statement starting with REPLACE is
    tokenized (sqlglot keeps its text as one opaque command): :meth:`_Parser._parse_replace`
    reads it."""

    COMMANDS = MySQL.Tokenizer.COMMANDS - {TokenType.REPLACE}


class _Dialect(MySQL):
    """MySQL as sqlglot reads it, with :class:`_Parser`; a function it builds keeps the
    name it was written with, for the errors that name it."""

    ORIGINAL_NAME_META_KEY = syntax.WRITTEN_NAME
    Parser = _Parser
    Tokenizer = _Tokenizer


_READER = _Dialect()


def parse_statements(text: str) -> list[exp.Expr]:
    """All statements of ``text`` (``;``-separated), or a :class:`SqlError` for the first
    bad one."""
    tokens = _tokens(text)
    _check_parens(tokens)
    syntax.check_tokens(text, tokens)
    _real_as_double(tokens)
    parser = _Parser(dialect=_READER)
    try:
        statements = parser.parse(tokens, text)
    except ParseError as exc:
        raise _parse_error(text, tokens, exc, parser) from None
    except RecursionError:  # a nesting MAX_PARENS does not catch (a backstop)
        raise SqlError("statement nested too deeply to parse") from None
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        # sqlglot failing on text it cannot make sense of (a backstop: none is known since
        # its table of functions holds only rivulet's), reported as MySQL's syntax error
        raise syntax.error_at_token(text, parser.current()) from None
    out = [drop_redundant_parens(expand_rows(s)) for s in statements if s is not None]
    for statement in out:
        _check_depth(statement)
        if isinstance(statement, exp.Command):
            _explain_command(statement, text)
        syntax.check_tree(statement, text, tokens)
    _reject_stray_commas(text, tokens)
    _reject_empty_select_lists(text, tokens)
    return [schemas.resolve(s) for s in out]  # ``s.t`` as the catalog names it


def _parse_error(text: str, tokens: list[Token], exc: ParseError, parser: _Parser) -> SqlError:
    """sqlglot's parse error as MySQL's: a syntax error near the token sqlglot stopped at
    (``near ''`` past the end), or, when that was a call with the wrong number of
    arguments, error 1582 naming it."""
    first = exc.errors[0] if exc.errors else {}
    token: Token | None = parser.stopped_at
    if token is None and parser.stopped_after is not None:  # the statement ended too soon
        end = parser.stopped_after.end + 1
        reason = _expected(first.get("description") or "")
        return syntax.syntax_error(text, end, reason) if end < len(text) else (
            syntax.syntax_error(text, None, reason))
    if token is None:
        line, col = first.get("line"), first.get("col")
        token = next((t for t in tokens if t.line == line and t.col == col), None)
    if token is None and tokens:
        token = tokens[-1]
    bad_call = parser.bad_call
    if token is not None and bad_call is not None and token is bad_call:
        name, start = _called_function(tokens, token)
        if name is not None:
            at_line, at_col = syntax.where(text, start)
            return ArgumentCountError(
                f"Incorrect parameter count in the call to native function '{name}'",
                line=at_line, col=at_col)
    opening = _statement_start(tokens, token)
    if opening is not None and opening.text.upper() in UNSUPPORTED_STATEMENTS:
        at_line, at_col = syntax.where(text, opening.start)
        return UnsupportedSqlError(
            f"unsupported statement {syntax.near(text, opening.start)[:40]!r}",
            line=at_line, col=at_col)
    if opening is not None and opening.token_type == TokenType.VAR:
        token = opening  # no statement starts with a name: MySQL stops at the first word
    return syntax.error_at_token(text, token, _expected(first.get("description") or ""))


#: The first words of MySQL statements rivulet has no use for, which sqlglot may not parse
#: (``LOAD DATA INFILE``, ``LOCK TABLES``, ``HANDLER``...): a statement starting with one
#: is valid MySQL that rivulet does not support (1235), not a syntax error.
UNSUPPORTED_STATEMENTS = frozenset({
    "LOAD", "LOCK", "UNLOCK", "HANDLER", "GRANT", "REVOKE", "CALL", "DO", "PREPARE",
    "EXECUTE", "DEALLOCATE", "FLUSH", "RESET", "PURGE", "CHANGE", "START", "STOP", "INSTALL",
    "UNINSTALL", "XA", "SAVEPOINT", "RELEASE", "CHECKSUM", "OPTIMIZE", "REPAIR", "ANALYZE",
    "CHECK", "CACHE", "SIGNAL", "RESIGNAL", "GET", "HELP", "BINLOG", "RENAME", "IMPORT",
    "CLONE", "RESTART", "SHUTDOWN", "VALUES",
})


def _statement_start(tokens: list[Token], token: Token | None) -> Token | None:
    """The first token of the statement ``token`` is in."""
    if token is None:
        return None
    index = next(i for i, t in enumerate(tokens) if t is token)
    while index > 0 and tokens[index - 1].token_type != TokenType.SEMICOLON:
        index -= 1
    return tokens[index]


def _expected(description: str) -> str | None:
    """The part of a sqlglot error description that is worth a user's reading (what it
    expected), in words that name no class or token of the parser's."""
    match = re.fullmatch(r"Expect(?:ed|ing) (.+?)(?: but got .*)?", description, re.S)
    if match is None or "<" in match.group(1):
        return None
    return f"expected {match.group(1)}"


def _called_function(tokens: list[Token], token: Token) -> tuple[str | None, int]:
    """The name (upper case) and offset of the function whose argument list ``token``
    ends or is inside, found by walking back to its opening parenthesis."""
    index = next(i for i, t in enumerate(tokens) if t is token)
    depth = 0
    for i in range(index, -1, -1):
        kind = tokens[i].token_type
        if kind == TokenType.R_PAREN and i != index:
            depth += 1
        elif kind == TokenType.L_PAREN:
            if depth == 0:
                if i == 0:
                    return None, 0
                return tokens[i - 1].text.upper(), tokens[i - 1].start
            depth -= 1
    return None, 0


def _explain_command(statement: exp.Command, text: str) -> None:
    """sqlglot reads what it cannot parse as an opaque command: say what is wrong with it."""
    if statement.name.upper() == "RENAME" and re.match(
            r"\s*TABLES?\b", str(statement.expression.name), re.I):
        return  # bound by rivulet/bind/statements.py (rivulet/sql/rename.py reads it)
    if (statement.name.upper() == "CREATE"
            and re.match(r"\s*VIEW\b", str(statement.expression), re.I)):
        parse_statements(view_query_text(text))  # raises the SELECT's own syntax error
    raise UnsupportedSqlError(f"unsupported statement {statement.sql(dialect=DIALECT)[:60]!r}")


def _real_as_double(tokens: list[Token]) -> None:
    """Read the type REAL as DOUBLE, as MySQL does (without the REAL_AS_FLOAT mode):
    sqlglot reads REAL as FLOAT, which MySQL keeps in single precision. The token keeps
    its text and place, so errors still name REAL where it was written."""
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.FLOAT and token.text.upper() == "REAL":
            tokens[i] = Token(TokenType.DOUBLE, token.text, token.line, token.col,
                              token.start, token.end, token.comments)


def _check_parens(tokens: list) -> None:
    """Reject parentheses nested past :data:`MAX_PARENS` before sqlglot recurses into them."""
    depth = 0
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
            if depth > MAX_PARENS:
                raise SqlError(f"parentheses nested more than {MAX_PARENS} deep",
                               line=token.line, col=token.col)
        elif token.token_type == TokenType.R_PAREN:
            depth = max(0, depth - 1)


def _check_depth(statement: exp.Expr) -> None:
    """Reject expression trees deeper than :data:`MAX_DEPTH` (walked without recursion)."""
    stack = [(statement, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            line, col = position(node)
            raise SqlError(f"expression nested more than {MAX_DEPTH} deep (a chain of that "
                           "many operators)", line=line, col=col)
        stack.extend((child, depth + 1) for child in node.iter_expressions())


def _reject_stray_commas(text: str, tokens: list) -> None:
    """MySQL rejects ``a,, b`` and ``a, FROM``; sqlglot quietly accepts them."""
    for token, following in zip(tokens, tokens[1:]):
        if token.token_type == TokenType.COMMA and following.token_type in (
            TokenType.COMMA, TokenType.FROM, TokenType.R_PAREN
        ):
            raise syntax.error_at_token(text, following,
                                        f"unexpected {following.text!r} after ','")


#: What may not come right after SELECT: a select list is never empty.
_NOT_A_SELECT_ITEM = frozenset({TokenType.FROM, TokenType.WHERE, TokenType.SEMICOLON,
                                TokenType.R_PAREN, TokenType.UNION, TokenType.LIMIT})


def _reject_empty_select_lists(text: str, tokens: list) -> None:
    """MySQL rejects ``SELECT`` and ``SELECT FROM DUAL``; sqlglot reads them as a SELECT of
    no columns."""
    for token, following in zip(tokens, [*tokens[1:], None]):
        if token.token_type == TokenType.SELECT and (
                following is None or following.token_type in _NOT_A_SELECT_ITEM):
            raise syntax.error_at_token(text, following, "SELECT takes at least one column")


def parse_one(text: str) -> exp.Expr:
    """The single statement of ``text``."""
    statements = parse_statements(text)
    if len(statements) != 1:
        raise SqlError(f"expected one statement, got {len(statements)}")
    return statements[0]


def position(node: exp.Expr) -> tuple[int | None, int | None]:
    """Line and column of the first token under ``node`` that sqlglot located."""
    for sub in node.walk():
        meta = getattr(sub, "meta", None) or {}
        if "line" in meta:
            return meta["line"], meta["col"]
    return None, None


def unsupported(node: exp.Expr, what: str | None = None) -> UnsupportedSqlError:
    """An error naming the unsupported construct ``node`` and where it is."""
    line, col = position(node)
    text = node.sql(dialect=DIALECT)
    if len(text) > 60:
        text = text[:57] + "..."
    label = what or type(node).__name__.upper()
    return UnsupportedSqlError(f"unsupported {label}: {text!r}", line=line, col=col)


def error_at(node: exp.Expr, message: str, kind: type[SqlError] = SqlError) -> SqlError:
    """A :class:`SqlError` located at ``node``, of class ``kind`` (a subclass saying which
    mistake it is, such as :class:`~rivulet.errors.UnknownColumnError`)."""
    line, col = position(node)
    return kind(message, line=line, col=col)



def tokenize(text: str) -> list[Token]:
    """``text``'s tokens, as the parser reads them (for statements sqlglot leaves as an
    opaque command: rivulet/sql/rename.py)."""
    return _tokens(text)


def _tokens(text: str) -> list[Token]:
    """``text``'s tokens, or MySQL's syntax error where they stop (an unterminated string,
    quoted name or comment, a malformed literal)."""
    tokenizer = _READER.tokenizer()
    try:
        return tokenizer.tokenize(text)
    except TokenError:
        read = tokenizer.tokens
        offset = read[-1].end + 1 if read else 0
        while offset < len(text) and text[offset].isspace():
            offset += 1
        raise syntax.syntax_error(text, offset, _unterminated(text[offset:offset + 2])) from None


def _unterminated(start: str) -> str | None:
    """What the token starting with ``start`` was, when the tokenizer could not end it."""
    if start[:1] in ("'", '"'):
        return "a string is not closed"
    if start[:1] == "`":
        return "a quoted name is not closed"
    if start == "/*":
        return "a comment is not closed"
    return None


def _blank(text: str) -> str:
    """``text`` with every character but newlines replaced by a space."""
    return re.sub(r"[^\n]", " ", text)


def split_statements(text: str) -> list[str]:
    """The statements of a script, each padded with blanks to its place in ``text``.

    Statements are kept as the user wrote them (re-rendering through sqlglot can rewrite
    constructs), and the padding keeps every error position relative to the whole script.
    """
    out, start = [], 0
    for token in _tokens(text):
        if token.token_type == TokenType.SEMICOLON:
            out.append(_blank(text[:start]) + text[start:token.start])
            start = token.end + 1
    out.append(_blank(text[:start]) + text[start:])
    return [s for s in out if s.strip()]


def view_query_text(create_view: str) -> str:
    """The SELECT of a ``CREATE VIEW name AS SELECT ...`` statement, padded in place."""
    seen_view = False
    for token in _tokens(create_view):
        if token.token_type == TokenType.VIEW:
            seen_view = True
        elif seen_view and token.token_type == TokenType.ALIAS:
            return _blank(create_view[: token.end + 1]) + create_view[token.end + 1:]
    raise SqlError("CREATE VIEW needs `AS SELECT ...`")
