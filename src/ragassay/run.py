"""One evaluation run: retrieve → answer → score → diagnose → aggregate → run folder.

The run folder is assembled in a temporary sibling folder and renamed into place, so an
interrupted run leaves no half-written folder and a reused run id is refused before any work.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track

from . import __version__
from .answer.extractive import ExtractiveAnswerer
from .config import EvalConfig
from .diagnose import LABELS, UNOBSERVABLE, Case, count_labels, diagnose
from .embed import embedder_from_meta
from .gold import QuestionGold, anchor_gold, load_gold, load_questions
from .index import Index, index_status, load_index
from .metrics.answer import score_answer
from .metrics.retrieval import retrieval_scores
from .metrics.stats import aggregate
from .report.html import write_html
from .report.summary import render_summary_md
from .retrieve import DenseRetriever, Ranking
from .schema import Answer, InputError, Question, write_jsonl


@dataclass
class RunResult:
    run_id: str
    run_dir: Path
    metrics: dict[str, Any]
    questions: list[dict[str, Any]]  # per-question rows for terminal tables


def default_run_id(pipeline: str) -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{pipeline}"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check_run_id(run_id: str) -> None:
    if not run_id or run_id in (".", "..") or "/" in run_id or os.sep in run_id:
        raise InputError("--run-id", f"invalid run id {run_id!r}: use a plain folder name")


def run_evaluation(cfg: EvalConfig, *, run_id: str | None = None, force: bool = False,
                   output_root: Path | None = None, progress: bool = False) -> RunResult:
    """Evaluate the configured pipeline and write `<output_root>/<run_id>/`."""
    t_start = time.perf_counter()
    run_id = run_id or default_run_id(cfg.pipeline.name)
    _check_run_id(run_id)
    root = Path(output_root or cfg.output_root)
    run_dir = root / run_id
    if run_dir.exists() and not force:
        raise InputError(run_dir, "run id already used; choose another --run-id or pass --force "
                         "to replace it")

    questions = load_questions(cfg.questions_path)
    gold_records = load_gold(cfg.gold_evidence_path, questions)
    t0 = time.perf_counter()
    index = load_index(cfg.index_dir)
    load_s = time.perf_counter() - t0
    stale = None
    if cfg.source_dir is not None:
        stale = index_status(cfg.index_dir, cfg.source_dir, chunk_size=cfg.index.chunk_size,
                             overlap=cfg.index.overlap, embedder=cfg.index.embedder,
                             embedder_params=cfg.index.embedder_params)
    gold = anchor_gold(questions, gold_records, index)

    embedder = embedder_from_meta(index.meta["embedding"])
    retriever = DenseRetriever(index, embedder)
    answerer = ExtractiveAnswerer(max_sentences=cfg.answerer.max_sentences,
                                  min_support=cfg.answerer.min_support)
    top_k = cfg.pipeline.top_k

    t0 = time.perf_counter()
    rankings = retriever.search([q.question for q in questions], top_k)
    retrieve_s = time.perf_counter() - t0

    ks = cfg.retrieval_cutoffs()
    per_question: list[dict[str, Any]] = []
    answer_s = 0.0
    pairs: Iterable[tuple[Question, Ranking]] = zip(questions, rankings, strict=True)
    if progress:
        pairs = track(pairs, total=len(questions), description="answering",
                      console=Console(stderr=True), transient=True)
    for q, ranking in pairs:
        ranked = [h.chunk_id for h in ranking.hits]
        context = [index.chunk(cid) for cid in ranked]
        t0 = time.perf_counter()
        answer = answerer.answer(q.question, context, [h.score for h in ranking.hits])
        answer_ms = (time.perf_counter() - t0) * 1000
        answer_s += answer_ms / 1000
        per_question.append(
            _score_question(cfg, q, gold[q.question_id], ranking, ranked, answer, index, ks,
                            answer_ms, len(questions), retrieve_s)
        )

    metrics = _aggregate(cfg, per_question)
    metrics.update({
        "run_id": run_id,
        "pipeline": cfg.pipeline.model_dump(),
        "answerer": cfg.answerer.model_dump(),
        "counts": {
            "questions": len(questions),
            "answerable": sum(q.answerable for q in questions),
            "unanswerable": sum(not q.answerable for q in questions),
        },
        "failures": _failure_summary(per_question),
        "gold": {
            "reanchored": [ev.report(qid) for qid, g in gold.items() for ev in g.evidence
                           if ev.status != "ok"],
        },
        "provenance": _provenance(cfg, index, stale),
        "timings": {
            "load_index_s": load_s,
            "retrieve_s": retrieve_s,
            "answer_s": answer_s,
            "total_s": time.perf_counter() - t_start,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
    })
    _write_run(run_dir, run_id, metrics, per_question, force=force)
    return RunResult(run_id, run_dir, metrics, per_question)


def _score_question(cfg: EvalConfig, q: Question, qgold: QuestionGold, ranking: Ranking,
                    ranked: list[str], answer: Answer, index: Index, ks: list[int],
                    answer_ms: float, n_questions: int, retrieve_s: float) -> dict[str, Any]:
    grades = qgold.grades if qgold.usable else {}
    retrieval = retrieval_scores(ranked, grades, ks=ks, hit_policy=cfg.metrics.hit_policy)
    scores = score_answer(
        q, answer, context_ids=ranked, gold_ids=[c for c, g in grades.items() if g >= 1],
        chunk_texts={c.chunk_id: c.text for c in index.chunks},
    ).to_dict()
    case = Case(
        question=q, gold=qgold, ranked=ranked, scores=[h.score for h in ranking.hits],
        context_ids=ranked, answer=answer, answer_scores=scores, retrieval=retrieval,
        top_k=cfg.pipeline.top_k, index=index,
        index_ranks={cid: ranking.rank_of(index.position(cid)) for cid in grades
                     if index.has(cid)},
    )
    failures = diagnose(case, cfg.diagnose)
    return {
        "question": q,
        "gold": qgold,
        "hits": ranking.hits,
        "answer": answer,
        "retrieval": retrieval,
        "answer_scores": scores,
        "failures": failures,
        "index_ranks": case.index_ranks,
        "latency_ms": {"retrieve": retrieve_s * 1000 / max(n_questions, 1), "answer": answer_ms},
    }


def _aggregate(cfg: EvalConfig, rows: list[dict[str, Any]]) -> dict[str, Any]:
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


def _provenance(cfg: EvalConfig, index: Index, stale: str | None) -> dict[str, Any]:
    inputs = {
        str(cfg.questions_path): _sha256(Path(cfg.questions_path)),
        str(cfg.gold_evidence_path): _sha256(Path(cfg.gold_evidence_path)),
        str(Path(cfg.index_dir) / "index.json"): _sha256(Path(cfg.index_dir) / "index.json"),
        str(Path(cfg.index_dir) / "embeddings.npy"): _sha256(Path(cfg.index_dir) /
                                                             "embeddings.npy"),
    }
    return {
        "config_path": str(cfg.path) if cfg.path else None,
        "config_sha256": cfg.sha256,
        "inputs_sha256": inputs,
        "index": {"embedding": index.meta["embedding"], "build": index.meta["build"],
                  "stale": stale},
        "package": {"name": "ragassay", "version": __version__},
        "python": platform.python_version(),
        "seed": cfg.seed,
        "taxonomy_labels": len(LABELS),
    }


# --- artifacts -----------------------------------------------------------------------


def _rows(run_id: str, rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    retrieved, answers, failures = [], [], []
    for r in rows:
        q: Question = r["question"]
        qgold: QuestionGold = r["gold"]
        gold_ids = [c for c, g in qgold.grades.items() if g >= 1] if qgold.usable else []
        base = {"run_id": run_id, "question_id": q.question_id}
        retrieved.append({
            **base,
            "question": q.question,
            "gold_chunk_ids": gold_ids,
            "retrieved": [{"rank": i, "chunk_id": h.chunk_id, "score": h.score,
                           "gold": h.chunk_id in gold_ids} for i, h in enumerate(r["hits"], 1)],
            "gold_rank_in_index": r["index_ranks"],
            "metrics": r["retrieval"],
        })
        answer: Answer = r["answer"]
        answers.append({
            **base,
            "question": q.question,
            "answerable": q.answerable,
            "answer": answer.model_dump(exclude_none=False),
            "context_chunk_ids": [h.chunk_id for h in r["hits"]],
            "scores": r["answer_scores"],
            "usage": None,
            "latency_ms": r["latency_ms"],
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
                "top_chunk_ids": [h.chunk_id for h in r["hits"][:3]],
                "answer_status": answer.status,
                "answer_text": answer.text,
                "groundedness_reason": r["answer_scores"].get("groundedness_reason"),
            })
    return {"retrieved_chunks.jsonl": retrieved, "answers.jsonl": answers,
            "failure_cases.jsonl": failures}


def _write_run(run_dir: Path, run_id: str, metrics: dict[str, Any],
               rows: list[dict[str, Any]], *, force: bool) -> None:
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{run_id}.tmp-", dir=run_dir.parent))
    try:
        (tmp / "metrics.json").write_text(
            json.dumps(metrics, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        for name, table in _rows(run_id, rows).items():
            write_jsonl(tmp / name, table)
        (tmp / "summary.md").write_text(render_summary_md(metrics, rows), encoding="utf-8")
        write_html(tmp)
        if run_dir.exists():
            if not force:
                raise InputError(run_dir, "run id already used; pass --force to replace it")
            old = run_dir.with_name(f".{run_id}.old-{os.getpid()}")
            run_dir.rename(old)
            tmp.rename(run_dir)
            shutil.rmtree(old)
        else:
            tmp.rename(run_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
