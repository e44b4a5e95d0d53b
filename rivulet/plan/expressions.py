"""sqlglot scalar expressions to IR expressions, and the kinds they produce.

Name resolution is delegated to a *scope*, so the same translation serves expressions over
a FROM clause, over an aggregate's output, and over a table in an UPDATE.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

from sqlglot import exp

from rivulet.errors import (
    AggregateMisuseError,
    ArgumentCountError,
    UnknownFunctionError,
    UnsupportedSqlError,
)
from rivulet.plan import date_calls, hybrids
from rivulet.plan.ir import Call, Case, Col, Expr, Lit, Param, StatementTime
from rivulet.sql.clock import ClockCall, clock_call, stamped
from rivulet.sql.parse import error_at, position, unsupported
from rivulet.sql.syntax import WRITTEN_NAME, is_mysql_function
from rivulet.values import regexps, types
from rivulet.values.conversions import read_temporal
from rivulet.values.datetexts import fraction_digits
from rivulet.values.registry import (
    SCALAR_FUNCTIONS,
    SHORTER_FORMS,
    arity_error,
    constant_refusal,
)
from rivulet.values.schema import (
    BOOL,
    BYTES,
    DATE,
    DATETIME,
    DECIMAL,
    ENUM,
    FLOAT,
    INT,
    STR,
    TIME,
    Kind,
)
from rivulet.values.times import holds_datetime
from rivulet.values.types import SqlType


class Scope(Protocol):
    def column(self, node: exp.Column) -> Expr: ...

    def special(self, node: exp.Expr) -> Expr | None:
        """An IR expression standing for ``node`` as a whole (an aggregate, a group key)."""

    def types(self) -> Sequence[SqlType]:
        """The static type of each column ``column`` may return."""


#: sqlglot binary node types to function-library names.
BINARY_OPS: dict[type, str] = {
    exp.EQ: "eq",
    exp.NEQ: "ne",
    exp.LT: "lt",
    exp.LTE: "le",
    exp.GT: "gt",
    exp.GTE: "ge",
    exp.NullSafeEQ: "null_safe_eq",
    exp.And: "and_",
    exp.Or: "or_",
    exp.Xor: "xor",
    exp.Add: "add",
    exp.Sub: "sub",
    exp.Mul: "mul",
    exp.Div: "div",
    exp.IntDiv: "int_div",
    exp.Mod: "mod",
    exp.Like: "like",
    exp.BitwiseAnd: "bit_and",
    exp.BitwiseOr: "bit_or",
    exp.BitwiseXor: "bit_xor",
    exp.BitwiseLeftShift: "shift_left",
    exp.BitwiseRightShift: "shift_right",
}

#: sqlglot function node types to SQL function names (the library's registry keys).
FUNCTION_NODES: dict[type, str] = {
    exp.Concat: "CONCAT",
    exp.ConcatWs: "CONCAT_WS",
    exp.Lower: "LOWER",
    exp.Upper: "UPPER",
    exp.Replace: "REPLACE",
    exp.TsOrDsToDate: "DATE",
    exp.Substring: "SUBSTRING",
    exp.Trim: "TRIM",
    exp.Abs: "ABS",
    exp.Round: "ROUND",
    exp.Floor: "FLOOR",
    exp.Ceil: "CEIL",
    exp.Coalesce: "COALESCE",
    exp.Nullif: "NULLIF",
    exp.If: "IF",
    exp.Greatest: "GREATEST",
    exp.Least: "LEAST",
    exp.Year: "YEAR",
    exp.Month: "MONTH",
    exp.Day: "DAY",
    exp.Left: "LEFT",
    exp.Right: "RIGHT",
    exp.Reverse: "REVERSE",
    exp.DateDiff: "DATEDIFF",
    exp.Repeat: "REPEAT",
    exp.Sign: "SIGN",
    exp.Time: "TIME",
    exp.ConvertTimezone: "CONVERT_TZ",
    exp.DayOfMonth: "DAY",
    **{getattr(exp, n): n.upper() for n in ("Hour", "Minute", "Second") if hasattr(exp, n)},
}

#: The spread aggregates' nodes (sqlglot reads MySQL's STD, STDDEV as STDDEV_POP,
#: VARIANCE as VAR_POP, VAR_SAMP as a Variance) to the IR's names of them.
SPREAD_AGGREGATES: dict[type, str] = {
    exp.VariancePop: "var_pop", exp.Variance: "var_samp", exp.StddevPop: "stddev_pop",
    exp.StddevSamp: "stddev_samp",
}
_AGGREGATE_NODES = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.GroupConcat,
                    *SPREAD_AGGREGATES)


def is_aggregate(node: exp.Expr) -> bool:
    return isinstance(node, _AGGREGATE_NODES)


def translate(node: exp.Expr, scope: Scope,
              params: Callable[[exp.Placeholder], Expr] | None = None) -> Expr:
    """The IR expression for ``node``, MySQL's implicit conversions written out
    (:func:`typed`); ``params`` binds ``?`` (write statements only)."""
    return typed(_translate(node, scope, params), scope.types())[0]


def translate_condition(node: exp.Expr, scope: Scope,
                        params: Callable[[exp.Placeholder], Expr] | None = None) -> Expr:
    """:func:`translate` for a condition (a ``WHERE``, ``ON`` or ``HAVING`` term), whose
    value is read as a truth value, that is as a number (see :func:`_as_number_read`)."""
    written = _translate(node, scope, params)
    return _as_number_read(*typed(written, scope.types()), written)[0]


def _translate(node: exp.Expr, scope: Scope,
               params: Callable[[exp.Placeholder], Expr] | None) -> Expr:
    special = scope.special(node)
    if special is not None:
        return special
    t = lambda n: _translate(n, scope, params)  # noqa: E731
    if isinstance(node, exp.Paren):
        return t(node.this)
    call = clock_call(node)
    if call is not None:
        return _clock(node, call, params)
    if isinstance(node, exp.Column):
        if isinstance(node.this, exp.Star):
            raise unsupported(node, "* in an expression")
        return scope.column(node)
    if isinstance(node, exp.Placeholder):
        if params is None:
            raise _parameter_here(node)
        return params(node)
    if isinstance(node, (exp.Literal, exp.Null, exp.Boolean)):
        return literal(node)
    if isinstance(node, (exp.HexString, exp.BitString)):
        return _hybrid(node, scope, t)
    if isinstance(node, exp.Neg):
        inner = t(node.this)
        if isinstance(inner, Lit) and isinstance(inner.value, (int, float, decimal.Decimal)):
            return Lit(-inner.value, inner.kind)
        return Call("neg", (inner,))
    if isinstance(node, exp.BitwiseNot):
        return Call("bit_not", (t(node.this),))
    if isinstance(node, exp.Not):
        if isinstance(node.this, exp.Is):
            return Call("is_not_null", (t(node.this.this),))
        if isinstance(node.this, exp.In):
            return Call("not_", (t(node.this),))
        return Call("not_", (t(node.this),))
    if isinstance(node, exp.Is):
        if not isinstance(node.expression, exp.Null):
            raise unsupported(node, "IS other than IS [NOT] NULL")
        return Call("is_null", (t(node.this),))
    if isinstance(node, exp.Exists):
        raise unsupported(node, "EXISTS subquery other than a term of WHERE's AND (under "
                          "OR or NOT, in an expression, in ON, HAVING or a write)")
    if isinstance(node, exp.In) and node.args.get("query"):
        # (elsewhere its value is joined to the row: rivulet/plan/quantified.py)
        raise unsupported(node, "IN with a subquery in ON, GROUP BY, an aggregate's argument "
                          "or a write")
    if isinstance(node, (exp.Any, exp.All)):
        raise unsupported(node, f"{type(node).__name__.upper()} subquery other than after =, "
                          "<>, <, <=, > or >= in WHERE, the select list, HAVING or ORDER BY "
                          "(in ON, GROUP BY, an aggregate's argument or a write)")
    if isinstance(node, (exp.Subquery, exp.Select)):
        raise unsupported(node, "scalar subquery other than in WHERE, the select list, "
                          "HAVING or ORDER BY (in ON, GROUP BY, an aggregate's argument or "
                          "a write)")
    if isinstance(node, exp.In):
        if node.args.get("unnest") or node.args.get("field"):
            raise unsupported(node, "IN with a subquery")
        return Call("in_list", (t(node.this), *[t(e) for e in node.expressions]))
    if isinstance(node, exp.Between):
        return Call("between", (t(node.this), t(node.args["low"]), t(node.args["high"])))
    if isinstance(node, exp.Like):
        if node.args.get("escape"):
            raise unsupported(node, "LIKE ... ESCAPE")
        like = Call("like", (t(node.this), t(node.expression)))
        return Call("not_", (like,)) if node.args.get("negate") else like
    if isinstance(node, exp.Escape):
        # s [NOT] LIKE pattern ESCAPE c: sqlglot wraps the LIKE (its negation inside).
        if not isinstance(node.this, exp.Like):
            raise unsupported(node, "ESCAPE other than after LIKE")
        like_node = node.this
        like = Call("like", (t(like_node.this), t(like_node.expression), t(node.expression)))
        return Call("not_", (like,)) if like_node.args.get("negate") else like
    if isinstance(node, exp.RegexpLike):
        if node.args.get("flag") is not None:
            raise unsupported(node, "REGEXP_LIKE with a match type")
        return _regexp(node, node.this, node.expression, t)
    if isinstance(node, exp.Anonymous) and node.name.upper() == "REGEXP_LIKE":
        if len(node.expressions) == 3:
            raise unsupported(node, "REGEXP_LIKE with a match type")
        if len(node.expressions) != 2:
            raise error_at(node, "Incorrect parameter count in the call to native function "
                                 f"'REGEXP_LIKE': expected 2 to 3 arguments, got "
                                 f"{len(node.expressions)}", ArgumentCountError)
        subject, pattern = node.expressions
        return _regexp(node, subject, pattern, t)
    if isinstance(node, exp.Anonymous):
        with_unit = date_calls.unit_call(node, t)
        if with_unit is not None:
            return with_unit
    if isinstance(node, exp.Extract):
        return date_calls.extract_call(node, t)
    if isinstance(node, (exp.Add, exp.Sub)):
        shifted = date_calls.shift_operation(node, t)
        if shifted is not None:
            return shifted
    if isinstance(node, exp.Anonymous) and node.name.upper() in ("ADDTIME", "SUBTIME"):
        # (not the registry's: its first argument must be a TIME or a DATETIME, which the
        # checks of every registry function's call with any arguments would not meet)
        if len(node.expressions) != 2:
            raise error_at(node, "Incorrect parameter count in the call to native function "
                                 f"'{node.name.upper()}': expected 2 arguments, got "
                                 f"{len(node.expressions)}", ArgumentCountError)
        return Call(node.name.lower(), tuple(t(a) for a in node.expressions))
    if isinstance(node, exp.DPipe):
        # In MySQL's default mode || is logical OR.
        return Call("or_", (t(node.this), t(node.expression)))
    op = BINARY_OPS.get(type(node))
    if op is not None:
        return Call(op, (t(node.this), t(node.expression)))
    if isinstance(node, exp.Case):
        return _case(node, t)
    if isinstance(node, exp.Cast):
        return _cast(node, t)
    if isinstance(node, exp.Length):
        name = "LENGTH" if node.args.get("binary") else "CHAR_LENGTH"
        return Call(name, (t(node.this),))
    if isinstance(node, exp.Pad):  # LPAD / RPAD
        name = "LPAD" if node.args.get("is_left") else "RPAD"
        fill = node.args.get("fill_pattern")
        if fill is None:
            raise error_at(node, f"Incorrect parameter count in the call to native function "
                                 f"'{name}'")
        return Call(name, (t(node.this), t(node.expression), t(fill)))
    if isinstance(node, exp.StrPosition):
        args = [node.args["substr"], node.this]
        if node.args.get("position") is not None:
            args.append(node.args["position"])
        return Call("LOCATE", tuple(t(a) for a in args))
    if isinstance(node, exp.MatchAgainst):
        raise full_text_search(node)
    function = FUNCTION_NODES.get(type(node))
    if function is not None:
        assert isinstance(node, exp.Func)  # FUNCTION_NODES names function nodes
        return _call(node, function, _function_args(node), t)
    if isinstance(node, exp.Anonymous):
        return _call(node, node.name.upper(), list(node.expressions), t)
    if is_aggregate(node):
        raise error_at(node, f"aggregate {node.sql(dialect='mysql')!r} is not allowed here",
                       AggregateMisuseError)
    if isinstance(node, exp.Func) and node.meta.get(WRITTEN_NAME):
        raise unsupported_function(node, str(node.meta[WRITTEN_NAME]))
    raise unsupported(node, "expression")


def _regexp(node: exp.Expr, subject: exp.Expr, pattern: exp.Expr,
            t: Callable[[exp.Expr], Expr]) -> Call:
    """``subject REGEXP pattern``, its pattern a constant rivulet matches as MySQL does
    (rivulet/values/regexps.py); any other pattern is refused by name."""
    written = pattern
    while isinstance(written, exp.Paren):
        written = written.this
    if not (isinstance(written, exp.Null) or (isinstance(written, exp.Literal)
                                                and written.is_string)):
        raise unsupported(node, "REGEXP with a pattern that is not a text constant")
    refused = regexps.refusal(literal(written).value)
    if refused is not None:
        raise unsupported(node, refused)
    return Call("regexp", (t(subject), t(pattern)))


def _hybrid(node: hybrids.Hybrid, scope: Scope, t: Callable[[exp.Expr], Expr]) -> Lit:
    """A hex or bit literal as the number or the binary string its position reads it as
    (rivulet/plan/hybrids.py): a comparison's operand is text if every other operand is."""
    where = hybrids.context(node)
    if where is None and _first_text_argument(node):
        # (a function whose result is binary if any text argument is: as CONCAT)
        parent = node.parent
        name = parent.name.upper() if isinstance(parent, exp.Anonymous) else (
            FUNCTION_NODES.get(type(parent)))
        where = "joined" if name in _TEXT_ANY_ARG else "text"
    if where == "compared":
        child: exp.Expr = node
        while isinstance(child.parent, exp.Paren):
            child = child.parent
        assert child.parent is not None
        others = [o for o in child.parent.iter_expressions() if o is not child]
        kinds = {typed(t(o), scope.types())[1].kind for o in others
                 if not isinstance(o, (exp.HexString, exp.BitString))}
        where = "text" if kinds and kinds <= types.TEXT_KINDS else None
    if where == "joined":
        assert node.parent is not None
        joined = [t(o) for o in node.parent.iter_expressions() if o is not node
                  and not isinstance(o, (exp.HexString, exp.BitString))]
        where = "text" if all(_constant(o) for o in joined) else None
    if where == "number":
        return Lit(hybrids.as_number(node), INT)
    if where == "text":
        return Lit(hybrids.as_bytes(node), BYTES)
    raise hybrids.refused_here(node)


