"""Questions and gold evidence: reading, cross-checks, and the anchored gold of a question.

Gold labels name chunk ids, and chunk ids change whenever documents are re-chunked. A label
that carries its `support_claim` (or `required_terms`) can be found again: each label is
checked against the index and, when its chunk is gone or no longer holds the claim, moved to
the chunk(s) that do. Every label gets a state with its evidence
(:func:`ragassay.anchor.anchor_label`, into an :class:`AnchoredEvidence`); a label that
cannot be placed fails its question as an evaluation failure instead of silently scoring it.
:mod:`ragassay.goldaudit` reports the states (``ragassay gold audit``, and every run's
record) and writes repaired labels (``ragassay gold fix``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .errors import InputError
from .jsonio import line_of, read_jsonl
from .schema import GoldEvidence, GoldRecord, Question

AnchorStatus = Literal["ok", "also_in", "reanchored", "terms_only", "split", "lost_in_parsing",
                       "unanchored"]
ANCHOR_STATES: tuple[str, ...] = ("ok", "also_in", "reanchored", "terms_only", "split",
                                  "lost_in_parsing", "unanchored")
"""Every state a label can be in, in the order anchoring tries them (docs/formats.md)."""


@dataclass
class AnchoredEvidence:
    """One gold label after checking it against the index: its state and the evidence for it.

    ``chunk_ids`` are where the evidence is now: the chunks that each hold it alone
    (alternatives: a hit on any of them finds the label), or, for a ``split`` claim, the
    adjacent chunks (two or more) that hold it together; none when it is nowhere.
    ``candidates`` are the other chunks worth a look (holders in other documents, the
    nearest chunks of an unanchored label), with ``similarity`` beside them when they only
    resemble the label.
    """

    label: GoldEvidence
    status: AnchorStatus
    chunk_ids: list[str]
    reason: str = ""
    candidates: list[str] = field(default_factory=list)
    split: bool = False  # the claim is held only by adjacent chunks together
    similarity: list[float] = field(default_factory=list)  # one per candidate, or none

    @property
    def alternatives(self) -> bool:
        """True when the label has several chunks and each holds it alone."""
        return not self.split and len(self.chunk_ids) > 1

    def report(self, question_id: str) -> dict[str, object]:
        return {
            "question_id": question_id,
            "labelled_chunk_id": self.label.chunk_id,
            "status": self.status,
            "chunk_ids": self.chunk_ids,
            "reason": self.reason,
            "candidates": self.candidates,
            "similarity": self.similarity,
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
    def alternatives(self) -> dict[str, str]:
        """Gold chunk → the gold chunk it stands for, for every chunk that is one of several
        holders of a relevant label (grade >= 1; ``also_in``, a ``reanchored`` claim with
        several holders): the chunks of a label, and of labels that share a chunk, are one
        relevant item, counted under the first of them
        (:func:`ragassay.metrics.retrieval.retrieval_scores`)."""
        order: dict[str, int] = {}
        for ev in self.evidence:
            for cid in ev.chunk_ids:
                order.setdefault(cid, len(order))
        parent = {c: c for c in order}

        def root(c: str) -> str:
            while parent[c] != c:
                c = parent[c]
            return c
        for ev in self.evidence:
            if ev.alternatives and ev.label.grade >= 1:  # a judged-non-relevant label: apart
                for cid in ev.chunk_ids[1:]:
                    a, b = root(ev.chunk_ids[0]), root(cid)
                    if a != b:  # the chunk seen first stands for the group
                        lo, hi = sorted((a, b), key=order.__getitem__)
                        parent[hi] = lo
        return {c: r for c in order if (r := root(c)) != c}

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

    ``gold`` is :func:`ragassay.anchor.anchor_gold`'s result. Unanswerable questions have no
    gold to miss.
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
