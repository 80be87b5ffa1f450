"""The predict stage: the configured system's predictions, read from its file, asked of the
system under test, or produced by the built-in pipeline (retrieval in batches of questions,
then answering) through an executor."""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from . import progress as stages
from .config import EvalConfig
from .errors import InputError
from .executor import Executor, LocalExecutor, split
from .inputs import Inputs, Predicted, gold_rows
from .metrics.answer import DEFAULT_DECLINE_PHRASES
from .predictions import check_predictions, load_predictions
from .schema import Prediction, Question
from .units import Work, deadline_s, served_concurrency, work_of

if TYPE_CHECKING:  # the pipeline pulls in retrievers and embedders: imported when used
    from .pipeline import Pipeline
    from .retrieve import Ranking


def cap_k(cfg: EvalConfig, inputs: Inputs, k: int) -> tuple[int, str | None]:
    """``k``, capped for the built-in pipeline at the number of chunks (a larger k retrieves
    nothing more), with a note saying so; a predictions file is judged at any k."""
    n = len(inputs.store.chunks)
    if cfg.predictions_path is None and cfg.system is None and k > n:
        return n, f"k={k} is more than the {n} chunks of the index: using k={n}"
    return k, None


def predict(cfg: EvalConfig, inputs: Inputs, *, k: int, threshold: float | None = None,
            pipeline: Pipeline | None = None, rankings: list[Ranking] | None = None,
            progress: bool = False, executor: Executor | None = None) -> Predicted:
    """The configured system's predictions: read from its file, or produced by the pipeline
    (retrieval in batches of questions and answering through ``executor``, default local)."""
    if cfg.predictions_path is not None:
        return Predicted(load_predictions(cfg.predictions_path, inputs.questions, inputs.store,
                                          lenient=cfg.lenient, warnings=inputs.warnings))
    if cfg.system is not None:
        return ask_system(cfg, inputs, k=k, progress=progress)
    from .pipeline import Pipeline

    executor = executor or LocalExecutor()
    if pipeline is None and isinstance(executor, LocalExecutor):
        # built before the timed stages; workers build their own (a bad config fails in the
        # first unit, as the same InputError), so the driver does not build one it never uses
        pipeline = Pipeline(inputs.store, cfg)
    work = work_of(executor, cfg, inputs, pipeline)
    timings: dict[str, float] = {}
    if not rankings:
        t0 = time.perf_counter()
        rankings = retrieve_all(work, k, executor)
        retrieve_s = time.perf_counter() - t0
        timings["retrieve_s"] = retrieve_s
        timings["retrieve_mean_ms"] = retrieve_s * 1000 / max(len(rankings), 1)
    t0 = time.perf_counter()
    preds, errors = answer_all(work, rankings, k, threshold, executor, progress=progress)
    timings["answer_s"] = time.perf_counter() - t0
    by_id = {q.question_id: r for q, r in zip(inputs.questions, rankings, strict=True)}
    return Predicted(preds, by_id, errors, timings)


def ask_system(cfg: EvalConfig, inputs: Inputs, *, k: int, progress: bool = False
               ) -> Predicted:
    """The predictions of the system under test (``cfg.system``): every question asked
    (:func:`ragassay.system.ask_all`), the replies checked as a predictions file's lines
    are; its identity in ``audit["system"]``, its calls' time in ``timings``."""
    from .system import ask_all, open_system

    assert cfg.system is not None
    t0 = time.perf_counter()
    system = open_system(cfg.system, (*DEFAULT_DECLINE_PHRASES, *cfg.decline_phrases))
    try:
        preds, errors, identity, cached = ask_all(system, cfg.system, inputs.questions, k,
                                                  progress=progress)
    finally:
        system.close()
    checked: dict[str, Prediction] = {}
    for qid, pred in preds.items():  # a reply we cannot score fails its question only
        try:
            checked.update(check_predictions([pred], inputs.questions, inputs.store,
                                             cfg.system.target))
        except InputError as exc:
            errors[qid] = f"system reply unusable: {exc.message}"
    return Predicted(checked, errors=errors,
                     timings={"system_s": time.perf_counter() - t0, "system_cached": cached},
                     audit={"system": identity})


def retrieve_all(work: Work, k: int, executor: Executor) -> list[Ranking]:
    """The ranking of every question (top ``k``, plus the rank in the whole index of its gold
    rows): :meth:`Pipeline.retrieve` here, or its batches of questions on the workers."""
    questions = work.inputs.questions
    track = gold_rows(work.inputs)
    if isinstance(executor, LocalExecutor):
        return work.pipeline().retrieve(questions, k, track=track)
    from .pipeline import RETRIEVE_BATCH

    items = [(q.question, rows) for q, rows in zip(questions, track, strict=True)]
    with stages.bar("retrieval", len(items)) as bar:
        return executor.map(partial(_retrieve_unit, k=k), items, work,
                            chunk_size=RETRIEVE_BATCH, done=bar.advance)


def _retrieve_unit(work: Work, batch: list[tuple[str, list[int]]], *, k: int
                   ) -> list[Ranking]:
    # one search call per batch, as Pipeline.retrieve makes it: the same rankings
    return work.pipeline().retriever.search([text for text, _ in batch], k,
                                            [rows for _, rows in batch])


def answer_all(work: Work, rankings: Sequence[Ranking], k: int, threshold: float | None,
           executor: Executor, *, progress: bool = False,
           ) -> tuple[dict[str, Prediction], dict[str, str]]:
    """Every question answered from its first ``k`` hits (:meth:`Pipeline.predict_many`).
    On workers, an LLM answerer's ``concurrency`` is shared out among them (the calls in
    flight stay at most ``concurrency`` over all workers; at most that many workers answer)
    and each worker gets what is left of ``run_timeout_s``; the extractive answerer is
    split in chunks for every worker."""
    questions = work.inputs.questions
    if isinstance(executor, LocalExecutor):
        return work.pipeline().predict_many(questions, rankings, k, threshold,
                                            progress=progress)
    items = list(zip(questions, rankings, strict=True))
    cfg = work.cfg.answerer
    unit = partial(_answer_unit, k=k, threshold=threshold)
    chunks = None
    if cfg.kind == "llm":
        endpoint = cfg.endpoint()
        calls = served_concurrency(endpoint)
        chunks = split(items, min(executor.workers, calls))
        unit = partial(unit, calls=calls // len(chunks),
                       until=deadline_s(endpoint.run_timeout_s))
    on = True if progress else None
    with stages.bar("answering", len(items), enabled=on) as bar:
        results = executor.map(unit, items, work, chunks=chunks, done=bar.advance)
    preds: dict[str, Prediction] = {}
    errors: dict[str, str] = {}
    for (q, _), (pred, error) in zip(items, results, strict=True):
        if pred is not None:
            preds[q.question_id] = pred
        if error is not None:
            errors[q.question_id] = error
    return preds, errors


def _answer_unit(work: Work, chunk: list[tuple[Question, Ranking]], *, k: int,
                 threshold: float | None, calls: int | None = None,
                 until: float | None = None) -> list[tuple[Prediction | None, str | None]]:
    questions = [q for q, _ in chunk]
    endpoint = None
    if calls is not None:  # an LLM answerer: this worker's share of the calls in flight
        endpoint = work.cfg.answerer.endpoint().model_copy(update={
            "concurrency": calls,
            "run_timeout_s": None if until is None else max(until - time.time(), 0.0)})
    preds, errors = work.pipeline().predict_many(questions, [r for _, r in chunk], k,
                                                 threshold, endpoint=endpoint)
    return [(preds.get(q.question_id), errors.get(q.question_id)) for q in questions]
