"""γ: grouped aggregation with retraction.

The aggregate maths (one accumulator class per function) is kept apart from the plumbing
(one operator that routes deltas to groups and emits ``-old, +new`` per changed group).
Every accumulator accepts negative multiplicities: COUNT and SUM subtract, MIN and MAX keep
a multiset of values so that deleting the current extreme finds the next one, GROUP_CONCAT
a sorted multiset of its rows' texts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from decimal import Context, Decimal
from fractions import Fraction
from operator import itemgetter
from typing import Any

from sortedcontainers import SortedKeyList

from rivulet import values as F
from rivulet.dataflow.ops.base import Batch, Columns, NodeId, StatefulOperator
from rivulet.plan import ir
from rivulet.plan.ir import AggCall
from rivulet.state.arrangement import DIFF_OF, ROW_OF, Delta, Row, key_function
from rivulet.state.groups import KeyedGroups
from rivulet.state.sizing import Sample, shares, slots_bytes, sorted_list_bytes
from rivulet.values import as_float, div, to_number
from rivulet.values.schema import DECIMAL, Kind


class Accumulator:
    __slots__ = ()

    def add(self, value: Any, diff: int) -> None:
        raise NotImplementedError

    def result(self) -> Any:
        raise NotImplementedError

    def load(self, state: Any) -> None:
        """Take the state another executor computed (see :meth:`Aggregate.load_groups`)."""
        raise NotImplementedError


class CountColumn(Accumulator):
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def add(self, value: Any, diff: int) -> None:
        if value is not None:
            self.n += diff

    def result(self) -> int:
        return self.n

    def load(self, state: Any) -> None:
        self.n = state


#: Every finite double is a whole multiple of 2**-1074 (the smallest subnormal): DOUBLEs are
#: summed exactly as integers in those units.
_DOUBLE_UNIT = 1 << 1074


class Sum(Accumulator):
    """SUM keeps the count of non-NULL values too: a group of only NULLs sums to NULL.
    Values are added as numbers (MySQL sums text as DOUBLEs, a date as YYYYMMDD).

    DOUBLEs are summed exactly (as integers of 2**-1074) and rounded once when the result
    is read: a running float total would keep the rounding error of every value added
    and later removed (1e10 added and removed again leaves 0.3333 + 3.0 at 3.3333000002),
    where MySQL, computing the SUM afresh, gives the sum of the values there now."""

    __slots__ = ("total", "n", "doubles", "n_doubles")

    def __init__(self) -> None:
        self.total: Any = 0  # of the exact values (int, Decimal)
        self.n = 0
        self.doubles = 0  # of the DOUBLEs, in units of 2**-1074
        self.n_doubles = 0

    def add(self, value: Any, diff: int) -> None:
        if value is not None:
            t = type(value)
            if t is not int and t is not float and t is not Decimal:
                value = to_number(value)
                t = type(value)
            if t is float and math.isfinite(value):
                num, den = value.as_integer_ratio()
                self.doubles += num * (_DOUBLE_UNIT // den) * diff
                self.n_doubles += diff
            elif t is Decimal or type(self.total) is Decimal:
                # (exactly: the default context keeps 28 digits, a DECIMAL(65) has 65)
                self.total = _EXACT.add(self.total, _EXACT.multiply(value, diff))
            else:
                self.total += value * diff
            self.n += diff

    def load(self, state: tuple[Any, int]) -> None:
        """``(total, count of non-NULL values)``. A DOUBLE total stands for that many
        DOUBLEs: removing fewer than all of them later must leave a DOUBLE sum."""
        total, n = state
        self.total, self.doubles, self.n_doubles = 0, 0, 0
        self.add(total, 1)
        self.n = n
        if self.n_doubles:
            self.n_doubles = n

    def result(self) -> Any:
        if self.n == 0:
            self.total = 0  # forget an accumulated infinity once the group is empty
            return None
        if not self.n_doubles and type(self.total) is not float:
            return self.total
        if not self.total:
            return self.doubles / _DOUBLE_UNIT  # (int / int: correctly rounded)
        if type(self.total) is float:  # an infinity
            return self.total + self.doubles / _DOUBLE_UNIT
        return float(Fraction(self.total) + Fraction(self.doubles, _DOUBLE_UNIT))


#: Exact DECIMAL sums (MySQL's DECIMAL holds 65 digits; its SUM, 65 more at most).
_EXACT = Context(prec=200)


class Avg(Sum):
    """SUM / COUNT, divided as SQL's ``/`` divides: a DECIMAL keeps its scale plus four
    places, rounded half up (MySQL's ``div_precision_increment``)."""

    __slots__ = ()

    def result(self) -> Any:
        total = super().result()
        if total is None:
            return None
        return div(total, self.n)


class Values(Accumulator):
    """The multiset of non-NULL values: backs MIN, MAX and the DISTINCT aggregates."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: dict[Any, int] = {}

    def add(self, value: Any, diff: int) -> None:
        if value is None:
            return
        n = self.values.get(value, 0) + diff
        if n:
            self.values[value] = n
        else:
            del self.values[value]

    def load(self, state: dict[Any, int]) -> None:
        """The multiset: each non-NULL value and how many rows hold it."""
        self.values = state


class Min(Values):
    __slots__ = ()

    def result(self) -> Any:
        return min(self.values) if self.values else None


class Max(Values):
    __slots__ = ()

    def result(self) -> Any:
        return max(self.values) if self.values else None


class CountDistinct(Values):
    __slots__ = ()

    def result(self) -> int:
        return len(self.values)


class SumDistinct(Values):
    """The distinct values as numbers (MySQL: '12' and '12abc' are one value, 12)."""

    __slots__ = ()

    def add(self, value: Any, diff: int) -> None:
        super().add(None if value is None else to_number(value), diff)

    def load(self, state: dict[Any, int]) -> None:
        """The multiset of the argument's values (as another executor groups them)."""
        self.values = {}
        for value, n in state.items():
            self.add(value, n)

    def result(self) -> Any:
        return sum(self.values) if self.values else None


class AvgDistinct(SumDistinct):
    __slots__ = ()

    def result(self) -> Any:
        if not self.values:
            return None
        return div(sum(self.values), len(self.values))


#: The squares of DOUBLEs summed exactly, in units of 2**-2148.
_SQUARE_UNIT = _DOUBLE_UNIT * _DOUBLE_UNIT


class Variance(Accumulator):
    """VAR_POP (and VAR_SAMP, STDDEV_POP, STDDEV_SAMP: the subclasses): the values read as
    DOUBLEs, as MySQL reads them (its ``val_real``), then their count, sum and sum of
    squares kept exactly (integers of 2**-1074 and of 2**-2148), so a delete takes away
    exactly what its insert added; the variance ``(n * sum2 - sum**2) / n**2`` is rounded
    once, when it is read.

    MySQL and MariaDB compute it by Welford's recurrence over the group's rows in DOUBLE
    arithmetic, each step rounding: their answer may differ from the exactly rounded one
    here in its last few bits (the text they send for an exact argument shows four places
    more than it has, which hides that; for a DOUBLE argument the tests compare to a
    relative 1e-9, as they compare every DOUBLE)."""

    __slots__ = ("n", "total", "squares")
    #: Whether the result divides by n - 1 (a sample's) rather than n.
    sample = False
    #: Whether the result is the square root (a standard deviation).
    root = False

    def __init__(self) -> None:
        self.n = 0
        self.total = 0  # in units of 2**-1074
        self.squares = 0  # in units of 2**-2148

    def add(self, value: Any, diff: int) -> None:
        if value is None:
            return
        x = value if type(value) is float else as_float(value)
        num, den = x.as_integer_ratio()
        units = num * (_DOUBLE_UNIT // den)
        self.n += diff
        self.total += units * diff
        self.squares += units * units * diff

    def load(self, state: dict[Any, int]) -> None:
        """The multiset of the argument's values (as another executor groups them)."""
        self.n, self.total, self.squares = 0, 0, 0
        for value, n in state.items():
            self.add(value, n)

    def result(self) -> float | None:
        divisor = self.n - 1 if self.sample else self.n
        if divisor <= 0:
            if self.n == 0:
                self.total, self.squares = 0, 0
            return None
        spread = self.n * self.squares - self.total * self.total  # (n * sum2 - sum**2)
        variance = spread / (_SQUARE_UNIT * self.n * divisor)  # (int / int: rounded once)
        return math.sqrt(variance) if self.root else variance


class VarSamp(Variance):
    __slots__ = ()
    sample = True


class StddevPop(Variance):
    __slots__ = ()
    root = True


class StddevSamp(Variance):
    __slots__ = ()
    sample = True
    root = True


ACCUMULATORS: dict[tuple[str, bool], type[Accumulator]] = {
    ("count", False): CountColumn,
    ("count", True): CountDistinct,
    ("sum", False): Sum,
    ("sum", True): SumDistinct,
    ("avg", False): Avg,
    ("avg", True): AvgDistinct,
    ("min", False): Min,
    ("min", True): Min,
    ("max", False): Max,
    ("max", True): Max,
    ("var_pop", False): Variance,
    ("var_samp", False): VarSamp,
    ("stddev_pop", False): StddevPop,
    ("stddev_samp", False): StddevSamp,
}


class GroupConcat(Accumulator):
    """GROUP_CONCAT: the multiset of its rows' entries, each ``(text, ORDER BY values...,
    argument values...)`` (:class:`~rivulet.plan.ir.Concatenation`), with those present
    kept sorted as the result lists them, so that a change costs a logarithmic insert or
    removal and the result reads the first entries only, up to ``max_len`` bytes.

    MySQL's rules: a row whose text is NULL (an argument is NULL) is skipped; no text left
    is NULL; ORDER BY sorts NULLs first ascending, last descending; entries it leaves tied
    (all of them without ORDER BY, where MySQL's order is unspecified) follow their
    arguments' values ascending; DISTINCT keeps one of equal argument values (the planner
    lets it order by its arguments only, so equal values are equal entries); the result is
    cut to ``max_len`` bytes, on a character's boundary (MySQL's warning 1260 is not given:
    rivulet's reads carry no warnings)."""

    __slots__ = ("counts", "ordered", "how")

    def __init__(self, how: ConcatReading) -> None:
        self.how = how
        self.counts: dict[tuple[Any, ...], int] = {}
        self.ordered = SortedKeyList(key=how.sort_key)

    def add(self, value: tuple[Any, ...], diff: int) -> None:
        if value[0] is None:
            return
        before = self.counts.get(value, 0)
        after = before + diff
        if after:
            self.counts[value] = after
        else:
            del self.counts[value]
        if before <= 0 < after:
            self.ordered.add(value)
        elif after <= 0 < before:
            self.ordered.remove(value)

    def result(self) -> Any:
        if not self.ordered:
            return None
        how = self.how
        separator, limit = how.separator, how.max_len
        texts = []
        size = -len(separator)
        for entry in self.ordered:
            text = entry[0]
            for _ in range(1 if how.distinct else self.counts[entry]):
                texts.append(text)
                size += len(separator) + len(text)
                if size > limit:  # (characters: at least as many bytes)
                    return how.cut(separator.join(texts))
        return how.cut(separator.join(texts))


class ConcatReading:
    """How a :class:`GroupConcat` orders its entries, joins and cuts them: from its
    call's :class:`~rivulet.plan.ir.Concatenation`."""

    __slots__ = ("sort_key", "separator", "max_len", "distinct")

    def __init__(self, call: AggCall) -> None:
        concat = call.concat
        assert concat is not None  # (a GROUP_CONCAT's call)
        keys = [(1 + i, F.desc_key if k.descending else F.sort_key)
                for i, k in enumerate(concat.order)]
        start = 1 + len(concat.order)
        keys += [(start + i, F.sort_key) for i in range(len(concat.values))]

        def sort_key(entry: tuple[Any, ...]) -> tuple[Any, ...]:
            return (*[fn(entry[i]) for i, fn in keys], entry[0])

        self.sort_key = sort_key
        self.separator: str | bytes = concat.separator
        self.max_len = concat.max_len
        self.distinct = call.distinct

    def cut(self, text: Any) -> Any:
        """``text`` cut to ``max_len`` bytes, not inside a character."""
        if type(text) is bytes:
            return text[:self.max_len]
        if len(text) * 4 <= self.max_len:
            return text
        data = text.encode()
        if len(data) <= self.max_len:
            return text
        return data[:self.max_len].decode("utf-8", "ignore")


ACCUMULATORS[("group_concat", False)] = GroupConcat
ACCUMULATORS[("group_concat", True)] = GroupConcat


def _accumulator_maker(call: AggCall) -> Callable[[], Accumulator]:
    """What makes ``call``'s accumulator for a new group."""
    factory = ACCUMULATORS[(call.fn, call.distinct)]
    if factory is GroupConcat:
        how = ConcatReading(call)
        return lambda: GroupConcat(how)
    return factory


def _reader(call: AggCall) -> Callable[[Row], Any]:
    """What ``call``'s accumulator takes of a row: its argument's value, or a
    GROUP_CONCAT's entry (its text, then the columns its Concatenation reads)."""
    if call.concat is None:
        return itemgetter(call.arg)
    columns = call.concat.columns()
    assert columns  # (a GROUP_CONCAT reads its arguments' values: the getter makes tuples)
    return itemgetter(call.arg, *columns)


class Group:
    __slots__ = ("rows", "accs", "output")

    def __init__(self, accs: list[Accumulator]) -> None:
        self.rows = 0
        self.accs = accs
        self.output: Row | None = None


class Aggregate(StatefulOperator):
    """Groups by ``group_by`` columns; output rows are group columns then aggregate values.

    Without GROUP BY there is exactly one group, present even when empty (SQL answers one
    row, ``COUNT(*) = 0``, over no rows). With ``partial`` (output columns among the group
    columns), only the groups under keys asked for by upqueries are held.
    """

    symbol = "γ"
    plan_node: ir.Aggregate

    def __init__(self, parent: NodeId, group_by: tuple[int, ...], aggs: tuple[AggCall, ...],
                 partial: Columns | None = None,
                 result_kinds: Sequence[Kind | None] = ()) -> None:
        super().__init__((parent,))
        self.group_by = group_by
        self.aggs = aggs
        #: Aggregates whose exact result is a DECIMAL (a SUM of integers is one, in MySQL)
        #: while the accumulator adds Python ints, faster than Decimals.
        self.as_decimal = [k == DECIMAL for k in result_kinds] or [False] * len(aggs)
        self.key_of = key_function(group_by)
        self.single = len(group_by) == 1
        self.is_global = not group_by
        self.count_star = [a.arg is None for a in aggs]
        self.arg_columns = [a.arg for a in aggs]
        self.factories = [ACCUMULATORS[(a.fn, a.distinct)] for a in aggs]
        self.makers = [_accumulator_maker(a) for a in aggs]
        #: Whether an aggregate reads more than its argument's value (GROUP_CONCAT): rows
        #: are then read by :func:`_reader` rather than by column.
        self.concatenates = any(a.concat is not None for a in aggs)
        self.readers = [_reader(a) for a in aggs if a.arg is not None]
        self.only_count_star = all(self.count_star)
        self.partial_columns = partial
        self.state: KeyedGroups[Group] = KeyedGroups(len(group_by), partial)
        self.groups = self.state.groups
        self.sample = Sample()
        #: Rows applied: a MIN's multisets grow with them while the groups stay.
        self.changes = 0
        if self.is_global:
            group = self._new_group()
            group.output = self._output((), group)
            self.groups[()] = group

    @property
    def partial_input_columns(self) -> Columns | None:
        """The partial key's columns in the input: the group columns it names."""
        partial = self.partial_columns
        if partial is None or not self.partial:
            return None
        return tuple(self.group_by[c] for c in partial)

    def _new_group(self) -> Group:
        return Group([f() for f, star in zip(self.makers, self.count_star) if not star])

    def initial_output(self) -> Batch:
        if self.is_global:
            output = self.groups[()].output
            assert output is not None  # the global group always has its row
            return [(output, 1)]
        return []

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        deltas = inputs[self.parents[0]]
        self.changes += len(deltas)
        if self.only_count_star:
            touched = self._count_rows(deltas)
        else:
            touched = self._accumulate(deltas)
        return self._emit(touched)

    def _count_rows(self, deltas: Batch) -> dict[Any, Group]:
        key_of = self.key_of
        net: dict[Any, int]
        if min(map(DIFF_OF, deltas), default=0) == max(map(DIFF_OF, deltas), default=0) == 1:
            net = Counter(map(key_of, map(ROW_OF, deltas)))  # inserts only: counted in C
        else:
            net = {}
            for row, diff in deltas:
                key = key_of(row)
                net[key] = net.get(key, 0) + diff
        groups = self.groups
        touched = {}
        for key, diff in net.items():
            group = groups.get(key)
            if group is None:
                if not self.state.holds(key):
                    continue  # a hole: nobody below holds this group either
                group = Group([])
                self.state.add(key, group)
            group.rows += diff
            touched[key] = group
        return touched

    def _accumulate(self, deltas: Batch) -> dict[Any, Group]:
        groups = self.groups
        key_of = self.key_of
        columns = [c for c in self.arg_columns if c is not None]
        readers = self.readers if self.concatenates else None
        touched = {}
        for row, diff in deltas:
            key = key_of(row)
            group = groups.get(key)
            if group is None:
                if not self.state.holds(key):
                    continue  # a hole: nobody below holds this group either
                group = self._new_group()
                self.state.add(key, group)
            touched[key] = group
            group.rows += diff
            if readers is None:
                for acc, column in zip(group.accs, columns):
                    acc.add(row[column], diff)
            else:
                for acc, read in zip(group.accs, readers):
                    acc.add(read(row), diff)
        return touched

    def _emit(self, touched: dict[Any, Group]) -> Batch:
        out: Batch = []
        for key, group in touched.items():
            old = group.output
            if group.rows > 0 or self.is_global:
                new = group.output = self._output(key, group)
            else:
                new = None
                self.state.remove(key)
            if old != new:
                if old is not None:
                    out.append((old, -1))
                if new is not None:
                    out.append((new, 1))
        return out

    def _output(self, key: Any, group: Group) -> Row:
        if self.only_count_star:
            return ((key,) if self.single else key) + (group.rows,) * len(self.aggs)
        values = []
        accs = iter(group.accs)
        for star, as_decimal in zip(self.count_star, self.as_decimal):
            value = group.rows if star else next(accs).result()
            if as_decimal and type(value) is int:
                value = Decimal(value)
            values.append(value)
        head = (key,) if self.single else key
        return head + tuple(values)

    # ..................................................................... bulk load

    def state_kinds(self) -> list[tuple[str, int]]:
        """What each accumulator keeps (not COUNT(*): a group's row count serves it), with
        the input column it reads, so another executor can compute the state: ``"count"``
        (non-NULL values), ``"sum"`` (total and count of non-NULL values; SUM, AVG),
        ``"values"`` (the multiset of non-NULL values; MIN, MAX, the variances and the
        DISTINCT forms) or ``"concat"`` (GROUP_CONCAT's entries, which no other executor
        computes)."""
        kinds = []
        for factory, column in zip(self.factories, self.arg_columns):
            if column is None:
                continue
            if factory is GroupConcat:
                kinds.append(("concat", column))
            elif issubclass(factory, (Values, Variance)):
                kinds.append(("values", column))
            elif issubclass(factory, Sum):
                kinds.append(("sum", column))
            else:
                kinds.append(("count", column))
        return kinds

    def load_groups(self, groups: Iterable[tuple[Any, int, list[Any]]],
                    filled: Iterable[Any] | None = None) -> int:
        """Install whole groups whose state was computed elsewhere (bootstrap or pre-warm
        on Spark): each is ``(group key, row count, one state per accumulator)`` in the
        layout of :meth:`state_kinds`; the key is a scalar for one group column, a tuple for
        several, ``()`` without GROUP BY. Nothing is emitted: full state is loaded before
        its children bootstrap from :meth:`snapshot`; partial state is loaded for the
        partial keys ``filled`` (held by no one yet: all their groups must be given), which
        then answer upqueries from it. Returns the groups loaded."""
        if self.partial:
            keys = list(filled or ())
            if any(k in self.state.filled for k in keys):
                raise ValueError(f"{self.describe()}: a partial key to load is held already")
            self.state.mark_filled(keys)
        elif filled is not None:
            raise ValueError(f"{self.describe()}: full state has no keys to fill")
        n = 0
        for key, rows, states in groups:
            if rows <= 0 and not self.is_global:
                continue
            group = self.groups.get(key) if self.is_global else None
            if group is None:
                group = self._new_group()
                self.state.add(key, group)
            group.rows = rows
            for acc, state in zip(group.accs, states):
                acc.load(state)
            group.output = self._output(key, group)
            n += 1
        return n

    # ..................................................................... upqueries

    @property
    def group_columns(self) -> Columns | None:
        return None if self.is_global else tuple(range(len(self.group_by)))

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        traced = tuple(self.group_by[c] for c in columns if c < len(self.group_by))
        self.hold(columns, keys, traced, self._absorb)
        groups, state = self.groups, self.state
        out: Batch = []
        for key in keys:
            for gk in state.group_keys(key):
                out.append((groups[gk].output, 1))  # type: ignore[arg-type]
        return out

    def _absorb(self, rows: Batch) -> None:
        touched = self._count_rows(rows) if self.only_count_star else self._accumulate(rows)
        self._emit(touched)

    def snapshot(self) -> Iterable[Delta] | None:
        if self.partial:
            return None
        return [(g.output, 1) for g in self.groups.values() if g.output is not None]

    def byte_size(self) -> int:
        """The bytes of the groups (rivulet.state.sizing): keys, accumulators with their
        multisets of values (MIN, MAX, DISTINCT, GROUP_CONCAT), output rows (shared with the state
        below that holds them), and the partial keys' bookkeeping."""
        groups = self.groups
        has_values = any(issubclass(f, (Values, GroupConcat)) for f in self.factories)

        concatenates = self.concatenates

        def measure(picked: list[Any]) -> tuple[float, float, int]:
            total = shares(picked)
            for key in picked:
                group = groups.get(key)
                if group is not None:
                    total += slots_bytes(group)
                    if concatenates:  # (a GROUP_CONCAT's sorted entries and their keys)
                        total += sum(sum(sorted_list_bytes(acc.ordered)) for acc in group.accs
                                     if type(acc) is GroupConcat)
            return total, 0.0, 0

        return (self.sample.bytes(groups, 0, measure, self.changes if has_values else 0)
                + self.state.byte_size())

    def describe(self) -> str:
        aggs = ", ".join(
            f"{a.fn}({'DISTINCT ' if a.distinct else ''}{'*' if a.arg is None else f'#{a.arg}'}"
            + ("" if a.concat is None else "".join(
                f" #{k.column}{' DESC' if k.descending else ''}" for k in a.concat.order))
            + ")"
            for a in self.aggs
        )
        return f"γ [{', '.join(f'#{c}' for c in self.group_by)}] {aggs}"

