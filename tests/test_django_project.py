"""A Django project over the wire, on rivulet and on MariaDB: ``migrate`` for auth,
contenttypes, sessions, admin and an app with a ForeignKey (CASCADE, and SET NULL to
itself), a ManyToManyField, ``unique_together`` and an index; then the ORM across
relations (filters, ``exclude`` with ``Q``, ``F`` updates, ``annotate`` / ``aggregate``,
``select_related`` / ``prefetch_related``, ``get_or_create`` / ``update_or_create``,
``bulk_create``, cascading deletes, many-to-many ``add``, nested ``atomic``; a
JSONField's ``contains``, ``contained_by``, ``has_key(s)``, ``has_any_keys``, key and
index transforms with ``exact``, ``isnull``, ``in``, ``gt``, ``icontains``, ``KT()``,
which Django sends rivulet in MySQL 8's forms, ``->>`` included). Every answer
rivulet gives is MariaDB's; what rivulet refuses (1235) is named here, so that the day it
computes it the test says so.

The project (tests/django_project/) runs in a process of its own per server: Django's
settings are global, and the other Django tests configure another app.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import rivulet
from rivulet.server.mysql.server import ServerThread

RUN = Path(__file__).resolve().parent / "django_project" / "run.py"

#: What rivulet refuses of the project's queries, and the construct each refusal names
#: (the SQL-coverage issue's subqueries): a ``Subquery()`` annotation whose ``[:1]`` takes
#: the first row in an order that may tie (MySQL's pick among tied rows is its own). (An
#: ``Exists()`` filter runs as a semi-join: rivulet/plan/subqueries.py; the other
#: ``Subquery()`` annotations as joins: rivulet/plan/scalars.py.)
REFUSED = {"subquery": "scalar subquery that may return more than one row"}


def answers(port: int, database: str, user: str, *extra: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(RUN), str(port), database, user, *extra],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


def test_django_project_answers_as_on_mariadb(mariadb_oracle: Any, tmp_path: Path) -> None:
    conn = mariadb_oracle.schema()
    try:
        theirs = answers(conn.port, conn.db.decode(), conn.user.decode())
    finally:
        conn.close()
    with rivulet.open(tmp_path / "db") as db:
        server = ServerThread(db, port=0)
        try:
            ours = answers(server.port, "rivulet", "root", "rivulet")
        finally:
            server.stop()
    assert set(ours) == set(theirs)
    refused = {name: answer["refused"] for name, answer in ours.items()
               if isinstance(answer, dict) and "refused" in answer}
    assert set(refused) == set(REFUSED), refused
    for name, construct in REFUSED.items():
        assert construct in refused[name]
    assert {k: v for k, v in ours.items() if k not in REFUSED} == {
        k: v for k, v in theirs.items() if k not in REFUSED}
    assert theirs["unique_together"] == "IntegrityError"
    assert theirs["after_cascade"] == [["ann", "again"]]  # (the scenario did run)
