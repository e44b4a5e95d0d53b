"""What state costs in memory: the bytes CPython allocates for it, sampled and kept cheap.

``memory_limit`` bounds these bytes, so they must be what the process really holds, not a
guess per entry. Every structure of state is dicts, lists, tuples, sets and small objects
whose sizes ``sys.getsizeof`` gives exactly (a dict with its table, a tuple with its
pointers); what varies is the rows and values they hold, so those are *sampled*.

Sharing. A row tuple may be held by several states (an index of a node's output and the
reader below it hold the same tuples; a join's output shares its values with its inputs),
and a value by several rows. Counting each object whole in every holder over-counts
(the old fixed guesses put the news program's full state above its whole process). So
each reference is credited ``size / holders`` of the object it points to, and of what that
object holds in turn: an object held by two states is half in each, and the shares of all
holders add up to the object once. Holders are the object's reference count
(``sys.getrefcount``) less the references the sampling itself takes, measured at import
(:func:`_calibrate`) rather than assumed, since they differ between CPython versions.
Objects held by everything (small ints, ``None``, interned strings) come out as nothing.

Cost. Accounting runs on the write path (every wave checks the memory limit), so a state
keeps a :class:`Sample`: the average bytes per key and per row of a few dozen keys spread
over its dict, taken again only when its number of keys or rows has changed by an eighth;
between samples its size is ``dict + keys * per_key + rows * per_row``, O(1). A sample
takes ~0.1-1 ms, so resampling costs a few microseconds per row changed, amortized.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterable
from typing import Any

_size = sys.getsizeof
_refs = sys.getrefcount

#: Keys measured per sample, spread evenly over a state's dict.
SAMPLE_KEYS = 32
#: Rows measured per sampled key (a bucket with more is scaled from its first ones).
SAMPLE_ROWS = 8
#: The relative change in keys or rows after which a sample is taken again.
RESAMPLE_CHANGE = 1 / 8

EMPTY_DICT = _size({})
EMPTY_SET = _size(set())
EMPTY_LIST = _size([])

#: References that :func:`shares` itself holds to an object it measures, and to a value
#: inside a tuple it measures (set by :func:`_calibrate`).
_OWN_REFS = 0
_OWN_VALUE_REFS = 0


def shares(objs: list[Any]) -> float:
    """The bytes the holders of ``objs`` are credited with: each object's :func:`held`
    bytes over its number of holders. ``objs`` must be a list built by the caller for this
    call (its references are the ones calibrated away)."""
    total = 0.0
    own = _OWN_REFS
    for obj in objs:
        if obj is not None:
            total += held(obj) / max(1, _refs(obj) - own)
    return total


def held(obj: Any) -> float:
    """An object's size, and for a tuple (a row, a composite key, a sort key holding its
    row) its share of each item it holds, in turn."""
    if type(obj) is not tuple:
        return _size(obj)
    total = float(_size(obj))
    own = _OWN_VALUE_REFS
    for value in obj:
        if value is not None:
            total += held(value) / max(1, _refs(value) - own)
    return total


def _calibrate() -> tuple[int, int]:
    """The references :func:`shares` holds itself: measured on objects with one holder
    each (a float in a dict; a tuple holding a float, in a dict)."""
    global _OWN_REFS, _OWN_VALUE_REFS
    _OWN_REFS = _OWN_VALUE_REFS = 0
    lone = {float("1.5"): None}
    measured = shares(list(lone))
    own = round(_size(1.5) / measured) - 1
    _OWN_REFS = own
    row = {(float("2.5"),): None}
    inner = shares(list(row)) - _size((0.0,))
    own_value = round(_size(2.5) / inner) - 1
    _OWN_VALUE_REFS = own_value
    return own, own_value


_calibrate()


def mean_share(objs: list[Any]) -> float:
    """The average of :func:`shares` over ``objs`` (0 for none)."""
    return shares(objs) / len(objs) if objs else 0.0


def spread_keys(index: dict[Any, Any], count: int = SAMPLE_KEYS) -> list[Any]:
    """Up to ``count`` keys of ``index`` evenly spaced over its order (one pass in C: a
    dict has no random access; copying in C also keeps another thread's writes out)."""
    step = max(1, len(index) // count)
    return list(itertools.islice(index, 0, step * count, step))


def dict_bytes(d: dict[Any, Any], sample: int = SAMPLE_ROWS) -> float:
    """A dict, its keys and values (sampled: ``sample`` of them, scaled to all)."""
    n = len(d)
    if not n:
        return _size(d)
    keys = list(itertools.islice(d, sample))
    values = list(itertools.islice(d.values(), sample))
    return _size(d) + n * (mean_share(keys) + mean_share(values))


def set_bytes(items: set[Any], sample: int = SAMPLE_ROWS) -> float:
    """A set's bytes beyond an empty set's, and its items' shares (sampled)."""
    n = len(items)
    if not n:
        return _size(items) - EMPTY_SET
    return _size(items) - EMPTY_SET + n * mean_share(list(itertools.islice(items, sample)))


def release_if_empty(*containers: Any) -> None:
    """Give back the table of each container that eviction left empty: CPython does not
    shrink a dict or set as keys leave it, so one emptied of 100,000 keys would keep
    megabytes that no state accounts. Clearing in place keeps the object (views hold it)."""
    for container in containers:
        if not container:
            container.clear()


#: Bytes of the attribute values of an instance without ``__slots__`` per attribute, beside
#: ``sys.getsizeof`` of the instance (CPython 3.11+ keeps them in an array of pointers the
#: instance's size leaves out; its header is the constant).
INSTANCE_ATTRIBUTE = 8
INSTANCE_VALUES_HEADER = 40


def sorted_list_bytes(rows: Any, sample: int = SAMPLE_ROWS) -> tuple[float, float]:
    """A ``SortedKeyList`` (the sorted multisets of top-k and range readers): ``(its own
    bytes, its rows' shares)``. Its own bytes are the object, its attributes, its lists of
    sublists (rows and their sort keys, ~1,000 a sublist), with the sort keys' shares;
    its rows' shares are sampled."""
    own = (_size(rows) + INSTANCE_VALUES_HEADER + 8 * INSTANCE_ATTRIBUTE
           + _size(rows._lists) + _size(rows._keys) + _size(rows._maxes) + _size(rows._index)
           + shares([rows._key]))
    n = len(rows)
    if not n:
        return own, 0.0
    for part in rows._lists:
        own += _size(part)
    for part in rows._keys:
        own += _size(part)
    first_keys = list(itertools.islice(rows._keys[0], sample))
    own += n * mean_share(first_keys)
    return own, n * mean_share(list(itertools.islice(rows._lists[0], sample)))


def slots_bytes(obj: Any) -> float:
    """An object with ``__slots__`` (a group, an accumulator) and what its slots hold:
    dicts (a MIN/MAX multiset) with their keys, lists with their items, scalars."""
    total = float(_size(obj))
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            t = type(getattr(obj, name, None))
            if t is dict:
                total += dict_bytes(getattr(obj, name))
            elif t is list:
                items = getattr(obj, name)
                total += _size(items) + sum(slots_bytes(item) for item in items)
            else:
                total += shares([getattr(obj, name, None)])  # (no other reference held)
    return total


class Sample:
    """The bytes of one state, from a sample of its keys (see the module doc).

    ``measure(keys)`` gives, over the sampled keys, ``(per-key bytes, row-dependent bytes,
    rows)``: what each key costs whatever its rows (the key, its bucket when empty), and
    what its rows cost (its bucket's growth, the rows' shares, a cached answer). A state's
    bytes are then its dict plus ``keys * per_key + rows * per_row``.

    An empty dict's own bytes are left out: what is counted is what a state holds beyond
    its empty structures (program, not state), so an evicted state counts nothing.

    A sample is taken again when the keys or rows have changed by :data:`RESAMPLE_CHANGE`
    since, or when ``changes`` (a count of updates a state keeps where its bytes can grow
    with neither: the values of a MIN's multisets, answers cached by reads) has grown by
    as much: a geometric schedule, so resampling costs O(1) per change, amortized."""

    __slots__ = ("per_key", "per_row", "keys", "rows", "changes", "taken")

    def __init__(self) -> None:
        self.per_key = 0.0
        self.per_row = 0.0
        self.keys = 0
        self.rows = 0
        self.changes = 0
        self.taken = False

    def bytes(self, index: dict[Any, Any], rows: int,
              measure: Callable[[list[Any]], tuple[float, float, int]],
              changes: int = 0) -> int:
        keys = len(index)
        if self._stale(keys, rows, changes):
            self.take(index, rows, measure, changes)
        return int(_size(index) - EMPTY_DICT + keys * self.per_key + rows * self.per_row)

    def _stale(self, keys: int, rows: int, changes: int) -> bool:
        if not self.taken:
            return bool(keys)
        return (abs(keys - self.keys) > max(self.keys * RESAMPLE_CHANGE, 1)
                or abs(rows - self.rows) > max(self.rows * RESAMPLE_CHANGE, 1)
                or changes - self.changes > max(self.changes * RESAMPLE_CHANGE, 1))

    def take(self, index: dict[Any, Any], rows: int,
             measure: Callable[[list[Any]], tuple[float, float, int]],
             changes: int = 0) -> None:
        picked = spread_keys(index)
        if not picked:
            return
        fixed, variable, sampled_rows = measure(picked)
        self.per_key = fixed / len(picked)
        if sampled_rows:
            self.per_row = variable / sampled_rows
        self.keys, self.rows, self.changes, self.taken = len(index), rows, changes, True


def rows_bytes(rows: Iterable[Any], count: int, sample: int = SAMPLE_ROWS) -> float:
    """The shares of ``count`` rows, from the first ``sample`` of ``rows``."""
    if not count:
        return 0.0
    return count * mean_share(list(itertools.islice(rows, sample)))


def answer_bytes(answer: Any, sample: int = SAMPLE_ROWS) -> float:
    """A reader's cached answer: a tuple of rows (projected rows are its own; rows it
    shares with the multiset are half its), or rows grouped in lists by a value (the
    answer of a reader keyed by part of an IN view's key)."""
    if type(answer) is dict:
        n = len(answer)
        if not n:
            return _size(answer)
        lists = list(itertools.islice(answer.values(), sample))
        per_list = sum(_size(rows) + rows_bytes(rows, len(rows), sample)
                       for rows in lists) / len(lists)
        return _size(answer) + n * (mean_share(list(itertools.islice(answer, sample)))
                                    + per_list)
    if not answer:
        return 0.0  # (the empty tuple is one object, shared by everything)
    return _size(answer) + rows_bytes(answer, len(answer), sample)
