"""What a lookup in reader state answers: rows, no rows, or a hole (``MISSING``).

Noria's rule for partial state: a partial index answers a key it lacks with *missing*,
and a key it holds with its rows, even none. Mixing the two up answers a key nobody has
computed with no rows (a wrong answer that looks right), or fills a key that is known
to be empty again and again. These tests pin the three outcomes on both kinds of reader,
for each way a key is read (finished answer, raw rows, a range), and the multiset
accounting the readers and arrangements share.
"""

from __future__ import annotations

import pytest

from rivulet.state.arrangement import Arrangement, add_row, group_by_key
from rivulet.state.holes import MISSING, Hole
from rivulet.state.reader import KeyedReader, RangeReader


def finish(rows: list[tuple]) -> tuple[tuple, ...]:
    return tuple(sorted(rows))


def keyed(*, partial: bool) -> KeyedReader:
    """A reader keyed by column 0 of rows ``(key, value)``."""
    return KeyedReader((0,), finish, partial=partial)


def test_a_partial_reader_answers_missing_for_a_key_it_does_not_hold() -> None:
    reader = keyed(partial=True)
    assert reader.get(1) is MISSING
    assert reader.raw(1) is MISSING
    assert reader.missing([1]) == [1]


def test_a_partial_reader_drops_updates_to_a_hole() -> None:
    reader = keyed(partial=True)
    reader.apply([((1, "a"), 1)])
    assert reader.get(1) is MISSING
    assert reader.rows == 0


def test_a_filled_key_with_no_rows_answers_no_rows_not_missing() -> None:
    reader = keyed(partial=True)
    reader.fill([1], [])
    assert reader.get(1) == ()
    assert reader.raw(1) == []
    assert reader.missing([1]) == []


def test_a_filled_key_answers_its_rows_and_follows_writes() -> None:
    reader = keyed(partial=True)
    reader.fill([1], [((1, "b"), 1), ((2, "x"), 1)])  # rows of other keys are not kept
    assert reader.get(1) == ((1, "b"),)
    reader.apply([((1, "a"), 2), ((1, "b"), -1)])
    assert reader.get(1) == ((1, "a"), (1, "a"))
    reader.apply([((1, "a"), -2)])
    assert reader.get(1) == ()  # emptied by writes: still held, with no rows
    assert reader.get(2) is MISSING


def test_an_evicted_key_is_a_hole_again() -> None:
    reader = keyed(partial=True)
    reader.fill([1, 2], [((1, "a"), 1)])
    assert reader.evict([1, 2]) == 2
    assert reader.get(1) is MISSING
    assert reader.get(2) is MISSING  # the filled empty key too
    assert reader.raw(1) is MISSING
    assert reader.rows == 0
    reader.fill([2], [])
    assert reader.get(2) == ()


def test_a_full_reader_never_answers_missing() -> None:
    reader = keyed(partial=False)
    assert reader.get(1) == ()
    assert reader.raw(1) == []
    assert reader.missing([1]) == []
    reader.apply([((1, "a"), 1)])
    assert reader.get(1) == ((1, "a"),)
    reader.apply([((1, "a"), -1)])
    assert reader.get(1) == ()
    assert len(reader) == 0  # a full reader keeps no entry for a key without rows


def test_a_full_reader_answers_no_rows_in_its_finished_form() -> None:
    """A reader whose answer is rows by value (an IN view keyed by its equality values)
    answers a key without rows with its finish of no rows, not a tuple."""
    reader = KeyedReader((0,), lambda rows: {r[1]: [r] for r in rows})
    assert reader.get(1) == {}


def test_a_range_reader_answers_missing_no_rows_and_rows() -> None:
    reader = RangeReader((0,), 1, partial=True)
    assert reader.range(1, None, True, None, True) is MISSING
    reader.fill([1], [((1, 5), 1), ((1, 9), 1)])
    assert reader.range(1, 6, True, None, True) == [(1, 9)]
    assert reader.range(1, 10, True, None, True) == []  # held: no rows in the bounds
    reader.evict([1])
    assert reader.range(1, None, True, None, True) is MISSING
    full = RangeReader((0,), 1)
    assert full.range(1, None, True, None, True) == []


def test_a_hole_has_no_truth_value() -> None:
    """``rows or []`` on a hole would answer it with no rows: it raises instead."""
    assert isinstance(MISSING, Hole)
    with pytest.raises(TypeError):
        bool(MISSING)
    with pytest.raises(TypeError):
        _ = MISSING or []


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
