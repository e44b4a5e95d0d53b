"""sqlglot scalar expressions to IR expressions, and the kinds they produce.

Name resolution is delegated to a *scope*, so the same translation serves expressions over
a FROM clause, over an aggregate's output, and over a table in an UPDATE.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from typing import Protocol

from sqlglot import exp

from rivulet.errors import (
    AggregateMisuseError,
    ArgumentCountError,
    UnknownFunctionError,
    UnsupportedSqlError,
)
from rivulet.plan.ir import Call, Case, Col, Expr, Lit, Param
from rivulet.sql.parse import error_at, position, unsupported
from rivulet.sql.syntax import WRITTEN_NAME, is_mysql_function
from rivulet.values.registry import SCALAR_FUNCTIONS, arity_error
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


class Scope(Protocol):
    def column(self, node: exp.Column) -> Expr: ...

    def special(self, node: exp.Expr) -> Expr | None:
        """An IR expression standing for ``node`` as a whole (an aggregate, a group key)."""


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

_AGGREGATE_NODES = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)


def is_aggregate(node: exp.Expr) -> bool:
    return isinstance(node, _AGGREGATE_NODES)


def translate(node: exp.Expr, scope: Scope,
              params: Callable[[exp.Placeholder], Expr] | None = None) -> Expr:
    """The IR expression for ``node``; ``params`` binds ``?`` (write statements only)."""
    special = scope.special(node)
    if special is not None:
        return special
    t = lambda n: translate(n, scope, params)  # noqa: E731
    if isinstance(node, exp.Paren):
        return t(node.this)
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
    if isinstance(node, exp.Neg):
        inner = t(node.this)
        if isinstance(inner, Lit) and isinstance(inner.value, (int, float, decimal.Decimal)):
            return Lit(-inner.value, inner.kind)
        return Call("neg", (inner,))
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
    if isinstance(node, exp.In):
        if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
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
    return Call(name, tuple(t(a) for a in arguments))


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
    "TEXT": STR, "DATE": DATE, "DATETIME": DATETIME, "TIME": TIME,
}


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
    if kind == DECIMAL:
        # DECIMAL(M[, D]); DECIMAL alone is DECIMAL(10, 0), as in MySQL
        sizes = [int(p.this.this) for p in node.to.expressions
                 if isinstance(p, exp.DataTypeParam) and isinstance(p.this, exp.Literal)]
        precision, scale = (sizes + [10, 0][len(sizes):])[:2]
        return Call("cast_decimal", (t(node.this), Lit(precision, INT), Lit(scale, INT)))
    if kind == INT:  # a string's integer prefix, as MySQL's CAST ('1e3' is 1)
        return Call("cast_int", (t(node.this), Lit(1, INT)))
    return Call(f"cast_{kind}", (t(node.this),))


def literal(node: exp.Expr) -> Lit:
    if isinstance(node, exp.Null):
        return Lit(None, None)
    if isinstance(node, exp.Boolean):
        return Lit(int(node.this), BOOL)
    if node.is_string:
        return Lit(node.this, STR)
    text = node.this
    try:
        return Lit(int(text), INT)
    except ValueError:
        pass
    if "e" in text.lower():
        return Lit(float(text), FLOAT)
    # MySQL reads 1.5 as an exact DECIMAL literal.
    return Lit(decimal.Decimal(text), DECIMAL)


def literal_value(node: exp.Expr) -> object:
    """A constant's Python value (for INSERT ... VALUES)."""
    if isinstance(node, exp.Neg):
        return -literal_value(node.this)  # type: ignore[operator]
    if isinstance(node, exp.Paren):
        return literal_value(node.this)
    if isinstance(node, (exp.Literal, exp.Null, exp.Boolean)):
        return literal(node).value
    raise unsupported(node, "non-constant value")


# --------------------------------------------------------------------------- kinds

_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge", "null_safe_eq", "and_", "or_", "xor",
                "not_", "like", "in_list", "between", "is_null", "is_not_null"}
_STRING_FUNCTIONS = {"CONCAT", "CONCAT_WS", "LOWER", "LCASE", "UPPER", "UCASE", "SUBSTRING",
                     "SUBSTR", "MID", "LEFT", "RIGHT", "TRIM", "LTRIM", "RTRIM", "REPLACE",
                     "REVERSE", "LPAD", "RPAD", "REPEAT"}
_INT_FUNCTIONS = {"LENGTH", "OCTET_LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH", "LOCATE", "INSTR",
                  "YEAR", "MONTH", "DAY", "DAYOFMONTH", "HOUR", "MINUTE", "SECOND", "DATEDIFF",
                  "SIGN", "int_div", "TIME_TO_SEC"}
_TIME_FUNCTIONS = {"TIME", "TIMEDIFF", "SEC_TO_TIME"}
_FIRST_ARG_FUNCTIONS = {"COALESCE", "IFNULL", "NULLIF", "GREATEST", "LEAST"}
#: Arithmetic: a string operand is read as a DOUBLE, a date as the number YYYYMMDD[hhmmss],
#: an ENUM as its member's index, a TIME as the number [-]HHMMSS[.ffffff].
_ARITHMETIC = {"add", "sub", "mul", "mod", "MOD", "neg", "ABS"}
#: ROUND(x[, d]), FLOOR(x), CEIL(x): exact for exact x (FLOOR and CEIL an integer), else
#: a DOUBLE.
_ROUNDING = {"ROUND", "FLOOR", "CEIL", "CEILING"}


