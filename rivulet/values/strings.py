"""String functions: ``CONCAT``, ``SUBSTRING``, ``TRIM``, ``LOCATE``, ``LPAD``...

Why this module exists: MySQL's string functions have their own conventions (1-based
positions, lengths in bytes for ``LENGTH``, binary strings staying binary, results over
``max_allowed_packet`` becoming NULL); they are kept together with those conventions.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from rivulet.values.conversions import text_operands, to_int, to_str

#: Results longer than MySQL's default ``max_allowed_packet`` (64 MiB) are NULL, as in MySQL.
_MAX_STRING = 64 * 1024 * 1024


def concat(*args: Any) -> str | bytes | None:
    """``CONCAT(...)``: NULL if any argument is NULL; numbers and dates as ``to_str``; the
    result is bytes if any argument is bytes (a binary string, as in MySQL)."""
    try:
        return "".join(args)  # fast path: all str
    except TypeError:
        pass
    parts = []
    for a in args:
        if a is None:
            return None
        parts.append(to_str(a))
    texts = text_operands(*parts)
    return (b"" if texts and type(texts[0]) is bytes else "").join(texts)


def concat_ws(sep: Any, *args: Any) -> str | bytes | None:
    """``CONCAT_WS(sep, ...)``: joins the non-NULL arguments with sep; NULL only if sep is."""
    if sep is None:
        return None
    parts = text_operands(to_str(sep), *[to_str(a) for a in args if a is not None])
    return parts[0].join(parts[1:])


def _text(v: Any) -> str | bytes:
    return v if type(v) is str else to_str(v)


def lower(s: Any) -> str | bytes | None:
    """``LOWER(s)`` / ``LCASE``: each character to one character (MySQL's simple case
    mapping, so no final-sigma rule); binary strings are unchanged, as in MySQL."""
    if s is None:
        return None
    s = _text(s)
    if type(s) is bytes:
        return s
    return s.lower() if s.isascii() else "".join(map(_lower_char, s))


def upper(s: Any) -> str | bytes | None:
    """``UPPER(s)`` / ``UCASE``: each character to one character (MySQL's simple case
    mapping: 'ß' stays 'ß' where Python's str.upper gives 'SS'); binary strings are
    unchanged, as in MySQL."""
    if s is None:
        return None
    s = _text(s)
    if type(s) is bytes:
        return s
    return s.upper() if s.isascii() else "".join(map(_upper_char, s))


@lru_cache(maxsize=4096)
def _upper_char(c: str) -> str:
    """``c``'s simple uppercase: str.upper unless that expands it (Unicode's SpecialCasing),
    then its titlecase if one character ('ᾳ' -> 'ᾼ'), else ``c`` itself ('ß')."""
    up = c.upper()
    if len(up) == 1:
        return up
    title = c.title()
    return title if len(title) == 1 else c


@lru_cache(maxsize=4096)
def _lower_char(c: str) -> str:
    """``c``'s simple lowercase: str.lower, whose only expansion ('İ' -> 'i' + a combining
    dot) keeps its first character."""
    return c.lower()[:1] or c


def length(s: Any) -> int | None:
    """``LENGTH(s)``: the length in *bytes* of the UTF-8 (utf8mb4) encoding."""
    if s is None:
        return None
    s = _text(s)
    if type(s) is bytes or s.isascii():
        return len(s)
    return len(s.encode("utf-8", "surrogatepass"))


def char_length(s: Any) -> int | None:
    """``CHAR_LENGTH(s)`` / ``CHARACTER_LENGTH``: the length in characters (bytes for a
    binary string)."""
    if s is None:
        return None
    return len(_text(s))


_ABSENT: Any = object()  # marks an argument the SQL call did not pass (distinct from NULL)


def substring(s: Any, pos: Any, count: Any = _ABSENT) -> str | bytes | None:
    """``SUBSTRING(s, pos[, count])`` / ``SUBSTR`` / ``MID``: 1-based; a negative pos counts
    from the end; pos 0, a pos beyond either end, or count <= 0 give ''."""
    if s is None or pos is None or count is None:
        return None
    s = _text(s)
    pos = to_int(pos)
    n = len(s)
    if pos > 0:
        start = pos - 1
    elif pos < 0 and -pos <= n:
        start = n + pos
    else:
        return s[:0]
    if count is _ABSENT:
        return s[start:]
    count = to_int(count)
    if count <= 0:
        return s[:0]
    return s[start:start + count]


def left(s: Any, n: Any) -> str | bytes | None:
    """``LEFT(s, n)``: the first n characters ('' if n <= 0)."""
    if s is None or n is None:
        return None
    s = _text(s)
    n = to_int(n)
    return s[:n] if n > 0 else s[:0]


def right(s: Any, n: Any) -> str | bytes | None:
    """``RIGHT(s, n)``: the last n characters ('' if n <= 0)."""
    if s is None or n is None:
        return None
    s = _text(s)
    n = to_int(n)
    return s[-n:] if n > 0 else s[:0]


def trim(s: Any, remstr: Any = " ", where: str = "BOTH") -> str | bytes | None:
    """``TRIM([BOTH|LEADING|TRAILING] [remstr] FROM s)``: removes repeated whole copies of
    remstr (default one space; not other whitespace) from the chosen ends."""
    if s is None or remstr is None:
        return None
    s, remstr = text_operands(_text(s), _text(remstr))
    if not remstr:
        return s
    k = len(remstr)
    if where != "TRAILING":
        while s.startswith(remstr):
            s = s[k:]
    if where != "LEADING":
        while s.endswith(remstr):
            s = s[:-k]
    return s


def ltrim(s: Any) -> str | bytes | None:
    """``LTRIM(s)``: removes leading spaces (only ' ', as in MySQL)."""
    if s is None:
        return None
    s = _text(s)
    return s.lstrip(b" " if type(s) is bytes else " ")


def rtrim(s: Any) -> str | bytes | None:
    """``RTRIM(s)``: removes trailing spaces (only ' ', as in MySQL)."""
    if s is None:
        return None
    s = _text(s)
    return s.rstrip(b" " if type(s) is bytes else " ")


def replace(s: Any, from_: Any, to: Any) -> str | bytes | None:
    """``REPLACE(s, from, to)``: case-sensitive; an empty from leaves s unchanged."""
    if s is None or from_ is None or to is None:
        return None
    s, from_, to = text_operands(_text(s), _text(from_), _text(to))
    if not from_:
        return s
    return s.replace(from_, to)


def reverse(s: Any) -> str | bytes | None:
    """``REVERSE(s)``."""
    if s is None:
        return None
    return _text(s)[::-1]


def locate(substr: Any, s: Any, pos: Any = 1) -> int | None:
    """``LOCATE(substr, s[, pos])``: 1-based position of the first occurrence at or after
    pos, 0 if none (or if pos is out of range); the empty string is found at pos."""
    if substr is None or s is None or pos is None:
        return None
    substr, s = text_operands(_text(substr), _text(s))
    pos = to_int(pos)
    if pos < 1:
        return 0
    return s.find(substr, pos - 1) + 1


def instr(s: Any, substr: Any) -> int | None:
    """``INSTR(s, substr)`` = ``LOCATE(substr, s)`` (note the swapped arguments)."""
    return locate(substr, s)


def _pad(s: Any, n: Any, pad: Any, on_left: bool) -> str | bytes | None:
    if s is None or n is None or pad is None:
        return None
    s, pad = text_operands(_text(s), _text(pad))
    n = to_int(n)
    if n < 0 or n > _MAX_STRING:
        return None
    if len(s) >= n:
        return s[:n]
    if not pad:
        return None
    need = n - len(s)
    fill = (pad * (need // len(pad) + 1))[:need]
    return fill + s if on_left else s + fill


def lpad(s: Any, n: Any, pad: Any) -> str | bytes | None:
    """``LPAD(s, n, pad)``: s left-padded with pad to n characters, or cut to n; NULL if
    n < 0, or if padding is needed and pad is ''."""
    return _pad(s, n, pad, True)


def rpad(s: Any, n: Any, pad: Any) -> str | bytes | None:
    """``RPAD(s, n, pad)``: as ``lpad`` but pads on the right."""
    return _pad(s, n, pad, False)


def repeat(s: Any, n: Any) -> str | bytes | None:
    """``REPEAT(s, n)``: '' if n <= 0; NULL if the result would exceed 64 MiB (MySQL's
    max_allowed_packet default)."""
    if s is None or n is None:
        return None
    s = _text(s)
    n = to_int(n)
    if n <= 0:
        return s[:0]
    if len(s) * n > _MAX_STRING:
        return None
    return s * n
