"""Control-flow functions: ``COALESCE``, ``IFNULL``, ``NULLIF``, ``IF``, and a long ``CASE``.

Why this module exists: these are the functions that do *not* simply propagate NULL; they
choose between their arguments, using comparison (``NULLIF``) and truth (``IF``). What they
return is an expression's value, so an ENUM column's value comes out as its plain text
(:func:`~rivulet.values.enumerations.plain`), as in MySQL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rivulet.values.comparison import eq
from rivulet.values.enumerations import plain
from rivulet.values.logic import truth


def coalesce(*args: Any) -> Any:
    """``COALESCE(...)``: the first non-NULL argument, or NULL."""
    for a in args:
        if a is not None:
            return plain(a)
    return None


def ifnull(a: Any, b: Any) -> Any:
    """``IFNULL(a, b)``: a unless it is NULL."""
    return plain(b if a is None else a)


def nullif(a: Any, b: Any) -> Any:
    """``NULLIF(a, b)``: NULL if a = b is true, else a."""
    return None if eq(a, b) == 1 else plain(a)


def if_(cond: Any, a: Any, b: Any) -> Any:
    """``IF(cond, a, b)``: a if cond is true; b if it is false or NULL."""
    if type(cond) is int:
        return plain(a if cond else b)
    return plain(a if truth(cond) == 1 else b)


def first_branch(branches: Sequence[tuple[Callable[[], Any], Callable[[], Any]]],
                 default: Callable[[], Any]) -> Any:
    """A ``CASE`` of many ``WHEN``s (an ORM's bulk update writes one per row): the value of
    the first branch whose condition is true, else the default; each evaluated only when
    reached, as MySQL does. The compiler nests a short CASE's branches in one expression;
    nested hundreds deep, Python could not compile it (rivulet/dataflow/compile.py)."""
    for condition, value in branches:
        if truth(condition()) == 1:
            return value()
    return default()