def _first_text_argument(node: exp.Expr) -> bool:
    """Whether ``node`` is the first argument of a function that reads it as text."""
    parent = node.parent
    if isinstance(parent, exp.Anonymous):
        return parent.name.upper() in _READS_TEXT and parent.expressions[:1] == [node]
    if isinstance(parent, exp.Length):
        return True
    name = FUNCTION_NODES.get(type(parent))
    return name is not None and name in _READS_TEXT and node.arg_key == "this"


def _call(node: exp.Func, name: str, arguments: list[exp.Expr],
          t: Callable[[exp.Expr], Expr]) -> Call:
    """The call of registry function ``name``: a name rivulet lacks is refused here, at
    plan time, as MySQL refuses it (1305 for a name MySQL lacks too, else 1235), and so
    is a number of arguments the function does not take (1582)."""
    if name not in SCALAR_FUNCTIONS:
        written = node.name if isinstance(node, exp.Anonymous) else name
        if not is_mysql_function(written):
            raise error_at(node, f"FUNCTION {written} does not exist", UnknownFunctionError)
        raise unsupported_function(node, written)
    message = arity_error(name, len(arguments))
    if message is not None:
        raise error_at(node, message, ArgumentCountError)
    most, form = SHORTER_FORMS.get(name, (len(arguments), ""))
    if len(arguments) > most:
        raise unsupported(node, form)
    for at, argument in enumerate(arguments):
        refusal = constant_refusal(name, at)
        if refusal is None:
            continue
        try:
            refused = refusal(literal_value(argument))
        except UnsupportedSqlError:
            refused = f"{name} with an argument that is not a constant"
        if refused is not None:
            raise unsupported(node, refused)
    return Call(name, tuple(t(a) for a in arguments))


def _clock(node: exp.Expr, call: ClockCall,
           params: Callable[[exp.Placeholder], Expr] | None) -> Call:
    """A time function (rivulet/sql/clock.py): of the instant a read noted on it (a
    constant), else of the write statement's instant (:class:`~rivulet.plan.ir.
    StatementTime`). Without either it is in a view (or a CHECK constraint), whose answer
    would change with no write: refused by name."""
    at = stamped(node)
    if at is None and params is None:
        line, col = position(node)
        raise UnsupportedSqlError(
            f"unsupported {call.name}() in a view (or a CHECK constraint): its answer would "
            "change with no write to keep it up to date; compute the time in the query "
            "that reads the view, or pass it as a ? parameter (docs/sql.md)",
            line=line, col=col)
    instant: Expr = StatementTime() if at is None else Lit(at, DATETIME)
    if call.function in ("now_at", "curtime_at"):
        return Call(call.function, (instant, Lit(call.fsp, INT)))
    return Call(call.function, (instant,))


def full_text_search(node: exp.MatchAgainst) -> UnsupportedSqlError:
    """The error for ``MATCH (cols) AGAINST (text [mode])``: MySQL's full-text search
    answers from a FULLTEXT index's words (its tokenizer, stopwords, minimum word length
    and relevance), which rivulet does not keep (its FULLTEXT keys are in schemas only),
    so it refuses the search by name rather than answer otherwise."""
    return unsupported(node, "MATCH ... AGAINST (full-text search)")


