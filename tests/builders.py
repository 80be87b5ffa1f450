"""Shared paths and record builders of the tests (import them: ``from builders import ROOT``).

- ``ROOT`` (the repository), ``CONTRACT_CONFIG`` (the naive baseline's config on the fixture)
  and ``FIXTURE_INDEX`` (the committed index of ``data/raw``);
- ``rooted_config``, ``write_config``: a shipped config with its paths made absolute, to
  change and write elsewhere; ``llm_config``: the baseline with the LLM answerer and judge
  pointed at the fake server; ``rows``: the records of a run folder's JSONL file;
- ``chunk``, ``make_index``: chunks and an in-memory index without embeddings;
- ``make_case``: one question's diagnosis ``Case`` over a four-chunk index (two documents
  holding near-duplicate warranty clauses), passing every check unless told otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from openai_server import FakeOpenAIServer

from ragassay.anchor import anchor_gold
from ragassay.checks import question_checks
from ragassay.diagnose import Case
from ragassay.index import Index
from ragassay.metrics.retrieval import retrieval_scores
from ragassay.schema import Answer, Chunk, Citation, Document, GoldEvidence, GoldRecord, Question

ROOT = Path(__file__).resolve().parents[1]
CONTRACT_CONFIG = ROOT / "configs/eval/rag_quality_v1.yaml"
FIXTURE_INDEX = ROOT / "data/index"
# The config keys that name a file or folder, relative to the config's own folder.
PATH_KEYS = ("index_dir", "source_dir", "questions_path", "gold_evidence_path",
             "predictions_path", "chunks_path")


def rooted_config(source: Path = CONTRACT_CONFIG) -> dict[str, Any]:
    """The config at ``source`` as a dict whose paths (:data:`PATH_KEYS` it has) are absolute,
    so that a copy written anywhere reads the same files."""
    cfg: dict[str, Any] = yaml.safe_load(source.read_text(encoding="utf-8"))
    for key in PATH_KEYS:
        if key in cfg:
            cfg[key] = str((source.parent / cfg[key]).resolve())
    return cfg


def write_config(cfg: dict[str, Any], path: Path) -> Path:
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


def llm_config(tmp_path: Path, server: FakeOpenAIServer, **answerer: object) -> Path:
    """The naive baseline's config with the LLM answerer (4 threads, one retry, its cache in
    ``tmp_path``) and the judge on ``server``, its runs in ``tmp_path / "runs"``;
    ``answerer`` overrides the answerer's settings."""
    cfg = rooted_config()
    cfg["output_root"] = str(tmp_path / "runs")
    cfg["answerer"] = {"kind": "llm", "base_url": server.base_url, "model": "fake-model",
                       "cache_dir": str(tmp_path / "cache"), "backoff_base_s": 0.01,
                       "max_retries": 1, "concurrency": 4, **answerer}
    cfg["judge"] = {"base_url": server.base_url, "model": "fake-judge",
                    "cache_dir": str(tmp_path / "cache"), "backoff_base_s": 0.01}
    cfg["metrics"]["answer"] = ["judge_faithfulness", *cfg["metrics"]["answer"]]
    return write_config(cfg, tmp_path / "llm.yaml")


def rows(run_dir: Path, name: str) -> list[dict[str, Any]]:
    """The records of the JSONL file ``name`` of a run folder, in file order."""
    return [json.loads(line) for line in (run_dir / name).read_text(encoding="utf-8")
            .splitlines()]


def chunk(doc: str, seq: int, text: str, start: int, page: tuple[int, int] | None = None) -> Chunk:
    return Chunk(chunk_id=f"{doc}::chunk-{seq:03d}", doc_id=doc, title=doc, text=text,
                 char_span=(start, start + len(text)), page_span=page, seq=seq)


def make_index(chunks: list[Chunk], docs: list[Document] | None = None) -> Index:
    if docs is None:
        docs = [Document(doc_id=d) for d in dict.fromkeys(c.doc_id for c in chunks)]
    return Index(path=Path("."), meta={}, documents=docs, chunks=chunks,
                 embeddings=np.zeros((len(chunks), 4), dtype=np.float32))


BASE = [
    chunk("a", 1, "하자보수 기간은 검수 완료일로부터 2년으로 한다. "
                  "계약상대자는 무상으로 보수한다.", 0),
    chunk("a", 2, "지체상금률은 계약금액의 0.5%로 한다.", 60),
    chunk("b", 1, "하자보수 기간은 검수 완료일로부터 1년으로 한다.", 0),
    chunk("b", 2, "서버 가용성은 99.5% 이상이어야 한다.", 40),
]


def make_case(question: str = "A기관 하자보수 기간은?", *, answerable: bool = True,
              must: list[str] | None = None, gold: list[dict[str, Any]] | None = None,
              ranked: list[str] | None = None, answer: Answer | None = None,
              scores: dict[str, Any] | None = None, chunks: list[Chunk] | None = None,
              docs: list[Document] | None = None, hit_scores: list[float] | None = None,
              top_k: int = 3, missing: dict[str, str] | None = None) -> Case:
    index = make_index(chunks or BASE, docs)
    q = Question(question_id="q1", question=question, answerable=answerable,
                 must_contain=must if must is not None else (["2년"] if answerable else []))
    labels = gold if gold is not None else (
        [{"chunk_id": "a::chunk-001", "doc_id": "a", "support_claim": "검수 완료일로부터 2년"}]
        if answerable else [])
    records = {"q1": GoldRecord(question_id="q1",
                                gold_evidence=[GoldEvidence(**g) for g in labels])}
    qgold = anchor_gold([q], records, index)["q1"]
    ranked = ranked if ranked is not None else ["a::chunk-001", "b::chunk-001", "a::chunk-002"]
    answer = answer or Answer(text="검수 완료일로부터 2년으로 한다. [a::chunk-001]",
                              status="supported", citations=[Citation(chunk_id="a::chunk-001")])
    base_scores = {"declined": answer.status != "supported", "cited_ids":
                   [c.chunk_id for c in answer.citations], "correct": 1, "groundedness": 1,
                   "groundedness_reason": "", "must_contain_found": list(q.must_contain),
                   "hallucination_flag": 0, "answer_relevancy": 1.0}
    base_scores.update(scores or {})
    retrieval = retrieval_scores(ranked, qgold.grades if qgold.usable else {}, ks=[top_k])
    checks = question_checks(answerable=answerable, retrieval=retrieval, scores=base_scores,
                             k=top_k)
    return Case(question=q, gold=qgold, ranked=ranked,
                scores=hit_scores if hit_scores is not None else [0.9] * len(ranked),
                context_ids=ranked[:top_k], answer=answer, answer_scores=base_scores,
                retrieval=retrieval, top_k=top_k, index=index, checks=checks,
                missing=missing or {})
