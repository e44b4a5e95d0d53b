"""The tables the expression compiler looks names up in: functions, arities, operators.

Why this module exists: the compiler turns ``UPPER(x)`` or ``a <=> b`` into a call of the
function that implements it, and checks the number of arguments the way MySQL does. This is
the top of :mod:`rivulet.values`: it imports every other module and nothing imports it but
the package itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rivulet.values.arithmetic import add, div, int_div, mod, mul, neg, sub
from rivulet.values.bits import (
    bit_and,
    bit_count,
    bit_not,
    bit_or,
    bit_xor,
    shift_left,
    shift_right,
)
from rivulet.values.codes import ascii_, hex_, ord_, unhex
from rivulet.values.comparison import (
    between,
    eq,
    ge,
    gt,
    in_list,
    is_not_null,
    is_null,
    le,
    lt,
    ne,
    null_safe_eq,
)
from rivulet.values.control import coalesce, if_, ifnull, nullif
from rivulet.values.date_format import date_format
from rivulet.values.dates import (
    addtime,
    convert_tz,
    date_,
    datediff,
    day,
    dayofweek,
    dayofyear,
    hour,
    microsecond,
    minute,
    month,
    sec_to_time,
    second,
    subtime,
    time_,
    time_to_sec,
    timediff,
    unix_timestamp,
    weekday,
    year,
)
from rivulet.values.json_containment import json_contains, json_contains_path, mode_refusal
from rivulet.values.json_text import (
    json_extract,
    json_keys,
    json_length,
    json_quote,
    json_type,
    json_unquote,
    json_valid,
    path_refusal,
)
from rivulet.values.like import like, not_like
from rivulet.values.logic import and_, not_, or_, xor
from rivulet.values.numeric import abs_, ceil, floor, greatest, least, round_, sign
from rivulet.values.powers import exp_, ln, log, log2, log10, pow_, sqrt
from rivulet.values.regexps import regexp
from rivulet.values.strings import (
    char_length,
    concat,
    concat_ws,
    instr,
    left,
    length,
    locate,
    lower,
    lpad,
    ltrim,
    repeat,
    replace,
    reverse,
    right,
    rpad,
    rtrim,
    substring,
    trim,
    upper,
)

#: SQL function names (upper case) to implementations. Optional SQL arguments map onto
#: Python defaults, so the compiler passes exactly the arguments written in the query.
SCALAR_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "CONCAT": concat,
    "CONCAT_WS": concat_ws,
    "LOWER": lower,
    "LCASE": lower,
    "UPPER": upper,
    "UCASE": upper,
    "LENGTH": length,
    "OCTET_LENGTH": length,
    "CHAR_LENGTH": char_length,
    "CHARACTER_LENGTH": char_length,
    "SUBSTRING": substring,
    "SUBSTR": substring,
    "MID": substring,
    "LEFT": left,
    "RIGHT": right,
    "TRIM": trim,
    "LTRIM": ltrim,
    "RTRIM": rtrim,
    "REPLACE": replace,
    "REVERSE": reverse,
    "LOCATE": locate,
    "INSTR": instr,
    "LPAD": lpad,
    "RPAD": rpad,
    "REPEAT": repeat,
    "ABS": abs_,
    "ROUND": round_,
    "FLOOR": floor,
    "CEIL": ceil,
    "CEILING": ceil,
    "SIGN": sign,
    "GREATEST": greatest,
    "LEAST": least,
    "COALESCE": coalesce,
    "IFNULL": ifnull,
    "NULLIF": nullif,
    "IF": if_,
    "YEAR": year,
    "MONTH": month,
    "DAY": day,
    "DAYOFMONTH": day,
    "HOUR": hour,
    "MINUTE": minute,
    "SECOND": second,
    "MICROSECOND": microsecond,
    "DATE": date_,
    "DATEDIFF": datediff,
    "UNIX_TIMESTAMP": unix_timestamp,
    "TIME": time_,
    "TIMEDIFF": timediff,
    "TIME_TO_SEC": time_to_sec,
    "SEC_TO_TIME": sec_to_time,
    "CONVERT_TZ": convert_tz,
    "MOD": mod,
    "JSON_VALID": json_valid,
    "JSON_TYPE": json_type,
    "JSON_LENGTH": json_length,
    "JSON_KEYS": json_keys,
    "JSON_UNQUOTE": json_unquote,
    "JSON_QUOTE": json_quote,
    "JSON_EXTRACT": json_extract,
    "JSON_CONTAINS": json_contains,
    "JSON_CONTAINS_PATH": json_contains_path,
    "BIT_COUNT": bit_count,
    "LN": ln,
    "LOG": log,
    "LOG2": log2,
    "LOG10": log10,
    "EXP": exp_,
    "POW": pow_,
    "POWER": pow_,
    "SQRT": sqrt,
    "DAYOFWEEK": dayofweek,
    "WEEKDAY": weekday,
    "DAYOFYEAR": dayofyear,
    "ASCII": ascii_,
    "ORD": ord_,
    "HEX": hex_,
    "UNHEX": unhex,
    "DATE_FORMAT": date_format,
}

#: (minimum, maximum) argument counts; maximum None means variadic. TRIM's 3-argument form
#: is ``trim(s, remstr, 'BOTH'|'LEADING'|'TRAILING')`` for the ``TRIM(... FROM s)`` syntax.
FUNCTION_ARITY: dict[str, tuple[int, int | None]] = {
    "CONCAT": (1, None),
    "CONCAT_WS": (2, None),
    "LOWER": (1, 1),
    "LCASE": (1, 1),
    "UPPER": (1, 1),
    "UCASE": (1, 1),
    "LENGTH": (1, 1),
    "OCTET_LENGTH": (1, 1),
    "CHAR_LENGTH": (1, 1),
    "CHARACTER_LENGTH": (1, 1),
    "SUBSTRING": (2, 3),
    "SUBSTR": (2, 3),
    "MID": (2, 3),
    "LEFT": (2, 2),
    "RIGHT": (2, 2),
    "TRIM": (1, 3),
    "LTRIM": (1, 1),
    "RTRIM": (1, 1),
    "REPLACE": (3, 3),
    "REVERSE": (1, 1),
    "LOCATE": (2, 3),
    "INSTR": (2, 2),
    "LPAD": (3, 3),
    "RPAD": (3, 3),
    "REPEAT": (2, 2),
    "ABS": (1, 1),
    "ROUND": (1, 2),
    "FLOOR": (1, 1),
    "CEIL": (1, 1),
    "CEILING": (1, 1),
    "SIGN": (1, 1),
    "GREATEST": (2, None),
    "LEAST": (2, None),
    "COALESCE": (1, None),
    "IFNULL": (2, 2),
    "NULLIF": (2, 2),
    "IF": (3, 3),
    "YEAR": (1, 1),
    "MONTH": (1, 1),
    "DAY": (1, 1),
    "DAYOFMONTH": (1, 1),
    "HOUR": (1, 1),
    "MINUTE": (1, 1),
    "SECOND": (1, 1),
    "MICROSECOND": (1, 1),
    "DATE": (1, 1),
    "DATEDIFF": (2, 2),
    "UNIX_TIMESTAMP": (1, 1),
    "TIME": (1, 1),
    "TIMEDIFF": (2, 2),
    "TIME_TO_SEC": (1, 1),
    "SEC_TO_TIME": (1, 1),
    "CONVERT_TZ": (3, 3),
    "MOD": (2, 2),
    "JSON_VALID": (1, 1),
    "JSON_TYPE": (1, 1),
    "JSON_LENGTH": (1, 2),
    "JSON_KEYS": (1, 2),
    "JSON_UNQUOTE": (1, 1),
    "JSON_QUOTE": (1, 1),
    "JSON_EXTRACT": (2, None),
    "JSON_CONTAINS": (2, 3),
    "JSON_CONTAINS_PATH": (3, None),
    "BIT_COUNT": (1, 1),
    "LN": (1, 1),
    "LOG": (1, 2),
    "LOG2": (1, 1),
    "LOG10": (1, 1),
    "EXP": (1, 1),
    "POW": (2, 2),
    "POWER": (2, 2),
    "SQRT": (1, 1),
    "DAYOFWEEK": (1, 1),
    "WEEKDAY": (1, 1),
    "DAYOFYEAR": (1, 1),
    "ASCII": (1, 1),
    "ORD": (1, 1),
    "HEX": (1, 1),
    "UNHEX": (1, 1),
    "DATE_FORMAT": (2, 2),
}

#: Functions rivulet computes in fewer forms than MySQL: the most arguments it takes, and
#: the form a call with more is (refused by name, 1235).
SHORTER_FORMS: dict[str, tuple[int, str]] = {
    "JSON_LENGTH": (1, "JSON_LENGTH with a path"),
    "JSON_KEYS": (1, "JSON_KEYS with a path"),
    "JSON_EXTRACT": (2, "JSON_EXTRACT of several paths"),
}

#: What says why a constant argument is refused (None: it is not).
Refusal = Callable[[Any], str | None]

#: Functions some arguments of which must be constants of a form rivulet computes: from
#: which position on (up to the next one listed), and what says why a constant is refused.
CONSTANT_ARGUMENTS: dict[str, tuple[tuple[int, Refusal], ...]] = {
    "JSON_EXTRACT": ((1, path_refusal),),
    "JSON_CONTAINS": ((2, path_refusal),),
    "JSON_CONTAINS_PATH": ((1, mode_refusal), (2, path_refusal)),
}


def constant_refusal(name: str, position: int) -> Refusal | None:
    """What says why argument ``position`` of a call of ``name`` is refused if it is
    not a constant rivulet computes with, or None if it may be any expression."""
    found = None
    for start, refusal in CONSTANT_ARGUMENTS.get(name, ()):
        if position >= start:
            found = refusal
    return found


def arity_error(name: str, nargs: int) -> str | None:
    """The error message for calling SQL function ``name`` with ``nargs`` arguments, or None
    if the call is fine (or the name unknown: that is the caller's message to give)."""
    bounds = FUNCTION_ARITY.get(name.upper())
    if bounds is None:
        return None
    lo, hi = bounds
    if nargs >= lo and (hi is None or nargs <= hi):
        return None
    if hi is None:
        expected = f"at least {lo}"
    elif lo == hi:
        expected = str(lo)
    else:
        expected = f"{lo} to {hi}"
    plural = "" if expected in ("1", "at least 1") else "s"
    return (f"Incorrect parameter count in the call to native function '{name.upper()}': "
            f"expected {expected} argument{plural}, got {nargs}")


#: SQL operators to implementations (binary unless noted), for the expression compiler.
OPERATORS: dict[str, Callable[..., Any]] = {
    "=": eq,
    "<=>": null_safe_eq,
    "<>": ne,
    "!=": ne,
    "<": lt,
    "<=": le,
    ">": gt,
    ">=": ge,
    "AND": and_,
    "OR": or_,
    "XOR": xor,
    "NOT": not_,  # unary
    "+": add,
    "-": sub,
    "*": mul,
    "/": div,
    "DIV": int_div,
    "%": mod,
    "MOD": mod,
    "NEG": neg,  # unary minus
    "&": bit_and,
    "|": bit_or,
    "^": bit_xor,
    "~": bit_not,  # unary
    "<<": shift_left,
    ">>": shift_right,
    "LIKE": like,  # (s, pattern[, escape])
    "NOT LIKE": not_like,
    "REGEXP": regexp,  # (s, pattern): the pattern checked by the planner
    "ADDTIME": addtime,  # (x, t): the kinds checked by the planner
    "SUBTIME": subtime,
    "IN": in_list,  # (v, tuple_of_values)
    "BETWEEN": between,  # (v, lo, hi)
    "IS NULL": is_null,  # unary
    "IS NOT NULL": is_not_null,  # unary
}
