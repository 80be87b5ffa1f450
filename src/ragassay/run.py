"""One evaluation run: retrieve → answer → score → diagnose → aggregate → run folder.

The run folder is assembled in a temporary sibling folder and renamed into place, so an
interrupted run leaves no half-written folder and a reused run id is refused before any work.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from .answer.prompt import TOKENIZER, build_prompt, count_tokens
from .config import EvalConfig
from .diagnose import LABELS, UNOBSERVABLE, Case, count_labels, diagnose
from .endpoint import EndpointConfig, EndpointError, OpenAICompatClient
from .gold import QuestionGold, anchor_gold, load_gold, load_questions
from .index import Index, index_status, load_chunk_file, load_index
from .ingest import file_sha256
from .judge import Judge
from .metrics.answer import DEFAULT_DECLINE_PHRASES, score_answer
from .metrics.retrieval import retrieval_scores
from .metrics.stats import aggregate
from .pipeline import Pipeline
from .predictions import context_of, load_predictions
from .report.html import write_html
from .report.summary import render_summary_md
from .retrieve import Ranking
from .schema import InputError, Prediction, Question, write_jsonl


@dataclass
class RunResult:
    run_id: str
    run_dir: Path
    metrics: dict[str, Any]
    questions: list[dict[str, Any]]  # per-question rows for terminal tables


def default_run_id(pipeline: str) -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{pipeline}"


def check_run_id(run_id: str) -> None:
    if not run_id or run_id in (".", "..") or "/" in run_id or os.sep in run_id:
        raise InputError("--run-id", f"invalid run id {run_id!r}: use a plain folder name")


@dataclass
class EvalSet:
    """The inputs of an evaluation, loaded once: questions, anchored gold, evidence store."""

    questions: list[Question]
    gold: dict[str, QuestionGold]
    index: Index
    stale: str | None
    load_s: float

    @cached_property
    def chunk_texts(self) -> dict[str, str]:
        return {c.chunk_id: c.text for c in self.index.chunks}


def load_eval_set(cfg: EvalConfig) -> EvalSet:
    """Read questions and gold, load the index (or chunk file), anchor the gold labels."""
    questions = load_questions(cfg.questions_path)
    gold_records = load_gold(cfg.gold_evidence_path, questions)
    t0 = time.perf_counter()
    if cfg.index_dir is not None:
        index = load_index(cfg.index_dir)
    else:
        assert cfg.chunks_path is not None  # guaranteed by check_contract
        index = load_chunk_file(cfg.chunks_path)
    load_s = time.perf_counter() - t0
    stale = None
    if cfg.source_dir is not None and cfg.index_dir is not None:
        stale = index_status(cfg.index_dir, cfg.source_dir, chunk_size=cfg.index.chunk_size,
                             overlap=cfg.index.overlap, embedder=cfg.index.embedder,
                             embedder_params=cfg.index.embedder_params, index=index)
    return EvalSet(questions, anchor_gold(questions, gold_records, index), index, stale, load_s)


def predict_all(cfg: EvalConfig, data: EvalSet, *, k: int, threshold: float | None = None,
                pipeline: Pipeline | None = None, rankings: list[Ranking] | None = None,
                progress: bool = False,
                ) -> tuple[dict[str, Prediction], dict[str, Ranking], dict[str, str]]:
    """Predictions of the configured system for every question (read, or produced), the
    rankings behind them, and the errors of questions that could not be answered."""
    if cfg.predictions_path is not None:
        return load_predictions(cfg.predictions_path, data.questions, data.index), {}, {}
    pipeline = pipeline or Pipeline(data.index, cfg)
    rankings = rankings or pipeline.retrieve(data.questions, k)
    preds, errors = pipeline.predict_many(data.questions, rankings, k, threshold,
                                          progress=progress)
    return preds, {q.question_id: r for q, r in zip(data.questions, rankings,
                                                    strict=True)}, errors


def score_all(cfg: EvalConfig, data: EvalSet, preds: dict[str, Prediction], *, k: int,
              threshold: float | None = None, rankings: dict[str, Ranking] | None = None,
              errors: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Score and diagnose every question; a question without a prediction is not measured."""
    texts = data.chunk_texts
    rankings = rankings or {}
    errors = errors or {}
    return [
        score_question(cfg, q, data.gold[q.question_id], preds.get(q.question_id), data.index,
                       texts, k=k, threshold=threshold, ranking=rankings.get(q.question_id),
                       missing_reason=errors.get(q.question_id, "no prediction for this "
                                                 "question"))
        for q in data.questions
    ]


