"""Detectors of the evaluation_failure labels."""

from __future__ import annotations

from typing import Any

from ..config import DiagnoseConfig
from .case import Case
from .registry import detects, unobservable

# --- evaluation ----------------------------------------------------------------------


@detects("evaluation_failure")
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


@detects("evaluation_failure")
def metric_missing(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A metric the config asks for could not be measured because of the system's output
    (e.g. a supported answer that cites nothing has no citation accuracy), with the reason.
    Fields the data set does not have (no ``expected_terms``) are not failures: the run
    reports them once as not applicable."""
    return {"missing": dict(case.missing)} if case.missing else None


# Counted (always 0) so the schema stays whole; no detector can fire it.
unobservable("evaluation_failure.failure_case_not_saved", (
    "a run folder is written to a temporary folder and swapped into place atomically, so "
    "a run either saves every failure case or leaves the folder as it was"))
