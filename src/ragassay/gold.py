"""Questions and gold evidence: reading, cross-checks, and re-anchoring stale labels.

Gold labels name chunk ids, and chunk ids change whenever documents are re-chunked. A label
that carries its `support_claim` (or `required_terms`) can be found again: each label is
checked against the index and, when its chunk is gone or no longer holds the claim, moved to
the chunk(s) that do. Every move is reported; a label that cannot be placed fails its
question as an evaluation failure instead of silently scoring it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .errors import InputError
from .jsonio import line_of, read_jsonl
from .schema import GoldEvidence, GoldRecord, Question
from .store import Index
from .text import normalize, squash, term_pattern

AnchorStatus = Literal["ok", "reanchored", "split", "lost_in_parsing", "unanchored"]


@dataclass
class AnchoredEvidence:
    """One gold label after checking it against the index."""

    label: GoldEvidence
    status: AnchorStatus
    chunk_ids: list[str]  # where the evidence is now (two for a split claim, none if lost)
    reason: str = ""
    candidates: list[str] = field(default_factory=list)
    split: bool = False  # the claim is held only by two adjacent chunks together

    def report(self, question_id: str) -> dict[str, object]:
        return {
            "question_id": question_id,
            "labelled_chunk_id": self.label.chunk_id,
            "status": self.status,
            "chunk_ids": self.chunk_ids,
            "reason": self.reason,
            "candidates": self.candidates,
            "split": self.split,
        }


@dataclass
class QuestionGold:
    """The gold of one question, anchored: relevant chunk ids with grades."""

    question_id: str
    evidence: list[AnchoredEvidence]
    has_record: bool = True

    @property
    def grades(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for ev in self.evidence:
            for cid in ev.chunk_ids:
                out[cid] = max(out.get(cid, 0), ev.label.grade)
        return out

    @property
    def usable(self) -> bool:
        """True when every label could be placed (its question can be scored)."""
        return bool(self.evidence) and all(ev.chunk_ids for ev in self.evidence) and not any(
            ev.status == "unanchored" for ev in self.evidence
        )


    def problem(self) -> str | None:
        """Why an answerable question's gold does not count (``None`` when it does): the
        text after ``q07: `` in :func:`gold_warnings`."""
        if self.usable:
            return None
        if not self.has_record:
            return "no gold record"
        if not self.evidence:
            return "gold_evidence is []"
        lost = [ev for ev in self.evidence if not ev.chunk_ids or ev.status == "unanchored"]
        if len(lost) == 1:
            why = f" ({lost[0].reason})" if lost[0].reason else ""
            return f"gold label {lost[0].label.chunk_id} is in no chunk{why}"
        ids = ", ".join(ev.label.chunk_id for ev in lost)
        why = ", ".join(f"{ev.label.chunk_id}: {ev.reason}" for ev in lost if ev.reason)
        return f"gold labels {ids} are in no chunk" + (f" ({why})" if why else "")


def gold_warnings(questions: Sequence[Question], gold: dict[str, QuestionGold]) -> list[str]:
    """One line per answerable question whose gold changes a denominator, in question
    order: no gold record, ``gold_evidence: []``, or a label that names an unknown chunk
    (or one that no longer holds its claim) and could not be re-anchored, e.g.
    ``q07: gold label daeyang::chunk-099 is in no chunk (chunk id not in the index; no chunk
    holds the support_claim); the question is not measured for retrieval``.

    ``gold`` is :func:`anchor_gold`'s result. Unanswerable questions have no gold to miss.
    """
    out: list[str] = []
    for q in questions:
        qgold = gold.get(q.question_id)
        if not q.answerable:
            continue
        problem = "no gold record" if qgold is None else qgold.problem()
        if problem is not None:
            out.append(f"{q.question_id}: {problem}; the question is not measured for "
                       "retrieval")
    return out


def read_questions(path: str | Path, *, lenient: bool = False,
                   warnings: list[str] | None = None) -> list[Question]:
    """The questions of a JSONL file (file:line:field errors); a file without any question
    is an error too, since an evaluation over nothing could only pass. ``lenient``: unknown
    keys become ``warnings`` instead of errors (:func:`ragassay.jsonio.parse_record`)."""
    questions = read_jsonl(path, Question, key="question_id", lenient=lenient,
                           warnings=warnings)
    if not questions:
        raise InputError(path, "holds no questions")
    return questions


def read_gold(path: str | Path, *, lenient: bool = False,
              warnings: list[str] | None = None) -> list[GoldRecord]:
    """The gold evidence records of a JSONL file (file:line:field errors)."""
    return read_jsonl(path, GoldRecord, key="question_id", lenient=lenient, warnings=warnings)


def load_gold(path: str | Path, questions: Sequence[Question], *, lenient: bool = False,
              warnings: list[str] | None = None) -> dict[str, GoldRecord]:
    """Read gold evidence and check it against the questions (file:line errors)."""
    return check_gold(read_gold(path, lenient=lenient, warnings=warnings), questions, path)


def check_gold(records: Iterable[GoldRecord], questions: Sequence[Question],
               source: str | Path = "gold") -> dict[str, GoldRecord]:
    """Gold records by question id; gold for an unknown question, a duplicate, or evidence
    for an unanswerable question is an :class:`InputError` at ``source`` (and line)."""
    by_id = {q.question_id: q for q in questions}
    out: dict[str, GoldRecord] = {}
    for rec in records:
        q = by_id.get(rec.question_id)
        if q is None:
            raise InputError(source, f"gold for unknown question {rec.question_id!r} "
                             "(not in the questions file)", line=line_of(rec), field="question_id")
        if rec.question_id in out:
            raise InputError(source, f"duplicate question_id {rec.question_id!r}",
                             line=line_of(rec), field="question_id")
        if not q.answerable and rec.gold_evidence:
            raise InputError(source, f"question {rec.question_id!r} is unanswerable but has "
                             "gold evidence; use []", line=line_of(rec), field="gold_evidence")
        out[rec.question_id] = rec
    return out


class _Texts:
    """Texts searched for needles (one per row), with two look-ups built on first use:
    each space-separated word → the rows holding it, and all texts joined by NUL with each
    row's start offset. :meth:`rows_with` finds the rows holding a needle as a substring
    without reading every text."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self._words: dict[str, list[int]] | None = None
        self._joined: tuple[str, list[int]] | None = None

    def words(self) -> dict[str, list[int]]:
        if self._words is None:
            words: dict[str, list[int]] = {}
            for row, text in enumerate(self.texts):
                for w in set(text.split(" ")):
                    words.setdefault(w, []).append(row)
            self._words = words
        return self._words

    def joined(self) -> tuple[str, list[int]]:
        if self._joined is None:
            starts, at = [], 0
            for text in self.texts:
                starts.append(at)
                at += len(text) + 1
            self._joined = ("\0".join(self.texts), starts)
        return self._joined

    def rows_with(self, needle: str) -> list[int]:
        """The rows whose text holds ``needle``, ascending.

        A needle of three or more words: a text holding it holds each inner word as a
        whole word (texts and needle have single spaces), so only the rows holding every
        inner word are checked. A shorter needle: every occurrence in the joined text,
        one per row. A needle holding the separator (or none at all): every row checked.
        """
        if not needle or "\0" in needle:
            return [r for r, t in enumerate(self.texts) if needle in t]
        inner = needle.split(" ")[1:-1]
        if inner:
            words = self.words()
            postings = sorted((words.get(w, []) for w in set(inner)), key=len)
            rows = set(postings[0])
            for p in postings[1:]:
                if not rows:
                    break
                rows.intersection_update(p)
            return sorted(r for r in rows if needle in self.texts[r])
        text, starts = self.joined()
        out: list[int] = []
        at = text.find(needle)
        while at >= 0:
            row = bisect_right(starts, at) - 1
            out.append(row)
            if row + 1 >= len(starts):
                break
            at = text.find(needle, starts[row + 1])
        return out


