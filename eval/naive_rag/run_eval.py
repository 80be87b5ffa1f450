"""The contract entry point.

    python -m eval.naive_rag.run_eval --config configs/eval/rag_quality_v1.yaml [--run-id ID]
"""

from ragassay.cli import run_eval_main
from ragassay.collector import run_then_exit

if __name__ == "__main__":
    run_then_exit(run_eval_main)
