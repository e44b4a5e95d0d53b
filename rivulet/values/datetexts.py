"""Date and datetime text as MySQL reads it (its ``str_to_datetime``): the fields first,
then the date they make, if they make one.

Why a module of its own: both what a column stores (:mod:`rivulet.values.schema`) and what a
comparison or a function reads (:mod:`rivulet.values.conversions`) read date text, and
MySQL reads it the same way in both: any punctuation between the parts ('2024/1/2'), a
time after a space, a 'T' or a punctuation mark, the hour alone ('2021-02-03 5' is 05:00),
two-digit years, digits alone (YYYYMMDD...).
"""

from __future__ import annotations

import datetime as _dt
import re
from functools import lru_cache

from rivulet.values.times import PUNCTUATION, full_year

_date = _dt.date
_datetime = _dt.datetime

_PUNCT = PUNCTUATION
_DATE_TEXT = (
    r"\s*(\d{1,4})" + _PUNCT + r"(\d{1,2})" + _PUNCT + r"(\d{1,2})"
    r"(?:(?:[ T]+|" + _PUNCT + r")(\d{1,2})(?:" + _PUNCT + r"(\d{1,2})"
    r"(?:" + _PUNCT + r"(\d{1,2})(?:\.(\d{0,6})\d*)?)?)?)?"
)
DATE_RE = re.compile(_DATE_TEXT + r"(?!\d)", re.ASCII)
#: A date or datetime and nothing after it but spaces (MySQL reads it without a warning).
WHOLE_DATE_RE = re.compile(_DATE_TEXT + r"\s*\Z", re.ASCII)
COMPACT_DATE_RE = re.compile(r"\s*(\d+)(?:\.(\d{0,6})\d*)?\s*\Z", re.ASCII)


@lru_cache(maxsize=4096)
def parse_temporal(s: str) -> _date | None:
    """Parse a MySQL date or datetime literal as MySQL's str_to_datetime does: year, month
    and day (then hours, minutes and seconds, after a space, a 'T' or a punctuation mark)
    between any punctuation ('2024-01-02', '24/1/2', '01:02:03' is 2001-02-03,
    '2024-01-02 10.11.12'), a two-digit year being 1970-2069; or digits alone: YYMMDD,
    YYYYMMDD, YYMMDDhhmmss, YYYYMMDDhhmmss. Returns a date, a datetime, or None if the
    string is not a valid date. As MySQL does (with a warning), text after a whole date or
    time is ignored: '2020-01-01x' is a date."""
    parts = text_parts(s)
    return None if parts is None else temporal_of(parts)


#: A date's or datetime's fields as read, unchecked: year, month, day, then hour, minute,
#: second and microsecond (None for a date alone).
Parts = tuple[int, int, int, int | None, int, int, int]


def text_parts(s: str) -> Parts | None:
    """The fields of date text (see :func:`parse_temporal`), or None if it has none."""
    m = DATE_RE.match(s)
    if m is not None:
        year_text, month, day, hour, minute, second, frac = m.groups()
        # (a two-digit year is 2000-2069 or 1970-1999 unless every field is zero: '00:00:00'
        # is the zero date, '00:01:00' 2000-01-00, as MySQL reads them)
        zero = not any(int(f) for f in m.groups() if f)
        year = int(year_text) if zero else full_year(year_text)
    else:
        m = COMPACT_DATE_RE.match(s)
        if m is None:
            return None
        digits, frac = m.groups()
        if len(digits) in (6, 12):
            zero = not (int(digits) or int(frac or "0"))
            digits = ("00" if zero else str(full_year(digits[:2]))) + digits[2:]
        if len(digits) not in (8, 14):
            return None
        year, month, day = int(digits[:4]), digits[4:6], digits[6:8]
        hour, minute, second = (digits[8:10], digits[10:12], digits[12:14]) \
            if len(digits) == 14 else (None, None, None)
    if hour is None:
        return year, int(month), int(day), None, 0, 0, 0
    return (year, int(month), int(day), int(hour), int(minute or 0), int(second or 0),
            int((frac or "").ljust(6, "0")))


def temporal_of(parts: Parts) -> _date | None:
    """The date (no hour) or datetime of ``parts``; None if they are not a valid one."""
    year, month, day, hour, minute, second, micro = parts
    try:
        if hour is None:
            return _date(year, month, day)
        return _datetime(year, month, day, hour, minute, second, micro)
    except (ValueError, OverflowError):
        return None


def fraction_digits(text: str) -> int:
    """The digits of a second's fraction that date text gives (up to 6: '2021-02-03
    00:00:00.25' gives 2), 0 if it gives none or is no datetime."""
    m = DATE_RE.match(text)
    return len(m.group(7) or "") if m is not None and m.group(4) is not None else 0


def stored_temporal(text: str) -> _date | None:
    """Text written to a DATE or DATETIME column, as MySQL's strict mode reads it: the date
    or datetime if the text is one whole (spaces around it aside: '2021/2/3', '21-2-3 5',
    '20210203'), else None (the write fails)."""
    if WHOLE_DATE_RE.match(text) is None and COMPACT_DATE_RE.match(text) is None:
        return None
    return parse_temporal(text)
