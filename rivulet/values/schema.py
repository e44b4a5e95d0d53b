"""Column types, table schemas, and the checks every written row goes through.

rivulet keeps a small set of value kinds (:class:`Kind`; docs/design.md, "Data model");
every SQL type maps onto one of them. Rows are checked and converted once, on write, so
that operators downstream can trust the Python type of every value and never re-check it.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import math
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rivulet.errors import (
    CheckViolatedError,
    DataTruncatedError,
    IncorrectTimeError,
    InvalidJsonError,
    NoSuchColumnError,
    NotAMemberError,
    NotNullError,
    OutOfRangeError,
    SchemaError,
    TooLongError,
    TruncatedValueError,
)
from rivulet.values.clock import now_at
from rivulet.values.datetexts import stored_temporal
from rivulet.values.enumerations import compared_member, enum_values, member_for
from rivulet.values.json_text import document
from rivulet.values.numerals import decimal_text, double_text
from rivulet.values.times import clipped, compared_micros, from_micros, round_micros, time_micros

Row = tuple[Any, ...]


class Kind(enum.StrEnum):
    """The value kinds of rivulet, named by the Python type that carries them.

    A ``StrEnum``: each member *is* its string (``Kind.INT == "int"``, same hash), so kinds
    compare with, and look up dictionaries keyed by, the plain strings older code and data
    use, and ``str()``/f-strings/``json.dumps`` give the bare value (``"int"``).
    """

    INT = "int"
    FLOAT = "float"
    DECIMAL = "decimal"
    STR = "str"
    BYTES = "bytes"
    BOOL = "bool"
    DATE = "date"
    DATETIME = "datetime"
    #: A member of an ENUM column: a ``str`` that knows its index
    #: (:class:`~rivulet.values.enumerations.EnumValue`); read out as plain ``str``.
    ENUM = "enum"
    #: A TIME: ``datetime.timedelta`` (-838:59:59 to 838:59:59), as PyMySQL gives it.
    TIME = "time"


INT, FLOAT, DECIMAL, STR, BYTES, BOOL, DATE, DATETIME = (
    Kind.INT, Kind.FLOAT, Kind.DECIMAL, Kind.STR, Kind.BYTES, Kind.BOOL, Kind.DATE, Kind.DATETIME
)
ENUM, TIME = Kind.ENUM, Kind.TIME
KINDS: tuple[Kind, ...] = tuple(Kind)
NUMERIC_KINDS: frozenset[Kind] = frozenset({INT, FLOAT, DECIMAL, BOOL})

#: Value ranges of MySQL's integer types (strict mode rejects values outside them).
#: BIGINT UNSIGNED stops at 2**63 - 1 here: SQLite stores signed 64-bit integers.
INT_RANGES: dict[str, tuple[int, int]] = {
    "TINYINT": (-(2**7), 2**7 - 1), "UTINYINT": (0, 2**8 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1), "USMALLINT": (0, 2**16 - 1),
    "MEDIUMINT": (-(2**23), 2**23 - 1), "UMEDIUMINT": (0, 2**24 - 1),
    "INT": (-(2**31), 2**31 - 1), "INTEGER": (-(2**31), 2**31 - 1), "UINT": (0, 2**32 - 1),
    "BIGINT": (-(2**63), 2**63 - 1), "UBIGINT": (0, 2**63 - 1), "SERIAL": (1, 2**63 - 1),
}

#: The most bytes a value of these types takes (MySQL's strict mode refuses a longer one).
MAX_BYTES: dict[str, int] = {
    "TINYTEXT": 2**8 - 1, "TINYBLOB": 2**8 - 1, "TEXT": 2**16 - 1, "BLOB": 2**16 - 1,
    "MEDIUMTEXT": 2**24 - 1, "MEDIUMBLOB": 2**24 - 1,
}
#: A TIMESTAMP's range: 1970-01-01 00:00:01 to 2038-01-19 03:14:07.999999 (UTC, rivulet's
#: only time zone).
TIMESTAMP_BOUNDS = (dt.datetime(1970, 1, 1, 0, 0, 1), dt.datetime(2038, 1, 19, 3, 14, 7, 999999))

#: SQL type names (as sqlglot spells them, upper case) to value kinds.
SQL_TYPE_KINDS: dict[str, Kind] = {
    **dict.fromkeys(
        ["INT", "INTEGER", "BIGINT", "SMALLINT", "MEDIUMINT", "TINYINT", "UINT", "UBIGINT",
         "USMALLINT", "UMEDIUMINT", "UTINYINT", "SERIAL"],
        INT,
    ),
    **dict.fromkeys(["FLOAT", "DOUBLE", "REAL"], FLOAT),
    **dict.fromkeys(["DECIMAL", "NUMERIC", "UDECIMAL", "BIGDECIMAL"], DECIMAL),
    **dict.fromkeys(
        ["CHAR", "VARCHAR", "NCHAR", "NVARCHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT"],
        STR,
    ),
    "ENUM": ENUM,
    "TIME": TIME,
    **dict.fromkeys(
        ["BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY"], BYTES
    ),
    "BOOLEAN": BOOL,
    "DATE": DATE,
    **dict.fromkeys(["DATETIME", "TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMPLTZ"], DATETIME),
}


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table: its name, value kind and constraints."""

    name: str
    kind: Kind
    nullable: bool = True
    default: Any = None
    #: Declared maximum length of a string or byte column (``VARCHAR(n)``), if any.
    length: int | None = None
    #: Declared scale of a DECIMAL column, if any.
    scale: int | None = None
    #: Smallest and largest value of an integer column (or of a TIMESTAMP: 1970 to 2038;
    #: of a DECIMAL UNSIGNED, 0 and the first magnitude its precision cannot hold: see
    #: :func:`unsigned_decimal_bounds`).
    bounds: tuple[Any, Any] | None = None
    #: The type as written in the program, kept for ``SHOW CREATE`` and error messages.
    sql_type: str = ""
    #: Set while the column's values are being converted to a new type (ALTER TABLE).
    conversion: Conversion | None = None
    #: AUTO_INCREMENT: an INSERT that gives it NULL or 0 (or no value) gets the next number.
    auto_increment: bool = False
    #: Declared precision of a DECIMAL column (total digits), if any.
    precision: int | None = None
    #: The members of an ENUM column, in declaration order (member i has index i + 1).
    members: tuple[str, ...] = ()
    #: Fractional digits a TIME, DATETIME or TIMESTAMP column keeps (``TIME(3)``: 3).
    fsp: int = 0
    #: CHAR(n) and BINARY(n): fixed width. MySQL pads what it stores to n characters or
    #: bytes: a CHAR reads back without trailing spaces, a BINARY with its zero bytes.
    padded: bool = False
    #: The most bytes a TINYTEXT/TEXT/MEDIUMTEXT (or BLOB) value takes (LONGTEXT: no limit).
    max_bytes: int | None = None
    #: FLOAT: single precision. A value is stored as the nearest 4-byte float (so it
    #: computes and compares as MySQL's does: a stored 0.1 is 0.10000000149011612) and shown
    #: as the shortest text that reads back as that float (0.1), as MySQL shows a FLOAT.
    single: bool = False
    #: ``COMMENT 'text'``: shown by SHOW CREATE TABLE, SHOW FULL COLUMNS and
    #: information_schema.COLUMNS (ORMs reflect it).
    comment: str = ""
    #: JSON: text that is a JSON document, kept as written (MariaDB's JSON: a LONGTEXT
    #: checked by JSON_VALID; rivulet/values/json_text.py reads it as MariaDB does).
    json: bool = False
    #: ``DEFAULT CURRENT_TIMESTAMP(fsp)`` (or ``NOW(fsp)``) of a DATETIME or TIMESTAMP: the
    #: fractional digits; a row that gives the column no value takes its statement's
    #: instant (rivulet/values/clock.py), stored as any value is. None: ``default`` is a
    #: constant.
    default_now: int | None = None
    #: ``ON UPDATE CURRENT_TIMESTAMP(fsp)``: the fractional digits; an UPDATE that changes
    #: a row without assigning this column sets it to its statement's instant.
    on_update_now: int | None = None
    #: An expression default, ``DEFAULT (3 + 5)`` (MySQL 8.0.13's), as written without its
    #: parentheses: a constant expression, whose value ``default`` is computed once when
    #: the table is made (rivulet/dataflow/checks.py). '' for a literal default.
    default_expr: str = ""

    def default_at(self, at: dt.datetime | None) -> Any:
        """The column's default for a row written by a statement at instant ``at`` (None:
        a statement that read no clock, which a column with a clock default never sees)."""
        if self.default_now is None:
            return self.default
        if at is None:
            raise RuntimeError(f"column {self.name!r}'s default reads the clock, and the "
                               "statement has no instant")
        return now_at(at, self.default_now)


