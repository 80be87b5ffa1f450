"""Dense retrieval over an index: exact inner-product search, deterministic ties."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .embed import Embedder
from .index import Index


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    position: int  # row in the index
    score: float


@dataclass(frozen=True)
class Ranking:
    """The top-k hits of one query, plus every chunk's score for rank look-ups."""

    hits: list[Hit]
    scores: np.ndarray  # one score per index row

    def rank_of(self, position: int) -> int:
        """1-based rank of an index row in the full ranking (same tie rule as top-k)."""
        s = self.scores[position]
        ahead = int(np.count_nonzero(self.scores > s))
        tied_before = int(np.count_nonzero(self.scores[:position] == s))
        return ahead + tied_before + 1


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Row positions of the k best scores: score descending, ties by position ascending.

    The explicit tie rule keeps a run identical whatever the sort algorithm or batch order.
    """
    k = min(k, scores.shape[0])
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    # Candidates: everything at or above the k-th best score (keeps ties), then an exact sort.
    kth = np.partition(scores, scores.shape[0] - k)[scores.shape[0] - k]
    cand = np.flatnonzero(scores >= kth)
    order = np.lexsort((cand, -scores[cand]))
    return cand[order][:k]


class DenseRetriever:
    """Exact dense search: cosine (inner product of normalised vectors) against every chunk."""

    backend = "dense"

    def __init__(self, index: Index, embedder: Embedder, batch_size: int = 256) -> None:
        self.index = index
        self.embedder = embedder
        self.batch_size = batch_size

    def search(self, queries: Sequence[str], k: int) -> list[Ranking]:
        out: list[Ranking] = []
        emb = self.index.embeddings
        for start in range(0, len(queries), self.batch_size):
            batch = list(queries[start : start + self.batch_size])
            q = self.embedder.embed_queries(batch).astype(np.float32, copy=False)
            scores = q @ emb.T  # (batch, num_chunks)
            for row in scores:
                positions = top_k(row, k)
                hits = [
                    Hit(self.index.chunks[p].chunk_id, int(p), float(row[p])) for p in positions
                ]
                out.append(Ranking(hits=hits, scores=row))
        return out