def run_evaluation(cfg: EvalConfig, *, run_id: str | None = None, force: bool = False,
                   output_root: Path | None = None, progress: bool = False) -> RunResult:
    """Evaluate the configured system and write `<output_root>/<run_id>/`."""
    t_start = time.perf_counter()
    mode = "predictions" if cfg.predictions_path else cfg.pipeline.name
    run_id = run_id or default_run_id(mode)
    check_run_id(run_id)
    root = Path(output_root or cfg.output_root)
    run_dir = root / run_id
    if run_dir.exists() and not force:
        raise InputError(run_dir, "run id already used; choose another --run-id or pass --force "
                         "to replace it")
    data = load_eval_set(cfg)
    k = cfg.pipeline.top_k
    t0 = time.perf_counter()
    preds, rankings, errors = predict_all(cfg, data, k=k, progress=progress)
    predict_s = time.perf_counter() - t0
    rows = score_all(cfg, data, preds, k=k, rankings=rankings, errors=errors)
    if cfg.judge is not None:
        judge_rows(cfg.judge, rows, data.index)

    metrics = aggregate_rows(cfg, rows)
    metrics.update({
        "run_id": run_id,
        "mode": mode,
        "pipeline": cfg.pipeline.model_dump(),
        "answerer": ({"kind": "external"} if cfg.predictions_path
                     else cfg.answerer.model_dump()),
        "counts": {
            "questions": len(data.questions),
            "answerable": sum(q.answerable for q in data.questions),
            "unanswerable": sum(not q.answerable for q in data.questions),
            "without_prediction": sum(1 for r in rows if r["prediction"] is None),
            "answerer_errors": len(errors),
        },
        "checks": checks_summary(rows, k),
        "cost": cost_summary(rows),
        "failures": _failure_summary(rows),
        "gold": {
            "reanchored": [ev.report(qid) for qid, g in data.gold.items() for ev in g.evidence
                           if ev.status != "ok"],
        },
        "provenance": _provenance(cfg, data),
        "timings": {
            "latency_ms": latency_summary(rows),
            "load_index_s": data.load_s,
            "predict_s": predict_s,
            "total_s": time.perf_counter() - t_start,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
    })
    _write_run(run_dir, run_id, metrics, rows, force=force)
    return RunResult(run_id, run_dir, metrics, rows)


_NOT_MEASURED = ("faithfulness", "groundedness", "groundedness_reason", "answer_relevancy",
                 "correct", "citation_accuracy", "hallucination_flag",
                 "unanswerable_detection_flag")


def score_question(cfg: EvalConfig, q: Question, qgold: QuestionGold, pred: Prediction | None,
                   index: Index, texts: dict[str, str], *, k: int,
                   threshold: float | None = None, ranking: Ranking | None = None,
                   missing_reason: str = "no prediction for this question") -> dict[str, Any]:
    """Retrieval metrics, answer scores, token use and failure labels of one question."""
    grades = qgold.grades if qgold.usable else {}
    if pred is None:  # reported, never silently dropped or scored as wrong
        return {
            "question": q, "gold": qgold, "prediction": None, "context": [], "ranked": [],
            "scores": [],
            "retrieval": retrieval_scores([], {}, ks=sorted({*cfg.retrieval_cutoffs(), k})),
            "answer_scores": dict.fromkeys(_NOT_MEASURED), "usage": None,
            "failures": {"evaluation_failure.metric_missing": {
                "missing": {"all": missing_reason}}},
            "index_ranks": {},
        }
    ranked = context_of(pred, len(pred.retrieved) or 1, threshold)
    context = ranked[:k]
    score_of = {h.chunk_id: h.score for h in reversed(pred.retrieved)}
    retrieval = retrieval_scores(ranked, grades, ks=sorted({*cfg.retrieval_cutoffs(), k}),
                                 hit_policy=cfg.metrics.hit_policy)
    scores = score_answer(
        q, pred.answer, context_ids=context, gold_ids=[c for c, g in grades.items() if g >= 1],
        chunk_texts=texts, decline_phrases=(*DEFAULT_DECLINE_PHRASES, *cfg.decline_phrases),
    ).to_dict()
    index_ranks = ({cid: ranking.rank_of(index.position(cid)) for cid in grades
                    if index.has(cid)} if ranking is not None else {})
    case = Case(
        question=q, gold=qgold, ranked=ranked, scores=[score_of[c] for c in ranked],
        context_ids=context, answer=pred.answer, answer_scores=scores, retrieval=retrieval,
        top_k=k, index=index, index_ranks=index_ranks,
    )
    return {
        "question": q, "gold": qgold, "prediction": pred, "context": context, "ranked": ranked,
        "scores": case.scores, "retrieval": retrieval, "answer_scores": scores,
        "usage": usage_of(q, pred, context, index), "failures": diagnose(case, cfg.diagnose),
        "index_ranks": index_ranks,
    }


def judge_rows(endpoint: EndpointConfig, rows: list[dict[str, Any]], index: Index) -> None:
    """Claim-level faithfulness by an LLM judge: `judge_faithfulness` = supported / judged
    claims of each answer against its cited chunks; a failed judge call leaves it not
    measured (None, with the error), never a score."""
    todo = [r for r in rows if r["prediction"] is not None]
    items = [(r["prediction"].answer, [index.chunk(c) for c in r["answer_scores"]["cited_ids"]
                                       if index.has(c)]) for r in todo]
    with OpenAICompatClient(endpoint) as client:
        results = Judge(client).judge_many(items)
    for r, res in zip(todo, results, strict=True):
        if isinstance(res, EndpointError):
            r["judge"] = {"error": str(res)}
            r["answer_scores"]["judge_faithfulness"] = None
        else:
            r["judge"] = res.to_dict()
            r["answer_scores"]["judge_faithfulness"] = res.score


def usage_of(q: Question, pred: Prediction, context: list[str], index: Index) -> dict[str, Any]:
    """Tokens of the answerer call: as reported by the system, else counted from its prompt."""
    if pred.usage is not None:  # the built-in pipeline marks what it counted itself
        source = (pred.usage.model_extra or {}).get("source", "reported")
        counts = pred.usage.model_dump(include={"prompt_tokens", "completion_tokens"})
        return {**counts, "source": source,
                "tokenizer": TOKENIZER if source == "counted" else None}
    chunks = [index.chunk(c) for c in context]
    return {"prompt_tokens": count_tokens(build_prompt(q.question, chunks)),
            "completion_tokens": count_tokens(pred.answer.text), "source": "counted",
            "tokenizer": TOKENIZER}


def checks_summary(rows: list[dict[str, Any]], k: int) -> dict[str, Any]:
    """The three questions per run: found (hit@k), grounded, right — as counts over totals."""
    found = [r["retrieval"].get(f"hit_at_{k}") for r in rows]
    grounded = [r["answer_scores"].get("groundedness") for r in rows]
    right = [r["answer_scores"].get("correct") for r in rows]

    def tally(values: list[Any]) -> dict[str, int]:
        measured = [v for v in values if v is not None]
        return {"passed": int(sum(measured)), "total": len(measured),
                "not_measured": len(values) - len(measured)}

    return {"k": k, "found": tally(found), "grounded": tally(grounded), "right": tally(right)}


def cost_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    usages = [r["usage"] for r in rows if r["usage"] is not None]
    return {
        "tokenizer": TOKENIZER,
        "prompt_tokens": sum(u["prompt_tokens"] for u in usages),
        "completion_tokens": sum(u["completion_tokens"] for u in usages),
        "answerer_calls": sum(1 for u in usages if u["prompt_tokens"] > 0),
        "questions_with_usage": len(usages),
    }


def latency_summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float | int]]:
    """p50 / p95 / mean per stage over the questions that report it (`total` = their sum)."""
    stages: dict[str, list[float]] = {}
    for r in rows:
        pred = r["prediction"]
        lat = pred.latency_ms if pred is not None else None
        if isinstance(lat, (int, float)):
            lat = {"total": float(lat)}
        if not lat:
            continue
        for stage, ms in lat.items():
            stages.setdefault(stage, []).append(float(ms))
        if "total" not in lat:
            stages.setdefault("total", []).append(float(sum(lat.values())))
    return {stage: {"p50": float(np.percentile(v, 50)), "p95": float(np.percentile(v, 95)),
                    "mean": float(np.mean(v)), "n": len(v)} for stage, v in stages.items()}


