"""Failure taxonomy: which of the contract's 24 labels a question earns, and why.

Each observable label has one detector: a pure function of the question's evidence (gold,
ranking, context, answer, its scores) that returns the evidence that triggered it, or None.
Labels that the inputs cannot show stay in the schema with count 0 (see `UNOBSERVABLE`).

"Cause" labels (a split clause, wording mismatch, noisy headers, ...) only fire on a question
that is failing in a measurable way, so that a passing question never gets a failure row.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .checks import Checks
from .config import DiagnoseConfig
from .gold import QuestionGold
from .metrics.answer import strip_markers
from .metrics.numbers import extract_numbers, number_supported
from .schema import Answer, Question
from .store import Index
from .text import content_words, normalize, split_sentences

RETRIEVAL = (
    "retrieval_failure.gold_evidence_not_in_top_k",
    "retrieval_failure.gold_evidence_ranked_too_low",
    "retrieval_failure.wrong_similar_clause",
    "retrieval_failure.chunk_boundary_split",
    "retrieval_failure.query_wording_mismatch",
    "retrieval_failure.multi_chunk_evidence_missing",
)
PARSING = (
    "parsing_failure.table_content_lost",
    "parsing_failure.figure_content_ignored",
    "parsing_failure.page_metadata_missing",
    "parsing_failure.header_footer_noise",
    "parsing_failure.korean_english_mixed_text_issue",
)
CITATION = (
    "citation_failure.correct_answer_wrong_citation",
    "citation_failure.insufficient_citation",
    "citation_failure.missing_page_number",
    "citation_failure.citation_does_not_support_claim",
    "citation_failure.vague_citation_for_multiple_claims",
)
ANSWER = (
    "answer_failure.hallucinated_requirement",
    "answer_failure.partial_answer",
    "answer_failure.overconfident_weak_evidence",
    "answer_failure.wrong_synthesis",
    "answer_failure.failed_to_abstain",
)
EVALUATION = (
    "evaluation_failure.no_gold_evidence",
    "evaluation_failure.metric_missing",
    "evaluation_failure.failure_case_not_saved",
)
LABELS: tuple[str, ...] = RETRIEVAL + PARSING + CITATION + ANSWER + EVALUATION

# Labels no detector can fire, and why; they are counted (always 0) so the schema stays whole.
UNOBSERVABLE: dict[str, str] = {
    "evaluation_failure.failure_case_not_saved": (
        "a run folder is written to a temporary folder and renamed into place, so a run "
        "either saves every failure case or leaves no run folder at all"
    ),
}


@dataclass
class Case:
    """Everything known about one question after it was answered and scored."""

    question: Question
    gold: QuestionGold
    ranked: list[str]  # retrieved chunk ids, de-duplicated, best first
    scores: list[float | None]
    context_ids: list[str]  # the chunks the answerer saw
    answer: Answer
    answer_scores: dict[str, Any]
    retrieval: dict[str, Any]  # per-question retrieval metrics (None without gold)
    top_k: int
    index: Index
    checks: Checks = field(default_factory=Checks)
    # Metrics the config asks for that the system's output kept from being measured.
    missing: dict[str, str] = field(default_factory=dict)
    index_ranks: dict[str, int] = field(default_factory=dict)  # gold id -> rank among all chunks
    _repeated: dict[str, set[str]] = field(default_factory=dict, repr=False)

    # --- derived facts the detectors share ---------------------------------------------
    @property
    def gold_ids(self) -> list[str]:
        return [cid for cid, g in self.gold.grades.items() if g >= 1]

    @property
    def first_gold_rank(self) -> int:
        gold = set(self.gold_ids)
        return next((i for i, cid in enumerate(self.ranked, 1) if cid in gold), 0)

    @property
    def declined(self) -> bool:
        return bool(self.answer_scores.get("declined"))

    @property
    def supported(self) -> bool:
        return not self.declined

    @property
    def cited(self) -> list[str]:
        return list(self.answer_scores.get("cited_ids") or [])

    @property
    def failing(self) -> bool:
        """Some check failed (found, grounded or right; see :mod:`ragassay.checks`)."""
        return not self.checks.passed

    def text(self, chunk_id: str) -> str:
        return self.index.chunk(chunk_id).text if self.index.has(chunk_id) else ""

    def repeated_lines(self, doc_id: str) -> set[str]:
        if doc_id not in self._repeated:
            self._repeated[doc_id] = repeated_lines(self.index, doc_id)
        return self._repeated[doc_id]


Detector = Callable[[Case, DiagnoseConfig], "dict[str, Any] | None"]


# --- retrieval -----------------------------------------------------------------------


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


def gold_evidence_ranked_too_low(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The first gold chunk is retrieved, but below `rank_cutoff` (default 5) within top-k."""
    rank = case.first_gold_rank
    if not (cfg.rank_cutoff < rank <= case.top_k):
        return None
    return {"rank": rank, "rank_cutoff": cfg.rank_cutoff, "ranked_above": case.ranked[: rank - 1]}


