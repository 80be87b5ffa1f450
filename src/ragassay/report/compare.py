"""Compare run folders: per-metric deltas with paired tests, and the questions that changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError, unknown_name
from ..metrics.measures import canonical_name
from ..metrics.stats import compare_paired, holm_bonferroni
from ..runfolder import RunMetrics, RunResult, read_run_folder


def _per_question(run_dir: Path, result: RunResult) -> dict[str, Any]:
    """The run's metrics plus per-question values of every metric:
    {metric: {question_id: value}}."""
    per_question: dict[str, dict[str, Any]] = {}
    for q in result.questions:
        for values in (q.retrieval, q.scores):
            for metric, value in values.items():
                if value is None or isinstance(value, (int, float)):  # numbers and flags only
                    per_question.setdefault(metric, {})[q.question_id] = (
                        None if value is None else float(value))
    return {"dir": run_dir, "metrics": result.metrics, "per_question": per_question}


def _canonical(name: str) -> str:
    """``recall@5`` → ``recall_at_5``; a name that is no measure is kept (refused later)."""
    try:
        return canonical_name(name)
    except ValueError:
        return name


def _default_metrics(run: dict[str, Any]) -> list[str]:
    """Every aggregate of the baseline with per-question values: one no question was
    measured on (``judge_faithfulness`` without a judge) has nothing to pair."""
    m: RunMetrics = run["metrics"]
    return [name for name in m.means() if name in run["per_question"]]


def read_runs(run_dirs: list[Path]) -> list[RunResult]:
    """The run folders to compare, read once (baseline first)."""
    if len(run_dirs) < 2:
        raise InputError("compare", "give at least two run folders (baseline first)")
    return [read_run_folder(d) for d in run_dirs]


def compare_runs(run_dirs: list[Path], *, metrics: list[str] | None = None,
                 seed: int = 0, results: list[RunResult] | None = None) -> dict[str, Any]:
    """Compare each run with the first (the baseline), metric by metric.

    Per metric and candidate: means, delta with a paired bootstrap CI, the paired
    randomization and t-test p-values, win/tie/loss counts and the changed question ids.
    With more than one candidate, randomization p-values are Holm–Bonferroni adjusted over
    every (candidate, metric) test. ``results``: the runs already read (:func:`read_runs`).
    """
    results = results if results is not None else read_runs(run_dirs)
    runs = [_per_question(d, r) for d, r in zip(run_dirs, results, strict=True)]
    names = [_canonical(n) for n in metrics] if metrics else _default_metrics(runs[0])
    for name in names:
        if name not in runs[0]["per_question"]:
            raise InputError(run_dirs[0] / "metrics.json", unknown_name(
                "metric", name, sorted(runs[0]["per_question"]),
                known_as="per-question metrics here"), field=name)
    comparisons = []
    for cand in runs[1:]:
        for name in names:
            res = compare_paired(runs[0]["per_question"].get(name, {}),
                                 cand["per_question"].get(name, {}), seed=seed)
            comparisons.append({"baseline": str(runs[0]["dir"]), "candidate": str(cand["dir"]),
                                "metric": name, **res})
    if len(runs) > 2:
        ps = [c["p_randomization"] for c in comparisons]
        measured = [i for i, p in enumerate(ps) if p is not None]
        adjusted = holm_bonferroni([ps[i] for i in measured])
        for i, p in zip(measured, adjusted, strict=True):
            comparisons[i]["p_holm"] = p
    return {"baseline": str(runs[0]["dir"]), "seed": seed, "comparisons": comparisons}


def summary_rows(run_dirs: list[Path], results: list[RunResult],
                 metrics: list[str] | None = None) -> tuple[list[str], list[list[str]]]:
    """One row per run: its pipeline, the metric means, and end-to-end latency p50 / p95."""
    runs = [r.metrics for r in results]
    names = metrics or ["recall_at_5", "recall_at_10", "mrr_at_5", "ndcg_at_5", "groundedness",
                        "correct"]
    header = ["run", "pipeline", *names, "latency p50 ms", "latency p95 ms"]
    rows = []
    for d, m in zip(run_dirs, runs, strict=True):
        means = m.means()
        lat = m.timings.get("latency_ms", {}).get("total", {})
        rows.append([d.name, m.mode or m.pipeline.get("name", ""),
                     *[_f(means[n].mean) if n in means else "—" for n in names],
                     _f(lat.get("p50"), 1), _f(lat.get("p95"), 1)])
    return header, rows


def _f(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


COMPARE_HEADER = ["candidate", "metric", "baseline", "candidate mean", "Δ", "95% CI of Δ",
                  "p (randomization)", "p (t-test)", "W/T/L", "changed questions"]


def compare_rows(result: dict[str, Any]) -> list[list[str]]:
    rows = []
    for c in result["comparisons"]:
        p_rand = _f(c["p_randomization"], 4)
        if "p_holm" in c:
            p_rand += f" (Holm {_f(c['p_holm'], 4)})"
        changed = ", ".join(c["changed_ids"][:8]) + (" …" if len(c["changed_ids"]) > 8 else "")
        rows.append([Path(c["candidate"]).name, c["metric"], _f(c["mean_a"]), _f(c["mean_b"]),
                     _f(c["delta"]), f"[{_f(c['ci_low'])}, {_f(c['ci_high'])}]", p_rand,
                     _f(c["p_ttest"], 4), f"{c['wins']}/{c['ties']}/{c['losses']}",
                     changed or "—"])
    return rows
