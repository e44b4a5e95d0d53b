"""rivulet's errors as MySQL error codes and SQLSTATEs, so clients raise the exception
class they would raise against MySQL (PyMySQL maps 1064 to ProgrammingError, 1062 to
IntegrityError, 1235 to NotSupportedError, ...).

Which code an error of rivulet gets is :data:`rivulet.errors.ERROR_CODES`, the table the HTTP
API reads too (so that the two servers agree); this module adds the protocol's own errors
(a packet too large, a malformed packet, access denied, ...) and an error forwarded by a
primary with the code it already has.
"""

from __future__ import annotations

from typing import NamedTuple

from mysql_mimic.errors import MysqlError

from rivulet import errors

# MySQL server error codes: those of rivulet's errors (from the table's module, named here
# too for the protocol's code), then the protocol's own.
from rivulet.errors import (  # noqa: F401 (re-exported)
    ER_BAD_DB,
    ER_BAD_FIELD,
    ER_BAD_NULL,
    ER_BAD_TABLE,
    ER_DATA_TOO_LONG,
    ER_DUP_ENTRY,
    ER_NO_SUCH_TABLE,
    ER_NOT_SUPPORTED,
    ER_OUT_OF_RANGE,
    ER_PARSE_ERROR,
    ER_QUERY_TIMEOUT,
    ER_SERVER_SHUTDOWN,
    ER_TABLE_EXISTS,
    ER_TOO_BIG_SELECT,
    ER_UNKNOWN,
    ER_WRONG_ARGUMENTS,
    ER_WRONG_VALUE,
)

ER_PACKET_TOO_LARGE = 1153
ER_UNKNOWN_STMT = 1243
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
ER_WRONG_VALUE_FOR_VAR = 1231
ER_MALFORMED_PACKET = 1835
ER_MAX_PREPARED = 1461
ER_TABLEACCESS_DENIED = 1142
ER_CANT_CHANGE_TX_CHARACTERISTICS = 1568

#: The SQLSTATE of each code: those of rivulet's errors from the table, then the protocol's.
SQLSTATES = {code.mysql: code.sqlstate for code in errors.ERROR_CODES.values()} | {
    ER_PACKET_TOO_LARGE: "08S01", ER_UNKNOWN_STMT: "HY000",
    ER_UNKNOWN_SYSTEM_VARIABLE: "HY000", ER_WRONG_VALUE_FOR_VAR: "42000",
    1045: "28000", 1040: "08004", 1047: "08S01", ER_MALFORMED_PACKET: "HY000",
    ER_MAX_PREPARED: "42000", ER_TABLEACCESS_DENIED: "42000",
    ER_CANT_CHANGE_TX_CHARACTERISTICS: "25001",
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
    """The MySQL error a client gets for ``exc``: a protocol error's or a forwarded error's
    own code, else the code of ``exc``'s class in :data:`rivulet.errors.ERROR_CODES`."""
    if isinstance(exc, MysqlError):
        code = int(exc.code)
        return Failure(code, SQLSTATES.get(code, "HY000"), exc.msg)
    if isinstance(exc, Forwarded):
        return Failure(exc.code, SQLSTATES.get(exc.code, "HY000"),
                       str(exc) or type(exc).__name__)
    entry = errors.error_code(exc)
    return Failure(entry.mysql, entry.sqlstate, str(exc) or type(exc).__name__)
