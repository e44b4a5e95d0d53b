"""``a = ? OR b = ?``: parameters under an OR on different columns (Django's
``Q(sender=x) | Q(recipient=y)``), answered as a union of keyed alternatives.

Why a union: a reader is keyed by one column's values, and no one column holds the rows of
both terms. So the view is planned once per term (an *alternative*), the OR replaced by
that term as an ordinary ``col = ?`` keying the last column of the view's key, and the
view's root is the union of the alternatives (they share everything below the OR: the OR
was no filter, only a key). A read of ``(v1, v2)`` looks up key ``v1`` in the first
alternative's rows and ``v2`` in the second's, each an ordinary equality key (coerced as
MySQL's ``=`` compares the value with that column, rivulet/plan/params.py ``KeyLookup``).

MySQL keeps a row once when it matches both terms. Each alternative's rows carry which
term they came through (``Alternatives.tag``) and, for every earlier term, that term's
column's value (``Alternatives.copies``): a read keeps a row of term ``i`` only where no
earlier term ``j`` is TRUE for it, its copy of column ``j`` not equal to the key ``v_j``
finds (the reader's key equality: the stored values, compared as the reader's dict does;
rivulet's text collation is binary). Every row matching the OR is then kept exactly once,
through the first term it matches; a NULL matches none, as in MySQL.

ORDER BY ... LIMIT k OFFSET n: each alternative keeps its top k + n per key (a top-k per
branch), and a read merges the kept rows in the view's order and cuts. That is exact: a
row among the answer's first k + n matches its first term ``j``; the rows ahead of it in
``j``'s key all match the OR, so they are fewer than k + n and it is in ``j``'s top. A
DISTINCT view deduplicates each alternative's rows and the read deduplicates across them.

Not taken (refused by name where parameters are taken, rivulet/plan/params.py and the
planner): an aggregated query (one key's aggregate cannot be combined with another's),
columns compared differently (of different kinds, or ENUMs of different members), and the
OR beside IN lists, a range, another OR of parameters, or a parameter on one of its
columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from sqlglot import exp

from rivulet.plan import ir
from rivulet.plan.params import KeyLookup
from rivulet.sql.parse import unsupported
from rivulet.values.matching import Unkeyed
from rivulet.values.schema import ENUM

Row = tuple


def refuse_unlike_columns(node: exp.Expr, columns: Sequence[ir.ColumnInfo]) -> None:
    """Refuse (naming the OR ``node``) terms whose columns a value is not compared with
    alike: one reader key column stands for all of them, its lookups coerced as one
    column's (of one kind; an ENUM's number finds the member at its position, so its
    members must be the same)."""
    first = columns[0]
    for other in columns[1:]:
        if other.kind != first.kind:
            raise unsupported(node, f"OR of parameters on columns of different kinds "
                              f"({first.name!r} is {first.kind}, {other.name!r} {other.kind})")
        if first.single != other.single:  # (a FLOAT holds single-precision values)
            raise unsupported(node, f"OR of parameters on columns of different kinds "
                              f"({first.name!r} and {other.name!r}: FLOAT and DOUBLE)")
        if first.kind == ENUM and _members(first) != _members(other):
            raise unsupported(node, f"OR of parameters on ENUM columns of different members "
                              f"({first.name!r}, {other.name!r})")


def _members(column: ir.ColumnInfo) -> tuple[str, ...] | None:
    return column.column.members if column.column is not None else None


def united_columns(branches: Sequence[ir.Node]) -> tuple[ir.ColumnInfo, ...]:
    """The columns of the union of the alternatives' roots: the last one's (where every
    copy column is a column, not a NULL), nullable where any alternative's is."""
    last = branches[-1].columns
    return tuple(replace(column, nullable=any(b.columns[i].nullable for b in branches))
                 for i, column in enumerate(last))


@dataclass(frozen=True)
class TermRead:
    """What a read takes through one term: the reader key it looks up, the term its rows
    must have come through, and the (copy column, key value) of each earlier term whose
    rows it leaves to that term."""

    key: tuple
    term: int
    earlier: tuple[tuple[int, Any], ...]


@dataclass(frozen=True)
class AlternativeLookup:
    """How a read's values become the reader keys of a view's alternatives, and which of
    their rows it keeps (see the module doc). Made once per view: reads are the hot path."""

    lookups: tuple[KeyLookup, ...]  # of each term: its key as an ordinary equality's
    tag: int
    copies: tuple[int, ...]

    @classmethod
    def of(cls, plan: ir.ViewPlan) -> AlternativeLookup:
        alternatives = plan.alternatives
        assert alternatives is not None  # a view of an OR on different columns
        others = plan.key_params[:-1]
        return cls(tuple(KeyLookup.of(replace(plan, key_params=(*others, p)))
                         for p in alternatives.params),
                   alternatives.tag, alternatives.copies)

    def reads(self, values: dict[Any, Any]) -> list[TermRead] | Literal[Unkeyed.SCAN]:
        """The terms a read of ``values`` (``values_by_param``) finds rows through (none
        for a term whose value finds nothing: a NULL, ``int_col = 1.5``);
        :attr:`Unkeyed.SCAN` where a value may equal several stored values: the read is
        then computed with the values as constants (rivulet/plan/bound.py)."""
        found: list[tuple | None] = []
        for lookup in self.lookups:
            keys = lookup.keys(values)
            if keys is Unkeyed.SCAN:
                return Unkeyed.SCAN
            assert len(keys) <= 1  # (no IN list beside the OR: one key or none)
            found.append(keys[0] if keys else None)
        out: list[TermRead] = []
        for term, key in enumerate(found):
            if key is None:
                continue
            earlier = tuple((self.copies[j], k[-1]) for j, k in enumerate(found[:term])
                            if k is not None)
            out.append(TermRead(key, term, earlier))
        return out

    def kept(self, rows: Sequence[Row], read: TermRead) -> list[Row]:
        """``rows`` (of ``read.key``) that the read keeps for its term: those that came
        through it and match no earlier term (a NULL copy matches none)."""
        tag, term, earlier = self.tag, read.term, read.earlier
        return [r for r in rows
                if r[tag] == term and all(r[c] != v for c, v in earlier)]
