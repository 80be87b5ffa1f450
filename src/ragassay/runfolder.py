"""Reading a run folder back: `metrics.json` and the per-question JSONL files, checked."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .schema import InputError, iter_jsonl

GROUPS = ("retrieval", "answer")


def _need_file(path: Path) -> Path:
    if not path.is_file():
        raise InputError(path, "file not found: is this a run folder? (expected metrics.json, "
                         "answers.jsonl, retrieved_chunks.jsonl, failure_cases.jsonl)")
    return path


def _real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def read_metrics(run_dir: Path) -> dict[str, Any]:
    """Read and check ``metrics.json`` of a run folder (the groups the gate reads)."""
    path = _need_file(Path(run_dir) / "metrics.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON ({exc.msg}, column {exc.colno})",
                         line=exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError(path, "expected a JSON object")
    for group in GROUPS:
        entries = data.get(group)
        if not isinstance(entries, dict):
            raise InputError(path, f"expected a mapping of metric aggregates under {group!r}",
                             field=group)
        for name, agg in entries.items():
            where = f"{group}.{name}"
            if not isinstance(agg, dict) or "mean" not in agg:
                raise InputError(path, "expected {mean, n, missing, ...}", field=where)
            mean = agg["mean"]
            if mean is not None and not (_real(mean) and math.isfinite(mean)):
                raise InputError(path, f"mean must be a finite number or null, got {mean!r}",
                                 field=f"{where}.mean")
    return data


def read_rows(path: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    """question_id → (line, row) of a run JSONL file; a duplicate or missing id is an error."""
    rows: dict[str, tuple[int, dict[str, Any]]] = {}
    for line, row in iter_jsonl(_need_file(path)):
        if not isinstance(row, dict):
            raise InputError(path, "expected a JSON object", line=line)
        qid = row.get("question_id")
        if not isinstance(qid, str) or not qid:
            raise InputError(path, "missing question_id", line=line, field="question_id")
        if qid in rows:
            raise InputError(path, f"duplicate question_id {qid!r} (first on line "
                             f"{rows[qid][0]})", line=line, field="question_id")
        rows[qid] = (line, row)
    return rows