def unsupported_function(node: exp.Expr, name: str) -> UnsupportedSqlError:
    """The error for a call of a MySQL function rivulet does not have."""
    line, col = position(node)
    return UnsupportedSqlError(f"unsupported function {name.upper()}()", line=line, col=col)


def _parameter_here(node: exp.Expr) -> UnsupportedSqlError:
    where = node.parent
    clauses = (exp.Select, exp.Join, exp.Where, exp.Having, exp.Order, exp.Group)
    while where is not None and not isinstance(where, clauses):
        where = where.parent
    names: dict[type, str] = {exp.Join: "JOIN ... ON", exp.Having: "HAVING",
                              exp.Order: "ORDER BY", exp.Group: "GROUP BY",
                              exp.Where: "this position of WHERE"}
    clause = names.get(type(where), "the SELECT list")
    line, col = position(where if where is not None else node)
    return UnsupportedSqlError(
        f"unsupported ? parameter in {clause}: parameters go in the WHERE clause as "
        "`column = ?`, `column IN (?, ...)` or a range condition",
        line=line, col=col,
    )


def _function_args(node: exp.Func) -> list[exp.Expr]:
    if isinstance(node, (exp.Coalesce, exp.Greatest, exp.Least)):
        return [node.this, *node.expressions]
    if isinstance(node, (exp.Concat, exp.ConcatWs)):
        return list(node.expressions)
    if isinstance(node, exp.Trim):
        # TRIM(s), LTRIM(s) and RTRIM(s) (sqlglot: a position, no remstr) and
        # TRIM([BOTH|LEADING|TRAILING] [remstr] FROM s): values.trim(s, remstr, where).
        where = str(node.args.get("position") or "BOTH").upper()
        remstr = node.args.get("expression")
        if remstr is None and where == "BOTH":
            return [node.this]
        return [node.this, remstr if remstr is not None else exp.Literal.string(" "),
                exp.Literal.string(where)]
    if isinstance(node, exp.If):
        return [node.this, node.args["true"], node.args.get("false") or exp.Null()]
    if isinstance(node, exp.DateDiff):
        return [node.this, node.expression]
    if isinstance(node, exp.Replace):
        return [node.this, node.expression, node.args["replacement"]]
    if isinstance(node, exp.ConvertTimezone):
        return [node.args["timestamp"], node.args["source_tz"], node.args["target_tz"]]
    args = [node.this] if node.this is not None else []
    for key in ("expression", "start", "length", "decimals", "times"):
        value = node.args.get(key)
        if value is not None:
            args.append(value)
    return args


def _case(node: exp.Case, t: Callable[[exp.Expr], Expr]) -> Expr:
    subject = node.this
    whens = []
    for when in node.args.get("ifs") or []:
        cond = t(when.this)
        if subject is not None:
            cond = Call("eq", (t(subject), cond))
        whens.append((cond, t(when.args["true"])))
    default = node.args.get("default")
    return Case(tuple(whens), None if default is None else t(default))


_CAST_KINDS = {
    "SIGNED": INT, "INT": INT, "BIGINT": INT, "UNSIGNED": INT, "UBIGINT": INT, "UINT": INT,
    "DECIMAL": DECIMAL, "DOUBLE": FLOAT, "FLOAT": FLOAT, "CHAR": STR, "VARCHAR": STR,
    "TEXT": STR, "DATE": DATE, "DATETIME": DATETIME, "BINARY": BYTES, "VARBINARY": BYTES,
    "TIME": TIME,
}


_UNSIGNED_TARGETS = {"UNSIGNED", "UBIGINT", "UINT"}


def _cast(node: exp.Cast, t: Callable[[exp.Expr], Expr]) -> Expr:
    target = node.to.this.name if hasattr(node.to.this, "name") else str(node.to.this)
    kind = _CAST_KINDS.get(target.upper())
    if kind is None:
        raise unsupported(node, f"CAST to {target}")
    if kind == TIME and node.to.expressions:  # CAST(x AS TIME(fsp)): the digits kept
        fsp = literal(node.to.expressions[0].this)
        if not (fsp.kind == INT and 0 <= fsp.value <= 6):
            raise error_at(node, f"CAST to {node.to.sql(dialect='mysql')}: MySQL allows 0 "
                                 "to 6 fractional digits")
        return Call("cast_time", (t(node.this), fsp))
    if kind == DECIMAL:  # DECIMAL(precision, scale); plain DECIMAL is DECIMAL(10, 0)
        params = [int(p.this.name) for p in node.to.expressions
                  if isinstance(p, exp.DataTypeParam) and p.this.name.isdigit()]
        precision, scale = (params + [10, 0][len(params):])[:2] if params else (10, 0)
        if not (0 < precision <= 65 and scale <= min(38, precision)):
            raise error_at(node, f"CAST to DECIMAL({precision}, {scale}): the precision must "
                           "be 1 to 65 and the scale at most 38 and at most the precision")
        return Call("cast_decimal", (t(node.this), Lit(precision, INT), Lit(scale, INT)))
    if target.upper() == "FLOAT":
        # (FLOAT(p): single precision up to p = 24, a DOUBLE past it)
        params = [int(p.this.name) for p in node.to.expressions
                  if isinstance(p, exp.DataTypeParam) and p.this.name.isdigit()]
        if not params or params[0] <= 24:  # (MySQL 8: single precision, 0.3 not
            return Call("cast_single", (t(node.this),))  # 0.30000000000000004)
    if kind == INT and target.upper() in _UNSIGNED_TARGETS:
        return Call("cast_unsigned", (t(node.this),))
    if kind == INT:  # a string's integer prefix, as MySQL's CAST ('1e3' is 1)
        return Call("cast_int", (t(node.this), Lit(1, INT)))
    return Call(f"cast_{kind}", (t(node.this),))


#: The first integer a BIGINT UNSIGNED cannot hold.
_PAST_BIGINT = 2 ** 64


def literal(node: exp.Expr) -> Lit:
    if isinstance(node, exp.Null):
        return Lit(None, None)
    if isinstance(node, exp.Boolean):
        return Lit(int(node.this), BOOL)
    if node.is_string:
        return Lit(node.this, STR)
    text = node.this
    try:
        number = int(text)
    except ValueError:
        pass
    else:  # past BIGINT UNSIGNED, MySQL reads an integer as an exact DECIMAL
        return Lit(number, INT) if number < _PAST_BIGINT else Lit(decimal.Decimal(text), DECIMAL)
    try:
        if "e" in text.lower():
            return Lit(float(text), FLOAT)
        # MySQL reads 1.5 as an exact DECIMAL literal.
        return Lit(decimal.Decimal(text), DECIMAL)
    except (ValueError, decimal.InvalidOperation):
        # The parser reads '1e7+1234' as one number: refused rather than misread.
        raise UnsupportedSqlError(f"unsupported number literal {text!r}: write a space "
                                  "before a + or - that follows an exponent") from None


def literal_value(node: exp.Expr) -> object:
    """A constant's Python value (for INSERT ... VALUES)."""
    if isinstance(node, exp.Neg):
        return -literal_value(node.this)  # type: ignore[operator]
    if isinstance(node, exp.Paren):
        return literal_value(node.this)
    if isinstance(node, (exp.Literal, exp.Null, exp.Boolean)):
        return literal(node).value
    raise unsupported(node, "non-constant value")


# --------------------------------------------------------------------------- types

PREDICATES = {"eq", "ne", "lt", "le", "gt", "ge", "null_safe_eq", "and_", "or_", "xor",
               "not_", "like", "not_like", "regexp", "in_list", "between", "between_dates",
               "is_null", "is_not_null"}
_STRING_FUNCTIONS = {"CONCAT", "CONCAT_WS", "LOWER", "LCASE", "UPPER", "UCASE", "SUBSTRING",
                     "SUBSTR", "MID", "LEFT", "RIGHT", "TRIM", "LTRIM", "RTRIM", "REPLACE",
                     "REVERSE", "LPAD", "RPAD", "REPEAT"}
#: String functions whose result is binary if any argument is (the others: the first).
_TEXT_ANY_ARG = {"CONCAT", "CONCAT_WS", "REPLACE", "LPAD", "RPAD", "TRIM"}
#: The JSON functions that give text (always text: rivulet/values/json_text.py).
_JSON_TEXT_FUNCTIONS = {"JSON_TYPE", "JSON_KEYS", "JSON_UNQUOTE", "JSON_EXTRACT", "JSON_QUOTE"}
_INT_FUNCTIONS = {"JSON_VALID", "JSON_LENGTH", "JSON_CONTAINS", "JSON_CONTAINS_PATH",
                  "LENGTH", "OCTET_LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH", "LOCATE",
                  "INSTR", "YEAR", "MONTH", "DAY", "DAYOFMONTH", "HOUR", "MINUTE", "SECOND",
                  "MICROSECOND",
                  "DATEDIFF", "SIGN", "cast_int", "TIME_TO_SEC", "BIT_COUNT", "DAYOFWEEK",
                  "WEEKDAY", "DAYOFYEAR", "ASCII", "ORD"}
