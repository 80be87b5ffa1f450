"""The score stage: each question's retrieval metrics, answer scores, checks, token use and
failure labels (:func:`score`), then the claim checks and the LLM judge over the answers
(:func:`check_claims`, :func:`judge`), through an executor."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from . import progress as stages
from .answer.prompt import TOKENIZER, build_prompt, count_tokens
from .checks import question_checks
from .collector import collector_paused
from .config import EvalConfig
from .contexts import place_texts
from .diagnose import Case, claim_evidence, diagnose
from .executor import Executor, LocalExecutor, split
from .inputs import Inputs, Predicted
from .metrics.answer import DEFAULT_DECLINE_PHRASES, AnswerScores, score_answer
from .metrics.retrieval import retrieval_scores
from .predictions import context_of
from .reasons import (
    NO_GOLD,
    NO_PREDICTION,
    UNANSWERABLE,
    asked_and_prevented,
    missing_reasons,
)
from .runrows import QuestionResult
from .schema import Chunk, Prediction, Question
from .store import Index
from .units import Work, deadline_s, served_concurrency, work_of

if TYPE_CHECKING:
    from .retrieve import Ranking


@dataclass(frozen=True)
class _Settings:
    """What every question of a unit reads from the config, worked out once per unit (the
    cutoffs cost a measure parse per configured metric and question)."""

    ks: list[int]
    decline_phrases: tuple[str, ...]

    @classmethod
    def of(cls, cfg: EvalConfig, k: int) -> _Settings:
        return cls(sorted({*cfg.retrieval_cutoffs(), k}),
                   (*DEFAULT_DECLINE_PHRASES, *cfg.decline_phrases))


def score_question(cfg: EvalConfig, inputs: Inputs, q: Question, pred: Prediction | None, *,
                   k: int, threshold: float | None = None, ranking: Ranking | None = None,
                   not_measured: str = NO_PREDICTION) -> QuestionResult:
    """Retrieval metrics, answer scores, checks, token use and failure labels of a question."""
    return _score_one(cfg, _Settings.of(cfg, k), inputs, q, pred, k=k, threshold=threshold,
                      ranking=ranking, not_measured=not_measured)


def _score_one(cfg: EvalConfig, settings: _Settings, inputs: Inputs, q: Question,
               pred: Prediction | None, *, k: int, threshold: float | None,
               ranking: Ranking | None, not_measured: str) -> QuestionResult:
    qgold = inputs.gold[q.question_id]
    grades = qgold.grades if qgold.usable else {}
    gold_ids = [c for c, g in grades.items() if g >= 1]
    alternatives = qgold.alternatives if qgold.usable else {}
    ks = settings.ks
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
        decline_phrases=settings.decline_phrases,
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
        **base, retrieved=_ranked_rows(ranked, score_of, gold_set),
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
        **base, retrieved=_ranked_rows(ranked, score_of, gold_set),
        gold_rank_in_index={cid: ranking.rank_of(store.position(cid)) for cid in grades
                            if store.has(cid)},
        retrieval=retrieval, answer=None, context_chunk_ids=ranked[:k], scores=scores,
        missing=missing,
        failures={"evaluation_failure.metric_missing": {"missing": {"answer": not_measured}}},
        checks=question_checks(answerable=q.answerable, retrieval=retrieval, scores={}, k=k),
        not_measured=not_measured)


def _ranked_rows(ranked: list[str], score_of: Mapping[str, float | None],
                 gold: set[str]) -> list[dict[str, Any]]:
    """The ranking as rows of :class:`~ragassay.runrows.RankedChunk`, which
    :class:`QuestionResult` validates into records in one call (ten record constructions
    per question cost twice as much on a 6,000-question run)."""
    return [{"rank": i, "chunk_id": c, "score": score_of[c], "gold": c in gold}
            for i, c in enumerate(ranked, 1)]


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
    # the collector paused over all units (see _score_unit), not once per unit: each
    # resumption set off a full collection of everything loaded
    with stages.bar("scoring", len(items)) as bar, collector_paused():
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
    """Each question's result and the seconds scoring it took. The collector is paused:
    scoring makes tens of thousands of acyclic records, and each full collection walked
    every loaded input again for no garbage (a fifth of the stage's time)."""
    out = []
    settings = _Settings.of(work.cfg, k)
    with collector_paused():
        for q, pred, ranking, not_measured in chunk:
            t0 = time.perf_counter()
            result = _score_one(work.cfg, settings, work.inputs, q, pred, k=k,
                                threshold=threshold, ranking=ranking,
                                not_measured=not_measured)
            out.append((result, time.perf_counter() - t0))
    return out


def check_claims(cfg: EvalConfig, inputs: Inputs, results: list[QuestionResult]) -> None:
    """Claim verdicts and measures of every answer (:mod:`ragassay.claimcheck`)."""
    from .claimcheck import check_claims as run_checks

    with stages.bar("checking claims", 1) as bar:
        run_checks(cfg, inputs, results)
        for r in results:  # the failure labels a claim verdict caused name that claim
            claim_evidence(r.failures, r.claims)
        bar.advance()


def judge(cfg: EvalConfig, inputs: Inputs, results: list[QuestionResult],
          executor: Executor | None = None) -> None:
    """Claim-level faithfulness by the configured LLM judge: ``judge_faithfulness`` =
    supported / judged claims against the cited chunks; a failed call leaves it not
    measured (None, with the error), never a score. On workers (``executor``) the judge's
    ``concurrency`` and ``run_timeout_s`` are shared out as the answerer's are
    (:func:`ragassay.predict.answer_all`)."""
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
                       until=deadline_s(cfg.judge.run_timeout_s))
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
