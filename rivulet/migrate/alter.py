"""ALTER TABLE as a schema change: planned (and rejected) before anything changes.

A change is applied at once *logically* and costs O(1) in storage: columns are added and
renamed with SQLite's constant-time ALTER, a dropped column is renamed out of sight, and a
column whose type changes gets a new stored column while its old values stay where they
are, to be converted row by row later (BullFrog, part III of the cloud-architectures
paper): by the write that next touches the row, or by the background converter
(rivulet/storage/convert.py). Reads convert unconverted rows on the fly, so every reader
sees the new type at once.

Views planned before the change keep reading the table version they were planned on (its
``ir.Scan.version``): rows of the newest version are mapped to an older version's columns
by a *layout* (see :func:`compose`). Dropping a column, or changing the values of one, that
a view reads would change that view's answers under it, so it is refused with the views'
names, as PostgreSQL does; changes of a type that keep every value (a wider integer, a
longer VARCHAR) are allowed under views.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from rivulet.dataflow.checks import compiled
from rivulet.errors import IndexNeededError, SqlError, UnknownColumnError, UnknownKeyError
from rivulet.sql.ddl import (
    DeclaredCheck,
    check_columns,
    check_fulltext_columns,
    clock_default,
    column_checks,
    column_definition,
    declared_check,
    declared_key,
    declares_unique,
    default_value,
    key_name,
    key_positions,
    new_check,
    renamed_check,
)
from rivulet.sql.foreign_keys import (
    declared_foreign_key,
    foreign_key,
    inline_references,
    is_foreign_key,
)
from rivulet.sql.parse import error_at, unsupported
from rivulet.storage.base import AddIndex, AddStored, DropIndex, RenameStored
from rivulet.values import CASTS, cast_time
from rivulet.values.enumerations import enum_values, member_for
from rivulet.values.schema import (
    BOOL,
    BYTES,
    DATE,
    DATETIME,
    DECIMAL,
    ENUM,
    FLOAT,
    FLOAT_MAX,
    INT,
    STR,
    TIME,
    Check,
    Column,
    Conversion,
    ForeignKey,
    Key,
    KeyKind,
    TableSchema,
    decimal_limit,
    round_fraction,
    single,
)

#: Positions of an older table version's columns in the newest version's rows (None: a
#: column dropped since, read as NULL; no view of that version reads it).
Layout = tuple[int | None, ...]

HIDDEN_PREFIX = "_rivulet_"


Step = AddStored | RenameStored | AddIndex | DropIndex


@dataclass
class _KeyWork:
    """A key as the actions of one ALTER change it: its columns by lower-case name."""

    name: str
    columns: list[str]
    kind: KeyKind

    @property
    def unique(self) -> bool:
        return self.kind.unique

    @property
    def lookup(self) -> bool:
        """Whether storage keeps an index for it (:attr:`KeyKind.lookup`)."""
        return self.kind.lookup


@dataclass(frozen=True)
class SchemaChange:
    old: TableSchema
    new: TableSchema
    #: Each column of ``old``: its position in ``new``, or None if dropped.
    moved: Layout
    #: What storage does, in order.
    steps: tuple[Step, ...]
    #: Positions in ``old`` of the columns whose values change (dropped, or converted).
    changed: frozenset[int]
    #: The CHECK constraints the change adds, which the rows stored must pass.
    added_checks: tuple[Check, ...] = ()


def plan_alter(schema: TableSchema, alter: exp.Alter) -> SchemaChange:
    """The change ``alter`` makes to ``schema``, or a SqlError naming what is wrong."""
    if schema.converting:
        busy = ", ".join(schema.columns[i].name for i in schema.converting)
        raise SqlError(f"table {schema.name!r}: column(s) {busy} are still being converted "
                       "to their new type; alter the table again when that has finished")
    work = _Work(schema, schema.version + 1)
    for number, action in enumerate(alter.args.get("actions") or []):
        work.apply(number, action)
    for option in alter.args.get("options") or []:
        if isinstance(option, exp.SchemaCommentProperty):  # ALTER TABLE t COMMENT = 'x'
            work.comment = option.this.name
    return work.change()


def compose(layout: Layout, moved: Layout) -> Layout:
    """An older version's layout after one more change."""
    return tuple(None if p is None else moved[p] for p in layout)