def kind_of(expr: Expr, input_kinds: list[Kind | None]) -> Kind | None:
    """The value kind ``expr`` produces, given the kinds of its input columns."""
    if isinstance(expr, Col):
        return input_kinds[expr.index]
    if isinstance(expr, Lit):
        return expr.kind
    if isinstance(expr, Param):
        return None
    if isinstance(expr, Case):
        kinds = [kind_of(v, input_kinds) for _, v in expr.whens]
        if expr.default is not None:
            kinds.append(kind_of(expr.default, input_kinds))
        return unify_kinds(kinds)
    assert isinstance(expr, Call)
    fn = expr.fn
    if fn in _COMPARISONS:
        return INT
    if fn in _STRING_FUNCTIONS:
        return STR
    if fn in _INT_FUNCTIONS:
        return INT
    if fn.startswith("cast_"):
        return Kind(fn[5:])
    if fn == "div":
        arg_kinds = {kind_of(a, input_kinds) for a in expr.args}
        return DECIMAL if DECIMAL in arg_kinds and FLOAT not in arg_kinds else FLOAT
    if fn in _ARITHMETIC:
        return arithmetic_kind([kind_of(a, input_kinds) for a in expr.args])
    if fn in _ROUNDING:
        kind = arithmetic_kind([kind_of(expr.args[0], input_kinds)])
        return INT if kind == DECIMAL and fn != "ROUND" else kind
    if fn == "IF":
        return unify_kinds([kind_of(a, input_kinds) for a in expr.args[1:]])
    if fn == "DATE":
        return DATE
    if fn in _TIME_FUNCTIONS:
        return TIME
    if fn == "CONVERT_TZ":
        return DATETIME
    if fn == "UNIX_TIMESTAMP":
        # An integer of a date, a datetime without fractions, a number, a constant without
        # fractions; MySQL makes it a DECIMAL(.., 6) for a string column (left unknown).
        arg = expr.args[0]
        if isinstance(arg, Lit):
            return INT if type(arg.value) is not str or "." not in arg.value else DECIMAL
        return INT if kind_of(arg, input_kinds) in (DATE, DATETIME, INT, BOOL) else None
    if fn in _FIRST_ARG_FUNCTIONS:
        return unify_kinds([kind_of(a, input_kinds) for a in expr.args])
    return None


def _number_kind(kind: Kind | None) -> Kind | None:
    """The kind of a value in numeric context: an ENUM's index, a TIME's [-]HHMMSS."""
    if kind == ENUM:
        return INT
    if kind == TIME:
        return DECIMAL
    return kind


def arithmetic_kind(kinds: list[Kind | None]) -> Kind | None:
    """The kind of ``+``, ``-``, ``*``, ``%`` or unary minus over operands of ``kinds``, as
    MySQL types it: DOUBLE if an operand is a string or a DOUBLE, else DECIMAL if one is a
    DECIMAL (a TIME counts as one), else an integer (a DATE or DATETIME counts as the integer
    YYYYMMDD[hhmmss], an ENUM as its member's index)."""
    present = {_number_kind(k) for k in kinds if k is not None}
    if not present:
        return None
    if present & {STR, BYTES, FLOAT}:
        return FLOAT
    if DECIMAL in present:
        return DECIMAL
    return INT


def unify_kinds(kinds: list[Kind | None]) -> Kind | None:
    """The kind of a value that may come from any of ``kinds`` (numeric widening). An
    expression that may give an ENUM column's value gives its text (a CASE, COALESCE or
    UNION of ENUM columns is a string in MySQL)."""
    present = {STR if k == ENUM else k for k in kinds if k is not None}
    if not present:
        return None
    if len(present) == 1:
        return present.pop()
    if present <= {INT, BOOL}:
        return INT
    if present <= {INT, BOOL, DECIMAL}:
        return DECIMAL
    if present <= {INT, BOOL, DECIMAL, FLOAT}:
        return FLOAT
    if present <= {DATE, DATETIME}:
        return DATETIME
    return STR


# --------------------------------------------------------------------------- refusals

#: Functions that compare their arguments (a TIME against a DATE or DATETIME among them is
#: refused: see :func:`refuse_clock_dependent`).
_COMPARING = {"eq", "ne", "lt", "le", "gt", "ge", "null_safe_eq", "between", "in_list",
              "GREATEST", "LEAST", "NULLIF"}
#: Functions that read their argument as a date (of a TIME, MySQL takes today's date).
_READ_AS_DATE = {"cast_date", "cast_datetime", "YEAR", "MONTH", "DAY", "DAYOFMONTH", "DATE",
                 "DATEDIFF", "UNIX_TIMESTAMP", "CONVERT_TZ"}


def refuse_clock_dependent(expr: Expr, input_kinds: list[Kind | None]) -> None:
    """Refuse an expression whose MySQL answer depends on the day it is computed: MySQL reads
    a TIME compared with a DATE or DATETIME, or given where a date is wanted, as that time
    of the current day, so a view kept up to date would be right one day and wrong the next.
    """
    for call in _calls(expr):
        kinds = {kind_of(a, input_kinds) for a in call.args}
        if TIME not in kinds:
            continue
        if (call.fn in _COMPARING and kinds & {DATE, DATETIME}) or call.fn in _READ_AS_DATE:
            what = ("a comparison of a TIME with a DATE or DATETIME" if call.fn in _COMPARING
                    else f"{call.fn.removeprefix('cast_').upper()}() of a TIME")
            raise UnsupportedSqlError(f"unsupported {what}: MySQL reads the TIME as that time "
                                      "of the current day; compare TIME with TIME (TIME(x)) "
                                      "or DATETIME with DATETIME")


def refuse_join_keys(pairs: list[tuple[Kind | None, Kind | None]]) -> None:
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
