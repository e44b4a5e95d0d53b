"""rivulet values <-> Spark and Arrow types.

Every rivulet value kind (rivulet.values.schema) has exactly one Spark type and one Arrow type,
so a value that leaves the engine (a snapshot, a UDF argument) comes back as the same
Python value:

=========  ========================  ===================  =====================
kind       Spark                     Arrow                Python
=========  ========================  ===================  =====================
int, bool  LongType                  int64                int (bool is 1/0)
float      DoubleType                float64              float
decimal    DecimalType(38, scale)    decimal128(38, s)    decimal.Decimal
str        StringType                string               str
bytes      BinaryType                binary               bytes
date       DateType                  date32               datetime.date
datetime   TimestampNTZType          timestamp[us]        datetime.datetime
(NULL)     NullType                  null                 None
=========  ========================  ===================  =====================

ENUM and TIME have none: Spark has no type that orders an ENUM by its members' positions or
holds a TIME with MySQL's semantics, so a plan, snapshot or stream that would hold them is
refused (:func:`spark_type` raises :class:`~rivulet.errors.UnsupportedSqlError`); a
bootstrap falls back to the in-process path, ``verify``, ``import`` and streaming say so.

Why Arrow (``toArrow``, ``arrow_udf``) and not pandas: pandas turns an integer column with
a NULL into float64 (losing integers above 2**53) and datetimes into nanoseconds (losing
years outside 1677-2262); Arrow keeps both exact. Why ``TimestampNTZType``: rivulet's
datetimes are naive, and a zone-less timestamp is never shifted by a session time zone.

A DECIMAL column without a declared scale has no fixed scale in the engine; Spark needs
one, so it gets :data:`DEFAULT_DECIMAL_SCALE` places (values compare equal, but their text
form shows the fixed scale). A value that does not fit is an error, never silently cut.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from pyspark.sql import types as T

from rivulet import values as F
from rivulet.errors import UnsupportedSqlError
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
    Kind,
)
from rivulet.values.types import UNDECLARED_DECIMAL_SCALE

Row = tuple

DECIMAL_PRECISION = 38
DEFAULT_DECIMAL_SCALE = UNDECLARED_DECIMAL_SCALE
#: Computed decimals keep at most this many places (or their inputs' scale, if larger), so
#: that products of decimals keep room for their integer digits.
MAX_COMPUTED_SCALE = 18

_DECIMAL_LIMIT = decimal.Decimal(10) ** DECIMAL_PRECISION
_EXACT = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP)


#: Value kinds Spark cannot hold (see the module docstring).
NOT_ON_SPARK = frozenset({ENUM, TIME})


def _refused(kind: Kind | None) -> None:
    if kind in NOT_ON_SPARK:
        assert kind is not None
        raise UnsupportedSqlError(f"{kind.upper()} columns on Spark: Spark has no type "
                                  f"with MySQL's {kind.upper()} semantics")


def spark_type(kind: Kind | None, scale: int | None = None) -> T.DataType:
    """The Spark type holding values of ``kind``."""
    _refused(kind)
    if kind in (INT, BOOL):
        return T.LongType()
    if kind == FLOAT:
        return T.DoubleType()
    if kind == DECIMAL:
        return T.DecimalType(DECIMAL_PRECISION, _scale(scale))
    if kind == STR:
        return T.StringType()
    if kind == BYTES:
        return T.BinaryType()
    if kind == DATE:
        return T.DateType()
    if kind == DATETIME:
        return T.TimestampNTZType()
    if kind is None:
        return T.NullType()
    raise TypeError(f"no Spark type for value kind {kind!r}")


def arrow_type(kind: Kind | None, scale: int | None = None) -> pa.DataType:
    """The Arrow type holding values of ``kind`` (the same as Spark's, see the table)."""
    _refused(kind)
    if kind in (INT, BOOL):
        return pa.int64()
    if kind == FLOAT:
        return pa.float64()
    if kind == DECIMAL:
        return pa.decimal128(DECIMAL_PRECISION, _scale(scale))
    if kind == STR:
        return pa.string()
    if kind == BYTES:
        return pa.binary()
    if kind == DATE:
        return pa.date32()
    if kind == DATETIME:
        return pa.timestamp("us")
    if kind is None:
        return pa.null()
    raise TypeError(f"no Arrow type for value kind {kind!r}")


def _scale(scale: int | None) -> int:
    return DEFAULT_DECIMAL_SCALE if scale is None else max(0, min(scale, DECIMAL_PRECISION))


def kind_of_type(data_type: T.DataType) -> Kind | None:
    """The rivulet kind of a Spark column (``bool`` columns read back as ``int``)."""
    if isinstance(data_type, (T.LongType, T.IntegerType, T.ShortType, T.ByteType)):
        return INT
    if isinstance(data_type, (T.DoubleType, T.FloatType)):
        return FLOAT
    if isinstance(data_type, T.DecimalType):
        return DECIMAL
    if isinstance(data_type, T.StringType):
        return STR
    if isinstance(data_type, T.BinaryType):
        return BYTES
    if isinstance(data_type, T.DateType):
        return DATE
    if isinstance(data_type, (T.TimestampNTZType, T.TimestampType)):
        return DATETIME
    if isinstance(data_type, T.NullType):
        return None
    if isinstance(data_type, T.BooleanType):
        return INT
    raise TypeError(f"Spark type {data_type.simpleString()} holds no rivulet value")


def scale_of_type(data_type: T.DataType) -> int:
    return data_type.scale if isinstance(data_type, T.DecimalType) else 0


#: The field metadata naming a DATETIME column's fractional digits: Spark's timestamp has
#: none of its own, and ``UNIX_TIMESTAMP(DATETIME(6))`` is a DECIMAL with six places.
FSP = "rivulet_fsp"


def spark_field(name: str, column: Column) -> T.StructField:
    """A nullable field holding the values of ``column``; a DATETIME's fractional digits
    travel in the field's metadata, which Spark keeps through projections."""
    metadata = {FSP: column.fsp} if column.kind == DATETIME and column.fsp else None
    return T.StructField(name, spark_type(column.kind, column.scale), True, metadata)


def scale_of_field(field: T.StructField) -> int:
    """The places of a DECIMAL field, the fractional digits of a DATETIME field."""
    return int((field.metadata or {}).get(FSP, scale_of_type(field.dataType)))


# --------------------------------------------------------------------------- Python values


def fit_decimal(value: decimal.Decimal, scale: int | None) -> decimal.Decimal:
    """``value`` at the Spark column's scale, rounded half up (MySQL's rule); raises
    ``ValueError`` if it has too many integer digits for DECIMAL(38)."""
    q = value.quantize(decimal.Decimal(1).scaleb(-_scale(scale)), context=_EXACT)
    if abs(q) >= _DECIMAL_LIMIT.scaleb(-_scale(scale)):
        raise ValueError(f"{value} does not fit DECIMAL({DECIMAL_PRECISION}, {_scale(scale)})")
    return q


def to_kind(value: Any, kind: Kind | None, scale: int | None = None) -> Any:
    """``value`` (any SQL value) as a value of ``kind``, converted as MySQL converts in
    that context; used where a result's Python type may differ from the column's kind."""
    if value is None or kind is None:
        return None
    convert = _CONVERT.get(kind)
    if convert is None:
        raise TypeError(f"unknown value kind {kind!r}")
    return convert(value, scale)


def _to_int(v: Any, _scale: int | None) -> int | None:
    if type(v) is int:
        return v
    if type(v) is bool:
        return int(v)
    return F.cast_int(v)


def _to_float(v: Any, _scale: int | None) -> float:
    if type(v) is float:
        return v
    n = F.to_number(v)
    try:
        return float(n)
    except OverflowError:  # an integer beyond the doubles: MySQL saturates
        return math.inf if n > 0 else -math.inf


def _to_decimal(v: Any, scale: int | None) -> decimal.Decimal | None:
    d = v if type(v) is decimal.Decimal else F.cast_decimal(v)
    if d is None or not d.is_finite():
        return None
    try:
        return fit_decimal(d, scale)
    except ValueError:
        return None  # out of DECIMAL(38) range: NULL, as Spark answers an overflow


def _to_str(v: Any, _scale: int | None) -> str:
    s = F.to_str(v)
    return s.decode("utf-8", "replace") if type(s) is bytes else s


def _to_bytes(v: Any, _scale: int | None) -> bytes:
    if type(v) is bytes:
        return v
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    s = F.to_str(v)
    return s if type(s) is bytes else s.encode("utf-8")


def _to_date(v: Any, _scale: int | None) -> dt.date | None:
    if type(v) is dt.date:
        return v
    return F.cast_date(v)


def _to_datetime(v: Any, _scale: int | None) -> dt.datetime | None:
    if type(v) is dt.datetime:
        return v
    return F.cast_datetime(v)


_CONVERT: dict[str, Callable[[Any, int | None], Any]] = {
    INT: _to_int,
    BOOL: _to_int,
    FLOAT: _to_float,
    DECIMAL: _to_decimal,
    STR: _to_str,
    BYTES: _to_bytes,
    DATE: _to_date,
    DATETIME: _to_datetime,
}


# --------------------------------------------------------------------------- Arrow tables


def arrow_table(rows: list[Row], schema: T.StructType) -> pa.Table:
    """Rows of rivulet values as an Arrow table for a Spark schema (Spark builds a local
    DataFrame from Arrow several times faster than from Python rows)."""
    columns = list(zip(*rows)) if rows else [() for _ in schema.fields]
    arrays = []
    for field, values in zip(schema.fields, columns):
        kind, scale = kind_of_type(field.dataType), scale_of_type(field.dataType)
        target = arrow_type(kind, scale)
        if isinstance(field.dataType, T.DecimalType):
            target = pa.decimal128(field.dataType.precision, scale)
        arrays.append(pa.array([to_kind(v, kind, scale) for v in values], type=target))
    return pa.Table.from_arrays(arrays, names=[f.name for f in schema.fields])


def rows_from_arrow(table: pa.Table) -> list[Row]:
    """The rows of an Arrow table as tuples of rivulet Python values."""
    if table.num_columns == 0:
        return [()] * table.num_rows
    columns = [_python_values(table.column(i)) for i in range(table.num_columns)]
    return list(zip(*columns))


def _python_values(column: pa.ChunkedArray) -> list[Any]:
    values = column.to_pylist()
    if pa.types.is_boolean(column.type):
        return [None if v is None else int(v) for v in values]
    if pa.types.is_timestamp(column.type) and column.type.tz is not None:
        return [None if v is None else v.replace(tzinfo=None) for v in values]
    return values
