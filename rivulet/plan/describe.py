"""A plan as a short indented text, one node per line: for doctests, test fixtures and
reading a plan by eye.

The dataclass ``repr`` of a plan states everything (every column's kind and nullability)
and fits no screen; :func:`describe` names columns instead of numbering them, so that the
rewrites of the optimizer's rules (rivulet/plan/optimize.py) can be shown before and after
in a few lines. A column is written by the name its input gives it, with ``#i`` after
the name when the input has two columns of that name (a join of two ``id`` columns).

>>> from rivulet.plan.catalog import Catalog
>>> catalog = Catalog.from_sql(
...     "CREATE TABLE s (id INT PRIMARY KEY, title TEXT, author INT)",
...     "CREATE TABLE c (id INT PRIMARY KEY, sid INT, body TEXT)")
>>> print(describe(catalog.plan(
...     "SELECT s.title, COUNT(*) AS n FROM s JOIN c ON c.sid = s.id "
...     "WHERE s.author = ? AND c.body IS NOT NULL GROUP BY s.title")))
Project title, n := count(*), author
  Aggregate by title, author: count(*)
    Project title, author
      Filter body IS NOT NULL
        Project id#3, title, author, id#0, sid, body
          Join inner on sid = id#3
            Scan c
            Scan s
"""

from __future__ import annotations

from rivulet.plan import ir

#: Function-library names written as infix operators.
INFIX = {
    "eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "null_safe_eq": "<=>",
    "and_": "AND", "or_": "OR", "xor": "XOR", "add": "+", "sub": "-", "mul": "*", "div": "/",
    "int_div": "DIV", "mod": "%", "like": "LIKE",
}


def describe(plan: ir.ViewPlan | ir.Node) -> str:
    """The plan (a view's root, or any node) as indented lines, inputs below their
    reader."""
    root = plan.root if isinstance(plan, ir.ViewPlan) else plan
    lines: list[str] = []
    _node(root, 0, lines)
    return "\n".join(lines)


def _node(node: ir.Node, depth: int, lines: list[str]) -> None:
    lines.append("  " * depth + _line(node))
    for child in node.inputs():
        _node(child, depth + 1, lines)


def _line(node: ir.Node) -> str:
    if isinstance(node, ir.Scan):
        return f"Scan {node.table}" + (f"@{node.version}" if node.version else "")
    if isinstance(node, ir.OneRow):
        return "One row (no FROM)"
    below = _names(node.inputs()[0].columns) if node.inputs() else []
    if isinstance(node, ir.Filter):
        return f"Filter {expression(node.predicate, below)}"
    if isinstance(node, ir.Project):
        items = []
        source = node.input.columns
        for e, out in zip(node.exprs, node.columns):
            text = expression(e, below)
            copied = isinstance(e, ir.Col) and source[e.index].name == out.name
            items.append(text if copied else f"{out.name} := {text}")
        view = f" (view {node.view})" if node.view else ""
        return f"Project{view} " + (", ".join(items) or "(no columns)")
    if isinstance(node, ir.Join):
        row = _names(node.columns)
        width = node.left.arity
        on = [f"{row[a]} = {row[width + b]}" for a, b in zip(node.left_keys, node.right_keys)]
        if node.residual is not None:
            on.append(expression(node.residual, row))
        if not on:
            return f"Join {node.kind} (every pair)"
        return f"Join {node.kind} on " + " AND ".join(on)
    if isinstance(node, ir.Aggregate):
        aggs = ", ".join(_aggregate(a, below) for a in node.aggs)
        groups = ", ".join(below[g] for g in node.group_by)
        return f"Aggregate by {groups}: {aggs}" if groups else f"Aggregate: {aggs}"
    if isinstance(node, ir.RangeAggregate):
        aggs = ", ".join(_aggregate(a, below) for a in node.aggs)
        groups = ", ".join(below[g] for g in node.group_by)
        bounds = " AND ".join(f"{below[column]} {op} ?" for column, op in node.bounded)
        return (f"RangeAggregate by {groups}: {aggs}" if groups
                else f"RangeAggregate: {aggs}") + f" where {bounds}"
    if isinstance(node, ir.TopK):
        order = ", ".join(below[k.column] + (" DESC" if k.descending else "")
                          for k in node.order)
        by = f" by {', '.join(below[g] for g in node.group_by)}" if node.group_by else ""
        skip = f" skip {node.skip}" if node.skip else ""
        return f"TopK {node.k}{skip}{by}" + (f" order {order}" if order else "")
    if isinstance(node, ir.SetOp):
        return f"SetOp {node.op.upper()}{' ALL' if node.all else ''}"
    return type(node).__name__  # Distinct, Union


def _aggregate(call: ir.AggCall, names: list[str]) -> str:
    arg = "*" if call.arg is None else names[call.arg]
    concat = call.concat
    if concat is not None:
        order = ", ".join(names[k.column] + (" DESC" if k.descending else "")
                          for k in concat.order)
        arg += (f" ORDER BY {order}" if order else "") + f" SEPARATOR {concat.separator!r}"
    return f"{call.fn}({'DISTINCT ' if call.distinct else ''}{arg})"


def _names(columns: tuple[ir.ColumnInfo, ...]) -> list[str]:
    """Each column's name, with its position when the name is not unique (or empty)."""
    seen: dict[str, int] = {}
    for c in columns:
        seen[c.name] = seen.get(c.name, 0) + 1
    return [c.name if c.name and seen[c.name] == 1 else f"{c.name}#{i}"
            for i, c in enumerate(columns)]


def expression(e: ir.Expr, names: list[str]) -> str:
    """``e`` as SQL-like text, its columns named by ``names`` (the input's columns)."""
    if isinstance(e, ir.Col):
        return names[e.index] if e.index < len(names) else f"#{e.index}"
    if isinstance(e, ir.Lit):
        if e.value is None:
            return "NULL"
        if isinstance(e.value, bool) or e.kind == "bool":
            return "TRUE" if e.value else "FALSE"
        return repr(e.value) if isinstance(e.value, str) else str(e.value)
    if isinstance(e, ir.Param):
        return "?"
    if isinstance(e, ir.Case):
        whens = " ".join(f"WHEN {expression(c, names)} THEN {expression(v, names)}"
                         for c, v in e.whens)
        default = f" ELSE {expression(e.default, names)}" if e.default is not None else ""
        return f"CASE {whens}{default} END"
    if isinstance(e, ir.Call):
        args = [_operand(a, names) for a in e.args]
        if e.fn in INFIX and len(args) == 2:
            return f"{args[0]} {INFIX[e.fn]} {args[1]}"
        if e.fn == "is_null":
            return f"{args[0]} IS NULL"
        if e.fn == "is_not_null":
            return f"{args[0]} IS NOT NULL"
        if e.fn == "not_":
            return f"NOT {args[0]}"
        if e.fn == "neg":
            return f"-{args[0]}"
        return f"{e.fn}({', '.join(expression(a, names) for a in e.args)})"
    return type(e).__name__


def _operand(e: ir.Expr, names: list[str]) -> str:
    """An operator's argument, in parentheses when it is itself an operation."""
    text = expression(e, names)
    operation = isinstance(e, ir.Call) and (
        e.fn in INFIX or e.fn in ("is_null", "is_not_null", "not_"))
    return f"({text})" if operation else text
