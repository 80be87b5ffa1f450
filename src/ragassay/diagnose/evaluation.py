"""Detectors of the evaluation_failure labels."""

from __future__ import annotations

from typing import Any

from ..config import DiagnoseConfig
from .case import Case

# --- evaluation ----------------------------------------------------------------------


def no_gold_evidence(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """An answerable question without usable gold: none given, or a stale label not re-anchored."""
    if not case.question.answerable or case.gold.usable:
        return None
    if not case.gold.has_record:
        return {"reason": "no gold record for this question"}
    if not case.gold.evidence:
        return {"reason": "gold_evidence is empty"}
    return {"reason": "gold label could not be anchored in the index",
            "labels": [ev.report(case.question.question_id) for ev in case.gold.evidence
                       if not ev.chunk_ids or ev.status == "unanchored"]}


def metric_missing(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A metric the config asks for could not be measured because of the system's output
    (e.g. a supported answer that cites nothing has no citation accuracy), with the reason.
    Fields the data set does not have (no ``expected_terms``) are not failures: the run
    reports them once as not applicable."""
    return {"missing": dict(case.missing)} if case.missing else None