def _grams(text: str, n: int = 3) -> Counter[str]:
    s = re.sub(r"\s+", "", normalize(text))
    return Counter(s[i : i + n] for i in range(max(len(s) - n + 1, 1)))


def similarity(a: str, b: str) -> float:
    """Dice coefficient of character 3-gram multisets (spaces ignored): 1.0 = same text."""
    ga, gb = _grams(a), _grams(b)
    total = sum(ga.values()) + sum(gb.values())
    return 2 * sum((ga & gb).values()) / total if total else 0.0


def coverage(claim: str, text: str) -> float:
    """Share of the claim's character 3-grams that the text holds (spaces ignored)."""
    gc = _grams(claim)
    total = sum(gc.values())
    return sum((gc & _grams(text)).values()) / total if total else 0.0


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
    for ev in case.gold.evidence:
        claim = ev.label.support_claim
        if claim and normalize(claim) in normalize(top_text):
            return None  # the top hit holds the claim itself
        if claim:
            for a, b in split_sentences(top_text):
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


def chunk_boundary_split(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The gold claim is held by no single chunk, only by two adjacent ones."""
    splits = [ev for ev in case.gold.evidence if ev.split]
    if not splits or not case.failing:
        return None
    return {"claims": [{"claim": ev.label.support_claim, "chunk_ids": ev.chunk_ids}
                       for ev in splits]}


def _shared_words(question: str, chunk_text: str) -> list[str]:
    hay = normalize(chunk_text)
    return [w for w in dict.fromkeys(content_words(question)) if w in hay]


def query_wording_mismatch(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """Retrieval missed (or ranked low) and the question shares no content word with the gold."""
    rank = case.first_gold_rank
    if not case.gold_ids or 0 < rank <= cfg.rank_cutoff:
        return None
    shared = sorted({w for cid in case.gold_ids for w in _shared_words(case.question.question,
                                                                        case.text(cid))})
    if shared:
        return None
    return {"question_content_words": content_words(case.question.question),
            "gold_chunk_ids": case.gold_ids}


def multi_chunk_evidence_missing(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """Evidence needs several chunks; some but not all are in the top-k."""
    gold = case.gold_ids
    top = set(case.ranked[: case.top_k])
    found = [c for c in gold if c in top]
    if len(gold) < 2 or not found or len(found) == len(gold):
        return None
    return {"found": found, "missing": [c for c in gold if c not in top]}


# --- parsing -------------------------------------------------------------------------


def _lost(case: Case, kind: str) -> dict[str, Any] | None:
    lost = [ev for ev in case.gold.evidence if ev.status == "lost_in_parsing"]
    docs = [case.index.document(ev.label.doc_id) for ev in lost]
    hits = [(ev, d) for ev, d in zip(lost, docs, strict=True) if d.dropped.get(kind)]
    if not hits:
        return None
    return {"evidence": [{"doc_id": d.doc_id, "claim": ev.label.support_claim,
                          f"dropped_{kind}": d.dropped[kind]} for ev, d in hits]}


def table_content_lost(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The gold claim is in no chunk, and the loader dropped tables of its document."""
    return _lost(case, "tables")


def figure_content_ignored(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The gold claim is in no chunk, the document had images and no dropped table explains it."""
    if table_content_lost(case, cfg):
        return None
    return _lost(case, "images")


def page_metadata_missing(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A gold or cited chunk of a paged document has no page_span."""
    out = []
    for cid in dict.fromkeys(case.gold_ids + case.cited):
        if not case.index.has(cid):
            continue
        chunk = case.index.chunk(cid)
        doc = case.index.document(chunk.doc_id)
        if chunk.page_span is None and doc.num_pages:
            out.append({"chunk_id": cid, "doc_id": doc.doc_id, "num_pages": doc.num_pages})
    return {"chunks": out} if out else None


_DIGITS = re.compile(r"\d+")


def _line_key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()))


def repeated_lines(index: Index, doc_id: str, min_count: int = 3) -> set[str]:
    """Lines (digits folded) that occur at least `min_count` times in a document."""
    counts: Counter[str] = Counter()
    for line in document_text(index, doc_id).splitlines():
        key = _line_key(line)
        if len(key) >= 5:
            counts[key] += 1
    return {k for k, n in counts.items() if n >= min_count}


def document_text(index: Index, doc_id: str) -> str:
    """The document's text, stitched back from its chunks' character spans."""
    parts: list[str] = []
    end = 0
    for c in index.chunks_of(doc_id):
        start = c.char_span[0] if c.char_span else end
        parts.append(c.text[max(end - start, 0):])
        end = c.char_span[1] if c.char_span else end + len(c.text)
    return "".join(parts)


