"""State lookups: the multiset accounting the readers and arrangements share.

Arrangements, readers and batch indexes all hold ``{row: multiplicity}`` through one
helper (``add_row``): they must agree on when a row is there, and on the distinct-row
counts their byte accounting follows.
"""

from __future__ import annotations

from rivulet.state.arrangement import Arrangement, add_row, group_by_key
from rivulet.state.reader import KeyedReader


def finish(rows: list[tuple]) -> tuple[tuple, ...]:
    return tuple(sorted(rows))


def keyed(*, partial: bool) -> KeyedReader:
    """A reader keyed by column 0 of rows ``(key, value)``."""
    return KeyedReader((0,), finish, partial=partial)


def test_add_row_counts_distinct_rows() -> None:
    counts: dict[tuple, int] = {}
    assert add_row(counts, ("a",), 2) == 1
    assert add_row(counts, ("a",), 1) == 0
    assert add_row(counts, ("a",), -3) == -1
    assert counts == {}
    # a retraction that arrives first is held as a negative count until its insert
    assert add_row(counts, ("b",), -1) == 1
    assert add_row(counts, ("b",), 1) == -1
    assert counts == {}


def test_arrangements_readers_and_batches_agree_on_a_multiset() -> None:
    deltas = [((1, "a"), 1), ((1, "a"), 1), ((1, "b"), 1), ((1, "a"), -2), ((2, "c"), -1),
              ((2, "c"), 1)]
    arrangement = Arrangement((0,))
    arrangement.apply(deltas)
    reader = keyed(partial=False)
    reader.apply(deltas)
    filled = Arrangement((0,), partial=True)
    filled.fill([1, 2], deltas)
    assert arrangement.index == {1: {(1, "b"): 1}}
    assert filled.index == {1: {(1, "b"): 1}, 2: {}}
    assert group_by_key(deltas, lambda r: r[0]) == {1: {(1, "b"): 1}, 2: {}}
    assert reader.get(1) == ((1, "b"),)
    assert arrangement.rows == filled.rows == reader.rows == 1
