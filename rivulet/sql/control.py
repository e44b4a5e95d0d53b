"""Transaction control statements: ``BEGIN``, ``COMMIT``, ``ROLLBACK``, savepoints.

sqlglot reads some of them (``BEGIN``, ``ROLLBACK TO``) and not others (``SAVEPOINT``,
``RELEASE SAVEPOINT``), and drops what it does not model (``AND CHAIN``); they are short and
fixed in form, so they are read here, by their words, into a :class:`Control`.

    >>> control_statement("START TRANSACTION READ ONLY")
    Control(verb='begin', name='', read_only=True, isolation=None, scope='')
    >>> control_statement("rollback work to savepoint `s 1`")
    Control(verb='rollback_to', name='s 1', read_only=None, isolation=None, scope='')
    >>> control_statement("SELECT 1") is None
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from rivulet.errors import UnsupportedSqlError

Verb = Literal["begin", "commit", "rollback", "savepoint", "rollback_to", "release",
               "characteristics"]


@dataclass(frozen=True)
class Control:
    """One transaction control statement."""

    verb: Verb
    #: The savepoint's name (``savepoint``, ``rollback_to``, ``release``).
    name: str = ""
    #: ``START TRANSACTION READ ONLY`` (True) or ``READ WRITE`` (False); None: not said.
    read_only: bool | None = None
    #: ``SET [SESSION] TRANSACTION ISOLATION LEVEL ...``: the level as MySQL's variable
    #: spells it (``READ-COMMITTED``); None: not said.
    isolation: str | None = None
    #: ``SET TRANSACTION``'s scope: ``SESSION`` (LOCAL too), ``GLOBAL``, or ``""`` (the
    #: next transaction only).
    scope: str = ""


_NAME = r"(?:`(?P<quoted>(?:[^`]|``)+)`|(?P<plain>[A-Za-z0-9_$]+))"
_END = r"\s*;?\s*$"
_BEGIN = re.compile(r"\s*(?:BEGIN(?:\s+WORK)?|START\s+TRANSACTION(?P<modes>(?:\s+[\w\s,]*)?))"
                    + _END, re.I)
_COMMIT = re.compile(r"\s*(?P<verb>COMMIT|ROLLBACK)(?:\s+WORK)?(?P<rest>(?:\s+[\w\s]*)?)" + _END,
                     re.I)
_ROLLBACK_TO = re.compile(r"\s*ROLLBACK(?:\s+WORK)?\s+TO\s+(?:SAVEPOINT\s+)?" + _NAME + _END,
                          re.I)
_SAVEPOINT = re.compile(r"\s*SAVEPOINT\s+" + _NAME + _END, re.I)
_RELEASE = re.compile(r"\s*RELEASE\s+SAVEPOINT\s+" + _NAME + _END, re.I)
_START = re.compile(r"\s*(BEGIN|START|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b", re.I)
_OTHER = re.compile(r"\s*(?:START(?!\s+TRANSACTION\b)|BEGIN\s+(?!WORK\b))", re.I)
_SET_TRANSACTION = re.compile(r"\s*SET\s+(?:(?P<scope>SESSION|LOCAL|GLOBAL)\s+)?TRANSACTION\s+"
                              r"(?P<rest>[\w\s,]*?)" + _END, re.I)
_LEVELS = ("READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE")
_MODES = {"READ ONLY": True, "READ WRITE": False, "WITH CONSISTENT SNAPSHOT": None}


def control_statement(sql: str) -> Control | None:
    """The transaction control statement ``sql`` is, or None if it is none. A form rivulet
    does not run (``COMMIT AND CHAIN``, ``ROLLBACK RELEASE``, ``XA``) raises
    :class:`UnsupportedSqlError` naming it."""
    if not _START.match(sql):
        found = _SET_TRANSACTION.match(sql)
        return None if found is None else _characteristics(found, sql)
    for pattern, verb in ((_ROLLBACK_TO, "rollback_to"), (_SAVEPOINT, "savepoint"),
                          (_RELEASE, "release")):
        found = pattern.match(sql)
        if found:
            name = found.group("plain") or found.group("quoted").replace("``", "`")
            return Control(verb, name)  # type: ignore[arg-type]
    found = _BEGIN.match(sql)
    if found:
        return Control("begin", read_only=_read_only(found.group("modes") or "", sql))
    found = _COMMIT.match(sql)
    if found:
        rest = " ".join(found.group("rest").split()).upper()
        if rest in ("", "AND NO CHAIN", "NO RELEASE", "AND NO CHAIN NO RELEASE"):
            return Control(found.group("verb").lower())  # type: ignore[arg-type]
        raise UnsupportedSqlError(f"{found.group('verb').upper()} {rest} is not supported: "
                                  f"send {found.group('verb').upper()} alone")
    if _OTHER.match(sql):
        return None  # (START SLAVE, BEGIN ... END blocks: not transaction statements)
    raise UnsupportedSqlError(f"unsupported transaction statement {sql.strip()[:60]!r}")


def _read_only(modes: str, sql: str) -> bool | None:
    read_only = None
    for mode in (m.strip() for m in modes.split(",") if m.strip()):
        words = " ".join(mode.split()).upper()
        if words not in _MODES:
            raise UnsupportedSqlError(f"unsupported transaction mode {mode!r} in "
                                      f"{sql.strip()[:60]!r}")
        if _MODES[words] is not None:
            if read_only is not None:
                raise UnsupportedSqlError("START TRANSACTION takes READ ONLY or READ WRITE, "
                                          "not both")
            read_only = _MODES[words]
    return read_only


def _characteristics(found: re.Match[str], sql: str) -> Control:
    """``SET [SESSION | GLOBAL] TRANSACTION ISOLATION LEVEL ... | READ ONLY | READ WRITE``."""
    scope = (found.group("scope") or "").upper()
    isolation = read_only = None
    for part in (p.strip() for p in found.group("rest").split(",")):
        words = " ".join(part.split()).upper()
        if words.startswith("ISOLATION LEVEL ") and words[16:] in _LEVELS:
            isolation = words[16:].replace(" ", "-")
        elif words in ("READ ONLY", "READ WRITE"):
            read_only = words == "READ ONLY"
        else:
            raise UnsupportedSqlError(f"unsupported transaction characteristic {part!r} in "
                                      f"{sql.strip()[:60]!r}")
    return Control("characteristics", read_only=read_only, isolation=isolation,
                   scope="SESSION" if scope == "LOCAL" else scope)


#: The isolation level rivulet runs transactions at (docs/transactions.md).
ISOLATION = "READ-COMMITTED"


def check_isolation(level: str) -> None:
    """Refuse an isolation level other than READ COMMITTED, the one rivulet runs
    transactions at, rather than run a transaction as something it is not."""
    if level != ISOLATION:
        raise UnsupportedSqlError(f"isolation level {level.replace('-', ' ')}: rivulet runs "
                                  "transactions at READ COMMITTED only (docs/transactions.md)")


# --------------------------------------------------------------------------- locking reads


@dataclass(frozen=True)
class LockingRead:
    """The locking clause that ends a SELECT (``FOR UPDATE``, ``FOR SHARE``, ``LOCK IN
    SHARE MODE``), read off its text; ``sql`` is the SELECT without it."""

    sql: str
    #: ``X`` (FOR UPDATE) or ``S`` (FOR SHARE, LOCK IN SHARE MODE).
    mode: str
    nowait: bool = False


_LOCKING = re.compile(
    r"\s+(?:FOR\s+(?P<kind>UPDATE|SHARE)(?:\s+OF\s+[\w`$.,\s]+?)?|LOCK\s+IN\s+SHARE\s+MODE)"
    r"(?:\s+(?P<wait>NOWAIT|SKIP\s+LOCKED))?" + r"\s*;?\s*\Z", re.I)


def locking_read(sql: str) -> LockingRead | None:
    """The locking clause ending ``sql`` (a SELECT), if it has one (a string literal
    cannot end the text with it: the text would end with its quote).

        >>> locking_read("SELECT n FROM c WHERE id = 1 FOR UPDATE")
        LockingRead(sql='SELECT n FROM c WHERE id = 1', mode='X', nowait=False)
        >>> locking_read("SELECT * FROM t LOCK IN SHARE MODE").mode
        'S'
        >>> locking_read("SELECT 'FOR UPDATE'") is None
        True
    """
    if "FOR" not in sql.upper() and "MODE" not in sql.upper():
        return None
    found = _LOCKING.search(sql)
    if found is None:
        return None
    wait = (found.group("wait") or "").upper()
    if wait.startswith("SKIP"):
        raise UnsupportedSqlError("SKIP LOCKED: rivulet's locking reads wait for locked rows "
                                  "(or fail at once with NOWAIT)")
    mode = "X" if (found.group("kind") or "").upper() == "UPDATE" else "S"
    return LockingRead(sql[:found.start()], mode, wait == "NOWAIT")
