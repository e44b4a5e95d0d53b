"""The errors rivulet raises: one hierarchy, so callers can catch by concern, and one table
that says how each kind is reported to a client.

Every error message names the problem; SQL errors also name the construct and where it is
(line and column of the statement text), so a user can fix the query without guessing.

The hierarchy: a public class per concern (:class:`SqlError`, :class:`SchemaError`,
:class:`ConstraintError`, :class:`ProgramError`, :class:`LimitError`, ...) and under it a
class per kind a client is told apart by (an unknown column, a NULL in a NOT NULL column, a
name that exists already, ...). Each kind is raised under the public class it was always
raised as, so ``except SqlError`` and the rest catch what they caught before. A name that
names nothing comes in the form of where it was named: :class:`UnknownTableError` and
:class:`UnknownColumnError` are SQL errors (a statement's text, with a position),
:class:`UnknownObjectError` is a program error (a call or DDL naming a table or view the
program lacks) and :class:`NoSuchColumnError` a schema error (a row naming a column its table
lacks); catch a tuple to take more than one form. :class:`ConstraintError` is the
duplicate-key error (the only key constraints are PRIMARY KEY and UNIQUE).

:data:`ERROR_CODES` maps each class to the MySQL error number and SQLSTATE the MySQL server
sends and the HTTP status and ``kind`` the HTTP API answers with; :func:`error_code` looks an
exception up along its MRO, so the most specific class with an entry wins. It is one table
because the two servers must agree: a client that switches from one to the other, or a test
that checks both, must see the same kind of error for the same mistake, and adding a kind
must be one edit, not two classifications kept in step by hand. The codes are MySQL's own,
so that a MySQL client raises the exception class it would raise against MySQL (PyMySQL
maps 1062 to IntegrityError, 1064 to ProgrammingError, 1235 to NotSupportedError, ...).
The kind of an error is its class alone, never the words of its message.

=========================  =====  ========  ====  ===============
class                      MySQL  SQLSTATE  HTTP  HTTP kind
=========================  =====  ========  ====  ===============
RivuletError               1105   HY000     400   bad_request
SqlError                   1064   42000     400   sql
SqlSyntaxError             1064   42000     400   sql
UnsupportedSqlError        1235   42000     400   unsupported_sql
UnknownFunctionError       1305   42000     400   sql
ArgumentCountError         1582   42000     400   sql
TooBigPrecisionError       1426   42000     400   sql
InvalidDefaultError        1067   42000     400   sql
OperandColumnsError        1241   21000     400   sql
AmbiguousColumnError       1052   23000     400   sql
NotGroupedError            1055   42000     400   sql
AggregateMisuseError       1111   HY000     400   sql
ValueCountError            1136   21S01     400   sql
UnionWidthError            1222   21000     400   sql
UnknownTableError          1146   42S02     400   sql
UnknownQualifierError      1051   42S02     400   sql
UnknownColumnError         1054   42S22     400   sql
DuplicateKeyNameError      1061   42000     400   sql
DuplicateCheckNameError    3822   HY000     400   sql
UnknownKeyError            1091   42000     400   sql
FulltextColumnError        1283   HY000     400   sql
ParameterError             1210   HY000     400   sql
UnsupportedParameterError  1235   42000     400   unsupported_sql
ParameterCountError        1210   HY000     400   sql
SchemaError                1366   HY000     400   schema
NotNullError               1048   23000     400   schema
TooLongError               1406   22001     400   schema
OutOfRangeError            1264   22003     400   schema
DataTruncatedError         1265   01000     400   schema
NotAMemberError            1265   01000     400   schema
TruncatedValueError        1292   22007     400   schema
IncorrectTimeError         1292   22007     400   schema
DivisionByZeroError        1365   22012     400   schema
InvalidLogarithmError      3020   2201E     400   schema
DatetimeOverflowError      1441   22008     400   schema
CheckViolatedError         3819   HY000     400   schema
InvalidJsonError           3140   22032     400   schema
NoSuchColumnError          1054   42S22     400   schema
ConstraintError            1062   23000     409   constraint
RowReferencedError         1451   23000     409   constraint
NoReferencedRowError       1452   23000     409   constraint
TruncateReferencedError    1701   42000     409   constraint
CascadeDepthError          1296   HY000     409   constraint
ForeignKeyFormError        1005   HY000     400   sql
KeyColumnError             1072   42000     400   sql
ForeignKeyWidthError       1239   42000     400   sql
IndexNeededError           1553   HY000     400   sql
StorageError               1105   HY000     500   storage
DataDirectoryInUseError    1105   HY000     500   storage
BackupError                1105   HY000     400   bad_request
ProgramError               1105   HY000     409   conflict
UnknownObjectError         1146   42S02     404   not_found
NoTableToDropError         1051   42S02     404   not_found
BrokenViewError            1356   HY000     409   conflict
ObjectExistsError          1050   42S01     409   conflict
ReservedNameError          1105   HY000     400   bad_request
UnknownDatabaseError       1049   42000     404   not_found
DatabaseExistsError        1007   HY000     409   conflict
NoDatabaseToDropError      1008   HY000     404   not_found
LimitError                 1105   HY000     400   limit
ResultTooLargeError        1104   42000     400   limit
ClosedError                1053   08S01     503   closed
UpqueryTimeout             3024   HY000     503   timeout
CatchUpTimeout             1105   HY000     503   timeout
DataflowFailedError        1105   HY000     503   failed
StorageFailedError         1105   HY000     503   failed
TransactionError           1105   HY000     409   transaction
NoSuchSavepointError       1305   42000     400   transaction
ReadOnlyWriteError         1792   25006     409   transaction
WriteConflictError         1213   40001     409   conflict
DeadlockError              1213   40001     409   conflict
LockWaitTimeoutError       1205   HY000     409   conflict
LockNowaitError            3572   HY000     409   conflict
any other exception        1105   HY000     500   internal
=========================  =====  ========  ====  ===============

The MySQL server's protocol-level errors (a packet too large, a malformed packet, access
denied, ...) are not rivulet errors and keep their codes in :mod:`rivulet.server.errors`.
"""

