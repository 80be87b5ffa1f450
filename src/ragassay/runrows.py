"""A question's result and the rows of the run folder's row files it is written as.

A :class:`QuestionResult` is everything measured for one question. In the run folder it is
three rows (views of it): ``retrieved_chunks.jsonl`` (:class:`RetrievedRow`),
``answers.jsonl`` (:class:`AnswerRow`) and, with at least one failure label,
``failure_cases.jsonl`` (:class:`FailureRow`); ``chunks.jsonl`` (:class:`ChunkTextRow`) holds
the texts of the chunks the questions refer to (:func:`referenced_chunk_texts`).
:func:`question_rows` makes a question's rows as JSON values for the writer
(:mod:`ragassay.runfolder`), which reads them back through the same models.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .checks import Checks
from .schema import Answer, StrictBool


class RunModel(BaseModel):
    """A record of a run folder's files: no unknown key, no NaN or infinity."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class RankedChunk(RunModel):
    rank: int
    chunk_id: str
    score: float | None
    gold: StrictBool


class QuestionResult(RunModel):
    """Everything measured for one question (the three row files are views of it)."""

    question_id: str
    question: str
    topic: str | None = None
    answerable: StrictBool
    gold_grades: dict[str, int]  # the relevant gold chunks (grade >= 1), as anchored
    # gold chunk → the gold chunk it stands for: several holders of one label are one item
    gold_alternatives: dict[str, str] = Field(default_factory=dict)
    retrieved: list[RankedChunk]  # de-duplicated ranking the question is judged on
    gold_rank_in_index: dict[str, int] = Field(default_factory=dict)
    retrieval: dict[str, float | int | None]
    answer: Answer | None  # None: no prediction
    context_chunk_ids: list[str]
    scores: dict[str, Any]
    missing: dict[str, str] = Field(default_factory=dict)  # metric → why not measured
    usage: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    claims: dict[str, Any] | None = None  # claim verdicts (ragassay.claims.verify)
    latency_ms: dict[str, float] | float | None = None
    failures: dict[str, dict[str, Any]] = Field(default_factory=dict)  # label → evidence
    checks: Checks
    not_measured: str | None = None  # why the question has no result at all

    @property
    def gold_chunk_ids(self) -> list[str]:
        return list(self.gold_grades)

    @property
    def measured(self) -> bool:
        return self.not_measured is None


class RetrievedRow(RunModel):
    run_id: str
    question_id: str
    question: str
    gold_grades: dict[str, int]
    gold_alternatives: dict[str, str] = Field(default_factory=dict)
    retrieved: list[RankedChunk]
    gold_rank_in_index: dict[str, int]
    metrics: dict[str, float | int | None]


class AnswerRow(RunModel):
    run_id: str
    question_id: str
    question: str
    topic: str | None
    answerable: StrictBool
    answer: Answer | None
    context_chunk_ids: list[str]
    scores: dict[str, Any]
    missing: dict[str, str]
    usage: dict[str, Any] | None
    judge: dict[str, Any] | None
    claims: dict[str, Any] | None = None
    latency_ms: dict[str, float] | float | None
    checks: Checks
    not_measured: str | None


class FailureRow(RunModel):
    """A question's failure labels with their evidence, and a few facts to read it by."""

    run_id: str
    question_id: str
    question: str
    answerable: StrictBool
    failure_types: list[str]
    evidence: dict[str, dict[str, Any]]
    rank: int | None
    gold_chunk_ids: list[str]
    top_chunk_ids: list[str]
    answer_status: str | None
    answer_text: str | None
    groundedness_reason: str | None


class ChunkTextRow(RunModel):
    """``chunks.jsonl``: the text of one chunk a question refers to."""

    chunk_id: str
    text: str


def referenced_chunk_ids(q: QuestionResult) -> list[str]:
    """The chunks a question refers to: retrieved, gold, in its context, cited."""
    cited = q.scores.get("cited_ids") or []
    ids = [c.chunk_id for c in q.retrieved] + list(q.gold_grades) + q.context_chunk_ids
    ids += [str(c) for c in cited] if isinstance(cited, list) else []
    if q.answer is not None:
        ids += [c.chunk_id for c in q.answer.citations]
    return list(dict.fromkeys(ids))


