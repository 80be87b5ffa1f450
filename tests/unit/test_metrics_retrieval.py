"""Per-question retrieval metrics: hand-worked examples (expected values written as formulas)
and properties."""

from __future__ import annotations

from math import log2

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragassay.metrics.retrieval import dedupe_ranking, empty_scores, retrieval_scores

METRICS = ("recall", "precision", "hit", "mrr", "ndcg")


def test_single_gold_at_rank_two() -> None:
    s = retrieval_scores(["x", "g", "y"], {"g": 1}, ks=(1, 3))
    assert s["recall_at_1"] == 0 and s["recall_at_3"] == 1
    assert s["precision_at_1"] == 0 and s["precision_at_3"] == pytest.approx(1 / 3)
    assert s["hit_at_1"] == 0 and s["hit_at_3"] == 1
    assert s["mrr_at_1"] == 0 and s["mrr_at_3"] == pytest.approx(1 / 2)
    assert s["ndcg_at_3"] == pytest.approx((1 / log2(3)) / (1 / log2(2)))
    assert s["map"] == pytest.approx(1 / 2)
    assert s["rank"] == 2
    assert s["num_gold"] == 1 and s["num_retrieved"] == 3


def test_multiple_gold() -> None:
    # gold a, b, c; ranking: a (1) x (2) b (3) y (4); c never retrieved.
    s = retrieval_scores(["a", "x", "b", "y"], {"a": 1, "b": 1, "c": 1}, ks=(1, 3, 5))
    assert s["recall_at_1"] == pytest.approx(1 / 3)
    assert s["recall_at_3"] == pytest.approx(2 / 3)
    assert s["precision_at_3"] == pytest.approx(2 / 3)
    assert s["precision_at_5"] == pytest.approx(2 / 5)
    assert s["mrr_at_1"] == 1.0
    expected_ndcg3 = (1 / log2(2) + 1 / log2(4)) / (1 / log2(2) + 1 / log2(3) + 1 / log2(4))
    assert s["ndcg_at_3"] == pytest.approx(expected_ndcg3)
    assert s["map"] == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert s["rank"] == 1


