"""Settings given as text (on the command line, in a server config): sizes with units."""

from __future__ import annotations

import re

_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "kib": 1024,
    "m": 1000**2, "mb": 1000**2, "mib": 1024**2,
    "g": 1000**3, "gb": 1000**3, "gib": 1024**3,
    "t": 1000**4, "tb": 1000**4, "tib": 1024**4,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(value: int | str | None) -> int | None:
    """Bytes from an int or a string such as ``"512MB"``, ``"1.5 GiB"`` or ``"800k"``.

    >>> parse_size("512MB"), parse_size("2GiB"), parse_size(4096), parse_size(None)
    (512000000, 2147483648, 4096, None)
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError(f"a size must be positive, got {value}")
        return value
    match = _SIZE.match(value)
    if match is None or match.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {value!r} (expected e.g. 512MB, 2GiB or a number of bytes)")
    size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size <= 0:
        raise ValueError(f"a size must be positive, got {value!r}")
    return size
