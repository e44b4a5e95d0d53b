"""Valid SQL for the oracle fuzzers: a typed schema, its rows, and statements MySQL runs.

``bench/reliability_oracle.py`` runs what this module generates on rivulet and on a
private MariaDB (``bench/mysql_oracle.py``) and compares the answers. So everything here
is SQL MySQL accepts over a schema both hold: two tables with a column of every type
(INT, BIGINT, INT UNSIGNED, DECIMAL, DOUBLE, VARCHAR, TEXT, DATE, DATETIME, and TIME and
ENUM where rivulet's schema takes them: :func:`schema_for`), rows of edge values, and

* SELECTs: expressions of every kind (arithmetic, string, date and control functions,
  CAST), WHERE predicates (comparisons, IN, BETWEEN, LIKE, IS NULL, AND/OR/NOT/XOR),
  GROUP BY with aggregates and HAVING, DISTINCT, inner, left and self joins, UNION [ALL],
  subqueries in FROM, ORDER BY with LIMIT/OFFSET (:func:`select`);
* views with ``?`` parameters (``col = ?``, ``IN (?, ...)``, ranges) and the parameter
  values to look them up with (:func:`parameterized_view`);
* INSERT (literal values or ``?`` parameters, one or several rows, sometimes a duplicate
  key), UPDATE with expressions, DELETE (:func:`write`).

rivulet may refuse any of it (with an error naming the construct): the fuzzers count
that as a refusal and check that it changed nothing. What it answers must be MySQL's answer.

Shapes rivulet is known to answer wrongly today, with the fix under way, are left out
*by name* (:data:`AVOIDED`), never silently: each generator branch that can produce one
asks :meth:`Shapes.allows` first. Empty the set as the fixes land (``--avoid none`` runs
every shape, to see where rivulet stands).
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from pymysql.converters import escape_item

D = decimal.Decimal


class Cls(enum.StrEnum):
    """What a value or an expression is, for choosing what to combine it with."""

    INT = "int"
    DEC = "decimal"
    FLOAT = "float"
    STR = "str"
    DATE = "date"
    DATETIME = "datetime"
    TIME = "time"
    ENUM = "enum"


NUMERIC = (Cls.INT, Cls.DEC, Cls.FLOAT)


# --------------------------------------------------------------------------- avoided shapes

#: Shapes rivulet answers wrongly today (the findings in ``/work/r26/fuzz-findings.md`` and
#: the report of issue 26), each fixed by other work in progress. The generator leaves
#: them out by name so that the mismatch count measures everything else; a shape comes
#: off this list as soon as its fix lands (``--avoid none`` runs them all).
AVOIDED: frozenset[str] = frozenset({
    # MOD of a negative DECIMAL that comes to zero is -0.00 in MariaDB, which there even
    # compares unequal to 0 (``MOD(-1.25, 1.25) = 0`` is 0), and so is a quotient that
    # rounds to zero (``1 / -2147483648 NOT IN (0.00)`` is 1); rivulet's, like MySQL's
    # (its division makes a zero result plain), is 0. Data decides: set aside by the
    # checker (bench/reliability_oracle.py).
    "a negative zero DECIMAL",
    # BIGINT arithmetic past 64 bits (and UNSIGNED below 0): MySQL fails the statement
    # (error 1690), rivulet computes the exact value. Data decides, so the checker (not the
    # generator) sets such answers aside, counted under this name.
    "integer overflow (MySQL error 1690)",
})

#: Shapes the oracle cannot decide, left out always (they say nothing about rivulet), so
#: that a mismatch means rivulet is not MySQL: where MariaDB is not MySQL, or where SQL
#: leaves the answer open.
UNDECIDABLE: frozenset[str] = frozenset({
    # SUM/AVG of DOUBLEs of very different sizes (2**53 and 0.5): the sum depends on the
    # order of the additions, which SQL leaves open (so only DECIMALs are summed).
    "a sum of DOUBLEs whose order matters",
    # BIGINT beyond 2**53 against a DOUBLE: MySQL compares as doubles (2**53 + 1 equals
    # 2**53 + 0e0), MariaDB exactly.
    "an integer beyond 2**53 compared with a DOUBLE",
    # FLOOR/CEIL of a DOUBLE literal: MariaDB answers an integer (so ``1 / FLOOR(-2.5e0)``
    # is a DECIMAL division there), MySQL a DOUBLE.
    "FLOOR or CEIL of a DOUBLE literal",
    # A fraction of a second of .5 or more into a DATETIME (no fsp): MySQL rounds up,
    # MariaDB truncates (fractions are kept below .5 where that shape is allowed).
    "a fraction of a second of .5 or more into a DATETIME",
    # MariaDB sums CAST(x AS CHAR) rounded to an integer (SUM(CAST(-1.25e0 AS CHAR)) is
    # -1, SUM(CONCAT(-1.25e0)) -1.25): its CAST carries no decimals.
    "a SUM of a CAST AS CHAR",
    # A grouped SUM/AVG of a quotient: MySQL adds the places it shows when it groups in a
    # temporary table, the nine it carries when it groups in primary-key order (rivulet:
    # always as shown; docs/sql.md lists the difference).
    "a SUM or AVG of a quotient grouped by a key",
    # A TIME that comes through CASE/IF/COALESCE into arithmetic: MariaDB drops the sign of
    # a negative one (CASE WHEN 1 THEN tm END - 0 is 10000 for '-01:00:00', tm - 0 -10000).
    "a TIME through control flow into arithmetic",
})

#: Every shape name the generator knows (so that ``--avoid`` can be checked).
SHAPES: frozenset[str] = AVOIDED | UNDECIDABLE | frozenset({
    # once avoided, now generated (and compared) by default:
    "comparison of DATE with DATETIME", "SUM or AVG over strings", "SUM or AVG of integers",
    "UNION of mixed column types", "parameter IN list with a range",
    "comparison of a DECIMAL with a DOUBLE", "ENUM column", "TIME column",
    "integer division with /", "a DOUBLE written into a string column",
    "a TEXT value over 65,535 bytes", "fractional seconds into a DATETIME",
    "comparison of a date with a number", "GREATEST or LEAST over mixed types",
    "DECIMAL scale of arithmetic and CAST", "mixed string/number comparison",
    "DIV of a DOUBLE", "a DOUBLE rounded at a half",
    "an UPDATE assignment reading a column assigned before it",
    "division by zero in a write (MySQL error 1365)", "parameter with two bounds",
    "UNIX_TIMESTAMP over MySQL", "control flow over mixed types",
})


@dataclass(frozen=True)
class Shapes:
    """Which named shapes the generator may produce."""

    avoided: frozenset[str] = AVOIDED

    def allows(self, shape: str) -> bool:
        assert shape in SHAPES, f"unknown shape {shape!r}"
        return shape not in self.avoided and shape not in UNDECIDABLE


# --------------------------------------------------------------------------- the schema


@dataclass(frozen=True)
class Col:
    """One column of a fuzzed table."""

    name: str
    sql_type: str
    cls: Cls
    #: The values rows and literals draw from (edge values included).
    pool: tuple[Any, ...]
    nullable: bool = True


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Col, ...]

    @property
    def ddl(self) -> str:
        cols = ", ".join(f"{c.name} {c.sql_type}" for c in self.columns)
        return f"CREATE TABLE {self.name} ({cols})"

    def col(self, name: str) -> Col:
        return next(c for c in self.columns if c.name == name)


_INTS = (-3, -2, -1, 0, 1, 2, 3, 2147483647, -2147483648)
_BIGS = (0, 1, -1, 7, 2**31, -(2**31) - 1, 2**53 + 1, 2**62, -(2**62), 10**15,
         9223372036854775807)
_UINTS = (0, 1, 2, 3, 7, 2**31, 4294967295)
_DECS = tuple(D(x) for x in ("0.00", "1.25", "-1.25", "2.50", "99.99", "-0.01", "0.10",
                             "3.33", "123456.78", "-999999.99", "7.00"))
_XDECS = tuple(D(x) for x in ("0.000", "1.250", "-2.005", "0.333", "999.999", "-999.999",
                              "2.000"))
_FLOATS = (0.0, 0.5, -1.25, 1 / 3, 1e10, -2.5, 3.0, 1e-5, 123.456, 2.0**53, -0.1)
_STRS = ("", "a", "b", "A", "ab", "abc", "b ", " a", "é", "ÉCOLE", "😀", "10", "2x", "a%b",
         "a_b", "it's", "x\\y", "a\x00b", "zz", "B")
_TEXTS = ("", "t", "tt", "long text " * 5, "ü" * 30, "a", "Ab", "😀 é")
_DATES = (dt.date(2020, 2, 29), dt.date(2021, 1, 1), dt.date(1999, 12, 31),
          dt.date(2020, 3, 1), dt.date(1970, 1, 1), dt.date(2038, 1, 19), dt.date(1000, 1, 1),
          dt.date(9999, 12, 31))
_DATETIMES = (dt.datetime(2021, 2, 3, 4, 5, 6), dt.datetime(2020, 2, 29, 23, 59, 59),
              dt.datetime(1999, 12, 31, 0, 0, 0), dt.datetime(2021, 2, 3, 0, 0, 0),
              dt.datetime(1970, 1, 1, 0, 0, 1), dt.datetime(2038, 1, 19, 3, 14, 7),
              dt.datetime(2020, 3, 1, 12, 0, 0))
_TIMES = (dt.timedelta(hours=12, minutes=34, seconds=56), dt.timedelta(0),
          -dt.timedelta(hours=1), dt.timedelta(hours=838, minutes=59, seconds=59),
          dt.timedelta(hours=23, minutes=59, seconds=59), dt.timedelta(minutes=1))
_ENUMS = ("lo", "mid", "hi")
_SMALL = (0, 1, 2, 3)

#: The columns of table ``r`` every rivulet has; :data:`OPTIONAL` ones are added where
#: rivulet's schema accepts their type.
R_COLUMNS = (
    Col("id", "INT PRIMARY KEY", Cls.INT, tuple(range(1, 60)), nullable=False),
    Col("i", "INT", Cls.INT, _INTS),
    Col("g", "INT NOT NULL", Cls.INT, _SMALL, nullable=False),
    Col("big", "BIGINT", Cls.INT, _BIGS),
    Col("u", "INT UNSIGNED", Cls.INT, _UINTS),
    Col("d", "DECIMAL(8,2)", Cls.DEC, _DECS),
    Col("f", "DOUBLE", Cls.FLOAT, _FLOATS),
    Col("v", "VARCHAR(12)", Cls.STR, _STRS),
    Col("txt", "TEXT", Cls.STR, _TEXTS),
    Col("day", "DATE", Cls.DATE, _DATES),
    Col("ts", "DATETIME", Cls.DATETIME, _DATETIMES),
)
OPTIONAL = {
    "TIME column": Col("tm", "TIME", Cls.TIME, _TIMES),
    "ENUM column": Col("e", "ENUM('lo','mid','hi')", Cls.ENUM, _ENUMS),
}
S_TABLE = Table("s", (
    Col("id", "INT PRIMARY KEY", Cls.INT, tuple(range(1, 80)), nullable=False),
    Col("r_id", "INT", Cls.INT, tuple(range(0, 45))),
    Col("n", "INT", Cls.INT, _INTS),
    Col("x", "DECIMAL(6,3)", Cls.DEC, _XDECS),
    Col("w", "VARCHAR(8)", Cls.STR, _STRS[:14]),
))


@dataclass(frozen=True)
class Schema:
    """The fuzzed tables (``r``: every type; ``s``: joined to ``r`` on ``s.r_id = r.id``)
    and the shapes the generator may use."""

    tables: tuple[Table, ...]
    shapes: Shapes = field(default_factory=Shapes)

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if t.name == name)

    @property
    def ddl(self) -> list[str]:
        return [t.ddl for t in self.tables]


def schema_for(accepts: Callable[[str], bool], shapes: Shapes | None = None) -> Schema:
    """The schema: ``r`` with each optional column (TIME, ENUM) whose type rivulet
    ``accepts`` (a probe that creates a table with it) and whose shape is not avoided."""
    shapes = shapes or Shapes()
    columns: tuple[Col, ...] = R_COLUMNS
    if shapes.allows("fractional seconds into a DATETIME"):
        fractions = (dt.datetime(2021, 2, 3, 4, 5, 6, 250000),
                     dt.datetime(1999, 12, 31, 0, 0, 0, 1))
        columns = tuple(Col(c.name, c.sql_type, c.cls, c.pool + fractions, c.nullable)
                        if c.cls == Cls.DATETIME else c for c in R_COLUMNS)
    extra = tuple(col for shape, col in OPTIONAL.items()
                  if shapes.allows(shape) and accepts(f"CREATE TABLE probe ({col.name} "
                                                      f"{col.sql_type})"))
    return Schema((Table("r", columns + extra), S_TABLE), shapes)


# --------------------------------------------------------------------------- literals


def literal(value: Any) -> str:
    """``value`` as a MySQL literal, written as the drivers write parameters."""
    return str(escape_item(value, "utf8mb4"))


# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Ref:
    """A column as an expression may name it (``r.d``, ``a.d``, ``d``)."""

    sql: str
    col: Col


class Gen:
    """Draws expressions, predicates and statements from a seeded ``random.Random`` (a
    statement takes hundreds of choices: a Hypothesis draw each would cost more than
    running it; Hypothesis draws the seed, :func:`generated`)."""

    def __init__(self, rnd: random.Random, schema: Schema) -> None:
        self.rnd = rnd
        self.schema = schema
        self.shapes = schema.shapes

    # ..................................................................... basics

    def pick(self, options: Sequence[Any]) -> Any:
        return options[self.rnd.randrange(len(options))]

    def chance(self, percent: int) -> bool:
        return self.rnd.randrange(100) < percent

    def num(self, lo: int, hi: int) -> int:
        return self.rnd.randint(lo, hi)

    def sample(self, options: Sequence[Any], lo: int, hi: int) -> list[Any]:
        """Between ``lo`` and ``hi`` distinct items of ``options``, in random order."""
        return self.rnd.sample(list(options), min(len(options), self.num(lo, hi)))

    def value_of(self, col: Col, null_percent: int = 8) -> Any:
        if col.nullable and self.chance(null_percent):
            return None
        return self.pick(col.pool)

    def lit(self, cls: Cls, refs: Sequence[Ref] = ()) -> str:
        """A literal of class ``cls``: mostly a value of a column of that class (so that
        comparisons hit rows), sometimes an edge value."""
        same = [r for r in refs if r.col.cls == cls]
        if same and self.chance(70):
            return literal(self.pick(self.pick(same).col.pool))
        return literal(self.pick(_LITERALS[cls]))

    # ..................................................................... expressions

    def expr(self, cls: Cls, refs: Sequence[Ref], depth: int = 2) -> str:
        """An expression whose value is of class ``cls`` (numeric: any numeric class)."""
        leaves = [r for r in refs if r.col.cls == cls]
        if depth <= 0 or self.chance(45):
            if leaves and self.chance(75):
                return self.pick(leaves).sql
            if cls == Cls.DATE:  # a DATE (a bare '2020-02-29' would be a string)
                return f"DATE {self.lit(cls, refs)}"
            return self.lit(cls, refs)
        builders = _BUILDERS[cls]
        return self.pick(builders)(self, refs, depth - 1)

    def numeric(self, refs: Sequence[Ref], depth: int) -> str:
        return self.expr(self.pick(NUMERIC), refs, depth)

    def same_class_pair(self, refs: Sequence[Ref], depth: int) -> tuple[str, str, Cls]:
        """Two expressions that MySQL compares without a string/number conversion (or,
        where that shape is allowed, of any two classes)."""
        cls = self.pick(self.classes(refs))
        if cls in NUMERIC:
            left = self.pick(NUMERIC)
            right = self.pick(NUMERIC)
            if Cls.FLOAT in (left, right) and Cls.INT in (left, right) and not self.shapes.allows(
                    "an integer beyond 2**53 compared with a DOUBLE"):
                right = left
            if Cls.FLOAT in (left, right) and Cls.DEC in (left, right) and not self.shapes.allows(
                    "comparison of a DECIMAL with a DOUBLE"):
                right = left
            return self.expr(left, refs, depth), self.expr(right, refs, depth), cls
        if cls in (Cls.DATE, Cls.DATETIME) and self.shapes.allows(
                "comparison of DATE with DATETIME") and self.chance(20):
            other = Cls.DATETIME if cls == Cls.DATE else Cls.DATE
            return self.expr(cls, refs, depth), self.expr(other, refs, depth), cls
        if self.shapes.allows("mixed string/number comparison") and self.chance(15):
            others = [c for c in self.classes(refs) if c != cls]
            if not self.shapes.allows("comparison of a date with a number"):
                dated = {Cls.DATE, Cls.DATETIME}
                others = [c for c in others if not (
                    (cls in dated and c in NUMERIC) or (c in dated and cls in NUMERIC))]
            other = self.pick(others or [cls])
            return self.expr(cls, refs, depth), self.expr(other, refs, depth), cls
        return self.expr(cls, refs, depth), self.expr(cls, refs, depth), cls

    def classes(self, refs: Sequence[Ref]) -> list[Cls]:
        present = sorted({r.col.cls for r in refs})
        return present or [Cls.INT]

    # ..................................................................... predicates

    def predicate(self, refs: Sequence[Ref], depth: int = 2) -> str:
        if depth > 0 and self.chance(35):
            kind = self.pick(["and", "or", "not", "xor", "and"])
            if kind == "not":
                return f"NOT ({self.predicate(refs, depth - 1)})"
            left, right = self.predicate(refs, depth - 1), self.predicate(refs, depth - 1)
            return f"({left}) {kind.upper()} ({right})"
        kind = self.pick(["cmp", "cmp", "cmp", "null", "in", "between", "like", "truth"])
        if kind == "null":
            cls = self.pick(self.classes(refs))
            return f"{self.expr(cls, refs, 1)} IS {self.pick(['', 'NOT '])}NULL"
        if kind == "in":
            cls = self.pick(self.classes(refs))
            items = ", ".join(self.lit(cls, refs) for _ in range(self.num(1, 4)))
            return f"{self.expr(cls, refs, 1)} {self.pick(['', 'NOT '])}IN ({items})"
        if kind == "between":
            cls = self.pick(self.classes(refs))
            return (f"{self.expr(cls, refs, 1)} {self.pick(['', 'NOT '])}BETWEEN "
                    f"{self.lit(cls, refs)} AND {self.lit(cls, refs)}")
        if kind == "like":
            return (f"{self.expr(Cls.STR, refs, 1)} {self.pick(['', 'NOT '])}LIKE "
                    f"{literal(self.pick(_PATTERNS))}")
        if kind == "truth":  # a number as a truth value, as MySQL allows
            return self.expr(Cls.INT, refs, 1)
        left, right, _ = self.same_class_pair(refs, depth - 1)
        return f"{left} {self.pick(['=', '<>', '!=', '<', '<=', '>', '>=', '<=>'])} {right}"

    # ..................................................................... aggregates

    def aggregate(self, refs: Sequence[Ref]) -> str:
        kind = self.pick(["COUNT(*)", "COUNT", "COUNT DISTINCT", "SUM", "AVG", "MIN", "MAX"])
        if kind == "COUNT(*)":
            return "COUNT(*)"
        if kind in ("SUM", "AVG"):
            if self.shapes.allows("SUM or AVG over strings") and self.chance(10):
                text = self.expr(Cls.STR, refs, 1)
                if "AS CHAR)" not in text or self.shapes.allows("a SUM of a CAST AS CHAR"):
                    return f"{kind}({text})"
            if self.shapes.allows("SUM or AVG of integers"):
                return f"{kind}({self.numeric(refs, 1)})"
            if self.shapes.allows("a sum of DOUBLEs whose order matters"):
                return f"{kind}({self.expr(self.pick([Cls.DEC, Cls.FLOAT]), refs, 1)})"
            return f"{kind}({self.expr(Cls.DEC, refs, 1)})"
        cls = self.pick(self.classes(refs))
        if kind == "COUNT DISTINCT":
            return f"COUNT(DISTINCT {self.expr(cls, refs, 1)})"
        return f"{kind}({self.expr(cls, refs, 1)})"


def _operand(g: Gen, target: Cls, refs: Sequence[Ref], depth: int) -> str:
    """An operand of arithmetic whose result is of class ``target``: an INT for an INT, an
    INT or a DECIMAL for a DECIMAL, any number for a DOUBLE (the other operand being one).
    UNSIGNED columns are left out where their overflow (MySQL error 1690) is avoided."""
    if target == Cls.INT:
        return _int_expr(g, refs, depth)
    if target == Cls.DEC:
        return g.pick([lambda: _int_expr(g, refs, depth), lambda: g.expr(Cls.DEC, refs, depth)])()
    return g.numeric(refs, depth)


def _int_expr(g: Gen, refs: Sequence[Ref], depth: int) -> str:
    if g.shapes.allows("integer overflow (MySQL error 1690)"):
        return g.expr(Cls.INT, refs, depth)
    signed = [r for r in refs if r.col.cls != Cls.INT or r.col.sql_type != "INT UNSIGNED"]
    return g.expr(Cls.INT, signed, depth)


def _dec_leaf(g: Gen, refs: Sequence[Ref]) -> tuple[str, Col | None]:
    """A DECIMAL column (and the column), or a DECIMAL literal (and None)."""
    decs = [r for r in refs if r.col.cls == Cls.DEC]
    if decs and g.chance(80):
        ref = g.pick(decs)
        return ref.sql, ref.col
    return g.lit(Cls.DEC, refs), None


def _arith(target: Cls) -> Callable[[Gen, Sequence[Ref], int], str]:
    def build(g: Gen, refs: Sequence[Ref], depth: int) -> str:
        scale_free = g.shapes.allows("DECIMAL scale of arithmetic and CAST")
        if target == Cls.INT:
            op = g.pick(["+", "-", "*", "DIV", "%"])
            if op == "DIV":  # DIV of any numbers is an integer
                if g.shapes.allows("DIV of a DOUBLE"):
                    return f"({g.numeric(refs, depth)} DIV {g.numeric(refs, depth)})"
                exact = [Cls.INT, Cls.DEC]
                return f"({g.expr(g.pick(exact), refs, depth)} DIV " \
                       f"{g.expr(g.pick(exact), refs, depth)})"
            return f"({_int_expr(g, refs, depth)} {op} {_int_expr(g, refs, depth)})"
        if target == Cls.DEC:
            if g.shapes.allows("integer division with /") and g.chance(15):
                return f"({_int_expr(g, refs, depth)} / {_int_expr(g, refs, depth)})"
            if scale_free:
                op = g.pick(["+", "-", "*", "/", "%"])
                return f"({_operand(g, target, refs, depth)} {op} " \
                       f"{_operand(g, target, refs, depth)})"
            # one DECIMAL and an integer or a value of the same scale: the scale is known
            dec, col = _dec_leaf(g, refs)
            other = g.pick([_int_expr(g, refs, depth), dec,
                            literal(g.pick(col.pool)) if col else g.lit(Cls.INT)])
            op = g.pick(["+", "-"])
            return f"({dec} {op} {other})" if g.chance(50) else f"({other} {op} {dec})"
        op = g.pick(["+", "-", "*", "/"])
        a, b = g.expr(Cls.FLOAT, refs, depth), g.numeric(refs, depth)
        return f"({a} {op} {b})" if g.chance(50) else f"({b} {op} {a})"
    return build


def _numeric_function(target: Cls) -> Callable[[Gen, Sequence[Ref], int], str]:
    def build(g: Gen, refs: Sequence[Ref], depth: int) -> str:
        if target == Cls.INT:
            x = _int_expr(g, refs, depth)
            exact = g.expr(g.pick([Cls.INT, Cls.DEC]), refs, depth)
            if g.shapes.allows("a DOUBLE rounded at a half"):
                exact = g.numeric(refs, depth)
            return g.pick([f"ABS({x})", f"SIGN({g.numeric(refs, depth)})", f"ROUND({x})",
                           f"FLOOR({x})", f"CEIL({x})", f"-({x})", f"MOD({x}, {g.num(1, 7)})",
                           f"GREATEST({x}, {_int_expr(g, refs, depth)})",
                           f"LEAST({x}, {_int_expr(g, refs, depth)})",
                           f"CAST({exact} AS SIGNED)",
                           f"FLOOR({g.expr(Cls.DEC, refs, depth)})",
                           f"CEIL({g.expr(Cls.DEC, refs, depth)})"])
        if target == Cls.DEC:
            x = g.expr(Cls.DEC, refs, depth)
            options = [f"ABS({x})", f"-({x})", f"ROUND({x}, 0)"]  # (never a scale above x's)
            if g.shapes.allows("DECIMAL scale of arithmetic and CAST"):
                options += [f"ROUND({x}, {g.num(1, 4)})",
                            f"CAST({g.numeric(refs, depth)} AS DECIMAL(12,3))",
                            f"GREATEST({x}, {g.expr(Cls.DEC, refs, depth)})",
                            f"LEAST({x}, {g.expr(Cls.DEC, refs, depth)})",
                            f"MOD({x}, {g.num(1, 7)})", f"ROUND({x})"]
            return g.pick(options)
        x = g.expr(Cls.FLOAT, refs, depth)
        options = [f"ABS({x})", f"-({x})",
                   f"GREATEST({x}, {g.expr(Cls.FLOAT, refs, depth)})",
                   f"LEAST({x}, {g.expr(Cls.FLOAT, refs, depth)})"]
        if (not x[:1].isdigit() and not x.startswith("-")
                or g.shapes.allows("FLOOR or CEIL of a DOUBLE literal")):
            options += [f"FLOOR({x})", f"CEIL({x})"]
        if g.shapes.allows("a DOUBLE rounded at a half"):
            options.append(f"ROUND({x}, {g.num(0, 3)})")
        return g.pick(options)
    return build


def _string_measure(g: Gen, refs: Sequence[Ref], depth: int) -> str:
    s = g.expr(Cls.STR, refs, depth)
    return g.pick([f"LENGTH({s})", f"CHAR_LENGTH({s})",
                   f"LOCATE({literal(g.pick(['a', 'b', '']))}, {s})",
                   f"INSTR({s}, {literal(g.pick(['a', 'x', 'é']))})"])


def _date_part(g: Gen, refs: Sequence[Ref], depth: int) -> str:
    d = g.expr(Cls.DATE, refs, depth)
    t = g.expr(Cls.DATETIME, refs, depth)
    options = [f"YEAR({d})", f"MONTH({d})", f"DAY({d})", f"HOUR({t})", f"MINUTE({t})",
               f"SECOND({t})", f"DATEDIFF({d}, {g.expr(Cls.DATE, refs, depth)})", f"YEAR({t})"]
    if g.shapes.allows("UNIX_TIMESTAMP over MySQL"):
        options.append(f"UNIX_TIMESTAMP({t})")
    return g.pick(options)


def _control(cls: Cls) -> Callable[[Gen, Sequence[Ref], int], str]:
    def build(g: Gen, refs: Sequence[Ref], depth: int) -> str:
        p = g.predicate(refs, 1)
        if g.shapes.allows("control flow over mixed types"):
            def branch() -> str:
                if g.chance(15):
                    classes = g.classes(refs)
                    if cls in NUMERIC and not g.shapes.allows(
                            "a TIME through control flow into arithmetic"):
                        classes = [c for c in classes if c != Cls.TIME] or [Cls.INT]
                    return g.expr(g.pick(classes), refs, depth)
                return g.numeric(refs, depth) if cls in NUMERIC else g.expr(cls, refs, depth)
            a, b = branch(), branch()
        else:  # both branches of one type: a column and a value of that column
            a, b = _same_type_pair(g, cls, refs)
        return g.pick([f"COALESCE({a}, {b})", f"IFNULL({a}, {b})", f"NULLIF({a}, {b})",
                       f"IF({p}, {a}, {b})", f"CASE WHEN {p} THEN {a} ELSE {b} END",
                       f"CASE WHEN {p} THEN {a} END"])
    return build


def _same_type_pair(g: Gen, cls: Cls, refs: Sequence[Ref]) -> tuple[str, str]:
    """A column of class ``cls`` and another value of the same SQL type (the column
    itself, NULL, or a literal of its pool, typed where MySQL would read it otherwise)."""
    # (Not an INT UNSIGNED column: MariaDB answers COALESCE(NULL, u) with a DECIMAL.)
    same = [r for r in refs if r.col.cls == cls and r.col.sql_type != "INT UNSIGNED"]
    if not same:
        return "NULL", g.lit(cls, refs)
    ref = g.pick(same)
    value = g.pick(ref.col.pool)
    choices = [ref.sql, "NULL"]
    if cls == Cls.DATE:
        choices.append("DATE " + literal(value))
    elif cls not in (Cls.DATETIME, Cls.TIME):  # (a string would make a DATETIME a string)
        choices.append(literal(value))
    other = g.pick(choices)
    return (ref.sql, other) if g.chance(50) else (other, ref.sql)


def _string_function(g: Gen, refs: Sequence[Ref], depth: int) -> str:
    s = g.expr(Cls.STR, refs, depth)
    small = g.num(-2, 5)
    return g.pick([
        f"CONCAT({s}, {g.expr(Cls.STR, refs, depth)})", f"UPPER({s})", f"LOWER({s})",
        f"SUBSTRING({s}, {small})", f"SUBSTRING({s}, {small}, {g.num(0, 4)})",
        f"LEFT({s}, {g.num(0, 4)})", f"RIGHT({s}, {g.num(0, 4)})", f"TRIM({s})",
        f"LTRIM({s})", f"RTRIM({s})", f"REVERSE({s})",
        f"REPLACE({s}, {literal(g.pick(['a', 'b', ' ']))}, {literal(g.pick(['', 'xy']))})",
        f"LPAD({s}, {g.num(0, 6)}, {literal(g.pick(['*', 'ab']))})",
        f"RPAD({s}, {g.num(0, 6)}, {literal(g.pick(['-', 'é']))})",
        f"REPEAT({s}, {g.num(0, 3)})",
        f"CONCAT_WS({literal(g.pick([',', '']))}, {s}, {g.expr(Cls.STR, refs, depth)})",
        f"CONCAT({s}, {g.numeric(refs, depth)})", f"CAST({g.numeric(refs, depth)} AS CHAR)",
    ])


def _date_function(g: Gen, refs: Sequence[Ref], depth: int) -> str:
    other = f"DATE {g.lit(Cls.DATE, refs)}"
    if g.shapes.allows("GREATEST or LEAST over mixed types"):
        other = g.lit(Cls.DATE, refs)  # a string: MySQL compares it as a date
    return g.pick([f"DATE({g.expr(Cls.DATETIME, refs, depth)})",
                   f"{g.pick(['GREATEST', 'LEAST'])}({g.expr(Cls.DATE, refs, depth)}, {other})"])


_BUILDERS: dict[Cls, list[Callable[[Gen, Sequence[Ref], int], str]]] = {
    Cls.INT: [_arith(Cls.INT), _arith(Cls.INT), _numeric_function(Cls.INT), _string_measure,
              _date_part, _control(Cls.INT)],
    Cls.DEC: [_arith(Cls.DEC), _numeric_function(Cls.DEC), _control(Cls.DEC)],
    Cls.FLOAT: [_arith(Cls.FLOAT), _numeric_function(Cls.FLOAT), _control(Cls.FLOAT)],
    Cls.STR: [_string_function, _string_function, _control(Cls.STR)],
    Cls.DATE: [_date_function, _control(Cls.DATE)],
    Cls.DATETIME: [_control(Cls.DATETIME)],
    Cls.TIME: [_control(Cls.TIME)],
    Cls.ENUM: [_control(Cls.ENUM)],
}

_LITERALS: dict[Cls, tuple[Any, ...]] = {
    Cls.INT: (0, 1, -1, 2, 3, 10, 2147483647, 2**40),
    Cls.DEC: (D("0.5"), D("1.25"), D("-3.10"), D("100.00"), D("0.001")),
    Cls.FLOAT: (0.5, 2.0, -1.5, 1e3, 0.1),
    Cls.STR: ("a", "b", "", "ab", "A", "é", "10"),
    Cls.DATE: _DATES[:4],
    Cls.DATETIME: _DATETIMES[:4],
    Cls.TIME: _TIMES[:3],
    Cls.ENUM: _ENUMS,
}
_PATTERNS = ("a%", "%b", "_", "%a_%", "a\\%b", "%", "", "A%", "é%", "%\\_%", "__", "1%")


# --------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Query:
    """A SELECT to run: its text (``?`` marks) and the parameter tuples to run it with
    (an ad-hoc query asked again with other values)."""

    sql: str
    params: tuple[tuple[Any, ...], ...] = ((),)


@dataclass(frozen=True)
class ViewCase:
    """A view with ``?`` parameters and the parameter tuples to look it up with."""

    select: str
    lookups: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class Write:
    """An INSERT, UPDATE or DELETE: its text (``?`` marks), parameters, and table."""

    sql: str
    params: tuple[Any, ...]
    table: str


def _refs(table: Table, alias: str | None, qualify: bool) -> list[Ref]:
    prefix = f"{alias or table.name}." if qualify else ""
    return [Ref(prefix + c.name, c) for c in table.columns]


def _from_clause(g: Gen, schema: Schema) -> tuple[str, list[Ref]]:
    """A FROM clause and the columns it makes available."""
    r, s = schema.table("r"), schema.table("s")
    kind = g.pick(["r", "r", "r", "s", "join", "left join", "self join", "subquery"])
    if kind == "r":
        return "r", _refs(r, None, False)
    if kind == "s":
        return "s", _refs(s, None, False)
    if kind in ("join", "left join"):
        join = "JOIN" if kind == "join" else "LEFT JOIN"
        on = g.pick(["r.id = s.r_id", "r.i = s.n", "r.id = s.r_id AND r.g = s.n"])
        if g.shapes.allows("mixed string/number comparison") and g.chance(10):
            on = g.pick(["r.v = s.n", "r.d = s.w"])
        first, second = g.pick([("r", "s"), ("s", "r")])
        return (f"{first} {join} {second} ON {on}",
                _refs(r, None, True) + _refs(s, None, True))
    if kind == "self join":
        key = g.pick(["g", "i", "day"])
        return (f"r AS a JOIN r AS b ON a.{key} = b.{key}",
                _refs(r, "a", True) + [Ref(f"b.{c.name}", c) for c in r.columns[:6]])
    # A subquery in FROM: some columns (and an expression) of r, filtered.
    inner_refs = _refs(r, None, False)
    cols = g.sample(r.columns[1:], 1, 4)
    extra = g.expr(Cls.INT, inner_refs, 1)
    items = ", ".join(c.name for c in cols)
    where = f" WHERE {g.predicate(inner_refs, 1)}" if g.chance(50) else ""
    inner = f"SELECT id, {items}, {extra} AS ex FROM r{where}"
    refs = [Ref(f"q.{c.name}", c) for c in cols] + [Ref("q.id", r.columns[0]),
                                                      Ref("q.ex", Col("ex", "", Cls.INT, _INTS))]
    return f"({inner}) AS q", refs


def select(g: Gen) -> str:
    """One SELECT over the schema (no parameters)."""
    schema = g.schema
    if g.chance(12):  # UNION [ALL] of two SELECTs
        text, classes = _select_core(g, ordered=False)
        if g.shapes.allows("UNION of mixed column types"):
            other, _ = _select_core(g, classes=classes)
        elif " GROUP BY " in text or " HAVING " in text or " FROM (" in text:
            other = text  # the same columns (so the same types)
        else:  # the same columns, other rows
            head = text.partition(" WHERE ")[0]
            other = f"{head} WHERE {g.predicate(_refs_of_select(schema, head))}"
        return f"{text} UNION{g.pick(['', ' ALL'])} {other}"
    return _select_core(g)[0]


def _refs_of_select(schema: Schema, text: str) -> list[Ref]:
    """The columns a SELECT's FROM clause (as :func:`_from_clause` writes them) offers."""
    source = text.partition(" FROM ")[2]
    r, s = schema.table("r"), schema.table("s")
    if source.startswith("r AS a"):
        return _refs(r, "a", True) + [Ref(f"b.{c.name}", c) for c in r.columns[:6]]
    if " JOIN " in source:
        return _refs(r, None, True) + _refs(s, None, True)
    return _refs(r if source.startswith("r") else s, None, False)