class _AnchorTexts:
    """What anchoring searches in one store, built once per store (``Index.cache``): every
    chunk's text normalised (for claims) and squashed (for required terms), and the same for
    the joined text of each pair of adjacent chunks, in document-then-``seq`` order."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.doc_rank = {d.doc_id: i for i, d in enumerate(index.documents)}
        self._chunks: dict[str, _Texts] = {}
        self._pairs: list[tuple[str, str, str]] | None = None  # (doc_id, chunk a, chunk b)
        self._joined: list[str] = []
        self._pair_texts: dict[str, _Texts] = {}

    @classmethod
    def of(cls, index: Index) -> _AnchorTexts:
        texts = index.cache.get("gold.anchor_texts")
        if not isinstance(texts, cls) or texts.index is not index:
            texts = index.cache["gold.anchor_texts"] = cls(index)
        return texts

    @staticmethod
    def _form(by: str) -> Callable[[str], str]:
        return normalize if by == "support_claim" else squash

    def chunks(self, by: str) -> _Texts:
        if by not in self._chunks:
            form = self._form(by)
            self._chunks[by] = _Texts([form(c.text) for c in self.index.chunks])
        return self._chunks[by]

    def pairs(self) -> list[tuple[str, str, str]]:
        if self._pairs is None:
            self._pairs, self._joined = [], []
            for doc_id in dict.fromkeys(c.doc_id for c in self.index.chunks):
                for a, b, joined in _adjacent_pairs(self.index, doc_id):
                    self._pairs.append((doc_id, a, b))
                    self._joined.append(joined)
        return self._pairs

    def pair_texts(self, by: str) -> _Texts:
        if by not in self._pair_texts:
            self.pairs()
            form = self._form(by)
            self._pair_texts[by] = _Texts([form(t) for t in self._joined])
        return self._pair_texts[by]


def _needle(label: GoldEvidence) -> tuple[str, Callable[[str], bool]]:
    """What a label's text must hold: the literal every holding text contains, and the exact
    test on a text in the label's form (normalised for a claim, squashed for terms)."""
    if label.support_claim:
        claim = normalize(label.support_claim)
        return claim, lambda text: claim in text
    patterns = [term_pattern(t) for t in label.required_terms]
    if any(p is None for p in patterns):  # a blank term never matches
        return "\0", lambda text: False
    literals = [squash(t) for t in label.required_terms]

    def holds(text: str) -> bool:
        return all(p is not None and p.search(text) is not None for p in patterns)
    return max(literals, key=len), holds


