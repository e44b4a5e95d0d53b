"""Operators that need keyed state surviving deletes, as ``transformWithState`` processors.

Spark's streaming aggregates only ever add: they cannot take MIN or MAX back when the row
holding it is deleted, nor say which rows left a top-k, nor tell a LEFT JOIN's padded row
when its first match arrives. Each such operator here is a Python stateful processor over
signed deltas, grouped by its key (the group, the top-k partition, the whole row, the
join key), with what the key needs in Spark's state store (RocksDB):

* :class:`AggregateProcessor`: the group's row count and the engine's own accumulators
  (``rivulet.dataflow.ops.aggregate``: signed sums for COUNT/SUM/AVG, the multiset of
  values for MIN, MAX and the DISTINCT forms);
* :class:`TopKProcessor`: the partition's rows as a multiset, cut with the engine's order;
* :class:`DistinctProcessor`: the row's multiplicity;
* :class:`LeftJoinProcessor`: both sides' rows under the join key.

A processor computes the key's output before and after the batch's deltas and emits the
difference as signed rows (``_s``), so any operator can sit above it: Spark accepts a
chain of these, stream-stream joins and one aggregate in one query (append mode), which is
why no plan is split into stages. An aggregate at the view's root instead emits each
changed group's new row (:data:`GROUPS`), the sink's group layout.

Values cross into the processor as Spark gives them and are converted to the engine's
kinds (``to_kind``), so every result is the one the in-process dataflow computes.
The state is one pickled value per key: a get and an update per key and batch (each a
round trip to the JVM: about 55 us, beside about 90 us of Spark's own per-key work in
Python, measured on this machine). A top-k partition keeps only its best rows in that
value and the others in an append-only list, so a popular partition costs what its
batch's rows cost; the other processors read and write their key's whole multiset.
"""

from __future__ import annotations

import decimal
import pickle
from collections.abc import Callable, Iterator
from typing import Any

from pyspark.sql import Row as SparkRow
from pyspark.sql import types as T
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from rivulet.plan import ir
from rivulet.spark.values import fit_decimal, kind_of_type, scale_of_type, to_kind
from rivulet.values.schema import DECIMAL, Kind

Row = tuple

SIGN = "_s"
COUNT = "_n"
#: Output forms: signed deltas of the operator's rows, or (a root aggregate) each changed
#: group's new row followed by the group columns ``_g0..`` and its row count ``_n``.
DELTAS = "deltas"
GROUPS = "groups"

_BLOB = T.StructType([T.StructField("state", T.BinaryType(), True)])
_LISTED = T.StructType([T.StructField("row", T.BinaryType(), True),
                        T.StructField("n", T.LongType(), True)])


class Column:
    """How one column's values cross between Spark and the engine (picklable)."""

    __slots__ = ("kind", "scale")

    def __init__(self, data_type: T.DataType, kind: Kind | None = None) -> None:
        self.kind = kind if kind is not None else _kind(data_type)
        self.scale = scale_of_type(data_type)

    def __getstate__(self) -> tuple[Kind | None, int]:
        return self.kind, self.scale

    def __setstate__(self, state: tuple[Kind | None, int]) -> None:
        self.kind, self.scale = state

    def engine(self, value: Any) -> Any:
        return None if value is None else to_kind(value, self.kind, self.scale)

    def spark(self, value: Any) -> Any:
        if value is None:
            return None
        if self.kind == DECIMAL:
            return fit_decimal(decimal.Decimal(value), self.scale)
        return to_kind(value, self.kind, self.scale)


def _kind(data_type: T.DataType) -> Kind | None:
    return None if isinstance(data_type, T.NullType) else kind_of_type(data_type)


class KeyedProcessor(StatefulProcessor):
    """One pickled state value per key; subclasses say what it is and what it outputs.
    ``output``: the names of the output columns (set by the compiler)."""

    output: list[str]

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.state = handle.getValueState("state", _BLOB)
        self.row = SparkRow(*self.output)  # Spark takes output rows by column name
        self.prepare()

    def prepare(self) -> None:
        """Build what the processor computes with (on the executor: closures do not pickle)."""

    def load(self) -> Any:
        stored = self.state.get()  # None when the key has none (one round trip, not two)
        return None if stored is None else pickle.loads(stored[0])

    def save(self, value: Any, empty: bool) -> None:
        if empty:
            self.state.clear()
        else:
            self.state.update((pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL),))

    def close(self) -> None:
        pass


