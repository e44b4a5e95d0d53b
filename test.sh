#!/usr/bin/env bash
# Set up the environment (scripts/setup.sh: Java, JDBC drivers, .venv) and run the test
# suite with pytest, the code gates (import-linter, ruff, mypy) included. Extra arguments
# go to pytest. Pytest's exit code is kept as is: 5 (no tests collected) is a failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/setup.sh

echo "==> .venv/bin/python -m pytest $*"
exec .venv/bin/python -m pytest "$@"
