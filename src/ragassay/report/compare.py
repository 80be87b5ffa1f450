"""Compare run folders: per-metric deltas with paired tests, and the questions that changed.

A difference reads ``better`` or ``worse`` only when it is significant: its paired
randomization p-value (Holm-adjusted with more than one candidate) is below
:data:`ALPHA`; otherwise it is no significant difference, shown neutral (:func:`reading`).
A cut measure is named at the depth each run used (:func:`depth_name`): ``recall_at_10`` of
a run of k=3 ranks only 3 chunks, so it is ``recall@3`` there. Questions that only one run
holds, and questions whose text changed between the runs (same id), are listed
(:func:`question_changes`): their values are not paired, or pair different questions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError, unknown_name
from ..metrics.measures import Measure, canonical_name
from ..metrics.stats import compare_paired, holm_bonferroni
from ..runfolder import RunMetrics, RunResult, read_run_folder
from .header import system_fact


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
    ks = [r.totals.k for r in results]
    for i, cand in enumerate(runs[1:], start=1):
        for name in names:
            other = paired_name(name, ks[i], cand["per_question"])
            res = compare_paired(runs[0]["per_question"].get(name, {}),
                                 cand["per_question"].get(other, {}), seed=seed)
            comparisons.append({"baseline": str(runs[0]["dir"]), "candidate": str(cand["dir"]),
                                "metric": name, "depths": [depth_name(name, ks[0]),
                                                           depth_name(name, ks[i])], **res})
    if len(runs) > 2:
        ps = [c["p_randomization"] for c in comparisons]
        measured = [i for i, p in enumerate(ps) if p is not None]
        adjusted = holm_bonferroni([ps[i] for i in measured])
        for i, p in zip(measured, adjusted, strict=True):
            comparisons[i]["p_holm"] = p
    for c in comparisons:
        c["reading"] = reading(c)
    changes = [{"candidate": str(d), **question_changes(results[0], r)}
               for d, r in zip(run_dirs[1:], results[1:], strict=True)]
    return {"baseline": str(runs[0]["dir"]), "seed": seed, "comparisons": comparisons,
            "questions": changes}


ALPHA = 0.05
"""The significance level of a difference: p (Holm-adjusted when there is one) below it."""


def reading(c: dict[str, Any]) -> str:
    """``better`` / ``worse`` when the difference of comparison ``c`` is significant (its
    Holm-adjusted, else randomization, p-value below :data:`ALPHA`, and a nonzero delta) in
    the metric's direction; ``""`` (neutral) otherwise, also when nothing was paired."""
    from .charts import higher_is_better

    p = c.get("p_holm", c.get("p_randomization"))
    delta = c.get("delta")
    if p is None or delta is None or p >= ALPHA or delta == 0:
        return ""
    return "better" if (delta > 0) == higher_is_better(c["metric"]) else "worse"


def depth_name(name: str, k: int) -> str:
    """A metric's name at the depth a run of top ``k`` measured it: a cut measure beyond
    ``k`` is cut at ``k`` (``recall_at_10`` at k=3 is ``recall@3``), others keep their
    cutoff (``recall@5`` at k=10); a measure without cutoff (``map``, ``groundedness``) is
    its name."""
    try:
        m = Measure.parse(name)
    except ValueError:
        return name
    if m.cutoff is None or not isinstance(m.cutoff, int):
        return name
    return f"{m.name}@{min(m.cutoff, k)}"


def paired_name(name: str, k: int, measured: dict[str, Any]) -> str:
    """The candidate's measure that pairs with the baseline's ``name``: ``name`` itself, or,
    when a run of top ``k`` did not measure it under that name, the same measure cut at
    ``k`` — what ``name`` is at that depth (:func:`depth_name`): a k=2 run's ``recall_at_2``
    for a k=3 baseline's ``recall_at_3`` (the default measures follow each run's k)."""
    if name in measured:
        return name
    try:
        m = Measure.parse(name)
    except ValueError:
        return name
    if not isinstance(m.cutoff, int) or isinstance(m.cutoff, bool) or m.cutoff <= k:
        return name
    return str(Measure(m.name, k))


def metric_label(c: dict[str, Any]) -> str:
    """The metric of a comparison as both runs measured it: ``recall@5``, or
    ``recall@10 vs recall@3`` when their depths differ."""
    a, b = c.get("depths") or [c["metric"], c["metric"]]
    return a if a == b else f"{a} vs {b}"


