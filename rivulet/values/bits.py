"""The bit operators ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` and ``BIT_COUNT``.

Why this module exists: MySQL computes them on unsigned 64-bit integers, so each operand
is first made one (:func:`to_bits`): rounded half away from zero, a negative number taken
as its two's complement (``-1 | 0`` is 18446744073709551615), a number past the range
saturating (at 2**64 - 1 above, at -2**63 below, which is 2**63 as bits). The results are
BIGINT UNSIGNED (``BIT_COUNT``: an INT). A shift counts by the low 32 bits of its count
read so (MySQL's ``(uint)`` of it): by 64 or more, as by a negative count, it gives 0, but
``1 << -9223372036854775808`` shifts by 0.

The planner (rivulet/plan/expressions.py) refuses the operands on which MySQL 8 and
MariaDB differ, so these functions never see them: binary strings (MySQL 8 computes on
the bytes, MariaDB on the number), DOUBLEs (MySQL rounds halves to even, MariaDB away
from zero), text that is not a constant and DECIMALs that may pass a signed BIGINT (MySQL
saturates those at 2**63 - 1).
"""

from __future__ import annotations

from datetime import date as _date
from datetime import timedelta as _timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from rivulet.values.conversions import temporal_to_decimal, text_to_decimal
from rivulet.values.enumerations import EnumValue
from rivulet.values.times import time_to_number

#: The bits of a BIGINT UNSIGNED.
_MASK = (1 << 64) - 1
_SIGNED_MIN = -(1 << 63)
_WIDTH = 64
#: The bits of a shift's count that count (an unsigned 32-bit integer's).
_COUNT_MASK = (1 << 32) - 1


def to_bits(v: Any) -> int:
    """A non-NULL value as the unsigned 64-bit integer MySQL's bit operators work on."""
    if type(v) is int:
        n = v
    elif type(v) is bool:
        n = int(v)
    elif type(v) is EnumValue:
        n = v.position
    else:
        if isinstance(v, (str, bytes)):
            number: Any = text_to_decimal(v)
        elif isinstance(v, _timedelta):
            number = time_to_number(v)
        elif isinstance(v, _date):
            number = temporal_to_decimal(v)
        else:
            number = v
        if isinstance(number, float):
            if number != number:
                return 0
            number = Decimal(number) if abs(number) < 1e30 else Decimal(1e30 if number > 0
                                                                        else -1e30)
        n = int(Decimal(number).to_integral_value(rounding=ROUND_HALF_UP))
    return min(max(n, _SIGNED_MIN), _MASK) & _MASK


def bit_and(a: Any, b: Any) -> int | None:
    """``a & b``."""
    if a is None or b is None:
        return None
    return to_bits(a) & to_bits(b)


def bit_or(a: Any, b: Any) -> int | None:
    """``a | b``."""
    if a is None or b is None:
        return None
    return to_bits(a) | to_bits(b)


def bit_xor(a: Any, b: Any) -> int | None:
    """``a ^ b``."""
    if a is None or b is None:
        return None
    return to_bits(a) ^ to_bits(b)


def bit_not(a: Any) -> int | None:
    """``~a``."""
    if a is None:
        return None
    return to_bits(a) ^ _MASK


def shift_left(a: Any, n: Any) -> int | None:
    """``a << n``: the bits shifted out past 64 are lost."""
    if a is None or n is None:
        return None
    count = to_bits(n) & _COUNT_MASK
    return (to_bits(a) << count) & _MASK if count < _WIDTH else 0


def shift_right(a: Any, n: Any) -> int | None:
    """``a >> n`` (unsigned: no sign is carried in)."""
    if a is None or n is None:
        return None
    count = to_bits(n) & _COUNT_MASK
    return to_bits(a) >> count if count < _WIDTH else 0


def bit_count(a: Any) -> int | None:
    """``BIT_COUNT(a)``: the bits set in ``a`` as 64 bits (``BIT_COUNT(-1)`` is 64)."""
    if a is None:
        return None
    return to_bits(a).bit_count()
