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

# JDBC drivers for the import tests (a SQLite file and a private MariaDB as sources).
JARS=()
[ -f /usr/share/java/xerial-sqlite-jdbc.jar ] || JARS+=(libxerial-sqlite-jdbc-java)
[ -f /usr/share/java/mariadb-java-client.jar ] || JARS+=(libmariadb-java)
if [ ${#JARS[@]} -gt 0 ]; then
    echo "==> JDBC drivers not found: installing ${JARS[*]}"
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${JARS[@]}"
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