def identity(schema: TableSchema) -> Layout:
    return tuple(range(len(schema.columns)))


class _Work:
    """The columns of the table as the actions of one ALTER change them, in order."""

    def __init__(self, schema: TableSchema, version: int) -> None:
        self.schema = schema
        self.version = version
        #: (column, its position in the old schema or None if added).
        self.columns: list[tuple[Column, int | None]] = [
            (c, i) for i, c in enumerate(schema.columns)]
        self.steps: list[Step] = []
        self.changed: set[int] = set()
        self.comment = schema.comment
        self.primary_key = [schema.columns[i].name.lower() for i in schema.primary_key]
        self.keys = [_KeyWork(k.name, [schema.columns[i].name.lower() for i in k.columns],
                              k.kind) for k in schema.keys]
        self.checks: list[Check] = list(schema.checks)
        self.added_checks: list[str] = []
        #: The FOREIGN KEYs, each with its columns' names (lower-case) as they are now.
        self.foreign_keys = [(fk, [schema.columns[i].name.lower() for i in fk.columns])
                             for fk in schema.foreign_keys]

    def apply(self, number: int, action: exp.Expr) -> None:
        kind = (action.args.get("kind") or "").upper() if isinstance(action, exp.Drop) else ""
        if isinstance(action, exp.ColumnDef):
            self._add(action)
        elif kind == "COLUMN":
            for column in action.args.get("tables") or []:
                self._drop(number, column, bool(action.args.get("exists")))
        elif isinstance(action, exp.AddConstraint):
            for item in action.expressions:
                check = declared_check(item)
                if check is not None:
                    self._add_check(check)
                elif is_foreign_key(item):
                    self._add_foreign_key(item)
                else:
                    self._add_key(item)
        elif kind == "FOREIGN KEY":
            for fk in action.args.get("tables") or []:
                self._drop_foreign_key(fk, bool(action.args.get("exists")))
        elif kind == "INDEX":
            for key in action.args.get("tables") or []:
                self._drop_key(key, bool(action.args.get("exists")))
        elif kind in ("CHECK", "CONSTRAINT"):
            for name in action.args.get("tables") or []:
                self._drop_constraint(name, kind, bool(action.args.get("exists")))
        elif isinstance(action, exp.AlterRename):
            raise unsupported(action, "ALTER TABLE action RENAME TO beside other actions "
                                      "(rename the table in an ALTER TABLE of its own, or "
                                      "by RENAME TABLE)")
        elif isinstance(action, exp.RenameColumn):
            self._rename(action.this, action.args["to"].name)
        elif isinstance(action, exp.ModifyColumn):
            self._modify(number, action)
        elif isinstance(action, exp.AlterColumn) and not action.args.get("dtype"):
            self._alter_default(action)
        else:
            raise unsupported(action, "ALTER TABLE action")

    # ..................................................................... actions

    def _add(self, node: exp.ColumnDef) -> None:
        column, is_pk = column_definition(node)
        if is_pk:
            raise unsupported(node, "ADD COLUMN ... PRIMARY KEY (the primary key is fixed)")
        if column.auto_increment:
            raise unsupported(node, "ADD COLUMN ... AUTO_INCREMENT (only a primary key column "
                                    "can be AUTO_INCREMENT)")
        self._check_new_name(node, column.name)
        if column.default_now is not None:
            raise unsupported(node, "ADD COLUMN ... DEFAULT CURRENT_TIMESTAMP (MySQL fills the "
                                    "rows already stored with the ALTER's time, which a "
                                    "lazy ALTER replayed at recovery cannot give them; add "
                                    "it without the DEFAULT, UPDATE it, then MODIFY it)")
        if column.default_expr:
            raise unsupported(node, "ADD COLUMN ... DEFAULT (expression) (write its value)")
        if column.json and column.default is None and not column.nullable:
            raise unsupported(node, "ADD COLUMN ... JSON NOT NULL without a DEFAULT (the "
                                    "rows stored would hold '', which is no JSON)")
        fill = column.default if column.default is not None or column.nullable \
            else IMPLICIT_DEFAULTS[column.kind]
        self.steps.append(AddStored(column, fill))
        self.columns.insert(self._position(node), (column, None))
        if declares_unique(node):  # (rows already stored clash if they share the fill)
            self._new_key(node, None, [column.name], KeyKind.UNIQUE)
        for check in column_checks(node):  # (rows already stored must pass with the fill)
            self._add_check(check)
        reference = inline_references(node)
        if reference is not None:  # (MariaDB makes it a FOREIGN KEY, as in CREATE TABLE)
            self._new_foreign_key(node, [column.name], reference, None)

    def _add_check(self, declared: DeclaredCheck) -> None:
        """``ADD CONSTRAINT [name] CHECK (...)``, or a new column's CHECK: the rows stored
        are checked against it when the change is made (rivulet/engine/program.py)."""
        check = new_check(declared, self.schema.name, self.checks)
        self.checks.append(check)
        self.added_checks.append(check.name.lower())

    def _drop_constraint(self, node: exp.Expr, kind: str, if_exists: bool) -> None:
        """``DROP CHECK name`` (MySQL 8), ``DROP CONSTRAINT name``: a CHECK constraint, or
        for DROP CONSTRAINT a UNIQUE key or a FOREIGN KEY; 1091 if the table has none of
        that name."""
        found = next((c for c in self.checks if c.name.lower() == node.name.lower()), None)
        if found is not None:
            self.checks.remove(found)
        elif kind == "CONSTRAINT" and any(k.unique and k.name.lower() == node.name.lower()
                                          for k in self.keys):
            self._drop_key(node, if_exists)
        elif kind == "CONSTRAINT" and any(fk.name.lower() == node.name.lower()
                                          for fk, _ in self.foreign_keys):
            self._drop_foreign_key(node, if_exists)
        elif not if_exists:
            raise error_at(node, f"Can't DROP {kind} `{node.name}`; check that it exists",
                           UnknownKeyError)

    def _add_key(self, item: exp.Expr) -> None:
        """``ADD INDEX|KEY [name] (cols)``, ``ADD UNIQUE [INDEX|KEY] [name] (cols)``,
        ``ADD CONSTRAINT name UNIQUE (cols)``, ``ADD FULLTEXT [INDEX|KEY] [name] (cols)``."""
        key = declared_key(item)
        self._new_key(key.node, key.given, key.names, key.kind)

    def _add_foreign_key(self, item: exp.Expr) -> None:
        """``ADD [CONSTRAINT name] FOREIGN KEY (cols) REFERENCES ...``, with an index over
        its columns if no lookup key begins with them (as InnoDB makes one; a FULLTEXT key
        serves none). Its parent is checked,
        and the rows stored against it, when the change is made (rivulet/engine/program.py)."""
        clause, given = declared_foreign_key(item)
        self._new_foreign_key(item, [part.name for part in clause.expressions],
                              clause.args["reference"], given)

    def _new_foreign_key(self, node: exp.Expr, names: list[str], reference: exp.Reference,
                         given: str | None) -> None:
        by_name = {c.name.lower(): i for i, (c, _) in enumerate(self.columns)}
        taken = [fk.name for fk, _ in self.foreign_keys]
        fk = foreign_key(node, names, reference, given, by_name, self.schema.name, taken)
        lowered = [n.lower() for n in names]
        self.foreign_keys.append((fk, lowered))
        if self.primary_key[:len(lowered)] != lowered and not any(
                k.lookup and k.columns[:len(lowered)] == lowered for k in self.keys):
            self._new_key(node, given, names, KeyKind.PLAIN)

    def _drop_foreign_key(self, node: exp.Expr, if_exists: bool) -> None:
        """``DROP FOREIGN KEY name`` (its index stays, as in MySQL): 1091 if there is none
        of that name."""
        found = next((f for f in self.foreign_keys if f[0].name.lower() == node.name.lower()),
                     None)
        if found is None:
            if if_exists:
                return
            raise error_at(node, f"Can't DROP FOREIGN KEY `{node.name}`; check that it exists",
                           UnknownKeyError)
        self.foreign_keys.remove(found)

    def _new_key(self, node: exp.Expr, given: str | None, names: list[str],
                 kind: KeyKind) -> None:
        by_name = {c.name.lower(): i for i, (c, _) in enumerate(self.columns)}
        positions = key_positions(node, names, by_name, self.schema.name)
        if kind is KeyKind.FULLTEXT:
            check_fulltext_columns(node, [self.columns[i][0] for i in positions])
        stored = tuple(self.columns[i][0].name for i in positions)
        name = key_name(node, given, stored[0], [k.name for k in self.keys])
        key = _KeyWork(name, [n.lower() for n in stored], kind)
        self.keys.append(key)
        if key.lookup:
            self.steps.append(AddIndex(stored, key.unique))

    def _drop_key(self, node: exp.Expr, if_exists: bool) -> None:
        """``DROP INDEX name`` (``DROP KEY``): 1091 if the table has no key of that name."""
        if node.name.lower() == "primary":
            raise unsupported(node, "DROP PRIMARY KEY (the primary key is fixed)")
        found = next((k for k in self.keys if k.name.lower() == node.name.lower()), None)
        if found is None:
            if if_exists:
                return
            raise error_at(node, f"Can't DROP '{node.name}'; check that column/key exists",
                           UnknownKeyError)
        self.keys.remove(found)
        if not found.lookup:
            return  # (no index in storage, and none a FOREIGN KEY needs)
        for fk, columns in self.foreign_keys:
            width = len(columns)
            if found.columns[:width] == columns and self.primary_key[:width] != columns and \
                    not any(k.lookup and k.columns[:width] == columns for k in self.keys):
                raise error_at(node, f"Cannot drop index '{found.name}': needed in a foreign "
                                     f"key constraint ('{fk.name}')", IndexNeededError)
        self.steps.append(DropIndex(self._stored(found.columns), found.unique))

    def _stored(self, names: list[str]) -> tuple[str, ...]:
        """Columns by lower-case name, as named now (and stored)."""
        by_name = {c.name.lower(): c.name for c, _ in self.columns}
        return tuple(by_name[n] for n in names)

    def _drop(self, number: int, node: exp.Expr, if_exists: bool) -> None:
        at = self._find(node, node.name, missing_ok=if_exists)
        if at is None:
            return
        column, origin = self.columns[at]
        if column.name.lower() in self.primary_key:
            raise error_at(node, f"cannot drop primary key column {column.name!r}")
        if self._in_unique_key(column):
            raise error_at(node, f"cannot drop column {column.name!r}: it is in a UNIQUE key")
        if len(self.columns) == 1:
            raise error_at(node, f"cannot drop {column.name!r}, the only column of "
                                 f"table {self.schema.name!r}")
        self._drop_checks_of(node, column.name)
        narrowed = [k for k in self.keys if column.name.lower() in k.columns]
        for key in narrowed:  # (non-unique: MySQL takes the column out of the key)
            if key.lookup:
                self.steps.append(DropIndex(self._stored(key.columns), key.unique))
        self.steps.append(RenameStored(column.name, self._hidden(number, "dropped", column.name)))
        del self.columns[at]
        for key in narrowed:
            key.columns.remove(column.name.lower())
            if not key.columns:
                self.keys.remove(key)
            elif key.lookup:
                self.steps.append(AddIndex(self._stored(key.columns), key.unique))
        if origin is not None:
            self.changed.add(origin)

    def _rename(self, node: exp.Expr, new: str) -> None:
        at = self._find(node, node.name)
        assert at is not None
        column, origin = self.columns[at]
        if new.lower() != column.name.lower():
            self._check_new_name(node, new)
        self.steps.append(RenameStored(column.name, new))
        self._rename_key(column.name, new)
        self.checks = [renamed_check(c, column.name, new) if column.name.lower() in
                       check_columns(c) else c for c in self.checks]
        self.columns[at] = (replace(column, name=new), origin)

    def _modify(self, number: int, node: exp.ModifyColumn) -> None:
        definition = node.this
        if isinstance(definition, exp.ColumnDef) and inline_references(definition) is not None:
            raise unsupported(node, "REFERENCES in MODIFY or CHANGE COLUMN (add the FOREIGN "
                                    "KEY by ADD FOREIGN KEY)")
        source = node.args.get("rename_from")
        name = source.name if source is not None else definition.name
        if source is not None and source.name.lower() != definition.name.lower():
            self._rename(source, definition.name)
            name = definition.name
        at = self._find(definition, name)
        assert at is not None
        old, origin = self.columns[at]
        new, is_pk = column_definition(definition)
        is_key = old.name.lower() in self.primary_key
        if is_key:
            new = replace(new, nullable=False)
        elif is_pk:
            raise unsupported(node, "MODIFY ... PRIMARY KEY (the primary key is fixed)")
        if new.auto_increment and not is_key:
            raise error_at(definition, f"AUTO_INCREMENT column {old.name!r} must be part of "
                                       "the primary key")
        if new.auto_increment and any(c.auto_increment and i != at
                                      for i, (c, _) in enumerate(self.columns)):
            raise error_at(definition, "a table has at most one AUTO_INCREMENT column")
        if old.nullable and not new.nullable and not is_key:
            raise error_at(definition, f"column {old.name!r} cannot become NOT NULL: rows may "
                                       "hold NULL in it (add a NOT NULL column instead)")
        if any(k.kind is KeyKind.FULLTEXT and old.name.lower() in k.columns
               for k in self.keys):
            check_fulltext_columns(definition, [replace(new, name=old.name)])
        if declares_unique(definition) and not any(
                k.unique and k.columns == [old.name.lower()] for k in self.keys):
            self._new_key(definition, None, [old.name], KeyKind.UNIQUE)
        for check in column_checks(definition):
            self._add_check(check)
        if new.json and not old.json:
            raise unsupported(definition, f"changing column {old.name!r} to JSON (its values "
                                          "would have to be checked)")
        if keeps_values(old, new):
            self.columns[at] = (replace(new, name=old.name), origin)
            return
        if new.kind == ENUM and not (old.kind == ENUM
                                     and set(old.members) <= set(new.members)):
            raise unsupported(definition, f"changing column {old.name!r} from {old.sql_type} "
                                          f"to {new.sql_type} (a value that is no member "
                                          "would fail MySQL's ALTER; ENUM can only gain "
                                          "members or reorder them)")
        if self._in_unique_key(old):
            raise error_at(definition, f"cannot change the type of column {old.name!r} from "
                                       f"{old.sql_type} to {new.sql_type}: it is in a UNIQUE key")
        if is_key:
            raise error_at(definition, f"cannot change the type of primary key column "
                                       f"{old.name!r} from {old.sql_type} to {new.sql_type}")
        checked = [c.name for c in self.checks if old.name.lower() in check_columns(c)]
        if checked:  # (rows converted later could break it, unseen)
            raise unsupported(definition, f"changing the values of column {old.name!r}, "
                                          f"which CHECK constraint '{checked[0]}' reads "
                                          "(drop the constraint first)")
        hidden = self._hidden(number, "old", old.name)
        # A key's index moves to the column's new storage (the old one goes out of sight).
        keyed = [k for k in self.keys if k.lookup and old.name.lower() in k.columns]
        self.steps.extend(DropIndex(self._stored(k.columns), k.unique) for k in keyed)
        self.steps.append(RenameStored(old.name, hidden))
        self.steps.append(AddStored(replace(new, name=old.name), None))
        self.steps.extend(AddIndex(self._stored(k.columns), k.unique) for k in keyed)
        converted = replace(new, name=old.name,
                            conversion=Conversion(hidden, old, value_conversion(old, new)))
        self.columns[at] = (converted, origin)
        if origin is not None:
            self.changed.add(origin)

    def _alter_default(self, node: exp.AlterColumn) -> None:
        at = self._find(node, node.this.name)
        assert at is not None
        column, origin = self.columns[at]
        now = None
        if node.args.get("drop"):
            default = None
        elif node.args.get("default") is not None:
            now = clock_default(node.args["default"], column.name, column.kind, column.fsp)
            default = None if now is not None else default_value(column, node.args["default"],
                                                                 node)
        else:
            raise unsupported(node, "ALTER COLUMN action")
        # (the clock's or an expression's default the column had goes with the old one)
        self.columns[at] = (replace(column, default=default, default_now=now,
                                    default_expr=""), origin)

    # ..................................................................... helpers

    def change(self) -> SchemaChange:
        names = [c.name.lower() for c, _ in self.columns]
        new = compiled(TableSchema(
            self.schema.name, tuple(c for c, _ in self.columns),
            tuple(names.index(n) for n in self.primary_key), version=self.version,
            comment=self.comment,
            keys=tuple(Key(k.name, tuple(names.index(n) for n in k.columns), k.kind)
                       for k in self.keys),
            checks=tuple(self.checks), foreign_keys=self._foreign_keys()))
        moved: list[int | None] = [None] * len(self.schema.columns)
        for position, (_, origin) in enumerate(self.columns):
            if origin is not None:
                moved[origin] = position
        added = tuple(c for c in new.checks if c.name.lower() in self.added_checks)
        return SchemaChange(self.schema, new, tuple(moved), tuple(self.steps),
                            frozenset(self.changed), added)

    def _foreign_keys(self) -> tuple[ForeignKey, ...]:
        """The table's FOREIGN KEYs over its columns as they are now (renamed columns
        followed); dropping a column of one, or changing its type, is refused."""
        names = [c.name.lower() for c, _ in self.columns]
        out = []
        for fk, columns in self.foreign_keys:
            for name in columns:
                at = names.index(name) if name in names else None
                if at is None or self.columns[at][1] in self.changed:
                    raise IndexNeededError(f"Cannot drop or change column '{name}': needed in "
                                           f"a foreign key constraint '{fk.name}' (drop the "
                                           "FOREIGN KEY first)")
            out.append(replace(fk, columns=tuple(names.index(n) for n in columns)))
        return tuple(out)

    def _find(self, node: exp.Expr, name: str, *, missing_ok: bool = False) -> int | None:
        for i, (column, _) in enumerate(self.columns):
            if column.name.lower() == name.lower():
                return i
        if missing_ok:
            return None
        raise error_at(node, f"table {self.schema.name!r} has no column {name!r}")

    def _check_new_name(self, node: exp.Expr, name: str) -> None:
        if name.lower().startswith(HIDDEN_PREFIX):
            raise error_at(node, f"column names starting with {HIDDEN_PREFIX!r} are reserved: "
                                 f"{name!r}")
        if any(c.name.lower() == name.lower() for c, _ in self.columns):
            raise error_at(node, f"table {self.schema.name!r} already has a column {name!r}")

    def _position(self, node: exp.ColumnDef) -> int:
        where = node.args.get("position")
        if where is None:
            return len(self.columns)
        if (where.args.get("position") or "").upper() == "FIRST":
            return 0
        after = self._find(where, where.this.name)
        assert after is not None
        return after + 1

    def _hidden(self, number: int, what: str, name: str) -> str:
        return f"{HIDDEN_PREFIX}v{self.version}_{number}_{what}_{name}"

    def _drop_checks_of(self, node: exp.Expr, column: str) -> None:
        """A dropped column's CHECK constraints: dropped with it where they read no other
        column; else the column cannot go (MariaDB's 1054, MySQL 8's 3959)."""
        for check in list(self.checks):
            reads = check_columns(check)
            if column.lower() not in reads:
                continue
            if reads != {column.lower()}:
                raise error_at(node, f"Unknown column '{column}' in 'CHECK' (CHECK "
                                     f"constraint '{check.name}' reads it; drop the "
                                     "constraint first)", UnknownColumnError)
            self.checks.remove(check)

    def _rename_key(self, old: str, new: str) -> None:
        self.primary_key = [new.lower() if k == old.lower() else k for k in self.primary_key]
        for key in self.keys:
            key.columns = [new.lower() if k == old.lower() else k for k in key.columns]
        for _, columns in self.foreign_keys:
            columns[:] = [new.lower() if k == old.lower() else k for k in columns]

    def _in_unique_key(self, column: Column) -> bool:
        return any(k.unique and column.name.lower() in k.columns for k in self.keys)


