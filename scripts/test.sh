#!/usr/bin/env bash
# Set up on first use, then lint, type-check and run the whole test suite (fast core +
# differential).
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_env.sh test
ruff check .
mypy
python -m pytest "$@"
