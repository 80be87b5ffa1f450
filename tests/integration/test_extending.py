"""docs/extending.md, run: a failure detector and a retriever backend (with its preset) added
at run time by registering them, then a real run of the fixture through ``ragassay run``'s
code path, whose run folder must show both.

The toy retriever ranks the index backwards (its last chunk first, scores 1, 1/2, 1/3, …),
so the expected rankings can be written down by hand; the toy detector fires on every
question whose answer was declined.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from builders import ROOT

import ragassay.diagnose as diagnose
from ragassay import config as config_module
from ragassay.config import DiagnoseConfig, EvalConfig, load_config, register_preset
from ragassay.diagnose import Case, detects
from ragassay.index import load_index
from ragassay.retrieve import RETRIEVERS, Hit, Ranking, register_retriever
from ragassay.run import run_evaluation
from ragassay.store import Index


class Backwards:
    """The toy backend of docs/extending.md: the index's rows from last to first."""

    backend = "backwards"

    def __init__(self, index: Index) -> None:
        self.index = index

    @classmethod
    def from_config(cls, index: Index, cfg: EvalConfig) -> Backwards:
        return cls(index)

    def search(self, queries: Sequence[str], k: int,
               track: Sequence[Iterable[int]] | None = None) -> list[Ranking]:
        n = len(self.index.chunks)
        order = list(range(n - 1, -1, -1))
        hits = [Hit(self.index.chunks[p].chunk_id, p, 1 / (i + 1))
                for i, p in enumerate(order[:k])]
        rank = {p: i + 1 for i, p in enumerate(order)}
        return [Ranking(hits, {p: rank[p] for p in (track[j] if track else ())})
                for j in range(len(queries))]


def declined_answer(case: Case, cfg: DiagnoseConfig) -> dict[str, Any] | None:
    """The toy detector: the answer was declined."""
    return {"status": case.answer.status} if case.answer.status != "supported" else None


@pytest.fixture
def registered() -> Iterator[None]:
    register_retriever(Backwards)
    register_preset("backwards", retrieval_backend="backwards")
    detects("answer_failure")(declined_answer)
    try:
        yield
    finally:
        RETRIEVERS.pop("backwards")
        config_module.PRESETS.pop("backwards")
        diagnose.unregister("answer_failure.declined_answer")


def test_a_runtime_detector_and_retriever_run_end_to_end(registered: None,
                                                         tmp_path: Path) -> None:
    assert "answer_failure.declined_answer" in diagnose.labels()
    cfg = load_config(ROOT / "configs/eval/rag_quality_v1.yaml",
                      {"pipeline.name": "backwards", "pipeline.retrieval_backend": "backwards",
                       "pipeline.top_k": 3})
    result = run_evaluation(cfg, run_id="toy", output_root=tmp_path)
    folder = tmp_path / "toy"
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    chunk_ids = [c.chunk_id for c in load_index(ROOT / "data/index").chunks]
    rows = [json.loads(line) for line in
            (folder / "retrieved_chunks.jsonl").read_text(encoding="utf-8").splitlines()]
    declined = sum(1 for q in result.questions
                   if q.answer is not None and q.answer.status != "supported")
    # The registered label is counted like the built-in ones, after its category's.
    counts = metrics["failures"]["counts"]
    assert counts["answer_failure.declined_answer"] == declined > 0
    labels = list(counts)
    assert labels.index("answer_failure.declined_answer") == labels.index(
        "answer_failure.failed_to_abstain") + 1
    # Every question got the toy ranking: the index backwards, scores 1, 1/2, 1/3.
    assert metrics["pipeline"]["retrieval_backend"] == "backwards"
    for row in rows:
        assert [h["score"] for h in row["retrieved"]] == [1.0, 0.5, 1 / 3]
        assert [h["chunk_id"] for h in row["retrieved"]] == chunk_ids[::-1][:3]
