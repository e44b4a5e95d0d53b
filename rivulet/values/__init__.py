"""SQL values, MySQL flavour: the data model and the runtime library compiled expressions call.

Why this package exists: the meaning of ``'12abc' = 12``, ``5 / 2``, ``-7 % 3`` or
``x IN (1, NULL)`` should be written down once. The dataflow engine's expression compiler
calls these functions, and the Spark compiler's tests use them as the reference, so the two
back ends cannot drift apart. The functions are plain module-level functions over plain
Python values (docs/design.md, "Data model"): ``int``, ``float``, ``str``, ``bytes``, ``bool``,
``decimal.Decimal``, ``datetime.datetime``, ``datetime.date``, ``datetime.timedelta`` (TIME),
an ENUM column's :class:`~rivulet.values.enumerations.EnumValue` (a ``str``) and ``None``
for SQL NULL.

Layout
------
It is the bottom layer of rivulet: plan, views, the dataflow engine and the Spark side all
import it, and it imports nothing of rivulet but :mod:`rivulet.errors`. One module per
concept, importing one way only (each imports only those above it in this list):

* :mod:`~rivulet.values.enumerations` and :mod:`~rivulet.values.times`: the values of ENUM
  columns (text that knows its index) and of TIME columns (``timedelta``), imported by all;
* :mod:`~rivulet.values.numerals`: numbers as MySQL writes them in text;
* :mod:`~rivulet.values.schema`: value kinds (:class:`~rivulet.values.schema.Kind`),
  columns, table schemas and the checks every written row goes through;
* :mod:`~rivulet.values.types`: MySQL's static types (:class:`~rivulet.values.types.SqlType`)
  and its rules for them: the type of ``CASE``, of ``5 / 2``, of ``SUM``, what ``=``
  compares two kinds as. The planner writes the conversions they imply into the plan;
* :mod:`~rivulet.values.conversions`: values as numbers, strings, dates (MySQL's implicit
  conversions);
* :mod:`~rivulet.values.logic`: three-valued ``AND``/``OR``/``NOT``/``XOR`` and truth;
* :mod:`~rivulet.values.comparison`: ``=``, ``<``, ``<=>``, ``IN``, ``BETWEEN``...;
* :mod:`~rivulet.values.matching`: which stored values of a column a compared value finds
  (a view's reader looks parameters up by them);
* :mod:`~rivulet.values.arithmetic`, :mod:`~rivulet.values.bits`,
  :mod:`~rivulet.values.powers`, :mod:`~rivulet.values.like`, :mod:`~rivulet.values.regexps`,
  :mod:`~rivulet.values.codes`,
  :mod:`~rivulet.values.control`, :mod:`~rivulet.values.strings`,
  :mod:`~rivulet.values.numeric`, :mod:`~rivulet.values.dates`,
  :mod:`~rivulet.values.ordering` (``ORDER BY`` keys);
* :mod:`~rivulet.values.intervals` (``+ INTERVAL``, ``TIMESTAMPDIFF``) and
  :mod:`~rivulet.values.date_format` (``DATE_FORMAT``, ``EXTRACT``, week numbers);
* :mod:`~rivulet.values.casts`: ``CAST(x AS type)``;
* :mod:`~rivulet.values.registry`: the name -> function tables of the expression compiler.

This package re-exports the functions, so callers write ``from rivulet import values as F``
and ``F.eq(a, b)``, ``F.SCALAR_FUNCTIONS``, ``F.sort_key``.

Conventions
-----------
* Every function propagates NULL (returns ``None`` if an argument is ``None``) unless its
  docstring says otherwise (``null_safe_eq``, ``is_null``, ``coalesce``, ``concat_ws``,
  ``and_``/``or_``, ``in_list``, ``if_``...).
* SQL booleans are the ints ``1``/``0`` (MySQL has no boolean type); predicates return
  ``1``, ``0`` or ``None``.
* Errors that MySQL reports as warnings and turns into NULL (division by zero, an
  unparsable date) return ``None``; nothing here raises on bad *data* in a read. A write
  statement is evaluated in MySQL's strict mode
  (:func:`~rivulet.values.conversions.strict_mode`): a conversion MySQL reports as
  truncating (text that is not all a number read as one, a value read as a date that is
  none) raises :class:`~rivulet.errors.TruncatedValueError` (error 1292), as MySQL fails
  the statement.
* Strings use a binary collation: comparison, ``LIKE``, ``LOCATE`` and ``REPLACE`` are
  case-sensitive and compare code points, with NO PAD (trailing spaces are significant).
  That is MySQL's ``utf8mb4_0900_bin``; the older ``utf8mb4_bin`` is the same except that it
  ignores trailing spaces in ``=``.

Where MySQL and SQLite differ (SQLite is the test oracle for the common subset; MariaDB,
tests/mysql_oracle.py, decides the rest), rivulet follows MySQL:

====================================  ==========================  ==========================
case                                  MySQL (rivulet)             SQLite
====================================  ==========================  ==========================
``5 / 2``                             2.5000 (DECIMAL: the        2 (integer division)
                                      dividend's places + 4)
``7 / 3 * 3``                         7.0000 (a quotient carries  6
                                      whole 9-digit words)
``5 DIV 2``, ``-7 DIV 2``             2, -3 (truncates)           no ``DIV`` operator
``5.5 % 2``                           1.5 (fmod)                  1.0 (operands cast to int)
``'abc' = 0``, ``'12abc' = 12``       1, 1 (string -> number)     0, 0 (text never equals
                                                                  a number)
``1 = 1.0`` for ints beyond 2**53     compared as doubles         compared exactly
DATE ``=`` 20200105, '2020-01-05x'    1, 1 (read as dates; no     0, 0 (compared as they
                                      date: the zero date)        are)
``SUM`` of INT, ``AVG`` of INT        DECIMAL, DECIMAL with 4     integer, double
                                      places
``CASE`` of an INT and a VARCHAR      VARCHAR ('5')               each value its own type
``GREATEST(10, '9')``                 10.0 (as DOUBLEs;           '9' (text sorts after
                                      MariaDB's rule)             numbers)
``'a' LIKE 'A'``                      0 here (binary collation;   1 (ASCII case-insensitive)
                                      MySQL's default collation
                                      would say 1)
``LIKE`` escape character             ``\\`` by default           none unless ``ESCAPE``
``LENGTH('é')``                       2 (bytes)                   1 (characters)
``SUBSTR('abc', 0, 2)``               ``''``                      ``'a'``
``CONCAT(1.0e0)``                     ``'1'``                     ``'1.0'`` (``||``)
``ROUND(5)``                          5 (keeps the exact type)    5.0 (always a float)
``GREATEST``/``LEAST``                ``GREATEST``/``LEAST``      multi-argument
                                                                  ``max``/``min``
DATE/DATETIME                         real temporal types         strings
====================================  ==========================  ==========================

Every expression has one static type (:mod:`~rivulet.values.types`); the planner converts
values to it, so the functions here may assume it (a quotient they return carries more
places than its type shows: the plan rounds it with :func:`to_scale` where MySQL does).

Known simplifications, each marked where it lives: integer and DOUBLE arithmetic does not
overflow (MySQL raises an error beyond BIGINT and DOUBLE; ``POW`` and ``EXP`` likewise give
infinity, and NULL for ``POW(-8, 1/3)``, which MySQL fails); naive datetimes are UTC for
``UNIX_TIMESTAMP``; a DATETIME keeps the fractional seconds it is given (MySQL's DATETIME
has none), though a DATETIME in numeric context is YYYYMMDDhhmmss without them; a DECIMAL
column declared without a precision keeps its values as written (MySQL: DECIMAL(10, 0)).
"""

