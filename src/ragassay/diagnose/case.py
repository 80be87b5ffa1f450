"""`Case`: one question's evidence and the facts detectors share (the labels are registered
by their detectors, :mod:`ragassay.diagnose.registry`)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..checks import Checks
from ..gold import QuestionGold
from ..schema import Answer, Question
from ..store import Index


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

    # --- derived facts the detectors share ---------------------------------------------
    @property
    def gold_ids(self) -> list[str]:
        return [cid for cid, g in self.gold.grades.items() if g >= 1]

    def gold_items(self) -> dict[str, list[str]]:
        """The relevant gold as items: the chunk an item is counted under → its chunks (one
        for most labels; every holder of a label held by several chunks, see
        :attr:`QuestionGold.alternatives`)."""
        same = self.gold.alternatives
        items: dict[str, list[str]] = {}
        for cid in self.gold_ids:
            items.setdefault(same.get(cid, cid), []).append(cid)
        return items

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
