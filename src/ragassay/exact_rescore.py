"""Exact search's rescoring for a batch of queries at once: from the float32 scores of every
row and their error bound, the k best rows and the ranks of tracked rows by the exact
scores (:class:`ragassay.vector.ExactSearch`, whose docstring gives the bound and why the
exact scores do not depend on how the sums are added up).

Hand-batched: the plain version (``ExactSearch.search_tracked_reference``) takes one query
at a time through a dozen numpy calls, 0.4 s of a 6,000-question run; these take every
query of a batch through each call. The results are the same to the bit: every exact score
is the float64 sum of exact products, whatever the grouping, rounded once to float32.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

# Pairs (row, query) rescored at a time: at most this many float64 values per operand (1 MB:
# the blocks stay in the CPU cache; 16 MB blocks took three times as long).
_PAIR_BUDGET = 1 << 17


def margins(centers: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """How far a float32 score may lie from each exact score ``centers`` (float32 values)
    and still be ordered either way: twice the bound, plus float32 spacings for the
    roundings of the exact score and of the threshold (float64)."""
    centers = centers.astype(np.float64)
    spacing = np.spacing((np.abs(centers) + 2 * bounds).astype(np.float32))
    return 2 * bounds + 4 * spacing.astype(np.float64)


def below(centers: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    return (centers.astype(np.float64) - margins(centers, bounds)).astype(np.float32)


def above(centers: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    return (centers.astype(np.float64) + margins(centers, bounds)).astype(np.float32)


def exact_pairs(rows: np.ndarray, queries: np.ndarray, row_of: np.ndarray,
                query_of: np.ndarray) -> np.ndarray:
    """The exact float32 score of each pair: snapped row ``rows[row_of[j]]`` (float32)
    against snapped query ``queries[query_of[j]]`` (float64)."""
    out = np.empty(len(row_of), dtype=np.float32)
    step = max(1, _PAIR_BUDGET // max(rows.shape[1], 1))
    for start in range(0, len(row_of), step):
        stop = start + step
        part = rows[row_of[start:stop]].astype(np.float64)
        out[start:stop] = np.einsum("ij,ij->i", part, queries[query_of[start:stop]])
    return out


def best_rows(rows: np.ndarray, approx: np.ndarray, queries: np.ndarray, bounds: np.ndarray,
              k: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions and exact scores of the k best rows of each query (``1 <= k <= size``),
    ties by the lower position: the rows whose float32 score ``approx`` lies within the
    margin of the query's k-th best are rescored exactly and sorted."""
    n = approx.shape[1]
    kth = np.partition(approx, n - k, axis=1)[:, n - k]
    query_of, cand = np.nonzero(approx >= below(kth, bounds)[:, None])
    exact = exact_pairs(rows, queries, cand, query_of)
    order = np.lexsort((cand, -exact, query_of))  # by query, then as top_k orders a query's
    starts = np.cumsum(np.bincount(query_of, minlength=len(approx))) - np.bincount(
        query_of, minlength=len(approx))
    take = order[(starts[:, None] + np.arange(k)).ravel()]  # every query has >= k of them
    return cand[take].reshape(-1, k), exact[take].reshape(-1, k)


def tracked_ranks(rows: np.ndarray, approx: np.ndarray, queries: np.ndarray,
                  bounds: np.ndarray, track: Sequence[Iterable[int]]) -> list[dict[int, int]]:
    """For each query, the exact 1-based rank of each of its tracked rows: the rows whose
    float32 score is beyond the tracked row's band are surely above or below it, the band's
    rows are compared exactly (ties: the lower position first)."""
    pairs = [(i, int(p)) for i, tracked in enumerate(track) for p in tracked]
    out: list[dict[int, int]] = [{} for _ in range(len(track))]
    if not pairs:
        return out
    query_of = np.array([i for i, _ in pairs], dtype=np.int64)
    position = np.array([p for _, p in pairs], dtype=np.int64)
    ranks = np.empty(len(pairs), dtype=np.int64)
    step = max(1, _PAIR_BUDGET // max(approx.shape[1], 1))
    for start in range(0, len(pairs), step):
        q, p = query_of[start:start + step], position[start:start + step]
        score = exact_pairs(rows, queries, p, q)
        lo, hi = below(score, bounds[q]), above(score, bounds[q])
        scored = approx[q]
        ahead = np.count_nonzero(scored > hi[:, None], axis=1)
        pair, band = np.nonzero((scored >= lo[:, None]) & (scored <= hi[:, None]))
        band_scores = exact_pairs(rows, queries, band, q[pair])
        ahead += np.bincount(pair[band_scores > score[pair]], minlength=len(q))
        tied = (band_scores == score[pair]) & (band < p[pair])
        ranks[start:start + step] = ahead + np.bincount(pair[tied], minlength=len(q)) + 1
    for (i, row), rank in zip(pairs, ranks.tolist(), strict=True):
        out[i][row] = rank
    return out
