"""What items are built from: the corpus (a documents folder or an index), the kinds and their
default mix, and the seeded order in which chunks are taken.

The corpus is chunked exactly as ``ragassay index`` chunks it (the same loaders, the same
windows), so a label placed on a chunk here is ``ok`` in the index built from the set.

Sampling is spread across documents and positions: the documents are shuffled (seeded), and
the chunks are taken round-robin from them, each document's chunks in a seeded order, so the
first items come from as many documents as there are, and from anywhere in each.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..metrics.numbers import extract_numbers
from ..schema import Chunk
from ..store import Index
from .checks import similarity

KINDS: tuple[str, ...] = ("factoid", "numeric", "two_chunk", "unanswerable", "distractor")
DEFAULT_MIX: dict[str, float] = {"factoid": 0.3, "numeric": 0.25, "two_chunk": 0.15,
                                 "unanswerable": 0.15, "distractor": 0.15}
"""The default share of each kind (30 / 25 / 15 / 15 / 15 %): 30 % unanswerable or
distractor items, the cases a RAG system most often gets wrong."""

MIN_CHUNK_CHARS = 40  # a shorter chunk (a heading, a tail) holds no question worth asking
DISTRACTOR_MIN_SIMILARITY = 0.08  # trigram Jaccard of two chunks, below: not alike


@dataclass
class Corpus:
    """The chunks items are built from, as an :class:`Index` (embeddings not needed), and
    where they came from: ``source`` a documents folder (its ``files`` copied into the set)
    or an index folder (``index_dir``)."""

    index: Index
    source: Path
    chunking: tuple[int, int]
    files: dict[str, bytes] = field(default_factory=dict)
    index_dir: Path | None = None


def load_corpus(source: str | Path, *, chunk_size: int = 400, overlap: int = 80) -> Corpus:
    """A documents folder (loaded and chunked as ``ragassay index`` does) or an index folder
    (one holding ``index.json``: its chunks, at the chunking it was built with)."""
    from ..ingest import check_chunking, chunk_document, load_documents, scan_sources

    src = Path(source)
    if (src / "index.json").is_file():
        from ..index import load_index

        idx = load_index(src)
        ch = idx.meta.get("build", {}).get("chunking", {})
        return Corpus(idx, src, (int(ch.get("chunk_size", chunk_size)),
                                 int(ch.get("overlap", overlap))), index_dir=src)
    if not src.is_dir():
        raise InputError(src, "is neither a documents folder nor an index folder")
    try:
        check_chunking(chunk_size, overlap)
    except ValueError as exc:
        raise InputError("--chunk-size/--overlap", str(exc)) from None
    loaded = load_documents(src)
    if not loaded:
        raise InputError(src, "holds no supported document")
    chunks = [c for d in loaded for c in chunk_document(d, chunk_size=chunk_size,
                                                          overlap=overlap)]
    files = {rel: (src / rel).read_bytes() for rel in scan_sources(src).files}
    meta = {"build": {"source_dir": src.as_posix(),
                      "chunking": {"chunk_size": chunk_size, "overlap": overlap}}}
    idx = Index(src, meta, [d.document for d in loaded], chunks,
                np.zeros((len(chunks), 0), np.float32))
    return Corpus(idx, src, (chunk_size, overlap), files=files)


def parse_kinds(text: str | None) -> dict[str, float]:
    """The mix from ``--kinds``: ``factoid,numeric`` (equal shares) or
    ``factoid=0.5,numeric=0.5`` (shares, scaled to sum 1); ``None`` → :data:`DEFAULT_MIX`."""
    if text is None or not text.strip():
        return dict(DEFAULT_MIX)
    mix: dict[str, float] = {}
    for part in text.split(","):
        name, _, share = part.strip().partition("=")
        if name not in KINDS:
            raise InputError("--kinds", f"unknown kind {name!r}; the kinds are "
                             f"{', '.join(KINDS)}")
        try:
            mix[name] = float(share) if share else 1.0
        except ValueError:
            raise InputError("--kinds", f"share of {name} is not a number: {share!r}") from None
        if mix[name] <= 0:
            raise InputError("--kinds", f"share of {name} must be positive")
    total = sum(mix.values())
    return {k: v / total for k, v in mix.items()}


def quotas(n: int, mix: dict[str, float]) -> dict[str, int]:
    """Items per kind for ``n`` items: ``floor(n · share)``, the remainder given to the
    largest fractional parts (ties in :data:`KINDS` order), so they sum to ``n``."""
    raw = {k: n * mix[k] for k in KINDS if k in mix}
    out = {k: int(v) for k, v in raw.items()}
    rest = n - sum(out.values())
    for k in sorted(raw, key=lambda k: (-(raw[k] - out[k]), KINDS.index(k)))[:rest]:
        out[k] += 1
    return out


def _usable(c: Chunk) -> bool:
    return len(c.text.strip()) >= MIN_CHUNK_CHARS


def spread(index: Index, seed: int, salt: str) -> list[Chunk]:
    """Usable chunks in the seeded round-robin order described in the module docstring
    (``salt`` gives each kind its own order)."""
    rng = random.Random(f"{seed}:{salt}")
    docs = [d.doc_id for d in index.documents]
    rng.shuffle(docs)
    queues = []
    for d in docs:
        chunks = [c for c in index.chunks_of(d) if _usable(c)]
        rng.shuffle(chunks)
        queues.append(chunks)
    out: list[Chunk] = []
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop())
    return out


def seeds(kind: str, index: Index, seed: int) -> Iterator[list[Chunk]]:
    """The chunks each item of ``kind`` is built from, in sampling order: one chunk; one
    holding a number (numeric); two chunks of one document that do not overlap (two_chunk);
    a chunk and the most alike chunk of another document (distractor: at least
    :data:`DISTRACTOR_MIN_SIMILARITY`, and a number or word in it to differ on)."""
    for c in spread(index, seed, kind):
        if kind in ("factoid", "unanswerable"):
            yield [c]
        elif kind == "numeric":
            if extract_numbers(c.text):
                yield [c]
        elif kind == "two_chunk":
            others = [o for o in index.chunks_of(c.doc_id)
                      if _usable(o) and abs(o.seq - c.seq) >= 2]
            if others:
                rng = random.Random(f"{seed}:pair:{c.chunk_id}")
                yield sorted([c, rng.choice(others)], key=lambda x: x.seq)
        elif kind == "distractor":
            best = distractor_for(c, index)
            if best is not None:
                yield [c, best]


def distractor_for(chunk: Chunk, index: Index) -> Chunk | None:
    """The chunk of another document most alike ``chunk`` (:func:`similarity`, ties in
    index order), or ``None`` when none reaches :data:`DISTRACTOR_MIN_SIMILARITY`."""
    best, score = None, DISTRACTOR_MIN_SIMILARITY
    for other in index.chunks:
        if other.doc_id == chunk.doc_id or not _usable(other):
            continue
        s = similarity(chunk.text, other.text)
        if s >= score and (best is None or s > score):
            best, score = other, s
    return best
