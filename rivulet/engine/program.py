"""The program: tables and views, changed while the database runs, and restored at open.

Every change runs as a *migration* (:meth:`Core.migration`): it holds the commit lock and
the graph lock, so it sees base tables and the graph at the same LSN. A change is checked
and planned before anything changes, made durable in storage's program table, then made
in the catalog and the graph. At open, :meth:`Program.restore` replays the stored program;
each node bootstraps from the stored rows as it is added, exactly as a view added to a
running database does.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Mapping, Sequence, Set
from dataclasses import replace
from typing import Any

from sqlglot import exp

from rivulet.bind import statements as st
from rivulet.engine.core import Core
from rivulet.engine.upquery import Upqueries
from rivulet.engine.views import View
from rivulet.errors import (
    BrokenViewError,
    ConstraintError,
    DatabaseExistsError,
    NoDatabaseToDropError,
    NoTableToDropError,
    ObjectExistsError,
    ParameterCountError,
    ProgramError,
    RowReferencedError,
    SqlError,
    UnknownColumnError,
    UnknownObjectError,
    UnknownTableError,
    UnsupportedSqlError,
)
from rivulet.faults import fault_point
from rivulet.migrate import alter
from rivulet.migrate.copy import plan_copy
from rivulet.plan import ir
from rivulet.plan.broken import BrokenView
from rivulet.plan.ir import ADHOC_PREFIX, is_adhoc
from rivulet.plan.params import values_by_param
from rivulet.plan.planner import Planner
from rivulet.plan.usage import scan_columns
from rivulet.spark.bootstrap import PlanRecordingBuilder
from rivulet.sql.clock import reads_clock, stamp
from rivulet.sql.dual import is_dual
from rivulet.sql.limit_params import bind_limit, has_limit_params
from rivulet.sql.lock_calls import lock_calls
from rivulet.sql.parse import DIALECT, parse_one
from rivulet.sql.rename import renamed_schema, renamed_statement
from rivulet.sql.schemas import in_schema, is_default, split_name
from rivulet.state.holes import MISSING
from rivulet.state.reader import KeyedReader
from rivulet.storage import foreign_keys
from rivulet.storage.base import AddStored, DropIndex, ProgramStatement
from rivulet.values.clock import statement_time
from rivulet.values.schema import TableSchema, enforce_checks

log = logging.getLogger("rivulet")


class Program:
    """DDL, the views' handles, and ad-hoc queries made into views."""

    def __init__(self, core: Core, builder: PlanRecordingBuilder, upqueries: Upqueries, *,
                 enforce_unique: bool = True) -> None:
        self.core = core
        self.builder = builder
        self.upqueries = upqueries
        #: Whether UNIQUE keys are made at restore (a follower leaves that to the primary).
        self.enforce_unique = enforce_unique
        #: Every view's handle, by lower-case name.
        self.views: dict[str, View] = {}
        #: Ad-hoc SELECT text -> the view answering it.
        self.adhoc: dict[str, View] = {}
        #: The lookups upqueries were given an index for, by lower-case table: column
        #: names, lower-case (made again when DROP INDEX drops the index that served one).
        self.index_needs: dict[str, set[tuple[str, ...]]] = {}

    # ..................................................................... start-up

    def restore(self) -> None:
        """Rebuild the program from storage's program table."""
        core = self.core
        program = core.storage.program()
        records = {s.name.lower(): s.sql for s in program if s.kind == "view_columns"}
        for statement in program:
            bound = (st.bind_text(statement.sql, core.catalog)
                     if statement.kind == "table" else None)
            if isinstance(bound, st.CreateTable):
                self._add_table(bound.schema)
            elif statement.kind == "copy":
                create = parse_one(statement.sql)
                assert isinstance(create, exp.Create)  # stored as CREATE TABLE ... AS SELECT
                copy = plan_copy(core.catalog, create)
                self._add_table(copy.target)
                if core.storage.has_table(copy.tracking):
                    core.lazy.copies[copy.target.name.lower()] = copy
            elif statement.kind == "alter":
                self._apply_schema_change(
                    alter.replay(core.catalog.require_table(statement.name), statement.sql))
            elif statement.kind == "schema":
                core.catalog.schemas[statement.name.lower()] = statement.name
            elif statement.kind == "view":
                # A view whose tables are gone (or come later in the program, made again
                # after they were dropped) is kept broken until they are there.
                core.catalog.broken[statement.name.lower()] = BrokenView.recorded(
                    statement.name, statement.sql, records.get(statement.name.lower()))
            self._repair_views()
        for broken in core.catalog.broken.values():  # (what DROP TABLE left, or worse)
            log.warning("view %r is not built: %s", broken.name,
                        broken.refusal or "a table or column it reads is missing (1356)")
        if self.enforce_unique:
            for schema in core.catalog.tables.values():
                if schema.keys:
                    self._ensure_keys(schema)

    def _ensure_keys(self, schema: TableSchema) -> None:
        storage = self.core.storage
        try:
            with storage.transaction():
                storage.ensure_keys(schema)
        except ConstraintError:
            log.warning("table %r holds rows that share the value of a UNIQUE key: the key is "
                        "not enforced until they are removed", schema.name)

    def ensure_index(self, table: str, columns: tuple[int, ...]) -> None:
        """Storage's index on ``columns`` of ``table`` (what upqueries will look up)."""
        schema = self.core.catalog.require_table(table)
        self.index_needs.setdefault(schema.name.lower(), set()).add(
            tuple(schema.columns[i].name.lower() for i in columns))
        self.core.storage.ensure_index(schema, columns)

    def _index_needed(self, schema: TableSchema) -> None:
        """After DROP INDEX: the index of each key left, and of each lookup upqueries were
        given one for (the dropped key's index may have served them)."""
        storage = self.core.storage
        storage.ensure_keys(schema)
        for names in self.index_needs.get(schema.name.lower(), ()):
            if all(schema.has_column(n) for n in names):
                storage.ensure_index(schema, tuple(schema.position(n) for n in names))

    def value_counts(self, table: str, names: tuple[str, ...]) -> tuple[int, int] | None:
        """The planner's statistics (``Storage.value_counts``), by column names."""
        core = self.core
        schema = core.catalog.require_table(table)
        positions = {c.name.lower(): i for i, c in enumerate(schema.columns)}
        columns = tuple(positions.get(n.lower(), -1) for n in names)
        if -1 in columns:
            return None  # planned on an older version of the table
        return core.storage.value_counts(schema, columns)

    # ..................................................................... DDL

    def ddl(self, statement: st.Statement, *, foreign_key_checks: bool = True) -> None:
        """Run one bound DDL statement (``foreign_key_checks``: the session's; with them
        off, as in MySQL, a FOREIGN KEY may name a table not made yet, a table others
        reference may be dropped, and rows stored are not checked against a FOREIGN KEY
        added)."""
        if isinstance(statement, st.CreateTable):
            self.create_table(statement, foreign_key_checks=foreign_key_checks)
        elif isinstance(statement, st.CreateView):
            self.create_view(statement.name, statement.text, replace=statement.replace)
        elif isinstance(statement, st.AlterTable):
            self.alter_table(statement, foreign_key_checks=foreign_key_checks)
        elif isinstance(statement, st.CreateTableAs):
            self.create_table_as(statement)
        elif isinstance(statement, st.Drop):
            self.drop(statement, foreign_key_checks=foreign_key_checks)
        elif isinstance(statement, st.CreateSchema):
            self.create_schema(statement)
        elif isinstance(statement, st.DropSchema):
            self.drop_schema(statement)
        elif isinstance(statement, st.RenameTables):
            self.rename_tables(statement)
        else:
            raise SqlError(f"unsupported statement {type(statement).__name__}")

    def create_table(self, statement: st.CreateTable, *,
                     foreign_key_checks: bool = True) -> None:
        core = self.core
        schema = statement.schema
        if statement.if_not_exists and (core.catalog.table(schema.name) is not None
                                        or core.catalog.view(schema.name) is not None
                                        or core.catalog.broken_view(schema.name) is not None):
            return  # as MySQL: a note that it exists, the existing one unchanged
        core.catalog.check_new_name(schema.name)
        foreign_keys.check_references(schema, core.catalog.tables,
                                      missing_ok=not foreign_key_checks)
        with core.migration():
            with core.storage.transaction():
                core.storage.create_table(schema)
                core.storage.add_statement("table", schema.name, statement.sql)
            self._add_table(schema)
            self._repair_views()

    def create_schema(self, statement: st.CreateSchema) -> None:
        """``CREATE DATABASE``: a name tables and views may be made in (see
        rivulet/sql/schemas.py); stored in the program, so it outlives a restart."""
        core = self.core
        name = statement.name
        if core.catalog.has_schema(name):
            if statement.if_not_exists:
                return  # as MySQL: a note (1007), nothing changed
            raise DatabaseExistsError(f"Can't create database '{name}'; database exists")
        with core.migration():
            with core.storage.transaction():
                core.storage.add_statement("schema", name, statement.sql)
            core.catalog.schemas[name.lower()] = name

    def drop_schema(self, statement: st.DropSchema) -> None:
        """``DROP DATABASE``: its views, then its tables, then the name. Checked first
        (nothing of another database may read or reference what goes: MySQL would leave
        such a view or FOREIGN KEY dangling, rivulet refuses), so that it drops all or
        nothing it could know would fail."""
        core = self.core
        catalog = core.catalog
        name = statement.name
        if is_default(name):
            raise UnsupportedSqlError(f"DROP DATABASE of the default database {name!r} "
                                      "(drop its tables instead)")
        if name.lower() not in catalog.schemas:
            if statement.if_exists:
                return
            raise NoDatabaseToDropError(f"Can't drop database '{name}'; database doesn't exist")
        tables = [t.name for t in list(catalog.tables.values()) if in_schema(t.name, name)]
        views = [n for n in [*(v.name for v in list(catalog.views.values())),
                             *(b.name for b in list(catalog.broken.values()))]
                 if in_schema(n, name) and not is_adhoc(n)]
        going = {n.lower() for n in (*tables, *views)}
        for table in tables:
            outside = [v for v in catalog.users_of_table(table)
                       if not is_adhoc(v) and v.lower() not in going]
            outside += [child.name for child, _ in
                        foreign_keys.referencing(catalog.tables, table)
                        if child.name.lower() not in going]
            if outside:
                raise ProgramError(f"DROP DATABASE {name}: {outside[0]!r}, of another "
                                   f"database, uses its table {table!r} (drop it first)")
        for view in views:
            readers = [v for v in self._view_readers(view)
                       if not is_adhoc(v) and v not in going]
            if readers:
                raise ProgramError(f"DROP DATABASE {name}: view {readers[0]!r}, of another "
                                   f"database, reads its view {view!r} (drop it first)")
        if views:
            self.drop(st.Drop("view", tuple(views), False))
        if tables:  # (referenced ones among them go with their children: no checks)
            self.drop(st.Drop("table", tuple(tables), False), foreign_key_checks=False)
        with core.migration():
            with core.storage.transaction():
                core.storage.remove_statement("schema", name)
            catalog.schemas.pop(name.lower(), None)

    def _add_table(self, schema: TableSchema) -> None:
        catalog = self.core.catalog
        catalog.tables[schema.name.lower()] = schema
        catalog.layouts[schema.name.lower()] = {schema.version: alter.identity(schema)}
        self.core.graph.add_base(schema.name, schema.version)

    def alter_table(self, statement: st.AlterTable, *,
                    foreign_key_checks: bool = True) -> None:
        """ALTER TABLE, applied at once and in O(1) (see rivulet/migrate/alter.py): views
        planned before keep reading the table as it was; rows whose column changed type
        are converted by the writes that touch them and by a background converter."""
        core = self.core
        core.check_open()
        name = statement.change.old.name
        core.lazy.finish(name.lower())  # one change at a time per table
        with core.migration():
            self.before_schema_change(name)
            node = parse_one(statement.sql)
            assert isinstance(node, exp.Alter)  # bound as ALTER TABLE
            change = alter.plan_alter(core.catalog.require_table(name), node)
            self._check_readers(change)
            self._check_foreign_keys(change, foreign_key_checks)
            with core.storage.transaction():
                core.storage.alter(change.old, change.steps)
                self._check_stored_rows(change)
                if any(isinstance(step, DropIndex) for step in change.steps):
                    self._index_needed(change.new)
                core.storage.add_statement("alter", change.old.name, statement.sql)
            self._apply_schema_change(change)
            self._repair_views()
        core.lazy.start()

    def before_schema_change(self, table: str) -> None:
        """Called by ALTER TABLE with commits held off, before anything changes: every
        batch committed so far was written with the table's columns as they still are.
        The dataflow has propagated them all (the migration waits for it); a pipeline
        that copies the log elsewhere (Spark streaming) copies it now."""

    def _check_stored_rows(self, change: alter.SchemaChange) -> None:
        """The rows stored, against the CHECK constraints the change adds (read as the
        change left them, in its storage transaction: one that fails undoes it all)."""
        if not change.added_checks:
            return
        for _, row in self.core.storage.scan(change.new):
            enforce_checks(change.added_checks, row)

    def _check_foreign_keys(self, change: alter.SchemaChange, checks: bool) -> None:
        """The FOREIGN KEYs of the altered table and those referencing it still well formed
        (1005), and (``checks``: the session's foreign_key_checks) the rows stored under a
        FOREIGN KEY it adds each with a parent row (1452, as InnoDB checks them when it
        adds one)."""
        core = self.core
        name = change.old.name.lower()
        tables = {**core.catalog.tables, name: change.new}
        foreign_keys.check_references(change.new, tables, missing_ok=not checks)
        for child, _ in foreign_keys.referencing(tables, name):
            foreign_keys.check_references(tables[child.name.lower()], tables, missing_ok=True)
        added = {fk.name.lower() for fk in change.new.foreign_keys} - {
            fk.name.lower() for fk in change.old.foreign_keys}
        if not added or not checks:
            return
        rows = foreign_keys.StoredRows(core.storage, tables)
        enforcer = foreign_keys.Enforcer(tables, rows, verify=True)
        fills = {step.column.name.lower(): step.fill for step in change.steps
                 if isinstance(step, AddStored)}  # (what stored rows read in added columns)
        old_by_new = {new: old for old, new in enumerate(change.moved) if new is not None}
        for fk in change.new.foreign_keys:
            if fk.name.lower() not in added:
                continue
            only = replace(change.new, foreign_keys=(fk,))
            for _, row in core.storage.read_rows(change.old):
                values = tuple(row[old_by_new[i]] if i in old_by_new
                               else fills.get(change.new.columns[i].name.lower())
                               for i in range(len(change.new.columns)))
                enforcer.statement(only, [(None, values)])

    def _check_readers(self, change: alter.SchemaChange) -> None:
        """Refuse to drop or convert a column that a view reads (its state would be wrong)."""
        catalog = self.core.catalog
        table = change.old.name.lower()
        readers: dict[str, set[str]] = {}
        for plan in catalog.views.values():
            if is_adhoc(plan.name):
                continue  # made again on its next use
            # As built: narrowed to what the view reads (rivulet/plan/prune.py).
            built = self.core.built[plan.name.lower()].plan
            for (scanned, version), columns in scan_columns(built.root).items():
                if scanned != table:
                    continue
                layout = catalog.layouts[table][version]
                hit = {p for c in columns if (p := layout[c]) is not None} & change.changed
                for position in hit:
                    readers.setdefault(change.old.columns[position].name, set()).add(plan.name)
        if readers:
            column, views = sorted(readers.items())[0]
            raise ProgramError(f"column {change.old.name}.{column} is read by view(s) "
                               f"{', '.join(sorted(views))}: drop them first (dropping or "
                               "converting the column would change their answers)")

    def _apply_schema_change(self, change: alter.SchemaChange) -> None:
        """The change in catalog and graph (storage has it already)."""
        catalog = self.core.catalog
        name = change.old.name.lower()
        layouts = {v: alter.compose(layout, change.moved)
                   for v, layout in catalog.layouts[name].items()}
        layouts[change.new.version] = alter.identity(change.new)
        catalog.layouts[name] = layouts
        catalog.tables[name] = change.new
        self._drop_adhoc_views_of(name)
        self.core.graph.add_version(change.new.name, change.new.version, layouts)

    def _drop_adhoc_views_of(self, table: str) -> None:
        """Ad-hoc views reading ``table``: they are made again, on the table as it is now,
        on their next use."""
        users = {u.lower() for u in self.core.catalog.users_of_table(table)}
        for key, view in list(self.adhoc.items()):
            if view.name.lower() in users:
                if view.name.lower() in self.views:
                    self.uninstall_view(view.name)
                del self.adhoc[key]

    def create_table_as(self, statement: st.CreateTableAs) -> None:
        """``CREATE TABLE ... AS SELECT``: the new table holds the SELECT's rows as of now,
        copied key by key when first needed (see rivulet/migrate/copy.py)."""
        core = self.core
        core.check_open()
        core.catalog.check_new_name(statement.plan.target.name)
        # A table being copied is copied whole before another is split off it.
        core.lazy.finish(statement.plan.source.lower(), conversions=False)
        with core.migration():
            create = parse_one(statement.sql)
            assert isinstance(create, exp.Create)  # bound as CREATE TABLE ... AS SELECT
            plan = plan_copy(core.catalog, create)
            # Keys are copied by a lookup on the old table, and in order by the background
            # pass: both read an index on the key (cheap if upqueries made one already).
            self.ensure_index(plan.source, plan.source_key)
            with core.storage.transaction():
                core.storage.create_table(plan.target)
                core.storage.create_tracking(plan.tracking, len(plan.target_key))
                core.storage.add_statement("copy", plan.target.name, statement.sql)
            self._add_table(plan.target)
            core.lazy.copies[plan.target.name.lower()] = plan
            self._repair_views()
        core.lazy.start()

    def create_view(self, name: str, sql: str, *, replace: bool = False) -> View:
        """Add a view to the running program; it serves reads as soon as this returns."""
        core = self.core
        core.check_open()
        core.limits.check_statement(sql)
        query = parse_one(sql)
        sql = sql.strip()
        replacing = replace and (core.catalog.view(name) is not None
                                 or core.catalog.broken_view(name) is not None)
        if not replacing:
            core.limits.check_new_view(len(self.views))
            core.catalog.check_new_name(name)
        plan = Planner(core.catalog).plan_view(name, query, sql)  # reject before any change
        if replacing:
            self.drop_view(name)
        with core.migration():
            view = self.install_view(plan)
            fault_point("migration_build")
            try:
                with core.storage.transaction():
                    core.storage.add_statement("view", name, sql)
            except BaseException:
                self.uninstall_view(name)
                raise
            fault_point("migration_commit")
            self._repair_views()  # (views that read a view of this name)
        return view

    def install_view(self, plan: ir.ViewPlan) -> View:
        """Build a planned view's dataflow and register its handle (under a migration)."""
        core = self.core
        name = plan.name.lower()
        built = self.builder.build_view(plan)
        core.bootstrap.run()  # full state deferred to Spark (held while restoring)
        core.catalog.views[name] = plan
        core.built[name] = built
        view = self.views[name] = View(self.upqueries, built)
        return view

    def uninstall_view(self, name: str) -> None:
        """Take a view's dataflow out of the graph and forget its handle."""
        built = self.core.built.pop(name.lower())
        self.builder.drop_view(built)
        del self.core.catalog.views[name.lower()]
        del self.views[name.lower()]

    def drop(self, statement: st.Drop, *, foreign_key_checks: bool = True) -> None:
        """Drop every name of ``statement``, or none: each is checked first (it exists,
        unless ``IF EXISTS``; no view outside the statement reads a view dropped), then
        views are dropped readers first. ``DROP TABLE`` of names no table has drops the
        others, then fails naming them all (1051), as MariaDB does; the views that read a
        table dropped stay, broken (:meth:`_break_views_of`)."""
        catalog = self.core.catalog
        views = statement.kind == "view"

        def exists(name: str) -> bool:
            if views:
                return (catalog.view(name) is not None
                        or catalog.broken_view(name) is not None)
            return catalog.table(name) is not None

        given = list(dict.fromkeys(statement.names))
        missing = [] if statement.if_exists else [n for n in given if not exists(n)]
        if views and missing:  # (MySQL 8 drops no view then; MariaDB the others, 4092)
            raise NoTableToDropError(_unknown_tables(missing))
        names = [n for n in given if exists(n)]
        dropping = {n.lower() for n in names}
        # A table other tables reference goes only after them (MariaDB refuses `DROP TABLE
        # parent, child` with 1451; rivulet then drops none of them).
        before = {n.lower(): frozenset(m.lower() for m in names[:at])
                  for at, n in enumerate(names)} if foreign_key_checks else {}
        for name in names:
            if views:
                self._check_view_droppable(name, dropping)
            else:
                self._check_table_droppable(name, before.get(name.lower()))
                self._check_no_copy_reads(name, dropping)
        while names:  # a view read by another one of the names goes after it
            name = next(n for n in names
                        if not self._view_readers(n) & (dropping - {n.lower()}))
            if views:
                self.drop_view(name)
            else:
                self.drop_table(name, dropping=before.get(name.lower()), going=dropping)
            names.remove(name)
            dropping.discard(name.lower())
        if missing:
            raise NoTableToDropError(_unknown_tables(missing))

    def _view_readers(self, name: str) -> set[str]:
        """The views (ad-hoc queries among them) that read the view ``name``."""
        return {
            v.name.lower() for v in list(self.core.catalog.views.values())  # a copy: see names()
            if v.name.lower() != name.lower() and name.lower() in _view_sources(v.sql)
        }

    def _check_view_droppable(self, name: str, dropping: Set[str] = frozenset()) -> None:
        catalog = self.core.catalog
        if catalog.view(name) is None and catalog.broken_view(name) is None:
            raise UnknownObjectError(f"unknown view {name!r}")
        dependents = sorted(v for v in self._view_readers(name) - dropping if not is_adhoc(v))
        if dependents:
            raise ProgramError(f"view {name!r} is used by view(s) {', '.join(dependents)}")

    def _check_table_droppable(self, name: str, dropping: Set[str] | None = frozenset()
                               ) -> None:
        """A table may be dropped: it exists and (``dropping``: the tables dropped with it;
        None: foreign_key_checks are off) no other table's FOREIGN KEY references it. (The
        views that read it stay, broken, as MySQL keeps them.)"""
        if self.core.catalog.table(name) is None:
            raise UnknownObjectError(f"unknown table {name!r}")
        children = [] if dropping is None else [
            child for child, _ in foreign_keys.referencing(self.core.catalog.tables, name)
            if child.name.lower() not in dropping | {name.lower()}]
        if children:  # (MariaDB's words; InnoDB would leave the children's keys dangling)
            raise RowReferencedError("Cannot delete or update a parent row: a foreign key "
                                     f"constraint fails (table {children[0].name!r} references "
                                     f"{name!r}: drop it first, or in the same statement)")

    def _check_no_copy_reads(self, name: str, going: Set[str]) -> None:
        """Refuse to drop a table a stored ``CREATE TABLE ... AS SELECT`` reads, unless its
        copy goes too: the program restored makes the copy from it (without it, the
        database would not open again)."""
        for statement in self.core.storage.program():
            if (statement.kind == "copy" and statement.name.lower() not in going
                    and name.lower() in _view_sources(_copy_query(statement.sql))):
                raise UnsupportedSqlError(
                    f"DROP TABLE {name}: table {statement.name!r} was made from it by "
                    "CREATE TABLE ... AS SELECT, and rivulet's stored program makes it "
                    "from it again at open (drop that table first, or in the same "
                    "statement)")

    def drop_view(self, name: str, *, if_exists: bool = False) -> None:
        core = self.core
        broken = core.catalog.broken_view(name)
        if core.catalog.view(name) is None and broken is None and if_exists:
            return
        self._check_view_droppable(name)
        if broken is not None:  # (no dataflow, no reader: its name and text alone)
            with core.migration():
                with core.storage.transaction():
                    core.storage.remove_statement("view", name)
                    core.storage.remove_statement("view_columns", name)
                del core.catalog.broken[name.lower()]
            return
        readers = self._view_readers(name)
        with core.migration():
            with core.storage.transaction():
                core.storage.remove_statement("view", name)
                core.storage.remove_statement("view_columns", name)
            # Ad-hoc queries that read it go first (they are made again on their next use).
            for reader in readers:
                self.uninstall_view(reader)
            self.uninstall_view(name)
            for key, view in list(self.adhoc.items()):
                if view.name.lower() == name.lower() or view.name.lower() in readers:
                    del self.adhoc[key]

    def drop_table(self, name: str, *, if_exists: bool = False,
                   dropping: Set[str] | None = frozenset(),
                   going: Set[str] | None = None) -> None:
        """Drop table ``name`` (``dropping``: as :meth:`_check_table_droppable` takes it;
        ``going``: every table the statement drops, by lower-case name)."""
        core = self.core
        schema = core.catalog.table(name)
        if schema is None and if_exists:
            return
        self._check_table_droppable(name, dropping)
        self._check_no_copy_reads(name, going if going is not None else {name.lower()})
        assert schema is not None
        if any(p.source.lower() == name.lower() for p in core.lazy.copies.values()):
            core.lazy.finish(name.lower())  # a table copied from it needs its rows
        with core.migration():
            self._drop_adhoc_views_of(name)
            users = self._broken_of(self._users_of(name))
            with core.storage.transaction():
                core.storage.drop_table(schema)
                for kind in ("table", "copy", "alter"):
                    core.storage.remove_statement(kind, name)
                copy = core.lazy.copies.pop(name.lower(), None)
                if copy is not None:
                    core.storage.drop_tracking(copy.tracking)
                self._store_columns(users)
            self._break(users)
            del core.catalog.tables[name.lower()]
            del core.catalog.layouts[name.lower()]
            self.index_needs.pop(name.lower(), None)
            core.graph.drop_base(name)

    # ..................................................................... RENAME TABLE

    def rename_tables(self, statement: st.RenameTables) -> None:
        """``RENAME TABLE a TO b[, c TO d ...]``, each pair in turn (``a TO tmp, b TO a,
        tmp TO b`` swaps two tables), all or none: every pair is checked against the names
        as the pairs before it leave them (1146 if the table is missing, 1050 if the new
        name is taken) before anything changes. A table keeps its rows, keys and
        constraints; the views that read it by its old name stay, broken, as MySQL leaves
        them (1356 until a table of that name exists again), and those that read the new
        name come back (:meth:`_repair_views`). Its stored statements are written again
        naming the new name (rivulet/sql/rename.py)."""
        core = self.core
        core.check_open()
        catalog = core.catalog
        for old, _ in statement.pairs:  # rows converted and copied under the old name
            if catalog.table(old) is not None:
                core.lazy.finish(old.lower())
        with core.migration():
            plans = self._rename_plans(statement.pairs, core.storage.program())
            # The views reading each old name (none reads a name a pair before made).
            made: set[str] = set()
            users = []
            for schema, new, _ in plans:
                users.append([] if schema.name.lower() in made
                             else self._broken_of(self._users_of(schema.name)))
                made.add(new.lower())
            with core.storage.transaction():
                for (schema, new, rewritten), readers in zip(plans, users):
                    core.storage.rename_table(schema, new)
                    for seq, sql in rewritten:
                        core.storage.replace_statement(seq, new, sql)
                    self._store_columns(readers)
            for (schema, new, _), readers in zip(plans, users):
                self._rename_in_memory(schema.name, new, readers)
            self._repair_views()

    def _rename_plans(self, pairs: Sequence[tuple[str, str]],
                      program: Sequence[ProgramStatement]
                      ) -> list[tuple[TableSchema, str, list[tuple[int, str]]]]:
        """Each pair checked, in turn, against the names the pairs before it leave, with
        the stored statements of its table written again under the new name: ``(the
        table as the pairs before leave it, new name, [(statement seq, its new text)])``."""
        catalog = self.core.catalog
        tables = {n: t for n, t in catalog.tables.items()}  # lower name -> schema
        made = {n: [s for s in program if s.kind in ("table", "copy", "alter")
                    and s.name.lower() == n] for n in tables}  # (as renamed so far)
        copies = [s for s in program if s.kind == "copy"]
        out = []
        for old, new in pairs:
            schema = tables.get(old.lower())
            if schema is None:
                if catalog.view(old) is not None or catalog.broken_view(old) is not None:
                    raise UnsupportedSqlError(f"RENAME TABLE of view {old!r} (drop it and "
                                              "make it again under the new name)")
                raise UnknownObjectError("Table '{}' doesn't exist".format(
                    ".".join(split_name(old))))
            if (new.lower() in tables or catalog.view(new) is not None
                    or catalog.broken_view(new) is not None):
                raise ObjectExistsError(f"Table '{split_name(new)[1]}' already exists")
            if new.lower().startswith(ir.RESERVED_PREFIX):
                catalog.check_new_name(new)  # (raises: reserved)
            catalog.require_schema(split_name(new)[0])
            self._check_renamable(schema, tables, made[old.lower()], copies)
            rewritten = [(s.seq, renamed_statement(s.sql, new)) for s in made[old.lower()]]
            renamed = renamed_schema(schema, new)
            if _replayed(rewritten, catalog) != _without_conversions(renamed):
                raise UnsupportedSqlError(
                    f"RENAME TABLE {schema.name}: its stored statements, written again "
                    f"under the name {new!r}, would not make the table it is (rename it "
                    "by CREATE TABLE new AS SELECT * FROM old and DROP TABLE old)")
            del tables[old.lower()]
            tables[new.lower()] = renamed
            made[new.lower()] = [replace(s, name=new, sql=sql)
                                 for s, (_, sql) in zip(made.pop(old.lower()), rewritten)]
            out.append((schema, new, rewritten))
        return out

    @staticmethod
    def _check_renamable(schema: TableSchema, tables: Mapping[str, TableSchema],
                         made: Sequence[ProgramStatement],
                         copies: Sequence[ProgramStatement]) -> None:
        """What rivulet cannot rename (1235): a table a FOREIGN KEY references (InnoDB
        follows the rename in the child's key; rivulet's stored children name the old
        name), one made by ``CREATE TABLE ... AS SELECT``, and one such a statement reads
        (the program restored plans the copy again from its source's name)."""
        name = schema.name
        referencing = [child.name for child, _ in foreign_keys.referencing(tables, name)]
        if referencing:
            raise UnsupportedSqlError(f"RENAME TABLE of {name!r}, which a FOREIGN KEY of "
                                      f"{referencing[0]!r} references")
        if any(s.kind == "copy" for s in made):
            raise UnsupportedSqlError(f"RENAME TABLE of {name!r}, made by CREATE TABLE ... "
                                      "AS SELECT")
        for copy in copies:
            if name.lower() in _view_sources(_copy_query(copy.sql)):
                raise UnsupportedSqlError(f"RENAME TABLE of {name!r}, which CREATE TABLE "
                                          f"{copy.name} ... AS SELECT read")

    def _rename_in_memory(self, old: str, new: str, users: Sequence[BrokenView]) -> None:
        """The catalog and graph after table ``old`` became ``new`` (under a migration):
        the views that read it broken, its ad-hoc readers dropped, its base node made
        again under the new name."""
        core = self.core
        catalog = core.catalog
        self._drop_adhoc_views_of(old)
        self._break(users)
        schema = catalog.tables.pop(old.lower())
        del catalog.layouts[old.lower()]
        core.graph.drop_base(old)
        needs = self.index_needs.pop(old.lower(), None)
        if needs is not None:
            self.index_needs[new.lower()] = needs
        self._add_table(renamed_schema(schema, new))

    # ..................................................................... broken views

    def _users_of(self, table: str) -> list[ir.ViewPlan]:
        """The program's views that read ``table`` (those reading them among them: a view
        read by another is planned into it)."""
        catalog = self.core.catalog
        return [catalog.views[v.lower()] for v in catalog.users_of_table(table)
                if not is_adhoc(v)]

    def _broken_of(self, plans: Sequence[ir.ViewPlan]) -> list[BrokenView]:
        """Views about to break, as they will be kept: their columns, and the tables they
        read with the columns those have now (before any of them changes)."""
        catalog = self.core.catalog
        out = []
        for plan in plans:
            read = sorted({n.table.lower(): n.table for n in ir.walk(plan.root)
                           if isinstance(n, ir.Scan)}.values(), key=str.lower)
            tables = tuple((name, tuple(schema.column_names)) for name in read
                           if (schema := catalog.table(name)) is not None)
            out.append(BrokenView(plan.name, plan.sql, tuple(plan.column_names), tables))
        return out

    def _store_columns(self, views: Sequence[BrokenView]) -> None:
        """What is kept of views about to break, in the stored program (in its storage
        transaction): a view restored broken is built again only as it was."""
        storage = self.core.storage
        for view in views:
            storage.remove_statement("view_columns", view.name)
            storage.add_statement("view_columns", view.name, view.record())

    def _break(self, views: Sequence[BrokenView]) -> None:
        """Views whose table goes: their dataflow torn down, their name and text kept
        (rivulet/plan/broken.py), under a migration. Their stored statements stay as they
        are: the program restored makes them broken where their tables are missing."""
        catalog = self.core.catalog
        for view in views:
            self.uninstall_view(view.name)
            catalog.broken[view.name.lower()] = view

    def _repair_views(self) -> None:
        """Plan the broken views again, readers after the views they read (under a
        migration, or while restoring): one that plans to the columns it had is built and
        serves reads again; one whose tables or columns are still missing stays broken
        (1356); one that plans otherwise (``*`` standing for other columns now, or another
        error) is refused with the reason, as rivulet cannot answer it as MySQL would."""
        catalog = self.core.catalog
        progress = True
        while progress:
            progress = False
            for key, broken in list(catalog.broken.items()):
                try:
                    plan = Planner(catalog).plan_view(broken.name, parse_one(broken.sql),
                                                      broken.sql)
                except (UnknownTableError, UnknownColumnError, UnknownObjectError,
                        BrokenViewError):
                    catalog.broken[key] = replace(broken, refusal=None)
                    continue
                except (SqlError, ProgramError) as exc:
                    catalog.broken[key] = replace(broken, refusal=(
                        f"view {broken.name!r} over its tables as they are now: {exc}"))
                    continue
                columns = tuple(plan.column_names)
                if broken.columns is not None and columns != broken.columns:
                    catalog.broken[key] = replace(broken, refusal=(
                        f"view {broken.name!r} was made with the columns "
                        f"({', '.join(broken.columns)}); over its tables as they are now "
                        f"its query answers ({', '.join(columns)}), and rivulet keeps a "
                        "view's query, not the columns its * stood for (drop the view and "
                        "make it again)"))
                    continue
                changed = self._changed_tables(broken)
                if changed:
                    catalog.broken[key] = replace(broken, refusal=(
                        f"view {broken.name!r} reads several tables, and the columns of "
                        f"{', '.join(changed)} are not those it was made over: rivulet "
                        "finds a column by the name the query gives, MySQL by the table "
                        "it stood for then (drop the view and make it again)"))
                    continue
                del catalog.broken[key]
                self.install_view(plan)
                progress = True

    def _changed_tables(self, broken: BrokenView) -> list[str]:
        """Of a view of several tables, those whose columns now are not the columns they
        had when it broke (a view of one table finds each column in it, as MySQL does)."""
        if broken.tables is None or len(broken.tables) < 2:
            return []
        catalog = self.core.catalog
        return [name for name, columns in broken.tables
                if (schema := catalog.table(name)) is None
                or tuple(schema.column_names) != columns]

    # ..................................................................... views

    def view(self, name: str) -> View:
        """The handle of view ``name``."""
        self.core.check_open()
        found = self.views.get(name.lower())
        if found is None:
            broken = self.core.catalog.broken_view(name)
            if broken is not None:
                raise broken.error()
            raise UnknownObjectError(f"unknown view {name!r}")
        return found

    def names(self) -> list[str]:
        """The program's views (not the ad-hoc ones), as named."""
        views = list(self.views.values())  # a copy: views come and go on other threads
        return [v.plan.name for v in views if not is_adhoc(v.plan.name)]

    def is_current(self, view: View) -> bool:
        """Whether ``view`` is still the program's view of its name (not dropped or
        replaced since it was looked up)."""
        return self.views.get(view.name.lower()) is view

    def answer(self, sql: str, parsed: exp.Expr | None = None,
               params: Sequence[Any] = ()) -> list[tuple]:
        """The rows of the ad-hoc SELECT ``sql`` for ``params``: from its view (see
        :meth:`prepare`), or, for a query of no table whose ``?`` are values (``SELECT ?``,
        :func:`constant_with_parameters`), computed with them."""
        view = self.adhoc.get(sql)
        if view is None:
            node = parse_one(sql) if parsed is None else parsed
            if has_limit_params(node):
                limited = bind_limit(sql, params)
                if limited is not None:  # (rivulet/sql/limit_params.py)
                    return self.answer(limited[0], params=limited[1])
            if read_once(node):
                return self.constant_read(node, params)[0]
            view = self.prepare(sql, node, params=params)
        return view.lookup(*params)

    def prepare_read(self, sql: str, params: Sequence[Any], parsed: exp.Expr | None = None
                     ) -> tuple[View, Sequence[Any]]:
        """The view of the ad-hoc SELECT ``sql`` and the parameters its read takes: those
        given, less the values of a top-level ``LIMIT ?`` / ``OFFSET ?``, which are written
        into the view's statement (rivulet/sql/limit_params.py)."""
        view = self.adhoc.get(sql)
        if view is not None:
            return view, params
        node = parse_one(sql) if parsed is None else parsed
        if has_limit_params(node):
            limited = bind_limit(sql, params)
            if limited is not None:
                return self.prepare(limited[0], params=limited[1]), limited[1]
        return self.prepare(sql, node, params=params), params

    def constant_plan(self, node: exp.Expr, params: Sequence[Any]) -> ir.ViewPlan:
        """A read no view keeps, planned with its ``?`` values and its time functions
        (read once, now: rivulet/sql/clock.py) as constants: a query of no table with
        ``?`` among its values (no key could find its answer again), or one that reads
        the clock (its answer changes with no write). rivulet/plan/bound.py does the same
        for reads a view's keys cannot answer."""
        self.core.check_open()
        marks = [n for n in node.dfs() if isinstance(n, exp.Placeholder)]
        if len(marks) != len(params):
            raise ParameterCountError(f"statement takes {len(marks)} parameter(s), got "
                                      f"{len(params)}")
        bound = {id(mark): value for mark, value in zip(marks, params)}
        if reads_clock(node):
            node = stamp(node.copy(), statement_time())
            marks = [n for n in node.dfs() if isinstance(n, exp.Placeholder)]
            bound = {id(mark): value for mark, value in zip(marks, params)}
        return Planner(self.core.catalog, bound=bound).plan_view(
            f"{ADHOC_PREFIX}constant", node, node.sql(dialect=DIALECT))

    def constant_read(self, node: exp.Expr, params: Sequence[Any]
                      ) -> tuple[list[tuple], tuple[ir.ColumnInfo, ...]]:
        """A read no view keeps (:meth:`constant_plan`), computed in throwaway state from
        the base tables. Its rows and result columns."""
        plan = self.constant_plan(node, params)
        return self.computed_rows(plan), plan.root.columns[: plan.visible]

    def computed_rows(self, plan: ir.ViewPlan) -> list[tuple]:
        """The rows of a plan with no parameter, computed whole from the base tables (at
        the graph's LSN) in throwaway state."""
        built = self.upqueries.computed(plan)
        assert isinstance(built.state, KeyedReader)  # (no range parameter: no parameter)
        rows = built.state.get(())
        if not rows or rows is MISSING:
            rows = built.finish(built.default_rows((), True)) if built.default_rows else ()
        return list(rows)

    def prepare(self, sql: str, parsed: exp.Expr | None = None, *,
                params: Sequence[Any] | None = None) -> View:
        """The view that answers the ad-hoc SELECT ``sql``, made on first use (``parsed``:
        its syntax tree, if the caller parsed it already; it becomes the view's). With
        ``params``, the values a read will pass: a wrong number of them is refused before
        the view is made, so that the failed read changes nothing.

        Queries that differ only in the length of an ``IN (?, ...)`` list, or in spacing
        and case, share one view (Noria's MySQL adapter does the same); of a query with
        several lists, the lengths are part of the view's query.
        """
        self.core.check_open()
        view = self.adhoc.get(sql)
        if view is None:
            view = self.adhoc[sql] = self._adhoc_view(sql, parsed, params)
        return view

    def _adhoc_view(self, sql: str, parsed: exp.Expr | None,
                    params: Sequence[Any] | None) -> View:
        core = self.core
        core.limits.check_statement(sql)
        node = parse_one(sql) if parsed is None else parsed
        # Every set operation goes to the planner, which names the ones it refuses (EXCEPT,
        # INTERSECT), rather than calling them no SELECT.
        if not isinstance(node, (exp.Select, exp.SetOperation)):
            raise SqlError("query() takes a SELECT statement")
        if lock_calls(node) is not None:
            raise UnsupportedSqlError("GET_LOCK and the other named-lock functions act on a "
                                      "session: call them on a connection (rivulet.connect or "
                                      "the MySQL server), not db.query or db.execute")
        lists = [in_node for in_node in node.find_all(exp.In)
                 if in_node.expressions and all(isinstance(e, exp.Placeholder)
                                                for e in in_node.expressions)]
        # (``?`` under an OR, ``a = ? OR a = ?``, make a list that takes as many values as
        # written, and so does every list beside it: rivulet/plan/params.py)
        if len(lists) == 1 and not any(mark.find_ancestor(exp.Or) is not None
                                       for mark in node.find_all(exp.Placeholder)):
            # (of several lists each takes as many values as written, rivulet/plan/params.py:
            # the counts keep apart the views of texts with other counts)
            lists[0].set("expressions", [exp.Placeholder()])
        normalized = node.sql(dialect=DIALECT)
        digest = hashlib.sha1(normalized.encode()).hexdigest()[:16]
        name = f"{ADHOC_PREFIX}{digest}"
        view = self.views.get(name)
        if view is None:
            # Planned before any change: a query that cannot be answered changes nothing.
            plan = Planner(core.catalog).plan_view(name, node, normalized)
            if params is not None:
                values_by_param(plan, params)  # raises ParameterCountError
            with core.migration():
                view = self.views.get(name)
                if view is None:
                    core.limits.check_new_view(len(self.views))
                    view = self.install_view(plan)
        self.await_ready(view)
        return view

    def await_ready(self, view: View) -> None:
        """Return once ``view`` answers what its tables hold: an ad-hoc view is read as
        soon as it is made. The dataflow builds a view whole (or partial, filled by reads)
        before it is installed, so here at once; a pipeline that fills a view's state after
        installing it (Spark streaming) waits for it here."""


