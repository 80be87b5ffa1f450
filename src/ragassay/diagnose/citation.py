"""Detectors of the citation_failure labels."""

from __future__ import annotations

from typing import Any

from ..config import DiagnoseConfig
from ..sentences import split_sentences
from .case import Case
from .claim_evidence import ClaimCause
from .registry import detects

# --- citation ------------------------------------------------------------------------


@detects("citation_failure", claims=ClaimCause("cited"))
def correct_answer_wrong_citation(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The answer is right but cites no gold chunk."""
    if case.answer_scores.get("correct") != 1 or not case.supported or not case.gold_ids:
        return None
    if not case.cited or set(case.cited) & set(case.gold_ids):
        return None
    return {"cited": case.cited, "gold_chunk_ids": case.gold_ids}


@detects("citation_failure", claims=ClaimCause("cited"))
def insufficient_citation(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A supported answer with no citation, or one that leaves retrieved gold evidence uncited
    while its cited chunks do not hold what the answer says (:meth:`Case.covers_answer`)."""
    if not case.supported:
        return None
    if not case.cited:
        return {"reason": "supported answer cites nothing"}
    pieces = case.gold_items()  # alternatives: citing one suffices; a split label: one piece
    cited = set(case.cited)
    uncited = [c for piece in pieces if not piece.met_by(cited)
               for c in piece.chunk_ids if c in case.context_ids and c not in cited]
    several = len(pieces) >= 2 or any(p.together for p in pieces)
    if several and uncited and cited & set(case.gold_ids) and not case.covers_answer(case.cited):
        return {"reason": "part of the multi-chunk evidence is in the context but not cited",
                "uncited_gold": uncited}
    return None


@detects("citation_failure")
def missing_page_number(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A citation without a page, although its document has pages."""
    if not case.paged:
        return None
    out = []
    for cit in case.answer.citations:
        if cit.page is not None or not case.index.has(cit.chunk_id):
            continue
        chunk = case.index.chunk(cit.chunk_id)
        doc = case.index.document(chunk.doc_id)
        if doc.num_pages:
            out.append({"chunk_id": cit.chunk_id, "num_pages": doc.num_pages,
                        "chunk_page_span": chunk.page_span})
    return {"citations": out} if out else None


@detects("citation_failure", claims=ClaimCause("cited"))
def citation_does_not_support_claim(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The cited source cannot support the answer: a number not in it, or a source never seen."""
    reason = case.answer_scores.get("groundedness_reason") or ""
    if case.answer_scores.get("groundedness") != 0 or reason in ("", "no source"):
        return None
    return {"groundedness_reason": reason, "cited": case.cited}


@detects("citation_failure")
def vague_citation_for_multiple_claims(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """Several sentences and several sources, but no inline marker says which backs which
    (a citation read from the text, such as the LLM answerer's ``[1]``, carries ``raw``)."""
    if not case.supported or len(case.cited) < 2:
        return None
    text = case.answer.text
    if any(c.raw is not None for c in case.answer.citations) or \
            any(f"[{cid}]" in text for cid in case.cited):
        return None
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return None
    return {"sentences": len(sentences), "cited": case.cited}