from __future__ import annotations

from dataclasses import dataclass


class RivuletError(Exception):
    """Base class of every error rivulet raises on purpose."""


# --------------------------------------------------------------------------- statements


class SqlError(RivuletError):
    """A statement that rivulet cannot parse, does not support, or that names unknown things."""

    def __init__(self, message: str, *, line: int | None = None, col: int | None = None) -> None:
        self.line = line
        self.col = col
        where = f" (line {line}, column {col})" if line is not None else ""
        super().__init__(f"{message}{where}")


class SqlSyntaxError(SqlError):
    """Text that is not MySQL: a statement MySQL's grammar rejects, and also what sqlglot
    reads but MySQL rejects (``NULLS FIRST``, ``ILIKE``, ``::``, ...: rivulet would answer
    differently from MySQL, which answers with this error). The message is modelled on
    MySQL's ("You have an error in your SQL syntax ... near '...' at line N"): ``near`` is
    the text from where the statement stops being MySQL, ``reason`` (if any) names the
    construct."""

    def __init__(self, near: str, *, line: int | None = None, col: int | None = None,
                 reason: str | None = None) -> None:
        self.near = near
        self.reason = reason
        where = ""
        if line is not None:
            where = f" at line {line}" + (f", column {col}" if col is not None else "")
        because = f": {reason}" if reason else ""
        RivuletError.__init__(
            self, f"You have an error in your SQL syntax near '{near}'{where}{because}")
        self.line = line
        self.col = col


class UnsupportedSqlError(SqlError):
    """Valid SQL that rivulet does not (yet) support."""


class UnknownFunctionError(SqlError):
    """A call of a function that neither MySQL nor rivulet has (MySQL's "FUNCTION x does
    not exist": a stored function of that name could exist in MySQL, not here). A MySQL
    function rivulet lacks is an :class:`UnsupportedSqlError` instead."""


class ArgumentCountError(SqlError):
    """A call of a function with a number of arguments it does not take (MySQL's
    "Incorrect parameter count in the call to native function")."""


class TooBigPrecisionError(SqlError):
    """A time function or type given more fractional digits than 6 (``NOW(7)``)."""