def test_duplicates_are_dropped_first_occurrence_wins() -> None:
    # "x" repeated must not push "g" down: de-duplicated ranking is x, g.
    s = retrieval_scores(["x", "x", "x", "g", "g"], {"g": 1}, ks=(2,))
    assert s["num_retrieved"] == 2
    assert s["rank"] == 2
    assert s["recall_at_2"] == 1
    assert s["precision_at_2"] == pytest.approx(1 / 2)  # "g" counted once
    assert s["mrr_at_2"] == pytest.approx(1 / 2)
    assert dedupe_ranking(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


def test_fewer_than_k_retrieved() -> None:
    s = retrieval_scores(["g"], {"g": 1}, ks=(10,))
    assert s["precision_at_10"] == pytest.approx(1 / 10)  # divided by k, not by 1
    assert s["recall_at_10"] == 1
    assert s["ndcg_at_10"] == pytest.approx(1.0)


def test_graded_gold_ndcg() -> None:
    # grades: a=3, b=1; ranking b, x, a.
    s = retrieval_scores(["b", "x", "a"], {"a": 3, "b": 1}, ks=(1, 3))
    ideal_3 = 3 / log2(2) + 1 / log2(3)
    assert s["ndcg_at_3"] == pytest.approx((1 / log2(2) + 3 / log2(4)) / ideal_3)
    assert s["ndcg_at_1"] == pytest.approx((1 / log2(2)) / (3 / log2(2)))
    assert s["map"] == pytest.approx((1 / 1 + 2 / 3) / 2)  # AP is binary


def test_grade_zero_or_negative_is_judged_nonrelevant() -> None:
    s = retrieval_scores(["n", "g"], {"n": 0, "m": -1, "g": 2}, ks=(1, 2))
    assert s["num_gold"] == 1
    assert s["rank"] == 2
    assert s["recall_at_1"] == 0 and s["recall_at_2"] == 1
    assert s["ndcg_at_2"] == pytest.approx((2 / log2(3)) / (2 / log2(2)))


def test_gold_absent() -> None:
    s = retrieval_scores(["x", "y"], {"g": 1}, ks=(1, 5))
    assert s["rank"] == 0
    for name in METRICS:
        assert s[f"{name}_at_5"] == 0
    assert s["map"] == 0


def test_empty_ranking() -> None:
    s = retrieval_scores([], {"g": 1}, ks=(3,))
    assert s["rank"] == 0 and s["num_retrieved"] == 0
    assert all(s[f"{name}_at_3"] == 0 for name in METRICS)
    assert s["map"] == 0


@pytest.mark.parametrize("gold", [{}, {"n": 0}, {"n": -2, "m": 0}])
def test_no_relevant_gold_is_none(gold: dict[str, int]) -> None:
    s = retrieval_scores(["n", "x"], gold, ks=(1, 3))
    for name in METRICS:
        assert s[f"{name}_at_1"] is None and s[f"{name}_at_3"] is None
    assert s["map"] is None and s["rank"] is None
    assert s["num_gold"] == 0 and s["num_retrieved"] == 2
    assert s == empty_scores((1, 3), num_retrieved=2)


def test_hit_policies() -> None:
    gold = {"a": 1, "b": 1}
    ranked = ["a", "x", "b"]
    any_ = retrieval_scores(ranked, gold, ks=(1, 2, 3), hit_policy="any")
    all_ = retrieval_scores(ranked, gold, ks=(1, 2, 3), hit_policy="all")
    assert [any_[f"hit_at_{k}"] for k in (1, 2, 3)] == [1, 1, 1]
    assert [all_[f"hit_at_{k}"] for k in (1, 2, 3)] == [0, 0, 1]


def test_output_keys_in_order() -> None:
    s = retrieval_scores(["a"], {"a": 1}, ks=(1, 5))
    assert list(s) == [
        "recall_at_1", "precision_at_1", "hit_at_1", "mrr_at_1", "ndcg_at_1",
        "recall_at_5", "precision_at_5", "hit_at_5", "mrr_at_5", "ndcg_at_5",
        "map", "rank", "num_gold", "num_retrieved",
    ]


@pytest.mark.parametrize("ks", [(0,), (3, -1), (1.5,), (True,)])
def test_bad_cutoff_names_k(ks: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="k="):
        retrieval_scores(["a"], {"a": 1}, ks=ks)


def test_bad_hit_policy() -> None:
    with pytest.raises(ValueError, match="hit_policy"):
        retrieval_scores(["a"], {"a": 1}, hit_policy="some")


# --- properties ---------------------------------------------------------------------------

ids = st.sampled_from([f"c{i}" for i in range(8)])
rankings = st.lists(ids, max_size=12)
golds = st.dictionaries(ids, st.integers(min_value=-1, max_value=3), max_size=5)
KS = (1, 2, 3, 5, 10)


@given(rankings, golds)
def test_metrics_are_bounded_and_monotone(ranked: list[str], gold: dict[str, int]) -> None:
    s = retrieval_scores(ranked, gold, ks=KS)
    if s["num_gold"] == 0:
        assert all(v is None for key, v in s.items() if key not in ("num_gold", "num_retrieved"))
        return
    for k in KS:
        for name in METRICS:
            assert 0.0 <= s[f"{name}_at_{k}"] <= 1.0 + 1e-12
    assert 0.0 <= s["map"] <= 1.0
    for small, big in zip(KS[:-1], KS[1:], strict=True):
        assert s[f"recall_at_{small}"] <= s[f"recall_at_{big}"]
        assert s[f"hit_at_{small}"] <= s[f"hit_at_{big}"]
        assert s[f"mrr_at_{small}"] <= s[f"mrr_at_{big}"]
    # mrr@k and hit@k follow from rank.
    rank = s["rank"]
    for k in KS:
        assert s[f"mrr_at_{k}"] == (1 / rank if 0 < rank <= k else 0)
    any_hit = retrieval_scores(ranked, gold, ks=KS, hit_policy="any")
    all_hit = retrieval_scores(ranked, gold, ks=KS, hit_policy="all")
    for k in KS:
        assert all_hit[f"hit_at_{k}"] <= any_hit[f"hit_at_{k}"]
        assert all_hit[f"hit_at_{k}"] == (s[f"recall_at_{k}"] == 1)


@given(rankings, golds)
def test_duplicates_never_change_scores(ranked: list[str], gold: dict[str, int]) -> None:
    assert retrieval_scores(ranked + ranked, gold, ks=KS) == retrieval_scores(
        dedupe_ranking(ranked), gold, ks=KS
    )


@given(golds)
def test_perfect_ranking_scores_one(gold: dict[str, int]) -> None:
    relevant = sorted((c for c, g in gold.items() if g >= 1), key=lambda c: (-gold[c], c))
    s = retrieval_scores(relevant, gold, ks=KS)
    if not relevant:
        return
    assert s["map"] == pytest.approx(1.0)
    assert s["rank"] == 1
    for k in KS:
        assert s[f"ndcg_at_{k}"] == pytest.approx(1.0)
        assert s[f"recall_at_{k}"] == pytest.approx(min(k, len(relevant)) / len(relevant))
