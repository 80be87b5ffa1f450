#!/usr/bin/env bash
# Set up on first use, then run the naive baseline evaluation end to end on the shipped fixture:
# rebuild the index if it is missing or stale, run the contract command, print the summary.
# Extra arguments go to the contract command (e.g. --run-id demo --force).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_env.sh ""
ragassay index --source data/raw --out data/index --if-stale
python -m eval.naive_rag.run_eval --config configs/eval/rag_quality_v1.yaml "$@"
