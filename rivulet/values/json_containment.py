"""``JSON_CONTAINS`` and ``JSON_CONTAINS_PATH`` as MariaDB answers them (the functions
Django's JSONField sends for ``contains``, ``contained_by``, ``has_key``, ``has_keys`` and
``has_any_keys``).

Why a module of its own: containment is a relation between two documents, with rules of
its own on top of the reading of JSON text (rivulet/values/json_text.py). MariaDB's rules,
pinned by tests/test_json_functions.py: an object contains an object whose every member
is contained in the target's first member of that name (names compared with their escapes
read: ``{"\\u0061": 1}`` contains ``{"a": 1}``); an array contains any value but an array
that some element of it contains, and an array each of whose elements it contains so (an
element that is an array: the whole target contains it, so ``[1, 2]`` contains
``[[1, 2]]``, which MySQL 8 denies); a scalar contains only a scalar equal to it: numbers
within 1e-12 as DOUBLEs (``1`` and ``1.0``, ``9007199254740993`` and
``9007199254740992``), strings as written, escapes and all (``"a"`` does not contain
``"\\u0061"``), ``true``, ``false`` and ``null`` each only itself.

MariaDB reads the texts as a stream, only as far as the answer needs, and answers NULL if
that reading meets the end of the JSON: ``JSON_CONTAINS('[1] x', '1')`` is 1,
``JSON_CONTAINS('[1, x', '1')`` NULL (after a match it reads on to the array's end),
``JSON_CONTAINS('1', '[1, x')`` 0 (a scalar contains no array: the candidate is not read
on). rivulet reads each text as far as it is JSON (:func:`~rivulet.values.json_text.prefix`:
the arrays and objects it breaks off in are marked) and follows MariaDB's order of
reading over that, a read past a break raising :class:`_Break`.

Where MySQL 8 answers otherwise (documented in docs/sql.md): it compares strings by their
characters (``"\\u0061"`` is ``"a"``), numbers exactly, keeps the last member of a name
given twice, and answers NULL, not 0, when the path of ``JSON_CONTAINS`` finds nothing;
an unknown ``one``/``all`` mode is its error 3150, MariaDB's NULL (rivulet refuses a mode
that is not a constant ``'one'`` or ``'all'`` when the call is planned).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from rivulet.values.json_text import (
    BROKEN,
    Broken,
    Document,
    as_text,
    document,
    found_at,
    json_unquote,
    prefix,
    streamed_at,
)

#: A number as MariaDB's strtod reads one (the digits of a number cut short: ``-``, ``1e``).
_DOUBLE_PREFIX = re.compile(r"-?[0-9]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")


def mode_refusal(mode: Any) -> str | None:
    """Why ``JSON_CONTAINS_PATH`` with the constant ``mode`` is refused, or None."""
    if mode is None or isinstance(mode, str) and mode.lower() in ("one", "all"):
        return None
    return f"JSON_CONTAINS_PATH mode {mode!r} (rivulet takes 'one' and 'all')"


def json_contains(target: Any, candidate: Any, *path: Any) -> int | None:
    """``JSON_CONTAINS(target, candidate[, path])``: 1 if ``target`` (or its value at
    ``path``) contains ``candidate``, else 0; 0 if ``path`` finds nothing, as MariaDB
    answers (the candidate unread: 0 even if it is no JSON)."""
    texts = [as_text(target), as_text(candidate)]
    if texts[0] is None or texts[1] is None or any(p is None for p in path):
        return None
    if path:
        at: Document | Broken | None = streamed_at(texts[0], path[0])
    else:
        outer = prefix(texts[0])
        at = BROKEN if outer is None else outer[0]
    if isinstance(at, Broken):
        return None
    if at is None:
        return 0  # (the candidate is not read: it may be no JSON)
    inner = prefix(texts[1])
    if inner is None:
        return None
    try:
        return int(_contains(at, inner[0]))
    except _Break:
        return None


def json_contains_path(doc: Any, mode: Any, *paths: Any) -> int | None:
    """``JSON_CONTAINS_PATH(doc, 'one'|'all', path...)``: whether one (any) or all of
    ``paths`` find a value in ``doc``, members found by their names as written. MariaDB
    reads the whole text here, even once a path is found: NULL for one that breaks off or
    has more than spaces after its value."""
    text = as_text(doc)
    if text is None or mode is None or any(p is None for p in paths):
        return None
    found = document(text)
    if found is None:
        return None
    hits = (found_at(found, p) is not None for p in paths)
    return int(all(hits) if str(mode).lower() == "all" else any(hits))


class _Break(Exception):
    """The reading reached where a document breaks off (MariaDB's answer is NULL)."""


def _items(value: Document) -> Iterator[tuple[str | None, Document]]:
    """The members or elements of ``value`` in order, then :class:`_Break` if it breaks
    off after them."""
    yield from value.items
    _skip(value)


def _skip(value: Document) -> None:
    """Reading on to the end of ``value``: :class:`_Break` if it breaks off."""
    if not value.complete:
        raise _Break


def _contains(target: Document, candidate: Document) -> bool:
    """Whether ``target`` contains ``candidate``, read in MariaDB's order: what the
    answer does not need is not read (``[1]`` does not contain the broken ``{"a": x``),
    and reading what breaks off raises :class:`_Break`."""
    if target.type == "OBJECT":
        if candidate.type != "OBJECT":
            return False
        for name, value in _items(candidate):
            member = _first_member(target, name)
            if member is None or not _contains(member, value):
                return False
        _skip(target)
        return True
    if target.type == "ARRAY":
        if candidate.type == "ARRAY":  # (an element that is an array: the whole target)
            return all(_contains(target, element) for _, element in _items(candidate))
        for _, element in _items(target):
            if _contains(element, candidate):
                _skip(target)
                return True
            _skip(element)
        return False
    if target.type in ("INTEGER", "DOUBLE"):
        return candidate.type in ("INTEGER", "DOUBLE") and abs(
            _double(target.text) - _double(candidate.text)) < 1e-12
    # strings as written; true, false and null each only itself
    return candidate.type == target.type and candidate.text == target.text


def _first_member(target: Document, name: str | None) -> Document | None:
    """The first member of ``target`` named ``name`` (names compared with their escapes
    read), the members before it read through; None if there is none."""
    wanted = _name(name)
    for key, member in _items(target):
        if _name(key) == wanted:
            return member
        _skip(member)
    return None


def _name(key: str | None) -> str | None:
    """A member's name as written (quotes and escapes) with its escapes read."""
    return None if key is None else json_unquote(key)


def _double(text: str) -> float:
    digits = _DOUBLE_PREFIX.match(text)
    try:
        return float(digits.group() if digits else "0")
    except ValueError:  # ('-', '.', '-.': no digit at all)
        return 0.0
