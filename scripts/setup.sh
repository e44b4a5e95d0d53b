#!/usr/bin/env bash
# The one environment of ./run.sh and ./test.sh, sourced by both: Java (Spark's JVM), the
# JDBC drivers of the import tests, MariaDB (the tests' MySQL oracle), memcached (a
# benchmark's baseline), and .venv with
# rivulet (editable) and every extra. One stamp for both commands, so running one never
# makes the other reinstall; it is redone only when pyproject.toml changes.
set -euo pipefail

EXTRAS="dev,spark,bench"
VENV=".venv"
STAMP="$VENV/.installed"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

PACKAGES=()
command -v java >/dev/null 2>&1 || PACKAGES+=(openjdk-17-jre-headless)
# JDBC drivers for the import tests (a SQLite file and a private MariaDB as sources).
[ -f /usr/share/java/xerial-sqlite-jdbc.jar ] || PACKAGES+=(libxerial-sqlite-jdbc-java)
[ -f /usr/share/java/mariadb-java-client.jar ] || PACKAGES+=(libmariadb-java)
# The MySQL oracle of the tests (tests/mysql_oracle.py) and the benchmarks' baseline.
command -v mariadbd >/dev/null 2>&1 || PACKAGES+=(mariadb-server)
# The cache in front of MariaDB that bench.vote_wire compares with (bench/memcached.py).
command -v memcached >/dev/null 2>&1 || PACKAGES+=(memcached)
if [ ${#PACKAGES[@]} -gt 0 ]; then
    echo "==> installing ${PACKAGES[*]}"
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "${PACKAGES[@]}"
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating virtualenv $VENV"
    python3 -m venv "$VENV"
fi

if [ -f "$STAMP" ] && [ "$STAMP" -nt pyproject.toml ]; then
    echo "==> rivulet[$EXTRAS] already installed in $VENV"
else
    echo "==> installing rivulet[$EXTRAS] (editable) into $VENV"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q -e ".[$EXTRAS]"
    touch "$STAMP"
fi

# Spark workers run the venv's Python (it has pandas/pyarrow); Spark binds to loopback only.
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$PWD/$VENV/bin/python}"
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