class InvalidDefaultError(SqlError):
    """A ``DEFAULT`` a column cannot take (``DEFAULT CURRENT_TIMESTAMP`` on a column that is
    not a DATETIME or TIMESTAMP, or with other fractional digits than the column's)."""


class OperandColumnsError(SqlError):
    """A row compared with a row of another width, or with a single value (MySQL's
    "Operand should contain N column(s)")."""


class AmbiguousColumnError(SqlError):
    """A column name that more than one table of the statement has."""


class NotGroupedError(SqlError):
    """A column outside GROUP BY and outside an aggregate (MySQL's ONLY_FULL_GROUP_BY)."""


class AggregateMisuseError(SqlError):
    """An aggregate where none may be: in WHERE, in another aggregate (MySQL's "Invalid
    use of group function")."""


class ValueCountError(SqlError):
    """An INSERT row with more or fewer values than the columns it fills."""


class UnionWidthError(SqlError):
    """The SELECTs of a UNION give different numbers of columns."""


class UnknownTableError(SqlError):
    """A statement names a table or view that does not exist (or a qualifier that names no
    table of the statement). Named by a call or DDL instead: :class:`UnknownObjectError`."""


class UnknownQualifierError(UnknownTableError):
    """``x.*`` where no table of the query is ``x`` (MySQL's 1051, "Unknown table"; a
    column ``x.c`` is an unknown column instead)."""


class UnknownColumnError(SqlError):
    """A statement names a column that its tables do not have. Named by a row given as a
    mapping instead: :class:`NoSuchColumnError`."""


class DuplicateKeyNameError(SqlError):
    """``CREATE INDEX`` or ``ALTER TABLE ... ADD INDEX`` names a key (index) the table
    has already (MySQL's ER_DUP_KEYNAME)."""


class DuplicateCheckNameError(SqlError):
    """A CHECK constraint named as one its table has already (MySQL 8's 3822)."""


class UnknownKeyError(SqlError):
    """``DROP INDEX`` names a key (index) the table does not have (MySQL's
    ER_CANT_DROP_FIELD_OR_KEY)."""


class FulltextColumnError(SqlError):
    """A FULLTEXT key over a column that holds no text of a character set (an integer, a
    date, an ENUM, a binary string): MySQL's ER_BAD_FT_COLUMN, "Column 'x' cannot be part
    of FULLTEXT index"."""


class ParameterError(SqlError):
    """A ``?`` parameter where a statement cannot take one (DDL, a subquery, a text query
    over the MySQL protocol, a place the planner cannot key a view by), or values given for
    parameters a statement does not have."""


class UnsupportedParameterError(UnsupportedSqlError, ParameterError):
    """A ``?`` where MySQL takes one and rivulet cannot key a view by it (``a = ? OR a IS
    NULL``, ``b + 1 = ?``, a ``?`` in a subquery): unsupported SQL (1235, as every construct
    rivulet refuses), and a :class:`ParameterError` for callers that catch those."""


class ParameterCountError(ParameterError):
    """A statement given more or fewer values than it has ``?`` parameters."""


# --------------------------------------------------------------------------- rows


class SchemaError(RivuletError):
    """A write that violates the schema: type, NOT NULL, length, range, unknown column."""


class NotNullError(SchemaError):
    """NULL for a NOT NULL column."""


class TooLongError(SchemaError):
    """A string or bytes value longer than its column's declared length."""


class OutOfRangeError(SchemaError):
    """A number outside its column's type (TINYINT, INT, DECIMAL(p, s), ...), an
    AUTO_INCREMENT counter past it included."""


class DataTruncatedError(SchemaError):
    """Text for a numeric column that is a number followed by more (``'12abc'`` for an INT):
    MySQL's strict mode fails the write ("Data truncated for column")."""


class NotAMemberError(DataTruncatedError):
    """A value an ENUM column has no member for (MySQL strict mode: data truncated)."""


class TruncatedValueError(SchemaError):
    """A conversion a write statement makes that MySQL reports as truncating, which its
    strict mode fails: text read as a number that is not all a number (``'abc' = 5``,
    ``'2x' + 1`` in an UPDATE or an INSERT's values), text or a number read as a date that
    is not one, text for a DATE or DATETIME column that is no date. A read makes the same
    conversion with a warning (rivulet: silently), as MySQL does."""


