"""Detectors of the parsing_failure labels."""

from __future__ import annotations

import re
from collections.abc import Set
from typing import Any

from ..config import DiagnoseConfig
from .case import Case, line_key
from .registry import detects

# --- parsing -------------------------------------------------------------------------


def _lost(case: Case, kind: str) -> dict[str, Any] | None:
    lost = [ev for ev in case.gold.evidence if ev.status == "lost_in_parsing"]
    if not lost:  # nearly every case: no document to look up
        return None
    docs = [case.index.document(ev.label.doc_id) for ev in lost]
    hits = [(ev, d) for ev, d in zip(lost, docs, strict=True) if d.dropped.get(kind)]
    if not hits:
        return None
    return {"evidence": [{"doc_id": d.doc_id, "claim": ev.label.support_claim,
                          f"dropped_{kind}": d.dropped[kind]} for ev, d in hits]}


@detects("parsing_failure")
def table_content_lost(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The gold claim is in no chunk, and the loader dropped tables of its document."""
    return _lost(case, "tables")


@detects("parsing_failure")
def figure_content_ignored(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The gold claim is in no chunk, the document had images and no dropped table explains it."""
    if table_content_lost(case, cfg):
        return None
    return _lost(case, "images")


@detects("parsing_failure")
def page_metadata_missing(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A gold or cited chunk of a paged document has no page_span."""
    if not case.paged:
        return None
    out = []
    for cid in dict.fromkeys(case.gold_ids + case.cited):
        if not case.index.has(cid):
            continue
        chunk = case.index.chunk(cid)
        doc = case.index.document(chunk.doc_id)
        if chunk.page_span is None and doc.num_pages:
            out.append({"chunk_id": cid, "doc_id": doc.doc_id, "num_pages": doc.num_pages})
    return {"chunks": out} if out else None


def noise_share(text: str, repeated: Set[str]) -> float:
    """Share of a chunk's non-space characters that sit on repeated (header/footer) lines.

    A chunk's first and last lines may be cut; they count when they are part of a repeated line.
    """
    if not repeated:  # most documents repeat no line: nothing to count
        return 0.0
    lines = text.splitlines()
    total = sum(len("".join(line.split())) for line in lines)
    if not total:
        return 0.0
    noisy = 0
    for i, line in enumerate(lines):
        key = line_key(line)
        if not key:
            continue
        edge = i in (0, len(lines) - 1)
        if key in repeated or (edge and len(key) >= 5 and any(key in r for r in repeated)):
            noisy += len("".join(line.split()))
    return noisy / total


@detects("parsing_failure")
def header_footer_noise(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A non-gold hit ranked above the gold is mostly lines repeated across the document's pages."""
    if not case.gold_ids or not case.failing:
        return None
    rank = case.first_gold_rank
    above = case.ranked[: (rank - 1) if rank else case.top_k]
    noisy = []
    for cid in above:
        if not case.index.has(cid):
            continue
        chunk = case.index.chunk(cid)
        share = noise_share(chunk.text, case.repeated_lines(chunk.doc_id))
        if share >= cfg.repeated_line_share:
            noisy.append({"chunk_id": cid, "repeated_line_share": round(share, 4)})
    return {"noisy_hits": noisy} if noisy else None


_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_LATIN_DIGIT = re.compile(r"[A-Za-z0-9]")


@detects("parsing_failure")
def korean_english_mixed_text_issue(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A mixed Hangul/Latin required term is in its gold chunk only with different spacing.

    Extraction often drops or inserts the space between scripts (`API 연계` / `API연계`), which
    breaks exact matching in retrieval and in answer checks.
    """
    if not case.failing:  # it fires on a failing question only: nothing to read
        return None
    out = []
    for ev in case.gold.evidence:
        mixed = [t for t in ev.label.required_terms
                 if _HANGUL.search(t) and _LATIN_DIGIT.search(t)]
        if not mixed:  # only a mixed term can show the issue
            continue
        for cid in ev.chunk_ids:
            raw = case.text(cid)
            squashed = re.sub(r"\s+", "", raw)
            for term in mixed:
                if term not in raw and re.sub(r"\s+", "", term) in squashed:
                    out.append({"chunk_id": cid, "term": term})
    return {"terms": out} if out else None
