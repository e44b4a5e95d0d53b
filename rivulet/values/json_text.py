"""JSON text as MariaDB reads it: the ``JSON`` column type's check and the JSON functions
rivulet computes (``JSON_VALID``, ``JSON_TYPE``, ``JSON_LENGTH``, ``JSON_KEYS``,
``JSON_EXTRACT``, ``JSON_UNQUOTE``, ``JSON_QUOTE``; containment, which reads documents
with these, is rivulet/values/json_containment.py).

Why a scanner of its own rather than :func:`json.loads`: MariaDB keeps JSON as the text
written (a ``JSON`` column is a ``LONGTEXT`` checked by ``JSON_VALID``) and reads it with
its own grammar, which is not Python's: it takes ``1.`` and unknown escapes (``"\\x"``
is ``x``), refuses a lone surrogate escape and more than 31 levels of nesting, tells an
INTEGER from a DOUBLE by the decimal point alone (``1e5`` is an INTEGER), and ``JSON_KEYS``
shows each key as written (``"a\\u0041"``), once. Each function here gives MariaDB's
answer (pinned by tests/test_json_columns.py); a text that is no JSON gives NULL (0 for
``JSON_VALID``), as MariaDB answers with a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rivulet.values.conversions import to_str

#: The deepest nesting MariaDB reads (32 levels of arrays or objects is no JSON to it).
MAX_DEPTH = 31
_SPACE = " \t\n\r"
#: A number as MariaDB's scanner reads one: a sign or a digit first, then any of the
#: parts, each possibly cut short (``[-]``, ``[1e]``, ``1.`` are JSON to it); only the end
#: of the text within an exponent or after a lone sign is not (``1e``, ``-``).
_NUMBER = re.compile(r"-?(?:(?:0|[1-9][0-9]*)(\.[0-9]*)?(?:[eE][+-]?[0-9]*)?)?")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
            "t": "\t"}


class _NotJson(Exception):
    """The text is no JSON (to MariaDB)."""


@dataclass(frozen=True, slots=True)
class Document:
    """A JSON value as the functions read it: its type (``JSON_TYPE``'s name), its length
    (``JSON_LENGTH``: members, elements, or 1 for a scalar), an object's keys as written,
    in order, each once (``JSON_KEYS``), its members or elements (each with its key as
    written, None in an array), and a scalar's text as written."""

    type: str
    length: int
    keys: tuple[str, ...] = ()
    items: tuple[tuple[str | None, Document], ...] = ()
    text: str = ""
    #: False for an array or object the text breaks off in (read by :func:`prefix`): its
    #: items are those read before the break, the last possibly itself broken.
    complete: bool = True

    def shown(self) -> str:
        """The value as ``JSON_EXTRACT`` shows it: scalars as written, arrays and objects
        with MariaDB's separators (``[1, 2]``, ``{"a": 1}``)."""
        if self.type == "ARRAY":
            return "[" + ", ".join(item.shown() for _, item in self.items) + "]"
        if self.type == "OBJECT":
            return "{" + ", ".join(f"{key}: {item.shown()}" for key, item in self.items) + "}"
        return self.text


def document(text: str) -> Document | None:
    """The JSON document ``text`` holds, or None if it holds none."""
    found = first_value(text)
    return None if found is None or not found[1] else found[0]


def first_value(text: str) -> tuple[Document, bool] | None:
    """The JSON value ``text`` starts with (after spaces), and whether only spaces follow
    it; None if it starts with none. (``JSON_LENGTH`` of a scalar and ``JSON_KEYS`` read
    only that value in MariaDB: ``JSON_LENGTH('1 2')`` is 1.)"""
    scanner = _Scanner(text)
    try:
        found = scanner.value(0)
    except _NotJson:
        return None
    scanner.skip_space()
    return found, scanner.at == len(text)


def prefix(text: str) -> tuple[Document, bool] | None:
    """The JSON value ``text`` starts with as far as it is JSON (arrays and objects it
    breaks off in are not :attr:`~Document.complete`), and whether only spaces follow
    it; None if it starts with no value at all. (MariaDB's functions that search a path
    read the text as a stream, and answer from what they read before any error.)"""
    scanner = _Scanner(text, partial=True)
    try:
        found = scanner.value(0)
    except _NotJson:
        return None
    scanner.skip_space()
    return found, found.complete and scanner.at == len(text)


def as_text(v: Any) -> str | None:
    """An argument of a JSON function as the text it reads (a number as its digits)."""
    if v is None:
        return None
    text = to_str(v)
    return text.decode("utf-8", "replace") if isinstance(text, bytes) else text


def json_valid(v: Any) -> int | None:
    """``JSON_VALID(v)``: 1 if ``v`` is a JSON document, else 0; NULL for NULL."""
    text = as_text(v)
    return None if text is None else int(document(text) is not None)


def json_type(v: Any) -> str | None:
    """``JSON_TYPE(v)``: OBJECT, ARRAY, STRING, INTEGER, DOUBLE, BOOLEAN or NULL."""
    text = as_text(v)
    found = None if text is None else document(text)
    return None if found is None else found.type


def json_length(v: Any, *path: Any) -> int | None:
    """``JSON_LENGTH(v)``: an object's members, an array's elements, 1 for a scalar (what
    follows a scalar is not read, as MariaDB does not). (NULL for a NULL path; a path is
    refused when the call is planned: registry.SHORTER_FORMS.)"""
    if _unplanned(path):
        return None
    text = as_text(v)
    found = None if text is None else first_value(text)
    if found is None:
        return None
    value, whole = found
    if value.type in ("OBJECT", "ARRAY") and not whole:
        return None
    return value.length


def json_keys(v: Any, *path: Any) -> str | None:
    """``JSON_KEYS(v)``: an object's keys as a JSON array (``["a", "b"]``), as written
    and each once; NULL for any other value (and for a NULL path; a path is refused when
    the call is planned)."""
    if _unplanned(path):
        return None
    text = as_text(v)
    found = None if text is None else first_value(text)
    if found is None or found[0].type != "OBJECT":
        return None  # (what follows the object is not read, as MariaDB does not)
    return "[" + ", ".join(found[0].keys) + "]"


#: The paths ``JSON_EXTRACT`` takes: ``$``, then members by plain name (``.a``) or quoted
#: name without escapes (``."a b"``) and elements by number (``[0]``). Others (``*``,
#: ``**``, ``last``, ranges, spaces, escapes, names of other characters) are refused when
#: the statement is planned (:func:`path_refusal`): MariaDB and MySQL 8 read some of them
#: apart, and rivulet does not compute the others.
_PATH = re.compile(r"\$(?:\.[A-Za-z_][A-Za-z0-9_]*|\.\"[^\"\\]*\"|\[(?:0|[1-9][0-9]*)\])*")
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\.(\"[^\"\\]*\")|\[([0-9]+)\]")


def path_refusal(path: Any) -> str | None:
    """Why ``JSON_EXTRACT`` with the constant ``path`` is refused, or None if it is not
    (NULL gives NULL)."""
    if path is None or isinstance(path, str) and _PATH.fullmatch(path):
        return None
    return f"JSON path {path!r} (rivulet takes $, .name, .\"name\" and [n])"


def json_extract(v: Any, path: Any, *more: Any) -> str | None:
    """``JSON_EXTRACT(v, path)``: the value at ``path`` as MariaDB shows it; NULL if there
    is none, or ``v`` is no JSON. ``[0]`` of a value that is no array is the value itself,
    as in MySQL; a member is found by its name as written (a name given twice: the first
    that has the rest of the path).
    (Several paths are refused when the call is planned; a NULL one gives NULL.)"""
    if _unplanned(more):
        return None
    text = as_text(v)
    if text is None or path is None:
        return None
    found = document(text)
    at = None if found is None else found_at(found, path)
    if at is None or at.type in ("INTEGER", "DOUBLE") and at.text[-1] not in "0123456789.":
        return None  # (MariaDB finds no number in one cut short, '-' or '1e', on its own)
    return at.shown()


def found_at(value: Document, path: Any) -> Document | None:
    """The value at ``path`` (a path :func:`path_refusal` lets through) in ``value``, or
    None if there is none; a member is found by its name as written."""
    if not isinstance(path, str) or not _PATH.fullmatch(path):
        return None  # (a path of another form was refused when the call was planned)
    return _found(value, [step.groups() for step in _STEP.finditer(path, 1)])


class Broken:
    """What a search of a path in a text that breaks off finds when the break comes
    before the value (MariaDB's answer is NULL then)."""


#: The one :class:`Broken`.
BROKEN = Broken()


def streamed_at(text: str, path: Any) -> Document | Broken | None:
    """The value at ``path`` in ``text`` as MariaDB's streaming search finds it (names with
    their escapes read): the first in the text's order, if the text reads as JSON up to
    its end; :data:`BROKEN` if the text breaks off (or more than spaces follow its value)
    before the value is found; None if the text is a document without it."""
    read = prefix(text)
    if read is None:
        return BROKEN
    top, whole = read
    if not isinstance(path, str) or not _PATH.fullmatch(path):
        return None  # (a path of another form was refused when the call was planned)
    at = _seek(top, [step.groups() for step in _STEP.finditer(path, 1)])
    return BROKEN if at is None and not whole else at


def _seek(value: Document, steps: list[tuple[str | None, ...]]) -> Document | Broken | None:
    """:func:`_found` (names read) over a value that may break off: a search that
    reaches the break is :data:`BROKEN`."""
    missing = None if value.complete else BROKEN
    if not steps:
        return value  # (read from here on as far as the answer needs)
    (name, quoted, index), rest = steps[0], steps[1:]
    if index is not None:
        if value.type != "ARRAY":
            return _seek(value, rest) if index == "0" else missing
        if int(index) >= value.length:
            return missing
        return _seek(value.items[int(index)][1], rest)
    if value.type != "OBJECT":
        return missing
    key = json_unquote(quoted if quoted is not None else f'"{name}"')
    for member_key, member in value.items:
        if member_key is not None and json_unquote(member_key) == key:
            at = _seek(member, rest)
            if at is not None:
                return at
    return missing


def _found(value: Document, steps: list[tuple[str | None, ...]]) -> Document | None:
    """The first value at ``steps`` from ``value``, as MariaDB searches: a member name
    given twice is each tried in turn (the first whose value has the rest of the path)."""
    if not steps:
        return value
    (name, quoted, index), rest = steps[0], steps[1:]
    if index is not None:
        if value.type != "ARRAY":
            return _found(value, rest) if index == "0" else None
        return _found(value.items[int(index)][1], rest) if int(index) < value.length else None
    if value.type != "OBJECT":
        return None
    key = quoted if quoted is not None else f'"{name}"'
    for member_key, member in value.items:
        if member_key == key:
            at = _found(member, rest)
            if at is not None:
                return at
    return None


def _unplanned(arguments: tuple[Any, ...]) -> bool:
    """Whether arguments of a form refused when the call is planned are all NULL (the
    answer is NULL); any other value of them is a bug: planning lets none through."""
    if any(a is not None for a in arguments):
        raise AssertionError("a JSON function form refused when planned was called")
    return bool(arguments)


def json_number_text(v: Any) -> str | None:
    """The text MariaDB reads as the number a ``JSON_EXTRACT`` result is where a number is
    read (arithmetic, a comparison with a number, a truth value, ``CAST`` to ``DECIMAL``
    or ``DOUBLE``: its val_real and val_decimal): a JSON number's digits, a string's
    contents as written (``"5"`` is 5), 1 for ``true``, 0 for ``false``, ``null``, arrays
    and objects. (``CAST`` to an integer reads the JSON text itself: ``true`` is 0 there.)
    MySQL 8 reads a JSON value as a number alike."""
    text = as_text(v)
    found = None if text is None else first_value(text)
    if found is None:
        return text  # (NULL; a JSON_EXTRACT result is JSON otherwise)
    value = found[0]
    if value.type in ("INTEGER", "DOUBLE"):
        return value.text
    if value.type == "STRING":
        return value.text[1:-1]
    return "1" if value.text == "true" else "0"


#: The characters ``JSON_QUOTE`` escapes by a letter; other control characters are
#: ``\\u00XX`` (upper-case hex, as MariaDB writes them).
_QUOTED = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
           "\t": "\\t"}