class IncorrectTimeError(SchemaError):
    """A value a TIME column cannot hold: not a time, or beyond -838:59:59..838:59:59."""


class DivisionByZeroError(SchemaError):
    """A write statement divides by zero (``/``, ``DIV``, ``%``, ``MOD``): MySQL's default
    ``sql_mode`` (ERROR_FOR_DIVISION_BY_ZERO with strict mode) fails it, where a read
    answers NULL."""


class InvalidLogarithmError(SchemaError):
    """A write statement takes the logarithm of a number not above 0 (or to such a base, or
    to base 1): MySQL 8's strict mode fails it, where a read answers NULL (MariaDB reports
    it as a division by 0)."""


class DatetimeOverflowError(SchemaError):
    """A write statement moves a date past the years MySQL holds (``d + INTERVAL 1 DAY``
    of 9999-12-31): MySQL's strict mode fails it, where a read answers NULL."""


class CheckViolatedError(SchemaError):
    """A row for which a CHECK constraint's condition is FALSE (NULL passes): MySQL 8's
    error 3819 (MariaDB's is 4025, "CONSTRAINT ... failed"), by a write or by the rows an
    ``ALTER TABLE ... ADD CONSTRAINT ... CHECK`` finds."""


class InvalidJsonError(SchemaError):
    """Text for a JSON column that is no JSON document: MySQL 8's error 3140 (MariaDB's
    JSON is a LONGTEXT checked by JSON_VALID: its error is 4025)."""


class NoSuchColumnError(SchemaError):
    """A row given as a mapping (or a lookup by column name) names a column its table does
    not have. Named in a statement instead: :class:`UnknownColumnError`."""


class ConstraintError(RivuletError):
    """A write that violates a key constraint: a duplicate primary key or UNIQUE key value
    (this class itself is the duplicate-key error; FOREIGN KEY violations are subclasses)."""


class RowReferencedError(ConstraintError):
    """A delete or update of a parent row that a FOREIGN KEY of another row still references
    (RESTRICT or NO ACTION): MySQL's 1451, "Cannot delete or update a parent row"."""


class NoReferencedRowError(ConstraintError):
    """An insert or update of a child row whose FOREIGN KEY names no parent row: MySQL's
    1452, "Cannot add or update a child row"."""


class TruncateReferencedError(ConstraintError):
    """``TRUNCATE`` of a table another table's FOREIGN KEY references (MySQL's 1701)."""


class CascadeDepthError(ConstraintError):
    """FOREIGN KEY actions that would cascade more than 15 levels deep (InnoDB's limit;
    MariaDB's 1296, "Got error 193 ... from InnoDB")."""


class ForeignKeyFormError(SqlError):
    """A FOREIGN KEY InnoDB would not make (no such parent table or columns, no index over
    them, types that differ, SET NULL of a NOT NULL column): MariaDB's 1005, errno 150
    "Foreign key constraint is incorrectly formed"."""


class KeyColumnError(SqlError):
    """A key (an index, the primary key, a FOREIGN KEY) over a column its table does not
    have (MySQL's 1072, "Key column 'x' doesn't exist in table")."""


class ForeignKeyWidthError(SqlError):
    """A FOREIGN KEY whose column list and REFERENCES list differ in length (MySQL's 1239,
    "Incorrect foreign key definition")."""


class IndexNeededError(SqlError):
    """An ALTER TABLE that would drop the index, or a column of the index, a FOREIGN KEY
    needs (MariaDB's 1553, "Cannot drop index ...: needed in a foreign key constraint")."""


class StorageError(RivuletError):
    """The storage layer could not carry out a write (the write is rejected whole)."""


class DataDirectoryInUseError(StorageError):
    """Another open holds the data directory for writing (``rivulet.storage.dirlock``): one
    process writes a data directory. The message names the holder (pid, command, ports),
    and so does ``holder``."""

    holder: str = "another process"


class BackupError(StorageError):
    """A backup or restore refused (``rivulet.storage.backup``): a destination that holds
    files, a directory that is no data directory or no backup, a backup whose files or
    database fail their checks. Raised before anything is changed."""


