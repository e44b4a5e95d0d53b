"""The joins of a FROM clause: which tables each ON sees, and which equalities key each join.

Every join rivulet runs is an equi-join (``ir.Join``): the dataflow operator looks each
row up in the other side's index by the key, and partial state fills that index by
upqueries on it. A FROM clause written without such a key is planned into one anyway:

* ``FROM a, b WHERE a.x = b.y``, ``a CROSS JOIN b``, ``a JOIN b`` without ON, and an ON with
  no equality between its two sides: an inner join with no equality of its own takes the
  WHERE's equalities between its two sides as its key (an inner join's ON filters as a
  WHERE does, so they give the same rows). One with none at all is a join on the empty key:
  every left row meets every right row, and the rest of the condition filters the pairs.
* ``ON lower(a.x) = lower(b.y)``: an equality between an expression of each side is a key
  too, each side computing its expression as a column; only where ``=`` compares the two
  values as Python's equality does (same kinds, not a DECIMAL, whose computed places
  MySQL compares as carried, nor a DOUBLE): others stay in the condition, computed for
  each pair, as any condition is.

Equalities of columns of one kind are transitive, so ``FROM a, b, c WHERE a.k = c.k AND b.k =
c.k`` keys the join of ``a`` and ``b`` on ``a.k = b.k`` (implied: both conditions are still
applied), rather than making every pair of ``a`` and ``b`` for ``c`` to filter.

MySQL's precedence: a comma binds less tightly than JOIN, so in ``FROM a, b JOIN c ON
c.x = a.x`` the ON sees only ``b`` and ``c`` (MySQL's 1054 for ``a.x``); a JOIN's ON sees the
tables of its comma-separated item up to itself. The joins are still planned left to
right, one after the other: ``a, (b JOIN c ON θ)`` is ``(a, b) JOIN c ON θ`` when ``θ`` names
no column of ``a``, which the scoping guarantees (for a LEFT JOIN as for an inner one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from rivulet.errors import SqlError, UnsupportedSqlError
from rivulet.plan import ir
from rivulet.plan.expressions import refuse_join_keys, translate, type_of
from rivulet.plan.scope import FromScope
from rivulet.sql.parens import is_comma
from rivulet.values.schema import BYTES, DATE, DATETIME, DECIMAL, INT, STR, Kind

#: An equality between the two sides of a join: an expression over the left row, one over
#: the joined item's own row.
KeyPair = tuple[ir.Expr, ir.Expr]

#: The kinds whose values computed by an expression on each side compare by ``=`` as
#: Python's equality compares them, when both sides are of the kind (text with a binary
#: collation, as rivulet's).
EXPRESSION_KEY_KINDS: frozenset[Kind] = frozenset({INT, STR, BYTES, DATE, DATETIME})


@dataclass
class JoinStep:
    """One join of a FROM clause, its ON read: the item joined (its plan, where its
    columns start in the FROM row) and how."""

    right: ir.Node
    start: int
    left_join: bool
    #: The ON's equalities between the two sides, the join's key.
    pairs: list[KeyPair] = field(default_factory=list)
    #: The rest of the ON, over the joined row (the FROM row up to this item's end).
    rest: list[ir.Expr] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + self.right.arity

    @property
    def open(self) -> bool:
        """Whether the join takes the WHERE's equalities between its sides as its key: an
        inner join with no equality of its own (a comma, CROSS JOIN, JOIN without ON)."""
        return not self.left_join and not self.pairs


#: The kinds whose ``=`` between two columns of the kind is transitive (no conversion).
TRANSITIVE_KINDS: frozenset[Kind] = frozenset({INT, DECIMAL, STR, BYTES, DATE, DATETIME})


def implied_pairs(conditions: list[exp.Expr], scope: FromScope, start: int,
                  end: int) -> list[KeyPair]:
    """Equalities between the left row (columns before ``start``) and the joined item
    (``start`` to ``end``) that ``conditions`` imply through a third column: ``a.k = c.k
    AND b.k = c.k`` give ``a.k = b.k``, for columns all of one of
    :data:`TRANSITIVE_KINDS`. One pair per class of equal columns."""
    parent: dict[int, int] = {}

    def find(i: int) -> int:
        while parent.get(i, i) != i:
            i = parent[i]
        return i

    for cond in conditions:
        if not (isinstance(cond, exp.EQ) and isinstance(cond.this, exp.Column)
                and isinstance(cond.expression, exp.Column)):
            continue
        try:
            a, b = scope.resolve(cond.this), scope.resolve(cond.expression)
        except SqlError:
            continue
        ka, kb = scope.columns[a].kind, scope.columns[b].kind
        if ka != kb or ka not in TRANSITIVE_KINDS:
            continue
        parent.setdefault(a, a)
        parent.setdefault(b, b)
        parent[find(a)] = find(b)
    classes: dict[int, tuple[list[int], list[int]]] = {}
    for i in parent:
        left, right = classes.setdefault(find(i), ([], []))
        if i < start:
            left.append(i)
        elif i < end:
            right.append(i)
    return [(ir.Col(min(left), scope.columns[min(left)].name),
             ir.Col(min(right) - start, scope.columns[min(right)].name))
            for left, right in classes.values() if left and right]


def comma_groups(joins: list[exp.Join]) -> list[int]:
    """For each FROM item (the first, then one per join), the index of the item that
    starts its comma-separated group: the tables its ON may name start there."""
    starts = [0]
    for i, join in enumerate(joins, start=1):
        starts.append(i if is_comma(join) else starts[-1])
    return starts


def key_pair(cond: exp.Expr, scope: FromScope, start: int, end: int) -> KeyPair | None:
    """``cond`` as an equality between an expression of the left row (columns before
    ``start``) and one of the joined item (columns ``start`` to ``end``), the latter then
    over the item's own row; None if it is not one, or does not translate (the condition
    it stays in then says why)."""
    if not isinstance(cond, exp.EQ):
        return None
    if cond.find(exp.Placeholder, exp.Select, exp.Subquery) is not None:
        return None
    try:
        x, y = translate(cond.this, scope), translate(cond.expression, scope)
    except SqlError:
        return None

    def left(e: ir.Expr) -> bool:
        used = ir.columns_used(e)
        return bool(used) and max(used) < start

    def right(e: ir.Expr) -> bool:
        used = ir.columns_used(e)
        return bool(used) and start <= min(used) and max(used) < end

    if left(x) and right(y):
        pair = (x, y)
    elif left(y) and right(x):
        pair = (y, x)
    else:
        return None
    local = ir.replace_columns(pair[1], lambda c: ir.Col(c.index - start, c.name))
    return pair[0], local


def keyable(pair: KeyPair, left: tuple[ir.ColumnInfo, ...], right: tuple[ir.ColumnInfo, ...],
            *, refuse: bool) -> bool:
    """Whether a join of rows of ``left`` and ``right`` columns can be keyed on ``pair``
    and match as MySQL's ``=`` does. Two columns can, converted as ``=`` converts them
    (the planner's ``_compared_keys``), except for the kinds that
    :func:`~rivulet.plan.expressions.refuse_join_keys` refuses: with ``refuse`` (an ON's
    equality of two columns, as ever) that refusal is raised, else the equality is no key
    (it stays a condition). Expressions can when both are of one kind of
    :data:`EXPRESSION_KEY_KINDS`."""
    x, y = pair
    tx = type_of(x, [c.type for c in left])
    ty = type_of(y, [c.type for c in right])
    if isinstance(x, ir.Col) and isinstance(y, ir.Col):
        try:
            refuse_join_keys([(tx.kind, ty.kind)])
        except UnsupportedSqlError:
            if refuse:
                raise
            return False
        return True
    return tx.kind is not None and tx.kind == ty.kind and tx.kind in EXPRESSION_KEY_KINDS