def json_quote(v: Any) -> str | None:
    """``JSON_QUOTE(s)``: the JSON string holding the text ``s``, as MariaDB writes it
    (``/`` and characters past the control ones as they are). (An argument that is not
    text is refused when the call is planned: MariaDB answers NULL, MySQL 8 fails.)"""
    text = as_text(v)
    if text is None:
        return None
    return '"' + "".join(_QUOTED.get(c) or (f"\\u{ord(c):04X}" if c < " " else c)
                         for c in text) + '"'


def json_unquote(v: Any) -> str | None:
    """``JSON_UNQUOTE(v)``: the string a JSON string value (after any spaces) holds, its
    escapes read; any other text unchanged (MariaDB reads the first string and stops:
    ``'"a"b"'`` is ``a``)."""
    text = as_text(v)
    if text is None:
        return None
    scanner = _Scanner(text)
    scanner.skip_space()
    if scanner.at >= len(text) or text[scanner.at] != '"':
        return text
    try:
        return scanner.string()
    except _NotJson:
        return text


class _Scanner:
    """Reads one JSON value of a text from a position, as MariaDB's grammar reads it."""

    def __init__(self, text: str, partial: bool = False) -> None:
        self.text = text
        self.at = 0
        #: Whether an array or object the text breaks off in is read as far as it goes
        #: (:func:`prefix`) rather than as no JSON.
        self.partial = partial

    def skip_space(self) -> None:
        text, at = self.text, self.at
        while at < len(text) and text[at] in _SPACE:
            at += 1
        self.at = at

    def value(self, depth: int) -> Document:
        self.skip_space()
        text = self.text
        if self.at >= len(text):
            raise _NotJson
        first = text[self.at]
        if first in "[{":
            if depth >= MAX_DEPTH:
                raise _NotJson
            return self._object(depth) if first == "{" else self._array(depth)
        return self._scalar()

    def _scalar(self) -> Document:
        text = self.text
        first = text[self.at]
        start = self.at
        if first == '"':
            self.string()
            return Document("STRING", 1, text=text[start:self.at])
        for word, kind in (("true", "BOOLEAN"), ("false", "BOOLEAN"), ("null", "NULL")):
            if text.startswith(word, self.at):
                self.at += len(word)
                return Document(kind, 1, text=word)
        number = _NUMBER.match(text, self.at)
        if first not in "-0123456789" or number is None or (
                number.end() == len(text) and text[-1] in "eE+-"):
            raise _NotJson
        self.at = number.end()
        kind = "DOUBLE" if number.group(1) is not None else "INTEGER"
        return Document(kind, 1, text=number.group())

    def _array(self, depth: int) -> Document:
        self.at += 1  # [
        items: list[tuple[str | None, Document]] = []
        self.skip_space()
        if self._take("]"):
            return Document("ARRAY", 0)
        try:
            while True:
                items.append((None, self.value(depth + 1)))
                if not items[-1][1].complete:
                    raise _NotJson
                self.skip_space()
                if self._take("]"):
                    return Document("ARRAY", len(items), items=tuple(items))
                if not self._take(","):
                    raise _NotJson
        except _NotJson:
            if not self.partial:
                raise
            return Document("ARRAY", len(items), items=tuple(items), complete=False)

    def _object(self, depth: int) -> Document:
        self.at += 1  # {
        items: list[tuple[str | None, Document]] = []
        self.skip_space()
        if self._take("}"):
            return Document("OBJECT", 0)
        try:
            while True:
                self.skip_space()
                start = self.at
                if not self._peek('"'):
                    raise _NotJson
                self.string()
                key = self.text[start:self.at]
                self.skip_space()
                if not self._take(":"):
                    raise _NotJson
                items.append((key, self.value(depth + 1)))
                if not items[-1][1].complete:
                    raise _NotJson
                self.skip_space()
                if self._take("}"):
                    keys = tuple(dict.fromkeys(k for k, _ in items if k is not None))
                    return Document("OBJECT", len(items), keys, tuple(items))
                if not self._take(","):
                    raise _NotJson
        except _NotJson:
            if not self.partial:
                raise
            keys = tuple(dict.fromkeys(k for k, _ in items if k is not None))
            return Document("OBJECT", len(items), keys, tuple(items), complete=False)

    def string(self) -> str:
        """The string at a ``"``, its escapes read (unknown ones as their character)."""
        text = self.text
        at = self.at + 1
        out: list[str] = []
        while True:
            if at >= len(text):
                raise _NotJson
            c = text[at]
            if c == '"':
                self.at = at + 1
                return "".join(out)
            if c < " ":  # a control character must be escaped
                raise _NotJson
            if c != "\\":
                out.append(c)
                at += 1
                continue
            if at + 1 >= len(text):
                raise _NotJson
            escaped = text[at + 1]
            if escaped != "u":
                out.append(_ESCAPES.get(escaped, escaped))
                at += 2
                continue
            code, at = self._code(at)
            if 0xD800 <= code < 0xDC00:  # a high surrogate: its low one must follow
                if text[at:at + 2] != "\\u":
                    raise _NotJson
                low, at = self._code(at)
                if not 0xDC00 <= low < 0xE000:
                    raise _NotJson
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            elif 0xDC00 <= code < 0xE000:
                raise _NotJson
            out.append(chr(code))

    def _code(self, at: int) -> tuple[int, int]:
        """The code unit of the ``\\uXXXX`` at ``at``, and the position after it."""
        digits = _HEX4.match(self.text, at + 2)
        if digits is None:
            raise _NotJson
        return int(digits.group(), 16), at + 6

    def _take(self, char: str) -> bool:
        if self._peek(char):
            self.at += 1
            return True
        return False

    def _peek(self, char: str) -> bool:
        return self.at < len(self.text) and self.text[self.at] == char
