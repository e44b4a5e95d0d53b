"""MySQL's grammar where sqlglot's reading of it is more lenient.

Why this module exists: sqlglot's mysql dialect reads some text MySQL rejects, mostly
other dialects' syntax that shares its parser: ``ORDER BY b NULLS FIRST``, ``ILIKE``,
``a::CHAR``, ``==``, ``FETCH FIRST``, ``LIMIT ALL``, ``SELECT * EXCEPT (a)``, ``PIVOT``,
a table named by a double-quoted string (a string in MySQL's default ``sql_mode``),
``IFNULL(a)`` with one argument... rivulet would answer those, and differently from MySQL,
which answers with a syntax error (or, for a function given a wrong number of arguments,
error 1582). Each is refused here, by the token or tree that shows it, with the error
MySQL gives and a reason naming the construct.

:func:`check_tokens` looks at the token stream before parsing (what a token or a short run
of tokens gives away); :func:`check_tree` at each parsed statement (what needs the tree:
what a ``LIMIT`` holds, whether a name was written as a string, how many arguments a call
was written with).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pygments.lexers import _mysql_builtins
from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from rivulet.errors import ArgumentCountError, SqlSyntaxError, UnsupportedSqlError
from rivulet.values.registry import SCALAR_FUNCTIONS, arity_error

#: Aggregates, which take one argument (``COUNT(DISTINCT a, b)`` is one: a DISTINCT list).
_AGGREGATES = frozenset({"COUNT", "SUM", "AVG", "MIN", "MAX", "GROUP_CONCAT", "STD", "STDDEV",
                         "STDDEV_POP", "STDDEV_SAMP", "VARIANCE", "VAR_POP", "VAR_SAMP"})

#: Meta key under which the parser notes how many arguments a call was written with (the
#: tree alone does not say: sqlglot folds ``IFNULL(a)`` into ``COALESCE(a)``).
WRITTEN_ARGUMENTS = "rivulet_arguments"
#: Meta key under which the parser notes a function's name as written.
WRITTEN_NAME = "rivulet_name"

#: The longest text an error quotes from where the statement stops being MySQL.
NEAR_CHARS = 60

#: Tokens that are never MySQL, with why.
_FOREIGN_TOKENS: dict[TokenType, str] = {
    TokenType.DCOLON: "MySQL has no '::' cast (write CAST(x AS type))",
    TokenType.ILIKE: "MySQL has no ILIKE (its LIKE follows the column's collation)",
    TokenType.GLOB: "MySQL has no GLOB (write LIKE)",
    TokenType.QUALIFY: "MySQL has no QUALIFY",
    TokenType.L_BRACKET: "MySQL has no '[' (arrays, subscripts)",
    TokenType.PIVOT: "MySQL has no PIVOT",
    TokenType.UNPIVOT: "MySQL has no UNPIVOT",
    TokenType.TABLE_SAMPLE: "MySQL has no TABLESAMPLE",
    TokenType.SEMI: "MySQL has no SEMI JOIN (write EXISTS or IN)",
    TokenType.ANTI: "MySQL has no ANTI JOIN (write NOT EXISTS or NOT IN)",
}

#: The type words MySQL 8's ``CAST(x AS type)`` and ``CONVERT(x, type)`` take.
_CAST_TYPES = frozenset({
    "BINARY", "CHAR", "CHARACTER", "NCHAR", "NATIONAL", "DATE", "DATETIME", "TIME", "YEAR",
    "DECIMAL", "DEC", "DOUBLE", "FLOAT", "REAL", "JSON", "SIGNED", "UNSIGNED", "POINT",
    "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON",
    "GEOMETRYCOLLECTION",
})


#: Tokens after which ``NULLS`` is a column (``SELECT nulls first`` aliases it ``first``).
_STARTS_EXPRESSION = frozenset({TokenType.SELECT, TokenType.COMMA, TokenType.L_PAREN,
                                TokenType.DISTINCT})

#: Tokens before a ``*`` that make it a select-list star (``SELECT *``, ``t.*``).
_BEFORE_STAR = frozenset({TokenType.SELECT, TokenType.COMMA, TokenType.DOT,
                          TokenType.DISTINCT})

#: sqlglot's string tokens: a name written as one is a string to MySQL.
_STRINGS = frozenset({TokenType.STRING, TokenType.NATIONAL_STRING})


#: MySQL's functions that its grammar names itself (``function_call_keyword``,
#: ``..._nonkeyword`` and ``..._conflict`` of MySQL 8's ``sql_yacc.yy``, with CAST, the
#: aggregates and window functions): keywords, which Pygments' list of functions leaves out.
_GRAMMAR_FUNCTIONS = (
    "ASCII", "AVG", "CAST", "CHAR", "CHARSET", "COALESCE", "COLLATION", "CONTAINS", "CONVERT",
    "COUNT", "CUME_DIST", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_USER",
    "DATABASE", "DATE", "DAY", "DEFAULT", "DENSE_RANK", "EXISTS", "FIRST_VALUE", "FORMAT",
    "GEOMETRYCOLLECTION", "GET_FORMAT", "GROUPING", "HOUR", "IF", "INSERT", "INTERVAL",
    "JSON_TABLE", "JSON_VALUE", "LAG", "LAST_VALUE", "LEAD", "LEFT", "LINESTRING", "LOCALTIME",
    "LOCALTIMESTAMP", "MATCH", "MAX", "MICROSECOND", "MIN", "MINUTE", "MOD", "MONTH",
    "MULTILINESTRING", "MULTIPOINT", "MULTIPOLYGON", "NTH_VALUE", "NTILE", "PASSWORD",
    "PERCENT_RANK", "POINT", "POLYGON", "QUARTER", "RANK", "REPEAT", "REPLACE", "RIGHT",
    "ROW_COUNT", "ROW_NUMBER", "SCHEMA", "SECOND", "SUM", "TIME", "TIMESTAMP", "TIMESTAMPADD",
    "TIMESTAMPDIFF", "TRUNCATE", "USER", "UTC_DATE", "UTC_TIME", "UTC_TIMESTAMP", "VALUES",
    "WEEK", "WEIGHT_STRING", "YEAR",
)

#: The names of MySQL's built-in functions: Pygments' list (its MySQL lexer keeps it
#: generated from MySQL's documentation) and those MySQL's grammar names. A call of a name
#: outside it is MySQL's "FUNCTION x does not exist" (1305); one inside it that rivulet
#: lacks is an unsupported function (1235).
MYSQL_FUNCTION_NAMES = frozenset(
    {name.upper() for name in _mysql_builtins.MYSQL_FUNCTIONS} | set(_GRAMMAR_FUNCTIONS))

#: The functions rivulet computes: its registry's and the aggregates.
COMPUTED_FUNCTIONS = frozenset(SCALAR_FUNCTIONS) | _AGGREGATES

#: The functions sqlglot's parser builds from its table of functions: the aggregates, the
#: planner's own nodes. Any other call is read as a plain call (an ``Anonymous`` node) that
#: the planner computes by the name written, with the registry's function of that name,
#: or refuses by name. sqlglot's table holds other dialects' functions too (``NVL``,
#: ``STRPOS``, ``DATE_TRUNC``...), and builds MySQL's as expressions that are not always
#: the function: ``TO_DAYS`` as a DATEDIFF from year 0, ``ISNULL(a, b)`` as ``a IS NULL``,
#: ``LTRIM(s)`` as a TRIM the planner refused, ``IFNULL(a)`` as ``COALESCE(a)``.
BUILT_FUNCTIONS = _AGGREGATES


def is_mysql_function(name: str) -> bool:
    """Whether MySQL has a built-in function called ``name``."""
    return name.upper() in MYSQL_FUNCTION_NAMES


# --------------------------------------------------------------------------- errors


def where(text: str, offset: int) -> tuple[int, int]:
    """Line and column (both 1-based) of character ``offset`` of ``text``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def near(text: str, offset: int) -> str:
    """What an error quotes: ``text`` from ``offset`` to the end of its line, cut short."""
    rest = text[offset:].split("\n", 1)[0]
    return rest[:NEAR_CHARS].rstrip()