#: The functions that give a DOUBLE of their arguments read as DOUBLEs (rivulet/values/
#: powers.py).
_DOUBLE_FUNCTIONS = {"LN", "LOG", "LOG2", "LOG10", "EXP", "POW", "POWER", "SQRT"}
#: The bit operators (rivulet/values/bits.py): BIGINT UNSIGNED of their operands' bits.
_BIT_OPERATORS = {"bit_and", "bit_or", "bit_xor", "bit_not", "shift_left", "shift_right"}
#: Functions that give a TIME; its fractional digits are those of the arguments
#: (:func:`_time_digits`), or of ``CAST(x AS TIME(fsp))``.
_TIME_FUNCTIONS = {"TIME", "TIMEDIFF", "SEC_TO_TIME", "cast_time"}
#: Functions that read their arguments as text: a TIME or DATETIME with fractional digits
#: is handed to them as its text with exactly those digits ('01:02:03.500' for a TIME(3)).
_READS_TEXT = {"CONCAT", "CONCAT_WS", "LOWER", "LCASE", "UPPER", "UCASE", "SUBSTRING",
               "SUBSTR", "MID", "LEFT", "RIGHT", "TRIM", "LTRIM", "RTRIM", "REPLACE", "REVERSE",
               "LPAD", "RPAD", "REPEAT", "like", "regexp", "ASCII", "ORD", "UNHEX", "LENGTH",
               "OCTET_LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH", "LOCATE", "INSTR",
               "cast_bytes", "JSON_VALID", "JSON_LENGTH", "JSON_CONTAINS",
               "JSON_CONTAINS_PATH", *_JSON_TEXT_FUNCTIONS}
#: Functions that read their arguments as numbers: a TIME or DATETIME with fractional
#: digits is handed to them as the DECIMAL [-]HHMMSS.ff (YYYYMMDDhhmmss.ff) with exactly
#: those places.
_READS_NUMBER = {"add", "sub", "mul", "div", "mod", "MOD", "int_div", "SIGN", "neg", "ABS",
                 "ROUND", "FLOOR", "CEIL", "CEILING", "BIT_COUNT", *_BIT_OPERATORS,
                 *_DOUBLE_FUNCTIONS}
#: Rounding a TIME gives a TIME in MariaDB and a number in MySQL: refused.
_ROUNDING = {"ROUND", "FLOOR", "CEIL", "CEILING"}
_ARITHMETIC = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "mod": "mod",
               "MOD": "mod", "int_div": "int_div"}
#: The comparisons of two values.
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "null_safe_eq"}
#: Everything that compares its arguments (as numbers, if one of them is a number).
_COMPARES = _COMPARISONS | {"in_list", "between"}
#: Functions that read (some of) their arguments as truth values (``IF``: its first).
_READS_TRUTH = {"and_", "or_", "not_", "xor", "IF"}
#: Functions that read a DECIMAL with all the places it carries: arithmetic, the numeric
#: functions, conversions to numbers, the choosers, ``IN`` and ``BETWEEN``. The others
#: (text, dates, comparison with ``=``, ``<``, ``<=>``, ``NULLIF``: MariaDB rounds both
#: operands of those, unless it compares them as DOUBLEs) read it at its shown places.
_READS_CARRIED_PLACES = {
    "add", "sub", "mul", "div", "mod", "MOD", "int_div", "neg", "ABS", "ROUND", "FLOOR",
    "CEIL", "CEILING", "SIGN", "cast_decimal", "cast_int", "cast_unsigned", "cast_float",
    "to_scale", "in_list", "between", "COALESCE", "IFNULL", "IF", "GREATEST", "LEAST", "and_",
    "or_", "not_", "xor", "is_null", "is_not_null", *_DOUBLE_FUNCTIONS,
}


def literal_type(lit: Lit) -> SqlType:
    if lit.value is None:
        return types.NULL
    if lit.kind == BOOL:
        return SqlType(BOOL)
    return types.value_type(lit.value)


def typed(expr: Expr, input_types: Sequence[SqlType]) -> tuple[Expr, SqlType]:
    """``expr`` with MySQL's implicit conversions written out, and its static type.

    Over columns of ``input_types``. Each branch of a ``CASE``, ``COALESCE``, ``IF``,
    ``IFNULL`` is converted to the type of the whole (:func:`rivulet.values.types.aggregate`:
    an INT branch of a VARCHAR ``CASE`` becomes text); the arguments of ``GREATEST``/
    ``LEAST`` to the type they are compared as; a DECIMAL that carries more places than it
    shows (a quotient) is rounded to them where MySQL rounds it (``=``, text). Both back
    ends evaluate the result, so they agree on every value's type.
    """
    if isinstance(expr, Col):
        return expr, input_types[expr.index]
    if isinstance(expr, Lit):
        return expr, literal_type(expr)
    if isinstance(expr, Param):
        return expr, types.NULL
    if isinstance(expr, StatementTime):
        return expr, _INSTANT
    if isinstance(expr, Case):
        whens = [(_as_number_read(*typed(c, input_types), c)[0], typed(v, input_types))
                 for c, v in expr.whens]
        default = typed(expr.default, input_types) if expr.default is not None else None
        result = types.aggregate([t for _, (_, t) in whens] + ([default[1]] if default else []))
        return Case(
            tuple((c, convert(v, t, result)) for c, (v, t) in whens),
            convert(default[0], default[1], result) if default is not None else None,
        ), result
    assert isinstance(expr, Call)
    pairs = [typed(a, input_types) for a in expr.args]
    args = [a for a, _ in pairs]
    arg_types = [t for _, t in pairs]
    fn = expr.fn
    if fn in _READS_NUMBER or fn in _READS_TRUTH or (
            fn in _COMPARES and any(t.kind in types.NUMBER_KINDS for t in arg_types)):
        pairs = [_as_number_read(a, t, expr.args[i]) if fn != "IF" or i == 0 else (a, t)
                 for i, (a, t) in enumerate(zip(args, arg_types))]
        args = [a for a, _ in pairs]
        arg_types = [t for _, t in pairs]
    if fn in ("cast_decimal", "cast_float"):  # (not cast_int: MariaDB's val_int differs)
        args = [_json_as_number(args[0]), *args[1:]]
    compares = fn in _COMPARISONS or (fn == "in_list" and len(args) == 2)  # (IN (x): x =)
    if fn in _COMPARES and _json_against_text(args, arg_types):
        raise UnsupportedSqlError(
            "unsupported comparison of a JSON_EXTRACT value with text (MySQL 8 compares "
            "them as JSON, MariaDB unquotes one side: JSON_EXTRACT(d, '$.a') = 'x' is 1 in "
            "both, which rivulet's text comparison would not give); compare "
            "JSON_UNQUOTE(JSON_EXTRACT(...)) or d->>'$.a' with the text")
    if compares and any(t.rounded for t in arg_types):
        if _compared_as_doubles(args, arg_types):
            # Compared as DOUBLEs, a quotient is its unrounded value (MySQL's val_real):
            # 10/3 = 3.3333e0 is 0, where 10/3 = 3.3333 (as DECIMALs, rounded) is 1.
            args = [Call("cast_float", (a,)) if t.rounded else a
                    for a, t in zip(args, arg_types)]
            arg_types = [types.FLOAT_TYPE if t.rounded else t for t in arg_types]
        else:
            args = [shown(a, t) for a, t in zip(args, arg_types)]
            arg_types = [shown_type(t) for t in arg_types]
    if fn not in _READS_CARRIED_PLACES:
        args = [shown(a, t) for a, t in zip(args, arg_types)]
        arg_types = [shown_type(t) for t in arg_types]
    if fn == "between" and types.between_as_doubles(t.kind for t in arg_types):
        args = [a if t.kind == FLOAT else Call("cast_float", (a,))
                for a, t in zip(args, arg_types)]
        return Call(fn, tuple(args)), types.INT_TYPE
    if fn == "between" and types.between_as_dates(t.kind for t in arg_types):
        return Call("between_dates", tuple(args)), types.INT_TYPE
    if fn == "between" and types.between_as_times(t.kind for t in arg_types):
        args = [a if t.kind == TIME else Call("compared_time", (a,))
                for a, t in zip(args, arg_types)]
        return Call(fn, tuple(args)), types.INT_TYPE
    if fn in ("COALESCE", "IFNULL"):
        result = types.aggregate(arg_types)
        args = [convert(a, t, result) for a, t in zip(args, arg_types)]
        return Call(fn, tuple(args)), result
    if fn == "IF":
        result = types.aggregate(arg_types[1:], null_is_signed=False)
        args = args[:1] + [convert(a, t, result) for a, t in zip(args[1:], arg_types[1:])]
        return Call(fn, tuple(args)), result
    if fn in ("GREATEST", "LEAST"):
        result = types.extreme(arg_types)
        if result.kind == TIME:
            # Compared as TIMEs: text or a number that is none makes the answer NULL.
            result = types.time_type(max(_time_digits(a, t) for a, t in zip(args, arg_types)))
            args = [a if t.kind == TIME else Call("cast_time", (a, Lit(result.scale, INT)))
                    for a, t in zip(args, arg_types)]
            return Call(fn, tuple(args)), result
        if result.kind in types.DATE_KINDS:
            # Compared as dates, text or a number that is not one counting as the zero date
            # (values.coerce_pair), which is what LEAST then answers: NULL here.
            _refuse_undated_extreme(fn, args, arg_types)
            return Call(f"cast_{result.kind}", (Call(fn, tuple(args)),)), result
        args = [convert(a, t, result) for a, t in zip(args, arg_types)]
        return Call(fn, tuple(args)), result
    if fn in _ROUNDING and arg_types and arg_types[0].kind == TIME:
        raise UnsupportedSqlError(f"unsupported {fn}() of a TIME: MariaDB rounds it to a "
                                  "TIME, MySQL to a number; use TIME_TO_SEC() or CAST first")
    if fn in _BIT_OPERATORS or fn == "BIT_COUNT":
        _refuse_bit_operands(fn, args, arg_types)
    if fn in ("addtime", "subtime"):
        return _shifted_time(fn, args, arg_types)
    if fn in date_calls.DATE_CALLS:
        date_calls.check(fn, args, arg_types)
    if fn == "HEX" and arg_types[0].kind in types.TEMPORAL_KINDS:
        raise UnsupportedSqlError(f"unsupported HEX() of a {arg_types[0].kind}: write HEX of "
                                  "its text (CAST AS CHAR) or of its number")
    if fn == "JSON_QUOTE" and arg_types[0].kind not in (STR, None):
        raise UnsupportedSqlError(f"unsupported JSON_QUOTE() of a {arg_types[0].kind}: "
                                  "MariaDB answers NULL, MySQL 8 fails (3064); quote text")
    if fn == "regexp" and any(t.kind == BYTES for t in arg_types):
        raise UnsupportedSqlError("unsupported REGEXP over a binary string (MySQL 8 refuses "
                                  "it, MariaDB matches its bytes)")
    if fn in ("neg", "ABS") and arg_types[0].kind in types.TEMPORAL_KINDS and (
            fn == "neg" or arg_types[0].kind == TIME):
        # MySQL: -DATE is a DECIMAL, and so are -TIME and ABS(TIME), with the TIME's places
        number = types.number_type(arg_types[0])
        result = types.decimal_type(number.scale)
        return to_places(Call(fn, (as_number(args[0], arg_types[0]),)), result), result
    if fn in _READS_NUMBER:
        args = [as_number(a, t) for a, t in zip(args, arg_types)]
    elif fn in _READS_TEXT:
        args = [as_text(a, t) for a, t in zip(args, arg_types)]
    elif fn == "cast_str" and arg_types[0].kind in (TIME, DATETIME) and arg_types[0].scale:
        return Call(fn, (args[0], Lit(arg_types[0].scale, INT))), types.STR_TYPE
    elif fn == "cast_str" and _fixed_double(arg_types[0]):
        return Call(fn, (args[0], Lit(arg_types[0].decimals, INT))), types.STR_TYPE
    elif fn == "cast_str" and arg_types[0].single:
        return Call("single_str", (args[0],)), types.STR_TYPE
    result = result_type(fn, arg_types, args)
    if fn == "UNIX_TIMESTAMP" and result.kind == DECIMAL:  # of a DATETIME(fsp), of text
        return to_places(Call(fn, tuple(args)), result), result  # its places, a fraction or not
    call: Expr = Call(fn, tuple(args))
    if fn == "ROUND" and result.kind == DECIMAL and (not (
            len(args) < 2 or (isinstance(args[1], Lit) and type(args[1].value) is int))
            or types.number_type(arg_types[0]).kind == INT):
        # the places ROUND keeps are known only per row; an integer rounded to tens past a
        # BIGINT's digits is a DECIMAL
        call = to_places(call, result)
    if fn in ("FLOOR", "CEIL", "CEILING") and result.kind == DECIMAL:
        call = to_places(call, result)  # (an integer too wide for a BIGINT: a DECIMAL)
    return call, result


