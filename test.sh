#!/usr/bin/env bash
# Set up the environment (virtualenv with the dev and spark extras, Java) and run the test
# suite with pytest. Extra arguments go to pytest. Pytest's exit code is kept as is: 5 (no
# tests collected) is a failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

EXTRAS="dev,spark"
VENV=".venv"
STAMP="$VENV/.installed-${EXTRAS//,/-}"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v java >/dev/null 2>&1; then
    echo "==> java not found: installing openjdk-17-jre-headless"
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y openjdk-17-jre-headless
fi

# The JDBC import tests read a SQLite file through Spark with the xerial JDBC driver.
if [ ! -f /usr/share/java/xerial-sqlite-jdbc.jar ]; then
    echo "==> SQLite JDBC driver not found: installing libxerial-sqlite-jdbc-java"
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y libxerial-sqlite-jdbc-java
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

echo "==> $VENV/bin/python -m pytest $*"
exec "$VENV/bin/python" -m pytest "$@"
