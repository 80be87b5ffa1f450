"""The contract entry point.

    python -m eval.naive_rag.run_eval --config configs/eval/rag_quality_v1.yaml [--run-id ID]
"""

from ragassay.cli import run_eval_main

if __name__ == "__main__":
    run_eval_main()
