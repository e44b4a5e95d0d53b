"""Schemas, rows and queries for the MySQL differential suite (tests/test_mysql_differential.py).

Where tests/scenarios.py and tests/test_differential.py stay inside what SQLite and MySQL
agree on (INT and VARCHAR columns, ASCII strings without spaces or backslashes, no ``/``,
``%``, ``DIV``, ``||``, no string compared with a number), this generator goes where they
differ, because MariaDB is the oracle here (tests/mysql_oracle.py):

* column types: INT, BIGINT, INT UNSIGNED, DECIMAL, DOUBLE, VARCHAR, TEXT, DATE, DATETIME,
  TIME, ENUM, each nullable or not;
* values chosen to meet across types: ``'01'``, ``' 7'``, ``'1e3'`` and ``'12abc'`` next to
  the numbers 1, 7 and 1000; ``'2024-01-02'`` next to the date and to ``20240102``; strings
  with spaces, backslashes, quotes, ``%`` and ``_``, the empty string, Unicode (``'é'``,
  ``'ß'``, an emoji); big integers beyond a double's 53 bits;
* queries over every shape the planner takes: filters of any depth, mixed-type
  comparisons and joins (``ON`` a number column ``=`` a string column), ``/``, ``%``,
  ``DIV``, ``MOD``, ``||`` (MySQL's ``OR``), ``XOR``, ``<=>``, ``LIKE`` with ``%``, ``_``
  and backslash escapes, ``IN`` lists mixing types and ``NULL``, ``BETWEEN``, ``CASE``, every
  function of :data:`rivulet.values.registry.SCALAR_FUNCTIONS`, aggregates over every type
  (``SUM`` of strings and dates, ``MIN`` of an ENUM), ``GROUP BY`` expressions, ``HAVING``,
  ``DISTINCT``, joins, subqueries in ``FROM``, ``UNION [ALL]``, ``ORDER BY`` (NULLs, ties)
  with ``LIMIT``/``OFFSET``;
* every kind of parameter: ``col = ?`` and ``? = col``, several of them, ``col IN (?, ...)``
  with 1-3 marks, one bound (``col > ?``, ``? <= col``), two bounds on one column
  (``BETWEEN ? AND ?``, ``col >= ? AND col < ?``), an equality with a range, read with values
  of every Python type (int, str, Decimal, float, date, datetime, NULL) whatever the
  column's type.

A parameter value means what a MySQL driver makes of it (tests/mysql_oracle.py inlines
them as PyMySQL does): a ``str`` is a string literal, a ``float`` a double, a ``Decimal`` a
decimal literal. A ``date``/``datetime``/``timedelta`` is a quoted string there, but a
temporal value to rivulet, so such values are given only to temporal columns, where MySQL
reads the string as the same temporal value.

One :class:`Example` is one schema, its rows, many queries, and writes to run after a first
comparison, so that each example's setup (two databases) pays for many comparisons.
:class:`Shape` says which constructs a query may use (``Shape(wire=True)`` for the MySQL
protocol, whose server makes WHERE literals view parameters). Shapes that rivulet answers
wrongly today are left out through :data:`KNOWN_MISMATCHES` only; shapes rivulet refuses by
design are left out as :data:`REFUSED_BY_DESIGN` lists (a refusal that still happens is
allowed, and counted); shapes where MariaDB is not MySQL, as :data:`MARIADB_IS_NOT_MYSQL`
lists.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

D = decimal.Decimal

# --------------------------------------------------------------------------- what is left out

#: Mismatches not fixed yet: while an entry is here, the generator leaves its shape out
#: (each key is consulted through :func:`left_out` where the shape is drawn). Each entry is a
#: minimal repro with rivulet's answer and MySQL's; the comment above it names the part of
#: rivulet that owns the fix. Remove an entry once its fix has landed, and the suite covers
#: the shape again.
KNOWN_MISMATCHES: dict[str, str] = {
}

#: Shapes rivulet refuses with an error naming the construct (docs/sql.md), left out so
#: that the generated queries stay useful (a refusal that still happens is allowed and
#: counted): LIMIT in a subquery, RIGHT/CROSS/USING joins and joins without an equality,
#: two IN (?, ...) lists on one column, a range parameter beside an IN list in an
#: aggregated query, an IN (?, ...) list on a column an aggregated
#: query does not group by, UNION mixed with UNION ALL.
REFUSED_BY_DESIGN = (
    "limit-in-subquery", "right-cross-using-joins", "in-lists-on-one-column",
    "range-and-in-list-in-aggregate", "in-param-not-grouped",
    "mixed-union",
)


#: rivulet's intended differences from MySQL (docs/sql.md's table, each pinned by
#: tests/test_mysql_differences.py): left out for good. Arithmetic past BIGINT (``f DIV 1``
#: of a DOUBLE 1e20), below zero with an UNSIGNED operand (``u - 5``) or past the DOUBLE
#: range (``'1e308' * 2``) is an error in MySQL, which fails the whole SELECT; a view
#: computes each row's value on its own, and gives the exact integer, the negative number,
#: the infinity.
#: A result column's exact type code and NOT NULL flag are not compared: rivulet reports
#: one type code per value kind, and NOT NULL where it knows a column cannot be NULL
#: (test_result_columns_report_one_type_per_kind).
INTENDED_DIFFERENCES = ("div-overflow", "unsigned-subtraction", "double-overflow",
                        "wire-exact-types")


def left_out(name: str) -> bool:
    """True while the shape ``name`` is a known mismatch (see :data:`KNOWN_MISMATCHES`),
    and for good where it is an intended difference or MariaDB is not MySQL."""
    return name in KNOWN_MISMATCHES or name in INTENDED_DIFFERENCES or \
        name in MARIADB_IS_NOT_MYSQL


#: Where MariaDB, the oracle, is not MySQL: left out for good. FLOOR, CEIL, ROUND, ABS and
#: unary minus of a DATE or DATETIME give a temporal value or a DECIMAL in MariaDB (an
#: integer in MySQL); MariaDB rewrites NULLIF(a, b) to a CASE that names ``a`` twice, so
#: ONLY_FULL_GROUP_BY rejects ``SELECT NULLIF(a, b) ... GROUP BY NULLIF(a, b)``, and
#: likewise a BETWEEN over a DATETIME or a date compared with text (``GROUP BY e BETWEEN 7
#: AND 8``, ``GROUP BY (e <> '2024-1-2')``: "e isn't in GROUP BY"); an INT UNSIGNED
#: column in a UNION with NULL becomes a DECIMAL in MariaDB (BIGINT UNSIGNED in MySQL).
#: A join equating text with the primary key depends on MariaDB's access path: through
#: the key it converts the text to an integer ('1e3' finds no 1000), scanning it compares
#: the two as doubles, as MySQL's rule says (``IGNORE INDEX (PRIMARY)`` gives rivulet's rows).
#: ``CAST(0.5 AS DATE)`` is NULL in MariaDB, but the zero date where a comparison reads
#: it (``1 <=> CAST(0.5 AS DATE)`` is 1, ``CAST(0.5 AS DATE) IS NULL`` 1 too); in MySQL
#: it is NULL throughout, as in rivulet.
#: A condition on a UNION column of several types in a FROM subquery (``SELECT ... FROM
#: (SELECT CAST(x AS DATETIME) AS c UNION ALL SELECT COUNT(*)) u WHERE u.c <= 'zz'``):
#: MariaDB pushes it into each SELECT and compares there with that SELECT's type (a
#: datetime with 'zz', a count with 'zz' as a number), not with the UNION column's text.
#: ``LOCATE('', s, pos)`` is 0 in MariaDB where pos is past the last character (MySQL's
#: code answers pos, as rivulet does, up to the length + 1: ``LOCATE('', '', 1)`` is 1).
#: MariaDB's ONLY_FULL_GROUP_BY also refuses some expressions grouped by and selected alike
#: (``SELECT (7.0e0 > c) ... GROUP BY (7.0e0 > c)``, ``SELECT a / b ... WHERE a = ? GROUP BY
#: a / b``: error 1055, "isn't in GROUP BY"), which MySQL takes.
#: MariaDB types ``CAST(x AS CHAR)`` with x's places, 0 for text or an integer, and a DOUBLE
#: it takes part in shows only the most places of its operands: ``CAST('4.5' AS CHAR) + 0``
#: is 4 (a DECIMAL(10,4) x gives ``x - CAST(x AS CHAR)`` 4 places). MySQL, like rivulet,
#: reads the text in full (4.5, shown in its shortest form).
MARIADB_IS_NOT_MYSQL = ("number-functions-of-temporals", "nullif-in-group-by",
                        "between-in-group-by", "unsigned-union-null",
                        "text-joined-to-the-primary-key", "grouped-expressions",
                        "locate-empty-needle-from-a-position", "date-cast-of-no-date-compared",
                        "condition-on-a-mixed-union-column", "number-read-of-a-char-cast")


# --------------------------------------------------------------------------- types and values

#: Type families: how MySQL treats a value in comparisons, arithmetic and functions.
INT, UINT, DEC, DBL, STR, ENUM, DATE, DATETIME, TIME = (
    "int", "uint", "decimal", "double", "str", "enum", "date", "datetime", "time")
#: A DECIMAL of a scale other than the columns' (a product, a quotient, an AVG).
DECX = "decimal*"
NUMERIC = (INT, UINT, DEC, DBL, DECX)
TEMPORAL = (DATE, DATETIME, TIME)
TEXTUAL = (STR, ENUM)

ENUM_MEMBERS = ("b", "a", "01", "x y")  # not in alphabetical order: ENUMs sort by position

STRINGS = (
    "01", "1e3", " 7", "abc", "", "a\\b", "a b", "a ", "é", "1", "7", "A", "a", "1.5",
    "-0.25", "2024-01-02", "it's", "😀", "ß", "12abc", "a%b", "a_b", "\\", "É", "ΑΣ",
)


@dataclass(frozen=True)
class SqlType:
    """A column type of the generated schemas: its DDL, family, and the values rows take
    (``hot``: drawn most of the time, so that rows meet in joins, groups and lookups)."""

    ddl: str
    family: str
    hot: tuple[Any, ...]
    values: tuple[Any, ...]


def _dates(*texts: str) -> tuple[dt.date, ...]:
    return tuple(dt.date.fromisoformat(t) for t in texts)


def _datetimes(*texts: str) -> tuple[dt.datetime, ...]:
    return tuple(dt.datetime.fromisoformat(t) for t in texts)


def _times(*seconds: int) -> tuple[dt.timedelta, ...]:
    return tuple(dt.timedelta(seconds=s) for s in seconds)


SQL_TYPES: tuple[SqlType, ...] = (
    SqlType("INT", INT, (1, 7, 0), (-3, 0, 1, 2, 7, 10, 1000, 20240102)),
    SqlType("BIGINT", INT, (1, 7),
            (-3000000000, 1, 7, 1000, 3000000000, 9007199254740993, 9007199254740992)),
    SqlType("INT UNSIGNED", UINT, (1, 7, 0), (0, 1, 2, 7, 1000, 4294967295)),
    SqlType("DECIMAL(8,2)", DEC, (D("1.00"), D("7.00")),
            (D("-0.25"), D("0.00"), D("1.00"), D("1.50"), D("2.50"), D("7.00"), D("1000.00"))),
    SqlType("DOUBLE", DBL, (1.0, 7.0),
            (-0.25, 0.0, 1.0, 1.5, 2.5, 7.0, 1000.0, 0.1, 1e-7, 1e20)),
    SqlType("VARCHAR(12)", STR, ("01", " 7", "a", ""), STRINGS),
    SqlType("TEXT", STR, ("1", "a", "1e3"), STRINGS),
    SqlType("ENUM('b','a','01','x y')", ENUM, ("a", "01"), ENUM_MEMBERS),
    SqlType("DATE", DATE, _dates("2024-01-02"),
            _dates("2024-01-02", "2023-12-31", "2024-02-29", "1999-01-01", "2024-01-03")),
    SqlType("DATETIME", DATETIME, _datetimes("2024-01-02 00:00:00"),
            _datetimes("2024-01-02 00:00:00", "2024-01-02 03:04:05", "2023-12-31 23:59:59",
                       "2024-02-29 12:00:00")),
    SqlType("TIME", TIME, _times(3723), _times(3723, -1, 0, 90000, 11045)),
)


def sql_str(s: str) -> str:
    """A MySQL string literal (backslashes escaped, quotes doubled)."""
    return "'" + s.replace("\\", "\\\\").replace("'", "''") + "'"


def _fmt_seconds(total: int) -> str:
    sign = "-" if total < 0 else ""
    total = abs(total)
    return f"{sign}{total // 3600:02d}:{total // 60 % 60:02d}:{total % 60:02d}"


def sql_value(v: Any) -> str:
    """The SQL literal of a row value or literal value."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, D):
        return str(v)
    if isinstance(v, float):
        return repr(v) + ("" if "e" in repr(v) else "e0")
    if isinstance(v, str):
        return sql_str(v)
    if isinstance(v, dt.timedelta):
        return sql_str(_fmt_seconds(int(v.total_seconds())))
    if isinstance(v, dt.datetime):
        return sql_str(v.isoformat(sep=" "))
    if isinstance(v, dt.date):
        return sql_str(v.isoformat())
    raise TypeError(v)


