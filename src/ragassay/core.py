# Over 400 lines: the evaluation's stages (predict, score, judge) share one unit protocol; to split.
"""The evaluation core and the public Python API: questions, gold, predictions and evidence in,
a :class:`~ragassay.runfolder.RunResult` out.

    load → predict → score → aggregate → RunResult

Every command (`run`, `sweep`, the contract command) and the API go through the same
functions, so a verdict is computed once per question and every output renders that record.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from . import progress as stages
from .aggregate import summarize
from .anchor import anchor_gold
from .answer.prompt import TOKENIZER, build_prompt, count_tokens
from .checks import question_checks
from .config import EvalConfig
from .contexts import place_texts
from .diagnose import Case, diagnose
from .errors import InputError
from .executor import Executor, LocalExecutor, split
from .gold import check_gold, gold_warnings
from .inputs import Inputs, Predicted, gold_rows
from .metrics.answer import DEFAULT_DECLINE_PHRASES, AnswerScores, score_answer
from .metrics.retrieval import retrieval_scores
from .predictions import check_predictions, context_of, load_predictions
from .reasons import (
    NO_GOLD,
    NO_PREDICTION,
    UNANSWERABLE,
    asked_and_prevented,
    missing_reasons,
)
from .report.views import VIEWS
from .runfolder import (
    QuestionResult,
    RankedChunk,
    RunResult,
    referenced_chunk_texts,
)
from .schema import Chunk, GoldRecord, Prediction, Question
from .store import Index, store_of_chunks

if TYPE_CHECKING:  # the pipeline pulls in retrievers and embedders: imported when used
    from .endpoint import EndpointConfig
    from .pipeline import Pipeline
    from .retrieve import Ranking

@dataclass
class Work:
    """What every unit of an evaluation reads: the config and the inputs. An executor sends
    it to each worker once (:mod:`ragassay.executor`); a worker builds its own pipeline
    from it, when a unit first needs one (the pipeline is not sent: its clients and search
    structures are rebuilt, not pickled)."""

    cfg: EvalConfig
    inputs: Inputs
    built: Pipeline | None = None

    def pipeline(self) -> Pipeline:
        if self.built is None:
            from .pipeline import Pipeline

            self.built = Pipeline(self.inputs.store, self.cfg)
        return self.built

    def __getstate__(self) -> dict[str, Any]:
        return {"cfg": self.cfg, "inputs": self.inputs, "built": None}


def work_of(executor: Executor, cfg: EvalConfig, inputs: Inputs,
            pipeline: Pipeline | None = None) -> Work:
    """The one :class:`Work` of ``cfg`` and ``inputs`` for ``executor``'s life (so that a
    sweep's settings send it to the workers once); ``pipeline``, when given, is the one the
    local executor's units use."""
    work: Work = executor.keep(("work", id(cfg), id(inputs)), lambda: Work(cfg, inputs))
    if pipeline is not None and work.built is None:
        work.built = pipeline
    return work


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
                       until=_deadline_s(endpoint.run_timeout_s))
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


def served_concurrency(endpoint: EndpointConfig) -> int:
    """The calls in flight an endpoint takes: its ``concurrency``, else what the server says
    (:attr:`~ragassay.endpoint.OpenAICompatClient.concurrency`), asked once by the driver so
    that the workers share out one number."""
    if endpoint.concurrency is not None:
        return endpoint.concurrency
    from .endpoint import OpenAICompatClient

    with OpenAICompatClient(endpoint) as client:
        return client.concurrency


def _deadline_s(seconds: float | None) -> float | None:
    """The run's deadline as wall-clock time: the one clock every worker (and machine)
    shares; each worker turns what is left of it into its own ``run_timeout_s``."""
    return None if seconds is None else time.time() + seconds


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


# --- score -------------------------------------------------------------------------------