# --------------------------------------------------------------------------- the program


class ProgramError(RivuletError):
    """A change to the program that conflicts with what exists (duplicate or missing name)."""


class UnknownObjectError(ProgramError):
    """A call or DDL statement names a table or view the program does not have (``DROP
    VIEW``, ``Database.view``, ``SHOW CREATE TABLE``, ...). Named inside a statement's
    query instead: :class:`UnknownTableError`."""


class NoTableToDropError(UnknownObjectError):
    """``DROP TABLE`` (without ``IF EXISTS``) of a name no table has (MySQL's 1051,
    "Unknown table 'db.t'"; a view's name among them)."""


class BrokenViewError(ProgramError):
    """A view whose tables (or columns, or views) are gone: it stays in the program, as
    MySQL keeps it, and every read of it is refused until they exist again (MySQL's 1356;
    see rivulet/plan/broken.py)."""


class ObjectExistsError(ProgramError):
    """A new table or view takes a name a table or view of the program already has."""


class ReservedNameError(ProgramError):
    """A new table or view takes a name rivulet keeps for itself (its ad-hoc views)."""


class UnknownDatabaseError(ProgramError):
    """A statement names a database (schema) that does not exist: ``USE s``, ``CREATE
    TABLE s.t``, ``SHOW TABLES FROM s`` (MySQL's 1049)."""


class DatabaseExistsError(ProgramError):
    """``CREATE DATABASE`` of a name a database has already (MySQL's 1007)."""


class NoDatabaseToDropError(ProgramError):
    """``DROP DATABASE`` (without ``IF EXISTS``) of a database that does not exist
    (MySQL's 1008)."""


# --------------------------------------------------------------------------- requests


class LimitError(RivuletError):
    """A request over one of the limits (:class:`rivulet.engine.limits.Limits`)."""


class ResultTooLargeError(LimitError):
    """An answer to a server client with more rows than ``max_result_rows``."""


class ClosedError(RivuletError):
    """The database was used after close()."""


class UpqueryTimeout(RivuletError):
    """A read that missed could not be answered in time (``upquery_timeout``)."""


class CatchUpTimeout(RivuletError):
    """The views did not reflect a write within the time a caller would wait for them
    (``settle``, ``wait_for``). The write itself is durable."""


class DataflowFailedError(RivuletError):
    """The dataflow stopped on an internal error: views no longer follow writes until the
    database is opened again. Writes are durable, reads of views are refused."""


class StorageFailedError(DataflowFailedError):
    """A commit failed and left storage in a state this process no longer knows (another
    process wrote the log, the file is gone or unreadable, a transaction it cannot close):
    every write and read is refused until the database is opened again, which recovers from
    the durable log. ``rivulet serve`` exits for its supervisor to restart it."""


# --------------------------------------------------------------------------- transactions


class TransactionError(RivuletError):
    """A transaction used where it cannot be: after it ended, or a statement that cannot
    run inside one (see docs/transactions.md)."""


class NoSuchSavepointError(TransactionError):
    """``ROLLBACK TO`` or ``RELEASE`` a savepoint the transaction does not have."""


class ReadOnlyWriteError(TransactionError):
    """A write in a transaction started ``READ ONLY``."""


class WriteConflictError(TransactionError):
    """A transaction's COMMIT found a row it wrote changed by another commit since it wrote
    it: the transaction was rolled back, and may be run again (MySQL's deadlock error, the
    one code clients retry on)."""


class DeadlockError(WriteConflictError):
    """A lock wait that would close a cycle of waits: the youngest transaction of the
    cycle is rolled back (MySQL's 1213; see rivulet/engine/locks.py)."""


class LockWaitTimeoutError(TransactionError):
    """A lock wait longer than ``innodb_lock_wait_timeout``: the statement fails, the
    transaction stays open with the locks it holds (MySQL's 1205)."""


class LockNowaitError(TransactionError):
    """A locking read with ``NOWAIT`` found a row or table locked (MySQL's 3572)."""


# --------------------------------------------------------------------------- client codes