# --------------------------------------------------------------------------- values

#: What rows already stored read in an added NOT NULL column without DEFAULT (MySQL's
#: implicit defaults).
IMPLICIT_DEFAULTS: dict[str, Any] = {
    INT: 0, BOOL: 0, FLOAT: 0.0, DECIMAL: decimal.Decimal(0), STR: "", BYTES: b"",
    DATE: None, DATETIME: None, TIME: dt.timedelta(0),
    ENUM: None,  # (a NOT NULL ENUM always has a default: its first member)
}


def keeps_values(old: Column, new: Column) -> bool:
    """Whether every value of ``old`` is, unchanged, a value of ``new`` (no conversion)."""
    if old.kind != new.kind or (old.nullable and not new.nullable):
        return False
    if old.kind == ENUM:  # the stored text keeps its member's position
        return new.members[:len(old.members)] == old.members
    if old.kind in (TIME, DATETIME) and new.fsp < old.fsp:
        return False
    if (new.single and not old.single) or (new.padded and not old.padded):
        return False
    if old.bounds is not None and new.bounds is not None and not (
            new.bounds[0] <= old.bounds[0] and old.bounds[1] <= new.bounds[1]):
        return False
    if old.kind == DECIMAL and old.bounds is None and new.bounds is not None:
        return False  # (a DECIMAL made UNSIGNED: its negative values are not the new one's)
    if new.length is not None and (old.length is None or old.length > new.length):
        return False
    return old.kind != DECIMAL or old.scale == new.scale and (new.precision is None or (
        old.precision is not None and old.precision <= new.precision))


