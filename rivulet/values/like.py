"""``LIKE`` and ``NOT LIKE``, with MySQL's default escape character.

Why this module exists: a LIKE pattern is compiled once to a regular expression and cached,
since the same few patterns are matched against every row; the pattern language (``%``,
``_``, the escape character, byte-wise matching of binary strings) lives here with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from rivulet.errors import SqlError
from rivulet.values.conversions import text_operands, to_str


@lru_cache(maxsize=1024)
def _like_matcher(pattern: str, escape: str) -> Callable[[str], Any]:
    """Compile a LIKE pattern to a regex fullmatch: ``%`` any run, ``_`` one character,
    the escape character makes the next character literal (a trailing escape is literal)."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == escape and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "%":
            if not out or out[-1] != ".*":  # runs of % are one wildcard (avoids backtracking)
                out.append(".*")
        elif c == "_":
            out.append(".")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL).fullmatch


def like(s: Any, pattern: Any, escape: Any = "\\") -> int | None:
    """``s LIKE pattern [ESCAPE escape]``, case-sensitive (binary collation).

    Non-string operands are converted to strings (``123 LIKE '12%'`` is 1). A NULL escape
    means the default ``\\``; an empty escape means none. If either operand is a binary
    string the match is byte-wise.
    """
    if s is None or pattern is None:
        return None
    if escape is None:
        escape = "\\"
    if type(s) is not str or type(pattern) is not str or type(escape) is not str:
        s, pattern, escape = _like_operands(s, pattern, escape)
    if len(escape) > 1:
        raise SqlError("Incorrect arguments to ESCAPE: the escape must be one character")
    return 1 if _like_matcher(pattern, escape)(s) is not None else 0


def _like_operands(s: Any, pattern: Any, escape: Any) -> tuple[str, str, str]:
    s, pattern, escape = text_operands(to_str(s), to_str(pattern), to_str(escape))
    if type(s) is bytes:  # byte-wise matching: one latin-1 character per byte
        return s.decode("latin-1"), pattern.decode("latin-1"), escape.decode("latin-1")
    return s, pattern, escape


def not_like(s: Any, pattern: Any, escape: Any = "\\") -> int | None:
    """``s NOT LIKE pattern``."""
    r = like(s, pattern, escape)
    return None if r is None else 1 - r