#: The integer digits of a DECIMAL whose every value fits a signed BIGINT.
_SIGNED_BIGINT_DIGITS = 18


def _refuse_bit_operands(fn: str, args: Sequence[Expr], arg_types: Sequence[SqlType]) -> None:
    """Refuse the operands of a bit operator on which MySQL 8 and MariaDB differ
    (rivulet/values/bits.py): a binary string (MySQL 8 computes on its bytes), a DOUBLE
    (MySQL rounds its halves to even), text that is not a constant, and a DECIMAL that may
    pass a signed BIGINT (MySQL saturates it at 2**63 - 1, MariaDB reads it unsigned)."""
    what = "BIT_COUNT()" if fn == "BIT_COUNT" else "a bit operator"
    for a, t in zip(args, arg_types):
        reason = None
        if t.kind == BYTES:
            reason = "a binary string (MySQL 8 works on its bytes)"
        elif t.kind == FLOAT:
            reason = "a DOUBLE (MySQL rounds its halves to even; use ROUND or CAST first)"
        elif t.kind == STR and not isinstance(a, Lit):
            reason = "text that is not a constant (use CAST(x AS SIGNED) first)"
        elif t.kind == DECIMAL and types.int_digits(t) > _SIGNED_BIGINT_DIGITS:
            reason = "a DECIMAL that may pass a signed BIGINT"
        if reason is not None:
            raise UnsupportedSqlError(f"unsupported {what} over {reason}")


#: A time written plainly: what MySQL and MariaDB read alike as ADDTIME's second argument.
_PLAIN_TIME = re.compile(r"-?(\d{1,2} )?\d{1,3}:\d{1,2}(:\d{1,2}(\.\d{1,6})?)?", re.ASCII)


def _shifted_time(fn: str, args: Sequence[Expr], arg_types: Sequence[SqlType]
                  ) -> tuple[Expr, SqlType]:
    """``ADDTIME``/``SUBTIME`` of a TIME (a TIME, cast to its digits: clipped to
    838:59:59) or of a DATETIME (a DATETIME), by a TIME, text or an exact number read as a
    TIME. Refused: a DATE or text first (MySQL's result is text, MariaDB's a DATETIME or
    text in a form of its own), and a second of another kind."""
    first, second = arg_types
    if first.kind not in (TIME, DATETIME):
        raise UnsupportedSqlError(f"unsupported {fn.upper()}() of a {first.kind or 'NULL'}: MySQL "
                                  "answers text for anything but a TIME or a DATETIME; "
                                  "CAST it AS TIME or AS DATETIME first")
    plain = isinstance(args[1], Lit) and (args[1].value is None or (
        isinstance(args[1].value, str) and _PLAIN_TIME.fullmatch(args[1].value)))
    if second.kind != TIME and not plain:
        raise UnsupportedSqlError(
            f"unsupported {fn.upper()}() by a {second.kind or 'NULL'} that is not a TIME or a "
            "constant '[-][D ]hh:mm[:ss[.fraction]]' (MySQL and MariaDB read other text and "
            "numbers as times differently)")
    digits = max(_time_digits(a, t) for a, t in zip(args, arg_types))
    call = Call(fn, tuple(args))
    if first.kind == TIME:
        result = types.time_type(digits)
        return Call("cast_time", (call, Lit(digits, INT))), result
    return call, SqlType(DATETIME, digits, digits)


def _as_number_read(e: Expr, t: SqlType, written: Expr) -> tuple[Expr, SqlType]:
    """``e`` (of type ``t``: ``written`` as :func:`typed` made it) where MySQL reads it as
    a number (arithmetic, a comparison with a number, a truth value): ``GREATEST``/``LEAST``
    over text then give the extreme of their arguments read as numbers (MySQL's val_real
    compares them as DOUBLEs, an ENUM by its index), not the number of the extreme text:
    ``GREATEST('1e3', 'abc')`` is 'abc' as text and 1000 as a number. Anything else is
    ``e`` itself."""
    if isinstance(e, Call) and e.fn == "JSON_EXTRACT":
        return _json_as_number(e), t
    if isinstance(e, Call) and e.fn in ("GREATEST", "LEAST") and t.kind in types.TEXT_KINDS:
        assert isinstance(written, Call) and len(written.args) == len(e.args)
        numbers = tuple(Call("cast_float", (_before_conversion(a, w),))
                        for a, w in zip(e.args, written.args))
        return Call(e.fn, numbers), types.FLOAT_TYPE
    return e, t


def _json_as_number(e: Expr) -> Expr:
    """``e``, a ``JSON_EXTRACT`` call, as the text MariaDB reads as its number
    (``true`` is 1, the string ``"5"`` is 5: rivulet/values/json_text.py's
    ``json_number_text``); any other expression as it is."""
    if isinstance(e, Call) and e.fn == "JSON_EXTRACT":
        return Call("json_number_text", (e,))
    return e


def _before_conversion(e: Expr, written: Expr) -> Expr:
    """``e`` without the conversion to text :func:`convert` put around it (an ENUM's
    member as text, whose number is the ENUM's index). ``written`` is the argument as
    written: a conversion the query wrote itself (``CAST(e AS CHAR)``) stays, since MySQL
    reads that text's number (0 for 'a'), not the index."""
    if _is_text_conversion(e) and not _is_text_conversion(written):
        return e.args[0]  # type: ignore[attr-defined]
    return e