def read_once(node: exp.Expr) -> bool:
    """Whether the SELECT ``node`` is answered once, at its statement, by no view
    (:meth:`Program.constant_plan`): a query of no table with ``?`` among its values, or
    one that reads the clock."""
    return constant_with_parameters(node) or (
        isinstance(node, (exp.Select, exp.SetOperation)) and reads_clock(node))


def constant_with_parameters(node: exp.Expr) -> bool:
    """A SELECT of no table (no FROM, or FROM DUAL) with ``?`` in it."""
    return (isinstance(node, (exp.Select, exp.SetOperation))
            and all(is_dual(t) for t in node.find_all(exp.Table))
            and any(isinstance(n, exp.Placeholder) for n in node.walk()))


def _replayed(statements: Sequence[tuple[int, str]], catalog: Any) -> TableSchema:
    """The table a table's stored ``CREATE TABLE`` and ``ALTER TABLE`` statements make, as
    :meth:`Program.restore` replays them."""
    schema: TableSchema | None = None
    for _, sql in statements:
        if schema is None:
            bound = st.bind_text(sql, catalog)
            assert isinstance(bound, st.CreateTable)  # (a table's first statement)
            schema = bound.schema
        else:
            schema = alter.replay(schema, sql).new
    assert schema is not None
    return _without_conversions(schema)


