"""The current time as MySQL's time functions give it, from one instant per statement.

Why this module exists: ``NOW()``, ``CURDATE()``, ``CURTIME()``, ``UNIX_TIMESTAMP()`` and
their synonyms read the clock, which no row holds. MySQL reads it once per statement (every
``NOW()`` of one statement gives the same value), and so does rivulet: a statement that
calls one takes its :func:`statement_time` once, and each function is a pure function of
that instant (its value is what a write stores and logs, never the call). Keeping the
functions pure is what makes a write deterministic to replay: the instant is a value of
the statement like its ``?`` values.

rivulet keeps one time zone, UTC (naive datetimes are UTC: see rivulet/values/schema.py's
TIMESTAMP range), so the local time functions and the ``UTC_`` ones agree, as MySQL's do
with ``time_zone`` = ``SYSTEM`` on a machine kept in UTC. ``SYSDATE()`` (the time it is
called, in MySQL) is the statement's instant too.
"""

from __future__ import annotations

import datetime as _dt

#: The most fractional digits a time function takes (``NOW(6)``).
MAX_FSP = 6


def statement_time() -> _dt.datetime:
    """The instant a statement reads the clock at: now, in UTC, to the microsecond
    (naive, as rivulet's datetimes are)."""
    return _dt.datetime.now(_dt.UTC).replace(tzinfo=None)


def now_at(at: _dt.datetime, fsp: int) -> _dt.datetime:
    """``NOW(fsp)`` at instant ``at``: its fraction cut to ``fsp`` digits (MySQL
    truncates the clock's microseconds, it does not round them)."""
    cut = 10 ** (MAX_FSP - fsp)
    return at.replace(microsecond=at.microsecond - at.microsecond % cut)


def curdate_at(at: _dt.datetime) -> _dt.date:
    """``CURDATE()`` at instant ``at``."""
    return at.date()


def curtime_at(at: _dt.datetime, fsp: int) -> _dt.timedelta:
    """``CURTIME(fsp)`` at instant ``at``: the time of day as a TIME (a ``timedelta``)."""
    cut = now_at(at, fsp)
    return _dt.timedelta(hours=cut.hour, minutes=cut.minute, seconds=cut.second,
                         microseconds=cut.microsecond)


def unix_timestamp_at(at: _dt.datetime) -> int:
    """``UNIX_TIMESTAMP()`` at instant ``at``: whole seconds since 1970-01-01 00:00:00 UTC."""
    return int((at - _dt.datetime(1970, 1, 1)).total_seconds())