@dataclass(frozen=True, slots=True)
class Conversion:
    """A column whose type changed and whose rows are converted lazily (BullFrog).

    Rows not converted yet keep their old value in the hidden stored column ``source``;
    converting a row moves the value to the column's own storage and clears ``source``.
    A cleared ``source`` is the row's mark of having been converted, written in the same
    statement as the new value, so no row is converted twice, even across a crash. (A NULL
    needs no converting: a NULL ``source`` is right either way.)
    """

    #: Stored column holding the values not converted yet (NULL once converted).
    source: str
    #: The column as it was: the kind and limits of the values in ``source``.
    old: Column
    #: Old value (a rivulet value of ``old``'s kind) -> the value in the new type.
    convert: Callable[[Any], Any] = field(compare=False, repr=False)


class KeyKind(enum.Enum):
    """What a key of a table is, as its declaration says (``KEY``, ``UNIQUE KEY``,
    ``FULLTEXT KEY``): what storage keeps for it and what reads may use it for."""

    #: ``KEY|INDEX``: a lookup index (a SQLite index, which writes and upqueries use).
    PLAIN = "KEY"
    #: ``UNIQUE``: a lookup index that also refuses a second row with its value.
    UNIQUE = "UNIQUE"
    #: ``FULLTEXT``: MySQL's index of the words of text columns, which only ``MATCH ...
    #: AGAINST`` reads, and rivulet refuses that search. An index never changes a query's
    #: answer, so the key is kept in the schema (named, shown, dropped and followed by
    #: ALTER TABLE as MySQL does) with no index in storage: it serves no lookup, nor a
    #: FOREIGN KEY (InnoDB never uses a FULLTEXT index for one).
    FULLTEXT = "FULLTEXT"

    @property
    def unique(self) -> bool:
        """Whether a key of this kind refuses a second row with its value."""
        return self is KeyKind.UNIQUE

    @property
    def lookup(self) -> bool:
        """Whether a key of this kind is a lookup index over its columns (a SQLite index;
        what a FOREIGN KEY's columns need a key beginning with): every kind but FULLTEXT."""
        return self is not KeyKind.FULLTEXT


