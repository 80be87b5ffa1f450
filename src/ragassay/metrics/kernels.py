"""The retrieval kernels: vectorised formulas over relevant ranks, one per measure family
(550 lines: every family of the measure table has its kernel here, beside what they read).

Every kernel reads a :class:`Relevance`: per query (row) the rank and grade of each relevant
document it ranks. Grade >= 1 is relevant (trec_eval's default relevance level 1), grade <= 0 or
unjudged is not; only nDCG uses the grade itself, as gain. Each returns an array of shape
(queries, len(cutoffs)), one column per cutoff (None: uncut). The measure table
(:mod:`.measures`) names them; :func:`~.ir.evaluate` and :func:`~.retrieval.retrieval_scores`
call them, and neither holds a formula of its own.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Generic, TypeVar

import numpy as np

Cutoffs = Sequence[float | None]  # ranks, or fractions (iprec_at_recall)
Kernel = Callable[["Relevance", Cutoffs], np.ndarray]


# --- what every kernel reads --------------------------------------------------------------

_T = TypeVar("_T")


class _cached(Generic[_T]):  # noqa: N801 - used as a decorator, like functools.cached_property
    """A computed-once attribute, without the lock functools.cached_property takes before
    Python 3.12 (which doubles the cost of a one-query :class:`Relevance`)."""

    def __init__(self, fn: Callable[[Any], _T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __get__(self, obj: object, owner: type | None = None) -> _T:
        if obj is None:  # looked up on the class (help(), doc tools)
            return self  # type: ignore[return-value]
        value = self.fn(obj)
        obj.__dict__[self.name] = value  # shadows this descriptor from now on
        return value


class Relevance:
    """Relevance of the ranked documents of q queries, held as their relevant hits.

    A hit is a relevant document (grade >= 1) in a query's ranking: ``hit_query`` (its query
    row, ascending), ``hit_rank`` (its rank from 0, ascending within a query) and
    ``hit_grade``. ``width``: the depth of the longest ranking (at least 1; a rank beyond a
    query's own depth holds no document, so cut-offs up to ``width`` are what the rankings
    allow). ``ideal`` (q, w): each query's relevant grades sorted descending, zero-padded to
    at least one column; ``num_rel`` (q,): number of relevant judged documents; ``depth``
    (q,): number of documents each query retrieved (an empty ranking: 0), which the set
    measures and ``utility`` read (None: ``width`` for every query).

    Only the hits are stored, not a (queries x depth) matrix: every measure reads the ranks of
    the relevant documents only, and a statistic over the top k is a sum over the hits ranked
    below k, added in rank order (adding the 0 of a non-relevant rank changes no float). A
    statistic that is a count or sum over relevant documents is 0 for a query without any,
    so dividing it by :attr:`num_rel_or_one` (or nDCG's ideal DCG, 1 then) gives the 0
    trec_eval reports.
    """

    def __init__(self, hit_query: np.ndarray, hit_rank: np.ndarray, hit_grade: np.ndarray,
                 width: int, ideal: np.ndarray, num_rel: np.ndarray,
                 depth: np.ndarray | None = None) -> None:
        self.hit_query = hit_query
        self.hit_rank = hit_rank
        self.hit_grade = hit_grade
        self.width = max(1, width)
        self.ideal = ideal
        self.num_rel = num_rel
        self.queries = len(num_rel)
        self._found_at: dict[tuple[float | None, ...], np.ndarray] = {}
        # what the trec_eval join adds (:meth:`with_judged`); a RAG row has none of it
        self.nonrel_query = self.nonrel_rank = np.array([], dtype=np.int64)
        self.nonrel_grade = np.array([], dtype=np.float64)
        self.unjudged_query = self.unjudged_rank = np.array([], dtype=np.int64)
        self.num_nonrel = np.zeros(self.queries)
        self.num_rel_at_level = num_rel  # |grade >= level|: num_rel unless graded
        # each query's number of documents retrieved (trec_eval's num_ret); None: every
        # ranking is ``width`` long (one RAG ranking)
        self.depth: np.ndarray | None = depth
        # trec_eval's interpolated precision of a ranking left empty (0 / 0: NaN) is printed
        # only for a file's ranking that its options emptied (-J, -M); an empty ranking
        # given to the Python API reads 0, as a query missing from the run does
        self.empty_is_nan = False
        self.version = 9

    def with_judged(self, nonrel_query: np.ndarray, nonrel_rank: np.ndarray,
                    nonrel_grade: np.ndarray, unjudged_query: np.ndarray,
                    unjudged_rank: np.ndarray, num_nonrel: np.ndarray, depth: np.ndarray,
                    version: int = 9, num_rel_at_level: np.ndarray | None = None
                    ) -> Relevance:
        """Add the judged non-relevant documents (0 <= grade < level) the rankings hold,
        ascending by (query, rank), with their grades; the documents judged with a
        negative grade (trec_eval: in the pool, unjudged), ascending; each query's number
        of judged non-relevant documents (``num_nonrel``) and of documents retrieved
        (``depth``); the trec_eval version whose rules the kernels follow; for a graded
        Relevance, each query's number of documents judged at or above the relevance level
        (``num_rel_at_level``). Returns self."""
        if num_rel_at_level is not None:
            self.num_rel_at_level = np.asarray(num_rel_at_level, dtype=np.float64)
        self.nonrel_query, self.nonrel_rank = nonrel_query, nonrel_rank
        self.nonrel_grade = nonrel_grade
        self.unjudged_query, self.unjudged_rank = unjudged_query, unjudged_rank
        self.num_nonrel = np.asarray(num_nonrel, dtype=np.float64)
        self.depth = depth
        self.empty_is_nan = True
        self.version = version
        return self

    @classmethod
    def from_flat(cls, grades: Sequence[float], depths: Sequence[int],
                  ideal: Sequence[float], num_rel: Sequence[int]) -> Relevance:
        """From concatenated rows: ``grades`` holds ``depths[i]`` values for query i,
        ``ideal`` holds ``num_rel[i]`` relevant grades (descending) for query i."""
        flat = np.asarray(grades, dtype=np.float64)
        sizes = np.asarray(depths, dtype=np.int64)
        row = np.repeat(np.arange(len(sizes)), sizes)
        rank = np.arange(len(flat)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        hit = np.flatnonzero(flat >= 1)
        return cls(row[hit], rank[hit], flat[hit], int(sizes.max()) if len(sizes) else 0,
                   pad_rows(ideal, num_rel), np.asarray(num_rel, dtype=np.float64), sizes)

    @classmethod
    def one(cls, grades: Sequence[float], ideal: Sequence[float]) -> Relevance:
        """One query: the grades of its ranked documents and its relevant grades, descending."""
        rank = [i for i, g in enumerate(grades) if g >= 1]
        one = cls(np.zeros(len(rank), dtype=np.int64), np.array(rank, dtype=np.int64),
                  np.array([grades[i] for i in rank], dtype=np.float64), len(grades),
                  np.array([ideal if len(ideal) else (0,)], dtype=np.float64),
                  np.array([len(ideal)], dtype=np.float64))
        one.num_rel_or_one = np.array([[len(ideal) or 1]], dtype=np.float64)
        return one

    def _sum_below(self, cutoffs: Cutoffs, weights: np.ndarray | None) -> np.ndarray:
        """(q, len(cutoffs)) per query the sum of ``weights`` (None: the count) over the hits
        ranked within the top k (k None: all), added in rank order."""
        out = np.empty((self.queries, len(cutoffs)),
                       dtype=np.int64 if weights is None else np.float64)
        for j, k in enumerate(cutoffs):
            if k is None or k >= self.width:
                query, w = self.hit_query, weights
            else:
                inside = self.hit_rank < k
                query, w = self.hit_query[inside], None if weights is None else weights[inside]
            out[:, j] = np.bincount(query, w, minlength=self.queries)
        return out

    def found_at(self, cutoffs: Cutoffs) -> np.ndarray:
        """(q, len(cutoffs)) |rel ∩ top-k| (kept: most kernels start from it)."""
        key = tuple(cutoffs)
        found = self._found_at.get(key)
        if found is None:
            found = self._found_at[key] = self._sum_below(key, None)
        return found

    @_cached
    def _first_hit(self) -> np.ndarray:
        """Index of each query's first hit (meaningful where the query has a hit)."""
        sizes = np.bincount(self.hit_query, minlength=self.queries)
        return np.cumsum(sizes) - sizes

    @_cached
    def first_or_one(self) -> np.ndarray:
        """(q, 1) rank (from 1) of the first relevant document, 1 when none is ranked."""
        first = np.ones((self.queries, 1), dtype=np.int64)
        has = np.bincount(self.hit_query, minlength=self.queries) > 0
        first[has, 0] = self.hit_rank[self._first_hit[has]] + 1
        return first

    @property
    def first(self) -> np.ndarray:
        """(q,) rank of the first relevant document, 0 when none is ranked."""
        return np.where(self.found_at([None])[:, 0] > 0, self.first_or_one[:, 0], 0)

    @_cached
    def num_rel_or_one(self) -> np.ndarray:
        """(q, 1) |rel|, 1 for a query without relevant documents."""
        return np.where(self.num_rel > 0, self.num_rel, 1.0)[:, None]

    def dcg_at(self, cutoffs: Cutoffs) -> np.ndarray:
        """(q, len(cutoffs)) DCG of the top k: sum of grade / log2(rank + 1) over the
        relevant ranks <= k."""
        return self._sum_below(cutoffs, self._gains)

    @_cached
    def _gains(self) -> np.ndarray:
        return self.hit_grade / _log2_ranks(self.width)[self.hit_rank]

    def idcg_at(self, cutoffs: Cutoffs) -> np.ndarray:
        """(q, len(cutoffs)) ideal DCG of the top k (the DCG of the relevant grades,
        descending); 1 for a query without relevant documents (its DCG is 0, and so its
        nDCG)."""
        return self._idcg_or_one[:, _columns(self._idcg_or_one.shape[1], tuple(cutoffs))]

    @_cached
    def _idcg_or_one(self) -> np.ndarray:
        idcg = (self.ideal / _log2_ranks(self.ideal.shape[1])).cumsum(axis=1)
        idcg[idcg == 0] = 1.0  # 0 only without relevant documents: a grade is >= 1
        return idcg

    def precision_sum_at(self, cutoffs: Cutoffs) -> np.ndarray:
        """(q, len(cutoffs)) sum over the relevant ranks j <= k of P@j = |rel ∩ top-j| / j."""
        return self._sum_below(cutoffs, self._precisions)

    @_cached
    def _precisions(self) -> np.ndarray:
        """P@j at each hit's rank j: the hit's place among its query's hits over j."""
        found = np.arange(1, len(self.hit_query) + 1) - self._first_hit[self.hit_query]
        return found / _ranks(self.width)[self.hit_rank]

    def found_in_top_r(self) -> np.ndarray:
        """(q,) |rel ∩ top-R|, R = |rel| (at least 1, at most the depth of the rankings)."""
        limit = np.clip(self.num_rel.astype(np.int64), 1, self.width)
        inside = self.hit_rank < limit[self.hit_query]
        return np.bincount(self.hit_query[inside], minlength=self.queries)


_TABLE_SIZE = 64
_LOG2_RANKS = np.log2(np.arange(2, _TABLE_SIZE + 2, dtype=np.float64))
_RANKS = np.arange(1, _TABLE_SIZE + 1, dtype=np.float64)


def _log2_ranks(n: int) -> np.ndarray:
    """log2(i + 1) for the ranks i = 1..n (a cached table, grown on demand)."""
    global _LOG2_RANKS
    if n > len(_LOG2_RANKS):
        _LOG2_RANKS = np.log2(np.arange(2, 2 * n + 2, dtype=np.float64))
    return _LOG2_RANKS[:n]


def _ranks(n: int) -> np.ndarray:
    """The ranks 1..n as floats (a cached table, grown on demand)."""
    global _RANKS
    if n > len(_RANKS):
        _RANKS = np.arange(1, 2 * n + 1, dtype=np.float64)
    return _RANKS[:n]


@lru_cache(maxsize=1024)
def _columns(width: int, cutoffs: tuple[float | None, ...]) -> np.ndarray:
    """Column of a prefix of ``width`` columns holding the top k (k None: the last)."""
    return np.array([width - 1 if k is None else min(k, width) - 1 for k in cutoffs],
                    dtype=np.intp)


@lru_cache(maxsize=1024)
def _cutoff_values(cutoffs: tuple[int, ...]) -> np.ndarray:
    return np.array(cutoffs, dtype=np.float64)


def pad_rows(flat: Sequence[float] | np.ndarray, lengths: Sequence[int] | np.ndarray) -> np.ndarray:
    """Lay out concatenated rows of the given lengths as a zero-padded float matrix with at
    least one column, so kernels never reduce over an empty axis."""
    counts = np.asarray(lengths, dtype=np.int64)
    width = max(1, int(counts.max()) if len(counts) else 0)
    out = np.zeros((len(counts), width), dtype=np.float64)
    if len(flat):
        row_idx = np.repeat(np.arange(len(counts)), counts)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        out[row_idx, np.arange(len(flat)) - starts] = flat
    return out


# --- the kernels: (q, len(cutoffs)) values, one column per cutoff --------------------------
# Each is registered with its formula in the table below; a new retrieval measure is a
# kernel here and one MeasureInfo there, nothing else.


def precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return r.found_at(cutoffs) / _cutoff_values(tuple(cutoffs))  # cutoff required


def recall(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return r.found_at(cutoffs) / r.num_rel_or_one


def hit(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return (r.found_at(cutoffs) > 0).astype(np.float64)


def mrr(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    # a hit at k means the first relevant rank is <= k
    return (r.found_at(cutoffs) > 0) / r.first_or_one


def ndcg(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return r.dcg_at(cutoffs) / r.idcg_at(cutoffs)


def average_precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return r.precision_sum_at(cutoffs) / r.num_rel_or_one


def r_precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    found = r.found_in_top_r()[:, None] / r.num_rel_or_one
    return np.repeat(found, len(cutoffs), axis=1)


def _above(r: Relevance, query: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """At each hit, how many of the documents (``query``, ``rank``; ascending) are ranked
    above it in its query (a binary search on (query, rank) keys)."""
    span = np.int64(r.width + 1)
    key = query * span + rank
    return (np.searchsorted(key, r.hit_query * span + r.hit_rank)
            - np.searchsorted(key, r.hit_query * span))


def _per_query(r: Relevance, cutoffs: Cutoffs, values: np.ndarray) -> np.ndarray:
    return np.repeat(values[:, None], len(cutoffs), axis=1)


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """top / bottom, 0 where bottom is 0 (trec_eval leaves the value at 0)."""
    out = np.zeros(len(top))
    np.divide(top, bottom, out=out, where=bottom != 0)
    return out


def bpref(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    # n: the judged non-relevant ranks above each hit
    above = _above(r, r.nonrel_query, r.nonrel_rank)
    rel, nonrel = r.num_rel[r.hit_query], r.num_nonrel[r.hit_query]
    with np.errstate(divide="ignore", invalid="ignore"):  # n = 0 takes the other branch
        term = np.where(above > 0, 1.0 - np.minimum(above, rel) / np.minimum(nonrel, rel), 1.0)
    total = np.bincount(r.hit_query, term, minlength=r.queries)  # added in rank order
    return _per_query(r, cutoffs, total / r.num_rel_or_one[:, 0])


def iprec_at_recall(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    levels = np.array(cutoffs, dtype=np.float64)  # cutoff required
    found = r.found_at([None])[:, 0]
    wanted = r.num_rel[:, None] * levels
    # trec_eval 9 truncates x * |rel| + 0.9, 10 rounds half away from zero (lround)
    need = (wanted + 0.9 if r.version < 10 else np.floor(wanted + 0.5)).astype(np.int64)
    out = np.zeros((r.queries, len(levels)))
    has = found > 0
    if has.any():
        best = _suffix_max(r._precisions, r.hit_query)
        at = r._first_hit[:, None] + np.maximum(need, 1) - 1
        inside = has[:, None] & (need <= found[:, None])
        out[inside] = best[at[inside]]
    if r.empty_is_nan and r.depth is not None and not bool(r.depth.all()):  # 0 / 0
        out[(r.depth == 0)[:, None] & (need == 0)] = np.nan
    return out


def _suffix_max(values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """At each hit, the largest value of the hits of its query from it on (exact: a running
    maximum over the values' integer ranks, offset so that each query starts afresh)."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[order] = np.arange(len(values))
    n = np.int64(len(values))
    offset = (np.int64(query.max()) - query[::-1]) * n  # grows as the reversed queries fall
    running = np.maximum.accumulate(ranks[::-1] + offset) - offset
    return values[order[running[::-1]]]



def _found(r: Relevance) -> np.ndarray:
    return r.found_at([None])[:, 0].astype(np.float64)


def _depth(r: Relevance) -> np.ndarray:
    return (np.full(r.queries, float(r.width)) if r.depth is None
            else r.depth.astype(np.float64))


def set_precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return _per_query(r, cutoffs, _ratio(_found(r), _depth(r)))


def set_relative_precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return _per_query(r, cutoffs, _ratio(_found(r), np.minimum(_depth(r), r.num_rel)))


def set_recall(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return _per_query(r, cutoffs, _ratio(_found(r), r.num_rel))


def set_map(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    found = _found(r)
    return _per_query(r, cutoffs, _ratio(found * found, _depth(r) * r.num_rel))


def set_f(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    found, depth = _found(r), _depth(r)
    p, rec = _ratio(found, depth), _ratio(found, r.num_rel)
    x = 1.0
    return _per_query(r, cutoffs, _ratio((x + 1.0) * p * rec, x * p + rec))


def utility(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    # trec_eval's default coefficients 1, -1, 0, 0: relevant retrieved minus the others
    found = _found(r)
    return _per_query(r, cutoffs, 1.0 * found + -1.0 * (_depth(r) - found))


def _found_below(r: Relevance, k: np.ndarray) -> np.ndarray:
    """(q, len(k[0])) |rel ∩ top-k| for a cutoff per query and column (``k`` (q, c))."""
    out = np.zeros(k.shape)
    for j in range(k.shape[1]):
        inside = r.hit_rank < k[r.hit_query, j]
        out[:, j] = np.bincount(r.hit_query[inside], minlength=r.queries)
    return out


def rprec_mult(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    k = (r.num_rel[:, None] * np.array(cutoffs, dtype=np.float64) + 0.9).astype(np.int64)
    out = np.zeros(k.shape)
    np.divide(_found_below(r, k), k, out=out, where=k > 0)
    return out


def relative_precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    k = np.array(cutoffs, dtype=np.float64)
    bottom = np.minimum(k[None, :], r.num_rel[:, None])
    out = np.zeros(bottom.shape)
    np.divide(r.found_at(cutoffs), bottom, out=out, where=bottom > 0)
    return out


ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def eleven_point_average(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    points = iprec_at_recall(r, ELEVEN_POINTS)
    total = np.zeros(r.queries)
    for j in range(len(ELEVEN_POINTS) - 1, -1, -1):  # trec_eval adds from the top level
        total += points[:, j]
    return _per_query(r, cutoffs, total / len(ELEVEN_POINTS))


def binary_g(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    # 1 / log2(2 + the documents above that are not relevant): rank - place among hits
    place = np.arange(len(r.hit_query)) - r._first_hit[r.hit_query]
    terms = 1.0 / np.log2((3 + r.hit_rank - (place + 1)).astype(np.float64))
    total = np.bincount(r.hit_query, terms, minlength=r.queries)
    return _per_query(r, cutoffs, total / r.num_rel_or_one[:, 0])


INFAP_EPSILON = 0.00001


def inferred_ap(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    j = r.hit_rank.astype(np.float64)
    rel_before = (np.arange(len(r.hit_query)) - r._first_hit[r.hit_query]).astype(np.float64)
    nonrel = _above(r, r.nonrel_query, r.nonrel_rank).astype(np.float64)
    unjudged = _above(r, r.unjudged_query, r.unjudged_rank).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # j = 0 takes the other branch
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_before + nonrel + unjudged) / j) * (
            (rel_before + INFAP_EPSILON) / (rel_before + nonrel + 2 * INFAP_EPSILON))
    term = np.where(r.hit_rank == 0, 1.0, term)
    total = np.bincount(r.hit_query, term, minlength=r.queries)
    return _per_query(r, cutoffs, total / r.num_rel_or_one[:, 0])


# --- trec_eval's gain measures that walk each ranking (G, ndcg_rel, Rndcg) -----------------
# Their sums depend on every rank, so they are computed query by query over the hits (the
# documents between two hits add nothing but their count), in trec_eval's order of
# additions; Python floats are C doubles, math.log2 is the C library's.


def _queries(r: Relevance) -> list[tuple[list[int], list[float], list[float], int]]:
    """Per query: its hits' ranks and grades, its ideal grades (descending, > 0) and its
    number of documents retrieved."""
    bounds = np.append(r._first_hit, len(r.hit_query)).tolist() if r.queries else [0]
    ranks, grades = r.hit_rank.tolist(), r.hit_grade.tolist()
    depth = _depth(r).astype(np.int64).tolist()
    out = []
    for q, row in enumerate(r.ideal.tolist()):
        lo, hi = bounds[q], bounds[q + 1]
        out.append((ranks[lo:hi], grades[lo:hi], [g for g in row if g > 0], depth[q]))
    return out


def g_measure(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    values = np.zeros(r.queries)
    for q, (ranks, grades, ideal, _) in enumerate(_queries(r)):
        n = len(ideal)
        total_ideal = sum(ideal) if ideal else 0.0
        cost_prefix = list(itertools.accumulate(ideal))
        got, result = 0.0, 0.0
        for rank, grade in zip(ranks, grades, strict=True):
            got += grade
            cost = cost_prefix[rank] if rank < n else total_ideal + (rank - n + 1)
            result += grade / math.log2(2 + cost - got)
        if total_ideal > 0.0:
            values[q] = result / total_ideal
    return _per_query(r, cutoffs, values)


def _ideal_dcg_prefix(ideal: list[float]) -> list[float]:
    total, out = 0.0, []
    for i, g in enumerate(ideal):
        total += g / math.log2(i + 2)
        out.append(total)
    return out


def ndcg_rel(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    values = np.zeros(r.queries)
    for q, (ranks, grades, ideal, _) in enumerate(_queries(r)):
        if not ideal:
            continue
        idcg = _ideal_dcg_prefix(ideal)
        dcg, total = 0.0, 0.0
        for rank, grade in zip(ranks, grades, strict=True):
            dcg += grade / math.log2(rank + 2)
            total += dcg / idcg[min(rank, len(ideal) - 1)]
        total += float(len(ideal) - len(ranks)) * dcg / idcg[-1]
        if total > 0.0:
            values[q] = total / len(ideal)
    return _per_query(r, cutoffs, values)


def r_ndcg(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    values = np.zeros(r.queries)
    relevant = r.num_rel_at_level.tolist()  # trec_eval: 0 without a grade >= level
    for q, (ranks, grades, ideal, depth) in enumerate(_queries(r)):
        if not relevant[q] or not ideal:
            continue
        idcg = _ideal_dcg_prefix(ideal)
        gains = [g / math.log2(rank + 2) for rank, g in zip(ranks, grades, strict=True)]
        dcg_prefix = list(itertools.accumulate(gains))

        def dcg_before(b: int, ranks: list[int] = ranks, prefix: list[float] = dcg_prefix
                       ) -> float:
            k = bisect.bisect_left(ranks, b)
            return prefix[k - 1] if k else 0.0

        n = len(ideal)
        total, count = 0.0, 0
        for b in range(1, n + 1):  # where the ideal gain changes (0 from n on)
            if (ideal[b] if b < n else 0.0) != ideal[b - 1]:
                total += dcg_before(b) / idcg[b - 1]
                count += 1
        if n + 1 < depth:
            total += dcg_before(depth) / idcg[-1]
            count += 1
        values[q] = total / count
    return _per_query(r, cutoffs, values)