def syntax_error(text: str, offset: int | None, reason: str | None = None) -> SqlSyntaxError:
    """MySQL's syntax error at character ``offset`` of ``text`` (None: at its end)."""
    if offset is None:
        offset = len(text.rstrip())
    line, col = where(text, offset)
    return SqlSyntaxError(near(text, offset), line=line, col=col, reason=reason)


def error_at_token(text: str, token: Token | None, reason: str | None = None) -> SqlSyntaxError:
    return syntax_error(text, None if token is None else token.start, reason)


# --------------------------------------------------------------------------- tokens


def check_tokens(text: str, tokens: Sequence[Token]) -> None:
    """Refuse the constructs a token, or a short run of tokens, shows are not MySQL."""
    n = len(tokens)
    for i, token in enumerate(tokens):
        kind = token.token_type
        word = token.text.upper()
        prev = tokens[i - 1] if i > 0 else None
        nxt = tokens[i + 1] if i + 1 < n else None
        after = tokens[i + 2] if i + 2 < n else None
        if any(comment.lstrip().startswith("!") for comment in token.comments):
            line, col = where(text, token.start)
            raise UnsupportedSqlError(
                "unsupported MySQL-specific comment /*! ... */ (MySQL runs the SQL inside "
                "it; rivulet would skip it)", line=line, col=col)
        if kind == TokenType.INTO and (target := _word(nxt, "OUTFILE", "DUMPFILE")):
            line, col = where(text, token.start)
            raise UnsupportedSqlError(f"unsupported SELECT ... INTO {target}",
                                      line=line, col=col)
        reason = _FOREIGN_TOKENS.get(kind)
        if reason is None:
            reason = _foreign_run(kind, word, prev, nxt, after, token)
        if reason is not None:
            raise error_at_token(text, token, reason)
        if kind == TokenType.VAR and word in ("CAST", "CONVERT") and _is(nxt, TokenType.L_PAREN):
            _check_cast_type(text, tokens, i + 1, word)
        if word == "POSITION" and _is(nxt, TokenType.L_PAREN):
            comma = next((tokens[j] for j in _top_level(tokens, i + 1)
                          if tokens[j].token_type == TokenType.COMMA), None)
            if comma is not None:
                raise error_at_token(text, comma, "MySQL writes POSITION(substr IN str)")