@dataclass(frozen=True, slots=True)
class Key:
    """A named key (MySQL's index) of a table other than its primary key: declared in
    ``CREATE TABLE``, by ``CREATE INDEX`` or by ``ALTER TABLE ... ADD INDEX|UNIQUE|FULLTEXT``.
    Its name is what ``DROP INDEX`` and ``SHOW INDEX`` use; what storage keeps for it is its
    kind's (:class:`KeyKind`)."""

    name: str
    #: Positions of its columns in the table, in order.
    columns: tuple[int, ...]
    kind: KeyKind

    @property
    def unique(self) -> bool:
        """Whether it refuses a second row with its value (:attr:`KeyKind.unique`)."""
        return self.kind.unique

    @property
    def lookup(self) -> bool:
        """Whether it is a lookup index over its columns (:attr:`KeyKind.lookup`)."""
        return self.kind.lookup


class ReferentialAction(enum.Enum):
    """What a FOREIGN KEY does to child rows when their parent row is deleted or its
    referenced columns updated (InnoDB's actions; NO ACTION is RESTRICT, checked at once)."""

    RESTRICT = "RESTRICT"
    NO_ACTION = "NO ACTION"
    CASCADE = "CASCADE"
    SET_NULL = "SET NULL"


@dataclass(frozen=True, slots=True)
class ForeignKey:
    """A FOREIGN KEY of a table (the child): its ``columns`` hold values of the ``parent``
    table's ``parent_columns`` (by name, as the parent may be altered), enforced as InnoDB
    enforces it (rivulet/storage/foreign_keys.py)."""

    name: str
    #: Positions of its columns in the child table, in order.
    columns: tuple[int, ...]
    parent: str
    parent_columns: tuple[str, ...]
    on_delete: ReferentialAction = ReferentialAction.RESTRICT
    on_update: ReferentialAction = ReferentialAction.RESTRICT