def score_question(cfg: EvalConfig, inputs: Inputs, q: Question, pred: Prediction | None, *,
                   k: int, threshold: float | None = None, ranking: Ranking | None = None,
                   not_measured: str = NO_PREDICTION) -> QuestionResult:
    """Retrieval metrics, answer scores, checks, token use and failure labels of a question."""
    qgold = inputs.gold[q.question_id]
    grades = qgold.grades if qgold.usable else {}
    gold_ids = [c for c, g in grades.items() if g >= 1]
    alternatives = qgold.alternatives if qgold.usable else {}
    ks = sorted({*cfg.retrieval_cutoffs(), k})
    base = {"question_id": q.question_id, "question": q.question, "topic": q.topic,
            "answerable": q.answerable, "gold_grades": {c: grades[c] for c in gold_ids},
            "gold_alternatives": alternatives}
    if pred is None and ranking is not None and not_measured != NO_PREDICTION:
        return _score_unanswered(cfg, inputs, q, ranking, base, grades=grades, ks=ks, k=k,
                                 threshold=threshold, not_measured=not_measured)
    if pred is None:  # reported, never silently dropped or scored as wrong
        retrieval = retrieval_scores([], {}, ks=ks)
        names = [*retrieval, *cfg.metrics.answer]
        return QuestionResult(
            **base, retrieved=[], retrieval=retrieval, answer=None, context_chunk_ids=[],
            scores=dict.fromkeys(AnswerScores().to_dict()),
            missing=dict.fromkeys(names, not_measured),
            failures={"evaluation_failure.metric_missing": {"missing": {"all": not_measured}}},
            checks=question_checks(answerable=q.answerable, retrieval={}, scores={}, k=k),
            not_measured=not_measured)
    ranked = context_of(pred, len(pred.retrieved) or 1, threshold)
    context = ranked[:k]
    score_of = {h.chunk_id: h.score for h in reversed(pred.retrieved)}
    retrieval = retrieval_scores(ranked, grades, ks=ks, hit_policy=cfg.metrics.hit_policy,
                                 alternatives=alternatives)
    scores = score_answer(
        q, pred.answer, context_ids=context, gold_ids=gold_ids, chunk_texts=inputs.chunk_texts,
        decline_phrases=(*DEFAULT_DECLINE_PHRASES, *cfg.decline_phrases),
    ).to_dict()
    checks = question_checks(answerable=q.answerable, retrieval=retrieval, scores=scores, k=k)
    missing = missing_reasons(q, retrieval, scores)
    store = inputs.store
    index_ranks = ({cid: ranking.rank_of(store.position(cid)) for cid in grades
                    if store.has(cid)} if ranking is not None else {})
    case = Case(
        question=q, gold=qgold, ranked=ranked, scores=[score_of[c] for c in ranked],
        context_ids=context, answer=pred.answer, answer_scores=scores, retrieval=retrieval,
        top_k=k, index=store, checks=checks, missing=asked_and_prevented(cfg, missing),
        index_ranks=index_ranks,
    )
    gold_set = set(gold_ids)
    return QuestionResult(
        **base,
        retrieved=[RankedChunk(rank=i, chunk_id=c, score=score_of[c], gold=c in gold_set)
                   for i, c in enumerate(ranked, 1)],
        gold_rank_in_index=index_ranks, retrieval=retrieval,
        answer=pred.answer.model_copy(), context_chunk_ids=context, scores=scores,
        missing=missing, usage=priced(cfg, usage_of(q, pred, context, store)),
        latency_ms=pred.latency_ms, failures=diagnose(case, cfg.diagnose), checks=checks)


def _score_unanswered(cfg: EvalConfig, inputs: Inputs, q: Question, ranking: Ranking,
                      base: dict[str, Any], *, grades: dict[str, int], ks: list[int],
                      k: int, threshold: float | None, not_measured: str) -> QuestionResult:
    """A question the pipeline retrieved for but whose answer call failed: its retrieval
    metrics and ``found`` check from the ranking (the hits the answerer would have read),
    every answer metric None with the failure as the reason, ``not_measured`` set."""
    from .pipeline import answer_hits

    hits = answer_hits(ranking, k, threshold)
    score_of: dict[str, float] = {}
    for h in hits:
        score_of.setdefault(h.chunk_id, h.score)
    ranked = list(score_of)
    retrieval = retrieval_scores(ranked, grades, ks=ks, hit_policy=cfg.metrics.hit_policy,
                                 alternatives=base["gold_alternatives"])
    scores: dict[str, Any] = dict.fromkeys(AnswerScores().to_dict())
    no_gold = UNANSWERABLE if not q.answerable else NO_GOLD
    missing = {name: no_gold for name, v in retrieval.items() if v is None}
    missing.update(dict.fromkeys(cfg.metrics.answer, not_measured))
    store = inputs.store
    gold_set = {c for c, g in grades.items() if g >= 1}
    return QuestionResult(
        **base,
        retrieved=[RankedChunk(rank=i, chunk_id=c, score=score_of[c], gold=c in gold_set)
                   for i, c in enumerate(ranked, 1)],
        gold_rank_in_index={cid: ranking.rank_of(store.position(cid)) for cid in grades
                            if store.has(cid)},
        retrieval=retrieval, answer=None, context_chunk_ids=ranked[:k], scores=scores,
        missing=missing,
        failures={"evaluation_failure.metric_missing": {"missing": {"answer": not_measured}}},
        checks=question_checks(answerable=q.answerable, retrieval=retrieval, scores={}, k=k),
        not_measured=not_measured)


SCORE_BATCH = 512  # questions per scoring unit sent to a worker, at most


