"""Aggregation with bootstrap confidence intervals, and paired tests between two runs.

Conventions:

- A value of ``None`` means "not measured" (for example a retrieval metric on an
  unanswerable question). It is never averaged as 0: it is counted in ``missing``.
  ``NaN`` and infinities are refused, so nothing is dropped silently.
- Everything random is drawn from ``numpy.random.default_rng(seed)``: the same values and
  seed give the same numbers on every run. The bootstrap and randomization draw positions
  into the values, so the values' order matters: inputs keyed by question id
  (:func:`aggregate` given a mapping, :func:`compare_paired`) are put in sorted id order
  first (ids compared as strings), so the result does not depend on the order of the
  questions file, dict or batch. Functions taking plain sequences use the order given.
- In paired functions ``a`` is the baseline and ``b`` the candidate: differences are
  ``b - a``, and a "win" is a question where ``b`` scores higher.
- Nothing is rounded here; the caller formats.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np

from .bootstrap import (
    bootstrap_mean_ci,
    bootstrap_mean_ci_reference,
    bootstrap_mean_cis,
    check_resampling,
)
from .student_t import student_t_two_sided_p

Value = float | int | bool | None
K = TypeVar("K", bound=Hashable)

# Upper bound on elements of one resampling block (keeps memory ~32 MB for any n). Drawing
# the index matrix block by block yields exactly the same numbers as one (n_resamples, n)
# draw, because the generator's stream is consumed in the same order.
_BLOCK_ELEMENTS = 1 << 22


# --- checking inputs ----------------------------------------------------------------------


def _as_float(value: Any, where: str) -> float:
    if isinstance(value, bool):
        return float(value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: expected a number or None, got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{where}: {value!r} is not a finite number; use None for 'not measured'")
    return x


def _measured(values: Sequence[Value] | Mapping[Any, Value]) -> tuple[np.ndarray, int]:
    """The non-None values as a float array, and the count of None: a sequence in its
    order, a mapping in sorted key order (keys compared as strings)."""
    if isinstance(values, Mapping):
        ordered = [values[key] for key in sorted(values, key=str)]
    else:
        ordered = list(values)
    kept = [v for v in ordered if v is not None]
    try:  # float() as _as_float converts; the checks name the value only when one fails
        x = np.array([float(v) for v in kept], dtype=np.float64)
    except (TypeError, ValueError):
        x = None
    if x is None or not np.isfinite(x).all():
        return _measured_reference(values)  # raises, saying which value
    return x, len(ordered) - len(kept)


def _measured_reference(values: Sequence[Value] | Mapping[Any, Value]
                        ) -> tuple[np.ndarray, int]:
    """:func:`_measured` value by value, each labelled for the error message."""
    if isinstance(values, Mapping):
        labelled = [(f"question {key!r}", values[key]) for key in sorted(values, key=str)]
    else:
        labelled = [(f"value {i}", v) for i, v in enumerate(values)]
    kept = [_as_float(v, where) for where, v in labelled if v is not None]
    return np.asarray(kept, dtype=np.float64), len(labelled) - len(kept)


def _paired(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    """The differences b - a of two equally long sequences of numbers."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    xa = np.asarray([_as_float(v, f"a[{i}]") for i, v in enumerate(a)], dtype=np.float64)
    xb = np.asarray([_as_float(v, f"b[{i}]") for i, v in enumerate(b)], dtype=np.float64)
    return xb - xa


