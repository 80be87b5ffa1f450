"""Per-question retrieval metrics of a RAG run: the RAG rules over the measure kernels.

The formulas are the measure table's (:mod:`ragassay.metrics.measures`): each value comes
from the same kernel :func:`ragassay.metrics.ir.evaluate` uses, so the two agree with each
other and with trec_eval (``recall.k``, ``P.k``, ``recip_rank`` on the run cut at k,
``ndcg_cut.k``, ``map``, ``success.k``; ``tests/differential`` checks this against
pytrec_eval). What this module adds are the rules of a RAG question (docs/metrics.md):

- The ranking is the order given (no scores, no ties), *de-duplicated*: a chunk id that
  occurs more than once keeps its first (best) position and later copies are dropped, so a
  retriever cannot earn credit twice for one chunk.
- Relevance follows trec_eval's default relevance level 1: a gold chunk with grade >= 1 is
  relevant, a gold chunk with grade <= 0 is judged non-relevant (a miss, with gain 0).
- A question without relevant gold is not measurable: every metric is None (not 0), so the
  aggregation leaves it out of the means and reports it as missing.
- Several chunks can stand for one gold label (``alternatives``: the claim stands verbatim
  in each, e.g. in the overlap of two windows). They are one relevant item, counted under
  the chunk they stand for: the first of them in the ranking gets the item's grade (the
  largest of theirs), a later one is not relevant at its rank (like a repeated chunk, but it
  keeps its place), and |rel| counts the item once. So a hit on any of them finds the label
  and recall counts the label once.
- The hit policy ``"all"`` counts a hit at k only when *every* relevant chunk is in the top
  k (|rel ∩ top-k| = |rel|); ``"any"`` is the ``hit`` measure (at least one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .kernels import Kernel, Relevance
from .measures import Measure, generation, list_measures, measure_info

HIT_POLICIES = ("any", "all")
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
RAG_CUT_FAMILIES: tuple[str, ...] = ("recall", "precision", "hit", "mrr", "ndcg")
"""The built-in measure families of a question row at each cutoff k (``recall_at_k`` ...);
:func:`rag_families` adds those registered later with ``rag="cut"``."""
RAG_UNCUT: tuple[str, ...] = ("map",)
"""The built-in uncut measures of a question row."""

Score = float | int | None


@dataclass(frozen=True, eq=False)  # hashed by identity: an lru_cache key
class _RowFamilies:
    """The families of a question row, read from the measure table (``rag`` field)."""

    cut: tuple[str, ...]
    uncut: tuple[str, ...]
    cut_kernels: tuple[Kernel, ...]
    uncut_kernels: tuple[tuple[str, Kernel], ...]
    hit: int


_ROW: dict[int, _RowFamilies] = {}


def _row_families() -> _RowFamilies:
    key = generation()
    row = _ROW.get(key)
    if row is None:
        infos = list_measures("retrieval")
        # the built-in ones keep the row's documented order; registered ones follow
        cut = (*RAG_CUT_FAMILIES, *(i.name for i in infos
                                    if i.rag == "cut" and i.name not in RAG_CUT_FAMILIES))
        uncut = (*RAG_UNCUT, *(i.name for i in infos
                               if i.rag == "uncut" and i.name not in RAG_UNCUT))
        _ROW.clear()
        row = _ROW[key] = _RowFamilies(
            cut, uncut, tuple(_kernel(f) for f in cut),
            tuple((str(Measure(f)), _kernel(f)) for f in uncut), cut.index("hit"))
    return row


def rag_families() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(cut, uncut) families of a question row: :data:`RAG_CUT_FAMILIES` and
    :data:`RAG_UNCUT`, then the registered families whose ``rag`` is ``"cut"`` or
    ``"uncut"``."""
    row = _row_families()
    return row.cut, row.uncut


def _kernel(family: str) -> Kernel:
    kernel = measure_info(family).kernel
    if kernel is None:
        raise TypeError(f"{family} has no kernel: not a retrieval measure")
    return kernel


def dedupe_ranking(ranked: Sequence[str]) -> list[str]:
    """Return ``ranked`` with later repeats of a chunk id removed (first occurrence wins)."""
    return list(dict.fromkeys(ranked))


def _validate(ks: Sequence[int], hit_policy: str) -> None:
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"cutoff k must be an integer >= 1, got k={k!r}")
    if hit_policy not in HIT_POLICIES:
        raise ValueError(f"hit_policy must be one of {HIT_POLICIES}, got {hit_policy!r}")


