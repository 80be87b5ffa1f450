"""Sweep k (and score thresholds): recall, grounded, right and token cost for each setting.

Retrieval runs once at the largest k; each setting then answers from its own first k hits
(at or above its threshold), so k is chosen with numbers instead of habit. Tokens are those
of the answer prompt at that setting (question + its k chunks, cl100k_base); for a
predictions file the answers stay as given and only the context they are judged on changes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import progress as stages
from .aggregate import cost_summary
from .atomic import FolderWriter, write_folder
from .checks import totals
from .config import EvalConfig, check_endpoints
from .errors import InputError
from .executor import Executor, open_executor
from .inputs import Predicted, load_inputs
from .jsonio import json_text
from .predict import predict, retrieve_all
from .report.safe import md_table
from .scoring import score
from .units import work_of

SWEEP_HEADER = ["k", "thr", "recall@k", "found", "grounded", "right", "abstained",
                "tokens", "calls"]


def parse_k_range(text: str) -> Sequence[int]:
    """`1..5` → 1, 2, 3, 4, 5 (a ``range``: no list is built for `1..100000000`);
    `1,3,10` → [1, 3, 10]. Every k must be ≥ 1. Ascending either way, so the smallest and
    largest k are the ends (``min`` and ``max`` would walk the whole range)."""
    text = text.strip()
    m = re.fullmatch(r"(-?\d+)\s*\.\.\s*(-?\d+)", text)
    try:
        ks: Sequence[int] = range(int(m.group(1)), int(m.group(2)) + 1) if m else sorted(
            {int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise InputError("--k", f"cannot parse {text!r}: use a range like 1..10 or a list like "
                         "1,3,5") from None
    if not ks:
        raise InputError("--k", f"the range {text!r} is empty")
    if ks[0] < 1:
        raise InputError("--k", f"k must be at least 1 (got {ks[0]})")
    return ks


def largest_k(ks: Sequence[int]) -> int:
    """The largest k: a range's last (``max`` would walk all of `1..100000000`)."""
    return ks[-1] if isinstance(ks, range) else max(ks)


def cap_ks(ks: Sequence[int], cap: int) -> tuple[list[int], str | None]:
    """The k values up to ``cap`` (beyond it every k gives the same result), with ``cap``
    itself standing for the larger ones, and a note when some were dropped."""
    if largest_k(ks) <= cap:
        return list(ks), None
    kept = list(range(ks[0], cap + 1)) if isinstance(ks, range) else [k for k in ks if k < cap]
    return sorted({*kept, cap}), (f"k values above {cap} give the same result as k={cap} "
                                  "(nothing more to retrieve): not evaluated")


def parse_thresholds(text: str | None) -> list[float | None]:
    """`0.6,0.7` → [None, 0.6, 0.7]: the setting without threshold is always included."""
    if not text:
        return [None]
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError("--threshold", f"cannot parse {text!r}: use numbers like 0.6,0.7"
                         ) from None
    if not values:
        raise InputError("--threshold", "no threshold given")
    if not all(math.isfinite(v) for v in values):
        raise InputError("--threshold", f"thresholds must be finite numbers, got {text!r}")
    return [None, *sorted(set(values))]


