"""The retrieval kernels: vectorised formulas over a relevance matrix, one per measure family.

Every kernel reads a :class:`Relevance` matrix: per query (row) the grade of the document at
each rank. Grade >= 1 is relevant (trec_eval's default relevance level 1), grade <= 0 or
unjudged is not; only nDCG uses the grade itself, as gain. Each returns an array of shape
(queries, len(cutoffs)), one column per cutoff (None: uncut). The measure table
(:mod:`.measures`) names them; :func:`~.ir.evaluate` and :func:`~.retrieval.retrieval_scores`
call them, and neither holds a formula of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Generic, TypeVar

import numpy as np

Cutoffs = Sequence[int | None]
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
    """Relevance of the ranked documents of q queries, zero-padded to a common depth.

    ``grades`` (q, depth): grade of the document at each rank (0 when unjudged or padding);
    ``ideal`` (q, width): each query's relevant grades sorted descending, zero-padded;
    ``num_rel`` (q,): number of relevant judged documents. Both matrices have at least one
    column; a padded 0 is a non-relevant document and changes no measure.

    The prefix statistics below are computed once, on first use, and shared by the kernels;
    column i of a prefix holds the statistic over the top i + 1 documents. A statistic that
    is a count or sum over relevant documents is 0 for a query without any, so dividing it
    by :attr:`num_rel_or_one` (or nDCG's :attr:`idcg_or_one`) gives the 0 trec_eval reports.
    """

    def __init__(self, grades: np.ndarray, ideal: np.ndarray, num_rel: np.ndarray) -> None:
        self.grades = grades
        self.ideal = ideal
        self.num_rel = num_rel
        self._found_at: dict[tuple[int | None, ...], np.ndarray] = {}

    @classmethod
    def from_flat(cls, grades: Sequence[float], depths: Sequence[int],
                  ideal: Sequence[float], num_rel: Sequence[int]) -> Relevance:
        """From concatenated rows: ``grades`` holds ``depths[i]`` values for query i,
        ``ideal`` holds ``num_rel[i]`` relevant grades (descending) for query i."""
        return cls(_pad(grades, depths), _pad(ideal, num_rel),
                   np.asarray(num_rel, dtype=np.float64))

    @classmethod
    def one(cls, grades: Sequence[float], ideal: Sequence[float]) -> Relevance:
        """One query: the grades of its ranked documents and its relevant grades, descending."""
        one = cls(np.array([grades if len(grades) else (0,)], dtype=np.float64),
                  np.array([ideal if len(ideal) else (0,)], dtype=np.float64),
                  np.array([len(ideal)], dtype=np.float64))
        one.num_rel_or_one = np.array([[len(ideal) or 1]], dtype=np.float64)
        return one

    @_cached
    def relevant(self) -> np.ndarray:
        """(q, depth) bool: the document at this rank is relevant (grade >= 1)."""
        return self.grades >= 1

    @_cached
    def found(self) -> np.ndarray:
        """(q, depth) |rel ∩ top-i|: relevant documents among the top i."""
        return self.relevant.cumsum(axis=1)

    @_cached
    def first_or_one(self) -> np.ndarray:
        """(q, 1) rank of the first relevant document, 1 when none is ranked."""
        return self.relevant.argmax(axis=1, keepdims=True) + 1

    @property
    def first(self) -> np.ndarray:
        """(q,) rank of the first relevant document, 0 when none is ranked."""
        return np.where(self.found[:, -1] > 0, self.first_or_one[:, 0], 0)

    @_cached
    def num_rel_or_one(self) -> np.ndarray:
        """(q, 1) |rel|, 1 for a query without relevant documents."""
        return np.where(self.num_rel > 0, self.num_rel, 1.0)[:, None]

    @_cached
    def dcg(self) -> np.ndarray:
        """(q, depth) DCG of the top i: sum_{j<=i} gain_j / log2(j + 1), gain = grade if
        relevant else 0."""
        gains = np.where(self.relevant, self.grades, 0.0)  # not -0.0 for a grade < 0
        return (gains / _log2_ranks(gains.shape[1])).cumsum(axis=1)

    @_cached
    def idcg_or_one(self) -> np.ndarray:
        """(q, width) ideal DCG of the top i (the DCG of the relevant grades, descending);
        1 for a query without relevant documents (its DCG is 0, and so its nDCG)."""
        idcg = (self.ideal / _log2_ranks(self.ideal.shape[1])).cumsum(axis=1)
        idcg[idcg == 0] = 1.0  # 0 only without relevant documents: a grade is >= 1
        return idcg

    @_cached
    def precision_sum(self) -> np.ndarray:
        """(q, depth) sum over the relevant ranks j <= i of P@j = |rel ∩ top-j| / j."""
        return (self.relevant * self.found / _ranks(self.grades.shape[1])).cumsum(axis=1)

    def at(self, prefix: np.ndarray, cutoffs: Cutoffs) -> np.ndarray:
        """(q, len(cutoffs)) the prefix statistic over the top k (k None: the whole row)."""
        return prefix[:, _columns(prefix.shape[1], tuple(cutoffs))]

    def found_at(self, cutoffs: Cutoffs) -> np.ndarray:
        """(q, len(cutoffs)) |rel ∩ top-k| (kept: most kernels start from it)."""
        key = tuple(cutoffs)
        found = self._found_at.get(key)
        if found is None:
            found = self._found_at[key] = self.at(self.found, key)
        return found


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
def _columns(width: int, cutoffs: tuple[int | None, ...]) -> np.ndarray:
    """Column of a prefix of ``width`` columns holding the top k (k None: the last)."""
    return np.array([width - 1 if k is None else min(k, width) - 1 for k in cutoffs],
                    dtype=np.intp)


@lru_cache(maxsize=1024)
def _cutoff_values(cutoffs: tuple[int, ...]) -> np.ndarray:
    return np.array(cutoffs, dtype=np.float64)


def _pad(flat: Sequence[float], lengths: Sequence[int]) -> np.ndarray:
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
    return r.at(r.dcg, cutoffs) / r.at(r.idcg_or_one, cutoffs)


def average_precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    return r.at(r.precision_sum, cutoffs) / r.num_rel_or_one


def r_precision(r: Relevance, cutoffs: Cutoffs) -> np.ndarray:
    depth = r.grades.shape[1]
    last = np.clip(r.num_rel.astype(np.int64), 1, depth) - 1  # last rank of the top R
    found = r.found[np.arange(len(last)), last][:, None] / r.num_rel_or_one
    return np.repeat(found, len(cutoffs), axis=1)
