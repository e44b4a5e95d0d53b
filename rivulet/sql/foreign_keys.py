"""``FOREIGN KEY`` clauses (``CREATE TABLE`` and ``ALTER TABLE ... ADD``) to
:class:`~rivulet.values.schema.ForeignKey`: the table constraint ``[CONSTRAINT name]
FOREIGN KEY [name] (cols) REFERENCES parent (cols) [ON DELETE ...] [ON UPDATE ...]`` and a
column's inline ``REFERENCES parent (col)``, which MariaDB 10.11 (since 10.5) enforces as a
FOREIGN KEY of that column (MySQL 8 ignores it; MariaDB is rivulet's oracle).

What needs the parent table (it exists, its columns have an index, types agree) is checked
when the table is made (rivulet/storage/foreign_keys.py, :func:`check_references`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from sqlglot import exp

from rivulet.errors import ForeignKeyFormError, ForeignKeyWidthError, KeyColumnError
from rivulet.sql.parse import error_at, unsupported
from rivulet.sql.schemas import split_name
from rivulet.values.schema import ForeignKey, ReferentialAction

#: The actions InnoDB carries out, by their words.
_ACTIONS = {a.value: a for a in ReferentialAction}


def is_foreign_key(item: exp.Expr) -> bool:
    """Whether a table element (or an ``ALTER TABLE ... ADD`` item) declares a FOREIGN KEY."""
    if isinstance(item, exp.Constraint):
        return len(item.expressions) == 1 and isinstance(item.expressions[0], exp.ForeignKey)
    return isinstance(item, exp.ForeignKey)


def declared_foreign_key(item: exp.Expr) -> tuple[exp.ForeignKey, str | None]:
    """A FOREIGN KEY table element: the clause and the name given it (``CONSTRAINT name``,
    else ``FOREIGN KEY name``), if any."""
    if isinstance(item, exp.Constraint):
        clause = item.expressions[0]
        assert isinstance(clause, exp.ForeignKey)
        return clause, item.name
    assert isinstance(item, exp.ForeignKey)
    given = item.this.name if isinstance(item.this, exp.Identifier) else None
    return item, given


def inline_references(item: exp.ColumnDef) -> exp.Reference | None:
    """A column definition's ``REFERENCES parent (col)``, if it has one."""
    for constraint in item.args.get("constraints") or []:
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.Reference):
            return kind
    return None


def foreign_key(node: exp.Expr, names: list[str], reference: exp.Reference, given: str | None,
                by_name: dict[str, int], table: str, taken: Iterable[str]) -> ForeignKey:
    """The FOREIGN KEY of ``table`` over its columns ``names`` (positions in ``by_name``)
    that ``reference`` declares; named ``given``, else as InnoDB names it:
    ``<table>_ibfk_<n>``, n one above the highest such number among ``taken``."""
    try:
        columns = tuple(by_name[n.lower()] for n in names)
    except KeyError as missing:
        raise error_at(node, f"Key column {missing} doesn't exist in table",
                       KeyColumnError) from None
    target = reference.this
    if not isinstance(target, exp.Schema) or not isinstance(target.this, exp.Table):
        raise error_at(node, "REFERENCES names a table and its columns: REFERENCES t (col)")
    if target.this.args.get("db") is not None:
        raise unsupported(node, "FOREIGN KEY to a table of a system schema")
    parent_columns = tuple(e.name for e in target.expressions)
    if len(parent_columns) != len(columns):
        raise error_at(node, f"Incorrect foreign key definition: FOREIGN KEY "
                             f"({', '.join(names)}) names {len(columns)} column(s) and "
                             f"REFERENCES {len(parent_columns)}", ForeignKeyWidthError)
    on_delete = on_update = ReferentialAction.RESTRICT
    for option in reference.args.get("options") or []:
        words = " ".join(str(option).upper().split())
        if words.startswith("MATCH"):
            raise unsupported(node, f"FOREIGN KEY {words}")
        for event in ("ON DELETE ", "ON UPDATE "):
            if words.startswith(event):
                action = _ACTIONS.get(words[len(event):])
                if action is None:
                    raise unsupported(node, f"{words} (InnoDB does not carry out SET "
                                            "DEFAULT; rivulet does RESTRICT, NO ACTION, "
                                            "CASCADE and SET NULL)")
                if event == "ON DELETE ":
                    on_delete = action
                else:
                    on_update = action
    taken = list(taken)
    name = given if given is not None else _generated_name(table, taken)
    if name.lower() in (t.lower() for t in taken):
        raise error_at(node, f"Can't create table `{table}` (errno: 121 \"Duplicate key on "
                             f"write or update\": a FOREIGN KEY named {name!r} exists)",
                       ForeignKeyFormError)
    return ForeignKey(name, columns, target.this.name, parent_columns, on_delete, on_update)


def _generated_name(table: str, taken: Iterable[str]) -> str:
    table = split_name(table)[1]  # (InnoDB's names do not hold the database's)
    prefix = f"{table.lower()}_ibfk_"
    numbers = [int(n[len(prefix):]) for n in (t.lower() for t in taken)
               if n.startswith(prefix) and n[len(prefix):].isdigit()]
    return f"{table}_ibfk_{max(numbers, default=0) + 1}"


_SET_CHECKS = re.compile(
    r"\s*SET\s+(?:(?:SESSION|LOCAL)\s+|@@(?:SESSION\.|LOCAL\.)?)?`?foreign_key_checks`?\s*"
    r"(?::=|=)\s*(?P<value>ON|OFF|1|0|TRUE|FALSE|'ON'|'OFF')\s*;?\s*$", re.IGNORECASE)


def foreign_key_checks_setting(sql: str) -> bool | None:
    """The value of ``SET [SESSION] foreign_key_checks = 0|1`` (``@@foreign_key_checks``,
    ON/OFF too), or None if ``sql`` is not that statement."""
    found = _SET_CHECKS.match(sql)
    if found is None:
        return None
    return found["value"].strip("'").upper() in ("ON", "1", "TRUE")