def _is(token: Token | None, *kinds: TokenType) -> bool:
    return token is not None and token.token_type in kinds


def _word(token: Token | None, *words: str) -> str | None:
    """``token``'s word (upper case) if it is one of ``words``."""
    word = token.text.upper() if token is not None else None
    return word if word in words else None


def _foreign_run(kind: TokenType, word: str, prev: Token | None, nxt: Token | None,
                 after: Token | None, token: Token) -> str | None:
    """Why the run of tokens starting at ``token`` is not MySQL, or None."""
    if kind == TokenType.EQ and token.text == "==":
        return "MySQL has no '==' (write =)"
    if word == "NULLS" and (which := _word(nxt, "FIRST", "LAST")) and not (
            prev is None or prev.token_type in _STARTS_EXPRESSION):
        return (f"MySQL has no NULLS {which} (it sorts NULL first in ascending order and "
                "last in descending order)")
    if kind == TokenType.FETCH and _word(nxt, "FIRST", "NEXT"):
        return "MySQL has no FETCH FIRST (write LIMIT)"
    if kind == TokenType.IS and (_is(nxt, TokenType.DISTINCT) or (
            _is(nxt, TokenType.NOT) and _is(after, TokenType.DISTINCT))):
        return "MySQL has no IS [NOT] DISTINCT FROM (write <=> for IS NOT DISTINCT FROM)"
    if kind == TokenType.BETWEEN and _word(nxt, "SYMMETRIC", "ASYMMETRIC") and not _is(
            after, TokenType.AND):
        return "MySQL has no BETWEEN SYMMETRIC"
    if kind == TokenType.LIMIT and _is(nxt, TokenType.ALL):
        return "MySQL has no LIMIT ALL (leave the LIMIT out)"
    if kind == TokenType.GROUP_BY and _is(nxt, TokenType.ALL):
        return "MySQL has no GROUP BY ALL"
    if kind == TokenType.STAR and prev is not None and prev.token_type in _BEFORE_STAR and (
            which := _word(nxt, "EXCEPT", "REPLACE", "EXCLUDE", "RENAME")):
        return f"MySQL has no SELECT * {which}"
    if kind == TokenType.COLON and _is(nxt, TokenType.VAR, TokenType.NUMBER):
        return "MySQL has no named parameters (write ?)"
    if kind == TokenType.IN and _is(nxt, TokenType.L_PAREN) and _is(after, TokenType.R_PAREN):
        return "IN () needs at least one value"
    return None


