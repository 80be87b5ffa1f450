"""How far a judge can be trusted: its agreement with people, and its noise.

The labels file is JSONL, one :class:`LabelledClaim` per line (``docs/claims.md``):
``{id, claim, sources: [text], label, question?, lang?, note?}`` with ``label`` ``yes`` /
``no`` (a two-way label: does the claim follow from the sources?) or one of ``entailed`` /
``contradicted`` / ``unsupported`` (three-way; ``entailed`` counts as yes, the others as no
in the yes/no table).

:func:`judge_check` reports:

- agreement on the items with a verdict: accuracy, Cohen's kappa (yes/no) with a seeded
  percentile-bootstrap CI over items, the yes/no confusion matrix and, when labels are
  three-way, the 3×3 matrix (judge rows × label columns);
- not measured: failed calls and replies that never validated, counted with their reasons
  (``unparsable_share`` = replies invalid twice / items asked);
- noise, with ``rejudge = N``: each item is judged N more times with seeds 1..N and its
  sources in another order (reversed, then rotated); an item's *flip rate* is the share of
  those rejudges whose yes/no differs from the first verdict. ``flip_rate`` is the mean over
  the items measured every time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .endpoint import EndpointError, deadline_after, map_bounded
from .jsonio import read_jsonl
from .judge import Judge

LABELS3 = ("entailed", "contradicted", "unsupported")


class LabelledClaim(BaseModel):
    """One line of a judge check file: a claim, its sources, a person's label, and the
    question the claim answers when there is one (sent to the judge with the claim)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    claim: str = Field(min_length=1)
    sources: list[str]
    label: Literal["yes", "no", "entailed", "contradicted", "unsupported"]
    question: str | None = None
    lang: str | None = None
    note: str | None = None

    @property
    def yes(self) -> bool:
        return self.label in ("yes", "entailed")