def _select_core(g: Gen, classes: tuple[Cls, ...] | None = None,
                 ordered: bool = True) -> tuple[str, tuple[Cls, ...]]:
    """(SELECT text, the classes of its output columns). With ``classes``, a plain SELECT
    whose columns have those classes (for the right side of a UNION); ``ordered``: it may
    have ORDER BY and LIMIT (not the left side of a UNION, where MySQL takes none)."""
    source, refs = _from_clause(g, g.schema)
    grouped = classes is None and g.chance(30)
    items: list[str] = []
    out: list[Cls] = []
    group_by: list[str] = []
    if grouped:
        keys = g.sample(refs, 0, 2)
        for ref in keys:
            items.append(ref.sql)
            out.append(ref.col.cls)
            group_by.append(ref.sql)
        for _ in range(g.num(1, 3)):
            items.append(g.aggregate(refs))
            out.append(Cls.INT)  # (the class of an aggregate matters only for UNION)
    else:
        wanted = classes or tuple(g.pick(g.classes(refs)) for _ in range(g.num(1, 4)))
        for cls in wanted:
            items.append(g.expr(cls, refs, g.num(0, 2)))
            out.append(cls)
    where = g.predicate(refs) if g.chance(60) else ""
    distinct = "DISTINCT " if not grouped and g.chance(12) else ""
    if grouped:
        items = _quotient_sums_decided(g, items, group_by)
    select_list = ", ".join(f"{item} AS c{n}" for n, item in enumerate(items))
    text = f"SELECT {distinct}{select_list} FROM {source}"
    if where:
        text += f" WHERE {where}"
    if grouped and group_by:
        text += " GROUP BY " + ", ".join(group_by)
    if grouped and g.chance(30):
        having = _quotient_sums_decided(g, [g.aggregate(refs)], group_by)[0]
        if having.startswith(("MIN(", "MAX(")) and not g.shapes.allows(
                "comparison of a date with a number"):
            having = g.pick(["COUNT(*)", f"COUNT({g.pick(refs).sql})"])
        text += f" HAVING {having} {g.pick(['>', '<=', '=', '<>'])} {g.lit(Cls.INT)}"
    if classes is None and ordered and g.chance(30):
        terms = g.sample(range(len(items)), 1, 3)
        text += " ORDER BY " + ", ".join(f"c{t}{g.pick(['', ' DESC', ' ASC'])}" for t in terms)
        if g.chance(60):
            text += f" LIMIT {g.num(0, 8)}"
            if g.chance(30):
                text += f" OFFSET {g.num(0, 5)}"
    return text, tuple(out)