def run_sweep(cfg: EvalConfig, ks: Sequence[int], thresholds: list[float | None],
              progress: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """One row per (k, threshold) with the three checks, recall@k and token totals; and
    notes for the user (k values capped at the chunks there are to retrieve)."""
    check_endpoints(cfg)
    ex = cfg.executor
    with open_executor(ex.kind, ex.workers, ex.address) as executor:
        return _sweep(cfg, ks, thresholds, executor, progress)


def _sweep(cfg: EvalConfig, ks: Sequence[int], thresholds: list[float | None],
           executor: Executor, progress: bool) -> tuple[list[dict[str, Any]], list[str]]:
    inputs = load_inputs(cfg)
    pipeline = rankings = fixed = None
    if cfg.predictions_path is None and cfg.system is None:
        from .pipeline import Pipeline

        ks, note = cap_ks(ks, len(inputs.store.chunks))
        pipeline = Pipeline(inputs.store, cfg)
        rankings = retrieve_all(work_of(executor, cfg, inputs, pipeline), max(ks), executor)
    else:  # another system's answers are fixed: only the context it is judged on changes
        # (a system under test is asked once, for the largest k)
        given = predict(cfg, inputs, k=largest_k(ks)).predictions
        ks, note = cap_ks(ks, max([len(p.retrieved) for p in given.values()] or [1]))
        # Its reported usage belongs to the k it ran with; count the prompt at each k instead.
        fixed = Predicted({qid: p.model_copy(update={"usage": None})
                           for qid, p in given.items()})
    rows = []
    settings = [(threshold, k) for threshold in thresholds for k in ks]
    with stages.bar("sweep settings", len(settings), enabled=True if progress else None
                    ) as bar:
        for threshold, k in settings:
            predicted = fixed or predict(cfg, inputs, k=k, threshold=threshold,
                                         pipeline=pipeline, rankings=rankings,
                                         progress=progress, executor=executor)
            scored = score(cfg, inputs, predicted, k=k, threshold=threshold,
                           executor=executor)
            checks = totals(((r.answerable, r.checks) for r in scored), k=k,
                            hit_policy=cfg.metrics.hit_policy)
            recalls = [r.retrieval.get(f"recall_at_{k}") for r in scored]
            measured = [v for v in recalls if v is not None]
            flags = [r.scores.get("unanswerable_detection_flag") for r in scored]
            declined = [int(v) for v in flags if v is not None]
            cost = cost_summary(scored)
            cis = _share_cis(cfg, scored, k)
            rows.append({
                "k": k, "threshold": threshold,
                "recall_at_k": sum(measured) / len(measured) if measured else None,
                "found": checks.found.model_dump(), "grounded": checks.grounded.model_dump(),
                "right": checks.right.model_dump(),
                "unanswerable_declined": {"passed": int(sum(declined)), "total": len(declined)},
                "prompt_tokens": cost["prompt_tokens"],
                "completion_tokens": cost["completion_tokens"],
                "answerer_calls": cost["answerer_calls"],
                "cost_total": cost["total"],
                **cis,
            })
            bar.advance()
    return rows, ([note] if note else []) + inputs.warnings


def _share_cis(cfg: EvalConfig, scored: Sequence[Any], k: int) -> dict[str, Any]:
    """Mean and seeded bootstrap CI (``ragassay.metrics.stats.aggregate``, the run's seed
    and resamples) of recall@k and of the grounded and right checks over the questions
    where each is measured: ``<name>_mean``, ``<name>_ci_low``, ``<name>_ci_high``."""
    from .metrics.stats import aggregate

    values: dict[str, dict[str, Any]] = {
        "recall_at_k": {r.question_id: r.retrieval.get(f"recall_at_{k}") for r in scored},
        "grounded": {r.question_id: _flag(r.checks.grounded) for r in scored},
        "right": {r.question_id: _flag(r.checks.right) for r in scored},
    }
    out: dict[str, Any] = {}
    for name, by_id in values.items():
        agg = aggregate(by_id, seed=cfg.seed, n_resamples=cfg.metrics.bootstrap_resamples)
        out.update({f"{name}_mean": agg["mean"], f"{name}_ci_low": agg["ci_low"],
                    f"{name}_ci_high": agg["ci_high"]})
    return out


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _frac(c: dict[str, int]) -> str:
    return f"{c['passed']}/{c['total']}"


def sweep_table(rows: list[dict[str, Any]]) -> list[list[str]]:
    return [[str(r["k"]), "—" if r["threshold"] is None else f"{r['threshold']:g}",
             "—" if r["recall_at_k"] is None else f"{r['recall_at_k']:.3f}",
             _frac(r["found"]), _frac(r["grounded"]), _frac(r["right"]),
             _frac(r["unanswerable_declined"]), str(r["prompt_tokens"]),
             str(r["answerer_calls"])] for r in rows]


SERIES = (("recall_at_k", "recall@k", "tab:blue", "o"),
          ("grounded", "grounded", "tab:green", "s"),
          ("right", "right", "tab:red", "^"))


def _nan(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def plot_sweep(rows: list[dict[str, Any]], path: Path, *, chosen_k: int | None = None,
               title: str | None = None) -> int:
    """Recall@k and the grounded and right shares (left axis, with their 95 % bootstrap CIs
    as bands) and prompt tokens (right axis, from 0) against k; one panel per threshold
    setting, the configured k (``chosen_k``, the config's ``pipeline.top_k``) marked.
    Returns the number of panels."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    thresholds = list(dict.fromkeys(r["threshold"] for r in rows))
    n = len(thresholds)
    cols = min(n, 3)
    nrows = math.ceil(n / cols)
    width = max(8.0, 5.2 * cols)  # room for the title and the legend with one panel
    fig, axes = plt.subplots(nrows, cols, figsize=(width, 3.9 * nrows + 0.9), dpi=110,
                             sharey=True, squeeze=False)
    all_ks = sorted({r["k"] for r in rows})
    max_tokens = max([r["prompt_tokens"] for r in rows] or [0])
    twins = []
    for i, thr in enumerate(thresholds):
        ax = axes[i // cols][i % cols]
        sel = sorted((r for r in rows if r["threshold"] == thr), key=lambda r: r["k"])
        ks = [r["k"] for r in sel]
        for key, label, color, marker in SERIES:
            mean = [_nan(r.get(f"{key}_mean")) for r in sel]
            low = [_nan(r.get(f"{key}_ci_low")) for r in sel]
            high = [_nan(r.get(f"{key}_ci_high")) for r in sel]
            ax.fill_between(ks, low, high, color=color, alpha=0.15, linewidth=0)
            ax.plot(ks, mean, "-", marker=marker, markersize=4, color=color, label=label)
        tok = ax.twinx()
        twins.append(tok)
        tok.plot(ks, [r["prompt_tokens"] for r in sel], "--", color="tab:gray", alpha=0.8,
                 label="prompt tokens")
        tok.set_ylim(0, max(max_tokens, 1) * 1.05)  # from 0: sizes compare by height
        if i % cols == cols - 1 or i == n - 1:
            tok.set_ylabel("prompt tokens (total, cl100k_base)")
        if chosen_k is not None and all_ks[0] <= chosen_k <= all_ks[-1]:
            ax.axvline(chosen_k, color="black", linestyle=":", linewidth=1.2,
                       label=f"configured k = {chosen_k}")
        ax.set_title("no score threshold" if thr is None else f"score ≥ {thr:g}", fontsize=10)
        ax.set_xlabel("k (chunks passed to the answerer)")
        if i % cols == 0:
            ax.set_ylabel("share of questions (95 % CI band)")
        ax.set_ylim(-0.02, 1.02)
        step = max(1, math.ceil(len(all_ks) / (12 if cols == 1 else 8)))
        ax.set_xticks(all_ks[::step])
        ax.grid(alpha=0.3)
    for j in range(n, nrows * cols):  # empty cells of the last row
        axes[j // cols][j % cols].set_visible(False)
    first = axes[0][0]
    handles, labels = first.get_legend_handles_labels()
    h2, l2 = twins[0].get_legend_handles_labels()
    fig.legend(handles + h2, labels + l2, fontsize=8, loc="lower center", ncol=5,
               frameon=False)
    fig.suptitle(title or "Sweep: recall@k, grounded and right (95 % CI bands) and prompt "
                 "tokens against k", fontsize=11 if cols > 1 else 10, wrap=True)
    fig.tight_layout(rect=(0, 0.07 if nrows == 1 else 0.04, 1, 1))
    fig.savefig(path, metadata={"Software": None})  # no version stamp: stable bytes
    plt.close(fig)
    return n


def write_sweep(rows: list[dict[str, Any]], out_dir: Path, *, cfg: EvalConfig,
                force: bool = False) -> None:
    """`sweep.json`, `sweep.md` and `sweep.png` in `out_dir`, written atomically."""
    write_folder(out_dir, lambda tmp: _fill_sweep(rows, tmp, cfg), force=force)


def _fill_sweep(rows: list[dict[str, Any]], out: FolderWriter, cfg: EvalConfig) -> None:
    out.text("sweep.json", json_text({"config": str(cfg.path), "config_sha256": cfg.sha256,
                                      "rows": rows}))
    out.text("sweep.md", md_table(SWEEP_HEADER, sweep_table(rows)) + "\n")
    name = cfg.path.name if cfg.path else "config"
    plot_sweep(rows, out.root / "sweep.png", chosen_k=cfg.pipeline.top_k,
               title=f"Sweep of {name}: recall@k, grounded and right (95 % CI bands) and "
                     "prompt tokens against k")