#: Literals of each family (a value and its SQL text) that queries use.
LITERALS: dict[str, tuple[Any, ...]] = {
    INT: (0, 1, 7, -3, 2, 1000, 3000000000, 9007199254740993, 20240102),
    DEC: (D("1.50"), D("-0.25"), D("1.0"), D("0.5"), D("7.00")),
    DBL: (1e3, 1.5, 7.0, -0.25, 1.0),
    STR: ("01", "1e3", " 7", "abc", "", "a\\b", "a b", "é", "1", "7", "a", "A", "12abc",
          "2024-01-02", "2024-01-02 00:00:00", "01:02:03", "1.50"),
    ENUM: ENUM_MEMBERS,
    DATE: ("2024-01-02", "2023-12-31", "2024-1-2", "2024-02-29"),
    DATETIME: ("2024-01-02 03:04:05", "2024-01-02 00:00:00", "2024-01-02"),
    TIME: ("01:02:03", "-00:00:01", "25:00:00", "00:00:00"),
}

#: Parameter values tried against a column of each family: its own values, values of the
#: other types that meet them (1 = '01' = 1.00 = 1e0), values with no rows, and NULL.
_NUMBER_PROBES: tuple[Any, ...] = (1, 7, 0, -3, 1000, 9007199254740993, D("1.00"), D("1.5"),
                                   1.0, 7.0, 2.5, "01", " 7", "1e3", "abc", "", None)
PROBES: dict[str, tuple[Any, ...]] = {
    INT: _NUMBER_PROBES,
    UINT: _NUMBER_PROBES,
    DEC: _NUMBER_PROBES,
    DBL: _NUMBER_PROBES,
    STR: ("01", "1", "a", "", " 7", "abc", "a b", "a\\b", "é", "1e3", "zz", 1, 7, 0, 1000,
          D("1.50"), 1.5, None),
    ENUM: ("a", "b", "01", "x y", "zz", "", 1, 2, 3, None),
    DATE: (dt.date(2024, 1, 2), dt.date(2023, 12, 31), dt.datetime(2024, 1, 2),
           "2024-01-02", "2024-1-2", "2024-01-02 00:00:00", "2030-01-01", None),
    DATETIME: (dt.datetime(2024, 1, 2, 3, 4, 5), dt.datetime(2024, 1, 2), dt.date(2024, 1, 2),
               "2024-01-02 03:04:05", "2024-01-02", None),
    TIME: (dt.timedelta(seconds=3723), "01:02:03", "-00:00:01", "25:00:00", 0, None),
}

