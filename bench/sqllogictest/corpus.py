"""Where the sqllogictest scripts are read from, and which of them a run takes.

The scripts are SQLite's sqllogictest corpus as mirrored in the public repository
``gregrahn/sqllogictest`` (commit :data:`COMMIT`; the scripts are in the public domain, the
C runner beside them is GPLv2 and is not used). The corpus is about 1 GB, so it is not kept
in this repository: a run reads it from the first of

1. the directory or git directory named by ``RIVULET_SQLLOGICTEST``;
2. ``sqllogictest/`` in the ``shared/`` folder beside the checkout, laid out as the
   upstream ``test/`` folder (``python -m bench.sqllogictest --export DIR`` writes the
   selected scripts in that layout);
3. a git copy of the upstream repository at :data:`MIRROR` (read with ``git show``).

Paths name scripts relative to the upstream ``test/`` folder (``select1.test``,
``random/expr/slt_good_0.test``, ...).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = "gregrahn/sqllogictest"
COMMIT = "d8d4f4b9a351102ec63196a920e8052f4f025509"
LICENCE = "public domain (the test scripts); the C runner beside them is GPLv2 and unused"
REPO_DIR = Path(__file__).resolve().parents[2]
SHARED = REPO_DIR.parent / "shared" / "sqllogictest"
MIRROR = Path("/work/.mirror/gregrahn+sqllogictest/repo")
ENVIRONMENT_VARIABLE = "RIVULET_SQLLOGICTEST"

#: The scripts a default run takes, each with the number of its records the test suite
#: runs (the first ones: a script builds its tables first), so that the suite's run takes a
#: few minutes; ``python -m bench.sqllogictest`` runs them whole. They are the hand-shaped
#: select1-5, the first script of each random/ family, one script of each index/ family
#: (10-row tables, or 1 or 100 where the 10-row one is missing from the copy), and the
#: language-evidence scripts whose statements both SQLite and MySQL accept.
QUICK: dict[str, int | None] = {
    "select1.test": None, "select2.test": None, "select3.test": 1200,
    "select4.test": 1200, "select5.test": 600,
    "random/aggregates/slt_good_0.test": 1500, "random/expr/slt_good_0.test": 1500,
    "random/groupby/slt_good_0.test": 1500, "random/select/slt_good_0.test": 1500,
    "index/between/1/slt_good_0.test": 600, "index/commute/10/slt_good_0.test": 600,
    "index/delete/10/slt_good_0.test": 600, "index/in/10/slt_good_3.test": 600,
    "index/orderby/10/slt_good_0.test": 600, "index/orderby_nosort/10/slt_good_0.test": 600,
    "index/random/10/slt_good_0.test": 600, "index/view/100/slt_good_0.test": 600,
    "evidence/in1.test": None, "evidence/in2.test": None,
    "evidence/slt_lang_aggfunc.test": None, "evidence/slt_lang_createview.test": None,
    "evidence/slt_lang_dropindex.test": None, "evidence/slt_lang_droptable.test": None,
    "evidence/slt_lang_dropview.test": None, "evidence/slt_lang_update.test": None,
}

#: More, for ``--long`` (whole): ten scripts of each random/ family and the index/ families
#: on larger tables.
LONG: tuple[str, ...] = tuple(QUICK) + tuple(
    f"random/{family}/slt_good_{n}.test"
    for family in ("aggregates", "expr", "groupby", "select") for n in range(1, 10)
) + (
    "index/between/1000/slt_good_0.test", "index/commute/100/slt_good_0.test",
    "index/commute/1000/slt_good_0.test", "index/delete/100/slt_good_0.test",
    "index/delete/1000/slt_good_0.test", "index/orderby/100/slt_good_0.test",
    "index/orderby/1000/slt_good_0.test", "index/orderby_nosort/100/slt_good_0.test",
    "index/random/100/slt_good_0.test", "index/random/1000/slt_good_0.test",
    "index/view/1000/slt_good_0.test",
)


@dataclass(frozen=True)
class Corpus:
    """A copy of the upstream ``test/`` folder: a directory, or a git directory."""

    where: Path
    is_git: bool

    def read(self, path: str) -> str | None:
        """The text of script ``path``, or None where this copy lacks it."""
        if not self.is_git:
            file = self.where / path
            return file.read_text(encoding="utf-8") if file.is_file() else None
        done = subprocess.run(
            ["git", "--git-dir", str(self.where), "show", f"{COMMIT}:test/{path}"],
            capture_output=True, timeout=120)
        return done.stdout.decode("utf-8") if done.returncode == 0 else None

    def describe(self) -> str:
        return f"{self.where} ({'git, commit ' + COMMIT[:12] if self.is_git else 'directory'})"


def _as_corpus(where: Path) -> Corpus | None:
    if (where / "select1.test").is_file():
        return Corpus(where, is_git=False)
    if (where / "test" / "select1.test").is_file():
        return Corpus(where / "test", is_git=False)
    if (where / "HEAD").is_file() and (where / "objects").is_dir():
        found = subprocess.run(["git", "--git-dir", str(where), "cat-file", "-e",
                                f"{COMMIT}:test/select1.test"], capture_output=True)
        return Corpus(where, is_git=True) if found.returncode == 0 else None
    return None


def find_corpus() -> Corpus | None:
    """The first copy of the corpus found (see the module's docstring), or None."""
    named = os.environ.get(ENVIRONMENT_VARIABLE)
    for where in ([Path(named)] if named else []) + [SHARED, MIRROR]:
        if where.exists() and (corpus := _as_corpus(where)) is not None:
            return corpus
    return None
