"""Build an index: load → chunk → embed (in batches) → write (:mod:`.format`).

From :data:`ragassay.vector.ANN_THRESHOLD` chunks on, the build also measures the
approximate search a run will use and records it (``index.json`` → ``search``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from .. import vector
from ..embed import Embedder, get_embedder
from ..errors import InputError
from ..executor import Executor, LocalExecutor, chunked
from ..ingest import (
    SUPPORTED_EXTENSIONS,
    check_chunking,
    chunk_document,
    load_documents,
    scan_sources,
)
from ..schema import DEFAULT_CHUNK_SIZE, DEFAULT_OVERLAP, SCHEMA_VERSION
from ..store import Index
from ..vector import ApproximateSearch, ExactSearch, ann_recall
from .format import check_out_dir, write_index
from .staleness import chunking_params, fingerprint

log = logging.getLogger("ragassay")


def build_index(
    source_dir: str | Path,
    out_dir: str | Path,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    overlap: int = DEFAULT_OVERLAP,
    embedder: str = "hashing",
    embedder_params: dict[str, Any] | None = None,
    batch_size: int = 256,
    progress: bool = True,
    executor: Executor | None = None,
) -> Index:
    """Load → chunk → embed (in batches) → write the index, replacing ``out_dir`` atomically.

    The files are written to a temporary sibling folder, synced, then swapped in: on any
    failure the previous index stays as it was and the temporary folder is removed. An
    existing ``out_dir`` holding anything but the two index files is refused, so nothing
    is deleted silently; so is an ``out_dir`` inside ``source_dir`` (it would be indexed).

    Files of unsupported types are left out and listed: ``index.json`` → ``build.skipped``,
    the returned index's :attr:`~ragassay.store.Index.skipped`, and one info record on the
    ``ragassay`` logger (:func:`skipped_note`).

    ``executor``: where the batches of chunks are embedded (default: in this process).
    """
    check_chunking(chunk_size, overlap)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    source, out = Path(source_dir), Path(out_dir)
    emb = get_embedder(embedder, **(embedder_params or {}))
    check_out_dir(source, out)

    loaded = load_documents(source)
    if not loaded:
        raise InputError(source, f"no supported documents ({' '.join(SUPPORTED_EXTENSIONS)})")
    documents = [d.document for d in loaded]
    chunks = [c for d in loaded for c in chunk_document(d, chunk_size=chunk_size,
                                                          overlap=overlap)]
    texts = [c.text for c in chunks]
    if executor is None or isinstance(executor, LocalExecutor):
        vectors = embed_chunks(emb, texts, batch_size=batch_size, progress=progress)
    else:
        vectors = embed_on(executor, EmbedderSpec(embedder, embedder_params or {}), texts,
                           batch_size=batch_size, progress=progress)

    chunking = chunking_params(chunk_size, overlap)
    embedding = emb.describe()  # the sidecar's sha256 is added as it is written
    meta: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "embedding": embedding,
        "build": {
            "source_dir": source.as_posix(),
            "chunking": chunking,
            "num_documents": len(documents),
            "num_chunks": len(chunks),
            "fingerprint": fingerprint([(d.source_path, d.sha256) for d in documents],
                                       chunking, embedding),
            "skipped": scan_sources(source).skipped,
        },
    }
    if len(chunks) >= vector.ANN_THRESHOLD:
        meta["search"] = measure_search(vectors)
    meta = write_index(out, meta, documents, chunks, vectors)
    note = skipped_note(meta["build"]["skipped"])
    if note is not None:
        log.info("%s", note)
    return Index(path=out, meta=meta, documents=documents, chunks=chunks, embeddings=vectors)


def skipped_note(skipped: Sequence[str], *, shown: int = 10) -> str | None:
    """The line to print after a build that left files out (``None`` when none):
    ``skipped 2 files of unsupported types: a.xlsx, b.csv`` (at most ``shown`` named)."""
    if not skipped:
        return None
    names = ", ".join(skipped[:shown]) + (f" (+{len(skipped) - shown} more)"
                                          if len(skipped) > shown else "")
    files = "file" if len(skipped) == 1 else "files"
    types = "an unsupported type" if len(skipped) == 1 else "unsupported types"
    return f"skipped {len(skipped)} {files} of {types}: {names}"


def measure_search(vectors: np.ndarray, *, k: int = 10, sample: int = 200,
                   seed: int = 0) -> dict[str, Any]:
    """The approximate search used for a large index, and its recall@k against exact search
    (recorded in `index.json`). Queries are a fixed sample of the index's vectors with
    seeded noise added, so that a query is not simply its own nearest neighbour."""
    approx = ApproximateSearch(vectors)
    rows = np.linspace(0, len(vectors) - 1, num=min(sample, len(vectors))).astype(np.int64)
    noise = np.random.default_rng(seed).normal(0, 0.05, (len(rows), vectors.shape[1]))
    queries = (vectors[rows] + noise).astype(np.float32)
    queries /= np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    recall = ann_recall(ExactSearch(vectors), approx, queries, k)
    return {**approx.describe(), f"recall_at_{k}_vs_exact": recall, "recall_queries": len(rows),
            "threshold": vector.ANN_THRESHOLD}


def embed_chunks(embedder: Embedder, texts: Sequence[str], *, batch_size: int = 256,
                 progress: bool = False) -> np.ndarray:
    """Embed texts in batches into one float32 ``(n, dimension)`` array.

    With ``progress``, a progress bar is drawn on stderr (:mod:`ragassay.progress`; without
    it, as the command line's ``--progress`` says).
    """
    from .. import progress as stages

    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    with stages.bar(f"embedding ({embedder.model})", len(texts),
                    enabled=True if progress else None) as bar:
        for start in range(0, len(texts), batch_size):
            batch = texts[start : start + batch_size]
            vecs = np.asarray(embedder.embed_documents(batch))
            if vecs.shape != (len(batch), embedder.dimension):
                raise ValueError(f"embedder {embedder.name!r} returned shape {vecs.shape} for "
                                 f"{len(batch)} texts; expected ({len(batch)}, "
                                 f"{embedder.dimension})")
            out[start : start + len(batch)] = vecs
            bar.advance(len(batch))
    return out


@dataclass
class EmbedderSpec:
    """An embedder by name and parameters, as sent to workers: each builds it once."""

    name: str
    params: dict[str, Any]
    built: Embedder | None = None

    def embedder(self) -> Embedder:
        if self.built is None:
            self.built = get_embedder(self.name, **self.params)
        return self.built

    def __getstate__(self) -> dict[str, Any]:
        return {"name": self.name, "params": self.params, "built": None}


def _embed_unit(spec: EmbedderSpec, batch: list[str], *, batch_size: int) -> np.ndarray:
    # whole batches of the local build's size: the same vectors, row for row; one array back
    # (a list of row arrays costs more to pickle and stack than the hashing takes)
    return embed_chunks(spec.embedder(), batch, batch_size=batch_size)


def embed_on(executor: Executor, spec: EmbedderSpec, texts: Sequence[str], *,
             batch_size: int = 256, progress: bool = False) -> np.ndarray:
    """:func:`embed_chunks` with the batches embedded by ``executor``'s workers; the same
    float32 ``(n, dimension)`` array (an embedder's vector of a text does not depend on the
    other texts of its batch)."""
    from .. import progress as stages

    with stages.bar(f"embedding ({spec.embedder().model})", len(texts),
                    enabled=True if progress else None) as bar:
        size = executor.unit_size(len(texts), multiple=batch_size, most=16 * batch_size)
        return executor.map_rows(partial(_embed_unit, batch_size=batch_size),
                                 chunked(texts, size), spec,
                                 row_shape=(spec.embedder().dimension,), dtype=np.float32,
                                 done=bar.advance)