def value_conversion(old: Column, new: Column) -> Callable[[Any], Any]:
    """Old value -> new value, as MySQL converts outside strict mode: CAST to the new kind,
    then fit it (integers saturate at the type's range, text is cut at its length)."""
    if new.kind == ENUM:  # (every old value is a member: see _modify)
        cast: Callable[[Any], Any] = functools.partial(member_for, new.members)
    elif new.kind == TIME:
        cast = functools.partial(cast_time, fsp=new.fsp)
    else:
        cast = _CAST_TO[new.kind]
    zero = IMPLICIT_DEFAULTS[new.kind] if new.kind != ENUM else enum_values(new.members)[0]

    def convert(value: Any) -> Any:
        if value is None:
            return None
        out = cast(value)
        if out is None:
            return None if new.nullable else zero
        if new.bounds is not None:
            out = min(max(out, new.bounds[0]), new.bounds[1])
        if new.length is not None and new.kind in (STR, BYTES):
            out = out[: new.length]
        if new.single:  # (a double beyond a FLOAT saturates)
            out = single(min(max(out, -FLOAT_MAX), FLOAT_MAX))
        if new.padded:
            out = out.rstrip(" ") if new.kind == STR else out.ljust(new.length or 0, b"\0")
        if new.kind == DATETIME:
            out = round_fraction(out, new.fsp)

        if new.scale is not None and new.kind == DECIMAL:
            out = out.quantize(decimal.Decimal(1).scaleb(-new.scale),
                               rounding=decimal.ROUND_HALF_UP)
            if new.precision is not None and abs(out) >= decimal_limit(new):  # saturates
                top = decimal_limit(new) - decimal.Decimal(1).scaleb(-new.scale)
                out = top.copy_sign(out)
        return out

    return convert


