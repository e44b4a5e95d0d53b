"""Scenarios of the differential tests: the program model, its reads, and one interpreter.

A scenario is tables, then operations (views created and dropped, writes, settles and
comparisons, reopens) that a test plays on a :class:`oracle.Pair`, rivulet beside SQLite.
tests/test_differential.py generates them; tests/test_partial.py plays the same ones on
partial state with operations of its own put in (reads of random keys, evictions). Both
run them through :func:`play`, so that an operation means the same thing in both, and a
fix to the interpreter reaches both.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import note
from hypothesis.control import currently_in_test_context

from oracle import Pair, query_shape

# --------------------------------------------------------------------------- domains

INTS = list(range(-3, 7))
STRS = ["", "a", "b", "A", "ab", "ba", "aB", "bb"]
HOT_INTS = [1, 2, 3, 0]
HOT_STRS = ["a", "b", "ab"]

#: Parameter values tried on every read: the domain, values with no rows, and NULL.
INT_PROBES = INTS + [99, None]
STR_PROBES = STRS + ["zz", None]


def probes(kind: str) -> list[Any]:
    return STR_PROBES if kind == "str" else INT_PROBES


# --------------------------------------------------------------------------- program model


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    kind: str  # "int" or "str"
    nullable: bool = True

    def ddl(self) -> str:
        t = "INT" if self.kind == "int" else "VARCHAR(8)"
        return f"{self.name} {t}" + ("" if self.nullable else " NOT NULL")


@dataclass(frozen=True)
class TableSpec:
    name: str
    columns: tuple[ColumnSpec, ...]  # the first is ``id INT PRIMARY KEY``

    def ddl(self) -> str:
        cols = ", ".join(c.ddl() for c in self.columns[1:])
        return f"CREATE TABLE {self.name} (id INT PRIMARY KEY" + (f", {cols})" if cols else ")")


@dataclass(frozen=True)
class Param:
    kind: str  # kind of the compared column
    role: str  # "eq", "in" (an IN (?, ?) list: two placeholders), "range"


@dataclass(frozen=True)
class ViewSpec:
    name: str
    sql: str  # the SELECT
    params: tuple[Param, ...] = ()
    #: column kinds of the output (for views used in FROM by later views)
    kinds: tuple[str, ...] = ()
    #: True if the view can be used in FROM (no parameters, no LIMIT)
    relation: bool = False


# Operations of a scenario:
#   ("view", ViewSpec)                 create a view
#   ("insert_many", table, rows)       table(...).insert_many
#   ("sql", text)                      INSERT / UPDATE / DELETE, on both sides
#   ("sqlp", text, params)             the same with ? parameters
#   ("check",)                         settle, then compare every view
#   ("read",)                          read every view before settle() (no comparison)
#   ("drop", name)                     DROP VIEW
#   ("reopen",)                        close rivulet, open it again, compare every view
# A test may add operations of its own (see :func:`play`).


@dataclass
class Scenario:
    tables: tuple[TableSpec, ...]
    ops: list[tuple]

    def __repr__(self) -> str:  # readable in Hypothesis's falsifying example
        lines = ["Scenario("]
        for t in self.tables:
            lines.append(f"  {t.ddl()}")
        for op in self.ops:
            if op[0] == "view":
                v = op[1]
                params = [p.kind + ":" + p.role for p in v.params]
                lines.append(f"  CREATE VIEW {v.name} AS {v.sql}   -- params {params}")
            elif op[0] == "insert_many":
                lines.append(f"  {op[1]}.insert_many({op[2]!r})")
            elif op[0] == "check":
                lines.append("  -- settle(), compare every view")
            elif op[0] == "drop":
                lines.append(f"  DROP VIEW {op[1]}")
            elif op[0] == "sql":
                lines.extend(f"  {statement}" for statement in op[1:])
            elif op[0] == "sqlp":
                lines.append(f"  {op[1]}   -- params {op[2]!r}")
            else:
                lines.append(f"  -- {op[0]}")
        lines.append(")")
        return "\n".join(lines)


# --------------------------------------------------------------------------- reads


def lookups_for(view: ViewSpec) -> list[tuple]:
    """Parameter tuples to read ``view`` with (IN lists expanded to 1-3 values)."""
    if not view.params:
        return [()]
    per_param: list[list[tuple]] = []
    for p in view.params:
        values = probes(p.kind)
        if p.role == "in":
            present = [v for v in values if v is not None]
            lists = [(v,) for v in values]
            lists += [(a, b) for a, b in zip(present, present[1:] + present[:1])]
            lists += [
                (present[0], present[0]),
                (present[1], None),
                (present[2], present[3], present[-1]),
            ]
            per_param.append(lists)
        else:
            per_param.append([(v,) for v in values])
    if len(per_param) == 1:
        combos = per_param[0]
    else:
        product = [tuple(itertools.chain(*c)) for c in itertools.product(*per_param)]
        step = max(1, len(product) // 60)
        combos = product[::step]
        # and the diagonal (the same position of every list; it ends with all NULLs)
        combos += [tuple(itertools.chain(*c)) for c in zip(*per_param)]
    return list(dict.fromkeys(combos))


def many_keys_for(view: ViewSpec) -> list[list]:
    """Key lists for ``lookup_many`` (views with only equality / IN parameters)."""
    if not view.params or any(p.role == "range" for p in view.params):
        return []
    if query_shape(view.sql).order:
        return []
    kinds = [p.kind for p in view.params]
    domains = [[v for v in probes(k) if v is not None] for k in kinds]
    if any(p.role == "in" for p in view.params):
        eq_kinds = [p.kind for p in view.params if p.role != "in"]
        in_kind = next(p.kind for p in view.params if p.role == "in")
        hot = {"str": HOT_STRS + ["zz"]}
        prefix = tuple(hot.get(k, HOT_INTS + [99])[0] for k in eq_kinds)
        vals = hot.get(in_kind, HOT_INTS + [99])
        return [[prefix + (v,) for v in vals], [prefix + (vals[-1],), prefix + (vals[1],)]]
    if len(kinds) == 1:
        d = domains[0]
        return [d[:5], [d[0], d[0], d[-1]], d]
    keys = [tuple(c) for c in itertools.product(*domains)]
    return [keys[::7], keys[:3]]


def check_all(pair: Pair, views: list[ViewSpec]) -> None:
    pair.settle()
    for view in views:
        for params in lookups_for(view):
            pair.check_view(view.name, params)
        for keys in many_keys_for(view):
            pair.check_view_many(view.name, keys)


def note_example(text: str) -> None:
    """Hypothesis's note() (printed with a falsifying example); a no-op outside @given."""
    if currently_in_test_context():
        note(text)