def _is_text_conversion(e: Expr) -> bool:
    return isinstance(e, Call) and e.fn in ("cast_str", "cast_bytes") and len(e.args) == 1


#: The functions whose value is one of their arguments' (a CASE's branches besides).
CHOOSERS = frozenset({"COALESCE", "IFNULL", "IF", "GREATEST", "LEAST"})


def pads_a_choice(e: Expr) -> bool:
    """Whether ``e`` chooses among DECIMALs that the plan brings to one number of places
    (``CASE WHEN c THEN d ELSE -1 END`` with ``d`` a DECIMAL(8,2): -1 carries 2 places,
    -1.00). MySQL's value is the chosen argument's, with its own places, which a text
    column stores as they are ('-1'); as a number both are alike."""
    stack = [e]
    while stack:  # (through the choosers and the arithmetic on their values only: a
        node = stack.pop()  # conversion to text, as CAST AS CHAR, shows the type's places)
        if isinstance(node, Case):
            chosen = [v for _, v in node.whens] + ([node.default] if node.default else [])
        elif isinstance(node, Call) and node.fn in CHOOSERS:
            chosen = list(node.args[1:] if node.fn == "IF" else node.args)
        elif isinstance(node, Call) and node.fn in _CARRIES_ITS_ARGUMENTS_PLACES:
            stack.extend(node.args)
            continue
        else:
            continue
        if any(isinstance(v, Call) and v.fn == "to_scale" for v in chosen):
            return True
        stack.extend(chosen)
    return False


#: Arithmetic whose DECIMAL value has places made of its arguments' (a sum of -1 and 0 is
#: -1 in MySQL, whose places the plan would have padded).
_CARRIES_ITS_ARGUMENTS_PLACES = frozenset({"add", "sub", "mul", "neg", "ABS", "to_scale"})


def may_carry_fewer_places(e: Expr, input_types: Sequence[SqlType],
                           column_may: Callable[[int], bool]) -> bool:
    """Whether the DECIMAL value of ``e`` may carry fewer places than its type shows, as
    MySQL's decimal arithmetic makes some zeros plain (no places, no sign): a remainder of
    a zero dividend (``0 % 0.5``), a difference or a sum that cancels (``1.5 - 1.5``,
    ``e - 0`` where ``e`` is 0.00), a product of a zero and a negative (``-2 * 0.0``), and
    what carries such a value on (``(0 % 0.5) + 1`` is 1, ``-(0 % 0.5)`` 0, a CASE choosing
    it). The type shows '0.0' (a result column, CONCAT, CAST AS CHAR round to it); a text
    column stores the value's own places ('0'). MariaDB's MOD also keeps the places and the
    sign of a zero remainder of another dividend ('-0.0' for ``-2 % 0.5``), which MySQL 8
    makes plain: any MOD may differ. A SUM adds (see ``_computed_in``). ``column_may``
    answers for an input column."""
    t = type_of(e, input_types)
    if t.kind != DECIMAL or not t.frac:  # (a zero without places is plain already)
        return False
    if isinstance(e, Col):
        return column_may(e.index)

    def may(x: Expr) -> bool:
        return may_carry_fewer_places(x, input_types, column_may)

    if isinstance(e, Case):
        return any(may(v) for _, v in e.whens) or (e.default is not None and may(e.default))
    if not isinstance(e, Call):
        return False
    if e.fn in ("mod", "MOD", "sub"):
        return True
    if e.fn in ("add", "mul"):  # (cancels, or a zero meets a negative; not beside a
        if any(may(a) for a in e.args):  # constant 0 to add, a positive one to multiply)
            return True
        if any(isinstance(a, Lit) and type(a.value) in (int, decimal.Decimal)
               and (a.value == 0 if e.fn == "add" else a.value > 0) for a in e.args):
            return False
        return not all(_never_negative(a, type_of(a, input_types)) for a in e.args)
    if e.fn in ("neg", "ABS", "NULLIF"):
        return may(e.args[0])
    if e.fn in CHOOSERS:
        return any(may(a) for a in (e.args[1:] if e.fn == "IF" else e.args))
    return False


def _never_negative(e: Expr, t: SqlType) -> bool:
    """Whether ``e`` (of type ``t``) holds no negative number: an UNSIGNED one, a constant
    from 0 up."""
    if isinstance(e, Lit):
        return e.value is None or (type(e.value) in (int, decimal.Decimal) and e.value >= 0)
    return t.unsigned


def to_places(e: Expr, t: SqlType) -> Expr:
    """``e`` (an exact number) as a DECIMAL of type ``t``: carrying exactly ``t.frac``
    places. The call names ``t.scale`` too when it differs, so that the plan's typing of
    the call (:func:`type_of`) is ``t``."""
    places = (Lit(t.frac, INT),) if t.frac == t.scale else (Lit(t.frac, INT), Lit(t.scale, INT))
    return Call("to_scale", (e, *places))


def _refuse_undated_extreme(fn: str, args: Sequence[Expr],
                            arg_types: Sequence[SqlType]) -> None:
    """Refuse ``GREATEST``/``LEAST`` of a date with a value that may be no date: a column or
    expression of text or numbers, a constant that reads as none. Where such a value wins,
    MariaDB shows NULL but compares its result as the zero date (``CASE LEAST(d, 7.0) WHEN
    'x' ...`` matches), where MySQL 8 has rules of its own: no one answer to give.
    Constants that read as dates ('2024-01-02', 20240102) are answered."""
    for a, t in zip(args, arg_types):
        if t.kind in types.DATE_KINDS or t.kind is None:
            continue
        if isinstance(a, Lit) and read_temporal(a.value) is not None:
            continue
        what = "a constant that is no date" if isinstance(a, Lit) else f"a {t.kind} value"
        raise UnsupportedSqlError(f"unsupported {fn}() of a date with {what} (MariaDB "
                                  "compares the NULL it shows as the zero date; MySQL 8 "
                                  "compares such arguments otherwise): CAST it to a DATE "
                                  "or DATETIME first")


def as_number(e: Expr, t: SqlType) -> Expr:
    """``e`` as the number it is in numeric context, where its value alone does not say
    (a TIME with fractional digits: the DECIMAL [-]HHMMSS.ff with exactly that many places,
    where ``values.to_number`` would give six, or none for a whole second; a DATETIME(fsp)
    likewise, where ``values.to_number`` drops the fraction)."""
    if t.kind in (TIME, DATETIME) and t.scale:
        return to_places(e, types.number_type(t))
    return e


def as_text(e: Expr, t: SqlType) -> Expr:
    """``e`` as the text it is in string context, where its value alone does not say (a
    TIME or DATETIME with fractional digits shows exactly that many: '01:02:03.500' for a
    TIME(3); a DOUBLE rounded to places shows them: '1.50' for ``ROUND(x, 2)``, the
    integer in full for ``FLOOR(x)``; a single-precision FLOAT its shortest text, '1.1'
    where its double is 1.100000023841858)."""
    if t.kind in (TIME, DATETIME) and t.scale:
        return Call("cast_str", (e, Lit(t.scale, INT)))
    if _fixed_double(t):
        return Call("cast_str", (e, Lit(t.decimals, INT)))
    if t.single:
        return Call("single_str", (e,))
    return e


def _json_against_text(args: Sequence[Expr], arg_types: Sequence[SqlType]) -> bool:
    """Whether a comparison has a JSON_EXTRACT value on one side and a text constant on
    another: compared as text here, where a JSON string's quotes make it unequal
    (``JSON_EXTRACT('{"a": "x"}', '$.a') = 'x'`` is 1 in MySQL 8 and in MariaDB). The
    constant 'null' is let through: SQLAlchemy's ``CASE JSON_EXTRACT(...) WHEN 'null'``
    finds a JSON null as MariaDB does (docs/sql.md, JSON functions). A JSON column on the
    other side (Django's exact lookup) compares texts, as MariaDB does."""
    if not any(isinstance(a, Call) and a.fn == "JSON_EXTRACT" for a in args):
        return False
    return any(isinstance(a, Lit) and t.kind in (STR, BYTES) and a.value != "null"
               for a, t in zip(args, arg_types))


def _fixed_double(t: SqlType) -> bool:
    """Whether ``t`` is a DOUBLE whose text shows fixed places (``SqlType.decimals``)."""
    return t.kind == FLOAT and t.decimals < types.NOT_FIXED


def _time_digits(e: Expr | None, t: SqlType, *, numeric: bool = False) -> int:
    """The fractional digits a TIME made of ``e`` (of type ``t``) keeps, as MariaDB types
    ``TIME(e)``, ``TIMEDIFF``, ``GREATEST`` with a TIME (``numeric``: ``SEC_TO_TIME(e)``,
    which reads ``e`` as a number): a TIME's or DATETIME's own, a DECIMAL's places, none for
    an integer, six for a DOUBLE or text, except that a text constant read as a time has
    the digits written in it."""
    if t.kind in (TIME, DATETIME):
        return t.scale
    if t.kind == DECIMAL:
        return min(t.scale, types.MAX_FSP)
    if t.kind in (STR, BYTES) and not numeric and isinstance(e, Lit):
        text = e.value.decode("utf-8", "replace") if isinstance(e.value, bytes) else e.value
        m = _WRITTEN_FRACTION.match(str(text))
        return min(len(m.group(1)), types.MAX_FSP) if m else 0
    if t.kind in (FLOAT, STR, BYTES):
        return types.MAX_FSP
    return 0