@dataclass(frozen=True, slots=True)
class Check:
    """A CHECK constraint of a table. As MySQL 8 and MariaDB enforce one, a row for which
    its condition is FALSE is refused (:class:`CheckViolatedError`); TRUE and NULL
    (unknown) pass. The condition is kept as text, which each version of the table compiles
    against its own columns (:func:`rivulet.dataflow.checks.compiled`: columns move and are
    renamed by ALTER TABLE), with the engine's one expression evaluator."""

    name: str
    #: The condition as MySQL shows it (``SHOW CREATE TABLE``), in rivulet's SQL dialect.
    condition: str
    #: Whether a row of the table (its columns in order) breaks the condition; None until
    #: compiled, and a row of a table whose checks are not compiled is refused, not let by.
    refuses: Callable[[Row], bool] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class TableSchema:
    """A base table: columns in order and the primary key (empty: a hidden row id)."""

    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[int, ...] = ()
    #: Bumped by every ALTER TABLE: views planned on an older version read that version's
    #: columns (see rivulet/migrate/alter.py).
    version: int = 0
    #: Named keys (indexes), in the order they were made.
    keys: tuple[Key, ...] = ()
    #: The table's ``COMMENT 'text'`` option (SHOW CREATE TABLE, information_schema.TABLES).
    comment: str = ""
    #: CHECK constraints, in the order they were made; every write's rows are checked.
    checks: tuple[Check, ...] = ()
    #: Its FOREIGN KEYs, in the order they were made.
    foreign_keys: tuple[ForeignKey, ...] = ()
    #: UNIQUE keys other than the primary key: the columns of each, once each (derived
    #: from ``keys``: what writes are checked against).
    unique: tuple[tuple[int, ...], ...] = field(init=False, default=())
    _positions: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    _checker: list[Callable[[Any], Row | None]] = field(default_factory=list, compare=False,
                                                        repr=False)

    def __post_init__(self) -> None:
        positions = {c.name.lower(): i for i, c in enumerate(self.columns)}
        if len(positions) != len(self.columns):
            raise SchemaError(f"table {self.name!r} declares a column twice")
        self._positions.update(positions)
        object.__setattr__(self, "unique", tuple(dict.fromkeys(
            k.columns for k in self.keys if k.unique and k.columns != self.primary_key)))

    def check(self, name: str) -> Check | None:
        """The CHECK constraint named ``name`` (case-insensitive, as MySQL's)."""
        return next((c for c in self.checks if c.name.lower() == name.lower()), None)

    def key(self, name: str) -> Key | None:
        """The key named ``name`` (case-insensitive, as MySQL's index names)."""
        return next((k for k in self.keys if k.name.lower() == name.lower()), None)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def position(self, name: str) -> int:
        """Index of column ``name`` (case-insensitive, as in MySQL)."""
        try:
            return self._positions[name.lower()]
        except KeyError:
            raise NoSuchColumnError(f"table {self.name!r} has no column {name!r}") from None

    def has_column(self, name: str) -> bool:
        return name.lower() in self._positions

    @property
    def auto_column(self) -> int | None:
        """Position of the AUTO_INCREMENT column, if the table has one."""
        return next((i for i, c in enumerate(self.columns) if c.auto_increment), None)

    def pk_of(self, row: Row) -> Row:
        return tuple(row[i] for i in self.primary_key)

    @property
    def clock_defaults(self) -> bool:
        """Whether an INSERT may take a column's default from the clock."""
        return any(c.default_now is not None for c in self.columns)

    @property
    def clock_updates(self) -> tuple[int, ...]:
        """Positions of the ``ON UPDATE CURRENT_TIMESTAMP`` columns."""
        return tuple(i for i, c in enumerate(self.columns) if c.on_update_now is not None)

    @property
    def converting(self) -> tuple[int, ...]:
        """Positions of the columns whose rows are still being converted to a new type."""
        return tuple(i for i, c in enumerate(self.columns) if c.conversion is not None)


def coerce_row(schema: TableSchema, values: Any, *, where: str = "") -> Row:
    """Check one row against ``schema`` and return it with every value in its column's kind.

    ``values`` is a sequence in column order or a mapping from column name to value (missing
    columns take their default). Raises :class:`SchemaError` naming the column and the value.
    """
    if not schema._checker:
        schema._checker.append(_fast_checker(schema))
    row = schema._checker[0](values)
    if row is None:
        row = _coerce_row_slowly(schema, values, where)
    if schema.checks:
        enforce_checks(schema.checks, row)
    return row


def enforce_checks(checks: tuple[Check, ...], row: Row) -> None:
    """Refuse ``row`` if one of a table's CHECK constraints is FALSE for it (the first
    one, in the order they were made, is named: MySQL 8's error 3819)."""
    for check in checks:
        if check.refuses is None:  # a schema built without compiling its checks: a bug
            raise RuntimeError(f"CHECK constraint {check.name!r} was not compiled")
        if check.refuses(row):
            raise CheckViolatedError(f"Check constraint '{check.name}' is violated.")


#: Python types that need no conversion for a kind (``bool`` is excluded on purpose:
#: ``type(True) is int`` is false, so booleans take the converting path).
_EXACT_TYPES: dict[Kind, str] = {INT: "int", FLOAT: "float", STR: "str", BYTES: "bytes"}


