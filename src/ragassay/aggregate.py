"""A run's numbers from its scored questions: aggregates with bootstrap CIs, check totals,
counts, cost, latency, failure counts and provenance — the content of ``metrics.json``.
"""

from __future__ import annotations

import math
import platform
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import __version__
from .answer.prompt import TOKENIZER
from .checks import totals
from .claimcheck import claims_summary
from .config import EvalConfig
from .diagnose import LABELS, UNOBSERVABLE, count_labels
from .goldaudit import run_gold
from .metrics.stats import aggregate_many, aggregate_reference
from .reasons import NO_PREDICTION, NOT_APPLICABLE
from .runfolder import RUN_SCHEMA_VERSION, Aggregate, Counts, Provenance, RunMetrics
from .runrows import QuestionResult

if TYPE_CHECKING:
    from .inputs import Inputs



def aggregates(cfg: EvalConfig, results: Sequence[QuestionResult],
               columns: Mapping[tuple[str, str], list[Any]]) -> dict[tuple[str, str], Aggregate]:
    """The :class:`Aggregate` of each column ``(section, measure) → value per result``
    (``None``: not measured, with the result's ``missing`` reason). Keyed by question id:
    resampled in id order, whatever the questions file's order (a repeated id counts its
    last value, as a mapping would keep it); one call, so that measures with as many
    measured questions share the bootstrap's draws."""
    last = {r.question_id: i for i, r in enumerate(results)}
    order = [last[q] for q in sorted(last, key=str)]
    figures = aggregate_many({key: [values[i] for i in order] for key, values in columns.items()},
                           seed=cfg.seed, n_resamples=cfg.metrics.bootstrap_resamples)
    out: dict[tuple[str, str], Aggregate] = {}
    for key, values in columns.items():
        name = key[1]
        reasons: dict[str, int] = {}
        for r, v in zip(results, values, strict=True):
            if v is None:
                why = r.missing.get(name, "not measured")
                reasons[why] = reasons.get(why, 0) + 1
        out[key] = Aggregate.model_validate(
            {**figures[key], "missing_reasons": dict(sorted(reasons.items()))})
    return out


def _aggregate_reference(cfg: EvalConfig, results: Sequence[QuestionResult], name: str,
                         values: list[Any]) -> Aggregate:
    """One column's :class:`Aggregate` by itself (the plain version of :func:`aggregates`)."""
    by_id = {r.question_id: v for r, v in zip(results, values, strict=True)}
    agg = aggregate_reference(by_id, seed=cfg.seed,
                              n_resamples=cfg.metrics.bootstrap_resamples)
    reasons: dict[str, int] = {}
    for r, v in zip(results, values, strict=True):
        if v is None:
            why = r.missing.get(name, "not measured")
            reasons[why] = reasons.get(why, 0) + 1
    return Aggregate.model_validate({**agg, "missing_reasons": dict(sorted(reasons.items()))})


def aggregates_reference(cfg: EvalConfig, results: Sequence[QuestionResult],
                         columns: Mapping[tuple[str, str], list[Any]]
                         ) -> dict[tuple[str, str], Aggregate]:
    """:func:`aggregates` column by column, each resampled by itself."""
    return {key: _aggregate_reference(cfg, results, key[1], values)
            for key, values in columns.items()}


