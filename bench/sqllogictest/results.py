"""A query's answer as sqllogictest writes it, and the comparison with the script's.

Each value is rendered by the column's type letter, as SQLite's reference runner does:
``I`` an integer (a real or a decimal truncated toward zero, a string's leading number),
``R`` a real with three decimals (at most 16 significant digits), ``T`` text with an empty
string as ``(empty)`` and every byte outside printable ASCII as ``@``; NULL is ``NULL``
whatever the type. Sorting compares
the rendered text (so ``"10" < "9"``), by rows (``rowsort``) or value by value
(``valuesort``). A script gives the expected values one per line, or, past its
hash-threshold, as ``N values hashing to <md5 of each value and a newline>``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from bench.sqllogictest.records import Hashed, SortMode

_LEADING_NUMBER = re.compile(r"\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)")


def _leading_number(text: str) -> float:
    """The number a string starts with, 0 if none (how SQLite reads text as a number)."""
    match = _LEADING_NUMBER.match(text)
    return float(match[1]) if match else 0.0


def as_integer(value: Any) -> int:
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float):
        return 0 if math.isnan(value) else int(max(min(value, 2.0**63 - 1), -(2.0**63)))
    if isinstance(value, Decimal):
        return int(value)
    if isinstance(value, str | bytes):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        match = _LEADING_NUMBER.match(text)
        if not match:
            return 0
        number = match[1]
        return int(number) if number.lstrip("+-").isdigit() else int(float(number))
    return as_integer(as_text(value))


def as_real(value: Any) -> float:
    if isinstance(value, bool | int | float | Decimal):
        return float(value)
    if isinstance(value, str | bytes):
        return _leading_number(value.decode("utf-8", "replace")
                               if isinstance(value, bytes) else value)
    return _leading_number(as_text(value))


def as_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.timedelta):
        seconds = int(value.total_seconds())
        sign, seconds = ("-" if seconds < 0 else ""), abs(seconds)
        return f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return str(value)


def _fixed3(number: float) -> str:
    """``%.3f`` as SQLite's printf writes it, which the scripts' answers come from: past 16
    significant digits it writes zeros (-2**63 is ``-9223372036854776000.000``)."""
    if math.isfinite(number) and abs(number) >= 1e15:
        return format(Decimal(format(number, ".15e")), ".3f")
    return f"{number:.3f}"


def render(value: Any, column_type: str) -> str:
    """One value as the reference runner prints it for a column of ``column_type``."""
    if value is None:
        return "NULL"
    if column_type == "I":
        return str(as_integer(value))
    if column_type == "R":
        return _fixed3(as_real(value))
    text = as_text(value)
    if text == "":
        return "(empty)"
    return "".join(chr(b) if 0x20 <= b <= 0x7E else "@" for b in text.encode("utf-8"))


def rendered_values(rows: Sequence[Sequence[Any]], types: str, sort: SortMode) -> list[str]:
    """The answer's values, flattened row by row and ordered by ``sort``."""
    rendered = [[render(v, t) for v, t in zip(row, types, strict=True)] for row in rows]
    if sort == "rowsort":
        rendered.sort()
    values = [v for row in rendered for v in row]
    if sort == "valuesort":
        values.sort()
    return values


def digest(values: Sequence[str]) -> Hashed:
    md5 = hashlib.md5(usedforsecurity=False)
    for value in values:
        md5.update(value.encode("utf-8") + b"\n")
    return Hashed(len(values), md5.hexdigest())


def matches(values: Sequence[str], expected: tuple[str, ...] | Hashed) -> bool:
    if isinstance(expected, Hashed):
        return digest(values) == expected
    return tuple(values) == expected


def describe(values: Sequence[str], expected: tuple[str, ...] | Hashed, limit: int = 12) -> str:
    """What was expected and what came, short enough for a report line."""
    def shown(items: Sequence[str]) -> str:
        head = " ".join(items[:limit])
        return head + (f" ... ({len(items)} values)" if len(items) > limit else "")

    if isinstance(expected, Hashed):
        got = digest(values)
        return (f"expected {expected.count} values hashing to {expected.md5}, got "
                f"{got.count} values hashing to {got.md5}: {shown(values)}")
    return f"expected [{shown(expected)}], got [{shown(values)}]"
