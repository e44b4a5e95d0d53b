#!/usr/bin/env bash
# Set up the environment (virtualenv with the spark and bench extras, Java) and run the
# main job: `rivulet serve` (the database in ./data, with the news example and sample data
# on first start, served over the MySQL protocol on 127.0.0.1:3307 and HTTP on :8080 until
# Ctrl-C). Extra arguments go to `rivulet serve`; `rivulet demo` is still a command.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

EXTRAS="spark,bench"
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

echo "==> $VENV/bin/python -m rivulet serve $*"
exec "$VENV/bin/python" -m rivulet serve "$@"
