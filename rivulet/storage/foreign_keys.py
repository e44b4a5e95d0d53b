"""FOREIGN KEYs enforced as InnoDB enforces them.

A write statement's own changes are made first (its rows, checked for duplicate keys), then
walked in the order it made them, each checked as InnoDB checks a row when it writes it:

* a child row written with a key (no NULL in it) that no parent row holds fails the
  statement (1452);
* a parent row deleted, or updated so that its referenced columns change, with child rows
  still referencing the old values: RESTRICT and NO ACTION fail the statement (1451);
  CASCADE deletes the children (ON DELETE) or sets their columns to the new values (ON
  UPDATE); SET NULL sets their columns to NULL. What a cascade changes is checked and
  cascades in turn (at most 15 levels deep, as InnoDB), and an ON UPDATE CASCADE or SET
  NULL that comes back to a table it updated already acts as RESTRICT (as InnoDB).

Rows the statement changes *later* are seen as they were before it (InnoDB writes row by
row): ``INSERT INTO t VALUES (3, 2), (2, NULL)`` into a self-referencing table fails, as
``DELETE FROM t`` does where a parent row comes before its child.

The walk reads and changes the tables through :class:`Rows`: storage inside the commit's
savepoint (rivulet/engine/commit.py), or a transaction's write set laid over it
(rivulet/engine/transaction.py); the caller undoes everything if it raises. With
``foreign_key_checks = 0`` nothing here runs (as InnoDB: no check, no cascade).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from rivulet.errors import (
    CascadeDepthError,
    ForeignKeyFormError,
    NoReferencedRowError,
    RowReferencedError,
    UnsupportedSqlError,
)
from rivulet.storage.base import RowId, Storage
from rivulet.storage.upsert import OnDuplicate
from rivulet.values.schema import ForeignKey, ReferentialAction, Row, TableSchema

#: How deep cascades go: a row an action would change this many levels down fails the
#: statement (InnoDB's FK_MAX_CASCADE_DEL).
MAX_CASCADE_DEPTH = 15

#: A row a statement changed: what it was (None: inserted), what it is (None: deleted).
RowChange = tuple[Row | None, Row | None]

_RESTRICTING = (ReferentialAction.RESTRICT, ReferentialAction.NO_ACTION)


class Rows(Protocol):
    """The tables as the statement has left them so far."""

    def find(self, schema: TableSchema, columns: tuple[int, ...],
             value: tuple) -> list[tuple[RowId, Row]]:
        """The rows whose ``columns`` are equal to ``value``, with their identities."""
        ...

    def delete(self, schema: TableSchema, rid: RowId, row: Row) -> None: ...

    def update(self, schema: TableSchema, rid: RowId, old: Row, new: Row) -> None: ...


def referencing(tables: Mapping[str, TableSchema],
                parent: str) -> list[tuple[TableSchema, ForeignKey]]:
    """The FOREIGN KEYs (with their tables) that reference table ``parent``."""
    name = parent.lower()
    return [(child, fk) for child in tables.values() for fk in child.foreign_keys
            if fk.parent.lower() == name]


def involved(tables: Mapping[str, TableSchema], schema: TableSchema) -> bool:
    """Whether writes to ``schema`` are checked here: it has FOREIGN KEYs or is referenced."""
    return bool(schema.foreign_keys) or bool(referencing(tables, schema.name))


def constraint_text(child: TableSchema, fk: ForeignKey) -> str:
    """A constraint as MySQL's messages show it."""
    cols = ", ".join(f"`{child.columns[i].name}`" for i in fk.columns)
    parent_cols = ", ".join(f"`{c}`" for c in fk.parent_columns)
    return (f"`{child.name}`, CONSTRAINT `{fk.name}` FOREIGN KEY ({cols}) REFERENCES "
            f"`{fk.parent}` ({parent_cols})")


def row_referenced(child: TableSchema, fk: ForeignKey) -> RowReferencedError:
    return RowReferencedError("Cannot delete or update a parent row: a foreign key "
                              f"constraint fails ({constraint_text(child, fk)})")


