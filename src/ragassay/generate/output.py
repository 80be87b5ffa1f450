"""The generated set as a folder ``ragassay run`` takes as it is, and ``generation.json``.

The folder is that of ``ragassay import`` (:func:`ragassay.importers.common.write_set`,
written atomically), plus::

    SET/index/             the index of SET/documents (hashing embedder, the chunking the
                           labels were placed for), so `ragassay run -c SET/config.yaml` runs
                           at once; a set generated from an index points at that index
    SET/generation.json    what was asked, kept and dropped (with reasons), the model,
                           the calls, tokens and cost
    SET/generation.html    the review page (:mod:`.review`)

Question ids are ``gen-0001``… in sampling order of the kept items; each question's
``query_type`` is its kind, and ``metadata`` holds the kind, the chunk ids, the language
and (distractor) the distractor chunk or (unanswerable) the terms the corpus lacks.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import __version__
from ..atomic import FolderWriter, write_folder
from ..importers.common import ImportedSet, write_set
from ..jsonio import json_text
from ..schema import GoldRecord, Question
from .checks import DROP_REASONS, NEAR_DUPLICATE, document_language
from .engine import Generation, Record, drop_counts
from .sampling import DISTRACTOR_MIN_SIMILARITY, KINDS

GENERATION_SCHEMA = "ragassay.generation/1"


def question_of(rec: Record, qid: str, gen: Generation) -> tuple[Question, GoldRecord]:
    """The question and gold record of a kept item."""
    c = rec.candidate
    index = gen.corpus.index
    first = index.chunk(c.chunk_ids[0])
    meta: dict[str, Any] = {"kind": c.kind, "chunk_ids": c.chunk_ids, "doc_id": first.doc_id,
                            "language": document_language(first.text),
                            "candidate": c.item_id}
    if c.distractor:
        meta["distractor_chunk_id"] = c.distractor
    if c.missing:
        meta["missing"] = c.missing
    answerable = c.kind != "unanswerable"
    q = Question(question_id=qid, question=c.question, answerable=answerable,
                 query_type=c.kind, must_contain=c.answers,
                 expected_answer="; ".join(c.answers) if c.answers else None,
                 metadata=meta)
    return q, GoldRecord(question_id=qid, gold_evidence=list(c.labels) if answerable else [])


def kept_items(gen: Generation) -> list[tuple[Record, Question, GoldRecord]]:
    """The kept items with their question ids, in sampling order."""
    return [(r, *question_of(r, f"gen-{i:04d}", gen)) for i, r in enumerate(gen.kept, 1)]


def _record_row(r: Record) -> dict[str, Any]:
    c = r.candidate
    row: dict[str, Any] = {"candidate": c.item_id, "kind": c.kind, "chunk_ids": c.chunk_ids,
                           "question": c.question, "answers": c.answers,
                           "sentences": [s.sentence for s in c.supports]}
    if c.distractor:
        row["distractor_chunk_id"] = c.distractor
    if c.missing:
        row["missing"] = c.missing
    if r.second_answer is not None:
        row["second_answer"] = r.second_answer
    if r.drop is not None:
        row["reason"], row["detail"] = r.drop.reason, r.drop.detail
    row["replies"] = r.replies
    return row


def generation_report(gen: Generation, items: list[tuple[Record, Question, GoldRecord]],
                      *, command: str) -> dict[str, Any]:
    """``generation.json``: asked, counts, kinds (asked / kept / share of the kept), drop
    reasons with their counts, kept items (question id ↔ candidate), dropped and surplus
    candidates with their replies, the model's identity, usage and cost, thresholds."""
    o = gen.options
    kept = len(items)
    kinds: dict[str, dict[str, Any]] = {
        k: {"asked": gen.quotas[k], "kept": sum(r.candidate.kind == k for r, _, _ in items),
            "candidates": sum(r.candidate.kind == k for r in gen.records)}
        for k in KINDS if k in gen.quotas}
    for v in kinds.values():
        v["share"] = round(v["kept"] / kept, 4) if kept else None
    counts = {"asked": o.n, "candidates": len(gen.records), "kept": kept,
              "dropped": sum(r.status == "dropped" for r in gen.records),
              "surplus": sum(r.status == "surplus" for r in gen.records)}
    return {
        "schema": GENERATION_SCHEMA, "ragassay": __version__, "command": command,
        "asked": {"n": o.n, "seed": o.seed, "mix": o.mix, "oversample": o.oversample,
                  "structured_output": o.structured, "source": gen.corpus.source.as_posix(),
                  "chunking": {"chunk_size": gen.corpus.chunking[0],
                               "overlap": gen.corpus.chunking[1]}},
        "counts": counts, "short": gen.short, "stopped": gen.stopped,
        "kinds": kinds, "drop_reasons": drop_counts(gen.records),
        "reasons": DROP_REASONS,
        "thresholds": {"near_duplicate_trigram_jaccard": NEAR_DUPLICATE,
                       "distractor_min_similarity": DISTRACTOR_MIN_SIMILARITY},
        "model": gen.model, "usage": gen.usage.to_dict(),
        "seconds": round(gen.seconds, 3),
        "kept": [{"question_id": q.question_id, **_record_row(r)} for r, q, _ in items],
        "dropped": [_record_row(r) for r in gen.records if r.status != "kept"],
    }


def write_generated(gen: Generation, out: str | Path, *, command: str, force: bool = False,
                    review_html: bool = True, progress: bool = False) -> Path:
    """Write the set (see the module docstring) to ``out`` atomically; returns ``out``.
    Written even when fewer items than asked were kept (the caller exits 3 then); with no
    item kept at all, the folder holds only ``generation.json`` and ``generation.html``
    (nothing to evaluate, the record of why)."""
    from .review import render_review

    corpus = gen.corpus
    items = kept_items(gen)
    report = generation_report(gen, items, command=command)
    config: dict[str, Any] = {}
    if corpus.index_dir is not None:
        rel = os.path.relpath(Path(corpus.index_dir).resolve(), Path(out).resolve())
        config = {"index_dir": Path(rel).as_posix(), "source_dir": None}
    imported = ImportedSet(source=corpus.source.as_posix(), format="ragassay generate",
                           files=dict(corpus.files), chunking=corpus.chunking, config=config)
    imported.questions = [q for _, q, _ in items]
    imported.gold = [g for _, _, g in items]
    imported.extra["generation.json"] = json_text(report)
    if review_html:
        imported.extra["generation.html"] = render_review(gen, items, report)

    if not items:
        def record(w: FolderWriter) -> None:
            for name, text in imported.extra.items():
                w.text(name, text)
        return write_folder(out, record, force=force)

    def build(w: FolderWriter) -> None:
        if corpus.files:
            from ..index import build_index

            build_index(w.root / "documents", w.root / "index", chunk_size=corpus.chunking[0],
                        overlap=corpus.chunking[1], embedder="hashing", progress=progress)

    return write_set(imported, out, command=command, force=force, report_name=None,
                     also=build)