def cohen_kappa(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """Cohen's kappa of two raters on a yes/no 2x2 table (judge = rows, label = columns):

        n   = tp + fp + fn + tn
        p_o = (tp + tn) / n                                       observed agreement
        p_e = ((tp + fp)(tp + fn) + (fn + tn)(fp + tn)) / n²      agreement by chance
        κ   = (p_o − p_e) / (1 − p_e)

    ``None`` when undefined: an empty table, or ``p_e = 1`` (both raters gave one and the
    same label to everything, so agreement cannot be told from chance).
    """
    n = tp + fp + fn + tn
    if n == 0:
        return None
    p_o = (tp + tn) / n
    p_e = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def kappa_ci(judge_yes: Sequence[bool], label_yes: Sequence[bool], *, seed: int = 0,
             n_resamples: int = 2000, confidence: float = 0.95,
             ) -> tuple[float | None, float | None]:
    """Percentile-bootstrap CI of Cohen's kappa over items (``default_rng(seed)``); a
    resample where kappa is undefined is left out. ``(None, None)`` with fewer than 2
    items or no defined resample."""
    a = np.asarray(judge_yes, dtype=bool)
    b = np.asarray(label_yes, dtype=bool)
    n = a.size
    if n < 2:
        return None, None
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    ja, lb = a[idx], b[idx]
    tp = (ja & lb).sum(1)
    fp = (ja & ~lb).sum(1)
    fn = (~ja & lb).sum(1)
    tn = n - tp - fp - fn
    p_o = (tp + tn) / n
    p_e = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    ok = p_e < 1.0
    if not ok.any():
        return None, None
    kappas = (p_o[ok] - p_e[ok]) / (1.0 - p_e[ok])
    alpha = 1.0 - confidence
    low, high = np.quantile(kappas, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _reordered(sources: list[str], i: int) -> list[str]:
    """Rejudge ``i`` (1-based) sees the sources reversed (odd i) or rotated by i (even)."""
    if len(sources) < 2:
        return sources
    if i % 2:
        return sources[::-1]
    k = i % len(sources)
    return sources[k:] + sources[:k]


def judge_check(labelled_path: str | Path, judge: Judge, *, rejudge: int = 0,
                seed: int = 0) -> dict[str, Any]:
    """How well ``judge`` agrees with the labels of ``labelled_path`` and how much its
    verdicts move when asked again (see the module docstring).

    Returns ``{n, measured, accuracy, cohen_kappa, kappa_ci, confusion: {tp, fp, fn, tn},
    confusion3 (or None), not_measured, not_measured_ids, not_measured_reasons,
    unparsable, unparsable_share, disagreements, rejudge, flip_rate, flips, usage}``.
    Bad lines raise :class:`ragassay.errors.InputError`."""
    items = read_jsonl(labelled_path, LabelledClaim, key="id")
    runs = [(it, 0) for it in items] + [(it, i) for i in range(1, rejudge + 1) for it in items]

    def ask(job: tuple[LabelledClaim, int]) -> dict[str, Any]:
        it, i = job
        params = {"seed": i} if i else {}
        return judge.claim_verdict(it.claim, _reordered(list(it.sources), i), it.question,
                                   **params)

    results = map_bounded(ask, runs, judge.client.concurrency,
                          deadline_after(judge.client.cfg.run_timeout_s))
    first = results[:len(items)]
    confusion = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    three = all(it.label in LABELS3 for it in items) and bool(items)
    confusion3 = {j: dict.fromkeys(LABELS3, 0) for j in LABELS3} if three else None
    not_measured: list[str] = []
    reasons: dict[str, str] = {}
    disagreements: list[str] = []
    judged_yes: list[bool] = []
    label_yes: list[bool] = []
    unparsable = 0
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    for res in results:
        if isinstance(res, dict):
            for name in usage:
                usage[name] += int(res["usage"].get(name, 0))
    for item, res in zip(items, first, strict=True):
        if isinstance(res, EndpointError) or res["label"] is None:
            not_measured.append(item.id)
            if isinstance(res, EndpointError):
                reasons[item.id] = f"judge call failed: {res}"
            else:
                unparsable += 1
                reasons[item.id] = res["reason"]
            continue
        said_yes = res["label"] == "entailed"
        cell = {(True, True): "tp", (True, False): "fp",
                (False, True): "fn", (False, False): "tn"}[(said_yes, item.yes)]
        confusion[cell] += 1
        judged_yes.append(said_yes)
        label_yes.append(item.yes)
        if confusion3 is not None:
            confusion3[res["label"]][item.label] += 1
        if said_yes != item.yes:
            disagreements.append(item.id)
    measured = len(items) - len(not_measured)
    flips: dict[str, float] = {}
    if rejudge:
        for j, item in enumerate(items):
            got = [results[j + i * len(items)] for i in range(rejudge + 1)]
            answers = [a for a in got if isinstance(a, dict) and a["label"] is not None]
            if len(answers) < len(got):
                continue  # an item not measured every time has no flip rate
            base = answers[0]["label"] == "entailed"
            flips[item.id] = sum((a["label"] == "entailed") != base
                                 for a in answers[1:]) / rejudge
    low, high = kappa_ci(judged_yes, label_yes, seed=seed)
    return {
        "n": len(items),
        "measured": measured,
        "accuracy": (confusion["tp"] + confusion["tn"]) / measured if measured else None,
        "cohen_kappa": cohen_kappa(**confusion),
        "kappa_ci": [low, high],
        "confusion": confusion,
        "confusion3": confusion3,
        "not_measured": len(not_measured),
        "not_measured_ids": not_measured,
        "not_measured_reasons": reasons,
        "unparsable": unparsable,
        "unparsable_share": unparsable / len(items) if items else None,
        "disagreements": disagreements,
        "rejudge": rejudge,
        "flip_rate": sum(flips.values()) / len(flips) if flips else None,
        "flips": {k: v for k, v in flips.items() if v},
        "usage": usage,
    }