def no_referenced_row(child: TableSchema, fk: ForeignKey) -> NoReferencedRowError:
    return NoReferencedRowError("Cannot add or update a child row: a foreign key constraint "
                                f"fails ({constraint_text(child, fk)})")


def parent_positions(parent: TableSchema, fk: ForeignKey) -> tuple[int, ...]:
    return tuple(parent.position(c) for c in fk.parent_columns)


def check_references(schema: TableSchema, tables: Mapping[str, TableSchema], *,
                     missing_ok: bool = False) -> None:
    """Refuse, as MariaDB does (1005, errno 150), a FOREIGN KEY of ``schema`` whose parent
    table or columns do not exist, whose parent columns begin no key of the parent, whose
    column types differ from the parent's (kinds, integer sizes, ENUM members; lengths and
    DECIMAL places may differ, as in MariaDB), or that sets a NOT NULL column to NULL.
    ``missing_ok``: a parent table not made (yet) is no fault (foreign_key_checks off;
    writes to the child then fail with 1452 while it is missing)."""
    for fk in schema.foreign_keys:
        parent = schema if fk.parent.lower() == schema.name.lower() else tables.get(
            fk.parent.lower())
        if parent is None and missing_ok:
            continue
        why = _malformed(schema, fk, parent)
        if why:
            raise ForeignKeyFormError(f"Can't create table `{schema.name}` (errno: 150 "
                                      f"\"Foreign key constraint is incorrectly formed\": "
                                      f"{why})")


def _malformed(schema: TableSchema, fk: ForeignKey, parent: TableSchema | None) -> str:
    if parent is None:
        return f"no table {fk.parent!r}"
    if not all(parent.has_column(c) for c in fk.parent_columns):
        return f"table {parent.name!r} has no column(s) ({', '.join(fk.parent_columns)})"
    wanted = parent_positions(parent, fk)
    width = len(wanted)
    if parent.primary_key[:width] != wanted and not any(
            k.lookup and k.columns[:width] == wanted for k in parent.keys):
        return f"no key of {parent.name!r} begins with ({', '.join(fk.parent_columns)})"
    for mine, theirs in zip(fk.columns, wanted):
        a, b = schema.columns[mine], parent.columns[theirs]
        if (a.kind, a.members, a.bounds) != (b.kind, b.members, b.bounds):
            return f"{a.name} ({a.sql_type}) and {parent.name}.{b.name} ({b.sql_type}) differ"
    if ReferentialAction.SET_NULL in (fk.on_delete, fk.on_update) and not all(
            schema.columns[i].nullable for i in fk.columns):
        return "SET NULL of a NOT NULL column"
    return ""


