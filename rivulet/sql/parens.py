"""Parentheses that change nothing, taken out of a parsed statement.

Why this module exists: ORMs and query builders put parentheses around every condition and
join (Django writes ``INNER JOIN b ON (a.id = b.a_id) WHERE (a.x = %s AND (a.y = %s OR
a.z = %s))``; others ``FROM ((a INNER JOIN b ON ...))``). sqlglot keeps each pair as a node
(``exp.Paren``, or an alias-less ``exp.Subquery`` around a table), and the planner, which
looks for ``col = ?`` conjuncts and join equalities by the node's type, would refuse the
parenthesized form of a statement it takes without them. Parentheses must never change what
is accepted or answered, so every statement parsed (:func:`rivulet.sql.parse.parse_statements`)
comes out of :func:`drop_redundant_parens`, and nothing downstream meets them.

Only parentheses whose removal cannot change the meaning, even once the tree is written back
to text (sqlglot writes no parentheses of its own: ``(a + b) * c`` without its node would
read ``a + b * c``), are removed: around a whole condition, around an operand of ``AND`` /
``OR`` that binds at least as tightly, around a single name or constant, and around the
tables of a FROM clause. A select-list item keeps its parentheses (they are part of the
column's name).
"""

from __future__ import annotations

from typing import TypeGuard

from sqlglot import exp

#: Nodes that are one term: parentheses around them group nothing.
_ATOMS = (exp.Column, exp.Literal, exp.Placeholder, exp.Null, exp.Boolean, exp.Paren)
#: Nodes that bind more tightly than AND and OR: comparisons, IN, BETWEEN, IS, LIKE.
_PREDICATES = (exp.Predicate, exp.Not)


def drop_redundant_parens(statement: exp.Expr) -> exp.Expr:
    """``statement`` without its redundant parentheses (changed in place; returned)."""
    for select in list(statement.find_all(exp.Select)):
        _flatten_from(select)
    changed = True
    while changed:  # ``((a = 1))``: the inner pair is redundant once the outer one is gone
        changed = False
        for paren in list(statement.find_all(exp.Paren)):
            if _redundant(paren):
                paren.replace(paren.this)
                changed = True
    return statement


def _redundant(paren: exp.Paren) -> bool:
    parent, inner = paren.parent, paren.this
    if parent is None or inner is None:
        return False
    if isinstance(parent, (exp.Where, exp.Having)):
        return True
    if isinstance(parent, exp.Join) and paren.arg_key == "on":
        return True
    if isinstance(parent, exp.And):
        return isinstance(inner, (exp.And, *_PREDICATES, *_ATOMS))
    if isinstance(parent, exp.Or):
        return isinstance(inner, (exp.Or, exp.And, *_PREDICATES, *_ATOMS))
    if isinstance(inner, _ATOMS):
        return not isinstance(parent, exp.Select)  # (a select item's text is its name)
    return False


def _join_group(item: exp.Expr | None) -> tuple[exp.Table, list[exp.Join]] | None:
    """The first table and the joins after it of a group in alias-less parentheses,
    ``((t1 JOIN t2 ON ...) JOIN t3 ON ...)`` (sqlglot nests a Subquery per pair, each
    holding the joins written after its closing parenthesis)."""
    levels: list[exp.Expr] = []
    while _bare(item):
        levels.append(item)
        item = item.this
    if not levels or not isinstance(item, exp.Table):
        return None
    nested = [item, *reversed(levels)]
    if any(_comma_then_join(level.args.get("joins") or []) for level in nested):
        return None  # (MySQL's precedence inside the group: the planner refuses it)
    joins: list[exp.Join] = []
    for level in nested:
        for join in level.args.get("joins") or []:
            if is_comma(join):  # ``(a, b) JOIN c ON c.x = a.x``: ``a CROSS JOIN b JOIN c``
                join.set("kind", "CROSS")
            joins.append(join)
        level.set("joins", None)
    return item, joins


def is_comma(join: exp.Join) -> bool:
    """Whether ``join`` was written with a comma (``FROM a, b``), which binds less tightly
    than JOIN: the parser reads ``JOIN b`` without ON as ``CROSS JOIN b``
    (:meth:`rivulet.sql.parse._Parser._parse_join`), so a join with no kind, side,
    method or condition is a comma."""
    return not any(join.args.get(k) for k in ("kind", "side", "method", "on", "using"))


def _comma_then_join(joins: list[exp.Join]) -> bool:
    """Whether a comma comes before a JOIN in one parenthesized list (``(a, b JOIN c ON
    ...)``), whose JOIN then sees only the tables after the comma: flattened with the
    joins around it, it would see them all."""
    seen_comma = False
    for join in joins:
        if is_comma(join):
            seen_comma = True
        elif seen_comma:
            return True
    return False


def _flatten_from(select: exp.Select) -> None:
    """``FROM (t1 JOIN t2 ON ...) JOIN t3 ON ...`` as ``FROM t1 JOIN t2 ON ... JOIN t3 ON
    ...`` (joins associate to the left: the same), and ``JOIN (t2) ON`` as ``JOIN t2 ON``.
    A parenthesized group of joins on the right of a JOIN stays (the planner refuses it)."""
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is not None:
        group = _join_group(from_.this)
        if group is not None:
            table, inner_joins = group
            from_.set("this", table)
            joins = inner_joins + list(select.args.get("joins") or [])
            select.set("joins", joins or None)
    for join in select.args.get("joins") or []:
        if _single_table(join.this):
            group = _join_group(join.this)
            assert group is not None  # (checked)
            join.set("this", group[0])


def _single_table(item: exp.Expr | None) -> bool:
    """Whether ``item`` is one table in alias-less parentheses, ``(t2)``."""
    levels = 0
    while _bare(item):
        if item.args.get("joins"):
            return False
        levels += 1
        item = item.this
    return levels > 0 and isinstance(item, exp.Table) and not item.args.get("joins")


def _bare(item: exp.Expr | None) -> TypeGuard[exp.Subquery]:
    """Whether ``item`` is parentheses and nothing else (no alias, no LIMIT...)."""
    return isinstance(item, exp.Subquery) and {k for k, v in item.args.items() if v} <= {
        "this", "joins"}


def unparen(node: exp.Expr) -> exp.Expr:
    """``node`` without the parentheses around it."""
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def terms(node: exp.Expr, chain: type[exp.And] | type[exp.Or]) -> list[exp.Expr]:
    """The terms of an AND (or OR) chain, parentheses around any of them dropped: the
    conditions a planner looks at one by one."""
    node = unparen(node)
    if isinstance(node, chain):
        return terms(node.this, chain) + terms(node.expression, chain)
    return [node]


def conjuncts(node: exp.Expr) -> list[exp.Expr]:
    """The terms of a conjunction (``a AND (b AND c)``: a, b, c)."""
    return terms(node, exp.And)


def disjuncts(node: exp.Expr) -> list[exp.Expr]:
    """The terms of a disjunction (``a OR (b OR c)``: a, b, c)."""
    return terms(node, exp.Or)