from __future__ import annotations

from rivulet.values.arithmetic import add, div, int_div, mod, mul, neg, sub, to_scale
from rivulet.values.bits import (
    bit_and,
    bit_count,
    bit_not,
    bit_or,
    bit_xor,
    shift_left,
    shift_right,
)
from rivulet.values.casts import (
    CASTS,
    cast_bytes,
    cast_date,
    cast_datetime,
    cast_decimal,
    cast_float,
    cast_int,
    cast_str,
    cast_time,
    cast_unsigned,
)
from rivulet.values.clock import (
    curdate_at,  # noqa: F401 (the time functions of a statement's instant: not Spark's)
    curtime_at,  # noqa: F401
    now_at,  # noqa: F401
    unix_timestamp_at,  # noqa: F401
)
from rivulet.values.comparison import (
    TYPE_CLASS,  # noqa: F401 (a helper re-exported outside __all__, see below)
    between,
    between_dates,
    coerce_pair,  # noqa: F401 (a helper re-exported outside __all__, see below)
    eq,
    ge,
    gt,
    in_list,
    is_not_null,
    is_null,
    le,
    lt,
    ne,
    null_safe_eq,
)
from rivulet.values.control import coalesce, first_branch, if_, ifnull, nullif
from rivulet.values.conversions import (
    as_float,  # noqa: F401 (a helper re-exported outside __all__, see below)
    planned_number,  # noqa: F401 (a helper re-exported outside __all__, see below)
    strict_date,  # noqa: F401 (a helper re-exported outside __all__, see below)
    strict_number,  # noqa: F401 (a helper re-exported outside __all__, see below)
    strict_time,  # noqa: F401 (a helper re-exported outside __all__, see below)
    temporal_to_number,  # noqa: F401 (a helper re-exported outside __all__, see below)
    text_operands,  # noqa: F401 (a helper re-exported outside __all__, see below)
    text_to_float,  # noqa: F401 (a helper re-exported outside __all__, see below)
    to_int,  # noqa: F401 (a helper re-exported outside __all__, see below)
    to_number,
    to_str,
    to_temporal,  # noqa: F401 (a helper re-exported outside __all__, see below)
)
from rivulet.values.date_format import date_format, extract
from rivulet.values.dates import (
    addtime,
    convert_tz,
    date_,
    datediff,
    day,
    hour,
    minute,
    month,
    sec_to_time,
    second,
    subtime,
    time_,
    time_to_sec,
    timediff,
    unix_timestamp,
    year,
)
from rivulet.values.intervals import date_add, date_sub, timestampdiff
from rivulet.values.like import like, not_like
from rivulet.values.logic import and_, not_, or_, truth, xor
from rivulet.values.numeric import abs_, ceil, floor, greatest, least, round_, sign
from rivulet.values.ordering import desc_key, sort_key
from rivulet.values.regexps import regexp
from rivulet.values.registry import FUNCTION_ARITY, OPERATORS, SCALAR_FUNCTIONS, arity_error
from rivulet.values.strings import (
    char_length,
    concat,
    concat_ws,
    instr,
    left,
    length,
    locate,
    lower,
    lpad,
    ltrim,
    repeat,
    replace,
    reverse,
    right,
    rpad,
    rtrim,
    substring,
    trim,
    upper,
)