def placed_inputs(inputs: Inputs, predicted: Predicted) -> tuple[Inputs, Predicted]:
    """The inputs and predictions with the contexts the system returned as text placed
    (:func:`ragassay.contexts.place_texts`): their texts added to the evidence, their
    questions' gold placed in them. Unchanged when no prediction carries a text (then
    also when called again on its own result)."""
    placement = place_texts(inputs.questions, inputs.gold, inputs.store, predicted.predictions)
    if not placement.placed:
        return inputs, predicted
    return (replace(inputs, store=placement.store, gold=placement.gold),
            replace(predicted, predictions=placement.predictions,
                    audit={**predicted.audit, "returned_texts": placement.audit}))


def score(cfg: EvalConfig, inputs: Inputs, predicted: Predicted, *, k: int,
          threshold: float | None = None, executor: Executor | None = None,
          times: list[float] | None = None) -> list[QuestionResult]:
    """Score and diagnose every question (through ``executor``, default local); a question
    without a prediction is not measured. ``times``, when given, receives each question's
    scoring time in seconds."""
    executor = executor or LocalExecutor()
    inputs, predicted = placed_inputs(inputs, predicted)
    items = [(q, predicted.predictions.get(q.question_id),
              predicted.rankings.get(q.question_id),
              predicted.errors.get(q.question_id, NO_PREDICTION)) for q in inputs.questions]
    with stages.bar("scoring", len(items)) as bar:
        timed = executor.map(partial(_score_unit, k=k, threshold=threshold), items,
                             work_of(executor, cfg, inputs),
                             chunk_size=executor.unit_size(len(items), most=SCORE_BATCH),
                             done=bar.advance)
    if times is not None:
        times += [seconds for _, seconds in timed]
    return [result for result, _ in timed]


def _score_unit(work: Work, chunk: list[tuple[Question, Prediction | None, Ranking | None,
                                              str]], *, k: int, threshold: float | None,
                ) -> list[tuple[QuestionResult, float]]:
    """Each question's result and the seconds scoring it took."""
    out = []
    for q, pred, ranking, not_measured in chunk:
        t0 = time.perf_counter()
        result = score_question(work.cfg, work.inputs, q, pred, k=k, threshold=threshold,
                                ranking=ranking, not_measured=not_measured)
        out.append((result, time.perf_counter() - t0))
    return out


def check_claims(cfg: EvalConfig, inputs: Inputs, results: list[QuestionResult]) -> None:
    """Claim verdicts and measures of every answer (:mod:`ragassay.claimcheck`)."""
    from .claimcheck import check_claims as run_checks

    with stages.bar("checking claims", 1) as bar:
        run_checks(cfg, inputs, results)
        bar.advance()


def judge(cfg: EvalConfig, inputs: Inputs, results: list[QuestionResult],
          executor: Executor | None = None) -> None:
    """Claim-level faithfulness by the configured LLM judge: ``judge_faithfulness`` =
    supported / judged claims against the cited chunks; a failed call leaves it not
    measured (None, with the error), never a score. On workers (``executor``) the judge's
    ``concurrency`` and ``run_timeout_s`` are shared out as the answerer's are
    (:func:`answer_all`)."""
    if cfg.judge is None:
        return
    from .endpoint import EndpointError, OpenAICompatClient
    from .judge import Judge

    class CountingJudge(Judge):
        """The judge, advancing the progress bar as each answer's judgement ends."""

        def __init__(self, client: OpenAICompatClient, step: stages.Bar) -> None:
            super().__init__(client)
            self.step = step

        def judge_answer(self, answer: Any, cited_chunks: Any, question: Any = None) -> Any:
            try:
                return super().judge_answer(answer, cited_chunks, question)
            finally:
                self.step.advance()

    todo = [r for r in results if r.answer is not None]
    store = inputs.store
    items = [(r.answer, [store.chunk(c) for c in r.scores["cited_ids"] if store.has(c)],
              r.question) for r in todo]
    verdicts: list[Any]
    if executor is None or isinstance(executor, LocalExecutor):
        with OpenAICompatClient(cfg.judge) as client, stages.bar("judging",
                                                                 len(items)) as bar:
            verdicts = CountingJudge(client, bar).judge_many(items)  # type: ignore[arg-type]
    else:
        calls = served_concurrency(cfg.judge)
        chunks = split(items, min(executor.workers, calls))
        unit = partial(_judge_unit, calls=calls // max(len(chunks), 1),
                       until=_deadline_s(cfg.judge.run_timeout_s))
        with stages.bar("judging", len(items)) as bar:
            verdicts = executor.map(unit, items, work_of(executor, cfg, inputs),
                                    chunks=chunks, done=bar.advance)
    for r, res in zip(todo, verdicts, strict=True):
        if isinstance(res, EndpointError):
            r.judge = {"error": str(res)}
            r.scores["judge_faithfulness"] = None
            r.missing["judge_faithfulness"] = f"judge call failed: {res}"
        else:
            r.judge = res.to_dict()
            r.scores["judge_faithfulness"] = res.score
            if res.score is None:
                r.missing["judge_faithfulness"] = "no claim could be judged"
            else:  # scored before the judge ran: "no judge configured" no longer holds
                r.missing.pop("judge_faithfulness", None)