def referenced_chunk_texts(questions: list[QuestionResult], texts: dict[str, str]
                           ) -> dict[str, str]:
    """``{chunk_id: text}`` of the chunks the questions refer to, by chunk id (the same for
    any order of the questions)."""
    ids = {cid for q in questions for cid in referenced_chunk_ids(q) if cid in texts}
    return {cid: texts[cid] for cid in sorted(ids)}


def _rank(value: float | int | None) -> int | None:
    return None if value is None else int(value)


def _rows(run_id: str, q: QuestionResult) -> tuple[RetrievedRow, AnswerRow, FailureRow | None]:
    base = {"run_id": run_id, "question_id": q.question_id, "question": q.question}
    retrieved = RetrievedRow(**base, gold_grades=q.gold_grades,
                             gold_alternatives=q.gold_alternatives, retrieved=q.retrieved,
                             gold_rank_in_index=q.gold_rank_in_index, metrics=q.retrieval)
    answer = AnswerRow(**base, topic=q.topic, answerable=q.answerable, answer=q.answer,
                       context_chunk_ids=q.context_chunk_ids, scores=q.scores,
                       missing=q.missing, usage=q.usage, judge=q.judge,
                       claims=q.claims, latency_ms=q.latency_ms, checks=q.checks,
                       not_measured=q.not_measured)
    failure = None
    if q.failures:
        failure = FailureRow(
            **base, answerable=q.answerable, failure_types=list(q.failures),
            evidence=q.failures, rank=_rank(q.retrieval.get("rank")),
            gold_chunk_ids=q.gold_chunk_ids, top_chunk_ids=[c.chunk_id for c in q.retrieved[:3]],
            answer_status=q.answer.status if q.answer else None,
            answer_text=q.answer.text if q.answer else None,
            groundedness_reason=q.scores.get("groundedness_reason"))
    return retrieved, answer, failure


def question_rows_reference(run_id: str, q: QuestionResult
                            ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    """The plain version of :func:`question_rows`: each row model built, then dumped."""
    retrieved, answer, failure = _rows(run_id, q)
    return (retrieved.model_dump(mode="json"), answer.model_dump(mode="json"),
            failure.model_dump(mode="json") if failure is not None else None)


# The fields of answers.jsonl (and the failure evidence) are dumped by pydantic: free-form
# values (scores, claims, evidence) take its JSON conversion. Those of retrieved_chunks.jsonl
# are typed (strings, integers, floats, flags), so they are their own JSON values.
_ANSWER_FIELDS = [name for name in AnswerRow.model_fields if name != "run_id"]
_DUMPED = {*_ANSWER_FIELDS, "failures"}


def question_rows(run_id: str, q: QuestionResult
                  ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    """A question's rows of ``retrieved_chunks.jsonl``, ``answers.jsonl`` and
    ``failure_cases.jsonl`` (None without a failure label) as JSON values: what
    :func:`question_rows_reference` gives, without building the row models (they and their
    three dumps cost 0.7 s of a 6,000-question write). A row field has the type of the
    question's field it holds, so one dump of the question gives the free-form fields."""
    d = q.model_dump(mode="json", include=_DUMPED)
    head = {"run_id": run_id, "question_id": q.question_id, "question": q.question}
    retrieved = head | {
        "gold_grades": q.gold_grades, "gold_alternatives": q.gold_alternatives,
        "retrieved": [{"rank": c.rank, "chunk_id": c.chunk_id, "score": c.score,
                       "gold": c.gold} for c in q.retrieved],
        "gold_rank_in_index": q.gold_rank_in_index, "metrics": q.retrieval}
    answer = {"run_id": run_id} | {name: d[name] for name in _ANSWER_FIELDS}
    failure = None
    if q.failures:
        a = d["answer"]
        failure = head | {
            "answerable": q.answerable, "failure_types": list(q.failures),
            "evidence": d["failures"], "rank": _rank(q.retrieval.get("rank")),
            "gold_chunk_ids": q.gold_chunk_ids,
            "top_chunk_ids": [c.chunk_id for c in q.retrieved[:3]],
            "answer_status": a["status"] if a else None,
            "answer_text": a["text"] if a else None,
            "groundedness_reason": d["scores"].get("groundedness_reason")}
    return retrieved, answer, failure