#: The SQL-level API. The Spark compiler calls any lower-case name listed here by name, so
#: the helpers re-exported above for other modules (``as_float``, ``coerce_pair``,
#: ``to_temporal``...) are left out on purpose.
__all__ = [
    "CASTS", "FUNCTION_ARITY", "OPERATORS", "SCALAR_FUNCTIONS", "abs_", "add", "addtime", "and_",
    "arity_error", "between", "between_dates", "bit_and", "bit_count", "bit_not", "bit_or",
    "bit_xor", "shift_left", "shift_right", "cast_bytes", "cast_date", "cast_datetime",
    "cast_decimal", "cast_float", "cast_int", "cast_str", "cast_time", "cast_unsigned", "ceil",
    "char_length",
    "coalesce", "concat", "concat_ws", "convert_tz", "date_", "datediff", "day", "desc_key",
    "first_branch",
    "div", "eq", "floor", "ge", "greatest", "gt", "hour", "if_", "ifnull", "in_list", "instr",
    "int_div", "is_not_null", "is_null", "le", "least", "left", "length", "like", "locate",
    "lower", "lpad", "lt", "ltrim", "minute", "mod", "month", "mul", "ne", "neg", "not_",
    "not_like", "null_safe_eq", "nullif", "or_", "regexp", "repeat", "replace", "reverse", "right",
    "round_", "rpad", "rtrim", "sec_to_time", "second", "sign", "sort_key", "sub", "substring",
    "subtime", "time_", "time_to_sec", "timediff", "to_number", "to_scale", "to_str", "trim",
    "truth", "unix_timestamp", "upper", "xor", "year", "date_add", "date_sub", "timestampdiff",
    "extract", "date_format",
]
