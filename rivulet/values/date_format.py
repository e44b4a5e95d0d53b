"""``DATE_FORMAT(d, format)``, ``EXTRACT(unit FROM d)`` and MySQL's week numbering.

Why this module exists: Django truncates and groups dates with ``DATE_FORMAT`` and
``EXTRACT`` on MySQL, and both number weeks by MySQL's own rules (``calc_week``: a week
starting on Sunday or Monday, counted in the year or in the year it mostly falls in), which
Python's ``strftime`` and ``isocalendar`` cover only in part. The rules are written once
here, as MySQL's ``make_date_time`` and ``Item_extract`` apply them, in English (MySQL's
default ``lc_time_names``, en_US).

The planner hands these functions a DATE or a DATETIME (text is read as one; a value that
is none gives NULL).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from rivulet.values.conversions import date_fields, to_str, to_temporal
from rivulet.values.datetexts import Parts

_date = _dt.date
_datetime = _dt.datetime

#: calc_week's flags (MySQL's WEEK_MONDAY_FIRST, WEEK_YEAR, WEEK_FIRST_WEEKDAY).
MONDAY_FIRST = 1
WEEK_YEAR = 2
FIRST_WEEKDAY = 4

_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December")


def _days_in_year(year: int) -> int:
    return 366 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 365


def _weekday(d: _date, sunday_first: bool) -> int:
    """MySQL's calc_weekday: 0 for the first day of the week."""
    return (d.weekday() + 1) % 7 if sunday_first else d.weekday()


def calc_week(d: _date, flags: int) -> tuple[int, int]:
    """(week, year) of ``d`` by MySQL's calc_week with ``flags``."""
    daynr = d.toordinal()
    first = _date(d.year, 1, 1)
    first_daynr = first.toordinal()
    monday_first = bool(flags & MONDAY_FIRST)
    week_year = bool(flags & WEEK_YEAR)
    first_weekday = bool(flags & FIRST_WEEKDAY)
    weekday = _weekday(first, not monday_first)
    year = d.year
    if d.month == 1 and d.day <= 7 - weekday:
        if not week_year and ((first_weekday and weekday != 0)
                              or (not first_weekday and weekday >= 4)):
            return 0, year
        week_year = True
        year -= 1
        days = _days_in_year(year)
        first_daynr -= days
        weekday = (weekday + 53 * 7 - days) % 7
    if (first_weekday and weekday != 0) or (not first_weekday and weekday >= 4):
        days = daynr - (first_daynr + (7 - weekday))
    else:
        days = daynr - (first_daynr - weekday)
    if week_year and days >= 52 * 7:
        weekday = (weekday + _days_in_year(year)) % 7
        if (not first_weekday and weekday < 4) or (first_weekday and weekday == 0):
            return 1, year + 1
    return days // 7 + 1, year


def week_mode(mode: int) -> int:
    """The calc_week flags of ``WEEK(d, mode)`` (MySQL's week_mode)."""
    flags = mode & 7
    if not flags & MONDAY_FIRST:
        flags ^= FIRST_WEEKDAY
    return flags


def _moment(v: Any) -> _datetime | None:
    t = v if isinstance(v, _date) else to_temporal(v)
    if t is None:
        return None
    return t if type(t) is _datetime else _datetime.combine(t, _dt.time())


def _suffixed(day: int) -> str:
    if 11 <= day % 100 <= 13:
        return f"{day}th"
    return f"{day}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th')}"


def _specifier(c: str, t: _datetime) -> str:
    """What ``%c`` shows of ``t``; an unknown specifier shows its character."""
    h12 = (t.hour + 11) % 12 + 1
    ampm = "AM" if t.hour < 12 else "PM"
    simple = {
        "a": lambda: _DAY_NAMES[t.weekday()][:3],
        "b": lambda: _MONTH_NAMES[t.month - 1][:3],
        "c": lambda: str(t.month),
        "D": lambda: _suffixed(t.day),
        "d": lambda: f"{t.day:02d}",
        "e": lambda: str(t.day),
        "f": lambda: f"{t.microsecond:06d}",
        "H": lambda: f"{t.hour:02d}",
        "h": lambda: f"{h12:02d}",
        "I": lambda: f"{h12:02d}",
        "i": lambda: f"{t.minute:02d}",
        "j": lambda: f"{t.timetuple().tm_yday:03d}",
        "k": lambda: str(t.hour),
        "l": lambda: str(h12),
        "M": lambda: _MONTH_NAMES[t.month - 1],
        "m": lambda: f"{t.month:02d}",
        "p": lambda: ampm,
        "r": lambda: f"{h12:02d}:{t.minute:02d}:{t.second:02d} {ampm}",
        "S": lambda: f"{t.second:02d}",
        "s": lambda: f"{t.second:02d}",
        "T": lambda: f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}",
        "U": lambda: f"{calc_week(t, FIRST_WEEKDAY)[0]:02d}",
        "u": lambda: f"{calc_week(t, MONDAY_FIRST)[0]:02d}",
        "V": lambda: f"{calc_week(t, WEEK_YEAR | FIRST_WEEKDAY)[0]:02d}",
        "v": lambda: f"{calc_week(t, WEEK_YEAR | MONDAY_FIRST)[0]:02d}",
        "W": lambda: _DAY_NAMES[t.weekday()],
        "w": lambda: str((t.weekday() + 1) % 7),
        "X": lambda: f"{calc_week(t, WEEK_YEAR | FIRST_WEEKDAY)[1]:04d}",
        "x": lambda: f"{calc_week(t, WEEK_YEAR | MONDAY_FIRST)[1]:04d}",
        "Y": lambda: f"{t.year:04d}",
        "y": lambda: f"{t.year % 100:02d}",
    }
    shown = simple.get(c)
    return c if shown is None else shown()