def _top_level(tokens: Sequence[Token], open_paren: int) -> Iterator[int]:
    """The indexes of the tokens directly inside the parenthesis at ``open_paren``."""
    depth = 0
    for j in range(open_paren, len(tokens)):
        kind = tokens[j].token_type
        if kind == TokenType.L_PAREN:
            depth += 1
            if depth == 1:
                continue
        elif kind == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return
        if depth == 1:
            yield j


def _check_cast_type(text: str, tokens: Sequence[Token], open_paren: int, name: str) -> None:
    """``CAST(x AS type)`` / ``CONVERT(x, type)`` with a type MySQL's casts do not take
    (``BIGINT``, ``INT``, ``TEXT``, ``VARCHAR``: MySQL's are ``SIGNED``, ``CHAR``, ...)."""
    separator = TokenType.ALIAS if name == "CAST" else TokenType.COMMA
    for j in _top_level(tokens, open_paren):
        if tokens[j].token_type == separator and j + 1 < len(tokens):
            target = tokens[j + 1]
            word = target.text.upper().split()[0] if target.text.strip() else ""
            if word not in _CAST_TYPES:
                raise error_at_token(
                    text, target, f"{name} takes no type {word} in MySQL "
                    "(its types are SIGNED, UNSIGNED, DECIMAL, DOUBLE, FLOAT, CHAR, BINARY, "
                    "DATE, DATETIME, TIME, YEAR, JSON)")
            return


# --------------------------------------------------------------------------- trees


#: Statement nodes sqlglot makes of text that is only an expression (``garbage``,
#: ``SELCT 1`` read as a column with an alias): no MySQL statement starts that way.
_EXPRESSIONS = (exp.Condition, exp.Alias, exp.Star, exp.Tuple, exp.Identifier)


def check_tree(statement: exp.Expr, text: str, tokens: Sequence[Token]) -> None:
    """Refuse what the parsed ``statement`` shows is not MySQL."""
    by_start = {t.start: t for t in tokens}
    if isinstance(statement, _EXPRESSIONS):
        raise syntax_error(text, _first_offset(statement, tokens))
    if tokens and tokens[0].token_type == TokenType.FROM:  # (sqlglot's FROM-first SELECT)
        raise error_at_token(text, tokens[0], "MySQL's SELECT starts with SELECT")
    if isinstance(statement, exp.Update) and not statement.expressions:
        raise syntax_error(text, len(text), "an UPDATE sets columns: UPDATE t SET c = ...")
    for node in statement.walk():
        if isinstance(node, (exp.Limit, exp.Offset)):
            _check_limit_operand(node, text, tokens)
        elif isinstance(node, (exp.Select, exp.SetOperation, exp.Update, exp.Delete)):
            if node.args.get("offset") is not None and node.args.get("limit") is None:
                offset = node.args["offset"]
                raise syntax_error(text, _keyword_before(offset, tokens, TokenType.OFFSET),
                                   "MySQL takes OFFSET only after LIMIT")
        elif isinstance(node, exp.Identifier):
            _check_identifier(node, text, by_start)
        elif isinstance(node, exp.ColumnDef) and isinstance(node.this, exp.Literal):
            raise syntax_error(text, _first_offset(node, tokens),
                               "a column's name is a string here (quote names with `)")
        elif isinstance(node, exp.TableAlias) and node.columns and isinstance(
                node.parent, exp.Table):
            raise syntax_error(text, _first_offset(node.columns[0], tokens),
                               "MySQL takes column names after an alias only for a subquery")
        elif isinstance(node, exp.Any) and not isinstance(node.this, exp.Query):
            raise syntax_error(text, _first_offset(node, tokens),
                               "MySQL takes ANY/SOME only before a subquery")
        if isinstance(node, exp.Func):
            if any(arg is None for arg in node.expressions):  # `VALUES()`: an empty argument
                raise syntax_error(text, _first_offset(node, tokens))
            _check_arguments(node, text)