@lru_cache(maxsize=128)
def _keys_of(ks: tuple[int, ...], cut: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Per cutoff, the canonical names of the row's cut measures (``recall_at_5`` ...)."""
    return tuple(tuple(str(Measure(family, k)) for family in cut) for k in ks)


def default_retrieval_measures(k: int) -> list[str]:
    """The retrieval measures of a config that names none, at the depths a run of top ``k``
    has: with ``a = min(5, k)`` and ``b = min(10, k)``, ``recall_at_a``, ``recall_at_b``,
    ``mrr_at_a``, ``ndcg_at_a`` (once each). k=10 (the default): recall@5, recall@10, mrr@5,
    ndcg@5; k=3: recall@3, mrr@3, ndcg@3 (no recall@10 of a list of 3)."""
    a, b = min(5, k), min(10, k)
    return list(dict.fromkeys([f"recall_at_{a}", f"recall_at_{b}", f"mrr_at_{a}",
                               f"ndcg_at_{a}"]))


def rag_metric_names(ks: Sequence[int] = DEFAULT_KS) -> list[str]:
    """The measure names of a question row at the cutoffs ``ks``, in row order."""
    _validate(ks, "any")
    return list(_names_of(tuple(ks), _row_families()))


@lru_cache(maxsize=128)  # every question without gold asks for the same names
def _names_of(ks: tuple[int, ...], families: _RowFamilies) -> tuple[str, ...]:
    return (*(key for keys in _keys_of(ks, families.cut) for key in keys),
            *(key for key, _ in families.uncut_kernels))


def rag_measure(text: str | Measure) -> Measure:
    """Parse the name of a metric a question row can carry (``recall_at_5``, ``map``, also
    ``recall@5``); ValueError for any other measure or an unknown name."""
    m = Measure.parse(text)
    cut, uncut = rag_families()
    if not ((m.name in cut and m.cutoff is not None)
            or (m.name in uncut and m.cutoff is None)):
        raise ValueError(f"{m} is not a per-question retrieval metric; use "
                         f"{'|'.join(cut)}_at_<k> or {' or '.join(uncut)}")
    return m


def empty_scores(ks: Sequence[int] = DEFAULT_KS, *, num_retrieved: int = 0) -> dict[str, Score]:
    """The row for a question without relevant gold: every metric None (not measured)."""
    _validate(ks, "any")
    row: dict[str, Score] = dict.fromkeys(rag_metric_names(ks))
    row.update(rank=None, num_gold=0, num_retrieved=num_retrieved)
    return row


def retrieval_scores(
    ranked: Sequence[str],
    gold: Mapping[str, int],
    ks: Sequence[int] = DEFAULT_KS,
    hit_policy: str = "any",
    alternatives: Mapping[str, str] | None = None,
) -> dict[str, Score]:
    """Score one ranked list of chunk ids against the question's gold chunks.

    ``gold`` maps chunk id -> grade; ``alternatives`` maps a gold chunk to the gold chunk
    it stands for (see the module docstring; none by default). rel = the relevant items
    {c : grade(c) >= 1, c not an alternative}, each with the largest grade of its chunks.
    The row holds, for each k in ``ks``, ``recall_at_k``, ``precision_at_k``, ``hit_at_k``
    (0/1, by ``hit_policy``), ``mrr_at_k`` and ``ndcg_at_k``, then ``map``: the measures of
    those canonical names (formulas in :mod:`ragassay.metrics.measures`) over the
    de-duplicated ranking D, each chunk judged as its item (the first chunk of an item
    relevant, later ones not). Then
    ``rank``, the 1-based rank of the first relevant chunk in D (0 when none is in D),
    ``num_gold`` = |rel| and ``num_retrieved`` = |D|.

    An empty ranking scores 0 everywhere (rank 0); a question with no relevant gold (empty
    ``gold`` or only grades <= 0) gets :func:`empty_scores` (all None).
    Raises ValueError for a cutoff k < 1 or an unknown ``hit_policy``.
    """
    _validate(ks, hit_policy)
    ranking = dedupe_ranking(ranked)
    same = alternatives or {}
    items: dict[str, int] = {}
    for cid, g in gold.items():
        key = same.get(cid, cid)
        items[key] = max(items.get(key, g), g)
    relevant = {key: g for key, g in items.items() if g >= 1}
    if not relevant:
        return empty_scores(ks, num_retrieved=len(ranking))

    if same:
        seen: set[str] = set()
        judged: list[int] = []
        for cid in ranking:
            key = same.get(cid, cid)
            judged.append(relevant.get(key, 0) if key not in seen else 0)
            seen.add(key)
        grades = tuple(judged)
    else:
        grades = tuple([relevant.get(cid, 0) for cid in ranking])
    ideal = tuple(sorted(relevant.values(), reverse=True))
    # a copy: callers may edit it
    return dict(_scores(grades, ideal, tuple(ks), hit_policy, _row_families()))


@lru_cache(maxsize=4096)
def _scores(grades: tuple[int, ...], ideal: tuple[int, ...], ks: tuple[int, ...],
            hit_policy: str, families: _RowFamilies) -> dict[str, Score]:
    """The row of a question with relevant gold, from all it depends on: the grade of each
    ranked chunk (0 when not relevant) and the relevant grades, descending.

    Cached: the questions of a run share few such patterns (gold at rank 1 of 10, ...), and
    a hit costs a tenth of the kernels' numpy calls on one row.
    """
    judged = Relevance.one(grades, ideal)
    cutoffs = list(ks)
    # (families, cutoffs): one kernel call per family, as evaluate makes
    cut = np.concatenate([kernel(judged, cutoffs) for kernel in families.cut_kernels])
    hit = families.hit
    if hit_policy == "all":
        cut[hit] = judged.found_at(cutoffs)[0] == len(ideal)
    row: dict[str, Score] = {}
    for keys, values in zip(_keys_of(ks, families.cut), cut.T.tolist(), strict=True):
        row.update(zip(keys, values, strict=True))
        row[keys[hit]] = int(values[hit])
    for key, kernel in families.uncut_kernels:
        row[key] = kernel(judged, [None]).item()
    row["rank"] = int(judged.first[0])
    row["num_gold"] = len(ideal)
    row["num_retrieved"] = len(grades)
    return row
