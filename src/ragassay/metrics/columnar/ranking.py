"""Run rows ranked in trec_eval's order on columns (score descending, ties by document id
descending), and the ranking helpers both joins of :mod:`.joins` share: a judged row's rank
by counting the rows scored above it, blocks of a query's rows, padded matrices."""

from __future__ import annotations

import numpy as np

_ROUND = 1 << 17  # scores per round of rank_in_rows: its sorted copy stays in the cache


def rank_rows(qcode: np.ndarray, score: np.ndarray, docid: np.ndarray) -> np.ndarray:
    """The permutation that puts run rows in trec_eval's order: query code ascending, score
    descending, ties by document id descending (byte-wise)."""
    n = len(qcode)
    if n < 2:
        return np.arange(n)
    order = blocks_by_query(qcode)  # a run file lists each query's rows together
    q, s = qcode[order], score[order]
    dq, ds = np.diff(q), np.diff(s)
    if not bool(((dq > 0) | ((dq == 0) & (ds <= 0))).all()):  # not ranked by score yet
        order = np.lexsort((-score, qcode))
        q, s = qcode[order], score[order]
    tied = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if not tied.any():
        return order
    # Sort each run of tied rows by document id, descending.
    in_tie = np.zeros(n, dtype=bool)
    in_tie[1:] |= tied
    in_tie[:-1] |= tied
    idx = np.flatnonzero(in_tie)
    group = np.cumsum(np.concatenate(([1], ~tied)))[idx]  # one number per tied run
    _, doc_rank = np.unique(docid[order[idx]], return_inverse=True)
    within = np.lexsort((-doc_rank.astype(np.int64), group))
    order[idx] = order[idx][within]
    return order


def blocks_by_query(qcode: np.ndarray) -> np.ndarray:
    """The permutation that sorts the blocks of equal codes by code, each block's rows kept
    in their order (the usual file lists a query's documents together, ranked)."""
    n = len(qcode)
    if n < 2:
        return np.arange(n)
    start = np.concatenate(([0], np.flatnonzero(qcode[1:] != qcode[:-1]) + 1))
    codes = qcode[start]
    if bool((codes[1:] >= codes[:-1]).all()):
        return np.arange(n)
    size = np.diff(np.append(start, n))
    by_code = np.argsort(codes, kind="stable")
    start, size = start[by_code], size[by_code]
    new_start = np.cumsum(size) - size
    return np.repeat(start - new_start, size) + np.arange(n)


def block_starts(sorted_codes: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """For codes sorted ascending: each code's first row and number of rows (0..count-1)."""
    sizes = np.bincount(sorted_codes, minlength=count)
    return np.cumsum(sizes) - sizes, sizes


def by_query_and_rank(query: np.ndarray, rank: np.ndarray) -> np.ndarray | None:
    """The permutation that sorts rows by (query, rank), None when they already are (a run
    listed in rank order, the usual file, is: one pass instead of a sort). Queries and
    ranks are integers from 0; no (query, rank) repeats."""
    if len(query) < 2:
        return None
    dq, dr = np.diff(query), np.diff(rank)
    if bool(((dq > 0) | ((dq == 0) & (dr > 0))).all()):
        return None
    span = int(rank.max()) + 1
    if (int(query.max()) + 1) * span < 1 << 62:
        return np.argsort(query * span + rank)  # the keys are distinct: any sort will do
    return np.lexsort((rank, query))


def padded(values: np.ndarray, starts: np.ndarray, sizes: np.ndarray, width: int,
            fill: float) -> np.ndarray:
    """The rows of consecutive blocks as a (blocks, width) matrix, ``fill`` after a block's
    end (a view, no copy, when every block has ``width`` rows)."""
    if len(values) == len(starts) * width:
        return values.reshape(len(starts), width)
    out = np.full((len(starts), width), fill, dtype=values.dtype)
    place = np.arange(len(values)) - np.repeat(starts, sizes)
    out[np.repeat(np.arange(len(starts)), sizes), place] = values
    return out


def search_rows(matrix: np.ndarray, rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``np.searchsorted(matrix[r], v, side="right")`` for each (r, v) of ``rows``/``values``,
    each row of ``matrix`` sorted ascending: one branch-free binary search for all,
    log2(width) rounds of one gather each."""
    width = matrix.shape[1]
    flat = matrix.reshape(-1)
    base = rows * width - 1
    count = np.zeros(len(rows), dtype=np.int64)  # elements known to be <= the value
    probe, at = np.empty_like(count), np.empty(len(rows), dtype=matrix.dtype)
    below = np.empty(len(rows), dtype=bool)
    step = 1 << (width.bit_length() - 1)
    while step:
        np.add(count, step, out=probe)
        np.minimum(probe, width, out=probe)
        flat.take(np.add(base, probe), out=at)
        np.less_equal(at, values, out=below)
        np.copyto(count, probe, where=below)
        step >>= 1
    return count


def rank_in_rows(scores: np.ndarray, rows: np.ndarray, values: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """For each value of ``rows``/``values`` (a score in that row of ``scores``, a matrix
    padded with -inf): how many scores of its row are above it (its rank from 0 when it
    is not tied), and whether another score of its row equals it.

    Rows ascending (the usual order) are done in rounds of :data:`_ROUND` scores, so the
    sorted copy of each round stays in the cache."""
    width = scores.shape[1]
    step = max(1, _ROUND // width)
    if len(scores) <= step or (len(rows) > 1 and not bool((np.diff(rows) >= 0).all())):
        return _rank_in_rows(scores, rows, values)
    rank = np.empty(len(rows), dtype=np.int64)
    tied = np.empty(len(rows), dtype=bool)
    edges = np.searchsorted(rows, np.arange(0, len(scores) + step, step))
    for c, lo in enumerate(range(0, len(scores), step)):
        a, b = int(edges[c]), int(edges[c + 1])
        if a < b:
            rank[a:b], tied[a:b] = _rank_in_rows(scores[lo:lo + step], rows[a:b] - lo,
                                                 values[a:b])
    return rank, tied


def _rank_in_rows(scores: np.ndarray, rows: np.ndarray, values: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    width = scores.shape[1]
    ordered = np.sort(scores, axis=1)
    not_above = search_rows(ordered, rows, values)  # the padding -inf is below
    # the scores equal to the value end at not_above: tied when the one before is equal too
    tied = (not_above >= 2) & (ordered.reshape(-1).take(
        rows * width + np.maximum(not_above - 2, 0)) == values)
    return width - not_above, tied
