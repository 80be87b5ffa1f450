"""Time `ragassay gold audit` on a large set: 10,000 labels against 100,000 chunks.

    python bench/gold_audit.py [--chunks 100000] [--labels 10000] [--seed 1] [--cli]

Synthetic data from a seeded generator: documents of pseudo-words (Korean, German and
English syllables, drawn with a Zipf-like law so words repeat as in real text), cut into
fixed 400/80 character windows with ids ``<doc>::chunk-NNN`` (100 chunks a document).
The labels are a mix meant to reach every state: 55% a claim cut from its own chunk (``ok``,
or ``also_in`` when it falls in the overlap), 15% the same with the chunk id gone
(``reanchored``), 10% a claim across the boundary of two neighbours (``split``), 10% a
claim that stands nowhere with two of the chunk's words as ``required_terms``
(``terms_only``), 10% a claim that stands nowhere (``unanchored``, scored for its nearest
chunks).

Printed: the time to anchor every label the first time (which builds the per-store
look-ups), a second time (look-ups built), and ``gold_audit`` over the result, with the
count of each state, and the peak resident memory, as wall and CPU seconds. ``--cli`` also
writes the set as files and times the command end to end in a fresh process (reading
100,000 chunks included). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ragassay.anchor import anchor_gold
from ragassay.goldaudit import gold_audit
from ragassay.schema import Chunk, Document, GoldEvidence, GoldRecord, Question
from ragassay.store import Index

SIZE, OVERLAP, PER_DOC = 400, 80, 100
SYLLABLES = ["ka", "ne", "ri", "mo", "su", "ter", "ung", "sch", "ei", "an", "de", "lo",
             "하", "자", "보", "수", "기", "간", "계", "약", "금", "지", "체", "상"]


def vocabulary(rng: random.Random, n: int = 20000) -> list[str]:
    return ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(n)]


def make_store(rng: random.Random, n_chunks: int) -> tuple[Index, list[str]]:
    vocab = vocabulary(rng)
    weights = [1 / (i + 1) for i in range(len(vocab))]
    stride = SIZE - OVERLAP
    documents, chunks, texts = [], [], []
    for d in range(max(n_chunks // PER_DOC, 1)):
        doc_id = f"doc{d:05d}"
        need = stride * (PER_DOC - 1) + SIZE
        words = rng.choices(vocab, weights, k=need // 3)
        text = " ".join(words)[:need]
        texts.append(text)
        documents.append(Document(doc_id=doc_id))
        for i in range(PER_DOC):
            a = i * stride
            chunks.append(Chunk(chunk_id=f"{doc_id}::chunk-{i + 1:03d}", doc_id=doc_id,
                                text=text[a:a + SIZE], char_span=(a, a + SIZE), seq=i))
    return Index(Path("bench"), {}, documents, chunks,
                 np.zeros((len(chunks), 0), np.float32)), texts


def words_between(text: str, a: int, b: int) -> str:
    """The whole words of ``text[a:b]``."""
    while a > 0 and text[a - 1] != " ":
        a += 1
    piece = text[a:b]
    return piece[: piece.rfind(" ")] if " " in piece else piece


def make_labels(rng: random.Random, index: Index, texts: list[str], n: int
                ) -> tuple[list[Question], dict[str, GoldRecord]]:
    stride = SIZE - OVERLAP
    vocab = vocabulary(random.Random(99), 2000)
    questions, gold = [], {}
    for i in range(n):
        d = rng.randrange(len(texts))
        c = rng.randrange(PER_DOC - 1)
        doc_id, text = f"doc{d:05d}", texts[d]
        chunk_id = f"{doc_id}::chunk-{c + 1:03d}"
        kind = rng.random()
        terms: list[str] = []
        if kind < 0.7:  # inside one chunk (ok / also_in), or with its id gone (reanchored)
            a = c * stride + rng.randint(0, SIZE - 80)
            claim = words_between(text, a, a + rng.randint(40, 80))
            if kind >= 0.55:
                chunk_id = f"gone::{i}"
        elif kind < 0.8:  # from before chunk c + 1 to after the end of chunk c: split
            start = (c + 1) * stride
            claim = words_between(text, start - 20, start + OVERLAP + 20)
        else:  # nowhere; with two words of the chunk as terms (terms_only) or none
            claim = " ".join(rng.choices(vocab, k=8)) + f" zz{i}"
            if kind < 0.9:
                own = text[c * stride: c * stride + SIZE].split(" ")[1:-1]
                terms = rng.sample(own, 2)
        qid = f"q{i:05d}"
        questions.append(Question(question_id=qid, question="?", answerable=True))
        gold[qid] = GoldRecord(question_id=qid, gold_evidence=[GoldEvidence(
            chunk_id=chunk_id, doc_id=doc_id, support_claim=claim, required_terms=terms)])
    return questions, gold


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--labels", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cli", action="store_true", help="also time the command end to end")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    index, texts = make_store(rng, args.chunks)
    questions, gold = make_labels(rng, index, texts, args.labels)
    print(f"generated {len(index.chunks):,} chunks, {len(questions):,} labels in "
          f"{time.perf_counter() - t0:.1f} s")
    w0, c0 = time.perf_counter(), time.process_time()
    anchored = anchor_gold(questions, gold, index)
    w1, c1 = time.perf_counter(), time.process_time()
    anchor_gold(questions, gold, index)
    w2, c2 = time.perf_counter(), time.process_time()
    audit = gold_audit(questions, anchored)
    w3, c3 = time.perf_counter(), time.process_time()
    print("wall / CPU seconds (CPU is this process's own time: on a busy machine the wall "
          "time is longer)")
    print(f"anchor, first (builds the look-ups): {w1 - w0:.2f} / {c1 - c0:.2f} s")
    print(f"anchor, look-ups built:              {w2 - w1:.2f} / {c2 - c1:.2f} s "
          f"({(c2 - c1) / len(questions) * 1000:.3f} ms CPU a label)")
    print(f"gold_audit:                          {w3 - w2:.3f} / {c3 - c2:.3f} s")
    print("states:", ", ".join(f"{n} {s}" for s, n in audit["states"].items()))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process (data generation included): {rss:,.0f} MB")
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            (folder / "chunks.jsonl").write_text("".join(
                json.dumps({"chunk_id": c.chunk_id, "doc_id": c.doc_id, "text": c.text,
                            "seq": c.seq}, ensure_ascii=False) + "\n" for c in index.chunks),
                encoding="utf-8")
            (folder / "q.jsonl").write_text("".join(
                q.model_dump_json() + "\n" for q in questions), encoding="utf-8")
            (folder / "g.jsonl").write_text("".join(
                r.model_dump_json(exclude_defaults=True) + "\n" for r in gold.values()),
                encoding="utf-8")
            t0 = time.perf_counter()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run(
                [sys.executable, "-m", "ragassay.cli", "gold", "audit", "--gold",
                 str(folder / "g.jsonl"), "--questions", str(folder / "q.jsonl"), "--chunks",
                 str(folder / "chunks.jsonl"), "--format", "json"], capture_output=True)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            print(f"ragassay gold audit --chunks (fresh process, exit {done.returncode}): "
                  f"{wall:.1f} / {cpu:.1f} s, peak RSS {after.ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
