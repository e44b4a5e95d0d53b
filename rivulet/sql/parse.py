"""SQL text to sqlglot ASTs, in MySQL's dialect, with errors that say where.

rivulet serves MySQL clients, so statements are read as MySQL reads them (``||`` is OR,
backticks quote names). Positions in error messages come from the tokens sqlglot keeps on
identifiers and literals.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from rivulet.errors import SqlError, UnsupportedSqlError

DIALECT = "mysql"


def parse_statements(text: str) -> list[exp.Expr]:
    """All statements of ``text`` (``;``-separated), or a :class:`SqlError` for the first bad one."""
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
    out = [s for s in statements if s is not None]
    for statement in out:
        if isinstance(statement, exp.Command):
            raise UnsupportedSqlError(
                f"unsupported statement {statement.sql(dialect=DIALECT)[:60]!r}"
            )
    return out


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


def error_at(node: exp.Expr, message: str) -> SqlError:
    """A :class:`SqlError` located at ``node``."""
    line, col = position(node)
    return SqlError(message, line=line, col=col)


def count_placeholders(node: exp.Expr) -> int:
    return sum(1 for _ in node.find_all(exp.Placeholder))
