"""Per-question retrieval metrics over one ranked list of chunk ids (DESIGN.md §4).

All metrics are computed over the *de-duplicated* ranking: a chunk id that occurs more than
once keeps its first (best) position and later copies are dropped, so a retriever cannot
earn credit twice for one chunk. The order given is the ranking; there are no ties.

Relevance follows trec_eval's default relevance level 1: a gold chunk with grade >= 1 is
relevant, a gold chunk with grade <= 0 is judged non-relevant (it counts as a miss, with
gain 0). Graded gain is used only by nDCG; every other metric is binary.

The values agree with trec_eval (`recall.k`, `P.k`, `recip_rank` on the run cut at k,
`ndcg_cut.k`, `map`, `success.k`) to floating-point precision; the differential suite in
``tests/differential`` checks this against pytrec_eval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

HIT_POLICIES = ("any", "all")
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)

Score = float | int | None


def dedupe_ranking(ranked: Sequence[str]) -> list[str]:
    """Return ``ranked`` with later repeats of a chunk id removed (first occurrence wins)."""
    seen: set[str] = set()
    out: list[str] = []
    for chunk_id in ranked:
        if chunk_id not in seen:
            seen.add(chunk_id)
            out.append(chunk_id)
    return out


def _validate(ks: Sequence[int], hit_policy: str) -> None:
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"cutoff k must be an integer >= 1, got k={k!r}")
    if hit_policy not in HIT_POLICIES:
        raise ValueError(f"hit_policy must be one of {HIT_POLICIES}, got {hit_policy!r}")


def _dcg(gains: Sequence[float]) -> float:
    """DCG = sum_i gain_i / log2(i + 1), i the 1-based rank."""
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g > 0)


def empty_scores(ks: Sequence[int] = DEFAULT_KS, *, num_retrieved: int = 0) -> dict[str, Score]:
    """The row for a question without relevant gold: every metric None (not measured)."""
    _validate(ks, "any")
    row: dict[str, Score] = {}
    for k in ks:
        for name in ("recall", "precision", "hit", "mrr", "ndcg"):
            row[f"{name}_at_{k}"] = None
    row.update(map=None, rank=None, num_gold=0, num_retrieved=num_retrieved)
    return row


def retrieval_scores(
    ranked: Sequence[str],
    gold: Mapping[str, int],
    ks: Sequence[int] = DEFAULT_KS,
    hit_policy: str = "any",
) -> dict[str, Score]:
    """Score one ranked list of chunk ids against the question's gold chunks.

    ``gold`` maps chunk id -> grade; R = {c : grade(c) >= 1} is the relevant set and
    ``num_gold`` = |R|. With D the de-duplicated ranking and D_k its first k entries:

    - ``recall_at_k``    = |R ∩ D_k| / |R|
    - ``precision_at_k`` = |R ∩ D_k| / k  (divided by k even when fewer than k were retrieved)
    - ``hit_at_k``       = 1 if |R ∩ D_k| >= 1 (policy "any"), or if R ⊆ D_k (policy "all"),
      else 0
    - ``mrr_at_k``       = 1 / r for the rank r of the first relevant chunk if r <= k, else 0
    - ``ndcg_at_k``      = DCG_k / IDCG_k with DCG_k = sum_{i<=k} gain_i / log2(i + 1),
      gain_i = grade of D[i] when >= 1 else 0, and IDCG_k the DCG of all relevant grades
      sorted descending and cut at k (trec_eval ``ndcg_cut``)
    - ``map``            = (1 / |R|) * sum over relevant D[i] of |R ∩ D_i| / i  (average
      precision over the full ranking; relevant chunks never retrieved add 0)
    - ``rank``           = 1-based rank of the first relevant chunk in D, 0 when none is in D
    - ``num_retrieved``  = |D|

    Edge cases: an empty ranking scores 0 everywhere (rank 0); a question with no relevant
    gold (empty ``gold`` or only grades <= 0) is not measurable: every metric and ``rank``
    is None, so the caller excludes it from means and counts it as missing.

    Raises ValueError for a cutoff k < 1 or an unknown ``hit_policy``.
    """
    _validate(ks, hit_policy)
    ranking = dedupe_ranking(ranked)
    relevant = {cid: g for cid, g in gold.items() if g >= 1}
    if not relevant:
        return empty_scores(ks, num_retrieved=len(ranking))

    is_rel = [cid in relevant for cid in ranking]
    gains = [relevant.get(cid, 0) for cid in ranking]
    ideal = sorted(relevant.values(), reverse=True)
    rank = next((i + 1 for i, r in enumerate(is_rel) if r), 0)
    num_rel = len(relevant)

    row: dict[str, Score] = {}
    for k in ks:
        found = sum(is_rel[:k])
        row[f"recall_at_{k}"] = found / num_rel
        row[f"precision_at_{k}"] = found / k
        hit = found == num_rel if hit_policy == "all" else found > 0
        row[f"hit_at_{k}"] = int(hit)
        row[f"mrr_at_{k}"] = 1.0 / rank if 0 < rank <= k else 0.0
        row[f"ndcg_at_{k}"] = _dcg(gains[:k]) / _dcg(ideal[:k])
    row["map"] = _average_precision(is_rel, num_rel)
    row["rank"] = rank
    row["num_gold"] = num_rel
    row["num_retrieved"] = len(ranking)
    return row


def _average_precision(is_rel: Sequence[bool], num_rel: int) -> float:
    """AP = (1 / num_rel) * sum over relevant ranks i of (relevant in top i) / i."""
    found = 0
    total = 0.0
    for i, rel in enumerate(is_rel, start=1):
        if rel:
            found += 1
            total += found / i
    return total / num_rel