class Enforcer:
    """Checks and cascades of one statement (see the module docstring)."""

    def __init__(self, tables: Mapping[str, TableSchema], rows: Rows, *,
                 verify: bool = False) -> None:
        self.tables = tables
        self.rows = rows
        #: Check only (a transaction's COMMIT, its actions taken when its statements ran):
        #: every action acts as RESTRICT.
        self.verify = verify
        #: The statement's table, and its changes not walked yet (None: verifying).
        self._table = ""
        self._pending: _Pending | None = None
        #: Rows a DELETE was to delete later that a cascade deleted first (InnoDB then
        #: does not count them as the statement's).
        self.taken = 0

    def statement(self, schema: TableSchema, changes: list[RowChange]) -> None:
        """Walk the changes a statement made to ``schema`` (made already, in this order)."""
        self._table = schema.name.lower()
        pending = _Pending(_in_key_order(schema, changes))
        self._pending = None if self.verify else pending
        # (An UPDATE's ON UPDATE actions that come back to its own table act as RESTRICT.)
        updated = frozenset({self._table})
        for at in range(len(pending.changes)):
            old, new = pending.walk(at)  # ((None, None): a row a cascade took already)
            if old is not None:
                self._parent_changed(schema, old, new, 0, updated if new is not None
                                     else frozenset())
            if new is not None:
                self._child_written(schema, old, new)
        self._pending = None

    def _find(self, schema: TableSchema, columns: tuple[int, ...],
              value: tuple) -> list[tuple[RowId, Row | None]]:
        """Rows holding ``value`` in ``columns``, as the statement has left them at the row
        walked: rows it changes later are as they were (a row it deletes later has no
        identity to change here: None)."""
        found: list[tuple[RowId, Row | None]] = list(self.rows.find(schema, columns, value))
        pending = self._pending
        if schema.name.lower() != self._table or pending is None:
            return found
        found = [(rid, row) for rid, row in found if row is None or not pending.writes(row)]
        found += [(None, old) for old in pending.holding(columns, value)]
        return found

    def _parent_changed(self, schema: TableSchema, old: Row, new: Row | None, depth: int,
                        updated: frozenset[str]) -> None:
        for child, fk in referencing(self.tables, schema.name):
            positions = parent_positions(schema, fk)
            value = tuple(old[i] for i in positions)
            if None in value:
                continue
            if new is not None and tuple(new[i] for i in positions) == value:
                continue
            children = self._find(child, fk.columns, value)
            # A row that references itself is its own child (InnoDB: RESTRICT refuses to
            # delete it; CASCADE and SET NULL change what goes anyway).
            itself = (not self.verify and child.name.lower() == schema.name.lower()
                      and tuple(old[i] for i in fk.columns) == value)
            if not children and not itself:
                continue
            action = fk.on_delete if new is None else fk.on_update
            if action in _RESTRICTING or self.verify or (
                    new is not None and child.name.lower() in updated):
                raise row_referenced(child, fk)
            if depth + 1 >= MAX_CASCADE_DEPTH:
                event = "DELETE" if new is None else "UPDATE"
                raise CascadeDepthError(f"Got error 193 '{constraint_text(child, fk)} ON "
                                        f"{event} {action.value}' from InnoDB (FOREIGN KEY "
                                        f"actions at most {MAX_CASCADE_DEPTH} levels deep)")
            for rid, row in children:
                assert row is not None
                deleting = action is ReferentialAction.CASCADE and new is None
                after = None if deleting else _filled(
                    row, fk.columns, [new[i] for i in positions] if (
                        action is ReferentialAction.CASCADE and new is not None)
                    else [None] * len(positions))
                if rid is None:  # a row the statement itself changes later
                    self._change_later(row, after)
                    if deleting:
                        self._parent_changed(child, row, None, depth + 1, updated)
                    continue
                if after is None:
                    self.rows.delete(child, rid, row)
                    self._parent_changed(child, row, None, depth + 1, updated)
                    continue
                self.rows.update(child, rid, row, after)
                self._parent_changed(child, row, after, depth + 1,
                                     updated | {schema.name.lower()})

    def _change_later(self, row: Row, after: Row | None) -> None:
        """An action on ``row``, which the statement (a DELETE) deletes later: deleted by a
        cascade first (``after`` None: InnoDB then does not count it as the statement's),
        or changed first (its later walk starts from ``after``). An action on a row an
        UPDATE changes later is refused: rivulet's UPDATE is not made row by row."""
        if self._pending is not None and self._pending.delete_first(row, after):
            self.taken += after is None
            return
        raise UnsupportedSqlError(
            "an UPDATE whose FOREIGN KEY actions change rows it changes itself later "
            "(InnoDB's row-by-row order): write it as separate statements")

    def _child_written(self, schema: TableSchema, old: Row | None, new: Row) -> None:
        # An update that moves the row to a new primary key is, in InnoDB, a delete and an
        # insert: every key of the row is checked, changed or not.
        moved = old is None or schema.pk_of(old) != schema.pk_of(new)
        for fk in schema.foreign_keys:
            value = tuple(new[i] for i in fk.columns)
            if None in value or (old is not None and not moved
                                 and tuple(old[i] for i in fk.columns) == value):
                continue
            parent = self.tables.get(fk.parent.lower())
            if parent is None or not all(parent.has_column(c) for c in fk.parent_columns):
                raise no_referenced_row(schema, fk)
            if not any(row is not None for _, row in
                       self._find(parent, parent_positions(parent, fk), value)):
                raise no_referenced_row(schema, fk)


