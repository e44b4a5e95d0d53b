"""CHECK constraints compiled: each one's condition made into the function of a table's row
that says whether the row breaks it (:attr:`rivulet.values.schema.Check.refuses`).

The condition is translated and compiled as any expression over a table's row is (an
UPDATE's ``SET``: :func:`rivulet.plan.expressions.translate_condition`,
:func:`rivulet.dataflow.compile.value_function`), so a check means what the same condition
means in a ``WHERE``. It is evaluated as a write's expressions are, in MySQL's strict mode:
a conversion MySQL reports as truncating fails the write (1292), so does a division by
zero (1365), as in MySQL and MariaDB. A row breaks the check when the condition is FALSE;
NULL (unknown) passes.

Each version of a table compiles its checks again (:func:`compiled`): ALTER TABLE moves
and renames columns under them. What a condition may not hold, as MySQL refuses it
(subqueries, parameters, variables), or what rivulet cannot evaluate exactly (a function
it lacks), is refused here, when the table or the constraint is made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sqlglot import exp

from rivulet.dataflow.compile import value_function
from rivulet.errors import InvalidDefaultError, SchemaError, SqlError, UnsupportedSqlError
from rivulet.plan.expressions import translate, translate_condition
from rivulet.plan.scope import TableScope
from rivulet.sql.ddl import check_columns, check_condition
from rivulet.sql.parse import parse_one
from rivulet.values.conversions import strict_mode
from rivulet.values.logic import truth
from rivulet.values.schema import Check, Column, Row, TableSchema, coerce_value

#: What a CHECK condition may not hold (MySQL: 1970 for subqueries, 1901 for the rest).
_REFUSED: dict[type[exp.Expr], str] = {
    exp.Subquery: "subquery", exp.Select: "subquery", exp.Exists: "subquery",
    exp.Placeholder: "parameter", exp.Parameter: "variable", exp.SessionParameter: "variable",
}


def compiled(schema: TableSchema) -> TableSchema:
    """``schema`` with each of its CHECK constraints compiled against its columns, and
    the value of each expression default (``DEFAULT (3 + 5)``) computed."""
    if any(c.default_expr and c.default is None for c in schema.columns):
        schema = replace(schema, columns=tuple(
            _with_default(c) if c.default_expr and c.default is None else c
            for c in schema.columns))
    if not schema.checks:
        return schema
    # (everything else kept: its FOREIGN KEYs and COMMENT were once dropped here)
    return replace(schema, checks=tuple(compiled_check(schema, c) for c in schema.checks))


def _with_default(column: Column) -> Column:
    """``column`` with the value of its expression default (a constant: see
    rivulet/sql/ddl.py's ``expression_default``), computed as a write's ``VALUES`` are (in
    strict mode) and checked against the column as a literal default is."""
    select = parse_one(f"SELECT {column.default_expr}")
    assert isinstance(select, exp.Select)  # (a text rivulet rendered)
    where = f"DEFAULT of {column.name}: "
    try:
        expr = translate(select.expressions[0], TableScope(TableSchema("", ())))
        with strict_mode():
            value = value_function(expr, [], [])(())
        return replace(column, default=coerce_value(column, value, where=where))
    except SqlError as exc:
        raise type(exc)(f"{where}{exc}") from None
    except SchemaError:  # (MySQL: 1067, as for a literal the column cannot hold)
        raise InvalidDefaultError(f"Invalid default value for '{column.name}'") from None


def compiled_check(schema: TableSchema, check: Check) -> Check:
    """``check`` with its :attr:`~Check.refuses` built for ``schema``'s rows; an error
    naming the constraint if its condition cannot be evaluated exactly as MySQL does."""
    auto = schema.auto_column
    if auto is not None and schema.columns[auto].name.lower() in check_columns(check):
        # (a row holds 0 there until the commit numbers it: MySQL 8 refuses it too, 3818)
        raise UnsupportedSqlError(f"CHECK constraint '{check.name}' reads the "
                                  f"AUTO_INCREMENT column {schema.columns[auto].name!r}")
    condition = check_condition(check)
    for node in condition.walk():
        refused = _REFUSED.get(type(node))
        if refused is not None:
            raise UnsupportedSqlError(f"unsupported {refused} in CHECK constraint "
                                      f"'{check.name}': {check.condition!r}")
    try:
        expr = translate_condition(condition, TableScope(schema))
        value = value_function(expr, [c.kind for c in schema.columns],
                               [c.nullable for c in schema.columns])
    except SqlError as exc:
        raise type(exc)(f"CHECK constraint '{check.name}': {exc}") from None
    return Check(check.name, check.condition, _refuses(value))


def _refuses(value: Callable[[Row], Any]) -> Callable[[Row], bool]:
    def refuses(row: Row) -> bool:
        with strict_mode():  # a write's evaluation: a truncating conversion fails it
            return truth(value(row)) == 0

    return refuses
