"""COM_STMT_EXECUTE parameters, decoded into Python values.

mysql-mimic's own decoder pastes the values into the statement text (unescaped); rivulet
decodes them here and hands them to the engine as values. Covers every type a client
sends (integers, floats, DECIMAL as text, strings and blobs, DATE/DATETIME/TIMESTAMP,
TIME as a timedelta, NULL), and values sent ahead with COM_STMT_SEND_LONG_DATA.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from typing import Any

from mysql_mimic.errors import ErrorCode, MysqlError
from mysql_mimic.types import ColumnType

_INTS = {
    ColumnType.TINY: (1, "<b", "<B"), ColumnType.BOOL: (1, "<b", "<B"),
    ColumnType.SHORT: (2, "<h", "<H"), ColumnType.YEAR: (2, "<h", "<H"),
    ColumnType.LONG: (4, "<i", "<I"), ColumnType.INT24: (4, "<i", "<I"),
    ColumnType.LONGLONG: (8, "<q", "<Q"),
}
_TEXT = {ColumnType.VARCHAR, ColumnType.VAR_STRING, ColumnType.STRING, ColumnType.ENUM,
         ColumnType.SET, ColumnType.JSON}
_BLOBS = {ColumnType.BLOB, ColumnType.TINY_BLOB, ColumnType.MEDIUM_BLOB, ColumnType.LONG_BLOB,
          ColumnType.GEOMETRY, ColumnType.BIT}
_DATES = {ColumnType.DATE, ColumnType.DATETIME, ColumnType.TIMESTAMP, ColumnType.NEWDATE}


class Reader:
    """A cursor over one packet."""

    __slots__ = ("data", "pos")

    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data = data
        self.pos = pos

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if end > len(self.data):
            raise MysqlError("COM_STMT_EXECUTE packet is too short", ErrorCode.MALFORMED_PACKET)
        out = self.data[self.pos:end]
        self.pos = end
        return out

    def uint(self, n: int) -> int:
        return int.from_bytes(self.take(n), "little")

    def lenenc(self) -> int:
        first = self.uint(1)
        if first < 0xFB:
            return first
        if first == 0xFC:
            return self.uint(2)
        if first == 0xFD:
            return self.uint(3)
        if first == 0xFE:
            return self.uint(8)
        raise MysqlError("bad length-encoded integer", ErrorCode.MALFORMED_PACKET)

    def lenenc_bytes(self) -> bytes:
        return self.take(self.lenenc())


def read_params(reader: Reader, count: int, types: list[tuple[int, bool]] | None,
                long_data: dict[int, bytearray] | None,
                codec: str) -> tuple[list[Any], list[tuple[int, bool]]]:
    """The ``count`` parameter values that follow the iteration count of an execute
    packet; ``types`` are those of the previous execute (a client may send them once).
    Returns the values and the types used."""
    if count == 0:
        return [], []
    nulls = reader.take((count + 7) // 8)
    bound = reader.uint(1)
    if bound:
        types = []
        for _ in range(count):
            code = reader.uint(1)
            flags = reader.uint(1)
            types.append((code, bool(flags & 0x80)))
    elif types is None or len(types) != count:
        raise MysqlError("COM_STMT_EXECUTE without parameter types", ErrorCode.MALFORMED_PACKET)
    values: list[Any] = []
    for i, (code, unsigned) in enumerate(types):
        if nulls[i >> 3] & (1 << (i & 7)):
            values.append(None)
        elif long_data is not None and i in long_data:
            values.append(_text_or_bytes(bytes(long_data[i]), codec, code in _TEXT))
        else:
            values.append(_value(reader, code, unsigned, codec))
    return values, types


def _value(reader: Reader, code: int, unsigned: bool, codec: str) -> Any:
    spec = _INTS.get(code)
    if spec is not None:
        size, signed_fmt, unsigned_fmt = spec
        return struct.unpack(unsigned_fmt if unsigned else signed_fmt, reader.take(size))[0]
    if code in _TEXT:
        return reader.lenenc_bytes().decode(codec)
    if code in _BLOBS:
        return _text_or_bytes(reader.lenenc_bytes(), codec, False)
    if code == ColumnType.DOUBLE:
        return struct.unpack("<d", reader.take(8))[0]
    if code == ColumnType.FLOAT:
        return struct.unpack("<f", reader.take(4))[0]
    if code in (ColumnType.DECIMAL, ColumnType.NEWDECIMAL):
        text = reader.lenenc_bytes().decode("ascii")
        try:
            return decimal.Decimal(text)
        except decimal.InvalidOperation:
            raise MysqlError(f"bad DECIMAL parameter {text!r}",
                             ErrorCode.MALFORMED_PACKET) from None
    if code in _DATES:
        return _date(reader, code)
    if code == ColumnType.TIME:
        return _time(reader)
    if code == ColumnType.NULL:
        return None
    raise MysqlError(f"unsupported parameter type {code:#x}", ErrorCode.NOT_SUPPORTED_YET)


def _text_or_bytes(data: bytes, codec: str, text: bool) -> str | bytes:
    """Clients send ``str`` values of long data and some strings as blobs: text when it
    decodes, bytes otherwise (a BLOB column takes either)."""
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        if text:
            raise MysqlError("string parameter is not valid text",
                             ErrorCode.MALFORMED_PACKET) from None
        return data


def _date(reader: Reader, code: int) -> dt.date | dt.datetime | None:
    n = reader.uint(1)
    if n == 0:
        return None  # the zero date: rivulet has no such value
    raw = reader.take(n)
    year, month, day = int.from_bytes(raw[0:2], "little"), raw[2], raw[3]
    if code == ColumnType.DATE and n == 4:
        return dt.date(year, month, day)
    hour = minute = second = micro = 0
    if n >= 7:
        hour, minute, second = raw[4], raw[5], raw[6]
    if n >= 11:
        micro = int.from_bytes(raw[7:11], "little")
    return dt.datetime(year, month, day, hour, minute, second, micro)


def _time(reader: Reader) -> dt.timedelta:
    n = reader.uint(1)
    if n == 0:
        return dt.timedelta(0)
    raw = reader.take(n)
    negative = raw[0] == 1
    days = int.from_bytes(raw[1:5], "little")
    hours, minutes, seconds = raw[5], raw[6], raw[7]
    micro = int.from_bytes(raw[8:12], "little") if n >= 12 else 0
    out = dt.timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds, microseconds=micro)
    return -out if negative else out
