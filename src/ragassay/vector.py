"""Nearest-neighbour search over embedding rows by inner product: exact, or approximate (HNSW).

Both searches answer ``search(queries, k)`` with a :class:`Neighbours` of the k best rows per
query, in the one order every retriever uses (:func:`top_k`): score descending, ties by the
lower row position first, so results never depend on a sort algorithm or batch.

- :class:`ExactSearch`: every row scored; exact by definition, and reproducible to the bit
  (below).
- :class:`ApproximateSearch`: an HNSW graph from ``faiss-cpu`` (``IndexHNSWFlat``, inner
  product). The graph is built on one thread, because faiss's multi-threaded insertion
  order is unspecified and would make two builds of the same vectors answer differently;
  search is deterministic and uses all threads. Measure its quality with :func:`ann_recall`.
- :func:`search_for` picks exact search below :data:`ANN_THRESHOLD` rows (exact is fast
  enough there, and right), approximate search from it on.

Reproducible exact scores. A float32 matrix product rounds each partial sum, and the BLAS
adds them in an order that depends on its thread count, its kernels and the shape of the
product (how many queries share a batch): the same (query, row) pair could score
differently in its last bit, enough to swap two near-tied rows. So :class:`ExactSearch`
makes every sum exact instead:

1. Every vector (row or query) is snapped (:func:`snap`) to integers in [-2**b, 2**b]
   times a power of two chosen from that vector alone (its largest value), with
   ``b = quantization_bits(dimension)`` the largest b with ``dimension * 4**b <= 2**53``
   (21 bits for 1024 dimensions, 22 for 384).
2. The product is taken in float64. Each term is a power of two times an integer product
   under 2**(2b), and the sum of ``dimension`` of them stays under 2**53 in magnitude, so
   every partial sum is exactly representable, whatever the order of addition, the
   blocking, the threads or fused multiply-adds: the float64 result is the exact inner
   product of the snapped vectors.
3. It is rounded once to float32 (round to nearest), then ranked by :func:`top_k`.

A score is therefore a function of its two vectors only. Why this and not "float64, then
round to 1e-6": two float64 results a last bit apart can still round to either side of a
rounding boundary, so that only makes a difference rarer; exact sums make it impossible.
The cost in precision:
snapping moves a value by at most ``2**-(b+1)`` times a power of two above its vector's
largest value, so a score of unit vectors moves by well under 1e-6 (at most 4.2e-7 on
the fixture's hashing vectors, a few float32 roundings), far below any difference
between texts; rankings of the fixture are unchanged. The cost in time: a
float64 product instead of a float32 one, and the rows snapped once at construction.
Measured on 2 shared cores, 1,000 unit queries x 100,000 rows x 1,024 dimensions (best of
3): search 0.74 s → 2.23 s (2 BLAS threads), 1.29 s → 2.75 s (1 thread); construction
0 → 0.8 s.

:class:`ApproximateSearch` is left to faiss: its scores are faiss's own float32 inner
products (computed per query, a query's walk not depending on the other queries), not the
snapped exact ones, and are not covered by the guarantee above; it is used only from
:data:`ANN_THRESHOLD` rows on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

ANN_INSTALL = "pip install 'ragassay[ann]'  (or: pip install faiss-cpu)"
# From this many rows on, dense search is approximate (HNSW): an index this large records its
# search and recall at build (``ragassay.index.build.measure_search``). Measured on 2 cores
# with 384-dim vectors: exact search costs 1.6 ms a query at 100k chunks (float32 products;
# the exact float64 sums of 1024-dim vectors cost about 2.2 ms) while the HNSW graph
# takes about 70 s to build (it is rebuilt when a run loads the index), so below about a
# million chunks exact search is both exact and faster for question sets of any usual size.
ANN_THRESHOLD = 1_000_000
# Scores of one query batch stay under this many float32 (128 MB; their float64 block under
# twice that), whatever the corpus size.
_SCORE_BUDGET = 1 << 25
# Rows are scored in blocks of at most this many float64 values (32 MB).
_BLOCK_BUDGET = 1 << 22


def quantization_bits(dimension: int) -> int:
    """Bits b of the integer vectors of a ``dimension``-dim search: the largest b (at most
    24, a float32's precision) with ``dimension * 4**b <= 2**53``, so that an inner product
    of two vectors of integers in [-2**b, 2**b] and all its partial sums are exact in
    float64. 21 bits for 1024 dimensions, 22 for 384, 20 for 3072."""
    need = max(int(dimension) - 1, 0).bit_length()  # ceil(log2(dimension))
    return min(24, (53 - need) // 2)


def snap(vectors: np.ndarray, bits: int) -> np.ndarray:
    """Each row rounded to a grid of ``2**(e - bits)``, e the exponent with
    ``max|row| < 2**e``: the row becomes integers in [-2**bits, 2**bits] times that power of
    two (rounding to the nearest, half to even), exactly representable as float32
    (``bits <= 24``). A value moves by at most half a step, under ``2**-bits`` times the
    row's largest value. Refuses non-finite values (``ValueError``).

    With ``bits = quantization_bits(dimension)`` the float64 inner product of two snapped
    rows is exact, and so is every partial sum of it, in whatever order it is added up.
    """
    x = np.asarray(vectors)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-d array of vectors, got shape {x.shape}")
    peak = np.abs(x).max(axis=1).astype(np.float64) if x.shape[1] else np.zeros(len(x))
    if not np.isfinite(peak).all():
        raise ValueError("vectors hold NaN or infinite values")
    _, exponent = np.frexp(peak)  # peak = m * 2**exponent with 0.5 <= m < 1 (0 for 0)
    # Powers of two, so multiplying by them is exact (clipped: no overflow for tiny rows).
    shift = np.clip(bits - exponent, -1000, 1000)
    up, down = np.ldexp(1.0, shift)[:, None], np.ldexp(1.0, -shift)[:, None]
    out = np.empty(x.shape, dtype=np.float32)
    step = max(1, _BLOCK_BUDGET // max(x.shape[1], 1))
    for start in range(0, len(x), step):
        part = x[start : start + step].astype(np.float64)
        part *= up[start : start + step]
        np.rint(part, out=part)
        part *= down[start : start + step]
        out[start : start + step] = part
    return out


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
    """Exact inner-product search: every row scored, reproducibly (see the module docstring).

    The rows are snapped once at construction (:func:`snap`); each query batch is snapped
    the same way and scored against blocks of rows in float64, where every sum is exact,
    then rounded once to float32. A (query, row) score therefore depends on nothing but
    those two vectors: not on the BLAS library or its thread count, the other queries of a
    batch, the batch size or the query order. Memory: the snapped rows (float32, as much as
    the embeddings) plus, per batch, at most 2**25 float32 scores and float64 blocks of at
    most 2**22 values.
    """

    kind = "exact"

    def __init__(self, embeddings: np.ndarray) -> None:
        self.embeddings = _as_matrix(embeddings)
        self.size, self.dimension = self.embeddings.shape
        self.bits = quantization_bits(self.dimension)
        self._rows = snap(self.embeddings, self.bits)
        self.batch_size = max(1, _SCORE_BUDGET // max(self.size, 1))
        self._block = max(1, _BLOCK_BUDGET // max(self.dimension, 1))

    def scores(self, queries: np.ndarray) -> np.ndarray:
        """Every row's score for every query, ``(num_queries, size)`` float32."""
        q = _as_matrix(queries, self.dimension)
        out = np.empty((len(q), self.size), dtype=np.float32)
        for start in range(0, len(q), self.batch_size):
            out[start : start + self.batch_size] = self._scores(q[start : start + self.batch_size])
        return out

    def _scores(self, q: np.ndarray) -> np.ndarray:
        """The float32 scores of one batch of (float32, checked) queries against every row."""
        qf = snap(q, self.bits).astype(np.float64)
        out = np.empty((len(q), self.size), dtype=np.float32)
        if len(q) == 0 or self.size == 0:
            return out
        rows = np.empty((min(self._block, self.size), self.dimension), dtype=np.float64)
        for start in range(0, self.size, self._block):
            stop = min(start + self._block, self.size)
            part = rows[: stop - start]
            np.copyto(part, self._rows[start:stop])  # float32 → float64, one reused buffer
            # Each sum is a power of two times integers below 2**53 in magnitude, so every
            # partial sum is exact: the BLAS may block, thread or fuse as it likes.
            out[:, start:stop] = qf @ part.T  # the one rounding, to float32
        return out

    def search(self, queries: np.ndarray, k: int) -> Neighbours:
        """The k best rows per query (fewer when ``size < k``); ``k <= 0`` gives none."""
        q = _as_matrix(queries, self.dimension)
        k = min(max(k, 0), self.size)
        positions = np.empty((len(q), k), dtype=np.int64)
        scores = np.empty((len(q), k), dtype=np.float32)
        for start in range(0, len(q), self.batch_size):
            block = self._scores(q[start : start + self.batch_size])
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