def _fast_checker(schema: TableSchema) -> Callable[[Any], Row | None]:
    """A generated function that returns an already-valid tuple row (unchanged, or with the
    few values that take a cheap conversion converted), or None.

    Writes arrive in batches of thousands of rows whose values almost always have the exact
    Python type of their column already; checking that with ``type(v) is int`` and handing
    the same tuple on is several times cheaper than converting value by value. Two kinds of
    column take a conversion here rather than the slow path: an ENUM's text is looked up
    among its members, a FLOAT's double narrowed to single precision.
    """
    checks = [f"type(r) is tuple and len(r) == {len(schema.columns)}"]
    namespace: dict[str, Any] = {"_utf8": _is_utf8, "_single": single}
    outputs = []
    converts = False
    for i, col in enumerate(schema.columns):
        value = f"r[{i}]"
        if col.json:  # (each value is read: the slow path)
            return lambda r: None
        if col.kind == ENUM:  # the exact text of a member (a str, not another ENUM's value)
            namespace[f"_m{i}"] = {str(v): v for v in enum_values(col.members)}
            test = f"(type(r[{i}]) is str and r[{i}] in _m{i})"
            value = f"_m{i}[r[{i}]]"
        else:
            exact = _EXACT_TYPES.get(col.kind)
            if exact is None:
                return lambda r: None
            test = f"type(r[{i}]) is {exact}"
        if col.kind == FLOAT:  # NaN and infinities fail (x - x is NaN): the slow path rejects them
            test = f"({test} and r[{i}] - r[{i}] == 0.0)"
        elif col.kind == STR:  # lone surrogates are not UTF-8: the slow path rejects them
            test = f"({test} and (r[{i}].isascii() or _utf8(r[{i}])))"
        if col.single:  # within a 4-byte float's range, then narrowed
            test = f"({test} and -{FLOAT_MAX!r} <= r[{i}] <= {FLOAT_MAX!r})"
            value = f"_single(r[{i}])"
        if col.nullable:
            test = f"(r[{i}] is None or {test})"
            if value != f"r[{i}]":
                value = f"(None if r[{i}] is None else {value})"
        if col.length is not None:
            test = f"({test} and (r[{i}] is None or len(r[{i}]) <= {col.length}))"
        if col.padded:  # stored as given: a CHAR without trailing spaces, a full BINARY
            whole = (f"r[{i}][-1:] != ' '" if col.kind == STR
                     else f"len(r[{i}]) == {col.length}")
            test = f"({test} and (r[{i}] is None or {whole}))"
        if col.max_bytes is not None:  # (4 bytes at most per character)
            most = col.max_bytes // 4 if col.kind == STR else col.max_bytes
            test = f"({test} and (r[{i}] is None or len(r[{i}]) <= {most}))"
        if col.bounds is not None:
            low, high = col.bounds
            test = f"({test} and (r[{i}] is None or {low} <= r[{i}] <= {high}))"
        checks.append(test)
        outputs.append(value)
        converts = converts or value != f"r[{i}]"
    row = f"({', '.join(outputs)},)" if converts else "r"
    return eval(f"lambda r: {row} if ({' and '.join(checks)}) else None",  # noqa: S307
                namespace)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _coerce_row_slowly(schema: TableSchema, values: Any, where: str) -> Row:
    if isinstance(values, dict):
        values = _row_from_mapping(schema, values, where)
    elif len(values) != len(schema.columns):
        raise SchemaError(
            f"{where}table {schema.name!r} has {len(schema.columns)} columns, "
            f"got a row of {len(values)} values"
        )
    return tuple(
        coerce_value(col, v, where=f"{where}{schema.name}.{col.name}")
        for col, v in zip(schema.columns, values)
    )


def _row_from_mapping(schema: TableSchema, values: dict[str, Any], where: str) -> list[Any]:
    lowered = {k.lower(): v for k, v in values.items()}
    unknown = set(lowered) - set(schema._positions)
    if unknown:
        raise NoSuchColumnError(f"{where}table {schema.name!r} has no column "
                                f"{sorted(unknown)[0]!r}")
    return [lowered.get(c.name.lower(), c.default) for c in schema.columns]


