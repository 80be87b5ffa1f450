"""Detectors of the answer_failure labels."""

from __future__ import annotations

from typing import Any

from ..config import DiagnoseConfig
from ..metrics.answer import strip_markers
from ..metrics.numbers import extract_numbers, number_supported
from .case import Case
from .claim_evidence import ClaimCause
from .registry import detects

# --- answer --------------------------------------------------------------------------


@detects("answer_failure", claims=ClaimCause("context"))
def hallucinated_requirement(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A supported answer states what no evidence holds.

    Fires when a number in the answer occurs in none of the context chunks, or when an
    answerable question gets a wrong answer drawn only from non-gold chunks (another clause's
    requirement presented as the answer).
    """
    if not case.supported or not case.question.answerable:
        return None
    invented = _not_in_context(case)
    if invented:
        return {"numbers_not_in_context": invented}
    return _wrong_from_non_gold(case)


def hallucinated_requirement_reference(case: Case, cfg: DiagnoseConfig
                                       ) -> dict[str, Any] | None:
    """The plain version of :func:`hallucinated_requirement` (every context chunk's numbers
    read), kept as the reference its tests compare it with."""
    if not case.supported or not case.question.answerable:
        return None
    numbers = extract_numbers(strip_markers(case.answer.text))
    # the context's numbers are read only when the answer holds one to look for
    context_numbers = ([q for cid in case.context_ids for q in extract_numbers(case.text(cid))]
                       if numbers else [])
    invented = [q.raw for q in numbers if not number_supported(q, context_numbers)]
    if invented:
        return {"numbers_not_in_context": invented}
    return _wrong_from_non_gold(case)


def _not_in_context(case: Case) -> list[str]:
    """The answer's numbers that no context chunk holds. The cited chunks of the context are
    asked first (their numbers were read for the answer's groundedness already); only a
    number they do not hold is looked for in the rest of the context (gathering every
    context chunk's numbers for each answer cost 0.5 s of a 6,000-question run). A number
    held by a part of the context is held by the context: the result is the reference's."""
    numbers = extract_numbers(strip_markers(case.answer.text))
    if not numbers:
        return []
    context = dict.fromkeys(case.context_ids)
    cited = [q for cid in dict.fromkeys(case.cited) if cid in context
             for q in extract_numbers(case.text(cid))]
    left = [q for q in numbers if not number_supported(q, cited)]
    if not left:
        return []
    context_numbers = [q for cid in case.context_ids for q in extract_numbers(case.text(cid))]
    return [q.raw for q in left if not number_supported(q, context_numbers)]


def _wrong_from_non_gold(case: Case) -> dict[str, Any] | None:
    s = case.answer_scores
    if s.get("correct") == 0 and s.get("hallucination_flag") == 1:
        return {"cited_non_gold": case.cited, "must_contain": case.question.must_contain}
    return None


@detects("answer_failure", claims=ClaimCause("answer"))
def partial_answer(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The answer holds some, not all, of what a right answer must contain."""
    must = case.question.must_contain
    found = case.answer_scores.get("must_contain_found") or []
    if not case.question.answerable or not case.supported or not (0 < len(found) < len(must)):
        return None
    return {"found": found, "missing": [m for m in must if m not in found]}


@detects("answer_failure")
def overconfident_weak_evidence(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A supported answer although the best retrieval score is under `weak_evidence_score`."""
    scores = [s for s in case.scores if s is not None]
    if not case.supported or not scores or max(scores) >= cfg.weak_evidence_score:
        return None
    return {"best_score": round(max(scores), 6), "threshold": cfg.weak_evidence_score}


@detects("answer_failure", claims=ClaimCause("gold"))
def wrong_synthesis(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """Gold evidence was in the context, yet the answer holds none of what it must contain
    (a wrong answer, or a decline although the evidence was there)."""
    if not case.question.answerable or not case.question.must_contain:
        return None
    if not set(case.gold_ids) & set(case.context_ids):
        return None
    if case.answer_scores.get("must_contain_found"):
        return None
    return {"declined": case.declined,
            "gold_in_context": [c for c in case.gold_ids if c in case.context_ids]}


@detects("answer_failure")
def failed_to_abstain(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """An unanswerable question got a supported answer."""
    if case.question.answerable or case.declined:
        return None
    return {"status": case.answer.status, "cited": case.cited}
