"""Hexadecimal and bit-value literals (``0x41``, ``X'41'``, ``b'0101'``, ``0b101``): a binary
string in string context, a number in numeric context.

Why this module exists: rivulet's values have one type each, where MySQL's hex and bit
literals are hybrids whose meaning depends on where they stand. The planner reads the
position (:func:`context`) and makes the literal one or the other; a position where it
could be either (a comparison with a number, a function's argument, ``CASE``) is refused
by name. MySQL and MariaDB differ on the ``X'41'`` form: MySQL reads it as a number in
numeric context, MariaDB as text (``X'41' + 0`` is 65 in MySQL, 0 in MariaDB), so that
form is taken in string context only; ``0x41``, ``b'...'`` and ``0b...`` are numbers in
both. A number of more than 8 bytes, or past a signed BIGINT, is refused too (MariaDB
reads the last 8 bytes; a negated BIGINT UNSIGNED is a DECIMAL there).
"""

from __future__ import annotations

from typing import Literal

from sqlglot import exp

from rivulet.errors import SqlError
from rivulet.sql.parse import error_at, unsupported

Hybrid = exp.HexString | exp.BitString

#: The operators that read their operands as numbers: the bit operators (whose results are
#: unsigned) and unary minus.
_NUMERIC_PARENTS = (exp.Neg, exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor, exp.BitwiseNot,
                    exp.BitwiseLeftShift, exp.BitwiseRightShift)
#: Arithmetic, where the literal is a BIGINT UNSIGNED: MySQL fails a result below 0
#: (``1 - 0x41``, ``i + 0x41`` for i < -65: error 1690), which rivulet's arithmetic does
#: not, so the other operand must be a constant number, not below 0.
_ARITHMETIC_PARENTS = (exp.Add, exp.Mul, exp.Div, exp.IntDiv, exp.Mod)
#: The functions whose text result is the literal's (binary) character set unless another
#: argument comes from a column (MySQL's coercibility: ``CONCAT(0x41, s)`` is text).
TEXT_JOINING_PARENTS = (exp.Concat, exp.ConcatWs)
_JOINING_NAMES = frozenset({"CONCAT", "CONCAT_WS"})
#: The comparisons, which read it as text only if every other operand is text.
COMPARING_PARENTS = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.LT, exp.LTE, exp.GT, exp.GTE,
                     exp.In, exp.Between)
#: The largest number a literal is taken as (a signed BIGINT's).
_LARGEST = (1 << 63) - 1


def digits(node: Hybrid) -> str:
    """The literal's digits as written (hexadecimal or binary)."""
    return str(node.this or "")


def prefixed(node: Hybrid) -> bool:
    """Whether the literal is written ``0x41``/``0b101`` (else ``X'41'``/``b'101'``): the
    text it spans is its digits and two characters."""
    start, end = node.meta.get("start"), node.meta.get("end")
    return start is not None and end is not None and end - start + 1 == len(digits(node)) + 2


def as_bytes(node: Hybrid) -> bytes:
    """The binary string the literal is: ``0x141`` is ``b'\\x01A'`` (an odd number of digits
    takes a leading 0, which MySQL allows in the ``0x`` form only)."""
    text = digits(node)
    if isinstance(node, exp.HexString):
        if len(text) % 2 and not prefixed(node):
            raise error_at(node, f"You have an error in your SQL syntax near \"X'{text}'\": "
                                 "X'...' takes an even number of hexadecimal digits")
        return bytes.fromhex(text.rjust(len(text) + len(text) % 2, "0"))
    if not text:
        return b""
    return int(text, 2).to_bytes((len(text) + 7) // 8, "big")


def as_number(node: Hybrid) -> int:
    """The integer the literal is in numeric context (refused where MySQL and MariaDB
    differ, see the module's docstring)."""
    if isinstance(node, exp.HexString) and not prefixed(node):
        raise unsupported(node, "X'...' literal in numeric context (MySQL reads it as a "
                                "number, MariaDB as text; write 0x...)")
    data = as_bytes(node)
    if not data or len(data) > 8 or int.from_bytes(data, "big") > _LARGEST:
        raise unsupported(node, "hexadecimal or bit literal in numeric context that is empty, "
                                "longer than 8 bytes or past a signed BIGINT")
    return int.from_bytes(data, "big")


def context(node: Hybrid
            ) -> Literal["number", "text", "compared", "joined"] | None:
    """How the literal's position reads it: as a number, as text, as one operand of a
    comparison (text if the others are), as text joined to other text (binary unless
    another argument comes from a column), or None for a position that could read it
    either way (or where rivulet would not answer as MySQL)."""
    child: exp.Expr = node
    parent = node.parent
    while isinstance(parent, exp.Paren):
        child, parent = parent, parent.parent
    if isinstance(parent, _NUMERIC_PARENTS):
        return "number"
    if isinstance(parent, exp.Anonymous) and parent.name.upper() == "BIT_COUNT":
        return "number"
    if isinstance(parent, _ARITHMETIC_PARENTS):
        other = parent.expression if child is parent.this else parent.this
        while isinstance(other, exp.Paren):
            other = other.this
        plain = isinstance(other, exp.Literal) and not other.is_string
        return "number" if plain or isinstance(other, (exp.HexString, exp.BitString)) else None
    if isinstance(parent, TEXT_JOINING_PARENTS) or (
            isinstance(parent, exp.Anonymous) and parent.name.upper() in _JOINING_NAMES):
        return "joined"
    if isinstance(parent, exp.Like):
        return "text"
    if isinstance(parent, exp.Select) or (isinstance(parent, exp.Alias)
                                          and isinstance(parent.parent, exp.Select)):
        return "text" if child.arg_key in ("expressions", "this") else None
    if isinstance(parent, COMPARING_PARENTS):
        return "compared"
    return None


def refused_here(node: Hybrid) -> SqlError:
    """The error for a literal in a position that could read it either way."""
    return unsupported(node, "hexadecimal or bit literal in this position (MySQL reads it as "
                             "a number or as a binary string by context: use it in a string "
                             "function, CONCAT, LIKE, a comparison with text or arithmetic)")
