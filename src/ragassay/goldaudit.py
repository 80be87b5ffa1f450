"""The gold audit and its repair: the state of every anchored label (``ragassay gold
audit``, and every run's record) and the labels ``ragassay gold fix`` moves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .gold import ANCHOR_STATES, QuestionGold
from .schema import Question
from .store import Index


def gold_audit(questions: Sequence[Question], gold: dict[str, QuestionGold]
               ) -> dict[str, Any]:
    """The state of every gold label, as ``ragassay gold audit`` reports it and a run
    records it (``metrics.json`` → ``gold``):

    - ``labels``: the number of labels; ``states``: state → labels in it (every state of
      :data:`~ragassay.gold.ANCHOR_STATES`, 0 where none);
    - ``unusable``: ``[{question_id, problem}]``, the answerable questions whose gold does
      not count (:meth:`~ragassay.gold.QuestionGold.problem`), in question order;
    - ``reanchored``: every label not ``ok``, and ``ok``: the others, each as
      :meth:`~ragassay.gold.AnchoredEvidence.report` with ``label``, its position in the
      record, in question id then label order (a shuffled questions file records the same
      lists).

    ``gold`` is :func:`ragassay.anchor.anchor_gold`'s result.
    """
    states = dict.fromkeys(ANCHOR_STATES, 0)
    moved: list[dict[str, object]] = []
    ok: list[dict[str, object]] = []
    unusable: list[dict[str, str]] = []
    for q in questions:
        qgold = gold.get(q.question_id)
        if qgold is None:
            continue
        for i, ev in enumerate(qgold.evidence):
            states[ev.status] += 1
            (ok if ev.status == "ok" else moved).append({**ev.report(q.question_id), "label": i})
        problem = qgold.problem() if q.answerable else None
        if problem is not None:
            unusable.append({"question_id": q.question_id, "problem": problem})
    def by_id(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        return sorted(rows, key=lambda r: (str(r["question_id"]), int(str(r["label"]))))

    return {"labels": sum(states.values()), "states": states, "unusable": unusable,
            "reanchored": by_id(moved), "ok": by_id(ok)}


@dataclass(frozen=True)
class LabelFix:
    """One label ``gold fix`` moves: question, position in its record, the old and new chunk."""

    question_id: str
    label: int
    status: str
    chunk_id: str
    new_chunk_id: str
    reason: str

    def line(self) -> str:
        return (f"{self.question_id} label {self.label}: {self.chunk_id} → {self.new_chunk_id} "
                f"({self.status}: {self.reason})")


def label_fixes(questions: Sequence[Question], gold: dict[str, QuestionGold]) -> list[LabelFix]:
    """The labels whose ``chunk_id`` ``gold fix`` changes, in question then label order: a
    ``reanchored`` label moves to its first chunk (the first of a pair for a claim now split
    across two chunks, so it reads ``split`` afterwards), a ``terms_only`` label to the chunk
    holding its terms. Every other state keeps its chunk: ``ok``, ``also_in`` and ``split``
    labels are right, and ``lost_in_parsing`` / ``unanchored`` ones need a person (the audit
    lists their candidates). Fixing a fixed file changes nothing: each moved label holds in
    its new chunk, which is the first place anchoring looks.
    """
    out = []
    for q in questions:
        qgold = gold.get(q.question_id)
        for i, ev in enumerate(qgold.evidence if qgold else []):
            if ev.status in ("reanchored", "terms_only") and ev.chunk_ids[0] != ev.label.chunk_id:
                out.append(LabelFix(q.question_id, i, ev.status, ev.label.chunk_id,
                                    ev.chunk_ids[0], ev.reason))
    return out


def fixed_gold_text(path: str | Path, fixes: Sequence[LabelFix], index: Index) -> str:
    """The text of the gold file at ``path`` with ``fixes`` applied: each moved label gets
    its new ``chunk_id`` and that chunk's ``doc_id``, and keeps the id it had in
    ``previous_chunk_id`` (the first one, when it was moved before). Lines without a fix are
    kept byte for byte; a changed line is written as compact JSON in its key order."""
    import json

    by_line: dict[str, list[LabelFix]] = {}
    for fix in fixes:
        by_line.setdefault(fix.question_id, []).append(fix)
    content = Path(path).read_text(encoding="utf-8-sig")
    lines = [line + "\n" for line in content.split("\n")]  # JSON strings may hold U+2028
    lines[-1] = lines[-1][:-1]
    out = []
    for text in lines:
        if not text.strip(" \t\r\n"):
            out.append(text)
            continue
        row = json.loads(text)
        todo = by_line.get(str(row.get("question_id"))) if isinstance(row, dict) else None
        if not todo:
            out.append(text)
            continue
        for fix in todo:
            label = row["gold_evidence"][fix.label]
            label.setdefault("previous_chunk_id", fix.chunk_id)
            label["chunk_id"] = fix.new_chunk_id
            label["doc_id"] = index.chunk(fix.new_chunk_id).doc_id
        ending = text[len(text.rstrip("\r\n")):] or "\n"
        out.append(json.dumps(row, ensure_ascii=False) + ending)
    return "".join(out)


def run_gold(questions: Sequence[Question], gold: dict[str, QuestionGold]) -> dict[str, Any]:
    """What a run records of its gold (``metrics.json`` → ``gold``): :func:`gold_audit`
    without the list of ``ok`` labels (their number is in ``states``)."""
    audit = gold_audit(questions, gold)
    del audit["ok"]
    return audit