# --------------------------------------------------------------------------- the interpreter

#: What one operation does: called with the pair, the views alive (a list it may change in
#: place), and the operation.
Handler = Callable[[Any, list[ViewSpec], tuple], None]


def _view(pair: Pair, views: list[ViewSpec], op: tuple) -> None:
    pair.create_view(op[1].name, op[1].sql)
    views.append(op[1])


def _insert_many(pair: Pair, views: list[ViewSpec], op: tuple) -> None:
    pair.insert_many(op[1], op[2])


def _sql(pair: Pair, views: list[ViewSpec], op: tuple) -> None:
    for statement in op[1:]:
        pair.execute(statement)


def _sqlp(pair: Pair, views: list[ViewSpec], op: tuple) -> None:
    pair.execute(op[1], op[2])


def _check(pair: Pair, views: list[ViewSpec], op: tuple) -> None:
    check_all(pair, views)


def _read(pair: Pair, views: list[ViewSpec], op: tuple) -> None:
    # A read before settle(): any answer is allowed (eventual consistency), but it must
    # not fail, and it must not leave a stale cached answer.
    for view in views:
        for params in lookups_for(view)[:4]:
            pair.db.view(view.name).lookup(*params)


def _drop(pair: Pair, views: list[ViewSpec], op: tuple) -> None:
    pair.drop_view(op[1])
    views[:] = [v for v in views if v.name != op[1]]


def _reopen(pair: Pair, views: list[ViewSpec], op: tuple) -> None:
    pair.reopen()
    check_all(pair, views)


#: The operations every scenario may hold (see "Operations of a scenario" above).
OPERATIONS: dict[str, Handler] = {
    "view": _view,
    "insert_many": _insert_many,
    "sql": _sql,
    "sqlp": _sqlp,
    "check": _check,
    "read": _read,
    "drop": _drop,
    "reopen": _reopen,
}


def play(pair: Pair, scenario: Scenario, more: Mapping[str, Handler] | None = None
         ) -> list[ViewSpec]:
    """Create the scenario's tables on ``pair``, run its operations, then compare every view
    alive (after settle()); returns those views. ``more``: operations of a test's own,
    or its own meaning of a common one, by kind. An operation of no known kind fails."""
    handlers = OPERATIONS if more is None else {**OPERATIONS, **more}
    for table in scenario.tables:
        pair.execute(table.ddl())
    views: list[ViewSpec] = []
    for op in scenario.ops:
        handler = handlers.get(op[0])
        if handler is None:
            raise AssertionError(op)
        handler(pair, views, op)
    check_all(pair, views)
    return views
