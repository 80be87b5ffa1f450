"""Failure taxonomy: which of the contract's labels a question earns, and why.

Each observable label has one detector: a pure function of the question's evidence (gold,
ranking, context, answer, its scores) that returns the evidence that triggered it, or None,
registered with ``@detects(category)`` (:mod:`.registry`: the label is the category and the
function's name). Labels that the inputs cannot show stay in the schema with count 0 (see
`UNOBSERVABLE`). The modules of the categories are imported here, so importing this package
registers every built-in label.

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
from .case import Case, document_text, repeated_lines
from .citation import (
    citation_does_not_support_claim,
    correct_answer_wrong_citation,
    insufficient_citation,
    missing_page_number,
    vague_citation_for_multiple_claims,
)
from .claim_evidence import ClaimCause, add_claim_evidence, claims_behind
from .evaluation import metric_missing, no_gold_evidence
from .parsing import (
    figure_content_ignored,
    header_footer_noise,
    korean_english_mixed_text_issue,
    noise_share,
    page_metadata_missing,
    table_content_lost,
)
from .registry import (
    CATEGORIES,
    CLAIM_CAUSES,
    DETECTORS,
    UNOBSERVABLE,
    Detector,
    detectors,
    detects,
    labels,
    labels_of,
    unobservable,
    unregister,
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

# The built-in taxonomy, as registered by the modules above (a detector registered later,
# at run time, is in `labels()` but not in these).
LABELS: tuple[str, ...] = labels()
RETRIEVAL, PARSING, CITATION, ANSWER, EVALUATION = (labels_of(c) for c in CATEGORIES)


def detector(label: str) -> Detector | None:
    """The detector of ``label``; None for a label the inputs cannot show (see `UNOBSERVABLE`).

    An unknown label raises :class:`ValueError` naming the nearest label.
    """
    known = labels()
    if label not in known:
        raise ValueError(unknown_name("failure label", label, known, known_as="labels"))
    return DETECTORS.get(label)


def diagnose(case: Case, cfg: DiagnoseConfig) -> dict[str, dict[str, Any]]:
    """Run every detector; returns {label: evidence} in taxonomy order (empty = no failure)."""
    out: dict[str, dict[str, Any]] = {}
    for label, detector in detectors():
        evidence = detector(case, cfg)
        if evidence is not None:
            out[label] = evidence
    return out


def claim_evidence(failures: dict[str, dict[str, Any]], claims: dict[str, Any] | None,
                   ) -> None:
    """Add to each label of ``failures`` the claims behind it (:mod:`.claim_evidence`, the
    causes registered with ``@detects(..., claims=...)``), in place."""
    add_claim_evidence(failures, claims, CLAIM_CAUSES)


def count_labels(rows: list[dict[str, dict[str, Any]]]) -> dict[str, int]:
    """Failure counts for every registered label (0 where none fired), in taxonomy order."""
    counts = Counter(label for row in rows for label in row)
    return {label: counts.get(label, 0) for label in labels()}


__all__ = [
    "ANSWER", "CATEGORIES", "CITATION", "CLAIM_CAUSES", "ClaimCause", "DETECTORS", "EVALUATION",
    "LABELS", "PARSING", "RETRIEVAL", "detects", "labels", "labels_of", "unobservable",
    "unregister", "UNOBSERVABLE", "Case", "Detector", "chunk_boundary_split",
    "citation_does_not_support_claim", "claim_evidence", "claims_behind",
    "correct_answer_wrong_citation", "count_labels", "coverage", "detector", "diagnose",
    "document_text", "failed_to_abstain", "figure_content_ignored", "gold_evidence_not_in_top_k",
    "gold_evidence_ranked_too_low", "hallucinated_requirement", "header_footer_noise",
    "insufficient_citation", "korean_english_mixed_text_issue", "metric_missing",
    "missing_page_number", "multi_chunk_evidence_missing", "no_gold_evidence", "noise_share",
    "overconfident_weak_evidence", "page_metadata_missing", "partial_answer",
    "query_wording_mismatch", "repeated_lines", "similarity", "table_content_lost",
    "vague_citation_for_multiple_claims", "wrong_similar_clause", "wrong_synthesis"
]