#: Parameter values of exactly a column's type (what is left while "mixed-type-keys" is a
#: known mismatch).
NATIVE_PROBES: dict[str, tuple[Any, ...]] = {
    INT: (1, 7, 0, -3, 1000, 9007199254740993, None),
    UINT: (1, 7, 0, 4294967295, None),
    DEC: (D("1.00"), D("7.00"), D("1.50"), D("-0.25"), D("3.00"), None),
    DBL: (1.0, 7.0, 1.5, -0.25, 1e-7, 2.0, None),
    STR: PROBES[STR][:11] + (None,),
    ENUM: ENUM_MEMBERS + ("zz", None),
    DATE: (dt.date(2024, 1, 2), dt.date(2023, 12, 31), dt.date(2030, 1, 1), None),
    DATETIME: (dt.datetime(2024, 1, 2, 3, 4, 5), dt.datetime(2024, 1, 2), None),
    TIME: (dt.timedelta(seconds=3723), dt.timedelta(0), None),
}

#: Every family of a column.
ALL_FAMILIES = (INT, UINT, DEC, DBL, STR, ENUM, DATE, DATETIME, TIME)


def sql_types() -> tuple[SqlType, ...]:
    """The column types the generator uses (those of known mismatches left out)."""
    out = []
    for t in SQL_TYPES:
        if t.family == TIME and left_out("time-columns"):
            continue
        if t.family == ENUM and left_out("enum-columns"):
            continue
        out.append(t)
    return tuple(out)


# --------------------------------------------------------------------------- schema and rows


@dataclass(frozen=True)
class Col:
    name: str
    type: SqlType
    nullable: bool = True

    @property
    def family(self) -> str:
        return self.type.family

    def ddl(self) -> str:
        return f"{self.name} {self.type.ddl}" + ("" if self.nullable else " NOT NULL")


@dataclass(frozen=True)
class Table:
    """``id INT PRIMARY KEY`` and the generated columns."""

    name: str
    columns: tuple[Col, ...]

    def ddl(self) -> str:
        cols = "".join(f", {c.ddl()}" for c in self.columns)
        return f"CREATE TABLE {self.name} (id INT PRIMARY KEY{cols})"

    @property
    def all_columns(self) -> tuple[Col, ...]:
        return (Col("id", SQL_TYPES[0], False),) + self.columns


@dataclass(frozen=True)
class Query:
    """A generated SELECT (``?`` marks for parameters) and the parameter tuples to read it
    with (one empty tuple if it has none)."""

    sql: str
    params: tuple[tuple[Any, ...], ...] = ((),)

    @property
    def parameterized(self) -> bool:
        return "?" in unquoted(self.sql)


def unquoted(sql: str) -> str:
    return re.sub(r"'(?:[^'\\]|\\.|'')*'", "''", sql)


class Example:
    """One schema, its rows, and the queries to compare on it (a plain class: Hypothesis
    prints it with :meth:`__repr__`, as SQL)."""

    def __init__(self, tables: tuple[Table, ...], rows: dict[str, list[tuple[Any, ...]]],
                 queries: list[Query], writes: list[str] | None = None) -> None:
        self.tables = tables
        self.rows = rows
        self.queries = queries
        #: INSERT, UPDATE and DELETE statements a test may run after a first comparison, to
        #: compare again (views maintained through writes of every type).
        self.writes = writes or []

    def __repr__(self) -> str:  # what Hypothesis prints for a falsifying example
        lines = ["Example("]
        lines += [f"  {t.ddl()}" for t in self.tables]
        for name, rows in self.rows.items():
            lines.append(f"  {name}: {rows!r}")
        for q in self.queries:
            lines.append(f"  {q.sql}" + (f"   -- params {list(q.params)!r}"
                                         if q.parameterized else ""))
        lines += [f"  then: {w}" for w in self.writes]
        lines.append(")")
        return "\n".join(lines)


@st.composite
def tables_strategy(draw: Callable, max_tables: int = 3, min_tables: int = 1
                    ) -> tuple[Table, ...]:
    types = sql_types()
    tables = []
    for t in range(draw(st.integers(min_tables, max_tables))):
        cols = []
        for i in range(draw(st.integers(2, 5))):
            sql_type = draw(st.sampled_from(types))
            cols.append(Col("abcde"[i], sql_type, draw(st.integers(0, 3)) > 0))
        tables.append(Table(f"t{t}", tuple(cols)))
    return tuple(tables)


def g_value(draw: Callable, col: Col) -> Any:
    if col.nullable and draw(st.integers(0, 5)) == 0:
        return None
    if draw(st.integers(0, 2)) > 0:
        return draw(st.sampled_from(col.type.hot))
    return draw(st.sampled_from(col.type.values))


def g_rows(draw: Callable, table: Table, first_id: int, max_rows: int = 8) -> list[tuple]:
    n = draw(st.integers(0, max_rows))
    return [(first_id + i,) + tuple(g_value(draw, c) for c in table.columns) for i in range(n)]


# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr:
    """A generated expression: its SQL text and its family (``mixed``: MySQL decides from
    several branches; ``bool``: a predicate's 1/0/NULL)."""

    sql: str
    family: str
    column: bool = False  # a bare column reference (a parameter may key it)
    base: bool = False  # a base table's column (its values are of exactly its family)


def _lit(draw: Callable, family: str | None = None) -> Expr:
    fam = family or draw(st.sampled_from(list(LITERALS)))
    if fam == TIME and left_out("time-columns"):
        fam = STR
    value = draw(st.sampled_from(LITERALS[fam]))
    # Temporal and ENUM literals are strings in MySQL.
    return Expr(sql_value(value), fam if fam in NUMERIC else STR)


def _native_lit(draw: Callable, family: str) -> Expr:
    """A literal that a column of ``family`` holds as it is (as a parameter, its value needs
    no conversion: a DECIMAL of the columns' scale, a date written as dates are)."""
    if family in (DEC, DECX):
        return Expr(sql_value(draw(st.sampled_from(SQL_TYPES[3].values))), DEC)
    if family == UINT:
        return Expr(str(draw(st.sampled_from([0, 1, 7, 1000]))), INT)
    if family in (DATE, DATETIME, TIME):
        typ = next(t for t in SQL_TYPES if t.family == family)
        return Expr(sql_value(draw(st.sampled_from(typ.values))), STR)
    if family in (INT, DBL, STR):
        return _lit(draw, family)
    if family == ENUM:
        return Expr(sql_str(draw(st.sampled_from(ENUM_MEMBERS))), STR)
    return _lit(draw, INT)


def _small_int(draw: Callable, lo: int = -1, hi: int = 4) -> str:
    v = draw(st.integers(lo, hi))
    return str(v)


def _arith_family(a: Expr, b: Expr, op: str) -> str:
    fams = {a.family, b.family}
    if fams <= {INT, UINT} and UINT in fams and op != "/":
        # MySQL: an UNSIGNED operand makes integer arithmetic UNSIGNED (MOD: the dividend)
        return UINT if op != "%" or a.family == UINT else INT
    if op == "DIV":
        return INT
    if fams & {DBL, STR, ENUM, "mixed", "null"} or fams & set(TEMPORAL):
        return DBL if (fams & {DBL, STR}) else "mixed"
    if op == "/" or DEC in fams or DECX in fams:
        return DECX
    return INT


