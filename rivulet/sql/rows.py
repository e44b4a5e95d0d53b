"""Row constructors in comparisons, written out as the comparisons of their columns.

Why this module exists: ORMs write ``WHERE (a, b) IN ((1, 2), (3, 4))`` for composite keys
and ``(a, b) = (x, y)`` / ``(a, b) > (x, y)`` for keyset pagination. MySQL compares rows
column by column (``Arg_comparator::compare_row``, ``cmp_item_row``), and its answer,
NULLs included, is exactly that of the conjunctions and disjunctions of the columns'
comparisons under three-valued logic:

* ``(a, b) = (x, y)`` is ``a = x AND b = y`` (a NULL column makes it NULL unless another
  differs: ``(1, NULL) = (2, NULL)`` is 0); ``<=>`` likewise with ``<=>``;
* ``(a, b) <> (x, y)`` is ``a <> x OR b <> y``;
* ``(a, b) < (x, y)`` is ``a < x OR (a = x AND b < y)`` (MySQL stops at the first column
  that differs or is NULL, and a NULL there makes it NULL: so does the disjunction);
* ``(a, b) IN ((x, y), ...)`` is the disjunction of the rows' equalities (NULL when no row
  matches and one might have).

Written out here, right after parsing, a row comparison is plain SQL to everything
downstream: the planner keys a view on ``(a, b) = (?, ?)`` as on ``a = ? AND b = ?``, and
both back ends compute it with the comparisons they have. A column the expansion repeats
(the left row of ``<`` or of an ``IN`` list of several rows) must not hold a ``?``: its one
parameter would become several, so that form is refused by name.
"""

from __future__ import annotations

from sqlglot import exp

from rivulet.errors import OperandColumnsError, UnsupportedSqlError

#: The orderings of rows, and the strict ordering that decides at a column before the last
#: (``(a, b) <= (x, y)`` is ``a < x OR (a = x AND b <= y)``).
_ORDERINGS: dict[type, type] = {exp.LT: exp.LT, exp.LTE: exp.LT, exp.GT: exp.GT,
                                exp.GTE: exp.GT}


def expand_rows(statement: exp.Expr) -> exp.Expr:
    """``statement`` with each comparison of rows written out (changed in place; returned).
    Raises :class:`OperandColumnsError` (MySQL's 1241) for rows of different widths and a
    row compared with a single value."""
    kinds = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.In)
    for node in list(statement.find_all(*kinds)):
        if isinstance(node, exp.In):
            replacement = _in(node)
        else:
            replacement = _comparison(node)
        if replacement is not None:
            node.replace(replacement)
    return statement


def _row(node: exp.Expr | None) -> exp.Tuple | None:
    while isinstance(node, exp.Paren):
        node = node.this
    return node if isinstance(node, exp.Tuple) else None


def _width(node: exp.Expr) -> int:
    row = _row(node)
    return 1 if row is None else len(row.expressions)


def _comparison(node: exp.Expr) -> exp.Expr | None:
    left, right = node.this, node.expression
    if _row(left) is None and _row(right) is None:
        return None
    if any(isinstance(side, (exp.Subquery, exp.Select, exp.Any, exp.All))
           for side in (left, right)):
        return None  # (a row subquery, or = ANY (SELECT a, b ...): left to the planner)
    return exp.Paren(this=_compare(type(node), left, right, node))


def _compare(op: type, left: exp.Expr, right: exp.Expr, at: exp.Expr) -> exp.Expr:
    """``left op right``, rows written out column by column."""
    lrow, rrow = _row(left), _row(right)
    if lrow is None and rrow is None:
        return op(this=left, expression=right)
    if _width(left) != _width(right):
        raise _operand_error(at, _width(left))
    assert lrow is not None and rrow is not None
    pairs = list(zip(lrow.expressions, rrow.expressions))
    if op in (exp.EQ, exp.NullSafeEQ):
        return _join(exp.And, [_compare(op, a, b, at) for a, b in pairs])
    if op is exp.NEQ:
        return _join(exp.Or, [_compare(op, a, b, at) for a, b in pairs])
    _no_repeated_parameter(left, right, at, "a row compared with <, <=, > or >=")
    strict = _ORDERINGS[op]
    # a1 < b1 OR (a1 = b1 AND (a2 < b2 OR (a2 = b2 AND ... an <= bn)))
    result = _compare(op, *pairs[-1], at)
    for a, b in reversed(pairs[:-1]):
        result = exp.or_(_compare(strict, a, b, at),
                         exp.and_(_compare(exp.EQ, a, b, at), exp.Paren(this=result)))
    return result