def _to_bytes(value: Any) -> bytes | None:
    text = CASTS["cast_str"](value)
    return text if isinstance(text, bytes) or text is None else text.encode()


def _to_bool(value: Any) -> int | None:
    number = CASTS["cast_int"](value)
    return None if number is None else int(number != 0)


_CAST_TO: dict[str, Callable[[Any], Any]] = {
    INT: CASTS["cast_int"], FLOAT: CASTS["cast_float"], DECIMAL: CASTS["cast_decimal"],
    STR: lambda v: str(v) if type(v) is int else _text(CASTS["cast_str"](v)),
    BYTES: _to_bytes, BOOL: _to_bool,
    DATE: CASTS["cast_date"], DATETIME: CASTS["cast_datetime"], TIME: CASTS["cast_time"],
}


# (An integer's text is ``str``'s, as ``to_str`` renders it: called directly, for every row
# of a table whose INT column becomes text, it costs 0.3 µs where CAST's way costs 7 µs.)


def _text(value: Any) -> str | None:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def replay(schema: TableSchema, alter_sql: str) -> SchemaChange:
    """The change a stored ALTER statement made (rebuilding the program at open)."""
    from rivulet.sql.parse import parse_one

    node = parse_one(alter_sql)
    if not isinstance(node, exp.Alter):
        raise SqlError(f"not an ALTER TABLE statement: {alter_sql!r}")
    return plan_alter(replace_conversions(schema), node)