def _judge_unit(work: Work, chunk: list[tuple[Any, list[Chunk], str]], *, calls: int,
                until: float | None) -> list[Any]:
    from .endpoint import OpenAICompatClient
    from .judge import Judge

    assert work.cfg.judge is not None  # judge() sends units only with a judge
    endpoint = work.cfg.judge.model_copy(update={
        "concurrency": calls,
        "run_timeout_s": None if until is None else max(until - time.time(), 0.0)})
    with OpenAICompatClient(endpoint) as client:
        return list(Judge(client).judge_many(chunk))


def answerer_prices(cfg: EvalConfig) -> tuple[float, float] | None:
    """``(prompt, completion)`` price per million tokens of the built-in pipeline's LLM
    answerer (``answerer.prompt_price_per_mtok`` / ``completion_price_per_mtok``), or
    ``None``: no price configured, an extractive answerer, or another system's predictions
    (whose calls ragassay did not make)."""
    if cfg.predictions_path is not None or cfg.system is not None \
            or cfg.answerer.kind != "llm":
        return None
    endpoint = cfg.answerer.endpoint()
    if endpoint.prompt_price_per_mtok is None or endpoint.completion_price_per_mtok is None:
        return None
    return endpoint.prompt_price_per_mtok, endpoint.completion_price_per_mtok


def priced(cfg: EvalConfig, usage: dict[str, Any]) -> dict[str, Any]:
    """``usage`` with ``cost``: its tokens at the answerer's prices (the currency is that of
    the prices), ``None`` when no price is configured — unknown, never 0. A question
    answered without a call (nothing retrieved) costs 0; a reply from the cache is priced
    like the call that produced it (its token counts are that call's)."""
    prices = answerer_prices(cfg)
    cost = None
    if prices is not None:
        cost = (usage["prompt_tokens"] * prices[0]
                + usage["completion_tokens"] * prices[1]) / 1_000_000
    return {**usage, "cost": cost}


def usage_of(q: Question, pred: Prediction, context: list[str], store: Index) -> dict[str, Any]:
    """Tokens of the answerer call: as reported by the system, else counted from its prompt."""
    if pred.usage is not None:  # the built-in pipeline marks what it counted itself
        source = (pred.usage.model_extra or {}).get("source", "reported")
        counts = pred.usage.model_dump(include={"prompt_tokens", "completion_tokens"})
        return {**counts, "source": source,
                "tokenizer": TOKENIZER if source == "counted" else None}
    chunks = [store.chunk(c) for c in context]
    return {"prompt_tokens": count_tokens(build_prompt(q.question, chunks)),
            "completion_tokens": count_tokens(pred.answer.text), "source": "counted",
            "tokenizer": TOKENIZER}


# --- the public API ----------------------------------------------------------------------


def evaluate_rag(questions: Sequence[Question], gold: Iterable[GoldRecord],
                 predictions: Iterable[Prediction], evidence: Index | Iterable[Chunk],
                 config: EvalConfig | None = None, *, run_id: str = "api") -> RunResult:
    """Score a system's predictions against gold evidence, in memory.

    ``questions``, ``gold`` and ``predictions`` are the records the file readers produce
    (:func:`ragassay.read_questions` …); ``evidence`` is a loaded index or the chunks
    themselves. Ids are checked as the file readers check them (:class:`InputError`).
    Questions without a prediction are reported as not measured. Nothing is written:
    call ``result.write(folder)`` for a run folder.
    """
    cfg = config or EvalConfig()
    store = evidence if isinstance(evidence, Index) else store_of_chunks(list(evidence),
                                                                          "(in memory)")
    questions = list(questions)
    gold_records = check_gold(gold, questions)
    anchored = anchor_gold(questions, gold_records, store)
    inputs = Inputs(questions, anchored, store, warnings=gold_warnings(questions, anchored))
    predicted = Predicted(check_predictions(predictions, questions, store))
    k = cfg.pipeline.top_k
    results = score(cfg, inputs, predicted, k=k)
    check_claims(cfg, inputs, results)
    judge(cfg, inputs, results)
    metrics = summarize(cfg, inputs, results, run_id=run_id, mode="predictions", k=k,
                        notes=inputs.warnings)
    return RunResult(metrics, results,
                     chunk_texts=referenced_chunk_texts(results, inputs.chunk_texts),
                     views=VIEWS)