def _in(node: exp.In) -> exp.Expr | None:
    if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
        return None
    left = node.this
    width = _width(left)
    items = node.expressions
    if width == 1:
        if any(_row(item) is not None for item in items):
            raise _operand_error(node, 1)
        return None
    for item in items:
        if _width(item) != width:
            raise _operand_error(node, width)
    if len(items) > 1:
        _no_repeated_parameter(node, None, node, "a row IN a list of several rows")
        _one_class_per_column(node, [_row(item) for item in items])  # type: ignore[misc]
    rows = [_compare(exp.EQ, left.copy(), item, node) for item in items]
    return exp.Paren(this=_join(exp.Or, [exp.Paren(this=r) for r in rows]))


def _one_class_per_column(node: exp.In, rows: list[exp.Tuple]) -> None:
    """Refuse a list of rows whose values in one column are not constants of one class.

    MariaDB compares each column of a row ``IN`` as the aggregate of all the list's values
    in that column (``(2, 'y') IN ((1, 1), ('2', 'x'))`` is 1: the second column is
    compared as DOUBLEs, 'y' and 'x' both 0), not pair by pair as ``=`` does and as the
    written-out disjunction would; MySQL's rule is not MariaDB's in every case. Where every
    value of a column is a constant of one class (text; exact numbers; DOUBLEs; NULL goes
    with any), the two readings agree."""
    for i, column in enumerate(zip(*(r.expressions for r in rows)), start=1):
        classes = {_constant_class(v) for v in column} - {"null"}
        if len(classes) > 1 or None in classes:
            what = ("a value that is not a constant" if None in classes
                    else "text and numbers" if "text" in classes else "exact numbers and DOUBLEs")
            line, col = _position(node)
            raise UnsupportedSqlError(
                f"unsupported row IN list whose column {i} holds {what}: MySQL compares "
                "each column as the aggregate type of all its values", line=line, col=col)


def _constant_class(node: exp.Expr) -> str | None:
    """A constant's class for :func:`_one_class_per_column` (None: not a constant)."""
    while isinstance(node, (exp.Paren, exp.Neg)):
        node = node.this
    if isinstance(node, exp.Null):
        return "null"
    if isinstance(node, exp.Literal):
        if node.is_string:
            return "text"
        return "double" if "e" in node.this.lower() else "exact"
    return None


def _join(op: type, terms: list[exp.Expr]) -> exp.Expr:
    result = terms[0]
    for term in terms[1:]:
        result = op(this=result, expression=term)
    return result


def _no_repeated_parameter(left: exp.Expr, right: exp.Expr | None, at: exp.Expr,
                           what: str) -> None:
    """Refuse a ``?`` among the columns the expansion repeats (and in a list of rows,
    whose columns' types decide how they compare: a parameter's is known only when read)."""
    repeated = [left] if right is None else [left, right]
    if any(isinstance(n, exp.Placeholder) for side in repeated for n in side.walk()):
        line, col = _position(at)
        raise UnsupportedSqlError(f"unsupported ? parameter in {what}: write the "
                                  "comparisons of the columns out", line=line, col=col)


def _operand_error(at: exp.Expr, width: int) -> OperandColumnsError:
    line, col = _position(at)
    return OperandColumnsError(f"Operand should contain {width} column(s)", line=line, col=col)


def _position(node: exp.Expr) -> tuple[int | None, int | None]:
    """Line and column of the first token under ``node`` that sqlglot located (as
    :func:`rivulet.sql.parse.position`, which imports this module)."""
    for sub in node.walk():
        meta = getattr(sub, "meta", None) or {}
        if "line" in meta:
            return meta["line"], meta["col"]
    return None, None