#: The fractional digits written in a time or datetime constant ('10:11:12.25': 25).
_WRITTEN_FRACTION = re.compile(r"[\s\d:T/+-]*\.(\d+)")


def _compared_as_doubles(args: Sequence[Expr], arg_types: Sequence[SqlType]) -> bool:
    """Whether MySQL compares these two operands as DOUBLEs (where a quotient is its
    unrounded value): one is a DOUBLE, or text that is not a constant (a text constant
    is read as a DECIMAL first: ``n/3 = '3.3333'`` is 1 for n = 10, ``n/3 = text_col``
    holding '3.3333' is 0), or both are constants (``10/3 > '3.33333'`` is 1)."""
    if types.comparison_kind(arg_types[0].kind, arg_types[1].kind) != FLOAT:
        return False
    constant = all(_constant(a) for a in args)  # (10/3 > '3.33333': as DOUBLEs)
    return any(t.kind == FLOAT or (t.kind in types.TEXT_KINDS and not
                                   (isinstance(a, Lit) and not constant))
               for a, t in zip(args, arg_types))


def _constant(e: Expr) -> bool:
    """Whether ``e`` reads no column and no parameter."""
    if isinstance(e, Lit):
        return True
    if isinstance(e, Call):
        return all(_constant(a) for a in e.args)
    return False


def shown_type(t: SqlType) -> SqlType:
    """The type of :func:`shown`'s value."""
    return types.decimal_type(t.scale) if t.rounded else t


def shown(e: Expr, t: SqlType) -> Expr:
    """``e`` at the places its type shows (a DECIMAL carrying more: rounded half up)."""
    if t.rounded:
        return Call("to_scale", (e, Lit(t.scale, INT)))
    return e


def convert(e: Expr, have: SqlType, want: SqlType) -> Expr:
    """``e``, of type ``have``, as a value of type ``want`` (MySQL's implicit conversion
    to the type of a ``CASE``, a ``UNION`` column...)."""
    if want.kind is None or have.kind is None:
        return e
    if want.kind == DECIMAL:
        if replace(have, unsigned=want.unsigned) == want:
            return e  # (the same places: the sign is the type's to say, not the value's)
        return to_places(e, want)
    if have.kind == want.kind or (want.kind == INT and have.kind == BOOL):
        return e
    if want.kind in (STR, BYTES):
        return Call("cast_str" if want.kind == STR else "cast_bytes",
                    (as_text(shown(e, have), have),))
    if want.kind == FLOAT:  # (an exact number keeps the places it shows: MySQL's decimals)
        places = types.shown_places(have)
        return Call("cast_float", (e,) if places >= types.NOT_FIXED else (e, Lit(places, INT)))
    if want.kind in (DATE, DATETIME):
        return Call(f"cast_{want.kind}", (e,))
    if want.kind == INT:
        return Call("cast_int", (e,))
    return e


#: The type of a statement's instant (:class:`~rivulet.plan.ir.StatementTime`).
_INSTANT = SqlType(DATETIME, types.MAX_FSP, types.MAX_FSP)


def _clock_type(fn: str, exprs: Sequence[Expr]) -> SqlType:
    """The type of a time function of an instant: ``NOW(fsp)`` a DATETIME(fsp),
    ``CURTIME(fsp)`` a TIME(fsp), ``CURDATE()`` a DATE, ``UNIX_TIMESTAMP()`` an integer."""
    given = exprs[1] if len(exprs) > 1 else None
    fsp = given.value if isinstance(given, Lit) and type(given.value) is int else 0
    if fn == "now_at":
        return SqlType(DATETIME, fsp, fsp)
    if fn == "curtime_at":
        return types.time_type(fsp)
    if fn == "curdate_at":
        return SqlType(DATE)
    return types.int_type(11)


def result_type(fn: str, args: Sequence[SqlType], exprs: Sequence[Expr] = ()) -> SqlType:
    """The type of ``fn`` applied to arguments of types ``args`` (the expressions
    ``exprs`` where a constant argument decides, as ``ROUND``'s places)."""
    kinds = [a.kind for a in args]
    if fn in ("now_at", "curtime_at", "curdate_at", "unix_timestamp_at"):
        return _clock_type(fn, exprs)
    if fn in PREDICATES or fn in _INT_FUNCTIONS:
        return types.INT_TYPE
    if fn in _BIT_OPERATORS:
        return types.int_type(20, unsigned=True)
    if fn in _DOUBLE_FUNCTIONS:
        return types.FLOAT_TYPE
    if fn == "HEX":
        return types.STR_TYPE
    if fn == "UNHEX":
        return SqlType(BYTES)
    if fn in ("addtime", "subtime"):  # (of a TIME: wrapped in cast_time, see _shifted_time)
        given = exprs if len(exprs) == len(args) else [None] * len(args)
        digits = max(_time_digits(e, t) for e, t in zip(given, args))
        return types.time_type(digits) if kinds[0] == TIME else SqlType(DATETIME, digits,
                                                                        digits)
    if fn in _JSON_TEXT_FUNCTIONS:
        return types.STR_TYPE
    if fn in date_calls.DATE_CALLS:
        return date_calls.result_type(fn, args, exprs)
    if fn in _STRING_FUNCTIONS:
        text = kinds if fn in _TEXT_ANY_ARG else kinds[:1]
        return SqlType(BYTES) if BYTES in text else types.STR_TYPE
    if fn in _ARITHMETIC:
        if fn != "int_div" and any(t.kind is None and not isinstance(e, Param)
                                   for t, e in zip(args, exprs)):
            # NULL counts as text, so arithmetic over it is a DOUBLE (a parameter's type is
            # that of its value, not known here)
            return types.FLOAT_TYPE
        return types.arithmetic_type(_ARITHMETIC[fn], args[0], args[1])
    if fn == "neg":  # signed: -(an UNSIGNED) is a BIGINT, or a signed DECIMAL
        n = types.number_type(args[0])
        return types.int_type(types.int_digits(n) + 1) if n.kind == INT else replace(
            n, unsigned=False)
    if fn == "ABS":
        return types.number_type(args[0])
    if fn in ("ROUND", "FLOOR", "CEIL", "CEILING") and kinds[0] == ENUM:
        return SqlType(INT, unsigned=True)  # (an index: MySQL's ENUM field is unsigned)
    if fn == "ROUND":
        return _round_type(args, exprs)
    if fn in ("FLOOR", "CEIL", "CEILING"):  # (a DOUBLE's shows the integer in full)
        n = types.number_type(args[0])
        if n.kind == FLOAT:
            return types.double_type(0)
        return types.rounded_to_integer_type("FLOOR" if fn == "FLOOR" else "CEIL", n)
    if fn == "NULLIF":  # (an ENUM's value comes out as its text)
        return types.STR_TYPE if kinds[0] == ENUM else args[0]
    if fn in _TIME_FUNCTIONS:
        return _time_result_type(fn, args, exprs)
    if fn in ("DATE", "cast_date"):
        return SqlType(DATE)
    if fn == "cast_datetime":
        return SqlType(DATETIME)
    if fn == "cast_float":  # (cast_float(text, places): a DOUBLE read back from its text)
        shown = exprs[1] if len(exprs) > 1 else None
        return types.double_type(shown.value) if isinstance(shown, Lit) else types.FLOAT_TYPE
    if fn == "cast_unsigned":
        return SqlType(INT, unsigned=True)
    if fn == "cast_str":
        return SqlType(BYTES) if kinds[0] == BYTES else types.STR_TYPE
    if fn == "cast_bytes":
        return SqlType(BYTES)
    if fn == "single_str":
        return types.STR_TYPE
    if fn == "cast_single":
        return types.SINGLE_TYPE
    if fn in ("cast_decimal", "to_scale"):
        return _decimal_cast_type(fn, args, exprs)
    if fn == "UNIX_TIMESTAMP":
        return _unix_timestamp_type(args[0], exprs[0] if exprs else None)
    if fn == "CONVERT_TZ":
        return SqlType(DATETIME)
    if fn in ("COALESCE", "IFNULL"):
        return types.aggregate(args)
    if fn == "IF":
        return types.aggregate(args[1:], null_is_signed=False)
    if fn in ("GREATEST", "LEAST"):
        return types.extreme(args)
    return types.NULL


