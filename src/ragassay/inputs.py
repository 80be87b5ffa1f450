"""The inputs of a run: questions, their anchored gold and the evidence store
(:class:`Inputs`), and a system's output for them (:class:`Predicted`).

They sit below the evaluation stages (:mod:`ragassay.predict`, :mod:`ragassay.scoring`) and
the aggregation (:mod:`ragassay.aggregate`), which read them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .anchor import anchor_gold
from .config import EvalConfig
from .gold import QuestionGold, gold_warnings, load_gold, read_questions
from .schema import Prediction, Question
from .store import Index, read_chunks

if TYPE_CHECKING:  # the retrievers are imported when a pipeline is built
    from .retrieve import Ranking


@dataclass
class Inputs:
    """What an evaluation reads: questions, their anchored gold, the evidence store."""

    questions: list[Question]
    gold: dict[str, QuestionGold]
    store: Index
    stale: str | None = None
    files: list[Path] = field(default_factory=list)  # input files, hashed for provenance
    load_s: float = 0.0  # reading questions, gold and the index (or chunk file)
    anchor_s: float = 0.0  # anchoring the gold labels in the index
    warnings: list[str] = field(default_factory=list)  # for the user: lenient reads, gold

    @cached_property
    def chunk_texts(self) -> dict[str, str]:
        return {c.chunk_id: c.text for c in self.store.chunks}

    @cached_property
    def question_by_id(self) -> dict[str, Question]:
        """Each question by its id (the first of a repeated id, as a scan would find it);
        built once, read after the questions are loaded."""
        out: dict[str, Question] = {}
        for q in self.questions:
            out.setdefault(q.question_id, q)
        return out


@dataclass
class Predicted:
    """A system's output: predictions, the rankings behind them (built-in pipeline only),
    and the error of every question whose answer could not be produced."""

    predictions: dict[str, Prediction]
    rankings: dict[str, Ranking] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    # The built-in pipeline's stage times: ``retrieve_s`` (the batched search of every
    # question, when it ran here), ``retrieve_mean_ms`` (that time per question: a mean, the
    # batches have no per-question time), ``answer_s`` (answering every question).
    timings: dict[str, float] = field(default_factory=dict)
    # What the system says about itself and how its output was read, for metrics.json:
    # ``system`` (a system under test's identity), ``returned_texts`` (the placement of the
    # gold in the contexts it returned as text, :mod:`ragassay.contexts`).
    audit: dict[str, Any] = field(default_factory=dict)


def load_inputs(cfg: EvalConfig) -> Inputs:
    """Read questions and gold, load the index (or chunk file), anchor the gold labels."""
    from .index import index_status, load_index

    assert cfg.questions_path is not None and cfg.gold_evidence_path is not None  # checked
    t0 = time.perf_counter()
    warnings: list[str] = []
    questions = read_questions(cfg.questions_path, lenient=cfg.lenient, warnings=warnings)
    gold = load_gold(cfg.gold_evidence_path, questions, lenient=cfg.lenient, warnings=warnings)
    files = [Path(cfg.questions_path), Path(cfg.gold_evidence_path)]
    if cfg.index_dir is not None:
        store = load_index(cfg.index_dir)
        files += [Path(cfg.index_dir) / "index.json", Path(cfg.index_dir) / "embeddings.npy"]
    else:
        assert cfg.chunks_path is not None  # guaranteed by check_contract
        store = read_chunks(cfg.chunks_path)
    files += [Path(p) for p in (cfg.chunks_path, cfg.predictions_path) if p is not None]
    stale = None
    if cfg.source_dir is not None and cfg.index_dir is not None:
        stale = index_status(cfg.index_dir, cfg.source_dir, chunk_size=cfg.index.chunk_size,
                             overlap=cfg.index.overlap, embedder=cfg.index.embedder,
                             embedder_params=cfg.index.embedder_params, index=store)
    load_s = time.perf_counter() - t0
    anchored = anchor_gold(questions, gold, store)
    warnings += gold_warnings(questions, anchored)
    anchor_s = time.perf_counter() - t0 - load_s
    return Inputs(questions, anchored, store, stale, files, load_s, anchor_s, warnings)


def gold_rows(inputs: Inputs) -> list[list[int]]:
    """Per question, the index rows of the gold chunks it is scored against: the rows whose
    rank in the whole index (``gold_rank_in_index``) its ranking must record."""
    store = inputs.store
    out = []
    for q in inputs.questions:
        qgold = inputs.gold[q.question_id]
        grades = qgold.grades if qgold.usable else {}
        out.append([store.position(c) for c in grades if store.has(c)])
    return out
