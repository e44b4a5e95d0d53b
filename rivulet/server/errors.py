"""rivulet's errors as MySQL error codes and SQLSTATEs, so clients raise the exception
class they would raise against MySQL (PyMySQL maps 1064 to ProgrammingError, 1062 to
IntegrityError, 1235 to NotSupportedError, ...)."""

from __future__ import annotations

from typing import NamedTuple

from mysql_mimic.errors import MysqlError

from rivulet import errors
from rivulet.engine.limits import LimitError

# MySQL server error codes used here.
ER_DUP_ENTRY = 1062
ER_PARSE_ERROR = 1064
ER_TABLE_EXISTS = 1050
ER_BAD_TABLE = 1051
ER_BAD_FIELD = 1054
ER_NO_SUCH_TABLE = 1146
ER_BAD_NULL = 1048
ER_WRONG_VALUE = 1366
ER_DATA_TOO_LONG = 1406
ER_OUT_OF_RANGE = 1264
ER_NOT_SUPPORTED = 1235
ER_UNKNOWN = 1105
ER_SERVER_SHUTDOWN = 1053
ER_QUERY_TIMEOUT = 3024
ER_PACKET_TOO_LARGE = 1153
ER_WRONG_ARGUMENTS = 1210
ER_UNKNOWN_STMT = 1243
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
ER_WRONG_VALUE_FOR_VAR = 1231
ER_MALFORMED_PACKET = 1835
ER_MAX_PREPARED = 1461
ER_TABLEACCESS_DENIED = 1142
ER_TOO_BIG_SELECT = 1104

SQLSTATES = {
    ER_DUP_ENTRY: "23000", ER_PARSE_ERROR: "42000", ER_TABLE_EXISTS: "42S01",
    ER_BAD_TABLE: "42S02", ER_BAD_FIELD: "42S22", ER_NO_SUCH_TABLE: "42S02",
    ER_BAD_NULL: "23000", ER_WRONG_VALUE: "HY000", ER_DATA_TOO_LONG: "22001",
    ER_OUT_OF_RANGE: "22003", ER_NOT_SUPPORTED: "42000", ER_SERVER_SHUTDOWN: "08S01",
    ER_PACKET_TOO_LARGE: "08S01", ER_WRONG_ARGUMENTS: "HY000", ER_UNKNOWN_STMT: "HY000",
    ER_UNKNOWN_SYSTEM_VARIABLE: "HY000", ER_WRONG_VALUE_FOR_VAR: "42000",
    1045: "28000", 1040: "08004", 1047: "08S01", ER_MALFORMED_PACKET: "HY000",
    ER_MAX_PREPARED: "42000", ER_TABLEACCESS_DENIED: "42000", ER_TOO_BIG_SELECT: "42000",
}


class Failure(NamedTuple):
    code: int
    sqlstate: str
    message: str


class Forwarded(errors.RivuletError):
    """The error the primary reported for a statement a replica forwarded to it: the
    client gets the primary's error code and message."""

    def __init__(self, reported: Failure) -> None:
        super().__init__(reported.message)
        self.code = reported.code


def failure(exc: BaseException) -> Failure:
    """The MySQL error a client gets for ``exc``."""
    code = _code(exc)
    message = exc.msg if isinstance(exc, MysqlError) else str(exc) or type(exc).__name__
    return Failure(code, SQLSTATES.get(code, "HY000"), message)


def _code(exc: BaseException) -> int:
    text = str(exc).lower()
    if isinstance(exc, MysqlError):
        return int(exc.code)
    if isinstance(exc, Forwarded):
        return exc.code
    if isinstance(exc, errors.UnsupportedSqlError):
        return ER_NOT_SUPPORTED
    if isinstance(exc, errors.SqlError):
        if text.startswith("unknown column"):
            return ER_BAD_FIELD
        if text.startswith(("unknown table", "unknown view")):
            return ER_NO_SUCH_TABLE
        if "parameter" in text:
            return ER_WRONG_ARGUMENTS
        return ER_PARSE_ERROR
    if isinstance(exc, errors.ProgramError):
        if "unknown" in text:
            return ER_NO_SUCH_TABLE
        if "exists" in text:
            return ER_TABLE_EXISTS
        return ER_UNKNOWN
    if isinstance(exc, errors.ConstraintError):
        return ER_DUP_ENTRY
    if isinstance(exc, errors.SchemaError):
        if "not null" in text:
            return ER_BAD_NULL
        if "too long" in text:
            return ER_DATA_TOO_LONG
        if "out of range" in text:
            return ER_OUT_OF_RANGE
        if "no column" in text:
            return ER_BAD_FIELD
        return ER_WRONG_VALUE
    if isinstance(exc, LimitError):
        return ER_TOO_BIG_SELECT if "result" in text else ER_UNKNOWN
    if isinstance(exc, errors.UpqueryTimeout):
        return ER_QUERY_TIMEOUT
    if isinstance(exc, errors.ClosedError):
        return ER_SERVER_SHUTDOWN
    return ER_UNKNOWN
