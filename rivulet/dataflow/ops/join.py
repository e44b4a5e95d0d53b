"""⋈: equi-joins (inner and left) that look up the other side in its shared arrangement.

The join keeps no state of its own: it reads the arrangements of both parents on the join
keys. When it runs, both arrangements already include this wave's deltas (the graph applies
a node's output to its arrangements before any child runs). For an inner join that gives

    Δ(L ⋈ R) = ΔL ⋈ R_new + L_new ⋈ ΔR - ΔL ⋈ ΔR

(bilinear; the last term removes the pairs counted twice when both sides changed in one
wave, as in a self-join). A left join is not bilinear: a left row's padding depends on
whether it has any match. Matched pairs follow the inner-join formula; padded rows change
only for keys whose right side became empty or stopped being empty, and for left rows
that arrive or leave. With a residual ON condition matching depends on each row, so keys
whose right side changed are recomputed whole. NULL keys never match.

Under partial state the arrangements are caches: before computing, the join checks that
every key it will probe is held. The deltas under a key it lacks are dropped when no state
below holds that key either (rivulet/dataflow/holes.py: partial state grows with reads, not
writes, as in Noria); the other holes it returns as :class:`Misses` for the graph to fill.
An upquery on the join key asks both inputs by that key; one on other columns asks
the input that has them, then probes the other side by the join key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rivulet.dataflow.ops.base import Batch, Columns, Miss, Misses, NodeId, Operator, Upstream
from rivulet.plan.keys import trace_join
from rivulet.state.arrangement import (
    Arrangement,
    Row,
    group_by_key,
    key_function,
    key_has_null,
    subtract,
)


class Join(Operator):
    symbol = "⋈"

    def __init__(
        self,
        left: NodeId,
        right: NodeId,
        left_keys: tuple[int, ...],
        right_keys: tuple[int, ...],
        *,
        kind: str,
        left_arity: int,
        right_arity: int,
        residual: Callable[[Row], Any] | None = None,
        text: str = "",
        full: tuple[bool, bool] = (False, False),
    ) -> None:
        super().__init__((left, right))
        self.left, self.right = left, right
        self.left_keys, self.right_keys = left_keys, right_keys
        self.kind = kind
        self.residual = residual
        self.pad = (None,) * right_arity
        self.width = len(left_keys)
        self.left_key = key_function(left_keys)
        self.right_key = key_function(right_keys)
        self.text = text
        self.left_arity = left_arity
        self.full = full  # sides whose index must be complete (upqueries cannot fill it)
        #: For each key column, the output columns carrying its value: the left side's,
        #: and an inner join's right side's (a left join pads those with NULL).
        self.key_positions = tuple(
            frozenset({lk} if kind == "left" else {lk, left_arity + rk})
            for lk, rk in zip(left_keys, right_keys))
        self.left_state: Arrangement
        self.right_state: Arrangement

    def attach(self, graph: Upstream, node: NodeId) -> None:
        super().attach(graph, node)
        self.left_state = graph.arrangement(self.left, self.left_keys, full=self.full[0])
        self.right_state = graph.arrangement(self.right, self.right_keys, full=self.full[1])
        #: Where each side's index lives (the base table's, for a projection of its columns).
        self.left_at = graph.index_home(self.left, self.left_keys)
        self.right_at = graph.index_home(self.right, self.right_keys)

    def indexes_read(self) -> list[tuple[NodeId, tuple[int, ...]]]:
        return [self.left_at, self.right_at]

    def on_input(self, inputs: dict[NodeId, Batch]) -> Batch:
        dl = inputs.get(self.left) or []
        dr = inputs.get(self.right) or []
        if self.left_state.partial or self.right_state.partial:
            checked = self._holes(dl, dr)
            if isinstance(checked, Misses):
                return checked
            dl, dr = checked
        if self.kind == "left" and self.residual is not None:
            return self._left_join_by_key(dl, dr)
        out: Batch = []
        if dl:
            self._probe(dl, self.left_key, self.right_state, True, 1, out)
        if dr:
            self._probe(dr, self.right_key, self.left_state, False, 1, out)
        if dl and dr:
            batch_state = Arrangement(self.right_keys)
            batch_state.apply(dr)
            self._probe(dl, self.left_key, batch_state, True, -1, out)
        if self.kind == "left":
            self._pad(dl, dr, out)
        return out

    def _holes(self, dl: Batch, dr: Batch) -> Misses | tuple[Batch, Batch]:
        """The holes among the keys this wave will probe (a left join also reads its own
        side) that states below hold, as misses to fill; else the deltas to join, without
        those under holes no state below holds."""
        left_state, right_state = self.left_state, self.right_state
        left_keys = self._keys(dl, self.left_key)
        right_keys = self._keys(dr, self.right_key)
        if self.kind == "left":
            left_keys = right_keys = left_keys | right_keys
        right_missing = right_state.missing(left_keys)
        left_missing = left_state.missing(right_keys)
        if not right_missing and not left_missing:
            return dl, dr
        dropped = set(self.graph.holes_below(
            self.node, self.key_positions, dict.fromkeys(right_missing + left_missing)))
        if dropped:
            left_key, right_key = self.left_key, self.right_key
            dl = [d for d in dl if left_key(d[0]) not in dropped]
            dr = [d for d in dr if right_key(d[0]) not in dropped]
            right_missing = [k for k in right_missing if k not in dropped]
            left_missing = [k for k in left_missing if k not in dropped]
        misses = Misses()
        if right_missing:
            misses.append(Miss(*self.right_at, tuple(right_missing)))
        if left_missing:
            misses.append(Miss(*self.left_at, tuple(left_missing)))
        return misses or (dl, dr)

    def _keys(self, deltas: Batch, key_of: Callable[[Row], Any]) -> set[Any]:
        width = self.width
        return {k for k in map(key_of, (r for r, _ in deltas)) if not key_has_null(k, width)}

    # ..................................................................... upqueries

    def on_upquery(self, columns: Columns, keys: list[Any]) -> Batch:
        route = trace_join(columns, self.left_arity, self.left_keys, self.right_keys, self.kind)
        if route is None:
            raise ValueError(f"{self.describe()}: no route for an upquery on {columns}")
        graph = self.graph
        out: Batch = []
        if route.side == "both":
            graph.fill(self.left_at[0], self.left_state, keys)
            graph.fill(self.right_at[0], self.right_state, keys)
            for key in keys:
                # (a NULL key matches nothing: its left rows are padded or dropped)
                matches = {} if key_has_null(key, self.width) else self.right_state.get(key)
                for row, n in self.left_state.get(key).items():
                    self._join_row(row, n, matches, out)
        elif route.side == "left":
            rows = graph.upquery(self.left, route.columns, keys)
            graph.fill(self.right_at[0], self.right_state, self._keys(rows, self.left_key))
            for row, n in rows:
                key = self.left_key(row)
                matches = {} if key_has_null(key, self.width) else self.right_state.get(key)
                self._join_row(row, n, matches, out)
        else:
            # Rows named by right columns: only matched pairs can have them (padding is NULL).
            rows = graph.upquery(self.right, route.columns, keys)
            graph.fill(self.left_at[0], self.left_state, self._keys(rows, self.right_key))
            residual = self.residual
            for row, n in rows:
                key = self.right_key(row)
                if key_has_null(key, self.width):
                    continue  # (a NULL key matches nothing)
                for left_row, m in self.left_state.get(key).items():
                    joined = left_row + row
                    if residual is None or residual(joined):
                        out.append((joined, n * m))
        return out

    def compute(self, inputs: dict[NodeId, Batch]) -> Batch:
        """A hash join of both inputs' whole outputs (the arrangements, partial caches,
        are not consulted)."""
        right = group_by_key(inputs.get(self.right) or [], self.right_key)
        out: Batch = []
        for row, n in inputs.get(self.left) or []:
            key = self.left_key(row)
            matches = {} if key_has_null(key, self.width) else right.get(key, {})
            self._join_row(row, n, matches, out)
        return out

    def _join_row(self, row: Row, n: int, matches: dict[Row, int], out: Batch) -> None:
        """One left row against its matching right rows (padded, for a left join, when
        none satisfies the condition)."""
        residual = self.residual
        matched = False
        for other, m in matches.items():
            joined = row + other
            if residual is None or residual(joined):
                out.append((joined, n * m))
                matched = True
        if not matched and self.kind == "left":
            out.append((row + self.pad, n))

    def _probe(
        self,
        deltas: Batch,
        key_of: Callable[[Row], Any],
        other: Arrangement,
        from_left: bool,
        sign: int,
        out: Batch,
    ) -> None:
        width, residual, index = self.width, self.residual, other.index
        for row, diff in deltas:
            key = key_of(row)
            matches = index.get(key)
            if not matches or key_has_null(key, width):
                continue
            d = diff * sign
            for other_row, n in matches.items():
                joined = row + other_row if from_left else other_row + row
                if residual is None or residual(joined):
                    out.append((joined, d * n))

    def _pad(self, dl: Batch, dr: Batch, out: Batch) -> None:
        """Padded rows of a left join (no residual): a left row is padded iff its key has no
        right rows. Only keys whose right side became or stopped being empty cost more
        than the left deltas themselves."""
        width, pad = self.width, self.pad
        right_delta = group_by_key(dr, self.right_key)
        left_delta = group_by_key(dl, self.left_key)
        for key, rows in left_delta.items():
            if key_has_null(key, width):
                out.extend((row + pad, n) for row, n in rows.items())
        for key in right_delta.keys() | left_delta.keys():
            if key_has_null(key, width):
                continue
            right_new = self.right_state.get(key)
            change = right_delta.get(key)
            was_empty = not right_new if change is None else _empty_before(right_new, change)
            if not right_new and was_empty:
                out.extend((row + pad, n) for row, n in left_delta.get(key, {}).items())
            elif not right_new:
                out.extend((row + pad, n) for row, n in self.left_state.get(key).items())
            elif was_empty:
                left_old = subtract(self.left_state.get(key), left_delta.get(key, {}))
                out.extend((row + pad, -n) for row, n in left_old.items())

    def _left_join_by_key(self, dl: Batch, dr: Batch) -> Batch:
        """Left join with a residual ON condition: whether a left row has a match depends on
        the row itself, so keys whose right side changed are recomputed whole."""
        out: Batch = []
        width = self.width
        changed_right = group_by_key(dr, self.right_key)
        changed_right = {k: v for k, v in changed_right.items() if not key_has_null(k, width)}
        changed_left = group_by_key(dl, self.left_key) if changed_right else {}
        for key, right_delta in changed_right.items():
            left_new = self.left_state.get(key)
            left_old = subtract(left_new, changed_left.get(key, {}))
            right_new = self.right_state.get(key)
            right_old = subtract(right_new, right_delta)
            self._emit(left_old, right_old, -1, out)
            self._emit(left_new, right_new, 1, out)
        for row, diff in dl:
            key = self.left_key(row)
            if key in changed_right:
                continue  # already recomputed whole above
            matches = {} if key_has_null(key, width) else self.right_state.get(key)
            self._emit({row: diff}, matches, 1, out)
        return out

    def _emit(self, left: dict[Row, int], right: dict[Row, int], sign: int, out: Batch) -> None:
        residual, pad = self.residual, self.pad
        for lrow, n in left.items():
            matched = False
            for rrow, m in right.items():
                joined = lrow + rrow
                if residual is None or residual(joined):
                    out.append((joined, sign * n * m))
                    matched = True
            if not matched:
                out.append((lrow + pad, sign * n))

    def describe(self) -> str:
        kind = "⟕" if self.kind == "left" else "⋈"
        return f"{kind} {self.text}"


def _empty_before(now: dict[Row, int], change: dict[Row, int]) -> bool:
    """Whether ``now - change`` is empty. Multiplicities of real state are positive, so it
    is empty exactly when the change accounts for every row now present."""
    if len(now) > len(change):
        return False
    return sum(now.values()) == sum(change.values())
