"""Character codes and hexadecimal text: ``ASCII``, ``ORD``, ``HEX`` and ``UNHEX``.

Why this module exists: these functions look at a value's bytes (text is utf8mb4, so
``ASCII('é')`` is 195, its first byte, and ``ORD('é')`` 50089, its two bytes), except that
``HEX`` of a number writes the number: an integer as its 64 bits (``HEX(-1)`` is
``'FFFFFFFFFFFFFFFF'``), a DECIMAL or DOUBLE as MySQL does, through a DOUBLE rounded half
away from zero and saturating at either end of the range.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from rivulet.values.conversions import to_str

_MASK = (1 << 64) - 1
_SIGNED_MIN = float(-(1 << 63))
_UNSIGNED_MAX = float(1 << 64)
_HEX_DIGITS = re.compile(r"[0-9A-Fa-f]*").fullmatch


def _bytes(v: Any) -> bytes:
    """A non-NULL value's bytes in string context."""
    text = to_str(v)
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")


def ascii_(v: Any) -> int | None:
    """``ASCII(s)``: the first byte of ``s`` (0 for '')."""
    if v is None:
        return None
    data = _bytes(v)
    return data[0] if data else 0


def ord_(v: Any) -> int | None:
    """``ORD(s)``: the first character's bytes as one number (its code in a binary
    string: its first byte)."""
    if v is None:
        return None
    text = to_str(v)
    if isinstance(text, bytes):
        return text[0] if text else 0
    if not text:
        return 0
    return int.from_bytes(text[0].encode("utf-8", "surrogatepass"), "big")


def hex_(v: Any) -> str | None:
    """``HEX(x)``: the hexadecimal digits (upper case) of a number, or of text's bytes."""
    if v is None:
        return None
    if type(v) is int or type(v) is bool:
        return format(int(v) & _MASK, "X")
    if isinstance(v, (float, Decimal)):
        x = float(v)
        if x != x:
            return "0"
        if x <= _SIGNED_MIN or x >= _UNSIGNED_MAX:
            return "F" * 16
        return format(int(x + 0.5 if x > 0 else x - 0.5) & _MASK, "X")
    return _bytes(v).hex().upper()


def unhex(v: Any) -> bytes | None:
    """``UNHEX(s)``: the bytes of hexadecimal text (an odd count of digits takes a leading
    0); NULL for text that is not hexadecimal digits."""
    if v is None:
        return None
    text = to_str(v)
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    if not _HEX_DIGITS(text):
        return None
    return bytes.fromhex(text.rjust(len(text) + len(text) % 2, "0"))
