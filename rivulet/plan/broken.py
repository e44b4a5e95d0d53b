"""A view whose tables are gone: kept by name and text until they exist again.

MySQL lets ``DROP TABLE t`` (and ``RENAME TABLE t TO u``) leave the views that read ``t``
behind: each stays defined, listed by ``SHOW TABLES`` and ``information_schema``, and every
read of it fails with 1356 until a table of that name with the columns it needs exists
again, when it works again. ORM test suites rely on it (their teardown drops tables in any
order). rivulet holds such a view as a :class:`BrokenView`: no plan and no dataflow, only
what it takes to plan it again (its text) and to know the plan is the view it was (its
columns: MySQL stores ``SELECT *`` as the columns it stood for, so a table made again with
other columns, or in another order, must not change the view's columns).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from rivulet.errors import BrokenViewError, UnsupportedSqlError
from rivulet.sql.schemas import split_name


@dataclass(frozen=True)
class BrokenView:
    """A view of the program that cannot be planned over the tables as they are now."""

    #: Its name, as created.
    name: str
    #: Its SELECT, as created (what CREATE VIEW stored).
    sql: str
    #: The names of its columns when it last ran (None: not known, it has not run since
    #: it was restored): a plan over the tables as they are now must answer the same.
    columns: tuple[str, ...] | None
    #: The tables it read when it last ran, each with its columns then, by name (None:
    #: not known). Of a view of several tables, a plan over them as they are now is the
    #: view only if their columns are the same: rivulet resolves an unqualified column
    #: by the query's text, where MySQL stored the table each stood for.
    tables: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    #: Why it cannot be read when it is no MySQL 1356 (its tables exist, but rivulet
    #: cannot answer it as MySQL would), else None.
    refusal: str | None = None

    def record(self) -> str:
        """What the stored program keeps of it (``view_columns``), as JSON."""
        return json.dumps({"columns": self.columns,
                           "tables": None if self.tables is None else dict(self.tables)})

    @classmethod
    def recorded(cls, name: str, sql: str, record: str | None) -> BrokenView:
        """A view restored broken, with what :meth:`record` kept of it (None: nothing)."""
        kept = json.loads(record) if record is not None else {}
        columns, tables = kept.get("columns"), kept.get("tables")
        return cls(name, sql, None if columns is None else tuple(columns),
                   None if tables is None else tuple(
                       (table, tuple(names)) for table, names in tables.items()))

    def error(self) -> BrokenViewError | UnsupportedSqlError:
        """What a read of it raises."""
        if self.refusal is not None:
            return UnsupportedSqlError(self.refusal)
        return broken_view_error(self.name)


def broken_view_error(name: str) -> BrokenViewError:
    """MySQL's words for a read of a view whose tables or columns are gone (1356)."""
    database, bare = split_name(name)
    return BrokenViewError(f"View '{database}.{bare}' references invalid table(s) or "
                           "column(s) or function(s) or definer/invoker of view lack rights "
                           "to use them")