def parameterized_view(g: Gen, lookups: int = 30) -> ViewCase:
    """A view over ``r`` with ``?`` parameters in its outer WHERE, and up to ``lookups``
    parameter tuples to look it up with."""
    schema = g.schema
    r = schema.table("r")
    refs = _refs(r, None, False)
    columns = list(r.columns)
    col = g.pick(columns)
    kind = g.pick(["=", "=", "IN", "range", "two bounds", "eq and range", "two eq"])
    marks: list[Col] = []
    if kind == "two bounds" and not g.shapes.allows("parameter with two bounds"):
        kind = "range"
    if kind == "eq and range" and not g.shapes.allows("parameter IN list with a range"):
        kind = "two eq"
    if kind == "=":
        cond = f"{col.name} = ?"
        marks = [col]
    elif kind == "IN":
        n = g.num(1, 4)
        cond = f"{col.name} IN ({', '.join('?' * n)})"
        marks = [col] * n
    elif kind == "range":
        cond = f"{col.name} {g.pick(['>', '>=', '<', '<='])} ?"
        marks = [col]
    elif kind == "two bounds":
        cond = g.pick([f"{col.name} BETWEEN ? AND ?", f"{col.name} > ? AND {col.name} <= ?"])
        marks = [col, col]
    elif kind == "eq and range":
        other = g.pick(columns)
        cond = f"{col.name} IN (?, ?) AND {other.name} >= ?"
        marks = [col, col, other]
    else:
        other = g.pick([c for c in columns if c is not col])
        cond = f"{col.name} = ? AND {other.name} = ?"
        marks = [col, other]
    text = _select_over(g, refs, cond)
    cases = [tuple(_param_value(g, c) for c in marks) for _ in range(g.num(1, lookups))]
    return ViewCase(text, tuple(cases))


