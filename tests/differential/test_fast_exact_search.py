"""Exact search rescoring a batch of queries at once against one query at a time, on seeded
generated vectors with near ties, exact ties and duplicate rows: the k best rows, their
exact scores and the tracked rows' ranks must be the same to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from ragassay import exact_rescore
from ragassay.vector import ExactSearch


def _rows(rng: np.random.Generator, n: int, d: int, sparse: bool) -> np.ndarray:
    x = rng.standard_normal((n, d)).astype(np.float32)
    if sparse:  # hashing-like: most coordinates zero
        x *= rng.random((n, d)) < 0.1
    x[:, 0] += 1e-3
    dup = rng.integers(0, n, size=n // 5)  # exact ties: the same vector at several rows
    x[rng.integers(0, n, size=len(dup))] = x[dup]
    near = rng.integers(0, n, size=n // 5)  # near ties: a last-bit nudge
    x[near] = np.nextafter(x[near], np.float32(np.inf))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _same(a: tuple[np.ndarray, np.ndarray, list[dict[int, int]]],
          b: tuple[np.ndarray, np.ndarray, list[dict[int, int]]]) -> None:
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
    assert [list(r.items()) for r in a[2]] == [list(r.items()) for r in b[2]]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_batched_rescoring_equals_one_query_at_a_time(seed: int, sparse: bool,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 300)), int(rng.choice([3, 16, 64]))
    rows = _rows(rng, n, d, sparse)
    queries = np.concatenate([_rows(rng, 40, d, sparse), rows[rng.integers(0, n, 20)],
                              np.zeros((2, d), np.float32)])  # rows themselves; zero queries
    track = [rng.integers(0, n, size=int(rng.integers(0, 4))).tolist() for _ in queries]
    search = ExactSearch(rows)
    search.batch_size = int(rng.integers(1, 30))  # batches that cut the queries anywhere
    for pairs in (3, 1 << 17):  # rescored a few pairs at a time, or all at once
        monkeypatch.setattr(exact_rescore, "_PAIR_BUDGET", pairs * d)
        for k in sorted({0, 1, 5, min(10, n), n, n + 3}):
            fast = search.search_tracked(queries, k, track)
            plain = search.search_tracked_reference(queries, k, track)
            _same((fast[0].positions, fast[0].scores, fast[1]),
                  (plain[0].positions, plain[0].scores, plain[1]))


def test_the_hand_checked_cases() -> None:
    rows = np.array([[1, 0], [0, 1], [1, 0], [0.6, 0.8]], dtype=np.float32)
    search = ExactSearch(rows)
    found, ranks = search.search_tracked(np.array([[1, 0]], np.float32), 2, [[2, 1, 2]])
    assert found.positions.tolist() == [[0, 2]]  # the tie: the lower row first
    assert ranks == [{2: 2, 1: 4}]  # a row tracked twice is one entry, in the order asked
    assert search.search_tracked(np.zeros((0, 2), np.float32), 3)[1] == []
