"""The run record and the run folder: one schema, one writer, one reader.

A :class:`RunResult` is what an evaluation produced: ``metrics`` (aggregates, totals,
provenance) and one :class:`QuestionResult` per question. ``RunResult.write(folder)`` writes
the folder atomically; :func:`read_run_folder` reads one back into an equal ``RunResult``, checking
every line against the same models (errors name file, line and field). Every command that
reads a run (gate, report, compare, export-trec) goes through :func:`read_run_folder`.

Files: ``metrics.json`` (:class:`RunMetrics`, with ``schema_version``), and per question
``retrieved_chunks.jsonl`` (:class:`RetrievedRow`), ``answers.jsonl`` (:class:`AnswerRow`) and,
for a question with at least one failure label, ``failure_cases.jsonl`` (:class:`FailureRow`);
``chunks.jsonl`` (:class:`ChunkTextRow`) holds the text of every chunk the questions refer to
(retrieved, gold, in the context or cited), so ``ragassay report RUN_DIR`` can show chunk
texts later without the index (a folder without it reads with no chunk texts); the
question's record and these row models live in :mod:`ragassay.runrows` (named here too);
``summary.md`` and ``report.html`` are views rendered from the same record by
:mod:`ragassay.report` and handed to the writer (``RunResult.views``): the record does not
render itself. A run of a system under test also keeps what the system returned, as
``predictions.jsonl`` (our predictions format, in question order), and the system's identity,
``system.json``: ``ragassay run --predictions RUN/predictions.jsonl`` scores the same replies
again, without the system.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .atomic import FolderWriter, recover, write_folder
from .checks import Totals
from .collector import collector_paused
from .errors import InputError
from .jsonio import (
    batched,
    iter_jsonl,
    json_text,
    parse_record,
    read_json,
    write_jsonl,
)
from .runrows import (
    AnswerRow,
    ChunkTextRow,
    FailureRow,
    QuestionResult,
    RetrievedRow,
    RunModel,
    question_rows,
)
from .schema import Prediction
from .termsafe import unsafe_chars

RUN_SCHEMA_VERSION = 1
View = Callable[["RunResult"], str]  # a file of the run folder rendered from the record
METRICS_JSON = "metrics.json"
RETRIEVED_JSONL = "retrieved_chunks.jsonl"
ANSWERS_JSONL = "answers.jsonl"
FAILURES_JSONL = "failure_cases.jsonl"
CHUNKS_JSONL = "chunks.jsonl"
PREDICTIONS_JSONL = "predictions.jsonl"
SYSTEM_JSON = "system.json"
GROUPS = ("retrieval", "answer")


# --- metrics.json ----------------------------------------------------------------------


class Aggregate(RunModel):
    """Mean over the questions where the metric was measured, with a bootstrap 95% CI;
    ``missing`` questions were not measured, ``missing_reasons`` says why (reason → count)."""

    mean: float | None
    n: int
    missing: int
    ci_low: float | None
    ci_high: float | None
    missing_reasons: dict[str, int] = Field(default_factory=dict)


class Counts(RunModel):
    questions: int
    answerable: int
    unanswerable: int
    without_prediction: int
    answerer_errors: int


class Provenance(BaseModel):
    model_config = ConfigDict(extra="allow")

    config_path: str | None = None
    config_sha256: str = ""
    inputs_sha256: dict[str, str] = Field(default_factory=dict)
    index: dict[str, Any] = Field(default_factory=dict)
    package: dict[str, str] = Field(default_factory=dict)
    seed: int = 0


class RunMetrics(RunModel):
    """``metrics.json``."""

    schema_version: Literal[1]
    run_id: str
    mode: str
    pipeline: dict[str, Any]
    answerer: dict[str, Any]
    counts: Counts
    checks: Totals
    retrieval: dict[str, Aggregate]
    answer: dict[str, Aggregate]
    # metric → {reason: questions} for fields the data set does not have (not failures).
    not_applicable: dict[str, dict[str, int]] = Field(default_factory=dict)
    # What the user should know about how the run was measured (a capped k, gold problems).
    notes: list[str] = Field(default_factory=list)
    failures: dict[str, Any]
    cost: dict[str, Any]
    gold: dict[str, Any]
    provenance: Provenance
    timings: dict[str, Any] = Field(default_factory=dict)
    # the claim checks over the run: decided by the checks / the judge, unparsable share,
    # the rule for ``right`` (see ragassay.claimcheck)
    claims: dict[str, Any] = Field(default_factory=dict)
    # judged measures corrected by human labels (PPI++, ragassay.metrics.ppi)
    corrected: dict[str, Any] = Field(default_factory=dict)

    def means(self) -> dict[str, Aggregate]:
        """Every aggregate, retrieval then answer (the names a gate bar may use)."""
        return {**self.retrieval, **self.answer}


# In UTF-8 bytes, not characters: a folder name may have 255 bytes, and a Korean character
# takes 3 (128 Hangul characters would be 384 bytes). 128 leaves room for the suffixes of
# ragassay's temporary siblings and for a sweep's run names.
MAX_RUN_ID_BYTES = 128


def check_run_id(run_id: str, what: str = "--run-id") -> None:
    """A run id is a plain folder name: not empty, at most 128 bytes in UTF-8 (42 Korean
    characters), no path separator, leading dot (hidden folders are ragassay's temporaries),
    control character (C0, DEL, C1) or bidirectional control (U+202A-U+202E,
    U+2066-U+2069, marks): a folder name must read in ``ls`` as what it is."""
    if not run_id or not run_id.strip():
        raise InputError(what, "empty run id: give a plain folder name")
    size = len(run_id.encode("utf-8", "surrogatepass"))
    if size > MAX_RUN_ID_BYTES:
        raise InputError(what, f"run id of {size} bytes in UTF-8 ({len(run_id)} characters); "
                         f"at most {MAX_RUN_ID_BYTES} bytes: choose a shorter run id")
    bad = unsafe_chars(run_id)
    if bad:
        raise InputError(what, f"invalid run id: it holds {', '.join(bad)} (a control or "
                         "bidirectional-control character); use a plain folder name")
    if run_id.startswith(".") or any(c in run_id for c in "/\\"):
        raise InputError(what, f"invalid run id {run_id!r}: use a plain folder name (no path "
                         "separator or leading dot)")


# --- the record ------------------------------------------------------------------------


@dataclass
class RunResult:
    """One evaluation: aggregates and provenance, and every question's result."""

    metrics: RunMetrics
    questions: list[QuestionResult]
    folder: Path | None = field(default=None, compare=False)  # where it was written or read
    # {chunk_id: text} of the chunks the questions refer to (see referenced_chunk_texts),
    # for the report page; written to chunks.jsonl. Empty: the page shows ids only.
    chunk_texts: dict[str, str] = field(default_factory=dict)
    # The views written beside the record, file name → renderer (``summary.md``,
    # ``report.html``: :data:`ragassay.report.views.VIEWS`, given by whoever makes the
    # result). The record does not render itself: it only writes what it is handed.
    views: Mapping[str, View] = field(default_factory=dict, compare=False, repr=False)
    # A system under test's replies as predictions and its identity (predictions.jsonl,
    # system.json); none for other runs.
    predictions: list[Prediction] = field(default_factory=list, compare=False)
    system: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def run_id(self) -> str:
        return self.metrics.run_id

    @property
    def totals(self) -> Totals:
        return self.metrics.checks

    def question(self, question_id: str) -> QuestionResult:
        return next(q for q in self.questions if q.question_id == question_id)

    def write(self, folder: str | Path, *, force: bool = False,
              views: Mapping[str, View] | None = None) -> Path:
        """Write the run folder atomically (refused when it exists, unless ``force``): the
        record's files, then each view (``views``, else the result's own), then
        ``metrics.json``."""
        chosen = self.views if views is None else views
        with collector_paused():  # see ragassay.collector
            self.folder = write_folder(folder, partial(self._fill, views=chosen), force=force)
        return self.folder

    def _fill(self, out: FolderWriter, views: Mapping[str, View]) -> None:
        t0 = time.perf_counter()
        # The row files are streamed, a batch of questions at a time: a run of 100,000
        # questions never holds its rows as one text (or as row models) in memory.
        with contextlib.ExitStack() as stack:
            files = [stack.enter_context(out.open(name))
                     for name in (RETRIEVED_JSONL, ANSWERS_JSONL, FAILURES_JSONL)]
            for batch in batched(self.questions, 1000):
                rows = [question_rows(self.run_id, q) for q in batch]
                for i, fh in enumerate(files):
                    write_jsonl(fh, (row for r in rows if (row := r[i]) is not None),
                                batch=len(batch))
        with out.open(CHUNKS_JSONL) as fh:
            write_jsonl(fh, ({"chunk_id": cid, "text": text}
                             for cid, text in self.chunk_texts.items()))
        if self.predictions:
            with out.open(PREDICTIONS_JSONL) as fh:
                write_jsonl(fh, (p.model_dump(mode="json", exclude_defaults=True)
                                 | {"answer": p.answer.model_dump(mode="json")}
                                 for p in self.predictions))
        if self.system is not None:
            out.text(SYSTEM_JSON, json_text(self.system))
        for name, render in views.items():
            out.text(name, render(self))
        # metrics.json last, with the time the other files took (it is their only record)
        self.metrics.timings["write_s"] = time.perf_counter() - t0
        out.text(METRICS_JSON, json_text(self.metrics.model_dump(mode="json")))


# --- reading ---------------------------------------------------------------------------


def _need(path: Path) -> Path:
    if not path.is_file():
        raise InputError(path, "file not found: is this a run folder? (expected "
                         f"{METRICS_JSON}, {ANSWERS_JSONL}, {RETRIEVED_JSONL}, {FAILURES_JSONL})")
    return path


def read_metrics(run_dir: str | Path) -> RunMetrics:
    """``metrics.json`` of a run folder, checked (field named on error)."""
    path = _need(Path(run_dir) / METRICS_JSON)
    data = read_json(path)
    if isinstance(data, dict) and data.get("schema_version") != RUN_SCHEMA_VERSION:
        got = data.get("schema_version")
        raise InputError(path, f"run folder schema_version {got!r}, this ragassay reads "
                         f"{RUN_SCHEMA_VERSION}: rerun the evaluation with this version",
                         field="schema_version")
    return parse_record(RunMetrics, data, path)


def _read_rows(path: Path, model: type[Any], key: str = "question_id"
               ) -> dict[str, tuple[int, Any]]:
    rows: dict[str, tuple[int, Any]] = {}
    for line, data in iter_jsonl(_need(path)):
        row = parse_record(model, data, path, line)
        value = getattr(row, key)
        if value in rows:
            raise InputError(path, f"duplicate {key} {value!r} (first on line "
                             f"{rows[value][0]})", line=line, field=key)
        rows[value] = (line, row)
    return rows


def read_run_folder(run_dir: str | Path) -> RunResult:
    """Read a run folder written by this version back into its :class:`RunResult` (after
    finishing or rolling back a replacement of it that was interrupted)."""
    run_dir = Path(run_dir)
    recover(run_dir)
    metrics = read_metrics(run_dir)
    retrieved = _read_rows(run_dir / RETRIEVED_JSONL, RetrievedRow)
    answers = _read_rows(run_dir / ANSWERS_JSONL, AnswerRow)
    failures = _read_rows(run_dir / FAILURES_JSONL, FailureRow)
    for name, rows in ((RETRIEVED_JSONL, retrieved), (FAILURES_JSONL, failures)):
        for qid, (line, _) in rows.items():
            if qid not in answers:
                raise InputError(run_dir / name, f"question {qid!r} has no row in "
                                 f"{ANSWERS_JSONL}", line=line, field="question_id")
    questions = []
    for qid, (line, a) in answers.items():
        if qid not in retrieved:
            raise InputError(run_dir / ANSWERS_JSONL, f"question {qid!r} has no row in "
                             f"{RETRIEVED_JSONL}", line=line, field="question_id")
        r = retrieved[qid][1]
        f = failures.get(qid, (0, None))[1]
        questions.append(QuestionResult(
            question_id=qid, question=a.question, topic=a.topic, answerable=a.answerable,
            gold_grades=r.gold_grades, gold_alternatives=r.gold_alternatives,
            retrieved=r.retrieved, gold_rank_in_index=r.gold_rank_in_index,
            retrieval=r.metrics, answer=a.answer,
            context_chunk_ids=a.context_chunk_ids, scores=a.scores, missing=a.missing,
            usage=a.usage, judge=a.judge, claims=a.claims, latency_ms=a.latency_ms,
            failures=f.evidence if f is not None else {}, checks=a.checks,
            not_measured=a.not_measured))
    texts: dict[str, str] = {}
    if (run_dir / CHUNKS_JSONL).is_file():  # optional: older folders have none
        texts = {cid: row.text for cid, (_, row) in
                 _read_rows(run_dir / CHUNKS_JSONL, ChunkTextRow, "chunk_id").items()}
    return RunResult(metrics, questions, run_dir, texts)