def cost_summary(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """Token totals of the answerer calls and ``total``, the sum of the questions'
    ``usage.cost`` (in the currency of the configured prices): ``None`` unless every
    question with usage has a cost, so an unknown price is never summed as 0. Questions
    whose call failed have no usage and are not in the sums."""
    usages = [r.usage for r in results if r.usage is not None]
    costs = [c for u in usages if isinstance(c := u.get("cost"), (int, float))]
    known = bool(usages) and len(costs) == len(usages)
    counted = sum(1 for u in usages if u.get("source") == "counted")
    judge = {"prompt_tokens": 0, "completion_tokens": 0, "calls": 0}
    for r in results:  # the judge's own tokens: claim checks and judge_faithfulness
        for used in ((r.claims or {}).get("judge_usage"), (r.judge or {}).get("usage")):
            for name in judge:
                judge[name] += int((used or {}).get(name, 0) or 0)
    return {
        # the tokenizer that counted the tokens: None when the server reported every count
        "tokenizer": TOKENIZER if counted else None,
        "token_source": ("counted" if counted == len(usages) else "reported" if not counted
                         else "mixed") if usages else None,
        "prompt_tokens": sum(u["prompt_tokens"] for u in usages),
        "completion_tokens": sum(u["completion_tokens"] for u in usages),
        "answerer_calls": sum(1 for u in usages if u["prompt_tokens"] > 0),
        "questions_with_usage": len(usages),
        "total": math.fsum(costs) if known else None,
        "judge_prompt_tokens": judge["prompt_tokens"],
        "judge_completion_tokens": judge["completion_tokens"],
        "judge_calls": judge["calls"],
    }


def latency_summary(results: Sequence[QuestionResult]) -> dict[str, dict[str, float | int]]:
    """p50 / p95 / mean per stage over the questions that report it (`total` = their sum)."""
    stages: dict[str, list[float]] = {}
    for r in results:
        lat = r.latency_ms
        if isinstance(lat, (int, float)):
            lat = {"total": float(lat)}
        if not lat:
            continue
        for stage, ms in lat.items():
            stages.setdefault(stage, []).append(float(ms))
        if "total" not in lat:
            stages.setdefault("total", []).append(float(sum(lat.values())))
    return {stage: ms_summary(v) for stage, v in stages.items()}


def ms_summary(values: Sequence[float]) -> dict[str, float | int]:
    """``{p50, p95, mean, n}`` of per-question times in milliseconds (numpy's linear
    percentiles); ``n`` is 0 and the rest 0.0 for no values."""
    if not values:
        return {"p50": 0.0, "p95": 0.0, "mean": 0.0, "n": 0}
    return {"p50": float(np.percentile(values, 50)), "p95": float(np.percentile(values, 95)),
            "mean": float(np.mean(values)), "n": len(values)}


def _failure_summary(results: Sequence[QuestionResult]) -> dict[str, Any]:
    counts = count_labels([r.failures for r in results])
    by_category: dict[str, int] = {}
    for label, n in counts.items():
        cat = label.split(".")[0]
        by_category[cat] = by_category.get(cat, 0) + n
    return {
        "counts": counts,
        "by_category": by_category,
        "questions_with_failures": sum(1 for r in results if r.failures),
        "unobservable": UNOBSERVABLE,
    }


def not_applicable(results: Sequence[QuestionResult], names: Iterable[str]
                   ) -> dict[str, dict[str, int]]:
    """Per measure (in ``names`` order), the count of each reason of :data:`NOT_APPLICABLE`
    it was not measured for. One pass over the results' ``missing``, not one per measure."""
    seen: dict[str, dict[str, int]] = {}
    for r in results:
        for name, why in r.missing.items():
            if why in NOT_APPLICABLE:
                counts = seen.setdefault(name, {})
                counts[why] = counts.get(why, 0) + 1
    out: dict[str, dict[str, int]] = {}
    for name in names:
        if name in seen:
            into = out.setdefault(name, {})
            for why, n in seen[name].items():
                into[why] = into.get(why, 0) + n
    return out


def not_applicable_reference(results: Sequence[QuestionResult], names: Iterable[str]
                             ) -> dict[str, dict[str, int]]:
    """:func:`not_applicable` measure by measure (the plain version)."""
    out: dict[str, dict[str, int]] = {}
    for name in names:
        for r in results:
            why = r.missing.get(name)
            if why in NOT_APPLICABLE:
                out.setdefault(name, {})[why] = out.get(name, {}).get(why, 0) + 1
    return out


def corrected_means(cfg: EvalConfig, results: Sequence[QuestionResult],
                    answer: Mapping[str, Any]) -> dict[str, Any]:
    """PPI++ corrected means of the judged answer measures with people's values
    (``metrics.labels_path``), per measure; ``{}`` without labels."""
    if cfg.metrics.labels_path is None:
        return {}
    from .labels import read_labels
    from .metrics.ppi import ppi_mean

    labels = read_labels(cfg.metrics.labels_path)
    out: dict[str, Any] = {}
    for measure, people in labels.items():
        if measure not in answer:
            continue
        judged = {r.question_id: r.scores.get(measure) for r in results}
        pairs = [(people[q], float(v)) for q, v in judged.items()
                 if q in people and v is not None]
        rest = [float(v) for q, v in judged.items() if q not in people and v is not None]
        out[measure] = ppi_mean(pairs, rest)
    return out


def summarize(cfg: EvalConfig, inputs: Inputs, results: list[QuestionResult], *, run_id: str,
              mode: str, k: int, provenance: Mapping[str, Any] | None = None,
              timings: Mapping[str, Any] | None = None, notes: Sequence[str] = ()
              ) -> RunMetrics:
    """Aggregates, totals, counts and provenance of scored questions: ``metrics.json``."""
    measured = [r.retrieval for r in results], [r.scores for r in results]
    columns = {("retrieval", name): [values.get(name) for values in measured[0]]
               for name in cfg.metrics.retrieval}
    columns.update({("answer", name): [values.get(name) for values in measured[1]]
                    for name in cfg.metrics.answer})
    aggs = aggregates(cfg, results, columns)
    retrieval = {name: aggs["retrieval", name] for name in cfg.metrics.retrieval}
    answer = {name: aggs["answer", name] for name in cfg.metrics.answer}
    store = inputs.store
    meta = store.meta
    prov = {
        "config_path": str(cfg.path) if cfg.path else None,
        "config_sha256": cfg.sha256,
        "index": {"embedding": meta.get("embedding"), "build": meta.get("build"),
                  "stale": inputs.stale},
        "package": {"name": "ragassay", "version": __version__},
        "python": platform.python_version(),
        "seed": cfg.seed,
        "tokenizer": TOKENIZER,
        "taxonomy_labels": len(LABELS),
        **(provenance or {}),
    }
    return RunMetrics(
        schema_version=RUN_SCHEMA_VERSION, run_id=run_id, mode=mode,
        pipeline=cfg.pipeline.model_dump(),
        answerer=({"kind": "external"} if mode in ("predictions", "system")
                  else cfg.answerer.model_dump()),
        counts=Counts(
            questions=len(results),
            answerable=sum(r.answerable for r in results),
            unanswerable=sum(not r.answerable for r in results),
            without_prediction=sum(1 for r in results if r.answer is None),
            answerer_errors=sum(1 for r in results
                                if r.not_measured not in (None, NO_PREDICTION)),
        ),
        checks=totals(((r.answerable, r.checks) for r in results), k=k,
                      hit_policy=cfg.metrics.hit_policy,
                      right_by_claim_recall=cfg.metrics.right_by_claim_recall),
        retrieval=retrieval, answer=answer,
        not_applicable=not_applicable(results, [*cfg.metrics.retrieval, *cfg.metrics.answer]),
        notes=list(notes),
        failures=_failure_summary(results),
        cost=cost_summary(results),
        gold=run_gold(inputs.questions, inputs.gold),
        provenance=Provenance(**prov),
        timings={"latency_ms": latency_summary(results), **(timings or {})},
        claims=claims_summary(cfg, results),
        corrected=corrected_means(cfg, results, answer),
    )


