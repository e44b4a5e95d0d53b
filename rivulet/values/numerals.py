"""Numbers as MySQL writes them in text: a DOUBLE in its shortest form, a DECIMAL in plain
notation. Below :mod:`~rivulet.values.schema` (a number stored in a text column is this
text) and :mod:`~rivulet.values.conversions` (a number in string context)."""

from __future__ import annotations

import math
from decimal import Decimal


def double_text(x: float) -> str:
    """Format a double as MySQL does (my_gcvt): shortest round-trip digits, in plain notation
    for 1e-15 <= |x| < 1e15 or when there is a fractional part, otherwise ``1.5e20``. A
    negative zero is '0', as MariaDB shows it (``CONCAT(-('a'))``)."""
    if x != x or x in (math.inf, -math.inf):
        return repr(x)  # MySQL has no such values; keep them readable
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digits_t, exp = Decimal(repr(abs(x))).normalize().as_tuple()
    assert isinstance(exp, int)  # x is finite
    digits = "".join(map(str, digits_t))
    n = len(digits)
    decpt = n + exp  # position of the decimal point relative to the digits
    if decpt >= -14 and (decpt <= 15 or n > decpt):
        if decpt <= 0:
            return f"{sign}0.{'0' * -decpt}{digits}"
        if decpt >= n:
            return sign + digits + "0" * (decpt - n)
        return f"{sign}{digits[:decpt]}.{digits[decpt:]}"
    mantissa = digits[0] + ("." + digits[1:] if n > 1 else "")
    return f"{sign}{mantissa}e{decpt - 1}"


def fixed_double_text(x: float, places: int) -> str:
    """A DOUBLE shown with ``places`` places, as MySQL shows one rounded to places
    (``ROUND(x, 2)``, ``FLOOR(x)``: its ``my_fcvt``): the shortest digits that read back as
    ``x``, padded with zeros, where they need no more places (FLOOR(7 * 2e0 ** 53) is
    63050394783186940, not the binary value's ...944); else the binary value rounded to
    ``places``, half to even ('0.0063' for 1/160, '0.0312' for 1/32)."""
    shortest = Decimal(repr(x))
    exponent = shortest.as_tuple().exponent
    assert isinstance(exponent, int)  # (the callers pass finite values)
    if -exponent <= places:
        return f"{shortest:.{places}f}"
    return f"{x:.{places}f}"


def decimal_text(d: Decimal) -> str:
    """A DECIMAL in plain notation, never an exponent, and no negative zero (MySQL has
    none)."""
    return format(d if d else d.copy_abs(), "f")


__all__ = ["decimal_text", "double_text"]
