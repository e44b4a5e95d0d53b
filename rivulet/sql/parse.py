"""SQL text to sqlglot ASTs, in MySQL's dialect, with errors that say where.

rivulet serves MySQL clients, so statements are read as MySQL reads them (``||`` is OR,
backticks quote names). Positions in error messages come from the tokens sqlglot keeps on
identifiers and literals.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from rivulet.errors import SqlError, UnsupportedSqlError

DIALECT = "mysql"

#: Deepest nesting of parentheses a statement may have. sqlglot parses them by recursion
#: (about 25 Python frames a level), so a few dozen levels would exhaust the interpreter's
#: stack; no real query comes close (the example programs nest 3 deep).
MAX_PARENS = 24
#: Deepest expression tree a statement may have (``a + b + ...`` is one level a term):
#: the planner and the compiled expressions recurse over it too.
MAX_DEPTH = 64


def parse_statements(text: str) -> list[exp.Expr]:
    """All statements of ``text`` (``;``-separated), or a :class:`SqlError` for the first
    bad one."""
    tokens = _tokens(text)
    _check_parens(tokens)
    text = _real_as_double(text, tokens)
    try:
        statements = sqlglot.parse(text, read=DIALECT)
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        raise SqlError(
            f"cannot parse SQL: {first.get('description', str(exc))} near "
            f"{first.get('highlight', '')!r}",
            line=first.get("line"),
            col=first.get("col"),
        ) from None
    except TokenError as exc:
        raise SqlError(f"cannot tokenize SQL: {exc}") from None
    except RecursionError:  # a nesting MAX_PARENS does not catch (a backstop)
        raise SqlError("statement nested too deeply to parse") from None
    out = [s for s in statements if s is not None]
    for statement in out:
        _check_depth(statement)
        if isinstance(statement, exp.Command):
            _explain_command(statement, text)
    _reject_stray_commas(tokens)
    return out


def _explain_command(statement: exp.Command, text: str) -> None:
    """sqlglot reads what it cannot parse as an opaque command: say what is wrong with it."""
    if (statement.name.upper() == "CREATE"
            and re.match(r"\s*VIEW\b", str(statement.expression), re.I)):
        parse_statements(view_query_text(text))  # raises the SELECT's own syntax error
    raise UnsupportedSqlError(f"unsupported statement {statement.sql(dialect=DIALECT)[:60]!r}")


def _real_as_double(text: str, tokens: list) -> str:
    """``text`` with the type REAL written DOUBLE, as MySQL reads it (without the
    REAL_AS_FLOAT mode): sqlglot reads REAL as FLOAT, which MySQL keeps in single precision.
    (A position reported past a REAL on its line is two columns further.)"""
    for token in reversed(tokens):
        if token.token_type == TokenType.FLOAT and token.text.upper() == "REAL":
            text = text[:token.start] + "DOUBLE" + text[token.end + 1:]
    return text


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


def _reject_stray_commas(tokens: list) -> None:
    """MySQL rejects ``a,, b`` and ``a, FROM``; sqlglot quietly accepts them."""
    for token, following in zip(tokens, tokens[1:]):
        if token.token_type == TokenType.COMMA and following.token_type in (
            TokenType.COMMA, TokenType.FROM, TokenType.R_PAREN
        ):
            raise SqlError(
                f"cannot parse SQL: unexpected {following.text!r} after ','",
                line=following.line, col=following.col,
            )


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



def _tokens(text: str) -> list:
    try:
        return sqlglot.tokenize(text, read=DIALECT)
    except TokenError as exc:
        raise SqlError(f"cannot tokenize SQL: {exc}") from None


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
