"""``REGEXP`` / ``RLIKE`` / ``REGEXP_LIKE``: the patterns whose meaning MySQL's regular
expressions and Python's agree on, matched with Python's ``re``.

Why this module exists: MySQL 8 matches with ICU, MariaDB with PCRE, rivulet with Python's
``re``; the three agree on a common core and differ past it (ICU's sets nest and take
``&&``/``--``, ``\\w``/``\\d`` are Unicode in one and ASCII in another, POSIX classes,
backreferences, lookaround, possessive quantifiers...). :func:`python_pattern` reads a
pattern by MySQL's grammar and writes the Python pattern of the same meaning, or says why
it will not (:class:`PatternRefused`): literals, ``\\`` before a character that is not a
letter or digit, ``.``, ``^``, ``$``, ``*``, ``+``, ``?`` (lazy ones too), ``{m}``,
``{m,}``, ``{m,n}``, ``|``, ``( )``, ``(?: )`` and bracket sets of characters and ranges
(``[^a-z0-9_]``). ``.`` and ``$`` are ICU's: ``.`` matches no line terminator (``\\n``,
``\\r``, ``\\v``, ``\\f``, U+0085, U+2028, U+2029) and ``$`` matches at the end or before a
final one. A match is found anywhere in the text (``'abc' REGEXP 'b'`` is 1),
case-sensitively, as rivulet's binary collation compares (as ``LIKE`` does).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from rivulet.values.conversions import to_str

#: ICU's line terminators (what ``.`` does not match and ``$`` may stand before).
_TERMINATORS = "\\n\\x0b\\x0c\\r\\x85\\u2028\\u2029"
_DOT = f"[^{_TERMINATORS}]"
_END = f"(?=(?:\\r\\n|[{_TERMINATORS}])?\\Z)"
#: The largest count of a ``{m,n}`` (ICU's and Python's limits differ far above it).
_MAX_COUNT = 1000


class PatternRefused(Exception):
    """A pattern outside the common core (its message says which construct)."""


def python_pattern(pattern: str) -> str:
    """The Python pattern meaning what MySQL's ``pattern`` means, or :class:`PatternRefused`."""
    if not pattern:
        raise PatternRefused("an empty pattern (MySQL 8 fails it)")
    out: list[str] = []
    depth = 0
    i, n = 0, len(pattern)
    repeatable = False  # whether a quantifier may follow (what precedes is an item)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                raise PatternRefused("a pattern ending in \\")
            nxt = pattern[i + 1]
            if nxt.isalnum() or not nxt.isascii():
                raise PatternRefused(f"the escape \\{nxt} (classes such as \\d and \\w, "
                                     "backreferences and other escapes differ between "
                                     "MySQL's and rivulet's regular expressions)")
            out.append(re.escape(nxt))
            i += 2
            repeatable = True
            continue
        if c == ".":
            out.append(_DOT)
            repeatable = True
        elif c == "^":
            out.append("^")
            repeatable = False
        elif c == "$":
            out.append(_END)
            repeatable = False
        elif c in "*+?":
            if not repeatable:
                raise PatternRefused(f"a quantifier {c} that follows nothing to repeat")
            out.append(c)
            i += 1
            if i < n and pattern[i] == "?":  # lazy: whether there is a match is the same
                out.append("?")
                i += 1
            if i < n and pattern[i] in "*+{":
                raise PatternRefused("a possessive or repeated quantifier")
            repeatable = False
            continue
        elif c == "{":
            if not repeatable:
                raise PatternRefused("a quantifier { that follows nothing to repeat")
            m = re.compile(r"\{(\d{1,4})(,(\d{0,4}))?\}").match(pattern, i)
            if m is None:
                raise PatternRefused("a { that is not a count {m}, {m,} or {m,n}")
            low, high = int(m.group(1)), m.group(3)
            if low > _MAX_COUNT or (high and (int(high) > _MAX_COUNT or int(high) < low)):
                raise PatternRefused(f"the count {m.group(0)}")
            out.append(m.group(0))
            i = m.end()
            if i < n and pattern[i] == "?":
                out.append("?")
                i += 1
            if i < n and pattern[i] in "*+{":
                raise PatternRefused("a possessive or repeated quantifier")
            repeatable = False
            continue
        elif c == "|":
            out.append("|")
            repeatable = False
        elif c == "(":
            if pattern.startswith("(?:", i):
                out.append("(?:")
                i += 3
            elif pattern.startswith("(?", i):
                raise PatternRefused("a (? group (lookaround, flags, named groups)")
            else:
                out.append("(")
                i += 1
            depth += 1
            repeatable = False
            continue
        elif c == ")":
            if depth == 0:
                raise PatternRefused("a ) without its (")
            depth -= 1
            out.append(")")
            repeatable = True
        elif c == "[":
            text, i = _bracket(pattern, i)
            out.append(text)
            repeatable = True
            continue
        elif c in "]}":
            raise PatternRefused(f"a {c} outside a set or a count")
        else:
            out.append(re.escape(c))
            repeatable = True
        i += 1
    if depth:
        raise PatternRefused("a ( without its )")
    return "".join(out)


