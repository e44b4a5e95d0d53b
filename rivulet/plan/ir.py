"""The logical IR: immutable relational operators over immutable expressions.

One IR feeds every executor (the in-process dataflow, later Spark). Nodes are frozen
dataclasses, so structurally equal sub-plans compare and hash equal: that equality *is* the
query signature by which the dataflow builder shares operators and state across views.

Expressions address their input's columns by position (``Col(i)``); names exist only for
display and are excluded from equality, so ``SELECT id AS a`` and ``SELECT id AS b`` share.

Map of relational nodes (output columns in brackets)::

    Scan(table)                        [table columns]
    OneRow()                           [no columns]  (one row: a SELECT without FROM, DUAL)
    Filter(input, predicate)           [input]
    Project(input, exprs)              [one per expr]
    Join(left, right, kind, keys...)   [left ++ right]
    Aggregate(input, group_by, aggs)   [group columns ++ one per aggregate]
    Distinct(input)                    [input]
    Union(inputs)                      [first input's shape]  (ALL semantics; wrap in Distinct)
    SetOp(left, right, op, all)        [left's shape]  (INTERSECT / EXCEPT, ALL or DISTINCT)
    TopK(input, group_by, order, k)    [input]  (the first k rows per group)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, ClassVar, Literal

from rivulet.values.schema import Column, Kind
from rivulet.values.types import NOT_FIXED, SqlType

# --------------------------------------------------------------------------- columns


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    """What a plan knows of one output column: its name, its static type (see
    :mod:`rivulet.values.types`: the kind, and for a DECIMAL the places shown and carried,
    for a TIME its fractional digits; whether an integer is unsigned), and whether it may
    hold NULL."""

    name: str
    kind: Kind | None  # None when only NULL flows here
    nullable: bool = True
    scale: int = 0
    frac: int = 0
    unsigned: bool = False
    #: The table column whose values these are, unchanged (a column read and passed on, a
    #: group key, MIN/MAX of it), else None: its declaration says how a view's parameter
    #: compares with it (an ENUM's members, a DECIMAL's scale) and how its values are shown
    #: (a FLOAT's single precision).
    column: Column | None = None
    #: For a DOUBLE, the places its text shows (``SqlType.decimals``).
    decimals: int = NOT_FIXED
    #: For an exact number, its integer digits (``SqlType.digits``).
    digits: int = field(default=0, compare=False)
    #: For a DOUBLE, whether it is MySQL's single-precision FLOAT (``SqlType.single``).
    single: bool = False

    @property
    def type(self) -> SqlType:
        return SqlType(self.kind, self.scale, self.frac, self.unsigned, self.decimals,
                       self.digits, self.single)

    @staticmethod
    def of(name: str, t: SqlType, nullable: bool = True,
           column: Column | None = None) -> ColumnInfo:
        """A column of type ``t`` (with the table ``column`` its values are, if any)."""
        return ColumnInfo(name, t.kind, nullable, t.scale, t.frac, t.unsigned, column,
                          t.decimals, t.digits, t.single)


# --------------------------------------------------------------------------- expressions


class Expr:
    """Base of scalar expressions. Subclasses are frozen dataclasses."""

    __slots__ = ()

    def children(self) -> tuple[Expr, ...]:
        return ()


@dataclass(frozen=True, slots=True)
class Col(Expr):
    """The input column at ``index``."""

    index: int
    name: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class Lit(Expr):
    """A constant. The kind is kept so that ``1`` and ``1.0`` and ``TRUE`` stay distinct."""

    value: Any
    kind: Kind | None = None


@dataclass(frozen=True, slots=True)
class Param(Expr):
    """The value of the ``index``-th ``?`` of a write statement, bound at execution."""

    index: int


@dataclass(frozen=True, slots=True)
class StatementTime(Expr):
    """The instant the statement reads the clock at (rivulet/values/clock.py), a DATETIME
    to the microsecond: bound at execution after the write statement's ``?`` values (the
    last of them), so every time function of one statement sees the same instant and the
    write stores values, not calls. Only write statements hold it: a read is planned with
    its instant as a constant, and a view cannot hold one (its answer would change without
    a write)."""


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """An operator or function call; ``fn`` names an entry of the function library."""

    fn: str
    args: tuple[Expr, ...]

    def children(self) -> tuple[Expr, ...]:
        return self.args


@dataclass(frozen=True, slots=True)
class Case(Expr):
    """Searched ``CASE WHEN c THEN v ... ELSE d END``."""

    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr | None

    def children(self) -> tuple[Expr, ...]:
        out = [e for pair in self.whens for e in pair]
        if self.default is not None:
            out.append(self.default)
        return tuple(out)



def columns_used(expr: Expr) -> set[int]:
    """Input positions an expression reads."""
    if isinstance(expr, Col):
        return {expr.index}
    out: set[int] = set()
    for child in expr.children():
        out |= columns_used(child)
    return out


def reads_clock(expr: Expr) -> bool:
    """Whether ``expr`` reads the statement's instant (:class:`StatementTime`)."""
    return isinstance(expr, StatementTime) or any(reads_clock(c) for c in expr.children())