def _first_offset(node: exp.Expr, tokens: Sequence[Token]) -> int | None:
    """The offset of the first token sqlglot located under ``node`` (None: none was)."""
    offsets = [sub.meta["start"] for sub in node.walk() if "start" in (sub.meta or {})]
    return min(offsets) if offsets else None


def _keyword_before(node: exp.Expr, tokens: Sequence[Token], kind: TokenType) -> int | None:
    """The offset of the last ``kind`` token before ``node``'s first token."""
    start = _first_offset(node, tokens)
    if start is None:
        return None
    found = [t.start for t in tokens if t.token_type == kind and t.start < start]
    return found[-1] if found else start


def _check_limit_operand(node: exp.Limit | exp.Offset, text: str,
                         tokens: Sequence[Token]) -> None:
    """``LIMIT``/``OFFSET`` take an unsigned integer or ``?`` in MySQL, nothing else."""
    value = node.expression
    if isinstance(value, exp.Placeholder) and not value.this:
        return
    if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
        return
    keyword = "LIMIT" if isinstance(node, exp.Limit) else "OFFSET"
    start = _first_offset(value, tokens) if value is not None else None
    if start is not None:  # from the sign of `-1`, which sqlglot does not locate
        index = next((i for i, t in enumerate(tokens) if t.start == start), 0)
        while index > 0 and tokens[index - 1].token_type in (TokenType.DASH, TokenType.PLUS):
            index -= 1
        start = tokens[index].start
    raise syntax_error(text, start, f"{keyword} takes an unsigned integer or ? in MySQL")


def _check_identifier(node: exp.Identifier, text: str, by_start: dict[int, Token]) -> None:
    """A name written as a double-quoted string: in MySQL's default sql_mode "x" is a
    string, so ``FROM "t"`` is a syntax error there (a column alias may be a string)."""
    start = (node.meta or {}).get("start")
    token = by_start.get(start) if start is not None else None
    if token is None or token.token_type not in _STRINGS:
        return
    if isinstance(node.parent, exp.Alias):
        return
    raise syntax_error(text, token.start,
                       "a name is written as a string (MySQL quotes names with `)")


def _check_arguments(node: exp.Func, text: str) -> None:
    """The number of arguments a call was written with, against what the function takes
    (the tree does not always say: sqlglot reads ``COUNT(a, b)`` as a count of ``a``)."""
    count = node.meta.get(WRITTEN_ARGUMENTS)
    if count is None:
        if not isinstance(node, exp.Anonymous):
            return
        count = len(node.expressions)
    written = node.meta.get(WRITTEN_NAME)
    if written is None:
        written = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
    name = str(written).upper()
    if name == "UNIX_TIMESTAMP" and count == 0:
        return  # the current time's: rivulet/sql/clock.py
    message = arity_error(name, count)
    if message is None and count != 1 and (name in _AGGREGATES or name == "TRIM"):
        # TRIM's other forms are written with LEADING/TRAILING/FROM, not commas.
        message = (f"Incorrect parameter count in the call to native function '{name}': "
                   f"expected 1 argument, got {count}")
    if message is not None:
        start = _first_offset(node, ())
        line, col = where(text, start) if start is not None else (None, None)
        raise ArgumentCountError(message, line=line, col=col)