class ExprGen:
    """Expressions over a scope of columns, each a draw away."""

    def __init__(self, draw: Callable, scope: list[Expr], *, native_literals: bool = False
                 ) -> None:
        self.draw = draw
        self.scope = scope
        #: Literals compared with a bare column are of the column's type (see Shape.wire).
        self.native_literals = native_literals

    def pick(self, options: list[str]) -> str:
        return self.draw(st.sampled_from(options))

    def column(self, families: tuple[str, ...] | None = None) -> Expr | None:
        cols = [c for c in self.scope if families is None or c.family in families]
        return self.draw(st.sampled_from(cols)) if cols else None

    def of_family(self, family: str, *, constant: bool = False, literal: bool = True) -> Expr:
        """A column (unless ``constant``) or literal (if ``literal``) of exactly ``family``,
        else NULL."""
        col = self.column((family,)) if not constant and (
            not literal or self.draw(st.integers(0, 2))) else None
        if col is None and family == UINT:  # (MariaDB: UNSIGNED and NULL unite as DECIMAL)
            return Expr("CAST(0 AS UNSIGNED)", UINT)
        if col is not None or not literal:
            return col or Expr("NULL", "null")
        if family == DEC:  # of the columns' scale, DECIMAL(8,2)
            return Expr(sql_value(self.draw(st.sampled_from(SQL_TYPES[3].values))), DEC)
        if family in (INT, DBL, STR):
            return _lit(self.draw, family)
        return (None if constant else self.column((family,))) or Expr("NULL", "null")

    def comparand(self, other: Expr, depth: int, *, literal: bool = False) -> Expr:
        """Something to compare ``other`` with (an expression, or a literal): any type,
        but only dates next to a temporal value while that is a known mismatch."""
        if literal and self.native_literals and other.column:
            return _native_lit(self.draw, other.family)
        e = _lit(self.draw) if literal else self.expr(depth)
        if not left_out("temporal-comparisons"):
            return e
        if other.family in TEMPORAL or other.family in ("mixed", "bool"):
            if e.family in TEMPORAL:
                return e
            col = None if literal else self.column(TEMPORAL)
            return col or _lit(self.draw, self.pick([DATE, DATETIME]))
        if e.family in TEMPORAL or e.family == "mixed":
            col = None if literal else self.column(
                tuple(f for f in ALL_FAMILIES if f not in TEMPORAL))
            return col or _lit(self.draw, INT)
        return e

    # ..................................................................... scalars

    def expr(self, depth: int) -> Expr:
        """Any scalar expression."""
        choices = ["col"] * 5 + ["lit"] * 2
        if depth > 0:
            choices += ["arith", "arith", "neg", "func", "func", "func", "case", "control",
                        "pred"]
        c = self.pick(choices)
        if c == "col":
            return self.column() or _lit(self.draw)
        if c == "lit":
            return _lit(self.draw)
        if c == "arith":
            return self.arith(depth)
        if c == "neg":
            inner = self.numeric(depth - 1, temporal=False)
            family = INT if inner.family == UINT else inner.family  # (-u is signed)
            return Expr(f"-({inner.sql})", family if family in NUMERIC else DBL)
        if c == "func":
            return self.function(depth)
        if c == "case":
            return self.case(depth)
        if c == "control":
            return self.control(depth)
        p = self.pred(depth - 1, truth=False)  # (a bare value is no 1/0/NULL)
        return Expr(f"({p.sql})", INT)  # (MySQL's grammar takes no IS NULL before IN)

    def numeric(self, depth: int, *, temporal: bool = True) -> Expr:
        """An expression, mostly of a numeric family (strings and dates sometimes, as
        MySQL converts them); ``temporal=False``: never a DATE or DATETIME
        (MARIADB_IS_NOT_MYSQL)."""
        e = None
        if depth > 0 and self.draw(st.integers(0, 3)) == 0:
            e = self.expr(depth)
        elif self.draw(st.integers(0, 3)) > 0:
            e = self.column(NUMERIC)
        e = e or self.column() or _lit(self.draw, self.pick([INT, DEC, DBL]))
        if not temporal and (e.family in TEMPORAL or e.family == "mixed"):
            e = self.column(NUMERIC) or _lit(self.draw, self.pick([INT, DEC, DBL]))
        return e

    def text(self, depth: int) -> Expr:
        """An expression, mostly a string."""
        if depth > 0 and self.draw(st.integers(0, 2)) == 0:
            return self.string_function(depth)
        col = self.column(TEXTUAL) if self.draw(st.integers(0, 3)) > 0 else None
        return col or self.column() or _lit(self.draw, STR)

    def temporal(self, depth: int) -> Expr:
        """A DATE or DATETIME (or, sometimes, any value: MySQL reads numbers and strings as
        dates)."""
        col = self.column(TEMPORAL) if self.draw(st.integers(0, 3)) > 0 else None
        if col is not None:
            return col
        if depth > 0 and self.draw(st.booleans()):
            return self.expr(depth - 1)
        return _lit(self.draw, self.pick([DATE, DATETIME]))

    def arith(self, depth: int) -> Expr:
        op = self.pick(["+", "-", "*", "/", "DIV", "%", "MOD"])
        if op == "*":
            # a column or literal times a small literal: no BIGINT overflow (rivulet's
            # integers do not overflow, MySQL raises an error)
            a = self.numeric(0)
            b = _lit(self.draw, self.pick([INT, DEC, DBL]))
            if b.sql.lstrip("-").isdigit() and abs(int(b.sql)) > 1000:
                b = Expr("3", INT)
        else:
            a, b = self.numeric(depth - 1), self.numeric(depth - 1)
        if left_out("unsigned-subtraction") and UINT in (a.family, b.family) and \
                op in ("+", "-", "*", "DIV"):
            op = "%"  # (an UNSIGNED result below zero is an error in MySQL)
        if op == "DIV" and left_out("div-overflow") and {a.family, b.family} & {DBL, STR}:
            op = "%"  # (a quotient past BIGINT is an error in MySQL)
        if op == "/" and left_out("decimal-division") and not {a.family, b.family} & {DBL, STR}:
            b = _lit(self.draw, DBL)
        if op == "MOD":
            return Expr(f"MOD({a.sql}, {b.sql})", _arith_family(a, b, "%"))
        return Expr(f"({a.sql} {op} {b.sql})", _arith_family(a, b, op))

    def branches(self, n: int, depth: int) -> list[Expr]:
        """``n`` results of one CASE/IF/COALESCE...: of one type while mixing types is a
        known mismatch."""
        first = self.expr(depth)
        out = [first]
        for _ in range(n - 1):
            out.append(self.expr(depth))
        return out

    def case(self, depth: int) -> Expr:
        n = self.draw(st.integers(1, 2))
        has_else = self.draw(st.integers(0, 3)) > 0
        results = self.branches(n + has_else, depth - 1)
        branches, other = results[:n], (results[n] if has_else else None)
        if self.draw(st.booleans()):  # searched CASE
            whens = " ".join(f"WHEN {self.pred(depth - 1).sql} THEN {b.sql}" for b in branches)
        else:  # simple CASE
            subject = self.expr(depth - 1)
            whens = " ".join(f"WHEN {self.comparand(subject, 0, literal=True).sql} THEN {b.sql}"
                             for b in branches)
            whens = f"{subject.sql} {whens}"
        fams = {b.family for b in branches} | ({other.family} if other else set())
        text = f"CASE {whens}" + (f" ELSE {other.sql}" if other else "") + " END"
        return Expr(text, fams.pop() if len(fams) == 1 else "mixed")

    def control(self, depth: int) -> Expr:
        name = self.pick(["COALESCE", "IFNULL", "NULLIF", "IF", "GREATEST", "LEAST"])
        if name == "IF":
            a, b = self.branches(2, depth - 1)
            fam = a.family if a.family == b.family else "mixed"
            return Expr(f"IF({self.pred(depth - 1).sql}, {a.sql}, {b.sql})", fam)
        n = 2 if name in ("IFNULL", "NULLIF") else self.draw(st.integers(2, 3))
        args = self.branches(n, depth - 1)
        if name == "NULLIF":
            args[1] = self.comparand(args[0], depth - 1)
        if name == "COALESCE" and self.draw(st.integers(0, 3)) == 0:
            args[0] = Expr("NULL", "null")
        fams = {a.family for a in args if a.family != "null"}
        fam = fams.pop() if len(fams) == 1 else "mixed"
        if name == "NULLIF":
            fam = args[0].family
        return Expr(f"{name}({', '.join(a.sql for a in args)})", fam)

    def function(self, depth: int) -> Expr:
        group = self.pick(["string", "string", "number", "date", "cast"])
        if group == "string":
            return self.string_function(depth)
        if group == "number":
            return self.number_function(depth)
        if group == "cast":
            return self.cast(depth)
        return self.date_function(depth)

    def cast(self, depth: int) -> Expr:
        """CAST(x AS type) of any x (MySQL's conversions, spelled out)."""
        target, family = self.draw(st.sampled_from([
            ("SIGNED", INT), ("UNSIGNED", UINT), ("CHAR", STR), ("DECIMAL(8,2)", DEC),
            ("DOUBLE", DBL), ("DATE", DATE), ("DATETIME", DATETIME)]))
        x = self.expr(depth - 1)
        if family in (DATE, DATETIME) and left_out("date-cast-of-no-date-compared"):
            x = self.temporal(0)
        if family == UINT and left_out("unsigned-subtraction"):
            target, family = "SIGNED", INT  # (a negative value CAST AS UNSIGNED wraps)
        if target == "CHAR" and left_out("number-read-of-a-char-cast"):
            return Expr(f"CONCAT(CAST({x.sql} AS CHAR))", family)  # (text of 31 places)
        return Expr(f"CAST({x.sql} AS {target})", family)

    def string_function(self, depth: int) -> Expr:
        d = depth - 1
        name = self.pick([
            "CONCAT", "CONCAT_WS", "LOWER", "LCASE", "UPPER", "UCASE", "LENGTH", "OCTET_LENGTH",
            "CHAR_LENGTH", "CHARACTER_LENGTH", "SUBSTRING", "SUBSTR", "MID", "LEFT", "RIGHT",
            "TRIM", "TRIM_FROM", "LTRIM", "RTRIM", "REPLACE", "REVERSE", "LOCATE", "INSTR",
            "LPAD", "RPAD", "REPEAT",
        ])
        s = self.text(d)
        if name in ("CONCAT", "CONCAT_WS"):
            args = [self.expr(d) for _ in range(self.draw(st.integers(1, 3)))]
            if name == "CONCAT_WS":
                args.insert(0, _lit(self.draw, STR) if self.draw(st.integers(0, 4)) else
                            Expr("NULL", "null"))
                if len(args) < 2:
                    args.append(s)
            return Expr(f"{name}({', '.join(a.sql for a in args)})", STR)
        if name in ("LOWER", "LCASE", "UPPER", "UCASE", "REVERSE", "LTRIM", "RTRIM", "TRIM"):
            return Expr(f"{name}({s.sql})", STR)
        if name in ("LENGTH", "OCTET_LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH"):
            return Expr(f"{name}({s.sql})", INT)
        if name == "TRIM_FROM":
            where = self.pick(["BOTH ", "LEADING ", "TRAILING ", ""])
            rem = sql_str(self.pick([" ", "a", "0", "ab", "\\"]))
            return Expr(f"TRIM({where}{rem} FROM {s.sql})", STR)
        if name in ("SUBSTRING", "SUBSTR", "MID"):
            start = _small_int(self.draw, -3, 4)
            if name == "MID" or self.draw(st.booleans()):
                return Expr(f"{name}({s.sql}, {start}, {_small_int(self.draw, -1, 3)})", STR)
            return Expr(f"{name}({s.sql}, {start})", STR)
        if name in ("LEFT", "RIGHT"):
            return Expr(f"{name}({s.sql}, {_small_int(self.draw, -1, 3)})", STR)
        if name == "REPLACE":
            return Expr(f"REPLACE({s.sql}, {_lit(self.draw, STR).sql}, "
                        f"{_lit(self.draw, STR).sql})", STR)
        if name in ("LOCATE", "INSTR"):
            needle = self.text(d) if self.draw(st.integers(0, 2)) == 0 else Expr(
                sql_str(self.pick(["a", "1", " ", "", "b", "é", "\\"])), STR)
            if name == "INSTR":
                return Expr(f"INSTR({s.sql}, {needle.sql})", INT)
            if self.draw(st.booleans()):  # (an empty needle: MARIADB_IS_NOT_MYSQL)
                needle = Expr(sql_str(self.pick(["a", "1", " ", "b", "é", "\\"])), STR)
                return Expr(f"LOCATE({needle.sql}, {s.sql}, {_small_int(self.draw, 0, 3)})", INT)
            return Expr(f"LOCATE({needle.sql}, {s.sql})", INT)
        if name in ("LPAD", "RPAD"):
            pad = sql_str(self.pick(["x", "", "ab", " ", "é"]))
            return Expr(f"{name}({s.sql}, {_small_int(self.draw, -1, 5)}, {pad})", STR)
        assert name == "REPEAT"
        return Expr(f"REPEAT({s.sql}, {_small_int(self.draw, -1, 3)})", STR)

    def number_function(self, depth: int) -> Expr:
        d = depth - 1
        name = self.pick(["ABS", "ROUND", "ROUND2", "FLOOR", "CEIL", "CEILING", "SIGN", "MOD"])
        x = self.numeric(d, temporal=False)
        fam = x.family if x.family in NUMERIC else DBL
        if name == "ROUND2":
            return Expr(f"ROUND({x.sql}, {_small_int(self.draw, -1, 3)})",
                        DECX if fam == DEC else fam)
        if name == "MOD":
            y = self.numeric(d)
            return Expr(f"MOD({x.sql}, {y.sql})", _arith_family(x, y, "%"))
        if name == "SIGN":
            return Expr(f"SIGN({x.sql})", INT)
        if name in ("FLOOR", "CEIL", "CEILING", "ROUND"):
            return Expr(f"{name}({x.sql})", fam if fam in (INT, UINT) else INT if fam in (
                DEC, DECX) else DBL)
        return Expr(f"{name}({x.sql})", fam)

    def date_function(self, depth: int) -> Expr:
        d = depth - 1
        name = self.pick(["YEAR", "MONTH", "DAY", "DAYOFMONTH", "HOUR", "MINUTE", "SECOND",
                          "DATE", "DATEDIFF", "UNIX_TIMESTAMP"])
        x = self.temporal(d)
        if name == "DATE":
            return Expr(f"DATE({x.sql})", DATE)
        if name == "DATEDIFF":
            return Expr(f"DATEDIFF({x.sql}, {self.temporal(d).sql})", INT)
        return Expr(f"{name}({x.sql})", INT)

    # ..................................................................... predicates

    def pred(self, depth: int, *, truth: bool = True) -> Expr:
        """A predicate (three-valued); ``truth``: or a bare value, as a condition."""
        choices = ["cmp", "cmp", "cmp", "in", "null", "between", "like"] + (
            ["truth"] if truth else [])
        if depth > 0:
            choices += ["not", "and", "or", "or", "xor", "pipes"]
        c = self.pick(choices)
        d = max(depth, 0)
        if c == "cmp":
            op = self.pick(["=", "<>", "!=", "<", "<=", ">", ">=", "<=>"])
            a = self.expr(min(d, 1))
            b = self.comparand(a, min(d, 1), literal=self.draw(st.booleans()))
            if self.draw(st.integers(0, 6)) == 0:
                b = Expr("NULL", "null")
            if self.draw(st.booleans()):
                a, b = b, a
            return Expr(f"{a.sql} {op} {b.sql}", "bool")
        if c == "in":
            a = self.expr(min(d, 1))
            items = [self.comparand(a, 0, literal=True).sql
                     for _ in range(self.draw(st.integers(1, 4)))]
            if self.draw(st.integers(0, 3)) == 0:
                items.append(self.comparand(a, 0).sql)
            if self.draw(st.integers(0, 4)) == 0:
                items.append("NULL")
            neg = "NOT " if self.draw(st.integers(0, 2)) == 0 else ""
            return Expr(f"{a.sql} {neg}IN ({', '.join(items)})", "bool")
        if c == "null":
            neg = "NOT " if self.draw(st.booleans()) else ""
            return Expr(f"{self.expr(min(d, 1)).sql} IS {neg}NULL", "bool")
        if c == "between":
            a = self.expr(min(d, 1))
            lo = self.comparand(a, 0, literal=self.draw(st.integers(0, 3)) > 0)
            hi = self.comparand(a, 0, literal=self.draw(st.integers(0, 3)) > 0)
            if left_out("between-mixed-types"):  # the bounds of the subject's type
                a = self.column() or _lit(self.draw, INT)
                lo, hi = self.of_family(a.family), self.of_family(a.family)
            neg = "NOT " if self.draw(st.integers(0, 3)) == 0 else ""
            return Expr(f"{a.sql} {neg}BETWEEN {lo.sql} AND {hi.sql}", "bool")
        if c == "like":
            s = self.text(min(d, 1))
            pattern = self.draw(st.text(alphabet="a%_\\ 1é!", max_size=4))
            neg = "NOT " if self.draw(st.integers(0, 3)) == 0 else ""
            escape = ""
            if not left_out("like-escape") and self.draw(st.integers(0, 4)) == 0:
                escape = f" ESCAPE {sql_str(self.pick(['!', '|']))}"
            if pattern.endswith("\\") and not escape:
                pattern += "%"  # a pattern ending in the escape character: an error in MySQL
            return Expr(f"{s.sql} {neg}LIKE {sql_str(pattern)}{escape}", "bool")
        if c == "truth":  # a value as a condition: true when non-zero as a number
            return Expr(self.expr(min(d, 1)).sql, "bool")
        if c == "not":
            return Expr(f"NOT ({self.pred(d - 1).sql})", "bool")
        op = {"and": "AND", "or": "OR", "xor": "XOR", "pipes": "||"}[c]
        return Expr(f"({self.pred(d - 1).sql} {op} {self.pred(d - 1).sql})", "bool")

    # ..................................................................... aggregates

    def summable(self) -> Expr:
        """An argument for SUM or AVG: any type, but not those of known mismatches."""
        arg = self.column() if self.draw(st.integers(0, 3)) else self.expr(1)
        families: tuple[str, ...] = ALL_FAMILIES
        if left_out("sum-over-strings"):
            families = NUMERIC
        if left_out("sum-avg-of-integers"):
            families = tuple(f for f in families if f not in (INT, UINT))
        if arg is None or arg.family not in families:
            arg = self.column(families) or _lit(self.draw, DBL)
        return arg

    def aggregate(self) -> Expr:
        name = self.pick(["COUNT(*)", "COUNT", "COUNT_DISTINCT", "SUM", "SUM", "SUM_DISTINCT",
                          "AVG", "AVG", "MIN", "MIN", "MAX", "MAX", "EXPR"])
        arg = self.column() if self.draw(st.integers(0, 3)) else self.expr(1)
        if arg is None:
            arg = _lit(self.draw, INT)
        if name == "COUNT(*)":
            return Expr("COUNT(*)", INT)
        if name == "COUNT":
            return Expr(f"COUNT({arg.sql})", INT)
        if name == "COUNT_DISTINCT":
            return Expr(f"COUNT(DISTINCT {arg.sql})", INT)
        if name in ("SUM", "SUM_DISTINCT", "AVG"):
            arg = self.summable()
            fam = DBL if arg.family not in (INT, UINT, DEC) else DEC if (
                arg.family == DEC and name != "AVG") else DECX
            distinct = "DISTINCT " if name == "SUM_DISTINCT" else ""
            return Expr(f"{name.removesuffix('_DISTINCT')}({distinct}{arg.sql})", fam)
        if name in ("MIN", "MAX"):
            return Expr(f"{name}({arg.sql})", arg.family)
        forms = ["count_plus", "coalesce_max", "max_minus_min"]
        if not left_out("decimal-division"):
            forms.append("sum_over_count")
        inner = self.pick(forms)
        num = self.column(NUMERIC) or Expr("1", INT)
        if inner == "count_plus":
            return Expr(f"COUNT(*) * 2 + {_lit(self.draw, INT).sql}", INT)
        if inner == "coalesce_max":
            other = self.of_family(arg.family, constant=True) if left_out(
                "case-result-types") else _lit(self.draw)
            return Expr(f"COALESCE(MAX({arg.sql}), {other.sql})", arg.family)
        if inner == "sum_over_count":
            return Expr(f"SUM({num.sql}) / COUNT(*)", DECX)
        return Expr(f"MAX({num.sql}) - MIN({num.sql})", num.family)