# MySQL server error numbers of rivulet's errors (MySQL's own names, less the ``ER_``).
ER_DUP_ENTRY = 1062
ER_ROW_IS_REFERENCED_2 = 1451
ER_NO_REFERENCED_ROW_2 = 1452
ER_TRUNCATE_ILLEGAL_FK = 1701
ER_GET_ERRMSG = 1296
ER_CANT_CREATE_TABLE = 1005
ER_KEY_COLUMN_DOES_NOT_EXIST = 1072
ER_WRONG_FK_DEF = 1239
ER_DROP_INDEX_FK = 1553
ER_PARSE_ERROR = 1064
ER_TABLE_EXISTS = 1050
ER_BAD_TABLE = 1051
ER_VIEW_INVALID = 1356
ER_BAD_DB = 1049
ER_DB_CREATE_EXISTS = 1007
ER_DB_DROP_EXISTS = 1008
ER_BAD_FIELD = 1054
ER_NO_SUCH_TABLE = 1146
ER_DUP_KEYNAME = 1061
ER_CANT_DROP_FIELD_OR_KEY = 1091
ER_BAD_FT_COLUMN = 1283
ER_BAD_NULL = 1048
ER_WRONG_VALUE = 1366
ER_DATA_TOO_LONG = 1406
ER_OUT_OF_RANGE = 1264
ER_DATA_TRUNCATED = 1265
ER_TRUNCATED_WRONG_VALUE = 1292
ER_DIVISION_BY_ZERO = 1365
ER_INVALID_ARGUMENT_FOR_LOGARITHM = 3020
ER_DATETIME_FUNCTION_OVERFLOW = 1441
ER_CHECK_CONSTRAINT_VIOLATED = 3819
ER_INVALID_JSON_TEXT = 3140
ER_CHECK_CONSTRAINT_DUP_NAME = 3822
ER_NOT_SUPPORTED = 1235
ER_UNKNOWN = 1105
ER_SERVER_SHUTDOWN = 1053
ER_QUERY_TIMEOUT = 3024
ER_WRONG_ARGUMENTS = 1210
ER_TOO_BIG_SELECT = 1104
ER_SP_DOES_NOT_EXIST = 1305
ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT = 1582
ER_TOO_BIG_PRECISION = 1426
ER_INVALID_DEFAULT = 1067
ER_NON_UNIQ_ERROR = 1052
ER_OPERAND_COLUMNS = 1241
ER_WRONG_FIELD_WITH_GROUP = 1055
ER_INVALID_GROUP_FUNC_USE = 1111
ER_WRONG_VALUE_COUNT_ON_ROW = 1136
ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT = 1222
ER_LOCK_DEADLOCK = 1213
ER_LOCK_WAIT_TIMEOUT = 1205
ER_LOCK_NOWAIT = 3572
ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION = 1792


@dataclass(frozen=True)
class ErrorCode:
    """How the two servers report one kind of error."""

    #: The MySQL error number the MySQL server sends.
    mysql: int
    #: The SQLSTATE sent with it.
    sqlstate: str
    #: The HTTP API's status code.
    http_status: int
    #: The ``kind`` of the HTTP API's JSON error body.
    http_kind: str


