"""Output helpers of the commands: a JSON document, tables (TTY or Markdown), the gate verdict."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

from . import consoles


def print_json(value: Any) -> None:
    """One JSON document on stdout (the form of the JSON files ragassay writes)."""
    from ..jsonio import json_text

    sys.stdout.write(json_text(value))
    sys.stdout.flush()


def show_table(title: str, header: Sequence[str], rows: Iterable[Sequence[object]], *,
           left: Iterable[str] = ()) -> None:
    from ..report.safe import print_table

    print_table(consoles.out, title, header, rows, left=left)


def gate_doc(result: Any) -> dict[str, Any]:
    """The gate's verdict as JSON: bars, regressions, fixes, not measured, passed."""
    from ..gate import format_result

    def flips(items: Iterable[Any]) -> list[dict[str, Any]]:
        return [{"question_id": f.question_id, "checks": list(f.checks),
                 "question": f.question} for f in items]

    return {
        "run_id": result.run_id,
        "passed": bool(result.passed),
        "bars": [{"bar": str(r.bar), "metric": r.bar.metric, "op": r.bar.op,
                  "threshold": r.bar.threshold, "value": r.value, "passed": r.passed,
                  "reason": r.reason, "baseline_value": r.baseline_value, "delta": r.delta}
                 for r in result.bars],
        "regressions": flips(result.regressions),
        "fixes": flips(result.fixes),
        "not_measured": list(result.not_measured),
        "allow_missing": result.options.allow_missing,
        "baseline_id": result.baseline_id,
        "fail_on_regression": result.fail_on_regression,
        "only_in_run": list(result.only_in_run),
        "only_in_baseline": list(result.only_in_baseline),
        "junit_questions": result.options.junit_questions,
        "failing_questions": result.failing_questions,
        "summary": format_result(result)[-1],
    }
