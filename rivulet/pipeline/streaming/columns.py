"""The names of a table's columns in the log's segments: stable across ALTER TABLE.

Why: a segment is written once, with the table's columns as they are when it is shipped,
and read again and again by streams whose views were planned on some version of the table
(``ir.Scan.version``), before or after changes. Positional names (``c0, c1, ..``) would
make ``ADD COLUMN ... FIRST`` or a ``DROP COLUMN`` before a column a view reads feed that
view another column's values, both in segments shipped after the change and, after a
restart, in its whole query. So a column is named by where it was born: its position ``i``
in the table's first version is ``c<i>`` (an unaltered table keeps the names it always
had), and a column added by the change that made version ``v``, at position ``i`` of that
version, is ``c<i>_v<v>``. Renames, moves and other columns' changes keep it; a dropped
column's name is never given again. A view's scan reads the names of its version's
columns (:func:`scan_names`); one the table no longer has reads NULL (the engine refuses
to drop a column a view reads, so that is only a column the plan carries unread).

The names come from the catalog's layouts (rivulet/migrate/alter.py): every version of a
table since its creation, each with the newest positions of its columns. A change of a
column's type keeps its name: those the engine allows under a view keep its values and
its kind, so its segments' Parquet type too.
"""

from __future__ import annotations

from collections.abc import Mapping

#: A table version's columns as positions in the newest version (None: dropped since).
Layout = tuple[int | None, ...]


def column_names(layouts: Mapping[int, Layout], width: int) -> list[str]:
    """The segment name of each column of the table's newest version (``width`` columns)."""
    names: list[str | None] = [None] * width
    first = min(layouts)
    for version in sorted(layouts):
        for i, position in enumerate(layouts[version]):
            if position is not None and names[position] is None:
                names[position] = f"c{i}" if version == first else f"c{i}_v{version}"
    missing = [p for p, n in enumerate(names) if n is None]
    if missing:  # (the newest version's own layout names every column)
        raise ValueError(f"columns {missing} are in no version's layout")
    return [n for n in names if n is not None]


def scan_names(layouts: Mapping[int, Layout], width: int, version: int) -> list[str | None]:
    """The segment names of the columns of table version ``version`` (None: dropped)."""
    names = column_names(layouts, width)
    return [None if p is None else names[p] for p in layouts[version]]


def positional_names(schema_width: int) -> list[str]:
    """``c0..``: the names of a table that was never altered (one version)."""
    return [f"c{i}" for i in range(schema_width)]


__all__ = ["Layout", "column_names", "positional_names", "scan_names"]