def _adjacent_pairs(index: Index, doc_id: str) -> list[tuple[str, str, str]]:
    """(chunk_a, chunk_b, their joined text) for neighbouring chunks of a document."""
    chunks = index.chunks_of(doc_id)
    pairs = []
    for a, b in zip(chunks, chunks[1:], strict=False):
        tail = b.text
        if a.char_span and b.char_span:
            overlap = a.char_span[1] - b.char_span[0]
            tail = b.text[max(overlap, 0):]
        pairs.append((a.chunk_id, b.chunk_id, a.text + tail))
    return pairs


def anchor_label(label: GoldEvidence, index: Index) -> AnchoredEvidence:
    """Place one gold label in the index; see the module docstring.

    The label's own chunk first; else the chunks holding it in the labelled document (in
    ``seq`` order), else in the first document (index order) that has one; else the first
    pair of adjacent chunks holding it together, in the same document order. The search
    goes through look-ups built once per store (:class:`_AnchorTexts`), so a label costs
    the chunks that could hold it, not every chunk; the result is that of checking every
    chunk in that order.
    """
    if not (label.support_claim or label.required_terms):
        if index.has(label.chunk_id):
            return AnchoredEvidence(label, "ok", [label.chunk_id])
        return AnchoredEvidence(label, "unanchored", [], "chunk id not in the index; the "
                                "label has no support_claim or required_terms to re-anchor by")
    by = "support_claim" if label.support_claim else "required_terms"
    texts = _AnchorTexts.of(index)
    needle, holds = _needle(label)
    if index.has(label.chunk_id) and holds(texts.chunks(by).texts[index.position(label.chunk_id)]):
        return AnchoredEvidence(label, "ok", [label.chunk_id])
    why = ("chunk id not in the index" if not index.has(label.chunk_id)
           else "chunk no longer holds the support claim")
    first = label.doc_id if label.doc_id and index.has_document(label.doc_id) else None

    def order(doc_id: str) -> int | None:  # the labelled document first, then index order
        return -1 if doc_id == first else texts.doc_rank.get(doc_id)

    chunk_texts = texts.chunks(by)
    found = [r for r in chunk_texts.rows_with(needle) if holds(chunk_texts.texts[r])]
    docs = {d: o for d in {index.chunks[r].doc_id for r in found}
            if (o := order(d)) is not None}
    if docs:
        doc_id = min(docs, key=docs.__getitem__)
        rows = set(found)
        holders = [c.chunk_id for c in index.chunks_of(doc_id)
                   if index.position(c.chunk_id) in rows]
        return AnchoredEvidence(label, "reanchored", [holders[0]],
                                f"{why}; re-anchored by {by}", holders)
    pair_texts = texts.pair_texts(by)
    pairs = texts.pairs()
    split = [(o, r) for r in pair_texts.rows_with(needle)
             if (o := order(pairs[r][0])) is not None and holds(pair_texts.texts[r])]
    if split:
        _, a, b = pairs[min(split)[1]]
        status: AnchorStatus = "split" if label.chunk_id in (a, b) else "reanchored"
        return AnchoredEvidence(label, status, [a, b], f"the {by} spans two "
                                "adjacent chunks", [a, b], split=True)
    known_doc = bool(label.doc_id) and index.has_document(label.doc_id)
    doc = index.document(label.doc_id) if known_doc else None
    if doc is not None and any(doc.dropped.values()):
        dropped = ", ".join(f"{n} {kind}" for kind, n in sorted(doc.dropped.items()) if n)
        kept = [label.chunk_id] if index.has(label.chunk_id) else []
        return AnchoredEvidence(label, "lost_in_parsing", kept,
                                f"{by} is in no chunk; the loader dropped {dropped} of "
                                f"{doc.doc_id}")
    return AnchoredEvidence(label, "unanchored", [], f"{why}; no chunk holds the {by}")


def anchor_gold(questions: Sequence[Question], gold: dict[str, GoldRecord],
                index: Index) -> dict[str, QuestionGold]:
    """Anchor the gold of every question (unanswerable questions get an empty gold)."""
    out: dict[str, QuestionGold] = {}
    for q in questions:
        rec = gold.get(q.question_id)
        evidence = [anchor_label(lbl, index) for lbl in rec.gold_evidence] if rec else []
        out[q.question_id] = QuestionGold(q.question_id, evidence, has_record=rec is not None)
    return out