# --------------------------------------------------------------------------- queries


@dataclass
class Shape:
    """Which constructs a generated query may use."""

    joins: bool = True
    max_relations: int = 3
    aggregates: bool = True
    subqueries: bool = True
    unions: bool = True
    params: bool = True
    order: bool = True
    #: For the MySQL protocol, whose server makes a literal compared with a column in WHERE
    #: a view parameter: while "mixed-type-keys" is a known mismatch, such literals are of
    #: the column's own type there.
    wire: bool = False


@dataclass
class Select:
    sql: str
    families: tuple[str, ...]
    params: list[tuple[str, str]] = field(default_factory=list)  # (family, role) per value
    #: IN (?, ...) marks, if any (for the reads: how many values go there)
    in_arity: int = 0


def g_from(draw: Callable, tables: tuple[Table, ...], shape: Shape, depth: int
           ) -> tuple[str, list[Expr]]:
    """FROM with 1-3 relations joined on equalities (of any two types), and its scope."""
    n = draw(st.integers(1, shape.max_relations)) if shape.joins else 1
    parts: list[str] = []
    scope: list[Expr] = []
    for i in range(n):
        alias = f"r{i}"
        if shape.subqueries and depth > 0 and draw(st.integers(0, 5)) == 0:
            inner = g_select(draw, tables, Shape(joins=shape.joins, max_relations=2,
                                                 aggregates=shape.aggregates, subqueries=False,
                                                 unions=shape.unions, params=False, order=False),
                             depth - 1)
            text = f"({inner.sql})"
            cols = [Expr(f"{alias}.c{j}", f, True) for j, f in enumerate(inner.families)]
        else:
            t = draw(st.sampled_from(tables))
            text = t.name
            cols = [Expr(f"{alias}.{c.name}", c.family, True, True) for c in t.all_columns]
        if i == 0:
            parts.append(f"{text} AS {alias}")
        else:
            pairs = [(a, b) for a in scope for b in cols]
            if left_out("mixed-type-keys"):
                pairs = [(a, b) for a, b in pairs if _same_key_class(a, b)]
            pairs = [(a, b) for a, b in pairs  # text-joined-to-the-primary-key
                     if not _text_and_primary_key(a, b) and not _text_and_primary_key(b, a)]
            if not pairs:
                break
            chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=2, unique=True))
            conds = [f"{a.sql} = {b.sql}" for a, b in chosen]
            if draw(st.integers(0, 4)) == 0:
                conds.append(ExprGen(draw, scope + cols).pred(0).sql)
            on = " AND ".join(conds)
            if not left_out("parenthesized-predicates") and draw(st.integers(0, 5)) == 0:
                on = f"({on})"
            join = draw(st.sampled_from(["JOIN", "LEFT JOIN", "INNER JOIN", "LEFT OUTER JOIN"]))
            parts.append(f"{join} {text} AS {alias} ON {on}")
        scope += cols
    return " ".join(parts), scope