def replace_columns(expr: Expr, column: Callable[[Col], Expr]) -> Expr:
    """``expr`` with every column reference ``c`` replaced by ``column(c)``: the one walk
    behind moving a predicate across a join (new positions) or a projection (its
    expressions)."""
    if isinstance(expr, Col):
        return column(expr)
    if isinstance(expr, Call):
        return Call(expr.fn, tuple(replace_columns(a, column) for a in expr.args))
    if isinstance(expr, Case):
        whens = tuple((replace_columns(c, column), replace_columns(v, column))
                      for c, v in expr.whens)
        default = replace_columns(expr.default, column) if expr.default is not None else None
        return Case(whens, default)
    if expr.children():
        raise TypeError(f"no column rewrite for {type(expr).__name__} expressions")
    return expr


def and_all(exprs: list[Expr]) -> Expr:
    """``a AND b AND ...`` of one or more predicates."""
    out = exprs[0]
    for e in exprs[1:]:
        out = Call("and_", (out, e))
    return out


def conjuncts(expr: Expr) -> list[Expr]:
    """``a AND b AND c`` as ``[a, b, c]``."""
    if isinstance(expr, Call) and expr.fn == "and_":
        return [part for arg in expr.args for part in conjuncts(arg)]
    return [expr]


# --------------------------------------------------------------------------- aggregates

AGGREGATE_FUNCTIONS = ("count", "sum", "avg", "min", "max", "group_concat", "var_pop",
                       "var_samp", "stddev_pop", "stddev_samp")

#: MySQL's default ``group_concat_max_len``: the bytes a GROUP_CONCAT keeps.
GROUP_CONCAT_MAX_LEN = 1024


@dataclass(frozen=True, slots=True)
class Concatenation:
    """What a GROUP_CONCAT reads beside its text (``AggCall.arg``, the row's arguments
    concatenated as ``CONCAT`` does, NULL when any is): its ORDER BY terms (input columns,
    descending or not) and the columns of its arguments' values, which are the DISTINCT
    key and, after ORDER BY, the order of rows it leaves tied (MySQL's order is then
    unspecified; this one is deterministic). ``separator`` is text, or bytes for a binary
    result; the result is cut to ``max_len`` bytes (MySQL's ``group_concat_max_len``)."""

    order: tuple[SortKey, ...]
    values: tuple[int, ...]
    separator: str | bytes = ","
    max_len: int = GROUP_CONCAT_MAX_LEN

    def columns(self) -> tuple[int, ...]:
        return tuple(k.column for k in self.order) + self.values

    def moved(self, positions: Callable[[int], int]) -> Concatenation:
        """The same concatenation over columns moved by ``positions``."""
        return replace(self, order=tuple(replace(k, column=positions(k.column))
                                         for k in self.order),
                       values=tuple(positions(c) for c in self.values))


