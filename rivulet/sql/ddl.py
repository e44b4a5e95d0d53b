"""``CREATE TABLE`` to a :class:`TableSchema`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from rivulet.errors import (
    DuplicateCheckNameError,
    DuplicateKeyNameError,
    FulltextColumnError,
    InvalidDefaultError,
    KeyColumnError,
    SqlError,
)
from rivulet.sql.clock import clock_call
from rivulet.sql.foreign_keys import (
    declared_foreign_key,
    foreign_key,
    inline_references,
    is_foreign_key,
)
from rivulet.sql.parse import DIALECT, error_at, parse_one, unsupported
from rivulet.sql.schemas import split_name
from rivulet.values.schema import (
    BOOL,
    BYTES,
    DATETIME,
    DECIMAL,
    ENUM,
    FLOAT,
    INT,
    INT_RANGES,
    MAX_BYTES,
    SQL_TYPE_KINDS,
    STR,
    TIME,
    TIMESTAMP_BOUNDS,
    Check,
    Column,
    ForeignKey,
    Key,
    KeyKind,
    Kind,
    TableSchema,
    coerce_value,
    unsigned_decimal_bounds,
)


def table_schema(create: exp.Create) -> TableSchema:
    """The schema a ``CREATE TABLE`` statement declares."""
    schema = create.this
    if not isinstance(schema, exp.Schema):
        raise unsupported(create, "CREATE TABLE without a column list")
    name = schema.this.name
    columns: list[Column] = []
    pk_names: list[str] = []
    declared: list[DeclaredKey] = []
    checks: list[Check] = []
    #: (the node, its columns, REFERENCES, the name given or None): FOREIGN KEYs
    references: list[tuple[exp.Expr, list[str], exp.Reference, str | None]] = []
    for item in schema.expressions:
        check = declared_check(item)
        if isinstance(item, exp.ColumnDef):
            column, is_pk = column_definition(item)
            columns.append(column)
            if is_pk:
                pk_names.append(column.name)
            if declares_unique(item):
                declared.append(DeclaredKey(item, None, [column.name], KeyKind.UNIQUE))
            checks.extend(new_check(c, name, checks) for c in column_checks(item))
            inline = inline_references(item)
            if inline is not None:
                references.append((item, [column.name], inline, None))
        elif check is not None:
            checks.append(new_check(check, name, checks))
        elif is_foreign_key(item):
            clause, given = declared_foreign_key(item)
            references.append((item, [_key_part_name(e) for e in clause.expressions],
                               clause.args["reference"], given))
        elif isinstance(item, exp.PrimaryKey) or _is_named_primary_key(item):
            if pk_names:
                raise error_at(item, f"table {name!r} declares its primary key twice")
            key = item if isinstance(item, exp.PrimaryKey) else item.expressions[0]
            pk_names = [_key_part_name(e) for e in key.expressions]
        else:
            declared.append(declared_key(item))
    by_name = {c.name.lower(): i for i, c in enumerate(columns)}
    try:
        pk = tuple(by_name[n.lower()] for n in pk_names)
    except KeyError as missing:
        raise error_at(schema, f"Key column {missing} doesn't exist in table (the primary "
                               f"key of {name!r})", KeyColumnError) from None
    autos = [i for i, c in enumerate(columns) if c.auto_increment]
    if len(autos) > 1:
        raise error_at(schema, f"table {name!r} declares more than one AUTO_INCREMENT column")
    if autos and autos[0] not in pk:
        raise error_at(schema, f"AUTO_INCREMENT column {columns[autos[0]].name!r} must be part "
                               "of the primary key")
    keys: list[Key] = []
    for key in declared:
        positions = key_positions(key.node, key.names, by_name, name)
        if key.kind is KeyKind.FULLTEXT:
            check_fulltext_columns(key.node, [columns[i] for i in positions])
        keys.append(Key(key_name(key.node, key.given, columns[positions[0]].name,
                                 [k.name for k in keys]),
                        positions, key.kind))
    foreign_keys: list[ForeignKey] = []
    for node, names, reference, given in references:
        fk = foreign_key(node, names, reference, given, by_name, name,
                         [f.name for f in foreign_keys])
        foreign_keys.append(fk)
        keys.extend(child_index(node, fk, given, pk, keys, columns))
    # Primary key columns are implicitly NOT NULL, as in MySQL.
    columns = [
        replace(c, nullable=False) if i in pk else c
        for i, c in enumerate(columns)
    ]
    return TableSchema(name, tuple(columns), pk, keys=tuple(keys), checks=tuple(checks),
                       foreign_keys=tuple(foreign_keys), comment=table_comment(create))


def table_comment(create: exp.Create) -> str:
    """The ``COMMENT 'text'`` table option of a ``CREATE TABLE`` ('' if none)."""
    properties = create.args.get("properties")
    for prop in properties.expressions if properties is not None else ():
        if isinstance(prop, exp.SchemaCommentProperty):
            return prop.this.name
    return ""


def _is_named_primary_key(item: exp.Expr) -> bool:
    """``CONSTRAINT name PRIMARY KEY (cols)``: the name is dropped, as MySQL drops it (a
    primary key is always named PRIMARY)."""
    return isinstance(item, exp.Constraint) and len(item.expressions) == 1 and isinstance(
        item.expressions[0], exp.PrimaryKey)


@dataclass(frozen=True)
class DeclaredCheck:
    """A CHECK constraint as written: in a column definition (``a INT CHECK (a > 0)``,
    ``a INT CONSTRAINT name CHECK (...)``), as a table element (``[CONSTRAINT name] CHECK
    (...)``) or by ``ALTER TABLE ... ADD CONSTRAINT name CHECK (...)``."""

    node: exp.Expr
    #: The name given, if one is.
    given: str | None
    condition: exp.Expr


def declared_check(item: exp.Expr) -> DeclaredCheck | None:
    """The CHECK constraint a table element declares, or None if it declares none."""
    if isinstance(item, exp.Constraint) and len(item.expressions) == 1 and isinstance(
            item.expressions[0], exp.CheckColumnConstraint):
        return DeclaredCheck(item, item.name, item.expressions[0].this)
    if isinstance(item, exp.CheckColumnConstraint):
        return DeclaredCheck(item, None, item.this)
    return None


def column_checks(item: exp.ColumnDef) -> list[DeclaredCheck]:
    """The CHECK constraints a column definition declares (they are the table's, as in
    MySQL: a column's check may name the table's other columns too)."""
    out = []
    for constraint in item.args.get("constraints") or []:
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.CheckColumnConstraint):
            given = constraint.this.name if isinstance(constraint.this, exp.Identifier) else None
            out.append(DeclaredCheck(constraint, given, kind.this))
    return out


def new_check(declared: DeclaredCheck, table: str, checks: Iterable[Check]) -> Check:
    """A new CHECK constraint of ``table``, beside ``checks``: named as given (3822 if the
    table has a check of that name), else as MySQL 8 names one, ``<table>_chk_<n>`` with
    ``n`` one past the largest of the names of that form the table has. (MariaDB names
    them ``CONSTRAINT_<n>``, or after their column.)"""
    taken = {c.name.lower() for c in checks}
    if declared.given is not None:
        if declared.given.lower() in taken:
            raise error_at(declared.node, f"Duplicate check constraint name "
                                          f"'{declared.given}'.", DuplicateCheckNameError)
        return Check(declared.given, declared.condition.sql(dialect=DIALECT))
    table = split_name(table)[1]  # (MySQL's names do not hold the database's)
    generated = re.compile(re.escape(f"{table}_chk_".lower()) + r"([0-9]+)")
    numbers = [int(m.group(1)) for name in taken if (m := generated.fullmatch(name))]
    return Check(f"{table}_chk_{max(numbers, default=0) + 1}",
                 declared.condition.sql(dialect=DIALECT))


def check_condition(check: Check) -> exp.Expr:
    """A CHECK constraint's condition, parsed from its text (positions dropped: they are
    in that text, not in a statement a user wrote)."""
    select = parse_one(f"SELECT {check.condition}")
    assert isinstance(select, exp.Select)  # (the text is a condition rivulet rendered)
    condition = select.expressions[0]
    for node in condition.walk():
        for where in ("line", "col", "start", "end"):
            node.meta.pop(where, None)
    return condition


def check_columns(check: Check) -> frozenset[str]:
    """The columns a CHECK constraint reads, by lower-case name."""
    return frozenset(c.name.lower() for c in check_condition(check).find_all(exp.Column))


def renamed_check(check: Check, old: str, new: str) -> Check:
    """``check`` with column ``old`` renamed ``new`` in its condition (as MariaDB follows a
    renamed column)."""
    condition = check_condition(check)
    for column in condition.find_all(exp.Column):
        if column.name.lower() == old.lower():
            column.set("this", exp.to_identifier(new))
    return Check(check.name, condition.sql(dialect=DIALECT))



def child_index(node: exp.Expr, fk: ForeignKey, given: str | None, pk: tuple[int, ...],
                keys: list[Key], columns: list[Column]) -> list[Key]:
    """The index InnoDB makes for a FOREIGN KEY's columns when no lookup key (the primary
    key included; a FULLTEXT key is none) begins with them: named as the constraint was
    (``given``), else as MySQL names keys."""
    width = len(fk.columns)
    if pk[:width] == fk.columns or any(k.lookup and k.columns[:width] == fk.columns
                                       for k in keys):
        return []
    return [Key(key_name(node, given, columns[fk.columns[0]].name, [k.name for k in keys]),
                fk.columns, KeyKind.PLAIN)]


@dataclass(frozen=True)
class DeclaredKey:
    """A key as written, before its columns are found in the table: in ``CREATE TABLE``
    (a table element, or a column's UNIQUE), after ``ALTER TABLE ... ADD`` or by ``CREATE
    [UNIQUE|FULLTEXT] INDEX``."""

    node: exp.Expr
    #: The name given, if one is.
    given: str | None
    #: Its columns' names, in order.
    names: list[str]
    kind: KeyKind


def declared_key(item: exp.Expr) -> DeclaredKey:
    """A key declared as a table element (``KEY|INDEX [name] (cols)``, ``UNIQUE [KEY|INDEX]
    [name] (cols)``, ``CONSTRAINT name UNIQUE (cols)``, ``FULLTEXT [KEY|INDEX] [name]
    (cols)``; in ``CREATE TABLE`` or after ``ALTER TABLE ... ADD``). SPATIAL keys, and a
    FULLTEXT key's ``WITH PARSER``, are refused by name."""
    if isinstance(item, exp.Constraint):
        kinds = item.expressions
        if len(kinds) == 1 and isinstance(kinds[0], exp.UniqueColumnConstraint):
            return replace(declared_key(kinds[0]), given=item.name)
        raise unsupported(item, "constraint (rivulet keeps PRIMARY KEY and UNIQUE keys only)")
    if isinstance(item, exp.UniqueColumnConstraint):
        parts = item.this.expressions if isinstance(item.this, exp.Schema) else []
        if not parts:
            raise unsupported(item, "UNIQUE without a column list")
        given = item.this.this.name if isinstance(item.this.this, exp.Identifier) else None
        return DeclaredKey(item, given, [_key_part_name(e, KeyKind.UNIQUE) for e in parts],
                           KeyKind.UNIQUE)
    if isinstance(item, exp.IndexColumnConstraint):
        kind = _index_kind(item)
        parts = item.expressions
        if not parts:
            raise unsupported(item, "index without a column list")
        given = item.this.name if isinstance(item.this, exp.Identifier) else None
        return DeclaredKey(item, given, [_key_part_name(e, kind) for e in parts], kind)
    raise unsupported(item, "table element")


def _index_kind(item: exp.IndexColumnConstraint) -> KeyKind:
    """The kind of a ``[FULLTEXT|SPATIAL] KEY|INDEX`` element: a SPATIAL key (over
    geometry, which rivulet does not store) and a FULLTEXT key's ``WITH PARSER`` (a
    plugin that splits its words) are refused by name."""
    written = str(item.args.get("kind") or "").upper()
    if not written:
        return KeyKind.PLAIN
    if written != "FULLTEXT":
        raise unsupported(item, f"{written} index")
    for option in item.args.get("options") or []:
        if option.args.get("parser") is not None:
            raise unsupported(option, "FULLTEXT index WITH PARSER")
    return KeyKind.FULLTEXT


def check_fulltext_columns(node: exp.Expr, columns: Iterable[Column]) -> None:
    """A FULLTEXT key's columns hold text (CHAR, VARCHAR and the TEXT types; JSON too, a
    LONGTEXT in MariaDB), as MySQL's are: else MySQL's 1283, naming the first that does
    not (an integer, a date, an ENUM, a binary string)."""
    for column in columns:
        if column.kind != STR:
            raise error_at(node, f"Column '{column.name}' cannot be part of FULLTEXT index",
                           FulltextColumnError)


def key_positions(node: exp.Expr, names: list[str], by_name: dict[str, int],
                  table: str) -> tuple[int, ...]:
    """The positions of a key's columns (each a column of the table, none twice)."""
    try:
        key = tuple(by_name[n.lower()] for n in names)
    except KeyError as missing:
        raise error_at(node, f"Key column {missing} doesn't exist in table {table!r}",
                       KeyColumnError) from None
    if len(set(key)) != len(key):
        raise error_at(node, f"key ({', '.join(names)}) names a column twice")
    return key


def key_name(node: exp.Expr, given: str | None, first: str, keys: Iterable[str]) -> str:
    """A new key's name: the one given (1061 if the table has a key of that name among
    ``keys``), else, as MySQL names it, its first column's name, with ``_2``, ``_3``... if
    that is taken."""
    taken = {k.lower() for k in keys}
    if given is not None:
        if given.lower() == "primary":
            raise error_at(node, "the name PRIMARY is the primary key's; name the key otherwise")
        if given.lower() in taken:
            raise error_at(node, f"Duplicate key name '{given}'", DuplicateKeyNameError)
        return given
    name, n = first, 1
    while name.lower() in taken or name.lower() == "primary":
        n += 1
        name = f"{first}_{n}"
    return name


def declares_unique(item: exp.ColumnDef) -> bool:
    """Whether a column definition says UNIQUE."""
    return any(isinstance(c.args.get("kind"), exp.UniqueColumnConstraint)
               for c in item.args.get("constraints") or [])


def _key_part_name(part: exp.Expr, kind: KeyKind = KeyKind.PLAIN) -> str:
    """A key part's column: the direction of ``a DESC`` changes no lookup, and a prefix
    ``a(10)`` of a plain key is kept as an index on the whole column (it finds the same
    rows); a UNIQUE prefix would refuse values that differ past it, and MySQL takes no
    prefix in a FULLTEXT key (its 1089), so those are refused."""
    if isinstance(part, exp.Ordered):
        part = part.this
    if isinstance(part, exp.ColumnPrefix):
        if kind is not KeyKind.PLAIN:
            raise unsupported(part, f"{kind.value} key on a column prefix")
        return part.this.name
    if isinstance(part, (exp.Identifier, exp.Column)):
        return part.name
    raise unsupported(part, "key part (a key lists columns)")


def column_definition(item: exp.ColumnDef) -> tuple[Column, bool]:
    """The column a column definition declares, and whether it says PRIMARY KEY."""
    name = item.this.name
    dtype = item.args.get("kind")
    if dtype is None:
        raise error_at(item, f"column {name!r} has no type")
    type_name = dtype.this.name if hasattr(dtype.this, "name") else str(dtype.this)
    sql_type = dtype.sql(dialect=DIALECT)
    kind = SQL_TYPE_KINDS.get(type_name.upper())
    if type_name.upper() == "TINYINT" and _params(dtype) == [1]:
        kind = BOOL
    json = type_name.upper() == "JSON"  # text: see Column.json
    if json:
        kind = STR
    if kind is None:
        raise unsupported(dtype, f"column type {_type_words(type_name, sql_type)}")
    members = _enum_members(item, dtype, name) if kind == ENUM else ()
    params = _params(dtype)
    fsp = 0
    if kind in (TIME, DATETIME) and params:
        fsp = params[0]
        if not 0 <= fsp <= 6:
            raise error_at(dtype, f"column {name!r}: {sql_type} has {fsp} fractional digits; "
                                  "MySQL allows 0 to 6")
    upper = type_name.upper()
    padded = upper in _FIXED_WIDTH
    length = params[0] if kind in (STR, BYTES) and params and upper in _WITH_LENGTH else None
    if padded and length is None:
        length = 1  # CHAR is CHAR(1), BINARY is BINARY(1)
    if kind == DECIMAL and not params:
        params = [10]  # DECIMAL is DECIMAL(10, 0)
    scale = (params[1] if len(params) > 1 else 0) if kind == DECIMAL and params else None
    precision = params[0] if kind == DECIMAL and params else None
    if precision is not None:
        assert scale is not None  # DECIMAL(p) has a scale, 0, like DECIMAL(p, s)
        if not (0 < precision <= 65 and scale <= min(30, precision)):
            raise error_at(dtype, f"column {name!r}: {sql_type} is not a DECIMAL MySQL allows "
                                  "(precision 1 to 65, scale at most 30 and at most the "
                                  "precision)")
    if kind == FLOAT and len(params) == 2:
        raise unsupported(dtype, f"column type {sql_type}: FLOAT(M, D) and DOUBLE(M, D) "
                                 "round to D places and compare within them in MySQL; use "
                                 "DECIMAL(M, D)")
    # FLOAT is single precision, FLOAT(p) too for p up to 24 (its mantissa bits; beyond, a
    # DOUBLE: MySQL's PRECISION_FOR_FLOAT, though its manual says 23).
    single = upper == "FLOAT" and not (params and params[0] > 24)
    nullable, is_pk, default, auto, comment = True, False, None, False, ""
    default_now: int | None = None
    on_update_now: int | None = None
    default_expr = ""
    for constraint in item.args.get("constraints") or []:
        c = constraint.args.get("kind")
        if isinstance(c, exp.NotNullColumnConstraint):
            nullable = bool(c.args.get("allow_null"))
        elif isinstance(c, exp.PrimaryKeyColumnConstraint):
            is_pk = True
        elif isinstance(c, exp.DefaultColumnConstraint):
            default_now = clock_default(c.this, name, kind, fsp)
            default_expr = expression_default(c.this, name) if default_now is None else ""
            default = None if default_now is not None or default_expr else _literal(
                c.this.this if isinstance(c.this, exp.Paren) else c.this, name)
        elif isinstance(c, exp.OnUpdateColumnConstraint):
            on_update_now = clock_default(c.this, name, kind, fsp)
            if on_update_now is None:
                raise error_at(constraint, f"Invalid ON UPDATE clause for '{name}' column "
                                           "(it takes CURRENT_TIMESTAMP)", InvalidDefaultError)
        elif isinstance(c, exp.AutoIncrementColumnConstraint):
            if kind != INT:
                raise error_at(constraint, f"AUTO_INCREMENT column {name!r} must be an integer, "
                                           f"not {sql_type}")
            auto = True
        elif isinstance(c, exp.CommentColumnConstraint):
            comment = c.this.name
        elif isinstance(c, (exp.UniqueColumnConstraint,  # a key of the table: see table_schema
                            exp.CheckColumnConstraint,  # the table's too: see column_checks
                            exp.Reference,  # a FOREIGN KEY of the table: see table_schema
                            exp.CharacterSetColumnConstraint,
                            exp.CollateColumnConstraint)):
            continue
        else:
            raise unsupported(constraint, "column constraint")
    bounds: tuple[Any, Any] | None = INT_RANGES.get(upper) if kind == INT else None
    if upper in ("TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMPLTZ"):
        bounds = TIMESTAMP_BOUNDS
    if upper == "UDECIMAL":  # DECIMAL UNSIGNED: nothing below 0 (-0.001 too, as MariaDB)
        assert precision is not None and scale is not None
        bounds = unsigned_decimal_bounds(precision, scale)
    column = Column(name, kind, nullable, None, length, scale, bounds=bounds, sql_type=sql_type,
                    auto_increment=auto, precision=precision, members=members, fsp=fsp,
                    padded=padded, max_bytes=MAX_BYTES.get(upper), single=single,
                    comment=comment, json=json, default_now=default_now,
                    on_update_now=on_update_now, default_expr=default_expr)
    if default is not None:
        default = _checked_default(column, default, item)
    elif kind == ENUM and not nullable:  # MySQL: a NOT NULL ENUM defaults to its first member
        default = _checked_default(column, column.members[0], item)
    return replace(column, default=default), is_pk


#: Types whose declared length is a limit on their values.
_WITH_LENGTH = ("CHAR", "VARCHAR", "NCHAR", "NVARCHAR", "BINARY", "VARBINARY")
#: Fixed-width types: MySQL pads what it stores to the length (see Column.padded).
_FIXED_WIDTH = ("CHAR", "NCHAR", "BINARY")
#: Why a refused type is refused, beyond its name.
_REFUSED_TYPES = {
    "SET": "SET (a set of members, which rivulet does not store; use a VARCHAR or a table "
           "of members)",
    "BIT": "BIT (bit strings; use BOOLEAN or TINYINT(1) for a flag, an integer for bits)",
    "YEAR": "YEAR (use SMALLINT or a DATE)",
}


def _type_words(type_name: str, sql_type: str) -> str:
    """How a refused column type is named (SET by name, not by its member list)."""
    return _REFUSED_TYPES.get(type_name.upper(), sql_type)


def _enum_members(item: exp.ColumnDef, dtype: exp.DataType, column: str) -> tuple[str, ...]:
    """The members an ``ENUM('a', 'b', ...)`` declares: trailing spaces dropped (as MySQL
    does), none twice (case counts: rivulet's collation is binary)."""
    members: list[str] = []
    for part in dtype.expressions:
        if not (isinstance(part, exp.Literal) and part.is_string):
            raise error_at(item, f"column {column!r}: ENUM members must be quoted strings, "
                                 f"got {part.sql(dialect=DIALECT)}")
        member = part.this.rstrip(" ")
        if member in members:
            raise error_at(item, f"column {column!r} has duplicated value {member!r} in ENUM")
        members.append(member)
    if not members:
        raise error_at(item, f"column {column!r}: ENUM needs at least one member")
    return tuple(members)


def default_value(column: Column, node: exp.Expr, where: exp.Expr) -> object:
    """The value of a ``DEFAULT`` literal for ``column`` (``ALTER COLUMN ... SET DEFAULT``)."""
    value = _literal(node, column.name)
    return None if value is None else _checked_default(column, value, where)


def _checked_default(column: Column, value: object, where: exp.Expr) -> object:
    try:
        return coerce_value(column, value, where=f"DEFAULT of {column.name}: ")
    except Exception as exc:
        raise error_at(where, str(exc)) from None


def clock_default(node: exp.Expr, column: str, kind: Kind, fsp: int) -> int | None:
    """The fractional digits of a ``DEFAULT`` or ``ON UPDATE`` that reads the clock
    (``CURRENT_TIMESTAMP[(fsp)]``, ``NOW([fsp])`` and their synonyms, or ``(NOW())``, an
    expression default of one), None if it is something else. As MySQL 8 takes one: on a
    DATETIME or TIMESTAMP column only, and (written without parentheses) with the column's
    own fractional digits (``DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6)``); else 1067."""
    expression = isinstance(node, exp.Paren)
    call = clock_call(node.this if expression else node)
    if call is None:
        return None
    if expression and call.function != "now_at":  # (MySQL 8 takes DATE DEFAULT (CURDATE()))
        raise unsupported(node, f"expression DEFAULT of column {column!r} that reads the "
                                f"clock other than as CURRENT_TIMESTAMP")
    if call.function != "now_at" or kind != DATETIME or (call.fsp != fsp and not expression):
        raise error_at(node, f"Invalid default value for '{column}'", InvalidDefaultError)
    return call.fsp


#: What an expression default may not hold: its value is computed once, when the table
#: is made, so it must be a constant (MySQL computes it for each row: the same value).
_NOT_CONSTANT: dict[type[exp.Expr], str] = {
    exp.Column: "a column", exp.Subquery: "a subquery", exp.Select: "a subquery",
    exp.Placeholder: "a parameter", exp.Parameter: "a variable",
    exp.SessionParameter: "a variable",
}


def expression_default(node: exp.Expr, column: str) -> str:
    """The text of an expression default (``DEFAULT (3 + 5)``: a non-literal in
    parentheses), '' for a literal one. Refused by name (1235) where its value would not
    be a constant: it reads a column, a variable or the clock (other than as the whole
    default: :func:`clock_default`), or a function MySQL computes anew for each row."""
    if not isinstance(node, exp.Paren) or isinstance(node.this, (exp.Literal, exp.Neg,
                                                                 exp.Null, exp.Boolean)):
        return ""
    for part in node.this.walk():
        what = "the clock" if clock_call(part) is not None else _NOT_CONSTANT.get(type(part))
        if what is None and isinstance(part, (exp.Rand, exp.Uuid)):
            what = "a function of each row"
        if what is not None:
            raise unsupported(node, f"expression DEFAULT of column {column!r} that reads "
                                    f"{what}")
    return node.this.sql(dialect=DIALECT)


def _params(dtype: exp.DataType) -> list[int]:
    out = []
    for p in dtype.expressions:
        value = p.this if isinstance(p, exp.DataTypeParam) else p
        try:
            out.append(int(value.name if isinstance(value, exp.Expr) else value))
        except (TypeError, ValueError):
            continue
    return out


def _literal(node: exp.Expr, column: str) -> object:
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return int(node.this)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        value = _literal(node.this, column)
        return -value  # type: ignore[operator]
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        return int(text) if text.lstrip("-").isdigit() else float(text)
    raise SqlError(f"DEFAULT of column {column!r} must be a constant, got {node.sql()!r}")