def question_changes(base: RunResult, cand: RunResult) -> dict[str, list[str]]:
    """By question id: ``only_in_baseline``, ``only_in_candidate`` (each in its run's
    order) and ``text_changed`` (ids both runs hold with a different question text, in the
    baseline's order)."""
    a = {q.question_id: q.question for q in base.questions}
    b = {q.question_id: q.question for q in cand.questions}
    return {"only_in_baseline": [q for q in a if q not in b],
            "only_in_candidate": [q for q in b if q not in a],
            "text_changed": [q for q in a if q in b and a[q] != b[q]]}


def change_notes(result: dict[str, Any]) -> list[str]:
    """One line per candidate whose questions differ from the baseline's
    (:func:`question_changes`), naming up to 5 ids per kind."""
    def ids(items: list[str]) -> str:
        return ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")

    base = Path(result["baseline"]).name
    out = []
    for ch in result.get("questions") or []:
        cand = Path(ch["candidate"]).name
        parts = []
        if ch["only_in_baseline"]:
            parts.append(f"{len(ch['only_in_baseline'])} questions only in {base} "
                         f"({ids(ch['only_in_baseline'])})")
        if ch["only_in_candidate"]:
            parts.append(f"{len(ch['only_in_candidate'])} questions only in {cand} "
                         f"({ids(ch['only_in_candidate'])})")
        if ch["text_changed"]:
            parts.append(f"{len(ch['text_changed'])} questions whose text changed "
                         f"({ids(ch['text_changed'])})")
        if parts:
            out.append(f"{cand} vs {base}: " + "; ".join(parts)
                       + " — not paired, or paired across different texts")
    return out


def summary_rows(run_dirs: list[Path], results: list[RunResult],
                 metrics: list[str] | None = None) -> tuple[list[str], list[list[str]]]:
    """One row per run: what it measured (system or pipeline, and its k), the metric means,
    and end-to-end latency p50 / p95. The metrics: ``metrics``, else the baseline's
    retrieval metrics then groundedness and correct; a cut measure deeper than a run's k
    reads ``0.667 (@3)`` in that run's row (:func:`depth_name`)."""
    runs = [r.metrics for r in results]
    names = ([_canonical(n) for n in metrics] if metrics
             else [*runs[0].retrieval, *[n for n in ("groundedness", "correct")
                                         if n in runs[0].answer]])
    header = ["run", "system", *names, "latency p50 ms", "latency p95 ms"]
    rows = []
    for d, r, m in zip(run_dirs, results, runs, strict=True):
        means = m.means()
        lat = m.timings.get("latency_ms", {}).get("total", {})
        k = r.totals.k
        cells = []
        for n in names:
            value = _f(means[n].mean) if n in means else "—"
            shallower = depth_name(n, k) != depth_name(n, 10**9)
            cells.append(f"{value} (@{k})" if shallower and n in means else value)
        rows.append([d.name, system_fact(m)[1], *cells,
                     _f(lat.get("p50"), 1), _f(lat.get("p95"), 1)])
    return header, rows


NEUTRAL = "no significant difference"


def _f(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


COMPARE_HEADER = ["candidate", "metric", "baseline", "candidate mean", "Δ", "95% CI of Δ",
                  "p (randomization)", "p (t-test)", "W/T/L", "reading", "changed questions"]


def compare_rows(result: dict[str, Any]) -> list[list[str]]:
    rows = []
    for c in result["comparisons"]:
        p_rand = _f(c["p_randomization"], 4)
        if "p_holm" in c:
            p_rand += f" (Holm {_f(c['p_holm'], 4)})"
        changed = ", ".join(c["changed_ids"][:8]) + (" …" if len(c["changed_ids"]) > 8 else "")
        rows.append([Path(c["candidate"]).name, metric_label(c), _f(c["mean_a"]),
                     _f(c["mean_b"]), _f(c["delta"]), f"[{_f(c['ci_low'])}, {_f(c['ci_high'])}]",
                     p_rand, _f(c["p_ttest"], 4), f"{c['wins']}/{c['ties']}/{c['losses']}",
                     c.get("reading") or NEUTRAL, changed or "—"])
    return rows