def _text_and_primary_key(a: Expr, b: Expr) -> bool:
    return a.base and a.sql.endswith(".id") and b.family in TEXTUAL


def _same_key_class(a: Expr, b: Expr) -> bool:
    """Two base columns of one type (integers of any size and sign together, strings of any
    length together)."""
    def cls(f: str) -> str:
        return "integer" if f in (INT, UINT) else "text" if f in TEXTUAL else f
    return a.base and b.base and cls(a.family) == cls(b.family)


def g_params(draw: Callable, scope: list[Expr], *, allow_range: bool, group: list[Expr] | None
             ) -> tuple[list[str], list[tuple[str, str]], int]:
    """Parameter conjuncts (in text order), (family, role) per mark, and the IN arity."""
    cols = [c for c in scope if c.column]
    if left_out("mixed-type-keys"):  # parameters only on columns of one known type
        cols = [c for c in cols if c.base]
    if not cols:
        return [], [], 0
    shapes = ["eq", "eq", "eq_flipped", "eq2", "in", "in_eq"]
    if allow_range:
        shapes += ["gt", "le", "flipped_range", "between", "two_bounds", "two_bounds",
                   "eq_range", "in_range", "in2", "two_columns"]
    elif group is not None:  # an aggregated query: a range, with an equality or not
        shapes += ["gt", "le", "flipped_range", "between", "two_bounds", "eq_range",
                   "two_columns"]
    if not left_out("parenthesized-predicates"):
        shapes.append("paren")
    kind = draw(st.sampled_from(shapes))

    def col() -> Expr:
        return draw(st.sampled_from(cols))

    if kind in ("in", "in_eq"):
        if group is not None:  # an IN list's column must be grouped (REFUSED_BY_DESIGN)
            grouped = [c for c in cols if c.sql in {g.sql for g in group}]
            if not grouped:
                kind = "eq"
            else:
                c = draw(st.sampled_from(grouped))
        else:
            c = col()
    if kind == "eq":
        c = col()
        return [f"{c.sql} = ?"], [(c.family, "eq")], 0
    if kind == "eq_flipped":
        c = col()
        return [f"? = {c.sql}"], [(c.family, "eq")], 0
    if kind == "paren":
        c = col()
        return [f"({c.sql} = ?)"], [(c.family, "eq")], 0
    if kind == "eq2":
        a, b = col(), col()
        if a == b:
            return [f"{a.sql} = ?"], [(a.family, "eq")], 0
        return [f"{a.sql} = ?", f"{b.sql} = ?"], [(a.family, "eq"), (b.family, "eq")], 0
    if kind in ("in", "in_eq"):
        k = draw(st.integers(1, 3))
        conj = [f"{c.sql} IN ({', '.join(['?'] * k)})"]
        ps = [(c.family, "in")] * k
        if kind == "in_eq":
            d = col()
            if d != c:
                conj.insert(0, f"{d.sql} = ?")
                ps.insert(0, (d.family, "eq"))
                if draw(st.booleans()):
                    conj.reverse()
                    ps = ps[1:] + ps[:1]
        return conj, ps, k
    c = col()
    if kind == "in2":  # two IN lists, on two columns (REFUSED_BY_DESIGN on one)
        d = col()
        if d == c:
            return [f"{c.sql} IN (?, ?)"], [(c.family, "in")] * 2, 2
        k, m = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        conj = [f"{c.sql} IN ({', '.join(['?'] * k)})", f"{d.sql} IN ({', '.join(['?'] * m)})"]
        return conj, [(c.family, "in")] * k + [(d.family, "in")] * m, 0
    if kind == "in_range":  # an IN list and a range, on one column or two
        k = draw(st.integers(1, 3))
        d = col()
        conj = [f"{c.sql} IN ({', '.join(['?'] * k)})", f"{d.sql} >= ?", f"{d.sql} < ?"]
        return conj, [(c.family, "in")] * k + [(d.family, "range")] * 2, k
    if kind == "gt":
        return [f"{c.sql} {draw(st.sampled_from(['>', '>=']))} ?"], [(c.family, "range")], 0
    if kind == "le":
        return [f"{c.sql} {draw(st.sampled_from(['<', '<=']))} ?"], [(c.family, "range")], 0
    if kind == "flipped_range":
        return [f"? {draw(st.sampled_from(['<', '<=', '>', '>=']))} {c.sql}"], \
            [(c.family, "range")], 0
    if kind == "between":
        return [f"{c.sql} BETWEEN ? AND ?"], [(c.family, "range")] * 2, 0
    if kind == "two_bounds":
        lo = draw(st.sampled_from([">", ">="]))
        hi = draw(st.sampled_from(["<", "<="]))
        return [f"{c.sql} {lo} ?", f"{c.sql} {hi} ?"], [(c.family, "range")] * 2, 0
    if kind == "two_columns":  # ranges on two columns (on one, if drawn twice)
        d = col()
        lo = draw(st.sampled_from([">", ">="]))
        conj = [f"{c.sql} {lo} ?", f"{d.sql} BETWEEN ? AND ?"]
        ps = [(c.family, "range"), (d.family, "range"), (d.family, "range")]
        if draw(st.booleans()):
            conj.reverse()
            ps = ps[1:] + ps[:1]
        return conj, ps, 0
    d = col()  # eq_range
    if d == c:
        return [f"{c.sql} > ?"], [(c.family, "range")], 0
    return [f"{d.sql} = ?", f"{c.sql} >= ?"], [(d.family, "eq"), (c.family, "range")], 0


