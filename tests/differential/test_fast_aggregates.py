"""The run's aggregates against their plain versions on seeded generated columns: the
bootstrap drawn in small blocks and shared by the columns with as many measured values,
the values converted in one pass, the not-applicable reasons counted in one pass over the
results — each must give exactly (to the last digit) what the plain version gives."""

from __future__ import annotations

import random
import re
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from ragassay import aggregate as agg
from ragassay.metrics import bootstrap
from ragassay.metrics.bootstrap import bootstrap_mean_ci_reference, bootstrap_mean_cis
from ragassay.metrics.stats import aggregate, aggregate_many, aggregate_reference
from ragassay.reasons import NOT_APPLICABLE

# the kinds of values a run's measures take: flags, a few fractions, any float
KINDS = [
    lambda rng: float(rng.random() < 0.4),
    lambda rng: rng.choice([0.0, 1 / 3, 0.5, 2 / 3, 1.0]),
    lambda rng: rng.choice([1, 0, True, False]),
    lambda rng: rng.random(),
]


def _column(rng: random.Random, n: int) -> list[Any]:
    kind = rng.choice(KINDS)
    none_share = rng.choice([0.0, 0.0, 0.3, 0.9])
    return [None if rng.random() < none_share else kind(rng) for _ in range(n)]


@pytest.mark.parametrize("seed", range(3))
def test_shared_draws_equal_one_whole_draw_per_sample(seed: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    sizes = [1, 2, 3, 7, 64, 129, 200, 200, 200, 333, 1000, 1000]
    samples = [np.asarray([v for v in _column(rng, n) if v is not None] or [0.5], dtype=float)
               for n in sizes]
    for block in (1, 97, 1 << 16):  # one row per block, ragged blocks, the default
        monkeypatch.setattr(bootstrap, "_BLOCK_ELEMENTS", block)
        for n_resamples, confidence in ((1, 0.95), (7, 0.5), (500, 0.95)):
            fast = bootstrap_mean_cis(samples, seed=seed, n_resamples=n_resamples,
                                      confidence=confidence)
            plain = [bootstrap_mean_ci_reference(x, seed=seed, n_resamples=n_resamples,
                                                 confidence=confidence) for x in samples]
            assert fast == plain


@pytest.mark.parametrize("seed", range(3))
def test_aggregate_many_equals_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    columns: dict[str, Any] = {}
    for i in range(12):
        values = _column(rng, rng.choice([0, 1, 5, 150, 150, 400]))
        if i % 3 == 0:  # keyed by question id, in a shuffled order
            ids = [f"q{rng.randrange(10**6)}" for _ in values]
            columns[f"m{i}"] = dict(zip(ids, values, strict=True))
        else:
            columns[f"m{i}"] = values
    fast = aggregate_many(columns, seed=seed, n_resamples=300)
    assert list(fast) == list(columns)
    for name, values in columns.items():
        assert fast[name] == aggregate_reference(values, seed=seed, n_resamples=300)
        assert aggregate(values, seed=seed, n_resamples=300) == fast[name]


@pytest.mark.parametrize("bad", [float("nan"), float("-inf"), "0.5x", [1], None])
def test_a_refused_value_is_named_as_the_reference_names_it(bad: object) -> None:
    for values in ([0.5, 1, bad, "nan"], {"b": 0.5, "a": bad, "c": float("inf")}):
        try:
            aggregate_reference(values)  # type: ignore[arg-type]
        except ValueError as e:
            with pytest.raises(ValueError, match="^" + re.escape(str(e)) + "$"):
                aggregate(values)  # type: ignore[arg-type]
        else:
            assert aggregate(values) == aggregate_reference(values)  # type: ignore[arg-type]


def test_the_hand_checked_cases() -> None:
    # numbers given as text or as booleans convert as float() converts them
    assert aggregate(["0.5", True, None]) == aggregate_reference(["0.5", True, None])
    assert aggregate(["0.5", True, None])["mean"] == 0.75
    # a constant column draws nothing and gives (value, value)
    assert bootstrap_mean_cis([[2.0, 2.0], [1.0]]) == [(2.0, 2.0), (1.0, 1.0)]
    with pytest.raises(ValueError, match="empty"):
        bootstrap_mean_cis([[1.0, 2.0], []])


def _results(rng: random.Random, names: list[str]) -> tuple[list[Any], dict[Any, list[Any]]]:
    reasons = [*sorted(NOT_APPLICABLE), "judge call failed: timeout", "not measured"]
    results = []
    for i in range(300):
        missing = {name: rng.choice(reasons) for name in names if rng.random() < 0.4}
        qid = f"q{rng.randrange(250)}"  # some ids repeat
        results.append(SimpleNamespace(question_id=qid if i % 7 else f"z{i}", missing=missing))
    columns = {(rng.choice(["retrieval", "answer"]), name):
               [None if name in r.missing or rng.random() < 0.1 else rng.random()
                for r in results] for name in names}
    return results, columns


@pytest.mark.parametrize("seed", range(3))
def test_run_aggregates_and_reasons_equal_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    names = ["recall_at_5", "mrr_at_5", "correct", "claim_recall", "faithfulness"]
    results, columns = _results(rng, names)
    cfg = SimpleNamespace(seed=seed, metrics=SimpleNamespace(bootstrap_resamples=200))
    assert agg.aggregates(cfg, results, columns) == agg.aggregates_reference(
        cfg, results, columns)  # type: ignore[arg-type]
    for asked in (names, names[::-1], [*names, names[0]], ["unknown", names[2]], []):
        fast = agg.not_applicable(results, asked)  # type: ignore[arg-type]
        plain = agg.not_applicable_reference(results, asked)  # type: ignore[arg-type]
        # the same counts in the same order (metrics.json keeps it)
        assert [(k, list(v.items())) for k, v in fast.items()] == [
            (k, list(v.items())) for k, v in plain.items()]