def noise_share(text: str, repeated: set[str]) -> float:
    """Share of a chunk's non-space characters that sit on repeated (header/footer) lines.

    A chunk's first and last lines may be cut; they count when they are part of a repeated line.
    """
    lines = text.splitlines()
    total = sum(len("".join(line.split())) for line in lines)
    if not total or not repeated:
        return 0.0
    noisy = 0
    for i, line in enumerate(lines):
        key = _line_key(line)
        if not key:
            continue
        edge = i in (0, len(lines) - 1)
        if key in repeated or (edge and len(key) >= 5 and any(key in r for r in repeated)):
            noisy += len("".join(line.split()))
    return noisy / total


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


def korean_english_mixed_text_issue(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A mixed Hangul/Latin required term is in its gold chunk only with different spacing.

    Extraction often drops or inserts the space between scripts (`API 연계` / `API연계`), which
    breaks exact matching in retrieval and in answer checks.
    """
    out = []
    for ev in case.gold.evidence:
        for cid in ev.chunk_ids:
            raw = case.text(cid)
            squashed = re.sub(r"\s+", "", raw)
            for term in ev.label.required_terms:
                mixed = _HANGUL.search(term) and _LATIN_DIGIT.search(term)
                if mixed and term not in raw and re.sub(r"\s+", "", term) in squashed:
                    out.append({"chunk_id": cid, "term": term})
    return {"terms": out} if out and case.failing else None


# --- citation ------------------------------------------------------------------------


def correct_answer_wrong_citation(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The answer is right but cites no gold chunk."""
    if case.answer_scores.get("correct") != 1 or not case.supported or not case.gold_ids:
        return None
    if not case.cited or set(case.cited) & set(case.gold_ids):
        return None
    return {"cited": case.cited, "gold_chunk_ids": case.gold_ids}


def insufficient_citation(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A supported answer with no citation, or one that leaves retrieved gold evidence uncited."""
    if not case.supported:
        return None
    if not case.cited:
        return {"reason": "supported answer cites nothing"}
    gold = case.gold_ids
    uncited = [c for c in gold if c in case.context_ids and c not in case.cited]
    if len(gold) >= 2 and uncited and set(case.cited) & set(gold):
        return {"reason": "part of the multi-chunk evidence is in the context but not cited",
                "uncited_gold": uncited}
    return None


def missing_page_number(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A citation without a page, although its document has pages."""
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


def citation_does_not_support_claim(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The cited source cannot support the answer: a number not in it, or a source never seen."""
    reason = case.answer_scores.get("groundedness_reason") or ""
    if case.answer_scores.get("groundedness") != 0 or reason in ("", "no source"):
        return None
    return {"groundedness_reason": reason, "cited": case.cited}


def vague_citation_for_multiple_claims(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """Several sentences and several sources, but no inline marker says which backs which."""
    if not case.supported or len(case.cited) < 2:
        return None
    text = case.answer.text
    if any(f"[{cid}]" in text for cid in case.cited):
        return None
    sentences = split_sentences(text)
    if len(sentences) < 2:
        return None
    return {"sentences": len(sentences), "cited": case.cited}


# --- answer --------------------------------------------------------------------------


def hallucinated_requirement(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A supported answer states what no evidence holds.

    Fires when a number in the answer occurs in none of the context chunks, or when an
    answerable question gets a wrong answer drawn only from non-gold chunks (another clause's
    requirement presented as the answer).
    """
    if not case.supported or not case.question.answerable:
        return None
    text = strip_markers(case.answer.text)
    context_numbers = [q for cid in case.context_ids for q in extract_numbers(case.text(cid))]
    invented = [q.raw for q in extract_numbers(text)
                if not number_supported(q, context_numbers)]
    if invented:
        return {"numbers_not_in_context": invented}
    s = case.answer_scores
    if s.get("correct") == 0 and s.get("hallucination_flag") == 1:
        return {"cited_non_gold": case.cited, "must_contain": case.question.must_contain}
    return None


def partial_answer(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The answer holds some, not all, of what a right answer must contain."""
    must = case.question.must_contain
    found = case.answer_scores.get("must_contain_found") or []
    if not case.question.answerable or not case.supported or not (0 < len(found) < len(must)):
        return None
    return {"found": found, "missing": [m for m in must if m not in found]}


def overconfident_weak_evidence(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """A supported answer although the best retrieval score is under `weak_evidence_score`."""
    scores = [s for s in case.scores if s is not None]
    if not case.supported or not scores or max(scores) >= cfg.weak_evidence_score:
        return None
    return {"best_score": round(max(scores), 6), "threshold": cfg.weak_evidence_score}


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


def failed_to_abstain(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """An unanswerable question got a supported answer."""
    if case.question.answerable or case.declined:
        return None
    return {"status": case.answer.status, "cited": case.cited}


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
assert set(DETECTORS) | set(UNOBSERVABLE) == set(LABELS)  # every label accounted for


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