def g_order(draw: Callable, width: int, hidden: list[str]) -> str:
    """ORDER BY 1-2 terms (aliases, positions, or expressions not selected) [LIMIT k
    [OFFSET n]]."""
    terms: list[str] = []
    for _ in range(draw(st.integers(1, 2))):
        forms = ["alias", "alias", "position"] + (["hidden"] if hidden else [])
        form = draw(st.sampled_from(forms))
        if form == "hidden":
            term = draw(st.sampled_from(hidden))
        else:
            c = draw(st.integers(0, width - 1))
            term = f"c{c}" if form == "alias" else str(c + 1)
        if term not in [t.removesuffix(" DESC").removesuffix(" ASC") for t in terms]:
            terms.append(term + draw(st.sampled_from(["", " DESC", " ASC"])))
    sql = " ORDER BY " + ", ".join(terms)
    if draw(st.integers(0, 3)) > 0:
        sql += f" LIMIT {draw(st.integers(0, 3))}"
        if draw(st.booleans()):
            sql += f" OFFSET {draw(st.integers(1, 2))}"
    return sql


def g_select(draw: Callable, tables: tuple[Table, ...], shape: Shape, depth: int,
             *, width: int | None = None) -> Select:
    """A SELECT (``width``: exactly that many output columns, for UNION branches)."""
    if shape.unions and width is None and depth > 0 and draw(st.integers(0, 7)) == 0:
        return g_union(draw, tables, shape, depth)
    from_sql, scope = g_from(draw, tables, shape, depth)
    gen = ExprGen(draw, scope, native_literals=shape.wire and left_out("mixed-type-keys"))
    where: list[str] = []
    if draw(st.integers(0, 2)) > 0:
        where.append(gen.pred(2).sql)
    aggregated = shape.aggregates and draw(st.integers(0, 2)) == 0
    items: list[Expr] = []
    group: list[Expr] = []
    having = ""
    if aggregated:
        group = draw(st.lists(st.sampled_from([c for c in scope if c.column]),
                              max_size=2, unique=True))
        if group and draw(st.integers(0, 3)) == 0 and not left_out("grouped-expressions"):
            e = gen.expr(1)
            # (a constant would mean a position; MariaDB rejects a grouped NULLIF, and a
            # grouped BETWEEN or comparison of a date with text, MARIADB_IS_NOT_MYSQL)
            if (re.search(r"\br\d+\.", e.sql) and "NULLIF" not in e.sql
                    and "BETWEEN" not in e.sql and "'" not in e.sql):
                group[0] = e
        n = width if width is not None else draw(st.integers(1, 4))
        for g in group:
            if len(items) < n and draw(st.integers(0, 3)) > 0:
                items.append(g)
        while len(items) < n:
            items.append(gen.aggregate())
        if draw(st.integers(0, 3)) == 0:
            op = draw(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]))
            # A group key in HAVING by its alias (MariaDB misreads some qualified names there)
            grouped = [Expr(f"c{i}", e.family) for i, e in enumerate(items) if e in group]
            subject = gen.aggregate() if not grouped or draw(st.booleans()) else \
                draw(st.sampled_from(grouped))
            having = f" HAVING {subject.sql} {op} {gen.comparand(subject, 0, literal=True).sql}"
    else:
        n = width if width is not None else draw(st.integers(1, 4))
        for _ in range(n):
            items.append(gen.column() if draw(st.booleans()) else gen.expr(2))
    params: list[tuple[str, str]] = []
    in_arity = 0
    if shape.params and draw(st.integers(0, 2)) > 0:
        conj, params, in_arity = g_params(draw, scope, allow_range=not aggregated,
                                          group=group if aggregated else None)
        where += conj
        # A parameterized query's filter keeps parameter conjuncts at the top level.
    distinct = not aggregated and draw(st.integers(0, 5)) == 0
    select_list = ", ".join(f"{e.sql} AS c{i}" for i, e in enumerate(items))
    sql = f"SELECT {'DISTINCT ' if distinct else ''}{select_list} FROM {from_sql}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    if group:
        sql += " GROUP BY " + ", ".join(g.sql for g in group)
    sql += having
    if shape.order and draw(st.integers(0, 2)) == 0:
        if distinct:
            hidden: list[str] = []
        elif aggregated:
            hidden = [g.sql for g in group] + ["COUNT(*)"]
            nums = [c for c in scope if c.column and c.family in NUMERIC]
            if nums:
                hidden.append(f"SUM({draw(st.sampled_from(nums)).sql})")
        else:
            hidden = [c.sql for c in scope if c.column] + [gen.expr(1).sql]
            # a constant ORDER BY term would mean a position, or nothing
            hidden = [h for h in hidden if re.search(r"\br\d+\.", h)]
        sql += g_order(draw, len(items), hidden)
    return Select(sql, tuple(e.family for e in items), params, in_arity)


