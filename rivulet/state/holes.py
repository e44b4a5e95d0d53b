"""What a lookup in partial state answers for a key it does not hold.

As in Noria, a partial index answers a key it lacks with *missing*, and a key it holds
with its rows, empty ones included: a filled key with no rows is an answer (no rows
match), a hole is not (nobody has computed it; an upquery must). Returning ``None`` for
a hole only meant that where the state happened to be partial, and an empty result and a
hole were easy to mix up; :data:`MISSING` says it in the type.

It is a one-member enum so that ``rows is MISSING`` narrows ``rows`` for the type checker,
and a module-level singleton compared with ``is`` costs what a comparison with ``None``
costs (lookups are the hot path).
"""

from __future__ import annotations

import enum
from typing import Final, NoReturn


class Hole(enum.Enum):
    """The answer of a partial state for a key it does not hold (see module doc)."""

    MISSING = "missing"

    def __bool__(self) -> NoReturn:
        """A hole is neither no rows nor some: ``rows or []`` would answer a key nobody
        computed with no rows, a wrong answer that looks right. Test with ``is MISSING``."""
        raise TypeError("a hole in partial state has no truth value: test it with `is MISSING`")

    def __repr__(self) -> str:
        return "rivulet.state.holes.MISSING"


#: The one hole marker: a lookup returns rows, or this.
MISSING: Final = Hole.MISSING