def _signed(old: dict[Row, int], new: dict[Row, int]) -> Iterator[tuple[Row, int]]:
    """The signed deltas turning multiset ``old`` into ``new``."""
    for row, n in old.items():
        d = new.get(row, 0) - n
        if d:
            yield row, d
    for row, n in new.items():
        if row not in old:
            yield row, n


class AggregateProcessor(KeyedProcessor):
    """A GROUP BY's groups with the engine's accumulators (see the module docstring).

    Input columns: ``_g0..`` (the group), ``_a<i>`` (aggregate ``i``'s argument), ``_s``.
    A group exists while it has rows; without GROUP BY the one group always does (SQL
    answers one row over no rows), once any delta (or the seed row, sign 0) reached it.
    """

    def __init__(self, aggs: tuple[ir.AggCall, ...], groups: list[Column],
                 args: list[Column | None], outputs: list[Column], form: str) -> None:
        self.aggs = aggs
        self.groups = groups
        self.args = args
        self.outputs = outputs
        self.form = form

    def prepare(self) -> None:
        from rivulet.dataflow.ops.aggregate import ACCUMULATORS
        self.factories = [ACCUMULATORS[(a.fn, a.distinct)] for a in self.aggs]

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow],
                        timerValues: Any) -> Iterator[SparkRow]:
        is_global = not self.groups
        group = tuple(c.engine(v) for c, v in zip(self.groups, key)) if not is_global else ()
        stored = self.load()
        count, accs = stored if stored is not None else (0, self._new())
        old = (self._output(group, count, accs)
               if stored is not None and (count > 0 or is_global) else None)
        for row in rows:
            sign = row[SIGN]
            count += sign
            for i, (acc, arg) in enumerate(zip(accs, self.args)):
                if acc is not None and arg is not None:
                    acc.add(arg.engine(row[f"_a{i}"]), sign)
        alive = count > 0 or is_global
        new = self._output(group, count, accs) if alive else None
        self.save((count, accs), empty=not alive)
        if self.form == GROUPS:
            values = new if new is not None else (None,) * len(self.outputs)
            yield self.row(*self._spark(values), *key[:len(self.groups)], count)
        elif old != new:
            if old is not None:
                yield self.row(*self._spark(old), -1)
            if new is not None:
                yield self.row(*self._spark(new), 1)

    def _new(self) -> list[Any]:
        return [None if a.arg is None else f() for a, f in zip(self.aggs, self.factories)]

    def _output(self, group: Row, count: int, accs: list[Any]) -> Row:
        return group + tuple(count if acc is None else acc.result() for acc in accs)

    def _spark(self, row: Row) -> list[Any]:
        return [c.spark(v) for c, v in zip(self.outputs, row)]