def g_union(draw: Callable, tables: tuple[Table, ...], shape: Shape, depth: int) -> Select:
    inner = Shape(joins=shape.joins, max_relations=2, aggregates=shape.aggregates,
                  subqueries=False, unions=False, params=False, order=False)
    first = g_select(draw, tables, inner, depth - 1)
    width = len(first.families)
    branches = [first.sql]
    fams = [list(first.families)]
    for _ in range(draw(st.integers(1, 2))):
        b = g_select(draw, tables, inner, depth - 1, width=width)
        branches.append(b.sql)
        fams.append(list(b.families))
    op = " UNION ALL " if draw(st.booleans()) else " UNION "
    union = op.join(branches)
    families = tuple(
        col[0] if len(set(col)) == 1 else "mixed" for col in zip(*fams))
    params: list[tuple[str, str]] = []
    in_arity = 0
    # (a column of several types takes no condition: MARIADB_IS_NOT_MYSQL)
    scope = [Expr(f"u.c{i}", f, True) for i, f in enumerate(families)
             if f != "mixed" or not left_out("condition-on-a-mixed-union-column")]
    if shape.params and scope and draw(st.booleans()):
        conj, params, in_arity = g_params(draw, scope, allow_range=True, group=None)
        outer = ", ".join(f"u.c{i} AS c{i}" for i in range(width))
        sql = f"SELECT {outer} FROM ({union}) AS u"
        if conj:
            sql += f" WHERE {' AND '.join(conj)}"
    else:
        sql = union
    if shape.order and draw(st.integers(0, 2)) == 0:
        sql += g_order(draw, width, [])
    return Select(sql, families, params, in_arity)


def g_param_value(draw: Callable, family: str) -> Any:
    probes = PROBES.get(family)
    if probes is None:  # an expression of several types (a UNION column): numbers, strings
        probes = PROBES[INT] + PROBES[STR]
    if left_out("mixed-type-keys"):
        probes = NATIVE_PROBES.get(family, (None,))
    return draw(st.sampled_from(probes))


def g_reads(draw: Callable, select: Select, reads: int) -> tuple[tuple[Any, ...], ...]:
    """Parameter tuples for a query's ``?`` marks (one empty tuple if it has none)."""
    if not select.params:
        return ((),)
    out = []
    for _ in range(reads):
        out.append(tuple(g_param_value(draw, fam) for fam, _role in select.params))
    return tuple(dict.fromkeys(out))


@st.composite
def examples(draw: Callable, shape: Shape | None = None, *, queries: tuple[int, int] = (8, 24),
             max_tables: int = 3, reads: int = 4) -> Example:
    """One schema with rows, and ``queries`` generated queries over it."""
    shape = shape or Shape()
    tables = draw(tables_strategy(max_tables))
    rows: dict[str, list[tuple]] = {}
    first = 1
    for t in tables:
        rows[t.name] = g_rows(draw, t, first)
        first += 100
    out = []
    for _ in range(draw(st.integers(*queries))):
        select = g_select(draw, tables, shape, draw(st.sampled_from([1, 1, 2])))
        out.append(Query(select.sql, g_reads(draw, select, reads)))
    writes = [g_write(draw, draw(st.sampled_from(tables)), rows, 1000 + 10 * i)
              for i in range(draw(st.integers(0, 4)))]
    return Example(tables, rows, out, writes)


def g_write(draw: Callable, table: Table, rows: dict[str, list[tuple]], fresh_id: int) -> str:
    """An INSERT of new rows, an UPDATE of a column to a value of its type (or NULL), or a
    DELETE, by key or by a value (``fresh_id``: the first key the INSERT may use)."""
    ids = [r[0] for r in rows[table.name]] or [1]
    kind = draw(st.sampled_from(["insert", "update", "update", "delete"]))
    if kind == "insert":
        new = [(fresh_id + i,) + tuple(g_value(draw, c) for c in table.columns)
               for i in range(draw(st.integers(1, 3)))]
        values = ", ".join("(" + ", ".join(sql_value(v) for v in r) + ")" for r in new)
        return f"INSERT INTO {table.name} VALUES {values}"
    col = draw(st.sampled_from(table.columns))
    if kind == "update":
        value = g_value(draw, col)
        where = f"id = {draw(st.sampled_from(ids))}" if draw(st.booleans()) else \
            f"{col.name} IS NOT NULL"
        return f"UPDATE {table.name} SET {col.name} = {sql_value(value)} WHERE {where}"
    if draw(st.booleans()):
        return f"DELETE FROM {table.name} WHERE id = {draw(st.sampled_from(ids))}"
    return f"DELETE FROM {table.name} WHERE {col.name} = {sql_value(g_value(draw, col))}"
