"""ENUM values: a member's text that also knows its position in the column's declaration.

Why this module exists: MySQL keeps an ENUM value as the member's index and shows it as the
member's text, and the two meet in every expression: ``e = 'red'``, ``CONCAT(e)`` and
``MAX(e)`` use the text, ``e + 0``, ``e = 3``, ``WHERE e`` and ``SUM(e)`` the index, and
``ORDER BY e`` sorts by the index. A value of an ENUM column is therefore an
:class:`EnumValue`: a ``str`` (so every string function and comparison sees the text)
carrying its index as ``position`` (which the numeric conversions, truth and ``ORDER BY``
keys use; ``str`` has an ``index`` method already).

Only a column's own values are EnumValues: what an expression computes from one is plain
text or a number, as in MySQL, where ``COALESCE(e, 'x')``, ``IF(c, e, e)``, ``MIN(e)`` and a
UNION of ENUM columns are strings (``COALESCE(e, 'x') + 0`` is 0, not the index). Functions
that hand an argument back unchanged therefore pass it through :func:`plain`.

This module imports nothing of rivulet: :mod:`rivulet.values.schema` (the write checks) and
:mod:`rivulet.values.conversions` (numeric context) both build on it.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import Any


class EnumValue(str):
    """A value of an ENUM column: the member's text, and its 1-based ``position`` in the
    column's list of members (MySQL's index, the numeric value of the member).

    Equality and hashing are the text's, so an EnumValue equals (and finds in a dict) the
    plain string of its text, as ``e = 'red'`` compares text in MySQL.
    """

    position: int

    def __new__(cls, text: str, position: int) -> EnumValue:
        value = super().__new__(cls, text)
        value.position = position
        return value

    def __reduce__(self) -> tuple[Any, ...]:
        return (EnumValue, (str(self), self.position))


@lru_cache(maxsize=1024)
def enum_values(members: tuple[str, ...]) -> tuple[EnumValue, ...]:
    """The values of an ENUM column with these members, one shared object per member."""
    return tuple(EnumValue(m, i) for i, m in enumerate(members, start=1))


@lru_cache(maxsize=1024)
def _by_text(members: tuple[str, ...]) -> dict[str, EnumValue]:
    return {str(v): v for v in enum_values(members)}


def stored_member(members: tuple[str, ...], text: str) -> EnumValue:
    """The member a stored text names (storage keeps the text; the index is the schema's)."""
    return _by_text(members)[text]


#: The number MySQL reads from an ENUM assignment's text when no member has that text
#: (``my_strntoul`` on fewer than 6 characters): leading whitespace, an optional ``+``, digits.
_MEMBER_NUMBER = re.compile(r"[ \t\n\r\v\f]*\+?(\d+)\Z")


def member_for(members: tuple[str, ...], value: Any) -> EnumValue:
    """The member an assignment of ``value`` to an ENUM column stores, as MySQL's strict mode
    decides; ``ValueError`` when it stores none (MySQL: error 1265, data truncated).

    Text names the member with that text, trailing spaces ignored (case counts: rivulet's
    collation is binary); text that names no member but is a short number (``'2'``,
    ``' +02'``) and a number (``2``, ``2.9``: truncated) name the member at that position.
    The empty string names a member only if one is declared ``''``: MySQL's "error" value
    (index 0) is not accepted in strict mode.
    """
    if isinstance(value, str):  # (another ENUM column's value too: MySQL copies its text)
        text = value.rstrip(" ")
        found = _by_text(members).get(text)
        if found is not None:
            return found
        number = _MEMBER_NUMBER.match(text) if len(text) < 6 else None
        if number is None:
            raise ValueError(f"{value!r} is not a member of ENUM{_listed(members)}")
        return _at(members, int(number.group(1)), value)
    if isinstance(value, (bool, int)):
        return _at(members, int(value), value)
    if isinstance(value, (float, Decimal)):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{value!r} is not a member of ENUM{_listed(members)}")
        return _at(members, int(value), value)  # MySQL truncates: 2.9 stores member 2
    raise TypeError(f"a {type(value).__name__} is not an ENUM value")


def _at(members: tuple[str, ...], index: int, value: Any) -> EnumValue:
    if not 1 <= index <= len(members):
        raise ValueError(f"{value!r} is not a member of ENUM{_listed(members)} (no member "
                         f"{index}: members are numbered 1 to {len(members)})")
    return enum_values(members)[index - 1]


def _listed(members: tuple[str, ...]) -> str:
    shown = ", ".join(repr(m) for m in members[:8])
    return f"({shown}{', ...' if len(members) > 8 else ''})"


def compared_member(members: tuple[str, ...], value: Any) -> str | EnumValue | None:
    """The value a row's ENUM value must equal (and hash like) to satisfy ``e = value``, as
    MySQL compares: text compares as text (no trailing-space or numeric reading, unlike an
    assignment), a number compares with the member's index. None: no member can be equal.
    A column whose members are not known (``members`` empty) is compared by text only."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bool, int, float, Decimal)) and members:
        if value != value or int(value) != value or not 1 <= value <= len(members):
            return None
        return enum_values(members)[int(value) - 1]
    return None


def plain(v: Any) -> Any:
    """``v`` as an expression's result: an ENUM column's value becomes its plain text (MySQL
    types what a function or a UNION returns as a string, not an ENUM); others unchanged."""
    return str(v) if type(v) is EnumValue else v
