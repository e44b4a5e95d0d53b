"""The errors rivulet raises: one hierarchy, so callers can catch by concern.

Every error message names the problem; SQL errors also name the construct and where it is
(line and column of the statement text), so a user can fix the query without guessing.
"""

from __future__ import annotations


class RivuletError(Exception):
    """Base class of every error rivulet raises on purpose."""


class SqlError(RivuletError):
    """A statement that rivulet cannot parse, does not support, or that names unknown things."""

    def __init__(self, message: str, *, line: int | None = None, col: int | None = None) -> None:
        self.line = line
        self.col = col
        where = f" (line {line}, column {col})" if line is not None else ""
        super().__init__(f"{message}{where}")


class UnsupportedSqlError(SqlError):
    """Valid SQL that rivulet does not (yet) support."""


class SchemaError(RivuletError):
    """A write that violates the schema: type, NOT NULL, length, unknown column."""


class ConstraintError(RivuletError):
    """A write that violates a key constraint (duplicate primary key)."""


class StorageError(RivuletError):
    """The storage layer could not carry out a write (the write is rejected whole)."""


class ProgramError(RivuletError):
    """A change to the program that conflicts with what exists (duplicate or missing name)."""


class ClosedError(RivuletError):
    """The database was used after close()."""


class UpqueryTimeout(RivuletError):
    """A read that missed could not be answered in time (``upquery_timeout``)."""
