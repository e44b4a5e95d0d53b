#!/usr/bin/env bash
# Set up the environment (scripts/setup.sh: Java, JDBC drivers, .venv) and run the main
# job: `rivulet serve` (the database in ./data, with the news example and sample data on
# first start, served over the MySQL protocol on 127.0.0.1:3307 and HTTP on :8080 until
# Ctrl-C). Extra arguments go to `rivulet serve`; `rivulet demo` is still a command.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
source scripts/setup.sh

echo "==> .venv/bin/python -m rivulet serve $*"
exec .venv/bin/python -m rivulet serve "$@"