def _blocks(n_resamples: int, n: int) -> list[int]:
    """Row counts of the resampling blocks, summing to n_resamples."""
    rows = max(1, _BLOCK_ELEMENTS // max(n, 1))
    return [min(rows, n_resamples - start) for start in range(0, n_resamples, rows)]


# --- aggregation --------------------------------------------------------------------------


def aggregate(
    values: Sequence[Value] | Mapping[Any, Value],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> dict[str, float | int | None]:
    """Mean of the measured values with a seeded percentile-bootstrap CI.

    Returns ``{"mean", "n", "missing", "ci_low", "ci_high"}`` where ``n`` counts the
    non-None values and ``missing`` the None values. With n = 0 the mean and CI are None;
    with n = 1 (or all values equal) the CI is (value, value). Booleans count as 0 / 1.
    Raises ValueError for NaN, infinities or non-numbers.

    ``values`` is either a mapping question id → value, resampled in sorted id order (ids
    compared as strings), so the CI is the same whatever the order of the questions file;
    or a plain sequence, resampled in its own order (the bootstrap draws positions, so
    reordering a sequence can move the CI, though never the mean).
    """
    return aggregate_many({None: values}, seed=seed, n_resamples=n_resamples,
                          confidence=confidence)[None]


def aggregate_many(
    columns: Mapping[K, Sequence[Value] | Mapping[Any, Value]],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> dict[K, dict[str, float | int | None]]:
    """:func:`aggregate` of each column (same keys and order), the same numbers: the
    bootstrap draws are shared by the columns with as many measured values
    (:func:`bootstrap_mean_cis`)."""
    check_resampling(n_resamples, confidence)
    measured = {key: _measured(values) for key, values in columns.items()}
    sampled = [key for key, (x, _) in measured.items() if x.size]
    cis = dict(zip(sampled, bootstrap_mean_cis(
        [measured[key][0] for key in sampled], seed=seed, n_resamples=n_resamples,
        confidence=confidence), strict=True))
    out: dict[K, dict[str, float | int | None]] = {}
    for key, (x, missing) in measured.items():
        n = int(x.size)
        if n == 0:
            out[key] = {"mean": None, "n": 0, "missing": missing, "ci_low": None,
                        "ci_high": None}
            continue
        low, high = cis[key]
        out[key] = {"mean": math.fsum(x.tolist()) / n, "n": n, "missing": missing,
                    "ci_low": low, "ci_high": high}
    return out


def aggregate_reference(
    values: Sequence[Value] | Mapping[Any, Value],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> dict[str, float | int | None]:
    """:func:`aggregate` one value and one resample at a time (the plain version, for the
    differential tests)."""
    check_resampling(n_resamples, confidence)
    x, missing = _measured_reference(values)
    n = int(x.size)
    if n == 0:
        return {"mean": None, "n": 0, "missing": missing, "ci_low": None, "ci_high": None}
    low, high = bootstrap_mean_ci_reference(x, seed=seed, n_resamples=n_resamples,
                                            confidence=confidence)
    mean = math.fsum(x.tolist()) / n
    return {"mean": mean, "n": n, "missing": missing, "ci_low": low, "ci_high": high}


# --- paired tests -------------------------------------------------------------------------


def paired_randomization_test(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int = 0,
    n_resamples: int = 10000,
) -> float:
    """Two-sided p-value of the mean difference under random sign flips (Fisher).

    Under the null hypothesis a and b are exchangeable within each pair, so each difference
    d_i = b_i - a_i is equally likely to have either sign. For ``n_resamples`` random sign
    vectors s, count how often |sum(s * d)| >= |sum(d)| (with a relative tolerance of 1e-9
    for rounding), and return (count + 1) / (n_resamples + 1): the +1 counts the observed
    assignment, so p is never 0. All differences zero gives p = 1.
    Raises ValueError for empty or unequal-length inputs.
    """
    check_resampling(n_resamples)
    d = _paired(a, b)
    n = d.size
    if n == 0:
        raise ValueError("randomization test needs at least one pair")
    observed = abs(float(d.sum()))
    tolerance = 1e-9 * float(np.abs(d).sum())
    rng = np.random.default_rng(seed)
    count = 0
    for rows in _blocks(n_resamples, n):
        signs = rng.integers(0, 2, size=(rows, n)) * 2 - 1
        count += int(np.count_nonzero(np.abs(signs @ d) >= observed - tolerance))
    return (count + 1) / (n_resamples + 1)


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the paired Student t-test (same value as ``scipy.stats.ttest_rel``).

    With d_i = b_i - a_i, t = mean(d) / (sd(d) / sqrt(n)) (sd with n - 1 degrees of
    freedom), p = P(|T| >= |t|) for T ~ Student-t with n - 1 degrees of freedom.
    Edge cases: identical samples (all d_i = 0) give p = 1 (scipy gives NaN); a constant
    non-zero difference gives p = 0. Raises ValueError for fewer than 2 pairs.
    """
    d = _paired(a, b)
    n = d.size
    if n < 2:
        raise ValueError(f"paired t-test needs at least 2 pairs, got {n}")
    if np.all(d == d[0]):
        return 1.0 if d[0] == 0 else 0.0
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    t = mean / (sd / math.sqrt(n))
    return student_t_two_sided_p(t, n - 1)


def paired_bootstrap_ci(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean difference mean(b - a), resampling pairs.

    Same procedure as :func:`bootstrap_mean_ci` applied to d_i = b_i - a_i.
    Raises ValueError for empty or unequal-length inputs.
    """
    return bootstrap_mean_ci(
        _paired(a, b), seed=seed, n_resamples=n_resamples, confidence=confidence
    )


class WinTieLoss(NamedTuple):
    """Counts of pairs where b beats a, equals a (within the tolerance), or loses to a."""

    wins: int
    ties: int
    losses: int


def win_tie_loss(
    a: Sequence[float], b: Sequence[float], *, tolerance: float = 1e-12
) -> WinTieLoss:
    """Count pairs with b_i - a_i > tolerance (win), < -tolerance (loss), else tie."""
    d = _paired(a, b)
    wins = int(np.count_nonzero(d > tolerance))
    losses = int(np.count_nonzero(d < -tolerance))
    return WinTieLoss(wins, d.size - wins - losses, losses)


def holm_bonferroni(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order.

    Sort the m p-values ascending (ties by input position); the j-th smallest (j = 1..m)
    gets min(1, max over i <= j of (m - i + 1) * p_(i)). Rejecting where adjusted <= alpha
    controls the family-wise error rate at alpha. Raises ValueError for p outside [0, 1].
    """
    ps = [_as_float(p, f"p-value {i}") for i, p in enumerate(pvalues)]
    for i, p in enumerate(ps):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-value {i} is {p!r}, outside [0, 1]")
    m = len(ps)
    order = sorted(range(m), key=lambda i: (ps[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * ps[i]))
        adjusted[i] = running
    return adjusted


def compare_paired(
    a_by_qid: Mapping[Hashable, Value],
    b_by_qid: Mapping[Hashable, Value],
    *,
    seed: int = 0,
    n_resamples: int = 10000,
    n_bootstrap: int = 2000,
    confidence: float = 0.95,
    tolerance: float = 1e-12,
) -> dict[str, Any]:
    """Compare one metric between a baseline run ``a`` and a candidate run ``b``.

    Pairs are the question ids with a non-None value in both runs, in sorted id order (so
    the result does not depend on dict order). Returns:

    - ``n``, ``mean_a``, ``mean_b``, ``delta`` = mean_b - mean_a over the pairs,
      ``ci_low`` / ``ci_high``: paired bootstrap CI of the delta,
    - ``p_randomization`` (:func:`paired_randomization_test`), ``p_ttest``
      (:func:`paired_t_test`, None with fewer than 2 pairs),
    - ``wins`` / ``ties`` / ``losses`` of b against a, and the ids that changed:
      ``improved_ids``, ``worsened_ids``, ``changed_ids`` (their union), each sorted,
    - ``missing_in_a`` / ``missing_in_b``: ids absent or None in that run (sorted).

    With no pairs every statistic is None and the counts are 0.
    """
    ids = sorted(set(a_by_qid) | set(b_by_qid), key=str)
    missing_in_a = [q for q in ids if a_by_qid.get(q) is None]
    missing_in_b = [q for q in ids if b_by_qid.get(q) is None]
    paired_ids = [q for q in ids if a_by_qid.get(q) is not None and b_by_qid.get(q) is not None]
    a = [_as_float(a_by_qid[q], f"run a, question {q!r}") for q in paired_ids]
    b = [_as_float(b_by_qid[q], f"run b, question {q!r}") for q in paired_ids]
    n = len(paired_ids)
    improved = [q for q, x, y in zip(paired_ids, a, b, strict=True) if y - x > tolerance]
    worsened = [q for q, x, y in zip(paired_ids, a, b, strict=True) if x - y > tolerance]
    result: dict[str, Any] = {
        "n": n,
        "mean_a": None,
        "mean_b": None,
        "delta": None,
        "ci_low": None,
        "ci_high": None,
        "p_randomization": None,
        "p_ttest": None,
        "wins": len(improved),
        "ties": n - len(improved) - len(worsened),
        "losses": len(worsened),
        "improved_ids": improved,
        "worsened_ids": worsened,
        "changed_ids": sorted(improved + worsened, key=str),
        "missing_in_a": missing_in_a,
        "missing_in_b": missing_in_b,
    }
    if n == 0:
        return result
    mean_a = math.fsum(a) / n
    mean_b = math.fsum(b) / n
    low, high = paired_bootstrap_ci(
        a, b, seed=seed, n_resamples=n_bootstrap, confidence=confidence
    )
    result.update(
        mean_a=mean_a,
        mean_b=mean_b,
        delta=mean_b - mean_a,
        ci_low=low,
        ci_high=high,
        p_randomization=paired_randomization_test(a, b, seed=seed, n_resamples=n_resamples),
        p_ttest=paired_t_test(a, b) if n >= 2 else None,
    )
    return result