class _Pending:
    """A statement's changes and how far the walk has come: the rows it writes later, and
    those it deletes or updates later, found by value (each lookup as fast as a dict's)."""

    def __init__(self, changes: list[RowChange]) -> None:
        self.changes = changes
        self.at = -1
        #: New rows of the changes not walked yet, counted.
        self._new: dict[Row, int] = {}
        for _, new in changes:
            if new is not None:
                self._new[new] = self._new.get(new, 0) + 1
        #: Positions of each old row; and, per columns looked up, of each value of them.
        self._by_row: dict[Row, list[int]] = {}
        for at, (old, _) in enumerate(changes):
            if old is not None:
                self._by_row.setdefault(old, []).append(at)
        self._by_value: dict[tuple[int, ...], dict[tuple, list[int]]] = {}

    def walk(self, at: int) -> RowChange:
        """Change ``at`` is walked now: it is no longer to come."""
        self.at = at
        change = self.changes[at]
        new = change[1]
        if new is not None:
            left = self._new[new] - 1
            if left:
                self._new[new] = left
            else:
                del self._new[new]
        return change

    def writes(self, row: Row) -> bool:
        """Whether ``row`` is a new row of a change still to come."""
        return row in self._new

    def holding(self, columns: tuple[int, ...], value: tuple) -> list[Row]:
        """The old rows of the changes still to come whose ``columns`` hold ``value``."""
        index = self._by_value.get(columns)
        if index is None:
            index = self._by_value[columns] = {}
            for at, (old, _) in enumerate(self.changes):
                if old is not None:
                    index.setdefault(tuple(old[i] for i in columns), []).append(at)
        out = []
        for at in index.get(value, ()):
            old = self.changes[at][0]  # (as an action may have changed it since)
            if at > self.at and old is not None and tuple(old[i] for i in columns) == value:
                out.append(old)
        return out

    def delete_first(self, row: Row, after: Row | None) -> bool:
        """An action reaches ``row``, which a DELETE still to come deletes: it is deleted
        now (``after`` None), or becomes ``after`` until then. False if no DELETE to come
        deletes it."""
        for at in self._by_row.get(row, ()):
            if at > self.at and self.changes[at] == (row, None):
                self.changes[at] = (None, None) if after is None else (after, None)
                if after is not None:
                    self._by_row.setdefault(after, []).append(at)
                    for columns, index in self._by_value.items():
                        index.setdefault(tuple(after[i] for i in columns), []).append(at)
                return True
        return False


def _in_key_order(schema: TableSchema, changes: list[RowChange]) -> list[RowChange]:
    """An UPDATE's or DELETE's rows in primary-key order, as InnoDB reaches them by a scan
    or a range of the primary key (not in the order a WHERE names keys); an INSERT's as
    written."""
    keyed = [(schema.pk_of(old), (old, new)) for old, new in changes if old is not None]
    if not schema.primary_key or len(keyed) < len(changes):
        return list(changes)
    return [change for _, change in sorted(keyed, key=lambda pair: pair[0])]


def _filled(row: Row, columns: tuple[int, ...], values: list[object]) -> Row:
    """``row`` with ``values`` in ``columns``."""
    out = list(row)
    for position, value in zip(columns, values):
        out[position] = value
    return tuple(out)


def statement_changes(kind: str, deltas: list[tuple[Row, int]]) -> list[RowChange]:
    """A statement's changes from the deltas it made, in order: an INSERT's rows, a
    DELETE's rows, an UPDATE's rows old and new (its deltas: each old row, then each new one
    in the same order)."""
    if kind == "insert":
        return [(None, row) for row, sign in deltas for _ in range(sign)]
    if kind == "delete":
        return [(row, None) for row, _ in deltas]
    half = len(deltas) // 2
    return [(old, new) for (old, _), (new, _) in zip(deltas[:half], deltas[half:])]


