"""Django's own MySQL backend against a rivulet server, over the wire, with PyMySQL as its
driver (``pymysql.install_as_MySQLdb()``): :func:`configure` once per process (Django's
settings are global), then :func:`point_at` a running server.

Django's MySQL backend is used as shipped, with one exception, outside transactions: the
driver. Django's backend imports ``MySQLdb`` (mysqlclient, a C extension). PyMySQL stands
in for it (``install_as_MySQLdb``) while the backend is imported, and only then:
``MySQLdb`` is mysqlclient again afterwards for the rest of the test process (where
mysqlclient is installed: tests/test_lobsters.py runs over it). Django checks the driver's
version only (mysqlclient 1.4.3 or newer): PyMySQL 1.2 says it is 2.2.8. Its first query
on each connection (``mysql_server_data``: ``SELECT VERSION(), @@sql_mode, ...,
CONVERT_TZ('2001-01-01 01:00:00', 'UTC', 'UTC') IS NOT NULL``) is answered as MySQL without
time zone tables answers it: no time zone support (tests/test_select_without_from.py).

Connections read their own commits (``SET rivulet_read_your_writes = 1``, the connection's
``init_command``), as an application on MySQL expects; a read of another connection's
commit wants ``Database.settle()`` first.
"""

from __future__ import annotations

import sys
from typing import Any

#: The Django app of the tests' models (``class Meta: app_label = APP``).
APP = "rivulet_tests"


def configure() -> None:
    """Django's settings and app registry, with the MySQL backend over PyMySQL (the first
    call; later ones do nothing). No connection is made until a query runs."""
    import django
    from django.conf import settings

    if settings.configured:
        return
    _import_backend_over_pymysql()
    settings.configure(
        DATABASES={"default": {
            "ENGINE": "django.db.backends.mysql", "NAME": "rivulet", "USER": "root",
            "PASSWORD": "", "HOST": "127.0.0.1", "PORT": "3306",
            "OPTIONS": {"init_command": "SET rivulet_read_your_writes = 1"},
        }},
        INSTALLED_APPS=[],
        USE_TZ=True,
        TIME_ZONE="UTC",
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    )
    django.setup()


def _import_backend_over_pymysql() -> None:
    import pymysql

    def ours(name: str) -> bool:
        return name == "MySQLdb" or name.startswith("MySQLdb.")

    saved = {name: sys.modules.pop(name) for name in list(sys.modules) if ours(name)}
    # Importing MySQLdb.err and the like (PyMySQL's files again, under the other name) sets
    # them as attributes of the package they alias, PyMySQL's: pymysql.err would then be a
    # second copy whose exception classes no PyMySQL connection raises.
    submodules = {k: v for k, v in vars(pymysql).items() if isinstance(v, type(sys))}
    pymysql.install_as_MySQLdb()
    try:
        import django.db.backends.mysql.base  # noqa: F401  (it keeps its MySQLdb: PyMySQL)
    finally:
        for name in [name for name in sys.modules if ours(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
        vars(pymysql).update(submodules)


def point_at(port: int) -> None:
    """Django's connections, in every thread, now go to the server on ``port``."""
    from django.db import connections

    connections.close_all()
    connections.settings["default"]["PORT"] = str(port)


def create_models(*models: Any) -> None:
    """Each model's table, made by Django's schema editor (its own DDL)."""
    from django.db import connection

    with connection.schema_editor() as editor:
        for model in models:
            editor.create_model(model)
