# Over 450 lines: exact search (its error bound, its plain per-query rescoring kept beside the
# batched one of exact_rescore.py) and the HNSW search share one interface and top-k rule.
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
between texts; rankings of the fixture are unchanged.

Fast, and still exact. Taking every product in float64 costs about five times the float32
one (a float64 copy of the rows per batch, half the SIMD width). So :meth:`ExactSearch.search`
first takes the float32 product of the snapped vectors, whose error is bounded whatever the
BLAS does: ``|fl32(q·r) − q·r| ≤ γ_n ‖q‖ ‖r‖``, ``γ_n = n·u / (1 − n·u)``, ``u = 2**-24``,
n the dimension (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1: any order
of summation, with or without fused multiply-adds). Only the rows whose float32 score lies
within twice that bound (plus a few float32 spacings) of the k-th best, or of a tracked
row's score, could be ordered differently by the exact scores; those rows are scored again
exactly (float64, as above), and the hits, their scores and the tracked ranks are taken
from the exact scores alone. The result is bit for bit that of scoring every row exactly,
at about the time of the plain float32 product and top k, whose scores change with the
thread count and the batch (``bench/dense_search.py``, docs/benchmarks.md).

:class:`ApproximateSearch` is left to faiss: its scores are faiss's own float32 inner
products (computed per query, a query's walk not depending on the other queries), not the
snapped exact ones, and are not covered by the guarantee above; it is used only from
:data:`ANN_THRESHOLD` rows on.
"""

from __future__ import annotations

import contextlib
import functools
import mmap
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

# From this many rows on, dense search is approximate (HNSW): an index this large records its
# search and recall at build (``ragassay.index.build.measure_search``). Measured on 2 cores
# with 1024-dim unit vectors: the HNSW graph of 50,000 of them takes 219 s to build on one
# thread (busy machine; the graph is rebuilt when a run loads the index), so about an hour
# for a million, while exact search at a million rows costs tens of milliseconds a question:
# below ten million rows (40 GB of 1024-dim vectors, beyond this machine's memory) exact
# search is both exact and faster for question sets of any usual size.
ANN_THRESHOLD = 10_000_000
# Scores of one query batch stay under this many float32 (128 MB; their float64 block under
# twice that), whatever the corpus size.
_SCORE_BUDGET = 1 << 25
# Rows are scored in blocks of at most this many float64 values (32 MB).
_BLOCK_BUDGET = 1 << 22
_FLOAT32_UNIT = 2.0**-24  # unit roundoff of float32


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
    out = np.empty(x.shape, dtype=np.float32)
    step = max(1, _BLOCK_BUDGET // max(x.shape[1], 1))
    for start in range(0, len(x), step):  # a block at a time: no whole-array temporaries
        block = x[start : start + step]
        peak = (np.abs(block).max(axis=1).astype(np.float64) if x.shape[1]
                else np.zeros(len(block)))
        if not np.isfinite(peak).all():
            raise ValueError("vectors hold NaN or infinite values")
        _, exponent = np.frexp(peak)  # peak = m * 2**exponent with 0.5 <= m < 1 (0 for 0)
        # Powers of two, so multiplying by them is exact (clipped: no overflow for tiny rows).
        shift = np.clip(bits - exponent, -1000, 1000)
        # float32 rows whose powers of two are float32 numbers are snapped in float32:
        # scaling by a power of two and rint are exact there, and the last product rounds
        # the exact value once, as storing the float64 result does, so the bits are the
        # same (and it is several times faster than converting to float64). Others go
        # through float64.
        work = (np.float32 if x.dtype == np.float32 and bool((np.abs(shift) <= 100).all())
                else np.float64)
        part: np.ndarray = block.astype(work)
        part *= np.ldexp(1.0, shift).astype(work)[:, None]
        np.rint(part, out=part)
        part *= np.ldexp(1.0, -shift).astype(work)[:, None]
        out[start : start + step] = part
        release_rows(x, start, start + step)
    return out


def release_rows(x: np.ndarray, start: int, stop: int) -> None:
    """Let the OS take back the memory of rows ``start:stop`` of a memory-mapped array once
    they are read (``madvise(MADV_DONTNEED)``: the pages leave this process, the file's
    data stays in the OS cache and is read again if the rows are used). So an index loaded
    as a memory map and snapped by :class:`ExactSearch` is held once, as snapped rows. A
    no-op for an array in memory or a view that is not C-contiguous."""
    base = x.base
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    if base is None or not x.flags.c_contiguous or not hasattr(mmap, "MADV_DONTNEED"):
        return
    offset = x.ctypes.data - np.frombuffer(base, dtype=np.uint8).ctypes.data
    row = x.strides[0] if x.ndim else 0
    page = mmap.PAGESIZE
    first = -(-(offset + start * row) // page) * page  # whole pages inside the rows only
    last = (offset + min(stop, len(x)) * row) // page * page
    if last > first:
        base.madvise(mmap.MADV_DONTNEED, first, last - first)


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
    the same way. A (query, row) score is the exact float64 inner product of the snapped
    vectors rounded once to float32, so it depends on nothing but those two vectors: not
    on the BLAS library or its thread count, the other queries of a batch, the batch size
    or the query order. :meth:`search` finds the best rows through the float32 product and
    rescoring exactly the rows its error bound leaves in doubt (module docstring); the
    result equals scoring every row exactly (:meth:`scores`). Memory: the snapped rows
    (float32, as much as the embeddings; the embeddings themselves are not kept) plus, per
    batch, at most 2**25 float32 scores.
    """

    kind = "exact"

    def __init__(self, embeddings: np.ndarray) -> None:
        rows = _as_matrix(embeddings)
        self.size, self.dimension = rows.shape
        self.bits = quantization_bits(self.dimension)
        self._rows = snap(rows, self.bits)
        del rows
        self.batch_size = max(1, _SCORE_BUDGET // max(self.size, 1))
        self._block = max(1, _BLOCK_BUDGET // max(self.dimension, 1))
        self._row_norm = _max_norm(self._rows, self._block)
        n = max(self.dimension, 1)
        self._gamma = n * _FLOAT32_UNIT / (1 - n * _FLOAT32_UNIT)

    def scores(self, queries: np.ndarray) -> np.ndarray:
        """Every row's exact score for every query, ``(num_queries, size)`` float32."""
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

    def _exact(self, positions: np.ndarray, query: np.ndarray) -> np.ndarray:
        """The exact float32 scores of some rows for one snapped float64 query (as
        :meth:`_scores`: exact float64 sums, one rounding)."""
        return (self._rows[positions].astype(np.float64) @ query).astype(np.float32)

    def search(self, queries: np.ndarray, k: int) -> Neighbours:
        """The k best rows per query (fewer when ``size < k``); ``k <= 0`` gives none."""
        return self.search_tracked(queries, k)[0]

    def search_tracked(self, queries: np.ndarray, k: int,
                       track: Sequence[Iterable[int]] | None = None
                       ) -> tuple[Neighbours, list[dict[int, int]]]:
        """:meth:`search`, and for query i the 1-based rank in the whole index of each row
        of ``track[i]`` (the rows scoring higher, plus those before it scoring the same,
        plus one: the tie rule of :func:`top_k`), both as scoring every row exactly gives.
        Each batch of queries is rescored at once (:mod:`ragassay.exact_rescore`)."""
        from .exact_rescore import best_rows, tracked_ranks

        q = _as_matrix(queries, self.dimension)
        k = min(max(k, 0), self.size)
        positions = np.empty((len(q), k), dtype=np.int64)
        scores = np.empty((len(q), k), dtype=np.float32)
        ranks: list[dict[int, int]] = []
        with _blas_threads(self.size * self.dimension):
            for start in range(0, len(q), self.batch_size):
                sq = snap(q[start : start + self.batch_size], self.bits)
                stop = start + len(sq)
                approx = sq @ self._rows.T  # float32: fast, within the bound of each query
                qf = sq.astype(np.float64)
                # twice the bound: the norms are rounded too
                bound = 2 * self._gamma * self._row_norm * np.linalg.norm(qf, axis=1)
                if k and len(sq):
                    positions[start:stop], scores[start:stop] = best_rows(
                        self._rows, approx, qf, bound, k)
                ranks += tracked_ranks(self._rows, approx, qf, bound,
                                       track[start:stop] if track is not None
                                       else [()] * len(sq))
        return Neighbours(positions, scores), ranks

    def search_tracked_reference(self, queries: np.ndarray, k: int,
                                 track: Sequence[Iterable[int]] | None = None
                                 ) -> tuple[Neighbours, list[dict[int, int]]]:
        """:meth:`search_tracked` one query at a time (the plain version)."""
        q = _as_matrix(queries, self.dimension)
        k = min(max(k, 0), self.size)
        positions = np.empty((len(q), k), dtype=np.int64)
        scores = np.empty((len(q), k), dtype=np.float32)
        ranks: list[dict[int, int]] = []
        for start in range(0, len(q), self.batch_size):
            sq = snap(q[start : start + self.batch_size], self.bits)
            approx = sq @ self._rows.T  # float32: fast, within the bound of each query
            qf = sq.astype(np.float64)
            # twice the bound: the norms are rounded too
            bound = 2 * self._gamma * self._row_norm * np.linalg.norm(qf, axis=1)
            for j, (row, exact_q) in enumerate(zip(approx, qf, strict=True)):
                i = start + j
                if k:
                    kth = float(np.partition(row, self.size - k)[self.size - k])
                    cand = np.flatnonzero(row >= _below(kth, bound[j]))
                    cand_scores = self._exact(cand, exact_q)
                    order = np.lexsort((cand, -cand_scores))[:k]
                    positions[i], scores[i] = cand[order], cand_scores[order]
                tracked = track[i] if track is not None else ()
                ranks.append({int(p): self._rank(row, exact_q, int(p), bound[j])
                              for p in tracked})
        return Neighbours(positions, scores), ranks

    def _rank(self, approx: np.ndarray, query: np.ndarray, position: int,
              bound: float) -> int:
        """The exact rank of row ``position``: rows whose float32 score is beyond its band
        are surely above or below it; the band's rows are compared exactly."""
        score = float(self._exact(np.array([position]), query)[0])
        lo, hi = _below(score, bound), _above(score, bound)
        band = np.flatnonzero((approx >= lo) & (approx <= hi))
        band_scores = self._exact(band, query)
        ahead = int(np.count_nonzero(approx > hi)) + int(np.count_nonzero(band_scores > score))
        tied_before = int(np.count_nonzero((band_scores == score) & (band < position)))
        return ahead + tied_before + 1

    def describe(self) -> dict[str, Any]:
        """What an index records about the search: ``{"kind": "exact", "size": n}``."""
        return {"kind": self.kind, "size": self.size}


# The exact search's products run on one BLAS thread up to this many row values (an index
# of 16,000 1024-dim rows): a product of that size takes milliseconds, and the other
# threads of a multi-threaded BLAS, left spinning through the rescoring that follows,
# doubled the CPU time of searching a 2,000-row index. A user's thread settings are kept.
_ONE_BLAS_THREAD_UP_TO = 1 << 24
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@functools.cache
def _thread_pools() -> Any:
    """The BLAS libraries loaded (numpy's), found once: a look costs a millisecond or two."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _blas_threads(values: int) -> contextlib.AbstractContextManager[Any]:
    """One BLAS thread while a search of ``values`` row values runs (see above)."""
    if values > _ONE_BLAS_THREAD_UP_TO or any(v in os.environ for v in _THREAD_VARIABLES):
        return contextlib.nullcontext()
    limit: contextlib.AbstractContextManager[Any] = _thread_pools().limit(
        limits=1, user_api="blas")
    return limit


def _margin(center: float, bound: float) -> float:
    """How far a float32 score may lie from an exact score ``center`` (itself rounded to
    float32) and still be ordered either way: the bound of both, plus float32 spacings
    for the roundings of the exact score and of the threshold."""
    return 2 * bound + 4 * float(np.spacing(np.float32(abs(center) + 2 * bound)))


def _below(center: float, bound: float) -> np.float32:
    return np.float32(center - _margin(center, bound))


def _above(center: float, bound: float) -> np.float32:
    return np.float32(center + _margin(center, bound))


def _max_norm(rows: np.ndarray, block: int) -> float:
    """The largest Euclidean norm of the rows, rounded up a little (float64 sums)."""
    peak = 0.0
    for start in range(0, len(rows), block):
        part = rows[start : start + block].astype(np.float64)
        peak = max(peak, float(np.einsum("ij,ij->i", part, part).max(initial=0.0)))
    return float(np.sqrt(peak)) * (1 + 1e-9)


def _faiss() -> Any:
    try:
        import faiss
    except ImportError:
        from .errors import MissingPackage

        raise MissingPackage("the index (ANN_THRESHOLD rows or more)", "faiss-cpu", "ann",
                             "approximate search (HNSW)") from None
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
    faiss-cpu is an error (:class:`~ragassay.errors.MissingPackage`); pass a larger threshold to
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