@dataclass(frozen=True, slots=True)
class AggCall:
    """One aggregate: ``fn`` over ``arg`` (an input column; ``None`` for ``COUNT(*)``);
    a GROUP_CONCAT's ``concat`` says what else it reads."""

    fn: str
    arg: int | None
    distinct: bool = False
    concat: Concatenation | None = None

    def columns(self) -> tuple[int, ...]:
        """Every input column the aggregate reads."""
        head = () if self.arg is None else (self.arg,)
        return head + (self.concat.columns() if self.concat is not None else ())

    def moved(self, positions: Callable[[int], int]) -> AggCall:
        """The same aggregate over input columns moved by ``positions``."""
        if self.arg is None:
            return self
        concat = self.concat.moved(positions) if self.concat is not None else None
        return replace(self, arg=positions(self.arg), concat=concat)


# --------------------------------------------------------------------------- relations


class Node:
    """Base of relational nodes. ``columns`` is derived and excluded from equality."""

    __slots__ = ()
    columns: tuple[ColumnInfo, ...]
    #: Every node is a dataclass (so ``dataclasses.replace`` takes any node).
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def inputs(self) -> tuple[Node, ...]:
        return ()

    def signature(self) -> str:
        """A text equal for equal sub-plans and stable across processes (unlike ``hash``):
        an order on sub-plans, for writing commutative joins one way."""
        return _signature(self)

    @property
    def arity(self) -> int:
        return len(self.columns)