def coerce_value(col: Column, value: Any, *, where: str = "") -> Any:
    """Convert ``value`` to ``col``'s kind and fit it to the column (what a write stores), or
    raise :class:`SchemaError` saying why not."""
    if value is None:
        if not col.nullable:
            raise NotNullError(f"{where or col.name}: column is NOT NULL, got NULL")
        return None
    if col.kind == ENUM:
        return _to_member(col, value, where)
    if col.kind == TIME:
        return _to_time(col, value, where)
    out = _as_kind(col, value, where)
    if col.length is not None and col.kind in (STR, BYTES):
        if len(out) > col.length:
            if col.kind == STR and not out[col.length:].strip(" "):
                out = out[:col.length]  # MySQL drops excess trailing spaces (with a note)
            else:
                raise TooLongError(f"{where or col.name}: value of length {len(out)} is too "
                                   f"long for {col.sql_type or col.kind}")
        if col.padded:  # a CHAR without its trailing spaces, a BINARY with its zero bytes
            out = out.rstrip(" ") if col.kind == STR else out.ljust(col.length, b"\0")
    if col.json and document(out) is None:
        shown = out if len(out) <= 60 else out[:57] + "..."
        raise InvalidJsonError(f"{where or col.name}: Invalid JSON text: {shown!r}")
    if col.single:
        if abs(out) > FLOAT_MAX:
            raise OutOfRangeError(f"{where or col.name}: value {out} is out of range for "
                                  f"{col.sql_type or col.kind}")
        out = single(out)
    if col.max_bytes is not None and len(out) * 4 > col.max_bytes and (
            len(out.encode() if isinstance(out, str) else out) > col.max_bytes):
        raise TooLongError(f"{where or col.name}: value of {len(out)} characters is too long "
                           f"for {col.sql_type or col.kind} ({col.max_bytes} bytes at most)")
    if col.kind == DATETIME and out.microsecond:
        try:
            out = round_fraction(out, col.fsp)
        except OverflowError:  # 9999-12-31 23:59:59.5 rounds past the last day
            raise OutOfRangeError(f"{where or col.name}: value {out} is out of range for "
                                  f"{col.sql_type or col.kind}") from None
    if col.bounds is not None and not col.bounds[0] <= out <= col.bounds[1]:
        raise OutOfRangeError(
            f"{where or col.name}: value {out} is out of range for {col.sql_type or col.kind}"
        )
    if col.bounds is not None and type(value) is decimal.Decimal and value < col.bounds[0]:
        raise OutOfRangeError(  # (a DECIMAL is checked before it is rounded: -0.01, UNSIGNED)
            f"{where or col.name}: value {value} is out of range for {col.sql_type or col.kind}"
        )
    if col.scale is not None and col.kind == DECIMAL:
        try:
            out = out.quantize(decimal.Decimal(1).scaleb(-col.scale), context=_DECIMAL_FIT)
        except decimal.InvalidOperation:
            raise OutOfRangeError(f"{where or col.name}: value {value!r} is out of range for "
                                  f"{col.sql_type or col.kind}") from None
        if col.precision is not None and abs(out) >= decimal_limit(col):
            raise OutOfRangeError(f"{where or col.name}: value {out} is out of range for "
                                  f"{col.sql_type or col.kind}")
        if out.is_zero():
            out = out.copy_abs()  # a DECIMAL column holds no negative zero (MOD's -0.00)
    return out


def _as_kind(col: Column, value: Any, where: str) -> Any:
    """``value`` converted to ``col``'s kind (not yet fitted to the column)."""
    try:
        return _CONVERTERS[col.kind](value)
    except (ValueError, TypeError, ArithmeticError) as exc:
        raise _wrong_value(col, value, where, exc) from None


#: The spaces MySQL skips around a number in text.
_SPACE = " \t\n\r\v\f"
#: The number text starts with, as MySQL reads it (spaces before it skipped; the digits
#: 0-9 only, no '_' as Python's int() takes).
_NUMBER_PREFIX = re.compile(r"[ \t\n\r\v\f]*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?",
                            re.ASCII)
_INTEGER_TEXT = re.compile(r"[+-]?\d+", re.ASCII)


def _number_then_more(text: str) -> bool:
    """Whether ``text`` starts with a number and goes on with more than spaces ('12abc',
    '1e', '0x1')."""
    m = _NUMBER_PREFIX.match(text)
    return m is not None and bool(text[m.end():].strip(_SPACE))


def _number_text(text: str) -> str:
    """``text`` without the spaces around it, if it is all a number (as MySQL reads one);
    else ValueError."""
    m = _NUMBER_PREFIX.match(text)
    if m is None or text[m.end():].strip(_SPACE):
        raise ValueError("not a number")
    return m.group().lstrip(_SPACE)


def _wrong_value(col: Column, value: Any, where: str, exc: Exception) -> SchemaError:
    """The error of a value ``col`` cannot hold, as MySQL's strict mode tells them apart:
    text that is no date for a DATE or DATETIME (error 1292), a number followed by more for
    a numeric column (1265, data truncated), anything else (1366, an incorrect value)."""
    name = col.sql_type or col.kind
    if isinstance(value, str):
        if col.kind in (DATE, DATETIME):
            return TruncatedValueError(f"{where or col.name}: incorrect {name} value: {value!r}")
        if col.kind in NUMERIC_KINDS:
            if _number_then_more(value):
                return DataTruncatedError(f"{where or col.name}: data truncated: {value!r} is "
                                          f"a number followed by more, for {name}")
            return SchemaError(f"{where or col.name}: incorrect {name} value: {value!r}")
    return SchemaError(f"{where or col.name}: expected a {name} value, got {value!r} ({exc})")