#: Each error class's codes (see the module docstring); :func:`error_code` reads it.
ERROR_CODES: dict[type[BaseException], ErrorCode] = {
    RivuletError: ErrorCode(ER_UNKNOWN, "HY000", 400, "bad_request"),
    SqlError: ErrorCode(ER_PARSE_ERROR, "42000", 400, "sql"),
    SqlSyntaxError: ErrorCode(ER_PARSE_ERROR, "42000", 400, "sql"),
    UnsupportedSqlError: ErrorCode(ER_NOT_SUPPORTED, "42000", 400, "unsupported_sql"),
    UnknownFunctionError: ErrorCode(ER_SP_DOES_NOT_EXIST, "42000", 400, "sql"),
    ArgumentCountError: ErrorCode(ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT, "42000", 400, "sql"),
    TooBigPrecisionError: ErrorCode(ER_TOO_BIG_PRECISION, "42000", 400, "sql"),
    InvalidDefaultError: ErrorCode(ER_INVALID_DEFAULT, "42000", 400, "sql"),
    OperandColumnsError: ErrorCode(ER_OPERAND_COLUMNS, "21000", 400, "sql"),
    AmbiguousColumnError: ErrorCode(ER_NON_UNIQ_ERROR, "23000", 400, "sql"),
    NotGroupedError: ErrorCode(ER_WRONG_FIELD_WITH_GROUP, "42000", 400, "sql"),
    AggregateMisuseError: ErrorCode(ER_INVALID_GROUP_FUNC_USE, "HY000", 400, "sql"),
    ValueCountError: ErrorCode(ER_WRONG_VALUE_COUNT_ON_ROW, "21S01", 400, "sql"),
    UnionWidthError: ErrorCode(ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT, "21000", 400, "sql"),
    UnknownTableError: ErrorCode(ER_NO_SUCH_TABLE, "42S02", 400, "sql"),
    UnknownQualifierError: ErrorCode(ER_BAD_TABLE, "42S02", 400, "sql"),
    UnknownColumnError: ErrorCode(ER_BAD_FIELD, "42S22", 400, "sql"),
    DuplicateKeyNameError: ErrorCode(ER_DUP_KEYNAME, "42000", 400, "sql"),
    DuplicateCheckNameError: ErrorCode(ER_CHECK_CONSTRAINT_DUP_NAME, "HY000", 400, "sql"),
    UnknownKeyError: ErrorCode(ER_CANT_DROP_FIELD_OR_KEY, "42000", 400, "sql"),
    FulltextColumnError: ErrorCode(ER_BAD_FT_COLUMN, "HY000", 400, "sql"),
    ParameterError: ErrorCode(ER_WRONG_ARGUMENTS, "HY000", 400, "sql"),
    UnsupportedParameterError: ErrorCode(ER_NOT_SUPPORTED, "42000", 400, "unsupported_sql"),
    ParameterCountError: ErrorCode(ER_WRONG_ARGUMENTS, "HY000", 400, "sql"),
    SchemaError: ErrorCode(ER_WRONG_VALUE, "HY000", 400, "schema"),
    NotNullError: ErrorCode(ER_BAD_NULL, "23000", 400, "schema"),
    TooLongError: ErrorCode(ER_DATA_TOO_LONG, "22001", 400, "schema"),
    OutOfRangeError: ErrorCode(ER_OUT_OF_RANGE, "22003", 400, "schema"),
    DataTruncatedError: ErrorCode(ER_DATA_TRUNCATED, "01000", 400, "schema"),
    NotAMemberError: ErrorCode(ER_DATA_TRUNCATED, "01000", 400, "schema"),
    TruncatedValueError: ErrorCode(ER_TRUNCATED_WRONG_VALUE, "22007", 400, "schema"),
    IncorrectTimeError: ErrorCode(ER_TRUNCATED_WRONG_VALUE, "22007", 400, "schema"),
    DivisionByZeroError: ErrorCode(ER_DIVISION_BY_ZERO, "22012", 400, "schema"),
    InvalidLogarithmError: ErrorCode(ER_INVALID_ARGUMENT_FOR_LOGARITHM, "2201E", 400,
                                     "schema"),
    DatetimeOverflowError: ErrorCode(ER_DATETIME_FUNCTION_OVERFLOW, "22008", 400, "schema"),
    CheckViolatedError: ErrorCode(ER_CHECK_CONSTRAINT_VIOLATED, "HY000", 400, "schema"),
    InvalidJsonError: ErrorCode(ER_INVALID_JSON_TEXT, "22032", 400, "schema"),
    NoSuchColumnError: ErrorCode(ER_BAD_FIELD, "42S22", 400, "schema"),
    ConstraintError: ErrorCode(ER_DUP_ENTRY, "23000", 409, "constraint"),
    RowReferencedError: ErrorCode(ER_ROW_IS_REFERENCED_2, "23000", 409, "constraint"),
    NoReferencedRowError: ErrorCode(ER_NO_REFERENCED_ROW_2, "23000", 409, "constraint"),
    TruncateReferencedError: ErrorCode(ER_TRUNCATE_ILLEGAL_FK, "42000", 409, "constraint"),
    CascadeDepthError: ErrorCode(ER_GET_ERRMSG, "HY000", 409, "constraint"),
    ForeignKeyFormError: ErrorCode(ER_CANT_CREATE_TABLE, "HY000", 400, "sql"),
    KeyColumnError: ErrorCode(ER_KEY_COLUMN_DOES_NOT_EXIST, "42000", 400, "sql"),
    ForeignKeyWidthError: ErrorCode(ER_WRONG_FK_DEF, "42000", 400, "sql"),
    IndexNeededError: ErrorCode(ER_DROP_INDEX_FK, "HY000", 400, "sql"),
    StorageError: ErrorCode(ER_UNKNOWN, "HY000", 500, "storage"),
    DataDirectoryInUseError: ErrorCode(ER_UNKNOWN, "HY000", 500, "storage"),
    BackupError: ErrorCode(ER_UNKNOWN, "HY000", 400, "bad_request"),
    ProgramError: ErrorCode(ER_UNKNOWN, "HY000", 409, "conflict"),
    UnknownObjectError: ErrorCode(ER_NO_SUCH_TABLE, "42S02", 404, "not_found"),
    NoTableToDropError: ErrorCode(ER_BAD_TABLE, "42S02", 404, "not_found"),
    BrokenViewError: ErrorCode(ER_VIEW_INVALID, "HY000", 409, "conflict"),
    ObjectExistsError: ErrorCode(ER_TABLE_EXISTS, "42S01", 409, "conflict"),
    ReservedNameError: ErrorCode(ER_UNKNOWN, "HY000", 400, "bad_request"),
    UnknownDatabaseError: ErrorCode(ER_BAD_DB, "42000", 404, "not_found"),
    DatabaseExistsError: ErrorCode(ER_DB_CREATE_EXISTS, "HY000", 409, "conflict"),
    NoDatabaseToDropError: ErrorCode(ER_DB_DROP_EXISTS, "HY000", 404, "not_found"),
    LimitError: ErrorCode(ER_UNKNOWN, "HY000", 400, "limit"),
    ResultTooLargeError: ErrorCode(ER_TOO_BIG_SELECT, "42000", 400, "limit"),
    ClosedError: ErrorCode(ER_SERVER_SHUTDOWN, "08S01", 503, "closed"),
    UpqueryTimeout: ErrorCode(ER_QUERY_TIMEOUT, "HY000", 503, "timeout"),
    CatchUpTimeout: ErrorCode(ER_UNKNOWN, "HY000", 503, "timeout"),
    DataflowFailedError: ErrorCode(ER_UNKNOWN, "HY000", 503, "failed"),
    StorageFailedError: ErrorCode(ER_UNKNOWN, "HY000", 503, "failed"),
    TransactionError: ErrorCode(ER_UNKNOWN, "HY000", 409, "transaction"),
    NoSuchSavepointError: ErrorCode(ER_SP_DOES_NOT_EXIST, "42000", 400, "transaction"),
    ReadOnlyWriteError: ErrorCode(ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, "25006", 409,
                                  "transaction"),
    WriteConflictError: ErrorCode(ER_LOCK_DEADLOCK, "40001", 409, "conflict"),
    DeadlockError: ErrorCode(ER_LOCK_DEADLOCK, "40001", 409, "conflict"),
    LockWaitTimeoutError: ErrorCode(ER_LOCK_WAIT_TIMEOUT, "HY000", 409, "conflict"),
    LockNowaitError: ErrorCode(ER_LOCK_NOWAIT, "HY000", 409, "conflict"),
    # Not rivulet's error: a bug, reported as one.
    BaseException: ErrorCode(ER_UNKNOWN, "HY000", 500, "internal"),
}


def coded_class(exc: BaseException) -> type[BaseException]:
    """``exc``'s most specific class in :data:`ERROR_CODES`: the first class of its MRO with
    an entry (a subclass without one of its own is reported as its parent)."""
    return next(cls for cls in type(exc).__mro__ if cls in ERROR_CODES)


def error_code(exc: BaseException) -> ErrorCode:
    """How the servers report ``exc``: the entry of :func:`coded_class`."""
    return ERROR_CODES[coded_class(exc)]
