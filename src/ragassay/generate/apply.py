"""``ragassay generate apply``: a generated set and a person's decisions → the reviewed set.

The decisions file is what the review page downloads (:mod:`.review_script`): a first line
``{"review": "ragassay.review/1", "set_id": ...}``, then ``{"question_id", "decision":
"accept"|"reject"|"edit", "question"?, "answer"?}`` per decided item. The reviewed set is
written to a new folder (never in place): accepted and edited items, with the set's documents,
index and configs; rejected items are left out and listed in ``review.json`` with the
undecided ones (left out too, unless ``keep_undecided``).

An edit replaces the question and/or the answer; an edited answer (parts separated by
``; `` for a two-chunk item) must still stand in its label's support sentence, so every
label stays ``ok``. Decisions made for another set (``set_id``), for an unknown question, or
given twice are bad input naming the file, line and field.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import FolderWriter
from ..errors import InputError
from ..gold import read_gold, read_questions
from ..importers.common import ImportedSet, write_set
from ..jsonio import iter_jsonl, json_text
from ..schema import GoldRecord, Question
from ..text import contains_term
from .review import REVIEW_SCHEMA, set_id

DECISIONS = ("accept", "reject", "edit")


@dataclass
class Applied:
    """What apply did: question ids per outcome."""

    accepted: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)
    kept: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"kept": self.kept, "accepted": self.accepted, "edited": self.edited,
                "rejected": self.rejected, "undecided": self.undecided}


def read_decisions(path: str | Path, questions: list[Question]) -> dict[str, dict[str, Any]]:
    """The decisions by question id, checked against the set's ``questions``."""
    rows = list(iter_jsonl(path))
    if not rows:
        raise InputError(path, "holds no decisions (expected the file the review page "
                         "downloads)")
    line, head = rows[0]
    if not isinstance(head, dict) or head.get("review") != REVIEW_SCHEMA:
        raise InputError(path, f"the first line is not a review header {{\"review\": "
                         f"\"{REVIEW_SCHEMA}\", \"set_id\": ...}}", line=line, field="review")
    if head.get("set_id") != set_id(questions):
        raise InputError(path, "these decisions were made for another set (set_id "
                         f"{head.get('set_id')!r}, this set is {set_id(questions)!r})",
                         line=line, field="set_id")
    by_id = {q.question_id: q for q in questions}
    out: dict[str, dict[str, Any]] = {}
    for line, row in rows[1:]:
        if not isinstance(row, dict):
            raise InputError(path, "expected a JSON object", line=line)
        qid = row.get("question_id")
        if qid not in by_id:
            raise InputError(path, f"unknown question {qid!r}", line=line, field="question_id")
        if qid in out:
            raise InputError(path, f"a second decision for {qid}", line=line,
                             field="question_id")
        if row.get("decision") not in DECISIONS:
            raise InputError(path, f"decision must be one of {', '.join(DECISIONS)}, got "
                             f"{row.get('decision')!r}", line=line, field="decision")
        for key in ("question", "answer"):
            if key in row and (not isinstance(row[key], str) or not row[key].strip()):
                raise InputError(path, "must be a non-blank string", line=line, field=key)
        out[str(qid)] = {**row, "_line": line}
    return out


def _edited(q: Question, g: GoldRecord, row: dict[str, Any], path: Path
            ) -> tuple[Question, GoldRecord]:
    update: dict[str, Any] = {}
    if "question" in row:
        update["question"] = row["question"].strip()
    labels = list(g.gold_evidence)
    if "answer" in row and q.answerable:
        parts = [p.strip() for p in row["answer"].split(";") if p.strip()]
        if len(parts) != len(labels):
            raise InputError(path, f"the answer has {len(parts)} part(s), the item has "
                             f"{len(labels)} gold label(s); separate parts with '; '",
                             line=row["_line"], field="answer")
        for part, label in zip(parts, labels, strict=True):
            if not contains_term(label.support_claim or "", part):
                raise InputError(path, f"the edited answer {part!r} is not in its support "
                                 f"sentence {label.support_claim!r}; edit it to a phrase of "
                                 "that sentence, or reject the item", line=row["_line"],
                                 field="answer")
        labels = [lb.model_copy(update={"required_terms": [p]})
                  for p, lb in zip(parts, labels, strict=True)]
        update.update(must_contain=parts, expected_answer="; ".join(parts))
    meta = {**q.metadata, "reviewed": "edited"}
    return (q.model_copy(update={**update, "metadata": meta}),
            g.model_copy(update={"gold_evidence": labels}))


def apply_decisions(decisions: str | Path, set_dir: str | Path, out: str | Path, *,
                    command: str, keep_undecided: bool = False, force: bool = False
                    ) -> Applied:
    """Write the reviewed set of ``set_dir`` to ``out`` (see the module docstring)."""
    import yaml

    src, dest, path = Path(set_dir), Path(out), Path(decisions)
    if dest.resolve() == src.resolve():
        raise InputError(dest, "is the generated set itself; apply writes a new folder")
    questions = read_questions(src / "questions.jsonl")
    gold = {g.question_id: g for g in read_gold(src / "gold.jsonl")}
    decided = read_decisions(path, questions)
    result = Applied()
    imported = ImportedSet(source=src.as_posix(), format="ragassay generate (reviewed)")
    for q in questions:
        g = gold.get(q.question_id, GoldRecord(question_id=q.question_id, gold_evidence=[]))
        row = decided.get(q.question_id)
        what = row["decision"] if row else None
        if what == "reject" or (what is None and not keep_undecided):
            (result.rejected if what else result.undecided).append(q.question_id)
            continue
        if what == "edit":
            q, g = _edited(q, g, row or {}, path)
            result.edited.append(q.question_id)
        elif what == "accept":
            q = q.model_copy(update={"metadata": {**q.metadata, "reviewed": "accepted"}})
            result.accepted.append(q.question_id)
        else:
            result.undecided.append(q.question_id)
        imported.questions.append(q)
        imported.gold.append(g)
    result.kept = len(imported.questions)
    if not imported.questions:
        raise InputError(path, "no item is accepted or edited: the reviewed set would be "
                         "empty")
    with (src / "config.yaml").open(encoding="utf-8") as fh:
        config = yaml.safe_load(fh) or {}
    chunking = config.get("index", {})
    imported.chunking = (int(chunking.get("chunk_size", 400)), int(chunking.get("overlap", 80)))
    docs = src / "documents"
    if docs.is_dir():
        imported.files = {p.relative_to(docs).as_posix(): p.read_bytes()
                          for p in sorted(docs.rglob("*")) if p.is_file()}
    index_dir = config.get("index_dir", "index")
    if index_dir != "index":  # the set points at an index of its own: re-point from `out`
        rel = os.path.relpath((src / index_dir).resolve(), dest.resolve())
        imported.config = {"index_dir": Path(rel).as_posix(), "source_dir": None}
    imported.extra["review.json"] = json_text({"set": src.as_posix(),
                                               "decisions": path.as_posix(),
                                               **result.to_dict()})

    def copy_index(w: FolderWriter) -> None:
        own = src / "index"
        if index_dir == "index" and own.is_dir():
            for p in sorted(own.iterdir()):
                if p.is_file():
                    with w.open(f"index/{p.name}") as fh, p.open("rb") as fin:
                        while block := fin.read(1 << 20):
                            fh.write(block)

    write_set(imported, dest, command=command, force=force, report_name=None, also=copy_index)
    return result
