"""ORDER BY keys: :func:`sort_key` and :func:`desc_key`.

Why this module exists: Python cannot sort None among values, and MySQL puts NULLs first in
ascending order and last in descending order. These keys encode that once, for the dataflow
engine's top-k operators and the Spark side's ordering alike.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from rivulet.values.enumerations import EnumValue

_NULL_FIRST = (0,)
_NULL_LAST = (1,)


def sort_key(v: Any) -> tuple[Any, ...]:
    """Key for ``ORDER BY v ASC``: NULLs first (as MySQL), then values in natural order.

    The key is ``(0,)`` for NULL and ``(1, v)`` otherwise, so comparing two keys never
    compares None with a value, and keys can sit inside a larger tuple. Values of one column
    share one kind (the schema guarantees it); a compiler that mixes DATE and DATETIME or
    strings and numbers in one sort expression must convert them first. An ENUM column's
    values sort by their index (MySQL's order of an ENUM), not their text.
    """
    if v is None:
        return _NULL_FIRST
    if type(v) is EnumValue:
        return (1, v.position)
    return (1, v)


class _Desc:
    """Wraps a value so that it orders in reverse: sorting ascending gives descending order."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v

    def __lt__(self, other: Any) -> bool:
        if type(other) is not _Desc:
            return NotImplemented
        return other.v < self.v

    def __le__(self, other: Any) -> bool:
        if type(other) is not _Desc:
            return NotImplemented
        return other.v <= self.v

    def __gt__(self, other: Any) -> bool:
        if type(other) is not _Desc:
            return NotImplemented
        return other.v > self.v

    def __ge__(self, other: Any) -> bool:
        if type(other) is not _Desc:
            return NotImplemented
        return other.v >= self.v

    def __eq__(self, other: Any) -> bool:
        if type(other) is not _Desc:
            return NotImplemented
        return self.v == other.v

    def __hash__(self) -> int:
        return hash(self.v)

    def __repr__(self) -> str:
        return f"_Desc({self.v!r})"


def desc_key(v: Any) -> tuple[Any, ...]:
    """Key for ``ORDER BY v DESC``, to be sorted ascending: NULLs last (as MySQL), values in
    reverse order. Numbers are negated (cheap); other values are wrapped in ``_Desc``."""
    if v is None:
        return _NULL_LAST
    t = type(v)
    if t is int or t is float or t is bool:
        return (0, -v)
    if t is EnumValue:
        return (0, -v.position)
    if t is Decimal:
        return (0, v.copy_negate())
    return (0, _Desc(v))