def _quotient_sums_decided(g: Gen, items: list[str], group_by: list[str]) -> list[str]:
    """``items`` with a SUM or AVG of a quotient made COUNT(*) where the query groups by a
    primary key (MySQL's answer then depends on its plan: see UNDECIDABLE)."""
    if g.shapes.allows("a SUM or AVG of a quotient grouped by a key") or not any(
            k == "id" or k.endswith(".id") for k in group_by):
        return items
    return ["COUNT(*)" if item.startswith(("SUM(", "AVG(")) and "/" in item else item
            for item in items]


def _select_over(g: Gen, refs: list[Ref], cond: str) -> str:
    """A SELECT over ``r`` (plain or grouped) whose WHERE starts with ``cond``."""
    grouped = g.chance(25)
    items: list[str] = []
    group_by: list[str] = []
    if grouped:
        key = g.pick(refs)
        items, group_by = [key.sql], [key.sql]
        items += [g.aggregate(refs) for _ in range(g.num(1, 2))]
        items = _quotient_sums_decided(g, items, group_by)
    else:
        items = [g.expr(g.pick(g.classes(refs)), refs, g.num(0, 2)) for _ in range(g.num(1, 4))]
    where = cond + (f" AND ({g.predicate(refs, 1)})" if g.chance(40) else "")
    text = f"SELECT {', '.join(f'{x} AS c{n}' for n, x in enumerate(items))} FROM r " \
           f"WHERE {where}"
    if group_by:
        text += " GROUP BY " + ", ".join(group_by)
    if g.chance(25):
        text += f" ORDER BY c0{g.pick(['', ' DESC'])}"
        if g.chance(60):
            text += f" LIMIT {g.num(1, 6)}"
    return text


