"""Detectors of the retrieval_failure labels (and the text similarity they use)."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Any

from ..config import DiagnoseConfig
from ..text import content_words, fold_text
from .case import Case
from .registry import detects

# --- retrieval -----------------------------------------------------------------------


@detects("retrieval_failure")
def gold_evidence_not_in_top_k(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """No gold chunk among the top-k retrieved."""
    if not case.gold_ids or (0 < case.first_gold_rank <= case.top_k):
        return None
    return {
        "top_k": case.top_k,
        "gold_chunk_ids": case.gold_ids,
        "top_hits": case.ranked[:3],
        "gold_rank_in_index": {cid: case.index_ranks[cid] for cid in case.gold_ids
                               if cid in case.index_ranks},
    }


@detects("retrieval_failure")
def gold_evidence_ranked_too_low(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The first gold chunk is retrieved, but below `rank_cutoff` (default 5) within top-k."""
    rank = case.first_gold_rank
    if not (cfg.rank_cutoff < rank <= case.top_k):
        return None
    return {"rank": rank, "rank_cutoff": cfg.rank_cutoff, "ranked_above": case.ranked[: rank - 1]}


# Cached: the top hit's sentences recur across the questions that retrieve it; callers
# only read the Counter, never change it.
@lru_cache(maxsize=16384)
def _grams(text: str, n: int = 3) -> Counter[str]:
    s = re.sub(r"\s+", "", fold_text(text))
    return Counter([s[i : i + n] for i in range(max(len(s) - n + 1, 1))])


def similarity(a: str, b: str) -> float:
    """Dice coefficient of character 3-gram multisets (spaces ignored): 1.0 = same text."""
    ga, gb = _grams(a), _grams(b)
    total = sum(ga.values()) + sum(gb.values())
    return 2 * _shared(ga, gb) / total if total else 0.0


def coverage(claim: str, text: str) -> float:
    """Share of the claim's character 3-grams that the text holds (spaces ignored)."""
    gc = _grams(claim)
    total = sum(gc.values())
    return _shared(gc, _grams(text)) / total if total else 0.0


def _shared(a: Counter[str], b: Counter[str]) -> int:
    """|a ∩ b| of two multisets of positive counts: :func:`_shared_reference`'s, without
    building the intersection (hand-written: `Counter.__and__` was half of the
    similar-clause detector's time)."""
    if len(b) < len(a):
        a, b = b, a
    return sum(min(n, b[g]) for g, n in a.items() if g in b)


def _shared_reference(a: Counter[str], b: Counter[str]) -> int:
    """The plain version of :func:`_shared`, kept as the reference its tests compare with."""
    return sum((a & b).values())


@detects("retrieval_failure")
def wrong_similar_clause(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The top hit is not gold but holds a near-duplicate of the gold claim.

    Each sentence of the top hit is scored by how much of the claim's wording it covers
    (character 3-grams; threshold `similar_clause`): a clause copied from another agency's
    RFP with a different number covers most of it. Labels without a claim compare whole
    chunk texts (Dice).
    """
    if not case.gold_ids or not case.ranked or case.ranked[0] in case.gold_ids:
        return None
    top = case.ranked[0]
    top_text = case.text(top)
    best: tuple[float, str, str] = (0.0, "", "")
    folded_top = ""  # folded once, when a label has a claim
    for ev in case.gold.evidence:
        claim = ev.label.support_claim
        if claim and not folded_top:
            folded_top = fold_text(top_text)
        if claim and fold_text(claim) in folded_top:
            return None  # the top hit holds the claim itself
        if claim:
            for a, b in case.sentences(top):
                sent = top_text[a:b]
                best = max(best, (coverage(claim, sent), sent, claim))
        else:
            for cid in ev.chunk_ids:
                best = max(best, (similarity(case.text(cid), top_text), top_text, case.text(cid)))
    score, sentence, claim = best
    if score < cfg.similar_clause:
        return None
    top_doc = case.index.chunk(top).doc_id if case.index.has(top) else None
    gold_docs = sorted({case.index.chunk(c).doc_id for c in case.gold_ids if case.index.has(c)})
    return {
        "top_chunk_id": top,
        "similar_text": sentence.strip(),
        "gold_claim": claim,
        "similarity": round(score, 4),
        "same_document": top_doc in gold_docs,
    }


@detects("retrieval_failure")
def chunk_boundary_split(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The gold claim is held by no single chunk, only by two adjacent ones."""
    splits = [ev for ev in case.gold.evidence if ev.split]
    if not splits or not case.failing:
        return None
    return {"claims": [{"claim": ev.label.support_claim, "chunk_ids": ev.chunk_ids}
                       for ev in splits]}


@detects("retrieval_failure")
def query_wording_mismatch(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """Retrieval missed (or ranked low) and the question shares no content word with the gold."""
    rank = case.first_gold_rank
    if not case.gold_ids or 0 < rank <= cfg.rank_cutoff:
        return None
    words = content_words(case.question.question)
    # the first shared word settles it: the later gold chunks are not folded
    if any(any(w in hay for w in words)
           for hay in (fold_text(case.text(cid)) for cid in case.gold_ids)):
        return None
    return {"question_content_words": words, "gold_chunk_ids": case.gold_ids}


@detects("retrieval_failure")
def multi_chunk_evidence_missing(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """Evidence needs several chunks; some but not all are in the top-k, and those there do
    not hold what the answer had to say (:meth:`Case.covers_answer`). Chunks that each hold
    the same label alone are one piece of evidence (any of them in the top-k finds it); the
    chunks of a label split across adjacent chunks are one piece too, found when all are."""
    pieces = case.gold_items()
    top = set(case.ranked[: case.top_k])
    found = [c for piece in pieces for c in piece.chunk_ids if c in top]
    missing = [c for piece in pieces if not piece.met_by(top)
               for c in piece.chunk_ids if c not in top]
    several = len(pieces) >= 2 or any(p.together for p in pieces)
    if not several or not found or not missing:
        return None
    if case.covers_answer([c for c in case.ranked[: case.top_k]]):
        return None
    return {"found": found, "missing": missing}