#: The largest 4-byte float.
FLOAT_MAX = 3.4028234663852886e38


def single(x: float) -> float:
    """``x`` rounded to the nearest 4-byte float (and widened back to a double); beyond
    the largest one, an infinity."""
    try:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def single_text(x: float) -> float:
    """A single-precision value as MySQL shows it: the shortest decimal that reads back as
    the same 4-byte float (0.10000000149011612 is shown as 0.1)."""
    for digits in range(1, 10):
        shown = float(f"{x:.{digits}g}")
        if single(shown) == x:
            return shown
    return x


#: Rounds a value to a DECIMAL column's scale: half up, with room for 65 digits and more.
_DECIMAL_FIT = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP)


def round_fraction(value: dt.datetime, fsp: int) -> dt.datetime:
    """A datetime rounded to ``fsp`` fractional digits, half up (as MySQL rounds a DATETIME
    or TIMESTAMP written with more digits than its column keeps)."""
    quantum = 10 ** (6 - fsp)
    rest = value.microsecond % quantum
    if not rest:
        return value
    down = value - dt.timedelta(microseconds=rest)
    return down + dt.timedelta(microseconds=quantum) if 2 * rest >= quantum else down


def key_value(col: Column, value: Any) -> Any:
    """``value`` as the values of ``col`` that equal it (in MySQL's ``col = value``) are
    held, to look them up by: in the column's kind, but not fitted as a write fits it (a
    CHAR's 'ab  ' equals no stored 'ab', a DECIMAL(5, 2)'s 1.234 no stored 1.23, a FLOAT's
    0.1 no stored 0.10000000149011612; nor are limits checked, which a view planned before
    an ALTER widened them would see stale). An ENUM's text compares as text and a number
    with its index (``'2'`` is no member's text, though writing it stores member 2); a
    TIME reads text that is no time as 00:00:00, as MySQL compares. Raises
    :class:`SchemaError` if no value can be equal."""
    if col.kind == TIME:
        return from_micros(compared_micros(value))
    if col.kind != ENUM:
        return _as_kind(col, value, "")
    found = compared_member(col.members, value)
    if found is None:
        raise NotAMemberError(f"{col.name}: no member of the ENUM equals {value!r}")
    return found


def _to_member(col: Column, value: Any, where: str) -> Any:
    try:
        return member_for(col.members, value)
    except (ValueError, TypeError) as exc:
        raise NotAMemberError(f"{where or col.name}: data truncated: {exc}") from None


def _to_time(col: Column, value: Any, where: str) -> Any:
    micros = time_micros(value, strict=True)
    if micros is None:
        raise IncorrectTimeError(f"{where or col.name}: incorrect TIME value {value!r}")
    micros = round_micros(micros, col.fsp)
    if clipped(micros, col.fsp) != micros:
        raise IncorrectTimeError(f"{where or col.name}: TIME value {value!r} is outside "
                                 "-838:59:59..838:59:59")
    return from_micros(micros)


def decimal_limit(col: Column) -> decimal.Decimal:
    """The smallest magnitude too large for a DECIMAL(p, s) column: 10^(p - s)."""
    return decimal.Decimal(10) ** ((col.precision or 0) - (col.scale or 0))


def unsigned_decimal_bounds(precision: int, scale: int) -> tuple[decimal.Decimal, decimal.Decimal]:
    """The bounds of a DECIMAL(p, s) UNSIGNED column: 0, and 10^(p - s). A value is checked
    against them before it is rounded to the column's places (MySQL refuses -0.001, which
    would round to 0), so the upper one is the first magnitude too large rather than the
    largest value (999999.994 rounds to DECIMAL(8, 2)'s 999999.99 and is stored): the
    precision check after rounding refuses the rest."""
    return decimal.Decimal(0), decimal.Decimal(10) ** (precision - scale)