def _param_value(g: Gen, col: Col) -> Any:
    """A value for a parameter on ``col``: mostly one of its values, sometimes NULL, an
    edge value, or (where allowed) a value of another type."""
    if g.chance(5):
        return None
    if g.shapes.allows("mixed string/number comparison") and g.chance(8):
        return g.pick(["3", "2x", 3, "abc", 1.5, D("2.50")])
    if col.cls == Cls.STR or g.chance(85):
        return g.pick(col.pool)
    return g.pick(_LITERALS[col.cls])


def write(g: Gen) -> Write:
    """An INSERT (new keys, or now and then an existing one), UPDATE or DELETE on ``r`` or
    ``s``."""
    schema = g.schema
    next_id = g.num(1000, 10**6)
    table = schema.table(g.pick(["r", "r", "s"]))
    refs = _refs(table, None, False)
    kind = g.pick(["insert", "insert", "update", "update", "delete"])
    if kind == "insert":
        count = g.num(1, 3)
        ids = [next_id + n if not g.chance(8) else g.num(1, 30) for n in range(count)]
        rows = [(pk, *(g.value_of(c) for c in table.columns[1:])) for pk in ids]
        listed = table.columns
        if g.chance(30):  # a column list: the others take their DEFAULT (NULL)
            listed = (table.columns[0], *g.sample(table.columns[1:], 1, 4))
            rows = [tuple(row[table.columns.index(c)] for c in listed) for row in rows]
            missing = [c for c in table.columns if c not in listed and not c.nullable]
            if missing:
                listed = table.columns
                rows = [(pk, *(g.value_of(c) for c in table.columns[1:])) for pk in ids]
        names = ", ".join(c.name for c in listed)
        if g.chance(50):
            marks = ", ".join("(" + ", ".join("?" * len(listed)) + ")" for _ in rows)
            return Write(f"INSERT INTO {table.name} ({names}) VALUES {marks}",
                         tuple(v for row in rows for v in row), table.name)
        values = ", ".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows)
        return Write(f"INSERT INTO {table.name} ({names}) VALUES {values}", (), table.name)
    where = g.pick([f"id = {g.num(1, 40)}", "id = ?", g.predicate(refs, 1),
                    f"{g.pick(['g', 'n', 'i'] if table.name == 'r' else ['n', 'r_id'])} = "
                    f"{g.num(-1, 3)}"])
    params: tuple[Any, ...] = (g.num(1, 40),) if "?" in where else ()
    if kind == "delete":
        return Write(f"DELETE FROM {table.name} WHERE {where}", params, table.name)
    targets = g.sample(table.columns[1:], 1, 3)
    sets = []
    for n, col in enumerate(targets):
        readable = refs
        if not g.shapes.allows("an UPDATE assignment reading a column assigned before it"):
            readable = [r for r in refs if r.col not in targets[:n]]
        if g.chance(50):
            sets.append(f"{col.name} = {literal(g.value_of(col))}")
        else:
            value = g.numeric(readable, 1) if col.cls in NUMERIC else \
                g.expr(col.cls, readable, 1)
            if col.cls == Cls.STR and not g.shapes.allows(
                    "a DOUBLE written into a string column"):
                value = g.expr(Cls.STR, readable, 1)
            sets.append(f"{col.name} = {value}")
    return Write(f"UPDATE {table.name} SET {', '.join(sets)} WHERE {where}", params, table.name)


def query(g: Gen) -> Query:
    """An ad-hoc SELECT, sometimes with ``?`` parameters in its outer WHERE."""
    if g.chance(25):
        case = parameterized_view(g, lookups=5)
        return Query(case.select, case.lookups)
    return Query(select(g))


def generated(schema: Schema, make: Callable[[Gen], Any]) -> Any:
    """A Hypothesis strategy of ``make(Gen(...))``: Hypothesis draws the seed."""
    return st.integers(0, 2**64 - 1).map(lambda seed: make(Gen(random.Random(seed), schema)))


__all__ = ["AVOIDED", "SHAPES", "Cls", "Col", "Gen", "Query", "Schema", "Shapes", "Table",
           "ViewCase", "Write", "generated", "literal", "parameterized_view", "query",
           "schema_for", "select", "write"]