def aggregate_rows(cfg: EvalConfig, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean / n / missing / bootstrap CI of every configured metric, retrieval apart from answer."""
    def agg(values: list[Any]) -> dict[str, Any]:
        return aggregate(values, seed=cfg.seed, n_resamples=cfg.metrics.bootstrap_resamples)

    retrieval = {name: agg([r["retrieval"].get(name) for r in rows])
                 for name in cfg.metrics.retrieval}
    answer = {name: agg([r["answer_scores"].get(name) for r in rows])
              for name in cfg.metrics.answer}
    return {"retrieval": retrieval, "answer": answer}


def _failure_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counts = count_labels([r["failures"] for r in rows])
    by_category: dict[str, int] = {}
    for label, n in counts.items():
        cat = label.split(".")[0]
        by_category[cat] = by_category.get(cat, 0) + n
    return {
        "counts": counts,
        "by_category": by_category,
        "questions_with_failures": sum(1 for r in rows if r["failures"]),
        "unobservable": UNOBSERVABLE,
    }


def _provenance(cfg: EvalConfig, data: EvalSet) -> dict[str, Any]:
    files = [Path(cfg.questions_path), Path(cfg.gold_evidence_path)]
    if cfg.index_dir is not None:
        files += [Path(cfg.index_dir) / "index.json", Path(cfg.index_dir) / "embeddings.npy"]
    files += [Path(p) for p in (cfg.chunks_path, cfg.predictions_path) if p is not None]
    return {
        "config_path": str(cfg.path) if cfg.path else None,
        "config_sha256": cfg.sha256,
        "inputs_sha256": {str(p): file_sha256(p) for p in files},
        "index": {"embedding": data.index.meta["embedding"], "build": data.index.meta["build"],
                  "stale": data.stale},
        "package": {"name": "ragassay", "version": __version__},
        "python": platform.python_version(),
        "seed": cfg.seed,
        "tokenizer": TOKENIZER,
        "taxonomy_labels": len(LABELS),
    }


# --- artifacts -----------------------------------------------------------------------


def _rows(run_id: str, rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    retrieved, answers, failures = [], [], []
    for r in rows:
        q: Question = r["question"]
        qgold: QuestionGold = r["gold"]
        pred: Prediction | None = r["prediction"]
        gold_ids = [c for c, g in qgold.grades.items() if g >= 1] if qgold.usable else []
        base = {"run_id": run_id, "question_id": q.question_id}
        retrieved.append({
            **base,
            "question": q.question,
            "gold_chunk_ids": gold_ids,
            "retrieved": [{"rank": i, "chunk_id": c, "score": s, "gold": c in gold_ids}
                          for i, (c, s) in enumerate(zip(r["ranked"], r["scores"],
                                                         strict=True), 1)],
            "gold_rank_in_index": r["index_ranks"],
            "metrics": r["retrieval"],
        })
        answer = pred.answer if pred is not None else None
        answers.append({
            **base,
            "question": q.question,
            "topic": q.topic,
            "answerable": q.answerable,
            "answer": answer.model_dump() if answer is not None else None,
            "context_chunk_ids": r["context"],
            "scores": r["answer_scores"],
            "usage": r["usage"],
            "judge": r.get("judge"),
            "latency_ms": pred.latency_ms if pred is not None else None,
        })
        if r["failures"]:
            failures.append({
                **base,
                "question": q.question,
                "answerable": q.answerable,
                "failure_types": list(r["failures"]),
                "evidence": r["failures"],
                "rank": r["retrieval"].get("rank"),
                "gold_chunk_ids": gold_ids,
                "top_chunk_ids": r["ranked"][:3],
                "answer_status": answer.status if answer is not None else None,
                "answer_text": answer.text if answer is not None else None,
                "groundedness_reason": r["answer_scores"].get("groundedness_reason"),
            })
    return {"retrieved_chunks.jsonl": retrieved, "answers.jsonl": answers,
            "failure_cases.jsonl": failures}


def write_folder(dest: Path, fill: Callable[[Path], None], *, force: bool) -> None:
    """Fill a temporary sibling folder, then rename it to `dest` (replacing it with `force`).

    An interruption leaves `dest` as it was: never half-written, never half-replaced.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        fill(tmp)
        if dest.exists():
            if not force:
                raise InputError(dest, "already exists; pass --force to replace it")
            old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
            dest.rename(old)
            tmp.rename(dest)
            shutil.rmtree(old)
        else:
            tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_run(run_dir: Path, run_id: str, metrics: dict[str, Any],
               rows: list[dict[str, Any]], *, force: bool) -> None:
    def fill(tmp: Path) -> None:
        (tmp / "metrics.json").write_text(
            json.dumps(metrics, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        for name, table in _rows(run_id, rows).items():
            write_jsonl(tmp / name, table)
        (tmp / "summary.md").write_text(render_summary_md(metrics, rows), encoding="utf-8")
        write_html(tmp)

    write_folder(run_dir, fill, force=force)
