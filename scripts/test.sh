#!/usr/bin/env bash
# Set up on first use, then lint, type-check and run the whole test suite (fast core +
# differential), in parallel on every core (pytest-xdist; a test file stays on one worker),
# then the tests marked serial in one process.
#   ./scripts/test.sh --fast   the quick subset: no test marked heavy (the browser and llm
#                              tiers, servers, worker processes, many CLI runs), no serial ones
#   ./scripts/test.sh tests/unit   one tier (tests/unit, integration, differential, browser, llm)
# Other arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_env.sh test  # with the model of the real-server tests
export RAGASSAY_REQUIRE_LOCAL_LLM=1  # installed by _env.sh: those tests must run, not skip
ruff check .
mypy
python scripts/check_imports.py  # no import cycle, no private name used across modules
fast=0
args=()
for a in "$@"; do
  if [ "$a" = "--fast" ]; then fast=1; else args+=("$a"); fi
done
status=0
if [ "$fast" = 1 ]; then
  python -m pytest -n auto --dist loadfile -m "not heavy and not serial" ${args[@]+"${args[@]}"} || status=$?
else
  python -m pytest -n auto --dist loadfile -m "not serial" ${args[@]+"${args[@]}"} || status=$?
  serial=0
  python -m pytest -m serial ${args[@]+"${args[@]}"} || serial=$?
  [ "$serial" = 5 ] || [ "$serial" = 0 ] || status=$serial  # 5: no serial test selected
fi
exit "$status"
