"""Read handles on views: parameters in, finished rows out, straight from reader state.

``lookup`` is the hot path. For the common shape (one equality parameter) it is a dict
lookup and a cached tuple; everything else (several keys, IN lists, ranges, keys of the
wrong Python type) takes the general path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

from rivulet.dataflow import functions as F
from rivulet.dataflow.builder import BuiltView, sort_key_function
from rivulet.errors import ClosedError, RivuletError
from rivulet.schema import Column, SchemaError, coerce_value
from rivulet.state.reader import RangeReader

if TYPE_CHECKING:
    from rivulet.database import Database

Row = tuple

_LOWER = {">": False, ">=": True}
_UPPER = {"<": False, "<=": True}
_CHECK = {">": F.gt, ">=": F.ge, "<": F.lt, "<=": F.le}


class View:
    """A view of the program, read by its ``?`` parameters."""

    def __init__(self, db: Database, built: BuiltView) -> None:
        self._db = db
        self._built = built
        plan = built.plan
        self.name = plan.name
        self.columns: tuple[str, ...] = plan.column_names
        self.plan = plan
        self._state = built.state
        self._entries = built.state.entries  # the hot path reads the reader's dict directly
        self._finish = built.finish
        self._default = built.default_rows
        self._key_columns = [
            Column(plan.root.columns[i].name, plan.root.columns[i].kind or "str")
            for i in plan.key
        ]
        self._single = len(plan.key) == 1 and plan.range_column is None and not plan.in_list
        self._simple = self._single and plan.param_count == 1 and plan.key_params == (0,)
        self._unparameterized = plan.param_count == 0
        self._closed = False

    def _close(self) -> None:
        """Called when the database closes: every read now fails with ClosedError."""
        self._closed = True
        self._entries = {}

    # ..................................................................... reads

    def lookup(self, *params: Any) -> list[Row]:
        """The view's rows for these ``?`` values, in the order the ``?`` appear.

        For ``BETWEEN ? AND ?`` pass both bounds; for ``IN (?, ...)`` pass any number of
        values in its place.
        """
        if self._simple and len(params) == 1:
            entry = self._entries.get(params[0])
            if entry is not None:
                result = entry.result
                if result is None:
                    result = self._state.get(params[0])  # type: ignore[union-attr]
                if result is not None:
                    return list(result)
        return self._lookup(params)

    def lookup_many(self, keys: Iterable[Any]) -> list[Row]:
        """Rows for several keys at once (one value, or a tuple of the key's values, each).

        For an ``IN (?, ...)`` view, each key gives the values of the equality parameters
        followed by one value of the IN list.
        """
        self._check_open()
        keys = [k if isinstance(k, tuple) else (k,) for k in keys]
        for k in keys:
            if len(k) != len(self._key_columns):
                raise RivuletError(
                    f"view {self.name!r} is keyed by {len(self._key_columns)} value(s), "
                    f"got a key of {len(k)}: {k!r}"
                )
        return self._read_keys(keys)

    def scan(self) -> list[Row]:
        """Every row of the view, over all parameter values (hidden columns dropped): the
        answers of every key, each ordered and cut to its LIMIT, one after the other. A
        range view has no keys to cut by: it returns all its rows in the view's order."""
        self._check_open()
        state = self._state
        if isinstance(state, RangeReader):
            rows = state.all_raw()
            if self.plan.order:
                rows.sort(key=sort_key_function(self.plan.order))
            return [r[: self.plan.visible] for r in rows]
        out: list[Row] = []
        for key in list(state.entries):
            out.extend(state.get(key) or ())
        return out

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("the database is closed")

    def __repr__(self) -> str:
        return f"<View {self.name} ({', '.join(self.columns)})>"

    # ..................................................................... general path

    def _lookup(self, params: Sequence[Any]) -> list[Row]:
        self._check_open()
        plan = self.plan
        if self._unparameterized:
            if params:
                raise RivuletError(f"view {self.name!r} takes no parameters, got {len(params)}")
            result = self._state.get(())  # type: ignore[union-attr]
            return list(result) if result is not None else self._defaults(())
        values = self._values_by_param(params)
        eq_key = [values[p] for p in plan.key_params[: len(plan.key) - (1 if plan.in_list else 0)]]
        if plan.in_list:
            keys = [tuple(eq_key) + (v,) for v in values["in"]]
        else:
            keys = [tuple(eq_key)]
        if plan.range_column is not None:
            return self._read_range(keys[0], values)
        if len(keys) == 1:
            return self._read_one(keys[0])
        return self._read_keys(keys)

    def _values_by_param(self, params: Sequence[Any]) -> dict[Any, Any]:
        plan = self.plan
        n = plan.param_count
        if not plan.in_list:
            if len(params) != n:
                raise RivuletError(f"view {self.name!r} takes {n} parameter(s), got {len(params)}")
            return dict(enumerate(params))
        extra = len(params) - n
        start, size = plan.in_list[0], len(plan.in_list) + extra
        if size < 1:
            raise RivuletError(
                f"view {self.name!r} takes {n - len(plan.in_list)} parameter(s) and at least one "
                f"IN value, got {len(params)} values"
            )
        values: dict[Any, Any] = {}
        for p in range(n):
            if p < start:
                values[p] = params[p]
            elif p >= start + len(plan.in_list):
                values[p] = params[p + extra]
        values["in"] = list(params[start:start + size])
        return values

    def _read_one(self, key: tuple) -> list[Row]:
        key = self._coerce_key(key)
        if key is None:
            return []
        if any(v is None for v in key):
            return self._defaults(key, matches_nothing=True)
        state_key = key[0] if len(key) == 1 else key
        result = self._state.get(state_key)  # type: ignore[union-attr]
        if result is None:
            return self._defaults(state_key)
        return list(result)

    def _read_keys(self, keys: list[tuple]) -> list[Row]:
        raw: list[Row] = []
        seen = set()
        for key in keys:
            key = self._coerce_key(key)
            if key is None or key in seen:
                continue
            seen.add(key)
            if any(v is None for v in key):
                continue
            state_key = key[0] if len(key) == 1 else key
            if self._default is not None and state_key not in self._state.entries:  # type: ignore[union-attr]
                raw.extend(self._default(state_key))
            else:
                raw.extend(self._state.raw(state_key))  # type: ignore[union-attr]
        return list(self._finish(raw))

    def _read_range(self, key: tuple, values: dict[Any, Any]) -> list[Row]:
        state: RangeReader = self._state  # type: ignore[assignment]
        coerced = self._coerce_key(key) if key else ()
        if coerced is None or any(v is None for v in coerced):
            return []
        low = high = None
        low_inc = high_inc = True
        bounds = [(b.op, values[b.param]) for b in self.plan.range_bounds]
        if any(v is None for _, v in bounds):
            return []  # a comparison with NULL is never true
        range_kind = self.plan.root.columns[self.plan.range_column].kind  # type: ignore[index]
        bounds = [(op, _coerce(range_kind, v)) for op, v in bounds]
        for op, v in bounds:
            if op in _LOWER and low is None:
                low, low_inc = v, _LOWER[op]
            elif op in _UPPER and high is None:
                high, high_inc = v, _UPPER[op]
        state_key = coerced[0] if len(coerced) == 1 else coerced
        rows = state.range(state_key, low, low_inc, high, high_inc)
        if len(bounds) > 2 or sum(op in _LOWER for op, _ in bounds) > 1:
            col = self.plan.range_column
            rows = [r for r in rows if all(_CHECK[op](r[col], v) for op, v in bounds)]
        return list(self._finish(rows))

    def _defaults(self, key: Any, *, matches_nothing: bool = False) -> list[Row]:
        """Rows of an implicit group that has no input rows (see ``default_rows``);
        ``matches_nothing`` for a key with a NULL, which no row can match."""
        if self._default is None:
            return []
        return list(self._finish(self._default(key, matches_nothing)))

    def _coerce_key(self, key: tuple) -> tuple | None:
        try:
            return tuple(
                v if v is None else coerce_value(col, v) for col, v in zip(self._key_columns, key)
            )
        except SchemaError:
            return None


def _coerce(kind: str | None, value: Any) -> Any:
    if kind is None:
        return value
    try:
        return coerce_value(Column("bound", kind), value)
    except SchemaError:
        raise RivuletError(f"range parameter {value!r} is not comparable with a {kind} column") from None
