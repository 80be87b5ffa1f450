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
from .atomic import FolderWriter, write_folder
from .checks import totals
from .config import EvalConfig, check_endpoints
from .core import Predicted, cost_summary, load_inputs, predict, score
from .errors import InputError
from .jsonio import json_text
from .report.safe import md_table

SWEEP_HEADER = ["k", "thr", "recall@k", "found", "grounded", "right", "abstained",
                "tokens", "calls"]


def parse_k_range(text: str) -> Sequence[int]:
    """`1..5` → 1, 2, 3, 4, 5 (a ``range``: no list is built for `1..100000000`);
    `1,3,10` → [1, 3, 10]. Every k must be ≥ 1."""
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
    if min(ks) < 1:
        raise InputError("--k", f"k must be at least 1 (got {min(ks)})")
    return ks


def cap_ks(ks: Sequence[int], cap: int) -> tuple[list[int], str | None]:
    """The k values up to ``cap`` (beyond it every k gives the same result), with ``cap``
    itself standing for the larger ones, and a note when some were dropped."""
    if max(ks) <= cap:
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
    inputs = load_inputs(cfg)
    pipeline = rankings = fixed = None
    if cfg.predictions_path is None:
        from .pipeline import Pipeline

        ks, note = cap_ks(ks, len(inputs.store.chunks))
        pipeline = Pipeline(inputs.store, cfg)
        rankings = pipeline.retrieve(inputs.questions, max(ks))
    else:  # another system's answers are fixed: only the context it is judged on changes
        given = predict(cfg, inputs, k=1).predictions
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
                                         progress=progress)
            scored = score(cfg, inputs, predicted, k=k, threshold=threshold)
            checks = totals(((r.answerable, r.checks) for r in scored), k=k,
                            hit_policy=cfg.metrics.hit_policy)
            recalls = [r.retrieval.get(f"recall_at_{k}") for r in scored]
            measured = [v for v in recalls if v is not None]
            flags = [r.scores.get("unanswerable_detection_flag") for r in scored]
            declined = [int(v) for v in flags if v is not None]
            cost = cost_summary(scored)
            rows.append({
                "k": k, "threshold": threshold,
                "recall_at_k": sum(measured) / len(measured) if measured else None,
                "found": checks.found.model_dump(), "grounded": checks.grounded.model_dump(),
                "right": checks.right.model_dump(),
                "unanswerable_declined": {"passed": int(sum(declined)), "total": len(declined)},
                "prompt_tokens": cost["prompt_tokens"],
                "completion_tokens": cost["completion_tokens"],
                "answerer_calls": cost["answerer_calls"],
            })
            bar.advance()
    return rows, ([note] if note else []) + inputs.warnings


def _frac(c: dict[str, int]) -> str:
    return f"{c['passed']}/{c['total']}"


def sweep_table(rows: list[dict[str, Any]]) -> list[list[str]]:
    return [[str(r["k"]), "—" if r["threshold"] is None else f"{r['threshold']:g}",
             "—" if r["recall_at_k"] is None else f"{r['recall_at_k']:.3f}",
             _frac(r["found"]), _frac(r["grounded"]), _frac(r["right"]),
             _frac(r["unanswerable_declined"]), str(r["prompt_tokens"]),
             str(r["answerer_calls"])] for r in rows]


def plot_sweep(rows: list[dict[str, Any]], path: Path) -> None:
    """Recall, grounded and right (left axis) and prompt tokens (right axis) against k."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    tok = ax.twinx()
    thresholds = list(dict.fromkeys(r["threshold"] for r in rows))
    styles = ["-", "--", ":", "-."]
    for i, thr in enumerate(thresholds):
        sel = [r for r in rows if r["threshold"] == thr]
        ks = [r["k"] for r in sel]
        tag = "" if thr is None else f" (≥{thr:g})"
        ls = styles[i % len(styles)]

        def share(r: dict[str, Any], key: str) -> float:
            c = r[key]
            return c["passed"] / c["total"] if c["total"] else float("nan")

        ax.plot(ks, [r["recall_at_k"] if r["recall_at_k"] is not None else float("nan")
                     for r in sel], ls, marker="o", color="tab:blue", label="recall@k" + tag)
        ax.plot(ks, [share(r, "grounded") for r in sel], ls, marker="s", color="tab:green",
                label="grounded" + tag)
        ax.plot(ks, [share(r, "right") for r in sel], ls, marker="^", color="tab:red",
                label="right" + tag)
        tok.plot(ks, [r["prompt_tokens"] for r in sel], ls, color="tab:gray", alpha=0.6,
                 label="prompt tokens" + tag)
    ax.set_xlabel("k (chunks passed to the answerer)")
    ax.set_ylabel("share of questions")
    ax.set_ylim(-0.02, 1.02)
    tok.set_ylabel("prompt tokens (total, cl100k_base)")
    ax.set_xticks(sorted({r["k"] for r in rows}))
    lines = ax.get_legend_handles_labels()
    lines2 = tok.get_legend_handles_labels()
    ax.grid(alpha=0.3)
    fig.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=7, loc="lower center",
               ncol=4, frameon=False)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    fig.savefig(path, metadata={"Software": None})  # no version stamp: stable bytes
    plt.close(fig)


def write_sweep(rows: list[dict[str, Any]], out_dir: Path, *, cfg: EvalConfig,
                force: bool = False) -> None:
    """`sweep.json`, `sweep.md` and `sweep.png` in `out_dir`, written atomically."""
    write_folder(out_dir, lambda tmp: _fill_sweep(rows, tmp, cfg), force=force)


def _fill_sweep(rows: list[dict[str, Any]], out: FolderWriter, cfg: EvalConfig) -> None:
    out.text("sweep.json", json_text({"config": str(cfg.path), "config_sha256": cfg.sha256,
                                      "rows": rows}))
    out.text("sweep.md", md_table(SWEEP_HEADER, sweep_table(rows)) + "\n")
    plot_sweep(rows, out.root / "sweep.png")
