"""Records that cross module boundaries: documents, chunks, questions, gold, predictions.

The file readers (:mod:`ragassay.jsonio`) validate every line against these models and name
the file, line and field of what is wrong.

Nothing is coerced: an id is a JSON string (not ``12``), a boolean a JSON boolean (not
``"yes"`` or ``1``), a grade, count or page a JSON integer (not ``"2"`` or ``2.5``), a score a
JSON number (not ``"0.9"``; NaN and Infinity are refused everywhere). An unknown key in a
record is an error naming it, with the closest known field (``must_contian`` → did you mean
``must_contain``?); what a user wants to carry along goes in a ``metadata`` object, kept
and never read.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    Strict,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from . import defaults

SCHEMA_VERSION = 2  # of index.json (the run folder has its own, runfolder.RUN_SCHEMA_VERSION)


StrictBool = Annotated[bool, Strict()]
StrictStr = Annotated[str, Strict()]
# Ids read in another Unicode form than NFC (a macOS file name gives NFD: "e" + U+0301 for
# "é"), as written: the run notes them (:func:`take_renormalised_ids`).
_RENORMALISED: list[str] = []


def _id(value: str) -> str:
    """An id that is not only whitespace, in Unicode NFC: "café" typed on Linux (NFC) and
    the same word from a macOS file name (NFD) are one id, as a reader sees them."""
    if not value.strip():
        raise PydanticCustomError("blank_id", "an id may not be only whitespace")
    if value.isascii() or unicodedata.is_normalized("NFC", value):
        return value
    _RENORMALISED.append(value)
    return unicodedata.normalize("NFC", value)


def take_renormalised_ids() -> list[str]:
    """The ids read since the last call that were not in NFC (as written), once each, and
    forget them: the note a run makes (``2 ids were read in Unicode NFC form: ...``)."""
    out = list(dict.fromkeys(_RENORMALISED))
    _RENORMALISED.clear()
    return out


# An identifier: a non-empty JSON string, not only whitespace, read in Unicode NFC.
Id = Annotated[str, Strict(), Field(min_length=1), AfterValidator(_id)]
StrictInt = Annotated[int, Strict()]
# Token counts, character offsets, sequence numbers.
Count = Annotated[int, Strict(), Field(ge=0)]
# Pages are numbered from 1 (PDF pages, sectioned JSON `page`).
Page = Annotated[int, Strict(), Field(ge=1)]
# A JSON number (an integer is a number too); never a string.
Number = Annotated[float, Strict()]
# A time of one call or stage: at most 10^10 ms (four months), so that sums over a
# million questions stay finite.
MAX_MILLISECONDS = 1e10
Milliseconds = Annotated[float, Strict(), Field(ge=0, le=MAX_MILLISECONDS)]
# Free-form data a user carries along in a record: kept, never read.
Metadata = dict[str, Any]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class _LineRecord(_Record):
    """A record of a user's JSONL file (questions, gold, predictions): it keeps the line it
    came from (``_line``, set by the reader), for errors found after reading. Only these
    (an index's million chunks need none). The line is kept with pydantic's private values
    (copied, pickled and compared with the record, as a private attribute is) but through
    a property: a declared private attribute costs a call per record built, a third of
    the time of validating a question."""

    @property
    def _line(self) -> int | None:
        private = self.__pydantic_private__
        return None if private is None else private.get("_line")

    @_line.setter
    def _line(self, line: int | None) -> None:
        object.__setattr__(self, "__pydantic_private__",
                           {**(self.__pydantic_private__ or {}), "_line": line})


def _ordered_span(span: tuple[int, int] | None, what: str) -> tuple[int, int] | None:
    if span is not None and span[0] > span[1]:
        raise ValueError(f"{what} [{span[0]}, {span[1]}] ends before it starts")
    return span


# --- documents and chunks -------------------------------------------------------------


class Document(_Record):
    doc_id: StrictStr  # a loader fills it in after creating the record
    title: StrictStr = ""
    source_path: StrictStr = ""
    format: StrictStr = ""
    num_pages: Page | None = None
    sha256: StrictStr = ""
    metadata: Metadata = Field(default_factory=dict)
    # Content the text-only loaders could not keep ({"tables": 2, "images": 1}); the
    # diagnosis links missing evidence to it.
    dropped: dict[str, Count] = Field(default_factory=dict)


# The one chunking default (characters per fixed-size window, and shared by neighbours): the
# chunker's, the index command's, the config's ``index:`` block's and the importers'.
DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP = defaults.DEFAULT_CHUNK_SIZE, defaults.DEFAULT_OVERLAP


class Chunk(_Record):
    chunk_id: Id
    doc_id: StrictStr
    title: StrictStr = ""
    section: StrictStr | None = None
    text: StrictStr
    char_span: tuple[Count, Count] | None = None
    page_span: tuple[Page, Page] | None = None
    seq: Count = 0

    @field_validator("char_span")
    @classmethod
    def _char_span(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        return _ordered_span(v, "char_span")

    @field_validator("page_span")
    @classmethod
    def _page_span(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        return _ordered_span(v, "page_span")


# --- questions and gold ---------------------------------------------------------------


def _as_list(value: Any) -> Any:
    # Documented: a single string stands for a list of one, null for none.
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return value


# A question is a sentence or a paragraph; a megabyte of text in that field is a broken file
# (and would cost minutes of matching), so it is refused.
MAX_QUESTION_CHARS = 100_000


class Question(_LineRecord):
    question_id: Id
    question: Annotated[str, Strict(), Field(min_length=1, max_length=MAX_QUESTION_CHARS)]
    answerable: StrictBool
    query_type: StrictStr | None = None
    expected_answer: StrictStr | None = None
    expected_terms: list[StrictStr] = Field(default_factory=list)
    # an item is a string, or a list of alternatives of which the answer holds any one
    must_contain: list[StrictStr | Annotated[list[StrictStr], Field(min_length=1)]] = Field(
        default_factory=list)
    topic: StrictStr | None = None
    metadata: Metadata = Field(default_factory=dict)

    _lists = field_validator("expected_terms", "must_contain", mode="before")(_as_list)


class GoldEvidence(_Record):
    chunk_id: Id
    doc_id: StrictStr = ""
    # the chunk id the label had before `ragassay gold fix` moved it (kept, never read)
    previous_chunk_id: Id | None = None
    required_terms: list[StrictStr] = Field(default_factory=list)
    support_claim: StrictStr | None = None
    page_span: tuple[Page, Page] | None = None
    grade: StrictInt = 1
    metadata: Metadata = Field(default_factory=dict)

    _lists = field_validator("required_terms", mode="before")(_as_list)

    @field_validator("page_span")
    @classmethod
    def _page_span(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        return _ordered_span(v, "page_span")


class GoldRecord(_LineRecord):
    question_id: Id
    gold_evidence: list[GoldEvidence]
    metadata: Metadata = Field(default_factory=dict)


# --- predictions (built-in pipeline or bring-your-own) --------------------------------

AnswerStatus = Literal["supported", "insufficient", "abstained"]


class RetrievedChunk(_Record):
    """One hit of a ranking: a chunk of the evidence by its ``chunk_id``, or a context as
    the system returned it, by its ``text`` (with the system's own ``doc_id`` and ``page``
    when it has them; docs/formats.md, "Contexts as text"). A hit needs one of
    ``chunk_id`` and ``text``; a hit without a ``chunk_id`` gets ``#n`` (its 1-based
    position in the list) from its :class:`Prediction`, so that a citation can name it."""

    chunk_id: Id = ""  # "" only until Prediction fills in "#n"
    score: Number | None = None
    text: Annotated[str, Strict(), Field(min_length=1)] | None = None
    doc_id: StrictStr | None = None
    page: Page | None = None

    @model_validator(mode="after")
    def _id_or_text(self) -> RetrievedChunk:
        if not self.chunk_id and self.text is None:
            raise ValueError("a retrieved item needs a chunk_id or a text")
        return self

    @model_serializer(mode="wrap")
    def _without_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # an id-only hit dumps as it always did: {chunk_id, score}
        data: dict[str, Any] = handler(self)
        for key in ("text", "doc_id", "page"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class Citation(_Record):
    """A cited chunk. ``raw``: the marker the answer's text cites it with, without
    brackets, when the citation was read from the text (the LLM answerer's ``1``,
    ``chunk-001`` or full id, see :mod:`ragassay.answer.citations`); left out of the dump
    when ``None``, so records without it read and write as before."""

    chunk_id: Id
    page: Page | None = None
    raw: StrictStr | None = None

    @model_serializer(mode="wrap")
    def _without_empty_raw(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("raw") is None:
            data.pop("raw", None)
        return data


class Answer(_Record):
    text: StrictStr = ""
    status: AnswerStatus
    citations: list[Citation] = Field(default_factory=list)


class Usage(_Record):
    # The one extra key: ``source`` ("counted", "reported", "not called"), written by the
    # built-in pipeline and read from ``model_extra`` by the run; a user's file may leave it
    # out. Any other key is refused like an unknown field of any record.
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)
    extra_keys: ClassVar[tuple[str, ...]] = ("source",)
    prompt_tokens: Count = 0
    completion_tokens: Count = 0

    @model_validator(mode="before")
    @classmethod
    def _only_source(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key not in cls.model_fields and key not in cls.extra_keys:
                    raise PydanticCustomError("extra_forbidden", "Extra inputs are not "
                                              "permitted", {"key": key})
            if "source" in data and not isinstance(data["source"], str):
                raise PydanticCustomError("source_type", "usage.source must be a string, "
                                          "got {kind}", {"kind": type(data["source"]).__name__})
        return data


class Prediction(_LineRecord):
    question_id: Id
    retrieved: list[RetrievedChunk] = Field(default_factory=list)
    answer: Answer
    usage: Usage | None = None
    latency_ms: dict[StrictStr, Milliseconds] | Milliseconds | None = None
    metadata: Metadata = Field(default_factory=dict)

    @model_validator(mode="after")
    def _number_texts(self) -> Prediction:
        for i, hit in enumerate(self.retrieved, 1):
            if not hit.chunk_id:  # a context given by its text alone: "#n", its position
                hit.chunk_id = f"#{i}"
        return self

    @property
    def has_texts(self) -> bool:
        """True when a hit carries its text (a system that returns contexts as text)."""
        return any(h.text is not None for h in self.retrieved)

    @field_validator("retrieved")
    @classmethod
    def _each_chunk_once(cls, ranking: list[RetrievedChunk]) -> list[RetrievedChunk]:
        # as trec_eval refuses a run listing one document twice for a topic (a context given
        # by its text alone has no id yet: it is named by its position after validation)
        first: dict[str, int] = {}
        for rank, hit in enumerate(ranking, start=1):
            if not hit.chunk_id:
                continue
            if hit.chunk_id in first:
                raise PydanticCustomError(
                    "duplicate_chunk", "chunk '{chunk_id}' is ranked twice (at {a} and {b}); "
                    "list each chunk once, at its best rank",
                    {"chunk_id": hit.chunk_id, "a": first[hit.chunk_id], "b": rank})
            first[hit.chunk_id] = rank
        return ranking
