"""Predictions of any RAG system (DESIGN.md §3), read and checked against questions and chunks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .schema import InputError, Prediction, Question, line_of, read_jsonl
from .store import Index


def load_predictions(path: str | Path, questions: Sequence[Question],
                     index: Index) -> dict[str, Prediction]:
    """Read a predictions JSONL; every id it names must exist (file:line:field errors).

    A question without a prediction is not an error here: the run reports it as not measured.
    """
    known = {q.question_id for q in questions}
    preds = read_jsonl(path, Prediction, key="question_id")
    for pred in preds:
        line = line_of(pred)
        if pred.question_id not in known:
            raise InputError(path, f"prediction for unknown question {pred.question_id!r}",
                             line=line, field="question_id")
        for i, hit in enumerate(pred.retrieved):
            if not index.has(hit.chunk_id):
                raise InputError(path, f"unknown chunk {hit.chunk_id!r}", line=line,
                                 field=f"retrieved.{i}.chunk_id")
        for i, cit in enumerate(pred.answer.citations):
            if not index.has(cit.chunk_id):
                raise InputError(path, f"citation of unknown chunk {cit.chunk_id!r}", line=line,
                                 field=f"answer.citations.{i}.chunk_id")
    return {p.question_id: p for p in preds}


def context_of(pred: Prediction, k: int, threshold: float | None = None) -> list[str]:
    """The chunk ids the answerer saw: the first k distinct retrieved ids, at or above the
    threshold when one is given (a hit without a score is kept only without a threshold)."""
    out: list[str] = []
    for hit in pred.retrieved:
        if hit.chunk_id in out:
            continue
        if threshold is not None and (hit.score is None or hit.score < threshold):
            continue
        out.append(hit.chunk_id)
        if len(out) == k:
            break
    return out