def date_format(v: Any, fmt: Any) -> str | None:
    """``DATE_FORMAT(v, fmt)``: ``fmt`` with each ``%`` specifier replaced by that part of
    the date or datetime ``v`` (a DATE's time is midnight); a ``%`` at the very end stays."""
    if v is None or fmt is None:
        return None
    t = _moment(v)
    if t is None:
        return None
    text = to_str(fmt)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "%" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        out.append(_specifier(text[i + 1], t))
        i += 2
    return "".join(out)


def _extract_part(unit: str, fields: Parts) -> int | None:
    """One unit of EXTRACT from a date's fields (None: the unit needs a whole date)."""
    year, month, day, hour, minute, second, micro = fields
    if unit == "WEEK":
        t = _moment_of(fields)
        return None if t is None else calc_week(t, week_mode(0))[0]
    if unit == "QUARTER":
        return (month + 2) // 3
    return {"YEAR": year, "MONTH": month, "DAY": day, "HOUR": hour or 0, "MINUTE": minute,
            "SECOND": second, "MICROSECOND": micro}[unit]


def _moment_of(fields: Parts) -> _datetime | None:
    year, month, day, hour, minute, second, micro = fields
    try:
        return _datetime(year, month, day, hour or 0, minute, second, micro)
    except ValueError:
        return None  # (a zero month or day, year 0: no calendar day)


#: EXTRACT's units: the simple ones, and the compound ones as the parts they join
#: (``DAY_HOUR`` of the 3rd at 10 is 310; YEAR_MONTH of 2024-05 is 202405).
EXTRACT_UNITS: dict[str, tuple[tuple[str, int], ...]] = {
    **{u: ((u, 1),) for u in ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE",
                              "SECOND", "MICROSECOND")},
    "YEAR_MONTH": (("YEAR", 100), ("MONTH", 1)),
    "DAY_HOUR": (("DAY", 100), ("HOUR", 1)),
    "DAY_MINUTE": (("DAY", 10_000), ("HOUR", 100), ("MINUTE", 1)),
    "DAY_SECOND": (("DAY", 1_000_000), ("HOUR", 10_000), ("MINUTE", 100), ("SECOND", 1)),
    "HOUR_MINUTE": (("HOUR", 100), ("MINUTE", 1)),
    "HOUR_SECOND": (("HOUR", 10_000), ("MINUTE", 100), ("SECOND", 1)),
    "MINUTE_SECOND": (("MINUTE", 100), ("SECOND", 1)),
}


#: The units EXTRACT takes of a TIME (the others read it as a time of the current day).
CLOCK_EXTRACT_UNITS = frozenset({"HOUR", "MINUTE", "SECOND", "MICROSECOND", "HOUR_MINUTE",
                                 "HOUR_SECOND", "MINUTE_SECOND"})


def _extract_time(unit: str, v: _dt.timedelta) -> int:
    """EXTRACT of a TIME: its parts (hours past 23 too, as MySQL 8 keeps them; MariaDB
    takes the days out) with its sign (MySQL's ``Item_extract`` multiplies by it)."""
    n = (v.days * 86400 + v.seconds) * 1_000_000 + v.microseconds
    sign, n = (-1 if n < 0 else 1), abs(n)
    seconds = n // 1_000_000
    parts = {"HOUR": seconds // 3600, "MINUTE": seconds // 60 % 60, "SECOND": seconds % 60,
             "MICROSECOND": n % 1_000_000}
    return sign * sum(parts[part] * scale for part, scale in EXTRACT_UNITS[unit])


def extract(unit: str, v: Any) -> int | None:
    """``EXTRACT(unit FROM v)`` of a DATE or DATETIME (a DATE's time parts are 0), or of a
    TIME for a unit of :data:`CLOCK_EXTRACT_UNITS`."""
    if v is None:
        return None
    if isinstance(v, _dt.timedelta):
        return _extract_time(unit, v)
    fields = date_fields(v)  # (a zero month or day too: EXTRACT(MONTH FROM 1000) is 10)
    if fields is None:
        return None
    total = 0
    for part, scale in EXTRACT_UNITS[unit]:
        n = _extract_part(part, fields)
        if n is None:
            return None
        total += n * scale
    return total
