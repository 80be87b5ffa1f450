#!/usr/bin/env bash
# Set up on first use, then lint, type-check and run the whole test suite (fast core +
# differential).
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_env.sh test  # with the model of the real-server tests
export RAGASSAY_REQUIRE_LOCAL_LLM=1  # installed by _env.sh: those tests must run, not skip
ruff check .
mypy
python -m pytest "$@"
