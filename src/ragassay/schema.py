"""Records that cross module boundaries, and reading them from JSONL / YAML.

Every reader turns bad input into an :class:`InputError` that names the file, the line
and the field, so the CLI can print one line and exit 2.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from .errors import InputError

SCHEMA_VERSION = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")
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
    answerable: bool
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


# --- readers --------------------------------------------------------------------------

M = TypeVar("M", bound=BaseModel)


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err.get("loc", ())) or "(record)"
    return field, err.get("msg", "invalid value")


def parse_record(model: type[M], data: Any, path: str | Path, line: int | None = None) -> M:
    """Validate one decoded record, turning a pydantic error into an :class:`InputError`."""
    if not isinstance(data, dict):
        raise InputError(path, f"expected a JSON object, got {type(data).__name__}", line=line)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        field, msg = _first_error(exc)
        raise InputError(path, msg, line=line, field=field) from None


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, decoded_value)`` for each non-blank line, streaming."""
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "file not found")
    with p.open(encoding="utf-8") as fh:
        for line_no, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                yield line_no, json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(p, f"malformed JSON ({exc.msg}, column {exc.colno})",
                                 line=line_no) from None


def read_jsonl(path: str | Path, model: type[M], *, key: str | None = None) -> list[M]:
    """Read a JSONL file of ``model`` records; with ``key``, refuse duplicate keys.

    Each record remembers its line number in ``record._line`` for later errors.
    """
    seen: dict[str, int] = {}
    out: list[M] = []
    for line_no, data in iter_jsonl(path):
        rec = parse_record(model, data, path, line_no)
        if key is not None:
            value = getattr(rec, key)
            if value in seen:
                raise InputError(path, f"duplicate {key} {value!r} (first on line {seen[value]})",
                                 line=line_no, field=key)
            seen[value] = line_no
        if isinstance(rec, _Record):
            rec._line = line_no
        out.append(rec)
    return out


def line_of(record: BaseModel) -> int | None:
    """The JSONL line a record was read from, when it was read by :func:`read_jsonl`."""
    return record._line if isinstance(record, _Record) else None


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping, with the line of a syntax error."""
    p = Path(path)
    if not p.is_file():
        raise InputError(p, "file not found")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(p, f"malformed YAML ({getattr(exc, 'problem', exc)})", line=line) from None
    if not isinstance(data, dict):
        raise InputError(p, "expected a mapping at the top level")
    return data


def write_jsonl(path: str | Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as UTF-8 JSONL with stable key order (for byte-identical reruns)."""
    with Path(path).open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n")
