"""Per-connection state, and the statements answered from the catalog rather than a view.

:class:`RivuletSession` is a mysql-mimic ``Session``: what drivers send at connect time
(``SELECT @@version``, ``SET NAMES``, ``SHOW VARIABLES``, ``information_schema``) goes to
mimic's handlers, fed with rivulet's catalog. Everything else is rivulet's (see
protocol.py); this module also renders ``SHOW TABLES``, ``SHOW VIEWS``, ``SHOW CREATE``,
``DESCRIBE`` and ``EXPLAIN``.
"""

from __future__ import annotations

import decimal
import math
import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mysql_mimic import Session
from mysql_mimic.charset import CharacterSet
from mysql_mimic.errors import ErrorCode, MysqlError
from mysql_mimic.results import ResultColumn
from mysql_mimic.session import mysql_function_mapping
from mysql_mimic.types import ColumnDefinition, ColumnType
from mysql_mimic.variable_processor import VariableProcessor
from mysql_mimic.variables import SYSTEM_VARIABLES, GlobalVariables, SessionVariables
from sqlglot import exp

import rivulet
from rivulet.engine.locks import DEFAULT_TIMEOUT
from rivulet.errors import (
    SqlError,
    UnknownDatabaseError,
    UnknownObjectError,
    UnsupportedSqlError,
)
from rivulet.plan.catalog import Catalog
from rivulet.plan.ir import GROUP_CONCAT_MAX_LEN, is_adhoc
from rivulet.server.mysql.statements import DATABASE_NAME, SESSION_FUNCTION_NAMES
from rivulet.sql.control import ISOLATION
from rivulet.sql.ddl import check_condition
from rivulet.sql.parse import DIALECT, parse_one
from rivulet.sql.rename import is_rename_table, qualified_rename
from rivulet.sql.schemas import (
    SYSTEM_SCHEMAS,
    catalog_name,
    in_schema,
    is_default,
    qualify,
    split_name,
)
from rivulet.values.casts import datetime_text
from rivulet.values.numerals import double_text, fixed_double_text
from rivulet.values.schema import (
    BOOL,
    BYTES,
    DATE,
    DATETIME,
    DECIMAL,
    ENUM,
    FLOAT,
    INT,
    STR,
    TIME,
    Column,
    ForeignKey,
    Key,
    KeyKind,
    Kind,
    ReferentialAction,
    TableSchema,
)
from rivulet.values.times import format_time, micros
from rivulet.values.types import NOT_FIXED

if TYPE_CHECKING:
    from rivulet.engine.database import Database
    from rivulet.engine.transaction import Transaction
    from rivulet.server.mysql.context import ServerContext

READ_YOUR_WRITES = "rivulet_read_your_writes"
#: Which process serves the connection: "primary", or "replica N" (``serve --replicas``).
SERVER_ROLE = "rivulet_server"

#: MySQL column types of rivulet's value kinds (None: a column that is only ever NULL).
_TYPES: dict[Kind | None, ColumnType] = {
    INT: ColumnType.LONGLONG, FLOAT: ColumnType.DOUBLE, DECIMAL: ColumnType.NEWDECIMAL,
    STR: ColumnType.VAR_STRING, BYTES: ColumnType.BLOB, BOOL: ColumnType.TINY,
    DATE: ColumnType.DATE, DATETIME: ColumnType.DATETIME, None: ColumnType.VAR_STRING,
    ENUM: ColumnType.STRING, TIME: ColumnType.TIME,
}
_TEXTUAL = {STR, ENUM, None}


