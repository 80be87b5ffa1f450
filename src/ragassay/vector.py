"""Nearest-neighbour search over embedding rows by inner product: exact, or approximate (HNSW).

Both searches answer ``search(queries, k)`` with a :class:`Neighbours` of the k best rows per
query, in the one order every retriever uses (:func:`top_k`): score descending, ties by the
lower row position first, so results never depend on a sort algorithm or batch.

- :class:`ExactSearch`: every row scored (batched float32 matmul); exact by definition.
- :class:`ApproximateSearch`: an HNSW graph from ``faiss-cpu`` (``IndexHNSWFlat``, inner
  product). The graph is built on one thread, because faiss's multi-threaded insertion
  order is unspecified and would make two builds of the same vectors answer differently;
  search is deterministic and uses all threads. Measure its quality with :func:`ann_recall`.
- :func:`search_for` picks exact search below :data:`ANN_THRESHOLD` rows (exact is fast
  enough there, and right), approximate search from it on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

ANN_INSTALL = "pip install 'ragassay[ann]'  (or: pip install faiss-cpu)"
# From this many rows on, dense search is approximate (HNSW): an index this large records its
# search and recall at build (``ragassay.index.build.measure_search``). Measured on 2 cores
# with 384-dim vectors: exact search costs 1.6 ms a query at 100k chunks while the HNSW graph
# takes about 70 s to build (it is rebuilt when a run loads the index), so below about a
# million chunks exact search is both exact and faster for question sets of any usual size.
ANN_THRESHOLD = 1_000_000
# Scores of one query batch stay under this many floats (256 MB), whatever the corpus size.
_SCORE_BUDGET = 1 << 26


@dataclass(frozen=True)
class Neighbours:
    """The k best rows per query: ``positions`` (int64) and ``scores`` (float32), both of
    shape ``(num_queries, k)``, best first. A query with fewer than k results (an
    approximate search can return fewer) is padded with position -1 and score -inf."""

    positions: np.ndarray
    scores: np.ndarray

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Positions and scores of query ``i`` without the padding."""
        keep = self.positions[i] >= 0
        return self.positions[i][keep], self.scores[i][keep]


class VectorSearch(Protocol):
    """What a retriever needs from a search: its kind, size and k-nearest rows."""

    kind: str
    size: int
    dimension: int

    def search(self, queries: np.ndarray, k: int) -> Neighbours: ...

    def describe(self) -> dict[str, Any]: ...