def _round_type(args: Sequence[SqlType], exprs: Sequence[Expr]) -> SqlType:
    n = types.number_type(args[0])
    if n.kind == FLOAT:  # shows the places asked for, if a constant asks ('1.50')
        if len(exprs) < 2:
            return types.double_type(0)
        d = exprs[1]
        return (types.double_type(d.value) if isinstance(d, Lit) and type(d.value) is int
                else types.FLOAT_TYPE)
    d = exprs[1] if len(exprs) > 1 else Lit(0, INT)
    places = d.value if isinstance(d, Lit) and type(d.value) is int else None
    if n.kind == INT and (places is None or places < 0) and types.int_digits(n) + 1 > 18:
        # (rounding to tens may add an integer digit: past a BIGINT's 18, MySQL's is a
        # DECIMAL, ROUND(bigint_col, -1) among them, and ROUND(bigint_col, places_col);
        # an UNSIGNED one's is UNSIGNED)
        rounded = types.decimal_type(0, digits=types.int_digits(n) + 1)
        return replace(rounded, unsigned=n.unsigned)
    if n.kind != DECIMAL:
        return n
    if places is not None:  # exactly d places (1.500 for d = 3)
        places = max(0, places)  # (rounding off places may add an integer digit)
        rounded = types.decimal_type(places, digits=types.int_digits(n) + (n.scale > places))
        return replace(rounded, unsigned=n.unsigned)  # (MySQL flags an unsigned one's)
    return n


def _time_result_type(fn: str, args: Sequence[SqlType], exprs: Sequence[Expr]) -> SqlType:
    if fn == "cast_time":  # cast_time(x[, fsp])
        fsp = exprs[1] if len(exprs) > 1 else None
        return types.time_type(fsp.value if isinstance(fsp, Lit) and type(fsp.value) is int
                               else 0)
    given: Sequence[Expr | None] = exprs if len(exprs) == len(args) else [None] * len(args)
    numeric = fn == "SEC_TO_TIME"
    return types.time_type(max((_time_digits(e, t, numeric=numeric)
                                for e, t in zip(given, args)), default=0))


def _unix_timestamp_type(arg: SqlType, expr: Expr | None) -> SqlType:
    """An integer of a date, a DATETIME without fractional digits, an ENUM, a number or a
    constant without fractions; a DECIMAL(.., 6) of text or a DOUBLE (which may carry
    fractions); of a DATETIME(fsp), a DECIMAL with its fractional digits, and of a DECIMAL
    with its places (at most 6)."""
    if arg.kind == DATETIME and arg.scale:
        return types.decimal_type(arg.scale)
    if arg.kind == DECIMAL and not isinstance(expr, Lit):
        return types.decimal_type(min(arg.scale, types.MAX_FSP)) if arg.scale else types.INT_TYPE
    if isinstance(expr, Lit) and type(expr.value) is not float:  # MySQL folds the
        # constant: its own fraction's places (a DOUBLE's, like a column's, are six)
        places = fraction_digits(expr.value) if type(expr.value) is str else 0
        return types.decimal_type(places) if places else types.INT_TYPE
    if expr is not None and not isinstance(expr, Lit) and _constant(expr) \
            and arg.kind in types.TEXT_KINDS:
        # MySQL types it by the constant's value (``COALESCE('1999-12-31 00:00:00', 1)``:
        # an integer, six places for the same text from a column): known only once run.
        raise UnsupportedSqlError("unsupported UNIX_TIMESTAMP() of a constant expression of "
                                  "text (MySQL types the result by its value): write the "
                                  "constant itself, or CAST it to a DATETIME")
    return (types.INT_TYPE if arg.kind in (DATE, DATETIME, INT, BOOL, ENUM)
            else types.decimal_type(6))


def _decimal_cast_type(fn: str, args: Sequence[SqlType], exprs: Sequence[Expr]) -> SqlType:
    constants = [e.value for e in exprs[1:] if isinstance(e, Lit) and type(e.value) is int]
    if fn == "to_scale" and constants:  # to_scale(x, carried[, shown]): x's sign
        number = types.number_type(args[0])
        return replace(types.decimal_type(constants[-1], constants[0], types.int_digits(number)),
                       unsigned=number.unsigned)
    if fn == "cast_decimal" and len(constants) == 2:  # cast_decimal(x, precision, scale)
        return types.decimal_type(constants[1], digits=constants[0] - constants[1])
    source = args[0]
    if source.kind == DECIMAL:
        return source
    if source.kind in (INT, BOOL):
        return types.decimal_type(0)
    return SqlType(DECIMAL)


def type_of(expr: Expr, input_types: Sequence[SqlType]) -> SqlType:
    """The static type of ``expr`` (already :func:`typed`) over columns of these types."""
    if isinstance(expr, Col):
        return input_types[expr.index]
    if isinstance(expr, Lit):
        return literal_type(expr)
    if isinstance(expr, Param):
        return types.NULL
    if isinstance(expr, StatementTime):
        return _INSTANT
    if isinstance(expr, Case):
        branches = [v for _, v in expr.whens] + ([expr.default] if expr.default else [])
        return types.aggregate([type_of(v, input_types) for v in branches])
    assert isinstance(expr, Call)
    return result_type(expr.fn, [type_of(a, input_types) for a in expr.args], expr.args)


# --------------------------------------------------------------------------- refusals

#: Functions that compare their arguments (a TIME against a DATE or DATETIME among them is
#: refused: see :func:`refuse_clock_dependent`).
_COMPARING = {"eq", "ne", "lt", "le", "gt", "ge", "null_safe_eq", "between", "between_dates",
              "in_list", "GREATEST", "LEAST", "NULLIF"}
#: Functions that read their argument as a date (of a TIME, MySQL takes today's date).
_READ_AS_DATE = {"cast_date", "cast_datetime", "YEAR", "MONTH", "DAY", "DAYOFMONTH", "DATE",
                 "DATEDIFF", "UNIX_TIMESTAMP", "CONVERT_TZ", "DAYOFWEEK", "WEEKDAY",
                 "DAYOFYEAR"}


def refuse_clock_dependent(expr: Expr, input_kinds: Sequence[Kind | None]) -> None:
    """Refuse an expression whose MySQL answer depends on the day it is computed: MySQL reads
    a TIME compared with a DATE or DATETIME, or given where a date is wanted, as that time
    of the current day, so a view kept up to date would be right one day and wrong the next.
    (A ``CASE`` or ``COALESCE`` of a TIME and a date is a DATETIME: the planner converts the
    TIME with ``cast_datetime``, refused here too.)
    """
    input_types = [SqlType(k) for k in input_kinds]
    for call in _calls(expr):
        kinds = {type_of(a, input_types).kind for a in call.args}
        if TIME not in kinds:
            continue
        if (call.fn in _COMPARING and kinds & {DATE, DATETIME}) or call.fn in _READ_AS_DATE:
            what = ("a comparison of a TIME with a DATE or DATETIME" if call.fn in _COMPARING
                    else f"{call.fn.removeprefix('cast_').upper()}() of a TIME")
            raise UnsupportedSqlError(f"unsupported {what}: MySQL reads the TIME as that time "
                                      "of the current day; compare TIME with TIME (TIME(x)) "
                                      "or DATETIME with DATETIME")
        if _equality(call) and any(isinstance(a, Lit) and isinstance(a.value, (str, bytes))
                                   and holds_datetime(a.value) for a in call.args):
            raise UnsupportedSqlError(
                "unsupported TIME = text holding a date and a time: MySQL's WHERE compares "
                "it as a datetime of the current day (elsewhere as its time part); compare "
                "with TIME('...') or with the time alone")


def refuse_unanswerable(expr: Expr, input_kinds: Sequence[Kind | None]) -> None:
    """Refuse what rivulet cannot answer as MySQL in ``expr``: a comparison whose answer
    depends on the day (:func:`refuse_clock_dependent`). (A date compared with text or a
    number holding a date with a zero month or day is answered: ``values.comparison``'s
    ``ZeroInDate``.)"""
    refuse_clock_dependent(expr, input_kinds)


def _equality(call: Call) -> bool:
    """Whether MySQL's WHERE may read ``call`` as an equality to propagate: ``=``, or an
    IN list of one value."""
    return call.fn == "eq" or (call.fn == "in_list" and len(call.args) == 2)


def refuse_join_keys(pairs: Sequence[tuple[Kind | None, Kind | None]]) -> None:
    """Refuse join keys that a hash join cannot match as MySQL's ``=`` does: an ENUM column
    against a number (MySQL compares the member's index) or a TIME against anything but a
    TIME (MySQL reads the other side as a TIME)."""
    for a, b in pairs:
        for x, y in ((a, b), (b, a)):
            if x == ENUM and y not in (ENUM, STR, None):
                raise UnsupportedSqlError(f"unsupported join of an ENUM column with a {y} "
                                          "column (MySQL compares the member's position; "
                                          "join on CAST(e AS SIGNED) = n in WHERE instead)")
            if x == TIME and y not in (TIME, None):
                raise UnsupportedSqlError(f"unsupported join of a TIME column with a {y} "
                                          "column: join TIME with TIME")


def _calls(expr: Expr) -> list[Call]:
    out: list[Call] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Call):
            out.append(e)
            stack.extend(e.args)
        elif isinstance(e, Case):
            for cond, value in e.whens:
                stack.extend((cond, value))
            if e.default is not None:
                stack.append(e.default)
    return out
