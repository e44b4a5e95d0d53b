"""rivulet's own code as a zip that Spark ships to every executor.

Why: the functions rivulet runs on executors (expression UDFs, keyed state processors,
import checks) are pickled by reference to their modules, so each Python worker imports
rivulet. On ``local[N]`` it finds it where the driver does; on a cluster, a worker has
only what Spark gives it, and installing rivulet by hand on every machine at the same
path (and the same version as the driver) is exactly what a deployment gets wrong. So for
a cluster master the session adds this zip with ``SparkContext.addPyFile``
(rivulet/spark/session.py): Spark copies it to each executor and puts it on the Python
workers' ``sys.path`` ahead of site-packages, so the executors run the driver's rivulet,
byte for byte. Third-party packages (pyarrow, pandas, sqlglot, ...) are not in it: the
workers' interpreter (``PYSPARK_PYTHON``) must have them, as docs/spark.md says.

The zip holds the package's source files as they are on disk (no ``__pycache__``) and is
named by a hash of their paths and contents, in a cache directory: a process builds it
once per version of the code, and two processes running the same code share one file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

#: The rivulet package directory (this module is rivulet/spark/shipping.py).
PACKAGE_DIR = Path(__file__).resolve().parents[1]

#: Files of the package that go into the zip (its modules and its package data).
SHIPPED_SUFFIXES = (".py", ".sql")
#: Where the zips are cached unless ``RIVULET_CODE_CACHE`` names another directory.
CACHE_ENV = "RIVULET_CODE_CACHE"


def package_files(root: Path) -> list[Path]:
    """The package's files to ship, sorted (so the hash does not depend on listing order)."""
    return sorted(p for p in root.rglob("*")
                  if p.is_file() and p.suffix in SHIPPED_SUFFIXES
                  and "__pycache__" not in p.parts)


def code_zip(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The zip of the running rivulet package (built if this version is not cached yet)."""
    root = PACKAGE_DIR
    files = package_files(root)
    digest = hashlib.sha256()
    for path in files:
        data = path.read_bytes()
        digest.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    cache = Path(cache_dir or os.environ.get(CACHE_ENV)
                 or Path(tempfile.gettempdir()) / f"rivulet-code-{os.getuid()}")
    target = cache / f"rivulet-{digest.hexdigest()[:16]}.zip"
    if target.is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    fd, staging = tempfile.mkstemp(prefix=".rivulet-", suffix=".zip", dir=cache)
    try:
        with os.fdopen(fd, "wb") as out, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for path in files:
                # a fixed timestamp: the same code gives the same bytes
                info = zipfile.ZipInfo(f"rivulet/{path.relative_to(root).as_posix()}",
                                       date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, path.read_bytes())
        os.replace(staging, target)  # another process may have built the same: same bytes
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    return target


__all__ = ["CACHE_ENV", "PACKAGE_DIR", "SHIPPED_SUFFIXES", "code_zip", "package_files"]
