"""Shared pytest configuration: Hypothesis profiles, and the TLS test certificate.

Profiles: "ci" (used when the CI environment variable is set), "dev" (the default),
"long" (selected with ``pytest --long``). HYPOTHESIS_PROFILE=<name> picks one explicitly
when CI is not set.
"""

import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import settings

# For Spark tests run without ./test.sh: workers use this interpreter (which has pandas and
# pyarrow) rather than whatever python3 is on PATH, and Spark binds to loopback only.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

#: The Django project of tests/test_django_project.py runs in a process of its own, which
#: configures Django for its app; imported here (--doctest-modules), its models could not be.
collect_ignore_glob = ["django_project/*"]

settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True, print_blob=True
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile("long", max_examples=2000, deadline=None)


def _default_profile() -> str:
    if os.environ.get("CI"):
        return "ci"
    return os.environ.get("HYPOTHESIS_PROFILE") or "dev"


settings.load_profile(_default_profile())


def pytest_addoption(parser):
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help='run Hypothesis tests with the "long" profile (max_examples=2000)',
    )


def pytest_collection_modifyitems(config, items):
    """Tests on the standalone Spark cluster (``cluster_spark``, tests/spark_fixtures.py)
    run last: a process has one SparkContext, and switching to the cluster's ends the local
    session the other Spark tests share."""
    items.sort(key=lambda item: "cluster_spark" in getattr(item, "fixturenames", ()))


def pytest_configure(config):
    if config.getoption("--long"):
        settings.load_profile("long")


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return str(cert), str(key)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(db):
    """rivulet's MySQL server over the test module's ``db`` fixture, on a port the OS
    chooses, stopped after the test.

    The tests of the MySQL protocol (sessions, locks, transactions, access, foreign keys
    over the wire) each open a database of their own and serve it the same way; a module
    that serves it otherwise (another packet limit, a set-up first) defines its own
    ``server``, which pytest prefers to this one."""
    from rivulet.server.mysql.server import ServerThread

    running = ServerThread(db, port=0)
    yield running
    running.stop()


@pytest.fixture(scope="session")
def mariadb_oracle(tmp_path_factory: pytest.TempPathFactory):
    """The session's private MariaDB (tests/mysql_oracle.py), started on first use."""
    from mysql_oracle import MariaDBOracle, start_oracle

    server = start_oracle(tmp_path_factory.mktemp("mariadb-oracle"), _free_port())
    oracle = MariaDBOracle(server)
    try:
        yield oracle
    finally:
        oracle.close()
        server.stop()


@pytest.fixture
def mysql_pair(mariadb_oracle):
    """A rivulet database and a fresh MariaDB schema side by side (tests/mysql_oracle.py)."""
    from mysql_oracle import MySQLPair

    with MySQLPair(mariadb_oracle) as pair:
        yield pair