def _bracket(pattern: str, start: int) -> tuple[str, int]:
    """The set ``[...]`` at ``start``: its Python text and the index past it."""
    i, n = start + 1, len(pattern)
    out = ["["]
    if i < n and pattern[i] == "^":
        out.append("^")
        i += 1
    if i < n and pattern[i] == "]":
        raise PatternRefused("a set starting with ]")
    items: list[tuple[str, bool]] = []  # (character, whether escaped)
    while True:
        if i >= n:
            raise PatternRefused("a [ without its ]")
        c = pattern[i]
        if c == "]":
            break
        if c == "[":
            raise PatternRefused("a [ inside a set (POSIX classes such as [:alpha:], nested "
                                 "sets)")
        if pattern.startswith(("&&", "--", "~~", "||"), i):
            raise PatternRefused(f"the set operator {pattern[i:i + 2]}")
        if c == "\\":
            if i + 1 >= n:
                raise PatternRefused("a pattern ending in \\")
            nxt = pattern[i + 1]
            if nxt.isalnum() or not nxt.isascii():
                raise PatternRefused(f"the escape \\{nxt} in a set")
            items.append((nxt, True))
            i += 2
        else:
            items.append((c, False))
            i += 1
    if not items:
        raise PatternRefused("an empty set")
    k = 0
    while k < len(items):
        c, escaped = items[k]
        if c == "-" and not escaped and 0 < k < len(items) - 1:
            raise PatternRefused("a - in a set that is neither a range nor first or last")
        if k + 2 < len(items) and items[k + 1] == ("-", False):
            low, high = c, items[k + 2][0]
            if low > high:
                raise PatternRefused(f"the range {low}-{high}")
            out.append(f"{re.escape(low)}-{re.escape(high)}")
            k += 3
            continue
        out.append(re.escape(c))
        k += 1
    out.append("]")
    return "".join(out), i + 1


def refusal(pattern: Any) -> str | None:
    """Why a constant ``pattern`` is refused (None: it is not); a NULL pattern is taken."""
    if pattern is None:
        return None
    if not isinstance(pattern, str):
        return "REGEXP with a pattern that is not text"
    try:
        python_pattern(pattern)
    except PatternRefused as exc:
        return f"REGEXP pattern with {exc}"
    return None


@lru_cache(maxsize=1024)
def _matcher(pattern: str) -> Callable[[str], Any]:
    return re.compile(python_pattern(pattern)).search


def regexp(s: Any, pattern: Any) -> int | None:
    """``s REGEXP pattern``: 1 if the pattern matches somewhere in ``s`` (as text), else
    0; NULL if either is NULL. The planner has checked the pattern (:func:`refusal`)."""
    if s is None or pattern is None:
        return None
    text = to_str(s)
    if isinstance(text, bytes):  # (refused by the planner; a parameter's bytes as text)
        text = text.decode("utf-8", "replace")
    return 1 if _matcher(pattern)(text) is not None else 0
