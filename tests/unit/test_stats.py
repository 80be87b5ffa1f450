"""Aggregation, bootstrap CIs and paired tests: hand-worked cases, scipy agreement, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragassay.metrics import bootstrap, stats
from ragassay.metrics.stats import (
    WinTieLoss,
    aggregate,
    bootstrap_mean_ci,
    compare_paired,
    holm_bonferroni,
    paired_bootstrap_ci,
    paired_randomization_test,
    paired_t_test,
    win_tie_loss,
)
from ragassay.metrics.student_t import regularized_incomplete_beta, student_t_two_sided_p

# --- aggregate ----------------------------------------------------------------------------


def test_aggregate_counts_missing_and_means_the_rest() -> None:
    out = aggregate([1.0, None, 0.0, 0.5, None])
    assert out["mean"] == pytest.approx((1.0 + 0.0 + 0.5) / 3)
    assert out["n"] == 3 and out["missing"] == 2
    assert out["ci_low"] <= out["mean"] <= out["ci_high"]


def test_aggregate_nothing_measured() -> None:
    assert aggregate([None, None]) == {
        "mean": None, "n": 0, "missing": 2, "ci_low": None, "ci_high": None
    }
    assert aggregate([])["n"] == 0


def test_aggregate_single_value_ci_is_the_value() -> None:
    out = aggregate([0.25])
    assert out["mean"] == 0.25 and out["ci_low"] == 0.25 and out["ci_high"] == 0.25


def test_bootstrap_of_a_constant_is_that_constant() -> None:
    out = aggregate([0.1] * 7)
    assert (out["ci_low"], out["ci_high"]) == (0.1, 0.1)
    assert out["mean"] == pytest.approx(0.1)


def test_aggregate_by_question_id_does_not_depend_on_order() -> None:
    rng = np.random.default_rng(7)
    ids = [f"q{i:03d}" for i in range(60)]
    values: dict[str, float | None] = {
        q: (None if i % 7 == 0 else float(rng.integers(0, 2))) for i, q in enumerate(ids)}
    want = aggregate(values, seed=3)
    for _ in range(5):
        shuffled = [ids[i] for i in rng.permutation(len(ids))]
        assert aggregate({q: values[q] for q in shuffled}, seed=3) == want
    # The same as the values listed in id order; a sequence keeps its own order.
    assert want == aggregate([values[q] for q in sorted(ids)], seed=3)
    listed = [values[q] for q in shuffled]
    assert aggregate(listed, seed=3)["mean"] == want["mean"]
    with pytest.raises(ValueError, match="question 'q001'"):
        aggregate({"q000": 1.0, "q001": float("nan")})


def test_aggregate_booleans_count_as_zero_one() -> None:
    assert aggregate([True, False, True, True])["mean"] == 3 / 4


def test_bootstrap_two_values_hand_worked() -> None:
    # Resamples of {0, 1} of size 2 have means 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4,
    # so a 95% percentile interval from many resamples is (0, 1), and a 40% one is (1/2, 1/2).
    assert bootstrap_mean_ci([0.0, 1.0], n_resamples=4000) == (0.0, 1.0)
    assert bootstrap_mean_ci([0.0, 1.0], n_resamples=4000, confidence=0.4) == (0.5, 0.5)


def test_aggregate_is_deterministic_for_a_seed() -> None:
    values: list[float | None] = np.random.default_rng(0).random(40).tolist() + [None]
    assert aggregate(values, seed=7) == aggregate(values, seed=7)
    assert aggregate(values, seed=7)["ci_low"] != aggregate(values, seed=8)["ci_low"]


def test_block_size_does_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    values = np.random.default_rng(3).random(50).tolist()
    whole = aggregate(values, seed=1, n_resamples=333)
    p_whole = paired_randomization_test(values, values[::-1], seed=1, n_resamples=333)
    monkeypatch.setattr(stats, "_BLOCK_ELEMENTS", 50 * 7)  # blocks of 7 resamples
    monkeypatch.setattr(bootstrap, "_BLOCK_ELEMENTS", 50 * 7)
    assert aggregate(values, seed=1, n_resamples=333) == whole
    assert paired_randomization_test(values, values[::-1], seed=1, n_resamples=333) == p_whole


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "0.5x", [1]])
def test_aggregate_refuses_non_finite_or_non_numbers(bad: object) -> None:
    with pytest.raises(ValueError, match="value 1"):
        aggregate([0.5, bad])  # type: ignore[list-item]


@pytest.mark.parametrize(
    "kwargs", [{"n_resamples": 0}, {"confidence": 1.0}, {"confidence": 0.0}]
)
def test_aggregate_refuses_bad_settings(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        aggregate([0.5, 1.0], **kwargs)  # type: ignore[arg-type]


@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=30), st.integers(0, 3))
@settings(max_examples=50, deadline=None)
def test_aggregate_properties(values: list[float | None], seed: int) -> None:
    out = aggregate(values, seed=seed, n_resamples=200)
    measured = [v for v in values if v is not None]
    assert out["n"] == len(measured) and out["missing"] == len(values) - len(measured)
    if measured:
        lo, hi = min(measured), max(measured)
        assert lo - 1e-12 <= out["ci_low"] <= out["ci_high"] <= hi + 1e-12
        assert lo - 1e-12 <= out["mean"] <= hi + 1e-12


# --- paired tests -------------------------------------------------------------------------


def test_randomization_identical_samples_p_is_one() -> None:
    a = [0.1, 0.5, 0.9]
    assert paired_randomization_test(a, a, n_resamples=99) == 1.0


def test_randomization_plus_one_correction() -> None:
    # One pair with difference 1: every sign flip gives |±1| >= 1, so count = n_resamples
    # and p = (n_resamples + 1) / (n_resamples + 1) = 1.
    assert paired_randomization_test([0.0], [1.0], n_resamples=50) == 1.0
    # Twenty pairs all improved by 1: only the all-plus or all-minus sign vectors reach
    # |sum| = 20 (chance 2 / 2**20), so with 999 resamples the count is almost surely 0.
    p = paired_randomization_test([0.0] * 20, [1.0] * 20, n_resamples=999)
    assert p == 1 / (999 + 1)


def test_randomization_p_is_close_to_exact_enumeration() -> None:
    # d = (1, 2, 3, 4): of the 16 sign vectors, |sum| >= 10 only for ++++ and ----,
    # so the exact two-sided p is 2 / 16.
    p = paired_randomization_test([0, 0, 0, 0], [1, 2, 3, 4], n_resamples=20000)
    assert p == pytest.approx(2 / 16, abs=0.01)


def test_randomization_is_deterministic_and_symmetric() -> None:
    a, b = [0.2, 0.4, 0.1, 0.9, 0.5], [0.3, 0.4, 0.6, 0.7, 0.9]
    assert paired_randomization_test(a, b, seed=3) == paired_randomization_test(a, b, seed=3)
    assert paired_randomization_test(a, b, seed=3) == paired_randomization_test(b, a, seed=3)


def test_paired_t_test_hand_worked() -> None:
    # d = (1, 2, 3): mean 2, sd 1, t = 2 / (1 / sqrt 3) = 2 sqrt 3 with 2 degrees of freedom.
    # For df = 2 the two-sided tail has the closed form 1 - t / sqrt(t^2 + 2).
    t = 2 * math.sqrt(3)
    assert paired_t_test([0, 0, 0], [1, 2, 3]) == pytest.approx(1 - t / math.sqrt(t * t + 2))


def test_t_distribution_closed_forms() -> None:
    # df = 1 is the Cauchy distribution: P(|T| >= t) = 1 - (2 / pi) atan(t).
    for t in (1e-8, 0.3, 1.0, 5.0, 300.0):
        expected = 1 - 2 / math.pi * math.atan(t)
        assert student_t_two_sided_p(t, 1) == pytest.approx(expected, rel=1e-12)
    assert student_t_two_sided_p(0.0, 5) == 1.0
    assert student_t_two_sided_p(float("inf"), 5) == 0.0
    # I_x(1, 1) = x and I_x(a, 1) = x^a.
    assert regularized_incomplete_beta(1, 1, 0.3) == pytest.approx(0.3, rel=1e-14)
    assert regularized_incomplete_beta(2.5, 1, 0.7) == pytest.approx(0.7**2.5, rel=1e-13)


def test_paired_t_test_edge_cases() -> None:
    assert paired_t_test([1, 2, 3], [1, 2, 3]) == 1.0  # scipy returns NaN here
    assert paired_t_test([1, 2, 3], [2, 3, 4]) == 0.0  # constant non-zero difference
    with pytest.raises(ValueError, match="at least 2"):
        paired_t_test([1.0], [2.0])
    with pytest.raises(ValueError, match="length"):
        paired_t_test([1.0, 2.0], [2.0])


def test_paired_t_test_agrees_with_scipy() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    for n in (2, 3, 5, 10, 40, 200, 5000):
        for shift in (0.0, 0.05, 0.3, 1.0):
            a = rng.random(n)
            b = a + shift + rng.normal(0, 0.3, n)
            assert paired_t_test(a, b) == pytest.approx(
                scipy_stats.ttest_rel(a, b).pvalue, abs=1e-10
            )


def test_incomplete_beta_agrees_with_scipy() -> None:
    special = pytest.importorskip("scipy.special")
    for a in (0.5, 1.0, 3.0, 50.0, 5000.0):
        for b in (0.5, 2.0, 70.0):
            for x in np.linspace(0, 1, 21):
                assert regularized_incomplete_beta(a, b, float(x)) == pytest.approx(
                    float(special.betainc(a, b, x)), abs=1e-10
                )


def test_paired_bootstrap_ci_of_constant_difference() -> None:
    assert paired_bootstrap_ci([0.0, 0.5, 1.0], [0.25, 0.75, 1.25]) == (0.25, 0.25)


def test_win_tie_loss() -> None:
    a = [0.0, 0.5, 1.0, 0.3, 0.1 + 0.2]
    b = [1.0, 0.5, 0.0, 0.4, 0.3]  # last pair differs only by rounding: a tie
    assert win_tie_loss(a, b) == WinTieLoss(wins=2, ties=2, losses=1)


def test_holm_bonferroni_known_values() -> None:
    # m = 4; sorted p = .01, .02, .03, .04 -> 4*.01, 3*.02, 2*.03, 1*.04 = .04, .06, .06, .06
    # (the running maximum keeps the adjusted values monotone).
    adjusted = holm_bonferroni([0.03, 0.01, 0.04, 0.02])
    assert adjusted == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert holm_bonferroni([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm_bonferroni([]) == []
    with pytest.raises(ValueError, match="outside"):
        holm_bonferroni([0.1, 1.5])


@given(st.lists(st.floats(0, 1), max_size=12))
def test_holm_properties(ps: list[float]) -> None:
    adjusted = holm_bonferroni(ps)
    assert all(p <= q <= 1.0 for p, q in zip(ps, adjusted, strict=True))
    order = sorted(range(len(ps)), key=lambda i: (ps[i], i))
    assert all(adjusted[i] <= adjusted[j] for i, j in zip(order, order[1:], strict=False))


@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=15),
    st.integers(0, 5),
)
@settings(max_examples=40, deadline=None)
def test_paired_properties(pairs: list[tuple[float, float]], seed: int) -> None:
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    p = paired_randomization_test(a, b, seed=seed, n_resamples=100)
    assert 1 / 101 <= p <= 1.0
    wtl = win_tie_loss(a, b)
    assert sum(wtl) == len(pairs)
    assert win_tie_loss(b, a) == WinTieLoss(wtl.losses, wtl.ties, wtl.wins)
    if len(pairs) >= 2:
        assert 0.0 <= paired_t_test(a, b) <= 1.0
        assert paired_t_test(a, b) == pytest.approx(paired_t_test(b, a), abs=1e-12)


# --- compare_paired -----------------------------------------------------------------------


def test_compare_paired_hand_worked() -> None:
    a = {"q1": 1.0, "q2": 0.0, "q3": 0.5, "q4": None, "q5": 1.0}
    b = {"q2": 1.0, "q1": 1.0, "q3": 0.0, "q4": 1.0, "q6": 0.0}
    out = compare_paired(a, b, seed=0, n_resamples=500)
    # Pairs: q1 (1 -> 1), q2 (0 -> 1), q3 (0.5 -> 0).
    assert out["n"] == 3
    assert out["mean_a"] == pytest.approx((1.0 + 0.0 + 0.5) / 3)
    assert out["mean_b"] == pytest.approx((1.0 + 1.0 + 0.0) / 3)
    assert out["delta"] == pytest.approx(out["mean_b"] - out["mean_a"])
    assert (out["wins"], out["ties"], out["losses"]) == (1, 1, 1)
    assert out["improved_ids"] == ["q2"] and out["worsened_ids"] == ["q3"]
    assert out["changed_ids"] == ["q2", "q3"]
    assert out["missing_in_a"] == ["q4", "q6"] and out["missing_in_b"] == ["q5"]
    assert out["ci_low"] <= out["delta"] <= out["ci_high"]
    assert 0 < out["p_randomization"] <= 1 and 0 <= out["p_ttest"] <= 1


def test_compare_paired_does_not_depend_on_dict_order() -> None:
    rng = np.random.default_rng(1)
    a = {f"q{i}": float(rng.random()) for i in range(30)}
    b = {f"q{i}": float(rng.random()) for i in range(30)}
    reversed_a = dict(reversed(list(a.items())))
    want = compare_paired(a, b, seed=4)
    assert want == compare_paired(reversed_a, b, seed=4)
    for _ in range(3):  # each run's questions in its own order, some missing
        ka, kb = rng.permutation(list(a)), rng.permutation(list(b))
        assert compare_paired({q: a[q] for q in ka}, {q: b[q] for q in kb}, seed=4) == want
    a["q3"] = None
    want = compare_paired(a, b, seed=4)
    assert compare_paired(dict(reversed(list(a.items()))), b, seed=4) == want


def test_compare_paired_without_pairs_or_with_one() -> None:
    none = compare_paired({"q1": None}, {"q2": 1.0})
    assert none["n"] == 0 and none["delta"] is None and none["p_ttest"] is None
    one = compare_paired({"q1": 0.0}, {"q1": 1.0})
    assert one["n"] == 1 and one["delta"] == 1.0 and one["p_ttest"] is None
    assert one["p_randomization"] == 1.0
