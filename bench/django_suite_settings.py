"""The settings module ``bench.django_suite`` runs Django's ``tests/runtests.py`` with: Django's
MySQL backend (``django.db.backends.mysql``) at a server on loopback, its port named by the
environment, with :class:`bench.django_suite_runner.JSONLinesRunner` writing the results.

The rest is Django's own ``tests/test_sqlite.py``: a ``default`` and an ``other`` database (the
multi-database tests want the second; runtests.py sets up only those the tests it runs use),
MD5 password hashing (fast), ``AutoField`` keys, ``USE_TZ = False``. The test databases
(``test_rivulet_<suffix>``, ``test_other_<suffix>``: each run of ``runtests.py`` names its
own, so that a test database one run failed to drop does not stop the next run making its own)
take the server's default character set and collation (no ``TEST`` charset): for MariaDB the
oracle's, rivulet's contract (``bench/mysql_oracle.py``).

The driver is mysqlclient (``MySQLdb``), the one Django's MySQL backend is written for; where it
is not installed, PyMySQL stands in (``pymysql.install_as_MySQLdb()``) and
:data:`DRIVER` says so. Each connection runs the environment's ``init_command`` (for rivulet:
``SET rivulet_read_your_writes = 1``, so that a connection reads its own commits as on MySQL)
and gives up on a reply after ``read_timeout`` seconds, so that a test waiting on a lock
forever fails instead of using up the run's time.
"""

from __future__ import annotations

import importlib.util
import os

#: The environment: the server's port (MySQL's 3306 where unset: the module is imported by
#: ``bench.django_suite`` too, for these names), the connections' init_command (may be empty),
#: the suffix of the test databases' names (may be empty).
PORT_ENV = "RIVULET_DJANGO_PORT"
INIT_COMMAND_ENV = "RIVULET_DJANGO_INIT_COMMAND"
TEST_SUFFIX_ENV = "RIVULET_DJANGO_TEST_SUFFIX"
#: Seconds a connection waits for a reply before its query fails.
READ_TIMEOUT_S = 60

#: The driver Django's backend gets (mysqlclient where it is installed).
DRIVER = ("mysqlclient" if importlib.util.find_spec("MySQLdb") is not None
          else "pymysql (install_as_MySQLdb)")
if DRIVER != "mysqlclient" and os.environ.get("DJANGO_SETTINGS_MODULE") == __name__:
    # Only in the process Django runs with these settings: bench.django_suite imports this
    # module for its names, in processes (pytest's) where MySQLdb must stay what it is.
    import pymysql

    pymysql.install_as_MySQLdb()


def _database(name: str) -> dict[str, object]:
    options: dict[str, object] = {"read_timeout": READ_TIMEOUT_S}
    if os.environ.get(INIT_COMMAND_ENV):
        options["init_command"] = os.environ[INIT_COMMAND_ENV]
    suffix = os.environ.get(TEST_SUFFIX_ENV)
    return {"ENGINE": "django.db.backends.mysql", "NAME": name, "USER": "root", "PASSWORD": "",
            "HOST": "127.0.0.1", "PORT": os.environ.get(PORT_ENV, "3306"), "OPTIONS": options,
            "TEST": {"NAME": f"test_{name}_{suffix}" if suffix else f"test_{name}"}}


DATABASES = {"default": _database("rivulet"), "other": _database("other")}
TEST_RUNNER = "bench.django_suite_runner.JSONLinesRunner"
SECRET_KEY = "django_tests_secret_key"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = False