#: MySQL 8's default sql_mode, whose rules rivulet follows (ONLY_FULL_GROUP_BY, strict
#: writes, no zero dates): what ``SELECT @@sql_mode`` says.
MYSQL_SQL_MODE = ("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                  "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION")

#: The modes a client may set: those under which MySQL answers as rivulet does, or refuses
#: what rivulet refuses (turning ONLY_FULL_GROUP_BY or strict mode off makes MySQL accept
#: statements rivulet still refuses; it never makes rivulet answer differently).
_SQL_MODES = frozenset({
    "ONLY_FULL_GROUP_BY", "STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE", "ERROR_FOR_DIVISION_BY_ZERO", "NO_ENGINE_SUBSTITUTION", "TRADITIONAL",
    "IGNORE_SPACE", "NO_DIR_IN_CREATE", "NO_AUTO_CREATE_USER", "ALLOW_INVALID_DATES",
    "NO_FIELD_OPTIONS", "NO_KEY_OPTIONS", "NO_TABLE_OPTIONS",
})
#: Modes that change what a statement means, which rivulet does not follow: refused, so
#: that a client (SQLAlchemy reads @@sql_mode to decide how it quotes names) is not
#: answered as if they were in force.
_MODES_CHANGING_ANSWERS = {
    "ANSI_QUOTES": 'rivulet reads "x" as a string, as MySQL\'s default sql_mode does',
    "ANSI": 'rivulet reads "x" as a string and || as OR, as MySQL\'s default sql_mode does',
    "PIPES_AS_CONCAT": "rivulet reads || as OR, as MySQL's default sql_mode does",
    "NO_BACKSLASH_ESCAPES": "rivulet reads \\ in a string as an escape",
    "HIGH_NOT_PRECEDENCE": "rivulet gives NOT its usual precedence",
    "PAD_CHAR_TO_FULL_LENGTH": "rivulet does not pad CHAR values",
    "NO_AUTO_VALUE_ON_ZERO": "rivulet numbers a row given 0 for its AUTO_INCREMENT column",
    "REAL_AS_FLOAT": "rivulet's REAL is a DOUBLE",
    "NO_UNSIGNED_SUBTRACTION": "rivulet's subtraction follows the default mode",
    "TIME_TRUNCATE_FRACTIONAL": "rivulet does not truncate fractional seconds",
}


def sql_mode_value(value: object) -> str:
    """A ``SET sql_mode`` value, refused (MySQL's error 1231) if it names a mode rivulet
    does not follow or that MySQL does not have."""
    text = str(value).strip()
    modes = [mode.strip().upper() for mode in text.split(",") if mode.strip()]
    for mode in modes:
        if mode in _MODES_CHANGING_ANSWERS:
            raise MysqlError(f"Variable 'sql_mode' can't be set to the value of '{mode}': "
                             f"{_MODES_CHANGING_ANSWERS[mode]}", ErrorCode.WRONG_VALUE_FOR_VAR)
        if mode not in _SQL_MODES:
            raise MysqlError(f"Variable 'sql_mode' can't be set to the value of '{mode}'",
                             ErrorCode.WRONG_VALUE_FOR_VAR)
    return ",".join(modes)


def switch_value(value: object) -> bool:
    """A ``SET`` value of a switch (``autocommit``): ON/OFF, 1/0, TRUE/FALSE."""
    text = str(value).strip().upper()
    if text in ("1", "ON", "TRUE"):
        return True
    if text in ("0", "OFF", "FALSE"):
        return False
    raise MysqlError(f"Variable 'autocommit' can't be set to the value of '{value}'",
                     ErrorCode.WRONG_VALUE_FOR_VAR)


def foreign_key_checks_value(value: object) -> bool:
    """A ``SET foreign_key_checks`` value: a switch, as ``autocommit``'s."""
    try:
        return switch_value(value)
    except MysqlError:
        raise MysqlError(f"Variable 'foreign_key_checks' can't be set to the value of "
                         f"'{value}'", ErrorCode.WRONG_VALUE_FOR_VAR) from None


def isolation_value(value: object) -> str:
    """A ``SET transaction_isolation`` value (``SET TRANSACTION ISOLATION LEVEL`` sets it
    too): READ COMMITTED, the level rivulet runs transactions at; any other is refused
    (MySQL's error 1231) rather than run as something it is not."""
    text = "-".join(str(value).strip().upper().replace("-", " ").split())
    if text == ISOLATION:
        return ISOLATION
    if text in ("REPEATABLE-READ", "SERIALIZABLE", "READ-UNCOMMITTED"):
        raise MysqlError(
            f"Variable 'transaction_isolation' can't be set to the value of '{text}': rivulet "
            f"runs transactions at READ COMMITTED only (see docs/transactions.md)",
            ErrorCode.WRONG_VALUE_FOR_VAR)
    raise MysqlError(f"Variable 'transaction_isolation' can't be set to the value of '{value}'",
                     ErrorCode.WRONG_VALUE_FOR_VAR)


def group_concat_max_len_value(value: object) -> int:
    """A ``SET group_concat_max_len`` value: MySQL's default, 1024 bytes, the length at
    which every GROUP_CONCAT is cut (a view's answer is one for every session); any other
    is refused (MySQL's error 1231) rather than answered cut at 1024."""
    try:
        length = int(str(value).strip())
    except ValueError:
        raise MysqlError("Incorrect argument type to variable 'group_concat_max_len'",
                         ErrorCode.WRONG_VALUE_FOR_VAR) from None
    if length != GROUP_CONCAT_MAX_LEN:
        raise MysqlError(f"Variable 'group_concat_max_len' can't be set to the value of "
                         f"'{value}': rivulet cuts GROUP_CONCAT at MySQL's default, "
                         f"{GROUP_CONCAT_MAX_LEN} bytes, for every session (its views are "
                         "shared)", ErrorCode.WRONG_VALUE_FOR_VAR)
    return length


def lock_wait_timeout_value(value: object) -> int:
    """A ``SET innodb_lock_wait_timeout`` value: whole seconds, 1 to 1073741824 (MySQL's
    range); how long a lock wait lasts before it fails with 1205."""
    try:
        seconds = int(str(value).strip())
    except ValueError:
        raise MysqlError("Incorrect argument type to variable 'innodb_lock_wait_timeout'",
                         ErrorCode.WRONG_VALUE_FOR_VAR) from None
    return min(max(seconds, 1), 1073741824)


def global_variables(max_packet: int, role: str = "primary") -> GlobalVariables:
    """mimic's system variables, with rivulet's identity and its own variables."""
    schema = dict(SYSTEM_VARIABLES)
    schema.update({
        "version": (str, f"8.0.36-rivulet-{rivulet.__version__}", False),
        "version_comment": (str, "rivulet", False),
        "sql_mode": (sql_mode_value, MYSQL_SQL_MODE, True),
        "default_storage_engine": (str, "rivulet", True),
        "max_allowed_packet": (int, max_packet, True),
        "autocommit": (switch_value, True, True),
        "foreign_key_checks": (foreign_key_checks_value, True, True),
        "transaction_isolation": (isolation_value, ISOLATION, True),
        "tx_isolation": (isolation_value, ISOLATION, True),
        "innodb_lock_wait_timeout": (lock_wait_timeout_value, int(DEFAULT_TIMEOUT), True),
        "group_concat_max_len": (group_concat_max_len_value, GROUP_CONCAT_MAX_LEN, True),
        READ_YOUR_WRITES: (int, 0, True),
        SERVER_ROLE: (str, role, False),
    })
    return GlobalVariables(schema)


class RivuletSession(Session):
    """One client connection's session."""

    def __init__(self, server: ServerContext, variables: GlobalVariables) -> None:
        #: The schema this connection's bare table names are of, when it is not the
        #: default one (see :attr:`database`, :meth:`qualified`).
        self.elsewhere: str | None = None
        super().__init__(SessionVariables(variables))
        self.server = server
        self.database = DATABASE_NAME
        #: Reads wait until this connection's acknowledged writes are in the views.
        self.read_your_writes = False
        self.last_write_lsn = 0
        #: The open transaction (after BEGIN, or a write with autocommit off), if any.
        self.tx: Transaction | None = None
        self.autocommit = True
        #: Neither in a transaction nor with autocommit off: every statement may take the
        #: fast path (see protocol.py).
        self.direct = True
        #: ``SET TRANSACTION READ ONLY | READ WRITE`` (without SESSION): for the next
        #: transaction only.
        self.next_read_only: bool | None = None

    @property
    def database(self) -> str | None:
        """The current database (``DATABASE()``): the handshake's, then ``USE``'s."""
        return self._database

    @database.setter
    def database(self, name: str | None) -> None:
        self._database = name
        self.elsewhere = None if (name is None or is_default(name)
                                  or name.lower() in SYSTEM_SCHEMAS) else name

    async def use(self, database: str) -> None:
        """``USE db`` and COM_INIT_DB: a database rivulet has (or a system schema, whose
        tables are named in full), else MySQL's 1049."""
        if database.lower() not in SYSTEM_SCHEMAS:
            catalog = self.server.db.catalog
            if not catalog.has_schema(database):
                raise UnknownDatabaseError(f"Unknown database '{database}'")
        self.database = database

    def qualified(self, sql: str) -> str:
        """``sql`` with its bare table names qualified by the current database, when that
        is not the default one (rivulet/sql/schemas.py); as it is otherwise, or when it
        names no table bare."""
        schema = self.elsewhere
        if schema is None:
            return sql
        try:
            node = parse_one(sql)
        except SqlError:  # not a statement parsed (SAVEPOINT, START TRANSACTION...): as it is
            return sql
        if is_rename_table(node):  # (an opaque command to sqlglot: its names read here)
            assert isinstance(node, exp.Command)
            return qualified_rename(node, schema)
        before = node.sql(dialect=DIALECT)
        after = qualify(node, schema).sql(dialect=DIALECT)
        return sql if after == before else after

    def with_session_values(self, sql: str) -> str:
        """``sql`` with its ``@@variables`` and session functions (``DATABASE()``,
        ``VERSION()``, ``USER()``, ``CONNECTION_ID()``...) as literals of this session's
        values, each select item named as its text was (mysql-mimic's own substitution,
        without its clock functions: ``NOW()`` stays, for the planner to judge)."""
        functions = {name: value for name, value in mysql_function_mapping(self).items()
                     if name in SESSION_FUNCTION_NAMES}
        node = parse_one(sql)
        with VariableProcessor(functions, self.variables, node).set_variables() as replaced:
            return replaced.sql(dialect=DIALECT)

    def wrote(self, lsn: int) -> None:
        self.last_write_lsn = lsn

    def begin(self, read_only: bool | None = None) -> Transaction:
        """Start a transaction (the caller has ended any open one)."""
        if read_only is None:
            read_only = self.next_read_only
        if read_only is None:
            read_only = bool(self.variables.get("transaction_read_only"))
        self.next_read_only = None
        self.tx = self.server.transaction(read_only)
        self.direct = False
        return self.tx

    def end(self) -> Transaction | None:
        """The open transaction, no longer the session's (to commit or roll back)."""
        tx, self.tx = self.tx, None
        self.direct = self.autocommit
        return tx

    def set_autocommit(self, on: bool) -> None:
        self.autocommit = on
        self.direct = on and self.tx is None

    def in_read_only_transaction(self) -> bool:
        return self.tx is not None and self.tx.read_only

    async def schema(self) -> dict:
        """The catalog as mimic's ``information_schema`` wants it."""
        catalog = self.server.db.catalog
        databases: dict[str, dict[str, dict[str, str]]] = {
            name: {} for name in catalog.schema_names()}
        for schema in list(catalog.tables.values()):
            db, name = split_name(schema.name)
            databases.setdefault(db, {})[name] = {
                c.name: (c.sql_type or c.kind).upper() for c in schema.columns}
        for plan in list(catalog.views.values()):
            if not is_adhoc(plan.name):
                db, name = split_name(plan.name)
                databases.setdefault(db, {})[name] = {
                    c.name: column_type_name(c.kind) for c in plan.root.columns[: plan.visible]}
        for broken in list(catalog.broken.values()):  # (its columns are unknown now)
            db, name = split_name(broken.name)
            databases.setdefault(db, {})[name] = {}
        return databases

    async def query(self, expression: exp.Expression, sql: str, attrs: dict[str, str]) -> Any:
        raise MysqlError(f"unsupported statement {sql.strip()[:60]!r}", ErrorCode.NOT_SUPPORTED_YET)

    def refresh(self) -> None:
        """Pick up variables a SET may have changed."""
        self.read_your_writes = bool(int(self.variables.get(READ_YOUR_WRITES) or 0))

    async def reset(self) -> None:
        """COM_RESET_CONNECTION: the open transaction rolled back, autocommit on."""
        self.read_your_writes = False
        self.variables.set(READ_YOUR_WRITES, 0)
        await self.close()
        self.variables.set("autocommit", True)
        self.set_autocommit(True)

    async def close(self) -> None:
        """The connection ends (or is reset): an open transaction is rolled back (its writes
        were only ever in its write set)."""
        tx = self.end()
        if tx is not None:
            tx.rollback()
        self.server.named_locks.end_session(self.connection.connection_id)  # as MySQL's


# --------------------------------------------------------------------------- result columns


def result_columns(columns: Any) -> tuple[ResultColumn, ...]:
    """Result columns for a plan's output columns (``ir.ColumnInfo``: ``.name``, ``.kind``,
    and for a DOUBLE rounded to places ``.decimals``, which its text shows: '1.50')."""
    return tuple(_result_column(c.name, c.kind, _decimals(c), unsigned=c.unsigned)
                 for c in columns)


def _result_column(name: str, kind: Kind | None, decimals: int = 0, *,
                   unsigned: bool = False) -> ResultColumn:
    charset = CharacterSet.utf8mb4 if kind in _TEXTUAL else CharacterSet.binary
    if kind == INT and unsigned:
        column = ResultColumn(name, ColumnType.LONGLONG, character_set=charset,
                              binary_encoder=_unsigned_longlong_binary)
    elif kind == TIME:
        column = ResultColumn(name, ColumnType.TIME, character_set=charset,
                              text_encoder=_text_encoder(TIME, decimals),
                              binary_encoder=_time_binary)
    elif (kind == FLOAT and decimals < NOT_FIXED) or (kind == DATETIME and decimals):
        column = ResultColumn(name, _TYPES[kind], character_set=charset,
                              text_encoder=_text_encoder(kind, decimals))
    elif kind == FLOAT:
        column = ResultColumn(name, ColumnType.DOUBLE, character_set=charset,
                              text_encoder=_shortest_double_text)
    else:
        column = ResultColumn(name, _TYPES.get(kind, ColumnType.VAR_STRING),
                              character_set=charset)
    column.codec = "utf-8"  # numbers and dates are ASCII text; bytes are sent as they are
    return column


def _decimals(c: Any) -> int:
    """The ``decimals`` of a column's definition, as MySQL's: a DECIMAL's places, a TIME's
    or DATETIME's fractional digits, a DOUBLE's places if it shows fixed ones
    (``ROUND(x, 2)``), else 31; 0 for the rest."""
    if c.kind in (DECIMAL, TIME, DATETIME):
        return int(c.scale)
    if c.kind == FLOAT:
        return min(c.decimals, NOT_FIXED)
    return 0


#: Text-protocol encoders of values that show a number of places: (kind, places) ->
#: encoder.
_TEXT_ENCODERS: dict[tuple[Kind, int], Any] = {}


def _text_encoder(kind: Kind, places: int) -> Any:
    """The text-protocol encoder of a DOUBLE that shows ``places`` places ('1.50'), or of
    a TIME or DATETIME with ``places`` fractional digits ('00:01:01.50'), as MySQL sends
    them."""
    encoder = _TEXT_ENCODERS.get((kind, places))
    if encoder is not None:
        return encoder
    if kind == FLOAT:
        def encoder(column: ResultColumn, value: Any) -> bytes:
            if not math.isfinite(value):
                return repr(value).encode()
            return fixed_double_text(value, places).encode()
    elif kind == TIME:
        def encoder(column: ResultColumn, value: Any) -> bytes:
            return format_time(value, places).encode()
    else:
        def encoder(column: ResultColumn, value: Any) -> bytes:
            return datetime_text(value, places).encode()
    _TEXT_ENCODERS[(kind, places)] = encoder
    return encoder


def _shortest_double_text(column: ResultColumn, value: Any) -> bytes:
    """A DOUBLE in its shortest form in the text protocol, as MySQL writes it (``1``, ``1e20``,
    ``0.0000001``, ``-1e15``: values.numerals.double_text), where Python's repr says
    ``1.0``, ``1e+20``, ``1e-07``, ``-1000000000000000.0``. Plain reprs are MySQL's already
    but for a trailing ``.0``: those skip the slower general formatting."""
    text = repr(value)
    if "e" in text or "n" in text:  # (an exponent, inf, nan)
        return double_text(value).encode()
    if text.endswith(".0"):
        return (text[:-2] if 0 < abs(value) < 1e15 else double_text(value)).encode()
    return text.encode()


def _unsigned_longlong_binary(column: ResultColumn, value: Any) -> bytes:
    """A BIGINT UNSIGNED in the binary protocol: its 8 bytes read unsigned, so past
    2**63 - 1 too (``u + i``: mysql-mimic's own encoder packs a signed one and fails there).
    A negative one (UNSIGNED subtraction below zero, docs/sql.md) as the signed bytes it had."""
    return struct.pack("<q" if value < 0 else "<Q", int(value))


def _time_binary(column: ResultColumn, value: Any) -> bytes:
    """A TIME in the binary protocol: length, sign, days, hours, minutes, seconds and
    microseconds of its magnitude (mysql-mimic's own encoder mishandles a negative one)."""
    n = micros(value)
    if n == 0:
        return b"\x00"
    seconds, frac = divmod(abs(n), 1_000_000)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    body = struct.pack("<BIBBB", n < 0, days, hours, minutes, seconds)
    if frac:
        body += struct.pack("<I", frac)
    return bytes([len(body)]) + body


@dataclass(frozen=True, slots=True)
class ColumnExtras:
    """What a result column's definition says beyond its name, type and character set."""

    flags: ColumnDefinition
    decimals: int = 0


def column_extras(columns: Any) -> tuple[ColumnExtras, ...]:
    """The flags (NOT NULL, UNSIGNED, BINARY/BLOB, ENUM) and decimals of a plan's output
    columns (``ir.ColumnInfo``), as MySQL's column definitions report them."""
    out = []
    for c in columns:
        flags = ColumnDefinition(0)
        if not c.nullable:
            flags |= ColumnDefinition.NOT_NULL_FLAG
        if c.unsigned and c.kind in (INT, DECIMAL):
            flags |= ColumnDefinition.UNSIGNED_FLAG
        if c.kind == BYTES:
            flags |= ColumnDefinition.BINARY_FLAG | ColumnDefinition.BLOB_FLAG
        elif c.kind == ENUM:
            flags |= ColumnDefinition.ENUM_FLAG
        out.append(ColumnExtras(flags, _decimals(c)))
    return tuple(out)


def view_column_type(out: Any) -> str:
    """The type DESCRIBE and information_schema give a view's column (``ir.ColumnInfo``):
    its table column's declared type where it passes one on unchanged (as MySQL's), else
    the type of its kind."""
    if out.column is not None:
        return _type_text(out.column.sql_type or out.column.kind)
    if out.kind == DECIMAL and out.digits:
        return f"decimal({out.digits + out.scale},{out.scale})"
    return column_type_name(out.kind).lower()


def column_type_name(kind: Kind | None) -> str:
    return {INT: "BIGINT", FLOAT: "DOUBLE", DECIMAL: "DECIMAL(65,30)", STR: "TEXT",
            BYTES: "BLOB", BOOL: "TINYINT(1)", DATE: "DATE", DATETIME: "DATETIME",
            ENUM: "TEXT", TIME: "TIME"}.get(kind or STR, "TEXT")


def text_columns(*names: str) -> tuple[ResultColumn, ...]:
    return tuple(_result_column(n, STR) for n in names)


def int_columns(*names: str) -> tuple[ResultColumn, ...]:
    return tuple(_result_column(n, INT) for n in names)


# --------------------------------------------------------------------------- SHOW, DESCRIBE


def show(db: Database, node: exp.Expr | None, sql: str,
         database: str | None = None) -> tuple[list[tuple], tuple[ResultColumn, ...]]:
    """Rows and columns of a SHOW or DESCRIBE statement about rivulet's program, run in
    ``database`` (the session's: what a SHOW without ``FROM db`` is of)."""
    catalog = db.catalog
    if node is None:  # SHOW VIEWS
        rows = [(name, catalog.views[name.lower()].sql) for name in db.views()]
        rows += [(b.name, b.sql) for b in list(catalog.broken.values())]
        return sorted(rows), text_columns("View", "Definition")
    if isinstance(node, exp.Describe):  # (``s.t`` is the catalog's name already)
        _check_database(catalog, node.this.db if isinstance(node.this, exp.Table) else "",
                        node.this.name)
        return describe(catalog, node.this.name)
    kind = node.name.upper()
    if kind == "DATABASES":
        return show_databases(catalog, node)
    target = node.args.get("target")
    target_name = target.name if isinstance(target, exp.Expr) else str(target or "")
    schema = shown_schema(catalog, node, database)
    if node.args.get("where") is not None:
        raise UnsupportedSqlError(f"SHOW {kind} ... WHERE (query information_schema)")
    if kind == "TABLES":
        names = [(t.name, "BASE TABLE") for t in list(catalog.tables.values())]
        names += [(v, "VIEW") for v in db.views()]
        names += [(b.name, "VIEW") for b in list(catalog.broken.values())]
        names = [(split_name(n)[1], k) for n, k in names if in_schema(n, schema)]
        like = node.args.get("like")
        if like is not None:
            pattern = _like_regex(like.name)
            names = [n for n in names if pattern.fullmatch(n[0])]
        names.sort()
        if node.args.get("full"):
            return names, text_columns(f"Tables_in_{schema}", "Table_type")
        return [(n,) for n, _ in names], text_columns(f"Tables_in_{schema}")
    name = catalog_name(schema, target_name)
    if kind == "CREATE TABLE":
        table = catalog.table(name)
        if table is None:
            if catalog.view(name) is not None or catalog.broken_view(name) is not None:
                return _create_view(catalog, name)
            raise UnknownObjectError(f"unknown table {name!r}")
        return ([(target_name, create_table_sql(table))],
                text_columns("Table", "Create Table"))
    if kind == "CREATE VIEW":
        return _create_view(catalog, name)
    if kind in ("COLUMNS", "FIELDS"):
        rows, columns = describe(catalog, name, full=bool(node.args.get("full")))
        like = node.args.get("like")
        if like is not None:
            pattern = _like_regex(like.name)
            rows = [r for r in rows if pattern.fullmatch(r[0])]
        return rows, columns
    if kind == "INDEX":
        table = catalog.table(name)
        if table is None:
            raise UnknownObjectError(f"unknown table {name!r}")
        return show_index(table)
    raise MysqlError(f"unsupported SHOW {kind}", ErrorCode.NOT_SUPPORTED_YET)


def show_databases(catalog: Catalog, node: exp.Expr) -> tuple[list[tuple],
                                                               tuple[ResultColumn, ...]]:
    """``SHOW DATABASES|SCHEMAS [LIKE 'p']``: information_schema and rivulet's databases
    (the default one and those CREATE DATABASE made)."""
    if node.args.get("where") is not None:
        raise UnsupportedSqlError("SHOW DATABASES ... WHERE (query information_schema)")
    names = ["information_schema", *catalog.schema_names()]
    like = node.args.get("like")
    if like is not None:
        pattern = _like_regex(like.name)
        names = [n for n in names if pattern.fullmatch(n)]
    return [(n,) for n in sorted(names)], text_columns("Database")


def shown_schema(catalog: Catalog, node: exp.Expr, database: str | None) -> str:
    """The database a SHOW is of: its ``FROM db`` (or ``db.t``), else the session's (the
    default one if the session has none, or is in a system schema), checked to exist
    (MySQL's errors: a table of an unknown database is 1146, the database itself 1049)."""
    given = node.args.get("db")
    name = given.name if isinstance(given, exp.Expr) else str(given or "")
    target = node.args.get("target")
    table = target.name if isinstance(target, exp.Expr) else str(target or "")
    if name:
        _check_database(catalog, name, table)
        return catalog.schemas.get(name.lower(), name) if not is_default(name) \
            else DATABASE_NAME
    if database and database.lower() not in SYSTEM_SCHEMAS and catalog.has_schema(database):
        return database if is_default(database) else catalog.schemas[database.lower()]
    return DATABASE_NAME


def _check_database(catalog: Catalog, name: str, table: str = "") -> None:
    """A SHOW or DESCRIBE ``FROM db`` / ``db.t``: a database rivulet has, or MySQL's
    errors (of a table in another database: 1146; SHOW TABLES FROM it: 1049)."""
    if not name or catalog.has_schema(name):
        return
    if name.lower() in SYSTEM_SCHEMAS:
        raise UnsupportedSqlError(f"SHOW or DESCRIBE of the {name} schema (query "
                                  "information_schema's tables)")
    if table:
        raise UnknownObjectError(f"Table '{name}.{table}' doesn't exist")
    raise UnknownDatabaseError(f"Unknown database '{name}'")


def _create_view(catalog: Catalog, name: str) -> tuple[list[tuple], tuple[ResultColumn, ...]]:
    """``SHOW CREATE VIEW``: of a view whose tables are gone too (MySQL shows it, with a
    warning)."""
    plan = catalog.view(name) or catalog.broken_view(name)
    if plan is None:
        raise UnknownObjectError(f"unknown view {name!r}")
    text = f"CREATE VIEW `{plan.name}` AS {plan.sql}"
    return ([(plan.name, text, "utf8mb4", "utf8mb4_0900_bin")],
            text_columns("View", "Create View", "character_set_client", "collation_connection"))


def describe(catalog: Catalog, name: str,
             full: bool = False) -> tuple[list[tuple], tuple[ResultColumn, ...]]:
    """``DESCRIBE name`` / ``SHOW COLUMNS FROM name``: Field, Type, Null, Key, Default,
    Extra; ``SHOW FULL COLUMNS`` adds Collation (after Type), Privileges and Comment."""
    names = ["Field", "Type", "Null", "Key", "Default", "Extra"]
    if full:
        names[2:2] = ["Collation"]
        names += ["Privileges", "Comment"]
    columns = text_columns(*names)
    schema = catalog.table(name)
    if schema is not None:
        rows = []
        for i, c in enumerate(schema.columns):
            row: tuple = (c.name, _type_text(c.sql_type or c.kind),
                          "YES" if c.nullable else "NO", _key_text(schema, i),
                          default_shown(c), extra_shown(c))
            if full:
                row = (*row[:2], collation_of(c.kind), *row[2:], PRIVILEGES, c.comment)
            rows.append(row)
        return rows, columns
    plan = catalog.view(name)
    if plan is None:
        broken = catalog.broken_view(name)
        if broken is not None:
            raise broken.error()
        raise UnknownObjectError(f"unknown table {name!r}")
    rows = []
    for out in plan.root.columns[: plan.visible]:
        row = (out.name, view_column_type(out), "YES" if out.nullable else "NO", "", None, "")
        rows.append((*row[:2], collation_of(out.kind), *row[2:], PRIVILEGES, "") if full
                    else row)
    return rows, columns


#: A column's privileges as SHOW FULL COLUMNS and information_schema.COLUMNS list them
#: (every user may read and write every column; see docs/security.md for read-only users).
PRIVILEGES = "select,insert,update,references"
#: The collation of every text column (rivulet compares text as binary, by code point).
COLLATION = "utf8mb4_0900_bin"
CHARSET = "utf8mb4"


def collation_of(kind: Kind | None) -> str | None:
    """A column's collation: text columns have rivulet's one collation, others none."""
    return COLLATION if kind in (STR, ENUM) else None


def _key_text(schema: TableSchema, column: int) -> str:
    """DESCRIBE's Key: PRI, UNI (a one-column UNIQUE key) or MUL (first column of another
    key, a FULLTEXT one too, as MariaDB shows it)."""
    if column in schema.primary_key:
        return "PRI"
    if (column,) in schema.unique:
        return "UNI"
    return "MUL" if any(key.columns[0] == column for key in schema.keys) else ""


#: The order MySQL lists keys in (its sort_keys): UNIQUE ones, then plain, then FULLTEXT.
_KEY_ORDER = (KeyKind.UNIQUE, KeyKind.PLAIN, KeyKind.FULLTEXT)
#: How SHOW CREATE TABLE declares a key of each kind.
_KEY_WORDS = {KeyKind.UNIQUE: "UNIQUE KEY", KeyKind.PLAIN: "KEY",
              KeyKind.FULLTEXT: "FULLTEXT KEY"}


def _ordered_keys(schema: TableSchema) -> list[Key]:
    """The keys as MySQL lists them: by kind (:data:`_KEY_ORDER`), each kind in the order
    made."""
    return [k for kind in _KEY_ORDER for k in schema.keys if k.kind is kind]


def show_index(schema: TableSchema) -> tuple[list[tuple], tuple[ResultColumn, ...]]:
    """``SHOW INDEX FROM t``: a row per column of each key, the primary key's first, with
    MySQL's columns (what ORMs read to reflect a table's indexes). Cardinality is not
    kept (NULL); every index is a B-tree (SQLite's) but a FULLTEXT key's, shown as MariaDB
    shows one: Index_type FULLTEXT, no Collation (its words are in no order)."""
    columns = (*text_columns("Table"), _result_column("Non_unique", INT),
               *text_columns("Key_name"), _result_column("Seq_in_index", INT),
               *text_columns("Column_name", "Collation"), _result_column("Cardinality", INT),
               _result_column("Sub_part", INT),
               *text_columns("Packed", "Null", "Index_type", "Comment", "Index_comment",
                             "Visible", "Expression"))
    keys = [Key("PRIMARY", schema.primary_key, KeyKind.UNIQUE)] if schema.primary_key else []
    keys += _ordered_keys(schema)
    rows = []
    for key in keys:
        fulltext = key.kind is KeyKind.FULLTEXT
        for seq, i in enumerate(key.columns, 1):
            column = schema.columns[i]
            rows.append((schema.name, 0 if key.unique else 1, key.name, seq, column.name,
                         None if fulltext else "A", None, None, None,
                         "YES" if column.nullable else "", "FULLTEXT" if fulltext else "BTREE",
                         "", "", "YES", None))
    return rows, columns


def create_table_sql(schema: TableSchema) -> str:
    """A ``CREATE TABLE`` statement for ``schema`` in MySQL's ``SHOW CREATE TABLE`` layout."""
    lines = []
    for c in schema.columns:
        line = f"  `{c.name}` {_type_text(c.sql_type or c.kind)}"
        if not c.nullable:
            line += " NOT NULL"
        if c.default_now is not None:
            line += f" DEFAULT {_clock_text(c.default_now)}"
        elif c.default_expr:
            line += f" DEFAULT ({c.default_expr})"
        elif c.default is not None:
            line += f" DEFAULT {_default_literal(c.default)}"
        elif c.nullable:
            line += " DEFAULT NULL"
        if c.on_update_now is not None:
            line += f" ON UPDATE {_clock_text(c.on_update_now)}"
        if c.auto_increment:
            line += " AUTO_INCREMENT"
        if c.comment:
            line += f" COMMENT {_quoted(c.comment)}"
        lines.append(line)
    if schema.primary_key:
        keys = ", ".join(f"`{schema.columns[i].name}`" for i in schema.primary_key)
        lines.append(f"  PRIMARY KEY ({keys})")
    for key in _ordered_keys(schema):
        names = ",".join(f"`{schema.columns[i].name}`" for i in key.columns)
        lines.append(f"  {_KEY_WORDS[key.kind]} `{key.name}` ({names})")
    # (by name, as InnoDB keeps them: SQLAlchemy's reflection suite expects that order)
    lines.extend(_foreign_key_text(schema, fk)
                 for fk in sorted(schema.foreign_keys, key=lambda fk: fk.name))
    for check in schema.checks:  # (MySQL 8's layout; SQLAlchemy's reflection reads it)
        condition = check_condition(check).sql(dialect=DIALECT, identify=True)
        lines.append(f"  CONSTRAINT `{check.name.replace('`', '``')}` CHECK ({condition})")
    body = ",\n".join(lines)
    options = f"ENGINE=rivulet DEFAULT CHARSET={CHARSET} COLLATE={COLLATION}"
    if schema.comment:
        options += f" COMMENT={_quoted(schema.comment)}"
    return f"CREATE TABLE `{split_name(schema.name)[1]}` (\n{body}\n) {options}"


def _foreign_key_text(schema: TableSchema, fk: ForeignKey) -> str:
    """A FOREIGN KEY as MariaDB's ``SHOW CREATE TABLE`` prints it (RESTRICT, the default,
    left out; SQLAlchemy's reflection reads this layout); a parent of another database
    named with it."""
    names = ", ".join(f"`{schema.columns[i].name}`" for i in fk.columns)
    parent = ", ".join(f"`{c}`" for c in fk.parent_columns)
    parent_db, parent_table = split_name(fk.parent)
    target = f"`{parent_table}`" if parent_db.lower() == split_name(schema.name)[0].lower() \
        else f"`{parent_db}`.`{parent_table}`"
    text = f"  CONSTRAINT `{fk.name}` FOREIGN KEY ({names}) REFERENCES {target} ({parent})"
    for event, action in (("DELETE", fk.on_delete), ("UPDATE", fk.on_update)):
        if action is not ReferentialAction.RESTRICT:
            text += f" ON {event} {action.value}"
    return text


def _type_text(sql_type: str) -> str:
    """``DECIMAL(10, 2)`` as MySQL prints it: ``decimal(10,2)`` (SQLAlchemy's reflection
    reads this layout)."""
    return re.sub(r",\s+", ",", sql_type.lower())


def default_shown(c: Column) -> str | None:
    """A column's default as MySQL 8 shows it (DESCRIBE's Default,
    information_schema.COLUMNS.COLUMN_DEFAULT): ``CURRENT_TIMESTAMP[(fsp)]`` for one
    that reads the clock, an expression default's text, else the value's text (None: no
    default, or NULL)."""
    if c.default_now is not None:
        return _clock_text(c.default_now)
    if c.default_expr:
        return c.default_expr
    return None if c.default is None else str(c.default)


def extra_shown(c: Column) -> str:
    """A column's EXTRA as MySQL 8 shows it: ``auto_increment``, ``DEFAULT_GENERATED``
    for a default that reads the clock or is an expression, ``on update
    CURRENT_TIMESTAMP[(fsp)]``."""
    words = ["auto_increment"] if c.auto_increment else []
    if c.default_now is not None or c.default_expr:
        words.append("DEFAULT_GENERATED")
    if c.on_update_now is not None:
        words.append(f"on update {_clock_text(c.on_update_now)}")
    return " ".join(words)


def _clock_text(fsp: int) -> str:
    """``CURRENT_TIMESTAMP`` with its fractional digits, as MySQL 8 shows a column's."""
    return f"CURRENT_TIMESTAMP({fsp})" if fsp else "CURRENT_TIMESTAMP"


def _default_literal(value: Any) -> str:
    if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
        return f"'{value}'"
    return _quoted(str(value))


#: What SHOW CREATE TABLE escapes in a string literal besides quotes (MySQL's and
#: MariaDB's ``append_unescaped``): a line break in a COMMENT stays on its line, so that
#: SQLAlchemy's reflection, which reads the statement line by line, parses it.
_ESCAPES = str.maketrans({"\\": "\\\\", "\0": "\\0", "\n": "\\n", "\r": "\\r",
                          "\x1a": "\\Z", "'": "''"})


def _quoted(text: str) -> str:
    """A string literal as SHOW CREATE TABLE writes one: quotes doubled; backslashes, NUL,
    line feeds, carriage returns and Ctrl-Z escaped."""
    return f"'{text.translate(_ESCAPES)}'"


def _like_regex(pattern: str) -> re.Pattern[str]:
    out = []
    for ch in pattern:
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
    return re.compile("".join(out), re.I)
