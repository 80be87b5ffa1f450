"""The percentile bootstrap of a mean, seeded: the CI that :func:`ragassay.metrics.stats.aggregate`
reports. Everything random is drawn from ``numpy.random.default_rng(seed)``, so the same
values and seed give the same numbers on every run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Elements of one resampling block: small, so that a block's indices and gathered values
# stay in the CPU cache (with 4M-element blocks the bootstrap of a 6,000-question run took
# twice as long). Drawing the index matrix block by block yields exactly the numbers of one
# (n_resamples, n) draw: the generator's stream is consumed in the same order.
_BLOCK_ELEMENTS = 1 << 16


def check_resampling(n_resamples: int, confidence: float | None = None) -> None:
    """Refuse a resample count below 1 (or not an integer) and a confidence outside (0, 1)."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    if confidence is not None and not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def bootstrap_mean_ci(
    x: Sequence[float] | np.ndarray,
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of ``x`` (non-empty, finite).

    Draws ``n_resamples`` samples of size n with replacement (an (n_resamples, n) index
    matrix from ``default_rng(seed)``), takes each sample's mean, and returns the
    (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of those means (numpy's default
    linear interpolation). A constant sample (including n = 1) returns (value, value).
    """
    return bootstrap_mean_cis([x], seed=seed, n_resamples=n_resamples,
                              confidence=confidence)[0]


def bootstrap_mean_cis(
    samples: Sequence[Sequence[float] | np.ndarray],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> list[tuple[float, float]]:
    """:func:`bootstrap_mean_ci` of each sample, the same numbers, with the draws shared:
    the index matrix depends only on the seed and the sample's size, so samples of equal
    size are resampled from one draw (drawn block by block, each block applied to all).
    """
    check_resampling(n_resamples, confidence)
    arrays = [np.asarray(x, dtype=np.float64) for x in samples]
    out: list[tuple[float, float]] = [(0.0, 0.0)] * len(arrays)
    by_size: dict[int, list[int]] = {}
    for i, arr in enumerate(arrays):
        if arr.size == 0:
            raise ValueError("bootstrap of an empty sample")
        if arr.min() == arr.max():
            value = float(arr[0])
            out[i] = (value, value)
        else:
            by_size.setdefault(arr.size, []).append(i)
    alpha = 1.0 - confidence
    for n, members in by_size.items():
        rng = np.random.default_rng(seed)
        means = np.empty((len(members), n_resamples), dtype=np.float64)
        rows = max(1, _BLOCK_ELEMENTS // n)
        for start in range(0, n_resamples, rows):
            idx = rng.integers(0, n, size=(min(rows, n_resamples - start), n))
            for row, i in zip(means, members, strict=True):
                row[start:start + len(idx)] = arrays[i][idx].mean(axis=1)
        for row, i in zip(means, members, strict=True):
            low, high = np.quantile(row, [alpha / 2, 1 - alpha / 2])
            out[i] = (float(low), float(high))
    return out


def bootstrap_mean_ci_reference(
    x: Sequence[float] | np.ndarray,
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """:func:`bootstrap_mean_ci` in one draw of the whole index matrix (the plain version,
    for the differential tests)."""
    check_resampling(n_resamples, confidence)
    arr = np.asarray(x, dtype=np.float64)
    n = arr.size
    if n == 0:
        raise ValueError("bootstrap of an empty sample")
    if arr.min() == arr.max():
        value = float(arr[0])
        return value, value
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, n, size=(n_resamples, n))].mean(axis=1)
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)