def program_tables(
        statements: Iterable[tuple[str, str]]) -> dict[str, tuple[TableSchema, list[str]]]:
    """The tables a stored program declares, from its ``(kind, sql)`` statements in order
    ("table", "copy" and "alter"; others are skipped): each table's schema now, and the statements
    that made it (to store beside a copy of its rows, as Spark snapshots do)."""
    from rivulet.sql.ddl import table_schema
    from rivulet.sql.parse import parse_one

    out: dict[str, tuple[TableSchema, list[str]]] = {}
    for kind, sql in statements:
        if kind == "table":
            node = parse_one(sql)
            schema = compiled(table_schema(node)) if isinstance(node, exp.Create) else None
            if schema is None:
                raise SqlError(f"not a CREATE TABLE statement: {sql!r}")
            out[schema.name.lower()] = (schema, [sql])
        elif kind == "copy":
            from rivulet.migrate.copy import plan_copy
            from rivulet.plan.catalog import Catalog

            catalog = Catalog(tables={n: schema for n, (schema, _) in out.items()})
            create = parse_one(sql)
            if not isinstance(create, exp.Create):
                raise SqlError(f"not a CREATE TABLE statement: {sql!r}")
            target = plan_copy(catalog, create).target
            out[target.name.lower()] = (target, [sql])
        elif kind == "alter":
            node = parse_one(sql)
            name = node.this.name.lower()
            schema, history = out[name]
            out[name] = (replay(schema, sql).new, [*history, sql])
    return out


def replace_conversions(schema: TableSchema) -> TableSchema:
    """``schema`` with its conversions taken as finished (at open, conversions left over
    are resumed separately; planning the next change needs none pending)."""
    if not schema.converting:
        return schema
    return TableSchema(schema.name, tuple(replace(c, conversion=None) for c in schema.columns),
                       schema.primary_key, version=schema.version, keys=schema.keys,
                       checks=schema.checks)