def _without_conversions(schema: TableSchema) -> TableSchema:
    """``schema`` with its columns' conversions taken as done (what a comparison of a
    table restored with the table running leaves aside: conversions resume at open)."""
    return replace(schema, columns=tuple(replace(c, conversion=None) for c in schema.columns))


def _copy_query(sql: str) -> str:
    """The SELECT of a stored ``CREATE TABLE ... AS SELECT``."""
    node = parse_one(sql)
    query = node.args.get("expression") if isinstance(node, exp.Create) else None
    return query.sql(dialect=DIALECT) if isinstance(query, exp.Expr) else ""


@functools.lru_cache(maxsize=16_384)
def _view_sources(sql: str) -> frozenset[str]:
    """The tables and views a view's query reads, by lower-case name: every table it
    names but those that name one of its CTEs (a CTE named like a view is not that view).
    Kept by text: a DROP asks it of every view for each view it drops (a DROP DATABASE of
    120 tables read by 950 ad-hoc queries parsed 57,000 texts, 7 minutes, before)."""
    try:
        tree = parse_one(sql)
    except SqlError:
        return frozenset()
    return frozenset(t.name.lower() for t in tree.find_all(exp.Table) if not _names_cte(t))


def _names_cte(table: exp.Table) -> bool:
    """Whether ``table`` names a CTE where it is: one of a WITH of a query around it, or,
    inside a CTE's query, one defined before that CTE in its WITH (as the planner scopes
    them: rivulet/plan/ctes.py)."""
    if table.args.get("db"):
        return False
    name = table.name.lower()
    child: exp.Expr = table
    node = table.parent
    while node is not None:
        if isinstance(node, exp.With):
            at = next(i for i, cte in enumerate(node.expressions) if cte is child)
            if any(cte.alias_or_name.lower() == name for cte in node.expressions[:at]):
                return True
        elif isinstance(node, exp.Query) and child is not node.args.get("with_"):
            with_ = node.args.get("with_")
            if with_ is not None and any(cte.alias_or_name.lower() == name
                                         for cte in with_.expressions):
                return True
        child, node = node, node.parent
    return False


def _unknown_tables(names: Sequence[str]) -> str:
    """MySQL's 1051 message for ``DROP TABLE``/``DROP VIEW`` of names that are none."""
    return "Unknown table '{}'".format(",".join(".".join(split_name(n)) for n in names))