def _to_int(v: Any) -> int:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):  # rounded as MySQL stores a DOUBLE in an integer column:
        if not math.isfinite(v):  # its binary value, half to even (2.5e0 is 2, 3.5e0 is 4)
            raise ValueError("MySQL has no NaN or infinity")
        return round(v)
    if isinstance(v, decimal.Decimal):  # a DECIMAL half away from zero (2.5 is 3)
        if not v.is_finite():
            raise ValueError("MySQL has no NaN or infinity")
        return int(v.to_integral_value(rounding=decimal.ROUND_HALF_UP))
    if isinstance(v, str):
        text = v.strip(_SPACE)
        if _INTEGER_TEXT.fullmatch(text) is not None:
            return int(text)
        # A fraction or an exponent ('2.5', '1e2'): the number, rounded half away from zero
        # as MySQL stores it ('2.5' is 3, '-0.5' is -1); one past any integer column's range
        # stays past it (error 1264), without building a number of a billion digits.
        number = decimal.Decimal(_number_text(text))
        if number.adjusted() > _INT_DIGITS:
            number = decimal.Decimal(1).scaleb(_INT_DIGITS + 1).copy_sign(number)
        return int(number.to_integral_value(rounding=decimal.ROUND_HALF_UP))
    raise TypeError(f"a {type(v).__name__} is not an integer")


#: More digits than any integer column holds (BIGINT UNSIGNED has 20).
_INT_DIGITS = 40


def _to_float(v: Any) -> float:
    if isinstance(v, (int, float, decimal.Decimal)):
        out = float(v)
    elif isinstance(v, str):
        out = float(_number_text(v))
    else:
        raise TypeError(f"a {type(v).__name__} is not a number")
    if not math.isfinite(out):  # SQLite would store NaN as NULL, even in a NOT NULL column
        raise ValueError("MySQL has no NaN or infinity")
    return out


def _to_decimal(v: Any) -> decimal.Decimal:
    out = _decimal(v)
    if not out.is_finite():
        raise ValueError("MySQL has no NaN or infinity")
    return out


def _decimal(v: Any) -> decimal.Decimal:
    if isinstance(v, decimal.Decimal):
        return v
    if isinstance(v, (bool, int)):
        return decimal.Decimal(int(v))
    if isinstance(v, float):
        return decimal.Decimal(repr(v))
    if isinstance(v, str):
        return decimal.Decimal(_number_text(v))
    raise TypeError(f"a {type(v).__name__} is not a decimal")


def _to_str(v: Any) -> str:
    if isinstance(v, str):
        if not v.isascii():
            v.encode("utf-8")  # UnicodeEncodeError (a ValueError) for a lone surrogate
        return v
    if isinstance(v, (bool, int)):
        return str(int(v))
    if isinstance(v, float):
        return double_text(v)  # as MySQL shows it: 0.0e0 is '0', 1e20 '1e20'
    if isinstance(v, decimal.Decimal):
        return decimal_text(v)
    raise TypeError(f"a {type(v).__name__} is not a string")


def _to_bytes(v: Any) -> bytes:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode()
    raise TypeError(f"a {type(v).__name__} is not binary data")


def _to_bool(v: Any) -> int:
    # MySQL's BOOLEAN is TINYINT(1): TRUE is stored and returned as 1.
    if isinstance(v, (bool, int)) or (isinstance(v, float) and v.is_integer()):
        if not -128 <= v <= 127:  # SQLite cannot even store some (past 64 bits)
            raise ValueError("out of range for BOOLEAN (TINYINT(1): -128..127)")
        return int(v)
    if isinstance(v, str) and v.strip().lower() in ("0", "1", "true", "false"):
        return int(v.strip().lower() in ("1", "true"))
    raise TypeError(f"{v!r} is not a boolean")


def _to_date(v: Any) -> dt.date:
    if isinstance(v, dt.datetime):
        return v.date()
    if isinstance(v, dt.date):
        return v
    if isinstance(v, str):
        read = stored_temporal(v)
        if read is None:
            raise ValueError("not a date")
        # a datetime's text: its date (MySQL notes the time dropped)
        return read.date() if isinstance(read, dt.datetime) else read
    raise TypeError(f"a {type(v).__name__} is not a date")


def _to_datetime(v: Any) -> dt.datetime:
    if isinstance(v, dt.datetime):
        return v
    if isinstance(v, dt.date):
        return dt.datetime(v.year, v.month, v.day)
    if isinstance(v, str):
        read = stored_temporal(v)
        if read is None:
            raise ValueError("not a datetime")
        return read if isinstance(read, dt.datetime) else dt.datetime(read.year, read.month,
                                                                      read.day)
    raise TypeError(f"a {type(v).__name__} is not a datetime")


_CONVERTERS: dict[Kind, Callable[[Any], Any]] = {
    INT: _to_int,
    FLOAT: _to_float,
    DECIMAL: _to_decimal,
    STR: _to_str,
    BYTES: _to_bytes,
    BOOL: _to_bool,
    DATE: _to_date,
    DATETIME: _to_datetime,
}
