"""From a join to what the kernels read: the :class:`~ragassay.metrics.kernels.Relevance` of
the evaluated queries, with trec_eval's options applied (``-M``, ``-J``, ``-l``), and each
query's ideal ranking."""

from __future__ import annotations

import numpy as np

from ..kernels import Relevance, pad_rows
from .joins import Joined
from .ranking import block_starts, by_query_and_rank


def ideal_grades(query: np.ndarray, grade: np.ndarray, num_rel: np.ndarray) -> np.ndarray:
    """The ideal ranking of each query (0..len(num_rel)-1) as a zero-padded matrix: its
    relevant ``grade``s (one per judged relevant document) descending."""
    if not len(grade):
        return pad_rows(grade, num_rel)
    top = float(grade.max())
    span = top - float(grade.min()) + 1
    if (int(query.max()) + 1) * span < 2.0 ** 52 and bool((grade == np.floor(grade)).all()):
        order = np.argsort(query * span + (top - grade))  # integers, exact: one sort
    else:
        order = np.lexsort((-grade, query))
    return pad_rows(grade[order], num_rel)


def relevance_rows(j: Joined, evaluated: np.ndarray, *, level: float = 1,
                   max_docs: int | None = None, judged_only: bool = False,
                   graded: bool = True, version: int = 9
                   ) -> tuple[Relevance, np.ndarray, np.ndarray, np.ndarray]:
    """The :class:`~ragassay.metrics.kernels.Relevance` of the query codes
    ``evaluated`` (ascending), and per query the number retrieved, relevant, and relevant
    retrieved. The Relevance carries the judged non-relevant documents (0 <= grade <
    ``level``) too (:meth:`~ragassay.metrics.kernels.Relevance.with_judged`), and the
    trec_eval ``version`` whose rules the kernels follow.

    ``max_docs`` keeps each query's top documents (trec_eval ``-M``), then ``judged_only``
    drops the unjudged and negatively judged ones (``-J``); a grade below ``level`` counts 0
    (``-l``) unless ``graded`` (nDCG keeps every positive grade as gain, as trec_eval). Only
    grades >= 1 are kept as hits: every kernel reads a lower grade as 0."""
    n = len(j.qids)
    chosen = np.zeros(n, dtype=bool)
    chosen[evaluated] = True
    q, g, r = j.hit_q, j.hit_grade, j.hit_rank
    keep = chosen[q]
    depth = j.size if max_docs is None else np.minimum(j.size, max_docs)
    if max_docs is not None:
        keep &= r < max_docs
    if judged_only:  # trec_eval drops a negative grade with the unjudged documents
        keep &= g >= 0
    q, g, r = q[keep], g[keep], r[keep]
    if judged_only:  # ranks among the documents kept
        by_rank = np.lexsort((r, q))
        q, g = q[by_rank], g[by_rank]
        first, _ = block_starts(q, n)
        r = np.arange(len(q)) - first[q]
        depth = np.bincount(q, minlength=n)
    qrels_grade = j.qrels_grade
    raw, nonrel = g, (g >= 0) & (g < level)
    if not graded:
        g = np.where(g >= level, g, 0.0)
        qrels_grade = np.where(qrels_grade >= level, qrels_grade, 0.0)
    row = np.full(n, -1, dtype=np.int64)
    row[evaluated] = np.arange(len(evaluated))
    depths = depth[evaluated]
    found = g >= 1
    hit_q, hit_r, hit_g = row[q[found]], r[found], g[found]
    in_order = by_query_and_rank(hit_q, hit_r)
    if in_order is not None:
        hit_q, hit_r, hit_g = hit_q[in_order], hit_r[in_order], hit_g[in_order]
    rel = chosen[j.qrels_q] & (qrels_grade >= 1)
    rel_q = j.qrels_q[rel]
    num_rel_all = np.bincount(rel_q, minlength=n)
    num_rel = num_rel_all[evaluated]
    relevance = Relevance(hit_q, hit_r, hit_g, int(depths.max()) if len(depths) else 0,
                          ideal_grades(rel_q, qrels_grade[rel], num_rel_all)[evaluated],
                          num_rel.astype(np.float64))
    non_q, non_r, non_g = row[q[nonrel]], r[nonrel], raw[nonrel]
    in_order = by_query_and_rank(non_q, non_r)
    if in_order is not None:
        non_q, non_r, non_g = non_q[in_order], non_r[in_order], non_g[in_order]
    pool = raw < 0
    pool_q, pool_r = row[q[pool]], r[pool]
    in_order = by_query_and_rank(pool_q, pool_r)
    if in_order is not None:
        pool_q, pool_r = pool_q[in_order], pool_r[in_order]
    judged_nonrel = chosen[j.qrels_q] & (j.qrels_grade >= 0) & (j.qrels_grade < level)
    relevance.with_judged(non_q, non_r, non_g, pool_q, pool_r,
                          np.bincount(j.qrels_q[judged_nonrel], minlength=n)[evaluated],
                          depths, version, np.bincount(
                              j.qrels_q[chosen[j.qrels_q] & (j.qrels_grade >= level)],
                              minlength=n)[evaluated])
    return (relevance, depths, num_rel,
            np.bincount(hit_q, minlength=len(evaluated)).astype(np.int64))