def _as_matrix(array: np.ndarray, dimension: int | None = None) -> np.ndarray:
    out = np.ascontiguousarray(array, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {out.shape}")
    if dimension is not None and out.shape[1] != dimension:
        raise ValueError(f"query vectors have {out.shape[1]} dimensions, the searched "
                         f"vectors {dimension}: were they made by another embedder?")
    return out


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Row positions of the k best of one query's ``scores`` (1-d): score descending, ties by
    the lower position first; ``min(k, len(scores))`` of them, none for ``k <= 0``.

    The one tie rule of every search and retriever: it keeps a run identical whatever the
    sort algorithm or batch order.
    """
    n = scores.shape[0]
    k = min(k, n)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    # Candidates: everything at or above the k-th best score (keeps ties), then an exact sort.
    kth = np.partition(scores, n - k)[n - k]
    cand = np.flatnonzero(scores >= kth)
    order = np.lexsort((cand, -scores[cand]))
    return cand[order][:k]


class ExactSearch:
    """Exact inner-product search: all rows scored in batched matmuls.

    Memory per batch stays under 2**26 scores: the batch is ``2**26 // size`` queries. As
    with any BLAS matmul, a score may differ in its last bit with the number of queries
    batched together; the same queries in the same order give identical results.
    """

    kind = "exact"

    def __init__(self, embeddings: np.ndarray) -> None:
        self.embeddings = _as_matrix(embeddings)
        self.size, self.dimension = self.embeddings.shape
        self.batch_size = max(1, _SCORE_BUDGET // max(self.size, 1))

    def scores(self, queries: np.ndarray) -> np.ndarray:
        """Every row's score for every query, ``(num_queries, size)`` float32."""
        q = _as_matrix(queries, self.dimension)
        return q @ self.embeddings.T

    def search(self, queries: np.ndarray, k: int) -> Neighbours:
        """The k best rows per query (fewer when ``size < k``); ``k <= 0`` gives none."""
        q = _as_matrix(queries, self.dimension)
        k = min(max(k, 0), self.size)
        positions = np.empty((len(q), k), dtype=np.int64)
        scores = np.empty((len(q), k), dtype=np.float32)
        for start in range(0, len(q), self.batch_size):
            block = q[start : start + self.batch_size] @ self.embeddings.T
            for i, row in enumerate(block, start=start):
                positions[i] = top_k(row, k)
                scores[i] = row[positions[i]]
        return Neighbours(positions, scores)

    def describe(self) -> dict[str, Any]:
        """What an index records about the search: ``{"kind": "exact", "size": n}``."""
        return {"kind": self.kind, "size": self.size}


def _faiss() -> Any:
    try:
        import faiss
    except ImportError:
        raise ValueError(f"approximate search needs faiss-cpu: {ANN_INSTALL}") from None
    return faiss


def ann_available() -> bool:
    """Whether :class:`ApproximateSearch` can be built (faiss-cpu is importable)."""
    try:
        _faiss()
    except ValueError:
        return False
    return True


class ApproximateSearch:
    """HNSW search (faiss ``IndexHNSWFlat``, inner product) over the rows of ``embeddings``.

    ``connectivity`` is HNSW's M (links per node), ``ef_construction`` the candidate list
    while building, ``ef_search`` while searching (raised to k when k is larger). Larger
    values: better recall, slower. The graph is built at construction, on one thread (see
    the module docstring). Missing faiss-cpu → ``ValueError`` naming the package.
    """

    kind = "hnsw"

    def __init__(self, embeddings: np.ndarray, *, connectivity: int = 32,
                 ef_construction: int = 128, ef_search: int = 128) -> None:
        for name, value in (("connectivity", connectivity),
                            ("ef_construction", ef_construction), ("ef_search", ef_search)):
            if int(value) < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        faiss = _faiss()
        self.connectivity, self.ef_construction = int(connectivity), int(ef_construction)
        self.ef_search = int(ef_search)
        vectors = _as_matrix(embeddings)
        self.size, self.dimension = vectors.shape
        self._index = faiss.IndexHNSWFlat(self.dimension, self.connectivity,
                                          faiss.METRIC_INNER_PRODUCT)
        self._index.hnsw.efConstruction = self.ef_construction
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            self._index.add(vectors)
        finally:
            faiss.omp_set_num_threads(threads)

    def search(self, queries: np.ndarray, k: int) -> Neighbours:
        """The (approximately) k best rows per query, same order and padding rules as
        :class:`Neighbours`; ``k <= 0`` gives none."""
        q = _as_matrix(queries, self.dimension)
        k = min(max(k, 0), self.size)
        if k == 0 or len(q) == 0:
            return Neighbours(np.empty((len(q), k), np.int64), np.empty((len(q), k), np.float32))
        faiss = _faiss()
        params = faiss.SearchParametersHNSW(efSearch=max(int(self.ef_search), k))
        scores, positions = self._index.search(q, k, params=params)
        positions = positions.astype(np.int64)
        scores = np.where(positions >= 0, scores, -np.inf).astype(np.float32)
        # faiss orders equal scores as its heap left them: re-sort by (score desc, position
        # asc), padding (-inf, -1) last.
        for i in range(len(q)):
            key = np.where(positions[i] >= 0, positions[i], np.iinfo(np.int64).max)
            order = np.lexsort((key, -scores[i]))
            positions[i], scores[i] = positions[i][order], scores[i][order]
        return Neighbours(positions, scores)

    def describe(self) -> dict[str, Any]:
        """What an index records about the search: library, version and HNSW parameters."""
        return {"kind": self.kind, "size": self.size, "library": "faiss-cpu",
                "library_version": str(_faiss().__version__),
                "connectivity": self.connectivity, "ef_construction": self.ef_construction,
                "ef_search": self.ef_search}


def search_for(embeddings: np.ndarray, threshold: int | None = None,
               **ann_params: Any) -> ExactSearch | ApproximateSearch:
    """Exact search for fewer than ``threshold`` rows (default :data:`ANN_THRESHOLD`), else
    :class:`ApproximateSearch` (built with ``ann_params``). Above the threshold a missing
    faiss-cpu is an error (``ValueError`` naming the package); pass a larger threshold to
    stay exact."""
    if len(embeddings) < (ANN_THRESHOLD if threshold is None else threshold):
        return ExactSearch(embeddings)
    return ApproximateSearch(embeddings, **ann_params)


def ann_recall(exact: ExactSearch, approx: VectorSearch, queries: np.ndarray, k: int) -> float:
    """Recall@k of a search against exact search, averaged over queries:

        mean over queries q of |A_k(q) ∩ E_k(q)| / |E_k(q)|

    with E_k the exact k best rows and A_k the search's. When scores tie at the k-th place,
    E_k holds the lowest positions among the tied rows, so a search that returns another
    tied row is counted as a miss (rare with real vectors). 1.0 for no queries or k <= 0.
    """
    q = _as_matrix(queries, exact.dimension)
    if len(q) == 0 or min(k, exact.size) <= 0:
        return 1.0
    want, got = exact.search(q, k), approx.search(q, k)
    found = 0.0
    for i in range(len(q)):
        truth = set(want.row(i)[0].tolist())
        found += len(truth.intersection(got.row(i)[0].tolist())) / len(truth)
    return found / len(q)