@dataclass(frozen=True, slots=True)
class Scan(Node):
    table: str
    columns: tuple[ColumnInfo, ...] = field(compare=False)
    #: The table's schema version the plan was made on (ALTER TABLE makes a new one): a
    #: plan on an older version reads that version's columns, and shares no operator
    #: with plans on other versions.
    version: int = 0
    #: The primary key of that table version (column positions; ``()`` when it has none),
    #: fixed with the version: eager aggregation (rivulet/plan/eager.py) reads it here, so
    #: that a plan optimized later, after the table has changed, is optimized the same way.
    primary_key: tuple[int, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class OneRow(Node):
    """The one row of no columns that a ``SELECT`` without ``FROM`` (or ``FROM DUAL``)
    reads, as MySQL computes it: its select list over one row, its WHERE keeping or dropping
    that row, its aggregates over one row. A constant source: no write ever changes it."""

    columns: tuple[ColumnInfo, ...] = field(default=(), compare=False)


@dataclass(frozen=True, slots=True)
class Filter(Node):
    input: Node
    predicate: Expr
    columns: tuple[ColumnInfo, ...] = field(compare=False)

    def inputs(self) -> tuple[Node, ...]:
        return (self.input,)


@dataclass(frozen=True, slots=True)
class Project(Node):
    input: Node
    exprs: tuple[Expr, ...]
    columns: tuple[ColumnInfo, ...] = field(compare=False)
    #: The view whose select list this is, when another view reads it in FROM: column
    #: pruning then leaves the view's sub-plan as the view itself has it, so that both
    #: share its operators (see ``rivulet/plan/prune.py``). Not part of the node's
    #: identity: the same query over a subquery is the same plan.
    view: str = field(default="", compare=False)

    def inputs(self) -> tuple[Node, ...]:
        return (self.input,)


JoinKind = Literal["inner", "left"]


@dataclass(frozen=True, slots=True)
class Join(Node):
    """Equi-join; ``residual`` is a further condition over the joined row (left ++ right)."""

    left: Node
    right: Node
    kind: JoinKind
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    residual: Expr | None
    columns: tuple[ColumnInfo, ...] = field(compare=False)

    def inputs(self) -> tuple[Node, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True)
class Aggregate(Node):
    input: Node
    group_by: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    columns: tuple[ColumnInfo, ...] = field(compare=False)

    def inputs(self) -> tuple[Node, ...]:
        return (self.input,)


@dataclass(frozen=True, slots=True)
class RangeAggregate(Node):
    """An aggregate over the rows whose ``range_column`` is within range parameters
    (``SELECT k, SUM(v) FROM t WHERE ts >= ? GROUP BY k``): one answer per value of the
    parameters, so the parameters' values are part of the output rather than a filter.

    Output: the group columns, the aggregate values, then one column per bound (``ops``,
    in the order of the view's ``range_bounds``, then each of ``other_ranges``' ops, in the
    order of the view's ``other_ranges``) holding the parameter's value, which keys the
    view's reader with the group columns of equality parameters (``keyed``). A row of the
    input is in the range of the values ``p`` when ``row[range_column] op p`` holds for
    every bound, and ``row[column] op p`` for every bound of ``other_ranges``; a NULL is in
    no range. ``implicit``: the keyed columns are the only group columns, made so for the
    equality parameters of a query without GROUP BY, whose aggregate over no rows still
    answers a row (``COUNT(*)`` = 0)."""

    input: Node
    group_by: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    range_column: int  # of the input
    ops: tuple[str, ...]  # each one of ``> >= < <=``, the column on its left
    keyed: tuple[int, ...]  # output group columns of equality parameters, in their order
    implicit: bool
    columns: tuple[ColumnInfo, ...] = field(compare=False)
    #: Range parameters on other input columns (``WHERE a > ? AND b < ?``: ``b``'s), each
    #: as (input column, its ops, the column on their left).
    other_ranges: tuple[tuple[int, tuple[str, ...]], ...] = ()

    def inputs(self) -> tuple[Node, ...]:
        return (self.input,)

    @property
    def bounded(self) -> tuple[tuple[int, str], ...]:
        """Every bound as (input column, op), in the order of the bound columns."""
        return tuple((self.range_column, op) for op in self.ops) + tuple(
            (column, op) for column, ops in self.other_ranges for op in ops)

    @property
    def bound_columns(self) -> tuple[int, ...]:
        """The output columns holding the parameters' values."""
        start = len(self.group_by) + len(self.aggs)
        return tuple(range(start, start + len(self.bounded)))

    @property
    def key_columns(self) -> tuple[int, ...]:
        """The output columns that key it: the equality parameters', then the bounds."""
        return self.keyed + self.bound_columns


@dataclass(frozen=True, slots=True)
class Distinct(Node):
    input: Node
    columns: tuple[ColumnInfo, ...] = field(compare=False)

    def inputs(self) -> tuple[Node, ...]:
        return (self.input,)


@dataclass(frozen=True, slots=True)
class Union(Node):
    """Bag union (UNION ALL); ``UNION`` is ``Distinct(Union(...))``."""

    branches: tuple[Node, ...]
    columns: tuple[ColumnInfo, ...] = field(compare=False)

    def inputs(self) -> tuple[Node, ...]:
        return self.branches


SetOpKind = Literal["intersect", "except"]


@dataclass(frozen=True, slots=True)
class SetOp(Node):
    """``INTERSECT`` or ``EXCEPT`` of two inputs of one shape, over multisets: with
    ``all``, each row ``min(l, r)`` times (INTERSECT) or ``max(l - r, 0)`` times (EXCEPT),
    for its ``l`` copies on the left and ``r`` on the right; without, once where both
    have it (INTERSECT) or only the left does (EXCEPT)."""

    left: Node
    right: Node
    op: SetOpKind
    all: bool
    columns: tuple[ColumnInfo, ...] = field(compare=False)

    def inputs(self) -> tuple[Node, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True)
class SortKey:
    """One ``ORDER BY`` term: a column of the node's input, descending or not."""

    column: int
    descending: bool = False


@dataclass(frozen=True, slots=True)
class TopK(Node):
    """The first ``k`` rows of each ``group_by`` group in ``order`` (ties broken by the row),
    less the first ``skip`` of them: a view's reader skips its OFFSET itself, but a LIMIT
    inside another query (``FROM (... LIMIT 5 OFFSET 10) t``) passes on only the rows past
    it."""

    input: Node
    group_by: tuple[int, ...]
    order: tuple[SortKey, ...]
    k: int
    columns: tuple[ColumnInfo, ...] = field(compare=False)
    skip: int = 0

    def inputs(self) -> tuple[Node, ...]:
        return (self.input,)


# --------------------------------------------------------------------------- views


@dataclass(frozen=True, slots=True)
class RangeBound:
    """A range parameter: ``column op ?`` with op one of ``> >= < <=``."""

    op: str
    param: int  # position among the view's ``?``
    #: one of the two bounds of ``column BETWEEN ? AND ?``, which compares the three
    #: values as one type (``values.types.between_as_doubles``)
    between: bool = False


@dataclass(frozen=True, slots=True)
class ColumnRange:
    """Range parameters on a column other than a view's first range column (``WHERE a > ?
    AND b < ?``: ``b``'s). The reader is sorted and cut by the first column alone; these
    bounds are checked over the rows it cut, on ``column`` (a hidden root column, as the
    range column is), compared as the first column's bounds are."""

    #: The root column holding the compared value; of a view keyed by its bounds
    #: (``ViewPlan.bounds_keyed``), the key column holding its first bound's value (of the
    #: compared column's type).
    column: int
    bounds: tuple[RangeBound, ...]


#: Names starting with this are rivulet's own (tables and views of the program may not).
RESERVED_PREFIX = "_rivulet"
#: Views made for ad-hoc SELECTs (``db.query``, the MySQL server) are named with this prefix:
#: reserved, so that no view of the program is taken for one.
ADHOC_PREFIX = RESERVED_PREFIX + "_q_"


def is_adhoc(name: str) -> bool:
    """Whether view ``name`` was made for an ad-hoc query (not part of the program)."""
    return name.startswith(ADHOC_PREFIX)


@dataclass(frozen=True, slots=True)
class Alternatives:
    """A view's ``a = ? OR b = ?`` (the columns not all one): the view is the union of one
    copy of the query per term, the OR replaced by that term as an ordinary equality
    parameter keying the last column of the view's key (rivulet/plan/alternatives.py).
    Each copy's rows carry which term they came through and, for every earlier term, its
    column's value, so that a read keeps each row once: through the first term it matches.
    """

    params: tuple[int, ...]  # the ``?`` of each term, in the order written
    names: tuple[str, ...]  # each term's column
    tag: int  # the root column holding the term a row came through (0, 1, ...)
    #: The root columns holding, for each term but the last, its column's value (NULL in
    #: the rows of that term and later ones).
    copies: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ViewPlan:
    """A planned view: the relation to maintain plus how its reader is keyed and read.

    The root's columns are the visible ones followed by hidden ones (parameter columns not
    selected, sort columns not selected). ``key`` columns are the equality parameters in the
    order of their ``?``; ``range_column`` carries the range parameters, if any.
    """

    name: str
    root: Node
    visible: int  # the first ``visible`` root columns are returned to readers
    key: tuple[int, ...]  # root columns matched by equality parameters
    key_params: tuple[int, ...]  # which ``?`` feeds each key column
    range_column: int | None = None
    range_bounds: tuple[RangeBound, ...] = ()
    #: Range parameters on other columns than ``range_column`` (``a > ? AND b < ?``),
    #: each column's in the order first written: checked at read time over the rows the
    #: reader's range on ``range_column`` cut, before the answer is ordered and cut.
    other_ranges: tuple[ColumnRange, ...] = ()
    order: tuple[SortKey, ...] = ()  # over root columns; applied at read time
    limit: int | None = None
    offset: int = 0
    #: The ``?`` of an ``IN (?, ...)`` list, whose column is the last key column. A lookup
    #: may pass any number of values there.
    in_list: tuple[int, ...] = ()
    param_count: int = 0
    #: ``col = ?`` on a column that keys the reader already (``a = ? AND a = ?``): each as
    #: (the ``?``, its key column's position in ``key``). A read's value for it must equal
    #: the key's, or no row matches.
    equal_params: tuple[tuple[int, int], ...] = ()
    #: Several ``IN (?, ...)`` lists (``a IN (?, ?) AND b IN (?, ?)``): each list's column is
    #: a key column fed by its first ``?``; these are (its position in ``key``, the list's
    #: other ``?``). A read asks for every combination of the lists' values.
    listed: tuple[tuple[int, tuple[int, ...]], ...] = ()
    #: The ``?`` of ``col <=> ?`` among the equality parameters: a NULL value finds the
    #: rows whose column is NULL (a read computes those: no reader keeps NULL keys).
    null_safe: tuple[int, ...] = ()
    #: The range parameters' values key the reader (a :class:`RangeAggregate` answers one
    #: value of them per key): ``key`` holds one column per bound of ``range_bounds``,
    #: ``range_column`` is None, and a read looks its bounds up as a key.
    bounds_keyed: bool = False
    #: Rows of several keys (IN lists) or of a range are merged at read time; a DISTINCT
    #: view must then drop duplicates across them.
    distinct_on_read: bool = False
    #: The parameter columns became the only GROUP BY keys of an aggregate without one: a
    #: key with no rows still answers one row (``COUNT(*)`` = 0), built at read time.
    implicit_group: bool = False
    #: ``a = ? OR b = ?``: the terms the reader's last key column stands for in turn
    #: (``key_params[-1]`` is the first term's ``?``); None for any other view.
    alternatives: Alternatives | None = None
    sql: str = field(default="", compare=False)
    #: ``None`` for a plan as the planner made it; else the names of the rules that
    #: ``rivulet.plan.optimize.optimize`` ran on it, in order. A plan is optimized once: a
    #: second run of the rules is not a no-op (see that module).
    optimized: tuple[str, ...] | None = field(default=None, compare=False)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.root.columns[: self.visible])

    @property
    def all_range_bounds(self) -> tuple[RangeBound, ...]:
        """Every range bound: the first range column's, then the other columns' (of a
        view keyed by its bounds, the order of its bound key columns)."""
        return self.range_bounds + tuple(b for other in self.other_ranges for b in other.bounds)


