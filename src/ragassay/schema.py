"""Records that cross module boundaries: documents, chunks, questions, gold, predictions.

The file readers (:mod:`ragassay.jsonio`) validate every line against these models and name
the file, line and field of what is wrong.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, Strict, field_validator

SCHEMA_VERSION = 1  # of index.json (the run folder has its own, runfolder.RUN_SCHEMA_VERSION)


# JSON has no NaN or Infinity (Python's reader accepts them): refused in every record, and a
# boolean must be a JSON boolean, not "yes" or 1.
StrictBool = Annotated[bool, Strict()]


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    # The JSONL line the record came from, for errors found after reading.
    _line: int | None = PrivateAttr(default=None)


# --- documents and chunks -------------------------------------------------------------


class Document(_Record):
    doc_id: str
    title: str = ""
    source_path: str = ""
    format: str = ""
    num_pages: int | None = None
    sha256: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    # Content the text-only loaders could not keep ({"tables": 2, "images": 1}); the
    # diagnosis links missing evidence to it.
    dropped: dict[str, int] = Field(default_factory=dict)


class Chunk(_Record):
    chunk_id: str
    doc_id: str
    title: str = ""
    section: str | None = None
    text: str
    char_span: tuple[int, int] | None = None
    page_span: tuple[int, int] | None = None
    seq: int = 0


# --- questions and gold ---------------------------------------------------------------


def _as_list(value: Any) -> Any:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return value


class Question(_Record):
    question_id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answerable: StrictBool
    query_type: str | None = None
    expected_answer: str | None = None
    expected_terms: list[str] = Field(default_factory=list)
    must_contain: list[str] = Field(default_factory=list)
    topic: str | None = None

    _lists = field_validator("expected_terms", "must_contain", mode="before")(_as_list)


class GoldEvidence(_Record):
    chunk_id: str = Field(min_length=1)
    doc_id: str = ""
    required_terms: list[str] = Field(default_factory=list)
    support_claim: str | None = None
    page_span: tuple[int, int] | None = None
    grade: int = 1

    _lists = field_validator("required_terms", mode="before")(_as_list)


class GoldRecord(_Record):
    question_id: str = Field(min_length=1)
    gold_evidence: list[GoldEvidence]


# --- predictions (built-in pipeline or bring-your-own) --------------------------------

AnswerStatus = Literal["supported", "insufficient", "abstained"]


class RetrievedChunk(_Record):
    chunk_id: str
    score: float | None = None


class Citation(_Record):
    chunk_id: str
    page: int | None = None


class Answer(_Record):
    text: str = ""
    status: AnswerStatus
    citations: list[Citation] = Field(default_factory=list)


class Usage(_Record):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Prediction(_Record):
    question_id: str
    retrieved: list[RetrievedChunk] = Field(default_factory=list)
    answer: Answer
    usage: Usage | None = None
    latency_ms: dict[str, float] | float | None = None
