"""The program as the planner sees it: tables and planned views, by case-insensitive name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from rivulet.errors import (
    ObjectExistsError,
    ProgramError,
    ReservedNameError,
    UnknownDatabaseError,
    UnknownObjectError,
)
from rivulet.plan.broken import BrokenView
from rivulet.plan.ir import RESERVED_PREFIX, ViewPlan
from rivulet.plan.planner import Planner
from rivulet.sql.ddl import table_schema
from rivulet.sql.parse import parse_one
from rivulet.sql.schemas import DEFAULT_SCHEMA, is_default, split_name
from rivulet.values.schema import TableSchema


@dataclass
class Catalog:
    tables: dict[str, TableSchema] = field(default_factory=dict)
    views: dict[str, ViewPlan] = field(default_factory=dict)
    #: Table -> version -> where that version's columns are in the newest version's rows,
    #: for every version a view still reads (see rivulet/migrate/alter.py).
    layouts: dict[str, dict[int, tuple[int | None, ...]]] = field(default_factory=dict)
    #: Tables being copied lazily (CREATE TABLE ... AS SELECT), by lower-cased name -> the
    #: copy's plan (rivulet/migrate/copy.py).
    copies: dict[str, Any] = field(default_factory=dict)
    #: The databases (schemas) made by ``CREATE DATABASE``, by lower-cased name -> the name
    #: as created; the default one (:data:`~rivulet.sql.schemas.DEFAULT_SCHEMA`) is always
    #: there and not in it. A table or view of one is catalogued as ``schema.name``
    #: (rivulet/sql/schemas.py).
    schemas: dict[str, str] = field(default_factory=dict)
    #: Views whose tables are gone (``DROP TABLE``, ``RENAME TABLE``), by lower-cased name:
    #: named, not planned, until the tables exist again (rivulet/plan/broken.py). A name
    #: is in :attr:`views` or here, never both.
    broken: dict[str, BrokenView] = field(default_factory=dict)

    @classmethod
    def from_sql(cls, *statements: str) -> Catalog:
        """A catalog of ``CREATE TABLE`` and ``CREATE VIEW`` statements, views planned as
        the engine plans them (:meth:`plan`): a small program for doctests and for tests of
        the planner and of the optimizer's rules, without a database."""
        catalog = cls()
        for text in statements:
            node = parse_one(text)
            kind = str(node.args.get("kind") or "").upper()
            if isinstance(node, exp.Create) and kind == "TABLE":
                schema = table_schema(node)
                catalog.tables[schema.name.lower()] = schema
            elif isinstance(node, exp.Create) and kind == "VIEW":
                name = node.this.name
                catalog.views[name.lower()] = catalog.plan(node.expression.sql(), name)
            else:
                raise ProgramError(f"not a CREATE TABLE or CREATE VIEW: {text!r}")
        return catalog

    def plan(self, sql: str, name: str = "v") -> ViewPlan:
        """The plan of the SELECT ``sql`` as view ``name``, as the planner makes it (not
        optimized: see rivulet/plan/optimize.py)."""
        return Planner(self).plan_view(name, parse_one(sql), sql)

    def table(self, name: str) -> TableSchema | None:
        return self.tables.get(name.lower())

    def view(self, name: str) -> ViewPlan | None:
        return self.views.get(name.lower())

    def broken_view(self, name: str) -> BrokenView | None:
        return self.broken.get(name.lower())

    def require_table(self, name: str) -> TableSchema:
        table = self.table(name)
        if table is None:
            hint = " (it is a view; views are read-only)" if self.view(name) else ""
            raise UnknownObjectError(f"unknown table {name!r}{hint}")
        return table

    def require_view(self, name: str) -> ViewPlan:
        view = self.view(name)
        if view is None:
            raise UnknownObjectError(f"unknown view {name!r}")
        return view

    def has_schema(self, name: str) -> bool:
        return is_default(name) or name.lower() in self.schemas

    def require_schema(self, name: str) -> None:
        if not self.has_schema(name):
            raise UnknownDatabaseError(f"Unknown database '{name}'")

    def schema_names(self) -> list[str]:
        """Every database rivulet has, the default one among them, sorted."""
        return sorted([DEFAULT_SCHEMA, *self.schemas.values()], key=str.lower)

    def check_new_name(self, name: str) -> None:
        self.require_schema(split_name(name)[0])
        if name.lower().startswith(RESERVED_PREFIX):
            raise ReservedNameError(f"names starting with {RESERVED_PREFIX!r} are reserved: "
                                    f"{name!r}")
        if self.table(name) is not None:
            raise ObjectExistsError(f"a table named {name!r} already exists")
        if self.view(name) is not None or self.broken_view(name) is not None:
            raise ObjectExistsError(f"a view named {name!r} already exists")

    def users_of_table(self, name: str) -> list[str]:
        """Views that read table ``name``."""
        from rivulet.plan.ir import Scan, walk

        return [
            v.name for v in list(self.views.values())  # (views come and go on other threads)
            if any(isinstance(n, Scan) and n.table.lower() == name.lower() for n in walk(v.root))
        ]
