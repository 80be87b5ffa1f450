"""PPI++ corrected means: hand-worked values, and coverage checked by simulation where the
truth is known (1,000 simulated sets, numpy-vectorised, seeded)."""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.metrics.ppi import labelled_only_batch, ppi_mean, ppi_mean_batch

TRUTH = 0.7
SETS, N_LABELLED, N_UNLABELLED = 1000, 200, 2000


def simulate(judge: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """People's 0/1 values with mean TRUTH; the judge's values: ``good`` says 1 for 95 % of
    the true 1s and for 20 % of the true 0s (so its own mean is biased: 0.725); ``useless``
    is a coin flip that ignores the truth."""
    rng = np.random.default_rng(seed)
    y_all = (rng.random((SETS, N_LABELLED + N_UNLABELLED)) < TRUTH).astype(float)
    u = rng.random(y_all.shape)
    if judge == "good":
        f_all = np.where(y_all == 1, u < 0.95, u < 0.20).astype(float)
    else:
        f_all = (u < 0.5).astype(float)
    return y_all[:, :N_LABELLED], f_all[:, :N_LABELLED], f_all[:, N_LABELLED:]


@pytest.mark.parametrize("judge", ["good", "useless"])
def test_the_95_percent_interval_covers_the_truth_in_94_to_96_percent(judge: str) -> None:
    y, f, fu = simulate(judge, seed=1)
    res = ppi_mean_batch(y, f, fu)
    coverage = np.mean((res["ci_low"] <= TRUTH) & (TRUTH <= res["ci_high"]))
    assert 0.94 <= coverage <= 0.96, coverage


def test_the_judge_alone_is_biased_and_the_correction_removes_it() -> None:
    y, f, fu = simulate("good", seed=2)
    judge_mean = fu.mean(axis=1)
    assert abs(judge_mean.mean() - 0.725) < 0.002  # the judge's own mean misses the truth
    assert abs(ppi_mean_batch(y, f, fu)["mean"].mean() - TRUTH) < 0.002


def test_a_good_judge_narrows_the_interval_a_useless_one_falls_back_to_labelled_only() -> None:
    y, f, fu = simulate("good", seed=3)
    only = labelled_only_batch(y)
    width_only = np.median(only["ci_high"] - only["ci_low"])
    good = ppi_mean_batch(y, f, fu)
    assert np.median(good["ci_high"] - good["ci_low"]) < 0.75 * width_only
    y, f, fu = simulate("useless", seed=3)
    useless = ppi_mean_batch(y, f, fu)
    ratio = np.median(useless["ci_high"] - useless["ci_low"]) / width_only
    assert 0.98 <= ratio <= 1.05, ratio  # λ ≈ 0: about the labelled-only width
    assert np.median(useless["lam"]) < 0.1


def test_classic_ppi_with_a_useless_judge_is_wider_than_labelled_only() -> None:
    # why power tuning matters: λ = 1 adds the useless judge's variance
    y, f, fu = simulate("useless", seed=4)
    only = labelled_only_batch(y)
    classic = ppi_mean_batch(y, f, fu, power_tuning=False)
    assert (np.median(classic["ci_high"] - classic["ci_low"])
            > 1.3 * np.median(only["ci_high"] - only["ci_low"]))


def test_hand_worked_example() -> None:
    # labelled (Y, f): (1,1) (0,0) (1,1) (0,1); unlabelled f~: 1 1 0 0
    # mean Y = .5, mean f = .75, mean f~ = .5; Cov(Y,f) = (.5*.25*2 + (-.5)(-.75) + (-.5)(.25))/3
    #   = (.25 + .375 - .125)/3 = 1/6; Var(f over all 8: five 1s) = (5*(3/8)^2 + 3*(5/8)^2)/7
    #   = (45/64 + 75/64)/7 = 120/448 = 15/56; λ = (1/6) / (2 * 15/56) = 56/180 = 14/45
    # θ = .5 + 14/45 * (.5 - .75) = .5 - 14/180 = 0.42222…
    res = ppi_mean([(1, 1), (0, 0), (1, 1), (0, 1)], [1, 1, 0, 0])
    assert res["lambda"] == pytest.approx(14 / 45)
    assert res["mean"] == pytest.approx(0.5 - 14 / 180)
    assert res["labelled_mean"] == 0.5 and res["judge_mean"] == 0.625
    assert res["ci_low"] < res["mean"] < res["ci_high"]


def test_too_few_labels_measure_nothing_and_the_simulation_is_deterministic() -> None:
    assert ppi_mean([(1, 1)], [1, 0])["mean"] is None
    a = ppi_mean_batch(*simulate("good", seed=5))
    b = ppi_mean_batch(*simulate("good", seed=5))
    assert np.array_equal(a["ci_low"], b["ci_low"])