class StoredRows:
    """:class:`Rows` over storage inside the open write transaction (the commit worker's):
    keeps the deltas of what the walk changed, by table (lower-case name)."""

    def __init__(self, storage: Storage, tables: Mapping[str, TableSchema],
                 before_write: Callable[[TableSchema, Row], None] | None = None) -> None:
        self.storage = storage
        self.tables = tables
        #: Called with each row before an action changes it (a lazy copy from its table
        #: copies the row as it was first: rivulet/migrate/lazy.py).
        self.before_write = before_write
        self.changes: dict[str, dict[Row, int]] = {}

    def find(self, schema: TableSchema, columns: tuple[int, ...],
             value: tuple) -> list[tuple[RowId, Row]]:
        return self.storage.held(schema, columns, value)

    def delete(self, schema: TableSchema, rid: RowId, row: Row) -> None:
        if self.before_write is not None:
            self.before_write(schema, row)
        self.storage.delete(schema, [rid])
        self._note(schema, row, -1)

    def update(self, schema: TableSchema, rid: RowId, old: Row, new: Row) -> None:
        self.delete(schema, rid, old)
        if self.before_write is not None:
            self.before_write(schema, new)
        self.storage.insert(schema, [new])  # (ConstraintError if it takes a held key)
        self._note(schema, new, 1)

    def _note(self, schema: TableSchema, row: Row, sign: int) -> None:
        counts = self.changes.setdefault(schema.name.lower(), {})
        count = counts.get(row, 0) + sign
        if count:
            counts[row] = count
        else:
            counts.pop(row, None)

    def deltas(self) -> list[tuple[TableSchema, list[tuple[Row, int]]]]:
        """What the walk changed, by table (a row changed twice cancelled out)."""
        return [(self.tables[name], list(counts.items()))
                for name, counts in self.changes.items() if counts]


def check_upsert(tables: Mapping[str, TableSchema], schema: TableSchema,
                 mode: OnDuplicate) -> None:
    """Refuse what rivulet's upserts cannot do as InnoDB does with FOREIGN KEYs: REPLACE,
    ON DUPLICATE KEY UPDATE and INSERT IGNORE of a referenced table (InnoDB's REPLACE
    deletes the rows it replaces, firing ON DELETE actions). INSERT IGNORE into a table
    that only has FOREIGN KEYs is taken: its rows without a parent row go first
    (:func:`rows_with_parents`), as InnoDB skips them."""
    if referencing(tables, schema.name):
        verb = {OnDuplicate.REPLACE: "REPLACE", OnDuplicate.UPDATE: "INSERT ... ON DUPLICATE "
                "KEY UPDATE"}.get(mode, "INSERT IGNORE")
        raise UnsupportedSqlError(f"{verb} into table {schema.name!r}, "
                                  "which FOREIGN KEYs reference: use INSERT, UPDATE and DELETE")


def rows_with_parents(tables: Mapping[str, TableSchema], schema: TableSchema,
                      rows: list[Row], found: Rows) -> list[Row]:
    """INSERT IGNORE's ``rows`` less those a FOREIGN KEY of ``schema`` finds no parent row
    for (InnoDB skips them, 1452 a warning), parents looked up in ``found``. Row by row, as
    InnoDB goes, gives the same: ``schema`` is referenced by no FOREIGN KEY
    (:func:`check_upsert`), so no row of the statement is another's parent."""
    kept = []
    for row in rows:
        for fk in schema.foreign_keys:
            value = tuple(row[i] for i in fk.columns)
            if None in value:
                continue
            parent = tables.get(fk.parent.lower())
            if parent is None or not all(parent.has_column(c) for c in fk.parent_columns) \
                    or not any(r is not None for _, r in found.find(
                        parent, parent_positions(parent, fk), value)):
                break
        else:
            kept.append(row)
    return kept
