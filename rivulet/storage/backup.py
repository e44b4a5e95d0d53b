"""Backups of a data directory, taken while it serves, and their checked restore.

Why a copy of the SQLite file is a consistent backup: everything rivulet commits (a write
batch with its log row, a transaction, a program change with its ``_rivulet_program`` row,
a chunk of a lazy schema change with its progress) is one SQLite transaction, and rivulet
opens any committed state as it opens a directory after a crash: views are rebuilt from the
base tables, the log's deltas are never replayed. SQLite's online backup API copies the
database inside one read transaction (:func:`~rivulet.storage.sqlite.copy_database`), so the
copy is the database as of one commit, whose LSN is the last of the copy's log; every write
acknowledged before the copy began is in it (a write is acknowledged after its COMMIT). In
WAL mode a read transaction blocks no writer, in this process or another: ``rivulet backup``
copies beside a running server without going through it, and the server's writes go on; the
WAL only cannot be checkpointed past the copy's snapshot until the copy ends.

A backup is a directory::

    rivulet.db       the database as of one commit
    users.json, ...  the data directory's other files, as they were (``users.json`` and
                     ``hot_keys.pickle`` are replaced whole by their writers, never half)
    backup.json      the manifest, written last: the LSN, when, from where, and each
                     file's size and SHA-256

Left out (:data:`LEFT_OUT`): the lock file (the lock of whoever holds the source), the
database's ``-wal`` and ``-shm`` files (the copy holds every commit they held up to its
snapshot), ``stream/`` (the Spark streaming pipeline's checkpoints, shipped log and view
rows, all derived from the database: a restored directory served with ``--pipeline spark``
starts its streams afresh, as on a first start), ``_bootstrap/`` (a Spark bootstrap's
scratch), files being replaced (``*.tmp``) and hidden entries (the scratch of a backup or a
restore cut short).

A crash never leaves something that passes for a backup: the files are written under a
temporary name and fsynced, the manifest last, then the directory is renamed to its name
(into an existing empty directory, the manifest is the last entry moved in); a restore
refuses a directory without a manifest. Restore (:func:`restore_backup`) takes the data
directory's lock (so it refuses a directory a running process holds), copies the backup into
the directory under a hidden name, checks the copy (sizes, SHA-256, SQLite's integrity check,
the rivulet tables, the manifest's LSN) and only then moves it in place of what the directory
held. Every refusal comes before anything is changed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rivulet.errors import BackupError
from rivulet.faults import fault_point
from rivulet.storage.dirlock import LOCK_FILE, DataDirectoryLock
from rivulet.storage.sqlite import DB_FILE, copy_database

#: The manifest of a backup; a directory without one is no backup.
MANIFEST = "backup.json"
#: The manifest's format (a restore refuses one it does not know).
FORMAT = 1
#: Entries of a data directory that a backup leaves out (see the module doc): the lock, the
#: database (copied through SQLite) and its companions, the Spark streaming pipeline's
#: directory (rivulet/pipeline/streaming/pipeline.py), a Spark bootstrap's scratch
#: (rivulet/spark/bootstrap.py, ``WORK_DIR``), and a stray manifest (the backup's own
#: takes its name).
LEFT_OUT = frozenset({LOCK_FILE, DB_FILE, f"{DB_FILE}-wal", f"{DB_FILE}-shm",
                      f"{DB_FILE}-journal", "stream", "_bootstrap", MANIFEST})
#: Prefixes of the hidden scratch directories of a backup and of a restore.
PARTIAL, RESTORING, REPLACED = ".backup-partial-", ".restore-", ".replaced-"
#: Tables every rivulet database has.
RIVULET_TABLES = ("_rivulet_log", "_rivulet_program")


@dataclass(frozen=True)
class BackupFile:
    """One file of a backup: its path inside the backup ('/'-separated), size and hash."""

    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Backup:
    """A backup: where it is, the LSN of the commit its database is at, and its files."""

    path: Path
    lsn: int
    created_at: str  # ISO 8601, UTC
    source: str  # the data directory it was taken from
    files: tuple[BackupFile, ...]

    @property
    def size(self) -> int:
        """Bytes of all its files."""
        return sum(f.size for f in self.files)

    def describe(self) -> str:
        return (f"LSN {self.lsn}, {len(self.files)} files, {self.size:,} bytes, taken "
                f"{self.created_at} from {self.source}")


# --------------------------------------------------------------------------- backup


def take_backup(data_dir: str | Path, dest: str | Path) -> Backup:
    """Copy the data directory ``data_dir`` into ``dest`` (a new or empty directory) as of
    one commit, while whoever holds it goes on serving and writing (see the module doc).

    Raises :class:`BackupError`, with nothing changed, when ``data_dir`` holds no rivulet
    database or ``dest`` exists and is not an empty directory (or lies inside
    ``data_dir``)."""
    source, target = Path(data_dir), Path(dest)
    database = source / DB_FILE
    if not database.is_file():  # (connecting would create an empty database there)
        raise BackupError(f"{str(source)!r} is no rivulet data directory (no {DB_FILE} in it)")
    _check_destination(source, target)
    try:
        if target.exists():  # an empty directory, perhaps a mount point: write inside it
            staging = Path(tempfile.mkdtemp(prefix=PARTIAL, dir=target))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}{PARTIAL}",
                                            dir=target.parent))
    except OSError as exc:
        raise BackupError(f"cannot write the backup {str(target)!r}: {exc}") from None
    try:
        try:
            lsn = copy_database(database, staging / DB_FILE)
        except sqlite3.DatabaseError as exc:
            raise BackupError(f"cannot copy {str(database)!r}: {exc}") from None
        names = [DB_FILE, *_copy_others(source, staging)]
        backup = Backup(target, lsn, dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                        str(source.resolve()), tuple(_describe(staging, n) for n in names))
        fault_point("backup_copy")
        _write_manifest(staging, backup)
        _publish(staging, target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise BackupError(f"cannot write the backup {str(target)!r}: {exc}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return backup


def _check_destination(source: Path, target: Path) -> None:
    if target.resolve() == source.resolve() or source.resolve() in target.resolve().parents:
        raise BackupError(f"the backup {str(target)!r} cannot go inside the data directory "
                          f"{str(source)!r} it copies")
    if not target.exists():
        return
    if not target.is_dir():
        raise BackupError(f"the backup destination {str(target)!r} exists and is not a "
                          "directory: give a new or empty directory")
    entries = sorted(p.name for p in target.iterdir())
    if entries:
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise BackupError(f"the backup destination {str(target)!r} is not empty ({shown}): "
                          "give a new or empty directory")


def _left_out(name: str) -> bool:
    return name in LEFT_OUT or name.endswith(".tmp") or name.startswith(".")


def _copy_others(source: Path, staging: Path) -> list[str]:
    """Copy the data directory's files other than the database (those not left out);
    returns their paths relative to it."""
    copied = []
    for root, dirs, files in os.walk(source):
        here = Path(root)
        relative = here.relative_to(source)
        if here == source:
            dirs[:] = [d for d in dirs if not _left_out(d)]
            files = [f for f in files if not _left_out(f)]
        for name in sorted(files):
            (staging / relative).mkdir(parents=True, exist_ok=True)
            try:
                shutil.copy2(here / name, staging / relative / name)
            except FileNotFoundError:
                continue  # removed meanwhile: not part of the directory any more
            copied.append((relative / name).as_posix())
    return copied


def _describe(root: Path, name: str) -> BackupFile:
    path = root / name
    with path.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    return BackupFile(name, path.stat().st_size, digest)


def _write_manifest(staging: Path, backup: Backup) -> None:
    """fsync every file, then write the manifest (itself fsynced): a manifest on disk
    means that the files it names are."""
    for f in backup.files:
        _fsync(staging / f.name)
    for directory in {(staging / f.name).parent for f in backup.files}:
        _fsync(directory)
    manifest = {"format": FORMAT, "lsn": backup.lsn, "created_at": backup.created_at,
                "source": backup.source,
                "files": {f.name: {"size": f.size, "sha256": f.sha256} for f in backup.files}}
    path = staging / MANIFEST
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    _fsync(path)
    _fsync(staging)


def _publish(staging: Path, target: Path) -> None:
    """Give the finished backup its name: one rename, or, where ``target`` is an existing
    empty directory (``staging`` inside it), its entries moved up with the manifest last."""
    if staging.parent != target:
        os.rename(staging, target)
        _fsync(target.parent)
        return
    entries = sorted(staging.iterdir(), key=lambda p: p.name == MANIFEST)
    for entry in entries:
        os.rename(entry, target / entry.name)
    staging.rmdir()
    _fsync(target)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- check


def read_backup(path: str | Path) -> Backup:
    """The backup at ``path`` as its manifest describes it (the files are not read: see
    :func:`restore_backup`). Raises :class:`BackupError` for a directory that is no
    backup, or a manifest that is unreadable or names a file outside the backup."""
    where = Path(path)
    if not where.is_dir():
        raise BackupError(f"{str(where)!r} is no backup (not a directory)")
    try:
        data = json.loads((where / MANIFEST).read_text())
    except FileNotFoundError:
        raise BackupError(f"{str(where)!r} is no rivulet backup: it has no {MANIFEST} (not "
                          "made by rivulet backup, or a backup cut short)") from None
    except (OSError, ValueError) as exc:
        raise BackupError(f"the manifest {str(where / MANIFEST)!r} is unreadable: {exc}"
                          ) from None
    try:
        if data["format"] != FORMAT:
            raise BackupError(f"the backup {str(where)!r} has manifest format "
                              f"{data['format']!r}; this rivulet reads format {FORMAT}")
        files = tuple(BackupFile(str(name), int(entry["size"]), str(entry["sha256"]))
                      for name, entry in data["files"].items())
        backup = Backup(where, int(data["lsn"]), str(data["created_at"]), str(data["source"]),
                        files)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BackupError(f"the manifest {str(where / MANIFEST)!r} is malformed ({exc!r})"
                          ) from None
    for f in files:
        parts = PurePosixPath(f.name).parts
        if (PurePosixPath(f.name).is_absolute() or not parts or ".." in parts
                or (_left_out(parts[0]) and f.name != DB_FILE)):
            raise BackupError(f"the manifest {str(where / MANIFEST)!r} names {f.name!r}, "
                              "which no backup holds")
    if DB_FILE not in {f.name for f in files}:
        raise BackupError(f"the manifest {str(where / MANIFEST)!r} names no {DB_FILE}")
    return backup


def _stage_checked(backup: Backup, staging: Path) -> None:
    """Copy the backup's files into ``staging`` and check the copies: each file's size and
    SHA-256 as the manifest says, the database through SQLite's integrity check, with
    rivulet's tables, at the manifest's LSN."""
    for f in backup.files:
        source = backup.path / f.name
        try:
            size = source.stat().st_size
        except FileNotFoundError:
            raise BackupError(f"the backup {str(backup.path)!r} lacks {f.name}, which its "
                              "manifest names: it is damaged") from None
        if size != f.size:
            raise BackupError(f"{f.name} of the backup {str(backup.path)!r} is {size:,} bytes, "
                              f"its manifest says {f.size:,}: the backup is damaged")
        (staging / f.name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, staging / f.name)
        if _describe(staging, f.name).sha256 != f.sha256:
            raise BackupError(f"{f.name} of the backup {str(backup.path)!r} does not match its "
                              "SHA-256 in the manifest: the backup is damaged")
    lsn = _checked_lsn(staging / DB_FILE, backup.path)
    if lsn != backup.lsn:
        raise BackupError(f"the database of the backup {str(backup.path)!r} is at LSN {lsn}, "
                          f"its manifest says {backup.lsn}: the backup is damaged")


def _checked_lsn(database: Path, shown: Path) -> int:
    """SQLite's integrity check over ``database``, that it is a rivulet database, and the
    LSN it is at."""
    what = f"the database of the backup {str(shown)!r}"
    conn = sqlite3.connect(database, isolation_level=None)
    try:
        problems = [row[0] for row in conn.execute("PRAGMA integrity_check(5)")]
        if problems != ["ok"]:
            raise BackupError(f"{what} fails SQLite's integrity check: {'; '.join(problems)}")
        tables = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in RIVULET_TABLES if t not in tables]
        if missing:
            raise BackupError(f"{what} is no rivulet database (no {', '.join(missing)})")
        lsn: int = conn.execute("SELECT COALESCE(MAX(lsn), 0) FROM _rivulet_log").fetchone()[0]
        return lsn
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{what} is damaged ({exc})") from None
    finally:
        conn.close()


# --------------------------------------------------------------------------- restore


def restore_backup(backup_dir: str | Path, data_dir: str | Path, *,
                   force: bool = False) -> Backup:
    """Install the backup at ``backup_dir`` as the data directory ``data_dir``, checked
    first (see the module doc). ``data_dir`` may not exist, or be empty; with ``force``,
    what it holds is replaced.

    Raises :class:`BackupError` (a bad backup, a directory holding data without ``force``)
    or :class:`~rivulet.errors.DataDirectoryInUseError` (a running process holds
    ``data_dir``), with ``data_dir`` left as it was."""
    backup = read_backup(backup_dir)
    target = Path(data_dir)
    if target.exists() and not target.is_dir():
        raise BackupError(f"{str(target)!r} exists and is not a directory")
    held_at = backup.path.resolve()
    if target.resolve() == held_at or target.resolve() in held_at.parents:
        raise BackupError(f"the backup {str(backup.path)!r} cannot be restored into a "
                          "directory that holds it")
    created = not target.exists()
    had_lock_file = (target / LOCK_FILE).exists()
    lock = DataDirectoryLock(target)  # a directory a running process holds: refused here
    try:
        present = sorted(p.name for p in target.iterdir() if p.name != LOCK_FILE)
        if present and not force:
            shown = ", ".join(present[:5]) + (", ..." if len(present) > 5 else "")
            raise BackupError(f"{str(target)!r} holds data ({shown}): restore into a new or "
                              "empty directory, or replace what it holds with --force "
                              "(force=True)")
        staging: Path | None = None
        try:
            staging = Path(tempfile.mkdtemp(prefix=RESTORING, dir=target))
            _stage_checked(backup, staging)
            _install(staging, target, present, _top_level(backup))
        except OSError as exc:
            raise BackupError(f"cannot restore {str(backup.path)!r} into {str(target)!r}: "
                              f"{exc}") from None
        finally:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        lock.release()
        if created:
            shutil.rmtree(target, ignore_errors=True)
        elif not had_lock_file:
            (target / LOCK_FILE).unlink(missing_ok=True)
        raise
    lock.release()
    return backup


def _top_level(backup: Backup) -> list[str]:
    """The backup's entries at the top of the directory, the database last (so that a
    restore cut short leaves no database beside files of another one)."""
    names = dict.fromkeys(PurePosixPath(f.name).parts[0] for f in backup.files)
    return sorted(names, key=lambda n: n == DB_FILE)


def _install(staging: Path, target: Path, present: list[str], entries: list[str]) -> None:
    """Move what ``target`` holds (``present``) aside, the old database first (an old WAL
    must never meet the new database), then the checked copy in; undone on a failure."""
    aside = Path(tempfile.mkdtemp(prefix=REPLACED, dir=target)) if present else None
    moved_out: list[str] = []
    moved_in: list[str] = []
    try:
        for name in sorted(present, key=lambda n: n != DB_FILE):
            assert aside is not None
            os.rename(target / name, aside / name)
            moved_out.append(name)
        for name in entries:
            os.rename(staging / name, target / name)
            moved_in.append(name)
        _fsync(target)
    except BaseException:
        for name in reversed(moved_in):
            _remove(target / name)
        for name in reversed(moved_out):
            assert aside is not None
            os.rename(aside / name, target / name)
        if aside is not None:
            aside.rmdir()
        raise
    if aside is not None:
        shutil.rmtree(aside)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