class TopKProcessor(KeyedProcessor):
    """One partition of a top-k. Deletes below the cut must bring up the next rows, so
    every row is kept, but a popular partition's rows must not be read and written whole
    on every batch: the state holds a sorted *prefix* (the best ``bound`` rows, at least
    ``k``), and the other rows go to an append-only list (``ListState``: one round trip
    appends a batch's rows; deletes of listed rows are appended as negative entries).
    Every listed row sorts after every prefix row, so the top-k is the prefix's first
    ``k``. When deletes leave fewer than ``k`` in the prefix, the list is read, netted,
    and the best rows move up (the engine's top-k refills from its parent the same way);
    the list is also compacted when its entries far outnumber its rows."""

    def __init__(self, columns: list[Column], order: tuple[ir.SortKey, ...], k: int,
                 skip: int = 0) -> None:
        self.columns = columns
        self.order = order
        self.k = k
        self.skip = skip  # (the first rows a LIMIT's OFFSET inside another query leaves out)
        self.bound = max(2 * k, k + 16)
        #: Entries beyond four per listed row before the list is rewritten as its rows.
        self.compact_after = 1024

    def init(self, handle: StatefulProcessorHandle) -> None:
        super().init(handle)
        self.listed = handle.getListState("listed", _LISTED)

    def prepare(self) -> None:
        from rivulet.dataflow.builder import sort_key_function
        self.sort_key = sort_key_function(self.order, tie_break=len(self.columns))

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow],
                        timerValues: Any) -> Iterator[SparkRow]:
        prefix, listed, entries = self.load() or ({}, 0, 0)
        old = self._top(prefix)
        worst = max(map(self.sort_key, prefix)) if prefix and listed else None
        spill: list[tuple[Row, int]] = []
        for row in rows:
            values = tuple(c.engine(row[f"c{i}"]) for i, c in enumerate(self.columns))
            n = row[SIGN]
            if (values in prefix or not listed
                    or (worst is not None and self.sort_key(values) < worst)):
                _add(prefix, values, n)
            else:  # after every prefix row: so it stays
                spill.append((values, n))
                listed += n
        trimmed = self._trim(prefix)
        listed += sum(n for _, n in trimmed)
        spill.extend(trimmed)
        listed, entries = self._store_listed(prefix, spill, listed, entries)
        self.save((prefix, listed, entries), empty=not prefix and not listed)
        for values, d in _signed(old, self._top(prefix)):
            yield self.row(*[c.spark(v) for c, v in zip(self.columns, values)], d)

    def _trim(self, prefix: dict[Row, int]) -> list[tuple[Row, int]]:
        """The worst rows of a prefix grown past ``bound``, taken out of it."""
        total = sum(prefix.values())
        if total <= self.bound:
            return []
        moved = []
        for row in sorted(prefix, key=self.sort_key, reverse=True):
            n = prefix[row]
            if total - n < self.bound:
                break
            moved.append((row, n))
            del prefix[row]
            total -= n
        return moved

    def _store_listed(self, prefix: dict[Row, int], spill: list[tuple[Row, int]],
                      listed: int, entries: int) -> tuple[int, int]:
        """Append ``spill`` to the list, or (a prefix short of ``k``, a list mostly
        cancelled entries) read it whole, refill the prefix and write the rest back.
        Returns the list's rows and entries."""
        if listed == 0:  # every listed row was deleted again: nothing to keep
            if entries:
                self.listed.clear()
            return 0, 0
        short = sum(prefix.values()) < self.k and listed > 0
        if not short and entries + len(spill) <= 4 * max(listed, 0) + self.compact_after:
            if spill:
                self.listed.appendList([(_dump(r), n) for r, n in spill])
            return listed, entries + len(spill)
        rest = _read_listed(self.listed)
        for row, n in spill:
            _add(rest, row, n)
        ordered = sorted((r for r, n in rest.items() if n > 0), key=self.sort_key)
        total = sum(prefix.values())
        for row in ordered:
            if total >= self.bound:
                break
            prefix[row] = prefix.get(row, 0) + rest.pop(row)
            total += prefix[row]
        remaining = [(_dump(r), n) for r, n in rest.items() if n]
        self.listed.clear()
        if remaining:
            self.listed.put(remaining)
        return sum(n for _, n in remaining), len(remaining)

    def _top(self, rows: dict[Row, int]) -> dict[Row, int]:
        """The rows ranked ``skip`` to ``k`` in order, copies counted one by one."""
        ordered = sorted((r for r, n in rows.items() if n > 0), key=self.sort_key)
        out: dict[Row, int] = {}
        rank = 0
        for row in ordered:
            if rank >= self.k:
                break
            first, last = max(rank, self.skip), min(rank + rows[row], self.k)
            if last > first:
                out[row] = last - first
            rank += rows[row]
        return out


def _add(multiset: dict[Row, int], row: Row, n: int) -> None:
    count = multiset.get(row, 0) + n
    if count:
        multiset[row] = count
    else:
        multiset.pop(row, None)


def _dump(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


class DistinctProcessor(KeyedProcessor):
    """DISTINCT: grouped by the whole row, holds its multiplicity; the row is in the output
    while that is positive."""

    def __init__(self, width: int) -> None:
        self.width = width

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow],
                        timerValues: Any) -> Iterator[SparkRow]:
        before = self.load() or 0
        after = before + sum(row[SIGN] for row in rows)
        self.save(after, empty=after == 0)
        if (before > 0) != (after > 0):
            yield self.row(*key[:self.width], 1 if after > 0 else -1)


