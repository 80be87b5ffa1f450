"""Failure taxonomy: which of the contract's 24 labels a question earns, and why.

Each observable label has one detector: a pure function of the question's evidence (gold,
ranking, context, answer, its scores) that returns the evidence that triggered it, or None.
Labels that the inputs cannot show stay in the schema with count 0 (see `UNOBSERVABLE`).

"Cause" labels (a split clause, wording mismatch, noisy headers, ...) only fire on a question
that is failing in a measurable way, so that a passing question never gets a failure row.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..config import DiagnoseConfig
from ..errors import unknown_name
from .answer import (
    failed_to_abstain,
    hallucinated_requirement,
    overconfident_weak_evidence,
    partial_answer,
    wrong_synthesis,
)
from .case import (
    ANSWER,
    CITATION,
    EVALUATION,
    LABELS,
    PARSING,
    RETRIEVAL,
    UNOBSERVABLE,
    Case,
    Detector,
    document_text,
    repeated_lines,
)
from .citation import (
    citation_does_not_support_claim,
    correct_answer_wrong_citation,
    insufficient_citation,
    missing_page_number,
    vague_citation_for_multiple_claims,
)
from .evaluation import metric_missing, no_gold_evidence
from .parsing import (
    figure_content_ignored,
    header_footer_noise,
    korean_english_mixed_text_issue,
    noise_share,
    page_metadata_missing,
    table_content_lost,
)
from .retrieval import (
    chunk_boundary_split,
    coverage,
    gold_evidence_not_in_top_k,
    gold_evidence_ranked_too_low,
    multi_chunk_evidence_missing,
    query_wording_mismatch,
    similarity,
    wrong_similar_clause,
)

DETECTORS: dict[str, Detector] = {
    "retrieval_failure.gold_evidence_not_in_top_k": gold_evidence_not_in_top_k,
    "retrieval_failure.gold_evidence_ranked_too_low": gold_evidence_ranked_too_low,
    "retrieval_failure.wrong_similar_clause": wrong_similar_clause,
    "retrieval_failure.chunk_boundary_split": chunk_boundary_split,
    "retrieval_failure.query_wording_mismatch": query_wording_mismatch,
    "retrieval_failure.multi_chunk_evidence_missing": multi_chunk_evidence_missing,
    "parsing_failure.table_content_lost": table_content_lost,
    "parsing_failure.figure_content_ignored": figure_content_ignored,
    "parsing_failure.page_metadata_missing": page_metadata_missing,
    "parsing_failure.header_footer_noise": header_footer_noise,
    "parsing_failure.korean_english_mixed_text_issue": korean_english_mixed_text_issue,
    "citation_failure.correct_answer_wrong_citation": correct_answer_wrong_citation,
    "citation_failure.insufficient_citation": insufficient_citation,
    "citation_failure.missing_page_number": missing_page_number,
    "citation_failure.citation_does_not_support_claim": citation_does_not_support_claim,
    "citation_failure.vague_citation_for_multiple_claims": vague_citation_for_multiple_claims,
    "answer_failure.hallucinated_requirement": hallucinated_requirement,
    "answer_failure.partial_answer": partial_answer,
    "answer_failure.overconfident_weak_evidence": overconfident_weak_evidence,
    "answer_failure.wrong_synthesis": wrong_synthesis,
    "answer_failure.failed_to_abstain": failed_to_abstain,
    "evaluation_failure.no_gold_evidence": no_gold_evidence,
    "evaluation_failure.metric_missing": metric_missing,
}


def _check_registry() -> None:
    """Every label has a detector or a reason in `UNOBSERVABLE`, never both, and no other
    key: raised at import (not an ``assert``, which ``python -O`` drops)."""
    labels = set(LABELS)
    problems = []
    missing = [label for label in LABELS if label not in DETECTORS and label not in UNOBSERVABLE]
    if missing:
        problems.append(f"no detector and no UNOBSERVABLE reason: {', '.join(missing)}")
    both = [label for label in LABELS if label in DETECTORS and label in UNOBSERVABLE]
    if both:
        problems.append(f"both a detector and an UNOBSERVABLE reason: {', '.join(both)}")
    extra = sorted((set(DETECTORS) | set(UNOBSERVABLE)) - labels)
    if extra:
        problems.append(f"not in LABELS: {', '.join(extra)}")
    if problems:
        raise RuntimeError("failure taxonomy out of step: " + "; ".join(problems))


_check_registry()  # every label accounted for


def detector(label: str) -> Detector | None:
    """The detector of ``label``; None for a label the inputs cannot show (see `UNOBSERVABLE`).

    An unknown label raises :class:`ValueError` naming the nearest label.
    """
    if label not in LABELS:
        raise ValueError(unknown_name("failure label", label, LABELS, known_as="labels"))
    return DETECTORS.get(label)


def diagnose(case: Case, cfg: DiagnoseConfig) -> dict[str, dict[str, Any]]:
    """Run every detector; returns {label: evidence} in taxonomy order (empty = no failure)."""
    out: dict[str, dict[str, Any]] = {}
    for label in LABELS:
        detector = DETECTORS.get(label)
        if detector is None:
            continue
        evidence = detector(case, cfg)
        if evidence is not None:
            out[label] = evidence
    return out


def count_labels(rows: list[dict[str, dict[str, Any]]]) -> dict[str, int]:
    """Failure counts for all 24 labels (0 where none fired), in taxonomy order."""
    counts = Counter(label for row in rows for label in row)
    return {label: counts.get(label, 0) for label in LABELS}


__all__ = [
    "ANSWER", "CITATION", "DETECTORS", "EVALUATION", "LABELS", "PARSING", "RETRIEVAL",
    "UNOBSERVABLE", "Case", "Detector", "chunk_boundary_split", "citation_does_not_support_claim",
    "correct_answer_wrong_citation", "count_labels", "coverage", "detector", "diagnose",
    "document_text", "failed_to_abstain", "figure_content_ignored", "gold_evidence_not_in_top_k",
    "gold_evidence_ranked_too_low", "hallucinated_requirement", "header_footer_noise",
    "insufficient_citation", "korean_english_mixed_text_issue", "metric_missing",
    "missing_page_number", "multi_chunk_evidence_missing", "no_gold_evidence", "noise_share",
    "overconfident_weak_evidence", "page_metadata_missing", "partial_answer",
    "query_wording_mismatch", "repeated_lines", "similarity", "table_content_lost",
    "vague_citation_for_multiple_claims", "wrong_similar_clause", "wrong_synthesis",
]
