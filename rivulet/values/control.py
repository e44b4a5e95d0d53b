"""Control-flow functions: ``COALESCE``, ``IFNULL``, ``NULLIF``, ``IF``.

Why this module exists: these are the functions that do *not* simply propagate NULL; they
choose between their arguments, using comparison (``NULLIF``) and truth (``IF``). What they
return is an expression's value, so an ENUM column's value comes out as its plain text
(:func:`~rivulet.values.enumerations.plain`), as in MySQL.
"""

from __future__ import annotations

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
