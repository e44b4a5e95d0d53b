"""Statement text to a *template* and its slot values, without a SQL parser.

A MySQL client that does not use server-side prepared statements sends every value spliced
into the text (``... WHERE id = 5``, then ``... WHERE id = 6``). To answer both from one
view, and to parse SQL once per statement shape rather than once per query, the server
splits the text into a template, where every literal and every ``?`` becomes a ``?`` slot,
and the slots' values. This runs on every query, so it is one regular-expression pass
(a few microseconds); sqlglot sees a template only the first time it appears.

Which slots really become view parameters is decided later, once per template, from the
parsed statement (see :mod:`rivulet.server.mysql.statements`): a literal in ``LIMIT 10`` or in a
SELECT list stays a constant.
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from typing import Any

#: One regular expression over the whole text. Its first branch swallows, in one match,
#: the runs of names, spaces and punctuation that hold no slot (a number inside a name,
#: like ``t1``, is part of the name), so a query takes a handful of matches. Strings, quoted
#: names and comments are matched whole: a number or ``?`` inside them is not a slot. A
#: list of integers (``IN (3, 17, 42, ...)``, often dozens long) is one match too, cut into
#: its slots by C-level calls rather than one Python step per number. The runs inside a
#: repetition are possessive (``++``): a run can be matched one way only, so text that ends
#: inside a string (``' abc def ...`` unterminated) fails in linear time, not exponential
#: (a 30-character one held the server's event loop, and the GIL, for minutes).
_TOKENS = re.compile(
    r"""
    (?:[A-Za-z_$\x80-\U0010ffff][\w$]*+|[\s,.()=*<>+;:!&|^~%{}\[\]@]++)+
  | ('(?:[^'\\]++|\\.|'')*'|"(?:[^"\\]++|\\.|"")*")
  | (`(?:[^`]++|``)*`|/\*.*?\*/|--[ \t][^\n]*|\#[^\n]*)
  | (\d+(?:[ \t]*,[ \t]*\d+)+)(?![\w$.])
  | (\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)(?![\w$])
  | (\?)
  | .
    """,
    re.S | re.X,
)
_STRING, _VERBATIM, _INTEGERS, _NUMBER, _PARAM = 1, 2, 3, 4, 5
_DIGITS = re.compile(r"\d+")
_WORD_CHAR = re.compile(r"[\w$]")

_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a",
            "%": "\\%", "_": "\\_"}
_ESCAPE = re.compile(r"\\(.)|''|\"\"", re.S)

#: A slot's kind: a literal of the text, or a ``?`` whose value comes with EXECUTE.
LITERAL, PARAM = "literal", "param"


@dataclass(frozen=True, slots=True)
class Split:
    """A statement cut into its template and slots.

    ``values`` holds each slot's value (``None`` for a ``?``), ``texts`` each slot's text
    as written (to put a constant back into SQL exactly as the client wrote it),
    ``params`` the indexes of the ``?`` slots. ``exact`` is False when the text has
    something the template does not turn into a slot (a hex or charset-prefixed literal):
    such a statement is handled by its exact text, with only its ``?`` as parameters.
    """

    template: str
    values: tuple[Any, ...]
    texts: tuple[str, ...]
    params: tuple[int, ...]
    exact: bool = True


def split(sql: str) -> Split:
    """The template and slot values of ``sql`` (see the module docstring)."""
    pieces: list[str] = []
    values: list[Any] = []
    texts: list[str] = []
    params: list[int] = []
    exact = True
    last = 0
    for match in _TOKENS.finditer(sql):
        kind = match.lastindex
        if kind is None or kind == _VERBATIM:
            continue
        start, end = match.span()
        if kind == _STRING and start and _WORD_CHAR.match(sql, start - 1):
            exact = False  # x'1f', _utf8'...', N'...': kept in the template as written
            continue
        text = match.group(kind)
        pieces.append(sql[last:start])
        last = end
        if kind == _INTEGERS:
            found = _DIGITS.findall(text)
            pieces.append(_DIGITS.sub("?", text))
            values.extend(map(int, found))
            texts.extend(found)
            continue
        pieces.append("?")
        if kind == _PARAM:
            params.append(len(values))
            values.append(None)
        elif kind == _STRING:
            values.append(unquote(text))
        else:
            values.append(number(text))
        texts.append(text)
    if not texts:
        return Split(sql, (), (), (), exact)
    pieces.append(sql[last:])
    return Split("".join(pieces), tuple(values), tuple(texts), tuple(params), exact)


def with_markers(template: str, marker: str) -> str:
    """``template`` with its ``n``-th slot replaced by ``marker.format(n)`` (a ``?`` in a
    string or comment of the template is not a slot)."""
    count = iter(range(len(template)))

    def replace(match: re.Match[str]) -> str:
        if match.lastindex != _PARAM:
            return match.group()
        return marker.format(next(count))

    return _TOKENS.sub(replace, template)


def unquote(text: str) -> str:
    """The value of a MySQL string literal (quotes included in ``text``): backslash escapes
    as MySQL reads them (``\\%`` and ``\\_`` keep their backslash, an unknown escape is the
    character itself) and doubled quotes."""
    body = text[1:-1]
    if "\\" not in body and text[0] * 2 not in body:
        return body
    return _ESCAPE.sub(_unescape, body)


def _unescape(match: re.Match[str]) -> str:
    char = match.group(1)
    if char is None:
        return match.group()[0]  # '' or ""
    return _ESCAPES.get(char, char)


def number(text: str) -> int | float | decimal.Decimal:
    """A numeric literal's value as rivulet reads it: an integer, a float with an
    exponent, otherwise an exact decimal (MySQL reads ``1.5`` as DECIMAL)."""
    if "." not in text and "e" not in text and "E" not in text:
        return int(text)
    if "e" in text or "E" in text:
        return float(text)
    return decimal.Decimal(text)