def with_inputs(node: Node, inputs: list[Node] | tuple[Node, ...]) -> Node:
    """``node`` reading ``inputs`` instead of its own (``node`` itself when they are the
    same objects): the one rebuild behind every rewrite of a plan's inner nodes."""
    if all(new is old for new, old in zip(inputs, node.inputs())):
        return node
    if isinstance(node, (Join, SetOp)):
        return replace(node, left=inputs[0], right=inputs[1])
    if isinstance(node, Union):
        return replace(node, branches=tuple(inputs))
    if isinstance(node, (Filter, Project, Aggregate, RangeAggregate, Distinct, TopK)):
        return replace(node, input=inputs[0])
    raise TypeError(f"{type(node).__name__} has no inputs to replace")


def walk(node: Node) -> list[Node]:
    """Every node of a plan, inputs before the nodes that read them, each once."""
    seen: set[int] = set()
    out: list[Node] = []

    def visit(n: Node) -> None:
        if id(n) in seen:
            return
        seen.add(id(n))
        for child in n.inputs():
            visit(child)
        out.append(n)

    visit(node)
    return out


def _signature(value: Any) -> str:
    if is_dataclass(value):
        parts = ",".join(_signature(getattr(value, f.name)) for f in fields(value) if f.compare)
        return f"{type(value).__name__}({parts})"
    if isinstance(value, tuple):
        return "(" + ",".join(_signature(v) for v in value) + ")"
    if isinstance(value, str) and type(value) is not str:  # a Kind: as the plain string it is,
        return repr(str(value))  # so that signatures stay what they were before Kind was an enum
    return repr(value)