class LeftJoinProcessor(KeyedProcessor):
    """A LEFT JOIN's rows under one join key, maintained by the delta rule
    ``dL x R + L' x dR``, with each left row padded with NULLs while no right row
    matches it (the residual condition too); a key with a NULL matches nothing.

    The left rows are kept in the value state, each with its multiplicity and the
    multiplicity of right rows matching it; the right rows go to an append-only list,
    read only when left rows change. So the usual shape, a parent LEFT JOIN its many
    children (articles and their votes), costs per batch what its new children cost,
    not what the parent's children add up to. (The mirror shape keeps the many rows in
    the value state, read and written whole per batch.)"""

    def __init__(self, left: list[Column], right: list[Column], keys: int,
                 residual: ir.Expr | None, kinds: list[Kind | None]) -> None:
        self.left = left
        self.right = right
        self.keys = keys
        self.residual = residual
        self.kinds = kinds
        #: Entries beyond four per listed row before the list is rewritten as its rows.
        self.compact_after = 1024

    def init(self, handle: StatefulProcessorHandle) -> None:
        super().init(handle)
        self.listed = handle.getListState("right", _LISTED)

    def prepare(self) -> None:
        from rivulet.dataflow.compile import predicate_function
        self.condition: Callable[[Row], Any] | None = None
        if self.residual is not None:
            self.condition = predicate_function(self.residual, self.kinds, [True] * len(self.kinds))
        self.pad = (None,) * len(self.right)

    def handleInputRows(self, key: Any, rows: Iterator[SparkRow],
                        timerValues: Any) -> Iterator[SparkRow]:
        dl: dict[Row, int] = {}
        dr: dict[Row, int] = {}
        n = len(self.left)
        for row in rows:
            side = row["_side"]
            columns, offset = (self.right, n) if side else (self.left, 0)
            _add(dr if side else dl,
                 tuple(c.engine(row[f"c{offset + i}"]) for i, c in enumerate(columns)), row[SIGN])
        if None in tuple(key[:self.keys]):  # nothing matches: the left rows are padded, no state
            out = {left + self.pad: d for left, d in dl.items()}
        else:
            out = self._join(dl, dr)
        everything = self.left + self.right
        for values, d in out.items():
            if d:
                yield self.row(*[c.spark(v) for c, v in zip(everything, values)], d)

    def _join(self, dl: dict[Row, int], dr: dict[Row, int]) -> dict[Row, int]:
        # left row -> [its multiplicity, the right rows it matches]; right rows; entries
        nothing: tuple[dict[Row, list[int]], int, int] = ({}, 0, 0)
        left, right_rows, entries = self.load() or nothing
        out: dict[Row, int] = {}
        padded_before: dict[Row, int] = {}
        if dl:
            right = _read_listed(self.listed)
            for lrow, d in dl.items():
                held = left.get(lrow)
                if held is None:  # a new left row: how many right rows match it
                    held = left[lrow] = [
                        0, sum(m for r, m in right.items() if self._matches(lrow + r))]
                padded_before[lrow] = held[0] if held[1] == 0 else 0
                for rrow, m in right.items():
                    if self._matches(lrow + rrow):
                        _add(out, lrow + rrow, d * m)
                held[0] += d
        for rrow, d in dr.items():
            for lrow, held in left.items():
                if self._matches(lrow + rrow):
                    padded_before.setdefault(lrow, held[0] if held[1] == 0 else 0)
                    _add(out, lrow + rrow, held[0] * d)
                    held[1] += d
        for lrow, before in padded_before.items():
            held = left[lrow]
            after = held[0] if held[0] > 0 and held[1] == 0 else 0
            _add(out, lrow + self.pad, after - before)
            if held[0] <= 0:
                del left[lrow]
        right_rows, entries = self._append(dr, right_rows, entries)
        self.save((left, right_rows, entries), empty=not left and not right_rows)
        return out

    def _matches(self, joined: Row) -> bool:
        return self.condition is None or bool(self.condition(joined))

    def _append(self, dr: dict[Row, int], rows: int, entries: int) -> tuple[int, int]:
        rows += sum(dr.values())
        if rows == 0:  # every right row was deleted again
            if entries:
                self.listed.clear()
            return 0, 0
        if dr:
            self.listed.appendList([(_dump(r), d) for r, d in dr.items()])
        entries += len(dr)
        if entries > 4 * rows + self.compact_after:  # mostly cancelling entries: rewrite
            right = _read_listed(self.listed)
            self.listed.clear()
            self.listed.put([(_dump(r), m) for r, m in right.items()])
            entries = len(right)
        return rows, entries


def _read_listed(listed: Any) -> dict[Row, int]:
    """The net multiset of an append-only list of (pickled row, signed count) entries."""
    out: dict[Row, int] = {}
    for blob, n in listed.get():
        _add(out, pickle.loads(blob), n)
    return out
