"""`Case`: one question's evidence and the facts detectors share (the labels are registered
by their detectors, :mod:`ragassay.diagnose.registry`)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..checks import Checks
from ..gold import QuestionGold
from ..metrics.answer import holds_item
from ..schema import Answer, Question
from ..sentences import split_sentences
from ..store import Index


@dataclass(frozen=True)
class Evidence:
    """One piece of gold evidence: its chunks, and whether they are needed ``together``
    (a claim split across adjacent chunks) or each one is enough (alternatives)."""

    chunk_ids: list[str]
    together: bool

    def met_by(self, chunk_ids: set[str]) -> bool:
        """Are these chunks (retrieved, cited) enough for this piece?"""
        if self.together:
            return all(c in chunk_ids for c in self.chunk_ids)
        return any(c in chunk_ids for c in self.chunk_ids)


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

    def __post_init__(self) -> None:
        # The gold ids and the first gold rank are read by most detectors: worked out once
        # per case (a case is read, never changed, once built); the pieces of evidence,
        # which two detectors read, on first use. (Not `cached_property`: its lock cost
        # more than the facts.)
        self._gold_ids = tuple(cid for cid, g in self.gold.grades.items() if g >= 1)
        gold = set(self._gold_ids)
        self._first_gold_rank = next((i for i, cid in enumerate(self.ranked, 1)
                                      if cid in gold), 0)
        self._pieces: tuple[Evidence, ...] | None = None

    # --- derived facts the detectors share ---------------------------------------------
    @property
    def gold_ids(self) -> list[str]:
        return list(self._gold_ids)

    def gold_items(self) -> list[Evidence]:
        """The relevant gold as pieces of evidence: the chunks that each hold one label
        alone are one piece, any of them enough (:attr:`QuestionGold.alternatives`); the
        adjacent chunks of a ``split`` label are one piece, needed together; every other
        gold chunk is a piece of its own. In order of the gold chunks."""
        if self._pieces is None:
            self._pieces = self._gold_pieces()
        return list(self._pieces)

    def _gold_pieces(self) -> tuple[Evidence, ...]:
        same = self.gold.alternatives
        groups: dict[str, list[str]] = {}
        for cid in self.gold_ids:
            groups.setdefault(same.get(cid, cid), []).append(cid)
        runs = [ev.chunk_ids for ev in self.gold.evidence if ev.split and ev.label.grade >= 1]
        in_run = {c: run for run in runs for c in run}
        out: list[Evidence] = []
        for key, chunks in groups.items():
            run = in_run.get(key)
            if run is None:
                out.append(Evidence(chunks, together=False))
            elif run[0] == key:  # a run is listed once, at its first chunk
                out.append(Evidence(list(run), together=True))
        return tuple(out)

    def covers_answer(self, chunk_ids: list[str]) -> bool:
        """Do these chunks hold what the answer had to say? True when the answer is right
        and each ``must_contain`` item stands in one of them; without ``must_contain``, when
        each ``required_terms`` item of the gold labels does (and there is one). A
        multi-chunk label is then covered although some of its chunks are not there: its
        other chunks hold the rest of the sentence, not the answer."""
        texts = [self.text(c) for c in chunk_ids]
        if self.question.must_contain:
            return self.answer_scores.get("correct") == 1 and all(
                any(holds_item(t, item) for t in texts) for item in self.question.must_contain)
        terms = [t for ev in self.gold.evidence for t in ev.label.required_terms]
        return bool(terms) and all(any(holds_item(t, term) for t in texts) for term in terms)

    @property
    def first_gold_rank(self) -> int:
        return self._first_gold_rank

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

    def sentences(self, chunk_id: str) -> list[tuple[int, int]]:
        """The sentence spans of a chunk's text (:func:`ragassay.sentences.split_sentences`),
        once per chunk and store: the top hit of many questions is the same chunk."""
        per_chunk = self.index.cache.setdefault("diagnose.sentences", {})
        if chunk_id not in per_chunk:
            per_chunk[chunk_id] = split_sentences(self.text(chunk_id))
        return per_chunk[chunk_id]

    @property
    def paged(self) -> bool:
        """Does any document of the store have pages? Once per store: without, no page
        label can fire, and their detectors read no chunk."""
        cache = self.index.cache
        if "diagnose.paged" not in cache:
            cache["diagnose.paged"] = any(d.num_pages for d in self.index.documents)
        return bool(cache["diagnose.paged"])

    def repeated_lines(self, doc_id: str) -> frozenset[str]:
        # Once per document and store, not per question: a document may be long, and many
        # questions' hits come from the same one.
        per_doc = self.index.cache.setdefault("repeated_lines", {})
        if doc_id not in per_doc:
            per_doc[doc_id] = frozenset(repeated_lines(self.index, doc_id))
        return per_doc[doc_id]




_DIGITS = re.compile(r"\d+")


def line_key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()))


def repeated_lines(index: Index, doc_id: str, min_count: int = 3) -> set[str]:
    """Lines (digits folded) that occur at least `min_count` times in a document."""
    counts: Counter[str] = Counter()
    for line in document_text(index, doc_id).splitlines():
        key = line_key(line)
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
