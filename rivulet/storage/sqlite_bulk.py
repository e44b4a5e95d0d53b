"""Many rows read or written by one SQLite statement step: the lazy background work's I/O.

Why: Python's ``sqlite3`` releases the GIL around every ``sqlite3_step``, one per row
fetched and one per row of an ``executemany``. A thread that must get the GIL back while
another thread runs Python without pause (a reader looping over cached view lookups) may
wait up to the switch interval (5 ms by default) each time: the more so as the reader's
core is idle and wakes it at once. The background conversion's chunk of 1,000 rows (a
SELECT and an ``executemany``: 1,003 statements run, 2,000 steps) took 220-370 ms
against 8-10 ms of CPU with such a reader on a core of its own (a quick
``bench.schema_change`` once spent 160 s converting 300,000 rows). Here a chunk's rows
come back in one step (the rows aggregated into one JSON text inside SQLite) and go in
with one statement (a multi-row ``VALUES`` list of bound parameters, a power of two rows
at a time: see :func:`slices`): the same chunk runs 9 statements, BEGIN and COMMIT
included, and takes 47-50 ms (17 ms with bench.schema_change's 0.5 ms switch interval,
against 30-35 ms).

Exactness: JSON holds integers, text and NULL exactly; a REAL (JSON has SQLite print it
with 15 digits) or a BLOB (JSON has none) makes :func:`fetch_at_once` read that query
again row by row, so every value comes back as SQLite stores it. Bound parameters are
exact for every type.
"""

from __future__ import annotations

import json
import operator
import sqlite3
from collections.abc import Sequence
from typing import Any

#: Bound parameters per statement at most: SQLite's default limit since 3.32 (a build may
#: allow more; none allows fewer since then).
MAX_PARAMETERS = 32766
#: Rows per multi-row statement at most (see :func:`slices`).
MAX_ROWS = 512


def fetch_at_once(conn: sqlite3.Connection, sql: str, params: Sequence[Any], width: int,
                  *, sorted_by: int = 0) -> list[tuple]:
    """The rows of the SELECT ``sql`` (``width`` columns) in one step, each a tuple as
    ``fetchall`` gives it. The aggregate sees them in no promised order: with ``sorted_by``
    they are sorted here by their first ``sorted_by`` columns, ascending, as SQLite sorts
    them (``sql`` must be ordered that way if its LIMIT is to keep the first ones).
    Python orders integers, and texts by code point (the BINARY collation's UTF-8 byte
    order; rivulet declares no other), as SQLite does; columns that mix kinds or hold
    NULL, which Python does not order so, are read again row by row in SQLite's order."""
    names = [f"c{i}" for i in range(width)]
    odd = " OR ".join(f"typeof({n}) IN ('real', 'blob')" for n in names)
    values = ", ".join(f"CASE WHEN typeof({n}) IN ('real', 'blob') THEN NULL ELSE {n} END"
                       for n in names)
    text, inexact = conn.execute(
        f"WITH _rivulet_rows({', '.join(names)}) AS ({sql}) "
        f"SELECT json_group_array(json_array({values})), total({odd}) FROM _rivulet_rows",
        params).fetchone()
    if not inexact:
        rows = list(map(tuple, json.loads(text)))
        if not sorted_by:
            return rows
        try:
            rows.sort(key=operator.itemgetter(*range(sorted_by)))
            return rows
        except TypeError:  # (an int beside a text, or NULL)
            pass
    return conn.execute(sql, params).fetchall()  # SQLite's own order, if ``sql`` has one


def values_list(rows: Sequence[Sequence[Any]], width: int) -> tuple[str, list[Any]]:
    """``VALUES (?, ...), ...`` for ``rows`` of ``width`` values, and its parameters."""
    row = f"({', '.join('?' * width)})"
    return f"VALUES {', '.join([row] * len(rows))}", [v for r in rows for v in r]


def slices(rows: Sequence[Sequence[Any]], width: int) -> list[Sequence[Sequence[Any]]]:
    """``rows`` cut into slices of a power of two rows, each at most :data:`MAX_ROWS` and
    binding at most :data:`MAX_PARAMETERS` values. Few distinct sizes, so few distinct
    statement texts: ``sqlite3`` keeps each text's compiled statement in its cache (128 of
    them), and a statement of any row count held up to 128 large ones (bench.schema_change's
    resident memory grew by 70 MB)."""
    most = max(1, min(MAX_ROWS, MAX_PARAMETERS // max(1, width)))
    out = []
    at = 0
    while at < len(rows):
        size = 1 << (min(most, len(rows) - at).bit_length() - 1)
        out.append(rows[at:at + size])
        at += size
    return out


def insert_at_once(conn: sqlite3.Connection, table: str, columns: Sequence[str],
                   rows: Sequence[Sequence[Any]]) -> None:
    """``rows`` into ``table`` (quoted name; quoted ``columns``) by multi-row INSERTs, one
    statement per :func:`slices` slice. A statement that fails stores none of its rows;
    the slices before it stay, for the caller's savepoint to undo."""
    for part in slices(rows, len(columns)):
        listed, params = values_list(part, len(columns))
        conn.execute(f"INSERT INTO {table} ({', '.join(columns)}) {listed}", params)


__all__ = ["MAX_PARAMETERS", "MAX_ROWS", "fetch_at_once", "insert_at_once", "slices", "values_list"]
